"""Vertex block descent for rigid bodies: per-body 6x6 Newton steps on an augmented-Lagrangian energy.

Each step minimizes, over the end-of-step poses x of all bodies, the incremental potential

    E(x) = sum_b (1/2h^2) |x_b - y_b|^2_M  +  sum_rows E_row(x)

with y the inertial prediction (``rigid.integrate_bodies``) and ``|.|_M`` the mass/inertia norm of
a pose difference (COM translation [m], rotation vector [rad]). Bodies are visited one colour at a
time; a body minimizes E over its own six coordinates with the others held fixed, by one Newton
step ``H d = f`` on the 6x6 block (``f = -dE/dx_b``, ``H`` a positive-definite approximation of
``d2E/dx_b^2``). Bodies of one colour share no row, so a colour updates in parallel (Chen et al.,
"Vertex Block Descent", SIGGRAPH 2024).

Hard rows (joint anchors and axes, limits, contacts with Coulomb friction) use the augmented
Lagrangian of Giles et al., "Augmented Vertex Block Descent" (SIGGRAPH 2025): a row with error C
adds ``E = (1/2) k |C|^2 + lambda . C``, i.e. the force ``F = k C + lambda`` acts along ``dC/dx``;
after every iteration the multiplier takes that force (``lambda <- k C + lambda``, clamped for
unilateral rows) and the penalty grows with the remaining error. Penalties are stored relative to
the row's inertial scale, ``k = rho m_eff / h^2`` (``m_eff`` the summed mass, or mean principal
inertia for angular rows, of the moving bodies of the row), so the same ``rho`` works for any mass
and step. Multipliers and ``rho`` restart every step (zero and ``rho_min``); the multipliers are
reported in the State (``joint_multiplier``, ``contact_multiplier``, ...). Warm-starting them from
the previous step made chains with hinge limits diverge: an impact's multiplier is far larger than
the next step needs and, with a small penalty, unwinds too slowly once the row separates.

Soft rows (drives, tendon spans) are plain elastic energies with their Hessian (Gauss-Newton).

Units: f [N, N m], H [N/m, N, N m/rad], lambda [N] (linear rows) or [N m] (angular rows).
"""

import warp as wp

from newton_tendon.kernels.cable import TendonLinearization, linearized_tension, row_tension, single_row
from newton_tendon.kernels.contacts import ContactData, pose_or_identity
from newton_tendon.kernels.joints import JointModel, parent_pose
from newton_tendon.kernels.math import bounded_pose_delta, quat_to_rotation_vector, twist_angle, world_inertia
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.transmission import (
    ROWS,
    CouplingModel,
    CouplingWork,
    TransmissionModel,
    TransmissionScratch,
    TransmissionWork,
    body_jacobian,
    coupling_jacobian,
    iterate_rate,
)
from newton_tendon.kernels.types import JOINT_BALL, JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options({"enable_backward": False})

LIMIT_NEAR = wp.constant(0.1)
"""Distance [m or rad] within which an inactive joint limit counts as about to engage."""


@wp.struct
class PenaltyParams:
    """Augmented-Lagrangian penalty schedule (dimensionless ``rho``, see module docstring)."""

    rho_min: float
    rho_max: float
    growth: float
    """Penalty growth per iteration per unit error [1/m or 1/rad]: rho += growth |C|."""


@wp.struct
class JointDuals:
    """Joint multipliers (State arrays, zero at each step start) and the step's penalties.

    ``lam``: anchor force [N] then orientation torque [N m]; ``lam_lim``: lower and upper limit
    force [N or N m] (<= 0 when active, as a force along -dC/dx)."""

    lam: wp.array(dtype=wp.spatial_vector)
    lam_lim: wp.array(dtype=wp.vec2)
    rho_lin: wp.array(dtype=float)
    rho_ang: wp.array(dtype=float)


@wp.struct
class ContactDuals:
    """Contact multipliers per slot (State array): normal force [N] (<= 0 pushes apart), then the
    tangential friction force [N]; and the step's penalties."""

    lam: wp.array(dtype=wp.vec4)
    rho: wp.array(dtype=float)


@wp.func
def contact_lambda_t(duals: ContactDuals, c: int):
    v = duals.lam[c]
    return wp.vec3(v[1], v[2], v[3])


# ----------------------------------------------------------------------------------------------
# Block assembly
#
# The 6x6 Newton system of one body is carried as separate values (a struct carried through the
# row loop stayed in memory and was copied per row): f = -dE/d(dx, dtheta) as ``fx`` [N] and ``ft``
# [N m], H in 3x3 blocks ``hxx``, ``hxt``, ``htt``, and ``idle``, the number of unilateral rows left
# out of this model because they were inactive where it was built (a separated contact, a slack
# span, a limit about to engage; see ``solve_body_colour``). Each ``add_*`` takes the system and
# returns it updated.


@wp.func
def add_point_row(
    fx: wp.vec3,
    ft: wp.vec3,
    hxx: wp.mat33,
    hxt: wp.mat33,
    htt: wp.mat33,
    r: wp.vec3,
    grad: wp.vec3,
    k: float,
    proj: wp.mat33,
):
    """Add a row acting at the point with arm r [m] from the COM.

    ``grad`` = dE/dp [N] at the point; the point moves by ``dx + dtheta x r = dx - [r]x dtheta``,
    so the body gradient is ``(grad, r x grad)`` and the Hessian of ``(k/2)|P dp|^2`` is
    ``J^T k P J`` with ``J = [I, -[r]x]``.
    """
    sr = wp.skew(r)
    kp = proj * k
    return fx - grad, ft - wp.cross(r, grad), hxx + kp, hxt - kp * sr, htt - sr * kp * sr


