"""Transmission tendons: the data their kernels share (structs, row layout, shared constants).

A tendon's length ``l`` is routed (spatial tendons, ``newton_tendon.kernels.spatial``) or a weighted sum of
joint coordinates ``l = sum_i c_i q_i`` (fixed tendons). Its Jacobian is stored per *transmission
slot* as a 6-vector gradient ``J_s = dl/d(x, theta)`` of one body (COM translation, rotation):
a spatial tendon owns one slot per path element, a fixed tendon two per joint term (parent, child).
Tendon t's slots are ``path.start[t] + 2 term_start[t]`` up to the same expression at t + 1, so a
spatial element i sits in slot ``i + 2 term_start[t]``. Then

    dl/dt = J v = sum_s J_s . (v_b, w_b),        W = J M^-1 J^T = sum_b J_b^T M_b^-1 J_b,

with ``J_b`` the sum of the slots on body b (contributions on one body add before the response).

The kernels live by concern: ``transmission_geometry`` (length, slot Jacobians, W),
``transmission_rows`` (the force-element rows of one tendon: set-up, XPBD update, report),
``transmission_couplings`` (polynomial couplings between two tendons) and ``transmission_splitting``
(SolverXPBD's mass splitting across row owners). ``newton_tendon.kernels.transmission`` re-exports
them all.

All of them compile into one Warp module, ``TRANSMISSION_KERNELS`` (the name of the single file they
were split from): a solver compiles it once when it is built (``SolverBase._step_kernels`` names one
of its kernels), and a model without transmission tendons never compiles it.

Signs: F > 0 lengthens, tension T = -F.
"""

import warp as wp

from newton_tendon.kernels.spatial import SpatialPathModel

TRANSMISSION_KERNELS = "newton_tendon.kernels.transmission"
"""Warp module of every transmission kernel (``@wp.kernel(module=TRANSMISSION_KERNELS)``)."""
wp.set_module_options({"enable_backward": False}, module=TRANSMISSION_KERNELS)
wp.set_module_options({"enable_backward": False})

TRANSMISSION_SPATIAL = wp.constant(0)
TRANSMISSION_FIXED = wp.constant(1)
BIG = wp.constant(1.0e30)


@wp.struct
class TransmissionModel:
    """Per-tendon geometry constants: spatial paths, fixed-tendon joint terms, and the joint and
    body data a joint coordinate needs."""

    type: wp.array(dtype=wp.int32)
    path: SpatialPathModel
    term_start: wp.array(dtype=wp.int32)
    term_joint: wp.array(dtype=wp.int32)
    term_dof: wp.array(dtype=wp.int32)
    term_angular: wp.array(dtype=wp.int32)
    term_coefficient: wp.array(dtype=float)
    joint_type: wp.array(dtype=wp.int32)
    joint_parent: wp.array(dtype=wp.int32)
    joint_child: wp.array(dtype=wp.int32)
    joint_X_p: wp.array(dtype=wp.transform)
    joint_X_c: wp.array(dtype=wp.transform)
    joint_axis: wp.array(dtype=wp.vec3)
    joint_qd_start: wp.array(dtype=wp.int32)
    body_com: wp.array(dtype=wp.vec3)


@wp.struct
class TransmissionScratch:
    """Per-element route points/gradients and per-slot Jacobians, written by the geometry."""

    point_a: wp.array(dtype=wp.vec3)
    grad_a: wp.array(dtype=wp.vec3)
    point_b: wp.array(dtype=wp.vec3)
    grad_b: wp.array(dtype=wp.vec3)
    jac: wp.array(dtype=wp.spatial_vector)
    resp: wp.array(dtype=wp.spatial_vector)
    """Per slot, the body's response M_b^-1 J_s at the step start (zero on an immovable body): what
    an XPBD row impulse moves the body by, fixed for the step like J and W."""
    body: wp.array(dtype=wp.int32)
    term_ref: wp.array(dtype=float)
    """Previous continuous coordinate of each fixed-tendon term (the unwrapping reference)."""
    term_q: wp.array(dtype=float)
    """Continuous coordinate of each fixed-tendon term at the last geometry evaluation."""


@wp.struct
class TransmissionParams:
    """Force-element parameters per tendon (model arrays, editable in place)."""

    stiffness: wp.array(dtype=float)
    damping: wp.array(dtype=float)
    spring_lower: wp.array(dtype=float)
    spring_upper: wp.array(dtype=float)
    activation_time: wp.array(dtype=float)
    actuation_lower: wp.array(dtype=float)
    actuation_upper: wp.array(dtype=float)
    lower_limit: wp.array(dtype=float)
    upper_limit: wp.array(dtype=float)
    limit_margin: wp.array(dtype=float)
    position_correction: wp.array(dtype=float)
    limit_compliance: wp.array(dtype=float)
    friction_loss: wp.array(dtype=float)
    friction_compliance: wp.array(dtype=float)
    armature: wp.array(dtype=float)


@wp.struct
class TransmissionControl:
    """Per-tendon commands (``Control`` arrays)."""

    drive_force: wp.array(dtype=float)
    target_length: wp.array(dtype=float)
    target_velocity: wp.array(dtype=float)
    position_gain: wp.array(dtype=float)
    velocity_gain: wp.array(dtype=float)
    enabled: wp.array(dtype=wp.int32)


ROWS = 6
"""Rows per tendon: 0 passive (spring + damping), 1 drive, 2 lower limit (or lock), 3 upper limit,
4 dry friction, 5 armature."""
vec6 = wp.types.vector(ROWS, float)


@wp.struct
class TransmissionWork:
    """Solver-owned per-tendon step data: start-of-step length, rate, W and curvature bias, the rows
    ``(b, gamma, lo, hi)`` set up at the step start, and their accumulated impulses ``mu`` [N s]."""

    l_n: wp.array(dtype=float)
    ldot_n: wp.array(dtype=float)
    bias: wp.array(dtype=float)
    w: wp.array(dtype=float)
    rate: wp.array(dtype=float)
    activation: wp.array(dtype=float)
    enabled: wp.array(dtype=wp.int32)
    row_b: wp.array(dtype=vec6)
    row_gamma: wp.array(dtype=vec6)
    row_lo: wp.array(dtype=vec6)
    row_hi: wp.array(dtype=vec6)
    mu: wp.array(dtype=vec6)
    body_split: wp.array(dtype=float)
    """Row owners per body (SolverXPBD mass splitting, ``count_row_owners``), shape [body_count], or
    shape [0] where no body can have two owners (then nothing is split)."""
    w_split: wp.array(dtype=float)
    """Split effective inverse mass W_s [1/kg] per tendon (``split_transmission_masses``), or shape [0]."""
    slot_w: wp.array(dtype=float)
    """Each transmission slot's term of its tendon's W [1/kg] (a body's J_b^T M_b^-1 J_b at its first
    slot, else 0), kept for the split W; shape [transmission_slot_count], or [0] without splitting."""


@wp.struct
class TransmissionReport:
    """Per-tendon results after a step (solver arrays)."""

    length: wp.array(dtype=float)
    velocity: wp.array(dtype=float)
    force: wp.array(dtype=float)
    tension: wp.array(dtype=float)
    actuation_force: wp.array(dtype=float)
    limit_force: wp.array(dtype=float)
    friction_force: wp.array(dtype=float)
    coupling_force: wp.array(dtype=float)
    potential_energy: wp.array(dtype=float)
    kinetic_energy: wp.array(dtype=float)
