"""eval_fk / eval_ik for D6 joints (``add_joint_d6`` with ``ModelBuilder.JointDofConfig`` axes: up to three
linear and zero, one or three angular), and a free joint under a body or a rotated parent frame.

The free-joint round trip checks newton's convention for a free joint's ``joint_qd``, which
``eval_joint_coordinates`` (kernels/joints/coordinates.py) follows: the child's COM velocity relative to the
parent's rigid motion, and the relative angular velocity, both in the parent joint frame (the child's
world twist only for a world parent with an unrotated frame, the case tests/rigid/test_kinematics.py
covers).

Same oracles and tolerances as tests/rigid/test_kinematics.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon.kernels import types as T

from .kinematics_common import (
    POSE_TOL,
    VEL_TOL,
    add_joint,
    canonical,
    finite_difference_velocities,
    fk,
    ik,
    orthonormal_axes,
    random_body,
    random_coordinates,
    random_xform,
    reference_fk,
    same_rotation,
    xf,
)

DIMS = [(1, 0), (0, 1), (3, 0), (0, 3), (2, 1), (1, 3), (3, 3)]


def d6_scene(dim, device, seed: int = 0, worlds: int = 1):
    """A root on a revolute joint to the world and a child on a D6 joint with ``dim`` = (linear, angular)
    random orthonormal axes below it (random frames and COM offsets)."""
    rng = np.random.default_rng(seed)
    b = nt.ModelBuilder(gravity=0.0)
    root = random_body(b, rng)
    child = random_body(b, rng)
    add_joint(b, "revolute", -1, root, rng)
    cfg = nt.ModelBuilder.JointDofConfig
    b.add_joint_d6(
        root,
        child,
        linear_axes=[cfg(axis=tuple(a)) for a in orthonormal_axes(rng, dim[0])],
        angular_axes=[cfg(axis=tuple(a)) for a in orthonormal_axes(rng, dim[1])],
        parent_xform=xf(random_xform(rng)),
        child_xform=xf(random_xform(rng)),
    )
    b.add_articulation()
    if worlds == 1:
        return b.finalize(device=device)
    top = nt.ModelBuilder(gravity=0.0)
    top.replicate(b, worlds)
    return top.finalize(device=device)


def d6_coordinates(model, rng):
    """Random coordinates with D6 angles within (-1.2, 1.2) rad: inside the chart of the three-axis
    decomposition (middle angle within +-pi/2), so it reads back the same angles."""
    q, qd = random_coordinates(model, rng)
    jt = model.joint_type.numpy()
    qs = model.joint_q_start.numpy()
    dim = model.joint_dof_dim.numpy()
    for j in range(model.joint_count):
        if jt[j] == T.JOINT_D6:
            s = qs[j] + dim[j][0]
            q[s : s + dim[j][1]] = rng.uniform(-1.2, 1.2, size=dim[j][1])
    return q, qd


@pytest.mark.parametrize("dim", DIMS)
def test_d6_fk_matches_pose_formula_and_finite_differences(device, dim):
    """D6 poses: translation sum q_i a_i then rotations R(b_0, q_0) R(b_1, q_1) ... (float64 oracle);
    velocities: central differences of those poses."""
    model = d6_scene(dim, device, seed=11)
    q, qd = d6_coordinates(model, np.random.default_rng(12))
    state = fk(model, q, qd)
    want = reference_fk(model, q, model.body_q.numpy())
    got = state.body_q.numpy()
    for i in range(model.body_count):
        assert np.abs(got[i, :3] - want[i, :3]).max() < POSE_TOL
        assert same_rotation(got[i, 3:], want[i, 3:]) < POSE_TOL
    assert np.abs(state.body_qd.numpy() - finite_difference_velocities(model, q, qd)).max() < VEL_TOL


@pytest.mark.parametrize("dim", DIMS)
def test_d6_round_trips(device, dim):
    """D6: random coordinates -> fk -> ik returns them; consistent poses -> ik -> fk returns the poses."""
    model = d6_scene(dim, device, seed=13)
    rng = np.random.default_rng(14)
    for _ in range(3):
        q, qd = d6_coordinates(model, rng)
        state = fk(model, q, qd)
        q2, qd2 = ik(model, state)
        assert np.abs(q2 - q).max() < POSE_TOL, (dim, q, q2)
        assert np.abs(qd2 - qd).max() < VEL_TOL, (dim, qd, qd2)
        back = fk(model, q2, qd2)
        assert np.abs(back.body_q.numpy() - state.body_q.numpy()).max() < POSE_TOL


def test_d6_worlds(device):
    """Several worlds of a (2, 1) D6 joint: ik returns every world's coordinates after fk."""
    model = d6_scene((2, 1), device, seed=15, worlds=3)
    q, qd = d6_coordinates(model, np.random.default_rng(16))
    q2, qd2 = ik(model, fk(model, q, qd))
    assert np.abs(q2 - q).max() < POSE_TOL and np.abs(qd2 - qd).max() < VEL_TOL


@pytest.mark.parametrize("parent", ["world, rotated frame", "body"])
def test_free_joint_round_trip_in_parent_frame(device, parent):
    """A free joint with a rotated parent frame, or under a moving body: fk -> ik returns joint_qd
    (newton's parent-joint-frame convention), and fk's velocities match finite differences."""
    rng = np.random.default_rng(17)
    b = nt.ModelBuilder(gravity=0.0)
    root = random_body(b, rng)
    child = random_body(b, rng)
    if parent == "body":
        add_joint(b, "revolute", -1, root, rng)
        add_joint(b, "free", root, child, rng)
    else:
        add_joint(b, "free", -1, root, rng)
        add_joint(b, "ball", root, child, rng)
    b.add_articulation()
    model = b.finalize(device=device)
    q, qd = random_coordinates(model, np.random.default_rng(18))
    state = fk(model, q, qd)
    assert np.abs(state.body_qd.numpy() - finite_difference_velocities(model, q, qd)).max() < VEL_TOL
    q2, qd2 = ik(model, state)
    assert np.abs(canonical(model, q2) - q).max() < POSE_TOL
    assert np.abs(qd2 - qd).max() < VEL_TOL
