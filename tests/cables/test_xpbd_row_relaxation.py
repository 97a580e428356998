"""SolverXPBD's tendon rows take their full step where nothing else moves their bodies (issue 42).

A run over a frictionless guide shares one tension (spec: material slides freely through a
frictionless pinhole or roller). The XPBD pass scales every row step by a Jacobi relaxation (0.7 by
default) because rows of other tendons, transmissions and Jacobi joints that move one body add their
steps. A tendon whose bodies nothing else in the pass moves has no such conflict; scaled anyway, at
one iteration a load hanging over a world roller kept 30 % of each correction as a stretch that its
multiplier did not hold, and reported 130.8 N on its span against the run's 14.0 N (m g = 9.81 N).
"""

from __future__ import annotations

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType
from newton_tendon.solvers.xpbd import tendon_row_relaxation

from ..helpers import Sim

DT = 1.0 / 60.0
G = 9.81
C = 1.0e-5
INERTIA = 1.0e-3 * np.eye(3)


def _hanging_over_roller(strands: int = 1):
    """A 1 kg load hangs from a world anchor over a frictionless world roller (r = 0.1 m), each
    strand a separate tendon at compliance ``C`` (the rest length is the authored geometry)."""
    b = nt.ModelBuilder()
    load = b.add_body(xform=(0.1, 0, 1.0, 0, 0, 0, 1), mass=1.0, inertia=INERTIA)
    for k in range(strands):
        y = 0.05 * k - 0.025 * (strands - 1)  # symmetric about the load's centre of mass
        b.add_tendon(
            [
                TendonGuide(body=-1, offset=(-0.1, y, 1.0)),
                TendonGuide(
                    body=-1,
                    guide_type=TendonGuideType.ROLLER,
                    offset=(0, y, 2.0),
                    axis=(0, 1, 0),
                    radius=0.1,
                    compliance=C,
                ),
                TendonGuide(body=load, offset=(0, y, 0), compliance=C),
            ]
        )
    return b, load


@pytest.mark.parametrize("iterations", [1, 8])
def test_run_over_a_frictionless_roller_shares_one_tension(device, iterations):
    """After 4 s at rest both spans report m g: the constitutive (l - L)/c of each, within two float32
    ulps of a 1 m span over c (0.024 N); the load is still (below 1e-4 m/s)."""
    b, load = _hanging_over_roller()
    sim = Sim(b, device, contacts=False, iterations=iterations)
    sim.step(DT, 240)
    tension = sim.solver.tendon_segment_material_tension.numpy()
    np.testing.assert_allclose(tension, G, atol=0.024)
    assert np.linalg.norm(sim.state_0.body_qd.numpy()[load, :3]) < 1e-4
    np.testing.assert_array_equal(sim.solver._tendon_row_relaxation.numpy(), [1.0])


def test_strands_sharing_a_body_keep_the_jacobi_relaxation(device):
    """Two tendons holding one load conflict in the Jacobi pass: both keep 0.7, and at the default
    8 iterations they settle to m g / 2 each (same tolerance); a given ``joint_linear_relaxation``
    applies to every tendon, as the spec says."""
    b, load = _hanging_over_roller(strands=2)
    sim = Sim(b, device, contacts=False)
    np.testing.assert_allclose(sim.solver._tendon_row_relaxation.numpy(), [0.7, 0.7], rtol=1e-6)
    sim.step(DT, 240)
    np.testing.assert_allclose(sim.solver.tendon_segment_material_tension.numpy(), 0.5 * G, atol=0.024)
    np.testing.assert_allclose(tendon_row_relaxation(sim.model, 0.7, False), [0.7, 0.7], rtol=1e-6)
    given = nt.solvers.SolverXPBD(sim.model, joint_linear_relaxation=0.5)
    np.testing.assert_allclose(given._tendon_row_relaxation.numpy(), [0.5, 0.5])
    one, _ = _hanging_over_roller()
    single = nt.solvers.SolverXPBD(one.finalize(device), joint_linear_relaxation=0.5)
    np.testing.assert_allclose(single._tendon_row_relaxation.numpy(), [0.5])


