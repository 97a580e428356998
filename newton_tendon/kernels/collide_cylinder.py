"""Narrow phase: a cylinder against a sphere, a capsule, a box or another cylinder.

Every slot tests one point on the surface of one shape against the exact signed distance of the
other (``_cylinder_surface`` for a cylinder, the closest box point for a box), so a valid slot is
always a real point of one shape inside (or within the margin of) the other, and a degenerate pose
(coincident centres, parallel axes) changes which points are tested, never their finiteness. The
points tested are the features that carry a resting contact:

- sphere-cylinder: the sphere centre (one slot, exact);
- capsule-cylinder: both segment ends and the two ends of the segment's deepest stretch, as for a
  box (four slots);
- box-cylinder: the 8 box corners, the deepest interior point of each of the 12 box edges (a box
  resting on a lying cylinder touches it along its edges), and 4 rim points per cap facing the box
  (a cylinder standing or lying on a box face);
- cylinder-cylinder: the closest points of the two axes when they are interior to both (side on
  side, crossed), 4 rim points per cap of each cylinder facing the other (parallel or stacked), and
  the two ends of the chord that the other cylinder's nearest side line cuts across each cylinder's
  facing cap (a cylinder standing on a lying one).

``collide`` lists the slot numbers of each pair.
"""

import warp as wp

from newton_tendon.kernels.collide_common import (
    _BOX_TOL_REL,
    _LENGTH_EPS,
    _PARALLEL_SIN,
    _SEARCH_ITERATIONS,
    _SEGMENT_PARAM_TOL,
    _capsule_ends,
    _column,
    _empty_contact,
    _make_contact,
    _normalize_or,
    _segment_closest_param,
    _sign,
)
from newton_tendon.kernels.collide_swept import _sphere_box

wp.set_module_options({"enable_backward": False})

# Parametric tolerance under which a cylinder cap chord's two ends count as one point.
_CHORD_PARAM_TOL = wp.constant(1.0e-6)
# Rim points and chord ends are edges: where two cylinders (or a cylinder and a box) of equal width or
# length meet, they lie exactly on the other shape's side or cap plane, whose normal is then the nearest
# exit although the shapes press face on face. They are therefore tested this fraction of the radius
# (and of the half height) inside the rim, across the pressing direction only, so resting heights are
# unchanged and equal sizes rest on the pressed faces while the penetration stays below 1% of the size.
_RIM_INSET_REL = wp.constant(1.0e-2)


@wp.struct
class SurfacePoint:
    """The point of a shape's surface closest to a query point, in the shape's frame.

    Attributes:
        point: Closest surface point.
        normal: Outward unit surface normal there (the direction the query point has to move to leave).
        distance: Signed distance of the query point (negative inside).
    """

    point: wp.vec3
    normal: wp.vec3
    distance: float


@wp.func
def _cylinder_surface(p: wp.vec3, radius: float, half_height: float) -> SurfacePoint:
    """Closest surface point of a cylinder (axis local Z, caps at +-half_height) to ``p`` (cylinder frame).

    Outside, the closest point is on the side, on a cap or on a rim circle; inside, the point leaves through
    the nearer of the side and the nearest cap (the side wins ties). On the axis the radial direction is
    local +X, so the centre itself gets a finite answer.
    """
    rho = wp.sqrt(p[0] * p[0] + p[1] * p[1])
    u = wp.vec3(1.0, 0.0, 0.0)
    if rho > _LENGTH_EPS:
        u = wp.vec3(p[0] / rho, p[1] / rho, 0.0)
    sz = _sign(p[2])
    dr = rho - radius
    dz = wp.abs(p[2]) - half_height
    out = SurfacePoint()
    if dr > 0.0 and dz > 0.0:
        out.point = radius * u + wp.vec3(0.0, 0.0, sz * half_height)
        out.distance = wp.sqrt(dr * dr + dz * dz)
        out.normal = _normalize_or(p - out.point, u)
    elif dr >= dz:
        out.point = radius * u + wp.vec3(0.0, 0.0, p[2])
        out.normal = u
        out.distance = dr
    else:
        out.point = wp.vec3(p[0], p[1], sz * half_height)
        out.normal = wp.vec3(0.0, 0.0, sz)
        out.distance = dz
    return out


