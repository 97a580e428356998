"""MJCF import (``newton_tendon.mjcf.add_mjcf``) and MuJoCo lowering of routed cables (``lower_tendons``).

Oracles: each fixture in ``tests/assets/mjcf`` equals the same scene built by hand through the
builder API (finalized arrays equal); MuJoCo itself (when installed) for body poses, masses and
inertias at the initial configuration, tendon lengths at several joint configurations, actuator
forces, and the lengths of lowered routed cables.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon import _hostmath as hm
from newton_tendon.mjcf import lower_tendons
from newton_tendon.solvers import SolverXPBD
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

from ..helpers import same

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "mjcf"
ID = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
DEG = math.pi / 180.0
ARRAY_RTOL = 1.0e-6
"""float32 arrays of the import and of the hand-built scene: the importer composes the same
quaternions in a different order (Euler sequences, zaxis), a few float64 ulps, stored as float32."""
ARRAY_ATOL = 1.0e-7
LENGTH_RTOL = 1.0e-5
"""Our float32 tendon lengths vs MuJoCo's float64 ``ten_length`` (routes of O(1) m)."""


def pos(*p):
    return (*p, 0.0, 0.0, 0.0, 1.0)


def rot(axis, deg):
    return hm.quat_from_axis_angle(axis, deg * DEG)


def load(name: str, **kw):
    b = nt.ModelBuilder()
    info = b.add_mjcf(ASSETS / name, **kw)
    return b, info


def model_arrays(model) -> dict:
    out = {}
    for k, v in vars(model).items():
        if isinstance(v, wp.array):
            out[k] = v.numpy()
        elif k.endswith("_label"):
            out[k] = list(v)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v
    return out


def assert_same_model(imported: nt.ModelBuilder, by_hand: nt.ModelBuilder):
    a = model_arrays(imported.finalize("cpu"))
    b = model_arrays(by_hand.finalize("cpu"))
    assert a.keys() == b.keys()
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            assert x.shape == y.shape, k
            np.testing.assert_allclose(x, y, rtol=ARRAY_RTOL, atol=ARRAY_ATOL, err_msg=k)
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=k)
        else:
            assert x == y, k


# ----------------------------------------------------------------------------------------------
# Hand-built twins of the fixtures


def hand_orientations():
    b = nt.ModelBuilder()
    q_eu = hm.quat_mul(hm.quat_mul(rot((0, 0, 1), 30), rot((0, 1, 0), 20)), rot((1, 0, 0), 10))
    for name, xf in (
        ("q", (1, 0, 0, 0.0, 0.3826834, 0.0, 0.9238795)),
        ("aa", (0, 1, 0, *rot((0, 0, 1), 90))),
    ):
        body = b.add_link(xform=xf, label=name)
        b.add_shape_sphere(body, None, 0.1, mu=1.0)
        b.add_articulation([b.add_joint_free(body)], label=name)
    eu_xf = (0, 0, 1, *q_eu)
    eu = b.add_link(xform=eu_xf, label="eu")
    b.add_shape_sphere(eu, None, 0.1, mu=1.0)
    j0 = b.add_joint_free(eu)
    xy_local = (0.2, 0, 0, *rot((0, 0, 1), 90))
    xy = b.add_link(xform=hm.transform_mul(eu_xf, xy_local), label="xy")
    b.add_shape_sphere(xy, None, 0.1, mu=1.0)
    b.add_joint_revolute(eu, xy, parent_xform=xy_local, axis=(1, 0, 0))
    za_local = (0, 0.2, 0, *rot((0, 1, 0), 45))
    za = b.add_link(xform=hm.transform_mul(hm.transform_mul(eu_xf, xy_local), za_local), label="za")
    b.add_shape_sphere(za, None, 0.1, mu=1.0)
    b.add_joint_prismatic(xy, za, parent_xform=za_local, axis=(0, 0, 1))
    b.add_articulation(list(range(j0, b.joint_count)), label="eu")
    return b


def hand_joints():
    b = nt.ModelBuilder()
    base = b.add_link(xform=pos(0, 0, 1), label="base")
    b.add_shape_box(base, None, 0.1, 0.1, 0.1, mu=1.0)
    j0 = b.add_joint_free(base, label="root")
    upper = b.add_link(xform=pos(0.3, 0, 1), label="upper")
    b.add_shape_capsule(upper, (0.05, 0, 0, *rot((0, 1, 0), 90)), 0.03, 0.15, mu=1.0)
    b.add_joint_revolute(
        base,
        upper,
        parent_xform=pos(0.2, 0, 0),
        child_xform=pos(-0.1, 0, 0),
        axis=(0, 1, 0),
        limit_lower=-45 * DEG,
        limit_upper=90 * DEG,
        target_kd=0.5,
        target_ke=2.0,
        target_pos=10 * DEG,
        armature=0.01,
        label="hinge",
    )
    slider = b.add_link(xform=pos(0.6, 0, 1), label="slider")
    slider_sphere = b.add_shape_sphere(slider, None, 0.05, mu=1.0)
    b.add_joint_prismatic(
        upper, slider, parent_xform=pos(0.3, 0, 0), axis=(1, 0, 0), limit_lower=-0.1, limit_upper=0.2, label="slide"
    )
    ball = b.add_link(xform=pos(0.6, 0, 0.8), label="ball")
    b.add_shape_cylinder(ball, None, 0.03, 0.1, mu=1.0, has_collision=False)
    b.add_joint_ball(slider, ball, parent_xform=pos(0, 0, -0.2), label="ball")
    tip = b.add_link(xform=pos(0.6, 0, 0.6), label="tip")
    tip_sphere = b.add_shape_sphere(tip, None, 0.02, mu=1.0)
    b.add_joint_fixed(ball, tip, parent_xform=pos(0, 0, -0.2), label="tip")
    # MuJoCo's parent filter works on weld groups: the jointless tip is welded to the ball, whose
    # parent is the slider, so the tip never collides with the slider.
    b.add_shape_collision_filter_pair(slider_sphere, tip_sphere)
    b.add_articulation(list(range(j0, b.joint_count)), label="base")
    return b


def hand_geoms():
    b = nt.ModelBuilder()
    b.add_shape_plane(-1, None, mu=0.8, label="floor")
    mixed = b.add_link(xform=pos(0, 0, 1), label="mixed")
    b.add_shape_sphere(mixed, pos(0.1, 0, 0), 0.1, density=500.0, mu=1.0, label="sph")
    b.add_shape_box(mixed, (0, 0.1, 0, *rot((0, 0, 1), 30)), 0.1, 0.2, 0.05, mass=2.0, mu=1.0, label="box")
    b.add_shape_capsule(mixed, pos(0, 0, 0.15), 0.04, 0.15, mu=0.0, label="cap")
    b.add_shape_cylinder(
        mixed, (0, 0, -0.2, 0.7071068, 0, 0, 0.7071068), 0.05, 0.1, mu=1.0, has_collision=False, label="cyl"
    )
    b.add_articulation([b.add_joint_free(mixed)], label="mixed")
    given = b.add_link(
        xform=pos(1, 0, 1),
        mass=3.0,
        inertia=np.diag([0.1, 0.2, 0.3]),
        com=(0.01, 0, 0),
        lock_inertia=True,
        label="given",
    )
    b.add_shape_sphere(given, None, 0.2, mu=1.0)
    b.add_articulation([b.add_joint_free(given)], label="given")
    return b


