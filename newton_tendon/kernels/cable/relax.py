"""Routed cables: the material relaxation of a tendon pass, shared by both solvers: step 1's
prediction of a span's multiplier (``predict_span``), then ``relax_material``: capstan ratios (2,
``capstan_ratios``), frictionless runs (3a, ``frictionless_runs``), capstan sweeps at frictional
guides (3b, ``capstan_sweeps``) and the winch stall (4). The rules they apply are in ``transfer``.

The model and the meaning of runs, rigid runs and drums are in the package docstring. The callers
are ``xpbd.relax_tendon`` (XPBD) and ``vbd_relax.relax_tendon_vbd`` (VBD). The phases share the run
bookkeeping of ``TendonWork`` (``run_first``, ``run_flex``, ``run_num``, ``run_skip``, ...); 3a hands
3b only the force winch's drum and run. They are inline functions, split from one: the CPU
fingerprint (``tools/fingerprint.py``) of every benchmark scene and example stayed bitwise the same.
A phase that stops being inline, or a new phase boundary, needs that check again.
"""

import warp as wp

from newton_tendon.kernels.cable.cached import TendonGeometry, cached_guide_wrap, world_span
from newton_tendon.kernels.cable.constants import (
    CAPSTAN_EXPONENT_MAX,
    CAPSTAN_RATIO_MAX,
    DENOM_FLOOR,
    REST_LENGTH_FLOOR,
    RIGID_FLEX,
)
from newton_tendon.kernels.cable.history import add_material, force_winch_span
from newton_tendon.kernels.cable.span import (
    at_rest_floor,
    held_elastically,
    left_guide,
    out_segment,
    span_compliance,
    span_damping,
    span_slot,
)
from newton_tendon.kernels.cable.transfer import (
    capstan_product,
    capstan_transfer,
    frictional_guide,
    rigid_member,
    rigid_run_stretch,
    rigid_transfer,
    saturated_tension,
    share_rigid_run,
    stall_length_winch,
    stopped_member_tension,
)
from newton_tendon.kernels.cable.types import TendonHistory, TendonWork
from newton_tendon.kernels.routing import TendonModel, is_roller, transmits_material

wp.set_module_options({"enable_backward": False})


@wp.func(inline=True)
def predict_span(
    tm: TendonModel, s: int, bypass: bool, length: float, rest: float, w: float, dt: float, work: TendonWork
):
    """Step 1's prediction for span s (package docstring): with stretch C = ``length`` - ``rest`` [m]
    and inverse mass ``w`` [1/kg], writes ``work.lam_hat[s]`` = lambda + (C + gamma (C - C_0) - alpha lambda) /
    ((1 + gamma) w + alpha) [N s^2] and ``work.stiff[s]`` = (1 + gamma) / ((1 + gamma) w + alpha), the
    change of lambda_hat per metre of material moved in. Returns the span's compliance c [m/N]."""
    cval = length - rest
    comp = span_compliance(tm, s, bypass, held_elastically(w, rest))
    alpha = comp / (dt * dt)
    gamma = comp * span_damping(tm, s, bypass) / dt
    denom = wp.max((1.0 + gamma) * w + alpha, DENOM_FLOOR)
    lam = work.lam[s]
    work.lam_hat[s] = lam + (cval + gamma * (cval - work.stretch0[s]) - alpha * lam) / denom
    work.stiff[s] = (1.0 + gamma) / denom
    return comp


@wp.func
def slack_run(tm: TendonModel, t: int, first: int, active: wp.array(dtype=wp.int32), work: TendonWork):
    """Whether the run starting at span ``first`` is slack (its members' mean predicted tension is
    negative) and has no rigid member (a rigid member's prediction is a float32 stretch over the
    denominator floor and says nothing of slack): ``share_slack_run`` then moves its material."""
    if work.run_num[first] >= 0.0:
        return False
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        m = span_slot(t, h, active)
        if active[h] != 0 and work.run_skip[m] == 0 and work.run_first[m] == first:
            if rigid_member(work, m):
                return False
    return True


