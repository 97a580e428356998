"""Routed cables: SolverVBD's step 1 and material relaxation (``relax_tendon_vbd``): span geometry,
the material-independent part of each span's row, and the predictions from the tension the rows
exerted in the last body sweep (``exerted_tension_predictions``), before ``relax.relax_material``.

Called once per iteration by ``vbd_linearize.linearize_tendon``; with ``reuse`` a span no moving
body touches keeps the first iteration's geometry (same bits as recomputing it).
"""

import warp as wp

from newton_tendon.kernels.cable.cached import TendonGeometry, cache_body_guide_frames, cached_span_length, world_span
from newton_tendon.kernels.cable.relax import predict_span, relax_material
from newton_tendon.kernels.cable.span import left_guide, span_damping, span_slot
from newton_tendon.kernels.cable.types import TendonHistory, TendonWork
from newton_tendon.kernels.cable.vbd_rows import TendonLinearization
from newton_tendon.kernels.math import inv_inertia_quadratic
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.routing import TendonModel, is_force_winch, is_roller

wp.set_module_options({"enable_backward": False})


@wp.func(inline=True)
def refresh_moving_guide_frames(
    tm: TendonModel, bodies: BodyModel, t: int, body_q: wp.array(dtype=wp.transform), geo: TendonGeometry
):
    """``cache_guide_frames`` for the guides of tendon t on moving bodies only (the others' frames,
    cached earlier in the step, are still valid)."""
    for g in range(tm.start[t], tm.start[t + 1]):
        b = tm.guide_body[g]
        if is_moving_body(bodies, b):
            pose = body_q[b]
            geo.point[g] = wp.transform_point(pose, tm.guide_offset[g])
            if is_roller(tm, g):
                geo.axis[g] = wp.normalize(wp.transform_vector(pose, tm.guide_axis[g]))


@wp.func
def reads_run_level(tm: TendonModel, t: int):
    """Whether anything in the material relaxation of tendon t reads a run's tension level rather
    than the differences between its members: a guide with friction (the capstan comparison) or a
    force winch (it reels against the run's tension)."""
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    level = is_force_winch(tm, g0) or is_force_winch(tm, g1 - 1)
    for g in range(g0 + 1, g1 - 1):
        if tm.guide_mu[g] != 0.0:
            level = True
    return level


@wp.func
def exerted_tension_predictions(
    tm: TendonModel, t: int, active: wp.array(dtype=wp.int32), work: TendonWork, lin: TendonLinearization
):
    """SolverVBD's predictions after a body sweep: each taut row (or run row) of the last
    linearization predicts the tension it exerted, ``work.lam`` [N s^2], on average over its members.

    ``predict_span`` adds to that tension the change ``r / D`` that closing the span's remaining
    residual r would cause. XPBD's projections leave r near 0, but a VBD row's residual is its
    penalty stretch, which its exerted tension already holds (``T = lambda + k (C - c lambda)``, with
    ``k dt^2 = 1 / D`` at penalty 1): counted twice, it made a row's prediction swing by about its own
    tension between iterations. Across a frictional guide whose capstan ratio is large, such a swing
    slid cable that the exerted tensions held inside the cone (a 4.9 kg body hanging from two
    frictional pinholes joined by a rigid span crept 3.4 cm/s). Here every member of a taut row
    moves by one offset, so that ``sum (lam_hat - lam) / stiff`` over the row is 0: the row predicts
    what it exerted, and its members keep the differences that share its material (a frictionless
    pinhole's two sides). Slack rows (``work.lam`` = 0) keep their predictions: the stretch then
    measures how much slack there is to take up. Members without a row (``lin.k`` = 0: no moving
    body holds them, or both ends are on one body) are neither shifted nor counted: their
    prediction is the geometry's. Shifted, a slack zero-length span at the floor stayed in its run
    and froze the run's sharing (its zero room), and a span between two guides on one body, whose
    prediction is its rounding-level stretch over the denominator floor (up to 2.6e7 N), then stood
    for the run's tension at a frictional guide, which slid 0.165 m of cable in one step.

    Only a capstan comparison (a guide with mu != 0) or a force winch reads a row's level; a
    frictionless run shares its material by the differences, which the offset keeps. A tendon with
    neither is left as it is: the same material moves in exact arithmetic, and float32 rounding as
    before (with an offset, a rigid span's stiffness of up to 1e10 amplifies the rounding: a
    frictionless pinhole Atwood machine read 14.7160 N instead of 14.7144 N, analytic 14.715 N).

    The rows are the last linearization's run rows (``lin.run_head``/``run_next``, rebuilt by
    ``linearize_tendon`` after this pass); ``lin.k`` already holds this iteration's value, which
    differs from the last one only for a span whose length crossed 1e-9 m."""
    if not reads_run_level(tm, t):
        return
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    lam = work.lam
    lam_hat = work.lam_hat
    stiff = work.stiff
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        if active[g] == 0 or lin.run_head[s] != s or lam[s] <= 0.0:
            continue
        rows = int(0)
        excess = float(0.0)
        flex = float(0.0)
        m = s
        while m >= 0:
            if lin.k[m] > 0.0:
                rows += 1
                excess = excess + (lam_hat[m] - lam[m]) / stiff[m]
                flex = flex + 1.0 / stiff[m]
            m = lin.run_next[m]
        if rows == 0:
            continue
        offset = excess / flex
        m = s
        while m >= 0:
            if lin.k[m] > 0.0:
                lam_hat[m] = lam_hat[m] - offset
            m = lin.run_next[m]


