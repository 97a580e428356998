"""Single-feature MJCF fixtures for what real files need (issue 27): ``<include>``, bodies with several
joints (one D6 joint), joint ``ref``, fixed tendons and actuators on those joints, and
``<flag contact="disable"/>``. MuJoCo (the ``mujoco`` package) compiles every accepted file too and
is the oracle for poses, coordinates and tendon lengths; files it rejects, we reject."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.kernels import types as T
from newton_tendon.solvers import SolverXPBD

from ..helpers import simulate_with_contacts

mujoco = pytest.importorskip("mujoco")

POSITION_ATOL = 1.0e-6
"""float32 forward kinematics against MuJoCo's float64, bodies within 1 m of the origin."""


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------------------------
# <include>


def test_include_is_resolved_as_mujoco_resolves_it(tmp_path):
    """An include is replaced by the children of its file's root, wherever it stands (here inside a
    body, and nested: a.xml includes deeper/c.xml). A nested include is looked up relative to the main
    file first and, when absent there, relative to the including file, as MuJoCo 4.0 does: with both
    copies present MuJoCo takes the main file's (timestep 0.007), with one only the including file's
    (0.005). Our import reads the same values."""
    write(
        tmp_path,
        "main.xml",
        '<mujoco><include file="sub/a.xml"/><worldbody><body name="b">'
        '<include file="parts/body.xml"/></body></worldbody></mujoco>',
    )
    write(tmp_path, "sub/a.xml", '<mujoco><include file="deeper/c.xml"/></mujoco>')
    write(tmp_path, "sub/deeper/c.xml", '<mujoco><option timestep="0.005"/></mujoco>')
    write(tmp_path, "parts/body.xml", '<mujoco><geom name="g" size="0.1"/><joint name="j" axis="0 1 0"/></mujoco>')
    for expected in (0.005, 0.007):
        if expected == 0.007:
            write(tmp_path, "deeper/c.xml", '<mujoco><option timestep="0.007"/></mujoco>')
        mj = mujoco.MjModel.from_xml_path(str(tmp_path / "main.xml"))
        b = nt.ModelBuilder()
        info = b.add_mjcf(tmp_path / "main.xml")
        assert mj.opt.timestep == pytest.approx(expected)
        assert info.timestep == pytest.approx(expected)
        assert set(info.joints) == {"j"} and set(info.shapes) == {"g"}
        assert b.joint_type[info.joints["j"]] == T.JOINT_REVOLUTE


@pytest.mark.parametrize(
    ("files", "match"),
    [
        (
            {"main.xml": '<mujoco><include file="p.xml"/><include file="p.xml"/></mujoco>', "p.xml": "<mujoco/>"},
            r"main\.xml:1: <include>: file 'p\.xml' is already included",
        ),
        (
            {
                "main.xml": '<mujoco><include file="p.xml"/></mujoco>',
                "p.xml": '<mujoco><include file="p.xml"/></mujoco>',
            },
            r"p\.xml:1: <include>: file 'p\.xml' is already included",
        ),
        ({"main.xml": '<mujoco><include file="nope.xml"/></mujoco>'}, r"main\.xml:1: <include>: cannot read MJCF file"),
        ({"main.xml": "<mujoco><include/></mujoco>"}, r"<include>: attribute file .* is required"),
        (
            {"main.xml": '<mujoco><include file="p.xml"><geom/></include></mujoco>', "p.xml": "<mujoco/>"},
            r"<include>: an include cannot have child elements",
        ),
        (
            {
                "main.xml": '<mujoco><include file="p.xml"/></mujoco>',
                "p.xml": "<mujoco>\n<worldbody><frob/></worldbody></mujoco>",
            },
            r"p\.xml:2: <frob>: unsupported element",
        ),
        (
            {"main.xml": '<mujoco><include file="p.xml"/></mujoco>', "p.xml": "<mujoco><worldbody>"},
            r"p\.xml:1: malformed XML",
        ),
    ],
)
def test_include_errors_name_the_file_and_line(tmp_path, files, match):
    """A file included twice (or by itself) is rejected, as MuJoCo rejects it ("already included"); a
    missing file, an include without ``file`` or with children, and errors inside an included file
    raise ValueError naming the file and line of the offending element; the builder is unchanged."""
    for name, text in files.items():
        write(tmp_path, name, text)
    b = nt.ModelBuilder()
    with pytest.raises(ValueError, match=match):
        b.add_mjcf(tmp_path / "main.xml")
    assert b.body_count == 0 and b.joint_count == 0


# ----------------------------------------------------------------------------------------------
# Bodies with several joints


PLANAR = """
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0.1 0.2 0.3" euler="0.3 0.2 0.1">
      <joint name="x" type="slide" axis="1 0 0" ref="0.4" range="-1 1" damping="2"/>
      <joint name="z" type="slide" axis="0 0 1" pos="0.5 0.5 0.5" ref="-0.2" stiffness="3" springref="0.1"/>
      <joint name="h" type="hinge" axis="0 1 0" pos="0.05 0 0.02" ref="0.7" range="-2 2"/>
      <geom type="box" size="0.1 0.05 0.02"/>
      <site name="s0" pos="0.1 0 0"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="elbow" type="hinge" axis="0 0 1" ref="-0.3"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <site name="s1" pos="0.3 0 0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="f"><joint joint="x" coef="0.5"/><joint joint="h" coef="-0.2"/><joint joint="elbow" coef="0.1"/></fixed>
    <spatial name="sp"><site site="s0"/><site site="s1"/></spatial>
  </tendon>
  <actuator>
    <position name="ph" joint="h" kp="5"/>
    <motor name="mz" joint="z" gear="2"/>
  </actuator>
</mujoco>
"""


