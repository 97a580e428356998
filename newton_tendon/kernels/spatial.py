"""Geometry of spatial transmission tendons: one scalar length per tendon and its point gradients.

A spatial tendon is an ordered path of elements (``newton_tendon.transmission`` builds and validates
it): sites (points fixed to a body or the world), sphere and infinite-cylinder wraps (each between
two sites, optionally with a side site) and pulleys (which start a new branch with its own divisor).
Its length is

    l = sum_b s_b / d_b,

with ``s_b`` the routed length of branch ``b`` (straight segments between consecutive sites, or
tangent - arc - tangent around a wrap) and ``d_b`` the branch divisor.

Gradient representation
-----------------------
For every element ``i`` the kernel reports up to two world points ``point_a[i]``, ``point_b[i]``
fixed to the element's body ``path.body[i]`` (-1: the world) and the gradients
``grad_a[i] = dl/dp_a``, ``grad_b[i] = dl/dp_b`` [m/m] at those points, divisors included:

* site: ``point_a`` is the site and ``grad_a`` the sum of the unit directions of its adjacent
  segments, pointing away from their other ends (``-u_out + u_in``), over ``d``; ``grad_b = 0``;
* wrap: ``point_a``/``point_b`` are the entry/exit contact points (tangent points, or the single
  bend point of an interior side site) with gradients ``+u_in/d`` and ``-u_out/d``; a wrap the
  route does not touch reports its centre twice with zero gradients;
* pulley: zero points and gradients.

Treating the contact points as fixed to the wrap body is exact to first order: the routed path is a
geodesic (frictionless equilibrium), so the surface forces on the wrapped part balance the two end
tensions, and the wrap body receives exactly those two forces at the contact points. Hence, for
body velocities ``(v_b, w_b)`` (centre-of-mass linear velocity and angular velocity, world frame)

    dl/dt = J v = sum_points grad . (v_b + w_b x (p - com_b)),

and a tendon force ``F`` along ``l`` (positive: lengthening) acts as ``F * grad`` at every point.
Side sites select the route only; they carry no gradient.

Route rules (spec: "Sphere and cylinder wrapping", "Side sites and route selection")
-----------------------------------------------------------------------------------
Wrapping is solved in a plane: for a sphere the plane through both endpoints and the centre, for a
cylinder the plane perpendicular to its axis (endpoints projected; the axial separation ``dz`` is
added afterwards as a helix, ``l = sqrt(s_perp^2 + dz^2)``). In that plane, with endpoint distances
``rho_a, rho_b`` from the centre and tangent angles ``alpha = acos(r / rho)``:

* no side site: wrap only when the direct segment cuts the circle, around the shorter side;
* exterior side site: the route is the shortest path homotopic to the polyline endpoint -> side
  site (projected onto the circle) -> endpoint, i.e. it keeps the polyline's winding angle ``W``
  around the centre; the arc is ``r (|W| - alpha_a - alpha_b)`` and the route is straight when that
  is not positive (the direct segment already passes on the selected side). This keeps an overhead
  pulley wrapped when the direct segment misses it below, and matches MuJoCo >= 4.0's sidesite rule;
* interior side site (inside the sphere, or inside the cylinder's cross-section disk measured
  perpendicular to the axis): the route must cross the surface; the direct segment is used when it
  does, otherwise the route bends at the circle point ``p`` minimizing ``|a - p| + |p - b|``;
* an endpoint on or inside the circle gives the straight segment.
"""

import warp as wp

wp.set_module_options({"enable_backward": False})

# Path element types (``SpatialPathModel.type``).
SPATIAL_SITE = wp.constant(0)
SPATIAL_SPHERE = wp.constant(1)
SPATIAL_CYLINDER = wp.constant(2)
SPATIAL_PULLEY = wp.constant(3)

SPATIAL_TYPE_NAMES = {0: "site", 1: "sphere", 2: "cylinder", 3: "pulley"}

