"""USD import of UsdPhysics scenes (newton_tendon.usd.add_usd).

Each tiny fixture in tests/assets/usd/physics_*.usda is imported and compared, array by array after
finalize, with the same scene built by hand through the builder API. Malformed stages must raise an
error naming the prim and leave the caller's builder exactly as it was.
"""

from __future__ import annotations

import copy
import math
import pathlib

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt

from ..helpers import Sim, same

pxr = pytest.importorskip("pxr")
from pxr import Usd  # noqa: E402

ASSETS = pathlib.Path(__file__).resolve().parents[1] / "assets" / "usd"
# Both sides round float64 host values to float32 on device; USD stores float32 attributes. Values
# that pass through a unit or axis conversion may differ in the last float32 bits: 1e-6 relative.
RTOL = 1.0e-6
ATOL = 1.0e-6
S = math.sqrt(0.5)
ROT_Y90 = (0.0, S, 0.0, S)  # local +Z onto +X
ROT_XM90 = (-S, 0.0, 0.0, S)  # local +Z onto +Y
ROT_Z90 = (0.0, 0.0, S, S)
UP_Y = (S, 0.0, 0.0, S)  # Y-up stage coordinates into Z-up
DEG = math.pi / 180.0


def pose(x=0.0, y=0.0, z=0.0, q=(0.0, 0.0, 0.0, 1.0)):
    return (x, y, z, *q)


def box_inertia(m, hx, hy, hz):
    return np.diag([m / 3 * (hy**2 + hz**2), m / 3 * (hx**2 + hz**2), m / 3 * (hx**2 + hy**2)])


def assert_models_match(a: nt.Model, b: nt.Model):
    """Every array of two finalized models agrees to float32 precision; counts and labels are equal."""
    checked = 0
    for name, va in vars(a).items():
        vb = getattr(b, name)
        if isinstance(va, wp.array):
            np.testing.assert_allclose(va.numpy(), vb.numpy(), rtol=RTOL, atol=ATOL, err_msg=name)
            checked += 1
        elif isinstance(va, (int, float, str, list)):
            assert va == vb, name
    assert checked > 50


def imported(name: str, **kw) -> tuple[nt.ModelBuilder, dict]:
    b = nt.ModelBuilder()
    result = b.add_usd(ASSETS / name, **kw)
    return b, result


def check(name: str, hand: nt.ModelBuilder):
    b, result = imported(name)
    assert_models_match(b.finalize("cpu"), hand.finalize("cpu"))
    return b, result


# ----------------------------------------------------------------------------------------------
# Fixtures against hand-built scenes


def hand_pendulum() -> nt.ModelBuilder:
    b = nt.ModelBuilder(gravity=-9.5)  # the stage's PhysicsScene gravity, applied by add_usd
    link = b.add_link(pose(0.5, 0.0, 1.0), label="/World/Link")
    b.add_shape_capsule(link, pose(q=ROT_Y90), 0.0625, 0.375, mu=0.75, restitution=0.25, label="/World/Link/Rod")
    b.add_joint_revolute(
        -1,
        link,
        pose(0.0, 0.0, 1.0),
        pose(-0.5, 0.0, 0.0),
        axis=(0.0, 1.0, 0.0),
        limit_lower=-90 * DEG,
        limit_upper=45 * DEG,
        target_ke=0.5 / DEG,
        target_kd=0.25 / DEG,
        target_pos=30 * DEG,
        label="/World/Hinge",
    )
    return b


def test_free_box():
    """A free cube body: pose, size (half extents), default density 1000 kg/m^3, initial velocity (deg/s -> rad/s)."""
    hand = nt.ModelBuilder()
    b = hand.add_body(pose(0.0, 0.0, 1.0), label="/World/Box", velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 90 * DEG))
    hand.add_shape_box(b, hx=0.25, hy=0.25, hz=0.25, label="/World/Box")
    imp, result = check("physics_free_box.usda", hand)
    assert result["bodies"] == {"/World/Box": 0} and result["shapes"] == {"/World/Box": 0}
    assert imp.body_mass[0] == pytest.approx(1000.0 * 0.5**3)


