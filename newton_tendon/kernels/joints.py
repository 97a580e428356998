"""Joints in maximal coordinates: coordinate evaluation, generalized forces and XPBD position rows.

A joint connects a parent body (or the world, ``parent = -1``) to a child body through two joint
frames: ``X_wp = body_q[parent] * joint_X_p`` and ``X_wc = body_q[child] * joint_X_c``. Each joint
type removes degrees of freedom between the two frames:

=========  ===================================  ======================================
type       position rows (hard, compliance 0)   free coordinate (q, qd)
=========  ===================================  ======================================
revolute   anchors coincide; axes aligned       twist angle about axis [rad]
prismatic  anchor offset only along axis;       displacement along axis [m]
           orientations equal
ball       anchors coincide                     relative quaternion (4), rel. ang. vel
fixed      anchors coincide; orientations equal  none
free       none                                 pose (7) / body velocity (6)
=========  ===================================  ======================================

Revolute and prismatic joints also carry a limit row (hard, unilateral) and a target drive row
(compliant, implicit PD) on their single coordinate.
"""

import warp as wp

from newton_tendon.kernels.math import (
    quat_to_rotation_vector,
    twist_angle,
    world_inv_inertia,
)
from newton_tendon.kernels.rigid import BodyModel, is_moving_body, move_body
from newton_tendon.kernels.types import JOINT_BALL, JOINT_D6, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options({"enable_backward": False})


@wp.struct
class JointModel:
    """Per-joint constants (joint frames, axes and gains) grouped for kernel signatures."""

    type: wp.array(dtype=wp.int32)
    parent: wp.array(dtype=wp.int32)
    child: wp.array(dtype=wp.int32)
    X_p: wp.array(dtype=wp.transform)
    X_c: wp.array(dtype=wp.transform)
    q_start: wp.array(dtype=wp.int32)
    qd_start: wp.array(dtype=wp.int32)
    dof_dim: wp.array(dtype=wp.vec2i)
    axis: wp.array(dtype=wp.vec3)
    limit_lower: wp.array(dtype=float)
    limit_upper: wp.array(dtype=float)
    target_ke: wp.array(dtype=float)
    target_kd: wp.array(dtype=float)
    armature: wp.array(dtype=float)
    enabled: wp.array(dtype=wp.int32)


@wp.func
def parent_pose(body_q: wp.array(dtype=wp.transform), parent: int):
    if parent < 0:
        return wp.transform_identity()
    return body_q[parent]


@wp.func
def body_spatial_velocity(body_qd: wp.array(dtype=wp.spatial_vector), b: int):
    if b < 0:
        return wp.spatial_vector()
    return body_qd[b]


@wp.func
def d6_euler_axes(rot_p: wp.quat, rel: wp.quat, joints: JointModel, dk: int):
    """``euler_axes`` of a D6 joint's three angular dofs ``dk .. dk+2`` (their axes from the model)."""
    return euler_axes(rot_p, rel, joints.axis[dk], joints.axis[dk + 1], joints.axis[dk + 2])


@wp.func
def d6_universal_axes(rot_p: wp.quat, rel: wp.quat, joints: JointModel, dk: int):
    """``universal_axes`` of a D6 joint's two angular dofs ``dk``, ``dk+1`` (their axes from the model)."""
    return universal_axes(rot_p, rel, joints.axis[dk], joints.axis[dk + 1])


@wp.func
def universal_axes(rot_p: wp.quat, rel: wp.quat, a0: wp.vec3, a1: wp.vec3):
    """A universal (Hooke) joint about orthonormal axes a_0 (parent) and a_1 (child), joint frame:
    the coordinates, their rate axes and the lock, with no singular pose.

    The joint is rel = R(a_0, q_0) R(a_1, q_1): the child's a_1 stays perpendicular to the parent's
    a_0, which locks the rotation about their common normal. In the basis B = [a_0 a_1 a_0 x a_1],
    m = B^T rel B = R_x(q_0) R_y(q_1) when the lock holds, so the child's a_1 is m's column 1 =
    (0, cos q_0, sin q_0) and the parent's a_0 seen from the child is m's row 0 = (cos q_1, 0,
    sin q_1): q_0 = atan2(m_21, m_11), q_1 = atan2(m_02, m_00), each defined at every pose (a
    column and a row of a rotation are unit vectors). Successive-angle extraction instead lost q_0
    at q_1 = +-pi/2 (gimbal lock), read its whole value as lock error there, and a link swinging
    through a quarter turn gained 1.6 kJ (XPBD) and 6.5 kJ (VBD) (issue 43).

    Rate axes (world): the gradients g_k of q_k with respect to a turn of the child, dq_k = g_k . w
    exactly (also off the lock, by float32's 1e-7 rad). In B's coordinates, with c_1 = m's column 1
    (the child's a_1), its part across a_0 c_1p = (0, m_11, m_21), and the child's a_0 and a_2 as
    d_0, d_2 (m's columns 0 and 2): g_0 = c_1 x (e_x x c_1p) / |c_1p|^2 and
    g_1 = (m_00 d_2 - m_02 d_0) x e_x / (m_00^2 + m_02^2); both are finite unless the lock is broken
    by a right angle. On the lock they are u_0 = R_p a_0 and u_1 = R_p R(a_0, q_0) a_1, orthonormal
    whatever the angles, and n = u_0 x u_1 is the locked direction. A torque sum_k f_k g_k does the
    work sum_k f_k qd_k. The lock's error: the child's a_1, c_1 = cos(b) u_1 + sin(b) u_0 with
    b = atan2(m_01, (m_11^2 + m_21^2)^1/2), is turned by -b n from where it belongs, so the error
    rotation (where it belongs to where it is, as a hinge's swing) is e = -b n [rad]; turning the
    child by -e about n (or the parent by e) removes it.

    Returns (q, U, n) with q = (q_0, q_1, -b) (the lock's residual angle about n) and
    U = [g_0 g_1 n]."""
    b = wp.matrix_from_cols(a0, a1, wp.cross(a0, a1))
    m = wp.transpose(b) * wp.quat_to_matrix(rel) * b
    q0 = wp.atan2(m[2, 1], m[1, 1])
    q1 = wp.atan2(m[0, 2], m[0, 0])
    across = m[1, 1] * m[1, 1] + m[2, 1] * m[2, 1]
    lock = wp.atan2(m[0, 1], wp.sqrt(across))
    ex = wp.vec3(1.0, 0.0, 0.0)
    c1 = wp.vec3(m[0, 1], m[1, 1], m[2, 1])
    g0 = wp.cross(c1, wp.cross(ex, wp.vec3(0.0, m[1, 1], m[2, 1]))) / across
    d0 = wp.vec3(m[0, 0], m[1, 0], m[2, 0])
    d2 = wp.vec3(m[0, 2], m[1, 2], m[2, 2])
    g1 = wp.cross(d2 * m[0, 0] - d0 * m[0, 2], ex) / (m[0, 0] * m[0, 0] + m[0, 2] * m[0, 2])
    to_world = wp.quat_to_matrix(rot_p) * b
    u0 = wp.quat_rotate(rot_p, a0)
    u1 = wp.quat_rotate(rot_p * wp.quat_from_axis_angle(a0, q0), a1)
    n = wp.cross(u0, u1)
    return wp.vec3(q0, q1, -lock), wp.matrix_from_cols(to_world * g0, to_world * g1, n), n


