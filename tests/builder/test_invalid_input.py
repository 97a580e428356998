"""Systematic invalid-input table for every public builder entry point (issue 9, part 3).

Each row feeds one entry point one bad argument from a fixed set of bad-input classes:

* ``type``: a wrong type (a str, None, a list, a bool where a number is wanted, a float index ...) -> ``TypeError``;
* ``nan`` / ``inf`` / ``-inf``: a non-finite number where it is not allowed -> ``ValueError``;
* ``oob``: an index past either end of its range -> ``ValueError``;
* ``empty`` / ``len``: an empty or wrong-length sequence -> ``ValueError``.

Every row starts from the same small valid scene (bodies, shapes, joints, custom attributes, a routed tendon,
transmission tendons and a coupling), snapshots all builder attributes (deep copy of ``vars``), makes the call and
checks the exception type (the documented contract in docs/concepts.md, "Validation"), that the message names the
entry point and the parameter, and that the builder is exactly as before.

Rules already covered row by row in tests/builder/test_builder_validation.py, tests/builder/test_tendon_builder.py,
tests/transmission/test_spatial_geometry.py and tests/transmission/test_transmission.py are not repeated value by
value here; this table generates the classes those tables leave out (wrong types and infinities for most
parameters, empty sequences, unchanged-builder checks for the transmission entry points). docs/validation.md lists
every rule.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import warp as wp

from newton_tendon import ModelBuilder, ModelFlags
from newton_tendon.tendon import AttributeFrequency, CustomAttribute, TendonGuide, TendonGuideType
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

from ..helpers import SOLVERS, same

NAN = float("nan")
INF = float("inf")
BODY = AttributeFrequency.BODY


# ---------------------------------------------------------------------------------------------------------------
# The scene every row starts from
# ---------------------------------------------------------------------------------------------------------------


def scene() -> ModelBuilder:
    """Bodies 0..2, a sphere and a box, two ungrouped joints (revolute, prismatic), three BODY custom attributes
    (float ``m``, vec3 ``v``, int ``k``), a routed tendon, a fixed (``fx``) and a spatial (``sp``) transmission
    tendon, one coupling (``cp``) and a colouring."""
    b = ModelBuilder()
    for i in range(3):
        b.add_body(xform=(float(i), 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.1, label=f"b{i}")
    b.add_shape_sphere(0, radius=0.1)
    b.add_shape_box(1, hx=0.1, hy=0.1, hz=0.1)
    b.add_joint_revolute(-1, 0)
    b.add_joint_prismatic(0, 1)
    b.add_custom_attribute(CustomAttribute(name="m", frequency=BODY, dtype=float, default=0.0))
    b.add_custom_attribute(CustomAttribute(name="v", frequency=BODY, dtype="vec3", default=(0.0, 0.0, 0.0)))
    b.add_custom_attribute(CustomAttribute(name="k", frequency=BODY, dtype=int, default=0))
    b.add_tendon([TendonGuide(body=0), TendonGuide(body=1)], label="cable")
    b.add_fixed_tendon([0], [1.0], label="fx")
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=1)], label="sp")
    b.add_tendon_coupling(0, 1, [0.0, 1.0], label="cp")
    b.color()
    return b


def small() -> ModelBuilder:
    """A builder with one body and a sphere, to be added to the scene."""
    s = ModelBuilder()
    s.add_body(mass=1.0, inertia=np.eye(3), label="s")
    s.add_shape_sphere(0, radius=0.1)
    return s


N_BODY, N_SHAPE, N_JOINT, N_TRANSMISSION = 3, 2, 2, 2


# ---------------------------------------------------------------------------------------------------------------
# Bad-input classes
# ---------------------------------------------------------------------------------------------------------------

WRONG_REAL = [("type-str", "1.0"), ("type-none", None), ("type-list", [1.0]), ("type-bool", True)]
WRONG_REAL_NONE_OK = [v for v in WRONG_REAL if v[1] is not None]
NONFINITE = [("nan", NAN), ("inf", INF), ("-inf", -INF)]
WRONG_VEC3 = [("type-str", "abc"), ("type-none", None), ("type-int", 3)]
BAD_VEC3 = [("empty", ()), ("len2", (0.0, 1.0)), ("nan", (0.0, NAN, 1.0)), ("inf", (INF, 0.0, 1.0))]
# A joint axis is a 3-vector or an Axis (its letter, its int 0..2): a str or int that names no axis is a
# ValueError, not a TypeError as for a plain 3-vector.
WRONG_AXIS = [("type-none", None), ("type-bool", True), ("type-float", 2.5)]
BAD_AXIS = [*BAD_VEC3, ("name-abc", "abc"), ("int-3", 3), ("zero", (0.0, 0.0, 0.0))]
WRONG_XFORM = [("type-str", "abcdefg"), ("type-int", 3)]
BAD_XFORM = [
    ("empty", ()),
    ("len3", (0.0, 0.0, 0.0)),
    ("nan", (NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)),
    ("inf", (0.0, 0.0, INF, 0.0, 0.0, 0.0, 1.0)),
    ("quat-inf", (0.0, 0.0, 0.0, INF, 0.0, 0.0, 1.0)),
]
WRONG_INDEX = [("type-str", "0"), ("type-float", 0.0), ("type-bool", True), ("type-none", None)]
WRONG_BOOL = [("type-str", "no")]


@dataclass(frozen=True)
class Bad:
    """One invalid call on a fresh ``make()`` builder: expected exception, entry point regex, parameter name."""

    call: Callable
    exc: type
    owner: str
    param: str
    make: Callable = scene


ROWS: list = []


def row(id_: str, call: Callable, exc: type, owner: str, param: str, make: Callable = scene):
    ROWS.append(pytest.param(Bad(call, exc, owner, param, make), id=id_))


def reals(prefix, owner, param, call, *, none_ok=False, allow_inf=False, make=scene):
    """Wrong-type and non-finite rows for a real-number parameter; ``call(b, v)`` makes the call."""
    for tag, v in WRONG_REAL_NONE_OK if none_ok else WRONG_REAL:
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), TypeError, owner, param, make)
    for tag, v in NONFINITE if not allow_inf else [("nan", NAN)]:
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), ValueError, owner, param, make)


def vec3s(prefix, owner, param, call, *, none_ok=False, make=scene):
    """Wrong-type, empty, wrong-length and non-finite rows for a 3-vector parameter."""
    for tag, v in WRONG_VEC3:
        if none_ok and v is None:
            continue
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), TypeError, owner, param, make)
    for tag, v in BAD_VEC3:
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), ValueError, owner, param, make)


def axes(prefix, owner, param, call, make=scene):
    """Wrong-type and bad-value rows for a joint axis (a 3-vector or an Axis)."""
    for tag, v in WRONG_AXIS:
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), TypeError, owner, param, make)
    for tag, v in BAD_AXIS:
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), ValueError, owner, param, make)


def xforms(prefix, owner, param, call, make=scene):
    """Wrong-type, empty, wrong-length and non-finite rows for a transform parameter (None means identity)."""
    for tag, v in WRONG_XFORM:
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), TypeError, owner, param, make)
    for tag, v in BAD_XFORM:
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), ValueError, owner, param, make)


def indices(prefix, owner, param, call, count, *, allow_world, none_ok=False, make=scene):
    """Wrong-type and out-of-range rows for an index into ``count`` entities (-1 allowed when ``allow_world``)."""
    for tag, v in WRONG_INDEX:
        if none_ok and v is None:
            continue
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), TypeError, owner, param, make)
    low = -2 if allow_world else -1
    for tag, v in (("oob-high", count), ("oob-low", low)):
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), ValueError, owner, param, make)


def flags(prefix, owner, param, call, make=scene):
    """A non-bool for a bool flag (the contract: wrong types raise TypeError)."""
    for tag, v in WRONG_BOOL:
        row(f"{prefix}-{param}-{tag}", lambda b, v=v: call(b, v), TypeError, owner, param, make)


def label(prefix, owner, call, make=scene):
    row(f"{prefix}-label-type-int", lambda b: call(b, 7), TypeError, owner, "label", make)


# ---------------------------------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------------------------------

# add_body / add_link ---------------------------------------------------------------------------------------------
for meth in ("add_body", "add_link"):
    p = meth.replace("_", "-")
    own = r"add_body\(label='x'\)"  # add_link forwards to add_body, whose name the message carries

    def body_call(b, meth=meth, **kw):
        return getattr(b, meth)(label="x", **kw)

    reals(p, own, "mass", lambda b, v, f=body_call: f(b, mass=v))
    xforms(p, own, "xform", lambda b, v, f=body_call: f(b, xform=v))
    vec3s(p, own, "com", lambda b, v, f=body_call: f(b, com=v), none_ok=True)
    for tag, v, exc in (
        ("type-str", "abcdef", TypeError),
        ("type-int", 3, TypeError),
        ("empty", (), ValueError),
        ("nan", (0.0, 0.0, 0.0, NAN, 0.0, 0.0), ValueError),
        ("inf", (0.0, -INF, 0.0, 0.0, 0.0, 0.0), ValueError),
    ):
        row(f"{p}-velocity-{tag}", lambda b, v=v, f=body_call: f(b, velocity=v), exc, own, "velocity")
    for tag, v, exc in (
        ("type-str", "abc", TypeError),
        ("empty", [], ValueError),
        ("inf", np.diag([1.0, INF, 1.0]), ValueError),
    ):
        row(f"{p}-inertia-{tag}", lambda b, v=v, f=body_call: f(b, inertia=v), exc, own, "inertia")
flags("add-body", r"add_body", "is_kinematic", lambda b, v: b.add_body(is_kinematic=v))
flags("add-body", r"add_body", "lock_inertia", lambda b, v: b.add_body(lock_inertia=v))

# Shapes ----------------------------------------------------------------------------------------------------------
SHAPES = {
    "add_shape_sphere": ("radius",),
    "add_shape_box": ("hx", "hy", "hz"),
    "add_shape_capsule": ("radius", "half_height"),
    "add_shape_cylinder": ("radius", "half_height"),
    "add_shape_plane": ("width", "length"),
}
for meth, dims in SHAPES.items():
    p = meth.replace("add_shape_", "shape-")
    own = re.escape(f"{meth}(label='x')")

    def shape_call(b, meth=meth, body=0, **kw):
        return getattr(b, meth)(body, label="x", **kw)

    indices(p, own, "body", lambda b, v, meth=meth: getattr(b, meth)(v, label="x"), N_BODY, allow_world=True)
    xforms(p, own, "xform", lambda b, v, f=shape_call: f(b, xform=v))
    for dim in dims:
        reals(p, own, dim, lambda b, v, f=shape_call, dim=dim: f(b, **{dim: v}))
    # None means "not passed" (the value comes from cfg or the default), so it is no wrong type here.
    for param in ("mu", "restitution", "margin", "gap"):
        reals(p, own, param, lambda b, v, f=shape_call, param=param: f(b, **{param: v}), none_ok=True)
    if meth != "add_shape_plane":
        reals(p, own, "density", lambda b, v, f=shape_call: f(b, density=v), none_ok=True)
        reals(p, own, "mass", lambda b, v, f=shape_call: f(b, mass=v), none_ok=True)
    for tag, v in (("type-str", "1"), ("type-float", 1.0), ("type-bool", True)):
        row(f"{p}-collision_group-{tag}", lambda b, v=v, f=shape_call: f(b, collision_group=v), TypeError, own,
            "collision_group")  # fmt: skip
    label(p, re.escape(meth), lambda b, v, meth=meth: getattr(b, meth)(0 if meth != "add_shape_plane" else -1, label=v))
flags("shape-sphere", r"add_shape_sphere", "has_collision", lambda b, v: b.add_shape_sphere(0, has_collision=v))

# add_ground_plane (it forwards mu, restitution and label to add_shape_plane, whose name the message carries) -----
GROUND = r"add_ground_plane|add_shape_plane"
reals("ground", GROUND, "height", lambda b, v: b.add_ground_plane(v))
reals("ground", GROUND, "mu", lambda b, v: b.add_ground_plane(mu=v), none_ok=True)
reals("ground", GROUND, "restitution", lambda b, v: b.add_ground_plane(restitution=v), none_ok=True)
label("ground", GROUND, lambda b, v: b.add_ground_plane(label=v))

# add_shape_collision_filter_pair ---------------------------------------------------------------------------------
FILT = "add_shape_collision_filter_pair"
indices("filter", FILT, "shape_a", lambda b, v: b.add_shape_collision_filter_pair(v, 1), N_SHAPE, allow_world=False)
indices("filter", FILT, "shape_b", lambda b, v: b.add_shape_collision_filter_pair(0, v), N_SHAPE, allow_world=False)
row("filter-empty-builder", lambda b: b.add_shape_collision_filter_pair(0, 1), ValueError, FILT, "shape_a",
    ModelBuilder)  # fmt: skip
# A shape paired with itself is meaningless (a shape never collides with itself).
row("filter-same-shape", lambda b: b.add_shape_collision_filter_pair(1, 1), ValueError, FILT, "shape_a")

# Joints ----------------------------------------------------------------------------------------------------------
# Scene bodies 0..2; joint (1 -> 2) is valid for every type, so each row changes one argument only.
JOINTS = ("add_joint_revolute", "add_joint_prismatic", "add_joint_ball", "add_joint_fixed", "add_joint_free")
for meth in JOINTS:
    p = meth.replace("add_joint_", "joint-")
    own = re.escape(f"{meth}(label='x')")
    free = meth == "add_joint_free"

    def joint_call(b, meth=meth, parent=1, child=2, free=free, lbl="x", **kw):
        if free:
            return b.add_joint_free(child, parent, label=lbl, **kw)
        return getattr(b, meth)(parent, child, label=lbl, **kw)

    indices(p, own, "parent", lambda b, v, f=joint_call: f(b, parent=v), N_BODY, allow_world=True)
    indices(p, own, "child", lambda b, v, f=joint_call: f(b, child=v), N_BODY, allow_world=False)
    xforms(p, own, "parent_xform", lambda b, v, f=joint_call: f(b, parent_xform=v))
    xforms(p, own, "child_xform", lambda b, v, f=joint_call: f(b, child_xform=v))
    label(p, re.escape(meth), lambda b, v, f=joint_call: f(b, lbl=v))
    if meth in ("add_joint_revolute", "add_joint_prismatic"):
        axes(p, own, "axis", lambda b, v, f=joint_call: f(b, axis=v))
        # None is "not given" (newton's defaults), as in newton's signatures.
        for param in ("target_pos", "target_vel", "target_ke", "target_kd", "armature", "limit_ke", "limit_kd"):
            reals(p, own, param, lambda b, v, f=joint_call, param=param: f(b, **{param: v}), none_ok=True)
        for param in ("effort_limit", "velocity_limit"):
            reals(p, own, param, lambda b, v, f=joint_call, param=param: f(b, **{param: v}), none_ok=True,
                  allow_inf=True)  # fmt: skip
        for param in ("limit_lower", "limit_upper"):
            reals(p, own, param, lambda b, v, f=joint_call, param=param: f(b, **{param: v}), none_ok=True,
                  allow_inf=True)  # fmt: skip
        # An infinite bound on the wrong side is no bound an angle or position can satisfy.
        row(f"{p}-limit_lower-plus-inf", lambda b, f=joint_call: f(b, limit_lower=INF), ValueError, own, "limit_lower")
        row(f"{p}-limit_upper-minus-inf", lambda b, f=joint_call: f(b, limit_upper=-INF), ValueError, own,
            "limit_upper")  # fmt: skip


flags("joint-revolute", r"add_joint_revolute", "enabled", lambda b, v: b.add_joint_revolute(1, 2, enabled=v))
flags(
    "joint-revolute",
    r"add_joint_revolute",
    "collision_filter_parent",
    lambda b, v: b.add_joint_revolute(1, 2, collision_filter_parent=v),
)

# add_articulation (scene joints 0, 1 are ungrouped) ------------------------------------------------------------
ART = r"add_articulation"
for tag, v in (
    ("type-int", 5),
    ("type-str-items", ["0", "1"]),
    ("type-float-items", [0.5, 1]),
    ("type-bool-items", [False, True]),
    ("type-nan-item", [NAN]),
    ("type-inf-item", [INF]),
):
    row(f"articulation-joints-{tag}", lambda b, v=v: b.add_articulation(v), TypeError, ART, "joints")
row("articulation-joints-oob-low", lambda b: b.add_articulation([-1, 0]), ValueError, ART, "joints")
row("articulation-joints-oob-high", lambda b: b.add_articulation([0, 1, 2]), ValueError, ART, "joints")
row("articulation-empty-builder", lambda b: b.add_articulation(), ValueError, ART, "joints", ModelBuilder)

# add_custom_attribute ------------------------------------------------------------------------------------------
CA = r"add_custom_attribute"


def ca(**kw):
    kw.setdefault("name", "x")
    kw.setdefault("frequency", BODY)
    return lambda b: b.add_custom_attribute(CustomAttribute(**kw))


for tag, v in (("type-str", "x"), ("type-none", None), ("type-dict", {"name": "x"})):
    row(f"custom-attribute-attribute-{tag}", lambda b, v=v: b.add_custom_attribute(v), TypeError, CA, "CustomAttribute")
row("custom-attribute-name-type-int", ca(name=5), TypeError, CA, "name")
row("custom-attribute-name-empty", ca(name=""), ValueError, CA, "name")
row("custom-attribute-name-taken", ca(name="m"), ValueError, CA, "m")
row("custom-attribute-frequency-type-none", ca(frequency=None), TypeError, CA, "frequency")
row("custom-attribute-frequency-type-bool", ca(frequency=True), TypeError, CA, "frequency")
row("custom-attribute-frequency-type-float", ca(frequency=1.0), TypeError, CA, "frequency")
row("custom-attribute-frequency-oob", ca(frequency=99), ValueError, CA, "frequency")
row("custom-attribute-dtype-type-str", ca(dtype="float"), TypeError, CA, "dtype")
row("custom-attribute-dtype-unhashable", ca(dtype=[float]), TypeError, CA, "dtype")
row("custom-attribute-namespace-type-int", ca(namespace=3), TypeError, CA, "namespace")
row("custom-attribute-namespace-not-identifier", ca(namespace="a b"), ValueError, CA, "namespace")
row("custom-attribute-assignment-oob", ca(assignment=7), ValueError, CA, "assignment")
row("custom-attribute-assignment-type-str", ca(assignment="state"), TypeError, CA, "assignment")
row("custom-attribute-values-type-list", ca(values=[1.0]), TypeError, CA, "values")
row("custom-attribute-values-index-oob", ca(values={5: 1.0}), ValueError, CA, "index")
row("custom-attribute-values-value-str", ca(values={0: "a"}), TypeError, CA, "x")
row("custom-attribute-references-unknown", ca(dtype=int, references="bodies"), ValueError, CA, "references")
row("custom-attribute-references-float", ca(dtype=float, references="body"), TypeError, CA, "references")
# Default values: the message names the attribute ('x').
for tag, kw, exc in (
    ("float-type-str", dict(dtype=float, default="0"), TypeError),
    ("float-type-list", dict(dtype=float, default=[0.0]), TypeError),
    ("float-nan", dict(dtype=float, default=NAN), ValueError),
    ("float-inf", dict(dtype=float, default=INF), ValueError),
    ("int-type-float", dict(dtype=int, default=0.5), TypeError),
    ("int-type-bool", dict(dtype=int, default=False), TypeError),
    ("vec3-type-float", dict(dtype="vec3", default=1.0), TypeError),
    ("vec3-empty", dict(dtype="vec3", default=()), ValueError),
    ("vec3-inf", dict(dtype="vec3", default=(0.0, INF, 0.0)), ValueError),
):
    row(f"custom-attribute-default-{tag}", ca(**kw), exc, CA, "x")

# set_custom_attribute ------------------------------------------------------------------------------------------
SCA = r"set_custom_attribute"
row("set-custom-name-unknown", lambda b: b.set_custom_attribute("zz", 0, 1.0), ValueError, SCA, "zz")
row("set-custom-name-type-none", lambda b: b.set_custom_attribute(None, 0, 1.0), TypeError, SCA, "name")
row("set-custom-name-type-list", lambda b: b.set_custom_attribute(["m"], 0, 1.0), TypeError, SCA, "name")
indices("set-custom", SCA, "index", lambda b, v: b.set_custom_attribute("m", v, 1.0), N_BODY, allow_world=False)
reals("set-custom-m", SCA, "m", lambda b, v: b.set_custom_attribute("m", 0, v))
vec3s("set-custom-v", SCA, "v", lambda b, v: b.set_custom_attribute("v", 0, v))
for tag, v in (("type-float", 1.5), ("type-bool", True), ("type-str", "1"), ("type-nan", NAN)):
    row(f"set-custom-k-{tag}", lambda b, v=v: b.set_custom_attribute("k", 0, v), TypeError, SCA, "k")

# add_tendon and TendonGuide fields (classes not already in tests/builder/test_tendon_builder.py) --------------------------
TEN = r"add_tendon\(label=None\)"


def route(**change):
    """A valid three-guide route whose middle guide gets ``change``."""
    return [TendonGuide(body=0), TendonGuide(**{"body": 1, **change}), TendonGuide(body=2)]


for tag, v in (("type-none", None), ("type-int", 5), ("type-str", "ab"), ("type-dict", {0: TendonGuide(body=0)})):
    row(f"tendon-route-{tag}", lambda b, v=v: b.add_tendon(v), TypeError, TEN, "route")
row("tendon-route-item-none", lambda b: b.add_tendon([TendonGuide(body=0), None]), TypeError, TEN, "guide 1")
row("tendon-custom-attributes-type-str", lambda b: b.add_tendon(route(), custom_attributes="m"), TypeError, TEN,
    "custom attributes")  # fmt: skip
for tag, v in (("type-str", "0"), ("type-none", None), ("type-bool", True)):
    row(f"guide-body-{tag}", lambda b, v=v: b.add_tendon(route(body=v)), TypeError, TEN, "body")
for param in ("radius", "mu", "compliance", "damping", "rest_length"):
    for tag, v in (("type-none", None), ("type-list", [0.1]), ("type-bool", True)):
        row(f"guide-{param}-{tag}", lambda b, v=v, param=param: b.add_tendon(route(**{param: v})), TypeError, TEN,
            param)  # fmt: skip
for param in ("radius", "mu", "compliance", "damping"):
    row(f"guide-{param}--inf", lambda b, param=param: b.add_tendon(route(**{param: -INF})), ValueError, TEN, param)
for param in ("offset", "axis"):
    for tag, v, exc in (("type-int", 3, TypeError), ("empty", (), ValueError)):
        row(f"guide-{param}-{tag}", lambda b, v=v, param=param: b.add_tendon(route(**{param: v})), exc, TEN, param)
row("guide-guide_type-type-none", lambda b: b.add_tendon(route(guide_type=None)), TypeError, TEN, "guide_type")
row("guide-guide_type-type-float", lambda b: b.add_tendon(route(guide_type=float(TendonGuideType.PINHOLE))), TypeError,
    TEN, "guide_type")  # fmt: skip
row("guide-orientation-type-str", lambda b: b.add_tendon(route(orientation="1")), TypeError, TEN, "orientation")
row("guide-orientation-type-float", lambda b: b.add_tendon(route(orientation=1.0)), TypeError, TEN, "orientation")
row("guide-dynamic-type-none", lambda b: b.add_tendon(route(dynamic=None)), TypeError, TEN, "dynamic")
row("guide-custom_attributes-type-str", lambda b: b.add_tendon(route(custom_attributes="m")), TypeError, TEN,
    "custom attributes")  # fmt: skip

# add_builder / add_world / replicate -----------------------------------------------------------------------------
AB = r"add_builder"
for tag, v in (("type-str", "b"), ("type-none", None)):
    row(f"add-builder-other-{tag}", lambda b, v=v: b.add_builder(v), TypeError, AB, "other")
xforms("add-builder", AB, "xform", lambda b, v: b.add_builder(small(), xform=v))
for tag, v in (("type-str", "0"), ("type-float", 0.0)):
    row(f"add-builder-world-{tag}", lambda b, v=v: b.add_builder(small(), world=v), TypeError, AB, "world")
# label_prefix=None is newton's default (no prefix), so it is accepted.
for tag, v in (("type-int", 5), ("type-bytes", b"w/")):
    row(f"add-builder-label_prefix-{tag}", lambda b, v=v: b.add_builder(small(), label_prefix=v), TypeError, AB,
        "label_prefix")  # fmt: skip


def labelled(kind: str) -> ModelBuilder:
    """A builder whose transmission tendon or coupling label clashes with ``scene()``'s."""
    s = ModelBuilder()
    p = s.add_link(mass=1.0, inertia=np.eye(3))
    s.add_joint_revolute(-1, p, axis=(0.0, 0.0, 1.0))
    s.add_fixed_tendon([0], [1.0], label="fx" if kind == "transmission" else "other")
    if kind == "coupling":
        s.add_tendon_coupling(0, None, [0.0, 1.0], label="cp")
    return s


