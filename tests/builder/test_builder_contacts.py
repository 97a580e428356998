"""Contact pairs and slots built by ``finalize``: worlds, joint filters, collision groups, moving bodies, type
order, the body-slot CSR, and a reference enumeration on random and edge scenes."""

from __future__ import annotations

import numpy as np
import pytest

from newton_tendon import ModelBuilder
from newton_tendon.kernels.collide import pair_contact_capacity

from .builder_common import BOX, CAPSULE, CYLINDER, PLANE, SPHERE, dynamic_body, pairs_of, worlds


# ---------------------------------------------------------------------------------------------------------------
# Contact pairs and slots
# ---------------------------------------------------------------------------------------------------------------


def test_bodies_of_different_worlds_never_pair(device):
    """Overlapping bodies in different worlds form no pair; each pairs only with the shared ground."""
    sub = ModelBuilder()
    dynamic_body(sub, (0.0, 0.0, 0.1))
    sub.add_shape_sphere(0, radius=0.5)
    dynamic_body(sub, (0.0, 0.0, 0.2))
    sub.add_shape_box(1)
    b = ModelBuilder()
    g = b.add_ground_plane()
    b.replicate(sub, 3)
    model = b.finalize(device=device)
    sw = model.shape_world.numpy()
    pairs = pairs_of(model)
    for a, c in pairs:
        assert a == g or c == g or sw[a] == sw[c]
    # per world: ground-sphere, ground-box, sphere-box
    assert len(pairs) == 9
    assert model.world_count == 3


def test_joint_filters_parent_child_contacts_unless_disabled(device):
    """Bodies joined by a joint do not pair by default, and do with collision_filter_parent=False."""
    for flag, expected in ((True, set()), (False, {(0, 1)})):
        b = ModelBuilder()
        dynamic_body(b)
        dynamic_body(b)
        b.add_shape_sphere(0)
        b.add_shape_sphere(1)
        b.add_joint_ball(0, 1, collision_filter_parent=flag)
        assert pairs_of(b.finalize(device=device)) == expected


def test_collision_groups_and_filter_pairs(device):
    """newton's group rule: a positive group pairs with itself and negatives, a negative group with all but
    itself, group 0 with nothing; a filter pair removes exactly that pair."""
    b = ModelBuilder()
    for _ in range(5):
        dynamic_body(b)
    b.add_shape_sphere(0, collision_group=2)
    b.add_shape_sphere(1, collision_group=2)
    b.add_shape_sphere(2, collision_group=3)
    b.add_shape_sphere(3, collision_group=-1)
    b.add_shape_sphere(4, collision_group=0)
    expected = {(0, 1), (0, 3), (1, 3), (2, 3)}
    assert pairs_of(b.finalize(device=device)) == expected
    b.add_shape_collision_filter_pair(3, 1)
    assert b.shape_filter_pairs == {(1, 3)}
    assert pairs_of(b.finalize(device=device)) == expected - {(1, 3)}


def test_collision_group_rule_pair_table(device):
    """Every pair of groups in {-2, -1, 0, 1, 2} against newton's table (row: shape a, column: shape b;
    1 = the two shapes pair). The rule is symmetric."""
    groups = (-2, -1, 0, 1, 2)
    table = {  # newton's test_group_pair, written out
        -2: (0, 1, 0, 1, 1),
        -1: (1, 0, 0, 1, 1),
        0: (0, 0, 0, 0, 0),
        1: (1, 1, 0, 1, 0),
        2: (1, 1, 0, 0, 1),
    }
    for ga in groups:
        for gc, want in zip(groups, table[ga], strict=True):
            b = ModelBuilder()
            dynamic_body(b)
            dynamic_body(b)
            b.add_shape_sphere(0, collision_group=ga)
            b.add_shape_sphere(1, collision_group=gc)
            got = b.finalize(device=device).shape_contact_pair_count
            assert got == want, f"groups {ga}, {gc}: {got} pairs, newton's rule gives {want}"


