"""A tendon-driven two-link finger as a batched reinforcement-learning environment.

The finger lies along +X from a base fixed in the world; both joints turn about +Y, so a positive
angle bends the finger down (flexion, with gravity). Three spatial transmission tendons run along
the links at a moment arm of ``ARM`` from the joint axes and act as muscles (pull only):

- ``flexor_deep``: underneath, from the base to the distal link; flexes both joints;
- ``flexor_proximal``: underneath, from the base to the proximal link; flexes the first joint;
- ``extensor``: on top, from the base to the distal link; extends both joints.

Action ``a_i`` in [-1, 1] commands tendon ``i``'s tension ``T_i = T_MAX (a_i + 1) / 2`` [N] through
the tendon drive (``Control.transmission_drive_force = -T_i``, filtered by an activation time of
``ACTIVATION_TIME``; the actuator force is bounded to [-T_MAX, 0] N so a tendon only pulls). The
goal is a fingertip position sampled per episode from reachable joint angles; the reward is minus
the tip's distance to it [m] minus a small effort cost; an episode lasts ``episode_length`` steps.

Observation per world (``Env.observer.columns`` names each column): joint angles [rad], joint rates
[rad/s] scaled by 0.1, tendon lengths [m], tendon tensions / T_MAX, the goal [m].

Run a random policy:
    python -m newton_tendon.examples.env_finger --worlds 64 --steps 100
"""

from __future__ import annotations

import numpy as np
import warp as wp

from newton_tendon.examples._env_common import entity_index, launch_evaluate, launch_reset, run_random_policy
from newton_tendon.rl import ObservationSpec, VecEnv, episode_rng

BASE = (0.0, 0.0, 0.5)
"""First joint position in world [m]."""
LENGTHS = (0.3, 0.2)
"""Proximal and distal link lengths [m]."""
MASSES = (0.1, 0.05)
"""Link masses [kg] (uniform rods, COM at mid-length)."""
ARM = 0.025
"""Sheave radius [m]: each tendon's moment arm about the joints it crosses (fixed-tendon coefficient)."""
T_MAX = 40.0
"""Largest tendon tension an action commands [N]."""
ACTIVATION_TIME = 0.02
"""First-order time constant of the tendon force [s]."""
JOINT_DAMPING = 0.01
"""Viscous joint damping [N m s/rad] (a velocity drive toward 0)."""
LIMITS = ((-1.2, 1.2), (0.0, 1.8))
"""Joint angle limits [rad]."""
GOAL_RANGE = ((-0.8, 0.8), (0.1, 1.4))
"""Joint angle ranges [rad] from which goals are sampled (the goal is the tip at those angles)."""
EFFORT_COST = 1.0e-3
"""Reward cost per unit squared action."""


@wp.kernel
def apply_finger_actions(
    # Input: the policy's actions, the env's tendon table and force bound
    actions: wp.array2d(dtype=float),
    tendon_index: wp.array2d(dtype=wp.int32),
    t_max: float,
    # Control:
    drive_force: wp.array(dtype=float),
):
    """Tension command of each world's tendon from its action (clamped to [-1, 1])."""
    world, i = wp.tid()
    a = wp.clamp(actions[world, i], -1.0, 1.0)
    drive_force[tendon_index[world, i]] = -t_max * 0.5 * (a + 1.0)


@wp.func
def finger_tip(q: wp.transform, half_length: float) -> wp.vec3:
    """Distal-link tip in world: the body frame sits at mid-length, the link runs along local +X."""
    return wp.transform_point(q, wp.vec3(half_length, 0.0, 0.0))


