"""SolverXPBD and SolverVBD on rigid bodies: integrator closed forms, joints, drives, limits and contacts.

Every physics test runs on both solvers through the ``solver`` fixture (tests/conftest.py) with the
same scene and the same closed form. Where the solvers' measured residuals differ by orders of
magnitude the bound is per solver, ``{"xpbd": ..., "vbd": ...}[solver]``, and the docstring states
both measurements (CPU, float32; a run on an H200 GPU measured the same orders and passed the
same bounds). XPBD's bounds are the original ones, except the joint-anchor bounds: since XPBD
solves each joint's rows as one block it measures VBD's residuals and shares VBD's bounds (CPU
measurements; not yet rerun on a GPU). VBD's augmented-Lagrangian multipliers drive
joint and contact residuals to a few float32 ulps within each step, so its bounds sit about 10-50x
above what it measured: tight enough to catch a row that stops converging. Where the solvers share
the code path (the integrator, the drives' closed form, the restitution pass) or measure alike, one bound
serves both.

XPBD-only: the relaxation arguments of ``SolverXPBD`` (VBD has penalty arguments instead, checked
in ``test_vbd_argument_validation``). VBD-only behaviour (colouring, multipliers in the State,
large time steps) is in tests/solvers/test_vbd.py.
"""

import math

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.solvers import SolverVBD, SolverXPBD

from ..helpers import Sim, capture_steps, quat_to_matrix

G = 9.81


def test_free_fall_matches_semi_implicit_euler(device, solver):
    """Free fall follows the semi-implicit Euler closed form x_n = x0 + n h v0 + h^2 g n(n+1)/2, v_n = v0 + n h g.

    Both solvers predict with the same integrator and have no row to solve: their results are
    identical (errors 6.6e-7 m, 8.9e-7 m, 2.8e-6 m/s measured), so the bounds are shared."""
    b = nt.ModelBuilder()
    b.add_body(xform=(0.0, 0.0, 10.0, 0, 0, 0, 1), mass=2.0, inertia=np.eye(3) * 0.1, velocity=(1.0, 0, 3.0, 0, 0, 0))
    sim = Sim(b, device, contacts=False, solver=solver)
    h, n = 1.0e-2, 100
    sim.step(h, n)
    x = sim.body_q()[0, :3]
    v = sim.body_qd()[0, :3]
    expect_z = 10.0 + n * h * 3.0 - G * h * h * n * (n + 1) / 2
    # float32 accumulates about n ulps of the ~10 m magnitude: 100 * 1e-6 m is a generous bound.
    assert x[0] == pytest.approx(1.0 * n * h, abs=1e-4)
    assert x[2] == pytest.approx(expect_z, abs=1e-4)
    assert v[2] == pytest.approx(3.0 - G * n * h, abs=1e-4)


def test_spinning_projectile_keeps_angular_momentum(device, solver):
    """A free asymmetric body spinning about a tilted axis keeps world angular momentum L = R I R^T w (no torque).

    Shared integrator, identical results on both solvers (drift 0.08 % measured)."""
    inertia = np.diag([0.1, 0.2, 0.3])
    b = nt.ModelBuilder()
    b.add_body(xform=(0, 0, 5, 0, 0, 0, 1), mass=1.0, inertia=inertia, velocity=(0.5, 0, 4, 2.0, 0.3, 5.0))
    sim = Sim(b, device, contacts=False, solver=solver)

    def momentum():
        q = sim.body_q()[0]
        r = quat_to_matrix(q[3:])
        return r @ inertia @ r.T @ sim.body_qd()[0, 3:]

    l0 = momentum()
    sim.step(1.0e-3, 1000)
    l1 = momentum()
    # The implicit gyroscopic step is dissipative at O(h): over 1 s at h = 1 ms the drift measured is
    # below 0.5 % (0.08 % now); 1 % bounds it while still catching a wrong inertia frame (errors of 10-100 %).
    assert np.linalg.norm(l1 - l0) / np.linalg.norm(l0) < 1.0e-2
    # The linear motion is still a parabola.
    assert sim.body_qd()[0, 2] == pytest.approx(4.0 - G * 1.0, abs=1e-3)


def _pendulum(theta0: float, d: float = 0.5, m: float = 1.0, icom: float = 0.01):
    b = nt.ModelBuilder()
    # Pivot at the world origin (z = 2), axis +Y; the COM hangs d below the pivot, rotated by theta0.
    c, s = math.cos(theta0), math.sin(theta0)
    rot = (0.0, math.sin(theta0 / 2), 0.0, math.cos(theta0 / 2))
    pos = (-d * s, 0.0, 2.0 - d * c)
    link = b.add_link(xform=(*pos, *rot), mass=m, inertia=np.eye(3) * icom)
    b.add_joint_revolute(
        -1, link, parent_xform=(0, 0, 2.0, 0, 0, 0, 1), child_xform=(0, 0, d, 0, 0, 0, 1), axis=(0, 1, 0)
    )
    return b


def test_pendulum_small_angle_period(device, solver):
    """Compound pendulum: small-angle period T = 2 pi sqrt(I / (m g d)), I = I_com + m d^2, within 1 %.

    Both solvers measure +1.6e-4 relative, the finite-amplitude correction theta0^2 / 16 of the
    closed form; the 1 % bound is shared. Hinge anchor residual measured: XPBD 2.4e-7 m (1.6e-5 m
    before its joint rows were solved as one block), VBD 2.5e-7 m (about one float32 ulp at 2 m):
    shared bound 1e-5 m."""
    d, m, icom = 0.5, 1.0, 0.01
    sim = Sim(_pendulum(0.05, d, m, icom), device, contacts=False, iterations=8, solver=solver)
    h = 1.0e-3
    angles = []
    anchor_err = 0.0
    for _ in range(3000):
        sim.step(h)
        q, _ = sim.joint_q()
        angles.append(q[0])
        bq = sim.body_q()[0]
        anchor = bq[:3] + quat_to_matrix(bq[3:]) @ np.array([0, 0, d])
        anchor_err = max(anchor_err, np.linalg.norm(anchor - np.array([0, 0, 2.0])))
    a = np.array(angles)
    # Upward zero crossings, linearly interpolated.
    idx = np.nonzero((a[:-1] < 0) & (a[1:] >= 0))[0]
    t = (idx + (-a[idx] / (a[idx + 1] - a[idx]))) * h
    period = np.mean(np.diff(t))
    expect = 2 * math.pi * math.sqrt((icom + m * d * d) / (m * G * d))
    assert period == pytest.approx(expect, rel=1e-2)
    # The hinge anchor stays attached within 1e-5 m, 40x the residual both solvers measure after 8
    # iterations at h = 1 ms (XPBD's joint block, VBD's augmented-Lagrangian row).
    assert anchor_err < 1.0e-5


def test_pendulum_joint_error_bound_over_10s(device, solver):
    """A large-swing pendulum keeps its hinge anchor within 1e-5 m (measured: XPBD 2.2e-7 m, 2.6e-5 m
    before its joint block; VBD 2.2e-7 m) and its axis aligned (both measure 0) over 10 s."""
    d = 0.5
    sim = Sim(_pendulum(1.2, d), device, contacts=False, iterations=8, solver=solver)
    worst = 0.0
    for _ in range(100):
        sim.step(1.0e-3, 100)
        bq = sim.body_q()[0]
        r = quat_to_matrix(bq[3:])
        anchor = bq[:3] + r @ np.array([0, 0, d])
        worst = max(worst, np.linalg.norm(anchor - np.array([0, 0, 2.0])))
        # The child axis stays the world Y axis.
        assert abs(abs((r @ np.array([0, 1.0, 0]))[1]) - 1.0) < 1e-4
    assert worst < 1.0e-5


