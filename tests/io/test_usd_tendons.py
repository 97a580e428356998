"""Tendons in USD: native routed-cable prims, MuJoCo tendon prims, write_tendons round trips, bad input.

Fixtures are in tests/assets/usd/tendon_*.usda (and tendon_mjc_arm.xml, the same arm in MJCF for
MuJoCo). Each fixture is imported twice, directly into bodies built by hand and through
``builder.add_usd``, and compared with the same scene built through the builder API.
"""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType
from newton_tendon.solvers import SolverXPBD
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

from ..helpers import same

pxr = pytest.importorskip("pxr")
from pxr import Gf, Sdf, Usd, UsdGeom  # noqa: E402

from newton_tendon import usd_tendons as ut  # noqa: E402

ASSETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets", "usd")
IDENTITY_Q = (0.0, 0.0, 0.0, 1.0)
# MuJoCo computes in float64, our kernels in float32 over lengths of a few metres: 1e-5 relative
# is ~100 float32 ulps, room for the wrap and pulley arithmetic.
LENGTH_RTOL = 1.0e-5
# Unit conversions multiply by 0.01 and rotate by a float64 quaternion before the float32 cast.
UNIT_RTOL, UNIT_ATOL = 1.0e-6, 1.0e-7


def fixture_stage(name: str) -> Usd.Stage:
    """An in-memory copy of a fixture (edits never reach the cached file layer)."""
    stage = Usd.Stage.CreateInMemory()
    stage.GetRootLayer().TransferContent(Sdf.Layer.FindOrOpen(os.path.join(ASSETS, name)))
    return stage


def model_arrays(model, prefixes=("tendon_",)) -> dict:
    out = {}
    for k, v in vars(model).items():
        if k.startswith(prefixes) and isinstance(v, wp.array):
            out[k] = v.numpy()
    return out


ROUND_TRIP_ATOL = 1.0e-12
"""[m] A metres, Z-up round trip is exact up to this: builder body poses are float32 wp.transform values (newton's
convention), so the writer's world point and the importer's inverse, both in float64 from a float32 quaternion
that is normalized only to float32 precision, differ by float64 rounding (~4e-16 at 1 m); float32 itself resolves
6e-8 m at 1 m, so anything above 1e-12 is a real difference."""


def assert_arrays(got: dict, want: dict, exact: bool = True):
    assert got.keys() == want.keys()
    for k in want:
        if exact:
            np.testing.assert_allclose(got[k], want[k], rtol=0.0, atol=ROUND_TRIP_ATOL, err_msg=k)
        else:
            np.testing.assert_allclose(got[k], want[k], rtol=UNIT_RTOL, atol=UNIT_ATOL, err_msg=k)


def path_arrays(model) -> dict:
    p = model.transmission_path
    return {k: getattr(p, k).numpy() for k in ("start", "type", "body", "offset", "axis", "radius", "side_body")} | {
        k: getattr(p, k).numpy() for k in ("side_offset", "has_side", "divisor")
    }


# ----------------------------------------------------------------------------------------------
# Scenes built by hand


def routes_bodies(builder: nt.ModelBuilder) -> dict:
    """The two bodies of tendon_native_routes.usda; returns the body map."""
    q = (0.0, 0.0, 0.3826834323650898, 0.9238795325112867)
    frame = builder.add_body(
        (0.0, 0.0, 2.0, *q), mass=1.0, inertia=np.eye(3) * 0.1, is_kinematic=True, label="/World/Frame"
    )
    payload = builder.add_body((1.0, 0.0, 0.5, *IDENTITY_Q), mass=2.0, inertia=np.eye(3) * 0.02, label="/World/Payload")
    return {"/World/Frame": frame, "/World/Payload": payload}


def routes_tendons(builder: nt.ModelBuilder, frame: int, payload: int):
    P = TendonGuideType.PINHOLE
    R = TendonGuideType.ROLLER
    builder.add_tendon(
        [
            TendonGuide(body=-1, offset=(-1.0, 0.0, 2.5)),
            TendonGuide(body=frame, guide_type=P, offset=(-0.5, 0.0, 0.0), mu=0.2, compliance=1e-5, damping=0.5),
            TendonGuide(
                body=frame,
                guide_type=R,
                offset=(0.5, 0.0, 0.0),
                axis=(0.0, 2.0, 0.0),
                radius=0.1,
                orientation=-1,
                mu=0.1,
                rest_length=1.2,
            ),
            TendonGuide(body=payload, offset=(0.0, 0.0, 0.1), compliance=2e-5),
        ],
        label="/World/Tendons/Hoist",
    )
    builder.add_tendon(
        [
            TendonGuide(body=payload, offset=(0.1, 0.0, 0.0)),
            TendonGuide(
                body=frame, guide_type=R, offset=(0.0, 0.3, 0.0), axis=(1.0, 0.0, 0.0), radius=0.05, dynamic=True
            ),
            TendonGuide(body=payload, offset=(-0.1, 0.0, 0.0), damping=0.25),
        ],
        label="/World/Tendons/Sling",
    )


def routes_by_hand() -> nt.ModelBuilder:
    b = nt.ModelBuilder()
    m = routes_bodies(b)
    routes_tendons(b, m["/World/Frame"], m["/World/Payload"])
    return b


