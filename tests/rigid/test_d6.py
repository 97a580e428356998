"""D6 joints (``add_joint_d6``, newton's generic joint) on both solvers, and newton's per-dof API.

A D6 joint is free along up to three orthonormal linear axes and about zero to three angular axes
(kernels/joints/coordinates.py); two angular axes (a universal joint) are in ``test_universal_joint.py``. Its rows are the ones the other joints use, chosen by the free-axis counts
instead of the type, so a D6 joint with the axes of a revolute, prismatic, fixed or ball joint must
move exactly as that joint (bitwise: same rows, same arithmetic). The planar case (two linear axes and
the hinge across them, the joint of newton's pinhole and capstan tests) has no single-joint twin: it is
checked against the semi-implicit Euler closed form of a free body confined to the plane, and against a
chain of two sliders and a hinge with light intermediate links.
"""

import math

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon import Axis, JointTargetMode
from newton_tendon.io import load, save
from newton_tendon.kernels import types as T

from ..helpers import Sim, quat_to_matrix

Dof = nt.ModelBuilder.JointDofConfig
G = 9.81
H = 1.0 / 120.0

# A link whose COM is off the joint, spinning and moving in every direction at the start, so every
# locked row has something to remove and every free axis something to carry.
START_QD = (0.3, 0.2, -0.4, 0.5, 0.7, 0.1)


