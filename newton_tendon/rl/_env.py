"""Vectorized environments: :class:`VecEnv`, the base of batched RL environments.

A subclass builds one template world and launches its own kernels in a few hooks; the base builds
``world_count`` copies, the solver, the two states and the :class:`~newton_tendon.rl.Observer`, and
captures one env step (actions, solver substeps, observation, reward, automatic reset of finished
worlds) and one reset as graphs that ``step`` and ``reset`` replay. ``step`` and ``reset`` take and
return torch tensors or NumPy arrays (``newton_tendon/examples/env_finger.py``,
``newton_tendon/examples/env_payload.py``).
"""

from __future__ import annotations

import abc

import numpy as np
import warp as wp

from newton_tendon.kernels import observe as K

from ._actions import _copy_actions, copy_world_mask
from ._observations import ObservationSpec, Observer
from ._torch import _select_backend, to_torch

AUTORESET_MODES = ("same_step", "next_step", "disabled")
"""What ``VecEnv`` does with a world whose episode ended (gymnasium's ``AutoresetMode`` values)."""


class VecEnv(abc.ABC):
    """Base of a batched environment: ``world_count`` copies of one world, stepped together.

    A subclass builds the template world (:meth:`build_world`), names its observations
    (:meth:`observation_spec`) and launches its own kernels in four hooks: :meth:`apply_actions`
    (actions into ``Control``), :meth:`before_substep`, :meth:`evaluate` (``reward``, ``done``) and
    :meth:`reset_worlds` (goals and commands of the worlds being reset). Hooks must only launch
    kernels on fixed buffers (no host reads, no allocation): one env step (actions, ``substeps``
    solver steps, observation, reward, automatic reset of finished worlds) and one reset are each
    captured as a graph when ``use_graph`` is on (the default, on every device) and replayed afterwards.

    Args:
        world_count: number of worlds (>= 1).
        device: Warp device (default: Warp's default device).
        solver: "xpbd" (``SolverXPBD``) or "vbd" (``SolverVBD``).
        backend: "torch" (tensors sharing the env's buffers), "numpy" (copies) or "auto" (torch if
            it can be imported).
        use_graph: capture the step and the reset in graphs (default: on). A CUDA graph on a GPU; on
            the CPU, Warp's capture records the launches and replays them without Python, which is
            most of an env step's time at a few worlds (the finger env: 157 against 6,419 env-steps/s
            at 1 world, 7,406 against 17,652 at 64; the same bits). Off: every launch from Python,
            e.g. to step through the hooks in a debugger.
        auto_reset: shorthand for ``autoreset_mode``: True is "same_step", False "disabled".
        autoreset_mode: what happens to a world whose episode ended (gymnasium's autoreset modes):
            "same_step" (the default): the step that ends it resets it, returns ``done`` with the
            first observation of the new episode and keeps the last one in ``final_obs``;
            "next_step": the next step resets it, ignores its action and returns reward 0 and no
            flags; "disabled": only ``reset(mask)`` restarts it.
        episode_length: steps per episode, one int or one per world (default: the class's
            ``episode_length``); :meth:`set_episode_lengths` changes them later.
        seed: seed of the device random numbers used by ``reset_worlds``; ``reset(seed=...)``
            changes it.
        world_offset: global index of this env's first world. Per-world random numbers are drawn
            by global index (:func:`episode_rng`), so a process holding worlds ``[offset, offset +
            world_count)`` of a larger run draws what a single process holding them all draws.

    With the torch backend, ``step`` returns views of the env's buffers, overwritten by the next
    ``step`` or ``reset``; clone what you keep.
    """

    name = "vec_env"
    """Environment name, used in messages."""
    action_dim = 1
    """Actions per world."""
    frame_dt = 1.0 / 60.0
    """Duration of one env step [s]."""
    substeps = 4
    """Solver steps per env step (even, so the two states end where they started)."""
    iterations = 8
    """Solver iterations per solver step."""
    episode_length = 200
    """Default env steps per episode (``truncated`` when reached); per world with ``episode_length=``."""

    def __init__(
        self,
        world_count: int,
        device=None,
        *,
        solver: str = "xpbd",
        backend: str = "auto",
        use_graph: bool | None = None,
        auto_reset: bool = True,
        autoreset_mode: str | None = None,
        episode_length=None,
        seed: int = 0,
        world_offset: int = 0,
    ):
        import newton_tendon as nt

        where = self.name
        if isinstance(world_count, bool) or not isinstance(world_count, (int, np.integer)) or world_count < 1:
            raise ValueError(f"{where}: world_count must be an int >= 1, got {world_count!r}")
        if solver not in ("xpbd", "vbd"):
            raise ValueError(f"{where}: solver must be one of xpbd, vbd, got {solver!r}")
        if backend not in ("auto", "torch", "numpy"):
            raise ValueError(f"{where}: backend must be 'auto', 'torch' or 'numpy', got {backend!r}")
        if self.substeps < 2 or self.substeps % 2:
            raise ValueError(f"{where}: substeps must be even and >= 2, got {self.substeps}")
        if autoreset_mode is None:
            autoreset_mode = "same_step" if auto_reset else "disabled"
        if autoreset_mode not in AUTORESET_MODES:
            raise ValueError(
                f"{where}: autoreset_mode must be one of {', '.join(AUTORESET_MODES)}, got {autoreset_mode!r}"
            )
        for name, value in (("seed", seed), ("world_offset", world_offset)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2**31:
                raise ValueError(f"{where}: {name} must be an int in [0, 2**31 - 1], got {value!r}")
        backend = _select_backend(where, backend)
        self.backend = backend
        """"torch" or "numpy": the type ``step`` and ``reset`` return."""
        self.world_count = int(world_count)
        self.solver_name = solver
        self.sim_dt = self.frame_dt / self.substeps
        """Solver step [s]."""
        self.seed = int(seed)
        """Seed of the per-world random numbers (the device copy is ``seed_buffer``)."""
        self.world_offset = int(world_offset)
        """Global index of this env's first world (seeds the per-world random numbers)."""
        self.autoreset_mode = autoreset_mode
        """"same_step", "next_step" or "disabled" (see the class docstring)."""
        self.auto_reset = autoreset_mode != "disabled"

        world = self.build_world(nt)
        self.template = world
        """The one-world builder every world copies."""
        scene = nt.ModelBuilder(up_axis=world.up_axis, gravity=tuple(world.gravity))
        scene.replicate(world, self.world_count)
        if solver == "vbd":
            scene.color()
        self.model = scene.finalize(device)
        self.device = self.model.device
        solver_class = nt.solvers.SolverVBD if solver == "vbd" else nt.solvers.SolverXPBD
        self.solver = solver_class(self.model, iterations=self.iterations)
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        self.control = self.model.control()
        self.observer = Observer(self.model, self.observation_spec(), self.solver)
        self.obs_dim = self.observer.dim
        """Observation size per world."""

        dev = self.device
        w = self.world_count
        self.actions = wp.zeros((w, self.action_dim), dtype=float, device=dev)
        """Actions of the current step [world_count, action_dim] (copied in by ``step``)."""
        self.reward = wp.zeros(w, dtype=float, device=dev)
        """Reward of the last step per world, float32."""
        self.terminated = wp.zeros(w, dtype=wp.bool, device=dev)
        """True where the last step reached a terminal state (``evaluate`` writes it every step)."""
        self.truncated = wp.zeros(w, dtype=wp.bool, device=dev)
        """True where the last step ended an episode by its length without terminating."""
        self.done = wp.zeros(w, dtype=wp.bool, device=dev)
        """True where the last step ended an episode (``terminated`` or ``truncated``)."""
        self.done_mask = wp.zeros(w, dtype=wp.int32, device=dev)
        """``done`` as the int32 world mask ``solver.reset`` takes."""
        self.final_obs = wp.zeros((w, self.obs_dim), dtype=float, device=dev)
        """Last observation of the episodes that the last step ended ("same_step" autoreset; the
        rows of other worlds keep older values)."""
        self.episode_step = wp.zeros(w, dtype=wp.int32, device=dev)
        """Env steps taken in the current episode per world."""
        self.max_episode_steps = wp.zeros(w, dtype=wp.int32, device=dev)
        """Episode length per world [env steps] (:meth:`set_episode_lengths`)."""
        self.episode_count = wp.zeros(w, dtype=wp.int32, device=dev)
        """Episodes started per world (seeds the per-world random numbers of ``reset_worlds``)."""
        self.reset_mask = wp.zeros(w, dtype=wp.int32, device=dev)
        """Worlds the next ``reset`` acts on (filled from its argument)."""
        self.pending_reset = wp.zeros(w, dtype=wp.int32, device=dev)
        """Worlds the next step restarts ("next_step" autoreset; all zero otherwise)."""
        self.seed_buffer = wp.array([self.seed], dtype=wp.int32, device=dev)
        """``seed`` on the device, read by ``reset_worlds`` kernels (so a new seed needs no recapture)."""
        self.set_episode_lengths(self.episode_length if episode_length is None else episode_length)
        self.setup(nt)

        self.use_graph = True if use_graph is None else bool(use_graph)
        self._step_graph = None
        self._reset_graph = None
        self.reset_mask.fill_(1)
        self._reset_device()  # compiles every kernel before any capture
        self._step_device()
        self._reset_device()
        if self.use_graph:
            with wp.ScopedCapture(device=dev) as cap:
                self._step_device()
            self._step_graph = cap.graph
            with wp.ScopedCapture(device=dev) as cap:
                self._reset_device()
            self._reset_graph = cap.graph
        self._views = None
        self._torch_views = {}
        if backend == "torch":
            self._views = (to_torch(self.observer.obs), to_torch(self.reward), to_torch(self.done))
            self._action_view = to_torch(self.actions)
            for name in self.OUTPUTS:
                self._torch_views[name] = to_torch(getattr(self, name))

    # Hooks -------------------------------------------------------------------------------------

    @abc.abstractmethod
    def build_world(self, nt):
        """Build and return the template world (an ``nt.ModelBuilder`` without worlds)."""

    @abc.abstractmethod
    def observation_spec(self) -> ObservationSpec:
        """The per-world observation (see :class:`ObservationSpec`)."""

    def setup(self, nt) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Per-env buffers and index tables, after the model, solver and observer exist."""

    def apply_actions(self) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Launch kernels that turn ``self.actions`` into ``self.control`` (once per env step)."""

    def before_substep(self) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Launch kernels before each solver step (e.g. ramp a winch command)."""

    @abc.abstractmethod
    def evaluate(self) -> None:
        """Launch kernels that write ``reward`` and ``terminated`` of every world (the base then
        advances the episode clock and sets ``truncated``, ``done`` and ``done_mask``)."""

    def reset_worlds(self, mask: wp.array) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Launch kernels that start new episodes in the worlds where ``mask`` is 1 (goals, commands);
        bodies and tendons were already restored by ``solver.reset``."""

    # Device sequences ----------------------------------------------------------------------------

    def _reset_masked(self, mask: wp.array):
        self.solver.reset(self.state_0, mask)
        self.reset_worlds(mask)
        wp.launch(
            K.reset_episodes,
            dim=self.world_count,
            inputs=[mask],
            outputs=[self.episode_step, self.episode_count, self.pending_reset],
            device=self.device,
        )

    def _reset_device(self):
        self._reset_masked(self.reset_mask)
        # Transmission lengths and rates at the restored poses (the reset zeroed their reported forces).
        self.solver.update_geometry(self.state_0)
        self.observer.compute(self.state_0)

    def _step_device(self):
        self.apply_actions()
        for _ in range(self.substeps):
            self.before_substep()
            self.solver.step(self.state_0, self.state_1, self.control, None, self.sim_dt)
            self.state_0, self.state_1 = self.state_1, self.state_0
        self.observer.compute(self.state_0)
        self.evaluate()
        wp.launch(
            K.finish_env_step,
            dim=self.world_count,
            inputs=[
                self.max_episode_steps,
                self.pending_reset,
                self.observer.obs,
                int(self.autoreset_mode == "same_step"),
            ],
            outputs=[
                self.episode_step,
                self.reward,
                self.terminated,
                self.truncated,
                self.done,
                self.done_mask,
                self.final_obs,
            ],
            device=self.device,
        )
        if self.autoreset_mode == "disabled":
            return
        # same_step: restart the worlds that just finished; next_step: those that finished on the
        # previous step, then remember this step's.
        self._reset_masked(self.done_mask if self.autoreset_mode == "same_step" else self.pending_reset)
        self.solver.update_geometry(self.state_0)
        self.observer.compute(self.state_0)
        if self.autoreset_mode == "next_step":
            wp.launch(
                K.mask_from_int,
                dim=self.world_count,
                inputs=[self.done_mask],
                outputs=[self.pending_reset],
                device=self.device,
            )

    # Public ---------------------------------------------------------------------------------------

    OUTPUTS = ("terminated", "truncated", "final_obs", "episode_step", "max_episode_steps")
    """Per-world buffers :meth:`output` returns besides ``step``'s (obs, reward, done)."""

    def output(self, name: str):
        """One of :attr:`OUTPUTS` as the env's backend type: with torch a view of the buffer
        (overwritten by the next step), with NumPy a copy."""
        if name not in self.OUTPUTS:
            raise ValueError(f"{self.name}.output: name must be one of {', '.join(self.OUTPUTS)}, got {name!r}")
        view = self._torch_views.get(name)
        return view if view is not None else getattr(self, name).numpy().copy()

    def _outputs(self):
        if self._views is not None:
            return self._views
        return self.observer.obs.numpy().copy(), self.reward.numpy().copy(), self.done.numpy().copy()

    def reset(self, mask=None, seed: int | None = None):
        """Start new episodes in the worlds selected by ``mask`` ([world_count] bool/int, torch, NumPy
        or Warp; None = all) and return the observations [world_count, obs_dim] of every world.

        ``seed`` (an int in [0, 2**31 - 1]) restarts the per-world random numbers: the seed changes and every
        world's episode counter returns to 0, so the same seed replays the same episodes.
        """
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**31:
                raise ValueError(f"{self.name}.reset: seed must be an int in [0, 2**31 - 1], got {seed!r}")
            self.seed = int(seed)
            self.seed_buffer.fill_(self.seed)
            self.episode_count.zero_()
        copy_world_mask(mask, self.reset_mask)
        if self._reset_graph is not None:
            wp.capture_launch(self._reset_graph)
        else:
            self._reset_device()
        return self._outputs()[0]

    def step(self, actions):
        """Apply ``actions`` [world_count, action_dim] for one env step (``frame_dt``); returns
        ``(obs [world_count, obs_dim], reward [world_count], done [world_count] bool)``."""
        where = f"{self.name}.step"
        _copy_actions(where, actions, self.actions, self._action_view if self._views is not None else None)
        if self._step_graph is not None:
            wp.capture_launch(self._step_graph)
        else:
            self._step_device()
        return self._outputs()

    def to_gymnasium(self):
        """This env as a ``gymnasium.vector.VectorEnv`` (:class:`~newton_tendon.rl.gymnasium_env.GymnasiumVectorEnv`;
        needs gymnasium, the ``rl`` extra)."""
        from .gymnasium_env import GymnasiumVectorEnv

        return GymnasiumVectorEnv(self)

    def set_episode_lengths(self, lengths) -> None:
        """Set the episode length [env steps] of every world: one int, or a sequence of
        ``world_count`` ints (>= 1). Takes effect at the next step; host code, call it between steps."""
        where = f"{self.name}.set_episode_lengths"
        values = np.asarray(lengths)
        if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
            raise TypeError(f"{where}: lengths must be ints, got {values.dtype}")
        if values.ndim == 0:
            values = np.full(self.world_count, int(values))
        if values.shape != (self.world_count,):
            raise ValueError(f"{where}: lengths must be one int or {self.world_count} ints, got shape {values.shape}")
        if np.any(values < 1) or np.any(values > np.iinfo(np.int32).max):
            raise ValueError(f"{where}: every length must be an int in [1, 2**31 - 1]")
        self.max_episode_steps.assign(values.astype(np.int32))

    def _torch_device(self):
        return wp.device_to_torch(self.device)

    def random_actions(self, rng: np.random.Generator):
        """Uniform actions in [-1, 1] as the env's backend type (for random-policy rollouts)."""
        a = rng.uniform(-1.0, 1.0, size=(self.world_count, self.action_dim)).astype(np.float32)
        if self.backend == "torch":
            import torch

            return torch.from_numpy(a).to(self._torch_device())
        return a
