"""Reading: JSON text or a parsed document -> checked values -> a fresh builder (``loads``,
``load``, ``from_dict``). The whole document is validated before a builder is returned; stored
lists are assigned to the new builder as they are, so derived values come back bit for bit."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import warp as wp

from newton_tendon._transmission_builder import (
    TRANSMISSION_PROPERTIES,
    TRANSMISSION_SPATIAL,
    check_transmission_properties,
)
from newton_tendon.builder import ModelBuilder
from newton_tendon.inertia import check_body_inertia
from newton_tendon.kernels import types as T
from newton_tendon.tendon import (
    AttributeAssignment,
    AttributeFrequency,
    CustomAttribute,
    TendonGuideFlags,
    TendonGuideType,
)
from newton_tendon.transmission import WRAP_KINDS, TendonPulley, TendonSite, TendonWrap, flatten_spatial_path

from .schema import (
    _ASSIGNMENTS,
    _BODY_FLAGS,
    _DTYPES,
    _ELEMENT_TYPES,
    _FREQUENCIES,
    _GUIDE_FLAGS,
    _GUIDE_TYPES,
    _INF_STRINGS,
    _JOINT_TYPES,
    _SHAPE_TYPES,
    _TRANSMISSION_KINDS,
    FORMAT_NAME,
    FORMAT_VERSION,
)
from .validate import (
    _array,
    _bool,
    _check_entity_world,
    _check_path_arg,
    _enum,
    _Fields,
    _flags,
    _float,
    _floats,
    _int,
    _nonzero3,
    _parse_json,
    _str,
    _str_choice,
    _world,
    _xform,
)


def loads(text: str) -> ModelBuilder:
    """Build a fresh :class:`ModelBuilder` from native-format JSON text; raises before building if invalid."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"document: not UTF-8 text: {e}") from None
    if not isinstance(text, str):
        raise TypeError(f"loads: text must be a str, got {type(text).__name__}")
    return from_dict(_parse_json(text))


