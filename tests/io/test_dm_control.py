"""Third-party MJCF files with tendons: dm_control's suite models, as a MuJoCo user brings them (issue 27).

The XML files come from the ``dm-control`` package (the ``test`` extra installs it; only its files
are read, dm_control itself is not imported). MuJoCo is the oracle: the same file compiled by
``mujoco`` gives the body poses, tendon lengths and velocities at random joint configurations, and
the joint trajectories of the contact-free model.

Imported here: all seven, ball_in_cup, manipulator, stacker, point_mass, fish, quadruped and dog. Their
blockers were ``<include>``, bodies with several joints (one D6 joint, universal for two hinges, or a
chain of joints where one D6 cannot hold them: dog's hips and scapulae), joint ``ref``, fixed tendons
over such joints, ``<flag contact="disable"/>`` and ``constraint="disable"``, ellipsoid geoms,
quadruped's flat height field, dog's mesh geoms (its bones' mass comes from their volume) and its
``springdamper`` joints (docs/mjcf.md).
"""



from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.solvers import SolverVBD, SolverXPBD

mujoco = pytest.importorskip("mujoco")

IMPORTED = ("ball_in_cup", "manipulator", "stacker", "point_mass", "fish", "quadruped", "dog")
SOLVERS = {"xpbd": SolverXPBD, "vbd": SolverVBD}
HINGE_SLIDE = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
"""As ints: ``MjModel.jnt_type`` holds numpy ints, which never compare equal to the enum members."""

POSITION_ATOL = 1.0e-6
"""Body positions from our float32 forward kinematics against MuJoCo's float64 (models within 1 m
of the origin: a float32 ulp there is <= 6e-8 m, and each joint of a chain adds a few; measured
1.4e-7 m at most)."""
TENDON_RTOL = 1.0e-5
"""Tendon lengths [m] and velocities [m/s]: relative to max(|value|, 0.1) (the issue's 1e-5; measured
1.1e-6 for lengths and 6.3e-6 for velocities, float32 against float64)."""


def suite_dir() -> Path:
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("dm-control is not installed (the test extra installs it)")
    return Path(next(iter(spec.submodule_search_locations))) / "suite"


def load(name: str, *, color: bool = False):
    path = suite_dir() / f"{name}.xml"
    b = nt.ModelBuilder()
    info = b.add_mjcf(path)
    if color:
        b.color()
    return b.finalize("cpu"), info, mujoco.MjModel.from_xml_path(str(path))


def name_of(mj, kind, i) -> str:
    return mujoco.mj_id2name(mj, kind, i)


def random_configuration(mj, data, info, model, rng):
    """Random hinge/slide qpos within their ranges (+-1 where unlimited) and qvel ~ N(0, 1), set in
    MuJoCo and, through ``info.joint_coords``, in our joint_q/joint_qd (other joints at qpos0)."""
    mujoco.mj_resetData(mj, data)
    q = model.joint_q.numpy().copy()
    qd = np.zeros(model.joint_dof_count, dtype=np.float32)
    for j in range(mj.njnt):
        if mj.jnt_type[j] not in HINGE_SLIDE:
            continue
        lo, hi = mj.jnt_range[j] if mj.jnt_limited[j] else (-1.0, 1.0)
        data.qpos[mj.jnt_qposadr[j]] = rng.uniform(lo, hi)
        data.qvel[mj.jnt_dofadr[j]] = rng.normal()
        qi, di = info.joint_coords[name_of(mj, mujoco.mjtObj.mjOBJ_JOINT, j)]
        q[qi] = data.qpos[mj.jnt_qposadr[j]]
        qd[di] = data.qvel[mj.jnt_dofadr[j]]
    mujoco.mj_forward(mj, data)
    return q, qd


def mujoco_controls(model, info, mj, ctrl):
    """A Control holding MuJoCo's ``ctrl`` through each actuator's documented mapping
    (``scale * ctrl + offset`` into its Control array)."""
    control = model.control()
    arrays = {}
    for act_name, act in info.actuators.items():
        values = arrays.setdefault(act.control, getattr(control, act.control).numpy())
        i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, act_name)
        values[act.index] = act.scale * ctrl[i] + act.offset
    for key, values in arrays.items():
        getattr(control, key).assign(values)
    return control


