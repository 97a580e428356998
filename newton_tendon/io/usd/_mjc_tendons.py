"""MuJoCo tendon prims: ``MjcTendon`` paths and properties, and ``MjcActuator`` drives on them.

Spatial tendons become path elements (sites, wrap spheres and cylinders, pulleys), fixed tendons
joint terms, and an actuator on a tendon becomes the transmission's drive. Properties MuJoCo's
schema cannot hold travel as ``newton:transmission:<name>`` attributes (``_NEWTON_ONLY``; the
writer uses the same names and scales). Warnings go to the logger ``newton_tendon.usd_tendons``.
"""

from __future__ import annotations

import dataclasses
import logging

from pxr import Gf, Sdf, UsdPhysics

from newton_tendon.kernels import types as T
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

from ._schema import MJC_TENDON_TYPE
from ._tendon_values import _api_schemas, _Frames, _owner_body, _read, _targets

# The logger keeps the name of the module this code came from (documented in docs/usd.md).
_log = logging.getLogger("newton_tendon.usd_tendons")

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
