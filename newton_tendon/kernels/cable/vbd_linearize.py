"""Routed cables: SolverVBD's per-iteration tendon pass (``linearize_tendons``, ``VBD_MODULE``):
the dual step of the previous iteration's rows, ``vbd_relax.relax_tendon_vbd``, then each span's row
linearized at the current pose and grouped into run and chain rows (``linearize_tendon``), or the
previous rows kept while no gradient can have turned beyond rounding (``rows_still_hold``,
``keep_tendon_rows``, ``ROW_KEEP_TURN``).

The pass indexes the relaxation's scratch through contiguous views (``contiguous_work``). The row
model is in ``vbd_rows``.
"""

from typing import Any

import warp as wp

from newton_tendon.kernels.cable.cached import TendonGeometry
from newton_tendon.kernels.cable.constants import CHAIN_RUNS, REST_LENGTH_FLOOR, ROW_KEEP_TURN, VBD_MODULE
from newton_tendon.kernels.cable.span import (
    at_rest_floor,
    held_elastically,
    left_guide,
    out_segment,
    seg_index,
    span_compliance,
    span_damping,
    span_slot,
)
from newton_tendon.kernels.cable.transfer import capstan_product, frictional_guide
from newton_tendon.kernels.cable.types import TendonHistory, TendonWork
from newton_tendon.kernels.cable.vbd_relax import reads_run_level, relax_tendon_vbd
from newton_tendon.kernels.cable.vbd_rows import (
    TendonLinearization,
    add_row_base,
    al_tension,
    chain_member,
    chain_tension,
    chained,
    geometric_stiffness,
    rigid_row,
    single_row,
    update_tendon_span_duals,
)
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.routing import TendonModel

wp.set_module_options({"enable_backward": False})


# Contiguous views
#
# Warp's CPU code indexes an array reached through a struct field with its runtime stride (a load
# and a multiply per access), and gives the constant stride of a contiguous array only to top-level
# kernel arguments. The relaxation's scratch (``TendonWork``, solver-owned contiguous 1-D arrays) is
# rebuilt with the constant stride in ``linearize_tendons``: same memory, same values, 4-8 % faster
# there. Views of the other structs gained a few percent more but doubled the module's compile time.


@wp.func
def contiguous(a: wp.array(dtype=Any)):
    """The contiguous 1-D array ``a`` with a constant element stride (see above)."""
    return wp.array(ptr=wp.uint64(a.ptr), shape=(a.shape[0],), dtype=a.dtype)


@wp.func
def contiguous_work(work: TendonWork):
    """``work`` with every array a contiguous view (fields added later keep their original arrays)."""
    out = work
    out.stretch0 = contiguous(work.stretch0)
    out.rest0 = contiguous(work.rest0)
    out.lam = contiguous(work.lam)
    out.lam_hat = contiguous(work.lam_hat)
    out.stiff = contiguous(work.stiff)
    out.xl = contiguous(work.xl)
    out.xr = contiguous(work.xr)
    out.ratio = contiguous(work.ratio)
    out.run_first = contiguous(work.run_first)
    out.run_flex = contiguous(work.run_flex)
    out.run_num = contiguous(work.run_num)
    out.run_begin = contiguous(work.run_begin)
    out.run_end = contiguous(work.run_end)
    out.run_scale = contiguous(work.run_scale)
    out.run_skip = contiguous(work.run_skip)
    out.wrap_error = contiguous(work.wrap_error)
    return out


@wp.func
def row_turn_bound(du: wp.vec3, n: wp.vec3, chord: float, turn: float):
    """Bound [rad] on how far a span row's gradient has turned since its linearization
    (``rows_still_hold``): du [m] the right end's first-order motion relative to the left one's, n the
    unit direction from left to right at the linearization, chord [m] the free length l there, and
    turn [rad] the summed rotation angles of the two end bodies. The direction turns by at most
    ``|du_perp| / (l - |du_par|)`` (du split along n and across it), and an end's arm ``r x n`` by
    that plus its body's rotation, relative to |r|. Returns 1e30 when ``|du_par| >= l`` (the span
    may have folded)."""
    along = wp.dot(du, n)
    shortest = chord - wp.abs(along)
    if shortest <= 0.0:
        return 1.0e30
    return wp.length(du - along * n) / shortest + turn