def test_several_joints_in_a_body_become_one_d6_with_mujocos_coordinates():
    """Slides x and z then hinge h in one body are one D6 joint (2 linear, 1 angular axis) whose
    coordinates, in file order, are MuJoCo's qpos, each with its own limit, spring, damper, ``ref``
    and actuator; a joint after it (elbow, with a ``ref``) is an ordinary revolute joint. At the
    file's pose the coordinates are the refs (MuJoCo's qpos0). At 20 random configurations our
    forward kinematics from MuJoCo's qpos puts both bodies and both sites where MuJoCo does, and the
    fixed tendon (over two D6 axes and the elbow) and the spatial tendon have MuJoCo's lengths
    (1e-5 relative)."""
    b = nt.ModelBuilder()
    info = b.add_mjcf(PLANAR)
    model = b.finalize("cpu")
    j = info.joints["x"]
    assert info.joints["z"] == info.joints["h"] == j
    assert b.joint_type[j] == T.JOINT_D6 and tuple(b.joint_dof_dim[j]) == (2, 1)
    assert b.joint_type[info.joints["elbow"]] == T.JOINT_REVOLUTE
    assert [info.joint_coords[k] for k in ("x", "z", "h", "elbow")] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    np.testing.assert_allclose(b.joint_limit_lower[:3], [-1.0, -math.inf, -2.0])
    np.testing.assert_allclose(b.joint_limit_upper[:3], [1.0, math.inf, 2.0])
    np.testing.assert_allclose(b.joint_target_kd[:3], [2.0, 0.0, 0.0])
    np.testing.assert_allclose(b.joint_target_ke[:3], [0.0, 3.0, 5.0])
    assert b.joint_target_pos[1] == pytest.approx(0.1)
    assert info.actuators["ph"].index == 2 and info.actuators["ph"].control == "joint_target_pos"
    assert info.actuators["mz"].index == 1 and info.actuators["mz"].control == "joint_f"
    np.testing.assert_allclose(model.joint_q.numpy(), [0.4, -0.2, 0.7, -0.3], atol=1e-6)

    mj = mujoco.MjModel.from_xml_string(PLANAR)
    data = mujoco.MjData(mj)
    solver = SolverXPBD(model)
    state = model.state()
    rng = np.random.default_rng(11)
    for _ in range(20):
        data.qpos[:] = [rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-2, 2), rng.uniform(-3, 3)]
        mujoco.mj_forward(mj, data)
        nt.eval_fk(model, wp.array(data.qpos, dtype=float), wp.zeros(4, dtype=float), state)
        body_q = state.body_q.numpy()
        for name in ("base", "arm"):
            i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)
            np.testing.assert_allclose(body_q[info.bodies[name], :3], data.xpos[i], atol=POSITION_ATOL)
            q_mj = data.xquat[i][[1, 2, 3, 0]]
            assert abs(abs(float(body_q[info.bodies[name], 3:] @ q_mj)) - 1.0) < 1e-6
        np.testing.assert_allclose(nt.eval_joint_coordinates(model, state)[0].numpy(), data.qpos, atol=2e-6)
        solver.update_geometry(state)
        length = solver.transmission_length.numpy()
        for name, t in info.tendons.items():
            i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_TENDON, name)
            assert length[t] == pytest.approx(data.ten_length[i], rel=1e-5, abs=1e-6), name


@pytest.mark.parametrize(
    "joints",
    [
        '<joint name="a" type="hinge" axis="1 0 0"/><joint name="c" type="hinge" axis="0 1 0" pos="0 0 0.1"/>',
        '<joint name="a" type="hinge" axis="1 0 0"/><joint name="c" type="hinge" axis="1 1 0"/>',
        '<joint name="a" type="hinge" axis="1 0 0" ref="0.2"/><joint name="c" type="hinge" axis="0 1 0"/>',
        '<joint name="a" type="hinge" axis="0 1 0"/><joint name="c" type="slide" axis="1 0 0"/>',
        '<joint name="a" type="slide" axis="1 0 0"/><joint name="c" type="slide" axis="1 1 0"/>',
        '<joint name="a" type="hinge"/><joint name="c" type="ball"/>',
        '<joint name="a" axis="0 0 1" pos="-0.03 -0.02 0" range="-30 30"/>'
        '<joint name="c" axis="1 0 0" pos="0 -0.05 -0.07" stiffness="2"/>'
        '<joint name="e" axis="0.287 0.958 0" damping="0.5"/>',
    ],
)
def test_joints_one_d6_cannot_hold_become_a_chain_with_mujocos_kinematics(joints):
    """Combinations one D6 joint cannot reproduce (axis lines that do not meet, axes that are not
    orthogonal, a ref on an earlier hinge, a slide after a hinge, a ball among hinges, and dog's
    scapula: three skew hinges with a limit, a spring and a damper) become a chain of joints through
    virtual links, one per MJCF joint, each with its own coordinate. At 20 random configurations the
    body sits where MuJoCo puts it (position 1e-6 m, orientation 1e-6) and the coordinates read back
    are MuJoCo's qpos; the chain's total mass is the body's."""
    xml = (
        '<mujoco><worldbody><body name="base" pos="0.1 0 0.5"><joint name="root" axis="0 1 0"/>'
        '<geom size="0.05" mass="1"/>'
        f'<body name="b" pos="0 0.1 -0.2">{joints}<geom type="box" size="0.05 0.1 0.15" mass="2"/></body>'
        "</body></worldbody></mujoco>"
    )
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    assert sum(b.body_mass) == pytest.approx(3.0, rel=1e-12)
    assert b.joint_count == mj.njnt  # one joint per MJCF joint: a chain, not one D6
    model = b.finalize("cpu")
    state = model.state()
    rng = np.random.default_rng(5)
    for _ in range(20):
        mujoco.mj_resetData(mj, data)
        q = model.joint_q.numpy().copy()
        for j in range(mj.njnt):
            adr = mj.jnt_qposadr[j]
            if mj.jnt_type[j] == int(mujoco.mjtJoint.mjJNT_BALL):
                quat = rng.normal(size=4)
                data.qpos[adr : adr + 4] = quat / np.linalg.norm(quat)
            else:
                data.qpos[adr] = rng.uniform(-1.0, 1.0)
        mujoco.mj_forward(mj, data)
        for j in range(mj.njnt):
            name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)
            if name in info.joint_coords:
                q[info.joint_coords[name][0]] = data.qpos[mj.jnt_qposadr[j]]
            else:  # the ball: its quaternion (ours xyzw) at the joint's coordinates
                start = int(model.joint_q_start.numpy()[info.joints[name]])
                q[start : start + 4] = data.qpos[mj.jnt_qposadr[j] + np.array([1, 2, 3, 0])]
        nt.eval_fk(model, wp.array(q, dtype=float), wp.zeros(model.joint_dof_count, dtype=float), state)
        body_q = state.body_q.numpy()
        i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "b")
        np.testing.assert_allclose(body_q[info.bodies["b"], :3], data.xpos[i], atol=POSITION_ATOL)
        assert abs(abs(float(body_q[info.bodies["b"], 3:] @ data.xquat[i][[1, 2, 3, 0]])) - 1.0) < 1e-6
        back = nt.eval_joint_coordinates(model, state)[0].numpy()
        for name, (qi, _di) in info.joint_coords.items():
            j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, name)
            assert back[qi] == pytest.approx(data.qpos[mj.jnt_qposadr[j]], abs=2e-5), name


