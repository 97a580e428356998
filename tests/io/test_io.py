"""Native persistence (``newton_tendon.io``): exact save -> load round trips and strict validation.

A round trip must give back a builder whose every attribute equals the original bit for bit and a
finalized Model with byte-identical arrays; a malformed document must raise before any builder is
returned, naming the field path and the rule.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import math
import os
import struct

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

import newton_tendon as nt
from newton_tendon import io
from newton_tendon.tendon import AttributeFrequency, CustomAttribute, TendonGuide, TendonGuideType
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

HAS_WINCH = "winch" in TendonGuide.__dataclass_fields__
Y = (0.0, 1.0, 0.0)


# ----------------------------------------------------------------------------------------------
# Scenes


def _quat(axis, angle):
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    s = math.sin(0.5 * angle)
    return (*(a * s), math.cos(0.5 * angle))


def _declare_attributes(b: nt.ModelBuilder):
    """One custom attribute per frequency, covering every dtype and a reference."""
    F = AttributeFrequency
    b.add_custom_attribute(CustomAttribute(name="body_tag", frequency=F.BODY, dtype=int, default=-1))
    b.add_custom_attribute(CustomAttribute(name="shape_colour", frequency=F.SHAPE, dtype="vec3", default=(1.0, 0, 0)))
    b.add_custom_attribute(CustomAttribute(name="joint_gain", frequency=F.JOINT, dtype=float, default=0.25))
    b.add_custom_attribute(CustomAttribute(name="tendon_weight", frequency=F.TENDON, dtype=float))
    b.add_custom_attribute(
        CustomAttribute(name="guide_partner", frequency=F.TENDON_GUIDE, dtype=int, references="body")
    )
    b.add_custom_attribute(
        CustomAttribute(name="span_stiff", frequency=F.TENDON_SEGMENT, dtype="vec3", default=(0, 0, 0))
    )


def template() -> nt.ModelBuilder:
    """One world: every joint type (limits, drives, armature), every shape kind, a routed cable with
    every guide type and a dynamic roller, spatial tendons (sphere and cylinder wraps, side sites,
    a pulley, world sites), a fixed tendon, couplings with and without a second tendon, custom
    attributes of every frequency and dtype."""
    b = nt.ModelBuilder()
    _declare_attributes(b)
    base = b.add_link(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=2.0, inertia=np.eye(3) * 0.02, label="base")
    arm = b.add_link(xform=(0.3, 0.0, 1.0, *_quat((1, 2, 3), 0.3)), com=(0.01, 0.0, 0.02), label="arm")
    slider = b.add_link(xform=(0.6, 0.1, 1.0, 0.0, 0.0, 0.0, 1.0), mass=0.5, inertia=np.eye(3) * 1e-3)
    ball = b.add_link(xform=(0.9, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=0.3, inertia=np.diag([1e-3, 2e-3, 3e-3]))
    welded = b.add_link(xform=(1.2, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=0.1, lock_inertia=True)
    free = b.add_body(xform=(0.0, 1.0, 1.5, *_quat((0, 1, 0), 1.0)), velocity=(0.1, -0.2, 0.3, 1.0, 0.0, -1.0))
    kin = b.add_body(xform=(0.0, -1.0, 1.5, 0.0, 0.0, 0.0, 1.0), mass=1.0, is_kinematic=True, label="kinematic")
    roller_body = b.add_body(xform=(0.5, 1.0, 1.2, 0.0, 0.0, 0.0, 1.0), mass=0.2, inertia=np.eye(3) * 1e-4)
    # Shapes of every kind; densities add mass to their bodies (the format must not add it twice).
    b.add_shape_sphere(arm, (0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), radius=0.05, density=1234.5)
    b.add_shape_box(free, None, 0.1, 0.2, 0.3, mass=0.7, mu=0.9, restitution=0.3, label="crate")
    b.add_shape_capsule(slider, (0.0, 0.0, 0.0, *_quat((1, 0, 0), 0.5)), 0.03, 0.1, collision_group=2)
    b.add_shape_cylinder(roller_body, None, 0.04, 0.02, has_collision=False)
    b.add_shape_plane(welded, None, 0.3, 0.4, mu=0.2)
    s_ball = b.add_shape_sphere(ball, None, 0.04)
    s_weld = b.add_shape_sphere(welded, None, 0.04, density=0.0)
    b.add_shape_collision_filter_pair(s_weld, s_ball)
    # Every joint type with limits and drives.
    j_rev = b.add_joint_revolute(
        base,
        arm,
        (0.15, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        (-0.15, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        axis=(0.0, 1.0, 1.0),
        limit_lower=-1.2,
        limit_upper=0.7,
        target_pos=0.1,
        target_vel=-0.2,
        target_ke=50.0,
        target_kd=0.5,
        armature=0.01,
        label="elbow",
    )
    j_pri = b.add_joint_prismatic(
        arm, slider, None, None, axis=(1.0, 0.0, 0.0), limit_lower=-0.1, target_ke=10.0, collision_filter_parent=False
    )
    b.add_joint_ball(slider, ball, (0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), None)
    b.add_joint_fixed(ball, welded, None, (0.0, 0.0, 0.1, *_quat((0, 0, 1), 0.2)), enabled=False)
    b.add_joint_revolute(-1, base, (0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), None, axis=(1.0, 0.0, 0.0))
    b.add_articulation([0, 1, 2, 3], label="limb")
    b.add_articulation(label="root")
    b.add_joint_free(free)
    b.add_articulation()
    # A routed cable with every guide type, a dynamic roller and span properties.
    route = [
        TendonGuide(body=-1, offset=(0.0, 1.0, 2.0), custom_attributes={"guide_partner": kin}),
        TendonGuide(
            body=free, guide_type=TendonGuideType.PINHOLE, mu=0.3, compliance=1e-4, damping=0.5, rest_length=0.25
        ),
        TendonGuide(
            body=roller_body,
            guide_type=TendonGuideType.ROLLER,
            radius=0.04,
            orientation=-1,
            mu=0.1,
            axis=(0.0, 2.0, 0.0),
            dynamic=True,
            segment_custom_attributes={"span_stiff": (1.0, 2.0, 3.0)},
        ),
        TendonGuide(body=-1, guide_type=TendonGuideType.ROLLER, radius=0.05, offset=(0.5, 1.0, 0.5), axis=Y),
        TendonGuide(body=kin, offset=(0.0, 0.0, -0.1), compliance=1e-6, winch=True)
        if HAS_WINCH
        else TendonGuide(body=kin, offset=(0.0, 0.0, -0.1), compliance=1e-6),
    ]
    b.add_tendon(route, label="cable", custom_attributes={"tendon_weight": 0.125})
    b.add_tendon([TendonGuide(body=base), TendonGuide(body=arm, rest_length=0.3)])
    # Spatial tendons: world and body sites, sphere with side site, cylinder, pulley branch.
    spatial = b.add_spatial_tendon(
        [
            TendonSite(body=-1, offset=(0.0, 0.0, 2.0)),
            TendonSite(body=base, offset=(0.0, 0.0, 0.05)),
            TendonWrap(kind="sphere", body=arm, radius=0.03, side=TendonSite(body=arm, offset=(0.0, 0.1, 0.0))),
            TendonSite(body=slider),
            TendonWrap(kind="cylinder", body=-1, offset=(0.7, 0.0, 1.3), axis=(0.0, 3.0, 0.0), radius=0.02),
            TendonSite(body=ball),
            TendonPulley(divisor=2.0),
            TendonSite(body=ball),
            TendonSite(body=-1, offset=(1.0, 0.0, 2.0)),
        ],
        label="spatial",
        stiffness=100.0,
        damping=1.5,
        spring_lower=0.1,
        lower_limit=0.05,
        upper_limit=math.inf,
        actuation_lower=-20.0,
        friction_loss=0.2,
        armature=0.01,
        width=0.01,
    )
    fixed = b.add_fixed_tendon(
        [j_rev, j_pri, j_rev], [0.02, -1.0, 0.5], label="fixed", target_length=0.0, position_gain=3.0, enabled=False
    )
    second = b.add_spatial_tendon([TendonPulley(divisor=3.0), TendonSite(body=free), TendonSite(body=kin)])
    b.add_tendon_coupling(spatial, fixed, [0.0, 1.0, -0.5, 0.25], 1e-5, position_correction=0.3, label="gear")
    b.add_tendon_coupling(second, None, [0.01], enabled=False)
    # Custom attribute values of every frequency.
    b.set_custom_attribute("body_tag", arm, 7)
    b.set_custom_attribute("shape_colour", 1, (0.1, 0.2, 0.3))
    b.set_custom_attribute("joint_gain", j_pri, 1.0 / 3.0)
    return b


def rich_scene() -> nt.ModelBuilder:
    """Shared ground, three replicated worlds on a grid and one rotated world, coloured for VBD."""
    tpl = template()
    b = nt.ModelBuilder(gravity=(0.1, -0.2, -9.81))
    _declare_attributes(b)
    b.rigid_contact_margin = 0.02
    b.add_ground_plane(-0.01, mu=0.8)
    b.replicate(tpl, 3, spacing=(2.0, 1.5, 0.0))
    b.add_world(tpl, (0.1, 0.2, 0.3, *_quat((1, 1, 0), 0.7)))
    b.color()
    return b


# ----------------------------------------------------------------------------------------------
# Exact comparison helpers


def _bits(x) -> bytes:
    return struct.pack("<d", float(x))


def assert_same(a, b, path="builder"):
    """Equal values, float bits included; list vs tuple and int vs float are told apart."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), path
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), path
    elif isinstance(a, bool) or isinstance(b, bool):
        assert type(a) is type(b) and a == b, path
    elif isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating)):
        assert isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)), f"{path}: {a!r} {b!r}"
        assert _bits(a) == _bits(b), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, (int, np.integer)) or isinstance(b, (int, np.integer)):
        assert isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)) and a == b, path
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {type(a)} {type(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, set):
        assert a == b, path
    elif dataclasses.is_dataclass(a):
        assert type(a) is type(b), path
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def assert_builders_equal(a: nt.ModelBuilder, b: nt.ModelBuilder):
    assert set(vars(a)) == set(vars(b))
    for k in vars(a):
        assert_same(getattr(a, k), getattr(b, k), k)


def _array_bytes(x: wp.array):
    n = x.numpy()
    return n.dtype, n.shape, n.tobytes()


def assert_models_equal(m1, m2):
    """Every array (struct members included) of two Models is byte-identical; scalars and lists equal."""
    assert set(vars(m1)) == set(vars(m2))
    for k, v in vars(m1).items():
        w = getattr(m2, k)
        if isinstance(v, wp.array):
            assert _array_bytes(v) == _array_bytes(w), k
        elif isinstance(v, dict):
            assert list(v) == list(w), k
            for name in v:
                if isinstance(v[name], wp.array):
                    assert _array_bytes(v[name]) == _array_bytes(w[name]), f"{k}[{name}]"
                else:
                    assert v[name] == w[name], f"{k}[{name}]"
        elif hasattr(v, "_cls"):  # a Warp struct instance
            members = [m for m in dir(v) if not m.startswith("_") and isinstance(getattr(v, m), wp.array)]
            assert members, k
            for m in members:
                assert _array_bytes(getattr(v, m)) == _array_bytes(getattr(w, m)), f"{k}.{m}"
        else:
            assert v == w, k


# ----------------------------------------------------------------------------------------------
# Round trips


def test_format_covers_every_builder_attribute():
    """The format's field list equals the builder's attributes: a new builder attribute fails here
    until io.py saves and loads it (and docs/persistence.md documents it)."""
    attrs = set(vars(nt.ModelBuilder()))
    assert attrs - io.BUILDER_FIELDS == set(), "builder attributes the native format does not store"
    assert io.BUILDER_FIELDS - attrs == set(), "format fields the builder no longer has"
    assert set(vars(rich_scene())) == attrs


def test_rich_scene_round_trip_is_exact(tmp_path, device):
    """save -> load gives back every builder list bit for bit and a Model with identical arrays."""
    b = rich_scene()
    assert b.world_count == 4 and b.tendon_count == 8 and b.transmission_count == 12 and b.coupling_count == 8
    path = tmp_path / "scene.json"
    io.save(b, path)
    loaded = io.load(path)
    assert_builders_equal(b, loaded)
    assert_models_equal(b.finalize(device), loaded.finalize(device))
    # Saving the loaded builder again gives the same text (the format is canonical).
    assert io.dumps(loaded) == path.read_text(encoding="utf-8")
    # The file is plain standard JSON: no NaN/Infinity tokens, infinities as strings.
    doc = json.loads(path.read_text(encoding="utf-8"), parse_constant=lambda c: pytest.fail(f"non-standard {c}"))
    assert doc["format"] == "newton_tendon" and doc["version"] == 1
    assert doc["joints"][1]["dofs"][0]["limit_upper"] == "inf"
    assert doc["transmission_tendons"][0]["properties"]["upper_limit"] == "inf"


def test_round_trip_without_worlds_and_empty(device):
    """A builder without worlds (finalized as world 0) and an empty one round-trip exactly too."""
    for b in (template(), nt.ModelBuilder(up_axis="Y", gravity=-3.5)):
        loaded = io.loads(io.dumps(b))
        assert_builders_equal(b, loaded)
        assert_models_equal(b.finalize(device), loaded.finalize(device))


def test_loaded_builder_keeps_working():
    """A loaded builder is a normal builder: it merges with the original (same custom attribute
    declarations) and accepts new entities with the builder's own checks."""
    tpl = template()
    loaded = io.loads(io.dumps(tpl))
    b = nt.ModelBuilder()
    b.replicate(loaded, 2)
    b.add_world(tpl)
    assert b.world_count == 3 and b.body_count == 3 * tpl.body_count
    body = loaded.add_body(mass=1.0)
    loaded.add_tendon([TendonGuide(body=body), TendonGuide(body=-1, offset=(0.0, 0.0, 1.0))])
    assert loaded.tendon_count == tpl.tendon_count + 1


def test_tricky_floats_are_bit_exact():
    """Floats that text formats usually damage: subnormals, extremes, -0.0, 0.1, 1/3, and infinities."""
    b = nt.ModelBuilder(gravity=(-0.0, 5e-324, -9.81))
    values = [0.1, 1.0 / 3.0, 5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, -0.0, 1e16 + 2.0]
    for i, v in enumerate(values):
        b.add_body(mass=1.0, label=f"b{i}")
        # Written into the lists: add_body rejects most of these extremes (outside float32, or a mass whose
        # inverse overflows float32; finalize would too), but the format keeps any float64 bit exact.
        b.body_mass[-1], b.body_com[-1] = abs(v), (v, -v, v * 0.5)
    a = b.add_body(mass=1.0)
    b.add_joint_revolute(-1, a, limit_lower=-math.inf, limit_upper=0.1)
    loaded = io.loads(io.dumps(b))
    assert_builders_equal(b, loaded)
    assert _bits(loaded.body_com[5][0]) == _bits(-0.0)
    assert loaded.joint_limit_lower[0] == -math.inf


def test_text_is_readable_and_line_bounded():
    """One entity per line where it fits in 120 columns; the top level lists one field per line."""
    text = io.dumps(template())
    lines = text.splitlines()
    assert lines[0] == "{" and lines[1] == ' "format": "newton_tendon",' and lines[2] == ' "version": 1,'
    assert any(line.lstrip().startswith('{"label": "base"') for line in lines)


def _example_scene_classes():
    """(name, class) of every example whose scene comes from a ``build_world(nt)`` hook."""
    import importlib
    import pkgutil

    from newton_tendon import examples

    out = []
    for m in sorted(pkgutil.iter_modules(examples.__path__), key=lambda m: m.name):
        if m.name.startswith("_"):
            continue
        mod = importlib.import_module(f"newton_tendon.examples.{m.name}")
        cls = getattr(mod, "Example", None) or getattr(mod, "Env", None)
        if cls is not None and hasattr(cls, "build_world"):
            out.append((m.name, cls))
    return out


EXAMPLE_SCENES = _example_scene_classes()


@pytest.mark.parametrize("cls", [c for _, c in EXAMPLE_SCENES], ids=[n for n, _ in EXAMPLE_SCENES])
def test_example_scenes_round_trip(cls):
    """Every example's scene, replicated into two copies and coloured, round-trips exactly."""
    assert len(EXAMPLE_SCENES) >= 10
    host = cls.__new__(cls)  # only the build_world hook is needed, not the simulation
    host.world_count = getattr(cls, "worlds_per_copy", 1) * 2
    host.solver_name = "xpbd"
    world = cls.build_world(host, nt)
    b = nt.ModelBuilder()
    b.replicate(world, host.world_count, spacing=getattr(cls, "spacing", (1.0, 1.0, 0.0)))
    b.color()
    loaded = io.loads(io.dumps(b))
    assert_builders_equal(b, loaded)
    assert_models_equal(b.finalize("cpu"), loaded.finalize("cpu"))


# ----------------------------------------------------------------------------------------------
# Malformed documents


def _doc() -> dict:
    return json.loads(io.dumps(template()))


def _mutate(fn):
    doc = _doc()
    fn(doc)
    return json.dumps(doc)


def _set(path, value):
    """A mutation that sets doc[path...] = value (path: a tuple of keys/indices)."""

    def fn(doc):
        node = doc
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value

    return fn


def _delete(path):
    def fn(doc):
        node = doc
        for k in path[:-1]:
            node = node[k]
        del node[path[-1]]

    return fn


BAD = [
    # (case id, document text or mutation, exception, text the message must contain)
    ("broken-json", '{"format": "newton_tendon", ', ValueError, "broken JSON"),
    ("not-an-object", "[1, 2]", TypeError, "document: must be a JSON object"),
    ("nan-token", '{"format": NaN}', ValueError, "NaN is not valid JSON"),
    ("duplicate-key", '{"format": "newton_tendon", "format": "x"}', ValueError, "duplicate key 'format'"),
    ("wrong-format", _set(("format",), "mujoco"), ValueError, "format: expected 'newton_tendon'"),
    ("wrong-version", _set(("version",), 2), ValueError, "version: unsupported version 2"),
    ("version-type", _set(("version",), "1"), TypeError, "version: must be an integer"),
    ("missing-top", _delete(("shapes",)), ValueError, "shapes: missing field"),
    ("unknown-top", _set(("colour",), 1), ValueError, "colour: unknown field"),
    ("up-axis", _set(("up_axis",), "W"), ValueError, "up_axis: must be 'X', 'Y' or 'Z'"),
    ("missing-mass", _delete(("bodies", 3, "mass")), ValueError, "bodies[3].mass: missing field"),
    ("mass-type", _set(("bodies", 3, "mass"), "heavy"), TypeError, "bodies[3].mass: must be a number"),
    ("mass-bool", _set(("bodies", 3, "mass"), True), TypeError, "bodies[3].mass: must be a number"),
    ("mass-negative", _set(("bodies", 3, "mass"), -1.0), ValueError, "bodies[3].mass: must be >= 0.0"),
    ("mass-nan", _set(("bodies", 3, "mass"), "nan"), ValueError, "bodies[3].mass: NaN is not allowed"),
    ("mass-inf", _set(("bodies", 3, "mass"), "inf"), ValueError, "bodies[3].mass: must be finite"),
    ("com-length", _set(("bodies", 1, "com"), [0.0, 1.0]), ValueError, "bodies[1].com: must have 3 entries"),
    ("xform-zero-quat", _set(("bodies", 0, "xform"), [0.0] * 7), ValueError, "bodies[0].xform: the quaternion"),
    ("inertia-asym", _set(("bodies", 0, "inertia"), [[1, 2, 0], [0, 1, 0], [0, 0, 1]]), ValueError, "symmetric"),
    ("body-flag", _set(("bodies", 0, "flags"), ["frozen"]), ValueError, "bodies[0].flags[0]: unknown value 'frozen'"),
    ("label-type", _set(("bodies", 2, "label"), 5), TypeError, "bodies[2].label: must be a string"),
    ("world-range", _set(("bodies", 2, "world"), -2), ValueError, "bodies[2].world: -2 is out of range"),
    (
        "world-missing",
        _set(("bodies", 2, "world"), 1),
        ValueError,
        "bodies[2].world: 1 is out of range; expected world",
    ),
    ("int32", _set(("shapes", 0, "collision_group"), 2**40), ValueError, "collision_group: 1099511627776 does not fit"),
    ("colour-count", _set(("body_color",), [0, 1]), ValueError, "body_color: must have 8 entries"),
    ("shape-body", _set(("shapes", 0, "body"), 99), ValueError, "shapes[0].body: 99 is out of range"),
    ("shape-type", _set(("shapes", 0, "type"), "sdf"), ValueError, "shapes[0].type: unknown value 'sdf'"),
    ("shape-radius", _set(("shapes", 0, "scale"), [0.0, 0.0, 0.0]), ValueError, "shapes[0].scale[0]: must be > 0"),
    ("restitution", _set(("shapes", 1, "restitution"), 1.5), ValueError, "shapes[1].restitution: must be <= 1.0"),
    ("filter-index", _set(("shape_filter_pairs", 0), [0, 50]), ValueError, "shape_filter_pairs[0][1]: 50 is out"),
    ("filter-order", _set(("shape_filter_pairs", 0), [3, 3]), ValueError, "shape_filter_pairs[0]: a pair"),
    ("joint-child", _set(("joints", 0, "child"), 8), ValueError, "joints[0].child: 8 is out of range"),
    ("joint-self", _set(("joints", 0, "child"), 0), ValueError, "joints[0].child: parent and child must be"),
    ("joint-dofs", _set(("joints", 2, "dofs"), []), ValueError, "joints[2].dofs: must have 3 entries"),
    ("joint-limits", _set(("joints", 0, "dofs", 0, "limit_lower"), 2.0), ValueError, "must be <= limit_upper"),
    ("joint-inf", _set(("joints", 0, "dofs", 0, "limit_lower"), "inf"), ValueError, "cannot be +inf"),
    ("joint-axis", _set(("joints", 0, "dofs", 0, "axis"), [0, 0, 0]), ValueError, "joints[0].dofs[0].axis: must be"),
    ("articulation", _set(("articulations", 1, "start"), 0), ValueError, "articulations[1].start: articulation"),
    ("guide-body", _set(("tendons", 0, "guides", 1, "body"), 42), ValueError, "tendons[0].guides[1].body: 42"),
    ("guide-type", _set(("tendons", 0, "guides", 1, "type"), "hook"), ValueError, "tendons[0].guides[1].type"),
    ("guide-radius", _set(("tendons", 0, "guides", 2, "radius"), 0.0), ValueError, "a roller needs radius > 0"),
    ("guide-orient", _set(("tendons", 0, "guides", 2, "orientation"), 2), ValueError, "orientation: must be 1 or -1"),
    ("guide-dynamic", _set(("tendons", 0, "guides", 1, "flags"), ["dynamic"]), ValueError, "only allowed on a roller"),
    ("first-span", _set(("tendons", 0, "guides", 0, "damping"), 1.0), ValueError, "guides[0].damping: the first"),
    ("span-missing", _delete(("tendons", 0, "guides", 1, "rest_length")), ValueError, "rest_length: missing"),
    ("one-guide", _set(("tendons", 1, "guides"), []), ValueError, "tendons[1].guides: a route needs at least two"),
    ("tx-kind", _set(("transmission_tendons", 0, "kind"), "rope"), ValueError, "transmission_tendons[0].kind"),
    ("tx-prop", _delete(("transmission_tendons", 0, "properties", "damping")), ValueError, "properties.damping"),
    (
        "tx-prop-rule",
        _set(("transmission_tendons", 0, "properties", "upper_limit"), -1),
        ValueError,
        "properties: lower_limit",
    ),
    ("tx-wrap-end", _delete(("transmission_tendons", 0, "path", 8)), ValueError, "fewer than 2 sites"),
    ("tx-site-body", _set(("transmission_tendons", 0, "path", 1, "body"), 8), ValueError, "path[1].body: 8 is out"),
    ("tx-radius", _set(("transmission_tendons", 0, "path", 2, "radius"), -1), ValueError, "path[2].radius: must be >"),
    ("tx-terms", _set(("transmission_tendons", 1, "terms", 0, "joint"), 2), ValueError, "is a ball joint"),
    ("tx-both", _set(("transmission_tendons", 1, "path"), []), ValueError, "a fixed tendon has terms, not a path"),
    ("coupling-self", _set(("couplings", 0, "second"), 0), ValueError, "couplings[0].second: first and second"),
    ("coupling-index", _set(("couplings", 1, "first"), 3), ValueError, "couplings[1].first: 3 is out of range"),
    ("coupling-coeffs", _set(("couplings", 0, "coefficients"), [1.0]), ValueError, "must have 5 entries"),
    ("attr-dtype", _set(("custom_attributes", 0, "dtype"), "bool"), ValueError, "custom_attributes[0].dtype"),
    ("attr-freq", _set(("custom_attributes", 0, "frequency"), "world"), ValueError, "custom_attributes[0].frequency"),
    ("attr-index", _set(("custom_attributes", 0, "values", 0, 0), 8), ValueError, "values[0][0]: 8 is out of range"),
    ("attr-value", _set(("custom_attributes", 0, "values", 0, 1), 1.5), TypeError, "values[0][1]: must be an integer"),
    ("attr-ref", _set(("custom_attributes", 3, "references"), "body"), ValueError, "only int attributes may"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_malformed_document_raises_with_field_path(case):
    """Each malformed document raises the named error type with the field path and rule, and loads nothing."""
    _, change, exc, text = case
    doc_text = change if isinstance(change, str) else _mutate(change)
    with pytest.raises(exc) as info:
        io.loads(doc_text)
    assert text in str(info.value)


def test_tendon_across_worlds_is_rejected():
    """Guides on bodies of two worlds (a hand-edited body index) are rejected with the guide's path."""
    b = nt.ModelBuilder()
    b.replicate(template(), 2)
    doc = json.loads(io.dumps(b))
    n = len(template().body_label)
    doc["tendons"][0]["guides"][2]["body"] = n + 1
    with pytest.raises(ValueError, match=r"tendons\[0\]\.guides\[2\]\.body: body 9 is in world 1 but earlier"):
        io.from_dict(doc)


def _two_worlds() -> dict:
    """A two-world replicate of the template as a document; world 1's entities follow world 0's."""
    b = nt.ModelBuilder()
    b.replicate(template(), 2)
    return json.loads(io.dumps(b))


WRONG_WORLD = [
    # (entity list, index, the rule's words in the message); each entity of world 0 is moved to world 1.
    ("shapes", 0, "but its body 1 is in world 0; a shape lies in its body's world"),
    ("joints", 0, "but its child body 1 is in world 0; a joint lies in its child body's world"),
    ("tendons", 0, "but its guides' bodies are in world 0; a routed tendon lies in its guides' world"),
    ("transmission_tendons", 0, "but its bodies are in world 0; a transmission tendon lies in its bodies' world"),
    ("transmission_tendons", 1, "but its bodies are in world 0; a transmission tendon lies in its bodies' world"),
    ("couplings", 1, "but its first tendon 2 is in world 0; a coupling lies in the world of the tendons it couples"),
]


@pytest.mark.parametrize("case", WRONG_WORLD, ids=[f"{c[0]}-{c[1]}" for c in WRONG_WORLD])
def test_entity_world_must_match_its_bodies(case):
    """An entity whose stored world differs from the world the builder derives from its bodies
    (a world-1 cable on a world-0 body) is rejected with the field path; world 1 is a valid world."""
    key, i, rule = case
    doc = _two_worlds()
    assert doc[key][i]["world"] == 0
    doc[key][i]["world"] = 1
    with pytest.raises(ValueError) as info:
        io.from_dict(doc)
    assert str(info.value).startswith(f"{key}[{i}].world: 1, ") and rule in str(info.value)


def test_reported_cross_world_edit_is_rejected():
    """The reported case: tendon 0 moved to world 1 and given tendon 1's label no longer loads, and
    neither does the same edit on a spatial transmission tendon."""
    doc = _two_worlds()
    doc["tendons"][0]["world"] = 1
    doc["tendons"][1]["label"] = doc["tendons"][0]["label"]
    with pytest.raises(ValueError, match=r"^tendons\[0\]\.world: 1, but its guides' bodies are in world 0"):
        io.from_dict(doc)
    doc = _two_worlds()
    doc["transmission_tendons"][0]["world"] = 1
    doc["transmission_tendons"][4]["label"] = doc["transmission_tendons"][0]["label"]
    with pytest.raises(ValueError, match=r"^transmission_tendons\[0\]\.world: 1, but its bodies are in world 0"):
        io.from_dict(doc)


def test_worlds_the_builder_leaves_free_round_trip():
    """Where the builder takes the world from ``current_world`` (a shape on body -1, a route whose
    guides are all on body -1, a transmission tendon over bodies of world -1) any world loads."""
    b = nt.ModelBuilder()
    b.add_world(nt.ModelBuilder())
    b.add_world(nt.ModelBuilder())
    shared = b.add_body(mass=1.0, label="shared")  # world -1
    b.current_world = 1
    b.add_shape_sphere(-1, None, 0.1, label="marker")
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=-1, offset=(0.0, 0.0, 1.0))], label="sky")
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=shared)], label="hang")
    b.add_tendon_coupling(0, None, [0.0], label="hold")
    b.current_world = -1
    assert (b.shape_world, b.tendon_world, b.transmission_world, b.coupling_world) == ([1], [1], [1], [1])
    loaded = io.loads(io.dumps(b))
    assert_builders_equal(b, loaded)
    # Moving them to another world is just as valid.
    doc = json.loads(io.dumps(b))
    for key in ("shapes", "tendons", "transmission_tendons", "couplings"):
        doc[key][0]["world"] = 0
    assert io.from_dict(doc).transmission_world == [0]
    doc["couplings"][0]["world"] = 1
    with pytest.raises(ValueError, match=r"couplings\[0\]\.world: 1, but its first tendon 0 is in world 0"):
        io.from_dict(doc)