@wp.func
def rows_still_hold(
    tm: TendonModel,
    bodies: BodyModel,
    t: int,
    active: wp.array(dtype=wp.int32),
    rest: wp.array(dtype=float),
    work: TendonWork,
    lin: TendonLinearization,
):
    """Whether tendon t's rows from the last linearization are as good as new ones at the current
    pose, so that ``linearize_tendon`` may keep them (``keep`` != 0) and take only the dual step.

    A row models its span's length as linear in the end bodies' motion d since the linearization,
    ``C = c0 + J . d``, and pulls along the fixed gradient J. A new linearization would change J
    as far as the span's direction and its ends' arms have turned. An end point moves by
    ``u = v + phi x r`` to first order (v the COM translation, phi the rotation vector, r the
    point's offset from the COM); with du the two ends' relative motion, the direction turns by at
    most ``|du_perp| / (l - |du_par|)`` (l the free length, ``chord``), and an arm ``r x n`` by |r|
    times that plus |phi| (``row_turn_bound``). A span wrapping a roller turns alike in its free end: the
    tangent point slides to where the wrapped length is stationary. When every span's bound is
    within ``ROW_KEEP_TURN`` (two float32 ulps of a unit vector), a new row would differ from the
    kept one by rounding alone: its force direction by that angle, and its length model by the
    second-order terms, ``l`` times the angle squared.

    Rows are kept only where the relaxation between iterations would not change them: no guide
    with friction (a capstan guide's slip is re-read each relaxation), no force winch (it reels
    against the run's tension), no span without a row that a moving body holds on one end (a
    zero-length span, e.g. a bead on an end stop, gains a row once it opens), no span that left its
    run at the rest-length floor, and no span whose material is within the tendon's summed length
    change ``sum |J . d|`` of the floor (the most the relaxation could move out of it: near an end
    stop the run rows change shape). A frictionless run
    row's tension does not depend on how its material is shared among its spans (a metre moved
    between two members changes the sum ``f T`` by ``f (k + d/dt)`` - the same - per metre), so the
    relaxation that the kept iteration skips moves nothing the rows read; the solver relinearizes
    fully in the step's last iteration, which leaves the material shared as before."""
    if reads_run_level(tm, t):
        return False
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    holds = int(1)
    room = float(1.0e30)
    moved = float(0.0)
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        if active[g] == 0:
            continue
        room = wp.min(room, rest[s] - REST_LENGTH_FLOOR)
        if work.run_skip[s] != 0:
            holds = 0
            break
        if lin.k[s] <= 0.0:
            gl = left_guide(g, active)
            bl = tm.guide_body[gl]
            br = tm.guide_body[g]
            if bl != br and (is_moving_body(bodies, bl) or is_moving_body(bodies, br)):
                holds = 0
                break
            continue
        du = wp.vec3()
        turn = float(0.0)
        n = wp.vec3()
        bl = lin.bl[s]
        br = lin.br[s]
        if br >= 0:
            d = lin.body_delta[br] - lin.dr[s]
            phi = wp.spatial_bottom(d)
            du = wp.spatial_top(d) + wp.cross(phi, lin.rr[s])
            turn = wp.length(phi)
            n = wp.spatial_top(lin.jr[s])
        if bl >= 0:
            d = lin.body_delta[bl] - lin.dl[s]
            phi = wp.spatial_bottom(d)
            du = du - wp.spatial_top(d) - wp.cross(phi, lin.rl[s])
            turn = turn + wp.length(phi)
            n = -wp.spatial_top(lin.jl[s])
        moved = moved + wp.abs(wp.dot(du, n))
        if row_turn_bound(du, n, lin.chord[s], turn) > ROW_KEEP_TURN:
            holds = 0
            break
    return holds != 0 and room > moved


@wp.func(inline=True)
def keep_tendon_rows(tm: TendonModel, t: int, active: wp.array(dtype=wp.int32), lin: TendonLinearization):
    """After the dual step on kept rows (``rows_still_hold``): the bookkeeping a linearization
    does after its dual step, on the kept rows. Each run row's ``run_base`` takes its members' new
    multipliers (``add_row_base``, in member order), except that a member without a row keeps none
    (the dual step gave every member of a run row the run's tension). Spans that are rows of their
    own need nothing: the dual step left a span without a row untouched."""
    for g in range(tm.start[t] + 1, tm.start[t + 1]):
        s = span_slot(t, g, active)
        if active[g] == 0 or lin.run_head[s] != s or lin.run_next[s] < 0:
            continue
        base = float(0.0)
        m = s
        while m >= 0:
            if lin.k[m] <= 0.0:
                lin.lam[m] = 0.0
            base = add_row_base(lin, m, base)
            m = lin.run_next[m]
        lin.run_base[s] = base


