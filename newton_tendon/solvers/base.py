"""SolverBase: what every solver shares (model checks, reset, change notification)."""

from __future__ import annotations

import os

import numpy as np
import warp as wp

from newton_tendon.kernels import cable as cable_kernels
from newton_tendon.kernels import contacts as contact_kernels
from newton_tendon.kernels import joints as joint_kernels
from newton_tendon.kernels import rigid as rigid_kernels
from newton_tendon.kernels import transmission as tx
from newton_tendon.kernels.types import BODY_KINEMATIC

from .._float32 import FLOAT32_MAX as _FLOAT32_MAX
from .._transmission_model import coupling_model_struct, transmission_model_struct, transmission_scratch
from ..finalize import update_tendon_baseline
from ..inertia import checked_inverse_mass_arrays
from ..model import Model, ModelFlags, body_model_struct, joint_model_struct, tendon_model_struct
from ..state import State

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


CPU_CHUNK = 16
"""Tendons or colour members per thread of the step's tendon kernels and VBD body sweeps on the CPU
(``SolverBase._chunk``; 1 on a GPU, where a thread per element keeps the lanes busy). Warp runs a CPU
launch's threads one after another, and each thread first loads the struct fields its kernel uses;
taking 16 elements per thread pays that once per 16. The per-body rigid kernels (``integrate_bodies``,
``apply_slot_pose_deltas``, ``update_body_velocities``) keep a thread per body: their ``BodyModel``
loads are cheap, and a chunked version measured no faster once its two extra launch arguments were paid."""


_FLOAT32_TINY = float(np.finfo(np.float32).tiny)
"""Smallest normal float32 (1.2e-38): the smallest step size ``step`` accepts."""


def chunked(count: int, chunk: int) -> int:
    """Threads of a launch over ``count`` elements, ``chunk`` per thread."""
    return (count + chunk - 1) // chunk


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


@wp.kernel
def _reset_bodies(
    world_mask: wp.array(dtype=wp.int32),
    body_world: wp.array(dtype=wp.int32),
    body_q0: wp.array(dtype=wp.transform),
    body_qd0: wp.array(dtype=wp.spatial_vector),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_f: wp.array(dtype=wp.spatial_vector),
):
    b = wp.tid()
    w = body_world[b]
    if w >= 0 and world_mask[w] == 0:
        return
    body_q[b] = body_q0[b]
    body_qd[b] = body_qd0[b]
    body_f[b] = wp.spatial_vector()