def test_save_refuses_a_transmission_that_add_builder_moved_away_from_its_bodies():
    """A world-0 transmission tendon over world -1 bodies is valid; ``add_builder(..., world=0)`` of a
    builder that holds one moves the bodies to world 0 and the tendon to world 1, and save refuses that."""
    inner = nt.ModelBuilder()
    inner.add_world(nt.ModelBuilder())
    shared = inner.add_body(mass=1.0)
    inner.current_world = 0
    inner.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=shared)])
    inner.current_world = -1
    assert_builders_equal(inner, io.loads(io.dumps(inner)))
    outer = nt.ModelBuilder()
    outer.add_world(nt.ModelBuilder())
    outer.add_builder(inner, world=0)
    assert (outer.body_world, outer.transmission_world) == ([0], [1])
    with pytest.raises(ValueError, match=r"^save: .*transmission_tendons\[0\]\.world: 1, but its bodies"):
        io.dumps(outer)


def test_duplicate_labels_made_by_the_builder_round_trip():
    """The builder checks explicit transmission and coupling labels (``add_spatial_tendon``,
    ``add_fixed_tendon``, ``add_tendon_coupling``) and those ``add_builder`` brings into a world, but a
    default label equal to an earlier explicit one still makes a duplicate. A saved file holds no
    record of how a label arrived, so load accepts duplicates and such builders round-trip."""

    def part():
        p = nt.ModelBuilder()
        body = p.add_body(mass=1.0)
        p.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=body)], label="s")
        p.add_tendon_coupling(0, None, [0.0], label="c")
        return p

    b = nt.ModelBuilder()
    b.add_builder(part())
    with pytest.raises(ValueError, match="add_builder: transmission tendon label 's' already exists in world -1"):
        b.add_builder(part())
    b.add_builder(part(), label_prefix="second/")
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=0)], label="spatial_tendon_3")
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=1)])
    assert b.transmission_label == ["s", "second/s", "spatial_tendon_3", "spatial_tendon_3"]
    assert b.coupling_label == ["c", "second/c"]
    assert_builders_equal(b, io.loads(io.dumps(b)))


