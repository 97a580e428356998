"""VBD for rigid bodies: the rows of a joint (anchor, orientation, limits, drive) and their dual step.

Anchor and orientation rows and the limits are augmented-Lagrangian rows (``JointDuals``); the drive
is an elastic energy, implicit PD toward the same target as XPBD's.
"""

import warp as wp

from newton_tendon.kernels.joints.coordinates import d6_universal_axes
from newton_tendon.kernels.joints.model import JointModel, parent_pose
from newton_tendon.kernels.math import quat_to_rotation_vector, twist_angle
from newton_tendon.kernels.rigid import BodyModel
from newton_tendon.kernels.types import JOINT_D6, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE
from newton_tendon.kernels.vbd_block import (
    VBD_KERNELS,
    PenaltyParams,
    add_angle_row,
    add_point_row,
    add_twist_row,
    moving_mass,
)

wp.set_module_options({"enable_backward": False})

LIMIT_NEAR = wp.constant(0.1)
"""Distance [m or rad] within which an inactive joint limit counts as about to engage."""


@wp.struct
class JointDuals:
    """Joint multipliers (State arrays, zero at each step start) and the step's penalties.

    ``lam``: anchor force [N] then orientation torque [N m]; ``lam_lim``: lower and upper limit
    force [N or N m] per dof (<= 0 when active, as a force along -dC/dx)."""

    lam: wp.array(dtype=wp.spatial_vector)
    lam_lim: wp.array(dtype=wp.vec2)
    rho_lin: wp.array(dtype=float)
    rho_ang: wp.array(dtype=float)


@wp.struct
class JointFrame:
    """A joint evaluated at the current poses: anchors, frames, its free-axis counts and effective masses."""

    x_p: wp.vec3
    x_c: wp.vec3
    rot_p: wp.quat
    rot_c: wp.quat
    n_lin: int
    n_ang: int
    has_coord: bool
    m_eff: float
    i_eff: float
    # A universal joint's (n_ang = 2) decomposition, once per frame (``d6_universal_axes``): the
    # angles (the third the lock's residual), the rate axes u_k (columns) and the locked direction n.
    uj_ang: wp.vec3
    uj_u: wp.mat33
    uj_n: wp.vec3


@wp.func
def joint_frame(bodies: BodyModel, joints: JointModel, j: int, body_q: wp.array(dtype=wp.transform)):
    jf = JointFrame()
    p = joints.parent[j]
    c = joints.child[j]
    X_wp = parent_pose(body_q, p) * joints.X_p[j]
    X_wc = body_q[c] * joints.X_c[j]
    jf.x_p = wp.transform_get_translation(X_wp)
    jf.x_c = wp.transform_get_translation(X_wc)
    jf.rot_p = wp.transform_get_rotation(X_wp)
    jf.rot_c = wp.transform_get_rotation(X_wc)
    jt = joints.type[j]
    dim = joints.dof_dim[j]
    jf.n_lin = dim[0]
    jf.n_ang = dim[1]
    # Revolute, prismatic and D6 axes carry limits and drives (a D6 with up to two angular axes); a
    # ball joint's dofs do not.
    jf.has_coord = (jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC or jt == JOINT_D6) and jf.n_ang < 3
    mp, ip = moving_mass(bodies, p)
    mc, ic = moving_mass(bodies, c)
    jf.m_eff = mp + mc
    jf.i_eff = ip + ic
    return jf


@wp.func
def universal_frame(joints: JointModel, j: int, jf: JointFrame):
    """``jf`` with a universal joint's decomposition filled in (``d6_universal_axes``; other joints
    are returned unchanged). Kept out of ``joint_frame``: the body sweep calls it only in its variant
    for models that have universal joints (``vbd_sweep``), since its code in the inlined sweep slowed
    every other model's sweep by a fifth on the CPU."""
    if jf.n_ang == 2:
        rel = wp.quat_inverse(jf.rot_p) * jf.rot_c
        ang, u, n = d6_universal_axes(jf.rot_p, rel, joints, joints.qd_start[j] + jf.n_lin)
        jf.uj_ang = ang
        jf.uj_u = u
        jf.uj_n = n
    return jf


