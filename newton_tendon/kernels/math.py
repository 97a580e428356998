"""Frame conventions and small helpers shared by every kernel module.

Conventions (the same as newton's, so numbers carry over):

* ``body_q`` is a ``wp.transform``: position of the body frame origin in world, then the
  orientation quaternion (x, y, z, w) of the body frame in world.
* ``body_qd`` is a ``wp.spatial_vector``: linear velocity of the centre of mass first, then the
  angular velocity, both in world frame.
* ``body_f`` is a ``wp.spatial_vector``: force then torque about the centre of mass, world frame.
* Z is up by default. SI units throughout.

A pose *delta* is a ``wp.spatial_vector`` (dx, dtheta): a translation of the centre of mass [m] and
a small world-frame rotation vector [rad] about the centre of mass.
"""

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.func
def world_selected(world_mask: wp.array(dtype=wp.int32), w: int):
    """Whether a reset selects world ``w``: ``world_mask[w]`` for a world, the mask's last entry
    (``world_count``, the global entry) for an entity in no world (``w = -1``)."""
    if w >= 0:
        return world_mask[w] != 0
    return world_mask[world_mask.shape[0] - 1] != 0


@wp.func
def body_com_world(q: wp.transform, com: wp.vec3):
    """World position [m] of a body's centre of mass given its frame pose and local COM offset."""
    return wp.transform_point(q, com)


@wp.func
def world_inv_inertia(q: wp.transform, inv_inertia: wp.mat33):
    """Inverse inertia tensor [1/(kg m^2)] rotated into world frame: R I^-1 R^T."""
    r = wp.quat_to_matrix(wp.transform_get_rotation(q))
    return r * inv_inertia * wp.transpose(r)


@wp.func
def inv_inertia_quadratic(q: wp.transform, inv_inertia: wp.mat33, v: wp.vec3):
    """``v . (R I^-1 R^T) v`` for a world vector v [m] (an arm ``(x - c) x n``): the rotational part
    of a row's generalized inverse mass [1/kg]. Evaluated in the body frame, ``u = R^T v``,
    ``u . I^-1 u``: one quaternion rotation instead of the world tensor (``world_inv_inertia``),
    for callers that need the scalar only."""
    u = wp.quat_rotate_inv(wp.transform_get_rotation(q), v)
    return wp.dot(u, inv_inertia * u)


@wp.func
def world_inertia(q: wp.transform, inertia: wp.mat33):
    """Inertia tensor [kg m^2] about the centre of mass, rotated into world frame."""
    r = wp.quat_to_matrix(wp.transform_get_rotation(q))
    return r * inertia * wp.transpose(r)


@wp.func
def rotate_quat(rot: wp.quat, dtheta: wp.vec3):
    """Apply a small world-frame rotation vector ``dtheta`` [rad] to ``rot`` (first order), renormalized."""
    dq = wp.quat(dtheta[0], dtheta[1], dtheta[2], 0.0) * rot
    r = wp.quat(rot[0] + 0.5 * dq[0], rot[1] + 0.5 * dq[1], rot[2] + 0.5 * dq[2], rot[3] + 0.5 * dq[3])
    return wp.normalize(r)


MAX_STEP_TRANSLATION = wp.constant(10.0)
"""Largest COM translation [m] one pose update of a body may take (a VBD Newton step, the corrections
an XPBD iteration gathered)."""
MAX_STEP_ROTATION = wp.constant(3.0)
"""Largest rotation [rad] one pose update of a body may take."""


