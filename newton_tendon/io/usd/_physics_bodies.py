"""Rigid bodies and collision shapes of the UsdPhysics import.

The parsed records (:class:`_Body`, :class:`_Shape`, in stage units until the builder is filled) and
the body/shape half of the importer (:class:`_BodyParsing`, mixed into ``_Importer``): physics
materials, shape sizes and frames, mass overrides from ``PhysicsMassAPI``, and the builder calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from newton_tendon import _hostmath as hm
from newton_tendon.builder import ModelBuilder
from newton_tendon.inertia import check_body_inertia

from ._physics_attrs import (
    _AXIS_INDEX,
    _DEG,
    _INF,
    _SUPPORTED_SHAPES,
    _Z_TO_AXIS,
    _get_bool,
    _get_quat,
    _get_real,
    _get_token,
    _get_vec3,
    _raw,
    _where,
)
from ._physics_xforms import _decompose, _rigid_matrix

# ----------------------------------------------------------------------------------------------
# Parsed scene records (stage units until the scratch builder is filled)


@dataclass
class _Body:
    prim: object
    path: str
    xform: tuple  # rigid world pose, stage units
    scale: np.ndarray
    kinematic: bool
    index: int = -1
    shapes: list = field(default_factory=list)


@dataclass
class _Shape:
    prim: object
    path: str
    body: _Body | None
    kind: str
    xform: tuple  # relative to the body (or world when static), stage units, axis rotation applied
    dims: tuple  # SI sizes for the builder call
    density: float  # SI, used when mass is None
    mass: float | None  # SI
    mu: float
    restitution: float
    has_collision: bool
    index: int = -1


class _BodyParsing:
    """Bodies and shapes: the part of ``_Importer`` that reads colliders and fills bodies and shapes."""

    # -- shapes -----------------------------------------------------------------------------------

    def material(self, prim) -> tuple[float, float, float | None]:
        """(mu, restitution, density SI or None) from the bound physics material, else defaults."""
        from pxr import UsdPhysics, UsdShade

        mu, restitution, density = 0.5, 0.0, None
        mat, _ = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial("physics")
        if mat and mat.GetPrim().HasAPI(UsdPhysics.MaterialAPI):
            mp = mat.GetPrim()
            mu = _get_real(mp, "physics:dynamicFriction", mu, lo=0.0)
            restitution = _get_real(mp, "physics:restitution", restitution, lo=0.0)
            if restitution > 1.0:
                raise ValueError(f"{_where(mp)}: attribute 'physics:restitution' must be <= 1, got {restitution}")
            d = _get_real(mp, "physics:density", 0.0, lo=0.0)
            density = d * self.kpu / self.mpu**3 if d > 0.0 else None
        return mu, restitution, density

    def add_shape_record(self, prim):
        from pxr import UsdPhysics

        path = str(prim.GetPath())
        kind = str(prim.GetTypeName())
        if kind not in _SUPPORTED_SHAPES:
            raise ValueError(
                f"{_where(prim)}: collision shape type {kind!r} is not supported "
                f"(supported: Sphere, Cube, Capsule, Cylinder, Plane; Mesh with mesh_approximation='box')"
            )
        body = self.owner_body(prim)
        affine = self.world_affine(prim)
        if body is not None:
            affine = np.linalg.inv(_rigid_matrix(body.xform)) @ affine
        xf, s = _decompose(prim, affine)
        mu, restitution, mat_density = self.material(prim)
        dims, axis, local_offset = self.shape_dims(prim, kind, s)
        if local_offset is not None:
            xf = hm.transform_mul(xf, (*local_offset, 0.0, 0.0, 0.0, 1.0))
        xf = (*xf[:3], *hm.quat_mul(xf[3:], _Z_TO_AXIS[axis]))
        # Density precedence (UsdPhysics): the shape's MassAPI, the body's MassAPI, the material, the default.
        density = self.default_density
        if mat_density is not None:
            density = mat_density
        if body is not None and body.prim.HasAPI(UsdPhysics.MassAPI):
            d = _get_real(body.prim, "physics:density", 0.0, lo=0.0)
            if d > 0.0:
                density = d * self.kpu / self.mpu**3
        mass = None
        if prim.HasAPI(UsdPhysics.MassAPI) and not (body is not None and body.path == path):
            d = _get_real(prim, "physics:density", 0.0, lo=0.0)
            if d > 0.0:
                density = d * self.kpu / self.mpu**3
            m = _get_real(prim, "physics:mass", 0.0, lo=0.0)
            if m > 0.0:
                mass = m * self.kpu
            for name in ("physics:centerOfMass", "physics:diagonalInertia"):
                attr = prim.GetAttribute(name)
                if attr and attr.HasAuthoredValue():
                    self.unsupported(prim, f"'{name}' on a collision shape (author it on the rigid body)")
        has_collision = _get_bool(prim, "physics:collisionEnabled", True)
        shape = _Shape(prim, path, body, kind, xf, dims, density, mass, mu, restitution, has_collision)
        self.shapes.append(shape)
        if body is not None:
            body.shapes.append(shape)

    def shape_dims(self, prim, kind: str, s: np.ndarray):
        """SI sizes of a shape from its attributes and the scale relative to its body.

        Returns (dims, axis token, local offset in stage units or None)."""
        mpu = self.mpu

        def uniform(values, what):
            if np.ptp(values) > 1.0e-5 * max(1.0, float(np.max(values))):
                raise ValueError(f"{_where(prim)}: a {kind} must be scaled uniformly {what}, got scale {tuple(s)}")
            return float(values[0])

        if kind == "Sphere":
            r = _get_real(prim, "radius", 1.0)
            if r <= 0.0:
                raise ValueError(f"{_where(prim)}: attribute 'radius' must be > 0, got {r}")
            return (r * uniform(s, "") * mpu,), "Z", None
        if kind == "Cube":
            size = _get_real(prim, "size", 2.0)
            if size <= 0.0:
                raise ValueError(f"{_where(prim)}: attribute 'size' must be > 0, got {size}")
            return tuple(float(0.5 * size * c * mpu) for c in s), "Z", None
        if kind in ("Capsule", "Cylinder"):
            axis = _get_token(prim, "axis", "Z", ("X", "Y", "Z"))
            r = _get_real(prim, "radius", 0.5 if kind == "Capsule" else 1.0)
            h = _get_real(prim, "height", 1.0 if kind == "Capsule" else 2.0)
            if r <= 0.0 or h < 0.0 or (kind == "Cylinder" and h == 0.0):
                raise ValueError(f"{_where(prim)}: radius must be > 0 and height > 0 (>= 0 for capsules), got {r}, {h}")
            i = _AXIS_INDEX[axis]
            radial = uniform(np.delete(s, i), "across its axis")
            return (r * radial * mpu, 0.5 * h * float(s[i]) * mpu), axis, None
        if kind == "Plane":
            return (), _get_token(prim, "axis", "Z", ("X", "Y", "Z")), None
        # Mesh
        if self.mesh_approximation != "box":
            raise ValueError(
                f"{_where(prim)}: mesh collision shapes are not supported; pass mesh_approximation='box' "
                "to collide with the bounding box of its points instead"
            )
        pts = _raw(prim, "points")
        try:
            pts = np.array(pts, dtype=np.float64).reshape(-1, 3)
        except (TypeError, ValueError):
            raise TypeError(f"{_where(prim)}: attribute 'points' must be an array of 3-vectors") from None
        if len(pts) == 0 or not np.all(np.isfinite(pts)):
            raise ValueError(f"{_where(prim)}: attribute 'points' must be non-empty and finite")
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        half = 0.5 * (hi - lo) * s
        if np.any(half <= 0.0):
            raise ValueError(f"{_where(prim)}: the bounding box of a mesh must have a nonzero extent on every axis")
        return tuple(float(c * mpu) for c in half), "Z", tuple(float(c) for c in 0.5 * (lo + hi))

    # -- bodies -----------------------------------------------------------------------------------

    def body_mass_override(self, body: _Body):
        """(mass, com, inertia) in SI when the body's MassAPI sets any of them, else None."""
        from pxr import UsdPhysics

        prim = body.prim
        if not prim.HasAPI(UsdPhysics.MassAPI):
            return None
        m = _get_real(prim, "physics:mass", 0.0, lo=0.0)
        com = _get_vec3(prim, "physics:centerOfMass", (-_INF, -_INF, -_INF), allow_inf=True)
        com_set = bool(np.all(np.isfinite(com)))
        if not com_set and not np.all(np.isneginf(com)):
            raise ValueError(f"{_where(prim)}: attribute 'physics:centerOfMass' must be finite (or unauthored)")
        diag = _get_vec3(prim, "physics:diagonalInertia", (0.0, 0.0, 0.0))
        if np.any(diag < 0.0):
            raise ValueError(f"{_where(prim)}: attribute 'physics:diagonalInertia' must be >= 0, got {tuple(diag)}")
        axes = _get_quat(prim, "physics:principalAxes")
        if np.any(diag > 0.0):
            # The diagonal is the principal inertia: a rigid body's satisfies I1 + I2 >= I3.
            check_body_inertia(f"{_where(prim)}: attribute 'physics:diagonalInertia' {tuple(diag)}", np.diag(diag))
        if m == 0.0 and not com_set and not np.any(diag > 0.0):
            return None
        # What the shapes alone would give, computed by the builder itself on a probe body.
        probe = ModelBuilder()
        b = probe.add_body()
        for shape in body.shapes:
            # Shape poses are kept in stage units until here; sizes are already SI.
            self.add_builder_shape(probe, b, shape, self.to_local_si(shape.xform))
        m_s, c_s, i_s = probe.body_mass[b], np.asarray(probe.body_com[b]), np.asarray(probe.body_inertia[b])
        mass = m * self.kpu if m > 0.0 else m_s
        com = com * body.scale * self.mpu if com_set else c_s
        if np.any(diag > 0.0):
            r = _rigid_matrix((0.0, 0.0, 0.0, *axes))[:3, :3]
            inertia = r @ np.diag(diag * self.kpu * self.mpu**2) @ r.T
        elif m_s > 0.0:
            inertia = i_s * (mass / m_s)
        else:
            inertia = np.zeros((3, 3))
        return mass, tuple(float(c) for c in com), inertia

    @staticmethod
    def add_builder_shape(builder, body_index: int, shape: _Shape, xform=None) -> int:
        xf = shape.xform if xform is None else xform
        kw = dict(
            mu=shape.mu,
            restitution=shape.restitution,
            has_collision=shape.has_collision,
            label=shape.path,
        )
        solid = dict(density=shape.density, mass=shape.mass)
        if shape.kind == "Sphere":
            return builder.add_shape_sphere(body_index, xf, shape.dims[0], **solid, **kw)
        if shape.kind in ("Cube", "Mesh"):
            return builder.add_shape_box(body_index, xf, *shape.dims, **solid, **kw)
        if shape.kind == "Capsule":
            return builder.add_shape_capsule(body_index, xf, shape.dims[0], shape.dims[1], **solid, **kw)
        if shape.kind == "Cylinder":
            return builder.add_shape_cylinder(body_index, xf, shape.dims[0], shape.dims[1], **solid, **kw)
        return builder.add_shape_plane(body_index, xf, **kw)

    def body_velocity(self, body: _Body) -> tuple:
        """Initial (linear, angular) velocity in SI, world frame, Z-up (USD: stage units/s and deg/s)."""
        v = _get_vec3(body.prim, "physics:velocity", (0.0, 0.0, 0.0)) * self.mpu
        w = _get_vec3(body.prim, "physics:angularVelocity", (0.0, 0.0, 0.0)) * _DEG
        return (*hm.quat_rotate(self.up, v), *hm.quat_rotate(self.up, w))

    def build_bodies(self, builder):
        for body in self.bodies.values():
            override = self.body_mass_override(body)
            xf = self.to_world_si(body.xform)
            velocity = self.body_velocity(body)
            if override is None:
                body.index = builder.add_body(xf, is_kinematic=body.kinematic, label=body.path, velocity=velocity)
            else:
                mass, com, inertia = override
                body.index = builder.add_body(
                    xf,
                    mass=mass,
                    inertia=inertia,
                    com=com,
                    is_kinematic=body.kinematic,
                    lock_inertia=True,
                    label=body.path,
                    velocity=velocity,
                )
        for shape in self.shapes:
            if shape.body is None:
                shape.index = self.add_builder_shape(builder, -1, shape, self.to_world_si(shape.xform))
            else:
                shape.index = self.add_builder_shape(builder, shape.body.index, shape, self.to_local_si(shape.xform))
        for body in self.bodies.values():
            if builder.body_mass[body.index] <= 0.0 and not body.kinematic:
                raise ValueError(
                    f"{_where(body.prim)}: a dynamic rigid body needs mass: author physics:mass (MassAPI) or "
                    "give it collision shapes with volume"
                )
