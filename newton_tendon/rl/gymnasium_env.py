"""gymnasium's vector API over a :class:`~newton_tendon.rl.VecEnv`.

:class:`GymnasiumVectorEnv` is a ``gymnasium.vector.VectorEnv``: the batched spaces and their
``single_*`` counterparts, ``reset(seed=, options=) -> (obs, info)``,
``step(actions) -> (obs, reward, terminated, truncated, info)`` and ``metadata["autoreset_mode"]``,
so code written for gymnasium's vector environments (its wrappers, training loops, libraries that
accept a ``VectorEnv``) drives every world of a ``VecEnv`` at once. With the env's torch backend
the returned tensors are views of the env's device buffers (no copy, on the simulation device,
overwritten by the next call); with the NumPy backend they are host copies.

gymnasium is an optional dependency (the ``rl`` extra); this module imports it, ``newton_tendon.rl``
does not.
"""

from __future__ import annotations

import numpy as np

try:
    import gymnasium
    from gymnasium.vector import AutoresetMode
    from gymnasium.vector.utils import batch_space
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "newton_tendon.rl.gymnasium_env needs gymnasium, an optional dependency; install it with "
        "`pip install gymnasium` (or the package's `rl` extra)"
    ) from e

from ._env import VecEnv

__all__ = ["GymnasiumVectorEnv"]

_MODES = {
    "same_step": AutoresetMode.SAME_STEP,
    "next_step": AutoresetMode.NEXT_STEP,
    "disabled": AutoresetMode.DISABLED,
}


class GymnasiumVectorEnv(gymnasium.vector.VectorEnv):
    """A :class:`~newton_tendon.rl.VecEnv` as a ``gymnasium.vector.VectorEnv`` (one sub-environment
    per world).

    - Spaces: observations are unbounded float32 boxes of the env's ``obs_dim``; actions are float32
      boxes in [-1, 1] of its ``action_dim`` (the example envs clamp to that range).
    - Autoreset follows the env's ``autoreset_mode`` and is stated in ``metadata["autoreset_mode"]``
      as gymnasium defines it. With SAME_STEP (the env's default), the step that ends an episode
      returns the new episode's first observation and, in ``info``, the last one as
      ``info["final_obs"]`` [num_envs, obs_dim] with the mask ``info["_final_obs"]`` (the rows of
      other worlds hold older values). NEXT_STEP restarts a finished world on the following step
      (its action is ignored, reward 0, no flags). DISABLED leaves restarts to ``reset``.
    - ``reset(seed=s)`` restarts the env's per-world random numbers (the same seed replays the same
      episodes) and seeds the action space. ``options={"reset_mask": mask}`` resets only the selected
      worlds (gymnasium's convention for DISABLED autoreset) and still returns every world's
      observation.
    - ``info["episode_step"]`` is each world's step counter; per-world episode lengths are set on the
      env (``env.set_episode_lengths``).

    Args:
        env: the environment; its ``world_count`` is ``num_envs``.
    """

    def __init__(self, env: VecEnv):
        if not isinstance(env, VecEnv):
            raise TypeError(f"GymnasiumVectorEnv: env must be a newton_tendon.rl.VecEnv, got {type(env).__name__}")
        self.env = env
        """The wrapped environment."""
        self.num_envs = env.world_count
        self.metadata = {"autoreset_mode": _MODES[env.autoreset_mode]}
        self.single_observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (env.obs_dim,), np.float32)
        self.single_action_space = gymnasium.spaces.Box(-1.0, 1.0, (env.action_dim,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.device = env.device
        """The simulation device (Warp); the torch tensors live on its torch counterpart."""

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        mask = None
        if options:
            unknown = set(options) - {"reset_mask"}
            if unknown:
                raise ValueError(f"GymnasiumVectorEnv.reset: unknown options {sorted(unknown)}; accepted: reset_mask")
            mask = options.get("reset_mask")
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
            self.action_space.seed(seed)
            self.single_action_space.seed(seed)
        obs = self.env.reset(mask, seed=seed)
        return obs, {"episode_step": self.env.output("episode_step")}

    def step(self, actions):
        obs, reward, done = self.env.step(actions)
        info = {"episode_step": self.env.output("episode_step")}
        if self.env.autoreset_mode == "same_step":
            info["final_obs"] = self.env.output("final_obs")
            info["_final_obs"] = done
        return obs, reward, self.env.output("terminated"), self.env.output("truncated"), info

    def close_extras(self, **kwargs):
        """Nothing to release: the env's buffers go with it."""

    def __repr__(self):
        return f"GymnasiumVectorEnv({self.env.name}, num_envs={self.num_envs}, solver={self.env.solver_name})"