@wp.kernel
def evaluate_finger(
    # Input: the env's tables and settings, goals and actions
    distal: wp.array(dtype=wp.int32),
    half_length: float,
    goal: wp.array2d(dtype=float),
    actions: wp.array2d(dtype=float),
    effort_cost: float,
    # State:
    body_q: wp.array(dtype=wp.transform),
    # Output:
    reward: wp.array(dtype=float),
    terminated: wp.array(dtype=wp.bool),
):
    """Reward = -|tip - goal| - effort; never terminated (episodes end by their length)."""
    w = wp.tid()
    tip = finger_tip(body_q[distal[w]], half_length)
    d = tip - wp.vec3(goal[w, 0], goal[w, 1], goal[w, 2])
    effort = float(0.0)
    for i in range(actions.shape[1]):
        a = wp.clamp(actions[w, i], -1.0, 1.0)
        effort += a * a
    reward[w] = -wp.length(d) - effort_cost * effort
    terminated[w] = False  # the episode only ends by its length


@wp.kernel
def reset_finger(
    # Input: the worlds to reset, the seeds, the env's geometry and goal ranges
    mask: wp.array(dtype=wp.int32),
    seed: wp.array(dtype=wp.int32),
    world_offset: int,
    episode_count: wp.array(dtype=wp.int32),
    base: wp.vec3,
    l1: float,
    l2: float,
    q1_range: wp.vec2,
    q2_range: wp.vec2,
    tendon_index: wp.array2d(dtype=wp.int32),
    # Control:
    drive_force: wp.array(dtype=float),
    # Output: the new goals
    goal: wp.array2d(dtype=float),
):
    """New goal (the tip at random reachable angles) and relaxed tendons in each selected world."""
    w = wp.tid()
    if mask[w] == 0:
        return
    rng = episode_rng(seed[0], world_offset + w, episode_count[w])
    q1 = q1_range[0] + (q1_range[1] - q1_range[0]) * wp.randf(rng)
    q2 = q2_range[0] + (q2_range[1] - q2_range[0]) * wp.randf(rng)
    # Rotation about +Y by q maps +X to (cos q, 0, -sin q).
    tip = base + l1 * wp.vec3(wp.cos(q1), 0.0, -wp.sin(q1)) + l2 * wp.vec3(wp.cos(q1 + q2), 0.0, -wp.sin(q1 + q2))
    goal[w, 0] = tip[0]
    goal[w, 1] = tip[1]
    goal[w, 2] = tip[2]
    for i in range(tendon_index.shape[1]):
        drive_force[tendon_index[w, i]] = 0.0


def rod_inertia(mass: float, length: float) -> np.ndarray:
    """Inertia [kg m^2] of a thin rod along X about its centre (a small axial term keeps it invertible)."""
    i = mass * length * length / 12.0
    return np.diag([1.0e-3 * i, i, i])


