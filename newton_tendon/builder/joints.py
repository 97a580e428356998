"""Joints and articulations: their storage (per joint, then per degree of freedom), ``add_joint_*``
and ``add_articulation``.

Each ``add_joint_*`` validates its axis, limits and drive gains into per-dof records, then one
shared step checks the bodies and frames and appends the joint with its dofs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import IntEnum

import numpy as np

from newton_tendon.kernels import types as T

from .. import _hostmath as hm
from ._checks import _axis_vec3, _flag, _index, _label, _real, _xform

_INF = float("inf")
_NEWTON_DEFAULT_EFFORT = 1.0e6
"""newton's default effort and velocity limits (``JointDofConfig``), stored when none is given."""


class JointTargetMode(IntEnum):
    """Which drive a joint dof carries, as newton's ``JointTargetMode`` (same names and numbers).

    Stored per dof in ``Model.joint_target_mode``. Our solvers drive every dof by its gains
    (``target_ke`` toward the position target, ``target_kd`` toward the velocity target) whatever its
    mode, as newton's XPBD and VBD solvers do; the mode records the author's intent for importers,
    exporters and solvers that install actuators per dof."""

    NONE = 0
    """No drive: the dof is passive."""
    POSITION = 1
    """A position drive (tracks ``Control.joint_target_pos``)."""
    VELOCITY = 2
    """A velocity drive (tracks ``Control.joint_target_vel``)."""
    POSITION_VELOCITY = 3
    """Position and velocity drives."""
    EFFORT = 4
    """A drive without gains: the force comes from ``Control.joint_f``."""

    @staticmethod
    def from_gains(
        target_ke: float, target_kd: float, force_position_velocity: bool = False, has_drive: bool = False
    ) -> JointTargetMode:
        """The mode the gains imply: NONE without a drive, else POSITION when ``target_ke`` is nonzero
        (POSITION_VELOCITY when ``force_position_velocity`` and both are), VELOCITY when only
        ``target_kd`` is, EFFORT when neither is."""
        if not has_drive:
            return JointTargetMode.NONE
        if force_position_velocity and target_ke != 0.0 and target_kd != 0.0:
            return JointTargetMode.POSITION_VELOCITY
        if target_ke != 0.0:
            return JointTargetMode.POSITION
        if target_kd != 0.0:
            return JointTargetMode.VELOCITY
        return JointTargetMode.EFFORT


class JointDofConfig:
    """One axis of a joint: its direction in the joint frame, limits and drive (newton's
    ``ModelBuilder.JointDofConfig``; also ``ModelBuilder.JointDofConfig`` here).

    Units are those of the axis: m, N/m, N s/m on a linear axis; rad, N m/rad, N m s/rad on an
    angular one. ``target_pos``/``target_vel`` are our names, ``target_q``/``target_qd`` newton's; give
    either. As in newton, a position target outside the limits is moved to their midpoint.

    ``limit_ke``/``limit_kd`` (newton's soft-limit gains), ``effort_limit``, ``velocity_limit`` and
    ``actuator_mode`` are stored in the Model; our limits are hard rows and our drives are not
    clamped, as in newton's XPBD and VBD solvers. Passive joint friction, damping and stiffness
    (``friction``, ``damping``, ``stiffness``, ``rest_q``) are forces our solvers do not apply: a
    nonzero value raises ValueError when the joint is added rather than being dropped silently.
    """

    def __init__(
        self,
        axis=(1.0, 0.0, 0.0),
        limit_lower: float = -_INF,
        limit_upper: float = _INF,
        limit_ke: float = 1.0e4,
        limit_kd: float = 1.0e1,
        target_pos: float | None = None,
        target_vel: float | None = None,
        target_ke: float = 0.0,
        target_kd: float = 0.0,
        armature: float = 0.0,
        effort_limit: float = _NEWTON_DEFAULT_EFFORT,
        velocity_limit: float = _NEWTON_DEFAULT_EFFORT,
        friction: float = 0.0,
        actuator_mode: JointTargetMode | None = None,
        damping: float = 0.0,
        stiffness: float = 0.0,
        rest_q: float | None = None,
        *,
        target_q: float | None = None,
        target_qd: float | None = None,
    ):
        owner = "JointDofConfig"
        if target_pos is not None and target_q is not None:
            raise ValueError(f"{owner}: give target_pos or its newton name target_q, not both")
        if target_vel is not None and target_qd is not None:
            raise ValueError(f"{owner}: give target_vel or its newton name target_qd, not both")
        self.axis = _axis_vec3(owner, "axis", axis)
        self.limit_lower = limit_lower
        self.limit_upper = limit_upper
        self.limit_ke = limit_ke
        self.limit_kd = limit_kd
        tp = target_pos if target_pos is not None else target_q
        self.target_pos = 0.0 if tp is None else tp
        tv = target_vel if target_vel is not None else target_qd
        self.target_vel = 0.0 if tv is None else tv
        self.target_ke = target_ke
        self.target_kd = target_kd
        self.armature = armature
        self.effort_limit = effort_limit
        self.velocity_limit = velocity_limit
        self.friction = friction
        self.actuator_mode = actuator_mode
        self.damping = damping
        self.stiffness = stiffness
        self.rest_q = rest_q
        try:
            outside = self.target_pos > self.limit_upper or self.target_pos < self.limit_lower
        except TypeError:
            outside = False  # checked with the rest when the joint is added
        if outside:
            self.target_pos = 0.5 * (self.limit_lower + self.limit_upper)

    @property
    def target_q(self) -> float:
        """newton's name of :attr:`target_pos`."""
        return self.target_pos

    @target_q.setter
    def target_q(self, value: float):
        self.target_pos = value

    @property
    def target_qd(self) -> float:
        """newton's name of :attr:`target_vel`."""
        return self.target_vel

    @target_qd.setter
    def target_qd(self, value: float):
        self.target_vel = value

    @classmethod
    def create_unlimited(cls, axis) -> JointDofConfig:
        """An axis without limits or drive."""
        return cls(axis=axis)

    def __repr__(self):
        return (
            f"JointDofConfig(axis={self.axis}, limit_lower={self.limit_lower}, limit_upper={self.limit_upper}, "
            f"target_pos={self.target_pos}, target_ke={self.target_ke}, target_kd={self.target_kd})"
        )


class JointBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: the per-joint and per-dof lists, articulations and
    the methods that add them."""

    JointDofConfig = JointDofConfig

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
        self.joint_limit_ke: list[float] = []
        self.joint_limit_kd: list[float] = []
        self.joint_effort_limit: list[float] = []
        self.joint_velocity_limit: list[float] = []
        self.joint_target_mode: list[int] = []
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
            self.joint_limit_ke.append(d.get("limit_ke", 1.0e4))
            self.joint_limit_kd.append(d.get("limit_kd", 1.0e1))
            self.joint_effort_limit.append(d.get("effort_limit", _NEWTON_DEFAULT_EFFORT))
            self.joint_velocity_limit.append(d.get("velocity_limit", _NEWTON_DEFAULT_EFFORT))
            self.joint_target_mode.append(d.get("target_mode", int(JointTargetMode.NONE)))
        if collision_filter_parent and parent >= 0:
            self.body_filter_pairs.add((min(parent, child), max(parent, child)))
        self.body_color = None
        return self.joint_count - 1

    def _axis_dof(
        self,
        owner,
        axis,
        limit_lower,
        limit_upper,
        target_pos,
        target_vel,
        target_ke,
        target_kd,
        armature,
        newton=None,
    ):
        """One dof record, checked. ``axis`` may be a :class:`JointDofConfig`, whose fields fill the
        arguments left at their defaults (None / 0); ``newton`` holds newton's extra keywords."""
        extra = dict(newton or {})
        if isinstance(axis, JointDofConfig):
            cfg = axis
            axis = cfg.axis
            limit_lower = cfg.limit_lower if limit_lower is None else limit_lower
            limit_upper = cfg.limit_upper if limit_upper is None else limit_upper
            target_pos = cfg.target_pos if target_pos is None else target_pos
            target_vel = cfg.target_vel if target_vel is None else target_vel
            target_ke = cfg.target_ke if target_ke is None else target_ke
            target_kd = cfg.target_kd if target_kd is None else target_kd
            armature = cfg.armature if armature is None else armature
            for name in (
                "limit_ke",
                "limit_kd",
                "effort_limit",
                "velocity_limit",
                "friction",
                "actuator_mode",
                "damping",
                "stiffness",
                "rest_q",
            ):
                if extra.get(name) is None:
                    extra[name] = getattr(cfg, name)
        a = np.asarray(_axis_vec3(owner, "axis", axis))
        a = tuple(a / np.linalg.norm(a))
        lo = -_INF if limit_lower is None else _real(owner, "limit_lower", limit_lower, allow_inf=True)
        hi = _INF if limit_upper is None else _real(owner, "limit_upper", limit_upper, allow_inf=True)
        if lo > hi:
            raise ValueError(f"{owner}: limit_lower ({lo}) must be <= limit_upper ({hi})")
        if lo == _INF or hi == -_INF:
            raise ValueError(f"{owner}: limit_lower cannot be +inf and limit_upper cannot be -inf")
        ke = _real(owner, "target_ke", 0.0 if target_ke is None else target_ke, lo=0.0)
        kd = _real(owner, "target_kd", 0.0 if target_kd is None else target_kd, lo=0.0)
        for name in ("friction", "damping", "stiffness"):
            v = extra.get(name)
            if v is not None and _real(owner, name, v) != 0.0:
                raise ValueError(
                    f"{owner}: {name}={v} is not supported: our solvers apply no passive joint {name} "
                    "(newton's XPBD and VBD do not either); model it with target_kd / target_ke and a target"
                )
        if extra.get("rest_q") is not None:
            raise ValueError(f"{owner}: rest_q is not supported (no passive joint spring); use target_pos with target_ke")
        mode = extra.get("actuator_mode")
        if mode is None:
            mode = JointTargetMode.from_gains(ke, kd, has_drive=ke != 0.0 or kd != 0.0)
        elif isinstance(mode, bool) or not isinstance(mode, (int, np.integer)):
            raise TypeError(f"{owner}: actuator_mode must be a JointTargetMode, got {type(mode).__name__}")
        else:
            try:
                mode = JointTargetMode(int(mode))
            except ValueError:
                raise ValueError(f"{owner}: actuator_mode must be a JointTargetMode (0..4), got {mode!r}") from None

        def gain(name, default):
            v = extra.get(name)
            return default if v is None else _real(owner, name, v, lo=0.0, allow_inf=name.endswith("_limit"))

        return {
            "axis": a,
            "lower": lo,
            "upper": hi,
            "ke": ke,
            "kd": kd,
            "armature": _real(owner, "armature", 0.0 if armature is None else armature, lo=0.0),
            "target_pos": _real(owner, "target_pos", 0.0 if target_pos is None else target_pos),
            "target_vel": _real(owner, "target_vel", 0.0 if target_vel is None else target_vel),
            "limit_ke": gain("limit_ke", 1.0e4),
            "limit_kd": gain("limit_kd", 1.0e1),
            "effort_limit": gain("effort_limit", _NEWTON_DEFAULT_EFFORT),
            "velocity_limit": gain("velocity_limit", _NEWTON_DEFAULT_EFFORT),
            "target_mode": int(mode),
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
        target_pos: float | None = None,
        target_vel: float | None = None,
        target_ke: float | None = None,
        target_kd: float | None = None,
        armature: float | None = None,
        collision_filter_parent: bool = True,
        enabled: bool = True,
        label: str | None = None,
        **newton_options,
    ) -> int:
        """Hinge about ``axis`` (joint frame) through the joint frame origins. Angles in rad.

        ``target_ke`` [N m/rad] and ``target_kd`` [N m s/rad] drive the angle toward the target in
        ``Control``; ``armature`` [kg m^2] is the joint's rotor inertia, in joint space as MuJoCo has
        it: it resists the joint's own (relative) acceleration, not the child's absolute one. ``axis`` may
        be a :class:`JointDofConfig`, whose fields fill the keywords not given. newton's per-dof
        keywords (``target_q``, ``target_qd``, ``limit_ke``, ``limit_kd``, ``effort_limit``,
        ``velocity_limit``, ``actuator_mode``, and ``friction``/``damping``/``stiffness``/``rest_q``
        at their defaults) are accepted as :class:`JointDofConfig` takes them.
        """
        owner = f"add_joint_revolute(label={label!r})"
        dof = self._single_axis_dof(
            owner, axis, limit_lower, limit_upper, target_pos, target_vel, target_ke, target_kd, armature, newton_options
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
        target_pos: float | None = None,
        target_vel: float | None = None,
        target_ke: float | None = None,
        target_kd: float | None = None,
        armature: float | None = None,
        collision_filter_parent: bool = True,
        enabled: bool = True,
        label: str | None = None,
        **newton_options,
    ) -> int:
        """Slider along ``axis`` (joint frame); positions in m, gains in N/m and N s/m, ``armature`` in
        kg (the coordinate's own inertia, as MuJoCo's). ``axis`` and newton's keywords as in
        :meth:`add_joint_revolute`."""
        owner = f"add_joint_prismatic(label={label!r})"
        dof = self._single_axis_dof(
            owner, axis, limit_lower, limit_upper, target_pos, target_vel, target_ke, target_kd, armature, newton_options
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

    _NEWTON_DOF_KEYWORDS = (
        "limit_ke",
        "limit_kd",
        "effort_limit",
        "velocity_limit",
        "friction",
        "actuator_mode",
        "damping",
        "stiffness",
        "rest_q",
    )
    """newton's per-dof keywords that ``add_joint_revolute`` / ``add_joint_prismatic`` take besides ours."""

    def _single_axis_dof(
        self, owner, axis, limit_lower, limit_upper, target_pos, target_vel, target_ke, target_kd, armature, options
    ):
        """The dof record of a one-axis joint: our keywords, newton's aliases target_q / target_qd and
        newton's other per-dof keywords; an unknown keyword raises TypeError naming it."""
        options = dict(options)
        for ours, theirs in (("target_pos", "target_q"), ("target_vel", "target_qd")):
            if theirs in options:
                v = options.pop(theirs)
                if v is not None:
                    if (target_pos if ours == "target_pos" else target_vel) is not None:
                        raise ValueError(f"{owner}: give {ours} or its newton name {theirs}, not both")
                    if ours == "target_pos":
                        target_pos = v
                    else:
                        target_vel = v
        unknown = sorted(set(options) - set(self._NEWTON_DOF_KEYWORDS))
        if unknown:
            raise TypeError(f"{owner}: unexpected keyword argument {unknown[0]!r}")
        return self._axis_dof(
            owner, axis, limit_lower, limit_upper, target_pos, target_vel, target_ke, target_kd, armature, options
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

    def add_joint_d6(
        self,
        parent: int,
        child: int,
        *,
        linear_axes: Sequence[JointDofConfig] | None = None,
        angular_axes: Sequence[JointDofConfig] | None = None,
        parent_xform=None,
        child_xform=None,
        collision_filter_parent: bool = True,
        enabled: bool = True,
        label: str | None = None,
    ) -> int:
        """Generic joint (newton's D6): free along up to three linear axes and about zero to three
        angular axes, all else locked. Each axis is a :class:`JointDofConfig` (or a direction, for a
        plain free axis) and a coordinate with its own limit and drive.

        Coordinates, in order linear then angular: a linear axis's is the anchors' offset along it [m],
        as a prismatic joint's; one angular axis's is the twist about it [rad], as a revolute joint's;
        two or three angular axes are successive rotations ``R(a_0, q_0) R(a_1, q_1) [R(a_2, q_2)]``
        [rad]: two are a universal (Cardan) joint, which locks the third rotation about
        ``a_0 x a_1``, as MuJoCo turns two hinges in one body. The axes of each kind must be
        orthonormal (the solvers project them out of the locked rows one at a time). Each axis's
        ``armature`` is its coordinate's own inertia (joint space, as MuJoCo). Not supported
        (ValueError): limits, drives or armature on three angular axes. With three linear and three
        angular axes the joint locks nothing.
        """
        owner = f"add_joint_d6(label={label!r})"
        dofs = []
        groups = []
        for kind, axes in (("linear_axes", linear_axes), ("angular_axes", angular_axes)):
            if axes is None:
                axes = []
            if isinstance(axes, (str, bytes, JointDofConfig)) or not isinstance(axes, Sequence):
                raise TypeError(f"{owner}: {kind} must be a sequence of JointDofConfig, got {type(axes).__name__}")
            if len(axes) > 3:
                raise ValueError(f"{owner}: {kind} has {len(axes)} axes, at most 3")
            group = []
            for i, cfg in enumerate(axes):
                where = f"{owner}: {kind}[{i}]"
                dof = self._axis_dof(where, cfg, None, None, None, None, None, None, None)
                for prev_i, prev in enumerate(group):
                    if abs(float(np.dot(dof["axis"], prev["axis"]))) > 1.0e-6:
                        raise ValueError(
                            f"{where}: axis {dof['axis']} is not orthogonal to {kind}[{prev_i}] {prev['axis']}; "
                            "the axes of a D6 joint's kind must be orthonormal"
                        )
                group.append(dof)
            groups.append(group)
        lin, ang = groups
        if len(ang) == 3:
            for i, dof in enumerate(ang):
                limited = math.isfinite(dof["lower"]) or math.isfinite(dof["upper"])
                if limited or dof["ke"] or dof["kd"] or dof["armature"]:
                    raise ValueError(
                        f"{owner}: angular_axes[{i}]: limits, drives and armature on three angular axes are not "
                        "supported (their rows are not ours); give the D6 joint one angular axis, or none"
                    )
        dofs = lin + ang
        return self._add_joint(
            owner,
            T.JOINT_D6,
            parent,
            child,
            parent_xform,
            child_xform,
            label,
            enabled,
            collision_filter_parent,
            dofs,
            dof_dim=(len(lin), len(ang)),
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
            "limit_ke",
            "limit_kd",
            "effort_limit",
            "velocity_limit",
            "target_mode",
        ):
            getattr(self, "joint_" + name).extend(getattr(other, "joint_" + name))
        if other.articulation_start:
            self.articulation_start.extend(a + j0 for a in other.articulation_start)
            self.articulation_joint_end = other.articulation_joint_end + j0
        self.articulation_label.extend(label_prefix + s for s in other.articulation_label)