def load(path) -> ModelBuilder:
    """Read a native-format JSON file (see ``docs/persistence.md``) into a fresh :class:`ModelBuilder`.

    Errors name the file, the field path and the rule; no builder is returned unless the whole
    document is valid."""
    path = _check_path_arg("load", path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        return loads(data)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{path}: {e}") from None


def from_dict(doc) -> ModelBuilder:
    """Validate a parsed native-format document and build a fresh builder from it."""
    top = _Fields(doc, "", "a JSON object (the native newton_tendon format)")
    fmt = top("format", _str)
    if fmt != FORMAT_NAME:
        raise ValueError(f"format: expected {FORMAT_NAME!r}, got {fmt!r}")
    version = top("version", _int)
    if version != FORMAT_VERSION:
        raise ValueError(f"version: unsupported version {version}; this reader reads version {FORMAT_VERSION}")
    up_axis = top("up_axis", _str)
    if up_axis not in ("X", "Y", "Z"):
        raise ValueError(f"up_axis: must be 'X', 'Y' or 'Z', got {up_axis!r}")
    gravity = top("gravity", _floats, 3)
    world_count = top("world_count", _int, 0)
    current_world = top("current_world", _world, world_count)
    margin = top("rigid_contact_margin", _float, 0.0)

    new = ModelBuilder(up_axis=up_axis, gravity=gravity)
    new.world_count = world_count
    new.current_world = current_world
    new.rigid_contact_margin = margin
    top("bodies", _read_bodies, new)
    top("body_color", _read_body_color, new)
    top("shapes", _read_shapes, new)
    new.shape_filter_pairs = top("shape_filter_pairs", _read_pairs, new.shape_count, "shape")
    new.body_filter_pairs = top("body_filter_pairs", _read_pairs, new.body_count, "body")
    if top.has("shape_contact_pairs"):  # optional: only documents with explicit pairs hold it
        new.shape_contact_pair_mu = top("shape_contact_pairs", _read_contact_pairs, new.shape_count)
    top("joints", _read_joints, new)
    top("articulations", _read_articulations, new)
    end = top("articulation_joint_end", _int, 0, new.joint_count, "joint count")
    if new.articulation_start and end <= new.articulation_start[-1]:
        raise ValueError(
            f"articulation_joint_end: {end} must be greater than the last articulation start "
            f"{new.articulation_start[-1]} (every articulation holds at least one joint)"
        )
    if not new.articulation_start and end != 0:
        raise ValueError(f"articulation_joint_end: must be 0 when there are no articulations, got {end}")
    new.articulation_joint_end = end
    # Custom attributes are declared before tendons are read, but their values are checked last,
    # when every entity count is known.
    values_reader = top("custom_attributes", _read_custom_declarations, new)
    top("tendons", _read_tendons, new)
    top("transmission_tendons", _read_transmissions, new)
    top("couplings", _read_couplings, new)
    values_reader()
    top.done()
    _check_world_count(new)
    return new


MAX_EMPTY_TRAILING_WORLDS = 65536
"""Empty worlds a document may declare after the last world its entities (or its open world) use.
Nothing in the file holds an empty world, so ``world_count`` is otherwise an unchecked claim: a
document of one body with ``world_count`` 1e9 loaded, and ``finalize`` then tried to allocate
11 GiB of per-world arrays (issue 41). The bound keeps every builder the writer can save loadable in
practice and caps what such a claim costs at about 1 MB."""


def _check_world_count(b: ModelBuilder) -> None:
    """``world_count`` against the worlds the document's entities use (see ``MAX_EMPTY_TRAILING_WORLDS``)."""
    used = [b.current_world]
    for name in ("body_world", "shape_world", "joint_world", "tendon_world", "transmission_world", "coupling_world"):
        used.extend(getattr(b, name, ()) or ())
    highest = max(int(w) for w in used)
    if b.world_count > highest + 1 + MAX_EMPTY_TRAILING_WORLDS:
        raise ValueError(
            f"world_count: {b.world_count} worlds declared, but the document's entities use worlds up to "
            f"{highest}; at most {MAX_EMPTY_TRAILING_WORLDS} empty worlds may follow the last used one"
        )


def _read_bodies(v, p: str, b: ModelBuilder):
    for i, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{i}]")
        label = f("label", _str)
        world = f("world", _world, b.world_count)
        xform = f("xform", _xform)
        velocity = f("velocity", _floats, 6)
        mass = f("mass", _float, 0.0)
        com = f("com", _floats, 3)
        rows = f("inertia", _array, 3)
        inertia = np.array([_floats(r, f"{f.path}.inertia[{k}]", 3) for k, r in enumerate(rows)], dtype=np.float64)
        inertia = check_body_inertia(f"{f.path}.inertia", inertia)
        flags = f("flags", _flags, _BODY_FLAGS)
        lock = f("lock_inertia", _bool)
        f.done()
        b.body_q.append(wp.transform(*xform))
        b.body_qd.append(velocity)
        b.body_mass.append(mass)
        b.body_com.append(com)
        b.body_inertia.append(inertia)
        b.body_flags.append(flags)
        b.body_lock_inertia.append(lock)
        b.body_world.append(world)
        b.body_label.append(label)


def _read_body_color(v, p: str, b: ModelBuilder):
    if v is None:
        b.body_color = None
        return
    colors = _array(v, p, b.body_count)
    b.body_color = [_int(c, f"{p}[{i}]", 0, what="colour") for i, c in enumerate(colors)]


# Per shape type: which scale entries must be > 0 (the others >= 0).
_SCALE_POSITIVE = {
    int(T.SHAPE_SPHERE): (0,),
    int(T.SHAPE_BOX): (0, 1, 2),
    int(T.SHAPE_CAPSULE): (0,),
    int(T.SHAPE_CYLINDER): (0, 1),
    int(T.SHAPE_ELLIPSOID): (0, 1, 2),
    int(T.SHAPE_MESH): (0, 1, 2),
    int(T.SHAPE_PLANE): (),
}