def test_load_error_names_file_and_leaves_nothing(tmp_path):
    """load() prefixes errors with the file path; save() of a builder holding NaN writes no file."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "newton_tendon", "version": 9}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.json: version: unsupported version 9"):
        io.load(bad)
    b = template()
    b.body_mass[2] = math.nan  # poked in behind the builder's back
    out = tmp_path / "nan.json"
    with pytest.raises(ValueError, match=r"save: .*bodies\[2\]\.mass: NaN is not allowed"):
        io.save(b, out)
    assert not out.exists() and os.listdir(tmp_path) == ["bad.json"]
    b = template()
    b.transmission_path[0]["radius"][0] = 0.5  # a site with a radius: not representable
    with pytest.raises(ValueError, match=r"transmission_tendons\[0\]\.path\[0\] \(site\) holds a radius"):
        io.save(b, out)
    b = template()
    b.transmission_path[0]["colour"] = [0] * len(b.transmission_path[0]["type"])
    with pytest.raises(ValueError, match=r"transmission_tendons\[0\]\.path has keys"):
        io.save(b, out)
    assert not out.exists()
    with pytest.raises(TypeError, match="expected a ModelBuilder"):
        io.dumps({"bodies": []})
    with pytest.raises(TypeError, match="path must be a str"):
        io.save(template(), 3)


# ----------------------------------------------------------------------------------------------
# convert()


def test_convert_native_to_native(tmp_path):
    """convert() of a native file writes the same canonical text; a bad output suffix writes nothing."""
    src = tmp_path / "in.json"
    io.save(rich_scene(), src)
    dst = tmp_path / "out.json"
    b = io.convert(src, dst)
    assert dst.read_text(encoding="utf-8") == src.read_text(encoding="utf-8")
    assert b.world_count == 4
    with pytest.raises(ValueError, match="must be a native .json file"):
        io.convert(src, tmp_path / "out.usda")
    with pytest.raises(ValueError, match="cannot tell the format"):
        io.convert(tmp_path / "in.obj", tmp_path / "x.json")
    assert sorted(os.listdir(tmp_path)) == ["in.json", "out.json"]


MJCF = """<mujoco>
  <worldbody>
    <site name="top" pos="0 0 2"/>
    <body name="load" pos="0 0 1">
      <freejoint/>
      <geom type="sphere" size="0.05" mass="1"/>
      <site name="hook" pos="0 0 0.05"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="rope" stiffness="100" springlength="0.5">
      <site site="top"/>
      <site site="hook"/>
    </spatial>
  </tendon>