for kind in ("transmission", "coupling"):
    row(f"add-builder-{kind}-label-clash", lambda b, k=kind: b.add_builder(labelled(k)), ValueError, AB, "label")
AW = r"add_world|add_builder"
for tag, v in (("type-str", "b"), ("type-int", 5)):
    row(f"add-world-other-{tag}", lambda b, v=v: b.add_world(v), TypeError, AW, "other")
xforms("add-world", AW, "xform", lambda b, v: b.add_world(small(), xform=v))
REP = r"replicate"
row("replicate-builder-type-none", lambda b: b.replicate(None, 2), TypeError, REP, "builder")
for tag, v in (("type-str", "2"), ("type-none", None)):
    row(f"replicate-world_count-{tag}", lambda b, v=v: b.replicate(small(), v), TypeError, REP, "world_count")
vec3s("replicate", REP, "spacing", lambda b, v: b.replicate(small(), 2, spacing=v))

# finalize --------------------------------------------------------------------------------------------------------
for tag, v in (("type-int", 5), ("unknown", "nope")):
    row(f"finalize-device-{tag}", lambda b, v=v: b.finalize(device=v), (TypeError, ValueError), r"finalize", "device")
row("finalize-requires_grad-type-str", lambda b: b.finalize(device="cpu", requires_grad="no"), TypeError, r"finalize",
    "requires_grad")  # fmt: skip