SCAPULA = """
<mujoco><option timestep="0.002" gravity="0 -3 -9.81"/>
  <worldbody><body name="base" pos="0 0 1"><joint name="root" axis="0 1 0" damping="0.05"/>
    <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" mass="1.5"/>
    <body name="scapula" pos="0.2 0 0">
      <joint name="sup" axis="0 0 1" pos="-0.03 -0.02 0" range="-40 40" stiffness="1" springref="5"/>
      <joint name="abd" axis="1 0 0" pos="0 -0.05 -0.07" stiffness="1"/>
      <joint name="ext" axis="0.287 0.958 0" damping="0.02"/>
      <geom type="box" pos="0.05 0.02 -0.1" size="0.03 0.04 0.1" mass="0.4"/>
    </body></body></worldbody>
  <contact><exclude body1="base" body2="scapula"/></contact>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["xpbd", "vbd"])
def test_chain_of_skew_hinges_follows_mujoco(solver):
    """dog's scapula (three hinges at three positions, the last axis not orthogonal to the second)
    under a pendulum, contact-free, released from a random state: the four joint angles follow
    MuJoCo's for 0.2 s while they swing by up to 1.05 rad. Both solvers stay within 0.05 rad (measured
    VBD 0.035, XPBD 0.024). The virtual links are light (1 % of the scapula each); XPBD's articulation
    pass solves the chain's joints together, where its per-joint Gauss-Seidel pass converged slowly
    across them (0.122 rad, 0.050 with 32 iterations; the Jacobi pass 0.109). Heavier links add
    inertia MuJoCo's massless chain does not have (5 %: 0.091 rad on the Gauss-Seidel pass)."""
    from newton_tendon.solvers import SolverVBD

    mj = mujoco.MjModel.from_xml_string(SCAPULA)
    data = mujoco.MjData(mj)
    b = nt.ModelBuilder()
    info = b.add_mjcf(SCAPULA)
    if solver == "vbd":
        b.color()
    model = b.finalize("cpu")
    sim = (SolverXPBD if solver == "xpbd" else SolverVBD)(model)
    rng = np.random.default_rng(3)
    data.qpos[:] = rng.uniform(-0.5, 0.5, mj.nq)
    data.qvel[:] = rng.normal(0.0, 1.0, mj.nv)
    mujoco.mj_forward(mj, data)
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt)]
    q = model.joint_q.numpy().copy()
    qd = np.zeros(model.joint_dof_count, dtype=np.float32)
    for j, name in enumerate(names):
        qi, di = info.joint_coords[name]
        q[qi], qd[di] = data.qpos[j], data.qvel[j]
    s0, s1 = model.state(), model.state()
    nt.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), s0)
    control = model.control()
    worst = 0.0
    for _ in range(100):
        mujoco.mj_step(mj, data)
        sim.step(s0, s1, control, None, 0.002)
        s0, s1 = s1, s0
        ours = nt.eval_joint_coordinates(model, s0)[0].numpy()
        for j, name in enumerate(names):
            worst = max(worst, abs(float(ours[info.joint_coords[name][0]]) - data.qpos[j]))
    assert worst < 0.05, worst


def test_contact_disable_flag_turns_every_collision_off():
    """``<option><flag contact="disable"/></option>``: MuJoCo detects no contact; every imported shape
    keeps drawing and collides with nothing. A sphere dropped onto the plane falls through it (after
    0.5 s it is 1.2 m below its start, free fall: g t^2 / 2 = 1.226 m, XPBD's first-order step
    1.25 m), where with the flag absent it rests on the plane."""
    xml = """<mujoco><option>{flag}</option><worldbody><geom type="plane" size="1 1 0.1"/>
      <body pos="0 0 0.2"><freejoint/><geom size="0.1"/></body></worldbody></mujoco>"""
    for flag, falls in (('<flag contact="disable"/>', True), ("", False)):
        b = nt.ModelBuilder()
        b.add_mjcf(xml.format(flag=flag))
        assert all(not c for c in b.shape_has_collision) == falls
        z = float(simulate_with_contacts(b.finalize("cpu"), 250)[0, 2])
        if falls:
            assert 0.2 - z == pytest.approx(1.23, abs=0.03)
        else:
            assert z == pytest.approx(0.1, abs=0.01)


# ----------------------------------------------------------------------------------------------
# Fixed tendons over a D6 joint's axes (the builder API the importer uses)


def d6_scene():
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_link(mass=1.0)
    j = b.add_joint_d6(-1, body, linear_axes=[(1, 0, 0), (0, 1, 0)], angular_axes=[(0, 0, 1)])
    b.add_articulation()
    return b, body, j


def test_fixed_tendon_over_d6_axes_is_the_weighted_coordinates():
    """``add_fixed_tendon(joints, coefficients, axes=)`` reads axis k of a D6 joint: its length is
    ``sum c_i q_(j_i, k_i)`` (here 2 x - 3 y + 0.5 theta) at random coordinates, to float32 (1e-6 m),
    and its velocity the same sum of the rates."""
    b, body, j = d6_scene()
    t = b.add_fixed_tendon([j, j, j], [2.0, -3.0, 0.5], axes=[0, 1, 2])
    model = b.finalize("cpu")
    solver = SolverXPBD(model)
    state = model.state()
    rng = np.random.default_rng(3)
    for _ in range(10):
        q = rng.uniform(-1.0, 1.0, 3)
        qd = rng.uniform(-1.0, 1.0, 3)
        nt.eval_fk(model, wp.array(q, dtype=float), wp.array(qd, dtype=float), state)
        solver.update_geometry(state)
        assert solver.transmission_length.numpy()[t] == pytest.approx(2 * q[0] - 3 * q[1] + 0.5 * q[2], abs=1e-6)
        assert solver.transmission_velocity.numpy()[t] == pytest.approx(2 * qd[0] - 3 * qd[1] + 0.5 * qd[2], abs=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"axes": [3]}, ValueError, r"axes\[0\] = 3 is not an axis of D6 joint 0"),
        ({"axes": [0, 1]}, ValueError, "1 joints but 2 axes"),
        ({"axes": [True]}, TypeError, r"axes\[0\] must be an int"),
        ({"axes": "0"}, TypeError, "axes must be a sequence"),
    ],
)
def test_fixed_tendon_axes_are_checked(kwargs, exc, match):
    b, _body, j = d6_scene()
    with pytest.raises(exc, match=match):
        b.add_fixed_tendon([j], [1.0], **kwargs)
    assert b.transmission_count == 0


def test_fixed_tendon_axis_rules_for_other_joints():
    """Axis 0 is the only one of a revolute or prismatic joint; a D6 with three angular axes has no
    twist coordinate to read (successive rotations), so its angular axes are refused."""
    b = nt.ModelBuilder()
    a = b.add_link(mass=1.0)
    c = b.add_link(mass=1.0)
    hinge = b.add_joint_revolute(-1, a, axis=(0, 0, 1))
    ball_like = b.add_joint_d6(a, c, linear_axes=[(1, 0, 0)], angular_axes=[(1, 0, 0), (0, 1, 0), (0, 0, 1)])
    with pytest.raises(ValueError, match="has one coordinate"):
        b.add_fixed_tendon([hinge], [1.0], axes=[1])
    with pytest.raises(ValueError, match="with 3 angular axes; fixed tendons need a linear axis"):
        b.add_fixed_tendon([ball_like], [1.0], axes=[1])
    assert b.add_fixed_tendon([ball_like, hinge], [1.0, 1.0], axes=[0, 0]) == 0


def test_fixed_tendon_axes_survive_native_save_and_load(tmp_path):
    """The native JSON keeps each term's axis (``"axis"``, written when not 0) and the loaded model has
    the same term dofs; MuJoCo's USD tendon schema names whole joints, so writing such a term there
    raises ValueError naming the tendon, the joint and the axis."""
    from pxr import Usd

    from newton_tendon.io.native import load, save
    from newton_tendon.usd_tendons import write_tendons

    b, _body, j = d6_scene()
    b.add_fixed_tendon([j, j], [1.0, 2.0], axes=[2, 1], label="d6_sum")
    path = tmp_path / "scene.json"
    save(b, path)
    loaded = load(path)
    assert loaded.transmission_term_axes == [[2, 1]]
    assert loaded.finalize("cpu").transmission_term_dof.numpy().tolist() == [2, 1]
    with pytest.raises(ValueError, match=r"fixed tendon 'd6_sum' uses axis 2 of D6 joint 0"):
        write_tendons(Usd.Stage.CreateInMemory(), b)


