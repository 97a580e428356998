"""Worlds: merging a whole builder into this one (``add_builder``), as a new world (``add_world``) or as
a grid of copies (``replicate``).

``add_builder`` checks everything first (types, target world, articulation grouping, custom
attribute declarations, label clashes), then asks each entity part to append ``other``'s entities
with indices remapped and world-attached geometry placed by ``xform``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .. import _hostmath as hm
from ._checks import _vec3, _xform

if TYPE_CHECKING:
    from .model_builder import ModelBuilder


def _check_label_clash(owner: str, kind: str, labels, worlds, new_labels, new_worlds):
    """Raise if a new (label, world) pair names an entity that already exists there: labels of
    transmission tendons and couplings are unique within a world (world -1 is shared by all)."""
    taken: dict[str, set[int]] = {}
    for label, w in zip(labels, worlds, strict=True):
        taken.setdefault(label, set()).add(w)
    for label, w in zip(new_labels, new_worlds, strict=True):
        have = taken.get(label, set())
        if w in have or (have and (w == -1 or -1 in have)):
            raise ValueError(
                f"{owner}: {kind} label {label!r} already exists in world {w}; labels are unique per world "
                "(pass label_prefix to rename the added ones)"
            )
        taken.setdefault(label, set()).add(w)


class WorldBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: ``add_builder``, ``add_world`` and ``replicate``.
    Every class that derives from it is a full ``ModelBuilder``."""

    def add_builder(self, other: ModelBuilder, xform=None, world: int | None = None, *, label_prefix: str = ""):
        """Append everything of ``other``, placed by ``xform``, with all indices remapped.

        Entities of ``other`` in its world -1 go to ``world`` (default: ``self.current_world``);
        ``other``'s own worlds are appended after this builder's worlds.
        """
        owner = "add_builder"
        if not isinstance(label_prefix, str):
            raise TypeError(f"{owner}: label_prefix must be a str, got {type(label_prefix).__name__}")
        if not isinstance(other, WorldBuilder):
            raise TypeError(f"{owner}: other must be a ModelBuilder, got {type(other).__name__}")
        if other is self:
            raise ValueError(f"{owner}: cannot add a builder to itself")
        xf = _xform(owner, "xform", xform)
        if world is None:
            world = self.current_world
        if isinstance(world, bool) or not isinstance(world, (int, np.integer)):
            raise TypeError(f"{owner}: world must be an int, got {type(world).__name__}")
        if world < -1:
            raise ValueError(f"{owner}: world must be -1 or a world index >= 0, got {world!r}")
        if world >= self.world_count:
            raise ValueError(f"{owner}: world {world} does not exist yet ({self.world_count} worlds); use add_world")
        world_shift = self.world_count
        if other.articulation_start and self.articulation_joint_end != self.joint_count:
            raise ValueError(
                f"{owner}: this builder has joints outside any articulation; group them with "
                "add_articulation before adding a builder that has articulations"
            )

        def remap_world(w):
            return world if w < 0 else w + world_shift

        for name, attr in other.custom_attributes.items():
            mine = self.custom_attributes.get(name)
            if mine is not None and mine != attr:
                raise ValueError(f"{owner}: custom attribute '{name}' is declared differently in both builders")
        for kind, labels, worlds, new_labels, new_worlds in (
            (
                "transmission tendon",
                self.transmission_label,
                self.transmission_world,
                other.transmission_label,
                other.transmission_world,
            ),
            ("tendon coupling", self.coupling_label, self.coupling_world, other.coupling_label, other.coupling_world),
        ):
            _check_label_clash(
                owner,
                kind,
                labels,
                worlds,
                [label_prefix + s for s in new_labels],
                [remap_world(w) for w in new_worlds],
            )
        b0 = self.body_count
        s0 = self.shape_count
        j0 = self.joint_count
        offsets = {d: self._domain_count(d) for d in self._REFERENCE_DOMAINS}
        identity = xf == hm.IDENTITY
        self._merge_bodies(other, xf, identity, remap_world, label_prefix)
        self._merge_shapes(other, xf, identity, remap_world, label_prefix, b0, s0)
        self._merge_joints(other, xf, identity, remap_world, label_prefix, b0, j0)
        self._merge_tendons(other, xf, identity, remap_world, label_prefix, b0)
        self._merge_transmissions(other, xf, identity, remap_world, label_prefix, b0, j0)
        self._merge_custom_attributes(other, offsets)
        self.world_count += other.world_count
        self.body_color = None

    def add_world(self, other: ModelBuilder, xform=None) -> int:
        """Append ``other`` as a new world; returns the new world's index. Labels get a ``world_<i>/`` prefix."""
        w = self.world_count
        self.world_count += 1
        try:
            self.add_builder(other, xform, world=w, label_prefix=f"world_{w}/")
        except Exception:
            self.world_count -= 1
            raise
        return w

    def replicate(self, builder: ModelBuilder, world_count: int, spacing=(0.0, 0.0, 0.0)):
        """Append ``world_count`` copies of ``builder`` as new worlds, laid on a grid with ``spacing`` [m].

        Worlds never interact, so the spacing only matters for viewing.
        """
        owner = "replicate"
        if not isinstance(builder, WorldBuilder):
            raise TypeError(f"{owner}: builder must be a ModelBuilder, got {type(builder).__name__}")
        if isinstance(world_count, bool) or not isinstance(world_count, (int, np.integer)):
            raise TypeError(f"{owner}: world_count must be an int, got {type(world_count).__name__}")
        if world_count < 1:
            raise ValueError(f"{owner}: world_count must be >= 1, got {world_count!r}")
        if builder.world_count != 0:
            raise ValueError(f"{owner}: the builder to replicate must not contain worlds itself")
        sp = _vec3(owner, "spacing", spacing)
        side = math.ceil(world_count ** (1.0 / 3.0)) if sp[2] != 0.0 else math.ceil(math.sqrt(world_count))
        for i in range(world_count):
            ix, iy, iz = i % side, (i // side) % side, i // (side * side)
            offset = (ix * sp[0], iy * sp[1], iz * sp[2])
            self.add_world(builder, (*offset, 0.0, 0.0, 0.0, 1.0))