@wp.func
def add_angle_row(ft: wp.vec3, htt: wp.mat33, grad: wp.vec3, k: float, proj: wp.mat33):
    """Add a row on the orientation: ``grad`` = dE/dtheta [N m], Hessian ``k P`` [N m/rad].
    Returns the updated (ft, htt)."""
    return ft - grad, htt + proj * k


@wp.func
def add_twist_row(
    fx: wp.vec3,
    ft: wp.vec3,
    hxx: wp.mat33,
    hxt: wp.mat33,
    htt: wp.mat33,
    jac: wp.spatial_vector,
    force: float,
    k: float,
):
    """Add a scalar row with 6-vector gradient ``jac``: dE/dx = force jac, Hessian k jac jac^T."""
    jx = wp.spatial_top(jac)
    jt = wp.spatial_bottom(jac)
    return (
        fx - jx * force,
        ft - jt * force,
        hxx + wp.outer(jx, jx) * k,
        hxt + wp.outer(jx, jt) * k,
        htt + wp.outer(jt, jt) * k,
    )


@wp.func
def solve_block(fx: wp.vec3, ft: wp.vec3, hxx: wp.mat33, hxt: wp.mat33, htt: wp.mat33, rotates: bool):
    """Solve H d = f by the Schur complement of the translation block (H is symmetric positive
    definite: the inertial term alone is). Returns d = (dx [m], dtheta [rad])."""
    a_inv = wp.inverse(hxx)
    if not rotates:
        return wp.spatial_vector(a_inv * fx, wp.vec3(0.0))
    bt = wp.transpose(hxt)
    schur = htt - bt * a_inv * hxt
    dth = wp.inverse(schur) * (ft - bt * (a_inv * fx))
    dx = a_inv * (fx - hxt * dth)
    return wp.spatial_vector(dx, dth)


@wp.func
def move_body(q: wp.transform, com: wp.vec3, d: wp.spatial_vector):
    """Translate the COM by dx and rotate about it by the exact exponential of dtheta."""
    rot = wp.transform_get_rotation(q)
    c = wp.transform_point(q, com) + wp.spatial_top(d)
    dth = wp.spatial_bottom(d)
    angle = wp.length(dth)
    if angle > 1.0e-12:
        rot = wp.normalize(wp.quat_from_axis_angle(dth / angle, angle) * rot)
    return wp.transform(c - wp.quat_rotate(rot, com), rot)


# ----------------------------------------------------------------------------------------------
# Rows


@wp.func
def moving_mass(bodies: BodyModel, b: int):
    """(mass [kg], mean principal inertia [kg m^2]) of b if it moves, else zeros."""
    if is_moving_body(bodies, b):
        return 1.0 / bodies.inv_mass[b], wp.trace(bodies.inertia[b]) / 3.0
    return 0.0, 0.0


@wp.struct
class JointFrame:
    """A joint evaluated at the current poses: anchors, frames, axis and its coordinate."""

    x_p: wp.vec3
    x_c: wp.vec3
    rot_p: wp.quat
    rot_c: wp.quat
    a_w: wp.vec3
    q: float
    m_eff: float
    i_eff: float


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
    jf.a_w = wp.vec3(0.0)
    jf.q = 0.0
    if jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
        axis = joints.axis[joints.qd_start[j]]
        jf.a_w = wp.quat_rotate(jf.rot_p, axis)
        if jt == JOINT_REVOLUTE:
            jf.q = twist_angle(wp.quat_inverse(jf.rot_p) * jf.rot_c, axis)
        else:
            jf.q = wp.dot(jf.x_c - jf.x_p, jf.a_w)
    mp, ip = moving_mass(bodies, p)
    mc, ic = moving_mass(bodies, c)
    jf.m_eff = mp + mc
    jf.i_eff = ip + ic
    return jf


@wp.func
def joint_linear_error(jt: int, jf: JointFrame):
    """Anchor error C = P (x_c - x_p) [m] and its projector P (prismatic: perpendicular to the axis)."""
    proj = wp.identity(n=3, dtype=float)
    if jt == JOINT_PRISMATIC:
        proj = proj - wp.outer(jf.a_w, jf.a_w)
    return proj * (jf.x_c - jf.x_p), proj


@wp.func
def joint_angular_error(jt: int, jf: JointFrame):
    """Orientation error e [rad] (rotation vector, world) and its projector.

    fixed/prismatic: e = log(R_c R_p^T), de/dtheta_c = I. revolute: the swing that carries the
    parent axis onto the child axis, e = (a_p x a_c)/|a_p x a_c| angle, de/dtheta_c ~ I - a a^T.
    """
    proj = wp.identity(n=3, dtype=float)
    e = wp.vec3(0.0)
    if jt == JOINT_FIXED or jt == JOINT_PRISMATIC:
        e = quat_to_rotation_vector(jf.rot_c * wp.quat_inverse(jf.rot_p))
    elif jt == JOINT_REVOLUTE:
        a_c = wp.quat_rotate(jf.rot_c, wp.normalize(wp.quat_rotate_inv(jf.rot_p, jf.a_w)))
        s = wp.cross(jf.a_w, a_c)
        sn = wp.length(s)
        if sn > 1.0e-9:
            e = s * (wp.atan2(sn, wp.dot(jf.a_w, a_c)) / sn)
        proj = proj - wp.outer(jf.a_w, jf.a_w)
    else:
        proj = wp.mat33(0.0)
    return e, proj


