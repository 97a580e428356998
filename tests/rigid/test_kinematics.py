"""eval_fk / eval_ik (newton's kinematics API): body poses and velocities from joint coordinates and back.

Oracles: the pose formula ``body_q[c] = body_q[p] * X_p * X_j(q) * inverse(X_c)`` evaluated in float64
numpy (tests/rigid/kinematics_common.py), central differences of those poses for the velocities,
the closed form of a planar 3-link chain, and round trips (fk then ik returns the coordinates; ik then
fk returns the poses). Tolerances are in kinematics_common (float32 ulps of order-1 quantities).
D6 joints: tests/rigid/test_kinematics_d6.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt

from .kinematics_common import (
    POSE_TOL,
    VEL_TOL,
    add_joint,
    canonical,
    finite_difference_velocities,
    fk,
    ik,
    qrot,
    random_body,
    random_coordinates,
    reference_fk,
    same_rotation,
)

KINDS = ("revolute", "prismatic", "ball", "fixed", "free")


def two_joint_scene(kind: str, device, seed: int = 0, worlds: int = 1):
    """A root body on a revolute joint to the world and a child on a ``kind`` joint below it (random
    frames, axes and COM offsets); a free joint goes to the world instead, with a revolute child below
    its body, so in both scenes the joint under test has a moving parent or child. ``worlds`` copies."""
    rng = np.random.default_rng(seed)
    b = nt.ModelBuilder(gravity=0.0)
    root = random_body(b, rng)
    child = random_body(b, rng)
    if kind == "free":
        # newton's free-joint joint_qd is in the parent joint frame; ours (eval_joint_coordinates) is
        # world, the same when that frame is not rotated (test_kinematics_d6.py covers the rest).
        add_joint(b, "free", -1, root, rng, rotate_parent_frame=False)
        add_joint(b, "revolute", root, child, rng)
    else:
        add_joint(b, "revolute", -1, root, rng)
        add_joint(b, kind, root, child, rng)
    b.add_articulation()
    if worlds == 1:
        return b.finalize(device=device)
    top = nt.ModelBuilder(gravity=0.0)
    top.replicate(b, worlds, spacing=(2.0, 0.0, 0.0))
    return top.finalize(device=device)


@pytest.mark.parametrize("kind", KINDS)
def test_fk_poses_match_the_pose_formula(device, kind):
    """eval_fk places each child at body_q[parent] * X_p * X_j(q) * inverse(X_c) (float64 oracle)."""
    model = two_joint_scene(kind, device, seed=1)
    q, qd = random_coordinates(model, np.random.default_rng(2))
    got = fk(model, q, qd).body_q.numpy()
    want = reference_fk(model, q, model.body_q.numpy())
    for i in range(model.body_count):
        assert np.abs(got[i, :3] - want[i, :3]).max() < POSE_TOL, (kind, i)
        assert same_rotation(got[i, 3:], want[i, 3:]) < POSE_TOL, (kind, i)


@pytest.mark.parametrize("kind", KINDS)
def test_fk_velocities_match_finite_differences(device, kind):
    """body_qd from eval_fk is the time derivative of the poses when the coordinates move at joint_qd:
    COM velocity and angular velocity (world) against central differences of the float64 poses (h = 1e-3:
    truncation ~1e-6, and the float64 oracle has no rounding to speak of, so the bound is VEL_TOL)."""
    model = two_joint_scene(kind, device, seed=3)
    q, qd = random_coordinates(model, np.random.default_rng(4))
    got = fk(model, q, qd).body_qd.numpy()
    want = finite_difference_velocities(model, q, qd)
    assert np.abs(got - want).max() < VEL_TOL, (kind, got, want)


@pytest.mark.parametrize("kind", KINDS)
def test_fk_then_ik_returns_the_coordinates(device, kind):
    """Random coordinates -> eval_fk -> eval_ik gives the same coordinates and velocities (quaternions
    up to sign)."""
    model = two_joint_scene(kind, device, seed=5)
    rng = np.random.default_rng(6)
    for _ in range(3):
        q, qd = random_coordinates(model, rng)
        q2, qd2 = ik(model, fk(model, q, qd))
        assert np.abs(canonical(model, q2) - q).max() < POSE_TOL, (kind, q, q2)
        assert np.abs(qd2 - qd).max() < VEL_TOL, (kind, qd, qd2)


@pytest.mark.parametrize("kind", KINDS)
def test_ik_then_fk_returns_the_poses(device, kind):
    """Body poses consistent with the joints (the float64 oracle at random coordinates) and velocities
    consistent with them -> eval_ik -> eval_fk reproduces both."""
    model = two_joint_scene(kind, device, seed=7)
    q, qd = random_coordinates(model, np.random.default_rng(8))
    state = fk(model, q, qd)  # consistent velocities
    poses = reference_fk(model, q, model.body_q.numpy())
    state.body_q.assign(poses.astype(np.float32))
    velocities = state.body_qd.numpy().copy()
    q2, qd2 = ik(model, state)
    back = fk(model, q2, qd2)
    got = back.body_q.numpy()
    for i in range(model.body_count):
        assert np.abs(got[i, :3] - poses[i, :3]).max() < POSE_TOL, (kind, i)
        assert same_rotation(got[i, 3:], poses[i, 3:]) < POSE_TOL, (kind, i)
    assert np.abs(back.body_qd.numpy() - velocities).max() < VEL_TOL


@pytest.mark.parametrize("kind", ("revolute", "ball", "free"))
def test_fk_batches_worlds_independently(device, kind):
    """With 4 worlds and different coordinates in each, every world's bodies are what eval_fk gives
    that world's coordinates in a one-world model (shifted by the world's placement), and ik returns
    each world's coordinates."""
    worlds = 4
    one = two_joint_scene(kind, device, seed=9)
    many = two_joint_scene(kind, device, seed=9, worlds=worlds)
    rng = np.random.default_rng(10)
    per_world = [random_coordinates(one, rng) for _ in range(worlds)]
    q = np.concatenate([c[0] for c in per_world])
    qd = np.concatenate([c[1] for c in per_world])
    state = fk(many, q, qd)
    nb = one.body_count
    for w, (qw, qdw) in enumerate(per_world):
        single = fk(one, qw, qdw)
        got = state.body_q.numpy()[w * nb : (w + 1) * nb]
        # replicate lays the worlds on a grid; only the placement of the world's root frame differs.
        offset = got[:, :3] - single.body_q.numpy()[:, :3]
        assert np.abs(offset - offset[0]).max() < POSE_TOL
        assert np.abs(got[:, 3:] - single.body_q.numpy()[:, 3:]).max() < POSE_TOL
        assert np.abs(state.body_qd.numpy()[w * nb : (w + 1) * nb] - single.body_qd.numpy()).max() < VEL_TOL
    q2, qd2 = ik(many, state)
    assert np.abs(canonical(many, q2) - q).max() < POSE_TOL
    assert np.abs(qd2 - qd).max() < VEL_TOL


