"""Native persistence: save a ModelBuilder to one JSON document and load it back exactly.

The format (``{"format": "newton_tendon", "version": 1, ...}``) is documented field by field in
``docs/persistence.md``. It stores the builder's state, not a recipe of calls: loading assigns the
stored lists to a fresh :class:`ModelBuilder`, so mass accumulated from shape densities, poses moved
by ``replicate``/``add_world`` and every other derived value come back bit for bit, and the loaded
builder finalizes to a Model whose arrays equal the original's.

Floats are written with Python's shortest round-trip ``repr``, so they are exact. Standard JSON has
no infinities: fields that may be infinite (joint limits, transmission limits and actuation bounds)
hold the strings ``"inf"`` / ``"-inf"``. NaN is never valid.

Reading validates the whole document before a builder is built: a malformed file raises
``ValueError`` (bad value, missing or unknown field, index out of range, broken JSON, wrong
version) or ``TypeError`` (wrong JSON type), with the field path (``bodies[3].mass``) and the rule
in the message. ``save``/``dumps`` run the same validation on what they are about to write, so a
saved file always loads.

Example::

    from newton_tendon import io

    io.save(builder, "scene.json")
    copy = io.load("scene.json")
    io.convert("robot.xml", "robot.json")  # MJCF / USD / native in, native out
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from newton_tendon.kernels import types as T
from newton_tendon.kernels.spatial import SPATIAL_PULLEY, SPATIAL_SITE

from .._transmission_builder import (
    TRANSMISSION_FIXED,
    TRANSMISSION_PROPERTIES,
    TRANSMISSION_SPATIAL,
    check_transmission_properties,
)
from ..builder import ModelBuilder
from ..tendon import AttributeFrequency, CustomAttribute, TendonGuideFlags, TendonGuideType
from ..transmission import SPATIAL_PATH_KEYS, WRAP_KINDS, TendonPulley, TendonSite, TendonWrap, flatten_spatial_path

FORMAT_NAME = "newton_tendon"
"""Value of the document's ``format`` field."""

FORMAT_VERSION = 1
"""Version written by ``save``; ``load`` reads this version only."""

BUILDER_FIELDS = frozenset(
    {
        # Scene.
        "up_axis",
        "gravity",
        "current_world",
        "world_count",
        "rigid_contact_margin",
        # bodies[]
        "body_q",
        "body_qd",
        "body_mass",
        "body_com",
        "body_inertia",
        "body_flags",
        "body_lock_inertia",
        "body_world",
        "body_label",
        "body_color",
        # shapes[], shape_filter_pairs, body_filter_pairs
        "shape_type",
        "shape_body",
        "shape_transform",
        "shape_scale",
        "shape_mu",
        "shape_restitution",
        "shape_collision_group",
        "shape_has_collision",
        "shape_world",
        "shape_label",
        "shape_filter_pairs",
        "body_filter_pairs",
        # joints[] (with dofs[]), articulations[]
        "joint_type",
        "joint_parent",
        "joint_child",
        "joint_X_p",
        "joint_X_c",
        "joint_enabled",
        "joint_world",
        "joint_label",
        "joint_axis",
        "joint_limit_lower",
        "joint_limit_upper",
        "joint_target_ke",
        "joint_target_kd",
        "joint_armature",
        "joint_target_pos",
        "joint_target_vel",
        "articulation_start",
        "articulation_label",
        "articulation_joint_end",
        # tendons[] (routed cables with guides[])
        "tendon_start",
        "tendon_world",
        "tendon_label",
        "tendon_guide_body",
        "tendon_guide_type",
        "tendon_guide_flags",
        "tendon_guide_offset",
        "tendon_guide_axis",
        "tendon_guide_radius",
        "tendon_guide_orientation",
        "tendon_guide_mu",
        "tendon_segment_compliance",
        "tendon_segment_damping",
        "tendon_segment_rest_length",
        # custom_attributes[]
        "custom_attributes",
        "custom_attribute_values",
        # transmission_tendons[], couplings[]
        "transmission_type",
        "transmission_world",
        "transmission_label",
        "transmission_properties",
        "transmission_path",
        "transmission_terms",
        "coupling_first",
        "coupling_second",
        "coupling_coefficients",
        "coupling_compliance",
        "coupling_position_correction",
        "coupling_enabled",
        "coupling_world",
        "coupling_label",
    }
)
"""Every ``ModelBuilder`` instance attribute the format stores. A test compares it with
``vars(ModelBuilder())`` so that a new builder attribute cannot be silently dropped by ``save``."""

