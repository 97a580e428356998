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
        auto_reset: reset the worlds whose episode ended at the end of ``step`` (the returned
            ``done`` still flags them; ``obs`` is then the first observation of the new episode).
        seed: seed of the device random numbers used by ``reset_worlds``.

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
    """Env steps per episode (``done`` when reached)."""

    def __init__(
        self,
        world_count: int,
        device=None,
        *,
        solver: str = "xpbd",
        backend: str = "auto",
        use_graph: bool | None = None,
        auto_reset: bool = True,
        seed: int = 0,
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
        backend = _select_backend(where, backend)
        self.backend = backend
        """"torch" or "numpy": the type ``step`` and ``reset`` return."""
        self.world_count = int(world_count)
        self.solver_name = solver
        self.sim_dt = self.frame_dt / self.substeps
        """Solver step [s]."""
        self.seed = int(seed)
        self.auto_reset = bool(auto_reset)

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
        self.done = wp.zeros(w, dtype=wp.bool, device=dev)
        """True where the last step ended an episode."""
        self.done_mask = wp.zeros(w, dtype=wp.int32, device=dev)
        """``done`` as the int32 world mask ``solver.reset`` takes."""
        self.episode_step = wp.zeros(w, dtype=wp.int32, device=dev)
        """Env steps taken in the current episode per world."""
        self.episode_count = wp.zeros(w, dtype=wp.int32, device=dev)
        """Episodes started per world (seeds the per-world random numbers of ``reset_worlds``)."""
        self.reset_mask = wp.zeros(w, dtype=wp.int32, device=dev)
        """Worlds the next ``reset`` acts on (filled from its argument)."""
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
        if backend == "torch":
            self._views = (to_torch(self.observer.obs), to_torch(self.reward), to_torch(self.done))
            self._action_view = to_torch(self.actions)

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
        """Launch kernels that write ``reward``, ``done`` and ``done_mask`` and advance ``episode_step``."""

    def reset_worlds(self, mask: wp.array) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Launch kernels that start new episodes in the worlds where ``mask`` is 1 (goals, commands);
        bodies and tendons were already restored by ``solver.reset``."""

    # Device sequences ----------------------------------------------------------------------------

    def _reset_masked(self, mask: wp.array):
        self.solver.reset(self.state_0, mask)
        wp.launch(
            K.reset_episodes,
            dim=self.world_count,
            inputs=[mask, self.episode_step, self.episode_count],
            device=self.device,
        )
        self.reset_worlds(mask)

    def _reset_device(self):
        self._reset_masked(self.reset_mask)
        # Transmission lengths and rates at the restored poses (the forces stay the last step's).
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
        if self.auto_reset:
            self._reset_masked(self.done_mask)
            self.solver.update_geometry(self.state_0)
            self.observer.compute(self.state_0)

    # Public ---------------------------------------------------------------------------------------

    def _outputs(self):
        if self._views is not None:
            return self._views
        return self.observer.obs.numpy().copy(), self.reward.numpy().copy(), self.done.numpy().copy()

    def reset(self, mask=None):
        """Start new episodes in the worlds selected by ``mask`` ([world_count] bool/int, torch, NumPy
        or Warp; None = all) and return the observations [world_count, obs_dim] of every world."""
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

    def _torch_device(self):
        return wp.device_to_torch(self.device)

    def random_actions(self, rng: np.random.Generator):
        """Uniform actions in [-1, 1] as the env's backend type (for random-policy rollouts)."""
        a = rng.uniform(-1.0, 1.0, size=(self.world_count, self.action_dim)).astype(np.float32)
        if self.backend == "torch":
            import torch

            return torch.from_numpy(a).to(self._torch_device())
        return a
