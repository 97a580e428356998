"""Viewer layer: the USD recorder, the headless renderer, history plots and the live web viewer.

One small scene serves every test: per world, a routed cable ANCHOR -> ROLLER -> ANCHOR between two
weights (an Atwood machine over a fixed roller, wrap pi) and a spatial transmission tendon from a
world site over a world cylinder (side site above it) to a hanging load, locked at its initial
length, then a pulley branch of divisor 2 to a world site; shapes of every kind and a ground plane.
"""

from __future__ import annotations

import math
import os
import struct
import urllib.request
import zlib

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon.solvers import SolverXPBD
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap
from newton_tendon.viewer import (
    CABLE_WIDTH_ATTRIBUTE,
    Camera,
    RecorderUSD,
    SceneGeometry,
    plot_history,
    render_image,
    render_png,
    resolve_camera,
    tension_color,
    write_png,
)

ROLLER_CENTER = np.array([0.0, 0.0, 2.0])
"""Routed-cable roller centre [m] (world 0); axis +Y."""
ROLLER_RADIUS = 0.1
"""Roller radius [m]."""
CYL_CENTER = np.array([1.0, 0.5, 2.0])
"""Spatial-tendon cylinder axis point [m] (world 0); axis +Y."""
CYL_RADIUS = 0.15
"""Cylinder wrapping radius [m]."""
ARC_POINTS = 16
"""Vertices per sampled arc."""
CABLE_WIDTH = 0.012
"""Drawing radius [m] authored on the routed cable through the tendon_width custom attribute."""
TX_WIDTH = 0.02
"""Drawing radius [m] of the spatial tendon (its width property)."""
SPACING = (4.0, 4.0, 0.0)
"""Replicate grid spacing [m]: world 1 sits 4 m along +X."""
FPS = 50.0
"""Recording rate [1/s]."""
FRAMES = 6
"""Recorded frames."""


def chord_tolerance(radius: float, angle: float, n: int = ARC_POINTS) -> float:
    """Length [m] lost when an arc of ``angle`` rad and ``radius`` m is drawn as n - 1 chords:
    r angle (1 - sinc), bounded by r angle^3 / (24 (n - 1)^2); plus float32 rounding of ~3 m of route."""
    return radius * angle**3 / (24.0 * (n - 1) ** 2) + 1e-5


def build_world() -> nt.ModelBuilder:
    b = nt.ModelBuilder()
    b.add_custom_attribute(nt.CustomAttribute(name=CABLE_WIDTH_ATTRIBUTE, frequency=nt.AttributeFrequency.TENDON))
    inertia = np.eye(3) * 1e-3
    heavy = b.add_body(xform=(-ROLLER_RADIUS, 0.0, 1.0, 0, 0, 0, 1), mass=1.2, inertia=inertia, label="heavy")
    light = b.add_body(xform=(ROLLER_RADIUS, 0.0, 1.0, 0, 0, 0, 1), mass=1.0, inertia=inertia, label="light")
    load = b.add_body(xform=(CYL_CENTER[0] + CYL_RADIUS, 0.5, 1.0, 0, 0, 0, 1), mass=1.0, inertia=inertia, label="load")
    # Near-massless shapes (density 1 kg/m^3), one of each kind the recorder writes.
    b.add_shape_sphere(heavy, radius=0.04, density=1.0, has_collision=False)
    b.add_shape_box(light, hx=0.03, hy=0.03, hz=0.03, density=1.0, has_collision=False)
    b.add_shape_capsule(load, radius=0.03, half_height=0.03, density=1.0, has_collision=False)
    b.add_shape_cylinder(-1, xform=(3.0, 3.0, 0.1, 0, 0, 0, 1), radius=0.05, half_height=0.1, has_collision=False)
    b.add_tendon(
        [
            nt.TendonGuide(body=heavy),
            nt.TendonGuide(
                body=-1,
                guide_type=nt.TendonGuideType.ROLLER,
                offset=tuple(ROLLER_CENTER),
                axis=(0.0, 1.0, 0.0),
                radius=ROLLER_RADIUS,
                orientation=1,
                compliance=1e-4,
            ),
            nt.TendonGuide(body=light, compliance=1e-4),
        ],
        label="cable",
        custom_attributes={CABLE_WIDTH_ATTRIBUTE: CABLE_WIDTH},
    )
    start = (0.4, 0.5, 1.4)
    b.add_spatial_tendon(
        [
            TendonSite(body=-1, offset=start),
            TendonWrap(
                kind="cylinder",
                body=-1,
                offset=tuple(CYL_CENTER),
                axis=(0.0, 1.0, 0.0),
                radius=CYL_RADIUS,
                side=TendonSite(body=-1, offset=(1.0, 0.5, 2.6)),
            ),
            TendonSite(body=load),
            TendonPulley(divisor=2.0),
            TendonSite(body=-1, offset=(1.6, 0.5, 2.4)),
            TendonSite(body=load),
        ],
        label="hoist",
        stiffness=2000.0,
        width=TX_WIDTH,
    )
    return b