def hand_defaults():
    b = nt.ModelBuilder()
    a = b.add_link(xform=pos(0, 0, 1), label="a")
    b.add_shape_capsule(a, None, 0.05, 0.2, density=800.0, mu=0.3)
    j0 = b.add_joint_revolute(
        -1, a, parent_xform=pos(0, 0, 1), axis=(0, 1, 0), limit_lower=-1.0, limit_upper=1.0, target_kd=0.1, label="ja"
    )
    c = b.add_link(xform=pos(0, 0, 0.6), label="b")
    b.add_shape_capsule(c, None, 0.02, 0.2, density=800.0, mu=0.3)
    b.add_joint_prismatic(a, c, parent_xform=pos(0, 0, -0.4), axis=(0, 0, 1), target_kd=0.1, label="jb")
    b.add_articulation([j0, j0 + 1], label="a")
    return b


def hand_spatial():
    b = nt.ModelBuilder()
    b.add_shape_cylinder(-1, (0.3, 0, 1.8, *rot((1, 0, 0), -90)), 0.1, 0.05, mu=1.0, has_collision=False, label="wheel")
    arm = b.add_link(xform=pos(0, 0, 1), label="arm")
    b.add_shape_sphere(arm, pos(0.3, 0, 0), 0.08, mu=1.0, has_collision=False, label="ball")
    b.add_shape_capsule(arm, (0.3, 0, 0, *rot((0, 1, 0), 90)), 0.02, 0.3, mu=1.0)
    j0 = b.add_joint_revolute(
        -1,
        arm,
        parent_xform=pos(0, 0, 1),
        axis=(0, 1, 0),
        limit_lower=-math.pi / 2,
        limit_upper=math.pi / 2,
        label="shoulder",
    )
    hand = b.add_link(xform=pos(0.6, 0, 1), label="hand")
    b.add_shape_sphere(hand, None, 0.03, mu=1.0)
    b.add_joint_prismatic(arm, hand, parent_xform=pos(0.6, 0, 0), axis=(1, 0, 0), label="wrist")
    b.add_articulation([j0, j0 + 1], label="arm")
    top, mid = TendonSite(body=-1, offset=(0, 0, 2)), TendonSite(body=arm, offset=(0.6, 0, 0))
    b.add_spatial_tendon(
        [
            top,
            TendonWrap(
                kind="cylinder",
                body=-1,
                offset=(0.3, 0, 1.8),
                axis=(0, 1, 0),
                radius=0.1,
                side=TendonSite(body=-1, offset=(0.3, 0, 2.1)),
            ),
            mid,
            TendonWrap(
                kind="sphere",
                body=arm,
                offset=(0.3, 0, 0),
                radius=0.08,
                side=TendonSite(body=arm, offset=(0.3, 0, 0.2)),
            ),
            TendonSite(body=hand, offset=(0.1, 0, 0)),
            TendonPulley(divisor=2.0),
            mid,
            TendonSite(body=hand, offset=(0.1, 0, -0.1)),
        ],
        label="cable",
        stiffness=200.0,
        damping=3.0,
        spring_lower=1.2,
        spring_upper=1.4,
        lower_limit=0.5,
        upper_limit=3.0,
        limit_margin=0.01,
        friction_loss=0.2,
        width=0.004,
    )
    b.add_spatial_tendon(
        [top, TendonSite(body=hand, offset=(0.1, 0, 0))],
        label="plain",
        spring_lower=0.9,
        spring_upper=0.9,
        armature=0.05,
    )
    return b


def hand_fixed():
    b = nt.ModelBuilder()
    link = b.add_link(xform=pos(0, 0, 1), label="link")
    b.add_shape_box(link, pos(0.2, 0, 0), 0.2, 0.05, 0.05, mu=1.0)
    h = b.add_joint_revolute(-1, link, parent_xform=pos(0, 0, 1), axis=(0, 0, 1), label="h")
    b.add_articulation([h], label="link")
    cart = b.add_link(xform=pos(0, 1, 1), label="cart")
    b.add_shape_sphere(cart, None, 0.1, mu=1.0)
    s = b.add_joint_prismatic(-1, cart, parent_xform=pos(0, 1, 1), axis=(1, 0, 0), label="s")
    b.add_articulation([s], label="cart")
    b.add_fixed_tendon(
        [h, s],
        [0.7, -1.3],
        label="couple",
        lower_limit=-1.0,
        upper_limit=1.0,
        stiffness=5.0,
        spring_lower=0.1,
        spring_upper=0.1,
        friction_loss=0.1,
    )
    return b


def add_slider(b, i: int, name: str, joint_label=None) -> int:
    """A link labelled ``name`` at (i, 0, 1) m with a 0.1 m sphere, on its own prismatic joint along +Z
    from the world (its own articulation); returns the body."""
    body = b.add_link(xform=pos(float(i), 0, 1), label=name)
    b.add_shape_sphere(body, None, 0.1, mu=1.0)
    joint = b.add_joint_prismatic(-1, body, parent_xform=pos(float(i), 0, 1), axis=(0, 0, 1), label=joint_label)
    b.add_articulation([joint], label=name)
    return body


def hand_actuators():
    b = nt.ModelBuilder()
    bodies = [add_slider(b, i, name, joint_label="j" + name) for i, name in enumerate("abcd")]
    e = b.add_link(xform=pos(4, 0, 1), label="e")
    b.add_shape_sphere(e, pos(0.1, 0, 0), 0.1, mu=1.0)
    je = b.add_joint_revolute(
        -1, e, parent_xform=pos(4, 0, 1), axis=(0, 1, 0), target_ke=40.0, target_kd=1.2, label="je"
    )
    b.add_articulation([je], label="e")
    w = TendonSite(body=-1, offset=(0, 0, 2))

    def path(i):
        return [w, TendonSite(body=bodies[i])]

    b.add_spatial_tendon(path(0), label="ta", actuation_lower=-2.0, actuation_upper=6.0)
    b.add_spatial_tendon(
        path(1),
        label="tb",
        position_gain=25.0,
        velocity_gain=1.25,
        target_length=0.0,
        actuation_lower=-25.0,
        actuation_upper=25.0,
    )
    b.add_spatial_tendon(path(2), label="tc", velocity_gain=20.0)
    b.add_spatial_tendon(
        path(3), label="td", position_gain=30.0, velocity_gain=2.0, target_length=0.0, activation_time=0.05
    )
    return b


def hand_equality():
    b = nt.ModelBuilder()
    sites = [TendonSite(body=add_slider(b, i, name)) for i, name in enumerate("ab")]
    t1 = b.add_spatial_tendon([TendonSite(offset=(0, 0, 2)), sites[0]], label="t1")
    t2 = b.add_spatial_tendon([TendonSite(offset=(1, 0, 2)), sites[1]], label="t2")
    b.add_tendon_coupling(t1, t2, [0.0, 2.0, 0.1, 0.0, 0.0], label="poly")
    b.add_tendon_coupling(t2, None, [0.05], enabled=False, label="hold")
    return b