_TOP_FIELDS = (
    "format",
    "version",
    "up_axis",
    "gravity",
    "world_count",
    "current_world",
    "rigid_contact_margin",
    "bodies",
    "body_color",
    "shapes",
    "shape_filter_pairs",
    "body_filter_pairs",
    "joints",
    "articulations",
    "articulation_joint_end",
    "tendons",
    "transmission_tendons",
    "couplings",
    "custom_attributes",
)

_JOINT_TYPES = {
    int(T.JOINT_PRISMATIC): "prismatic",
    int(T.JOINT_REVOLUTE): "revolute",
    int(T.JOINT_BALL): "ball",
    int(T.JOINT_FIXED): "fixed",
    int(T.JOINT_FREE): "free",
}
_SHAPE_TYPES = {int(k): v for k, v in T.SHAPE_TYPE_NAMES.items()}
_GUIDE_TYPES = {int(g): g.name.lower() for g in TendonGuideType}
_GUIDE_FLAGS = {int(f): f.name.lower() for f in TendonGuideFlags}
_BODY_FLAGS = {int(T.BODY_KINEMATIC): "kinematic"}
_TRANSMISSION_KINDS = {TRANSMISSION_SPATIAL: "spatial", TRANSMISSION_FIXED: "fixed"}
_ELEMENT_TYPES = {v: k for k, v in WRAP_KINDS.items()}
_ELEMENT_TYPES[int(SPATIAL_SITE)] = "site"
_ELEMENT_TYPES[int(SPATIAL_PULLEY)] = "pulley"
_DTYPES = {"float": float, "int": int, "vec3": "vec3"}
_INF_STRINGS = {"inf": math.inf, "-inf": -math.inf}

# ----------------------------------------------------------------------------------------------
# Writing: builder -> JSON-ready dict. Values are written as found; validation happens after.


def _num(x) -> Any:
    """A float as JSON: a number, or "inf"/"-inf"/"nan" (rejected later by validation where not allowed)."""
    v = float(x)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _nums(xs) -> list:
    return [_num(x) for x in xs]


def _flag_names(value: int, names: dict[int, str]) -> list:
    """Names of the set bits of ``value``; a bit without a name is written as ``"bit<k>"`` (invalid on load)."""
    out = []
    v = int(value)
    for bit, name in names.items():
        if v & bit:
            out.append(name)
            v &= ~bit
    k = 0
    while v:
        if v & 1:
            out.append(f"bit{k}")
        v >>= 1
        k += 1
    return out


def _name_of(code, names: dict[int, str]):
    return names.get(int(code), int(code))


