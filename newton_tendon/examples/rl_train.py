"""Train a policy on a tendon-driven task with rsl-rl's PPO, in one process or across processes, and
replay it into a USD recording.

Tasks (``--task``):

- ``finger``: the two-link finger of ``env_finger`` driven by three pull-only tendons (fixed
  transmission tendons with activation-filtered tension drives) reaches a random fingertip goal.
- ``payload``: the winch-and-roller hoist of ``env_payload`` with capstan friction on the roller
  (``env_payload.HoistEnv``) brings a swinging payload to a random target height and holds it still.

Each run evaluates the random policy (uniform actions in [-1, 1]) and the trained policy (its mean
action) on the same evaluation episodes, prints both with the task's threshold, and writes, under
``--out``: the rsl-rl checkpoint ``<task>_policy.pt``, the learning curve ``<task>_curve.png`` and
its numbers ``<task>_curve.json`` (mean return of the training episodes finished in each iteration
against environment steps, with the random baseline).

One process (2 CPU cores: finger about 40 s, payload about 35 s)::

    python -m newton_tendon.examples.rl_train --task finger

Two processes on the CPU, each simulating half of the worlds (gloo backend; docs/rl.md for GPUs and
several nodes)::

    torchrun --standalone --nproc_per_node=2 -m newton_tendon.examples.rl_train --task finger

Replay a trained policy for one episode into a USD file::

    python -m newton_tendon.examples.rl_train --task finger --replay rl_out/finger_policy.pt --usd finger.usda

Needs the ``rl`` extra (torch, rsl-rl-lib; matplotlib for the plot).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import warp as wp

from newton_tendon.examples import env_finger, env_payload


@dataclass(frozen=True)
class Task:
    """A training task: its environment, the training settings, and the return the trained policy must reach."""

    env_class: type
    worlds: int
    """Total worlds (split across processes)."""
    iterations: int
    """PPO iterations (each ``steps_per_env`` env steps in every world)."""
    threshold: float
    """Mean evaluation return [reward units per episode] that counts as learned; the random policy stays below it."""
    ppo: dict = field(default_factory=dict)
    """Overrides of :func:`~newton_tendon.rl.rsl_rl_env.ppo_config`."""


TASKS = {
    # Return = -sum over 120 steps (2 s) of (tip distance [m] + 1e-3 |action|^2). The random policy
    # scores about -57 (the tip 0.47 m from the goal on average); -12 is a mean distance of 10 cm,
    # approach included. Trained 100 iterations: about -7.
    "finger": Task(env_finger.Env, worlds=256, iterations=100, threshold=-12.0),
    # Return = -sum over 150 steps (5 s) of (|height error| [m] + 0.1 |horizontal speed| [m/s]). The
    # random policy scores about -41; -10 is a mean error of 6.7 cm, approach included. Trained 100
    # iterations: about -5.
    "payload": Task(env_payload.HoistEnv, worlds=256, iterations=100, threshold=-10.0),
}

EVAL_SEED = 12345
"""Seed of the evaluation episodes (the same for the random and the trained policy)."""


def _distributed():
    """(rank, world size) under torchrun, else (0, 1)."""
    return int(os.getenv("RANK", "0")), int(os.getenv("WORLD_SIZE", "1"))


def evaluate(env, act, seed: int = EVAL_SEED, observe=None) -> np.ndarray:
    """Return of one episode per world [world_count], from a reset with ``seed``: ``act(obs) -> actions``
    (torch tensors). Rewards after a world's first episode ends are not counted. ``observe(state)``,
    if given, sees the state after the reset and after every step (e.g. a recorder)."""
    import torch

    obs = env.reset(seed=seed)
    if observe is not None:
        observe(env.state_0)
    total = torch.zeros(env.world_count, dtype=torch.float64, device=obs.device)
    running = torch.ones(env.world_count, dtype=torch.bool, device=obs.device)
    for _ in range(int(env.max_episode_steps.numpy().max())):
        with torch.inference_mode():
            actions = act(obs)
        obs, reward, done = env.step(actions)
        total += reward.double() * running
        running &= ~done
        if observe is not None:
            observe(env.state_0)
        if not bool(running.any()):
            break
    return total.cpu().numpy()


def random_policy(env, seed: int, total_worlds: int | None = None):
    """Uniform actions in [-1, 1] from a seeded torch generator on the env's device. Each step draws
    the actions of all ``total_worlds`` worlds of the run and keeps this env's shard, so a process
    holding worlds [offset, offset + n) acts as a single process holding them all does."""
    import torch

    gen = torch.Generator(device=env._torch_device()).manual_seed(seed)
    total = env.world_count if total_worlds is None else int(total_worlds)
    lo, hi = env.world_offset, env.world_offset + env.world_count

    def act(obs):
        return (torch.rand((total, env.action_dim), generator=gen, device=obs.device) * 2.0 - 1.0)[lo:hi]

    return act


def trained_policy(runner):
    """The runner's policy, its mean action (deterministic)."""
    from tensordict import TensorDict

    policy = runner.get_inference_policy()

    def act(obs):
        return policy(TensorDict({"policy": obs}, batch_size=[obs.shape[0]]))

    return act