# add_spatial_tendon ----------------------------------------------------------------------------------------------
SPT = r"add_spatial_tendon\(tendon 2\)"
S0, S1 = TendonSite(body=-1), TendonSite(body=2, offset=(0.0, 0.0, 0.1))


DEFAULT = object()


def spatial(path=DEFAULT, **kw):
    return lambda b: b.add_spatial_tendon([S0, S1] if path is DEFAULT else path, **kw)


for tag, v in (("type-none", None), ("type-int", 5), ("type-str", "ab"), ("type-set", {S0, S1})):
    row(f"spatial-path-{tag}", spatial(v), TypeError, SPT, "path")
row("spatial-path-empty", spatial([]), ValueError, SPT, "path")
row("spatial-path-item-none", spatial([S0, None, S1]), TypeError, SPT, "element 1")
for tag, v in (("type-str", "0"), ("type-none", None), ("type-bool", True), ("type-float", 1.0)):
    row(f"spatial-site-body-{tag}", spatial([TendonSite(body=v), S1]), TypeError, SPT, "body")
for tag, v in (("oob-high", N_BODY), ("oob-low", -2)):
    row(f"spatial-site-body-{tag}", spatial([S0, TendonSite(body=v)]), ValueError, SPT, "body")
for tag, v in WRONG_VEC3:
    row(f"spatial-site-offset-{tag}", spatial([TendonSite(offset=v), S1]), TypeError, SPT, "offset")
