"""Tests of ``ModelBuilder`` (validation, mass properties, worlds, contact pairs, colouring) and of ``finalize``.

Validation cases run as one table: each row makes a bad call, names the exception type and a regex that must find
the entity (method and label) and a word of the rule in the message; every row also checks that the builder is
exactly as it was before the call (the builder's promise: validate everything, then append).

Host-side mass properties are float64, so they are compared to the closed forms at 1e-6 relative; the Model stores
float32 (relative rounding ~6e-8), so the same 1e-6 bound holds after conversion.
"""

from __future__ import annotations

import ast
import copy
import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import warp as wp

import newton_tendon
from newton_tendon import ModelBuilder
from newton_tendon import collision as collision_module
from newton_tendon import model as model_module
from newton_tendon import state as state_module
from newton_tendon.kernels import types as T
from newton_tendon.kernels.collide import pair_contact_capacity

from ..helpers import same

REL = 1.0e-6
NAN = float("nan")
INF = float("inf")
PLANE, SPHERE, CAPSULE, BOX, CYLINDER = (
    int(t) for t in (T.SHAPE_PLANE, T.SHAPE_SPHERE, T.SHAPE_CAPSULE, T.SHAPE_BOX, T.SHAPE_CYLINDER)
)


# ---------------------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------------------


def quat(axis, angle):
    """Quaternion (x, y, z, w) of a rotation by ``angle`` [rad] about ``axis``."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    return (*(math.sin(0.5 * angle) * a), math.cos(0.5 * angle))


def rotmat(q):
    """Rotation matrix of a (x, y, z, w) quaternion (normalized here)."""
    x, y, z, w = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def qmul(a, b):
    """Hamilton product ``a * b`` of (x, y, z, w) quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def same_rotation(q1, q2, tol=1e-9):
    """True when two quaternions describe the same rotation (q and -q are equal)."""
    return abs(abs(float(np.dot(q1, q2))) - 1.0) < tol


def shift_inertia(m, d):
    """Parallel-axis term m (|d|^2 E - d d^T) moving an inertia from the COM to a point at offset d."""
    d = np.asarray(d, dtype=np.float64)
    return m * (np.dot(d, d) * np.eye(3) - np.outer(d, d))


def diff_keys(before: dict, after: dict) -> list[str]:
    """Names of builder attributes that differ between two ``vars`` snapshots."""
    return sorted(
        k for k in before.keys() | after.keys() if k not in before or k not in after or not same(before[k], after[k])
    )


def close(actual, expected, rel=REL):
    """Assert arrays agree to ``rel`` relative to the largest magnitude of ``expected`` (absolute if it is 0)."""
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(float(np.abs(expected).max()) if expected.size else 0.0, 1.0e-30)
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), expected, rtol=0.0, atol=rel * scale)


def dynamic_body(b: ModelBuilder, pos=(0.0, 0.0, 0.0), label=None) -> int:
    """A body with unit mass and inertia at ``pos``."""
    return b.add_body(xform=(*pos, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3), label=label)


def pairs_of(model) -> set[tuple[int, int]]:
    """The model's contact pairs as a set of sorted shape index tuples."""
    p = model.shape_contact_pairs.numpy().reshape(-1, 2)
    return {(int(min(a, c)), int(max(a, c))) for a, c in p}


# ---------------------------------------------------------------------------------------------------------------
# Scenes the validation table starts from
# ---------------------------------------------------------------------------------------------------------------


def base() -> ModelBuilder:
    """Two dynamic bodies (0, 1), a static body 2, a sphere and a box, a revolute joint and a free joint."""
    b = ModelBuilder()
    b.add_body(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.1, label="a")
    b.add_body(
        xform=(0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0),
        mass=2.0,
        inertia=np.eye(3) * 0.2,
        label="b",
        velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 1.0),
    )
    b.add_body(label="c")
    b.add_shape_sphere(0, radius=0.1)
    b.add_shape_box(1, hx=0.1, hy=0.2, hz=0.3)
    b.add_joint_free(0)
    b.add_joint_revolute(0, 1, axis=(0.0, 1.0, 0.0))
    return b


def three_joints() -> ModelBuilder:
    """``base`` plus a third joint, so three joints are ungrouped."""
    b = base()
    b.add_joint_fixed(1, 2)
    return b


def grouped() -> ModelBuilder:
    """``base`` with both joints grouped into one articulation."""
    b = base()
    b.add_articulation()
    return b


def worlds() -> ModelBuilder:
    """Two worlds made by ``replicate`` of one dynamic body with a sphere; body 0 in world 0, body 1 in world 1."""
    sub = ModelBuilder()
    dynamic_body(sub, label="w")
    sub.add_shape_sphere(0, radius=0.1)
    b = ModelBuilder()
    b.replicate(sub, 2)
    return b


def worlds_in_world0() -> ModelBuilder:
    """``worlds`` with ``current_world`` set to 0."""
    b = worlds()
    b.current_world = 0
    return b


def sub_articulated() -> ModelBuilder:
    """A small builder with one body, one joint and one articulation."""
    s = ModelBuilder()
    dynamic_body(s)
    s.add_joint_revolute(-1, 0)
    s.add_articulation()
    return s


def loose_body_in_worlds() -> ModelBuilder:
    """``worlds`` plus a body added directly (world -1) although the builder has worlds."""
    b = worlds()
    dynamic_body(b, label="loose")
    return b


def cylinder_vs_box() -> ModelBuilder:
    """A cylinder and a box on two dynamic bodies of the same world: an unsupported colliding pair."""
    b = ModelBuilder()
    dynamic_body(b)
    dynamic_body(b, (0.0, 0.0, 3.0))
    b.add_shape_cylinder(0, label="cyl")
    b.add_shape_box(1, label="box")
    return b


def cylinder_vs_cylinder() -> ModelBuilder:
    """Two cylinders on dynamic bodies of the same world."""
    b = ModelBuilder()
    dynamic_body(b)
    dynamic_body(b, (0.0, 0.0, 3.0))
    b.add_shape_cylinder(0, label="c0")
    b.add_shape_cylinder(1, label="c1")
    return b