# Routing modes of one wrap, chosen from its side site.
WRAP_FREE = wp.constant(0)
WRAP_SIDE = wp.constant(1)
WRAP_INSIDE = wp.constant(2)

DIRECTION_EPS = wp.constant(1.0e-12)
"""Segment length [m] below which a segment has no direction (zero gradient, never NaN)."""
PLANE_EPS = wp.constant(1.0e-6)
"""|(a - c) x (b - c)| / (|a - c| |b - c|) below which the endpoints are collinear with a sphere's
centre and the wrapping plane is chosen through the side site (or a fixed perpendicular)."""
SIDE_EPS = wp.constant(1.0e-6)
"""Relative in-plane length of a sphere side site below which it selects no side (it lies on the
plane normal through the centre); the wrap then takes the shorter side."""
BEND_ITERATIONS = wp.constant(16)
"""Safeguarded Newton iterations for the bend point of an interior side site (quadratic
convergence from a bisection bracket; 16 reach float32 resolution with margin)."""


@wp.struct
class SpatialPathModel:
    """Flattened paths of all spatial tendons (built by ``newton_tendon.transmission``).

    Tendon ``t`` owns elements ``start[t] .. start[t+1]``; every other array has one entry per
    element. Offsets and axes are body-local (world coordinates for body -1).
    """

    start: wp.array(dtype=wp.int32)
    """First element of each tendon, shape [tendon_count + 1], int32."""
    type: wp.array(dtype=wp.int32)
    """Element type (SPATIAL_SITE/SPHERE/CYLINDER/PULLEY), shape [element_count], int32."""
    body: wp.array(dtype=wp.int32)
    """Body of the site or wrap, -1 for the world, shape [element_count], int32."""
    offset: wp.array(dtype=wp.vec3)
    """Site position or wrap centre in the body frame [m], shape [element_count], vec3."""
    axis: wp.array(dtype=wp.vec3)
    """Unit cylinder axis in the body frame, shape [element_count], vec3."""
    radius: wp.array(dtype=float)
    """Wrap radius [m] (0 for sites and pulleys), shape [element_count], float32."""
    side_body: wp.array(dtype=wp.int32)
    """Body of the wrap's side site, -1 for the world, shape [element_count], int32."""
    side_offset: wp.array(dtype=wp.vec3)
    """Side site position in its body frame [m], shape [element_count], vec3."""
    has_side: wp.array(dtype=wp.int32)
    """1 when the wrap has a side site, shape [element_count], int32."""
    divisor: wp.array(dtype=float)
    """Divisor [-] of the branch the element belongs to, shape [element_count], float32."""


@wp.func
def body_pose(body_q: wp.array(dtype=wp.transform), b: int):
    """World pose of body b; identity for the world (b = -1)."""
    if b < 0:
        return wp.transform_identity()
    return body_q[b]


@wp.func
def element_point(path: SpatialPathModel, i: int, body_q: wp.array(dtype=wp.transform)):
    """World position [m] of site i, or of wrap i's centre."""
    return wp.transform_point(body_pose(body_q, path.body[i]), path.offset[i])


@wp.func
def side_point(path: SpatialPathModel, i: int, body_q: wp.array(dtype=wp.transform)):
    """World position [m] of wrap i's side site (meaningless when ``has_side[i] == 0``)."""
    return wp.transform_point(body_pose(body_q, path.side_body[i]), path.side_offset[i])


@wp.func
def segment_direction(a: wp.vec3, b: wp.vec3):
    """Straight segment from a to b: length ``s = |b - a|`` [m] and unit direction ``u``.

    Gradient: ``ds/da = -u``, ``ds/db = u``. Coincident points (``s <= DIRECTION_EPS``) give
    ``u = 0``: no pulling direction, never NaN.
    """
    d = b - a
    s = wp.length(d)
    if s <= DIRECTION_EPS:
        return s, wp.vec3(0.0, 0.0, 0.0)
    return s, d / s


