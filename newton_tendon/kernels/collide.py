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
      - ellipsoid: the three semi-axes along local X, Y, Z.
      - mesh: the largest |coordinate| of its vertices along local X, Y, Z (a size for tolerances); the
        vertices themselves are in ``points`` at the shape's range ``mesh``.

    * A pair is always given with ``type_a <= type_b``, so a plane is always shape ``a``.
    * ``normal`` is a unit world vector pointing from ``a`` towards ``b``: the direction along which ``b`` has to
      move to separate. ``separation = dot(point_b - point_a, normal)`` is negative when the shapes overlap, and a
      slot is valid only when ``separation < margin``.

Slots per pair (anything else, that is plane-plane, has 0):

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
    sphere-cylinder   1      sphere centre against the closest cylinder point (side, cap or rim)
    capsule-cylinder  4      0-1: each segment end as a sphere; 2-3: the upper and lower end of the stretch of the
                             segment deepest in the cylinder (as for capsule-box)
    box-cylinder      28     0-7: box corners; 8-19: the deepest interior point of each box edge (edge k // 4 of
                             axis k, at the signs of bits 0-1 of k % 4 on the other two axes); 20-27: cylinder rim
                             points as for plane-cylinder, pressed along the box face axis that separates best
    cylinder-cylinder 21     0: the closest points of the two axes, only when interior to both and not parallel
                             (side on side); 1-8: rim points of ``a`` pressed towards ``b`` (along the line of
                             centres) against ``b``; 9-16: rim points of ``b`` against ``a``; 17-18: the ends of the
                             chord that ``b``'s side line nearest to ``a``'s facing cap cuts across that cap, against
                             ``a``; 19-20: the same with ``a`` and ``b`` swapped
    plane-ellipsoid   1      the ellipsoid's support point along the plane's -normal (its deepest point)
    X-ellipsoid       1      any other shape against an ellipsoid: the penetration contact of Minkowski portal
                             refinement on the two support mappings (``collide_convex``); an ellipsoid is
                             strictly convex, so the contact region is one point
    plane-mesh        5      the hull's support along -normal, then along -normal tilted 45 degrees towards the
                             plane's +x, -x, +y, -y (a face resting on the plane: its extreme corners); a slot
                             that repeats slot 0's vertex is dropped
    X-mesh            1      any other shape against a mesh: portal refinement on the mesh's convex hull (support
                             = its farthest vertex) and the other shape; one point, so flat faces resting on
                             flat faces rock about it (documented in docs/limitations.md)
    ================  =====  =====================================================================================

Each cylinder slot tests a point of one shape's surface against the exact surface of the other
(``collide_cylinder``), so degenerate poses (coincident centres, parallel axes) give finite results.

