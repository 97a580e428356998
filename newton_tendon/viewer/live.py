"""ViewerViser: a live web viewer of bodies and tendons, served by ``viser`` (the ``viewer`` extra).

``viser`` is imported when a viewer is created, so importing this module works without it; creating
a :class:`ViewerViser` without it raises an ImportError that says how to install it.
"""

from __future__ import annotations

import numpy as np

from ._geometry import (
    DEFAULT_ARC_POINTS,
    SceneGeometry,
    check_tension_range,
    check_world_offsets,
    model_visuals,
    select_worlds,
    tension_color,
    transform_points,
    world_visible,
)
from .recorder import _local_label, _prim_name
from .render import shape_mesh


def _import_viser():
    try:
        import viser
    except ImportError as e:
        raise ImportError(
            'ViewerViser needs the optional package viser; install it with pip install "newton-tendon[viewer]" '
            "(or pip install viser)"
        ) from e
    return viser


class ViewerViser:
    """Serve a live 3D view of a simulation in the browser; push frames with :meth:`update`.

    Bodies are meshes of their shapes (plus roller and wrap-obstacle visuals with ``guides``) under
    one scene node per body; every routed cable and spatial transmission tendon is a set of line
    segments as thick as its drawing diameter, coloured by tension (the colour ramp of
    :func:`~newton_tendon.viewer.tension_color`; with ``tension_range=None`` it runs from 0 to the
    largest tension pushed so far).

    Args:
        model: The finalized model.
        solver: The solver stepping the states (its reported tensions colour the tendons).
        host: Interface to serve on (default: localhost only).
        port: TCP port; 0 picks a free one (see :attr:`port`).
        world: Worlds to show: None (all), an int or a sequence of ints.
        world_offsets: Optional extra translation [m] per world, shape [world_count, 3].
        tension_range: ``(lo, hi)`` [N] of the colour ramp, or None (automatic).
        guides: Also show rollers and spatial wrap obstacles.
        arc_points: Vertices sampled on each roller or wrap arc.
        verbose: Let viser print its banner.

    Example:
        >>> viewer = ViewerViser(model, solver=solver, port=8080)
        >>> for frame in range(600):
        ...     solver.step(state_0, state_1, control, None, 1.0 / 60.0)
        ...     state_0, state_1 = state_1, state_0
        ...     viewer.update(state_0)
        >>> viewer.close()
    """

    def __init__(
        self,
        model,
        *,
        solver=None,
        host: str = "127.0.0.1",
        port: int = 8080,
        world=None,
        world_offsets=None,
        tension_range: tuple[float, float] | None = None,
        guides: bool = True,
        arc_points: int = DEFAULT_ARC_POINTS,
        verbose: bool = False,
    ):
        owner = "ViewerViser"
        if isinstance(port, bool) or not isinstance(port, (int, np.integer)) or not 0 <= port <= 65535:
            raise ValueError(f"{owner}: port must be an int in [0, 65535], got {port!r}")
        self._worlds = select_worlds(owner, model, world)
        self._offsets = check_world_offsets(owner, model, world_offsets)
        self.tension_range = check_tension_range(owner, tension_range)
        """Colour ramp range (lo, hi) [N]; with automatic colouring, (0, the largest tension so far)."""
        self._auto_range = self.tension_range is None
        self._peak = 0.0
        self.geometry = SceneGeometry(model, solver, arc_points=arc_points)
        """The drawing data of the last pushed frame."""
        self.model = model
        self.frame_count = 0
        """Number of frames pushed."""
        viser = _import_viser()
        self.server = viser.ViserServer(host=host, port=int(port), verbose=verbose)
        """The underlying ``viser.ViserServer``."""
        self.host = host
        self._guides = bool(guides)
        self._closed = False
        self.body_nodes: dict[int, object] = {}
        """Scene node (a viser frame handle) of each shown body."""
        self.tendon_nodes: dict[tuple[str, int], object] = {}
        """Line-segment handle of each shown tendon, keyed by ("cable" | "transmission", index)."""
        self._build()

    @property
    def port(self) -> int:
        """The TCP port being served."""
        return int(self.server.get_port())

    @property
    def url(self) -> str:
        """Address of the viewer page."""
        return f"http://{self.host}:{self.port}"

    def _offset(self, w: int) -> np.ndarray:
        if self._offsets is None or w < 0:
            return np.zeros(3)
        return self._offsets[w]

    def _build(self):
        m = self.model
        scene = self.server.scene
        geo = self.geometry
        body_world = m.body_world.numpy() if m.body_count else np.zeros(0, np.int32)
        used: set = set()

        def unique(name: str) -> str:
            base, i = name, 1
            while name in used:
                name = f"{base}_{i}"
                i += 1
            used.add(name)
            return name

        for b in range(m.body_count):
            w = int(body_world[b])
            if not world_visible(self._worlds, w):
                continue
            label = m.body_label[b] if b < len(m.body_label) and m.body_label[b] else f"body_{b}"
            node = unique(f"/world_{w}/bodies/{_prim_name(_local_label(label))}")
            self.body_nodes[b] = scene.add_frame(node, show_axes=False)
        for vis in model_visuals(m, guides=self._guides, cable_width=geo.cable_width):
            verts, faces = shape_mesh(vis.kind, vis.size, mesh=vis.mesh)
            verts = transform_points(vis.xform, verts)
            color = tuple(int(c) for c in np.round(vis.color * 255.0))
            if vis.body >= 0:
                if vis.body not in self.body_nodes:
                    continue
                parent = self.body_nodes[vis.body].name
            else:
                if not world_visible(self._worlds, vis.world):
                    continue
                parent = "/shared" if vis.world < 0 else f"/world_{vis.world}/static"
                verts = verts + self._offset(vis.world)
            scene.add_mesh_simple(
                unique(f"{parent}/{_prim_name(_local_label(vis.name))}"),
                vertices=verts.astype(np.float32),
                faces=faces.astype(np.uint32),
                color=color,
                side="double",
            )
        for layout in geo.tendons:
            if not world_visible(self._worlds, layout.world):
                continue
            group = "cables" if layout.kind == "cable" else "transmissions"
            name = unique(f"/world_{layout.world}/{group}/{_prim_name(_local_label(layout.label))}")
            nseg = max(layout.vertex_count - len(layout.curve_counts), 1)
            self.tendon_nodes[(layout.kind, layout.index)] = scene.add_line_segments(
                name,
                points=np.zeros((nseg, 2, 3), np.float32),
                colors=np.zeros((nseg, 2, 3), np.uint8),
                thickness=2.0 * geo.width(layout),
                thickness_units="world",
            )
        self._layouts = {(lay.kind, lay.index): lay for lay in geo.tendons}

    def update(self, state) -> None:
        """Show ``state``: move the bodies and redraw the tendons (the state is only read)."""
        if self._closed:
            raise RuntimeError("ViewerViser: the viewer is closed")
        geo = self.geometry
        geo.update(state)
        q = geo.body_q
        body_world = self.model.body_world.numpy() if self.model.body_count else np.zeros(0, np.int32)
        if self._auto_range:
            for key in self.tendon_nodes:
                ten = geo.tension(self._layouts[key])
                ten = ten[np.isfinite(ten)]
                if ten.size:
                    self._peak = max(self._peak, float(ten.max()))
            self.tension_range = (0.0, self._peak if self._peak > 0.0 else 1.0)
        with self.server.atomic():
            for b, node in self.body_nodes.items():
                node.position = q[b, :3] + self._offset(int(body_world[b]))
                node.wxyz = np.array([q[b, 6], q[b, 3], q[b, 4], q[b, 5]])
            for key, handle in self.tendon_nodes.items():
                layout = self._layouts[key]
                pts = geo.points(layout) + self._offset(layout.world)
                rgb = np.round(tension_color(geo.tension(layout), self.tension_range) * 255.0).astype(np.uint8)
                seg_p, seg_c = [], []
                start = 0
                for count in layout.curve_counts:
                    p = pts[start : start + count]
                    c = rgb[start : start + count]
                    start += count
                    seg_p.append(np.stack([p[:-1], p[1:]], axis=1))
                    seg_c.append(np.stack([c[:-1], c[1:]], axis=1))
                handle.points = np.concatenate(seg_p).astype(np.float32)
                handle.colors = np.concatenate(seg_c)
        self.frame_count += 1

    def close(self) -> None:
        """Stop the server (closing twice is harmless)."""
        if not self._closed:
            self.server.stop()
            self._closed = True

    def __enter__(self) -> ViewerViser:
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False


__all__ = ["ViewerViser"]