@wp.func
def euler_axes(rot_p: wp.quat, rel: wp.quat, a0: wp.vec3, a1: wp.vec3, a2: wp.vec3):
    """Successive-rotation angles about three orthonormal axes a_0, a_1, a_2 (joint frame) and the
    world axes their rates turn about.

    The coordinates are successive rotations about the axes, rel = R(a_0, q_0) R(a_1, q_1) R(a_2, q_2)
    (rel the child joint frame in the parent joint frame). With B = [a_0 a_1 h a_2], h = +-1 making B
    right-handed, B^T rel B = R_x(q_0) R_y(q_1) R_z(h q_2), whose entries give
    q_1 = atan2(m_02, (m_00^2 + m_01^2)^1/2), q_0 = atan2(-m_12, m_22), q_2 = h atan2(-m_01, m_00); at
    q_1 = +-pi/2 (m_00 = m_01 = 0) q_0 = 0 and q_2 = h atan2(m_10, m_11). The relative angular velocity is
    w = u_0 qd_0 + u_1 qd_1 + u_2 qd_2 with u_0 = R_p a_0, u_1 = R_p R(a_0, q_0) a_1,
    u_2 = R_p R(a_0, q_0) R(a_1, q_1) a_2 (world). Returns (q, U) with U's columns u_k."""
    h = wp.sign(wp.dot(wp.cross(a0, a1), a2))
    b = wp.matrix_from_cols(a0, a1, a2 * h)
    m = wp.transpose(b) * wp.quat_to_matrix(rel) * b
    cb = wp.sqrt(m[0, 0] * m[0, 0] + m[0, 1] * m[0, 1])
    q1 = wp.atan2(m[0, 2], cb)
    q0 = float(0.0)
    q2 = float(0.0)
    if cb > 1.0e-6:
        q0 = wp.atan2(-m[1, 2], m[2, 2])
        q2 = h * wp.atan2(-m[0, 1], m[0, 0])
    else:
        # q_1 = +-pi/2: only q_0 +- q_2 is determined; q_0 = 0 and the rest goes to q_2.
        q2 = h * wp.atan2(m[1, 0], m[1, 1])
    r0 = wp.quat_from_axis_angle(a0, q0)
    r01 = r0 * wp.quat_from_axis_angle(a1, q1)
    u = wp.matrix_from_cols(wp.quat_rotate(rot_p, a0), wp.quat_rotate(rot_p * r0, a1), wp.quat_rotate(rot_p * r01, a2))
    return wp.vec3(q0, q1, q2), u


@wp.func
def d6_euler_rates(u: wp.mat33, w: wp.vec3):
    """Rates qd [rad/s] with U qd = w (``d6_euler_axes``); where U is singular (q_1 = +-pi/2, the
    first and last axes aligned) the projections u_k . w instead, which stay finite."""
    if wp.abs(wp.determinant(u)) > 1.0e-6:
        return wp.inverse(u) * w
    return wp.transpose(u) * w


@wp.func
def anchor_velocities(
    bodies: BodyModel,
    body_q: wp.array(dtype=wp.transform),
    qd_p: wp.spatial_vector,
    qd_c: wp.spatial_vector,
    p: int,
    c: int,
    xp: wp.vec3,
    xc: wp.vec3,
):
    """Velocities [m/s] of the parent and child anchor points ``xp``, ``xc`` (world) and the parent's
    angular velocity [rad/s] (zero for the world): v = v_com + w x (x - x_com). Returns (vp, vc, wp)."""
    vp = wp.vec3(0.0)
    wpv = wp.vec3(0.0)
    if p >= 0:
        wpv = wp.spatial_bottom(qd_p)
        vp = wp.spatial_top(qd_p) + wp.cross(wpv, xp - wp.transform_point(body_q[p], bodies.com[p]))
    vc = wp.spatial_top(qd_c) + wp.cross(wp.spatial_bottom(qd_c), xc - wp.transform_point(body_q[c], bodies.com[c]))
    return vp, vc, wpv


