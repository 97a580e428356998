"""Transmission tendons: polynomial couplings ``C = l1 - l1_ref - f(l2 - l2_ref)`` between two tendons.

A coupling is one bilateral row with Jacobian ``J_C = J1 - f' J2`` built from its tendons' slots
(``transmission_geometry``); it is set up from their start-of-step lengths and, in SolverXPBD, solved
after their rows in each pass (``transmission_rows.solve_transmissions``).
"""

import warp as wp

from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.transmission_data import (
    BIG,
    TRANSMISSION_KERNELS,
    TransmissionModel,
    TransmissionReport,
    TransmissionScratch,
    TransmissionWork,
)
from newton_tendon.kernels.transmission_geometry import (
    body_jacobian,
    response,
    slot_begin,
    slot_end,
    slot_inverse_mass,
    uncancelled,
)
from newton_tendon.kernels.transmission_rows import row_update

wp.set_module_options({"enable_backward": False})


@wp.struct
class CouplingModel:
    """Polynomial couplings ``C = l1 - l1_ref - f(l2 - l2_ref)``, ``f = c0 + c1 x + ... + c4 x^4``.

    Coupling c owns slots ``slot_start[c] ..``: copies of its first tendon's slots, then of its
    second's (``second = -1``: none)."""

    first: wp.array(dtype=wp.int32)
    second: wp.array(dtype=wp.int32)
    coefficients: wp.array(dtype=wp.types.vector(5, float))
    compliance: wp.array(dtype=float)
    position_correction: wp.array(dtype=float)
    slot_start: wp.array(dtype=wp.int32)


@wp.struct
class CouplingWork:
    """Per-coupling step data: C and f'(x) at the step start, the accumulated impulse [N s]."""

    c_n: wp.array(dtype=float)
    slope: wp.array(dtype=float)
    w: wp.array(dtype=float)
    p: wp.array(dtype=float)
    active: wp.array(dtype=wp.int32)
    w_split: wp.array(dtype=float)
    """Split W_s,C [1/kg] per coupling (``split_coupling_masses``), or shape [0] (no mass splitting)."""
    slot_w: wp.array(dtype=float)
    """Each coupling slot's term of its coupling's W [1/kg] (see ``TransmissionWork.slot_w``), or shape [0]."""


@wp.func
def polynomial(cf: wp.types.vector(5, float), x: float):
    """(f(x), f'(x)) by Horner's rule."""
    f = cf[4]
    df = float(0.0)
    for i in range(3, -1, -1):
        df = df * x + f
        f = f * x + cf[i]
    return f, df


@wp.func
def coupling_jacobian(tm: TransmissionModel, scratch: TransmissionScratch, t1: int, t2: int, slope: float, b: int):
    """J_C on body b: J1_b - f' J2_b."""
    jb = body_jacobian(tm, t1, scratch, b)
    if t2 >= 0:
        jb = jb - body_jacobian(tm, t2, scratch, b) * slope
    return jb


@wp.func
def coupling_slot(tm: TransmissionModel, t1: int, t2: int, n1: int, k: int):
    """Transmission slot of the k-th slot of a coupling (the first tendon's, then the second's)."""
    if k < n1:
        return slot_begin(tm, t1) + k
    return slot_begin(tm, t2) + (k - n1)


@wp.func
def coupling_body_inverse_mass(
    tm: TransmissionModel,
    bodies: BodyModel,
    t1: int,
    t2: int,
    slope: float,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    k: int,
):
    """Moving body b of a coupling's k-th slot and its term J_C,b^T M_b^-1 J_C,b of W_C [1/kg], where
    k is b's first slot of the coupling (else b = -1, term 0); round-off terms count as 0
    (JACOBIAN_CANCEL)."""
    n1 = slot_end(tm, t1) - slot_begin(tm, t1)
    b = scratch.body[coupling_slot(tm, t1, t2, n1, k)]
    if not is_moving_body(bodies, b):
        return -1, 0.0
    for r in range(k):
        if scratch.body[coupling_slot(tm, t1, t2, n1, r)] == b:
            return -1, 0.0
    jb = coupling_jacobian(tm, scratch, t1, t2, slope, b)
    w_slots = slot_inverse_mass(tm, bodies, t1, body_q, scratch, b)
    if t2 >= 0:
        w_slots = w_slots + slope * slope * slot_inverse_mass(tm, bodies, t2, body_q, scratch, b)
    return b, uncancelled(wp.dot(jb, response(bodies, b, body_q[b], jb)), w_slots)


@wp.func
def coupling_slot_count(tm: TransmissionModel, t1: int, t2: int):
    n = slot_end(tm, t1) - slot_begin(tm, t1)
    if t2 >= 0:
        n = n + slot_end(tm, t2) - slot_begin(tm, t2)
    return n


@wp.func
def coupling_inverse_mass(
    tm: TransmissionModel,
    bodies: BodyModel,
    t1: int,
    t2: int,
    slope: float,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    slot_w: wp.array(dtype=float),
    k0: int,
):
    """W_C = sum over the distinct moving bodies of both tendons of J_C,b^T M_b^-1 J_C,b
    (``coupling_body_inverse_mass``); the k-th slot's term goes to ``slot_w[k0 + k]`` unless
    ``slot_w`` has shape [0]."""
    w = float(0.0)
    for k in range(coupling_slot_count(tm, t1, t2)):
        b, w_b = coupling_body_inverse_mass(tm, bodies, t1, t2, slope, body_q, scratch, k)
        w = w + w_b
        if slot_w.shape[0] > 0:
            slot_w[k0 + k] = w_b
    return w


