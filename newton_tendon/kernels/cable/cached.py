"""Routed cables: cached route geometry (``TendonGeometry``): the arithmetic of the routing helpers
and of ``span.span_length``, with each guide's world frame computed once per pass.

``begin_step`` caches the world guides' frames and the spans between them for the whole step
(``world_span``); each solver pass caches the frames of guides on bodies (``cache_body_guide_frames``),
the spans' lengths and the rows' inverse masses and responses (``cache_span_response``). A change to
the uncached helpers in ``span`` or ``routing`` must be made here too, or the passes and the
diagnostics disagree.
"""

import warp as wp

from newton_tendon.kernels.cable.span import span_at_stop
from newton_tendon.kernels.math import world_inv_inertia
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.routing import (
    ROLLER_PAIR_WARM_ITERATIONS,
    TendonModel,
    bend_angle,
    guide_pose,
    is_roller,
    roller_pair_tangents,
    roller_tangent,
    to_world,
    winding_angle,
    wrap_from_angle,
)

wp.set_module_options({"enable_backward": False})


@wp.struct
class TendonGeometry:
    """Route geometry of one solver pass, cached so that the later phases of the pass (capstan
    ratios, XPBD stretch rows, VBD linearization) reuse it instead of recomputing it from the poses.
    Solver-owned scratch, valid within one ``solve_tendons``/``linearize_tendons`` launch.

    Spans between two guides fixed to the world (``world_span``) and the world guides' frames are
    the exception: nothing in a step moves them (their material points change only at the step
    start), so ``begin_step`` writes them once per step and the passes and ``tendon_diagnostics``
    read them (the span's end points are in ``TendonWork.xl``/``xr``)."""

    point: wp.array(dtype=wp.vec3)
    """Per guide: world guide point [m] (a roller's centre)."""
    axis: wp.array(dtype=wp.vec3)
    """Per guide: world unit roller axis (written for rollers only)."""
    length: wp.array(dtype=float)
    """Per span: effective length l [m] (free part plus the arcs wound since the step began)."""
    w: wp.array(dtype=float)
    """Per span: generalized inverse mass of the stretch row [1/kg]."""
    resp_l: wp.array(dtype=wp.vec3)
    """Per span: I_l^-1 ((x_l - c_l) x n) [1/(kg m)], world frame, of the left end body (zero when it
    does not move). Written and read by SolverXPBD's pass only: SolverVBD needs just ``w``."""
    resp_r: wp.array(dtype=wp.vec3)
    """Per span: I_r^-1 ((x_r - c_r) x n) [1/(kg m)], world frame, of the right end body (XPBD only)."""


def make_tendon_geometry(guide_count: int, segment_count: int, device) -> TendonGeometry:
    """Allocate a solver's ``TendonGeometry`` scratch for ``guide_count`` guides and ``segment_count`` spans."""
    ng = max(int(guide_count), 1)
    ns = max(int(segment_count), 1)
    geo = TendonGeometry()
    geo.point = wp.zeros(ng, dtype=wp.vec3, device=device)
    geo.axis = wp.zeros(ng, dtype=wp.vec3, device=device)
    geo.length = wp.zeros(ns, dtype=float, device=device)
    geo.w = wp.zeros(ns, dtype=float, device=device)
    geo.resp_l = wp.zeros(ns, dtype=wp.vec3, device=device)
    geo.resp_r = wp.zeros(ns, dtype=wp.vec3, device=device)
    return geo


@wp.func
def world_span(tm: TendonModel, gl: int, gr: int):
    """True when both end guides of the span gl -> gr are fixed to the world (body -1): its end
    points, length and (zero) inverse mass stay the same for a whole step."""
    return tm.guide_body[gl] < 0 and tm.guide_body[gr] < 0


@wp.func(inline=True)
def cache_guide_frames(tm: TendonModel, t: int, body_q: wp.array(dtype=wp.transform), geo: TendonGeometry):
    """World guide points and roller axes of tendon t at the poses body_q (``guide_point``/``guide_axis``)."""
    for g in range(tm.start[t], tm.start[t + 1]):
        pose = guide_pose(tm, g, body_q)
        geo.point[g] = wp.transform_point(pose, tm.guide_offset[g])
        if is_roller(tm, g):
            geo.axis[g] = wp.normalize(wp.transform_vector(pose, tm.guide_axis[g]))


@wp.func(inline=True)
def cache_body_guide_frames(tm: TendonModel, t: int, body_q: wp.array(dtype=wp.transform), geo: TendonGeometry):
    """``cache_guide_frames`` for the guides on bodies only (``begin_step`` wrote the world guides')."""
    for g in range(tm.start[t], tm.start[t + 1]):
        b = tm.guide_body[g]
        if b >= 0:
            pose = body_q[b]
            geo.point[g] = wp.transform_point(pose, tm.guide_offset[g])
            if is_roller(tm, g):
                geo.axis[g] = wp.normalize(wp.transform_vector(pose, tm.guide_axis[g]))


@wp.func(inline=True)
def cached_roller(tm: TendonModel, geo: TendonGeometry, g: int):
    """``roller_frame`` from the cached guide frames: (centre, unit axis, radius, orientation)."""
    return geo.point[g], geo.axis[g], tm.guide_radius[g], float(tm.guide_orientation[g])


