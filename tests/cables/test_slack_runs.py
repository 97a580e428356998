"""Slack cable over frictionless guides: no force, no flow (issue 42).

A run of spans joined by frictionless guides shares one tension while it is taut (spec: material
slides freely through a frictionless pinhole). When the run is slack overall (the members' mean
predicted tension is negative) no tension pulls material anywhere: slack members keep their cable,
and a taut member only takes what brings it to zero tension, from the slack ones. Before, the run
shared one negative tension: two slack spans of 1 m and 2 m with 3 m of cable each traded 0.5 m in
one step (newton's ``test_slack_pinhole_does_not_redistribute``).
"""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType

from ..helpers import Sim

DT = 1.0 / 60.0


def _three_kinematic(rest_left: float, rest_right: float, right_x: float = 2.0):
    """Kinematic anchor at x = -1, kinematic frictionless pinhole at 0, kinematic anchor at ``right_x``."""
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    left = b.add_body(xform=(-1.0, 0, 0, 0, 0, 0, 1), is_kinematic=True)
    pin = b.add_body(xform=(0.0, 0, 0, 0, 0, 0, 1), is_kinematic=True)
    right = b.add_body(xform=(right_x, 0, 0, 0, 0, 0, 1), is_kinematic=True)
    b.add_tendon(
        [
            TendonGuide(body=left),
            TendonGuide(body=pin, guide_type=TendonGuideType.PINHOLE, compliance=1e-6, rest_length=rest_left),
            TendonGuide(body=right, compliance=1e-6, rest_length=rest_right),
        ]
    )
    return b


def test_two_slack_spans_keep_their_cable(device, solver):
    """1 m and 2 m spans with 3 m of cable each: after 10 steps both still hold 3 m (float32 rounding
    of a 3 m length, 2.4e-7 m), and neither reports tension."""
    sim = Sim(_three_kinematic(3.0, 3.0), device, contacts=False, solver=solver, iterations=4)
    sim.step(DT, 10)
    rest = sim.state_0.tendon_segment_rest_length.numpy()
    np.testing.assert_allclose(rest, [3.0, 3.0], atol=1e-6)
    assert np.all(sim.solver.tendon_segment_material_tension.numpy() == 0.0)


@pytest.mark.parametrize("rest_left, rest_right", [(0.9, 3.0), (0.99, 2.5)])
def test_a_taut_member_of_a_slack_run_takes_only_its_excess(device, solver, rest_left, rest_right):
    """The 1 m span is stretched (rest 0.9 or 0.99 m), the 2 m one slack by more: the run is slack
    overall. The taut span ends at zero tension, just straight (its rest = its 1 m length, to the
    stiff span's 1e-6 m/N x rounding), the slack one gives exactly that, and the total is conserved."""
    sim = Sim(_three_kinematic(rest_left, rest_right), device, contacts=False, solver=solver, iterations=4)
    total = rest_left + rest_right
    sim.step(DT, 5)
    rest = sim.state_0.tendon_segment_rest_length.numpy().astype(np.float64)
    assert abs(rest.sum() - total) < 1e-6, rest.sum() - total
    assert abs(rest[0] - 1.0) < 1e-5, rest
    assert rest[1] > 2.0  # still slack
    assert np.all(sim.solver.tendon_segment_material_tension.numpy() < 1e-3)


def test_a_taut_run_still_shares_one_tension(device, solver):
    """Both spans stretched (rest 0.95 and 1.85 m on 1 m and 2 m: 0.05 and 0.15 m): the run is taut
    and shares one tension, each span's stretch in proportion to its compliance (equal here), 0.1 m
    each, and the tensions agree to float32 rounding of the 1e-6 m/N stretch (0.1 N of 1.0e5 N)."""
    sim = Sim(_three_kinematic(0.95, 1.85), device, contacts=False, solver=solver, iterations=4)
    sim.step(DT, 5)
    rest = sim.state_0.tendon_segment_rest_length.numpy().astype(np.float64)
    np.testing.assert_allclose(rest, [0.9, 1.9], atol=1e-5)
    tension = sim.solver.tendon_segment_material_tension.numpy().astype(np.float64)
    assert tension[0] > 9.0e4 and abs(tension[0] - tension[1]) < 0.5, tension


