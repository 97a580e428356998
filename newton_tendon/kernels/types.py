"""Enumerations and flags shared by the host package and the kernels.

Plain integer constants so they can be used both as Python values (builder, tests) and as
compile-time constants inside kernels.
"""

import warp as wp

# Joint types. The numbering follows newton's, so stored models and user code carry over.
JOINT_PRISMATIC = wp.constant(0)
JOINT_REVOLUTE = wp.constant(1)
JOINT_BALL = wp.constant(2)
JOINT_FIXED = wp.constant(3)
JOINT_FREE = wp.constant(4)
JOINT_D6 = wp.constant(6)
"""Generic joint (newton's D6): up to three linear and three angular free axes, each a coordinate
with its own limit and drive; see ``newton_tendon.kernels.joints``. newton's 5 (distance) has no
counterpart here."""

# Number of generalized coordinates / velocities per joint type, indexed by joint type; a D6 joint
# has one coordinate per free axis (``joint_dof_dim``), the entry here is only a placeholder.
JOINT_COORD_COUNT = (1, 1, 4, 0, 7, 0, 0)
JOINT_DOF_COUNT = (1, 1, 3, 0, 6, 0, 0)
JOINT_DOF_DIM = ((1, 0), (0, 1), (0, 3), (0, 0), (3, 3), (0, 0), (0, 0))
"""(linear, angular) free axes per joint type, as newton's ``Model.joint_dof_dim``; D6 joints store theirs."""

# Shape types. Ordered so that a collision pair (a, b) is stored with type(a) <= type(b):
# a plane is always the first shape of its pair.
SHAPE_PLANE = wp.constant(0)
SHAPE_SPHERE = wp.constant(1)
SHAPE_CAPSULE = wp.constant(2)
SHAPE_BOX = wp.constant(3)
SHAPE_CYLINDER = wp.constant(4)
SHAPE_ELLIPSOID = wp.constant(5)
SHAPE_MESH = wp.constant(6)

SHAPE_TYPE_NAMES = {0: "plane", 1: "sphere", 2: "capsule", 3: "box", 4: "cylinder", 5: "ellipsoid", 6: "mesh"}

# Body flags (bit field).
BODY_DYNAMIC = wp.constant(0)
BODY_KINEMATIC = wp.constant(1)

# Routed-cable guide types and flags (numbering follows newton's TendonGuideType).
GUIDE_ROLLER = wp.constant(0)
GUIDE_ANCHOR = wp.constant(1)
GUIDE_PINHOLE = wp.constant(2)
GUIDE_FLAG_DYNAMIC = wp.constant(1)
GUIDE_FLAG_WINCH = wp.constant(2)
GUIDE_FLAG_WINCH_FORCE = wp.constant(4)

GUIDE_TYPE_NAMES = {0: "ROLLER", 1: "ANCHOR", 2: "PINHOLE"}
