"""Routed cables: the per-step diagnostics (``tendon_diagnostics``): span tensions (material and
damping), end points, guide wraps and activity, and each tendon's material and geometric totals at
the step's final pose, written to ``TendonDiagnostics`` for the solver's diagnostic arrays.

Reads the geometry the step cached (``cached``) for spans between world guides and recomputes the
others with ``span.span_length``.
"""

import warp as wp

from newton_tendon.kernels.cable.cached import TendonGeometry, world_span
from newton_tendon.kernels.cable.constants import STEP_MODULE, STIFF_REPORT_COMPLIANCE
from newton_tendon.kernels.cable.span import (
    left_guide,
    material_wrap,
    out_segment,
    seg_index,
    span_compliance,
    span_damping,
    span_length,
)
from newton_tendon.kernels.cable.types import TendonDiagnostics, TendonHistory, TendonWork
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


@wp.func(inline=True)
def tendon_diagnostic(
    tm: TendonModel,
    t: int,
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
        s = seg_index(t, g)
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
        if active[g] == 0:
            continue
        gl = left_guide(g, active)
        bypass = gl != g - 1
        xl = cached_l
        xr = cached_r
        length = float(0.0)
        if world_span(tm, gl, g):
            length = geo.length[s]
        else:
            xl_now, xr_now, length_now = span_length(tm, gl, g, body_q, ml[s], mr[s], rest[s])
            xl = xl_now
            xr = xr_now
            length = length_now
        comp = span_compliance(tm, s, bypass)
        seg_compliance[s] = comp
        if comp > STIFF_REPORT_COMPLIANCE:
            material_tension[s] = (length - rest[s]) / comp
            damping_tension[s] = span_damping(tm, s, bypass) * ((length - rest[s]) - stretch0[s]) / dt
        else:
            material_tension[s] = lam[s] / (dt * dt)
        guide_l[s] = gl
        guide_r[s] = g
        attach_l[s] = xl
        attach_r[s] = xr
        cable = cable + (rest[s] + hist.residual[s])
        geometric = geometric + wp.length(xr - xl)
    for g in range(g0 + 1, g1 - 1):
        if active[g] != 0 and is_roller(tm, g):
            s_in = seg_index(t, g)
            s_out = out_segment(t, g, active)
            c, n, r, o = roller_frame(tm, g, body_q)
            theta_m = material_wrap(tm, g, body_q, mr[s_in], ml[s_out])
            theta = wrap_from_angle(winding_angle(c, n, o, attach_r[s_in], attach_l[s_out]))
            guide_wrap_angle[g] = theta
            cable = cable + r * theta_m
            geometric = geometric + r * theta
        elif active[g] != 0 and transmits_material(tm, g):
            s_in = seg_index(t, g)
            s_out = out_segment(t, g, active)
            guide_wrap_angle[g] = bend_angle(attach_l[s_in], guide_point(tm, g, body_q), attach_r[s_out])
    diag.total_cable[t] = cable
    diag.total_length[t] = geometric


@wp.kernel(module=STEP_MODULE)
def tendon_diagnostics(
    # Model:
    tm: TendonModel,
    tendon_count: int,
    chunk: int,
    dt: float,
    # State: the state the step wrote
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    # Scratch:
    work: TendonWork,
    geo: TendonGeometry,
    # Output:
    diag: TendonDiagnostics,
):
    """Tensions, span endpoints, wraps and cable totals at the step's final pose.

    Material tension: ``(l - L)/c`` for a compliant span, ``lambda/dt^2`` for an inextensible one
    or one stiffer than ``STIFF_REPORT_COMPLIANCE`` (XPBD's multiplier; VBD passes its rows' last
    exerted tension times dt^2); such spans report no separate damping tension.
    Damping tension: ``d (C - C_0)/dt`` with ``C = l - L`` and ``C_0`` its value at the step start
    (compliant spans only). ``total_cable`` is the material
    ``sum L + sum r theta(m_in -> m_out)``; ``total_length`` the geometric ``sum |x_r - x_l| + sum r theta``.
    Spans between world guides read the geometry ``begin_step`` cached (``TendonGeometry``).

    A thread takes the tendons ``[chunk tid, chunk (tid + 1))`` (package docstring: *Chunks*).
    """
    t0 = wp.tid() * chunk
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        tendon_diagnostic(tm, t, dt, body_q, hist, work, geo, diag)
