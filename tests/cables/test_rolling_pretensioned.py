"""Rollers that carry cable with both spans taut (issue 42): the intent of newton tests that we
exclude because they ask a roller to move cable against a slack side (docs/migration.md), kept on
scenes where the capstan law allows it.

- Rolling transfer: a kinematic roller (r = 0.1 m, mu = 10) turned by phi between two world anchors
  at +-0.4 m on its axis line, both spans pretensioned to T0 = 50 N (c = 1e-3 m/N). The wrap of the
  collinear route is theta = pi - 2 acos(r/0.4) = 0.505 rad, so the cable sticks while
  T_tight / T_slack <= exp(mu theta) = 156: turning by 0.2 rad rolls r phi = 20 mm from one span to
  the other (tensions 70 N and 30 N), whatever the iteration count or sweep budget.
- Reset after rolling restores the material; a checkpoint taken mid-roll replays to the bit.
- A same-body span (roller and anchor on one free body) is internal: the body moves under the
  external span alone, both spans taut over the frictionless roller sharing one tension.
"""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType

from ..helpers import Sim

DT = 1.0 / 60.0
R = 0.1
C = 1.0e-3
T0 = 50.0
PHI = 0.2
STEPS = 12


def _pretensioned_roller():
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    pulley = b.add_body(xform=(0.0, 0, 0, 0, 0, 0, 1), is_kinematic=True)
    length = np.sqrt(0.4**2 - R**2)  # each span's straight part; the arcs start at the tangent points
    span = dict(compliance=C, rest_length=length - T0 * C)
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=(-0.4, 0, 0)),
            TendonGuide(body=pulley, guide_type=TendonGuideType.ROLLER, radius=R, axis=(0, 0, 1), mu=10.0, **span),
            TendonGuide(body=-1, offset=(0.4, 0, 0), **span),
        ]
    )
    return b, pulley


def _spin(sim, pulley, omega):
    qd = sim.state_0.body_qd.numpy()
    qd[pulley, 3:6] = (0.0, 0.0, omega)
    sim.state_0.body_qd.assign(qd)


@pytest.mark.parametrize("iterations, sweeps", [(1, 256), (8, 256), (8, 1), (32, 4)])
def test_roller_rolls_cable_between_taut_spans(device, solver, iterations, sweeps):
    """Turned by 0.2 rad over 12 steps: the material of each span changes by r phi = 20 mm (float32
    rest lengths of 0.39 m spans, 1e-6 m), the total is conserved, the tensions are 50 +- 20 N
    (c = 1e-3 m/N: one float32 ulp of the stretch is 0.03 N; 0.1 N) and the same at every
    iteration count and sweep budget (newton's ``..._independent_of_iterations`` and
    ``..._of_cone_sweeps`` intent)."""
    b, pulley = _pretensioned_roller()
    sim = Sim(b, device, solver=solver, contacts=False, iterations=iterations, tendon_max_sweeps=sweeps)
    rest0 = sim.solver.tendon_segment_rest_length.numpy().astype(np.float64)
    np.testing.assert_allclose(sim.solver.tendon_segment_material_tension.numpy(), T0, atol=0.1)
    _spin(sim, pulley, PHI / (STEPS * DT))
    sim.step(DT, STEPS)
    q = sim.state_0.body_q.numpy()[pulley]
    turned = 2.0 * np.arctan2(q[5], q[6])
    assert turned == pytest.approx(PHI, abs=1e-5)
    moved = sim.solver.tendon_segment_rest_length.numpy().astype(np.float64) - rest0
    assert abs(moved.sum()) < 1e-6
    np.testing.assert_allclose(np.abs(moved), R * turned, atol=1e-6)
    tension = np.sort(sim.solver.tendon_segment_material_tension.numpy())
    np.testing.assert_allclose(tension, [T0 - R * turned / C, T0 + R * turned / C], atol=0.1)


