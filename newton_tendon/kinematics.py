"""Joint coordinates <-> body poses and velocities (batched over all worlds): ``eval_fk`` places bodies
from joint coordinates, ``eval_joint_coordinates`` (newton's ``eval_ik``) reads joint coordinates from
body poses."""

from __future__ import annotations

import warp as wp

from newton_tendon.kernels.joints import eval_joint_coordinates as _eval_joint_coordinates_kernel
from newton_tendon.kernels.kinematics import copy_articulation_coordinates, eval_articulation_fk

from .layout import check_state
from .model import Model, body_model_struct, joint_model_struct
from .state import State


def _check_model(owner: str, model) -> None:
    if not isinstance(model, Model):
        raise TypeError(f"{owner}: model must be a newton_tendon Model, got {type(model).__name__}")


def _check_coordinates(owner: str, model: Model, joint_q, joint_qd):
    for name, arr, n in (("joint_q", joint_q, model.joint_coord_count), ("joint_qd", joint_qd, model.joint_dof_count)):
        if not isinstance(arr, wp.array):
            raise TypeError(f"{owner}: {name} must be a wp.array, got {type(arr).__name__}")
        if arr.shape != (n,) or arr.dtype != wp.float32:
            raise ValueError(f"{owner}: {name} must be a float32 array of shape ({n},), got {arr.dtype} {arr.shape}")
        if arr.device != model.device:
            raise ValueError(f"{owner}: {name} is on {arr.device}, the model on {model.device}")


def _check_selection(owner: str, model: Model, mask, indices, joint_mask=None):
    """The articulation filter (``mask`` or ``indices``, not both) and the launch size it implies."""
    if mask is not None and indices is not None:
        raise ValueError(f"{owner}: pass mask or indices, not both")
    for name, arr, n, dtype in (
        ("mask", mask, model.articulation_count, wp.bool),
        ("indices", indices, None, wp.int32),
        ("joint_mask", joint_mask, model.joint_count, wp.bool),
    ):
        if arr is None:
            continue
        bad_shape = not isinstance(arr, wp.array) or arr.ndim != 1 or (n is not None and arr.shape[0] != n)
        if bad_shape or arr.dtype != dtype:
            shape = f"shape ({n},)" if n is not None else "one dimension"
            raise ValueError(f"{owner}: {name} must be a {dtype.__name__} wp.array of {shape}")
        if arr.device != model.device:
            raise ValueError(f"{owner}: {name} is on {arr.device}, the model on {model.device}")
    return model.articulation_count if indices is None else indices.shape[0]


def eval_fk(
    model: Model,
    joint_q: wp.array,
    joint_qd: wp.array,
    state: State | Model,
    mask: wp.array | None = None,
    indices: wp.array | None = None,
    *,
    joint_mask: wp.array | None = None,
) -> None:
    """Forward kinematics: set ``state.body_q`` and ``state.body_qd`` from joint coordinates (newton's
    ``eval_fk``).

    Each articulation's joints are walked parents first; a joint's child body is placed at
    ``body_q[parent] * joint_X_p * X_j(q) * inverse(joint_X_c)`` and given its parent's rigid motion
    plus the joint's (the table in ``newton_tendon.kernels.kinematics``; a free joint's ``joint_qd`` is
    the COM's linear velocity then the angular velocity, relative to the parent, in the parent joint
    frame: world axes for a free joint to the world at the origin). Bodies whose joint is in no
    articulation, and bodies without a joint, keep their pose and velocity. Writes no array other than
    the state's and allocates nothing, so it can be captured in a graph.

    Args:
        model: The model.
        joint_q: Joint coordinates, shape [joint_coord_count], float32 (``model.joint_q``: the initial pose).
        joint_qd: Joint velocities, shape [joint_dof_count], float32.
        state: The State (or Model) whose ``body_q`` and ``body_qd`` are written.
        mask: Articulations to place, shape [articulation_count], bool (None: all).
        indices: Articulation indices to place, int32 (None: all); not with ``mask``.
        joint_mask: Joints whose child is placed, shape [joint_count], bool (None: all). An unselected
            joint's child keeps its pose and velocity, and selected joints below it start from them.

    Raises:
        TypeError, ValueError: an array of the wrong type, dtype, shape or device, or both ``mask`` and
            ``indices``.
    """
    owner = "eval_fk"
    _check_model(owner, model)
    check_state(owner, "state", state, model, allow_model=True)
    _check_coordinates(owner, model, joint_q, joint_qd)
    launches = _check_selection(owner, model, mask, indices, joint_mask)
    if launches == 0 or model.joint_count == 0:
        return
    wp.launch(
        eval_articulation_fk,
        dim=launches,
        inputs=[
            joint_q,
            joint_qd,
            mask,
            indices,
            joint_mask,
            body_model_struct(model),
            joint_model_struct(model),
            model.articulation_start,
            model._fk_joint_order,
        ],
        outputs=[state.body_q, state.body_qd],
        device=model.device,
    )


