"""Routed cables: SolverVBD's span rows (``TendonLinearization``) and how their tensions are
evaluated: a span's own augmented-Lagrangian row, a run row (spans joined by frictionless guides,
``run_tension``), a chain row (runs joined by frictional guides, projected onto the capstan bound,
``chain_tension``), and the dual step after a body sweep (``update_span_duals``, ``VBD_MODULE``).

The row model is the ``TendonLinearization`` docstring. ``newton_tendon.kernels.vbd`` reads these
rows in the body sweep (``row_tension``, ``linearized_tension``, ``single_row``); the rows are built
by ``vbd_linearize.linearize_tendon``.
"""

import warp as wp

from newton_tendon.kernels.cable.constants import (
    CHAIN_SETTLE,
    CHAIN_SWEEPS,
    GEOMETRIC_STIFFNESS_CAP,
    GEOMETRIC_STIFFNESS_MIN,
    VBD_MODULE,
    chain_vec,
)
from newton_tendon.kernels.cable.span import seg_index
from newton_tendon.kernels.cable.transfer import capstan_transfer
from newton_tendon.kernels.routing import TendonModel

wp.set_module_options({"enable_backward": False})


@wp.struct
class TendonLinearization:
    """VBD span rows, linearized at the end bodies' poses ``ql``, ``qr`` (one entry per span, per guide slot).

    A span is an augmented-Lagrangian row on its stretch ``C = l - L`` with compliance c:

        T_al(x) = lambda + k (C(x) - c lambda),   k = 1 / (c + 1/k_pen),

    plus damping ``d (C - C_0)/dt`` for compliant spans (``C_0`` the stretch at the step start: the
    damper acts on the rate of stretch, so cable sliding through a guide or paid out by a winch at
    the span's tension feels none), and no force when the sum is negative
    (slack). At the fixed point of the dual update ``lambda <- max(T_al, -D+)`` (D+ the damping
    tension when positive: the span pulls while the sum is) the row satisfies
    ``C = c T`` exactly: a compliant spring, or an inextensible span for c = 0. The penalty
    ``k_pen = rho / (w dt^2)`` (w the row's inverse mass, rho = ``penalty_min``; growing it, as for
    the rigid rows, slowed the Gauss-Seidel coupling of multi-body cables) is capped at ``k_max`` =
    1e8 N/m (the
    1e-8 m/N compliance floor), which keeps float32 Newton steps well conditioned; the multiplier,
    not the penalty, carries the load. Near the linearization pose ``C(x) = c0 + J_l . d_l +
    J_r . d_r`` with ``d`` each end body's pose change (COM translation, rotation vector) and
    ``J`` the 6-vector gradients of the length. ``slot_span[2 g]`` is the span arriving at guide g,
    ``slot_span[2 g + 1]`` the span leaving it (-1 when none). The multiplier carries over from the
    previous step (``State.tendon_segment_multiplier``) unless the span is slack at the predicted
    pose; the penalty restarts at rho_min.

    Run rows. Spans joined by guides that pass material freely (a run of the material relaxation:
    capstan ratio 1, e.g. any frictionless pinhole or roller) are one row: material slides between
    them at once, so they carry one tension, the tension of their summed stretch,

        T_run = sum_s f_s T_s(x) / sum_s f_s,   f_s = 1/(k_s + d_s/dt),
        T_s(x) = lambda_s + k_s (C_s(x) - c_s lambda_s) + d_s (C_s(x) - C0_s)/dt,

    the spans' tensions (damping included) averaged with weights f_s: what moving material between
    them until they are equal gives, since a metre of material changes T_s by k_s + d_s/dt (spring
    and damper both act on C_s). A span without a row (no moving body changes its length: both ends
    immovable, or on one body) has the tension ``C_s/c_s + d_s (C_s - C0_s)/dt`` of the material in
    it, so ``f_s = 1/(1/c_s + d_s/dt)``; an inextensible one (f_s = 0) adds its stretch C_s
    (``run_tension``).
    Every span of the run applies T_run; its spring multiplier becomes T_run minus its damping
    tension (>= -damping, the per-span floor). A body's motion changes T_run through each of its
    spans by ``1 / sum f`` per metre, the row's Hessian scale. Per-span rows joined only by the
    relaxation between iterations made a body that slides along the cable (a bead on a frictionless
    pinhole, an Atwood machine) stretch one span and relax the other within an iteration, which
    left the spans across a frictionless guide pulling unequal tensions after the last sweep (16.3 N
    against 14.6 N one step after a 60 N snap; 2.66 N against 2.35 N beside a damped span; fuzz
    findings). A span at the rest-length floor that left the run (an end stop) keeps its own row.

    Chain rows. Rows joined by frictional guides (capstan ratio e = exp(mu theta) > 1, from the
    material relaxation of this iteration) form a chain. Wherever a chain's tensions are evaluated
    (a body's Newton step, the dual step, the geometric stiffness), the run tensions
    ``T_i = run_tension`` are first projected onto the capstan bound, as the material relaxation
    does between iterations: material moves across a guide whose tight side exceeds ``e`` times the
    slack side until it holds T_tight = e T_slack (``capstan_transfer``, Gauss-Seidel sweeps over
    the chain's guides, ``CHAIN_SWEEPS``/``CHAIN_SETTLE``), and a guide within its cone passes
    nothing. A rigid row between two frictional guides (an inextensible span between immovable
    guides) passes material straight through: the rows on its two sides are linked across it with
    the product of the two ratios. A compliant span between immovable guides ends a chain
    (``chain_member``), as do a span at the rest-length floor and the ``CHAIN_RUNS`` limit. Each
    span applies its run's projected tension, so a guide slips at once within a sweep when the
    bodies pull one side past the bound, and sticks otherwise. The Hessian keeps each run's own
    scale ``1 / sum f``, the sticking one; slipping only lowers dT/dC (material flows
    away), so the step stays a damped Newton step. With runs that exchanged material only
    through the relaxation between iterations, the body motion of the last sweep pulled the tight
    side of a slipping guide past the bound (0.885 N against 0.062 N at e = 12.9 after 16
    iterations, a fuzz finding).
    """

    body_delta: wp.array(dtype=wp.spatial_vector)
    """The solver's per-body sum of the Newton steps taken in this step (COM translation [m],
    rotation vector [rad]), read to measure how far an end body moved since the linearization."""
    dl: wp.array(dtype=wp.spatial_vector)
    """``body_delta`` of the left end body at the linearization (read only when ``bl`` >= 0): the
    body's motion since is ``body_delta[bl] - dl``, the sum of the Newton steps it took since, which
    is exactly the ``d`` the Newton model is linear in (the pose difference ``q q_ref^-1`` equals it
    to first order and cost two point transforms, a quaternion product and an atan2). Kept per span
    rather than per body so that a tendon's thread can take the previous iteration's dual step and
    then relinearize without another buffer."""
    dr: wp.array(dtype=wp.spatial_vector)
    """``body_delta`` of the right end body at the linearization (read only when ``br`` >= 0)."""
    slot_span: wp.array(dtype=wp.int32)
    lam: wp.array(dtype=float)
    """Multiplier [N] (warm-started across steps)."""
    c0: wp.array(dtype=float)
    """Stretch l - L [m] at the linearization pose."""
    dl0: wp.array(dtype=float)
    """C - C_0 [m] at the linearization pose, after this iteration's material relaxation: the change
    of stretch since the step start (damping)."""
    comp: wp.array(dtype=float)
    k: wp.array(dtype=float)
    """Effective penalty [N/m]; 0 for a span that exerts nothing (both ends on one body)."""
    damp: wp.array(dtype=float)
    """d / dt [N/m] (compliant spans only)."""
    jl: wp.array(dtype=wp.spatial_vector)
    jr: wp.array(dtype=wp.spatial_vector)
    bl: wp.array(dtype=wp.int32)
    br: wp.array(dtype=wp.int32)
    kg: wp.array(dtype=float)
    """Geometric stiffness T/l [N/m] of the span at the linearization pose (0 where negligible, see
    ``GEOMETRIC_STIFFNESS_MIN``): the Hessian of ``T l`` in an end point ``x`` is
    ``(T/l)(I - n n^T) + (dT/dl) n n^T``, and the Gauss-Newton rows keep only the second term. The
    first one is what holds an end point sideways on a short, loaded span, whose direction turns by
    a large angle when the point moves by a fraction of its length: without it the Newton step of a
    bead on a 3 mm span under 100 N overshoots sideways and the iterations settle into a two-cycle
    that leaves the span stretched (docs/vbd.md)."""
    rl: wp.array(dtype=wp.vec3)
    """Left end point relative to its body's COM [m], world frame, at the linearization."""
    rr: wp.array(dtype=wp.vec3)
    """Right end point relative to its body's COM [m], world frame, at the linearization."""
    chord: wp.array(dtype=float)
    """Straight distance [m] between the span's end points at the linearization (its free length:
    the curvature of the length in the end points' motion is at most 1/chord)."""
    flex: wp.array(dtype=float)
    """The span's weight f in its run row [m/N]: ``1/(k + d/dt)`` with a row, ``1/(1/c + d/dt)``
    without one (``k = 0``; 0 for an inextensible span), see ``run_tension``."""
    run_head: wp.array(dtype=wp.int32)
    """First span of the span's run row (itself when the span is a row of its own)."""
    run_next: wp.array(dtype=wp.int32)
    """Next span of the run row (-1 at its end; -1 for a span that is a row of its own, -2 for one
    that is a run of its own in a chain row)."""
    run_flex: wp.array(dtype=float)
    """At a run row's head: the run's flexibility sum(flex) [m/N], i.e. 1/k of the run row."""
    run_base: wp.array(dtype=float)
    """At a run row's head: sum(f T_s) [m] (``add_row_base``), the numerator of T_run at the
    linearization pose (the part that the body motion within the iteration does not change)."""
    chain_head: wp.array(dtype=wp.int32)
    """At a run's head: the head of the first run of its chain row (-1 when not in a chain)."""
    chain_next: wp.array(dtype=wp.int32)
    """At the head of a run in a chain row: the head of the next run (-1 at the chain's end)."""
    chain_ratio: wp.array(dtype=float)
    """At a run's head: the capstan ratio exp(mu theta) [1] of the guide to the next run."""
    route_tree_bodies: wp.array(dtype=float)
    """Per span: how many articulation bodies its tendon's route holds (SolverVBD's articulation
    pass; 0 without it). Those bodies take their Newton steps at once, so a run or chain row on them
    has its Hessian scaled by that count (``vbd_span_rows.add_tendon_slot``)."""