The pairs live in ``collide_plane``, ``collide_swept`` (sphere and capsule pairs), ``collide_box``,
``collide_cylinder`` and ``collide_convex`` (ellipsoids), on the helpers and the ``ContactPoint`` record of
``collide_common``; this module holds the slot counts and the dispatch.
"""

import warp as wp

from newton_tendon.kernels.collide_box import _box_box
from newton_tendon.kernels.collide_common import (
    _LENGTH_EPS,
    ContactPoint,
    _capsule_ends,
    _empty_contact,
    _segment_closest_param,
    _sphere_sphere,
)
from newton_tendon.kernels.collide_convex import convex_convex, plane_ellipsoid_point, plane_mesh_point
from newton_tendon.kernels.collide_cylinder import (
    _box_cylinder,
    _capsule_cylinder,
    _cylinder_cylinder,
    _sphere_cylinder,
)
from newton_tendon.kernels.collide_plane import _plane_cylinder_rim_point, _plane_point
from newton_tendon.kernels.collide_swept import _capsule_box, _capsule_capsule, _sphere_box
from newton_tendon.kernels.types import (
    SHAPE_BOX,
    SHAPE_CAPSULE,
    SHAPE_CYLINDER,
    SHAPE_ELLIPSOID,
    SHAPE_MESH,
    SHAPE_PLANE,
    SHAPE_SPHERE,
)

wp.set_module_options({"enable_backward": False})

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
    (int(SHAPE_SPHERE), int(SHAPE_CYLINDER)): 1,
    (int(SHAPE_CAPSULE), int(SHAPE_CYLINDER)): 4,
    (int(SHAPE_BOX), int(SHAPE_CYLINDER)): 28,
    (int(SHAPE_CYLINDER), int(SHAPE_CYLINDER)): 21,
    (int(SHAPE_PLANE), int(SHAPE_ELLIPSOID)): 1,
    (int(SHAPE_SPHERE), int(SHAPE_ELLIPSOID)): 1,
    (int(SHAPE_CAPSULE), int(SHAPE_ELLIPSOID)): 1,
    (int(SHAPE_BOX), int(SHAPE_ELLIPSOID)): 1,
    (int(SHAPE_CYLINDER), int(SHAPE_ELLIPSOID)): 1,
    (int(SHAPE_ELLIPSOID), int(SHAPE_ELLIPSOID)): 1,
    (int(SHAPE_PLANE), int(SHAPE_MESH)): 5,
    (int(SHAPE_SPHERE), int(SHAPE_MESH)): 1,
    (int(SHAPE_CAPSULE), int(SHAPE_MESH)): 1,
    (int(SHAPE_BOX), int(SHAPE_MESH)): 1,
    (int(SHAPE_CYLINDER), int(SHAPE_MESH)): 1,
    (int(SHAPE_ELLIPSOID), int(SHAPE_MESH)): 1,
    (int(SHAPE_MESH), int(SHAPE_MESH)): 1,
}

MAX_PAIR_CONTACTS = max(_CAPACITY.values())
"""Largest number of slots any pair uses."""


def pair_contact_capacity(type_a: int, type_b: int) -> int:
    """Returns the fixed number of contact slots of a shape pair.

    Args:
        type_a: Shape type of the first shape (``SHAPE_*`` constant), with ``type_a <= type_b``.
        type_b: Shape type of the second shape.

    Returns:
        The slot count, or 0 when the pair is not supported (plane-plane).
    """
    return _CAPACITY.get((int(type_a), int(type_b)), 0)


@wp.func
def contact_capacity(type_a: int, type_b: int) -> int:
    """Device twin of :func:`pair_contact_capacity`.

    Args:
        type_a: Shape type of the first shape, with ``type_a <= type_b``.
        type_b: Shape type of the second shape.

    Returns:
        Number of contact slots of the pair, 0 when unsupported.
    """
    if type_b == SHAPE_MESH:
        if type_a == SHAPE_PLANE:
            return 5
        return 1
    if type_b == SHAPE_ELLIPSOID:
        return 1
    if type_a == SHAPE_PLANE:
        if type_b == SHAPE_SPHERE:
            return 1
        if type_b == SHAPE_CAPSULE:
            return 2
        if type_b == SHAPE_BOX or type_b == SHAPE_CYLINDER:
            return 8
        return 0
    if type_a == SHAPE_SPHERE:
        if type_b == SHAPE_SPHERE or type_b == SHAPE_CAPSULE or type_b == SHAPE_BOX or type_b == SHAPE_CYLINDER:
            return 1
        return 0
    if type_a == SHAPE_CAPSULE:
        if type_b == SHAPE_CAPSULE:
            return 5
        if type_b == SHAPE_BOX or type_b == SHAPE_CYLINDER:
            return 4
        return 0
    if type_a == SHAPE_BOX:
        if type_b == SHAPE_BOX:
            return 25
        if type_b == SHAPE_CYLINDER:
            return 28
        return 0
    if type_a == SHAPE_CYLINDER and type_b == SHAPE_CYLINDER:
        return 21
    return 0


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
    points: wp.array(dtype=wp.vec3),
    mesh_a: wp.vec2i,
    mesh_b: wp.vec2i,
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
        points: Every mesh shape's vertices in its shape frame (``Model.mesh_points``).
        mesh_a: (first vertex, count) of ``a`` in ``points`` when ``a`` is a mesh.
        mesh_b: The same for ``b``.

    Returns:
        The contact; ``valid`` is 0 for unsupported pairs, out-of-range slots and slots without contact.
    """
    if slot < 0 or slot >= contact_capacity(type_a, type_b):
        return _empty_contact()
    if type_b == SHAPE_MESH:
        if type_a == SHAPE_PLANE:
            pm = plane_mesh_point(xform_a, xform_b, points, mesh_b, slot)
            c = _plane_point(xform_a, scale_a, wp.vec3(pm[0], pm[1], pm[2]), 0.0, margin)
            if pm[3] == 0.0:
                c.valid = 0  # the same vertex as slot 0
            return c
        return convex_convex(type_a, xform_a, scale_a, type_b, xform_b, scale_b, points, mesh_a, mesh_b, margin)
    if type_b == SHAPE_ELLIPSOID:
        if type_a == SHAPE_PLANE:
            pe = plane_ellipsoid_point(xform_a, xform_b, scale_b, points)
            return _plane_point(xform_a, scale_a, pe, 0.0, margin)
        return convex_convex(type_a, xform_a, scale_a, type_b, xform_b, scale_b, points, mesh_a, mesh_b, margin)
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
        if type_b == SHAPE_BOX:
            return _sphere_box(center, scale_a[0], xform_b, scale_b, margin)
        return _sphere_cylinder(center, scale_a[0], xform_b, scale_b, margin)
    if type_a == SHAPE_CAPSULE:
        if type_b == SHAPE_CAPSULE:
            return _capsule_capsule(xform_a, scale_a, xform_b, scale_b, slot, margin)
        if type_b == SHAPE_BOX:
            return _capsule_box(xform_a, scale_a, xform_b, scale_b, slot, margin)
        return _capsule_cylinder(xform_a, scale_a, xform_b, scale_b, slot, margin)
    if type_a == SHAPE_BOX:
        if type_b == SHAPE_BOX:
            return _box_box(xform_a, scale_a, xform_b, scale_b, slot, margin)
        return _box_cylinder(xform_a, scale_a, xform_b, scale_b, slot, margin)
    return _cylinder_cylinder(xform_a, scale_a, xform_b, scale_b, slot, margin)