def test_only_pairs_with_a_moving_body_collide(device):
    """Shapes of one body, static-static and kinematic-static shapes never pair; has_collision=False is skipped."""
    b = ModelBuilder()
    dynamic_body(b)
    b.add_body(mass=1.0, inertia=np.eye(3), is_kinematic=True)
    b.add_shape_sphere(0)  # 0
    b.add_shape_box(0)  # 1, same body as 0
    b.add_shape_sphere(1)  # 2, kinematic
    b.add_shape_sphere(-1)  # 3, static
    b.add_ground_plane()  # 4, static
    b.add_shape_sphere(0, has_collision=False)  # 5
    assert pairs_of(b.finalize(device=device)) == {(0, 2), (1, 2), (0, 3), (1, 3), (0, 4), (1, 4)}


def test_contact_pairs_are_type_ordered_and_slots_match_capacity(device):
    """Pairs have type(a) <= type(b); contact_pair/contact_sub give each pair pair_contact_capacity slots, in order."""
    b = ModelBuilder()
    b.add_ground_plane()
    for i in range(3):
        dynamic_body(b, (2.0 * i, 0.0, 1.0))
    b.add_shape_box(0)
    b.add_shape_capsule(1)
    b.add_shape_sphere(2)
    b.add_shape_cylinder(2, has_collision=False)
    model = b.finalize(device=device)
    types = model.shape_type.numpy()
    pairs = model.shape_contact_pairs.numpy().reshape(-1, 2)
    assert len(pairs) == model.shape_contact_pair_count == 6
    caps = []
    for a, c in pairs:
        assert types[a] <= types[c]
        caps.append(pair_contact_capacity(int(types[a]), int(types[c])))
    assert all(cap > 0 for cap in caps)
    assert model.contact_capacity == sum(caps)
    expected_pair = np.concatenate([np.full(cap, p) for p, cap in enumerate(caps)])
    expected_sub = np.concatenate([np.arange(cap) for cap in caps])
    np.testing.assert_array_equal(model.contact_pair.numpy(), expected_pair)
    np.testing.assert_array_equal(model.contact_sub.numpy(), expected_sub)


def test_body_slot_csr_lists_joint_and_contact_slots(device):
    """body_slot_start/body_slot list, per body in increasing order, 2j/2j+1 joint slots and 2J+2c/+1 contact slots."""
    b = ModelBuilder()
    b.add_ground_plane()
    for i in range(4):
        dynamic_body(b, (float(i), 0.0, 1.0))
    b.add_body()  # body 4: no joints, no colliding shapes
    b.add_shape_sphere(0)
    b.add_shape_box(1)
    b.add_shape_capsule(2)
    b.add_shape_sphere(3)
    b.add_joint_revolute(-1, 0)
    b.add_joint_revolute(0, 1, collision_filter_parent=False)
    b.add_joint_ball(1, 2)
    b.add_joint_fixed(3, 2)
    model = b.finalize(device=device)
    nj = model.joint_count
    sb = model.shape_body.numpy()
    pairs = model.shape_contact_pairs.numpy().reshape(-1, 2)
    expected = [[] for _ in range(model.body_count)]
    for j, (p, c) in enumerate(zip(b.joint_parent, b.joint_child, strict=True)):
        if p >= 0:
            expected[p].append(2 * j)
        expected[c].append(2 * j + 1)
    for slot, pair in enumerate(model.contact_pair.numpy()):
        a, c = pairs[pair]
        if sb[a] >= 0:
            expected[sb[a]].append(2 * nj + 2 * slot)
        if sb[c] >= 0:
            expected[sb[c]].append(2 * nj + 2 * slot + 1)
    start = model.body_slot_start.numpy()
    slots = model.body_slot.numpy()
    assert len(start) == model.body_count + 1 and start[0] == 0 and start[-1] == len(slots)
    for body in range(model.body_count):
        got = list(slots[start[body] : start[body + 1]])
        assert got == sorted(expected[body]), body
    assert start[4] == start[5]


