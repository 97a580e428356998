"""``ModelBuilder``, composed of one part per entity, and its ``finalize`` and importer entry points.

Every ``add_*`` method validates all of its arguments before it appends anything, so a call that
raises leaves the builder exactly as it was. Error messages name the entity and the rule.
"""

from __future__ import annotations

import warp as wp

from ..axis import Axis
from ..finalize import finalize_model
from ..tendon import CustomAttribute
from ._checks import _flag, _real, _vec3
from .bodies import BodyBuilder
from .collapse import CollapseBuilder
from .colouring import ColouringBuilder
from .custom_attributes import CustomAttributeBuilder
from .joints import JointBuilder
from .routed_tendons import RoutedTendonBuilder
from .shapes import ShapeBuilder
from .transmission_tendons import TransmissionBuilder
from .worlds import WorldBuilder


class ModelBuilder(
    BodyBuilder,
    ShapeBuilder,
    JointBuilder,
    RoutedTendonBuilder,
    TransmissionBuilder,
    CustomAttributeBuilder,
    WorldBuilder,
    CollapseBuilder,
    ColouringBuilder,
):
    """Collects a scene and turns it into a :class:`Model` with :meth:`finalize`.

    Args:
        up_axis: an :class:`Axis` (default ``Axis.Z``), its letter ("X", "y", ...) or its int 0, 1 or
            2. Stored as an ``Axis``; ground planes and the default gravity follow it.
        gravity: a scalar acceleration along the up axis [m/s^2] (default -9.81, so objects fall
            towards -up_axis), or a 3-vector [m/s^2] used as given whatever the up axis. ``None``
            (newton's default) means -9.81 along the up axis.

    Worlds: entities added directly belong to ``current_world`` (default -1). ``add_world`` and
    ``replicate`` copy a builder into new worlds; bodies of different worlds never interact. A
    builder without worlds finalizes as a single world 0. Shapes on body -1 of world -1 (for example
    the ground plane) are shared by all worlds.
    """

    CustomAttribute = CustomAttribute
    """newton's name for :class:`~newton_tendon.CustomAttribute` (``ModelBuilder.CustomAttribute``)."""

    def __init__(self, up_axis: Axis | str | int = Axis.Z, gravity=-9.81):
        self.up_axis = Axis.from_any(up_axis, "ModelBuilder: up_axis")
        """The up axis, an :class:`Axis`."""
        if gravity is None:
            gravity = -9.81
        if isinstance(gravity, (int, float)) and not isinstance(gravity, bool):
            g = [0.0, 0.0, 0.0]
            g[int(self.up_axis)] = _real("ModelBuilder", "gravity", gravity)
            self.gravity = tuple(g)
        else:
            self.gravity = _vec3("ModelBuilder", "gravity", gravity)
        self.current_world = -1
        """The world that entities added next belong to (-1: shared by all worlds); see ``begin_world``."""
        self.world_count = 0
        """Number of worlds."""
        self.rigid_contact_margin = 0.01
        """Distance [m] below which shape pairs generate contact candidates."""
        # Entity storage, in this order: finalize's float32 check walks ``vars(self)`` and reports the
        # first offending field it meets.
        self._init_bodies()
        self._init_shapes()
        self._init_joints()
        self._init_tendons()
        self._init_custom_attributes()
        self._init_transmissions()

    # ------------------------------------------------------------------------------------------
    # Importers (the parsers live in their own modules and import pxr / xml only when called)

    def add_usd(self, source, **kwargs):
        """Append a USD stage (a path or an open ``Usd.Stage``): UsdPhysics bodies, shapes and joints,
        MuJoCo tendon prims and native routed-cable prims. See :func:`newton_tendon.usd.add_usd`."""
        from ..usd import add_usd

        return add_usd(self, source, **kwargs)

    def add_mjcf(self, source, **kwargs):
        """Append an MJCF model (a path or an XML string), tendons included.
        See :func:`newton_tendon.mjcf.add_mjcf`."""
        from ..mjcf import add_mjcf

        return add_mjcf(self, source, **kwargs)

    def add_urdf(self, source, **kwargs):
        """Append a URDF robot (bodies, joints, primitive shapes; the ``urdf`` extra).
        See :func:`newton_tendon.io.urdf.add_urdf`."""
        from ..io.urdf import add_urdf

        return add_urdf(self, source, **kwargs)

    def finalize(self, device=None, requires_grad: bool = False):
        """Validate the whole scene and build a :class:`Model` on ``device`` (default: Warp's default device)."""
        requires_grad = _flag("finalize", "requires_grad", requires_grad)
        if device is not None:
            if not isinstance(device, str) and not hasattr(device, "is_cuda"):
                raise TypeError(f"finalize: device must be a Warp device or its name, got {type(device).__name__}")
            try:
                device = wp.get_device(device)
            except (RuntimeError, ValueError) as e:
                raise ValueError(f"finalize: device {device!r} is not available: {e}") from None
        return finalize_model(self, device, requires_grad)