@wp.func
def coordinate_jacobian(jt: int, jf: JointFrame, r: wp.vec3, side: float):
    """dq/d(dx, dtheta) of the body on ``side`` (+1 child, -1 parent): revolute (0, a), prismatic
    (a, r x a) at the body's anchor (the rotation of the axis with the parent is neglected)."""
    if jt == JOINT_REVOLUTE:
        return wp.spatial_vector(wp.vec3(0.0), jf.a_w * side)
    return wp.spatial_vector(jf.a_w * side, wp.cross(r, jf.a_w) * side)


@wp.func
def add_joint(
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
):
    """Add joint j's rows to the block of its parent or child body (see module docstring).
    Returns the updated (fx, ft, hxx, hxt, htt, idle)."""
    jt = joints.type[j]
    if joints.enabled[j] == 0 or jt == JOINT_FREE:
        return fx, ft, hxx, hxt, htt, idle
    jf = joint_frame(bodies, joints, j, body_q)
    b = joints.child[j]
    x_b = jf.x_c
    side = float(1.0)
    if not side_child:
        b = joints.parent[j]
        x_b = jf.x_p
        side = -1.0
    r = x_b - wp.transform_point(body_q[b], bodies.com[b])

    k_lin = duals.rho_lin[j] * jf.m_eff * inv_h2
    c_lin, p_lin = joint_linear_error(jt, jf)
    lam = duals.lam[j]
    f_lin = c_lin * k_lin + p_lin * wp.spatial_top(lam)
    fx, ft, hxx, hxt, htt = add_point_row(fx, ft, hxx, hxt, htt, r, f_lin * side, k_lin, p_lin)

    k_ang = duals.rho_ang[j] * jf.i_eff * inv_h2
    if jt != JOINT_BALL:
        c_ang, p_ang = joint_angular_error(jt, jf)
        f_ang = c_ang * k_ang + p_ang * wp.spatial_bottom(lam)
        ft, htt = add_angle_row(ft, htt, f_ang * side, k_ang, p_ang)

    if jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
        ds = joints.qd_start[j]
        jac = coordinate_jacobian(jt, jf, r, side)
        k_q = k_lin
        if jt == JOINT_REVOLUTE:
            k_q = k_ang
        # Limits: unilateral rows C_lo = q - lo >= 0 and C_hi = hi - q >= 0 (force <= 0 when active).
        lam_lim = duals.lam_lim[j]
        f_lo = k_q * (jf.q - joints.limit_lower[ds]) + lam_lim[0]
        if f_lo < 0.0:
            fx, ft, hxx, hxt, htt = add_twist_row(fx, ft, hxx, hxt, htt, jac, f_lo, k_q)
        elif jf.q - joints.limit_lower[ds] < LIMIT_NEAR:
            idle = idle + 1
        f_hi = k_q * (joints.limit_upper[ds] - jf.q) + lam_lim[1]
        if f_hi < 0.0:
            fx, ft, hxx, hxt, htt = add_twist_row(fx, ft, hxx, hxt, htt, jac, -f_hi, k_q)
        elif joints.limit_upper[ds] - jf.q < LIMIT_NEAR:
            idle = idle + 1
        # Drive: implicit PD as the elastic energy (ke + kd/h)/2 (q - q*)^2 (same q* as XPBD).
        ke = joints.target_ke[ds]
        kd = joints.target_kd[ds]
        k_eff = ke + kd / dt
        if k_eff > 0.0:
            q_prev = joint_q_prev[joints.q_start[j]]
            q_star = (ke * joint_target_pos[ds] + (kd / dt) * (q_prev + dt * joint_target_vel[ds])) / k_eff
            err = jf.q - q_star
            if jt == JOINT_REVOLUTE:
                err = wp.atan2(wp.sin(err), wp.cos(err))
            fx, ft, hxx, hxt, htt = add_twist_row(fx, ft, hxx, hxt, htt, jac, k_eff * err, k_eff)
    return fx, ft, hxx, hxt, htt, idle


@wp.struct
class ContactFrame:
    """One contact at the current poses: world points, arms, gap, drift and the row's mass scale."""

    p_a: wp.vec3
    p_b: wp.vec3
    r_a: wp.vec3
    r_b: wp.vec3
    gap: float
    drift_t: wp.vec3
    m_eff: float


@wp.func
def contact_frame(
    bodies: BodyModel,
    contacts: ContactData,
    c: int,
    body_q_prev: wp.array(dtype=wp.transform),
    body_q: wp.array(dtype=wp.transform),
):
    cf = ContactFrame()
    a = contacts.body_a[c]
    b = contacts.body_b[c]
    n = contacts.normal[c]
    qa = pose_or_identity(body_q, a)
    qb = pose_or_identity(body_q, b)
    cf.p_a = wp.transform_point(qa, contacts.point_a[c])
    cf.p_b = wp.transform_point(qb, contacts.point_b[c])
    cf.r_a = wp.vec3(0.0)
    cf.r_b = wp.vec3(0.0)
    ma = float(0.0)
    mb = float(0.0)
    if a >= 0:
        cf.r_a = cf.p_a - wp.transform_point(qa, bodies.com[a])
        ma, ia = moving_mass(bodies, a)
    if b >= 0:
        cf.r_b = cf.p_b - wp.transform_point(qb, bodies.com[b])
        mb, ib = moving_mass(bodies, b)
    cf.m_eff = ma + mb
    cf.gap = wp.dot(cf.p_b - cf.p_a, n)
    pa0 = wp.transform_point(pose_or_identity(body_q_prev, a), contacts.point_a[c])
    pb0 = wp.transform_point(pose_or_identity(body_q_prev, b), contacts.point_b[c])
    dp = (cf.p_b - pb0) - (cf.p_a - pa0)
    cf.drift_t = dp - n * wp.dot(dp, n)
    return cf