@wp.func
def _cylinder_signed_distance(p: wp.vec3, radius: float, half_height: float) -> float:
    """Exact signed distance of ``p`` (cylinder frame) to the cylinder surface (convex in ``p``)."""
    rho = wp.sqrt(p[0] * p[0] + p[1] * p[1])
    dr = rho - radius
    dz = wp.abs(p[2]) - half_height
    outside = wp.sqrt(wp.max(dr, 0.0) * wp.max(dr, 0.0) + wp.max(dz, 0.0) * wp.max(dz, 0.0))
    return outside + wp.min(wp.max(dr, dz), 0.0)


@wp.func
def _point_cylinder(p_a: wp.vec3, radius_a: float, xform_cyl: wp.transform, scale_cyl: wp.vec3, margin: float):
    """A point of shape ``a`` swept by ``radius_a`` (0 for a bare point) against cylinder ``b``."""
    s = _cylinder_surface(wp.transform_point(wp.transform_inverse(xform_cyl), p_a), scale_cyl[0], scale_cyl[1])
    q = wp.transform_get_rotation(xform_cyl)
    n = -wp.quat_rotate(q, s.normal)  # from a to b: b moves against its outward normal to release the point
    return _make_contact(p_a + radius_a * n, wp.transform_point(xform_cyl, s.point), n, 1, margin)


@wp.func
def _cylinder_point(xform_cyl: wp.transform, scale_cyl: wp.vec3, p_b: wp.vec3, margin: float):
    """A point of shape ``b`` against cylinder ``a``."""
    s = _cylinder_surface(wp.transform_point(wp.transform_inverse(xform_cyl), p_b), scale_cyl[0], scale_cyl[1])
    n = wp.quat_rotate(wp.transform_get_rotation(xform_cyl), s.normal)
    return _make_contact(wp.transform_point(xform_cyl, s.point), p_b, n, 1, margin)


@wp.func
def _box_point(xform_box: wp.transform, half: wp.vec3, p_b: wp.vec3, margin: float):
    """A point of shape ``b`` against box ``a`` (the sphere-box contact of a zero radius, seen from the box)."""
    c = _sphere_box(p_b, 0.0, xform_box, half, margin)
    return _make_contact(c.point_b, p_b, -c.normal, 1, margin)


@wp.func
def cylinder_rim_point(xform_cyl: wp.transform, scale_cyl: wp.vec3, n: wp.vec3, slot: int, inset: float) -> wp.vec3:
    """World rim point ``slot`` (0-3 on the +Z cap, 4-7 on the -Z cap) of a cylinder pressed along ``-n``.

    Point 0 of each cap is the rim point deepest along ``-n`` (the part of ``-n`` across the axis); 1-3 follow
    at 90, 180 and 270 degrees. A cap parallel to ``n`` has no deepest point, so it starts at local +X. The
    point moves the fraction ``inset`` of the radius towards the axis and of the half height towards the
    middle, keeping only the part of that move across ``n`` (so the depth along ``n`` is unchanged).
    """
    q = wp.transform_get_rotation(xform_cyl)
    axis = wp.quat_rotate(q, wp.vec3(0.0, 0.0, 1.0))
    down = -n - wp.dot(-n, axis) * axis
    down_length = wp.length(down)
    u = wp.quat_rotate(q, wp.vec3(1.0, 0.0, 0.0))
    if down_length > _PARALLEL_SIN:
        u = down / down_length
    v = wp.cross(axis, u)
    k = slot % 4
    offset = u
    if k == 1:
        offset = v
    elif k == 2:
        offset = -u
    elif k == 3:
        offset = -v
    cap_z = scale_cyl[1]
    if slot >= 4:
        cap_z = -scale_cyl[1]
    inward = inset * scale_cyl[0] * offset + inset * cap_z * axis
    inward = inward - wp.dot(inward, n) * n
    return wp.transform_get_translation(xform_cyl) + cap_z * axis + scale_cyl[0] * offset - inward


