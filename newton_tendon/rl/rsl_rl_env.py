"""Training a :class:`~newton_tendon.rl.VecEnv` with rsl-rl's PPO (``rsl-rl-lib``), in one process or
across processes.

- :class:`RslRlVecEnv` presents the env as ``rsl_rl.env.VecEnv``: observations in a ``TensorDict``
  (group ``"policy"``), rewards, dones and ``extras["time_outs"]`` (the truncated worlds, which PPO
  bootstraps) as torch tensors on the simulation device. It also sums the returns of finished
  episodes on the device (:meth:`RslRlVecEnv.pop_episode_stats` reads them once per iteration).
- :class:`OnPolicyRunner` is rsl-rl's runner with one change: under ``torchrun`` it joins the
  process group with the backend of its device, NCCL on a GPU (rsl-rl's own multi-GPU mode, one
  process per device) and gloo on the CPU, where rsl-rl itself would ask for NCCL. Gradients are
  then averaged across processes by rsl-rl after every backward pass, and the parameters are
  broadcast from rank 0 when learning starts.
- :func:`ppo_config` is a complete rsl-rl training configuration with the settings the examples use.

rsl-rl, tensordict and torch are optional dependencies (the ``rl`` extra); this module imports them,
``newton_tendon.rl`` does not.
"""

from __future__ import annotations

import os

try:
    import torch
    from rsl_rl.env import VecEnv as _RslVecEnv
    from rsl_rl.runners import OnPolicyRunner as _RslOnPolicyRunner
    from tensordict import TensorDict
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "newton_tendon.rl.rsl_rl_env needs torch and rsl-rl-lib, optional dependencies; install them with "
        "`pip install rsl-rl-lib` (or the package's `rl` extra)"
    ) from e

from ._env import VecEnv

__all__ = ["OnPolicyRunner", "RslRlVecEnv", "ppo_config"]


class RslRlVecEnv(_RslVecEnv):
    """A :class:`~newton_tendon.rl.VecEnv` as ``rsl_rl.env.VecEnv``.

    The env must use the torch backend and "same_step" autoreset (what rsl-rl expects: the step that
    ends an episode returns the next episode's first observation). Observations are cloned out of
    the env's buffer, because rsl-rl keeps the observation of step t until it stores the transition
    after step t + 1; the clone costs one [world_count, obs_dim] copy per step.

    Args:
        env: the environment.
        stats_every: with an int n, every n steps the return sum and count of the episodes finished
            in those steps are appended to :attr:`history` (on the device, no host read), e.g. once
            per PPO iteration with n = the runner's ``num_steps_per_env``.
    """

    def __init__(self, env: VecEnv, stats_every: int | None = None):
        if not isinstance(env, VecEnv):
            raise TypeError(f"RslRlVecEnv: env must be a newton_tendon.rl.VecEnv, got {type(env).__name__}")
        if env.backend != "torch":
            raise ValueError(f"RslRlVecEnv: {env.name} must use the torch backend, got backend={env.backend!r}")
        if env.autoreset_mode != "same_step":
            raise ValueError(
                f"RslRlVecEnv: {env.name} must use autoreset_mode='same_step' (rsl-rl's), got {env.autoreset_mode!r}"
            )
        self.env = env
        """The wrapped environment."""
        self.num_envs = env.world_count
        self.num_actions = env.action_dim
        self.max_episode_length = int(env.max_episode_steps.numpy().max())
        self.device = str(env._torch_device())
        self.cfg = {
            "name": env.name,
            "world_count": env.world_count,
            "world_offset": env.world_offset,
            "solver": env.solver_name,
            "frame_dt": env.frame_dt,
            "substeps": env.substeps,
            "iterations": env.iterations,
        }
        self._obs = env.reset()
        self._step_counter = env.output("episode_step")
        self._return = torch.zeros(self.num_envs, device=self.device)
        self._finished_return = torch.zeros((), device=self.device, dtype=torch.float64)
        self._finished_count = torch.zeros((), device=self.device, dtype=torch.int64)
        self.stats_every = stats_every
        self.history: list[torch.Tensor] = []
        """Per ``stats_every`` steps: float64 tensor [2] = (return sum, episode count) of the episodes
        finished in them."""
        self._steps = 0

    @property
    def episode_length_buf(self) -> torch.Tensor:
        """Env steps taken in each world's current episode (a view of the env's int32 counter)."""
        return self._step_counter

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor):
        # rsl-rl assigns random lengths here to spread the first episodes' ends.
        self._step_counter.copy_(value.to(self._step_counter.dtype))

    def _wrap(self, obs: torch.Tensor) -> TensorDict:
        return TensorDict({"policy": obs.clone()}, batch_size=[self.num_envs], device=self.device)

    def get_observations(self) -> TensorDict:
        return self._wrap(self._obs)

    def reset(self, seed: int | None = None) -> TensorDict:
        """Start new episodes in every world (``seed``: see ``VecEnv.reset``)."""
        self._obs = self.env.reset(seed=seed)
        self._return.zero_()
        return self._wrap(self._obs)

    def step(self, actions: torch.Tensor):
        obs, reward, done = self.env.step(actions)
        self._obs = obs
        self._return += reward
        finished = done.to(self._return.dtype)
        self._finished_return += (self._return * finished).sum(dtype=torch.float64)
        self._finished_count += done.sum()
        self._return *= 1.0 - finished
        self._steps += 1
        if self.stats_every and self._steps % self.stats_every == 0:
            self.history.append(torch.stack([self._finished_return, self._finished_count.to(torch.float64)]))
            self._finished_return.zero_()
            self._finished_count.zero_()
        extras = {"time_outs": self.env.output("truncated").clone()}
        return self._wrap(obs), reward.clone(), done.clone(), extras

    def pop_episode_stats(self) -> tuple[float, int]:
        """(mean return, count) of the episodes finished since the last call (NaN when none); one
        host read."""
        count = int(self._finished_count.item())
        mean = float(self._finished_return.item()) / count if count else float("nan")
        self._finished_return.zero_()
        self._finished_count.zero_()
        return mean, count