# ----------------------------------------------------------------------------------------------
# What the import leaves out: one warning per feature, or an error with strict=True

WARNED = {
    "soft-constraint parameters": (
        '<geom size="0.1" solref="0.02 1"/><geom size="0.1" pos="0.3 0 0" solimp="0.9 0.95 0.001"/>'
    ),
    "fluid forces": '<geom size="0.1" fluidshape="ellipsoid"/>',
    "geom margin": '<geom size="0.1" margin="0.01"/>',
    "joint margin": '<joint name="j" axis="0 1 0" range="-1 1" margin="0.1"/><geom size="0.1"/>',
    "condim 4/6": '<geom size="0.1" condim="6"/>',
    "free joint dynamics": '<joint type="free" damping="0.5" armature="0.01"/><geom size="0.1"/>',
}


@pytest.mark.parametrize("feature", sorted(WARNED))
def test_left_out_features_warn_once_or_raise_with_strict(feature):
    """Each feature the import leaves out or approximates (``UNSUPPORTED``) imports with exactly one
    ``MjcfImportWarning`` naming the feature and its elements (file and line; both geoms of the
    soft-constraint case in one warning), listed in ``info.unsupported``; ``strict=True`` raises
    ValueError at the first such element and leaves the builder as it was. MuJoCo loads every file."""
    from newton_tendon.mjcf import UNSUPPORTED, MjcfImportWarning

    xml = f'<mujoco><worldbody><body name="b">{WARNED[feature]}</body></worldbody></mujoco>'
    mujoco.MjModel.from_xml_string(xml)
    b = nt.ModelBuilder()
    with pytest.warns(MjcfImportWarning) as record:
        info = b.add_mjcf(xml)
    assert len(record) == 1
    message = str(record[0].message)
    assert feature in message and UNSUPPORTED[feature] in message and "<string>:1:" in message
    assert list(info.unsupported) == [feature]
    assert len(info.unsupported[feature]) == (2 if feature == "soft-constraint parameters" else 1)
    strict = nt.ModelBuilder()
    with pytest.raises(ValueError, match=rf"<string>:1: .*{feature}: .*\(strict=True\)"):
        strict.add_mjcf(xml, strict=True)
    assert strict.body_count == 0
    with pytest.raises(TypeError, match="strict must be True or False"):
        strict.add_mjcf(xml, strict=1)


def test_fluid_options_warn_and_a_plain_file_does_not():
    """``<option density viscosity wind>`` with nonzero values is the fluid-forces feature (one
    warning for the three); zeros, and a file without left-out features, warn nothing."""
    import warnings

    from newton_tendon.mjcf import MjcfImportWarning

    body = '<worldbody><body><freejoint/><geom size="0.1"/></body></worldbody>'
    with pytest.warns(MjcfImportWarning, match="fluid forces"):
        info = nt.ModelBuilder().add_mjcf(
            f'<mujoco><option density="1.2" viscosity="1e-5" wind="1 0 0"/>{body}</mujoco>'
        )
    assert len(info.unsupported["fluid forces"]) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info = nt.ModelBuilder().add_mjcf(f'<mujoco><option density="0" viscosity="0"/>{body}</mujoco>')
    assert info.unsupported == {}


def test_settotalmass_and_the_gravity_flag_follow_mujoco():
    """``<compiler settotalmass>`` scales every body's mass and inertia to the total, as MuJoCo's
    compiler does (masses and inertias equal MuJoCo's to 1e-9 relative); ``<flag gravity="disable"/>``
    gives zero gravity."""
    xml = """<mujoco><compiler settotalmass="7"/><option><flag gravity="disable"/></option><worldbody>
      <body name="a"><freejoint/><geom type="box" size="0.1 0.2 0.3"/>
        <body name="c" pos="0 0 0.5"><joint axis="1 0 0"/><geom type="capsule" size="0.05 0.2"/></body>
      </body></worldbody></mujoco>"""
    mj = mujoco.MjModel.from_xml_string(xml)
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    assert sum(b.body_mass) == pytest.approx(7.0, rel=1e-12)
    for name, k in info.bodies.items():
        i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)
        assert b.body_mass[k] == pytest.approx(mj.body_mass[i], rel=1e-9)
        np.testing.assert_allclose(np.linalg.eigvalsh(b.body_inertia[k]), np.sort(mj.body_inertia[i]), rtol=1e-9)
    assert tuple(b.gravity) == (0.0, 0.0, 0.0)
    assert mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY


SLIDE_UNIVERSAL = """
<mujoco>
  <worldbody>
    <body name="b" pos="0.1 -0.2 0.5" euler="5 -10 15">
      <joint name="x" type="slide" axis="1 0 0" ref="0.1"/>
      <joint name="h0" type="hinge" axis="0 0 1" pos="0.02 0.03 0.04" range="-60 60"/>
      <joint name="h1" type="hinge" axis="1 0 0" pos="0.02 0.03 0.04" ref="20"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0.1" size="0.03"/>
      <site name="tip" pos="0.3 0 0.1"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="s"><site site="tip"/><site site="w"/></spatial>
    <fixed name="f"><joint joint="x" coef="0.5"/><joint joint="h0" coef="0.3"/><joint joint="h1" coef="-0.2"/></fixed>
  </tendon>
  <worldbody><site name="w" pos="0.5 0.5 1"/></worldbody>
</mujoco>
"""


def test_slides_then_two_hinges_are_one_d6_with_mujocos_kinematics():
    """A slide then two orthogonal hinges at one position (the last with a ``ref``) are one D6 joint
    with one linear and two angular axes. At the file's pose its coordinates are the refs; at 20
    random coordinates and rates the body, the spatial tendon's length and the fixed tendon's length
    and velocity (over the slide and both universal angles) are MuJoCo's (1e-6 m; 1e-5 relative to
    max(|value|, 0.1)) and the coordinates read back are the ones given."""
    b = nt.ModelBuilder()
    info = b.add_mjcf(SLIDE_UNIVERSAL)
    model = b.finalize("cpu")
    assert model.joint_dof_dim.numpy().tolist() == [[1, 2]]
    np.testing.assert_allclose(model.joint_q.numpy(), [0.1, 0.0, math.radians(20)], atol=1e-6)
    mj = mujoco.MjModel.from_xml_string(SLIDE_UNIVERSAL)
    data = mujoco.MjData(mj)
    solver = SolverXPBD(model)
    rng = np.random.default_rng(9)
    for _ in range(20):
        data.qpos[:] = [rng.uniform(-0.5, 0.5), rng.uniform(-1.0, 1.0), rng.uniform(-1.2, 1.2)]
        data.qvel[:] = rng.normal(size=3)
        mujoco.mj_forward(mj, data)
        state = model.state()
        nt.eval_fk(model, wp.array(data.qpos, dtype=float), wp.array(data.qvel, dtype=float), state)
        np.testing.assert_allclose(state.body_q.numpy()[0, :3], data.xpos[1], atol=POSITION_ATOL)
        np.testing.assert_allclose(nt.eval_joint_coordinates(model, state)[0].numpy(), data.qpos, atol=2e-6)
        solver.update_geometry(state)
        length = solver.transmission_length.numpy()
        velocity = solver.transmission_velocity.numpy()
        for name in ("s", "f"):
            i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_TENDON, name)
            t = info.tendons[name]
            assert abs(length[t] - data.ten_length[i]) <= 1e-5 * max(abs(data.ten_length[i]), 0.1), name
            assert abs(velocity[t] - data.ten_velocity[i]) <= 1e-5 * max(abs(data.ten_velocity[i]), 0.1), name