@wp.func
def perpendicular(n: wp.vec3):
    """A unit vector perpendicular to the unit vector n (deterministic)."""
    a = wp.vec3(1.0, 0.0, 0.0)
    if wp.abs(n[0]) > 0.9:
        a = wp.vec3(0.0, 1.0, 0.0)
    return wp.normalize(wp.cross(n, a))


@wp.func
def cross2(a: wp.vec2, b: wp.vec2):
    """z component of the 2D cross product a x b."""
    return a[0] * b[1] - a[1] * b[0]


@wp.func
def perp2(a: wp.vec2):
    """a rotated by +90 degrees."""
    return wp.vec2(-a[1], a[0])


@wp.func
def signed_angle2(a: wp.vec2, b: wp.vec2):
    """Signed angle [rad] from a to b, counter-clockwise positive, in [-pi, pi]."""
    return wp.atan2(cross2(a, b), wp.dot(a, b))


@wp.func
def tangent_length(rho: float, r: float):
    """Length [m] ``sqrt(rho^2 - r^2)`` of the tangent from a point at distance rho to a circle of radius r."""
    return wp.sqrt(wp.max((rho - r) * (rho + r), 0.0))


@wp.func
def chord_to_circle(rho: float, r: float, x: float):
    """Distance [m] ``sqrt(rho^2 + r^2 - 2 rho r cos x)`` from a point at distance rho to the circle
    point at angle x from it, in a form that stays accurate for small x and rho close to r."""
    h = wp.sin(0.5 * x)
    return wp.sqrt((rho - r) * (rho - r) + 4.0 * rho * r * h * h)


@wp.func
def bend_angle_on_circle(rho_a: float, rho_b: float, r: float, g: float):
    """Bend point of a route forced through a circle it would otherwise miss.

    Minimizes ``f(x) = |a - p(x)| + |p(x) - b|`` over the circle point ``p(x)`` at angle x [rad]
    from a towards b, ``x in [0, g]`` (g = angle between a and b at the centre, < pi; both ends at
    distances rho_a, rho_b > r outside the circle). ``f'(0) <= 0 <= f'(g)``, so a safeguarded Newton
    iteration on ``f'`` keeps a bisection bracket and converges to the stationary point (the
    point of equal incidence angles). Returns x [rad].
    """
    lo = float(0.0)
    hi = float(g)
    x = float(0.5 * g)
    for _k in range(BEND_ITERATIONS):
        y = g - x
        da = chord_to_circle(rho_a, r, x)
        db = chord_to_circle(rho_b, r, y)
        ka = rho_a * r
        kb = rho_b * r
        sa = wp.sin(x)
        sb = wp.sin(y)
        fp = ka * sa / da - kb * sb / db
        fpp = ka * (wp.cos(x) / da - ka * sa * sa / (da * da * da)) + kb * (
            wp.cos(y) / db - kb * sb * sb / (db * db * db)
        )
        if fp > 0.0:
            hi = x
        else:
            lo = x
        nx = 0.5 * (lo + hi)
        if fpp > 0.0:
            cand = x - fp / fpp
            if cand >= lo and cand <= hi:
                nx = cand
        x = nx
    return x