def test_pendulum_revolute_limits_drive_material():
    """Revolute to the world: frames, axis token, limits in degrees, angular drive per degree, physics material."""
    imp, result = check("physics_pendulum.usda", hand_pendulum())
    assert result["joints"] == {"/World/Hinge": 0}
    assert result["gravity"] == pytest.approx((0.0, 0.0, -9.5))
    assert imp.joint_limit_lower[0] == pytest.approx(-math.pi / 2)
    assert imp.joint_target_ke[0] == pytest.approx(0.5 * 180.0 / math.pi)


def test_prismatic_on_static_frame():
    """Prismatic joint whose body0 is a static Xform: the parent frame is that prim's world pose; linear drive in SI."""
    hand = nt.ModelBuilder()
    s = hand.add_link(pose(0.0, 0.5, 1.0), label="/World/Slider")
    hand.add_shape_box(s, hx=0.125, hy=0.125, hz=0.125, density=500.0, label="/World/Slider")
    hand.add_joint_prismatic(
        -1,
        s,
        pose(0.0, 0.0, 1.0, ROT_Z90),
        pose(0.0, -0.5, 0.0, ROT_Z90),
        axis=(1.0, 0.0, 0.0),
        limit_lower=-0.25,
        limit_upper=0.5,
        target_ke=100.0,
        target_kd=4.0,
        target_pos=0.125,
        label="/World/Slide",
    )
    check("physics_prismatic.usda", hand)


def test_fixed_joints_and_swapped_world_side():
    """Fixed joints; collisionEnabled=true keeps parent-child contacts; a joint whose body1 is the world is swapped."""
    hand = nt.ModelBuilder()
    a = hand.add_link(pose(0.0, 0.0, 2.0), label="/World/A")
    hand.add_shape_sphere(a, radius=0.125, label="/World/A")
    c = hand.add_link(pose(0.5, 0.0, 2.0), label="/World/B")
    hand.add_shape_sphere(c, radius=0.125, label="/World/B")
    hand.add_joint_fixed(a, c, pose(0.25), pose(-0.25), collision_filter_parent=False, label="/World/Weld")
    hand.add_joint_fixed(-1, a, pose(0.0, 0.0, 2.0), None, label="/World/Mount")
    imp, _ = check("physics_fixed.usda", hand)
    assert not imp.body_filter_pairs


def test_spherical_joint_with_scaled_body():
    """Ball joint; a uniformly scaled body scales its sphere radius and its localPos, not its frame."""
    hand = nt.ModelBuilder()
    bob = hand.add_link(pose(0.0, 0.0, 0.5), label="/World/Bob")
    hand.add_shape_sphere(bob, radius=0.125, label="/World/Bob")
    hand.add_joint_ball(-1, bob, pose(0.0, 0.0, 1.0), pose(0.0, 0.0, 0.5), label="/World/Ball")
    check("physics_spherical.usda", hand)


def test_shape_axes_static_plane_and_visuals():
    """Capsule/cylinder axis tokens rotate local Z onto X/Y; a static plane is shared; gprims without CollisionAPI are
    ignored; collisionEnabled=false keeps the mass but not the contacts."""
    hand = nt.ModelBuilder()
    body = hand.add_body(pose(0.0, 0.0, 1.0), label="/World/Body")
    hand.add_shape_plane(-1, None, label="/World/Ground")
    hand.add_shape_capsule(body, pose(q=ROT_Y90), 0.125, 0.25, label="/World/Body/CapsuleX")
    hand.add_shape_cylinder(body, pose(0.0, 0.0, 0.5, ROT_XM90), 0.25, 0.25, label="/World/Body/CylinderY")
    hand.add_shape_capsule(body, pose(0.0, 0.0, -0.5), 0.125, 0.125, has_collision=False, label="/World/Body/CapsuleZ")
    imp, result = check("physics_shape_axes.usda", hand)
    assert "/World/Body/Visual" not in result["shapes"]
    assert imp.shape_has_collision == [True, True, True, False]


