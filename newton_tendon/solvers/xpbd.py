"""SolverXPBD: extended position-based dynamics for rigid bodies with joints and contacts."""

from __future__ import annotations

import numpy as np
import warp as wp

from newton_tendon.kernels import cable as cable_kernels
from newton_tendon.kernels import contacts as contact_kernels
from newton_tendon.kernels import joints as joint_kernels
from newton_tendon.kernels import rigid as rigid_kernels
from newton_tendon.kernels.types import BODY_KINEMATIC

from ..collision import Contacts
from ..model import Model
from ..state import Control, State
from ._articulations import TreeScratch
from ._joint_groups import joint_groups
from .base import SolverBase, chunked

JOINT_SOLVERS = ("gauss_seidel", "jacobi", "articulation")
"""``SolverXPBD(joint_solver=...)``: how each iteration passes over the joints."""
JACOBI_JOINT_RELAXATION = (0.7, 0.4)
"""Default (linear, angular) joint relaxation of the Jacobi joint pass; the Gauss-Seidel pass needs none (1.0)."""


def tendon_row_relaxation(model: Model, relaxation: float, jacobi_joints: bool) -> np.ndarray:
    """Relaxation of each tendon's row steps in the XPBD pass, shape [tendon_count], float32.

    The pass is Jacobi: tendons, transmission rows, contacts (and Jacobi joints) that move one body
    each assume it answers them alone, and their steps add. The Jacobi default ``relaxation`` (0.7)
    guards that. A tendon whose moving bodies no other summed row moves (no other tendon, no
    transmission or coupling, no Jacobi joint) and that moves each of them by one row, at an end
    guide, has nothing to conflict with and takes its full step (1.0): at 0.7 a load hanging over a
    frictionless world roller at one iteration kept 30 % of each step's correction as stretch the
    multiplier did not hold, and its span reported 130.8 N against the run's 14.0 N (m g = 9.81 N,
    issue 42). Contacts are averaged among themselves and do not count here."""
    nt = model.tendon_count
    out = np.full(nt, relaxation, dtype=np.float32)
    if nt == 0:
        return out
    # Vectorized over guides and slot-table entries: it runs at construction and at every
    # notify_model_changed(TENDON_PROPERTIES), which a per-world randomization calls at reset.
    starts = model.tendon_start.numpy()
    counts = np.diff(starts)
    guide_body = model.tendon_guide_body.numpy()
    guide_tendon = np.repeat(np.arange(nt), counts)
    nb = max(model.body_count, 1)  # counts per body, indexed by guide_body (world guides read body 0, unused)
    moving = (model.body_inv_mass.numpy() > 0.0) & ((model.body_flags.numpy() & BODY_KINEMATIC) == 0)
    on_body = guide_body >= 0
    held = np.zeros(guide_body.size, dtype=bool)
    held[on_body] = moving[guide_body[on_body]]
    # Rows of other kinds on each body: transmissions and couplings, and Jacobi joints.
    slot_start = model.body_slot_start.numpy()
    slot = model.body_slot.numpy()[: slot_start[-1]]
    slot_owner = np.repeat(np.arange(model.body_count), np.diff(slot_start))
    tbase = 2 * model.joint_count
    xbase = tbase + 2 * model.tendon_guide_count
    summed = xbase + model.transmission_slot_count + model.coupling_slot_count
    other_row = (slot >= xbase) & (slot < summed)
    if jacobi_joints:
        other_row |= slot < tbase
    others = np.bincount(slot_owner[other_row], minlength=nb)
    # Guides and distinct tendons on each body.
    guides = np.bincount(guide_body[on_body], minlength=nb)
    pairs = np.unique(np.stack([guide_body[on_body], guide_tendon[on_body]]), axis=1)
    tendons = np.bincount(pairs[0], minlength=nb)
    end_guide = np.zeros(guide_body.size, dtype=bool)
    end_guide[starts[:-1]] = True
    end_guide[starts[1:] - 1] = True
    b = np.where(on_body, guide_body, 0)
    # Two rows of one tendon on a body (a guide between two spans, or several guides) are shared
    # by ``row_split``; at the full step a free body with two frictional pinholes of one cable broke
    # the capstan bound (0 N against 978.6 N, a fuzz scene).
    bad_guide = held & ((others[b] > 0) | (guides[b] > 1) | (tendons[b] > 1) | ~end_guide)
    conflict = np.bincount(guide_tendon, weights=bad_guide, minlength=nt) > 0
    # An inextensible span reports the tension its row applied, so a stretch its multiplier does not
    # hold never shows; at the full step its reading carried more float32 noise (a pendulum on an
    # inextensible route: 2.3 % off m (g u_z + v^2/l) in a frame, 1.0 % at 0.7).
    span_tendon = np.repeat(np.arange(nt), counts - 1)
    stiff_span = model.tendon_segment_compliance.numpy() <= 0.0
    conflict |= np.bincount(span_tendon, weights=stiff_span, minlength=nt) > 0
    out[~conflict] = 1.0
    return out


