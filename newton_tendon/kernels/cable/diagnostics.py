"""Routed cables: the solver's tendon diagnostics (``tendon_diagnostics``): span tensions (material
and damping), end points, the cable each span took from its rollers this step, guide wraps and
activity, each tendon's material and geometric totals, and the XPBD multipliers in newton's
convention, written to ``TendonDiagnostics`` for the solver's diagnostic arrays.

After a step (``stepped`` = 1) it reads the geometry the step cached (``cached``) for spans between
world guides and recomputes the others with ``span.span_length``. At solver construction and after a
reset (``stepped`` = 0) it reports a seeded history at its pose: no row has acted, no damper has a
rate and nothing has rolled, so those diagnostics are 0 and every span is measured with
``span_length``.
"""

import warp as wp

from newton_tendon.kernels.cable.cached import TendonGeometry, world_span
from newton_tendon.kernels.cable.constants import FOLD_ROUNDING, STEP_MODULE, STIFF_REPORT_COMPLIANCE
from newton_tendon.kernels.cable.history import fold_span
from newton_tendon.kernels.cable.span import (
    arc_arriving,
    arc_leaving,
    held_elastically,
    left_guide,
    material_wrap,
    out_segment,
    span_compliance,
    span_damping,
    span_length,
    span_slot,
)
from newton_tendon.kernels.cable.types import TendonDiagnostics, TendonHistory, TendonWork
from newton_tendon.kernels.math import world_selected
from newton_tendon.kernels.routing import (
    TendonModel,
    bend_angle,
    guide_point,
    is_roller,
    roller_frame,
    transmits_material,
    winding_angle,
    wrap_from_angle,
)

wp.set_module_options({"enable_backward": False})


@wp.func
def stretch_tension(xl: wp.vec3, xr: wp.vec3, length: float, rest: float, comp: float, stiffness: wp.float64):
    """max((l - L) / c, 0) [N] of a span with attachment points ``xl``, ``xr`` [m], effective length
    ``length`` [m] (straight part plus roller arcs), material ``rest`` [m] and compliance ``comp``
    [m/N], rounded once to float32.

    The straight part is measured again in float64 from the float32 points, and 1/c is the span's
    ``stiffness`` [N/m] (float64: the reciprocal of the compliance as authored, the shortest decimal
    that rounds to the stored float32, ``authored_stiffness``) while the model's compliance still
    rounds to it, else 1/c of the float32 value. In float32 throughout, a metre-scale length's ulp
    over c = 1e-5 m/N (0.012 N) and the float32 of the decimal 1e-5, 1e-5 (1 - 2.5e-8), left the
    tension an ulp or more off the authored (l - L)/c: 22911.359375 N for 22911.3579 N."""
    dx = wp.float64(xr[0]) - wp.float64(xl[0])
    dy = wp.float64(xr[1]) - wp.float64(xl[1])
    dz = wp.float64(xr[2]) - wp.float64(xl[2])
    straight = wp.sqrt(dx * dx + dy * dy + dz * dz)
    arcs = wp.float64(length) - wp.float64(wp.length(xr - xl))
    k = wp.float64(1.0) / wp.float64(comp)
    if stiffness > wp.float64(0.0):
        if wp.float32(wp.float64(1.0) / stiffness) == comp:
            k = stiffness
    tension = (straight + arcs - wp.float64(rest)) * k
    return wp.float32(wp.max(tension, wp.float64(0.0)))


