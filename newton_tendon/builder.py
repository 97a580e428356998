"""ModelBuilder: collects bodies, shapes, joints and worlds as plain Python lists, then finalizes a Model.

Every ``add_*`` method validates all of its arguments before it appends anything, so a call that
raises leaves the builder exactly as it was. Error messages name the entity and the rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import warp as wp

from newton_tendon.kernels import types as T

from . import _hostmath as hm
from ._float32 import check_range as check_float32_range
from ._transmission_builder import TransmissionBuilder
from .finalize import contact_body_pairs, finalize_model, transmission_body_groups
from .inertia import (
    box_mass_properties,
    capsule_mass_properties,
    combine,
    cylinder_mass_properties,
    float32_mass_problem,
    quat_to_matrix,
    sphere_mass_properties,
)
from .tendon import AttributeFrequency, CustomAttribute, TendonGuide, TendonGuideType

_AXES = {"X": 0, "Y": 1, "Z": 2}
_INF = float("inf")


# ----------------------------------------------------------------------------------------------
# Argument checks. Each returns the normalized value or raises with the owner's name in the text.


def _real(owner: str, name: str, value, *, lo: float | None = None, lo_open: bool = False, allow_inf=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{owner}: {name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if math.isnan(v) or (not allow_inf and math.isinf(v)):
        raise ValueError(f"{owner}: {name} must be finite, got {v}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        rule = ">" if lo_open else ">="
        raise ValueError(f"{owner}: {name} must be {rule} {lo}, got {v}")
    check_float32_range(owner, name, v)
    if lo_open and float(np.float32(v)) <= lo:
        raise ValueError(f"{owner}: {name} must be > {lo} in float32 too (the model's precision), got {v}")
    return v


def _vec3(owner: str, name: str, value, *, nonzero: bool = False) -> tuple:
    try:
        vals = [float(c) for c in value]
    except (TypeError, ValueError):
        raise TypeError(f"{owner}: {name} must be a sequence of three numbers, got {value!r}") from None
    if len(vals) != 3:
        raise ValueError(f"{owner}: {name} must have three components, got {len(vals)}")
    if not all(math.isfinite(c) for c in vals):
        raise ValueError(f"{owner}: {name} must be finite, got {tuple(vals)}")
    if nonzero and math.sqrt(sum(c * c for c in vals)) < 1.0e-12:
        raise ValueError(f"{owner}: {name} must be nonzero")
    check_float32_range(owner, name, vals)
    return tuple(vals)


def _xform(owner: str, name: str, value) -> tuple:
    if value is None:
        return hm.IDENTITY
    try:
        vals = [float(c) for c in value]
    except (TypeError, ValueError):
        raise TypeError(f"{owner}: {name} must be a transform (px, py, pz, qx, qy, qz, qw), got {value!r}") from None
    if len(vals) != 7:
        raise ValueError(f"{owner}: {name} must have 7 components (position, quaternion xyzw), got {len(vals)}")
    if not all(math.isfinite(c) for c in vals):
        raise ValueError(f"{owner}: {name} must be finite, got {tuple(vals)}")
    check_float32_range(owner, f"{name} position", vals[:3])
    n = math.sqrt(sum(c * c for c in vals[3:]))
    if n < 1.0e-6:
        raise ValueError(f"{owner}: {name} has a zero quaternion")
    return (*vals[:3], *(c / n for c in vals[3:]))


def _index(owner: str, name: str, value, count: int, *, allow_world: bool) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{owner}: {name} must be an int body index, got {type(value).__name__}")
    v = int(value)
    lo = -1 if allow_world else 0
    if v < lo or v >= count:
        what = "-1 (world) or " if allow_world else ""
        raise ValueError(f"{owner}: {name} {v} is out of range; expected {what}0..{count - 1}")
    return v


def _flag(owner: str, name: str, value) -> bool:
    """A bool argument (NumPy bools accepted); anything else is a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _label(owner: str, label, default: str) -> str:
    if label is None:
        return default
    if not isinstance(label, str):
        raise TypeError(f"{owner}: label must be a str, got {type(label).__name__}")
    return label


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


