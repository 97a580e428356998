"""Spatial transmission tendons: path elements and their validated, flattened form.

A spatial tendon has one scalar length coordinate ``l`` (see ``docs``/spec "Tendon physics"). Its
path is an ordered list of

* ``TendonSite``: a point fixed to a body (or the world) that the tendon passes through,
* ``TendonWrap``: a sphere or infinite cylinder the tendon wraps around between the two sites on
  either side of it, optionally with a side site that selects the wrapping side (or, inside the
  obstacle, forces the route through it),
* ``TendonPulley``: the start of a new branch whose routed length is divided by ``divisor``.

``flatten_spatial_path`` validates a path as a whole and returns flat per-element lists;
``spatial_path_model`` packs several flattened paths into the device struct read by
``newton_tendon.kernels.spatial.spatial_tendon_geometry``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np
import warp as wp

from newton_tendon.kernels.spatial import (
    SPATIAL_CYLINDER,
    SPATIAL_PULLEY,
    SPATIAL_SITE,
    SPATIAL_SPHERE,
    SpatialPathModel,
)

WRAP_KINDS = {"sphere": int(SPATIAL_SPHERE), "cylinder": int(SPATIAL_CYLINDER)}
"""Element type code of each ``TendonWrap.kind``."""

SPATIAL_PATH_KEYS = (
    "type",
    "body",
    "offset",
    "axis",
    "radius",
    "side_body",
    "side_offset",
    "has_side",
    "divisor",
)
"""Keys of the dict returned by ``flatten_spatial_path`` (one list entry per element)."""


@dataclass(frozen=True, kw_only=True)
class TendonSite:
    """A point the tendon passes through.

    Args:
        body: Body index, -1 for the world.
        offset: Position in the body frame [m] (world position for body -1).
    """

    body: int = -1
    offset: tuple = (0.0, 0.0, 0.0)


@dataclass(frozen=True, kw_only=True)
class TendonWrap:
    """A sphere or infinite cylinder the tendon wraps around; it sits between two sites.

    Args:
        kind: ``"sphere"`` or ``"cylinder"``.
        body: Body index, -1 for the world.
        offset: Centre (a point on the axis for a cylinder) in the body frame [m].
        axis: Cylinder axis in the body frame (normalized when flattened; unused by spheres).
        radius: Wrapping radius [m] (> 0); the tendon centreline's distance from the centre/axis.
        side: Optional side site. Outside the obstacle it selects the side the tendon goes around
            (the route keeps the winding of endpoint -> side site -> endpoint); inside the sphere
            (or the cylinder's cross-section disk) it forces the route to pass through the
            surface. It routes only: it receives no force.
    """

    kind: str
    body: int = -1
    offset: tuple = (0.0, 0.0, 0.0)
    axis: tuple = (0.0, 0.0, 1.0)
    radius: float
    side: TendonSite | None = None


@dataclass(frozen=True, kw_only=True)
class TendonPulley:
    """Starts a new branch; the branch's routed length and forces are divided by ``divisor``.

    Args:
        divisor: Branch divisor [-] (> 0). It sets the following branch's divisor directly (it
            does not multiply the previous one); a leading pulley replaces the initial divisor 1.
    """

    divisor: float


def _is_real(x) -> bool:
    """A real number (Python or NumPy), not a bool."""
    return isinstance(x, Real) and not isinstance(x, bool | np.bool_)


def _vec3(value, where: str, what: str) -> tuple[float, float, float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{where}: {what} must be a sequence of 3 numbers, got {type(value).__name__}")
    if len(value) != 3:
        raise ValueError(f"{where}: {what} must have 3 components, got {len(value)}")
    out = []
    for x in value:
        if not _is_real(x):
            raise TypeError(f"{where}: {what} components must be numbers, got {type(x).__name__}")
        out.append(float(x))
    if not all(math.isfinite(x) for x in out):
        raise ValueError(f"{where}: {what} must be finite, got {tuple(out)}")
    return tuple(out)


def _body(value, body_count: int, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{where}: {what} must be an int (-1 for the world), got {type(value).__name__}")
    if not -1 <= int(value) < body_count:
        raise ValueError(f"{where}: {what} {int(value)} is out of range [-1, {body_count})")
    return int(value)


def _positive(value, where: str, what: str) -> float:
    if not _is_real(value):
        raise TypeError(f"{where}: {what} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{where}: {what} must be finite and > 0, got {v}")
    return v


def flatten_spatial_path(path: Sequence, body_count: int, name: str = "spatial tendon") -> dict[str, list]:
    """Validate a spatial tendon path and return its flat per-element lists.

    Rules (checked before anything is returned; errors name the tendon, the element index and the
    rule): the path is a non-empty list of ``TendonSite``/``TendonWrap``/``TendonPulley``; apart
    from an optional leading pulley it starts with a site, and it ends with a site; every wrap sits
    between two sites (site, wrap, site); no two pulleys in a row and no trailing pulley; every
    branch (the elements between pulleys) starts and ends with a site and has at least 2 sites;
    divisors and radii finite and > 0; body indices in [-1, body_count); offsets finite; cylinder
    axes nonzero. Wrong element or field types raise ``TypeError``, bad values ``ValueError``.

    Args:
        path: The ordered path elements.
        body_count: Number of bodies the indices refer to.
        name: Tendon name used in error messages.

    Returns:
        A dict with one list per key of ``SPATIAL_PATH_KEYS``, one entry per element: ``type``
        (``SPATIAL_SITE``/``SPHERE``/``CYLINDER``/``PULLEY`` codes), ``body``, ``offset`` [m],
        ``axis`` (unit, body frame), ``radius`` [m] (0 unless a wrap), ``side_body``,
        ``side_offset`` [m], ``has_side`` (0/1) and ``divisor`` (the divisor of the element's
        branch, already resolved: 1 until the first pulley, then each pulley's own divisor; a
        pulley element holds the divisor of the branch it starts).
    """
    if isinstance(path, (str, bytes)) or not isinstance(path, Sequence):
        raise TypeError(f"{name}: path must be a sequence of path elements, got {type(path).__name__}")
    if len(path) == 0:
        raise ValueError(f"{name}: path is empty; it needs at least two sites")
    for i, e in enumerate(path):
        if not isinstance(e, (TendonSite, TendonWrap, TendonPulley)):
            raise TypeError(
                f"{name}: element {i} is a {type(e).__name__}; expected TendonSite, TendonWrap or TendonPulley"
            )

    def where(i: int) -> str:
        return f"{name}: element {i} ({type(path[i]).__name__})"

    n = len(path)
    first = 1 if isinstance(path[0], TendonPulley) else 0
    if first >= n or not isinstance(path[first], TendonSite):
        i = min(first, n - 1)
        raise ValueError(f"{where(i)}: the path must start with a site (after an optional leading pulley)")
    if isinstance(path[-1], TendonPulley):
        raise ValueError(f"{where(n - 1)}: a pulley cannot be the last element (it would start an empty branch)")
    if not isinstance(path[-1], TendonSite):
        raise ValueError(f"{where(n - 1)}: the path must end with a site")
    for i, e in enumerate(path):
        if isinstance(e, TendonWrap):
            if not (0 < i < n - 1 and isinstance(path[i - 1], TendonSite) and isinstance(path[i + 1], TendonSite)):
                raise ValueError(f"{where(i)}: a wrap must sit between two sites (site, wrap, site)")
        elif isinstance(e, TendonPulley) and i > 0 and isinstance(path[i - 1], TendonPulley):
            raise ValueError(f"{where(i)}: two pulleys in a row")

    # Branches: [first, p1), [p1 + 1, p2), ... between pulleys.
    bounds = [first - 1] + [i for i in range(first, n) if isinstance(path[i], TendonPulley)] + [n]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        b0, b1 = lo + 1, hi - 1
        if not isinstance(path[b0], TendonSite):
            raise ValueError(f"{where(b0)}: a branch must start with a site")
        if not isinstance(path[b1], TendonSite):
            raise ValueError(f"{where(b1)}: a branch must end with a site (the element before a pulley)")
        if sum(isinstance(path[k], TendonSite) for k in range(b0, b1 + 1)) < 2:
            raise ValueError(f"{where(b0)}: the branch starting here has fewer than 2 sites")

    out: dict[str, list] = {k: [] for k in SPATIAL_PATH_KEYS}
    divisor = 1.0
    zero = (0.0, 0.0, 0.0)
    for i, e in enumerate(path):
        w = where(i)
        side_body, side_offset, has_side = -1, zero, 0
        axis, radius = (0.0, 0.0, 1.0), 0.0
        if isinstance(e, TendonPulley):
            divisor = _positive(e.divisor, w, "divisor")
            code, body, offset = int(SPATIAL_PULLEY), -1, zero
        elif isinstance(e, TendonSite):
            code = int(SPATIAL_SITE)
            body = _body(e.body, body_count, w, "body")
            offset = _vec3(e.offset, w, "offset")
        else:
            if not isinstance(e.kind, str):
                raise TypeError(f"{w}: kind must be 'sphere' or 'cylinder', got {type(e.kind).__name__}")
            if e.kind not in WRAP_KINDS:
                raise ValueError(f"{w}: kind must be 'sphere' or 'cylinder', got {e.kind!r}")
            code = WRAP_KINDS[e.kind]
            body = _body(e.body, body_count, w, "body")
            offset = _vec3(e.offset, w, "offset")
            radius = _positive(e.radius, w, "radius")
            a = _vec3(e.axis, w, "axis")
            norm = math.sqrt(sum(x * x for x in a))
            if e.kind == "cylinder" and norm < 1.0e-9:
                raise ValueError(f"{w}: cylinder axis must be nonzero")
            if norm >= 1.0e-9:
                axis = tuple(x / norm for x in a)
            if e.side is not None:
                if not isinstance(e.side, TendonSite):
                    raise TypeError(f"{w}: side must be a TendonSite or None, got {type(e.side).__name__}")
                side_body = _body(e.side.body, body_count, w, "side site body")
                side_offset = _vec3(e.side.offset, w, "side site offset")
                has_side = 1
        out["type"].append(code)
        out["body"].append(body)
        out["offset"].append(offset)
        out["axis"].append(axis)
        out["radius"].append(radius)
        out["side_body"].append(side_body)
        out["side_offset"].append(side_offset)
        out["has_side"].append(has_side)
        out["divisor"].append(divisor)
    return out


def spatial_path_model(paths: Sequence[dict[str, list]], device=None) -> SpatialPathModel:
    """Concatenate flattened paths (``flatten_spatial_path`` results, one per tendon, in tendon
    order) into a ``SpatialPathModel`` on ``device``, with CSR offsets ``start``."""
    counts = [len(p["type"]) for p in paths]
    start = np.zeros(len(paths) + 1, dtype=np.int32)
    start[1:] = np.cumsum(counts, dtype=np.int64)

    def cat(key: str, dtype, width: int = 0) -> np.ndarray:
        values = [v for p in paths for v in p[key]]
        shape = (len(values), width) if width else (len(values),)
        return np.asarray(values, dtype=dtype).reshape(shape)

    m = SpatialPathModel()
    m.start = wp.array(start, dtype=wp.int32, device=device)
    m.type = wp.array(cat("type", np.int32), dtype=wp.int32, device=device)
    m.body = wp.array(cat("body", np.int32), dtype=wp.int32, device=device)
    m.offset = wp.array(cat("offset", np.float32, 3), dtype=wp.vec3, device=device)
    m.axis = wp.array(cat("axis", np.float32, 3), dtype=wp.vec3, device=device)
    m.radius = wp.array(cat("radius", np.float32), dtype=wp.float32, device=device)
    m.side_body = wp.array(cat("side_body", np.int32), dtype=wp.int32, device=device)
    m.side_offset = wp.array(cat("side_offset", np.float32, 3), dtype=wp.vec3, device=device)
    m.has_side = wp.array(cat("has_side", np.int32), dtype=wp.int32, device=device)
    m.divisor = wp.array(cat("divisor", np.float32), dtype=wp.float32, device=device)
    return m


__all__ = [
    "SPATIAL_PATH_KEYS",
    "TendonPulley",
    "TendonSite",
    "TendonWrap",
    "WRAP_KINDS",
    "flatten_spatial_path",
    "spatial_path_model",
]