@wp.func
def linearized_stretch(lin: TendonLinearization, s: int):
    """Change of span s's length [m] since its linearization, to first order in the end bodies'
    motion: ``J_l . d_l + J_r . d_r`` with ``d`` the Newton steps each end body took since
    (``TendonLinearization.dl``/``dr``; COM translation [m], rotation vector [rad]) and ``J`` the
    length gradients [1, m]."""
    stretch = float(0.0)
    bl = lin.bl[s]
    br = lin.br[s]
    if bl >= 0:
        stretch = stretch + wp.dot(lin.jl[s], lin.body_delta[bl] - lin.dl[s])
    if br >= 0:
        stretch = stretch + wp.dot(lin.jr[s], lin.body_delta[br] - lin.dr[s])
    return stretch


@wp.func
def al_tension(lin: TendonLinearization, s: int, dl: float):
    """Augmented-Lagrangian part of span s's tension [N] after a length change dl (may be < 0)."""
    lam = lin.lam[s]
    return lam + lin.k[s] * (lin.c0[s] + dl - lin.comp[s] * lam)


@wp.func
def geometric_stiffness(lin: TendonLinearization, s: int, tension: float, length: float):
    """Span s's geometric stiffness ``T/l`` [N/m] at its linearization pose (``TendonLinearization.kg``):
    T [N] the tension of its row (or run row) there, damping included (none when <= 0), l > 0 its
    length [m]. Capped at
    the penalty cap ``1 / TENDON_COMPLIANCE_FLOOR`` like the rows (a loaded span of nearly zero length
    pins its end point sideways), and 0 below ``GEOMETRIC_STIFFNESS_MIN`` of the row's stiffness,
    where it would change the Newton step by less than that fraction: long spans skip the extra
    Hessian block."""
    kg = wp.min(wp.max(tension, 0.0) / length, GEOMETRIC_STIFFNESS_CAP)
    if kg < GEOMETRIC_STIFFNESS_MIN * lin.k[s]:
        kg = 0.0
    return kg


