"""Narrow phase: the contact record, the tolerances and the small geometric helpers every shape pair uses.

Conventions (normal from ``a`` to ``b``, separation, validity against the margin) are in
``newton_tendon.kernels.collide``.
"""

import warp as wp

wp.set_module_options({"enable_backward": False})

# Lengths (and squared lengths) below these are treated as zero.
_LENGTH_EPS = wp.constant(1.0e-9)
_LENGTH_SQ_EPS = wp.constant(1.0e-18)
# Two directions whose cross product is shorter than this (sine of their angle) count as parallel.
_PARALLEL_SIN = wp.constant(1.0e-6)
# Segments whose squared sine of the angle between them falls below this are handled as parallel.
_PARALLEL_SIN_SQ = wp.constant(1.0e-5)
# Linear tolerance relative to the shape sizes: box-box inclusion and duplicate tests (summed half extents of both
# boxes) and the capsule-box "nearly deepest" level (half extents plus segment length).
_BOX_TOL_REL = wp.constant(1.0e-5)
# An edge-cross axis replaces the best face axis only when its separation is larger by this fraction of the
# face penetration (plus the linear tolerance); this keeps resting contacts in the more stable face mode.
_EDGE_AXIS_BIAS = wp.constant(0.05)
# Fixed iteration count of the ternary search and of the bisection used for capsule-box.
_SEARCH_ITERATIONS = wp.constant(40)
# Parametric tolerance under which two capsule-box search results (or a result and a segment end) coincide.
_SEGMENT_PARAM_TOL = wp.constant(1.0e-3)
# Parametric tolerance under which a capsule-capsule closest point counts as a segment end (duplicate removal).
_END_PARAM_TOL = wp.constant(1.0e-5)
# Separation stored in slots that are never computed.
_NO_CONTACT_SEPARATION = wp.constant(1.0e10)


@wp.struct
class ContactPoint:
    """One contact candidate between shapes ``a`` and ``b``.

    Attributes:
        valid: 1 when the slot produced a contact with ``separation < margin``, else 0.
        point_a: World point on the surface of shape ``a``.
        point_b: World point on the surface of shape ``b``.
        normal: Unit world normal from ``a`` to ``b`` (the direction ``b`` must move to separate).
        separation: ``dot(point_b - point_a, normal)``; negative when overlapping.
    """

    valid: int
    point_a: wp.vec3
    point_b: wp.vec3
    normal: wp.vec3
    separation: float


@wp.func
def _empty_contact() -> ContactPoint:
    """Returns an invalid contact with finite placeholder fields."""
    c = ContactPoint()
    c.valid = 0
    c.point_a = wp.vec3(0.0)
    c.point_b = wp.vec3(0.0)
    c.normal = wp.vec3(0.0, 0.0, 1.0)
    c.separation = _NO_CONTACT_SEPARATION
    return c


@wp.func
def _make_contact(point_a: wp.vec3, point_b: wp.vec3, normal: wp.vec3, keep: int, margin: float) -> ContactPoint:
    """Builds a contact record; it is valid when ``keep`` is nonzero and the separation is below ``margin``.

    Args:
        point_a: World point on shape ``a``.
        point_b: World point on shape ``b``.
        normal: Unit normal from ``a`` to ``b``.
        keep: 0 to force the slot invalid (for example a point outside a face), 1 otherwise.
        margin: Contact margin.

    Returns:
        The contact record.
    """
    c = ContactPoint()
    c.point_a = point_a
    c.point_b = point_b
    c.normal = normal
    c.separation = wp.dot(point_b - point_a, normal)
    c.valid = 0
    if keep != 0 and c.separation < margin:
        c.valid = 1
    return c


@wp.func
def _normalize_or(v: wp.vec3, fallback: wp.vec3) -> wp.vec3:
    """Returns ``v`` scaled to unit length, or ``fallback`` when ``v`` is (nearly) zero."""
    length = wp.length(v)
    if length > _LENGTH_EPS:
        return v / length
    return fallback