def test_reset_and_checkpoint_after_rolling(device, solver):
    """Reset restores the construction material after 20 mm rolled (to float32, 1e-7 m) and a step
    with the roller held moves none; a State checkpoint taken after 6 of 12 rolling steps, assigned
    to a fresh State and stepped the same 6 steps, ends with bitwise equal material and poses (newton's
    reset and checkpoint-replay tests, with the rolled material the capstan law allows)."""
    b, pulley = _pretensioned_roller()
    sim = Sim(b, device, solver=solver, contacts=False)
    rest0 = sim.solver.tendon_segment_rest_length.numpy().copy()
    _spin(sim, pulley, PHI / (STEPS * DT))
    sim.step(DT, STEPS // 2)
    checkpoint = sim.model.state()
    checkpoint.assign(sim.state_0)
    sim.step(DT, STEPS // 2)
    rolled = sim.solver.tendon_segment_rest_length.numpy().copy()
    assert np.max(np.abs(rolled - rest0)) > 0.9 * R * PHI

    replay = sim.model.state()
    replay.assign(checkpoint)
    other = sim.model.state()
    for _ in range(STEPS // 2):
        sim.solver.step(replay, other, sim.control, None, DT)
        replay, other = other, replay
    np.testing.assert_array_equal(sim.solver.tendon_segment_rest_length.numpy(), rolled)
    np.testing.assert_array_equal(replay.body_q.numpy(), sim.state_0.body_q.numpy())

    fresh = sim.model.state()
    sim.solver.reset(fresh)
    np.testing.assert_allclose(sim.solver.tendon_segment_rest_length.numpy(), rest0, atol=1e-7)
    out = sim.model.state()
    sim.solver.step(fresh, out, sim.control, None, DT)
    np.testing.assert_allclose(sim.solver.tendon_segment_rest_length.numpy(), rest0, atol=1e-7)


def test_same_body_span_leaves_the_external_span_to_move_the_body(device, solver):
    """A free 1 kg body (I = 1) carries a frictionless roller and the cable's end; a world anchor's
    span reaches the roller. Both spans stretched 10 mm (c = 1e-3: 10 N each, shared over the
    roller). One step from rest: the same-body span is internal, so the body's COM moves by
    F dt^2 / m and it turns by (r_t x F)_z dt^2 / I with F = T n the external span's pull at its
    tangent point r_t and T the step's end tension (implicit). Within 0.5 %: the arm and the
    direction change by 5e-4 m over the step. newton's one-sweep test asks for a torque from a slack
    run; converged it reads T1 = 0.0098 N."""
    angle0 = 0.23
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_body(xform=(0, 0, 0, 0, 0, np.sin(angle0 / 2), np.cos(angle0 / 2)), mass=1.0, inertia=np.eye(3))
    span = dict(compliance=1e-3)
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=(-0.8, -0.5, 0)),
            TendonGuide(body=body, guide_type=TendonGuideType.ROLLER, radius=0.12, orientation=-1,
                        offset=(0.1, 0.15, 0), **span),
            TendonGuide(body=body, offset=(0.5, -0.3, 0), **span),
        ]
    )  # fmt: skip
    sim = Sim(b, device, solver=solver, contacts=False)
    tangent = sim.solver.tendon_segment_attachment_r.numpy()[0].astype(np.float64)
    n = np.array([-0.8, -0.5, 0.0]) - tangent
    n /= np.linalg.norm(n)
    sim.state_0.tendon_segment_rest_length.assign(sim.state_0.tendon_segment_rest_length.numpy() - 0.01)
    sim.step(1.0 / 120.0)
    tension = sim.solver.tendon_segment_material_tension.numpy().astype(np.float64)
    assert tension[0] == pytest.approx(tension[1], rel=1e-3)  # one run, one tension
    assert 9.0 < tension[0] < 10.0  # 10 N at the start, less once the body has moved
    force = tension[0] * n
    q = sim.state_0.body_q.numpy()[body].astype(np.float64)
    h2 = (1.0 / 120.0) ** 2
    np.testing.assert_allclose(q[:3], force * h2, rtol=5e-3)
    turned = 2.0 * np.arctan2(q[5], q[6]) - angle0
    assert turned == pytest.approx(np.cross(tangent, force)[2] * h2, rel=5e-3)
