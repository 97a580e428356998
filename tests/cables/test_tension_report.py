"""The reported material tension of a compliant span is (l - L)/c for the authored c, rounded once.

Spec ("diagnostics"): ``tendon_segment_material_tension`` is the span's elastic tension
max((l - L)/c, 0) at the accepted pose. A user checks it against the reported attachment points and
the compliance they wrote, as newton's ``test_vbd_tendon_diagnostics_match_final_pose`` does. At
c = 1e-5 m/N one float32 ulp of a metre-scale length is 0.012 N, and float32(1e-5) is
1e-5 (1 - 2.5e-8): in float32 the tension came out 22911.359375 N against the correctly rounded
22911.357421875 N. The diagnostic measures the straight part again in float64 and divides by the
compliance as authored, the shortest decimal of its float32 value (``authored_stiffness``).
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
    reported tension equals float32((|x_r - x_l| - L) / c) with the reported points in float64 and the
    authored decimal c, to the bit (newton's scene, at its compliance and two others)."""
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
    expected = np.float32(max((np.linalg.norm(xr - xl) - 0.5) / compliance, 0.0))
    reported = sim.solver.tendon_segment_material_tension.numpy()[0]
    assert expected > 0.0
    assert reported == expected, (float(reported), float(expected))


def test_edited_compliance_reports_with_the_new_value(device):
    """An in-place edit of ``model.tendon_segment_compliance`` is read at once (the float32 value,
    whose reciprocal the stored stiffness no longer matches); after ``notify_model_changed`` the
    tension is the new authored value's again, to the bit."""
    b = nt.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    # Heavy ends (100 kg against alpha = c/dt^2 = 1.08 kg^-1): the span stays stretched for both
    # checks. With 1 kg ends and the tendon's full row step, the second step found it slack (0 / 0).
    left = b.add_body(xform=(-0.5, 0, 0, 0, 0, 0, 1), mass=100.0, inertia=100.0 * np.eye(3))
    right = b.add_body(xform=(0.5, 0, 0, 0, 0, 0, 1), mass=100.0, inertia=100.0 * np.eye(3))
    b.add_tendon([nt.TendonGuide(body=left), nt.TendonGuide(body=right, compliance=1.0e-5, rest_length=0.5)])
    sim = Sim(b, device, contacts=False, iterations=1)
    sim.model.tendon_segment_compliance.fill_(3.0e-4)

    def check(c):
        sim.step(DT)
        xl = sim.solver.tendon_segment_attachment_l.numpy()[0].astype(np.float64)
        xr = sim.solver.tendon_segment_attachment_r.numpy()[0].astype(np.float64)
        expected = np.float32(max((np.linalg.norm(xr - xl) - 0.5) / c, 0.0))
        reported = sim.solver.tendon_segment_material_tension.numpy()[0]
        assert abs(reported / expected - 1.0) < 1e-6, (float(reported), float(expected))
        return reported, expected

    check(float(np.float32(3.0e-4)))
    sim.solver.notify_model_changed(nt.ModelFlags.TENDON_PROPERTIES)
    reported, expected = check(3.0e-4)
    assert reported == expected