@wp.kernel
def eval_joint_coordinates(
    # Model:
    bodies: BodyModel,
    joints: JointModel,
    # State:
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Output:
    joint_q: wp.array(dtype=float),
    joint_qd: wp.array(dtype=float),
):
    """Joint coordinates from maximal coordinates (inverse kinematics of one joint per thread).

    revolute: q = twist angle of the child joint frame relative to the parent joint frame about the
    axis [rad], qd = (w_c - w_p) . a [rad/s]. prismatic: q = (x_c - x_p) . a [m] between the frame
    origins, qd = its time derivative (v_c - v_p) . a + (x_c - x_p) . (w_p x a) [m/s]. ball: q = the
    relative quaternion (x y z w), qd = w_c - w_p in the parent joint frame. free: q = the child
    joint frame pose in the parent joint frame (p, quat), qd = the child COM's velocity relative to the
    parent's rigid motion there, then the relative angular velocity, both in the parent joint frame
    (newton's convention; the child's world twist for a world parent with an unrotated frame).
    D6: each linear axis as a prismatic joint's, one angular axis as a revolute joint's, two or three
    angular axes as successive rotations (``d6_universal_axes``, ``d6_euler_axes``).
    """
    j = wp.tid()
    jt = joints.type[j]
    p = joints.parent[j]
    c = joints.child[j]
    X_wp = parent_pose(body_q, p) * joints.X_p[j]
    X_wc = body_q[c] * joints.X_c[j]
    qs = joints.q_start[j]
    ds = joints.qd_start[j]
    rot_p = wp.transform_get_rotation(X_wp)
    rel = wp.quat_inverse(rot_p) * wp.transform_get_rotation(X_wc)
    qd_p = body_spatial_velocity(body_qd, p)
    qd_c = body_qd[c]
    w_rel = wp.spatial_bottom(qd_c) - wp.spatial_bottom(qd_p)
    if jt == JOINT_REVOLUTE:
        a = joints.axis[ds]
        joint_q[qs] = twist_angle(rel, a)
        joint_qd[ds] = wp.dot(w_rel, wp.quat_rotate(rot_p, a))
    elif jt == JOINT_PRISMATIC:
        a_w = wp.quat_rotate(rot_p, joints.axis[ds])
        xp = wp.transform_get_translation(X_wp)
        xc = wp.transform_get_translation(X_wc)
        d = xc - xp
        vp, vc, wpv = anchor_velocities(bodies, body_q, qd_p, qd_c, p, c, xp, xc)
        joint_q[qs] = wp.dot(d, a_w)
        joint_qd[ds] = wp.dot(vc - vp, a_w) + wp.dot(d, wp.cross(wpv, a_w))
    elif jt == JOINT_BALL:
        for k in range(4):
            joint_q[qs + k] = rel[k]
        w_local = wp.quat_rotate_inv(rot_p, w_rel)
        for k in range(3):
            joint_qd[ds + k] = w_local[k]
    elif jt == JOINT_FREE:
        X_rel = wp.transform_inverse(X_wp) * X_wc
        for k in range(7):
            joint_q[qs + k] = X_rel[k]
        # newton's convention: the child COM's velocity relative to the parent's rigid motion at that
        # point, and the relative angular velocity, both in the parent joint frame.
        v_rel = wp.spatial_top(qd_c)
        if p >= 0:
            x_com = wp.transform_point(body_q[c], bodies.com[c])
            v_rel = v_rel - wp.spatial_top(qd_p)
            v_rel = v_rel - wp.cross(wp.spatial_bottom(qd_p), x_com - wp.transform_point(body_q[p], bodies.com[p]))
        v_loc = wp.quat_rotate_inv(rot_p, v_rel)
        w_loc = wp.quat_rotate_inv(rot_p, w_rel)
        for k in range(3):
            joint_qd[ds + k] = v_loc[k]
            joint_qd[ds + 3 + k] = w_loc[k]
    elif jt == JOINT_D6:
        dim = joints.dof_dim[j]
        n_lin = dim[0]
        n_ang = dim[1]
        xp = wp.transform_get_translation(X_wp)
        xc = wp.transform_get_translation(X_wc)
        d = xc - xp
        vp, vc, wpv = anchor_velocities(bodies, body_q, qd_p, qd_c, p, c, xp, xc)
        for k in range(n_lin):
            a_w = wp.quat_rotate(rot_p, joints.axis[ds + k])
            joint_q[qs + k] = wp.dot(d, a_w)
            joint_qd[ds + k] = wp.dot(vc - vp, a_w) + wp.dot(d, wp.cross(wpv, a_w))
        if n_ang == 1:
            a = joints.axis[ds + n_lin]
            joint_q[qs + n_lin] = twist_angle(rel, a)
            joint_qd[ds + n_lin] = wp.dot(w_rel, wp.quat_rotate(rot_p, a))
        elif n_ang == 2:
            ang, u, n = d6_universal_axes(rot_p, rel, joints, ds + n_lin)
            for k in range(2):
                joint_q[qs + n_lin + k] = ang[k]
                joint_qd[ds + n_lin + k] = wp.dot(wp.vec3(u[0, k], u[1, k], u[2, k]), w_rel)
        elif n_ang == 3:
            ang, u = d6_euler_axes(rot_p, rel, joints, ds + n_lin)
            rates = d6_euler_rates(u, w_rel)
            for k in range(3):
                joint_q[qs + n_lin + k] = ang[k]
                joint_qd[ds + n_lin + k] = rates[k]


@wp.func
def d6_wrenches(
    bodies: BodyModel,
    joints: JointModel,
    j: int,
    joint_f: wp.array(dtype=float),
    body_q: wp.array(dtype=wp.transform),
):
    """Parent and child wrenches of a D6 joint's generalized forces (tau = J^T f): the linear dofs'
    force sum_k f_k a_k [N] at the two anchors, the angular dofs' torque [N m]: f a for one axis,
    sum_k f_k g_k for two (``universal_axes``' gradients) and U^-T f for three (``d6_euler_axes``; at
    its singular pose U f): the torque whose power tau . w is sum_k f_k qd_k. A force that
    is not finite counts as 0 for the step."""
    p = joints.parent[j]
    c = joints.child[j]
    ds = joints.qd_start[j]
    dim = joints.dof_dim[j]
    n_lin = dim[0]
    n_ang = dim[1]
    X_wp = parent_pose(body_q, p) * joints.X_p[j]
    X_wc = body_q[c] * joints.X_c[j]
    rot_p = wp.transform_get_rotation(X_wp)
    force = wp.vec3(0.0)
    for k in range(n_lin):
        f = joint_f[ds + k]
        if wp.isfinite(f):
            force = force + wp.quat_rotate(rot_p, joints.axis[ds + k]) * f
    torque = wp.vec3(0.0)
    if n_ang == 1:
        f = joint_f[ds + n_lin]
        if wp.isfinite(f):
            torque = wp.quat_rotate(rot_p, joints.axis[ds + n_lin]) * f
    elif n_ang >= 2:
        fa = wp.vec3(0.0)
        for k in range(n_ang):
            f = joint_f[ds + n_lin + k]
            if wp.isfinite(f):
                fa[k] = f
        rel = wp.quat_inverse(rot_p) * wp.transform_get_rotation(X_wc)
        if n_ang == 2:
            # The coordinates' gradients g_k (dq_k = g_k . w): sum_k f_k g_k does the work f . qd.
            ang2, u2, n2 = d6_universal_axes(rot_p, rel, joints, ds + n_lin)
            torque = u2 * fa
        else:
            ang3, u = d6_euler_axes(rot_p, rel, joints, ds + n_lin)
            if wp.abs(wp.determinant(u)) > 1.0e-6:
                torque = wp.transpose(wp.inverse(u)) * fa
            else:
                torque = u * fa
    rc = wp.transform_get_translation(X_wc) - wp.transform_point(body_q[c], bodies.com[c])
    wc_out = wp.spatial_vector(force, torque + wp.cross(rc, force))
    wp_out = wp.spatial_vector()
    if p >= 0:
        rp = wp.transform_get_translation(X_wp) - wp.transform_point(body_q[p], bodies.com[p])
        wp_out = wp.spatial_vector(-force, -torque + wp.cross(rp, -force))
    return wp_out, wc_out