def arm_bodies(builder: nt.ModelBuilder) -> dict:
    """Bodies and joints of tendon_mjc_arm.usda, labelled with their prim paths; returns the body map."""
    inertia = np.eye(3) * 0.1
    upper = builder.add_link((0.0, 0.0, 1.0, *IDENTITY_Q), mass=1.0, inertia=inertia, label="/World/Arm/upper")
    lower = builder.add_link((0.8, 0.0, 1.0, *IDENTITY_Q), mass=1.0, inertia=inertia, label="/World/Arm/lower")
    slider = builder.add_link((0.0, 0.5, 0.5, *IDENTITY_Q), mass=1.0, inertia=inertia, label="/World/slider")
    builder.add_joint_revolute(
        -1, upper, parent_xform=(0, 0, 1, *IDENTITY_Q), axis=(0, 1, 0), label="/World/Arm/shoulder"
    )
    builder.add_joint_revolute(
        upper, lower, parent_xform=(0.8, 0, 0, *IDENTITY_Q), axis=(0, 1, 0), label="/World/Arm/elbow"
    )
    builder.add_joint_prismatic(
        -1, slider, parent_xform=(0, 0.5, 0.5, *IDENTITY_Q), axis=(1, 0, 0), label="/World/slide"
    )
    return {"/World/Arm/upper": upper, "/World/Arm/lower": lower, "/World/slider": slider}


def arm_by_hand() -> nt.ModelBuilder:
    b = nt.ModelBuilder()
    m = arm_bodies(b)
    up, lo, sl = m["/World/Arm/upper"], m["/World/Arm/lower"], m["/World/slider"]
    b.add_spatial_tendon(
        [
            TendonSite(body=-1, offset=(0.0, 0.0, 2.0)),
            TendonSite(body=up, offset=(0.4, 0.0, 0.1)),
            TendonWrap(
                kind="cylinder",
                body=up,
                offset=(0.8, 0.0, 0.0),
                axis=(0.0, 1.0, 0.0),
                radius=0.08,
                side=TendonSite(body=up, offset=(0.8, 0.0, 0.3)),
            ),
            TendonSite(body=lo, offset=(0.5, 0.0, 0.1)),
            TendonPulley(divisor=2.0),
            TendonSite(body=sl, offset=(0.0, 0.0, 0.1)),
            TendonWrap(kind="sphere", body=lo, offset=(0.25, 0.0, -0.1), radius=0.05),
            TendonSite(body=lo, offset=(0.5, 0.0, -0.15)),
        ],
        label="/World/Tendons/spatial",
        stiffness=40.0,
        damping=0.5,
        spring_lower=2.5,
        spring_upper=2.5,
        lower_limit=1.0,
        upper_limit=4.0,
        limit_margin=0.01,
        friction_loss=0.3,
        armature=0.05,
        width=0.004,
        # The servo: gear 2, kp 50, kv 5 -> 200 N/m, 20 N s/m; ctrl clamped into [3, 6] -> 3 / gear.
        position_gain=200.0,
        velocity_gain=20.0,
        target_length=1.5,
    )
    b.add_fixed_tendon(
        [1, 0, 2],
        [-0.25, 0.5, 2.0],
        label="/World/Tendons/fixed",
        stiffness=10.0,
        spring_lower=-0.1,
        spring_upper=0.2,
        # Tendon range [-3, 5] and the motor's gear -1 times its range [-2, 4]: [-3, 2].
        actuation_lower=-3.0,
        actuation_upper=2.0,
    )
    return b


# ----------------------------------------------------------------------------------------------
# Schema files


def test_schema_and_generated_schema_agree():
    """schema.usda and the hand-written generatedSchema.usda declare the same classes and properties
    (type, fallback, variability, allowed tokens)."""

    def props(layer_path):
        layer = Sdf.Layer.FindOrOpen(layer_path)
        out = {}
        for name in ("NewtonTendon", "NewtonTendonGuide"):
            spec = layer.GetPrimAtPath("/" + name)
            assert spec is not None, name
            for p in spec.properties:
                if isinstance(p, Sdf.AttributeSpec):
                    out[(name, p.name)] = (str(p.typeName), p.default, p.variability, list(p.allowedTokens or []))
                else:
                    out[(name, p.name)] = ("rel",)
        return out

    schema = props(os.path.join(ut.SCHEMA_DIR, "schema.usda"))
    generated = props(os.path.join(ut.SCHEMA_DIR, "generatedSchema.usda"))
    assert schema == generated
    assert ("NewtonTendon", ut.GUIDES_REL) in schema and len(schema) == 14