@wp.func
def _deepest_in_cylinder(p0: wp.vec3, p1: wp.vec3, radius: float, half_height: float, upper: int) -> float:
    """One end of the stretch of segment ``p0 p1`` (cylinder frame) where the cylinder's signed distance is
    (nearly) minimal: ternary search for the minimum of the convex distance, bisection to the upper (or lower)
    end of the level set within a small tolerance, then two alternating projections, as for a box
    (``collide_swept._deepest_segment_param``).

    ``upper`` -1 returns the minimum itself (the ternary search's answer).

    Returns:
        The parameter in [0, 1].
    """
    seg = p1 - p0
    level_tol = _BOX_TOL_REL * (radius + half_height + wp.length(seg)) + _LENGTH_EPS
    lo = float(0.0)  # noqa: UP018
    hi = float(1.0)  # noqa: UP018
    for _ in range(_SEARCH_ITERATIONS):
        m1 = lo + (hi - lo) / 3.0
        m2 = hi - (hi - lo) / 3.0
        if _cylinder_signed_distance(p0 + m1 * seg, radius, half_height) < _cylinder_signed_distance(
            p0 + m2 * seg, radius, half_height
        ):
            hi = m2
        else:
            lo = m1
    inner = 0.5 * (lo + hi)
    if upper < 0:
        return inner
    level = _cylinder_signed_distance(p0 + inner * seg, radius, half_height) + level_tol
    outer = float(0.0)  # noqa: UP018
    if upper != 0:
        outer = 1.0
    t = outer
    if _cylinder_signed_distance(p0 + outer * seg, radius, half_height) > level:
        for _ in range(_SEARCH_ITERATIONS):
            mid = 0.5 * (inner + outer)
            if _cylinder_signed_distance(p0 + mid * seg, radius, half_height) <= level:
                inner = mid
            else:
                outer = mid
        t = inner
    for _ in range(2):
        s = _cylinder_surface(p0 + t * seg, radius, half_height)
        if s.distance > 0.0:
            t = _segment_closest_param(p0, p1, s.point)
    return t


@wp.func
def _sphere_cylinder(center: wp.vec3, radius: float, xform_cyl: wp.transform, scale_cyl: wp.vec3, margin: float):
    """Sphere (shape ``a``) against cylinder (shape ``b``): the centre against the cylinder surface."""
    return _point_cylinder(center, radius, xform_cyl, scale_cyl, margin)


@wp.func
def _capsule_cylinder(
    xform_cap: wp.transform, scale_cap: wp.vec3, xform_cyl: wp.transform, scale_cyl: wp.vec3, slot: int, margin: float
):
    """Capsule (``a``) against cylinder (``b``): slots 0-1 the segment ends, 2-3 the ends of the deepest stretch
    (dropped when they repeat an end or each other)."""
    c0 = _capsule_ends(xform_cap, scale_cap[1], 0)
    c1 = _capsule_ends(xform_cap, scale_cap[1], 1)
    if slot < 2:
        end = c0
        if slot == 1:
            end = c1
        c = _point_cylinder(end, scale_cap[0], xform_cyl, scale_cyl, margin)
        if slot == 1 and scale_cap[1] <= _LENGTH_EPS:
            c.valid = 0  # both ends coincide
        return c
    inv = wp.transform_inverse(xform_cyl)
    l0 = wp.transform_point(inv, c0)
    l1 = wp.transform_point(inv, c1)
    t_up = _deepest_in_cylinder(l0, l1, scale_cyl[0], scale_cyl[1], 1)
    t = t_up
    keep = 1
    if slot == 3:
        t = _deepest_in_cylinder(l0, l1, scale_cyl[0], scale_cyl[1], 0)
        if wp.abs(t - t_up) <= _SEGMENT_PARAM_TOL:
            keep = 0
    if t <= _SEGMENT_PARAM_TOL or t >= 1.0 - _SEGMENT_PARAM_TOL:
        keep = 0
    c = _point_cylinder(c0 + t * (c1 - c0), scale_cap[0], xform_cyl, scale_cyl, margin)
    if keep == 0:
        c.valid = 0
    return c


@wp.func
def _cylinder_support(axis: wp.vec3, radius: float, half_height: float, v: wp.vec3) -> float:
    """Half width of a cylinder's projection onto the unit direction ``v``."""
    c = wp.dot(axis, v)
    return half_height * wp.abs(c) + radius * wp.sqrt(wp.max(1.0 - c * c, 0.0))


