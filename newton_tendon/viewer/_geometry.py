"""What the viewers draw, computed from a model and a state: body poses, shape visuals and tendon polylines.

Every viewer (USD recorder, PNG renderer, live web viewer) asks :class:`SceneGeometry` for the same
data, so they agree on what a tendon looks like:

* Routed cables (``add_tendon``): one polyline per tendon through the span attachment points, with
  each active roller's wrapped arc sampled between its two tangent points. The attachment points,
  the route (engaged dynamic rollers) and the wrap angles come from the solver's own route kernels,
  run on a private :class:`~newton_tendon.solvers.SolverXPBD` at the drawn state (nothing is
  stepped and the caller's state is not written).
* Spatial transmission tendons (``add_spatial_tendon``): one polyline per branch (a pulley starts a
  new one) through the sites and the wrap tangent points from ``spatial_tendon_geometry``, with the
  arc on the sphere (a great circle) or the cylinder (a helix) sampled between the tangent points.

Each tendon has a fixed number of vertices for a given model (a roller or wrap always gets
``arc_points`` vertices; when it is not touched they lie on the straight span), so animated curves
keep their topology. Positions are in metres, world frame; tensions in newtons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from newton_tendon.kernels.types import GUIDE_ROLLER
from newton_tendon.layout import check_state
from newton_tendon.tendon import AttributeFrequency

DEFAULT_CABLE_WIDTH = 0.005
"""Drawing radius [m] of routed cables without a ``tendon_width`` custom attribute."""
CABLE_WIDTH_ATTRIBUTE = "tendon_width"
"""Name of the optional float custom attribute (frequency TENDON) giving each routed cable's drawing radius [m]."""
DEFAULT_MARKER_RADIUS = 0.03
"""Radius [m] of the sphere drawn for a body that has no shapes."""
DEFAULT_ARC_POINTS = 16
"""Vertices sampled on each roller or wrap arc, both tangent points included."""

_SITE, _SPHERE, _CYLINDER, _PULLEY = 0, 1, 2, 3
_TRANSMISSION_SPATIAL = 0


