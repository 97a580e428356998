"""The default demo of ``newton-tendon``: both tendon models side by side in many worlds.

Each world holds three small machines, 1 m apart along X:

* **capstan** (routed cable, ``add_tendon``): a 2 kg and a 1 kg weight on one cable over a roller
  fixed in the world (radius 0.1 m, wrap pi). The roller friction ``mu`` differs per world
  (0, 0.1, 0.2, 0.3, repeating). While the cable slips the tensions obey the capstan law
  ``T_heavy / T_light = exp(mu theta)`` and the heavy weight accelerates at
  ``a = g (m1 - E m2) / (m1 + E m2)``, ``E = exp(mu theta)``; at mu = 0.3, ``exp(0.3 pi) = 2.57``
  exceeds the weight ratio 2, so the cable sticks and nothing moves.
* **hanging load** (routed cable): a 2 kg weight on one compliant, damped span below a world
  anchor. At rest the span stretches ``m g c`` beyond its rest length.
* **suspended load** (transmission tendon, ``add_spatial_tendon``): a 1 kg load on a pull-only
  spring (k = 500 N/m above 1 m) with a 2 N tension command; at rest
  ``k (l - 1) + 2 = m g``, so ``l = 1 + (m g - 2)/k`` and the total tension is ``m g``.

:func:`run_demo` builds the scene, replicates it into ``worlds`` worlds, steps it, compares the
measured numbers with the equations above, and writes its outputs (summary, history, USD
recording, plots and a picture) into a folder. The ``newton-tendon demo`` command prints the
table that :func:`format_summary` makes from the result.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import warp as wp

GRAVITY = 9.81
"""Gravitational acceleration [m/s^2] (the builder's default, along -Z)."""
FPS = 60
"""Frames per second of the recording and history."""
SUBSTEPS = 4
"""Solver steps per frame: dt = 1/240 s."""
ITERATIONS = 8
"""Solver iterations per step."""

CAPSTAN_MUS = (0.0, 0.1, 0.2, 0.3)
"""Roller friction coefficient of world ``w``: ``CAPSTAN_MUS[w % 4]``."""
CAPSTAN_HEAVY = 2.0
"""Heavy weight of the capstan machine [kg] (left of the roller)."""
CAPSTAN_LIGHT = 1.0
"""Light weight of the capstan machine [kg] (right of the roller)."""
ROLLER_CENTER = (0.0, 0.0, 3.5)
"""Capstan roller centre in its world [m]; its axis is +Y."""
ROLLER_RADIUS = 0.1
"""Capstan roller radius [m]."""
CAPSTAN_START_Z = 1.0
"""Initial height of both capstan weights [m]."""
CAPSTAN_CLEARANCE = 0.3
"""Capstan numbers come from the frames before the first weight came within this height of the
roller centre [m]; a weight that reaches its roller stops there (an end stop, docs/cables.md)."""

HANG_ANCHOR = (1.0, 0.0, 3.0)
"""World anchor of the hanging load's cable [m]."""
HANG_MASS = 2.0
"""Hanging load [kg]."""
HANG_REST_LENGTH = 1.0
"""Rest length of the hanging span [m]; the load starts this far below the anchor."""
HANG_COMPLIANCE = 1.0e-3
"""Compliance of the hanging span [m/N] (stiffness 1000 N/m)."""
HANG_DAMPING = 25.0
"""Damping of the hanging span [N s/m]."""

LOAD_ANCHOR = (2.0, 0.0, 3.0)
"""World site of the transmission tendon [m]."""
LOAD_MASS = 1.0
"""Load on the transmission tendon [kg]."""
LOAD_START_LENGTH = 1.2
"""Initial tendon length [m] (the load starts this far below its anchor)."""
LOAD_STIFFNESS = 500.0
"""Transmission spring stiffness outside its rest interval [N/m]."""
LOAD_DAMPING = 30.0
"""Transmission damping [N s/m] (damping ratio 0.67: settled within the default 1.5 s)."""
LOAD_SPRING = (0.0, 1.0)
"""Transmission spring rest interval [m]: [0, 1] makes the spring pull-only."""
LOAD_TENSION = 2.0
"""Tension command [N] (``drive_force = -LOAD_TENSION``)."""
LOAD_UPPER_LIMIT = 1.5
"""Upper length limit of the transmission tendon [m] (never reached)."""

SPACING = (3.0, 1.5, 0.0)
"""Spacing [m] of the replicated worlds on their grid."""
SNAPSHOT_TIME = 0.75
"""Time [s] of ``snapshot.png`` (or the end of a shorter run): the loads have settled and no capstan
weight has reached its roller yet."""
SNAPSHOT_SIZE = (800, 400)
"""Width and height [px] of ``snapshot.png``."""

# Body, tendon and guide layout of one world (the order in which build_world adds them).
_HEAVY, _LIGHT, _HANG, _LOAD = 0, 1, 2, 3
_BODIES_PER_WORLD = 4
_SEGMENTS_PER_WORLD = 3  # capstan: 2 spans, hanging load: 1 span
_GUIDES_PER_WORLD = 5  # capstan: anchor, roller, anchor; hanging load: anchor, anchor
_ROLLER_GUIDE = 1


def pendulum_chain(
    links: int = 4, link_length: float = 0.4, radius: float = 0.05, height: float = 1.0, mass_scale: float = 1.0
):
    """A chain of capsule links hinged about +Y, starting horizontal, its first hinge ``height`` [m] up.

    Not part of the demo scene any more; the rigid benchmark and the VBD tests build it.

    Args:
        links: number of links.
        link_length: length of each link [m].
        radius: capsule radius [m].
        height: height of the first hinge [m].
        mass_scale: multiplies the capsule density of 1000 kg/m^3.

    Returns:
        A ``ModelBuilder`` with the links, their revolute joints and one articulation.
    """
    from .builder import ModelBuilder

    b = ModelBuilder()
    half = 0.5 * link_length
    capsule_rot = (0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4))  # local Z -> world X
    parent = -1
    for i in range(links):
        x = (i + 0.5) * link_length
        body = b.add_link(xform=(x, 0.0, height, 0.0, 0.0, 0.0, 1.0), label=f"link_{i}")
        b.add_shape_capsule(
            body,
            xform=(0, 0, 0, *capsule_rot),
            radius=radius,
            half_height=half - radius,
            density=1000.0 * mass_scale,
            mu=0.6,
        )
        parent_xform = (0.0, 0.0, height, 0, 0, 0, 1) if parent < 0 else (half, 0.0, 0.0, 0, 0, 0, 1)
        b.add_joint_revolute(
            parent,
            body,
            parent_xform=parent_xform,
            child_xform=(-half, 0.0, 0.0, 0, 0, 0, 1),
            axis=(0.0, 1.0, 0.0),
            label=f"hinge_{i}",
        )
        parent = body
    b.add_articulation()
    return b


