"""Transforms of the UsdPhysics import: USD affine matrices to rigid poses and per-axis scale.

Poses are tuples (px, py, pz, qx, qy, qz, qw); matrices are 4x4 numpy arrays in the column-vector
convention.
"""

from __future__ import annotations

import math

import numpy as np

from newton_tendon import _hostmath as hm
from newton_tendon.inertia import quat_to_matrix

from ._physics_attrs import _where

# ----------------------------------------------------------------------------------------------
# Transforms. USD matrices use row vectors (p' = p M); we transpose to column vectors (p' = A p).


def _quat_from_matrix(r: np.ndarray) -> tuple:
    """Unit quaternion (x, y, z, w) with w >= 0 of a proper rotation matrix (column-vector convention)."""
    t = r[0, 0] + r[1, 1] + r[2, 2]
    if t > 0.0:
        s = 2.0 * math.sqrt(t + 1.0)
        q = ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s)
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = (0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s)
    elif r[1, 1] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = ((r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = ((r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s, (r[1, 0] - r[0, 1]) / s)
    n = math.sqrt(sum(c * c for c in q))
    sign = -1.0 if q[3] < 0.0 else 1.0
    return tuple(float(sign * c / n) for c in q)


def _matrix(gf_matrix) -> np.ndarray:
    """A Gf.Matrix4d as a 4x4 column-vector matrix."""
    return np.array(gf_matrix, dtype=np.float64).T


def _decompose(prim, a: np.ndarray) -> tuple[tuple, np.ndarray]:
    """Split a column-vector affine matrix into a rigid transform (position, quaternion) and per-axis scale.

    Shear, mirroring, zero scale and non-finite entries raise, naming ``prim``.
    """
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{_where(prim)}: its world transform is not finite")
    lin = a[:3, :3]
    scale = np.linalg.norm(lin, axis=0)
    if np.any(scale < 1.0e-12):
        raise ValueError(f"{_where(prim)}: its world transform has a zero scale")
    r = lin / scale
    if np.abs(r.T @ r - np.eye(3)).max() > 1.0e-5:
        raise ValueError(f"{_where(prim)}: sheared transforms are not supported (scale must follow rotation)")
    if np.linalg.det(r) < 0.0:
        raise ValueError(f"{_where(prim)}: mirrored transforms (negative scale) are not supported")
    return (*(float(c) for c in a[:3, 3]), *_quat_from_matrix(r)), scale


def _rigid_matrix(xf) -> np.ndarray:
    a = np.eye(4)
    a[:3, :3] = quat_to_matrix(xf[3:])
    a[:3, 3] = xf[:3]
    return a


def _inverse(xf) -> tuple:
    q_inv = (-xf[3], -xf[4], -xf[5], xf[6])
    p = hm.quat_rotate(q_inv, xf[:3])
    return (-p[0], -p[1], -p[2], *q_inv)