@wp.func(inline=True)
def linearize_tendon(
    tm: TendonModel,
    bodies: BodyModel,
    t: int,
    penalty: float,
    k_max: float,
    first: int,
    keep: int,
    max_sweeps: int,
    settle_tol: float,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    lam_in: wp.array(dtype=float),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
    lin: TendonLinearization,
):
    """Tendon t's part of ``linearize_tendons`` (``work`` already made contiguous)."""
    if first != 0:
        for g in range(tm.start[t] + 1, tm.start[t + 1]):
            s = seg_index(t, g)
            work.lam[s] = 0.0  # nothing exerted yet: relax_tendon predicts from zero
            lin.lam[s] = lam_in[s]
    else:
        update_tendon_span_duals(tm, t, dt, lin, work.lam_hat, work.lam)
        if keep != 0:
            if rows_still_hold(tm, bodies, t, hist.active, hist.rest, work, lin):
                keep_tendon_rows(tm, t, hist.active, lin)
                return
    relax_tendon_vbd(tm, bodies, t, 1 - first, penalty, k_max, max_sweeps, settle_tol, dt, body_q, hist, work, geo, lin)
    # The rows' stretch at this pose, after the material moved (their other terms came with the geometry).
    active = hist.active
    rest = hist.rest
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    # Stretch at this pose; flexibility; run rows (``TendonLinearization``) from the relaxation's
    # runs. The run's first span is met first, so it is the head; an excluded span (inactive, or
    # left the run at the floor) is a row of its own.
    prev = int(-1)
    cur_run = int(-1)
    row_head = int(-1)
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        lin.run_head[s] = s
        lin.run_next[s] = -1
        lin.chain_head[s] = -1
        if active[g] == 0:
            lin.k[s] = 0.0
            lin.lam[s] = 0.0
            continue
        lin.c0[s] = geo.length[s] - rest[s]
        lin.dl0[s] = lin.c0[s] - work.stretch0[s]
        if lin.k[s] > 0.0:
            lin.flex[s] = 1.0 / (lin.k[s] + lin.damp[s])
            if first != 0 and lin.c0[s] < 0.0:
                # Slack at the step's predicted pose: last step's tension does not carry over (it
                # would pull the slack cable until k |C| outgrew it).
                lin.lam[s] = 0.0
        else:
            # No row (immovable or same-body ends, or zero length): a fixed stretch in a run row,
            # and no multiplier (one kept from when the span had a row, e.g. before a dynamic
            # roller left it between immovable guides, would be reported as its tension). Its
            # damper acts on the material that the run moves into it, like its spring: a metre
            # changes its tension by 1/c + d/dt, so its weight in the run is f = 1/(1/c + d/dt)
            # (``add_row_base``). With f = c (the spring alone) the run lost this span's damping: a
            # load hanging through a world pinhole, 100 N s/m on both spans, never settled.
            bypass = left_guide(g, active) != g - 1
            comp = span_compliance(tm, s, bypass, held_elastically(geo.w[s], rest[s]))
            lin.lam[s] = 0.0
            lin.comp[s] = comp
            lin.damp[s] = 0.0
            lin.flex[s] = comp
            if comp > 0.0:
                lin.damp[s] = span_damping(tm, s, bypass) / dt
                lin.flex[s] = comp / (1.0 + comp * lin.damp[s])
        if work.run_skip[s] != 0:
            continue
        if work.run_first[s] != cur_run:
            cur_run = work.run_first[s]
            row_head = s
            lin.run_flex[s] = 0.0
        else:
            lin.run_next[prev] = s
            lin.run_head[s] = row_head
        prev = s
        lin.run_flex[row_head] = lin.run_flex[row_head] + lin.flex[s]
    # Each run row's tension here (``run_base``); runs that cannot be one row (no flexibility, no
    # member with a row) go back to per-span rows. With a frictional guide, a span that is a row
    # of its own gets ``run_base`` too: it may join a chain row.
    frictional = int(0)
    for g in range(g0 + 1, g1 - 1):
        if frictional_guide(tm, g, active, work.ratio):
            frictional = 1
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        if active[g] == 0 or lin.run_head[s] != s or work.run_skip[s] != 0:
            continue
        if lin.run_next[s] < 0 and frictional == 0:
            continue
        rows = int(0)
        base = float(0.0)
        m = s
        while m >= 0:
            if lin.k[m] > 0.0:
                rows += 1
            base = add_row_base(lin, m, base)
            m = lin.run_next[m]
        lin.run_base[s] = base
        if (rows == 0 or lin.run_flex[s] <= 0.0) and lin.run_next[s] >= 0:
            m = s
            while m >= 0:
                nxt = lin.run_next[m]
                lin.run_head[m] = m
                lin.run_next[m] = -1
                lin.run_flex[m] = lin.flex[m]
                lin.run_base[m] = add_row_base(lin, m, 0.0)
                m = nxt
    # Chain rows (``TendonLinearization``): each frictional guide between two rows links them, left
    # to right, so the span arriving at a guide belongs to the chain's last run. A rigid run between
    # two frictional guides (inextensible spans no moving body holds: no flexibility) passes
    # material straight through, as in the relaxation: the runs on its two sides are linked across
    # it with the product of the two ratios.
    if frictional != 0:
        chain = int(-1)
        runs = int(0)
        left = int(-1)  # head of the run the next link starts from (-1: none)
        e_acc = float(1.0)  # capstan ratio from that run to the current guide's far side
        rigid = int(-1)  # relaxation run of the rigid run entered after ``left``
        for g in range(g0 + 1, g1 - 1):
            if not frictional_guide(tm, g, active, work.ratio):
                continue
            a = span_slot(t, g, active)
            b = out_segment(t, g)
            ha = lin.run_head[a]
            # A span next to the guide at the rest-length floor passes no material across it (the
            # relaxation's end stop), so the guide's bound does not join its two sides: chaining a
            # weight stopped at a frictional roller to the cable beyond projected the far side onto
            # e times the stop's tension, and the stopped machine's tensions rattled (4-92 N for a
            # static 29.4 N, mu = 0.2).
            if work.run_skip[a] != 0 or at_rest_floor(rest[a]):
                left = -1
            elif chain_member(lin, ha):
                left = ha
                e_acc = 1.0
            elif not rigid_row(lin, ha) or work.run_first[a] != rigid:
                left = -1
            e_acc = capstan_product(e_acc, work.ratio[g])
            if left < 0 or work.run_skip[b] != 0 or at_rest_floor(rest[b]) or lin.run_head[b] != b:
                left = -1
                continue
            if rigid_row(lin, b):
                rigid = work.run_first[b]
                continue
            if not chain_member(lin, b):
                left = -1
                continue
            first = lin.chain_head[left]
            if first < 0:
                first = left
            if first != chain:
                chain = first
                runs = 1
            if runs >= CHAIN_RUNS:
                left = -1
                continue  # b starts the next chain
            runs += 1
            lin.chain_head[left] = first
            lin.chain_next[left] = b
            lin.chain_ratio[left] = e_acc
            lin.chain_head[b] = first
            lin.chain_next[b] = -1
            # A span that is a row of its own and joins a chain ends its run list with -2 instead of
            # -1, so that ``single_row`` needs no chain field (it runs once per span end and sweep).
            if lin.run_next[left] == -1:
                lin.run_next[left] = -2
            if lin.run_next[b] == -1:
                lin.run_next[b] = -2
    # Geometric stiffness of each span with a row, from the tension its row (or run row) has here.
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        if active[g] == 0 or lin.k[s] <= 0.0:
            continue
        tension = float(0.0)
        if single_row(lin, s):
            tension = al_tension(lin, s, 0.0) + lin.damp[s] * lin.dl0[s]
        else:
            head = lin.run_head[s]
            if chained(lin, head):
                tension = chain_tension(lin, head)
            else:
                tension = lin.run_base[head] / lin.run_flex[head]  # no motion since the linearization
        lin.kg[s] = geometric_stiffness(lin, s, tension, geo.length[s])


