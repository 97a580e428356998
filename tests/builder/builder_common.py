"""Shared by the ``ModelBuilder`` tests of this folder: tolerances, small quaternion and inertia helpers, and
the scenes that the validation table (``test_builder_validation.py``) starts from.

Host-side mass properties are float64, so they are compared to the closed forms at 1e-6 relative (``REL``); the
Model stores float32 (relative rounding ~6e-8), so the same 1e-6 bound holds after conversion.
"""

from __future__ import annotations

import math

import numpy as np

from newton_tendon import ModelBuilder
from newton_tendon.kernels import types as T

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
    """A cylinder and a box on two dynamic bodies of the same world, free to collide."""
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