@wp.func
def bounded_pose_delta(d: wp.spatial_vector):
    """The pose update ``d`` (COM translation [m], rotation vector [rad]) with its translation capped at
    MAX_STEP_TRANSLATION and its rotation at MAX_STEP_ROTATION, and zero if it is not finite. A safety
    net for rows that cannot be met (a tendon locked at a negative length, a kinematic body pulling
    an inextensible cable beyond its length), whose multipliers grow without bound: uncapped, VBD
    reached inf within 66 steps and XPBD threw a body 1e9 m away within 100. A well-posed scene never
    comes near the caps."""
    dx = wp.spatial_top(d)
    dth = wp.spatial_bottom(d)
    # This runs once per body and iteration: the common case is two squared lengths and two
    # comparisons, which NaN fails (with square roots and a rebuilt vector it cost XPBD about 5 %
    # of a cable step). A square that overflows counts as not finite.
    lx2 = wp.dot(dx, dx)
    la2 = wp.dot(dth, dth)
    if lx2 <= MAX_STEP_TRANSLATION * MAX_STEP_TRANSLATION and la2 <= MAX_STEP_ROTATION * MAX_STEP_ROTATION:
        return d
    if not (wp.isfinite(lx2) and wp.isfinite(la2)):
        return wp.spatial_vector()
    if lx2 > MAX_STEP_TRANSLATION * MAX_STEP_TRANSLATION:
        dx = dx * (MAX_STEP_TRANSLATION / wp.sqrt(lx2))
    if la2 > MAX_STEP_ROTATION * MAX_STEP_ROTATION:
        dth = dth * (MAX_STEP_ROTATION / wp.sqrt(la2))
    return wp.spatial_vector(dx, dth)


@wp.func
def apply_pose_delta(q: wp.transform, com: wp.vec3, dx: wp.vec3, dtheta: wp.vec3):
    """Move a body by a COM translation ``dx`` [m] and a rotation ``dtheta`` [rad] about its COM."""
    rot = wp.transform_get_rotation(q)
    c = wp.transform_point(q, com) + dx
    rot_new = rotate_quat(rot, dtheta)
    return wp.transform(c - wp.quat_rotate(rot_new, com), rot_new)


@wp.func
def quat_to_rotation_vector(dq: wp.quat):
    """Rotation vector [rad] of a unit quaternion, taking the short way round (w >= 0)."""
    s = 1.0
    if dq[3] < 0.0:
        s = -1.0
    v = wp.vec3(dq[0], dq[1], dq[2]) * s
    sin_half = wp.length(v)
    if sin_half < 1.0e-9:
        return v * 2.0
    angle = 2.0 * wp.atan2(sin_half, dq[3] * s)
    return v * (angle / sin_half)


@wp.func
def twist_angle(dq: wp.quat, axis: wp.vec3):
    """Signed rotation angle [rad] of ``dq`` about the unit ``axis`` (swing-twist split), in (-pi, pi]."""
    proj = dq[0] * axis[0] + dq[1] * axis[1] + dq[2] * axis[2]
    angle = 2.0 * wp.atan2(proj, dq[3])
    if angle > wp.pi:
        angle = angle - 2.0 * wp.pi
    if angle <= -wp.pi:
        angle = angle + 2.0 * wp.pi
    return angle


@wp.func
def point_inv_mass(inv_mass: float, inv_inertia_w: wp.mat33, r: wp.vec3, n: wp.vec3):
    """Generalized inverse mass [1/kg] of a body for a unit impulse along ``n`` applied at arm ``r`` [m].

    w = 1/m + (r x n)^T I^-1 (r x n)  (Mueller et al. 2020, eq. 2-3).
    """
    rn = wp.cross(r, n)
    return inv_mass + wp.dot(rn, inv_inertia_w * rn)


@wp.func
def rot_inv_mass(inv_inertia_w: wp.mat33, n: wp.vec3):
    """Generalized inverse inertia [1/(kg m^2)] for a unit angular impulse about ``n``: n^T I^-1 n."""
    return wp.dot(n, inv_inertia_w * n)


@wp.func
def pose_change(q: wp.transform, q_ref: wp.transform, com: wp.vec3):
    """Pose delta (COM translation [m], world rotation vector [rad]) that carries q_ref to q."""
    dx = wp.transform_point(q, com) - wp.transform_point(q_ref, com)
    dq = wp.transform_get_rotation(q) * wp.quat_inverse(wp.transform_get_rotation(q_ref))
    return wp.spatial_vector(dx, quat_to_rotation_vector(dq))