@wp.kernel
def compute_joint_wrenches(
    # Model:
    bodies: BodyModel,
    joints: JointModel,
    # Control:
    joint_f: wp.array(dtype=float),
    # State:
    body_q: wp.array(dtype=wp.transform),
    # Scratch: one wrench (force, torque about the COM) per joint slot
    slot_wrench: wp.array(dtype=wp.spatial_vector),
):
    """Map generalized joint forces to equal and opposite body wrenches (virtual work: tau = J^T f).

    revolute: torque f a on the child, -f a on the parent [N m]. prismatic: force f a at the child
    anchor and -f a at the parent anchor [N], with their moments about each centre of mass.
    A force that is not finite counts as 0 for the step.
    """
    j = wp.tid()
    jt = joints.type[j]
    p = joints.parent[j]
    c = joints.child[j]
    wp_out = wp.spatial_vector()
    wc_out = wp.spatial_vector()
    if joints.enabled[j] != 0 and (jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC):
        ds = joints.qd_start[j]
        X_wp = parent_pose(body_q, p) * joints.X_p[j]
        a_w = wp.quat_rotate(wp.transform_get_rotation(X_wp), joints.axis[ds])
        f = joint_f[ds]
        if not wp.isfinite(f):
            f = 0.0  # a NaN or inf command applies no force this step (as a winch holds)
        if jt == JOINT_REVOLUTE:
            wc_out = wp.spatial_vector(wp.vec3(0.0), a_w * f)
            wp_out = wp.spatial_vector(wp.vec3(0.0), -a_w * f)
        else:
            X_wc = body_q[c] * joints.X_c[j]
            rc = wp.transform_get_translation(X_wc) - wp.transform_point(body_q[c], bodies.com[c])
            wc_out = wp.spatial_vector(a_w * f, wp.cross(rc, a_w * f))
            if p >= 0:
                rp = wp.transform_get_translation(X_wp) - wp.transform_point(body_q[p], bodies.com[p])
                wp_out = wp.spatial_vector(-a_w * f, wp.cross(rp, -a_w * f))
    if joints.enabled[j] != 0 and jt == JOINT_D6:
        wp_out, wc_out = d6_wrenches(bodies, joints, j, joint_f, body_q)
    slot_wrench[2 * j] = wp_out
    slot_wrench[2 * j + 1] = wc_out


@wp.struct
class BodyPair:
    """The two bodies of one joint, constant during its block solve: world inverse masses and COM
    offsets."""

    inv_m_p: float
    inv_m_c: float
    inv_i_p: wp.mat33
    inv_i_c: wp.mat33
    com_p: wp.vec3
    com_c: wp.vec3


@wp.func
def project_block(k: wp.mat33d, axis: wp.vec3d):
    """``P k P + s a a^T``, ``P = 1 - a a^T``, ``s = tr(k) / 3``: the block ``k`` restricted to the plane
    across the unit ``axis`` (a free direction of the joint), kept invertible and at ``k``'s scale.
    A system ``(P k P + s a a^T) x = P b`` has the solution ``x`` across ``a``."""
    # P k P = k - a (k a)^T - (k a) a^T + (a . k a) a a^T, with outer products instead of matrix products.
    ka = k * axis
    return (
        k
        - wp.outer(axis, ka)
        - wp.outer(ka, axis)
        + (wp.dot(axis, ka) + wp.trace(k) / wp.float64(3.0)) * wp.outer(axis, axis)
    )