def to_dict(builder: ModelBuilder) -> dict:
    """The builder as a JSON-ready dict in the native format (not validated; see :func:`dumps`)."""
    if not isinstance(builder, ModelBuilder):
        raise TypeError(f"save: expected a ModelBuilder, got {type(builder).__name__}")
    b = builder
    doc: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "up_axis": b.up_axis,
        "gravity": _nums(b.gravity),
        "world_count": int(b.world_count),
        "current_world": int(b.current_world),
        "rigid_contact_margin": _num(b.rigid_contact_margin),
    }
    doc["bodies"] = [
        {
            "label": b.body_label[i],
            "world": int(b.body_world[i]),
            "xform": _nums(b.body_q[i]),
            "velocity": _nums(b.body_qd[i]),
            "mass": _num(b.body_mass[i]),
            "com": _nums(b.body_com[i]),
            "inertia": [_nums(row) for row in np.asarray(b.body_inertia[i], dtype=np.float64).reshape(3, 3)],
            "flags": _flag_names(b.body_flags[i], _BODY_FLAGS),
            "lock_inertia": bool(b.body_lock_inertia[i]),
        }
        for i in range(b.body_count)
    ]
    doc["body_color"] = None if b.body_color is None else [int(c) for c in b.body_color]
    doc["shapes"] = [
        {
            "label": b.shape_label[i],
            "type": _name_of(b.shape_type[i], _SHAPE_TYPES),
            "body": int(b.shape_body[i]),
            "world": int(b.shape_world[i]),
            "xform": _nums(b.shape_transform[i]),
            "scale": _nums(b.shape_scale[i]),
            "mu": _num(b.shape_mu[i]),
            "restitution": _num(b.shape_restitution[i]),
            "collision_group": int(b.shape_collision_group[i]),
            "has_collision": bool(b.shape_has_collision[i]),
        }
        for i in range(b.shape_count)
    ]
    doc["shape_filter_pairs"] = [[int(a), int(c)] for a, c in sorted(b.shape_filter_pairs)]
    doc["body_filter_pairs"] = [[int(a), int(c)] for a, c in sorted(b.body_filter_pairs)]
    joints = []
    d = 0
    for j in range(b.joint_count):
        jt = int(b.joint_type[j])
        ndof = T.JOINT_DOF_COUNT[jt] if 0 <= jt < len(T.JOINT_DOF_COUNT) else 0
        dofs = [
            {
                "axis": _nums(b.joint_axis[k]),
                "limit_lower": _num(b.joint_limit_lower[k]),
                "limit_upper": _num(b.joint_limit_upper[k]),
                "target_pos": _num(b.joint_target_pos[k]),
                "target_vel": _num(b.joint_target_vel[k]),
                "target_ke": _num(b.joint_target_ke[k]),
                "target_kd": _num(b.joint_target_kd[k]),
                "armature": _num(b.joint_armature[k]),
            }
            for k in range(d, min(d + ndof, b.joint_dof_count))
        ]
        d += ndof
        joints.append(
            {
                "label": b.joint_label[j],
                "type": _name_of(jt, _JOINT_TYPES),
                "parent": int(b.joint_parent[j]),
                "child": int(b.joint_child[j]),
                "world": int(b.joint_world[j]),
                "parent_xform": _nums(b.joint_X_p[j]),
                "child_xform": _nums(b.joint_X_c[j]),
                "enabled": bool(b.joint_enabled[j]),
                "dofs": dofs,
            }
        )
    doc["joints"] = joints
    doc["articulations"] = [
        {"label": b.articulation_label[a], "start": int(b.articulation_start[a])} for a in range(b.articulation_count)
    ]
    doc["articulation_joint_end"] = int(b.articulation_joint_end)
    tendons = []
    starts = [*b.tendon_start, b.tendon_guide_count]
    for t in range(b.tendon_count):
        guides = []
        for k, g in enumerate(range(starts[t], starts[t + 1])):
            guide = {
                "body": int(b.tendon_guide_body[g]),
                "type": _name_of(b.tendon_guide_type[g], _GUIDE_TYPES),
                "flags": _flag_names(b.tendon_guide_flags[g], _GUIDE_FLAGS),
                "offset": _nums(b.tendon_guide_offset[g]),
                "axis": _nums(b.tendon_guide_axis[g]),
                "radius": _num(b.tendon_guide_radius[g]),
                "orientation": int(b.tendon_guide_orientation[g]),
                "mu": _num(b.tendon_guide_mu[g]),
            }
            if k > 0:
                s = g - t - 1
                guide["compliance"] = _num(b.tendon_segment_compliance[s])
                guide["damping"] = _num(b.tendon_segment_damping[s])
                guide["rest_length"] = _num(b.tendon_segment_rest_length[s])
            guides.append(guide)
        tendons.append({"label": b.tendon_label[t], "world": int(b.tendon_world[t]), "guides": guides})
    doc["tendons"] = tendons
    transmissions = []
    for i in range(b.transmission_count):
        kind = _name_of(b.transmission_type[i], _TRANSMISSION_KINDS)
        props = {}
        for name, value in b.transmission_properties[i].items():
            props[name] = value if value is None or isinstance(value, bool) else _num(value)
        entry = {"label": b.transmission_label[i], "kind": kind, "world": int(b.transmission_world[i])}
        entry["properties"] = props
        if kind == "spatial":
            entry["path"] = _path_to_list(b.transmission_path[i], f"transmission_tendons[{i}].path")
        else:
            entry["terms"] = [{"joint": int(j), "coefficient": _num(c)} for j, c in b.transmission_terms[i]]
        transmissions.append(entry)
    doc["transmission_tendons"] = transmissions
    doc["couplings"] = [
        {
            "label": b.coupling_label[c],
            "first": int(b.coupling_first[c]),
            "second": None if b.coupling_second[c] < 0 else int(b.coupling_second[c]),
            "coefficients": _nums(b.coupling_coefficients[c]),
            "compliance": _num(b.coupling_compliance[c]),
            "position_correction": _num(b.coupling_position_correction[c]),
            "enabled": bool(b.coupling_enabled[c]),
            "world": int(b.coupling_world[c]),
        }
        for c in range(b.coupling_count)
    ]
    attrs = []
    for name, attr in b.custom_attributes.items():
        dtype = {float: "float", int: "int"}.get(attr.dtype, "vec3" if attr.dtype == "vec3" else repr(attr.dtype))
        attrs.append(
            {
                "name": name,
                "frequency": AttributeFrequency(attr.frequency).domain,
                "dtype": dtype,
                "default": _attr_value(dtype, attr.default),
                "references": attr.references,
                "values": [[int(k), _attr_value(dtype, v)] for k, v in b.custom_attribute_values[name].items()],
            }
        )
    doc["custom_attributes"] = attrs
    return doc


