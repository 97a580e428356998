"""Routed cables: material history: the baseline at finalize, seeding and resets, and the
start-of-step bookkeeping (``begin_step``).

``measure_baseline`` (``MEASURE_MODULE``) measures the model's initial activity and rest lengths;
``reset_tendons``/``reset_tendons_measured`` (``RESET_MODULE``) restore or re-measure the selected
worlds. ``begin_step`` accepts the step's input pose: it folds the arcs wound since the last step
into the spans and moves the material points to the tangent points (``FOLD_ROUNDING``), engages or
releases dynamic rollers, applies the winch commands, and records each span's starting stretch.
``add_material`` is the one compensated way to move cable into a span; every writer of
``TendonHistory.rest`` inside a step uses it.
"""

import warp as wp

from newton_tendon.kernels.cable.cached import TendonGeometry, cache_guide_frames, cached_span_length, world_span
from newton_tendon.kernels.cable.constants import (
    FOLD_ROUNDING,
    MEASURE_MODULE,
    RESET_MODULE,
    REST_LENGTH_FLOOR,
    STEP_MODULE,
    WRAP_TOLERANCE,
)
from newton_tendon.kernels.cable.span import (
    arc_arriving,
    arc_leaving,
    left_guide,
    material_wrap,
    out_segment,
    roller_axis,
    seg_index,
    span_at_stop,
    span_length,
    span_slot,
)
from newton_tendon.kernels.cable.types import TendonHistory, TendonWork
from newton_tendon.kernels.math import world_selected
from newton_tendon.kernels.routing import (
    ROLLER_PAIR_WARM_ITERATIONS,
    TendonModel,
    bypass_clearance,
    guide_point,
    is_dynamic,
    is_force_winch,
    is_roller,
    is_winch,
    roller_frame,
    span_points,
    span_points_from,
    to_local,
    to_world,
    winding_angle,
    wrap_from_angle,
)

wp.set_module_options({"enable_backward": False})


@wp.func
def measure_tendon(
    tm: TendonModel,
    t: int,
    body_q: wp.array(dtype=wp.transform),
    authored_rest: wp.array(dtype=float),
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
):
    """Tendon t's activity and rest lengths at the pose ``body_q`` (see ``measure_baseline``)."""
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    for g in range(g0, g1):
        baseline_active[g] = 1
    for g in range(g0 + 1, g1 - 1):
        if is_dynamic(tm, g):
            xl, xr = span_points(tm, g - 1, g + 1, body_q)
            clear, between = bypass_clearance(tm, g, xl, xr, body_q)
            r = tm.guide_radius[g]
            # The spec's rule: the roller engages when it lies on its oriented side of the bypass
            # span (clearance below its radius, however far past the span its centre is).
            if not (between and clear < r):
                baseline_active[g] = 0
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, baseline_active)
        if baseline_active[g] == 0:
            baseline_rest[s] = 0.0
            continue
        gl = left_guide(g, baseline_active)
        xl, xr = span_points(tm, gl, g, body_q)
        measured = wp.length(xr - xl)
        rest = authored_rest[s]
        if gl != g - 1:
            if rest >= 0.0 and authored_rest[s + 1] >= 0.0:
                rest = rest + authored_rest[s + 1]
            else:
                rest = -1.0
        if rest < 0.0:
            rest = measured
        baseline_rest[s] = rest


@wp.kernel(module=MEASURE_MODULE)
def measure_baseline(
    # Model: the initial poses and authored rest lengths
    tm: TendonModel,
    body_q: wp.array(dtype=wp.transform),
    authored_rest: wp.array(dtype=float),
    # Output: the reset baseline
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
):
    """Initial activity and rest lengths at the pose ``body_q``.

    A dynamic roller starts active when it lies on its oriented side of the straight bypass span
    (its centre nearer than its radius to that side, or past the span). Negative authored
    rest lengths are measured as the free-span length; a bypassed roller's two spans merge into
    the incoming slot, the outgoing one stays empty (newton's convention; authored lengths add, a
    measured one is replaced by the bypass length).
    """
    measure_tendon(tm, wp.tid(), body_q, authored_rest, baseline_rest, baseline_active)