@wp.func(inline=True)
def relax_tendon_vbd(
    tm: TendonModel,
    bodies: BodyModel,
    t: int,
    reuse: int,
    penalty: float,
    k_max: float,
    max_sweeps: int,
    settle_tol: float,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
    lin: TendonLinearization,
):
    """``relax_tendon`` for SolverVBD, which calls it once per iteration of a step, together with the
    part of each span's linearization that does not depend on the material (``linearize_tendons``
    adds the stretch ``c0`` once the material has moved).

    With ``reuse`` != 0 (every iteration after the first) a span whose two end bodies do not move
    keeps the geometry and the linearized row of the step's first iteration (tangent points,
    effective length, inverse mass 0, penalty, zero gradients), and only the guide frames of moving
    bodies are refreshed. That geometry is a function of the end bodies' poses and of the material
    points, and neither changes between the iterations of a step: the body sweep moves only dynamic
    bodies, and ``begin_step`` alone sets the material points and the route. The results are
    therefore the same bits as recomputing; a span between two fixed rollers saves its tangent-point
    iteration (``ROLLER_PAIR_WARM_ITERATIONS`` passes) in 7 of 8 iterations. A moving span's row
    reuses the direction, arms and inverse mass the relaxation measured. Steps 2 and 3 are
    ``relax_tendon``'s, unchanged.
    """
    rest = hist.rest
    active = hist.active
    ml = hist.ml
    mr = hist.mr
    xl_buf = work.xl
    xr_buf = work.xr
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    dt2 = dt * dt

    # 1. Geometry and predicted multipliers (geometry cached in geo for the later phases), and the
    #    material-independent part of each span's row.
    if reuse == 0:
        cache_body_guide_frames(tm, t, body_q, geo)
        for g in range(g0, g1):
            lin.slot_span[2 * g] = -1
            lin.slot_span[2 * g + 1] = -1
    else:
        refresh_moving_guide_frames(tm, bodies, t, body_q, geo)
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        if active[g] == 0:
            continue
        gl = left_guide(g, active)
        bypass = gl != g - 1
        bl = tm.guide_body[gl]
        br = tm.guide_body[g]
        moving_l = is_moving_body(bodies, bl)
        moving_r = is_moving_body(bodies, br)
        if not moving_l and not moving_r and (reuse != 0 or world_span(tm, gl, g)):
            # Both ends fixed for the whole step: the geometry (inverse mass 0) of the step's first
            # iteration, or of ``begin_step`` for a span between world guides, which exerts nothing.
            if reuse == 0:
                lin.k[s] = 0.0
                lin.bl[s] = -1
                lin.br[s] = -1
            length = geo.length[s]
            predict_span(tm, s, bypass, length, rest[s], geo.w[s], dt, work)
            continue
        xl, xr, length = cached_span_length(tm, geo, gl, g, body_q, ml[s], mr[s], rest[s])
        d = xr - xl
        dl = wp.length(d)
        n = wp.vec3()
        if dl > 1.0e-9:
            n = d / dl
        # Generalized inverse mass (``span_inv_mass``), keeping each end's arm for the row's
        # gradient. The rows need no response vector, so each end's ``a . I^-1 a`` is taken in
        # the body frame (``inv_inertia_quadratic``: one rotation instead of the world tensor).
        w = float(0.0)
        arm_l = wp.vec3()
        arm_r = wp.vec3()
        if bl == br:
            if moving_r:
                ang = wp.cross(xr - xl, n)
                w = inv_inertia_quadratic(body_q[br], bodies.inv_inertia[br], ang)
        else:
            if moving_l:
                rel_l = xl - wp.transform_point(body_q[bl], bodies.com[bl])
                lin.rl[s] = rel_l
                arm_l = wp.cross(rel_l, n)
                w = w + (bodies.inv_mass[bl] + inv_inertia_quadratic(body_q[bl], bodies.inv_inertia[bl], arm_l))
            if moving_r:
                rel_r = xr - wp.transform_point(body_q[br], bodies.com[br])
                lin.rr[s] = rel_r
                arm_r = wp.cross(rel_r, n)
                w = w + (bodies.inv_mass[br] + inv_inertia_quadratic(body_q[br], bodies.inv_inertia[br], arm_r))
        lin.chord[s] = dl
        geo.length[s] = length
        geo.w[s] = w
        comp = predict_span(tm, s, bypass, length, rest[s], w, dt, work)
        xl_buf[s] = xl
        xr_buf[s] = xr
        # The span's row (``TendonLinearization``; c0 follows the material relaxation). A span of
        # zero length, with both ends on one body, or that no moving body holds (a kinematic end,
        # which the first branch above keeps for the later iterations) exerts nothing (k = 0). With
        # a row there (k at the penalty cap, zero gradients) a slack such span joined a chain row as
        # a member of stiffness 1e8 N/m and held its neighbours' tensions at its own (a fuzz finding).
        k = float(0.0)
        jl = wp.spatial_vector()
        jr = wp.spatial_vector()
        row_l = int(-1)
        row_r = int(-1)
        slot = int(-1)
        if dl > 1.0e-9 and bl != br and (moving_l or moving_r):
            k_pen = k_max
            if w * dt2 * k_max > penalty:
                k_pen = penalty / (w * dt2)
            k = 1.0 / (comp + 1.0 / k_pen)
            lin.comp[s] = comp
            lin.damp[s] = 0.0
            if comp > 0.0:
                lin.damp[s] = span_damping(tm, s, bypass) / dt
            slot = s
            # Length gradients (``length_gradient``): (-n, (x_l - c_l) x -n) and (n, (x_r - c_r) x n).
            if moving_l:
                row_l = bl
                jl = wp.spatial_vector(-n, -arm_l)
                lin.dl[s] = lin.body_delta[bl]
            if moving_r:
                row_r = br
                jr = wp.spatial_vector(n, arm_r)
                lin.dr[s] = lin.body_delta[br]
        lin.k[s] = k
        lin.jl[s] = jl
        lin.jr[s] = jr
        lin.bl[s] = row_l
        lin.br[s] = row_r
        lin.slot_span[2 * gl + 1] = slot
        lin.slot_span[2 * g] = slot

    if reuse != 0:
        exerted_tension_predictions(tm, t, active, work, lin)
    relax_material(tm, t, max_sweeps, settle_tol, dt2, hist, work, geo)
