"""SolverXPBD's Gauss-Seidel joint pass (``joint_solver="gauss_seidel"``, the default).

The joints are grouped once (``solvers._joint_groups.joint_groups``): joints that share a movable
body share a group, one thread solves a group joint after joint. The tests check the grouping rules
(the condition that makes the pass race-free), that it converges where the Jacobi pass did not (the
MJCF tendon arm of issue 29), that each world's answer is the single-world answer with that world's
parameters, and that the step stays graph-capturable.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.kernels import joints as joint_kernels
from newton_tendon.kernels.types import BODY_KINEMATIC
from newton_tendon.rl import set_per_world
from newton_tendon.solvers import SolverXPBD
from newton_tendon.solvers._joint_groups import joint_groups

ARM = Path(__file__).resolve().parents[2] / "benchmarks" / "models" / "tendon_arm.xml"
DT = 0.002


def _groups(parent, child, mass, flags=None):
    flags = np.zeros(len(mass), dtype=np.int32) if flags is None else np.asarray(flags, dtype=np.int32)
    start, order = joint_groups(np.array(parent), np.array(child), np.array(mass, dtype=float), flags)
    return [order[start[g] : start[g + 1]].tolist() for g in range(len(start) - 1)]


def test_a_chain_is_one_group_root_to_leaves():
    """world -> 0 -> 1 -> 2, joints declared leaf first: one group, ordered by depth from the world."""
    assert _groups([1, 0, -1], [2, 1, 0], [1.0, 1.0, 1.0]) == [[2, 1, 0]]


def test_a_tree_is_one_group_and_separate_chains_are_separate_groups():
    # Tree: 0 on the world, 1 and 2 on 0, 3 on 2; then a second chain 4 -> 5 on the world.
    parent = [-1, 0, 0, 2, -1, 4]
    child = [0, 1, 2, 3, 4, 5]
    assert _groups(parent, child, [1.0] * 6) == [[0, 1, 2, 3], [4, 5]]


def test_static_and_kinematic_bodies_link_nothing():
    """Worlds hung on one shared static body (index 0) or one kinematic body stay separate groups:
    constraints never move those bodies, so two threads may read them at once."""
    parent = [0, 1, 0, 3]
    child = [1, 2, 3, 4]
    static = [0.0, 1.0, 1.0, 1.0, 1.0]
    assert _groups(parent, child, static) == [[0, 1], [2, 3]]
    kinematic = [5.0, 1.0, 1.0, 1.0, 1.0]
    flags = [BODY_KINEMATIC, 0, 0, 0, 0]
    assert _groups(parent, child, kinematic, flags) == [[0, 1], [2, 3]]


def test_free_floating_groups_loops_and_immovable_joints():
    """A chain no immovable body holds starts at its first joint's body; a closed loop is one group;
    a joint between two immovable bodies is a group of its own (it moves nothing)."""
    # 0 -> 1 -> 2 floating; 3 -> 4 -> 5 -> 3 a loop; joint 6 between the world and a static body 6.
    parent = [0, 1, 3, 4, 5, -1]
    child = [1, 2, 4, 5, 3, 6]
    mass = [1.0] * 6 + [0.0]
    groups = _groups(parent, child, mass)
    assert groups == [[0, 1], [2, 3, 4], [5]]
    assert _groups([], [], []) == []


def test_every_joint_in_exactly_one_group_and_no_body_in_two():
    """Random forests with shared static bodies: a partition of the joints, and no movable body
    reached from two groups (the pass's race-freedom)."""
    rng = np.random.default_rng(4)
    for _ in range(20):
        n = int(rng.integers(1, 30))
        mass = np.where(rng.random(n) < 0.2, 0.0, 1.0)
        parent = [int(rng.integers(-1, b)) if b else -1 for b in range(n)]
        child = list(range(n))
        groups = _groups(parent, child, mass)
        assert sorted(j for g in groups for j in g) == list(range(n))
        owner = {}
        for gi, g in enumerate(groups):
            for j in g:
                for b in (parent[j], child[j]):
                    if b >= 0 and mass[b] > 0.0:
                        assert owner.setdefault(b, gi) == gi


def test_joint_solver_is_checked_before_anything_is_built():
    model = nt.ModelBuilder().finalize("cpu")
    with pytest.raises(ValueError, match="joint_solver must be one of"):
        SolverXPBD(model, joint_solver="sor")


def _arm(worlds: int):
    one = nt.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = one.add_mjcf(str(ARM))
    b = nt.ModelBuilder()
    b.replicate(one, worlds)
    return b.finalize("cpu"), info


def _arm_inputs(model, info, worlds: int, seed: int):
    """Random joint velocities (0.5 rad/s) and a random cable pull per world, as the benchmark sets."""
    rng = np.random.default_rng(seed)
    dofs = model.joint_dof_count // worlds
    qd = rng.normal(0.0, 0.5, model.joint_dof_count).astype(np.float32)
    s0 = model.state()
    nt.eval_fk(model, model.joint_q, wp.array(qd, dtype=float, device="cpu"), s0)
    control = model.control()
    act = info.actuators["pull"]
    values = getattr(control, act.control).numpy()
    per_world = len(values) // worlds
    pulls = rng.uniform(-20.0, 20.0, worlds)
    for w in range(worlds):
        values[w * per_world + act.index] = act.scale * pulls[w] + act.offset
    getattr(control, act.control).assign(values)
    assert dofs * worlds == model.joint_dof_count
    return s0, control


def _joint_trajectory(model, solver, s0, control, steps: int) -> np.ndarray:
    s1 = model.state()
    out = []
    for _ in range(steps):
        solver.step(s0, s1, control, None, DT)
        s0, s1 = s1, s0
        out.append(nt.eval_joint_coordinates(model, s0)[0].numpy().copy())
    return np.array(out)


def test_tendon_arm_converges_at_the_default_iterations():
    """Issue 29's arm (armature 0.01 kg m^2 on hinges carrying 0.002 kg m^2 links, a spatial tendon
    pulling the forearm), 6 worlds with random velocities and pulls, 0.5 s: 8 iterations of the
    Gauss-Seidel pass stay within 0.05 rad of the 128-iteration answer (measured 0.0022; docs/xpbd.md
    "Joint pass"), and so does the default articulation pass (0.0006 against its own 128-iteration
    answer; 0.0079 at 4 iterations; before its limits held for the rest of a step once they acted, the
    elbow bounced off its -2 rad limit by 0.09 rad at 8 iterations), where the Jacobi pass is more
    than 0.5 rad off (measured 1.6)."""
    worlds = 6
    model, info = _arm(worlds)

    def run(iterations, **kw):
        s0, control = _arm_inputs(model, info, worlds, 3)
        return _joint_trajectory(model, SolverXPBD(model, iterations=iterations, **kw), s0, control, 250)

    reference = run(128, joint_solver="gauss_seidel")
    assert np.abs(run(8, joint_solver="gauss_seidel") - reference).max() < 0.05
    assert np.abs(run(8, joint_solver="jacobi") - reference).max() > 0.5
    assert np.abs(reference - reference[0]).max() > 0.5  # the arm moved: not a comparison at rest
    articulated = run(128)
    assert np.abs(run(8) - articulated).max() < 0.02  # issue 43's bound for the shared arm


def test_each_world_matches_its_single_world_run():
    """5 worlds (an odd count, not a multiple of the 16 groups a CPU thread takes), each with its own
    forearm mass, velocities and pull: every world's joint trajectory is bitwise the one-world run
    with that world's mass and inputs."""
    worlds = 5
    model, info = _arm(worlds)
    s0, control = _arm_inputs(model, info, worlds, 11)
    body_q0, body_qd0 = s0.body_q.numpy().copy(), s0.body_qd.numpy().copy()
    per_world = model.body_count // worlds
    forearm = list(model.body_label).index(next(lb for lb in model.body_label if lb.endswith("forearm")))
    mass0 = float(model.body_mass.numpy()[forearm])
    scale = np.array([0.5, 0.8, 1.0, 1.3, 2.0])
    set_per_world(model, "body_mass", (mass0 * scale).reshape(worlds, 1), entities=[forearm])
    many = _joint_trajectory(model, SolverXPBD(model), s0, control, 100)
    q_per = model.joint_coord_count // worlds
    name = info.actuators["pull"].control
    drive = getattr(control, name).numpy()
    n = len(drive) // worlds
    for w in range(worlds):
        one, _ = _arm(1)
        set_per_world(one, "body_mass", np.array([[mass0 * scale[w]]]), entities=[forearm])
        s1 = one.state()
        s1.body_q.assign(body_q0[w * per_world : (w + 1) * per_world])
        s1.body_qd.assign(body_qd0[w * per_world : (w + 1) * per_world])
        c1 = one.control()
        getattr(c1, name).assign(drive[w * n : (w + 1) * n])
        single = _joint_trajectory(one, SolverXPBD(one), s1, c1, 100)
        np.testing.assert_array_equal(many[:, w * q_per : (w + 1) * q_per], single)
    assert len(set(np.round(many[-1, ::q_per], 6))) == worlds  # the worlds differ


def test_gauss_seidel_step_captures_and_replays_bitwise():
    """The pass's direction alternates with the iteration index (a launch argument fixed at capture),
    so a captured graph replays exactly what direct steps compute."""
    model, info = _arm(3)
    s0, control = _arm_inputs(model, info, 3, 5)
    solver = SolverXPBD(model)
    direct = _joint_trajectory(model, solver, s0, control, 4)[-1]
    s0, control = _arm_inputs(model, info, 3, 5)
    s1 = model.state()
    solver = SolverXPBD(model)
    with wp.ScopedCapture(device="cpu") as cap:
        solver.step(s0, s1, control, None, DT)
        solver.step(s1, s0, control, None, DT)
    wp.capture_launch(cap.graph)
    wp.capture_launch(cap.graph)
    replay = nt.eval_joint_coordinates(model, s0)[0].numpy()
    np.testing.assert_array_equal(replay, direct)


@wp.kernel
def _both_blocks(
    inv_m: wp.array(dtype=float),
    inv_i: wp.array(dtype=wp.mat33),
    r: wp.array(dtype=wp.vec3),
    e_l: wp.array(dtype=wp.vec3),
    e_a: wp.array(dtype=wp.vec3),
    axis: wp.array(dtype=wp.vec3),
    kind: wp.array(dtype=wp.vec3i),  # (angular, mode, 0)
    alpha: wp.array(dtype=float),
    relax: wp.array(dtype=wp.vec2),
    fast: wp.array(dtype=wp.vec3, ndim=2),
    general: wp.array(dtype=wp.vec3, ndim=2),
):
    i = wp.tid()
    bp = joint_kernels.BodyPair()
    bp.inv_m_p = 0.0
    bp.inv_i_p = wp.mat33(0.0)
    bp.inv_m_c = inv_m[i]
    bp.inv_i_c = inv_i[i]
    bp.com_p = wp.vec3(0.0)
    bp.com_c = wp.vec3(0.0)
    angular = kind[i][0] != 0
    mode = kind[i][1]
    lin_axes = wp.mat33(0.0)
    ang_axes = wp.mat33(0.0)
    lin_mode = wp.vec3i(0)
    ang_mode = wp.vec3i(0)
    lin_alpha = wp.vec3(0.0)
    ang_alpha = wp.vec3(0.0)
    n_lin = int(0)
    n_ang = int(0)
    if mode != 0:
        if angular:
            ang_axes[0] = axis[i]
            ang_mode[0] = mode
            ang_alpha[0] = alpha[i]
            n_ang = 1
        else:
            lin_axes[0] = axis[i]
            lin_mode[0] = mode
            lin_alpha[0] = alpha[i]
            n_lin = 1
    zero = wp.vec3(0.0)
    a, b, dx, dth, dll, dla, ok = joint_kernels.solve_joint_block(
        bp,
        zero,
        r[i],
        e_l[i],
        e_a[i],
        True,
        n_lin,
        n_ang,
        lin_axes,
        lin_mode,
        lin_alpha,
        ang_axes,
        ang_mode,
        ang_alpha,
        relax[i][0],
        relax[i][1],
    )
    fast[i, 0] = dx
    fast[i, 1] = dth
    fast[i, 2] = wp.vec3(dll[0], dla[0], float(ok))
    a, b, dx, dth, dll, dla, ok = joint_kernels.joint_block_correction(
        bp,
        zero,
        r[i],
        e_l[i],
        e_a[i],
        True,
        lin_axes,
        lin_mode,
        lin_alpha,
        ang_axes,
        ang_mode,
        ang_alpha,
        relax[i][0],
        relax[i][1],
    )
    general[i, 0] = dx
    general[i, 1] = dth
    general[i, 2] = wp.vec3(dll[0], dla[0], float(ok))


def test_root_joint_closed_form_equals_the_general_block_solve():
    """``root_joint_correction`` (a joint on an immovable parent: the child alone answers, K^-1 =
    H^-1 M H^-T) against the general float64 Schur solve ``joint_block_correction`` on 4,000 random
    cases: fixed joints, and revolute or prismatic axes free, under a hard row or under a compliant
    one (alpha~ from 1e-4 to 1e4), masses 0.01-100 kg, inertias with axis ratios up to 1e3, levers up
    to 3 m, both relaxations. Pose changes agree within 2e-5 relative to the largest of the case
    (measured 1.5e-6: float32 rounding of the general solve's inputs and outputs), the row's
    multiplier step within 2e-4."""
    rng = np.random.default_rng(29)
    n = 4000

    def unit(k):
        v = rng.normal(size=(k, 3))
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    inv_i = []
    for _ in range(n):
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        inv_i.append(q @ np.diag(10.0 ** rng.uniform(-1.0, 2.0, 3)) @ q.T)
    kind = np.stack([rng.integers(0, 2, n), rng.integers(0, 3, n), np.zeros(n, dtype=int)], axis=1)
    alpha = np.where(rng.random(n) < 0.3, 0.0, 10.0 ** rng.uniform(-4.0, 4.0, n))
    relax = np.where(rng.random((n, 1)) < 0.5, [[1.0, 1.0]], [[0.7, 0.4]])
    args = [
        wp.array(10.0 ** rng.uniform(-2.0, 2.0, n), dtype=float),
        wp.array(np.array(inv_i), dtype=wp.mat33),
        wp.array(unit(n) * rng.uniform(0.0, 3.0, (n, 1)), dtype=wp.vec3),
        wp.array(rng.normal(0.0, 0.05, (n, 3)), dtype=wp.vec3),
        wp.array(rng.normal(0.0, 0.1, (n, 3)), dtype=wp.vec3),
        wp.array(unit(n), dtype=wp.vec3),
        wp.array(kind.astype(np.int32), dtype=wp.vec3i),
        wp.array(alpha, dtype=float),
        wp.array(relax, dtype=wp.vec2),
    ]
    fast = wp.zeros((n, 3), dtype=wp.vec3)
    general = wp.zeros((n, 3), dtype=wp.vec3)
    wp.launch(_both_blocks, dim=n, inputs=args, outputs=[fast, general], device="cpu")
    f, g = fast.numpy(), general.numpy()
    assert np.all(f[:, 2, 2] == 1.0) and np.all(g[:, 2, 2] == 1.0)
    moves = np.abs(g[:, :2]).reshape(n, -1).max(axis=1)
    np.testing.assert_array_less(np.abs(f[:, :2] - g[:, :2]).reshape(n, -1).max(axis=1), 2e-5 * moves + 1e-9)
    lam = g[:, 2, 0] + g[:, 2, 1]
    lam_fast = f[:, 2, 0] + f[:, 2, 1]
    row = kind[:, 1] == 2
    np.testing.assert_allclose(lam_fast[row], lam[row], rtol=2e-4, atol=1e-7 * np.abs(lam).max())
