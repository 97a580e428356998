"""Stage units and frames, and typed attribute reading, for the tendon prims.

:class:`_Frames` converts stage points and directions to SI, Z-up, in a body's frame or the world;
``_read`` and ``_targets`` read a property or relationship and check it, naming the prim path, the
property and the rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

from newton_tendon import _hostmath as hm

Y_UP_ROTATION = (math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5))
"""Quaternion (x, y, z, w) turning a Y-up stage into Z-up: +90 degrees about X (stage Y becomes Z)."""

_REAL = ("double", "float", "half")
_VEC3 = ("double3", "float3", "half3") + tuple(f"{r}3{k}" for r in ("point", "vector", "normal") for k in "dfh")


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