def hand_contacts():
    b = nt.ModelBuilder()
    b.add_shape_plane(-1, None, mu=1.0, label="floor")
    for name, x, shapes in (("a", 0.0, ("ga", "ghost")), ("b", 0.3, ("gb",)), ("c", 0.6, ("gc",))):
        body = b.add_link(xform=pos(x, 0, 0.5), label=name)
        for s in shapes:
            ghost = s == "ghost"
            b.add_shape_sphere(body, None, 0.12 if ghost else 0.1, mu=1.0, has_collision=not ghost, label=s)
        b.add_articulation([b.add_joint_free(body)], label=name)
    for i, j in ((0, 4), (1, 4), (3, 4), (1, 3)):
        b.add_shape_collision_filter_pair(i, j)
    return b


FIXTURES = {
    "orientations.xml": hand_orientations,
    "joints.xml": hand_joints,
    "geoms.xml": hand_geoms,
    "defaults.xml": hand_defaults,
    "spatial_tendon.xml": hand_spatial,
    "fixed_tendon.xml": hand_fixed,
    "actuators.xml": hand_actuators,
    "equality.xml": hand_equality,
    "contacts.xml": hand_contacts,
}
TENDON_FIXTURES = ("spatial_tendon.xml", "fixed_tendon.xml", "actuators.xml", "equality.xml")


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_matches_hand_built_scene(name):
    """Each fixture finalizes to the same arrays as the scene built by hand through the builder API
    (whose shapes, like every imported geom, mix friction by MuJoCo's maximum)."""
    imported, _ = load(name)
    by_hand = FIXTURES[name]()
    by_hand.shape_friction_max = [True] * by_hand.shape_count
    assert_same_model(imported, by_hand)


# ----------------------------------------------------------------------------------------------
# MuJoCo as an oracle


def mj_body_pose(mj, data, name):
    import mujoco

    i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)
    return np.concatenate([data.xpos[i], data.xquat[i][[1, 2, 3, 0]]]), i


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_poses_and_mass_match_mujoco(name):
    """At the initial configuration every named body has MuJoCo's pose, mass, centre of mass and
    inertia (MuJoCo stores principal inertia and its frame; both are compared in world axes)."""
    mujoco = pytest.importorskip("mujoco")
    b, info = load(name)
    mj = mujoco.MjModel.from_xml_path(str(ASSETS / name))
    data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, data)
    for body_name, k in info.bodies.items():
        pose, i = mj_body_pose(mj, data, body_name)
        # Builder poses are float32 wp.transform values (newton's convention): compare to float32 resolution
        # (2 ulp of a unit quaternion, 1.2e-7; positions here are <= a few m, ulp <= 5e-7).
        ours = np.asarray(b.body_q[k], dtype=np.float64)
        np.testing.assert_allclose(ours[:3], pose[:3], rtol=2.4e-7, atol=1e-9, err_msg=body_name)
        assert abs(abs(float(ours[3:] @ pose[3:])) - 1.0) < 1.2e-7, body_name
        assert b.body_mass[k] == pytest.approx(mj.body_mass[i], rel=1e-9), body_name
        np.testing.assert_allclose(b.body_com[k], mj.body_ipos[i], atol=1e-9, err_msg=body_name)
        r = hm.quat_rotate  # inertia about the COM in body axes, from MuJoCo's principal frame
        q = mj.body_iquat[i][[1, 2, 3, 0]]
        frame = np.column_stack([r(q, e) for e in np.eye(3)])
        np.testing.assert_allclose(b.body_inertia[k], frame @ np.diag(mj.body_inertia[i]) @ frame.T, atol=1e-9)


def set_mujoco_configuration(mj, data, rng):
    """Random hinge/slide coordinates (within their ranges), identity ball and free poses."""
    import mujoco

    mujoco.mj_resetData(mj, data)
    for j in range(mj.njnt):
        a = mj.jnt_qposadr[j]
        if int(mj.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            lo, hi = mj.jnt_range[j] if mj.jnt_limited[j] else (-1.0, 1.0)
            data.qpos[a] = rng.uniform(lo, hi)
    mujoco.mj_forward(mj, data)


@pytest.mark.parametrize("name", TENDON_FIXTURES)
def test_tendon_lengths_match_mujoco(name):
    """At four random joint configurations (set in MuJoCo, bodies copied to our state), our joint
    coordinates equal MuJoCo's qpos and our tendon lengths equal ``ten_length`` (1e-5 relative)."""
    mujoco = pytest.importorskip("mujoco")
    b, info = load(name)
    model = b.finalize("cpu")
    solver = SolverXPBD(model)
    state = model.state()
    mj = mujoco.MjModel.from_xml_path(str(ASSETS / name))
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(7)
    q_start = model.joint_q_start.numpy()
    compared = 0
    for _ in range(4):
        set_mujoco_configuration(mj, data, rng)
        body_q = state.body_q.numpy()
        for body_name, k in info.bodies.items():
            body_q[k] = mj_body_pose(mj, data, body_name)[0]
        state.body_q.assign(body_q)
        joint_q = nt.eval_joint_coordinates(model, state)[0].numpy()
        for j in range(mj.njnt):
            jname = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)
            hinge_or_slide = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
            if jname in info.joints and int(mj.jnt_type[j]) in hinge_or_slide:
                ours = joint_q[q_start[info.joints[jname]]]
                assert ours == pytest.approx(data.qpos[mj.jnt_qposadr[j]], abs=2e-6), jname
        solver.update_geometry(state)
        lengths = solver.transmission_length.numpy()
        for tname, t in info.tendons.items():
            i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_TENDON, tname)
            assert lengths[t] == pytest.approx(data.ten_length[i], rel=LENGTH_RTOL, abs=1e-6), tname
            compared += 1
    assert compared == 4 * len(info.tendons) > 0


def test_tendon_actuator_forces_match_mujoco():
    """For random controls and a random configuration at rest, each tendon actuator's force from
    the documented mapping (``scale * ctrl + offset`` into the Control array, drive
    ``F = clamp(u + kp (l_d - l) + kv (ldot_d - ldot), lo, hi)``) equals MuJoCo's gear times its
    actuator force. The filtered actuator's activation is set equal to its control in both."""
    mujoco = pytest.importorskip("mujoco")
    b, info = load("actuators.xml")
    model = b.finalize("cpu")
    solver = SolverXPBD(model)
    mj = mujoco.MjModel.from_xml_path(str(ASSETS / "actuators.xml"))
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(3)
    arrays = {k: v.numpy() for k, v in vars(model).items() if k.startswith("transmission_") and isinstance(v, wp.array)}
    for _ in range(5):
        set_mujoco_configuration(mj, data, rng)
        data.ctrl[:] = rng.uniform(-2.0, 2.0, mj.nu)
        for a in range(mj.nu):
            if mj.actuator_actadr[a] >= 0:
                data.act[mj.actuator_actadr[a]] = data.ctrl[a]
        mujoco.mj_forward(mj, data)
        state = model.state()
        body_q = state.body_q.numpy()
        for body_name, k in info.bodies.items():
            body_q[k] = mj_body_pose(mj, data, body_name)[0]
        state.body_q.assign(body_q)
        solver.update_geometry(state)
        length = solver.transmission_length.numpy()
        for a in range(mj.nu):
            act = info.actuators[mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a)]
            if act.target != "tendon":
                continue
            t = act.index
            control = {
                "transmission_drive_force": arrays["transmission_drive_force"][t],
                "transmission_target_length": arrays["transmission_target_length"][t],
                "transmission_target_velocity": arrays["transmission_target_velocity"][t],
            }
            control[act.control] = act.scale * data.ctrl[a] + act.offset
            f = (
                control["transmission_drive_force"]
                + arrays["transmission_position_gain"][t] * (control["transmission_target_length"] - length[t])
                + arrays["transmission_velocity_gain"][t] * control["transmission_target_velocity"]
            )
            f = np.clip(f, arrays["transmission_actuation_lower"][t], arrays["transmission_actuation_upper"][t])
            expected = mj.actuator_gear[a, 0] * data.actuator_force[a]
            assert f == pytest.approx(expected, rel=1e-5, abs=1e-4), act.name