@wp.kernel
def collide_slots_test_kernel(
    # Input: one query per thread (shape pair, slot, margin, mesh ranges)
    type_a: wp.array(dtype=int),
    xform_a: wp.array(dtype=wp.transform),
    scale_a: wp.array(dtype=wp.vec3),
    type_b: wp.array(dtype=int),
    xform_b: wp.array(dtype=wp.transform),
    scale_b: wp.array(dtype=wp.vec3),
    slot: wp.array(dtype=int),
    margin: float,
    points: wp.array(dtype=wp.vec3),
    mesh_a: wp.array(dtype=wp.vec2i),
    mesh_b: wp.array(dtype=wp.vec2i),
    # Output:
    valid: wp.array(dtype=int),
    point_a: wp.array(dtype=wp.vec3),
    point_b: wp.array(dtype=wp.vec3),
    normal: wp.array(dtype=wp.vec3),
    separation: wp.array(dtype=float),
    capacity: wp.array(dtype=int),
):
    """Evaluates one (pair, slot) query per thread; used by the tests. ``points``, ``mesh_a`` and
    ``mesh_b`` give mesh shapes their vertices; without meshes, one point and empty ranges."""
    tid = wp.tid()
    ra = wp.vec2i(0, 0)
    rb = wp.vec2i(0, 0)
    if mesh_a.shape[0] > tid:
        ra = mesh_a[tid]
    if mesh_b.shape[0] > tid:
        rb = mesh_b[tid]
    c = collide_slot(
        type_a[tid], xform_a[tid], scale_a[tid], type_b[tid], xform_b[tid], scale_b[tid], slot[tid], margin,
        points, ra, rb,
    )  # fmt: skip
    valid[tid] = c.valid
    point_a[tid] = c.point_a
    point_b[tid] = c.point_b
    normal[tid] = c.normal
    separation[tid] = c.separation
    capacity[tid] = contact_capacity(type_a[tid], type_b[tid])


__all__ = [
    "MAX_PAIR_CONTACTS",
    "ContactPoint",
    "collide_slot",
    "collide_slots_test_kernel",
    "contact_capacity",
    "pair_contact_capacity",
]
