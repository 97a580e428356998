"""VBD for rigid bodies: the rows of transmission tendons and couplings on a body, and their dual step.

Each row of a tendon (``transmission_rows``) or coupling acts on a body through its Jacobian ``J_b``
with the augmented-Lagrangian impulse law ``row_law``; at the fixed point of the multipliers every
row satisfies the same discrete equation as SolverXPBD's projected update.
"""

import warp as wp

from newton_tendon.kernels.rigid import BodyModel
from newton_tendon.kernels.transmission_couplings import CouplingModel, CouplingWork, coupling_jacobian
from newton_tendon.kernels.transmission_data import ROWS, TransmissionModel, TransmissionScratch, TransmissionWork
from newton_tendon.kernels.transmission_geometry import body_jacobian, iterate_rate
from newton_tendon.kernels.vbd_block import add_twist_row

wp.set_module_options({"enable_backward": False})

TRANSMISSION_MODULE = "newton_tendon.kernels.vbd_transmission"
"""Warp module of the kernels that involve transmission tendons, so that a model without them never
compiles that code (a cold kernel cache compiles each Warp module on its first launch)."""
wp.set_module_options({"enable_backward": False}, module=TRANSMISSION_MODULE)


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


@wp.kernel(module=TRANSMISSION_MODULE)
def update_transmission_duals(
    # Model:
    dt: float,
    # Scratch:
    xs: VBDTransmissions,
    body_delta: wp.array(dtype=wp.spatial_vector),
):
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
def update_coupling_duals(
    # Model:
    dt: float,
    # Scratch:
    xs: VBDTransmissions,
    body_delta: wp.array(dtype=wp.spatial_vector),
):
    c = wp.tid()
    if xs.cw.active[c] == 0:
        return
    p, k = coupling_row(xs, c, coupling_rate(xs, c, body_delta, 1.0 / dt), dt)
    xs.cw.p[c] = p
