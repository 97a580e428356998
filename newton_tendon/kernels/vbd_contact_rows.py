"""VBD for rigid bodies: the rows of a contact slot (non-penetration, Coulomb friction) and their dual step.

Both are augmented-Lagrangian rows (``ContactDuals``) on the tangential drift since the step began;
``contact_push`` hands the normal forces to the shared restitution pass.
"""

import warp as wp

from newton_tendon.kernels.contacts import ContactData, is_round_contact, pose_or_identity, round_shifts
from newton_tendon.kernels.rigid import BodyModel
from newton_tendon.kernels.vbd_block import VBD_KERNELS, PenaltyParams, add_point_row, moving_mass

wp.set_module_options({"enable_backward": False})


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
    # A sphere or capsule on either side: the normal row's arms (``round_shifts``), which then
    # differ from the friction row's ``r_a``/``r_b``.
    round_contact: bool
    rn_a: wp.vec3
    rn_b: wp.vec3


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
    cf.round_contact = is_round_contact(contacts, c)
    cf.rn_a = cf.r_a
    cf.rn_b = cf.r_b
    if cf.round_contact:
        d_a, d_b = round_shifts(contacts, c, qa, qb, n)
        cf.rn_a = cf.r_a + d_a
        cf.rn_b = cf.r_b + d_b
        cf.gap = wp.dot((cf.p_b + d_b) - (cf.p_a + d_a), n)
    else:
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
    hess_scale: float,
    forced: bool,
):
    """Non-penetration C = (p_b - p_a) . n >= 0 and Coulomb friction on the tangential drift since
    the step began, for body a (``side_b`` False) or b of contact slot c. Returns the updated
    (fx, ft, hxx, hxt, htt, idle).

    ``hess_scale`` multiplies the row's Hessian (not its force): 1 where the other body holds still
    during this body's step (the colour sweep), 2 where both bodies step at once from one model
    (two articulation bodies, ``vbd_sweep.assemble_tree_bodies``). The row's energy is convex in the
    relative motion J_a d_a + J_b d_b, and (J_a d_a + J_b d_b)^2 <= 2 (J_a d_a)^2 + 2 (J_b d_b)^2, so
    each body's model with twice its own curvature bounds the energy from above and the simultaneous
    steps cannot overshoot: with 1 two feet of a humanoid in contact with each other both took the
    whole correction, and their penalty grew until they spun at 1,270 rad/s.

    ``forced``: the row is in the model even where it is inactive (its force k C + lambda >= 0, a
    pull), without friction: a Newton step that crossed it with the row left out is taken again from
    the same start with the row in (``solvers.vbd``'s articulation pass), so it stops at the surface
    instead of jumping through it."""
    if contacts.valid[c] == 0:
        return fx, ft, hxx, hxt, htt, idle
    cf = contact_frame(bodies, contacts, c, body_q_prev, body_q)
    k = duals.rho[c] * cf.m_eff * inv_h2
    f_n, f_t, k_t = contact_forces(contacts, duals, c, cf, k)
    if f_n >= 0.0:
        if not forced:
            return fx, ft, hxx, hxt, htt, idle + 1
        f_n = k * cf.gap + duals.lam[c][0]
        f_t = wp.vec3(0.0)
        k_t = 0.0
    n = contacts.normal[c]
    grad = n * f_n + f_t  # dE/dp_b; dE/dp_a = -grad
    proj_t = wp.identity(n=3, dtype=float) - wp.outer(n, n)
    hess_n = wp.outer(n, n) * (k * hess_scale)
    k_t = k_t * hess_scale
    r = cf.r_b
    rn = cf.rn_b
    side = float(1.0)
    if not side_b:
        grad = -grad
        r = cf.r_a
        rn = cf.rn_a
        side = -1.0
    if cf.round_contact:
        # The normal row acts at the point under a round shape's centre, friction at the body-fixed point.
        fx, ft, hxx, hxt, htt = add_point_row(fx, ft, hxx, hxt, htt, rn, n * (f_n * side), 1.0, hess_n)
        fx, ft, hxx, hxt, htt = add_point_row(fx, ft, hxx, hxt, htt, r, f_t * side, 1.0, proj_t * k_t)
        return fx, ft, hxx, hxt, htt, idle
    fx, ft, hxx, hxt, htt = add_point_row(fx, ft, hxx, hxt, htt, r, grad, 1.0, hess_n + proj_t * k_t)
    return fx, ft, hxx, hxt, htt, idle


