"""Headless pictures: a small NumPy software rasterizer for scenes, and matplotlib plots of histories.

:func:`render_png` needs nothing beyond NumPy: bodies are tessellated into triangles, flat-shaded
and depth-tested, tendons are drawn as screen-space ribbons coloured by tension, and the image is
written as an 8-bit RGB PNG by :func:`write_png` (zlib from the standard library). The pinhole
projection is :meth:`Camera.project`, so a test can map any 3D point to its pixel.
:func:`plot_history` uses matplotlib (the ``examples`` extra).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Mapping

import numpy as np

from ._geometry import (
    DEFAULT_ARC_POINTS,
    SceneGeometry,
    check_tension_range,
    check_world_offsets,
    model_visuals,
    quat_rotate,
    select_worlds,
    tension_color,
    transform_points,
    world_visible,
)

# ----------------------------------------------------------------------------------------------
# Camera


class Camera:
    """A pinhole camera looking from ``eye`` at ``target``.

    Args:
        eye: Camera position [m] (world).
        target: Point [m] at the image centre.
        up: Direction that appears upward in the image (need not be perpendicular to the view).
        fov: Vertical field of view [deg], in (0, 180).
        width: Image width [px].
        height: Image height [px].
        near: Distance [m] in front of the eye below which geometry is not drawn.

    Pixel convention: ``u`` grows to the right from the left edge, ``v`` downward from the top
    edge, both in pixels; the centre of pixel ``(row, col)`` is ``(u, v) = (col + 0.5, row + 0.5)``.
    """

    def __init__(
        self,
        eye,
        target,
        up=(0.0, 0.0, 1.0),
        fov: float = 45.0,
        width: int = 640,
        height: int = 480,
        near: float = 1.0e-3,
    ):
        owner = "Camera"
        self.eye = _vec3(owner, "eye", eye)
        self.target = _vec3(owner, "target", target)
        up = _vec3(owner, "up", up)
        self.fov = float(fov)
        if not 0.0 < self.fov < 180.0:
            raise ValueError(f"{owner}: fov must be in (0, 180) degrees, got {fov!r}")
        for name, v in (("width", width), ("height", height)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= 16384:
                raise ValueError(f"{owner}: {name} must be an int in [1, 16384] pixels, got {v!r}")
        self.width = int(width)
        self.height = int(height)
        self.near = float(near)
        if not self.near > 0.0:
            raise ValueError(f"{owner}: near must be > 0 m, got {near!r}")
        forward = self.target - self.eye
        dist = np.linalg.norm(forward)
        if dist <= 1e-12:
            raise ValueError(f"{owner}: eye and target coincide at {tuple(self.eye)}")
        self.forward = forward / dist
        """Unit viewing direction (world)."""
        right = np.cross(self.forward, up)
        if np.linalg.norm(right) <= 1e-9 * max(np.linalg.norm(up), 1e-30):
            raise ValueError(f"{owner}: up {tuple(up)} is parallel to the viewing direction")
        self.right = right / np.linalg.norm(right)
        """Unit vector pointing to the image's right (world)."""
        self.up = np.cross(self.right, self.forward)
        """Unit vector pointing to the image's top (world)."""
        self.focal = 0.5 * self.height / np.tan(np.radians(0.5 * self.fov))
        """Focal length [px]."""

    def project(self, points) -> tuple[np.ndarray, np.ndarray]:
        """Project world points (shape ``(..., 3)``, in m) to pixel coordinates.

        Returns:
            ``(uv, depth)``: pixel coordinates ``(u, v)``, shape ``(..., 2)`` (see the class docstring) and the
            distance [m] along the viewing direction (points with depth <= ``near`` are behind the
            camera; their ``uv`` is meaningless).
        """
        p = np.asarray(points, dtype=np.float64) - self.eye
        x = p @ self.right
        y = p @ self.up
        z = p @ self.forward
        safe = np.where(np.abs(z) > 1e-12, z, 1e-12)
        u = 0.5 * self.width + self.focal * x / safe
        v = 0.5 * self.height - self.focal * y / safe
        return np.stack([u, v], axis=-1), z

    def pixel(self, points) -> np.ndarray:
        """Integer ``(row, col)`` of the pixel containing each projected point, [..., 2]."""
        uv, _ = self.project(points)
        return np.stack([np.floor(uv[..., 1]), np.floor(uv[..., 0])], axis=-1).astype(np.int64)