def test_a_jacobi_joint_pass_counts_as_a_conflict(device):
    """With ``joint_solver="jacobi"`` a tendon on a jointed body keeps the Jacobi relaxation; with the
    default Gauss-Seidel joint pass (solved apart from the summed rows) it takes its full step."""
    b = nt.ModelBuilder()
    link = b.add_link(xform=(0, 0, 1.0, 0, 0, 0, 1), mass=1.0, inertia=INERTIA)
    b.add_joint_revolute(-1, link, axis=(0, 1, 0), parent_xform=(0, 0, 1.0, 0, 0, 0, 1))
    b.add_tendon([TendonGuide(body=-1, offset=(1.0, 0, 1.0)), TendonGuide(body=link, offset=(0.3, 0, 0), compliance=C)])
    model = b.finalize(device)
    assert tendon_row_relaxation(model, 0.7, jacobi_joints=False).tolist() == [1.0]
    assert tendon_row_relaxation(model, 0.7, jacobi_joints=True).tolist() == pytest.approx([0.7])
    jacobi = nt.solvers.SolverXPBD(model, joint_solver="jacobi")
    np.testing.assert_allclose(jacobi._tendon_row_relaxation.numpy(), [0.7], rtol=1e-6)


def test_inextensible_routes_keep_the_jacobi_relaxation(device):
    """An inextensible span reports the tension its row applied, so its route keeps 0.7 (at the full
    step a pendulum on an inextensible route read 2.3 % off its tension in a frame, 1.0 % at 0.7).
    The choice follows the compliance: made inextensible after construction, the route switches at
    ``notify_model_changed(TENDON_PROPERTIES)``, and back."""
    b, _ = _hanging_over_roller()
    sim = Sim(b, device, contacts=False)
    np.testing.assert_array_equal(sim.solver._tendon_row_relaxation.numpy(), [1.0])
    sim.model.tendon_segment_compliance.fill_(0.0)
    sim.solver.notify_model_changed(nt.ModelFlags.TENDON_PROPERTIES)
    np.testing.assert_allclose(sim.solver._tendon_row_relaxation.numpy(), [0.7], rtol=1e-6)
    sim.model.tendon_segment_compliance.fill_(C)
    sim.solver.notify_model_changed(nt.ModelFlags.TENDON_PROPERTIES)
    np.testing.assert_array_equal(sim.solver._tendon_row_relaxation.numpy(), [1.0])


def test_per_world_relaxation_in_three_worlds_matches_one_world_runs(device):
    """Three worlds of the hanging load with compliances 1e-5, 2e-5 and 0 written after finalize
    (notified), contacts on: the relaxations follow per tendon (1, 1, 0.7), every world holds m g on
    both spans after 4 s (0.024 N, as above), and each world's load height equals its one-world run
    to 1e-6 m (world isolation)."""
    comps = (C, 2.0 * C, 0.0)

    def run(values):
        one, _ = _hanging_over_roller()
        b = nt.ModelBuilder()
        b.replicate(one, len(values), spacing=(0.0, 3.0, 0.0))
        sim = Sim(b, device)  # contacts on
        spans = np.repeat(np.asarray(values, dtype=np.float32), 2)
        sim.model.tendon_segment_compliance.assign(spans)
        sim.solver.notify_model_changed(nt.ModelFlags.TENDON_PROPERTIES)
        sim.step(DT, 240)
        tension = sim.solver.tendon_segment_material_tension.numpy().reshape(len(values), 2)
        return sim.solver._tendon_row_relaxation.numpy(), tension, sim.state_0.body_q.numpy()[:, 2]

    relax, tension, z = run(comps)
    np.testing.assert_allclose(relax, [1.0, 1.0, 0.7], rtol=1e-6)
    np.testing.assert_allclose(tension, G, atol=0.024)
    for w, c in enumerate(comps):
        _, _, single_z = run((c,))
        assert z[w] == pytest.approx(single_z[0], abs=1e-6)
