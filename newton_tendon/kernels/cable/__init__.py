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

Layout
------
One module per idea. This package re-exports every name, so ``newton_tendon.kernels.cable.X`` keeps
working and a caller need not know which module holds X.

- ``constants``: the Warp module names every cable kernel compiles into; the model's tolerances.
- ``types``: ``TendonHistory`` (a State's cable), ``TendonWork`` (solver scratch), ``TendonDiagnostics``.
- ``span``: one span from the pose: indexing, compliance and damping, arcs, end stops, ``span_length``.
- ``cached``: ``TendonGeometry``: the same geometry with each guide frame computed once per pass.
- ``history``: baseline, seeding, resets and ``begin_step`` (fold, dynamic rollers, winches).
- ``transfer``: the rules by which material crosses a guide (capstan, rigid runs, winch stall).
- ``relax``: the prediction and the material relaxation both solvers share, phase by phase.
- ``xpbd``: SolverXPBD's pass (``solve_tendons``, ``row_split``).
- ``vbd_rows``: SolverVBD's rows (``TendonLinearization``), run and chain tensions, the dual step.
- ``vbd_relax``: SolverVBD's step 1 and relaxation (``relax_tendon_vbd``).
- ``vbd_linearize``: SolverVBD's pass (``linearize_tendons``) and its kept rows.
- ``diagnostics``: ``tendon_diagnostics``, ``reset_tendon_report``.

Dependencies run down this list (a module imports only modules above it). The kernels compile into
the Warp modules named in ``constants``, not into the Python modules that hold them
(``STEP_MODULE`` is this package's own name, for ``begin_step`` and ``tendon_diagnostics``), so
where a kernel lives does not change what a solver compiles.
"""

from newton_tendon.kernels.cable.cached import (  # noqa: F401
    TendonGeometry,
    cache_body_guide_frames,
    cache_guide_frames,
    cache_span_response,
    cached_guide_wrap,
    cached_roller,
    cached_span_length,
    cached_span_points,
    make_tendon_geometry,
    world_span,
)
from newton_tendon.kernels.cable.constants import (  # noqa: F401
    CAPSTAN_EXPONENT_MAX,
    CHAIN_RUNS,
    CHAIN_SETTLE,
    CHAIN_SWEEPS,
    DENOM_FLOOR,
    FLOOR_ROUNDING,
    FOLD_ROUNDING,
    GEOMETRIC_STIFFNESS_CAP,
    GEOMETRIC_STIFFNESS_MIN,
    MEASURE_MODULE,
    RESET_MODULE,
    REST_LENGTH_FLOOR,
    RIGID_FLEX,
    RIGID_STRETCH_ROUNDING,
    ROW_KEEP_TURN,
    STEP_MODULE,
    STIFF_REPORT_COMPLIANCE,
    STOP_LENGTH,
    VBD_MODULE,
    WRAP_TOLERANCE,
    XPBD_MODULE,
    chain_vec,
)
from newton_tendon.kernels.cable.diagnostics import (  # noqa: F401
    reset_tendon_report,
    tendon_diagnostic,
    tendon_diagnostics,
)
from newton_tendon.kernels.cable.history import (  # noqa: F401
    add_material,
    begin_step,
    begin_tendon_step,
    fold_span,
    force_winch_span,
    measure_baseline,
    measure_tendon,
    reset_tendons,
    reset_tendons_measured,
    seed_tendon,
    winch_command,
    winch_span,
)
from newton_tendon.kernels.cable.relax import (  # noqa: F401
    capstan_ratios,
    capstan_sweeps,
    frictionless_runs,
    predict_span,
    relax_material,
)
from newton_tendon.kernels.cable.span import (  # noqa: F401
    arc_arriving,
    arc_leaving,
    at_end_stop,
    at_rest_floor,
    held_elastically,
    left_guide,
    material_wrap,
    out_segment,
    passed_material_point,
    seg_index,
    span_at_stop,
    span_compliance,
    span_damping,
    span_length,
    span_slot,
    stop_points,
)
from newton_tendon.kernels.cable.transfer import (  # noqa: F401
    capstan_transfer,
    frictional_guide,
    rigid_run_stretch,
    rigid_transfer,
    share_rigid_run,
    stall_length_winch,
    stopped_member_tension,
    tight_transfer,
)
from newton_tendon.kernels.cable.types import TendonDiagnostics, TendonHistory, TendonWork  # noqa: F401
from newton_tendon.kernels.cable.vbd_linearize import (  # noqa: F401
    contiguous,
    contiguous_work,
    keep_tendon_rows,
    linearize_tendon,
    linearize_tendons,
    row_turn_bound,
    rows_still_hold,
)
from newton_tendon.kernels.cable.vbd_relax import (  # noqa: F401
    exerted_tension_predictions,
    reads_run_level,
    refresh_moving_guide_frames,
    relax_tendon_vbd,
)
from newton_tendon.kernels.cable.vbd_rows import (  # noqa: F401
    TendonLinearization,
    add_row_base,
    al_tension,
    chain_member,
    chain_tension,
    chained,
    geometric_stiffness,
    linearized_stretch,
    linearized_tension,
    rigid_row,
    row_tension,
    run_tension,
    single_row,
    update_span_duals,
    update_tendon_span_duals,
)
from newton_tendon.kernels.cable.xpbd import (  # noqa: F401
    relax_tendon,
    row_end_pull,
    row_split,
    solve_tendon,
    solve_tendons,
)
