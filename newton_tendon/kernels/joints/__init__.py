"""Joints in maximal coordinates (one file per concern).

A joint connects a parent body (or the world, ``parent = -1``) to a child body through two joint
frames: ``X_wp = body_q[parent] * joint_X_p`` and ``X_wc = body_q[child] * joint_X_c``. Each joint
type removes degrees of freedom between the two frames:

=========  ===================================  ======================================
type       position rows (hard, compliance 0)   free coordinate (q, qd)
=========  ===================================  ======================================
revolute   anchors coincide; axes aligned       twist angle about axis [rad]
prismatic  anchor offset only along axis;       displacement along axis [m]
           orientations equal
ball       anchors coincide                     relative quaternion (4), rel. ang. vel
fixed      anchors coincide; orientations equal  none
free       none                                 pose (7) / body velocity (6)
=========  ===================================  ======================================

Revolute and prismatic joints also carry a limit row (hard, unilateral) and a target drive row
(compliant, implicit PD) on their single coordinate.

Files:

- ``model.py``: ``JointModel`` (the per-joint constants kernels take) and the joint frames' poses.
- ``coordinates.py``: q and qd from the bodies (``eval_joint_coordinates``), multi-axis joints' rate
  axes (``universal_axes``, ``euler_axes``) and generalized forces as body wrenches.
- ``xpbd_rows.py``: SolverXPBD's joint pass (one block of rows per joint).
- ``vbd_rows.py``: SolverVBD's joint rows (imported by the VBD sweep, not here: it needs the VBD
  block helpers).
"""

from newton_tendon.kernels.joints.articulation import (
    ARTICULATION_MODULE,
    TreeNodes,
    mat66d,
    solve_articulation_kernel,
    vec6d,
)
from newton_tendon.kernels.joints.coordinates import (
    anchor_velocities,
    compute_joint_wrenches,
    d6_euler_axes,
    d6_euler_rates,
    d6_universal_axes,
    d6_wrenches,
    euler_axes,
    eval_joint_coordinates,
    universal_axes,
)
from newton_tendon.kernels.joints.model import JointModel, body_spatial_velocity, parent_pose
from newton_tendon.kernels.joints.xpbd_rows import (
    GROUPS_MODULE,
    VARIANT_MODULE,
    BodyPair,
    coordinate_row,
    joint_block_correction,
    project_block,
    root_joint_correction,
    solve_joint_block,
    solve_joint_group_kernel,
    solve_joint_kernel,
)

__all__ = [
    "ARTICULATION_MODULE",
    "TreeNodes",
    "mat66d",
    "solve_articulation_kernel",
    "vec6d",
    "GROUPS_MODULE",
    "VARIANT_MODULE",
    "BodyPair",
    "JointModel",
    "anchor_velocities",
    "body_spatial_velocity",
    "compute_joint_wrenches",
    "coordinate_row",
    "d6_euler_axes",
    "d6_euler_rates",
    "d6_universal_axes",
    "d6_wrenches",
    "euler_axes",
    "eval_joint_coordinates",
    "joint_block_correction",
    "parent_pose",
    "project_block",
    "root_joint_correction",
    "solve_joint_block",
    "solve_joint_group_kernel",
    "solve_joint_kernel",
    "universal_axes",
]