for tag, v in BAD_VEC3:
    row(f"spatial-site-offset-{tag}", spatial([TendonSite(offset=v), S1]), ValueError, SPT, "offset")


def wrap(**kw):
    kw.setdefault("kind", "cylinder")
    kw.setdefault("radius", 0.05)
    kw.setdefault("offset", (0.5, 0.0, 1.0))
    return spatial([S0, TendonWrap(**kw), S1])


for tag, v in (("type-none", None), ("type-bytes", b"sphere")):
    row(f"spatial-wrap-kind-{tag}", wrap(kind=v), TypeError, SPT, "kind")
row("spatial-wrap-kind-empty", wrap(kind=""), ValueError, SPT, "kind")
for tag, v in (("type-str", "0.1"), ("type-none", None), ("type-list", [0.1])):
    row(f"spatial-wrap-radius-{tag}", wrap(radius=v), TypeError, SPT, "radius")
for tag, v in (("inf", INF), ("-inf", -INF)):
    row(f"spatial-wrap-radius-{tag}", wrap(radius=v), ValueError, SPT, "radius")
for tag, v in (("type-str", "0"), ("type-none", None), ("type-bool", False)):
    row(f"spatial-wrap-body-{tag}", wrap(body=v), TypeError, SPT, "body")
row("spatial-wrap-body-oob-high", wrap(body=N_BODY), ValueError, SPT, "body")
for param in ("offset", "axis"):
    for tag, v in WRONG_VEC3:
        row(f"spatial-wrap-{param}-{tag}", wrap(**{param: v}), TypeError, SPT, param)
    for tag, v in BAD_VEC3:
        row(f"spatial-wrap-{param}-{tag}", wrap(**{param: v}), ValueError, SPT, param)
row("spatial-wrap-side-type-int", wrap(side=5), TypeError, SPT, "side")
row("spatial-wrap-side-body-oob-low", wrap(side=TendonSite(body=-2)), ValueError, SPT, "side site body")
row("spatial-wrap-side-body-type-float", wrap(side=TendonSite(body=0.0)), TypeError, SPT, "side site body")
row("spatial-wrap-side-offset-empty", wrap(side=TendonSite(offset=())), ValueError, SPT, "side site offset")


def pulley(v):
    return spatial([S0, S1, TendonPulley(divisor=v), S0, S1])


for tag, v in (("type-none", None), ("type-list", [2.0])):
    row(f"spatial-pulley-divisor-{tag}", pulley(v), TypeError, SPT, "divisor")
for tag, v in (("nan", NAN), ("-inf", -INF)):
    row(f"spatial-pulley-divisor-{tag}", pulley(v), ValueError, SPT, "divisor")

PROPS_FINITE = ("stiffness", "damping", "activation_time", "position_gain", "velocity_gain", "limit_margin",
                "limit_compliance", "friction_loss", "friction_compliance", "armature", "width",
                "position_correction", "drive_force", "target_velocity")  # fmt: skip
PROPS_NONE_OK = ("spring_lower", "spring_upper", "target_length")
PROPS_INF_OK = ("lower_limit", "upper_limit", "actuation_lower", "actuation_upper")
for param in PROPS_FINITE + PROPS_NONE_OK + PROPS_INF_OK:
    reals("spatial", SPT, param, lambda b, v, param=param: spatial(**{param: v})(b), none_ok=param in PROPS_NONE_OK,
          allow_inf=param in PROPS_INF_OK)  # fmt: skip