@wp.func
def contact_forces(contacts: ContactData, duals: ContactDuals, c: int, cf: ContactFrame, k: float):
    """(F_n, F_t, k_t): normal force [N] (<= 0 pushes apart; 0 when separating), tangential force
    [N] projected onto the Coulomb disk |F_t| <= mu |F_n|, and the tangential stiffness (scaled
    down while sliding, keeping the Hessian positive semidefinite)."""
    n = contacts.normal[c]
    f_n = wp.min(k * cf.gap + duals.lam[c][0], 0.0)
    lam_t = contact_lambda_t(duals, c)
    lam_t = lam_t - n * wp.dot(lam_t, n)
    f_t = cf.drift_t * k + lam_t
    k_t = k
    bound = contacts.mu[c] * (-f_n)
    ft_len = wp.length(f_t)
    if ft_len > bound:
        scale = bound / ft_len
        f_t = f_t * scale
        k_t = k * scale
    return f_n, f_t, k_t


@wp.func
def add_contact(
    fx: wp.vec3,
    ft: wp.vec3,
    hxx: wp.mat33,
    hxt: wp.mat33,
    htt: wp.mat33,
    idle: int,
    bodies: BodyModel,
    contacts: ContactData,
    duals: ContactDuals,
    c: int,
    side_b: bool,
    inv_h2: float,
    body_q_prev: wp.array(dtype=wp.transform),
    body_q: wp.array(dtype=wp.transform),
):
    """Non-penetration C = (p_b - p_a) . n >= 0 and Coulomb friction on the tangential drift since
    the step began, for body a (``side_b`` False) or b of contact slot c. Returns the updated
    (fx, ft, hxx, hxt, htt, idle)."""
    if contacts.valid[c] == 0:
        return fx, ft, hxx, hxt, htt, idle
    cf = contact_frame(bodies, contacts, c, body_q_prev, body_q)
    k = duals.rho[c] * cf.m_eff * inv_h2
    f_n, f_t, k_t = contact_forces(contacts, duals, c, cf, k)
    if f_n >= 0.0:
        return fx, ft, hxx, hxt, htt, idle + 1
    n = contacts.normal[c]
    grad = n * f_n + f_t  # dE/dp_b; dE/dp_a = -grad
    proj_t = wp.identity(n=3, dtype=float) - wp.outer(n, n)
    hess_n = wp.outer(n, n) * k
    r = cf.r_b
    if not side_b:
        grad = -grad
        r = cf.r_a
    fx, ft, hxx, hxt, htt = add_point_row(fx, ft, hxx, hxt, htt, r, grad, 1.0, hess_n + proj_t * k_t)
    return fx, ft, hxx, hxt, htt, idle


@wp.func
def add_tendon_slot(
    fx: wp.vec3,
    ft: wp.vec3,
    hxx: wp.mat33,
    hxt: wp.mat33,
    htt: wp.mat33,
    idle: int,
    lin: TendonLinearization,
    gi: int,
):
    """Add the span held by guide slot gi (linearized, see ``cable.TendonLinearization``).
    Returns the updated (fx, ft, hxx, hxt, htt, idle)."""
    s = lin.slot_span[gi]
    if s < 0:
        return fx, ft, hxx, hxt, htt, idle
    k = lin.k[s]
    if k <= 0.0:
        return fx, ft, hxx, hxt, htt, idle
    tension = float(0.0)
    if single_row(lin, s):
        tension = linearized_tension(lin, s)
        k = k + lin.damp[s]
    else:
        # A span of a run or chain row: its run's tension and stiffness (``cable.TendonLinearization``).
        head = lin.run_head[s]
        tension = row_tension(lin, head)
        k = 1.0 / lin.run_flex[head]
    if tension <= 0.0:
        return fx, ft, hxx, hxt, htt, idle + 1  # slack
    # The span leaves this guide: this body holds its left end. gi counts from the first guide slot
    # (``paired_slot``), so its parity is the side whatever precedes the guide slots.
    left = gi % 2 == 1
    jac = lin.jr[s]
    if left:
        jac = lin.jl[s]
    fx, ft, hxx, hxt, htt = add_twist_row(fx, ft, hxx, hxt, htt, jac, tension, k)
    kg = lin.kg[s]
    if kg > 0.0:
        # Geometric stiffness (T/l)(I - n n^T) of the end point (``TendonLinearization.kg``).
        r = lin.rr[s]
        if left:
            r = lin.rl[s]
        n = wp.spatial_top(jac)
        proj = wp.identity(n=3, dtype=float) - wp.outer(n, n)
        fx, ft, hxx, hxt, htt = add_point_row(fx, ft, hxx, hxt, htt, r, wp.vec3(), kg, proj)
    return fx, ft, hxx, hxt, htt, idle