@wp.func
def add_material(hist: TendonHistory, s: int, dl: float):
    """Move ``dl`` [m] of cable into span ``s`` with compensated (two-sum) arithmetic.

    A span's material is ``rest + residual``: ``rest`` is what every kernel reads, ``residual`` the
    part of the material below float32 resolution of ``rest``. A plain ``rest + dl`` drops the low
    bits of ``dl``, and which bits depends on the span's magnitude, so material moving every pass
    between a long and a short span was created or lost systematically (10 simulated minutes over a
    frictionless roller drifted by 1.1e-4 of the cable). Here the rounding error of each update is
    kept and added back with the next one, so ``rest + residual`` changes by ``dl`` up to float32
    rounding of the residual itself (~1e-14 m per update)."""
    y = dl + hist.residual[s]
    old = hist.rest[s]
    new = old + y
    # Knuth's two-sum: the exact error of old + y, valid whatever the magnitudes.
    back = new - old
    hist.residual[s] = (old - (new - back)) + (y - back)
    hist.rest[s] = new


@wp.func
def seed_tendon(
    tm: TendonModel,
    t: int,
    body_q: wp.array(dtype=wp.transform),
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
    hist: TendonHistory,
):
    """Initialize a tendon's history from the baseline: material points at the current tangent points."""
    rest = hist.rest
    active = hist.active
    ml = hist.ml
    mr = hist.mr
    hist.seeded[t] = 1
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    for g in range(g0, g1):
        active[g] = baseline_active[g]
        hist.winch[g] = 0.0
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        rest[s] = baseline_rest[s]
        hist.residual[s] = 0.0
        ml[s] = wp.vec3()
        mr[s] = wp.vec3()
        if active[g] != 0:
            gl = left_guide(g, active)
            xl, xr = span_points(tm, gl, g, body_q)
            ml[s] = to_local(tm, gl, body_q, xl)
            mr[s] = to_local(tm, g, body_q, xr)


@wp.kernel(module=RESET_MODULE)
def reset_tendons(
    # Input:
    world_mask: wp.array(dtype=wp.int32),
    # Model:
    tm: TendonModel,
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
    # State: the pose to seed at; the history, reset in place
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
):
    """Restore the baseline material of the selected worlds' tendons, re-seeded at ``body_q``."""
    t = wp.tid()
    w = tm.world[t]
    if not world_selected(world_mask, w):
        return
    seed_tendon(tm, t, body_q, baseline_rest, baseline_active, hist)


@wp.func
def winch_span(hist: TendonHistory, s: int, g: int, command: float):
    """Apply winch guide ``g``'s paid-out command [m] to the rest length of its span ``s``. A command
    that is not finite holds the winch (NaN would otherwise reel the span in to the floor)."""
    if not wp.isfinite(command):
        return
    old = hist.rest[s]
    new = wp.max(old + (command - hist.winch[g]), wp.min(old, REST_LENGTH_FLOOR))
    hist.rest[s] = new
    hist.winch[g] = hist.winch[g] + (new - old)


@wp.func
def winch_command(force: float):
    """A force winch's reel-in command [N] as the passes use it: negative is 0 (a winch cannot push on
    a cable), and a command that is not finite is -1, which holds the winch where it is for the step."""
    if not wp.isfinite(force):
        return -1.0
    return wp.max(force, 0.0)


@wp.func
def force_winch_span(tm: TendonModel, t: int, active: wp.array(dtype=wp.int32), work: TendonWork):
    """(guide, span) of tendon t's force winch that pulls this step, or (-1, -1): the first or last
    guide flagged ``GUIDE_FLAG_WINCH_FORCE`` (a tendon has at most one) with a finite command."""
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    if is_force_winch(tm, g0) and work.winch_force[g0] >= 0.0:
        return g0, out_segment(t, g0)
    if is_force_winch(tm, g1 - 1) and work.winch_force[g1 - 1] >= 0.0:
        return g1 - 1, span_slot(t, g1 - 1, active)
    return -1, -1