row("spatial-enabled-type-int", spatial(enabled=1), TypeError, SPT, "enabled")
row("spatial-enabled-type-none", spatial(enabled=None), TypeError, SPT, "enabled")
row("spatial-label-type-int", spatial(label=7), TypeError, SPT, "label")
row("spatial-label-empty", spatial(label=""), ValueError, SPT, "label")
row("spatial-label-taken", spatial(label="sp"), ValueError, SPT, "label")

# add_fixed_tendon ------------------------------------------------------------------------------------------------
FXT = r"add_fixed_tendon\(tendon 2\)"
for tag, v in (("type-none", None), ("type-int", 0), ("type-str", "01"), ("type-set", {0})):
    row(f"fixed-joints-{tag}", lambda b, v=v: b.add_fixed_tendon(v, [1.0]), TypeError, FXT, "joints")
row("fixed-joints-empty", lambda b: b.add_fixed_tendon([], []), ValueError, FXT, "joint")
for tag, v in (("type-str", "0"), ("type-float", 0.0), ("type-bool", False), ("type-none", None)):
    row(f"fixed-joints-item-{tag}", lambda b, v=v: b.add_fixed_tendon([v], [1.0]), TypeError, FXT, "joints")
for tag, v in (("oob-high", N_JOINT), ("oob-low", -1)):
    row(f"fixed-joints-item-{tag}", lambda b, v=v: b.add_fixed_tendon([v], [1.0]), ValueError, FXT, "joints")
for tag, v in (("type-none", None), ("type-str", "1"), ("type-float", 1.0)):
    row(f"fixed-coefficients-seq-{tag}", lambda b, v=v: b.add_fixed_tendon([0], v), TypeError, FXT, "coefficients")
row("fixed-coefficients-seq-empty", lambda b: b.add_fixed_tendon([0], []), ValueError, FXT, "coefficients")
reals("fixed", FXT, "coefficients", lambda b, v: b.add_fixed_tendon([0], [v]))
reals("fixed", FXT, "stiffness", lambda b, v: b.add_fixed_tendon([0], [1.0], stiffness=v))
row("fixed-label-type-int", lambda b: b.add_fixed_tendon([0], [1.0], label=7), TypeError, FXT, "label")
row("fixed-label-taken", lambda b: b.add_fixed_tendon([0], [1.0], label="fx"), ValueError, FXT, "label")

# add_tendon_coupling ---------------------------------------------------------------------------------------------
CPL = r"add_tendon_coupling\(coupling 1\)"
indices("coupling", CPL, "first", lambda b, v: b.add_tendon_coupling(v, 1, [0.0, 1.0]), N_TRANSMISSION,
        allow_world=False)  # fmt: skip
indices("coupling", CPL, "second", lambda b, v: b.add_tendon_coupling(0, v, [0.0, 1.0]), N_TRANSMISSION,
        allow_world=False, none_ok=True)  # fmt: skip
for tag, v in (("type-none", None), ("type-str", "01"), ("type-float", 1.0)):
    row(
        f"coupling-coefficients-seq-{tag}",
        lambda b, v=v: b.add_tendon_coupling(0, 1, v),
        TypeError,
        CPL,
        "coefficients",
    )
row("coupling-coefficients-seq-empty", lambda b: b.add_tendon_coupling(0, 1, []), ValueError, CPL, "coefficients")
reals("coupling", CPL, "coefficients", lambda b, v: b.add_tendon_coupling(0, 1, [0.0, v]))
reals("coupling", CPL, "compliance", lambda b, v: b.add_tendon_coupling(0, 1, [0.0], v))
reals("coupling", CPL, "position_correction", lambda b, v: b.add_tendon_coupling(0, 1, [0.0], position_correction=v))
row("coupling-enabled-type-none", lambda b: b.add_tendon_coupling(0, 1, [0.0], enabled=None), TypeError, CPL,
    "enabled")  # fmt: skip
row("coupling-label-type-int", lambda b: b.add_tendon_coupling(0, 1, [0.0], label=7), TypeError, CPL, "label")
row("coupling-label-empty", lambda b: b.add_tendon_coupling(0, 1, [0.0], label=""), ValueError, CPL, "label")
row("coupling-label-taken", lambda b: b.add_tendon_coupling(0, 1, [0.0], label="cp"), ValueError, CPL, "label")

# float32 range (issue 24, item 7) --------------------------------------------------------------------------------
# The model stores every float in float32: a finite value beyond 3.4e38 would become inf, and a moving body whose
# mass or inertia is so small that its inverse overflows float32 got body_inv_mass = inf (NaN after one step).
# Each row was accepted on 72040d5.
BIG = 1e39  # finite in float64, inf in float32 (float32 max 3.4028235e38)
SPH = r"add_shape_sphere\(label=None\)"
X = r"add_body\(label='x'\)"
row("f32-body-mass-inverse", lambda b: b.add_body(mass=1e-40, inertia=np.eye(3), label="x"), ValueError, X, "mass")
row("f32-body-mass-subnormal", lambda b: b.add_body(mass=5e-324, label="x"), ValueError, X, "mass")  # 1/m = inf
row("f32-body-mass-big", lambda b: b.add_body(mass=BIG, label="x"), ValueError, X, "mass")
row("f32-body-xform-big", lambda b: b.add_body(xform=(BIG, 0, 0, 0, 0, 0, 1), mass=1.0, label="x"), ValueError, X,
    "xform")  # fmt: skip
row("f32-body-com-big", lambda b: b.add_body(com=(0.0, 0.0, -BIG), label="x"), ValueError, X, "com")
row("f32-body-velocity-big", lambda b: b.add_body(velocity=(0, 0, 0, BIG, 0, 0), label="x"), ValueError, X,
    "velocity")  # fmt: skip
row("f32-body-inertia-big", lambda b: b.add_body(mass=1.0, inertia=np.eye(3) * BIG, label="x"), ValueError, X,
    "inertia")  # fmt: skip
# An isotropic 1e-39 kg m^2 is regular (inertia.INVERTIBLE_RATIO), so its inverse 1e39 is computed and overflows.
row("f32-body-inertia-inverse", lambda b: b.add_body(mass=1.0, inertia=np.eye(3) * 1e-39, label="x"),
    ValueError, X, "inertia")  # fmt: skip


def with_massless() -> ModelBuilder:
    """``scene()`` plus a massless body 'e' (index 3): its mass comes only from the shapes the row adds."""
    b = scene()
    b.add_body(label="e")
    return b


# The sphere's mass: 4/3 pi r^3 density, 4.2e-44 kg here, and 4.2e-87 kg for r = 1e-30 at the default 1000 kg/m^3.
E = r"body 'e' \(index 3\)"
row("f32-sphere-density-tiny", lambda b: b.add_shape_sphere(3, radius=1.0, density=1e-44), ValueError, SPH + ".*" + E,
    "density", make=with_massless)  # fmt: skip
row("f32-sphere-radius-tiny", lambda b: b.add_shape_sphere(3, radius=1e-30), ValueError, SPH + ".*" + E, "density",
    make=with_massless)  # fmt: skip
row("f32-sphere-mass-tiny", lambda b: b.add_shape_sphere(3, radius=0.1, mass=1e-40), ValueError, SPH + ".*" + E,
    "mass", make=with_massless)  # fmt: skip
row("f32-sphere-radius-big", lambda b: b.add_shape_sphere(-1, radius=BIG), ValueError, SPH, "radius")
row("f32-sphere-radius-zero-in-f32", lambda b: b.add_shape_sphere(-1, radius=1e-50), ValueError, SPH, "radius")
row("f32-box-mass-big", lambda b: b.add_shape_box(3, hx=10.0, hy=10.0, hz=10.0, density=1e38), ValueError,
    r"add_shape_box\(label=None\).*" + E, "mass", make=with_massless)  # fmt: skip