@wp.func
def share_slack_run(
    tm: TendonModel,
    t: int,
    first: int,
    scale: float,
    active: wp.array(dtype=wp.int32),
    hist: TendonHistory,
    work: TendonWork,
):
    """3a for a slack run (``slack_run``): no force, no flow. Each taut member (predicted multiplier
    > 0) takes what brings it to zero tension, lam_hat/k, and the slack members give that much in
    proportion to their slack (-lam_hat/k), so each stays slack; with no taut member nothing moves
    (``scale``: the run's floor scaling). Sharing one (negative) tension instead moved 0.5 m between
    two slack spans over a frictionless pinhole in one step with no tension anywhere (newton's
    slack-pinhole tests). The sums are read before any member changes, so the material is conserved."""
    taut = float(0.0)
    slack = float(0.0)
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        m = span_slot(t, h, active)
        if active[h] == 0 or work.run_skip[m] != 0 or work.run_first[m] != first:
            continue
        x = work.lam_hat[m] / work.stiff[m]
        if x > 0.0:
            taut = taut + x
        else:
            slack = slack - x
    if taut <= 0.0 or slack <= 0.0:
        return
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        m = span_slot(t, h, active)
        if active[h] == 0 or work.run_skip[m] != 0 or work.run_first[m] != first:
            continue
        x = work.lam_hat[m] / work.stiff[m]
        dl = x
        if x <= 0.0:
            dl = taut * (x / slack)
        dl = scale * dl
        add_material(hist, m, dl)
        work.lam_hat[m] = work.lam_hat[m] - work.stiff[m] * dl