def cylinder_vs_static_sphere() -> ModelBuilder:
    """A cylinder on a dynamic body and a static sphere attached to the world."""
    b = ModelBuilder()
    dynamic_body(b)
    b.add_shape_cylinder(0, label="cyl")
    b.add_shape_sphere(-1, label="rock")
    return b


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
        "prismatic-armature",
        lambda b: b.add_joint_prismatic(0, 1, armature=0.1, label="j"),
        ValueError,
        PRI + r": armature on a prismatic joint is not supported",
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
    pytest.param({"up_axis": "z"}, ValueError, r"ModelBuilder: up_axis must be", id="up-axis-lowercase"),
    pytest.param({"gravity": NAN}, ValueError, r"ModelBuilder: gravity must be finite", id="gravity-nan"),
    pytest.param({"gravity": -INF}, ValueError, r"ModelBuilder: gravity must be finite", id="gravity-inf"),
    pytest.param({"gravity": (0.0, -9.81)}, ValueError, r"ModelBuilder: gravity must have three", id="gravity-len2"),
    pytest.param(
        {"gravity": (0.0, NAN, 0.0)}, ValueError, r"ModelBuilder: gravity must be finite", id="gravity-vector-nan"
    ),
    pytest.param({"gravity": None}, TypeError, r"ModelBuilder: gravity must be a sequence", id="gravity-none"),
]


@pytest.mark.parametrize(("kwargs", "exc", "regex"), MODEL_BUILDER_CASES)
def test_model_builder_rejects_bad_arguments(kwargs, exc, regex):
    """ModelBuilder() rejects a bad up_axis or gravity with a message naming ModelBuilder and the rule."""
    with pytest.raises(exc, match=regex):
        ModelBuilder(**kwargs)