class ModelBuilder(TransmissionBuilder):
    """Collects a scene and turns it into a :class:`Model` with :meth:`finalize`.

    Args:
        up_axis: "X", "Y" or "Z" (default "Z").
        gravity: a scalar acceleration along the up axis [m/s^2] (default -9.81) or a 3-vector.

    Worlds: entities added directly belong to ``current_world`` (default -1). ``add_world`` and
    ``replicate`` copy a builder into new worlds; bodies of different worlds never interact. A
    builder without worlds finalizes as a single world 0. Shapes on body -1 of world -1 (for example
    the ground plane) are shared by all worlds.
    """

    def __init__(self, up_axis: str = "Z", gravity=-9.81):
        if not isinstance(up_axis, str):
            raise TypeError(f"ModelBuilder: up_axis must be 'X', 'Y' or 'Z', got {type(up_axis).__name__}")
        if up_axis not in _AXES:
            raise ValueError(f"ModelBuilder: up_axis must be 'X', 'Y' or 'Z', got {up_axis!r}")
        self.up_axis = up_axis
        if isinstance(gravity, (int, float)) and not isinstance(gravity, bool):
            g = [0.0, 0.0, 0.0]
            g[_AXES[up_axis]] = _real("ModelBuilder", "gravity", gravity)
            self.gravity = tuple(g)
        else:
            self.gravity = _vec3("ModelBuilder", "gravity", gravity)
        self.current_world = -1
        self.world_count = 0
        self.rigid_contact_margin = 0.01
        """Distance [m] below which shape pairs generate contact candidates."""

        # Bodies.
        self.body_q: list[tuple] = []
        self.body_qd: list[tuple] = []
        self.body_mass: list[float] = []
        self.body_com: list[tuple] = []
        self.body_inertia: list[np.ndarray] = []
        self.body_flags: list[int] = []
        self.body_lock_inertia: list[bool] = []
        self.body_world: list[int] = []
        self.body_label: list[str] = []
        self.body_color: list[int] | None = None
        # Shapes.
        self.shape_type: list[int] = []
        self.shape_body: list[int] = []
        self.shape_transform: list[tuple] = []
        self.shape_scale: list[tuple] = []
        self.shape_mu: list[float] = []
        self.shape_restitution: list[float] = []
        self.shape_collision_group: list[int] = []
        self.shape_has_collision: list[bool] = []
        self.shape_world: list[int] = []
        self.shape_label: list[str] = []
        self.shape_filter_pairs: set[tuple[int, int]] = set()
        self.body_filter_pairs: set[tuple[int, int]] = set()
        # Joints (per joint, then per degree of freedom).
        self.joint_type: list[int] = []
        self.joint_parent: list[int] = []
        self.joint_child: list[int] = []
        self.joint_X_p: list[tuple] = []
        self.joint_X_c: list[tuple] = []
        self.joint_enabled: list[bool] = []
        self.joint_world: list[int] = []
        self.joint_label: list[str] = []
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
        # Custom attributes: declarations by name and authored values {entity index: value}.
        self.custom_attributes: dict[str, CustomAttribute] = {}
        self.custom_attribute_values: dict[str, dict[int, object]] = {}
        # Transmission tendons (spatial, fixed) and couplings.
        self._init_transmissions()

    # ------------------------------------------------------------------------------------------
    # Counts

    @property
    def body_count(self) -> int:
        """Number of bodies added so far."""
        return len(self.body_q)

    @property
    def shape_count(self) -> int:
        """Number of shapes added so far."""
        return len(self.shape_type)

    @property
    def joint_count(self) -> int:
        """Number of joints added so far."""
        return len(self.joint_type)

    @property
    def joint_dof_count(self) -> int:
        """Number of joint degrees of freedom added so far."""
        return len(self.joint_axis)

    @property
    def articulation_count(self) -> int:
        """Number of articulations added so far."""
        return len(self.articulation_start)

    # ------------------------------------------------------------------------------------------
    # Bodies

    def add_body(
        self,
        xform=None,
        mass: float = 0.0,
        inertia=None,
        com=None,
        is_kinematic: bool = False,
        lock_inertia: bool = False,
        label: str | None = None,
        *,
        velocity=None,
    ) -> int:
        """Add a rigid body free in space; returns its index.

        Args:
            xform: initial pose of the body frame in world (px, py, pz, qx, qy, qz, qw).
            mass: mass [kg]; 0 makes the body immovable unless shapes with density add mass.
            inertia: 3x3 inertia about the COM in body axes [kg m^2] (default zero).
            com: centre of mass in the body frame [m].
            is_kinematic: the body follows its velocity in ``State.body_qd`` and is not pushed by
                constraints (infinite mass).
            lock_inertia: shapes added later do not change mass, COM or inertia.
            label: a name; defaults to ``body_<index>``.
            velocity: keyword-only initial (linear, angular) velocity, six numbers, world frame.
        """
        owner = f"add_body(label={label!r})"
        label = _label(owner, label, f"body_{self.body_count}")
        is_kinematic = _flag(owner, "is_kinematic", is_kinematic)
        lock_inertia = _flag(owner, "lock_inertia", lock_inertia)
        xf = _xform(owner, "xform", xform)
        m = _real(owner, "mass", mass, lo=0.0)
        if inertia is None:
            inertia_m = np.zeros((3, 3))
        else:
            if isinstance(inertia, (str, bytes)):
                raise TypeError(f"{owner}: inertia must be a 3x3 matrix of numbers, got {type(inertia).__name__}")
            try:
                inertia_a = np.array(inertia, dtype=np.float64)
            except TypeError:
                raise TypeError(f"{owner}: inertia must be a 3x3 matrix of numbers, got {inertia!r}") from None
            except ValueError:
                raise ValueError(f"{owner}: inertia must be a 3x3 matrix, got {inertia!r}") from None
            if inertia_a.size != 9:
                raise ValueError(f"{owner}: inertia must be a 3x3 matrix, got {inertia_a.size} values")
            inertia_m = inertia_a.reshape(3, 3)
            if not np.all(np.isfinite(inertia_m)):
                raise ValueError(f"{owner}: inertia must be finite")
            if not np.allclose(inertia_m, inertia_m.T, atol=1e-9 * max(1.0, np.abs(inertia_m).max())):
                raise ValueError(f"{owner}: inertia must be symmetric")
            if np.linalg.eigvalsh(inertia_m).min() < -1e-12:
                raise ValueError(f"{owner}: inertia must be positive semi-definite")
            check_float32_range(owner, "inertia component", inertia_m)
        c = (0.0, 0.0, 0.0) if com is None else _vec3(owner, "com", com)
        if velocity is None:
            qd = (0.0,) * 6
        else:
            try:
                vals = tuple(float(v) for v in velocity)
            except (TypeError, ValueError):
                raise TypeError(f"{owner}: velocity must be six numbers (linear, angular), got {velocity!r}") from None
            if len(vals) != 6 or not all(math.isfinite(v) for v in vals):
                raise ValueError(f"{owner}: velocity must be six finite numbers (linear, angular)")
            check_float32_range(owner, "velocity", vals)
            qd = vals
        problem = float32_mass_problem(m, inertia_m, m > 0.0 and not is_kinematic)
        if problem is not None:
            raise ValueError(f"{owner}: {problem}")
        self.body_q.append(xf)
        self.body_qd.append(qd)
        self.body_mass.append(m)
        self.body_com.append(c)
        self.body_inertia.append(inertia_m)
        self.body_flags.append(T.BODY_KINEMATIC if is_kinematic else 0)
        self.body_lock_inertia.append(bool(lock_inertia))
        self.body_world.append(self.current_world)
        self.body_label.append(label)
        self.body_color = None
        return self.body_count - 1

    def add_link(
        self,
        xform=None,
        mass: float = 0.0,
        inertia=None,
        com=None,
        is_kinematic: bool = False,
        lock_inertia: bool = False,
        label: str | None = None,
        *,
        velocity=None,
    ) -> int:
        """Add a body meant to be connected by joints (same arguments as :meth:`add_body`)."""
        return self.add_body(xform, mass, inertia, com, is_kinematic, lock_inertia, label, velocity=velocity)

    # ------------------------------------------------------------------------------------------
    # Shapes

    def _add_shape(
        self,
        owner,
        body,
        shape_type,
        xform,
        scale,
        density,
        mass,
        mu,
        restitution,
        collision_group,
        has_collision,
        label,
        mass_props,
    ):
        body = _index(owner, "body", body, self.body_count, allow_world=True)
        xf = _xform(owner, "xform", xform)
        has_collision = _flag(owner, "has_collision", has_collision)
        mu = _real(owner, "mu", mu, lo=0.0)
        restitution = _real(owner, "restitution", restitution, lo=0.0)
        if restitution > 1.0:
            raise ValueError(f"{owner}: restitution must be <= 1, got {restitution}")
        if isinstance(collision_group, bool) or not isinstance(collision_group, (int, np.integer)):
            raise TypeError(f"{owner}: collision_group must be an int")
        density = _real(owner, "density", density, lo=0.0)
        if mass is not None:
            mass = _real(owner, "mass", mass, lo=0.0)
        label = _label(owner, label, f"shape_{self.shape_count}")
        # Mass properties (computed before anything is appended).
        shape_mass, shape_inertia = 0.0, np.zeros((3, 3))
        if body >= 0 and not self.body_lock_inertia[body] and mass_props is not None:
            m_unit, i_unit = mass_props(1.0)
            if mass is not None:
                scale_m = mass / m_unit if m_unit > 0.0 else 0.0
            else:
                scale_m = density
            shape_mass, shape_inertia = m_unit * scale_m, i_unit * scale_m
        combined = None
        if shape_mass > 0.0:
            r = quat_to_matrix(xf[3:])
            combined = combine(
                self.body_mass[body],
                self.body_com[body],
                self.body_inertia[body],
                shape_mass,
                xf[:3],
                r @ shape_inertia @ r.T,
            )
            moving = (self.body_flags[body] & T.BODY_KINEMATIC) == 0
            problem = float32_mass_problem(combined[0], combined[2], moving)
            if problem is not None:
                source = "mass" if mass is not None else "density"
                raise ValueError(
                    f"{owner}: the shape's mass {shape_mass:g} kg (from its {source} and size) leaves body "
                    f"{self.body_label[body]!r} (index {body}) outside float32: {problem}"
                )
            check_float32_range(owner, f"body {self.body_label[body]!r} centre of mass", combined[1])
        self.shape_type.append(shape_type)
        self.shape_body.append(body)
        self.shape_transform.append(xf)
        self.shape_scale.append(scale)
        self.shape_mu.append(mu)
        self.shape_restitution.append(restitution)
        self.shape_collision_group.append(int(collision_group))
        self.shape_has_collision.append(bool(has_collision))
        self.shape_world.append(self.body_world[body] if body >= 0 else self.current_world)
        self.shape_label.append(label)
        if combined is not None:
            m, c, i = combined
            self.body_mass[body] = m
            self.body_com[body] = tuple(float(v) for v in c)
            self.body_inertia[body] = i
        return self.shape_count - 1

    def add_shape_sphere(
        self,
        body: int,
        xform=None,
        radius: float = 1.0,
        *,
        density: float = 1000.0,
        mass=None,
        mu: float = 0.5,
        restitution: float = 0.0,
        collision_group: int = 0,
        has_collision: bool = True,
        label: str | None = None,
    ) -> int:
        """Attach a solid sphere to ``body`` (-1 = world); ``density`` [kg/m^3] or ``mass`` [kg] adds to the body."""
        owner = f"add_shape_sphere(label={label!r})"
        r = _real(owner, "radius", radius, lo=0.0, lo_open=True)
        return self._add_shape(
            owner,
            body,
            T.SHAPE_SPHERE,
            xform,
            (r, 0.0, 0.0),
            density,
            mass,
            mu,
            restitution,
            collision_group,
            has_collision,
            label,
            lambda d: sphere_mass_properties(d, r),
        )

    def add_shape_box(
        self,
        body: int,
        xform=None,
        hx: float = 0.5,
        hy: float = 0.5,
        hz: float = 0.5,
        *,
        density: float = 1000.0,
        mass=None,
        mu: float = 0.5,
        restitution: float = 0.0,
        collision_group: int = 0,
        has_collision: bool = True,
        label: str | None = None,
    ) -> int:
        """Attach a solid box with half extents (hx, hy, hz) [m] to ``body``."""
        owner = f"add_shape_box(label={label!r})"
        h = tuple(_real(owner, n, v, lo=0.0, lo_open=True) for n, v in (("hx", hx), ("hy", hy), ("hz", hz)))
        return self._add_shape(
            owner,
            body,
            T.SHAPE_BOX,
            xform,
            h,
            density,
            mass,
            mu,
            restitution,
            collision_group,
            has_collision,
            label,
            lambda d: box_mass_properties(d, *h),
        )

    def add_shape_capsule(
        self,
        body: int,
        xform=None,
        radius: float = 0.5,
        half_height: float = 0.5,
        *,
        density: float = 1000.0,
        mass=None,
        mu: float = 0.5,
        restitution: float = 0.0,
        collision_group: int = 0,
        has_collision: bool = True,
        label: str | None = None,
    ) -> int:
        """Attach a capsule along the shape's local Z (segment half length ``half_height`` [m])."""
        owner = f"add_shape_capsule(label={label!r})"
        r = _real(owner, "radius", radius, lo=0.0, lo_open=True)
        hh = _real(owner, "half_height", half_height, lo=0.0)
        return self._add_shape(
            owner,
            body,
            T.SHAPE_CAPSULE,
            xform,
            (r, hh, 0.0),
            density,
            mass,
            mu,
            restitution,
            collision_group,
            has_collision,
            label,
            lambda d: capsule_mass_properties(d, r, hh),
        )

    def add_shape_cylinder(
        self,
        body: int,
        xform=None,
        radius: float = 0.5,
        half_height: float = 0.5,
        *,
        density: float = 1000.0,
        mass=None,
        mu: float = 0.5,
        restitution: float = 0.0,
        collision_group: int = 0,
        has_collision: bool = True,
        label: str | None = None,
    ) -> int:
        """Attach a solid cylinder along the shape's local Z. It collides with planes only."""
        owner = f"add_shape_cylinder(label={label!r})"
        r = _real(owner, "radius", radius, lo=0.0, lo_open=True)
        hh = _real(owner, "half_height", half_height, lo=0.0, lo_open=True)
        return self._add_shape(
            owner,
            body,
            T.SHAPE_CYLINDER,
            xform,
            (r, hh, 0.0),
            density,
            mass,
            mu,
            restitution,
            collision_group,
            has_collision,
            label,
            lambda d: cylinder_mass_properties(d, r, hh),
        )

    def add_shape_plane(
        self,
        body: int = -1,
        xform=None,
        width: float = 0.0,
        length: float = 0.0,
        *,
        mu: float = 0.5,
        restitution: float = 0.0,
        collision_group: int = 0,
        has_collision: bool = True,
        label: str | None = None,
    ) -> int:
        """Attach a plane with normal along the shape's local +Z; width/length 0 make it infinite. Massless."""
        owner = f"add_shape_plane(label={label!r})"
        w = _real(owner, "width", width, lo=0.0)
        ln = _real(owner, "length", length, lo=0.0)
        return self._add_shape(
            owner,
            body,
            T.SHAPE_PLANE,
            xform,
            (0.5 * w, 0.5 * ln, 0.0),
            0.0,
            None,
            mu,
            restitution,
            collision_group,
            has_collision,
            label,
            None,
        )

    def add_ground_plane(
        self, height: float = 0.0, *, mu: float = 0.5, restitution: float = 0.0, label: str = "ground"
    ) -> int:
        """Add an infinite static ground plane through ``height`` [m] along the up axis, shared by all worlds."""
        owner = f"add_ground_plane(label={label!r})"
        h = _real(owner, "height", height)
        axis = _AXES[self.up_axis]
        p = [0.0, 0.0, 0.0]
        p[axis] = h
        rot = {
            0: hm.quat_from_axis_angle((0, 1, 0), math.pi / 2),
            1: hm.quat_from_axis_angle((1, 0, 0), -math.pi / 2),
            2: (0.0, 0.0, 0.0, 1.0),
        }[axis]
        saved = self.current_world
        self.current_world = -1
        try:
            return self.add_shape_plane(-1, (*p, *rot), mu=mu, restitution=restitution, label=label)
        finally:
            self.current_world = saved

    def add_shape_collision_filter_pair(self, shape_a: int, shape_b: int):
        """Never generate contacts between these two shapes."""
        a = _index("add_shape_collision_filter_pair", "shape_a", shape_a, self.shape_count, allow_world=False)
        b = _index("add_shape_collision_filter_pair", "shape_b", shape_b, self.shape_count, allow_world=False)
        if a == b:
            raise ValueError(f"add_shape_collision_filter_pair: shape_a and shape_b must differ, both are {a}")
        self.shape_filter_pairs.add((min(a, b), max(a, b)))

    # ------------------------------------------------------------------------------------------
    # Joints

    def _add_joint(
        self, owner, jtype, parent, child, parent_xform, child_xform, label, enabled, collision_filter_parent, dofs
    ):
        """Validate common joint arguments, then append the joint and its dofs (list of dicts)."""
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
        a = np.asarray(_vec3(owner, "axis", axis, nonzero=True))
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

    # ------------------------------------------------------------------------------------------
    # Custom attributes

    _REFERENCE_DOMAINS = tuple(f.domain for f in AttributeFrequency)

    def _domain_count(self, domain: str) -> int:
        """Number of entities in a custom-attribute domain ("body" -> body_count, ...)."""
        return getattr(self, f"{domain}_count")

    def add_custom_attribute(self, attribute: CustomAttribute) -> None:
        """Declare a custom attribute; values are authored later (for tendons through ``add_tendon``).

        The finalized model holds one array per attribute in ``model.custom_attributes[name]``, with
        one value per entity of the attribute's frequency (``default`` where none was authored).
        """
        owner = "add_custom_attribute"
        if not isinstance(attribute, CustomAttribute):
            raise TypeError(f"{owner}: expected a CustomAttribute, got {type(attribute).__name__}")
        name = attribute.name
        if not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a str, got {type(name).__name__}")
        if not name.isidentifier():
            raise ValueError(f"{owner}: name must be a Python identifier, got {name!r}")
        if name in self.custom_attributes:
            raise ValueError(f"{owner}: attribute '{name}' is already declared")
        freq = attribute.frequency
        if isinstance(freq, (bool, np.bool_)) or not isinstance(freq, (int, np.integer)):
            raise TypeError(f"{owner}: '{name}' frequency must be an AttributeFrequency, got {type(freq).__name__}")
        try:
            AttributeFrequency(freq)
        except ValueError:
            raise ValueError(f"{owner}: '{name}' has unknown frequency {freq!r}") from None
        if attribute.dtype not in (float, int, "vec3"):
            raise TypeError(f"{owner}: '{name}' dtype must be float, int or 'vec3', got {attribute.dtype!r}")
        if attribute.references is not None:
            if attribute.dtype is not int:
                raise TypeError(f"{owner}: '{name}' references {attribute.references!r} but its dtype is not int")
            if attribute.references not in self._REFERENCE_DOMAINS:
                raise ValueError(
                    f"{owner}: '{name}' references unknown domain {attribute.references!r}; "
                    f"expected one of {self._REFERENCE_DOMAINS}"
                )
        self._custom_value(f"{owner}('{name}')", attribute, attribute.default)
        self.custom_attributes[name] = attribute
        self.custom_attribute_values[name] = {}

    @staticmethod
    def _custom_value(owner: str, attribute: CustomAttribute, value):
        if attribute.dtype is float:
            return _real(owner, attribute.name, value)
        if attribute.dtype is int:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{owner}: {attribute.name} must be an int, got {type(value).__name__}")
            return int(value)
        return _vec3(owner, attribute.name, value)

    def _check_custom_values(self, owner: str, values, frequency: AttributeFrequency) -> dict:
        """Validate authored custom-attribute values of one entity; returns {name: normalized value}."""
        if values is None:
            return {}
        if not isinstance(values, dict):
            raise TypeError(f"{owner}: custom attributes must be a dict of name -> value, got {type(values).__name__}")
        out = {}
        for name, value in values.items():
            attr = self.custom_attributes.get(name)
            if attr is None:
                raise ValueError(f"{owner}: custom attribute '{name}' is not declared; call add_custom_attribute first")
            if attr.frequency != frequency:
                raise ValueError(
                    f"{owner}: custom attribute '{name}' has frequency {AttributeFrequency(attr.frequency).name}, "
                    f"expected {frequency.name} here"
                )
            out[name] = self._custom_value(f"{owner}: custom attribute", attr, value)
        return out

    # ------------------------------------------------------------------------------------------
    # Routed tendons

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
            if body >= 0:
                w = self.body_world[body]
                if world is None:
                    world = w
                elif w != world:
                    raise ValueError(
                        f"{go}: body {body} is in world {w} but earlier guides are in world {world}; "
                        "all guides of a tendon must be in one world"
                    )
            if isinstance(g.guide_type, (bool, np.bool_)) or not isinstance(g.guide_type, (int, np.integer)):
                raise TypeError(f"{go}: guide_type must be a TendonGuideType, got {type(g.guide_type).__name__}")
            try:
                gtype = int(TendonGuideType(g.guide_type))
            except (ValueError, TypeError):
                raise ValueError(f"{go}: unknown guide_type {g.guide_type!r}; use TendonGuideType") from None
            if isinstance(g.orientation, (bool, np.bool_)) or not isinstance(g.orientation, (int, np.integer)):
                raise TypeError(f"{go}: orientation must be the int 1 or -1, got {type(g.orientation).__name__}")
            if g.orientation not in (1, -1):
                raise ValueError(f"{go}: orientation must be 1 or -1, got {g.orientation!r}")
            radius = _real(go, "radius", g.radius, lo=0.0)
            mu = _real(go, "mu", g.mu, lo=0.0)
            compliance = _real(go, "compliance", g.compliance, lo=0.0)
            damping = _real(go, "damping", g.damping, lo=0.0)
            rest = _real(go, "rest_length", g.rest_length)
            offset = _vec3(go, "offset", g.offset)
            axis = _vec3(go, "axis", g.axis, nonzero=True)
            if gtype == TendonGuideType.ROLLER and radius <= 0.0:
                raise ValueError(f"{go}: a ROLLER needs radius > 0, got {radius}")
            if gtype == TendonGuideType.ROLLER and (i == 0 or i == n - 1):
                raise ValueError(
                    f"{go}: the first and last guides must be point guides (ANCHOR or PINHOLE), not a ROLLER: "
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
                    raise ValueError(f"{go}: dynamic=True is only supported on ROLLER guides")
                if i == 0 or i == n - 1:
                    raise ValueError(f"{go}: dynamic=True is not supported on the first or last guide")
                if guides and guides[-1]["dynamic"]:
                    raise ValueError(f"{go}: dynamic rollers cannot be adjacent (guide {i - 1} is dynamic too)")
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

    # ------------------------------------------------------------------------------------------
    # Importers (the parsers live in their own modules and import pxr / xml only when called)

    def add_usd(self, source, **kwargs):
        """Append a USD stage (a path or an open ``Usd.Stage``): UsdPhysics bodies, shapes and joints,
        MuJoCo tendon prims and native routed-cable prims. See :func:`newton_tendon.usd.add_usd`."""
        from .usd import add_usd

        return add_usd(self, source, **kwargs)

    def add_mjcf(self, source, **kwargs):
        """Append an MJCF model (a path or an XML string), tendons included.
        See :func:`newton_tendon.mjcf.add_mjcf`."""
        from .mjcf import add_mjcf

        return add_mjcf(self, source, **kwargs)

    # ------------------------------------------------------------------------------------------
    # Worlds

    def add_builder(self, other: ModelBuilder, xform=None, world: int | None = None, *, label_prefix: str = ""):
        """Append everything of ``other``, placed by ``xform``, with all indices remapped.

        Entities of ``other`` in its world -1 go to ``world`` (default: ``self.current_world``);
        ``other``'s own worlds are appended after this builder's worlds.
        """
        owner = "add_builder"
        if not isinstance(label_prefix, str):
            raise TypeError(f"{owner}: label_prefix must be a str, got {type(label_prefix).__name__}")
        if not isinstance(other, ModelBuilder):
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
        rot = xf[3:]
        for i in range(other.body_count):
            q = other.body_q[i]
            qd = other.body_qd[i]
            if not identity:
                q = hm.transform_mul(xf, q)
                qd = (*hm.quat_rotate(rot, qd[:3]), *hm.quat_rotate(rot, qd[3:]))
            self.body_q.append(q)
            self.body_qd.append(qd)
        self.body_mass.extend(other.body_mass)
        self.body_com.extend(other.body_com)
        self.body_inertia.extend(i.copy() for i in other.body_inertia)
        self.body_flags.extend(other.body_flags)
        self.body_lock_inertia.extend(other.body_lock_inertia)
        self.body_world.extend(remap_world(w) for w in other.body_world)
        self.body_label.extend(label_prefix + s for s in other.body_label)

        for i in range(other.shape_count):
            b = other.shape_body[i]
            t = other.shape_transform[i]
            if b < 0 and not identity:
                t = hm.transform_mul(xf, t)
            self.shape_body.append(b + b0 if b >= 0 else -1)
            self.shape_transform.append(t)
        self.shape_type.extend(other.shape_type)
        self.shape_scale.extend(other.shape_scale)
        self.shape_mu.extend(other.shape_mu)
        self.shape_restitution.extend(other.shape_restitution)
        self.shape_collision_group.extend(other.shape_collision_group)
        self.shape_has_collision.extend(other.shape_has_collision)
        self.shape_world.extend(remap_world(w) for w in other.shape_world)
        self.shape_label.extend(label_prefix + s for s in other.shape_label)
        self.shape_filter_pairs.update((a + s0, b + s0) for a, b in other.shape_filter_pairs)
        self.body_filter_pairs.update((a + b0, b + b0) for a, b in other.body_filter_pairs)

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
        self._merge_tendons(other, xf, identity, remap_world, label_prefix, b0)
        self._merge_transmissions(other, xf, identity, remap_world, label_prefix, b0, j0)
        self._merge_custom_attributes(other, offsets)
        self.world_count += other.world_count
        self.body_color = None

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

    def _merge_custom_attributes(self, other: ModelBuilder, offsets: dict[str, int]):
        """Append ``other``'s custom-attribute values, shifting entity indices and integer references."""
        for name, attr in other.custom_attributes.items():
            if name not in self.custom_attributes:
                self.custom_attributes[name] = attr
                self.custom_attribute_values[name] = {}
            base = offsets[AttributeFrequency(attr.frequency).domain]
            ref = offsets[attr.references] if attr.references else 0
            dst = self.custom_attribute_values[name]
            for idx, v in other.custom_attribute_values[name].items():
                dst[idx + base] = v + ref if (attr.references and v >= 0) else v

    def set_custom_attribute(self, name: str, index: int, value) -> None:
        """Author the value of a declared custom attribute for one entity (body, shape, joint, tendon, ...)."""
        owner = f"set_custom_attribute({name!r})"
        if not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a str, got {type(name).__name__}")
        attr = self.custom_attributes.get(name)
        if attr is None:
            raise ValueError(f"{owner}: custom attribute '{name}' is not declared")
        count = self._domain_count(AttributeFrequency(attr.frequency).domain)
        i = _index(owner, "index", index, count, allow_world=False)
        self.custom_attribute_values[name][i] = self._custom_value(owner, attr, value)

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
        if not isinstance(builder, ModelBuilder):
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

    # ------------------------------------------------------------------------------------------
    # Colouring and finalize

    def _body_edges(self) -> list[tuple[int, int]]:
        """Pairs of bodies coupled by a row: joints, contact-capable shape pairs, transmission
        tendons and their couplings, and every two bodies on one routed cable (SolverVBD's run rows
        join the spans between guides that pass material freely, so a body's Newton step reads the
        motion of every body of its run; which guides those are depends on friction and wrap, so
        the whole route counts)."""
        edges = [(p, c) for p, c in zip(self.joint_parent, self.joint_child, strict=True) if p >= 0]
        edges.extend(contact_body_pairs(self))
        # Transmission tendons and couplings: every pair of distinct bodies of one row.
        for group in transmission_body_groups(self):
            members = sorted(set(group))
            edges.extend((a, b) for i, a in enumerate(members) for b in members[i + 1 :])
        starts = [*self.tendon_start, self.tendon_guide_count]
        for t in range(self.tendon_count):
            members = sorted({b for b in self.tendon_guide_body[starts[t] : starts[t + 1]] if b >= 0})
            edges.extend((a, b) for i, a in enumerate(members) for b in members[i + 1 :])
        return edges

    def color(self) -> int:
        """Greedy graph colouring of bodies: two bodies that share a constraint get different colours.

        VBD solves bodies of one colour in parallel. Returns the number of colours.
        """
        n = self.body_count
        adj: list[list[int]] = [[] for _ in range(n)]
        for a, b in self._body_edges():
            adj[a].append(b)
            adj[b].append(a)
        degree = np.array([len(a) for a in adj])
        colors = np.full(n, -1, dtype=np.int64)
        # Largest degree first gives fewer colours on chains and trees.
        for b in np.argsort(-degree, kind="stable"):
            used = {colors[o] for o in adj[b] if colors[o] >= 0}
            c = 0
            while c in used:
                c += 1
            colors[b] = c
        self.body_color = [int(c) for c in colors]
        return int(colors.max() + 1) if n else 0

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