def expected_values() -> dict:
    """The analytic numbers the demo compares with (per capstan friction where they depend on it).

    Returns:
        ``capstan_ratio`` (exp(mu pi) while slipping, m1/m2 while sticking), ``capstan_accel`` [m/s^2]
        and ``capstan_slips`` per entry of :data:`CAPSTAN_MUS`; ``hang_z`` [m] and ``hang_tension``
        [N] of the hanging load at rest; ``load_length`` [m], ``load_tension`` [N] and ``load_z``
        [m] of the transmission load at rest.
    """
    m1, m2 = CAPSTAN_HEAVY, CAPSTAN_LIGHT
    ratio, accel, slips = [], [], []
    for mu in CAPSTAN_MUS:
        e = math.exp(mu * math.pi)
        slip = e < m1 / m2
        slips.append(slip)
        ratio.append(e if slip else m1 / m2)
        accel.append(GRAVITY * (m1 - e * m2) / (m1 + e * m2) if slip else 0.0)
    load_length = LOAD_SPRING[1] + (LOAD_MASS * GRAVITY - LOAD_TENSION) / LOAD_STIFFNESS
    return {
        "capstan_ratio": ratio,
        "capstan_accel": accel,
        "capstan_slips": slips,
        "hang_z": HANG_ANCHOR[2] - HANG_REST_LENGTH - HANG_MASS * GRAVITY * HANG_COMPLIANCE,
        "hang_tension": HANG_MASS * GRAVITY,
        "load_length": load_length,
        "load_tension": LOAD_MASS * GRAVITY,
        "load_z": LOAD_ANCHOR[2] - load_length,
    }


