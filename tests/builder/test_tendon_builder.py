"""Tests of routed tendons in ``ModelBuilder`` (``add_tendon``, merging, custom attributes, colouring) and ``finalize``.

Validation cases run as one table: each row makes a bad ``add_tendon`` call on a builder that already holds a tendon,
declared custom attributes and a colouring; it names the exception type, the guide at fault (when a guide is) and a
word of the rule that the message must contain, and checks that the builder is exactly as it was before the call.

Host-side geometry (axis normalization, placement transforms) is float64, compared at 1e-12. The Model stores float32
(relative rounding ~6e-8 per value, a few operations per length), so measured lengths are compared at 1e-6 relative.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re

import numpy as np
import pytest

from newton_tendon import (
    AttributeFrequency,
    CustomAttribute,
    ModelBuilder,
    TendonGuide,
    TendonGuideFlags,
    TendonGuideType,
)

from ..helpers import same

ROLLER, ANCHOR, PINHOLE = TendonGuideType.ROLLER, TendonGuideType.ANCHOR, TendonGuideType.PINHOLE
DYNAMIC = int(TendonGuideFlags.DYNAMIC)
TENDON, GUIDE, SEGMENT = AttributeFrequency.TENDON, AttributeFrequency.TENDON_GUIDE, AttributeFrequency.TENDON_SEGMENT
NAN = float("nan")
INF = float("inf")
HOST_TOL = 1.0e-12  # float64 host arithmetic on O(1) numbers
MODEL_REL = 1.0e-6  # float32 storage and kernel arithmetic on O(1) lengths


# ---------------------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------------------


def snapshot(b: ModelBuilder) -> dict:
    """Deep copy of every attribute of the builder (lists, dicts, sets and scalars) from ``vars``."""
    return copy.deepcopy(vars(b))


def changed(before: dict, b: ModelBuilder) -> list[str]:
    """Names of builder attributes that differ from a ``snapshot``."""
    after = vars(b)
    return sorted(
        k for k in before.keys() | after.keys() if k not in before or k not in after or not same(before[k], after[k])
    )


def quat(axis, angle):
    """Quaternion (x, y, z, w) of a rotation by ``angle`` [rad] about ``axis``."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    return (*(float(c) for c in math.sin(0.5 * angle) * a), math.cos(0.5 * angle))


def rotmat(q) -> np.ndarray:
    x, y, z, w = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def apply(xf, p) -> np.ndarray:
    """Transform point ``p`` by ``xf`` = (px, py, pz, qx, qy, qz, qw), in float64."""
    return np.asarray(xf[:3], dtype=np.float64) + rotmat(xf[3:]) @ np.asarray(p, dtype=np.float64)


def body(b: ModelBuilder, pos, rot=(0.0, 0.0, 0.0, 1.0), label=None) -> int:
    """A body with unit mass and inertia at ``pos`` with orientation ``rot``."""
    return b.add_body(xform=(*pos, *rot), mass=1.0, inertia=np.eye(3), label=label)


def guide_world_point(b: ModelBuilder, g: int) -> np.ndarray:
    """World position (float64) of point guide ``g`` at the builder's initial pose."""
    bi = b.tendon_guide_body[g]
    off = b.tendon_guide_offset[g]
    return np.asarray(off, dtype=np.float64) if bi < 0 else apply(b.body_q[bi], off)


def close(actual, expected, rel):
    """Assert arrays agree to ``rel`` relative to the largest magnitude of ``expected``."""
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(float(np.abs(expected).max()) if expected.size else 0.0, 1.0e-30)
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), expected, rtol=0.0, atol=rel * scale)


# ---------------------------------------------------------------------------------------------------------------
# Validation table
# ---------------------------------------------------------------------------------------------------------------

# Attributes declared on the validation scene.
T_F = CustomAttribute(name="t_f", frequency=TENDON, dtype=float, default=0.0)
G_F = CustomAttribute(name="g_f", frequency=GUIDE, dtype=float, default=0.0)
S_F = CustomAttribute(name="s_f", frequency=SEGMENT, dtype=float, default=0.0)


def scene() -> ModelBuilder:
    """Three bodies, the three custom attributes, one tendon already added and a colouring."""
    b = ModelBuilder()
    body(b, (0.0, 0.0, 1.0))
    body(b, (1.0, 0.0, 1.0))
    body(b, (2.0, 0.0, 1.0))
    for a in (T_F, G_F, S_F):
        b.add_custom_attribute(a)
    b.add_tendon([TendonGuide(body=0), TendonGuide(body=1)], custom_attributes={"t_f": 1.0})
    b.color()
    return b


def two_worlds() -> ModelBuilder:
    """Bodies 0, 1 in world 0 and bodies 2, 3 in world 1 (two copies of a two-body builder)."""
    sub = ModelBuilder()
    body(sub, (0.0, 0.0, 1.0))
    body(sub, (1.0, 0.0, 1.0))
    b = ModelBuilder()
    b.add_world(sub)
    b.add_world(sub)
    return b


def good_route() -> list[TendonGuide]:
    """A valid five-guide route; guides before the faulty one author custom attributes so partial writes show."""
    return [
        TendonGuide(body=0, offset=(0.1, 0.0, 0.0), custom_attributes={"g_f": 1.0}),
        TendonGuide(
            body=1,
            guide_type=ROLLER,
            radius=0.1,
            compliance=1.0e-4,
            custom_attributes={"g_f": 2.0},
            segment_custom_attributes={"s_f": 3.0},
        ),
        TendonGuide(body=2, guide_type=PINHOLE, mu=0.2, segment_custom_attributes={"s_f": 4.0}),
        TendonGuide(body=-1, guide_type=ROLLER, radius=0.05, offset=(3.0, 0.0, 2.0)),
        TendonGuide(body=-1, offset=(4.0, 0.0, 1.0), rest_length=0.5),
    ]