@wp.kernel(module=VBD_KERNELS)
def update_contact_duals(
    # Model:
    bodies: BodyModel,
    params: PenaltyParams,
    dt: float,
    # Contacts:
    contacts: ContactData,
    # State in:
    body_q_in: wp.array(dtype=wp.transform),
    # State: the current iterate
    body_q: wp.array(dtype=wp.transform),
    # Scratch:
    duals: ContactDuals,
):
    """Dual step of a contact slot: lambda_n <- min(k C + lambda_n, 0), lambda_t <- the projected
    tangential force; both vanish when the contact separates or the slot is empty."""
    c = wp.tid()
    if contacts.valid[c] == 0:
        duals.lam[c] = wp.vec4(0.0)
        return
    cf = contact_frame(bodies, contacts, c, body_q_in, body_q)
    rho = duals.rho[c]
    k = rho * cf.m_eff / (dt * dt)
    f_n, f_t, k_t = contact_forces(contacts, duals, c, cf, k)
    if f_n >= 0.0:
        duals.lam[c] = wp.vec4(0.0)
    else:
        duals.lam[c] = wp.vec4(f_n, f_t[0], f_t[1], f_t[2])
        duals.rho[c] = wp.min(rho + params.growth * wp.max(-cf.gap, 0.0), params.rho_max)


@wp.kernel(module=VBD_KERNELS)
def contact_push(
    # Contacts:
    valid: wp.array(dtype=wp.int32),
    # Scratch:
    duals: ContactDuals,
    # Output:
    push: wp.array(dtype=float),
):
    """Normal force [N] each contact slot pushed with at the end of the step (> 0 where it acted),
    the flag the restitution pass (``contacts.solve_contact_velocities``) reads."""
    c = wp.tid()
    push[c] = 0.0
    if valid[c] != 0:
        push[c] = -duals.lam[c][0]


@wp.kernel(module=VBD_KERNELS)
def mark_crossed_contacts(
    # Model:
    bodies: BodyModel,
    params: PenaltyParams,
    dt: float,
    body_tree: wp.array(dtype=wp.int32),
    group_idle: wp.array(dtype=wp.int32),
    # Contacts:
    contacts: ContactData,
    # State in:
    body_q_in: wp.array(dtype=wp.transform),
    # State: the current iterate
    body_q: wp.array(dtype=wp.transform),
    # Scratch: the duals; out: 1 where the contact pushes now (``add_contact``'s ``forced``)
    duals: ContactDuals,
    forced: wp.array(dtype=wp.int32),
):
    """After a Newton step of the articulations that left inactive rows out (``group_idle``): mark
    each contact on such an articulation that pushes at the poses the step reached, the rows that
    step crossed (and those that were active already), for the step taken again from the same
    start."""
    c = wp.tid()
    forced[c] = 0
    if contacts.valid[c] == 0:
        return
    a = contacts.body_a[c]
    b = contacts.body_b[c]
    mine = False
    if a >= 0:
        if body_tree[a] >= 0:
            mine = group_idle[body_tree[a]] != 0
    if b >= 0:
        if body_tree[b] >= 0:
            mine = mine or group_idle[body_tree[b]] != 0
    if not mine:
        return
    cf = contact_frame(bodies, contacts, c, body_q_in, body_q)
    k = duals.rho[c] * cf.m_eff / (dt * dt)
    f_n, f_t, k_t = contact_forces(contacts, duals, c, cf, k)
    if f_n < 0.0:
        forced[c] = 1