@wp.func
def circle_route(pa: wp.vec2, pb: wp.vec2, r: float, mode: int, side: wp.vec2):
    """Planar route from pa to pb around the circle of radius r [m] centred at the origin.

    Returns ``(active, ta, tb, arc)``: whether the route touches the circle, the entry and exit
    contact points [m] and the arc length [m] between them. The planar length of an active route is
    ``|pa - ta| + arc + |tb - pb|`` with ``|pa - ta| = sqrt(rho_a^2 - r^2)`` for a tangent.

    Exterior modes: with ``W`` the winding angle of the route around the centre (``WRAP_FREE``: of
    the direct segment; ``WRAP_SIDE``: of the polyline pa -> side -> pb), the arc angle is
    ``theta = |W| - alpha_a - alpha_b`` (``alpha = acos(r / rho)``, the angle the tangent sweeps),
    wound in the sense of ``W``; ``theta <= 0`` means the direct segment is the route. For
    ``WRAP_FREE`` this wraps exactly when the segment cuts the circle, around the shorter side.
    ``WRAP_INSIDE``: the direct segment when it meets the disk (``|W| >= alpha_a + alpha_b``),
    otherwise the single bend point ``ta = tb`` from ``bend_angle_on_circle`` and ``arc = 0``.
    An endpoint on or inside the circle gives the direct segment.
    """
    zero = wp.vec2(0.0, 0.0)
    rho_a = wp.length(pa)
    rho_b = wp.length(pb)
    if rho_a <= r or rho_b <= r:
        return 0, zero, zero, 0.0
    ea = pa / rho_a
    eb = pb / rho_b
    la = tangent_length(rho_a, r)
    lb = tangent_length(rho_b, r)
    alpha_a = wp.atan2(la, r)
    alpha_b = wp.atan2(lb, r)
    w0 = signed_angle2(pa, pb)
    if mode == WRAP_INSIDE:
        g = wp.abs(w0)
        if g >= alpha_a + alpha_b:
            return 0, zero, zero, 0.0
        sense = 1.0
        if w0 < 0.0:
            sense = -1.0
        x = bend_angle_on_circle(rho_a, rho_b, r, g)
        p = r * (wp.cos(x) * ea + sense * wp.sin(x) * perp2(ea))
        return 1, p, p, 0.0
    w = w0
    if mode == WRAP_SIDE:
        w = signed_angle2(pa, side) + signed_angle2(side, pb)
    theta = wp.abs(w) - alpha_a - alpha_b
    if theta <= 0.0:
        return 0, zero, zero, 0.0
    sense = 1.0
    if w < 0.0:
        sense = -1.0
    ta = (r / rho_a) * (r * ea + sense * la * perp2(ea))
    tb = (r / rho_b) * (r * eb - sense * lb * perp2(eb))
    return 1, ta, tb, r * theta


@wp.func
def sphere_wrap(a: wp.vec3, b: wp.vec3, c: wp.vec3, r: float, has_side: int, s: wp.vec3):
    """Route from a to b [m] around the sphere (centre c, radius r), side site s if ``has_side``.

    Constraint (active wrap): ``l = sqrt(rho_a^2 - r^2) + r |theta| + sqrt(rho_b^2 - r^2)``, theta
    the sweep in the plane through a, b and c (``circle_route``); an interior side site
    (``|s - c| < r``) bends the route through one sphere point instead. When a, b and c are
    collinear the plane is the one through the side site, else a fixed perpendicular one.

    Returns ``(active, l, ta, tb, ua, ub)``: ``ta``/``tb`` the entry/exit points [m] and
    ``ua = (ta - a)/|ta - a|``, ``ub = (b - tb)/|b - tb|``. Gradient: ``dl/da = -ua``,
    ``dl/db = ub``, and ``+ua`` at ta, ``-ub`` at tb as points fixed to the sphere (the path is a
    geodesic, so sliding the contact points along the surface does not change l to first order).
    ``active = 0`` means the straight segment a-b is the route (l and points are then unused).
    """
    zero = wp.vec3(0.0, 0.0, 0.0)
    da = a - c
    db = b - c
    ds = s - c
    rho_a = wp.length(da)
    rho_b = wp.length(db)
    if rho_a <= r or rho_b <= r:
        return 0, 0.0, c, c, zero, zero
    e1 = da / rho_a
    n = wp.cross(da, db)
    nl = wp.length(n)
    if nl > PLANE_EPS * rho_a * rho_b:
        n = n / nl
    else:
        n = perpendicular(e1)
        if has_side != 0:
            m = wp.cross(e1, ds)
            ml = wp.length(m)
            if ml > PLANE_EPS * wp.length(ds):
                n = m / ml
    e2 = wp.cross(n, e1)
    pa = wp.vec2(rho_a, 0.0)
    pb = wp.vec2(wp.dot(db, e1), wp.dot(db, e2))
    sd = wp.vec2(wp.dot(ds, e1), wp.dot(ds, e2))
    mode = WRAP_FREE
    if has_side != 0:
        sl = wp.length(ds)
        if sl < r:
            mode = WRAP_INSIDE
        elif wp.length(sd) > SIDE_EPS * sl:
            mode = WRAP_SIDE
    active, ta, tb, arc = circle_route(pa, pb, r, mode, sd)
    if active == 0:
        return 0, 0.0, c, c, zero, zero
    ta3 = c + ta[0] * e1 + ta[1] * e2
    tb3 = c + tb[0] * e1 + tb[1] * e2
    la, ua = segment_direction(a, ta3)
    lb, ub = segment_direction(tb3, b)
    return 1, la + arc + lb, ta3, tb3, ua, ub