</mujoco>
"""


def _check_convert(src, dst, module: str, add):
    """convert() agrees with the importer: the same canonical text and Model as importing directly,
    or, where the importer rejects the fixture, the same error and no output file. Without the
    importer module, a clear RuntimeError and no output file."""
    if importlib.util.find_spec(f"newton_tendon.{module}") is None:
        with pytest.raises(RuntimeError, match=f"needs the {module.upper()} importer"):
            io.convert(src, dst)
        assert not dst.exists()
        return
    direct = nt.ModelBuilder()
    try:
        add(direct, str(src))
    except (TypeError, ValueError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            io.convert(src, dst)
        assert not dst.exists()
        return
    converted = io.convert(src, dst)
    text = dst.read_text(encoding="utf-8")
    loaded = io.load(dst)
    assert io.dumps(loaded) == io.dumps(direct) == text
    assert_models_equal(direct.finalize("cpu"), loaded.finalize("cpu"))
    assert converted.body_count == direct.body_count


def test_convert_mjcf(tmp_path):
    """MJCF -> native JSON through builder.add_mjcf."""
    src = tmp_path / "rope.xml"
    src.write_text(MJCF, encoding="utf-8")
    _check_convert(src, tmp_path / "rope.json", "mjcf", lambda b, p: b.add_mjcf(p))


USDA = """#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
)
def Xform "World"
{
    def Xform "Ball" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]
    )
    {
        float physics:mass = 1
        double3 xformOp:translate = (0, 0, 1)
        uniform token[] xformOpOrder = ["xformOp:translate"]
        def Sphere "Geom" (
            prepend apiSchemas = ["PhysicsCollisionAPI"]
        )
        {
            double radius = 0.1
        }
    }
}
"""


def test_convert_usd(tmp_path):
    """USD -> native JSON through builder.add_usd."""
    src = tmp_path / "ball.usda"
    src.write_text(USDA, encoding="utf-8")
    _check_convert(src, tmp_path / "ball.json", "usd", lambda b, p: b.add_usd(p))


TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The tests folder (this module sits one level below it); asset ids are relative to it."""