def route_with(**changes) -> list[TendonGuide]:
    """``good_route`` with guide ``i`` changed by ``g<i>={field: value}`` or replaced by ``g<i>=object``."""
    route = good_route()
    for key, change in changes.items():
        i = int(key[1:])
        route[i] = dataclasses.replace(route[i], **change) if isinstance(change, dict) else change
    return route


def case(id_, exc, guide, rule, make=scene, route=None, **kwargs):
    """One row: ``add_tendon(route, **kwargs)`` raises ``exc`` naming ``guide`` (or None) and matching ``rule``."""
    return pytest.param(make, route if route is not None else good_route(), kwargs, exc, guide, rule, id=id_)


def g(i, **change):
    """Keyword for ``route_with``: change guide ``i``."""
    return {f"g{i}": change}


ROLLER_DYN = {"guide_type": ROLLER, "radius": 0.1, "dynamic": True}

CASES = [
    # Route shape.
    case("one-guide", ValueError, None, r"at least two", route=[TendonGuide(body=0)]),
    case("empty-route", ValueError, None, r"at least two", route=[]),
    case("route-not-sequence", TypeError, None, r"sequence", route=(x for x in good_route())),
    case("not-a-guide-dict", TypeError, 2, r"TendonGuide", route=[*good_route()[:2], {"body": 2}, *good_route()[3:]]),
    case("not-a-guide-int", TypeError, 2, r"TendonGuide", route=[*good_route()[:2], 2, *good_route()[3:]]),
    case("label-not-str", TypeError, None, r"label", label=3),
    # Bodies and worlds.
    case("body-too-large", ValueError, 2, r"out of range", route=route_with(**g(2, body=3))),
    case("body-below-world", ValueError, 2, r"out of range", route=route_with(**g(2, body=-2))),
    case("body-not-int", TypeError, 2, r"int", route=route_with(**g(2, body=1.0))),
    case(
        "bodies-of-two-worlds",
        ValueError,
        2,
        r"same world",
        make=two_worlds,
        route=[TendonGuide(body=0), TendonGuide(body=1), TendonGuide(body=2)],
    ),
    # A world guide belongs to the world being authored (newton's rule): world -1 here, not body 0's world.
    case(
        "world-guide-outside-its-bodies-world",
        ValueError,
        1,
        r"world guide \(body -1\) is in the current world -1.*same world",
        make=two_worlds,
        route=[TendonGuide(body=0), TendonGuide(body=-1), TendonGuide(body=1)],
    ),
    # Guide type and orientation.
    case("type-unknown-7", ValueError, 2, r"guide_type", route=route_with(**g(2, guide_type=7))),
    case("type-unknown-neg", ValueError, 2, r"guide_type", route=route_with(**g(2, guide_type=-1))),
    case("type-unknown-str", TypeError, 2, r"guide_type", route=route_with(**g(2, guide_type="ROLLER"))),
    case("orientation-0", ValueError, 3, r"orientation", route=route_with(**g(3, orientation=0))),
    case("orientation-2", ValueError, 3, r"orientation", route=route_with(**g(3, orientation=2))),
    case("orientation-nan", TypeError, 3, r"orientation", route=route_with(**g(3, orientation=NAN))),
    # Scalars: negative or not finite.
    case("radius-negative", ValueError, 2, r"radius", route=route_with(**g(2, radius=-0.1))),
    case("radius-nan", ValueError, 3, r"radius.*finite", route=route_with(**g(3, radius=NAN))),
    case("radius-inf", ValueError, 3, r"radius.*finite", route=route_with(**g(3, radius=INF))),
    case("mu-negative", ValueError, 2, r"mu", route=route_with(**g(2, mu=-0.1))),
    case("mu-nan", ValueError, 2, r"mu.*finite", route=route_with(**g(2, mu=NAN))),
    case("mu-inf", ValueError, 2, r"mu.*finite", route=route_with(**g(2, mu=INF))),
    case("compliance-negative", ValueError, 2, r"compliance", route=route_with(**g(2, compliance=-1e-6))),
    case("compliance-nan", ValueError, 2, r"compliance.*finite", route=route_with(**g(2, compliance=NAN))),
    case("compliance-inf", ValueError, 2, r"compliance.*finite", route=route_with(**g(2, compliance=INF))),
    case("damping-negative", ValueError, 2, r"damping", route=route_with(**g(2, damping=-1.0))),
    case("damping-nan", ValueError, 2, r"damping.*finite", route=route_with(**g(2, damping=NAN))),
    case("damping-inf", ValueError, 2, r"damping.*finite", route=route_with(**g(2, damping=INF))),
    case("rest-nan", ValueError, 2, r"rest_length.*finite", route=route_with(**g(2, rest_length=NAN))),
    case("rest-inf", ValueError, 2, r"rest_length.*finite", route=route_with(**g(2, rest_length=INF))),
    case("rest-minus-inf", ValueError, 2, r"rest_length.*finite", route=route_with(**g(2, rest_length=-INF))),
    case("radius-not-number", TypeError, 3, r"radius", route=route_with(**g(3, radius="0.1"))),
    # Roller radius.
    case("roller-radius-zero", ValueError, 3, r"ROLLER.*radius", route=route_with(**g(3, radius=0.0))),
    # The first guide owns no span.
    case("first-compliance", ValueError, 0, r"first guide", route=route_with(**g(0, compliance=1e-3))),
    case("first-damping", ValueError, 0, r"first guide", route=route_with(**g(0, damping=0.1))),
    case("first-rest", ValueError, 0, r"first guide", route=route_with(**g(0, rest_length=0.5))),
    case("first-rest-other-negative", ValueError, 0, r"first guide", route=route_with(**g(0, rest_length=-2.0))),
    # Offset and axis.
    case("offset-two", ValueError, 2, r"offset.*three", route=route_with(**g(2, offset=(0.0, 0.0)))),
    case("offset-four", ValueError, 2, r"offset.*three", route=route_with(**g(2, offset=(0.0, 0.0, 0.0, 0.0)))),
    case("offset-nan", ValueError, 2, r"offset.*finite", route=route_with(**g(2, offset=(0.0, NAN, 0.0)))),
    case("offset-inf", ValueError, 2, r"offset.*finite", route=route_with(**g(2, offset=(INF, 0.0, 0.0)))),
    case("offset-none", TypeError, 2, r"offset", route=route_with(**g(2, offset=None))),
    case("offset-text", TypeError, 2, r"offset", route=route_with(**g(2, offset="abc"))),
    case("axis-zero", ValueError, 3, r"axis.*nonzero", route=route_with(**g(3, axis=(0.0, 0.0, 0.0)))),
    case("axis-two", ValueError, 3, r"axis.*three", route=route_with(**g(3, axis=(1.0, 0.0)))),
    case("axis-nan", ValueError, 3, r"axis.*finite", route=route_with(**g(3, axis=(1.0, NAN, 0.0)))),
    case("axis-inf", ValueError, 3, r"axis.*finite", route=route_with(**g(3, axis=(0.0, 0.0, -INF)))),
    # Dynamic rollers.
    case("dynamic-pinhole", ValueError, 2, r"ROLLER", route=route_with(**g(2, dynamic=True))),
    case("dynamic-anchor", ValueError, 0, r"ROLLER", route=route_with(**g(0, dynamic=True))),
    case("dynamic-first", ValueError, 0, r"first", route=route_with(**g(0, **ROLLER_DYN))),
    case("dynamic-last", ValueError, 4, r"last", route=route_with(**g(4, **ROLLER_DYN))),
    case(
        "dynamic-adjacent",
        ValueError,
        2,
        r"adjacent",
        route=route_with(**g(1, dynamic=True), **g(2, **ROLLER_DYN)),
    ),
    case("dynamic-not-bool", TypeError, 3, r"dynamic.*bool", route=route_with(**g(3, dynamic=1))),
    # Custom attributes: route level (TENDON).
    case("route-attr-undeclared", ValueError, None, r"'nope'.*not declared", custom_attributes={"nope": 1.0}),
    case("route-attr-guide-freq", ValueError, None, r"'g_f'.*frequency", custom_attributes={"g_f": 1.0}),
    case("route-attr-segment-freq", ValueError, None, r"'s_f'.*frequency", custom_attributes={"s_f": 1.0}),
    case("route-attr-not-dict", TypeError, None, r"dict", custom_attributes=[("t_f", 1.0)]),
    case("route-attr-bad-value", ValueError, None, r"t_f.*finite", custom_attributes={"t_f": NAN}),
    # Guide level (TENDON_GUIDE).
    case(
        "guide-attr-undeclared",
        ValueError,
        2,
        r"'nope'.*not declared",
        route=route_with(**g(2, custom_attributes={"nope": 1})),
    ),
    case(
        "guide-attr-tendon-freq",
        ValueError,
        2,
        r"'t_f'.*frequency",
        route=route_with(**g(2, custom_attributes={"t_f": 1})),
    ),
    case(
        "guide-attr-segment-freq",
        ValueError,
        2,
        r"'s_f'.*frequency",
        route=route_with(**g(2, custom_attributes={"s_f": 1.0})),
    ),
    # Segment level (TENDON_SEGMENT).
    case(
        "segment-attr-undeclared",
        ValueError,
        3,
        r"'nope'.*not declared",
        route=route_with(**g(3, segment_custom_attributes={"nope": 1.0})),
    ),
    case(
        "segment-attr-guide-freq",
        ValueError,
        3,
        r"'g_f'.*frequency",
        route=route_with(**g(3, segment_custom_attributes={"g_f": 1.0})),
    ),
    case(
        "segment-attr-tendon-freq",
        ValueError,
        3,
        r"'t_f'.*frequency",
        route=route_with(**g(3, segment_custom_attributes={"t_f": 1.0})),
    ),
    case(
        "segment-attr-on-first-guide",
        ValueError,
        0,
        r"first guide.*segment_custom_attributes",
        route=route_with(**g(0, segment_custom_attributes={"s_f": 1.0})),
    ),
]


