"""Narrow phase: the pairs of a sphere or a capsule with a box or a capsule.

A sphere is a swept point and a capsule a swept segment, so each slot reduces to a point against
the other shape: the closest box point for sphere-box, the segment ends and the deepest stretch of
the segment for capsule-box, ends and closest pairs of the two segments for capsule-capsule
(``collide`` lists the slots of each pair). Sphere-sphere and sphere-capsule need only
``collide_common._sphere_sphere``.
"""

import warp as wp

from newton_tendon.kernels.collide_common import (
    _BOX_TOL_REL,
    _END_PARAM_TOL,
    _LENGTH_EPS,
    _SEARCH_ITERATIONS,
    _SEGMENT_PARAM_TOL,
    _capsule_ends,
    _make_contact,
    _segment_closest_param,
    _segment_segment_params,
    _sphere_sphere,
    _unit_axis,
)

wp.set_module_options({"enable_backward": False})


@wp.func
def _sphere_box(center: wp.vec3, radius: float, xform_box: wp.transform, half: wp.vec3, margin: float):
    """Contact between a sphere (shape ``a``) and a box (shape ``b``).

    Outside the box the contact joins the centre to the closest box point. A centre inside (or on) the box is
    pushed out through the face with the smallest distance; ties go to +X, -X, +Y, -Y, +Z, -Z in that order.
    """
    q_box = wp.transform_get_rotation(xform_box)
    p = wp.transform_point(wp.transform_inverse(xform_box), center)
    closest = wp.vec3(
        wp.clamp(p[0], -half[0], half[0]),
        wp.clamp(p[1], -half[1], half[1]),
        wp.clamp(p[2], -half[2], half[2]),
    )
    diff = closest - p
    dist = wp.length(diff)
    n_local = wp.vec3(0.0, 0.0, 1.0)
    box_point = closest
    if dist > _LENGTH_EPS:
        n_local = diff / dist
    else:
        best_depth = half[0] - p[0]
        best_axis = 0
        best_sign = 1.0
        for i in range(3):
            for side in range(2):
                sgn = 1.0 - 2.0 * float(side)
                depth = half[i] - sgn * p[i]
                if depth < best_depth:
                    best_depth = depth
                    best_axis = i
                    best_sign = sgn
        e = _unit_axis(best_axis)
        # The box moves against the outward normal of the exit face, so the sphere leaves through that face.
        n_local = -best_sign * e
        box_point = p + (best_sign * half[best_axis] - p[best_axis]) * e
    n = wp.quat_rotate(q_box, n_local)
    return _make_contact(center + radius * n, wp.transform_point(xform_box, box_point), n, 1, margin)


@wp.func
def _box_signed_distance(p_local: wp.vec3, half: wp.vec3) -> float:
    """Signed distance from a point in box coordinates to the box surface (negative inside)."""
    d = wp.vec3(wp.abs(p_local[0]) - half[0], wp.abs(p_local[1]) - half[1], wp.abs(p_local[2]) - half[2])
    outside = wp.length(wp.vec3(wp.max(d[0], 0.0), wp.max(d[1], 0.0), wp.max(d[2], 0.0)))
    inside = wp.min(wp.max(d[0], wp.max(d[1], d[2])), 0.0)
    return outside + inside


@wp.func
def _deepest_segment_param(p0: wp.vec3, p1: wp.vec3, half: wp.vec3, upper: int) -> float:
    """One end of the stretch of a segment where the box signed distance is (nearly) minimal.

    The signed distance of a box is convex along the segment. A ternary search finds its minimum; a bisection then
    walks to the upper (or lower) end of the parameter interval whose value stays within a small tolerance of that
    minimum. A segment lying along a face thus yields both ends of its flat stretch, a crossing segment yields the
    single deepest point twice.

    Args:
        p0: Segment start in box coordinates.
        p1: Segment end in box coordinates.
        half: Box half extents.
        upper: 1 for the end towards ``p1``, 0 for the end towards ``p0``.

    Returns:
        The parameter in [0, 1].
    """
    seg = p1 - p0
    level_tol = _BOX_TOL_REL * (half[0] + half[1] + half[2] + wp.length(seg)) + _LENGTH_EPS
    # Variables changed inside a dynamic (not unrolled) loop need an explicit Warp type constructor.
    lo = float(0.0)  # noqa: UP018
    hi = float(1.0)  # noqa: UP018
    for _ in range(_SEARCH_ITERATIONS):
        m1 = lo + (hi - lo) / 3.0
        m2 = hi - (hi - lo) / 3.0
        if _box_signed_distance(p0 + m1 * seg, half) < _box_signed_distance(p0 + m2 * seg, half):
            hi = m2
        else:
            lo = m1
    inner = 0.5 * (lo + hi)
    level = _box_signed_distance(p0 + inner * seg, half) + level_tol
    outer = float(0.0)  # noqa: UP018
    if upper != 0:
        outer = 1.0
    t = outer
    if _box_signed_distance(p0 + outer * seg, half) > level:
        for _ in range(_SEARCH_ITERATIONS):
            mid = 0.5 * (inner + outer)
            if _box_signed_distance(p0 + mid * seg, half) <= level:
                inner = mid
            else:
                outer = mid
        t = inner
    # Near a smooth minimum the signed distance is flat to float32 precision, which leaves the point off by about
    # sqrt(tolerance). Alternating projections (segment point -> closest box point -> closest segment point) pull
    # it onto the true closest point; along a flat stretch, or inside the box, they leave t where it is.
    for _ in range(2):
        seg_point = p0 + t * seg
        box_point = wp.vec3(
            wp.clamp(seg_point[0], -half[0], half[0]),
            wp.clamp(seg_point[1], -half[1], half[1]),
            wp.clamp(seg_point[2], -half[2], half[2]),
        )
        t = _segment_closest_param(p0, p1, box_point)
    return t