def _vec3(owner: str, name: str, value) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{owner}: {name} must be 3 numbers, got {value!r}") from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{owner}: {name} must be 3 finite numbers, got {value!r}")
    return v


_CAMERA_KEYS = ("eye", "target", "up", "fov", "near")


def _up_vector(model) -> np.ndarray:
    up = np.zeros(3)
    up[model.up_axis if model.up_axis in (0, 1, 2) else 2] = 1.0
    return up


def _scene_bounds(geo: SceneGeometry, visuals, worlds, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned bounds [m] of the drawn bodies, bounded shapes and tendons."""
    pts = []
    for vis in visuals:
        if vis.kind == "plane":
            continue
        if not world_visible(worlds, vis.world):
            continue
        pose = geo.body_q[vis.body] if vis.body >= 0 else np.array([0, 0, 0, 0, 0, 0, 1.0])
        centre = transform_points(pose, transform_points(vis.xform, np.zeros(3)))
        boxy = vis.kind in ("box", "ellipsoid", "mesh")
        reach = float(np.linalg.norm(vis.size)) if boxy else float(vis.size[0] + vis.size[1])
        shift = offsets[vis.world] if offsets is not None and vis.world >= 0 else 0.0
        pts.append(centre + shift - reach)
        pts.append(centre + shift + reach)
    for layout in geo.tendons:
        if world_visible(worlds, layout.world) and layout.vertex_count:
            p = geo.points(layout)
            if offsets is not None and layout.world >= 0:
                p = p + offsets[layout.world]
            pts.append(p.min(axis=0))
            pts.append(p.max(axis=0))
    for b in range(geo.body_q.shape[0]):
        w = int(geo.model_body_world[b])
        if world_visible(worlds, w):
            pts.append(geo.body_q[b, :3] + (offsets[w] if offsets is not None else 0.0))
    if not pts:
        return np.full(3, -1.0), np.full(3, 1.0)
    arr = np.vstack([np.atleast_2d(p) for p in pts])
    arr = arr[np.all(np.isfinite(arr), axis=1)]
    if not len(arr):
        return np.full(3, -1.0), np.full(3, 1.0)
    return arr.min(axis=0), arr.max(axis=0)


def _auto_camera(model, lo, hi, width, height, fov=40.0) -> Camera:
    up = _up_vector(model)
    a = int(np.argmax(up))
    h1, h2 = np.eye(3)[(a + 1) % 3], np.eye(3)[(a + 2) % 3]
    centre = 0.5 * (lo + hi)
    radius = max(0.5 * float(np.linalg.norm(hi - lo)), 0.25)
    direction = 0.55 * h1 - 1.3 * h2 + 0.5 * up
    direction /= np.linalg.norm(direction)
    half = np.radians(0.5 * fov) * min(1.0, width / height)
    dist = radius / np.sin(half)
    return Camera(centre + dist * direction, centre, up, fov, width, height)


def resolve_camera(
    model,
    state,
    camera=None,
    *,
    width: int = 640,
    height: int = 480,
    world=None,
    solver=None,
    world_offsets=None,
    geometry: SceneGeometry | None = None,
) -> Camera:
    """The camera :func:`render_png` uses for these arguments.

    ``camera`` may be a :class:`Camera` (used as is), a dict with keys ``eye``, ``target`` (both
    [m]), and optionally ``up`` (default: the model's up axis), ``fov`` [deg] (default 45) and
    ``near`` [m], or None to frame every drawn body, shape and tendon from an oblique view.
    """
    owner = "render_png"
    if isinstance(camera, Camera):
        return camera
    if camera is not None and not isinstance(camera, Mapping):
        raise TypeError(f"{owner}: camera must be None, a dict or a Camera, got {type(camera).__name__}")
    if camera is not None:
        extra = set(camera) - set(_CAMERA_KEYS)
        if extra:
            raise ValueError(f"{owner}: unknown camera keys {sorted(extra)}; allowed: {', '.join(_CAMERA_KEYS)}")
        if "eye" not in camera or "target" not in camera:
            raise ValueError(f"{owner}: camera dict needs 'eye' and 'target', got keys {sorted(camera)}")
        kw = dict(camera)
        kw.setdefault("up", tuple(_up_vector(model)))
        return Camera(width=width, height=height, **kw)
    worlds = select_worlds(owner, model, world)
    offsets = check_world_offsets(owner, model, world_offsets)
    geo = geometry
    if geo is None:
        geo = SceneGeometry(model, solver)
        geo.update(state)
    _attach_body_world(geo)
    lo, hi = _scene_bounds(geo, model_visuals(model, cable_width=geo.cable_width), worlds, offsets)
    return _auto_camera(model, lo, hi, width, height)


def _attach_body_world(geo: SceneGeometry):
    if not hasattr(geo, "model_body_world"):
        m = geo.model
        geo.model_body_world = m.body_world.numpy() if m.body_count else np.zeros(0, np.int32)


# ----------------------------------------------------------------------------------------------
# Tessellation (shape-local frames, the model's shape conventions)


def _lathe(profile: list[tuple[float, float]], segments: int) -> tuple[np.ndarray, np.ndarray]:
    """Surface of revolution about local Z of a (radius, z) profile listed bottom to top."""
    phi = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    rho = np.array([p[0] for p in profile])
    z = np.array([p[1] for p in profile])
    verts = np.stack(
        [np.outer(rho, np.cos(phi)).ravel(), np.outer(rho, np.sin(phi)).ravel(), np.repeat(z, segments)], axis=1
    )
    j, k = np.meshgrid(np.arange(len(profile) - 1), np.arange(segments), indexing="ij")
    j, k = j.ravel(), k.ravel()
    k1 = (k + 1) % segments
    a, b = j * segments + k, j * segments + k1
    c, d = (j + 1) * segments + k1, (j + 1) * segments + k
    faces = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return verts, faces


def shape_mesh(
    kind: str, size, *, segments: int = 16, plane_half: float = 5.0, mesh=None
) -> tuple[np.ndarray, np.ndarray]:
    """Triangle mesh ``(vertices [V, 3] m, faces [F, 3] int)`` of a primitive in its own frame (a
    "mesh" shape returns its own ``mesh``).

    ``size`` follows the model's shape convention (see ``Model.shape_scale``); an unbounded plane
    (size 0) becomes a square of half size ``plane_half`` [m], split into a grid so that a camera
    inside it still sees the part in front of it.
    """
    if kind == "mesh":
        if mesh is None:
            raise ValueError("shape_mesh: a mesh shape needs its mesh=(vertices, faces)")
        return np.asarray(mesh[0], dtype=np.float64), np.asarray(mesh[1], dtype=np.int64)
    size = np.asarray(size, dtype=np.float64)
    rows = max(segments // 2, 3)
    if kind == "sphere":
        lat = np.linspace(-0.5 * np.pi, 0.5 * np.pi, rows + 1)
        return _lathe([(size[0] * np.cos(a), size[0] * np.sin(a)) for a in lat], segments)
    if kind == "ellipsoid":
        verts, faces = _lathe([(np.cos(a), np.sin(a)) for a in lat], segments)
        return verts * size, faces
    if kind == "capsule":
        r, h = size[0], size[1]
        lat = np.linspace(0.0, 0.5 * np.pi, max(rows // 2, 2) + 1)
        bottom = [(r * np.sin(a), -h - r * np.cos(a)) for a in lat]
        top = [(r * np.cos(a), h + r * np.sin(a)) for a in lat]
        return _lathe(bottom + top, segments)
    if kind == "cylinder":
        r, h = size[0], size[1]
        return _lathe([(0.0, -h), (r, -h), (r, h), (0.0, h)], segments)
    if kind == "box":
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
        quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
        faces = np.array([f for a, b, c, d in quads for f in ((a, b, c), (a, c, d))])
        return corners * size, faces
    if kind == "plane":
        hx = size[0] if size[0] > 0.0 else plane_half
        hy = size[1] if size[1] > 0.0 else plane_half
        n = 12
        xs, ys = np.meshgrid(np.linspace(-hx, hx, n + 1), np.linspace(-hy, hy, n + 1), indexing="ij")
        verts = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)], axis=1)
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        a = (i * (n + 1) + j).ravel()
        faces = np.concatenate([np.stack([a, a + n + 1, a + n + 2], 1), np.stack([a, a + n + 2, a + 1], 1)])
        return verts, faces
    raise ValueError(f"shape_mesh: unknown primitive kind {kind!r}")


# ----------------------------------------------------------------------------------------------
# Rasterizer


class _Canvas:
    """Colour and depth buffers with triangle rasterization (perspective-correct depth)."""

    def __init__(self, width: int, height: int, background):
        self.color = np.empty((height, width, 3), dtype=np.float64)
        self.color[:] = background
        self.depth = np.full((height, width), np.inf)
        self.width = width
        self.height = height

    def triangles(self, uv: np.ndarray, depth: np.ndarray, colors: np.ndarray, bias: float = 0.0):
        """Fill triangles ``uv`` [F, 3, 2] px with per-triangle ``colors`` [F, 3]; ``depth`` [F, 3] m.

        A pixel is covered when its centre lies inside the triangle (edges included); depth is
        interpolated perspective-correctly (1/z is linear on screen) and ``bias`` [m] pulls it forward.
        """
        w, h = self.width, self.height
        uv = np.asarray(uv, dtype=np.float64)
        area = (uv[:, 1, 0] - uv[:, 0, 0]) * (uv[:, 2, 1] - uv[:, 0, 1]) - (uv[:, 2, 0] - uv[:, 0, 0]) * (
            uv[:, 1, 1] - uv[:, 0, 1]
        )
        lo = np.maximum(np.floor(uv.min(axis=1) - 0.5).astype(np.int64), 0)
        hi = np.minimum(np.ceil(uv.max(axis=1) - 0.5).astype(np.int64), [w - 1, h - 1])
        keep = (np.abs(area) > 1e-12) & np.all(hi >= lo, axis=1)
        small = keep & np.all(hi - lo < _STENCIL, axis=1)
        idx = np.nonzero(small)[0]
        for c in range(0, len(idx), 8192):
            self._stencil(idx[c : c + 8192], uv, area, lo, depth, colors, bias)
        for f in np.nonzero(keep & ~small)[0]:
            px = np.arange(lo[f, 0], hi[f, 0] + 1)[None, :] + 0.5
            py = np.arange(lo[f, 1], hi[f, 1] + 1)[:, None] + 0.5
            z, inside = _coverage(uv[f], area[f], depth[f], px, py)
            zb = self.depth[lo[f, 1] : hi[f, 1] + 1, lo[f, 0] : hi[f, 0] + 1]
            win = inside & (z - bias < zb)
            zb[win] = z[win] - bias
            self.color[lo[f, 1] : hi[f, 1] + 1, lo[f, 0] : hi[f, 0] + 1][win] = colors[f]

    def _stencil(self, idx, uv, area, lo, depth, colors, bias):
        """Rasterize many small triangles at once on a _STENCIL x _STENCIL pixel window each."""
        w, h = self.width, self.height
        d = np.arange(_STENCIL)
        col = lo[idx, 0][:, None, None] + d[None, None, :]
        row = lo[idx, 1][:, None, None] + d[None, :, None]
        t = [[uv[idx, k, j][:, None, None] for j in range(2)] for k in range(3)]
        zs = [depth[idx, k][:, None, None] for k in range(3)]
        z, inside = _coverage(t, area[idx][:, None, None], zs, col + 0.5, row + 0.5)
        inside &= (col < w) & (row < h)
        f, r, c = np.nonzero(inside)
        if not len(f):
            return
        pix = row[f, r, 0] * w + col[f, 0, c]
        zz = z[f, r, c] - bias
        # Nearest candidate per pixel, then the depth test against what is already drawn.
        order = np.lexsort((zz, pix))
        pix, zz, f = pix[order], zz[order], f[order]
        first = np.ones(len(pix), bool)
        first[1:] = pix[1:] != pix[:-1]
        pix, zz, f = pix[first], zz[first], f[first]
        flat_depth = self.depth.reshape(-1)
        win = zz < flat_depth[pix]
        flat_depth[pix[win]] = zz[win]
        self.color.reshape(-1, 3)[pix[win]] = colors[idx[f[win]]]


_STENCIL = 8
"""Triangles whose pixel bounds fit in this many pixels per side are rasterized in vectorized batches."""


def _coverage(t, area, depth, px, py):
    """Perspective-correct depth and inside mask of pixel centres (px, py) for a triangle: ``t`` holds
    the three vertices' (u, v) [3][2] and ``depth`` their depths [3] (arrays broadcast against px, py)."""
    (x0, y0), (x1, y1), (x2, y2) = t
    b0 = ((x1 - px) * (y2 - py) - (x2 - px) * (y1 - py)) / area
    b1 = ((x2 - px) * (y0 - py) - (x0 - px) * (y2 - py)) / area
    b2 = 1.0 - b0 - b1
    inside = (b0 >= 0.0) & (b1 >= 0.0) & (b2 >= 0.0)
    inv = b0 / depth[0] + b1 / depth[1] + b2 / depth[2]
    return 1.0 / np.where(inv > 0.0, inv, 1e-30), inside


def _shade(normals: np.ndarray, colors: np.ndarray, light: np.ndarray) -> np.ndarray:
    lam = np.abs(normals @ light)
    return np.clip(colors * (0.35 + 0.65 * lam)[:, None], 0.0, 1.0)


def render_image(
    model,
    state,
    *,
    solver=None,
    camera=None,
    width: int = 640,
    height: int = 480,
    world=None,
    tension_range=None,
    tendon_color=None,
    background=(1.0, 1.0, 1.0),
    guides: bool = True,
    world_offsets=None,
    min_line_width: float = 3.0,
    arc_points: int = DEFAULT_ARC_POINTS,
) -> np.ndarray:
    """Render bodies and tendons of ``state`` into an RGB image (see :func:`render_png` for the arguments).

    Returns:
        uint8 array [height, width, 3].
    """
    owner = "render_png"
    worlds = select_worlds(owner, model, world)
    offsets = check_world_offsets(owner, model, world_offsets)
    trange = check_tension_range(owner, tension_range)
    bg = _vec3(owner, "background", background)
    fixed = None if tendon_color is None else _vec3(owner, "tendon_color", tendon_color)
    if not np.isfinite(float(min_line_width)) or float(min_line_width) < 1.0:
        raise ValueError(f"{owner}: min_line_width must be >= 1 pixel, got {min_line_width!r}")
    geo = SceneGeometry(model, solver, arc_points=arc_points)
    geo.update(state)
    _attach_body_world(geo)
    visuals = model_visuals(model, guides=guides, cable_width=geo.cable_width)
    cam = resolve_camera(
        model, state, camera, width=width, height=height, world=world, world_offsets=world_offsets, geometry=geo
    )
    canvas = _Canvas(cam.width, cam.height, bg)
    light = cam.up * 0.5 - cam.forward + cam.right * 0.3
    light /= np.linalg.norm(light)

    # Bodies and static shapes.
    lo, hi = _scene_bounds(geo, visuals, worlds, offsets)
    plane_half = max(1.5 * float(np.linalg.norm(hi - lo)), 1.0)
    tris, cols = [], []
    for vis in visuals:
        if not world_visible(worlds, vis.world):
            continue
        verts, faces = shape_mesh(vis.kind, vis.size, plane_half=plane_half, mesh=vis.mesh)
        local = transform_points(vis.xform, verts)
        pose = geo.body_q[vis.body] if vis.body >= 0 else np.array([0, 0, 0, 0, 0, 0, 1.0])
        world_pts = transform_points(pose, local)
        if vis.kind == "plane" and vis.size[0] <= 0.0:
            # An unbounded plane: centre the drawn patch under the scene.
            centre = transform_points(pose, vis.xform[:3])
            normal = quat_rotate(pose[3:], quat_rotate(vis.xform[3:], np.array([0.0, 0.0, 1.0])))
            mid = 0.5 * (lo + hi)
            shift = (mid - centre) - np.dot(mid - centre, normal) * normal
            world_pts = world_pts + shift
        if offsets is not None and vis.world >= 0:
            world_pts = world_pts + offsets[vis.world]
        tri = world_pts[faces]
        tris.append(tri)
        color = np.broadcast_to(vis.color, (len(faces), 3))
        if vis.kind == "plane":
            # A faint checkerboard shows the plane's extent and the perspective.
            centre = verts[faces].mean(axis=1)
            cell = np.floor(centre[:, :2] / np.maximum(np.abs(verts[:, :2]).max(axis=0) / 6.0, 1e-9))
            color = color * np.where(cell.sum(axis=1) % 2 == 0, 1.0, 0.93)[:, None]
        cols.append(color)
    if tris:
        tri = np.concatenate(tris)
        col = np.concatenate(cols)
        normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        nn = np.linalg.norm(normals, axis=1)
        ok = nn > 1e-14
        tri, col, normals = tri[ok], col[ok], normals[ok] / nn[ok][:, None]
        uv, depth = cam.project(tri)
        front = np.all(depth > cam.near, axis=1)
        canvas.triangles(uv[front], depth[front], _shade(normals[front], col[front], light))

    # Tendons: ribbons facing the camera, at least min_line_width pixels wide, drawn over surfaces
    # they touch (a small depth bias).
    if trange is None:
        peak = 0.0
        for layout in geo.tendons:
            ten = geo.tension(layout)
            ten = ten[np.isfinite(ten)]
            if ten.size:
                peak = max(peak, float(ten.max()))
        trange = (0.0, peak if peak > 0.0 else 1.0)
    quads, qdepth, qcol = [], [], []
    for layout in geo.tendons:
        if not world_visible(worlds, layout.world) or not layout.vertex_count:
            continue
        pts = geo.points(layout)
        if offsets is not None and layout.world >= 0:
            pts = pts + offsets[layout.world]
        rgb = np.broadcast_to(fixed, (len(pts), 3)) if fixed is not None else tension_color(geo.tension(layout), trange)
        radius = geo.width(layout)
        start = 0
        for count in layout.curve_counts:
            p = pts[start : start + count]
            c = rgb[start : start + count]
            start += count
            if count < 2:
                continue
            uv, z = cam.project(p)
            a, b = slice(0, count - 1), slice(1, count)
            seg_ok = (z[a] > cam.near) & (z[b] > cam.near)
            d = uv[b] - uv[a]
            length = np.linalg.norm(d, axis=1)
            n = np.stack([-d[:, 1], d[:, 0]], axis=1) / np.where(length > 1e-12, length, 1.0)[:, None]
            half = np.maximum(cam.focal * radius / np.maximum(np.minimum(z[a], z[b]), cam.near), 0.5 * min_line_width)
            # Extend each ribbon along itself by its half width so consecutive segments join at bends.
            t = d / np.where(length > 1e-12, length, 1.0)[:, None] * half[:, None]
            u0, u1 = uv[a] - t, uv[b] + t
            hn = n * half[:, None]
            quad = np.stack([u0 - hn, u0 + hn, u1 + hn, u1 - hn], axis=1)
            qd = np.stack([z[a], z[a], z[b], z[b]], axis=1)
            quads.append(quad[seg_ok])
            qdepth.append(qd[seg_ok])
            qcol.append((0.5 * (c[a] + c[b]))[seg_ok])
    if quads:
        quad = np.concatenate(quads)
        qd = np.concatenate(qdepth)
        qc = np.concatenate(qcol)
        tri_uv = np.concatenate([quad[:, [0, 1, 2]], quad[:, [0, 2, 3]]])
        tri_z = np.concatenate([qd[:, [0, 1, 2]], qd[:, [0, 2, 3]]])
        tri_c = np.concatenate([qc, qc])
        bias = 2.0 * float(np.max(geo.cable_width, initial=0.0)) + 1e-3
        canvas.triangles(tri_uv, tri_z, tri_c, bias=bias)
    return np.round(np.clip(canvas.color, 0.0, 1.0) * 255.0).astype(np.uint8)


def render_png(
    model,
    state,
    path: str | os.PathLike,
    *,
    solver=None,
    camera=None,
    width: int = 640,
    height: int = 480,
    world=None,
    **options,
) -> str:
    """Draw the bodies and tendons of ``state`` into a PNG file, headless (NumPy only).

    Bodies are flat-shaded triangle meshes of their shapes (and, with ``guides=True``, of rollers
    and spatial wrap obstacles); tendons are ribbons as wide as their drawing diameter (at least
    ``min_line_width`` px), coloured by tension like :class:`~newton_tendon.viewer.RecorderUSD`.

    Args:
        model: The finalized model.
        state: The State to draw (only read).
        path: Output ``.png`` file.
        solver: The solver that stepped ``state`` (its reported tensions colour the tendons).
        camera: None (frame the drawn scene automatically), a :class:`Camera`, or a dict with
            ``eye`` and ``target`` [m] and optionally ``up`` (default: the model's up axis),
            ``fov`` (vertical, degrees, default 45) and ``near`` [m]. :func:`resolve_camera` returns
            the camera used, whose :meth:`Camera.project` maps world points to pixels.
        width: Image width [px].
        height: Image height [px].
        world: Worlds to draw: None (all), an int or a sequence of ints (shared geometry is always drawn).
        **options: ``tension_range`` ((lo, hi) [N]; default (0, the largest tension drawn)),
            ``tendon_color`` (one RGB in [0, 1] for every tendon instead of the tension ramp),
            ``background`` (RGB in [0, 1], default white), ``guides`` (default True),
            ``world_offsets`` ([world_count, 3] m), ``min_line_width`` [px] (default 3),
            ``arc_points`` (vertices per arc).

    Returns:
        The path written.
    """
    path = os.fspath(path)
    if not path.lower().endswith(".png"):
        raise ValueError(f"render_png: path must end with .png, got {path!r}")
    allowed = {"tension_range", "tendon_color", "background", "guides", "world_offsets", "min_line_width", "arc_points"}
    unknown = set(options) - allowed
    if unknown:
        raise TypeError(f"render_png: unknown options {sorted(unknown)}; allowed: {', '.join(sorted(allowed))}")
    image = render_image(model, state, solver=solver, camera=camera, width=width, height=height, world=world, **options)
    return write_png(path, image)


def write_png(path: str | os.PathLike, image: np.ndarray) -> str:
    """Write an RGB image (uint8 [height, width, 3]) as an 8-bit PNG; returns the path."""
    path = os.fspath(path)
    img = np.asarray(image)
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3 or img.shape[0] < 1 or img.shape[1] < 1:
        raise ValueError(f"write_png: image must be uint8 [height, width, 3], got {img.dtype} {img.shape}")
    h, w = img.shape[:2]
    raw = np.concatenate([np.zeros((h, 1), np.uint8), img.reshape(h, w * 3)], axis=1).tobytes()

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    blob = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(blob)
    return path


# ----------------------------------------------------------------------------------------------
# History plots


def plot_history(
    times,
    series: Mapping,
    path: str | os.PathLike,
    *,
    title: str | None = None,
    ylabel: str | None = None,
    xlabel: str = "time [s]",
) -> str:
    """Plot time histories (tension, length, activation, ...) into a PNG with matplotlib.

    Args:
        times: Sample times [s], shape [frames].
        series: Name -> values of shape [frames] (one line) or [frames, k] (k lines, named
            ``name[i]``), e.g. ``{"tension [N]": tensions}``.
        path: Output ``.png`` file.
        title: Figure title.
        ylabel: y-axis label (units belong here or in the series names).
        xlabel: x-axis label.

    Returns:
        The path written.

    Raises:
        ImportError: matplotlib is missing (``pip install "newton-tendon[examples]"``).
    """
    owner = "plot_history"
    path = os.fspath(path)
    if not path.lower().endswith(".png"):
        raise ValueError(f"{owner}: path must end with .png, got {path!r}")
    t = np.asarray(times, dtype=np.float64)
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"{owner}: times must be a non-empty 1D array, got shape {t.shape}")
    if not isinstance(series, Mapping) or not series:
        raise ValueError(f"{owner}: series must be a non-empty dict of name -> values")
    lines = []
    for name, values in series.items():
        try:
            v = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{owner}: series {name!r} must be numeric") from None
        if v.ndim not in (1, 2) or v.shape[0] != t.size:
            raise ValueError(f"{owner}: series {name!r} has shape {v.shape}; expected ({t.size},) or ({t.size}, k)")
        if v.ndim == 1:
            lines.append((str(name), v))
        else:
            lines.extend((f"{name}[{i}]", v[:, i]) for i in range(v.shape[1]))
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            "plot_history needs matplotlib; install it with "
            'pip install "newton-tendon[examples]" (or pip install matplotlib)'
        ) from e
    fig = Figure(figsize=(7.0, 4.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for name, v in lines:
        ax.plot(t, v, label=name, linewidth=1.5)
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if len(lines) <= 12:
        ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


__all__ = ["Camera", "plot_history", "render_image", "render_png", "resolve_camera", "shape_mesh", "write_png"]