@wp.func
def cylinder_wrap(a: wp.vec3, b: wp.vec3, c: wp.vec3, n: wp.vec3, r: float, has_side: int, s: wp.vec3):
    """Route from a to b [m] around the infinite cylinder (axis point c, unit axis n, radius r).

    Constraint (active wrap): ``l = sqrt(s_perp^2 + dz^2)`` with ``s_perp`` the planar
    tangent/arc/tangent length of the endpoints projected on the plane perpendicular to n
    (``circle_route``) and ``dz = (b - a).n``. The axial rise is spread over the planar route in
    proportion to its length (a helix on the surface), which places the contact points at heights
    ``z_a + dz |pa - ta| / s_perp`` and ``z_a + dz (|pa - ta| + arc) / s_perp``. An interior side
    site (closer than r to the axis, measured perpendicular to it) bends the route through one
    surface point instead.

    Returns ``(active, l, ta, tb, ua, ub)`` as ``sphere_wrap``; the gradients ``-ua`` at a, ``+ua``
    at ta, ``-ub`` at tb and ``+ub`` at b include the axial part (the unrolled route is straight,
    so it is a geodesic and the contact points may be treated as fixed to the cylinder).
    """
    zero = wp.vec3(0.0, 0.0, 0.0)
    e1 = perpendicular(n)
    e2 = wp.cross(n, e1)
    da = a - c
    db = b - c
    ds = s - c
    pa = wp.vec2(wp.dot(da, e1), wp.dot(da, e2))
    pb = wp.vec2(wp.dot(db, e1), wp.dot(db, e2))
    sd = wp.vec2(wp.dot(ds, e1), wp.dot(ds, e2))
    mode = WRAP_FREE
    if has_side != 0:
        if wp.length(sd) < r:
            mode = WRAP_INSIDE
        else:
            mode = WRAP_SIDE
    active, ta, tb, arc = circle_route(pa, pb, r, mode, sd)
    if active == 0:
        return 0, 0.0, c, c, zero, zero
    la2 = wp.length(pa - ta)
    lb2 = wp.length(pb - tb)
    sp = la2 + arc + lb2
    za = wp.dot(da, n)
    dz = wp.dot(db, n) - za
    fa = float(0.0)
    fb = float(1.0)
    if sp > 0.0:
        fa = la2 / sp
        fb = (la2 + arc) / sp
    ta3 = c + ta[0] * e1 + ta[1] * e2 + (za + dz * fa) * n
    tb3 = c + tb[0] * e1 + tb[1] * e2 + (za + dz * fb) * n
    _la, ua = segment_direction(a, ta3)
    _lb, ub = segment_direction(tb3, b)
    return 1, wp.sqrt(sp * sp + dz * dz), ta3, tb3, ua, ub


