"""World authoring under newton's names: ``begin_world``/``end_world``, ``add_world(label_prefix=)``,
``replicate(xforms=, label_prefixes=, copy_count=)``, body poses stored as ``wp.transform`` values, and the
rule that a world guide (body -1) belongs to the world being authored."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from newton_tendon import ModelBuilder, TendonGuide
from newton_tendon.exceptions import BuilderStateError

from .builder_common import quat

POSE_ATOL = 1.0e-6
"""[m] Builder poses are float32: 1e-6 m is ~8 ulp at the few-metre positions used here."""


def one_body(label="b", **kw) -> ModelBuilder:
    b = ModelBuilder()
    b.add_body(xform=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3), label=label, **kw)
    return b


def test_begin_world_assigns_entities_and_counts_worlds():
    """Entities added between begin_world and end_world belong to that world; afterwards to world -1."""
    b = ModelBuilder()
    assert b.begin_world() == 0
    a = b.add_body(mass=1.0, inertia=np.eye(3))
    b.add_shape_sphere(a, radius=0.1)
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=a)])
    b.end_world()
    assert b.begin_world(label="second") == 1
    c = b.add_body(mass=1.0, inertia=np.eye(3))
    b.end_world()
    b.add_ground_plane()
    assert b.world_count == 2
    assert b.body_world == [0, 1] and b.shape_world[:1] == [0] and b.shape_world[-1] == -1
    assert b.tendon_world == [0]
    assert b.current_world == -1 and c == 1
    m = b.finalize("cpu")
    assert m.world_count == 2
    np.testing.assert_array_equal(m.body_world.numpy(), [0, 1])


def test_begin_world_then_add_world_numbers_worlds_in_order():
    """begin_world and add_world share one world counter."""
    b = ModelBuilder()
    b.begin_world()
    b.add_body(mass=1.0, inertia=np.eye(3))
    b.end_world()
    assert b.add_world(one_body()) == 1
    assert b.body_world == [0, 1]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda b: (b.begin_world(), b.begin_world()), r"begin_world: world 0 is still open; worlds do not nest"),
        (lambda b: b.end_world(), r"end_world: no world is open"),
        (lambda b: (b.begin_world(), b.add_world(one_body())), r"add_world: world 0 is open"),
        (lambda b: (b.begin_world(), b.replicate(one_body(), 2)), r"replicate: world 0 is open"),
    ],
)
def test_world_context_misuse_raises(call, match):
    """Nesting or closing no world raises a ValueError that is also newton's RuntimeError."""
    b = ModelBuilder()
    with pytest.raises(BuilderStateError, match=match) as info:
        call(b)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(label=3), TypeError, r"begin_world: label must be a str"),
        (dict(attributes={"a": 1}), ValueError, r"begin_world: per-world attributes are not supported"),
        (dict(gravity=(0.0, 0.0, 0.0)), ValueError, r"begin_world: per-world gravity is not supported"),
    ],
)
def test_begin_world_rejects_unsupported_arguments(kwargs, exc, match):
    """newton's per-world attributes and gravity are refused by name, and the builder is unchanged."""
    b = ModelBuilder()
    with pytest.raises(exc, match=match):
        b.begin_world(**kwargs)
    assert b.world_count == 0 and b.current_world == -1


def test_add_world_label_prefix_joins_with_a_slash():
    """label_prefix goes before every label joined by "/"; None gives world_<i>/; "" keeps labels."""
    b = ModelBuilder()
    b.add_world(one_body(), label_prefix="left")
    b.add_world(one_body(), label_prefix="right/")
    b.add_world(one_body())
    b.add_world(one_body(), label_prefix="")
    assert b.body_label == ["left/b", "right/b", "world_2/b", "b"]


def test_add_world_label_prefix_must_be_a_string():
    b = ModelBuilder()
    with pytest.raises(TypeError, match=r"add_world: label_prefix must be a str"):
        b.add_world(one_body(), label_prefix=3)
    assert b.world_count == 0 and b.body_count == 0


def test_replicate_places_copies_by_xforms():
    """Each copy is placed by its own transform: bodies and world guides move with it; spacing is ignored."""
    src = one_body()
    src.add_tendon([TendonGuide(body=-1, offset=(0.0, 1.0, 0.0)), TendonGuide(body=0)])
    q = quat((0, 0, 1), 0.5 * np.pi)
    xforms = [wp.transform((0.0, 0.0, 2.0), q), wp.transform_identity()]
    b = ModelBuilder()
    b.replicate(src, 2, spacing=(100.0, 0.0, 0.0), xforms=xforms)
    assert b.world_count == 2
    # Body at x = 1, rotated a quarter turn about z, then lifted 2: (0, 1, 2).
    np.testing.assert_allclose(b.body_q[0][:3], (0.0, 1.0, 2.0), atol=POSE_ATOL)
    np.testing.assert_allclose(b.body_q[1][:3], (1.0, 0.0, 0.0), atol=POSE_ATOL)
    np.testing.assert_allclose(b.tendon_guide_offset[0], (-1.0, 0.0, 2.0), atol=1e-12)
    np.testing.assert_allclose(b.tendon_guide_offset[2], (0.0, 1.0, 0.0), atol=1e-12)
    assert b.tendon_world == [0, 1]