@wp.func
def dof_coordinate(joints: JointModel, j: int, jf: JointFrame, k: int):
    """Axis (world, unit) and coordinate of the joint's dof ``k``: a linear dof's q = (x_c - x_p) . a
    [m], a single angular dof's the twist angle of the child frame about a [rad], a universal joint's
    two angles its successive rotations with their rate axes u_0, u_1 (``d6_universal_axes``: within
    the joint's motion, dq_k = u_k . dtheta). Returns (a_w, q, angular)."""
    axis = joints.axis[joints.qd_start[j] + k]
    a_w = wp.quat_rotate(jf.rot_p, axis)
    if k < jf.n_lin:
        return a_w, wp.dot(jf.x_c - jf.x_p, a_w), False
    if jf.n_ang == 2:
        i = k - jf.n_lin
        return wp.vec3(jf.uj_u[0, i], jf.uj_u[1, i], jf.uj_u[2, i]), jf.uj_ang[i], True
    return a_w, twist_angle(wp.quat_inverse(jf.rot_p) * jf.rot_c, axis), True


@wp.func
def joint_linear_error(joints: JointModel, j: int, jf: JointFrame):
    """Anchor error C = P (x_c - x_p) [m] and its projector P = 1 - sum_k a_k a_k^T over the
    joint's free linear axes (prismatic: perpendicular to its axis)."""
    proj = wp.identity(n=3, dtype=float)
    ds = joints.qd_start[j]
    for k in range(jf.n_lin):
        a_w = wp.quat_rotate(jf.rot_p, joints.axis[ds + k])
        proj = proj - wp.outer(a_w, a_w)
    return proj * (jf.x_c - jf.x_p), proj


@wp.func
def joint_angular_error(joints: JointModel, j: int, jf: JointFrame):
    """Orientation error e [rad] (rotation vector, world) and its projector.

    No free angular axis (fixed, prismatic): e = log(R_c R_p^T), de/dtheta_c = I. One (revolute):
    the swing that carries the parent axis onto the child axis, e = (a_p x a_c)/|a_p x a_c| angle,
    de/dtheta_c ~ I - a a^T. Two (universal): the lock's residual q_2 along n (``d6_universal_axes``),
    e = n q_2 (q_2 the residual angle about n), de/dtheta_c ~ n n^T. Three (ball): none.
    """
    proj = wp.identity(n=3, dtype=float)
    e = wp.vec3(0.0)
    if jf.n_ang == 0:
        e = quat_to_rotation_vector(jf.rot_c * wp.quat_inverse(jf.rot_p))
    elif jf.n_ang == 1:
        a_w = wp.quat_rotate(jf.rot_p, joints.axis[joints.qd_start[j] + jf.n_lin])
        a_c = wp.quat_rotate(jf.rot_c, wp.normalize(wp.quat_rotate_inv(jf.rot_p, a_w)))
        s = wp.cross(a_w, a_c)
        sn = wp.length(s)
        if sn > 1.0e-9:
            e = s * (wp.atan2(sn, wp.dot(a_w, a_c)) / sn)
        proj = proj - wp.outer(a_w, a_w)
    elif jf.n_ang == 2:
        n = jf.uj_n
        e = n * jf.uj_ang[2]
        proj = wp.outer(n, n)
    else:
        proj = wp.mat33(0.0)
    return e, proj


@wp.func
def coordinate_jacobian(a_w: wp.vec3, angular: bool, r: wp.vec3, side: float):
    """dq/d(dx, dtheta) of the body on ``side`` (+1 child, -1 parent): angular dof (0, a), linear
    dof (a, r x a) at the body's anchor (the rotation of the axis with the parent is neglected)."""
    if angular:
        return wp.spatial_vector(wp.vec3(0.0), a_w * side)
    return wp.spatial_vector(a_w * side, wp.cross(r, a_w) * side)


