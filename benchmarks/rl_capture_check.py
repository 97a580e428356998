"""Graph capture of a full RL step: reset(mask) + control write + collide + step, replayed vs direct.

Each world holds a 4-link pendulum chain over a ground plane (contacts), an Atwood machine on a
routed cable over a roller, and a load on a transmission tendon with a drive. One *RL step* is:

1. ``solver.reset(state, world_mask=mask)``: worlds whose mask entry is 1 go back to their initial state;
2. a control write: per-world actions (hinge torques [N m], tendon drive force [N]) copied from a
   device array into ``Control.joint_f`` and ``Control.transmission_drive_force``;
3. two physics steps, each ``CollisionPipeline.collide`` then ``solver.step`` (even, so the state
   ends in the buffer it started in).

The same sequence of masks and actions (changed on the host between steps, by ``assign`` into the
device arrays, never inside the graph) is run twice from the same initial state: once calling the
functions directly, once replaying a graph captured from one RL step. The check passes when the
final body poses and velocities agree bitwise (Warp's kernels are deterministic: no atomics in the
solver), and the worlds masked at the last RL step are back near their initial poses (two physics
steps away) while the others have moved on.

Usage:
    python benchmarks/rl_capture_check.py --device cuda:0 --worlds 256 --out gpu_out
    python benchmarks/rl_capture_check.py --device cpu --worlds 16        # Warp captures on the CPU too
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import warp as wp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find the scenes

import bench_cables  # noqa: E402
from scenes import chain  # noqa: E402


def build(worlds: int, device: str, solver: str):
    from bench_transmission import suspended

    import newton_tendon as nt

    world = nt.ModelBuilder()
    world.add_builder(chain(nt))
    world.add_builder(bench_cables.pulley(nt), xform=wp.transform(wp.vec3(0.0, 3.0, 0.0), wp.quat_identity()))
    world.add_builder(suspended(), xform=wp.transform(wp.vec3(0.0, -3.0, 0.0), wp.quat_identity()))
    scene = nt.ModelBuilder()
    scene.add_ground_plane()
    scene.replicate(world, worlds)
    if solver == "vbd":
        scene.color()
    model = scene.finalize(device=device)
    cls = {"xpbd": nt.solvers.SolverXPBD, "vbd": nt.solvers.SolverVBD}[solver]
    return nt, model, cls(model, iterations=8)


def run(device: str, worlds: int, solver_name: str, rl_steps: int, dt: float, seed: int) -> dict:
    nt, model, solver = build(worlds, device, solver_name)
    pipeline = nt.CollisionPipeline(model)
    contacts = pipeline.contacts()
    control = model.control()
    dofs_per_world = model.joint_dof_count // worlds
    tx_per_world = model.transmission_count // worlds
    mask = wp.zeros(worlds, dtype=wp.int32, device=device)
    joint_actions = wp.zeros(model.joint_dof_count, dtype=float, device=device)
    tx_actions = wp.zeros(model.transmission_count, dtype=float, device=device)

    rng = np.random.default_rng(seed)
    masks = (rng.random((rl_steps, worlds)) < 0.1).astype(np.int32)
    masks[-1, :] = 0
    masks[-1, ::3] = 1  # every third world is reset at the last RL step
    joint_seq = rng.uniform(-2.0, 2.0, (rl_steps, model.joint_dof_count)).astype(np.float32)
    tx_seq = rng.uniform(-5.0, 0.0, (rl_steps, model.transmission_count)).astype(np.float32)

    def make_rl_step(s0, s1):
        def rl_step():
            solver.reset(s0, world_mask=mask)
            wp.copy(control.joint_f, joint_actions)
            if model.transmission_count:
                wp.copy(control.transmission_drive_force, tx_actions)
            for a, b in ((s0, s1), (s1, s0)):
                pipeline.collide(a, contacts)
                solver.step(a, b, control, contacts, dt)

        return rl_step

    def upload(k: int):
        mask.assign(masks[k])
        joint_actions.assign(joint_seq[k])
        tx_actions.assign(tx_seq[k])

    results = {}
    for mode in ("direct", "graph"):
        s0, s1 = model.state(), model.state()
        solver.reset(s0)
        rl_step = make_rl_step(s0, s1)
        graph = None
        if mode == "graph":
            upload(0)
            with wp.ScopedCapture(device=device) as capture:
                rl_step()
            graph = capture.graph
        for k in range(rl_steps):
            upload(k)
            if graph is None:
                rl_step()
            else:
                wp.capture_launch(graph)
        wp.synchronize_device(device)
        results[mode] = (s0.body_q.numpy().copy(), s0.body_qd.numpy().copy())

    q_d, qd_d = results["direct"]
    q_g, qd_g = results["graph"]
    bodies = model.body_count // worlds
    q0 = model.body_q.numpy().reshape(worlds, bodies, 7)
    qw = q_d.reshape(worlds, bodies, 7)
    reset = masks[-1] == 1
    # A world reset at the last RL step is two physics steps (1/120 s) from its initial pose; the
    # others, last reset about ten RL steps earlier on average, have fallen much further.
    reset_dist = float(np.max(np.abs(qw[reset] - q0[reset])))
    kept_dist = float(np.median(np.max(np.abs(qw[~reset] - q0[~reset]), axis=(1, 2))))
    out = {
        "device": device,
        "solver": solver_name,
        "worlds": worlds,
        "rl_steps": rl_steps,
        "bodies_per_world": bodies,
        "dofs_per_world": dofs_per_world,
        "transmissions_per_world": tx_per_world,
        "max_abs_diff_body_q": float(np.max(np.abs(q_g - q_d))),
        "max_abs_diff_body_qd": float(np.max(np.abs(qd_g - qd_d))),
        "bitwise_equal": bool(np.array_equal(q_g, q_d) and np.array_equal(qd_g, qd_d)),
        "finite": bool(np.all(np.isfinite(q_d)) and np.all(np.isfinite(q_g))),
        "reset_worlds_max_distance_from_initial": reset_dist,
        "other_worlds_median_distance_from_initial": kept_dist,
    }
    out["ok"] = out["bitwise_equal"] and out["finite"] and reset_dist < 0.5 * kept_dist
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--worlds", type=int, default=64)
    p.add_argument("--solver", choices=("xpbd", "vbd", "both"), default="both")
    p.add_argument("--rl-steps", type=int, default=40, help="RL steps (two physics steps each)")
    p.add_argument("--dt", type=float, default=1.0 / 240.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="folder for rl_capture.json")
    args = p.parse_args(argv)
    wp.config.quiet = True
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)
    wp.init()
    results = []
    for solver in ("xpbd", "vbd") if args.solver == "both" else (args.solver,):
        r = run(args.device, args.worlds, solver, args.rl_steps, args.dt, args.seed)
        results.append(r)
        print(
            f"rl_capture {r['device']} {solver}: {r['worlds']} worlds x {r['rl_steps']} RL steps, "
            f"graph vs direct max |dq| {r['max_abs_diff_body_q']:.1e}, |dqd| {r['max_abs_diff_body_qd']:.1e}, "
            f"bitwise {r['bitwise_equal']}; reset worlds within {r['reset_worlds_max_distance_from_initial']:.3f} of "
            f"initial, others moved {r['other_worlds_median_distance_from_initial']:.3f}: "
            f"{'OK' if r['ok'] else 'FAILED'}",
            flush=True,
        )
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "rl_capture.json"), "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
