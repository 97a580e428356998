"""Mass properties from shapes (closed forms, parallel axis, rotation, overrides, armature), gravity and the up
axis, the ground plane, and the inversion of tiny or singular inertias.

Host-side mass properties are float64, so they are compared to the closed forms at 1e-6 relative; the Model stores
float32 (relative rounding ~6e-8), so the same 1e-6 bound holds after conversion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from newton_tendon import ModelBuilder
from newton_tendon.kernels import types as T

from .builder_common import PLANE, REL, base, close, quat, rotmat, shift_inertia, worlds


# ---------------------------------------------------------------------------------------------------------------
# Mass properties
# ---------------------------------------------------------------------------------------------------------------


def sphere_closed_form(rho, r):
    """Solid sphere: m = rho 4/3 pi r^3, I = 2/5 m r^2 about every axis."""
    m = rho * 4.0 / 3.0 * math.pi * r**3
    return m, np.eye(3) * 0.4 * m * r**2


def box_closed_form(rho, hx, hy, hz):
    """Solid box of half extents h: m = 8 rho hx hy hz, Ixx = m/12 ((2hy)^2 + (2hz)^2), and cyclic."""
    m = rho * 8.0 * hx * hy * hz
    a, b, c = 2 * hx, 2 * hy, 2 * hz
    return m, np.diag([m / 12 * (b * b + c * c), m / 12 * (a * a + c * c), m / 12 * (a * a + b * b)])


def cylinder_closed_form(rho, r, hh):
    """Solid cylinder along Z, height h = 2 hh: m = rho pi r^2 h, Ixx = Iyy = m (3 r^2 + h^2) / 12, Izz = m r^2 / 2."""
    h = 2 * hh
    m = rho * math.pi * r * r * h
    return m, np.diag([m * (3 * r * r + h * h) / 12, m * (3 * r * r + h * h) / 12, 0.5 * m * r * r])


def capsule_closed_form(rho, r, hh):
    """Capsule along Z = cylinder (height h = 2 hh) + two hemispheres of total mass m_s = rho 4/3 pi r^3.

    Izz = m_c r^2 / 2 + 2/5 m_s r^2. Ixx = m_c (3 r^2 + h^2) / 12 + m_s (2/5 r^2 + h^2/4 + 3/8 h r): each hemisphere's
    inertia about its base is 2/5 (m_s/2) r^2; moving it to the hemisphere centroid (3/8 r from the base) and then to
    the capsule centre (h/2 + 3/8 r away) by the parallel-axis theorem gives that sum.
    """
    h = 2 * hh
    mc = rho * math.pi * r * r * h
    # Hemisphere pair, term by term: about the flat face 2/5 (m_s/2) r^2 each, base at distance h/2 from the centre.
    ms = rho * 4.0 / 3.0 * math.pi * r**3
    d = 3.0 / 8.0 * r
    i_centroid = 0.4 * (ms / 2) * r * r - (ms / 2) * d * d
    ixx_caps = 2 * (i_centroid + (ms / 2) * (hh + d) ** 2)
    ixx = mc * (3 * r * r + h * h) / 12 + ixx_caps
    return mc + ms, np.diag([ixx, ixx, 0.5 * mc * r * r + 0.4 * ms * r * r])


SHAPE_MASS_CASES = [
    pytest.param(
        lambda b: b.add_shape_sphere(0, radius=0.3, density=700.0), sphere_closed_form(700.0, 0.3), id="sphere"
    ),
    pytest.param(
        lambda b: b.add_shape_box(0, hx=0.1, hy=0.25, hz=0.4, density=900.0),
        box_closed_form(900.0, 0.1, 0.25, 0.4),
        id="box",
    ),
    pytest.param(
        lambda b: b.add_shape_capsule(0, radius=0.15, half_height=0.35, density=1100.0),
        capsule_closed_form(1100.0, 0.15, 0.35),
        id="capsule",
    ),
    pytest.param(
        lambda b: b.add_shape_capsule(0, radius=0.2, half_height=0.0, density=500.0),
        sphere_closed_form(500.0, 0.2),
        id="capsule-without-segment-is-sphere",
    ),
    pytest.param(
        lambda b: b.add_shape_cylinder(0, radius=0.2, half_height=0.6, density=2700.0),
        cylinder_closed_form(2700.0, 0.2, 0.6),
        id="cylinder",
    ),
]


@pytest.mark.parametrize(("add", "expected"), SHAPE_MASS_CASES)
def test_shape_density_gives_closed_form_mass_properties(add, expected, device):
    """A shape with density on a massless body gives the closed-form mass and inertia (builder and model)."""
    b = ModelBuilder()
    b.add_body()
    add(b)
    m, inertia = expected
    assert b.body_mass[0] == pytest.approx(m, rel=REL)
    close(b.body_inertia[0], inertia)
    close(b.body_com[0], np.zeros(3))
    model = b.finalize(device=device)
    assert model.body_mass.numpy()[0] == pytest.approx(m, rel=REL)
    close(model.body_inertia.numpy()[0], inertia)
    assert model.body_inv_mass.numpy()[0] == pytest.approx(1.0 / m, rel=REL)
    close(model.body_inv_inertia.numpy()[0], np.linalg.inv(inertia))


def test_shape_offset_shifts_com_and_uses_parallel_axis():
    """A sphere offset from a massive body moves the COM to the mass-weighted mean; inertia follows parallel axes."""
    b = ModelBuilder()
    i0 = np.diag([0.1, 0.2, 0.3])
    b.add_body(mass=2.0, inertia=i0, com=(0.0, 0.0, 0.1))
    d = np.array([0.5, -0.2, 0.3])
    b.add_shape_sphere(0, xform=(*d, 0.0, 0.0, 0.0, 1.0), radius=0.1, density=1000.0)
    ms, is_ = sphere_closed_form(1000.0, 0.1)
    c0 = np.array([0.0, 0.0, 0.1])
    m = 2.0 + ms
    c = (2.0 * c0 + ms * d) / m
    expected = i0 + shift_inertia(2.0, c0 - c) + is_ + shift_inertia(ms, d - c)
    assert b.body_mass[0] == pytest.approx(m, rel=REL)
    close(b.body_com[0], c)
    close(b.body_inertia[0], expected)


def test_two_symmetric_spheres_keep_com_and_add_steiner_terms():
    """Two equal spheres at +-d put the COM at 0 and give inertia 2 I_s + 2 m (|d|^2 E - d d^T)."""
    b = ModelBuilder()
    b.add_body()
    d = np.array([0.0, 0.4, 0.0])
    b.add_shape_sphere(0, xform=(*d, 0, 0, 0, 1), radius=0.1)
    b.add_shape_sphere(0, xform=(*-d, 0, 0, 0, 1), radius=0.1)
    ms, is_ = sphere_closed_form(1000.0, 0.1)
    close(b.body_com[0], np.zeros(3))
    close(b.body_inertia[0], 2 * is_ + 2 * shift_inertia(ms, d))


def test_rotated_shape_rotates_its_inertia():
    """A box rotated by xform contributes R I R^T: 90 degrees about Z swaps Ixx and Iyy."""
    b = ModelBuilder()
    b.add_body()
    q = quat((0, 0, 1), 0.5 * math.pi)
    b.add_shape_box(0, xform=(0, 0, 0, *q), hx=0.1, hy=0.3, hz=0.2, density=500.0)
    m, i = box_closed_form(500.0, 0.1, 0.3, 0.2)
    close(b.body_inertia[0], np.diag([i[1, 1], i[0, 0], i[2, 2]]))
    r = rotmat(quat((1, 1, 0), 0.7))
    b.add_body()
    b.add_shape_box(1, xform=(0, 0, 0, *quat((1, 1, 0), 0.7)), hx=0.1, hy=0.3, hz=0.2, density=500.0)
    close(b.body_inertia[1], r @ i @ r.T)


@pytest.mark.parametrize("kind", ["sphere", "box", "capsule", "cylinder"])
def test_shape_mass_overrides_density(kind):
    """``mass=`` sets the shape's mass regardless of density; inertia scales with it."""
    b = ModelBuilder()
    b.add_body()
    add = {
        "sphere": lambda: (b.add_shape_sphere(0, radius=0.2, density=123.0, mass=2.5), sphere_closed_form(1, 0.2)),
        "box": lambda: (
            b.add_shape_box(0, hx=0.1, hy=0.2, hz=0.3, density=9.0, mass=2.5),
            box_closed_form(1, 0.1, 0.2, 0.3),
        ),
        "capsule": lambda: (
            b.add_shape_capsule(0, radius=0.1, half_height=0.2, density=0.0, mass=2.5),
            capsule_closed_form(1, 0.1, 0.2),
        ),
        "cylinder": lambda: (
            b.add_shape_cylinder(0, radius=0.1, half_height=0.2, density=1e4, mass=2.5),
            cylinder_closed_form(1, 0.1, 0.2),
        ),
    }[kind]
    _, (m_unit, i_unit) = add()
    assert b.body_mass[0] == pytest.approx(2.5, rel=REL)
    close(b.body_inertia[0], i_unit * 2.5 / m_unit)


