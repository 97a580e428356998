"""Writing tendons to USD: routed cables as ``NewtonTendon`` prims, transmission tendons as ``MjcTendon``.

:func:`write_tendons` reads a builder or a finalized model as plain data (``_scene``), then authors
each routed cable and its guides, and each transmission tendon with the sites and wrap geometry of
its path, in the stage's units and up axis; a body the stage lacks becomes a minimal UsdPhysics
rigid body.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

from newton_tendon import _hostmath as hm
from newton_tendon._transmission_builder import TRANSMISSION_FIXED, TRANSMISSION_PROPERTIES
from newton_tendon.builder import ModelBuilder
from newton_tendon.kernels import types as T
from newton_tendon.kernels.spatial import SPATIAL_CYLINDER, SPATIAL_PULLEY, SPATIAL_SITE, SPATIAL_SPHERE
from newton_tendon.model import Model

from ._mjc_tendons import _NEWTON_ONLY, _camel, _newton_only_scales
from ._schema import GUIDE_PREFIX, GUIDE_TOKENS, GUIDE_TYPE, GUIDES_REL, MJC_TENDON_TYPE, TENDON_TYPE
from ._tendon_values import _gf_quat, _quat_conj, _rigid, stage_up_rotation

# ----------------------------------------------------------------------------------------------
# Writing


def _np(a):
    return a.numpy() if hasattr(a, "numpy") else np.asarray(a)


def _scene(obj) -> dict:
    """Bodies, routed cables and transmission tendons of a ModelBuilder or a finalized Model, as plain data."""
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
                axes=list(b.transmission_term_axes[i]),
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
    td, qd_start = _np(m.transmission_term_dof), _np(m.joint_qd_start)
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
        axes = [int(td[e] - qd_start[tj[e]]) for e in range(tstart[i], tstart[i + 1])]
        out.append(
            dict(kind=int(kinds[i]), label=m.transmission_label[i], props=props, path=path, terms=terms, axes=axes)
        )
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
            for (j, c), k in zip(tr["terms"], tr["axes"], strict=True):
                if k:
                    raise ValueError(
                        f"write_tendons: fixed tendon {label!r} uses axis {k} of D6 joint {j} "
                        f"({s['joint_label'][j]!r}); MuJoCo's tendon schema names whole one-coordinate joints, so "
                        "this term cannot be written (pass transmissions=False)"
                    )
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