@wp.kernel
def _reset_multipliers(
    world_mask: wp.array(dtype=wp.int32),
    row_world: wp.array(dtype=wp.int32),
    width: int,
    values: wp.array(dtype=float),
):
    """Zero ``width`` consecutive floats per row for the rows of the selected worlds."""
    i = wp.tid()
    w = row_world[i // width]
    if w >= 0 and world_mask[w] == 0:
        return
    values[i] = 0.0


class SolverBase:
    """Common solver contract: ``step(state_in, state_out, control, contacts, dt)``, ``reset``,
    ``notify_model_changed``."""

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            raise TypeError(f"{type(self).__name__}: model must be a newton_tendon Model, got {type(model).__name__}")
        self.model = model
        self.device = model.device
        self._chunk = 1 if self.device.is_cuda else CPU_CHUNK
        """Elements per thread of the chunked per-step kernels (``CPU_CHUNK`` on the CPU, 1 on CUDA)."""
        self._all_worlds = wp.ones(max(model.world_count, 1), dtype=wp.int32, device=self.device)
        self._bodies = body_model_struct(model)
        self._joints = joint_model_struct(model)
        self._tendons = tendon_model_struct(model)
        if model.tendon_count and getattr(model, "requires_grad", False):
            raise ValueError(
                f"{type(self).__name__}: the model was built with requires_grad=True, but the routed-tendon path "
                "is not differentiable; finalize without gradients"
            )
        self._multiplier_worlds = self._row_worlds()
        self._init_transmissions()
        self._tendon_geometry = {name: getattr(model, name).numpy().copy() for name in _TENDON_GEOMETRY}

    # ------------------------------------------------------------------------------------------
    # Kernel modules: compiled in parallel when the solver is built

    def _step_kernels(self) -> list:
        """Kernels ``step`` launches for this model, in compile order.

        Only their modules matter (``_load_step_modules``), so one kernel per module and feature
        is enough; ``tests/solvers/test_solver_modules.py`` checks the modules against real steps. The
        order is the compile order, largest modules first so that the small ones fill the gaps:
        the solver's tendon pass, the shared tendon kernels, transmissions, then the solver's other
        kernels and the rigid ones (measured on 2 cores, pulley, VBD: rigid and the sweep first
        made the load take 20 s instead of 13 s)."""
        m = self.model
        if m.body_count == 0:
            return []
        tendon_pass, own = self._solver_step_kernels()
        kernels = list(tendon_pass)
        if m.tendon_count:
            kernels += [cable_kernels.begin_step, cable_kernels.tendon_diagnostics]
        if m.transmission_count:
            kernels.append(tx.begin_transmissions)
        kernels += own
        if m.joint_count:
            kernels.append(joint_kernels.eval_joint_coordinates)
        if m.contact_capacity:
            kernels.append(contact_kernels.solve_contact_velocities)
        return kernels + [rigid_kernels.integrate_bodies, rigid_kernels.update_body_velocities]

    def _solver_step_kernels(self) -> tuple[list, list]:
        """The subclass's own step kernels for ``_step_kernels``: (its tendon pass, the others)."""
        return [], []

    def _load_step_modules(self):
        """Compile (or load from the kernel cache) every Warp module ``step`` uses, in parallel.

        Warp compiles a module the first time one of its kernels launches, one module after the
        other; a step of a cable scene on a cold cache waits for four to six modules of several
        seconds each. Compiling them here, one thread per module up to the CPUs available (Warp's
        ``force_load``; its CPU and CUDA compilers run outside the GIL), moves that wait into the
        solver's construction and overlaps it: the pulley scene's time to the first step on a cold
        cache went from 25.8 s to 20 s on 2 cores (docs/benchmarks.md). It also means the first
        step, or a graph capture of it, compiles nothing. Loading from a warm cache takes
        milliseconds.
        """
        modules = {}
        for kernel in self._step_kernels():
            modules.setdefault(kernel.module.name, kernel.module)
        if not modules:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            cpus = os.cpu_count() or 1
        workers = min(len(modules), cpus)
        wp.force_load(self.device, modules=list(modules.values()), max_workers=workers if workers > 1 else 0)

    def _row_worlds(self) -> dict[str, wp.array]:
        """World of each joint, contact slot and tendon span (for resetting their multipliers)."""
        m = self.model
        dev = self.device
        joint_world = m.body_world.numpy()[m.joint_child.numpy()] if m.joint_count else np.zeros(0, np.int32)
        contact_world = np.zeros(0, np.int32)
        if m.contact_capacity:
            pairs = m.shape_contact_pairs.numpy()[m.contact_pair.numpy()]
            shape_world = m.shape_world.numpy()
            contact_world = np.maximum(shape_world[pairs[:, 0]], shape_world[pairs[:, 1]])
        seg_world = np.zeros(0, np.int32)
        if m.tendon_count:
            start = m.tendon_start.numpy()
            nseg = np.diff(start) - 1
            seg_world = np.repeat(m.tendon_world.numpy(), nseg)
        return {
            "joint_multiplier": (wp.array(joint_world.astype(np.int32), dtype=wp.int32, device=dev), 6),
            "joint_limit_multiplier": (wp.array(joint_world.astype(np.int32), dtype=wp.int32, device=dev), 2),
            "contact_multiplier": (wp.array(contact_world.astype(np.int32), dtype=wp.int32, device=dev), 4),
            "tendon_segment_multiplier": (wp.array(seg_world.astype(np.int32), dtype=wp.int32, device=dev), 1),
            "transmission_row_impulse": (
                wp.array(m.transmission_world.numpy().astype(np.int32), dtype=wp.int32, device=dev),
                6,
            ),
            "coupling_impulse": (wp.array(m.coupling_world.numpy().astype(np.int32), dtype=wp.int32, device=dev), 1),
        }

    # ------------------------------------------------------------------------------------------
    # Routed tendons: controls, workspace and diagnostics shared by every tendon-capable solver

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
        self.tendon_max_sweeps = int(max_sweeps)
        """Maximum capstan material-relaxation sweeps per solver iteration (1..256)."""
        self.tendon_settle_tol = settle_tol
        """Relative tension change below which the sweeps stop early."""
        self.tendon_activation_tol = activation_tol
        """Radius-relative activation gap of dynamic rollers (hysteresis against chattering)."""

        m = self.model
        dev = self.device
        ns, ng, nt = m.tendon_segment_count, m.tendon_guide_count, m.tendon_count
        self.tendon_segment_lambda = wp.zeros(ns, dtype=float, device=dev)
        """XPBD multiplier of each span's stretch row [N s^2] after the last step (0 on VBD)."""
        self.tendon_segment_material_tension = wp.zeros(ns, dtype=float, device=dev)
        """Tension per span [N]: constitutive (l - L)/c, or the tension the row applied for spans with
        c <= 1e-6 m/N (their stretch is a few float32 ulps)."""
        self.tendon_segment_damping_tension = wp.zeros(ns, dtype=float, device=dev)
        """Signed damping tension per span [N]: d * dl/dt."""
        self.tendon_segment_active = wp.zeros(ns, dtype=wp.int32, device=dev)
        """1 where the segment slot holds a span of the current route."""
        self.tendon_segment_active_compliance = wp.zeros(ns, dtype=float, device=dev)
        """Compliance used for each active span [m/N] (a bypass span is the two authored spans in series)."""
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
        work.lam = self.tendon_segment_lambda
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
        self._tendon_work = work
        diag = cable_kernels.TendonDiagnostics()
        diag.material_tension = self.tendon_segment_material_tension
        diag.damping_tension = self.tendon_segment_damping_tension
        diag.seg_active = self.tendon_segment_active
        diag.seg_compliance = self.tendon_segment_active_compliance
        diag.guide_l = self.tendon_segment_active_guide_l
        diag.guide_r = self.tendon_segment_active_guide_r
        diag.guide_active = self.tendon_guide_active
        diag.guide_wrap = self.tendon_guide_wrap
        diag.total_cable = self.tendon_total_cable
        diag.total_length = self.tendon_length
        self._tendon_diag = diag
        self._tendon_geo = cable_kernels.make_tendon_geometry(ng, ns, dev)
        """Route geometry scratch (``cable.TendonGeometry``): written by ``begin_step`` and each tendon
        pass, read by the passes and ``tendon_diagnostics``."""

    # ------------------------------------------------------------------------------------------
    # Rigid bodies: what both solvers share (arguments, scratch, prediction, restitution)

    def _check_dt(self, dt) -> float:
        """The step size [s] as a float, checked on the host before ``step`` writes anything: a real
        number (not a bool) whose float32 form, the one the kernels use, is finite, positive and
        normal (dt and 1/dt both fit in float32). A NaN, infinite, zero or negative dt would write
        NaN or a backwards step into every body of the output state."""
        name = type(self).__name__
        if isinstance(dt, (bool, np.bool_)) or not isinstance(dt, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name}.step: dt must be a real number [s], got {type(dt).__name__}")
        value = float(dt)
        if not (np.isfinite(value) and value > 0.0):
            raise ValueError(f"{name}.step: dt must be finite and > 0 [s], got {value}")
        if not (_FLOAT32_TINY <= value <= _FLOAT32_MAX):
            raise ValueError(
                f"{name}.step: dt must lie in the normal float32 range [{_FLOAT32_TINY:.3g}, {_FLOAT32_MAX:.3g}] s "
                f"(the kernels compute in float32), got {value}"
            )
        return value

    def _check_iterations(self, iterations) -> int:
        if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
            raise ValueError(f"{type(self).__name__}: iterations must be an int >= 1, got {iterations!r}")
        return int(iterations)

    def _init_rigid_scratch(self):
        """Constraint slots and per-step scratch (allocated once). Slot layout: joints, tendon
        guides, transmission tendons and couplings (summed), then contacts (see newton_tendon.kernels.rigid)."""
        m = self.model
        dev = self.device
        self._transmission_slot_base = 2 * m.joint_count + 2 * m.tendon_guide_count
        self._summed_slot_count = self._transmission_slot_base + m.transmission_slot_count + m.coupling_slot_count
        slots = max(self._summed_slot_count + 2 * m.contact_capacity, 1)
        self._slot_delta = wp.zeros(slots, dtype=wp.spatial_vector, device=dev)
        self._slot_weight = wp.zeros(slots, dtype=float, device=dev)
        self._slot_wrench = wp.zeros(max(self._summed_slot_count, 1), dtype=wp.spatial_vector, device=dev)
        self._joint_q_prev = wp.zeros(max(m.joint_coord_count, 1), dtype=float, device=dev)
        self._joint_qd_prev = wp.zeros(max(m.joint_dof_count, 1), dtype=float, device=dev)
        self._body_delta = wp.zeros(m.body_count, dtype=wp.spatial_vector, device=dev)

    def _predict_bodies(self, state_in: State, state_out: State, control, dt: float):
        """Joint coordinates at the step start (drives), joint forces as body wrenches, and the
        inertial prediction into ``state_out``; clears the accumulated pose change."""
        m = self.model
        dev = self.device
        if m.joint_count:
            wp.launch(
                joint_kernels.eval_joint_coordinates,
                dim=m.joint_count,
                inputs=[self._bodies, self._joints, state_in.body_q, state_in.body_qd],
                outputs=[self._joint_q_prev, self._joint_qd_prev],
                device=dev,
            )
            wp.launch(
                joint_kernels.compute_joint_wrenches,
                dim=m.joint_count,
                inputs=[self._bodies, self._joints, state_in.body_q, control.joint_f],
                outputs=[self._slot_wrench],
                device=dev,
            )
        wp.launch(
            rigid_kernels.integrate_bodies,
            dim=m.body_count,
            inputs=[
                self._bodies,
                m.gravity,
                self._summed_slot_count,
                self._slot_wrench,
                dt,
                state_in.body_q,
                state_in.body_qd,
                state_in.body_f,
            ],
            outputs=[state_out.body_q, state_out.body_qd],
            device=dev,
        )
        self._body_delta.zero_()

    def _restitution_pass(self, state_in: State, state_out: State, contact_data, pushed: wp.array, dt: float):
        """Velocity pass of the contacts that pushed this step (``pushed > 0``): restitution."""
        m = self.model
        self._slot_delta.zero_()
        self._slot_weight.zero_()
        wp.launch(
            contact_kernels.solve_contact_velocities,
            dim=m.contact_capacity,
            inputs=[
                self._bodies,
                self._summed_slot_count,
                m.gravity,
                dt,
                contact_data,
                state_in.body_q,
                state_in.body_qd,
                state_out.body_q,
                state_out.body_qd,
                pushed,
            ],
            outputs=[self._slot_delta, self._slot_weight],
            device=self.device,
        )
        wp.launch(
            rigid_kernels.apply_slot_velocity_deltas,
            dim=m.body_count,
            inputs=[self._bodies, self._summed_slot_count, self._slot_delta, self._slot_weight],
            outputs=[state_out.body_qd],
            device=self.device,
        )

    # ------------------------------------------------------------------------------------------
    # Transmission tendons: workspace, step start, report

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
                inputs=[state_in.body_q, state_in.body_qd, m.body_com, tx.CURVATURE_STEP],
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
                self._transmission_control(control),
                dt,
                state_in.body_q,
                state_in.body_qd,
                self._q_plus,
                self._q_minus,
                state_in.transmission_activation,
                state_in.transmission_row_impulse,
                int(self._warm_transmissions),
                self._transmission_scratch,
            ],
            outputs=[state_out.transmission_activation, self._transmission_work],
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
                    control.coupling_enabled,
                    state_in.transmission_reference_length,
                    state_in.body_q,
                    state_in.coupling_impulse,
                    int(self._warm_transmissions),
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
            dim=m.transmission_count,
            inputs=[
                self._transmission_model,
                self._bodies,
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
                self._transmission_scratch,
                self._transmission_work,
            ],
            outputs=[self._transmission_report, state.transmission_row_impulse],
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
                inputs=[dt, self._coupling_work],
                outputs=[self.coupling_force, state.coupling_impulse],
                device=self.device,
            )

    def update_geometry(self, state: State):
        """Refresh ``transmission_length``, ``transmission_velocity``, the energies
        (``transmission_potential_energy``, ``transmission_kinetic_energy``) and the transmission
        gradients (``transmission_jacobian``, ``transmission_jacobian_body`` per slot) at ``state``
        without advancing the simulation or changing the last step's forces."""
        m = self.model
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

    def _begin_tendon_step(self, state_in: State, state_out: State, control=None):
        m = self.model
        if not m.tendon_count:
            return
        winch = self._winch_idle if control is None else control.tendon_guide_winch_length
        winch_force = self._winch_idle if control is None else control.tendon_guide_winch_force
        self.tendon_segment_lambda.zero_()
        wp.launch(
            cable_kernels.begin_step,
            dim=chunked(m.tendon_count, self._chunk),
            inputs=[
                self._tendons,
                m.tendon_count,
                self._chunk,
                self.tendon_activation_tol,
                state_in.body_q,
                m.tendon_segment_initial_rest_length,
                m.tendon_guide_initial_active,
                state_in.tendon_history,
                winch,
                winch_force,
            ],
            outputs=[state_out.tendon_history, self._tendon_work, self._tendon_geo],
            device=self.device,
        )

    def _tendon_diagnostics(self, state: State, dt: float):
        m = self.model
        if not m.tendon_count:
            return
        wp.launch(
            cable_kernels.tendon_diagnostics,
            dim=chunked(m.tendon_count, self._chunk),
            inputs=[
                self._tendons,
                m.tendon_count,
                self._chunk,
                dt,
                state.body_q,
                state.tendon_history,
                self._tendon_work,
                self._tendon_geo,
            ],
            outputs=[self._tendon_diag],
            device=self.device,
        )

    def step(self, state_in: State, state_out: State, control, contacts, dt: float):
        raise NotImplementedError(f"{type(self).__name__} must implement step()")

    def reset(
        self,
        state: State,
        world_mask: wp.array | None = None,
        flags: int | None = None,
        *,
        body_q: wp.array | None = None,
        body_qd: wp.array | None = None,
        remeasure: bool = False,
    ):
        """Restore the selected worlds' bodies to the model's initial poses and velocities (or to the
        given ``body_q`` / ``body_qd``); clear their forces; restore their tendons' initial material
        distribution and transmission state, re-seeded at the restored pose.

        ``world_mask`` is an int32 array [world_count] (1 = reset) or None for all worlds; it can be
        edited in place between replays, so a captured reset serves any selection. ``body_q``
        (wp.transform [body_count], world frame [m]) and ``body_qd`` (wp.spatial_vector [body_count],
        [m/s, rad/s]) are read only for the bodies of selected worlds, so a policy can write start
        poses into fixed buffers and replay one captured reset. Routed cables keep their initial
        material at a new pose (a pose farther apart than the initial one starts the cable stretched)
        unless ``remeasure=True``: then spans whose authored rest length was negative ("measure at
        the initial pose") and dynamic rollers are measured again at the restored pose, as if the
        model had been built there. ``flags=0`` resets only solver history and leaves the state untouched.
        """
        m = self.model
        name = type(self).__name__
        mask = self._all_worlds if world_mask is None else world_mask
        if not isinstance(mask, wp.array) or mask.dtype != wp.int32 or mask.shape != (max(m.world_count, 1),):
            raise ValueError(f"{name}.reset: world_mask must be a wp.array of int32 with shape ({m.world_count},)")
        for arg, value, dtype in (("body_q", body_q, wp.transform), ("body_qd", body_qd, wp.spatial_vector)):
            if value is not None and (
                not isinstance(value, wp.array) or value.dtype != dtype or value.shape != (m.body_count,)
            ):
                raise ValueError(
                    f"{name}.reset: {arg} must be a wp.array of {dtype.__name__} with shape ({m.body_count},)"
                )
        if not isinstance(remeasure, (bool, np.bool_)):
            raise TypeError(f"{name}.reset: remeasure must be a bool, got {type(remeasure).__name__}")
        if flags == 0:
            return
        if m.body_count:
            wp.launch(
                _reset_bodies,
                dim=m.body_count,
                inputs=[
                    mask,
                    m.body_world,
                    m.body_q if body_q is None else body_q,
                    m.body_qd if body_qd is None else body_qd,
                ],
                outputs=[state.body_q, state.body_qd, state.body_f],
                device=self.device,
            )
        for name, (row_world, width) in self._multiplier_worlds.items():
            arr = getattr(state, name)
            if arr.shape[0]:
                flat = wp.array(ptr=arr.ptr, dtype=float, shape=arr.shape[0] * width, device=arr.device)
                wp.launch(
                    _reset_multipliers, dim=flat.shape[0], inputs=[mask, row_world, width, flat], device=self.device
                )
        if m.transmission_count:
            wp.launch(
                tx.reset_transmissions,
                dim=m.transmission_count,
                inputs=[
                    mask,
                    m.transmission_world,
                    m.transmission_reference_length,
                    m.transmission_term_start,
                    m.transmission_term_initial_coordinate,
                ],
                outputs=[
                    state.transmission_activation,
                    state.transmission_reference_length,
                    state.transmission_term_coordinate,
                ],
                device=self.device,
            )
        if m.tendon_count and remeasure:
            wp.launch(
                cable_kernels.reset_tendons_measured,
                dim=m.tendon_count,
                inputs=[self._tendons, mask, state.body_q, m.tendon_segment_rest_length],
                outputs=[state.tendon_history],
                device=self.device,
            )
        elif m.tendon_count:
            wp.launch(
                cable_kernels.reset_tendons,
                dim=m.tendon_count,
                inputs=[
                    self._tendons,
                    mask,
                    state.body_q,
                    m.tendon_segment_initial_rest_length,
                    m.tendon_guide_initial_active,
                ],
                outputs=[state.tendon_history],
                device=self.device,
            )

    def notify_model_changed(self, flags: int):
        """Tell the solver which model arrays were edited in place (host side, outside graph capture).

        Every flagged group is validated before anything is written: an edit that breaks a rule raises
        ``ValueError`` naming the entity and leaves every derived array (inverse masses, tendon baselines,
        spring intervals) as it was."""
        flags = ModelFlags(flags)
        apply = []
        if flags & ModelFlags.BODY_PROPERTIES:
            apply.append(self._check_body_properties())
        if flags & ModelFlags.TENDON_PROPERTIES:
            apply.append(self._check_tendon_properties())
        if flags & ModelFlags.TRANSMISSION_PROPERTIES:
            apply.append(self._check_transmission_properties())
        for write in apply:
            write()

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
                    "solver was built; rebuild the model and the solver"
                )
        for key in ("tendon_segment_compliance", "tendon_segment_damping", "tendon_guide_mu"):
            v = getattr(m, key).numpy()
            if not np.all(np.isfinite(v)) or np.any(v < 0.0):
                i = int(np.nonzero(~np.isfinite(v) | (v < 0.0))[0][0])
                raise ValueError(f"{name}: model.{key}[{i}] = {v[i]} must be finite and >= 0")
        rest = m.tendon_segment_rest_length.numpy()
        if not np.all(np.isfinite(rest)):
            i = int(np.nonzero(~np.isfinite(rest))[0][0])
            raise ValueError(f"{name}: model.tendon_segment_rest_length[{i}] must be finite")
        return lambda: update_tendon_baseline(m)

    def _check_body_properties(self):
        """Inverse masses and inertias from edited ``body_mass``/``body_inertia`` by finalize's rules
        (``checked_inverse_mass_arrays``: zero for immovable bodies, the invertibility ratio, and the
        float32 range of the masses and their inverses); returns the function that writes them."""
        m = self.model
        name = f"{type(self).__name__}.notify_model_changed"
        mass = m.body_mass.numpy().astype(np.float64)
        inertia = m.body_inertia.numpy().astype(np.float64).reshape(-1, 3, 3)
        bad = ~np.isfinite(mass) | (mass < 0.0) | ~np.isfinite(inertia).reshape(-1, 9).all(axis=1)
        if np.any(bad):
            i = int(np.nonzero(bad)[0][0])
            raise ValueError(
                f"{name}: body '{m.body_label[i]}' (index {i}): body_mass ({mass[i]:g} kg) must be finite and >= 0 "
                "and body_inertia finite"
            )
        moving = (mass > 0.0) & ((m.body_flags.numpy() & BODY_KINEMATIC) == 0)
        inv_mass, inv_inertia = checked_inverse_mass_arrays(name, m.body_label, mass, inertia, moving)

        def write():
            m.body_inv_mass.assign(inv_mass.astype(np.float32))
            m.body_inv_inertia.assign(inv_inertia.astype(np.float32))

        return write