def test_slack_runs_of_moving_bodies_in_three_worlds(device, solver):
    """Free 1 kg bodies (not kinematic ends) on slack spans over a hinged pinhole body, in 3 worlds
    with different slack (the right span holds 2.5, 3.0 and 3.5 m), contacts on and gravity off: no
    tension anywhere, so nothing moves the cable or the bodies over 20 steps, in every world."""
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_ground_plane(height=-5.0)
    left = b.add_body(xform=(-1.0, 0, 0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3) * 1e-2)
    pin = b.add_link(xform=(0.0, 0, 0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3) * 1e-2)
    b.add_joint_revolute(-1, pin, parent_xform=(0.0, 0, 0, 0, 0, 0, 1), axis=(0.0, 1.0, 0.0))
    right = b.add_body(xform=(2.0, 0, 0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3) * 1e-2)
    for body in (left, right):
        b.add_shape_sphere(body, radius=0.05)
    b.add_tendon(
        [
            TendonGuide(body=left),
            TendonGuide(body=pin, guide_type=TendonGuideType.PINHOLE, compliance=1e-6, rest_length=3.0),
            TendonGuide(body=right, compliance=1e-6, rest_length=3.0),
        ]
    )
    scene = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    scene.replicate(b, 3, spacing=(0.0, 3.0, 0.0))
    sim = Sim(scene, device, solver=solver)
    rest = np.array([[3.0, r] for r in (2.5, 3.0, 3.5)], dtype=np.float32).reshape(-1)
    sim.state_0.tendon_segment_rest_length.assign(rest)
    q0 = sim.body_q()
    sim.step(DT, 20)
    np.testing.assert_allclose(sim.state_0.tendon_segment_rest_length.numpy(), rest, atol=1e-6)
    np.testing.assert_allclose(sim.body_q(), q0, atol=1e-6)
    assert np.all(sim.solver.tendon_segment_material_tension.numpy() == 0.0)


@pytest.mark.parametrize("settle_tol, sweeps", [(1e-3, 16), (0.0, 64)])
def test_almost_slack_run_moves_only_the_excess(device, solver, settle_tol, sweeps):
    """newton's ``test_slack_tendon_settles_without_chasing_vanishing_tension`` scene, checked on the
    material: three 1 m spans over two frictionless pinholes (c = 1e-4 m/N), rest 1.001, 0.9999999 and
    1.001 m, one step at one iteration. The middle span is taut by 1e-7 m (1e-3 N), the run slack
    overall: the middle takes only its excess and ends just straight, the slack spans keep their
    cable, to two float32 ulps of 1 m (2.4e-7 m), with the early-out tolerance and with the full
    budget alike. (newton moves 0.33 mm between the slack spans here; its test reads 0 sweeps as
    settled and would pass that.)"""
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    bodies = [b.add_body(xform=(float(x), 0, 0, 0, 0, 0, 1), is_kinematic=True) for x in range(4)]
    rest = [1.001, 0.9999999, 1.001]
    pin = dict(guide_type=TendonGuideType.PINHOLE, compliance=1e-4)
    b.add_tendon(
        [
            TendonGuide(body=bodies[0]),
            TendonGuide(body=bodies[1], rest_length=rest[0], **pin),
            TendonGuide(body=bodies[2], rest_length=rest[1], **pin),
            TendonGuide(body=bodies[3], rest_length=rest[2], compliance=1e-4),
        ]
    )
    sim = Sim(b, device, contacts=False, solver=solver, iterations=1, tendon_max_sweeps=sweeps,
              tendon_settle_tol=settle_tol)  # fmt: skip
    before = sim.state_0.tendon_segment_rest_length.numpy().astype(np.float64)
    sim.step(DT)
    after = sim.solver.tendon_segment_rest_length.numpy().astype(np.float64)
    np.testing.assert_allclose(after, [before[0], 1.0, before[2]], atol=2.4e-7)
    assert abs(after.sum() - before.sum()) < 2.4e-7
    assert np.all(sim.solver.tendon_segment_material_tension.numpy() < 1e-3)
