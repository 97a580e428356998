"""SolverVBD: vertex block descent for rigid bodies, joints, contacts and routed cables."""

from __future__ import annotations

import warnings

import numpy as np
import warp as wp

from newton_tendon.kernels import cable as cable_kernels
from newton_tendon.kernels import rigid as rigid_kernels
from newton_tendon.kernels import vbd as vbd_kernels
from newton_tendon.kernels.cable.constants import VBD_COMPLIANCE_FLOOR
from newton_tendon.kernels.contacts import ContactData
from newton_tendon.kernels.types import BODY_KINEMATIC

from ..collision import Contacts
from ..exceptions import NewtonDeprecationWarning
from ..model import Model, ModelFlags
from ..state import Control, State
from .base import CPU_CHUNK, SolverBase, chunked  # noqa: F401 (CPU_CHUNK: re-exported)

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

        Each step predicts the inertial poses, then runs ``iterations`` sweeps; a sweep visits the body
        colours in order and takes one 6x6 Newton step per body on the incremental potential (inertia +
        joints + contacts + tendon spans), all bodies of a colour in parallel, then updates the
        multipliers of the hard rows. Velocities follow from the pose change. Routed cables share the
        XPBD solver's routing and material kernels; each span is a penalty spring of stiffness
        ``1/max(c, 1e-8 m/N)`` with its damping, so ``tendon_segment_lambda`` stays zero.

        Hard rows use a penalty ``k = rho m_eff / dt^2`` (``rho`` in [``penalty_min``, ``penalty_max``],
        growing by ``penalty_growth`` per unit error each iteration) plus a multiplier that starts each step
    at zero and is reported in the State.

        References:
            Chen, Macklin, et al. Vertex Block Descent. ACM TOG (SIGGRAPH) 2024.
            Giles, Diaz, Yuksel. Augmented Vertex Block Descent. ACM TOG (SIGGRAPH) 2025.

        Contacts get the same restitution pass as XPBD after the iterations.

        Limitations:
            Friction is Coulomb on the tangential drift of the contact points within the step. Bodies
            joined by rows are updated in sequence (Gauss-Seidel over colours), so momentum is exchanged
            exactly only as the iterations converge.

        Example:
            >>> builder.color()
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

        m = model
        dev = self.device
        self._colour_groups = self._build_colour_groups()
        self._joint_slot_count = 2 * m.joint_count
        self._init_rigid_scratch()
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

    # ------------------------------------------------------------------------------------------

    def _build_colour_groups(self) -> list[wp.array]:
        """Moving bodies grouped by colour (one launch per colour), or a clear error if uncoloured."""
        m = self.model
        if m.body_count == 0:
            return []
        colours = m.body_color.numpy()
        moving = (m.body_inv_mass.numpy() > 0.0) & ((m.body_flags.numpy() & BODY_KINEMATIC) == 0)
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
            if m.joint_count:
                wp.launch(
                    vbd_kernels.update_joint_duals,
                    dim=m.joint_count,
                    inputs=[self._bodies, self._joints, self._params, dt, state_out.body_q],
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
        if m.joint_count or m.contact_capacity:
            own.append(vbd_kernels.update_joint_duals if m.joint_count else vbd_kernels.update_contact_duals)
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
        self._predict_bodies(state_in, state_out, control, dt)