@pytest.fixture(scope="module")
def scene():
    """Two worlds of the test scene plus a ground plane, finalized on the CPU, with a SolverXPBD."""
    world = build_world()
    root = nt.ModelBuilder()
    root.add_ground_plane()
    root.replicate(world, 2, spacing=SPACING)
    model = root.finalize("cpu")
    solver = SolverXPBD(model, iterations=8)
    return model, solver


def run_frames(model, solver, frames: int, record=None):
    """Step ``frames`` frames of 1/FPS s (4 substeps each), calling ``record(state)`` after each."""
    s0, s1 = model.state(), model.state()
    dt = 1.0 / FPS / 4
    for _ in range(frames):
        for _ in range(4):
            solver.step(s0, s1, None, None, dt)
            s0, s1 = s1, s0
        if record is not None:
            record(s0)
    return s0


def polyline_length(p: np.ndarray) -> float:
    return float(np.linalg.norm(np.diff(p, axis=0), axis=1).sum())


# ----------------------------------------------------------------------------------------------
# USD recorder


def test_recorder_usd_prims_samples_and_curves(scene, tmp_path):
    """The recording opens with pxr and holds: one Xform per body with FRAMES translate/orient samples
    equal to the simulated poses; shape prims of each kind; per tendon a linear BasisCurves whose
    vertex counts are 1 + ARC_POINTS + 1 (cable over a roller) and [1 + ARC_POINTS + 1, 2] (spatial
    tendon: cylinder branch, pulley branch), whose arc vertices lie on the roller circle / cylinder,
    whose polyline lengths equal the solver's lengths up to the chord error, and whose widths are
    twice the drawing radius."""
    from pxr import Usd, UsdGeom

    model, solver = scene
    path = str(tmp_path / "scene.usda")
    rec = RecorderUSD(model, path, fps=FPS, solver=solver)
    last = run_frames(model, solver, FRAMES, rec.record)
    assert rec.close() == path
    assert rec.frame_count == FRAMES

    stage = Usd.Stage.Open(path)
    assert stage.GetDefaultPrim().GetPath() == "/World"
    assert stage.GetTimeCodesPerSecond() == FPS
    assert stage.GetStartTimeCode() == 0.0 and stage.GetEndTimeCode() == FRAMES - 1
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z

    body_q = last.body_q.numpy()
    assert sorted(rec.body_paths) == list(range(model.body_count))
    assert rec.body_paths[0] == "/World/world_0/bodies/heavy"
    assert rec.body_paths[3] == "/World/world_1/bodies/heavy"
    for b, p in rec.body_paths.items():
        prim = stage.GetPrimAtPath(p)
        assert prim.IsA(UsdGeom.Xform), p
        xf = UsdGeom.Xformable(prim)
        ops = {op.GetOpName(): op for op in xf.GetOrderedXformOps()}
        translate, orient = ops["xformOp:translate"], ops["xformOp:orient"]
        assert translate.GetNumTimeSamples() == FRAMES and orient.GetNumTimeSamples() == FRAMES
        np.testing.assert_allclose(np.array(translate.Get(FRAMES - 1)), body_q[b, :3], atol=1e-6)
        q = orient.Get(FRAMES - 1)
        np.testing.assert_allclose([*q.GetImaginary(), q.GetReal()], body_q[b, 3:], atol=1e-6)

    kinds = {p.GetTypeName() for p in stage.Traverse()}
    assert {"Sphere", "Cube", "Capsule", "Cylinder", "Plane", "BasisCurves"} <= kinds
    assert stage.GetPrimAtPath("/World/shared/ground").IsA(UsdGeom.Plane)
    assert stage.GetPrimAtPath(rec.body_paths[0] + "/shape_0").IsA(UsdGeom.Sphere) or any(
        c.IsA(UsdGeom.Sphere) for c in stage.GetPrimAtPath(rec.body_paths[0]).GetChildren()
    )

    wraps = solver.tendon_guide_wrap.numpy()
    lengths = solver.tendon_length.numpy()
    tx_lengths_world = []
    for w in range(2):
        cable = UsdGeom.BasisCurves(stage.GetPrimAtPath(rec.tendon_paths[w]))
        assert rec.tendon_paths[w] == f"/World/world_{w}/cables/cable"
        assert cable.GetTypeAttr().Get() == UsdGeom.Tokens.linear
        assert list(cable.GetCurveVertexCountsAttr().Get()) == [ARC_POINTS + 2]
        points_attr = cable.GetPointsAttr()
        assert points_attr.GetNumTimeSamples() == FRAMES
        pts = np.array(points_attr.Get(FRAMES - 1), dtype=np.float64)
        assert pts.shape == (ARC_POINTS + 2, 3)
        centre = ROLLER_CENTER + np.array([SPACING[0] * w, 0.0, 0.0])
        rel = pts[1:-1] - centre
        np.testing.assert_allclose(np.hypot(rel[:, 0], rel[:, 2]), ROLLER_RADIUS, atol=1e-5)
        np.testing.assert_allclose(rel[:, 1], 0.0, atol=1e-6)
        np.testing.assert_allclose(pts[0], body_q[3 * w, :3], atol=1e-5)
        np.testing.assert_allclose(pts[-1], body_q[3 * w + 1, :3], atol=1e-5)
        theta = float(wraps[3 * w + 1])
        assert abs(theta - math.pi) < 1e-2
        assert abs(polyline_length(pts) - lengths[w]) < chord_tolerance(ROLLER_RADIUS, theta)
        np.testing.assert_allclose(list(cable.GetWidthsAttr().Get(FRAMES - 1)), [2 * CABLE_WIDTH], rtol=1e-6)
        assert len(cable.GetDisplayColorAttr().Get(FRAMES - 1)) == ARC_POINTS + 2

        tx = UsdGeom.BasisCurves(stage.GetPrimAtPath(rec.transmission_paths[w]))
        assert rec.transmission_paths[w] == f"/World/world_{w}/transmissions/hoist"
        assert list(tx.GetCurveVertexCountsAttr().Get()) == [ARC_POINTS + 2, 2]
        assert tx.GetPointsAttr().GetNumTimeSamples() == FRAMES
        tpts = np.array(tx.GetPointsAttr().Get(FRAMES - 1), dtype=np.float64)
        assert tpts.shape == (ARC_POINTS + 4, 3)
        axis_point = CYL_CENTER + np.array([SPACING[0] * w, 0.0, 0.0])
        trel = tpts[1 : ARC_POINTS + 1] - axis_point
        np.testing.assert_allclose(np.hypot(trel[:, 0], trel[:, 2]), CYL_RADIUS, atol=1e-5)
        # The side site above selects the over-the-top route: the arc passes the cylinder's top.
        assert trel[:, 2].max() > CYL_RADIUS - 1e-3
        branch_a = polyline_length(tpts[: ARC_POINTS + 2])
        branch_b = polyline_length(tpts[ARC_POINTS + 2 :])
        tx_lengths_world.append(branch_a + branch_b / 2.0)
        np.testing.assert_allclose(list(tx.GetWidthsAttr().Get(FRAMES - 1)), [2 * TX_WIDTH], rtol=1e-6)
    solver.update_geometry(last)
    tx_len = solver.transmission_length.numpy()
    np.testing.assert_allclose(tx_lengths_world, tx_len, atol=chord_tolerance(CYL_RADIUS, math.pi))