@pytest.mark.parametrize(("make", "route", "kwargs", "exc", "guide", "rule"), CASES)
def test_add_tendon_rejects_and_leaves_builder_unchanged(make, route, kwargs, exc, guide, rule):
    """A rejected route raises the documented type naming the guide and the rule, and changes nothing."""
    b = make()
    before = snapshot(b)
    with pytest.raises(exc) as info:
        b.add_tendon(route, **kwargs)
    msg = str(info.value)
    assert msg.startswith("add_tendon("), msg
    if guide is not None:
        assert re.search(rf"\bguide {guide}\b", msg), msg
    assert re.search(rule, msg), msg
    assert changed(before, b) == []


# ---------------------------------------------------------------------------------------------------------------
# A valid route
# ---------------------------------------------------------------------------------------------------------------


def test_valid_routes_store_guides_segments_and_labels():
    """Valid routes return consecutive indices, default and explicit labels, and the documented counts."""
    b = ModelBuilder()
    for i in range(3):
        body(b, (float(i), 0.0, 1.0))
    route = [
        TendonGuide(body=0, offset=(0.1, 0.2, 0.3)),
        TendonGuide(body=1, guide_type=ROLLER, radius=0.2, orientation=-1, mu=0.3, dynamic=True, axis=(0.0, 3.0, 4.0)),
        TendonGuide(body=2, guide_type=PINHOLE, mu=0.1, compliance=1e-3, damping=2.0, rest_length=0.75),
        TendonGuide(body=-1, guide_type=int(ROLLER), radius=0.05, axis=(2.0, 0.0, 0.0), offset=(3.0, 0.0, 0.0)),
        TendonGuide(body=-1, offset=(4.0, 0.0, 1.0), rest_length=0.0),
    ]
    b.color()
    assert b.add_tendon(route) == 0
    assert b.body_color is None  # a new coupling invalidates the colouring
    assert b.add_tendon((TendonGuide(body=-1), TendonGuide(body=-1, offset=(1.0, 0.0, 0.0))), label="cable") == 1
    assert b.add_tendon([TendonGuide(body=2), TendonGuide(body=0), TendonGuide(body=1)]) == 2
    assert b.tendon_label == ["tendon_0", "cable", "tendon_2"]
    assert (b.tendon_count, b.tendon_guide_count, b.tendon_segment_count) == (3, 10, 7)
    assert b.tendon_start == [0, 5, 7]
    assert b.tendon_world == [-1, -1, -1]
    assert b.tendon_guide_body == [0, 1, 2, -1, -1, -1, -1, 2, 0, 1]
    assert b.tendon_guide_type[:5] == [int(ANCHOR), int(ROLLER), int(PINHOLE), int(ROLLER), int(ANCHOR)]
    assert all(type(t) is int for t in b.tendon_guide_type)
    assert b.tendon_guide_flags == [0, DYNAMIC] + [0] * 8
    assert b.tendon_guide_radius[:5] == [0.0, 0.2, 0.0, 0.05, 0.0]
    assert b.tendon_guide_orientation[:5] == [1, -1, 1, 1, 1]
    assert b.tendon_guide_mu[:5] == [0.0, 0.3, 0.1, 0.0, 0.0]
    assert b.tendon_guide_offset[0] == (0.1, 0.2, 0.3)
    # float64 host normalization of (0, 3, 4) and (2, 0, 0)
    close(b.tendon_guide_axis[1], (0.0, 0.6, 0.8), HOST_TOL)
    close(b.tendon_guide_axis[3], (1.0, 0.0, 0.0), HOST_TOL)
    assert b.tendon_guide_axis[0] == (0.0, 0.0, 1.0)
    # segment k of a tendon is the incoming span of its guide k+1
    assert b.tendon_segment_compliance[:4] == [0.0, 1e-3, 0.0, 0.0]
    assert b.tendon_segment_damping[:4] == [0.0, 2.0, 0.0, 0.0]
    assert b.tendon_segment_rest_length == [-1.0, 0.75, -1.0, 0.0, -1.0, -1.0, -1.0]


