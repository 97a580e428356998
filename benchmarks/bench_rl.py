"""Cost of the RL layer: env-steps/s of the full environment loop against the raw solver steps it wraps.

For each example environment, solver and world count, one environment is built and timed two ways
on the same model, alternating in chunks (best chunk kept, as in ``_common.time_two_steps``):

- **raw**: ``substeps`` calls of ``solver.step`` per env step, captured in a graph and replayed, so
  the rate is the physics alone in env steps per second (world-steps of ``frame_dt``);
- **env**: ``env.step(actions)`` with a torch action tensor (copied in), i.e. actions into
  ``Control``, the substeps, observations, rewards, the episode clock and the automatic reset of
  finished worlds, all in one replayed graph, returning torch views;
- **gym**: the same through ``GymnasiumVectorEnv.step`` (terminated/truncated/final_obs views).

The overhead column is ``raw / env - 1``: what the RL layer adds on top of the physics.

Run:
    python benchmarks/bench_rl.py                              # finger and payload, both solvers, 1k and 16k worlds
    python benchmarks/bench_rl.py --worlds 1024 --steps 50 --env finger --solver xpbd
    python benchmarks/bench_rl.py --device cuda:0 --worlds 1024,16384,65536
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import warp as wp

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import add_solver_argument, selected_solvers  # noqa: E402

ENVS = {"finger": "newton_tendon.examples.env_finger", "payload": "newton_tendon.examples.env_payload"}


def _best_rate(fn, device, steps: int, worlds: int, repeats: int) -> float:
    """Env-steps/s (world count times calls per second) of the fastest of ``repeats`` chunks."""
    chunk = max(1, steps // repeats)
    best = float("inf")
    for _ in range(repeats):
        wp.synchronize_device(device)
        t0 = time.perf_counter()
        for _ in range(chunk):
            fn()
        wp.synchronize_device(device)
        best = min(best, time.perf_counter() - t0)
    return worlds * chunk / best


def measure(env_name: str, solver: str, worlds: int, steps: int, device=None, repeats: int = 3) -> dict:
    """Raw-solver, env and gymnasium rates [env-steps/s] of one environment configuration."""
    import torch

    module = importlib.import_module(ENVS[env_name])
    env = module.Env(worlds, device, solver=solver, backend="torch")
    gym = env.to_gymnasium()
    dev = env.device
    tdev = env._torch_device()
    actions = torch.rand((worlds, env.action_dim), generator=torch.Generator(device=tdev).manual_seed(0), device=tdev)
    actions = actions * 2.0 - 1.0
    env.reset()

    def raw_step():
        for _ in range(env.substeps):
            env.solver.step(env.state_0, env.state_1, env.control, None, env.sim_dt)
            env.state_0, env.state_1 = env.state_1, env.state_0

    raw_step()
    with wp.ScopedCapture(device=dev) as cap:
        raw_step()
    graph = cap.graph

    def raw():
        wp.capture_launch(graph)

    def full():
        env.step(actions)

    def gymnasium():
        gym.step(actions)

    for fn in (raw, full, gymnasium):  # warm-up
        fn()
    rates = {"raw": 0.0, "env": 0.0, "gym": 0.0}
    for _ in range(2):  # alternate, keep each one's best
        for key, fn in (("raw", raw), ("env", full), ("gym", gymnasium)):
            rates[key] = max(rates[key], _best_rate(fn, dev, steps, worlds, repeats))
    return {
        "env": env_name,
        "solver": solver,
        "worlds": worlds,
        "device": str(dev),
        "raw": rates["raw"],
        "env_rate": rates["env"],
        "gym": rates["gym"],
        "overhead_env": rates["raw"] / rates["env"] - 1.0,
        "overhead_gym": rates["raw"] / rates["gym"] - 1.0,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", default="finger,payload", help="comma-separated: finger, payload")
    parser.add_argument("--worlds", default="1024,16384", help="comma-separated world counts")
    parser.add_argument("--steps", type=int, default=60, help="env steps per timed run (split in chunks)")
    parser.add_argument("--device", default=None)
    add_solver_argument(parser)
    args = parser.parse_args(argv)
    wp.config.quiet = True
    rows = []
    head = f"{'env':8} {'solver':6} {'worlds':>7} {'raw env-steps/s':>16} {'env.step':>10} {'gym.step':>10}"
    print(f"{head} {'overhead env':>13} {'gym':>7}")
    for env_name in args.env.split(","):
        for solver in selected_solvers(args.solver):
            for worlds in (int(w) for w in args.worlds.split(",")):
                r = measure(env_name, solver, worlds, args.steps, args.device)
                rows.append(r)
                print(
                    f"{env_name:8} {solver:6} {worlds:7d} {r['raw']:16,.0f} {r['env_rate']:10,.0f} {r['gym']:10,.0f} "
                    f"{100 * r['overhead_env']:12.1f}% {100 * r['overhead_gym']:6.1f}%",
                    flush=True,
                )
    return rows


if __name__ == "__main__":
    main()