@wp.func(inline=True)
def tendon_diagnostic(
    tm: TendonModel,
    t: int,
    stepped: int,
    xpbd: int,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
    diag: TendonDiagnostics,
):
    """Tendon t's part of ``tendon_diagnostics``."""
    rest = hist.rest
    active = hist.active
    ml = hist.ml
    mr = hist.mr
    stretch0 = work.stretch0
    lam = work.lam
    attach_l = work.xl
    attach_r = work.xr
    material_tension = diag.material_tension
    damping_tension = diag.damping_tension
    seg_active = diag.seg_active
    seg_compliance = diag.seg_compliance
    guide_l = diag.guide_l
    guide_r = diag.guide_r
    guide_active = diag.guide_active
    guide_wrap_angle = diag.guide_wrap
    g0 = tm.start[t]
    g1 = tm.start[t + 1]
    cable = float(0.0)
    geometric = float(0.0)
    for g in range(g0, g1):
        guide_active[g] = active[g]
        guide_wrap_angle[g] = 0.0
    for g in range(g0 + 1, g1):
        s = span_slot(t, g, active)
        cached_l = attach_l[s]
        cached_r = attach_r[s]
        material_tension[s] = 0.0
        damping_tension[s] = 0.0
        seg_active[s] = active[g]
        guide_l[s] = -1
        guide_r[s] = -1
        attach_l[s] = wp.vec3()
        attach_r[s] = wp.vec3()
        seg_compliance[s] = 0.0
        diag.seg_damping[s] = 0.0
        diag.rolling_l[s] = 0.0
        diag.rolling_r[s] = 0.0
        diag.lam_out[s] = 0.0
        diag.dlam_out[s] = 0.0
        diag.rest_out[s] = rest[s]
        diag.ml_out[s] = ml[s]
        diag.mr_out[s] = mr[s]
        if active[g] == 0:
            continue
        gl = left_guide(g, active)
        if stepped != 0:
            # Report the material as the next step start holds it: the arcs wound on or off the
            # rollers this step folded in and the material points at the final tangent points.
            folds, dl, new_ml, new_mr = fold_span(tm, gl, g, body_q, rest[s], ml[s], mr[s])
            if folds:
                diag.rest_out[s] = rest[s] + dl
                diag.ml_out[s] = new_ml
                diag.mr_out[s] = new_mr
        bypass = gl != g - 1
        xl = cached_l
        xr = cached_r
        length = float(0.0)
        if stepped != 0 and world_span(tm, gl, g):
            length = geo.length[s]
        else:
            xl_now, xr_now, length_now = span_length(tm, gl, g, body_q, ml[s], mr[s], rest[s])
            xl = xl_now
            xr = xr_now
            length = length_now
        comp = span_compliance(tm, s, bypass, held_elastically(geo.w[s], rest[s]))
        seg_compliance[s] = comp
        diag.seg_damping[s] = span_damping(tm, s, bypass)
        if comp > STIFF_REPORT_COMPLIANCE:
            # A cable cannot push: a slack span (l < L) carries no tension, as newton reports it.
            material_tension[s] = stretch_tension(xl, xr, length, rest[s], comp, diag.seg_stiffness[s])
            if stepped != 0:
                damping_tension[s] = span_damping(tm, s, bypass) * ((length - rest[s]) - stretch0[s]) / dt
        elif stepped != 0:
            # The row's tension holds spring and damper together; the damper's share is measured
            # from the stretch rate (its rounding, d ulp(l)/dt, is small where the spring's, ulp(l)/c,
            # is not) and the spring reports the rest. Reported whole as the spring, a span that a
            # pose edit had stretched 0.04 m through a turned roller read 0.029 N, its 238.6 N
            # spring and -238.6 N damper summed (issue 42; tests/cables/test_rolled_by_edit.py).
            row = lam[s] / (dt * dt)
            if comp > 0.0:
                damper = span_damping(tm, s, bypass) * ((length - rest[s]) - stretch0[s]) / dt
                damping_tension[s] = damper
                row = row - damper
            material_tension[s] = wp.max(row, 0.0)
        if stepped != 0:
            # The arcs the tangent points moved over the rollers' bodies this step: cable the span
            # took from (> 0) or gave to (< 0) each roller, which the next step start folds into
            # its rest length. Below the fold's rounding bound they are float32 noise of the
            # body-local round trip, which the fold leaves alone too: reported as 0.
            arc_l = arc_leaving(tm, gl, body_q, ml[s], xl)
            arc_r = arc_arriving(tm, g, body_q, xr, mr[s])
            scale = wp.max(wp.max(wp.length(xl), wp.length(xr)), 1.0)
            if wp.abs(arc_l + arc_r) > FOLD_ROUNDING * scale:
                diag.rolling_l[s] = -arc_l
                diag.rolling_r[s] = -arc_r
            if xpbd != 0:
                # newton's convention: lambda = -T dt [N s]; ours is T dt^2 [N s^2].
                diag.lam_out[s] = -lam[s] / dt
                diag.dlam_out[s] = -(lam[s] - diag.lam_prev[s]) / dt
        guide_l[s] = gl
        guide_r[s] = g
        attach_l[s] = xl
        attach_r[s] = xr
        cable = cable + (rest[s] + hist.residual[s])
        geometric = geometric + wp.length(xr - xl)
    for g in range(g0 + 1, g1 - 1):
        if active[g] != 0 and is_roller(tm, g):
            s_in = span_slot(t, g, active)
            s_out = out_segment(t, g)
            c, n, r, o = roller_frame(tm, g, body_q)
            theta_m = material_wrap(tm, g, body_q, mr[s_in], ml[s_out])
            theta = wrap_from_angle(winding_angle(c, n, o, attach_r[s_in], attach_l[s_out]))
            guide_wrap_angle[g] = theta
            cable = cable + r * theta_m
            geometric = geometric + r * theta
        elif active[g] != 0 and transmits_material(tm, g):
            s_in = span_slot(t, g, active)
            s_out = out_segment(t, g)
            guide_wrap_angle[g] = bend_angle(attach_l[s_in], guide_point(tm, g, body_q), attach_r[s_out])
    diag.total_cable[t] = cable
    diag.total_length[t] = geometric