def _slider(**kw):
    b = nt.ModelBuilder(gravity=0.0)
    body = b.add_link(xform=(0, 0, 0, 0, 0, 0, 1), mass=2.0, inertia=np.eye(3) * 0.1)
    b.add_joint_prismatic(-1, body, axis=(1, 0, 0), **kw)
    return b


def test_prismatic_limit_stops_the_slider(device, solver):
    """A slider pushed by a constant joint force stops at its upper limit (hard limit row).

    Measured: position error 0 on both solvers, rate 7.5e-6 m/s (XPBD) and 2.0e-5 m/s (VBD); the
    bounds are shared."""
    sim = Sim(_slider(limit_lower=-0.1, limit_upper=0.25), device, contacts=False, solver=solver)
    sim.control.joint_f.fill_(5.0)
    sim.step(1.0e-3, 2000)
    q, qd = sim.joint_q()
    # Hard limit: residual below 1e-4 m; velocity driven to zero by the position correction.
    assert q[0] == pytest.approx(0.25, abs=1e-4)
    assert abs(qd[0]) < 1e-2


def test_prismatic_joint_force_accelerates_child(device, solver):
    """A prismatic joint force F on a free slider gives acceleration F/m along the axis (virtual work).

    Both solvers measure 5.8e-6 relative (the force enters the shared prediction)."""
    sim = Sim(_slider(), device, contacts=False, solver=solver)
    sim.control.joint_f.fill_(4.0)
    sim.step(1.0e-3, 500)
    q, qd = sim.joint_q()
    assert qd[0] == pytest.approx(4.0 / 2.0 * 0.5, rel=1e-3)


def test_position_drive_reaches_target(device, solver):
    """A PD drive (ke, kd) on a prismatic joint settles at its target position.

    Both solvers use the implicit PD target q* = (ke q_t + kd/h (q + h v_t)) / (ke + kd/h); measured
    |q - 0.3| ~ 1e-6 m and |qd| 1.5e-5 m/s on both, so the bounds are shared."""
    sim = Sim(_slider(target_ke=200.0, target_kd=20.0), device, contacts=False, solver=solver)
    sim.control.joint_target_pos.fill_(0.3)
    sim.step(1.0e-3, 3000)
    q, qd = sim.joint_q()
    assert q[0] == pytest.approx(0.3, abs=1e-4)
    assert abs(qd[0]) < 1e-3


def test_revolute_drive_and_velocity_target(device, solver):
    """A revolute velocity drive (ke = 0, kd > 0) spins the child at the target rate.

    Measured relative rate error: XPBD 2.9e-5, VBD 1.9e-5; shared bound 1e-3."""
    b = nt.ModelBuilder(gravity=0.0)
    body = b.add_link(mass=1.0, inertia=np.eye(3) * 0.05)
    b.add_joint_revolute(-1, body, axis=(0, 0, 1), target_kd=5.0)
    sim = Sim(b, device, contacts=False, solver=solver)
    sim.control.joint_target_vel.fill_(2.0)
    sim.step(1.0e-3, 1000)
    _, qd = sim.joint_q()
    # Implicit damper with time constant I/kd = 10 ms: after 1 s the rate equals the target.
    assert qd[0] == pytest.approx(2.0, rel=1e-3)


def test_revolute_armature_adds_inertia(device, solver):
    """Armature a adds to the child's inertia about the hinge: angular acceleration tau / (I + a).

    Both solvers measure 7.0e-5 relative; shared bound 1e-3."""
    b = nt.ModelBuilder(gravity=0.0)
    body = b.add_link(mass=1.0, inertia=np.eye(3) * 0.05)
    b.add_joint_revolute(-1, body, axis=(0, 0, 1), armature=0.15)
    sim = Sim(b, device, contacts=False, solver=solver)
    sim.control.joint_f.fill_(0.4)
    sim.step(1.0e-3, 500)
    _, qd = sim.joint_q()
    assert qd[0] == pytest.approx(0.4 / 0.2 * 0.5, rel=1e-3)


def _resting(shape: str):
    b = nt.ModelBuilder()
    b.add_ground_plane()
    body = b.add_body(xform=(0.0, 0.0, 0.52, 0, 0, 0, 1))
    if shape == "sphere":
        b.add_shape_sphere(body, radius=0.5)
    else:
        b.add_shape_box(body, hx=0.5, hy=0.3, hz=0.5)
    return b


@pytest.mark.parametrize("shape", ["sphere", "box"])
def test_resting_on_ground(device, solver, shape):
    """A sphere or box dropped onto the ground comes to rest: penetration < 1 mm and drift < 1 mm after 5 s.

    Measured on both solvers: penetration <= 2.1e-5 m, no lateral drift, speed <= 1.2e-5; the bounds
    are shared."""
    sim = Sim(_resting(shape), device, solver=solver)
    sim.step(1.0 / 240.0, 5 * 240)
    q = sim.body_q()[0]
    # The lowest point sits 0.5 m below the body origin for both shapes.
    penetration = 0.5 - q[2]
    assert penetration < 1.0e-3
    assert q[2] < 0.5 + 1.0e-3
    assert np.linalg.norm(q[:2]) < 1.0e-3
    assert np.linalg.norm(sim.body_qd()[0]) < 1.0e-2


@pytest.mark.parametrize("mu", [0.7, 0.3])
def test_box_on_incline(device, solver, mu):
    """A box on a 25 degree incline sticks when tan(theta) = 0.466 < mu; otherwise it slides with
    Coulomb acceleration a = g (sin(theta) - mu cos(theta)).

    Measured creep while sticking / relative error of the sliding acceleration: XPBD (32 iterations)
    2.0e-5 m / 2.9e-5, VBD (8 iterations) 8.7e-8 m / 5.9e-4; the bounds (2e-4 m, 2 %) are shared."""
    theta = math.radians(25.0)
    b = nt.ModelBuilder()
    rot = (math.sin(theta / 2), 0.0, 0.0, math.cos(theta / 2))  # incline normal tilted about X
    b.add_shape_plane(-1, (0, 0, 0, *rot), mu=mu)
    n = np.array([0.0, -math.sin(theta), math.cos(theta)])
    body = b.add_body(xform=(*(n * 0.2), *rot))
    b.add_shape_box(body, hx=0.2, hy=0.2, hz=0.2, mu=mu)
    # XPBD: parallel (Jacobi) friction converges slowly when the downhill corners carry more load
    # than the uphill ones: 8 iterations leave a creep of ~1 cm/s, 32 iterations ~0.1 mm/s (measured).
    # VBD solves the box's four corner contacts together in one 6x6 block: 8 iterations suffice.
    sim = Sim(b, device, iterations={"xpbd": 32, "vbd": 8}[solver], solver=solver)
    h = 1.0 / 240.0
    sim.step(h, 60)
    x0 = sim.body_q()[0, :3].copy()
    v0 = sim.body_qd()[0, :3].copy()
    sim.step(h, 120)
    moved = np.linalg.norm(sim.body_q()[0, :3] - x0)
    if math.tan(theta) < mu:
        assert moved < 2.0e-4
    else:
        a = G * (math.sin(theta) - mu * math.cos(theta))
        dv = np.linalg.norm(sim.body_qd()[0, :3] - v0)
        # Position-level Coulomb friction reproduces the sliding acceleration to within 2 %.
        assert dv / 0.5 == pytest.approx(a, rel=2e-2)


