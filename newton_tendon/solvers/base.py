"""SolverBase: what every solver shares (model checks, reset, change notification)."""

from __future__ import annotations

import numpy as np
import warp as wp

from ..model import Model, ModelFlags, body_model_struct, joint_model_struct
from ..state import State


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


class SolverBase:
    """Common solver contract: ``step(state_in, state_out, control, contacts, dt)``, ``reset``,
    ``notify_model_changed``."""

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            raise TypeError(f"{type(self).__name__}: model must be a newton_tendon Model, got {type(model).__name__}")
        self.model = model
        self.device = model.device
        self._all_worlds = wp.ones(max(model.world_count, 1), dtype=wp.int32, device=self.device)
        self._bodies = body_model_struct(model)
        self._joints = joint_model_struct(model)

    def step(self, state_in: State, state_out: State, control, contacts, dt: float):
        raise NotImplementedError(f"{type(self).__name__} must implement step()")

    def reset(self, state: State, world_mask: wp.array | None = None, flags: int | None = None):
        """Restore the selected worlds' bodies to the model's initial poses and velocities; clear their forces.

        ``world_mask`` is an int32 array [world_count] (1 = reset) or None for all worlds; it can be
        edited in place between replays, so a captured reset serves any selection. ``flags=0`` resets
        only solver history and leaves the state untouched.
        """
        m = self.model
        mask = self._all_worlds if world_mask is None else world_mask
        if not isinstance(mask, wp.array) or mask.dtype != wp.int32 or mask.shape != (max(m.world_count, 1),):
            raise ValueError(
                f"{type(self).__name__}.reset: world_mask must be a wp.array of int32 with shape ({m.world_count},)"
            )
        if flags == 0 or m.body_count == 0:
            return
        wp.launch(
            _reset_bodies,
            dim=m.body_count,
            inputs=[mask, m.body_world, m.body_q, m.body_qd],
            outputs=[state.body_q, state.body_qd, state.body_f],
            device=self.device,
        )

    def notify_model_changed(self, flags: int):
        """Tell the solver which model arrays were edited in place (host side, outside graph capture)."""
        flags = ModelFlags(flags)
        if flags & ModelFlags.BODY_PROPERTIES:
            self._check_body_properties()

    def _check_body_properties(self):
        """Recompute inverse masses and inertias in place from edited ``body_mass``/``body_inertia``."""
        m = self.model
        mass = m.body_mass.numpy().astype(np.float64)
        inertia = m.body_inertia.numpy().astype(np.float64)
        if not np.all(np.isfinite(mass)) or np.any(mass < 0.0) or not np.all(np.isfinite(inertia)):
            raise ValueError(
                f"{type(self).__name__}.notify_model_changed: body_mass must be finite and >= 0 and body_inertia finite"
            )
        from warp_kernels.types import BODY_KINEMATIC

        moving = (mass > 0.0) & ((m.body_flags.numpy() & BODY_KINEMATIC) == 0)
        inv_mass = np.where(moving, 1.0 / np.where(mass > 0.0, mass, 1.0), 0.0)
        inv_inertia = np.zeros_like(inertia)
        ok = moving & (np.linalg.det(inertia) > 1e-30)
        inv_inertia[ok] = np.linalg.inv(inertia[ok])
        m.body_inv_mass.assign(inv_mass.astype(np.float32))
        m.body_inv_inertia.assign(inv_inertia.astype(np.float32))