def test_zero_density_shape_adds_no_mass():
    """A shape with density 0 (and a plane, which is massless) leaves the body's mass properties unchanged."""
    b = ModelBuilder()
    b.add_body(mass=1.0, inertia=np.eye(3), com=(0.1, 0.0, 0.0))
    b.add_shape_box(0, density=0.0, xform=(1, 1, 1, 0, 0, 0, 1))
    b.add_shape_plane(0)
    assert b.body_mass == [1.0]
    assert b.body_com == [(0.1, 0.0, 0.0)]
    np.testing.assert_array_equal(b.body_inertia[0], np.eye(3))


def test_lock_inertia_ignores_shape_mass():
    """With lock_inertia=True, shapes added later change neither mass, COM nor inertia."""
    b = ModelBuilder()
    b.add_body(mass=3.0, inertia=np.eye(3) * 0.5, com=(0.0, 0.1, 0.0), lock_inertia=True)
    b.add_shape_sphere(0, xform=(1, 0, 0, 0, 0, 0, 1), radius=0.5, density=1000.0)
    b.add_shape_box(0, mass=10.0)
    assert b.body_mass == [3.0]
    assert b.body_com == [(0.0, 0.1, 0.0)]
    np.testing.assert_array_equal(b.body_inertia[0], np.eye(3) * 0.5)


