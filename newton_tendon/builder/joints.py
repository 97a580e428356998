"""Joints and articulations: their storage (per joint, then per degree of freedom), ``add_joint_*``
and ``add_articulation``.

Each ``add_joint_*`` validates its axis, limits and drive gains into per-dof records, then one
shared step checks the bodies and frames and appends the joint with its dofs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from newton_tendon.kernels import types as T

from .. import _hostmath as hm
from ._checks import _axis_vec3, _flag, _index, _label, _real, _xform

_INF = float("inf")


class JointBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: the per-joint and per-dof lists, articulations and
    the methods that add them."""

    def _init_joints(self):
        # Joints (per joint, then per degree of freedom).
        self.joint_type: list[int] = []
        self.joint_parent: list[int] = []
        self.joint_child: list[int] = []
        self.joint_X_p: list[tuple] = []
        self.joint_X_c: list[tuple] = []
        self.joint_enabled: list[bool] = []
        self.joint_world: list[int] = []
        self.joint_label: list[str] = []
        self.joint_dof_dim: list[tuple[int, int]] = []
        self.joint_axis: list[tuple] = []
        self.joint_limit_lower: list[float] = []
        self.joint_limit_upper: list[float] = []
        self.joint_target_ke: list[float] = []
        self.joint_target_kd: list[float] = []
        self.joint_armature: list[float] = []
        self.joint_target_pos: list[float] = []
        self.joint_target_vel: list[float] = []
        self.articulation_start: list[int] = []
        self.articulation_label: list[str] = []
        self.articulation_joint_end = 0

    @property
    def joint_count(self) -> int:
        """Number of joints added so far."""
        return len(self.joint_type)

    @property
    def joint_dof_count(self) -> int:
        """Number of joint degrees of freedom added so far."""
        return len(self.joint_axis)

    def _joint_dof_count(self, j: int) -> int:
        """Degrees of freedom of joint ``j``: its type's, or a D6 joint's free axes."""
        jt = self.joint_type[j]
        return sum(self.joint_dof_dim[j]) if jt == T.JOINT_D6 else T.JOINT_DOF_COUNT[jt]

    def _joint_coord_count(self, j: int) -> int:
        """Coordinates of joint ``j``: its type's, or one per free axis of a D6 joint."""
        jt = self.joint_type[j]
        return sum(self.joint_dof_dim[j]) if jt == T.JOINT_D6 else T.JOINT_COORD_COUNT[jt]

    @property
    def articulation_count(self) -> int:
        """Number of articulations added so far."""
        return len(self.articulation_start)

    def _add_joint(
        self,
        owner,
        jtype,
        parent,
        child,
        parent_xform,
        child_xform,
        label,
        enabled,
        collision_filter_parent,
        dofs,
        dof_dim=None,
    ):
        """Validate common joint arguments, then append the joint and its dofs (list of dicts, linear
        axes first); ``dof_dim`` = (linear, angular) axis counts, the joint type's unless given."""
        parent = _index(owner, "parent", parent, self.body_count, allow_world=True)
        child = _index(owner, "child", child, self.body_count, allow_world=False)
        if parent == child:
            raise ValueError(f"{owner}: parent and child must be different bodies, both are {child}")
        if parent >= 0 and self.body_world[parent] != self.body_world[child]:
            raise ValueError(
                f"{owner}: parent body {parent} (world {self.body_world[parent]}) and child body "
                f"{child} (world {self.body_world[child]}) are in different worlds"
            )
        xp = _xform(owner, "parent_xform", parent_xform)
        xc = _xform(owner, "child_xform", child_xform)
        label = _label(owner, label, f"joint_{self.joint_count}")
        enabled = _flag(owner, "enabled", enabled)
        collision_filter_parent = _flag(owner, "collision_filter_parent", collision_filter_parent)
        self.joint_type.append(jtype)
        self.joint_parent.append(parent)
        self.joint_child.append(child)
        self.joint_X_p.append(xp)
        self.joint_X_c.append(xc)
        self.joint_enabled.append(bool(enabled))
        self.joint_world.append(self.body_world[child])
        self.joint_label.append(label)
        self.joint_dof_dim.append(tuple(T.JOINT_DOF_DIM[jtype]) if dof_dim is None else tuple(dof_dim))
        for d in dofs:
            self.joint_axis.append(d["axis"])
            self.joint_limit_lower.append(d.get("lower", -_INF))
            self.joint_limit_upper.append(d.get("upper", _INF))
            self.joint_target_ke.append(d.get("ke", 0.0))
            self.joint_target_kd.append(d.get("kd", 0.0))
            self.joint_armature.append(d.get("armature", 0.0))
            self.joint_target_pos.append(d.get("target_pos", 0.0))
            self.joint_target_vel.append(d.get("target_vel", 0.0))
        if collision_filter_parent and parent >= 0:
            self.body_filter_pairs.add((min(parent, child), max(parent, child)))
        self.body_color = None
        return self.joint_count - 1

    def _axis_dof(self, owner, axis, limit_lower, limit_upper, target_pos, target_vel, target_ke, target_kd, armature):
        a = np.asarray(_axis_vec3(owner, "axis", axis))
        a = tuple(a / np.linalg.norm(a))
        lo = -_INF if limit_lower is None else _real(owner, "limit_lower", limit_lower, allow_inf=True)
        hi = _INF if limit_upper is None else _real(owner, "limit_upper", limit_upper, allow_inf=True)
        if lo > hi:
            raise ValueError(f"{owner}: limit_lower ({lo}) must be <= limit_upper ({hi})")
        if lo == _INF or hi == -_INF:
            raise ValueError(f"{owner}: limit_lower cannot be +inf and limit_upper cannot be -inf")
        return {
            "axis": a,
            "lower": lo,
            "upper": hi,
            "ke": _real(owner, "target_ke", target_ke, lo=0.0),
            "kd": _real(owner, "target_kd", target_kd, lo=0.0),
            "armature": _real(owner, "armature", armature, lo=0.0),
            "target_pos": _real(owner, "target_pos", target_pos),
            "target_vel": _real(owner, "target_vel", target_vel),
        }

    def add_joint_revolute(
        self,
        parent: int,
        child: int,
        parent_xform=None,
        child_xform=None,
        axis=(0.0, 0.0, 1.0),
        *,
        limit_lower=None,
        limit_upper=None,
        target_pos: float = 0.0,
        target_vel: float = 0.0,
        target_ke: float = 0.0,
        target_kd: float = 0.0,
        armature: float = 0.0,
        collision_filter_parent: bool = True,
        enabled: bool = True,
        label: str | None = None,
    ) -> int:
        """Hinge about ``axis`` (joint frame) through the joint frame origins. Angles in rad.

        ``target_ke`` [N m/rad] and ``target_kd`` [N m s/rad] drive the angle toward the target in
        ``Control``; ``armature`` [kg m^2] adds rotor inertia about the axis to the child.
        """
        owner = f"add_joint_revolute(label={label!r})"
        dof = self._axis_dof(
            owner, axis, limit_lower, limit_upper, target_pos, target_vel, target_ke, target_kd, armature
        )
        return self._add_joint(
            owner,
            T.JOINT_REVOLUTE,
            parent,
            child,
            parent_xform,
            child_xform,
            label,
            enabled,
            collision_filter_parent,
            [dof],
        )

    def add_joint_prismatic(
        self,
        parent: int,
        child: int,
        parent_xform=None,
        child_xform=None,
        axis=(1.0, 0.0, 0.0),
        *,
        limit_lower=None,
        limit_upper=None,
        target_pos: float = 0.0,
        target_vel: float = 0.0,
        target_ke: float = 0.0,
        target_kd: float = 0.0,
        armature: float = 0.0,
        collision_filter_parent: bool = True,
        enabled: bool = True,
        label: str | None = None,
    ) -> int:
        """Slider along ``axis`` (joint frame); positions in m, gains in N/m and N s/m."""
        owner = f"add_joint_prismatic(label={label!r})"
        dof = self._axis_dof(
            owner, axis, limit_lower, limit_upper, target_pos, target_vel, target_ke, target_kd, armature
        )
        if dof["armature"] != 0.0:
            raise ValueError(
                f"{owner}: armature on a prismatic joint is not supported (maximal coordinates); "
                "add the mass to the child body instead"
            )
        return self._add_joint(
            owner,
            T.JOINT_PRISMATIC,
            parent,
            child,
            parent_xform,
            child_xform,
            label,
            enabled,
            collision_filter_parent,
            [dof],
        )

    def add_joint_ball(
        self,
        parent: int,
        child: int,
        parent_xform=None,
        child_xform=None,
        *,
        collision_filter_parent: bool = True,
        enabled: bool = True,
        label: str | None = None,
    ) -> int:
        """Spherical joint: the joint frame origins coincide, rotation is free."""
        owner = f"add_joint_ball(label={label!r})"
        dofs = [{"axis": a} for a in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))]
        return self._add_joint(
            owner, T.JOINT_BALL, parent, child, parent_xform, child_xform, label, enabled, collision_filter_parent, dofs
        )

    def add_joint_fixed(
        self,
        parent: int,
        child: int,
        parent_xform=None,
        child_xform=None,
        *,
        collision_filter_parent: bool = True,
        enabled: bool = True,
        label: str | None = None,
    ) -> int:
        """Weld: the joint frames coincide."""
        owner = f"add_joint_fixed(label={label!r})"
        return self._add_joint(
            owner, T.JOINT_FIXED, parent, child, parent_xform, child_xform, label, enabled, collision_filter_parent, []
        )

    def add_joint_free(
        self,
        child: int,
        parent: int = -1,
        parent_xform=None,
        child_xform=None,
        *,
        enabled: bool = True,
        label: str | None = None,
    ) -> int:
        """Six-dof joint: constrains nothing; it gives the body a 7-coordinate pose in ``joint_q``."""
        owner = f"add_joint_free(label={label!r})"
        dofs = [{"axis": a} for a in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)) * 2]
        return self._add_joint(
            owner, T.JOINT_FREE, parent, child, parent_xform, child_xform, label, enabled, False, dofs
        )

    def add_articulation(self, joints: Sequence[int] | None = None, label: str | None = None) -> int:
        """Group joints into an articulation; returns its index.

        Articulations are contiguous, consecutive blocks of joints: ``joints`` must start at the
        first joint not yet grouped (default: every joint not yet grouped).
        """
        owner = f"add_articulation(label={label!r})"
        first = self.articulation_joint_end
        if joints is None:
            joints = list(range(first, self.joint_count))
        else:
            if isinstance(joints, (str, bytes)) or not isinstance(joints, Sequence):
                raise TypeError(f"{owner}: joints must be a sequence of joint indices, got {type(joints).__name__}")
            for i, j in enumerate(joints):
                if isinstance(j, (bool, np.bool_)) or not isinstance(j, (int, np.integer)):
                    raise TypeError(f"{owner}: joints[{i}] must be an int joint index, got {type(j).__name__}")
            joints = [int(j) for j in joints]
        if not joints:
            raise ValueError(f"{owner}: no joints to group")
        if joints != list(range(first, first + len(joints))) or joints[-1] >= self.joint_count:
            raise ValueError(
                f"{owner}: joints must be the contiguous block of existing joints starting at {first} "
                f"(the first joint not yet in an articulation), got {joints}"
            )
        label = _label(owner, label, f"articulation_{self.articulation_count}")
        self.articulation_start.append(first)
        self.articulation_joint_end = joints[-1] + 1
        self.articulation_label.append(label)
        return self.articulation_count - 1

    def _merge_joints(self, other, xf, identity: bool, remap_world, label_prefix: str, b0: int, j0: int):
        """Append ``other``'s joints, dofs and articulations (bodies shifted by ``b0``, joints by ``j0``);
        joints to the world follow the placement ``xf``."""
        for i in range(other.joint_count):
            p = other.joint_parent[i]
            xp = other.joint_X_p[i]
            if p < 0 and not identity:
                xp = hm.transform_mul(xf, xp)
            self.joint_parent.append(p + b0 if p >= 0 else -1)
            self.joint_X_p.append(xp)
        self.joint_type.extend(other.joint_type)
        self.joint_child.extend(c + b0 for c in other.joint_child)
        self.joint_X_c.extend(other.joint_X_c)
        self.joint_enabled.extend(other.joint_enabled)
        self.joint_world.extend(remap_world(w) for w in other.joint_world)
        self.joint_label.extend(label_prefix + s for s in other.joint_label)
        self.joint_dof_dim.extend(other.joint_dof_dim)
        for name in (
            "axis",
            "limit_lower",
            "limit_upper",
            "target_ke",
            "target_kd",
            "armature",
            "target_pos",
            "target_vel",
        ):
            getattr(self, "joint_" + name).extend(getattr(other, "joint_" + name))
        if other.articulation_start:
            self.articulation_start.extend(a + j0 for a in other.articulation_start)
            self.articulation_joint_end = other.articulation_joint_end + j0
        self.articulation_label.extend(label_prefix + s for s in other.articulation_label)