def build_world():
    """One demo world: the capstan machine, the hanging load and the transmission load.

    Returns:
        A ``ModelBuilder`` holding one world's bodies, static roller shape and tendons.
    """
    from .builder import ModelBuilder
    from .tendon import TendonGuide, TendonGuideType
    from .transmission import TendonSite

    b = ModelBuilder()
    cx, _, cz = ROLLER_CENTER

    def weight(x, z, mass, radius, label):
        body = b.add_body(xform=(x, 0.0, z, 0.0, 0.0, 0.0, 1.0), label=label)
        b.add_shape_sphere(body, radius=radius, mass=mass, has_collision=False, label=f"{label}_shape")
        return body

    heavy = weight(cx - ROLLER_RADIUS, CAPSTAN_START_Z, CAPSTAN_HEAVY, 0.08, "capstan_heavy")
    light = weight(cx + ROLLER_RADIUS, CAPSTAN_START_Z, CAPSTAN_LIGHT, 0.06, "capstan_light")
    hang = weight(HANG_ANCHOR[0], HANG_ANCHOR[2] - HANG_REST_LENGTH, HANG_MASS, 0.08, "hanging_load")
    load = weight(LOAD_ANCHOR[0], LOAD_ANCHOR[2] - LOAD_START_LENGTH, LOAD_MASS, 0.06, "suspended_load")
    assert (heavy, light, hang, load) == (_HEAVY, _LIGHT, _HANG, _LOAD)
    # The roller as a picture only: a static cylinder along +Y (rotate the cylinder's Z axis onto Y).
    s = math.sqrt(0.5)
    b.add_shape_cylinder(
        -1,
        xform=(*ROLLER_CENTER, -s, 0.0, 0.0, s),
        radius=ROLLER_RADIUS,
        half_height=0.04,
        has_collision=False,
        label="capstan_roller",
    )
    b.add_tendon(
        [
            TendonGuide(body=heavy),
            # Axis +Y, cable over the top from -X to +X: counter-clockwise about +Y, orientation +1.
            TendonGuide(
                body=-1,
                guide_type=TendonGuideType.ROLLER,
                offset=ROLLER_CENTER,
                axis=(0.0, 1.0, 0.0),
                radius=ROLLER_RADIUS,
                orientation=1,
            ),
            TendonGuide(body=light),
        ],
        label="capstan_cable",
    )
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=HANG_ANCHOR),
            TendonGuide(body=hang, compliance=HANG_COMPLIANCE, damping=HANG_DAMPING, rest_length=HANG_REST_LENGTH),
        ],
        label="hanging_cable",
    )
    b.add_spatial_tendon(
        [TendonSite(body=-1, offset=LOAD_ANCHOR), TendonSite(body=load)],
        label="suspension",
        spring_lower=LOAD_SPRING[0],
        spring_upper=LOAD_SPRING[1],
        stiffness=LOAD_STIFFNESS,
        damping=LOAD_DAMPING,
        upper_limit=LOAD_UPPER_LIMIT,
        drive_force=-LOAD_TENSION,
        width=0.01,
    )
    return b


def _viewer():
    """``newton_tendon.viewer`` when it can be imported, else ``None`` and the reason."""
    try:
        from . import viewer
    except ImportError as exc:  # the viewer is optional for the demo's numbers
        return None, f"newton_tendon.viewer unavailable ({exc})"
    return viewer, None