def _mesh(v, p: str):
    """A mesh shape's {"vertices": [[x, y, z], ...], "faces": [[i, j, k], ...]} as float32/int32 arrays."""
    f = _Fields(v, p)
    verts = f("vertices", _array)
    faces = f("faces", _array)
    f.done()
    try:
        va = np.asarray(verts, dtype=np.float32)
        fa = np.asarray(faces, dtype=np.int64)
    except (TypeError, ValueError):
        raise ValueError(f"{p}: vertices must be [V, 3] numbers and faces [F, 3] integers") from None
    if va.ndim != 2 or va.shape[1] != 3 or len(va) < 4 or not np.isfinite(va).all():
        raise ValueError(f"{p}.vertices: must be [V, 3] finite numbers with V >= 4")
    if fa.ndim != 2 or fa.shape[1] != 3 or len(fa) < 4 or fa.min() < 0 or fa.max() >= len(va):
        raise ValueError(f"{p}.faces: must be [F, 3] indices into vertices with F >= 4")
    return va, fa.astype(np.int32)


def _read_shapes(v, p: str, b: ModelBuilder):
    for i, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{i}]")
        label = f("label", _str)
        stype = f("type", _enum, _SHAPE_TYPES)
        body = f("body", _int, -1, b.body_count - 1, "body index (-1 for the world)")
        world = f("world", _world, b.world_count)
        xform = f("xform", _xform)
        scale = f("scale", _floats, 3, lo=0.0)
        for k in _SCALE_POSITIVE.get(stype, ()):
            if scale[k] <= 0.0:
                raise ValueError(f"{f.path}.scale[{k}]: must be > 0 for a {_SHAPE_TYPES[stype]}, got {scale[k]!r}")
        mu = f("mu", _float, 0.0)
        restitution = f("restitution", _float, 0.0, 1.0)
        group = f("collision_group", _int)
        has_collision = f("has_collision", _bool)
        # Optional (documents written before these fields existed hold neither: both 0).
        margin = f("margin", _float, 0.0) if f.has("margin") else 0.0
        gap = f("gap", _float, 0.0) if f.has("gap") else 0.0
        mesh = None
        if stype == int(T.SHAPE_MESH):
            mesh = f("mesh", _mesh)
        friction_max = f("friction_max", _bool) if f.has("friction_max") else False
        f.done()
        if body >= 0:
            _check_entity_world(
                f.path,
                world,
                b.body_world[body],
                f"its body {body} is",
                "a shape lies in its body's world (only a shape on body -1 chooses its world)",
            )
        b.shape_type.append(stype)
        b.shape_body.append(body)
        b.shape_transform.append(xform)
        b.shape_scale.append(scale)
        b.shape_mu.append(mu)
        b.shape_restitution.append(restitution)
        b.shape_collision_group.append(group)
        b.shape_has_collision.append(has_collision)
        b.shape_margin.append(margin)
        b.shape_gap.append(gap)
        b.shape_world.append(world)
        b.shape_label.append(label)
        b.shape_mesh.append(mesh)
        b.shape_friction_max.append(friction_max)


def _read_pairs(v, p: str, count: int, what: str) -> set:
    out = set()
    for i, x in enumerate(_array(v, p)):
        pair = _array(x, f"{p}[{i}]", 2)
        a = _int(pair[0], f"{p}[{i}][0]", 0, count - 1, f"{what} index")
        c = _int(pair[1], f"{p}[{i}][1]", 0, count - 1, f"{what} index")
        if a >= c:
            raise ValueError(f"{p}[{i}]: a pair is two different {what} indices in increasing order, got [{a}, {c}]")
        out.add((a, c))
    return out


def _read_contact_pairs(v, p: str, count: int) -> dict:
    """Explicit contact pairs: [shape a, shape b (a < b), mu or null (the shapes' mean)]."""
    out = {}
    for i, x in enumerate(_array(v, p)):
        pair = _array(x, f"{p}[{i}]", 3)
        a = _int(pair[0], f"{p}[{i}][0]", 0, count - 1, "shape index")
        c = _int(pair[1], f"{p}[{i}][1]", 0, count - 1, "shape index")
        if a >= c:
            raise ValueError(f"{p}[{i}]: a pair is two different shape indices in increasing order, got [{a}, {c}]")
        out[(a, c)] = -1.0 if pair[2] is None else _float(pair[2], f"{p}[{i}][2]", 0.0)
    return out


