"""Narrow phase for ellipsoids: support mappings and a portal-refinement penetration query.

An ellipsoid has no closed-form distance to a box, a cylinder or another ellipsoid, so its pairs go
through the shapes' support mappings. ``support(d)`` is the point of a shape farthest along ``d``;
every convex primitive here has one in closed form (local frame, ``s`` = the shape's ``scale``):

    sphere    r d/|d|
    capsule   (0, 0, sgn(d_z) h) + r d/|d|
    box       (sgn(d_x) s_x, sgn(d_y) s_y, sgn(d_z) s_z)
    cylinder  r (d_x, d_y, 0)/|(d_x, d_y)| + (0, 0, sgn(d_z) h)
    ellipsoid S^2 d / |S d|,  S = diag(a, b, c)

(the ellipsoid's: maximise d.x on x^T S^-2 x = 1; Lagrange gives x = S^2 d / |S d|).

Two shapes ``a`` and ``b`` overlap exactly when the origin lies in the Minkowski difference
M = B - A, whose support is ``support_b(d) - support_a(-d)``. The query below is Minkowski portal
refinement (Snethen's XenoCollide, as also used by libccd): it finds a triangle ("portal") on the
boundary of M that the ray from an interior point ``v0 = c_b - c_a`` through the origin crosses,
then refines it with new support points until the boundary is flat to a tolerance. At that point
the portal's outward unit normal ``n`` and its plane distance ``depth = n . v1`` give

    normal (a to b) = -n,     separation = -depth,

and the contact points on ``a`` and ``b`` are the portal corners' support points weighted by the
barycentric coordinates of the origin's projection. For strictly convex shapes (an ellipsoid
against anything) the contact region is one point, so one slot per pair is the whole contact.

The contact margin enters by inflating M by a ball of radius ``margin`` (adding ``margin d/|d|`` to
its support): the inflated shapes overlap exactly when the true separation is below the margin,
and the returned points and separation are those of the uninflated shapes.
"""

import warp as wp

from newton_tendon.kernels.collide_common import (
    _LENGTH_EPS,
    ContactPoint,
    _empty_contact,
    _make_contact,
    _normalize_or,
    _sign,
)
from newton_tendon.kernels.types import (
    SHAPE_BOX,
    SHAPE_CAPSULE,
    SHAPE_CYLINDER,
    SHAPE_ELLIPSOID,
    SHAPE_MESH,
    SHAPE_SPHERE,
)

wp.set_module_options({"enable_backward": False})

# Iteration caps of the two portal phases (the refinement converges linearly; smooth shapes reach the
# tolerance in 10-25 iterations, polytopes in a few).
_PORTAL_FIND_ITERATIONS = wp.constant(32)
_PORTAL_REFINE_ITERATIONS = wp.constant(48)
# Sine of the angle under which the first support point counts as lying on the ray v0 -> origin (float32
# round-off of the cross product is ~1e-7; below ~1e-5 the portal built on it is degenerate).
_RAY_SIN = wp.constant(1.0e-5)
# Re-centred refinement passes after the first (see convex_convex).
_RECENTRE_PASSES = wp.constant(3)
# Refinement stops when a new support point lies within this fraction of the shapes' size of the portal
# plane (float32: a few ulps of the coordinates).
_PORTAL_TOL_REL = wp.constant(2.0e-6)


@wp.func
def mesh_support_local(points: wp.array(dtype=wp.vec3), mesh: wp.vec2i, d: wp.vec3) -> wp.vec3:
    """The vertex of ``points[mesh[0] : mesh[0] + mesh[1]]`` farthest along ``d``: the support point of
    the mesh's convex hull (a linear function is maximised over a polytope at a vertex), in O(V)."""
    best = points[mesh[0]]
    best_dot = wp.dot(best, d)
    for k in range(1, mesh[1]):
        p = points[mesh[0] + k]
        v = wp.dot(p, d)
        if v > best_dot:
            best = p
            best_dot = v
    return best