def run_demo(
    worlds: int = 8,
    seconds: float = 1.5,
    *,
    solver: str = "xpbd",
    device=None,
    out_dir="newton_tendon_out",
    usd: bool = True,
    pictures: bool = True,
    progress: Callable[[int], Callable[[int], None]] | None = None,
) -> dict:
    """Build, step and check the demo scene; write its outputs into ``out_dir``.

    Args:
        worlds: number of replicated worlds (>= 1); world ``w`` gets roller friction
            ``CAPSTAN_MUS[w % 4]``.
        seconds: simulated time [s] (> 0), rounded to whole frames of 1/60 s.
        solver: "xpbd" (``SolverXPBD``) or "vbd" (``SolverVBD``; the scene is graph-coloured first).
        device: Warp device name or ``None`` for Warp's default.
        out_dir: output folder; it receives ``summary.json``, ``history.npz`` and, when the viewer
            is available, ``demo.usda`` (``usd``), ``capstan.png``, ``loads.png`` and
            ``snapshot.png`` (``pictures``).
        usd: write the USD recording (one time sample per frame).
        pictures: write the plots (need matplotlib) and a snapshot of up to four worlds at
            ``SNAPSHOT_TIME``.
        progress: optional factory ``progress(total) -> advance``; ``advance(n)`` is called after
            each frame with ``n = 1`` and once more with ``n = 0`` at the end.

    Returns:
        The summary dictionary that is also written as ``summary.json``: run facts, measured and
        expected numbers per capstan friction, hanging and transmission load, world-steps per
        second, ``checks`` (name -> passed) and ``files`` (what was written).

    Raises:
        ValueError: a bad ``worlds``, ``seconds`` or ``solver``.
    """
    if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or worlds < 1:
        raise ValueError(f"run_demo: worlds must be an int >= 1, got {worlds!r}")
    if not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0.0:
        raise ValueError(f"run_demo: seconds must be a finite number > 0, got {seconds!r}")
    if solver not in ("xpbd", "vbd"):
        raise ValueError(f"run_demo: solver must be 'xpbd' or 'vbd', got {solver!r}")
    from .builder import ModelBuilder
    from .model import ModelFlags
    from .solvers import SolverVBD, SolverXPBD

    worlds = int(worlds)
    frames = max(1, int(round(seconds * FPS)))
    frame_dt = 1.0 / FPS
    dt = frame_dt / SUBSTEPS

    t_build = time.perf_counter()
    scene = ModelBuilder()
    scene.replicate(build_world(), worlds, spacing=SPACING)
    if solver == "vbd":
        scene.color()
    model = scene.finalize(device)
    solver_class = SolverVBD if solver == "vbd" else SolverXPBD
    sim = solver_class(model, iterations=ITERATIONS)
    # Per-world roller friction: edit the model in place and tell the solver.
    roller = np.arange(worlds) * _GUIDES_PER_WORLD + _ROLLER_GUIDE
    mu = np.array([CAPSTAN_MUS[w % len(CAPSTAN_MUS)] for w in range(worlds)])
    guide_mu = model.tendon_guide_mu.numpy()
    guide_mu[roller] = mu
    model.tendon_guide_mu.assign(guide_mu)
    sim.notify_model_changed(ModelFlags.TENDON_PROPERTIES)
    state_0, state_1, control = model.state(), model.state(), model.control()
    build_s = time.perf_counter() - t_build

    viewer, viewer_note = _viewer() if (usd or pictures) else (None, None)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    recorder = None
    if viewer is not None and usd:
        recorder = viewer.RecorderUSD(model, str(out / "demo.usda"), fps=float(FPS), solver=sim)

    def simulate():
        nonlocal state_0, state_1
        for _ in range(SUBSTEPS):
            sim.step(state_0, state_1, control, None, dt)
            state_0, state_1 = state_1, state_0

    t_cold = time.perf_counter()
    simulate()  # the first frame (the solver compiled or loaded the step's kernels when it was built)
    wp.synchronize_device(model.device)
    cold_s = time.perf_counter() - t_cold
    # The later frames replay a graph: a CUDA graph, or Warp's CPU capture, which runs the recorded
    # launches without Python (the same bits as launching them directly).
    with wp.ScopedCapture(device=model.device) as capture:
        simulate()
    graph = capture.graph

    history: dict[str, list] = {}

    def record(t):
        q = state_0.body_q.numpy().astype(np.float64).reshape(worlds, _BODIES_PER_WORLD, 7)
        qd = state_0.body_qd.numpy().astype(np.float64).reshape(worlds, _BODIES_PER_WORLD, 6)
        seg = sim.tendon_segment_material_tension.numpy().astype(np.float64).reshape(worlds, _SEGMENTS_PER_WORLD)
        row = {
            "t": t,
            "capstan_tension_heavy": seg[:, 0],
            "capstan_tension_light": seg[:, 1],
            "capstan_wrap": sim.tendon_guide_wrap.numpy().astype(np.float64)[roller],
            "capstan_heavy_vz": qd[:, _HEAVY, 2],
            "capstan_heavy_z": q[:, _HEAVY, 2],
            "capstan_light_z": q[:, _LIGHT, 2],
            "hang_z": q[:, _HANG, 2],
            "hang_tension": seg[:, 2],
            "load_z": q[:, _LOAD, 2],
            "load_length": sim.transmission_length.numpy().astype(np.float64),
            "load_tension": sim.transmission_tension.numpy().astype(np.float64),
        }
        for key, value in row.items():
            history.setdefault(key, []).append(value)
        if recorder is not None:
            recorder.record(state_0, time=t)
        if draw and len(history["t"]) == snapshot_frame:
            # Up to four worlds side by side: one per capstan friction.
            shown = list(range(min(worlds, len(CAPSTAN_MUS))))
            width, height = SNAPSHOT_SIZE
            camera = _snapshot_camera(model, shown, width, height)
            viewer.render_png(
                model, state_0, out / "snapshot.png", solver=sim, world=shown, camera=camera, width=width, height=height
            )
            files.append("snapshot.png")

    draw = viewer is not None and pictures
    snapshot_frame = min(frames, max(1, int(round(SNAPSHOT_TIME * FPS))))
    files = ["summary.json", "history.npz"]
    advance = progress(frames) if progress is not None else None
    record(frame_dt)
    if advance is not None:
        advance(1)
    run_s = 0.0  # stepping only; recording and drawing are not timed
    for frame in range(1, frames):
        t_step = time.perf_counter()
        wp.capture_launch(graph)
        wp.synchronize_device(model.device)
        run_s += time.perf_counter() - t_step
        record((frame + 1) * frame_dt)
        if advance is not None:
            advance(1)
    if advance is not None:
        advance(0)
    if recorder is not None:
        recorder.close()

    h = {k: np.asarray(v, dtype=np.float64) for k, v in history.items()}
    summary = _summarize(h, mu, worlds, model, solver, frames, dt, build_s, cold_s, run_s)
    summary["graph"] = True
    np.savez_compressed(out / "history.npz", mu=mu, **h)
    if recorder is not None:
        files.append("demo.usda")
    notes = [viewer_note + ": no USD recording or pictures"] if viewer_note else []
    if draw:
        try:
            _plots(viewer, h, mu, out, files)
        except ImportError as exc:  # plots need matplotlib, an optional extra
            notes.append(f"plots skipped: {exc}")
    summary["files"] = files
    if notes:
        summary["notes"] = notes
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def _summarize(h, mu, worlds, model, solver, frames, dt, build_s, cold_s, run_s) -> dict:
    """Measured versus expected numbers, per capstan friction and for the two loads."""
    exp = expected_values()
    t = h["t"]
    top = ROLLER_CENTER[2] - CAPSTAN_CLEARANCE
    clear = np.all(h["capstan_heavy_z"] < top, axis=1) & np.all(h["capstan_light_z"] < top, axis=1)
    # Only the frames before the first weight came near its roller: from there on a weight rides at its
    # end stop (docs/cables.md), and the Atwood law no longer applies even if it later drops back.
    clear = np.logical_and.accumulate(clear)
    capstan = []
    for i, m in enumerate(CAPSTAN_MUS[: min(worlds, len(CAPSTAN_MUS))]):
        cols = np.flatnonzero(mu == m)
        row = {
            "mu": m,
            "worlds": int(cols.size),
            "slips_expected": bool(exp["capstan_slips"][i]),
            "ratio_expected": exp["capstan_ratio"][i],
            "accel_expected": exp["capstan_accel"][i],
        }
        frames_clear = np.flatnonzero(clear)
        if frames_clear.size >= 2:
            last = frames_clear[-1]
            t1 = h["capstan_tension_heavy"][last, cols]
            t2 = h["capstan_tension_light"][last, cols]
            wrap = h["capstan_wrap"][last, cols]
            # Fit the heavy weight's velocity over the clear frames: a = -dv/dt.
            vz = h["capstan_heavy_vz"][frames_clear][:, cols]
            accel = -np.polyfit(t[frames_clear], vz, 1)[0]
            row.update(
                frame=int(last),
                tension_heavy=float(t1[0]),
                tension_light=float(t2[0]),
                wrap=float(wrap[0]),
                bound=float(math.exp(m * wrap[0])),
                ratio=float(t1[0] / max(t2[0], 1.0e-12)),
                accel=float(accel[0]),
                ratio_spread=float(np.ptp(t1 / np.maximum(t2, 1.0e-12))),
            )
        capstan.append(row)
    last = -1
    summary = {
        "device": str(model.device),
        "solver": solver,
        "worlds": worlds,
        "bodies": model.body_count,
        "routed_tendons": model.tendon_count,
        "transmission_tendons": model.transmission_count,
        "frames": frames,
        "steps": frames * SUBSTEPS,
        "dt_s": dt,
        "sim_time_s": float(t[-1]),
        "build_s": build_s,
        "cold_start_s": cold_s,
        "run_s": run_s,
        "world_steps_per_s": worlds * (frames - 1) * SUBSTEPS / run_s if frames > 1 and run_s > 0 else None,
        "capstan": capstan,
        "hanging": {
            "z": float(h["hang_z"][last, 0]),
            "z_expected": exp["hang_z"],
            "z_spread": float(np.ptp(h["hang_z"][last])),
            "tension": float(h["hang_tension"][last, 0]),
            "tension_expected": exp["hang_tension"],
        },
        "transmission": {
            "length": float(h["load_length"][last, 0]),
            "length_expected": exp["load_length"],
            "tension": float(h["load_tension"][last, 0]),
            "tension_expected": exp["load_tension"],
            "z": float(h["load_z"][last, 0]),
            "z_expected": exp["load_z"],
        },
        "finite": bool(all(np.all(np.isfinite(v)) for v in h.values())),
    }
    summary["checks"] = _checks(summary)
    return summary


