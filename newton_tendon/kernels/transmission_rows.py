"""Transmission tendons: the force elements of one tendon as rows of the shared impulse solver.

Force elements are rows of the shared impulse solver (spec "Tendon physics"): each row has an
accumulated impulse ``p`` [N s] over the step, a target velocity ``b``, a softness ``gamma`` and
bounds; one projected update is

    p_new = clamp(p - (J v_+ - b + gamma p) / (W + gamma), p_min, p_max).

The Jacobian and W are evaluated at the start of the step (spec: "the active region and the
geometry Jacobian are evaluated at the start of the step"). SolverXPBD evaluates ``J v_+`` with
the velocity its current iterate implies, ``v_pred + (accumulated pose change)/h``, and an impulse
``dp`` moves body b by ``h M_b^-1 J_b dp``, so the rows share the position iterations with joints,
contacts and cables; where tendons or couplings share a body, their rows use the split W_s of
"Mass splitting" (``transmission_splitting``). Rows (``l_n``, ``ldot_n`` at the step start):

* passive spring + damping: ``gamma = 1/(h (d + h k_a))``, ``b = -k_a e_n/(d + h k_a)``, free, with
  ``e_n = l_n - clamp(l_n, ls-, ls+)`` and ``k_a = k`` outside the interval or for equal ends, else 0
  (so ``p = -h k_a e_n - h (d + h k_a) ldot_+``);
* drive: ``r = a_{n+1} + kp (l_d - l_n) + kv ldot_d``, ``gamma = 1/(h (kv + h kp))``,
  ``b = r/(kv + h kp)``, ``p in h [F_min, F_max]``; without gains the impulse is ``h clamp(r)``;
  activation ``a_{n+1} = u + (a_n - u) exp(-h/tau)`` (``u`` for tau = 0);
* limits: ``g_low = l_n - l_min - m``, ``b = -eta g_low / h``, ``p >= 0``; ``g_high = l_max - l_n - m``,
  ``b = eta g_high / h``, ``p <= 0``; ``eta = beta`` for ``g < 0`` else 1; equal bounds: one free
  row ``b = beta (l_target - l_n)/h``; ``gamma = c/h^2``;
* dry friction: ``b = 0``, ``p in [-h F_f, h F_f]``, ``gamma = c_f/h^2``;
* armature: ``gamma = 1/a_t``, ``b = ldot_n - h b_l``, free, with ``b_l`` the length acceleration at
  zero generalized acceleration, a centred second difference of the routed length along the body
  velocities (0 for fixed tendons).

Signs: F > 0 lengthens, tension T = -F.
"""

import warp as wp

from newton_tendon.kernels.math import world_selected
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.transmission_data import (
    BIG,
    ROWS,
    TRANSMISSION_KERNELS,
    TRANSMISSION_SPATIAL,
    TransmissionControl,
    TransmissionModel,
    TransmissionParams,
    TransmissionReport,
    TransmissionScratch,
    TransmissionWork,
    vec6,
)
from newton_tendon.kernels.transmission_geometry import (
    effective_inverse_mass,
    iterate_rate,
    report_geometry,
    response,
    slot_begin,
    slot_end,
    transmission_geometry,
    transmission_rate,
)

wp.set_module_options({"enable_backward": False})

CURVATURE_STEP = wp.constant(1.0e-2)
"""Time offset [s] of the centred second difference that estimates the armature curvature bias."""
TINY = wp.constant(1.0e-30)
"""Gains, damping and armature below this are absent: the row softness is their reciprocal, which
overflows float32 for denormal values (an armature of 7e-43 kg gave an infinite length)."""