@pytest.mark.parametrize("name", IMPORTED)
def test_kinematics_and_tendons_match_mujoco(name):
    """At 20 random joint configurations with random joint velocities: our forward kinematics from
    MuJoCo's qpos puts every named body where MuJoCo does, the joint coordinates read back from the
    bodies are MuJoCo's qpos, and every tendon's length and velocity equal ``ten_length`` and
    ``ten_velocity``."""
    model, info, mj = load(name)
    data = mujoco.MjData(mj)
    solver = SolverXPBD(model)
    state = model.state()
    rng = np.random.default_rng(27)
    assert info.tendons and len(info.tendons) == mj.ntendon
    for _ in range(20):
        q, qd = random_configuration(mj, data, info, model, rng)
        nt.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), state)
        body_q = state.body_q.numpy()
        for body, k in info.bodies.items():
            i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, body)
            np.testing.assert_allclose(body_q[k, :3], data.xpos[i], atol=POSITION_ATOL, err_msg=body)
        joint_q = nt.eval_joint_coordinates(model, state)[0].numpy()
        for joint, (qi, _di) in info.joint_coords.items():
            j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, joint)
            assert joint_q[qi] == pytest.approx(data.qpos[mj.jnt_qposadr[j]], abs=2e-6), joint
        solver.update_geometry(state)
        length = solver.transmission_length.numpy()
        velocity = solver.transmission_velocity.numpy()
        for tendon, t in info.tendons.items():
            i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_TENDON, tendon)
            scale_l = max(abs(data.ten_length[i]), 0.1)
            scale_v = max(abs(data.ten_velocity[i]), 0.1)
            assert abs(length[t] - data.ten_length[i]) <= TENDON_RTOL * scale_l, tendon
            assert abs(velocity[t] - data.ten_velocity[i]) <= TENDON_RTOL * scale_v, tendon


@pytest.mark.parametrize("solver", sorted(SOLVERS))
@pytest.mark.parametrize("name", IMPORTED)
def test_one_second_with_contacts(name, solver):
    """Each model steps 1 s at its own ``<option timestep>`` (1 to 20 ms; MuJoCo's 2 ms where the file
    sets none) with contacts,
    zero controls, on both solvers: every pose stays finite and every body stays inside the model's
    arena (|x|, |y| <= 2 m, -0.1 <= z <= 2 m: the floors are at z = 0 and the tallest model reaches
    0.95 m), so nothing fell through the floor or was thrown out. dog's uncontrolled body collapses
    onto its tennis ball within 0.25 s (MuJoCo's collapses too, more slowly, and misses the ball),
    which rolls away to 0.5 m (XPBD) or 1.1 m (VBD) by 1 s; before round contacts measured from the
    point under the centre it gained energy as it rolled and reached 2.6 m on VBD."""
    model, info, _mj = load(name, color=solver == "vbd")
    sim = SOLVERS[solver](model)
    s0, s1 = model.state(), model.state()
    control = model.control()
    pipeline = nt.CollisionPipeline(model)
    contacts = pipeline.contacts()
    dt = info.timestep if info.timestep is not None else 0.002  # MuJoCo's default step
    for _ in range(round(1.0 / dt)):
        pipeline.collide(s0, contacts)
        sim.step(s0, s1, control, contacts, dt)
        s0, s1 = s1, s0
    q = s0.body_q.numpy()
    assert np.isfinite(q).all()
    assert np.all(np.abs(q[:, :2]) <= 2.0)
    assert np.all((q[:, 2] >= -0.1) & (q[:, 2] <= 2.0))


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_point_mass_trajectory_follows_mujoco(solver):
    """point_mass has contacts disabled (``<flag contact="disable"/>``): a 0.3 kg mass on two slides
    (one D6 joint here) with joint damping 1 N s/m, driven by two tendon motors (gear 0.1) over fixed
    tendons on those slides. From 5 random states and controls, 0.2 s at the file's 20 ms step: the
    slide coordinates follow MuJoCo's within 1e-5 m. Both engines integrate the damper implicitly and
    the motor force explicitly over the same steps, so they agree to float32 rounding (measured
    1.5e-6 m on XPBD, 1e-8 m on VBD); the bound is about 6x the larger."""
    model, info, mj = load("point_mass", color=solver == "vbd")
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(5)
    dt = mj.opt.timestep
    worst = 0.0
    for _ in range(5):
        q, qd = random_configuration(mj, data, info, model, rng)
        data.qpos[:] = rng.uniform(-0.1, 0.1, mj.nq)
        for j in range(mj.njnt):
            q[info.joint_coords[name_of(mj, mujoco.mjtObj.mjOBJ_JOINT, j)][0]] = data.qpos[mj.jnt_qposadr[j]]
        ctrl = rng.uniform(-1.0, 1.0, mj.nu)
        data.ctrl[:] = ctrl
        mujoco.mj_forward(mj, data)
        sim = SOLVERS[solver](model)
        s0, s1 = model.state(), model.state()
        nt.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), s0)
        control = mujoco_controls(model, info, mj, ctrl)
        for _step in range(round(0.2 / dt)):
            mujoco.mj_step(mj, data)
            sim.step(s0, s1, control, None, dt)
            s0, s1 = s1, s0
            joint_q = nt.eval_joint_coordinates(model, s0)[0].numpy()
            for j in range(mj.njnt):
                qi = info.joint_coords[name_of(mj, mujoco.mjtObj.mjOBJ_JOINT, j)][0]
                worst = max(worst, abs(float(joint_q[qi]) - float(data.qpos[mj.jnt_qposadr[j]])))
        moved = np.abs(data.qpos - q[: mj.nq])
        assert moved.max() > 1e-3  # the mass moved: the comparison is not of two resting states
    assert worst < 1e-5, worst