def _attr_value(dtype: str, value):
    """A custom-attribute default or value as JSON; integers stay integers (a float attribute's
    default may be the int 0), so declarations compare equal after loading."""
    if dtype == "vec3":
        return [_attr_value("float", c) for c in value]
    if isinstance(value, (bool, str, int)):
        return value  # a bool or str is rejected by validation
    if isinstance(value, np.integer):
        return int(value)
    return _num(value)


def _path_to_list(path: dict, where: str) -> list:
    """A flattened spatial path as element objects. The fields a site or pulley does not store must
    hold the values ``flatten_spatial_path`` gives them, so that loading restores them exactly."""
    if set(path) != set(SPATIAL_PATH_KEYS):
        raise ValueError(f"save: {where} has keys {sorted(path)}; the format stores exactly {list(SPATIAL_PATH_KEYS)}")
    out = []
    divisor = 1.0
    for e in range(len(path["type"])):
        code = int(path["type"][e])
        kind = _name_of(code, _ELEMENT_TYPES)
        if kind == "pulley":
            divisor = path["divisor"][e]
        unstored = kind not in WRAP_KINDS and (
            path["radius"][e] != 0.0
            or path["has_side"][e]
            or path["side_body"][e] != -1
            or tuple(path["side_offset"][e]) != (0.0, 0.0, 0.0)
        )
        if unstored or path["divisor"][e] != divisor:
            raise ValueError(
                f"save: {where}[{e}] ({kind}) holds a radius, side site or branch divisor that its element "
                "type does not have; the format cannot store it"
            )
        el = {
            "type": kind,
            "body": int(path["body"][e]),
            "offset": _nums(path["offset"][e]),
            "axis": _nums(path["axis"][e]),
        }
        if kind in WRAP_KINDS:
            el["radius"] = _num(path["radius"][e])
            el["side"] = (
                {"body": int(path["side_body"][e]), "offset": _nums(path["side_offset"][e])}
                if path["has_side"][e]
                else None
            )
        elif kind == "pulley":
            el["divisor"] = _num(path["divisor"][e])
        out.append(el)
    return out