def test_schema_registers_in_a_fresh_interpreter():
    """Importing newton_tendon.usd_tendons before any stage exists registers the codeless schema: the
    prim types are known and carry the documented fallbacks."""
    code = (
        "import newton_tendon.usd_tendons as u\n"
        "from pxr import Usd\n"
        "s = Usd.Stage.CreateInMemory(); g = s.DefinePrim('/g', 'NewtonTendonGuide')\n"
        "print(u.SCHEMA_REGISTERED, g.IsA(Usd.Typed), g.GetAttribute('newton:guide:restLength').Get(),"
        " g.GetAttribute('newton:guide:type').Get())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "True", "-1.0", "anchor"]


# ----------------------------------------------------------------------------------------------
# Native routed cables


def test_native_routes_fixture_matches_hand_built():
    """tendon_native_routes.usda gives the same routed-tendon arrays (bit for bit) as the scene built by
    hand, both imported into hand-built bodies and through add_usd; the authored guide order (not the
    child order) is kept."""
    want = model_arrays(routes_by_hand().finalize("cpu"))
    direct = nt.ModelBuilder()
    body_map = routes_bodies(direct)
    ut.import_usd_tendons(direct, fixture_stage("tendon_native_routes.usda"), body_map, 1.0, IDENTITY_Q)
    assert direct.tendon_label == ["/World/Tendons/Hoist", "/World/Tendons/Sling"]
    assert_arrays(model_arrays(direct.finalize("cpu")), want)
    via = nt.ModelBuilder()
    result = via.add_usd(os.path.join(ASSETS, "tendon_native_routes.usda"))
    assert result["tendons"] == {"/World/Tendons/Hoist": 0, "/World/Tendons/Sling": 1}
    assert_arrays(model_arrays(via.finalize("cpu")), want)


def test_native_units_and_up_axis():
    """A Y-up stage in centimetres with kilogramsPerUnit 2: lengths x 0.01, compliance / 2 (s^2/kg),
    damping x 2 (kg/s), body-local offsets unrotated, world guides rotated into Z-up."""
    up = ut.Y_UP_ROTATION
    b = nt.ModelBuilder()
    cart = b.add_body((1.0, 0.0, 0.5, *up), mass=2.0, inertia=np.eye(3) * 0.02, label="/World/Cart")
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=(0.0, 0.0, 2.5), axis=(0.0, -1.0, 0.0)),  # stage +Z, unauthored
            TendonGuide(
                body=cart,
                guide_type=TendonGuideType.ROLLER,
                offset=(0.1, 0.0, 0.0),
                axis=(0.0, 0.0, 1.0),
                radius=0.05,
                rest_length=1.2,
                compliance=5e-5,
                damping=1.0,
            ),
            TendonGuide(body=-1, offset=(1.5, 0.0, 0.0), axis=(0.0, 0.0, 1.0)),
        ],
        label="/World/Line",
    )
    want = model_arrays(b.finalize("cpu"))
    stage = fixture_stage("tendon_native_units.usda")
    assert ut.stage_up_rotation(stage) == up
    direct = nt.ModelBuilder()
    direct.add_body((1.0, 0.0, 0.5, *up), label="/World/Cart")
    ut.import_usd_tendons(direct, stage, {"/World/Cart": 0}, 0.01, up)
    assert_arrays(model_arrays(direct.finalize("cpu")), want, exact=False)
    via = nt.ModelBuilder()
    via.add_usd(os.path.join(ASSETS, "tendon_native_units.usda"))
    np.testing.assert_allclose(via.body_q[0], (1.0, 0.0, 0.5, *up), atol=1e-12)
    assert_arrays(model_arrays(via.finalize("cpu")), want, exact=False)


def test_guide_on_static_body_is_held_in_world_coordinates():
    """A guide whose body is static (body_map -1) is authored in that body's frame and imported as a
    world guide at the same place."""
    stage = fixture_stage("tendon_native_routes.usda")
    b = nt.ModelBuilder()
    payload = b.add_body((1.0, 0.0, 0.5, *IDENTITY_Q), mass=1.0, label="/World/Payload")
    ut.import_usd_tendons(b, stage, {"/World/Frame": -1, "/World/Payload": payload}, 1.0, IDENTITY_Q)
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
    assert b.tendon_guide_body[:4] == [-1, -1, -1, payload]
    np.testing.assert_allclose(b.tendon_guide_offset[1], (-0.5 * c, -0.5 * s, 2.0), atol=1e-12)
    np.testing.assert_allclose(b.tendon_guide_axis[2], (-s, c, 0.0), atol=1e-12)  # normalized


# ----------------------------------------------------------------------------------------------
# MuJoCo tendon prims


def test_mjc_fixture_matches_hand_built():
    """tendon_mjc_arm.usda (spatial tendon with a world site, cylinder wrap with side site, pulley
    branch with a scaled sphere wrap; fixed tendon with path indices; a gear-2 position servo and a
    gear -1 force-limited motor) gives the transmission arrays of the scene built by hand."""
    prefixes = ("transmission_",)
    ref = arm_by_hand().finalize("cpu")
    want, want_path = model_arrays(ref, prefixes), path_arrays(ref)
    direct = nt.ModelBuilder()
    body_map = arm_bodies(direct)
    ut.import_usd_tendons(direct, fixture_stage("tendon_mjc_arm.usda"), body_map, 1.0, IDENTITY_Q)
    via = nt.ModelBuilder()
    via.add_usd(os.path.join(ASSETS, "tendon_mjc_arm.usda"))
    for b in (direct, via):
        assert b.transmission_label == ["/World/Tendons/spatial", "/World/Tendons/fixed"]
        model = b.finalize("cpu")
        assert_arrays(model_arrays(model, prefixes), want, exact=False)
        assert_arrays(path_arrays(model), want_path, exact=False)


def test_mjc_auto_limits_follow_mujoco(caplog):
    """MuJoCo's range rules (as in the MJCF importer): under mjc:limited = 'auto' an authored range
    limits the tendon, and a range with lower >= upper leaves it unlimited with a warning (an
    explicit 'true' rejects it, see MJC_CASES)."""
    limits = {}
    for lo in (1.0, 4.0, 5.0):
        stage = fixture_stage("tendon_mjc_arm.usda")
        _mjc(stage, "spatial").GetAttribute("mjc:limited").Set("auto")
        _mjc(stage, "spatial").GetAttribute("mjc:range:min").Set(lo)
        b = nt.ModelBuilder()
        body_map = arm_bodies(b)
        with caplog.at_level("WARNING", logger="newton_tendon.usd_tendons"):
            caplog.clear()
            ut.import_usd_tendons(b, stage, body_map, 1.0, IDENTITY_Q)
        props = b.transmission_properties[0]
        limits[lo] = (props.get("lower_limit"), props.get("upper_limit"), "leaves it unlimited" in caplog.text)
    assert limits[1.0] == (1.0, 4.0, False)
    for lo in (4.0, 5.0):
        assert limits[lo][2], lo
        assert limits[lo][:2] in ((None, None), (-math.inf, math.inf)), limits[lo]