def _checks(s: dict) -> dict:
    """Pass/fail of each comparison; a comparison that needs a longer run is left out.

    Tolerances: the capstan ratio within 3 % (float32 tensions carry ~0.3 % noise and the sweeps stop
    at a 1e-3 relative change); the loads within 1 mm / 1 % once the run is long enough for their
    ring-down to decay (1 s: the hanging span's decays like exp(-6.25 t), the transmission
    load's like exp(-15 t)).
    """
    checks = {"finite": s["finite"]}
    for row in s["capstan"]:
        if "ratio" not in row:
            continue
        key = f"capstan mu={row['mu']:g}"
        if row["slips_expected"]:
            checks[key] = abs(row["ratio"] / row["bound"] - 1.0) < 0.03 and abs(row["wrap"] - math.pi) < 0.01
        else:
            checks[key] = abs(row["accel"]) < 0.05 and row["ratio"] <= row["bound"]
    if s["sim_time_s"] >= 1.0 - 1.0e-9:
        hang, load = s["hanging"], s["transmission"]
        checks["hanging load"] = abs(hang["z"] - hang["z_expected"]) < 1.0e-3 and (
            abs(hang["tension"] / hang["tension_expected"] - 1.0) < 0.01
        )
        checks["transmission load"] = abs(load["length"] - load["length_expected"]) < 1.0e-3 and (
            abs(load["tension"] / load["tension_expected"] - 1.0) < 0.01
        )
    return checks


