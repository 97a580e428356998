"""Worlds (``add_world``, ``replicate``, nested builders, what ``finalize`` copies) and graph colouring by
``ModelBuilder.color``."""

from __future__ import annotations

import math

import numpy as np

from newton_tendon import ModelBuilder

from .builder_common import base, close, dynamic_body, qmul, quat, rotmat, same_rotation, worlds


# ---------------------------------------------------------------------------------------------------------------
# Worlds
# ---------------------------------------------------------------------------------------------------------------


def two_link_sub() -> ModelBuilder:
    """A sub-scene: a root body hinged to the world at (0,0,1), a child hinged to it, a shape each, one articulation."""
    s = ModelBuilder()
    r = s.add_body(
        xform=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        mass=1.0,
        inertia=np.eye(3),
        label="root",
        velocity=(1.0, 0.0, 0.0, 0.0, 0.0, 2.0),
    )
    c = s.add_body(xform=(1.0, 0.0, -1.0, *quat((1, 0, 0), 0.3)), mass=1.0, inertia=np.eye(3), label="tip")
    s.add_shape_sphere(r, radius=0.1, label="ball")
    s.add_shape_box(c, xform=(0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 1.0), label="block")
    s.add_shape_sphere(-1, xform=(0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0), label="post")
    s.add_joint_revolute(-1, r, parent_xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), label="shoulder")
    s.add_joint_revolute(r, c, parent_xform=(0.0, 0.0, -0.5, 0.0, 0.0, 0.0, 1.0), label="elbow")
    s.add_articulation(label="arm")
    s.add_shape_collision_filter_pair(0, 2)
    return s


def test_add_world_remaps_indices_worlds_and_labels():
    """add_world appends a world: indices shift by the existing counts, worlds are new, labels get world_<i>/."""
    b = ModelBuilder()
    b.add_ground_plane()
    sub = two_link_sub()
    assert b.add_world(sub) == 0
    assert b.add_world(sub) == 1
    assert b.world_count == 2
    assert b.body_label == ["world_0/root", "world_0/tip", "world_1/root", "world_1/tip"]
    assert b.shape_label == [
        "ground",
        "world_0/ball",
        "world_0/block",
        "world_0/post",
        "world_1/ball",
        "world_1/block",
        "world_1/post",
    ]
    assert b.joint_label == ["world_0/shoulder", "world_0/elbow", "world_1/shoulder", "world_1/elbow"]
    assert b.articulation_label == ["world_0/arm", "world_1/arm"]
    assert b.body_world == [0, 0, 1, 1]
    assert b.shape_world == [-1, 0, 0, 0, 1, 1, 1]
    assert b.joint_world == [0, 0, 1, 1]
    assert b.shape_body == [-1, 0, 1, -1, 2, 3, -1]
    assert b.joint_parent == [-1, 0, -1, 2]
    assert b.joint_child == [0, 1, 2, 3]
    assert b.articulation_start == [0, 2]
    assert b.articulation_joint_end == 4
    assert b.shape_filter_pairs == {(1, 3), (4, 6)}
    assert b.body_filter_pairs == {(0, 1), (2, 3)}
    assert b.joint_dof_count == 4
    # the sub-builder itself is not modified
    assert sub.body_label == ["root", "tip"] and sub.world_count == 0


def test_add_world_places_bodies_static_shapes_and_world_joints():
    """add_world's xform moves body poses, rotates velocities, and places static shapes and parent -1 joint frames."""
    sub = two_link_sub()
    q = quat((0, 0, 1), 0.5 * math.pi)
    xf = (1.0, 2.0, 3.0, *q)
    b = ModelBuilder()
    b.add_world(sub, xf)
    r = rotmat(q)
    close(b.body_q[0][:3], np.array([1.0, 2.0, 3.0]) + r @ np.array([1.0, 0.0, 0.0]))
    close(b.body_q[1][:3], np.array([1.0, 2.0, 3.0]) + r @ np.array([1.0, 0.0, -1.0]))
    # Body poses are float32 wp.transform values (newton's convention): 2 ulp of a unit quaternion.
    assert same_rotation(b.body_q[0][3:], q, tol=1.2e-7)
    assert same_rotation(b.body_q[1][3:], qmul(q, quat((1, 0, 0), 0.3)), tol=1.2e-7)
    close(b.body_qd[0], [0.0, 1.0, 0.0, 0.0, 0.0, 2.0])
    close(b.body_qd[1], np.zeros(6))
    # shapes on bodies stay relative to their body; static shapes are placed
    assert b.shape_transform[0] == sub.shape_transform[0]
    assert b.shape_transform[1] == sub.shape_transform[1]
    close(b.shape_transform[2][:3], np.array([1.0, 2.0, 3.0]) + r @ np.array([0.0, 2.0, 0.0]))
    # parent -1 joint frame is placed, a body-to-body joint frame is not
    close(b.joint_X_p[0][:3], [1.0, 2.0, 4.0])
    assert same_rotation(b.joint_X_p[0][3:], q)
    assert b.joint_X_p[1] == sub.joint_X_p[1]
    assert b.joint_X_c == sub.joint_X_c


