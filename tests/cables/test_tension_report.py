"""The reported material tension of a compliant span is (l - L)/c rounded once to float32.

Spec ("diagnostics"): ``tendon_segment_material_tension`` is the span's elastic tension
max((l - L)/c, 0) at the accepted pose. A user checks it against the reported attachment points:
at c = 1e-5 m/N one float32 ulp of a metre-scale length is 0.012 N, so a length rounded in float32
shows in the tension. The diagnostic measures the straight part again in float64 from the reported
points and divides by the model's compliance (its float32 value) in float64, then rounds once.

newton's ``test_vbd_tendon_diagnostics_match_final_pose`` divides by the authored decimal 1e-5
instead of its float32 value, which is 1e-5 (1 - 2.5e-8): 22911.3579 N there against 22911.3585 N
here, one float32 ulp apart. Matching it needs the authored compliance in float64 on the device
(issue 42's note).
"""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt

from ..helpers import Sim

DT = 1.0 / 60.0


@pytest.mark.parametrize("compliance", [1.0e-5, 2.5e-4, 1.0e-3])
def test_material_tension_is_the_correctly_rounded_stretch_over_compliance(device, solver, compliance):
    """Two free 1 kg bodies 1 m apart on a span of rest length 0.5 m, one step without gravity: the
    reported tension equals float32((|x_r - x_l| - L) / c) with the reported points and the model's
    float32 compliance in float64, to the bit (newton's scene, at its compliance and two others)."""
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    left = b.add_body(xform=(-0.5, 0, 0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3))
    right = b.add_body(xform=(0.5, 0, 0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3))
    b.add_tendon(
        [nt.TendonGuide(body=left), nt.TendonGuide(body=right, compliance=compliance, damping=1.0, rest_length=0.5)]
    )
    sim = Sim(b, device, contacts=False, solver=solver, iterations=1)
    sim.step(DT)
    xl = sim.solver.tendon_segment_attachment_l.numpy()[0].astype(np.float64)
    xr = sim.solver.tendon_segment_attachment_r.numpy()[0].astype(np.float64)
    q = sim.body_q()
    np.testing.assert_array_equal(xl, q[left, :3])
    np.testing.assert_array_equal(xr, q[right, :3])
    c = float(sim.model.tendon_segment_compliance.numpy()[0])
    expected = np.float32(max((np.linalg.norm(xr - xl) - 0.5) / c, 0.0))
    reported = sim.solver.tendon_segment_material_tension.numpy()[0]
    assert expected > 0.0
    assert reported == expected, (float(reported), float(expected))
