"""Routed cables: SolverXPBD's tendon pass (``solve_tendons``, ``XPBD_MODULE``).

Per tendon: step 1 (span geometry and predicted multipliers, ``relax_tendon``), the material
relaxation (``relax.relax_material``), then the stretch rows applied to the end bodies as pose
deltas per guide slot, scaled by one share per tendon where several of its rows move one body
(``row_split``). The XPBD update is stated in the package docstring.
"""

import warp as wp

from newton_tendon.kernels.cable.cached import (
    TendonGeometry,
    cache_body_guide_frames,
    cache_span_response,
    cached_span_length,
    world_span,
)
from newton_tendon.kernels.cable.constants import XPBD_MODULE
from newton_tendon.kernels.cable.relax import predict_span, relax_material
from newton_tendon.kernels.cable.span import left_guide, span_slot
from newton_tendon.kernels.cable.types import TendonHistory, TendonWork
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.routing import TendonModel

wp.set_module_options({"enable_backward": False})


@wp.func(inline=True)
def relax_tendon(
    tm: TendonModel,
    bodies: BodyModel,
    t: int,
    max_sweeps: int,
    settle_tol: float,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """Steps 1-3 of an XPBD tendon pass: span geometry and predicted multipliers (step 1, here),
    then capstan ratios and material relaxation under the capstan bound (``relax_material``, shared
    with ``relax_tendon_vbd``; see the package docstring).

    The prediction is XPBD's: with ``lambda`` the tension [times dt^2] the bodies already feel,
    ``lambda_hat = lambda + (C + gamma (C - C_0) - alpha lambda) / ((1 + gamma) w + alpha)`` is the
    tension once the end bodies have responded to the remaining stretch C over one step. SolverVBD
    passes the tension its rows exerted in the last body sweep as ``lambda``, so both solvers move
    material by the same rule.
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

    # 1. Geometry and predicted multipliers (geometry cached in geo for the later phases; spans
    #    between world guides keep what begin_step cached).
    cache_body_guide_frames(tm, t, body_q, geo)
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        if active[g] == 0:
            continue
        gl = left_guide(g, active)
        bypass = gl != g - 1
        length = float(0.0)
        w = float(0.0)
        if world_span(tm, gl, g):
            length = geo.length[s]
            w = geo.w[s]
        else:
            xl, xr, span_l = cached_span_length(tm, geo, gl, g, body_q, ml[s], mr[s], rest[s])
            length = span_l
            w = cache_span_response(bodies, geo, s, body_q, tm.guide_body[gl], tm.guide_body[g], xl, xr)
            geo.length[s] = length
            xl_buf[s] = xl
            xr_buf[s] = xr
        predict_span(tm, s, bypass, length, rest[s], w, dt, work)

    relax_material(tm, t, max_sweeps, settle_tol, dt2, hist, work, geo)


@wp.func(inline=True)
def solve_tendon(
    tm: TendonModel,
    bodies: BodyModel,
    t: int,
    slot_base: int,
    relaxation: float,
    max_sweeps: int,
    settle_tol: float,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
    slot_delta: wp.array(dtype=wp.spatial_vector),
):
    """Tendon t's part of ``solve_tendons``."""
    relax_tendon(tm, bodies, t, max_sweeps, settle_tol, dt, body_q, hist, work, geo)
    active = hist.active
    lam = work.lam
    lam_hat = work.lam_hat
    xl_buf = work.xl
    xr_buf = work.xr
    g0 = tm.start[t]
    g1 = tm.start[t + 1]

    # 4. Apply the stretch rows: each row's step (kept in lam_hat, which this pass no longer reads),
    #    scaled by the tendon's share when several of its rows move one body (``row_split``).
    for g in range(g0, g1):
        slot_delta[slot_base + 2 * g] = wp.spatial_vector()
        slot_delta[slot_base + 2 * g + 1] = wp.spatial_vector()
    shared = int(0)  # whether two rows of the tendon move one body
    for g in range(g0, g1):
        if g > g0 and active[g] != 0:
            s = span_slot(t, g, active)
            lam_hat[s] = relaxation * (wp.max(lam_hat[s], 0.0) - lam[s])
        b = tm.guide_body[g]
        if active[g] == 0 or not is_moving_body(bodies, b):
            continue
        if g > g0 and g < g1 - 1:
            shared = 1  # an internal guide: the spans arriving and leaving both move its body
        for h in range(g + 1, g1):
            if active[h] != 0 and tm.guide_body[h] == b:
                shared = 1
    # One share for all the tendon's rows: each multiplier then moves by the same fraction of its
    # step, so the multipliers stay inside every capstan cone and run equality that the relaxation's
    # targets and their previous values both satisfy (a per-row share broke a bound 15.1 : 13.3).
    share = float(1.0)
    if shared != 0:
        for g in range(g0, g1):
            if active[g] != 0:
                share = wp.min(share, row_split(tm, bodies, t, tm.guide_body[g], body_q, active, work, geo))
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        if active[g] == 0:
            continue
        gl = left_guide(g, active)
        d = xr_buf[s] - xl_buf[s]
        dl = wp.length(d)
        bl = tm.guide_body[gl]
        br = tm.guide_body[g]
        dlam = lam_hat[s] * share
        lam[s] = lam[s] + dlam
        if dl <= 1.0e-9:
            continue
        n = d / dl
        if bl == br:
            # Both ends on one body: the summed gradient (0, (x_r - x_l) x n) vanishes exactly,
            # so the span exerts nothing on its body (applying its float residual would not).
            continue
        # Pose deltas of the end bodies (``body_pull`` from the cached arms and responses).
        pull_l = wp.spatial_vector()
        if is_moving_body(bodies, bl):
            pull_l = wp.spatial_vector(n * (bodies.inv_mass[bl] * dlam), geo.resp_l[s] * dlam)
        pull_r = wp.spatial_vector()
        if is_moving_body(bodies, br):
            pull_r = wp.spatial_vector(-n * (bodies.inv_mass[br] * dlam), -geo.resp_r[s] * dlam)
        slot_delta[slot_base + 2 * gl + 1] = slot_delta[slot_base + 2 * gl + 1] + pull_l
        slot_delta[slot_base + 2 * g] = slot_delta[slot_base + 2 * g] + pull_r


@wp.func
def row_end_pull(
    tm: TendonModel,
    bodies: BodyModel,
    t: int,
    g: int,
    b: int,
    body_q: wp.array(dtype=wp.transform),
    active: wp.array(dtype=wp.int32),
    work: TendonWork,
    geo: TendonGeometry,
):
    """The step ``dlam = work.lam_hat`` [N s^2] of the row of the span arriving at g (``span_slot``)
    at body b, up to one sign for all of b's rows: ``(J_lin dlam, J_ang dlam, I^-1 J_ang dlam)`` with J_lin = n, J_ang =
    (x - c) x n at the span's end on b. Zeros when b holds neither end, or the span has no length or
    both ends on b (it exerts nothing)."""
    s = span_slot(t, g, active)
    gl = left_guide(g, active)
    bl = tm.guide_body[gl]
    br = tm.guide_body[g]
    lin = wp.vec3()
    ang = wp.vec3()
    resp = wp.vec3()
    d = work.xr[s] - work.xl[s]
    dl = wp.length(d)
    if bl == br or dl <= 1.0e-9 or (bl != b and br != b):
        return lin, ang, resp
    n = d / dl
    dlam = work.lam_hat[s]
    com = wp.transform_point(body_q[b], bodies.com[b])
    if br == b:
        lin = n * dlam
        ang = wp.cross(work.xr[s] - com, n) * dlam
        resp = geo.resp_r[s] * dlam
    else:
        lin = -n * dlam
        ang = -wp.cross(work.xl[s] - com, n) * dlam
        resp = -geo.resp_l[s] * dlam
    return lin, ang, resp


@wp.func
def row_split(
    tm: TendonModel,
    bodies: BodyModel,
    t: int,
    b: int,
    body_q: wp.array(dtype=wp.transform),
    active: wp.array(dtype=wp.int32),
    work: TendonWork,
    geo: TendonGeometry,
):
    """Share (<= 1) of their steps that tendon t's rows may apply together to body b (1 for a body
    that does not move or that one row moves); ``solve_tendon`` scales every row by the least share
    over the tendon's bodies.

    The rows of a pass are Jacobi: each row's step ``dlam`` (``work.lam_hat`` here) assumes that its
    own end bodies respond to it alone. Rows that pull one body the same way (strands of a block and
    tackle between two bodies) add up: N parallel strands move the body N times as far as each row
    asked for, and with the rows' relaxation 0.7 the iteration overshoots, and diverges, from three
    strands on (a 0.33 kg hinged body holding a 4.4 kg one through three strands gained 3.5e5 J in
    2 s at 128 iterations). The share is ``min(1, sum_r |J_r dlam_r|^2 / |sum_r J_r dlam_r|^2)`` in
    the body's inverse-mass norm: 1/N for N parallel strands, 1 for rows at right angles or
    opposing (the two sides of a pinhole on b), exactly as far as the rows together asked for."""
    if not is_moving_body(bodies, b):
        return 1.0
    sum_lin = wp.vec3()
    sum_ang = wp.vec3()
    sum_resp = wp.vec3()
    separate = float(0.0)
    rows = int(0)
    inv_m = bodies.inv_mass[b]
    for g in range(tm.start[t] + 1, tm.start[t + 1]):
        if active[g] == 0:
            continue
        lin, ang, resp = row_end_pull(tm, bodies, t, g, b, body_q, active, work, geo)
        if wp.length_sq(lin) == 0.0 and wp.length_sq(ang) == 0.0:
            continue
        rows += 1
        sum_lin = sum_lin + lin
        sum_ang = sum_ang + ang
        sum_resp = sum_resp + resp
        separate = separate + inv_m * wp.dot(lin, lin) + wp.dot(ang, resp)
    if rows < 2:
        return 1.0
    together = inv_m * wp.dot(sum_lin, sum_lin) + wp.dot(sum_ang, sum_resp)
    if together <= separate:
        return 1.0
    return separate / together


@wp.kernel(module=XPBD_MODULE)
def solve_tendons(
    # Model:
    tm: TendonModel,
    bodies: BodyModel,
    tendon_count: int,
    chunk: int,
    slot_base: int,
    relaxation: wp.array(dtype=float),
    max_sweeps: int,
    settle_tol: float,
    dt: float,
    # State: the current prediction; the history (material transfer writes hist.rest)
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    # Scratch:
    work: TendonWork,
    geo: TendonGeometry,
    slot_delta: wp.array(dtype=wp.spatial_vector),
):
    """One XPBD pass over a tendon: predict every span's multiplier, relax material across pinholes
    and rollers under the capstan bound, then apply the stretch rows (see the package docstring).
    Guide g writes its incoming-span correction to slot ``slot_base + 2 g`` and its outgoing-span
    correction to ``slot_base + 2 g + 1``. A thread takes the tendons ``[chunk tid, chunk (tid + 1))``
    (package docstring: *Chunks*). ``relaxation[t]`` scales tendon t's row steps
    (``tendon_row_relaxation``)."""
    t0 = wp.tid() * chunk
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        solve_tendon(
            tm, bodies, t, slot_base, relaxation[t], max_sweeps, settle_tol, dt, body_q, hist, work, geo, slot_delta
        )