def _read_joints(v, p: str, b: ModelBuilder):
    for i, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{i}]")
        label = f("label", _str)
        jtype = f("type", _enum, _JOINT_TYPES)
        parent = f("parent", _int, -1, b.body_count - 1, "body index (-1 for the world)")
        child = f("child", _int, 0, b.body_count - 1, "body index")
        if parent == child:
            raise ValueError(f"{f.path}.child: parent and child must be different bodies, both are {child}")
        if parent >= 0 and b.body_world[parent] != b.body_world[child]:
            raise ValueError(
                f"{f.path}: parent body {parent} (world {b.body_world[parent]}) and child body {child} "
                f"(world {b.body_world[child]}) are in different worlds"
            )
        world = f("world", _world, b.world_count)
        xp = f("parent_xform", _xform)
        xc = f("child_xform", _xform)
        enabled = f("enabled", _bool)
        dof_dim = tuple(T.JOINT_DOF_DIM[jtype])
        if jtype == T.JOINT_D6:
            dd = f("dof_dim", _array, 2)
            dof_dim = (
                _int(dd[0], f"{f.path}.dof_dim[0]", 0, 3, "linear axis count"),
                _int(dd[1], f"{f.path}.dof_dim[1]", 0, 3, "angular axis count"),
            )
        dofs = f("dofs", _array, sum(dof_dim) if jtype == T.JOINT_D6 else T.JOINT_DOF_COUNT[jtype])
        f.done()
        _check_entity_world(
            f.path, world, b.body_world[child], f"its child body {child} is", "a joint lies in its child body's world"
        )
        rows = []
        for k, dof in enumerate(dofs):
            d = _Fields(dof, f"{f.path}.dofs[{k}]")
            axis = d("axis", _nonzero3)
            lo = d("limit_lower", _float, allow_inf=True)
            hi = d("limit_upper", _float, allow_inf=True)
            if lo == math.inf or hi == -math.inf:
                raise ValueError(f"{d.path}: limit_lower cannot be +inf and limit_upper cannot be -inf")
            if lo > hi:
                raise ValueError(f"{d.path}: limit_lower ({lo}) must be <= limit_upper ({hi})")
            row = (
                axis,
                lo,
                hi,
                d("target_pos", _float),
                d("target_vel", _float),
                d("target_ke", _float, 0.0),
                d("target_kd", _float, 0.0),
                d("armature", _float, 0.0),
                # newton's per-dof extras (stored, not applied): optional, newton's defaults when absent.
                d("limit_ke", _float, 0.0) if d.has("limit_ke") else 1.0e4,
                d("limit_kd", _float, 0.0) if d.has("limit_kd") else 1.0e1,
                d("effort_limit", _float, 0.0, allow_inf=True) if d.has("effort_limit") else 1.0e6,
                d("velocity_limit", _float, 0.0, allow_inf=True) if d.has("velocity_limit") else 1.0e6,
                d("target_mode", _int, 0, 4, "JointTargetMode") if d.has("target_mode") else 0,
            )
            d.done()
            rows.append(row)
        if jtype == T.JOINT_D6:
            _check_d6_axes(f.path, dof_dim, [r[0] for r in rows])
        b.joint_type.append(jtype)
        b.joint_parent.append(parent)
        b.joint_child.append(child)
        b.joint_X_p.append(xp)
        b.joint_X_c.append(xc)
        b.joint_enabled.append(enabled)
        b.joint_world.append(world)
        b.joint_label.append(label)
        b.joint_dof_dim.append(dof_dim)
        for axis, lo, hi, tp, tv, ke, kd, arm, lke, lkd, eff, vel, mode in rows:
            b.joint_limit_ke.append(lke)
            b.joint_limit_kd.append(lkd)
            b.joint_effort_limit.append(eff)
            b.joint_velocity_limit.append(vel)
            b.joint_target_mode.append(mode)
            b.joint_axis.append(axis)
            b.joint_limit_lower.append(lo)
            b.joint_limit_upper.append(hi)
            b.joint_target_pos.append(tp)
            b.joint_target_vel.append(tv)
            b.joint_target_ke.append(ke)
            b.joint_target_kd.append(kd)
            b.joint_armature.append(arm)