def test_replicate_lays_worlds_on_a_grid():
    """replicate(n, spacing) adds n worlds offset by spacing on a square grid (cube when spacing z != 0)."""
    sub = ModelBuilder()
    dynamic_body(sub, (0.0, 0.0, 1.0))
    b = ModelBuilder()
    b.replicate(sub, 4, spacing=(2.0, 3.0, 0.0))
    assert b.world_count == 4 and b.body_world == [0, 1, 2, 3]
    positions = [tuple(q[:3]) for q in b.body_q]
    assert positions == [(0.0, 0.0, 1.0), (2.0, 0.0, 1.0), (0.0, 3.0, 1.0), (2.0, 3.0, 1.0)]
    assert b.body_label == [f"world_{i}/body_0" for i in range(4)]
    c = ModelBuilder()
    c.replicate(sub, 8, spacing=(1.0, 1.0, 1.0))
    assert tuple(c.body_q[7][:3]) == (1.0, 1.0, 2.0)


def test_replicate_after_existing_worlds_continues_numbering():
    """A second replicate continues world indices and label prefixes after the existing worlds."""
    b = worlds()
    sub = ModelBuilder()
    dynamic_body(sub)
    b.replicate(sub, 2)
    assert b.world_count == 4
    assert b.body_world == [0, 1, 2, 3]
    assert b.body_label[2:] == ["world_2/body_0", "world_3/body_0"]


def test_add_builder_into_existing_world_and_nested_worlds():
    """add_builder(world=w) puts the other's loose entities in w; the other's own worlds are appended after."""
    b = worlds()
    extra = ModelBuilder()
    dynamic_body(extra)
    b.add_builder(extra, world=1, label_prefix="x/")
    assert b.body_world == [0, 1, 1]
    assert b.body_label[-1] == "x/body_0"
    assert b.world_count == 2
    nested = worlds()
    b.add_builder(nested)
    assert b.world_count == 4
    assert b.body_world[3:] == [2, 3]


def test_finalize_without_worlds_is_one_world(device):
    """A builder without worlds finalizes as world_count 1 with bodies, joints, body shapes in 0 and ground in -1."""
    b = base()
    g = b.add_ground_plane()
    b.add_shape_sphere(-1, xform=(5, 0, 0, 0, 0, 0, 1))
    model = b.finalize(device=device)
    assert model.world_count == 1
    assert list(model.body_world.numpy()) == [0, 0, 0]
    assert list(model.joint_world.numpy()) == [0, 0]
    sw = model.shape_world.numpy()
    assert list(sw[:2]) == [0, 0]
    assert sw[g] == -1 and sw[-1] == -1
    assert model.gravity.shape == (1,)
    assert model.body_label == b.body_label


def test_finalize_copies_builder_topology(device):
    """The model's counts and index arrays equal the builder's lists."""
    b = base()
    b.add_articulation()
    model = b.finalize(device=device)
    assert (model.body_count, model.shape_count, model.joint_count) == (3, 2, 2)
    assert list(model.joint_parent.numpy()) == [-1, 0] and list(model.joint_child.numpy()) == [0, 1]
    assert list(model.joint_q_start.numpy()) == [0, 7, 8]
    assert list(model.joint_qd_start.numpy()) == [0, 6, 7]
    assert (model.joint_coord_count, model.joint_dof_count) == (8, 7)
    assert list(model.articulation_start.numpy()) == [0, 2]
    assert list(model.shape_body.numpy()) == [0, 1]
    close(model.body_qd.numpy()[1], [1.0, 0.0, 0.0, 0.0, 0.0, 1.0])


# ---------------------------------------------------------------------------------------------------------------
# Colouring
# ---------------------------------------------------------------------------------------------------------------


def test_color_separates_jointed_bodies():
    """After color(), the two bodies of every body-to-body joint have different colours."""
    b = ModelBuilder()
    for _ in range(6):
        b.add_body()
    for p, c in ((0, 1), (0, 2), (0, 3), (1, 2), (3, 4), (2, 4)):
        b.add_joint_ball(p, c)
    b.add_joint_free(5)
    n = b.color()
    assert n == max(b.body_color) + 1
    for p, c in zip(b.joint_parent, b.joint_child, strict=True):
        if p >= 0:
            assert b.body_color[p] != b.body_color[c]


def test_chain_of_five_uses_two_colours(device):
    """A chain of 5 links uses 2 alternating colours, and model.body_color reflects them."""
    b = ModelBuilder()
    for _ in range(5):
        dynamic_body(b)
    b.add_joint_revolute(-1, 0)
    for i in range(4):
        b.add_joint_revolute(i, i + 1)
    assert b.color() == 2
    assert all(b.body_color[i] != b.body_color[i + 1] for i in range(4))
    model = b.finalize(device=device)
    assert list(model.body_color.numpy()) == b.body_color
    assert model.body_color_count == 2


def test_adding_a_body_invalidates_colours(device):
    """Adding a body or joint after color() clears the colouring; the model then reports colours -1 and count 0."""
    b = ModelBuilder()
    b.add_body()
    b.add_body()
    b.color()
    b.add_joint_fixed(0, 1)
    assert b.body_color is None
    model = b.finalize(device=device)
    assert list(model.body_color.numpy()) == [-1, -1]
    assert model.body_color_count == 0
    assert ModelBuilder().color() == 0