def test_replicate_copy_count_and_label_prefixes():
    """copy_count is newton's name for world_count; label_prefixes give one prefix per copy."""
    b = ModelBuilder()
    b.replicate(one_body(), copy_count=3, label_prefixes=["a", None, ""])
    assert b.body_label == ["a/b", "world_1/b", "b"]


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(world_count=2, copy_count=2), TypeError, r"replicate: give the number of copies once"),
        (dict(), TypeError, r"replicate: give the number of copies once"),
        (dict(copy_count=0), ValueError, r"replicate: copy_count must be >= 1"),
        (dict(world_count=2, xforms=[None]), ValueError, r"replicate: xforms has 1 transforms for 2 copies"),
        (dict(world_count=1, xforms=5), TypeError, r"replicate: xforms must be a sequence"),
        (dict(world_count=1, xforms=[(0.0, 0.0)]), ValueError, r"replicate: xforms\[0\] must have 7 components"),
        (dict(world_count=2, label_prefixes=["a"]), ValueError, r"replicate: label_prefixes has 1 entries"),
        (dict(world_count=1, label_prefixes="a"), TypeError, r"replicate: label_prefixes must be a sequence"),
        (dict(world_count=1, label_prefixes=[3]), TypeError, r"replicate: label_prefixes\[0\] must be a str"),
    ],
)
def test_replicate_rejects_bad_placement_arguments(kwargs, exc, match):
    """A bad count, xforms or label_prefixes raises naming the argument, before anything is added."""
    b = ModelBuilder()
    with pytest.raises(exc, match=match):
        b.replicate(one_body(), **kwargs)
    assert b.world_count == 0 and b.body_count == 0


def test_body_poses_are_warp_transforms():
    """builder.body_q holds wp.transform values that Warp's builtins take, as newton code expects."""
    b = one_body()
    placed = ModelBuilder()
    xf = wp.transform((0.0, 2.0, 0.0), wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.3))
    placed.add_builder(b, xform=xf)
    assert isinstance(b.body_q[0], wp.transform) and isinstance(placed.body_q[0], wp.transform)
    expected = wp.transform_multiply(xf, b.body_q[0])
    np.testing.assert_allclose(placed.body_q[0], expected, atol=POSE_ATOL)
    # Adding without a transform copies the pose: the two builders never share a value.
    same = ModelBuilder()
    same.add_builder(b)
    assert same.body_q[0] is not b.body_q[0]
    # A pose read from the builder is accepted back as a joint frame.
    j = placed.add_joint_fixed(-1, 0, parent_xform=placed.body_q[0])
    np.testing.assert_allclose(placed.joint_X_p[j], placed.body_q[0], atol=0.0)


def test_world_guide_belongs_to_the_current_world():
    """A route mixing a world guide and bodies of world 0 must be authored inside world 0 (newton's rule)."""
    b = ModelBuilder()
    b.add_world(one_body())
    with pytest.raises(ValueError, match=r"guide 1: a world guide \(body -1\) is in the current world -1.*same world"):
        b.add_tendon([TendonGuide(body=0), TendonGuide(body=-1, offset=(0.0, 1.0, 0.0))])
    assert b.tendon_count == 0
    b.current_world = 0
    assert b.add_tendon([TendonGuide(body=0), TendonGuide(body=-1, offset=(0.0, 1.0, 0.0))]) == 0
    assert b.tendon_world == [0]


def test_static_body_outside_worlds_is_shared():
    """A static body (mass 0) added outside begin_world is shared static geometry, as in newton; a moving one
    outside every world is still rejected at finalize."""
    b = ModelBuilder()
    b.add_body(mass=0.0, label="post")
    b.begin_world()
    b.add_body(mass=1.0, inertia=np.eye(3))
    b.end_world()
    m = b.finalize("cpu")
    np.testing.assert_array_equal(m.body_world.numpy(), [-1, 0])
    b.add_body(mass=1.0, inertia=np.eye(3), label="loose")
    with pytest.raises(ValueError, match=r"finalize: body 'loose' \(index 2\) moves but belongs to no world"):
        b.finalize("cpu")


def test_replicate_into_one_world():
    """separate_worlds=False (newton's option) adds every copy to the current world, placed by spacing."""
    b = ModelBuilder()
    b.begin_world()
    b.replicate(one_body(), 3, spacing=(0.0, 2.0, 0.0), separate_worlds=False, label_prefixes=["a", "b", "c"])
    b.end_world()
    assert b.world_count == 1 and b.body_world == [0, 0, 0]
    assert b.body_label == ["a/b", "b/b", "c/b"]
    # Three copies on a 2 x 2 grid (x index first): rows y = 0, 0, 2.
    np.testing.assert_allclose([q[1] for q in b.body_q], [0.0, 0.0, 2.0], atol=POSE_ATOL)
    with pytest.raises(TypeError, match=r"replicate: separate_worlds must be a bool"):
        b.replicate(one_body(), 1, separate_worlds="no")


def test_add_builder_label_prefix_none_means_none():
    b = ModelBuilder()
    b.add_builder(one_body(), label_prefix=None)
    assert b.body_label == ["b"]
