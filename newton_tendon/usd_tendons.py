"""Tendons in USD: MuJoCo tendon prims (``MjcTendon``, ``MjcActuator``) and the native routed-cable schema.

* :func:`import_usd_tendons` reads both kinds from a stage into a builder whose bodies (and joints) the
  UsdPhysics importer has already created: ``MjcTendon`` prims become transmission tendons
  (``add_spatial_tendon`` / ``add_fixed_tendon``), ``MjcActuator`` prims that target them become
  tendon drives, and ``NewtonTendon`` prims become routed cables (one ``add_tendon`` call each).
* :func:`write_tendons` authors the routed cables and transmission tendons of a builder or a
  finalized model into a stage, with minimal UsdPhysics rigid bodies for bodies the stage lacks.

The native schema lives in ``usd_schemas/`` and is registered with ``Plug.Registry`` when this
module is imported. USD builds its schema registry once, so registration only takes effect if no
stage was opened before; the importer never depends on it (it reads properties by name, with the
schema's fallbacks written out here). Units and the up axis: see ``docs/usd_tendons.md``.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import math
import os
import re
from collections.abc import Mapping, Sequence

import numpy as np
from pxr import Gf, Plug, Sdf, Usd, UsdGeom, UsdPhysics

from newton_tendon.kernels import types as T
from newton_tendon.kernels.spatial import SPATIAL_CYLINDER, SPATIAL_PULLEY, SPATIAL_SITE, SPATIAL_SPHERE

from . import _hostmath as hm
from ._transmission_builder import TRANSMISSION_FIXED, TRANSMISSION_PROPERTIES
from .tendon import TendonGuide, TendonGuideType
from .transmission import TendonPulley, TendonSite, TendonWrap

_log = logging.getLogger(__name__)

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "usd_schemas")
"""Folder holding plugInfo.json, schema.usda and generatedSchema.usda of the native schema."""

TENDON_TYPE = "NewtonTendon"
GUIDE_TYPE = "NewtonTendonGuide"
GUIDES_REL = "newton:tendon:guides"
GUIDE_PREFIX = "newton:guide:"
GUIDE_TOKENS = {"anchor": TendonGuideType.ANCHOR, "pinhole": TendonGuideType.PINHOLE, "roller": TendonGuideType.ROLLER}
MJC_TENDON_TYPE = "MjcTendon"
MJC_ACTUATOR_TYPE = "MjcActuator"

Y_UP_ROTATION = (math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5))
"""Quaternion (x, y, z, w) turning a Y-up stage into Z-up: +90 degrees about X (stage Y becomes Z)."""

_REAL = ("double", "float", "half")
_VEC3 = ("double3", "float3", "half3") + tuple(f"{r}3{k}" for r in ("point", "vector", "normal") for k in "dfh")

# Transmission properties MuJoCo's tendon prim cannot hold; authored and read as newton:transmission:<name>.
_NEWTON_ONLY = (
    "drive_force",
    "activation_time",
    "position_gain",
    "velocity_gain",
    "target_length",
    "target_velocity",
    "position_correction",
    "limit_compliance",
    "friction_compliance",
    "enabled",
    # One-sided bounds (MuJoCo's ranges have two finite ends).
    "lower_limit",
    "upper_limit",
    "actuation_lower",
    "actuation_upper",
)


def _register_schemas() -> bool:
    """Register the native schema plugin (idempotent); True if USD's schema registry knows it."""
    Plug.Registry().RegisterPlugins(SCHEMA_DIR)
    return Usd.SchemaRegistry().FindConcretePrimDefinition(TENDON_TYPE) is not None


SCHEMA_REGISTERED = _register_schemas()
"""True when the schema registry picked up the native schema (it had not been built before)."""


# ----------------------------------------------------------------------------------------------
# Stage units and frames


def stage_up_rotation(stage: Usd.Stage) -> tuple[float, float, float, float]:
    """Quaternion (x, y, z, w) rotating the stage's coordinates into Z-up (identity for a Z-up stage)."""
    return Y_UP_ROTATION if UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y else (0.0, 0.0, 0.0, 1.0)


def _quat_conj(q):
    return (-q[0], -q[1], -q[2], q[3])


def _gf_quat(q) -> Gf.Quatd:
    return Gf.Quatd(float(q[3]), float(q[0]), float(q[1]), float(q[2]))


def _xyzw(q: Gf.Quatd | Gf.Quatf) -> tuple:
    im = q.GetImaginary()
    return (float(im[0]), float(im[1]), float(im[2]), float(q.GetReal()))


def _rigid(m: Gf.Matrix4d) -> Gf.Matrix4d:
    """The translation and rotation of ``m`` (scale and shear removed)."""
    return Gf.Matrix4d(m).RemoveScaleShear()


class _Frames:
    """World transforms of prims and the stage-to-SI conversion.

    Stage point p becomes R_up (p * m) in the builder's world, where m is meters per unit; a point
    fixed to a body is expressed in the body prim's frame (its world transform without scale),
    which stays the builder's body frame under the same conversion.
    """

    def __init__(self, stage, meters_per_unit: float, up_rotation):
        self.stage = stage
        self.m = float(meters_per_unit)
        self.up = tuple(float(c) for c in up_rotation)
        self.cache = UsdGeom.XformCache(Usd.TimeCode.Default())

    def world(self, prim) -> Gf.Matrix4d:
        return self.cache.GetLocalToWorldTransform(prim)

    def point(self, body_prim, p_world: Gf.Vec3d) -> tuple:
        """A stage-world point in the body's frame [m], or in the builder's world if ``body_prim`` is None."""
        if body_prim is None:
            return tuple(float(c) for c in hm.quat_rotate(self.up, np.asarray(p_world) * self.m))
        local = _rigid(self.world(body_prim)).GetInverse().Transform(p_world)
        return tuple(float(c) * self.m for c in local)

    def direction(self, body_prim, d_world: Gf.Vec3d) -> tuple:
        """A stage-world direction in the body's frame, or in the builder's world if ``body_prim`` is None."""
        if body_prim is None:
            return tuple(float(c) for c in hm.quat_rotate(self.up, np.asarray(d_world)))
        local = _rigid(self.world(body_prim)).GetInverse().TransformDir(d_world)
        return tuple(float(c) for c in local)


# ----------------------------------------------------------------------------------------------
# Typed attribute reading: every error names the prim path, the property and the rule.


def _attr(prim, name: str):
    a = prim.GetAttribute(name)
    return a if a and a.HasAuthoredValue() else None


def _read(prim, name: str, kind: str, default):
    """Authored value of ``name`` converted to Python, or ``default`` when unauthored.

    kind: "real" (finite float), "vec3" (three finite floats), "int", "bool", "token",
    "reals" / "ints" (arrays), "limited" (a MuJoCo true/false/auto token, or a bool).
    """
    a = _attr(prim, name)
    if a is None:
        return default
    where = f"{prim.GetPath()}: {name}"
    try:
        v = a.Get()
    except Exception as e:  # pxr raises Tf.ErrorException for unreadable values
        raise TypeError(f"{where} cannot be read: {str(e).strip()}") from None
    # Check the value, not the declared type: a registered schema reports its own type name even
    # when a layer authored a value of another type.
    expected = {
        "real": "a double or float",
        "vec3": "a 3-vector of doubles or floats",
        "int": "an int",
        "bool": "a bool",
        "token": "a token",
        "reals": "a double[] or float[] array",
        "ints": "an int[] array",
        "limited": "a token ('true', 'false' or 'auto') or a bool",
    }[kind]
    vt = type(v).__name__
    ok = {
        "real": vt == "float",
        "vec3": isinstance(v, (Gf.Vec3d, Gf.Vec3f, Gf.Vec3h)),
        "int": vt == "int",
        "bool": vt == "bool",
        "token": vt == "str",
        "reals": vt in ("DoubleArray", "FloatArray", "HalfArray"),
        "ints": vt == "IntArray",
        "limited": vt in ("str", "bool"),
    }[kind]
    if not ok:
        raise TypeError(f"{where} must be {expected}, got {vt} {v!r}")
    if kind == "real":
        v = float(v)
        if not math.isfinite(v):
            raise ValueError(f"{where} must be finite, got {v}")
    elif kind == "vec3":
        v = tuple(float(c) for c in v)
        if not all(math.isfinite(c) for c in v):
            raise ValueError(f"{where} must be finite, got {v}")
    elif kind == "reals":
        v = [float(c) for c in v]
        if not all(math.isfinite(c) for c in v):
            raise ValueError(f"{where} must be finite, got {v}")
    elif kind == "ints":
        v = [int(c) for c in v]
    elif kind == "int":
        v = int(v)
    elif kind == "bool":
        v = bool(v)
    elif kind == "token":
        v = str(v)
    elif kind == "limited":
        if vt == "bool":
            v = "true" if v else "false"
        v = str(v)
        if v not in ("true", "false", "auto"):
            raise ValueError(f"{where} must be 'true', 'false' or 'auto', got {v!r}")
    return v