def test_y_up_centimetre_gram_stage():
    """metersPerUnit 0.01, kilogramsPerUnit 0.001 and upAxis Y become SI and Z-up: poses, sizes, masses, limits,
    velocities, drive gains and gravity."""
    m = 0.5
    hand = nt.ModelBuilder()
    box = hand.add_body(
        pose(0.0, 0.0, 1.0, UP_Y),
        mass=m,
        inertia=box_inertia(m, 0.05, 0.05, 0.05),
        lock_inertia=True,
        label="/Box",
        velocity=(0.0, -1.0, 0.0, 0.0, 0.0, 0.0),
    )
    hand.add_shape_box(box, hx=0.05, hy=0.05, hz=0.05, label="/Box")
    ball = hand.add_body(pose(0.0, 0.0, 1.0, UP_Y), label="/Box2")
    hand.add_shape_sphere(ball, radius=0.05, label="/Box2")
    # Stiffness: 1000 g cm^2 / s^2 / deg = 1e-4 N m / deg.
    hand.add_joint_revolute(
        -1, box, pose(0.0, 0.0, 1.5, UP_Y), pose(0.0, 0.5, 0.0), (0, 0, 1), target_ke=1.0e-4 / DEG, label="/Hinge"
    )
    hand.add_joint_prismatic(box, ball, None, None, (0, 1, 0), limit_lower=-0.05, limit_upper=0.1, label="/Slide")
    _, result = check("physics_yup_cm.usda", hand)
    assert result["gravity"] == pytest.approx((0.0, 0.0, -9.81), abs=1e-9)
    assert (result["meters_per_unit"], result["kilograms_per_unit"], result["up_axis"]) == (0.01, 0.001, "Y")


def test_mass_api_against_density():
    """MassAPI on the body overrides (mass, COM, diagonal inertia with principal axes; mass alone rescales the shapes
    inertia); otherwise density comes from the shape's MassAPI, the body's MassAPI, the material, or the default."""
    hand = nt.ModelBuilder()
    b = hand.add_body(
        mass=2.0, inertia=np.diag([0.25, 0.125, 0.3125]), com=(0.125, 0, 0), lock_inertia=True, label="/World/Explicit"
    )
    hand.add_shape_box(b, hx=0.25, hy=0.25, hz=0.25, label="/World/Explicit/Shape")
    b = hand.add_body(
        pose(1.0),
        mass=4.0,
        inertia=box_inertia(4.0, 0.25, 0.25, 0.25),
        com=(0.25, 0, 0),
        lock_inertia=True,
        label="/World/MassOnly",
    )
    hand.add_shape_box(b, pose(0.25), 0.25, 0.25, 0.25, label="/World/MassOnly/Shape")
    b = hand.add_body(pose(2.0), label="/World/BodyDensity")
    hand.add_shape_sphere(b, radius=0.25, density=2000.0, label="/World/BodyDensity/Shape")
    b = hand.add_body(pose(3.0), label="/World/MaterialDensity")
    hand.add_shape_capsule(b, None, 0.125, 0.25, density=300.0, mu=0.0, label="/World/MaterialDensity/Shape")
    b = hand.add_body(pose(4.0), label="/World/ShapeMass")
    hand.add_shape_box(b, hx=0.25, hy=0.25, hz=0.25, mass=3.0, label="/World/ShapeMass/Shape")
    hand.add_shape_sphere(b, pose(0.0, 0.0, 0.5), 0.125, density=100.0, label="/World/ShapeMass/Light")
    imp, _ = check("physics_mass.usda", hand)
    assert imp.body_mass[0] == 2.0 and imp.body_mass[1] == 4.0


def test_mass_only_on_centimetre_stage_puts_com_in_metres():
    """MassAPI with physics:mass alone on a cm stage: the centre of mass and the inertia come from the shapes, whose
    poses are converted to metres first (a 10 cm cube 50 cm from the body origin has its COM at 0.5 m)."""
    hand = nt.ModelBuilder()
    b = hand.add_body(
        pose(0.0, 0.0, 1.0),
        mass=2.0,
        inertia=box_inertia(2.0, 0.05, 0.05, 0.05),
        com=(0.5, 0.0, 0.0),
        lock_inertia=True,
        label="/World/Body",
    )
    hand.add_shape_box(b, pose(0.5), 0.05, 0.05, 0.05, label="/World/Body/Shape")
    imp, _ = check("physics_mass_cm.usda", hand)
    np.testing.assert_allclose(imp.body_com[0], (0.5, 0.0, 0.0), rtol=1e-12)
    np.testing.assert_allclose(imp.body_inertia[0], box_inertia(2.0, 0.05, 0.05, 0.05), rtol=1e-12)