@wp.func
def _sign(x: float) -> float:
    """Returns 1 for ``x >= 0`` and -1 otherwise (never 0, so support points are always corners)."""
    if x >= 0.0:
        return 1.0
    return -1.0


@wp.func
def _unit_axis(i: int) -> wp.vec3:
    """Returns the i-th canonical basis vector."""
    if i == 0:
        return wp.vec3(1.0, 0.0, 0.0)
    if i == 1:
        return wp.vec3(0.0, 1.0, 0.0)
    return wp.vec3(0.0, 0.0, 1.0)


@wp.func
def _column(m: wp.mat33, i: int) -> wp.vec3:
    """Returns column ``i`` of ``m`` (the i-th local axis when ``m`` is a rotation)."""
    return wp.vec3(m[0, i], m[1, i], m[2, i])


@wp.func
def _segment_closest_param(p0: wp.vec3, p1: wp.vec3, x: wp.vec3) -> float:
    """Returns the parameter in [0, 1] of the point of segment ``p0 p1`` closest to ``x`` (0 for a point)."""
    d = p1 - p0
    dd = wp.dot(d, d)
    if dd <= _LENGTH_SQ_EPS:
        return 0.0
    return wp.clamp(wp.dot(x - p0, d) / dd, 0.0, 1.0)


@wp.func
def _segment_segment_params(p0: wp.vec3, p1: wp.vec3, q0: wp.vec3, q1: wp.vec3) -> wp.vec2:
    """Parameters ``(s, t)`` of a closest pair between segments ``p0 p1`` and ``q0 q1``.

    Minimizes ``|p(s) - q(t)|`` over the unit square. Zero-length segments and parallel segments are handled
    (parallel segments take ``s`` from the end of the ``p`` segment that the clamping selects first).

    Args:
        p0: Start of the first segment.
        p1: End of the first segment.
        q0: Start of the second segment.
        q1: End of the second segment.

    Returns:
        ``wp.vec2(s, t)`` with both entries in [0, 1].
    """
    dp = p1 - p0
    dq = q1 - q0
    r = p0 - q0
    aa = wp.dot(dp, dp)
    ee = wp.dot(dq, dq)
    f = wp.dot(dq, r)
    s = 0.0
    t = 0.0
    if aa <= _LENGTH_SQ_EPS and ee <= _LENGTH_SQ_EPS:
        return wp.vec2(s, t)
    if aa <= _LENGTH_SQ_EPS:
        t = wp.clamp(f / ee, 0.0, 1.0)
        return wp.vec2(s, t)
    c = wp.dot(dp, r)
    if ee <= _LENGTH_SQ_EPS:
        s = wp.clamp(-c / aa, 0.0, 1.0)
        return wp.vec2(s, t)
    b = wp.dot(dp, dq)
    denom = aa * ee - b * b
    if denom > _PARALLEL_SIN_SQ * aa * ee:
        s = wp.clamp((b * f - c * ee) / denom, 0.0, 1.0)
    t_num = b * s + f
    if t_num < 0.0:
        t = 0.0
        s = wp.clamp(-c / aa, 0.0, 1.0)
    elif t_num > ee:
        t = 1.0
        s = wp.clamp((b - c) / aa, 0.0, 1.0)
    else:
        t = t_num / ee
    return wp.vec2(s, t)


@wp.func
def _sphere_sphere(center_a: wp.vec3, radius_a: float, center_b: wp.vec3, radius_b: float, margin: float):
    """Contact between two spheres (also used for the swept points of capsules).

    Coincident centres use +Z as the normal.
    """
    n = _normalize_or(center_b - center_a, wp.vec3(0.0, 0.0, 1.0))
    return _make_contact(center_a + radius_a * n, center_b - radius_b * n, n, 1, margin)


@wp.func
def _capsule_ends(xform: wp.transform, half_height: float, end: int) -> wp.vec3:
    """World position of end 0 (local -Z) or end 1 (local +Z) of a capsule's core segment."""
    z = half_height
    if end == 0:
        z = -half_height
    return wp.transform_point(xform, wp.vec3(0.0, 0.0, z))
