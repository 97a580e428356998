"""Ours against newton on the CPU, robust to a shared machine: world-steps per CPU-second.

``run_all.py`` times wall clock, which on a machine shared with other jobs moved our and newton's
rates by up to 2x between runs. This script builds both engines' case of a scene in one process,
captures two steps of each in a graph (Warp records CPU launches and replays them without Python),
and then alternates: 10 replays of ours, 10 of newton's, for ``--rounds`` rounds, timing each chunk
with the thread's CPU time (``time.thread_time``), which does not count time the thread was not
running. The fastest chunk of each engine counts. Both engines see the same machine state over
the run, so their ratio is the number to read.

Usage:
    python benchmarks/cpu_ab.py                      # pulley, pinhole, routing_3d; vbd and xpbd
    python benchmarks/cpu_ab.py --scenes pulley --solver vbd --worlds 1024 --rounds 25

Needs the ``bench`` extra (newton 1.8.0); without it only our rate is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import warp as wp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find the bench modules

import scenes  # noqa: E402
from _common import add_solver_argument, selected_solvers  # noqa: E402

REPLAYS_PER_CHUNK = 10
"""Graph replays (two steps each) per timed chunk."""


def captured_pair(engine: str, scene: str, solver: str, worlds: int):
    """A graph of two steps of ``engine``'s case (``scenes.build_case``), after three warm pairs."""
    case = scenes.build_case(engine, scene, solver, worlds, "cpu")
    for _ in range(3):
        case.step_pair()
    with wp.ScopedCapture(device="cpu") as capture:
        case.step_pair()
    return capture.graph


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", default=",".join(scenes.CABLE_SCENES), help="comma-separated scenes")
    add_solver_argument(p)
    p.add_argument("--worlds", type=int, default=1024)
    p.add_argument("--rounds", type=int, default=15, help="alternating timed chunks per engine")
    p.add_argument("--no-newton", action="store_true", help="time ours only")
    args = p.parse_args(argv)
    if args.worlds < 1 or args.rounds < 1:
        p.error("--worlds and --rounds must be >= 1")
    wp.config.quiet = True
    engines = ["ours"]
    if not args.no_newton:
        try:
            import newton  # noqa: F401

            engines.append("newton")
        except ImportError:
            print("newton is not installed (pip install -e '.[bench]'): our rate only")
    wp.config.quiet = True  # importing newton may have turned Warp's module log back on
    rows = []
    print(f"{'scene':<12} {'solver':>6} {'ours w-s/CPU-s':>15} {'newton w-s/CPU-s':>17} {'ratio':>6}")
    for scene in args.scenes.split(","):
        for solver in selected_solvers(args.solver):
            graphs = {e: captured_pair(e, scene, solver, args.worlds) for e in engines}
            best = dict.fromkeys(engines, float("inf"))
            for _ in range(args.rounds):
                for e, graph in graphs.items():
                    t0 = time.thread_time()
                    for _ in range(REPLAYS_PER_CHUNK):
                        wp.capture_launch(graph)
                    best[e] = min(best[e], (time.thread_time() - t0) / (2 * REPLAYS_PER_CHUNK))
            row = {"scene": scene, "solver": solver, **{e: args.worlds / best[e] for e in engines}}
            newton_rate = f"{row['newton']:>17,.0f}" if "newton" in row else f"{'n/a':>17}"
            ratio = f"{row['ours'] / row['newton']:>6.2f}" if "newton" in row else f"{'':>6}"
            print(f"{scene:<12} {solver:>6} {row['ours']:>15,.0f} {newton_rate} {ratio}")
            rows.append(row)
    return rows


if __name__ == "__main__":
    main()