@wp.func(inline=True)
def cached_span_points(
    tm: TendonModel,
    geo: TendonGeometry,
    gl: int,
    gr: int,
    body_q: wp.array(dtype=wp.transform),
    mr_local: wp.vec3,
):
    """``span_points_from`` with cached frames, warm-started from the right material point
    ``mr_local`` (body-local; used only between two rollers)."""
    xl = geo.point[gl]
    xr = geo.point[gr]
    rl = is_roller(tm, gl)
    rr = is_roller(tm, gr)
    if rl and rr:
        cl, nl, radl, ol = cached_roller(tm, geo, gl)
        cr, nr, radr, orr = cached_roller(tm, geo, gr)
        guess = to_world(tm, gr, body_q, mr_local)
        return roller_pair_tangents(cl, nl, radl, ol, cr, nr, radr, orr, guess, ROLLER_PAIR_WARM_ITERATIONS)
    if rl:
        cl, nl, radl, ol = cached_roller(tm, geo, gl)
        return roller_tangent(cl, nl, radl, -ol, xr), xr
    if rr:
        cr, nr, radr, orr = cached_roller(tm, geo, gr)
        return xl, roller_tangent(cr, nr, radr, orr, xl)
    return xl, xr


@wp.func(inline=True)
def cached_span_length(
    tm: TendonModel,
    geo: TendonGeometry,
    gl: int,
    gr: int,
    body_q: wp.array(dtype=wp.transform),
    ml: wp.vec3,
    mr: wp.vec3,
    rest: float,
):
    """``span_length`` with cached frames: (x_l, x_r, l)."""
    stopped, xs, xt = span_at_stop(
        tm, gl, gr, body_q, geo.point[gl], geo.point[gr], geo.axis[gl], geo.axis[gr], ml, mr, rest
    )
    if stopped:
        return xs, xt, wp.length(xt - xs)
    xl, xr = cached_span_points(tm, geo, gl, gr, body_q, mr)
    length = wp.length(xr - xl)
    if is_roller(tm, gl):
        c, n, r, o = cached_roller(tm, geo, gl)
        length = length + r * winding_angle(c, n, o, to_world(tm, gl, body_q, ml), xl)
    if is_roller(tm, gr):
        c, n, r, o = cached_roller(tm, geo, gr)
        length = length + r * winding_angle(c, n, o, xr, to_world(tm, gr, body_q, mr))
    return xl, xr, length


@wp.func(inline=True)
def cached_guide_wrap(tm: TendonModel, geo: TendonGeometry, g: int, x_in: wp.vec3, p_out: wp.vec3, x_out: wp.vec3):
    """``guide_wrap`` with cached frames: capstan angle [rad] at guide g."""
    if is_roller(tm, g):
        c, n, r, o = cached_roller(tm, geo, g)
        return wrap_from_angle(winding_angle(c, n, o, x_in, p_out))
    return bend_angle(x_in, geo.point[g], x_out)


@wp.func(inline=True)
def cache_span_response(
    bodies: BodyModel,
    geo: TendonGeometry,
    s: int,
    body_q: wp.array(dtype=wp.transform),
    bl: int,
    br: int,
    xl: wp.vec3,
    xr: wp.vec3,
):
    """Generalized inverse mass w [1/kg] of span s's stretch row (``span_inv_mass``) with end points
    xl, xr [m] on bodies bl, br; caches w and each moving end's response ``I^-1 (x - c) x n``
    [1/(kg m)] in geo (zero for an end that does not move).

    ``w = sum_ends (1/m + (a x n) . I^-1 (a x n))``, n the unit span direction; a span with both ends
    on one body has ``w = ((x_r - x_l) x n) . I^-1 ((x_r - x_l) x n)`` (zero up to round-off)."""
    d = xr - xl
    dl = wp.length(d)
    n = wp.vec3()
    if dl > 1.0e-9:
        n = d / dl
    w = float(0.0)
    arm_l = wp.vec3()
    arm_r = wp.vec3()
    resp_l = wp.vec3()
    resp_r = wp.vec3()
    if bl == br:
        if is_moving_body(bodies, br):
            ang = wp.cross(xr - xl, n)
            w = wp.dot(ang, world_inv_inertia(body_q[br], bodies.inv_inertia[br]) * ang)
    else:
        if is_moving_body(bodies, bl):
            arm_l = wp.cross(xl - wp.transform_point(body_q[bl], bodies.com[bl]), n)
            resp_l = world_inv_inertia(body_q[bl], bodies.inv_inertia[bl]) * arm_l
            w = w + (bodies.inv_mass[bl] + wp.dot(arm_l, resp_l))
        if is_moving_body(bodies, br):
            arm_r = wp.cross(xr - wp.transform_point(body_q[br], bodies.com[br]), n)
            resp_r = world_inv_inertia(body_q[br], bodies.inv_inertia[br]) * arm_r
            w = w + (bodies.inv_mass[br] + wp.dot(arm_r, resp_r))
    geo.w[s] = w
    geo.resp_l[s] = resp_l
    geo.resp_r[s] = resp_r
    return w
