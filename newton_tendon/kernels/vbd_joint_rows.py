"""Index kept for the old import path: SolverVBD's joint rows live in ``kernels/joints/vbd_rows.py``."""

from newton_tendon.kernels.joints.vbd_rows import *  # noqa: F403
from newton_tendon.kernels.joints.vbd_rows import JointDuals, add_joint, add_joint_universal  # noqa: F401