class Env(VecEnv):
    """Batched tendon-driven finger; see the module docstring. Actions: 3 tendon commands in [-1, 1]."""

    name = "env_finger"
    action_dim = 3
    frame_dt = 1.0 / 60.0
    substeps = 4
    iterations = 8
    episode_length = 120

    def build_world(self, nt):
        b = nt.ModelBuilder()
        x0, _, z0 = BASE
        l1, l2 = LENGTHS
        link1 = b.add_link(
            xform=(x0 + 0.5 * l1, 0.0, z0, 0.0, 0.0, 0.0, 1.0),
            mass=MASSES[0],
            inertia=rod_inertia(MASSES[0], l1),
            label="proximal",
        )
        link2 = b.add_link(
            xform=(x0 + l1 + 0.5 * l2, 0.0, z0, 0.0, 0.0, 0.0, 1.0),
            mass=MASSES[1],
            inertia=rod_inertia(MASSES[1], l2),
            label="distal",
        )
        # Drawn only (no mass, no contacts): each link as a 1 cm capsule along its X axis, for recordings.
        along_x = (0.0, 0.0, 0.0, 0.0, 0.7071068, 0.0, 0.7071068)  # the capsule's local Z onto X
        for link, length, label in ((link1, l1, "proximal_capsule"), (link2, l2, "distal_capsule")):
            b.add_shape_capsule(
                link, along_x, radius=0.01, half_height=0.5 * length, density=0.0, has_collision=False, label=label
            )
        common = dict(axis=(0.0, 1.0, 0.0), target_kd=JOINT_DAMPING)
        j1 = b.add_joint_revolute(
            -1,
            link1,
            parent_xform=(x0, 0.0, z0, 0.0, 0.0, 0.0, 1.0),
            child_xform=(-0.5 * l1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            limit_lower=LIMITS[0][0],
            limit_upper=LIMITS[0][1],
            label="mcp",
            **common,
        )
        j2 = b.add_joint_revolute(
            link1,
            link2,
            parent_xform=(0.5 * l1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            child_xform=(-0.5 * l2, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            limit_lower=LIMITS[1][0],
            limit_upper=LIMITS[1][1],
            label="pip",
            **common,
        )
        b.add_articulation([j1, j2], label="finger")
        muscle = dict(
            activation_time=ACTIVATION_TIME, actuation_lower=-T_MAX, actuation_upper=0.0, damping=0.5, width=0.004
        )
        # l = sum c_i q_i; a tension T (force -T) gives joint torques -c_i T, so c < 0 flexes.
        b.add_fixed_tendon([j1, j2], [-ARM, -ARM], label="flexor_deep", **muscle)
        b.add_fixed_tendon([j1], [-ARM], label="flexor_proximal", **muscle)
        b.add_fixed_tendon([j1, j2], [ARM, ARM], label="extensor", **muscle)
        return b

    def observation_spec(self) -> ObservationSpec:
        return (
            ObservationSpec()
            .add("joint_q")
            .add("joint_qd", scale=0.1)
            .add("transmission_length")
            .add("transmission_tension", scale=1.0 / T_MAX)
            .add_input("goal", 3)
        )

    def setup(self, nt):
        self.tendon_index = entity_index(self, "transmission")
        """Flat index of each world's three tendons [world_count, 3]."""
        self.distal_index = entity_index(self, "body", 1)
        """Flat index of each world's distal link [world_count]."""
        self.goal = self.observer.input("goal")
        """Goal tip position per world [m], [world_count, 3] (a view into the observer's inputs)."""

    def apply_actions(self):
        wp.launch(
            apply_finger_actions,
            dim=(self.world_count, self.action_dim),
            inputs=[self.actions, self.tendon_index, T_MAX],
            outputs=[self.control.transmission_drive_force],
            device=self.device,
        )

    def evaluate(self):
        launch_evaluate(
            self,
            evaluate_finger,
            [self.distal_index, 0.5 * LENGTHS[1], self.goal, self.actions, EFFORT_COST, self.state_0.body_q],
        )

    def reset_worlds(self, mask):
        launch_reset(
            self,
            reset_finger,
            mask,
            [
                wp.vec3(*BASE),
                LENGTHS[0],
                LENGTHS[1],
                wp.vec2(*GOAL_RANGE[0]),
                wp.vec2(*GOAL_RANGE[1]),
                self.tendon_index,
            ],
            [self.control.transmission_drive_force, self.goal],
        )

    def tip_positions(self) -> np.ndarray:
        """Fingertip positions [m], [world_count, 3] (host copy)."""
        q = self.state_0.body_q.numpy()[self.distal_index.numpy()].astype(np.float64)
        x, y, z, w = q[:, 3], q[:, 4], q[:, 5], q[:, 6]
        # First column of the rotation matrix: the link's +X axis in world.
        ax = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w)], axis=1)
        return q[:, :3] + 0.5 * LENGTHS[1] * ax


def main(argv=None):
    env = run_random_policy(Env, "Random policy on the tendon-driven finger environment.", argv)
    q = env.observer.obs.numpy()[:, :2]
    print(f"joint angles [rad]: min {q.min(axis=0)}, max {q.max(axis=0)} (limits {LIMITS})")
    return env


if __name__ == "__main__":
    main()
