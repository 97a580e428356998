"""Forward kinematics: body poses and velocities from joint coordinates, one thread per articulation.

A joint's motion ``X_j(q)`` carries its parent joint frame onto its child joint frame, so the child
body sits at

    body_q[child] = body_q[parent] * joint_X_p * X_j(q) * inverse(joint_X_c)

(``body_q[parent]`` is the identity for a joint to the world). ``X_j`` per joint type:

=========  ================================================  =======================================
type       X_j(q)                                            joint velocity (v, w) in the parent joint
                                                             frame, from qd
=========  ================================================  =======================================
prismatic  translation q a                                   (qd a, 0)
revolute   rotation by q about a                             (0, qd a)
ball       rotation by the quaternion q (x y z w)            (0, qd)
fixed      identity                                          (0, 0)
free       translation q[0:3], rotation quaternion q[3:7]    (qd[0:3] at the child COM, qd[3:6])
D6         translation sum_i q_i a_i over the linear axes,   (sum_i qd_i a_i,
           rotation R(b_0, q_0) R(b_1, q_1) ... over the       sum_k qd_k R(b_0, q_0)...R(b_k-1, q_k-1) b_k)
           angular axes b_k in order
=========  ================================================  =======================================

Body velocities are (linear velocity of the COM, angular velocity), both in world (``State.body_qd``).
The child's twist is the parent's rigid motion plus the joint's relative motion rotated to world:
``w_c = w_p + R_p w_j`` and, at the child's COM ``x``, ``v_c = v_p(x) + R_p v_j + R_p w_j x (x - o_c)``
with ``v_p(x)`` the parent's velocity at the point ``x`` and ``o_c`` the child joint frame origin (a
free joint's ``v_j`` is already the COM's relative velocity, so the last term is dropped). These are
newton's conventions for ``eval_fk``; ``eval_joint_coordinates`` (kernels/joints/coordinates.py) inverts them, a
free joint's ``joint_qd`` only where its parent joint frame is the unrotated world (it writes the
child's world twist).
"""

import warp as wp

from newton_tendon.kernels.joints import JointModel, body_spatial_velocity, parent_pose
from newton_tendon.kernels.rigid import BodyModel
from newton_tendon.kernels.types import JOINT_BALL, JOINT_D6, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options({"enable_backward": False})


@wp.struct
class JointMotion:
    """One joint's relative motion: the transform ``X_j`` from the parent joint frame to the child joint
    frame, and the child joint frame's linear [m/s] and angular [rad/s] velocity, both in the parent
    joint frame."""

    X_j: wp.transform
    v: wp.vec3
    w: wp.vec3


@wp.func
def joint_motion(
    joints: JointModel,
    j: int,
    joint_q: wp.array(dtype=float),
    joint_qd: wp.array(dtype=float),
):
    """``X_j(q)`` and the joint velocity for joint ``j`` (table in the module docstring)."""
    jt = joints.type[j]
    qs = joints.q_start[j]
    ds = joints.qd_start[j]
    m = JointMotion()
    m.X_j = wp.transform_identity()
    m.v = wp.vec3(0.0)
    m.w = wp.vec3(0.0)
    if jt == JOINT_PRISMATIC:
        a = joints.axis[ds]
        m.X_j = wp.transform(a * joint_q[qs], wp.quat_identity())
        m.v = a * joint_qd[ds]
    elif jt == JOINT_REVOLUTE:
        a = joints.axis[ds]
        m.X_j = wp.transform(wp.vec3(0.0), wp.quat_from_axis_angle(a, joint_q[qs]))
        m.w = a * joint_qd[ds]
    elif jt == JOINT_BALL:
        r = wp.normalize(wp.quat(joint_q[qs], joint_q[qs + 1], joint_q[qs + 2], joint_q[qs + 3]))
        m.X_j = wp.transform(wp.vec3(0.0), r)
        m.w = wp.vec3(joint_qd[ds], joint_qd[ds + 1], joint_qd[ds + 2])
    elif jt == JOINT_FREE:
        r = wp.normalize(wp.quat(joint_q[qs + 3], joint_q[qs + 4], joint_q[qs + 5], joint_q[qs + 6]))
        m.X_j = wp.transform(wp.vec3(joint_q[qs], joint_q[qs + 1], joint_q[qs + 2]), r)
        m.v = wp.vec3(joint_qd[ds], joint_qd[ds + 1], joint_qd[ds + 2])
        m.w = wp.vec3(joint_qd[ds + 3], joint_qd[ds + 4], joint_qd[ds + 5])
    elif jt == JOINT_D6:
        dim = joints.dof_dim[j]
        n_lin = dim[0]
        p = wp.vec3(0.0)
        v = wp.vec3(0.0)
        for i in range(n_lin):
            a = joints.axis[ds + i]
            p = p + a * joint_q[qs + i]
            v = v + a * joint_qd[ds + i]
        # Intrinsic rotations about the angular axes in order: each later axis turns with the rotations
        # before it, so its world direction (and its share of the angular velocity) is r applied to it.
        r = wp.quat_identity()
        w = wp.vec3(0.0)
        for k in range(dim[1]):
            b = joints.axis[ds + n_lin + k]
            w = w + wp.quat_rotate(r, b) * joint_qd[ds + n_lin + k]
            r = r * wp.quat_from_axis_angle(b, joint_q[qs + n_lin + k])
        m.X_j = wp.transform(p, r)
        m.v = v
        m.w = w
    return m


