"""Validation by ``ModelBuilder`` and ``finalize``: bad calls raise, naming the entity and the rule.

Validation cases run as one table: each row makes a bad call, names the exception type and a regex that must find
the entity (method and label) and a word of the rule in the message; every row also checks that the builder is
exactly as it was before the call (the builder's promise: validate everything, then append).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from newton_tendon import ModelBuilder

from .builder_common import (
    INF,
    NAN,
    base,
    cylinder_vs_box,
    cylinder_vs_cylinder,
    cylinder_vs_static_sphere,
    diff_keys,
    dynamic_body,
    grouped,
    loose_body_in_worlds,
    sub_articulated,
    three_joints,
    worlds,
    worlds_in_world0,
)


# ---------------------------------------------------------------------------------------------------------------
# Validation table
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Bad:
    """One invalid call: how to build the builder, the call, the exception type and the message regex."""

    call: Callable
    exc: type
    regex: str
    make: Callable = base


def o(method: str, label) -> str:
    """Regex for the owner text ``method(label=...)`` that messages start with."""
    return re.escape(f"{method}(label={label!r})")


def bad(id_, call, exc, regex, make=base):
    """A pytest.param for one row of the validation table."""
    return pytest.param(Bad(call, exc, regex, make), id=id_)


BODY = o("add_body", "arm")
SPH, BOX_, CAP, CYL, PLN = (
    o(m, "s")
    for m in ("add_shape_sphere", "add_shape_box", "add_shape_capsule", "add_shape_cylinder", "add_shape_plane")
)
REV, PRI, BALL, FIX, FREE = (
    o(m, "j")
    for m in ("add_joint_revolute", "add_joint_prismatic", "add_joint_ball", "add_joint_fixed", "add_joint_free")
)
ART = o("add_articulation", "g")
FILT = "add_shape_collision_filter_pair"

BUILDER_CASES = [
    # add_body / add_link
    bad("body-mass-negative", lambda b: b.add_body(mass=-1.0, label="arm"), ValueError, BODY + r": mass must be >= 0"),
    bad("body-mass-nan", lambda b: b.add_body(mass=NAN, label="arm"), ValueError, BODY + r": mass must be finite"),
    bad("body-mass-inf", lambda b: b.add_body(mass=INF, label="arm"), ValueError, BODY + r": mass must be finite"),
    bad("body-mass-str", lambda b: b.add_body(mass="1", label="arm"), TypeError, BODY + r": mass must be a real"),
    bad("body-mass-bool", lambda b: b.add_body(mass=True, label="arm"), TypeError, BODY + r": mass must be a real"),
    bad("body-mass-none", lambda b: b.add_body(mass=None, label="arm"), TypeError, BODY + r": mass must be a real"),
    bad("link-mass-negative", lambda b: b.add_link(mass=-2.0, label="arm"), ValueError, BODY + r": mass must be >= 0"),
    bad(
        "body-inertia-2x2",
        lambda b: b.add_body(inertia=np.eye(2), label="arm"),
        ValueError,
        BODY + r": inertia must be a 3x3",
    ),
    bad(
        "body-inertia-ragged",
        lambda b: b.add_body(inertia=[[1, 0], [0, 1, 0]], label="arm"),
        ValueError,
        BODY + r": inertia must be a 3x3",
    ),
    bad(
        "body-inertia-nonsymmetric",
        lambda b: b.add_body(inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], label="arm"),
        ValueError,
        BODY + r": inertia must be symmetric",
    ),
    bad(
        "body-inertia-negative-definite",
        lambda b: b.add_body(inertia=-np.eye(3), label="arm"),
        ValueError,
        BODY + r": inertia must be positive semi-definite",
    ),
    bad(
        "body-inertia-indefinite",
        lambda b: b.add_body(inertia=np.diag([1.0, 1.0, -0.1]), label="arm"),
        ValueError,
        BODY + r": inertia must be positive semi-definite",
    ),
    bad(
        "body-inertia-nan",
        lambda b: b.add_body(inertia=np.diag([1.0, NAN, 1.0]), label="arm"),
        ValueError,
        BODY + r": inertia must be finite",
    ),
    bad(
        "body-com-length",
        lambda b: b.add_body(com=(0.0, 0.0), label="arm"),
        ValueError,
        BODY + r": com must have three components",
    ),
    bad(
        "body-com-scalar",
        lambda b: b.add_body(com=1.0, label="arm"),
        TypeError,
        BODY + r": com must be a sequence of three",
    ),
    bad(
        "body-com-nan",
        lambda b: b.add_body(com=(0.0, NAN, 0.0), label="arm"),
        ValueError,
        BODY + r": com must be finite",
    ),
    bad(
        "body-xform-length",
        lambda b: b.add_body(xform=(0.0, 0.0, 0.0), label="arm"),
        ValueError,
        BODY + r": xform must have 7 components",
    ),
    bad(
        "body-xform-zero-quat",
        lambda b: b.add_body(xform=(1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0), label="arm"),
        ValueError,
        BODY + r": xform has a zero quaternion",
    ),
    bad(
        "body-xform-nan",
        lambda b: b.add_body(xform=(NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), label="arm"),
        ValueError,
        BODY + r": xform must be finite",
    ),
    bad(
        "body-xform-scalar",
        lambda b: b.add_body(xform=1.0, label="arm"),
        TypeError,
        BODY + r": xform must be a transform",
    ),
    bad(
        "body-velocity-length",
        lambda b: b.add_body(velocity=(1.0, 0.0, 0.0), label="arm"),
        ValueError,
        BODY + r": velocity must be six",
    ),
    bad(
        "body-velocity-inf",
        lambda b: b.add_body(velocity=(INF, 0.0, 0.0, 0.0, 0.0, 0.0), label="arm"),
        ValueError,
        BODY + r": velocity must be six finite",
    ),
    # Library bug: a scalar velocity escapes as a bare TypeError from float() that does not name add_body.
    bad("body-velocity-scalar", lambda b: b.add_body(velocity=1.0, label="arm"), TypeError, BODY + r".*velocity"),
    # Library bug: non-numeric components escape as a bare "could not convert string to float" ValueError.
    bad("body-com-str-components", lambda b: b.add_body(com=("a", "b", "c"), label="arm"), TypeError, BODY + r".*com"),
    bad("body-label-int", lambda b: b.add_body(label=5), TypeError, o("add_body", 5) + r": label must be a str"),
    # Shapes: body index
    bad(
        "sphere-body-out-of-range",
        lambda b: b.add_shape_sphere(3, label="s"),
        ValueError,
        SPH + r": body 3 is out of range",
    ),
    bad(
        "sphere-body-minus-2",
        lambda b: b.add_shape_sphere(-2, label="s"),
        ValueError,
        SPH + r": body -2 is out of range",
    ),
    bad("sphere-body-float", lambda b: b.add_shape_sphere(0.0, label="s"), TypeError, SPH + r": body must be an int"),
    bad("sphere-body-bool", lambda b: b.add_shape_sphere(True, label="s"), TypeError, SPH + r": body must be an int"),
    bad("box-body-out-of-range", lambda b: b.add_shape_box(7, label="s"), ValueError, BOX_ + r": body 7 is out of"),
    bad(
        "capsule-body-out-of-range",
        lambda b: b.add_shape_capsule(3, label="s"),
        ValueError,
        CAP + r": body 3 is out of range",
    ),
    bad(
        "cylinder-body-out-of-range",
        lambda b: b.add_shape_cylinder(3, label="s"),
        ValueError,
        CYL + r": body 3 is out of range",
    ),
    bad(
        "plane-body-out-of-range",
        lambda b: b.add_shape_plane(3, label="s"),
        ValueError,
        PLN + r": body 3 is out of range",
    ),
    # Shapes: dimensions
    bad(
        "sphere-radius-zero",
        lambda b: b.add_shape_sphere(0, radius=0.0, label="s"),
        ValueError,
        SPH + r": radius must be > 0",
    ),
    bad(
        "sphere-radius-negative",
        lambda b: b.add_shape_sphere(0, radius=-1.0, label="s"),
        ValueError,
        SPH + r": radius must be > 0",
    ),
    bad(
        "sphere-radius-nan",
        lambda b: b.add_shape_sphere(0, radius=NAN, label="s"),
        ValueError,
        SPH + r": radius must be finite",
    ),
    bad("box-hx-zero", lambda b: b.add_shape_box(0, hx=0.0, label="s"), ValueError, BOX_ + r": hx must be > 0"),
    bad("box-hy-negative", lambda b: b.add_shape_box(0, hy=-0.1, label="s"), ValueError, BOX_ + r": hy must be > 0"),
    bad("box-hz-zero", lambda b: b.add_shape_box(0, hz=0.0, label="s"), ValueError, BOX_ + r": hz must be > 0"),
    bad(
        "capsule-radius-zero",
        lambda b: b.add_shape_capsule(0, radius=0.0, label="s"),
        ValueError,
        CAP + r": radius must be > 0",
    ),
    bad(
        "capsule-half-height-negative",
        lambda b: b.add_shape_capsule(0, half_height=-0.1, label="s"),
        ValueError,
        CAP + r": half_height must be >= 0",
    ),
    bad(
        "cylinder-radius-zero",
        lambda b: b.add_shape_cylinder(0, radius=0.0, label="s"),
        ValueError,
        CYL + r": radius must be > 0",
    ),
    bad(
        "cylinder-half-height-zero",
        lambda b: b.add_shape_cylinder(0, half_height=0.0, label="s"),
        ValueError,
        CYL + r": half_height must be > 0",
    ),
    bad(
        "plane-width-negative",
        lambda b: b.add_shape_plane(-1, width=-1.0, label="s"),
        ValueError,
        PLN + r": width must be >= 0",
    ),
    bad(
        "plane-length-negative",
        lambda b: b.add_shape_plane(-1, length=-1.0, label="s"),
        ValueError,
        PLN + r": length must be >= 0",
    ),
    # Shapes: material and flags
    bad(
        "sphere-mu-negative",
        lambda b: b.add_shape_sphere(0, mu=-0.1, label="s"),
        ValueError,
        SPH + r": mu must be >= 0",
    ),
    bad("box-mu-nan", lambda b: b.add_shape_box(0, mu=NAN, label="s"), ValueError, BOX_ + r": mu must be finite"),
    bad(
        "sphere-restitution-negative",
        lambda b: b.add_shape_sphere(0, restitution=-0.1, label="s"),
        ValueError,
        SPH + r": restitution must be >= 0",
    ),
    bad(
        "sphere-restitution-above-one",
        lambda b: b.add_shape_sphere(0, restitution=1.5, label="s"),
        ValueError,
        SPH + r": restitution must be <= 1",
    ),
    bad(
        "plane-restitution-above-one",
        lambda b: b.add_shape_plane(-1, restitution=1.01, label="s"),
        ValueError,
        PLN + r": restitution must be <= 1",
    ),
    bad(
        "sphere-density-negative",
        lambda b: b.add_shape_sphere(0, density=-1.0, label="s"),
        ValueError,
        SPH + r": density must be >= 0",
    ),
    bad(
        "box-density-inf",
        lambda b: b.add_shape_box(0, density=INF, label="s"),
        ValueError,
        BOX_ + r": density must be finite",
    ),
    bad(
        "capsule-mass-negative",
        lambda b: b.add_shape_capsule(0, mass=-1.0, label="s"),
        ValueError,
        CAP + r": mass must be >= 0",
    ),
    bad(
        "sphere-group-float",
        lambda b: b.add_shape_sphere(0, collision_group=1.5, label="s"),
        TypeError,
        SPH + r": collision_group must be an int",
    ),
    bad(
        "box-group-bool",
        lambda b: b.add_shape_box(0, collision_group=True, label="s"),
        TypeError,
        BOX_ + r": collision_group must be an int",
    ),
    bad(
        "cylinder-group-str",
        lambda b: b.add_shape_cylinder(0, collision_group="1", label="s"),
        TypeError,
        CYL + r": collision_group must be an int",
    ),
    bad(
        "sphere-xform-zero-quat",
        lambda b: b.add_shape_sphere(0, xform=(0, 0, 0, 0, 0, 0, 0), label="s"),
        ValueError,
        SPH + r": xform has a zero quaternion",
    ),
    bad(
        "sphere-label-int",
        lambda b: b.add_shape_sphere(0, label=3),
        TypeError,
        o("add_shape_sphere", 3) + r": label must be a str",
    ),
    bad(
        "ground-height-nan",
        lambda b: b.add_ground_plane(NAN),
        ValueError,
        o("add_ground_plane", "ground") + r": height must be finite",
    ),
    bad(
        "ground-mu-negative-keeps-current-world",
        lambda b: b.add_ground_plane(mu=-1.0),
        ValueError,
        o("add_shape_plane", "ground") + r": mu must be >= 0",
        worlds_in_world0,
    ),
    # Collision filter pairs
    bad(
        "filter-a-out-of-range",
        lambda b: b.add_shape_collision_filter_pair(2, 0),
        ValueError,
        FILT + r": shape_a 2 is out of range",
    ),
    bad(
        "filter-b-out-of-range",
        lambda b: b.add_shape_collision_filter_pair(0, 5),
        ValueError,
        FILT + r": shape_b 5 is out of range",
    ),
    bad(
        "filter-a-minus-one",
        lambda b: b.add_shape_collision_filter_pair(-1, 0),
        ValueError,
        FILT + r": shape_a -1 is out of range",
    ),
    bad(
        "filter-b-float",
        lambda b: b.add_shape_collision_filter_pair(0, 1.0),
        TypeError,
        FILT + r": shape_b must be an int",
    ),
    # Joints: bodies
    bad(
        "revolute-parent-out-of-range",
        lambda b: b.add_joint_revolute(7, 1, label="j"),
        ValueError,
        REV + r": parent 7 is out of range",
    ),
    bad(
        "revolute-parent-minus-2",
        lambda b: b.add_joint_revolute(-2, 1, label="j"),
        ValueError,
        REV + r": parent -2 is out of range",
    ),
    bad(
        "revolute-child-out-of-range",
        lambda b: b.add_joint_revolute(0, 3, label="j"),
        ValueError,
        REV + r": child 3 is out of range",
    ),
    bad(
        "revolute-child-world",
        lambda b: b.add_joint_revolute(0, -1, label="j"),
        ValueError,
        REV + r": child -1 is out of range",
    ),
    bad(
        "revolute-parent-is-child",
        lambda b: b.add_joint_revolute(1, 1, label="j"),
        ValueError,
        REV + r": parent and child must be different",
    ),
    bad(
        "revolute-parent-float",
        lambda b: b.add_joint_revolute(0.0, 1, label="j"),
        TypeError,
        REV + r": parent must be an int",
    ),
    bad(
        "revolute-different-worlds",
        lambda b: b.add_joint_revolute(0, 1, label="j"),
        ValueError,
        REV + r": parent body 0 \(world 0\) and child body 1 \(world 1\) are in different worlds",
        worlds,
    ),
    bad(
        "prismatic-child-world",
        lambda b: b.add_joint_prismatic(0, -1, label="j"),
        ValueError,
        PRI + r": child -1 is out of range",
    ),
    bad(
        "prismatic-different-worlds",
        lambda b: b.add_joint_prismatic(1, 0, label="j"),
        ValueError,
        PRI + r": .*different worlds",
        worlds,
    ),
    bad(
        "ball-parent-is-child",
        lambda b: b.add_joint_ball(0, 0, label="j"),
        ValueError,
        BALL + r": parent and child must be different",
    ),
    bad(
        "ball-child-out-of-range",
        lambda b: b.add_joint_ball(0, 9, label="j"),
        ValueError,
        BALL + r": child 9 is out of range",
    ),
    bad(
        "fixed-different-worlds",
        lambda b: b.add_joint_fixed(0, 1, label="j"),
        ValueError,
        FIX + r": .*different worlds",
        worlds,
    ),
    bad(
        "fixed-child-world",
        lambda b: b.add_joint_fixed(0, -1, label="j"),
        ValueError,
        FIX + r": child -1 is out of range",
    ),
    bad(
        "free-child-out-of-range",
        lambda b: b.add_joint_free(3, label="j"),
        ValueError,
        FREE + r": child 3 is out of range",
    ),
    bad(
        "free-parent-is-child",
        lambda b: b.add_joint_free(1, 1, label="j"),
        ValueError,
        FREE + r": parent and child must be different",
    ),
    # Joints: frames, axis, limits, gains
    bad(
        "revolute-parent-xform-zero-quat",
        lambda b: b.add_joint_revolute(0, 1, (0, 0, 0, 0, 0, 0, 0), label="j"),
        ValueError,
        REV + r": parent_xform has a zero quaternion",
    ),
    bad(
        "ball-child-xform-length",
        lambda b: b.add_joint_ball(0, 1, None, (0.0, 0.0, 0.0), label="j"),
        ValueError,
        BALL + r": child_xform must have 7 components",
    ),
    bad(
        "revolute-axis-zero",
        lambda b: b.add_joint_revolute(0, 1, axis=(0.0, 0.0, 0.0), label="j"),
        ValueError,
        REV + r": axis must be nonzero",
    ),
    bad(
        "prismatic-axis-zero",
        lambda b: b.add_joint_prismatic(0, 1, axis=(0, 0, 0), label="j"),
        ValueError,
        PRI + r": axis must be nonzero",
    ),
    bad(
        "revolute-axis-length",
        lambda b: b.add_joint_revolute(0, 1, axis=(1.0, 0.0), label="j"),
        ValueError,
        REV + r": axis must have three components",
    ),
    bad(
        "revolute-limits-reversed",
        lambda b: b.add_joint_revolute(0, 1, limit_lower=1.0, limit_upper=0.5, label="j"),
        ValueError,
        REV + r": limit_lower \(1.0\) must be <= limit_upper \(0.5\)",
    ),
    bad(
        "prismatic-limits-reversed",
        lambda b: b.add_joint_prismatic(0, 1, limit_lower=0.1, limit_upper=-INF, label="j"),
        ValueError,
        PRI + r": limit_lower .* must be <= limit_upper",
    ),
    bad(
        "revolute-limit-nan",
        lambda b: b.add_joint_revolute(0, 1, limit_lower=NAN, label="j"),
        ValueError,
        REV + r": limit_lower must be finite",
    ),
    bad(
        "revolute-ke-negative",
        lambda b: b.add_joint_revolute(0, 1, target_ke=-1.0, label="j"),
        ValueError,
        REV + r": target_ke must be >= 0",
    ),
    bad(
        "revolute-kd-negative",
        lambda b: b.add_joint_revolute(0, 1, target_kd=-1.0, label="j"),
        ValueError,
        REV + r": target_kd must be >= 0",
    ),
    bad(
        "prismatic-ke-negative",
        lambda b: b.add_joint_prismatic(0, 1, target_ke=-1.0, label="j"),
        ValueError,
        PRI + r": target_ke must be >= 0",
    ),
    bad(
        "revolute-armature-negative",
        lambda b: b.add_joint_revolute(0, 1, armature=-0.1, label="j"),
        ValueError,
        REV + r": armature must be >= 0",
    ),
    bad(
        "revolute-target-pos-nan",
        lambda b: b.add_joint_revolute(0, 1, target_pos=NAN, label="j"),
        ValueError,
        REV + r": target_pos must be finite",
    ),
    bad(
        "prismatic-armature-negative",
        lambda b: b.add_joint_prismatic(0, 1, armature=-0.1, label="j"),
        ValueError,
        PRI + r": armature must be >= 0",
    ),
    bad(
        "revolute-label-int",
        lambda b: b.add_joint_revolute(0, 1, label=4),
        TypeError,
        o("add_joint_revolute", 4) + r": label must be a str",
    ),
    # Articulations
    bad(
        "articulation-non-contiguous",
        lambda b: b.add_articulation([0, 2], label="g"),
        ValueError,
        ART + r": joints must be the contiguous block",
        three_joints,
    ),
    bad(
        "articulation-not-first-ungrouped",
        lambda b: b.add_articulation([1, 2], label="g"),
        ValueError,
        ART + r": joints must be the contiguous block .* starting at 0",
        three_joints,
    ),
    bad(
        "articulation-already-grouped",
        lambda b: b.add_articulation([0], label="g"),
        ValueError,
        ART + r": joints must be the contiguous block .* starting at 2",
        grouped,
    ),
    bad(
        "articulation-past-last-joint",
        lambda b: b.add_articulation([0, 1, 2], label="g"),
        ValueError,
        ART + r": joints must be the contiguous block of existing joints",
    ),
    bad(
        "articulation-empty-list",
        lambda b: b.add_articulation([], label="g"),
        ValueError,
        ART + r": no joints to group",
    ),
    bad(
        "articulation-nothing-left",
        lambda b: b.add_articulation(label="g"),
        ValueError,
        ART + r": no joints to group",
        grouped,
    ),
    # Library bug: the label is checked after the articulation was appended.
    bad(
        "articulation-label-int",
        lambda b: b.add_articulation(label=5),
        TypeError,
        o("add_articulation", 5) + r": label must be a str",
    ),
    # add_builder / add_world
    bad("add-builder-not-builder", lambda b: b.add_builder(5), TypeError, r"add_builder: other must be a ModelBuilder"),
    bad("add-builder-itself", lambda b: b.add_builder(b), ValueError, r"add_builder: cannot add a builder to itself"),
    bad(
        "add-builder-missing-world",
        lambda b: b.add_builder(ModelBuilder(), world=2),
        ValueError,
        r"add_builder: world 2 does not exist",
    ),
    bad(
        "add-builder-world-zero-without-worlds",
        lambda b: b.add_builder(ModelBuilder(), world=0),
        ValueError,
        r"add_builder: world 0 does not exist",
    ),
    bad(
        "add-builder-world-minus-2",
        lambda b: b.add_builder(ModelBuilder(), world=-2),
        ValueError,
        r"add_builder: world must be -1 or a world index",
    ),
    # Contract (TypeError for a wrong type): a bool world is rejected with ValueError instead.
    bad(
        "add-builder-world-bool",
        lambda b: b.add_builder(ModelBuilder(), world=True),
        TypeError,
        r"add_builder: world must be",
    ),
    bad(
        "add-builder-xform-zero-quat",
        lambda b: b.add_builder(ModelBuilder(), (0, 0, 0, 0, 0, 0, 0)),
        ValueError,
        r"add_builder: xform has a zero quaternion",
    ),
    bad(
        "add-builder-ungrouped-joints",
        lambda b: b.add_builder(sub_articulated()),
        ValueError,
        r"add_builder: this builder has joints outside any articulation",
    ),
    bad("add-world-not-builder", lambda b: b.add_world(None), TypeError, r"add_builder: other must be a ModelBuilder"),
    bad("add-world-itself", lambda b: b.add_world(b), ValueError, r"add_builder: cannot add a builder to itself"),
    bad(
        "add-world-ungrouped-joints",
        lambda b: b.add_world(sub_articulated()),
        ValueError,
        r"add_builder: this builder has joints outside any articulation",
    ),
    # replicate
    bad("replicate-zero", lambda b: b.replicate(ModelBuilder(), 0), ValueError, r"replicate: world_count must be"),
    bad("replicate-negative", lambda b: b.replicate(ModelBuilder(), -3), ValueError, r"replicate: world_count must"),
    # Contract (TypeError for a wrong type): a bool or float world_count is rejected with ValueError instead.
    bad("replicate-bool", lambda b: b.replicate(ModelBuilder(), True), TypeError, r"replicate: world_count must be"),
    bad("replicate-float", lambda b: b.replicate(ModelBuilder(), 2.0), TypeError, r"replicate: world_count must be"),
    bad(
        "replicate-builder-with-worlds",
        lambda b: b.replicate(worlds(), 2),
        ValueError,
        r"replicate: the builder to replicate must not contain worlds",
    ),
    bad(
        "replicate-spacing-length",
        lambda b: b.replicate(ModelBuilder(), 2, spacing=(1.0, 0.0)),
        ValueError,
        r"replicate: spacing must have three components",
    ),
    # Library bug: a non-builder fails with AttributeError ('int' object has no attribute 'world_count').
    bad("replicate-not-builder", lambda b: b.replicate(5, 2), TypeError, r"replicate.*ModelBuilder"),
    bad("replicate-itself", lambda b: b.replicate(b, 2), ValueError, r"add_builder: cannot add a builder to itself"),
]


@pytest.mark.parametrize("case", BUILDER_CASES)
def test_invalid_call_raises_and_leaves_builder_unchanged(case: Bad):
    """A rejected add_* call raises the documented type with entity and rule in the message, changing nothing."""
    b = case.make()
    before = copy.deepcopy(vars(b))
    with pytest.raises(case.exc, match=case.regex):
        case.call(b)
    assert diff_keys(before, vars(b)) == []


MODEL_BUILDER_CASES = [
    pytest.param({"up_axis": "W"}, ValueError, r"ModelBuilder: up_axis must be 'X', 'Y' or 'Z'", id="up-axis-W"),
    pytest.param({"up_axis": "xy"}, ValueError, r"ModelBuilder: up_axis must be", id="up-axis-two-letters"),
    pytest.param({"gravity": NAN}, ValueError, r"ModelBuilder: gravity must be finite", id="gravity-nan"),
    pytest.param({"gravity": -INF}, ValueError, r"ModelBuilder: gravity must be finite", id="gravity-inf"),
    pytest.param({"gravity": (0.0, -9.81)}, ValueError, r"ModelBuilder: gravity must have three", id="gravity-len2"),
    pytest.param(
        {"gravity": (0.0, NAN, 0.0)}, ValueError, r"ModelBuilder: gravity must be finite", id="gravity-vector-nan"
    ),
    pytest.param({"gravity": "abc"}, TypeError, r"ModelBuilder: gravity must be a sequence", id="gravity-str"),
]


@pytest.mark.parametrize(("kwargs", "exc", "regex"), MODEL_BUILDER_CASES)
def test_model_builder_rejects_bad_arguments(kwargs, exc, regex):
    """ModelBuilder() rejects a bad up_axis or gravity with a message naming ModelBuilder and the rule."""
    with pytest.raises(exc, match=regex):
        ModelBuilder(**kwargs)


FINALIZE_CASES = [
    pytest.param(
        loose_body_in_worlds,
        {},
        r"finalize: body 'loose' \(index 2\) moves but belongs to no world",
        id="body-without-world",
    ),
]


@pytest.mark.parametrize(("make", "kwargs", "regex"), FINALIZE_CASES)
def test_finalize_rejects_invalid_scene(make, kwargs, regex, device):
    """finalize raises ValueError naming finalize and the rule, and leaves the builder unchanged."""
    b = make()
    before = copy.deepcopy(vars(b))
    with pytest.raises(ValueError, match=regex):
        b.finalize(device=device, **kwargs)
    assert diff_keys(before, vars(b)) == []


@pytest.mark.parametrize("make", [cylinder_vs_box, cylinder_vs_cylinder, cylinder_vs_static_sphere])
def test_cylinder_pairs_finalize_with_contact_slots(make, device):
    """Cylinder pairs with boxes, cylinders and spheres finalize (they were rejected before issue 26) and get
    their slot counts; filtered, grouped apart, or non-colliding they get none."""
    from newton_tendon.kernels.collide import pair_contact_capacity

    b = make()
    m = b.finalize(device=device)
    assert m.shape_contact_pair_count == 1
    kinds = sorted(b.shape_type)
    assert m.contact_capacity == pair_contact_capacity(*kinds)
    b = cylinder_vs_box()
    b.add_shape_collision_filter_pair(0, 1)
    assert b.finalize(device=device).shape_contact_pair_count == 0
    b = ModelBuilder()
    dynamic_body(b)
    dynamic_body(b)
    b.add_shape_cylinder(0, collision_group=3)
    b.add_shape_box(1, collision_group=4)
    b.add_shape_box(1, has_collision=False)
    b.add_shape_cylinder(0, has_collision=False)
    assert b.finalize(device=device).shape_contact_pair_count == 0


def test_boundary_values_are_accepted():
    """Values on the edge of each rule (restitution 0 and 1, capsule half_height 0, infinite limits) are accepted."""
    b = base()
    b.add_shape_sphere(0, restitution=1.0, mu=0.0, density=0.0)
    b.add_shape_capsule(0, half_height=0.0)
    b.add_joint_revolute(0, 2, limit_lower=-INF, limit_upper=INF, target_ke=0.0, armature=0.0)
    b.add_joint_revolute(1, 2, limit_lower=0.3, limit_upper=0.3)
    b.add_body(inertia=np.zeros((3, 3)), mass=0.0, xform=(0, 0, 0, 0, 0, 0, 2.0))
    assert b.body_q[-1][3:] == (0.0, 0.0, 0.0, 1.0)
    assert b.joint_limit_lower[-1] == b.joint_limit_upper[-1] == pytest.approx(0.3)


def test_default_labels_use_the_new_entity_index():
    """Default labels are body_<i>, shape_<i>, joint_<i> and articulation_<i> with i the new entity's index."""
    b = ModelBuilder()
    b.add_body()
    b.add_shape_sphere(0)
    b.add_joint_free(0)
    b.add_articulation()
    assert (b.body_label, b.shape_label, b.joint_label) == (["body_0"], ["shape_0"], ["joint_0"])
    assert b.articulation_label == ["articulation_0"]