@wp.func
def _capsule_box(
    xform_cap: wp.transform, scale_cap: wp.vec3, xform_box: wp.transform, half: wp.vec3, slot: int, margin: float
):
    """Capsule (shape ``a``) against box (shape ``b``); see the module table for the slot layout."""
    c0 = _capsule_ends(xform_cap, scale_cap[1], 0)
    c1 = _capsule_ends(xform_cap, scale_cap[1], 1)
    if slot < 2:
        end = c0
        if slot == 1:
            end = c1
        keep_end = _sphere_box(end, scale_cap[0], xform_box, half, margin)
        if slot == 1 and scale_cap[1] <= _LENGTH_EPS:
            keep_end.valid = 0  # both ends coincide
        return keep_end
    inv = wp.transform_inverse(xform_box)
    l0 = wp.transform_point(inv, c0)
    l1 = wp.transform_point(inv, c1)
    t_up = _deepest_segment_param(l0, l1, half, 1)
    t = t_up
    keep = 1
    if slot == 3:
        t = _deepest_segment_param(l0, l1, half, 0)
        if wp.abs(t - t_up) <= _SEGMENT_PARAM_TOL:
            keep = 0
    if t <= _SEGMENT_PARAM_TOL or t >= 1.0 - _SEGMENT_PARAM_TOL:
        keep = 0
    c = _sphere_box(c0 + t * (c1 - c0), scale_cap[0], xform_box, half, margin)
    if keep == 0:
        c.valid = 0
    return c


@wp.func
def _capsule_capsule(
    xform_a: wp.transform, scale_a: wp.vec3, xform_b: wp.transform, scale_b: wp.vec3, slot: int, margin: float
):
    """Capsule against capsule; see the module table for the slot layout."""
    a0 = _capsule_ends(xform_a, scale_a[1], 0)
    a1 = _capsule_ends(xform_a, scale_a[1], 1)
    b0 = _capsule_ends(xform_b, scale_b[1], 0)
    b1 = _capsule_ends(xform_b, scale_b[1], 1)
    ra = scale_a[0]
    rb = scale_b[0]
    if slot == 0:
        st = _segment_segment_params(a0, a1, b0, b1)
        s = st[0]
        t = st[1]
        c = _sphere_sphere(a0 + s * (a1 - a0), ra, b0 + t * (b1 - b0), rb, margin)
        # A clamped parameter means an end of a segment, which slots 1-4 already report.
        lo = _END_PARAM_TOL
        hi = 1.0 - _END_PARAM_TOL
        if not (s > lo and s < hi and t > lo and t < hi):
            c.valid = 0
        return c
    if slot <= 2:
        end = a0
        if slot == 2:
            end = a1
        t = _segment_closest_param(b0, b1, end)
        c = _sphere_sphere(end, ra, b0 + t * (b1 - b0), rb, margin)
        if slot == 2 and scale_a[1] <= _LENGTH_EPS:
            c.valid = 0  # both ends of a coincide
        return c
    end_b = b0
    end_index = 0.0
    if slot == 4:
        end_b = b1
        end_index = 1.0
    s = _segment_closest_param(a0, a1, end_b)
    c = _sphere_sphere(a0 + s * (a1 - a0), ra, end_b, rb, margin)
    if slot == 4 and scale_b[1] <= _LENGTH_EPS:
        c.valid = 0  # both ends of b coincide
    # An end of b whose closest point is an end of a, which in turn sees this very end of b, repeats slot 1 or 2.
    if s <= _END_PARAM_TOL or s >= 1.0 - _END_PARAM_TOL:
        end_a = a0
        if s >= 0.5:
            end_a = a1
        if wp.abs(_segment_closest_param(b0, b1, end_a) - end_index) <= _END_PARAM_TOL:
            c.valid = 0
    return c
