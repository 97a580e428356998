"""SolverXPBD's joint pass: each joint's position rows (anchor, orientation, limits, drives,
armature) solved as one block per joint (``solve_joint_block``), Jacobi over joints or Gauss-Seidel
over joint groups (``solve_joint_kernel``, ``solve_joint_group_kernel``)."""

import warp as wp

from newton_tendon.kernels.joints.coordinates import d6_universal_axes
from newton_tendon.kernels.joints.model import JointModel, parent_pose
from newton_tendon.kernels.math import (
    quat_to_rotation_vector,
    twist_angle,
    world_inv_inertia,
)
from newton_tendon.kernels.rigid import BodyModel, is_moving_body, move_body
from newton_tendon.kernels.types import JOINT_D6, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options({"enable_backward": False})


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
def angle_near_range(q: float, lo: float, hi: float):
    """The turn of the angle ``q`` [rad] (q or q -+ 2 pi) nearest the range [lo, hi]: q itself when
    inside it."""
    if q < lo or q > hi:
        alt = q + 2.0 * wp.pi
        if q > hi:
            alt = q - 2.0 * wp.pi
        if wp.max(wp.max(lo - alt, alt - hi), 0.0) < wp.max(lo - q, q - hi):
            return alt
    return q


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
    row), 2 = a row whose right-hand side is rhs = C + alpha~ lambda.

    An angle outside its range is read as the turn of it (q or q -+ 2 pi) nearest the range: angles
    wrap to (-pi, pi], so a wrist resting on a limit at -pi that passed it by 1e-3 rad read +3.14
    rad, 3.1 rad past its upper limit 0, and the limit row threw the hand round at 3,800 rad/s
    (dm_control's humanoid_CMU)."""
    if angular:
        q = angle_near_range(q, lo, hi)
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