def test_stage_gravity_is_applied_to_the_builder():
    """The PhysicsScene gravity (162 cm/s^2 along -Y of a Y-up cm stage) becomes builder.gravity (0, 0, -1.62) m/s^2,
    rotated by xform; apply_gravity=False and a stage without a scene leave the builder's gravity alone."""
    b = nt.ModelBuilder()
    result = b.add_usd(ASSETS / "physics_moon.usda")
    assert result["gravity_applied"]
    np.testing.assert_allclose(b.gravity, (0.0, 0.0, -1.62), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.finalize("cpu").gravity.numpy(), [(0.0, 0.0, -1.62)], rtol=1e-6, atol=1e-7)

    b = nt.ModelBuilder()
    b.add_usd(ASSETS / "physics_moon.usda", xform=pose(q=(S, 0.0, 0.0, S)))  # +90 deg about X: -Z becomes +Y
    np.testing.assert_allclose(b.gravity, (0.0, 1.62, 0.0), rtol=1e-12, atol=1e-12)

    metre = STAGE_HEAD + 'def PhysicsScene "Scene"\n{\n    float physics:gravityMagnitude = 1.62\n}\n'
    b = nt.ModelBuilder()
    b.add_usd(stage_from(metre))
    np.testing.assert_allclose(b.gravity, (0.0, 0.0, -1.62), rtol=1e-6)

    b = nt.ModelBuilder(gravity=-3.0)
    result = b.add_usd(ASSETS / "physics_moon.usda", apply_gravity=False)
    assert not result["gravity_applied"] and b.gravity == (0.0, 0.0, -3.0)
    result = b.add_usd(ASSETS / "physics_free_box.usda")  # no PhysicsScene
    assert not result["gravity_applied"] and b.gravity == (0.0, 0.0, -3.0)
    with pytest.raises(TypeError, match="apply_gravity"):
        b.add_usd(ASSETS / "physics_moon.usda", apply_gravity="yes")


def test_label_prefix_imports_one_stage_twice():
    """label_prefix prefixes every label as add_mjcf does; importing a stage with transmission tendons twice without
    one raises (naming the clashing label) and leaves the builder unchanged."""
    b = nt.ModelBuilder()
    first = b.add_usd(ASSETS / "tendon_mjc_arm.usda")
    assert first["transmissions"]
    snapshot = copy.deepcopy(vars(b))
    with pytest.raises(ValueError, match=r"already has a transmission tendon labelled '/World/Tendons/.*label_prefix"):
        b.add_usd(ASSETS / "tendon_mjc_arm.usda")
    assert same(vars(b), snapshot)
    second = b.add_usd(ASSETS / "tendon_mjc_arm.usda", label_prefix="copy/")
    assert second["transmissions"].keys() == first["transmissions"].keys()
    n_body, n_joint = len(first["bodies"]), len(first["joints"])
    assert b.body_label[n_body:] == ["copy/" + lbl for lbl in b.body_label[:n_body]]
    assert b.joint_label[n_joint:] == ["copy/" + lbl for lbl in b.joint_label[:n_joint]]
    n_shape = len(first["shapes"])
    assert b.shape_label[n_shape:] == ["copy/" + lbl for lbl in b.shape_label[:n_shape]]
    for path, i in second["transmissions"].items():
        assert b.transmission_label[i] == "copy/" + path
        assert b.transmission_label[first["transmissions"][path]] == path
    with pytest.raises(TypeError, match="label_prefix"):
        b.add_usd(ASSETS / "physics_free_box.usda", label_prefix=3)

    c = nt.ModelBuilder()
    res = c.add_usd(ASSETS / "physics_articulation.usda", label_prefix="r/")
    assert c.articulation_label == ["r//Robot"] and res["articulations"] == {"/Robot": 0}
    assert c.joint_label[res["free_joints"]["/Robot/Base"]] == "r//Robot/Base#free"