def planar_chain(device, lengths=(0.5, 0.4, 0.3), order=(0, 1, 2)):
    """Three links in a row along +X, hinged about +Z, each link's COM at its middle; joints added in
    ``order`` (the articulation must place parents first whatever the order)."""
    b = nt.ModelBuilder(gravity=0.0)
    bodies = []
    x = 0.0
    for L in lengths:
        bodies.append(b.add_body(xform=wp.transform((x, 0.0, 0.0), wp.quat_identity()), mass=1.0, com=(L / 2, 0, 0)))
        x += L
    joints = [None] * 3
    for i in order:
        parent = bodies[i - 1] if i else -1
        at = lengths[i - 1] if i else 0.0
        joints[i] = b.add_joint_revolute(
            parent, bodies[i], wp.transform((at, 0.0, 0.0), wp.quat_identity()), None, axis=(0.0, 0.0, 1.0)
        )
    b.add_articulation()
    return b.finalize(device=device), joints


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1)])
def test_three_revolute_chain_matches_planar_closed_form(device, order):
    """A planar 3R chain: link i's base sits at sum_{k<i} L_k (cos phi_k, sin phi_k) with phi_k the sum of
    the first k+1 angles, and its COM (at L_i/2) moves at sum_k qd_k z x (x_com - base_k), turning at
    sum qd (the planar Jacobian). Joints added out of order are walked parents first."""
    lengths = (0.5, 0.4, 0.3)
    model, joints = planar_chain(device, lengths, order)
    theta = np.array([0.7, -1.1, 0.4])
    rate = np.array([1.5, -0.5, 2.0])
    qs = model.joint_q_start.numpy()
    q = np.zeros(3)
    qd = np.zeros(3)
    for i, j in enumerate(joints):
        q[qs[j]] = theta[i]
        qd[qs[j]] = rate[i]
    state = fk(model, q, qd)
    body_q = state.body_q.numpy()
    body_qd = state.body_qd.numpy()
    phi = np.cumsum(theta)
    base = np.zeros((4, 3))
    for i in range(3):
        base[i + 1] = base[i] + lengths[i] * np.array([math.cos(phi[i]), math.sin(phi[i]), 0.0])
    for i in range(3):
        assert np.abs(body_q[i, :3] - base[i]).max() < POSE_TOL
        assert abs(2.0 * math.atan2(body_q[i, 5], body_q[i, 6]) - phi[i]) < POSE_TOL
        x_com = base[i] + 0.5 * lengths[i] * np.array([math.cos(phi[i]), math.sin(phi[i]), 0.0])
        v = sum(rate[k] * np.cross([0.0, 0.0, 1.0], x_com - base[k]) for k in range(i + 1))
        assert np.abs(body_qd[i, :3] - v).max() < VEL_TOL
        assert abs(body_qd[i, 5] - rate[: i + 1].sum()) < VEL_TOL
    q2, qd2 = ik(model, state)
    assert np.abs(q2 - q).max() < POSE_TOL and np.abs(qd2 - qd).max() < VEL_TOL