def test_actuator_and_site_tables():
    """The import reports each actuator's Control array, index and scale, and sites with their body
    and local pose, in the caller's indices (after what the builder already held)."""
    b = nt.ModelBuilder()
    b.add_body(xform=pos(5, 5, 5), mass=1.0, label="existing")
    info = b.add_mjcf(ASSETS / "actuators.xml", xform=pos(0, 0, 1), label_prefix="robot/")
    assert info.bodies["a"] == 1 and b.body_label[1] == "robot/a"
    assert info.sites["w"] == (-1, pos(0, 0, 3))
    assert info.sites["sb"] == (2, ID)
    ma, pb, pe = info.actuators["ma"], info.actuators["pb"], info.actuators["pe"]
    assert (ma.control, ma.index, ma.scale, ma.ctrlrange) == (
        "transmission_drive_force",
        info.tendons["ta"],
        2.0,
        (-1.0, 3.0),
    )
    assert (pb.control, pb.scale) == ("transmission_target_length", 2.0)
    assert pe.control == "joint_target_pos" and pe.index == 4 and pe.ctrlrange == (-1.0, 1.0)
    assert b.joint_target_ke[pe.index] == 40.0


def test_option_gravity_and_timestep_and_floating():
    """<option> gravity is applied to the builder and the timestep reported; floating=True gives a
    jointless root body a free joint, floating=False welds a free body to the world."""
    xml = """<mujoco><option gravity="0 0 -1.62" timestep="0.004"/><worldbody>
      <body name="a"><geom type="sphere" size="0.1"/></body>
      <body name="b" pos="1 0 0"><freejoint/><geom type="sphere" size="0.1"/></body></worldbody></mujoco>"""
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    assert b.gravity == (0.0, 0.0, -1.62) and info.timestep == 0.004
    assert b.joint_type == [3, 4]  # fixed, free
    b = nt.ModelBuilder()
    b.add_mjcf(xml, floating=True)
    assert b.joint_type == [4, 4]
    b = nt.ModelBuilder()
    b.add_mjcf(xml, floating=False)
    assert b.joint_type == [3, 3]


# ----------------------------------------------------------------------------------------------
# Malformed and unsupported input


BODY = (
    '<body name="b" pos="0 0 1"><joint name="j" type="hinge"/><geom type="sphere" size="0.1"/><site name="s"/></body>'
)


def scene(world="", tendon="", extra=""):
    """Lines: 4 the body, 5 ``world``, 7 ``tendon``, 8 ``extra``."""
    head = '<mujoco>\n<worldbody>\n<site name="w" pos="0 0 2"/>\n'
    return f"{head}{BODY}\n{world}\n</worldbody>\n{tendon}\n{extra}\n</mujoco>"


MALFORMED = [
    ("<mujoco><worldbody>", ValueError, r"<string>:1: malformed XML"),
    ("<robot/>", ValueError, r"root element must be <mujoco>"),
    (
        scene(tendon='<tendon><spatial name="t"><site site="w"/><site site="nope"/></spatial></tendon>'),
        ValueError,
        r":7: <site>: unknown site 'nope'",
    ),
    (
        scene(tendon='<tendon><fixed name="t"><joint joint="q" coef="1"/></fixed></tendon>'),
        ValueError,
        r":7: <joint>: unknown joint 'q'",
    ),
    (
        scene(extra='<actuator><motor name="m" tendon="x"/></actuator>'),
        ValueError,
        r":8: <motor name='m'>: unknown tendon 'x'",
    ),
    (
        scene(
            tendon='<tendon><spatial name="t"><site site="w"/><site site="s"/></spatial></tendon>',
            extra='<equality><tendon tendon1="t" tendon2="u"/></equality>',
        ),
        ValueError,
        r":8: <tendon>: unknown tendon 'u'",
    ),
    (
        scene(world='<body><geom type="sphere" size="a b"/></body>'),
        TypeError,
        r":5: <geom>: attribute size='a b' must be numbers",
    ),
    (
        scene(world='<body pos="nan 0 0"><geom type="sphere" size="0.1"/></body>'),
        ValueError,
        r":5: <body>: attribute pos='nan 0 0' must be finite",
    ),
    (
        scene(world='<body><geom type="mesh" mesh="m"/></body>'),
        ValueError,
        r":5: <geom>: unknown mesh 'm'",
    ),
    (scene(world="<composite/>"), ValueError, r":5: <composite>: unsupported element"),
    (
        scene(extra='<equality><connect body1="b" anchor="0 0 0"/></equality>'),
        ValueError,
        r":8: <connect>: unsupported equality",
    ),
    (
        scene(world='<body><joint type="ball" frictionloss="1"/><geom size="0.1"/></body>'),
        ValueError,
        r":5: <joint>: the joint is a ball joint; frictionloss needs a hinge or slide here",
    ),
    (
        scene(world='<body><joint foo="1"/><geom size="0.1"/></body>'),
        ValueError,
        r":5: <joint>: unsupported attribute 'foo'",
    ),
    (
        scene(world='<body name="two"><joint/><freejoint/><geom size="0.1"/></body>'),
        ValueError,
        r":5: <body name='two'>: has 2 joints",
    ),
    (
        scene(world='<body><geom class="nope" size="0.1"/></body>'),
        ValueError,
        r":5: <geom>: unknown default class 'nope'",
    ),
    (
        scene(world='<body><joint/><geom size="0.1" mass="-1"/></body>'),
        ValueError,
        r":5: <geom>: attribute mass must be >= 0",
    ),
    (scene(world='<body><joint/><geom size="-0.1"/></body>'), ValueError, r":5: <geom>: size values must be > 0"),
    (
        scene(world='<body><joint limited="true" range="2 1"/><geom size="0.1"/></body>'),
        ValueError,
        r":5: <joint>: invalid limits range='2 1'",
    ),
    (
        scene(world='<body><joint limited="true" range="0.5 0.5"/><geom size="0.1"/></body>'),
        ValueError,
        r":5: <joint>: invalid limits range='0.5 0.5': with limited='true' the lower bound must be smaller",
    ),
    (
        scene(world='<body><joint type="slide" limited="true" range="0 0"/><geom size="0.1"/></body>'),
        ValueError,
        r":5: <joint>: invalid limits range='0 0'",
    ),
    (
        scene(extra='<actuator><motor joint="j" ctrllimited="true" ctrlrange="1 1"/></actuator>'),
        ValueError,
        r":8: <motor>: invalid limits ctrlrange='1 1'",
    ),
    (
        scene(extra='<actuator><motor joint="j" forcelimited="true" forcerange="2 -2"/></actuator>'),
        ValueError,
        r":8: <motor>: invalid limits forcerange='2 -2'",
    ),
    (
        scene(extra='<option><flag actuation="disable"/></option>'),
        ValueError,
        r":8: <flag>: flag actuation='disable' changes the physics",
    ),
    (
        scene(tendon='<tendon><spatial limited="true" range="2 1"><site site="w"/><site site="s"/></spatial></tendon>'),
        ValueError,
        r":7: <spatial>: invalid limits range='2 1'",
    ),
    (
        scene(tendon='<tendon><spatial limited="true" range="1 1"><site site="w"/><site site="s"/></spatial></tendon>'),
        ValueError,
        r":7: <spatial>: invalid limits range='1 1'",
    ),
    (
        scene(tendon='<tendon><fixed limited="true" range="0.3 0.3"><joint joint="j" coef="1"/></fixed></tendon>'),
        ValueError,
        r":7: <fixed>: invalid limits range='0.3 0.3'",
    ),
    (
        scene(tendon='<tendon><spatial><site site="w"/></spatial></tendon>'),
        ValueError,
        r":7: <spatial>: .*fewer than 2 sites",
    ),
    (scene(world="<body><joint/></body>"), ValueError, r":5: <body>: a body with a joint needs mass"),
    (scene(extra='<actuator><muscle tendon="t"/></actuator>'), ValueError, r":8: <muscle>: unsupported actuator"),
]