@wp.kernel(module=RESET_MODULE)
def reset_tendons_measured(
    # Input:
    world_mask: wp.array(dtype=wp.int32),
    # Model:
    tm: TendonModel,
    authored_rest: wp.array(dtype=float),
    # State: the pose to measure at; the history, reset in place
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
):
    """Reset the selected worlds' tendons with their baseline measured again at ``body_q``: authored
    rest lengths are kept, measured ones (authored < 0) and dynamic-roller activity come from the pose,
    so a cable starts as it would in a model built at that pose."""
    t = wp.tid()
    w = tm.world[t]
    if not world_selected(world_mask, w):
        return
    measure_tendon(tm, t, body_q, authored_rest, hist.rest, hist.active)
    seed_tendon(tm, t, body_q, hist.rest, hist.active, hist)


@wp.func
def fold_span(
    tm: TendonModel,
    gl: int,
    g: int,
    body_q: wp.array(dtype=wp.transform),
    rest: float,
    ml: wp.vec3,
    mr: wp.vec3,
):
    """The fold of one active span (guides gl -> g, material ``rest`` [m], material points ``ml``,
    ``mr`` body-local) at the pose ``body_q``: (folds, dl, new_ml, new_mr). When ``folds``, the span
    gains ``dl`` [m] (the arcs its tangent points moved over its rollers' bodies, with sign: cable
    taken from a roller is > 0) and its material points move to ``new_ml``, ``new_mr``; otherwise it
    keeps its material and points (at an end stop, below ``FOLD_ROUNDING``, or where the fold would
    take it below the rest-length floor). ``begin_step`` applies it; the diagnostics report it, so the
    reported rest lengths and material points are those the next step starts from."""
    if not (is_roller(tm, gl) or is_roller(tm, g)):
        # Point guides wind no arc: nothing to fold (the checks below would say so after the work).
        return False, 0.0, ml, mr
    stopped, sl, sr = span_at_stop(
        tm,
        gl,
        g,
        body_q,
        guide_point(tm, gl, body_q),
        guide_point(tm, g, body_q),
        roller_axis(tm, gl, body_q),
        roller_axis(tm, g, body_q),
        ml,
        mr,
        rest,
    )
    if stopped:
        # A span at its end stop has no arc terms (``stop_points``): its material points stay.
        return False, 0.0, ml, mr
    # The arc terms of span_length alone (exactly 0 at point guides: no rounding noise is
    # folded into the compensated material).
    xl, xr = span_points_from(tm, gl, g, body_q, to_world(tm, g, body_q, mr), ROLLER_PAIR_WARM_ITERATIONS)
    arcs = arc_leaving(tm, gl, body_q, ml, xl) + arc_arriving(tm, g, body_q, xr, mr)
    scale = wp.max(wp.max(wp.length(xl), wp.length(xr)), 1.0)
    if wp.abs(arcs) <= FOLD_ROUNDING * scale:
        return False, 0.0, ml, mr
    # The material points move to the tangent points as stored (body-local, float32): the
    # round trip leaves each about one ulp of its world coordinates off the tangent point,
    # on a consistent side while the tangent point creeps along the roller. The arc that
    # remains between them stays in the span's length, so the fold moves only the arc
    # between the old and the new stored points onto the roller. Folding the whole arc to
    # the exact tangent point lost that remainder every step (2.4e-7 m per step on a cable
    # sliding over a 2 cm roller: 1.5e-5 of the cable in 72 steps, a long-profile fuzz
    # finding on both solvers).
    new_ml = to_local(tm, gl, body_q, xl)
    new_mr = to_local(tm, g, body_q, xr)
    folded = arcs - (arc_leaving(tm, gl, body_q, new_ml, xl) + arc_arriving(tm, g, body_q, xr, new_mr))
    if rest - folded < REST_LENGTH_FLOOR:
        # The span has (almost) no free cable left to wind on: keep its material points
        # (the arc terms stay in its length) rather than invent cable to meet the floor.
        return False, 0.0, ml, mr
    return True, -folded, new_ml, new_mr