def test_tendon_world_follows_its_bodies():
    """A tendon's world is its bodies' world; a world guide and a world-only route take the current world."""
    b = two_worlds()
    assert b.add_tendon([TendonGuide(body=2), TendonGuide(body=3)]) == 0
    b.current_world = 0
    assert b.add_tendon([TendonGuide(body=1), TendonGuide(body=-1)]) == 1
    b.current_world = 1
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=-1, offset=(0.0, 1.0, 0.0))])
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=2), TendonGuide(body=3)])
    assert b.tendon_world == [1, 0, 1, 1]


# ---------------------------------------------------------------------------------------------------------------
# finalize
# ---------------------------------------------------------------------------------------------------------------


def finalize_scene() -> tuple[ModelBuilder, list[list[TendonGuide]]]:
    """Three rotated bodies and three tendons of 4, 2 and 5 guides."""
    b = ModelBuilder()
    body(b, (0.0, 0.0, 1.0), quat((0, 0, 1), 0.4))
    body(b, (1.0, 0.5, 1.2), quat((1, 1, 0), -0.7))
    body(b, (2.0, -0.3, 0.8), quat((1, 2, 3), 1.1))
    routes = [
        [
            TendonGuide(body=0, offset=(0.1, 0.2, 0.0)),
            TendonGuide(body=1, guide_type=PINHOLE, offset=(0.0, 0.1, -0.2), mu=0.25, compliance=1e-4),
            TendonGuide(body=-1, guide_type=PINHOLE, offset=(1.5, 1.0, 2.0), rest_length=0.7, damping=3.0),
            TendonGuide(body=2, offset=(-0.1, 0.0, 0.3), rest_length=-3.0),
        ],
        [TendonGuide(body=-1, offset=(0.0, 0.0, 3.0)), TendonGuide(body=1, offset=(0.2, 0.0, 0.0))],
        [
            TendonGuide(body=0),
            TendonGuide(
                body=1, guide_type=ROLLER, radius=0.2, orientation=-1, mu=0.3, axis=(0, 0, 2), rest_length=1.25
            ),
            TendonGuide(body=2, guide_type=PINHOLE, rest_length=0.9),
            TendonGuide(body=-1, guide_type=ROLLER, radius=0.1, dynamic=True, offset=(3.0, 0.0, 1.0), axis=(0, 1, 0)),
            TendonGuide(body=-1, offset=(4.0, 0.0, 0.5), compliance=2e-3),
        ],
    ]
    for r in routes:
        b.add_tendon(r)
    return b, routes


