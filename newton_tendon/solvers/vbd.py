"""SolverVBD: vertex block descent for rigid bodies, joints, contacts and routed cables."""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

from newton_tendon.kernels import cable as cable_kernels
from newton_tendon.kernels import joints as joint_kernels
from newton_tendon.kernels import rigid as rigid_kernels
from newton_tendon.kernels import vbd as vbd_kernels
from newton_tendon.kernels.cable.constants import VBD_COMPLIANCE_FLOOR
from newton_tendon.kernels.contacts import ContactData
from newton_tendon.kernels.types import BODY_KINEMATIC, JOINT_FREE

from ..collision import Contacts
from ..exceptions import NewtonDeprecationWarning
from ..model import Model, ModelFlags
from ..state import Control, State
from ._articulations import TreeScratch, colour_trees
from .base import CPU_CHUNK, SolverBase, chunked  # noqa: F401 (CPU_CHUNK: re-exported)

JOINT_SOLVERS = ("articulation", "body")
"""SolverVBD's ways to solve joints: each articulation's Newton step with its joints held, in one
exact linear solve per tree ("articulation"), or each body's own Newton step with the joints as
augmented-Lagrangian rows, one colour at a time ("body")."""

TENDON_COMPLIANCE_FLOOR = 1.0e-8
"""Smallest compliance [m/N] a span's penalty reaches: its penalty stiffness is capped at 1e8 N/m.
Inextensible spans (compliance 0) are augmented-Lagrangian rows whose multiplier carries the load,
so they converge to zero stretch; the cap only bounds how stiff their Newton model gets."""


def _positive(name: str, value, lo: float = 0.0, hi: float = np.inf, closed_lo: bool = False) -> float:
    v = float(value)
    ok = (v >= lo if closed_lo else v > lo) and v <= hi and np.isfinite(v)
    if not ok:
        bracket = "[" if closed_lo else "("
        raise ValueError(f"SolverVBD: {name} must be in {bracket}{lo}, {hi}], got {value!r}")
    return v


def _require_contiguous(*structs):
    """Raise unless every array field of the Warp struct instances is contiguous: ``linearize_tendons``
    indexes them as contiguous views (``cable.contiguous_work``) for speed."""
    for st in structs:
        for name in st._cls.vars:
            arr = getattr(st, name)
            if isinstance(arr, wp.array) and not arr.is_contiguous:
                raise ValueError(f"SolverVBD: {st._cls.key}.{name} must be a contiguous array")


_NEWTON_NO_EFFECT = (
    "newton_tendon's SolverVBD has one formulation, augmented-Lagrangian hard rows whose relative penalty "
    "grows each iteration from penalty_min (the ramped-penalty scheme newton's legacy path runs)"
)
_NEWTON_RELATIVE = (
    "newton's legacy penalties are absolute [N/m, N m/rad]; ours are relative to each row's inertia, "
    "k = rho m_eff / dt^2, so no single value converts: penalty_min, penalty_max, penalty_growth tune ours"
)
_NEWTON_LEGACY_PENALTIES = (
    "rigid_avbd_beta",
    "rigid_avbd_linear_beta",
    "rigid_avbd_angular_beta",
    "rigid_contact_k_start",
    "rigid_joint_linear_k_start",
    "rigid_joint_angular_k_start",
)
"""newton 1.8's deprecated SolverVBD penalty seeds and ramps of its legacy (non-ALM) path: accepted with
newton's deprecation warning and no effect (``_NEWTON_RELATIVE``): newton keeps them only for that
path, and our rows reach their constraints whatever the seed (docs/migration.md)."""
_NEWTON_HARD_ROW_DAMPING = ("rigid_joint_linear_kd", "rigid_joint_angular_kd")
"""newton's damping of its joint penalty springs: accepted without effect (not deprecated in newton),
because our joint rows are hard augmented-Lagrangian rows whose error is driven to zero each step, so
the rate of that error, which the damping would act on, is zero at convergence."""
_NEWTON_UNSUPPORTED = (
    "rigid_avbd_alpha",
    "rigid_avbd_joint_alpha",
    "rigid_avbd_contact_alpha",
    "rigid_avbd_gamma",
    "rigid_contact_history",
    "rigid_body_contact_buffer_size",
    "rigid_body_particle_contact_buffer_size",
    "rigid_soft_contact_use_log_barrier",
    "rigid_joint_linear_ke",
    "rigid_joint_angular_ke",
    "rigid_soft_enable_dat",
    "rigid_soft_dat_use_interval_arithmetic",
)
"""newton 1.8's other SolverVBD ``rigid_*`` options: no counterpart here (no stabilization alpha, no
warm-started multipliers, no joint material or particle coupling), rejected by name."""


