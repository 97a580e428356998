"""Joint coordinates from body poses and velocities (batched over all worlds)."""

from __future__ import annotations

import warp as wp

from newton_tendon.kernels.joints import eval_joint_coordinates as _eval_joint_coordinates_kernel

from .model import Model, body_model_struct, joint_model_struct
from .state import State


def eval_joint_coordinates(
    model: Model, state: State, joint_q: wp.array | None = None, joint_qd: wp.array | None = None
) -> tuple[wp.array, wp.array]:
    """Evaluate ``joint_q`` [joint_coord_count] and ``joint_qd`` [joint_dof_count] from ``state``'s bodies.

    Revolute: angle [rad] and rate [rad/s] about the axis; prismatic: displacement [m] and rate [m/s]
    along the axis; ball: relative quaternion (xyzw) and relative angular velocity in the parent
    joint frame; free: child joint frame pose in the parent joint frame, and the child body velocity.
    Fixed joints have no coordinates. Pass preallocated arrays to stay graph-capturable.
    """
    if joint_q is None:
        joint_q = wp.zeros(model.joint_coord_count, dtype=float, device=model.device)
    if joint_qd is None:
        joint_qd = wp.zeros(model.joint_dof_count, dtype=float, device=model.device)
    if joint_q.shape != (model.joint_coord_count,) or joint_qd.shape != (model.joint_dof_count,):
        raise ValueError(
            f"eval_joint_coordinates: joint_q must have shape ({model.joint_coord_count},) and joint_qd "
            f"({model.joint_dof_count},)"
        )
    if model.joint_count:
        wp.launch(
            _eval_joint_coordinates_kernel,
            dim=model.joint_count,
            inputs=[body_model_struct(model), joint_model_struct(model), state.body_q, state.body_qd],
            outputs=[joint_q, joint_qd],
            device=model.device,
        )
    return joint_q, joint_qd