@wp.func
def joint_block_correction(
    bp: BodyPair,
    r_p: wp.vec3,
    r_c: wp.vec3,
    err_lin: wp.vec3,
    err_ang: wp.vec3,
    has_ang: bool,
    lin_axes: wp.mat33,
    lin_mode: wp.vec3i,
    lin_alpha: wp.vec3,
    ang_axes: wp.mat33,
    ang_mode: wp.vec3i,
    ang_alpha: wp.vec3,
    lin_relax: float,
    ang_relax: float,
):
    """Pose changes that remove a joint's anchor error and orientation error together, with the
    rows of the joint's own coordinates (drives and limits) in the same system.

    ``err_lin = x_c - x_p`` [m] is the anchor error; ``err_ang`` [rad] the orientation error of the
    child relative to the parent as a world rotation vector (``has_ang`` false: no orientation rows,
    a ball joint or a D6 joint with three angular axes; a universal joint's is along the one
    direction its lock constrains, across both free axes). A positional impulse ``p_l`` [kg m] at the
    anchors and an angular impulse ``p_a`` [kg m^2] (+ on the child, - on the parent) change the
    errors by

        [e_l]     [K_ll   K_la] [p_l]     K_ll = (1/m_p + 1/m_c) 1 + sum_b [r_b]x J_b [r_b]x^T
        [e_a]  += [K_la^T K_aa] [p_a],    K_la = sum_b [r_b]x^T J_b,  K_aa = J_p + J_c

    (J_b the world inverse inertia, r_b the arm from body b's COM to its anchor; Mueller et al. 2020,
    eq. 2-3, for all rows of the joint at once). XPBD with zero compliance solves this linearized
    system for ``-(lin_relax e_l, ang_relax e_a)`` through the Schur complement of K_aa, in float64
    (for a light body on a long lever, ``K_ll``'s eigenvalues are 1e6 apart). The pose changes are
    COM translations [m] and rotation vectors [rad] of both bodies.

    The joint's coordinate axes: up to three orthonormal linear axes (the rows of ``lin_axes``, world)
    and up to two orthonormal angular axes (the rows of ``ang_axes``: a hinge's axis, or a universal
    joint's u_0, u_1), each with a mode: 0 no such axis, 1 free, 2 a coordinate row.
    A free axis is projected out (``project_block``: the error's component along it is ignored, the
    impulse has none). An axis with a row is part of the system: the caller puts the row's right-hand
    side into the error's component along it (``C + alpha~ lambda`` of a drive, ``q - bound`` of a
    violated limit), and ``lin_alpha[k]`` / ``ang_alpha[k]`` = alpha~ is the row's compliance [1/kg on a
    linear axis, 1/(kg m^2) on an angular one: K's units on that axis]. XPBD's multiplier update for
    all rows of the joint,

        (K + diag(alpha~)) dlambda = -relax (C + alpha~ lambda),

    has compliance on the coordinate rows only (``alpha~ a a^T`` added to K_ll or K_aa; 0 for a
    limit, 1 / ((ke + kd/dt) dt^2) for a drive); its fixed point C + alpha~ lambda = 0 does not
    depend on ``relax``. A row's multiplier step is ``a . p`` (the impulse's component along its
    axis), returned per linear and per angular axis [kg m or kg m^2 rad]. Solving the rows
    with the anchor rows gives each the effective mass its coordinate really has: a hinge whose link
    has COM inertia I and mass m at arm r turns as I + m r^2 (the Schur complement of the held rows),
    not as the I of a rotation about the COM, which a separate scalar row uses.

    A scalar row per error direction (``n = e / |e|``, ``w = n^T K n``) is exact only when ``n`` is an
    eigenvector of K, and rows solved one after another are exact only when K couples them weakly.
    A light link on a long lever breaks the first (its along-lever anchor error stalled at any
    iteration count and the link left its hinge), a body with a soft inertia axis on a fixed joint's
    arm the second, a drive on a hinge whose link's COM is off the axis both: its scalar row's
    compliance was weighed against the wrong mass, and the drive fed energy in (docs/xpbd.md,
    "Joint rows", "Drives").
    Returns (dx_p, dth_p, dx_c, dth_c, dlambda_lin, dlambda_ang, apply).
    """
    zero = wp.vec3(0.0)
    inv_m = bp.inv_m_p + bp.inv_m_c
    if inv_m <= 0.0:
        return zero, zero, zero, zero, zero, zero, False
    i3 = wp.identity(3, dtype=wp.float64)
    jp = wp.mat33d(bp.inv_i_p)
    jc = wp.mat33d(bp.inv_i_c)
    # Per body, A = [r]x^T J is its share of K_la and A [r]x = [r]x J [r]x^T its share of K_ll.
    sc = wp.skew(wp.vec3d(r_c))
    k_la = wp.transpose(sc) * jc
    k_ll = wp.float64(inv_m) * i3 + k_la * sc
    k_aa = jc
    if bp.inv_m_p > 0.0:
        sp = wp.skew(wp.vec3d(r_p))
        a_p = wp.transpose(sp) * jp
        k_la = k_la + a_p
        k_ll = k_ll + a_p * sp
        k_aa = k_aa + jp
    b_l = wp.vec3d(err_lin) * wp.float64(-lin_relax)
    b_a = wp.vec3d(err_ang) * wp.float64(-ang_relax)
    for k in range(3):
        al = wp.vec3d(lin_axes[k])
        if lin_mode[k] == 1:
            k_ll = project_block(k_ll, al)
            k_la = k_la - wp.outer(al, wp.transpose(k_la) * al)  # P k_la
            b_l = b_l - al * wp.dot(al, b_l)
        elif lin_mode[k] == 2:
            k_ll = k_ll + wp.float64(lin_alpha[k]) * wp.outer(al, al)  # the coordinate row's compliance
    for k in range(3):
        aa = wp.vec3d(ang_axes[k])
        if ang_mode[k] == 1:
            k_aa = project_block(k_aa, aa)
            k_la = k_la - wp.outer(k_la * aa, aa)  # k_la P
            b_a = b_a - aa * wp.dot(aa, b_a)
        elif ang_mode[k] == 2:
            k_aa = k_aa + wp.float64(ang_alpha[k]) * wp.outer(aa, aa)
    p_l = wp.vec3d()
    p_a = wp.vec3d()
    if has_ang and wp.determinant(k_aa) > wp.float64(0.0):
        a_inv = wp.inverse(k_aa)
        schur = k_ll - k_la * (a_inv * wp.transpose(k_la))
        if not (wp.determinant(schur) > wp.float64(0.0)):
            return zero, zero, zero, zero, zero, zero, False
        p_l = wp.inverse(schur) * (b_l - k_la * (a_inv * b_a))
        p_a = a_inv * (b_a - wp.transpose(k_la) * p_l)
    else:
        # No orientation rows, or no body that can turn (both inverse inertias zero): anchors only.
        if not (wp.determinant(k_ll) > wp.float64(0.0)):
            return zero, zero, zero, zero, zero, zero, False
        p_l = wp.inverse(k_ll) * b_l
    # Body responses in float64: the rotation from p_l is J (r x p_l), and r x p_l is small where
    # p_l runs along the lever, which a float32 p_l would round away.
    dx_c = wp.vec3(p_l * wp.float64(bp.inv_m_c))
    dx_p = wp.vec3(p_l * wp.float64(-bp.inv_m_p))
    dth_c = wp.vec3(jc * (wp.cross(wp.vec3d(r_c), p_l) + p_a))
    dth_p = wp.vec3(-(jp * (wp.cross(wp.vec3d(r_p), p_l) + p_a)))
    # The coordinate rows' multiplier steps (0 where an axis is free or absent: p has no part along it).
    dlam_lin = wp.vec3(
        float(wp.dot(wp.vec3d(lin_axes[0]), p_l)),
        float(wp.dot(wp.vec3d(lin_axes[1]), p_l)),
        float(wp.dot(wp.vec3d(lin_axes[2]), p_l)),
    )
    dlam_ang = wp.vec3(
        float(wp.dot(wp.vec3d(ang_axes[0]), p_a)),
        float(wp.dot(wp.vec3d(ang_axes[1]), p_a)),
        float(wp.dot(wp.vec3d(ang_axes[2]), p_a)),
    )
    return dx_p, dth_p, dx_c, dth_c, dlam_lin, dlam_ang, True


@wp.func
def root_joint_correction(
    bp: BodyPair,
    r_c: wp.vec3,
    err_lin: wp.vec3,
    err_ang: wp.vec3,
    axis: wp.vec3,
    angular: bool,
    mode: int,
    alpha: float,
    lin_relax: float,
    ang_relax: float,
):
    """``joint_block_correction`` in closed form for a joint whose parent cannot move, with all
    three orientation rows and at most one coordinate axis (revolute, prismatic or fixed on a
    static, kinematic or world parent): the child alone answers.

    With one body the block is K = H^T M^-1 H, H = [[1, 0], [[r]x, 1]] (an impulse p = (p_l, p_a)
    at the anchor moves the body by d = M^-1 H p, and the errors by H^T d), so K^-1 = H^-1 M H^-T
    and every product with it is one with the body's mass matrix M = diag(m 1, I_w) between two
    6-vectors ``H^-T x = (x_l + r x x_a, x_a)``. For the right-hand side b = -(lin_relax e_l,
    ang_relax e_a) and the coordinate axis's row direction e ((a, 0) on a linear axis, (0, a) on an
    angular one):

        hard rows only (a fixed joint, a violated limit):  d = H^-T b  (the error removed exactly, mu = 0)
        a compliant row, alpha~ = ``alpha``:               d = H^-T (b - mu e),
                                                           mu = alpha~ e.u / (1 + alpha~ e.v)
        a free axis:                                       mu = e.u / e.v  (no impulse along e)

    with e.u = (H^-T e)^T M (H^-T b) and e.v = (H^-T e)^T M (H^-T e) (Sherman-Morrison on the
    rank-one compliance; the free axis is its infinite-compliance limit). The row's multiplier
    step is e . p = e.u - mu e.v. Equal to the general Schur solve up to rounding (checked against
    it in ``tests/solvers/test_joint_gauss_seidel.py``). It inverts only the child's inverse inertia
    (float64), never the Schur complement, whose eigenvalues spread to 1e6 for a light body on a long
    lever. ``mode`` 0: no
    coordinate axis (fixed joint), 1 free, 2 a row. Returns (dx_c, dth_c, dlambda, apply)."""
    zero = wp.vec3(0.0)
    b_l = err_lin * (-lin_relax)
    b_a = err_ang * (-ang_relax)
    g_bl = b_l + wp.cross(r_c, b_a)
    if mode == 0:
        return g_bl, b_a, 0.0, True
    g_el = axis
    g_ea = zero
    if angular:
        g_el = wp.cross(r_c, axis)
        g_ea = axis
    # M-weighted products: the world inertia I_w = J_w^-1 (from the same inverse inertia the general
    # solve uses, so both see one body).
    inertia = wp.inverse(wp.mat33d(bp.inv_i_c))
    m = 1.0 / bp.inv_m_c
    i_ea = wp.vec3(inertia * wp.vec3d(g_ea))
    eu = m * wp.dot(g_el, g_bl) + wp.dot(i_ea, b_a)
    ev = m * wp.dot(g_el, g_el) + wp.dot(i_ea, g_ea)
    mu = float(0.0)
    if mode == 1:
        if not (ev > 0.0):
            return zero, zero, 0.0, False
        mu = eu / ev
    elif alpha > 0.0:
        mu = alpha * eu / (1.0 + alpha * ev)
    return g_bl - g_el * mu, b_a - g_ea * mu, eu - mu * ev, True