def _global_mean(values, torch, distributed: bool, device):
    """Mean of per-world values over every process's worlds."""
    t = torch.tensor([float(np.sum(values)), float(len(values))], dtype=torch.float64, device=device)
    if distributed:
        torch.distributed.all_reduce(t)
    return float(t[0] / t[1])


def make_runner(task: Task, env, device: str, verbose: bool = True):
    """rsl-rl's adapter and runner for ``env`` with the task's PPO settings (``verbose=False``
    silences rsl-rl's printout of the models)."""
    from newton_tendon.rl.rsl_rl_env import OnPolicyRunner, RslRlVecEnv, ppo_config

    renv = RslRlVecEnv(env)
    with contextlib.redirect_stdout(sys.stdout if verbose else io.StringIO()):
        runner = OnPolicyRunner(renv, ppo_config(**task.ppo), log_dir=None, device=device)
    return renv, runner


def train(
    task_name: str,
    *,
    worlds: int | None = None,
    iterations: int | None = None,
    solver: str = "xpbd",
    seed: int = 0,
    device=None,
    out: str | None = "rl_out",
    plot: bool = True,
    verbose: bool = True,
) -> dict:
    """Train ``task_name`` and return the results (baseline and trained evaluation returns, the
    curve, wall times). Under torchrun each process simulates its shard of the worlds; rank 0
    writes the outputs and every rank returns the same global figures."""
    import torch

    task = TASKS[task_name]
    rank, world_size = _distributed()
    distributed = world_size > 1
    worlds = task.worlds if worlds is None else int(worlds)
    iterations = task.iterations if iterations is None else int(iterations)
    if worlds % world_size:
        raise ValueError(f"rl_train: --worlds ({worlds}) must be a multiple of the process count ({world_size})")
    shard = worlds // world_size
    wp.config.quiet = True
    torch.manual_seed(seed * 1000 + rank)  # action noise per process; the parameters come from rank 0
    t_start = time.perf_counter()
    env = task.env_class(shard, device, solver=solver, seed=seed, world_offset=rank * shard, backend="torch")
    torch_device = str(env._torch_device())
    renv, runner = make_runner(task, env, torch_device, verbose)
    t_setup = time.perf_counter() - t_start

    baseline = _global_mean(evaluate(env, random_policy(env, seed, worlds)), torch, distributed, torch_device)
    renv.reset(seed=seed)
    steps_per_iteration = runner.cfg["num_steps_per_env"] * worlds
    renv.stats_every = runner.cfg["num_steps_per_env"]  # one history entry per iteration
    t_train = time.perf_counter()
    with contextlib.redirect_stdout(sys.stdout if verbose else io.StringIO()):
        runner.learn(iterations)
    history = torch.stack(renv.history)  # [iterations, 2]: return sum, episodes finished
    if distributed:
        torch.distributed.all_reduce(history)  # on the device: NCCL reduces only GPU tensors
    history = history.cpu()
    curve = [
        ((it + 1) * steps_per_iteration, float(h[0] / h[1]) if h[1] > 0 else float("nan"))
        for it, h in enumerate(history)
    ]
    if verbose and rank == 0:
        for end in range(10, iterations + 1, 10):
            window = history[end - 10 : end].sum(dim=0)  # the episodes finished in these 10 iterations
            mean = float(window[0] / window[1]) if window[1] > 0 else float("nan")
            steps = curve[end - 1][0]
            print(f"  iterations {end - 9:4d}-{end:4d}: up to {steps:9,d} env steps, training return {mean:9.3f}")
    t_train = time.perf_counter() - t_train
    in_sync = True
    if distributed:  # every process must end with rank 0's parameters, bit for bit
        flat = torch.cat([p.detach().reshape(-1) for p in runner.alg.get_policy().parameters()])
        gathered = [torch.empty_like(flat) for _ in range(world_size)]
        torch.distributed.all_gather(gathered, flat)
        in_sync = all(torch.equal(g, gathered[0]) for g in gathered)
    trained = _global_mean(evaluate(env, trained_policy(runner)), torch, distributed, torch_device)
    result = {
        "task": task_name,
        "solver": solver,
        "worlds": worlds,
        "processes": world_size,
        "iterations": iterations,
        "env_steps": iterations * steps_per_iteration,
        "random_return": baseline,
        "trained_return": trained,
        "threshold": task.threshold,
        "learned": trained >= task.threshold,
        "ranks_in_sync": in_sync,
        "curve": curve,
        "setup_s": t_setup,
        "train_s": t_train,
        "total_s": time.perf_counter() - t_start,
    }
    if rank == 0:
        if verbose:
            print(
                f"{task_name}: random policy {baseline:.2f}, trained policy {trained:.2f} "
                f"(threshold {task.threshold:.1f}: {'reached' if result['learned'] else 'NOT reached'}); "
                f"{result['env_steps']:,} env steps in {t_train:.0f} s of training, {result['total_s']:.0f} s in all"
            )
        if out:
            os.makedirs(out, exist_ok=True)
            path = os.path.join(out, f"{task_name}_policy.pt")
            runner.save(path, infos={"task": task_name, "solver": solver, "obs_dim": env.obs_dim})
            with open(os.path.join(out, f"{task_name}_curve.json"), "w") as f:
                # Iterations in which no episode finished have no return: null, not NaN (strict JSON).
                curve = [[s, r if math.isfinite(r) else None] for s, r in result["curve"]]
                json.dump({**result, "curve": curve}, f, indent=1)
            result["policy_path"] = path
            if plot:
                result["plot_path"] = plot_curve(result, os.path.join(out, f"{task_name}_curve.png"))
            if verbose:
                print(f"wrote {path} and the learning curve in {out}")
    return result