ASSETS = sorted(
    os.path.relpath(os.path.join(root, f), TESTS_DIR)
    for root, _, files in os.walk(os.path.join(TESTS_DIR, "assets"))
    for f in files
    if f.endswith((".xml", ".usda", ".usd"))
)


@pytest.mark.parametrize("asset", ASSETS)
def test_imported_fixture_round_trips(asset, tmp_path):
    """Every MJCF/USD fixture of tests/assets that its importer accepts converts to native JSON that
    loads back to the same canonical text and byte-identical Model arrays; a fixture the importer
    rejects makes convert() raise the same error type and write nothing."""
    src = os.path.join(TESTS_DIR, asset)
    if src.endswith(".xml"):
        _check_convert(src, tmp_path / "scene.json", "mjcf", lambda b, p: b.add_mjcf(p))
    else:
        _check_convert(src, tmp_path / "scene.json", "usd", lambda b, p: b.add_usd(p))


def test_documented_fields_match_the_writer():
    """Every field the writer emits is documented in docs/persistence.md (as `name`)."""
    doc_path = os.path.join(TESTS_DIR, "..", "docs", "persistence.md")
    with open(doc_path, encoding="utf-8") as f:
        text = f.read()
    doc = json.loads(io.dumps(rich_scene()))
    keys = set(doc)
    for section in ("bodies", "shapes", "joints", "articulations", "tendons", "transmission_tendons", "couplings"):
        for entry in doc[section]:
            keys |= set(entry)
    keys |= set(doc["joints"][0]["dofs"][0]) | set(doc["tendons"][0]["guides"][1])
    keys |= set(doc["custom_attributes"][0])
    for e in doc["transmission_tendons"][0]["path"]:
        keys |= set(e)
    keys |= set(doc["transmission_tendons"][0]["properties"]) | set(doc["transmission_tendons"][1]["terms"][0])
    missing = sorted(k for k in keys if f"`{k}`" not in text)
    assert not missing, f"fields missing from docs/persistence.md: {missing}"