@pytest.mark.parametrize(("xml", "exc", "match"), MALFORMED, ids=[m[2][:40] for m in MALFORMED])
def test_malformed_input_raises_and_leaves_builder_unchanged(xml, exc, match):
    """Each malformed or unsupported input raises naming the line and element, and the builder it
    was added to (already holding a body and a tendon) is exactly as before."""
    b = nt.ModelBuilder()
    body = b.add_body(xform=pos(1, 0, 0), mass=1.0)
    b.add_spatial_tendon([TendonSite(), TendonSite(body=body)], label="t")
    before = copy.deepcopy(vars(b))
    with pytest.raises(exc, match=match):
        b.add_mjcf(xml)
    assert same(vars(b), before)


def test_degenerate_ranges_follow_mujoco():
    """MuJoCo 4.0 rejects limited='true' with lower >= upper and leaves limited='auto' with such a range
    unlimited; lower < upper is a limit either way. The importer matches the compiled MuJoCo model."""
    mujoco = pytest.importorskip("mujoco")
    for limited in ("true", "auto"):
        for rng in ("-0.5 0.5", "0.5 0.5", "1 0"):
            attr = f'range="{rng}"' + (f' limited="{limited}"' if limited == "true" else "")
            xml = scene(
                world=f'<body name="s2" pos="0 0 3"><joint name="k" type="slide" {attr}/><geom size="0.1"/></body>',
                tendon=f'<tendon><fixed name="f" {attr}><joint joint="j" coef="1"/></fixed></tendon>',
            )
            try:
                mj = mujoco.MjModel.from_xml_string(xml)
            except ValueError:
                mj = None
            b = nt.ModelBuilder()
            if mj is None:
                assert limited == "true" and rng != "-0.5 0.5"
                with pytest.raises(ValueError, match="invalid limits"):
                    b.add_mjcf(xml)
                continue
            info = b.add_mjcf(xml)
            k = info.joints["k"]
            props = b.transmission_properties[info.tendons["f"]]
            if mj.jnt_limited[1]:
                assert (b.joint_limit_lower[k], b.joint_limit_upper[k]) == tuple(mj.jnt_range[1])
                assert (props["lower_limit"], props["upper_limit"]) == tuple(mj.tendon_range[0])
            else:
                assert rng != "-0.5 0.5"
                assert b.joint_limit_lower[k] < -1e9 and b.joint_limit_upper[k] > 1e9
                assert props["lower_limit"] == -math.inf and props["upper_limit"] == math.inf


def test_missing_file_and_label_clash_leave_builder_unchanged(tmp_path):
    """A missing file, a wrong source type and a tendon label already used in the builder raise
    before the builder changes."""
    b = nt.ModelBuilder()
    b.add_spatial_tendon([TendonSite(), TendonSite(offset=(1, 0, 0))], label="cable")
    before = copy.deepcopy(vars(b))
    with pytest.raises(ValueError, match="cannot read MJCF file"):
        b.add_mjcf(tmp_path / "missing.xml")
    with pytest.raises(TypeError, match="source must be a path or an XML string"):
        b.add_mjcf(3)
    with pytest.raises(ValueError, match="already has a transmission tendon labelled 'cable'"):
        b.add_mjcf(ASSETS / "spatial_tendon.xml")
    assert same(vars(b), before)
    b.add_mjcf(ASSETS / "spatial_tendon.xml", label_prefix="arm/")
    assert "arm/cable" in b.transmission_label


def test_visual_elements_are_ignored():
    """Purely visual elements and attributes (asset, visual, light, camera, rgba, material, group)
    leave the model as without them."""
    plain = "<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>"
    dressed = """<mujoco><asset><material name="m" rgba="1 0 0 1"/></asset><visual><global fovy="50"/></visual>
      <worldbody><light pos="0 0 3"/><camera pos="0 0 1"/>
      <body><freejoint/><geom size='0.1' rgba="0 1 0 1" material="m" group="2"/></body></worldbody></mujoco>"""
    a, b = nt.ModelBuilder(), nt.ModelBuilder()
    a.add_mjcf(plain)
    b.add_mjcf(dressed)
    assert same(vars(a), vars(b))


# ----------------------------------------------------------------------------------------------
# Lowering routed cables to MuJoCo


def routed_scene(**overrides):
    """Kinematic bodies in the x-z plane: anchor -> frictionless pinhole -> roller (axis y, cable over
    the top, orientation +1) -> anchor; the last span compliant."""
    b = nt.ModelBuilder(gravity=0.0)
    kin = dict(mass=1.0, inertia=np.eye(3) * 0.01, is_kinematic=True)
    a = b.add_body(xform=pos(-0.6, 0, 0), label="anchor", **kin)
    p = b.add_body(xform=pos(-0.2, 0, 0.3), label="pinhole", **kin)
    r = b.add_body(xform=(0.3, 0, 0.3, *rot((0, 1, 0), 20)), label="roller", **kin)
    w = b.add_body(xform=pos(0.6, 0, -0.3), label="weight", **kin)
    guides = dict(
        pinhole=dict(body=p, guide_type=nt.TendonGuideType.PINHOLE, offset=(0.0, 0.0, 0.05)),
        roller=dict(body=r, guide_type=nt.TendonGuideType.ROLLER, radius=0.1, axis=(0.0, 1.0, 0.0)),
        end=dict(body=w, offset=(0.0, 0.0, 0.1), compliance=1.0e-3),
    )
    for k, v in overrides.items():
        guides[k.split("__")[0]][k.split("__")[1]] = v
    route = [nt.TendonGuide(body=a), *(nt.TendonGuide(**guides[k]) for k in ("pinhole", "roller", "end"))]
    b.add_tendon(route, label="cable")
    return b