def reference_contact_pairs(b, shape_world, moving, strict=True) -> np.ndarray:
    """The pair enumeration finalize used until the vectorised one (2c32aed), kept as the oracle: a Python loop
    over every two colliding shapes of one world, or of a world and the shared world -1."""
    shape_body = b.shape_body
    by_world: dict[int, list[int]] = {}
    for s in range(b.shape_count):
        if b.shape_has_collision[s]:
            by_world.setdefault(int(shape_world[s]), []).append(s)
    shared = by_world.pop(-1, [])
    pairs: list[tuple[int, int]] = []

    def consider(a: int, c: int):
        ba, bc = shape_body[a], shape_body[c]
        if ba == bc or not ((ba >= 0 and moving[ba]) or (bc >= 0 and moving[bc])):
            return
        ga, gc = b.shape_collision_group[a], b.shape_collision_group[c]
        if ga == 0 or gc == 0 or (ga == gc and ga < 0) or (ga != gc and ga > 0 and gc > 0):
            return  # newton's group rule
        if (min(a, c), max(a, c)) in b.shape_filter_pairs:
            return
        if ba >= 0 and bc >= 0 and (min(ba, bc), max(ba, bc)) in b.body_filter_pairs:
            return
        ta, tc = b.shape_type[a], b.shape_type[c]
        if ta > tc:
            a, c, ta, tc = c, a, tc, ta
        if pair_contact_capacity(ta, tc) == 0:
            if ta == PLANE and tc == PLANE:
                return
            if strict:
                raise ValueError(f"unsupported {a} {c}")
        pairs.append((a, c))

    for i, a in enumerate(shared):
        for c in shared[i + 1 :]:
            consider(a, c)
    for shapes in by_world.values():
        for i, a in enumerate(shapes):
            for c in shared:
                consider(c, a)
            for c in shapes[i + 1 :]:
                consider(a, c)
    return np.asarray(pairs, dtype=np.int32).reshape(-1, 2)


