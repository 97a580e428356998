"""Routed cables: material bookkeeping, capstan transfer and XPBD stretch rows.

One thread per tendon walks its guides in route order, so a tendon's material never needs atomics
and every world's tendons run in the same launch.

Material model
--------------
Each active free span ``s`` holds a material rest length ``L_s`` [m] (``State.tendon_segment_rest_length``).
At a roller the cable also lies on the arc between two *material points* stored body-locally
(``ml``, ``mr`` per span end, the tangent points accepted at the start of the step). During a step
a span's effective length is

    l_s = |x_r - x_l| + r_l phi(m_l -> x_l) + r_r phi(x_r -> m_r),

with ``x_l, x_r`` the current attachment (tangent) points and ``phi`` the signed winding angle
(``routing.winding_angle``). The arc terms count the cable that the tangent point has wound on or
off since the step began, and — because ``m`` is fixed to the roller body — the cable a rotating
roller carries with it (rolling without slip). At the start of the next step the arcs are folded
into ``L`` (``L -= arc``) and the material points move to the new tangent points, so the total
material ``sum L + sum r theta_material`` is conserved exactly by construction.

Stretch row (unilateral, per span):  ``C_s = l_s - L_s <= c_s T_s``,  ``T_s >= 0``.
Gradient: with ``n = (x_r - x_l)/|x_r - x_l|`` and COM arms ``a_l, a_r``,

    dC/dx_r = n,  dC/dtheta_r = a_r x n,  dC/dx_l = -n,  dC/dtheta_l = -(a_l x n),

exactly as if the tangent points were body-fixed: the span is perpendicular to the roller radius
at its tangent point, so sliding the tangent point along the circle does not change ``l`` to
first order (for in-plane routes). A span with both ends on one body has the summed gradient
``(0, (x_r - x_l) x n) = 0``: it exerts nothing on its body.

XPBD update with compliance ``alpha = c/dt^2`` and damping ``gamma = c d / dt`` (units: c [m/N],
d [N s/m], lambda = T dt^2 [N s^2]):

    lambda_hat = lambda + (C + gamma (C - C_0) - alpha lambda) / ((1 + gamma) w + alpha),

``w`` the generalized inverse mass of the row and ``C_0`` the span's stretch ``l - L`` at the step
start: the damper acts on the rate of stretch, not of length, so material that slides through a
guide (or leaves a force winch) at the span's tension is not damped. A metre of material moved
into the span changes ``lambda_hat`` by ``(1 + gamma) / ((1 + gamma) w + alpha)``, the stiffness
``work.stiff`` the material relaxation weighs spans by.
The row applies ``max(lambda_hat, 0)`` relaxed by ``joint_linear_relaxation``.

Capstan transfer between the spans ``a`` (in) and ``b`` (out) of a pinhole or roller: the
predicted multipliers respond linearly to material, ``d lambda_hat / dL = -k`` with
``k = 1/((1 + gamma) w + alpha)``. Material moves until ``T_tight <= exp(mu theta) T_slack``
(``theta`` = roller wrap or pinhole bend angle); ``mu = 0`` equalizes the two tensions. Sweeps
over a tendon's guides repeat until the largest tension change is below ``settle_tol`` of the
largest tension, or ``max_sweeps``. Spans joined by frictionless guides (``exp(mu theta) = 1``) form
a *run* that is solved exactly in one pass (one common tension), so material flows freely even
through an inextensible span between immovable guides; the sweeps then only handle guides with
friction, moving material between whole runs. A *rigid* run (no member can stretch or be moved
apart) has no usable prediction (a float32 stretch over ``DENOM_FLOOR``): its members share its
stretch in 3a (``share_rigid_run``), and at a frictional guide it takes or gives exactly its stretch
(``rigid_transfer``), reading e times the other side's tension while cable slips into it.

Chunks
------
The per-step kernels over tendons (``begin_step``, ``solve_tendons``, ``linearize_tendons``,
``update_span_duals``, ``tendon_diagnostics``) take ``chunk`` consecutive tendons per thread: the
solvers pass ``solvers.base.CPU_CHUNK`` (16) on the CPU and 1 on CUDA. Warp's CPU backend runs a
launch's threads one after the other on one core, and each thread begins by loading the fields of
the structs it uses (``TendonModel`` alone holds twelve array descriptors); a one-tendon thread
of a two-span cable does little more work than that. A chunk loads them once per 16 tendons. On a
GPU a thread per tendon keeps the lanes busy, and the loop runs once.
"""

from typing import Any

import warp as wp

from newton_tendon.kernels.math import inv_inertia_quadratic, world_inv_inertia
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.routing import (
    ROLLER_PAIR_WARM_ITERATIONS,
    TendonModel,
    bend_angle,
    bypass_clearance,
    guide_point,
    guide_pose,
    is_dynamic,
    is_force_winch,
    is_roller,
    is_winch,
    roller_frame,
    roller_pair_tangents,
    roller_tangent,
    span_points,
    span_points_from,
    to_local,
    to_world,
    transmits_material,
    winding_angle,
    wrap_from_angle,
)

wp.set_module_options({"enable_backward": False})

XPBD_MODULE = "newton_tendon.kernels.cable_xpbd"
"""Warp module of SolverXPBD's tendon pass; ``VBD_MODULE`` holds SolverVBD's. Each solver compiles
only its own pass on a cold kernel cache (``finalize`` compiles only ``MEASURE_MODULE``)."""
VBD_MODULE = "newton_tendon.kernels.cable_vbd"
wp.set_module_options({"enable_backward": False}, module=XPBD_MODULE)
wp.set_module_options({"enable_backward": False}, module=VBD_MODULE)
MEASURE_MODULE = "newton_tendon.kernels.cable_measure"
"""``measure_baseline`` alone: ``finalize`` compiles only it, and a solver compiles the step's
modules (this one's ``begin_step`` and ``tendon_diagnostics`` among them) in parallel."""
wp.set_module_options({"enable_backward": False}, module=MEASURE_MODULE)
RESET_MODULE = "newton_tendon.kernels.cable_reset"
"""The per-world tendon resets: compiled on the first ``reset``, not on the cold path to the first step."""
wp.set_module_options({"enable_backward": False}, module=RESET_MODULE)