def test_recorder_colours_follow_tension(scene, tmp_path):
    """displayColor is tension_color of the per-vertex tension primvar over the recorded range: the
    automatic range is (0, largest recorded tension); the cable's vertices carry the solver's span
    tensions and the spatial tendon's branches T and T / 2."""
    from pxr import Usd, UsdGeom

    model, solver = scene
    path = str(tmp_path / "auto.usd")
    with RecorderUSD(model, path, fps=FPS, solver=solver, world=0) as rec:
        run_frames(model, solver, 3, rec.record)
    stage = Usd.Stage.Open(path)
    assert not stage.GetPrimAtPath("/World/world_1").IsValid()
    lo, hi = rec.tension_range
    span_t = solver.tendon_segment_material_tension.numpy() + solver.tendon_segment_damping_tension.numpy()
    tx_t = solver.transmission_tension.numpy()
    assert lo == 0.0 and hi > 0.0
    cable = UsdGeom.BasisCurves(stage.GetPrimAtPath(rec.tendon_paths[0]))
    tension = np.array(UsdGeom.PrimvarsAPI(cable).GetPrimvar("tension").Get(2))
    np.testing.assert_allclose(tension[0], span_t[0], rtol=1e-5)
    np.testing.assert_allclose(tension[-1], span_t[1], rtol=1e-5)
    colors = np.array(cable.GetDisplayColorAttr().Get(2))
    np.testing.assert_allclose(colors, tension_color(tension, (lo, hi)), atol=1e-6)
    tx = UsdGeom.BasisCurves(stage.GetPrimAtPath(rec.transmission_paths[0]))
    tx_tension = np.array(UsdGeom.PrimvarsAPI(tx).GetPrimvar("tension").Get(2))
    np.testing.assert_allclose(tx_tension[: ARC_POINTS + 2], tx_t[0], rtol=1e-5)
    np.testing.assert_allclose(tx_tension[ARC_POINTS + 2 :], tx_t[0] / 2.0, rtol=1e-5)
    assert tx_t[0] > 1.0  # the spring holds the load
    peak = max(
        float(np.max(UsdGeom.PrimvarsAPI(c).GetPrimvar("tension").Get(f))) for c in (cable, tx) for f in range(3)
    )
    assert hi == pytest.approx(peak, rel=1e-6)