@wp.func
def wrap_route(path: SpatialPathModel, w: int, body_q: wp.array(dtype=wp.transform), a: wp.vec3, b: wp.vec3):
    """Route of wrap element w between the sites at a and b [m] (world): ``sphere_wrap`` or
    ``cylinder_wrap`` with the element's world centre, axis and side site."""
    pose = body_pose(body_q, path.body[w])
    c = wp.transform_point(pose, path.offset[w])
    s = side_point(path, w, body_q)
    r = path.radius[w]
    if path.type[w] == SPATIAL_SPHERE:
        return sphere_wrap(a, b, c, r, path.has_side[w], s)
    n = wp.normalize(wp.transform_vector(pose, path.axis[w]))
    return cylinder_wrap(a, b, c, n, r, path.has_side[w], s)


@wp.func
def spatial_route(
    path: SpatialPathModel,
    tendon: int,
    body_q: wp.array(dtype=wp.transform),
    point_a_out: wp.array(dtype=wp.vec3),
    grad_a_out: wp.array(dtype=wp.vec3),
    point_b_out: wp.array(dtype=wp.vec3),
    grad_b_out: wp.array(dtype=wp.vec3),
):
    """Length [m] of spatial tendon ``tendon``; writes its elements' (point, dl/dpoint) pairs.

    Walks the path in order; a site's gradient collects its incoming and outgoing segments, so every
    output is written exactly once, without atomics. See the module docstring for the meaning of
    the per-element outputs.
    """
    begin = path.start[tendon]
    end = path.start[tendon + 1]
    zero = wp.vec3(0.0, 0.0, 0.0)
    total = float(0.0)
    carry = wp.vec3(0.0, 0.0, 0.0)
    i = int(begin)
    while i < end:
        if path.type[i] == SPATIAL_PULLEY:
            point_a_out[i] = zero
            grad_a_out[i] = zero
            point_b_out[i] = zero
            grad_b_out[i] = zero
            carry = zero
            i = i + 1
        else:
            # A site: validated paths put a wrap only between two sites, so wraps are reached from here.
            a = element_point(path, i, body_q)
            inv_d = 1.0 / path.divisor[i]
            g = carry
            carry = zero
            step = int(1)
            if i + 1 < end:
                kind = path.type[i + 1]
                if kind == SPATIAL_SITE:
                    s, u = segment_direction(a, element_point(path, i + 1, body_q))
                    total = total + s * inv_d
                    g = g - u * inv_d
                    carry = u * inv_d
                elif kind == SPATIAL_SPHERE or kind == SPATIAL_CYLINDER:
                    w = i + 1
                    b = element_point(path, i + 2, body_q)
                    active, lw, ta, tb, ua, ub = wrap_route(path, w, body_q, a, b)
                    if active != 0:
                        total = total + lw * inv_d
                        g = g - ua * inv_d
                        carry = ub * inv_d
                        point_a_out[w] = ta
                        grad_a_out[w] = ua * inv_d
                        point_b_out[w] = tb
                        grad_b_out[w] = -ub * inv_d
                    else:
                        s, u = segment_direction(a, b)
                        total = total + s * inv_d
                        g = g - u * inv_d
                        carry = u * inv_d
                        c = element_point(path, w, body_q)
                        point_a_out[w] = c
                        grad_a_out[w] = zero
                        point_b_out[w] = c
                        grad_b_out[w] = zero
                    step = 2
            point_a_out[i] = a
            grad_a_out[i] = g
            point_b_out[i] = a
            grad_b_out[i] = zero
            i = i + step
    return total


@wp.kernel
def spatial_tendon_geometry(
    # Model:
    path: SpatialPathModel,
    # State:
    body_q: wp.array(dtype=wp.transform),
    # Output:
    tendon_length: wp.array(dtype=float),
    point_a: wp.array(dtype=wp.vec3),
    grad_a: wp.array(dtype=wp.vec3),
    point_b: wp.array(dtype=wp.vec3),
    grad_b: wp.array(dtype=wp.vec3),
):
    """Length [m] of each spatial tendon and, per path element, its (point, dl/dpoint) pairs (one
    thread per tendon, see ``spatial_route``)."""
    tendon = wp.tid()
    tendon_length[tendon] = spatial_route(path, tendon, body_q, point_a, grad_a, point_b, grad_b)