@wp.func
def selected(mask: wp.array(dtype=wp.bool), i: int):
    """True where ``mask`` is absent (a null array) or ``mask[i]`` is set."""
    if mask:
        return mask[i]
    return True


@wp.func
def chosen_articulation(
    tid: int,
    articulation_indices: wp.array(dtype=wp.int32),
    articulation_start: wp.array(dtype=wp.int32),
    articulation_mask: wp.array(dtype=wp.bool),
):
    """The articulation thread ``tid`` serves: ``articulation_indices[tid]`` when indices are given,
    else ``tid``; -1 when it is out of range or ``articulation_mask`` leaves it out."""
    art = tid
    if articulation_indices:
        art = articulation_indices[tid]
    if art < 0 or art >= articulation_start.shape[0] - 1:
        return -1
    if not selected(articulation_mask, art):
        return -1
    return art


@wp.kernel
def eval_articulation_fk(
    # Input: joint coordinates; masks and indices may be null arrays (all selected)
    joint_q: wp.array(dtype=float),
    joint_qd: wp.array(dtype=float),
    articulation_mask: wp.array(dtype=wp.bool),
    articulation_indices: wp.array(dtype=wp.int32),
    joint_mask: wp.array(dtype=wp.bool),
    # Model:
    bodies: BodyModel,
    joints: JointModel,
    articulation_start: wp.array(dtype=wp.int32),
    fk_joint_order: wp.array(dtype=wp.int32),
    # State: poses and velocities written in place (a child reads its parent's, already written)
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
):
    """Walk one articulation's joints, parents before children (``fk_joint_order``), and place each
    child body from its parent's pose and velocity and the joint's coordinates (module docstring).
    A joint left out by ``joint_mask`` keeps its child's pose and velocity; its descendants use them."""
    art = chosen_articulation(wp.tid(), articulation_indices, articulation_start, articulation_mask)
    if art < 0:
        return
    for k in range(articulation_start[art], articulation_start[art + 1]):
        j = fk_joint_order[k]
        if not selected(joint_mask, j):
            continue
        p = joints.parent[j]
        c = joints.child[j]
        m = joint_motion(joints, j, joint_q, joint_qd)
        X_wpj = parent_pose(body_q, p) * joints.X_p[j]
        X_wcj = X_wpj * m.X_j
        X_wc = X_wcj * wp.transform_inverse(joints.X_c[j])
        rot_p = wp.transform_get_rotation(X_wpj)
        v_rel = wp.quat_rotate(rot_p, m.v)
        w_rel = wp.quat_rotate(rot_p, m.w)
        x_com = wp.transform_point(X_wc, bodies.com[c])
        if joints.type[j] != JOINT_FREE:
            v_rel = v_rel + wp.cross(w_rel, x_com - wp.transform_get_translation(X_wcj))
        qd_p = body_spatial_velocity(body_qd, p)
        w_p = wp.spatial_bottom(qd_p)
        v_p = wp.vec3(0.0)
        if p >= 0:
            v_p = wp.spatial_top(qd_p) + wp.cross(w_p, x_com - wp.transform_point(body_q[p], bodies.com[p]))
        body_q[c] = X_wc
        body_qd[c] = wp.spatial_vector(v_p + v_rel, w_p + w_rel)


@wp.kernel
def copy_articulation_coordinates(
    # Input: masks and indices may be null arrays (all selected)
    articulation_mask: wp.array(dtype=wp.bool),
    articulation_indices: wp.array(dtype=wp.int32),
    # Model:
    joints: JointModel,
    articulation_start: wp.array(dtype=wp.int32),
    # Scratch: every joint's coordinates, as eval_joint_coordinates wrote them
    joint_q_all: wp.array(dtype=float),
    joint_qd_all: wp.array(dtype=float),
    # Output:
    joint_q: wp.array(dtype=float),
    joint_qd: wp.array(dtype=float),
):
    """Copy the coordinates and velocities of the selected articulations' joints (others untouched)."""
    art = chosen_articulation(wp.tid(), articulation_indices, articulation_start, articulation_mask)
    if art < 0:
        return
    for j in range(articulation_start[art], articulation_start[art + 1]):
        for i in range(joints.q_start[j], joints.q_start[j + 1]):
            joint_q[i] = joint_q_all[i]
        for i in range(joints.qd_start[j], joints.qd_start[j + 1]):
            joint_qd[i] = joint_qd_all[i]
