"""Collision shapes: their storage, ``add_shape_*``, the ground plane and collision filters.

A shape's material and collision settings come from newton's ``ShapeConfig`` (``cfg=``) and/or our
keywords, resolved by ``shape_config.resolve_shape_settings``. A shape with density or mass adds its
mass properties to its body as it is added (unless the body locks its inertia). Which shape pairs may
touch is decided at finalize (``newton_tendon.finalize``).
"""

from __future__ import annotations

import math

import numpy as np

from newton_tendon.kernels import types as T

from .. import _hostmath as hm
from .._float32 import check_range as check_float32_range
from ..axis import Axis
from ..inertia import (
    MESH_INERTIA_MODES,
    box_mass_properties,
    capsule_mass_properties,
    combine,
    cylinder_mass_properties,
    ellipsoid_mass_properties,
    float32_mass_problem,
    mesh_mass_properties,
    quat_to_matrix,
    sphere_mass_properties,
)
from ._checks import _index, _label, _real, _xform
from .shape_config import ShapeConfig, check_color, resolve_shape_settings


class ShapeBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: the per-shape lists, shape filter pairs and the
    methods that add shapes."""

    ShapeConfig = ShapeConfig

    def _init_shapes(self):
        # Shapes.
        self.shape_type: list[int] = []
        self.shape_body: list[int] = []
        self.shape_transform: list[tuple] = []
        self.shape_scale: list[tuple] = []
        self.shape_mu: list[float] = []
        self.shape_restitution: list[float] = []
        self.shape_collision_group: list[int] = []
        self.shape_has_collision: list[bool] = []
        self.shape_margin: list[float] = []
        self.shape_gap: list[float] = []
        self.shape_world: list[int] = []
        self.shape_label: list[str] = []
        # Triangle mesh of a mesh shape (vertices [V, 3] float32 m, faces [F, 3] int32), None otherwise.
        self.shape_mesh: list[tuple[np.ndarray, np.ndarray] | None] = []
        # How a pair mixes its two shapes' mu: False the mean (default), True MuJoCo's maximum
        # (a pair of two True shapes uses max(mu_a, mu_b); the MJCF importer sets it).
        self.shape_friction_max: list[bool] = []
        self.shape_filter_pairs: set[tuple[int, int]] = set()
        self.body_filter_pairs: set[tuple[int, int]] = set()
        # Explicit contact pairs (a < b) -> their friction coefficient (-1: the shapes' mean).
        self.shape_contact_pair_mu: dict[tuple[int, int], float] = {}

    @property
    def shape_count(self) -> int:
        """Number of shapes added so far."""
        return len(self.shape_type)

    def _add_shape(self, owner, body, shape_type, xform, scale, settings, mass, label, mass_props, mesh=None):
        """Append one shape with the checked ``settings`` of :func:`resolve_shape_settings`.
        ``mass_props(density)`` gives (mass, inertia) about the shape origin's centre, or (mass,
        inertia about the centre of mass, centre of mass in the shape frame)."""
        body = _index(owner, "body", body, self.body_count, allow_world=True)
        xf = _xform(owner, "xform", xform)
        density = settings["density"]
        if mass is not None:
            mass = _real(owner, "mass", mass, lo=0.0)
        label = _label(owner, label, f"shape_{self.shape_count}")
        # Mass properties (computed before anything is appended).
        shape_mass, shape_inertia, shape_com = 0.0, np.zeros((3, 3)), np.zeros(3)
        if body >= 0 and not self.body_lock_inertia[body] and mass_props is not None:
            m_unit, i_unit, *com = mass_props(1.0)
            if com:
                shape_com = np.asarray(com[0], dtype=np.float64)
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
                np.asarray(xf[:3], dtype=np.float64) + r @ shape_com,
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
        self.shape_mu.append(settings["mu"])
        self.shape_restitution.append(settings["restitution"])
        self.shape_collision_group.append(settings["collision_group"])
        self.shape_has_collision.append(settings["has_collision"])
        self.shape_margin.append(settings["margin"])
        self.shape_gap.append(settings["gap"])
        self.shape_world.append(self.body_world[body] if body >= 0 else self.current_world)
        self.shape_label.append(label)
        self.shape_mesh.append(mesh)
        self.shape_friction_max.append(False)
        if combined is not None:
            m, c, i = combined
            self.body_mass[body] = m
            self.body_com[body] = tuple(float(v) for v in c)
            self.body_inertia[body] = i
        return self.shape_count - 1

    @staticmethod
    def _settings(owner, cfg, as_site, color, opacity, **explicit):
        check_color(owner, color, opacity)
        return resolve_shape_settings(owner, cfg, as_site, explicit)

    def add_shape_sphere(
        self,
        body: int,
        xform=None,
        radius: float = 1.0,
        *,
        cfg: ShapeConfig | None = None,
        as_site: bool = False,
        density: float | None = None,
        mass=None,
        mu: float | None = None,
        restitution: float | None = None,
        collision_group: int | None = None,
        has_collision: bool | None = None,
        margin: float | None = None,
        gap: float | None = None,
        color=None,
        opacity=None,
        label: str | None = None,
    ) -> int:
        """Attach a solid sphere to ``body`` (-1 = world); ``density`` [kg/m^3] or ``mass`` [kg] adds to the body.

        Material and collision settings come from ``cfg`` (a :class:`ShapeConfig`), overridden by any
        keyword passed; unset ones default to density 1000 kg/m^3, mu 0.5, restitution 0, collision
        group 1, has_collision True, margin and gap 0 m. ``as_site=True`` makes a site: a massless
        shape that never collides. ``color``/``opacity`` are checked and not stored.
        """
        owner = f"add_shape_sphere(label={label!r})"
        r = _real(owner, "radius", radius, lo=0.0, lo_open=True)
        st = self._settings(owner, cfg, as_site, color, opacity, density=density, mass=mass, mu=mu,
                            restitution=restitution, collision_group=collision_group, has_collision=has_collision,
                            margin=margin, gap=gap)  # fmt: skip
        return self._add_shape(
            owner, body, T.SHAPE_SPHERE, xform, (r, 0.0, 0.0), st, mass, label, lambda d: sphere_mass_properties(d, r)
        )

    def add_shape_box(
        self,
        body: int,
        xform=None,
        hx: float = 0.5,
        hy: float = 0.5,
        hz: float = 0.5,
        *,
        cfg: ShapeConfig | None = None,
        as_site: bool = False,
        density: float | None = None,
        mass=None,
        mu: float | None = None,
        restitution: float | None = None,
        collision_group: int | None = None,
        has_collision: bool | None = None,
        margin: float | None = None,
        gap: float | None = None,
        color=None,
        opacity=None,
        label: str | None = None,
    ) -> int:
        """Attach a solid box with half extents (hx, hy, hz) [m] to ``body``; settings as in :meth:`add_shape_sphere`."""
        owner = f"add_shape_box(label={label!r})"
        h = tuple(_real(owner, n, v, lo=0.0, lo_open=True) for n, v in (("hx", hx), ("hy", hy), ("hz", hz)))
        st = self._settings(owner, cfg, as_site, color, opacity, density=density, mass=mass, mu=mu,
                            restitution=restitution, collision_group=collision_group, has_collision=has_collision,
                            margin=margin, gap=gap)  # fmt: skip
        return self._add_shape(
            owner, body, T.SHAPE_BOX, xform, h, st, mass, label, lambda d: box_mass_properties(d, *h)
        )

    def add_shape_capsule(
        self,
        body: int,
        xform=None,
        radius: float = 0.5,
        half_height: float = 0.5,
        *,
        cfg: ShapeConfig | None = None,
        as_site: bool = False,
        density: float | None = None,
        mass=None,
        mu: float | None = None,
        restitution: float | None = None,
        collision_group: int | None = None,
        has_collision: bool | None = None,
        margin: float | None = None,
        gap: float | None = None,
        color=None,
        opacity=None,
        label: str | None = None,
    ) -> int:
        """Attach a capsule along the shape's local Z (segment half length ``half_height`` [m]); settings as in
        :meth:`add_shape_sphere`."""
        owner = f"add_shape_capsule(label={label!r})"
        r = _real(owner, "radius", radius, lo=0.0, lo_open=True)
        hh = _real(owner, "half_height", half_height, lo=0.0)
        st = self._settings(owner, cfg, as_site, color, opacity, density=density, mass=mass, mu=mu,
                            restitution=restitution, collision_group=collision_group, has_collision=has_collision,
                            margin=margin, gap=gap)  # fmt: skip
        return self._add_shape(
            owner, body, T.SHAPE_CAPSULE, xform, (r, hh, 0.0), st, mass, label,
            lambda d: capsule_mass_properties(d, r, hh),
        )  # fmt: skip

    def add_shape_cylinder(
        self,
        body: int,
        xform=None,
        radius: float = 0.5,
        half_height: float = 0.5,
        *,
        cfg: ShapeConfig | None = None,
        as_site: bool = False,
        density: float | None = None,
        mass=None,
        mu: float | None = None,
        restitution: float | None = None,
        collision_group: int | None = None,
        has_collision: bool | None = None,
        margin: float | None = None,
        gap: float | None = None,
        color=None,
        opacity=None,
        label: str | None = None,
    ) -> int:
        """Attach a solid cylinder along the shape's local Z (flat caps at +-``half_height`` [m]); settings as in
        :meth:`add_shape_sphere`."""
        owner = f"add_shape_cylinder(label={label!r})"
        r = _real(owner, "radius", radius, lo=0.0, lo_open=True)
        hh = _real(owner, "half_height", half_height, lo=0.0, lo_open=True)
        st = self._settings(owner, cfg, as_site, color, opacity, density=density, mass=mass, mu=mu,
                            restitution=restitution, collision_group=collision_group, has_collision=has_collision,
                            margin=margin, gap=gap)  # fmt: skip
        return self._add_shape(
            owner, body, T.SHAPE_CYLINDER, xform, (r, hh, 0.0), st, mass, label,
            lambda d: cylinder_mass_properties(d, r, hh),
        )  # fmt: skip

    def add_shape_ellipsoid(
        self,
        body: int,
        xform=None,
        a: float = 1.0,
        b: float = 0.75,
        c: float = 0.5,
        *,
        cfg: ShapeConfig | None = None,
        as_site: bool = False,
        density: float | None = None,
        mass=None,
        mu: float | None = None,
        restitution: float | None = None,
        collision_group: int | None = None,
        has_collision: bool | None = None,
        margin: float | None = None,
        gap: float | None = None,
        color=None,
        opacity=None,
        label: str | None = None,
    ) -> int:
        """Attach a solid ellipsoid with semi-axes ``a``, ``b``, ``c`` [m] along the shape's local X, Y, Z;
        settings as in :meth:`add_shape_sphere`. It collides with every other shape type (one contact
        point per pair: an ellipsoid is strictly convex)."""
        owner = f"add_shape_ellipsoid(label={label!r})"
        axes = tuple(_real(owner, k, v, lo=0.0, lo_open=True) for k, v in (("a", a), ("b", b), ("c", c)))
        st = self._settings(owner, cfg, as_site, color, opacity, density=density, mass=mass, mu=mu,
                            restitution=restitution, collision_group=collision_group, has_collision=has_collision,
                            margin=margin, gap=gap)  # fmt: skip
        return self._add_shape(
            owner, body, T.SHAPE_ELLIPSOID, xform, axes, st, mass, label,
            lambda d: ellipsoid_mass_properties(d, *axes),
        )  # fmt: skip

    def add_shape_mesh(
        self,
        body: int,
        xform=None,
        vertices=None,
        faces=None,
        *,
        inertia: str = "exact",
        cfg: ShapeConfig | None = None,
        as_site: bool = False,
        density: float | None = None,
        mass=None,
        mu: float | None = None,
        restitution: float | None = None,
        collision_group: int | None = None,
        has_collision: bool | None = None,
        margin: float | None = None,
        gap: float | None = None,
        color=None,
        opacity=None,
        label: str | None = None,
    ) -> int:
        """Attach a triangle mesh: ``vertices`` [V, 3] m in the shape frame, ``faces`` [F, 3] vertex
        indices wound outwards. Settings as in :meth:`add_shape_sphere`.

        Its mass properties are those of the solid the mesh bounds (``inertia``: "exact" for a closed
        mesh, "legacy" for MuJoCo's default rule; :func:`newton_tendon.inertia.mesh_mass_properties`),
        with its centre of mass where the mesh puts it. It collides as its convex hull (MuJoCo's rule
        for mesh geoms): one contact point per pair, through the support mapping of its vertices, so a
        flat face resting on a flat face touches at one point (it rocks); give such bodies primitive
        collision shapes, or keep the mesh for drawing with ``has_collision=False``. The viewer and the
        USD recorder draw the mesh itself.

        The shape frame is moved to the centroid c of the vertices the faces use: the model keeps the
        vertices minus c and the transform ``xform * T(c)`` (the same surface in the body)."""
        owner = f"add_shape_mesh(label={label!r})"
        try:
            v = np.asarray(vertices, dtype=np.float64)
            f = np.asarray(faces)
        except (TypeError, ValueError):
            raise TypeError(f"{owner}: vertices and faces must be arrays of numbers") from None
        if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4:
            raise ValueError(f"{owner}: vertices must have shape [V, 3] with V >= 4, got {v.shape}")
        if not np.isfinite(v).all():
            raise ValueError(f"{owner}: vertices must be finite")
        if f.ndim != 2 or f.shape[1] != 3 or len(f) < 4 or not np.issubdtype(f.dtype, np.integer):
            raise ValueError(f"{owner}: faces must be integers of shape [F, 3] with F >= 4, got {f.shape} {f.dtype}")
        if f.min() < 0 or f.max() >= len(v):
            raise ValueError(f"{owner}: a face index is outside 0..{len(v) - 1}")
        xf = _xform(owner, "xform", xform)
        check_float32_range(owner, "vertices", v)
        # Re-centre on the vertices' centroid, which lies inside the hull: the contact query starts
        # from the shape origins, which must be interior points.
        centre = v[np.unique(f)].mean(axis=0)
        v = v - centre
        xf = hm.transform_mul(xf, (*centre, 0.0, 0.0, 0.0, 1.0))
        extent = np.abs(v).max(axis=0)
        if not (extent.max() > 0.0):
            raise ValueError(f"{owner}: the vertices all coincide")
        st = self._settings(owner, cfg, as_site, color, opacity, density=density, mass=mass, mu=mu,
                            restitution=restitution, collision_group=collision_group, has_collision=has_collision,
                            margin=margin, gap=gap)  # fmt: skip
        if inertia not in MESH_INERTIA_MODES:
            raise ValueError(f"{owner}: inertia must be one of {MESH_INERTIA_MODES}, got {inertia!r}")
        unit = None
        if body >= 0 and (st["density"] > 0.0 or mass is not None):
            try:
                unit = mesh_mass_properties(1.0, v, f, inertia)
            except ValueError as e:
                raise ValueError(f"{owner}: {e}") from None
        mesh = (v.astype(np.float32), f.astype(np.int32))
        scale = tuple(float(x) for x in np.maximum(extent, 1.0e-9))
        return self._add_shape(
            owner, body, T.SHAPE_MESH, xf, scale, st, mass, label,
            None if unit is None else (lambda d: (unit[0] * d, unit[2] * d, unit[1])), mesh,
        )  # fmt: skip

    def add_shape_plane(
        self,
        body: int = -1,
        xform=None,
        width: float = 0.0,
        length: float = 0.0,
        *,
        cfg: ShapeConfig | None = None,
        mu: float | None = None,
        restitution: float | None = None,
        collision_group: int | None = None,
        has_collision: bool | None = None,
        margin: float | None = None,
        gap: float | None = None,
        color=None,
        opacity=None,
        label: str | None = None,
    ) -> int:
        """Attach a plane with normal along the shape's local +Z; width/length 0 make it infinite. Massless
        (a ``cfg`` density is ignored); other settings as in :meth:`add_shape_sphere`."""
        owner = f"add_shape_plane(label={label!r})"
        w = _real(owner, "width", width, lo=0.0)
        ln = _real(owner, "length", length, lo=0.0)
        st = self._settings(owner, cfg, False, color, opacity, mu=mu, restitution=restitution,
                            collision_group=collision_group, has_collision=has_collision, margin=margin, gap=gap)  # fmt: skip
        return self._add_shape(owner, body, T.SHAPE_PLANE, xform, (0.5 * w, 0.5 * ln, 0.0), st, None, label, None)

    def add_ground_plane(
        self,
        height: float = 0.0,
        *,
        cfg: ShapeConfig | None = None,
        mu: float | None = None,
        restitution: float | None = None,
        collision_group: int | None = None,
        color=None,
        opacity=None,
        label: str | None = None,
    ) -> int:
        """Add an infinite static ground plane through ``height`` [m] along the up axis, shared by all worlds.

        Settings as in :meth:`add_shape_plane`; the default label is ``"ground"``."""
        label = "ground" if label is None else label
        owner = f"add_ground_plane(label={label!r})"
        h = _real(owner, "height", height)
        axis = int(Axis.from_any(self.up_axis, "add_ground_plane: ModelBuilder.up_axis"))
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
            return self.add_shape_plane(
                -1, (*p, *rot), cfg=cfg, mu=mu, restitution=restitution, collision_group=collision_group,
                color=color, opacity=opacity, label=label,
            )  # fmt: skip
        finally:
            self.current_world = saved

    def add_shape_collision_filter_pair(self, shape_a: int, shape_b: int):
        """Never generate contacts between these two shapes."""
        a = _index("add_shape_collision_filter_pair", "shape_a", shape_a, self.shape_count, allow_world=False)
        b = _index("add_shape_collision_filter_pair", "shape_b", shape_b, self.shape_count, allow_world=False)
        if a == b:
            raise ValueError(f"add_shape_collision_filter_pair: shape_a and shape_b must differ, both are {a}")
        self.shape_filter_pairs.add((min(a, b), max(a, b)))

    def add_shape_contact_pair(self, shape_a: int, shape_b: int, mu: float | None = None):
        """Make these two shapes collide whatever else says they do not: their collision groups,
        ``has_collision``, filter pairs and the rule that a joint's two bodies do not touch (MuJoCo's
        ``<contact><pair>``). ``mu`` [-] is the pair's own friction coefficient (None: the mean of
        the two shapes' ``mu``, as for any pair). The shapes must be able to meet: in one world, or
        one of them shared (world -1), and not both on the same body."""
        owner = "add_shape_contact_pair"
        a = _index(owner, "shape_a", shape_a, self.shape_count, allow_world=False)
        b = _index(owner, "shape_b", shape_b, self.shape_count, allow_world=False)
        if a == b:
            raise ValueError(f"{owner}: shape_a and shape_b must differ, both are {a}")
        if self.shape_body[a] == self.shape_body[b]:
            raise ValueError(
                f"{owner}: shapes {a} and {b} are on the same body ({self.shape_body[a]}) and cannot touch"
            )
        wa, wb = self.shape_world[a], self.shape_world[b]
        if wa != wb and wa != -1 and wb != -1:
            raise ValueError(f"{owner}: shapes {a} and {b} are in different worlds ({wa} and {wb})")
        value = -1.0 if mu is None else _real(owner, "mu", mu, lo=0.0)
        self.shape_contact_pair_mu[(min(a, b), max(a, b))] = value

    def _merge_shapes(self, other, xf, identity: bool, remap_world, label_prefix: str, b0: int, s0: int):
        """Append ``other``'s shapes and filter pairs (shape indices shifted by ``s0``, bodies by ``b0``);
        world-attached shapes follow the placement ``xf``."""
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
        self.shape_margin.extend(other.shape_margin)
        self.shape_gap.extend(other.shape_gap)
        self.shape_world.extend(remap_world(w) for w in other.shape_world)
        self.shape_label.extend(label_prefix + s for s in other.shape_label)
        self.shape_mesh.extend(other.shape_mesh)
        self.shape_friction_max.extend(other.shape_friction_max)
        self.shape_filter_pairs.update((a + s0, b + s0) for a, b in other.shape_filter_pairs)
        self.shape_contact_pair_mu.update(((a + s0, b + s0), mu) for (a, b), mu in other.shape_contact_pair_mu.items())
        self.body_filter_pairs.update((a + b0, b + b0) for a, b in other.body_filter_pairs)