@wp.func(inline=True)
def begin_tendon_step(
    tm: TendonModel,
    t: int,
    activation_tol: float,
    body_q: wp.array(dtype=wp.transform),
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
    hist_in: TendonHistory,
    winch_length: wp.array(dtype=float),
    winch_force: wp.array(dtype=float),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """Tendon t's part of ``begin_step``."""
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    rest = hist.rest
    active = hist.active
    ml = hist.ml
    mr = hist.mr
    stretch0 = work.stretch0
    wrap_error = work.wrap_error
    if hist_in.seeded[t] == 0:
        seed_tendon(tm, t, body_q, baseline_rest, baseline_active, hist)
    else:
        hist.seeded[t] = 1
        for g in range(g0, g1):
            active[g] = hist_in.active[g]
            hist.winch[g] = hist_in.winch[g]
        for g in range(g0 + 1, g1):
            s = span_slot(t, g, active)
            rest[s] = hist_in.rest[s]
            hist.residual[s] = hist_in.residual[s]
            ml[s] = hist_in.ml[s]
            mr[s] = hist_in.mr[s]
            if active[g] == 0:
                continue
            folds, dl, new_ml, new_mr = fold_span(tm, left_guide(g, active), g, body_q, rest[s], ml[s], mr[s])
            if folds:
                add_material(hist, s, dl)
                ml[s] = new_ml
                mr[s] = new_mr

    # Dynamic rollers (never adjacent, never first or last), also on the step that seeds the history:
    # a state whose pose differs from the model's (a pose set before the first step) engages or
    # releases its rollers in that step, as newton's solvers do.
    for g in range(g0 + 1, g1 - 1):
        if not is_dynamic(tm, g):
            continue
        r = tm.guide_radius[g]
        # The roller's two authored spans; while it is bypassed, s_in holds the merged span and
        # s_out is empty (newton's slot convention, ``span_slot``).
        s_in = seg_index(t, g)
        s_out = seg_index(t, g + 1)
        xl, xr = span_points(tm, g - 1, g + 1, body_q)
        clear, between = bypass_clearance(tm, g, xl, xr, body_q)
        if active[g] != 0:
            if clear > r:
                # Release once the bypass span clears the roller: its wrap would turn negative (a
                # cable cannot pull a roller from the far side). Engaging needs the span to cut
                # ``activation_tol r`` deeper, so a roller at tangency does not chatter.
                # The arc's material joins the merged span (exact conservation).
                theta = material_wrap(tm, g, body_q, mr[s_in], ml[s_out])
                merged = rest[s_in] + r * theta + rest[s_out]
                if merged >= REST_LENGTH_FLOOR:
                    rest[s_in] = merged
                    hist.residual[s_in] = hist.residual[s_in] + hist.residual[s_out]
                    mr[s_in] = mr[s_out]
                    rest[s_out] = 0.0
                    hist.residual[s_out] = 0.0
                    ml[s_out] = wp.vec3()
                    mr[s_out] = wp.vec3()
                    active[g] = 0
        elif between and clear < r * (1.0 - activation_tol):
            # Engage: split the bypass material into arc + two spans of equal strain.
            xa, t_in = span_points(tm, g - 1, g, body_q)
            t_out, xb = span_points(tm, g, g + 1, body_q)
            c, n, rr, o = roller_frame(tm, g, body_q)
            # The wrap the material points will hold (``material_wrap``), unclamped so that the split
            # conserves material. A route that does not wrap the roller once engaged (theta <= 0: a
            # roller neighbour's tangent re-aimed at it, out of plane) stays bypassed.
            theta = wrap_from_angle(winding_angle(c, n, o, t_in, t_out))
            free_in = wp.length(t_in - xa)
            free_out = wp.length(xb - t_out)
            eff_in = free_in + arc_leaving(tm, g - 1, body_q, ml[s_in], xa)
            eff_out = free_out + arc_arriving(tm, g + 1, body_q, xb, mr[s_in])
            avail = rest[s_in] - r * theta
            share = float(0.5)
            if eff_in + eff_out > 1.0e-12:
                share = eff_in / (eff_in + eff_out)
            # Engage only if both new spans keep the floor (otherwise cable would be invented).
            if theta > 0.0 and avail * share >= REST_LENGTH_FLOOR and avail - avail * share >= REST_LENGTH_FLOOR:
                rest[s_in] = avail * share
                rest[s_out] = avail - avail * share
                hist.residual[s_out] = 0.0  # the bypass span's residual stays with it (s_in)
                mr[s_out] = mr[s_in]
                mr[s_in] = to_local(tm, g, body_q, t_in)
                ml[s_out] = to_local(tm, g, body_q, t_out)
                active[g] = 1

    # Winches (first or last anchor). A length winch: the span next to the winch gains the commanded
    # change of paid-out cable, p_cmd - p_applied [m]; reeling in stops at the rest-length floor, and
    # the state records what was applied, so an over-long reel-in does not accumulate a debt. A force
    # winch takes its command here (``winch_command``) and pays out or reels in during the passes.
    if is_winch(tm, g0):
        if is_force_winch(tm, g0):
            work.winch_force[g0] = winch_command(winch_force[g0])
        else:
            winch_span(hist, out_segment(t, g0), g0, winch_length[g0])
    if g1 - 1 > g0 and is_winch(tm, g1 - 1):
        if is_force_winch(tm, g1 - 1):
            work.winch_force[g1 - 1] = winch_command(winch_force[g1 - 1])
        else:
            winch_span(hist, span_slot(t, g1 - 1, active), g1 - 1, winch_length[g1 - 1])

    # Starting stretch l - L (damping acts on its rate) and the wrap diagnostic of fixed rollers. A
    # span between world guides keeps this geometry for the whole step: cached for the passes and
    # the diagnostics.
    cache_guide_frames(tm, t, body_q, geo)
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        stretch0[s] = 0.0
        work.rest0[s] = rest[s]  # what a rigid run's material is measured against (``rigid_run_stretch``)
        if active[g] != 0:
            gl = left_guide(g, active)
            if world_span(tm, gl, g):
                xl, xr, length = cached_span_length(tm, geo, gl, g, body_q, ml[s], mr[s], rest[s])
                stretch0[s] = length - rest[s]
                geo.length[s] = length
                geo.w[s] = 0.0
                geo.resp_l[s] = wp.vec3()
                geo.resp_r[s] = wp.vec3()
                work.xl[s] = xl
                work.xr[s] = xr
            else:
                xl, xr, length = span_length(tm, gl, g, body_q, ml[s], mr[s], rest[s])
                stretch0[s] = length - rest[s]
    for g in range(g0, g1):
        wrap_error[g] = 0
    for g in range(g0 + 1, g1 - 1):
        if is_roller(tm, g) and active[g] != 0 and not is_dynamic(tm, g):
            s_in = span_slot(t, g, active)
            s_out = out_segment(t, g)
            theta = material_wrap(tm, g, body_q, mr[s_in], ml[s_out])
            if theta < -WRAP_TOLERANCE or theta > wp.pi + WRAP_TOLERANCE:
                wrap_error[g] = 1


@wp.kernel(module=STEP_MODULE)
def begin_step(
    # Model:
    tm: TendonModel,
    tendon_count: int,
    chunk: int,
    activation_tol: float,
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
    # Control:
    winch_length: wp.array(dtype=float),
    winch_force: wp.array(dtype=float),
    # State in:
    body_q_in: wp.array(dtype=wp.transform),
    tendon_history_in: TendonHistory,
    # State out:
    tendon_history_out: TendonHistory,
    # Scratch:
    work: TendonWork,
    geo: TendonGeometry,
):
    """Accept the pose ``body_q_in`` (the step's input state): fold wound arcs into the spans, move the
    material points to the current tangent points, engage or release dynamic rollers, pay out or
    reel in cable at winches, and record each span's starting stretch for damping. Reads ``*_in``
    history, writes the output state's. Caches the step's geometry of the world guides and of the
    spans between them in ``geo`` and ``work.xl``/``xr`` (see ``TendonGeometry``).

    A thread takes the tendons ``[chunk tid, chunk (tid + 1))`` (package docstring: *Chunks*)."""
    t0 = wp.tid() * chunk
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        begin_tendon_step(
            tm,
            t,
            activation_tol,
            body_q_in,
            baseline_rest,
            baseline_active,
            tendon_history_in,
            winch_length,
            winch_force,
            tendon_history_out,
            work,
            geo,
        )
