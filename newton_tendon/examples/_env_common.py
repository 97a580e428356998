"""What the batched RL example environments share: the launches of their ``evaluate`` and
``reset_worlds`` kernels, flat entity indices per world, and the random-policy command line of their
``main``."""

from __future__ import annotations

import argparse
import math

import numpy as np
import warp as wp

from newton_tendon.rl import world_entities


def entity_index(env, domain: str, column: int | None = None) -> wp.array:
    """Flat model index of each world's entities of ``domain`` as an int32 device array on the env's
    device: [world_count, n] for all of them, or [world_count] for the template entity ``column``."""
    table = world_entities(env.model, domain)
    if column is not None:
        table = table[:, column]
    return wp.array(table.astype(np.int32), dtype=wp.int32, device=env.device)


def launch_evaluate(env, kernel, inputs: list):
    """Launch an ``evaluate`` kernel over the worlds: its arguments are ``inputs``, then the outputs
    ``reward`` and ``terminated`` (the kernel signature order of docs/kernel_conventions.md)."""
    wp.launch(kernel, dim=env.world_count, inputs=inputs, outputs=[env.reward, env.terminated], device=env.device)


def launch_reset(env, kernel, mask: wp.array, inputs: list, outputs: list):
    """Launch a ``reset_worlds`` kernel over the worlds: its arguments are ``mask``, the seed buffer,
    the global index of the first world and ``episode_count`` (what ``rl.episode_rng`` takes), then
    ``inputs`` and ``outputs``."""
    wp.launch(
        kernel,
        dim=env.world_count,
        inputs=[mask, env.seed_buffer, env.world_offset, env.episode_count, *inputs],
        outputs=outputs,
        device=env.device,
    )


def run_random_policy(env_class, description: str, argv=None, **env_kwargs):
    """Parse ``--worlds --steps --device --solver``, run uniform random actions for ``--steps`` env
    steps after a reset, print the mean reward per step and return the environment. ``env_class``
    may be a dict of variants by name (first: the default), chosen with ``--action``."""
    variants = env_class if isinstance(env_class, dict) else {None: env_class}
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--device", default=None)
    parser.add_argument("--solver", choices=("xpbd", "vbd"), default="xpbd")
    if len(variants) > 1:
        parser.add_argument("--action", choices=tuple(variants), default=next(iter(variants)))
    args = parser.parse_args(argv)
    wp.config.quiet = True
    env_class = variants[getattr(args, "action", None)]
    env = env_class(args.worlds, args.device, solver=args.solver, **env_kwargs)
    rng = np.random.default_rng(0)
    env.reset()
    total = 0.0
    for _ in range(args.steps):
        _, reward, _ = env.step(env.random_actions(rng))
        total += float(np.asarray(reward.cpu() if hasattr(reward, "cpu") else reward).mean())
    print(f"{env.name}: {args.worlds} worlds x {args.steps} steps, mean reward per step {total / args.steps:.4f}")
    assert math.isfinite(total)
    return env
