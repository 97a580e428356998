"""``newton_tendon.Axis`` (newton's axis enum) and where the builder takes it: ``ModelBuilder(up_axis=)``
and the joint ``axis=`` arguments (issue 26).

The enum is exact bookkeeping, not numerics: members are the ints 0, 1, 2 and convert to exact unit
vectors, so every check here is an equality (bitwise for the finalized float32 arrays), no tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon import Axis, ModelBuilder

from ..helpers import Sim

UNIT = {Axis.X: (1.0, 0.0, 0.0), Axis.Y: (0.0, 1.0, 0.0), Axis.Z: (0.0, 0.0, 1.0)}


# ---------------------------------------------------------------------------------------------------------------
# The enum


def test_axis_is_exported_and_its_members_are_the_ints_0_1_2():
    """Axis.X/Y/Z are the ints 0/1/2 (they index a 3-vector), and the package exports the enum."""
    assert "Axis" in nt.__all__ and nt.Axis is Axis
    assert [int(a) for a in Axis] == [0, 1, 2]
    assert [a.name for a in Axis] == ["X", "Y", "Z"]
    assert isinstance(Axis.Z, int) and Axis.Z == 2 and Axis.Y != 2
    assert [7, 8, 9][Axis.Y] == 8


def test_axis_compares_with_its_letter_and_prints_as_it():
    """An axis equals its letter in either case, prints as the letter and hashes like it."""
    for a in Axis:
        assert a == a.name and a == a.name.lower() and a.name == a
        assert a != "W" and a != "XY"
        assert str(a) == a.name and repr(a) == f"Axis.{a.name}"
        assert {a.name: 1}[a] == 1
    assert Axis.X != Axis.Y and Axis.X == Axis.X
    assert Axis.X != 0.5 and Axis.Z == np.int64(2)


@pytest.mark.parametrize("axis", list(Axis))
def test_axis_unit_vectors(axis):
    """to_vector() is the exact unit tuple of floats; to_vec3() the same as a wp.vec3."""
    v = axis.to_vector()
    assert v == UNIT[axis] and all(type(c) is float for c in v)
    assert tuple(axis.to_vec3()) == UNIT[axis] and isinstance(axis.to_vec3(), wp.vec3)


def test_axis_from_any_accepts_member_letter_and_int():
    """from_any takes an Axis, a letter in either case, or a (NumPy) int 0..2; from_string the letters."""
    for a in Axis:
        assert Axis.from_any(a) is a
        assert Axis.from_any(a.name) is a and Axis.from_any(a.name.lower()) is a
        assert Axis.from_any(int(a)) is a and Axis.from_any(np.int32(int(a))) is a
        assert Axis.from_string(a.name.lower()) is a


@pytest.mark.parametrize(
    ("value", "exc", "rule"),
    [
        ("W", ValueError, "'X', 'Y' or 'Z'"),
        ("", ValueError, "'X', 'Y' or 'Z'"),
        (3, ValueError, "0 (X), 1 (Y) or 2 (Z)"),
        (-1, ValueError, "0 (X), 1 (Y) or 2 (Z)"),
        (True, TypeError, "got bool"),
        (1.0, TypeError, "got float"),
        (None, TypeError, "got NoneType"),
        ((0, 0, 1), TypeError, "got tuple"),
    ],
)
def test_axis_from_any_rejects_other_values(value, exc, rule):
    """A letter or int that names no axis is a ValueError; any other type (bool included) a TypeError."""
    with pytest.raises(exc, match="Axis: axis must be") as info:
        Axis.from_any(value)
    assert rule in str(info.value)


def test_axis_from_string_rejects_a_non_str():
    """from_string takes only a str."""
    with pytest.raises(TypeError, match=r"Axis: axis must be an axis name \(a str\)"):
        Axis.from_string(2)


@pytest.mark.parametrize(("a", "b"), [(Axis.X, Axis.Z), (Axis.Z, Axis.Y), (Axis.Y, Axis.X), (Axis.Z, Axis.Z)])
def test_quat_between_axes_turns_one_axis_onto_the_other(a, b):
    """quat_between_axes(a, b) rotates a's unit vector onto b's (float32 quaternion: 1e-6 covers
    its rounding, ~6e-8 per component)."""
    q = a.quat_between_axes(b)
    assert math.isclose(float(wp.length(q)), 1.0, abs_tol=1.0e-6)
    np.testing.assert_allclose(np.array(wp.quat_rotate(q, a.to_vec3())), UNIT[b], atol=1.0e-6)


# ---------------------------------------------------------------------------------------------------------------
# ModelBuilder(up_axis=)


@pytest.mark.parametrize("axis", list(Axis))
@pytest.mark.parametrize("form", ["member", "upper", "lower", "int"])
def test_up_axis_takes_every_form_and_gravity_follows_it(axis, form, device):
    """up_axis given as an Axis, its letter or its int is stored as the Axis; the default gravity is
    -9.81 m/s^2 along it, and the finalized model holds that axis and that gravity per world."""
    value = {"member": axis, "upper": axis.name, "lower": axis.name.lower(), "int": int(axis)}[form]
    b = ModelBuilder(up_axis=value)
    assert b.up_axis is axis
    g = [0.0, 0.0, 0.0]
    g[axis] = -9.81
    assert b.gravity == tuple(g)
    model = b.finalize(device=device)
    assert model.up_axis is axis and model.up_axis == int(axis)
    np.testing.assert_array_equal(model.gravity.numpy(), np.array([g], dtype=np.float32))


def test_up_axis_gravity_vector_is_kept_as_given():
    """A 3-vector gravity is used as given whatever the up axis; a scalar goes on the up axis, and
    None (newton's default) means -9.81 along it."""
    assert ModelBuilder(up_axis=Axis.X, gravity=(0.0, 0.0, -1.0)).gravity == (0.0, 0.0, -1.0)
    assert ModelBuilder(up_axis=Axis.X, gravity=-2.0).gravity == (-2.0, 0.0, 0.0)
    assert ModelBuilder(up_axis=Axis.Y, gravity=None).gravity == (0.0, -9.81, 0.0)


@pytest.mark.parametrize("axis", list(Axis))
def test_ground_plane_and_save_round_trip_follow_an_enum_up_axis(axis, tmp_path):
    """The ground plane made under an Axis up axis is the one made under its letter, and a saved
    builder reloads with the same Axis."""
    by_enum, by_letter = ModelBuilder(up_axis=axis), ModelBuilder(up_axis=axis.name)
    by_enum.add_ground_plane(0.25)
    by_letter.add_ground_plane(0.25)
    assert by_enum.shape_transform == by_letter.shape_transform
    path = tmp_path / "scene.json"
    nt.save(by_enum, path)
    assert nt.load(path).up_axis is axis


@pytest.mark.parametrize(
    ("value", "exc"),
    [(None, TypeError), (2.0, TypeError), (True, TypeError), (["Z"], TypeError), (3, ValueError), ("W", ValueError)],
)
def test_up_axis_rejects_other_values(value, exc):
    """ModelBuilder(up_axis=) raises naming ModelBuilder, up_axis and the accepted forms."""
    with pytest.raises(exc, match=r"ModelBuilder: up_axis must be"):
        ModelBuilder(up_axis=value)


# ---------------------------------------------------------------------------------------------------------------
# Joint axis=


def _joint_scene(kind: str, axis) -> ModelBuilder:
    b = ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3).tolist())
    add = b.add_joint_revolute if kind == "revolute" else b.add_joint_prismatic
    add(-1, body, axis=axis)
    return b


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
@pytest.mark.parametrize("axis", list(Axis))
def test_joint_axis_enum_equals_its_vector_bitwise(kind, axis, device):
    """axis=Axis.Y (or "y", or 1) finalizes to the same float32 bits in model.joint_axis as (0, 1, 0)."""
    ref = _joint_scene(kind, UNIT[axis]).finalize(device=device).joint_axis.numpy().tobytes()
    for value in (axis, axis.name.lower(), int(axis)):
        got = _joint_scene(kind, value).finalize(device=device).joint_axis.numpy().tobytes()
        assert got == ref, (kind, value)


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
@pytest.mark.parametrize(
    ("value", "exc", "rule"),
    [
        (True, TypeError, "must be an Axis, 'X'/'Y'/'Z', 0/1/2 or three numbers"),
        (2.5, TypeError, "must be a sequence of three numbers"),
        (3, ValueError, "0 (X), 1 (Y) or 2 (Z)"),
        ("W", ValueError, "'X', 'Y' or 'Z'"),
        ((0.0, 0.0, 0.0), ValueError, "must be nonzero"),
    ],
)
def test_joint_axis_rejects_other_values(kind, value, exc, rule):
    """A bad joint axis raises naming the call and the rule, and adds nothing to the builder."""
    b = ModelBuilder()
    body = b.add_body(mass=1.0, inertia=np.eye(3).tolist())
    add = b.add_joint_revolute if kind == "revolute" else b.add_joint_prismatic
    with pytest.raises(exc) as info:
        add(-1, body, axis=value)
    msg = str(info.value)
    assert f"add_joint_{kind}" in msg and "axis" in msg and rule in msg, msg
    assert b.joint_count == 0


@pytest.mark.parametrize("axis", list(Axis))
def test_a_free_body_falls_along_minus_up_axis(axis, solver, device):
    """With up_axis=axis and the default gravity, a free body (no joints, no contacts) has after one
    step the velocity v = g dt = -9.81 dt along ``axis`` and none across it (semi-implicit Euler of
    free fall; float32 state: 1e-5 relative covers its rounding, the other components stay 0)."""
    b = ModelBuilder(up_axis=axis)
    b.add_body(xform=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3).tolist())
    sim = Sim(b, device, contacts=False, solver=solver)
    dt = 0.01
    sim.step(dt)
    v = sim.body_qd()[0, :3]
    expected = np.zeros(3)
    expected[axis] = -9.81 * dt
    np.testing.assert_allclose(v, expected, rtol=1.0e-5, atol=1.0e-12)