def test_lowered_routed_cable_matches_mujoco_length():
    """The lowered cable compiles in MuJoCo, and at the initial and four moved poses (in-plane
    rotations and translations of every body) MuJoCo's ten_length equals our tendon_length
    (1e-5 relative). Its stiffness is 1/sum(compliance) and its spring length the cable material."""
    mujoco = pytest.importorskip("mujoco")
    model = routed_scene().finalize("cpu")
    xml = lower_tendons(model)
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    solver = SolverXPBD(model)
    s0, s1 = model.state(), model.state()
    rng = np.random.default_rng(11)
    q0 = model.body_q.numpy().astype(np.float64)
    assert mj.tendon_stiffness[0] == pytest.approx(1.0e3)
    for trial in range(5):
        q = q0.copy()
        if trial:
            for k in range(4):
                q[k, [0, 2]] += rng.uniform(-0.05, 0.05, 2)
                q[k, 3:] = hm.quat_mul(rot((0, 1, 0), rng.uniform(-20, 20)), q[k, 3:])
        for k in range(4):
            m = mj.body_mocapid[k + 1]
            data.mocap_pos[m] = q[k, :3]
            data.mocap_quat[m] = q[k, [6, 3, 4, 5]]
        mujoco.mj_forward(mj, data)
        s0.body_q.assign(q.astype(np.float32))
        solver.step(s0, s1, None, None, 1.0e-3)
        ours = float(solver.tendon_length.numpy()[0])
        assert ours == pytest.approx(data.ten_length[0], rel=LENGTH_RTOL), trial
        if trial == 0:
            material = float(solver.tendon_total_cable.numpy()[0])
            assert mj.tendon_lengthspring[0, 1] == pytest.approx(material, rel=LENGTH_RTOL)


def test_lowered_inextensible_cable_is_a_length_bound():
    """Without compliance the cable becomes a hard upper length bound equal to its material."""
    mujoco = pytest.importorskip("mujoco")
    model = routed_scene(end__compliance=0.0).finalize("cpu")
    mj = mujoco.MjModel.from_xml_string(lower_tendons(model))
    assert mj.tendon_limited[0] == 1 and mj.tendon_stiffness[0] == 0.0
    assert mj.tendon_range[0, 0] == 0.0 and mj.tendon_range[0, 1] > 1.0


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"pinhole__mu": 0.2}, r"guide 1: capstan friction"),
        ({"roller__mu": 0.1}, r"guide 2: capstan friction"),
        ({"roller__dynamic": True}, r"guide 2: dynamic rollers"),
        ({"pinhole__guide_type": nt.TendonGuideType.ANCHOR}, r"guide 1: an internal anchor"),
        ({"end__damping": 0.5}, r"guide 3: span damping"),
        ({"pinhole__offset": (0.0, 0.2, 0.05)}, r"guide 2: a neighbouring guide lies .* off the roller plane"),
    ],
)
def test_lowering_rejects_what_mujoco_cannot_represent(overrides, match):
    """Capstan friction, dynamic rollers, internal anchors, span damping and out-of-plane rollers
    raise, naming the tendon and guide."""
    model = routed_scene(**overrides).finalize("cpu")
    with pytest.raises(ValueError, match=r"tendon 0 \('cable'\) " + match):
        lower_tendons(model)


@pytest.mark.parametrize("name", TENDON_FIXTURES)
def test_imported_model_lowers_and_compiles(name):
    """MJCF import -> finalize -> lower_tendons gives MJCF that MuJoCo compiles, with every body."""
    mujoco = pytest.importorskip("mujoco")
    b, info = load(name)
    model = b.finalize("cpu")
    mj = mujoco.MjModel.from_xml_string(lower_tendons(model))
    assert mj.nbody == model.body_count + 1


def test_routed_cable_on_imported_bodies_matches_mujoco_length():
    """MJCF import of a planar arm (bodies with hinge and slide joints), a routed cable added through add_tendon on
    its bodies (world anchor -> frictionless pinhole on the upper arm -> frictionless roller on the forearm -> anchor
    on the slider), finalize, lower_tendons: MuJoCo compiles it, and at the initial and four other joint poses
    (from MuJoCo's own forward kinematics of the file) its ten_length equals our tendon_length (1e-5 relative)."""
    mujoco = pytest.importorskip("mujoco")
    b, info = load("planar_arm.xml")
    upper, lower, slider = (info.bodies[k] for k in ("upper", "lower", "slider"))
    route = [
        nt.TendonGuide(body=-1, offset=(-0.3, 0.0, 1.3)),
        nt.TendonGuide(body=upper, guide_type=nt.TendonGuideType.PINHOLE, offset=(0.25, 0.0, 0.12)),
        nt.TendonGuide(
            body=lower, guide_type=nt.TendonGuideType.ROLLER, offset=(0.2, 0.0, 0.1), radius=0.05, axis=(0, 1, 0)
        ),
        nt.TendonGuide(body=slider, offset=(0.0, 0.0, -0.06), compliance=1.0e-3),
    ]
    b.add_tendon(route, label="cable")
    model = b.finalize("cpu")
    assert tuple(model.gravity.numpy()[0]) == (0.0, 0.0, 0.0)  # from <option gravity>
    lowered = mujoco.MjModel.from_xml_string(lower_tendons(model))
    assert lowered.ntendon == 1 and lowered.nbody == model.body_count + 1
    lowered_data = mujoco.MjData(lowered)
    source = mujoco.MjModel.from_xml_path(str(ASSETS / "planar_arm.xml"))
    source_data = mujoco.MjData(source)
    names = [model.body_label[k] for k in range(model.body_count)]
    solver = SolverXPBD(model)
    s0, s1 = model.state(), model.state()
    poses = [(0.0, 0.0, 0.0), (0.3, -0.4, 0.05), (-0.25, 0.6, -0.08), (0.5, 0.2, 0.1), (-0.1, -0.7, 0.0)]
    lengths = []
    for qpos in poses:
        source_data.qpos[:] = qpos
        mujoco.mj_kinematics(source, source_data)
        q = np.zeros((model.body_count, 7))
        for k, name in enumerate(names):
            q[k, :3] = source_data.body(name).xpos
            w, x, y, z = source_data.body(name).xquat
            q[k, 3:] = (x, y, z, w)
        s0.body_q.assign(q.astype(np.float32))
        s0.body_qd.zero_()
        solver.step(s0, s1, None, None, 1.0e-4)
        # Compare at the pose the step ended on (the cable's tension moves the bodies by a hair).
        final = s1.body_q.numpy().astype(np.float64)
        assert np.abs(final - q).max() < 1e-4
        for k, name in enumerate(names):
            adr = lowered.jnt_qposadr[lowered.body(name).jntadr[0]]
            lowered_data.qpos[adr : adr + 7] = (*final[k, :3], final[k, 6], *final[k, 3:6])
        mujoco.mj_forward(lowered, lowered_data)
        ours = float(solver.tendon_length.numpy()[0])
        assert ours == pytest.approx(lowered_data.ten_length[0], rel=LENGTH_RTOL), qpos
        assert solver.tendon_guide_wrap.numpy()[2] > 0.1  # the cable wraps the roller at every pose
        lengths.append(ours)
    assert max(lengths) - min(lengths) > 0.05  # the poses really change the route


# ----------------------------------------------------------------------------------------------
# MuJoCo 4.0's parser rules: what MuJoCo rejects raises here, what it accepts imports


def nested_bodies(n: int) -> str:
    """``n`` nested hinged bodies, each with a sphere: the deepest element is at depth n + 3
    (mujoco 1, worldbody 2, bodies 3 .. n + 2, their joint and geom n + 3)."""
    link = '<body pos="0 0 -0.1"><joint axis="0 1 0"/><geom size="0.01"/>'
    return f"<mujoco><worldbody>{link * n}{'</body>' * n}</worldbody></mujoco>"