def _targets(prim, name: str, *, at_most: int | None = None) -> list[Sdf.Path]:
    """Targets of relationship ``name``, each an existing prim (not a property)."""
    rel = prim.GetRelationship(name)
    paths = list(rel.GetTargets()) if rel else []
    where = f"{prim.GetPath()}: {name}"
    if at_most is not None and len(paths) > at_most:
        raise ValueError(f"{where} must have at most {at_most} target, got {len(paths)}")
    stage = prim.GetStage()
    for p in paths:
        if not p.IsPrimPath():
            raise ValueError(f"{where} target <{p}> is not a prim path")
        if not stage.GetPrimAtPath(p).IsValid():
            raise ValueError(f"{where} target <{p}> does not exist in the stage (missing relationship target)")
    return paths


def _api_schemas(prim) -> list[str]:
    """Applied API schema names, including ones USD does not know (such as MuJoCo's MjcSiteAPI)."""
    op = prim.GetMetadata("apiSchemas")
    return list(op.ApplyOperations([])) if op else []


def _owner_body(prim, body_map: Mapping[str, int]):
    """(body prim or None, builder body index) of the nearest rigid-body ancestor of ``prim`` (itself included).

    Prims under no rigid body, and static rigid bodies (index -1), are fixed in the world.
    """
    p = prim
    while p and not p.IsPseudoRoot():
        key = str(p.GetPath())
        if key in body_map:
            b = body_map[key]
            return (p, b) if b >= 0 else (None, -1)
        if p.HasAPI(UsdPhysics.RigidBodyAPI):
            raise ValueError(f"{prim.GetPath()}: its rigid body <{key}> is not in body_map (it was not imported)")
        p = p.GetParent()
    return None, -1


def _check_body_map(body_map) -> dict[str, int]:
    if not isinstance(body_map, Mapping):
        raise TypeError(f"import_usd_tendons: body_map must be a mapping of prim path to body index, got {body_map!r}")
    out = {}
    for k, v in body_map.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"import_usd_tendons: body_map[{k!r}] must be an int body index, got {type(v).__name__}")
        out[str(k)] = int(v)
    return out


# ----------------------------------------------------------------------------------------------
# Native routed cables


def _guide_route(tendon_prim, body_map, frames: _Frames, builder) -> list[TendonGuide]:
    """The validated TendonGuide list of one NewtonTendon prim (nothing is added to the builder)."""
    tpath = tendon_prim.GetPath()
    guide_paths = _targets(tendon_prim, GUIDES_REL)
    if len(guide_paths) < 2:
        raise ValueError(f"{tpath}: {GUIDES_REL} needs at least two guide prims, got {len(guide_paths)}")
    if len(set(guide_paths)) != len(guide_paths):
        raise ValueError(f"{tpath}: {GUIDES_REL} lists a guide prim more than once")
    stage = tendon_prim.GetStage()
    guide_fields = {f.name for f in dataclasses.fields(TendonGuide)}
    has_winch = "winch" in guide_fields
    has_winch_force = "winch_force" in guide_fields
    route = []
    worlds = {}
    m = frames.m
    for i, gp in enumerate(guide_paths):
        g = stage.GetPrimAtPath(gp)
        if g.GetTypeName() != GUIDE_TYPE:
            raise TypeError(f"{tpath}: guide target <{gp}> must be a {GUIDE_TYPE} prim, got type {g.GetTypeName()!r}")
        where = f"{gp}"
        bodies = _targets(g, GUIDE_PREFIX + "body", at_most=1)
        frame_prim, body = None, -1
        if bodies:
            bp = stage.GetPrimAtPath(bodies[0])
            key = str(bodies[0])
            if key not in body_map:
                raise ValueError(f"{where}: {GUIDE_PREFIX}body target <{key}> is not an imported rigid body")
            body = body_map[key]
            frame_prim = bp  # a static body (-1) still gives the frame the offset is authored in
            if body >= 0:
                if body >= builder.body_count:
                    raise ValueError(f"{where}: body_map maps <{key}> to {body}, beyond the builder's bodies")
                worlds[str(gp)] = builder.body_world[body]
        token = _read(g, GUIDE_PREFIX + "type", "token", "anchor")
        if token not in GUIDE_TOKENS:
            raise ValueError(f"{where}: {GUIDE_PREFIX}type must be one of {sorted(GUIDE_TOKENS)}, got {token!r}")
        offset = _read(g, GUIDE_PREFIX + "offset", "vec3", (0.0, 0.0, 0.0))
        axis = _read(g, GUIDE_PREFIX + "axis", "vec3", (0.0, 0.0, 1.0))
        if math.sqrt(sum(c * c for c in axis)) < 1.0e-12:
            raise ValueError(f"{where}: {GUIDE_PREFIX}axis must be nonzero")
        vals = {
            name: _read(g, GUIDE_PREFIX + name, "real", d)
            for name, d in (("radius", 0.0), ("mu", 0.0), ("restLength", -1.0), ("compliance", 0.0), ("damping", 0.0))
        }
        for name in ("radius", "mu", "compliance", "damping"):
            if vals[name] < 0.0:
                raise ValueError(f"{where}: {GUIDE_PREFIX}{name} must be >= 0, got {vals[name]}")
        orientation = _read(g, GUIDE_PREFIX + "orientation", "int", 1)
        if orientation not in (1, -1):
            raise ValueError(f"{where}: {GUIDE_PREFIX}orientation must be 1 or -1, got {orientation}")
        dynamic = _read(g, GUIDE_PREFIX + "dynamic", "bool", False)
        winch = _read(g, GUIDE_PREFIX + "winch", "bool", False)
        if winch and not has_winch:
            raise ValueError(f"{where}: {GUIDE_PREFIX}winch is not supported by this version of newton_tendon")
        winch_force = _read(g, GUIDE_PREFIX + "winchForce", "bool", False)
        if winch_force and not has_winch_force:
            raise ValueError(f"{where}: {GUIDE_PREFIX}winchForce is not supported by this version of newton_tendon")
        # Units: lengths scale with meters per unit; compliance [s^2/kg] and damping [kg/s] are in
        # derived stage units that metersPerUnit cancels out of (kilogramsPerUnit is applied below).
        if frame_prim is not None and body < 0:
            # Static rigid body: the builder holds the guide in world coordinates.
            wm = _rigid(frames.world(frame_prim))
            p_w = frames.point(None, wm.Transform(Gf.Vec3d(*offset)))
            a_w = frames.direction(None, wm.TransformDir(Gf.Vec3d(*axis)))
        elif frame_prim is None:
            p_w = frames.point(None, Gf.Vec3d(*offset))
            a_w = frames.direction(None, Gf.Vec3d(*axis))
        else:
            p_w = tuple(c * m for c in offset)
            a_w = axis
        rest = vals["restLength"]
        kw = dict(
            body=int(body),
            guide_type=GUIDE_TOKENS[token],
            radius=vals["radius"] * m,
            orientation=orientation,
            mu=vals["mu"],
            dynamic=dynamic,
            offset=tuple(float(c) for c in p_w),
            axis=tuple(float(c) for c in a_w),
            compliance=vals["compliance"] / frames.kg,
            damping=vals["damping"] * frames.kg,
            rest_length=rest * m if rest >= 0.0 else rest,
        )
        if i == 0 and (vals["compliance"] != 0.0 or vals["damping"] != 0.0 or rest != -1.0):
            raise ValueError(
                f"{where}: the first guide has no incoming span; restLength, compliance and damping must keep "
                "their fallbacks (-1, 0, 0)"
            )
        if has_winch:
            kw["winch"] = winch
        if has_winch_force:
            kw["winch_force"] = winch_force
        route.append(TendonGuide(**kw))
    if len(set(worlds.values())) > 1:
        detail = ", ".join(f"<{p}> world {w}" for p, w in worlds.items())
        raise ValueError(f"{tpath}: all guides of a tendon must be on bodies of one world, got {detail}")
    return route