# ----------------------------------------------------------------------------------------------
# Text form: one entity per line where it fits, so files diff well.

_LINE = 120


def _is_leaf(value) -> bool:
    """A scalar, or an array of leaves (vectors, matrices)."""
    if isinstance(value, list):
        return all(_is_leaf(v) for v in value)
    return not isinstance(value, dict)


def _emit(value, indent: int, out: list[str]) -> None:
    """Append ``value`` as JSON: inline when it fits in the line or is a flat entity (an object
    whose fields are all leaves), else one field or entry per line."""
    compact = json.dumps(value, allow_nan=False)
    flat_entity = isinstance(value, dict) and all(_is_leaf(v) for v in value.values())
    if not isinstance(value, (dict, list)) or not value or flat_entity or indent + len(compact) <= _LINE:
        out.append(compact)
        return
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        out.append("{\n")
        for i, (k, v) in enumerate(value.items()):
            out.append(f"{pad}{json.dumps(k)}: ")
            _emit(v, indent + 1, out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append(" " * indent + "}")
    else:
        out.append("[\n")
        for i, v in enumerate(value):
            out.append(pad)
            _emit(v, indent + 1, out)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append(" " * indent + "]")


def dumps(builder: ModelBuilder) -> str:
    """The builder as native-format JSON text. Raises ``ValueError`` naming the field if the builder
    holds a value the format rejects (for example a NaN poked into a list), so saved text always loads."""
    doc = to_dict(builder)
    try:
        from_dict(doc)
    except (TypeError, ValueError) as e:
        raise type(e)(f"save: the builder cannot be saved: {e}") from None
    out: list[str] = []
    _emit(doc, 0, out)
    out.append("\n")
    return "".join(out)


def _check_path_arg(where: str, path) -> str:
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{where}: path must be a str or os.PathLike, got {type(path).__name__}")
    return os.fspath(path)


def _write_atomic(path: str, text: str) -> None:
    """Write through a temporary file in the same folder, so a failure never leaves a partial file."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".nt_", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save(builder: ModelBuilder, path) -> None:
    """Write ``builder`` to ``path`` as native-format JSON (UTF-8). Nothing is written if it fails."""
    path = _check_path_arg("save", path)
    text = dumps(builder)
    _write_atomic(path, text)


# ----------------------------------------------------------------------------------------------
# Reading and validation: JSON -> checked values -> a fresh builder.


def _jtype(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Fields:
    """The fields of one JSON object; each is read once, and unknown or missing ones raise."""

    def __init__(self, value, path: str, what: str = "an object"):
        if not isinstance(value, dict):
            raise TypeError(f"{path or 'document'}: must be {what}, got {_jtype(value)}")
        self.value = value
        self.path = path
        self.seen: set[str] = set()

    def __call__(self, key: str, read: Callable, *args, **kwargs):
        p = _join(self.path, key)
        if key not in self.value:
            raise ValueError(f"{p}: missing field")
        self.seen.add(key)
        return read(self.value[key], p, *args, **kwargs)

    def has(self, key: str) -> bool:
        return key in self.value

    def done(self):
        extra = [k for k in self.value if k not in self.seen]
        if extra:
            raise ValueError(f"{_join(self.path, extra[0])}: unknown field")


def _str(v, p: str) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{p}: must be a string, got {_jtype(v)}")
    return v


def _bool(v, p: str) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"{p}: must be true or false, got {_jtype(v)}")
    return v


_INT32 = (-(2**31), 2**31 - 1)


def _int(v, p: str, lo: int | None = None, hi: int | None = None, what: str = "") -> int:
    """An integer; every integer of the format is an int32 on the device, so that range always applies."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{p}: must be an integer, got {_jtype(v)}")
    if not _INT32[0] <= v <= _INT32[1]:
        raise ValueError(f"{p}: {v} does not fit in a 32-bit signed integer")
    if lo is not None and hi is not None and hi < lo:
        raise ValueError(f"{p}: {v} is out of range: there is no {what or 'entry'} to refer to")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"{p}: {v} is out of range; expected {what + ' ' if what else ''}{rng}")
    return v