def test_finalize_copies_tendon_arrays(device):
    """tendon_start has the sentinel, segments of tendon t start at tendon_start[t] - t, arrays match the routes."""
    b, routes = finalize_scene()
    m = b.finalize(device=device)
    assert (m.tendon_count, m.tendon_guide_count, m.tendon_segment_count) == (3, 11, 8)
    start = m.tendon_start.numpy()
    assert start.tolist() == [0, 4, 6, 11]
    assert m.tendon_world.numpy().tolist() == [0, 0, 0]  # a builder without worlds is world 0
    assert m.tendon_label == ["tendon_0", "tendon_1", "tendon_2"]
    body_ = m.tendon_guide_body.numpy()
    gtype = m.tendon_guide_type.numpy()
    flags = m.tendon_guide_flags.numpy()
    offset = m.tendon_guide_offset.numpy()
    axis = m.tendon_guide_axis.numpy()
    radius = m.tendon_guide_radius.numpy()
    orient = m.tendon_guide_orientation.numpy()
    mu = m.tendon_guide_mu.numpy()
    comp = m.tendon_segment_compliance.numpy()
    damp = m.tendon_segment_damping.numpy()
    rest = m.tendon_segment_rest_length.numpy()
    for t, route in enumerate(routes):
        guides = slice(start[t], start[t + 1])
        segs = slice(start[t] - t, start[t + 1] - (t + 1))
        assert body_[guides].tolist() == [gd.body for gd in route]
        assert gtype[guides].tolist() == [int(gd.guide_type) for gd in route]
        assert flags[guides].tolist() == [DYNAMIC if gd.dynamic else 0 for gd in route]
        assert orient[guides].tolist() == [gd.orientation for gd in route]
        # float32 storage of authored float64 values: exact up to one rounding
        close(offset[guides], [gd.offset for gd in route], MODEL_REL)
        close(radius[guides], [gd.radius for gd in route], MODEL_REL)
        close(mu[guides], [gd.mu for gd in route], MODEL_REL)
        unit = [np.asarray(gd.axis, dtype=np.float64) / np.linalg.norm(gd.axis) for gd in route]
        close(axis[guides], unit, MODEL_REL)
        close(comp[segs], [gd.compliance for gd in route[1:]], MODEL_REL)
        close(damp[segs], [gd.damping for gd in route[1:]], MODEL_REL)
        # the authored (negative = measure) rest length is kept as authored
        close(rest[segs], [gd.rest_length for gd in route[1:]], MODEL_REL)
    assert rest[2] == np.float32(-3.0)


def test_finalize_measures_negative_rest_lengths(device):
    """Negative rest lengths become the straight distance between the two point guides; explicit ones are kept."""
    b, routes = finalize_scene()
    m = b.finalize(device=device)
    initial = m.tendon_segment_initial_rest_length.numpy()
    start = b.tendon_start
    checked = 0
    for t, route in enumerate(routes):
        for k in range(1, len(route)):
            left, right = route[k - 1], route[k]
            s = start[t] - t + k - 1
            if t == 2 and k >= 3:
                continue  # spans next to a dynamic roller may merge at the initial pose
            if right.rest_length >= 0.0:
                # float32 storage of an explicit value
                close(initial[s], right.rest_length, MODEL_REL)
            else:
                assert left.guide_type != ROLLER and right.guide_type != ROLLER
                gl = start[t] + k - 1
                expected = np.linalg.norm(guide_world_point(b, gl + 1) - guide_world_point(b, gl))
                # float32 poses, offsets and kernel arithmetic on O(1) lengths
                close(initial[s], expected, MODEL_REL)
            checked += 1
    assert checked == 6
    # point-guide tendons are fully active at the initial pose
    assert m.tendon_guide_initial_active.numpy()[:6].tolist() == [1] * 6


def test_solvers_reject_a_requires_grad_model(device):
    """Nothing here is differentiable. As in newton, finalize(requires_grad=True) builds the model (its
    data and kinematics work) and the solvers refuse it with NotImplementedError naming the routed
    tendons, before allocating anything."""
    from newton_tendon.solvers import SolverVBD, SolverXPBD  # noqa: PLC0415

    b = ModelBuilder()
    body(b, (0.0, 0.0, 1.0))
    b.add_tendon([TendonGuide(body=-1, offset=(0.0, 0.0, 2.0)), TendonGuide(body=0)])
    b.color()
    m = b.finalize(device=device, requires_grad=True)
    assert m.requires_grad
    for solver in (SolverXPBD, SolverVBD):
        with pytest.raises(NotImplementedError, match=r"requires_grad=True.*routed-tendon path is not differentiable"):
            solver(m)


# ---------------------------------------------------------------------------------------------------------------
# Worlds: add_world, add_builder, replicate
# ---------------------------------------------------------------------------------------------------------------

PLACE = (0.5, -1.0, 2.0, *quat((1.0, 2.0, 2.0), 0.9))
WORLD_OFFSET = (1.0, 2.0, 3.0)
WORLD_AXIS = (1.0, 0.0, 0.0)
BODY_OFFSET = (0.1, 0.0, 0.2)
BODY_AXIS = (0.0, 0.6, 0.8)


def tendon_sub() -> ModelBuilder:
    """Two bodies and one tendon: anchor on body 0, a roller on the world, a roller and an anchor on body 1."""
    s = ModelBuilder()
    body(s, (0.0, 0.0, 1.0))
    body(s, (2.0, 0.0, 1.0), quat((0, 0, 1), 0.3))
    s.add_tendon(
        [
            TendonGuide(body=0, offset=BODY_OFFSET),
            TendonGuide(body=-1, guide_type=ROLLER, radius=0.1, offset=WORLD_OFFSET, axis=WORLD_AXIS),
            TendonGuide(body=1, guide_type=ROLLER, radius=0.1, offset=(0.0, 0.0, 0.3), axis=BODY_AXIS),
            TendonGuide(body=1, offset=(0.0, 0.0, -0.2), compliance=1e-3),
        ],
        label="cable",
    )
    return s