ACTUATED = """<mujoco><worldbody><site name="w" pos="0 0 2"/><body name="b" pos="0 0 1">
  <joint name="j" axis="0 1 0"/><geom size="0.1"/><site name="s"/></body></worldbody>
  <tendon><spatial name="t"><site site="w"/><site site="s"/></spatial></tendon>
  <actuator>{}</actuator></mujoco>"""
WARNED_ACTUATORS = {
    "Euler actuator filter": '<general tendon="t" dyntype="filter" dynprm="0.05"/>',
}


@pytest.mark.parametrize("feature", sorted(WARNED_ACTUATORS))
def test_actuator_approximations_warn_once_or_raise_with_strict(feature):
    """Actuator features imported approximately (``UNSUPPORTED`` says how): an actuator's Euler
    filter becomes the exact filter with the same time constant. One ``MjcfImportWarning`` each;
    ``strict=True`` raises."""
    from newton_tendon.mjcf import MjcfImportWarning

    xml = ACTUATED.format(WARNED_ACTUATORS[feature])
    mujoco.MjModel.from_xml_string(xml)
    b = nt.ModelBuilder()
    with pytest.warns(MjcfImportWarning, match=feature):
        info = b.add_mjcf(xml)
    assert list(info.unsupported) == [feature]
    assert b.transmission_properties[0]["activation_time"] == pytest.approx(0.05)
    with pytest.raises(ValueError, match=rf"{feature}: .*\(strict=True\)"):
        nt.ModelBuilder().add_mjcf(xml, strict=True)


JOINT_TRANSMISSION = """<mujoco><option timestep="0.002" gravity="0 0 -9.81"/>
  <worldbody><body name="arm" pos="0 0 1">
    <joint name="hinge" axis="0 1 0" damping="0.05" {hinge}/>
    <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="1"/>
    <body name="slider" pos="0.4 0 0"><joint name="slide" type="slide" axis="1 0 0" {slide}/>
      <geom size="0.05" mass="0.5"/></body>
  </body></worldbody>
  <actuator>{actuators}</actuator></mujoco>"""

JOINT_TRANSMISSION_CASES = {
    # Gravity's torque on the arm is ~3.9 N m at rest: dry friction of 3 N m slows the fall, and the
    # slide's 1.5 N holds the slider until the arm has tilted ~18 degrees.
    "frictionloss": dict(hinge='frictionloss="3"', slide='frictionloss="1.5"', actuators=""),
    # 5 N m of dry friction holds the arm where it is.
    "stiction": dict(hinge='frictionloss="5"', slide='frictionloss="1"', actuators=""),
    # An affine joint actuator that is no servo (gain 30 against a bias spring of 20 and a constant
    # 0.5 N m) and a velocity-biased one on the slide.
    "affine": dict(
        hinge="",
        slide="",
        actuators='<general joint="hinge" gainprm="30" biastype="affine" biasprm="0.5 -20 -0.3"/>'
        '<general joint="slide" gainprm="2" biastype="affine" biasprm="0 0 -0.5"/>',
    ),
    # Nothing new: the slider flung out along the turning arm (XPBD gave the parent of a prismatic
    # joint the lever arm of its own anchor, not of the point the child is at, and blew up at 0.42 s).
    "plain": dict(hinge="", slide="", actuators=""),
    # A position servo whose force saturates at 2 N m (gravity needs ~3.9 at the start).
    "forcerange": dict(hinge="", slide="", actuators='<position joint="hinge" kp="400" kv="5" forcerange="-2 2"/>'),
    # A filtered joint servo (exact filter, 50 ms) and a filtered motor on the slide.
    "filter": dict(
        hinge="",
        slide="",
        actuators='<general joint="hinge" gainprm="50" biasprm="0 -50 -2" biastype="affine" '
        'dyntype="filterexact" dynprm="0.05"/>'
        '<general joint="slide" gainprm="3" dyntype="filterexact" dynprm="0.02" gear="2"/>',
    ),
}


@pytest.mark.parametrize("solver", ["xpbd", "vbd"])
@pytest.mark.parametrize("case", sorted(JOINT_TRANSMISSION_CASES))
def test_joint_friction_force_range_and_filter_follow_mujoco(case, solver):
    """Joint ``frictionloss``, a joint servo's ``forcerange``, a joint actuator's activation filter
    and an affine joint actuator that is no motor or servo go through a one-joint fixed tendon
    (length = the coordinate) with that friction loss, actuation bound, filter or bias: exactly
    MuJoCo's joint transmission. An arm with a slider on it,
    released from rest under gravity with controls 0.3 (ctrl is scaled through ``info.actuators``):
    both coordinates follow MuJoCo's for 0.5 s while the slider is flung 1.2 m out, within 0.04 (rad
    or m) on XPBD (measured 0.015 at most; 0.008 with no friction or actuator; 0.032 with the affine
    actuators, 0.015 at a quarter of the step: the integrators' first-order difference) and 0.08 on VBD
    (measured 0.042 at most; 0.052 on the plain scene: VBD's own integration error on this fast
    motion, which the new rows do not add to). Where dry friction holds the arm (stiction: 5 N m
    against 3.9) MuJoCo's regularized friction creeps 0.014 rad in 0.5 s; VBD holds within 1e-3 rad
    (measured 7e-4) and XPBD at its default 8 iterations creeps 0.048 rad (bound 0.06; 4.8e-3 at 32
    iterations; the Jacobi joint pass 0.049, 7.4e-3 at 32, 2e-4 at 128: its tendon rows converge
    slowly on a load near the friction bound, docs/limitations.md)."""
    from newton_tendon.solvers import SolverVBD

    xml = JOINT_TRANSMISSION.format(**JOINT_TRANSMISSION_CASES[case])
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    data.ctrl[:] = 0.3
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    expected = {"frictionloss": 2, "stiction": 2, "plain": 0}.get(case, mj.nu)
    assert not info.unsupported and not info.tendons and len(info.joint_tendons) == expected
    if solver == "vbd":
        b.color()
    model = b.finalize("cpu")
    sim = (SolverXPBD if solver == "xpbd" else SolverVBD)(model)
    control = model.control()
    arrays = {}
    for name, act in info.actuators.items():
        values = arrays.setdefault(act.control, getattr(control, act.control).numpy())
        ctrl = data.ctrl[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, name)]
        values[act.index] = act.scale * ctrl + act.offset
    for key, values in arrays.items():
        getattr(control, key).assign(values)
    s0, s1 = model.state(), model.state()
    coords = [info.joint_coords[n][0] for n in ("hinge", "slide")]
    worst = 0.0
    for _ in range(250):
        mujoco.mj_step(mj, data)
        sim.step(s0, s1, control, None, 0.002)
        s0, s1 = s1, s0
        ours = nt.eval_joint_coordinates(model, s0)[0].numpy()[coords]
        worst = max(worst, float(np.abs(ours - data.qpos).max()))
    if case == "stiction":
        assert np.abs(ours).max() < (0.06 if solver == "xpbd" else 1e-3)
        assert worst < (0.06 if solver == "xpbd" else 0.08), worst
    else:
        assert worst < (0.04 if solver == "xpbd" else 0.08), worst