@wp.func
def paired_slot(s: int, base: int):
    """(row, second) of slot s of a kind that gives each row two slots, ``base + 2 row`` and
    ``base + 2 row + 1`` (joints: parent, child; guides: incoming, outgoing span; contacts: a, b).

    The side is the parity of the slot *within its kind*: the kinds before it in the slot array
    (transmission and coupling slots, one per path element or joint term) can number oddly, so the
    parity of the absolute slot s says nothing about the side. Reading it there applied every contact
    with its two bodies swapped when the model's transmission and coupling slots summed to an odd
    count (a resting sphere fell through the ground)."""
    x = s - base
    return x // 2, x % 2 == 1


@wp.func
def slot_run_end(bodies: BodyModel, begin: int, end: int, bound: int):
    """First index in [begin, end) of a body's sorted slot list whose slot is >= bound (end if none)."""
    i = begin
    while i < end:
        if bodies.slot[i] >= bound:
            break
        i += 1
    return i


# ----------------------------------------------------------------------------------------------
# Kernels


@wp.struct
class VBDTransmissions:
    """What the body sweep needs of transmission tendons and couplings (see newton_tendon.kernels.transmission)."""

    tm: TransmissionModel
    scratch: TransmissionScratch
    work: TransmissionWork
    cm: CouplingModel
    cw: CouplingWork
    slot_tendon: wp.array(dtype=wp.int32)
    slot_coupling: wp.array(dtype=wp.int32)
    tendon_slot_end: int
    slot_count: int
    rho: float
    body_qd: wp.array(dtype=wp.spatial_vector)


@wp.func
def row_stiffness(gamma: float, w: float, rho: float):
    """kappa [kg] of a row: 1/gamma for a soft row (its exact implicit law, p = (b - rate)/gamma,
    whatever the multiplier), the penalty rho/W for a hard one (gamma = 0)."""
    if gamma > 0.0:
        return 1.0 / gamma
    if w > 0.0:
        return rho / w
    return 0.0


@wp.func
def row_law(mu: float, rate: float, b: float, g: float, lo: float, hi: float, w: float, rho: float):
    """(p, k) of one transmission row at the length rate ``rate``: the augmented-Lagrangian impulse
    ``p = clamp(mu - kappa (rate - b + g mu), lo, hi)`` [N s] and its stiffness -dp/drate [kg]
    (``row_stiffness``; the secant of the clipped law when clamped: with the row's own stiffness
    the Newton step jumps across a saturated drive or sliding friction and back). A fixed impulse
    (lo = hi) has no stiffness."""
    if lo == hi:
        return lo, 0.0
    kap = row_stiffness(g, w, rho)
    p_free = mu - kap * (rate - b + g * mu)
    p = wp.clamp(p_free, lo, hi)
    if p == p_free:
        return p, kap
    if p_free != mu:
        return p, kap * wp.clamp((p - mu) / (p_free - mu), 0.0, 1.0)
    return p, 0.0


@wp.func
def transmission_rows(work: TransmissionWork, t: int, rate: float, rho: float):
    """(p, k): the tendon's total row impulse [N s] at the length rate ``rate`` and its stiffness
    -dp/drate [kg], summed over its rows (``row_law``). At the fixed point of ``mu <- p`` every row
    satisfies the same discrete equation as XPBD's projected update."""
    b = work.row_b[t]
    g = work.row_gamma[t]
    lo = work.row_lo[t]
    hi = work.row_hi[t]
    mu = work.mu[t]
    w = work.w[t]
    p_sum = float(0.0)
    k_sum = float(0.0)
    for r in range(ROWS):
        p, k = row_law(mu[r], rate, b[r], g[r], lo[r], hi[r], w, rho)
        p_sum = p_sum + p
        k_sum = k_sum + k
    return p_sum, k_sum


@wp.func
def coupling_row(
    xs: VBDTransmissions,
    c: int,
    rate: float,
    dt: float,
):
    """(p, kappa) of coupling c's row at the constraint rate ``rate`` (bilateral, target
    ``-beta C_n / h``, gamma = c/h^2)."""
    gamma = xs.cm.compliance[c] / (dt * dt)
    target = -xs.cm.position_correction[c] * xs.cw.c_n[c] / dt
    kap = row_stiffness(gamma, xs.cw.w[c], xs.rho)
    mu = xs.cw.p[c]
    return mu - kap * (rate - target + gamma * mu), kap


@wp.func
def coupling_rate(xs: VBDTransmissions, c: int, body_delta: wp.array(dtype=wp.spatial_vector), inv_h: float):
    t1 = xs.cm.first[c]
    t2 = xs.cm.second[c]
    rate = iterate_rate(xs.tm, t1, xs.body_qd, body_delta, inv_h, xs.scratch)
    if t2 >= 0:
        rate = rate - xs.cw.slope[c] * iterate_rate(xs.tm, t2, xs.body_qd, body_delta, inv_h, xs.scratch)
    return rate


@wp.func
def transmission_owner(xs: VBDTransmissions, x: int):
    """Tendon index (>= 0) or -1 - coupling index of transmission slot x."""
    if x < xs.slot_count:
        return xs.slot_tendon[x]
    return -1 - xs.slot_coupling[x - xs.slot_count]


