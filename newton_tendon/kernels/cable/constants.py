"""Routed cables: the Warp module names the cable kernels compile into, and the tolerances and
limits of the cable model (rest-length floor, end stop, rounding bands, capstan cap, VBD row
constants).

Every kernel of the package names its Warp module here (``STEP_MODULE``, ``XPBD_MODULE``,
``VBD_MODULE``, ``MEASURE_MODULE``, ``RESET_MODULE``), so which file a kernel lives in does not
decide what a solver compiles: ``SolverBase._step_kernels`` lists the kernels, and their modules are
compiled in parallel in the solver's constructor. A new kernel picks one of these modules (or a new
one declared here, with its options). Nothing here depends on the other cable modules.
"""

import warp as wp

STEP_MODULE = "newton_tendon.kernels.cable"
"""Warp module of the step kernels both solvers launch (``begin_step``, ``tendon_diagnostics``): the
package's own name, the module these kernels compiled into while the package was one file."""
wp.set_module_options({"enable_backward": False}, module=STEP_MODULE)
XPBD_MODULE = "newton_tendon.kernels.cable_xpbd"
"""Warp module of SolverXPBD's tendon pass; ``VBD_MODULE`` holds SolverVBD's. Each solver compiles
only its own pass on a cold kernel cache (``finalize`` compiles only ``MEASURE_MODULE``)."""
VBD_MODULE = "newton_tendon.kernels.cable_vbd"
wp.set_module_options({"enable_backward": False}, module=XPBD_MODULE)
wp.set_module_options({"enable_backward": False}, module=VBD_MODULE)
MEASURE_MODULE = "newton_tendon.kernels.cable_measure"
"""``measure_baseline`` alone: ``finalize`` compiles only it, and a solver compiles the step's
modules (``STEP_MODULE`` among them) in parallel."""
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
VBD_COMPLIANCE_FLOOR = 1.0e-8
"""Compliance [m/N] SolverVBD gives a span authored with less (c = 0 included), as the spec says:
"VBD approximates zero segment compliance with 1.0e-8 m/N". Set into ``TendonModel.compliance_floor``;
SolverXPBD keeps 0 (an exact row). 1e8 N/m stretches a 0.5 m span by 1e-7 m under 10 N."""
RIGID_FLEX = wp.constant(1.0e-8)
"""A run whose summed 1/k is below this is rigid: it passes material through without stretching."""
RIGID_STRETCH_ROUNDING = wp.constant(1.0e-6)
"""A rigid run whose stretch ``sum (l - L)`` is within this fraction of its length (about 8 float32
ulps) is taut: the rounding left once its material has been made to fit its length. A rigid run
counts as having slipped cable in (or out) across its frictional guide once more than this much
material entered (or left) it within the step."""
CAPSTAN_EXPONENT_MAX = wp.constant(60.0)
"""exp(mu theta) is capped at exp(60): beyond that the guide never slips in float32 anyway. The
product of the ratios along a chain of guides (``capstan_product``) saturates at the same bound, so
a route whose sum of mu theta exceeds float32's exp(88.7) keeps finite ratios and tensions: a
tension ratio of 1.1e26 across a chain already holds any load float32 can carry (issue 41)."""
CAPSTAN_RATIO_MAX = wp.constant(1.1420073898156842e26)
"""exp(CAPSTAN_EXPONENT_MAX): the largest capstan ratio of one guide or of a chain of guides [1]."""
TENSION_MULTIPLIER_MAX = wp.constant(1.0e30)
"""Bound [N s^2] of a span multiplier set from a neighbour's across a saturated chain of guides
(``saturated_tension``): about 6e34 N at 240 Hz, far past any load, with room below float32's 3.4e38
for the relaxation's differences and sums."""
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