@wp.func
def solve_joint_block(
    bp: BodyPair,
    r_p: wp.vec3,
    r_c: wp.vec3,
    err_lin: wp.vec3,
    err_ang: wp.vec3,
    has_ang: bool,
    n_lin: int,
    n_ang: int,
    lin_axes: wp.mat33,
    lin_mode: wp.vec3i,
    lin_alpha: wp.vec3,
    ang_axes: wp.mat33,
    ang_mode: wp.vec3i,
    ang_alpha: wp.vec3,
    lin_relax: float,
    ang_relax: float,
):
    """A joint's block: ``root_joint_correction`` where it applies (the parent cannot move, the child
    can move and turn, orientation rows and at most one coordinate axis), else
    ``joint_block_correction``. Same returns as the latter."""
    zero = wp.vec3(0.0)
    if bp.inv_m_p == 0.0 and bp.inv_m_c > 0.0 and has_ang and n_lin + n_ang <= 1 and wp.trace(bp.inv_i_c) > 0.0:
        angular = n_ang == 1
        axis = lin_axes[0]
        mode = lin_mode[0]
        alpha = lin_alpha[0]
        if angular:
            axis = ang_axes[0]
            mode = ang_mode[0]
            alpha = ang_alpha[0]
        dx_c, dth_c, dlam, ok = root_joint_correction(
            bp, r_c, err_lin, err_ang, axis, angular, mode, alpha, lin_relax, ang_relax
        )
        dlam_lin = zero
        dlam_ang = zero
        if angular:
            dlam_ang = wp.vec3(dlam, 0.0, 0.0)
        else:
            dlam_lin = wp.vec3(dlam, 0.0, 0.0)
        return zero, zero, dx_c, dth_c, dlam_lin, dlam_ang, ok
    return joint_block_correction(
        bp,
        r_p,
        r_c,
        err_lin,
        err_ang,
        has_ang,
        lin_axes,
        lin_mode,
        lin_alpha,
        ang_axes,
        ang_mode,
        ang_alpha,
        lin_relax,
        ang_relax,
    )


@wp.func
def coordinate_row(
    q: float,
    lo: float,
    hi: float,
    ke: float,
    kd: float,
    armature: float,
    dt: float,
    q_prev: float,
    qd_prev: float,
    target_pos: float,
    target_vel: float,
    lam: float,
    angular: bool,
):
    """The row of one joint coordinate ``q`` [m or rad] in an XPBD pass: a violated limit (hard,
    unilateral: C = q - bound, it pushes q back to the bound and replaces the drive for that pass),
    else the drive and the armature (compliant):

        C = q - q*,  q* = (ke q_t + (kd/dt)(q_n + dt qd_t) + (I_a/dt^2)(q_n + dt qd_n)) / k,
        k = ke + kd/dt + I_a/dt^2,  alpha~ = 1 / (k dt^2)

    with q_n, qd_n the coordinate and its rate at the step start. The drive is implicit PD; the
    armature I_a [kg m^2 or kg] is the coordinate's own inertia, as MuJoCo adds it in joint space:
    implicit Euler of I_a qdd = tau is the energy (I_a/dt^2)/2 (q - q_n - dt qd_n)^2, a spring of
    stiffness I_a/dt^2 toward the coordinate's inertial prediction, which the row adds to the drive's
    (they share C's gradient). It acts on the coordinate's own rate, the relative rate of the two
    bodies, not on the child's absolute rotation. An angular drive error is the shortest angle, so a
    drive never winds the long way round. Returns (mode, rhs, alpha~, is_drive): mode 1 = free (no
    row), 2 = a row whose right-hand side is rhs = C + alpha~ lambda."""
    if q < lo:
        return 2, q - lo, 0.0, False
    if q > hi:
        return 2, q - hi, 0.0, False
    inertial = armature / (dt * dt)
    k_eff = ke + kd / dt + inertial
    if k_eff > 0.0:
        q_star = (ke * target_pos + (kd / dt) * (q_prev + dt * target_vel) + inertial * (q_prev + dt * qd_prev)) / k_eff
        cdrive = q - q_star
        if angular and (cdrive > wp.pi or cdrive < -wp.pi):
            # The shortest angle; within (-pi, pi] already in all but a target set a turn away
            # (three transcendental calls per row and pass otherwise).
            cdrive = wp.atan2(wp.sin(cdrive), wp.cos(cdrive))
        alpha = 1.0 / (k_eff * dt * dt)
        return 2, cdrive + alpha * lam, alpha, True
    return 1, 0.0, 0.0, False


VARIANT_MODULE = "newton_tendon.kernels.joints_variants"
"""Warp module of the ``solve_joints`` variants (``solve_joint_kernel``): only models that need one
compile them."""