def test_free_joint_places_its_body_at_the_coordinates(device):
    """A free joint to the world with identity frames: body_q is joint_q (p, quat) and body_qd is
    joint_qd (COM linear velocity, angular velocity; world), newton's convention for a floating base."""
    b = nt.ModelBuilder(gravity=0.0)
    body = b.add_body(mass=1.0, com=(0.1, -0.2, 0.3))
    b.add_joint_free(body)
    b.add_articulation()
    model = b.finalize(device=device)
    r = np.array([0.1, -0.3, 0.2, 0.9])
    r /= np.linalg.norm(r)
    q = np.concatenate([[1.0, 2.0, 3.0], r])
    qd = np.array([0.5, -1.0, 2.0, 0.3, 0.2, -0.1])
    state = fk(model, q, qd)
    assert np.abs(state.body_q.numpy()[0] - q).max() < POSE_TOL
    assert np.abs(state.body_qd.numpy()[0] - qd).max() < VEL_TOL


def test_model_joint_q_keeps_the_built_poses(device):
    """model.joint_q / joint_qd are the coordinates of the builder's poses and velocities, so newton's
    ``eval_fk(model, model.joint_q, model.joint_qd, state)`` right after finalize leaves the bodies where
    they were built (a hinge built at 0.6 rad reads 0.6; a free body keeps its pose and velocity), whether
    the target is a State or the Model."""
    b = nt.ModelBuilder(gravity=0.0)
    a = 0.6
    rot = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), a)
    link = b.add_body(xform=wp.transform((0.0, 0.0, 1.0), rot), mass=1.0, com=(0.2, 0.0, 0.0))
    b.add_joint_revolute(-1, link, wp.transform((0.0, 0.0, 1.0), wp.quat_identity()), None, axis=(0.0, 0.0, 1.0))
    free = b.add_body(xform=wp.transform((1.0, 2.0, 3.0), wp.quat_identity()), mass=1.0, velocity=(1, 0, 0, 0, 0, 2))
    b.add_joint_free(free)
    b.add_articulation()
    model = b.finalize(device=device)
    assert model.joint_q.numpy()[0] == pytest.approx(a, abs=POSE_TOL)
    state = model.state()
    before_q, before_qd = state.body_q.numpy().copy(), state.body_qd.numpy().copy()
    nt.eval_fk(model, model.joint_q, model.joint_qd, state)
    assert np.abs(state.body_q.numpy() - before_q).max() < POSE_TOL
    assert np.abs(state.body_qd.numpy() - before_qd).max() < VEL_TOL
    # newton also takes the Model as the target (its body_q / body_qd are the initial state).
    nt.eval_fk(model, model.joint_q, model.joint_qd, model)
    assert np.abs(model.body_q.numpy() - before_q).max() < POSE_TOL