row("f32-joint-target_ke-big", lambda b: b.add_joint_revolute(-1, 2, target_ke=BIG), ValueError,
    r"add_joint_revolute", "target_ke")  # fmt: skip
row("f32-joint-limit_upper-big", lambda b: b.add_joint_revolute(-1, 2, limit_upper=BIG), ValueError,
    r"add_joint_revolute", "limit_upper")  # fmt: skip
row("f32-guide-radius-big", lambda b: b.add_tendon(route(radius=BIG)), ValueError, TEN, "radius")
row("f32-guide-offset-big", lambda b: b.add_tendon(route(offset=(0.0, BIG, 0.0))), ValueError, TEN, "offset")
row("f32-custom-value-big", lambda b: b.set_custom_attribute("m", 0, BIG), ValueError, SCA, "m")
row("f32-add-builder-xform-big", lambda b: b.add_builder(small(), xform=(0, 0, BIG, 0, 0, 0, 1)), ValueError, AB,
    "xform")  # fmt: skip
row("f32-replicate-spacing-big", lambda b: b.replicate(small(), 2, spacing=(BIG, 0, 0)), ValueError, REP, "spacing")


def scene_with(edit: Callable) -> Callable:
    """A ``make`` for rows: ``scene()`` with ``edit(b)`` applied to its lists directly (as a loader or a user script
    may), so that only finalize can catch the value."""

    def make():
        b = scene()
        edit(b)
        return b

    return make


def far_body() -> ModelBuilder:
    """A body at x = 3e38: the value fits float32."""
    far = ModelBuilder()
    far.add_body(xform=(3e38, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3), label="far")
    return far


FIN = r"finalize"
row("f32-finalize-edited-mass", lambda b: b.finalize(), ValueError, FIN + r": body 'b1' \(index 1\)", "mass",
    make=scene_with(lambda b: b.body_mass.__setitem__(1, 1e-40)))  # fmt: skip
row("f32-finalize-edited-gravity", lambda b: b.finalize(), ValueError, FIN, "gravity",
    make=scene_with(lambda b: setattr(b, "gravity", (0.0, 0.0, -BIG))))  # fmt: skip
# Added 3e38 further by add_builder, the sum (6e38) does not fit; body poses are float32 wp.transform values, so
# add_builder checks the placed pose before it stores it.
row("f32-add-builder-summed-position", lambda b: b.add_builder(far_body(), xform=(3e38, 0, 0, 0, 0, 0, 1)), ValueError,
    r"add_builder: body 'far' \(index 3\)", "placed position")  # fmt: skip
row("f32-finalize-transmission-stiffness", lambda b: b.finalize(), ValueError,
    FIN + r": transmission tendon 'sp' \(index 1\)", "stiffness",
    make=scene_with(lambda b: b.transmission_properties[1].update(stiffness=BIG)))  # fmt: skip
row("f32-finalize-custom-value", lambda b: b.finalize(), ValueError, FIN + r": custom attribute 'm'\[0\]", "m",
    make=scene_with(lambda b: b.custom_attribute_values["m"].update({0: BIG})))  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------------------------


def changed(before: dict, b: ModelBuilder) -> list[str]:
    """Names of builder attributes that differ from a ``copy.deepcopy(vars(b))`` snapshot."""
    after = vars(b)
    return sorted(
        k for k in before.keys() | after.keys() if k not in before or k not in after or not same(before[k], after[k])
    )


def test_row_ids_are_unique():
    ids = [p.id for p in ROWS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


@pytest.mark.parametrize("case", ROWS)
def test_bad_input_raises_named_error_and_leaves_builder_unchanged(case: Bad):
    """The call raises the documented exception type, the message names the entry point and the parameter,
    and every builder attribute is exactly as before."""
    b = case.make()
    before = copy.deepcopy(vars(b))
    problems = []
    try:
        result = case.call(b)
    except case.exc as e:
        msg = str(e)
        if not re.search(case.owner, msg):
            problems.append(f"entry point /{case.owner}/ not named")
        if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(case.param)}(?![A-Za-z0-9_])", msg):
            problems.append(f"parameter '{case.param}' not named")
        if problems:
            problems.append(f"message: {type(e).__name__}: {msg}")
    except Exception as e:  # the wrong exception type
        problems.append(f"expected {case.exc}, got {type(e).__name__}: {e}")
    else:
        problems.append(f"accepted the bad input (returned {result!r})")
    diff = changed(before, b)
    if diff:
        problems.append(f"builder changed: {diff}")
    assert not problems, "; ".join(problems)


MB = r"ModelBuilder"
INIT_ROWS = [
    pytest.param({"up_axis": None}, TypeError, "up_axis", id="up_axis-type-none"),
    pytest.param({"up_axis": 2.0}, TypeError, "up_axis", id="up_axis-type-float"),
    pytest.param({"up_axis": True}, TypeError, "up_axis", id="up_axis-type-bool"),
    pytest.param({"up_axis": 3}, ValueError, "up_axis", id="up_axis-int-out-of-range"),
    pytest.param({"up_axis": "W"}, ValueError, "up_axis", id="up_axis-unknown-letter"),
    pytest.param({"up_axis": ["Z"]}, TypeError, "up_axis", id="up_axis-type-list"),
    pytest.param({"up_axis": ""}, ValueError, "up_axis", id="up_axis-empty"),
    pytest.param({"gravity": "abc"}, TypeError, "gravity", id="gravity-type-str"),
    pytest.param({"gravity": True}, TypeError, "gravity", id="gravity-type-bool"),
    pytest.param({"gravity": INF}, ValueError, "gravity", id="gravity-inf"),
    pytest.param({"gravity": ()}, ValueError, "gravity", id="gravity-empty"),
    pytest.param({"gravity": (0.0, 0.0, INF)}, ValueError, "gravity", id="gravity-vector-inf"),
    pytest.param({"gravity": (0.0, 0.0, -9.81, 0.0)}, ValueError, "gravity", id="gravity-len4"),
    pytest.param({"gravity": 1e39}, ValueError, "gravity", id="gravity-f32-big"),
    pytest.param({"gravity": (0.0, 1e39, 0.0)}, ValueError, "gravity", id="gravity-vector-f32-big"),
]


@pytest.mark.parametrize(("kwargs", "exc", "param"), INIT_ROWS)
def test_model_builder_init_rejects_bad_input(kwargs, exc, param):
    """ModelBuilder(...) raises the documented type naming ModelBuilder and the parameter."""
    with pytest.raises(exc) as info:
        ModelBuilder(**kwargs)
    msg = str(info.value)
    assert re.search(MB, msg) and param in msg, msg


def test_color_takes_no_input_and_handles_an_empty_builder():
    """color() has no parameters; on an empty builder it gives 0 colours and an empty colouring."""
    b = ModelBuilder()
    assert b.color() == 0
    assert b.body_color == []


# ---------------------------------------------------------------------------------------------------------------
# Run-time input: non-finite forces and a bad step size (issue 24, item 6)
# ---------------------------------------------------------------------------------------------------------------

RUN_DT = 0.01