def test_geometry_without_solver_matches_solver_route(scene):
    """The private route probe draws the same cable as the stepping solver reports (attachment points
    and wraps), also for a state that was never stepped (seeded on the fly)."""
    model, solver = scene
    last = run_frames(model, solver, 2)
    with_solver = SceneGeometry(model, solver)
    with_solver.update(last)
    alone = SceneGeometry(model)
    alone.update(last)
    np.testing.assert_allclose(alone.cable_points, with_solver.cable_points, atol=2e-5)
    np.testing.assert_allclose(alone.transmission_points, with_solver.transmission_points, atol=1e-6)
    xl = solver.tendon_segment_attachment_l.numpy()
    np.testing.assert_allclose(alone.cable_points[0], xl[0], atol=1e-5)
    # A fresh state at the initial pose: the arc is a half circle over the roller.
    fresh = SceneGeometry(model)
    fresh.update(model.state())
    pts = fresh.points(fresh.tendons[0])
    np.testing.assert_allclose(pts[1], ROLLER_CENTER + [-ROLLER_RADIUS, 0, 0], atol=1e-5)
    np.testing.assert_allclose(pts[ARC_POINTS // 2 + 1], ROLLER_CENTER + [0, 0, ROLLER_RADIUS], atol=2e-2)
    np.testing.assert_allclose(pts[ARC_POINTS], ROLLER_CENTER + [ROLLER_RADIUS, 0, 0], atol=1e-5)
    # Without a solver, the cable shows its constitutive tension (l - L)/c: zero at the initial pose.
    np.testing.assert_allclose(fresh.tension(fresh.tendons[0]), 0.0, atol=1e-2)


def test_sphere_wrap_arc_lies_on_the_sphere():
    """A spatial tendon over a sphere (a side site picks the far side, an arc above pi/2): the drawn
    arc vertices lie on the sphere, in the plane through both sites and the centre, and the polyline
    length equals the length the solver measures up to the chord error."""
    b = nt.ModelBuilder()
    centre = np.array([0.0, 0.0, 1.0])
    r = 0.2
    b.add_spatial_tendon(
        [
            TendonSite(body=-1, offset=(-0.5, 0.1, 1.0)),
            TendonWrap(kind="sphere", body=-1, offset=tuple(centre), radius=r, side=TendonSite(offset=(0.0, 0.0, 0.5))),
            TendonSite(body=-1, offset=(0.5, -0.1, 1.1)),
        ],
        label="over_sphere",
    )
    b.add_body(xform=(0, 0, 3, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3) * 1e-3)  # a model needs a body
    model = b.finalize("cpu")
    state = model.state()
    solver = SolverXPBD(model)
    solver.update_geometry(state)
    geo = SceneGeometry(model)
    geo.update(state)
    pts = geo.points(geo.tendons[0])
    assert geo.tendons[0].curve_counts == [ARC_POINTS + 2]
    arc = pts[1:-1]
    np.testing.assert_allclose(np.linalg.norm(arc - centre, axis=1), r, atol=1e-5)
    normal = np.cross(pts[0] - centre, pts[-1] - centre)
    np.testing.assert_allclose((arc - centre) @ (normal / np.linalg.norm(normal)), 0.0, atol=1e-5)
    assert arc[:, 2].min() < centre[2] - 0.9 * r  # the side site below: the route passes under the sphere
    ta, tb = arc[0] - centre, arc[-1] - centre
    theta = math.acos(np.clip(ta @ tb / r**2, -1.0, 1.0))
    length = float(solver.transmission_length.numpy()[0])
    assert abs(polyline_length(pts) - length) < chord_tolerance(r, theta)


def test_recorder_hides_disabled_transmission_tendons(scene, tmp_path):
    """A spatial tendon disabled in the frame's Control is invisible at that time code (the spec:
    disabling a tendon stops its drawing); routed cables are unaffected."""
    from pxr import Usd, UsdGeom

    model, _ = scene
    control = model.control()
    path = str(tmp_path / "vis.usda")
    with RecorderUSD(model, path, world=0) as rec:
        rec.record(model.state(), control=control)
        control.transmission_enabled.assign(np.zeros(model.transmission_count, dtype=np.int32))
        rec.record(model.state(), control=control)
    stage = Usd.Stage.Open(path)
    tx = UsdGeom.Imageable(stage.GetPrimAtPath(rec.transmission_paths[0]))
    assert tx.ComputeVisibility(0.0) == UsdGeom.Tokens.inherited
    assert tx.ComputeVisibility(1.0) == UsdGeom.Tokens.invisible
    cable = UsdGeom.Imageable(stage.GetPrimAtPath(rec.tendon_paths[0]))
    assert cable.ComputeVisibility(1.0) == UsdGeom.Tokens.inherited


def test_recorder_rejects_bad_arguments(scene, tmp_path):
    """Bad arguments raise before anything is written."""
    model, solver = scene
    bad = [
        (dict(path=str(tmp_path / "x.txt")), ValueError, "must end with"),
        (dict(fps=0.0), ValueError, "fps"),
        (dict(world=5), ValueError, "out of range"),
        (dict(world="a"), TypeError, "world indices"),
        (dict(tension_range=(3.0, 1.0)), ValueError, "lo < hi"),
        (dict(world_offsets=np.zeros((3, 3))), ValueError, "world_offsets"),
        (dict(arc_points=1), ValueError, "arc_points"),
    ]
    for kwargs, err, text in bad:
        args = dict(path=str(tmp_path / "bad.usda"))
        args.update(kwargs)
        with pytest.raises(err, match=text):
            RecorderUSD(model, args.pop("path"), **args)
        assert not os.path.exists(tmp_path / "bad.usda")
    rec = RecorderUSD(model, str(tmp_path / "t.usda"), solver=solver)
    s = model.state()
    rec.record(s, time=0.5)
    with pytest.raises(ValueError, match="not after"):
        rec.record(s, time=0.5)
    rec.close()
    with pytest.raises(RuntimeError, match="closed"):
        rec.record(s)


def test_recorder_world_offsets(scene, tmp_path):
    """world_offsets translate each world's Xform; the body samples stay in simulation coordinates."""
    from pxr import Usd, UsdGeom

    model, _ = scene
    offsets = np.array([[0.0, 0.0, 0.0], [0.0, 3.0, 1.0]])
    path = str(tmp_path / "off.usdc")
    with RecorderUSD(model, path, world_offsets=offsets, guides=False) as rec:
        rec.record(model.state())
    stage = Usd.Stage.Open(path)
    world1 = UsdGeom.Xformable(stage.GetPrimAtPath("/World/world_1"))
    m = world1.ComputeLocalToWorldTransform(0.0)
    np.testing.assert_allclose(np.array(m.ExtractTranslation()), offsets[1])
    heavy = UsdGeom.Xformable(stage.GetPrimAtPath(rec.body_paths[3])).ComputeLocalToWorldTransform(0.0)
    np.testing.assert_allclose(
        np.array(heavy.ExtractTranslation()), model.body_q.numpy()[3, :3] + offsets[1], atol=1e-6
    )
    assert not any(p.GetAttribute("newton_tendon:guide").IsValid() for p in stage.Traverse())


# ----------------------------------------------------------------------------------------------
# Headless pictures

MAGENTA = np.array([255, 0, 255])


def test_render_png_tendon_pixels_where_projected(scene, tmp_path):
    """With one fixed tendon colour, pixels at the projected tendon points have that colour, and every
    pixel of that colour lies within the ribbon's half width of the projected polylines."""
    model, solver = scene
    last = run_frames(model, solver, 2)
    cam_spec = dict(eye=(0.7, -5.0, 1.6), target=(0.7, 0.25, 1.6), up=(0, 0, 1), fov=40.0)
    path = render_png(
        model,
        last,
        str(tmp_path / "scene.png"),
        solver=solver,
        camera=cam_spec,
        width=320,
        height=240,
        world=0,
        tendon_color=(1.0, 0.0, 1.0),
        guides=False,
    )
    img = read_png_rgb(path).astype(np.int64)
    assert img.shape == (240, 320, 3)
    cam = resolve_camera(model, last, cam_spec, width=320, height=240)
    geo = SceneGeometry(model, solver)
    geo.update(last)
    tendon = np.all(img == MAGENTA, axis=2)
    assert tendon.sum() > 200
    background = np.all(img == 255, axis=2)
    assert background.sum() > 0.5 * img.shape[0] * img.shape[1]

    polylines = []
    for layout in geo.tendons:
        if layout.world != 0:
            continue
        pts = geo.points(layout)
        start = 0
        for count in layout.curve_counts:
            polylines.append(pts[start : start + count])
            start += count
    hits, total = 0, 0
    segs_uv = []
    for p in polylines:
        # Interior of every straight piece (away from the body shapes at the ends).
        for a, b in zip(p[:-1], p[1:], strict=True):
            for f in (0.3, 0.5, 0.7):
                row, col = cam.pixel(a + f * (b - a))
                if 0 <= row < 240 and 0 <= col < 320:
                    total += 1
                    hits += bool(tendon[row, col])
        uv, _ = cam.project(p)
        segs_uv.append(np.stack([uv[:-1], uv[1:]], axis=1))
    assert total > 50 and hits == total, f"{hits}/{total} projected tendon points hit tendon pixels"

    # Every tendon pixel is near a projected segment: distance <= half width (>= 1.5 px) + 1 px.
    segs = np.concatenate(segs_uv)
    rows, cols = np.nonzero(tendon)
    pix = np.stack([cols + 0.5, rows + 0.5], axis=1)
    a, b = segs[:, 0], segs[:, 1]
    ab = b - a
    t = np.clip(((pix[:, None, :] - a) * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-12), 0.0, 1.0)
    d = np.linalg.norm(pix[:, None, :] - (a + t[..., None] * ab), axis=-1).min(axis=1)
    max_half = max(cam.focal * TX_WIDTH / 4.0, 1.5)
    assert d.max() <= max_half * math.sqrt(2.0) + 1.0, d.max()
    # The sky corners above the scene are background; the ground fills the bottom rows.
    assert background[:10, :10].all() and background[:10, -10:].all()
    assert not background[-10:].any() and not tendon[-10:].any()


def test_render_colours_by_tension(scene, tmp_path):
    """Without a fixed colour, a tendon pixel has the ramp colour of its span's tension, and the
    projection of a body centre shows its shape, not the background."""
    model, solver = scene
    last = run_frames(model, solver, 2)
    cam_spec = dict(eye=(0.0, -4.0, 1.5), target=(0.0, 0.0, 1.5), fov=45.0)
    trange = (0.0, 20.0)
    img = render_image(
        model, last, solver=solver, camera=cam_spec, width=200, height=200, world=0, tension_range=trange
    ).astype(np.int64)
    cam = Camera(**cam_spec, width=200, height=200)
    xl = solver.tendon_segment_attachment_l.numpy()
    xr = solver.tendon_segment_attachment_r.numpy()
    tension = solver.tendon_segment_material_tension.numpy() + solver.tendon_segment_damping_tension.numpy()
    for s in (0, 1):
        mid = 0.5 * (xl[s] + xr[s])
        row, col = cam.pixel(mid)
        expected = np.round(tension_color(tension[s], trange) * 255.0)
        np.testing.assert_allclose(img[row, col], expected, atol=1)
    row, col = cam.pixel(last.body_q.numpy()[0, :3])
    assert not np.all(img[row, col] == 255)


def test_camera_projection_and_auto_framing(scene):
    """The pinhole projection maps the target to the image centre and a point offset along ``right``
    by d at depth z to u = W/2 + f d / z; automatic framing keeps every tendon vertex in the image."""
    cam = Camera(eye=(0, -2, 0), target=(0, 0, 0), up=(0, 0, 1), fov=90.0, width=100, height=80)
    uv, depth = cam.project([[0.0, 0.0, 0.0], [0.5, 0.0, 0.25]])
    np.testing.assert_allclose(uv[0], [50.0, 40.0])
    np.testing.assert_allclose(depth, [2.0, 2.0])
    np.testing.assert_allclose(uv[1], [50.0 + 40.0 * 0.5 / 2.0, 40.0 - 40.0 * 0.25 / 2.0])
    with pytest.raises(ValueError, match="parallel"):
        Camera(eye=(0, 0, 5), target=(0, 0, 0), up=(0, 0, 1))
    model, solver = scene
    state = model.state()
    cam = resolve_camera(model, state, None, width=320, height=240)
    geo = SceneGeometry(model)
    geo.update(state)
    uv, depth = cam.project(np.concatenate([geo.cable_points, geo.transmission_points]))
    assert np.all(depth > 0) and np.all((uv >= 0) & (uv <= [320, 240]))
    with pytest.raises(ValueError, match="unknown camera keys"):
        resolve_camera(model, state, dict(eye=(0, -1, 0), target=(0, 0, 0), zoom=2))


def test_write_png_round_trip(tmp_path):
    """write_png produces a PNG that an independent decoder reads back bit for bit."""
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, size=(7, 11, 3), dtype=np.uint8)
    path = write_png(str(tmp_path / "r.png"), img)
    np.testing.assert_array_equal(read_png_rgb(path), img)
    with pytest.raises(ValueError, match="uint8"):
        write_png(str(tmp_path / "bad.png"), img.astype(np.float32))


def _png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(tag, body) of every chunk of a PNG file, checking the signature and each chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = [], 8
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        tag = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n : pos + 12 + n])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF
        chunks.append((tag, body))
        pos += 12 + n
    return chunks


