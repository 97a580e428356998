"""SolverBase: what every solver shares (model checks, reset, change notification).

The base holds the solver contract (``step(state_in, state_out, control, contacts, dt)``, ``reset``,
``notify_model_changed``) and the phases every step is built from: the step-size check, the rigid
prediction and restitution launches, the joint and contact launches, the kernel modules a step
compiles, and the per-world reset. The routed-tendon launchers live in ``_tendons``
(``RoutedTendonLaunchers``) and the transmission-tendon launchers in ``_transmissions``
(``TransmissionLaunchers``); ``SolverBase`` inherits both, so its attributes and methods are the same.
"""

from __future__ import annotations

import os

import numpy as np
import warp as wp

from newton_tendon.kernels import cable as cable_kernels
from newton_tendon.kernels import contacts as contact_kernels
from newton_tendon.kernels import joints as joint_kernels
from newton_tendon.kernels import rigid as rigid_kernels
from newton_tendon.kernels import transmission as tx
from newton_tendon.kernels.math import world_selected
from newton_tendon.kernels.types import BODY_KINEMATIC

from .._float32 import FLOAT32_MAX as _FLOAT32_MAX
from ..collision import Contacts, check_contacts
from ..inertia import checked_inverse_mass_arrays
from ..layout import check_control, check_state, layout_of
from ..model import Model, ModelFlags, body_model_struct, joint_model_struct, tendon_model_struct
from ..state import Control, State, StateFlags
from ._chunking import CPU_CHUNK, chunked  # noqa: F401 (chunked: re-exported for the solvers)
from ._tendons import _TENDON_GEOMETRY, RoutedTendonLaunchers
from ._transmissions import TransmissionLaunchers

_FLOAT32_TINY = float(np.finfo(np.float32).tiny)
"""Smallest normal float32 (1.2e-38): the smallest step size ``step`` accepts."""


STATE_BODY_Q = wp.constant(int(StateFlags.BODY_Q))
STATE_BODY_QD = wp.constant(int(StateFlags.BODY_QD))
STATE_BODY_F = wp.constant(int(StateFlags.BODY_F))


@wp.kernel
def _reset_bodies(
    # Input:
    world_mask: wp.array(dtype=wp.int32),
    what: int,
    # Model:
    body_world: wp.array(dtype=wp.int32),
    body_q0: wp.array(dtype=wp.transform),
    body_qd0: wp.array(dtype=wp.spatial_vector),
    # State: reset in place
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_f: wp.array(dtype=wp.spatial_vector),
):
    """Restore the selected worlds' bodies: pose (``what`` bit BODY_Q), velocity (BODY_QD) and
    force (BODY_F), the bits of ``StateFlags``."""
    b = wp.tid()
    w = body_world[b]
    if not world_selected(world_mask, w):
        return
    if what & STATE_BODY_Q:
        body_q[b] = body_q0[b]
    if what & STATE_BODY_QD:
        body_qd[b] = body_qd0[b]
    if what & STATE_BODY_F:
        body_f[b] = wp.spatial_vector()


@wp.kernel
def _normalize_world_mask(
    # Input: the caller's int32 mask ([world_count] or [world_count + 1])
    given: wp.array(dtype=wp.int32),
    implicit: int,
    # Output: [world_count + 1], the last entry for entities in no world
    normalized: wp.array(dtype=wp.int32),
):
    """``normalized[i] = given[i] != 0``; a mask without the global entry selects global entities. With
    ``implicit`` = 1 (a builder that made no world: newton's global entities are world 0 here) the
    global entry selects world 0 as well."""
    i = wp.tid()
    normalized[i] = 1
    if i < given.shape[0] and given[i] == 0:
        normalized[i] = 0
        if implicit != 0 and i == 0 and given.shape[0] > 1 and given[given.shape[0] - 1] != 0:
            normalized[i] = 1


@wp.kernel
def _normalize_bool_world_mask(
    # Input: newton's bool mask ([world_count] or [world_count + 1])
    given: wp.array(dtype=wp.bool),
    implicit: int,
    # Output: [world_count + 1], the last entry for entities in no world
    normalized: wp.array(dtype=wp.int32),
):
    """As ``_normalize_world_mask`` for a bool mask."""
    i = wp.tid()
    normalized[i] = 1
    if i < given.shape[0] and not given[i]:
        normalized[i] = 0
        if implicit != 0 and i == 0 and given.shape[0] > 1 and given[given.shape[0] - 1]:
            normalized[i] = 1