@wp.func
def support_local(
    shape_type: int, scale: wp.vec3, d: wp.vec3, points: wp.array(dtype=wp.vec3), mesh: wp.vec2i
) -> wp.vec3:
    """Point of a convex primitive (in its own frame) farthest along ``d`` (table in the module docstring).

    Args:
        shape_type: ``SHAPE_SPHERE``, ``SHAPE_CAPSULE``, ``SHAPE_BOX``, ``SHAPE_CYLINDER``,
            ``SHAPE_MESH`` or ``SHAPE_ELLIPSOID`` (any other value is treated as an ellipsoid).
        scale: The shape's size vector (``newton_tendon.kernels.collide``).
        d: Direction in the shape frame; need not be unit. A zero direction gives a valid surface point.
        points: Every mesh shape's vertices (shape frame), concatenated.
        mesh: (first vertex, vertex count) of this shape in ``points`` (a mesh only).

    Returns:
        The support point [m], shape frame.
    """
    ez = wp.vec3(0.0, 0.0, 1.0)
    if shape_type == SHAPE_MESH:
        return mesh_support_local(points, mesh, d)
    if shape_type == SHAPE_SPHERE:
        return scale[0] * _normalize_or(d, ez)
    if shape_type == SHAPE_CAPSULE:
        return wp.vec3(0.0, 0.0, _sign(d[2]) * scale[1]) + scale[0] * _normalize_or(d, ez)
    if shape_type == SHAPE_BOX:
        return wp.vec3(_sign(d[0]) * scale[0], _sign(d[1]) * scale[1], _sign(d[2]) * scale[2])
    if shape_type == SHAPE_CYLINDER:
        rho = wp.sqrt(d[0] * d[0] + d[1] * d[1])
        radial = wp.vec3(0.0)
        if rho > _LENGTH_EPS:
            radial = wp.vec3(d[0], d[1], 0.0) * (scale[0] / rho)
        return radial + wp.vec3(0.0, 0.0, _sign(d[2]) * scale[1])
    # Ellipsoid: S^2 d / |S d|.
    sd = wp.cw_mul(scale, d)
    length = wp.length(sd)
    if length <= _LENGTH_EPS * wp.max(scale[0], wp.max(scale[1], scale[2])):
        return wp.vec3(0.0, 0.0, scale[2])
    return wp.cw_mul(scale, sd) / length


@wp.func
def support_world(
    shape_type: int,
    xform: wp.transform,
    scale: wp.vec3,
    d: wp.vec3,
    points: wp.array(dtype=wp.vec3),
    mesh: wp.vec2i,
) -> wp.vec3:
    """World support point of a posed convex shape along the world direction ``d``."""
    q = wp.transform_get_rotation(xform)
    return wp.transform_point(xform, support_local(shape_type, scale, wp.quat_rotate_inv(q, d), points, mesh))


@wp.func
def shape_size(shape_type: int, scale: wp.vec3) -> float:
    """A length of the order of the shape's size (its bounding radius up to a factor < 2) [m]."""
    if shape_type == SHAPE_SPHERE:
        return scale[0]
    if shape_type == SHAPE_CAPSULE or shape_type == SHAPE_CYLINDER:
        return scale[0] + scale[1]
    return wp.length(scale)


@wp.struct
class _Vertex:
    """A vertex of the Minkowski difference: ``m = b - a + margin * unit(d)`` and its two support points."""

    m: wp.vec3
    a: wp.vec3
    b: wp.vec3


@wp.func
def _mvertex(
    type_a: int,
    xform_a: wp.transform,
    scale_a: wp.vec3,
    type_b: int,
    xform_b: wp.transform,
    scale_b: wp.vec3,
    points: wp.array(dtype=wp.vec3),
    mesh_a: wp.vec2i,
    mesh_b: wp.vec2i,
    d: wp.vec3,
    margin: float,
) -> _Vertex:
    """Support of the margin-inflated Minkowski difference ``B - A`` along ``d``."""
    v = _Vertex()
    v.a = support_world(type_a, xform_a, scale_a, -d, points, mesh_a)
    v.b = support_world(type_b, xform_b, scale_b, d, points, mesh_b)
    v.m = v.b - v.a + margin * _normalize_or(d, wp.vec3(0.0, 0.0, 1.0))
    return v