def read_png_rgb(path) -> np.ndarray:
    """Decode an 8-bit RGB or RGBA, non-interlaced PNG into uint8 [height, width, 3] (all five
    scanline filters), independently of the writer under test and without Pillow (which the test
    extra does not install)."""
    chunks = _png_chunks(open(path, "rb").read())
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert depth == 8 and ctype in (2, 6) and interlace == 0
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(body for tag, body in chunks if tag == b"IDAT"))
    stride = w * bpp
    out = np.zeros((h, stride), dtype=np.int64)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(h):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        cur = np.zeros(stride, dtype=np.int64)
        for x in range(stride):
            a = cur[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 0:
                pred = 0
            elif kind == 1:
                pred = a
            elif kind == 2:
                pred = b
            elif kind == 3:
                pred = (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (line[x] + pred) & 0xFF
        out[y] = cur
        prev = cur
    return out.reshape(h, w, bpp)[:, :, :3].astype(np.uint8)


def test_plot_history_writes_png(tmp_path):
    """plot_history writes a valid PNG (signature, chunk CRCs, IHDR..IEND) of 700 x 400 px with
    plotted content, for 1D and 2D series; mismatched lengths are rejected."""
    pytest.importorskip("matplotlib")
    from PIL import Image  # a dependency of matplotlib

    t = np.linspace(0.0, 1.0, 50)
    path = plot_history(
        t,
        {"tension [N]": 9.81 + np.sin(6 * t), "wrap": np.stack([t, 2 * t], axis=1)},
        str(tmp_path / "h.png"),
        title="history",
        ylabel="value",
    )
    tags = [tag for tag, _ in _png_chunks(open(path, "rb").read())]
    assert tags[0] == b"IHDR" and tags[-1] == b"IEND" and b"IDAT" in tags
    img = np.asarray(Image.open(path).convert("RGB"))
    assert img.shape == (400, 700, 3)
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 10
    with pytest.raises(ValueError, match="series 'x'"):
        plot_history(t, {"x": t[:-1]}, str(tmp_path / "bad.png"))
    with pytest.raises(ValueError, match="non-empty"):
        plot_history(t, {}, str(tmp_path / "bad.png"))


# ----------------------------------------------------------------------------------------------
# Live viewer


def test_live_viewer_serves_and_updates(scene):
    """The viser viewer serves its page over HTTP on an ephemeral localhost port and moves bodies and
    tendons to a pushed frame."""
    pytest.importorskip("viser")
    from newton_tendon.viewer import ViewerViser

    model, solver = scene
    last = run_frames(model, solver, 1)
    with ViewerViser(model, solver=solver, port=0, world=0) as viewer:
        viewer.update(last)
        assert viewer.port > 0 and viewer.frame_count == 1
        with urllib.request.urlopen(viewer.url + "/", timeout=20) as resp:
            assert resp.status == 200
            assert b"<html" in resp.read().lower()
        body_q = last.body_q.numpy()
        assert sorted(viewer.body_nodes) == [0, 1, 2]
        np.testing.assert_allclose(viewer.body_nodes[1].position, body_q[1, :3], atol=1e-6)
        q = body_q[1, 3:]
        np.testing.assert_allclose(viewer.body_nodes[1].wxyz, [q[3], q[0], q[1], q[2]], atol=1e-6)
        segs = viewer.tendon_nodes[("cable", 0)].points
        assert segs.shape == (ARC_POINTS + 1, 2, 3)
        np.testing.assert_allclose(segs[0, 0], viewer.geometry.cable_points[0], atol=1e-6)
        assert viewer.tendon_nodes[("transmission", 0)].points.shape == (ARC_POINTS + 2, 2, 3)
    assert viewer._closed


def test_live_viewer_without_viser_says_how_to_install(monkeypatch, scene):
    """Without viser, creating the viewer raises an ImportError naming the extra to install."""
    import builtins

    from newton_tendon.viewer import live

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "viser" or name.startswith("viser."):
            raise ImportError("No module named 'viser'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"newton-tendon\[viewer\]"):
        live.ViewerViser(scene[0], port=0)


def test_viewer_import_is_light():
    """Importing newton_tendon.viewer does not import matplotlib or viser (nor mujoco, newton, torch)."""
    import subprocess
    import sys

    code = (
        "import sys, newton_tendon.viewer; "
        "print(sorted(m for m in ('matplotlib', 'viser', 'mujoco', 'newton', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_null_viewer_runs_newtons_frame_loop_and_keeps_what_it_is_given(scene):
    """ViewerNull takes newton's viewer calls: is_running() is true for exactly num_frames frames
    (each end_frame counts one, as newton's runner loops ``while viewer.is_running()``), logged arrays
    are kept by name, and a bad frame count is a ValueError naming the argument."""
    from newton_tendon.viewer import ViewerNull  # noqa: PLC0415

    model, solver = scene
    viewer = ViewerNull(num_frames=3)
    viewer.set_model(model)
    viewer.set_camera(pos=(0.0, -4.0, 1.5), pitch=5.0, yaw=90.0)
    state = model.state()
    frames = 0
    while viewer.is_running():
        assert viewer.should_step()
        viewer.apply_forces(state)
        viewer.begin_frame(frames / 60.0)
        viewer.log_state(state)
        viewer.log_lines("cable", solver.tendon_segment_attachment_l, solver.tendon_segment_attachment_r, (1, 0, 0))
        viewer.end_frame()
        frames += 1
    assert frames == 3 and viewer.frame_count == 3
    assert viewer.model is model and viewer.state is state
    assert viewer.logged["cable"][0] is solver.tendon_segment_attachment_l
    assert viewer.benchmark_result() is None
    timed = ViewerNull(num_frames=6, benchmark=True)
    while timed.is_running():
        timed.begin_frame(0.0)
        timed.end_frame()
    assert timed.benchmark_result()["frames"] == 3
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="ViewerNull: num_frames"):
            ViewerNull(num_frames=bad)