def eval_joint_coordinates(
    model: Model, state: State, joint_q: wp.array | None = None, joint_qd: wp.array | None = None
) -> tuple[wp.array, wp.array]:
    """Evaluate ``joint_q`` [joint_coord_count] and ``joint_qd`` [joint_dof_count] from ``state``'s bodies.

    Revolute: angle [rad] and rate [rad/s] about the axis; prismatic: displacement [m] and rate [m/s]
    along the axis; ball: relative quaternion (xyzw) and relative angular velocity in the parent
    joint frame; free: child joint frame pose in the parent joint frame, and the child COM's velocity relative to the
    parent's motion and the relative angular velocity, in the parent joint frame (newton's convention).
    Fixed joints have no coordinates. Every joint is evaluated, articulated or not. Pass preallocated
    arrays to stay graph-capturable.
    """
    owner = "eval_joint_coordinates"
    _check_model(owner, model)
    check_state(owner, "state", state, model, allow_model=True)
    if joint_q is None:
        joint_q = wp.zeros(model.joint_coord_count, dtype=float, device=model.device)
    if joint_qd is None:
        joint_qd = wp.zeros(model.joint_dof_count, dtype=float, device=model.device)
    _check_coordinates(owner, model, joint_q, joint_qd)
    if model.joint_count:
        wp.launch(
            _eval_joint_coordinates_kernel,
            dim=model.joint_count,
            inputs=[body_model_struct(model), joint_model_struct(model), state.body_q, state.body_qd],
            outputs=[joint_q, joint_qd],
            device=model.device,
        )
    return joint_q, joint_qd


def eval_ik(
    model: Model,
    state: State | Model,
    joint_q: wp.array,
    joint_qd: wp.array,
    mask: wp.array | None = None,
    indices: wp.array | None = None,
) -> None:
    """Joint coordinates from body poses and velocities (newton's ``eval_ik``): ``eval_joint_coordinates``
    written into the given arrays, the inverse of :func:`eval_fk`.

    Without ``mask`` or ``indices`` every joint is evaluated (articulated or not). With either, only the
    selected articulations' entries change; the first such call allocates a scratch pair of arrays on
    the model (later calls, and graph captures after it, allocate nothing).

    Args:
        model: The model.
        state: The State (or Model) whose ``body_q`` and ``body_qd`` are read.
        joint_q: Output joint coordinates, shape [joint_coord_count], float32.
        joint_qd: Output joint velocities, shape [joint_dof_count], float32.
        mask: Articulations to evaluate, shape [articulation_count], bool (None: all joints).
        indices: Articulation indices to evaluate, int32 (None: all joints); not with ``mask``.
    """
    owner = "eval_ik"
    _check_model(owner, model)
    check_state(owner, "state", state, model, allow_model=True)
    _check_coordinates(owner, model, joint_q, joint_qd)
    launches = _check_selection(owner, model, mask, indices)
    if mask is None and indices is None:
        eval_joint_coordinates(model, state, joint_q, joint_qd)
        return
    if launches == 0 or model.joint_count == 0:
        return
    scratch = getattr(model, "_ik_scratch", None)
    if scratch is None:
        scratch = (
            wp.zeros(model.joint_coord_count, dtype=float, device=model.device),
            wp.zeros(model.joint_dof_count, dtype=float, device=model.device),
        )
        model._ik_scratch = scratch
    eval_joint_coordinates(model, state, *scratch)
    wp.launch(
        copy_articulation_coordinates,
        dim=launches,
        inputs=[mask, indices, joint_model_struct(model), model.articulation_start, *scratch],
        outputs=[joint_q, joint_qd],
        device=model.device,
    )