# ----------------------------------------------------------------------------------------------
# MuJoCo tendon prims


def _site_or_wrap(prim, body_map, frames: _Frames, where: str):
    """A MuJoCo path target: ('site', TendonSite) or ('sphere'|'cylinder', TendonWrap without side)."""
    body_prim, body = _owner_body(prim, body_map)
    world = frames.world(prim)
    centre = world.ExtractTranslation()
    offset = frames.point(body_prim, centre)
    if "MjcSiteAPI" in _api_schemas(prim):
        return "site", TendonSite(body=body, offset=offset)
    type_name = prim.GetTypeName()
    if type_name not in ("Sphere", "Cylinder"):
        raise ValueError(
            f"{where}: path target <{prim.GetPath()}> must be a site (MjcSiteAPI) or a Sphere or Cylinder wrap "
            f"geometry, got a {type_name or 'typeless'} prim"
        )
    radius = _read(prim, "radius", "real", 1.0)
    if radius <= 0.0:
        raise ValueError(f"{prim.GetPath()}: radius must be > 0, got {radius}")
    scales = [world.TransformDir(Gf.Vec3d(*e)).GetLength() for e in ((1, 0, 0), (0, 1, 0), (0, 0, 1))]
    if type_name == "Sphere":
        k, across = 2, scales
        axis = (0.0, 0.0, 1.0)
    else:
        token = _read(prim, "axis", "token", "Z")
        if token not in ("X", "Y", "Z"):
            raise ValueError(f"{prim.GetPath()}: axis must be 'X', 'Y' or 'Z', got {token!r}")
        k = "XYZ".index(token)
        across = [s for j, s in enumerate(scales) if j != k]
        e = [0.0, 0.0, 0.0]
        e[k] = 1.0
        axis = frames.direction(body_prim, world.TransformDir(Gf.Vec3d(*e)).GetNormalized())
    if max(across) - min(across) > 1.0e-6 * max(across):
        raise ValueError(
            f"{prim.GetPath()}: a wrap {type_name.lower()} needs a uniform scale across it, got scales {scales}"
        )
    kind = type_name.lower()
    return kind, TendonWrap(kind=kind, body=body, offset=offset, axis=axis, radius=radius * across[0] * frames.m)


def _path_targets(prim, need: str) -> tuple[str, list, list]:
    """(prim path text, ``mjc:path`` targets, ``mjc:path:indices`` into them; default: each target once
    in order). ``need`` completes the error raised when there are no targets."""
    where = f"{prim.GetPath()}"
    targets = _targets(prim, "mjc:path")
    if not targets:
        raise ValueError(f"{where}: mjc:path has no targets; {need}")
    indices = _read(prim, "mjc:path:indices", "ints", None)
    if indices is None or len(indices) == 0:
        indices = list(range(len(targets)))
    return where, targets, indices


def _spatial_path(prim, body_map, frames: _Frames) -> list:
    where, targets, indices = _path_targets(prim, "a spatial tendon needs at least two sites")
    stage = prim.GetStage()
    n = len(indices)
    segments = _read(prim, "mjc:path:segments", "ints", None) or [0] * n
    divisors = _read(prim, "mjc:path:divisors", "reals", None) or [1.0]
    side_targets = _targets(prim, "mjc:sideSites")
    side_indices = _read(prim, "mjc:sideSites:indices", "ints", None) or [-1] * n
    if len(segments) != n:
        raise ValueError(f"{where}: mjc:path:segments needs one entry per path element ({n}), got {len(segments)}")
    if len(side_indices) != n:
        raise ValueError(
            f"{where}: mjc:sideSites:indices needs one entry per path element ({n}), got {len(side_indices)}"
        )
    for j, d in enumerate(divisors):
        if d <= 0.0:
            raise ValueError(f"{where}: mjc:path:divisors[{j}] must be > 0, got {d}")
    path: list = []
    if divisors[0] != 1.0:
        path.append(TendonPulley(divisor=divisors[0]))
    last = 0
    for i, k in enumerate(indices):
        if not 0 <= k < len(targets):
            raise ValueError(f"{where}: mjc:path:indices[{i}] = {k} is out of range (0..{len(targets) - 1})")
        seg = segments[i]
        if seg < last or seg > last + 1:
            raise ValueError(
                f"{where}: mjc:path:segments must start at 0 and grow by at most 1 per element, got {segments}"
            )
        if seg >= len(divisors):
            raise ValueError(f"{where}: mjc:path:divisors has no entry for segment {seg}")
        if seg > last:
            path.append(TendonPulley(divisor=divisors[seg]))
            last = seg
        kind, element = _site_or_wrap(stage.GetPrimAtPath(targets[k]), body_map, frames, where)
        s = side_indices[i]
        if s != -1:
            if not 0 <= s < len(side_targets):
                raise ValueError(f"{where}: mjc:sideSites:indices[{i}] = {s} is out of range")
            if kind == "site":
                raise ValueError(f"{where}: path element {i} is a site; only wrap geometries take a side site")
            side_prim = stage.GetPrimAtPath(side_targets[s])
            side_kind, side = _site_or_wrap(side_prim, body_map, frames, where)
            if side_kind != "site":
                raise ValueError(f"{where}: side site <{side_targets[s]}> must be a site (MjcSiteAPI)")
            element = dataclasses.replace(element, side=side)
        path.append(element)
    return path


def _fixed_terms(prim, builder, meters_per_unit: float) -> tuple[list[int], list[float]]:
    where, targets, indices = _path_targets(prim, "a fixed tendon needs at least one joint")
    coef = _read(prim, "mjc:path:coef", "reals", None)
    if coef is None or len(coef) != len(indices):
        got = "none" if coef is None else len(coef)
        raise ValueError(f"{where}: mjc:path:coef needs one coefficient per path element ({len(indices)}), got {got}")
    joints, coefficients = [], []
    labels = {label: j for j, label in enumerate(builder.joint_label)}
    for i, k in enumerate(indices):
        if not 0 <= k < len(targets):
            raise ValueError(f"{where}: mjc:path:indices[{i}] = {k} is out of range (0..{len(targets) - 1})")
        key = str(targets[k])
        if key not in labels:
            raise ValueError(f"{where}: joint <{key}> is not a joint of the builder (no joint labelled with its path)")
        j = labels[key]
        jt = builder.joint_type[j]
        if jt not in (T.JOINT_REVOLUTE, T.JOINT_PRISMATIC):
            raise ValueError(f"{where}: joint <{key}> must be revolute or prismatic for a fixed tendon")
        # Tendon length is a length: a revolute coefficient [length/rad] scales with the unit, a
        # prismatic one is a ratio.
        coefficients.append(coef[i] * meters_per_unit if jt == T.JOINT_REVOLUTE else coef[i])
        joints.append(j)
    return joints, coefficients