@wp.kernel(module=TRANSMISSION_KERNELS)
def begin_transmissions(
    # Model:
    tm: TransmissionModel,
    bodies: BodyModel,
    par: TransmissionParams,
    dt: float,
    warm: int,
    # Control:
    ctrl: TransmissionControl,
    # State in:
    body_q_in: wp.array(dtype=wp.transform),
    body_qd_in: wp.array(dtype=wp.spatial_vector),
    transmission_activation_in: wp.array(dtype=float),
    transmission_row_impulse_in: wp.array(dtype=vec6),
    # State out:
    transmission_activation_out: wp.array(dtype=float),
    # Scratch:
    q_plus: wp.array(dtype=wp.transform),
    q_minus: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    work: TransmissionWork,
):
    """Step start: length, Jacobian (kept in ``scratch`` for the step), W, rate and curvature bias
    at the input pose, the activation update
    ``a_{n+1} = u + (a_n - u) exp(-h/tau)`` (held while disabled or while the command u is not
    finite), and zero row impulses."""
    t = wp.tid()
    enabled = ctrl.enabled[t]
    work.enabled[t] = enabled
    a = transmission_activation_in[t]
    u = ctrl.drive_force[t]
    # A NaN or inf command is ignored for the step (docs/robustness.md, "Run-time input"): through the
    # filter it would stay in the activation state for good, so the activation holds a_n instead.
    if enabled != 0 and wp.isfinite(u):
        tau = par.activation_time[t]
        if tau > 0.0:
            a = u + (a - u) * wp.exp(-dt / tau)
        else:
            a = u
    transmission_activation_out[t] = a
    work.activation[t] = a
    bias = float(0.0)
    if tm.type[t] == TRANSMISSION_SPATIAL and par.armature[t] > TINY:
        lp = transmission_geometry(tm, t, q_plus, scratch)
        lm = transmission_geometry(tm, t, q_minus, scratch)
        l0 = transmission_geometry(tm, t, body_q_in, scratch)
        bias = (lp - 2.0 * l0 + lm) / (CURVATURE_STEP * CURVATURE_STEP)
    work.bias[t] = bias
    work.l_n[t] = transmission_geometry(tm, t, body_q_in, scratch)
    work.ldot_n[t] = transmission_rate(tm, t, body_qd_in, scratch)
    work.w[t] = effective_inverse_mass(tm, bodies, t, body_q_in, scratch, work.slot_w)
    for s in range(slot_begin(tm, t), slot_end(tm, t)):
        b_s = scratch.body[s]
        resp_s = wp.spatial_vector()
        if is_moving_body(bodies, b_s):
            resp_s = response(bodies, b_s, body_q_in[b_s], scratch.jac[s])
        scratch.resp[s] = resp_s
    setup_rows(par, ctrl, t, dt, work)
    mu = vec6()
    if warm != 0:
        # Warm start (VBD): last step's impulses, projected onto this step's bounds.
        prev = transmission_row_impulse_in[t]
        lo = work.row_lo[t]
        hi = work.row_hi[t]
        for r in range(ROWS):
            mu[r] = wp.clamp(prev[r], lo[r], hi[r])
    work.mu[t] = mu


@wp.func
def total_impulse(work: TransmissionWork, t: int):
    """Sum of a tendon's row impulses this step [N s]."""
    mu = work.mu[t]
    return mu[0] + mu[1] + mu[2] + mu[3] + mu[4] + mu[5]