# ----------------------------------------------------------------------------------------------
# Small vector helpers (float64, vectorized over rows)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` [..., 3] by unit quaternions ``q`` [..., 4] (x, y, z, w)."""
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def transform_points(xf: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Apply transforms ``xf`` [..., 7] (position, quaternion xyzw) to points ``p`` [..., 3]."""
    return xf[..., :3] + quat_rotate(xf[..., 3:7], p)


def rotate_about(v: np.ndarray, k: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues rotation of ``v`` [N, 3] about unit axes ``k`` [N, 3] by ``angle`` [N] radians."""
    c = np.cos(angle)[:, None]
    s = np.sin(angle)[:, None]
    return v * c + np.cross(k, v) * s + k * np.sum(k * v, axis=1, keepdims=True) * (1.0 - c)


def _normalize(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(n > 1e-30, v / np.where(n > 1e-30, n, 1.0), 0.0)


# ----------------------------------------------------------------------------------------------
# Colours


TENSION_COLORS = np.array(
    [
        [0.15, 0.35, 0.85],  # slack or at the low end: blue
        [0.10, 0.70, 0.70],
        [0.95, 0.80, 0.15],  # middle: yellow
        [0.95, 0.45, 0.10],
        [0.80, 0.10, 0.10],  # high end: red
    ]
)
"""Stops of the tension colour ramp (linear RGB in [0, 1]), evenly spaced from low to high."""
NAN_COLOR = np.array([0.5, 0.5, 0.5])
"""Colour of a tendon vertex whose tension is not finite."""


def tension_color(tension, tension_range: tuple[float, float]) -> np.ndarray:
    """Map tensions [N] to RGB colours [..., 3] in [0, 1] on :data:`TENSION_COLORS`.

    ``tension_range = (lo, hi)`` [N]: ``lo`` and below map to the first stop, ``hi`` and above to
    the last, linearly in between. Non-finite tensions are grey (:data:`NAN_COLOR`).
    """
    lo, hi = (float(x) for x in tension_range)
    t = np.asarray(tension, dtype=np.float64)
    span = hi - lo if hi > lo else 1.0
    x = np.clip((np.nan_to_num(t, nan=lo) - lo) / span, 0.0, 1.0) * (len(TENSION_COLORS) - 1)
    i = np.minimum(np.floor(x).astype(np.int64), len(TENSION_COLORS) - 2)
    f = (x - i)[..., None]
    rgb = TENSION_COLORS[i] * (1.0 - f) + TENSION_COLORS[i + 1] * f
    return np.where(np.isfinite(t)[..., None], rgb, NAN_COLOR)


def check_tension_range(owner: str, tension_range) -> tuple[float, float] | None:
    """Validate ``tension_range``: None (automatic) or two finite numbers lo < hi [N]."""
    if tension_range is None:
        return None
    try:
        lo, hi = (float(x) for x in tension_range)
    except (TypeError, ValueError):
        raise TypeError(
            f"{owner}: tension_range must be None or a pair (lo, hi) of numbers, got {tension_range!r}"
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"{owner}: tension_range must be finite with lo < hi, got {tension_range!r}")
    return lo, hi


BODY_PALETTE = np.array(
    [
        [0.55, 0.60, 0.68],
        [0.72, 0.58, 0.45],
        [0.48, 0.66, 0.52],
        [0.66, 0.52, 0.68],
        [0.70, 0.68, 0.45],
    ]
)
"""Colours cycled over the bodies of a world (local body index)."""
STATIC_COLOR = np.array([0.80, 0.80, 0.78])
"""Colour of shapes on the world body (-1), such as the ground."""
GUIDE_COLOR = np.array([0.35, 0.35, 0.38])
"""Colour of roller and wrap-obstacle visuals."""


# ----------------------------------------------------------------------------------------------
# Visual primitives (shapes plus tendon guides)


@dataclass
class Visual:
    """One drawable primitive fixed to a body.

    ``kind`` is one of "sphere", "box", "capsule", "cylinder", "plane", "ellipsoid", "mesh"; ``size`` holds its
    dimensions [m] with the model's shape convention (sphere (r, 0, 0); box and ellipsoid half extents;
    capsule/cylinder (r, half height, 0) along local Z; plane (half width, half length, 0), 0 =
    unbounded). ``xform`` is the primitive's frame in the body frame (world frame for body -1).
    """

    kind: str
    body: int
    world: int
    xform: np.ndarray
    size: np.ndarray
    color: np.ndarray
    name: str
    is_guide: bool = False
    mesh: tuple | None = None
    """A mesh shape's (vertices [V, 3], faces [F, 3]) in its frame; None for primitives."""


_SHAPE_KINDS = {0: "plane", 1: "sphere", 2: "capsule", 3: "box", 4: "cylinder", 5: "ellipsoid", 6: "mesh"}


def _axis_to_quat(axis: np.ndarray) -> np.ndarray:
    """Quaternion (xyzw) rotating +Z onto the unit vector ``axis``."""
    z = np.array([0.0, 0.0, 1.0])
    a = axis / np.linalg.norm(axis)
    c = float(np.dot(z, a))
    if c < -1.0 + 1e-9:
        return np.array([1.0, 0.0, 0.0, 0.0])
    v = np.cross(z, a)
    q = np.array([v[0], v[1], v[2], 1.0 + c])
    return q / np.linalg.norm(q)


def model_visuals(
    model, *, guides: bool = True, cable_width: np.ndarray | None = None, marker_radius: float = DEFAULT_MARKER_RADIUS
) -> list[Visual]:
    """Visual primitives of every shape of ``model``; a sphere of ``marker_radius`` [m] at the centre
    of mass of each body without shapes (0: none); with ``guides``, every roller and wrap obstacle
    (a thin disc for a roller, the sphere or a short cylinder for a spatial wrap)."""
    out: list[Visual] = []
    body_world = model.body_world.numpy() if model.body_count else np.zeros(0, np.int32)
    first_body = {}
    for b, w in enumerate(body_world):
        first_body.setdefault(int(w), b)
    if model.shape_count:
        types = model.shape_type.numpy()
        bodies = model.shape_body.numpy()
        xforms = model.shape_transform.numpy().astype(np.float64)
        scales = model.shape_scale.numpy().astype(np.float64)
        worlds = model.shape_world.numpy()
        for s in range(model.shape_count):
            b = int(bodies[s])
            if b >= 0:
                color = BODY_PALETTE[(b - first_body.get(int(body_world[b]), 0)) % len(BODY_PALETTE)]
                world = int(body_world[b])
            else:
                color = STATIC_COLOR
                world = int(worlds[s])
            label = model.shape_label[s] if s < len(model.shape_label) and model.shape_label[s] else f"shape_{s}"
            mesh = model.shape_mesh[s] if s < len(model.shape_mesh) else None
            out.append(Visual(_SHAPE_KINDS[int(types[s])], b, world, xforms[s], scales[s], color, label, mesh=mesh))
    if marker_radius > 0.0 and model.body_count:
        shaped = set(model.shape_body.numpy().tolist()) if model.shape_count else set()
        com = model.body_com.numpy().astype(np.float64)
        for b in range(model.body_count):
            if b in shaped:
                continue
            w = int(body_world[b])
            color = BODY_PALETTE[(b - first_body.get(w, 0)) % len(BODY_PALETTE)]
            xf = np.concatenate([com[b], [0.0, 0.0, 0.0, 1.0]])
            out.append(Visual("sphere", b, w, xf, np.array([marker_radius, 0.0, 0.0]), color, "marker"))
    if not guides:
        return out
    if model.tendon_count:
        start = model.tendon_start.numpy()
        gtype = model.tendon_guide_type.numpy()
        gbody = model.tendon_guide_body.numpy()
        goff = model.tendon_guide_offset.numpy().astype(np.float64)
        gaxis = model.tendon_guide_axis.numpy().astype(np.float64)
        grad = model.tendon_guide_radius.numpy().astype(np.float64)
        tworld = model.tendon_world.numpy()
        for t in range(model.tendon_count):
            width = DEFAULT_CABLE_WIDTH if cable_width is None else float(cable_width[t])
            for g in range(int(start[t]), int(start[t + 1])):
                if gtype[g] != GUIDE_ROLLER:
                    continue
                xf = np.concatenate([goff[g], _axis_to_quat(gaxis[g])])
                size = np.array([max(grad[g] - width, 0.5 * grad[g]), 1.5 * width, 0.0])
                out.append(
                    Visual("cylinder", int(gbody[g]), int(tworld[t]), xf, size, GUIDE_COLOR, f"roller_{g}", True)
                )
    if model.transmission_count and model.transmission_element_count:
        path = model.transmission_path
        pstart = path.start.numpy()
        ptype = path.type.numpy()
        pbody = path.body.numpy()
        poff = path.offset.numpy().astype(np.float64)
        paxis = path.axis.numpy().astype(np.float64)
        prad = path.radius.numpy().astype(np.float64)
        xworld = model.transmission_world.numpy()
        xwidth = model.transmission_width.numpy().astype(np.float64)
        for t in range(model.transmission_count):
            for e in range(int(pstart[t]), int(pstart[t + 1])):
                r = max(prad[e] - xwidth[t], 0.5 * prad[e])
                if ptype[e] == _SPHERE:
                    xf = np.concatenate([poff[e], [0.0, 0.0, 0.0, 1.0]])
                    size = np.array([r, 0.0, 0.0])
                    kind = "sphere"
                elif ptype[e] == _CYLINDER:
                    xf = np.concatenate([poff[e], _axis_to_quat(paxis[e])])
                    size = np.array([r, 2.0 * prad[e], 0.0])
                    kind = "cylinder"
                else:
                    continue
                out.append(Visual(kind, int(pbody[e]), int(xworld[t]), xf, size, GUIDE_COLOR, f"wrap_{e}", True))
    return out


# ----------------------------------------------------------------------------------------------
# Tendon polylines


@dataclass
class TendonLayout:
    """Vertex layout of one drawn tendon: ``vertex_start`` into the flat vertex arrays and the
    vertex count of each curve (one curve per routed cable; one per branch of a spatial tendon)."""

    kind: str
    """"cable" (routed, ``add_tendon``) or "transmission" (spatial, ``add_spatial_tendon``)."""
    index: int
    """Tendon index in ``model.tendon_*`` or ``model.transmission_*``."""
    world: int
    label: str
    vertex_start: int
    curve_counts: list[int]

    @property
    def vertex_count(self) -> int:
        return int(sum(self.curve_counts))


class _WinchHold:
    """A stand-in Control whose winch command equals what the state already paid out, so probing
    the route does not pay out or reel in cable. A force winch moves cable only in the solver's
    passes, which probing does not run, so any array of the right size serves as its command."""

    def __init__(self, state):
        self.tendon_guide_winch_length = state.tendon_guide_winch_paid
        self.tendon_guide_winch_force = state.tendon_guide_winch_paid


class SceneGeometry:
    """Per-frame drawing data of a model: body poses and tendon polylines with per-vertex tension.

    Args:
        model: The finalized model.
        solver: Optional solver that stepped the states being drawn. Its reported tensions colour
            the tendons (``tendon_segment_material_tension`` + ``tendon_segment_damping_tension``
            for routed cables, ``transmission_tension`` for spatial tendons). Without it, routed
            spans show their constitutive tension ``(l - L)/c`` (0 for inextensible spans) and
            spatial tendons 0 N.
        arc_points: Vertices per roller or wrap arc (>= 2).

    Call :meth:`update` with a state; then read ``body_q``, ``cable_points``, ``cable_tension``,
    ``transmission_points``, ``transmission_tension`` and the layouts in ``tendons``.
    """

    def __init__(self, model, solver=None, *, arc_points: int = DEFAULT_ARC_POINTS):
        from ..model import Model

        if not isinstance(model, Model):
            raise TypeError(f"SceneGeometry: model must be a newton_tendon Model, got {type(model).__name__}")
        if isinstance(arc_points, bool) or not isinstance(arc_points, (int, np.integer)) or arc_points < 2:
            raise ValueError(f"SceneGeometry: arc_points must be an int >= 2, got {arc_points!r}")
        if solver is not None and getattr(solver, "model", None) is not model:
            raise ValueError("SceneGeometry: solver was built for a different model")
        self.model = model
        self.solver = solver
        self.arc_points = int(arc_points)
        self.tendons: list[TendonLayout] = []
        """Layout of every drawn tendon: routed cables first, then spatial transmission tendons."""
        self.cable_width = self._cable_widths()
        """Drawing radius [m] of each routed cable, shape [tendon_count]."""
        self._probe = None
        self._scratch = None
        self._layout_cables()
        self._layout_transmissions()
        self.body_q = np.zeros((model.body_count, 7))
        """Body poses (position [m], quaternion xyzw) at the last update, shape [body_count, 7], float64."""
        self.cable_points = np.zeros((self._cable_vertex_count, 3))
        """Routed-cable vertices [m] (world), all cables concatenated, float64."""
        self.cable_tension = np.zeros(self._cable_vertex_count)
        """Tension [N] at each routed-cable vertex."""
        self.transmission_points = np.zeros((self._tx_vertex_count, 3))
        """Spatial transmission tendon vertices [m] (world), all tendons concatenated, float64."""
        self.transmission_tension = np.zeros(self._tx_vertex_count)
        """Tension [N] at each transmission vertex (the tendon tension divided by the branch divisor)."""

    # Layout -----------------------------------------------------------------------------------

    def _cable_widths(self) -> np.ndarray:
        m = self.model
        width = np.full(m.tendon_count, DEFAULT_CABLE_WIDTH)
        arr = m.custom_attributes.get(CABLE_WIDTH_ATTRIBUTE)
        freq = m.custom_attribute_frequency.get(CABLE_WIDTH_ATTRIBUTE)
        if arr is not None and freq == AttributeFrequency.TENDON and m.tendon_count:
            v = np.asarray(arr.numpy(), dtype=np.float64).reshape(m.tendon_count, -1)[:, 0]
            width = np.where(np.isfinite(v) & (v > 0.0), v, DEFAULT_CABLE_WIDTH)
        return width

    def _layout_cables(self):
        m = self.model
        k = self.arc_points
        self._cable_vertex_count = 0
        if not m.tendon_count:
            return
        start = m.tendon_start.numpy().astype(np.int64)
        gtype = m.tendon_guide_type.numpy()
        ng = m.tendon_guide_count
        tendon_of = np.repeat(np.arange(m.tendon_count), np.diff(start))
        first = np.zeros(ng, bool)
        last = np.zeros(ng, bool)
        first[start[:-1]] = True
        last[start[1:] - 1] = True
        arc = (gtype == GUIDE_ROLLER) & ~first & ~last
        per_guide = np.where(arc, k, 1)
        v_guide = np.repeat(np.arange(ng), per_guide)
        offsets = np.concatenate([[0], np.cumsum(per_guide)])
        v_k = np.arange(len(v_guide)) - offsets[v_guide]
        self._c = {
            "start": start,
            "tendon_of": tendon_of,
            "first": first,
            "last": last,
            "arc": arc,
            "body": m.tendon_guide_body.numpy(),
            "offset": m.tendon_guide_offset.numpy().astype(np.float64),
            "axis": m.tendon_guide_axis.numpy().astype(np.float64),
            "orientation": m.tendon_guide_orientation.numpy().astype(np.float64),
            "v_guide": v_guide,
            "v_k": v_k,
        }
        self._cable_vertex_count = len(v_guide)
        tworld = m.tendon_world.numpy()
        for t in range(m.tendon_count):
            v0 = int(offsets[start[t]])
            v1 = int(offsets[start[t + 1]])
            label = m.tendon_label[t] if t < len(m.tendon_label) else f"tendon_{t}"
            self.tendons.append(TendonLayout("cable", t, int(tworld[t]), label, v0, [v1 - v0]))

    def _layout_transmissions(self):
        m = self.model
        k = self.arc_points
        self._tx_vertex_count = 0
        if not m.transmission_count or not m.transmission_element_count:
            return
        path = m.transmission_path
        pstart = path.start.numpy().astype(np.int64)
        ptype = path.type.numpy()
        kinds = m.transmission_type.numpy()
        tworld = m.transmission_world.numpy()
        v_elem = []
        v_k = []
        for t in range(m.transmission_count):
            if kinds[t] != _TRANSMISSION_SPATIAL or pstart[t + 1] == pstart[t]:
                continue
            v0 = len(v_elem)
            counts = []
            n = 0
            for e in range(int(pstart[t]), int(pstart[t + 1])):
                if ptype[e] == _PULLEY:
                    if n:
                        counts.append(n)
                    n = 0
                    continue
                per = k if ptype[e] in (_SPHERE, _CYLINDER) else 1
                v_elem.extend([e] * per)
                v_k.extend(range(per))
                n += per
            if n:
                counts.append(n)
            label = m.transmission_label[t] if t < len(m.transmission_label) else f"transmission_{t}"
            self.tendons.append(TendonLayout("transmission", t, int(tworld[t]), label, v0, counts))
        e_tendon = np.repeat(np.arange(m.transmission_count), np.diff(pstart))
        self._t = {
            "type": ptype,
            "body": path.body.numpy(),
            "offset": path.offset.numpy().astype(np.float64),
            "axis": path.axis.numpy().astype(np.float64),
            "radius": path.radius.numpy().astype(np.float64),
            "divisor": path.divisor.numpy().astype(np.float64),
            "tendon": e_tendon,
            "v_elem": np.asarray(v_elem, dtype=np.int64),
            "v_k": np.asarray(v_k, dtype=np.int64),
        }
        self._tx_vertex_count = len(v_elem)
        dev = m.device
        ne = m.transmission_element_count
        self._tx_out = [wp.zeros(m.transmission_count, dtype=float, device=dev)] + [
            wp.zeros(ne, dtype=wp.vec3, device=dev) for _ in range(4)
        ]

    # Update -----------------------------------------------------------------------------------

    def update(self, state) -> None:
        """Compute the drawing data at ``state`` (the state is only read)."""
        m = self.model
        check_state("SceneGeometry.update", "state", state, m)
        self.body_q = state.body_q.numpy().astype(np.float64).reshape(m.body_count, 7)
        if self._cable_vertex_count:
            self._update_cables(state)
        if self._tx_vertex_count:
            self._update_transmissions(state)

    def _poses(self, bodies: np.ndarray) -> np.ndarray:
        """World poses [N, 7] of ``bodies`` (identity for -1)."""
        ident = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
        if self.body_q.shape[0] == 0:
            return np.tile(ident, (len(bodies), 1))
        return np.where((bodies >= 0)[:, None], self.body_q[np.maximum(bodies, 0)], ident)

    def _route_probe(self, state):
        """Run the route kernels on a private solver at ``state``: attachment points, route and wraps."""
        if self._probe is None:
            from ..solvers import SolverXPBD

            self._probe = SolverXPBD(self.model, iterations=1)
            self._scratch = self.model.state()
        probe = self._probe
        hold = _WinchHold(state) if hasattr(state, "tendon_guide_winch_paid") else None
        try:
            probe._begin_tendon_step(state, self._scratch, hold)
        except TypeError:  # a solver without winch commands takes no control here
            probe._begin_tendon_step(state, self._scratch)
        # The diagnostics read the pose from the state they are given: the scratch state, at this pose.
        wp.copy(self._scratch.body_q, state.body_q)
        probe._tendon_diagnostics(self._scratch, 1.0)
        return probe

    def _update_cables(self, state):
        c = self._c
        probe = self._route_probe(state)
        xl = probe.tendon_segment_attachment_l.numpy().astype(np.float64)
        xr = probe.tendon_segment_attachment_r.numpy().astype(np.float64)
        active = probe.tendon_guide_active.numpy().astype(bool)
        wrap = probe.tendon_guide_wrap.numpy().astype(np.float64)
        src = (
            self.solver
            if self.solver is not None and hasattr(self.solver, "tendon_segment_material_tension")
            else probe
        )
        tension = src.tendon_segment_material_tension.numpy().astype(np.float64)
        tension = tension + src.tendon_segment_damping_tension.numpy().astype(np.float64)

        ng = len(active)
        g = np.arange(ng)
        t = c["tendon_of"]
        first, last = c["first"], c["last"]
        ns = max(len(xl), 1)
        # Slots follow the left guide (newton's convention, ``cable.span_slot``): the span leaving
        # guide g sits in slot g - t, and the span arriving at g in slot g - t - 1, or g - t - 2 when
        # g - 1 is a bypassed dynamic roller (never the first guide).
        prv = np.maximum(g - 1, 0)
        seg_in = np.clip(np.where(first, 0, np.where(active[prv], g - t - 1, g - t - 2)), 0, ns - 1)
        out_seg = np.clip(np.where(last, 0, g - t), 0, ns - 1)
        p_in = xr[seg_in].copy()
        p_out = xl[out_seg].copy()
        t_in = tension[seg_in].copy()
        t_out = tension[out_seg].copy()
        p_in[first] = p_out[first]
        t_in[first] = t_out[first]
        p_out[last] = p_in[last]
        t_out[last] = t_in[last]
        # A bypassed guide lies on the span leaving its left neighbour.
        bypass_seg = np.clip(g - t - 1, 0, ns - 1)

        vg = c["v_guide"]
        vk = c["v_k"].astype(np.float64)
        arc = c["arc"][vg]
        on = active[vg]
        pts = np.empty((len(vg), 3))
        ten = np.empty(len(vg))
        # Point guides and the ends: one vertex (a pinhole's two spans meet at its point).
        point = ~arc
        pts[point] = p_in[vg[point]]
        ten[point] = 0.5 * (t_in[vg[point]] + t_out[vg[point]])
        # Active rollers: rotate the arriving tangent point about the winding axis.
        sel = arc & on
        if np.any(sel):
            gs = vg[sel]
            pose = self._poses(c["body"][gs])
            centre = transform_points(pose, c["offset"][gs])
            axis = _normalize(quat_rotate(pose[:, 3:7], c["axis"][gs])) * c["orientation"][gs][:, None]
            f = vk[sel] / (self.arc_points - 1)
            pts[sel] = centre + rotate_about(p_in[gs] - centre, axis, f * wrap[gs])
            a, b = t_in[gs], t_out[gs]
            geometric = (a > 0.0) & (b > 0.0)
            ratio = np.where(geometric, b / np.where(geometric, a, 1.0), 1.0)
            ten[sel] = np.where(geometric, a * ratio**f, a + (b - a) * f)
        # Bypassed (released) dynamic rollers: spread their vertices along the bypass span.
        sel = arc & ~on
        if np.any(sel):
            gs = vg[sel]
            s = bypass_seg[gs]
            f = (vk[sel] + 1.0) / (self.arc_points + 1.0)
            pts[sel] = xl[s] + (xr[s] - xl[s]) * f[:, None]
            ten[sel] = tension[s]
        self.cable_points = pts
        self.cable_tension = ten

    def _update_transmissions(self, state):
        m = self.model
        d = self._t
        from newton_tendon.kernels.spatial import spatial_tendon_geometry

        out = self._tx_out
        wp.launch(
            spatial_tendon_geometry,
            dim=m.transmission_count,
            inputs=[m.transmission_path, state.body_q],
            outputs=out,
            device=m.device,
        )
        pa = out[1].numpy().astype(np.float64)
        ga = out[2].numpy().astype(np.float64)
        pb = out[3].numpy().astype(np.float64)
        gb = out[4].numpy().astype(np.float64)
        if self.solver is not None and hasattr(self.solver, "transmission_tension"):
            tendon_tension = self.solver.transmission_tension.numpy().astype(np.float64)
        else:
            tendon_tension = np.zeros(m.transmission_count)

        ve = d["v_elem"]
        vk = d["v_k"].astype(np.float64)
        kind = d["type"][ve]
        pts = np.empty((len(ve), 3))
        site = kind == _SITE
        pts[site] = pa[ve[site]]
        wrap = ~site
        touched = (np.linalg.norm(ga, axis=1) + np.linalg.norm(gb, axis=1)) > 0.0
        k = self.arc_points
        sel = wrap & ~touched[ve]
        if np.any(sel):
            e = ve[sel]
            f = (vk[sel] + 1.0) / (k + 1.0)
            pts[sel] = pa[e - 1] + (pa[e + 1] - pa[e - 1]) * f[:, None]
        sel = wrap & touched[ve]
        if np.any(sel):
            e = ve[sel]
            f = vk[sel] / (k - 1)
            pose = self._poses(d["body"][e])
            centre = transform_points(pose, d["offset"][e])
            ta, tb = pa[e], pb[e]
            ua = _normalize(ga[e])
            cyl = d["type"][e] == _CYLINDER
            n = _normalize(quat_rotate(pose[:, 3:7], d["axis"][e]))
            ra = ta - centre
            rb = tb - centre
            za = np.where(cyl, np.sum(ra * n, axis=1), 0.0)
            zb = np.where(cyl, np.sum(rb * n, axis=1), 0.0)
            da = ra - za[:, None] * n
            db = rb - zb[:, None] * n
            # Sphere: the great circle through both tangent points, entered along ua.
            sphere_axis = _normalize(np.cross(ra, ua))
            sense = np.where(np.sum(np.cross(da, ua) * n, axis=1) < 0.0, -1.0, 1.0)
            axis = np.where(cyl[:, None], n * sense[:, None], sphere_axis)
            base = np.where(cyl[:, None], da, ra)
            other = np.where(cyl[:, None], db, rb)
            sweep = np.arctan2(np.sum(np.cross(base, other) * axis, axis=1), np.sum(base * other, axis=1))
            sweep = np.mod(sweep, 2.0 * np.pi)
            # A single bend point (interior side site) or float noise around a zero arc: no sweep.
            radius = d["radius"][e]
            tiny = (np.linalg.norm(tb - ta, axis=1) <= 1e-5 * np.maximum(radius, 1e-9)) | (sweep > 2.0 * np.pi - 1e-3)
            sweep = np.where(tiny, 0.0, sweep)
            pts[sel] = centre + rotate_about(base, axis, f * sweep) + (za + f * (zb - za))[:, None] * n
        self.transmission_points = pts
        self.transmission_tension = tendon_tension[d["tendon"][ve]] / d["divisor"][ve]

    # Access -----------------------------------------------------------------------------------

    def points(self, layout: TendonLayout) -> np.ndarray:
        """Vertices [m] of one tendon at the last update, shape [vertex_count, 3]."""
        src = self.cable_points if layout.kind == "cable" else self.transmission_points
        return src[layout.vertex_start : layout.vertex_start + layout.vertex_count]

    def tension(self, layout: TendonLayout) -> np.ndarray:
        """Per-vertex tension [N] of one tendon at the last update, shape [vertex_count]."""
        src = self.cable_tension if layout.kind == "cable" else self.transmission_tension
        return src[layout.vertex_start : layout.vertex_start + layout.vertex_count]

    def width(self, layout: TendonLayout) -> float:
        """Drawing radius [m] of one tendon (routed: ``tendon_width`` attribute or the default;
        spatial: ``model.transmission_width``)."""
        if layout.kind == "cable":
            return float(self.cable_width[layout.index])
        return float(self.model.transmission_width.numpy()[layout.index])


def select_worlds(owner: str, model, world) -> np.ndarray | None:
    """Validate a ``world`` selection: None (all worlds), an int or a sequence of ints in
    [0, world_count). Returns a sorted int array, or None for all."""
    if world is None:
        return None
    items = [world] if isinstance(world, (int, np.integer)) else world
    try:
        items = list(items)
    except TypeError:
        raise TypeError(
            f"{owner}: world must be None, an int or a sequence of ints, got {type(world).__name__}"
        ) from None
    for w in items:
        if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
            raise TypeError(f"{owner}: world indices must be ints, got {w!r}")
        if not 0 <= w < max(model.world_count, 1):
            raise ValueError(f"{owner}: world {w} is out of range [0, {max(model.world_count, 1)})")
    if not items:
        raise ValueError(f"{owner}: world selection is empty")
    return np.unique(np.asarray(items, dtype=np.int64))


def world_visible(selection: np.ndarray | None, world: int) -> bool:
    """Whether an entity of ``world`` is drawn under ``selection`` (shared world -1 always is)."""
    return selection is None or world < 0 or bool(np.any(selection == world))


def check_world_offsets(owner: str, model, world_offsets) -> np.ndarray | None:
    """Validate ``world_offsets``: None or finite translations [m] of shape [world_count, 3]."""
    if world_offsets is None:
        return None
    arr = np.asarray(world_offsets, dtype=np.float64)
    n = max(model.world_count, 1)
    if arr.shape != (n, 3) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{owner}: world_offsets must be finite with shape ({n}, 3), got shape {arr.shape}")
    return arr


__all__ = [
    "CABLE_WIDTH_ATTRIBUTE",
    "DEFAULT_CABLE_WIDTH",
    "SceneGeometry",
    "TendonLayout",
    "Visual",
    "model_visuals",
    "tension_color",
]