def _check_d6_axes(path: str, dof_dim: tuple, axes: list):
    """A D6 joint's axes as ``add_joint_d6`` requires: each kind orthonormal (two angular axes are a
    universal joint)."""
    n_lin, n_ang = dof_dim
    for lo, hi, kind in ((0, n_lin, "linear"), (n_lin, n_lin + n_ang, "angular")):
        for i in range(lo, hi):
            for k in range(lo, i):
                ai = np.asarray(axes[i]) / np.linalg.norm(axes[i])
                ak = np.asarray(axes[k]) / np.linalg.norm(axes[k])
                if abs(float(ai @ ak)) > 1.0e-6:
                    raise ValueError(f"{path}.dofs[{i}].axis: the {kind} axes of a D6 joint must be orthogonal")


def _read_articulations(v, p: str, b: ModelBuilder):
    last = -1
    for i, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{i}]")
        label = f("label", _str)
        start = f("start", _int, 0, b.joint_count - 1, "joint index")
        f.done()
        if start <= last:
            raise ValueError(f"{f.path}.start: articulation starts must increase, got {start} after {last}")
        last = start
        b.articulation_start.append(start)
        b.articulation_label.append(label)


def _read_tendons(v, p: str, b: ModelBuilder):
    for t, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{t}]")
        label = f("label", _str)
        world = f("world", _world, b.world_count)
        guides = f("guides", _array)
        f.done()
        n = len(guides)
        if n < 2:
            raise ValueError(f"{f.path}.guides: a route needs at least two guides, got {n}")
        rows = []
        body_world = None
        for k, gx in enumerate(guides):
            g = _Fields(gx, f"{f.path}.guides[{k}]")
            body = g("body", _int, -1, b.body_count - 1, "body index (-1 for the world)")
            if body >= 0:
                w = b.body_world[body]
                if body_world is None:
                    body_world = w
                elif w != body_world:
                    raise ValueError(
                        f"{g.path}.body: body {body} is in world {w} but earlier guides are in world "
                        f"{body_world}; all guides of a tendon must be in one world"
                    )
            gtype = g("type", _enum, _GUIDE_TYPES)
            flags = g("flags", _flags, _GUIDE_FLAGS)
            offset = g("offset", _floats, 3)
            axis = g("axis", _nonzero3)
            radius = g("radius", _float, 0.0)
            orientation = g("orientation", _int)
            if orientation not in (1, -1):
                raise ValueError(f"{g.path}.orientation: must be 1 or -1, got {orientation}")
            mu = g("mu", _float, 0.0)
            if gtype == TendonGuideType.ROLLER and radius <= 0.0:
                raise ValueError(f"{g.path}.radius: a roller needs radius > 0, got {radius!r}")
            if gtype == TendonGuideType.ROLLER and (k == 0 or k == n - 1):
                raise ValueError(
                    f"{g.path}.type: the first and last guides must be point guides (anchor or pinhole), not a "
                    "roller (the builder's rule, add_tendon)"
                )
            span = None
            if k == 0:
                for key in ("compliance", "damping", "rest_length"):
                    if g.has(key):
                        raise ValueError(f"{g.path}.{key}: the first guide has no incoming span; omit this field")
            else:
                span = (g("compliance", _float, 0.0), g("damping", _float, 0.0), g("rest_length", _float))
            g.done()
            _check_guide_flags(g.path, flags, gtype, k, n, rows)
            rows.append((body, gtype, flags, offset, axis, radius, orientation, mu, span))
        if body_world is not None:
            _check_entity_world(
                f.path,
                world,
                body_world,
                "its guides' bodies are",
                "a routed tendon lies in its guides' world (only a route whose guides are all on body -1 "
                "chooses its world)",
            )
        b.tendon_start.append(b.tendon_guide_count)
        b.tendon_world.append(world)
        b.tendon_label.append(label)
        for body, gtype, flags, offset, axis, radius, orientation, mu, span in rows:
            b.tendon_guide_body.append(body)
            b.tendon_guide_type.append(gtype)
            b.tendon_guide_flags.append(flags)
            b.tendon_guide_offset.append(offset)
            b.tendon_guide_axis.append(axis)
            b.tendon_guide_radius.append(radius)
            b.tendon_guide_orientation.append(orientation)
            b.tendon_guide_mu.append(mu)
            if span is not None:
                b.tendon_segment_compliance.append(span[0])
                b.tendon_segment_damping.append(span[1])
                b.tendon_segment_rest_length.append(span[2])