FINALIZE_CASES = [
    pytest.param(base, {"requires_grad": True}, r"finalize: requires_grad=True is not supported", id="requires-grad"),
    pytest.param(
        loose_body_in_worlds, {}, r"finalize: body 'loose' \(index 2\) belongs to no world", id="body-without-world"
    ),
    pytest.param(
        cylinder_vs_box, {}, r"finalize: shapes 'box' \(box\) and 'cyl' \(cylinder\) .*not supported", id="cylinder-box"
    ),
    pytest.param(
        cylinder_vs_cylinder,
        {},
        r"finalize: shapes 'c0' \(cylinder\) and 'c1' \(cylinder\).*not supported",
        id="cylinder-cylinder",
    ),
    pytest.param(
        cylinder_vs_static_sphere,
        {},
        r"finalize: shapes 'rock' \(sphere\) and 'cyl' .*not supported",
        id="cylinder-static-sphere",
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


def test_unsupported_pair_is_accepted_when_it_cannot_collide(device):
    """A cylinder-box pair finalizes once it is filtered, grouped, or one shape has no collision."""
    b = cylinder_vs_box()
    b.add_shape_collision_filter_pair(0, 1)
    assert b.finalize(device=device).shape_contact_pair_count == 0
    b = ModelBuilder()
    dynamic_body(b)
    dynamic_body(b)
    b.add_shape_cylinder(0, collision_group=3)
    b.add_shape_box(1, collision_group=3)
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


# ---------------------------------------------------------------------------------------------------------------
# Mass properties
# ---------------------------------------------------------------------------------------------------------------


def sphere_closed_form(rho, r):
    """Solid sphere: m = rho 4/3 pi r^3, I = 2/5 m r^2 about every axis."""
    m = rho * 4.0 / 3.0 * math.pi * r**3
    return m, np.eye(3) * 0.4 * m * r**2


def box_closed_form(rho, hx, hy, hz):
    """Solid box of half extents h: m = 8 rho hx hy hz, Ixx = m/12 ((2hy)^2 + (2hz)^2), and cyclic."""
    m = rho * 8.0 * hx * hy * hz
    a, b, c = 2 * hx, 2 * hy, 2 * hz
    return m, np.diag([m / 12 * (b * b + c * c), m / 12 * (a * a + c * c), m / 12 * (a * a + b * b)])


def cylinder_closed_form(rho, r, hh):
    """Solid cylinder along Z, height h = 2 hh: m = rho pi r^2 h, Ixx = Iyy = m (3 r^2 + h^2) / 12, Izz = m r^2 / 2."""
    h = 2 * hh
    m = rho * math.pi * r * r * h
    return m, np.diag([m * (3 * r * r + h * h) / 12, m * (3 * r * r + h * h) / 12, 0.5 * m * r * r])


def capsule_closed_form(rho, r, hh):
    """Capsule along Z = cylinder (height h = 2 hh) + two hemispheres of total mass m_s = rho 4/3 pi r^3.

    Izz = m_c r^2 / 2 + 2/5 m_s r^2. Ixx = m_c (3 r^2 + h^2) / 12 + m_s (2/5 r^2 + h^2/4 + 3/8 h r): each hemisphere's
    inertia about its base is 2/5 (m_s/2) r^2; moving it to the hemisphere centroid (3/8 r from the base) and then to
    the capsule centre (h/2 + 3/8 r away) by the parallel-axis theorem gives that sum.
    """
    h = 2 * hh
    mc = rho * math.pi * r * r * h
    # Hemisphere pair, term by term: about the flat face 2/5 (m_s/2) r^2 each, base at distance h/2 from the centre.
    ms = rho * 4.0 / 3.0 * math.pi * r**3
    d = 3.0 / 8.0 * r
    i_centroid = 0.4 * (ms / 2) * r * r - (ms / 2) * d * d
    ixx_caps = 2 * (i_centroid + (ms / 2) * (hh + d) ** 2)
    ixx = mc * (3 * r * r + h * h) / 12 + ixx_caps
    return mc + ms, np.diag([ixx, ixx, 0.5 * mc * r * r + 0.4 * ms * r * r])


SHAPE_MASS_CASES = [
    pytest.param(
        lambda b: b.add_shape_sphere(0, radius=0.3, density=700.0), sphere_closed_form(700.0, 0.3), id="sphere"
    ),
    pytest.param(
        lambda b: b.add_shape_box(0, hx=0.1, hy=0.25, hz=0.4, density=900.0),
        box_closed_form(900.0, 0.1, 0.25, 0.4),
        id="box",
    ),
    pytest.param(
        lambda b: b.add_shape_capsule(0, radius=0.15, half_height=0.35, density=1100.0),
        capsule_closed_form(1100.0, 0.15, 0.35),
        id="capsule",
    ),
    pytest.param(
        lambda b: b.add_shape_capsule(0, radius=0.2, half_height=0.0, density=500.0),
        sphere_closed_form(500.0, 0.2),
        id="capsule-without-segment-is-sphere",
    ),
    pytest.param(
        lambda b: b.add_shape_cylinder(0, radius=0.2, half_height=0.6, density=2700.0),
        cylinder_closed_form(2700.0, 0.2, 0.6),
        id="cylinder",
    ),
]


@pytest.mark.parametrize(("add", "expected"), SHAPE_MASS_CASES)
def test_shape_density_gives_closed_form_mass_properties(add, expected, device):
    """A shape with density on a massless body gives the closed-form mass and inertia (builder and model)."""
    b = ModelBuilder()
    b.add_body()
    add(b)
    m, inertia = expected
    assert b.body_mass[0] == pytest.approx(m, rel=REL)
    close(b.body_inertia[0], inertia)
    close(b.body_com[0], np.zeros(3))
    model = b.finalize(device=device)
    assert model.body_mass.numpy()[0] == pytest.approx(m, rel=REL)
    close(model.body_inertia.numpy()[0], inertia)
    assert model.body_inv_mass.numpy()[0] == pytest.approx(1.0 / m, rel=REL)
    close(model.body_inv_inertia.numpy()[0], np.linalg.inv(inertia))


def test_shape_offset_shifts_com_and_uses_parallel_axis():
    """A sphere offset from a massive body moves the COM to the mass-weighted mean; inertia follows parallel axes."""
    b = ModelBuilder()
    i0 = np.diag([0.1, 0.2, 0.3])
    b.add_body(mass=2.0, inertia=i0, com=(0.0, 0.0, 0.1))
    d = np.array([0.5, -0.2, 0.3])
    b.add_shape_sphere(0, xform=(*d, 0.0, 0.0, 0.0, 1.0), radius=0.1, density=1000.0)
    ms, is_ = sphere_closed_form(1000.0, 0.1)
    c0 = np.array([0.0, 0.0, 0.1])
    m = 2.0 + ms
    c = (2.0 * c0 + ms * d) / m
    expected = i0 + shift_inertia(2.0, c0 - c) + is_ + shift_inertia(ms, d - c)
    assert b.body_mass[0] == pytest.approx(m, rel=REL)
    close(b.body_com[0], c)
    close(b.body_inertia[0], expected)


def test_two_symmetric_spheres_keep_com_and_add_steiner_terms():
    """Two equal spheres at +-d put the COM at 0 and give inertia 2 I_s + 2 m (|d|^2 E - d d^T)."""
    b = ModelBuilder()
    b.add_body()
    d = np.array([0.0, 0.4, 0.0])
    b.add_shape_sphere(0, xform=(*d, 0, 0, 0, 1), radius=0.1)
    b.add_shape_sphere(0, xform=(*-d, 0, 0, 0, 1), radius=0.1)
    ms, is_ = sphere_closed_form(1000.0, 0.1)
    close(b.body_com[0], np.zeros(3))
    close(b.body_inertia[0], 2 * is_ + 2 * shift_inertia(ms, d))


def test_rotated_shape_rotates_its_inertia():
    """A box rotated by xform contributes R I R^T: 90 degrees about Z swaps Ixx and Iyy."""
    b = ModelBuilder()
    b.add_body()
    q = quat((0, 0, 1), 0.5 * math.pi)
    b.add_shape_box(0, xform=(0, 0, 0, *q), hx=0.1, hy=0.3, hz=0.2, density=500.0)
    m, i = box_closed_form(500.0, 0.1, 0.3, 0.2)
    close(b.body_inertia[0], np.diag([i[1, 1], i[0, 0], i[2, 2]]))
    r = rotmat(quat((1, 1, 0), 0.7))
    b.add_body()
    b.add_shape_box(1, xform=(0, 0, 0, *quat((1, 1, 0), 0.7)), hx=0.1, hy=0.3, hz=0.2, density=500.0)
    close(b.body_inertia[1], r @ i @ r.T)


@pytest.mark.parametrize("kind", ["sphere", "box", "capsule", "cylinder"])
def test_shape_mass_overrides_density(kind):
    """``mass=`` sets the shape's mass regardless of density; inertia scales with it."""
    b = ModelBuilder()
    b.add_body()
    add = {
        "sphere": lambda: (b.add_shape_sphere(0, radius=0.2, density=123.0, mass=2.5), sphere_closed_form(1, 0.2)),
        "box": lambda: (
            b.add_shape_box(0, hx=0.1, hy=0.2, hz=0.3, density=9.0, mass=2.5),
            box_closed_form(1, 0.1, 0.2, 0.3),
        ),
        "capsule": lambda: (
            b.add_shape_capsule(0, radius=0.1, half_height=0.2, density=0.0, mass=2.5),
            capsule_closed_form(1, 0.1, 0.2),
        ),
        "cylinder": lambda: (
            b.add_shape_cylinder(0, radius=0.1, half_height=0.2, density=1e4, mass=2.5),
            cylinder_closed_form(1, 0.1, 0.2),
        ),
    }[kind]
    _, (m_unit, i_unit) = add()
    assert b.body_mass[0] == pytest.approx(2.5, rel=REL)
    close(b.body_inertia[0], i_unit * 2.5 / m_unit)


def test_zero_density_shape_adds_no_mass():
    """A shape with density 0 (and a plane, which is massless) leaves the body's mass properties unchanged."""
    b = ModelBuilder()
    b.add_body(mass=1.0, inertia=np.eye(3), com=(0.1, 0.0, 0.0))
    b.add_shape_box(0, density=0.0, xform=(1, 1, 1, 0, 0, 0, 1))
    b.add_shape_plane(0)
    assert b.body_mass == [1.0]
    assert b.body_com == [(0.1, 0.0, 0.0)]
    np.testing.assert_array_equal(b.body_inertia[0], np.eye(3))


def test_lock_inertia_ignores_shape_mass():
    """With lock_inertia=True, shapes added later change neither mass, COM nor inertia."""
    b = ModelBuilder()
    b.add_body(mass=3.0, inertia=np.eye(3) * 0.5, com=(0.0, 0.1, 0.0), lock_inertia=True)
    b.add_shape_sphere(0, xform=(1, 0, 0, 0, 0, 0, 1), radius=0.5, density=1000.0)
    b.add_shape_box(0, mass=10.0)
    assert b.body_mass == [3.0]
    assert b.body_com == [(0.0, 0.1, 0.0)]
    np.testing.assert_array_equal(b.body_inertia[0], np.eye(3) * 0.5)


def test_revolute_armature_adds_to_child_inertia_about_axis(device):
    """Revolute armature a adds a * u u^T to the child's inertia (u: axis in the child frame); builder untouched."""
    b = ModelBuilder()
    b.add_body(mass=1.0, inertia=np.eye(3))
    b.add_body(mass=1.0, inertia=np.diag([1.0, 2.0, 3.0]))
    b.add_body(mass=1.0, inertia=np.eye(3))
    qc = quat((0, 0, 1), 0.5 * math.pi)  # joint frame x-axis is the child's y-axis
    b.add_joint_revolute(0, 1, child_xform=(0, 0, 0, *qc), axis=(1.0, 0.0, 0.0), armature=0.5)
    b.add_joint_revolute(1, 2, axis=(0.0, 0.0, 2.0), armature=0.25)
    model = b.finalize(device=device)
    inertia = model.body_inertia.numpy()
    close(inertia[0], np.eye(3))
    close(inertia[1], np.diag([1.0, 2.5, 3.0]))
    close(inertia[2], np.diag([1.0, 1.0, 1.25]))
    close(model.body_inv_inertia.numpy()[1], np.diag([1.0, 1 / 2.5, 1 / 3.0]))
    np.testing.assert_array_equal(b.body_inertia[1], np.diag([1.0, 2.0, 3.0]))


def test_prismatic_and_zero_armature_leave_inertia(device):
    """Joints without revolute armature leave the model inertia equal to the builder's."""
    b = base()
    b.add_joint_prismatic(1, 2)
    model = b.finalize(device=device)
    close(model.body_inertia.numpy(), np.array(b.body_inertia))


def test_kinematic_and_massless_bodies_are_immovable(device):
    """Kinematic and zero-mass bodies get zero inverse mass and inertia; a dynamic body gets 1/m."""
    b = ModelBuilder()
    b.add_body(mass=2.0, inertia=np.eye(3), is_kinematic=True)
    b.add_body()
    b.add_body(mass=4.0, inertia=np.eye(3) * 2.0)
    model = b.finalize(device=device)
    np.testing.assert_array_equal(model.body_inv_mass.numpy(), np.array([0.0, 0.0, 0.25], dtype=np.float32))
    np.testing.assert_array_equal(model.body_inv_inertia.numpy()[:2], np.zeros((2, 3, 3)))
    close(model.body_inv_inertia.numpy()[2], np.eye(3) * 0.5)
    assert list(model.body_flags.numpy()) == [int(T.BODY_KINEMATIC), 0, 0]


# ---------------------------------------------------------------------------------------------------------------
# Gravity, up axis, ground plane
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("axis", "index"), [("X", 0), ("Y", 1), ("Z", 2)])
def test_scalar_gravity_goes_on_up_axis(axis, index):
    """A scalar gravity is placed on the up axis component."""
    g = [0.0, 0.0, 0.0]
    g[index] = -3.5
    assert ModelBuilder(up_axis=axis, gravity=-3.5).gravity == tuple(g)


def test_default_and_vector_gravity(device):
    """Default gravity is -9.81 along Z; a 3-vector is kept; the model stores one gravity per world."""
    assert ModelBuilder().gravity == (0.0, 0.0, -9.81)
    assert ModelBuilder(up_axis="Y", gravity=(1, 2, 3)).gravity == (1.0, 2.0, 3.0)
    b = worlds()
    b.gravity = (0.0, -1.0, 0.0)
    model = b.finalize(device=device)
    np.testing.assert_array_equal(model.gravity.numpy(), np.tile([0.0, -1.0, 0.0], (2, 1)).astype(np.float32))
    assert model.up_axis == 2


@pytest.mark.parametrize(("axis", "normal"), [("X", (1, 0, 0)), ("Y", (0, 1, 0)), ("Z", (0, 0, 1))])
def test_ground_plane_normal_is_up_axis(axis, normal, device):
    """add_ground_plane rotates the plane's local +Z onto the up axis and puts it at ``height`` along it."""
    b = ModelBuilder(up_axis=axis)
    s = b.add_ground_plane(height=0.7)
    model = b.finalize(device=device)
    tf = model.shape_transform.numpy()[s]
    close(rotmat(tf[3:]) @ np.array([0.0, 0.0, 1.0]), np.asarray(normal, dtype=np.float64))
    close(tf[:3], 0.7 * np.asarray(normal, dtype=np.float64))
    assert model.shape_type.numpy()[s] == PLANE
    assert model.shape_body.numpy()[s] == -1
    assert model.shape_world.numpy()[s] == -1
    assert model.shape_label[s] == "ground"


def test_ground_plane_goes_to_world_minus_one_and_restores_current_world():
    """add_ground_plane is shared (world -1) even while current_world is set, which it leaves as it was."""
    b = worlds()
    b.current_world = 1
    s = b.add_ground_plane()
    assert b.shape_world[s] == -1
    assert b.current_world == 1


# ---------------------------------------------------------------------------------------------------------------
# Worlds
# ---------------------------------------------------------------------------------------------------------------


def two_link_sub() -> ModelBuilder:
    """A sub-scene: a root body hinged to the world at (0,0,1), a child hinged to it, a shape each, one articulation."""
    s = ModelBuilder()
    r = s.add_body(
        xform=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        mass=1.0,
        inertia=np.eye(3),
        label="root",
        velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 2.0),
    )
    c = s.add_body(xform=(1.0, 0.0, -1.0, *quat((1, 0, 0), 0.3)), mass=1.0, inertia=np.eye(3), label="tip")
    s.add_shape_sphere(r, radius=0.1, label="ball")
    s.add_shape_box(c, xform=(0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 1.0), label="block")
    s.add_shape_sphere(-1, xform=(0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0), label="post")
    s.add_joint_revolute(-1, r, parent_xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), label="shoulder")
    s.add_joint_revolute(r, c, parent_xform=(0.0, 0.0, -0.5, 0.0, 0.0, 0.0, 1.0), label="elbow")
    s.add_articulation(label="arm")
    s.add_shape_collision_filter_pair(0, 2)
    return s