@wp.func
def setup_rows(par: TransmissionParams, ctrl: TransmissionControl, t: int, dt: float, work: TransmissionWork):
    """Each row's target b [m/s], softness gamma [1/kg] and impulse bounds [N s] from the step-start
    length, rate and activation (module docstring). An absent row gets lo = hi = 0; a drive without
    gains is a fixed impulse lo = hi = h clamp(r)."""
    h = dt
    l_n = work.l_n[t]
    b = vec6()
    g = vec6(1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    lo = vec6()
    hi = vec6()

    # 0: passive spring and damping.
    k = par.stiffness[t]
    lo_s = par.spring_lower[t]
    hi_s = par.spring_upper[t]
    e = l_n - wp.clamp(l_n, lo_s, hi_s)
    k_a = k
    if lo_s < hi_s and e == 0.0:
        k_a = 0.0
    soft = par.damping[t] + h * k_a
    if soft > TINY:
        b[0] = -k_a * e / soft
        g[0] = 1.0 / (h * soft)
        lo[0] = -BIG
        hi[0] = BIG

    # 1: drive (feedforward after activation, implicit servo, bounded actuator force).
    kp = ctrl.position_gain[t]
    kv = ctrl.velocity_gain[t]
    r = work.activation[t] + kp * (ctrl.target_length[t] - l_n) + kv * ctrl.target_velocity[t]
    gain = kv + h * kp
    if gain > TINY:
        b[1] = r / gain
        g[1] = 1.0 / (h * gain)
        lo[1] = h * par.actuation_lower[t]
        hi[1] = h * par.actuation_upper[t]
    else:
        f = h * wp.clamp(r, par.actuation_lower[t], par.actuation_upper[t])
        lo[1] = f
        hi[1] = f

    # 2, 3: length bounds, or one bilateral lock in row 2.
    l_min = par.lower_limit[t]
    l_max = par.upper_limit[t]
    beta = par.position_correction[t]
    margin = par.limit_margin[t]
    gamma_l = par.limit_compliance[t] / (h * h)
    if l_min == l_max:
        b[2] = beta * (l_min - l_n) / h
        g[2] = gamma_l
        lo[2] = -BIG
        hi[2] = BIG
    else:
        if l_min > -BIG:
            gap = l_n - l_min - margin
            eta = float(1.0)
            if gap < 0.0:
                eta = beta
            b[2] = -eta * gap / h
            g[2] = gamma_l
            hi[2] = BIG
        if l_max < BIG:
            gap = l_max - l_n - margin
            eta = float(1.0)
            if gap < 0.0:
                eta = beta
            b[3] = eta * gap / h
            g[3] = gamma_l
            lo[3] = -BIG

    # 4: dry friction.
    f_f = par.friction_loss[t]
    if f_f > 0.0:
        g[4] = par.friction_compliance[t] / (h * h)
        lo[4] = -h * f_f
        hi[4] = h * f_f

    # 5: armature with the curvature bias.
    a_t = par.armature[t]
    if a_t > TINY:
        b[5] = work.ldot_n[t] - h * work.bias[t]
        g[5] = 1.0 / a_t
        lo[5] = -BIG
        hi[5] = BIG
    work.row_b[t] = b
    work.row_gamma[t] = g
    work.row_lo[t] = lo
    work.row_hi[t] = hi


@wp.func
def row_update(p: float, rate: float, target: float, gamma: float, w: float, lo: float, hi: float):
    """One projected update of a row; returns the new accumulated impulse."""
    denom = w + gamma
    if denom <= 0.0:
        return wp.clamp(p, lo, hi)
    return wp.clamp(p - (rate - target + gamma * p) / denom, lo, hi)


@wp.func
def solve_transmission(
    t: int,
    tm: TransmissionModel,
    bodies: BodyModel,
    slot_base: int,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_delta: wp.array(dtype=wp.spatial_vector),
    scratch: TransmissionScratch,
    work: TransmissionWork,
    slot_delta: wp.array(dtype=wp.spatial_vector),
):
    """XPBD: one Gauss-Seidel pass over tendon ``t``'s rows at the current iterate (see module
    docstring); the pose change of each body ``h M_b^-1 J_s dp`` goes to the tendon's slots
    ``slot_base + s``."""
    s0 = slot_begin(tm, t)
    s1 = slot_end(tm, t)
    if work.enabled[t] == 0:
        for s in range(s0, s1):
            slot_delta[slot_base + s] = wp.spatial_vector()
        return
    h = dt
    # The Jacobian (scratch) and W are those of the step start, as the spec's rows prescribe; W is the
    # split one where bodies are shared by several row owners (mass splitting, ``transmission_splitting``).
    w = work.w[t]
    if work.w_split.shape[0] > 0:
        w = work.w_split[t]
    rate = iterate_rate(tm, t, body_qd, body_delta, 1.0 / h, scratch)
    b = work.row_b[t]
    g = work.row_gamma[t]
    lo = work.row_lo[t]
    hi = work.row_hi[t]
    mu = work.mu[t]
    dp = float(0.0)
    for r in range(ROWS):
        p_new = row_update(mu[r], rate, b[r], g[r], w, lo[r], hi[r])
        rate = rate + w * (p_new - mu[r])
        dp = dp + p_new - mu[r]
        mu[r] = p_new
    work.mu[t] = mu
    # The couplings run after this pass and read the rate with these rows' impulses included
    # (Gauss-Seidel across the tendon's rows and its couplings). Reading the rate from before them
    # made a coupling and a limit row on the same tendon correct one error twice per pass; with
    # both rigid and a joint pulling the bodies back, that Jacobi overshoot grew ~1.4x per pass.
    work.rate[t] = rate
    # The step-start response, as W is the step start's (``begin_transmissions``); zero on an
    # immovable body and when dp is 0.
    for s in range(s0, s1):
        slot_delta[slot_base + s] = scratch.resp[s] * (h * dp)


@wp.kernel(module=TRANSMISSION_KERNELS)
def solve_transmissions(
    # Model:
    tm: TransmissionModel,
    bodies: BodyModel,
    count: int,
    chunk: int,
    slot_base: int,
    dt: float,
    # State: current predicted poses and velocities
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Scratch:
    body_delta: wp.array(dtype=wp.spatial_vector),
    scratch: TransmissionScratch,
    work: TransmissionWork,
    slot_delta: wp.array(dtype=wp.spatial_vector),
):
    """``solve_transmission`` for ``chunk`` tendons per thread (``count`` in all)."""
    first = wp.tid() * chunk
    for t in range(first, wp.min(first + chunk, count)):
        solve_transmission(t, tm, bodies, slot_base, dt, body_q, body_qd, body_delta, scratch, work, slot_delta)


@wp.kernel(module=TRANSMISSION_KERNELS)
def report_transmissions(
    # Model:
    tm: TransmissionModel,
    par: TransmissionParams,
    dt: float,
    # State: the state the step wrote
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    # State out: the warm-start impulses of the next step
    transmission_row_impulse_out: wp.array(dtype=vec6),
    # Scratch:
    scratch: TransmissionScratch,
    work: TransmissionWork,
    # Output:
    rep: TransmissionReport,
):
    """Results of the step at its final pose: length, rate, forces (impulse / h), energies.
    A disabled tendon reports zero forces (its geometry stays inspectable)."""
    t = wp.tid()
    report_geometry(tm, par, t, body_q, body_qd, scratch, rep)
    inv_h = 1.0 / dt
    mu = work.mu[t]
    f_limit = (mu[2] + mu[3]) * inv_h
    total = total_impulse(work, t) * inv_h
    if work.enabled[t] == 0:
        total = 0.0
        f_limit = 0.0
    rep.force[t] = total
    rep.tension[t] = -total
    rep.actuation_force[t] = mu[1] * inv_h * float(work.enabled[t])
    rep.limit_force[t] = f_limit
    rep.friction_force[t] = mu[4] * inv_h * float(work.enabled[t])
    rep.coupling_force[t] = 0.0
    transmission_row_impulse_out[t] = mu


@wp.kernel(module=TRANSMISSION_KERNELS)
def reset_transmissions(
    # Input:
    world_mask: wp.array(dtype=wp.int32),
    # Model:
    world: wp.array(dtype=wp.int32),
    reference: wp.array(dtype=float),
    term_start: wp.array(dtype=wp.int32),
    term_initial: wp.array(dtype=float),
    # State: reset in place
    activation: wp.array(dtype=float),
    state_reference: wp.array(dtype=float),
    term_coordinate: wp.array(dtype=float),
    # Output: the solver's force diagnostics
    report: TransmissionReport,
):
    """Reset the selected worlds' tendons: zero activation, reference lengths and fixed-tendon
    joint coordinates from the model, and no force reported yet (the first observation of a new
    episode must not carry the last episode's tension)."""
    t = wp.tid()
    w = world[t]
    if not world_selected(world_mask, w):
        return
    report.force[t] = 0.0
    report.tension[t] = 0.0
    report.actuation_force[t] = 0.0
    report.limit_force[t] = 0.0
    report.friction_force[t] = 0.0
    report.coupling_force[t] = 0.0
    activation[t] = 0.0
    state_reference[t] = reference[t]
    for k in range(term_start[t], term_start[t + 1]):
        term_coordinate[k] = term_initial[k]
