"""Shared by the benchmark scripts: the ``--solver`` choice, solver construction and the timing loop
(cold start, CUDA graph capture, steady replay)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import warp as wp

SOLVERS = ("xpbd", "vbd")
"""Solvers a benchmark can time: ``SolverXPBD`` ("xpbd") and ``SolverVBD`` ("vbd")."""
WARMUP_PAIRS = 3
"""Untimed step pairs between the cold call and the timed loop."""
SOLVER_CLASSES = {"xpbd": "SolverXPBD", "vbd": "SolverVBD"}
"""Class name of each solver in ``api.solvers`` (the same in ``newton_tendon`` and ``newton``)."""


def add_solver_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--solver xpbd|vbd|both`` (default both) to a benchmark's parser."""
    parser.add_argument(
        "--solver",
        choices=(*SOLVERS, "both"),
        default="both",
        help="solver to time: xpbd (SolverXPBD), vbd (SolverVBD, bodies graph-coloured) or both, "
        "one table row each (default: %(default)s)",
    )


def selected_solvers(choice: str) -> list[str]:
    """Solver names for a ``--solver`` value: ``["xpbd", "vbd"]`` for "both"."""
    return list(SOLVERS) if choice == "both" else [choice]


def make_solver(api, builder, solver: str, device: str, iterations: int):
    """Finalize ``builder`` on ``device`` and construct ``api.solvers.Solver<solver>`` on it.

    VBD solves the bodies of one graph colour in parallel, so for "vbd" the builder is coloured
    (``builder.color()``) first; it must be complete. Works with ``newton_tendon`` and ``newton``.

    Returns:
        ``(model, solver, finalize_s)``: the model, the solver and the colouring + finalize time [s].
    """
    t0 = time.perf_counter()
    if solver == "vbd":
        builder.color()
    model = builder.finalize(device=device)
    t_finalize = time.perf_counter() - t0
    return model, getattr(api.solvers, SOLVER_CLASSES[solver])(model, iterations=iterations), t_finalize


def time_two_steps(two_steps: Callable[[], None], device: str, steps: int, worlds: int) -> dict:
    """Time ``two_steps`` (two solver steps that end on the starting state) for about ``steps`` steps.

    The first call is timed on its own (kernel compilation or cache load). On CUDA ``two_steps`` is
    then captured once in a graph and replayed; elsewhere it is called directly. ``WARMUP_PAIRS``
    untimed pairs run before the timed ones.

    Returns:
        ``cold_s`` (first call [s]), ``world_steps_per_s`` (steady rate over ``worlds`` worlds) and
        ``graph`` (whether a CUDA graph was replayed).
    """
    t1 = time.perf_counter()
    two_steps()
    wp.synchronize_device(device)
    t_cold = time.perf_counter() - t1

    graph = None
    if wp.get_device(device).is_cuda:
        with wp.ScopedCapture(device=device) as capture:
            two_steps()
        graph = capture.graph
    pairs = max(1, steps // 2)
    # A few untimed pairs first: the first calls after a model is built (or after a peer engine ran)
    # still touch fresh memory, which made single rows read up to 3x slow on CPU.
    for _ in range(WARMUP_PAIRS):
        if graph is not None:
            wp.capture_launch(graph)
        else:
            two_steps()
    wp.synchronize_device(device)
    t2 = time.perf_counter()
    for _ in range(pairs):
        if graph is not None:
            wp.capture_launch(graph)
        else:
            two_steps()
    wp.synchronize_device(device)
    wall = time.perf_counter() - t2
    return {"cold_s": t_cold, "world_steps_per_s": worlds * 2 * pairs / wall, "graph": graph is not None}