def test_bodies_without_an_articulated_joint_are_not_moved(device):
    """eval_fk writes only the children of articulated joints: a body without a joint and a body whose
    joint is in no articulation keep their poses and velocities (newton's rule)."""
    b = nt.ModelBuilder(gravity=0.0)
    moved = b.add_body(mass=1.0)
    b.add_joint_revolute(-1, moved, None, None, axis=(0.0, 0.0, 1.0))
    b.add_articulation()
    loose = b.add_body(xform=wp.transform((1.0, 0.0, 0.0), wp.quat_identity()), mass=1.0)
    ungrouped = b.add_body(xform=wp.transform((0.0, 1.0, 0.0), wp.quat_identity()), mass=1.0)
    b.add_joint_revolute(-1, ungrouped, None, None, axis=(0.0, 0.0, 1.0))
    model = b.finalize(device=device)
    state = model.state()
    state.body_q.fill_(wp.transform((7.0, 7.0, 7.0), wp.quat_identity()))
    fk(model, np.array([0.5, 0.5]), np.zeros(2), state)
    got = state.body_q.numpy()
    assert np.abs(got[moved, :3]).max() < POSE_TOL
    assert got[loose, 0] == 7.0 and got[ungrouped, 0] == 7.0
    assert model.joint_articulation.numpy().tolist() == [0, -1]


def test_masks_select_articulations_and_joints(device):
    """``mask`` / ``indices`` place only the chosen articulations and ``joint_mask`` only the chosen joints'
    children; eval_ik with ``mask`` writes only the chosen articulations' coordinates."""
    two = nt.ModelBuilder(gravity=0.0)
    single = nt.ModelBuilder(gravity=0.0)
    for i in range(3):
        single.add_body(xform=wp.transform((0.5 * i, 0.0, 0.0), wp.quat_identity()), mass=1.0)
    for i in range(3):
        single.add_joint_revolute(i - 1, i, wp.transform((0.5 if i else 0.0, 0, 0), wp.quat_identity()), None)
    single.add_articulation()
    two.replicate(single, 2)
    model = two.finalize(device=device)
    dev = model.device
    q = wp.array(np.full(6, 0.3, dtype=np.float32), dtype=float, device=dev)
    qd = wp.zeros(6, dtype=float, device=dev)

    def placed(**kw):
        state = model.state()
        state.body_q.fill_(wp.transform((9.0, 9.0, 9.0), wp.quat_identity()))
        nt.eval_fk(model, q, qd, state, **kw)
        return state.body_q.numpy()[:, 0] != 9.0

    assert placed().tolist() == [True] * 6
    assert placed(mask=wp.array([False, True], dtype=wp.bool, device=dev)).tolist() == [False] * 3 + [True] * 3
    assert placed(indices=wp.array([0], dtype=wp.int32, device=dev)).tolist() == [True] * 3 + [False] * 3
    jm = wp.array([True, False, True, False, False, False], dtype=wp.bool, device=dev)
    assert placed(joint_mask=jm).tolist() == [True, False, True, False, False, False]
    state = model.state()
    nt.eval_fk(model, q, qd, state)
    out_q = wp.array(np.full(6, -1.0, dtype=np.float32), dtype=float, device=dev)
    out_qd = wp.zeros(6, dtype=float, device=dev)
    nt.eval_ik(model, state, out_q, out_qd, mask=wp.array([True, False], dtype=wp.bool, device=dev))
    assert out_q.numpy() == pytest.approx([0.3] * 3 + [-1.0] * 3, abs=POSE_TOL)


def test_argument_validation(device):
    """Wrong shapes, dtypes and both articulation filters are ValueErrors naming the argument."""
    model, _ = planar_chain(device)
    dev = model.device
    q = wp.zeros(3, dtype=float, device=dev)
    state = model.state()
    with pytest.raises(ValueError, match="joint_q"):
        nt.eval_fk(model, wp.zeros(2, dtype=float, device=dev), q, state)
    with pytest.raises(TypeError, match="joint_qd"):
        nt.eval_fk(model, q, np.zeros(3), state)
    m = wp.array([True], dtype=wp.bool, device=dev)
    with pytest.raises(ValueError, match="mask or indices"):
        nt.eval_fk(model, q, q, state, mask=m, indices=wp.array([0], dtype=wp.int32, device=dev))
    with pytest.raises(ValueError, match="mask"):
        nt.eval_fk(model, q, q, state, mask=wp.array([1], dtype=wp.int32, device=dev))
    with pytest.raises(ValueError, match="joint_mask"):
        nt.eval_fk(model, q, q, state, joint_mask=m)
    with pytest.raises(ValueError, match="joint_qd"):
        nt.eval_ik(model, state, q, wp.zeros(4, dtype=float, device=dev))