def _mjc_properties(prim, frames: _Frames) -> dict:
    """Transmission properties of an MjcTendon prim (SI), before actuators."""
    m, f = frames.m, frames.m * frames.kg  # length and force units [m], [N]
    where = f"{prim.GetPath()}"
    p: dict = {}
    for name, key, scale in (
        ("mjc:stiffness", "stiffness", frames.kg),
        ("mjc:damping", "damping", frames.kg),
        ("mjc:frictionloss", "friction_loss", f),
        ("mjc:armature", "armature", frames.kg),
        ("mjc:margin", "limit_margin", m),
        ("mjc:width", "width", m),
    ):
        v = _read(prim, name, "real", None)
        if v is not None:
            if v < 0.0:
                raise ValueError(f"{where}: {name} must be >= 0, got {v}")
            p[key] = v * scale
    spring = _read(prim, "mjc:springlength", "reals", None)
    if spring is not None:
        if len(spring) not in (1, 2):
            raise ValueError(f"{where}: mjc:springlength must have 1 or 2 values, got {len(spring)}")
        lo, hi = (spring[0], spring[0]) if len(spring) == 1 else spring
        if not (lo == -1.0 and hi == -1.0):  # MuJoCo's (-1, -1): the reference length
            if lo > hi:
                raise ValueError(f"{where}: mjc:springlength must be ordered (lower <= upper), got {spring}")
            p["spring_lower"], p["spring_upper"] = lo * m, hi * m
    lo, hi = _limited_range(prim, "mjc:limited", "mjc:range:min", "mjc:range:max")
    if lo is not None:
        p["lower_limit"], p["upper_limit"] = lo * m, hi * m
    lo, hi = _limited_range(prim, "mjc:actuatorfrclimited", "mjc:actuatorfrcrange:min", "mjc:actuatorfrcrange:max")
    if lo is not None:
        p["actuation_lower"], p["actuation_upper"] = lo * f, hi * f
    return p


def _limited_range(prim, limited_name: str, lo_name: str, hi_name: str):
    """(lower, upper) when MuJoCo would enforce the range, else (None, None).

    MuJoCo's rules, as in the MJCF importer: 'auto' limits an authored range; an explicit 'true'
    needs lower < upper and rejects anything else (lower == upper is not a lock); under 'auto' a
    range with lower >= upper is left unlimited, with a logged warning."""
    limited = _read(prim, limited_name, "limited", "auto")
    lo = _read(prim, lo_name, "real", None)
    hi = _read(prim, hi_name, "real", None)
    if limited == "false" or (limited == "auto" and lo is None and hi is None):
        return None, None
    lo, hi = (lo or 0.0), (hi or 0.0)
    if lo < hi:
        return lo, hi
    if limited == "true":
        raise ValueError(
            f"{prim.GetPath()}: {lo_name} ({lo}) must be < {hi_name} ({hi}) when {limited_name} is 'true' "
            "(MuJoCo rejects lower >= upper)"
        )
    _log.warning(
        "%s: %s (%s) >= %s (%s); as in MuJoCo, %s='auto' leaves it unlimited",
        prim.GetPath(),
        lo_name,
        lo,
        hi_name,
        hi,
        limited_name,
    )
    return None, None


def _newton_only_scales(m: float, f: float, kg: float) -> dict:
    """SI value of one stage unit of each numeric ``_NEWTON_ONLY`` property, from the stage's metres
    ``m``, newtons ``f`` and kilograms ``kg`` per unit (reading multiplies by it, writing divides)."""
    return {
        "drive_force": f,
        "activation_time": 1.0,
        "position_gain": kg,
        "velocity_gain": kg,
        "target_length": m,
        "target_velocity": m,
        "position_correction": 1.0,
        "limit_compliance": 1.0 / kg,
        "friction_compliance": 1.0 / kg,
        "lower_limit": m,
        "upper_limit": m,
        "actuation_lower": f,
        "actuation_upper": f,
    }


def _newton_overrides(prim, frames: _Frames) -> dict:
    """newton:transmission:<name> attributes (written by write_tendons for what MuJoCo cannot hold)."""
    scale = _newton_only_scales(frames.m, frames.m * frames.kg, frames.kg)
    out = {}
    for name in _NEWTON_ONLY:
        attr_name = "newton:transmission:" + _camel(name)
        if name == "enabled":
            v = _read(prim, attr_name, "bool", None)
        else:
            v = _read(prim, attr_name, "real", None)
            v = None if v is None else v * scale[name]
        if v is not None:
            out[name] = v
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _actuator_drive(act, frames: _Frames) -> dict:
    """Drive properties of an MjcActuator on a tendon: gear, fixed gain, affine bias, optional filter.

    MuJoCo's actuator force is ``gain * ctrl + b0 + b1 * L + b2 * Ldot`` with actuator length
    ``L = gear * l``; the tendon receives ``gear`` times it. That is our drive
    ``u + kp (l_d - l) - kv ldot`` with ``kp = -gear^2 b1``, ``kv = -gear^2 b2`` and the control at
    its initial value (0, clamped to ctrlrange).
    """
    where = f"{act.GetPath()}"
    f, kg = frames.m * frames.kg, frames.kg
    gear = _read(act, "mjc:gear", "reals", [1.0]) or [1.0]
    g = gear[0]
    if g == 0.0:
        raise ValueError(f"{where}: mjc:gear[0] must be nonzero")
    if any(c != 0.0 for c in gear[1:]):
        raise ValueError(
            f"{where}: mjc:gear[1:] must be zero (only the first gear component acts on a tendon), got {gear}"
        )
    gain_type = _read(act, "mjc:gainType", "token", "fixed")
    bias_type = _read(act, "mjc:biasType", "token", "none")
    dyn_type = _read(act, "mjc:dynType", "token", "none")
    if gain_type != "fixed":
        raise ValueError(f"{where}: mjc:gainType {gain_type!r} is not supported on tendons (only 'fixed')")
    if bias_type not in ("none", "affine"):
        raise ValueError(f"{where}: mjc:biasType {bias_type!r} is not supported on tendons (only 'none' or 'affine')")
    gain = (_read(act, "mjc:gainPrm", "reals", [1.0]) or [1.0])[0]
    bias = (_read(act, "mjc:biasPrm", "reals", [0.0, 0.0, 0.0]) if bias_type == "affine" else []) + [0.0] * 3
    kp, kv = -g * g * bias[1] + 0.0, -g * g * bias[2] + 0.0  # + 0.0: no negative zeros
    if kp < 0.0 or kv < 0.0:
        raise ValueError(
            f"{where}: mjc:biasPrm[1:3] must be <= 0 (a restoring servo); got {bias[1:3]} (positive feedback)"
        )
    out: dict = {}
    if dyn_type == "filterexact":
        # Our activation filter is the exact first-order solution, as MuJoCo's filterexact.
        if kp != 0.0 or kv != 0.0:
            raise ValueError(f"{where}: a filtered actuator ({dyn_type}) with a servo bias is not supported")
        if bias[0] != 0.0:
            raise ValueError(
                f"{where}: a filtered actuator ({dyn_type}) with a constant bias mjc:biasPrm[0] = {bias[0]} is not "
                "supported (MuJoCo adds the bias unfiltered, the drive would filter it)"
            )
        tau = (_read(act, "mjc:dynPrm", "reals", [1.0]) or [1.0])[0]
        if tau < 0.0:
            raise ValueError(f"{where}: mjc:dynPrm[0] (time constant) must be >= 0, got {tau}")
        out["activation_time"] = tau
    elif dyn_type == "filter":
        raise ValueError(
            f"{where}: mjc:dynType 'filter' (MuJoCo's explicit Euler filter) is not supported on tendons; "
            "use 'filterexact', which the drive's activation filter matches"
        )
    elif dyn_type != "none":
        raise ValueError(f"{where}: mjc:dynType {dyn_type!r} is not supported on tendons (none, filterexact)")
    ctrl_lo, ctrl_hi = _limited_range(act, "mjc:ctrlLimited", "mjc:ctrlRange:min", "mjc:ctrlRange:max")
    ctrl = 0.0 if ctrl_lo is None else min(max(0.0, ctrl_lo), ctrl_hi)
    command = g * (gain * ctrl + bias[0]) * f + 0.0  # [N] along the tendon
    if kp > 0.0:
        out["position_gain"] = kp * kg
        out["target_length"] = command / (kp * kg)
    else:
        out["drive_force"] = command
    out["velocity_gain"] = kv * kg
    lo, hi = _limited_range(act, "mjc:forceLimited", "mjc:forceRange:min", "mjc:forceRange:max")
    if lo is not None:
        out["actuation_lower"], out["actuation_upper"] = sorted((g * lo * f, g * hi * f))
    return out