def test_articulation_root_order_and_filtered_pairs():
    """An articulation root on an Xform: floating base gets a free joint, joints are ordered outwards from the root
    (a joint authored child-to-parent is reversed with a negated axis), the block becomes one articulation, joints
    outside follow; FilteredPairsAPI filters the two bodies' shapes."""
    hand = nt.ModelBuilder()
    base = hand.add_link(pose(0.0, 0.0, 1.0), label="/Robot/Base")
    hand.add_shape_box(base, hx=0.25, hy=0.25, hz=0.25, label="/Robot/Base")
    arm = hand.add_link(pose(0.5, 0.0, 1.0), label="/Robot/Arm")
    hand.add_shape_sphere(arm, radius=0.125, label="/Robot/Arm")
    tip = hand.add_link(pose(1.0, 0.0, 1.0), label="/Robot/Tip")
    hand.add_shape_sphere(tip, radius=0.125, label="/Robot/Tip")
    loose = hand.add_body(pose(3.0, 0.0, 1.0), label="/Loose")
    hand.add_shape_sphere(loose, radius=0.125, label="/Loose")
    hand.add_joint_free(base, label="/Robot/Base#free")
    hand.add_joint_revolute(base, arm, pose(0.25), pose(-0.25), (0, 1, 0), label="/Robot/ArmJoint")
    hand.add_joint_revolute(
        arm,
        tip,
        pose(0.25),
        pose(-0.25),
        (0, 0, -1),
        limit_lower=-30 * DEG,
        limit_upper=60 * DEG,
        label="/Robot/TipJoint",
    )
    hand.add_articulation(label="/Robot")
    hand.add_joint_ball(-1, loose, pose(3.0, 0.0, 2.0), pose(0.0, 0.0, 1.0), label="/LooseJoint")
    hand.add_shape_collision_filter_pair(0, 2)
    imp, result = check("physics_articulation.usda", hand)
    assert result["articulations"] == {"/Robot": 0}
    assert result["free_joints"] == {"/Robot/Base": 0}
    assert result["joints"] == {"/Robot/ArmJoint": 1, "/Robot/TipJoint": 2, "/LooseJoint": 3}
    assert imp.shape_filter_pairs == {(0, 2)}


def test_imported_pendulum_simulates_bitwise_like_hand_built():
    """An imported pendulum and the hand-built one give bitwise identical trajectories (same model arrays)."""
    imp, _ = imported("physics_pendulum.usda")
    sims = [Sim(b, "cpu", contacts=False) for b in (imp, hand_pendulum())]
    for sim in sims:
        sim.step(1.0 / 240.0, 40)
    q0, q1 = sims[0].body_q(), sims[1].body_q()
    assert np.array_equal(q0, q1)
    assert np.abs(q0[0, :3] - (0.5, 0.0, 1.0)).max() > 1e-3  # it moved


def test_placement_world_offsets_and_open_stage():
    """xform places the stage, indices in the result account for what the builder already held, and an open
    Usd.Stage is accepted as source."""
    b = nt.ModelBuilder()
    first = b.add_body(mass=1.0, label="existing")
    b.add_shape_sphere(first, radius=0.1)
    stage = Usd.Stage.Open(str(ASSETS / "physics_pendulum.usda"))
    result = b.add_usd(stage, xform=pose(1.0, 2.0, 0.0, ROT_Z90))
    assert result["bodies"] == {"/World/Link": 1}
    assert result["shapes"] == {"/World/Link/Rod": 1}
    assert b.body_label[1] == "/World/Link"
    np.testing.assert_allclose(b.body_q[1][:3], (1.0, 2.5, 1.0), atol=1e-12)
    np.testing.assert_allclose(b.joint_X_p[0][:3], (1.0, 2.0, 1.0), atol=1e-12)


def test_mesh_box_approximation():
    """A Mesh collider raises by default; mesh_approximation='box' uses the bounding box of its points."""
    text = STAGE_HEAD + MESH_BODY
    b = nt.ModelBuilder()
    with pytest.raises(ValueError, match=r"</Body/Mesh>.*mesh"):
        b.add_usd(stage_from(text))
    b.add_usd(stage_from(text), mesh_approximation="box")
    assert b.shape_scale == [(0.5, 0.25, 0.125)]
    np.testing.assert_allclose(b.shape_transform[0][:3], (0.5, 0.0, 0.0))


def test_collision_group_filters():
    """A PhysicsCollisionGroup that filters itself disables contacts between its member shapes."""
    text = (
        STAGE_HEAD
        + BODY.format(name="A", extra="")
        + BODY.format(name="B", extra="")
        + """
def PhysicsCollisionGroup "Group" (
    prepend apiSchemas = ["CollectionAPI:colliders"]
)
{
    rel collection:colliders:includes = [</A>, </B>]
    rel physics:filteredGroups = </Group>
}
"""
    )
    b = nt.ModelBuilder()
    b.add_usd(stage_from(text))
    assert b.shape_filter_pairs == {(0, 1)}


