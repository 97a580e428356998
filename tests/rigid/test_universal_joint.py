"""A D6 joint with two angular axes: a universal (Cardan) joint, MuJoCo's two hinges in one body (issue 27).

The coordinates are successive rotations ``rel = R(a_0, q_0) R(a_1, q_1)``; the joint locks the third
rotation about ``a_0 x a_1`` (kernels/joints/coordinates.py, ``universal_axes``). MuJoCo is the oracle: the same
body with two hinges in an MJCF file (``add_mjcf`` builds the D6 joint from it) gives body orientations
at random coordinates, trajectories under gravity, and the response to a joint torque.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.kernels.joints import universal_axes
from newton_tendon.solvers import SolverVBD, SolverXPBD

mujoco = pytest.importorskip("mujoco")

SOLVERS = {"xpbd": SolverXPBD, "vbd": SolverVBD}

ARM = """<mujoco><option timestep="{dt}" integrator="implicitfast" gravity="0 0 {g}"/><worldbody>
<body name="arm" pos="0 0 1" euler="10 20 30">
  <joint name="a" type="hinge" axis="1 0 0" {joint_a}/><joint name="b" type="hinge" axis="0 1 0" {joint_b}/>
  <geom type="capsule" fromto="0 0 0 0.1 0.05 -0.4" size="0.03" density="1000"/>