@wp.func
def add_transmission(
    fx: wp.vec3,
    ft: wp.vec3,
    hxx: wp.mat33,
    hxt: wp.mat33,
    htt: wp.mat33,
    bodies: BodyModel,
    xs: VBDTransmissions,
    owner: int,
    b: int,
    dt: float,
    body_delta: wp.array(dtype=wp.spatial_vector),
):
    """Add a transmission tendon's (owner >= 0) or a coupling's (owner < 0) rows to body b: force
    ``(p/h) J_b`` along the length, Hessian ``(kappa/h^2) J_b J_b^T`` (Gauss-Newton). Returns the
    updated (fx, ft, hxx, hxt, htt)."""
    inv_h = 1.0 / dt
    if owner >= 0:
        t = owner
        if xs.work.enabled[t] == 0:
            return fx, ft, hxx, hxt, htt
        rate = iterate_rate(xs.tm, t, xs.body_qd, body_delta, inv_h, xs.scratch)
        p, k = transmission_rows(xs.work, t, rate, xs.rho)
        jb = body_jacobian(xs.tm, t, xs.scratch, b)
        return add_twist_row(fx, ft, hxx, hxt, htt, jb, -p * inv_h, k * inv_h * inv_h)
    c = -1 - owner
    if xs.cw.active[c] == 0:
        return fx, ft, hxx, hxt, htt
    p, k = coupling_row(xs, c, coupling_rate(xs, c, body_delta, inv_h), dt)
    jb = coupling_jacobian(xs.tm, xs.scratch, xs.cm.first[c], xs.cm.second[c], xs.cw.slope[c], b)
    return add_twist_row(fx, ft, hxx, hxt, htt, jb, -p * inv_h, k * inv_h * inv_h)


TRANSMISSION_MODULE = "newton_tendon.kernels.vbd_transmission"
"""Warp module of the kernels that involve transmission tendons, so that a model without them never
compiles that code (a cold kernel cache compiles each Warp module on its first launch)."""
wp.set_module_options({"enable_backward": False}, module=TRANSMISSION_MODULE)


TENDON_MODULE = "newton_tendon.kernels.vbd_tendons"
"""Warp module of the body sweep for models whose only rows are routed-cable spans (no joints,
contacts, transmission tendons or couplings), so that such a model compiles neither the other
sweeps nor the joint and contact kernels."""
wp.set_module_options({"enable_backward": False}, module=TENDON_MODULE)