def test_add_world_remaps_indices_worlds_and_labels():
    """add_world appends a world: indices shift by the existing counts, worlds are new, labels get world_<i>/."""
    b = ModelBuilder()
    b.add_ground_plane()
    sub = two_link_sub()
    assert b.add_world(sub) == 0
    assert b.add_world(sub) == 1
    assert b.world_count == 2
    assert b.body_label == ["world_0/root", "world_0/tip", "world_1/root", "world_1/tip"]
    assert b.shape_label == [
        "ground",
        "world_0/ball",
        "world_0/block",
        "world_0/post",
        "world_1/ball",
        "world_1/block",
        "world_1/post",
    ]
    assert b.joint_label == ["world_0/shoulder", "world_0/elbow", "world_1/shoulder", "world_1/elbow"]
    assert b.articulation_label == ["world_0/arm", "world_1/arm"]
    assert b.body_world == [0, 0, 1, 1]
    assert b.shape_world == [-1, 0, 0, 0, 1, 1, 1]
    assert b.joint_world == [0, 0, 1, 1]
    assert b.shape_body == [-1, 0, 1, -1, 2, 3, -1]
    assert b.joint_parent == [-1, 0, -1, 2]
    assert b.joint_child == [0, 1, 2, 3]
    assert b.articulation_start == [0, 2]
    assert b.articulation_joint_end == 4
    assert b.shape_filter_pairs == {(1, 3), (4, 6)}
    assert b.body_filter_pairs == {(0, 1), (2, 3)}
    assert b.joint_dof_count == 4
    # the sub-builder itself is not modified
    assert sub.body_label == ["root", "tip"] and sub.world_count == 0