def test_fk_is_graph_capturable(device):
    """eval_fk allocates nothing and syncs nothing: captured once, a replay with new coordinates in the
    same arrays places the bodies for the new coordinates (CUDA only: CPU has no graphs)."""
    if not wp.get_device(device).is_cuda:
        pytest.skip("graph capture needs a CUDA device")
    model, _ = planar_chain(device)
    q = wp.zeros(3, dtype=float, device=device)
    qd = wp.zeros(3, dtype=float, device=device)
    state = model.state()
    nt.eval_fk(model, q, qd, state)  # compile outside the capture
    with wp.ScopedCapture(device=device) as cap:
        nt.eval_fk(model, q, qd, state)
    q.assign(np.array([0.5, 0.0, 0.0], dtype=np.float32))
    wp.capture_launch(cap.graph)
    x = state.body_q.numpy()[1, :3]
    assert x == pytest.approx([0.5 * math.cos(0.5), 0.5 * math.sin(0.5), 0.0], abs=POSE_TOL)


def test_control_joint_targets_under_newtons_names(device):
    """``Control.joint_target_q`` / ``joint_target_qd`` are ``joint_target_pos`` / ``joint_target_vel``
    themselves (writing a slice of one writes the other, as newton's tests do with ``fill_``); with a ball
    joint the per-coordinate and per-dof layouts differ and ``joint_target_q`` raises AttributeError."""
    model, _ = planar_chain(device)
    control = model.control()
    assert control.joint_target_q is control.joint_target_pos
    assert control.joint_target_qd is control.joint_target_vel
    control.joint_target_q[1:2].fill_(0.75)
    control.joint_target_qd[2:3].fill_(-0.5)
    assert control.joint_target_pos.numpy().tolist() == [0.0, 0.75, 0.0]
    assert control.joint_target_vel.numpy().tolist() == [0.0, 0.0, -0.5]
    b = nt.ModelBuilder()
    body = b.add_body(mass=1.0)
    b.add_joint_ball(-1, body)
    control = b.finalize(device=device).control()
    with pytest.raises(AttributeError, match="joint_target_pos"):
        control.joint_target_q  # noqa: B018
    assert control.joint_target_qd is control.joint_target_vel


def test_drive_target_written_through_newtons_name_moves_the_joint(device, solver):
    """A drive target written with newton's ``control.joint_target_q[a:b].fill_(x)`` reaches the solver:
    a stiff hinge drive (no gravity) turns its link to the target angle within 1e-2 rad after 1 s."""
    b = nt.ModelBuilder(gravity=0.0)
    link = b.add_body(mass=1.0, com=(0.2, 0.0, 0.0), inertia=np.eye(3) * 0.01)
    b.add_joint_revolute(-1, link, None, None, axis=(0.0, 0.0, 1.0), target_ke=50.0, target_kd=5.0)
    b.add_articulation()
    if solver == "vbd":
        b.color()
    model = b.finalize(device=device)
    s0, s1 = model.state(), model.state()
    control = model.control()
    cls = nt.solvers.SolverXPBD if solver == "xpbd" else nt.solvers.SolverVBD
    sim = cls(model)
    qs = int(model.joint_q_start.numpy()[0])
    control.joint_target_q[qs : qs + 1].fill_(0.5)
    for _ in range(200):
        sim.step(s0, s1, control, None, 1.0 / 200.0)
        s0, s1 = s1, s0
    q, _ = ik(model, s0)
    assert q[0] == pytest.approx(0.5, abs=1.0e-2)


def test_fk_moves_a_rotated_free_joint_frame_with_qrot(device):
    """The linear entries of a free joint's joint_qd under a rotated parent frame turn with that frame
    (newton's convention: the parent joint frame), checked against the frame's rotation."""
    b = nt.ModelBuilder(gravity=0.0)
    body = b.add_body(mass=1.0)
    turn = np.array([0.0, 0.0, math.sin(0.25 * math.pi), math.cos(0.25 * math.pi)])  # 90 deg about z
    b.add_joint_free(body, -1, wp.transform((0.0, 0.0, 0.0), wp.quat(*turn)), None)
    b.add_articulation()
    model = b.finalize(device=device)
    q = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    qd = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    state = fk(model, q, qd)
    assert np.abs(state.body_qd.numpy()[0, :3] - qrot(turn, [1.0, 0.0, 0.0])).max() < VEL_TOL