def plot_curve(result: dict, path: str) -> str:
    """Training return against environment steps, with the random and trained evaluation returns."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps, ret = np.array(result["curve"], dtype=float).T
    finished = np.isfinite(ret)  # iterations in which episodes finished
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    ax.plot(steps[finished], ret[finished], "o-", ms=3, label="training episodes (stochastic policy)")
    ax.axhline(result["random_return"], color="grey", ls="--", label=f"random policy {result['random_return']:.1f}")
    ax.axhline(
        result["trained_return"], color="green", ls=":", label=f"trained, mean action {result['trained_return']:.1f}"
    )
    ax.axhline(result["threshold"], color="red", lw=0.8, label=f"threshold {result['threshold']:.1f}")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("episode return")
    ax.set_title(f"{result['task']}: PPO (rsl-rl), {result['worlds']} worlds, {result['solver']}")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def load_policy(task: Task, env, policy_path: str, task_name: str):
    """The mean action of the actor saved in an rsl-rl checkpoint of :func:`train`, for ``env``."""
    import torch
    from rsl_rl.models import MLPModel
    from tensordict import TensorDict

    from newton_tendon.rl.rsl_rl_env import ppo_config

    saved = torch.load(policy_path, weights_only=False, map_location=str(env._torch_device()))
    infos = saved.get("infos") or {}
    if infos.get("task") not in (None, task_name):
        raise ValueError(f"rl_train --replay: {policy_path} holds a {infos['task']!r} policy, not {task_name!r}")
    cfg = ppo_config(**task.ppo)["actor"]
    cfg.pop("class_name")
    obs = TensorDict({"policy": torch.zeros(env.world_count, env.obs_dim)}, batch_size=[env.world_count])
    actor = MLPModel(obs, {"actor": ["policy"]}, "actor", env.action_dim, **cfg).to(env._torch_device())
    actor.load_state_dict(saved["actor_state_dict"])
    actor.eval()

    def act(o):
        return actor(TensorDict({"policy": o}, batch_size=[o.shape[0]]))

    return act


def replay(
    task_name: str, policy_path: str, usd_path: str, *, worlds: int = 4, solver: str = "xpbd", device=None
) -> dict:
    """Load a checkpoint written by :func:`train`, run one evaluation episode in ``worlds`` worlds with
    the policy's mean action and record every frame into ``usd_path``; returns the episode returns."""
    from newton_tendon.viewer import RecorderUSD

    task = TASKS[task_name]
    wp.config.quiet = True
    # No autoreset: the episode's last pose stays to be recorded.
    env = task.env_class(worlds, device, solver=solver, backend="torch", autoreset_mode="disabled")
    act = load_policy(task, env, policy_path, task_name)
    spacing = np.zeros((worlds, 3))
    spacing[:, 1] = 0.6 * np.arange(worlds)  # side by side along Y
    with RecorderUSD(env.model, usd_path, fps=1.0 / env.frame_dt, solver=env.solver, world_offsets=spacing) as rec:
        returns = evaluate(env, act, EVAL_SEED, observe=rec.record)
        frames = rec.frame_count
    print(f"{task_name}: replayed {worlds} worlds, {frames} frames into {usd_path}; returns {np.round(returns, 2)}")
    return {"returns": returns, "frames": frames, "usd_path": usd_path}