def _check_guide_flags(p: str, flags: int, gtype: int, k: int, n: int, previous: list):
    """The builder's rules for guide flags (``add_tendon``)."""
    dynamic = getattr(TendonGuideFlags, "DYNAMIC", None)
    if dynamic is not None and flags & dynamic:
        if gtype != TendonGuideType.ROLLER:
            raise ValueError(f"{p}.flags: 'dynamic' is only allowed on a roller")
        if k == 0 or k == n - 1:
            raise ValueError(f"{p}.flags: 'dynamic' is not allowed on the first or last guide")
        if previous and previous[-1][2] & dynamic:
            raise ValueError(f"{p}.flags: dynamic rollers cannot be adjacent (guide {k - 1} is dynamic too)")
    winch = getattr(TendonGuideFlags, "WINCH", None)
    if winch is not None and flags & winch and (gtype != TendonGuideType.ANCHOR or 0 < k < n - 1):
        raise ValueError(f"{p}.flags: 'winch' is only allowed on an anchor that is the first or last guide")
    force = getattr(TendonGuideFlags, "WINCH_FORCE", None)
    if force is not None and flags & force:
        if not flags & winch:
            raise ValueError(f"{p}.flags: 'winch_force' needs 'winch' (it selects how the winch is commanded)")
        if any(row[2] & force for row in previous):
            raise ValueError(f"{p}.flags: a tendon has at most one force winch (guide 0 is one already)")


def _read_path(v, p: str, b: ModelBuilder) -> dict:
    """A spatial path; its structure is checked by the builder's own ``flatten_spatial_path``."""
    elements = []
    rows = []
    for e, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{e}]")
        code = f("type", _enum, _ELEMENT_TYPES)
        kind = _ELEMENT_TYPES[code]
        body = f("body", _int, -1, b.body_count - 1, "body index (-1 for the world)")
        offset = f("offset", _floats, 3)
        axis = f("axis", _floats, 3)
        radius, side_body, side_offset, has_side, divisor = 0.0, -1, (0.0, 0.0, 0.0), 0, None
        if kind in WRAP_KINDS:
            radius = f("radius", _float, 0.0, lo_open=True)
            side = f("side", lambda s, sp: s)
            if side is not None:
                sf = _Fields(side, f"{f.path}.side", "an object or null")
                side_body = sf("body", _int, -1, b.body_count - 1, "body index (-1 for the world)")
                side_offset = sf("offset", _floats, 3)
                sf.done()
                has_side = 1
            if kind == "cylinder" and math.sqrt(sum(c * c for c in axis)) < 1.0e-9:
                raise ValueError(f"{f.path}.axis: a cylinder axis must be nonzero")
            elements.append(
                TendonWrap(
                    kind=kind,
                    body=body,
                    offset=offset,
                    axis=axis,
                    radius=radius,
                    side=TendonSite(body=side_body, offset=side_offset) if has_side else None,
                )
            )
        elif kind == "pulley":
            divisor = f("divisor", _float, 0.0, lo_open=True)
            if body != -1:
                raise ValueError(f"{f.path}.body: a pulley belongs to no body; must be -1, got {body}")
            elements.append(TendonPulley(divisor=divisor))
        else:
            elements.append(TendonSite(body=body, offset=offset))
        f.done()
        rows.append((code, body, offset, axis, radius, side_body, side_offset, has_side))
    # Structure rules (site first and last, wraps between sites, branches), and resolved divisors.
    flat = flatten_spatial_path(elements, b.body_count, name=p)
    return {
        "type": [r[0] for r in rows],
        "body": [r[1] for r in rows],
        "offset": [r[2] for r in rows],
        "axis": [r[3] for r in rows],
        "radius": [r[4] for r in rows],
        "side_body": [r[5] for r in rows],
        "side_offset": [r[6] for r in rows],
        "has_side": [r[7] for r in rows],
        "divisor": list(flat["divisor"]),
    }


def _read_property(v, p: str):
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str) and v in _INF_STRINGS:
        return _INF_STRINGS[v]
    return _float(v, p)


def _read_properties(v, p: str) -> dict:
    """All transmission properties (none may be missing), checked by the builder's own rules."""
    f = _Fields(v, p)
    raw = {name: f(name, _read_property) for name in TRANSMISSION_PROPERTIES}
    f.done()
    return check_transmission_properties(p, raw)