@wp.func
def _portal_contact(v1: _Vertex, v2: _Vertex, v3: _Vertex, n: wp.vec3, margin: float) -> ContactPoint:
    """Contact from a converged portal with outward unit normal ``n``: the origin's projection onto the
    portal plane, in barycentric coordinates of the corners (clamped to the triangle), weights the
    corners' support points."""
    p = wp.dot(n, v1.m) * n
    w1 = wp.dot(wp.cross(v2.m - p, v3.m - p), n)
    w2 = wp.dot(wp.cross(v3.m - p, v1.m - p), n)
    w3 = wp.dot(wp.cross(v1.m - p, v2.m - p), n)
    w1 = wp.max(w1, 0.0)
    w2 = wp.max(w2, 0.0)
    w3 = wp.max(w3, 0.0)
    total = w1 + w2 + w3
    if total <= 0.0:
        w1 = 1.0
        w2 = 1.0
        w3 = 1.0
        total = 3.0
    pa = (w1 * v1.a + w2 * v2.a + w3 * v3.a) / total
    pb = (w1 * v1.b + w2 * v2.b + w3 * v3.b) / total
    return _make_contact(pa, pb, -n, 1, margin)


@wp.struct
class _Portal:
    """Result of one portal refinement: ``hit`` 1 when the origin is inside the inflated difference;
    then the portal corners and its outward unit normal ``n``."""

    hit: int
    v1: _Vertex
    v2: _Vertex
    v3: _Vertex
    n: wp.vec3


@wp.func
def _no_portal(v: _Vertex) -> _Portal:
    p = _Portal()
    p.hit = 0
    p.v1 = v
    p.v2 = v
    p.v3 = v
    p.n = wp.vec3(0.0, 0.0, 1.0)
    return p


