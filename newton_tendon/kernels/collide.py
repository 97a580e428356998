"""Narrow-phase contact generation between pairs of primitive shapes.

Every supported shape pair owns a fixed number of contact *slots* (see :func:`pair_contact_capacity`). Slot ``k``
of a pair is evaluated on its own by :func:`collide_slot`, so a launcher can map one thread to one slot and
recompute any quantity shared between slots. A slot that yields no contact reports ``valid == 0``; its other
fields are finite but carry no meaning.

Conventions:
    * Shapes are posed by a world transform (the body pose composed with the shape's local transform).
    * ``scale`` is a ``wp.vec3`` whose meaning depends on the shape type:

      - plane: ``(half_width, half_length, 0)``. The plane passes through the frame origin with normal along the
        local +Z axis. An extent of 0 leaves the plane unbounded along that local axis, so ``(0, 0)`` is an
        infinite plane and two positive extents make a finite rectangle in local XY.
      - sphere: ``x`` is the radius.
      - capsule: ``x`` is the radius, ``y`` the half length of the core segment, which runs along local Z.
      - box: the three half extents.
      - cylinder: ``x`` is the radius, ``y`` the half height; the axis is local Z and the caps are flat.

    * A pair is always given with ``type_a <= type_b``, so a plane is always shape ``a``.
    * ``normal`` is a unit world vector pointing from ``a`` towards ``b``: the direction along which ``b`` has to
      move to separate. ``separation = dot(point_b - point_a, normal)`` is negative when the shapes overlap, and a
      slot is valid only when ``separation < margin``.

Slots per pair (anything else, including plane-plane and every non-plane pair with a cylinder, has 0):

    ================  =====  =====================================================================================
    pair              slots  content
    ================  =====  =====================================================================================
    plane-sphere      1      the sphere point deepest below the plane
    plane-capsule     2      one per end of the core segment
    plane-box         8      one per corner
    plane-cylinder    8      four rim points per cap: the one deepest along ``-normal`` and the ones at 90, 180 and
                             270 degrees from it (any start direction when the cap is parallel to the plane)
    sphere-sphere     1      along the line of centres
    sphere-capsule    1      sphere centre against the closest point of the capsule segment
    sphere-box        1      closest box point; a centre inside the box is pushed out through the nearest face
    capsule-capsule   5      0: closest pair of the two segments (only when interior to both segments, since an
                             end of either segment is covered by the slots below); 1-2: each end of ``a`` against
                             its closest point on ``b``; 3-4: each end of ``b`` against its closest point on ``a``
                             (dropped when it repeats an end-to-end pair of slots 1-2). Parallel capsules therefore
                             get one contact at each end of their overlap.
    capsule-box       4      0-1: each segment end treated as a sphere; 2-3: the upper and lower end of the stretch
                             of the segment that is deepest in the box (smallest signed distance, found by a fixed
                             ternary search plus bisection), so a capsule lying along a face gets both ends of its
                             flat stretch. Slots 2-3 are dropped when they repeat a segment end or each other.
    box-box           25     separating-axis test over the 6 face axes and 9 edge-cross axes. If a face axis gives
                             the least penetration (edge axes must beat it by a small margin), its box is the
                             *reference* and the other box's face most opposed to it is the *incident* face, and
                             slots 0-23 return the corners of the clipped contact polygon: 0-3 incident corners
                             inside the reference face, 4-7 reference corners inside the incident face, 8-23
                             crossings of the 4 incident edges with the 4 reference face edges. Coinciding points
                             are reported once. Otherwise slot 24 returns the closest points of the two support
                             edges along the best edge axis. All face-mode contacts share the face normal.
    ================  =====  =====================================================================================
"""

import warp as wp

from newton_tendon.kernels.types import SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_PLANE, SHAPE_SPHERE

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

_CAPACITY = {
    (int(SHAPE_PLANE), int(SHAPE_SPHERE)): 1,
    (int(SHAPE_PLANE), int(SHAPE_CAPSULE)): 2,
    (int(SHAPE_PLANE), int(SHAPE_BOX)): 8,
    (int(SHAPE_PLANE), int(SHAPE_CYLINDER)): 8,
    (int(SHAPE_SPHERE), int(SHAPE_SPHERE)): 1,
    (int(SHAPE_SPHERE), int(SHAPE_CAPSULE)): 1,
    (int(SHAPE_SPHERE), int(SHAPE_BOX)): 1,
    (int(SHAPE_CAPSULE), int(SHAPE_CAPSULE)): 5,
    (int(SHAPE_CAPSULE), int(SHAPE_BOX)): 4,
    (int(SHAPE_BOX), int(SHAPE_BOX)): 25,
}