def _one_joint(add_joint, *, velocity=START_QD, mass=1.0, gravity=-G):
    b = nt.ModelBuilder(up_axis=Axis.Z, gravity=gravity)
    pose = (0.1, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    link = b.add_link(xform=pose, mass=mass, inertia=np.diag([0.02, 0.03, 0.04]), velocity=velocity)
    j = add_joint(b, link)
    b.add_articulation([j])
    return b


XP = (0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
XC = (-0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
TWINS = {
    "revolute": (
        lambda b, c: b.add_joint_revolute(-1, c, XP, XC, axis=Axis.Y, limit_lower=-0.2, limit_upper=0.3,
                                          target_pos=0.1, target_ke=50.0, target_kd=1.0),  # fmt: skip
        lambda b, c: b.add_joint_d6(-1, c, angular_axes=[Dof(axis=Axis.Y, limit_lower=-0.2, limit_upper=0.3,
                                    target_pos=0.1, target_ke=50.0, target_kd=1.0)],  # fmt: skip
                                    parent_xform=XP, child_xform=XC),  # fmt: skip
    ),
    "prismatic": (
        lambda b, c: b.add_joint_prismatic(-1, c, XP, XC, axis=Axis.Z, limit_lower=-0.05, limit_upper=0.5,
                                           target_pos=0.2, target_ke=20.0),  # fmt: skip
        lambda b, c: b.add_joint_d6(-1, c, linear_axes=[Dof(axis=Axis.Z, limit_lower=-0.05, limit_upper=0.5,
                                    target_pos=0.2, target_ke=20.0)], parent_xform=XP, child_xform=XC),  # fmt: skip
    ),
    "fixed": (
        lambda b, c: b.add_joint_fixed(-1, c, XP, XC),
        lambda b, c: b.add_joint_d6(-1, c, parent_xform=XP, child_xform=XC),
    ),
    "ball": (
        lambda b, c: b.add_joint_ball(-1, c, XP, XC),
        lambda b, c: b.add_joint_d6(-1, c, angular_axes=[Dof(axis=a) for a in "XYZ"], parent_xform=XP,
                                    child_xform=XC),  # fmt: skip
    ),
}


@pytest.mark.parametrize("kind", sorted(TWINS))
def test_d6_with_a_joints_axes_moves_as_that_joint(device, solver, kind):
    """Same rows, same arithmetic: the D6 joint's trajectory equals its twin's bitwise, with gravity,
    a start velocity on every axis, and (revolute, prismatic) a limit and a drive that both engage."""
    twin, d6 = TWINS[kind]
    runs = []
    for add in (twin, d6):
        sim = Sim(_one_joint(add), device, contacts=False, solver=solver)
        sim.step(H, 90)
        runs.append(sim.body_q())
    np.testing.assert_array_equal(runs[0], runs[1])


def _planar(velocity):
    return _one_joint(
        lambda b, c: b.add_joint_d6(
            -1,
            c,
            linear_axes=[Dof(axis=Axis.X), Dof(axis=Axis.Z)],
            angular_axes=[Dof(axis=Axis.Y)],
            parent_xform=XP,
            child_xform=XC,
        ),
        velocity=velocity,
    )


def test_planar_d6_follows_the_free_body_closed_form_in_its_plane(device, solver):
    """Planar joint (linear X and Z, angular Y; newton's pinhole tests): a body started with an in-plane
    velocity moves as a free body under gravity, x_n = x0 + n h vx, z_n = z0 + n h vz - g h^2 n(n+1)/2
    (semi-implicit Euler), turning at wy, and stays in its plane.

    The closed form is for the COM, whose in-plane motion no row touches (the locked rows act along Y
    and about X, Z only; the inertia's axes are the joint's). Bounds: float32 over 120 steps of ~1 m
    values, 1e-5 m and 1e-5 rad (measured 1e-6 and below); out of plane 1e-6 (measured < 1e-7).
    Started with the out-of-plane velocity too (y, about X and Z), the first step removes it and the
    body stays in the plane to the same 1e-6; its in-plane turn then differs from wy t at second
    order in the removed rates (the composition of the predicted and the corrected rotation; 1e-4 rad
    measured), so that run checks only the plane."""
    n = 120
    t = n * H
    in_plane = (START_QD[0], 0.0, START_QD[2], 0.0, START_QD[4], 0.0)
    for velocity in (in_plane, START_QD):
        sim = Sim(_planar(velocity), device, contacts=False, solver=solver)
        sim.step(H, n)
        q = sim.body_q()[0]
        qd = sim.body_qd()[0]
        assert abs(q[1]) < 1e-6 and abs(qd[1]) < 1e-6
        assert abs(q[3]) < 1e-6 and abs(q[5]) < 1e-6
        assert abs(qd[3]) < 1e-6 and abs(qd[5]) < 1e-6
        if velocity is in_plane:
            assert q[0] == pytest.approx(0.1 + START_QD[0] * t, abs=1e-5)
            assert q[2] == pytest.approx(1.0 + START_QD[2] * t - G * H * H * n * (n + 1) / 2, abs=1e-5)
            assert 2.0 * math.atan2(q[4], q[6]) == pytest.approx(START_QD[4] * t, abs=1e-5)


def test_planar_d6_matches_a_chain_of_two_sliders_and_a_hinge(device, solver):
    """The planar D6 joint against the chain world -> slider X -> slider Z -> hinge Y -> body, with a
    position drive on each axis, from rest, without gravity, for 1 s.

    The chain's two intermediate links weigh 1e-3 kg each against the body's 1 kg (0.1-0.2 % more mass
    on X and Z, no extra inertia on the angle). The reference chain runs on VBD at 64 iterations,
    which converges it (16 iterations: 5e-4 m and 1.3e-3 rad from 64); the D6 joint on either
    solver is within 1e-3 m and 1e-3 rad of it (measured 1e-4 m, 2e-4 rad on both). So is the chain
    on XPBD at its default 8 iterations (measured 0.4940 rad against 0.4941): its articulation pass
    solves the three joints' rows together. Joint by joint (the Gauss-Seidel pass), with links 1000
    times lighter than the body, the drives were far from converged (0.31 rad at 8 iterations, 0.70
    at 64)."""
    drives = dict(x=(0.3, 40.0, 4.0), z=(-0.2, 60.0, 5.0), a=(0.5, 8.0, 0.5))

    def dof(axis, key):
        tp, ke, kd = drives[key]
        return Dof(axis=axis, target_pos=tp, target_ke=ke, target_kd=kd)

    d6 = _one_joint(
        lambda b, c: b.add_joint_d6(
            -1,
            c,
            linear_axes=[dof(Axis.X, "x"), dof(Axis.Z, "z")],
            angular_axes=[dof(Axis.Y, "a")],
            parent_xform=XP,
            child_xform=XC,
        ),
        velocity=(0.0,) * 6,
        gravity=0.0,
    )
    chain = nt.ModelBuilder(up_axis=Axis.Z, gravity=0.0)
    light = 1.0e-3
    inertia = np.eye(3) * 1e-5
    s1 = chain.add_link(xform=XP, mass=light, inertia=inertia)
    s2 = chain.add_link(xform=XP, mass=light, inertia=inertia)
    link = chain.add_link(xform=(0.1, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.diag([0.02, 0.03, 0.04]))
    tx, kx, dx = drives["x"]
    tz, kz, dz = drives["z"]
    ta, ka, da = drives["a"]
    joints = [
        chain.add_joint_prismatic(-1, s1, XP, None, axis=Axis.X, target_pos=tx, target_ke=kx, target_kd=dx),
        chain.add_joint_prismatic(s1, s2, None, None, axis=Axis.Z, target_pos=tz, target_ke=kz, target_kd=dz),
        chain.add_joint_revolute(s2, link, None, XC, axis=Axis.Y, target_pos=ta, target_ke=ka, target_kd=da),
    ]
    chain.add_articulation(joints)
    out = []
    runs = [(d6, solver, 8), (chain, "vbd", 64)] + ([(chain, "xpbd", 8)] if solver == "xpbd" else [])
    for b, name, iters in runs:
        sim = Sim(b, device, contacts=False, solver=name, iterations=iters)
        sim.step(H, 120)
        out.append(sim.body_q()[-1])
    a, c = out[0], out[1]
    for q in [a, *out[2:]]:
        np.testing.assert_allclose(q[:3], c[:3], atol=1e-3)
        assert 2.0 * math.atan2(q[4], q[6]) == pytest.approx(2.0 * math.atan2(c[4], c[6]), abs=1e-3)
    ang = [2.0 * math.atan2(q[4], q[6]) for q in (a, c)]
    # Both moved toward their targets (the comparison is not of two bodies at rest).
    assert a[0] - 0.1 > 0.1 and 1.0 - a[2] > 0.05 and ang[0] > 0.2


def test_d6_linear_limit_stops_the_body_at_the_bound(device, solver):
    """Falling along the D6 joint's Z axis onto its lower limit -0.25 m (a hard row): it rests there,
    z = 1 - 0.25 at the joint frame (COM offset 0), within 1e-5 m (measured 1e-7)."""
    b = nt.ModelBuilder(up_axis=Axis.Z)
    link = b.add_link(xform=XP, mass=2.0, inertia=np.eye(3) * 0.01)
    b.add_joint_d6(-1, link, linear_axes=[Dof(axis=Axis.Z, limit_lower=-0.25, limit_upper=0.5)], parent_xform=XP)
    sim = Sim(b, device, contacts=False, solver=solver)
    sim.step(H, 240)
    q, qd = sim.joint_q()
    assert q[0] == pytest.approx(-0.25, abs=1e-5)
    assert abs(qd[0]) < 1e-3
    assert sim.body_q()[0, 2] == pytest.approx(0.75, abs=1e-5)


@pytest.mark.parametrize("axis", ["linear", "angular"])
def test_d6_drive_settles_at_its_target(device, solver, axis):
    """A PD drive (ke, kd: critically damped for the axis's inertia) on one D6 axis, no gravity: the
    coordinate ends at the target within 1e-4 (implicit PD converges monotonically; measured 1e-6)."""
    b = nt.ModelBuilder(up_axis=Axis.Z, gravity=0.0)
    link = b.add_link(xform=XP, mass=1.0, inertia=np.eye(3) * 0.05)
    if axis == "linear":
        cfg = Dof(axis=Axis.X, target_pos=0.4, target_ke=100.0, target_kd=20.0)
        b.add_joint_d6(-1, link, linear_axes=[cfg], angular_axes=[Dof(axis=Axis.Z)], parent_xform=XP)
        k = 0
    else:
        cfg = Dof(axis=Axis.Z, target_pos=-0.6, target_ke=5.0, target_kd=1.0)
        b.add_joint_d6(-1, link, linear_axes=[Dof(axis=Axis.X)], angular_axes=[cfg], parent_xform=XP)
        k = 1
    sim = Sim(b, device, contacts=False, solver=solver)
    sim.step(H, 600)
    q, _ = sim.joint_q()
    assert q[k] == pytest.approx(cfg.target_pos, abs=1e-4)


def test_d6_per_world_targets_match_single_world_runs(device, solver):
    """Three worlds of one planar D6 scene, a different drive target per world (set in Control):
    each world's result equals the same world simulated alone, bitwise (no row couples worlds)."""
    targets = [0.1, -0.3, 0.45]

    def scene():
        return _one_joint(
            lambda b, c: b.add_joint_d6(
                -1,
                c,
                linear_axes=[Dof(axis=Axis.X, target_ke=30.0, target_kd=3.0), Dof(axis=Axis.Z)],
                angular_axes=[Dof(axis=Axis.Y)],
                parent_xform=XP,
                child_xform=XC,
            )
        )

    def run(worlds):
        top = nt.ModelBuilder(up_axis=Axis.Z)
        for _ in worlds:
            top.add_world(scene())
        sim = Sim(top, device, contacts=False, solver=solver)
        tp = sim.control.joint_target_pos.numpy()
        tp[0::3] = worlds  # dofs per world: X, Z, Y
        sim.control.joint_target_pos.assign(tp)
        sim.step(H, 60)
        return sim.body_q()

    many = run(targets)
    for w, t in enumerate(targets):
        np.testing.assert_array_equal(run([t])[0], many[w])


def _axis_angle(a, t):
    a = np.asarray(a, dtype=np.float64)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(t) * k + (1 - math.cos(t)) * k @ k


def _mat_to_quat(r):
    w = math.sqrt(max(0.0, 1.0 + r[0, 0] + r[1, 1] + r[2, 2])) / 2
    x = math.copysign(math.sqrt(max(0.0, 1.0 + r[0, 0] - r[1, 1] - r[2, 2])) / 2, r[2, 1] - r[1, 2])
    y = math.copysign(math.sqrt(max(0.0, 1.0 - r[0, 0] + r[1, 1] - r[2, 2])) / 2, r[0, 2] - r[2, 0])
    z = math.copysign(math.sqrt(max(0.0, 1.0 - r[0, 0] - r[1, 1] + r[2, 2])) / 2, r[1, 0] - r[0, 1])
    return (x, y, z, w)


# Axis triples: right-handed, left-handed (the sign h of the decomposition), and not along X, Y, Z.
_S = 1.0 / math.sqrt(2.0)
AXES = {
    "xyz": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "zxy-left": ((0, 0, 1), (1, 0, 0), (0, -1, 0)),
    "tilted": ((_S, _S, 0), (-_S, _S, 0), (0, 0, 1)),
}


@pytest.mark.parametrize("axes", sorted(AXES))
def test_d6_coordinates_recover_successive_rotations_and_their_rates(device, axes):
    """eval_joint_coordinates on a D6 joint with three linear and three angular axes: the pose built in
    float64 from q (offset sum q_k a_k, rotation R(a0,q0) R(a1,q1) R(a2,q2)) gives q back, and the
    velocity of a finite difference of poses gives qd back.

    q: float32 poses of ~1 m and ~1 rad, bound 1e-5 (measured 1e-6). qd: the rates are those of the
    central difference of two poses eps = 1e-4 apart in q, whose float32 rounding is ~1e-7 / 1e-4:
    bound 5e-3 rad/s on rates of ~1 (measured 1e-3)."""
    a0, a1, a2 = (np.asarray(a, dtype=np.float64) for a in AXES[axes])
    rng = np.random.default_rng(7)
    q = np.concatenate([rng.uniform(-0.5, 0.5, 3), rng.uniform(-1.2, 1.2, 3)])
    qd = rng.uniform(-1.0, 1.0, 6)
    lin = [Dof(axis=(1, 0, 0)), Dof(axis=(0, 1, 0)), Dof(axis=(0, 0, 1))]
    xp = (0.2, -0.1, 1.0, 0.0, 0.0, math.sin(0.2), math.cos(0.2))
    rp = quat_to_matrix(xp[3:])

    def pose(qq):
        rot = rp @ _axis_angle(a0, qq[3]) @ _axis_angle(a1, qq[4]) @ _axis_angle(a2, qq[5])
        pos = np.asarray(xp[:3]) + rp @ qq[:3]
        return (*pos, *_mat_to_quat(rot))

    b = nt.ModelBuilder()
    link = b.add_link(xform=pose(q), mass=1.0)
    b.add_joint_d6(-1, link, linear_axes=lin, angular_axes=[Dof(axis=a) for a in AXES[axes]], parent_xform=xp)
    model = b.finalize(device)
    state = model.state()
    # Velocity of the body from a central difference of the float64 poses along qd.
    eps = 1e-4
    p_plus, p_minus = np.asarray(pose(q + eps * qd)), np.asarray(pose(q - eps * qd))
    v = (p_plus[:3] - p_minus[:3]) / (2 * eps)
    r_plus, r_minus = quat_to_matrix(p_plus[3:]), quat_to_matrix(p_minus[3:])
    dr = (r_plus - r_minus) / (2 * eps) @ quat_to_matrix(pose(q)[3:]).T
    w = np.array([dr[2, 1], dr[0, 2], dr[1, 0]])
    state.body_qd.assign(np.array([[*v, *w]], dtype=np.float32))
    jq, jqd = nt.eval_joint_coordinates(model, state)
    np.testing.assert_allclose(jq.numpy(), q, atol=1e-5)
    np.testing.assert_allclose(jqd.numpy(), qd, atol=5e-3)


def test_d6_coordinates_stay_finite_at_the_singular_pose(device):
    """q1 = pi/2 aligns the first and third angular axes (the decomposition's gimbal lock): the
    coordinates are finite and give the pose back (q0 + q2 is what is determined there)."""
    b = nt.ModelBuilder()
    r = _axis_angle((1, 0, 0), 0.3) @ _axis_angle((0, 1, 0), math.pi / 2) @ _axis_angle((0, 0, 1), 0.2)
    link = b.add_link(xform=(0, 0, 0, *_mat_to_quat(r)), mass=1.0, velocity=(0, 0, 0, 0.1, 0.2, 0.3))
    b.add_joint_d6(-1, link, angular_axes=[Dof(axis=a) for a in "XYZ"])
    model = b.finalize(device)
    q, qd = nt.eval_joint_coordinates(model, model.state())
    q, qd = q.numpy(), qd.numpy()
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(qd))
    back = _axis_angle((1, 0, 0), q[0]) @ _axis_angle((0, 1, 0), q[1]) @ _axis_angle((0, 0, 1), q[2])
    np.testing.assert_allclose(back, r, atol=1e-3)


def test_d6_joint_forces_accelerate_along_their_axes(device, solver):
    """joint_f on a D6 joint (tau = J^T f): a force f on a linear axis accelerates the body at f/m along
    it, a torque on the angular axis at tau/I about it. One step from rest without gravity:
    dv = f h / m, dw = tau h / I (semi-implicit Euler, exact; float32 bound 1e-5)."""
    b = nt.ModelBuilder(gravity=0.0)
    link = b.add_link(xform=XP, mass=2.0, inertia=np.diag([0.2, 0.3, 0.4]))
    b.add_joint_d6(-1, link, linear_axes=[Dof(axis=Axis.X), Dof(axis=Axis.Y)], angular_axes=[Dof(axis=Axis.Z)],
                   parent_xform=XP)  # fmt: skip
    sim = Sim(b, device, contacts=False, solver=solver)
    sim.control.joint_f.assign(np.array([3.0, -1.0, 0.8], dtype=np.float32))
    sim.step(H)
    qd = sim.body_qd()[0]
    np.testing.assert_allclose(qd[:3], [3.0 * H / 2.0, -1.0 * H / 2.0, 0.0], atol=1e-5)
    np.testing.assert_allclose(qd[3:], [0.0, 0.0, 0.8 * H / 0.4], atol=1e-5)


def test_three_angular_joint_torques_do_the_work_of_their_forces(device):
    """Three angular axes: the torque of generalized forces f is U^-T f (kernels/joints/coordinates.py,
    d6_wrenches), the one whose power tau . w equals f . qd for every relative velocity w = U qd.
    Checked at a generic pose through the kernel, for the three unit forces (float32 bound 1e-5)."""
    from newton_tendon.kernels.joints import compute_joint_wrenches  # noqa: PLC0415
    from newton_tendon.model import body_model_struct, joint_model_struct  # noqa: PLC0415

    r = _axis_angle((1, 0, 0), 0.4) @ _axis_angle((0, 1, 0), -0.7) @ _axis_angle((0, 0, 1), 1.1)
    b = nt.ModelBuilder()
    link = b.add_link(xform=(0, 0, 0, *_mat_to_quat(r)), mass=1.0)
    b.add_joint_d6(-1, link, angular_axes=[Dof(axis=a) for a in "XYZ"])
    model = b.finalize(device)
    state = model.state()
    q, _ = nt.eval_joint_coordinates(model, state)
    q = q.numpy().astype(np.float64)
    u = np.column_stack(
        [
            np.array([1.0, 0, 0]),
            _axis_angle((1, 0, 0), q[0]) @ np.array([0, 1.0, 0]),
            _axis_angle((1, 0, 0), q[0]) @ _axis_angle((0, 1, 0), q[1]) @ np.array([0, 0, 1.0]),
        ]
    )
    wrench = wp.zeros(2, dtype=wp.spatial_vector, device=device)
    for k in range(3):
        f = np.zeros(3, dtype=np.float32)
        f[k] = 1.0
        wp.launch(
            compute_joint_wrenches,
            dim=1,
            inputs=[body_model_struct(model), joint_model_struct(model), wp.array(f, device=device), state.body_q],
            outputs=[wrench],
            device=device,
        )
        tau = wrench.numpy()[1, 3:].astype(np.float64)
        # tau . (U qd) = qd_k for every qd  <=>  U^T tau = e_k.
        np.testing.assert_allclose(u.T @ tau, f, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# Builder: newton's API and its rules


def test_dof_config_fields_reach_the_model():
    """JointDofConfig fields land in the per-dof arrays; a target outside the limits moves to their
    midpoint (as newton's JointDofConfig does); the mode is inferred from the gains when not given."""
    b = nt.ModelBuilder()
    link = b.add_link(mass=1.0)
    cfg = Dof(axis=Axis.Z, limit_lower=0.2, limit_upper=0.6, target_ke=10.0, effort_limit=50.0, limit_ke=7.0)
    assert cfg.target_pos == pytest.approx(0.4) and cfg.target_q == cfg.target_pos
    b.add_joint_d6(-1, link, linear_axes=[cfg, Dof(axis=Axis.X, target_qd=0.5, target_kd=2.0)],
                   angular_axes=[Dof(axis=Axis.Y, actuator_mode=JointTargetMode.EFFORT)])  # fmt: skip
    m = b.finalize()
    assert m.joint_type.numpy()[0] == T.JOINT_D6
    assert tuple(m.joint_dof_dim.numpy()[0]) == (2, 1)
    assert m.joint_dof_count == 3 and m.joint_coord_count == 3
    np.testing.assert_allclose(m.joint_axis.numpy(), [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    np.testing.assert_allclose(m.joint_target_pos.numpy(), [0.4, 0.0, 0.0])
    np.testing.assert_allclose(m.joint_target_vel.numpy(), [0.0, 0.5, 0.0])
    np.testing.assert_allclose(m.joint_effort_limit.numpy(), [50.0, 1e6, 1e6])
    np.testing.assert_allclose(m.joint_limit_ke.numpy(), [7.0, 1e4, 1e4])
    modes = [JointTargetMode.POSITION, JointTargetMode.VELOCITY, JointTargetMode.EFFORT]
    np.testing.assert_array_equal(m.joint_target_mode.numpy(), [int(x) for x in modes])


def test_one_axis_joints_take_a_dof_config_and_newtons_keywords():
    """add_joint_revolute(axis=JointDofConfig) uses the config's fields; explicit keywords win;
    target_q is newton's name of target_pos; giving both raises."""
    b = nt.ModelBuilder()
    link = b.add_link(mass=1.0)
    b.add_joint_revolute(-1, link, axis=Dof(axis=Axis.Y, target_ke=3.0, limit_upper=1.0), target_kd=0.5,
                         target_q=0.25, effort_limit=9.0, actuator_mode=JointTargetMode.POSITION)  # fmt: skip
    m = b.finalize()
    assert m.joint_target_ke.numpy()[0] == 3.0 and m.joint_target_kd.numpy()[0] == 0.5
    assert m.joint_target_pos.numpy()[0] == 0.25 and m.joint_limit_upper.numpy()[0] == 1.0
    assert m.joint_effort_limit.numpy()[0] == 9.0
    with pytest.raises(ValueError, match="target_pos or its newton name target_q"):
        nt.ModelBuilder().add_joint_revolute(-1, nt.ModelBuilder().add_link(mass=1.0), target_pos=0.1, target_q=0.2)


def _two_bodies():
    b = nt.ModelBuilder()
    b.add_link(mass=1.0)
    b.add_link(mass=1.0)
    return b


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"linear_axes": [Dof(axis=(1, 0, 0)), Dof(axis=(1, 1, 0))]}, ValueError, "not orthogonal"),
        ({"linear_axes": [Dof(axis=Axis.X)] * 4}, ValueError, "at most 3"),
        ({"angular_axes": [Dof(axis=Axis.X, limit_upper=1.0), Dof(axis=Axis.Y), Dof(axis=Axis.Z)]}, ValueError,
         "three angular axes"),  # fmt: skip
        ({"angular_axes": [Dof(axis=Axis.X), Dof(axis=Axis.Y), Dof(axis=Axis.Z, target_ke=1.0)]}, ValueError,
         "three angular axes"),  # fmt: skip
        ({"angular_axes": [Dof(axis=Axis.X, armature=0.1), Dof(axis=Axis.Y), Dof(axis=Axis.Z)]}, ValueError,
         "three angular axes"),  # fmt: skip
        ({"linear_axes": [Dof(axis=Axis.X, friction=0.1)]}, ValueError, "friction=0.1 is not supported"),
        ({"angular_axes": [Dof(axis=Axis.X, damping=1.0)]}, ValueError, "damping=1.0 is not supported"),
        ({"angular_axes": [Dof(axis=Axis.X, rest_q=0.2)]}, ValueError, "rest_q is not supported"),
        ({"angular_axes": [Dof(axis=Axis.X, actuator_mode=9)]}, ValueError, "actuator_mode must be"),
        ({"angular_axes": [Dof(axis=Axis.X, target_ke=-1.0)]}, ValueError, "target_ke must be >= 0"),
        ({"linear_axes": Dof(axis=Axis.X)}, TypeError, "sequence of JointDofConfig"),
        ({"linear_axes": [Dof(axis=Axis.X, limit_lower=1.0, limit_upper=0.0)]}, ValueError, "limit_lower"),
    ],
)
def test_bad_d6_joints_raise_naming_the_rule_and_change_nothing(kwargs, exc, match):
    b = _two_bodies()
    before = (b.joint_count, b.joint_dof_count, len(b.joint_dof_dim), len(b.joint_target_mode))
    with pytest.raises(exc, match=match):
        b.add_joint_d6(0, 1, **kwargs)
    assert (b.joint_count, b.joint_dof_count, len(b.joint_dof_dim), len(b.joint_target_mode)) == before


def test_unknown_joint_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'stifness'"):
        _two_bodies().add_joint_revolute(0, 1, stifness=1.0)


def test_d6_with_one_angular_axis_takes_armature_like_a_hinge(device):
    """Armature on a D6 joint's single angular axis adds I_a a a^T to the child's inertia, as on a
    revolute joint (the same finalize path): the inverse inertias are equal."""
    out = []
    for add in (
        lambda b, c: b.add_joint_revolute(-1, c, axis=Axis.Y, armature=0.3),
        lambda b, c: b.add_joint_d6(-1, c, linear_axes=[Dof(axis=Axis.X)], angular_axes=[Dof(axis=Axis.Y, armature=0.3)]),
    ):
        b = nt.ModelBuilder()
        link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1)
        add(b, link)
        out.append(b.finalize(device).body_inv_inertia.numpy())
    np.testing.assert_array_equal(out[0], out[1])


def test_d6_joints_round_trip_through_the_native_format(tmp_path):
    """save/load keeps a D6 joint's dof_dim and every per-dof field (newton's extras included)."""
    b = nt.ModelBuilder()
    link = b.add_link(mass=1.0)
    b.add_joint_d6(
        -1,
        link,
        linear_axes=[Dof(axis=Axis.X, limit_lower=-1.0, limit_upper=1.0, effort_limit=5.0), Dof(axis=Axis.Z)],
        angular_axes=[Dof(axis=Axis.Y, target_ke=2.0, actuator_mode=JointTargetMode.POSITION_VELOCITY)],
    )
    path = tmp_path / "d6.json"
    save(b, path)
    c = load(path)
    assert c.joint_type == b.joint_type and c.joint_dof_dim == b.joint_dof_dim
    for name in ("axis", "limit_lower", "limit_upper", "target_ke", "effort_limit", "target_mode", "limit_ke"):
        assert getattr(c, "joint_" + name) == getattr(b, "joint_" + name), name


def test_target_mode_from_gains_follows_newton():
    assert JointTargetMode.from_gains(0.0, 0.0) == JointTargetMode.NONE
    assert JointTargetMode.from_gains(0.0, 0.0, has_drive=True) == JointTargetMode.EFFORT
    assert JointTargetMode.from_gains(1.0, 1.0, has_drive=True) == JointTargetMode.POSITION
    assert JointTargetMode.from_gains(1.0, 1.0, True, True) == JointTargetMode.POSITION_VELOCITY
    assert JointTargetMode.from_gains(0.0, 1.0, has_drive=True) == JointTargetMode.VELOCITY