@wp.func
def linearized_tension(lin: TendonLinearization, s: int):
    """Tension [N] span s's row exerts after its end bodies' Newton steps since the linearization (0
    when slack), damping included."""
    if lin.k[s] <= 0.0:
        return 0.0
    dl = linearized_stretch(lin, s)
    return wp.max(al_tension(lin, s, dl) + lin.damp[s] * (lin.dl0[s] + dl), 0.0)


@wp.func
def add_row_base(lin: TendonLinearization, s: int, base: float):
    """``base`` plus span s's term of a run row's ``run_base`` [m]: ``f T_s`` at the linearization
    pose, ``lambda f + k f (c0 - c lambda) + d f (C - C_0)`` (``run_tension``; d here the damping
    rate ``lin.damp`` = d/dt [N/m]), summed in this order (the order the run rows had before chain
    rows, so undamped cables keep their bits). ``k f`` is ``k/(k + d)`` with a row; a span without
    one has no multiplier and its spring for k (k = 1/c: ``k f = 1/(1 + c d)``); ``k f`` = 1 for an
    undamped span and an inextensible one (whose f is 0: it adds its stretch)."""
    lam = lin.lam[s]
    kf = float(1.0)
    if lin.damp[s] > 0.0:
        if lin.k[s] > 0.0:
            kf = lin.k[s] / (lin.k[s] + lin.damp[s])
        else:
            kf = 1.0 / (1.0 + lin.comp[s] * lin.damp[s])  # k = 1/c: the spring of a span without a row
    total = base + lam * lin.flex[s] + kf * lin.c0[s] - kf * lin.comp[s] * lam
    return total + lin.damp[s] * lin.flex[s] * lin.dl0[s]


