"""Writing: a builder as a JSON-ready dict (``to_dict``), as text with one entity per line where it
fits (``dumps``), and to a file (``save``). Values are written as found; ``dumps`` validates the
document with the reader before returning it, so saved text always loads."""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any

import numpy as np

from newton_tendon.axis import Axis
from newton_tendon.builder import ModelBuilder
from newton_tendon.kernels import types as T
from newton_tendon.tendon import AttributeAssignment, AttributeFrequency
from newton_tendon.transmission import SPATIAL_PATH_KEYS, WRAP_KINDS

from .read import from_dict
from .schema import (
    _BODY_FLAGS,
    _ELEMENT_TYPES,
    _GUIDE_FLAGS,
    _GUIDE_TYPES,
    _JOINT_TYPES,
    _SHAPE_TYPES,
    _TRANSMISSION_KINDS,
    FORMAT_NAME,
    FORMAT_VERSION,
)
from .validate import _check_path_arg

# ----------------------------------------------------------------------------------------------
# Writing: builder -> JSON-ready dict. Values are written as found; validation happens after.


def _mesh_fields(mesh) -> dict:
    """A mesh shape's "mesh": its vertices [m] (float32 values, written exactly) and triangles."""
    if mesh is None:
        return {}
    verts, faces = mesh
    return {"mesh": {"vertices": [_nums(v) for v in np.asarray(verts, dtype=np.float64)],
                     "faces": [[int(k) for k in f] for f in faces]}}  # fmt: skip


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
        "up_axis": Axis.from_any(b.up_axis, "save: ModelBuilder.up_axis").name,
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
            "margin": _num(b.shape_margin[i]),
            "gap": _num(b.shape_gap[i]),
            **_mesh_fields(b.shape_mesh[i]),
            **({"friction_max": True} if b.shape_friction_max[i] else {}),
        }
        for i in range(b.shape_count)
    ]
    doc["shape_filter_pairs"] = [[int(a), int(c)] for a, c in sorted(b.shape_filter_pairs)]
    if b.shape_contact_pair_mu:
        doc["shape_contact_pairs"] = [
            [int(a), int(c), None if mu < 0.0 else _num(mu)] for (a, c), mu in sorted(b.shape_contact_pair_mu.items())
        ]
    doc["body_filter_pairs"] = [[int(a), int(c)] for a, c in sorted(b.body_filter_pairs)]
    joints = []
    d = 0
    for j in range(b.joint_count):
        jt = int(b.joint_type[j])
        ndof = b._joint_dof_count(j) if 0 <= jt < len(T.JOINT_DOF_COUNT) else 0
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
                "limit_ke": _num(b.joint_limit_ke[k]),
                "limit_kd": _num(b.joint_limit_kd[k]),
                "effort_limit": _num(b.joint_effort_limit[k]),
                "velocity_limit": _num(b.joint_velocity_limit[k]),
                "target_mode": int(b.joint_target_mode[k]),
            }
            for k in range(d, min(d + ndof, b.joint_dof_count))
        ]
        d += ndof
        extra = {"dof_dim": [int(n) for n in b.joint_dof_dim[j]]} if jt == T.JOINT_D6 else {}
        joints.append(
            {
                **extra,
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
            entry["terms"] = []
            for (j, c), k in zip(b.transmission_terms[i], b.transmission_term_axes[i], strict=True):
                term = {"joint": int(j), "coefficient": _num(c)}
                if k:
                    term["axis"] = int(k)  # a D6 joint's later axis (absent: axis 0)
                entry["terms"].append(term)
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
                "name": attr.name,
                "namespace": attr.namespace,
                "assignment": AttributeAssignment(attr.assignment).name.lower(),
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