def mujoco_lengths(mujoco, model, data, qpos):
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    poses = {}
    for i in range(1, model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, i)
        poses[name] = (*data.xpos[i], *data.xquat[i][[1, 2, 3, 0]])
    return np.array(data.ten_length), poses


def test_mjc_lengths_match_mujoco():
    """The fixed and spatial tendons of tendon_mjc_arm.usda, imported directly and through add_usd,
    have MuJoCo's ten_length (for tendon_mjc_arm.xml) at several joint configurations, within 1e-5
    relative; the configurations wrap and unwrap the cylinder and move the slider."""
    mujoco = pytest.importorskip("mujoco")
    mj = mujoco.MjModel.from_xml_path(os.path.join(ASSETS, "tendon_mjc_arm.xml"))
    data = mujoco.MjData(mj)
    direct = nt.ModelBuilder()
    ut.import_usd_tendons(direct, fixture_stage("tendon_mjc_arm.usda"), arm_bodies(direct), 1.0, IDENTITY_Q)
    via = nt.ModelBuilder()
    via.add_usd(os.path.join(ASSETS, "tendon_mjc_arm.usda"))
    configs = [(0.0, 0.0, 0.0), (0.4, -0.9, 0.2), (-0.7, 1.2, -0.3), (1.1, 0.5, 0.45), (-0.2, -1.8, 0.1)]
    compared = 0
    for b in (direct, via):
        model = b.finalize("cpu")
        solver = SolverXPBD(model)
        state = model.state()
        names = [label.rsplit("/", 1)[-1] for label in model.body_label]
        for qpos in configs:
            lengths, poses = mujoco_lengths(mujoco, mj, data, qpos)
            state.body_q.assign(np.array([poses[n] for n in names], dtype=np.float32))
            solver.update_geometry(state)
            ours = solver.transmission_length.numpy()
            np.testing.assert_allclose(ours, lengths, rtol=LENGTH_RTOL, atol=1e-6, err_msg=str(qpos))
            compared += 2
    assert compared == 20
    assert abs(lengths[1] - (0.5 * -0.2 - 0.25 * -1.8 + 2.0 * 0.1)) < 1e-12  # the oracle is the fixed-tendon sum


# ----------------------------------------------------------------------------------------------
# write_tendons round trips


def round_trip_scene() -> nt.ModelBuilder:
    """Routed cables and transmission tendons on three bodies, two joints; labels are not prim paths."""
    b = nt.ModelBuilder()
    q = (0.0, 0.2588190451025208, 0.0, 0.9659258262890683)
    a = b.add_body((0.0, 0.0, 2.0, *q), mass=1.0, inertia=np.diag([0.1, 0.2, 0.3]), is_kinematic=True, label="frame")
    c = b.add_link((1.0, 0.5, 1.0, *IDENTITY_Q), mass=2.0, inertia=np.diag([0.02, 0.03, 0.04]), label="link")
    d = b.add_link((1.5, 0.5, 1.0, *IDENTITY_Q), mass=0.5, inertia=np.eye(3) * 0.01, label="tip")
    b.add_joint_revolute(a, c, parent_xform=(1.0, 0.5, -1.0, *IDENTITY_Q), axis=(0, 0, 1), label="hinge")
    b.add_joint_prismatic(c, d, parent_xform=(0.5, 0.0, 0.0, *IDENTITY_Q), axis=(1, 0, 0), label="slide")
    routes_tendons(b, a, c)
    b.add_tendon(
        [TendonGuide(body=d, offset=(0.0, 0.1, 0.0)), TendonGuide(body=-1, offset=(3.0, 0.0, 0.0), rest_length=2.0)],
        label="tether",
    )
    b.add_spatial_tendon(
        [
            TendonPulley(divisor=3.0),
            TendonSite(body=-1, offset=(0.0, 1.0, 3.0)),
            TendonWrap(
                kind="sphere", body=a, offset=(0.2, 0.0, 0.0), radius=0.1, side=TendonSite(body=-1, offset=(0, 0, 5))
            ),
            TendonSite(body=c, offset=(0.1, 0.0, 0.0)),
            TendonPulley(divisor=0.5),
            TendonSite(body=c, offset=(0.0, 0.0, 0.2)),
            TendonWrap(kind="cylinder", body=d, offset=(0.0, 0.1, 0.0), axis=(1.0, 1.0, 0.0), radius=0.05),
            TendonSite(body=d, offset=(0.2, 0.0, 0.0)),
        ],
        label="spatial",
        stiffness=12.0,
        damping=0.3,
        spring_lower=1.0,
        spring_upper=1.5,
        upper_limit=6.0,
        friction_loss=0.2,
        friction_compliance=1e-4,
        drive_force=-3.0,
        activation_time=0.05,
        actuation_lower=-10.0,
        position_correction=0.5,
        enabled=False,
    )
    b.add_fixed_tendon(
        [0, 1],
        [0.3, -2.0],
        label="fixed",
        # A lock (lower == upper) has no MuJoCo range (it needs lower < upper): Newton attributes.
        lower_limit=0.4,
        upper_limit=0.4,
        actuation_lower=-2.0,
        actuation_upper=2.0,
        limit_compliance=1e-3,
        position_gain=5.0,
        velocity_gain=0.5,
        target_length=0.2,
        target_velocity=0.1,
        armature=0.02,
    )
    return b


