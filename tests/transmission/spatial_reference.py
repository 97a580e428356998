"""Independent float64 NumPy reference for the length of a spatial transmission tendon.

Written from the spec ("Straight segments and via-points", "Sphere and cylinder wrapping", "Side
sites and route selection", "Pulley branches") without sharing code with
``newton_tendon/kernels/spatial.py``; it works on the unflattened path elements and resolves pulley divisors
itself. The planar route is chosen by enumerating both winding senses (the kernel computes the arc
from the winding angle directly), the wrapping planes use other bases, and the bend point of an
interior side site is found by dense sampling plus golden-section search (the kernel uses Newton).

Body poses are rows ``(px, py, pz, qx, qy, qz, qw)`` of the body frame in world.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

TWO_PI = 2.0 * math.pi


def quat_matrix(q) -> np.ndarray:
    """Rotation matrix of the unit quaternion (x, y, z, w)."""
    x, y, z, w = (float(c) for c in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def body_rotation(body_q: np.ndarray, body: int) -> np.ndarray:
    return np.eye(3) if body < 0 else quat_matrix(body_q[body, 3:7])


def world_point(body_q: np.ndarray, body: int, offset) -> np.ndarray:
    """World position [m] of a body-local point (world coordinates for body -1)."""
    p = np.asarray(offset, dtype=np.float64)
    if body < 0:
        return p.copy()
    return body_q[body, :3] + body_rotation(body_q, body) @ p


def wrap_to_pi(x: float) -> float:
    """x mapped to (-pi, pi]."""
    y = math.fmod(x + math.pi, TWO_PI)
    if y <= 0.0:
        y += TWO_PI
    return y - math.pi


@dataclass
class RouteInfo:
    """Length [m] and diagnostics of one tendon.

    ``margin`` is the smallest distance (relative to the wrap radius, or in radians) of any wrap
    from a configuration where the route jumps (an endpoint reaching the surface, a side site
    crossing the surface, an endpoint crossing the ray opposite the side site, a sphere plane
    becoming undefined): float32 and float64 may legitimately disagree closer than that.
    ``modes`` lists per wrap "straight", "wrap" or "bend".
    """

    length: float = 0.0
    margin: float = math.inf
    modes: list[str] = field(default_factory=list)


def _planar_length(pa, pb, r: float, side, inside: bool, info: RouteInfo) -> float:
    """Shortest planar length from pa to pb around/through the circle |x| = r (see module docstring)."""
    pa = np.asarray(pa, dtype=np.float64)
    pb = np.asarray(pb, dtype=np.float64)
    ra, rb = float(np.linalg.norm(pa)), float(np.linalg.norm(pb))
    straight = float(np.linalg.norm(pb - pa))
    info.margin = min(info.margin, abs(ra - r) / r, abs(rb - r) / r)
    if ra <= r or rb <= r:
        info.modes.append("straight")
        return straight
    phi_a = math.atan2(pa[1], pa[0])
    phi_b = math.atan2(pb[1], pb[0])
    alpha_a = math.acos(r / ra)
    alpha_b = math.acos(r / rb)

    if inside:
        d = pb - pa
        t = min(max(-float(pa @ d) / max(float(d @ d), 1e-300), 0.0), 1.0)
        if np.linalg.norm(pa + t * d) <= r:
            info.modes.append("straight")
            return straight
        g = wrap_to_pi(phi_b - phi_a)

        def f(x: float) -> float:
            p = r * np.array([math.cos(phi_a + x), math.sin(phi_a + x)])
            return float(np.linalg.norm(pa - p) + np.linalg.norm(pb - p))

        xs = np.linspace(0.0, g, 257)
        k = int(np.argmin([f(x) for x in xs]))
        lo, hi = xs[max(k - 1, 0)], xs[min(k + 1, len(xs) - 1)]
        golden = (math.sqrt(5.0) - 1.0) / 2.0
        for _ in range(100):
            x1 = hi - golden * (hi - lo)
            x2 = lo + golden * (hi - lo)
            if f(x1) < f(x2):
                hi = x2
            else:
                lo = x1
        info.modes.append("bend")
        return f(0.5 * (lo + hi))

    # Both senses of going round; each sweeps phi_a -> phi_b by an angle in [0, 2 pi).
    sweeps = {sense: math.fmod(sense * (phi_b - phi_a) + 2.0 * TWO_PI, TWO_PI) for sense in (1.0, -1.0)}
    if side is None:
        sense = 1.0 if sweeps[1.0] <= sweeps[-1.0] else -1.0
    else:
        phi_s = math.atan2(side[1], side[0])
        leg_a = wrap_to_pi(phi_s - phi_a)
        leg_b = wrap_to_pi(phi_b - phi_s)
        info.margin = min(info.margin, math.pi - abs(leg_a), math.pi - abs(leg_b))
        winding = leg_a + leg_b
        # The sense whose signed sweep equals the polyline's winding (they differ by 2 pi otherwise).
        sense = min(sweeps, key=lambda s: abs(s * sweeps[s] - winding))
    arc = sweeps[sense] - alpha_a - alpha_b
    if arc <= 0.0:
        info.modes.append("straight")
        return straight
    info.modes.append("wrap")
    return math.sqrt(ra * ra - r * r) + r * arc + math.sqrt(rb * rb - r * r)


def _wrap_length(a: np.ndarray, b: np.ndarray, wrap: TendonWrap, body_q: np.ndarray, info: RouteInfo) -> float:
    r = float(wrap.radius)
    c = world_point(body_q, wrap.body, wrap.offset)
    s = None if wrap.side is None else world_point(body_q, wrap.side.body, wrap.side.offset)
    u, v = a - c, b - c
    if wrap.kind == "sphere":
        e1 = u / np.linalg.norm(u)
        w = v - (v @ e1) * e1
        sin_g = np.linalg.norm(w) / max(np.linalg.norm(v), 1e-300)
        if s is not None:
            info.margin = min(info.margin, sin_g)
        if sin_g > 1e-9:
            e2 = w / np.linalg.norm(w)
        else:
            # Collinear with the centre: the plane through the side site (any plane without one).
            h = (s - c) if s is not None else np.array([0.0, 0.0, 1.0])
            h = h - (h @ e1) * e1
            if np.linalg.norm(h) < 1e-9:
                h = np.array([1.0, 0.0, 0.0]) - e1[0] * e1
            e2 = h / np.linalg.norm(h)
        pa, pb = np.array([u @ e1, u @ e2]), np.array([v @ e1, v @ e2])
        side2, inside, dz = None, False, 0.0
        if s is not None:
            ds = s - c
            side2 = np.array([ds @ e1, ds @ e2])
            inside = bool(np.linalg.norm(ds) < r)
            info.margin = min(info.margin, abs(np.linalg.norm(ds) - r) / r)
            if not inside:
                rel = np.linalg.norm(side2) / np.linalg.norm(ds)
                info.margin = min(info.margin, rel)
                if rel <= 1e-6:
                    side2 = None
    else:
        n = body_rotation(body_q, wrap.body) @ np.asarray(wrap.axis, dtype=np.float64)
        n = n / np.linalg.norm(n)
        helper = np.array([0.0, 0.0, 1.0]) if abs(n[2]) < 0.5 else np.array([0.0, 1.0, 0.0])
        e1 = np.cross(helper, n)
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(n, e1)
        pa, pb = np.array([u @ e1, u @ e2]), np.array([v @ e1, v @ e2])
        dz = float((v - u) @ n)
        side2, inside = None, False
        if s is not None:
            ds = s - c
            side2 = np.array([ds @ e1, ds @ e2])
            inside = bool(np.linalg.norm(side2) < r)
            info.margin = min(info.margin, abs(np.linalg.norm(side2) - r) / r)
    planar = _planar_length(pa, pb, r, side2, inside, info)
    return math.hypot(planar, dz)


def _branches(path):
    """(divisor, elements) per branch: the divisor starts at 1 and each pulley sets the next one."""
    divisor, current = 1.0, []
    for e in path:
        if isinstance(e, TendonPulley):
            if current:
                yield divisor, current
            divisor, current = float(e.divisor), []
        else:
            current.append(e)
    if current:
        yield divisor, current


def route_info(path, body_q) -> RouteInfo:
    """Length [m] of the tendon ``path`` at body poses ``body_q`` (shape [body_count, 7]), with diagnostics."""
    body_q = np.asarray(body_q, dtype=np.float64).reshape(-1, 7)
    info = RouteInfo()
    for divisor, elems in _branches(path):
        branch = 0.0
        k = 0
        while k < len(elems) - 1:
            a = world_point(body_q, elems[k].body, elems[k].offset)
            if isinstance(elems[k + 1], TendonSite):
                branch += float(np.linalg.norm(world_point(body_q, elems[k + 1].body, elems[k + 1].offset) - a))
                k += 1
            else:
                b = world_point(body_q, elems[k + 2].body, elems[k + 2].offset)
                branch += _wrap_length(a, b, elems[k + 1], body_q, info)
                k += 2
        info.length += branch / divisor
    return info


def tendon_length(path, body_q) -> float:
    """Length [m] of the tendon ``path`` at body poses ``body_q``."""
    return route_info(path, body_q).length


def rotation_vector_quat(w) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of the rotation vector w [rad] (exact exponential)."""
    w = np.asarray(w, dtype=np.float64)
    angle = float(np.linalg.norm(w))
    if angle < 1e-300:
        return np.array([0.0, 0.0, 0.0, 1.0])
    axis = w / angle
    return np.array([*(axis * math.sin(0.5 * angle)), math.cos(0.5 * angle)])


def quat_multiply(a, b) -> np.ndarray:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def advance_poses(body_q, body_com, v, w, h: float) -> np.ndarray:
    """Poses after moving each body for time h with COM velocity v[b] and angular velocity w[b]
    (world frame, rotation about the centre of mass)."""
    body_q = np.asarray(body_q, dtype=np.float64)
    out = body_q.copy()
    for b in range(body_q.shape[0]):
        rot = body_rotation(body_q, b)
        com = body_q[b, :3] + rot @ body_com[b]
        q = quat_multiply(rotation_vector_quat(h * np.asarray(w[b])), body_q[b, 3:7])
        q /= np.linalg.norm(q)
        out[b, 3:7] = q
        out[b, :3] = com + h * np.asarray(v[b]) - quat_matrix(q) @ body_com[b]
    return out


__all__ = [
    "RouteInfo",
    "TendonSite",
    "TendonWrap",
    "advance_poses",
    "body_rotation",
    "quat_matrix",
    "route_info",
    "tendon_length",
    "world_point",
]
