"""Triangle meshes from files: STL (binary and ASCII) and Wavefront OBJ, read with NumPy only.

``load_mesh(path)`` returns ``(vertices [V, 3] float64, faces [F, 3] int64)``. STL stores each
triangle's corners on their own; equal corners are merged into one vertex (exact float equality), so
the mesh is indexed like an OBJ one. OBJ polygons are split into triangle fans; texture and normal
indices (``f 1/2/3``) are ignored and negative indices count back from the last vertex, as the format
says. Anything else raises ValueError naming the file.
"""

from __future__ import annotations

import os

import numpy as np

MESH_SUFFIXES = (".stl", ".obj")
"""File types :func:`load_mesh` reads."""


def load_mesh(path) -> tuple[np.ndarray, np.ndarray]:
    """Vertices [m] and triangle vertex indices of the mesh file ``path`` (``.stl`` or ``.obj``)."""
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in MESH_SUFFIXES:
        raise ValueError(f"mesh file {path!r}: unsupported type {suffix!r} (supported: {', '.join(MESH_SUFFIXES)})")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise ValueError(f"mesh file {path!r} cannot be read: {e.strerror or e}") from None
    try:
        vertices, faces = _stl(data) if suffix == ".stl" else _obj(data)
    except ValueError as e:
        raise ValueError(f"mesh file {path!r}: {e}") from None
    if len(faces) == 0:
        raise ValueError(f"mesh file {path!r} has no triangles")
    if not np.isfinite(vertices).all():
        raise ValueError(f"mesh file {path!r} has a vertex that is not finite")
    return vertices, faces


def _stl(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Binary STL when its triangle count matches its size; ASCII STL otherwise."""
    if len(data) >= 84:
        n = int.from_bytes(data[80:84], "little")
        if 84 + 50 * n == len(data):
            rec = np.frombuffer(
                data, dtype=np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")]), count=n, offset=84
            )
            return _merge(rec["v"].reshape(-1, 3).astype(np.float64))
    text = data.decode("ascii", errors="replace")
    if not text.lstrip().lower().startswith("solid"):
        raise ValueError("neither a binary STL (its size does not match its triangle count) nor an ASCII one")
    corners = []
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0].lower() == "vertex":
            if len(parts) != 4:
                raise ValueError(f"malformed vertex line {line.strip()!r}")
            corners.append([float(x) for x in parts[1:]])
    if len(corners) % 3:
        raise ValueError(f"{len(corners)} vertex lines is not a whole number of triangles")
    return _merge(np.asarray(corners, dtype=np.float64).reshape(-1, 3))


def _merge(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique vertices of a triangle soup ([3F, 3]) and the faces indexing them."""
    vertices, inverse = np.unique(corners, axis=0, return_inverse=True)
    return vertices, inverse.reshape(-1, 3).astype(np.int64)


def _obj(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    vertices, faces = [], []
    for lineno, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        parts = raw.split("#", 1)[0].split()
        if not parts:
            continue
        if parts[0] == "v":
            if len(parts) < 4:
                raise ValueError(f"line {lineno}: a vertex needs three coordinates")
            vertices.append([float(x) for x in parts[1:4]])
        elif parts[0] == "f":
            if len(parts) < 4:
                raise ValueError(f"line {lineno}: a face needs at least three vertices")
            idx = []
            for tok in parts[1:]:
                k = int(tok.split("/", 1)[0])
                k = k - 1 if k > 0 else len(vertices) + k
                if not 0 <= k < len(vertices):
                    raise ValueError(f"line {lineno}: vertex index {tok!r} is out of range")
                idx.append(k)
            faces.extend([idx[0], idx[i], idx[i + 1]] for i in range(1, len(idx) - 1))
    return np.asarray(vertices, dtype=np.float64).reshape(-1, 3), np.asarray(faces, dtype=np.int64).reshape(-1, 3)


__all__ = ["MESH_SUFFIXES", "load_mesh"]