def _snapshot_camera(model, shown: list[int], width: int, height: int, fov: float = 30.0) -> dict:
    """A camera in front of (-Y) and slightly above the worlds ``shown``, framing their three machines."""
    q0 = model.body_q.numpy().astype(np.float64)
    local = np.array([HANG_ANCHOR[0], HANG_ANCHOR[1], HANG_ANCHOR[2] - HANG_REST_LENGTH])
    offsets = np.array([q0[w * _BODIES_PER_WORLD + _HANG, :3] - local for w in shown])
    # Each world spans x in [-0.2, 2.2] and z in [0.8, 3.7] of its own frame.
    lo = offsets.min(axis=0) + np.array([-0.2, 0.0, 0.8])
    hi = offsets.max(axis=0) + np.array([2.2, 0.0, 3.7])
    target = 0.5 * (lo + hi)
    half_v = math.radians(0.5 * fov)
    half_h = math.atan(math.tan(half_v) * width / height)
    dist = 1.15 * max(0.5 * (hi[0] - lo[0]) / math.tan(half_h), 0.5 * (hi[2] - lo[2]) / math.tan(half_v))
    direction = np.array([0.2, -1.0, 0.25])
    eye = target + dist * direction / np.linalg.norm(direction)
    return {"eye": tuple(eye), "target": tuple(target), "fov": fov}