def _float(v, p: str, lo: float | None = None, hi: float | None = None, *, lo_open=False, allow_inf=False) -> float:
    if isinstance(v, str) and v in ("nan", "NaN"):
        raise ValueError(f"{p}: NaN is not allowed")
    if isinstance(v, str) and v in _INF_STRINGS:
        if not allow_inf:
            raise ValueError(f"{p}: must be finite, got {v!r}")
        x = _INF_STRINGS[v]
    elif isinstance(v, bool) or not isinstance(v, (int, float)):
        extra = ' (infinities are written "inf" / "-inf")' if allow_inf else ""
        raise TypeError(f"{p}: must be a number{extra}, got {_jtype(v)}")
    else:
        x = float(v)
        if math.isnan(x):
            raise ValueError(f"{p}: NaN is not allowed")
        if math.isinf(x) and not allow_inf:
            raise ValueError(f"{p}: must be finite, got {x}")
    if lo is not None and (x < lo or (lo_open and x == lo)):
        raise ValueError(f"{p}: must be {'>' if lo_open else '>='} {lo}, got {x!r}")
    if hi is not None and x > hi:
        raise ValueError(f"{p}: must be <= {hi}, got {x!r}")
    return x


def _array(v, p: str, n: int | None = None) -> list:
    if not isinstance(v, list):
        raise TypeError(f"{p}: must be an array, got {_jtype(v)}")
    if n is not None and len(v) != n:
        raise ValueError(f"{p}: must have {n} entries, got {len(v)}")
    return v


def _floats(v, p: str, n: int, **kw) -> tuple:
    return tuple(_float(x, f"{p}[{i}]", **kw) for i, x in enumerate(_array(v, p, n)))


def _xform(v, p: str) -> tuple:
    xf = _floats(v, p, 7)
    if math.sqrt(sum(c * c for c in xf[3:])) < 1.0e-6:
        raise ValueError(f"{p}: the quaternion (entries 3..6) must be nonzero")
    return xf


def _nonzero3(v, p: str) -> tuple:
    a = _floats(v, p, 3)
    if math.sqrt(sum(c * c for c in a)) < 1.0e-12:
        raise ValueError(f"{p}: must be a nonzero vector")
    return a


def _enum(v, p: str, names: dict[int, str]) -> int:
    s = _str(v, p)
    for code, name in names.items():
        if name == s:
            return code
    raise ValueError(f"{p}: unknown value {s!r}; expected one of {', '.join(repr(n) for n in names.values())}")


def _flags(v, p: str, names: dict[int, str]) -> int:
    out = 0
    for i, x in enumerate(_array(v, p)):
        bit = _enum(x, f"{p}[{i}]", names)
        if out & bit:
            raise ValueError(f"{p}[{i}]: flag {x!r} is listed twice")
        out |= bit
    return out


def _world(v, p: str, world_count: int) -> int:
    """-1 or an existing world (a builder without worlds finalizes as world 0, so 0 is allowed there)."""
    return _int(v, p, -1, max(world_count, 1) - 1, "world (-1 or a world index)")