def _check_relaxation(name: str, value) -> float:
    v = float(value)
    if not (0.0 < v <= 2.0):
        raise ValueError(f"SolverXPBD: {name} must be in (0, 2], got {value}")
    return v


class SolverXPBD(SolverBase):
    """Rigid bodies, joints and contacts solved as XPBD position constraints, one step per call.

    Each step predicts body poses from velocities and forces, runs ``iterations`` passes over the
    constraint rows, derives velocities from the pose change, and then applies the velocity-level
    contact term (restitution). In each iteration the contact rows, routed-cable rows and
    transmission tendons are solved in parallel (Jacobi) and their corrections gathered per body in
    a fixed order; then the joints. With ``joint_solver="articulation"`` (the default) all joint rows
    of each articulation (anchors, orientation locks, drives, armature, active limits) are solved
    together, exactly for the rows linearized at the current poses, by a tree factorization whose
    cost is linear in the joints (docs/articulations.md): joint forces (``Control.joint_f``) and the
    other rows' corrections of the articulation's bodies enter that solve as impulses, and contacts
    weigh their steps by each body's articulated response. ``"gauss_seidel"`` solves one joint's
    block at a time within each articulation, root to leaves and back in alternate iterations;
    ``"jacobi"`` solves every joint in parallel from the same poses and adds their corrections in with
    the other rows' (relaxation 0.7 linear, 0.4 angular by default). Friction is a position-level row
    with the multiplier projected onto the Coulomb cone. Runs are bitwise reproducible in every mode.

    The articulation pass is the default because it keeps imported robots whole under the controls
    a policy sends on its first day: over dm_control's suite with full-range random controls it is
    within 2x of MuJoCo's body speeds on every model but dog (where humanoid reached 2.6e7 rad/s
    with Gauss-Seidel), and one pass leaves a second-order joint residual. It costs more per
    iteration: on the MJCF tendon arm at 1,024 worlds on the CPU, 24.5k world-steps/s at 8
    iterations against Gauss-Seidel's 52.5k (docs/articulations.md). There its angles stay within
    0.0006 rad of the converged (128-iteration) answer over 0.5 s (Gauss-Seidel 0.0022, Jacobi 1.6).

    References:
        Mueller, Macklin, Chentanez, Jeschke, Kim. Detailed Rigid Body Simulation with Extended
        Position Based Dynamics. SCA 2020.
        Macklin, Mueller, Chentanez. XPBD: Position-Based Simulation of Compliant Constrained
        Dynamics. MIG 2016.

    Args:
        joint_solver: ``"articulation"``, ``"gauss_seidel"`` or ``"jacobi"`` (see above).
        joint_linear_relaxation: the joint anchor and linear coordinate rows' relaxation in (0, 2];
            default 1.0 for the articulation and Gauss-Seidel passes, 0.7 for Jacobi. Also the
            routed cables' (default 0.7 whatever the joint pass).
        joint_angular_relaxation: the joint orientation and angular coordinate rows' relaxation in
            (0, 2]; default 1.0 for the articulation and Gauss-Seidel passes, 0.4 for Jacobi.

    Limitations:
        Joints act in maximal coordinates. Joint limits are hard. Joint coordinates wrap to
        (-pi, pi] for revolute joints (a limit reads the turn of the angle nearest its range).
        Transmission tendons and routed cables still weigh their rows by the bodies' own masses.

    Example:
        >>> solver = SolverXPBD(model, iterations=8)
        >>> solver.step(state_0, state_1, control, contacts, 1.0 / 240.0)
    """

    def __init__(
        self,
        model: Model,
        iterations: int = 8,
        joint_linear_relaxation: float | None = None,
        joint_angular_relaxation: float | None = None,
        rigid_contact_relaxation: float = 0.8,
        tendon_max_sweeps: int = 256,
        tendon_settle_tol: float = 1.0e-3,
        tendon_activation_tol: float = 2.0e-3,
        joint_solver: str = "articulation",
    ):
        if joint_solver not in JOINT_SOLVERS:
            raise ValueError(f"SolverXPBD: joint_solver must be one of {JOINT_SOLVERS}, got {joint_solver!r}")
        super().__init__(model)
        self.iterations = self._check_iterations(iterations)
        jacobi_lin, jacobi_ang = JACOBI_JOINT_RELAXATION
        gs = joint_solver != "jacobi"
        explicit_relaxation = joint_linear_relaxation
        if joint_linear_relaxation is None:
            joint_linear_relaxation = 1.0 if gs else jacobi_lin
            tendon_relaxation = jacobi_lin
        else:
            tendon_relaxation = joint_linear_relaxation
        if joint_angular_relaxation is None:
            joint_angular_relaxation = 1.0 if gs else jacobi_ang
        self.joint_linear_relaxation = _check_relaxation("joint_linear_relaxation", joint_linear_relaxation)
        self.joint_angular_relaxation = _check_relaxation("joint_angular_relaxation", joint_angular_relaxation)
        # Routed-tendon rows are solved in parallel (Jacobi) whatever the joint pass: they keep the
        # Jacobi default unless a linear relaxation is given.
        self._tendon_relaxation = tendon_relaxation
        self._tendon_relaxation_given = explicit_relaxation is not None
        self._jacobi_joints = not gs
        self._tendon_row_relaxation = wp.array(self._row_relaxation(), dtype=float, device=self.device)
        """Relaxation of each tendon's XPBD row steps (``tendon_row_relaxation``; a given
        ``joint_linear_relaxation`` applies to every tendon, as the spec says). Refreshed by
        ``notify_model_changed(TENDON_PROPERTIES)`` (it depends on which spans are inextensible)."""
        self.rigid_contact_relaxation = _check_relaxation("rigid_contact_relaxation", rigid_contact_relaxation)
        self._init_tendon_controls(tendon_max_sweeps, tendon_settle_tol, tendon_activation_tol)
        # The joint pass compiled for the rows this model has (universal joints, row armature).
        self.joint_solver = joint_solver
        self._joint_pass_reversed = 0
        self._first_iteration = True
        self._gathers_impulses = False
        variant = (self._has_universal_joints, self._has_row_armature)
        start, order = np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32)
        self._articulated = joint_solver == "articulation"
        self._response_tree = wp.full(1, -1, dtype=wp.int32, device=self.device)
        self._body_impulse = wp.zeros(1, dtype=wp.spatial_vector, device=self.device)
        self._body_response = wp.zeros(1, dtype=wp.spatial_matrix, device=self.device)
        self._init_rigid_scratch()
        if joint_solver == "jacobi":
            self._solve_joints = joint_kernels.solve_joint_kernel(*variant)
        elif not self._articulated:
            self._solve_joints = joint_kernels.solve_joint_group_kernel(*variant)
            start, order = joint_groups(
                model.joint_parent.numpy(), model.joint_child.numpy(), model.body_mass.numpy(), model.body_flags.numpy()
            )
        if self._articulated:
            self._solve_joints = joint_kernels.solve_joint_group_kernel(*variant)
            self._init_articulations(variant)
            # The Gauss-Seidel pass runs after the trees only over their loop joints.
            start, order = self._loop_start, self._loop_joint
        self._joint_group_count = len(start) - 1
        self._joint_group_start = wp.array(start, dtype=wp.int32, device=self.device)
        self._joint_group_joint = wp.array(order if len(order) else [0], dtype=wp.int32, device=self.device)

        m = model
        dev = self.device
        # Transmission tendons and couplings run in parallel (Jacobi): bodies they share are split.
        self._init_transmission_split()
        self._joint_lambda = wp.zeros(m.joint_dof_count, dtype=float, device=dev)
        # The articulation pass's limit multipliers (a limit holds while its multiplier pushes).
        self._limit_lambda = wp.zeros(max(m.joint_dof_count, 1), dtype=float, device=dev)
        self._contact_lambda_n = wp.zeros(m.contact_capacity, dtype=float, device=dev)
        self._contact_lambda_t = wp.zeros(m.contact_capacity, dtype=float, device=dev)
        self._default_control = Control(m)
        self._load_step_modules()

    def _init_articulations(self, variant: tuple[bool, bool]):
        """Trees of the articulation pass (``solvers._articulations``) and its per-node scratch."""
        m = self.model
        dev = self.device
        self._trees = TreeScratch(m, dev)
        self._solve_trees = joint_kernels.solve_articulation_kernel(*variant)
        self._tree_group_count = self._trees.group_count
        # Generalized joint forces go into the tree solve, not the prediction (``_predict_bodies``).
        self._wants_response = m.contact_capacity > 0
        self._joint_wrench = wp.zeros(max(2 * m.joint_count, 1), dtype=wp.spatial_vector, device=dev)
        # Each tree body's articulated response, for the contact rows (``contacts.side_inv_mass``).
        self._response_tree = self._trees.body_tree
        # The other rows' corrections of tree bodies, as impulses the tree pass applies.
        self._body_impulse = wp.zeros(max(m.body_count, 1), dtype=wp.spatial_vector, device=dev)
        self._body_response = wp.zeros(max(m.body_count, 1), dtype=wp.spatial_matrix, device=dev)
        self._no_limit_force = wp.zeros(1, dtype=wp.vec2, device=dev)  # SolverVBD's output, unused here
        self._loop_start = self._trees.loop_start
        self._loop_joint = self._trees.loop_joint
        self._has_loop_joints = len(self._loop_joint) > 0

    def _solver_step_kernels(self) -> tuple[list, list]:
        own = [self._solve_joints] if self.model.joint_count else []
        if self.model.joint_count and self._articulated:
            own = [self._solve_trees] + (own if self._has_loop_joints else [])
        return ([cable_kernels.solve_tendons] if self.model.tendon_count else []), own

    # ------------------------------------------------------------------------------------------

    def step(self, state_in: State, state_out: State, control: Control | None, contacts: Contacts | None, dt: float):
        """Advance all worlds by ``dt`` [s] from ``state_in`` into ``state_out`` (graph-capturable)."""
        dt = self._check_dt(dt)
        self._check_step_args(state_in, state_out, control, contacts)
        if control is None:
            control = self._default_control
        if self.model.body_count == 0 and self.model.tendon_count == 0:
            return
        self._predict(state_in, state_out, control, dt)
        self._begin_tendon_step(state_in, state_out, control)
        self._begin_transmissions(state_in, state_out, control, dt)
        for it in range(self.iterations):
            if it == self.iterations - 1:
                self._mark_last_tendon_iteration()
            # Gauss-Seidel joint passes alternate direction (root to leaves, then back).
            self._joint_pass_reversed = it % 2
            self._first_iteration = it == 0
            self._solve_positions(state_in, state_out, control, contacts, dt)
        self._update_velocities(state_in, state_out, dt)
        if contacts is not None and self.model.contact_capacity:
            self._solve_velocities(state_in, state_out, contacts, dt)
        self._tendon_diagnostics(state_out, dt)
        self._report_transmissions(state_out, dt)

    # ------------------------------------------------------------------------------------------
    # Phases

    def _predict(self, state_in: State, state_out: State, control: Control, dt: float):
        m = self.model
        if m.joint_count:
            self._joint_lambda.zero_()
            if self._articulated:
                self._limit_lambda.zero_()
        if m.contact_capacity:
            self._contact_lambda_n.zero_()
            self._contact_lambda_t.zero_()
            # Without a contact buffer the contact slots stay inert for the whole step.
            self._slot_delta.zero_()
            self._slot_weight.zero_()
        self._predict_bodies(state_in, state_out, control, dt)

    def _row_relaxation(self) -> np.ndarray:
        if self._tendon_relaxation_given:
            return np.full(self.model.tendon_count, self._tendon_relaxation, dtype=np.float32)
        return tendon_row_relaxation(self.model, self._tendon_relaxation, self._jacobi_joints)

    def _tendon_properties_changed(self):
        self._tendon_row_relaxation.assign(self._row_relaxation())

    def _solve_positions(
        self, state_in: State, state_out: State, control: Control, contacts: Contacts | None, dt: float
    ):
        m = self.model
        gauss_seidel = m.joint_count and not self._jacobi_joints  # or the articulation pass
        if m.joint_count and not gauss_seidel:
            self._launch_joint_pass(m.joint_count, control, dt, state_out)
        has_contacts = contacts is not None and m.contact_capacity > 0
        if has_contacts:
            wp.launch(
                contact_kernels.solve_contact_positions,
                dim=m.contact_capacity,
                inputs=[
                    self._bodies,
                    self._summed_slot_count,
                    self.rigid_contact_relaxation,
                    # The articulated responses the last articulation pass left (none before the first).
                    0 if self._first_iteration or not self._articulated else 1,
                    contacts.data(),
                    state_in.body_q,
                    state_out.body_q,
                ],
                outputs=[
                    self._contact_lambda_n,
                    self._contact_lambda_t,
                    self._slot_delta,
                    self._slot_weight,
                    self._response_tree,
                    self._body_response,
                ],
                device=self.device,
            )
        if m.tendon_count:
            wp.launch(
                cable_kernels.solve_tendons,
                dim=chunked(m.tendon_count, self._chunk),
                inputs=[
                    self._tendons,
                    self._bodies,
                    m.tendon_count,
                    self._chunk,
                    2 * m.joint_count,
                    self._tendon_row_relaxation,
                    self.tendon_max_sweeps,
                    self.tendon_settle_tol,
                    dt,
                    state_out.body_q,
                    state_out.tendon_history,
                    self._tendon_work,
                    self._tendon_geo,
                ],
                outputs=[self._slot_delta],
                device=self.device,
            )
        self._solve_transmissions(
            control,
            self._transmission_slot_base,
            dt,
            state_out.body_q,
            state_out.body_qd,
            self._body_delta,
            self._slot_delta,
        )
        # The Gauss-Seidel joint pass moves its bodies itself: the gather is for the other rows.
        gather = (m.joint_count and not gauss_seidel) or has_contacts or m.tendon_count or m.transmission_count
        self._gathers_impulses = bool(gather) and self._articulated
        if gather:
            wp.launch(
                rigid_kernels.apply_slot_pose_deltas,
                dim=m.body_count,
                inputs=[self._bodies, self._summed_slot_count, state_out.body_q, self._slot_delta, self._slot_weight],
                outputs=[self._body_delta, self._response_tree, self._body_impulse],
                device=self.device,
            )
        if gauss_seidel:
            # Last, on the poses the other rows left: an iteration ends with the joints (and their
            # armature, the coordinates' own inertia) met, so a row that moved a light link too far,
            # weighed against the link's own mass, is pulled back within the iteration.
            if self._articulated:
                self._launch_articulation_pass(control, dt, state_out)
                if not self._has_loop_joints:
                    return
            self._launch_joint_pass(chunked(self._joint_group_count, self._chunk), control, dt, state_out)

    def _launch_articulation_pass(self, control: Control, dt: float, state_out: State):
        wp.launch(
            self._solve_trees,
            dim=chunked(self._tree_group_count, self._chunk),
            inputs=[
                self._bodies,
                self._joints,
                self.joint_linear_relaxation,
                self.joint_angular_relaxation,
                dt,
                self._trees.nodes,
                self._trees.all_groups,
                self._tree_group_count,
                self._chunk,
                1 if self._first_iteration else 0,
                1 if self._gathers_impulses else 0,
                1 if self._wants_response else 0,
                control.joint_target_pos,
                control.joint_target_vel,
                self._joint_q_prev,
                self._joint_qd_prev,
                state_out.body_q,
                self._joint_wrench,
                self._body_impulse,
            ],
            outputs=[
                self._joint_lambda,
                self._body_delta,
                self._body_response,
                self._limit_lambda,
                # SolverVBD's variant's Newton-step inputs, not read here:
                self._body_response,
                self._response_tree,
                self._response_tree,
                0,
                self._body_impulse,
                self._no_limit_force,
            ],
            device=self.device,
        )

    def _launch_joint_pass(self, dim: int, control: Control, dt: float, state_out: State):
        wp.launch(
            self._solve_joints,
            dim=dim,
            inputs=[
                self._bodies,
                self._joints,
                self.joint_linear_relaxation,
                self.joint_angular_relaxation,
                dt,
                self._joint_group_start,
                self._joint_group_joint,
                self._joint_group_count,
                self._chunk,
                self._joint_pass_reversed,
                control.joint_target_pos,
                control.joint_target_vel,
                self._joint_q_prev,
                self._joint_qd_prev,
                state_out.body_q,
            ],
            outputs=[self._joint_lambda, self._slot_delta, self._body_delta],
            device=self.device,
        )

    def _update_velocities(self, state_in: State, state_out: State, dt: float):
        wp.launch(
            rigid_kernels.update_body_velocities,
            dim=self.model.body_count,
            inputs=[self._bodies, dt, state_out.body_qd, self._body_delta],
            device=self.device,
        )

    def _solve_velocities(self, state_in: State, state_out: State, contacts: Contacts, dt: float):
        self._restitution_pass(state_in, state_out, contacts.data(), self._contact_lambda_n, dt)