def test_add_world_remaps_tendons_and_places_world_guides():
    """add_world shifts guide bodies, moves world guides by the placement, keeps body guides, prefixes labels."""
    sub = tendon_sub()
    sub_before = snapshot(sub)
    b = ModelBuilder()
    assert b.add_world(sub) == 0
    assert b.add_world(sub, xform=PLACE) == 1
    assert changed(sub_before, sub) == []
    assert b.tendon_label == ["world_0/cable", "world_1/cable"]
    assert b.tendon_world == [0, 1]
    assert b.tendon_start == [0, 4]
    assert b.tendon_guide_body == [0, -1, 1, 1, 2, -1, 3, 3]
    assert b.tendon_guide_offset[:4] == sub.tendon_guide_offset  # identity placement
    # float64 host transform of the world guide
    close(b.tendon_guide_offset[5], apply(PLACE, WORLD_OFFSET), HOST_TOL)
    close(b.tendon_guide_axis[5], rotmat(PLACE[3:]) @ np.asarray(WORLD_AXIS), HOST_TOL)
    for g_sub, g_new in ((0, 4), (2, 6), (3, 7)):
        assert b.tendon_guide_offset[g_new] == sub.tendon_guide_offset[g_sub]
        assert b.tendon_guide_axis[g_new] == sub.tendon_guide_axis[g_sub]
    assert b.tendon_guide_type == sub.tendon_guide_type * 2
    assert b.tendon_guide_radius == sub.tendon_guide_radius * 2
    assert b.tendon_segment_compliance == sub.tendon_segment_compliance * 2
    assert b.tendon_segment_rest_length == sub.tendon_segment_rest_length * 2


def test_add_builder_with_xform_into_a_world_keeps_labels():
    """add_builder places world guides by xform, shifts bodies and puts world -1 tendons in the target world."""
    sub = tendon_sub()
    b = ModelBuilder()
    b.add_world(sub)
    b.add_builder(sub, xform=PLACE, world=0)
    assert b.tendon_label == ["world_0/cable", "cable"]
    assert b.tendon_world == [0, 0]
    assert b.tendon_guide_body[4:] == [2, -1, 3, 3]
    # float64 host transform
    close(b.tendon_guide_offset[5], apply(PLACE, WORLD_OFFSET), HOST_TOL)
    close(b.tendon_guide_axis[5], rotmat(PLACE[3:]) @ np.asarray(WORLD_AXIS), HOST_TOL)
    assert b.tendon_guide_offset[6] == sub.tendon_guide_offset[2]
    assert b.tendon_guide_axis[6] == sub.tendon_guide_axis[2]