def _check_entity_world(path: str, world: int, expected: int, owner: str, rule: str):
    """The builder derives an entity's world from the bodies it is attached to; a stored ``world``
    must equal what the builder would have assigned (``owner`` names those bodies, ``rule`` the reason)."""
    if world != expected:
        raise ValueError(f"{path}.world: {world}, but {owner} in world {expected}; {rule}")


def _parse_json(text: str):
    def no_constants(name):
        raise ValueError(
            f'{name} is not valid JSON (write infinities as the strings "inf" / "-inf"; NaN is never allowed)'
        )

    def no_duplicates(pairs):
        obj = {}
        for k, v in pairs:
            if k in obj:
                raise ValueError(f"duplicate key {k!r} in one object")
            obj[k] = v
        return obj

    try:
        return json.loads(text, parse_constant=no_constants, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as e:
        raise ValueError(f"document: broken JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except ValueError as e:
        raise ValueError(f"document: {e}") from None
    except RecursionError:
        raise ValueError("document: broken JSON: nested too deeply") from None


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
    return new


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
        scale = max(1.0, float(np.abs(inertia).max()))
        if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-9 * scale):
            raise ValueError(f"{f.path}.inertia: must be symmetric")
        if np.linalg.eigvalsh(inertia).min() < -1e-9 * scale:
            raise ValueError(f"{f.path}.inertia: must be positive semi-definite")
        flags = f("flags", _flags, _BODY_FLAGS)
        lock = f("lock_inertia", _bool)
        f.done()
        b.body_q.append(xform)
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
    int(T.SHAPE_PLANE): (),
}


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
        b.shape_world.append(world)
        b.shape_label.append(label)


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
        dofs = f("dofs", _array, T.JOINT_DOF_COUNT[jtype])
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
            )
            if jtype == T.JOINT_PRISMATIC and row[7] != 0.0:
                raise ValueError(f"{d.path}.armature: must be 0 on a prismatic joint, got {row[7]!r}")
            d.done()
            rows.append(row)
        b.joint_type.append(jtype)
        b.joint_parent.append(parent)
        b.joint_child.append(child)
        b.joint_X_p.append(xp)
        b.joint_X_c.append(xc)
        b.joint_enabled.append(enabled)
        b.joint_world.append(world)
        b.joint_label.append(label)
        for axis, lo, hi, tp, tv, ke, kd, arm in rows:
            b.joint_axis.append(axis)
            b.joint_limit_lower.append(lo)
            b.joint_limit_upper.append(hi)
            b.joint_target_pos.append(tp)
            b.joint_target_vel.append(tv)
            b.joint_target_ke.append(ke)
            b.joint_target_kd.append(kd)
            b.joint_armature.append(arm)


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
            terms = []
            bodies = path["body"] + [sb for sb, s in zip(path["side_body"], path["has_side"], strict=True) if s]
        else:
            if f.has("path"):
                raise ValueError(f"{f.path}.path: a fixed tendon has terms, not a path")
            path = {}
            terms = f("terms", _read_terms, b)
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


def _read_terms(v, p: str, b: ModelBuilder) -> list:
    terms = _array(v, p)
    if not terms:
        raise ValueError(f"{p}: a fixed tendon needs at least one joint term")
    out = []
    for k, x in enumerate(terms):
        f = _Fields(x, f"{p}[{k}]")
        j = f("joint", _int, 0, b.joint_count - 1, "joint index")
        c = f("coefficient", _float)
        f.done()
        if b.joint_type[j] not in (T.JOINT_REVOLUTE, T.JOINT_PRISMATIC):
            raise ValueError(
                f"{f.path}.joint: joint {j} ('{b.joint_label[j]}') is a {_JOINT_TYPES[b.joint_type[j]]} joint; "
                "fixed tendons need revolute or prismatic joints"
            )
        out.append((j, c))
    return out


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