def test_add_world_places_bodies_static_shapes_and_world_joints():
    """add_world's xform moves body poses, rotates velocities, and places static shapes and parent -1 joint frames."""
    sub = two_link_sub()
    q = quat((0, 0, 1), 0.5 * math.pi)
    xf = (1.0, 2.0, 3.0, *q)
    b = ModelBuilder()
    b.add_world(sub, xf)
    r = rotmat(q)
    close(b.body_q[0][:3], np.array([1.0, 2.0, 3.0]) + r @ np.array([1.0, 0.0, 0.0]))
    close(b.body_q[1][:3], np.array([1.0, 2.0, 3.0]) + r @ np.array([1.0, 0.0, -1.0]))
    assert same_rotation(b.body_q[0][3:], q)
    assert same_rotation(b.body_q[1][3:], qmul(q, quat((1, 0, 0), 0.3)))
    close(b.body_qd[0], [0.0, 1.0, 0.0, 0.0, 0.0, 2.0])
    close(b.body_qd[1], np.zeros(6))
    # shapes on bodies stay relative to their body; static shapes are placed
    assert b.shape_transform[0] == sub.shape_transform[0]
    assert b.shape_transform[1] == sub.shape_transform[1]
    close(b.shape_transform[2][:3], np.array([1.0, 2.0, 3.0]) + r @ np.array([0.0, 2.0, 0.0]))
    # parent -1 joint frame is placed, a body-to-body joint frame is not
    close(b.joint_X_p[0][:3], [1.0, 2.0, 4.0])
    assert same_rotation(b.joint_X_p[0][3:], q)
    assert b.joint_X_p[1] == sub.joint_X_p[1]
    assert b.joint_X_c == sub.joint_X_c


def test_replicate_lays_worlds_on_a_grid():
    """replicate(n, spacing) adds n worlds offset by spacing on a square grid (cube when spacing z != 0)."""
    sub = ModelBuilder()
    dynamic_body(sub, (0.0, 0.0, 1.0))
    b = ModelBuilder()
    b.replicate(sub, 4, spacing=(2.0, 3.0, 0.0))
    assert b.world_count == 4 and b.body_world == [0, 1, 2, 3]
    positions = [tuple(q[:3]) for q in b.body_q]
    assert positions == [(0.0, 0.0, 1.0), (2.0, 0.0, 1.0), (0.0, 3.0, 1.0), (2.0, 3.0, 1.0)]
    assert b.body_label == [f"world_{i}/body_0" for i in range(4)]
    c = ModelBuilder()
    c.replicate(sub, 8, spacing=(1.0, 1.0, 1.0))
    assert tuple(c.body_q[7][:3]) == (1.0, 1.0, 2.0)


def test_replicate_after_existing_worlds_continues_numbering():
    """A second replicate continues world indices and label prefixes after the existing worlds."""
    b = worlds()
    sub = ModelBuilder()
    dynamic_body(sub)
    b.replicate(sub, 2)
    assert b.world_count == 4
    assert b.body_world == [0, 1, 2, 3]
    assert b.body_label[2:] == ["world_2/body_0", "world_3/body_0"]


def test_add_builder_into_existing_world_and_nested_worlds():
    """add_builder(world=w) puts the other's loose entities in w; the other's own worlds are appended after."""
    b = worlds()
    extra = ModelBuilder()
    dynamic_body(extra)
    b.add_builder(extra, world=1, label_prefix="x/")
    assert b.body_world == [0, 1, 1]
    assert b.body_label[-1] == "x/body_0"
    assert b.world_count == 2
    nested = worlds()
    b.add_builder(nested)
    assert b.world_count == 4
    assert b.body_world[3:] == [2, 3]


def test_finalize_without_worlds_is_one_world(device):
    """A builder without worlds finalizes as world_count 1 with bodies, joints, body shapes in 0 and ground in -1."""
    b = base()
    g = b.add_ground_plane()
    b.add_shape_sphere(-1, xform=(5, 0, 0, 0, 0, 0, 1))
    model = b.finalize(device=device)
    assert model.world_count == 1
    assert list(model.body_world.numpy()) == [0, 0, 0]
    assert list(model.joint_world.numpy()) == [0, 0]
    sw = model.shape_world.numpy()
    assert list(sw[:2]) == [0, 0]
    assert sw[g] == -1 and sw[-1] == -1
    assert model.gravity.shape == (1,)
    assert model.body_label == b.body_label


def test_finalize_copies_builder_topology(device):
    """The model's counts and index arrays equal the builder's lists."""
    b = base()
    b.add_articulation()
    model = b.finalize(device=device)
    assert (model.body_count, model.shape_count, model.joint_count) == (3, 2, 2)
    assert list(model.joint_parent.numpy()) == [-1, 0] and list(model.joint_child.numpy()) == [0, 1]
    assert list(model.joint_q_start.numpy()) == [0, 7, 8]
    assert list(model.joint_qd_start.numpy()) == [0, 6, 7]
    assert (model.joint_coord_count, model.joint_dof_count) == (8, 7)
    assert list(model.articulation_start.numpy()) == [0, 2]
    assert list(model.shape_body.numpy()) == [0, 1]
    close(model.body_qd.numpy()[1], [1.0, 0.0, 0.0, 0.0, 0.0, 1.0])


# ---------------------------------------------------------------------------------------------------------------
# Contact pairs and slots
# ---------------------------------------------------------------------------------------------------------------


def test_bodies_of_different_worlds_never_pair(device):
    """Overlapping bodies in different worlds form no pair; each pairs only with the shared ground."""
    sub = ModelBuilder()
    dynamic_body(sub, (0.0, 0.0, 0.1))
    sub.add_shape_sphere(0, radius=0.5)
    dynamic_body(sub, (0.0, 0.0, 0.2))
    sub.add_shape_box(1)
    b = ModelBuilder()
    g = b.add_ground_plane()
    b.replicate(sub, 3)
    model = b.finalize(device=device)
    sw = model.shape_world.numpy()
    pairs = pairs_of(model)
    for a, c in pairs:
        assert a == g or c == g or sw[a] == sw[c]
    # per world: ground-sphere, ground-box, sphere-box
    assert len(pairs) == 9
    assert model.world_count == 3


