"""A roller turned against slack spans: what the accepted state holds (issue 42).

A kinematic frictional roller (mu = 10, r = 0.1 m) carries a cable between two kinematic anchors, both
spans at their rest length (zero tension). Turning the roller by phi = 0.4 rad cannot move cable: the
capstan relation T_tight <= exp(mu theta) T_slack with T_slack = 0 allows no tension on the tight side.

- Turned by its angular velocity during the step, the roller moves no cable, damped or not.
- Turned by a pose edit between steps, the step starts from a State in which the cable stuck to the
  roller: the material points on its rim moved r phi = 0.04 m, so the tight span starts stretched by
  C_0 = 0.04 m (40 kN at c = 1e-6 m/N) and the slack one slack by as much. The step lets the cable
  slip until the tight span's tension, spring and damper together, is zero (the capstan bound). A
  Kelvin-Voigt span (spring 1/c, damper d) relaxes with tau = c d; backward Euler over dt leaves

      C_1 = C_0 gamma / (1 + gamma),   gamma = c d / dt,

  the spring's C_1/c against the damper's d (C_1 - C_0)/dt, which sum to zero. At d = 100 N s/m
  (gamma = 0.006) that is 2.3857e-4 m and 238.6 N of spring with -238.6 N of damper: the state newton's
  ``test_vbd_rolling_spin_does_not_add_damping_tension`` reads as transport. Without damping
  nothing moves. Each later step relaxes the remnant by the same factor.
"""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType

from ..helpers import Sim

DT = 1.0 / 60.0
R = 0.1
PHI = 0.4
C = 1.0e-6
MU = 10.0


def _spun_roller(damping: float):
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    left = b.add_body(xform=(-0.4, 0, 0, 0, 0, 0, 1), is_kinematic=True)
    pulley = b.add_body(xform=(0.0, 0, 0, 0, 0, 0, 1), is_kinematic=True)
    right = b.add_body(xform=(0.4, 0, 0, 0, 0, 0, 1), is_kinematic=True)
    span = dict(compliance=C, damping=damping)
    b.add_tendon(
        [
            TendonGuide(body=left),
            TendonGuide(body=pulley, guide_type=TendonGuideType.ROLLER, radius=R, axis=(0, 0, 1), mu=MU, **span),
            TendonGuide(body=right, **span),
        ]
    )
    return b, pulley


def _relaxed(c0: float, damping: float) -> float:
    """Backward Euler of a Kelvin-Voigt span whose end slips freely: C_1 = C_0 gamma / (1 + gamma)."""
    gamma = C * damping / DT
    return c0 * gamma / (1.0 + gamma)


@pytest.mark.parametrize("damping", [0.0, 100.0])
def test_roller_turned_by_its_velocity_moves_no_cable(device, solver, damping):
    """Spun at phi/dt during the step against two spans at zero tension: the accepted rest lengths are
    the initial ones to float32 rounding of 0.4 m spans (1e-7 m)."""
    b, pulley = _spun_roller(damping)
    sim = Sim(b, device, solver=solver, contacts=False)
    rest0 = sim.solver.tendon_segment_rest_length.numpy().astype(np.float64)
    qd = sim.state_0.body_qd.numpy()
    qd[pulley, 3:6] = (0.0, 0.0, PHI / DT)
    sim.state_0.body_qd.assign(qd)
    sim.step(DT)
    q = sim.state_0.body_q.numpy()[pulley]
    assert 2.0 * np.arctan2(q[5], q[6]) == pytest.approx(PHI, abs=1e-6)  # it turned
    moved = sim.solver.tendon_segment_rest_length.numpy() - rest0
    np.testing.assert_allclose(moved, 0.0, atol=1e-7)


@pytest.mark.parametrize("damping", [0.0, 100.0])
def test_roller_turned_by_a_pose_edit_relaxes_as_a_damped_span(device, solver, damping):
    """Turned by a pose edit: after one step the tight span holds C_0 gamma/(1+gamma) of stretch,
    C_0 = r phi, and its spring and damper sum to zero on the accepted state (capstan bound with a
    slack other side); the next step relaxes it by gamma/(1+gamma) again. Tolerance: float32 rest
    lengths of 0.4 m spans (3e-8 m per ulp) against a 2.4e-4 m remnant, 1e-3 relative + 1e-7 m."""
    b, pulley = _spun_roller(damping)
    sim = Sim(b, device, solver=solver, contacts=False)
    rest0 = sim.solver.tendon_segment_rest_length.numpy().astype(np.float64)
    q = sim.state_0.body_q.numpy()
    q[pulley, 3:] = (0.0, 0.0, np.sin(0.5 * PHI), np.cos(0.5 * PHI))
    sim.state_0.body_q.assign(q)
    c0 = R * PHI  # the stretch the edit's stuck cable starts the step with [m]
    expected = [_relaxed(c0, damping)]
    expected.append(_relaxed(expected[0], damping))
    for k, c1 in enumerate(expected):
        sim.step(DT)
        # The spans' lengths do not change (kinematic ends, a roller turning in place), so the stretch
        # C = l - L of the tight span is the material it lacks and the slack span holds the rest.
        moved = sim.solver.tendon_segment_rest_length.numpy().astype(np.float64) - rest0
        tight = int(np.argmin(moved))
        stretch = -moved[tight]
        assert stretch == pytest.approx(c1, rel=1e-3, abs=1e-7), (k, moved)
        assert moved.sum() == pytest.approx(0.0, abs=1e-7)  # no cable created
        # The capstan bound on the accepted state: spring plus damper of the tight span is zero, to
        # the rounding of its float32 material (1e-7 m, a few ulps of 0.4 m) times 1/c + d/dt.
        c_start = c0 if k == 0 else expected[k - 1]
        spring = stretch / C
        damper = damping * (stretch - c_start) / DT
        rounding = 1e-7 * (1.0 / C + damping / DT)
        assert spring + damper == pytest.approx(0.0, abs=rounding), (k, spring, damper)
        # The diagnostics report the two apart (before issue 42, 0.029 N of spring and no damper).
        reported_spring = float(sim.solver.tendon_segment_material_tension.numpy()[tight])
        reported_damper = float(sim.solver.tendon_segment_damping_tension.numpy()[tight])
        assert reported_spring == pytest.approx(spring, rel=1e-3, abs=rounding)
        assert reported_damper == pytest.approx(damper, rel=1e-3, abs=rounding)