def round_trip_import(stage, meters_per_unit, up) -> nt.ModelBuilder:
    """Import the written stage into a fresh copy of the scene's bodies and joints."""
    b = round_trip_scene()
    fresh = nt.ModelBuilder()
    fresh.add_builder(b)
    for name in ("tendon_", "transmission_"):
        for k, v in vars(fresh).items():
            if k.startswith(name) and isinstance(v, list):
                v.clear()
    fresh.joint_label = [f"/World/joints/{label}" for label in fresh.joint_label]
    body_map = {p: i for i, p in enumerate(("/World/frame", "/World/link", "/World/tip"))}
    ut.import_usd_tendons(fresh, stage, body_map, meters_per_unit, up)
    return fresh


@pytest.mark.parametrize("units", ["m_zup", "cm_yup"])
@pytest.mark.parametrize("source", ["builder", "model"])
def test_write_then_import_round_trip(units, source):
    """write_tendons (from a builder or a finalized Model, into a Z-up metre stage or a Y-up centimetre
    stage with kilogramsPerUnit 2) then import gives the original tendon and transmission arrays."""
    scene = round_trip_scene()
    ref = scene.finalize("cpu")
    stage = Usd.Stage.CreateInMemory()
    if units == "cm_yup":
        UsdGeom.SetStageMetersPerUnit(stage, 0.01)
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
        stage.SetMetadata("kilogramsPerUnit", 2.0)
    for label in scene.joint_label:
        stage.DefinePrim(f"/World/joints/{label}")
    body_paths = ["/World/frame", "/World/link", "/World/tip"]
    joint_paths = [f"/World/joints/{label}" for label in scene.joint_label]
    paths = ut.write_tendons(
        stage, scene if source == "builder" else ref, body_paths=body_paths, joint_paths=joint_paths
    )
    assert [p.name for p in paths] == ["Hoist", "Sling", "tether", "spatial", "fixed"]
    mpu = UsdGeom.GetStageMetersPerUnit(stage)
    got = round_trip_import(stage, mpu, ut.stage_up_rotation(stage)).finalize("cpu")
    exact = units == "m_zup"
    prefixes = ("tendon_", "transmission_", "coupling_")
    assert_arrays(model_arrays(got, prefixes), model_arrays(ref, prefixes), exact=exact)
    assert_arrays(path_arrays(got), path_arrays(ref), exact=exact)


def test_write_authors_minimal_bodies_that_add_usd_imports():
    """write_tendons into an empty stage authors /World/body_<i> rigid bodies (pose, mass, principal
    inertia); add_usd then rebuilds the bodies and the routed cables and spatial tendons."""
    scene = round_trip_scene()
    scene.transmission_type.pop()  # drop the fixed tendon: this stage has no joint prims
    for name in ("label", "properties", "path", "terms", "term_axes", "world"):
        getattr(scene, "transmission_" + name).pop()
    ref = scene.finalize("cpu")
    stage = Usd.Stage.CreateInMemory()
    ut.write_tendons(stage, scene)
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0 and UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    b = nt.ModelBuilder()
    result = b.add_usd(stage)
    assert list(result["bodies"]) == ["/World/body_0", "/World/body_1", "/World/body_2"]
    np.testing.assert_allclose(np.array(b.body_q), np.array(scene.body_q), atol=1e-6)
    np.testing.assert_allclose(b.body_mass, scene.body_mass, rtol=1e-6)
    np.testing.assert_allclose(np.array(b.body_inertia), np.array(scene.body_inertia), atol=1e-7)
    assert b.body_flags == scene.body_flags
    got = b.finalize("cpu")
    prefixes = ("tendon_", "transmission_")
    assert_arrays(model_arrays(got, prefixes), model_arrays(ref, prefixes), exact=False)


# ----------------------------------------------------------------------------------------------
# Malformed input: every case raises naming the prim, and the builder is unchanged


def _guide(stage, tendon, name):
    return stage.GetPrimAtPath(f"/World/Tendons/{tendon}/{name}")


def _set_attr(prim, name, type_name, value):
    """Author ``value`` with ``type_name`` in the root layer, whatever type a schema declares."""
    spec = prim.GetStage().GetRootLayer().GetPrimAtPath(prim.GetPath())
    if name in spec.properties:
        spec.RemoveProperty(spec.properties[name])
    Sdf.AttributeSpec(spec, name, type_name).default = value


