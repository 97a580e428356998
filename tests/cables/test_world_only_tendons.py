"""A model whose only content is a tendon routed over world guides steps (issue 26: newton's
test_world_guides_without_bodies). The solvers used to return at once from a step of a model without
bodies, so such a tendon never relaxed.

Scene: anchors at (-1, 0, 0) and (0, 1, 0), a frictionless world pinhole at the origin; spans of 1 m
each, authored rest lengths 0.8 m and 1.0 m, compliance 0.01 m/N each. The pinhole shares one tension
T over the two spans: with the total stretch 2 - 1.8 = 0.2 m split as the compliances, each span is
stretched by 0.1 m, T = 0.1 / 0.01 = 10 N, rest lengths 0.9 m each (spec: frictionless guides carry
one tension). Both solvers relax it within a few steps; bounds 1e-3 m and 0.3 N (the damping's
first-steps residual; measured 2.8e-4 m and 0.03 N after 4 steps of 0.01 s).
"""

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType
from newton_tendon.solvers import SolverVBD, SolverXPBD

SOLVERS = {"xpbd": SolverXPBD, "vbd": SolverVBD}


@pytest.mark.parametrize("name", sorted(SOLVERS))
@pytest.mark.parametrize("unused_body", [False, True])
def test_a_tendon_over_world_guides_relaxes_without_any_body(device, name, unused_body):
    b = nt.ModelBuilder()
    if unused_body:
        b.add_body(mass=0.0)
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=(-1.0, 0.0, 0.0)),
            TendonGuide(body=-1, guide_type=TendonGuideType.PINHOLE, compliance=0.01, damping=0.3, rest_length=0.8),
            TendonGuide(body=-1, offset=(0.0, 1.0, 0.0), compliance=0.01, damping=0.3, rest_length=1.0),
        ]
    )
    b.color()
    model = b.finalize(device)
    assert model.body_count == int(unused_body)
    solver = SOLVERS[name](model, iterations=2)
    s, o = model.state(), model.state()
    for _ in range(4):
        solver.step(s, o, model.control(), None, 0.01)
        s, o = o, s
    np.testing.assert_allclose(s.tendon_segment_rest_length.numpy(), [0.9, 0.9], atol=1e-3)
    np.testing.assert_allclose(solver.tendon_segment_material_tension.numpy(), [10.0, 10.0], atol=0.3)
    assert float(s.tendon_segment_rest_length.numpy().sum()) == pytest.approx(1.8, abs=1e-6)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_a_slack_span_reports_no_tension(device, name):
    """A cable cannot push: a span with more cable than its length (rest 2 m between world anchors
    1 m apart, compliance 0.01 m/N) reports a material tension of exactly 0 N, as newton reports it;
    (l - L)/c would read -100 N. The taut span of the same route still reads its (l - L)/c."""
    b = nt.ModelBuilder()
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=(0.0, 0.0, 0.0)),
            TendonGuide(body=-1, offset=(1.0, 0.0, 0.0), compliance=0.01, rest_length=2.0),
        ]
    )
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=(0.0, 1.0, 0.0)),
            TendonGuide(body=-1, offset=(1.0, 1.0, 0.0), compliance=0.01, rest_length=0.9),
        ]
    )
    b.color()
    model = b.finalize(device)
    solver = SOLVERS[name](model, iterations=2)
    s, o = model.state(), model.state()
    solver.step(s, o, model.control(), None, 0.01)
    tension = solver.tendon_segment_material_tension.numpy()
    assert tension[0] == 0.0
    assert tension[1] == pytest.approx(10.0, rel=1e-4)
