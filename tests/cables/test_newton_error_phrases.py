"""Our route errors keep their detail (call, guide index, rule) and also carry the key phrase newton 1.8's
own errors use, so code matching newton's error text keeps working (issue 26). Each case asserts both."""

import re

import pytest

from newton_tendon import ModelBuilder, ModelFlags, TendonGuide, TendonGuideType
from newton_tendon.solvers import SolverVBD, SolverXPBD


def _builder():
    b = ModelBuilder()
    body = b.add_body(mass=0.0)
    return b, body


def _roller(body):
    return TendonGuide(body=body, guide_type=TendonGuideType.ROLLER, radius=0.1, dynamic=True)


CASES = {
    # name: (route from (body) -> guides, newton's phrase, our detail)
    "body out of range": (
        lambda b: [TendonGuide(body=b), TendonGuide(body=-2)],
        "body index",
        r"guide 1: body -2 is out of range",
    ),
    "unknown guide type": (
        lambda b: [TendonGuide(body=b), TendonGuide(body=b, guide_type=99)],
        "guide type",
        r"guide 1: guide_type 99 is not a known",
    ),
    "negative mu": (
        lambda b: [TendonGuide(body=b), TendonGuide(body=b, mu=-1.0)],
        "friction coefficient",
        r"guide 1: mu .* must be >= 0",
    ),
    "nan rest length": (
        lambda b: [TendonGuide(body=b), TendonGuide(body=b, rest_length=float("nan"))],
        "rest length",
        r"guide 1: rest_length .* must be finite",
    ),
    "dynamic anchor": (
        lambda b: [TendonGuide(body=b), TendonGuide(body=b, dynamic=True), TendonGuide(body=b)],
        "dynamic routing is only supported for ROLLER",
        r"guide 1: dynamic=True",
    ),
    "adjacent dynamic rollers": (
        lambda b: [TendonGuide(body=b), _roller(b), _roller(b), TendonGuide(body=b)],
        "Consecutive dynamic ROLLER",
        r"guide 2: .*cannot be adjacent \(guide 1 is dynamic too\)",
    ),
    "roller first": (
        lambda b: [_roller(b), TendonGuide(body=b)],
        "guides on both sides",
        r"guide 0: the first and last guides must be point guides",
    ),
    "roller last": (
        lambda b: [TendonGuide(body=b), _roller(b)],
        "guides on both sides",
        r"guide 1: the first and last guides must be point guides",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_route_error_has_newton_phrase_and_our_detail(case):
    route, phrase, detail = CASES[case]
    b, body = _builder()
    with pytest.raises(ValueError) as err:
        b.add_tendon(route(body))
    text = str(err.value)
    assert phrase in text
    assert text.startswith("add_tendon(label=None): ")
    assert re.search(detail, text), text
    assert b.tendon_start == []  # rejected before anything was appended


def test_body_index_phrase_on_other_calls():
    """The shared body-index check (shapes, joints) says "body index" too, after its own detail."""
    b = ModelBuilder()
    with pytest.raises(
        ValueError, match=r"add_shape_sphere.*: body 3 is out of range; expected a body index, -1 \(world\) or 0\.\.-1"
    ):
        b.add_shape_sphere(3, radius=0.1)


@pytest.mark.parametrize("solver_cls", [SolverXPBD, SolverVBD])
def test_notify_negative_damping_says_non_negative(solver_cls):
    b = ModelBuilder()
    body = b.add_body(mass=1.0)
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=body)])
    b.color()
    model = b.finalize()
    solver = solver_cls(model)
    model.tendon_segment_damping.fill_(-1.0)
    with pytest.raises(ValueError) as err:
        solver.notify_model_changed(ModelFlags.TENDON_PROPERTIES)
    text = str(err.value)
    assert "non-negative" in text
    assert (
        f"{solver_cls.__name__}.notify_model_changed: model.tendon_segment_damping[0] = -1.0 must be finite and >= 0"
        in text
    )


@pytest.mark.parametrize("solver_cls", [SolverXPBD, SolverVBD])
def test_notify_geometry_change_says_reconstructing(solver_cls):
    b = ModelBuilder()
    body = b.add_body(mass=1.0)
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=body)])
    b.color()
    model = b.finalize()
    solver = solver_cls(model)
    model.tendon_guide_radius.fill_(0.5)
    with pytest.raises(ValueError) as err:
        solver.notify_model_changed(ModelFlags.TENDON_PROPERTIES)
    text = str(err.value)
    assert "reconstructing" in text
    assert text.startswith(f"{solver_cls.__name__}.notify_model_changed: model.tendon_guide_radius changed")
