"""Capstan products past float32 (issue 41): a length winch reels a 1 kg load in through a chain of
world pinholes whose sum of mu theta passes float32's exp(88.7).

The capstan law (spec, "capstan friction": T_tight <= exp(mu theta) T_slack at each guide) makes the
tension ratio across a chain of sticking guides the product of their ratios, exp(sum mu theta). The
solvers cap one guide's ratio at exp(CAPSTAN_EXPONENT_MAX) = exp(60), beyond which nothing slips in
float32, and the product of a chain at the same bound (``capstan_product``). Before that, 200 pinholes
at mu = 0.5 (sum 221) made XPBD report 81 NaN tensions and multipliers and VBD 81 infinite ones, from
the first step that reeled in.

Every span between two world pinholes is inextensible and immovable, so the winch moves the load by
exactly what it reels in; the load's span holds m g once the load moves steadily, and the span at
the winch holds m g times the chain's ratio.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType

from ..fuzz.test_degenerate import assert_all_finite
from ..helpers import Sim

DT = 1.0 / 240.0
MASS = 1.0
G = 9.81
REEL_PER_STEP = 1.0e-3
"""Cable the winch reels in per step [m] (0.24 m/s)."""
STEPS = 20
PITCH = 0.01
"""Horizontal spacing of the pinholes [m]; they zig-zag +-5 cm, so each turns the cable by ~2.9 rad."""
CAPSTAN_EXPONENT_MAX = 60.0
"""The solvers' cap on mu theta of one guide and of a chain of guides (kernels/cable/constants.py)."""
RATIO_RTOL = 2.0e-3
"""On the ratio of the winch span's tension to the load span's: each is reported from its row's
multiplier, within float32 rounding of a metre-scale stretch (measured 0.1-0.2 % on both solvers)."""


def _chain(n: int, mu: float):
    b = nt.ModelBuilder()
    load = b.add_body(xform=(n * PITCH + PITCH, 0, -1.0, 0, 0, 0, 1), mass=MASS, inertia=np.eye(3) * 1e-3)
    route = [TendonGuide(body=-1, offset=(-PITCH, 0, 0), winch=True)]
    for i in range(n):
        z = 0.05 if i % 2 else -0.05
        route.append(TendonGuide(body=-1, guide_type=TendonGuideType.PINHOLE, offset=(i * PITCH, 0, z), mu=mu))
    route.append(TendonGuide(body=load))
    b.add_tendon(route)
    return b, load, np.array([g.offset for g in route[:-1]], dtype=np.float64)


def _exponent(points: np.ndarray, load_position: np.ndarray, mu: float) -> float:
    """sum mu theta over the pinholes, theta the turn of the straight cable at each (float64)."""
    p = np.vstack([points, load_position])
    d = np.diff(p, axis=0)
    u = d / np.linalg.norm(d, axis=1)[:, None]
    theta = np.arccos(np.clip(np.sum(u[:-1] * u[1:], axis=1), -1.0, 1.0))
    return float(mu * theta.sum())


@pytest.mark.parametrize("n, mu", [(30, 0.5), (200, 0.5), (400, 1.0)], ids=["below", "saturated", "far_past"])
def test_pinhole_chain_tensions_stay_finite_and_follow_the_capstan_law(device, solver, n, mu):
    """All diagnostics finite; the load rises by the reeled cable; the winch span's tension is the load
    span's times exp(min(sum mu theta, 60)) (the capstan product, saturated)."""
    b, load, points = _chain(n, mu)
    sim = Sim(b, device, contacts=False, solver=solver)
    z0 = sim.body_q()[load, 2]
    cmd = np.zeros(sim.model.tendon_guide_count, dtype=np.float32)
    for k in range(STEPS):
        cmd[0] = -REEL_PER_STEP * (k + 1)
        sim.control.tendon_guide_winch_length.assign(cmd)
        sim.step(DT)
    assert_all_finite(sim.solver, sim.state_0)
    lam = getattr(sim.solver, "tendon_segment_lambda", None)
    if lam is not None:
        assert np.isfinite(lam.numpy()).all()
    q = sim.body_q()
    # The rigid chain moves the load by the reeled length; the load's inextensible span, whose row
    # meets the weight in 8 iterations from float32 positions near 1 m, ends 1.6e-5 m long on both
    # solvers (a 1 % bound on the 0.02 m reeled; a winch that did not reel would miss it by 100 %).
    assert abs((q[load, 2] - z0) - REEL_PER_STEP * STEPS) < 2.0e-4, q[load, 2] - z0
    tension = sim.solver.tendon_segment_material_tension.numpy().astype(np.float64)
    # Steady reeling: the load's span holds its weight (the velocity is constant after the first step).
    assert abs(tension[-1] - MASS * G) < 0.01 * MASS * G, tension[-1]
    exponent = _exponent(points, q[load, :3], mu)
    expected = math.exp(min(exponent, CAPSTAN_EXPONENT_MAX))
    assert (exponent < CAPSTAN_EXPONENT_MAX) == (n == 30), exponent
    ratio = tension[0] / tension[-1]
    assert abs(ratio / expected - 1.0) < RATIO_RTOL, (ratio, expected, exponent)
    # Along the chain the tension never rises away from the winch (each guide holds its share).
    assert np.all(np.diff(tension) <= 1.0e-3 * tension[:-1]), tension[:8]


def test_saturated_and_unsaturated_worlds_match_their_single_world_runs(device, solver):
    """Three worlds of the 200-pinhole chain with mu 0.5, 0.1 and 1.0 per world (sum mu theta 294, 59
    and 588: one just below the exp(60) cap, two far past it), written into ``model.tendon_guide_mu``
    after finalize: each world's tensions and load height match a one-world run at its mu (world
    isolation; float32 summation order is the same per tendon, so to 1e-6 relative)."""
    n, mus = 200, (0.5, 0.1, 1.0)

    def run(world_count: int, mu_per_world) -> tuple[np.ndarray, np.ndarray]:
        one, _, _ = _chain(n, 0.5)
        b = nt.ModelBuilder()
        b.replicate(one, world_count, spacing=(0.0, 5.0, 0.0))
        sim = Sim(b, device, contacts=False, solver=solver)
        guides = n + 2
        mu = sim.model.tendon_guide_mu.numpy()
        for w, value in enumerate(mu_per_world):
            mu[w * guides + 1 : w * guides + 1 + n] = value
        sim.model.tendon_guide_mu.assign(mu)
        cmd = np.zeros(sim.model.tendon_guide_count, dtype=np.float32)
        for k in range(STEPS):
            cmd[::guides] = -REEL_PER_STEP * (k + 1)
            sim.control.tendon_guide_winch_length.assign(cmd)
            sim.step(DT)
        assert_all_finite(sim.solver, sim.state_0)
        tension = sim.solver.tendon_segment_material_tension.numpy().astype(np.float64).reshape(world_count, -1)
        return tension, sim.body_q()[:, 2]

    batch_t, batch_z = run(3, mus)
    for w, mu in enumerate(mus):
        single_t, single_z = run(1, (mu,))
        np.testing.assert_allclose(batch_t[w], single_t[0], rtol=1e-6, atol=1e-6)
        assert abs(batch_z[w] - single_z[0]) < 1e-6
    # The mu = 0.1 world is below the cap, the others at it: their winch spans differ by exp(60 - 59).
    assert batch_t[1, 0] < batch_t[0, 0] == pytest.approx(batch_t[2, 0], rel=RATIO_RTOL)
