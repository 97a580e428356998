"""Small float64 transform helpers for host-side scene assembly (transform = (px, py, pz, qx, qy, qz, qw))."""

from __future__ import annotations

import math

import numpy as np

IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def _cross(a0, a1, a2, b0, b1, b2):
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)


def quat_rotate(q, v):
    # Plain float arithmetic (the same operations, in the same order, as the numpy cross products it
    # replaces, so the results are bit-identical): scene assembly calls this per body, per joint and
    # per shape, and numpy's per-call overhead dominated imports of large models.
    x, y, z, w = (float(c) for c in q)
    v0, v1, v2 = (float(c) for c in v)
    c0, c1, c2 = _cross(x, y, z, v0, v1, v2)
    d0, d1, d2 = _cross(x, y, z, c0 + w * v0, c1 + w * v1, c2 + w * v2)
    return (v0 + 2.0 * d0, v1 + 2.0 * d1, v2 + 2.0 * d2)


def transform_mul(a, b):
    """Compose transforms: (a * b) maps b's frame into a's parent frame."""
    r = quat_rotate(a[3:], b[:3])
    p = (float(a[0]) + r[0], float(a[1]) + r[1], float(a[2]) + r[2])
    q = quat_mul(a[3:], b[3:])
    n = math.sqrt(sum(c * c for c in q))
    return (*p, *(c / n for c in q))


def transform_point(t, p):
    r = quat_rotate(t[3:], p)
    return (float(t[0]) + r[0], float(t[1]) + r[1], float(t[2]) + r[2])


def quat_from_axis_angle(axis, angle: float):
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    s = math.sin(0.5 * angle)
    return (a[0] * s, a[1] * s, a[2] * s, math.cos(0.5 * angle))


def quat_from_matrix(r) -> tuple:
    """Quaternion (x, y, z, w) of a rotation matrix."""
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        return ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s)
    i = int(np.argmax([r[0, 0], r[1, 1], r[2, 2]]))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = math.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k]) * 2.0
    q = [0.0, 0.0, 0.0, 0.0]
    q[i] = 0.25 * s
    q[j] = (r[j, i] + r[i, j]) / s
    q[k] = (r[k, i] + r[i, k]) / s
    q[3] = (r[k, j] - r[j, k]) / s
    return tuple(q)