REST_LENGTH_FLOOR = wp.constant(1.0e-6)
"""Smallest free-span rest length [m] material transfer and route changes may leave."""
STOP_LENGTH = wp.constant(1.0e-4)
"""Rest length [m] at or below which a span is a straight link from the material point of each of its
roller ends (``at_end_stop``): a body pulled into its roller stops at the point where the cable left
the rim. Above the 1e-6 m floor so that a stop which rebounds stays a stop: SolverVBD's stop gives
back up to 1e-4 m of cable for a step, and with the tangent construction at that length a far point
a few 1e-5 m outside the rim has its tangent point sqrt(2 r d), millimetres, along the rim; the
step-start fold moved the material point there, and a weight stopped at its roller slid 15 mm round
it (newton_tendon/examples/cable_capstan, mu = 0). A link from the material point instead of the tangent point
changes a span this short by at most its length."""
FLOOR_ROUNDING = wp.constant(1.0e-12)
"""Material [m] above the rest-length floor that a span is still taken to be at the floor with
(``at_rest_floor``): about 9 float32 ulps of 1e-6 m, what a transfer scaled to stop at the floor
leaves by rounding."""
DENOM_FLOOR = wp.constant(1.0e-10)
"""Floor of a row's (1 + gamma) w + alpha, for inextensible spans between immovable ends."""
RIGID_FLEX = wp.constant(1.0e-8)
"""A run whose summed 1/k is below this is rigid: it passes material through without stretching."""
RIGID_STRETCH_ROUNDING = wp.constant(1.0e-6)
"""A rigid run whose stretch ``sum (l - L)`` is within this fraction of its length (about 8 float32
ulps) is taut: the rounding left once its material has been made to fit its length. A rigid run
counts as having slipped cable in (or out) across its frictional guide once more than this much
material entered (or left) it within the step."""
CAPSTAN_EXPONENT_MAX = wp.constant(60.0)
"""exp(mu theta) is capped at exp(60): beyond that the guide never slips in float32 anyway."""
FOLD_ROUNDING = wp.constant(3.2e-6)
"""Arc terms [m] below this fraction of the span's coordinate scale (about 32 float32 ulps) are
not folded at the step start: the span keeps its material points and the arcs stay in its length
(the fold is only deferred, so no material is lost). On a rotating body the arcs between a material
point and its tangent point are rounding noise of one sign (``to_local``/``to_world`` round trips);
folded every step they moved 1e-7 m of cable per step out of the route (2.5e-5 of a 0.76 m cable
in 200 steps, at any angular speed)."""
STIFF_REPORT_COMPLIANCE = wp.constant(1.0e-6)
"""Spans at or below this compliance [m/N] report the tension their row applied (the multiplier)
instead of (l - L)/c: their stretch is within a few float32 ulps of a metre-scale length (one ulp,
1.2e-7 m, is 0.12 N at 1e-6 m/N and 1e5 N at 1e-12 m/N)."""
WRAP_TOLERANCE = wp.constant(1.0e-4)
"""Angle [rad] by which a fixed roller's wrap may leave [0, pi] before it is flagged."""
ROW_KEEP_TURN = wp.constant(2.4e-7)
"""SolverVBD keeps a tendon's rows for another iteration while no span's gradient can have turned
by more than this angle [rad] since the linearization: two float32 ulps of a unit vector, the
rounding of a new linearization (``rows_still_hold``)."""
GEOMETRIC_STIFFNESS_MIN = wp.constant(1.0e-3)
"""Fraction of a VBD span row's stiffness k below which its geometric stiffness T/l is left out."""
GEOMETRIC_STIFFNESS_CAP = wp.constant(1.0e8)
"""Largest geometric stiffness [N/m] of a VBD span row (the rows' penalty cap, 1 / 1e-8 m/N)."""
CHAIN_RUNS = 8
"""Most rows a VBD chain row joins (``TendonLinearization``); a longer chain starts a new one."""
chain_vec = wp.types.vector(length=CHAIN_RUNS, dtype=float)
CHAIN_SWEEPS = wp.constant(32)
"""Most Gauss-Seidel sweeps over a chain row's guides when its tensions are evaluated."""
CHAIN_SETTLE = wp.constant(1.0e-5)
"""A chain row's sweeps stop once no tension changes by more than this fraction of the largest."""


@wp.struct
class TendonHistory:
    """A State's routed-tendon history: material per span, route membership, body-local material
    points of each span's ends, and whether the history was seeded (see ``State``)."""

    rest: wp.array(dtype=float)
    residual: wp.array(dtype=float)
    active: wp.array(dtype=wp.int32)
    ml: wp.array(dtype=wp.vec3)
    mr: wp.array(dtype=wp.vec3)
    seeded: wp.array(dtype=wp.int32)
    winch: wp.array(dtype=float)


@wp.struct
class TendonWork:
    """Solver-owned per-step tendon arrays: starting span lengths, multipliers and the scratch of
    the material relaxation (runs of frictionless spans, capstan ratios), plus the attachment
    points and wrap flags that double as diagnostics."""

    stretch0: wp.array(dtype=float)
    rest0: wp.array(dtype=float)
    lam: wp.array(dtype=float)
    lam_hat: wp.array(dtype=float)
    stiff: wp.array(dtype=float)
    xl: wp.array(dtype=wp.vec3)
    xr: wp.array(dtype=wp.vec3)
    ratio: wp.array(dtype=float)
    run_first: wp.array(dtype=wp.int32)
    run_flex: wp.array(dtype=float)
    run_num: wp.array(dtype=float)
    run_begin: wp.array(dtype=wp.int32)
    run_end: wp.array(dtype=wp.int32)
    run_scale: wp.array(dtype=float)
    run_skip: wp.array(dtype=wp.int32)
    wrap_error: wp.array(dtype=wp.int32)
    winch_force: wp.array(dtype=float)