@wp.func
def _box_cylinder(
    xform_box: wp.transform, half: wp.vec3, xform_cyl: wp.transform, scale_cyl: wp.vec3, slot: int, margin: float
):
    """Box (``a``) against cylinder (``b``): slots 0-7 box corners, 8-19 box edges, 20-27 cylinder rim points."""
    if slot < 8:
        corner = wp.vec3(
            (1.0 - 2.0 * float(slot & 1)) * half[0],
            (1.0 - 2.0 * float((slot >> 1) & 1)) * half[1],
            (1.0 - 2.0 * float((slot >> 2) & 1)) * half[2],
        )
        return _point_cylinder(wp.transform_point(xform_box, corner), 0.0, xform_cyl, scale_cyl, margin)
    if slot < 20:
        # Edge e runs along box axis k at the signs (s1, s2) of the two other axes.
        e = slot - 8
        k = e // 4
        s1 = 1.0 - 2.0 * float(e & 1)
        s2 = 1.0 - 2.0 * float((e >> 1) & 1)
        lo = wp.vec3(0.0)
        k1 = (k + 1) % 3
        k2 = (k + 2) % 3
        lo[k1] = s1 * half[k1]
        lo[k2] = s2 * half[k2]
        hi = wp.vec3(lo[0], lo[1], lo[2])
        lo[k] = -half[k]
        hi[k] = half[k]
        w0 = wp.transform_point(xform_box, lo)
        w1 = wp.transform_point(xform_box, hi)
        inv = wp.transform_inverse(xform_cyl)
        t = _deepest_in_cylinder(wp.transform_point(inv, w0), wp.transform_point(inv, w1), scale_cyl[0], scale_cyl[1], -1)
        c = _point_cylinder(w0 + t * (w1 - w0), 0.0, xform_cyl, scale_cyl, margin)
        if t <= _SEGMENT_PARAM_TOL or t >= 1.0 - _SEGMENT_PARAM_TOL:
            c.valid = 0  # a corner, reported by slots 0-7
        return c
    # Rim points of the cylinder pressed towards the box along the box face axis that separates them best.
    rot = wp.quat_to_matrix(wp.transform_get_rotation(xform_box))
    axis = wp.quat_rotate(wp.transform_get_rotation(xform_cyl), wp.vec3(0.0, 0.0, 1.0))
    d = wp.transform_get_translation(xform_cyl) - wp.transform_get_translation(xform_box)
    best = -1.0e30
    n = _column(rot, 2)
    for i in range(3):
        col = _column(rot, i)
        s = wp.abs(wp.dot(d, col)) - half[i] - _cylinder_support(axis, scale_cyl[0], scale_cyl[1], col)
        if s > best:
            best = s
            n = _sign(wp.dot(d, col)) * col
    rim = cylinder_rim_point(xform_cyl, scale_cyl, n, slot - 20, _RIM_INSET_REL)
    return _box_point(xform_box, half, rim, margin)


@wp.func
def _cap_chord_end(
    xform_cap: wp.transform, scale_cap: wp.vec3, xform_other: wp.transform, scale_other: wp.vec3, end: int
) -> wp.vec4:
    """End ``end`` (0 or 1) of the chord that the other cylinder's side line nearest to this cylinder's facing
    cap cuts across that cap's disk (seen along this cylinder's axis).

    Returns:
        ``(x, y, z, ok)``: the world point on the other cylinder's side line and 1 when it exists (0 when the
        other axis is parallel to this axis, the line misses the disk, or end 1 repeats end 0).
    """
    axis = wp.quat_rotate(wp.transform_get_rotation(xform_cap), wp.vec3(0.0, 0.0, 1.0))
    axis_o = wp.quat_rotate(wp.transform_get_rotation(xform_other), wp.vec3(0.0, 0.0, 1.0))
    c = wp.transform_get_translation(xform_cap)
    c_o = wp.transform_get_translation(xform_other)
    m = _sign(wp.dot(axis, c_o - c)) * axis  # outward normal of the cap facing the other cylinder
    w = -m - wp.dot(-m, axis_o) * axis_o  # the other cylinder's side line deepest along -m
    w_length = wp.length(w)
    none = wp.vec4(0.0, 0.0, 0.0, 0.0)
    if w_length <= _PARALLEL_SIN:
        return none
    base = c_o + scale_other[0] * (w / w_length)
    q0 = (base - c) - wp.dot(base - c, axis) * axis
    q1 = axis_o - wp.dot(axis_o, axis) * axis
    qa = wp.dot(q1, q1)
    qb = wp.dot(q0, q1)
    qc = wp.dot(q0, q0) - scale_cap[0] * scale_cap[0]
    disc = qb * qb - qa * qc
    if qa <= _PARALLEL_SIN * _PARALLEL_SIN or disc < 0.0:
        return none
    root = wp.sqrt(disc)
    h = scale_other[1]
    # The chord ends on the rim are edges, moved inward like the rim points (``_RIM_INSET_REL``).
    inset = _RIM_INSET_REL * scale_cap[0] / wp.sqrt(qa)
    t0 = wp.max((-qb - root) / qa + inset, -h * (1.0 - _RIM_INSET_REL))
    t1 = wp.min((-qb + root) / qa - inset, h * (1.0 - _RIM_INSET_REL))
    if t0 > t1:
        return none
    t = t0
    if end == 1:
        if t1 - t0 <= _CHORD_PARAM_TOL * (h + scale_cap[0]):
            return none
        t = t1
    p = base + t * axis_o
    return wp.vec4(p[0], p[1], p[2], 1.0)


