"""Routed tendons (cables through guides): their storage, ``add_tendon`` with its route validation, and
merging another builder's tendons.

Storage is per tendon, per guide, and per segment (the incoming span of guides 1..n-1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from newton_tendon.kernels import types as T

from .. import _hostmath as hm
from ..tendon import AttributeFrequency, TendonGuide, TendonGuideType
from ._checks import _index, _label, _real, _vec3

if TYPE_CHECKING:
    from .model_builder import ModelBuilder


class RoutedTendonBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: the routed-tendon lists and ``add_tendon``."""

    def _init_tendons(self):
        # Routed tendons (per tendon, per guide, per segment = incoming span of guides 1..n-1).
        self.tendon_start: list[int] = []
        self.tendon_world: list[int] = []
        self.tendon_label: list[str] = []
        self.tendon_guide_body: list[int] = []
        self.tendon_guide_type: list[int] = []
        self.tendon_guide_flags: list[int] = []
        self.tendon_guide_offset: list[tuple] = []
        self.tendon_guide_axis: list[tuple] = []
        self.tendon_guide_radius: list[float] = []
        self.tendon_guide_orientation: list[int] = []
        self.tendon_guide_mu: list[float] = []
        self.tendon_segment_compliance: list[float] = []
        self.tendon_segment_damping: list[float] = []
        self.tendon_segment_rest_length: list[float] = []

    @property
    def tendon_count(self) -> int:
        """Number of routed tendons."""
        return len(self.tendon_start)

    @property
    def tendon_guide_count(self) -> int:
        """Number of tendon guides over all tendons."""
        return len(self.tendon_guide_body)

    @property
    def tendon_segment_count(self) -> int:
        """Number of tendon segments (one fewer than guides per tendon)."""
        return len(self.tendon_segment_compliance)

    def add_tendon(self, route: Sequence[TendonGuide], *, label: str | None = None, custom_attributes=None) -> int:
        """Add a routed tendon through an ordered list of guides; returns the tendon index.

        The whole route is validated before anything is stored; errors name the guide index and the
        rule. After ``finalize`` the tendon's guides are ``tendon_start[t] .. tendon_start[t+1]`` and
        its segments start at ``tendon_start[t] - t`` (segment k is the incoming span of guide k+1).
        """
        t = self.tendon_count
        owner = f"add_tendon(label={label!r})"
        label = _label(owner, label, f"tendon_{t}")
        if isinstance(route, (str, bytes)) or not isinstance(route, Sequence):
            raise TypeError(f"{owner}: route must be a sequence of TendonGuide, got {type(route).__name__}")
        route = list(route)
        if len(route) < 2:
            raise ValueError(f"{owner}: a route needs at least two guides, got {len(route)}")
        tendon_attrs = self._check_custom_values(owner, custom_attributes, AttributeFrequency.TENDON)
        guides = []
        world = None
        n = len(route)
        for i, g in enumerate(route):
            go = f"{owner}: guide {i}"
            if not isinstance(g, TendonGuide):
                raise TypeError(f"{go} must be a TendonGuide, got {type(g).__name__}")
            body = _index(go, "body", g.body, self.body_count, allow_world=True)
            # A world guide (body -1) belongs to the world being authored (newton's rule).
            w = self.body_world[body] if body >= 0 else self.current_world
            where = (
                f"body {body} is in world {w}" if body >= 0 else f"a world guide (body -1) is in the current world {w}"
            )
            if world is None:
                world = w
            elif w != world:
                raise ValueError(
                    f"{go}: {where} but earlier guides are in world {world}; all guides of a tendon must "
                    "be in the same world (add a tendon with world guides between begin_world() and "
                    "end_world() of its bodies' world)"
                )
            if isinstance(g.guide_type, (bool, np.bool_)) or not isinstance(g.guide_type, (int, np.integer)):
                raise TypeError(f"{go}: guide_type must be a TendonGuideType, got {type(g.guide_type).__name__}")
            try:
                gtype = int(TendonGuideType(g.guide_type))
            except (ValueError, TypeError):
                raise ValueError(
                    f"{go}: guide_type {g.guide_type!r} is not a known guide type; use TendonGuideType"
                ) from None
            if isinstance(g.orientation, (bool, np.bool_)) or not isinstance(g.orientation, (int, np.integer)):
                raise TypeError(f"{go}: orientation must be the int 1 or -1, got {type(g.orientation).__name__}")
            if g.orientation not in (1, -1):
                raise ValueError(f"{go}: orientation must be 1 or -1, got {g.orientation!r}")
            radius = _real(go, "radius", g.radius, lo=0.0)
            mu = _real(go, "mu (friction coefficient)", g.mu, lo=0.0)
            compliance = _real(go, "compliance", g.compliance, lo=0.0)
            damping = _real(go, "damping", g.damping, lo=0.0)
            rest = _real(go, "rest_length (rest length)", g.rest_length)
            offset = _vec3(go, "offset", g.offset)
            axis = _vec3(go, "axis", g.axis, nonzero=True)
            if gtype == TendonGuideType.ROLLER and radius <= 0.0:
                raise ValueError(f"{go}: a ROLLER needs radius > 0, got {radius}")
            if gtype == TendonGuideType.ROLLER and (i == 0 or i == n - 1):
                raise ValueError(
                    f"{go}: the first and last guides must be point guides (ANCHOR or PINHOLE), not a ROLLER, which "
                    "needs guides on both sides: "
                    "a roller's cable lies between the tangent points of its two spans, and an end roller has "
                    "one (end the route at an ANCHOR on the roller's body, or at a winch)"
                )
            if i == 0 and (compliance != 0.0 or damping != 0.0 or rest != -1.0):
                raise ValueError(
                    f"{go}: the first guide has no incoming span; compliance, damping and rest_length must keep "
                    "their defaults (0, 0, -1)"
                )
            if not isinstance(g.dynamic, (bool, np.bool_)):
                raise TypeError(f"{go}: dynamic must be a bool, got {type(g.dynamic).__name__}")
            dynamic = bool(g.dynamic)
            if dynamic:
                if gtype != TendonGuideType.ROLLER:
                    raise ValueError(f"{go}: dynamic=True: dynamic routing is only supported for ROLLER guides")
                if i == 0 or i == n - 1:
                    raise ValueError(
                        f"{go}: dynamic=True is not supported on the first or last guide; a dynamic ROLLER needs "
                        "guides on both sides"
                    )
                if guides and guides[-1]["dynamic"]:
                    raise ValueError(
                        f"{go}: Consecutive dynamic ROLLER guides are not supported: dynamic rollers cannot be "
                        f"adjacent (guide {i - 1} is dynamic too)"
                    )
            if not isinstance(g.winch, (bool, np.bool_)):
                raise TypeError(f"{go}: winch must be a bool, got {type(g.winch).__name__}")
            winch = bool(g.winch)
            if winch and (gtype != TendonGuideType.ANCHOR or 0 < i < n - 1):
                raise ValueError(f"{go}: winch=True is only supported on an ANCHOR that is the first or last guide")
            if not isinstance(g.winch_force, (bool, np.bool_)):
                raise TypeError(f"{go}: winch_force must be a bool, got {type(g.winch_force).__name__}")
            winch_force = bool(g.winch_force)
            if winch_force and not winch:
                raise ValueError(f"{go}: winch_force=True needs winch=True (it selects how the winch is commanded)")
            if winch_force and any(p["flags"] & T.GUIDE_FLAG_WINCH_FORCE for p in guides):
                raise ValueError(f"{go}: a tendon has at most one force winch (guide 0 is one already)")
            gattrs = self._check_custom_values(go, g.custom_attributes, AttributeFrequency.TENDON_GUIDE)
            sattrs = self._check_custom_values(go, g.segment_custom_attributes, AttributeFrequency.TENDON_SEGMENT)
            if i == 0 and sattrs:
                raise ValueError(f"{go}: the first guide has no incoming span; segment_custom_attributes must be empty")
            norm = math.sqrt(sum(c * c for c in axis))
            guides.append(
                dict(
                    body=body,
                    type=gtype,
                    flags=(T.GUIDE_FLAG_DYNAMIC if dynamic else 0)
                    | (T.GUIDE_FLAG_WINCH if winch else 0)
                    | (T.GUIDE_FLAG_WINCH_FORCE if winch_force else 0),
                    dynamic=dynamic,
                    offset=offset,
                    axis=tuple(c / norm for c in axis),
                    radius=radius,
                    orientation=int(g.orientation),
                    mu=mu,
                    compliance=compliance,
                    damping=damping,
                    rest=rest,
                    gattrs=gattrs,
                    sattrs=sattrs,
                )
            )
        # Everything is valid: append.
        g0 = self.tendon_guide_count
        s0 = self.tendon_segment_count
        self.tendon_start.append(g0)
        self.tendon_world.append(self.current_world if world is None else world)
        self.tendon_label.append(label)
        for name, v in tendon_attrs.items():
            self.custom_attribute_values[name][t] = v
        for i, g in enumerate(guides):
            self.tendon_guide_body.append(g["body"])
            self.tendon_guide_type.append(g["type"])
            self.tendon_guide_flags.append(g["flags"])
            self.tendon_guide_offset.append(g["offset"])
            self.tendon_guide_axis.append(g["axis"])
            self.tendon_guide_radius.append(g["radius"])
            self.tendon_guide_orientation.append(g["orientation"])
            self.tendon_guide_mu.append(g["mu"])
            for name, v in g["gattrs"].items():
                self.custom_attribute_values[name][g0 + i] = v
            if i > 0:
                self.tendon_segment_compliance.append(g["compliance"])
                self.tendon_segment_damping.append(g["damping"])
                self.tendon_segment_rest_length.append(g["rest"])
                for name, v in g["sattrs"].items():
                    self.custom_attribute_values[name][s0 + i - 1] = v
        self.body_color = None
        return t

    def _merge_tendons(self, other: ModelBuilder, xf, identity: bool, remap_world, label_prefix: str, b0: int):
        """Append ``other``'s routed tendons; world-attached guide geometry follows the placement ``xf``."""
        g0 = self.tendon_guide_count
        self.tendon_start.extend(s + g0 for s in other.tendon_start)
        self.tendon_world.extend(remap_world(w) for w in other.tendon_world)
        self.tendon_label.extend(label_prefix + s for s in other.tendon_label)
        for i in range(other.tendon_guide_count):
            body = other.tendon_guide_body[i]
            offset = other.tendon_guide_offset[i]
            axis = other.tendon_guide_axis[i]
            if body < 0 and not identity:
                offset = hm.transform_point(xf, offset)
                axis = hm.quat_rotate(xf[3:], axis)
            self.tendon_guide_body.append(body + b0 if body >= 0 else -1)
            self.tendon_guide_offset.append(tuple(float(c) for c in offset))
            self.tendon_guide_axis.append(tuple(float(c) for c in axis))
        for name in ("type", "flags", "radius", "orientation", "mu"):
            getattr(self, "tendon_guide_" + name).extend(getattr(other, "tendon_guide_" + name))
        for name in ("compliance", "damping", "rest_length"):
            getattr(self, "tendon_segment_" + name).extend(getattr(other, "tendon_segment_" + name))
