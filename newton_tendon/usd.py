"""Import UsdPhysics scenes from USD stages into a :class:`~newton_tendon.ModelBuilder`.

``add_usd(builder, source, ...)`` (also reachable as ``builder.add_usd(source, ...)``) reads rigid
bodies, collision shapes, joints, articulation roots, collision filters and physics materials, converts
stage units to SI and a Y-up stage to Z-up, then hands the stage to the tendon importer
(:mod:`newton_tendon.usd_tendons`). The whole scene is built into a scratch builder first and merged
with ``add_builder`` only when everything parsed, so an error leaves the caller's builder unchanged.

``pxr`` is imported inside the functions that need it, so ``import newton_tendon`` stays light.
See ``docs/usd.md`` for the supported subset and the conventions.
"""

from __future__ import annotations

import logging
import math
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _hostmath as hm
from .inertia import quat_to_matrix

_log = logging.getLogger(__name__)

_INF = float("inf")
_DEG = math.pi / 180.0
_AXIS_INDEX = {"X": 0, "Y": 1, "Z": 2}
# Rotation that takes a primitive's local +Z (our capsule/cylinder/plane axis) onto the USD axis token.
_Z_TO_AXIS = {
    "X": hm.quat_from_axis_angle((0.0, 1.0, 0.0), 0.5 * math.pi),
    "Y": hm.quat_from_axis_angle((1.0, 0.0, 0.0), -0.5 * math.pi),
    "Z": (0.0, 0.0, 0.0, 1.0),
}
# Stage up axis -> rotation (x, y, z, w) taking stage coordinates into our Z-up frame.
_UP_ROTATION = {
    "Z": (0.0, 0.0, 0.0, 1.0),
    "Y": hm.quat_from_axis_angle((1.0, 0.0, 0.0), 0.5 * math.pi),
}
_SUPPORTED_SHAPES = ("Sphere", "Cube", "Capsule", "Cylinder", "Plane", "Mesh")
_MESH_APPROXIMATIONS = (None, "box")


# ----------------------------------------------------------------------------------------------
# Attribute access with type and value checks. Each error names the prim path and the rule.


def _where(prim) -> str:
    return f"USD prim <{prim.GetPath()}>"


def _raw(prim, name: str):
    """Value of attribute ``name`` (authored or schema fallback), or None when absent or blocked."""
    attr = prim.GetAttribute(name)
    if not attr or not attr.IsValid():
        return None
    return attr.Get()


