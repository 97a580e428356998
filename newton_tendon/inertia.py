"""Mass properties of primitive shapes and their composition on a body (host side, float64)."""

from __future__ import annotations

import math

import numpy as np

from ._float32 import FLOAT32_MAX, first_overflow, overflows, range_message

INVERTIBLE_RATIO = 1e-12
"""A moving body's inertia is inverted when its smallest principal moment exceeds this fraction of its
largest [1]; below it the inverse inertia is zero (the body does not rotate). The rule is relative, so
it does not depend on the body's size: an absolute determinant bound (1e-30 kg^3 m^6 before) froze
the rotation of every sphere under about 2 mm at the density of water. 1e-12 sits four decades above
float64 rounding of the eigenvalues (a rotated rod's zero moment comes out near 1e-16 of the others)
and admits a needle whose radius is 4e-7 of its length."""


def invertible_inertia(inertia) -> np.ndarray:
    """Which of the inertias [kg m^2], shape [n, 3, 3] (or one [3, 3]), are inverted (``INVERTIBLE_RATIO``);
    bool array of shape [n] (or a 0-d one)."""
    inertia = np.asarray(inertia, dtype=np.float64)
    if inertia.size == 0:
        return np.zeros(inertia.shape[:-2], dtype=bool)
    sym = 0.5 * (inertia + np.swapaxes(inertia, -1, -2))
    with np.errstate(invalid="ignore", over="ignore"):
        eig = np.linalg.eigvalsh(np.nan_to_num(sym, nan=0.0, posinf=0.0, neginf=0.0))
    top = eig[..., -1]
    return (top > 0.0) & (eig[..., 0] > INVERTIBLE_RATIO * top)


def inverse_mass_arrays(mass, inertia, moving):
    """Inverse masses [1/kg] and inverse inertias [1/(kg m^2)] of n bodies in float64 (the solvers'
    rule): zero for a body that does not move (static or kinematic, or mass 0), and a zero inverse
    inertia where ``invertible_inertia`` is false. ``mass`` [n], ``inertia`` [n, 3, 3], ``moving`` [n]
    bool. 1/mass of a subnormal mass is inf (no warning): callers check float32 range."""
    mass = np.asarray(mass, dtype=np.float64)
    inertia = np.asarray(inertia, dtype=np.float64)
    moving = np.asarray(moving, dtype=bool) & (mass > 0.0)
    with np.errstate(over="ignore", divide="ignore"):
        inv_mass = np.where(moving, 1.0 / np.where(mass > 0.0, mass, 1.0), 0.0)
    inv_inertia = np.zeros_like(inertia)
    ok = moving & invertible_inertia(inertia)
    if ok.any():
        with np.errstate(over="ignore"):
            inv_inertia[ok] = np.linalg.inv(inertia[ok])
    return inv_mass, inv_inertia


def sphere_mass_properties(density: float, radius: float):
    """Mass [kg] and inertia [kg m^2] about the centre of a solid sphere."""
    m = density * 4.0 / 3.0 * math.pi * radius**3
    return m, np.eye(3) * (0.4 * m * radius**2)


def box_mass_properties(density: float, hx: float, hy: float, hz: float):
    """Mass and central inertia of a solid box with half extents (hx, hy, hz) [m]."""
    m = density * 8.0 * hx * hy * hz
    return m, np.diag([m / 3.0 * (hy**2 + hz**2), m / 3.0 * (hx**2 + hz**2), m / 3.0 * (hx**2 + hy**2)])


def ellipsoid_mass_properties(density: float, a: float, b: float, c: float):
    """Mass and central inertia of a solid ellipsoid with semi-axes (a, b, c) along local X, Y, Z [m]:
    m = 4/3 pi rho a b c, I_xx = m (b^2 + c^2) / 5 (and cyclically)."""
    m = density * 4.0 / 3.0 * math.pi * a * b * c
    return m, np.diag([0.2 * m * (b * b + c * c), 0.2 * m * (a * a + c * c), 0.2 * m * (a * a + b * b)])


MESH_INERTIA_MODES = ("exact", "legacy")
"""How :func:`mesh_mass_properties` measures a triangle mesh (see there)."""