@wp.kernel(module=TRANSMISSION_KERNELS)
def begin_couplings(
    # Model:
    tm: TransmissionModel,
    cm: CouplingModel,
    bodies: BodyModel,
    warm: int,
    # Control:
    enabled: wp.array(dtype=wp.int32),
    # State in:
    transmission_reference_length_in: wp.array(dtype=float),
    body_q_in: wp.array(dtype=wp.transform),
    coupling_impulse_in: wp.array(dtype=float),
    # Scratch:
    scratch: TransmissionScratch,
    work: TransmissionWork,
    cw: CouplingWork,
):
    """Step start: C_n and f'(x_n) from the tendons' start-of-step lengths (evaluated once per step,
    as the spec prescribes); a coupling acts only while it and both tendons are enabled."""
    c = wp.tid()
    t1 = cm.first[c]
    t2 = cm.second[c]
    cw.p[c] = 0.0
    if warm != 0:
        cw.p[c] = coupling_impulse_in[c]
    active = enabled[c] * work.enabled[t1]
    x = float(0.0)
    if t2 >= 0:
        active = active * work.enabled[t2]
        x = work.l_n[t2] - transmission_reference_length_in[t2]
    f, df = polynomial(cm.coefficients[c], x)
    if t2 < 0:
        f = cm.coefficients[c][0]
        df = 0.0
    cw.active[c] = active
    cw.c_n[c] = work.l_n[t1] - transmission_reference_length_in[t1] - f
    cw.slope[c] = df
    cw.w[c] = coupling_inverse_mass(tm, bodies, t1, t2, df, body_q_in, scratch, cw.slot_w, cm.slot_start[c])


@wp.kernel(module=TRANSMISSION_KERNELS)
def solve_couplings(
    # Model:
    tm: TransmissionModel,
    cm: CouplingModel,
    bodies: BodyModel,
    slot_base: int,
    dt: float,
    # State: current predicted poses
    body_q: wp.array(dtype=wp.transform),
    # Scratch:
    scratch: TransmissionScratch,
    work: TransmissionWork,
    cw: CouplingWork,
    slot_delta: wp.array(dtype=wp.spatial_vector),
):
    """One projected update of each coupling row at the current iterate (after
    ``solve_transmissions`` refreshed the tendons' geometry; the rates it left in ``work.rate``
    already include its rows' impulses of this pass): ``gamma = c/h^2``, target
    ``-beta C_n/h``, bilateral; ``J_C = J1 - f' J2``. Slots ``slot_base + slot_start[c] ..``."""
    c = wp.tid()
    t1 = cm.first[c]
    t2 = cm.second[c]
    k0 = cm.slot_start[c]
    n1 = slot_end(tm, t1) - slot_begin(tm, t1)
    n2 = int(0)
    if t2 >= 0:
        n2 = slot_end(tm, t2) - slot_begin(tm, t2)
    for k in range(k0, k0 + n1 + n2):
        slot_delta[slot_base + k] = wp.spatial_vector()
    if cw.active[c] == 0:
        return
    h = dt
    slope = cw.slope[c]
    rate = work.rate[t1]
    if t2 >= 0:
        rate = rate - slope * work.rate[t2]
    w = cw.w[c]
    if cw.w_split.shape[0] > 0:
        w = cw.w_split[c]
    p = cw.p[c]
    gamma = cm.compliance[c] / (h * h)
    p_new = row_update(p, rate, -cm.position_correction[c] * cw.c_n[c] / h, gamma, w, -BIG, BIG)
    cw.p[c] = p_new
    dp = p_new - p
    if dp == 0.0:
        return
    for k in range(n1 + n2):
        s = coupling_slot(tm, t1, t2, n1, k)
        scale = h * dp
        if k >= n1:
            scale = -slope * h * dp
        slot_delta[slot_base + k0 + k] = scratch.resp[s] * scale


@wp.kernel(module=TRANSMISSION_KERNELS)
def report_coupling_forces(
    # Model:
    cm: CouplingModel,
    coupling_start: wp.array(dtype=wp.int32),
    coupling_of: wp.array(dtype=wp.int32),
    dt: float,
    # Scratch:
    cw: CouplingWork,
    work: TransmissionWork,
    # Output:
    rep: TransmissionReport,
):
    """Coupling forces: lambda = p/h per coupling; a tendon receives F1 = lambda as the first
    tendon and F2 = -f' lambda as the second, added to its total force (and tension)."""
    t = wp.tid()
    total = float(0.0)
    for i in range(coupling_start[t], coupling_start[t + 1]):
        c = coupling_of[i]
        lam = cw.p[c] / dt
        if cm.first[c] == t:
            total = total + lam
        else:
            total = total - cw.slope[c] * lam
    rep.coupling_force[t] = total
    if work.enabled[t] != 0:
        rep.force[t] = rep.force[t] + total
        rep.tension[t] = -rep.force[t]


@wp.kernel(module=TRANSMISSION_KERNELS)
def coupling_lambda(
    # Model:
    dt: float,
    # State out: the warm-start impulse of the next step
    coupling_impulse_out: wp.array(dtype=float),
    # Scratch:
    cw: CouplingWork,
    # Output:
    coupling_force: wp.array(dtype=float),
):
    c = wp.tid()
    coupling_force[c] = cw.p[c] / dt
    coupling_impulse_out[c] = cw.p[c]
