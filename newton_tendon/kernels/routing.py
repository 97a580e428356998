"""Route geometry of routed cables: guide points, roller tangent points, wrap and bend angles.

A tendon is an ordered list of guides. Between two consecutive *active* guides lies a straight
free span. Its two end points (the *attachment points*) are

* the guide point ``body_q[b] * offset`` for an ANCHOR or a PINHOLE,
* a tangent point on the roller circle for a ROLLER (centre ``body_q[b] * offset``, unit axis
  ``n = rot(body_q[b]) * axis``, radius ``r``, winding side ``o = +-1``).

Roller convention: with ``o = +1`` the cable winds counter-clockwise about ``n`` (right-handed)
when the route is traversed from its first guide to its last; ``o = -1`` winds clockwise. In the
roller plane, with ``e1`` the unit direction from the centre to the (projected) far point ``x`` at
distance ``D`` and ``e2 = n x e1``, the tangent point is

    t = c + r (cos(a) e1 + s sin(a) e2),   cos(a) = r / D,

with ``s = +o`` for the span arriving at the roller and ``s = -o`` for the span leaving it. This is
the point where the span direction is perpendicular to the radius and runs along the winding
direction (derivation in ``docs/cables.md``). A far point inside the circle (``D <= r``) gives the
radially nearest circle point (``a = 0``), so degenerate routes never produce NaN.

Reference: Mueller, Chentanez, Jeschke, Macklin, "Cable Joints", SCA 2018 (route geometry).
"""

import warp as wp

from newton_tendon.kernels.types import (
    GUIDE_ANCHOR,
    GUIDE_FLAG_DYNAMIC,
    GUIDE_FLAG_WINCH,
    GUIDE_FLAG_WINCH_FORCE,
    GUIDE_PINHOLE,
    GUIDE_ROLLER,
)

wp.set_module_options({"enable_backward": False})

ROLLER_PAIR_ITERATIONS = wp.constant(17)
"""Most fixed-point passes for a span between two rollers without a prior (each pass re-aims both
tangents; ``roller_pair_tangents`` stops early at the float32 fixed point)."""
ROLLER_PAIR_WARM_ITERATIONS = wp.constant(4)
"""Most passes when starting from the tangent point accepted at the step start (motion per step is small)."""


@wp.struct
class TendonModel:
    """Per-tendon, per-guide and per-segment constants of routed cables.

    Tendon ``t`` owns guides ``start[t] .. start[t+1]``; segment ``g - t - 1`` is the authored span
    from guide ``g - 1`` to guide ``g``. While a dynamic roller is bypassed, the span merged over it
    sits in the slot of its authored incoming span and its outgoing slot is empty (``cable.span_slot``).
    """

    start: wp.array(dtype=wp.int32)
    world: wp.array(dtype=wp.int32)
    guide_body: wp.array(dtype=wp.int32)
    guide_type: wp.array(dtype=wp.int32)
    guide_flags: wp.array(dtype=wp.int32)
    guide_offset: wp.array(dtype=wp.vec3)
    guide_axis: wp.array(dtype=wp.vec3)
    guide_radius: wp.array(dtype=float)
    guide_orientation: wp.array(dtype=wp.int32)
    guide_mu: wp.array(dtype=float)
    seg_compliance: wp.array(dtype=float)
    seg_damping: wp.array(dtype=float)
    compliance_floor: float
    """Smallest compliance [m/N] a span takes (``span_compliance``): 0 on SolverXPBD, where c = 0 is
    an exact inextensible row; ``VBD_COMPLIANCE_FLOOR`` on SolverVBD, which evaluates spans as forces
    and follows the spec's "VBD approximates zero segment compliance with 1.0e-8 m/N"."""


@wp.func
def is_roller(tm: TendonModel, g: int):
    return tm.guide_type[g] == GUIDE_ROLLER


@wp.func
def is_dynamic(tm: TendonModel, g: int):
    return (tm.guide_flags[g] & GUIDE_FLAG_DYNAMIC) != 0


@wp.func
def is_winch(tm: TendonModel, g: int):
    return (tm.guide_flags[g] & GUIDE_FLAG_WINCH) != 0


@wp.func
def is_force_winch(tm: TendonModel, g: int):
    """A winch commanded by its reel-in force (``Control.tendon_guide_winch_force``) rather than a length."""
    return (tm.guide_flags[g] & GUIDE_FLAG_WINCH_FORCE) != 0


