"""Transmission-tendon launchers of the solver base: workspace, step start, solve, report, geometry.

``TransmissionLaunchers`` is a mixin of :class:`~newton_tendon.solvers.SolverBase`: it allocates the
transmission and coupling workspaces and the per-transmission diagnostics (``transmission_length``,
``transmission_tension``, ``coupling_force``, ...), and launches the kernels of
``newton_tendon.kernels.transmission`` at the step start, in each solver iteration and at the
step end, plus ``update_geometry``. It also validates in-place transmission edits for
``notify_model_changed``.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from newton_tendon.kernels import transmission as tx

from .._transmission_model import coupling_model_struct, transmission_model_struct, transmission_scratch
from ..layout import check_state
from ..state import State
from ._chunking import chunked

_TRANSMISSION_PARAMS = (
    "stiffness",
    "damping",
    "spring_lower",
    "spring_upper",
    "activation_time",
    "actuation_lower",
    "actuation_upper",
    "lower_limit",
    "upper_limit",
    "limit_margin",
    "position_correction",
    "limit_compliance",
    "friction_loss",
    "friction_compliance",
    "armature",
)
_TRANSMISSION_REPORT = (
    "length",
    "velocity",
    "force",
    "tension",
    "actuation_force",
    "limit_force",
    "friction_force",
    "coupling_force",
    "potential_energy",
    "kinetic_energy",
)


class TransmissionLaunchers:
    """Transmission-tendon phases shared by both solvers (a mixin of ``SolverBase``; uses its ``model``,
    ``device``, ``_bodies`` and ``_transmission_slot_base``)."""

    def _init_transmissions(self):
        m = self.model
        dev = self.device
        n = m.transmission_count
        self._transmission_model = transmission_model_struct(m)
        self._transmission_scratch = transmission_scratch(m)
        self._transmission_params = self._transmission_param_struct()
        work = tx.TransmissionWork()
        for name in ("l_n", "ldot_n", "bias", "w", "rate", "activation"):
            setattr(work, name, wp.zeros(n, dtype=float, device=dev))
        for name in ("row_b", "row_gamma", "row_lo", "row_hi", "mu"):
            setattr(work, name, wp.zeros(n, dtype=tx.vec6, device=dev))
        work.enabled = wp.zeros(n, dtype=wp.int32, device=dev)
        work.body_split = wp.zeros(0, dtype=float, device=dev)
        work.w_split = wp.zeros(0, dtype=float, device=dev)
        work.slot_w = wp.zeros(0, dtype=float, device=dev)
        self._transmission_work = work
        rep = tx.TransmissionReport()
        for name in _TRANSMISSION_REPORT:
            arr = wp.zeros(n, dtype=float, device=dev)
            setattr(rep, name, arr)
            setattr(self, "transmission_" + name, arr)
        self._transmission_report = rep
        nc = m.coupling_count
        self._coupling_model = coupling_model_struct(m)
        cw = tx.CouplingWork()
        cw.c_n = wp.zeros(nc, dtype=float, device=dev)
        cw.slope = wp.zeros(nc, dtype=float, device=dev)
        cw.w = wp.zeros(nc, dtype=float, device=dev)
        cw.p = wp.zeros(nc, dtype=float, device=dev)
        cw.active = wp.zeros(nc, dtype=wp.int32, device=dev)
        cw.w_split = wp.zeros(0, dtype=float, device=dev)
        cw.slot_w = wp.zeros(0, dtype=float, device=dev)
        self._coupling_work = cw
        self.coupling_force = wp.zeros(nc, dtype=float, device=dev)
        """Coupling force lambda [N] after the last step (the first tendon's share; the second
        receives -f'(x) lambda)."""
        self._needs_curvature = self._any_spatial_armature()
        """Whether any spatial tendon has armature (its curvature bias needs the shifted poses)."""
        self._warm_transmissions = False
        """Start each step's transmission rows from the last step's impulses (VBD)."""
        self._term_q_probe = wp.zeros(m.transmission_term_count, dtype=float, device=dev)
        self._q_plus = wp.zeros(m.body_count if n else 0, dtype=wp.transform, device=dev)
        self._q_minus = wp.zeros(m.body_count if n else 0, dtype=wp.transform, device=dev)

    def _init_transmission_split(self):
        """Mass splitting of the transmission rows (SolverXPBD's Jacobi pass, see
        ``newton_tendon.kernels.transmission``): allocated only where some body has slots of two owners
        (tendons or couplings), so models without shared bodies run exactly as before."""
        m = self.model
        if not m.transmission_count or m.body_count == 0:
            return
        base = self._transmission_slot_base
        nt = m.transmission_slot_count
        slot = m.body_slot.numpy().astype(np.int64) - base
        start = m.body_slot_start.numpy().astype(np.int64)
        tendon = m.transmission_slot_tendon.numpy().astype(np.int64)
        coupling = m.coupling_slot_coupling.numpy().astype(np.int64)
        owner = np.full(slot.shape, -1, dtype=np.int64)
        of_tendon = (slot >= 0) & (slot < nt)
        owner[of_tendon] = tendon[slot[of_tendon]]
        of_coupling = (slot >= nt) & (slot < nt + coupling.size)
        owner[of_coupling] = m.transmission_count + coupling[slot[of_coupling] - nt]
        body = np.repeat(np.arange(m.body_count, dtype=np.int64), np.diff(start))
        pairs = {(int(b), int(o)) for b, o in zip(body[owner >= 0], owner[owner >= 0], strict=True)}
        owners_per_body = np.bincount([b for b, _ in pairs], minlength=m.body_count)
        if not pairs or owners_per_body.max() < 2:
            return
        dev = self.device
        self._transmission_work.body_split = wp.zeros(m.body_count, dtype=float, device=dev)
        self._transmission_work.w_split = wp.zeros(m.transmission_count, dtype=float, device=dev)
        self._transmission_work.slot_w = wp.zeros(m.transmission_slot_count, dtype=float, device=dev)
        self._coupling_work.w_split = wp.zeros(m.coupling_count, dtype=float, device=dev)
        self._coupling_work.slot_w = wp.zeros(m.coupling_slot_count, dtype=float, device=dev)

    def _any_spatial_armature(self) -> bool:
        m = self.model
        if not m.transmission_count:
            return False
        spatial = m.transmission_type.numpy() == 0
        return bool(np.any(m.transmission_armature.numpy()[spatial] > 0.0))

    def _transmission_param_struct(self) -> tx.TransmissionParams:
        m = self.model
        p = tx.TransmissionParams()
        for name in _TRANSMISSION_PARAMS:
            setattr(p, name, getattr(m, "transmission_" + name))
        return p

    @staticmethod
    def _transmission_control(control) -> tx.TransmissionControl:
        c = tx.TransmissionControl()
        for name in ("drive_force", "target_length", "target_velocity", "position_gain", "velocity_gain", "enabled"):
            setattr(c, name, getattr(control, "transmission_" + name))
        return c

    def _begin_transmissions(self, state_in: State, state_out: State, control, dt: float):
        m = self.model
        if not m.transmission_count:
            return
        dev = self.device
        if self._needs_curvature:
            wp.launch(
                tx.shift_poses,
                dim=m.body_count,
                inputs=[m.body_com, tx.CURVATURE_STEP, state_in.body_q, state_in.body_qd],
                outputs=[self._q_plus, self._q_minus],
                device=dev,
            )
        wp.copy(state_out.transmission_reference_length, state_in.transmission_reference_length)
        self._bind_term_coordinates(state_in.transmission_term_coordinate, state_out.transmission_term_coordinate)
        wp.launch(
            tx.begin_transmissions,
            dim=m.transmission_count,
            inputs=[
                self._transmission_model,
                self._bodies,
                self._transmission_params,
                dt,
                int(self._warm_transmissions),
                self._transmission_control(control),
                state_in.body_q,
                state_in.body_qd,
                state_in.transmission_activation,
                state_in.transmission_row_impulse,
            ],
            outputs=[
                state_out.transmission_activation,
                self._q_plus,
                self._q_minus,
                self._transmission_scratch,
                self._transmission_work,
            ],
            device=dev,
        )
        if m.coupling_count:
            wp.launch(
                tx.begin_couplings,
                dim=m.coupling_count,
                inputs=[
                    self._transmission_model,
                    self._coupling_model,
                    self._bodies,
                    int(self._warm_transmissions),
                    control.coupling_enabled,
                    state_in.transmission_reference_length,
                    state_in.body_q,
                    state_in.coupling_impulse,
                    self._transmission_scratch,
                    self._transmission_work,
                ],
                outputs=[self._coupling_work],
                device=dev,
            )
        if self._transmission_work.body_split.shape[0]:
            self._split_transmission_masses()

    def _split_transmission_masses(self):
        """Row owners per body, then each tendon's and coupling's split W from its step-start terms."""
        m = self.model
        dev = self.device
        wp.launch(
            tx.count_row_owners,
            dim=m.body_count,
            inputs=[
                self._bodies,
                self._transmission_slot_base,
                m.transmission_slot_tendon,
                m.coupling_slot_coupling,
                self._transmission_work,
                self._coupling_work,
            ],
            device=dev,
        )
        wp.launch(
            tx.split_transmission_masses,
            dim=m.transmission_count,
            inputs=[self._transmission_model, self._bodies, self._transmission_scratch, self._transmission_work],
            device=dev,
        )
        if m.coupling_count:
            wp.launch(
                tx.split_coupling_masses,
                dim=m.coupling_count,
                inputs=[
                    self._transmission_model,
                    self._coupling_model,
                    self._bodies,
                    self._transmission_scratch,
                    self._transmission_work,
                ],
                outputs=[self._coupling_work],
                device=dev,
            )

    def _bind_term_coordinates(self, ref: wp.array, out: wp.array):
        """Fixed-tendon revolute terms unwrap relative to ``ref`` and write the result to ``out``."""
        self._transmission_scratch.term_ref = ref
        self._transmission_scratch.term_q = out

    def _solve_transmissions(self, control, slot_base: int, dt: float, body_q, body_qd, body_delta, slot_delta):
        m = self.model
        if not m.transmission_count:
            return
        wp.launch(
            tx.solve_transmissions,
            dim=chunked(m.transmission_count, self._chunk),
            inputs=[
                self._transmission_model,
                self._bodies,
                m.transmission_count,
                self._chunk,
                slot_base,
                dt,
                body_q,
                body_qd,
                body_delta,
                self._transmission_scratch,
                self._transmission_work,
            ],
            outputs=[slot_delta],
            device=self.device,
        )
        if m.coupling_count:
            wp.launch(
                tx.solve_couplings,
                dim=m.coupling_count,
                inputs=[
                    self._transmission_model,
                    self._coupling_model,
                    self._bodies,
                    slot_base + m.transmission_slot_count,
                    dt,
                    body_q,
                    self._transmission_scratch,
                    self._transmission_work,
                    self._coupling_work,
                ],
                outputs=[slot_delta],
                device=self.device,
            )

    def _report_transmissions(self, state: State, dt: float):
        m = self.model
        if not m.transmission_count:
            return
        wp.launch(
            tx.report_transmissions,
            dim=m.transmission_count,
            inputs=[
                self._transmission_model,
                self._transmission_params,
                dt,
                state.body_q,
                state.body_qd,
            ],
            outputs=[
                state.transmission_row_impulse,
                self._transmission_scratch,
                self._transmission_work,
                self._transmission_report,
            ],
            device=self.device,
        )
        if m.coupling_count:
            wp.launch(
                tx.report_coupling_forces,
                dim=m.transmission_count,
                inputs=[
                    self._coupling_model,
                    m.transmission_coupling_start,
                    m.transmission_coupling,
                    dt,
                    self._coupling_work,
                    self._transmission_work,
                ],
                outputs=[self._transmission_report],
                device=self.device,
            )
            wp.launch(
                tx.coupling_lambda,
                dim=m.coupling_count,
                inputs=[dt],
                outputs=[state.coupling_impulse, self._coupling_work, self.coupling_force],
                device=self.device,
            )

    def update_geometry(self, state: State):
        """Refresh ``transmission_length``, ``transmission_velocity``, the energies
        (``transmission_potential_energy``, ``transmission_kinetic_energy``) and the transmission
        gradients (``transmission_jacobian``, ``transmission_jacobian_body`` per slot) at ``state``
        without advancing the simulation or changing the last step's forces."""
        m = self.model
        check_state(f"{type(self).__name__}.update_geometry", "state", state, m)
        if not m.transmission_count:
            return
        self._bind_term_coordinates(state.transmission_term_coordinate, self._term_q_probe)
        wp.launch(
            tx.update_transmission_geometry,
            dim=m.transmission_count,
            inputs=[
                self._transmission_model,
                self._transmission_params,
                state.body_q,
                state.body_qd,
                self._transmission_scratch,
            ],
            outputs=[self._transmission_report],
            device=self.device,
        )

    @property
    def transmission_jacobian(self) -> wp.array:
        """Per transmission slot: dl/d(COM translation, rotation) of its body [m/m, m/rad] at the last
        geometry evaluation (step or ``update_geometry``), shape [transmission_slot_count]."""
        return self._transmission_scratch.jac

    @property
    def transmission_jacobian_body(self) -> wp.array:
        """Body of each transmission slot (-1: the world), shape [transmission_slot_count], int32."""
        return self._transmission_scratch.body

    def _check_transmission_properties(self):
        """Validate in-place transmission edits (the kernels read the model arrays directly); NaN
        spring endpoints are replaced by the tendon's reference length. Returns the function that
        writes the replacements."""
        m = self.model
        name = f"{type(self).__name__}.notify_model_changed"
        # Spec: NaN spring endpoints restore the interval to the reference captured at creation.
        ref = m.transmission_reference_length.numpy()
        values = {key: getattr(m, "transmission_" + key).numpy() for key in _TRANSMISSION_PARAMS}
        restored = {}
        for key in ("spring_lower", "spring_upper"):
            v = values[key]
            if np.any(np.isnan(v)):
                values[key] = restored[key] = np.where(np.isnan(v), ref, v).astype(np.float32)
        for key in _TRANSMISSION_PARAMS:
            v = values[key]
            bad = np.isnan(v)
            if key in ("lower_limit", "actuation_lower"):
                bad |= v == np.inf
            elif key in ("upper_limit", "actuation_upper"):
                bad |= v == -np.inf
            else:
                bad |= ~np.isfinite(v)
            if key not in (
                "spring_lower",
                "spring_upper",
                "lower_limit",
                "upper_limit",
                "actuation_lower",
                "actuation_upper",
            ):
                bad |= v < 0.0
            if np.any(bad):
                i = int(np.nonzero(bad)[0][0])
                raise ValueError(f"{name}: model.transmission_{key}[{i}] = {v[i]} is not allowed")
        for lo, hi in (
            ("spring_lower", "spring_upper"),
            ("lower_limit", "upper_limit"),
            ("actuation_lower", "actuation_upper"),
        ):
            a = values[lo]
            b = values[hi]
            if np.any(a > b):
                i = int(np.nonzero(a > b)[0][0])
                raise ValueError(
                    f"{name}: model.transmission_{lo}[{i}] = {a[i]} exceeds transmission_{hi}[{i}] = {b[i]}"
                )

        def write():
            for key, v in restored.items():
                getattr(m, "transmission_" + key).assign(v)
            self._needs_curvature = self._any_spatial_armature()

        return write
