"""An internal couple between two dynamic links pressed into a joint limit must not turn the chain.

Found while training the tendon finger on VBD (issue 28): the extensor tendon crosses both joints,
so it puts a couple on the distal joint that its lower limit takes up. Reduced here to a joint force:
two links (0.1 and 0.05 kg, 0.3 and 0.2 m) on a free world hinge and a hinge between them with
limits [-1.8, 1.8] rad, no gravity, ``joint_f = -1 N m`` on the inner hinge for 0.4 s. The couple is
internal and the world hinge passes no torque about its axis, so the angular momentum about that
axis stays 0: the distal link swings to its limit while the proximal link turns the other way (+),
then the chain stops. XPBD (8 iterations) ends with the proximal link at +0.36 rad.

VBD turned it to -1.34 rad even at 64 iterations: a violated angular limit grew the joint's linear
penalty (``rho_lin``), while the limit row reads the angular one, so the limit never stiffened and
its multiplier overshot. Fixed, VBD's per-body sweep (``joint_solver="body"``) still turned the chain
the wrong way at 8 and 32 iterations (-2.81, -2.59 rad): its Gauss-Seidel sweep does not converge
under a couple that rotates the 0.05 kg link's prediction by 0.1 rad per step. Its articulation pass
(the default since issue 43) takes the Newton step of the whole chain with the hinge rows held and
ends at +0.377 rad at 8 and at 64 iterations; XPBD's articulation pass at +0.414.
"""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon.examples.env_finger import rod_inertia

from ..helpers import SOLVERS, quat_to_matrix


def _proximal_angle(solver_name: str, iterations: int) -> float:
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    # The finger's links: uniform rods along X.
    l1 = b.add_link(xform=(0.15, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0), mass=0.1, inertia=rod_inertia(0.1, 0.3))
    l2 = b.add_link(xform=(0.4, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0), mass=0.05, inertia=rod_inertia(0.05, 0.2))
    j1 = b.add_joint_revolute(
        -1, l1, parent_xform=(0, 0, 0.5, 0, 0, 0, 1), child_xform=(-0.15, 0, 0, 0, 0, 0, 1), axis=(0, 1, 0)
    )
    j2 = b.add_joint_revolute(
        l1,
        l2,
        parent_xform=(0.15, 0, 0, 0, 0, 0, 1),
        child_xform=(-0.1, 0, 0, 0, 0, 0, 1),
        axis=(0, 1, 0),
        limit_lower=-1.8,
        limit_upper=1.8,
    )
    b.add_articulation([j1, j2])
    if solver_name == "vbd":
        b.color()
    model = b.finalize("cpu")
    solver = SOLVERS[solver_name](model, iterations=iterations)
    s0, s1, control = model.state(), model.state(), model.control()
    control.joint_f.assign(np.array([0.0, -1.0], np.float32))
    for _ in range(96):  # 0.4 s at 1/240 s
        solver.step(s0, s1, control, None, 1.0 / 240.0)
        s0, s1 = s1, s0
    axis_x = quat_to_matrix(s0.body_q.numpy()[0, 3:7])[:, 0]
    return float(np.arctan2(-axis_x[2], axis_x[0]))  # positive: turned down about +Y


@pytest.mark.parametrize(
    "solver_name, iterations",
    [
        ("xpbd", 8),
        ("vbd", 64),
        ("vbd", 8),
    ],
)
def test_internal_couple_at_a_limit_does_not_turn_the_chain(solver_name, iterations):
    """The proximal link ends turned the way the couple's reaction pushes it (+), by a fraction of a
    radian: [0, 0.5] rad holds XPBD's 0.414 and VBD's 0.377 (8 and 64 iterations); the wrong-way turns
    were below -1.3 rad."""
    angle = _proximal_angle(solver_name, iterations)
    assert 0.0 <= angle <= 0.5, angle