def test_deepcopy_of_loaded_document_is_independent():
    """from_dict does not keep references into the parsed document (editing it later changes nothing)."""
    doc = _doc()
    b = io.from_dict(doc)
    before = copy.deepcopy(b.body_q)
    doc["bodies"][0]["xform"][0] = 123.0
    assert b.body_q == before


# ----------------------------------------------------------------------------------------------
# Random corruption: the reader never crashes with anything but ValueError/TypeError


def _leaf_paths(node, prefix=()):
    """Every (path, value) of a parsed document, containers included."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaf_paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaf_paths(v, (*prefix, i))


_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=40),
    st.sampled_from([2**40, -(2**40), 0.5, -1.5, 1e300, -0.0, "inf", "-inf", "nan", "", "sphere", "dynamic"]),
    st.lists(st.integers(min_value=-2, max_value=9), max_size=8),
    st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=3, max_size=3),
    st.just({}),
)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@settings(max_examples=int(os.environ.get("NT_IO_FUZZ_EXAMPLES", "150")))
@given(data=st.data())
def test_random_corruption_is_rejected_cleanly(data):
    """Replacing or deleting any one field of a valid document either loads (and then saves and
    finalizes, or finalize raises ValueError) or raises ValueError/TypeError from the reader:
    never IndexError, KeyError or a crash in finalize."""
    doc = _CORRUPTION_BASE()
    paths = [p for p, _ in _leaf_paths(doc) if p]
    path = data.draw(st.sampled_from(paths), label="path")
    node = doc
    for k in path[:-1]:
        node = node[k]
    if data.draw(st.booleans(), label="delete"):
        del node[path[-1]]
    else:
        node[path[-1]] = data.draw(_JUNK, label="value")
    try:
        b = io.from_dict(doc)
    except (TypeError, ValueError):
        return
    io.loads(io.dumps(b))
    try:
        b.finalize("cpu")
    except ValueError:
        pass


def _corruption_base_factory():
    text = io.dumps(template())
    return lambda: json.loads(text)


_CORRUPTION_BASE = _corruption_base_factory()