def nested_frames(n: int, end_tag: bool = False) -> str:
    """A hinged body holding ``n`` nested frames around one geom at depth n + 4."""
    geom = '<geom size="0.01"></geom>' if end_tag else '<geom size="0.01"/>'
    inner = '<frame pos="0 0 0.001">' * n + geom + "</frame>" * n
    return f'<mujoco><worldbody><body><joint/><geom size="0.1"/>{inner}</body></worldbody></mujoco>'


def nested_defaults(n: int) -> str:
    classes = "".join(f'<default class="c{i}">' for i in range(n)) + "</default>" * n
    return (
        f"<mujoco><default>{classes}</default>"
        f'<worldbody><body><joint/><geom class="c{n - 1}" size="0.1"/></body></worldbody></mujoco>'
    )


def one_body(geom: str = "", inertial: str = "", joint: str = '<joint type="hinge"/>') -> str:
    return (
        f'<mujoco><worldbody><body pos="0 0 1">{joint}{inertial}<geom type="sphere" size="0.1" {geom}/>'
        "</body></worldbody></mujoco>"
    )


SLIDE = '<joint type="slide"/>'
BALL = '<joint type="ball"/>'


def inertial(spec: str) -> str:
    return f'<inertial pos="0 0 0" mass="1" {spec}/>'


# (id, MJCF, what our error says when MuJoCo rejects it). Depths: MuJoCo's tinyxml2 accepts 499
# levels with the deepest an empty-element tag (MAX_ELEMENT_DEPTH); 496 nested bodies is the deepest.
MUJOCO_RULES = [
    ("bodies-496-deep", nested_bodies(496), None),
    ("bodies-497-deep", nested_bodies(497), r"nesting is too deep"),
    ("frames-495-deep", nested_frames(495), None),
    ("frames-496-deep", nested_frames(496), r"nesting is too deep"),
    ("frames-495-deep-end-tag", nested_frames(495, end_tag=True), r"nesting is too deep"),
    ("defaults-496-deep", nested_defaults(496), None),
    ("defaults-497-deep", nested_defaults(497), r"nesting is too deep"),
    ("size-1_0", one_body('size="1_0"').replace('size="0.1" ', ""), r"attribute size='1_0' must be numbers"),
    ("size-hex", one_body('size="0x1p-3"').replace('size="0.1" ', ""), None),
    ("condim-1.5", one_body('condim="1.5"'), r"attribute condim='1.5' must be one integer"),
    ("condim-3.0", one_body('condim="3.0"'), r"attribute condim='3.0' must be one integer"),
    ("contype-1.7", one_body('contype="1.7"'), r"attribute contype='1.7' must be one integer"),
    ("contype-1e30", one_body('contype="1e30"'), r"attribute contype='1e30' must be one integer"),
    ("contype-2^31", one_body('contype="2147483648"'), r"out of the int32 range"),
    ("contype-negative", one_body('contype="-1"'), None),
    ("conaffinity-1.7", one_body('conaffinity="1.7"'), r"attribute conaffinity='1.7' must be one integer"),
    ("diaginertia-0-hinge", one_body(inertial=inertial('diaginertia="0 0 0"')), r"mjMINVAL"),
    ("diaginertia-0-slide", one_body(inertial=inertial('diaginertia="0 0 0"'), joint=SLIDE), "mjMINVAL"),
    ("diaginertia-1e-16-ball", one_body(inertial=inertial('diaginertia="1e-16 1 1"'), joint=BALL), "mjMINVAL"),
    ("diaginertia-0-welded", one_body(inertial=inertial('diaginertia="0 0 0"'), joint=""), None),
    ("triangle-violated", one_body(inertial=inertial('diaginertia="1 1 3"')), r"triangle inequality"),
    ("triangle-just-violated", one_body(inertial=inertial('diaginertia="1 1 2.0000001"')), r"triangle inequality"),
    ("triangle-equal", one_body(inertial=inertial('diaginertia="1 1 2"')), None),
    ("triangle-full", one_body(inertial=inertial('fullinertia="1 1 3 0 0 0"')), r"triangle inequality"),
    ("triangle-welded", one_body(inertial=inertial('diaginertia="3 1 1"'), joint=""), r"triangle inequality"),
    ("byte-order-mark", "\ufeff" + one_body(), None),
    (
        "top-default-renamed",
        '<mujoco><default class="other"><joint damping="1"/></default></mujoco>',
        r"cannot be renamed",
    ),
    (
        "class-in-two-sections",
        '<mujoco><default><default class="a"/></default><default><default class="a"/></default></mujoco>',
        r"default class 'a' is defined twice",
    ),
]


@pytest.mark.parametrize(("xml", "match"), [r[1:] for r in MUJOCO_RULES], ids=[r[0] for r in MUJOCO_RULES])
def test_parser_rules_agree_with_mujoco(xml, match):
    """Each input is accepted here exactly when MuJoCo 4.0 (``MjModel.from_xml_string``) accepts it;
    a rejection is a ValueError (TypeError for a malformed number) naming the rule, never a bare
    RecursionError or a silent truncation/freeze."""
    mujoco = pytest.importorskip("mujoco")
    try:
        mujoco.MjModel.from_xml_string(xml)
        mujoco_accepts = True
    except ValueError:
        mujoco_accepts = False
    assert mujoco_accepts == (match is None)
    b = nt.ModelBuilder()
    if mujoco_accepts:
        b.add_mjcf(xml)
        assert b.body_count >= 1
    else:
        with pytest.raises((ValueError, TypeError), match=match):
            b.add_mjcf(xml)
        assert b.body_count == 0


def test_top_level_defaults_merge_as_in_mujoco():
    """Several top-level <default> sections all add to the class 'main' (a later one overrides an
    earlier one, a class nested in the first does not see the second): joint damping and stiffness
    equal MuJoCo's dof_damping and jnt_stiffness, which are exact copies of the attribute text."""
    mujoco = pytest.importorskip("mujoco")
    xml = """<mujoco>
      <default><joint damping="1" armature="0.5"/><default class="early"><geom size="0.2"/></default></default>
      <default><joint stiffness="2"/><geom size="0.1"/></default>
      <default><joint armature="0.25"/></default>
      <worldbody>
        <body name="a"><joint name="ja"/><geom/></body>
        <body name="b" pos="1 0 0"><joint name="jb" class="early"/><geom class="early"/></body>
      </worldbody></mujoco>"""
    mj = mujoco.MjModel.from_xml_string(xml)
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    for name in ("ja", "jb"):
        j = mj.joint(name)
        dof = info.joints[name]  # two hinges: joint index = dof index
        assert b.joint_target_kd[dof] == mj.dof_damping[j.dofadr[0]], name
        assert b.joint_target_ke[dof] == mj.jnt_stiffness[j.id], name
        assert b.joint_armature[dof] == mj.dof_armature[j.dofadr[0]], name
    assert mj.dof_damping[0] == 1.0 and mj.jnt_stiffness[0] == 2.0 and mj.dof_armature[0] == 0.25
    assert mj.jnt_stiffness[1] == 0.0 and mj.dof_armature[1] == 0.5  # "early" was copied before


MAX_MESSAGE = 600
"""Longest error message we accept for an input with a huge value: the rule, the element and an
~80-character excerpt (``newton_tendon.mjcf.MAX_ECHO``)."""


