"""RecorderUSD: a simulation written frame by frame as a USD stage (body poses and tendons as time samples)."""

from __future__ import annotations

import os
import re

import numpy as np

from ..layout import check_control, check_state
from ._geometry import (
    DEFAULT_ARC_POINTS,
    SceneGeometry,
    check_tension_range,
    check_world_offsets,
    model_visuals,
    select_worlds,
    tension_color,
    world_visible,
)

_SUFFIXES = (".usd", ".usda", ".usdc")


def _prim_name(text: str) -> str:
    """A valid USD prim name from a label (letters, digits and underscores; no leading digit)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text) or "_"
    return "_" + name if name[0].isdigit() else name


def _local_label(label: str) -> str:
    """A label without the ``world_<i>/`` prefix that ``add_world`` adds (the world is a parent prim)."""
    return re.sub(r"^world_\d+/", "", label)


class RecorderUSD:
    """Record body poses and every tendon of a model into a USD stage, one frame per :meth:`record`.

    The stage (Z or the model's up axis, metres, ``timeCodesPerSecond = fps``) holds::

        /World                          Xform, the default prim
          /World/shared                 shapes on the world body (-1) outside any world (e.g. the ground)
          /World/world_<w>              Xform per drawn world, translated by ``world_offsets[w]``
            bodies/<body>               Xform per body: xformOp:translate + xformOp:orient time samples
              <shape>                   Sphere / Cube / Capsule / Cylinder / Plane in the body frame
              roller_<g>, wrap_<e>      visuals of routed-cable rollers and spatial wrap obstacles (guides=True)
            static/<shape>              shapes on the world body that belong to world w
            cables/<tendon>             BasisCurves (linear) per routed cable
            transmissions/<tendon>      BasisCurves (linear) per spatial transmission tendon (one curve per branch)

    Tendon curves carry time-sampled ``points`` [m], ``widths`` [m] (the drawing diameter: twice the
    tendon's drawing radius, from the ``tendon_width`` custom attribute of routed cables (frequency
    TENDON; default 0.005 m) or ``model.transmission_width``), ``primvars:displayColor`` (per vertex,
    tension mapped through :func:`~newton_tendon.viewer.tension_color`) and ``primvars:tension``
    (per vertex tension [N]). Routed cables pass through their span attachment points and sample
    each roller's wrapped arc; spatial tendons pass through their sites and wrap tangent points and
    sample the arc on the sphere or cylinder. Fixed transmission tendons have no path and are not drawn.

    Args:
        model: The finalized model.
        path: Output file (``.usd``, ``.usda`` or ``.usdc``); written by :meth:`close`.
        fps: Time codes per second [1/s]; frame ``i`` without an explicit time is at ``i / fps`` s.
        solver: The solver stepping the recorded states; its reported tensions colour the tendons
            (see :class:`~newton_tendon.viewer.SceneGeometry`). Without it, a private SolverXPBD
            only measures the route (routed spans then show their constitutive tension, spatial tendons 0 N).
        tension_range: ``(lo, hi)`` [N] of the colour ramp, or None to use (0, the largest tension
            recorded), applied when the recording closes.
        world: Worlds to record: None (all), an int or a sequence of ints.
        world_offsets: Optional extra translation [m] per world, shape [world_count, 3] (e.g. to
            spread worlds that were built on top of each other).
        guides: Also draw rollers and spatial wrap obstacles as static visuals.
        arc_points: Vertices sampled on each roller or wrap arc (>= 2).
        plane_size: Edge length [m] used for unbounded planes.

    Example:
        >>> with RecorderUSD(model, "run.usda", fps=60, solver=solver) as rec:
        ...     for frame in range(120):
        ...         solver.step(state_0, state_1, control, None, 1.0 / 60.0)
        ...         state_0, state_1 = state_1, state_0
        ...         rec.record(state_0)
    """

    def __init__(
        self,
        model,
        path: str | os.PathLike,
        fps: float = 60.0,
        *,
        solver=None,
        tension_range: tuple[float, float] | None = None,
        world=None,
        world_offsets=None,
        guides: bool = True,
        arc_points: int = DEFAULT_ARC_POINTS,
        plane_size: float = 10.0,
    ):
        owner = "RecorderUSD"
        path = os.fspath(path)
        if not path.endswith(_SUFFIXES):
            raise ValueError(f"{owner}: path must end with one of {', '.join(_SUFFIXES)}, got {path!r}")
        fps = float(fps)
        if not np.isfinite(fps) or fps <= 0.0:
            raise ValueError(f"{owner}: fps must be finite and > 0, got {fps!r}")
        plane_size = float(plane_size)
        if not np.isfinite(plane_size) or plane_size <= 0.0:
            raise ValueError(f"{owner}: plane_size must be finite and > 0, got {plane_size!r}")
        self.tension_range = check_tension_range(owner, tension_range)
        """Colour ramp range (lo, hi) [N]; None until :meth:`close` when automatic."""
        self._auto_range = self.tension_range is None
        self._worlds = select_worlds(owner, model, world)
        self._offsets = check_world_offsets(owner, model, world_offsets)
        self.geometry = SceneGeometry(model, solver, arc_points=arc_points)
        """The drawing data of the last recorded frame."""
        self.model = model
        self.path = path
        self.fps = fps
        self.frame_count = 0
        """Number of frames recorded so far."""
        self._closed = False
        self._times: list[float] = []
        self._tensions: list[dict[int, np.ndarray]] = []
        self._widths: dict[int, float] = {}

        from pxr import Usd, UsdGeom

        # Built in memory and exported on close, so an earlier recording of the same file (still
        # open in this process) does not clash with this one.
        self.stage = Usd.Stage.CreateInMemory(os.path.basename(path))
        """The USD stage being written (in memory until :meth:`close` exports it to ``path``)."""
        stage = self.stage
        # USD knows Y-up and Z-up stages only; an X-up scene is written unchanged and tagged Z-up.
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y if model.up_axis == 1 else UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(stage, 1.0)
        stage.SetTimeCodesPerSecond(fps)
        stage.SetFramesPerSecond(fps)
        root = UsdGeom.Xform.Define(stage, "/World")
        stage.SetDefaultPrim(root.GetPrim())
        self.body_paths: dict[int, str] = {}
        """Prim path of each recorded body."""
        self.tendon_paths: dict[int, str] = {}
        """Prim path of each recorded routed cable (by index in ``model.tendon_*``)."""
        self.transmission_paths: dict[int, str] = {}
        """Prim path of each recorded spatial transmission tendon (by index in ``model.transmission_*``)."""
        self._body_ops = {}
        self._curve_prims = {}
        self._build_static(plane_size, guides)

    # Static structure ----------------------------------------------------------------------------

    def _world_path(self, w: int) -> str:
        return "/World/shared" if w < 0 else f"/World/world_{w}"

    def _unique(self, parent: str, name: str, used: set) -> str:
        base = _prim_name(name)
        path = f"{parent}/{base}"
        i = 1
        while path in used:
            path = f"{parent}/{base}_{i}"
            i += 1
        used.add(path)
        return path

    def _build_static(self, plane_size: float, guides: bool):
        from pxr import Gf, UsdGeom

        m = self.model
        stage = self.stage
        used: set = set()
        worlds_made = set()

        def world_prim(w: int) -> str:
            p = self._world_path(w)
            if p not in worlds_made:
                xf = UsdGeom.Xform.Define(stage, p)
                if w >= 0 and self._offsets is not None:
                    xf.AddTranslateOp().Set(Gf.Vec3d(*self._offsets[w]))
                worlds_made.add(p)
            return p

        body_world = m.body_world.numpy() if m.body_count else np.zeros(0, np.int32)
        for b in range(m.body_count):
            w = int(body_world[b])
            if not world_visible(self._worlds, w):
                continue
            parent = world_prim(w) + "/bodies"
            UsdGeom.Scope.Define(stage, parent)
            label = m.body_label[b] if b < len(m.body_label) and m.body_label[b] else f"body_{b}"
            p = self._unique(parent, _local_label(label), used)
            xf = UsdGeom.Xform.Define(stage, p)
            self._body_ops[b] = (xf.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble), xf.AddOrientOp())
            self.body_paths[b] = p

        for vis in model_visuals(m, guides=guides, cable_width=self.geometry.cable_width):
            if vis.body >= 0:
                if vis.body not in self.body_paths:
                    continue
                parent = self.body_paths[vis.body]
            else:
                if not world_visible(self._worlds, vis.world):
                    continue
                parent = world_prim(vis.world) + ("/static" if vis.world >= 0 else "")
                if vis.world >= 0:
                    UsdGeom.Scope.Define(stage, parent)
            self._define_visual(self._unique(parent, _local_label(vis.name), used), vis, plane_size)

        for layout in self.geometry.tendons:
            if not world_visible(self._worlds, layout.world):
                continue
            group = "cables" if layout.kind == "cable" else "transmissions"
            parent = world_prim(layout.world) + "/" + group
            UsdGeom.Scope.Define(stage, parent)
            p = self._unique(parent, _local_label(layout.label), used)
            curves = UsdGeom.BasisCurves.Define(stage, p)
            curves.CreateTypeAttr(UsdGeom.Tokens.linear)
            curves.CreateWrapAttr(UsdGeom.Tokens.nonperiodic)
            curves.CreateCurveVertexCountsAttr(list(layout.curve_counts))
            curves.SetWidthsInterpolation(UsdGeom.Tokens.constant)
            color = curves.CreateDisplayColorPrimvar(UsdGeom.Tokens.vertex)
            tension = UsdGeom.PrimvarsAPI(curves).CreatePrimvar(
                "tension", _sdf_type("FloatArray"), UsdGeom.Tokens.vertex
            )
            curves.GetPrim().CreateAttribute("newton_tendon:label", _sdf_type("String")).Set(layout.label)
            curves.GetPrim().CreateAttribute("newton_tendon:index", _sdf_type("Int")).Set(int(layout.index))
            (self.tendon_paths if layout.kind == "cable" else self.transmission_paths)[layout.index] = p
            self._curve_prims[len(self._curve_prims)] = (layout, curves, color, tension)

    def _define_visual(self, path: str, vis, plane_size: float):
        from pxr import Gf, UsdGeom, Vt

        stage = self.stage
        kind = vis.kind
        size = vis.size
        if kind == "sphere":
            prim = UsdGeom.Sphere.Define(stage, path)
            r = float(size[0])
            prim.CreateRadiusAttr(r)
            half = (r, r, r)
        elif kind == "ellipsoid":
            prim = UsdGeom.Sphere.Define(stage, path)
            prim.CreateRadiusAttr(1.0)
            half = (1.0, 1.0, 1.0)  # the scale op below makes it the semi-axes
        elif kind == "box":
            prim = UsdGeom.Cube.Define(stage, path)
            prim.CreateSizeAttr(2.0)
            half = (1.0, 1.0, 1.0)  # the scale op below makes it the box's half extents
        elif kind == "mesh":
            prim = UsdGeom.Mesh.Define(stage, path)
            verts, faces = vis.mesh
            prim.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(verts, dtype=np.float32)))
            prim.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(faces), 3, dtype=np.int32)))
            prim.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(np.ascontiguousarray(faces, dtype=np.int32).ravel()))
            prim.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
            half = tuple(float(v) for v in size)
        elif kind in ("capsule", "cylinder"):
            prim = (UsdGeom.Capsule if kind == "capsule" else UsdGeom.Cylinder).Define(stage, path)
            r, h = float(size[0]), float(size[1])
            prim.CreateRadiusAttr(r)
            prim.CreateHeightAttr(2.0 * h)
            prim.CreateAxisAttr(UsdGeom.Tokens.z)
            half = (r, r, h + r if kind == "capsule" else h)
        else:  # plane, normal +Z
            prim = UsdGeom.Plane.Define(stage, path)
            w = 2.0 * float(size[0]) if size[0] > 0.0 else plane_size
            length = 2.0 * float(size[1]) if size[1] > 0.0 else plane_size
            prim.CreateWidthAttr(w)
            prim.CreateLengthAttr(length)
            prim.CreateAxisAttr(UsdGeom.Tokens.z)
            half = (0.5 * w, 0.5 * length, 0.0)
        prim.CreateExtentAttr(Vt.Vec3fArray([Gf.Vec3f(*(-v for v in half)), Gf.Vec3f(*half)]))
        xf = vis.xform
        prim.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*xf[:3]))
        prim.AddOrientOp().Set(Gf.Quatf(float(xf[6]), float(xf[3]), float(xf[4]), float(xf[5])))
        if kind in ("box", "ellipsoid"):
            prim.AddScaleOp().Set(Gf.Vec3f(*(float(v) for v in size)))
        prim.CreateDisplayColorAttr(Vt.Vec3fArray([Gf.Vec3f(*(float(c) for c in vis.color))]))
        if vis.is_guide:
            prim.GetPrim().CreateAttribute("newton_tendon:guide", _sdf_type("Bool")).Set(True)

    # Frames -------------------------------------------------------------------------------------

    def record(self, state, time: float | None = None, *, control=None) -> float:
        """Write one frame of ``state``: body poses and tendon curves as time samples.

        Args:
            state: A State of the recorded model (only read).
            time: Simulated time [s] of the frame; None uses ``frame_count / fps``. Times must increase.
            control: Optional Control of the step; spatial tendons it disables
                (``transmission_enabled == 0``) are made invisible in this frame.

        Returns:
            The time code the frame was written at (``time * fps``).
        """
        from pxr import Gf, Sdf, UsdGeom, Vt

        if self._closed:
            raise RuntimeError(f"RecorderUSD: {self.path!r} is closed; create a new recorder")
        t = self.frame_count / self.fps if time is None else float(time)
        if not np.isfinite(t):
            raise ValueError(f"RecorderUSD.record: time must be finite, got {time!r}")
        if self._times and t <= self._times[-1]:
            raise ValueError(f"RecorderUSD.record: time {t} s is not after the previous frame ({self._times[-1]} s)")
        enabled = None
        check_state("RecorderUSD.record", "state", state, self.model)
        if control is not None:
            check_control("RecorderUSD.record", "control", control, self.model)
        if control is not None and self.model.transmission_count:
            enabled = control.transmission_enabled.numpy()
        geo = self.geometry
        geo.update(state)
        code = t * self.fps
        q = geo.body_q
        frame_tension: dict[int, np.ndarray] = {}
        with Sdf.ChangeBlock():
            for b, (translate, orient) in self._body_ops.items():
                translate.Set(Gf.Vec3d(*q[b, :3]), code)
                orient.Set(Gf.Quatf(float(q[b, 6]), float(q[b, 3]), float(q[b, 4]), float(q[b, 5])), code)
            for key, (layout, curves, color, tension_pv) in self._curve_prims.items():
                pts = geo.points(layout)
                ten = geo.tension(layout)
                curves.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(pts.astype(np.float32)), code)
                tension_pv.Set(Vt.FloatArray.FromNumpy(ten.astype(np.float32)), code)
                width = 2.0 * geo.width(layout)
                if self._widths.get(key) != width:
                    curves.GetWidthsAttr().Set(Vt.FloatArray([width]), code)
                    self._widths[key] = width
                curves.GetExtentAttr().Set(_extent(pts, width), code)
                if enabled is not None and layout.kind == "transmission":
                    shown = UsdGeom.Tokens.inherited if enabled[layout.index] else UsdGeom.Tokens.invisible
                    curves.GetVisibilityAttr().Set(shown, code)
                if self._auto_range:
                    frame_tension[key] = ten.astype(np.float32)
                else:
                    color.Set(Vt.Vec3fArray.FromNumpy(tension_color(ten, self.tension_range).astype(np.float32)), code)
        self._times.append(t)
        self._tensions.append(frame_tension)
        self.frame_count += 1
        return code

    def close(self) -> str:
        """Write the colours of an automatic tension range, set the time range and save the file.

        Returns:
            The path written. Closing twice is harmless.
        """
        from pxr import Gf, Sdf, Vt

        if self._closed:
            return self.path
        if self._auto_range:
            peak = 0.0
            for frame in self._tensions:
                for ten in frame.values():
                    finite = ten[np.isfinite(ten)]
                    if finite.size:
                        peak = max(peak, float(finite.max()))
            self.tension_range = (0.0, peak if peak > 0.0 else 1.0)
            with Sdf.ChangeBlock():
                for t, frame in zip(self._times, self._tensions, strict=True):
                    for key, ten in frame.items():
                        rgb = tension_color(ten, self.tension_range).astype(np.float32)
                        self._curve_prims[key][2].Set(Vt.Vec3fArray.FromNumpy(rgb), t * self.fps)
        if self._times:
            self.stage.SetStartTimeCode(self._times[0] * self.fps)
            self.stage.SetEndTimeCode(self._times[-1] * self.fps)
        world = self.stage.GetPrimAtPath("/World")
        world.CreateAttribute("newton_tendon:tensionRange", _sdf_type("Float2")).Set(Gf.Vec2f(*self.tension_range))
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        if not self.stage.GetRootLayer().Export(self.path):
            raise OSError(f"RecorderUSD.close: could not write {self.path!r}")
        self._tensions = []
        self._closed = True
        return self.path

    def __enter__(self) -> RecorderUSD:
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False


def _sdf_type(name: str):
    from pxr import Sdf

    return getattr(Sdf.ValueTypeNames, name)


def _extent(points: np.ndarray, width: float):
    """Bounding box of curve points grown by half the curve width (USD's extent for curves)."""
    from pxr import Gf, Vt

    if len(points) == 0:
        return Vt.Vec3fArray([Gf.Vec3f(0.0), Gf.Vec3f(0.0)])
    lo = points.min(axis=0) - 0.5 * width
    hi = points.max(axis=0) + 0.5 * width
    return Vt.Vec3fArray([Gf.Vec3f(*(float(v) for v in lo)), Gf.Vec3f(*(float(v) for v in hi))])


__all__ = ["RecorderUSD"]
