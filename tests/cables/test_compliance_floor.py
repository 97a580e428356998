"""SolverVBD's compliance floor (spec: "VBD approximates zero segment compliance with 1.0e-8 m/N")
with per-world compliances in an odd number of worlds, and SolverXPBD's exact c = 0 beside it.

newton's scene: a 1 kg body 1 m from a kinematic anchor on a 0.5 m span, no gravity, one step at
1/60 s. Three worlds author c = 0, 1e-8 and 1e-5 m/N, written into the model after finalize and
notified (``TENDON_PROPERTIES``). On VBD the c = 0 world is the c = 1e-8 world (the floor) and
reports 1e-8 as its active compliance; on XPBD it keeps 0 and stays exact. Every world matches its
one-world run (world isolation)."""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide

from ..helpers import Sim

COMPLIANCES = (0.0, 1.0e-8, 1.0e-5)


def _span():
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    anchor = b.add_body(is_kinematic=True)
    body = b.add_body(xform=(1.0, 0, 0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3))
    b.add_shape_sphere(body, radius=0.01)
    b.add_tendon([TendonGuide(body=anchor), TendonGuide(body=body, compliance=1e-5, rest_length=0.5)])
    return b


def _run(device, solver, compliances):
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.replicate(_span(), len(compliances), spacing=(0.0, 3.0, 0.0))
    sim = Sim(b, device, solver=solver)  # contacts on, as a user keeps them
    sim.model.tendon_segment_compliance.assign(np.asarray(compliances, dtype=np.float32))
    sim.solver.notify_model_changed(nt.ModelFlags.TENDON_PROPERTIES)
    sim.step(1.0 / 60.0)
    x = sim.state_0.body_q.numpy()[1::2, 0].astype(np.float64)
    return x, sim.solver.tendon_segment_active_compliance.numpy()


@pytest.mark.parametrize("solver", ["xpbd", "vbd"])
def test_compliance_floor_per_world(device, solver):
    """The body ends 0.5000186 m from the anchor at c = 1e-8 on VBD (and at c = 0, to 1e-6 m: the
    float32 of 0.5 m positions). XPBD's c = 0 world reports 0 and is an exact row: from 0.5 m of
    stretch its 8 iterations at the inextensible route's relaxation 0.7 leave 0.5 x 0.3^8 = 3.3e-5 m.
    Each world equals its one-world run to 1e-6 m."""
    x, active = _run(device, solver, COMPLIANCES)
    for w, c in enumerate(COMPLIANCES):
        single, single_active = _run(device, solver, (c,))
        assert x[w] == pytest.approx(single[0], abs=1e-6)
        assert active[w] == single_active[0]
    if solver == "vbd":
        assert x[0] == pytest.approx(x[1], abs=1e-6)
        np.testing.assert_array_equal(active, np.float32([1e-8, 1e-8, 1e-5]))
        assert x[1] - 0.5 > 1e-5  # the floor stretches the span: 1.86e-5 m
    else:
        np.testing.assert_array_equal(active, np.float32(COMPLIANCES))
        assert 0.0 <= x[0] - 0.5 <= 0.5 * 0.3**8 + 1e-6