def test_replicate_finalize_gives_per_world_tendons(device):
    """Three replicated worlds: tendon_start steps by the guide count, worlds 0..2, equal measured lengths."""
    sub = tendon_sub()
    spacing = (2.0, 3.0, 0.0)
    b = ModelBuilder()
    b.replicate(sub, 3, spacing=spacing)
    assert b.tendon_label == [f"world_{w}/cable" for w in range(3)]
    m = b.finalize(device=device)
    assert m.tendon_start.numpy().tolist() == [0, 4, 8, 12]
    assert m.tendon_world.numpy().tolist() == [0, 1, 2]
    assert m.tendon_guide_body.numpy().tolist() == [0, -1, 1, 1, 2, -1, 3, 3, 4, -1, 5, 5]
    assert m.tendon_guide_type.numpy().tolist() == sub.tendon_guide_type * 3
    offsets = m.tendon_guide_offset.numpy()
    starts = b.tendon_start
    for w in range(3):
        shift = np.array([(w % 2) * spacing[0], (w // 2) * spacing[1], 0.0])  # 2x2 grid for three worlds
        # float32 storage of O(1) positions
        close(offsets[starts[w] + 1], np.asarray(WORLD_OFFSET) + shift, MODEL_REL)
        close(offsets[starts[w] + 2], sub.tendon_guide_offset[2], MODEL_REL)
    seg = m.tendon_segment_compliance.numpy()
    assert seg.tolist() == np.tile(np.float32(sub.tendon_segment_compliance), 3).tolist()
    rest = m.tendon_segment_initial_rest_length.numpy().reshape(3, 3)
    assert np.all(rest > 0.0)
    # rigidly translated copies measure the same lengths, up to float32 rounding of the shifted positions
    close(rest[1], rest[0], MODEL_REL * 10)
    close(rest[2], rest[0], MODEL_REL * 10)


# ---------------------------------------------------------------------------------------------------------------
# Custom attributes
# ---------------------------------------------------------------------------------------------------------------

ATTRS = [
    CustomAttribute(name="t_gain", frequency=TENDON, dtype=float, default=1.0),
    CustomAttribute(name="t_body", frequency=TENDON, dtype=int, default=-9, references="body"),
    CustomAttribute(name="t_ref", frequency=TENDON, dtype=int, default=-9, references="tendon"),
    CustomAttribute(name="g_ref", frequency=GUIDE, dtype=int, default=-9, references="tendon_guide"),
    CustomAttribute(name="g_dir", frequency=GUIDE, dtype="vec3", default=(0.0, 0.0, 0.0)),
    CustomAttribute(name="s_ref", frequency=SEGMENT, dtype=int, default=-9, references="tendon_segment"),
    CustomAttribute(name="s_stiff", frequency=SEGMENT, dtype=float, default=0.5),
    CustomAttribute(name="b_tendon", frequency=AttributeFrequency.BODY, dtype=int, default=-9, references="tendon"),
]

# Expected arrays of ``attr_sub`` (2 bodies, 2 tendons, 5 guides, 3 segments).
SUB_VALUES = {
    "t_gain": [2.0, 1.0],
    "t_body": [1, -1],
    "t_ref": [1, 0],
    "g_ref": [2, -9, -1, -9, -9],
    "g_dir": [(1.0, 2.0, 3.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)],
    "s_ref": [1, -5, -9],
    "s_stiff": [3.0, 0.5, 0.5],
    "b_tendon": [-9, 1],
}
SUB_DOMAIN = {
    "t_body": "body",
    "t_ref": "tendon",
    "g_ref": "tendon_guide",
    "s_ref": "tendon_segment",
    "b_tendon": "tendon",
}


def attr_sub() -> ModelBuilder:
    """Two bodies, two tendons, every attribute of ATTRS declared and authored through add_tendon."""
    s = ModelBuilder()
    body(s, (0.0, 0.0, 1.0))
    body(s, (1.0, 0.0, 1.0))
    for a in ATTRS:
        s.add_custom_attribute(a)
    s.add_tendon(
        [
            TendonGuide(body=0, custom_attributes={"g_ref": 2, "g_dir": (1.0, 2.0, 3.0)}),
            TendonGuide(
                body=-1,
                guide_type=PINHOLE,
                offset=(0.5, 0.0, 2.0),
                segment_custom_attributes={"s_ref": 1, "s_stiff": 3.0},
            ),
            TendonGuide(body=1, custom_attributes={"g_ref": -1}, segment_custom_attributes={"s_ref": -5}),
        ],
        custom_attributes={"t_gain": 2.0, "t_body": 1, "t_ref": 1},
    )
    s.add_tendon(
        [TendonGuide(body=-1, offset=(0.0, 0.0, 2.0)), TendonGuide(body=0, custom_attributes={"g_dir": (0, 0, 1)})],
        custom_attributes={"t_body": -1, "t_ref": 0},
    )
    s.set_custom_attribute("b_tendon", 1, 1)
    return s


def model_values(m, name):
    a = m.custom_attributes[name].numpy()
    return a.tolist()


def test_custom_attributes_finalize_one_value_per_entity(device):
    """Each attribute has one value per entity of its frequency: authored values, the default elsewhere."""
    s = attr_sub()
    m = s.finalize(device=device)
    assert set(m.custom_attributes) == {a.name for a in ATTRS}
    for a in ATTRS:
        assert m.custom_attribute_frequency[a.name] == a.frequency
        # float32 storage of small exact values (integers and halves) is exact
        got = model_values(m, a.name)
        assert [tuple(v) if isinstance(v, list) else v for v in got] == SUB_VALUES[a.name], a.name


def test_replicate_shifts_custom_attribute_references(device):
    """After replicate, integer references move by each copy's offset in the referenced domain; negatives stay."""
    pre = ModelBuilder()
    body(pre, (0.0, 0.0, 1.0))
    pre.add_tendon([TendonGuide(body=-1), TendonGuide(body=0)])
    b = ModelBuilder()
    b.add_world(pre)  # world 0: 1 body, 1 tendon, 2 guides, 1 segment, no attributes
    sub = attr_sub()
    b.replicate(sub, 3)
    m = b.finalize(device=device)
    counts = {"body": 2, "tendon": 2, "tendon_guide": 5, "tendon_segment": 3}
    first = {"body": 1, "tendon": 1, "tendon_guide": 2, "tendon_segment": 1}
    freq_domain = {
        AttributeFrequency.BODY: "body",
        TENDON: "tendon",
        GUIDE: "tendon_guide",
        SEGMENT: "tendon_segment",
    }
    for a in ATTRS:
        own = freq_domain[a.frequency]
        got = m.custom_attributes[a.name].numpy()
        assert len(got) == first[own] + 3 * counts[own], a.name
        default = np.asarray(a.default, dtype=np.float64)
        # entities of world 0 never authored the attribute
        assert np.array_equal(
            np.asarray(got[: first[own]], dtype=np.float64).reshape(-1, *default.shape),
            np.broadcast_to(default, (first[own], *default.shape)),
        ), a.name
        sub_vals = np.asarray(SUB_VALUES[a.name], dtype=np.float64)
        for k in range(3):
            lo = first[own] + k * counts[own]
            copy_vals = np.asarray(got[lo : lo + counts[own]], dtype=np.float64)
            if a.references is None:
                expected = sub_vals
            else:
                shift = first[a.references] + k * counts[a.references]
                expected = np.where(sub_vals >= 0, sub_vals + shift, sub_vals)
            # exact: integers, or float32-exact small floats
            assert np.array_equal(copy_vals, expected), (a.name, k, copy_vals, expected)
    # a few explicit values of copy 1 (bodies 3, 4; tendons 3, 4; guides 7..11; segments 4..6)
    assert m.custom_attributes["t_body"].numpy()[3:5].tolist() == [1 + 3, -1]
    assert m.custom_attributes["t_ref"].numpy()[3:5].tolist() == [1 + 3, 0 + 3]
    assert m.custom_attributes["g_ref"].numpy()[7:12].tolist() == [2 + 7, -9, -1, -9, -9]
    assert m.custom_attributes["s_ref"].numpy()[4:7].tolist() == [1 + 4, -5, -9]
    assert m.custom_attributes["b_tendon"].numpy()[3:5].tolist() == [-9, 1 + 3]


def test_custom_attribute_declared_twice_raises():
    """Declaring a name again (identically or not) raises and changes nothing."""
    b = ModelBuilder()
    b.add_custom_attribute(ATTRS[0])
    before = snapshot(b)
    with pytest.raises(ValueError, match=r"'t_gain' is already declared"):
        b.add_custom_attribute(ATTRS[0])
    with pytest.raises(ValueError, match=r"'t_gain' is already declared"):
        b.add_custom_attribute(CustomAttribute(name="t_gain", frequency=GUIDE))
    assert changed(before, b) == []


@pytest.mark.parametrize(
    "mine",
    [
        pytest.param(CustomAttribute(name="t_gain", frequency=TENDON, dtype=float, default=5.0), id="default"),
        pytest.param(CustomAttribute(name="t_gain", frequency=GUIDE, dtype=float, default=1.0), id="frequency"),
        pytest.param(CustomAttribute(name="t_ref", frequency=TENDON, dtype=int, default=-9), id="references"),
    ],
)
@pytest.mark.parametrize("how", ["add_builder", "add_world", "replicate"])
def test_conflicting_declarations_in_merge_raise(mine, how):
    """Merging a builder that declares a name differently raises, leaving the target unchanged."""
    b = ModelBuilder()
    b.add_custom_attribute(mine)
    body(b, (0.0, 0.0, 0.0))
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=0)])
    before = snapshot(b)
    sub = attr_sub()
    with pytest.raises(ValueError, match=rf"'{mine.name}' is declared differently"):
        if how == "add_builder":
            b.add_builder(sub)
        elif how == "add_world":
            b.add_world(sub)
        else:
            b.replicate(sub, 2)
    assert changed(before, b) == []