def _make_solve_body_colour(with_transmissions: bool, module: str, tendons_only: bool = False):
    """The body sweep kernel, with or without the transmission rows (``with_transmissions``),
    registered in the Warp module ``module``. ``tendons_only`` compiles only the inertia and the
    cable span rows (the joint and contact loops left out).

    A CPU kernel loads every struct field its code uses at the start of each thread (Warp passes the
    arguments by value and the compiler cannot keep them across the threads' stores), and spills
    most of them to the stack: the joint, contact and transmission rows' fields were about a quarter
    of the sweep's time on the cable scenes, which have none of those rows. Their variant adds the
    same span rows in the same order, so it gives the same bits."""

    @wp.func(inline=True)
    def newton_step(
        bodies: BodyModel,
        joints: JointModel,
        b: int,
        joint_slot_count: int,
        summed_slot_count: int,
        dt: float,
        joint_target_pos: wp.array(dtype=float),
        joint_target_vel: wp.array(dtype=float),
        joint_q_prev: wp.array(dtype=float),
        body_q_prev: wp.array(dtype=wp.transform),
        contacts: ContactData,
        has_contacts: int,
        lin: TendonLinearization,
        xs: VBDTransmissions,
        joint_duals: JointDuals,
        contact_duals: ContactDuals,
        body_q: wp.array(dtype=wp.transform),
        body_delta: wp.array(dtype=wp.spatial_vector),
    ):
        """Assemble body b's 6x6 system at the current poses and return its Newton step (dx, dtheta)."""
        inv_h2 = 1.0 / (dt * dt)
        q = body_q[b]
        # x - y from the accumulated Newton steps rather than from the rounded pose: m/h^2 times one
        # float32 ulp of position is a large force (0.06 N for 2 kg at 1 ms, near 0.3 m), enough to
        # stall a soft drive short of its target.
        d_inertia = body_delta[b]
        mass = 1.0 / bodies.inv_mass[b]
        inertia_w = world_inertia(q, bodies.inertia[b])
        fx = -wp.spatial_top(d_inertia) * (mass * inv_h2)
        ft = -(inertia_w * wp.spatial_bottom(d_inertia)) * inv_h2
        hxx = wp.identity(n=3, dtype=float) * (mass * inv_h2)
        hxt = wp.mat33(0.0)
        htt = inertia_w * inv_h2
        idle = int(0)
        # A body's slots are sorted (``finalize``): joint slots, then tendon guide slots, then
        # transmission slots, then contacts. One loop per kind over its run of the list adds the rows
        # in the same order as one loop with a branch per kind, without merging the four branches'
        # results (the 6x6 system, three mat33) at every slot, which went through memory.
        slot_begin = bodies.slot_start[b]
        slot_end = bodies.slot_start[b + 1]
        if wp.static(tendons_only):
            # Only for models without joints, contacts and transmissions: every slot holds a span end.
            for i in range(slot_begin, slot_end):
                fx, ft, hxx, hxt, htt, idle = add_tendon_slot(
                    fx, ft, hxx, hxt, htt, idle, lin, bodies.slot[i] - joint_slot_count
                )
            return solve_block(fx, ft, hxx, hxt, htt, wp.trace(bodies.inv_inertia[b]) > 0.0), idle
        joint_end = slot_run_end(bodies, slot_begin, slot_end, joint_slot_count)
        for i in range(slot_begin, joint_end):
            j, child = paired_slot(bodies.slot[i], 0)
            fx, ft, hxx, hxt, htt, idle = add_joint(
                fx,
                ft,
                hxx,
                hxt,
                htt,
                idle,
                bodies,
                joints,
                joint_duals,
                j,
                child,
                inv_h2,
                dt,
                body_q,
                joint_target_pos,
                joint_target_vel,
                joint_q_prev,
            )
        tendon_end = slot_run_end(bodies, joint_end, slot_end, xs.tendon_slot_end)
        for i in range(joint_end, tendon_end):
            fx, ft, hxx, hxt, htt, idle = add_tendon_slot(
                fx, ft, hxx, hxt, htt, idle, lin, bodies.slot[i] - joint_slot_count
            )
        summed_end = slot_run_end(bodies, tendon_end, slot_end, summed_slot_count)
        if wp.static(with_transmissions):
            # A transmission tendon or coupling acts once per body, at the first of its slots here
            # (compiled only into the variant for models with transmissions).
            for i in range(tendon_end, summed_end):
                s = bodies.slot[i]
                owner = transmission_owner(xs, s - xs.tendon_slot_end)
                first = bool(True)
                if i > bodies.slot_start[b]:
                    sp = bodies.slot[i - 1]
                    if sp >= xs.tendon_slot_end and transmission_owner(xs, sp - xs.tendon_slot_end) == owner:
                        first = False
                if first:
                    fx, ft, hxx, hxt, htt = add_transmission(
                        fx, ft, hxx, hxt, htt, bodies, xs, owner, b, dt, body_delta
                    )
        if has_contacts != 0:
            for i in range(summed_end, slot_end):
                c, side_b = paired_slot(bodies.slot[i], summed_slot_count)
                fx, ft, hxx, hxt, htt, idle = add_contact(
                    fx,
                    ft,
                    hxx,
                    hxt,
                    htt,
                    idle,
                    bodies,
                    contacts,
                    contact_duals,
                    c,
                    side_b,
                    inv_h2,
                    body_q_prev,
                    body_q,
                )
        return solve_block(fx, ft, hxx, hxt, htt, wp.trace(bodies.inv_inertia[b]) > 0.0), idle

    @wp.kernel(module=module)
    def solve_body_colour(
        # Model:
        bodies: BodyModel,
        joints: JointModel,
        colour_bodies: wp.array(dtype=wp.int32),
        chunk: int,
        joint_slot_count: int,
        summed_slot_count: int,
        dt: float,
        # Control:
        joint_target_pos: wp.array(dtype=float),
        joint_target_vel: wp.array(dtype=float),
        # Step data:
        joint_q_prev: wp.array(dtype=float),
        body_q_prev: wp.array(dtype=wp.transform),
        contacts: ContactData,
        has_contacts: int,
        lin: TendonLinearization,
        xs: VBDTransmissions,
        joint_duals: JointDuals,
        contact_duals: ContactDuals,
        # In/out:
        body_q: wp.array(dtype=wp.transform),
        body_delta: wp.array(dtype=wp.spatial_vector),
    ):
        """Newton steps on each body of one colour (bodies of a colour share no row).

        Unilateral rows (contacts, cable spans, joint limits) make the energy piecewise quadratic: a
        row inactive where the Newton step starts is left out of its model, so the step can jump past
        the point where the row engages (a resting body falling to its inertial target), and the
        next iteration bounces back. A body whose model left such a row out (``idle``) therefore
        takes a second Newton step from the first one's result, whose model has the right active set;
        a body whose unilateral rows were all active (resting contact) needs only one.

        A thread takes ``chunk`` consecutive entries of ``colour_bodies`` (see ``linearize_tendons``).
        """
        i0 = wp.tid() * chunk
        for i in range(i0, wp.min(i0 + chunk, colour_bodies.shape[0])):
            b = colour_bodies[i]
            if not is_moving_body(bodies, b):
                continue
            com = bodies.com[b]
            # A dynamic loop keeps one call site, so newton_step is inlined once rather than twice (an
            # out-of-line call copied every struct argument, about 4 kB, per body and pass).
            passes = int(0)
            while passes < 2:
                passes += 1
                d, idle = newton_step(
                    bodies,
                    joints,
                    b,
                    joint_slot_count,
                    summed_slot_count,
                    dt,
                    joint_target_pos,
                    joint_target_vel,
                    joint_q_prev,
                    body_q_prev,
                    contacts,
                    has_contacts,
                    lin,
                    xs,
                    joint_duals,
                    contact_duals,
                    body_q,
                    body_delta,
                )
                d = bounded_pose_delta(d)
                body_q[b] = move_body(body_q[b], com, d)
                body_delta[b] = body_delta[b] + d
                if idle == 0:
                    break

    return solve_body_colour


solve_body_colour = _make_solve_body_colour(False, __name__)
"""Body sweep of a model without transmission tendons or couplings (see the factory's kernel)."""
solve_body_colour_transmissions = _make_solve_body_colour(True, TRANSMISSION_MODULE)
"""Body sweep of a model with transmission tendons or couplings."""
solve_body_colour_tendons = _make_solve_body_colour(False, TENDON_MODULE, tendons_only=True)
"""Body sweep of a model without joints, contact capacity, transmission tendons or couplings."""


