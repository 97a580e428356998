"""Scaffolding shared by the cable examples: frame timing, solver and states, graph, CLI.

An example subclasses :class:`CableExample`, builds one world in :meth:`CableExample.build_world`
and fills in the hooks it needs; the base class replicates the world, colours the bodies when the
solver is VBD, finalizes the model, creates the solver (``SolverXPBD`` or ``SolverVBD``), the two
states and the control, captures :meth:`CableExample.simulate` in a graph (CUDA, or Warp's CPU capture), and
advances frames in :meth:`CableExample.step`.
"""

from __future__ import annotations

import argparse

import numpy as np
import warp as wp

SOLVERS = ("xpbd", "vbd")
"""Solvers an example can run with: ``SolverXPBD`` ("xpbd") or ``SolverVBD`` ("vbd")."""


class CableExample:
    """Base of the cable examples: ``world_count`` copies of one world stepped by XPBD or VBD.

    Args:
        device: Warp device (default: Warp's default device).
        world_count: number of copies (``worlds_per_copy * world_count`` worlds).
        solver: "xpbd" (``SolverXPBD``) or "vbd" (``SolverVBD``; the builder is coloured for it).
    """

    name = "cable_example"
    """Example name, used in error messages."""
    fps = 60
    """Frames per second: ``step`` advances 1/fps s."""
    substeps = 4
    """Solver steps per frame (an even number, so a captured graph ends on state_0)."""
    iterations = 8
    """Solver iterations per solver step (XPBD constraint iterations or VBD colour sweeps)."""
    worlds_per_copy = 1
    """Worlds that ``build_world`` is replicated into per unit of ``world_count``."""
    spacing = (1.0, 1.0, 0.0)
    """Spacing [m] of the replicated worlds on their grid."""

    def __init__(self, device=None, world_count: int = 1, solver: str = "xpbd"):
        import newton_tendon as nt

        if solver not in SOLVERS:
            raise ValueError(f"{self.name}: unknown solver {solver!r}; choose from {', '.join(SOLVERS)}")
        self.solver_name = solver
        """Name of the solver that steps the worlds ("xpbd" or "vbd")."""
        self.frame_dt = 1.0 / self.fps
        self.sim_dt = self.frame_dt / self.substeps
        self.sim_time = 0.0
        self.world_count = self.worlds_per_copy * world_count

        world = self.build_world(nt)
        scene = nt.ModelBuilder()
        scene.replicate(world, self.world_count, spacing=self.spacing)
        if solver == "vbd":
            scene.color()  # VBD updates the bodies of one colour in parallel
        self.model = scene.finalize(device)
        self.device = self.model.device

        solver_class = nt.solvers.SolverVBD if solver == "vbd" else nt.solvers.SolverXPBD
        self.solver = solver_class(self.model, iterations=self.iterations, **self.solver_kwargs())
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        self.control = self.model.control()
        self.setup(nt)
        # One frame as a graph on every device: a CUDA graph, or Warp's CPU capture, which replays
        # the launches without Python (at a few worlds, most of a frame's time on the CPU).
        with wp.ScopedCapture(device=self.device) as capture:
            self.simulate()
        self.graph = capture.graph

    # Hooks -------------------------------------------------------------------------------------

    def build_world(self, nt) -> object:
        """Build and return one world (an ``nt.ModelBuilder``); it is replicated ``world_count`` times.
        Every example defines it: this base has no scene of its own."""
        raise NotImplementedError(
            f"{type(self).__name__} ({self.name}) must define build_world(nt): the base class has no scene"
        )

    def solver_kwargs(self) -> dict:
        """Extra keyword arguments for the solver (besides ``iterations``); ``self.solver_name`` tells which."""
        return {}

    def setup(self, nt) -> None:
        """Per-example work after the solver, states and control exist and before graph capture."""

    def before_frame(self) -> None:
        """Per-example work before each frame (e.g. prescribing kinematic velocities)."""

    def after_frame(self) -> None:
        """Per-example work after each frame (e.g. recording history)."""

    # Shared ------------------------------------------------------------------------------------

    def per_world(self, world, local_body: int) -> np.ndarray:
        """Index of body ``local_body`` of the complete one-world builder ``world`` in each replicated world."""
        return np.arange(self.world_count) * world.body_count + local_body

    def simulate(self):
        """One frame: ``substeps`` solver steps (an even number, so a captured graph ends on state_0)."""
        for _ in range(self.substeps):
            self.solver.step(self.state_0, self.state_1, self.control, None, self.sim_dt)
            self.state_0, self.state_1 = self.state_1, self.state_0

    def step(self):
        """Advance one frame (1/fps s), with the example's work before and after it."""
        self.before_frame()
        wp.capture_launch(self.graph)
        self.sim_time += self.frame_dt
        self.after_frame()


def parse_example_args(argv, description: str, frames: int, worlds_help: str = "number of replicated worlds"):
    """Parse an example's ``--frames``, ``--device``, ``--worlds`` and ``--solver`` and quiet Warp's start-up log."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--frames", type=int, default=frames, help="frames of 1/60 s to simulate (default: %(default)s)"
    )
    parser.add_argument("--device", default=None, help="Warp device, e.g. cpu or cuda:0 (default: Warp's default)")
    parser.add_argument("--worlds", type=int, default=1, help=f"{worlds_help} (default: %(default)s)")
    parser.add_argument(
        "--solver",
        choices=SOLVERS,
        default="xpbd",
        help="tendon solver: xpbd (SolverXPBD) or vbd (SolverVBD, bodies graph-coloured) (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    wp.config.quiet = True  # Warp < 1.19
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # Warp >= 1.19
    return args