@wp.func
def transmits_material(tm: TendonModel, g: int):
    """Pinholes and rollers let material pass between their two spans; anchors do not."""
    return tm.guide_type[g] == GUIDE_PINHOLE or tm.guide_type[g] == GUIDE_ROLLER


@wp.func
def is_anchor(tm: TendonModel, g: int):
    return tm.guide_type[g] == GUIDE_ANCHOR


@wp.func
def guide_pose(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform)):
    """World pose of the guide's body (identity for the world, body -1)."""
    b = tm.guide_body[g]
    if b < 0:
        return wp.transform_identity()
    return body_q[b]


@wp.func
def guide_point(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform)):
    """World position [m] of the guide point (roller centre for a ROLLER)."""
    return wp.transform_point(guide_pose(tm, g, body_q), tm.guide_offset[g])


@wp.func
def guide_axis(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform)):
    """World unit axis of a roller."""
    return wp.normalize(wp.transform_vector(guide_pose(tm, g, body_q), tm.guide_axis[g]))


@wp.func
def to_local(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform), x: wp.vec3):
    """World point ``x`` expressed in the frame of guide g's body."""
    return wp.transform_point(wp.transform_inverse(guide_pose(tm, g, body_q)), x)


@wp.func
def to_world(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform), x_local: wp.vec3):
    return wp.transform_point(guide_pose(tm, g, body_q), x_local)


@wp.func
def any_perpendicular(n: wp.vec3):
    """A unit vector perpendicular to the unit vector n."""
    a = wp.vec3(1.0, 0.0, 0.0)
    if wp.abs(n[0]) > 0.9:
        a = wp.vec3(0.0, 1.0, 0.0)
    return wp.normalize(wp.cross(n, a))


@wp.func
def roller_tangent(c: wp.vec3, n: wp.vec3, r: float, side: float, x: wp.vec3):
    """Tangent point [m] on the circle (c, n, r) of the span towards the far point x.

    ``side = +o`` for the span arriving at the roller, ``-o`` for the span leaving it. Let
    ``d = (x - c) - ((x - c).n) n`` be the in-plane offset, ``D = |d|``, ``e1 = d / D``,
    ``e2 = n x e1``; then ``t = c + r (cos a e1 + side sin a e2)`` with ``cos a = r / D``, so that
    ``(t - c).(x - t) = 0`` (span perpendicular to the radius). ``D <= r`` gives ``a = 0``.
    """
    d = x - c
    d = d - wp.dot(d, n) * n
    dist = wp.length(d)
    e1 = wp.vec3()
    if dist > 1.0e-9:
        e1 = d / dist
    else:
        e1 = any_perpendicular(n)
    e2 = wp.cross(n, e1)
    cos_a = float(1.0)
    if dist > r:
        cos_a = r / dist
    sin_a = wp.sqrt(wp.max(1.0 - cos_a * cos_a, 0.0))
    return c + r * (cos_a * e1 + side * sin_a * e2)


@wp.func
def winding_angle(c: wp.vec3, n: wp.vec3, o: float, a: wp.vec3, b: wp.vec3):
    """Signed angle [rad] from point a to point b about the roller axis, positive along the winding
    direction ``o n``, in (-pi, pi]. Points are projected onto the roller plane first."""
    da = a - c
    db = b - c
    da = da - wp.dot(da, n) * n
    db = db - wp.dot(db, n) * n
    return wp.atan2(o * wp.dot(n, wp.cross(da, db)), wp.dot(da, db))


@wp.func
def wrap_from_angle(theta: float):
    """Map an angle from ``winding_angle`` onto [-pi/2, 3pi/2): a wrap just beyond pi stays near pi."""
    if theta < -0.5 * wp.pi:
        return theta + 2.0 * wp.pi
    return theta


@wp.func
def roller_frame(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform)):
    """(centre, unit axis, radius, orientation) of roller g in world."""
    return guide_point(tm, g, body_q), guide_axis(tm, g, body_q), tm.guide_radius[g], float(tm.guide_orientation[g])