@wp.struct
class TendonDiagnostics:
    """Solver diagnostics written after each step (names as on the solver, see ``SolverBase``)."""

    material_tension: wp.array(dtype=float)
    damping_tension: wp.array(dtype=float)
    seg_active: wp.array(dtype=wp.int32)
    seg_compliance: wp.array(dtype=float)
    guide_l: wp.array(dtype=wp.int32)
    guide_r: wp.array(dtype=wp.int32)
    guide_active: wp.array(dtype=wp.int32)
    guide_wrap: wp.array(dtype=float)
    total_cable: wp.array(dtype=float)
    total_length: wp.array(dtype=float)


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
def seg_index(t: int, g: int):
    """Segment owned by guide g of tendon t (its incoming span)."""
    return g - t - 1


@wp.func
def left_guide(g: int, guide_active: wp.array(dtype=wp.int32)):
    """Left end guide of the active span arriving at guide g (skips a bypassed dynamic roller)."""
    if guide_active[g - 1] != 0:
        return g - 1
    return g - 2


@wp.func
def out_segment(t: int, g: int, guide_active: wp.array(dtype=wp.int32)):
    """Segment holding the active span that leaves guide g."""
    if guide_active[g + 1] != 0:
        return seg_index(t, g + 1)
    return seg_index(t, g + 2)


@wp.func
def span_compliance(tm: TendonModel, s: int, bypass: bool):
    """Compliance [m/N] of span s; a bypass span is the two authored spans in series."""
    c = tm.seg_compliance[s]
    if bypass:
        c = c + tm.seg_compliance[s - 1]
    return c


@wp.func
def span_damping(tm: TendonModel, s: int, bypass: bool):
    """Damping [N s/m] of span s; a bypass span combines the two dampers in series."""
    d = tm.seg_damping[s]
    if bypass:
        d2 = tm.seg_damping[s - 1]
        if d > 0.0 and d2 > 0.0:
            d = d * d2 / (d + d2)
        else:
            d = 0.0
    return d


@wp.func
def arc_leaving(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform), m_local: wp.vec3, x: wp.vec3):
    """Cable [m] wound off roller g between its material point m (body-local) and the leaving
    tangent point x: r phi(m -> x); 0 for point guides."""
    if not is_roller(tm, g):
        return 0.0
    c, n, r, o = roller_frame(tm, g, body_q)
    return r * winding_angle(c, n, o, to_world(tm, g, body_q, m_local), x)


@wp.func
def arc_arriving(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform), x: wp.vec3, m_local: wp.vec3):
    """Cable [m] wound off roller g between the arriving tangent point x and its material point m:
    r phi(x -> m); 0 for point guides."""
    if not is_roller(tm, g):
        return 0.0
    c, n, r, o = roller_frame(tm, g, body_q)
    return r * winding_angle(c, n, o, x, to_world(tm, g, body_q, m_local))


@wp.func
def material_wrap(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform), m_in: wp.vec3, m_out: wp.vec3):
    """Wrap [rad] of roller g between the material points of its arriving and leaving spans
    (body-local), mapped to [-pi/2, 3pi/2)."""
    c, n, r, o = roller_frame(tm, g, body_q)
    return wrap_from_angle(winding_angle(c, n, o, to_world(tm, g, body_q, m_in), to_world(tm, g, body_q, m_out)))


@wp.func
def at_rest_floor(rest: float):
    """Whether a span with material ``rest`` [m] has no cable to give: at the rest-length floor, or
    within ``FLOOR_ROUNDING`` above it. A span a few ulps above the floor (1.0000003e-6 m, left by a
    transfer scaled to stop at the floor) counted as having cable: it stayed in its run, its zero
    room scaled the run's sharing to nothing, a rigid member then kept its prediction (a float32
    stretch over the 1e-10 denominator floor, 99.9 against the run's 6e-4) and the capstan sweep
    read it as the run's tension and moved 0.13 m of cable in one pass (a fuzz scene)."""
    return rest <= REST_LENGTH_FLOOR + FLOOR_ROUNDING


@wp.func
def at_end_stop(rest: float):
    """Whether a span with material ``rest`` [m] is at (or within ``STOP_LENGTH`` of) its end stop: it
    has (almost) no free cable, so its roller ends stay where the cable last left the roller
    (``stop_points``)."""
    return rest <= STOP_LENGTH


@wp.func
def passed_material_point(c: wp.vec3, n: wp.vec3, o: float, m: wp.vec3, x: wp.vec3, leaving: bool):
    """Whether the far point ``x`` of a span has reached or passed the span's material point ``m`` on
    the rim of the roller (c, n, o), along the cable: the cable runs along the rim in the winding
    direction ``t = o n x (m - c)``, so a span leaving the roller at m has its far point ahead,
    ``(x - m).t > 0``, and a span arriving there has it behind, ``(m - x).t > 0``.

    A far point on or beyond the tangent line at m has been pulled into the roller: the tangent
    construction would let it wind its (absent) cable on and slide round the rim. It is an end stop
    whatever material the span still holds (``span_at_stop``)."""
    t = o * wp.cross(n, m - c)
    if leaving:
        return wp.dot(x - m, t) <= 0.0
    return wp.dot(m - x, t) <= 0.0


@wp.func
def span_at_stop(
    tm: TendonModel,
    gl: int,
    gr: int,
    body_q: wp.array(dtype=wp.transform),
    pl: wp.vec3,
    pr: wp.vec3,
    ml: wp.vec3,
    mr: wp.vec3,
    rest: float,
):
    """Whether the span gl -> gr (guide points ``pl``/``pr`` [m], world; material points ``ml``/``mr``,
    body-local) is at its end stop: its material is at the stop length (``at_end_stop``), or the body
    at its far end has reached a roller end's material point (``passed_material_point``).

    The second case is the stop of a body that arrives fast: a force winch pulling a load into its
    roller at 1.6 m/s on SolverVBD (whose rows let a span stretch within the step) brought the load
    past the tangent point with 1.6 mm of cable left, above the 1e-4 m stop length, and the tangent
    construction then dragged it round the rim until the material wrap passed a full turn (2 pi r of
    cable created at step 37)."""
    if at_end_stop(rest):
        return True
    xl, xr = stop_points(tm, gl, gr, body_q, pl, pr, ml, mr)
    if is_roller(tm, gl):
        c, n, r, o = roller_frame(tm, gl, body_q)
        if passed_material_point(c, n, o, xl, xr, True):
            return True
    if is_roller(tm, gr):
        c, n, r, o = roller_frame(tm, gr, body_q)
        if passed_material_point(c, n, o, xr, xl, False):
            return True
    return False