@pytest.mark.parametrize("solver", ["vbd", "xpbd"])
def test_fish_trajectory_follows_mujoco(solver):
    """fish has every constraint disabled (``<flag constraint="disable"/>``) and no gravity: a free torso
    with a two-hinge tail root (a universal joint), a hinged tail tip and two two-hinge fins, driven by
    position servos on joints and on a fixed tendon. Its fluid forces are left out here (with a warning),
    so MuJoCo runs with ``density = 0``. From 3 random states and controls, 0.2 s at the file's 4 ms step,
    SolverVBD follows MuJoCo's hinge angles within 0.05 rad while they move up to 1.07 rad (measured
    0.037 rad: the fins agree to 0.005 rad; the rest is the 0.5 g tail root between the 29 g torso and
    the 2.6 g tail tip, which VBD's default iterations leave short of convergence: with 64 iterations
    the tail's mean accelerations over the first 2 ms come within 3 % of MuJoCo's). SolverXPBD follows
    it to 0.020 rad since its articulation pass solves the tail's joints together (joint by joint,
    the Gauss-Seidel pass, it was 0.52 rad off; the Jacobi pass 0.68)."""
    model, info, mj = load("fish", color=True)
    mj.opt.density = 0.0
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(5)
    dt = mj.opt.timestep
    worst, moved = 0.0, 0.0
    for _ in range(3):
        q, qd = random_configuration(mj, data, info, model, rng)
        ctrl = rng.uniform(-1.0, 1.0, mj.nu)
        data.ctrl[:] = ctrl
        mujoco.mj_forward(mj, data)
        q0 = data.qpos.copy()
        sim = SolverVBD(model) if solver == "vbd" else SolverXPBD(model)
        s0, s1 = model.state(), model.state()
        nt.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), s0)
        control = mujoco_controls(model, info, mj, ctrl)
        for _step in range(round(0.2 / dt)):
            mujoco.mj_step(mj, data)
            sim.step(s0, s1, control, None, dt)
            s0, s1 = s1, s0
            joint_q = nt.eval_joint_coordinates(model, s0)[0].numpy()
            for joint, (qi, _di) in info.joint_coords.items():
                j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, joint)
                worst = max(worst, abs(float(joint_q[qi]) - float(data.qpos[mj.jnt_qposadr[j]])))
        moved = max(moved, float(np.abs(data.qpos[7:] - q0[7:]).max()))
    assert moved > 0.5  # the servos moved the joints: not a comparison of resting states
    assert worst < 0.05, worst



def test_dog_masses_and_spring_dampers_match_mujoco():
    """dog's 162 bone meshes give their bodies mass by volume with MuJoCo's default (legacy) rule,
    and its tail joints take stiffness and damping from ``springdamper`` through the effective
    inertia at qpos0: each body's mass (its chain links' shares added back) equals ``body_mass``
    within 1e-9 relative (measured 7e-15: float64 on both sides), and each stiffness and damping
    equals ``jnt_stiffness`` / ``dof_damping`` within 1e-6 (measured 6.5e-8: our float64 mass matrix
    against MuJoCo's factorised one)."""
    path = suite_dir() / "dog.xml"
    b = nt.ModelBuilder()
    info = b.add_mjcf(path)
    mj = mujoco.MjModel.from_xml_path(str(path))
    mass = np.asarray(b.body_mass)
    for body, k in info.bodies.items():
        links = [i for i, label in enumerate(b.body_label) if label.startswith(body + "/")]
        total = mass[k] + mass[links].sum()
        assert total == pytest.approx(mj.body_mass[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, body)], rel=1e-9)
    sprung = 0
    for j in range(mj.njnt):
        if mj.jnt_stiffness[j] == 0.0 or not name_of(mj, mujoco.mjtObj.mjOBJ_JOINT, j).startswith("Ca_"):
            continue
        _qi, di = info.joint_coords[name_of(mj, mujoco.mjtObj.mjOBJ_JOINT, j)]
        assert b.joint_target_ke[di] == pytest.approx(mj.jnt_stiffness[j], rel=1e-6)
        assert b.joint_target_kd[di] == pytest.approx(mj.dof_damping[mj.jnt_dofadr[j]], rel=1e-6)
        sprung += 1
    assert sprung == 21  # the caudal joints (dog.xml, class caudal)


@pytest.mark.parametrize("name", IMPORTED)
def test_native_round_trip_keeps_the_model(name, tmp_path):
    """Each model, saved in the native format and loaded back (``newton-tendon convert``'s path),
    finalizes to the same arrays: universal joints, joint chains, meshes, one-joint tendons, pair
    friction and all."""
    from newton_tendon.io import native

    path = suite_dir() / f"{name}.xml"
    b = nt.ModelBuilder()
    b.add_mjcf(path)
    native.save(b, tmp_path / "m.json")
    back = native.load(tmp_path / "m.json")
    a, c = b.finalize("cpu"), back.finalize("cpu")
    for key, value in vars(a).items():
        if isinstance(value, wp.array):
            np.testing.assert_array_equal(value.numpy(), getattr(c, key).numpy(), err_msg=key)
    assert [m is None for m in a.shape_mesh] == [m is None for m in c.shape_mesh]
