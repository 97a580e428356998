"""Joint coordinates and generalized forces: a joint's q and qd read from its bodies' poses and
velocities (``eval_joint_coordinates``), the rate axes of multi-axis joints (``universal_axes``,
``euler_axes``) and the body wrenches of generalized joint forces (``compute_joint_wrenches``)."""

import warp as wp

from newton_tendon.kernels.joints.model import JointModel, body_spatial_velocity, parent_pose
from newton_tendon.kernels.math import twist_angle
from newton_tendon.kernels.rigid import BodyModel
from newton_tendon.kernels.types import JOINT_BALL, JOINT_D6, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options({"enable_backward": False})


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
    # n = u_0 x u_1 with u_0 = e_x and u_1 = c_1p / |c_1p| in B's coordinates.
    n = to_world * (wp.vec3(0.0, -m[2, 1], m[1, 1]) / wp.sqrt(across))
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