def test_identical_declarations_merge():
    """A name declared identically in both builders merges; the target's own values keep their indices."""
    b = ModelBuilder()
    b.add_custom_attribute(ATTRS[0])
    b.add_tendon(
        [TendonGuide(body=-1), TendonGuide(body=-1, offset=(1.0, 0.0, 0.0))], custom_attributes={"t_gain": 7.0}
    )
    b.add_builder(attr_sub())
    assert b.custom_attribute_values["t_gain"] == {0: 7.0, 1: 2.0}
    assert b.custom_attribute_values["t_ref"] == {1: 2, 2: 1}


def test_set_custom_attribute_on_tendon_domains():
    """set_custom_attribute authors tendon-domain values by index and checks the index range."""
    s = attr_sub()
    s.set_custom_attribute("t_gain", 1, 4.0)
    s.set_custom_attribute("g_dir", 3, (0.0, 1.0, 0.0))
    s.set_custom_attribute("s_stiff", 2, 0.25)
    assert s.custom_attribute_values["t_gain"][1] == 4.0
    assert s.custom_attribute_values["g_dir"][3] == (0.0, 1.0, 0.0)
    assert s.custom_attribute_values["s_stiff"][2] == 0.25
    before = snapshot(s)
    with pytest.raises(ValueError, match=r"index 3 is out of range"):
        s.set_custom_attribute("s_stiff", 3, 1.0)
    assert changed(before, s) == []


# ---------------------------------------------------------------------------------------------------------------
# Colouring
# ---------------------------------------------------------------------------------------------------------------


def test_color_separates_bodies_on_one_cable():
    """Bodies joined by a tendon span get different colours, and so do bodies on one cable with only
    world guides between them (SolverVBD's run row across a frictionless world guide reads both);
    bodies on different cables are not coupled by them."""
    b = ModelBuilder()
    body(b, (0.0, 0.0, 1.0))
    body(b, (1.0, 0.0, 1.0))
    body(b, (2.0, 0.0, 1.0))
    body(b, (3.0, 0.0, 1.0))
    b.add_tendon([TendonGuide(body=0), TendonGuide(body=1)])
    b.add_tendon([TendonGuide(body=2), TendonGuide(body=-1), TendonGuide(body=0)])  # 2 and 0 share a run
    b.add_tendon([TendonGuide(body=3), TendonGuide(body=-1)])
    assert b.color() == 2
    assert b.body_color[0] != b.body_color[1]
    assert b.body_color[0] != b.body_color[2]
    assert b.body_color[3] == 0  # coupled to no other body: the first colour


@pytest.mark.parametrize("roller_body", [pytest.param(1, id="roller-on-body"), pytest.param(-1, id="roller-on-world")])
def test_color_separates_the_neighbours_of_a_dynamic_roller_on_any_body(roller_body):
    """The bypass span of a dynamic roller couples the bodies before and after it, wherever the roller sits."""
    b = ModelBuilder()
    for i in range(3):
        body(b, (float(i), 0.0, 1.0))
    b.add_tendon(
        [
            TendonGuide(body=0),
            TendonGuide(body=roller_body, guide_type=ROLLER, radius=0.1, dynamic=True, offset=(1.0, 0.5, 1.0)),
            TendonGuide(body=2),
        ]
    )
    b.color()
    assert b.body_color[0] != b.body_color[2]


def test_color_separates_the_neighbours_of_a_dynamic_roller():
    """The guides before and after a dynamic roller share the bypass span, so their bodies differ in colour."""
    b = ModelBuilder()
    for i in range(3):
        body(b, (float(i), 0.0, 1.0))
    route = [
        TendonGuide(body=0),
        TendonGuide(body=1, guide_type=ROLLER, radius=0.1, dynamic=True),
        TendonGuide(body=2),
    ]
    b.add_tendon(route)
    assert b.color() == 3
    assert len(set(b.body_color)) == 3
    # Without the dynamic flag bodies 0 and 2 still share the cable's run row across the roller
    # (frictionless), so every body on the route keeps its own colour.
    b2 = ModelBuilder()
    for i in range(3):
        body(b2, (float(i), 0.0, 1.0))
    b2.add_tendon([route[0], dataclasses.replace(route[1], dynamic=False), route[2]])
    assert b2.color() == 3


@pytest.mark.parametrize("bad", [0.5, 1.0, None, True, "0"])
def test_non_int_body_index_is_both_type_and_value_error(bad):
    """A guide's or joint's body given as a float, None, a bool or a str: our rule says TypeError,
    newton raises ValueError ("body index"); the error is both, so code written for either catches it,
    and the builder is unchanged."""
    from newton_tendon.exceptions import IndexTypeError  # noqa: PLC0415

    b = ModelBuilder()
    body(b, (0.0, 0.0, 1.0))
    for call in (
        lambda: b.add_tendon([TendonGuide(body=0), TendonGuide(body=bad)]),
        lambda: b.add_joint_revolute(bad, 0),
    ):
        with pytest.raises(IndexTypeError, match="must be an int body index") as info:
            call()
        assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert b.tendon_count == 0 and b.joint_count == 0