def _make_joint_pass(universal: bool, armature: bool, groups: bool):
    """The joint pass's kernel function: ``groups`` selects Gauss-Seidel over joint groups (else
    Jacobi over joints); ``universal`` compiles the rows of universal joints (D6 joints with two
    angular axes) in, ``armature`` the coordinates' armature (``Model.joint_row_armature``). Without
    them those branches are empty: a variant is used only for models that have none, and their code
    in the kernel slowed every joint pass on the CPU (universal rows 4 %, armature reads 6 %, on a
    pendulum chain at 256 worlds). The joint's code is inline in the loop: as a Warp function it
    was not inlined on the CPU and copied its struct arguments at every call."""

    def joint_pass(
        # Model:
        bodies: BodyModel,
        joints: JointModel,
        linear_relaxation: float,
        angular_relaxation: float,
        dt: float,
        # Gauss-Seidel only: the groups (CSR), their count, groups per thread and the direction.
        group_start: wp.array(dtype=wp.int32),
        group_joint: wp.array(dtype=wp.int32),
        group_count: int,
        chunk: int,
        reverse: int,
        # Control:
        joint_target_pos: wp.array(dtype=float),
        joint_target_vel: wp.array(dtype=float),
        # State: joint coordinates at the step start; predicted poses (read only for Jacobi, corrected
        # in place by Gauss-Seidel)
        joint_q_prev: wp.array(dtype=float),
        joint_qd_prev: wp.array(dtype=float),
        body_q: wp.array(dtype=wp.transform),
        # Scratch:
        joint_lambda: wp.array(dtype=float),
        slot_delta: wp.array(dtype=wp.spatial_vector),
        body_delta: wp.array(dtype=wp.spatial_vector),
    ):
        """One pass over joints: each joint's anchor, orientation and coordinate rows solved together
        as one block (``joint_block_correction``), from the current poses.

        Jacobi (``solve_joints``, a thread per joint): every joint reads the same poses and the pose
        change of each body goes to the joint's two slots, which ``apply_slot_pose_deltas`` adds up.
        Gauss-Seidel (``solve_joint_groups``, a thread per ``chunk`` groups): a group is a set of joints
        linked through moving bodies (``solvers._joint_groups``), so no two threads touch one body;
        joint by joint, root to leaves (leaves to root when ``reverse`` is 1), the correction is
        computed from the poses the joints before it left and applied at once (``move_body``), with
        no relaxation needed against neighbours moving at the same time: a chain's joints pass a
        correction along within one pass instead of one link per Jacobi pass.

        The coordinate row of a revolute or prismatic joint is a violated limit (hard, unilateral: the
        row exists only while q is outside [lower, upper], C = q - bound, and it pushes q back to the
        bound; it replaces the drive for that pass) or else the drive, the only compliant row:

            C = q - q*,  q* = (ke q_t + (kd/dt)(q_n + dt qd_t)) / (ke + kd/dt),  alpha~ = 1 / ((ke + kd/dt) dt^2)

        q [rad or m] is the joint coordinate (twist angle about the axis, or the anchors' offset along
        it), its gradient the unit axis a_w (a rotation of the child relative to the parent about a_w,
        or a translation of the child anchor along it). At convergence lambda / dt^2 = ke (q_t - q)
        + kd (qd_t - (q - q_n)/dt): implicit Euler of the PD force, dissipative for any gain. The block
        solves (K + alpha~ a a^T) dp = -relax (C + alpha~ lambda) for all rows of the joint, so the
        drive's compliance is weighed against the coordinate's effective mass with the anchor held
        (I + m r^2 for a link at arm r on a hinge), and lambda <- lambda + a . dp.
        """
        tid = wp.tid()
        first = tid
        last = tid + 1
        if wp.static(groups):
            g = tid * chunk
            first = group_start[g]
            last = group_start[wp.min(g + chunk, group_count)]
        for i in range(last - first):
            j = first + i
            if wp.static(groups):
                if reverse != 0:
                    j = group_joint[last - 1 - i]
                else:
                    j = group_joint[first + i]
            jt = joints.type[j]
            p = joints.parent[j]
            c = joints.child[j]
            if joints.enabled[j] == 0 or jt == JOINT_FREE:
                if wp.static(not groups):
                    slot_delta[2 * j] = wp.spatial_vector()
                    slot_delta[2 * j + 1] = wp.spatial_vector()
                continue

            bp = BodyPair()
            q_p = parent_pose(body_q, p)
            q_c = body_q[c]
            bp.inv_m_p = 0.0
            bp.inv_i_p = wp.mat33(0.0)
            bp.com_p = wp.vec3(0.0)
            if p >= 0:
                bp.com_p = bodies.com[p]
                if is_moving_body(bodies, p):
                    bp.inv_m_p = bodies.inv_mass[p]
                    bp.inv_i_p = world_inv_inertia(q_p, bodies.inv_inertia[p])
            bp.com_c = bodies.com[c]
            bp.inv_m_c = 0.0
            bp.inv_i_c = wp.mat33(0.0)
            if is_moving_body(bodies, c):
                bp.inv_m_c = bodies.inv_mass[c]
                bp.inv_i_c = world_inv_inertia(q_c, bodies.inv_inertia[c])
            dx_p = wp.vec3(0.0)
            dth_p = wp.vec3(0.0)
            dx_c = wp.vec3(0.0)
            dth_c = wp.vec3(0.0)
            ds = joints.qd_start[j]
            qs = joints.q_start[j]
            dim = joints.dof_dim[j]
            n_lin = dim[0]
            n_ang = dim[1]
            # Coordinate rows on revolute, prismatic and D6 axes (a ball joint's dofs have no limit or drive).
            has_coord = jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC or jt == JOINT_D6
            X_wp = q_p * joints.X_p[j]
            X_wc = q_c * joints.X_c[j]
            rot_p = wp.transform_get_rotation(X_wp)
            rot_c = wp.transform_get_rotation(X_wc)
            x_p = wp.transform_get_translation(X_wp)
            x_c = wp.transform_get_translation(X_wc)
            d = x_c - x_p

            # Linear axes: each free, or a row (a violated limit, hard, else the drive, compliant) whose
            # right-hand side replaces the anchor error's component along it.
            any_row = bool(False)
            lin_axes = wp.mat33(0.0)
            lin_mode = wp.vec3i(0)
            lin_alpha = wp.vec3(0.0)
            lin_drive = wp.vec3i(0)
            lin_lam = wp.vec3(0.0)
            d_lock = d
            along = wp.vec3(0.0)
            for k in range(n_lin):
                a_w = wp.quat_rotate(rot_p, joints.axis[ds + k])
                lin_axes[k] = a_w
                q = wp.dot(d, a_w)
                d_lock = d_lock - a_w * q
                along = along + a_w * q
                mode = int(1)
                rhs = float(0.0)
                if has_coord:
                    lin_lam[k] = joint_lambda[ds + k]
                    alpha = float(0.0)
                    is_drive = False
                    arm = float(0.0)
                    qd_n = float(0.0)
                    if wp.static(armature):
                        arm = joints.armature[ds + k]
                        qd_n = joint_qd_prev[ds + k]
                    mode, rhs, alpha, is_drive = coordinate_row(
                        q,
                        joints.limit_lower[ds + k],
                        joints.limit_upper[ds + k],
                        joints.target_ke[ds + k],
                        joints.target_kd[ds + k],
                        arm,
                        dt,
                        joint_q_prev[qs + k],
                        qd_n,
                        joint_target_pos[ds + k],
                        joint_target_vel[ds + k],
                        lin_lam[k],
                        False,
                    )
                    lin_alpha[k] = alpha
                    if is_drive:
                        lin_drive[k] = 1
                lin_mode[k] = mode
                if mode == 2:
                    any_row = True
                    d_lock = d_lock + a_w * rhs

            # Orientation: no angular axis locks the whole rotation; one free angular axis locks the swing
            # that carries the parent's axis onto the child's, and its twist is the coordinate; two (a
            # universal joint) lock the third successive rotation (``d6_universal_axes``); three free
            # angular axes lock nothing (ball).
            has_ang = n_ang < 3
            err_ang = wp.vec3(0.0)
            ang_axes = wp.mat33(0.0)
            ang_mode = wp.vec3i(0)
            ang_alpha = wp.vec3(0.0)
            ang_drive = wp.vec3i(0)
            ang_lam = wp.vec3(0.0)
            ang_q = wp.vec3(0.0)
            if n_ang == 0:
                err_ang = quat_to_rotation_vector(rot_c * wp.quat_inverse(rot_p))
            elif n_ang == 1:
                axis = joints.axis[ds + n_lin]
                ang_axes[0] = wp.quat_rotate(rot_p, axis)
                a_c = wp.quat_rotate(rot_c, axis)
                s = wp.cross(ang_axes[0], a_c)
                sn = wp.length(s)
                if sn > 1.0e-9:
                    err_ang = s * (wp.atan2(sn, wp.dot(a_c, ang_axes[0])) / sn)
                ang_mode[0] = 1
                ang_q[0] = twist_angle(wp.quat_inverse(rot_p) * rot_c, axis)
            elif n_ang == 2:
                if wp.static(universal):
                    # The lock's error: the child's a_1 tilted out of the plane normal to the parent's
                    # a_0 by the residual angle q_2 about n (``universal_axes``).
                    ang, u, n = d6_universal_axes(rot_p, wp.quat_inverse(rot_p) * rot_c, joints, ds + n_lin)
                    err_ang = n * ang[2]
                    for k in range(2):
                        ang_axes[k] = wp.vec3(u[0, k], u[1, k], u[2, k])
                        ang_mode[k] = 1
                        ang_q[k] = ang[k]
            if has_coord and (n_ang == 1 or n_ang == 2):
                for k in range(n_ang):
                    dk = ds + n_lin + k
                    ang_lam[k] = joint_lambda[dk]
                    mode = int(1)
                    rhs = float(0.0)
                    alpha = float(0.0)
                    is_drive = False
                    arm = float(0.0)
                    qd_n = float(0.0)
                    if wp.static(armature):
                        arm = joints.armature[dk]
                        qd_n = joint_qd_prev[dk]
                    mode, rhs, alpha, is_drive = coordinate_row(
                        ang_q[k],
                        joints.limit_lower[dk],
                        joints.limit_upper[dk],
                        joints.target_ke[dk],
                        joints.target_kd[dk],
                        arm,
                        dt,
                        joint_q_prev[qs + n_lin + k],
                        qd_n,
                        joint_target_pos[dk],
                        joint_target_vel[dk],
                        ang_lam[k],
                        True,
                    )
                    ang_mode[k] = mode
                    ang_alpha[k] = alpha
                    if is_drive:
                        ang_drive[k] = 1
                    if mode == 2:
                        any_row = True
                        err_ang = err_ang + ang_axes[k] * rhs
            if any_row or wp.length(d_lock) > 1.0e-9 or wp.length(err_ang) > 1.0e-9:
                # The parent's arm reaches the point of its line (or plane) that the child anchor is at:
                # along a linear axis the anchors are q apart, and turning the parent swings its axis
                # about its COM at that point, not at its own anchor (an arm short by q made a slider
                # far out on a turning arm gain energy and blow up).
                r_p = x_p + along - wp.transform_point(q_p, bp.com_p)
                r_c = x_c - wp.transform_point(q_c, bp.com_c)
                ddx_p, ddth_p, ddx_c, ddth_c, dlam_lin, dlam_ang, ok = solve_joint_block(
                    bp,
                    r_p,
                    r_c,
                    d_lock,
                    err_ang,
                    has_ang,
                    n_lin,
                    n_ang,
                    lin_axes,
                    lin_mode,
                    lin_alpha,
                    ang_axes,
                    ang_mode,
                    ang_alpha,
                    linear_relaxation,
                    angular_relaxation,
                )
                if ok:
                    dx_p = ddx_p
                    dth_p = ddth_p
                    dx_c = ddx_c
                    dth_c = ddth_c
                    for k in range(n_lin):
                        if lin_drive[k] != 0:
                            joint_lambda[ds + k] = lin_lam[k] + dlam_lin[k]
                    for k in range(n_ang):
                        if ang_drive[k] != 0:
                            joint_lambda[ds + n_lin + k] = ang_lam[k] + dlam_ang[k]

            if wp.static(groups):
                move_body(bodies, p, wp.spatial_vector(dx_p, dth_p), body_q, body_delta)
                move_body(bodies, c, wp.spatial_vector(dx_c, dth_c), body_q, body_delta)
            else:
                slot_delta[2 * j] = wp.spatial_vector(dx_p, dth_p)
                slot_delta[2 * j + 1] = wp.spatial_vector(dx_c, dth_c)

    return joint_pass