def random_pair_scene(seed: int, cylinders: bool) -> ModelBuilder:
    """Worlds of random bodies (moving, kinematic, static) with 0-3 shapes each of random type, collision group and
    has_collision, hinges (parent filters), shape and body filter pairs, static shapes per world and in world -1;
    then shapes added to earlier worlds, so a world's shapes are not contiguous, and (half the seeds) world 0's shapes
    come after every other world's.
    Without ``cylinders`` every pair has a contact routine."""
    rng = np.random.default_rng(seed)
    types = [SPHERE, CAPSULE, BOX] + ([CYLINDER] if cylinders else [])
    adders = {
        SPHERE: "add_shape_sphere",
        CAPSULE: "add_shape_capsule",
        BOX: "add_shape_box",
        CYLINDER: "add_shape_cylinder",
    }

    def shape(tb, body):
        getattr(tb, adders[int(rng.choice(types))])(
            body, collision_group=int(rng.choice([1, 1, 1, 0, 2, -1, -2])), has_collision=bool(rng.random() < 0.9)
        )

    def world():
        tb = ModelBuilder()
        nb = int(rng.integers(0, 6))
        for i in range(nb):
            kind = rng.choice(["moving", "moving", "kinematic", "static"])
            tb.add_body(
                xform=(float(i), 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
                mass=0.0 if kind == "static" else 1.0,
                inertia=np.eye(3),
                is_kinematic=bool(kind == "kinematic"),
            )
            for _ in range(int(rng.integers(0, 4))):
                shape(tb, i)
            if i and rng.random() < 0.3:
                tb.add_joint_revolute(i - 1, i, collision_filter_parent=bool(rng.random() < 0.7))
        if rng.random() < 0.5:
            tb.add_shape_box(-1)  # static geometry of this world
        if tb.shape_count >= 2 and rng.random() < 0.5:
            a, c = rng.choice(tb.shape_count, 2, replace=False)
            tb.add_shape_collision_filter_pair(int(a), int(c))
        return tb

    b = ModelBuilder()
    b.add_ground_plane()
    b.add_shape_sphere(-1, xform=(3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))  # shared static sphere
    late_first = seed % 4 < 2  # world 0 gets its shapes last: worlds are not met in index order
    if late_first:
        b.add_world(ModelBuilder())
    worlds = int(rng.integers(1, 7)) + int(late_first)
    for _ in range(worlds - int(late_first)):
        b.add_world(world())
    for _ in range(int(rng.integers(0, 3))):
        b.add_builder(world(), world=int(rng.integers(0, worlds)))
    if late_first:
        b.add_builder(world(), world=0)
    if b.body_count >= 2:
        for _ in range(2):
            p, c = rng.choice(b.body_count, 2, replace=False)
            b.body_filter_pairs.add((int(min(p, c)), int(max(p, c))))
    return b


def _pair_inputs(b):
    from newton_tendon import finalize as fin

    _, _, shape_world, _ = fin._resolve_worlds(b)
    _, _, _, _, moving, _ = fin._mass_properties(b)
    return fin, shape_world, moving


@pytest.mark.parametrize("seed", range(40))
def test_contact_pairs_match_the_reference_enumeration(seed):
    """The vectorised pair enumeration gives the reference loop's pair array exactly (same pairs, same order, same
    type ordering), on random multi-world scenes with every filter; with ``strict`` (finalize) both accept the
    same scenes, and without it (colouring) both keep every pair. Half the seeds add cylinders, whose pairs
    with every type but a plane joined the table with issue 26."""
    b = random_pair_scene(seed, cylinders=seed % 2 == 1)
    fin, shape_world, moving = _pair_inputs(b)
    np.testing.assert_array_equal(
        fin._contact_pairs(b, shape_world, moving, strict=False), reference_contact_pairs(b, shape_world, moving, False)
    )
    try:
        expected = reference_contact_pairs(b, shape_world, moving)
    except ValueError:
        with pytest.raises(ValueError, match="contact is not supported"):
            fin._contact_pairs(b, shape_world, moving)
        return
    got = fin._contact_pairs(b, shape_world, moving)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("scene", ["empty", "no-collision", "shared-only", "single-world-no-shared"])
def test_contact_pairs_match_the_reference_on_edge_scenes(scene):
    """Edge cases of the enumeration: no shapes, no colliding shapes, only world -1 shapes with a moving body in it
    (a builder without worlds), and one world without shared shapes."""
    b = ModelBuilder()
    if scene == "no-collision":
        dynamic_body(b)
        b.add_shape_sphere(0, has_collision=False)
        b.add_ground_plane()
        b.shape_has_collision[-1] = False
    elif scene == "shared-only":
        b.add_ground_plane()
        for i in range(3):
            dynamic_body(b, (float(i), 0.0, 1.0))
            b.add_shape_box(i)
    elif scene == "single-world-no-shared":
        tb = ModelBuilder()
        for i in range(4):
            dynamic_body(tb, (float(i), 0.0, 1.0))
            tb.add_shape_capsule(i)
        b.add_world(tb)
    fin, shape_world, moving = _pair_inputs(b)
    got = fin._contact_pairs(b, shape_world, moving)
    expected = reference_contact_pairs(b, shape_world, moving)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_unsupported_pair_error_names_the_first_pair(monkeypatch):
    """The error for a pair without a contact routine names the first such pair in enumeration order (the shapes'
    labels and types), as the loop did. Every pair of our shape types but plane-plane has a routine now, so the
    test removes sphere-cylinder's slots from the table finalize reads (as a new shape type without routines
    would be)."""
    from newton_tendon import finalize as fin

    table = fin._CAPACITY_TABLE.copy()
    table[SPHERE, CYLINDER] = 0
    monkeypatch.setattr(fin, "_CAPACITY_TABLE", table)
    b = ModelBuilder()
    dynamic_body(b)
    b.add_shape_sphere(0, label="ball")
    dynamic_body(b, (1.0, 0.0, 0.0))
    b.add_shape_cylinder(1, label="can")
    b.add_shape_cylinder(1, label="can2")
    fin, shape_world, moving = _pair_inputs(b)
    with pytest.raises(ValueError, match=r"shapes 'ball' \(sphere\) and 'can' \(cylinder\) may collide"):
        fin._contact_pairs(b, shape_world, moving)