def test_restitution_bounce(device, solver):
    """A ball hitting the ground at speed v leaves at about e v (e = 0.5, mean of the two shapes).

    Both solvers run the same velocity pass after their position iterations (both measure
    v_out = -e v_in to float32 precision); the 10 % bound is shared."""
    b = nt.ModelBuilder()
    b.add_ground_plane(restitution=0.5)
    body = b.add_body(xform=(0, 0, 0.3, 0, 0, 0, 1), velocity=(0, 0, -3.0, 0, 0, 0))
    b.add_shape_sphere(body, radius=0.1, restitution=0.5)
    sim = Sim(b, device, solver=solver)
    vz = []
    for _ in range(200):
        sim.step(1.0e-3)
        vz.append(sim.body_qd()[0, 2])
    vz = np.array(vz)
    v_in = vz.min()
    v_out = vz.max()
    # Position-level contact plus one velocity pass: the outgoing speed is within 10 % of e v_in.
    assert v_out == pytest.approx(-0.5 * v_in, rel=0.1)


def test_kinematic_body_follows_velocity_and_pushes(device, solver):
    """A kinematic body moves with its prescribed velocity regardless of contacts, and pushes a dynamic box.

    Measured pusher position / gap / box speed errors: XPBD (32 iterations) 3.9e-7 m / 4.0e-4 m /
    5.9e-4 m/s, VBD (8 iterations) 3.9e-7 m / 2.5e-6 m / 3.2e-6 m/s. Bounds: 1e-4 m for the pusher
    (shared integrator); gap 5e-3 m (XPBD) / 1e-4 m (VBD); speed 0.05 m/s (XPBD) / 1e-4 m/s (VBD)."""
    b = nt.ModelBuilder(gravity=0.0)
    pusher = b.add_body(xform=(-0.5, 0, 0, 0, 0, 0, 1), is_kinematic=True, velocity=(1.0, 0, 0, 0, 0, 0))
    b.add_shape_box(pusher, hx=0.1, hy=0.1, hz=0.1)
    box = b.add_body(xform=(0.0, 0, 0, 0, 0, 0, 1))
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)
    # XPBD: four parallel face contacts converge slowly under Jacobi averaging (each one sees the
    # box's rotational compliance): 32 iterations keep the first impact from overshooting. VBD
    # solves the four contacts in one block per body: its default 8 iterations suffice.
    sim = Sim(b, device, iterations={"xpbd": 32, "vbd": 8}[solver], solver=solver)
    sim.step(1.0e-2, 100)
    q = sim.body_q()
    assert q[pusher, 0] == pytest.approx(0.5, abs=1e-4)
    # The box rides ahead of the pusher at its speed, separated by the two half widths (XPBD: 5 mm
    # slack for the residual of the impact step; VBD's contact multiplier leaves micrometres).
    gap_tol, speed_tol = {"xpbd": (5e-3, 0.05), "vbd": (1e-4, 1e-4)}[solver]
    assert q[box, 0] - q[pusher, 0] == pytest.approx(0.2, abs=gap_tol)
    assert sim.body_qd()[box, 0] == pytest.approx(1.0, abs=speed_tol)


def test_joint_coordinates_of_revolute_and_prismatic(device):
    """eval_joint_coordinates returns the hinge angle/rate and slider displacement/rate from body poses."""
    b = nt.ModelBuilder()
    a = b.add_link(
        xform=(0, 0, 0, *(0.0, 0.0, math.sin(0.3), math.cos(0.3))),
        mass=1.0,
        inertia=np.eye(3),
        velocity=(0, 0, 0, 0, 0, 1.5),
    )
    b.add_joint_revolute(-1, a, axis=(0, 0, 1))
    s = b.add_link(xform=(0.7, 0, 1.0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3), velocity=(0.2, 0, 0, 0, 0, 0))
    b.add_joint_prismatic(-1, s, parent_xform=(0, 0, 1.0, 0, 0, 0, 1), axis=(1, 0, 0))
    model = b.finalize(device)
    q, qd = nt.eval_joint_coordinates(model, model.state())
    np.testing.assert_allclose(q.numpy(), [0.6, 0.7], atol=1e-6)
    np.testing.assert_allclose(qd.numpy(), [1.5, 0.2], atol=1e-6)


def _scene(mass: float = 1.0) -> nt.ModelBuilder:
    """A two-link chain hanging from the world plus a box dropping on the ground."""
    b = nt.ModelBuilder()
    l1 = b.add_link(xform=(0.25, 0, 2, 0, 0, 0, 1), mass=mass, inertia=np.eye(3) * 0.01)
    b.add_shape_capsule(
        l1,
        xform=(0, 0, 0, 0, math.sin(math.pi / 4), 0, math.cos(math.pi / 4)),
        radius=0.05,
        half_height=0.2,
        density=0.0,
    )
    b.add_joint_revolute(
        -1, l1, parent_xform=(0, 0, 2, 0, 0, 0, 1), child_xform=(-0.25, 0, 0, 0, 0, 0, 1), axis=(0, 1, 0)
    )
    l2 = b.add_link(xform=(0.75, 0, 2, 0, 0, 0, 1), mass=mass, inertia=np.eye(3) * 0.01)
    b.add_joint_revolute(
        l1, l2, parent_xform=(0.25, 0, 0, 0, 0, 0, 1), child_xform=(-0.25, 0, 0, 0, 0, 0, 1), axis=(0, 1, 0)
    )
    box = b.add_body(xform=(2.0, 0, 0.5, 0, 0, 0, 1))
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, density=500.0 * mass)
    return b


def _world_builder(masses):
    scene = nt.ModelBuilder()
    scene.add_ground_plane()
    for mass in masses:
        scene.add_world(_scene(mass))
    return scene


def test_replicated_worlds_match_single_world_runs(device, solver):
    """1024 worlds with a different mass each evolve exactly like the same world simulated alone."""
    n = 1024
    masses = np.linspace(0.5, 2.0, n)
    many = Sim(_world_builder(masses), device, solver=solver)
    many.step(1.0 / 120.0, 60)
    q_many = many.body_q().reshape(n, 3, 7)
    for k in (0, 511, 1023):
        one = Sim(_world_builder([masses[k]]), device, solver=solver)
        one.step(1.0 / 120.0, 60)
        # Same kernels, same per-world arithmetic in the same order: bitwise equal, not merely close
        # (VBD: every world is coloured alike and bodies of one colour share no row).
        np.testing.assert_array_equal(one.body_q(), q_many[k])


def test_identical_worlds_bitwise_and_runs_repeat(device, solver):
    """Identical worlds are bitwise identical; two runs from the same inputs are bitwise identical."""
    runs = []
    for _ in range(2):
        sim = Sim(_world_builder([1.0] * 8), device, solver=solver)
        sim.step(1.0 / 120.0, 60)
        runs.append(sim.body_q().reshape(8, 3, 7))
    np.testing.assert_array_equal(runs[0], runs[1])
    for w in range(1, 8):
        np.testing.assert_array_equal(runs[0][w], runs[0][0])


def test_state_assign_round_trip_continues_identically(device, solver):
    """Restoring a State.assign checkpoint and stepping again reproduces the same trajectory bit for bit
    (on VBD too: the step needs nothing but the State)."""
    sim = Sim(_world_builder([1.0, 1.5]), device, solver=solver)
    sim.step(1.0 / 120.0, 20)
    checkpoint = sim.model.state()
    checkpoint.assign(sim.state_0)
    sim.step(1.0 / 120.0, 30)
    first = sim.body_q()
    sim.state_0.assign(checkpoint)
    sim.step(1.0 / 120.0, 30)
    np.testing.assert_array_equal(sim.body_q(), first)


def test_captured_graph_replays_like_direct_stepping(device, solver):
    """A captured step sequence replays to the same state as stepping directly (bitwise)."""
    direct = Sim(_world_builder([1.0, 2.0]), device, solver=solver)
    direct.step(1.0 / 120.0, 40)
    sim = Sim(_world_builder([1.0, 2.0]), device, solver=solver)
    sim.step(1.0 / 120.0, 2)  # compile kernels outside the capture
    sim.state_0.assign(sim.model.state())
    sim.state_1.assign(sim.model.state())
    graph = capture_steps(sim, 1.0 / 120.0, 2)
    for _ in range(20):
        wp.capture_launch(graph)
    np.testing.assert_array_equal(sim.body_q(), direct.body_q())


