"""The scene builder: ``ModelBuilder`` collects bodies, shapes, joints, worlds, routed tendons,
transmission tendons and custom attributes as plain Python lists, then ``finalize`` turns them into
a :class:`~newton_tendon.Model` of Warp arrays.

``ModelBuilder`` is composed of one part per entity, each in its own module:

- ``bodies``: rigid bodies (``add_body``, ``add_link``);
- ``shapes``: collision shapes, the ground plane and collision filters (``add_shape_*``);
- ``joints``: joints and articulations (``add_joint_*``, ``add_articulation``);
- ``routed_tendons``: cables routed through guides (``add_tendon``);
- ``transmission_tendons``: spatial and fixed transmission tendons and their couplings;
- ``custom_attributes``: user-declared per-entity attributes;
- ``worlds``: merging builders (``add_builder``, ``add_world``, ``replicate``);
- ``colouring``: the body colouring SolverVBD uses (``color``);
- ``model_builder``: the composed class, its importer entry points and ``finalize``.

The builder imports no importer at module level: ``add_usd``/``add_mjcf`` import theirs when
called, and the importers build through the builder's public methods.
"""

# The names importers and tests import from here (the argument checks are shared with the importers).
from ..tendon import AttributeFrequency as AttributeFrequency
from ..tendon import CustomAttribute as CustomAttribute
from ..tendon import TendonGuide as TendonGuide
from ..tendon import TendonGuideType as TendonGuideType
from ._checks import _AXES as _AXES
from ._checks import _flag as _flag
from ._checks import _index as _index
from ._checks import _label as _label
from ._checks import _real as _real
from ._checks import _vec3 as _vec3
from ._checks import _xform as _xform
from .joints import _INF as _INF
from .joints import JointDofConfig, JointTargetMode
from .model_builder import ModelBuilder
from .transmission_tendons import TransmissionBuilder as TransmissionBuilder
from .worlds import _check_label_clash as _check_label_clash

__all__ = ["JointDofConfig", "JointTargetMode", "ModelBuilder"]