def _newton_rigid_options(options: dict) -> list[str]:
    """Check newton's ``rigid_*`` keywords passed to SolverVBD; return the deprecated ones accepted.

    Accepted (each selects what our solver always does, or has nothing to act on, so it changes
    nothing): ``rigid_compliant_alm`` (True, newton's default, silently; False, deprecated in newton
    1.6, with a warning), ``rigid_contact_hard=True`` (hard contact rows; deprecated), the legacy
    penalty seeds and ramps (``_NEWTON_LEGACY_PENALTIES``, deprecated, with the warning) and the joint
    damping (``_NEWTON_HARD_ROW_DAMPING``, silently). Everything else raises, by name."""
    accepted = []
    for key, value in options.items():
        where = f"SolverVBD: newton's option {key}"
        if key == "rigid_compliant_alm":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{where} must be True or False, got {type(value).__name__}")
            if not value:
                accepted.insert(0, "rigid_compliant_alm=False")
        elif key == "rigid_contact_hard":
            if value is None:
                continue
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{where} must be a bool, got {type(value).__name__}")
            if not value:
                raise ValueError(
                    f"{where}=False (penalty-only contacts) is not supported: our contacts are always hard "
                    "augmented-Lagrangian rows; omit it"
                )
            accepted.append(key)
        elif key in _NEWTON_LEGACY_PENALTIES or key in _NEWTON_HARD_ROW_DAMPING:
            if value is None:
                continue
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise TypeError(f"{where} must be a number, got {type(value).__name__}")
            if not (float(value) >= 0.0 and np.isfinite(float(value))):
                raise ValueError(f"{where} must be finite and non-negative, got {value!r}")
            if key in _NEWTON_LEGACY_PENALTIES:
                accepted.append(key)
        elif key in _NEWTON_UNSUPPORTED:
            raise TypeError(f"{where} has no counterpart in newton_tendon's SolverVBD; omit it (docs/migration.md)")
        else:
            raise TypeError(f"SolverVBD.__init__() got an unexpected keyword argument {key!r}")
    return accepted