def test_strict_false_ignores_unsupported_physics():
    """A finite drive maxForce is rejected by default and ignored (with a warning) when strict=False."""
    text = joint_case(extra="float drive:angular:physics:maxForce = 5\n    float drive:angular:physics:stiffness = 10")
    with pytest.raises(ValueError, match=r"</Joint>.*maxForce"):
        nt.ModelBuilder().add_usd(stage_from(text))
    b = nt.ModelBuilder()
    b.add_usd(stage_from(text), strict=False)
    assert b.joint_target_ke == [pytest.approx(10.0 / DEG)]


# ----------------------------------------------------------------------------------------------
# Malformed input: each case raises, names the prim, and leaves the builder unchanged

STAGE_HEAD = """#usda 1.0
(
    upAxis = "Z"
    metersPerUnit = 1
)
"""
BODY = """
def Cube "{name}" (
    prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI", "PhysicsMassAPI"]
)
{{
    double size = 0.5
    {extra}
}}
"""
JOINT = """
def {type} "Joint"
{{
    {body0}
    {body1}
    {extra}
}}
"""
MESH_BODY = """
def Xform "Body" (
    prepend apiSchemas = ["PhysicsRigidBodyAPI"]
)
{
    def Mesh "Mesh" (
        prepend apiSchemas = ["PhysicsCollisionAPI"]
    )
    {
        point3f[] points = [(0, -0.25, -0.125), (1, 0.25, 0.125), (0.5, 0, 0)]
    }
}
"""


def stage_from(text: str):
    stage = Usd.Stage.CreateInMemory()
    assert stage.GetRootLayer().ImportFromString(text)
    return stage


def joint_case(jtype="PhysicsRevoluteJoint", body0="", body1="</Body>", extra="", body_extra="", more=""):
    b0 = f"rel physics:body0 = {body0}" if body0 else ""
    b1 = f"rel physics:body1 = {body1}" if body1 else ""
    return (
        STAGE_HEAD
        + BODY.format(name="Body", extra=body_extra)
        + JOINT.format(type=jtype, body0=b0, body1=b1, extra=extra)
        + more
    )


ANCHOR = '\ndef Xform "Anchor"\n{\n}\n'
MALFORMED = {
    "missing body1 target": (joint_case(body1="</Nope>"), ValueError, r"</Joint>.*</Nope>.*does not exist"),
    "joint between missing bodies": (joint_case(body0="</A>", body1="</B>"), ValueError, r"</Joint>.*</A>"),
    "two body0 targets": (joint_case(body0="[</Body>, </Anchor>]", more=ANCHOR), ValueError, r"</Joint>.*one target"),
    "mass is a string": (joint_case(body_extra='string physics:mass = "heavy"'), TypeError, r"</Body>.*physics:mass"),
    "axis token unknown": (joint_case(extra='uniform token physics:axis = "W"'), ValueError, r"</Joint>.*axis"),
    "size is a string": (
        STAGE_HEAD + BODY.replace("double size = 0.5", 'string size = "big"').format(name="Body", extra=""),
        TypeError,
        r"</Body>.*size",
    ),
    "NaN localPos": (joint_case(extra="point3f physics:localPos0 = (0, nan, 0)"), ValueError, r"</Joint>.*finite"),
    "NaN limit": (joint_case(extra="float physics:lowerLimit = nan"), ValueError, r"</Joint>.*lowerLimit"),
    "NaN density": (joint_case(body_extra="float physics:density = nan"), ValueError, r"</Body>.*density"),
    "NaN velocity": (
        joint_case(body_extra="vector3f physics:velocity = (nan, 0, 0)"),
        ValueError,
        r"</Body>.*velocity",
    ),
    "negative size": (
        STAGE_HEAD + BODY.replace("0.5", "-1").format(name="Body", extra=""),
        ValueError,
        r"</Body>.*size",
    ),
    "distance joint": (joint_case(jtype="PhysicsDistanceJoint"), ValueError, r"</Joint>.*PhysicsDistanceJoint"),
    "generic D6 joint": (joint_case(jtype="PhysicsJoint"), ValueError, r"</Joint>.*not supported"),
    "unknown joint type": (joint_case(jtype="PhysicsFooJoint"), ValueError, r"</Joint>.*PhysicsFooJoint"),
    "both ends static": (joint_case(body1="</Anchor>", more=ANCHOR), ValueError, r"</Joint>.*both ends static"),
    "same body twice": (joint_case(body0="</Body>"), ValueError, r"</Joint>.*same rigid body"),
    "limits reversed": (
        joint_case(extra="float physics:lowerLimit = 10\n    float physics:upperLimit = -10"),
        ValueError,
        r"/Joint.*limit_lower",
    ),
    "mesh collider": (STAGE_HEAD + MESH_BODY, ValueError, r"</Body/Mesh>"),
    "mirrored body": (
        joint_case(
            body_extra='float3 xformOp:scale = (-1, 1, 1)\n    uniform token[] xformOpOrder = ["xformOp:scale"]'
        ),
        ValueError,
        r"</Body>.*mirrored",
    ),
    "massless dynamic body": (
        STAGE_HEAD + 'def Xform "Body" (\n    prepend apiSchemas = ["PhysicsRigidBodyAPI"]\n)\n{\n}\n',
        ValueError,
        r"</Body>.*needs mass",
    ),
    "filtered pair target missing": (
        joint_case(body_extra="rel physics:filteredPairs = </Ghost>").replace(
            '"PhysicsMassAPI"]', '"PhysicsMassAPI", "PhysicsFilteredPairsAPI"]'
        ),
        ValueError,
        r"</Body>.*</Ghost>",
    ),
    "inertia breaks the triangle inequality": (
        joint_case(body_extra="float physics:mass = 1\n    float3 physics:diagonalInertia = (1, 1, 3)"),
        ValueError,
        r"</Body>.*diagonalInertia.*triangle inequality",
    ),
    "infinite gravityMagnitude": (
        joint_case(more='\ndef PhysicsScene "Scene"\n{\n    float physics:gravityMagnitude = inf\n}\n'),
        ValueError,
        r"</Scene>.*gravityMagnitude.*finite",
    ),
    "finite maxForce (strict)": (
        joint_case(extra="float drive:angular:physics:maxForce = 5\n    float drive:angular:physics:stiffness = 10"),
        ValueError,
        r"</Joint>.*maxForce",
    ),
}