def test_world_hinge_armature_adds_to_child_inertia_about_axis(device):
    """A world hinge's armature a adds a * u u^T to the child's inertia (u: axis in the child frame;
    exact there, the joint's rate is the child's absolute rate) and leaves its coordinate row none; a
    hinge between two bodies keeps its armature on the row (joint space, as MuJoCo) and leaves the
    inertia alone. The builder is untouched."""
    b = ModelBuilder()
    b.add_body(mass=1.0, inertia=np.diag([1.0, 2.0, 3.0]))
    b.add_body(mass=1.0, inertia=np.eye(3))
    qc = quat((0, 0, 1), 0.5 * math.pi)  # joint frame x-axis is the child's y-axis
    b.add_joint_revolute(-1, 0, child_xform=(0, 0, 0, *qc), axis=(1.0, 0.0, 0.0), armature=0.5)
    b.add_joint_revolute(0, 1, axis=(0.0, 0.0, 2.0), armature=0.25)
    model = b.finalize(device=device)
    inertia = model.body_inertia.numpy()
    close(inertia[0], np.diag([1.0, 2.5, 3.0]))
    close(inertia[1], np.eye(3))
    close(model.body_inv_inertia.numpy()[0], np.diag([1.0, 1 / 2.5, 1 / 3.0]))
    close(model.joint_armature.numpy(), [0.5, 0.25])
    close(model.joint_row_armature.numpy(), [0.0, 0.25])
    np.testing.assert_array_equal(b.body_inertia[0], np.diag([1.0, 2.0, 3.0]))


def test_prismatic_and_zero_armature_leave_inertia(device):
    """Joints without revolute armature leave the model inertia equal to the builder's."""
    b = base()
    b.add_joint_prismatic(1, 2)
    model = b.finalize(device=device)
    close(model.body_inertia.numpy(), np.array(b.body_inertia))


def test_kinematic_and_massless_bodies_are_immovable(device):
    """Kinematic and zero-mass bodies get zero inverse mass and inertia; a dynamic body gets 1/m."""
    b = ModelBuilder()
    b.add_body(mass=2.0, inertia=np.eye(3), is_kinematic=True)
    b.add_body()
    b.add_body(mass=4.0, inertia=np.eye(3) * 2.0)
    model = b.finalize(device=device)
    np.testing.assert_array_equal(model.body_inv_mass.numpy(), np.array([0.0, 0.0, 0.25], dtype=np.float32))
    np.testing.assert_array_equal(model.body_inv_inertia.numpy()[:2], np.zeros((2, 3, 3)))
    close(model.body_inv_inertia.numpy()[2], np.eye(3) * 0.5)
    assert list(model.body_flags.numpy()) == [int(T.BODY_KINEMATIC), 0, 0]


# ---------------------------------------------------------------------------------------------------------------
# Gravity, up axis, ground plane
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("axis", "index"), [("X", 0), ("Y", 1), ("Z", 2)])
def test_scalar_gravity_goes_on_up_axis(axis, index):
    """A scalar gravity is placed on the up axis component."""
    g = [0.0, 0.0, 0.0]
    g[index] = -3.5
    assert ModelBuilder(up_axis=axis, gravity=-3.5).gravity == tuple(g)