def test_joint_filters_parent_child_contacts_unless_disabled(device):
    """Bodies joined by a joint do not pair by default, and do with collision_filter_parent=False."""
    for flag, expected in ((True, set()), (False, {(0, 1)})):
        b = ModelBuilder()
        dynamic_body(b)
        dynamic_body(b)
        b.add_shape_sphere(0)
        b.add_shape_sphere(1)
        b.add_joint_ball(0, 1, collision_filter_parent=flag)
        assert pairs_of(b.finalize(device=device)) == expected


def test_collision_groups_and_filter_pairs(device):
    """Same nonzero group: no pair; group 0 or different groups: pair; a filter pair removes exactly that pair."""
    b = ModelBuilder()
    for _ in range(4):
        dynamic_body(b)
    b.add_shape_sphere(0, collision_group=2)
    b.add_shape_sphere(1, collision_group=2)
    b.add_shape_sphere(2, collision_group=3)
    b.add_shape_sphere(3, collision_group=0)
    all_but_01 = {(0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}
    assert pairs_of(b.finalize(device=device)) == all_but_01
    b.add_shape_collision_filter_pair(3, 1)
    assert b.shape_filter_pairs == {(1, 3)}
    assert pairs_of(b.finalize(device=device)) == all_but_01 - {(1, 3)}


def test_only_pairs_with_a_moving_body_collide(device):
    """Shapes of one body, static-static and kinematic-static shapes never pair; has_collision=False is skipped."""
    b = ModelBuilder()
    dynamic_body(b)
    b.add_body(mass=1.0, inertia=np.eye(3), is_kinematic=True)
    b.add_shape_sphere(0)  # 0
    b.add_shape_box(0)  # 1, same body as 0
    b.add_shape_sphere(1)  # 2, kinematic
    b.add_shape_sphere(-1)  # 3, static
    b.add_ground_plane()  # 4, static
    b.add_shape_sphere(0, has_collision=False)  # 5
    assert pairs_of(b.finalize(device=device)) == {(0, 2), (1, 2), (0, 3), (1, 3), (0, 4), (1, 4)}


def test_contact_pairs_are_type_ordered_and_slots_match_capacity(device):
    """Pairs have type(a) <= type(b); contact_pair/contact_sub give each pair pair_contact_capacity slots, in order."""
    b = ModelBuilder()
    b.add_ground_plane()
    for i in range(3):
        dynamic_body(b, (2.0 * i, 0.0, 1.0))
    b.add_shape_box(0)
    b.add_shape_capsule(1)
    b.add_shape_sphere(2)
    b.add_shape_cylinder(2, has_collision=False)
    model = b.finalize(device=device)
    types = model.shape_type.numpy()
    pairs = model.shape_contact_pairs.numpy().reshape(-1, 2)
    assert len(pairs) == model.shape_contact_pair_count == 6
    caps = []
    for a, c in pairs:
        assert types[a] <= types[c]
        caps.append(pair_contact_capacity(int(types[a]), int(types[c])))
    assert all(cap > 0 for cap in caps)
    assert model.contact_capacity == sum(caps)
    expected_pair = np.concatenate([np.full(cap, p) for p, cap in enumerate(caps)])
    expected_sub = np.concatenate([np.arange(cap) for cap in caps])
    np.testing.assert_array_equal(model.contact_pair.numpy(), expected_pair)
    np.testing.assert_array_equal(model.contact_sub.numpy(), expected_sub)


def test_body_slot_csr_lists_joint_and_contact_slots(device):
    """body_slot_start/body_slot list, per body in increasing order, 2j/2j+1 joint slots and 2J+2c/+1 contact slots."""
    b = ModelBuilder()
    b.add_ground_plane()
    for i in range(4):
        dynamic_body(b, (float(i), 0.0, 1.0))
    b.add_body()  # body 4: no joints, no colliding shapes
    b.add_shape_sphere(0)
    b.add_shape_box(1)
    b.add_shape_capsule(2)
    b.add_shape_sphere(3)
    b.add_joint_revolute(-1, 0)
    b.add_joint_revolute(0, 1, collision_filter_parent=False)
    b.add_joint_ball(1, 2)
    b.add_joint_fixed(3, 2)
    model = b.finalize(device=device)
    nj = model.joint_count
    sb = model.shape_body.numpy()
    pairs = model.shape_contact_pairs.numpy().reshape(-1, 2)
    expected = [[] for _ in range(model.body_count)]
    for j, (p, c) in enumerate(zip(b.joint_parent, b.joint_child, strict=True)):
        if p >= 0:
            expected[p].append(2 * j)
        expected[c].append(2 * j + 1)
    for slot, pair in enumerate(model.contact_pair.numpy()):
        a, c = pairs[pair]
        if sb[a] >= 0:
            expected[sb[a]].append(2 * nj + 2 * slot)
        if sb[c] >= 0:
            expected[sb[c]].append(2 * nj + 2 * slot + 1)
    start = model.body_slot_start.numpy()
    slots = model.body_slot.numpy()
    assert len(start) == model.body_count + 1 and start[0] == 0 and start[-1] == len(slots)
    for body in range(model.body_count):
        got = list(slots[start[body] : start[body + 1]])
        assert got == sorted(expected[body]), body
    assert start[4] == start[5]


def reference_contact_pairs(b, shape_world, moving, strict=True) -> np.ndarray:
    """The pair enumeration finalize used until the vectorised one (2c32aed), kept as the oracle: a Python loop
    over every two colliding shapes of one world, or of a world and the shared world -1."""
    shape_body = b.shape_body
    by_world: dict[int, list[int]] = {}
    for s in range(b.shape_count):
        if b.shape_has_collision[s]:
            by_world.setdefault(int(shape_world[s]), []).append(s)
    shared = by_world.pop(-1, [])
    pairs: list[tuple[int, int]] = []

    def consider(a: int, c: int):
        ba, bc = shape_body[a], shape_body[c]
        if ba == bc or not ((ba >= 0 and moving[ba]) or (bc >= 0 and moving[bc])):
            return
        ga, gc = b.shape_collision_group[a], b.shape_collision_group[c]
        if ga != 0 and ga == gc:
            return
        if (min(a, c), max(a, c)) in b.shape_filter_pairs:
            return
        if ba >= 0 and bc >= 0 and (min(ba, bc), max(ba, bc)) in b.body_filter_pairs:
            return
        ta, tc = b.shape_type[a], b.shape_type[c]
        if ta > tc:
            a, c, ta, tc = c, a, tc, ta
        if pair_contact_capacity(ta, tc) == 0:
            if ta == PLANE and tc == PLANE:
                return
            if strict:
                raise ValueError(f"unsupported {a} {c}")
        pairs.append((a, c))

    for i, a in enumerate(shared):
        for c in shared[i + 1 :]:
            consider(a, c)
    for shapes in by_world.values():
        for i, a in enumerate(shapes):
            for c in shared:
                consider(c, a)
            for c in shapes[i + 1 :]:
                consider(a, c)
    return np.asarray(pairs, dtype=np.int32).reshape(-1, 2)


def random_pair_scene(seed: int, cylinders: bool) -> ModelBuilder:
    """Worlds of random bodies (moving, kinematic, static) with 0-3 shapes each of random type, collision group and
    has_collision, hinges (parent filters), shape and body filter pairs, static shapes per world and in world -1;
    then shapes added to earlier worlds, so a world's shapes are not contiguous, and (half the seeds) world 0's shapes
    come after every other world's.
    Without ``cylinders`` every pair has a contact routine."""
    rng = np.random.default_rng(seed)
    types = [SPHERE, CAPSULE, BOX] + ([CYLINDER] if cylinders else [])
    adders = {
        SPHERE: "add_shape_sphere",
        CAPSULE: "add_shape_capsule",
        BOX: "add_shape_box",
        CYLINDER: "add_shape_cylinder",
    }

    def shape(tb, body):
        getattr(tb, adders[int(rng.choice(types))])(
            body, collision_group=int(rng.choice([0, 0, 0, 1, 2])), has_collision=bool(rng.random() < 0.9)
        )

    def world():
        tb = ModelBuilder()
        nb = int(rng.integers(0, 6))
        for i in range(nb):
            kind = rng.choice(["moving", "moving", "kinematic", "static"])
            tb.add_body(
                xform=(float(i), 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
                mass=0.0 if kind == "static" else 1.0,
                inertia=np.eye(3),
                is_kinematic=bool(kind == "kinematic"),
            )
            for _ in range(int(rng.integers(0, 4))):
                shape(tb, i)
            if i and rng.random() < 0.3:
                tb.add_joint_revolute(i - 1, i, collision_filter_parent=bool(rng.random() < 0.7))
        if rng.random() < 0.5:
            tb.add_shape_box(-1)  # static geometry of this world
        if tb.shape_count >= 2 and rng.random() < 0.5:
            a, c = rng.choice(tb.shape_count, 2, replace=False)
            tb.add_shape_collision_filter_pair(int(a), int(c))
        return tb

    b = ModelBuilder()
    b.add_ground_plane()
    b.add_shape_sphere(-1, xform=(3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))  # shared static sphere
    late_first = seed % 4 < 2  # world 0 gets its shapes last: worlds are not met in index order
    if late_first:
        b.add_world(ModelBuilder())
    worlds = int(rng.integers(1, 7)) + int(late_first)
    for _ in range(worlds - int(late_first)):
        b.add_world(world())
    for _ in range(int(rng.integers(0, 3))):
        b.add_builder(world(), world=int(rng.integers(0, worlds)))
    if late_first:
        b.add_builder(world(), world=0)
    if b.body_count >= 2:
        for _ in range(2):
            p, c = rng.choice(b.body_count, 2, replace=False)
            b.body_filter_pairs.add((int(min(p, c)), int(max(p, c))))
    return b


def _pair_inputs(b):
    from newton_tendon import finalize as fin

    _, _, shape_world, _ = fin._resolve_worlds(b)
    _, _, _, _, moving = fin._mass_properties(b)
    return fin, shape_world, moving


@pytest.mark.parametrize("seed", range(40))
def test_contact_pairs_match_the_reference_enumeration(seed):
    """The vectorised pair enumeration gives the reference loop's pair array exactly (same pairs, same order, same
    type ordering), on random multi-world scenes with every filter; with ``strict`` (finalize) both accept the
    same scenes (a cylinder facing a non-plane shape raises), and without it (colouring) both keep such pairs."""
    b = random_pair_scene(seed, cylinders=seed % 2 == 1)
    fin, shape_world, moving = _pair_inputs(b)
    np.testing.assert_array_equal(
        fin._contact_pairs(b, shape_world, moving, strict=False), reference_contact_pairs(b, shape_world, moving, False)
    )
    try:
        expected = reference_contact_pairs(b, shape_world, moving)
    except ValueError:
        with pytest.raises(ValueError, match="contact is not supported"):
            fin._contact_pairs(b, shape_world, moving)
        return
    got = fin._contact_pairs(b, shape_world, moving)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("scene", ["empty", "no-collision", "shared-only", "single-world-no-shared"])
def test_contact_pairs_match_the_reference_on_edge_scenes(scene):
    """Edge cases of the enumeration: no shapes, no colliding shapes, only world -1 shapes with a moving body in it
    (a builder without worlds), and one world without shared shapes."""
    b = ModelBuilder()
    if scene == "no-collision":
        dynamic_body(b)
        b.add_shape_sphere(0, has_collision=False)
        b.add_ground_plane()
        b.shape_has_collision[-1] = False
    elif scene == "shared-only":
        b.add_ground_plane()
        for i in range(3):
            dynamic_body(b, (float(i), 0.0, 1.0))
            b.add_shape_box(i)
    elif scene == "single-world-no-shared":
        tb = ModelBuilder()
        for i in range(4):
            dynamic_body(tb, (float(i), 0.0, 1.0))
            tb.add_shape_capsule(i)
        b.add_world(tb)
    fin, shape_world, moving = _pair_inputs(b)
    got = fin._contact_pairs(b, shape_world, moving)
    expected = reference_contact_pairs(b, shape_world, moving)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_unsupported_pair_error_names_the_first_pair():
    """The error for a pair without a contact routine names the first such pair in enumeration order (the shapes'
    labels and types), as the loop did."""
    b = ModelBuilder()
    dynamic_body(b)
    b.add_shape_sphere(0, label="ball")
    dynamic_body(b, (1.0, 0.0, 0.0))
    b.add_shape_cylinder(1, label="can")
    b.add_shape_cylinder(1, label="can2")
    fin, shape_world, moving = _pair_inputs(b)
    with pytest.raises(ValueError, match=r"shapes 'ball' \(sphere\) and 'can' \(cylinder\) may collide"):
        fin._contact_pairs(b, shape_world, moving)


# ---------------------------------------------------------------------------------------------------------------
# Colouring
# ---------------------------------------------------------------------------------------------------------------


def test_color_separates_jointed_bodies():
    """After color(), the two bodies of every body-to-body joint have different colours."""
    b = ModelBuilder()
    for _ in range(6):
        b.add_body()
    for p, c in ((0, 1), (0, 2), (0, 3), (1, 2), (3, 4), (2, 4)):
        b.add_joint_ball(p, c)
    b.add_joint_free(5)
    n = b.color()
    assert n == max(b.body_color) + 1
    for p, c in zip(b.joint_parent, b.joint_child, strict=True):
        if p >= 0:
            assert b.body_color[p] != b.body_color[c]


def test_chain_of_five_uses_two_colours(device):
    """A chain of 5 links uses 2 alternating colours, and model.body_color reflects them."""
    b = ModelBuilder()
    for _ in range(5):
        dynamic_body(b)
    b.add_joint_revolute(-1, 0)
    for i in range(4):
        b.add_joint_revolute(i, i + 1)
    assert b.color() == 2
    assert all(b.body_color[i] != b.body_color[i + 1] for i in range(4))
    model = b.finalize(device=device)
    assert list(model.body_color.numpy()) == b.body_color
    assert model.body_color_count == 2


def test_adding_a_body_invalidates_colours(device):
    """Adding a body or joint after color() clears the colouring; the model then reports colours -1 and count 0."""
    b = ModelBuilder()
    b.add_body()
    b.add_body()
    b.color()
    b.add_joint_fixed(0, 1)
    assert b.body_color is None
    model = b.finalize(device=device)
    assert list(model.body_color.numpy()) == [-1, -1]
    assert model.body_color_count == 0
    assert ModelBuilder().color() == 0


# ---------------------------------------------------------------------------------------------------------------
# Model / State / Control / Contacts field docs
# ---------------------------------------------------------------------------------------------------------------

DOC_CLASSES = [
    (model_module, "Model"),
    (state_module, "State"),
    (state_module, "Control"),
    (collision_module, "Contacts"),
]


def init_field_docs(module, cls_name: str) -> dict[str, str | None]:
    """Map each ``self.x = ...`` in ``cls.__init__`` to the string literal right after it (None if missing)."""
    tree = ast.parse(inspect.getsource(module))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    docs: dict[str, str | None] = {}

    def walk(stmts):
        for i, st in enumerate(stmts):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    nxt = stmts[i + 1] if i + 1 < len(stmts) else None
                    ok = (
                        isinstance(nxt, ast.Expr)
                        and isinstance(nxt.value, ast.Constant)
                        and isinstance(nxt.value.value, str)
                    )
                    docs[t.attr] = nxt.value.value if ok else None
            for field in ("body", "orelse", "finalbody"):
                walk(getattr(st, field, []) or [])

    walk(init.body)
    return docs


def test_every_init_attribute_has_a_docstring():
    """Every public self.x assignment in Model/State/Control/Contacts.__init__ is followed by a docstring."""
    offenders = []
    for module, cls in DOC_CLASSES:
        docs = init_field_docs(module, cls)
        assert docs, cls
        # Private attributes (leading underscore, e.g. Contacts._data) are implementation detail, not API.
        offenders += [f"{cls}.{name}" for name, doc in docs.items() if doc is None and not name.startswith("_")]
    assert offenders == []


def test_array_field_docstrings_state_shape(device):
    """The docstring of every Warp-array field of Model/State/Control/Contacts says its shape."""
    b = base()
    b.add_ground_plane()
    b.add_articulation()
    model = b.finalize(device=device)
    instances = {
        "Model": model,
        "State": model.state(),
        "Control": model.control(),
        "Contacts": newton_tendon.CollisionPipeline(model).contacts(),
    }
    offenders = []
    for module, cls in DOC_CLASSES:
        docs = init_field_docs(module, cls)
        obj = instances[cls]
        arrays = [n for n, v in vars(obj).items() if isinstance(v, wp.array) and not n.startswith("_")]
        assert arrays, cls
        offenders += [f"{cls}.{n}" for n in arrays if "shape" not in (docs.get(n) or "")]
    assert offenders == []


# A free body with a torque tau about a principal axis spins up by omega = tau dt / I in one step
# (no gravity, no contacts). float32 storage and one integration step agree with it to ~1e-6.
SPIN_REL = 1.0e-5


@pytest.mark.parametrize("radius", [2.0e-3, 1.0e-4, 0.1])
def test_small_body_rotates_under_torque(device, solver, radius):
    """The inverse inertia of a small body is its inverse, whatever its size (relative invertibility
    rule, ``inertia.INVERTIBLE_RATIO``): a 2 mm water sphere (det I = 1.5e-31 kg^3 m^6) had a zero
    inverse inertia under the old absolute bound det > 1e-30 and did not turn under any torque."""
    from ..helpers import Sim

    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_body(label="bead")
    b.add_shape_sphere(body, radius=radius, density=1000.0)
    m = 1000.0 * 4.0 / 3.0 * math.pi * radius**3
    inertia = 0.4 * m * radius**2
    sim = Sim(b, device, contacts=False, solver=solver)
    close(sim.model.body_inv_inertia.numpy()[0], np.eye(3) / inertia)
    dt = 1.0e-3
    tau = 10.0 * inertia  # 10 rad/s^2
    f = np.zeros((1, 6), dtype=np.float32)
    f[0, 5] = tau
    sim.state_0.body_f.assign(f)
    sim.step(dt)
    omega = sim.body_qd()[0, 3:]
    np.testing.assert_allclose(omega, [0.0, 0.0, tau * dt / inertia], rtol=SPIN_REL, atol=1e-9)


def test_singular_inertia_stays_uninverted_at_any_rotation():
    """A rod with no moment about its axis (principal moments (1, 1, 0) kg m^2), rotated off the
    axes, keeps a zero inverse inertia (rounding of the rotated matrix must not give it an inverse of
    ~1e16 about that axis) while a 2 mm sphere's tiny but regular inertia is inverted: the rule
    compares the smallest principal moment with the largest, far above eigenvalue rounding (~1e-16
    of the largest)."""
    from newton_tendon.inertia import inverse_mass_arrays, quat_to_matrix

    r = quat_to_matrix((0.3, -0.5, 0.2, math.sqrt(1.0 - 0.38)))
    rod = r @ np.diag([1.0, 1.0, 0.0]) @ r.T
    tiny = np.eye(3) * 5.4e-11  # a 2 mm water sphere
    inv_mass, inv_inertia = inverse_mass_arrays([1.0, 3.4e-5], np.stack([rod, tiny]), [True, True])
    np.testing.assert_array_equal(inv_inertia[0], np.zeros((3, 3)))
    close(inv_inertia[1], np.eye(3) / 5.4e-11)
    close(inv_mass, [1.0, 1.0 / 3.4e-5])