def _plots(viewer, h, mu, out: Path, files: list[str]) -> None:
    """Plot the capstan ratios and the loads over time into ``capstan.png`` and ``loads.png``.

    Capstan samples after a weight came within ``CAPSTAN_CLEARANCE`` of its roller are left out.
    """
    t = h["t"]
    top = ROLLER_CENTER[2] - CAPSTAN_CLEARANCE
    series = {}
    for m in CAPSTAN_MUS:
        cols = np.flatnonzero(mu == m)
        if cols.size:
            w = cols[0]
            clear = (h["capstan_heavy_z"][:, w] < top) & (h["capstan_light_z"][:, w] < top)
            clear = np.logical_and.accumulate(clear)
            ratio = h["capstan_tension_heavy"][:, w] / np.maximum(h["capstan_tension_light"][:, w], 1.0e-12)
            bound = np.exp(m * h["capstan_wrap"][:, w])
            series[f"T1/T2, mu={m:g}"] = np.where(clear, ratio, np.nan)
            series[f"exp(mu theta), mu={m:g}"] = np.where(clear, bound, np.nan)
    viewer.plot_history(
        t, series, out / "capstan.png", title="Capstan: tension ratio and its bound", ylabel="ratio [-]"
    )
    files.append("capstan.png")
    viewer.plot_history(
        t,
        {
            "hanging load z [m]": h["hang_z"][:, 0],
            "transmission length [m]": h["load_length"][:, 0],
            "transmission load z [m]": h["load_z"][:, 0],
        },
        out / "loads.png",
        title="Hanging load (routed cable) and transmission load",
        ylabel="[m]",
    )
    files.append("loads.png")


def format_summary(s: dict) -> str:
    """The demo's result as aligned text tables: capstan rows, the two loads and the run facts."""
    lines = [
        f"{s['worlds']} worlds x ({s['bodies'] // s['worlds']} bodies, "
        f"{s['routed_tendons'] // s['worlds']} routed cables, {s['transmission_tendons'] // s['worlds']} "
        f"transmission tendon), solver {s['solver']}, device {s['device']}, "
        f"{s['steps']} steps of {s['dt_s'] * 1e3:.3f} ms ({s['sim_time_s']:.2f} s)",
        "",
        "Capstan (routed cable over a fixed roller, 2 kg vs 1 kg; law T1/T2 <= exp(mu theta)):",
        f"  {'mu':>4} {'worlds':>6} {'T1 [N]':>8} {'T2 [N]':>8} {'T1/T2':>7} {'exp(mu th)':>10} "
        f"{'a [m/s^2]':>10} {'a expected':>10}  state",
    ]
    for r in s["capstan"]:
        state = "slips" if r["slips_expected"] else "sticks"
        if "ratio" in r:
            lines.append(
                f"  {r['mu']:>4.1f} {r['worlds']:>6} {r['tension_heavy']:>8.3f} {r['tension_light']:>8.3f} "
                f"{r['ratio']:>7.3f} {r['bound']:>10.3f} {r['accel']:>10.3f} {r['accel_expected']:>10.3f}  {state}"
            )
        else:
            lines.append(f"  {r['mu']:>4.1f} {r['worlds']:>6}  (run too short to measure)")
    hang, load = s["hanging"], s["transmission"]
    lines += [
        "",
        "Loads at the end:                    measured   expected",
        f"  hanging load z (routed cable) [m]   {hang['z']:>8.4f}   {hang['z_expected']:>8.4f}",
        f"  hanging cable tension [N]           {hang['tension']:>8.3f}   {hang['tension_expected']:>8.3f}",
        f"  transmission length [m]             {load['length']:>8.4f}   {load['length_expected']:>8.4f}",
        f"  transmission tension [N]            {load['tension']:>8.3f}   {load['tension_expected']:>8.3f}",
        f"  transmission load z [m]             {load['z']:>8.4f}   {load['z_expected']:>8.4f}",
        "",
    ]
    rate = s["world_steps_per_s"]
    lines.append(
        f"Throughput: {rate:,.0f} world-steps/s" if rate else "Throughput: (run too short to time)",
    )
    lines[-1] += f" (build incl. kernel compile {s['build_s']:.2f} s, first frame {s['cold_start_s']:.2f} s)"
    checks = s["checks"]
    failed = [k for k, ok in checks.items() if not ok]
    lines.append(
        f"Checks: {len(checks) - len(failed)}/{len(checks)} passed"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return "\n".join(lines)
