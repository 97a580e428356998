"""World-steps per second of transmission-tendon scenes, XPBD and VBD.

Scenes (one world each, replicated):

* ``suspended``: the spec's quickstart, a 1 kg load under a slack spring with a limit and a tension
  command (one spatial tendon, two sites);
* ``pulley``: a route over a world cylinder wrap plus a divisor-2 branch, a stiff spring at its
  reference length (one spatial tendon with a wrap and a pulley, two loads);
* ``coupled``: two hanging cables coupled by ``l1 - l1_ref = 2 x + 0.1 x^2`` (two spatial tendons,
  one coupling);
* ``fixed``: a fixed tendon ``0.5 q1 - 0.25 q2`` driving two revolute joints.

Usage:
    python benchmarks/bench_transmission.py --device cpu --worlds 1,64,1024
    python benchmarks/bench_transmission.py --device cuda:0 --worlds 1,1024,16384,65536

On CUDA the step is captured once in a graph and replayed. Prints a table: scene, worlds, solver,
finalize time (with colouring for VBD), cold start, steady world-steps per second.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import warp as wp

import newton_tendon as nt
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find _common
from _common import add_solver_argument, make_solver, selected_solvers, time_two_steps  # noqa: E402


def _load(b, pos, mass=1.0):
    return b.add_body(xform=(*pos, 0.0, 0.0, 0.0, 1.0), mass=mass, inertia=np.eye(3) * 1.0e-3)


def suspended() -> nt.ModelBuilder:
    b = nt.ModelBuilder()
    load = _load(b, (0.0, 0.0, 0.8))
    b.add_spatial_tendon(
        [TendonSite(body=-1, offset=(0.0, 0.0, 2.0)), TendonSite(body=load)],
        spring_lower=0.0,
        spring_upper=1.0,
        stiffness=500.0,
        damping=8.0,
        upper_limit=1.5,
        drive_force=-2.0,
    )
    return b


def pulley() -> nt.ModelBuilder:
    b = nt.ModelBuilder()
    a = _load(b, (-0.5, 0.0, 0.0), 2.0)
    c = _load(b, (1.5, 0.0, 0.0), 1.0)
    b.add_spatial_tendon(
        [
            TendonSite(body=a),
            TendonWrap(kind="cylinder", offset=(0.0, 0.0, 1.0), axis=(0.0, 1.0, 0.0), radius=0.5),
            TendonSite(body=-1, offset=(0.6, 0.0, 1.2)),
            TendonPulley(divisor=2.0),
            TendonSite(body=-1, offset=(1.5, 0.0, 1.0)),
            TendonSite(body=c),
        ],
        stiffness=2000.0,  # rest interval = the reference length captured at finalize
        damping=20.0,
    )
    return b


def coupled() -> nt.ModelBuilder:
    b = nt.ModelBuilder()
    l1 = _load(b, (0.0, 0.0, 2.0))
    l2 = _load(b, (1.0, 0.0, 2.0), 5.0)
    t1 = b.add_spatial_tendon([TendonSite(body=-1, offset=(0.0, 0.0, 3.0)), TendonSite(body=l1)])
    t2 = b.add_spatial_tendon(
        [TendonSite(body=-1, offset=(1.0, 0.0, 3.0)), TendonSite(body=l2)], stiffness=200.0, damping=60.0
    )
    b.add_tendon_coupling(t1, t2, [0.0, 2.0, 0.1])
    return b


def fixed() -> nt.ModelBuilder:
    b = nt.ModelBuilder(gravity=0.0)
    joints = []
    for x in (0.0, 2.0):
        link = b.add_link(xform=(x, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.diag([0.1, 0.1, 0.2]))
        joints.append(b.add_joint_revolute(-1, link, parent_xform=(x, 0, 0, 0, 0, 0, 1), axis=(0.0, 0.0, 1.0)))
    b.add_fixed_tendon(joints, [0.5, -0.25], stiffness=50.0, damping=1.0, drive_force=2.0)
    return b


SCENES = {"suspended": suspended, "pulley": pulley, "coupled": coupled, "fixed": fixed}


def bench(scene: str, worlds: int, device: str, steps: int, iterations: int, dt: float, solver: str) -> dict:
    builder = nt.ModelBuilder()
    builder.replicate(SCENES[scene](), worlds)
    model, sim, t_finalize = make_solver(nt, builder, solver, device, iterations)
    s0, s1 = model.state(), model.state()
    control = model.control()

    def two_steps():
        sim.step(s0, s1, control, None, dt)
        sim.step(s1, s0, control, None, dt)

    timing = time_two_steps(two_steps, device, steps, worlds)
    return {
        "scene": scene,
        "worlds": worlds,
        "solver": solver,
        "finalize_s": t_finalize,
        **timing,
        "finite": bool(np.all(np.isfinite(s0.body_q.numpy()))),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", help="Warp device, e.g. cpu or cuda:0 (default: %(default)s)")
    p.add_argument("--worlds", default="1,64,256", help="comma-separated world counts (default: %(default)s)")
    p.add_argument("--scenes", default=",".join(SCENES), help="comma-separated scenes (default: %(default)s)")
    add_solver_argument(p)
    p.add_argument("--steps", type=int, default=200, help="timed steps per row (default: %(default)s)")
    p.add_argument("--iterations", type=int, default=8, help="solver iterations per step (default: %(default)s)")
    p.add_argument("--dt", type=float, default=1.0e-3, help="step [s] (default: %(default)s)")
    args = p.parse_args(argv)
    solvers = selected_solvers(args.solver)
    scenes = [s for s in args.scenes.split(",") if s]
    for s in scenes:
        if s not in SCENES:
            p.error(f"unknown scene {s!r}; choose from {', '.join(SCENES)}")
    wp.config.quiet = True  # Warp < 1.19
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # Warp >= 1.19
    wp.init()
    counts = [int(w) for w in args.worlds.split(",") if w]
    print(
        f"bench_transmission: {', '.join(s.upper() for s in solvers)}, {args.iterations} iterations, "
        f"dt {args.dt:g} s, {args.steps} steps, device {args.device}"
    )
    header = f"{'scene':<10} {'worlds':>8} {'solver':>6} {'finalize s':>11} {'cold s':>8} {'world-steps/s':>15}"
    print(header + f" {'graph':>6}")
    rows = []
    for scene in scenes:
        for w in counts:
            for solver in solvers:
                r = bench(scene, w, args.device, args.steps, args.iterations, args.dt, solver)
                rows.append(r)
                print(
                    f"{scene:<10} {w:>8} {solver:>6} {r['finalize_s']:>11.2f} {r['cold_s']:>8.2f} "
                    f"{r['world_steps_per_s']:>15,.0f} {str(r['graph']):>6}"
                    + ("" if r["finite"] else "  (non-finite state!)"),
                    flush=True,
                )
    return rows


if __name__ == "__main__":
    main()