@wp.func
def stop_points(
    tm: TendonModel,
    gl: int,
    gr: int,
    body_q: wp.array(dtype=wp.transform),
    pl: wp.vec3,
    pr: wp.vec3,
    ml: wp.vec3,
    mr: wp.vec3,
):
    """End points [m] of the span gl -> gr at its end stop: a roller end is the span's material point
    there (``ml``/``mr``, body-local: the tangent point the step started from), a point guide its
    guide point (``pl``/``pr``, world).

    A span at the rest-length floor (or within ``STOP_LENGTH`` of it) holds no cable that could wind
    on or off a roller, so its end at a roller cannot slide round the rim with the far point: the
    span is a straight link from the
    point where the cable leaves the roller, like the span of a body pulled into a pinhole. With the
    tangent construction instead, a far point that passes the tangent point shortens the span by
    winding its (absent) cable on, so the stretch row never stops the body: it was dragged round the
    roller until the material wrap left [-pi/2, 3pi/2) and the count jumped by 2 pi r (a weight pulled
    into its roller gained 0.63 m of cable, and tensions reached 1.4e3 N)."""
    xl = pl
    xr = pr
    if is_roller(tm, gl):
        xl = to_world(tm, gl, body_q, ml)
    if is_roller(tm, gr):
        xr = to_world(tm, gr, body_q, mr)
    return xl, xr


@wp.func
def span_length(
    tm: TendonModel,
    gl: int,
    gr: int,
    body_q: wp.array(dtype=wp.transform),
    ml: wp.vec3,
    mr: wp.vec3,
    rest: float,
):
    """(x_l, x_r, l): attachment points [m] and effective length [m] of the span gl -> gr with
    material ``rest`` [m].

    ``l = |x_r - x_l| + r_l phi(m_l -> x_l) + r_r phi(x_r -> m_r)`` with body-local material points
    ``ml`` (on gl's body) and ``mr`` (on gr's body); see the module docstring. A span at its end stop
    (``at_end_stop``) is straight between its material points instead (``stop_points``).
    """
    pl = guide_point(tm, gl, body_q)
    pr = guide_point(tm, gr, body_q)
    if span_at_stop(tm, gl, gr, body_q, pl, pr, ml, mr, rest):
        xl, xr = stop_points(tm, gl, gr, body_q, pl, pr, ml, mr)
        return xl, xr, wp.length(xr - xl)
    # The material point on a right-hand roller is last step's tangent point: a close start.
    xl, xr = span_points_from(tm, gl, gr, body_q, to_world(tm, gr, body_q, mr), ROLLER_PAIR_WARM_ITERATIONS)
    length = wp.length(xr - xl) + arc_leaving(tm, gl, body_q, ml, xl) + arc_arriving(tm, gr, body_q, xr, mr)
    return xl, xr, length


@wp.func
def frictional_guide(tm: TendonModel, g: int, active: wp.array(dtype=wp.int32), ratio: wp.array(dtype=float)):
    """An active pinhole or roller whose capstan ratio exceeds 1 (it separates two runs)."""
    if active[g] == 0 or not transmits_material(tm, g):
        return False
    return ratio[g] > 1.0


@wp.func
def tight_transfer(la: float, lb: float, ka: float, kb: float, e: float):
    """Material [m] to move into the tight span a (la > e lb) from span b so that the clamped
    tensions satisfy max(la - ka d, 0) = e max(lb + kb d, 0), the smallest such d >= 0."""
    if lb >= 0.0:
        return (la - e * lb) / (ka + e * kb)
    da = la / ka
    db = -lb / kb
    if da <= db:
        return da
    return (la - e * lb) / (ka + e * kb)


@wp.func
def capstan_transfer(la: float, lb: float, ka: float, kb: float, e: float):
    """Material [m] moved from span b into span a (negative: a into b) to enforce
    T_tight <= e T_slack with e = exp(mu theta) on the predicted multipliers la, lb."""
    ta = wp.max(la, 0.0)
    tb = wp.max(lb, 0.0)
    if ta > e * tb:
        return tight_transfer(la, lb, ka, kb, e)
    if tb > e * ta:
        return -tight_transfer(lb, la, kb, ka, e)
    return 0.0


@wp.func
def rigid_run_stretch(
    t: int,
    first: int,
    tm: TendonModel,
    active: wp.array(dtype=wp.int32),
    rest: wp.array(dtype=float),
    work: TendonWork,
    geo: TendonGeometry,
):
    """(stretch, moved, tol) of the rigid run whose first span is ``first`` (no end of it can move,
    so its members' lengths ``geo.length`` are fixed within the step): its stretch ``sum (l - L)``
    [m], the material [m] that entered it since the step start (after the winches,
    ``work.rest0``), and the stretch below which it is taut (``RIGID_STRETCH_ROUNDING`` of its
    length) [m]."""
    stretch = float(0.0)
    moved = float(0.0)
    length = float(0.0)
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        s = seg_index(t, h)
        if active[h] != 0 and work.run_skip[s] == 0 and work.run_first[s] == first:
            stretch = stretch + (geo.length[s] - rest[s])
            moved = moved + (rest[s] - work.rest0[s])
            length = length + wp.max(geo.length[s], rest[s])
    return stretch, moved, RIGID_STRETCH_ROUNDING * length


@wp.func
def rigid_transfer(stretch: float, lf: float, kf: float, tol: float):
    """Material [m] a rigid run of stretch ``stretch`` [m] takes across a frictional guide from the
    run on the other side (predicted multiplier ``lf`` [N s^2], ``kf`` its change per metre taken
    from it; 0 for a force winch's drum, which pays out whatever is taken).

    The rigid run cannot stretch and nothing can shorten it, so what crosses the guide is set by
    its length, not by a balance of tensions: a stretched run (the winch next to it reeled in)
    takes its whole stretch, whatever the tension (the guide slips towards it, whose tension is
    then the tight one); a slack run (the winch paid out) gives its slack, but no more than the
    other side can take before it goes slack itself (lf / kf). Within ``tol`` of taut it holds:
    the guide sticks, and the tension of the rigid run is any value within the capstan bound."""
    if stretch > tol:
        return stretch
    if stretch < -tol and lf > 0.0:
        if kf > 0.0:
            return -wp.min(-stretch, lf / kf)
        return stretch
    return 0.0