def _not_a_tendon_actuator(act, targets: list[Sdf.Path], strict: bool) -> None:
    """An MjcActuator on a joint, site or body (or on nothing): raise when strict, else warn and skip it."""
    stage = act.GetStage()
    if not targets:
        what = "mjc:target has no target"
    else:
        target = stage.GetPrimAtPath(targets[0])
        kind = "a joint" if target.IsA(UsdPhysics.Joint) else f"a {target.GetTypeName() or 'typeless'} prim"
        what = f"mjc:target <{targets[0]}> is {kind}, not an {MJC_TENDON_TYPE}"
    msg = (
        f"{act.GetPath()}: {what}; only tendon actuators are imported from USD (drive a joint with a "
        "PhysicsDriveAPI instead)"
    )
    if strict:
        raise ValueError(msg + " (pass strict=False to skip it)")
    _log.warning("%s; skipped", msg)


def _mjc_tendon_type(prim) -> str:
    t = _read(prim, "mjc:type", "token", "spatial")
    if t not in ("spatial", "fixed"):
        raise ValueError(f"{prim.GetPath()}: mjc:type must be 'spatial' or 'fixed', got {t!r}")
    return t


# ----------------------------------------------------------------------------------------------
# Import


def _snapshot(builder) -> dict:
    """Everything needed to put ``builder`` back: list lengths (builders only append), copies of the rest."""
    snap = {}
    for k, v in vars(builder).items():
        snap[k] = ("len", len(v)) if isinstance(v, list) else ("val", copy.deepcopy(v))
    return snap


def _restore(builder, snap: dict) -> None:
    for k in list(vars(builder)):
        if k not in snap:
            delattr(builder, k)
    for k, (how, v) in snap.items():
        if how == "len":
            del getattr(builder, k)[v:]
        else:
            setattr(builder, k, v)