def _make_add_joint(universal: bool, armature: bool):
    """``add_joint``: joint j's rows added to one of its bodies' blocks. ``universal`` compiles the
    universal joints' decomposition (``universal_frame``) in, ``armature`` the coordinates' armature
    (``Model.joint_row_armature``); without them universal angles read zero and armature is 0. In the
    inlined body sweep each cost every model about 5 % on the CPU, so only models that have them
    compile them (``vbd_sweep``)."""

    def add_joint_rows(
        fx: wp.vec3,
        ft: wp.vec3,
        hxx: wp.mat33,
        hxt: wp.mat33,
        htt: wp.mat33,
        idle: int,
        bodies: BodyModel,
        joints: JointModel,
        duals: JointDuals,
        j: int,
        side_child: bool,
        inv_h2: float,
        dt: float,
        body_q: wp.array(dtype=wp.transform),
        joint_target_pos: wp.array(dtype=float),
        joint_target_vel: wp.array(dtype=float),
        joint_q_prev: wp.array(dtype=float),
        joint_qd_prev: wp.array(dtype=float),
    ):
        """Add joint j's rows to the block of its parent or child body (see ``newton_tendon.kernels.vbd``).
        Returns the updated (fx, ft, hxx, hxt, htt, idle)."""
        jt = joints.type[j]
        if joints.enabled[j] == 0 or jt == JOINT_FREE:
            return fx, ft, hxx, hxt, htt, idle
        jf = joint_frame(bodies, joints, j, body_q)
        if wp.static(universal):
            jf = universal_frame(joints, j, jf)
        c_lin, p_lin = joint_linear_error(joints, j, jf)
        b = joints.child[j]
        x_b = jf.x_c
        side = float(1.0)
        if not side_child:
            b = joints.parent[j]
            # The parent's point that the child anchor is at: along the free linear axes the anchors
            # are q apart (d - P d), and turning the parent swings its axis about its COM there, not
            # at its own anchor (an arm short by q let a slider flung out along a turning arm gain
            # energy without bound). Without linear axes P = 1 and this is the parent's anchor.
            x_b = jf.x_p + ((jf.x_c - jf.x_p) - c_lin)
            side = -1.0
        r = x_b - wp.transform_point(body_q[b], bodies.com[b])

        k_lin = duals.rho_lin[j] * jf.m_eff * inv_h2
        lam = duals.lam[j]
        f_lin = c_lin * k_lin + p_lin * wp.spatial_top(lam)
        fx, ft, hxx, hxt, htt = add_point_row(fx, ft, hxx, hxt, htt, r, f_lin * side, k_lin, p_lin)

        k_ang = duals.rho_ang[j] * jf.i_eff * inv_h2
        if jf.n_ang < 3:
            c_ang, p_ang = joint_angular_error(joints, j, jf)
            f_ang = c_ang * k_ang + p_ang * wp.spatial_bottom(lam)
            ft, htt = add_angle_row(ft, htt, f_ang * side, k_ang, p_ang)

        if jf.has_coord:
            ds = joints.qd_start[j]
            qs = joints.q_start[j]
            for k in range(jf.n_lin + jf.n_ang):
                a_w, q, angular = dof_coordinate(joints, j, jf, k)
                jac = coordinate_jacobian(a_w, angular, r, side)
                k_q = k_lin
                if angular:
                    k_q = k_ang
                # Limits: unilateral rows C_lo = q - lo >= 0 and C_hi = hi - q >= 0 (force <= 0 when active).
                lam_lim = duals.lam_lim[ds + k]
                f_lo = k_q * (q - joints.limit_lower[ds + k]) + lam_lim[0]
                if f_lo < 0.0:
                    fx, ft, hxx, hxt, htt = add_twist_row(fx, ft, hxx, hxt, htt, jac, f_lo, k_q)
                elif q - joints.limit_lower[ds + k] < LIMIT_NEAR:
                    idle = idle + 1
                f_hi = k_q * (joints.limit_upper[ds + k] - q) + lam_lim[1]
                if f_hi < 0.0:
                    fx, ft, hxx, hxt, htt = add_twist_row(fx, ft, hxx, hxt, htt, jac, -f_hi, k_q)
                elif joints.limit_upper[ds + k] - q < LIMIT_NEAR:
                    idle = idle + 1
                # Drive and armature: implicit PD and the coordinate's inertia (joint space, as MuJoCo) as
                # the elastic energy (ke + kd/h + I_a/h^2)/2 (q - q*)^2 (same q* as XPBD's ``coordinate_row``).
                ke = joints.target_ke[ds + k]
                kd = joints.target_kd[ds + k]
                inertial = float(0.0)
                if wp.static(armature):
                    inertial = joints.armature[ds + k] * inv_h2
                k_eff = ke + kd / dt + inertial
                if k_eff > 0.0:
                    q_prev = joint_q_prev[qs + k]
                    drive = ke * joint_target_pos[ds + k] + (kd / dt) * (q_prev + dt * joint_target_vel[ds + k])
                    q_star = drive / k_eff
                    if wp.static(armature):
                        q_star = (drive + inertial * (q_prev + dt * joint_qd_prev[ds + k])) / k_eff
                    err = q - q_star
                    if angular:
                        err = wp.atan2(wp.sin(err), wp.cos(err))
                    fx, ft, hxx, hxt, htt = add_twist_row(fx, ft, hxx, hxt, htt, jac, k_eff * err, k_eff)
        return fx, ft, hxx, hxt, htt, idle

    return add_joint_rows