@wp.func
def _refine_portal(
    type_a: int,
    xform_a: wp.transform,
    scale_a: wp.vec3,
    type_b: int,
    xform_b: wp.transform,
    scale_b: wp.vec3,
    points: wp.array(dtype=wp.vec3),
    mesh_a: wp.vec2i,
    mesh_b: wp.vec2i,
    v0: wp.vec3,
    margin: float,
    tol: float,
) -> _Portal:
    """Portal refinement along the ray from the interior point ``v0`` through the origin."""
    # First portal corner: the support towards the origin.
    d = -v0
    v1 = _mvertex(type_a, xform_a, scale_a, type_b, xform_b, scale_b, points, mesh_a, mesh_b, d, margin)
    if wp.dot(v1.m, d) <= 0.0:
        return _no_portal(v1)  # the origin is beyond M's support plane: separated
    d = wp.cross(v1.m, v0)
    if wp.length(d) <= _RAY_SIN * wp.length(v1.m) * wp.length(v0):
        # The origin lies on the segment v0 v1 (to float32 round-off; always for two spheres): v1 is the
        # boundary point on the ray, with the support direction -v0 as its normal (exact when v1 is on
        # the ray; an angle e off it tilts the normal by O(e) and the depth by O(e^2)).
        p = _no_portal(v1)
        p.hit = 1
        p.n = _normalize_or(-v0, wp.vec3(0.0, 0.0, 1.0))
        return p
    v2 = _mvertex(type_a, xform_a, scale_a, type_b, xform_b, scale_b, points, mesh_a, mesh_b, d, margin)
    if wp.dot(v2.m, d) <= 0.0:
        return _no_portal(v1)
    # Orient the plane (v0, v1, v2) so that the origin is on the side its normal points to.
    d = wp.cross(v1.m - v0, v2.m - v0)
    if wp.dot(d, v0) > 0.0:
        swap = v1
        v1 = v2
        v2 = swap
        d = -d
    # Phase 1: grow a tetrahedron (v0, v1, v2, v3) whose side faces enclose the ray v0 -> origin.
    v3 = v1
    found = int(0)
    for _it in range(_PORTAL_FIND_ITERATIONS):
        v3 = _mvertex(type_a, xform_a, scale_a, type_b, xform_b, scale_b, points, mesh_a, mesh_b, d, margin)
        if wp.dot(v3.m, d) <= 0.0:
            return _no_portal(v1)
        if wp.dot(wp.cross(v1.m, v3.m), v0) < 0.0:
            v2 = v3  # the origin is outside face (v0, v1, v3): drop v2
            d = wp.cross(v1.m - v0, v3.m - v0)
        elif wp.dot(wp.cross(v3.m, v2.m), v0) < 0.0:
            v1 = v3  # outside face (v0, v3, v2): drop v1
            d = wp.cross(v3.m - v0, v2.m - v0)
        else:
            found = 1
            break
    if found == 0:
        return _no_portal(v1)
    # Phase 2: move the portal (v1, v2, v3) out to M's boundary along the ray.
    n = _normalize_or(wp.cross(v2.m - v1.m, v3.m - v1.m), _normalize_or(-v0, wp.vec3(0.0, 0.0, 1.0)))
    for _it in range(_PORTAL_REFINE_ITERATIONS):
        n = _normalize_or(wp.cross(v2.m - v1.m, v3.m - v1.m), n)
        v4 = _mvertex(type_a, xform_a, scale_a, type_b, xform_b, scale_b, points, mesh_a, mesh_b, n, margin)
        if wp.dot(v4.m, n) < 0.0:
            return _no_portal(v1)  # a support plane separates the origin from M
        if wp.dot(v4.m - v1.m, n) <= tol:
            break
        # Replace the corner that keeps the ray inside the new portal (v4 splits the wedge in three).
        if wp.dot(wp.cross(v4.m, v1.m), v0) < 0.0:
            if wp.dot(wp.cross(v4.m, v2.m), v0) < 0.0:
                v1 = v4
            else:
                v3 = v4
        else:
            if wp.dot(wp.cross(v4.m, v3.m), v0) < 0.0:
                v2 = v4
            else:
                v1 = v4
    p = _Portal()
    p.hit = int(wp.dot(n, v1.m) >= 0.0)
    p.v1 = v1
    p.v2 = v2
    p.v3 = v3
    p.n = n
    return p


@wp.func
def convex_convex(
    type_a: int,
    xform_a: wp.transform,
    scale_a: wp.vec3,
    type_b: int,
    xform_b: wp.transform,
    scale_b: wp.vec3,
    points: wp.array(dtype=wp.vec3),
    mesh_a: wp.vec2i,
    mesh_b: wp.vec2i,
    margin: float,
) -> ContactPoint:
    """Penetration contact of two posed convex primitives by Minkowski portal refinement.

    One refinement along the line of centres finds where that ray leaves M, which is the contact only
    when the ray is normal to M's boundary there. Each further pass starts inside M just behind the
    origin along the last normal (``v0 = -depth/2 n``), so its ray runs along that normal; at the fixed
    point the ray is normal to the boundary, which is the condition for the closest boundary point.
    ``_RECENTRE_PASSES`` such passes bring the shallow contacts of simulation (depth a few percent of
    the size) to within float32 round-off of the exact depth and normal (tests/rigid/test_ellipsoid.py).

    Args:
        type_a, xform_a, scale_a: Shape ``a`` (any type with a :func:`support_local`).
        type_b, xform_b, scale_b: Shape ``b``.
        points, mesh_a, mesh_b: Mesh vertices and the ranges of ``a`` and ``b`` in them (meshes only).
        margin: Contact margin (>= 0): the contact is valid when the separation is below it.

    Returns:
        One contact (normal from ``a`` to ``b``, ``separation = dot(point_b - point_a, normal)``), or an
        invalid record when the shapes are farther apart than ``margin``.
    """
    tol = _PORTAL_TOL_REL * (shape_size(type_a, scale_a) + shape_size(type_b, scale_b)) + 1.0e-9
    # v0: a point inside M (the difference of the centres); nudged off the origin when they coincide.
    v0 = wp.transform_get_translation(xform_b) - wp.transform_get_translation(xform_a)
    if wp.length(v0) <= tol:
        v0 = wp.vec3(tol, 0.0, 0.0)
    p = _refine_portal(type_a, xform_a, scale_a, type_b, xform_b, scale_b, points, mesh_a, mesh_b, v0, margin, tol)
    if p.hit == 0:
        return _empty_contact()
    for _pass in range(_RECENTRE_PASSES):
        depth = wp.dot(p.n, p.v1.m)
        if depth <= 2.0 * tol:
            break  # touching: the ray direction no longer matters
        q = _refine_portal(
            type_a, xform_a, scale_a, type_b, xform_b, scale_b, points, mesh_a, mesh_b, -0.5 * depth * p.n, margin, tol
        )
        if q.hit == 0 or wp.dot(q.n, q.v1.m) > depth:
            break  # keep the shallower (better) estimate
        p = q
    return _portal_contact(p.v1, p.v2, p.v3, p.n, margin)


