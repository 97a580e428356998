"""Routed-tendon launchers of the solver base: controls, workspace, step start, diagnostics.

``RoutedTendonLaunchers`` is a mixin of :class:`~newton_tendon.solvers.SolverBase`: it allocates the
tendon diagnostics every tendon-capable solver reports (``tendon_length``,
``tendon_segment_material_tension``, ``tendon_segment_rest_length``, ``tendon_segment_lambda``, ...;
newton's names and meanings, docs/migration.md) and the scratch the shared cable kernels use, fills
the diagnostics at construction and on ``reset`` (as newton does), launches the step start
(``begin_step``) and the end-of-step diagnostics of ``newton_tendon.kernels.cable``, and validates
in-place tendon edits for ``notify_model_changed``.
The solver's own tendon pass stays in the solver (``SolverXPBD``, ``SolverVBD``).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from newton_tendon.kernels import cable as cable_kernels
from newton_tendon.kernels.cable import TendonHistory

from ..finalize import update_tendon_baseline
from ..state import State
from ._chunking import chunked

_TENDON_GEOMETRY = (
    "tendon_start",
    "tendon_guide_body",
    "tendon_guide_type",
    "tendon_guide_flags",
    "tendon_guide_offset",
    "tendon_guide_axis",
    "tendon_guide_radius",
    "tendon_guide_orientation",
)
"""Model arrays of the route topology and guide geometry, which cannot change once a solver is built."""


def authored_stiffness(compliance: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """1/c [N/m] in float64 of each float32 compliance [m/N] as a user wrote it: the shortest decimal
    that rounds to the float32 value (``1e-05`` for float32(1e-5)), so that a tension reported as
    (l - L)/c is the one the authored c gives; 0 where c = 0 (inextensible). A compliance below
    ``floor`` (the solver's ``TendonModel.compliance_floor``) is taken as the floor. Unique values
    are converted once (a replicated scene has a few)."""
    c = np.maximum(np.asarray(compliance, dtype=np.float32), np.float32(floor))
    if c.size == 0:
        return np.zeros(0, dtype=np.float64)
    values, inverse = np.unique(c, return_inverse=True)
    decimal = np.array([float(str(v)) for v in values], dtype=np.float64)
    k = np.zeros_like(decimal)
    k[decimal > 0.0] = 1.0 / decimal[decimal > 0.0]
    return k[inverse.reshape(-1)]


class RoutedTendonLaunchers:
    """Routed-tendon phases shared by every tendon-capable solver (a mixin of ``SolverBase``; uses its
    ``model``, ``device``, ``_chunk``, ``_all_worlds`` and ``_tendons``)."""

    _tendon_compliance_floor = 0.0
    """Smallest span compliance [m/N] this solver uses (``TendonModel.compliance_floor``)."""

    def _tendon_properties_changed(self):
        """Hook run when ``notify_model_changed(TENDON_PROPERTIES)`` writes (SolverXPBD: row relaxations)."""

    _reports_xpbd_multiplier = True
    """Whether ``tendon_segment_lambda`` reports the tendon pass's multipliers (SolverVBD: False)."""

    def _init_tendon_controls(self, max_sweeps, settle_tol, activation_tol):
        name = type(self).__name__
        if isinstance(max_sweeps, bool) or not isinstance(max_sweeps, (int, np.integer)) or not 1 <= max_sweeps <= 256:
            raise ValueError(f"{name}: tendon_max_sweeps must be an int in 1..256, got {max_sweeps!r}")
        settle_tol = float(settle_tol)
        if not np.isfinite(settle_tol) or settle_tol < 0.0:
            raise ValueError(f"{name}: tendon_settle_tol must be finite and >= 0, got {settle_tol!r}")
        activation_tol = float(activation_tol)
        if not (0.0 <= activation_tol < 1.0):
            raise ValueError(f"{name}: tendon_activation_tol must be in [0, 1), got {activation_tol!r}")
        self._tendons.compliance_floor = self._tendon_compliance_floor
        self.tendon_max_sweeps = int(max_sweeps)
        """Maximum capstan material-relaxation sweeps per solver iteration (1..256)."""
        self.tendon_settle_tol = settle_tol
        """Relative tension change below which the sweeps stop early (0: every sweep runs, as in newton)."""
        self.tendon_activation_tol = activation_tol
        """Radius-relative activation gap of dynamic rollers (hysteresis against chattering)."""

        m = self.model
        dev = self.device
        ns, ng, nt = m.tendon_segment_count, m.tendon_guide_count, m.tendon_count
        self._tendon_lambda = wp.zeros(ns, dtype=float, device=dev)
        """XPBD multiplier of each span's stretch row, T dt^2 [N s^2], as the passes accumulate it
        (``TendonWork.lam``; SolverVBD gives its rows' tension its own array, so this stays 0 there)."""
        self._tendon_lambda_prev = wp.zeros(ns, dtype=float, device=dev)
        """``_tendon_lambda`` before the step's last iteration (for ``tendon_segment_delta_lambda``)."""
        self.tendon_segment_lambda = wp.zeros(ns, dtype=float, device=dev)
        """XPBD multiplier of each span's stretch row in newton's convention, -T dt [N s] (T the tension
        the row applies, so tension = -lambda/dt), after the last step; 0 for inactive spans, at
        construction and after a reset, and always on SolverVBD (its rows have no XPBD multiplier),
        shape [tendon_segment_count], float32."""
        self.tendon_segment_delta_lambda = wp.zeros(ns, dtype=float, device=dev)
        """Change of ``tendon_segment_lambda`` over the step's last XPBD iteration [N s] (newton's
        convention: negative while the tension grows), the last iteration's correction of each stretch
        row; 0 where ``tendon_segment_lambda`` is 0 by rule (SolverVBD, inactive spans, construction,
        reset), shape [tendon_segment_count], float32."""
        self.tendon_segment_material_tension = wp.zeros(ns, dtype=float, device=dev)
        """Tension per span [N]: constitutive max((l - L)/c, 0) (a slack span carries none, as newton
        reports it), or the tension the row applied for spans with c <= 1e-6 m/N (their stretch is a
        few float32 ulps)."""
        self.tendon_segment_damping_tension = wp.zeros(ns, dtype=float, device=dev)
        """Signed damping tension per span [N]: d * dl/dt."""
        self.tendon_segment_rest_length = (
            wp.clone(m.tendon_segment_initial_rest_length, device=dev) if ns else wp.zeros(0, dtype=float, device=dev)
        )
        """Material rest length of each span slot [m] after the last step, as the next step starts from
        it: the stepped ``State.tendon_segment_rest_length`` with the cable each span took from or gave
        to its rollers during the step (``tendon_segment_rolling_delta_l/_r``) folded in, as newton
        reports it (the State folds it at the next step start; ``history.fold_span``). At construction
        the history a fresh State seeds at the model's pose, after ``reset`` the reset State's. Shape
        [tendon_segment_count], float32. Read-only diagnostic; edit the State's array to change the
        material."""
        starts = m.tendon_start.numpy() if nt else np.zeros(1, dtype=np.int32)
        authored_l = [g for t in range(nt) for g in range(int(starts[t]), int(starts[t + 1]) - 1)]
        self.tendon_segment_guide_l = wp.array(np.asarray(authored_l, dtype=np.int32), dtype=wp.int32, device=dev)
        """Authored left guide of each segment slot (the slot's span as built, whatever the route does;
        its right guide is this + 1), shape [tendon_segment_count], int32. Fixed at construction; the
        current route's ends are ``tendon_segment_active_guide_l/_r``."""
        self.tendon_segment_active = wp.zeros(ns, dtype=wp.int32, device=dev)
        """1 where the segment slot holds a span of the current route."""
        self.tendon_segment_active_compliance = wp.zeros(ns, dtype=float, device=dev)
        """Compliance used for each active span [m/N] (a bypass span is the two authored spans in series)."""
        self.tendon_segment_active_damping = wp.zeros(ns, dtype=float, device=dev)
        """Damping used for each active span [N s/m] (a bypass span is the two authored dampers in series,
        ``d1 d2 / (d1 + d2)``, 0 if either is 0; newton adds them); 0 for inactive slots, shape
        [tendon_segment_count], float32."""
        self.tendon_segment_attachment_l_local = wp.zeros(ns, dtype=wp.vec3, device=dev)
        """Left material point of each active span in its left guide body's frame [m] (world frame for a
        world guide) after the last step, as the next step starts from it: at a point guide the guide
        point, at a roller the final tangent point (the State keeps the tangent point accepted at the
        step start until the next step folds the arc between them; ``tendon_segment_rolling_delta_l``).
        It pairs with ``tendon_segment_rest_length``: the free-span rest lengths plus the rollers' arcs
        between these material points is the cable's material. At construction and after a reset the
        seeded history's points; 0 for inactive slots. Shape [tendon_segment_count], wp.vec3.
        Read-only diagnostic."""
        self.tendon_segment_attachment_r_local = wp.zeros(ns, dtype=wp.vec3, device=dev)
        """Right material point of each active span in its right guide body's frame [m]; see
        ``tendon_segment_attachment_l_local``, shape [tendon_segment_count], wp.vec3."""
        self.tendon_segment_rolling_delta_l = wp.zeros(ns, dtype=float, device=dev)
        """Cable [m] each span took from (> 0) or gave to (< 0) the roller at its left end over the last
        step: the arc, on the roller's body, from the span's left material point to its final tangent
        point (rolling without slip, and the tangent point moving as the route turns). It is the rest
        length the next step start adds to the span's State material (``tendon_segment_rest_length``
        reports it added already, as newton does). 0 at point guides, for inactive slots, at construction and
        after a reset, and below the fold's float32 rounding bound (``cable.FOLD_ROUNDING``), shape
        [tendon_segment_count], float32."""
        self.tendon_segment_rolling_delta_r = wp.zeros(ns, dtype=float, device=dev)
        """Cable [m] each span took from (> 0) or gave to (< 0) the roller at its right end over the last
        step; see ``tendon_segment_rolling_delta_l``, shape [tendon_segment_count], float32."""
        self.tendon_cone_sweep_count = wp.zeros(nt, dtype=wp.int32, device=dev)
        """Capstan sweeps (Gauss-Seidel passes over a tendon's frictional guides, at most
        ``tendon_max_sweeps``) that the step's last material relaxation ran per tendon. 0 when the
        tendon has no guide with friction: spans joined by frictionless guides are solved exactly in one
        pass without sweeps (newton sweeps those too). ``tendon_settle_tol`` = 0 runs all
        ``tendon_max_sweeps`` on every tendon, frictional or not (newton's meaning: no early stop; on a
        frictionless route those sweeps find nothing to move). 0 at construction and after a reset,
        shape [tendon_count], int32."""
        self.tendon_segment_active_guide_l = wp.zeros(ns, dtype=wp.int32, device=dev)
        """Left end guide of each active span (-1 if inactive)."""
        self.tendon_segment_active_guide_r = wp.zeros(ns, dtype=wp.int32, device=dev)
        """Right end guide of each active span (-1 if inactive)."""
        self.tendon_segment_attachment_l = wp.zeros(ns, dtype=wp.vec3, device=dev)
        """World left attachment point of each active span [m] (for drawing)."""
        self.tendon_segment_attachment_r = wp.zeros(ns, dtype=wp.vec3, device=dev)
        """World right attachment point of each active span [m] (for drawing)."""
        self.tendon_guide_active = wp.zeros(ng, dtype=wp.int32, device=dev)
        """1 where the guide is part of the route after the last step."""
        self.tendon_guide_wrap = wp.zeros(ng, dtype=float, device=dev)
        """Capstan angle per guide [rad]: a roller's wrap or a pinhole's bend angle."""
        self.tendon_guide_wrap_error = wp.zeros(ng, dtype=wp.int32, device=dev)
        """1 where a fixed roller's accepted wrap left [0, pi] at the last step start (not repaired)."""
        self.tendon_total_cable = wp.zeros(nt, dtype=float, device=dev)
        """Material per tendon [m]: sum of span rest lengths plus the cable on roller arcs."""
        self.tendon_length = wp.zeros(nt, dtype=float, device=dev)
        """Geometric length per tendon [m]: free spans plus wrapped arcs at the final pose."""

        self._winch_idle = wp.zeros(ng, dtype=float, device=dev)
        """Winch commands used when ``step`` gets no control (nothing paid out)."""
        work = cable_kernels.TendonWork()
        work.stretch0 = wp.zeros(ns, dtype=float, device=dev)
        work.rest0 = wp.zeros(ns, dtype=float, device=dev)
        work.lam = self._tendon_lambda
        work.lam_hat = wp.zeros(ns, dtype=float, device=dev)
        work.stiff = wp.zeros(ns, dtype=float, device=dev)
        work.xl = self.tendon_segment_attachment_l
        work.xr = self.tendon_segment_attachment_r
        work.ratio = wp.zeros(ng, dtype=float, device=dev)
        work.run_first = wp.zeros(ns, dtype=wp.int32, device=dev)
        work.run_flex = wp.zeros(ns, dtype=float, device=dev)
        work.run_num = wp.zeros(ns, dtype=float, device=dev)
        work.run_begin = wp.zeros(ns, dtype=wp.int32, device=dev)
        work.run_end = wp.zeros(ns, dtype=wp.int32, device=dev)
        work.run_scale = wp.zeros(ns, dtype=float, device=dev)
        work.run_skip = wp.zeros(ns, dtype=wp.int32, device=dev)
        work.wrap_error = self.tendon_guide_wrap_error
        work.winch_force = wp.zeros(ng, dtype=float, device=dev)
        work.sweeps = self.tendon_cone_sweep_count
        self._tendon_work = work
        diag = cable_kernels.TendonDiagnostics()
        diag.material_tension = self.tendon_segment_material_tension
        diag.damping_tension = self.tendon_segment_damping_tension
        self._tendon_segment_stiffness = wp.array(
            authored_stiffness(m.tendon_segment_compliance.numpy(), self._tendon_compliance_floor),
            dtype=wp.float64,
            device=dev,
        )
        """1/c [N/m] of each span's compliance as authored (``authored_stiffness``), float64: the
        diagnostics divide by it (refreshed by ``notify_model_changed``)."""
        diag.seg_stiffness = self._tendon_segment_stiffness
        diag.seg_active = self.tendon_segment_active
        diag.seg_compliance = self.tendon_segment_active_compliance
        diag.seg_damping = self.tendon_segment_active_damping
        diag.rolling_l = self.tendon_segment_rolling_delta_l
        diag.rolling_r = self.tendon_segment_rolling_delta_r
        diag.lam_prev = self._tendon_lambda_prev
        diag.lam_out = self.tendon_segment_lambda
        diag.dlam_out = self.tendon_segment_delta_lambda
        diag.guide_l = self.tendon_segment_active_guide_l
        diag.guide_r = self.tendon_segment_active_guide_r
        diag.guide_active = self.tendon_guide_active
        diag.guide_wrap = self.tendon_guide_wrap
        diag.total_cable = self.tendon_total_cable
        diag.total_length = self.tendon_length
        diag.rest_out = self.tendon_segment_rest_length
        diag.ml_out = self.tendon_segment_attachment_l_local
        diag.mr_out = self.tendon_segment_attachment_r_local
        self._tendon_diag = diag
        self._tendon_geo = cable_kernels.make_tendon_geometry(ng, ns, dev)
        """Route geometry scratch (``cable.TendonGeometry``): written by ``begin_step`` and each tendon
        pass, read by the passes and ``tendon_diagnostics``."""
        self._tendon_seed = TendonHistory()
        """The history a fresh State seeds at the model's initial pose (``cable.reset_tendons``): what the
        diagnostics report at construction."""
        self._tendon_seed.rest = wp.zeros(ns, dtype=float, device=dev)
        self._tendon_seed.residual = wp.zeros(ns, dtype=float, device=dev)
        self._tendon_seed.active = wp.zeros(ng, dtype=wp.int32, device=dev)
        self._tendon_seed.ml = wp.zeros(ns, dtype=wp.vec3, device=dev)
        self._tendon_seed.mr = wp.zeros(ns, dtype=wp.vec3, device=dev)
        self._tendon_seed.seeded = wp.zeros(nt, dtype=wp.int32, device=dev)
        self._tendon_seed.winch = wp.zeros(ng, dtype=float, device=dev)
        self._report_initial_tendons()

    def _begin_tendon_step(self, state_in: State, state_out: State, control=None):
        m = self.model
        if not m.tendon_count:
            return
        winch = self._winch_idle if control is None else control.tendon_guide_winch_length
        winch_force = self._winch_idle if control is None else control.tendon_guide_winch_force
        self._tendon_lambda.zero_()
        wp.launch(
            cable_kernels.begin_step,
            dim=chunked(m.tendon_count, self._chunk),
            inputs=[
                self._tendons,
                m.tendon_count,
                self._chunk,
                self.tendon_activation_tol,
                m.tendon_segment_initial_rest_length,
                m.tendon_guide_initial_active,
                winch,
                winch_force,
                state_in.body_q,
                state_in.tendon_history,
            ],
            outputs=[state_out.tendon_history, self._tendon_work, self._tendon_geo],
            device=self.device,
        )

    def _mark_last_tendon_iteration(self):
        """Keep the multipliers before the step's last iteration (SolverXPBD calls this before it), for
        ``tendon_segment_delta_lambda``."""
        if self.model.tendon_count:
            wp.copy(self._tendon_lambda_prev, self._tendon_lambda)

    def _tendon_diagnostics(self, state: State, dt: float):
        self._launch_tendon_diagnostics(self._all_worlds, 1, dt, state.body_q, state.tendon_history)

    def _launch_tendon_diagnostics(self, world_mask, stepped: int, dt: float, body_q, hist: TendonHistory):
        m = self.model
        if not m.tendon_count:
            return
        wp.launch(
            cable_kernels.tendon_diagnostics,
            dim=chunked(m.tendon_count, self._chunk),
            inputs=[
                world_mask,
                stepped,
                int(self._reports_xpbd_multiplier),
                self._tendons,
                m.tendon_count,
                self._chunk,
                dt,
                body_q,
                hist,
                self._tendon_work,
                self._tendon_geo,
            ],
            outputs=[self._tendon_diag],
            device=self.device,
        )

    def _report_initial_tendons(self):
        """Fill the diagnostics at construction: the history a fresh State seeds at the model's pose."""
        m = self.model
        if not m.tendon_count:
            return
        wp.launch(
            cable_kernels.reset_tendons,
            dim=m.tendon_count,
            inputs=[
                self._all_worlds,
                self._tendons,
                m.tendon_segment_initial_rest_length,
                m.tendon_guide_initial_active,
                m.body_q,
            ],
            outputs=[self._tendon_seed],
            device=self.device,
        )
        self._launch_tendon_diagnostics(self._all_worlds, 0, 1.0, m.body_q, self._tendon_seed)

    def _report_reset_tendons(self, world_mask, state: State):
        """Refresh the diagnostics of the reset worlds' tendons from ``state``'s re-seeded history at its
        pose (graph-capturable); multipliers, damping, rolled cable and sweep counts are 0 (nothing has
        acted yet)."""
        m = self.model
        if not m.tendon_count:
            return
        hist = state.tendon_history
        body_q = state.body_q
        self._launch_tendon_diagnostics(world_mask, 0, 1.0, body_q, hist)
        wp.launch(
            cable_kernels.reset_tendon_report,
            dim=m.tendon_count,
            inputs=[world_mask, self._tendons],
            outputs=[self.tendon_cone_sweep_count],
            device=self.device,
        )

    def _check_tendon_properties(self):
        """Validate in-place tendon edits; an edited rest length becomes the new reset baseline (written
        by the returned function)."""
        m = self.model
        name = f"{type(self).__name__}.notify_model_changed"
        if m.tendon_count == 0:
            return lambda: None
        for key, ref in self._tendon_geometry.items():
            if not np.array_equal(getattr(m, key).numpy(), ref):
                raise ValueError(
                    f"{name}: model.{key} changed; route topology and guide geometry cannot change after the "
                    "solver was built; a change requires reconstructing the model and the solver"
                )
        for key in ("tendon_segment_compliance", "tendon_segment_damping", "tendon_guide_mu"):
            v = getattr(m, key).numpy()
            if not np.all(np.isfinite(v)) or np.any(v < 0.0):
                i = int(np.nonzero(~np.isfinite(v) | (v < 0.0))[0][0])
                raise ValueError(f"{name}: model.{key}[{i}] = {v[i]} must be finite and >= 0 (non-negative)")
        rest = m.tendon_segment_rest_length.numpy()
        if not np.all(np.isfinite(rest)):
            i = int(np.nonzero(~np.isfinite(rest))[0][0])
            raise ValueError(f"{name}: model.tendon_segment_rest_length[{i}] must be finite")
        stiffness = authored_stiffness(m.tendon_segment_compliance.numpy(), self._tendon_compliance_floor)

        def write():
            update_tendon_baseline(m)
            self._tendon_segment_stiffness.assign(stiffness)
            self._tendon_properties_changed()

        return write
