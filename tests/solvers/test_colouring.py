"""Graph colouring for SolverVBD: bodies that share a row never share a colour.

VBD updates all bodies of one colour in parallel, each with the others held fixed; two bodies
coupled by a joint, a contact-capable shape pair or a tendon span in the same colour would read
each other's half-updated poses. Every two bodies on one routed cable count as coupled: a run row
(spans joined by guides that pass material freely) evaluates its tension with the motion of all of
its bodies. Checked on random scenes against the finalized model (the pairs
the solver will actually see), not against the builder's own edge list.
"""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType
from newton_tendon.solvers import SolverVBD


def random_world(rng: np.random.Generator) -> nt.ModelBuilder:
    """Bodies with spheres and boxes, a few revolute joints, and a routed tendon over random bodies."""
    b = nt.ModelBuilder()
    n = int(rng.integers(2, 9))
    bodies = []
    for i in range(n):
        pos = rng.uniform(-1.0, 1.0, 3)
        body = b.add_link(xform=(*pos, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.01)
        bodies.append(body)
        if rng.random() < 0.7:
            if rng.random() < 0.5:
                b.add_shape_sphere(body, radius=0.1)
            else:
                b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
        if i and rng.random() < 0.4:
            parent = int(rng.integers(-1, i))
            b.add_joint_revolute(parent if parent >= 0 else -1, body, axis=(0.0, 1.0, 0.0))
    if rng.random() < 0.5:
        b.add_ground_plane()
    # A tendon from a world anchor over randomly chosen bodies; some guides are dynamic rollers.
    k = int(rng.integers(2, min(n, 5) + 1))
    chosen = rng.choice(n, size=k, replace=False)
    route = [TendonGuide(body=-1, offset=(0.0, 0.0, 2.0))]
    for j, idx in enumerate(chosen):
        last = j == len(chosen) - 1
        if not last and j % 2 == 0 and rng.random() < 0.5:
            route.append(
                TendonGuide(
                    body=bodies[idx],
                    guide_type=TendonGuideType.ROLLER,
                    radius=0.05,
                    axis=(0.0, 1.0, 0.0),
                    orientation=1,
                    dynamic=True,
                )
            )
        else:
            route.append(TendonGuide(body=bodies[idx]))
    b.add_tendon(route)
    return b


def coupled_pairs(model: nt.Model) -> set[tuple[int, int]]:
    """Body pairs the solver couples: joints, contact pairs, and every two bodies on one routed cable
    (a run row joins the spans between guides that pass material freely; see
    ``cable.TendonLinearization``)."""
    pairs = set()
    for p, c in zip(model.joint_parent.numpy(), model.joint_child.numpy(), strict=True):
        if p >= 0:
            pairs.add((int(p), int(c)))
    if model.shape_contact_pair_count:
        shape_body = model.shape_body.numpy()
        for sa, sb in model.shape_contact_pairs.numpy():
            a, c = int(shape_body[sa]), int(shape_body[sb])
            if a >= 0 and c >= 0 and a != c:
                pairs.add((a, c))
    start = model.tendon_start.numpy()
    body = model.tendon_guide_body.numpy()
    for t in range(model.tendon_count):
        on_route = sorted({int(x) for x in body[start[t] : start[t + 1]] if x >= 0})
        pairs.update((a, c) for i, a in enumerate(on_route) for c in on_route[i + 1 :])
    return pairs


@pytest.mark.parametrize("seed", range(12))
def test_random_scenes_colour_every_coupled_pair_apart(seed):
    rng = np.random.default_rng(seed)
    scene = nt.ModelBuilder()
    for _ in range(int(rng.integers(1, 4))):
        scene.add_world(random_world(rng))
    colours_used = scene.color()
    model = scene.finalize("cpu")
    colour = model.body_color.numpy()
    assert colours_used == model.body_color_count
    assert colour.min() >= 0
    pairs = coupled_pairs(model)
    assert pairs, "the random scene should couple some bodies"
    for a, c in pairs:
        assert colour[a] != colour[c], f"bodies {a} and {c} share a row and colour {colour[a]}"
    SolverVBD(model)  # a coloured model is accepted


def test_touching_bodies_without_joints_get_different_colours():
    """Two free boxes that may collide share no joint or tendon: only the contact pair separates them."""
    b = nt.ModelBuilder()
    for x in (0.0, 0.15):
        body = b.add_body(xform=(x, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0))
        b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b.color()
    assert b.body_color[0] != b.body_color[1]
    # Filtering the pair removes the coupling, so one colour suffices.
    b2 = nt.ModelBuilder()
    shapes = []
    for x in (0.0, 0.15):
        body = b2.add_body(xform=(x, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0))
        shapes.append(b2.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1))
    b2.add_shape_collision_filter_pair(*shapes)
    assert b2.color() == 1


def test_worlds_do_not_couple():
    """Identical worlds never touch each other, so replication does not add colours."""
    one = random_world(np.random.default_rng(3))
    single = nt.ModelBuilder()
    single.add_world(one)
    many = nt.ModelBuilder()
    many.replicate(one, 16)
    assert many.color() == single.color()


def test_bodies_on_one_cable_get_distinct_colours_and_stale_colourings_are_rejected():
    """An Atwood machine: two weights on one cable over a world roller share no span, but they share
    the cable's run row (one tension for both spans across the frictionless roller), so they need two
    colours. A colouring from before that rule (both weights in colour 0, as a saved scene may hold)
    is rejected by SolverVBD with the fix in the message."""
    b = nt.ModelBuilder()
    w1 = b.add_body(xform=(-0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.1, inertia=np.eye(3) * 0.01)
    w2 = b.add_body(xform=(0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_tendon(
        [
            TendonGuide(body=w1),
            TendonGuide(body=-1, guide_type=TendonGuideType.ROLLER, radius=0.5, offset=(0.0, 0.0, 2.0)),
            TendonGuide(body=w2),
        ]
    )
    assert b.color() == 2
    assert b.body_color[w1] != b.body_color[w2]
    SolverVBD(b.finalize("cpu"))
    b.body_color = [0, 0]
    with pytest.raises(ValueError, match=r"bodies 0 and 1 on tendon 0 share colour 0.*builder\.color\(\) again"):
        SolverVBD(b.finalize("cpu"))
