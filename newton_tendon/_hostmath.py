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


def quat_rotate(q, v):
    x, y, z, w = q
    u = np.array([x, y, z])
    v = np.asarray(v, dtype=np.float64)
    return tuple(v + 2.0 * np.cross(u, np.cross(u, v) + w * v))


def transform_mul(a, b):
    """Compose transforms: (a * b) maps b's frame into a's parent frame."""
    p = np.asarray(a[:3]) + np.asarray(quat_rotate(a[3:], b[:3]))
    q = quat_mul(a[3:], b[3:])
    n = math.sqrt(sum(c * c for c in q))
    return (*(float(c) for c in p), *(c / n for c in q))


def transform_point(t, p):
    return tuple(np.asarray(t[:3]) + np.asarray(quat_rotate(t[3:], p)))


def quat_from_axis_angle(axis, angle: float):
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    s = math.sin(0.5 * angle)
    return (a[0] * s, a[1] * s, a[2] * s, math.cos(0.5 * angle))