@wp.kernel(module=VBD_MODULE)
def linearize_tendons(
    # Model:
    tm: TendonModel,
    bodies: BodyModel,
    tendon_count: int,
    chunk: int,
    penalty: float,
    k_max: float,
    first: int,
    keep: int,
    max_sweeps: int,
    settle_tol: float,
    dt: float,
    # State in:
    tendon_segment_multiplier_in: wp.array(dtype=float),
    # State: the current iterate; the history (material transfer writes hist.rest)
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    # Scratch:
    work: TendonWork,
    geo: TendonGeometry,
    lin: TendonLinearization,
):
    """VBD pass over the tendons ``[chunk tid, chunk (tid + 1))``: the dual step of the previous
    iteration's rows, the shared geometry and material relaxation (``relax_tendon_vbd``), then each
    span's row linearized at the current pose (see ``TendonLinearization``).

    The dual step is ``update_span_duals`` for the rows the previous iteration linearized (``lin``
    still holds them), done here rather than in a launch of its own; the first iteration of a step
    (``first`` != 0) has no previous rows and starts from zero felt tension, and takes the spans'
    multipliers from the previous step (``tendon_segment_multiplier_in``, that step's ``State.tendon_segment_multiplier``;
    ``lin.lam`` is this step's output State array). Force on an end body
    ``-T dl/dx``; Hessian ``(k + d/dt) J J^T`` while taut (Gauss-Newton, positive semidefinite). A
    span with both ends on one body exerts nothing on it (``k = 0``).

    A thread takes ``chunk`` tendons (package docstring: *Chunks*).
    """
    t0 = wp.tid() * chunk
    work = contiguous_work(work)
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        linearize_tendon(
            tm,
            bodies,
            t,
            penalty,
            k_max,
            first,
            keep,
            max_sweeps,
            settle_tol,
            dt,
            body_q,
            tendon_segment_multiplier_in,
            hist,
            work,
            geo,
            lin,
        )