@wp.func
def chain_member(lin: TendonLinearization, head: int):
    """Whether the run row starting at span ``head`` can join a chain row: it has flexibility and
    a span that a moving body holds (a compliant span between immovable guides, whose tension
    only the material changes, ends a chain: with it, the chains held a two-pinhole capstan 3 %
    below its bound while it slipped)."""
    return lin.run_flex[head] > 0.0 and (lin.run_next[head] >= 0 or lin.k[head] > 0.0)


@wp.func
def rigid_row(lin: TendonLinearization, head: int):
    """Whether span ``head`` is a rigid row of its own: inextensible, no moving body holds it. A
    chain row passes material straight through it (``TendonLinearization``)."""
    return lin.run_next[head] < 0 and lin.k[head] <= 0.0 and lin.flex[head] <= 0.0


@wp.func
def chained(lin: TendonLinearization, head: int):
    """Whether the run row starting at span ``head`` is part of a chain row."""
    return lin.chain_head[head] >= 0


@wp.func
def chain_tension(lin: TendonLinearization, head: int):
    """Tension [N] (negative: slack) of the run row starting at span ``head`` within its chain row:
    the chain's run tensions after the bodies' Newton steps since the linearization, projected onto
    the capstan bound of the guides between them (``TendonLinearization``, chain rows)."""
    tension = chain_vec()
    flex = chain_vec()
    ratio = chain_vec()
    n = int(0)
    own = int(0)
    scale = float(0.0)
    h = lin.chain_head[head]
    while h >= 0:
        if h == head:
            own = n
        tension[n] = run_tension(lin, h)
        flex[n] = lin.run_flex[h]
        ratio[n] = lin.chain_ratio[h]
        scale = wp.max(scale, wp.abs(tension[n]))
        n += 1
        h = lin.chain_next[h]
    for _sweep in range(CHAIN_SWEEPS):
        change = float(0.0)
        for i in range(n - 1):
            delta = capstan_transfer(tension[i], tension[i + 1], 1.0 / flex[i], 1.0 / flex[i + 1], ratio[i])
            if delta != 0.0:
                tension[i] = tension[i] - delta / flex[i]
                tension[i + 1] = tension[i + 1] + delta / flex[i + 1]
                change = wp.max(change, wp.max(wp.abs(delta / flex[i]), wp.abs(delta / flex[i + 1])))
        if change <= CHAIN_SETTLE * scale:
            break
    return tension[own]


@wp.func
def row_tension(lin: TendonLinearization, head: int):
    """Tension [N] (negative: slack) of the run row starting at span ``head``, within its chain
    row when it is in one (``TendonLinearization``)."""
    if chained(lin, head):
        return chain_tension(lin, head)
    return run_tension(lin, head)


@wp.func
def single_row(lin: TendonLinearization, s: int):
    """Whether span s is a row of its own (not part of a run or chain row)."""
    return lin.run_head[s] == s and lin.run_next[s] == -1