</body></worldbody></mujoco>"""


def arm(dt=1e-3, g=-9.81, joint_a="", joint_b=""):
    return ARM.format(dt=dt, g=g, joint_a=joint_a, joint_b=joint_b)


def load(xml: str, solver: str | None = None, **kw):
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    if solver == "vbd":
        b.color()
    model = b.finalize("cpu")
    sim = SOLVERS[solver](model, **kw) if solver else None
    return model, info, sim


def start(model, q, qd):
    state = model.state()
    nt.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), state)
    return state


def test_two_hinges_are_one_universal_joint_with_mujocos_kinematics():
    """Two hinges in one body import as one D6 joint with two angular axes. At 20 random coordinates
    our forward kinematics orients the body as MuJoCo does (quaternions equal up to sign, 1e-6), and
    the coordinates and rates read back from the body poses and velocities are the ones given (2e-6
    rad, 2e-5 rad/s: float32 poses)."""
    xml = arm()
    model, info, _ = load(xml)
    assert model.joint_dof_dim.numpy().tolist() == [[0, 2]]
    assert info.joint_coords == {"a": (0, 0), "b": (1, 1)}
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(4)
    for _ in range(20):
        q = rng.uniform(-1.4, 1.4, 2)
        qd = rng.normal(size=2)
        data.qpos[:] = q
        mujoco.mj_forward(mj, data)
        state = start(model, q, qd)
        ours = state.body_q.numpy()[0]
        np.testing.assert_allclose(ours[:3], data.xpos[1], atol=1e-6)
        assert abs(abs(float(ours[3:] @ data.xquat[1][[1, 2, 3, 0]])) - 1.0) < 1e-6
        joint_q, joint_qd = nt.eval_joint_coordinates(model, state)
        np.testing.assert_allclose(joint_q.numpy(), q, atol=2e-6)
        np.testing.assert_allclose(joint_qd.numpy(), qd, atol=2e-5)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_swinging_universal_joint_converges_to_mujoco(solver):
    """A link on a universal joint swings under gravity from q = (0.3, -0.5) rad, qd = (1, 2) rad/s
    for 0.5 s, here and in MuJoCo (implicitfast). Both integrators are first order, so the largest
    coordinate difference over the swing shrinks with the step: measured 0.0274 rad at 2 ms and
    0.0069 rad at 0.5 ms on both solvers (ratio 3.98). Checked: ratio in [3.5, 4.5] (first-order
    convergence to MuJoCo's trajectory) and below 0.01 rad at 0.5 ms. The lock holds: the third
    rotation stays below 1e-4 rad."""
    worst = {}
    for dt in (2e-3, 5e-4):
        xml = arm(dt=dt)
        model, _info, sim = load(xml, solver, iterations=10)
        mj = mujoco.MjModel.from_xml_string(xml)
        data = mujoco.MjData(mj)
        q0, qd0 = np.array([0.3, -0.5]), np.array([1.0, 2.0])
        data.qpos[:], data.qvel[:] = q0, qd0
        s0, s1 = start(model, q0, qd0), model.state()
        control = model.control()
        err = lock = 0.0
        for _ in range(round(0.5 / dt)):
            mujoco.mj_step(mj, data)
            sim.step(s0, s1, control, None, dt)
            s0, s1 = s1, s0
            joint_q = nt.eval_joint_coordinates(model, s0)[0].numpy()
            err = max(err, float(np.abs(joint_q - data.qpos).max()))
            # The lock: the body's a_1 axis (body frame) stays across the parent's a_0, fixed in the
            # world at the body's orientation in the file (cos of their angle).
            a1_world = _rotate(s0.body_q.numpy()[0, 3:].astype(np.float64), np.array([0.0, 1.0, 0.0]))
            a0_world = _rotate(_frame_rot(mj), np.array([1.0, 0.0, 0.0]))
            lock = max(lock, abs(float(a0_world @ a1_world)))
        worst[dt] = err
        assert lock < 1e-4, lock
    ratio = worst[2e-3] / worst[5e-4]
    assert 3.5 <= ratio <= 4.5, worst
    assert worst[5e-4] < 0.01, worst


def _frame_rot(mj):
    """The body's rotation in the file (x, y, z, w): the parent frame of both hinges."""
    w, x, y, z = mj.body_quat[1]
    return np.array([x, y, z, w])


def _rotate(q, v):
    x, y, z, w = q
    u = np.array([x, y, z])
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_universal_joint_limits_and_drives(solver):
    """Limits and drives act on each coordinate of a universal joint. Limited to [-0.2, 0.2] rad on
    both axes and started at 3 rad/s on both, the link stays within the limits (by less than 0.01 rad:
    a hard row, XPBD at 10 iterations / VBD's penalty) over 1 s without gravity. With position drives
    (ke = 50 N m/rad, kd = 5 N m s/rad) to (0.3, -0.4) rad and no limits it settles there (2e-3 rad
    after 3 s)."""
    limited = 'range="-0.2 0.2" limited="true"'
    model, _info, sim = load(arm(g=0.0, joint_a=limited, joint_b=limited), solver, iterations=10)
    s0, s1 = start(model, [0.0, 0.0], [3.0, 3.0]), model.state()
    for _ in range(1000):
        sim.step(s0, s1, model.control(), None, 1e-3)
        s0, s1 = s1, s0
        q = nt.eval_joint_coordinates(model, s0)[0].numpy()
        assert np.all(np.abs(q) <= 0.21), q
    drive = 'stiffness="50" damping="5" springref="{}"'
    xml = arm(g=0.0, joint_a=drive.format(0.3 * 180 / np.pi), joint_b=drive.format(-0.4 * 180 / np.pi))
    model, _info, sim = load(xml, solver, iterations=10)
    s0, s1 = model.state(), model.state()
    for _ in range(3000):
        sim.step(s0, s1, model.control(), None, 1e-3)
        s0, s1 = s1, s0
    np.testing.assert_allclose(nt.eval_joint_coordinates(model, s0)[0].numpy(), [0.3, -0.4], atol=2e-3)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_joint_torques_on_a_universal_joint_match_mujoco(solver):
    """Generalized forces on the two coordinates (``joint_f``: the torque U^-T f whose power is
    f . qd) move the link as MuJoCo's ``qfrc_applied`` does: from rest at q = (0.4, 0.6) rad without
    gravity, f = (0.25, -0.4) N m for 0.2 s at 0.5 ms: the link turns 0.108 rad and the coordinates
    agree within 5e-4 rad (measured 8.3e-5 on XPBD, 2.5e-5 on VBD: the first-order step difference,
    small here because the motion starts from rest)."""
    dt = 5e-4
    xml = arm(dt=dt, g=0.0)
    model, _info, sim = load(xml, solver, iterations=10)
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    q0 = np.array([0.4, 0.6])
    data.qpos[:] = q0
    force = np.array([0.25, -0.4])
    data.qfrc_applied[:] = force
    s0, s1 = start(model, q0, [0.0, 0.0]), model.state()
    control = model.control()
    control.joint_f.assign(force.astype(np.float32))
    for _ in range(round(0.2 / dt)):
        mujoco.mj_step(mj, data)
        sim.step(s0, s1, control, None, dt)
        s0, s1 = s1, s0
    q = nt.eval_joint_coordinates(model, s0)[0].numpy()
    assert np.abs(data.qpos - q0).max() > 0.05  # it moved
    np.testing.assert_allclose(q, data.qpos, atol=5e-4)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_universal_joints_with_armature_in_three_worlds_match_one_world_runs(solver):
    """Features together: a universal joint whose second angle has armature (its row variant), a hinge
    with armature below it (a moving parent: the row, not the child's inertia), gravity and a ground
    contact, replicated into three worlds (an odd count) that start with different velocities. Each
    world's coordinates after 0.3 s equal the same scene run alone from that world's start (1e-6 rad:
    the worlds share no arithmetic; measured bitwise equal on the CPU). The arm hangs from 0.66 m, so
    its tip starts 3 cm clear of the ground: from 0.6 m it started 3 cm inside it, and the contact's
    push, the same in every world, swamped the start velocities (VBD's articulation pass left the
    worlds 0.007 rad apart)."""
    xml = """<mujoco><worldbody><geom type="plane" size="2 2 0.1"/>
      <body name="arm" pos="0 0 0.66"><joint name="a" axis="1 0 0"/><joint name="b" axis="0 1 0" armature="0.02"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
        <body name="tip" pos="0 0 -0.3"><joint name="c" axis="0 1 0" armature="0.01"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 -0.3" size="0.03"/></body>
      </body></worldbody></mujoco>"""
    part = nt.ModelBuilder()
    part.add_mjcf(xml)
    starts = [(1.0, -2.0, 0.5), (-0.5, 1.5, 3.0), (2.0, 0.0, -1.0)]

    def run(worlds):
        b = nt.ModelBuilder()
        b.replicate(part, len(worlds))
        if solver == "vbd":
            b.color()
        model = b.finalize("cpu")
        sim = SOLVERS[solver](model, iterations=10)
        qd = np.concatenate([np.asarray(w, dtype=np.float64) for w in worlds])
        s0, s1 = start(model, model.joint_q.numpy(), qd), model.state()
        pipeline = nt.CollisionPipeline(model)
        contacts = pipeline.contacts()
        for _ in range(150):
            pipeline.collide(s0, contacts)
            sim.step(s0, s1, model.control(), contacts, 2e-3)
            s0, s1 = s1, s0
        return nt.eval_joint_coordinates(model, s0)[0].numpy().reshape(len(worlds), 3)

    together = run(starts)
    assert np.abs(together - together[0]).max() > 0.05  # the worlds really differ
    for w, qd in enumerate(starts):
        np.testing.assert_allclose(together[w], run([qd])[0], atol=1e-6)


# ----------------------------------------------------------------------------------------------
# Past a quarter turn (issue 43): a Hooke joint has no singular pose


def _pendulum(kind: str, solver: str):
    """A 1 kg link (I = 1e-3) whose COM is 0.3 m along x from the joint at the origin, released
    horizontally under gravity: on a universal joint (``add_joint_d6`` or MJCF's two hinges in one
    body) about x then y, or on a hinge about y (the same motion: it swings about the second axis
    through q_1 = pi/2, straight down, and beyond)."""
    b = nt.ModelBuilder()
    if kind == "mjcf":
        b.add_mjcf(
            """<mujoco><worldbody><body name="link"><joint name="a" axis="1 0 0"/><joint name="b" axis="0 1 0"/>
            <inertial pos="0.3 0 0" mass="1" diaginertia="1e-3 1e-3 1e-3"/></body></worldbody></mujoco>"""
        )
    else:
        link = b.add_link(xform=(0.3, 0, 0, 0, 0, 0, 1), mass=1.0, inertia=1e-3 * np.eye(3))
        if kind == "d6":
            b.add_joint_d6(-1, link, angular_axes=[(1, 0, 0), (0, 1, 0)], child_xform=(-0.3, 0, 0, 0, 0, 0, 1))
        else:
            b.add_joint_revolute(-1, link, axis=(0, 1, 0), child_xform=(-0.3, 0, 0, 0, 0, 0, 1))
    if solver == "vbd":
        b.color()
    model = b.finalize("cpu")
    return model, SOLVERS[solver](model)


def _com_and_energy(model, state):
    """World COM of body 0 [m] and its energy (kinetic + gravity) [J], float64."""
    q = state.body_q.numpy()[0].astype(np.float64)
    qd = state.body_qd.numpy()[0].astype(np.float64)
    com = q[:3] + _rotate(q[3:], model.body_com.numpy()[0].astype(np.float64))
    inertia = model.body_inertia.numpy()[0].astype(np.float64)
    r = np.stack([_rotate(q[3:], e) for e in np.eye(3)], axis=1)
    w = qd[3:]
    energy = 0.5 * qd[:3] @ qd[:3] + 0.5 * w @ (r @ inertia @ r.T) @ w + 9.81 * com[2]
    return com, energy


@pytest.mark.parametrize("kind", ["d6", "mjcf"])
@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_universal_joint_swings_past_a_quarter_turn_as_a_hinge(solver, kind):
    """Released horizontally at the defaults (dt = 1/240 s, 2 s: three passes through q_1 = pi/2):
    the universal joint's link follows the hinge's to 1e-5 m, stays on its joint (COM 0.3 m from
    it, 1e-5 m), keeps q_0 = 0 (1e-5 rad) and never gains energy (the hinge loses 1.1 J of m g r =
    2.9 J to the solvers' first-order step; the two stay within 1e-3 J of each other). Before issue
    43 the successive-angle lock read q_0 as lock error at q_1 = pi/2: the energy jumped by 1.6 kJ
    (XPBD) and 6.5 kJ (VBD) at t = 0.31 s and on VBD the link left the joint by 8.5 m."""
    model, sim = _pendulum(kind, solver)
    hinge, hinge_sim = _pendulum("hinge", solver)
    s0, s1 = model.state(), model.state()
    h0, h1 = hinge.state(), hinge.state()
    _, e0 = _com_and_energy(model, s0)
    passes = 0
    below = False
    for _ in range(480):
        sim.step(s0, s1, model.control(), None, 1.0 / 240.0)
        hinge_sim.step(h0, h1, hinge.control(), None, 1.0 / 240.0)
        s0, s1, h0, h1 = s1, s0, h1, h0
        com, energy = _com_and_energy(model, s0)
        hinge_com, hinge_energy = _com_and_energy(hinge, h0)
        np.testing.assert_allclose(com, hinge_com, atol=1e-5)
        assert abs(np.linalg.norm(com) - 0.3) < 1e-5
        assert energy <= e0 + 1e-3 and abs(energy - hinge_energy) < 1e-3
        q = nt.eval_joint_coordinates(model, s0)[0].numpy()
        assert abs(q[0]) < 1e-5
        passes += int(below != (q[1] > 0.5 * np.pi))
        below = q[1] > 0.5 * np.pi
    assert passes >= 3, passes


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_universal_joint_through_a_quarter_turn_tracks_mujoco(solver):
    """A 3D swing that carries q_1 through pi/2: from q = (0.3, 1.3) rad, qd = (1, 5) rad/s under
    gravity, 0.5 s, here and in MuJoCo (implicitfast), at 2 ms and 0.5 ms. Both integrators are first
    order: the largest coordinate difference shrinks with the step, measured 0.182, 0.048 and
    0.0127 rad at 2, 0.5 and 0.125 ms on XPBD (VBD alike). Checked: ratio in [3.5, 4.5] and below
    0.06 rad at 0.5 ms; the lock holds (1e-4). Coordinates compare modulo 2 pi (ours are in
    (-pi, pi], MuJoCo's unwrapped)."""
    worst = {}
    for dt in (2e-3, 5e-4):
        xml = arm(dt=dt)
        model, _info, sim = load(xml, solver, iterations=10)
        mj = mujoco.MjModel.from_xml_string(xml)
        data = mujoco.MjData(mj)
        q0, qd0 = np.array([0.3, 1.3]), np.array([1.0, 5.0])
        data.qpos[:], data.qvel[:] = q0, qd0
        s0, s1 = start(model, q0, qd0), model.state()
        err = lock = 0.0
        crossed = False
        for _ in range(round(0.5 / dt)):
            mujoco.mj_step(mj, data)
            sim.step(s0, s1, model.control(), None, dt)
            s0, s1 = s1, s0
            joint_q = nt.eval_joint_coordinates(model, s0)[0].numpy()
            diff = (joint_q - data.qpos + np.pi) % (2.0 * np.pi) - np.pi
            err = max(err, float(np.abs(diff).max()))
            crossed |= bool(abs(data.qpos[1]) > 0.5 * np.pi)
            a1_world = _rotate(s0.body_q.numpy()[0, 3:].astype(np.float64), np.array([0.0, 1.0, 0.0]))
            a0_world = _rotate(_frame_rot(mj), np.array([1.0, 0.0, 0.0]))
            lock = max(lock, abs(float(a0_world @ a1_world)))
        assert crossed
        assert lock < 1e-4, lock
        worst[dt] = err
    ratio = worst[2e-3] / worst[5e-4]
    assert 3.5 <= ratio <= 4.5, worst
    assert worst[5e-4] < 0.06, worst


def test_universal_coordinates_at_and_past_a_quarter_turn():
    """Forward kinematics and the coordinates read back agree with MuJoCo at q_1 = +-pi/2 exactly and
    beyond (|q_1| up to 3 rad), q_0 anywhere in (-pi, pi): orientations equal up to sign (1e-6) and
    coordinates read back to 2e-6 rad (rates 2e-5 rad/s), where the successive-angle reading put
    q_0 into the lock at q_1 = +-pi/2."""
    xml = arm()
    model, _info, _ = load(xml)
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(7)
    cases = [(q0, q1) for q0 in (-2.5, 0.0, 0.7, 3.0) for q1 in (0.5 * np.pi, -0.5 * np.pi, 1.9, -2.6, 3.0)]
    for q in np.array(cases):
        qd = rng.normal(size=2)
        data.qpos[:] = q
        mujoco.mj_forward(mj, data)
        state = start(model, q, qd)
        ours = state.body_q.numpy()[0]
        assert abs(abs(float(ours[3:] @ data.xquat[1][[1, 2, 3, 0]])) - 1.0) < 1e-6
        joint_q, joint_qd = nt.eval_joint_coordinates(model, state)
        np.testing.assert_allclose(joint_q.numpy(), q, atol=2e-6)
        np.testing.assert_allclose(joint_qd.numpy(), qd, atol=2e-5)


@wp.kernel
def _universal_eval(rels: wp.array(dtype=wp.quat), out_q: wp.array(dtype=wp.vec3), out_u: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    q, u, n = universal_axes(wp.quat_identity(), rels[i], wp.vec3(1.0, 0.0, 0.0), wp.vec3(0.0, 1.0, 0.0))
    out_q[i] = q
    out_u[i] = u


def test_universal_coordinates_and_lock_against_finite_differences():
    """``universal_axes``: turning the child by a small rotation d (world) changes (q_0, q_1, q_2) by
    U^T d, U = [u_0 u_1 n] (the rate axes and the lock's direction), at random poses within 1e-3 rad
    of the lock, including q_1 = +-pi/2. Central differences with d = 1e-3 rad in float32: the
    second-order error is ~1e-6 rad, float32 rounding of the angles 1e-7/1e-3 and the lock's own
    residual enters at first order (1e-3 at q_1 = pi/2), so 3e-3."""
    rng = np.random.default_rng(3)
    base = []
    for _ in range(16):
        q0, q1 = rng.uniform(-3.0, 3.0), rng.choice([0.5 * np.pi, -0.5 * np.pi, rng.uniform(-3.0, 3.0)])
        lock = rng.uniform(-1e-3, 1e-3)  # the solvers hold the lock within 1e-4
        base.append(
            _quat_mul(_quat_mul(_axis_quat([1, 0, 0], q0), _axis_quat([0, 1, 0], q1)), _axis_quat([0, 0, 1], lock))
        )
    h = 1e-3
    for rel in base:
        rels = [rel]
        for k in range(3):
            for sign in (1.0, -1.0):
                d = np.zeros(3)
                d[k] = sign * h
                rels.append(_quat_mul(_rotvec_quat(d), rel))
        arr = wp.array(np.array(rels, dtype=np.float32), dtype=wp.quat)
        out_q = wp.zeros(len(rels), dtype=wp.vec3)
        out_u = wp.zeros(len(rels), dtype=wp.mat33)
        wp.launch(_universal_eval, dim=len(rels), inputs=[arr], outputs=[out_q, out_u])
        qs = out_q.numpy().astype(np.float64)
        u = out_u.numpy()[0].astype(np.float64)
        for k in range(3):
            dq = qs[1 + 2 * k] - qs[2 + 2 * k]
            dq = (dq + np.pi) % (2.0 * np.pi) - np.pi  # q_0 may wrap at +-pi
            expected = 2.0 * h * u[k, :]  # row k of U^T: (u_0, u_1, n) . e_k
            np.testing.assert_allclose(dq / (2.0 * h), expected / (2.0 * h), atol=3e-3)


def _axis_quat(axis, angle):
    axis = np.asarray(axis, dtype=np.float64)
    return np.concatenate([axis * np.sin(0.5 * angle), [np.cos(0.5 * angle)]])


def _rotvec_quat(v):
    angle = np.linalg.norm(v)
    return _axis_quat(v / angle, angle)


def _quat_mul(a, b):
    """Hamilton product of (x, y, z, w) quaternions."""
    av, aw = np.asarray(a[:3]), a[3]
    bv, bw = np.asarray(b[:3]), b[3]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), [aw * bw - av @ bv]])