def import_usd_tendons(
    builder,
    stage: Usd.Stage,
    body_map: Mapping[str, int],
    meters_per_unit: float,
    up_rotation: Sequence[float],
    *,
    strict: bool = True,
) -> None:
    """Add the stage's MuJoCo tendons, their actuators and native routed cables to ``builder``.

    Args:
        builder: The ModelBuilder holding the stage's bodies; fixed tendons find their joints by
            label (the joint prim path).
        stage: The open stage.
        body_map: Rigid-body prim path -> body index in ``builder`` (-1 for a static body).
        meters_per_unit: The stage's metersPerUnit [m]. Masses use the stage's kilogramsPerUnit.
        up_rotation: Quaternion (x, y, z, w) rotating stage coordinates into Z-up (see
            :func:`stage_up_rotation`).
        strict: When True (default), an ``MjcActuator`` that does not target an ``MjcTendon`` (a
            joint, site or body actuator, or one with no target) raises ``ValueError``; when False it
            is skipped with a logged warning (logger ``newton_tendon.usd_tendons``). Joint actuators
            are never imported: author a ``PhysicsDriveAPI`` drive on the joint instead.

    Everything is read and validated first; an error names the prim path and the rule, and the
    builder is left unchanged.
    """
    if not isinstance(stage, Usd.Stage):
        raise TypeError(f"import_usd_tendons: stage must be a Usd.Stage, got {type(stage).__name__}")
    if not isinstance(strict, bool):
        raise TypeError(f"import_usd_tendons: strict must be a bool, got {type(strict).__name__}")
    body_map = _check_body_map(body_map)
    if isinstance(meters_per_unit, bool) or not isinstance(meters_per_unit, (int, float)):
        raise TypeError(f"import_usd_tendons: meters_per_unit must be a number, got {type(meters_per_unit).__name__}")
    if not (math.isfinite(meters_per_unit) and meters_per_unit > 0.0):
        raise ValueError(f"import_usd_tendons: meters_per_unit must be finite and > 0, got {meters_per_unit}")
    try:
        up = tuple(float(c) for c in up_rotation)
    except (TypeError, ValueError):
        raise TypeError(
            f"import_usd_tendons: up_rotation must be 4 numbers (x, y, z, w), got {up_rotation!r}"
        ) from None
    if len(up) != 4 or not all(math.isfinite(c) for c in up) or abs(math.sqrt(sum(c * c for c in up)) - 1.0) > 1e-6:
        raise ValueError(f"import_usd_tendons: up_rotation must be a unit quaternion (x, y, z, w), got {up_rotation!r}")
    frames = _Frames(stage, meters_per_unit, up)
    kg = UsdPhysics.GetStageKilogramsPerUnit(stage)
    if not (math.isfinite(kg) and kg > 0.0):
        raise ValueError(f"{stage.GetRootLayer().identifier}: kilogramsPerUnit must be finite and > 0, got {kg}")
    frames.kg = kg

    mjc_tendons, actuators, cables = [], [], []
    for prim in Usd.PrimRange.Stage(stage, Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        t = prim.GetTypeName()
        if t == MJC_TENDON_TYPE:
            mjc_tendons.append(prim)
        elif t == MJC_ACTUATOR_TYPE:
            actuators.append(prim)
        elif t == TENDON_TYPE:
            cables.append(prim)

    # Parse and validate everything before touching the builder.
    drives: dict[str, dict] = {}
    tendon_paths = {str(p.GetPath()) for p in mjc_tendons}
    cable_paths = {str(p.GetPath()) for p in cables}
    for act in actuators:
        targets = _targets(act, "mjc:target")
        hits = [str(t) for t in targets if str(t) in tendon_paths]
        if any(str(t) in cable_paths for t in targets):
            raise ValueError(
                f"{act.GetPath()}: mjc:target is a routed cable ({TENDON_TYPE}); routed cables take no drive"
            )
        if not hits:
            _not_a_tendon_actuator(act, targets, strict)
            continue
        if len(targets) != 1:
            raise ValueError(f"{act.GetPath()}: mjc:target must have exactly one target, got {len(targets)}")
        if hits[0] in drives:
            raise ValueError(
                f"{act.GetPath()}: tendon <{hits[0]}> already has an actuator ({drives[hits[0]]['_by']}); "
                "a transmission tendon has one drive"
            )
        drives[hits[0]] = {**_actuator_drive(act, frames), "_by": str(act.GetPath())}

    calls = []
    for prim in mjc_tendons:
        key = str(prim.GetPath())
        props = _mjc_properties(prim, frames)
        drive = {k: v for k, v in drives.get(key, {}).items() if k != "_by"}
        for name in ("actuation_lower", "actuation_upper"):
            if name in drive and name in props:
                drive[name] = max(drive[name], props[name]) if name.endswith("lower") else min(drive[name], props[name])
        props.update(drive)
        props.update(_newton_overrides(prim, frames))
        if _mjc_tendon_type(prim) == "fixed":
            joints, coefficients = _fixed_terms(prim, builder, frames.m)
            calls.append(("fixed", key, (joints, coefficients), props))
        else:
            calls.append(("spatial", key, _spatial_path(prim, body_map, frames), props))
    for prim in cables:
        calls.append(("cable", str(prim.GetPath()), _guide_route(prim, body_map, frames, builder), None))

    snap = _snapshot(builder)
    try:
        for kind, label, data, props in calls:
            try:
                if kind == "fixed":
                    builder.add_fixed_tendon(data[0], data[1], label=label, **props)
                elif kind == "spatial":
                    builder.add_spatial_tendon(data, label=label, **props)
                else:
                    builder.add_tendon(data, label=label)
            except (TypeError, ValueError) as e:
                raise type(e)(f"{label}: {e}") from None
    except BaseException:
        _restore(builder, snap)
        raise


# ----------------------------------------------------------------------------------------------
# Writing


def _np(a):
    return a.numpy() if hasattr(a, "numpy") else np.asarray(a)


def _scene(obj) -> dict:
    """Bodies, routed cables and transmission tendons of a ModelBuilder or a finalized Model, as plain data."""
    from .builder import ModelBuilder
    from .model import Model

    if isinstance(obj, ModelBuilder):
        s = dict(
            body_q=np.asarray(obj.body_q, dtype=np.float64).reshape(-1, 7),
            body_qd=np.asarray(obj.body_qd, dtype=np.float64).reshape(-1, 6),
            body_mass=np.asarray(obj.body_mass, dtype=np.float64),
            body_com=np.asarray(obj.body_com, dtype=np.float64).reshape(-1, 3),
            body_inertia=np.asarray(obj.body_inertia, dtype=np.float64).reshape(-1, 3, 3),
            body_flags=np.asarray(obj.body_flags, dtype=np.int64),
            body_label=list(obj.body_label),
            joint_label=list(obj.joint_label),
            joint_type=list(obj.joint_type),
            tendon_start=[*obj.tendon_start, obj.tendon_guide_count],
            tendon_label=list(obj.tendon_label),
            transmission=_builder_transmissions(obj),
        )
        g = {
            k: np.asarray(getattr(obj, "tendon_guide_" + k))
            for k in ("body", "type", "flags", "offset", "axis", "radius", "orientation", "mu")
        }
        seg = {k: np.asarray(getattr(obj, "tendon_segment_" + k)) for k in ("compliance", "damping", "rest_length")}
    elif isinstance(obj, Model):
        s = dict(
            body_q=_np(obj.body_q).astype(np.float64).reshape(-1, 7),
            body_qd=_np(obj.body_qd).astype(np.float64).reshape(-1, 6),
            body_mass=_np(obj.body_mass).astype(np.float64),
            body_com=_np(obj.body_com).astype(np.float64).reshape(-1, 3),
            body_inertia=_np(obj.body_inertia).astype(np.float64).reshape(-1, 3, 3),
            body_flags=_np(obj.body_flags).astype(np.int64),
            body_label=list(obj.body_label),
            joint_label=list(obj.joint_label),
            joint_type=list(_np(obj.joint_type)) if obj.joint_count else [],
            tendon_start=list(_np(obj.tendon_start)) if obj.tendon_count else [0],
            tendon_label=list(obj.tendon_label),
            transmission=_model_transmissions(obj),
        )
        if obj.tendon_count:
            g = {k: _np(getattr(obj, "tendon_guide_" + k)) for k in ("body", "type", "flags", "offset", "axis")}
            g.update({k: _np(getattr(obj, "tendon_guide_" + k)) for k in ("radius", "orientation", "mu")})
            seg = {k: _np(getattr(obj, "tendon_segment_" + k)) for k in ("compliance", "damping", "rest_length")}
        else:
            g, seg = {}, {}
    else:
        raise TypeError(f"write_tendons: expected a ModelBuilder or a Model, got {type(obj).__name__}")
    s["guide"], s["segment"] = g, seg
    return s


def _builder_transmissions(b) -> list[dict]:
    out = []
    for i in range(b.transmission_count):
        out.append(
            dict(
                kind=b.transmission_type[i],
                label=b.transmission_label[i],
                props=dict(b.transmission_properties[i]),
                path={k: list(v) for k, v in b.transmission_path[i].items()},
                terms=list(b.transmission_terms[i]),
            )
        )
    return out


def _model_transmissions(m) -> list[dict]:
    if not m.transmission_count:
        return []
    arr = {k: _np(getattr(m, "transmission_" + k)) for k in TRANSMISSION_PROPERTIES if hasattr(m, "transmission_" + k)}
    kinds = _np(m.transmission_type)
    p = m.transmission_path
    start = _np(p.start)
    path_arrays = {k: _np(getattr(p, k)) for k in ("type", "body", "offset", "axis", "radius", "side_body")}
    path_arrays.update({k: _np(getattr(p, k)) for k in ("side_offset", "has_side", "divisor")})
    tstart = _np(m.transmission_term_start)
    tj, tc = _np(m.transmission_term_joint), _np(m.transmission_term_coefficient)
    out = []
    for i in range(m.transmission_count):
        props = {}
        for k in TRANSMISSION_PROPERTIES:
            if k in arr:
                v = arr[k][i]
                props[k] = bool(v) if k == "enabled" else float(v)
        path = {
            k: [a[e].tolist() if a.ndim > 1 else a[e].item() for e in range(start[i], start[i + 1])]
            for k, a in path_arrays.items()
        }
        terms = [(int(tj[e]), float(tc[e])) for e in range(tstart[i], tstart[i + 1])]
        out.append(dict(kind=int(kinds[i]), label=m.transmission_label[i], props=props, path=path, terms=terms))
    return out


_TOKEN_OF_TYPE = {int(v): k for k, v in GUIDE_TOKENS.items()}


def _valid_prim_path(label) -> bool:
    return (
        isinstance(label, str)
        and label.startswith("/")
        and Sdf.Path.IsValidPathString(label)
        and Sdf.Path(label).IsPrimPath()
    )


class _Writer:
    """Authoring context: stage units, the up rotation, body prims and unique names."""

    def __init__(self, stage, scene, body_paths):
        self.stage = stage
        self.s = scene
        if not UsdGeom.StageHasAuthoredMetersPerUnit(stage):
            UsdGeom.SetStageMetersPerUnit(stage, 1.0)
        if not stage.HasAuthoredMetadata(UsdGeom.Tokens.upAxis):
            UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
        self.m = UsdGeom.GetStageMetersPerUnit(stage)
        self.kg = UsdPhysics.GetStageKilogramsPerUnit(stage)
        self.down = _quat_conj(stage_up_rotation(stage))  # Z-up -> stage
        self.cache = UsdGeom.XformCache(Usd.TimeCode.Default())
        nb = len(scene["body_mass"])
        if body_paths is not None:
            if isinstance(body_paths, (str, bytes)) or not isinstance(body_paths, Sequence):
                raise TypeError(f"write_tendons: body_paths must be a sequence of prim paths, got {body_paths!r}")
            if len(body_paths) != nb:
                raise ValueError(f"write_tendons: body_paths needs one path per body ({nb}), got {len(body_paths)}")
            for i, p in enumerate(body_paths):
                if not _valid_prim_path(str(p)):
                    raise ValueError(f"write_tendons: body_paths[{i}] = {p!r} is not an absolute prim path")
        self.body_paths = body_paths
        self.done: dict[int, Sdf.Path] = {}

    def world_point(self, p) -> Gf.Vec3d:
        return Gf.Vec3d(*(float(c) / self.m for c in hm.quat_rotate(self.down, p)))

    def world_dir(self, d) -> Gf.Vec3d:
        return Gf.Vec3d(*(float(c) for c in hm.quat_rotate(self.down, d)))

    def body(self, b: int) -> Sdf.Path:
        """The prim path of body ``b``, authoring a minimal rigid body if the stage lacks it."""
        if b in self.done:
            return self.done[b]
        if self.body_paths is not None:
            path = Sdf.Path(str(self.body_paths[b]))
        elif _valid_prim_path(self.s["body_label"][b]):
            path = Sdf.Path(self.s["body_label"][b])
        else:
            path = Sdf.Path(f"/World/body_{b}")
        if not self.stage.GetPrimAtPath(path).IsValid():
            self._author_body(b, path)
        self.done[b] = path
        return path

    def _define_ancestors(self, path: Sdf.Path):
        for p in reversed(path.GetParentPath().GetPrefixes()):
            if not self.stage.GetPrimAtPath(p).IsValid():
                UsdGeom.Xform.Define(self.stage, p)

    def _author_body(self, b: int, path: Sdf.Path):
        s = self.s
        self._define_ancestors(path)
        xf = UsdGeom.Xform.Define(self.stage, path)
        q = s["body_q"][b]
        rot = hm.quat_mul(self.down, q[3:])
        world = Gf.Matrix4d().SetRotate(_gf_quat(rot)) * Gf.Matrix4d().SetTranslate(self.world_point(q[:3]))
        parent = self.cache.GetLocalToWorldTransform(self.stage.GetPrimAtPath(path.GetParentPath()))
        local = world * parent.GetInverse()
        xf.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(local.ExtractTranslation())
        xf.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(_rigid(local).ExtractRotationQuat())
        prim = xf.GetPrim()
        rb = UsdPhysics.RigidBodyAPI.Apply(prim)
        if s["body_flags"][b] & T.BODY_KINEMATIC:
            rb.CreateKinematicEnabledAttr(True)
        qd = s["body_qd"][b]
        if np.any(qd != 0.0):
            rb.CreateVelocityAttr(Gf.Vec3f(*(float(c) / self.m for c in hm.quat_rotate(self.down, qd[:3]))))
            rb.CreateAngularVelocityAttr(Gf.Vec3f(*(math.degrees(c) for c in hm.quat_rotate(self.down, qd[3:]))))
        mass = UsdPhysics.MassAPI.Apply(prim)
        mass.CreateMassAttr(float(s["body_mass"][b]) / self.kg)
        mass.CreateCenterOfMassAttr(Gf.Vec3f(*(float(c) / self.m for c in s["body_com"][b])))
        moments, axes = np.linalg.eigh(s["body_inertia"][b])
        if np.linalg.det(axes) < 0.0:
            axes[:, 2] = -axes[:, 2]
        principal = Gf.Matrix4d().SetRotate(Gf.Matrix3d(*axes.T.flatten().tolist())).ExtractRotationQuat()
        mass.CreateDiagonalInertiaAttr(Gf.Vec3f(*(float(c) / (self.kg * self.m * self.m) for c in moments)))
        mass.CreatePrincipalAxesAttr(Gf.Quatf(principal))

    def unique_child(self, parent: Sdf.Path, name: str) -> Sdf.Path:
        base = re.sub(r"[^A-Za-z0-9_]", "_", name) or "tendon"
        if base[0].isdigit():
            base = "_" + base
        path, k = parent.AppendChild(base), 1
        while self.stage.GetPrimAtPath(path).IsValid():
            path, k = parent.AppendChild(f"{base}_{k}"), k + 1
        return path

    def tendon_path(self, label: str, fallback: str) -> Sdf.Path:
        if _valid_prim_path(label) and not self.stage.GetPrimAtPath(label).IsValid():
            self._define_ancestors(Sdf.Path(label))
            return Sdf.Path(label)
        parent = Sdf.Path("/World/Tendons")
        self._define_ancestors(parent.AppendChild("x"))
        return self.unique_child(parent, label.rsplit("/", 1)[-1] if label else fallback)


def _set(prim, name: str, type_name, value, *, custom: bool = True):
    prim.CreateAttribute(name, type_name, custom).Set(value)


def _write_cables(w: _Writer) -> list[Sdf.Path]:
    s = w.s
    g, seg = s["guide"], s["segment"]
    starts = s["tendon_start"]
    out = []
    for t in range(len(s["tendon_label"])):
        tpath = w.tendon_path(s["tendon_label"][t], f"tendon_{t}")
        tendon = w.stage.DefinePrim(tpath, TENDON_TYPE)
        guides = []
        for k, gi in enumerate(range(int(starts[t]), int(starts[t + 1]))):
            gp = tpath.AppendChild(f"guide_{k}")
            gprim = w.stage.DefinePrim(gp, GUIDE_TYPE)
            body = int(g["body"][gi])
            offset = tuple(float(c) for c in g["offset"][gi])
            axis = tuple(float(c) for c in g["axis"][gi])
            if body >= 0:
                gprim.CreateRelationship(GUIDE_PREFIX + "body", False).SetTargets([w.body(body)])
                off = Gf.Vec3d(*(c / w.m for c in offset))
                ax = Gf.Vec3d(*axis)
            else:
                off, ax = w.world_point(offset), w.world_dir(axis)
            flags = int(g["flags"][gi])
            _set(gprim, GUIDE_PREFIX + "type", Sdf.ValueTypeNames.Token, _TOKEN_OF_TYPE[int(g["type"][gi])])
            _set(gprim, GUIDE_PREFIX + "offset", Sdf.ValueTypeNames.Double3, off)
            _set(gprim, GUIDE_PREFIX + "axis", Sdf.ValueTypeNames.Double3, ax)
            _set(gprim, GUIDE_PREFIX + "radius", Sdf.ValueTypeNames.Double, float(g["radius"][gi]) / w.m)
            _set(gprim, GUIDE_PREFIX + "orientation", Sdf.ValueTypeNames.Int, int(g["orientation"][gi]))
            _set(gprim, GUIDE_PREFIX + "mu", Sdf.ValueTypeNames.Double, float(g["mu"][gi]))
            _set(gprim, GUIDE_PREFIX + "dynamic", Sdf.ValueTypeNames.Bool, bool(flags & T.GUIDE_FLAG_DYNAMIC))
            if flags & getattr(T, "GUIDE_FLAG_WINCH", 0):
                _set(gprim, GUIDE_PREFIX + "winch", Sdf.ValueTypeNames.Bool, True)
            if flags & getattr(T, "GUIDE_FLAG_WINCH_FORCE", 0):
                _set(gprim, GUIDE_PREFIX + "winchForce", Sdf.ValueTypeNames.Bool, True)
            if k > 0:
                si = gi - t - 1
                rest = float(seg["rest_length"][si])
                _set(gprim, GUIDE_PREFIX + "restLength", Sdf.ValueTypeNames.Double, rest / w.m if rest >= 0 else rest)
                _set(gprim, GUIDE_PREFIX + "compliance", Sdf.ValueTypeNames.Double, float(seg["compliance"][si]) * w.kg)
                _set(gprim, GUIDE_PREFIX + "damping", Sdf.ValueTypeNames.Double, float(seg["damping"][si]) / w.kg)
            guides.append(gp)
        tendon.CreateRelationship(GUIDES_REL, False).SetTargets(guides)
        out.append(tpath)
    return out


def _place(w: _Writer, path: Sdf.Path, type_name: str, world: Gf.Matrix4d):
    """Define ``path`` as ``type_name`` with one matrix op giving it the world transform ``world``."""
    w._define_ancestors(path)
    prim = w.stage.DefinePrim(path, type_name)
    parent = w.cache.GetLocalToWorldTransform(w.stage.GetPrimAtPath(path.GetParentPath()))
    UsdGeom.Xformable(prim).AddTransformOp(UsdGeom.XformOp.PrecisionDouble).Set(world * parent.GetInverse())
    return prim


def _element_world(w: _Writer, body: int, offset, axis=None) -> tuple[Gf.Matrix4d, Sdf.Path]:
    """World transform (stage) of a path element on ``body`` (z along ``axis``) and the prim to put it under."""
    if body >= 0:
        bp = w.body(body)
        frame = _rigid(w.cache.GetLocalToWorldTransform(w.stage.GetPrimAtPath(bp)))
        p = frame.Transform(Gf.Vec3d(*(float(c) / w.m for c in offset)))
        d = frame.TransformDir(Gf.Vec3d(*axis)) if axis is not None else None
        parent = bp
    else:
        p = w.world_point(offset)
        d = w.world_dir(axis) if axis is not None else None
        parent = Sdf.Path("/World/TendonSites")
    m = Gf.Matrix4d().SetTranslate(p)
    if d is not None:
        rot = Gf.Rotation(Gf.Vec3d(0, 0, 1), Gf.Vec3d(d).GetNormalized())
        m = Gf.Matrix4d().SetRotate(rot) * m
    return m, parent


def _write_transmissions(w: _Writer, joint_paths) -> list[Sdf.Path]:
    s = w.s
    m, f, kg = w.m, w.m * w.kg, w.kg
    out = []
    for i, tr in enumerate(s["transmission"]):
        label = tr["label"]
        tpath = w.tendon_path(label, f"transmission_{i}")
        prim = w.stage.DefinePrim(tpath, MJC_TENDON_TYPE)
        name = tpath.name
        rel = prim.CreateRelationship("mjc:path", False)
        targets: list[Sdf.Path] = []
        indices: list[int] = []

        def target(path: Sdf.Path, targets=targets, indices=indices) -> None:
            if path not in targets:
                targets.append(path)
            indices.append(targets.index(path))

        if tr["kind"] == TRANSMISSION_FIXED:
            _set(prim, "mjc:type", Sdf.ValueTypeNames.Token, "fixed", custom=False)
            coef = []
            for j, c in tr["terms"]:
                if joint_paths is not None:
                    jp = str(joint_paths[j])
                else:
                    jp = s["joint_label"][j]
                if not _valid_prim_path(jp) or not w.stage.GetPrimAtPath(jp).IsValid():
                    raise ValueError(
                        f"write_tendons: fixed tendon {label!r} uses joint {j} ({s['joint_label'][j]!r}), which is not "
                        "a joint prim of the stage; pass joint_paths or transmissions=False"
                    )
                target(Sdf.Path(jp))
                coef.append(c / m if s["joint_type"][j] == T.JOINT_REVOLUTE else c)
            _set(prim, "mjc:path:coef", Sdf.ValueTypeNames.DoubleArray, coef, custom=False)
        else:
            _set(prim, "mjc:type", Sdf.ValueTypeNames.Token, "spatial", custom=False)
            p = tr["path"]
            segments, divisors, sides, side_index = [], [1.0], [], []
            seg = 0
            for e in range(len(p["type"])):
                code = int(p["type"][e])
                if code == int(SPATIAL_PULLEY):
                    if e == 0:
                        divisors[0] = float(p["divisor"][e])
                    else:
                        seg += 1
                        divisors.append(float(p["divisor"][e]))
                    continue
                body = int(p["body"][e])
                if code == int(SPATIAL_SITE):
                    world, parent = _element_world(w, body, p["offset"][e])
                    ep = _place(w, w.unique_child(parent, f"{name}_site"), "Xform", world)
                    ep.AddAppliedSchema("MjcSiteAPI")
                else:
                    world, parent = _element_world(w, body, p["offset"][e], p["axis"][e])
                    kind = "Sphere" if code == int(SPATIAL_SPHERE) else "Cylinder"
                    ep = _place(w, w.unique_child(parent, f"{name}_{kind.lower()}"), kind, world)
                    r = float(p["radius"][e]) / m
                    _set(ep, "radius", Sdf.ValueTypeNames.Double, r, custom=False)
                    if code == int(SPATIAL_CYLINDER):
                        _set(ep, "height", Sdf.ValueTypeNames.Double, 2.0 * r, custom=False)
                        _set(ep, "axis", Sdf.ValueTypeNames.Token, "Z", custom=False)
                    UsdGeom.Imageable(ep).CreatePurposeAttr(UsdGeom.Tokens.guide)
                side = -1
                if int(p["has_side"][e]):
                    sw, sparent = _element_world(w, int(p["side_body"][e]), p["side_offset"][e])
                    sp = _place(w, w.unique_child(sparent, f"{name}_side"), "Xform", sw)
                    sp.AddAppliedSchema("MjcSiteAPI")
                    sides.append(sp.GetPath())
                    side = len(sides) - 1
                target(ep.GetPath())
                segments.append(seg)
                side_index.append(side)
            _set(prim, "mjc:path:segments", Sdf.ValueTypeNames.IntArray, segments, custom=False)
            _set(prim, "mjc:path:divisors", Sdf.ValueTypeNames.DoubleArray, divisors, custom=False)
            if sides:
                prim.CreateRelationship("mjc:sideSites", False).SetTargets(sides)
                _set(prim, "mjc:sideSites:indices", Sdf.ValueTypeNames.IntArray, side_index, custom=False)
        rel.SetTargets(targets)
        _set(prim, "mjc:path:indices", Sdf.ValueTypeNames.IntArray, indices, custom=False)
        _write_transmission_properties(prim, tr["props"], m, f, kg)
        out.append(tpath)
    return out


def _write_transmission_properties(prim, props: dict, m: float, f: float, kg: float):
    dbl = Sdf.ValueTypeNames.Double
    for key, name, scale in (
        ("stiffness", "mjc:stiffness", kg),
        ("damping", "mjc:damping", kg),
        ("friction_loss", "mjc:frictionloss", f),
        ("armature", "mjc:armature", kg),
        ("limit_margin", "mjc:margin", m),
        ("width", "mjc:width", m),
    ):
        _set(prim, name, dbl, float(props[key]) / scale, custom=False)
    lo, hi = props["spring_lower"], props["spring_upper"]
    spring = [-1.0, -1.0] if lo is None and hi is None else [float(lo) / m, float(hi) / m]
    if (lo is None) != (hi is None):
        raise ValueError(
            f"write_tendons: {prim.GetPath()}: spring_lower and spring_upper must both be set or both None"
        )
    _set(prim, "mjc:springlength", Sdf.ValueTypeNames.DoubleArray, spring, custom=False)
    extra: dict = {}
    for lo_key, hi_key, limited, rmin, rmax, scale in (
        ("lower_limit", "upper_limit", "mjc:limited", "mjc:range:min", "mjc:range:max", m),
        (
            "actuation_lower",
            "actuation_upper",
            "mjc:actuatorfrclimited",
            "mjc:actuatorfrcrange:min",
            "mjc:actuatorfrcrange:max",
            f,
        ),
    ):
        lo, hi = float(props[lo_key]), float(props[hi_key])
        # MuJoCo's range needs lower < upper: a lock (lower == upper) travels as Newton attributes.
        both = math.isfinite(lo) and math.isfinite(hi) and lo < hi
        _set(prim, limited, Sdf.ValueTypeNames.Token, "true" if both else "false", custom=False)
        if both:
            _set(prim, rmin, dbl, lo / scale, custom=False)
            _set(prim, rmax, dbl, hi / scale, custom=False)
        else:
            extra.update({k: v for k, v in ((lo_key, lo), (hi_key, hi)) if math.isfinite(v)})
    scale = _newton_only_scales(m, f, kg)
    for key in _NEWTON_ONLY:
        name = "newton:transmission:" + _camel(key)
        if key == "enabled":
            if not props["enabled"]:
                _set(prim, name, Sdf.ValueTypeNames.Bool, False)
            continue
        v = extra.get(key) if key in scale and key.endswith(("_limit", "_lower", "_upper")) else props.get(key)
        if key in ("lower_limit", "upper_limit", "actuation_lower", "actuation_upper") and key not in extra:
            continue
        if v is None or (v == TRANSMISSION_PROPERTIES[key] and key not in extra):
            continue
        _set(prim, name, dbl, float(v) / scale[key])


def write_tendons(
    stage: Usd.Stage,
    builder_or_model,
    *,
    body_paths: Sequence[str] | None = None,
    joint_paths: Sequence[str] | None = None,
    transmissions: bool = True,
) -> list[Sdf.Path]:
    """Author the routed cables (NewtonTendon) and transmission tendons (MjcTendon) of a builder or a Model.

    Args:
        stage: The stage to write into. If it has no authored metersPerUnit or upAxis, they are set
            to 1 and Z; otherwise values are converted into the stage's units and up axis.
        builder_or_model: A ModelBuilder or a finalized Model.
        body_paths: Prim path of every body (one per body). Default: the body's label when it is an
            absolute prim path, else ``/World/body_<i>``. A body prim the stage lacks is authored as
            a minimal UsdPhysics rigid body (pose, mass, centre of mass, principal inertia).
        joint_paths: Prim path of every joint, for fixed tendons. Default: the joint's label; the
            joint prim must exist (this function authors no joints).
        transmissions: Also write transmission tendons (default True).

    Returns:
        The paths of the authored tendon prims (routed cables first). A tendon prim is named by its
        label when that is an absolute prim path, else placed under ``/World/Tendons``. Properties
        MuJoCo's tendon schema cannot hold are written as ``newton:transmission:*`` attributes.
    """
    if not isinstance(stage, Usd.Stage):
        raise TypeError(f"write_tendons: stage must be a Usd.Stage, got {type(stage).__name__}")
    if not isinstance(transmissions, bool):
        raise TypeError(f"write_tendons: transmissions must be a bool, got {type(transmissions).__name__}")
    scene = _scene(builder_or_model)
    if joint_paths is not None:
        if isinstance(joint_paths, (str, bytes)) or not isinstance(joint_paths, Sequence):
            raise TypeError(f"write_tendons: joint_paths must be a sequence of prim paths, got {joint_paths!r}")
        if len(joint_paths) != len(scene["joint_label"]):
            n = len(scene["joint_label"])
            raise ValueError(f"write_tendons: joint_paths needs one path per joint ({n}), got {len(joint_paths)}")
    w = _Writer(stage, scene, body_paths)
    paths = _write_cables(w)
    if transmissions:
        paths += _write_transmissions(w, joint_paths)
    return paths


__all__ = ["SCHEMA_DIR", "SCHEMA_REGISTERED", "import_usd_tendons", "stage_up_rotation", "write_tendons"]
