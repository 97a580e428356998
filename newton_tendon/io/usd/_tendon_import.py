"""Import of tendon prims: native routed cables (``NewtonTendon``) and MuJoCo tendons, into a builder.

:func:`import_usd_tendons` reads a stage whose bodies (and joints) the UsdPhysics importer already
created: ``MjcTendon`` prims become transmission tendons, ``MjcActuator`` prims that target them
their drives (``_mjc_tendons``), and ``NewtonTendon`` prims routed cables (one ``add_tendon`` call
each, routes from ``_guide_route``). Everything is validated before the builder changes.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Mapping, Sequence

from pxr import Gf, Usd, UsdPhysics

from newton_tendon.tendon import TendonGuide

from ._mjc_tendons import (
    _actuator_drive,
    _fixed_terms,
    _mjc_properties,
    _mjc_tendon_type,
    _newton_overrides,
    _not_a_tendon_actuator,
    _spatial_path,
)
from ._schema import GUIDE_PREFIX, GUIDE_TOKENS, GUIDE_TYPE, GUIDES_REL, MJC_ACTUATOR_TYPE, MJC_TENDON_TYPE, TENDON_TYPE
from ._tendon_values import _check_body_map, _Frames, _read, _rigid, _targets

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