def test_reset_restores_only_masked_worlds(device, solver):
    """solver.reset(state, world_mask) returns the selected worlds to the initial poses and leaves the rest.

    (VBD's multipliers are checked in tests/solvers/test_vbd.py.)"""
    sim = Sim(_world_builder([1.0, 1.0, 1.0]), device, solver=solver)
    sim.step(1.0 / 120.0, 30)
    before = sim.body_q().reshape(3, 3, 7)
    mask = sim.model.world_mask([1])
    sim.solver.reset(sim.state_0, mask)
    after = sim.body_q().reshape(3, 3, 7)
    initial = sim.model.body_q.numpy().reshape(3, 3, 7)
    np.testing.assert_array_equal(after[1], initial[1])
    np.testing.assert_array_equal(after[0], before[0])
    np.testing.assert_array_equal(after[2], before[2])


def test_solver_argument_validation():
    """SolverXPBD rejects non-positive iteration counts and relaxation outside (0, 2], naming the argument.

    XPBD-only: the relaxation factors exist only on SolverXPBD (see test_vbd_argument_validation)."""
    b = nt.ModelBuilder()
    b.add_body(mass=1.0)
    model = b.finalize("cpu")
    with pytest.raises(ValueError, match="iterations"):
        SolverXPBD(model, iterations=0)
    with pytest.raises(ValueError, match="joint_linear_relaxation"):
        SolverXPBD(model, joint_linear_relaxation=0.0)
    with pytest.raises(ValueError, match="rigid_contact_relaxation"):
        SolverXPBD(model, rigid_contact_relaxation=3.0)
    with pytest.raises(TypeError, match="model"):
        SolverXPBD("not a model")


def test_vbd_argument_validation():
    """SolverVBD rejects iterations < 1 (or not an int), penalty_min <= 0, penalty_max < penalty_min and
    penalty_growth < 0 (and non-finite penalties), naming the argument; the boundary values are accepted."""
    b = nt.ModelBuilder()
    b.add_body(mass=1.0)
    b.color()
    model = b.finalize("cpu")
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="iterations"):
            SolverVBD(model, iterations=bad)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="penalty_min"):
            SolverVBD(model, penalty_min=bad)
    for bad in (0.5, math.nan, math.inf):
        with pytest.raises(ValueError, match="penalty_max"):
            SolverVBD(model, penalty_min=1.0, penalty_max=bad)
    for bad in (-1.0e-3, math.nan, math.inf):
        with pytest.raises(ValueError, match="penalty_growth"):
            SolverVBD(model, penalty_growth=bad)
    with pytest.raises(TypeError, match="model"):
        SolverVBD("not a model")
    # Boundaries: penalty_max == penalty_min (a fixed penalty) and penalty_growth == 0 are valid.
    solver = SolverVBD(model, iterations=1, penalty_min=5.0, penalty_max=5.0, penalty_growth=0.0)
    assert solver.iterations == 1


def test_notify_body_properties_updates_inverse_mass(device, solver):
    """Editing body_mass in place and notifying BODY_PROPERTIES changes the response to a force (a = F/m).

    Both solvers measure the exact value (shared prediction); shared bound 1e-6 relative."""
    b = nt.ModelBuilder(gravity=0.0)
    b.add_body(mass=1.0, inertia=np.eye(3))
    sim = Sim(b, device, contacts=False, solver=solver)
    sim.model.body_mass.fill_(4.0)
    sim.solver.notify_model_changed(nt.ModelFlags.BODY_PROPERTIES)
    sim.state_0.body_f.assign(np.array([[8.0, 0, 0, 0, 0, 0]], dtype=np.float32))
    sim.solver.step(sim.state_0, sim.state_1, None, None, 0.1)
    assert sim.state_1.body_qd.numpy()[0, 0] == pytest.approx(8.0 / 4.0 * 0.1, rel=1e-6)


def test_fixed_joint_welds_child_to_parent(device, solver):
    """A fixed joint holds a heavy offset child rigidly: frames coincide within 1e-4 m / 1e-3 rad under gravity.

    Both solvers measure 0 / 0 (the body never leaves its frame); the bounds are shared."""
    b = nt.ModelBuilder()
    child = b.add_link(xform=(0.5, 0, 1.0, 0, 0, 0, 1), mass=2.0, inertia=np.eye(3) * 0.02)
    b.add_joint_fixed(-1, child, parent_xform=(0.5, 0, 1.0, 0, 0, 0, 1))
    sim = Sim(b, device, contacts=False, solver=solver)
    sim.step(1.0e-3, 1000)
    q = sim.body_q()[0]
    assert np.linalg.norm(q[:3] - [0.5, 0, 1.0]) < 1.0e-4
    # Rotation angle 2 asin(|xyz|) of the body quaternion.
    assert 2.0 * math.asin(min(1.0, np.linalg.norm(q[3:6]))) < 1.0e-3


