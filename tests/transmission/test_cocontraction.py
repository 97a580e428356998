"""Co-contracting tendons: equal pulls whose torques cancel on a joint leave that joint to gravity.

The RL finger (``newton_tendon.examples.env_finger``) with all three tendons at 20 N: on the distal
joint the deep flexor (coefficient -0.025 m) and the extensor (+0.025 m) give +0.5 and -0.5 N m, so
nothing but gravity turns it. The proximal joint is flexed to its 1.2 rad limit by the net +0.5 N m
of the two flexors against the extensor, and the distal link then hangs straight down:
q1 + q2 = pi / 2, q2 = pi / 2 - 1.2 = 0.3708 rad (the joint's damping and the tendons' damping
vanish at rest). Measured after 2 s: VBD 0.371 at 8 iterations; XPBD 0.3735 at its default 8
iterations and 0.3709 at 64. (Before XPBD's joints were solved Gauss-Seidel, last in each iteration,
its 8 iterations held the distal joint at its 1.8 rad limit: the opposed rows left a net torque.)
Tolerance 0.01 rad: the damped approach is within 5e-3 rad of rest after 2 s at either setting.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from newton_tendon.examples import env_finger


def _distal_angle(solver: str, iterations: int) -> float:
    class Finger(env_finger.Env):
        pass

    Finger.iterations = iterations
    env = Finger(1, "cpu", solver=solver, backend="numpy", autoreset_mode="disabled")
    env.reset(seed=0)
    for _ in range(120):  # 2 s; action 0 = half of T_MAX = 20 N in every tendon
        obs, _, _ = env.step(np.zeros((1, 3), np.float32))
    assert obs[0, 0] == pytest.approx(1.2, abs=2e-3)  # the proximal joint rests on its limit
    return float(obs[0, 1])


@pytest.mark.parametrize(
    "solver, iterations",
    [
        ("vbd", 8),
        ("xpbd", 8),
        ("xpbd", 64),
    ],
)
def test_opposed_tendons_leave_the_distal_joint_to_gravity(solver, iterations):
    assert _distal_angle(solver, iterations) == pytest.approx(math.pi / 2 - 1.2, abs=0.01)
