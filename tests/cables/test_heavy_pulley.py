"""A heavy pulley in an Atwood machine turns as Newton's second law says, however heavy it is.

newton 1.8's ``test_pulley_inertia_limit_locks_cable_travel`` builds this scene (1 kg and 3 kg on a
no-slip roller, mu = 10, of radius 0.15 m and 5000 kg, I = m R^2 / 2 = 56.25 kg m^2, a stiff cable
of 3e-8 m/N) and requires the rim to travel less than 5 mm in 80 frames at 60 Hz. Newton's second
law gives a = (m2 - m1) g / (m1 + m2 + I / R^2) = 19.62 / 2504 = 7.84e-3 m/s^2, so from rest the rim
travels a t^2 / 2 = 6.97 mm in 4/3 s: more than the test's bound. newton 1.8 itself turns the pulley
by 1.5e-5 m there (measured with the wheel): it locks a pulley that should turn. This checks that
ours does not (docs/migration.md, "Measured on newton's own code").
"""

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType
from newton_tendon.solvers import SolverVBD, SolverXPBD

SOLVERS = {"xpbd": SolverXPBD, "vbd": SolverVBD}
G = 9.81


def test_a_heavy_pulley_turns_at_the_atwood_rate(device, solver):
    """Rim travel R theta after 4/3 s against the closed form a t^2 / 2 = 6.965 mm. 3 %: the stiff
    cable's stretch (tensions of 10-30 N over 3e-8 m/N, below 1e-6 m) is negligible; the margin covers
    the Jacobi coupling of the joint rows with the cable rows at 12 substeps per frame, as in
    ``test_cables.test_atwood_massive_pulley_rolls`` (3 % there too)."""
    m1, m2, radius, mass = 1.0, 3.0, 0.15, 5000.0
    axis_inertia = 0.5 * mass * radius**2
    b = nt.ModelBuilder()
    y = (0.0, 1.0, 0.0)
    # A disc: the moments about its diameters are half the axial one (a rigid body's moments obey
    # the triangle inequality, which add_link checks).
    wheel = b.add_link(mass=mass, inertia=np.diag([0.5 * axis_inertia, axis_inertia, 0.5 * axis_inertia]))
    b.add_joint_revolute(-1, wheel, axis=y)
    left = b.add_body(xform=(-radius, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0), mass=m1, inertia=np.eye(3) * 1e-3)
    right = b.add_body(xform=(radius, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0), mass=m2, inertia=np.eye(3) * 1e-3)
    b.add_tendon(
        [
            TendonGuide(body=left),
            TendonGuide(
                body=wheel,
                guide_type=TendonGuideType.ROLLER,
                radius=radius,
                axis=y,
                orientation=1,
                mu=10.0,
                compliance=3.0e-8,
            ),  # fmt: skip
            TendonGuide(body=right, compliance=3.0e-8),
        ]
    )
    if solver == "vbd":
        b.color()
    model = b.finalize(device)
    sv = SOLVERS[solver](model, iterations=8)
    s0, s1 = model.state(), model.state()
    dt = 1.0 / 60.0 / 12.0
    for _ in range(80 * 12):
        sv.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
    q = s0.body_q.numpy().astype(np.float64)
    theta = abs(2.0 * np.arctan2(q[wheel, 4], q[wheel, 6]))
    a = (m2 - m1) * G / (m1 + m2 + axis_inertia / radius**2)
    t = 80.0 / 60.0
    assert radius * theta == pytest.approx(0.5 * a * t * t, rel=0.03)
    # No slip: the loads move with the rim (the light one up, the heavy one down).
    assert q[left, 2] + 1.0 == pytest.approx(radius * theta, rel=0.03)
    assert -(q[right, 2] + 1.0) == pytest.approx(radius * theta, rel=0.03)