NATIVE_CASES = {
    "missing body target": (
        lambda s: _guide(s, "Hoist", "ring").GetRelationship("newton:guide:body").SetTargets(["/World/Nowhere"]),
        ValueError,
        "does not exist",
    ),
    "body target not a rigid body": (
        lambda s: _guide(s, "Hoist", "ring").GetRelationship("newton:guide:body").SetTargets(["/World/Tendons"]),
        ValueError,
        "not an imported rigid body",
    ),
    "two body targets": (
        lambda s: (
            _guide(s, "Hoist", "ring")
            .GetRelationship("newton:guide:body")
            .SetTargets(["/World/Frame", "/World/Payload"])
        ),
        ValueError,
        "at most 1 target",
    ),
    "unknown type token": (
        lambda s: _guide(s, "Hoist", "ring").GetAttribute("newton:guide:type").Set("pulley"),
        ValueError,
        "type must be one of",
    ),
    "offset of wrong type": (
        lambda s: _set_attr(_guide(s, "Hoist", "hook"), "newton:guide:offset", Sdf.ValueTypeNames.String, "up"),
        TypeError,
        "offset must be a 3-vector",
    ),
    "radius as int": (
        lambda s: _set_attr(_guide(s, "Hoist", "wheel"), "newton:guide:radius", Sdf.ValueTypeNames.Int, 1),
        TypeError,
        "radius must be a double",
    ),
    "type as int": (
        lambda s: _set_attr(_guide(s, "Hoist", "wheel"), "newton:guide:type", Sdf.ValueTypeNames.Int, 0),
        TypeError,
        "type must be a token",
    ),
    "dynamic as int": (
        lambda s: _set_attr(_guide(s, "Sling", "a"), "newton:guide:dynamic", Sdf.ValueTypeNames.Int, 1),
        TypeError,
        "dynamic must be a bool",
    ),
    "NaN compliance": (
        lambda s: _guide(s, "Hoist", "hook").GetAttribute("newton:guide:compliance").Set(float("nan")),
        ValueError,
        "compliance must be finite",
    ),
    "infinite offset": (
        lambda s: _guide(s, "Hoist", "hook").GetAttribute("newton:guide:offset").Set(Gf.Vec3d(0, math.inf, 0)),
        ValueError,
        "offset must be finite",
    ),
    "negative radius": (
        lambda s: _guide(s, "Hoist", "wheel").GetAttribute("newton:guide:radius").Set(-0.1),
        ValueError,
        "radius must be >= 0",
    ),
    "orientation 2": (
        lambda s: _guide(s, "Hoist", "wheel").GetAttribute("newton:guide:orientation").Set(2),
        ValueError,
        "orientation must be 1 or -1",
    ),
    "zero axis": (
        lambda s: _guide(s, "Hoist", "wheel").GetAttribute("newton:guide:axis").Set(Gf.Vec3d(0, 0, 0)),
        ValueError,
        "axis must be nonzero",
    ),
    "first guide with a span": (
        lambda s: _set_attr(_guide(s, "Hoist", "start"), "newton:guide:restLength", Sdf.ValueTypeNames.Double, 1.0),
        ValueError,
        "first guide has no incoming span",
    ),
    "one guide": (
        lambda s: (
            s.GetPrimAtPath("/World/Tendons/Sling")
            .GetRelationship("newton:tendon:guides")
            .SetTargets(["/World/Tendons/Sling/a"])
        ),
        ValueError,
        "at least two guide prims",
    ),
    "guide target of another type": (
        lambda s: (
            s.GetPrimAtPath("/World/Tendons/Sling")
            .GetRelationship("newton:tendon:guides")
            .SetTargets(["/World/Tendons/Sling/b", "/World/Frame"])
        ),
        TypeError,
        "must be a NewtonTendonGuide prim",
    ),
    # Passes the importer's checks, fails in add_tendon after the Hoist was added: rolled back.
    "dynamic last guide": (
        lambda s: _set_attr(_guide(s, "Sling", "c"), "newton:guide:dynamic", Sdf.ValueTypeNames.Bool, True),
        ValueError,
        "Sling: .*dynamic=True: dynamic routing is only supported for ROLLER guides",
    ),
    "routed cable as actuator target": (
        lambda s: (
            s.DefinePrim("/World/act", "MjcActuator")
            .CreateRelationship("mjc:target")
            .SetTargets(["/World/Tendons/Hoist"])
        ),
        ValueError,
        "routed cables take no drive",
    ),
}


def assert_rejected_unchanged(builder, call, exc, match):
    before = copy.deepcopy(vars(builder))
    with pytest.raises(exc, match=match):
        call()
    assert same(vars(builder), before)


@pytest.mark.parametrize("case", list(NATIVE_CASES))
def test_malformed_native_prims_raise_and_leave_builder_unchanged(case):
    """Each malformed native prim raises a TypeError/ValueError naming the prim path and the rule, both
    directly and through add_usd; the builder is unchanged."""
    mutate, exc, match = NATIVE_CASES[case]
    stage = fixture_stage("tendon_native_routes.usda")
    mutate(stage)
    b = nt.ModelBuilder()
    body_map = routes_bodies(b)
    b.add_tendon([TendonGuide(body=0), TendonGuide(body=1)], label="existing")
    assert_rejected_unchanged(
        b, lambda: ut.import_usd_tendons(b, stage, body_map, 1.0, IDENTITY_Q), exc, f"/World.*{match}"
    )
    assert_rejected_unchanged(b, lambda: b.add_usd(stage), exc, match)


def test_guides_on_bodies_of_two_worlds_raise():
    """A route whose guides sit on bodies of two different worlds is rejected, naming the tendon prim."""
    b = nt.ModelBuilder()
    for label in ("/World/Frame", "/World/Payload"):
        w = nt.ModelBuilder()
        w.add_body(mass=1.0, label=label)
        b.add_world(w)
    body_map = {"/World/Frame": 0, "/World/Payload": 1}
    stage = fixture_stage("tendon_native_routes.usda")
    assert_rejected_unchanged(
        b,
        lambda: ut.import_usd_tendons(b, stage, body_map, 1.0, IDENTITY_Q),
        ValueError,
        "/World/Tendons/Hoist: all guides of a tendon must be on bodies of one world",
    )


def _mjc(stage, name):
    return stage.GetPrimAtPath(name if name.startswith("/") else f"/World/Tendons/{name}")