def test_default_and_vector_gravity(device):
    """Default gravity is -9.81 along Z; a 3-vector is kept; the model stores one gravity per world."""
    assert ModelBuilder().gravity == (0.0, 0.0, -9.81)
    assert ModelBuilder(up_axis="Y", gravity=(1, 2, 3)).gravity == (1.0, 2.0, 3.0)
    b = worlds()
    b.gravity = (0.0, -1.0, 0.0)
    model = b.finalize(device=device)
    np.testing.assert_array_equal(model.gravity.numpy(), np.tile([0.0, -1.0, 0.0], (2, 1)).astype(np.float32))
    assert model.up_axis == 2


@pytest.mark.parametrize(("axis", "normal"), [("X", (1, 0, 0)), ("Y", (0, 1, 0)), ("Z", (0, 0, 1))])
def test_ground_plane_normal_is_up_axis(axis, normal, device):
    """add_ground_plane rotates the plane's local +Z onto the up axis and puts it at ``height`` along it."""
    b = ModelBuilder(up_axis=axis)
    s = b.add_ground_plane(height=0.7)
    model = b.finalize(device=device)
    tf = model.shape_transform.numpy()[s]
    close(rotmat(tf[3:]) @ np.array([0.0, 0.0, 1.0]), np.asarray(normal, dtype=np.float64))
    close(tf[:3], 0.7 * np.asarray(normal, dtype=np.float64))
    assert model.shape_type.numpy()[s] == PLANE
    assert model.shape_body.numpy()[s] == -1
    assert model.shape_world.numpy()[s] == -1
    assert model.shape_label[s] == "ground"


def test_ground_plane_goes_to_world_minus_one_and_restores_current_world():
    """add_ground_plane is shared (world -1) even while current_world is set, which it leaves as it was."""
    b = worlds()
    b.current_world = 1
    s = b.add_ground_plane()
    assert b.shape_world[s] == -1
    assert b.current_world == 1


# A free body with a torque tau about a principal axis spins up by omega = tau dt / I in one step
# (no gravity, no contacts). float32 storage and one integration step agree with it to ~1e-6.
SPIN_REL = 1.0e-5


@pytest.mark.parametrize("radius", [2.0e-3, 1.0e-4, 0.1])
def test_small_body_rotates_under_torque(device, solver, radius):
    """The inverse inertia of a small body is its inverse, whatever its size (relative invertibility
    rule, ``inertia.INVERTIBLE_RATIO``): a 2 mm water sphere (det I = 1.5e-31 kg^3 m^6) had a zero
    inverse inertia under the old absolute bound det > 1e-30 and did not turn under any torque."""
    from ..helpers import Sim

    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    body = b.add_body(label="bead")
    b.add_shape_sphere(body, radius=radius, density=1000.0)
    m = 1000.0 * 4.0 / 3.0 * math.pi * radius**3
    inertia = 0.4 * m * radius**2
    sim = Sim(b, device, contacts=False, solver=solver)
    close(sim.model.body_inv_inertia.numpy()[0], np.eye(3) / inertia)
    dt = 1.0e-3
    tau = 10.0 * inertia  # 10 rad/s^2
    f = np.zeros((1, 6), dtype=np.float32)
    f[0, 5] = tau
    sim.state_0.body_f.assign(f)
    sim.step(dt)
    omega = sim.body_qd()[0, 3:]
    np.testing.assert_allclose(omega, [0.0, 0.0, tau * dt / inertia], rtol=SPIN_REL, atol=1e-9)


def test_singular_inertia_stays_uninverted_at_any_rotation():
    """A rod with no moment about its axis (principal moments (1, 1, 0) kg m^2), rotated off the
    axes, keeps a zero inverse inertia (rounding of the rotated matrix must not give it an inverse of
    ~1e16 about that axis) while a 2 mm sphere's tiny but regular inertia is inverted: the rule
    compares the smallest principal moment with the largest, far above eigenvalue rounding (~1e-16
    of the largest)."""
    from newton_tendon.inertia import inverse_mass_arrays, quat_to_matrix

    r = quat_to_matrix((0.3, -0.5, 0.2, math.sqrt(1.0 - 0.38)))
    rod = r @ np.diag([1.0, 1.0, 0.0]) @ r.T
    tiny = np.eye(3) * 5.4e-11  # a 2 mm water sphere
    inv_mass, inv_inertia = inverse_mass_arrays([1.0, 3.4e-5], np.stack([rod, tiny]), [True, True])
    np.testing.assert_array_equal(inv_inertia[0], np.zeros((3, 3)))
    close(inv_inertia[1], np.eye(3) / 5.4e-11)
    close(inv_mass, [1.0, 1.0 / 3.4e-5])