@wp.func
def run_tension(lin: TendonLinearization, head: int):
    """Augmented-Lagrangian tension [N] of the run row starting at span ``head`` after its bodies'
    Newton steps since the linearization (may be negative: slack), see ``TendonLinearization``.

    The row. Each member span s of the run has, with ``D_s = d_s/dt`` [N/m] its damping rate,

        with a row:    T_s = lambda_s + k_s (C_s - c_s lambda_s) + D_s (C_s - C0_s)
        without a row: T_s = C_s / c_s + D_s (C_s - C0_s)          (no moving body: its spring is k = 1/c)

    [N], C_s = l_s - L_s [m] its stretch, C0_s its stretch at the step start. Material slides
    through the run's guides freely: a length delta_s [m] of material moved into span s lowers C_s by
    delta_s and so T_s by ``delta_s / f_s``, ``f_s = 1/(k_s + D_s)`` [m/N] (spring and damper both
    act on C_s). It flows until every member pulls one tension T, so ``delta_s = f_s (T_s - T)``, and
    conservation, ``sum delta_s = 0``, gives

        T_run = sum_s f_s T_s / sum_s f_s,        F = sum_s f_s [m/N].

    The run is one row of compliance F: its members' incremental stiffnesses ``k_s + d_s/dt``
    (Kelvin-Voigt elements) in series. Without damping F = sum 1/k_s, the compliances in series; an
    inextensible member without a row (f_s = 0) adds its stretch C_s to the numerator. Leaving a
    row-less member's damping out (f_s = c_s, T_s = C_s/c_s) made it a bare spring in series with
    the others' dampers, which swung undamped.

    The gradient. A body b holding an end of member s changes C_s by ``J_s,b . d_b`` (J_s,b the
    length gradient, [1] for the COM translation, [m] for the rotation vector), and T_run by
    ``f_s (k_s + D_s) J_s,b . d_b / F = J_s,b . d_b / F``: hence ``run_base`` (sum f T_s at the
    linearization pose [m]) plus the summed linearized stretch of the members with a row, over F.
    The body's Newton step adds the force ``-T_run J_s,b`` [N, N m] and the Gauss-Newton Hessian
    ``J_s,b J_s,b^T / F`` [N/m, N, N m] (``add_tendon_slot``); members without a row have no
    gradient."""
    total = lin.run_base[head]
    m = head
    while m >= 0:
        if lin.k[m] > 0.0:
            total = total + linearized_stretch(lin, m)  # f_m (k_m + d_m) = 1 per metre
        m = lin.run_next[m]
    return total / lin.run_flex[head]


@wp.func
def update_tendon_span_duals(
    tm: TendonModel,
    t: int,
    dt: float,
    lin: TendonLinearization,
    lam_hat: wp.array(dtype=float),
    lam_felt: wp.array(dtype=float),
):
    """The dual step of tendon t's spans after a body sweep (``update_span_duals``)."""
    for g in range(tm.start[t] + 1, tm.start[t + 1]):
        s = seg_index(t, g)
        if not single_row(lin, s):
            # A run row, updated as a whole from its head (the run's first span, met first).
            if lin.run_head[s] == s:
                tension = wp.max(row_tension(lin, s), 0.0)
                m = s
                while m >= 0:
                    damping = float(0.0)
                    if lin.k[m] > 0.0:
                        damping = lin.damp[m] * (lin.dl0[m] + linearized_stretch(lin, m))
                    lin.lam[m] = tension - damping
                    lam_felt[m] = tension * dt * dt
                    m = lin.run_next[m]
            continue
        # A span no moving body feels (immovable or same-body ends) reports the tension the
        # material relaxation gave it, as XPBD does.
        lam_felt[s] = wp.max(lam_hat[s], 0.0)
        if lin.k[s] > 0.0:
            dl = linearized_stretch(lin, s)
            damping = lin.damp[s] * (lin.dl0[s] + dl)
            lam_felt[s] = wp.max(al_tension(lin, s, dl) + damping, 0.0) * dt * dt
            # The row pulls while spring + damping > 0 (T = C/c + d (C - C0)/dt, XPBD's and the relaxation's
            # tension), so the spring's multiplier may go down to -damping: clamped at 0, a slack span that
            # lengthens fast kept the penalty-softened k C < C/c and pulled harder than its run.
            lam_floor = float(0.0)
            if damping > 0.0:
                lam_floor = -damping
            lin.lam[s] = wp.max(al_tension(lin, s, dl), lam_floor)


@wp.kernel(module=VBD_MODULE)
def update_span_duals(
    # Model:
    tm: TendonModel,
    tendon_count: int,
    chunk: int,
    dt: float,
    # Scratch: the linearization and dual step in; the tension felt out
    lin: TendonLinearization,
    lam_hat: wp.array(dtype=float),
    lam_felt: wp.array(dtype=float),
):
    """After a VBD sweep: the dual step ``lambda <- max(T_al, -D+)`` of every active span, and
    ``lam_felt = T dt^2`` with T the tension its row exerted (the multiplier ``relax_tendon``
    predicts from and the inextensible spans' reported tension). Inactive spans report 0.
    SolverVBD launches it after the last sweep only: ``linearize_tendons`` takes the earlier
    iterations' dual steps. A thread takes the tendons ``[chunk tid, chunk (tid + 1))`` (module
    docstring: *Chunks*)."""
    t0 = wp.tid() * chunk
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        update_tendon_span_duals(tm, t, dt, lin, lam_hat, lam_felt)