@pytest.mark.parametrize(
    "xml",
    [
        one_body('size="0.1 ' + "x" * 10_000_000 + '"').replace('size="0.1" ', ""),
        one_body('condim="' + "9" * 10_000_000 + '"'),
        one_body('name="' + "n" * 10_000_000 + '" condim="2"'),
        "\ufeff<mujoco><worldbody><body>" + "x" * 10_000_000 + "<body/></worldbody></mujoco>",
        "\ufeffnot xml " + "y" * 10_000_000,
    ],
    ids=["10MB-size", "10MB-condim", "10MB-name", "bom-document", "10MB-path"],
)
def test_errors_do_not_echo_huge_values(xml):
    """An error names the attribute and the rule with a bounded excerpt of the value; a string with a
    byte-order mark is read as XML (not as a file path echoing the whole document)."""
    with pytest.raises((ValueError, TypeError)) as e:
        nt.ModelBuilder().add_mjcf(xml)
    assert len(str(e.value)) < MAX_MESSAGE, str(e.value)[:MAX_MESSAGE]


def filters_by_all_pairs(b: nt.ModelBuilder, bits, excludes) -> set:
    """The filter pairs of the former all-pairs loop: shapes i < j that both collide, on different
    bodies, whose bits fail MuJoCo's test (contype_i & conaffinity_j) | (contype_j & conaffinity_i),
    or whose bodies are excluded."""
    excluded = {(min(p, q), max(p, q)) for p, q in excludes}
    out = set()
    for i in range(b.shape_count):
        for j in range(i + 1, b.shape_count):
            if not (b.shape_has_collision[i] and b.shape_has_collision[j]):
                continue
            bi, bj = b.shape_body[i], b.shape_body[j]
            if bi == bj:
                continue
            (ti, ai), (tj, aj) = bits[i], bits[j]
            if not ((ti & aj) or (tj & ai)) or (min(bi, bj), max(bi, bj)) in excluded:
                out.add((i, j))
    return out


def test_collision_filters_equal_all_pairs_rule():
    """The grouped collision-filter pass gives exactly the pairs of the all-pairs rule on a model
    mixing contype/conaffinity classes (including a negative mask), world geoms and excludes."""
    rng = np.random.default_rng(3)
    masks = [(1, 1), (1, 0), (0, 1), (2, 2), (2, 1), (-1, 0), (0, 0), (4, 3)]
    bits, bodies = [(1, 1)], []
    for k in range(24):
        geoms = ""
        for _ in range(int(rng.integers(1, 3))):
            t, a = masks[int(rng.integers(len(masks)))]
            bits.append((t, a))
            geoms += f'<geom size="0.05" contype="{t}" conaffinity="{a}"/>'
        bodies.append(f'<body name="b{k}" pos="{k} 0 1"><freejoint/>{geoms}</body>')
    excludes = [(3, 7), (7, 3), (0, 1), (5, 20)]
    contact = "".join(f'<exclude body1="b{p}" body2="b{q}"/>' for p, q in excludes)
    xml = (
        f'<mujoco><worldbody><geom type="plane" size="0 0 1"/>{"".join(bodies)}</worldbody>'
        f"<contact>{contact}</contact></mujoco>"
    )
    b = nt.ModelBuilder()
    info = b.add_mjcf(xml)
    body_excludes = [(info.bodies[f"b{p}"], info.bodies[f"b{q}"]) for p, q in excludes]
    expected = filters_by_all_pairs(b, bits, body_excludes)
    assert len(expected) > 50  # the classes really produce filtered pairs
    assert b.shape_filter_pairs == expected


def test_large_flat_import():
    """2,000 bodies (8-link hinged chains on a ground plane) import: every body, joint and shape."""
    chains = []
    for c in range(250):
        link = '<body pos="0 0 -0.2"><joint axis="0 1 0"/><geom type="capsule" size="0.02" fromto="0 0 0 0 0 -0.2"/>'
        chains.append(f'<body pos="{c % 50} {c // 50} 2">{link * 7}' + "</body>" * 7 + '<geom size="0.05"/></body>')
    xml = f'<mujoco><worldbody><geom type="plane" size="0 0 1"/>{"".join(chains)}</worldbody></mujoco>'
    b = nt.ModelBuilder()
    b.add_mjcf(xml)
    assert (b.body_count, b.joint_count, b.shape_count) == (2000, 2000, 2001)


def test_zero_inertia_under_welded_child_is_rejected_unlike_mujoco():
    """MuJoCo waives mjMINVAL for a hinged body with zero inertia when a jointless child with mass is
    welded to it (it merges the two). Here each body keeps its own inertia (a zero one would freeze
    the hinge), so the file is rejected with the rule named (docs/limitations.md)."""
    mujoco = pytest.importorskip("mujoco")
    child = '<body pos="0.5 0 0"><geom size="0.1"/></body>'
    xml = one_body(inertial=inertial('diaginertia="0 0 0"')).replace("</body>", child + "</body>", 1)
    mujoco.MjModel.from_xml_string(xml)  # MuJoCo accepts it
    with pytest.raises(ValueError, match=r"<body>: a body with a joint needs mass and principal inertias.*mjMINVAL"):
        nt.ModelBuilder().add_mjcf(xml)


WELDED_HIP = """<mujoco><worldbody>
<body name="pelvis" pos="0 0 1"><freejoint/><geom type="box" size=".15 .1 .05"/>
  <body name="hip" pos=".1 0 -.05"><geom type="sphere" size=".02" contype="0" conaffinity="0"/>
    <body name="femur" pos="0 0 0"><joint type="hinge" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -.4" size=".05"/>
      <body name="toe" pos="0 0 -.45"><geom type="sphere" size=".03"/></body></body></body>
  <body name="tail" pos="-.2 0 0"><joint type="hinge" axis="0 1 0"/><geom type="sphere" size=".08"/></body>
</body></worldbody></mujoco>"""


def test_weld_groups_filter_contacts_as_mujoco_does():
    """MuJoCo's parent filter works on weld groups (bodies without joints welded to their parent):
    the femur's parent, the jointless hip, is welded to the pelvis, so the pelvis and femur (5 cm
    into each other here, as in dm_control's humanoid_CMU) never collide, nor does the toe welded to
    the femur with the femur. The tail, a direct child, is filtered as before. MuJoCo finds no contact
    at this pose; before the weld groups were read, we found the pelvis-femur one and threw
    humanoid_CMU apart on its first step."""
    b = nt.ModelBuilder()
    b.add_mjcf(WELDED_HIP)
    model = b.finalize("cpu")
    pipeline = nt.CollisionPipeline(model)
    contacts = pipeline.contacts()
    pipeline.collide(model.state(), contacts)
    valid = contacts.valid.numpy().astype(bool)
    pairs = {
        (int(a), int(c)) for a, c in zip(contacts.body_a.numpy()[valid], contacts.body_b.numpy()[valid], strict=True)
    }
    assert pairs == set(), pairs
    mujoco = pytest.importorskip("mujoco")
    mj = mujoco.MjModel.from_xml_string(WELDED_HIP)
    data = mujoco.MjData(mj)
    mujoco.mj_forward(mj, data)
    assert data.ncon == 0
    # The pelvis and femur do overlap: without the filter they would touch.
    assert mujoco.mj_geomDistance(mj, data, 0, 2, 1.0, None) < 0.0