MJC_CASES = {
    "unknown tendon type": (
        lambda s: _set_attr(_mjc(s, "fixed"), "mjc:type", Sdf.ValueTypeNames.Token, "muscle"),
        ValueError,
        "fixed: mjc:type must be 'spatial' or 'fixed'",
    ),
    "path target of another kind": (
        lambda s: _mjc(s, "spatial").GetRelationship("mjc:path").SetTargets(["/World/anchor", "/World/Arm"]),
        ValueError,
        "must be a site .* or a Sphere or Cylinder",
    ),
    "missing path target": (
        lambda s: _mjc(s, "spatial").GetRelationship("mjc:path").AddTarget("/World/missing"),
        ValueError,
        "does not exist",
    ),
    "path index out of range": (
        lambda s: _mjc(s, "spatial").GetAttribute("mjc:path:indices").Set([0, 1, 2, 3, 4, 5, 9]),
        ValueError,
        r"mjc:path:indices\[6\] = 9 is out of range",
    ),
    "segments skip a branch": (
        lambda s: _mjc(s, "spatial").GetAttribute("mjc:path:segments").Set([0, 0, 0, 0, 2, 2, 2]),
        ValueError,
        "segments must start at 0",
    ),
    "zero divisor": (
        lambda s: _mjc(s, "spatial").GetAttribute("mjc:path:divisors").Set([1.0, 0.0]),
        ValueError,
        r"divisors\[1\] must be > 0",
    ),
    "side site on a site": (
        lambda s: _mjc(s, "spatial").GetAttribute("mjc:sideSites:indices").Set([0, -1, -1, -1, -1, -1, -1]),
        ValueError,
        "only wrap geometries take a side site",
    ),
    "wrap first in the path": (
        lambda s: (
            _mjc(s, "spatial").GetAttribute("mjc:path:indices").Set([2, 1, 0, 3, 4, 5, 6]),
            _mjc(s, "spatial").GetAttribute("mjc:sideSites:indices").Set([0, -1, -1, -1, -1, -1, -1]),
        ),
        ValueError,
        "spatial: .*start with a site",
    ),
    "non-uniform wrap scale": (
        lambda s: s.GetPrimAtPath("/World/Arm/lower/ball").GetAttribute("xformOp:scale").Set(Gf.Vec3d(2, 1, 2)),
        ValueError,
        "uniform scale",
    ),
    "joint not in the builder": (
        lambda s: (
            _mjc(s, "fixed")
            .GetRelationship("mjc:path")
            .SetTargets(["/World/Arm/shoulder", "/World/Arm", "/World/slide"])
        ),
        ValueError,
        "joint </World/Arm> is not a joint of the builder",
    ),
    "coefficients missing": (
        lambda s: _mjc(s, "fixed").GetAttribute("mjc:path:coef").Set([1.0]),
        ValueError,
        "mjc:path:coef needs one coefficient per path element",
    ),
    "coefficients of wrong type": (
        lambda s: _set_attr(_mjc(s, "fixed"), "mjc:path:coef", Sdf.ValueTypeNames.IntArray, [1, 2, 3]),
        TypeError,
        "mjc:path:coef must be a double",
    ),
    "three spring lengths": (
        lambda s: _mjc(s, "fixed").GetAttribute("mjc:springlength").Set([0.0, 1.0, 2.0]),
        ValueError,
        "springlength must have 1 or 2 values",
    ),
    "NaN stiffness": (
        lambda s: _mjc(s, "fixed").GetAttribute("mjc:stiffness").Set(float("nan")),
        ValueError,
        "mjc:stiffness must be finite",
    ),
    "reversed range": (
        lambda s: _mjc(s, "spatial").GetAttribute("mjc:range:min").Set(5.0),
        ValueError,
        r"mjc:range:min \(5.0\) must be < mjc:range:max \(4.0\) when mjc:limited is 'true'",
    ),
    "equal range, limited true": (
        lambda s: _mjc(s, "spatial").GetAttribute("mjc:range:min").Set(4.0),
        ValueError,
        r"mjc:range:min \(4.0\) must be < mjc:range:max \(4.0\)",
    ),
    "bad limited token": (
        lambda s: _mjc(s, "spatial").GetAttribute("mjc:limited").Set("maybe"),
        ValueError,
        "mjc:limited must be 'true', 'false' or 'auto'",
    ),
    "muscle actuator": (
        lambda s: _set_attr(_mjc(s, "/World/Actuators/servo"), "mjc:gainType", Sdf.ValueTypeNames.Token, "muscle"),
        ValueError,
        "servo: mjc:gainType 'muscle' is not supported",
    ),
    "positive feedback actuator": (
        lambda s: _mjc(s, "/World/Actuators/servo").GetAttribute("mjc:biasPrm").Set([0.0, 10.0, 0.0]),
        ValueError,
        "positive feedback",
    ),
    "joint actuator": (
        lambda s: _mjc(s, "/World/Actuators/motor").GetRelationship("mjc:target").SetTargets(["/World/Arm/elbow"]),
        ValueError,
        r"motor: mjc:target </World/Arm/elbow> is a joint.*only tendon actuators.*strict=False",
    ),
    "actuator without target": (
        lambda s: _mjc(s, "/World/Actuators/motor").GetRelationship("mjc:target").ClearTargets(True),
        ValueError,
        "motor: mjc:target has no target",
    ),
    "nonzero gear[1:]": (
        lambda s: _mjc(s, "/World/Actuators/servo").GetAttribute("mjc:gear").Set([2.0, 0.0, 0.0, 0.5, 0.0, 0.0]),
        ValueError,
        r"servo: mjc:gear\[1:\] must be zero",
    ),
    "Euler filter": (
        lambda s: _set_attr(_mjc(s, "/World/Actuators/motor"), "mjc:dynType", Sdf.ValueTypeNames.Token, "filter"),
        ValueError,
        "motor: mjc:dynType 'filter' .*Euler.* 'filterexact'",
    ),
    "filter with constant bias": (
        lambda s: (
            _set_attr(_mjc(s, "/World/Actuators/motor"), "mjc:dynType", Sdf.ValueTypeNames.Token, "filterexact"),
            _set_attr(_mjc(s, "/World/Actuators/motor"), "mjc:biasType", Sdf.ValueTypeNames.Token, "affine"),
            _set_attr(
                _mjc(s, "/World/Actuators/motor"), "mjc:biasPrm", Sdf.ValueTypeNames.DoubleArray, [0.5, 0.0, 0.0]
            ),
        ),
        ValueError,
        r"motor: a filtered actuator \(filterexact\) with a constant bias mjc:biasPrm\[0\] = 0.5",
    ),
    "two actuators on one tendon": (
        lambda s: (
            _mjc(s, "/World/Actuators/motor").GetRelationship("mjc:target").SetTargets(["/World/Tendons/spatial"])
        ),
        ValueError,
        "already has an actuator",
    ),
}