def _read_transmissions(v, p: str, b: ModelBuilder):
    for i, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{i}]")
        label = f("label", _str)
        kind = f("kind", _enum, _TRANSMISSION_KINDS)
        world = f("world", _world, b.world_count)
        props = f("properties", _read_properties)
        if kind == TRANSMISSION_SPATIAL:
            if f.has("terms"):
                raise ValueError(f"{f.path}.terms: a spatial tendon has a path, not terms")
            path = f("path", _read_path, b)
            terms, axes = [], []
            bodies = path["body"] + [sb for sb, s in zip(path["side_body"], path["has_side"], strict=True) if s]
        else:
            if f.has("path"):
                raise ValueError(f"{f.path}.path: a fixed tendon has terms, not a path")
            path = {}
            terms, axes = f("terms", _read_terms, b)
            bodies = [x for j, _ in terms for x in (b.joint_parent[j], b.joint_child[j])]
        f.done()
        worlds = sorted({b.body_world[x] for x in bodies if x >= 0})
        if len(worlds) > 1:
            raise ValueError(f"{f.path}: its bodies belong to different worlds {worlds}; a tendon lies in one world")
        if worlds and worlds[0] >= 0:
            _check_entity_world(
                f.path,
                world,
                worlds[0],
                "its bodies are",
                "a transmission tendon lies in its bodies' world (only one whose bodies are all in world -1 or "
                "the world body chooses its world)",
            )
        b.transmission_type.append(kind)
        b.transmission_world.append(world)
        b.transmission_label.append(label)
        b.transmission_properties.append(props)
        b.transmission_path.append(path)
        b.transmission_terms.append(terms)
        b.transmission_term_axes.append(axes)


def _read_terms(v, p: str, b: ModelBuilder) -> tuple[list, list]:
    """A fixed tendon's (joint, coefficient) terms and each term's axis (``axis``, optional, 0: a
    D6 joint's later axis, by ``add_fixed_tendon``'s rules)."""
    terms = _array(v, p)
    if not terms:
        raise ValueError(f"{p}: a fixed tendon needs at least one joint term")
    out, axes = [], []
    for k, x in enumerate(terms):
        f = _Fields(x, f"{p}[{k}]")
        j = f("joint", _int, 0, b.joint_count - 1, "joint index")
        c = f("coefficient", _float)
        axis = f("axis", _int, 0, 5, "joint axis") if f.has("axis") else 0
        f.done()
        jt = b.joint_type[j]
        if jt == T.JOINT_D6:
            n_lin, n_ang = b.joint_dof_dim[j]
            if axis >= n_lin + n_ang or (axis >= n_lin and n_ang == 3):
                raise ValueError(
                    f"{f.path}.axis: {axis} is not a linear axis, a single angular axis or a universal joint's "
                    f"angle of D6 joint {j} ('{b.joint_label[j]}', {n_lin} linear and {n_ang} angular axes)"
                )
        elif jt in (T.JOINT_REVOLUTE, T.JOINT_PRISMATIC):
            if axis != 0:
                raise ValueError(f"{f.path}.axis: joint {j} ('{b.joint_label[j]}') has one coordinate (axis 0)")
        else:
            raise ValueError(
                f"{f.path}.joint: joint {j} ('{b.joint_label[j]}') is a {_JOINT_TYPES[jt]} joint; "
                "fixed tendons need revolute or prismatic joints, or a D6 joint's axis"
            )
        out.append((j, c))
        axes.append(axis)
    return out, axes