def run_scene(solver: str):
    """A pendulum (body ``p`` on a revolute joint about world Z, 0.5 m from its hinge, so gravity does not swing
    it) and a free body ``f``; default solver settings (default iterations, compliance 0, one world)."""
    b = ModelBuilder()
    p = b.add_body(xform=(0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.1, label="p")
    b.add_body(xform=(2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.1, label="f")
    b.add_joint_revolute(-1, p, parent_xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
                         child_xform=(-0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), axis=(0.0, 0.0, 1.0))  # fmt: skip
    if solver == "vbd":
        b.color()
    model = b.finalize()
    return model, SOLVERS[solver](model)


def state_arrays(state) -> dict:
    return {k: v.numpy().copy() for k, v in vars(state).items() if hasattr(v, "numpy") and v.shape[0]}


BAD_FORCES = [
    pytest.param("joint_f", NAN, id="joint_f-nan"),
    pytest.param("joint_f", INF, id="joint_f-inf"),
    pytest.param("joint_f", -INF, id="joint_f--inf"),
    pytest.param("body_f", (NAN, 0.0, 0.0, 0.0, 0.0, 0.0), id="body_f-force-nan"),
    pytest.param("body_f", (0.0, INF, 0.0, 0.0, 0.0, 0.0), id="body_f-force-inf"),
    pytest.param("body_f", (0.0, 0.0, 0.0, 0.0, 0.0, -INF), id="body_f-torque--inf"),
]


@pytest.mark.parametrize(("array", "value"), BAD_FORCES)
def test_non_finite_force_counts_as_zero_for_the_step(solver, array, value):
    """A NaN or inf in ``Control.joint_f`` or ``State.body_f`` is ignored for that step (docs/robustness.md,
    "Run-time input"): the step gives bitwise the state of a zero-force step (same kernels, same float32
    operations, so no tolerance), and the next step, with the force cleared, moves the bodies as a zero-force
    step does. On 72040d5 the NaN reached body_qd (and stayed there), inf gave inf or NaN velocities."""
    model, sim = run_scene(solver)
    runs = {}
    for bad in (False, True):
        s0, s1, s2 = model.state(), model.state(), model.state()
        control = model.control()
        if bad:
            if array == "joint_f":
                control.joint_f.fill_(value)
            else:
                s0.body_f.assign(np.array([value, value], dtype=np.float32))
        sim.step(s0, s1, control, None, RUN_DT)
        after_one = state_arrays(s1)
        control.joint_f.zero_()
        s1.clear_forces()
        sim.step(s1, s2, control, None, RUN_DT)
        runs[bad] = (after_one, state_arrays(s2))
    for step in (0, 1):
        for name, clean in runs[False][step].items():
            got = runs[True][step][name]
            assert np.all(np.isfinite(got)), f"step {step + 1}: {name} not finite: {got}"
            np.testing.assert_array_equal(got, clean, err_msg=f"step {step + 1}: {name}")


# The hinge rows of one step at the default iterations leave the swing rate 1.6e-4 relative off the rigid-body value
# on XPBD (5e-7 on VBD); 1e-3 bounds that with margin and still fails if the force were dropped or doubled.
SWING_RTOL = 1e-3
# Free body: v = F dt / m in float32 (0.03 m/s, ulp 1.9e-9); measured error 6.7e-10 m/s.
FREE_ATOL = 1e-8


def test_finite_forces_still_act(solver):
    """The guard drops only non-finite values: 2 N m of joint_f on the pendulum (inertia about the hinge
    I = 0.1 + 1 * 0.5^2 = 0.35 kg m^2, parallel-axis theorem) gives omega_z = tau dt / I after one step (the
    prediction v += dt tau / I, docs/xpbd.md), and 3 N along x on the free 1 kg body gives v_x = F dt / m."""
    model, sim = run_scene(solver)
    s0, s1 = model.state(), model.state()
    control = model.control()
    control.joint_f.fill_(2.0)
    s0.body_f.assign(np.array([[0.0] * 6, [3.0, 0.0, 0.0, 0.0, 0.0, 0.0]], dtype=np.float32))
    sim.step(s0, s1, control, None, RUN_DT)
    qd = s1.body_qd.numpy().astype(np.float64)
    assert qd[0, 5] == pytest.approx(2.0 * RUN_DT / 0.35, rel=SWING_RTOL)
    assert qd[1, 0] == pytest.approx(3.0 * RUN_DT / 1.0, abs=FREE_ATOL)


BAD_DT = [
    pytest.param(NAN, ValueError, id="nan"),
    pytest.param(INF, ValueError, id="inf"),
    pytest.param(-INF, ValueError, id="-inf"),
    pytest.param(0.0, ValueError, id="zero"),
    pytest.param(-1e-3, ValueError, id="negative"),
    pytest.param(1e-39, ValueError, id="float32-subnormal"),
    pytest.param(1e39, ValueError, id="float32-overflow"),
    pytest.param("0.01", TypeError, id="type-str"),
    pytest.param(True, TypeError, id="type-bool"),
]


@pytest.mark.parametrize(("dt", "exc"), BAD_DT)
def test_step_rejects_bad_dt_before_writing(solver, dt, exc):
    """step() checks dt on the host before any launch: NaN, inf, 0, negative or a value outside the normal
    float32 range raises, names the solver and dt, and leaves state_out exactly as it was (here: the state
    after one good step, so every array holds non-default values)."""
    model, sim = run_scene(solver)
    s0, s1 = model.state(), model.state()
    control = model.control()
    control.joint_f.fill_(1.0)
    sim.step(s0, s1, control, None, RUN_DT)
    before = state_arrays(s0)
    with pytest.raises(exc, match=rf"Solver{solver.upper()}\.step: dt"):
        sim.step(s1, s0, control, None, dt)
    after = state_arrays(s0)
    for name, arr in before.items():
        np.testing.assert_array_equal(after[name], arr, err_msg=name)


# ---------------------------------------------------------------------------------------------------------------
# float32 range through the importers (issue 24, item 7): MJCF and USD build through the builder, so they inherit
# its rule; each case gave body_inv_mass = inf on 72040d5.
# ---------------------------------------------------------------------------------------------------------------

MJCF_TINY = {
    # 4/3 pi (1e-30)^3 * 1000 kg/m^3 (MuJoCo's default density) = 4.2e-87 kg: 1/m overflows float32.
    "sphere-size-1e-30": ('<geom name="g" type="sphere" size="1e-30"/>', r"<geom name='g'>.*add_shape_sphere.*density"),
    "inertial-mass-1e-40": (
        '<inertial pos="0 0 0" mass="1e-40" diaginertia="1 1 1"/><geom type="sphere" size="0.1" mass="0"/>',
        r"<body name='ball'>.*add_body.*mass 1e-40",
    ),
    "geom-mass-1e-40": ('<geom name="g" type="sphere" size="0.1" mass="1e-40"/>', r"<geom name='g'>.*mass"),
}


@pytest.mark.parametrize("case", list(MJCF_TINY), ids=list(MJCF_TINY))
def test_mjcf_mass_outside_float32_is_rejected(case):
    """A free MJCF body whose mass has no finite float32 inverse raises ValueError naming the element and the
    parameter, and the builder stays empty."""
    body, pattern = MJCF_TINY[case]
    xml = f'<mujoco><worldbody><body name="ball" pos="0 0 1"><freejoint/>{body}</body></worldbody></mujoco>'
    b = ModelBuilder()
    before = copy.deepcopy(vars(b))
    with pytest.raises(ValueError, match=pattern):
        b.add_mjcf(xml)
    assert not changed(before, b)


def test_usd_meters_per_unit_outside_float32_is_rejected():
    """metersPerUnit 1e-30 scales a 0.5-unit cube (density 1000 kg/m^3, the USD default) to 1.25e-88 kg, whose
    inverse overflows float32: ValueError naming the prim, the builder unchanged."""
    from pxr import Usd  # usd-core is a dependency of newton_tendon

    text = """#usda 1.0
(
    upAxis = "Z"
    metersPerUnit = 1e-30
)
def Cube "Body" (
    prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI", "PhysicsMassAPI"]
)
{
    double size = 0.5
}
"""
    stage = Usd.Stage.CreateInMemory()
    assert stage.GetRootLayer().ImportFromString(text)
    b = ModelBuilder()
    before = copy.deepcopy(vars(b))
    with pytest.raises(ValueError, match=r"'/Body'.*float32"):
        b.add_usd(stage)
    assert not changed(before, b)


def test_float32_edge_values_are_accepted():
    """The rule rejects only what float32 cannot hold: float32 max itself, a subnormal position (it rounds to 0,
    which is harmless), and the smallest moving mass whose inverse fits (3e-39 kg: 1/m = 3.3e38) all finalize,
    and the model holds finite values."""
    b = ModelBuilder(gravity=(0.0, 0.0, -3.4028234e38))
    b.add_body(xform=(1e-50, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=3e-39, inertia=np.eye(3), label="light")
    b.add_body(xform=(3.4028234e38, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, label="far")
    m = b.finalize()
    for name in ("body_q", "body_mass", "body_inv_mass", "body_inv_inertia", "gravity"):
        assert np.all(np.isfinite(getattr(m, name).numpy())), name


# ---------------------------------------------------------------------------------------------------------------
# float32 range of in-place body edits: notify_model_changed(BODY_PROPERTIES) and rl.set_per_world apply finalize's
# rule (newton_tendon.inertia.checked_inverse_mass_arrays). On 2c32aed a mass of 1e-40 kg or an inertia of 1e-44
# kg m^2 written into the model gave body_inv_mass/body_inv_inertia = inf and NaN after one step.
# ---------------------------------------------------------------------------------------------------------------


def model_arrays(model) -> dict:
    return {k: v.numpy().copy() for k, v in vars(model).items() if isinstance(v, wp.array)}


def model_changes(before: dict, model) -> list[str]:
    after = model_arrays(model)
    return [k for k in before if not np.array_equal(before[k], after[k], equal_nan=True)]


TINY_BODY_EDITS = {
    # float32 keeps 1e-40 as a subnormal (9.99995e-41); its inverse 1e40 exceeds float32 max 3.4e38.
    "mass-1e-40": ("body_mass", 1e-40, r"mass .* too small for float32"),
    # 1e-44 rounds to the subnormal 9.8e-45; the inverse 1e44 overflows.
    "inertia-1e-44": ("body_inertia", np.eye(3) * 1e-44, r"inertia is too small for float32"),
}


@pytest.mark.parametrize("case", list(TINY_BODY_EDITS), ids=list(TINY_BODY_EDITS))
def test_notify_rejects_body_edit_outside_float32(solver, case):
    """``notify_model_changed(BODY_PROPERTIES)`` rejects an edited mass or inertia whose inverse overflows float32,
    by the rule ``finalize`` applies: ValueError naming the solver, the body and the rule, and no model array
    changes (the inverse arrays keep the last accepted values); the solver still steps to a finite state."""
    key, value, rule = TINY_BODY_EDITS[case]
    model, sim = run_scene(solver)
    arr = getattr(model, key).numpy()
    arr[1] = value
    getattr(model, key).assign(arr)
    before = model_arrays(model)
    with pytest.raises(ValueError, match=rf"{type(sim).__name__}\.notify_model_changed: body 'f' \(index 1\): {rule}"):
        sim.notify_model_changed(ModelFlags.BODY_PROPERTIES)
    assert model_changes(before, model) == []
    assert model.body_inv_mass.numpy()[1] == 1.0
    s0, s1 = model.state(), model.state()
    sim.step(s0, s1, model.control(), None, RUN_DT)
    assert np.all(np.isfinite(s1.body_q.numpy())) and np.all(np.isfinite(s1.body_qd.numpy()))


def test_notify_checks_every_flag_before_writing(solver):
    """With several flags, every group is validated before any derived array is written: a valid mass edit
    together with an invalid transmission edit (a negative stiffness) raises and leaves ``body_inv_mass`` as it
    was, and a NaN spring endpoint (which notify would restore to the reference length) stays NaN."""
    b = ModelBuilder(gravity=0.0)
    body = b.add_body(xform=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.1, label="f")
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=body)], stiffness=10.0, label="sp")
    if solver == "vbd":
        b.color()
    model = b.finalize()
    sim = SOLVERS[solver](model)
    model.body_mass.fill_(2.0)
    model.transmission_spring_lower.fill_(NAN)
    model.transmission_stiffness.fill_(-1.0)
    before = model_arrays(model)
    with pytest.raises(ValueError, match=r"transmission_stiffness\[0\]"):
        sim.notify_model_changed(ModelFlags.BODY_PROPERTIES | ModelFlags.TRANSMISSION_PROPERTIES)
    assert model_changes(before, model) == []
    model.transmission_stiffness.fill_(10.0)
    sim.notify_model_changed(ModelFlags.BODY_PROPERTIES | ModelFlags.TRANSMISSION_PROPERTIES)
    assert model.body_inv_mass.numpy()[0] == np.float32(0.5)
    assert model.transmission_spring_lower.numpy()[0] == model.transmission_reference_length.numpy()[0]


def _f32(x) -> np.ndarray:
    """``x`` rounded to float32 and back: a value the model stores exactly."""
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def test_notify_body_edit_gives_finalize_inverses(solver):
    """A valid in-place edit gives bitwise the inverse arrays that ``finalize`` computes for a builder holding the
    same (float32) values: a rotated full inertia, a rod below the invertibility ratio (zero inverse inertia), the
    smallest mass whose inverse fits float32 (3e-39 kg), a body made static by mass 0, and an untouched kinematic
    body (zero inverses)."""
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    full = _f32(q @ np.diag([0.2, 0.3, 0.4]) @ q.T)
    full = 0.5 * (full + full.T)  # float32 rounding of q D q^T need not be exactly symmetric
    rod = _f32(np.diag([1.0, 1.0, 1e-14]))  # 1e-14 < INVERTIBLE_RATIO * 1: the rod does not rotate
    edits = [(float(_f32(2.7)), full), (float(_f32(0.3)), rod), (float(_f32(3e-39)), np.eye(3)), (0.0, np.eye(3) * 0.1)]

    def build(values):
        b = ModelBuilder(gravity=0.0)
        for i, (m, inertia) in enumerate(values):
            b.add_body(xform=(float(i), 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=m, inertia=inertia, label=f"b{i}")
        b.add_body(xform=(9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3), is_kinematic=True)
        if solver == "vbd":
            b.color()
        return b.finalize()

    model = build([(1.0, np.eye(3) * 0.1)] * len(edits))
    sim = SOLVERS[solver](model)
    mass = model.body_mass.numpy()
    inertia = model.body_inertia.numpy()
    for i, (m, ii) in enumerate(edits):
        mass[i], inertia[i] = m, ii
    model.body_mass.assign(mass)
    model.body_inertia.assign(inertia)
    sim.notify_model_changed(ModelFlags.BODY_PROPERTIES)
    reference = build(edits)
    for key in ("body_inv_mass", "body_inv_inertia"):
        np.testing.assert_array_equal(getattr(model, key).numpy(), getattr(reference, key).numpy(), err_msg=key)
    inv_i = model.body_inv_inertia.numpy()
    assert np.all(inv_i[1] == 0.0) and model.body_inv_mass.numpy()[3] == 0.0 and model.body_inv_mass.numpy()[4] == 0.0


@pytest.mark.parametrize("case", list(TINY_BODY_EDITS), ids=list(TINY_BODY_EDITS))
def test_set_per_world_rejects_body_values_outside_float32(case):
    """``rl.set_per_world`` writes body_mass/body_inertia and their inverses itself; it applies the same float32
    rule before writing: ValueError naming the body, and no model array changes."""
    from newton_tendon.rl import set_per_world

    key, value, rule = TINY_BODY_EDITS[case]
    tpl = ModelBuilder(gravity=0.0)
    tpl.add_body(mass=1.0, inertia=np.eye(3) * 0.1, label="f")
    b = ModelBuilder(gravity=0.0)
    b.replicate(tpl, 2)
    model = b.finalize()
    values = np.broadcast_to(np.asarray(value, dtype=np.float64), (1, 1, *np.shape(value)))
    before = model_arrays(model)
    with pytest.raises(ValueError, match=rf"set_per_world\('{key}'\): body 'world_1/f' \(index 1\): {rule}"):
        set_per_world(model, key, values, worlds=[1])
    assert model_changes(before, model) == []
