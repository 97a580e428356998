"""Transmission tendons: mass splitting (SolverXPBD).

SolverXPBD's transmission pass is block Jacobi across *row owners*: each enabled tendon with a
responsive row (lo < hi; a fixed impulse lo = hi cannot overshoot) is one block, solved
Gauss-Seidel over its rows, and each active coupling is another; the owners' pose corrections
h M_b^-1 J_ib dp_i are summed per body. With A = J M^-1 J^T over the owners' Jacobians J_i and
D = diag(W_i), W_i = J_i M^-1 J_i^T, one pass maps the impulse error by I - D^-1 A. N rigid rows
acting on one coordinate give D^-1 A the eigenvalue N: the pass multiplies that error by 1 - N
(-2 for three rows), so rows that demand incompatible motions of one body over-correct it
together, and position correction feeds the growth from step to step (a lock, a coupling and a
limit on one prismatic body: ~1.1x per step to overflow).

Mass splitting (Tonge, Benevolenski, Voroshilov, Mass splitting for jitter-free parallel rigid
body simulation, SIGGRAPH 2012): each owner sees body b as a sub-body of inverse mass n_b M_b^-1,
n_b [-] the number of owners acting on b this step, and the sub-bodies' corrections are averaged:

    dx_b = (1/n_b) sum_i h (n_b M_b^-1) J_ib dp_i = h M_b^-1 sum_i J_ib dp_i,

the unchanged sum of each impulse's true response (so the body's momentum change is exactly the
impulses the rows report), while each owner's effective inverse mass becomes

    W_s,i = sum_b n_b J_ib^T M_b^-1 J_ib   [1/kg, or 1/(kg m^2) for an angle-valued tendon].

By Cauchy-Schwarz in the M_b^-1 norm, |sum_i J_ib x_i|^2 <= n_b sum_i |J_ib x_i|^2 over b's n_b
owners, so x^T A x <= sum_i W_s,i x_i^2, i.e. 0 <= A <= D_s: the eigenvalues of D_s^-1 A lie in
[0, 1], and those of the pass's map I - (D_s + G)^-1 (A + G) (G = diag(gamma) >= 0) in [0, 1).
Rows never over-correct together: conflicting rigid rows settle at their compromise (their
impulses drift apart within the step, bounded by the step's iterations, as for any unmeetable
row), and rows that agree converge as before. With n_b = 1 on every body W_s = W bit for bit, so
scenes whose bodies each carry at most one owner are unchanged. A coupling still reads its
tendons' rates after their rows (Gauss-Seidel, see ``solve_transmissions``), in the split view
J v + W_s dp of the tendon's sub-bodies.
"""

import warp as wp

from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.transmission_couplings import CouplingModel, CouplingWork, coupling_slot, coupling_slot_count
from newton_tendon.kernels.transmission_data import (
    ROWS,
    TRANSMISSION_KERNELS,
    TransmissionModel,
    TransmissionScratch,
    TransmissionWork,
)
from newton_tendon.kernels.transmission_geometry import slot_begin, slot_end

wp.set_module_options({"enable_backward": False})


@wp.func
def is_row_owner(work: TransmissionWork, t: int):
    """Whether tendon t acts through a row that responds to the motion (lo < hi) this step."""
    if work.enabled[t] == 0:
        return False
    lo = work.row_lo[t]
    hi = work.row_hi[t]
    for r in range(ROWS):
        if lo[r] < hi[r]:
            return True
    return False


@wp.kernel(module=TRANSMISSION_KERNELS)
def count_row_owners(
    # Model:
    bodies: BodyModel,
    slot_base: int,
    slot_tendon: wp.array(dtype=wp.int32),
    slot_coupling: wp.array(dtype=wp.int32),
    # Scratch:
    work: TransmissionWork,
    cw: CouplingWork,
):
    """n_b = number of row owners (tendons with a responsive row, active couplings) with a slot on
    moving body b, at least 1, into ``work.body_split``. A body's slots are sorted, so the slots of one
    owner on it are adjacent; transmission slots start at ``slot_base``, coupling slots follow them."""
    b = wp.tid()
    n = int(0)
    if is_moving_body(bodies, b):
        tx_count = slot_tendon.shape[0]
        last_t = int(-1)
        last_c = int(-1)
        for i in range(bodies.slot_start[b], bodies.slot_start[b + 1]):
            s = bodies.slot[i] - slot_base
            if s >= 0 and s < tx_count:
                t = slot_tendon[s]
                if t != last_t:
                    last_t = t
                    if is_row_owner(work, t):
                        n = n + 1
            elif s >= tx_count and s < tx_count + slot_coupling.shape[0]:
                c = slot_coupling[s - tx_count]
                if c != last_c:
                    last_c = c
                    if cw.active[c] != 0:
                        n = n + 1
    work.body_split[b] = float(wp.max(n, 1))


@wp.kernel(module=TRANSMISSION_KERNELS)
def split_transmission_masses(
    # Model:
    tm: TransmissionModel,
    bodies: BodyModel,
    # Scratch:
    scratch: TransmissionScratch,
    work: TransmissionWork,
):
    """W_s = sum_b n_b J_b^T M_b^-1 J_b [1/kg] of each tendon from the step-start terms in
    ``work.slot_w`` (mass splitting, module docstring), into ``work.w_split``; equals ``work.w`` bit for bit
    where every n_b is 1 (same terms, same order)."""
    t = wp.tid()
    w = float(0.0)
    for s in range(slot_begin(tm, t), slot_end(tm, t)):
        b = scratch.body[s]
        if is_moving_body(bodies, b):
            w = w + work.body_split[b] * work.slot_w[s]
    work.w_split[t] = w


@wp.kernel(module=TRANSMISSION_KERNELS)
def split_coupling_masses(
    # Model:
    tm: TransmissionModel,
    cm: CouplingModel,
    bodies: BodyModel,
    # Scratch:
    scratch: TransmissionScratch,
    work: TransmissionWork,
    cw: CouplingWork,
):
    """W_s,C = sum_b n_b J_C,b^T M_b^-1 J_C,b [1/kg] of each coupling from the step-start terms in
    ``cw.slot_w`` (mass splitting, module docstring), into ``cw.w_split``; equals ``cw.w`` bit for bit where
    every n_b is 1."""
    c = wp.tid()
    t1 = cm.first[c]
    t2 = cm.second[c]
    n1 = slot_end(tm, t1) - slot_begin(tm, t1)
    k0 = cm.slot_start[c]
    w = float(0.0)
    for k in range(coupling_slot_count(tm, t1, t2)):
        b = scratch.body[coupling_slot(tm, t1, t2, n1, k)]
        if is_moving_body(bodies, b):
            w = w + work.body_split[b] * cw.slot_w[k0 + k]
    cw.w_split[c] = w
