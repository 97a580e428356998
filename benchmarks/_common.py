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


def time_two_steps(
    two_steps: Callable[[], None],
    device: str,
    steps: int,
    worlds: int,
    *,
    graph: bool | None = None,
    repeats: int = 3,
) -> dict:
    """Time ``two_steps`` (two solver steps that end on the starting state) for about ``steps`` steps.

    The first call is timed on its own (kernel compilation or cache load). With ``graph`` (default:
    on CUDA only) ``two_steps`` is then captured once in a graph (``wp.ScopedCapture``; on the CPU
    Warp records the launches and replays them without Python) and replayed; otherwise it is called
    directly. ``WARMUP_PAIRS`` untimed pairs run first, then ``repeats`` timed chunks of about
    ``steps / repeats`` steps each; the rate is that of the fastest chunk, which filters out other
    processes sharing the machine (the median is returned as well).

    Returns:
        ``cold_s`` (first call [s]), ``world_steps_per_s`` (fastest chunk, over ``worlds`` worlds),
        ``world_steps_per_s_median``, ``graph`` (whether a graph was replayed) and ``steps_taken``
        (steps run in total, cold call and warm-up included; capturing does not step).
    """
    t1 = time.perf_counter()
    two_steps()
    wp.synchronize_device(device)
    t_cold = time.perf_counter() - t1
    taken = 2

    if graph is None:
        graph = wp.get_device(device).is_cuda
    captured = None
    if graph:
        with wp.ScopedCapture(device=device) as capture:
            two_steps()
        captured = capture.graph

    def run(pairs: int):
        for _ in range(pairs):
            if captured is not None:
                wp.capture_launch(captured)
            else:
                two_steps()

    repeats = max(1, int(repeats))
    pairs = max(1, steps // (2 * repeats))
    # A few untimed pairs first: the first calls after a model is built (or after a peer engine ran)
    # still touch fresh memory, which made single rows read up to 3x slow on CPU.
    run(WARMUP_PAIRS)
    wp.synchronize_device(device)
    taken += 2 * WARMUP_PAIRS
    rates = []
    for _ in range(repeats):
        t2 = time.perf_counter()
        run(pairs)
        wp.synchronize_device(device)
        rates.append(worlds * 2 * pairs / (time.perf_counter() - t2))
        taken += 2 * pairs
    rates.sort()
    return {
        "cold_s": t_cold,
        "world_steps_per_s": rates[-1],
        "world_steps_per_s_median": rates[len(rates) // 2],
        "graph": captured is not None,
        "steps_taken": taken,
    }