@wp.func(inline=True)
def capstan_ratios(
    tm: TendonModel,
    t: int,
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """Step 2 of ``relax_material``: the capstan ratio ``work.ratio[g]`` = exp(mu theta) of each of
    tendon t's transmitting guides; returns 1 when a guide separates two runs (``frictional_guide``),
    so the sweeps of 3b are needed, else 0."""
    active = hist.active
    xl_buf = work.xl
    xr_buf = work.xr
    ratio = work.ratio
    g0 = tm.start[t]
    g1 = tm.start[t + 1]

    # 2. Capstan ratio exp(mu theta) per transmitting guide; ``frictional`` records whether any
    #    guide separates two runs (``frictional_guide``), so the sweeps of 3b are needed.
    frictional = int(0)
    for g in range(g0 + 1, g1 - 1):
        ratio[g] = 1.0
        mu = tm.guide_mu[g]
        # A frictionless guide keeps ratio 1 (exp(0 theta)) without measuring its wrap.
        if mu != 0.0 and active[g] != 0 and transmits_material(tm, g):
            s_in = span_slot(t, g, active)
            s_out = out_segment(t, g)
            x_in = xl_buf[s_in]
            if is_roller(tm, g):
                x_in = xr_buf[s_in]
            theta = cached_guide_wrap(tm, geo, g, x_in, xl_buf[s_out], xr_buf[s_out])
            ratio[g] = wp.exp(wp.min(mu * wp.max(theta, 0.0), CAPSTAN_EXPONENT_MAX))
            if ratio[g] > 1.0:
                frictional = 1
    return frictional


@wp.func(inline=True)
def frictionless_runs(
    tm: TendonModel,
    t: int,
    dt2: float,
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """Step 3a of ``relax_material``: each run of spans joined by frictionless guides shares one
    tension (a force winch's run its drum's), spans at the rest-length floor leave their runs, and a
    rigid run shares its stretch. Returns (guide, run) of the force winch that holds a run this pass,
    or (-1, -1): 3b lets the drum, not that run, give or take the transfer."""
    rest = hist.rest
    active = hist.active
    lam_hat = work.lam_hat
    stiff = work.stiff
    ratio = work.ratio
    run_first = work.run_first
    run_flex = work.run_flex
    run_num = work.run_num
    run_begin = work.run_begin
    run_end = work.run_end
    run_scale = work.run_scale
    run_skip = work.run_skip
    g0 = tm.start[t]
    g1 = tm.start[t + 1]

    # 3a. Frictionless runs: spans joined by guides with exp(mu theta) = 1 share one tension,
    #     T = sum(lam_hat/k) / sum(1/k); each span's material changes by (lam_hat - T)/k (sum 0).
    #     An inextensible span between immovable ends (k huge) passes material through unchanged.
    at_floor = int(0)
    for g in range(g0 + 1, g1):
        if active[g] == 0:
            continue
        s = span_slot(t, g, active)
        run_skip[s] = 0
        if at_rest_floor(rest[s]):
            at_floor = 1
        gl = left_guide(g, active)
        first = s
        if gl > g0 and transmits_material(tm, gl) and ratio[gl] <= 1.0:
            first = run_first[span_slot(t, gl, active)]
        else:
            run_flex[s] = 0.0
            run_num[s] = 0.0
        run_first[s] = first
        if first == s:
            run_begin[s] = gl
            run_scale[s] = 1.0
        run_end[first] = g
        run_flex[first] = run_flex[first] + 1.0 / stiff[s]
        run_num[first] = run_num[first] + lam_hat[s] / stiff[s]
    #     A force winch's run moves to the commanded tension: its mean is replaced by T (run_num = T
    #     run_flex), so every rule below reads the target where it reads the mean.
    w_guide, w_span = force_winch_span(tm, t, active, work)
    w_run = int(-1)
    w_target = float(0.0)
    if w_guide >= 0:
        w_run = run_first[w_span]
        w_target = work.winch_force[w_guide] * dt2
        run_num[w_run] = w_target * run_flex[w_run]
    #     A span already at the rest-length floor that would give material has none to give: it
    #     leaves the run (keeps its material) and the others share the redistribution. Scaling the
    #     whole run by its zero room instead froze every span of the run (a frictionless pinhole
    #     that stopped passing cable once a zero-length span joined it). Only a tendon with a span
    #     at the floor can have such a span.
    if at_floor != 0:
        for g in range(g0 + 1, g1):
            if active[g] == 0:
                continue
            s = span_slot(t, g, active)
            first = run_first[s]
            if run_flex[first] > RIGID_FLEX and at_rest_floor(rest[s]):
                if lam_hat[s] < run_num[first] / run_flex[first]:
                    run_skip[s] = 1
        #     The runs' sums are taken again over the members that stay, not by subtracting the ones
        #     that left: a rigid member's 1/k (1e-10) is below float32 resolution of a load's 1/k (~1),
        #     so (1e-10 + 1) - 1 read 0 or +-6e-8, and a rigid run left by its stopped load looked
        #     flexible or divided by zero (NaN cable in the step the load reached its pinhole).
        for g in range(g0 + 1, g1):
            if active[g] != 0:
                s = span_slot(t, g, active)
                run_flex[run_first[s]] = 0.0
                run_num[run_first[s]] = 0.0
        for g in range(g0 + 1, g1):
            if active[g] == 0:
                continue
            s = span_slot(t, g, active)
            if run_skip[s] == 0:
                first = run_first[s]
                run_flex[first] = run_flex[first] + 1.0 / stiff[s]
                run_num[first] = run_num[first] + lam_hat[s] / stiff[s]
        if w_run >= 0:
            if run_skip[w_span] != 0:
                # The span at the drum is at the floor and would still reel in: the winch stops, and the
                # rest of its run shares its own mean again.
                run_num[w_run] = 0.0
                for g in range(g0 + 1, g1):
                    s = span_slot(t, g, active)
                    if active[g] != 0 and run_skip[s] == 0 and run_first[s] == w_run:
                        run_num[w_run] = run_num[w_run] + lam_hat[s] / stiff[s]
                w_run = -1
            else:
                run_num[w_run] = w_target * run_flex[w_run]
    #     If a span would drop below the rest-length floor, the whole redistribution of its run
    #     is scaled down (never clamped per span), so the run's material is conserved exactly.
    for g in range(g0 + 1, g1):
        if active[g] == 0:
            continue
        s = span_slot(t, g, active)
        first = run_first[s]
        if run_skip[s] == 0 and run_flex[first] > RIGID_FLEX:
            dl = (lam_hat[s] - run_num[first] / run_flex[first]) / stiff[s]
            if dl < 0.0 and rest[s] + dl < REST_LENGTH_FLOOR:
                run_scale[first] = wp.min(run_scale[first], wp.max((REST_LENGTH_FLOOR - rest[s]) / dl, 0.0))
    for g in range(g0 + 1, g1):
        if active[g] == 0:
            continue
        s = span_slot(t, g, active)
        first = run_first[s]
        if run_skip[s] != 0:
            continue
        if run_flex[first] <= RIGID_FLEX:
            # No end of the run can move. Its members share its stretch (``share_rigid_run``; a drum's
            # run pays out or takes up at the drum instead); what crosses a frictional guide next to
            # it is its stretch (``rigid_transfer``, 3b). Its tension is statically indeterminate:
            # none unless a frictional neighbour (3b) or a drum sets one, or it holds a member that
            # left it at the floor: that span's body sits at its end stop, pulled against the guide
            # by the rest of the cable, which therefore carries at least the stopped span's tension
            # (the least tension the stop admits: a load a winch pulled into a world pinhole hangs at
            # m g, and the span to the winch read 0 N beside it).
            if first == s and run_end[s] != g and first != w_run:
                share_rigid_run(t, s, tm, active, hist, work, geo)
            lam_hat[s] = 0.0
            if first == w_run:
                lam_hat[s] = w_target
            elif at_floor != 0:
                lam_hat[s] = stopped_member_tension(tm, t, first, active, work)
            continue
        if first == s and run_end[s] == g and first != w_run:
            # A run of one span has nothing to share: (lam_hat/k)/(1/k) - lam_hat is rounding noise
            # of one sign, which the compensated material would accumulate into a drift.
            continue
        if at_floor == 0 and first != w_run and slack_run(tm, t, first, active, work):
            if first == s:
                share_slack_run(tm, t, first, run_scale[first], active, hist, work)
            continue
        dl = run_scale[first] * (lam_hat[s] - run_num[first] / run_flex[first]) / stiff[s]
        add_material(hist, s, dl)
        lam_hat[s] = lam_hat[s] - stiff[s] * dl
        if rigid_member(work, s) and (run_scale[first] == 1.0 or world_span(tm, left_guide(g, active), g)):
            # A rigid member (its ends cannot move it apart: stiff up to 1/DENOM_FLOOR) takes the
            # run's tension exactly. Its prediction is a float32 stretch of ~1e-8 m over that floor,
            # and lam_hat - stiff dl kept that prediction's rounding, up to the run's own tension:
            # 3b reads it as the run's tension when the member is next to a frictional guide (a
            # span between two pinholes on one body read 0.000366 where its run held 0.000307).
            # A member between two world guides takes it also when a member reaching the floor (an
            # end stop) scaled the transfer down: no body can feel its remaining stretch, whose
            # prediction (stretch / DENOM_FLOOR) read 8.8e4 N beside the 9.8 N load that a winch
            # had pulled into a world pinhole. (A rigid member between guides on one moving body
            # keeps its own value there: the run's mean overstated what 3b then read from it.)
            lam_hat[s] = run_num[first] / run_flex[first]
        if first == w_run:
            hist.winch[w_guide] = hist.winch[w_guide] + dl
    return w_guide, w_run


@wp.func(inline=True)
def capstan_sweeps(
    tm: TendonModel,
    t: int,
    max_sweeps: int,
    settle_tol: float,
    w_guide: int,
    w_run: int,
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """Step 3b of ``relax_material``: Gauss-Seidel sweeps over tendon t's frictional guides, moving
    material between the runs on either side until T_tight <= exp(mu theta) T_slack (``w_guide``,
    ``w_run``: the force winch's drum and run from 3a, or -1). Returns the number of sweeps run (1 to
    ``max_sweeps``: the sweep whose change was within ``settle_tol`` of the largest tension is counted;
    ``settle_tol`` = 0 runs all ``max_sweeps``)."""
    rest = hist.rest
    active = hist.active
    lam_hat = work.lam_hat
    stiff = work.stiff
    ratio = work.ratio
    run_first = work.run_first
    run_flex = work.run_flex
    run_begin = work.run_begin
    run_end = work.run_end
    run_skip = work.run_skip
    g0 = tm.start[t]
    g1 = tm.start[t + 1]

    # 3b. Frictional guides: sweeps move material between the runs on either side until
    #     T_tight <= exp(mu theta) T_slack; a run takes material in proportion to its members' 1/k,
    #     so its members keep one tension. A rigid run (inextensible spans between immovable
    #     guides) passes material straight through: the runs on both sides of it exchange material
    #     across the product of the ratios, and its tension follows the slipping side. Without a
    #     frictional guide the first sweep would change nothing and stop.
    sweeps = int(0)
    for _sweep in range(max_sweeps):
        sweeps += 1
        change = float(0.0)
        scale = float(0.0)
        for g in range(g0 + 1, g1 - 1):
            if not frictional_guide(tm, g, active, ratio):
                continue
            a = span_slot(t, g, active)
            fa = run_first[a]
            if run_flex[fa] <= RIGID_FLEX and run_begin[fa] > g0 and transmits_material(tm, run_begin[fa]):
                continue  # an intermediate rigid run: handled from the run on its left
            # Walk right over rigid runs, multiplying the capstan ratios.
            e_total = ratio[g]
            fb = run_first[out_segment(t, g)]
            while run_flex[fb] <= RIGID_FLEX and frictional_guide(tm, run_end[fb], active, ratio):
                e_total = capstan_product(e_total, ratio[run_end[fb]])
                fb = run_first[out_segment(t, run_end[fb])]
            lam_a = lam_hat[a]
            lam_b = lam_hat[fb]
            # A force winch's run keeps its tension: the drum gives or takes the transfer (k = 0).
            ka = 1.0 / run_flex[fa]
            kb = 1.0 / run_flex[fb]
            if fa == w_run:
                ka = 0.0
            if fb == w_run:
                kb = 0.0
            # A rigid run on one side (an end run: inextensible spans between the route's end and
            # this guide, none of whose ends can move, e.g. a world winch and a world pinhole)
            # takes or gives exactly what fits it to its length (``rigid_transfer``). Its
            # predicted multiplier is a float32 stretch over the denominator floor, useless for
            # a balance of tensions: read as 0 (3a), it took only that float's worth of cable
            # (1e-10 m), so a winch reeling in behind a frictional pinhole moved nothing.
            rigid = int(-1)
            if run_flex[fa] <= RIGID_FLEX and fa != w_run and not (run_flex[fb] <= RIGID_FLEX and fb != w_run):
                rigid = fa
            elif run_flex[fb] <= RIGID_FLEX and fb != w_run and not (run_flex[fa] <= RIGID_FLEX and fa != w_run):
                rigid = fb
            r_stretch = float(0.0)
            r_moved = float(0.0)
            r_tol = float(0.0)
            delta = float(0.0)
            if rigid >= 0:
                r_stretch, r_moved, r_tol = rigid_run_stretch(t, rigid, tm, active, rest, work, geo)
                if rigid == fa:
                    delta = rigid_transfer(r_stretch, lam_b, kb, r_tol)
                else:
                    delta = -rigid_transfer(r_stretch, lam_a, ka, r_tol)
            else:
                delta = capstan_transfer(lam_a, lam_b, ka, kb, e_total)
            scale = wp.max(scale, wp.max(lam_a, lam_b))
            # The run that gives the material: b for delta > 0, a for delta < 0 (a drum gives
            # from the drum, not from its run's members). A member of it already at the
            # rest-length floor has none to give: it keeps its material and the other members
            # share the transfer, as in 3a. Taking the transfer from every member in proportion
            # to 1/k instead let such a member's zero room stop the whole run (a drum at 20 N
            # across a pinhole with e = 2.57 held the cable beyond it at 0 N, because a
            # zero-length span at the far end of that run sat at the floor). The span at this
            # guide keeps the old rule: when it is at the floor, no material reaches the guide.
            # Checked at every transfer: a member can reach the floor in 3a or in an earlier sweep.
            give = int(-1)
            if delta > 0.0 and fb != w_run:
                give = fb
            elif delta < 0.0 and fa != w_run:
                give = fa
            give_flex = float(0.0)  # sum of 1/k over the giving members with material (0: the old rule)
            if give >= 0:
                near = fb
                if give == fa:
                    near = a
                floored = int(0)
                for h in range(g0 + 1, g1):
                    s = span_slot(t, h, active)
                    if active[h] == 0 or run_skip[s] != 0 or run_first[s] != give:
                        continue
                    if at_rest_floor(rest[s]):
                        floored = 1
                    else:
                        give_flex = give_flex + 1.0 / stiff[s]
                if floored == 0 or at_rest_floor(rest[near]) or give_flex <= 0.0:
                    give_flex = 0.0
                elif rigid >= 0:
                    if give != rigid and rigid == fa:
                        delta = rigid_transfer(r_stretch, lam_b, 1.0 / give_flex, r_tol)
                    elif give != rigid:
                        delta = -rigid_transfer(r_stretch, lam_a, 1.0 / give_flex, r_tol)
                elif give == fb:
                    delta = capstan_transfer(lam_a, lam_b, ka, 1.0 / give_flex, e_total)
                else:
                    delta = capstan_transfer(lam_a, lam_b, 1.0 / give_flex, kb, e_total)
            # Limit the transfer so that no member of the giving run drops below the floor.
            for h in range(g0 + 1, g1):
                if active[h] == 0:
                    continue
                s = span_slot(t, h, active)
                if run_skip[s] != 0:
                    continue
                room = wp.max(rest[s] - REST_LENGTH_FLOOR, 0.0)
                if give_flex > 0.0:
                    if run_first[s] == give and room > 0.0:
                        if delta > 0.0:
                            delta = wp.min(delta, room * give_flex * stiff[s])
                        else:
                            delta = wp.max(delta, -room * give_flex * stiff[s])
                elif delta > 0.0 and run_first[s] == fb and fb != w_run:
                    delta = wp.min(delta, room * run_flex[fb] * stiff[s])
                elif delta < 0.0 and run_first[s] == fa and fa != w_run:
                    delta = wp.max(delta, -room * run_flex[fa] * stiff[s])
            if fa == w_run:
                hist.winch[w_guide] = hist.winch[w_guide] - delta  # b's cable onto the drum
            elif fb == w_run:
                hist.winch[w_guide] = hist.winch[w_guide] + delta  # the drum's cable into a
            if delta != 0.0:
                for h in range(g0 + 1, g1):
                    if active[h] == 0:
                        continue
                    s = span_slot(t, h, active)
                    if run_skip[s] != 0:
                        continue
                    share = float(0.0)
                    if run_first[s] == w_run:
                        share = 0.0
                    elif give_flex > 0.0 and run_first[s] == give:
                        if not at_rest_floor(rest[s]):
                            share = -wp.abs(delta) / give_flex
                    elif run_first[s] == fa:
                        share = delta / run_flex[fa]
                    elif run_first[s] == fb:
                        share = -delta / run_flex[fb]
                    if share != 0.0:
                        dl = share / stiff[s]
                        add_material(hist, s, dl)
                        if run_first[s] != rigid:  # the rigid run's tension is set below
                            lam_hat[s] = lam_hat[s] - stiff[s] * dl
                            change = wp.max(change, wp.abs(stiff[s] * dl))
            if rigid >= 0:
                # The rigid run's tension: the guide has slipped towards it this step (material
                # entered it: a winch reeling in) -> it is the tight side, e T; otherwise (it gave
                # cable, or the guide sticks, when any tension in [T/e, T e] holds) the least
                # admissible, T/e, as for the rigid runs in between below.
                t_other = float(0.0)
                moved_in = r_moved + delta
                if rigid == fa:
                    t_other = wp.max(lam_hat[fb], 0.0)
                else:
                    t_other = wp.max(lam_hat[a], 0.0)
                    moved_in = r_moved - delta
                tension = t_other / e_total
                if moved_in > r_tol:
                    tension = saturated_tension(t_other, e_total)
                for h in range(g0 + 1, g1):
                    s = span_slot(t, h, active)
                    if active[h] != 0 and run_skip[s] == 0 and run_first[s] == rigid:
                        change = wp.max(change, wp.abs(tension - lam_hat[s]))
                        lam_hat[s] = tension
            # Rigid runs in between carry the least tension admissible for both neighbours,
            # max(T_a/E_l, T_b/E_r) (statically indeterminate while both guides stick; exact once
            # one side slips, when the interval [max(T/E), min(T E)] shrinks to a point).
            ta = wp.max(lam_hat[a], 0.0)
            tb = wp.max(lam_hat[fb], 0.0)
            fm = run_first[out_segment(t, g)]
            if e_total < CAPSTAN_RATIO_MAX:
                e_part = ratio[g]
                while fm != fb:
                    e_right = e_total / e_part
                    tension = wp.max(ta / e_part, tb / e_right)
                    for h in range(g0 + 1, g1):
                        if active[h] != 0 and run_first[span_slot(t, h, active)] == fm:
                            lam_hat[span_slot(t, h, active)] = tension
                    e_part = e_part * ratio[run_end[fm]]
                    fm = run_first[out_segment(t, run_end[fm])]
            elif fm != fb:
                # A saturated chain (its sum of mu theta may pass float32's exp(88.7)): the ratios
                # on either side of each run in between are kept as exponents, and each side's
                # divisor saturates at CAPSTAN_RATIO_MAX as the ratios themselves do.
                log_total = wp.log(ratio[g])
                while fm != fb:
                    log_total = log_total + wp.log(ratio[run_end[fm]])
                    fm = run_first[out_segment(t, run_end[fm])]
                log_part = wp.log(ratio[g])
                fm = run_first[out_segment(t, g)]
                while fm != fb:
                    e_part = wp.exp(wp.min(log_part, CAPSTAN_EXPONENT_MAX))
                    e_right = wp.exp(wp.min(log_total - log_part, CAPSTAN_EXPONENT_MAX))
                    tension = wp.max(ta / e_part, tb / e_right)
                    for h in range(g0 + 1, g1):
                        if active[h] != 0 and run_first[span_slot(t, h, active)] == fm:
                            lam_hat[span_slot(t, h, active)] = tension
                    log_part = log_part + wp.log(ratio[run_end[fm]])
                    fm = run_first[out_segment(t, run_end[fm])]
        # settle_tol = 0 asks for every sweep (newton's meaning of the control): no early stop.
        if settle_tol > 0.0 and change <= settle_tol * scale:
            break
    return sweeps


@wp.func(inline=True)
def relax_material(
    tm: TendonModel,
    t: int,
    max_sweeps: int,
    settle_tol: float,
    dt2: float,
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """Steps 2-3 of a tendon pass, shared by both solvers' step 1 (``relax_tendon``,
    ``relax_tendon_vbd``): capstan ratios and material relaxation under the capstan bound, from the
    predicted multipliers ``work.lam_hat`` and flexibilities ``1/work.stiff`` [m/N dt^2] of step 1.
    Moves material between spans (``hist.rest``/``hist.residual``, compensated by ``add_material``)
    and leaves each span's tension after the move in ``lam_hat`` [N dt^2].

    A force winch (``force_winch_span``) is a drum that holds the run of spans next to it at its
    commanded tension F [N]: that run's members move to ``T = F dt^2`` (``dt2`` = dt^2 [s^2]) instead
    of sharing their mean, the drum pays out or takes up the difference (``hist.winch``, [m]), and at
    a frictional guide next to the run the drum, not the run, gives or takes the capstan transfer."""
    active = hist.active
    g0 = tm.start[t]
    g1 = tm.start[t + 1]

    # 2. Capstan ratios (``capstan_ratios``).
    frictional = capstan_ratios(tm, t, hist, work, geo)
    # 3a. Frictionless runs (``frictionless_runs``).
    w_guide, w_run = frictionless_runs(tm, t, dt2, hist, work, geo)
    # 3b. Frictional guides (``capstan_sweeps``); without one the first sweep would change nothing,
    #     so it is skipped, except that ``settle_tol`` = 0 asks for the whole budget on every route
    #     (newton's meaning: a fixed amount of work per step, no data-dependent stop), and the sweeps
    #     then run and find nothing to move. ``work.sweeps`` counts the sweeps this pass ran (0: the
    #     runs of 3a were the whole answer).
    sweeps = int(0)
    if frictional != 0 or settle_tol <= 0.0:
        sweeps = capstan_sweeps(tm, t, max_sweeps, settle_tol, w_guide, w_run, hist, work, geo)
    work.sweeps[t] = sweeps

    # 4. A length winch whose rigid run is still stretched has reeled in cable nobody gives: it stalls.
    stall_length_winch(t, g0, out_segment(t, g0), tm, active, hist, work, geo)
    if g1 - 1 > g0:
        stall_length_winch(t, g1 - 1, span_slot(t, g1 - 1, active), tm, active, hist, work, geo)
