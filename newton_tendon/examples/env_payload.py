"""A payload lifted by a winch over a roller, as a batched reinforcement-learning environment.

One routed cable (``ModelBuilder.add_tendon``) runs from a winch anchored to the world, over a
fixed roller, down to a free payload: winch -> roller -> payload. The winch is an end ANCHOR guide
with ``winch=True``; ``Control.tendon_guide_winch_length`` [m] is the cable paid out there relative
to the initial state (negative reels in and lifts the payload).

Action (one per world, clamped to [-1, 1]): winch speed ``a * WINCH_SPEED`` [m/s], integrated into
the paid-out command before every solver step and kept in [-MAX_REEL_IN, MAX_PAY_OUT]. Each episode
samples a target height and gives the payload a random sideways push, so it swings; the reward is
minus the height error [m] minus a swing penalty (horizontal speed [m/s] times ``SWING_COST``).

Observation per world: payload position [m] and velocity [m/s], the paid-out length [m], the
tension of the span that holds the payload / (payload weight), the target height [m].

``ForceEnv`` (``--action force``) is the same task with a force winch (``winch_force=True``): the
action sets the drum's tension, ``Control.tendon_guide_winch_force = m g (1 + FORCE_SPAN a)`` [N], so
the policy pulls with a motor force and the drum pays out or reels in whatever cable that takes.

Run a random policy:
    python -m newton_tendon.examples.env_payload --worlds 64 --steps 100
    python -m newton_tendon.examples.env_payload --worlds 64 --steps 100 --action force
"""

from __future__ import annotations

import numpy as np
import warp as wp

from newton_tendon.examples._env_common import entity_index, launch_evaluate, launch_reset, run_random_policy
from newton_tendon.rl import ObservationSpec, VecEnv, episode_rng

ROLLER = (0.0, 0.0, 2.0)
"""Roller centre [m] (axis +Y, fixed to the world)."""
RADIUS = 0.1
"""Roller radius [m]."""
WINCH = (-1.0, 0.0, 2.1)
"""Winch anchor in world [m] (level with the roller's top, so the first span is horizontal)."""
PAYLOAD_START = (0.1, 0.0, 1.0)
"""Initial payload position [m] (hanging straight below the roller's right side)."""
MASS = 1.0
"""Payload mass [kg]."""
COMPLIANCE = 1.0e-5
"""Cable compliance per span [m/N]."""
DAMPING = 20.0
"""Cable damping per span [N s/m]."""
WINCH_SPEED = 0.5
"""Winch speed at action 1 [m/s]."""
MAX_REEL_IN = 0.7
"""Largest reeled-in length [m] (the payload stops 0.2 m below the roller)."""
MAX_PAY_OUT = 0.4
"""Largest paid-out length [m]."""
TARGET_RANGE = (0.7, 1.6)
"""Target heights [m] sampled per episode."""
PUSH = 0.3
"""Largest sideways speed [m/s] given to the payload at the start of an episode."""
SWING_COST = 0.1
"""Reward cost per m/s of horizontal payload speed."""
ROLLER_MU = 0.1
"""``HoistEnv``: capstan friction coefficient of the roller."""
FORCE_SPAN = 0.3
"""``ForceEnv``: the drum's tension ranges over m g (1 -+ FORCE_SPAN) for actions -1..1."""


@wp.kernel
def integrate_winch(
    # Input: the policy's actions, the env's winch table and settings
    actions: wp.array2d(dtype=float),
    winch_guide: wp.array(dtype=wp.int32),
    speed: float,
    dt: float,
    lower: float,
    upper: float,
    # Control: updated in place
    winch_length: wp.array(dtype=float),
):
    """Advance each world's paid-out command by its winch speed over one solver step."""
    w = wp.tid()
    g = winch_guide[w]
    v = wp.clamp(actions[w, 0], -1.0, 1.0) * speed
    winch_length[g] = wp.clamp(winch_length[g] + v * dt, lower, upper)


@wp.kernel
def command_winch_force(
    # Input: the policy's actions, the env's winch table and settings
    actions: wp.array2d(dtype=float),
    winch_guide: wp.array(dtype=wp.int32),
    weight: float,
    span: float,
    # Control:
    winch_force: wp.array(dtype=float),
):
    """Each world's drum tension [N] from its action: weight (1 + span a), a clamped to [-1, 1]."""
    w = wp.tid()
    winch_force[winch_guide[w]] = weight * (1.0 + span * wp.clamp(actions[w, 0], -1.0, 1.0))


@wp.kernel
def evaluate_payload(
    # Input: the env's tables and settings, the targets
    payload: wp.array(dtype=wp.int32),
    target: wp.array2d(dtype=float),
    swing_cost: float,
    # State:
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Output:
    reward: wp.array(dtype=float),
    terminated: wp.array(dtype=wp.bool),
):
    """Reward = -|z - target| - swing_cost |v_xy|; never terminated (episodes end by their length)."""
    w = wp.tid()
    b = payload[w]
    z = wp.transform_get_translation(body_q[b])[2]
    v = wp.spatial_top(body_qd[b])
    reward[w] = -wp.abs(z - target[w, 0]) - swing_cost * wp.sqrt(v[0] * v[0] + v[1] * v[1])
    terminated[w] = False  # the episode only ends by its length