@wp.func
def roller_pair_tangents(
    cl: wp.vec3,
    nl: wp.vec3,
    radl: float,
    ol: float,
    cr: wp.vec3,
    nr: wp.vec3,
    radr: float,
    orr: float,
    guess_r: wp.vec3,
    passes: int,
):
    """Tangent points (t_l, t_r) [m] of the free span between the left roller (cl, nl, radl, ol) and
    the right roller (cr, nr, radr, orr), each a ``roller_tangent`` aimed at the other.

    Fixed-point iteration ``t_l = T_l(t_r)``, ``t_r = T_r(t_l)`` from ``guess_r``, at most ``passes``
    passes. A pass that returns ``t_r`` unchanged has reached the fixed point in float32: every
    further pass would repeat it exactly, so the loop stops there with the same result. Warm-started
    from the last step's tangent point, a span between immovable rollers stops after one pass.
    """
    tr = guess_r
    tl = guess_r
    for _k in range(passes):
        tr_prev = tr
        tl = roller_tangent(cl, nl, radl, -ol, tr)
        tr = roller_tangent(cr, nr, radr, orr, tl)
        if tr[0] == tr_prev[0] and tr[1] == tr_prev[1] and tr[2] == tr_prev[2]:
            break
    return tl, tr


@wp.func
def span_points_from(
    tm: TendonModel, gl: int, gr: int, body_q: wp.array(dtype=wp.transform), guess_r: wp.vec3, passes: int
):
    """World attachment points (x_l, x_r) [m] of the free span from guide gl to guide gr.

    Point guides use their guide point. A roller end uses its tangent point towards the other end.
    Between two rollers the two tangents depend on each other: up to ``passes`` alternating passes
    (``roller_pair_tangents``), each re-aiming one tangent at the other, start from ``guess_r`` on
    the right roller (each pass contracts the error by roughly r/D).
    """
    xl = guide_point(tm, gl, body_q)
    xr = guide_point(tm, gr, body_q)
    rl = is_roller(tm, gl)
    rr = is_roller(tm, gr)
    if rl and rr:
        cl, nl, radl, ol = roller_frame(tm, gl, body_q)
        cr, nr, radr, orr = roller_frame(tm, gr, body_q)
        return roller_pair_tangents(cl, nl, radl, ol, cr, nr, radr, orr, guess_r, passes)
    if rl:
        cl, nl, radl, ol = roller_frame(tm, gl, body_q)
        return roller_tangent(cl, nl, radl, -ol, xr), xr
    if rr:
        cr, nr, radr, orr = roller_frame(tm, gr, body_q)
        return xl, roller_tangent(cr, nr, radr, orr, xl)
    return xl, xr


@wp.func
def span_points(tm: TendonModel, gl: int, gr: int, body_q: wp.array(dtype=wp.transform)):
    """``span_points_from`` without a prior: the roller-pair passes start from the right roller's
    centre and run ``ROLLER_PAIR_ITERATIONS`` times."""
    return span_points_from(tm, gl, gr, body_q, guide_point(tm, gr, body_q), ROLLER_PAIR_ITERATIONS)


@wp.func
def bend_angle(a: wp.vec3, p: wp.vec3, b: wp.vec3):
    """Angle [rad] between the incoming direction (p - a) and the outgoing direction (b - p), in [0, pi].

    Zero for a straight pass. Degenerate (zero-length) spans give 0.
    """
    u = p - a
    v = b - p
    lu = wp.length(u)
    lv = wp.length(v)
    if lu < 1.0e-12 or lv < 1.0e-12:
        return 0.0
    return wp.atan2(wp.length(wp.cross(u, v)), wp.dot(u, v))


@wp.func
def bypass_clearance(tm: TendonModel, g: int, xl: wp.vec3, xr: wp.vec3, body_q: wp.array(dtype=wp.transform)):
    """Signed clearance [m] of roller g from the straight bypass span xl -> xr, and whether the
    roller centre projects between the span ends.

    In the roller plane the clearance is ``o (n x d).(c - xl)`` with ``d`` the unit span direction:
    the distance of the centre from the span on the side the cable must wind around. The roller
    touches the span when the clearance drops below its radius.
    """
    c, n, r, o = roller_frame(tm, g, body_q)
    a = xl - c
    b = xr - c
    a = a - wp.dot(a, n) * n
    b = b - wp.dot(b, n) * n
    d = b - a
    length = wp.length(d)
    if length < 1.0e-12:
        return r * 2.0, False
    d = d / length
    s = o * wp.dot(wp.cross(n, d), -a)
    u = wp.dot(-a, d) / length
    return s, u > 0.0 and u < 1.0
