"""Random-policy rollouts of the example environments; prints environment-steps per second.

Each run builds the environment with ``--worlds`` worlds, resets it, takes a few warm-up steps
(kernel compilation and graph capture happen at construction), then times ``--steps``
steps of uniform random actions in [-1, 1]. One environment step is ``frame_dt`` of simulated time
(``substeps`` solver steps) in every world; env-steps/s counts world-steps, i.e.
``worlds * steps / seconds``. Actions are drawn on the device with torch when it is installed (so
the policy costs nearly nothing), with NumPy otherwise.

Run:
    python -m newton_tendon.examples.rollout_random --worlds 64,1024 --steps 200
    python -m newton_tendon.examples.rollout_random --worlds 1,64 --graph on,off     # what graph replay saves on the CPU
    python -m newton_tendon.examples.rollout_random --env payload --device cuda:0 --worlds 1024,16384
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np
import warp as wp

ENVS = {"finger": "newton_tendon.examples.env_finger", "payload": "newton_tendon.examples.env_payload"}
"""Environment names and their modules."""


def rollout(
    env_name: str, worlds: int, steps: int, device=None, solver: str = "xpbd", warmup: int = 3, use_graph: bool = True
) -> dict:
    """Run ``steps`` random steps on ``worlds`` worlds; returns timings and the mean reward."""
    module = importlib.import_module(ENVS[env_name])
    t0 = time.perf_counter()
    env = module.Env(worlds, device, solver=solver, use_graph=use_graph)
    build = time.perf_counter() - t0
    env.reset()
    rng = np.random.default_rng(0)
    if env.backend == "torch":
        import torch

        gen = torch.Generator(device=wp.device_to_torch(env.device)).manual_seed(0)

        def actions():
            return (
                torch.rand((env.world_count, env.action_dim), generator=gen, device=wp.device_to_torch(env.device))
                .mul_(2.0)
                .sub_(1.0)
            )

    else:

        def actions():
            return env.random_actions(rng)

    for _ in range(warmup):
        env.step(actions())
    wp.synchronize_device(env.device)
    total = 0.0
    t1 = time.perf_counter()
    for _ in range(steps):
        _, reward, _ = env.step(actions())
    wp.synchronize_device(env.device)
    seconds = time.perf_counter() - t1
    total = float(np.asarray(reward.cpu() if hasattr(reward, "cpu") else reward).mean())
    return {
        "env": env_name,
        "solver": solver,
        "device": str(env.device),
        "worlds": worlds,
        "steps": steps,
        "graph": env.use_graph,
        "build_s": build,
        "seconds": seconds,
        "env_steps_per_s": worlds * steps / seconds,
        "sim_steps_per_s": worlds * steps * env.substeps / seconds,
        "last_mean_reward": total,
    }


def print_table(rows: list[dict]):
    """One line per run: env, solver, device, worlds, graph, build time, env-steps/s, solver world-steps/s."""
    header = f"{'env':<8} {'solver':<6} {'device':<7} {'worlds':>7} {'graph':>5} {'build s':>8} {'env-steps/s':>13}"
    header += f" {'world-steps/s':>14} {'last reward':>11}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['env']:<8} {r['solver']:<6} {r['device']:<7} {r['worlds']:>7d} {str(r['graph']):>5} "
            f"{r['build_s']:>8.2f} {r['env_steps_per_s']:>13,.0f} {r['sim_steps_per_s']:>14,.0f} "
            f"{r['last_mean_reward']:>11.4f}"
        )


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description="Random-policy rollouts of the RL example environments.")
    parser.add_argument("--env", default="finger,payload", help="comma-separated: finger, payload")
    parser.add_argument("--worlds", default="64", help="comma-separated world counts (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=100, help="timed env steps per run (default: %(default)s)")
    parser.add_argument("--device", default=None, help="Warp device, e.g. cpu or cuda:0")
    parser.add_argument("--solver", default="xpbd", help="comma-separated: xpbd, vbd (default: %(default)s)")
    parser.add_argument(
        "--graph",
        default="on",
        help="comma-separated: on (step and reset replayed as graphs, the env default), off (launched "
        "from Python) (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    wp.config.quiet = True
    envs = [e.strip() for e in args.env.split(",") if e.strip()]
    for e in envs:
        if e not in ENVS:
            parser.error(f"unknown env {e!r}; choose from {', '.join(ENVS)}")
    solvers = [s.strip() for s in args.solver.split(",") if s.strip()]
    for s in solvers:
        if s not in ("xpbd", "vbd"):
            parser.error(f"unknown solver {s!r}; choose from xpbd, vbd")
    graphs = [g.strip() for g in args.graph.split(",") if g.strip()]
    for g in graphs:
        if g not in ("on", "off"):
            parser.error(f"unknown --graph value {g!r}; choose from on, off")
    try:
        worlds = [int(w) for w in args.worlds.split(",")]
    except ValueError:
        parser.error(f"--worlds must be comma-separated integers, got {args.worlds!r}")
    if any(w < 1 for w in worlds) or args.steps < 1:
        parser.error("--worlds and --steps must be >= 1")
    rows = [
        rollout(e, w, args.steps, args.device, s, use_graph=g == "on")
        for e in envs
        for s in solvers
        for w in worlds
        for g in graphs
    ]
    print_table(rows)
    return rows


if __name__ == "__main__":
    main()