@wp.func
def plane_ellipsoid_point(
    xform_plane: wp.transform, xform_e: wp.transform, scale_e: wp.vec3, points: wp.array(dtype=wp.vec3)
) -> wp.vec3:
    """World point of an ellipsoid deepest below a plane: its support along the plane's ``-normal``."""
    n = wp.quat_rotate(wp.transform_get_rotation(xform_plane), wp.vec3(0.0, 0.0, 1.0))
    return support_world(SHAPE_ELLIPSOID, xform_e, scale_e, -n, points, wp.vec2i(0, 0))


_PLANE_MESH_TILT = wp.constant(1.0)
"""Tangent component of the tilted support directions of plane-mesh slots 1-4 (1: 45 degrees)."""


@wp.func
def plane_mesh_point(
    xform_plane: wp.transform,
    xform_m: wp.transform,
    points: wp.array(dtype=wp.vec3),
    mesh: wp.vec2i,
    slot: int,
) -> wp.vec4:
    """Contact candidate ``slot`` (0-4) of a mesh's hull against a plane: slot 0 is the hull's support
    along the plane's ``-n`` (its deepest vertex); slots 1-4 are its supports along ``-n`` tilted by
    45 degrees towards the plane's +x, -x, +y, -y axes, which on a face lying on the plane are that
    face's extreme corners (so a flat face rests on up to five points instead of rocking on one), and
    above the plane elsewhere (the caller drops those by their separation).

    Returns:
        (world point, 1 when it is a new vertex, 0 when it repeats slot 0's).
    """
    rot = wp.transform_get_rotation(xform_plane)
    n = wp.quat_rotate(rot, wp.vec3(0.0, 0.0, 1.0))
    p0 = support_world(SHAPE_MESH, xform_m, wp.vec3(1.0), -n, points, mesh)
    if slot == 0:
        return wp.vec4(p0[0], p0[1], p0[2], 1.0)
    axis = wp.vec3(0.0)
    axis[(slot - 1) / 2] = 1.0 - 2.0 * float((slot - 1) % 2)
    d = -n + _PLANE_MESH_TILT * wp.quat_rotate(rot, axis)
    p = support_world(SHAPE_MESH, xform_m, wp.vec3(1.0), d, points, mesh)
    fresh = 1.0
    if wp.length_sq(p - p0) == 0.0:
        fresh = 0.0
    return wp.vec4(p[0], p[1], p[2], fresh)


__all__ = [
    "convex_convex",
    "mesh_support_local",
    "plane_ellipsoid_point",
    "plane_mesh_point",
    "shape_size",
    "support_local",
    "support_world",
]
