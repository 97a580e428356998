"""World-steps per second of a small rigid scene (4-link pendulum chain + ground contact), XPBD and VBD.

Usage:
    python benchmarks/bench_rigid.py --device cpu --worlds 1,64,1024
    python benchmarks/bench_rigid.py --device cpu --solver vbd
    python benchmarks/bench_rigid.py --device cuda:0 --worlds 1,64,1024,16384

``--solver xpbd|vbd|both`` (default both) picks SolverXPBD, SolverVBD (the builder is graph-coloured
with ``builder.color()`` before ``finalize``) or both, one table row per solver and world count.
On CUDA the step (collision + solver) is captured once in a graph and replayed. Prints a table:
worlds, solver, bodies, finalize time (with colouring for VBD), cold start (first step including
kernel compilation or cache load), steady world-steps per second.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import warp as wp

import newton_tendon as nt
from newton_tendon.demo import pendulum_chain

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find _common
from _common import add_solver_argument, make_solver, selected_solvers, time_two_steps  # noqa: E402


def build(worlds: int) -> nt.ModelBuilder:
    scene = nt.ModelBuilder()
    scene.add_ground_plane()
    scene.replicate(pendulum_chain(links=4), worlds)
    return scene


def bench(worlds: int, device: str, steps: int, iterations: int, dt: float, solver: str = "xpbd") -> dict:
    """Time ``steps`` steps (collision + ``solver``, "xpbd" or "vbd") of ``worlds`` chains."""
    model, sim, t_finalize = make_solver(nt, build(worlds), solver, device, iterations)
    pipeline = nt.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    control = model.control()

    def two_steps():
        pipeline.collide(s0, contacts)
        sim.step(s0, s1, control, contacts, dt)
        pipeline.collide(s1, contacts)
        sim.step(s1, s0, control, contacts, dt)

    timing = time_two_steps(two_steps, device, steps, worlds)
    return {
        "worlds": worlds,
        "solver": solver,
        "bodies": model.body_count,
        "finalize_s": t_finalize,
        **timing,
        "finite": bool(np.all(np.isfinite(s0.body_q.numpy()))),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", help="Warp device, e.g. cpu or cuda:0 (default: %(default)s)")
    p.add_argument("--worlds", default="1,64,256", help="comma-separated world counts (default: %(default)s)")
    add_solver_argument(p)
    p.add_argument("--steps", type=int, default=200, help="timed steps per row (default: %(default)s)")
    p.add_argument("--iterations", type=int, default=8, help="solver iterations per step (default: %(default)s)")
    p.add_argument("--dt", type=float, default=1.0 / 240.0, help="step [s] (default: 1/240)")
    args = p.parse_args(argv)
    solvers = selected_solvers(args.solver)
    wp.config.quiet = True  # Warp < 1.19
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # Warp >= 1.19
    wp.init()
    counts = [int(w) for w in args.worlds.split(",") if w]
    print(
        f"bench_rigid: 4-link chain + ground, {', '.join(s.upper() for s in solvers)}, {args.iterations} iterations, "
        f"dt {args.dt:.5f} s, {args.steps} steps, device {args.device}"
    )
    print(
        f"{'worlds':>8} {'solver':>6} {'bodies':>8} {'finalize s':>11} {'cold s':>8} {'world-steps/s':>15} {'graph':>6}"
    )
    rows = []
    for w in counts:
        for solver in solvers:
            r = bench(w, args.device, args.steps, args.iterations, args.dt, solver)
            rows.append(r)
            print(
                f"{r['worlds']:>8} {solver:>6} {r['bodies']:>8} {r['finalize_s']:>11.2f} {r['cold_s']:>8.2f} "
                f"{r['world_steps_per_s']:>15,.0f} {str(r['graph']):>6}"
                + ("" if r["finite"] else "  (non-finite state!)"),
                flush=True,
            )
    return rows


if __name__ == "__main__":
    main()
