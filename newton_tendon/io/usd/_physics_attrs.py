"""Typed reads of UsdPhysics prim attributes, and the constants of the UsdPhysics import.

Each reader returns the authored value (or the schema fallback) checked for type and range; an error
names the prim path and the rule. ``pxr`` is not imported here: the readers take prims.
"""

from __future__ import annotations

import math

import numpy as np

from newton_tendon import _hostmath as hm

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