@wp.kernel
def _reset_multipliers(
    # Input:
    world_mask: wp.array(dtype=wp.int32),
    # Model:
    row_world: wp.array(dtype=wp.int32),
    width: int,
    # State: reset in place
    values: wp.array(dtype=float),
):
    """Zero ``width`` consecutive floats per row for the rows of the selected worlds."""
    i = wp.tid()
    w = row_world[i // width]
    if not world_selected(world_mask, w):
        return
    values[i] = 0.0


class SolverBase(RoutedTendonLaunchers, TransmissionLaunchers):
    """Common solver contract: ``step(state_in, state_out, control, contacts, dt)``, ``reset``,
    ``notify_model_changed``."""

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            raise TypeError(f"{type(self).__name__}: model must be a newton_tendon Model, got {type(model).__name__}")
        self.model = model
        self.device = model.device
        self._chunk = 1 if self.device.is_cuda else CPU_CHUNK
        """Elements per thread of the chunked per-step kernels (``CPU_CHUNK`` on the CPU, 1 on CUDA)."""
        self._all_worlds = wp.ones(max(model.world_count, 1) + 1, dtype=wp.int32, device=self.device)
        """Reset mask selecting every world and the global entities ([world_count + 1])."""
        self._reset_mask = wp.zeros(max(model.world_count, 1) + 1, dtype=wp.int32, device=self.device)
        """The caller's reset mask, normalized to int32 [world_count + 1] inside ``reset``."""
        self._layout = layout_of(model)
        """The model's layout (``newton_tendon.layout``), the stamp ``step`` compares."""
        self._bodies = body_model_struct(model)
        self._joints = joint_model_struct(model)
        self._has_universal_joints = model.joint_count > 0 and bool(np.any(model.joint_dof_dim.numpy()[:, 1] == 2))
        """Whether a D6 joint has two angular axes (a universal joint): the solvers then launch the
        kernel variants that compile their rows (read once here: the step never reads the model)."""
        self._has_row_armature = model.joint_count > 0 and bool(np.any(model.joint_row_armature.numpy() != 0.0))
        """Whether a joint coordinate carries armature on its row (``Model.joint_row_armature``)."""
        self._tendons = tendon_model_struct(model)
        if getattr(model, "requires_grad", False):
            what = "the routed-tendon path is" if model.tendon_count else "its rigid-body and tendon paths are"
            raise NotImplementedError(
                f"{type(self).__name__}: the model was finalized with requires_grad=True, but {what} not "
                "differentiable; finalize without gradients (newton's solvers raise this error too)"
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
        if m.body_count == 0 and m.tendon_count == 0:
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
        dof_world = np.repeat(joint_world, np.diff(m.joint_qd_start.numpy())) if m.joint_count else joint_world
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
            "joint_limit_multiplier": (wp.array(dof_world.astype(np.int32), dtype=wp.int32, device=dev), 2),
            "contact_multiplier": (wp.array(contact_world.astype(np.int32), dtype=wp.int32, device=dev), 4),
            "tendon_segment_multiplier": (wp.array(seg_world.astype(np.int32), dtype=wp.int32, device=dev), 1),
            "transmission_row_impulse": (
                wp.array(m.transmission_world.numpy().astype(np.int32), dtype=wp.int32, device=dev),
                6,
            ),
            "coupling_impulse": (wp.array(m.coupling_world.numpy().astype(np.int32), dtype=wp.int32, device=dev), 1),
        }

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

    def _check_step_args(self, state_in, state_out, control, contacts) -> None:
        """Host checks of ``step``'s arguments before anything launches: each State, the Control and
        the contact buffer is of its type and was made for a model of this model's layout
        (``newton_tendon.layout``: a stamp compared by identity, no array data read, so the step stays
        capturable). A State of another model indexed past its arrays (a segmentation fault)."""
        lay = self._layout
        # Fast path: every object stamped with this model's own layout object (the usual case).
        if (
            type(state_in) is State
            and state_in._layout is lay
            and type(state_out) is State
            and state_out._layout is lay
            and (control is None or (type(control) is Control and control._layout is lay))
            and (contacts is None or (type(contacts) is Contacts and contacts._layout is lay))
        ):
            return
        name = f"{type(self).__name__}.step"
        m = self.model
        check_state(name, "state_in", state_in, m)
        check_state(name, "state_out", state_out, m)
        if control is not None:
            check_control(name, "control", control, m)
        if contacts is not None:
            check_contacts(name, "contacts", contacts, m)

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
        self._joint_wrench = self._slot_wrench
        """Where ``compute_joint_wrenches`` writes: the joint slots of ``_slot_wrench``, which the
        inertial prediction applies; a solver that applies joint forces inside its joint solve (XPBD's
        articulation pass) gives it an array of its own."""
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
                inputs=[self._bodies, self._joints, control.joint_f, state_in.body_q],
                outputs=[self._joint_wrench],
                device=dev,
            )
        wp.launch(
            rigid_kernels.integrate_bodies,
            dim=m.body_count,
            inputs=[
                self._bodies,
                m.gravity,
                self._summed_slot_count,
                dt,
                state_in.body_q,
                state_in.body_qd,
                state_in.body_f,
                state_out.body_q,
                state_out.body_qd,
                self._slot_wrench,
            ],
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
            inputs=[self._bodies, self._summed_slot_count, state_out.body_qd, self._slot_delta, self._slot_weight],
            device=self.device,
        )

    # ------------------------------------------------------------------------------------------
    # The contract: step (each solver's), per-world reset, change notification

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

        ``world_mask``: None for all worlds, or a wp.array with one entry per world (1 / True = reset),
        int32 (ours) or bool (newton's), optionally with a last entry for the entities in no world
        (world -1: newton's ``[world_count + 1]`` mask); without that entry they are reset with any
        selection. A model whose builder made no world keeps everything in world 0, which newton calls
        world -1: there either entry selects it. It can be edited in place between replays, so a captured reset serves any selection.
        ``flags`` (``StateFlags`` bits, as newton's): None resets everything; otherwise only the body
        arrays whose bits are set (BODY_Q, BODY_QD, BODY_F) are restored, while the solver's history
        kept in the state (tendon material and routing, winch pay-out, transmission state and the
        multipliers) is always reset, as newton's solvers reset their tendon history whatever the
        flags. So ``flags=0`` resets only that history. ``body_q``
        (wp.transform [body_count], world frame [m]) and ``body_qd`` (wp.spatial_vector [body_count],
        [m/s, rad/s]) are read only for the bodies of selected worlds, so a policy can write start
        poses into fixed buffers and replay one captured reset. Routed cables keep their initial
        material at a new pose (a pose farther apart than the initial one starts the cable stretched)
        unless ``remeasure=True``: then spans whose authored rest length was negative ("measure at
        the initial pose") and dynamic rollers are measured again at the restored pose, as if the
        model had been built there.

        The solver's tendon diagnostics of the reset worlds are refreshed at once from the re-seeded
        state at its pose (at the model's pose they equal the values at construction).
        """
        m = self.model
        name = type(self).__name__
        check_state(f"{name}.reset", "state", state, m)
        nw = max(m.world_count, 1)
        if world_mask is None:
            mask = self._all_worlds
        else:
            if (
                not isinstance(world_mask, wp.array)
                or world_mask.dtype not in (wp.int32, wp.bool)
                or world_mask.shape not in ((nw,), (nw + 1,))
                or world_mask.ndim != 1
            ):
                raise ValueError(
                    f"{name}.reset: world_mask must be a wp.array of int32 or bool with shape ({m.world_count},) "
                    f"or ({m.world_count + 1},) (newton's, with the global entry last)"
                )
            mask = self._reset_mask
        if flags is not None and (isinstance(flags, bool) or not isinstance(flags, (int, np.integer))):
            raise TypeError(f"{name}.reset: flags must be StateFlags bits (an int) or None, got {type(flags).__name__}")
        what = int(StateFlags.ALL) if flags is None else int(flags)
        for arg, value, dtype in (("body_q", body_q, wp.transform), ("body_qd", body_qd, wp.spatial_vector)):
            if value is not None and (
                not isinstance(value, wp.array) or value.dtype != dtype or value.shape != (m.body_count,)
            ):
                raise ValueError(
                    f"{name}.reset: {arg} must be a wp.array of {dtype.__name__} with shape ({m.body_count},)"
                )
        if not isinstance(remeasure, (bool, np.bool_)):
            raise TypeError(f"{name}.reset: remeasure must be a bool, got {type(remeasure).__name__}")
        if mask is self._reset_mask:
            kernel = _normalize_bool_world_mask if world_mask.dtype == wp.bool else _normalize_world_mask
            wp.launch(
                kernel, dim=nw + 1, inputs=[world_mask, int(m._implicit_world)], outputs=[mask], device=self.device
            )
        body_bits = what & int(StateFlags.BODY_Q | StateFlags.BODY_QD | StateFlags.BODY_F)
        if m.body_count and body_bits:
            wp.launch(
                _reset_bodies,
                dim=m.body_count,
                inputs=[
                    mask,
                    body_bits,
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
                    self._transmission_report,
                ],
                device=self.device,
            )
        if m.tendon_count and remeasure:
            wp.launch(
                cable_kernels.reset_tendons_measured,
                dim=m.tendon_count,
                inputs=[mask, self._tendons, m.tendon_segment_rest_length, state.body_q],
                outputs=[state.tendon_history],
                device=self.device,
            )
        elif m.tendon_count:
            wp.launch(
                cable_kernels.reset_tendons,
                dim=m.tendon_count,
                inputs=[
                    mask,
                    self._tendons,
                    m.tendon_segment_initial_rest_length,
                    m.tendon_guide_initial_active,
                    state.body_q,
                ],
                outputs=[state.tendon_history],
                device=self.device,
            )
        self._report_reset_tendons(mask, state)

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
