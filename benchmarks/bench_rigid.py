"""World-steps per second of a small rigid scene (4-link pendulum chain + ground contact).

Usage:
    python benchmarks/bench_rigid.py --device cpu --worlds 1,64,1024
    python benchmarks/bench_rigid.py --device cuda:0 --worlds 1,64,1024,16384

On CUDA the step (collision + solver) is captured once in a graph and replayed. Prints a table:
worlds, finalize time, cold start (first step including kernel compilation or cache load),
steady world-steps per second.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import warp as wp

import newton_tendon as nt
from newton_tendon.demo import pendulum_chain
from newton_tendon.solvers import SolverXPBD

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find _common
from _common import time_two_steps  # noqa: E402


def build(worlds: int) -> nt.ModelBuilder:
    scene = nt.ModelBuilder()
    scene.add_ground_plane()
    scene.replicate(pendulum_chain(links=4), worlds)
    return scene


def bench(worlds: int, device: str, steps: int, iterations: int, dt: float) -> dict:
    t0 = time.perf_counter()
    model = build(worlds).finalize(device)
    t_finalize = time.perf_counter() - t0
    solver = SolverXPBD(model, iterations=iterations)
    pipeline = nt.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    control = model.control()

    def two_steps():
        pipeline.collide(s0, contacts)
        solver.step(s0, s1, control, contacts, dt)
        pipeline.collide(s1, contacts)
        solver.step(s1, s0, control, contacts, dt)

    timing = time_two_steps(two_steps, device, steps, worlds)
    return {
        "worlds": worlds,
        "bodies": model.body_count,
        "finalize_s": t_finalize,
        **timing,
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--worlds", default="1,64,1024")
    p.add_argument("--steps", type=int, default=200, help="timed steps per world count")
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--dt", type=float, default=1.0 / 240.0)
    args = p.parse_args(argv)
    wp.config.quiet = True
    wp.init()
    counts = [int(w) for w in args.worlds.split(",") if w]
    print(
        f"bench_rigid: 4-link chain + ground, XPBD {args.iterations} iterations, dt {args.dt:.5f} s, "
        f"device {args.device}"
    )
    print(f"{'worlds':>8} {'bodies':>8} {'finalize s':>11} {'cold s':>8} {'world-steps/s':>15} {'graph':>6}")
    rows = []
    for w in counts:
        r = bench(w, args.device, args.steps, args.iterations, args.dt)
        rows.append(r)
        print(
            f"{r['worlds']:>8} {r['bodies']:>8} {r['finalize_s']:>11.2f} {r['cold_s']:>8.2f} "
            f"{r['world_steps_per_s']:>15,.0f} {str(r['graph']):>6}"
        )
    return rows


if __name__ == "__main__":
    main()