MEETING_HINGES = """
<mujoco><worldbody><site name="w" pos="0.4 0.5 1.2"/>
  <body name="b" pos="0.1 0 1" euler="10 0 -20">
    <joint name="h0" axis="0 0 1" pos="0.1 0.2 0"/>
    <joint name="h1" axis="1 0 0" pos="0 0.2 0.3" ref="15"/>
    <geom type="capsule" fromto="0 0 0 0.3 0.1 0" size="0.02"/><site name="tip" pos="0.3 0.1 0"/>
  </body></worldbody>
  <tendon><spatial name="s"><site site="w"/><site site="tip"/></spatial></tendon>
</mujoco>
"""


def test_hinges_whose_axis_lines_meet_are_one_universal_joint():
    """Two hinges at different positions whose axis lines meet (at (0.1, 0.2, 0.3), neither hinge's
    ``pos``; dm_control's fish fins are such a pair) turn the body about that point, so they are one
    universal joint anchored there. At 20 random coordinates the body and a tendon to it are where
    MuJoCo puts them (1e-6 m, 1e-5 relative), and the coordinates read back are MuJoCo's qpos (the
    second hinge's ``ref`` included)."""
    b = nt.ModelBuilder()
    info = b.add_mjcf(MEETING_HINGES)
    model = b.finalize("cpu")
    assert model.joint_dof_dim.numpy().tolist() == [[0, 2]]
    np.testing.assert_allclose(b.joint_X_c[0][:3], [0.1, 0.2, 0.3], atol=1e-12)
    mj = mujoco.MjModel.from_xml_string(MEETING_HINGES)
    data = mujoco.MjData(mj)
    solver = SolverXPBD(model)
    rng = np.random.default_rng(12)
    for _ in range(20):
        data.qpos[:] = rng.uniform(-1.2, 1.2, 2)
        mujoco.mj_forward(mj, data)
        state = model.state()
        nt.eval_fk(model, wp.array(data.qpos, dtype=float), wp.zeros(2, dtype=float), state)
        np.testing.assert_allclose(state.body_q.numpy()[0, :3], data.xpos[1], atol=POSITION_ATOL)
        np.testing.assert_allclose(nt.eval_joint_coordinates(model, state)[0].numpy(), data.qpos, atol=2e-6)
        solver.update_geometry(state)
        assert solver.transmission_length.numpy()[info.tendons["s"]] == pytest.approx(data.ten_length[0], rel=1e-5)


# ----------------------------------------------------------------------------------------------
# Ellipsoid geoms, flat height fields, constraint-disable flags


def test_ellipsoid_geom_mass_and_pose_match_mujoco():
    """An ellipsoid geom (size = its semi-axes), rotated and offset in its body, adds the mass, centre and
    inertia MuJoCo's compiler computes (m = 4/3 pi rho abc, I = m (b^2 + c^2)/5 ..., 1e-9 relative) and
    becomes an ellipsoid shape with those semi-axes at MuJoCo's geom pose."""
    xml = """<mujoco><worldbody><body name="e" pos="0 0 1"><freejoint/>
      <geom name="g" type="ellipsoid" size=".3 .2 .1" pos=".1 0 0" euler="20 30 0" density="700"/>
      <geom type="sphere" size=".05" pos="-.2 0 0"/></body></worldbody></mujoco>"""
    mj = mujoco.MjModel.from_xml_string(xml)
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    k = info.bodies["e"]
    i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "e")
    assert b.body_mass[k] == pytest.approx(mj.body_mass[i], rel=1e-9)
    np.testing.assert_allclose(b.body_com[k], mj.body_ipos[i], atol=1e-9)
    np.testing.assert_allclose(np.linalg.eigvalsh(b.body_inertia[k]), np.sort(mj.body_inertia[i]), rtol=1e-9)
    s = info.shapes["g"]
    assert b.shape_type[s] == T.SHAPE_ELLIPSOID
    np.testing.assert_allclose(b.shape_scale[s], (0.3, 0.2, 0.1))
    g = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, "g")
    np.testing.assert_allclose(b.shape_transform[s][:3], mj.geom_pos[g], atol=1e-12)
    q = b.shape_transform[s][3:]
    assert abs(abs(float(np.dot(q, mj.geom_quat[g][[1, 2, 3, 0]]))) - 1.0) < 1e-12


HFIELD = """<mujoco><asset><hfield name="t" nrow="11" ncol="11" size="2 3 .5 .4"{data}/></asset>
  <worldbody><geom name="terrain" type="hfield" hfield="t" pos="0 0 -.01"/>
  <body pos="0.5 0.5 0.3"><freejoint/><geom size=".1"/></body></worldbody></mujoco>"""


def test_flat_height_field_is_a_box_and_holds_a_sphere():
    """A height field with no elevation data is MuJoCo's flat surface z = 0 (of the geom frame) over
    |x| <= size[0], |y| <= size[1], solid down to -size[3]: a static box with half extents
    (2, 3, 0.2) centred 0.2 m below the surface. A sphere (r = 0.1) dropped on it in MuJoCo and here
    rests with its centre at -0.01 + 0.1 m (2 mm: contact softness in both)."""
    b = nt.ModelBuilder()
    info = b.add_mjcf(HFIELD.format(data=""))
    s = info.shapes["terrain"]
    assert b.shape_type[s] == T.SHAPE_BOX and b.shape_body[s] == -1
    np.testing.assert_allclose(b.shape_scale[s], (2.0, 3.0, 0.2))
    np.testing.assert_allclose(b.shape_transform[s][:3], (0.0, 0.0, -0.21), atol=1e-12)
    body_q = simulate_with_contacts(b.finalize("cpu"), 500)
    mj = mujoco.MjModel.from_xml_string(HFIELD.format(data=""))
    data = mujoco.MjData(mj)
    mujoco.mj_step(mj, data, 500)
    assert float(body_q[0, 2]) == pytest.approx(0.09, abs=2e-3)
    assert float(data.qpos[2]) == pytest.approx(0.09, abs=2e-3)


def test_height_field_with_elevation_data_is_rejected():
    xml = HFIELD.format(data=' elevation="' + " ".join(["0.5"] * 121) + '"')
    mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ValueError, match="<geom name='terrain'>: hfield 't' has elevation data"):
        nt.ModelBuilder().add_mjcf(xml)


FLAGS = """<mujoco><option><flag {flags}/></option><worldbody><geom type="plane" size="1 1 .1"/>
  <body name="a" pos="0 0 .5"><joint name="h" axis="0 1 0" range="-10 10" frictionloss="0"/>
    <geom type="capsule" fromto="0 0 0 .3 0 0" size=".02"/></body>
  <body name="c" pos="0 .5 .5"><joint name="s" type="slide" axis="1 0 0" range="-.1 .1"/>
    <geom size=".05"/></body></worldbody>
  <tendon><fixed name="t1" range="-.2 .2" frictionloss=".5"><joint joint="h" coef="1"/></fixed>
    <fixed name="t2"><joint joint="s" coef="1"/></fixed></tendon>
  <equality><tendon tendon1="t1" tendon2="t2"/></equality></mujoco>"""


