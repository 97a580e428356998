"""newton_tendon: batched rigid bodies driven by tendons, on NVIDIA Warp.

Code written for newton's tendon API runs with ``import newton_tendon as newton``.
"""

from . import (
    _usd_plugin,  # noqa: F401  (first: sets USD's plugin path before pxr loads)
    io,
    rl,
    solvers,
    viewer,
)
from .axis import Axis
from .builder import JointDofConfig, JointTargetMode, ModelBuilder
from .collision import CollisionPipeline, Contacts
from .exceptions import NewtonDeprecationWarning
from .io import load, save
from .kinematics import eval_fk, eval_ik, eval_joint_coordinates
from .model import Model, ModelFlags
from .state import Control, State, StateFlags
from .tendon import AttributeFrequency, CustomAttribute, TendonGuide, TendonGuideFlags, TendonGuideType

__version__ = "0.1.0"

__all__ = [
    "AttributeFrequency",
    "Axis",
    "CustomAttribute",
    "TendonGuide",
    "TendonGuideFlags",
    "TendonGuideType",
    "CollisionPipeline",
    "Contacts",
    "Control",
    "JointDofConfig",
    "JointTargetMode",
    "Model",
    "ModelBuilder",
    "ModelFlags",
    "NewtonDeprecationWarning",
    "State",
    "StateFlags",
    "eval_fk",
    "eval_ik",
    "eval_joint_coordinates",
    "io",
    "load",
    "rl",
    "save",
    "solvers",
    "viewer",
]