@pytest.mark.parametrize("case", list(MJC_CASES))
def test_malformed_mjc_prims_raise_and_leave_builder_unchanged(case):
    """Each malformed MuJoCo tendon or actuator prim raises naming the prim path and the rule; the builder
    (bodies, joints and an existing tendon) is unchanged."""
    mutate, exc, match = MJC_CASES[case]
    stage = fixture_stage("tendon_mjc_arm.usda")
    mutate(stage)
    b = nt.ModelBuilder()
    body_map = arm_bodies(b)
    b.add_fixed_tendon([0], [1.0], label="existing")
    assert_rejected_unchanged(
        b, lambda: ut.import_usd_tendons(b, stage, body_map, 1.0, IDENTITY_Q), exc, f"/World.*{match}"
    )


def test_filterexact_actuator_sets_activation_time():
    """dynType filterexact (MuJoCo's exact first-order filter) becomes the drive's activation time constant."""
    stage = fixture_stage("tendon_mjc_arm.usda")
    motor = _mjc(stage, "/World/Actuators/motor")
    _set_attr(motor, "mjc:dynType", Sdf.ValueTypeNames.Token, "filterexact")
    _set_attr(motor, "mjc:dynPrm", Sdf.ValueTypeNames.DoubleArray, [0.25])
    b = nt.ModelBuilder()
    result = b.add_usd(stage)
    assert b.transmission_properties[result["transmissions"]["/World/Tendons/fixed"]]["activation_time"] == 0.25


def test_joint_actuator_skipped_with_warning_when_not_strict(caplog):
    """Through add_usd, an MjcActuator on a joint raises by default; strict=False logs a warning naming the prim and
    skips it, while the tendon actuators are still imported."""
    stage = fixture_stage("tendon_mjc_arm.usda")
    stage.DefinePrim("/World/Actuators/elbow_motor", "MjcActuator").CreateRelationship("mjc:target").SetTargets(
        ["/World/Arm/elbow"]
    )
    b = nt.ModelBuilder()
    with pytest.raises(ValueError, match=r"</World/Arm/elbow> is a joint"):
        b.add_usd(stage)
    assert b.body_count == 0
    with caplog.at_level("WARNING", logger="newton_tendon.usd_tendons"):
        result = b.add_usd(stage, strict=False)
    assert "/World/Actuators/elbow_motor: mjc:target </World/Arm/elbow> is a joint" in caplog.text
    reference = nt.ModelBuilder()
    reference.add_usd(fixture_stage("tendon_mjc_arm.usda"))
    assert b.transmission_properties == reference.transmission_properties
    assert set(result["transmissions"]) == {"/World/Tendons/spatial", "/World/Tendons/fixed"}


def test_bad_arguments_raise():
    """Wrong argument types and values of import_usd_tendons and write_tendons are rejected up front."""
    stage = fixture_stage("tendon_native_routes.usda")
    b = nt.ModelBuilder()
    body_map = routes_bodies(b)
    bad = [
        (lambda: ut.import_usd_tendons(b, "scene.usda", body_map, 1.0, IDENTITY_Q), TypeError, "Usd.Stage"),
        (lambda: ut.import_usd_tendons(b, stage, [("a", 0)], 1.0, IDENTITY_Q), TypeError, "body_map"),
        (lambda: ut.import_usd_tendons(b, stage, {"/World/Frame": 0.5}, 1.0, IDENTITY_Q), TypeError, "int body"),
        (lambda: ut.import_usd_tendons(b, stage, body_map, 0.0, IDENTITY_Q), ValueError, "meters_per_unit"),
        (lambda: ut.import_usd_tendons(b, stage, body_map, 1.0, (0, 0, 0, 2)), ValueError, "unit quaternion"),
        (lambda: ut.import_usd_tendons(b, stage, body_map, 1.0, IDENTITY_Q, strict=1), TypeError, "strict"),
        (lambda: ut.write_tendons(stage, "builder"), TypeError, "ModelBuilder or a Model"),
        (lambda: ut.write_tendons(stage, b, body_paths=["/A"]), ValueError, "one path per body"),
        (lambda: ut.write_tendons(stage, b, body_paths=["A", "/B"]), ValueError, "absolute prim path"),
    ]
    for call, exc, match in bad:
        assert_rejected_unchanged(b, call, exc, match)


def test_write_fixed_tendon_needs_joint_prims():
    """A fixed tendon whose joints have no prim in the stage is refused with a clear message."""
    with pytest.raises(ValueError, match="fixed tendon 'fixed' uses joint 0 .*joint_paths"):
        ut.write_tendons(Usd.Stage.CreateInMemory(), round_trip_scene())