def populated_builder() -> nt.ModelBuilder:
    b = nt.ModelBuilder()
    body = b.add_link(pose(0.0, 0.0, 1.0), label="before")
    b.add_shape_sphere(body, radius=0.1)
    b.add_joint_revolute(-1, body, label="before_joint")
    return b


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_stage_raises_and_leaves_builder_unchanged(case):
    """Malformed or unsupported content raises a TypeError/ValueError naming the prim; the builder is untouched."""
    text, error, pattern = MALFORMED[case]
    b = populated_builder()
    snapshot = copy.deepcopy(vars(b))
    with pytest.raises(error, match=pattern):
        b.add_usd(stage_from(text))
    assert same(vars(b), snapshot)


def test_bad_sources_and_arguments(tmp_path):
    """Unreadable sources and bad keyword arguments raise before anything changes."""
    broken = tmp_path / "broken.usda"
    broken.write_text("#usda 1.0\ndef Xform {{{\n")
    b = populated_builder()
    snapshot = copy.deepcopy(vars(b))
    with pytest.raises(ValueError, match="broken.usda"):
        b.add_usd(broken)
    with pytest.raises(FileNotFoundError, match="missing.usda"):
        b.add_usd(tmp_path / "missing.usda")
    with pytest.raises(TypeError, match="source"):
        b.add_usd(42)
    with pytest.raises(ValueError, match="mesh_approximation"):
        b.add_usd(ASSETS / "physics_free_box.usda", mesh_approximation="hull")
    with pytest.raises(ValueError, match="xform"):
        b.add_usd(ASSETS / "physics_free_box.usda", xform=(0, 0, 0, 0, 0, 0, 0))
    with pytest.raises(TypeError, match="strict"):
        b.add_usd(ASSETS / "physics_free_box.usda", strict="yes")
    assert same(vars(b), snapshot)