MAX_PAIR_CONTACTS = max(_CAPACITY.values())
"""Largest number of slots any pair uses."""


def pair_contact_capacity(type_a: int, type_b: int) -> int:
    """Returns the fixed number of contact slots of a shape pair.

    Args:
        type_a: Shape type of the first shape (``SHAPE_*`` constant), with ``type_a <= type_b``.
        type_b: Shape type of the second shape.

    Returns:
        The slot count, or 0 when the pair is not supported (plane-plane and any non-plane pair with a cylinder).
    """
    return _CAPACITY.get((int(type_a), int(type_b)), 0)


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
def contact_capacity(type_a: int, type_b: int) -> int:
    """Device twin of :func:`pair_contact_capacity`.

    Args:
        type_a: Shape type of the first shape, with ``type_a <= type_b``.
        type_b: Shape type of the second shape.

    Returns:
        Number of contact slots of the pair, 0 when unsupported.
    """
    if type_a == SHAPE_PLANE:
        if type_b == SHAPE_SPHERE:
            return 1
        if type_b == SHAPE_CAPSULE:
            return 2
        if type_b == SHAPE_BOX or type_b == SHAPE_CYLINDER:
            return 8
        return 0
    if type_a == SHAPE_SPHERE:
        if type_b == SHAPE_SPHERE or type_b == SHAPE_CAPSULE or type_b == SHAPE_BOX:
            return 1
        return 0
    if type_a == SHAPE_CAPSULE:
        if type_b == SHAPE_CAPSULE:
            return 5
        if type_b == SHAPE_BOX:
            return 4
        return 0
    if type_a == SHAPE_BOX and type_b == SHAPE_BOX:
        return 25
    return 0


# ---------------------------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------------------------
# Plane pairs
# ---------------------------------------------------------------------------------------------------------------


@wp.func
def _plane_point(xform_plane: wp.transform, scale_plane: wp.vec3, p: wp.vec3, radius: float, margin: float):
    """Contact between a plane and a point swept by ``radius`` (a sphere; radius 0 gives a bare point).

    The point's projection has to lie inside the plane extents along every local axis with a positive extent.
    """
    n = wp.quat_rotate(wp.transform_get_rotation(xform_plane), wp.vec3(0.0, 0.0, 1.0))
    local = wp.transform_point(wp.transform_inverse(xform_plane), p)
    depth = local[2]
    keep = 1
    if scale_plane[0] > 0.0 and wp.abs(local[0]) > scale_plane[0]:
        keep = 0
    if scale_plane[1] > 0.0 and wp.abs(local[1]) > scale_plane[1]:
        keep = 0
    return _make_contact(p - depth * n, p - radius * n, n, keep, margin)


@wp.func
def _plane_cylinder_rim_point(xform_plane: wp.transform, xform_cyl: wp.transform, scale_cyl: wp.vec3, slot: int):
    """World rim point of slot ``slot`` (0-3 on the +Z cap, 4-7 on the -Z cap) of a cylinder against a plane."""
    n = wp.quat_rotate(wp.transform_get_rotation(xform_plane), wp.vec3(0.0, 0.0, 1.0))
    q = wp.transform_get_rotation(xform_cyl)
    axis = wp.quat_rotate(q, wp.vec3(0.0, 0.0, 1.0))
    # Rim direction deepest along -n: the part of -n perpendicular to the axis. When the cap is parallel to the
    # plane every rim point is equally deep, so the cylinder's local X serves as a fixed start direction.
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
    return wp.transform_get_translation(xform_cyl) + cap_z * axis + scale_cyl[0] * offset


# ---------------------------------------------------------------------------------------------------------------
# Sphere / capsule / box pairs
# ---------------------------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------------------------
# Box-box
# ---------------------------------------------------------------------------------------------------------------


@wp.func
def _box_axis_separation(
    axis: wp.vec3, d: wp.vec3, rot_a: wp.mat33, half_a: wp.vec3, rot_b: wp.mat33, half_b: wp.vec3
) -> float:
    """Gap between the projections of two boxes onto a unit axis (negative when they overlap on it)."""
    ra = 0.0
    rb = 0.0
    for k in range(3):
        ra += half_a[k] * wp.abs(wp.dot(_column(rot_a, k), axis))
        rb += half_b[k] * wp.abs(wp.dot(_column(rot_b, k), axis))
    return wp.abs(wp.dot(d, axis)) - ra - rb