def test_universal_joint_under_random_actions_with_contacts(tmp_path):
    """Features together: a universal joint (two damped hinges in one body, 0.1 N m s/rad) driven by
    two motors whose controls are uniform over the full range (+-1 N m), resampled every 0.1 s and
    different in each of 3 worlds, a capsule over a ground plane, gravity on, 2 s at the defaults,
    both solvers, against C MuJoCo on the same control sequences (``benchmarks/random_actions.py``):
    finite, the largest speeds within issue 43's bound (2x MuJoCo's + 0.5 m/s and + 5 rad/s)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "random_actions.py"
    spec = importlib.util.spec_from_file_location("_bench_random_actions", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    xml = tmp_path / "universal.xml"
    xml.write_text(
        """<mujoco><option timestep="0.005"/><default><joint damping="0.1"/></default><worldbody>
        <geom type="plane" size="2 2 0.1"/>
        <body name="arm" pos="0 0 0.5"><joint name="a" axis="1 0 0"/><joint name="b" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 -0.3" size="0.03"/></body></worldbody>
        <actuator><motor joint="a" ctrlrange="-1 1"/><motor joint="b" ctrlrange="-1 1"/></actuator></mujoco>"""
    )
    mj = mujoco.MjModel.from_xml_path(str(xml))
    ctrl = bench.control_schedule(mj, 3, 400, seed=7)
    ref = bench.mujoco_run(mj, ctrl)
    # The sequences carry q_1 through +-pi/2 (MuJoCo's run, world 0: 26 of its steps within
    # |cos q_1| < 0.05), where the successive-angle lock broke.
    data = mujoco.MjData(mj)
    near = 0
    for k in range(400):
        data.ctrl[:] = ctrl[k, 0]
        mujoco.mj_step(mj, data)
        near += int(abs(np.cos(data.qpos[1])) < 0.05)
    assert near > 0
    for solver in ("xpbd", "vbd"):
        ours = bench.our_run(str(xml), mj, ctrl, solver, iterations=8, substeps=1)
        assert ours["finite"], solver
        assert ours["lin"] <= 2.0 * ref["lin"] + 0.5, (solver, ours, ref)
        assert ours["ang"] <= 2.0 * ref["ang"] + 5.0, (solver, ours, ref)
