"""Scaffolding shared by the transmission-tendon examples (``newton_tendon/examples/transmission_*.py``).

An example subclasses :class:`TransmissionExample`, builds one world in
:meth:`TransmissionExample.build_world` and fills in the hooks it needs. The base class replicates
the world, finalizes the model, creates the solver (``--solver xpbd|vbd``, XPBD by default), the two
states and the control, captures
:meth:`TransmissionExample.simulate` in a graph (CUDA, or Warp's CPU capture), advances frames in
:meth:`TransmissionExample.step` and records one history row per frame.

Every example prints a small table (:func:`print_table`) and writes ``summary.json`` (the table,
the run and the outcome of ``test_final``) and ``history.npz`` (the per-frame records) into an
output folder (:func:`write_outputs`, ``--out``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import warp as wp

GRAVITY = 9.81
"""Gravitational acceleration [m/s^2] (the builder's default, along -Z)."""


SOLVERS = {"xpbd": "SolverXPBD", "vbd": "SolverVBD"}
"""``--solver`` names and the solver class each selects."""


class TransmissionExample:
    """Base of the transmission examples: ``world_count`` copies of one world stepped by SolverXPBD.

    Args:
        device: Warp device (default: Warp's default device).
        world_count: number of replicated worlds (each gets the same scene; checks cover all).
    """

    name = "transmission_example"
    """Example name (also the default output folder name)."""
    fps = 50
    """Frames per second: ``step`` advances 1/fps s."""
    substeps = 20
    """Solver steps per frame (an even number, so a captured graph ends on state_0)."""
    iterations = 8
    """SolverXPBD iterations per step."""
    spacing = (2.0, 2.0, 0.0)
    """Spacing [m] of the replicated worlds on their grid (world-fixed sites follow it)."""
    min_time = 0.0
    """Simulated time [s] ``test_final`` needs (shorter runs skip it in ``main``)."""

    def __init__(self, device=None, world_count: int = 1, solver: str = "xpbd"):
        import newton_tendon as nt

        if isinstance(world_count, bool) or not isinstance(world_count, int) or world_count < 1:
            raise ValueError(f"{self.name}: world_count must be an int >= 1, got {world_count!r}")
        if solver not in SOLVERS:
            raise ValueError(f"{self.name}: solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
        self.solver_name = solver
        self.frame_dt = 1.0 / self.fps
        self.sim_dt = self.frame_dt / self.substeps
        self.sim_time = 0.0
        self.frame = 0
        self.world_count = world_count

        world = self.build_world(nt)
        self.bodies_per_world = world.body_count
        self.tendons_per_world = world.transmission_count
        self.joints_per_world = world.joint_count
        scene = nt.ModelBuilder()
        scene.replicate(world, world_count, spacing=self.spacing)
        if solver == "vbd":
            scene.color()  # VBD updates the bodies of one colour in parallel
        self.model = scene.finalize(device)
        self.device = self.model.device
        self.solver = getattr(nt.solvers, SOLVERS[solver])(self.model, iterations=self.iterations)
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        self.control = self.model.control()
        self.history: dict[str, list] = {}
        self.setup(nt)
        # One frame as a graph on every device: a CUDA graph, or Warp's CPU capture, which replays
        # the launches without Python (at a few worlds, most of a frame's time on the CPU).
        with wp.ScopedCapture(device=self.device) as capture:
            self.simulate()
        self.graph = capture.graph

    # Hooks -------------------------------------------------------------------------------------

    def build_world(self, nt):
        """Build and return one world (an ``nt.ModelBuilder``); it is replicated ``world_count`` times.
        Every example defines it: this base has no scene of its own."""
        raise NotImplementedError(
            f"{type(self).__name__} ({self.name}) must define build_world(nt): the base class has no scene"
        )

    def setup(self, nt) -> None:
        """Per-example work after the solver, states and control exist and before graph capture."""

    def before_frame(self) -> None:
        """Per-example work before each frame (e.g. switching a command at a phase boundary)."""

    def after_frame(self) -> None:
        """Per-example work after each frame (e.g. recording history with :meth:`record`)."""

    def table(self) -> list[tuple]:
        """Rows ``(quantity, value, expected or None, unit)`` of world 0 for the printed table."""
        return []

    def test_final(self) -> None:
        """Check the example's physics after the run; raises ``AssertionError`` on failure."""

    # Shared ------------------------------------------------------------------------------------

    def per_world(self, local_body: int) -> np.ndarray:
        """Index of body ``local_body`` of the one-world builder in every replicated world."""
        return np.arange(self.world_count) * self.bodies_per_world + local_body

    def simulate(self):
        """One frame: ``substeps`` solver steps (an even number, so a captured graph ends on state_0)."""
        for _ in range(self.substeps):
            self.solver.step(self.state_0, self.state_1, self.control, None, self.sim_dt)
            self.state_0, self.state_1 = self.state_1, self.state_0

    def step(self):
        """Advance one frame (1/fps s), with the example's work before and after it."""
        self.before_frame()
        wp.capture_launch(self.graph)
        self.frame += 1
        self.sim_time = self.frame * self.frame_dt
        self.after_frame()

    def report(self, name: str) -> np.ndarray:
        """Solver output ``transmission_<name>`` as float64, shape [world_count, tendons_per_world]."""
        arr = getattr(self.solver, "transmission_" + name).numpy().astype(np.float64)
        return arr.reshape(self.world_count, self.tendons_per_world)

    def activation(self) -> np.ndarray:
        """Filtered feedforward force a [N] (State), shape [world_count, tendons_per_world]."""
        arr = self.state_0.transmission_activation.numpy().astype(np.float64)
        return arr.reshape(self.world_count, self.tendons_per_world)

    def body_q(self) -> np.ndarray:
        """Body poses, float64, shape [world_count, bodies_per_world, 7]."""
        return self.state_0.body_q.numpy().astype(np.float64).reshape(self.world_count, self.bodies_per_world, 7)

    def body_qd(self) -> np.ndarray:
        """Body velocities (linear, angular), float64, shape [world_count, bodies_per_world, 6]."""
        return self.state_0.body_qd.numpy().astype(np.float64).reshape(self.world_count, self.bodies_per_world, 6)

    def set_control(self, name: str, values) -> None:
        """Write ``control.transmission_<name>`` from per-tendon values of one world (broadcast to all)."""
        arr = getattr(self.control, "transmission_" + name)
        per_world = np.broadcast_to(np.asarray(values, dtype=np.float64), (self.tendons_per_world,))
        arr.assign(np.tile(per_world, self.world_count).astype(arr.numpy().dtype))

    def record(self, **values) -> None:
        """Append one history row (NumPy-convertible values) under the given names."""
        self.history.setdefault("t", []).append(self.sim_time)
        for key, value in values.items():
            self.history.setdefault(key, []).append(np.asarray(value, dtype=np.float64))

    def history_arrays(self) -> dict[str, np.ndarray]:
        """The history rows stacked per name (first axis: frame)."""
        return {k: np.asarray(v, dtype=np.float64) for k, v in self.history.items()}


# Output ----------------------------------------------------------------------------------------


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return f"{x:#.6g}"


def print_table(example: TransmissionExample, frames: int) -> None:
    """Print the run header and ``example.table()`` as aligned columns."""
    print(
        f"{example.name}: {frames} frames, {example.sim_time:.2f} s, {example.world_count} world(s) "
        f"on {example.device}, solver {example.solver_name}, dt {example.sim_dt:.4g} s"
    )
    rows = example.table()
    width = max([len(r[0]) for r in rows] + [8])
    print(f"  {'quantity':<{width}}  {'value':>12}  {'expected':>12}  unit")
    for quantity, value, expected, unit in rows:
        print(f"  {quantity:<{width}}  {_fmt(value):>12}  {_fmt(expected):>12}  {unit}")


def write_outputs(example: TransmissionExample, out_dir, frames: int, wall_s: float, check: str) -> Path:
    """Write ``summary.json`` (run, table rows, check outcome) and ``history.npz`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = {
        "example": example.name,
        "device": str(example.device),
        "solver": example.solver_name,
        "worlds": example.world_count,
        "frames": frames,
        "sim_time_s": example.sim_time,
        "dt_s": example.sim_dt,
        "wall_s": wall_s,
        "rows": [
            {"quantity": q, "value": float(v), "expected": None if e is None else float(e), "unit": u}
            for q, v, e, u in example.table()
        ],
        "test_final": check,
        "finite": bool(np.all(np.isfinite(example.state_0.body_q.numpy()))),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=True))
    np.savez_compressed(out / "history.npz", **example.history_arrays())
    return out


def parse_example_args(argv, description: str, frames: int, fps: int, name: str):
    """Parse ``--frames``, ``--device``, ``--worlds`` and ``--out`` and quiet Warp's start-up log."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--frames", type=int, default=frames, help=f"frames of 1/{fps} s to simulate (default: %(default)s)"
    )
    parser.add_argument("--device", default=None, help="Warp device, e.g. cpu or cuda:0 (default: Warp's default)")
    parser.add_argument("--worlds", type=int, default=1, help="number of replicated worlds (default: %(default)s)")
    parser.add_argument(
        "--solver", choices=tuple(SOLVERS), default="xpbd", help="solver to step with (default: %(default)s)"
    )
    parser.add_argument(
        "--out",
        default=str(Path("demo_output") / name),
        help="folder for summary.json and history.npz (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.frames < 1:
        parser.error("--frames must be >= 1")
    if args.worlds < 1:
        parser.error("--worlds must be >= 1")
    wp.config.quiet = True  # Warp < 1.19
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # Warp >= 1.19
    return args


def run_main(example_class, argv, description: str, frames: int):
    """The shared ``main``: build, run ``--frames`` frames, print the table, run ``test_final`` when
    the run is long enough, write the outputs. Returns the example."""
    args = parse_example_args(argv, description, frames, example_class.fps, example_class.name)
    start = time.perf_counter()
    example = example_class(device=args.device, world_count=args.worlds, solver=args.solver)
    for _ in range(args.frames):
        example.step()
    wp.synchronize_device(example.device)
    wall = time.perf_counter() - start
    print_table(example, args.frames)
    check = f"skipped (needs {example.min_time:g} s)"
    error = None
    if example.sim_time >= example.min_time - 1.0e-9:
        try:
            example.test_final()
            check = "passed"
        except AssertionError as exc:
            check = f"failed: {exc}"
            error = exc
    out = write_outputs(example, args.out, args.frames, wall, check)
    print(f"  test_final {check}")
    print(f"  outputs in {out}/ (summary.json, history.npz), wall time {wall:.2f} s")
    if error is not None:
        raise error
    return example


def close(value: float, expected: float, *, rel: float = 0.0, abs_tol: float = 0.0) -> bool:
    """``|value - expected| <= max(rel |expected|, abs_tol)`` (finite values only)."""
    return math.isfinite(value) and abs(value - expected) <= max(rel * abs(expected), abs_tol)