def check_closed_mesh(vertices, faces) -> None:
    """Raise ValueError unless the triangle mesh bounds a solid: closed (every edge is shared by two
    faces), edge-manifold (by no more than two) and consistently wound (the two faces of an edge run
    it in opposite directions), with no face repeating a vertex. The exact mass properties
    (divergence theorem) hold only for such a mesh: a box missing its two top triangles, or with one
    triangle flipped, gave 6.667 kg for 8 kg and a centre of mass 1.5 cm off. Vertices at the same
    position are one vertex (a mesh split along seams still bounds its solid). The message names the
    first bad face by its index and its vertex indices."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    _, weld = np.unique(v, axis=0, return_inverse=True)
    w = weld.reshape(-1)[f]
    repeated = (w[:, 0] == w[:, 1]) | (w[:, 1] == w[:, 2]) | (w[:, 0] == w[:, 2])
    if np.any(repeated):
        i = int(np.argmax(repeated))
        raise ValueError(f"face {i} {f[i].tolist()} repeats a vertex (it has no area)")
    tail = w.reshape(-1)
    head = w[:, [1, 2, 0]].reshape(-1)
    n = int(weld.max()) + 1
    key = np.minimum(tail, head) * n + np.maximum(tail, head)
    forward = (tail < head).astype(np.int64)
    edge = np.arange(3 * len(f))
    keys, first, inverse, count = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    per_edge = count[inverse]

    def named(e: int) -> str:
        i, k = divmod(int(e), 3)
        a, b = f[i, k], f[i, (k + 1) % 3]
        return f"edge ({a}, {b}) of face {i} {f[i].tolist()}"

    if np.any(per_edge == 1):
        e = int(edge[per_edge == 1][0])
        raise ValueError(f"the mesh is not closed: {named(e)} belongs to no other face")
    if np.any(per_edge > 2):
        e = int(edge[per_edge > 2][0])
        raise ValueError(f"the mesh is not edge-manifold: {named(e)} is shared by {int(per_edge[e])} faces")
    forward_count = np.bincount(inverse, weights=forward, minlength=len(keys))
    same = forward_count[inverse] != 1
    if np.any(same):
        e = int(edge[same][-1])
        other = int(edge[same & (inverse == inverse[e]) & (edge != e)][0])
        raise ValueError(
            f"the mesh is not consistently wound: {named(e)} runs the edge in the same direction as face "
            f"{other // 3} {f[other // 3].tolist()} (one of them is flipped)"
        )


def mesh_mass_properties(density: float, vertices, faces, mode: str = "exact"):
    """Mass [kg], centre of mass [m] and inertia about the centre of mass [kg m^2] of a solid bounded
    by a triangle mesh (``vertices`` [V, 3] m, ``faces`` [F, 3] vertex indices), in the mesh frame.

    The solid is cut into one tetrahedron per face, with apex ``o``; tetrahedron (o, a, b, c) has the
    volume v = (a - o) . ((b - o) x (c - o)) / 6, its centroid at (o + a + b + c) / 4 and, about ``o``,
    the second moment C = v / 20 (A A^T + B B^T + C C^T + S S^T) with A = a - o ... and S = A + B + C;
    the inertia is tr(C) 1 - C.

    ``mode="exact"``: signed volumes about the origin (the divergence theorem), exact for a closed,
    consistently wound mesh whatever its shape; any other mesh raises ValueError
    (:func:`check_closed_mesh`). ``mode="legacy"``: MuJoCo's default for mesh geoms
    (its ``<mesh inertia="legacy">``): unsigned volumes, with the apex first at the face-area-weighted
    centroid of the surface, which gives the centre of mass, and then at that centre of mass for the
    volume and the inertia. It equals the exact value for a mesh that is star-shaped about those
    points and overcounts folds otherwise (matched to MuJoCo 4.0 to 1e-12 on dm_control's dog bones).

    Returns ``(mass, com, inertia)``; a mesh that encloses no volume raises ValueError, and so does one
    that bounds no solid in exact mode.
    """
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64)
    tri = v[f]  # [F, 3, 3]

    def moments(apex, signed):
        a, b, c = tri[:, 0] - apex, tri[:, 1] - apex, tri[:, 2] - apex
        vol = np.einsum("ij,ij->i", a, np.cross(b, c)) / 6.0
        if not signed:
            vol = np.abs(vol)
        s = a + b + c
        total = float(vol.sum())
        first = (vol[:, None] * s).sum(axis=0) / 4.0
        second = np.einsum("n,ni,nj->ij", vol / 20.0, a, a) + np.einsum("n,ni,nj->ij", vol / 20.0, b, b)
        second += np.einsum("n,ni,nj->ij", vol / 20.0, c, c) + np.einsum("n,ni,nj->ij", vol / 20.0, s, s)
        return total, first, second

    if mode == "exact":
        check_closed_mesh(v, f)
        apex = np.zeros(3)
        volume, first, second = moments(apex, True)
        if not volume > 0.0:
            raise ValueError(f"the mesh encloses no positive volume ({volume:g} m^3): is it closed and wound outwards?")
        com = first / volume
        # Second moment about the centre of mass (parallel axis).
        second = second - volume * np.outer(com, com)
    elif mode == "legacy":
        area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
        if not area.sum() > 0.0:
            raise ValueError("the mesh has no surface area")
        centroid = (area[:, None] * tri.mean(axis=1)).sum(axis=0) / area.sum()
        volume, first, _ = moments(centroid, False)
        if not volume > 0.0:
            raise ValueError("the mesh encloses no volume")
        com = centroid + first / volume
        volume, _, second = moments(com, False)
    else:
        raise ValueError(f"mode must be one of {MESH_INERTIA_MODES}, got {mode!r}")
    inertia = density * (np.trace(second) * np.eye(3) - second)
    return density * volume, com, inertia


def cylinder_mass_properties(density: float, radius: float, half_height: float):
    """Mass and central inertia of a solid cylinder along local Z."""
    h = 2.0 * half_height
    m = density * math.pi * radius**2 * h
    ixx = m * (3.0 * radius**2 + h**2) / 12.0
    return m, np.diag([ixx, ixx, 0.5 * m * radius**2])


def capsule_mass_properties(density: float, radius: float, half_height: float):
    """Mass and central inertia of a solid capsule (cylinder plus two hemispherical caps) along local Z."""
    h = 2.0 * half_height
    m_cyl = density * math.pi * radius**2 * h
    m_caps = density * 4.0 / 3.0 * math.pi * radius**3
    izz = 0.5 * m_cyl * radius**2 + 0.4 * m_caps * radius**2
    # Each hemisphere: own inertia about its centroid plus the shift to the capsule centre.
    ixx_cyl = m_cyl * (3.0 * radius**2 + h**2) / 12.0
    ixx_caps = m_caps * (0.4 * radius**2 + 0.25 * h**2 + 0.375 * h * radius)
    return m_cyl + m_caps, np.diag([ixx_cyl + ixx_caps, ixx_cyl + ixx_caps, izz])


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = (float(c) for c in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def combine(m0: float, c0, i0, m1: float, c1, i1):
    """Combine two rigid mass distributions (mass, COM, inertia about own COM, same axes).

    Returns the total mass, the combined COM and the inertia about it (parallel-axis theorem).
    """
    m = m0 + m1
    c0 = np.asarray(c0, dtype=np.float64)
    c1 = np.asarray(c1, dtype=np.float64)
    if m <= 0.0:
        return 0.0, c0, np.asarray(i0) + np.asarray(i1)
    c = (m0 * c0 + m1 * c1) / m

    def shift(mass, d):
        d = np.asarray(d)
        return mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))

    return m, c, np.asarray(i0) + shift(m0, c0 - c) + np.asarray(i1) + shift(m1, c1 - c)


def inverse_mass_properties(mass: float, inertia, moving: bool):
    """Inverse mass [1/kg] and inverse inertia [1/(kg m^2)] of one body in float64: zero for a body
    that does not move (static or kinematic), and a zero inverse inertia where ``invertible_inertia``
    is false."""
    inertia = np.asarray(inertia, dtype=np.float64).reshape(3, 3)
    if not moving or mass <= 0.0:
        return 0.0, np.zeros((3, 3))
    inv_inertia = np.linalg.inv(inertia) if invertible_inertia(inertia) else np.zeros((3, 3))
    return 1.0 / float(mass), inv_inertia  # a Python float: inf (not a warning) when 1/mass overflows float64


def float32_mass_problem(mass: float, inertia, moving: bool) -> str | None:
    """Why a body's mass properties do not fit the float32 model arrays, or None: the mass or inertia
    overflows float32, or (for a moving body) 1/mass or the inverse inertia does, which makes the
    body's response to any force infinite (NaN after one step)."""
    v = first_overflow(float(mass))
    if v is not None:
        return range_message("mass [kg]", v)
    inertia = np.asarray(inertia, dtype=np.float64).reshape(3, 3)
    v = first_overflow(inertia)
    if v is not None:
        return range_message("inertia component [kg m^2]", v)
    inv_mass, inv_inertia = inverse_mass_properties(mass, inertia, moving)
    if first_overflow(inv_mass) is not None or not math.isfinite(inv_mass):
        return (
            f"mass {mass:g} kg is too small for float32: its inverse {inv_mass:g} 1/kg overflows "
            f"(a moving body needs mass >= {1.0 / FLOAT32_MAX:.3g} kg)"
        )
    if overflows(inv_inertia).any() or not np.all(np.isfinite(inv_inertia)):
        eig = float(np.linalg.eigvalsh(np.asarray(inertia, dtype=np.float64).reshape(3, 3)).min())
        return (
            f"inertia is too small for float32: its inverse overflows (smallest principal moment {eig:g} kg m^2, "
            f"a moving body needs each >= {1.0 / FLOAT32_MAX:.3g} kg m^2)"
        )
    return None


def checked_inverse_mass_arrays(owner: str, labels, mass, inertia, moving):
    """``inverse_mass_arrays`` under the float32 rule of ``float32_mass_problem``: raise ValueError
    ``owner: body 'label' (index i): why`` for the first body whose mass, inertia or their inverses do
    not fit the float32 model arrays. ``finalize`` and ``notify_model_changed(BODY_PROPERTIES)`` share
    it, so an in-place edit meets the rule the builder applied. Returns (inv_mass [n], inv_inertia
    [n, 3, 3]) in float64; nothing is written anywhere."""
    mass = np.asarray(mass, dtype=np.float64)
    inertia = np.asarray(inertia, dtype=np.float64)
    moving = np.asarray(moving, dtype=bool)
    n = mass.shape[0]
    inv_mass, inv_inertia = inverse_mass_arrays(mass, inertia, moving)  # inf 1/mass flagged below
    # A vectorised screen; float32_mass_problem then names what is wrong with a flagged body.
    bad = overflows(mass) | overflows(inv_mass) | ~np.isfinite(inv_mass)
    bad |= (overflows(inertia) | overflows(inv_inertia) | ~np.isfinite(inv_inertia)).reshape(n, 9).any(axis=1)
    for i in np.nonzero(bad)[0]:
        problem = float32_mass_problem(mass[i], inertia[i], bool(moving[i]))
        if problem is not None:
            raise ValueError(f"{owner}: body '{labels[i]}' (index {i}): {problem}")
    return inv_mass, inv_inertia


INERTIA_TRIANGLE_RTOL = 1.0e-6
"""Slack on the triangle inequality, relative to the trace: a few float32 ulps, since inertias
authored in float32 (USD ``float3``) and stored in float32 (the Model) round a valid boundary case
such as (0.1, 0.2, 0.3) to one just past it; 1e-3 over the bound still fails."""


def check_inertia_triangle(owner: str, inertia, rtol: float = INERTIA_TRIANGLE_RTOL) -> None:
    """A rigid body's principal inertias satisfy I1 + I2 >= I3 for every ordering (they are sums of
    m (y^2 + z^2) and so on); MuJoCo rejects an inertia that does not ("A + B >= C"). Part of
    :func:`check_body_inertia`, the one rule the builder and every importer apply."""
    p = np.sort(np.linalg.eigvalsh(np.asarray(inertia, dtype=np.float64)))
    if p[0] + p[1] < p[2] - rtol * max(float(p.sum()), 0.0):
        raise ValueError(
            f"{owner}: inertia is not physical: its principal moments {p[0]:.9g}, {p[1]:.9g}, {p[2]:.9g} "
            "break the triangle inequality I1 + I2 >= I3"
        )


def check_body_inertia(owner: str, inertia, rtol: float = INERTIA_TRIANGLE_RTOL) -> np.ndarray:
    """The inertia rules of every body, wherever it comes from (``ModelBuilder.add_body``/``add_link``,
    MJCF ``<inertial>``, USD ``physics:diagonalInertia``, URDF ``<inertial>``): a 3x3 matrix of finite
    numbers [kg m^2], symmetric, positive semi-definite, whose principal moments satisfy the triangle
    inequality (:func:`check_inertia_triangle`; ``rtol`` its slack, MuJoCo's for MJCF). Returns it as a
    float64 3x3 array.

    Raises:
        TypeError: not numbers (a string, an object).
        ValueError: not 3x3, not finite, not symmetric, not positive semi-definite, or not physical.
    """
    if isinstance(inertia, (str, bytes)):
        raise TypeError(f"{owner}: inertia must be a 3x3 matrix of numbers, got {type(inertia).__name__}")
    try:
        a = np.array(inertia, dtype=np.float64)
    except TypeError:
        raise TypeError(f"{owner}: inertia must be a 3x3 matrix of numbers, got {inertia!r}") from None
    except ValueError:
        raise ValueError(f"{owner}: inertia must be a 3x3 matrix, got {inertia!r}") from None
    if a.size != 9:
        raise ValueError(f"{owner}: inertia must be a 3x3 matrix, got {a.size} values")
    a = a.reshape(3, 3)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: inertia must be finite")
    if not np.allclose(a, a.T, atol=1e-9 * max(1.0, np.abs(a).max())):
        raise ValueError(f"{owner}: inertia must be symmetric")
    if np.linalg.eigvalsh(a).min() < -1e-12 * max(1.0, np.abs(a).max()):
        raise ValueError(f"{owner}: inertia must be positive semi-definite")
    check_inertia_triangle(owner, a, rtol)
    return a