@wp.func
def share_rigid_run(
    t: int,
    first: int,
    tm: TendonModel,
    active: wp.array(dtype=wp.int32),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """3a for a rigid run of several spans (joined by frictionless guides; no end can move): its
    members share its stretch in proportion to their flexibility ``1/work.stiff``, so a winch that
    reels in one member takes cable through the frictionless guides from the others (which a tension
    rule cannot do: ``lam_hat`` of a rigid member is a float32 stretch over the denominator floor).
    The transfer is scaled down so that no member drops below the rest-length floor (the run's
    material is conserved exactly), and skipped while every member is within rounding of its share."""
    stretch, moved, tol = rigid_run_stretch(t, first, tm, active, hist.rest, work, geo)
    flex = work.run_flex[first]
    if flex <= 0.0:
        return
    spread = float(0.0)
    scale = float(1.0)
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        s = seg_index(t, h)
        if active[h] == 0 or work.run_skip[s] != 0 or work.run_first[s] != first:
            continue
        dl = (geo.length[s] - hist.rest[s]) - stretch * (1.0 / work.stiff[s]) / flex
        spread = wp.max(spread, wp.abs(dl))
        if dl < 0.0 and hist.rest[s] + dl < REST_LENGTH_FLOOR:
            scale = wp.min(scale, wp.max((REST_LENGTH_FLOOR - hist.rest[s]) / dl, 0.0))
    if spread <= tol:
        return
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        s = seg_index(t, h)
        if active[h] == 0 or work.run_skip[s] != 0 or work.run_first[s] != first:
            continue
        dl = (geo.length[s] - hist.rest[s]) - stretch * (1.0 / work.stiff[s]) / flex
        add_material(hist, s, scale * dl)


@wp.func
def stall_length_winch(
    t: int,
    g: int,
    s_w: int,
    tm: TendonModel,
    active: wp.array(dtype=wp.int32),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """A length winch ``g`` (its span ``s_w``) that reeled in more than its cable can give stalls.

    When the winch's span ends a pass in a rigid run (inextensible spans no body can move, e.g. a
    world winch and a world pinhole) that is still stretched, nothing can give it cable: the load
    behind a frictionless guide sits at its end stop (that span left the run, 3a), the cable beyond
    a frictional guide has no room (3b), or the whole cable is fixed in the world. An inextensible
    cable cannot be stretched, so the drum gives the stretch back: each member is made exactly taut
    (its material set to its length) and the winch's pay-out ``hist.winch`` [m] grows by the total.
    The material minus the pay-out is unchanged, and ``tendon_guide_winch_paid`` reports what the
    cable accepted, so a later pay-out acts at once instead of first working off a hidden debt (the
    winch kept reeling a stopped load in: 0.25 m of stretch that no pay-out short of it could ease)."""
    if not is_winch(tm, g) or is_force_winch(tm, g) or active[g] == 0:
        return
    if work.run_skip[s_w] != 0:
        return
    first = work.run_first[s_w]
    if work.run_flex[first] > RIGID_FLEX:
        return
    stretch, moved, tol = rigid_run_stretch(t, first, tm, active, hist.rest, work, geo)
    if stretch <= tol:
        return
    given = float(0.0)
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        s = seg_index(t, h)
        if active[h] == 0 or work.run_skip[s] != 0 or work.run_first[s] != first:
            continue
        dl = geo.length[s] - hist.rest[s]
        if dl > 0.0:
            add_material(hist, s, dl)
            given = given + dl
    hist.winch[g] = hist.winch[g] + given


# ----------------------------------------------------------------------------------------------
# History: baseline, seeding, start-of-step folding and dynamic routing


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
            if not (between and clear < r and clear > -r):
                baseline_active[g] = 0
    for g in range(g0 + 1, g1):
        s = seg_index(t, g)
        if baseline_active[g] == 0:
            baseline_rest[s] = 0.0
            continue
        gl = left_guide(g, baseline_active)
        xl, xr = span_points(tm, gl, g, body_q)
        measured = wp.length(xr - xl)
        rest = authored_rest[s]
        if gl != g - 1:
            if rest >= 0.0 and authored_rest[s - 1] >= 0.0:
                rest = rest + authored_rest[s - 1]
            else:
                rest = -1.0
        if rest < 0.0:
            rest = measured
        baseline_rest[s] = rest


@wp.kernel(module=MEASURE_MODULE)
def measure_baseline(
    tm: TendonModel,
    body_q: wp.array(dtype=wp.transform),
    authored_rest: wp.array(dtype=float),
    # Out:
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
):
    """Initial activity and rest lengths at the pose ``body_q``.

    A dynamic roller starts active when the straight bypass span touches it. Negative authored
    rest lengths are measured as the free-span length; a bypassed roller's two spans merge into
    the outgoing segment (authored lengths add; a measured one is replaced by the bypass length).
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
        s = seg_index(t, g)
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
    tm: TendonModel,
    world_mask: wp.array(dtype=wp.int32),
    body_q: wp.array(dtype=wp.transform),
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
    # State (in place):
    hist: TendonHistory,
):
    """Restore the baseline material of the selected worlds' tendons, re-seeded at ``body_q``."""
    t = wp.tid()
    w = tm.world[t]
    if w >= 0 and world_mask[w] == 0:
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
        return g0, out_segment(t, g0, active)
    if is_force_winch(tm, g1 - 1) and work.winch_force[g1 - 1] >= 0.0:
        return g1 - 1, seg_index(t, g1 - 1)
    return -1, -1


@wp.kernel(module=RESET_MODULE)
def reset_tendons_measured(
    tm: TendonModel,
    world_mask: wp.array(dtype=wp.int32),
    body_q: wp.array(dtype=wp.transform),
    authored_rest: wp.array(dtype=float),
    # State (in place):
    hist: TendonHistory,
):
    """Reset the selected worlds' tendons with their baseline measured again at ``body_q``: authored
    rest lengths are kept, measured ones (authored < 0) and dynamic-roller activity come from the pose,
    so a cable starts as it would in a model built at that pose."""
    t = wp.tid()
    w = tm.world[t]
    if w >= 0 and world_mask[w] == 0:
        return
    measure_tendon(tm, t, body_q, authored_rest, hist.rest, hist.active)
    seed_tendon(tm, t, body_q, hist.rest, hist.active, hist)


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
            s = seg_index(t, g)
            rest[s] = hist_in.rest[s]
            hist.residual[s] = hist_in.residual[s]
            ml[s] = hist_in.ml[s]
            mr[s] = hist_in.mr[s]
            if active[g] == 0:
                continue
            gl = left_guide(g, active)
            if span_at_stop(tm, gl, g, body_q, guide_point(tm, gl, body_q), guide_point(tm, g, body_q), ml[s], mr[s], rest[s]):
                # A span at its end stop has no arc terms (``stop_points``): its material points stay.
                continue
            # The arc terms of span_length alone (exactly 0 at point guides: no rounding noise is
            # folded into the compensated material).
            xl, xr = span_points_from(tm, gl, g, body_q, to_world(tm, g, body_q, mr[s]), ROLLER_PAIR_WARM_ITERATIONS)
            arcs = arc_leaving(tm, gl, body_q, ml[s], xl) + arc_arriving(tm, g, body_q, xr, mr[s])
            scale = wp.max(wp.max(wp.length(xl), wp.length(xr)), 1.0)
            if wp.abs(arcs) <= FOLD_ROUNDING * scale:
                continue
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
            if rest[s] - folded < REST_LENGTH_FLOOR:
                # The span has (almost) no free cable left to wind on: keep its material points
                # (the arc terms stay in its length) rather than invent cable to meet the floor.
                continue
            add_material(hist, s, -folded)
            ml[s] = new_ml
            mr[s] = new_mr

        # Dynamic rollers (never adjacent, never first or last).
        for g in range(g0 + 1, g1 - 1):
            if not is_dynamic(tm, g):
                continue
            r = tm.guide_radius[g]
            s_in = seg_index(t, g)
            s_out = seg_index(t, g + 1)
            xl, xr = span_points(tm, g - 1, g + 1, body_q)
            clear, between = bypass_clearance(tm, g, xl, xr, body_q)
            if active[g] != 0:
                if clear > r * (1.0 + activation_tol):
                    # Release: the arc's material joins the merged span (exact conservation).
                    theta = material_wrap(tm, g, body_q, mr[s_in], ml[s_out])
                    merged = rest[s_in] + r * theta + rest[s_out]
                    if merged >= REST_LENGTH_FLOOR:
                        rest[s_out] = merged
                        hist.residual[s_out] = hist.residual[s_out] + hist.residual[s_in]
                        ml[s_out] = ml[s_in]
                        rest[s_in] = 0.0
                        hist.residual[s_in] = 0.0
                        ml[s_in] = wp.vec3()
                        mr[s_in] = wp.vec3()
                        active[g] = 0
            elif between and clear < r * (1.0 - activation_tol) and clear > 0.0:
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
                eff_in = free_in + arc_leaving(tm, g - 1, body_q, ml[s_out], xa)
                eff_out = free_out + arc_arriving(tm, g + 1, body_q, xb, mr[s_out])
                avail = rest[s_out] - r * theta
                share = float(0.5)
                if eff_in + eff_out > 1.0e-12:
                    share = eff_in / (eff_in + eff_out)
                # Engage only if both new spans keep the floor (otherwise cable would be invented).
                if theta > 0.0 and avail * share >= REST_LENGTH_FLOOR and avail - avail * share >= REST_LENGTH_FLOOR:
                    rest[s_in] = avail * share
                    rest[s_out] = avail - avail * share
                    hist.residual[s_in] = 0.0  # the bypass span's residual stays with it (s_out)
                    ml[s_in] = ml[s_out]
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
            winch_span(hist, out_segment(t, g0, active), g0, winch_length[g0])
    if g1 - 1 > g0 and is_winch(tm, g1 - 1):
        if is_force_winch(tm, g1 - 1):
            work.winch_force[g1 - 1] = winch_command(winch_force[g1 - 1])
        else:
            winch_span(hist, seg_index(t, g1 - 1), g1 - 1, winch_length[g1 - 1])

    # Starting stretch l - L (damping acts on its rate) and the wrap diagnostic of fixed rollers. A
    # span between world guides keeps this geometry for the whole step: cached for the passes and
    # the diagnostics.
    cache_guide_frames(tm, t, body_q, geo)
    for g in range(g0 + 1, g1):
        s = seg_index(t, g)
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
            s_in = seg_index(t, g)
            s_out = out_segment(t, g, active)
            theta = material_wrap(tm, g, body_q, mr[s_in], ml[s_out])
            if theta < -WRAP_TOLERANCE or theta > wp.pi + WRAP_TOLERANCE:
                wrap_error[g] = 1


@wp.kernel
def begin_step(
    tm: TendonModel,
    tendon_count: int,
    chunk: int,
    activation_tol: float,
    body_q: wp.array(dtype=wp.transform),
    baseline_rest: wp.array(dtype=float),
    baseline_active: wp.array(dtype=wp.int32),
    hist_in: TendonHistory,
    winch_length: wp.array(dtype=float),
    winch_force: wp.array(dtype=float),
    # Out:
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """Accept the pose ``body_q`` (the step's input state): fold wound arcs into the spans, move the
    material points to the current tangent points, engage or release dynamic rollers, pay out or
    reel in cable at winches, and record each span's starting stretch for damping. Reads ``*_in``
    history, writes the output state's. Caches the step's geometry of the world guides and of the
    spans between them in ``geo`` and ``work.xl``/``xr`` (see ``TendonGeometry``).

    A thread takes the tendons ``[chunk tid, chunk (tid + 1))`` (module docstring: *Chunks*)."""
    t0 = wp.tid() * chunk
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        begin_tendon_step(
            tm,
            t,
            activation_tol,
            body_q,
            baseline_rest,
            baseline_active,
            hist_in,
            winch_length,
            winch_force,
            hist,
            work,
            geo,
        )


# ----------------------------------------------------------------------------------------------
# Cached route geometry (TendonGeometry): the same arithmetic as the routing helpers, with each
# guide's world frame computed once per pass


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
    if span_at_stop(tm, gl, gr, body_q, geo.point[gl], geo.point[gr], ml, mr, rest):
        xs, xt = stop_points(tm, gl, gr, body_q, geo.point[gl], geo.point[gr], ml, mr)
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


# ----------------------------------------------------------------------------------------------
# Per-iteration solve


@wp.func
def stopped_member_tension(tm: TendonModel, t: int, first: int, active: wp.array(dtype=wp.int32), work: TendonWork):
    """Largest predicted tension [N s^2] (>= 0) of the spans that left run ``first`` at the
    rest-length floor (``work.run_skip``): what the run's other members carry at least while those
    spans' bodies sit at their end stops."""
    tension = float(0.0)
    for g in range(tm.start[t] + 1, tm.start[t + 1]):
        s = seg_index(t, g)
        if active[g] != 0 and work.run_skip[s] != 0 and work.run_first[s] == first:
            tension = wp.max(tension, work.lam_hat[s])
    return tension


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
    rest = hist.rest
    active = hist.active
    lam_hat = work.lam_hat
    stiff = work.stiff
    xl_buf = work.xl
    xr_buf = work.xr
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

    # 2. Capstan ratio exp(mu theta) per transmitting guide; ``frictional`` records whether any
    #    guide separates two runs (``frictional_guide``), so the sweeps of 3b are needed.
    frictional = int(0)
    for g in range(g0 + 1, g1 - 1):
        ratio[g] = 1.0
        mu = tm.guide_mu[g]
        # A frictionless guide keeps ratio 1 (exp(0 theta)) without measuring its wrap.
        if mu != 0.0 and active[g] != 0 and transmits_material(tm, g):
            s_in = seg_index(t, g)
            s_out = out_segment(t, g, active)
            x_in = xl_buf[s_in]
            if is_roller(tm, g):
                x_in = xr_buf[s_in]
            theta = cached_guide_wrap(tm, geo, g, x_in, xl_buf[s_out], xr_buf[s_out])
            ratio[g] = wp.exp(wp.min(mu * wp.max(theta, 0.0), CAPSTAN_EXPONENT_MAX))
            if ratio[g] > 1.0:
                frictional = 1

    # 3a. Frictionless runs: spans joined by guides with exp(mu theta) = 1 share one tension,
    #     T = sum(lam_hat/k) / sum(1/k); each span's material changes by (lam_hat - T)/k (sum 0).
    #     An inextensible span between immovable ends (k huge) passes material through unchanged.
    at_floor = int(0)
    for g in range(g0 + 1, g1):
        if active[g] == 0:
            continue
        s = seg_index(t, g)
        run_skip[s] = 0
        if at_rest_floor(rest[s]):
            at_floor = 1
        gl = left_guide(g, active)
        first = s
        if gl > g0 and transmits_material(tm, gl) and ratio[gl] <= 1.0:
            first = run_first[seg_index(t, gl)]
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
            s = seg_index(t, g)
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
                s = seg_index(t, g)
                run_flex[run_first[s]] = 0.0
                run_num[run_first[s]] = 0.0
        for g in range(g0 + 1, g1):
            if active[g] == 0:
                continue
            s = seg_index(t, g)
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
                    s = seg_index(t, g)
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
        s = seg_index(t, g)
        first = run_first[s]
        if run_skip[s] == 0 and run_flex[first] > RIGID_FLEX:
            dl = (lam_hat[s] - run_num[first] / run_flex[first]) / stiff[s]
            if dl < 0.0 and rest[s] + dl < REST_LENGTH_FLOOR:
                run_scale[first] = wp.min(run_scale[first], wp.max((REST_LENGTH_FLOOR - rest[s]) / dl, 0.0))
    for g in range(g0 + 1, g1):
        if active[g] == 0:
            continue
        s = seg_index(t, g)
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
        dl = run_scale[first] * (lam_hat[s] - run_num[first] / run_flex[first]) / stiff[s]
        add_material(hist, s, dl)
        lam_hat[s] = lam_hat[s] - stiff[s] * dl
        if stiff[s] * RIGID_FLEX > 1.0 and (run_scale[first] == 1.0 or world_span(tm, left_guide(g, active), g)):
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

    # 3b. Frictional guides: sweeps move material between the runs on either side until
    #     T_tight <= exp(mu theta) T_slack; a run takes material in proportion to its members' 1/k,
    #     so its members keep one tension. A rigid run (inextensible spans between immovable
    #     guides) passes material straight through: the runs on both sides of it exchange material
    #     across the product of the ratios, and its tension follows the slipping side. Without a
    #     frictional guide the first sweep would change nothing and stop.
    if frictional != 0:
        for _sweep in range(max_sweeps):
            change = float(0.0)
            scale = float(0.0)
            for g in range(g0 + 1, g1 - 1):
                if not frictional_guide(tm, g, active, ratio):
                    continue
                a = seg_index(t, g)
                fa = run_first[a]
                if run_flex[fa] <= RIGID_FLEX and run_begin[fa] > g0 and transmits_material(tm, run_begin[fa]):
                    continue  # an intermediate rigid run: handled from the run on its left
                # Walk right over rigid runs, multiplying the capstan ratios.
                e_total = ratio[g]
                fb = run_first[out_segment(t, g, active)]
                while run_flex[fb] <= RIGID_FLEX and frictional_guide(tm, run_end[fb], active, ratio):
                    e_total = e_total * ratio[run_end[fb]]
                    fb = run_first[out_segment(t, run_end[fb], active)]
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
                        s = seg_index(t, h)
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
                    s = seg_index(t, h)
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
                        s = seg_index(t, h)
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
                        tension = t_other * e_total
                    for h in range(g0 + 1, g1):
                        s = seg_index(t, h)
                        if active[h] != 0 and run_skip[s] == 0 and run_first[s] == rigid:
                            change = wp.max(change, wp.abs(tension - lam_hat[s]))
                            lam_hat[s] = tension
                # Rigid runs in between carry the least tension admissible for both neighbours,
                # max(T_a/E_l, T_b/E_r) (statically indeterminate while both guides stick; exact once
                # one side slips, when the interval [max(T/E), min(T E)] shrinks to a point).
                ta = wp.max(lam_hat[a], 0.0)
                tb = wp.max(lam_hat[fb], 0.0)
                e_part = ratio[g]
                fm = run_first[out_segment(t, g, active)]
                while fm != fb:
                    e_right = e_total / e_part
                    tension = wp.max(ta / e_part, tb / e_right)
                    for h in range(g0 + 1, g1):
                        if active[h] != 0 and run_first[seg_index(t, h)] == fm:
                            lam_hat[seg_index(t, h)] = tension
                    e_part = e_part * ratio[run_end[fm]]
                    fm = run_first[out_segment(t, run_end[fm], active)]
            if change <= settle_tol * scale:
                break

    # 4. A length winch whose rigid run is still stretched has reeled in cable nobody gives: it stalls.
    stall_length_winch(t, g0, out_segment(t, g0, active), tm, active, hist, work, geo)
    if g1 - 1 > g0:
        stall_length_winch(t, g1 - 1, seg_index(t, g1 - 1), tm, active, hist, work, geo)


@wp.func(inline=True)
def predict_span(tm: TendonModel, s: int, bypass: bool, cval: float, w: float, dt: float, work: TendonWork):
    """Step 1's prediction for span s (module docstring): with stretch ``cval`` = C [m] and inverse
    mass ``w`` [1/kg], writes ``work.lam_hat[s]`` = lambda + (C + gamma (C - C_0) - alpha lambda) /
    ((1 + gamma) w + alpha) [N s^2] and ``work.stiff[s]`` = (1 + gamma) / ((1 + gamma) w + alpha), the
    change of lambda_hat per metre of material moved in. Returns the span's compliance c [m/N]."""
    comp = span_compliance(tm, s, bypass)
    alpha = comp / (dt * dt)
    gamma = comp * span_damping(tm, s, bypass) / dt
    denom = wp.max((1.0 + gamma) * w + alpha, DENOM_FLOOR)
    lam = work.lam[s]
    work.lam_hat[s] = lam + (cval + gamma * (cval - work.stretch0[s]) - alpha * lam) / denom
    work.stiff[s] = (1.0 + gamma) / denom
    return comp


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
    with ``relax_tendon_vbd``; see module docstring).

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
        s = seg_index(t, g)
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
        predict_span(tm, s, bypass, length - rest[s], w, dt, work)

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
        s = seg_index(t, g)
        if g > g0 and active[g] != 0:
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
        s = seg_index(t, g)
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
    """The step ``dlam = work.lam_hat`` [N s^2] of span ``seg_index(t, g)``'s row at body b, up to one
    sign for all of b's rows: ``(J_lin dlam, J_ang dlam, I^-1 J_ang dlam)`` with J_lin = n, J_ang =
    (x - c) x n at the span's end on b. Zeros when b holds neither end, or the span has no length or
    both ends on b (it exerts nothing)."""
    s = seg_index(t, g)
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
    tm: TendonModel,
    bodies: BodyModel,
    tendon_count: int,
    chunk: int,
    slot_base: int,
    relaxation: float,
    max_sweeps: int,
    settle_tol: float,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    # In/out (material transfer writes hist.rest):
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
    # Out:
    slot_delta: wp.array(dtype=wp.spatial_vector),
):
    """One XPBD pass over a tendon: predict every span's multiplier, relax material across pinholes
    and rollers under the capstan bound, then apply the stretch rows (see module docstring).
    Guide g writes its incoming-span correction to slot ``slot_base + 2 g`` and its outgoing-span
    correction to ``slot_base + 2 g + 1``. A thread takes the tendons ``[chunk tid, chunk (tid + 1))``
    (module docstring: *Chunks*)."""
    t0 = wp.tid() * chunk
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        solve_tendon(
            tm, bodies, t, slot_base, relaxation, max_sweeps, settle_tol, dt, body_q, hist, work, geo, slot_delta
        )


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


# ----------------------------------------------------------------------------------------------
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
        s = seg_index(t, g)
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
        s = seg_index(t, g)
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
            predict_span(tm, s, bypass, length - rest[s], geo.w[s], dt, work)
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
        comp = predict_span(tm, s, bypass, length - rest[s], w, dt, work)
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
    tm: TendonModel,
    tendon_count: int,
    chunk: int,
    dt: float,
    lin: TendonLinearization,
    lam_hat: wp.array(dtype=float),
    # Out:
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
        s = seg_index(t, g)
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
        s = seg_index(t, g)
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
        s = seg_index(t, g)
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
            comp = span_compliance(tm, s, bypass)
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
        s = seg_index(t, g)
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
            a = seg_index(t, g)
            b = out_segment(t, g, active)
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
            e_acc = e_acc * work.ratio[g]
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
        s = seg_index(t, g)
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
    body_q: wp.array(dtype=wp.transform),
    lam_in: wp.array(dtype=float),
    # In/out (material transfer writes hist.rest):
    hist: TendonHistory,
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
    multipliers from the previous step (``lam_in``, that step's ``State.tendon_segment_multiplier``;
    ``lin.lam`` is this step's output State array). Force on an end body
    ``-T dl/dx``; Hessian ``(k + d/dt) J J^T`` while taut (Gauss-Newton, positive semidefinite). A
    span with both ends on one body exerts nothing on it (``k = 0``).

    A thread takes ``chunk`` tendons (module docstring: *Chunks*).
    """
    t0 = wp.tid() * chunk
    work = contiguous_work(work)
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        linearize_tendon(
            tm, bodies, t, penalty, k_max, first, keep, max_sweeps, settle_tol, dt, body_q, lam_in, hist, work, geo, lin
        )


# ----------------------------------------------------------------------------------------------
# Diagnostics


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


@wp.kernel
def tendon_diagnostics(
    tm: TendonModel,
    tendon_count: int,
    chunk: int,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
    # Out:
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

    A thread takes the tendons ``[chunk tid, chunk (tid + 1))`` (module docstring: *Chunks*).
    """
    t0 = wp.tid() * chunk
    for t in range(t0, wp.min(t0 + chunk, tendon_count)):
        tendon_diagnostic(tm, t, dt, body_q, hist, work, geo, diag)