@wp.kernel(module=STEP_MODULE)
def tendon_diagnostics(
    # Input:
    world_mask: wp.array(dtype=wp.int32),
    stepped: int,
    xpbd: int,
    # Model:
    tm: TendonModel,
    tendon_count: int,
    chunk: int,
    dt: float,
    # State: the state the step wrote (or the seeded history to report)
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    # Scratch:
    work: TendonWork,
    geo: TendonGeometry,
    # Output:
    diag: TendonDiagnostics,
):
    """Tensions, span endpoints, rolled cable, wraps and cable totals at the pose ``body_q``, for the
    tendons of the worlds ``world_mask`` selects (``math.world_selected``: 1 = report; the last entry
    for tendons in no world).

    After a step (``stepped`` = 1, at its final pose): material tension ``(l - L)/c`` for a compliant
    span, ``lambda/dt^2`` for an inextensible one or one stiffer than ``STIFF_REPORT_COMPLIANCE``
    (XPBD's multiplier; VBD passes its rows' last exerted tension times dt^2); such spans report no
    separate damping tension. Damping tension: ``d (C - C_0)/dt`` with ``C = l - L`` and ``C_0`` its
    value at the step start (compliant spans only). Rolled cable per span end: ``-r phi`` of the arc
    between the end's material point and its tangent point (``span.arc_leaving``/``arc_arriving``).
    With ``xpbd`` = 1 the multipliers in newton's convention, ``-lambda/dt`` = -T dt [N s], and their
    change over the last iteration (``diag.lam_prev``: the multipliers before it).
    At construction or reset (``stepped`` = 0): the same from the seeded history, with the tensions of
    stiff spans, damping, rolled cable and multipliers 0 (nothing has acted yet); ``dt`` is unused.
    ``total_cable`` is the material ``sum L + sum r theta(m_in -> m_out)``; ``total_length`` the
    geometric ``sum |x_r - x_l| + sum r theta``. After a step, spans between world guides read the
    geometry ``begin_step`` cached (``TendonGeometry``).

    A thread takes the tendons ``[chunk tid, chunk (tid + 1))`` (package docstring: *Chunks*).
    """
    t0 = wp.tid() * chunk
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        if world_selected(world_mask, tm.world[t]):
            tendon_diagnostic(tm, t, stepped, xpbd, dt, body_q, hist, work, geo, diag)


@wp.kernel(module=STEP_MODULE)
def reset_tendon_report(
    # Input:
    world_mask: wp.array(dtype=wp.int32),
    # Model:
    tm: TendonModel,
    # Output: the solver's sweep counts
    tendon_cone_sweep_count: wp.array(dtype=wp.int32),
):
    """The reset worlds' sweep counts to 0 (their material and material points are reported by
    ``tendon_diagnostics``). One thread per tendon (``math.world_selected``)."""
    t = wp.tid()
    if world_selected(world_mask, tm.world[t]):
        tendon_cone_sweep_count[t] = 0