@pytest.mark.parametrize(
    "flags, off",
    [
        ('constraint="disable"', {"limit", "equality", "frictionloss", "contact"}),
        ('limit="disable"', {"limit"}),
        ('equality="disable"', {"equality"}),
        ('frictionloss="disable"', {"frictionloss"}),
        ('contact="enable"', set()),
    ],
)
def test_constraint_disable_flags(flags, off):
    """MuJoCo's ``<flag>`` switches for constraint kinds: ``limit`` (joint and tendon ranges import as no
    limit), ``equality`` (tendon couplings import disabled), ``frictionloss`` (tendon friction loss 0) and
    ``constraint`` (all of them and contacts). MuJoCo compiles each file; its ``opt.disableflags`` has the
    same kinds off."""
    xml = FLAGS.format(flags=flags)
    mj = mujoco.MjModel.from_xml_string(xml)
    bits = {
        "limit": mujoco.mjtDisableBit.mjDSBL_LIMIT,
        "equality": mujoco.mjtDisableBit.mjDSBL_EQUALITY,
        "frictionloss": mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS,
        "contact": mujoco.mjtDisableBit.mjDSBL_CONTACT,
    }
    constraint_off = bool(mj.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT))
    for kind, bit in bits.items():
        assert (bool(mj.opt.disableflags & int(bit)) or constraint_off) == (kind in off)
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    limited = "limit" not in off
    model = b.finalize("cpu")
    lower = model.joint_limit_lower.numpy()
    for name in ("h", "s"):
        assert (lower[model.joint_qd_start.numpy()[info.joints[name]]] > -1e30) == limited
    t1 = info.tendons["t1"]
    assert (model.transmission_lower_limit.numpy()[t1] > -1e30) == limited
    assert model.transmission_friction_loss.numpy()[t1] == (0.0 if "frictionloss" in off else 0.5)
    assert bool(model.coupling_enabled.numpy()[0]) == ("equality" not in off)
    assert all(not c for c in b.shape_has_collision) == ("contact" in off)
    # A joint's dry friction is a one-joint fixed tendon's friction loss; with frictionloss off MuJoCo
    # ignores it, and so does the import (no such tendon).
    with_friction = xml.replace('frictionloss="0"', 'frictionloss="0.3"')
    mujoco.MjModel.from_xml_string(with_friction)
    info2 = nt.ModelBuilder().add_mjcf(with_friction)
    assert list(info2.joint_tendons) == ([] if "frictionloss" in off else ["h/transmission"])


PAIRS = """<mujoco><option timestep="0.002"/>
  <worldbody><geom name="floor" type="plane" size="5 5 0.1" friction="1"/>
    <body name="slider" pos="0 0 0.1"><freejoint/><geom name="box" type="box" size="0.1 0.1 0.1" mass="1"
      friction="1"/></body>
    <body name="ghost" pos="0 1 0.2"><freejoint/><geom name="ball" size="0.1" mass="0.5" contype="0"
      conaffinity="0"/></body>
    <body name="faller" pos="0 -1 0.2"><freejoint/><geom name="ball2" size="0.1" mass="0.5" contype="0"
      conaffinity="0"/></body>
  </worldbody>
  <contact><pair geom1="floor" geom2="box" friction="0.2 0.2"/><pair geom1="ball" geom2="floor"/></contact>
</mujoco>"""


@pytest.mark.parametrize("solver", ["xpbd", "vbd"])
def test_explicit_contact_pairs_follow_mujoco(solver):
    """``<contact><pair>``: a box launched at 2 m/s slides on the floor with the pair's friction 0.2,
    not the geoms' 1.0, and stops 1.02 m on (v^2 / (2 mu g) = 1.019); MuJoCo's box stops at 1.017 m,
    ours at 1.017 on both solvers (bound 0.05 m: the stop distance goes as 1/mu, so it tells 0.2
    from anything near 1). A ball with contype 0 rests on the floor through its pair (MuJoCo at
    0.0996 m, ours at its radius 0.1 m; bound 2 mm), and the same ball without a pair falls through
    in both."""
    mj = mujoco.MjModel.from_xml_string(PAIRS)
    data = mujoco.MjData(mj)
    data.qvel[0] = 2.0
    b = nt.ModelBuilder()
    info = b.add_mjcf(PAIRS)
    assert b.shape_contact_pair_mu == {
        tuple(sorted((info.shapes["floor"], info.shapes["box"]))): pytest.approx(0.2),
        tuple(sorted((info.shapes["floor"], info.shapes["ball"]))): pytest.approx(1.0),
    }
    if solver == "vbd":
        b.color()
    model = b.finalize("cpu")
    qd = model.body_qd.numpy()
    qd[info.bodies["slider"], 0] = 2.0
    model.body_qd.assign(qd)
    for _ in range(500):
        mujoco.mj_step(mj, data)
    q = simulate_with_contacts(model, 500, 0.002, solver)
    x_mj = data.xpos[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "slider"), 0]
    assert x_mj == pytest.approx(2.0**2 / (2 * 0.2 * 9.81), abs=0.05)
    assert q[info.bodies["slider"], 0] == pytest.approx(x_mj, abs=0.05)
    for name, z_expected in (("ghost", 0.1), ("faller", None)):
        z_mj = data.xpos[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name), 2]
        z = q[info.bodies[name], 2]
        if z_expected is None:
            assert z_mj < -0.5 and z < -0.5
        else:
            assert z_mj == pytest.approx(z_expected, abs=2e-3) and z == pytest.approx(z_expected, abs=2e-3)


def test_imported_geoms_mix_friction_by_the_maximum_as_mujoco():
    """MuJoCo gives a contact the larger of its two geoms' frictions: a box (friction 0.2) launched
    at 2 m/s on a floor of friction 0.5 stops after v^2 / (2 * 0.5 g) = 0.41 m, as in MuJoCo (0.05 m),
    not after the 0.58 m the mean 0.35 would give. Shapes added by hand keep the mean."""
    xml = (
        PAIRS.replace('<pair geom1="floor" geom2="box" friction="0.2 0.2"/>', "")
        .replace('friction="1"/></body>', 'friction="0.2"/></body>')
        .replace('size="5 5 0.1" friction="1"', 'size="5 5 0.1" friction="0.5"')
    )
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    data.qvel[0] = 2.0
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    hand = b.add_shape_sphere(info.bodies["faller"], None, 0.05, mu=0.9)
    model = b.finalize("cpu")
    pairs = model.shape_contact_pairs.numpy()
    pair_mu = model.shape_contact_pair_mu.numpy()
    for (sa, sb), mu in zip(pairs, pair_mu, strict=True):
        if hand in (sa, sb):
            assert mu == -1.0  # the mean, for a shape added by hand
        elif {sa, sb} == {info.shapes["floor"], info.shapes["box"]}:
            assert mu == pytest.approx(0.5)
    qd = model.body_qd.numpy()
    qd[info.bodies["slider"], 0] = 2.0
    model.body_qd.assign(qd)
    for _ in range(400):
        mujoco.mj_step(mj, data)
    q = simulate_with_contacts(model, 400, 0.002)
    x_mj = data.xpos[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "slider"), 0]
    assert x_mj == pytest.approx(4.0 / (2 * 0.5 * 9.81), abs=0.05)
    assert q[info.bodies["slider"], 0] == pytest.approx(x_mj, abs=0.05)


