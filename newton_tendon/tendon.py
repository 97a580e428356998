"""Routed cables: the guide description users pass to ``ModelBuilder.add_tendon``.

A routed tendon is a massless cable through an ordered list of guides on rigid bodies. Each guide
after the first owns the straight span that arrives at it (its ``compliance``, ``damping`` and
``rest_length`` describe that span). See ``docs/cables.md`` for the model and the solver.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from newton_tendon.kernels import types as T


class TendonGuideType(enum.IntEnum):
    """How the cable interacts with a guide's body."""

    ROLLER = T.GUIDE_ROLLER
    """A circular roller: the cable wraps around it between two tangent points. Internal guides only:
    a route begins and ends at a point guide (``add_tendon`` rejects a first or last ROLLER)."""
    ANCHOR = T.GUIDE_ANCHOR
    """A body-local point the cable is fixed to; no material passes it."""
    PINHOLE = T.GUIDE_PINHOLE
    """A body-local point the cable slides through, with capstan friction over the bend angle."""


class TendonGuideFlags(enum.IntFlag):
    """Per-guide flags stored in ``Model.tendon_guide_flags``."""

    DYNAMIC = T.GUIDE_FLAG_DYNAMIC
    """The roller engages and releases from the route at the start of each step."""

    WINCH = T.GUIDE_FLAG_WINCH
    """An end ANCHOR that pays out or reels in cable: ``Control.tendon_guide_winch_length`` [m]."""

    WINCH_FORCE = T.GUIDE_FLAG_WINCH_FORCE
    """With WINCH: the winch holds the cable at the tension ``Control.tendon_guide_winch_force`` [N]
    instead of paying out a commanded length."""


class AttributeFrequency(enum.IntEnum):
    """The domain a custom attribute has one value per (newton's ``Model.AttributeFrequency``; the
    numbers are newton's, so an int written for newton means the same domain here)."""

    JOINT = 1
    BODY = 5
    SHAPE = 6
    TENDON = 20
    TENDON_GUIDE = 21
    TENDON_SEGMENT = 22

    @property
    def domain(self) -> str:
        """The entity domain's name ("body", "tendon_guide", ...), also used for attribute references."""
        return self.name.lower()


class AttributeAssignment(enum.IntEnum):
    """Which object holds a custom attribute's array (newton's ``Model.AttributeAssignment``)."""

    MODEL = 0
    """``model.<name>`` (or ``model.<namespace>.<name>``), and ``model.custom_attributes[key]``."""
    STATE = 1
    """Each ``model.state()`` gets its own copy, ``state.<name>``; ``State.assign`` copies it."""
    CONTROL = 2
    """Each ``model.control()`` gets its own copy, ``control.<name>``; ``Control.assign`` copies it."""


@dataclass(frozen=True, kw_only=True)
class TendonGuide:
    """One guide of a routed tendon (all fields keyword-only; the object is immutable).

    Args:
        body: Body index the guide is attached to, -1 for the world.
        guide_type: ``TendonGuideType`` (default ANCHOR). The first and last guides are ANCHORs or
            PINHOLEs (a PINHOLE there holds the cable like an anchor); a ROLLER must be internal.
        radius: Roller contact radius [m] (ROLLER only, > 0).
        orientation: Winding side of a roller, +1 (counter-clockwise about ``axis``) or -1.
        mu: Capstan friction coefficient [-] of a PINHOLE or ROLLER (0 = free slip).
        dynamic: The roller engages/releases automatically (internal ROLLER only).
        winch: The guide is a winch (first or last ANCHOR only): ``Control.tendon_guide_winch_length``
            sets the cable paid out there [m] relative to the initial state, per step.
        winch_force: The winch (``winch=True``) is commanded by its reel-in force instead:
            ``Control.tendon_guide_winch_force`` [N] is the cable tension it holds, per step. At most
            one force winch per tendon.
        offset: Guide point or roller centre in the body frame [m].
        axis: Roller axis in the body frame (normalized at build time).
        compliance: Compliance of the incoming span [m/N] (1/stiffness; 0 = inextensible).
        damping: Damping of the incoming span [N s/m].
        rest_length: Rest length of the incoming span [m]; negative = measure from the initial pose.
        custom_attributes: Values of declared TENDON_GUIDE custom attributes, by name.
        segment_custom_attributes: Values of declared TENDON_SEGMENT attributes for the incoming span.
    """

    body: int
    guide_type: TendonGuideType | int = TendonGuideType.ANCHOR
    radius: float = 0.0
    orientation: int = 1
    mu: float = 0.0
    dynamic: bool = False
    winch: bool = False
    winch_force: bool = False
    offset: tuple = (0.0, 0.0, 0.0)
    axis: tuple = (0.0, 0.0, 1.0)
    compliance: float = 0.0
    damping: float = 0.0
    rest_length: float = -1.0
    custom_attributes: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    segment_custom_attributes: dict[str, Any] | None = field(default=None, hash=False, compare=False)


@dataclass(frozen=True, kw_only=True)
class CustomAttribute:
    """Declaration of a user attribute with one value per entity of ``frequency``.

    Args:
        name: Attribute name, a Python identifier.
        frequency: ``AttributeFrequency`` of the values.
        dtype: ``float`` (float32), ``int`` (int32) or ``"vec3"``; newton's Warp dtypes ``wp.float32``,
            ``wp.int32`` and ``wp.vec3`` mean the same.
        default: Value of entities that do not author it (None: zero of the dtype).
        references: For int attributes, the domain the values index ("body", "shape", "joint",
            "tendon", "tendon_guide", "tendon_segment", or the ``AttributeFrequency`` member); such
            values are shifted when builders are merged or replicated, and body references follow
            ``collapse_fixed_joints`` (negative values are kept: they mean "none").
        assignment: ``AttributeAssignment``: the finalized array lives on the model (default), or a copy
            on each State or Control.
        namespace: Optional group name (an identifier): the attribute's key becomes
            ``"<namespace>:<name>"`` (used in ``custom_attributes=`` dicts and
            ``model.custom_attributes``) and it is reached as ``model.<namespace>.<name>``.
        values: Values authored at declaration, {entity index: value} (newton's field). Builders keep
            their own copy: ``builder.custom_attributes[key].values`` holds that builder's values.
    """

    name: str
    frequency: AttributeFrequency
    dtype: Any = float
    default: Any = None
    references: str | None = None
    assignment: AttributeAssignment = AttributeAssignment.MODEL
    namespace: str | None = None
    values: dict[int, Any] | None = field(default=None, hash=False, compare=False)

    @property
    def key(self) -> str:
        """The name builders and models index the attribute by: ``"<namespace>:<name>"`` or ``name``."""
        return self.name if self.namespace is None else f"{self.namespace}:{self.name}"


__all__ = [
    "AttributeAssignment",
    "AttributeFrequency",
    "CustomAttribute",
    "TendonGuide",
    "TendonGuideFlags",
    "TendonGuideType",
]