@wp.kernel
def reset_payload(
    # Input: the worlds to reset, the seeds, the env's tables and settings
    mask: wp.array(dtype=wp.int32),
    seed: wp.array(dtype=wp.int32),
    world_offset: int,
    episode_count: wp.array(dtype=wp.int32),
    target_range: wp.vec2,
    push: float,
    payload: wp.array(dtype=wp.int32),
    winch_guide: wp.array(dtype=wp.int32),
    # Control:
    winch_length: wp.array(dtype=float),
    # State:
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Output: the new targets
    target: wp.array2d(dtype=float),
):
    """New target and a sideways push in each selected world; the winch command back to 0."""
    w = wp.tid()
    if mask[w] == 0:
        return
    rng = episode_rng(seed[0], world_offset + w, episode_count[w])
    target[w, 0] = target_range[0] + (target_range[1] - target_range[0]) * wp.randf(rng)
    vx = push * (2.0 * wp.randf(rng) - 1.0)
    vy = push * (2.0 * wp.randf(rng) - 1.0)
    body_qd[payload[w]] = wp.spatial_vector(wp.vec3(vx, vy, 0.0), wp.vec3(0.0))
    winch_length[winch_guide[w]] = 0.0


class Env(VecEnv):
    """Batched winch-and-roller payload; see the module docstring. Action: winch speed in [-1, 1]."""

    name = "env_payload"
    action_dim = 1
    frame_dt = 1.0 / 30.0
    substeps = 8
    iterations = 8
    episode_length = 150
    push = PUSH
    """Largest sideways speed [m/s] at the start of an episode (0: the payload starts at rest)."""

    force_winch = False
    """Build the winch as a force winch (``ForceEnv``)."""
    roller_mu = 0.0
    """Capstan friction coefficient of the roller (``HoistEnv``: ``ROLLER_MU``)."""

    def build_world(self, nt):
        b = nt.ModelBuilder()
        payload = b.add_body(
            xform=(*PAYLOAD_START, 0.0, 0.0, 0.0, 1.0), mass=MASS, inertia=np.eye(3) * 0.01, label="payload"
        )
        # Drawn only (no mass, no contacts): the payload as a 10 cm box for recordings.
        b.add_shape_box(payload, hx=0.05, hy=0.05, hz=0.05, density=0.0, has_collision=False, label="payload_box")
        span = dict(compliance=COMPLIANCE, damping=DAMPING)
        b.add_tendon(
            [
                nt.TendonGuide(body=-1, offset=WINCH, winch=True, winch_force=self.force_winch),
                nt.TendonGuide(
                    body=-1,
                    guide_type=nt.TendonGuideType.ROLLER,
                    offset=ROLLER,
                    axis=(0.0, 1.0, 0.0),
                    radius=RADIUS,
                    orientation=1,  # -X to +X over the top: counter-clockwise about +Y
                    mu=self.roller_mu,
                    **span,
                ),
                nt.TendonGuide(body=payload, **span),
            ],
            label="hoist",
        )
        return b

    def observation_spec(self) -> ObservationSpec:
        return (
            ObservationSpec()
            .add("body_position", ["payload"])
            .add("body_linear_velocity", ["payload"])
            .add("tendon_guide_winch_paid", [0])
            .add("tendon_segment_material_tension", [1], scale=1.0 / (MASS * 9.81))
            .add_input("target", 1)
        )

    def setup(self, nt):
        self.payload_index = entity_index(self, "body", 0)
        """Flat index of each world's payload [world_count]."""
        self.winch_index = entity_index(self, "tendon_guide", 0)
        """Flat index of each world's winch guide [world_count]."""
        self.target = self.observer.input("target")
        """Target height per world [m], [world_count, 1] (a view into the observer's inputs)."""

    def before_substep(self):
        wp.launch(
            integrate_winch,
            dim=self.world_count,
            inputs=[self.actions, self.winch_index, WINCH_SPEED, self.sim_dt, -MAX_REEL_IN, MAX_PAY_OUT],
            outputs=[self.control.tendon_guide_winch_length],
            device=self.device,
        )

    def evaluate(self):
        launch_evaluate(
            self,
            evaluate_payload,
            [self.payload_index, self.target, SWING_COST, self.state_0.body_q, self.state_0.body_qd],
        )

    def reset_worlds(self, mask):
        launch_reset(
            self,
            reset_payload,
            mask,
            [wp.vec2(*TARGET_RANGE), float(self.push), self.payload_index, self.winch_index],
            [self.control.tendon_guide_winch_length, self.state_0.body_qd, self.target],
        )

    def payload_heights(self) -> np.ndarray:
        """Payload heights [m], [world_count] (host copy)."""
        return self.state_0.body_q.numpy()[self.payload_index.numpy(), 2].astype(np.float64)


class HoistEnv(Env):
    """The payload task with capstan friction on the roller (``mu = ROLLER_MU`` over the quarter turn
    the cable wraps): the winch must pull ``exp(ROLLER_MU pi / 2)`` = 1.17 times the payload's
    weight to lift it and only 0.85 times to hold it, so the cable sticks on the roller over that
    band. ``rl_train --task payload`` trains on it."""

    name = "env_payload_hoist"
    roller_mu = ROLLER_MU


class ForceEnv(Env):
    """The payload task with a force winch: the action in [-1, 1] sets the drum's tension to
    ``m g (1 + FORCE_SPAN a)`` [N] (``Control.tendon_guide_winch_force``) before every solver step."""

    name = "env_payload_force"
    force_winch = True

    def before_substep(self):
        wp.launch(
            command_winch_force,
            dim=self.world_count,
            inputs=[self.actions, self.winch_index, MASS * 9.81, FORCE_SPAN],
            outputs=[self.control.tendon_guide_winch_force],
            device=self.device,
        )


def main(argv=None):
    description = "Random policy on the winch-and-roller payload environment."
    env = run_random_policy({"speed": Env, "force": ForceEnv}, description, argv, backend="numpy")
    z = env.payload_heights()
    print(f"payload heights [m]: min {z.min():.3f}, max {z.max():.3f}")
    return env


if __name__ == "__main__":
    main()