_FREQUENCIES = {int(f): f.domain for f in AttributeFrequency}


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
        if name in b.custom_attributes:
            raise ValueError(f"{f.path}.name: attribute {name!r} is declared twice")
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
        attr = CustomAttribute(name=name, frequency=frequency, dtype=dtype, default=default, references=references)
        ModelBuilder._custom_value(f"{f.path}.default", attr, default)
        b.custom_attributes[name] = attr
        b.custom_attribute_values[name] = {}
        pending.append((f.path, attr, values))

    def read_values():
        for path, attr, values in pending:
            count = b._domain_count(AttributeFrequency(attr.frequency).domain)
            out = b.custom_attribute_values[attr.name]
            for k, item in enumerate(values):
                q = f"{path}.values[{k}]"
                pair = _array(item, q, 2)
                idx = _int(pair[0], f"{q}[0]", 0, count - 1, f"{AttributeFrequency(attr.frequency).domain} index")
                if idx in out:
                    raise ValueError(f"{q}[0]: index {idx} is given twice")
                value = _attr_json_value(pair[1], f"{q}[1]", attr.dtype)
                out[idx] = ModelBuilder._custom_value(f"{q}[1]", attr, value)

    return read_values


def _str_choice(f: _Fields, key: str, choices: tuple) -> str:
    s = f(key, _str)
    if s not in choices:
        raise ValueError(f"{_join(f.path, key)}: unknown value {s!r}; expected one of {', '.join(choices)}")
    return s


# ----------------------------------------------------------------------------------------------
# Conversion

_MJCF_SUFFIXES = (".xml", ".mjcf")
_USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")
_NATIVE_SUFFIXES = (".json",)


def _import_scene(path: str) -> ModelBuilder:
    """A fresh builder holding the scene in ``path`` (MJCF, USD or native, by extension)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _NATIVE_SUFFIXES:
        return load(path)
    if suffix not in _MJCF_SUFFIXES + _USD_SUFFIXES:
        known = ", ".join(_MJCF_SUFFIXES + _USD_SUFFIXES + _NATIVE_SUFFIXES)
        raise ValueError(f"convert: cannot tell the format of input {path!r} from its extension; expected {known}")
    if not os.path.exists(path):
        raise FileNotFoundError(f"convert: input file {path!r} does not exist")
    builder = ModelBuilder()
    module = "mjcf" if suffix in _MJCF_SUFFIXES else "usd"
    try:
        if module == "mjcf":
            builder.add_mjcf(path)
        else:
            builder.add_usd(path)
    except ModuleNotFoundError as e:
        if e.name in (f"newton_tendon.{module}", "pxr"):
            raise RuntimeError(
                f"convert: reading {path!r} needs the {module.upper()} importer (newton_tendon.{module} / "
                f"{'usd-core' if module == 'usd' else 'the standard library XML parser'}), which is not available: {e}"
            ) from None
        raise
    return builder


def convert(in_path, out_path) -> ModelBuilder:
    """Read a scene (MJCF ``.xml``/``.mjcf``, USD ``.usd``/``.usda``/``.usdc``/``.usdz`` or native
    ``.json``) and write it to ``out_path`` in the native format (``.json``). Returns the builder.

    The output is written only once the input was read and validated completely; on any error no
    output file is created or changed."""
    in_path = _check_path_arg("convert", in_path)
    out_path = _check_path_arg("convert", out_path)
    out_suffix = os.path.splitext(out_path)[1].lower()
    if out_suffix not in _NATIVE_SUFFIXES:
        raise ValueError(
            f"convert: output {out_path!r} must be a native .json file; other output formats are not supported"
        )
    builder = _import_scene(in_path)
    save(builder, out_path)
    return builder


__all__ = [
    "BUILDER_FIELDS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "convert",
    "dumps",
    "from_dict",
    "load",
    "loads",
    "save",
    "to_dict",
]