@wp.func
def _face_corner(center: wp.vec3, u1: wp.vec3, e1: float, u2: wp.vec3, e2: float, k: int) -> wp.vec3:
    """Corner ``k`` (0-3, counter-clockwise in the (u1, u2) plane) of a rectangle."""
    s1 = 1.0
    s2 = 1.0
    if k == 1 or k == 2:
        s1 = -1.0
    if k >= 2:
        s2 = -1.0
    return center + s1 * e1 * u1 + s2 * e2 * u2


@wp.func
def _box_box(xform_a: wp.transform, half_a: wp.vec3, xform_b: wp.transform, half_b: wp.vec3, slot: int, margin: float):
    """Box against box; see the module table for the slot layout."""
    rot_a = wp.quat_to_matrix(wp.transform_get_rotation(xform_a))
    rot_b = wp.quat_to_matrix(wp.transform_get_rotation(xform_b))
    ca = wp.transform_get_translation(xform_a)
    cb = wp.transform_get_translation(xform_b)
    d = cb - ca
    size = half_a[0] + half_a[1] + half_a[2] + half_b[0] + half_b[1] + half_b[2]
    tol = _BOX_TOL_REL * size + _LENGTH_EPS

    # Face axes: 0-2 belong to a, 3-5 to b. b's faces must beat a's by tol, so parallel faces pick a stably.
    best_face_sep = -1.0e30
    best_face = 0
    for i in range(6):
        axis = _column(rot_a, i % 3)
        bias = 0.0
        if i >= 3:
            axis = _column(rot_b, i - 3)
            bias = tol
        s = _box_axis_separation(axis, d, rot_a, half_a, rot_b, half_b)
        if i == 0 or s > best_face_sep + bias:
            best_face_sep = s
            best_face = i

    # Edge-cross axes; (nearly) parallel edge pairs give no axis.
    best_edge_sep = -1.0e30
    best_edge = -1
    for e in range(9):
        cross = wp.cross(_column(rot_a, e // 3), _column(rot_b, e % 3))
        length = wp.length(cross)
        if length > _PARALLEL_SIN:
            s = _box_axis_separation(cross / length, d, rot_a, half_a, rot_b, half_b)
            if s > best_edge_sep:
                best_edge_sep = s
                best_edge = e

    empty = _empty_contact()
    if wp.max(best_face_sep, best_edge_sep) > margin:
        return empty  # a separating axis with a gap above the margin: no contact at all
    edge_mode = best_edge >= 0 and best_edge_sep > best_face_sep + _EDGE_AXIS_BIAS * wp.abs(best_face_sep) + tol

    if slot == 24:
        if not edge_mode:
            return empty
        ia = best_edge // 3
        ib = best_edge % 3
        dir_a = _column(rot_a, ia)
        dir_b = _column(rot_b, ib)
        n = wp.normalize(wp.cross(dir_a, dir_b))
        if wp.dot(n, d) < 0.0:
            n = -n
        # Support edge of a along +n and of b along -n.
        mid_a = ca
        mid_b = cb
        for k in range(3):
            if k != ia:
                col = _column(rot_a, k)
                mid_a = mid_a + _sign(wp.dot(col, n)) * half_a[k] * col
            if k != ib:
                col = _column(rot_b, k)
                mid_b = mid_b - _sign(wp.dot(col, n)) * half_b[k] * col
        st = _segment_segment_params(
            mid_a - half_a[ia] * dir_a,
            mid_a + half_a[ia] * dir_a,
            mid_b - half_b[ib] * dir_b,
            mid_b + half_b[ib] * dir_b,
        )
        pa = mid_a + (2.0 * st[0] - 1.0) * half_a[ia] * dir_a
        pb = mid_b + (2.0 * st[1] - 1.0) * half_b[ib] * dir_b
        return _make_contact(pa, pb, n, 1, margin)
    if edge_mode:
        return empty

    # Face mode. n points from a to b; m is the outward normal of the reference face (towards the other box).
    ref_is_a = best_face < 3
    fi = best_face % 3
    rot_r = rot_a
    rot_i = rot_b
    c_r = ca
    c_i = cb
    half_r = half_a
    half_i = half_b
    if not ref_is_a:
        rot_r = rot_b
        rot_i = rot_a
        c_r = cb
        c_i = ca
        half_r = half_b
        half_i = half_a
    n = _column(rot_r, fi)
    if wp.dot(n, d) < 0.0:
        n = -n
    m = n
    if not ref_is_a:
        m = -n
    face_center = c_r + half_r[fi] * m
    t1 = _column(rot_r, (fi + 1) % 3)
    t2 = _column(rot_r, (fi + 2) % 3)
    e1 = half_r[(fi + 1) % 3]
    e2 = half_r[(fi + 2) % 3]

    # Incident face: the face of the other box whose outward normal is most opposed to m.
    ki = 0
    best_dot = -1.0
    for k in range(3):
        dk = wp.abs(wp.dot(_column(rot_i, k), m))
        if dk > best_dot:
            best_dot = dk
            ki = k
    axis_i = _column(rot_i, ki)
    kn = -_sign(wp.dot(axis_i, m)) * axis_i
    inc_center = c_i + half_i[ki] * kn
    u1 = _column(rot_i, (ki + 1) % 3)
    u2 = _column(rot_i, (ki + 2) % 3)
    g1 = half_i[(ki + 1) % 3]
    g2 = half_i[(ki + 2) % 3]

    keep = 1
    p_inc = wp.vec3(0.0)
    p_ref = wp.vec3(0.0)
    if slot < 4:
        # Incident corner inside the reference face (boundary included).
        p_inc = _face_corner(inc_center, u1, g1, u2, g2, slot)
        rel = p_inc - face_center
        if wp.abs(wp.dot(rel, t1)) > e1 + tol or wp.abs(wp.dot(rel, t2)) > e2 + tol:
            keep = 0
        p_ref = p_inc - wp.dot(rel, m) * m
    elif slot < 8:
        # Reference corner, cast along -m onto the incident face plane (|dot(m, kn)| >= 1/sqrt(3)).
        p_ref = _face_corner(face_center, t1, e1, t2, e2, slot - 4)
        tau = wp.dot(p_ref - inc_center, kn) / wp.dot(m, kn)
        p_inc = p_ref - tau * m
        rel = p_inc - inc_center
        w1 = wp.abs(wp.dot(rel, u1))
        w2 = wp.abs(wp.dot(rel, u2))
        if w1 > g1 + 2.0 * tol or w2 > g2 + 2.0 * tol:
            keep = 0
        if w1 >= g1 - tol and w2 >= g2 - tol:
            keep = 0  # coincides with an incident corner, reported by slots 0-3
    else:
        # Incident edge j crossing the line of reference edge r, strictly between the corners of both.
        r = (slot - 8) // 4
        j = (slot - 8) % 4
        q0 = _face_corner(inc_center, u1, g1, u2, g2, j)
        q1 = _face_corner(inc_center, u1, g1, u2, g2, (j + 1) % 4)
        across = t1  # coordinate fixed on the reference edge line
        along = t2  # coordinate running along it
        line = e1
        bound = e2
        if r >= 2:
            across = t2
            along = t1
            line = e2
            bound = e1
        if r % 2 == 1:
            line = -line
        x0 = wp.dot(q0 - face_center, across)
        x1 = wp.dot(q1 - face_center, across)
        y0 = wp.dot(q0 - face_center, along)
        y1 = wp.dot(q1 - face_center, along)
        len_2d = wp.sqrt((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0))
        dx = x1 - x0
        t = 0.0
        if wp.abs(dx) <= _PARALLEL_SIN * len_2d or len_2d <= _LENGTH_EPS:
            keep = 0
        else:
            t = wp.clamp((line - x0) / dx, -1.0, 2.0)
            if t * len_2d <= tol or (1.0 - t) * len_2d <= tol:
                keep = 0  # outside the incident edge or on one of its corners
            if wp.abs(y0 + t * (y1 - y0)) >= bound - tol:
                keep = 0  # outside the reference edge or on one of its corners
        p_inc = q0 + t * (q1 - q0)
        p_ref = p_inc - wp.dot(p_inc - face_center, m) * m
    if ref_is_a:
        return _make_contact(p_ref, p_inc, n, keep, margin)
    return _make_contact(p_inc, p_ref, n, keep, margin)


# ---------------------------------------------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------------------------------------------


@wp.func
def collide_slot(
    type_a: int,
    xform_a: wp.transform,
    scale_a: wp.vec3,
    type_b: int,
    xform_b: wp.transform,
    scale_b: wp.vec3,
    slot: int,
    margin: float,
) -> ContactPoint:
    """Evaluates contact slot ``slot`` of the shape pair ``(a, b)``.

    Args:
        type_a: Shape type of ``a`` (``type_a <= type_b``).
        xform_a: World transform of ``a``.
        scale_a: Type-dependent size of ``a`` (see the module docstring).
        type_b: Shape type of ``b``.
        xform_b: World transform of ``b``.
        scale_b: Type-dependent size of ``b``.
        slot: Slot index in ``[0, contact_capacity(type_a, type_b))``.
        margin: Contact margin (>= 0); a slot is valid only when its separation is below it.

    Returns:
        The contact; ``valid`` is 0 for unsupported pairs, out-of-range slots and slots without contact.
    """
    if slot < 0 or slot >= contact_capacity(type_a, type_b):
        return _empty_contact()
    if type_a == SHAPE_PLANE:
        if type_b == SHAPE_SPHERE:
            return _plane_point(xform_a, scale_a, wp.transform_get_translation(xform_b), scale_b[0], margin)
        if type_b == SHAPE_CAPSULE:
            c = _plane_point(xform_a, scale_a, _capsule_ends(xform_b, scale_b[1], slot), scale_b[0], margin)
            if slot == 1 and scale_b[1] <= _LENGTH_EPS:
                c.valid = 0  # both ends coincide
            return c
        if type_b == SHAPE_BOX:
            corner = wp.vec3(
                (1.0 - 2.0 * float(slot & 1)) * scale_b[0],
                (1.0 - 2.0 * float((slot >> 1) & 1)) * scale_b[1],
                (1.0 - 2.0 * float((slot >> 2) & 1)) * scale_b[2],
            )
            return _plane_point(xform_a, scale_a, wp.transform_point(xform_b, corner), 0.0, margin)
        # Cylinder (the only remaining supported partner of a plane).
        rim = _plane_cylinder_rim_point(xform_a, xform_b, scale_b, slot)
        return _plane_point(xform_a, scale_a, rim, 0.0, margin)
    if type_a == SHAPE_SPHERE:
        center = wp.transform_get_translation(xform_a)
        if type_b == SHAPE_SPHERE:
            return _sphere_sphere(center, scale_a[0], wp.transform_get_translation(xform_b), scale_b[0], margin)
        if type_b == SHAPE_CAPSULE:
            b0 = _capsule_ends(xform_b, scale_b[1], 0)
            b1 = _capsule_ends(xform_b, scale_b[1], 1)
            t = _segment_closest_param(b0, b1, center)
            return _sphere_sphere(center, scale_a[0], b0 + t * (b1 - b0), scale_b[0], margin)
        return _sphere_box(center, scale_a[0], xform_b, scale_b, margin)
    if type_a == SHAPE_CAPSULE:
        if type_b == SHAPE_CAPSULE:
            return _capsule_capsule(xform_a, scale_a, xform_b, scale_b, slot, margin)
        return _capsule_box(xform_a, scale_a, xform_b, scale_b, slot, margin)
    return _box_box(xform_a, scale_a, xform_b, scale_b, slot, margin)


@wp.kernel
def collide_slots_test_kernel(
    type_a: wp.array(dtype=int),
    xform_a: wp.array(dtype=wp.transform),
    scale_a: wp.array(dtype=wp.vec3),
    type_b: wp.array(dtype=int),
    xform_b: wp.array(dtype=wp.transform),
    scale_b: wp.array(dtype=wp.vec3),
    slot: wp.array(dtype=int),
    margin: float,
    valid: wp.array(dtype=int),
    point_a: wp.array(dtype=wp.vec3),
    point_b: wp.array(dtype=wp.vec3),
    normal: wp.array(dtype=wp.vec3),
    separation: wp.array(dtype=float),
    capacity: wp.array(dtype=int),
):
    """Evaluates one (pair, slot) query per thread; used by the tests."""
    tid = wp.tid()
    c = collide_slot(
        type_a[tid], xform_a[tid], scale_a[tid], type_b[tid], xform_b[tid], scale_b[tid], slot[tid], margin
    )
    valid[tid] = c.valid
    point_a[tid] = c.point_a
    point_b[tid] = c.point_b
    normal[tid] = c.normal
    separation[tid] = c.separation
    capacity[tid] = contact_capacity(type_a[tid], type_b[tid])