@wp.kernel
def update_joint_duals(
    bodies: BodyModel,
    joints: JointModel,
    params: PenaltyParams,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    duals: JointDuals,
):
    """Dual step after an iteration: lambda <- k C + lambda (limits clamped to <= 0), rho grows with |C|."""
    j = wp.tid()
    jt = joints.type[j]
    if joints.enabled[j] == 0 or jt == JOINT_FREE:
        return
    inv_h2 = 1.0 / (dt * dt)
    jf = joint_frame(bodies, joints, j, body_q)
    rho_lin = duals.rho_lin[j]
    rho_ang = duals.rho_ang[j]
    k_lin = rho_lin * jf.m_eff * inv_h2
    k_ang = rho_ang * jf.i_eff * inv_h2
    lam = duals.lam[j]
    c_lin, p_lin = joint_linear_error(jt, jf)
    lam_lin = c_lin * k_lin + p_lin * wp.spatial_top(lam)
    lam_ang = wp.vec3(0.0)
    err_lin = wp.length(c_lin)
    err_ang = float(0.0)
    if jt != JOINT_BALL:
        c_ang, p_ang = joint_angular_error(jt, jf)
        lam_ang = c_ang * k_ang + p_ang * wp.spatial_bottom(lam)
        err_ang = wp.length(c_ang)
    duals.lam[j] = wp.spatial_vector(lam_lin, lam_ang)
    if jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC:
        ds = joints.qd_start[j]
        k_q = k_lin
        if jt == JOINT_REVOLUTE:
            k_q = k_ang
        c_lo = jf.q - joints.limit_lower[ds]
        c_hi = joints.limit_upper[ds] - jf.q
        lam_lim = duals.lam_lim[j]
        lo = wp.min(k_q * c_lo + lam_lim[0], 0.0)
        hi = wp.min(k_q * c_hi + lam_lim[1], 0.0)
        duals.lam_lim[j] = wp.vec2(lo, hi)
        if lo < 0.0:
            err_lin = wp.max(err_lin, wp.abs(wp.min(c_lo, 0.0)))
        if hi < 0.0:
            err_lin = wp.max(err_lin, wp.abs(wp.min(c_hi, 0.0)))
    duals.rho_lin[j] = wp.min(rho_lin + params.growth * err_lin, params.rho_max)
    duals.rho_ang[j] = wp.min(rho_ang + params.growth * err_ang, params.rho_max)


@wp.kernel
def update_contact_duals(
    bodies: BodyModel,
    params: PenaltyParams,
    dt: float,
    contacts: ContactData,
    body_q_prev: wp.array(dtype=wp.transform),
    body_q: wp.array(dtype=wp.transform),
    duals: ContactDuals,
):
    """Dual step of a contact slot: lambda_n <- min(k C + lambda_n, 0), lambda_t <- the projected
    tangential force; both vanish when the contact separates or the slot is empty."""
    c = wp.tid()
    if contacts.valid[c] == 0:
        duals.lam[c] = wp.vec4(0.0)
        return
    cf = contact_frame(bodies, contacts, c, body_q_prev, body_q)
    rho = duals.rho[c]
    k = rho * cf.m_eff / (dt * dt)
    f_n, f_t, k_t = contact_forces(contacts, duals, c, cf, k)
    if f_n >= 0.0:
        duals.lam[c] = wp.vec4(0.0)
    else:
        duals.lam[c] = wp.vec4(f_n, f_t[0], f_t[1], f_t[2])
        duals.rho[c] = wp.min(rho + params.growth * wp.max(-cf.gap, 0.0), params.rho_max)


@wp.kernel
def contact_push(duals: ContactDuals, valid: wp.array(dtype=wp.int32), push: wp.array(dtype=float)):
    """Normal force [N] each contact slot pushed with at the end of the step (> 0 where it acted),
    the flag the restitution pass (``contacts.solve_contact_velocities``) reads."""
    c = wp.tid()
    push[c] = 0.0
    if valid[c] != 0:
        push[c] = -duals.lam[c][0]


@wp.kernel(module=TRANSMISSION_MODULE)
def update_transmission_duals(xs: VBDTransmissions, dt: float, body_delta: wp.array(dtype=wp.spatial_vector)):
    """After a sweep: every row's multiplier takes its impulse at the swept state, mu <- p."""
    t = wp.tid()
    if xs.work.enabled[t] == 0:
        return
    rate = iterate_rate(xs.tm, t, xs.body_qd, body_delta, 1.0 / dt, xs.scratch)
    xs.work.rate[t] = rate
    b = xs.work.row_b[t]
    g = xs.work.row_gamma[t]
    lo = xs.work.row_lo[t]
    hi = xs.work.row_hi[t]
    mu = xs.work.mu[t]
    w = xs.work.w[t]
    for r in range(ROWS):
        p, k = row_law(mu[r], rate, b[r], g[r], lo[r], hi[r], w, xs.rho)
        mu[r] = p
    xs.work.mu[t] = mu


@wp.kernel(module=TRANSMISSION_MODULE)
def update_coupling_duals(xs: VBDTransmissions, dt: float, body_delta: wp.array(dtype=wp.spatial_vector)):
    c = wp.tid()
    if xs.cw.active[c] == 0:
        return
    p, k = coupling_row(xs, c, coupling_rate(xs, c, body_delta, 1.0 / dt), dt)
    xs.cw.p[c] = p