MASS_RULES = {
    # A geom outside <compiler inertiagrouprange> (default 0 to 5) adds no mass, its group from a
    # default class or its own attribute.
    "group outside the default range": '<worldbody><body><freejoint/><geom size="0.1"/>'
    '<geom size="0.1" pos="0.3 0 0" group="6"/></body></worldbody>',
    "inertiagrouprange": '<compiler inertiagrouprange="0 2"/><default><geom group="3"/></default>'
    '<worldbody><body><freejoint/><geom size="0.1" group="1"/><geom size="0.2" pos="0.3 0 0"/></body></worldbody>',
    # inertiafromgeom="false": geoms add no mass anywhere, only <inertial> counts.
    "inertiafromgeom false": '<compiler inertiafromgeom="false"/><worldbody><body><geom size="0.1"/>'
    '<body><joint/><geom size="0.3"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></body></worldbody>',
}


@pytest.mark.parametrize("case", sorted(MASS_RULES))
def test_which_geoms_give_mass_follows_mujoco(case):
    """Each body's mass equals MuJoCo's (1e-12 relative) under its rules for which geoms count."""
    xml = f"<mujoco>{MASS_RULES[case]}</mujoco>"
    mj = mujoco.MjModel.from_xml_string(xml)
    b = nt.ModelBuilder()
    b.add_mjcf(xml)
    np.testing.assert_allclose(b.body_mass, mj.body_mass[1:], rtol=1e-12)


@pytest.mark.parametrize(
    ("xml", "match"),
    [
        ('<option actuatorgroupdisable="1"/>', "actuatorgroupdisable"),
        ('<option><flag override="enable"/></option>', "flag override='enable' changes the physics"),
        ('<option><flag sleep="enable"/></option>', "flag sleep='enable' changes the physics"),
        ('<compiler alignfree="true"/>', "alignfree='true'"),
        ('<asset><hfield name="h"/></asset>', "<hfield name='h'>: attribute size is required"),
        (
            '<worldbody><body><joint type="ball" springdamper="0.1 1"/><geom size="0.1"/></body></worldbody>',
            "springdamper is not supported on ball joints",
        ),
    ],
)
def test_settings_mujoco_applies_and_we_cannot_are_rejected(xml, match):
    """Settings MuJoCo loads and that would change the physics here without a word (found by probing
    every attribute of MuJoCo 4.0.1's schema, docs/mjcf_attributes.md) raise ValueError naming them
    (a height field without a size MuJoCo rejects too; ours named nothing before)."""
    xml = f"<mujoco>{xml}</mujoco>"
    if "hfield" in xml:
        with pytest.raises(ValueError, match="size"):
            mujoco.MjModel.from_xml_string(xml)
    else:
        mujoco.MjModel.from_xml_string(xml)
    with pytest.raises(ValueError, match=match):
        nt.ModelBuilder().add_mjcf(xml)


def test_exclude_may_name_the_world_body():
    """``<exclude body1="world" body2="b">``, which MuJoCo accepts: b's shapes never touch the
    world's."""
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 0.1"/>
      <body name="b" pos="0 0 0.05"><freejoint/><geom name="ball" size="0.1"/></body></worldbody>
      <contact><exclude body1="world" body2="b"/></contact></mujoco>"""
    mujoco.MjModel.from_xml_string(xml)
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    assert b.shape_filter_pairs == {tuple(sorted((info.shapes["floor"], info.shapes["ball"])))}


@pytest.mark.parametrize(
    "xml",
    [
        '<option><flag sleep="disable" clampctrl="disable" sensor="disable" midphase="disable"/></option>',
        '<option><flag autoreset="disable" diagexact="disable" ipc="disable" speculative="disable"/></option>',
        '<worldbody><body sleep="never"><freejoint/><geom size="0.1" castshadow="false"/></body></worldbody>',
        '<worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>'
        '<actuator><position joint="j" kp="1" dampratio="0" inheritrange="0"/></actuator>',
    ],
)
def test_no_op_settings_import_without_a_word(xml):
    """Values that change nothing here (flags MuJoCo has off by default, or whose effect our solvers
    never have; actuator attributes at their no-op value; drawing hints) import with no warning:
    MuJoCo loads them, and real files carry them."""
    import warnings

    xml = f"<mujoco>{xml}</mujoco>"
    mujoco.MjModel.from_xml_string(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info = nt.ModelBuilder().add_mjcf(xml)
    assert not info.unsupported


@pytest.mark.parametrize(
    ("defaults", "actuator"),
    [
        ('<motor gear="2"/>', '<position name="a" joint="j" kp="3"/>'),
        ('<general ctrlrange="-1 1" ctrllimited="true" gear="4"/>', '<motor name="a" joint="j"/>'),
        ('<velocity kv="3"/>', '<position name="a" joint="j"/>'),
        ('<position kp="10" kv="2" gear="0.5"/>', '<position name="a" joint="j"/>'),
    ],
)
def test_actuator_defaults_are_shared_by_kind_as_mujoco(defaults, actuator):
    """MuJoCo keeps one actuator default per class: gear, ranges and limited flags set under any
    actuator tag reach every kind, while a shortcut's kp and kv stay with their tag. The imported
    gear (the control scale of a servo is 1 / gear, of a motor gear), ctrlrange and servo gain
    (gear^2 kp on the joint drive) equal MuJoCo's."""
    xml = (
        f'<mujoco><default>{defaults}</default><worldbody><body><joint name="j"/><geom size="0.1"/></body>'
        f"</worldbody><actuator>{actuator}</actuator></mujoco>"
    )
    mj = mujoco.MjModel.from_xml_string(xml)
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    act = info.actuators["a"]
    gear = mj.actuator_gear[0, 0]
    assert act.scale == pytest.approx(gear if act.kind == "motor" else 1.0 / gear)
    expected_range = tuple(mj.actuator_ctrlrange[0]) if mj.actuator_ctrllimited[0] else None
    assert act.ctrlrange == (pytest.approx(expected_range) if expected_range else None)
    if act.kind == "position":
        assert b.joint_target_ke[0] == pytest.approx(gear**2 * mj.actuator_gainprm[0, 0])
        assert b.joint_target_kd[0] == pytest.approx(-(gear**2) * mj.actuator_biasprm[0, 2])


def test_a_long_path_keeps_its_file_name_in_messages(tmp_path):
    """A path longer than the 80 characters a message repeats is cut from its start, so the file name
    and line stay in the message (cut from its end, a temporary folder 81 characters deep hid them)."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    write(deep, "main.xml", '<mujoco><include file="p.xml"/></mujoco>')
    match = r"\.\.\.d*/e+/main\.xml:1: <include>: cannot read MJCF file '\.\.\..*/p\.xml'"
    with pytest.raises(ValueError, match=match):
        nt.ModelBuilder().add_mjcf(deep / "main.xml")