def _read_couplings(v, p: str, b: ModelBuilder):
    n = b.transmission_count
    for i, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{i}]")
        label = f("label", _str)
        first = f("first", _int, 0, n - 1, "transmission tendon index")
        second = f("second", lambda s, sp: -1 if s is None else _int(s, sp, 0, n - 1, "transmission tendon index"))
        if second == first:
            raise ValueError(f"{f.path}.second: first and second must be distinct tendons, both are {first}")
        if second >= 0 and b.transmission_world[first] != b.transmission_world[second]:
            raise ValueError(
                f"{f.path}: tendons {first} and {second} lie in different worlds "
                f"({b.transmission_world[first]} and {b.transmission_world[second]})"
            )
        coefficients = f("coefficients", _floats, 5)
        compliance = f("compliance", _float, 0.0)
        beta = f("position_correction", _float, 0.0, 1.0)
        enabled = f("enabled", _bool)
        world = f("world", _world, b.world_count)
        f.done()
        _check_entity_world(
            f.path,
            world,
            b.transmission_world[first],
            f"its first tendon {first} is",
            "a coupling lies in the world of the tendons it couples",
        )
        b.coupling_first.append(first)
        b.coupling_second.append(second)
        b.coupling_coefficients.append(coefficients)
        b.coupling_compliance.append(compliance)
        b.coupling_position_correction.append(beta)
        b.coupling_enabled.append(enabled)
        b.coupling_world.append(world)
        b.coupling_label.append(label)


def _attr_json_value(v, p: str, dtype):
    """A custom-attribute value from JSON: vec3 as a 3-array, int as an integer, float as a number
    (an integer stays an int: only a declaration's default can be one)."""
    if dtype == "vec3":
        return tuple(_attr_json_value(x, f"{p}[{i}]", float) for i, x in enumerate(_array(v, p, 3)))
    if dtype is int:
        return _int(v, p)
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return _float(v, p)


def _read_custom_declarations(v, p: str, b: ModelBuilder) -> Callable[[], None]:
    """Declare the attributes now; return a function that reads their values once all counts are known."""
    pending = []
    for i, x in enumerate(_array(v, p)):
        f = _Fields(x, f"{p}[{i}]")
        name = f("name", _str)
        if not name.isidentifier():
            raise ValueError(f"{f.path}.name: must be a Python identifier, got {name!r}")
        # namespace and assignment are optional: documents written before they existed have neither.
        namespace = f("namespace", lambda s, sp: None if s is None else _str(s, sp)) if f.has("namespace") else None
        if namespace is not None and not namespace.isidentifier():
            raise ValueError(f"{f.path}.namespace: must be a Python identifier or null, got {namespace!r}")
        assignment = (
            AttributeAssignment(f("assignment", _enum, _ASSIGNMENTS))
            if f.has("assignment")
            else AttributeAssignment.MODEL
        )
        key = name if namespace is None else f"{namespace}:{name}"
        if key in b.custom_attributes:
            raise ValueError(f"{f.path}.name: attribute {key!r} is declared twice")
        frequency = AttributeFrequency(f("frequency", _enum, _FREQUENCIES))
        dtype = _DTYPES[_str_choice(f, "dtype", tuple(_DTYPES))]
        default = f("default", _attr_json_value, dtype)
        references = f("references", lambda s, sp: None if s is None else _str(s, sp))
        if references is not None:
            if dtype is not int:
                raise ValueError(f"{f.path}.references: only int attributes may reference a domain")
            if references not in ModelBuilder._REFERENCE_DOMAINS:
                raise ValueError(
                    f"{f.path}.references: unknown domain {references!r}; expected one of "
                    f"{', '.join(ModelBuilder._REFERENCE_DOMAINS)}"
                )
        values = f("values", _array)
        f.done()
        attr = CustomAttribute(
            name=name,
            frequency=frequency,
            dtype=dtype,
            default=default,
            references=references,
            namespace=namespace,
            assignment=assignment,
            values={},
        )
        ModelBuilder._custom_value(f"{f.path}.default", attr, default)
        b.custom_attributes[key] = attr
        b.custom_attribute_values[key] = attr.values
        pending.append((f.path, attr, values))

    def read_values():
        for path, attr, values in pending:
            count = b._domain_count(AttributeFrequency(attr.frequency).domain)
            out = b.custom_attribute_values[attr.key]
            for k, item in enumerate(values):
                q = f"{path}.values[{k}]"
                pair = _array(item, q, 2)
                idx = _int(pair[0], f"{q}[0]", 0, count - 1, f"{AttributeFrequency(attr.frequency).domain} index")
                if idx in out:
                    raise ValueError(f"{q}[0]: index {idx} is given twice")
                value = _attr_json_value(pair[1], f"{q}[1]", attr.dtype)
                out[idx] = ModelBuilder._custom_value(f"{q}[1]", attr, value)

    return read_values
