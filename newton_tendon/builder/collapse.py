"""``collapse_fixed_joints``: merge bodies welded by fixed joints into one body per rigid group.

Each group of bodies joined by enabled fixed joints becomes its survivor: the group's root (the member
that is no weld's child; the lowest index among several), or the world when a weld reaches it. Every
member's shapes, mass (parallel-axis theorem), retained joints, routed-tendon guides, spatial
transmission-path points and custom-attribute body references are re-expressed in the survivor's
frame through the welds' joint frames (``X_parent * X_child^-1`` per weld), as newton does; merged
into the world, they become world geometry.

The builder's per-body, per-shape, per-joint, per-dof and per-coordinate lists are found by probing
what one ``add_body``/``add_shape_sphere``/``add_joint_ball`` appends to a fresh builder of the same
class, so a list another part adds is carried without being named here; a ``body_``/``shape_``/
``joint_`` list the probe cannot place is refused rather than silently misaligned.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import warp as wp

from newton_tendon.kernels import types as T

from .. import _hostmath as hm
from ..inertia import combine, quat_to_matrix
from ..tendon import AttributeFrequency

_log = logging.getLogger("newton_tendon")

_PREFIXES = ("body_", "shape_", "joint_")
"""Builder list names that belong to an entity; every such list must be placed by the probe."""

_EXPLICIT = {"body_color"}
"""Entity lists that the collapse handles by name rather than by the probe (the colouring is reset)."""

_PROBE_CACHE: dict[type, dict[str, tuple[str, ...]]] = {}


def _inverse(t):
    """Inverse of a (px, py, pz, qx, qy, qz, qw) transform, float64."""
    qi = (-float(t[3]), -float(t[4]), -float(t[5]), float(t[6]))
    p = hm.quat_rotate(qi, t[:3])
    return (-p[0], -p[1], -p[2], *qi)


def _list_kinds(builder) -> dict[str, tuple[str, ...]]:
    """Names of the builder lists with one entry per body, shape, joint, dof and coordinate."""
    cls = type(builder)
    kinds = _PROBE_CACHE.get(cls)
    if kinds is not None:
        return kinds
    try:
        probe = cls()
    except TypeError:  # a subclass whose constructor needs arguments: probe the base class
        from .model_builder import ModelBuilder

        probe = ModelBuilder()

    def lengths():
        return {k: len(v) for k, v in vars(probe).items() if isinstance(v, list)}

    l0 = lengths()
    body = probe.add_body(mass=1.0, inertia=np.eye(3))
    l1 = lengths()
    probe.add_shape_sphere(body, radius=0.1)
    l2 = lengths()
    probe.add_joint_ball(-1, body)  # one joint, three dofs, four coordinates
    l3 = lengths()

    def grew(after, before, by):
        return {k for k, n in after.items() if n - before.get(k, 0) == by}

    joint, dof, coord = grew(l3, l2, 1), grew(l3, l2, 3), grew(l3, l2, 4)
    shape = grew(l2, l1, 1) - joint - dof - coord
    body = grew(l1, l0, 1) - shape - joint - dof - coord
    kinds = {
        "body": tuple(sorted(body)),
        "shape": tuple(sorted(shape)),
        "joint": tuple(sorted(joint)),
        "dof": tuple(sorted(dof)),
        "coord": tuple(sorted(coord)),
    }
    _PROBE_CACHE[cls] = kinds
    return kinds


class CollapseBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: ``collapse_fixed_joints``."""

    def collapse_fixed_joints(self, verbose: bool = False, joints_to_keep: Sequence[str | int] | None = None) -> dict:
        """Remove enabled fixed joints and merge the bodies they weld (newton's method).

        Each rigid group keeps its root body (or merges into the world when a weld reaches it); the
        other members' shapes, mass and inertia, retained joints, tendon guides, spatial transmission
        points and custom-attribute references move onto it, expressed in its frame. The motion is
        unchanged: a group that moved as one rigid body still does.

        Args:
            verbose: Log each merge (logger ``newton_tendon``, level INFO).
            joints_to_keep: Labels or indices of fixed joints to leave in place.

        Returns:
            newton's dict: ``body_remap`` {old retained body: new index, -1: -1}, ``joint_remap``
            {old retained joint: new index}, ``articulation_remap``, ``body_merged_parent`` {merged body:
            the old index of the body it merged into, -1 for the world}, ``body_merged_transform``
            {merged body: its frame in that body's frame, a ``wp.transform``} and ``merged_body_data``
            {merged label: {"relative_xform", "parent_body" (label or "world")}}.

        Raises:
            ValueError: a weld would change the motion (a static or kinematic body welded to a moving
                one, a kinematic one to the world), or a retained joint would join a group to itself or
                have the world as its child; nothing is changed then.
        """
        owner = "collapse_fixed_joints"
        keep = self._collapse_keep_set(owner, joints_to_keep)
        nb, nj = self.body_count, self.joint_count
        merge = [
            j
            for j in range(nj)
            if self.joint_type[j] == T.JOINT_FIXED and self.joint_enabled[j] and j not in keep
        ]
        survivor, frame = self._collapse_groups(merge)
        self._collapse_check(owner, merge, survivor)
        retained_bodies = [b for b in range(nb) if survivor[b] == b]
        body_new = {-1: -1}
        for i, b in enumerate(retained_bodies):
            body_new[b] = i

        def to_new(b):
            return -1 if b < 0 else body_new[survivor[b]]

        merging = set(merge)
        retained_joints = [j for j in range(nj) if j not in merging]
        for j in retained_joints:
            p, c = self.joint_parent[j], self.joint_child[j]
            if c >= 0 and to_new(c) < 0:
                raise ValueError(
                    f"{owner}: joint '{self.joint_label[j]}' (index {j}) has child body '{self.body_label[c]}', "
                    "which merges into the world; a joint's child must be a body (keep one of its welds with "
                    "joints_to_keep)"
                )
            if to_new(p) == to_new(c):
                raise ValueError(
                    f"{owner}: joint '{self.joint_label[j]}' (index {j}) would join body "
                    f"'{self.body_label[c]}' to the rigid group it is welded into (a closed loop of welds and "
                    "this joint); keep one of the welds with joints_to_keep"
                )
        kinds = _list_kinds(self)
        self._collapse_check_lists(owner, kinds)
        result = self._collapse_result(merge, survivor, frame, body_new, retained_joints)
        if verbose:
            for j in merge:
                c = self.joint_child[j]
                into = "the world" if survivor[c] < 0 else f"'{self.body_label[survivor[c]]}'"
                _log.info("collapse_fixed_joints: removed '%s', merged '%s' into %s", self.joint_label[j],
                          self.body_label[c], into)  # fmt: skip

        # Everything is checked: rewrite the builder (filters first: they read the old shape bodies).
        self._collapse_filters(survivor, to_new)
        self._collapse_mass(survivor, frame)
        for i in range(self.shape_count):
            b = self.shape_body[i]
            if b >= 0 and survivor[b] != b:
                self.shape_transform[i] = hm.transform_mul(frame[b], self.shape_transform[i])
            self.shape_body[i] = to_new(b)
        for j in retained_joints:
            p, c = self.joint_parent[j], self.joint_child[j]
            if p >= 0 and survivor[p] != p:
                self.joint_X_p[j] = hm.transform_mul(frame[p], self.joint_X_p[j])
            if survivor[c] != c:
                self.joint_X_c[j] = hm.transform_mul(frame[c], self.joint_X_c[j])
            self.joint_parent[j] = to_new(p)
            self.joint_child[j] = to_new(c)
        self._collapse_guides(survivor, frame, to_new)
        self._collapse_transmissions(survivor, frame, to_new, result["joint_remap"])
        self._collapse_custom_attributes(survivor, body_new, result["joint_remap"])
        self._collapse_articulations(retained_joints)
        self._collapse_lists(kinds, retained_bodies, retained_joints)
        self.body_color = None
        return result

    # ------------------------------------------------------------------------------------------

    def _collapse_keep_set(self, owner: str, joints_to_keep) -> set[int]:
        if joints_to_keep is None:
            return set()
        if isinstance(joints_to_keep, (str, bytes)) or not isinstance(joints_to_keep, Sequence | set):
            raise TypeError(
                f"{owner}: joints_to_keep must be a sequence of joint labels or indices, "
                f"got {type(joints_to_keep).__name__}"
            )
        keep = set()
        for i, j in enumerate(joints_to_keep):
            if isinstance(j, str):
                if j not in self.joint_label:
                    raise ValueError(f"{owner}: joints_to_keep[{i}]: no joint is labelled {j!r}")
                keep.update(k for k, s in enumerate(self.joint_label) if s == j)
            elif isinstance(j, (int, np.integer)) and not isinstance(j, (bool, np.bool_)):
                if not 0 <= j < self.joint_count:
                    raise ValueError(
                        f"{owner}: joints_to_keep[{i}] = {j} is not a joint index (0..{self.joint_count - 1})"
                    )
                keep.add(int(j))
            else:
                raise TypeError(
                    f"{owner}: joints_to_keep[{i}] must be a joint label or index, got {type(j).__name__}"
                )
        return keep

    def _collapse_groups(self, merge: list[int]):
        """Survivor of each body (itself if retained, -1 for the world) and each body's frame in its
        survivor's frame (float64 transforms)."""
        nb = self.body_count
        adj: dict[int, list[tuple[int, tuple]]] = {b: [] for b in range(-1, nb)}
        is_child = set()
        for j in merge:
            p, c = self.joint_parent[j], self.joint_child[j]
            x_pc = hm.transform_mul(self.joint_X_p[j], _inverse(self.joint_X_c[j]))
            adj[p].append((c, x_pc))
            adj[c].append((p, _inverse(x_pc)))
            is_child.add(c)
        survivor = list(range(nb))
        frame: dict[int, tuple] = {}
        seen = set()

        def flood(root):
            stack = [root]
            seen.add(root)
            frame[root] = hm.IDENTITY
            while stack:
                a = stack.pop()
                for b, x_ab in adj[a]:
                    if b in seen:
                        continue  # a redundant weld closing a loop: its bodies are already placed
                    seen.add(b)
                    frame[b] = hm.transform_mul(frame[a], x_ab)
                    if b >= 0:
                        survivor[b] = root
                    stack.append(b)

        flood(-1)
        # The remaining groups: components of the weld graph, rooted at a member that is no weld's child.
        component: dict[int, int] = {}
        for b in range(nb):
            if b in seen or b in component:
                continue
            members, stack = [b], [b]
            component[b] = b
            while stack:
                a = stack.pop()
                for o, _ in adj[a]:
                    if o not in component:
                        component[o] = b
                        members.append(o)
                        stack.append(o)
            roots = sorted(m for m in members if m not in is_child)
            flood(roots[0] if roots else min(members))
        return survivor, frame

    @staticmethod
    def _collapse_class(mass: float, flags: int) -> str:
        if flags & T.BODY_KINEMATIC:
            return "kinematic"
        return "moving" if mass > 0.0 else "static"

    def _collapse_check(self, owner: str, merge: list[int], survivor: list[int]):
        """A merge must not change what moves. A static or kinematic body holds what it is welded to, and
        the merged body moves as its survivor does, so: into the world or a static survivor go static
        and moving bodies; into a moving survivor, moving ones; into a kinematic survivor, moving ones."""
        weld_of = {}
        for j in merge:
            weld_of.setdefault(self.joint_child[j], j)
            weld_of.setdefault(self.joint_parent[j], j)
        for b in range(self.body_count):
            s = survivor[b]
            if s == b:
                continue
            cls = self._collapse_class(self.body_mass[b], self.body_flags[b])
            if s < 0:
                ok, into = cls != "kinematic", "the world"
            else:
                sc = self._collapse_class(self.body_mass[s], self.body_flags[s])
                ok = cls == "moving" or (cls == "static" and sc == "static")
                into = f"{sc} body '{self.body_label[s]}' (index {s})"
            if not ok:
                j = weld_of[b]
                raise ValueError(
                    f"{owner}: fixed joint '{self.joint_label[j]}' (index {j}) would merge {cls} body "
                    f"'{self.body_label[b]}' (index {b}) into {into}, which changes the motion (a static or "
                    "kinematic body holds what it is welded to; a merged body moves as its survivor does); keep "
                    "the joint with joints_to_keep, or give the bodies of the group one class"
                )

    def _collapse_check_lists(self, owner: str, kinds: dict[str, tuple[str, ...]]):
        placed = {name for names in kinds.values() for name in names} | _EXPLICIT
        for name, value in vars(self).items():
            if isinstance(value, list) and name.startswith(_PREFIXES) and name not in placed:
                raise NotImplementedError(
                    f"{owner}: the builder list '{name}' is not one entry per body, shape, joint, dof or "
                    "coordinate of a probe builder, so collapsing cannot carry it; the part that adds it must "
                    "append to it in add_body/add_shape_*/add_joint_*"
                )
        counts = {
            "body": self.body_count,
            "shape": self.shape_count,
            "joint": self.joint_count,
            "dof": sum(self._joint_dof_count(j) for j in range(self.joint_count)),
            "coord": sum(self._joint_coord_count(j) for j in range(self.joint_count)),
        }
        for kind, names in kinds.items():
            for name in names:
                n = len(getattr(self, name))
                if n != counts[kind]:
                    raise ValueError(
                        f"{owner}: builder list '{name}' has {n} entries, expected one per {kind} ({counts[kind]}); "
                        "it was edited directly"
                    )

    def _collapse_result(self, merge, survivor, frame, body_new, retained_joints) -> dict:
        merged_parent = {c: survivor[c] for c in range(self.body_count) if survivor[c] != c}
        return {
            "body_remap": dict(body_new),
            "joint_remap": {j: i for i, j in enumerate(retained_joints)},
            "articulation_remap": self._collapse_articulation_remap(retained_joints),
            "body_merged_parent": merged_parent,
            "body_merged_transform": {c: wp.transform(*frame[c]) for c in merged_parent},
            "merged_body_data": {
                self.body_label[c]: {
                    "relative_xform": wp.transform(*frame[c]),
                    "parent_body": "world" if s < 0 else self.body_label[s],
                }
                for c, s in merged_parent.items()
            },
        }

    def _collapse_mass(self, survivor, frame):
        """Fold each merged member's mass into a moving survivor (static and kinematic ones keep theirs)."""
        for c in range(self.body_count):
            s = survivor[c]
            if s < 0 or s == c or self._collapse_class(self.body_mass[s], self.body_flags[s]) != "moving":
                continue
            x = frame[c]
            rot = quat_to_matrix(x[3:])
            com_c = hm.transform_point(x, self.body_com[c])
            inertia_c = rot @ np.asarray(self.body_inertia[c], dtype=np.float64) @ rot.T
            com_old = np.asarray(self.body_com[s], dtype=np.float64)
            m, com, inertia = combine(
                self.body_mass[s], com_old, self.body_inertia[s], self.body_mass[c], com_c, inertia_c
            )
            # body_qd holds the COM's velocity: the new COM's is v + w x R (c_new - c_old), world frame.
            qd = self.body_qd[s]
            arm = hm.quat_rotate(self.body_q[s][3:], np.asarray(com) - com_old)
            w = np.asarray(qd[3:], dtype=np.float64)
            v = np.asarray(qd[:3], dtype=np.float64) + np.cross(w, arm)
            self.body_qd[s] = (*(float(a) for a in v), *(float(a) for a in w))
            self.body_mass[s] = float(m)
            self.body_com[s] = tuple(float(a) for a in com)
            self.body_inertia[s] = np.asarray(inertia, dtype=np.float64)

    def _collapse_guides(self, survivor, frame, to_new):
        for g, b in enumerate(self.tendon_guide_body):
            if b < 0:
                continue
            if survivor[b] != b:
                x = frame[b]
                self.tendon_guide_offset[g] = tuple(hm.transform_point(x, self.tendon_guide_offset[g]))
                self.tendon_guide_axis[g] = tuple(hm.quat_rotate(x[3:], self.tendon_guide_axis[g]))
            self.tendon_guide_body[g] = to_new(b)

    def _collapse_transmissions(self, survivor, frame, to_new, joint_remap):
        for path in self.transmission_path:
            if not path:
                continue
            for e in range(len(path["type"])):
                b = path["body"][e]
                if b >= 0:
                    if survivor[b] != b:
                        path["offset"][e] = tuple(hm.transform_point(frame[b], path["offset"][e]))
                        path["axis"][e] = tuple(hm.quat_rotate(frame[b][3:], path["axis"][e]))
                    path["body"][e] = to_new(b)
                if path["has_side"][e]:
                    sb = path["side_body"][e]
                    if sb >= 0:
                        if survivor[sb] != sb:
                            path["side_offset"][e] = tuple(hm.transform_point(frame[sb], path["side_offset"][e]))
                        path["side_body"][e] = to_new(sb)
        self.transmission_terms = [[(joint_remap[j], c) for j, c in terms] for terms in self.transmission_terms]

    def _collapse_filters(self, survivor, to_new):
        """Body filter pairs of retained bodies are renumbered; a pair with a merged member becomes shape
        pairs of the bodies' shapes, so the survivor's other shapes are not filtered by it; a pair inside
        one group is dropped."""
        shapes_of: dict[int, list[int]] = {}
        for i, b in enumerate(self.shape_body):
            shapes_of.setdefault(b, []).append(i)
        pairs = set()
        for a, b in self.body_filter_pairs:
            if survivor[a] == survivor[b]:
                continue  # one body now (or both world geometry): its shapes never touch each other
            if survivor[a] == a and survivor[b] == b:
                pairs.add((min(to_new(a), to_new(b)), max(to_new(a), to_new(b))))
                continue
            for sa in shapes_of.get(a, []):
                for sb in shapes_of.get(b, []):
                    self.shape_filter_pairs.add((min(sa, sb), max(sa, sb)))
        self.body_filter_pairs = pairs

    def _collapse_custom_attributes(self, survivor, body_new, joint_remap):
        """Per-body and per-joint values follow their entity (a merged one's are dropped, as newton
        does); int references to bodies follow the merge, references to removed joints become -1."""
        for key, attr in self.custom_attributes.items():
            values = self.custom_attribute_values[key]
            if attr.frequency == AttributeFrequency.BODY:
                moved = {body_new[i]: v for i, v in values.items() if survivor[i] == i}
            elif attr.frequency == AttributeFrequency.JOINT:
                moved = {joint_remap[i]: v for i, v in values.items() if i in joint_remap}
            else:
                moved = dict(values)
            if attr.references == "body":
                nb = len(survivor)
                moved = {i: (body_new[survivor[v]] if 0 <= v < nb else v) for i, v in moved.items()}
            elif attr.references == "joint":
                moved = {i: (joint_remap.get(v, -1) if v >= 0 else v) for i, v in moved.items()}
            values.clear()
            values.update(moved)
            # A default that references a body or joint is a "none" value (negative) or a fixed index:
            # leave it, as newton leaves defaults.

    def _collapse_articulation_remap(self, retained_joints) -> dict[int, int]:
        out = {}
        if not self.articulation_start:
            return out
        ends = [*self.articulation_start[1:], self.articulation_joint_end]
        kept = set(retained_joints)
        for a, (s, e) in enumerate(zip(self.articulation_start, ends, strict=True)):
            if any(j in kept for j in range(s, e)):
                out[a] = len(out)
        return out

    def _collapse_articulations(self, retained_joints):
        remap = self._collapse_articulation_remap(retained_joints)

        def first_kept_from(j):
            return sum(1 for r in retained_joints if r < j)

        starts = [first_kept_from(self.articulation_start[a]) for a in remap]
        labels = [self.articulation_label[a] for a in remap]
        self.articulation_joint_end = first_kept_from(self.articulation_joint_end)
        self.articulation_start = starts
        self.articulation_label = labels

    def _collapse_lists(self, kinds, retained_bodies, retained_joints):
        """Keep the entries of retained bodies and joints (and their dofs and coordinates) in every list."""
        dof_start, coord_start = [0], [0]
        for j in range(self.joint_count):
            dof_start.append(dof_start[-1] + self._joint_dof_count(j))
            coord_start.append(coord_start[-1] + self._joint_coord_count(j))
        dofs = [d for j in retained_joints for d in range(dof_start[j], dof_start[j + 1])]
        coords = [q for j in retained_joints for q in range(coord_start[j], coord_start[j + 1])]
        for kind, keep in (("body", retained_bodies), ("joint", retained_joints), ("dof", dofs), ("coord", coords)):
            for name in kinds[kind]:
                old = getattr(self, name)
                setattr(self, name, [old[i] for i in keep])
