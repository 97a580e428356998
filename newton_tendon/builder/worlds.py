"""Worlds: authoring a world in place (``begin_world``/``end_world``), merging a whole builder into this
one (``add_builder``), as a new world (``add_world``) or as a grid of copies (``replicate``).

``add_builder`` checks everything first (types, target world, articulation grouping, custom
attribute declarations, label clashes), then asks each entity part to append ``other``'s entities
with indices remapped and world-attached geometry placed by ``xform``.
"""

from __future__ import annotations

import math
import weakref
from typing import TYPE_CHECKING

import numpy as np

from .. import _hostmath as hm
from .._float32 import check_range as check_float32_range
from ..exceptions import BuilderStateError
from ._checks import _vec3, _xform

if TYPE_CHECKING:
    from .model_builder import ModelBuilder


_LABEL_INDEX: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per builder: the label indexes of :func:`_check_label_clash` (kept outside the builder, whose
state a refused call must leave unchanged)."""


def _check_label_clash(owner: str, kind: str, labels, worlds, new_labels, new_worlds, cache: dict | None = None):
    """Raise if a new (label, world) pair names an entity that already exists there: labels of
    transmission tendons and couplings are unique within a world (world -1 is shared by all).

    ``cache`` (a dict the builder owns) keeps the label -> worlds index of ``labels`` between calls
    and only indexes the entries appended since, so ``replicate`` into n worlds costs O(n), not
    O(n^2) (16k copies of a three-tendon finger took minutes). It is rebuilt when ``labels`` is
    another list or shorter than what was indexed.
    """
    entry = None if cache is None else cache.get(kind)
    if entry is None or entry[0] is not labels or entry[1] > len(labels):
        entry = [labels, 0, {}]
    taken: dict[str, set[int]] = entry[2]
    for label, w in zip(labels[entry[1] :], worlds[entry[1] :], strict=True):
        taken.setdefault(label, set()).add(w)
    entry[1] = len(labels)
    if cache is not None:
        cache[kind] = entry
    added: dict[str, set[int]] = {}
    for label, w in zip(new_labels, new_worlds, strict=True):
        have = taken.get(label, set()) | added.get(label, set())
        if w in have or (have and (w == -1 or -1 in have)):
            raise ValueError(
                f"{owner}: {kind} label {label!r} already exists in world {w}; labels are unique per world "
                "(pass label_prefix to rename the added ones)"
            )
        added.setdefault(label, set()).add(w)


def _join_prefix(owner: str, label_prefix) -> str:
    """The string put before every added label: ``label_prefix`` joined with "/" (newton's rule), or
    nothing for ``""`` or None; a prefix that already ends in "/" is used as given."""
    if label_prefix is None:
        return ""
    if not isinstance(label_prefix, str):
        raise TypeError(f"{owner}: label_prefix must be a str, got {type(label_prefix).__name__}")
    return label_prefix if not label_prefix or label_prefix.endswith("/") else label_prefix + "/"


class WorldBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: ``begin_world``/``end_world``, ``add_builder``,
    ``add_world`` and ``replicate``. Every class that derives from it is a full ``ModelBuilder``."""

    def begin_world(self, label: str | None = None, attributes=None, gravity=None) -> int:
        """Open a new world: bodies, shapes, joints and tendons added until :meth:`end_world` belong to it.

        Worlds do not nest. Returns the new world's index (``world_count`` before the call). ``label``
        (newton's world name) is accepted and not stored: worlds are known by index. newton's
        ``attributes`` and ``gravity`` (per-world gravity) are not supported: pass None.
        """
        owner = "begin_world"
        if self.current_world != -1:
            raise BuilderStateError(
                f"{owner}: world {self.current_world} is still open; worlds do not nest, call end_world() first"
            )
        if label is not None and not isinstance(label, str):
            raise TypeError(f"{owner}: label must be a str or None, got {type(label).__name__}")
        if attributes is not None:
            raise ValueError(f"{owner}: per-world attributes are not supported; pass attributes=None")
        if gravity is not None:
            raise ValueError(
                f"{owner}: per-world gravity is not supported (all worlds share ModelBuilder.gravity; "
                "Model.gravity can be edited per world after finalize); pass gravity=None"
            )
        w = self.world_count
        self.world_count += 1
        self.current_world = w
        return w

    def end_world(self) -> None:
        """Close the world opened by :meth:`begin_world`; what is added next belongs to world -1 (shared)."""
        if self.current_world == -1:
            raise BuilderStateError("end_world: no world is open (current_world is -1); call begin_world() first")
        self.current_world = -1

    def _check_no_open_world(self, owner: str):
        if self.current_world != -1:
            raise BuilderStateError(
                f"{owner}: world {self.current_world} is open (begin_world); {owner} adds new worlds, "
                "call end_world() first"
            )

    def add_builder(
        self, other: ModelBuilder, xform=None, world: int | None = None, *, label_prefix: str | None = ""
    ):
        """Append everything of ``other``, placed by ``xform``, with all indices remapped.

        Entities of ``other`` in its world -1 go to ``world`` (default: ``self.current_world``);
        ``other``'s own worlds are appended after this builder's worlds. ``label_prefix`` goes before
        every added label, joined with "/" (``"left"`` makes ``"left/elbow"``).
        """
        owner = "add_builder"
        label_prefix = _join_prefix(owner, label_prefix)
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
                _LABEL_INDEX.setdefault(self, {}),
            )
        b0 = self.body_count
        s0 = self.shape_count
        j0 = self.joint_count
        offsets = {d: self._domain_count(d) for d in self._REFERENCE_DOMAINS}
        identity = xf == hm.IDENTITY
        if not identity:
            # Body poses are stored as float32 wp.transform values: a placed position must fit.
            for i, q in enumerate(other.body_q):
                check_float32_range(
                    f"{owner}: body '{label_prefix + other.body_label[i]}' (index {b0 + i})",
                    "placed position",
                    hm.transform_mul(xf, q)[:3],
                )
        self._merge_bodies(other, xf, identity, remap_world, label_prefix)
        self._merge_shapes(other, xf, identity, remap_world, label_prefix, b0, s0)
        self._merge_joints(other, xf, identity, remap_world, label_prefix, b0, j0)
        self._merge_tendons(other, xf, identity, remap_world, label_prefix, b0)
        self._merge_transmissions(other, xf, identity, remap_world, label_prefix, b0, j0)
        self._merge_custom_attributes(other, offsets)
        self.world_count += other.world_count
        self.body_color = None

    def add_world(self, other: ModelBuilder, xform=None, label_prefix: str | None = None) -> int:
        """Append ``other`` as a new world placed by ``xform``; returns the new world's index.

        Labels get the prefix ``label_prefix`` joined with "/" (default ``world_<index>``; ``""`` keeps
        them as they are). Not allowed while a world is open (:meth:`begin_world`).
        """
        owner = "add_world"
        self._check_no_open_world(owner)
        w = self.world_count
        prefix = f"world_{w}/" if label_prefix is None else _join_prefix(owner, label_prefix)
        self.world_count += 1
        try:
            self.add_builder(other, xform, world=w, label_prefix=prefix)
        except Exception:
            self.world_count -= 1
            raise
        return w

    def replicate(
        self,
        builder: ModelBuilder,
        world_count: int | None = None,
        spacing=(0.0, 0.0, 0.0),
        *,
        xforms=None,
        label_prefixes=None,
        copy_count: int | None = None,
        separate_worlds: bool = True,
    ):
        """Append ``world_count`` copies of ``builder`` as new worlds, laid on a grid with ``spacing`` [m]
        or placed by ``xforms`` (one transform per copy; ``spacing`` is then ignored).

        ``copy_count`` is newton's name for ``world_count`` (give one of them). ``label_prefixes``: one
        label prefix per copy, as in :meth:`add_world` (default ``world_<index>``). Worlds never
        interact, so the placement only matters for viewing and for world-attached geometry.
        ``separate_worlds=False`` (newton's option) adds every copy to the current world instead, as
        repeated :meth:`add_builder` calls would (labels unprefixed unless ``label_prefixes`` says);
        those copies do touch each other.
        """
        owner = "replicate"
        if not isinstance(separate_worlds, (bool, np.bool_)):
            raise TypeError(f"{owner}: separate_worlds must be a bool, got {type(separate_worlds).__name__}")
        if separate_worlds:
            self._check_no_open_world(owner)
        if not isinstance(builder, WorldBuilder):
            raise TypeError(f"{owner}: builder must be a ModelBuilder, got {type(builder).__name__}")
        if (world_count is None) == (copy_count is None):
            raise TypeError(f"{owner}: give the number of copies once, as world_count or as copy_count (newton's name)")
        n = world_count if copy_count is None else copy_count
        name = "world_count" if copy_count is None else "copy_count"
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{owner}: {name} must be an int, got {type(n).__name__}")
        n = int(n)
        if n < 1:
            raise ValueError(f"{owner}: {name} must be >= 1, got {n!r}")
        if builder.world_count != 0:
            raise ValueError(f"{owner}: the builder to replicate must not contain worlds itself")
        if xforms is None:
            sp = _vec3(owner, "spacing", spacing)
            side = math.ceil(n ** (1.0 / 3.0)) if sp[2] != 0.0 else math.ceil(math.sqrt(n))
            placements = []
            for i in range(n):
                ix, iy, iz = i % side, (i // side) % side, i // (side * side)
                placements.append((ix * sp[0], iy * sp[1], iz * sp[2], 0.0, 0.0, 0.0, 1.0))
        else:
            if isinstance(xforms, (str, bytes)) or not hasattr(xforms, "__len__"):
                raise TypeError(f"{owner}: xforms must be a sequence of transforms, got {type(xforms).__name__}")
            if len(xforms) != n:
                raise ValueError(f"{owner}: xforms has {len(xforms)} transforms for {n} copies; give one per copy")
            placements = [_xform(owner, f"xforms[{i}]", x) for i, x in enumerate(xforms)]
        if label_prefixes is None:
            label_prefixes = [None] * n
        elif isinstance(label_prefixes, (str, bytes)) or not hasattr(label_prefixes, "__len__"):
            raise TypeError(f"{owner}: label_prefixes must be a sequence of str, one per copy")
        elif len(label_prefixes) != n:
            raise ValueError(f"{owner}: label_prefixes has {len(label_prefixes)} entries for {n} copies")
        for i, p in enumerate(label_prefixes):
            if p is not None and not isinstance(p, str):
                raise TypeError(f"{owner}: label_prefixes[{i}] must be a str or None, got {type(p).__name__}")
        for xf, prefix in zip(placements, label_prefixes, strict=True):
            if separate_worlds:
                self.add_world(builder, xf, label_prefix=prefix)
            else:
                self.add_builder(builder, xf, label_prefix=prefix)