add_joint = wp.func(_make_add_joint(False, False), name="add_joint")
"""Joint j's rows added to the block of its parent or child body (models without universal joints)."""
add_joint_universal = wp.func(_make_add_joint(True, True), name="add_joint_universal")
"""``add_joint`` for models with universal joints (D6 joints with two angular axes) or row armature:
both compiled in."""


@wp.kernel(module=VBD_KERNELS)
def update_joint_duals(
    # Model:
    bodies: BodyModel,
    joints: JointModel,
    params: PenaltyParams,
    dt: float,
    joint_in_tree: wp.array(dtype=wp.int32),
    # State: the current iterate
    body_q: wp.array(dtype=wp.transform),
    # Scratch:
    duals: JointDuals,
):
    """Dual step after an iteration: lambda <- k C + lambda (limits clamped to <= 0), rho grows with |C|.
    Joints of an articulation tree (``joint_in_tree``) are skipped: the articulation pass holds them
    and writes their multiplier, the locks' force from its solve."""
    j = wp.tid()
    jt = joints.type[j]
    if joints.enabled[j] == 0 or jt == JOINT_FREE or joint_in_tree[j] != 0:
        return
    inv_h2 = 1.0 / (dt * dt)
    jf = universal_frame(joints, j, joint_frame(bodies, joints, j, body_q))
    rho_lin = duals.rho_lin[j]
    rho_ang = duals.rho_ang[j]
    k_lin = rho_lin * jf.m_eff * inv_h2
    k_ang = rho_ang * jf.i_eff * inv_h2
    lam = duals.lam[j]
    c_lin, p_lin = joint_linear_error(joints, j, jf)
    lam_lin = c_lin * k_lin + p_lin * wp.spatial_top(lam)
    lam_ang = wp.vec3(0.0)
    err_lin = wp.length(c_lin)
    err_ang = float(0.0)
    if jf.n_ang < 3:
        c_ang, p_ang = joint_angular_error(joints, j, jf)
        lam_ang = c_ang * k_ang + p_ang * wp.spatial_bottom(lam)
        err_ang = wp.length(c_ang)
    duals.lam[j] = wp.spatial_vector(lam_lin, lam_ang)
    if jf.has_coord:
        ds = joints.qd_start[j]
        for k in range(jf.n_lin + jf.n_ang):
            a_w, q, angular = dof_coordinate(joints, j, jf, k)
            k_q = k_lin
            if angular:
                k_q = k_ang
            c_lo = q - joints.limit_lower[ds + k]
            c_hi = joints.limit_upper[ds + k] - q
            lam_lim = duals.lam_lim[ds + k]
            lo = wp.min(k_q * c_lo + lam_lim[0], 0.0)
            hi = wp.min(k_q * c_hi + lam_lim[1], 0.0)
            duals.lam_lim[ds + k] = wp.vec2(lo, hi)
            # A violated limit grows the penalty its coordinate row's stiffness reads: the angular one
            # for an angular dof, the linear one for a linear dof.
            viol = float(0.0)
            if lo < 0.0:
                viol = wp.max(viol, wp.abs(wp.min(c_lo, 0.0)))
            if hi < 0.0:
                viol = wp.max(viol, wp.abs(wp.min(c_hi, 0.0)))
            if angular:
                err_ang = wp.max(err_ang, viol)
            else:
                err_lin = wp.max(err_lin, viol)
    duals.rho_lin[j] = wp.min(rho_lin + params.growth * err_lin, params.rho_max)
    duals.rho_ang[j] = wp.min(rho_ang + params.growth * err_ang, params.rho_max)