def test_ball_joint_keeps_anchor_and_lets_child_swing(device, solver):
    """A ball joint keeps the anchors together while the child swings about two axes.

    Anchor residual measured: XPBD 1.8e-7 m (7.6e-6 m before its joint block), VBD 2.2e-7 m:
    shared bound 1e-5 m."""
    b = nt.ModelBuilder()
    child = b.add_link(xform=(0.3, 0.3, 1.0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_joint_ball(-1, child, parent_xform=(0, 0, 1.0, 0, 0, 0, 1), child_xform=(-0.3, -0.3, 0, 0, 0, 0, 1))
    sim = Sim(b, device, contacts=False, solver=solver)
    worst = 0.0
    for _ in range(50):
        sim.step(1.0e-3, 20)
        q = sim.body_q()[0]
        anchor = q[:3] + quat_to_matrix(q[3:]) @ np.array([-0.3, -0.3, 0.0])
        worst = max(worst, np.linalg.norm(anchor - [0, 0, 1.0]))
    assert worst < 1.0e-5
    # The COM has fallen along the sphere of radius |(0.3, 0.3)| around the anchor.
    q = sim.body_q()[0]
    assert q[2] < 0.9
    jq, jqd = sim.joint_q()
    assert jq.shape == (4,) and abs(np.linalg.norm(jq) - 1.0) < 1e-5


def test_free_joint_coordinates_are_the_body_pose(device, solver):
    """A free joint constrains nothing; its 7 coordinates are the body pose and its 6 rates the body velocity.

    Both solvers skip free joints and share the integrator (errors 1.3e-8 m, 7.8e-8 m): shared bounds."""
    b = nt.ModelBuilder()
    body = b.add_body(xform=(0, 0, 3.0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3) * 0.1, velocity=(1.0, 0, 0, 0, 0, 2.0))
    b.add_joint_free(body)
    sim = Sim(b, device, contacts=False, solver=solver)
    sim.step(1.0e-2, 10)
    jq, jqd = sim.joint_q()
    np.testing.assert_allclose(jq, sim.body_q()[0], atol=1e-6)
    np.testing.assert_allclose(jqd, sim.body_qd()[0], atol=1e-6)
    # Free flight: x = v t, z = 3 - g h^2 n (n + 1) / 2.
    assert jq[0] == pytest.approx(0.1, abs=1e-5)
    assert jq[2] == pytest.approx(3.0 - G * 1e-4 * 55, abs=1e-5)


def test_revolute_limit_holds_pendulum(device, solver):
    """A pendulum pushed by a joint torque above its gravity moment stops at its upper joint limit.

    Measured after 1.2 s at 32 iterations: |q - 0.5| / |qd| = 0 rad / 1.2e-5 rad/s (XPBD; 2.7e-4 /
    5.6e-3 before its limit row joined the joint block) and 6e-8 rad / 6.8e-5 rad/s (VBD; 3e-7 /
    2.3e-4 on an H200 GPU): shared bounds 1e-5 / 2e-3."""
    b = _pendulum(0.0)
    b.joint_limit_lower[0] = -0.5
    b.joint_limit_upper[0] = 0.5
    # VBD needs 32 iterations: at 8 its limit multiplier, rebuilt each step from rho_min, lets the
    # link rebound to q = 0.0 after the impact at 2.6 rad/s and it is still swinging at 1.2 s (16:
    # q = 0.37, measured). XPBD stops it at 8 as well (test_revolute_limit_stops_link_without_rebound).
    sim = Sim(b, device, contacts=False, iterations=32, solver=solver)
    # Torque 3 N m exceeds the gravity moment m g d sin(0.5) = 2.35 N m, so the link rests on the limit.
    sim.control.joint_f.fill_(3.0)
    sim.step(1.0e-3, 1200)
    q, qd = sim.joint_q()
    assert q[0] == pytest.approx(0.5, abs=1e-5)
    assert abs(qd[0]) < 2e-3


@pytest.mark.parametrize("joint_solver", ["gauss_seidel", "jacobi"])
def test_revolute_limit_stops_link_without_rebound(device, joint_solver):
    """XPBD at the default 8 iterations: the pendulum of test_revolute_limit_holds_pendulum hits its
    limit at 2.6 rad/s and stops there (a hard position-level limit is an inelastic impact: the
    projection removes the approach velocity).

    The limit row is solved in the joint block with the anchor rows, so the pass that meets the
    limit also keeps the hinge. The default Gauss-Seidel joint pass solves the block without
    relaxation: measured rebound 9e-5 rad/s. The Jacobi pass's angular relaxation 0.4 leaves
    (1 - 0.4)^8 = 1.7 % of the impact step's error, a rebound of about 0.017 x 2.6 = 0.045 rad/s
    (measured 0.045 rad/s). Bound 0.1 for both. When the limit was a scalar row about the COM before
    the block, the block turned part of each correction back and the link rebounded at 1.56 rad/s
    and was still swinging at 1.2 s.
    XPBD only: VBD rebounds at 8 iterations (see test_revolute_limit_holds_pendulum)."""
    b = _pendulum(0.0)
    b.joint_limit_lower[0] = -0.5
    b.joint_limit_upper[0] = 0.5
    sim = Sim(b, device, contacts=False, iterations=8, solver="xpbd", joint_solver=joint_solver)
    sim.control.joint_f.fill_(3.0)
    rates, hit = [], False
    for _ in range(1200):
        sim.step(1.0e-3)
        q, qd = sim.joint_q()
        hit = hit or q[0] > 0.49
        if hit:
            rates.append(qd[0])
    assert hit
    assert min(rates) > -0.1
    # At rest on the limit at the end (measured 5e-6 rad, 6.5e-6 rad/s).
    assert q[0] == pytest.approx(0.5, abs=1e-4)
    assert abs(qd[0]) < 2e-3


# Light link on a long lever (issue 24, defect 2): a 1 kg body whose COM sits L = 1 m from a world
# hinge, with its own inertia I far below m L^2. The anchor rows' effective inverse mass
# k = 1/m + [r]x I^-1 [r]x^T then has eigenvalues 1/m (along the lever) and 1/m + L^2/I (across it),
# 1e6 apart at I = 1e-6 kg m^2.
LEVER_L = 1.0
LEVER_M = 1.0
# The hinge holds the COM on its circle: the requirement, 0.1 % of the lever. XPBD measures
# 3.7e-7 m (1.28e3 m before the block solve of the anchor rows), VBD 5.4e-7 m: far inside it, and
# far from the failure it catches.
LEVER_RADIUS_TOL = 1.0e-3
# Energy may never exceed its start by more than 1 % of m g L, the scene's energy scale (the drop
# from the horizontal to the bottom). Both solvers are first-order implicit in the constraint and so
# dissipate; a legitimate first-order integrator may still let the energy oscillate by about
# h w0 ~ 3e-3 of that scale (h = 1 ms, w0 = sqrt(g/L)), which 1 % clears three times over, while a
# scheme that feeds energy in passes it within a swing (before the fix: +6.5 % at I = 1e-3,
# +1.4e7 at I = 1e-6). Measured: the energy never rises above its start on either solver.
LEVER_ENERGY_TOL = 1.0e-2


def _light_lever(joint: str, inertia: float) -> nt.ModelBuilder:
    """The body starts at rest with its lever horizontal (+X from the hinge at z = 2 m)."""
    b = nt.ModelBuilder()
    link = b.add_link(xform=(LEVER_L, 0.0, 2.0, 0, 0, 0, 1), mass=LEVER_M, inertia=np.eye(3) * inertia)
    hinge, arm = (0, 0, 2.0, 0, 0, 0, 1), (-LEVER_L, 0, 0, 0, 0, 0, 1)
    if joint == "revolute":
        b.add_joint_revolute(-1, link, parent_xform=hinge, child_xform=arm, axis=(0, 1, 0))
    else:
        b.add_joint_ball(-1, link, parent_xform=hinge, child_xform=arm)
    return b


@pytest.mark.parametrize("inertia", [1.0e-6, 1.0e-3])
@pytest.mark.parametrize("joint", ["revolute", "ball"])
def test_light_link_on_long_lever_stays_on_its_circle(device, solver, joint, inertia):
    """A light link on a 1 m lever swings 2 s at the default settings (h = 1 ms): its COM stays on
    the circle |x - x_hinge| = L and its energy E = m g z + m v^2 / 2 + w^T (R I R^T) w / 2 never
    grows (a rigid pendulum with hard joint rows conserves E; the discrete solvers may only lose it).

    The issue's scene: before the fix XPBD left the circle by 1 mm at step 96 and reached 1.28 km
    (I = 1e-6) or 2.9 mm with +6.5 % of m g L (I = 1e-3); VBD met both bounds already."""
    sim = Sim(_light_lever(joint, inertia), device, contacts=False, solver=solver)
    hinge = np.array([0.0, 0.0, 2.0])
    inertia_b = np.eye(3) * inertia

    def energy(q, qd):
        r = quat_to_matrix(q[3:])
        w = qd[3:]
        return LEVER_M * G * q[2] + 0.5 * LEVER_M * qd[:3] @ qd[:3] + 0.5 * w @ (r @ inertia_b @ r.T) @ w

    e0 = energy(sim.body_q()[0], sim.body_qd()[0])
    worst_r, worst_e, min_x = 0.0, -math.inf, math.inf
    for _ in range(2000):
        sim.step(1.0e-3)
        q, qd = sim.body_q()[0], sim.body_qd()[0]
        worst_r = max(worst_r, abs(np.linalg.norm(q[:3] - hinge) - LEVER_L))
        worst_e = max(worst_e, energy(q, qd) - e0)
        min_x = min(min_x, q[0])
    assert worst_r < LEVER_RADIUS_TOL
    assert worst_e < LEVER_ENERGY_TOL * LEVER_M * G * LEVER_L
    # The link did swing through the bottom up to the far horizontal (it reaches it at 1.18 s, half
    # the large-amplitude period 7.42 sqrt(L/g) = 2.37 s), so both bounds were checked over the whole
    # range of angles; getting there at all also bounds the energy lost (x_min = -L cos(asin(dE/mgL))).
    assert min_x < -0.99 * LEVER_L


# A fixed joint holds its child within these of its weld over 0.5 s: 0.2 % of the 0.5 m arm and
# 1 mrad. Measured: XPBD 3.0e-5 m / 1.8e-4 rad, VBD 6.9e-5 m / 2.6e-4 rad, both at every Ix below
# (the residual of the first step, which stops the initial spin). Before XPBD solved a joint's
# anchor and orientation rows as one block: 0.61 m / 1.1 rad at Ix = 1e-6 within 0.5 s.
SOFT_AXIS_WELD_TOL = 1.0e-3
SOFT_AXIS_ANGLE_TOL = 1.0e-3


@pytest.mark.parametrize("ix", [1.0e-2, 1.0e-6])
def test_fixed_joint_holds_body_with_soft_axis_on_an_arm(device, solver, ix):
    """A fixed joint welds a spinning body whose inertia diag(Ix, 0.01, 0.01) has one soft axis,
    turned 45 deg about Z, COM 0.5 m from the weld: the body keeps its pose (C_l = 0, C_a = 0).

    Here the anchor rows' cheapest correction turns the body about its soft axis, which the
    orientation rows must undo: rows solved one after another fought each other (XPBD before the
    joint block, docs/xpbd.md "Joint rows"); the joint's rows solved together do not. The isotropic
    case (Ix = 0.01) is the control."""
    h = math.radians(45.0) / 2.0
    rot = (0.0, 0.0, math.sin(h), math.cos(h))
    r0 = quat_to_matrix(rot)
    b = nt.ModelBuilder()
    body = b.add_link(xform=(0.5, 0.0, 2.0, *rot), mass=1.0, inertia=np.diag([ix, 1.0e-2, 1.0e-2]))
    # Child joint frame at the world point (0, 0, 2), aligned with the world frame.
    b.add_joint_fixed(
        -1,
        body,
        parent_xform=(0, 0, 2.0, 0, 0, 0, 1),
        child_xform=(*(r0.T @ np.array([-0.5, 0.0, 0.0])), -rot[0], -rot[1], -rot[2], rot[3]),
    )
    sim = Sim(b, device, contacts=False, solver=solver)
    qd = sim.state_0.body_qd.numpy()
    qd[0, 3:] = (1.0, 2.0, 3.0)
    sim.state_0.body_qd.assign(qd)
    worst_x, worst_a = 0.0, 0.0
    for _ in range(50):
        sim.step(1.0e-3, 10)
        q = sim.body_q()[0]
        dr = quat_to_matrix(q[3:]) @ r0.T
        # Rotation angle of dr, accurate at small angles: atan2(|vee(dr - dr^T)| / 2, (tr dr - 1) / 2).
        vee = np.array([dr[2, 1] - dr[1, 2], dr[0, 2] - dr[2, 0], dr[1, 0] - dr[0, 1]])
        worst_a = max(worst_a, math.atan2(np.linalg.norm(vee) / 2.0, (np.trace(dr) - 1.0) / 2.0))
        worst_x = max(worst_x, np.linalg.norm(q[:3] - [0.5, 0.0, 2.0]))
    assert worst_x < SOFT_AXIS_WELD_TOL
    assert worst_a < SOFT_AXIS_ANGLE_TOL


# A joint drive on a link whose COM is off the joint (issue: SolverXPBD's drive added energy). The
# link has m = 1 kg and COM inertia I = 1e-3 kg m^2 per axis, its COM r = 0.25 m from the joint
# (revolute: the hinge, so the hinge's effective inertia is I + m r^2 = 0.0635 kg m^2; prismatic:
# across the slider axis, so the slider's orientation rows hold a lever). h = 1/240 s, 8 iterations.
# XPBD used to weigh the drive row against the COM inertia only (I, or 1/m + r^2/I at the prismatic
# anchor), 63.5x too light; the row now sits in the joint block with the anchor rows.
DRIVE_M = 1.0
DRIVE_I = 1.0e-3
DRIVE_R = 0.25
DRIVE_H = 1.0 / 240.0
DRIVE_HINGE = (0.0, 0.0, 2.0)
# A passive PD drive solved as implicit Euler never adds energy: for the 1-DOF system
# I_eff (v1 - v0) = h (ke (q_t - q1) + kd (qd_t - v1) + tau_g(q1)), q1 = q0 + h v1, the energy
# E = I_eff v^2 / 2 + ke (q - q_t)^2 / 2 + V_g(q) changes by -h kd v1^2 - I_eff (v1 - v0)^2 / 2
# - (ke + V_g'') (q1 - q0)^2 / 2 <= 0, as ke = 30 N m exceeds the hinge's |V_g''| <= m g r = 2.45 N m
# (the slider's V_g is linear). So E may rise only by the solver's rounding and convergence error:
# float32 resolves m g z at z = 2 m to m g 2.4e-7 m = 2.3e-6 J, and the Jacobi joint pass's
# relaxation 0.4 leaves (1 - 0.4)^8 = 1.7 % of each step's drive residual, which moved the
# gravity-loaded equilibrium by about 1.4e-3 rad (measured, DRIVE_STEADY_TOL), worth
# (ke + m g r sin q) dq^2 / 2 = 3.4e-5 J. 1e-4 J bounds both. Before the fix XPBD's hinge rose by 0.58 J (no gravity) and
# 0.55 J (gravity) within 0.5 s. Measured now on the hinge: XPBD 2.7e-9 J / 4.0e-5 J (no gravity /
# gravity), VBD 4.1e-9 J / 4.3e-6 J; on the slider both below 4e-9 J.
DRIVE_ENERGY_TOL = 1.0e-4


def _off_axis_drive(joint: str, q0: float, ke: float, kd: float, gravity: bool) -> nt.ModelBuilder:
    """Revolute: hinge about +Y at DRIVE_HINGE, the lever along +X at q = 0, turned to q0 (COM at
    (r cos q, 0, 2 - r sin q)). Prismatic: slider along +Z from DRIVE_HINGE, the child's anchor
    r = 0.25 m across the axis from its COM (COM at (r, 0, 2 + q))."""
    b = nt.ModelBuilder() if gravity else nt.ModelBuilder(gravity=0.0)
    hinge = (*DRIVE_HINGE, 0, 0, 0, 1)
    if joint == "revolute":
        rot = (0.0, math.sin(q0 / 2), 0.0, math.cos(q0 / 2))
        pos = (DRIVE_R * math.cos(q0), 0.0, DRIVE_HINGE[2] - DRIVE_R * math.sin(q0))
        link = b.add_link(xform=(*pos, *rot), mass=DRIVE_M, inertia=np.eye(3) * DRIVE_I)
        b.add_joint_revolute(
            -1,
            link,
            parent_xform=hinge,
            child_xform=(-DRIVE_R, 0, 0, 0, 0, 0, 1),
            axis=(0, 1, 0),
            target_ke=ke,
            target_kd=kd,
        )
    else:
        pos = (DRIVE_R, 0.0, DRIVE_HINGE[2] + q0)
        link = b.add_link(xform=(*pos, 0, 0, 0, 1), mass=DRIVE_M, inertia=np.eye(3) * DRIVE_I)
        b.add_joint_prismatic(
            -1,
            link,
            parent_xform=hinge,
            child_xform=(-DRIVE_R, 0, 0, 0, 0, 0, 1),
            axis=(0, 0, 1),
            target_ke=ke,
            target_kd=kd,
        )
    return b


def _drive_energy(sim: Sim, ke: float, q_t: float, gravity: bool) -> float:
    """E = m g z + m v^2 / 2 + w^T (R I R^T) w / 2 + ke (q - q_t)^2 / 2 [J], in float64."""
    q, qd = sim.body_q()[0], sim.body_qd()[0]
    r = quat_to_matrix(q[3:])
    w = qd[3:]
    jq, _ = sim.joint_q()
    g = G if gravity else 0.0
    kinetic = 0.5 * DRIVE_M * qd[:3] @ qd[:3] + 0.5 * w @ (r @ (np.eye(3) * DRIVE_I) @ r.T) @ w
    return DRIVE_M * g * q[2] + kinetic + 0.5 * ke * (jq[0] - q_t) ** 2


def _hinge_equilibrium(q_t: float, ke: float) -> float:
    """Root of ke (q_t - q) + m g r cos q = 0 (drive torque against the gravity moment about +Y:
    the moment of m g at the COM (r cos q, ., -r sin q) is m g r cos q, positive q lowers the COM),
    by fixed-point iteration (a contraction: m g r / ke = 0.08)."""
    q = q_t
    for _ in range(200):
        q = q_t + DRIVE_M * G * DRIVE_R * math.cos(q) / ke
    return q


@pytest.mark.parametrize("gravity", [False, True])
@pytest.mark.parametrize("joint", ["revolute", "prismatic"])
def test_drive_on_off_axis_link_never_gains_energy(device, solver, joint, gravity):
    """A PD drive pulling an off-axis link from rest towards its target (hinge: ke = 30 N m/rad,
    kd = 1 N m s/rad from q0 = 1 rad; slider: ke = 3000 N/m, kd = 10 N s/m from q0 = 0.1 m): over
    2 s the energy E = m g z + KE + ke (q - q_t)^2 / 2 never rises above its running minimum by more
    than DRIVE_ENERGY_TOL (implicit Euler of a passive PD drive is dissipative, see there), and the
    link does settle (it moved: E fell by most of its initial spring energy).

    The slider needs the stiffer drive to show the old defect: its row weighed the drive against
    1/m + r^2/I = 63.5 1/kg instead of 1/m, which matters once the drive's compliance 1/((ke +
    kd/h) h^2) (17.8 1/kg here) is below that; it then rose by 0.48 J (0.77 J with gravity) within
    0.1 s. Now below 4e-9 J on both solvers."""
    q0, q_t = (1.0, 0.0) if joint == "revolute" else (0.1, 0.0)
    ke, kd = (30.0, 1.0) if joint == "revolute" else (3000.0, 10.0)
    sim = Sim(_off_axis_drive(joint, q0, ke, kd, gravity), device, contacts=False, solver=solver)
    sim.control.joint_target_pos.fill_(q_t)
    e_min = e0 = _drive_energy(sim, ke, q_t, gravity)
    worst_rise = 0.0
    for _ in range(480):
        sim.step(DRIVE_H)
        e = _drive_energy(sim, ke, q_t, gravity)
        worst_rise = max(worst_rise, e - e_min)
        e_min = min(e_min, e)
    assert worst_rise < DRIVE_ENERGY_TOL
    # The drive did work on the link: the spring energy ke q0^2 / 2 (15 J both) is mostly gone
    # (kd and the solver's damping dissipate it; a drive that did nothing would keep it).
    assert e0 - e_min > 0.5 * (0.5 * ke * q0 * q0)


# Steady state of the drive (ke = 30, kd = 10) against gravity after 4 s, 12 decay times of the
# slowest mode (kd / ke = 0.33 s for the overdamped hinge, 2 m / kd = 0.2 s for the slider). At 32
# iterations each step's block solve converges to float32 rounding: measured |q - q_eq| <= 2.5e-7
# (XPBD) and 1.2e-6 (VBD, at 8 and 32 iterations), rad for the hinge and m for the slider; 1e-5 is
# 8x the float32 resolution of the 2 m scene. XPBD's default Gauss-Seidel joint pass solves the
# block without relaxation and gets there at 8 iterations too (measured <= 1.1e-6). Its Jacobi pass's
# angular relaxation 0.4 left (1 - 0.4)^8 = 1.7 % of each step's drive residual at 8 iterations:
# the residual at the start of a step is C0 ~ (ke / (ke + kd/h)) |q_eq - q_t| (lambda starts at 0),
# so the drive force was off by (ke + kd/h) (1 - 0.4)^8 C0, i.e. |dq| ~ (1 - 0.4)^8 |q_eq - q_t|
# = 1.4e-3 rad (hinge, q_t = 0; measured 1.4e-3), when it was the default and this bound was 3e-3.
# Before the block fix XPBD settled 6e-3 rad (q_t = 0) and 4.6e-2 rad (q_t = 1) off.
DRIVE_STEADY_TOL = {8: 1.0e-5, 32: 1.0e-5}


@pytest.mark.parametrize("iterations", [8, 32])
@pytest.mark.parametrize("q_t", [0.0, 1.0])
@pytest.mark.parametrize("joint", ["revolute", "prismatic"])
def test_drive_holds_off_axis_link_against_gravity(device, solver, joint, q_t, iterations):
    """The drive's steady state balances gravity: ke (q_t - q) + m g r cos q = 0 for the hinge (the
    gravity moment about +Y), ke (q_t - q) = m g for the vertical slider (q = q_t - m g / ke)."""
    ke, kd = 30.0, 10.0
    if joint == "revolute":
        expect = _hinge_equilibrium(q_t, ke)
    else:
        q_t *= 0.1  # a slider target of 0.1 m
        expect = q_t - DRIVE_M * G / ke
    tol = DRIVE_STEADY_TOL[iterations] if solver == "xpbd" else DRIVE_STEADY_TOL[32]
    builder = _off_axis_drive(joint, q_t, ke, kd, True)
    sim = Sim(builder, device, contacts=False, iterations=iterations, solver=solver)
    sim.control.joint_target_pos.fill_(q_t)
    sim.step(DRIVE_H, 960)
    q, qd = sim.joint_q()
    assert q[0] == pytest.approx(expect, abs=tol)
    # At rest: the residual motion is the decay left after 12 time constants (measured < 1e-4).
    assert abs(qd[0]) < 1.0e-3


@pytest.mark.parametrize("joint", ["revolute", "prismatic"])
def test_velocity_drive_on_off_axis_link_reaches_target_rate(device, solver, joint):
    """A pure damper drive (ke = 0, kd = 5) brings an off-axis link from rest to qd_t = 2 (rad/s or
    m/s): implicit Euler of I_eff dv/dt = kd (qd_t - v) relaxes with time constant I_eff / kd (13 ms
    hinge, 0.2 s slider), so after 2 s the rate is qd_t within e^-10 = 4.5e-5 relative.

    The hinge keeps a small lag: in maximal coordinates the COM's straight predicted step is
    projected back onto its circle, which takes about (w h)^2 of the speed per step, a drag
    I_eff w^3 h that the damper balances at qd_t - w = I_eff w^3 h / kd = 4.2e-4 rad/s (2.1e-4
    relative; measured 2.1e-3 rad/s at kd = 1 on both solvers, which fixed the factor). Measured
    qd_t - qd: hinge 3.2e-4 rad/s (XPBD) and 5.8e-4 rad/s (VBD), slider 7.5e-5 and 6.9e-5 m/s; bound
    1e-3 relative. Before the fix XPBD's hinge lagged by 2.9e-3 rad/s."""
    kd = 5.0
    sim = Sim(_off_axis_drive(joint, 0.0, 0.0, kd, False), device, contacts=False, solver=solver)
    sim.control.joint_target_vel.fill_(2.0)
    sim.step(DRIVE_H, 480)
    _, qd = sim.joint_q()
    assert qd[0] == pytest.approx(2.0, rel=1.0e-3)


def _implicit_euler_drive(q0, ke, kd, q_t, inertia, h, n):
    """Angles q_1..q_n of I (v' - v) = h (ke (q_t - q') + kd (0 - v')), q' = q + h v', from rest at q0, float64."""
    q, v = q0, 0.0
    out = np.empty(n)
    for i in range(n):
        v = (inertia * v + h * ke * (q_t - q)) / (inertia + h * h * ke + h * kd)
        q += h * v
        out[i] = q
    return out


@pytest.mark.parametrize("ke", [30.0, 300.0])
def test_hinge_drive_response_is_implicit_euler_of_the_hinge_inertia(device, solver, ke):
    """A hinged link released at q0 (0.2 rad; 0.1 rad for ke = 300) under a PD drive (kd = 1, q_t = 0,
    no gravity) follows,
    step by step for 1 s, the float64 implicit-Euler integration of the 1-DOF equation
    (I + m r^2) q'' = ke (q_t - q) - kd q' (64 iterations: each step's solve converged).

    Tolerance 6e-4 rad: in maximal coordinates the COM's straight predicted step is projected back
    onto its circle, which takes about (w h)^2 of the link's speed per step. With amplitude
    A = A0 e^(-t/tau), tau = 2 I_eff / kd = 0.127 s, and w ~ A w_n, that loses
    dA ~ w_n^2 h A0^3 tau / 6 over the run: 1.4e-4 rad (ke = 30, A0 = 0.2) and 4.2e-4 rad (ke = 300,
    A0 = 0.1). Measured 1.0e-4 rad and 7.7e-5 rad, both solvers (XPBD at 8 iterations: 1.4e-3 rad,
    the relaxation's leftover). Before the fix XPBD measured 9.7e-4 rad and 6.5e-3 rad at 64
    iterations. The same integration with the COM inertia I alone (what XPBD's drive row used to
    weigh) differs by 0.077 rad and 0.060 rad, which the test also checks it can tell apart."""
    q0, kd, n = 0.2, 1.0, 240
    if ke == 300.0:
        q0 = 0.1
    sim = Sim(_off_axis_drive("revolute", q0, ke, kd, False), device, contacts=False, iterations=64, solver=solver)
    sim.control.joint_target_pos.fill_(0.0)
    got = np.empty(n)
    for i in range(n):
        sim.step(DRIVE_H)
        got[i] = sim.joint_q()[0][0]
    i_eff = DRIVE_I + DRIVE_M * DRIVE_R**2
    expect = _implicit_euler_drive(q0, ke, kd, 0.0, i_eff, DRIVE_H, n)
    wrong = _implicit_euler_drive(q0, ke, kd, 0.0, DRIVE_I, DRIVE_H, n)
    assert np.max(np.abs(got - expect)) < 6.0e-4
    assert np.max(np.abs(wrong - expect)) > 2.0e-2


def test_slider_flung_out_along_a_turning_arm_keeps_its_energy(device, solver):
    """A 1 kg arm on a hinge with a 0.5 kg slider on an unlimited prismatic joint along it, released
    horizontal under gravity with no damping: the slider is flung out while the arm swings down,
    then slides off along the hanging arm (5.4 m by 1 s). The total energy (kinetic of both bodies,
    translation and rotation, plus potential) is checked against its start over 1 s at 2 ms.

    Both solvers gave the arm the lever arm of its own anchor, not of the point of the arm the slider
    is at; XPBD's energy ran away at 0.42 s (slider speed 176 m/s) and VBD's slider reached 8 m.
    Now XPBD loses energy monotonically, as position-level integration does (measured -0.10 J, the
    bound excludes any gain: 0.1 % of the energy released). VBD still gains 0.40 J of the 28.5 J
    released (1.4 %; bound 3 %) while the slider falls fast along the arm, and more at smaller
    steps (12.6 J at 0.5 ms; with the slide locked it loses energy): docs/limitations.md."""
    from newton_tendon import _hostmath as hm

    b = nt.ModelBuilder()
    arm = b.add_link(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_capsule(arm, (0.2, 0.0, 0.0, *hm.quat_from_axis_angle((0, 1, 0), math.pi / 2)), 0.03, 0.2, mass=1.0)
    slider = b.add_link(xform=(0.4, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_sphere(slider, None, 0.05, mass=0.5)
    b.add_joint_revolute(-1, arm, (0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), None, axis=(0, 1, 0))
    b.add_joint_prismatic(arm, slider, (0.4, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), None, axis=(1, 0, 0))
    sim = Sim(b, device, contacts=False, solver=solver)
    model = sim.model
    mass = model.body_mass.numpy().astype(np.float64)
    inertia = model.body_inertia.numpy().astype(np.float64)
    com = model.body_com.numpy().astype(np.float64)

    def energy():
        q = sim.state_0.body_q.numpy().astype(np.float64)
        qd = sim.state_0.body_qd.numpy().astype(np.float64)
        total = 0.0
        for k in range(2):
            r = quat_to_matrix(q[k, 3:])
            w = qd[k, 3:]
            # body_qd's linear part is the COM velocity (``State.body_qd``).
            total += 0.5 * mass[k] * qd[k, :3] @ qd[k, :3] + 0.5 * w @ (r @ inertia[k] @ r.T) @ w
            total += mass[k] * 9.81 * (q[k, :3] + r @ com[k])[2]
        return total

    e0 = energy()
    released = 0.0
    worst = -np.inf
    for _ in range(500):
        sim.step(2.0e-3, 1)
        e = energy()
        z = sim.state_0.body_q.numpy()[:, 2]
        released = max(released, float(mass @ (1.0 - z)) * 9.81)
        worst = max(worst, e - e0)
    assert np.isfinite(worst)
    assert sim.joint_q()[0][1] > 0.5  # the slider was flung out
    assert worst <= (0.001 if solver == "xpbd" else 0.03) * released, (worst, released)


@pytest.mark.parametrize("shape", ["sphere", "capsule"])
@pytest.mark.parametrize("dt", [1.0 / 200.0, 1.0 / 800.0])
def test_ball_rolls_on_without_gaining_or_losing_energy(device, solver, shape, dt):
    """A 3 cm ball (or a capsule lying across its roll) rolling without slipping at 1.5 m/s (50
    rad/s: 0.25 rad per 5 ms step) on the ground with mu 0.9: over 1 s its energy stays within 0.1 %
    and it rolls 1.5 m within 1 cm, about two steps of travel, on both solvers at both steps
    (measured: energy 1e-4; 1.4948 m at 5 ms, 1.4999 m at 1.25 ms).

    The non-penetration row used to measure from a body-fixed surface point, which turns away from
    the bottom as the ball rolls and pushed it on (+12 % energy on XPBD, +1400 % on VBD at 5 ms), and
    the restitution pass zeroed that rim point's rising velocity, which braked the roll; both now
    use the point under the centre (``contacts.round_shifts``), friction the body-fixed point."""
    from newton_tendon import _hostmath as hm

    b = nt.ModelBuilder()
    b.add_ground_plane(mu=0.9)
    body = b.add_body(xform=(0.0, 0.0, 0.03, 0.0, 0.0, 0.0, 1.0))
    if shape == "sphere":
        b.add_shape_sphere(body, None, 0.03, mass=0.056, mu=0.9)
    else:
        b.add_shape_capsule(
            body, (0, 0, 0, *hm.quat_from_axis_angle((1, 0, 0), math.pi / 2)), 0.03, 0.05, mass=0.1, mu=0.9
        )
    sim = Sim(b, device, solver=solver)
    qd = sim.state_0.body_qd.numpy()
    qd[0, 0], qd[0, 4] = 1.5, 1.5 / 0.03
    sim.state_0.body_qd.assign(qd)
    mass = float(sim.model.body_mass.numpy()[0])
    inertia = sim.model.body_inertia.numpy()[0].astype(np.float64)

    def energy():
        q = sim.state_0.body_q.numpy()[0].astype(np.float64)
        v = sim.state_0.body_qd.numpy()[0].astype(np.float64)
        return 0.5 * mass * v[:3] @ v[:3] + 0.5 * v[3:] @ inertia @ v[3:] + mass * 9.81 * q[2]

    e0 = energy()
    worst = 0.0
    n = round(1.0 / dt)
    for _ in range(n):
        sim.step(dt, 1)
        worst = max(worst, abs(energy() - e0) / e0)
    assert worst < 1e-3, worst
    assert sim.state_0.body_q.numpy()[0, 0] == pytest.approx(1.5, abs=1e-2)
