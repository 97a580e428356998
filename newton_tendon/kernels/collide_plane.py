"""Narrow phase: a plane (shape ``a``) against a sphere, a capsule end, a box corner or a cylinder rim point.

Each slot is one point of shape ``b`` swept by a radius (0 for a corner or rim point) against the
plane, bounded or not (``collide`` lists the slots of each pair).
"""

import warp as wp

from newton_tendon.kernels.collide_common import _make_contact
from newton_tendon.kernels.collide_cylinder import cylinder_rim_point

wp.set_module_options({"enable_backward": False})


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
    return cylinder_rim_point(xform_cyl, scale_cyl, n, slot, 0.0)