def _is_real(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _get_real(prim, name: str, default: float, *, allow_inf: bool = False, lo: float | None = None) -> float:
    v = _raw(prim, name)
    if v is None:
        return default
    if not _is_real(v):
        raise TypeError(f"{_where(prim)}: attribute '{name}' must be a number, got {type(v).__name__} {v!r}")
    v = float(v)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{_where(prim)}: attribute '{name}' must be finite, got {v}")
    if lo is not None and v < lo:
        raise ValueError(f"{_where(prim)}: attribute '{name}' must be >= {lo}, got {v}")
    return v


def _get_vec3(prim, name: str, default, *, allow_inf: bool = False) -> np.ndarray:
    v = _raw(prim, name)
    if v is None:
        return np.asarray(default, dtype=np.float64)
    try:
        ok = not isinstance(v, str) and len(v) == 3 and all(_is_real(c) for c in v)
    except TypeError:
        ok = False
    if not ok:
        raise TypeError(f"{_where(prim)}: attribute '{name}' must be a 3-vector of numbers, got {type(v).__name__}")
    a = np.array([float(c) for c in v], dtype=np.float64)
    if np.any(np.isnan(a)) or (not allow_inf and not np.all(np.isfinite(a))):
        raise ValueError(f"{_where(prim)}: attribute '{name}' must be finite, got {tuple(a)}")
    return a


def _get_quat(prim, name: str) -> tuple:
    """A quaternion attribute as (x, y, z, w), normalized; unauthored or all-zero means identity."""
    v = _raw(prim, name)
    if v is None:
        return (0.0, 0.0, 0.0, 1.0)
    if not (hasattr(v, "GetReal") and hasattr(v, "GetImaginary")):
        raise TypeError(f"{_where(prim)}: attribute '{name}' must be a quaternion, got {type(v).__name__}")
    q = np.array([*(float(c) for c in v.GetImaginary()), float(v.GetReal())])
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{_where(prim)}: attribute '{name}' must be finite, got {tuple(q)}")
    n = float(np.linalg.norm(q))
    if n == 0.0:
        return (0.0, 0.0, 0.0, 1.0)
    return tuple(float(c) for c in q / n)


def _get_token(prim, name: str, default: str, allowed: tuple[str, ...]) -> str:
    v = _raw(prim, name)
    if v is None or v == "":
        return default
    if not isinstance(v, str):
        raise TypeError(f"{_where(prim)}: attribute '{name}' must be a token, got {type(v).__name__} {v!r}")
    if v not in allowed:
        raise ValueError(f"{_where(prim)}: attribute '{name}' must be one of {allowed}, got {v!r}")
    return v


def _get_bool(prim, name: str, default: bool) -> bool:
    v = _raw(prim, name)
    if v is None:
        return default
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{_where(prim)}: attribute '{name}' must be a bool, got {type(v).__name__} {v!r}")
    return bool(v)


def _single_target(prim, rel_name: str):
    """The one prim a relationship points to, None when it has no target; missing targets raise."""
    rel = prim.GetRelationship(rel_name)
    if not rel:
        return None
    targets = rel.GetTargets()
    if not targets:
        return None
    if len(targets) > 1:
        raise ValueError(f"{_where(prim)}: relationship '{rel_name}' must have at most one target, got {len(targets)}")
    target = prim.GetStage().GetPrimAtPath(targets[0])
    if not target or not target.IsValid():
        raise ValueError(f"{_where(prim)}: relationship '{rel_name}' targets <{targets[0]}>, which does not exist")
    return target


# ----------------------------------------------------------------------------------------------
# Transforms. USD matrices use row vectors (p' = p M); we transpose to column vectors (p' = A p).


def _quat_from_matrix(r: np.ndarray) -> tuple:
    """Unit quaternion (x, y, z, w) with w >= 0 of a proper rotation matrix (column-vector convention)."""
    t = r[0, 0] + r[1, 1] + r[2, 2]
    if t > 0.0:
        s = 2.0 * math.sqrt(t + 1.0)
        q = ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s)
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = (0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s)
    elif r[1, 1] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = ((r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = ((r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s, (r[1, 0] - r[0, 1]) / s)
    n = math.sqrt(sum(c * c for c in q))
    sign = -1.0 if q[3] < 0.0 else 1.0
    return tuple(float(sign * c / n) for c in q)


def _matrix(gf_matrix) -> np.ndarray:
    """A Gf.Matrix4d as a 4x4 column-vector matrix."""
    return np.array(gf_matrix, dtype=np.float64).T


def _decompose(prim, a: np.ndarray) -> tuple[tuple, np.ndarray]:
    """Split a column-vector affine matrix into a rigid transform (position, quaternion) and per-axis scale.

    Shear, mirroring, zero scale and non-finite entries raise, naming ``prim``.
    """
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{_where(prim)}: its world transform is not finite")
    lin = a[:3, :3]
    scale = np.linalg.norm(lin, axis=0)
    if np.any(scale < 1.0e-12):
        raise ValueError(f"{_where(prim)}: its world transform has a zero scale")
    r = lin / scale
    if np.abs(r.T @ r - np.eye(3)).max() > 1.0e-5:
        raise ValueError(f"{_where(prim)}: sheared transforms are not supported (scale must follow rotation)")
    if np.linalg.det(r) < 0.0:
        raise ValueError(f"{_where(prim)}: mirrored transforms (negative scale) are not supported")
    return (*(float(c) for c in a[:3, 3]), *_quat_from_matrix(r)), scale


def _rigid_matrix(xf) -> np.ndarray:
    a = np.eye(4)
    a[:3, :3] = quat_to_matrix(xf[3:])
    a[:3, 3] = xf[:3]
    return a


def _inverse(xf) -> tuple:
    q_inv = (-xf[3], -xf[4], -xf[5], xf[6])
    p = hm.quat_rotate(q_inv, xf[:3])
    return (-p[0], -p[1], -p[2], *q_inv)


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


class _Importer:
    """One import: parses the stage into records, then fills a scratch builder."""

    def __init__(self, stage, *, default_density: float, mesh_approximation, strict: bool):
        from pxr import UsdGeom, UsdPhysics

        self.stage = stage
        self.default_density = default_density
        self.mesh_approximation = mesh_approximation
        self.strict = strict
        self.mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
        self.kpu = float(UsdPhysics.GetStageKilogramsPerUnit(stage))
        where = f"USD stage {stage.GetRootLayer().identifier}"
        for name, v in (("metersPerUnit", self.mpu), ("kilogramsPerUnit", self.kpu)):
            if not (math.isfinite(v) and v > 0.0):
                raise ValueError(f"{where}: {name} must be finite and > 0, got {v}")
        self.up_axis = str(UsdGeom.GetStageUpAxis(stage))
        if self.up_axis not in _UP_ROTATION:
            raise ValueError(f"{where}: upAxis must be 'Y' or 'Z', got {self.up_axis!r}")
        self.up = _UP_ROTATION[self.up_axis]
        self.xform_cache = UsdGeom.XformCache()
        self.bodies: dict[str, _Body] = {}
        self.disabled_bodies: set[str] = set()
        self.shapes: list[_Shape] = []
        self.joint_prims: list = []
        self.articulation_prims: list = []
        self.filter_prims: list = []
        self.group_prims: list = []
        self.scene_prims: list = []

    # -- helpers ---------------------------------------------------------------------------------

    def unsupported(self, prim, what: str):
        """A feature we cannot represent: an error when strict, else a logged warning and it is ignored."""
        msg = f"{_where(prim)}: {what} is not supported"
        if self.strict:
            raise ValueError(msg + " (pass strict=False to ignore it)")
        _log.warning("%s; ignored", msg)

    def world_affine(self, prim) -> np.ndarray:
        return _matrix(self.xform_cache.GetLocalToWorldTransform(prim))

    def to_world_si(self, xf) -> tuple:
        """A world pose in stage units and stage axes -> SI, Z-up."""
        p = hm.quat_rotate(self.up, [c * self.mpu for c in xf[:3]])
        return (*(float(c) for c in p), *(float(c) for c in hm.quat_mul(self.up, xf[3:])))

    def to_local_si(self, xf) -> tuple:
        return (*(c * self.mpu for c in xf[:3]), *xf[3:])

    def owner_body(self, prim) -> _Body | None:
        """The nearest enabled rigid body at or above ``prim``; None when the prim is static."""
        p = prim
        while p and p.IsValid() and not p.IsPseudoRoot():
            path = str(p.GetPath())
            if path in self.bodies:
                return self.bodies[path]
            if path in self.disabled_bodies:
                return None
            p = p.GetParent()
        return None

    # -- pass 1: classify prims -------------------------------------------------------------------

    def collect(self):
        from pxr import Usd, UsdPhysics

        rng = Usd.PrimRange.Stage(self.stage, Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate))
        collider_prims = []
        for prim in rng:
            if prim.HasAPI(UsdPhysics.RigidBodyAPI):
                self.add_body_record(prim)
            if prim.HasAPI(UsdPhysics.CollisionAPI):
                collider_prims.append(prim)
            if prim.HasAPI(UsdPhysics.ArticulationRootAPI):
                self.articulation_prims.append(prim)
            if prim.HasAPI(UsdPhysics.FilteredPairsAPI):
                self.filter_prims.append(prim)
            type_name = str(prim.GetTypeName())
            # Any "...Joint" type counts, so joint types we do not know raise instead of being skipped.
            if prim.IsA(UsdPhysics.Joint) or type_name.endswith("Joint"):
                self.joint_prims.append(prim)
            elif prim.IsA(UsdPhysics.CollisionGroup):
                self.group_prims.append(prim)
            elif prim.IsA(UsdPhysics.Scene):
                self.scene_prims.append(prim)
        for prim in collider_prims:
            self.add_shape_record(prim)

    def add_body_record(self, prim):
        path = str(prim.GetPath())
        if not _get_bool(prim, "physics:rigidBodyEnabled", True):
            self.disabled_bodies.add(path)
            return
        kinematic = _get_bool(prim, "physics:kinematicEnabled", False)
        xf, scale = _decompose(prim, self.world_affine(prim))
        self.bodies[path] = _Body(prim, path, xf, scale, kinematic)

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
            from .inertia import check_inertia_triangle

            # The diagonal is the principal inertia: a rigid body's satisfies I1 + I2 >= I3.
            check_inertia_triangle(f"{_where(prim)}: attribute 'physics:diagonalInertia' {tuple(diag)}", np.diag(diag))
        if m == 0.0 and not com_set and not np.any(diag > 0.0):
            return None
        # What the shapes alone would give, computed by the builder itself on a probe body.
        from .builder import ModelBuilder

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

    # -- joints -----------------------------------------------------------------------------------

    def joint_side(self, prim, k: int):
        """(body or None, joint frame in the body frame (or world), stage units) for side ``k`` of a joint."""
        target = _single_target(prim, f"physics:body{k}")
        pos = _get_vec3(prim, f"physics:localPos{k}", (0.0, 0.0, 0.0))
        rot = _get_quat(prim, f"physics:localRot{k}")
        if target is None:
            return None, (*(float(c) for c in pos), *rot)
        a = self.world_affine(target)
        frame_xf, _ = _decompose(target, a)
        p_world = (a @ np.array([*pos, 1.0]))[:3]
        frame = (*(float(c) for c in p_world), *hm.quat_mul(frame_xf[3:], rot))
        body = self.owner_body(target)
        if body is None:
            return None, frame
        return body, hm.transform_mul(_inverse(body.xform), frame)

    def parse_joint(self, prim) -> dict:
        """Everything needed to add one joint; body sides are resolved, swapped when body1 is static."""
        from pxr import UsdPhysics

        path = str(prim.GetPath())
        if prim.IsA(UsdPhysics.RevoluteJoint):
            kind = "revolute"
        elif prim.IsA(UsdPhysics.PrismaticJoint):
            kind = "prismatic"
        elif prim.IsA(UsdPhysics.FixedJoint):
            kind = "fixed"
        elif prim.IsA(UsdPhysics.SphericalJoint):
            kind = "spherical"
        else:
            raise ValueError(
                f"{_where(prim)}: joint type {str(prim.GetTypeName())!r} is not supported "
                "(supported: PhysicsRevoluteJoint, PhysicsPrismaticJoint, PhysicsFixedJoint, PhysicsSphericalJoint)"
            )
        b0, x0 = self.joint_side(prim, 0)
        b1, x1 = self.joint_side(prim, 1)
        if b0 is None and b1 is None:
            raise ValueError(f"{_where(prim)}: a joint must connect at least one enabled rigid body (both ends static)")
        if b0 is b1:
            raise ValueError(f"{_where(prim)}: body0 and body1 resolve to the same rigid body <{b0.path}>")
        sign = 1.0
        if b1 is None:  # our child must be a body: swap sides and flip the axis so the coordinate keeps its sign
            b0, x0, b1, x1, sign = b1, x1, b0, x0, -1.0
        j = dict(prim=prim, path=path, kind=kind, parent=b0, child=b1, X_p=x0, X_c=x1)
        j["enabled"] = _get_bool(prim, "physics:jointEnabled", True)
        j["collision_filter_parent"] = not _get_bool(prim, "physics:collisionEnabled", False)
        j["exclude"] = _get_bool(prim, "physics:excludeFromArticulation", False)
        for name in ("physics:breakForce", "physics:breakTorque"):
            if math.isfinite(_get_real(prim, name, _INF, allow_inf=True, lo=0.0)):
                self.unsupported(prim, f"a finite '{name}' (breakable joints)")
        drive_names = [s.split(":", 1)[1] for s in prim.GetAppliedSchemas() if s.startswith("PhysicsDriveAPI:")]
        if kind in ("revolute", "prismatic"):
            axis = np.zeros(3)
            axis[_AXIS_INDEX[_get_token(prim, "physics:axis", "X", ("X", "Y", "Z"))]] = sign
            j["axis"] = tuple(float(c) for c in axis)
            angular = kind == "revolute"
            unit = _DEG if angular else self.mpu
            lo = _get_real(prim, "physics:lowerLimit", -_INF, allow_inf=True)
            hi = _get_real(prim, "physics:upperLimit", _INF, allow_inf=True)
            j["limit_lower"] = lo * unit if math.isfinite(lo) else None if lo < 0 else lo
            j["limit_upper"] = hi * unit if math.isfinite(hi) else None if hi > 0 else hi
            drive = "angular" if angular else "linear"
            for name in drive_names:
                if name != drive:
                    self.unsupported(prim, f"drive instance '{name}' on a {kind} joint (expected '{drive}')")
            j.update(self.parse_drive(prim, drive, angular))
        else:
            for name in drive_names:
                self.unsupported(prim, f"drive instance '{name}' on a {kind} joint")
            if kind == "spherical":
                for name in ("physics:coneAngle0Limit", "physics:coneAngle1Limit"):
                    if _get_real(prim, name, -1.0, allow_inf=True) >= 0.0:
                        self.unsupported(prim, f"a cone limit '{name}' on a spherical joint")
        return j

    def parse_drive(self, prim, drive: str, angular: bool) -> dict:
        """Drive gains and targets in SI: N m/rad, N m s/rad, rad, rad/s (angular); N/m, N s/m, m, m/s (linear)."""
        ns = f"drive:{drive}:physics:"
        out = dict(target_ke=0.0, target_kd=0.0, target_pos=0.0, target_vel=0.0)
        if not any(prim.GetAttribute(ns + n) for n in ("stiffness", "damping", "targetPosition", "targetVelocity")):
            return out
        if _get_token(prim, ns + "type", "force", ("force", "acceleration")) == "acceleration":
            self.unsupported(prim, f"drive '{drive}' of type 'acceleration'")
        if math.isfinite(_get_real(prim, ns + "maxForce", _INF, allow_inf=True, lo=0.0)):
            self.unsupported(prim, f"a finite '{ns}maxForce'")
        # Stage torque = kg_u m_u^2 / s^2 per unit; angular gains are per degree.
        gain = self.kpu * self.mpu**2 / _DEG if angular else self.kpu
        unit = _DEG if angular else self.mpu
        out["target_ke"] = _get_real(prim, ns + "stiffness", 0.0, lo=0.0) * gain
        out["target_kd"] = _get_real(prim, ns + "damping", 0.0, lo=0.0) * gain
        out["target_pos"] = _get_real(prim, ns + "targetPosition", 0.0) * unit
        out["target_vel"] = _get_real(prim, ns + "targetVelocity", 0.0) * unit
        return out

    def add_joint(self, builder, j: dict) -> int:
        parent = j["parent"].index if j["parent"] is not None else -1
        x_p = self.to_local_si(j["X_p"]) if j["parent"] is not None else self.to_world_si(j["X_p"])
        x_c = self.to_local_si(j["X_c"])
        common = dict(enabled=j["enabled"], collision_filter_parent=j["collision_filter_parent"], label=j["path"])
        if j["kind"] in ("revolute", "prismatic"):
            add = builder.add_joint_revolute if j["kind"] == "revolute" else builder.add_joint_prismatic
            return add(
                parent,
                j["child"].index,
                x_p,
                x_c,
                j["axis"],
                limit_lower=j["limit_lower"],
                limit_upper=j["limit_upper"],
                target_pos=j["target_pos"],
                target_vel=j["target_vel"],
                target_ke=j["target_ke"],
                target_kd=j["target_kd"],
                **common,
            )
        add = builder.add_joint_fixed if j["kind"] == "fixed" else builder.add_joint_ball
        return add(parent, j["child"].index, x_p, x_c, **common)

    def articulation_order(self, root_prim, joints: list[dict], taken: set[int]):
        """(root body, free joint needed, joints of the articulation in tree order) for one root prim."""
        root_path = str(root_prim.GetPath())
        prefix = root_path.rstrip("/") + "/"
        in_tree = [b for p, b in self.bodies.items() if p == root_path or p.startswith(prefix)]
        if not in_tree:
            # Root authored on a joint: the articulation starts at that joint's bodies.
            match = [j for j in joints if j["path"] == root_path]
            if not match:
                raise ValueError(f"{_where(root_prim)}: an articulation root must be or contain a rigid body or joint")
            in_tree = [match[0]["child"]]
        cand = [i for i, j in enumerate(joints) if i not in taken and not j["exclude"]]
        # Bodies reachable from the subtree through candidate joints.
        members = {id(b) for b in in_tree}
        grew = True
        while grew:
            grew = False
            for i in cand:
                j = joints[i]
                ends = [b for b in (j["parent"], j["child"]) if b is not None]
                if any(id(b) in members for b in ends) and not all(id(b) in members for b in ends):
                    members.update(id(b) for b in ends)
                    grew = True
        mine = [i for i in cand if any(id(b) in members for b in (joints[i]["parent"], joints[i]["child"]) if b)]
        # Root: a body jointed to the world, else the first body of the subtree (floating base, free joint).
        world = [i for i in mine if joints[i]["parent"] is None]
        root = joints[world[0]]["child"] if world else in_tree[0]
        order, visited, pending = [], {id(root)}, list(mine)
        if world:
            order.append(world[0])
            pending.remove(world[0])
        frontier = [root]
        while frontier:
            nxt = []
            for b in frontier:
                for i in list(pending):
                    j = joints[i]
                    other = j["child"] if j["parent"] is b else j["parent"] if j["child"] is b else None
                    if other is None or id(other) in visited:
                        continue
                    if j["child"] is b:  # reorient so the tree runs from the root outwards
                        self.swap_joint(j)
                    order.append(i)
                    pending.remove(i)
                    visited.add(id(other))
                    nxt.append(other)
            frontier = nxt
        order.extend(pending)  # loop-closing joints and joints to the world beyond the root
        return root, not world, order

    @staticmethod
    def swap_joint(j: dict):
        if j["parent"] is None:
            return
        j["parent"], j["child"], j["X_p"], j["X_c"] = j["child"], j["parent"], j["X_c"], j["X_p"]
        if "axis" in j:
            j["axis"] = tuple(-c for c in j["axis"])

    def build_joints(self, builder, result: dict):
        joints = [self.parse_joint(p) for p in self.joint_prims]
        taken: set[int] = set()
        for root_prim in self.articulation_prims:
            root, floating, order = self.articulation_order(root_prim, joints, taken)
            if floating and not root.kinematic:
                result["free_joints"][root.path] = builder.add_joint_free(root.index, label=f"{root.path}#free")
            for i in order:
                result["joints"][joints[i]["path"]] = self.add_joint(builder, joints[i])
                taken.add(i)
            if builder.joint_count > builder.articulation_joint_end:
                result["articulations"][str(root_prim.GetPath())] = builder.add_articulation(
                    label=str(root_prim.GetPath())
                )
        for i, j in enumerate(joints):
            if i not in taken:
                result["joints"][j["path"]] = self.add_joint(builder, j)

    # -- collision filters ------------------------------------------------------------------------

    def shapes_of(self, prim) -> list[int]:
        """Shape indices owned by ``prim``: colliders at or below it, and colliders of bodies at or below it."""
        root = str(prim.GetPath())
        prefix = root.rstrip("/") + "/"

        def under(p):
            return p == root or p.startswith(prefix)

        return [s.index for s in self.shapes if under(s.path) or (s.body is not None and under(s.body.path))]

    def build_filters(self, builder):
        from pxr import Usd, UsdPhysics

        pairs: set[tuple[int, int]] = set()
        for prim in self.filter_prims:
            mine = self.shapes_of(prim)
            for target_path in prim.GetRelationship("physics:filteredPairs").GetTargets():
                target = self.stage.GetPrimAtPath(target_path)
                if not target or not target.IsValid():
                    raise ValueError(
                        f"{_where(prim)}: relationship 'physics:filteredPairs' targets <{target_path}>, "
                        "which does not exist"
                    )
                pairs.update((a, b) for a in mine for b in self.shapes_of(target))
        for prim in self.group_prims:
            if _get_bool(prim, "physics:invertFilteredGroups", False):
                self.unsupported(prim, "'physics:invertFilteredGroups'")
                continue
            query = Usd.CollectionAPI(prim, "colliders").ComputeMembershipQuery()
            members = [s.index for s in self.shapes if query.IsPathIncluded(s.prim.GetPath())]
            for target_path in UsdPhysics.CollisionGroup(prim).GetFilteredGroupsRel().GetTargets():
                target = self.stage.GetPrimAtPath(target_path)
                if not target or not target.IsA(UsdPhysics.CollisionGroup):
                    raise ValueError(
                        f"{_where(prim)}: relationship 'physics:filteredGroups' targets <{target_path}>, "
                        "which is not a PhysicsCollisionGroup"
                    )
                q2 = Usd.CollectionAPI(target, "colliders").ComputeMembershipQuery()
                others = [s.index for s in self.shapes if q2.IsPathIncluded(s.prim.GetPath())]
                pairs.update((a, b) for a in members for b in others)
        for a, b in sorted(pairs):
            if a != b:
                builder.add_shape_collision_filter_pair(a, b)

    # -- scene ------------------------------------------------------------------------------------

    def gravity(self) -> tuple:
        """Gravity of the first PhysicsScene in SI, Z-up (USD default: -up axis, 9.81 m/s^2)."""
        g_dir = np.array(hm.quat_rotate(_inverse((0, 0, 0, *self.up))[3:], (0.0, 0.0, -1.0)))
        g_mag = 9.81
        if self.scene_prims:
            prim = self.scene_prims[0]
            d = _get_vec3(prim, "physics:gravityDirection", (0.0, 0.0, 0.0))
            if np.linalg.norm(d) > 0.0:
                g_dir = d / np.linalg.norm(d)
            m = _get_real(prim, "physics:gravityMagnitude", -_INF, allow_inf=True)
            if m == _INF:
                # -inf is UsdPhysics' "use the default" sentinel; +inf is no gravity anything can follow.
                raise ValueError(
                    f"{_where(prim)}: attribute 'physics:gravityMagnitude' must be finite (or -inf, UsdPhysics' "
                    "'use the default gravity' value), got inf"
                )
            if math.isfinite(m):
                g_mag = m * self.mpu
        return tuple(float(c) for c in hm.quat_rotate(self.up, g_dir * g_mag))


MAX_ECHO = 300
"""Longest USD composition-error text (characters) a message repeats."""


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ECHO else text[: MAX_ECHO - 3] + "..."


def _composition_problems(stage) -> list[str]:
    """What failed to compose on ``stage``, one line each naming the prim and the layer.

    Pcp reports a missing referenced file, prim, sublayer or payload and a reference cycle
    (``Usd.Stage.GetCompositionErrors``); everything those arcs would have brought in is absent from
    the stage. An inherit of a class prim that exists nowhere is legal USD (Pcp reports nothing), but
    a prim that inherits from nothing silently lacks what the class was to give it, so it counts too.
    """
    from pxr import Usd

    root = stage.GetRootLayer().identifier
    problems = []
    for e in stage.GetCompositionErrors():
        site = getattr(e, "rootSite", None)
        prim = str(site.path) if site is not None else "?"
        problems.append(f"prim <{prim}> (stage {root}): {type(e).__name__}: {_clip(str(e))}")
    # Active prims, class (abstract) and "over" prims included: a class inheriting a missing class
    # passes the loss on to every prim that inherits it.
    for prim in Usd.PrimRange.Stage(stage, Usd.TraverseInstanceProxies(Usd.PrimIsActive)):
        if not prim.HasAuthoredInherits():
            continue
        for target in prim.GetInherits().GetAllDirectInherits():
            if not stage.GetPrimAtPath(target):
                layers = [spec.layer.identifier for spec in prim.GetPrimStack() if spec.HasInfo("inheritPaths")]
                problems.append(
                    f"prim <{prim.GetPath()}> (layer {layers[0] if layers else root}): inherits <{target}>, "
                    "which is defined nowhere on the stage"
                )
    return problems


def check_composition(stage, *, strict: bool = True, owner: str = "add_usd") -> None:
    """Raise ``ValueError`` (``strict``) or warn (``warnings.warn``) when ``stage`` did not compose:
    a missing referenced file or prim, sublayer or payload, a reference cycle, a missing inherit."""
    problems = _composition_problems(stage)
    if not problems:
        return
    shown = problems[:5]
    more = f"; and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
    msg = (
        f"{owner}: the stage did not compose, so what these arcs bring in would be missing from the import: "
        + "; ".join(shown)
        + more
    )
    if strict:
        raise ValueError(msg + " (pass strict=False to import what did compose)")
    warnings.warn(msg, UsdCompositionWarning, stacklevel=3)


class UsdCompositionWarning(UserWarning):
    """``add_usd(..., strict=False)`` imported a stage with composition errors (what failed is absent)."""


def _open_stage(source):
    from pxr import Tf, Usd

    if isinstance(source, Usd.Stage):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"add_usd: source must be a file path or a pxr Usd.Stage, got {type(source).__name__}")
    path = os.fspath(source)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"add_usd: USD file {path!r} does not exist")
    try:
        stage = Usd.Stage.Open(path)
    except Tf.ErrorException as e:
        raise ValueError(f"add_usd: cannot open USD file {path!r}: {str(e).strip()}") from None
    if stage is None:
        raise ValueError(f"add_usd: cannot open USD file {path!r}")
    return stage