GROUPS_MODULE = "newton_tendon.kernels.joints_groups"
"""Warp module of the ``solve_joint_groups`` variants (the Gauss-Seidel pass, ``solve_joint_group_kernel``)."""
for _name in (VARIANT_MODULE, GROUPS_MODULE):
    wp.get_module(_name).options["enable_backward"] = False


def _suffix(universal: bool, armature: bool) -> str:
    return ("_universal" if universal else "") + ("_armature" if armature else "")


def _joint_kernel(universal: bool, armature: bool, groups: bool, module: str | None):
    name = ("solve_joint_groups" if groups else "solve_joints") + _suffix(universal, armature)
    return wp.kernel(_make_joint_pass(universal, armature, groups), name=name, module=module)


_VARIANTS = [(u, a) for u in (False, True) for a in (False, True)]
solve_joints = _joint_kernel(False, False, False, None)
_SOLVE_JOINT_VARIANTS = {
    key: solve_joints if key == (False, False) else _joint_kernel(*key, False, VARIANT_MODULE) for key in _VARIANTS
}
_SOLVE_JOINT_GROUP_VARIANTS = {key: _joint_kernel(*key, True, GROUPS_MODULE) for key in _VARIANTS}


def solve_joint_kernel(universal: bool, armature: bool):
    """The ``solve_joints`` variant (Jacobi) for a model with (or without) universal joints and row armature."""
    return _SOLVE_JOINT_VARIANTS[(bool(universal), bool(armature))]


def solve_joint_group_kernel(universal: bool, armature: bool):
    """The ``solve_joint_groups`` variant (Gauss-Seidel per group) for a model with (or without)
    universal joints and row armature."""
    return _SOLVE_JOINT_GROUP_VARIANTS[(bool(universal), bool(armature))]