class SolverVBD(SolverBase):
    """Rigid bodies solved by vertex block descent with augmented-Lagrangian hard constraints.

    Each step predicts the inertial poses, then runs ``iterations`` iterations of Newton steps on the
    incremental potential (inertia + joints + contacts + tendon spans + transmission tendons) and
    updates the multipliers of the hard rows after each. Velocities follow from the pose change.

    With ``joint_solver="articulation"`` (the default) each articulation (the bodies linked by
    joints) takes one Newton step as a whole per iteration: every body's 6x6 system without its
    tree's joints (contacts, spans, transmissions, loop joints) is assembled at once, and the step of
    the whole tree is solved with its joint rows (anchors, locks, limits, drives, armature) held
    exactly, by the tree factorization XPBD's articulation pass uses (docs/articulations.md). Bodies
    outside articulations, and all bodies with ``joint_solver="body"``, take their own Newton step,
    one colour at a time (bodies of a colour share no row, so a colour updates in parallel), with
    the joints as augmented-Lagrangian rows.

    Routed cables share the XPBD solver's routing and material kernels; each span is a penalty spring
    of stiffness ``1/max(c, 1e-8 m/N)`` with its damping, so ``tendon_segment_lambda`` stays zero.
    Hard rows use a penalty ``k = rho m_eff / dt^2`` (``rho`` in [``penalty_min``, ``penalty_max``],
    growing by ``penalty_growth`` per unit error each iteration) plus a multiplier that starts each
    step at zero and is reported in the State. Contacts get the same restitution pass as XPBD after
    the iterations.

    References:
        Chen, Macklin, et al. Vertex Block Descent. ACM TOG (SIGGRAPH) 2024.
        Giles, Diaz, Yuksel. Augmented Vertex Block Descent. ACM TOG (SIGGRAPH) 2025.
        Baraff. Linear-time dynamics using Lagrange multipliers. SIGGRAPH 1996.

    Limitations:
        Friction is Coulomb on the tangential drift of the contact points within the step. Bodies
        joined by rows other than an articulation's joints are updated in sequence (Gauss-Seidel over
        colours) or, within articulations, at once with each body's own curvature of the row, so
        momentum crosses those rows exactly only as the iterations converge.

    Example:
        >>> builder.color()  # colours for the bodies outside articulations (and for ``joint_solver="body"``)
        >>> solver = SolverVBD(builder.finalize(), iterations=8)
        >>> solver.step(state_0, state_1, control, contacts, 1.0 / 60.0)
    """

    _tendon_compliance_floor = VBD_COMPLIANCE_FLOOR
    """A span authored with c < 1e-8 m/N (c = 0 included) is solved with 1e-8 m/N, as the spec says."""

    def __init__(
        self,
        model: Model,
        iterations: int = 8,
        penalty_min: float = 1.0,
        penalty_max: float = 1.0e4,
        penalty_growth: float = 1.0e3,
        transmission_penalty: float = 1.0,
        tendon_max_sweeps: int = 256,
        tendon_settle_tol: float = 1.0e-3,
        tendon_activation_tol: float = 2.0e-3,
        tendon_keep_rows: bool = True,
        joint_solver: str = "articulation",
        **newton_options,
    ):
        # newton's rigid_* options (docs/migration.md): checked before anything is built; the accepted
        # deprecated ones warn after every other check, so warnings-as-errors cannot hide a ValueError.
        newton_deprecated = _newton_rigid_options(newton_options)
        super().__init__(model)
        self.iterations = self._check_iterations(iterations)
        if not isinstance(tendon_keep_rows, (bool, np.bool_)):
            raise TypeError(f"SolverVBD: tendon_keep_rows must be a bool, got {type(tendon_keep_rows).__name__}")
        self.tendon_keep_rows = bool(tendon_keep_rows)
        """Keep a tendon's span rows between iterations while relinearizing them could change them
        by rounding alone (``cable.rows_still_hold``; docs/vbd.md, *Kept rows*). Off: every iteration
        relinearizes every tendon. Read by each ``step`` call; a captured graph keeps the value it was
        captured with."""
        params = vbd_kernels.PenaltyParams()
        params.rho_min = _positive("penalty_min", penalty_min)
        params.rho_max = _positive("penalty_max", penalty_max, lo=params.rho_min, closed_lo=True)
        params.growth = _positive("penalty_growth", penalty_growth, closed_lo=True)
        self.transmission_penalty = _positive("transmission_penalty", transmission_penalty)
        """Relative penalty rho_t of hard transmission-tendon and coupling rows (gamma = 0),
        kappa = rho_t / W; soft rows use their own law, kappa = 1/gamma. Larger values tighten a
        one-body row faster but slow rows that couple several bodies (a coupling at rho_t = 10
        settled 30 % off at 8 iterations; at 100 it diverged)."""
        self._params = params
        self._init_tendon_controls(tendon_max_sweeps, tendon_settle_tol, tendon_activation_tol)
        if joint_solver not in JOINT_SOLVERS:
            raise ValueError(f"SolverVBD: joint_solver must be one of {JOINT_SOLVERS}, got {joint_solver!r}")
        self.joint_solver = joint_solver

        m = model
        dev = self.device
        self._trees = TreeScratch(m, dev) if joint_solver == "articulation" and m.joint_count else None
        if self._trees is not None and m.tendon_count:
            # An articulation that holds a routed cable's guide keeps the per-body sweep: the cable's
            # material relaxation predicts each guide body's motion from that body's own Newton step,
            # and a tree step that moved it otherwise let a cable slip over a welded frictional
            # roller (mu = 10) where it holds (tensions 37 N and 5.3 N, still creeping after 2 s;
            # the sweep: 8.7 N and 7.9 N, at rest; docs/limitations.md).
            guide_body = m.tendon_guide_body.numpy()
            held = np.unique(guide_body[guide_body >= 0])
            tree = self._trees.body_tree_host
            drop = np.zeros(self._trees.group_count, dtype=bool)
            drop[tree[held][tree[held] >= 0]] = True
            self._trees.drop_groups(drop)
            if not (self._trees.body_tree_host >= 0).any():
                self._trees = None
        self._colour_groups = self._build_colour_groups()
        self._joint_slot_count = 2 * m.joint_count
        self._joint_in_tree = (
            self._trees.joint_in_tree
            if self._trees is not None
            else wp.zeros(max(m.joint_count, 1), dtype=wp.int32, device=dev)
        )
        # The joints' dual step serves the joints outside articulation trees (loop joints, joints of
        # an articulation that keeps the sweep); a tree's joints get their multipliers from its solve.
        self._joint_duals_needed = m.joint_count > 0
        if self._trees is not None:
            outside = (self._trees.joint_in_tree.numpy()[: m.joint_count] == 0) & (m.joint_type.numpy() != JOINT_FREE)
            self._joint_duals_needed = bool(outside.any())
        self._init_rigid_scratch()
        if self._trees is not None:
            self._init_tree_step()
        self._tendon_slot_end = self._transmission_slot_base

        # Multipliers are State arrays (bound per step); penalties are per-step scratch.
        jd = vbd_kernels.JointDuals()
        jd.rho_lin = wp.zeros(max(m.joint_count, 1), dtype=float, device=dev)
        jd.rho_ang = wp.zeros(max(m.joint_count, 1), dtype=float, device=dev)
        self._joint_duals = jd
        cd = vbd_kernels.ContactDuals()
        cd.rho = wp.zeros(max(m.contact_capacity, 1), dtype=float, device=dev)
        self._contact_duals = cd
        self._unused_contact_lam = wp.zeros(1, dtype=wp.vec4, device=dev)
        # Restitution pass (shared with XPBD): the normal force each contact pushed with.
        self._contact_push = wp.zeros(max(m.contact_capacity, 1), dtype=float, device=dev)
        # Without a contact buffer a one-slot empty one fills the kernel argument (never read).
        self._no_contacts = self._empty_contact_data()

        ns = max(m.tendon_segment_count, 1)
        lin = cable_kernels.TendonLinearization()
        lin.body_delta = self._body_delta
        lin.dl = wp.zeros(ns, dtype=wp.spatial_vector, device=dev)
        lin.dr = wp.zeros(ns, dtype=wp.spatial_vector, device=dev)
        lin.slot_span = wp.full(max(2 * m.tendon_guide_count, 1), -1, dtype=wp.int32, device=dev)
        lin.k = wp.zeros(ns, dtype=float, device=dev)
        lin.jl = wp.zeros(ns, dtype=wp.spatial_vector, device=dev)
        lin.jr = wp.zeros(ns, dtype=wp.spatial_vector, device=dev)
        lin.bl = wp.full(ns, -1, dtype=wp.int32, device=dev)
        lin.br = wp.full(ns, -1, dtype=wp.int32, device=dev)
        lin.c0 = wp.zeros(ns, dtype=float, device=dev)
        lin.dl0 = wp.zeros(ns, dtype=float, device=dev)
        lin.comp = wp.zeros(ns, dtype=float, device=dev)
        lin.damp = wp.zeros(ns, dtype=float, device=dev)
        lin.kg = wp.zeros(ns, dtype=float, device=dev)
        lin.rl = wp.zeros(ns, dtype=wp.vec3, device=dev)
        lin.rr = wp.zeros(ns, dtype=wp.vec3, device=dev)
        lin.chord = wp.zeros(ns, dtype=float, device=dev)
        lin.flex = wp.zeros(ns, dtype=float, device=dev)
        lin.run_head = wp.array(np.arange(ns, dtype=np.int32), dtype=wp.int32, device=dev)
        lin.run_next = wp.full(ns, -1, dtype=wp.int32, device=dev)
        lin.run_flex = wp.zeros(ns, dtype=float, device=dev)
        lin.run_base = wp.zeros(ns, dtype=float, device=dev)
        lin.chain_head = wp.full(ns, -1, dtype=wp.int32, device=dev)
        lin.chain_next = wp.full(ns, -1, dtype=wp.int32, device=dev)
        lin.chain_ratio = wp.ones(ns, dtype=float, device=dev)
        lin.route_tree_bodies = wp.array(self._route_tree_bodies(ns), dtype=float, device=dev)
        self._tendon_lin = lin
        # relax_tendon predicts from the tension the rows exerted in the last sweep (times dt^2),
        # kept privately: the public tendon_segment_lambda (XPBD's multiplier) stays zero.
        self._tendon_work.lam = wp.zeros(ns, dtype=float, device=dev)
        self._reports_xpbd_multiplier = False
        self._default_control = Control(m)
        # Hard transmission rows need last step's impulses to hold a static load in 8 iterations
        # (a coupling from zero settled 30 % off at 8 iterations); they are State history.
        self._warm_transmissions = True
        xs = vbd_kernels.VBDTransmissions()
        xs.tm = self._transmission_model
        xs.scratch = self._transmission_scratch
        xs.work = self._transmission_work
        xs.cm = self._coupling_model
        xs.cw = self._coupling_work
        xs.slot_tendon = m.transmission_slot_tendon
        xs.slot_coupling = m.coupling_slot_coupling
        xs.tendon_slot_end = self._tendon_slot_end
        xs.slot_count = m.transmission_slot_count
        xs.rho = self.transmission_penalty
        self._xs = xs
        _require_contiguous(self._tendon_work)
        self._load_step_modules()
        if newton_deprecated:
            # Opens with newton's own wording, so filters and tests written for newton's warning match.
            warnings.warn(
                f"VBD options {', '.join(newton_deprecated)} are deprecated as of Newton 1.6; "
                f"SolverVBD accepts them with no effect: {_NEWTON_NO_EFFECT}; {_NEWTON_RELATIVE}. Omit them.",
                NewtonDeprecationWarning,
                stacklevel=2,
            )

    def _init_tree_step(self):
        """The articulation pass's kernels and scratch (``joint_solver="articulation"``)."""
        m = self.model
        dev = self.device
        variant = (self._has_universal_joints, self._has_row_armature)
        self._solve_trees = joint_kernels.solve_articulation_kernel(*variant, newton=True)
        moving = (m.body_inv_mass.numpy() > 0.0) & ((m.body_flags.numpy() & BODY_KINEMATIC) == 0)
        tree = self._trees.body_tree_host
        members = np.nonzero(moving & (tree >= 0))[0].astype(np.int32)
        self._tree_bodies = wp.array(members, dtype=wp.int32, device=dev)
        # Trees that share a routed cable, a transmission tendon or a coupling take their steps one
        # colour after the other (``colour_trees``): stepped at once, a slider and the pulley that
        # drives it through a frictional cable, each on a hinge of its own, pumped material from the
        # tight span into the slack one.
        colour = colour_trees(tree, self._trees.group_count, m.body_slot_start.numpy(), self._slot_rows())
        kept = np.zeros(self._trees.group_count, dtype=bool)
        kept[tree[members]] = True
        self._tree_colours = []
        for c in range(int(colour.max()) + 1 if colour.size else 0):
            groups = np.nonzero((colour == c) & kept)[0].astype(np.int32)
            if groups.size == 0:
                continue
            bodies = members[np.isin(tree[members], groups)]
            self._tree_colours.append(
                (wp.array(groups, dtype=wp.int32, device=dev), wp.array(bodies, dtype=wp.int32, device=dev))
            )
        # Joint forces enter each tree's Newton step, not the inertial prediction (``_predict_bodies``).
        self._joint_wrench = wp.zeros(max(2 * m.joint_count, 1), dtype=wp.spatial_vector, device=dev)
        self._body_hessian = wp.zeros(max(m.body_count, 1), dtype=wp.spatial_matrix, device=dev)
        self._body_force = wp.zeros(max(m.body_count, 1), dtype=wp.spatial_vector, device=dev)
        self._tree_drive_lambda = wp.zeros(max(m.joint_dof_count, 1), dtype=float, device=dev)
        self._tree_limit_lambda = wp.zeros(max(m.joint_dof_count, 1), dtype=float, device=dev)
        self._tree_response = wp.zeros(1, dtype=wp.spatial_matrix, device=dev)
        self._body_idle = wp.zeros(max(m.body_count, 1), dtype=wp.int32, device=dev)
        # A tree whose first Newton step left inactive contacts out and crossed them takes the step
        # again from the same start with those contacts in: the start, and the contacts crossed.
        self._saved_q = wp.zeros(max(m.body_count, 1), dtype=wp.transform, device=dev)
        self._saved_delta = wp.zeros(max(m.body_count, 1), dtype=wp.spatial_vector, device=dev)
        self._contact_forced = wp.zeros(max(m.contact_capacity, 1), dtype=wp.int32, device=dev)
        self._no_contact_forced = wp.zeros(max(m.contact_capacity, 1), dtype=wp.int32, device=dev)
        self._group_idle = wp.zeros(max(self._trees.group_count, 1), dtype=wp.int32, device=dev)

    def _slot_rows(self) -> np.ndarray:
        """Per entry of ``Model.body_slot``: an id of the row that slot belongs to when the row can
        join bodies of different trees (a routed cable, a transmission tendon, a coupling), else -1."""
        m = self.model
        slots = m.body_slot.numpy().astype(np.int64)
        rows = np.full(slots.shape, -1, dtype=np.int64)
        guide_base = 2 * m.joint_count
        tx_base = self._transmission_slot_base
        cp_base = tx_base + m.transmission_slot_count
        is_guide = (slots >= guide_base) & (slots < tx_base)
        if is_guide.any():
            guide = (slots[is_guide] - guide_base) // 2
            rows[is_guide] = np.searchsorted(m.tendon_start.numpy(), guide, side="right") - 1
        is_tx = (slots >= tx_base) & (slots < cp_base)
        if is_tx.any():
            owner = m.transmission_slot_tendon.numpy()[slots[is_tx] - tx_base]
            rows[is_tx] = np.where(owner >= 0, m.tendon_count + owner, -1)
        is_cp = (slots >= cp_base) & (slots < self._summed_slot_count)
        if is_cp.any():
            owner = m.coupling_slot_coupling.numpy()[slots[is_cp] - cp_base]
            rows[is_cp] = np.where(owner >= 0, m.tendon_count + m.transmission_count + owner, -1)
        return rows

    def _route_tree_bodies(self, ns: int) -> np.ndarray:
        """Per span, the number of articulation bodies on its tendon's route (``TendonLinearization``)."""
        m = self.model
        out = np.zeros(ns, dtype=np.float32)
        if self._trees is None or m.tendon_count == 0:
            return out
        starts = m.tendon_start.numpy()
        guide_body = m.tendon_guide_body.numpy()
        tree = self._trees.body_tree_host
        for t in range(m.tendon_count):
            bodies = np.unique(guide_body[starts[t] : starts[t + 1]])
            bodies = bodies[bodies >= 0]
            # Span s = g - t for the guides g of tendon t but its last (``cable.span``).
            out[starts[t] - t : starts[t + 1] - t - 1] = float(np.count_nonzero(tree[bodies] >= 0))
        return out

    def _assembly_kernel(self):
        """The tree bodies' assembly compiled for the rows the model has (as ``_sweep_kernel``)."""
        m = self.model
        universal = self._has_universal_joints or self._has_row_armature
        if m.transmission_count or m.coupling_count:
            if universal:
                return vbd_kernels.assemble_tree_bodies_transmissions_universal
            return vbd_kernels.assemble_tree_bodies_transmissions
        if universal:
            return vbd_kernels.assemble_tree_bodies_universal
        return vbd_kernels.assemble_tree_bodies

    def _tree_step(
        self,
        control: Control,
        contact_data: ContactData,
        has_contacts: bool,
        state_in: State,
        state_out: State,
        dt: float,
    ):
        """One Newton step of every articulation with its joints held (``kernels.joints.articulation``,
        the ``newton`` variant): the bodies' systems without their tree's joints, then the tree solve,
        one colour of trees after the other (``colour_trees``)."""
        if has_contacts:
            wp.copy(self._saved_q, state_out.body_q)
            wp.copy(self._saved_delta, self._body_delta)
        for groups, bodies in self._tree_colours:
            self._group_idle.zero_()
            # A tree whose model left out an inactive unilateral row (a contact about to close) takes
            # its Newton step again: with contacts, from the same start with the contacts the first
            # step crossed in its model (an active-set correction; from the first step's result, a
            # chain at dt = 1/60 s landing on the ground fell through and was thrown back in every
            # iteration); without, from the first step's result, as a body of the colour sweep does.
            # Only contacts leave rows out of a tree body's model (a body holding a cable's guide is
            # in no tree, and the tree's joints are in the solve): without them one pass is all.
            for second in (0, 1) if has_contacts else (0,):
                if second:
                    self._restart_crossing_trees(contact_data, bodies, state_in, state_out, dt)
                self._tree_newton_step(
                    control, contact_data, has_contacts, groups, bodies, second, state_in, state_out, dt
                )

    def _restart_crossing_trees(
        self, contact_data: ContactData, bodies: wp.array, state_in: State, state_out: State, dt: float
    ):
        """Mark the contacts the first Newton step of idle trees crossed, and put those trees back."""
        t = self._trees
        wp.launch(
            vbd_kernels.mark_crossed_contacts,
            dim=self.model.contact_capacity,
            inputs=[
                self._bodies,
                self._params,
                dt,
                t.body_tree,
                self._group_idle,
                contact_data,
                state_in.body_q,
                state_out.body_q,
                self._contact_duals,
            ],
            outputs=[self._contact_forced],
            device=self.device,
        )
        wp.launch(
            vbd_kernels.restore_idle_trees,
            dim=bodies.shape[0],
            inputs=[bodies, t.body_tree, self._group_idle],
            outputs=[state_out.body_q, self._body_delta, self._saved_q, self._saved_delta],
            device=self.device,
        )

    def _tree_newton_step(
        self,
        control: Control,
        contact_data: ContactData,
        has_contacts: bool,
        groups: wp.array,
        bodies: wp.array,
        second: int,
        state_in: State,
        state_out: State,
        dt: float,
    ):
        """The assembly of ``bodies`` and the tree solve of ``groups`` (the first or ``second`` pass)."""
        dev = self.device
        t = self._trees
        wp.launch(
            self._assembly_kernel(),
            dim=chunked(bodies.shape[0], self._chunk),
            inputs=[
                self._bodies,
                self._joints,
                bodies,
                self._chunk,
                self._joint_slot_count,
                self._summed_slot_count,
                dt,
                t.joint_in_tree,
                control.joint_target_pos,
                control.joint_target_vel,
                contact_data,
                int(has_contacts),
                state_in.body_q,
                self._joint_q_prev,
                self._joint_qd_prev,
                state_out.body_q,
                self._tendon_lin,
                self._xs,
                self._joint_duals,
                self._contact_duals,
                self._body_delta,
                t.body_tree,
                self._group_idle,
                self._contact_forced if second else self._no_contact_forced,
                second,
            ],
            outputs=[self._body_hessian, self._body_force, self._body_idle],
            device=dev,
        )
        wp.launch(
            self._solve_trees,
            dim=chunked(groups.shape[0], self._chunk),
            inputs=[
                self._bodies,
                self._joints,
                1.0,
                1.0,
                dt,
                t.nodes,
                groups,
                groups.shape[0],
                self._chunk,
                1,  # the joint forces, in every Newton step
                1,  # the other rows' forces (``_body_force``)
                0,  # no articulated response: the contacts are in the bodies' blocks
                control.joint_target_pos,
                control.joint_target_vel,
                self._joint_q_prev,
                self._joint_qd_prev,
                state_out.body_q,
                self._joint_wrench,
                self._body_force,
            ],
            outputs=[
                self._tree_drive_lambda,
                self._body_delta,
                self._tree_response,
                self._tree_limit_lambda,
                self._body_hessian,
                self._body_idle,
                self._group_idle,
                second,
                self._joint_duals.lam,
                self._joint_duals.lam_lim,
            ],
            device=dev,
        )

    # ------------------------------------------------------------------------------------------

    def _build_colour_groups(self) -> list[wp.array]:
        """Moving bodies grouped by colour (one launch per colour), or a clear error if uncoloured."""
        m = self.model
        if m.body_count == 0:
            return []
        colours = m.body_color.numpy()
        moving = (m.body_inv_mass.numpy() > 0.0) & ((m.body_flags.numpy() & BODY_KINEMATIC) == 0)
        if self._trees is not None:
            # Articulation bodies take their Newton steps in the tree pass, not in the colour sweep.
            moving = moving & (self._trees.body_tree_host < 0)
        missing = np.nonzero(moving & (colours < 0))[0]
        if missing.size:
            raise ValueError(
                f"SolverVBD: body {int(missing[0])} has no graph colour; call builder.color() after the last "
                "body, joint, shape and tendon is added and before builder.finalize() (VBD updates bodies of one "
                "colour in parallel)"
            )
        # Two moving bodies on one routed cable may share a run row (``cable.TendonLinearization``),
        # whose tension a body's Newton step evaluates with the other's motion: one colour would race.
        if m.tendon_count:
            starts = m.tendon_start.numpy()
            guide_body = m.tendon_guide_body.numpy()
            for t in range(m.tendon_count):
                on_route = np.unique(guide_body[starts[t] : starts[t + 1]])
                on_route = on_route[on_route >= 0]
                on_route = on_route[moving[on_route]]
                c = colours[on_route]
                if np.unique(c).size < c.size:
                    dup = on_route[c == c[np.argmax(np.bincount(c))]]
                    raise ValueError(
                        f"SolverVBD: bodies {int(dup[0])} and {int(dup[1])} on tendon {t} share colour "
                        f"{int(colours[dup[0]])}, so the colouring does not separate tendon segment endpoints; the "
                        "moving bodies of one routed cable need distinct colours (a colouring from before that "
                        "rule, e.g. in a saved scene, or a hand-set Model.body_color_groups): call builder.color() "
                        "again"
                    )
        groups = []
        for c in range(int(colours.max()) + 1 if colours.size else 0):
            members = np.nonzero(moving & (colours == c))[0].astype(np.int32)
            if members.size:
                groups.append(wp.array(members, dtype=wp.int32, device=self.device))
        return groups

    # ------------------------------------------------------------------------------------------

    def step(self, state_in: State, state_out: State, control: Control | None, contacts: Contacts | None, dt: float):
        """Advance all worlds by ``dt`` [s] from ``state_in`` into ``state_out`` (graph-capturable)."""
        dt = self._check_dt(dt)
        self._check_step_args(state_in, state_out, control, contacts)
        if control is None:
            control = self._default_control
        m = self.model
        if m.body_count == 0 and m.tendon_count == 0:
            return
        dev = self.device
        self._bind_multipliers(state_in, state_out)
        self._predict(state_in, state_out, control, dt)
        self._begin_tendon_step(state_in, state_out, control)
        self._begin_transmissions(state_in, state_out, control, dt)
        self._xs.body_qd = state_out.body_qd  # the predicted velocities during the sweeps
        self._xs.scratch = self._transmission_scratch  # rebound term coordinates
        has_contacts = contacts is not None and m.contact_capacity > 0
        contact_data = contacts.data() if has_contacts else self._no_contacts
        sweep = self._sweep_kernel()
        lin = self._tendon_lin
        for it in range(self.iterations):
            if m.tendon_count:
                wp.launch(
                    cable_kernels.linearize_tendons,
                    dim=chunked(m.tendon_count, self._chunk),
                    inputs=[
                        self._tendons,
                        self._bodies,
                        m.tendon_count,
                        self._chunk,
                        self._params.rho_min,
                        1.0 / TENDON_COMPLIANCE_FLOOR,
                        int(it == 0),
                        int(self.tendon_keep_rows and 0 < it < self.iterations - 1),
                        self.tendon_max_sweeps,
                        self.tendon_settle_tol,
                        dt,
                        state_in.tendon_segment_multiplier,
                        state_out.body_q,
                        state_out.tendon_history,
                        self._tendon_work,
                        self._tendon_geo,
                        lin,
                    ],
                    device=dev,
                )
            for group in self._colour_groups:
                wp.launch(
                    sweep,
                    dim=chunked(group.shape[0], self._chunk),
                    inputs=[
                        self._bodies,
                        self._joints,
                        group,
                        self._chunk,
                        self._joint_slot_count,
                        self._summed_slot_count,
                        dt,
                        control.joint_target_pos,
                        control.joint_target_vel,
                        contact_data,
                        int(has_contacts),
                        state_in.body_q,
                        self._joint_q_prev,
                        self._joint_qd_prev,
                        state_out.body_q,
                        lin,
                        self._xs,
                        self._joint_duals,
                        self._contact_duals,
                        self._body_delta,
                    ],
                    device=dev,
                )
            if self._trees is not None:
                self._tree_step(control, contact_data, has_contacts, state_in, state_out, dt)
            if m.tendon_count and it == self.iterations - 1:
                # The last sweep's dual step (earlier ones are taken by the next linearize_tendons).
                wp.launch(
                    cable_kernels.update_span_duals,
                    dim=chunked(m.tendon_count, self._chunk),
                    inputs=[
                        self._tendons,
                        m.tendon_count,
                        self._chunk,
                        dt,
                        lin,
                        self._tendon_work.lam_hat,
                    ],
                    outputs=[self._tendon_work.lam],
                    device=dev,
                )
            if m.transmission_count:
                wp.launch(
                    vbd_kernels.update_transmission_duals,
                    dim=m.transmission_count,
                    inputs=[dt, self._xs, self._body_delta],
                    device=dev,
                )
            if m.coupling_count:
                wp.launch(
                    vbd_kernels.update_coupling_duals,
                    dim=m.coupling_count,
                    inputs=[dt, self._xs, self._body_delta],
                    device=dev,
                )
            if self._joint_duals_needed:
                wp.launch(
                    vbd_kernels.update_joint_duals,
                    dim=m.joint_count,
                    inputs=[self._bodies, self._joints, self._params, dt, self._joint_in_tree, state_out.body_q],
                    outputs=[self._joint_duals],
                    device=dev,
                )
            if has_contacts:
                wp.launch(
                    vbd_kernels.update_contact_duals,
                    dim=m.contact_capacity,
                    inputs=[self._bodies, self._params, dt, contact_data, state_in.body_q, state_out.body_q],
                    outputs=[self._contact_duals],
                    device=dev,
                )
        wp.launch(
            rigid_kernels.update_body_velocities,
            dim=m.body_count,
            inputs=[self._bodies, dt, state_out.body_qd, self._body_delta],
            device=dev,
        )
        if has_contacts:
            self._restitution(state_in, state_out, contact_data, dt)
        self._tendon_diagnostics(state_out, dt)
        self._report_transmissions(state_out, dt)

    def _sweep_kernel(self):
        """Each model sweeps with the kernel compiled for the rows it has (transmissions; joints or
        contacts; universal joints)."""
        m = self.model
        # Universal joints or row armature: the sweep variant that compiles their rows.
        universal = self._has_universal_joints or self._has_row_armature
        if m.transmission_count or m.coupling_count:
            if universal:
                return vbd_kernels.solve_body_colour_transmissions_universal
            return vbd_kernels.solve_body_colour_transmissions
        if m.joint_count == 0 and m.contact_capacity == 0:
            return vbd_kernels.solve_body_colour_tendons
        if universal:
            return vbd_kernels.solve_body_colour_universal
        return vbd_kernels.solve_body_colour

    def _solver_step_kernels(self) -> tuple[list, list]:
        m = self.model
        tendon_pass = [cable_kernels.linearize_tendons] if m.tendon_count else []
        own = [vbd_kernels.update_transmission_duals] if m.transmission_count else []
        if self._colour_groups:  # no moving body: no sweep
            own.append(self._sweep_kernel())
        if self._trees is not None:
            own += [self._assembly_kernel(), self._solve_trees]
            if m.contact_capacity:
                own += [vbd_kernels.mark_crossed_contacts, vbd_kernels.restore_idle_trees]
        if self._joint_duals_needed or m.contact_capacity:
            own.append(vbd_kernels.update_joint_duals if self._joint_duals_needed else vbd_kernels.update_contact_duals)
        return tendon_pass, own

    def _restitution(self, state_in: State, state_out: State, contact_data: ContactData, dt: float):
        """Velocity pass of the contacts that pushed this step (the same pass as XPBD's)."""
        wp.launch(
            vbd_kernels.contact_push,
            dim=self.model.contact_capacity,
            inputs=[contact_data.valid, self._contact_duals],
            outputs=[self._contact_push],
            device=self.device,
        )
        self._restitution_pass(state_in, state_out, contact_data, self._contact_push, dt)

    def notify_model_changed(self, flags: int):
        """As ``SolverBase.notify_model_changed``; body edits also rebuild the colour groups (a body
        made dynamic joins its colour's launch, and must have a colour)."""
        super().notify_model_changed(flags)
        if ModelFlags(flags) & ModelFlags.BODY_PROPERTIES:
            self._colour_groups = self._build_colour_groups()

    def _empty_contact_data(self) -> ContactData:
        c = ContactData()
        dev = self.device
        c.valid = wp.zeros(1, dtype=wp.int32, device=dev)
        c.body_a = wp.full(1, -1, dtype=wp.int32, device=dev)
        c.body_b = wp.full(1, -1, dtype=wp.int32, device=dev)
        c.point_a = wp.zeros(1, dtype=wp.vec3, device=dev)
        c.point_b = wp.zeros(1, dtype=wp.vec3, device=dev)
        c.normal = wp.zeros(1, dtype=wp.vec3, device=dev)
        c.mu = wp.zeros(1, dtype=float, device=dev)
        c.restitution = wp.zeros(1, dtype=float, device=dev)
        c.offset_a = wp.zeros(1, dtype=wp.vec3, device=dev)
        c.offset_b = wp.zeros(1, dtype=wp.vec3, device=dev)
        return c

    def _bind_multipliers(self, state_in: State, state_out: State):
        """Start the step's multipliers at zero (in the output state, where they are reported) and
        the penalties at rho_min.

        Multipliers are not warm-started from the previous step: a multiplier that stopped an
        impact (a hinge slamming into its limit) is far larger than what the next step needs, and
        with the penalty restarting small it unwinds only by k C per iteration, so it keeps pushing
        after the row separates. Measured: a 3-link chain with +-0.3 rad hinge limits at 1/120 s
        gained energy and diverged at step 62 with warm starts, and stays bounded without them.
        """
        m = self.model
        rho = self._params.rho_min
        for name in ("joint_multiplier", "joint_limit_multiplier", "contact_multiplier"):
            if getattr(state_out, name).shape[0]:
                getattr(state_out, name).zero_()
        # Span tensions are warm-started (a stiff cable at a large step needs them): linearize_tendons'
        # first pass copies them from state_in, and drops the tension of a span slack at the step start.
        self._joint_duals.lam = state_out.joint_multiplier
        self._joint_duals.lam_lim = state_out.joint_limit_multiplier
        if m.joint_count:
            self._joint_duals.rho_lin.fill_(rho)
            self._joint_duals.rho_ang.fill_(rho)
        self._contact_duals.lam = state_out.contact_multiplier if m.contact_capacity else self._unused_contact_lam
        if m.contact_capacity:
            self._contact_duals.rho.fill_(rho)
        self._tendon_lin.lam = state_out.tendon_segment_multiplier

    def _predict(self, state_in: State, state_out: State, control: Control, dt: float):
        if self._trees is not None:
            self._tree_limit_lambda.zero_()
        self._predict_bodies(state_in, state_out, control, dt)