def add_usd(
    builder,
    source,
    *,
    xform=None,
    world: int | None = None,
    default_density: float = 1000.0,
    mesh_approximation: str | None = None,
    strict: bool = True,
    label_prefix: str = "",
    apply_gravity: bool = True,
) -> dict:
    """Append the UsdPhysics scene of a USD stage to ``builder``.

    Builds rigid bodies (``PhysicsRigidBodyAPI``), collision shapes (``PhysicsCollisionAPI`` on Sphere,
    Cube, Capsule, Cylinder, Plane; Mesh only as a bounding box on request), joints (revolute,
    prismatic, fixed, spherical, with limits and drives), articulations (``PhysicsArticulationRootAPI``),
    collision filters (``PhysicsFilteredPairsAPI``, ``PhysicsCollisionGroup``), physics materials and the
    tendons of :mod:`newton_tendon.usd_tendons`. Stage units (``metersPerUnit``, ``kilogramsPerUnit``)
    become SI and a Y-up stage is rotated to Z-up. Labels of bodies, shapes, joints, tendons and
    transmissions are ``label_prefix`` + their prim path; articulation labels are ``label_prefix`` +
    the root prim's path. The gravity of the stage's first ``PhysicsScene`` becomes ``builder.gravity``
    (see ``apply_gravity``).

    Args:
        builder: the :class:`~newton_tendon.ModelBuilder` to append to. It is changed only when the
            whole stage imported without error.
        source: a path to a ``.usd``/``.usda``/``.usdc`` file or an open ``pxr.Usd.Stage``.
        xform: where to place the stage in ``builder`` (px, py, pz, qx, qy, qz, qw) [m], applied after
            the unit and up-axis conversion; default identity.
        world: world index for the imported entities (default ``builder.current_world``).
        default_density: density [kg/m^3] of collision shapes with no density from MassAPI or material.
        mesh_approximation: ``None`` (a Mesh collider raises ``ValueError``) or ``"box"`` (the bounding
            box of the mesh points in its local frame, as a solid box).
        strict: when True (default), well-formed physics we cannot represent (finite drive
            ``maxForce``, acceleration drives, spherical cone limits, breakable joints, inverted
            collision groups, ``MjcActuator`` prims on joints or sites) raises ``ValueError``; when False
            it is ignored with a logged warning. A stage that did not compose (a missing referenced
            file or prim, sublayer or payload, a reference cycle, an inherit of a prim defined
            nowhere) raises ``ValueError`` naming the prim and layer; with ``strict=False`` it warns
            (``UsdCompositionWarning``) and what did compose is imported.
        label_prefix: prepended to every label the import adds (bodies, shapes, joints, articulations,
            free joints, routed cables, transmission tendons, couplings), so one stage can be imported
            twice. An import whose transmission or coupling labels would repeat ones already in
            ``builder`` raises ``ValueError``.
        apply_gravity: when True (default) and the stage has a ``PhysicsScene``, set ``builder.gravity``
            to its gravity [m/s^2] (SI, Z-up, rotated by ``xform``; the ``"gravity"`` entry of the
            result). A stage without a scene leaves the builder's gravity as it is. False never
            changes it.

    Returns:
        A dict: ``"bodies"``, ``"shapes"``, ``"joints"`` map prim paths to indices in ``builder``
        (a disabled rigid body maps to -1); ``"free_joints"`` maps the body path of each floating
        articulation root to the free joint added for it; ``"articulations"`` maps root prim paths to
        articulation indices; ``"tendons"``, ``"transmissions"``, ``"couplings"`` map the prim paths of
        what the tendon importer added to their indices (keys never carry ``label_prefix``);
        ``"gravity"`` is the stage's PhysicsScene gravity [m/s^2] in the Z-up frame rotated by
        ``xform`` (USD's default, 9.81 m/s^2 along -up, when the stage has no scene);
        ``"gravity_applied"`` tells whether it was written to ``builder.gravity``;
        ``"meters_per_unit"``, ``"kilograms_per_unit"``, ``"up_axis"`` echo the stage metadata.

    Raises:
        TypeError: a wrong argument type, or an attribute of the wrong type (naming the prim path).
        ValueError: malformed or unsupported content, naming the prim path and the rule.
        FileNotFoundError: ``source`` is a path that does not exist.
    """
    from .builder import ModelBuilder, _flag, _real, _xform

    # Imported before any stage is opened: it registers the native tendon schema with USD.
    from .usd_tendons import import_usd_tendons

    if not isinstance(builder, ModelBuilder):
        raise TypeError(f"add_usd: builder must be a ModelBuilder, got {type(builder).__name__}")
    xf = _xform("add_usd", "xform", xform)
    default_density = _real("add_usd", "default_density", default_density, lo=0.0)
    strict = _flag("add_usd", "strict", strict)
    apply_gravity = _flag("add_usd", "apply_gravity", apply_gravity)
    if not isinstance(label_prefix, str):
        raise TypeError(f"add_usd: label_prefix must be a str, got {type(label_prefix).__name__}")
    if mesh_approximation not in _MESH_APPROXIMATIONS:
        raise ValueError(f"add_usd: mesh_approximation must be None or 'box', got {mesh_approximation!r}")
    if world is not None and (isinstance(world, bool) or not isinstance(world, (int, np.integer))):
        raise TypeError(f"add_usd: world must be an int, got {type(world).__name__}")
    stage = _open_stage(source)
    check_composition(stage, strict=strict, owner=f"add_usd({stage.GetRootLayer().identifier})")

    imp = _Importer(stage, default_density=default_density, mesh_approximation=mesh_approximation, strict=strict)
    imp.collect()
    scratch = ModelBuilder(up_axis="Z", gravity=builder.gravity)
    local = {k: {} for k in ("bodies", "shapes", "joints", "free_joints", "articulations")}
    imp.build_bodies(scratch)
    imp.build_joints(scratch, local)
    imp.build_filters(scratch)
    body_map = {path: b.index for path, b in imp.bodies.items()}
    body_map.update((path, -1) for path in imp.disabled_bodies)
    import_usd_tendons(scratch, stage, body_map, imp.mpu, imp.up, strict=strict)
    where = f"add_usd({stage.GetRootLayer().identifier})"
    for kind, labels, existing in (
        ("transmission tendon", scratch.transmission_label, set(builder.transmission_label)),
        ("coupling", scratch.coupling_label, set(builder.coupling_label)),
    ):
        for label in labels:
            if label_prefix + label in existing:
                raise ValueError(
                    f"{where}: the builder already has a {kind} labelled {label_prefix + label!r} (from prim "
                    f"<{label}>); pass a label_prefix"
                )
    rot = xf[3:]
    gravity = tuple(float(c) for c in hm.quat_rotate(rot, imp.gravity()))

    counts = (
        builder.body_count,
        builder.shape_count,
        builder.joint_count,
        builder.articulation_count,
        builder.tendon_count,
        builder.transmission_count,
        builder.coupling_count,
    )
    builder.add_builder(scratch, xf, world, label_prefix=label_prefix)
    gravity_applied = apply_gravity and bool(imp.scene_prims)
    if gravity_applied:
        builder.gravity = gravity
    b0, s0, j0, a0, t0, tr0, c0 = counts
    return {
        "bodies": {p: (i + b0 if i >= 0 else -1) for p, i in body_map.items()},
        "shapes": {s.path: s.index + s0 for s in imp.shapes},
        "joints": {p: i + j0 for p, i in local["joints"].items()},
        "free_joints": {p: i + j0 for p, i in local["free_joints"].items()},
        "articulations": {p: i + a0 for p, i in local["articulations"].items()},
        "tendons": {lbl: i + t0 for i, lbl in enumerate(scratch.tendon_label)},
        "transmissions": {lbl: i + tr0 for i, lbl in enumerate(scratch.transmission_label)},
        "couplings": {lbl: i + c0 for i, lbl in enumerate(scratch.coupling_label)},
        "gravity": gravity,
        "gravity_applied": gravity_applied,
        "meters_per_unit": imp.mpu,
        "kilograms_per_unit": imp.kpu,
        "up_axis": imp.up_axis,
    }


def write_tendons(stage, builder_or_model, **kwargs):
    """Author the routed cables and transmission tendons of a builder or Model on ``stage``.
    See :func:`newton_tendon.usd_tendons.write_tendons`."""
    from .usd_tendons import write_tendons as _write

    return _write(stage, builder_or_model, **kwargs)