def main(argv=None):
    parser = argparse.ArgumentParser(description="Train (or replay) a tendon-driven task with rsl-rl's PPO.")
    parser.add_argument("--task", choices=sorted(TASKS), default="finger")
    parser.add_argument("--worlds", type=int, default=None, help="total worlds (default: the task's)")
    parser.add_argument("--iterations", type=int, default=None, help="PPO iterations (default: the task's)")
    parser.add_argument("--solver", choices=("xpbd", "vbd"), default="xpbd")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--device", default=None, help="Warp device (default: Warp's; under torchrun on GPUs cuda:<LOCAL_RANK>)"
    )
    parser.add_argument("--out", default="rl_out", help="output folder (checkpoint, curve)")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--replay", metavar="CHECKPOINT", help="replay a trained policy instead of training")
    parser.add_argument("--usd", default=None, help="with --replay: USD file to write (default: <out>/<task>.usda)")
    args = parser.parse_args(argv)
    device = args.device
    rank, world_size = _distributed()
    if device is None and world_size > 1 and wp.is_cuda_available():
        device = f"cuda:{int(os.getenv('LOCAL_RANK', '0'))}"  # one process per GPU
    if args.replay:
        usd = args.usd or os.path.join(args.out, f"{args.task}.usda")
        os.makedirs(os.path.dirname(os.path.abspath(usd)), exist_ok=True)
        return replay(args.task, args.replay, usd, solver=args.solver, device=device)
    result = train(
        args.task,
        worlds=args.worlds,
        iterations=args.iterations,
        solver=args.solver,
        seed=args.seed,
        device=device,
        out=args.out,
        plot=not args.no_plot,
    )
    if world_size > 1:
        import torch

        torch.distributed.destroy_process_group()
    assert math.isfinite(result["trained_return"])
    return result


if __name__ == "__main__":
    main()
