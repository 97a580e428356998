"""Reinforcement-learning helpers: batched observations, per-world parameters, world masks, torch interop.

Everything here works on models built from one *template* world repeated with
``ModelBuilder.replicate`` (or ``add_world`` with the same builder): every world then holds the
same entities in the same order, and an entity is named by its *local* index inside its world (or
by its label in the template). The helpers turn local indices into flat indices per world once, on
the host, and then act on every world with one kernel launch.

- :class:`ObservationSpec` and :class:`Observer` gather per-world observation vectors (body poses
  and velocities, joint coordinates, routed-cable and transmission-tendon lengths and tensions,
  user inputs such as goals) into one preallocated ``[world_count, obs_dim]`` float32 array, in one
  launch (two when joint coordinates are observed), without host synchronization; ``compute`` can
  be captured in a CUDA graph.
- :func:`set_per_world` rewrites per-world model parameters (masses, tendon compliance, damping
  and friction, transmission stiffness, limits, gravity, ...) between episodes, validates them
  before anything changes, refreshes the derived arrays and notifies the solvers.
- :func:`copy_world_mask` turns a boolean mask (torch, NumPy, Warp) into the int32 mask that
  ``solver.reset`` takes, into a preallocated array.
- :func:`to_torch` and :func:`from_torch` share memory between Warp arrays and torch tensors.
- :class:`VecEnv` is the base of batched environments (``newton_tendon/examples/env_finger.py``,
  ``newton_tendon/examples/env_payload.py``): ``reset(mask)`` and ``step(actions) -> obs, reward, done`` on torch
  tensors or NumPy arrays, the whole step in one captured graph.

torch is optional: it is imported only inside the functions that need it.

The package is split by role; every public name is imported from ``newton_tendon.rl``:

- ``_worlds``: per-world entity tables (``world_entities``, local selections).
- ``_observations``: observable quantities, ``ObservationSpec``, ``Observer``.
- ``_actions``: actions and world masks into fixed device buffers (``copy_world_mask``).
- ``_per_world``: per-world randomization (``set_per_world``, ``PER_WORLD_PARAMETERS``).
- ``_env``: ``VecEnv``, its graph-captured step and reset.
- ``_torch``: torch interop (``to_torch``, ``from_torch``) and the backend choice.
"""

from __future__ import annotations

from newton_tendon.kernels.observe import episode_rng

from ._actions import copy_world_mask
from ._env import AUTORESET_MODES, VecEnv
from ._observations import OBSERVATION_QUANTITIES, ObservationSpec, Observer
from ._per_world import PER_WORLD_PARAMETERS, set_per_world
from ._torch import from_torch, to_torch
from ._worlds import world_entities

__all__ = [
    "AUTORESET_MODES",
    "OBSERVATION_QUANTITIES",
    "VecEnv",
    "PER_WORLD_PARAMETERS",
    "ObservationSpec",
    "Observer",
    "copy_world_mask",
    "episode_rng",
    "from_torch",
    "set_per_world",
    "to_torch",
    "world_entities",
]