class OnPolicyRunner(_RslOnPolicyRunner):
    """rsl-rl's ``OnPolicyRunner`` that also runs across processes on the CPU.

    Under ``torchrun`` (``WORLD_SIZE`` > 1) a runner on a CUDA device uses rsl-rl's multi-GPU mode
    unchanged (NCCL; the device must be ``cuda:<LOCAL_RANK>``). On the CPU it joins the process
    group with the gloo backend instead; everything else (gradient averaging after each backward
    pass, parameter broadcast from rank 0, the KL and learning-rate agreement) is rsl-rl's. A
    process group that the caller already initialized is kept.
    """

    def _configure_multi_gpu(self) -> None:
        world_size = int(os.getenv("WORLD_SIZE", "1"))
        on_cpu = torch.device(self.device).type == "cpu"
        if world_size <= 1 or not on_cpu:
            if world_size > 1 and torch.distributed.is_initialized():
                self._join_existing(world_size)
                return
            super()._configure_multi_gpu()
            return
        if not torch.distributed.is_initialized():
            rank = int(os.getenv("RANK", "0"))
            torch.distributed.init_process_group(backend="gloo", rank=rank, world_size=world_size)
        self._join_existing(world_size)

    def _join_existing(self, world_size: int) -> None:
        self.gpu_world_size = world_size
        self.is_distributed = True
        self.gpu_local_rank = int(os.getenv("LOCAL_RANK", "0"))
        self.gpu_global_rank = torch.distributed.get_rank()
        self.cfg["multi_gpu"] = {
            "global_rank": self.gpu_global_rank,
            "local_rank": self.gpu_local_rank,
            "world_size": self.gpu_world_size,
        }


def ppo_config(
    *,
    steps_per_env: int = 24,
    hidden: tuple[int, ...] = (64, 64),
    learning_rate: float = 1.0e-3,
    epochs: int = 5,
    mini_batches: int = 4,
    gamma: float = 0.99,
    lam: float = 0.95,
    entropy_coef: float = 0.0,
    init_std: float = 1.0,
    desired_kl: float = 0.01,
) -> dict:
    """An rsl-rl training configuration (PPO, MLP actor and critic with observation normalization,
    a Gaussian policy with a learned scalar std per action) for :class:`OnPolicyRunner`."""
    model = {"class_name": "MLPModel", "hidden_dims": list(hidden), "activation": "elu", "obs_normalization": True}
    return {
        "num_steps_per_env": int(steps_per_env),
        "save_interval": 10**9,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "check_for_nan": True,
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": int(epochs),
            "num_mini_batches": int(mini_batches),
            "clip_param": 0.2,
            "gamma": float(gamma),
            "lam": float(lam),
            "value_loss_coef": 1.0,
            "entropy_coef": float(entropy_coef),
            "learning_rate": float(learning_rate),
            "max_grad_norm": 1.0,
            "use_clipped_value_loss": True,
            "schedule": "adaptive",
            "desired_kl": float(desired_kl),
        },
        "actor": {**model, "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": float(init_std)}},
        "critic": dict(model),
    }