@wp.func
def _cylinder_cylinder(
    xform_a: wp.transform, scale_a: wp.vec3, xform_b: wp.transform, scale_b: wp.vec3, slot: int, margin: float
):
    """Cylinder against cylinder: slot 0 axis-axis side contact, 1-8 rim points of ``a``, 9-16 rim points of
    ``b``, 17-18 the chord of ``b``'s side line across ``a``'s facing cap, 19-20 the converse."""
    empty = _empty_contact()
    axis_a = wp.quat_rotate(wp.transform_get_rotation(xform_a), wp.vec3(0.0, 0.0, 1.0))
    ca = wp.transform_get_translation(xform_a)
    cb = wp.transform_get_translation(xform_b)
    if slot == 0:
        axis_b = wp.quat_rotate(wp.transform_get_rotation(xform_b), wp.vec3(0.0, 0.0, 1.0))
        a0 = ca - scale_a[1] * axis_a
        a1 = ca + scale_a[1] * axis_a
        b0 = cb - scale_b[1] * axis_b
        b1 = cb + scale_b[1] * axis_b
        # Side on side needs the closest points of the two axes interior to both (ends are caps and rims,
        # which the other slots cover) and apart (an axis crossing the other has no side normal).
        d = a1 - a0
        e = b1 - b0
        r = a0 - b0
        dd = wp.dot(d, d)
        ee = wp.dot(e, e)
        de = wp.dot(d, e)
        denom = dd * ee - de * de
        if denom <= _PARALLEL_SIN * _PARALLEL_SIN * dd * ee:
            return empty  # parallel axes: the rim slots carry the line contact
        s = (de * wp.dot(e, r) - ee * wp.dot(d, r)) / denom
        t = (dd * wp.dot(e, r) - de * wp.dot(d, r)) / denom
        if s <= 0.0 or s >= 1.0 or t <= 0.0 or t >= 1.0:
            return empty
        pa = a0 + s * d
        pb = b0 + t * e
        gap = wp.length(pb - pa)
        if gap <= _LENGTH_EPS:
            return empty
        n = (pb - pa) / gap
        return _make_contact(pa + scale_a[0] * n, pb - scale_b[0] * n, n, 1, margin)
    n_ab = _normalize_or(cb - ca, axis_a)
    if slot <= 8:
        rim_a = cylinder_rim_point(xform_a, scale_a, -n_ab, slot - 1, _RIM_INSET_REL)
        return _point_cylinder(rim_a, 0.0, xform_b, scale_b, margin)
    if slot <= 16:
        rim_b = cylinder_rim_point(xform_b, scale_b, n_ab, slot - 9, _RIM_INSET_REL)
        return _cylinder_point(xform_a, scale_a, rim_b, margin)
    if slot <= 18:
        p = _cap_chord_end(xform_a, scale_a, xform_b, scale_b, slot - 17)
        c = _cylinder_point(xform_a, scale_a, wp.vec3(p[0], p[1], p[2]), margin)
        if p[3] == 0.0:
            c.valid = 0
        return c
    p = _cap_chord_end(xform_b, scale_b, xform_a, scale_a, slot - 19)
    c = _point_cylinder(wp.vec3(p[0], p[1], p[2]), 0.0, xform_b, scale_b, margin)
    if p[3] == 0.0:
        c.valid = 0
    return c