def test_tendons_follow_body_indices_and_disabled_bodies_are_static():
    """The tendon importer runs on the scratch builder: after merging into a builder that already held bodies, a
    routed cable's guides point at the imported bodies; a body with rigidBodyEnabled=false becomes static geometry."""
    text = (
        STAGE_HEAD
        + BODY.format(
            name="Body",
            extra="double3 xformOp:translate = (0, 0, 1)\n    "
            + 'uniform token[] xformOpOrder = ["xformOp:translate"]',
        )
        + BODY.format(name="Frozen", extra="bool physics:rigidBodyEnabled = false")
        + """
def NewtonTendon "Cable"
{
    rel newton:tendon:guides = [</Cable/top>, </Cable/hook>]

    def NewtonTendonGuide "top"
    {
        double3 newton:guide:offset = (0, 0, 2)
    }

    def NewtonTendonGuide "hook"
    {
        rel newton:guide:body = </Body>
        double3 newton:guide:offset = (0, 0, 0.25)
    }
}
"""
    )
    b = populated_builder()
    result = b.add_usd(stage_from(text))
    assert result["bodies"] == {"/Body": 1, "/Frozen": -1}
    assert result["tendons"] == {"/Cable": 0}
    assert b.tendon_guide_body == [-1, 1]
    np.testing.assert_allclose(b.tendon_guide_offset[1], (0.0, 0.0, 0.25))
    assert b.shape_body[result["shapes"]["/Frozen"]] == -1


# ----------------------------------------------------------------------------------------------
# Composition errors: what a broken arc would bring in is missing, so the import says so

ARM = """#usda 1.0
def Xform "Arm"
{
    def Cube "Link" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI"]
    )
    {
        double size = 0.25
    }
}
"""
BASE = """
    def Cube "Base" (
        prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsCollisionAPI"]
    )
    {
        double size = 0.5
    }
"""
COMPOSITION = {
    # case: (layer metadata, the arc on </World/Arm>, extra prims in </World>, prim the error names)
    "missing referenced file": ("", "prepend references = @./gone.usda@</Arm>", "", "/World/Arm"),
    "missing referenced prim": ("", "prepend references = @./arm.usda@</Nope>", "", "/World/Arm"),
    "missing sublayer": ("subLayers = [@./gone_layer.usda@]", "", "", "/"),
    "missing payload": ("", "prepend payload = @./gone_payload.usda@</Arm>", "", "/World/Arm"),
    "reference cycle": (
        "",
        "prepend references = </World/Other>",
        'def Xform "Other" (prepend references = </World/Arm>) {}',
        "/World/Arm",
    ),
    "missing inherit": ("", "prepend inherits = </World/_ArmClass>", "", "/World/Arm"),
}


def composition_stage(tmp_path, case: str) -> pathlib.Path:
    meta, arc, extra, _ = COMPOSITION[case]
    (tmp_path / "arm.usda").write_text(ARM)
    main = tmp_path / "main.usda"
    main.write_text(
        f'#usda 1.0\n(\n    {meta}\n)\ndef Xform "World"\n{{\n{BASE}\n    def Xform "Arm" ({arc})\n    {{\n    }}\n'
        f"    {extra}\n}}\n"
    )
    return main


@pytest.mark.parametrize("case", sorted(COMPOSITION))
def test_composition_errors_raise_or_warn(tmp_path, case):
    """A stage that did not compose raises (naming the prim and the layer) and leaves the builder
    unchanged; with strict=False it warns (UsdCompositionWarning) and imports what did compose: the
    base body, without the arm's link."""
    from newton_tendon.usd import UsdCompositionWarning

    main = composition_stage(tmp_path, case)
    prim = COMPOSITION[case][3]
    b = populated_builder()
    snapshot = copy.deepcopy(vars(b))
    with pytest.raises(ValueError, match=rf"<{prim}>.*main\.usda.*strict=False"):
        b.add_usd(main)
    assert same(vars(b), snapshot)
    with pytest.warns(UsdCompositionWarning, match=rf"<{prim}>"):
        result = b.add_usd(main, strict=False)
    assert "/World/Base" in result["bodies"] and "/World/Arm/Link" not in result["bodies"]


def test_composed_reference_imports_without_warning(tmp_path, recwarn):
    """The same stage with its reference intact imports the arm's link, and nothing is reported."""
    (tmp_path / "arm.usda").write_text(ARM)
    main = tmp_path / "main.usda"
    arm = 'def Xform "Arm" (prepend references = @./arm.usda@</Arm>)'
    main.write_text(f'#usda 1.0\ndef Xform "World"\n{{\n{BASE}\n    {arm}\n    {{\n    }}\n}}\n')
    result = nt.ModelBuilder().add_usd(main)
    assert {"/World/Base", "/World/Arm/Link"} <= set(result["bodies"])
    assert not [w for w in recwarn if "compose" in str(w.message)]
