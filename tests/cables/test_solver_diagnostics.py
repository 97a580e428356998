"""Solver tendon diagnostics in newton's meaning (issue 26): the XPBD multiplier in newton's sign and
units, its last-iteration change, body-local material points, cable rolled off rollers, active
damping and capstan sweep counts, and values that exist from construction and after ``reset``.

Each test states the relation it checks and where its tolerance comes from. Scenes are one or two
bodies so that the expected numbers are hand-computed.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType

from ..helpers import SOLVERS, quat_to_matrix

G = 9.81
DT = 1.0 / 240.0
INERTIA = np.eye(3) * 1.0e-3

DIAGNOSTICS = (
    "tendon_segment_lambda",
    "tendon_segment_delta_lambda",
    "tendon_segment_material_tension",
    "tendon_segment_damping_tension",
    "tendon_segment_rest_length",
    "tendon_segment_active",
    "tendon_segment_active_compliance",
    "tendon_segment_active_damping",
    "tendon_segment_active_guide_l",
    "tendon_segment_active_guide_r",
    "tendon_segment_attachment_l",
    "tendon_segment_attachment_r",
    "tendon_segment_attachment_l_local",
    "tendon_segment_attachment_r_local",
    "tendon_segment_rolling_delta_l",
    "tendon_segment_rolling_delta_r",
    "tendon_guide_active",
    "tendon_guide_wrap",
    "tendon_total_cable",
    "tendon_length",
    "tendon_cone_sweep_count",
)
"""Every tendon diagnostic a solver reports (all of them are filled at construction and by reset)."""


def make(builder: nt.ModelBuilder, device, solver: str, **kw):
    builder.color()
    model = builder.finalize(device)
    return model, SOLVERS[solver](model, **kw)


def run(model, solver, steps: int, dt: float = DT, state=None):
    s0 = model.state() if state is None else state
    s1 = model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, dt)
        s0, s1 = s1, s0
    return s0


def hanging(mass=2.0, compliance=1.0e-4, rest=0.999, damping=0.0):
    """A weight 1 m below a world anchor on one compliant span (pre-stretched by 1 mm)."""
    b = nt.ModelBuilder()
    p = b.add_body(xform=(0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0), mass=mass, inertia=INERTIA)
    b.add_tendon(
        [TendonGuide(body=-1), TendonGuide(body=p, compliance=compliance, damping=damping, rest_length=rest)]
    )
    return b


def roller_route(mu=0.0, body_kinematic=True, damping=(3.0, 6.0), dynamic=False, z=0.0):
    """World anchor, roller of radius 0.1 on a kinematic body at height z (default the origin), world
    anchor: a sling wrapped half a turn under the roller (both anchors 0.3 m above its sides at z = 0;
    orientation -1 about +y runs from the left side under the bottom to the right side)."""
    b = nt.ModelBuilder(gravity=0.0)
    k = b.add_body(xform=(0.0, 0.0, z, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=INERTIA, is_kinematic=body_kinematic)
    b.add_tendon(
        [
            TendonGuide(body=-1, offset=(-0.1, 0.0, 0.3)),
            TendonGuide(
                body=k,
                guide_type=TendonGuideType.ROLLER,
                radius=0.1,
                axis=(0.0, 1.0, 0.0),
                orientation=-1,
                mu=mu,
                dynamic=dynamic,
                compliance=1.0e-3,
                damping=damping[0],
                rest_length=0.29,
            ),
            TendonGuide(body=-1, offset=(0.1, 0.0, 0.3), compliance=1.0e-3, damping=damping[1], rest_length=0.29),
        ]
    )
    return b, k


# ----------------------------------------------------------------------------------------------
# tendon_segment_lambda / tendon_segment_delta_lambda


def test_lambda_is_minus_tension_times_dt(device, solver):
    """newton's multiplier convention: lambda = -T dt [N s], so a weight m hanging at rest reads
    -lambda/dt = m g. XPBD's rows converge to 0.04 % of m g here in 480 steps (measured), so 0.5 %.
    VBD's rows have no XPBD multiplier: newton's VBD reports 0, and so does ours (exactly)."""
    m = 2.0
    model, sv = make(hanging(mass=m), device, solver)
    run(model, sv, 480)
    lam = sv.tendon_segment_lambda.numpy().astype(np.float64)
    if solver == "xpbd":
        assert -lam[0] / DT == pytest.approx(m * G, rel=5e-3)
        # The published value is the private work multiplier T dt^2 converted: -(T dt^2)/dt.
        np.testing.assert_array_equal(sv.tendon_segment_lambda.numpy(), -sv._tendon_lambda.numpy() / np.float32(DT))
        assert sv.tendon_segment_material_tension.numpy()[0] == pytest.approx(m * G, rel=5e-3)
    else:
        assert np.all(lam == 0.0)
        assert np.all(sv.tendon_segment_delta_lambda.numpy() == 0.0)


def test_delta_lambda_is_the_last_iterations_change(device):
    """``tendon_segment_delta_lambda`` is lambda after the step minus lambda before its last iteration.
    With one iteration that is lambda itself (the step starts its multipliers at 0), bitwise. With two,
    the first iteration is the same computation as a one-iteration step from the same state, so
    lambda(2) - delta(2) = lambda(1) up to the float32 rounding of the subtraction (1e-6 relative)."""
    builder = hanging(compliance=1.0e-5)
    model, one = make(builder, device, "xpbd", iterations=1)
    two = SOLVERS["xpbd"](model, iterations=2)
    for sv in (one, two):
        run(model, sv, 1)
    np.testing.assert_array_equal(one.tendon_segment_delta_lambda.numpy(), one.tendon_segment_lambda.numpy())
    lam1 = one.tendon_segment_lambda.numpy().astype(np.float64)
    lam2 = two.tendon_segment_lambda.numpy().astype(np.float64)
    d2 = two.tendon_segment_delta_lambda.numpy().astype(np.float64)
    assert abs(d2[0]) > 0.0
    np.testing.assert_allclose(lam2 - d2, lam1, rtol=1e-6)


# ----------------------------------------------------------------------------------------------
# Values at construction and after reset


def test_construction_reports_the_seeded_history(device, solver):
    """Before any step the solver reports the cable at the model's pose: rest length L = 0.999 m,
    end points at the anchor and the weight, length l = 1 m, tension (l - L)/c = 1e-3/1e-4 = 10 N
    (float32 l - L: 1e-7 m/1e-4 = 1e-3 N), no damping, no multiplier, nothing rolled."""
    model, sv = make(hanging(damping=50.0), device, solver)
    assert sv.tendon_segment_rest_length.numpy()[0] == pytest.approx(0.999, abs=1e-7)
    np.testing.assert_allclose(sv.tendon_segment_attachment_l.numpy()[0], [0.0, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(sv.tendon_segment_attachment_r.numpy()[0], [0.0, 0.0, -1.0], atol=1e-7)
    assert sv.tendon_length.numpy()[0] == pytest.approx(1.0, abs=1e-7)
    assert sv.tendon_total_cable.numpy()[0] == pytest.approx(0.999, abs=1e-7)
    assert sv.tendon_segment_material_tension.numpy()[0] == pytest.approx(10.0, abs=2e-3)
    assert sv.tendon_segment_active.numpy()[0] == 1
    assert sv.tendon_segment_active_damping.numpy()[0] == 50.0
    for name in ("tendon_segment_damping_tension", "tendon_segment_lambda", "tendon_segment_delta_lambda"):
        assert getattr(sv, name).numpy()[0] == 0.0, name


def test_reset_restores_the_construction_values(device, solver):
    """After steps that roll cable, slide it and load the spans, ``reset(state)`` (bodies back at the
    model's pose) and ``reset(fresh state, flags=0)`` (the State's history only, as newton's) report
    exactly what the solver reported when it was built, bitwise: the same seeded history at the same
    pose. The rest lengths equal the reset State's at once (they lagged until the next step)."""
    b, k = roller_route(mu=0.3)
    model, sv = make(b, device, solver)
    initial = {name: getattr(sv, name).numpy().copy() for name in DIAGNOSTICS}
    s0 = model.state()
    qd = s0.body_qd.numpy()
    qd[k] = (0.0, 0.0, 0.0, 0.0, 2.0, 0.0)  # spin the roller about its axis at 2 rad/s
    s0.body_qd.assign(qd)
    s0 = run(model, sv, 20, state=s0)
    assert not np.array_equal(sv.tendon_segment_rest_length.numpy(), initial["tendon_segment_rest_length"])
    sv.reset(s0)
    np.testing.assert_array_equal(sv.tendon_segment_rest_length.numpy(), s0.tendon_segment_rest_length.numpy())
    for name in DIAGNOSTICS:
        np.testing.assert_array_equal(getattr(sv, name).numpy(), initial[name], err_msg=name)
    run(model, sv, 5, state=s0)
    sv.reset(model.state(), flags=0)
    for name in DIAGNOSTICS:
        np.testing.assert_array_equal(getattr(sv, name).numpy(), initial[name], err_msg=name)


def test_reset_at_a_pose_reports_that_pose(device, solver):
    """``reset(state, body_q=...)`` re-seeds the cable at the given pose, and the diagnostics report it
    at once: the weight moved 0.2 m down reads l = 1.2 m and (l - L)/c = (1.2 - 0.999)/1e-4 = 2010 N
    (float32 length: 1e-7 m / 1e-4 m/N = 1e-3 N, so 1e-2 N)."""
    model, sv = make(hanging(), device, solver)
    state = model.state()
    q = model.body_q.numpy()
    q[0, 2] = -1.2
    sv.reset(state, body_q=wp.array(q, dtype=wp.transform, device=model.device))
    assert sv.tendon_length.numpy()[0] == pytest.approx(1.2, abs=1e-6)
    assert sv.tendon_segment_material_tension.numpy()[0] == pytest.approx(2010.0, abs=1e-2)
    np.testing.assert_allclose(sv.tendon_segment_attachment_r.numpy()[0], [0.0, 0.0, -1.2], atol=1e-7)


# ----------------------------------------------------------------------------------------------
# Material points, rolled cable, damping, sweeps


def test_attachment_local_round_trips_to_the_tangent_points(device, solver):
    """``tendon_segment_attachment_*_local`` are the State's body-local material points: at
    construction and after a step their world images (body pose applied) are the accepted tangent
    points, on the roller's rim (|x - c| = r, float32 rotation: 1e-6 m), and they equal the State's
    arrays bitwise."""
    b, k = roller_route()
    model, sv = make(b, device, solver)
    r = 0.1
    for stage in range(2):
        state = model.state() if stage == 0 else run(model, sv, 3)
        q = state.body_q.numpy()[k].astype(np.float64)
        rot = quat_to_matrix(q[3:])
        xr_in = q[:3] + rot @ sv.tendon_segment_attachment_r_local.numpy()[0]  # incoming span ends on the roller
        xl_out = q[:3] + rot @ sv.tendon_segment_attachment_l_local.numpy()[1]  # outgoing span leaves it
        for x in (xr_in, xl_out):
            assert np.linalg.norm(x - q[:3]) == pytest.approx(r, abs=1e-6)
        # Static roller: the material points are the tangent points of the vertical strands.
        np.testing.assert_allclose(xr_in, [-0.1, 0.0, 0.0], atol=1e-6)
        np.testing.assert_allclose(xl_out, [0.1, 0.0, 0.0], atol=1e-6)
        if stage == 1:
            np.testing.assert_array_equal(
                sv.tendon_segment_attachment_l_local.numpy(), state.tendon_segment_attachment_local_l.numpy()
            )
            np.testing.assert_array_equal(
                sv.tendon_segment_attachment_r_local.numpy(), state.tendon_segment_attachment_local_r.numpy()
            )
        # World guides: the local point is the guide point itself (world frame).
        np.testing.assert_allclose(sv.tendon_segment_attachment_l_local.numpy()[0], [-0.1, 0.0, 0.3], atol=1e-7)


def test_rolling_delta_is_the_arc_the_roller_turned(device, solver):
    """A roller spinning at omega under a half-wrapped cable carries r omega dt of cable per step from
    one span to the other (rolling without slip: the material points are fixed to its body). Each step
    reports it: the two spans' rolled cable is -+ r omega dt (float32 angles of ~1e-7 rad on a 0.1 m
    roller: 1e-7 relative of the 0.5 mm arc, so 1e-3 relative), and the sum is 0 (the wrap does not
    change). A stationary roller reports exactly 0 (newton's test_stationary_roller_preserves_material)."""
    b, k = roller_route(mu=100.0)
    model, sv = make(b, device, solver)
    s0 = model.state()
    run(model, sv, 4, state=s0)
    for name in ("tendon_segment_rolling_delta_l", "tendon_segment_rolling_delta_r"):
        assert np.all(getattr(sv, name).numpy() == 0.0), name
    omega, r = 3.0, 0.1
    s0 = model.state()
    qd = s0.body_qd.numpy()
    qd[k] = (0.0, 0.0, 0.0, 0.0, omega, 0.0)
    s0.body_qd.assign(qd)
    run(model, sv, 3, state=s0)
    into_in = float(sv.tendon_segment_rolling_delta_r.numpy()[0])  # incoming span's end on the roller
    into_out = float(sv.tendon_segment_rolling_delta_l.numpy()[1])  # outgoing span's start on it
    assert abs(into_in) == pytest.approx(r * omega * DT, rel=1e-3)
    assert into_in + into_out == pytest.approx(0.0, abs=1e-3 * r * omega * DT)
    # Spinning about +y (right-handed) moves the rim at x = -r upwards: cable leaves the roller into
    # the incoming span (> 0) and winds onto it from the outgoing one (< 0).
    assert into_in > 0.0 > into_out
    # Point guides never roll.
    assert sv.tendon_segment_rolling_delta_l.numpy()[0] == 0.0
    assert sv.tendon_segment_rolling_delta_r.numpy()[1] == 0.0


def test_active_damping_of_a_bypass_span_is_the_series_damper(device, solver):
    """A bypassed dynamic roller merges its two spans into one, with the dampers in series:
    d = d1 d2 / (d1 + d2) = 3 * 6 / 9 = 2 N s/m, in the slot that holds the merged span (the one
    before the roller, newton's convention); the other slot is inactive (0). Engaged, each span keeps
    its own damper (3 and 6)."""
    # At z = 0.5 the roller's centre lies 0.2 m (twice its radius) above the straight line between the
    # anchors, on the side away from its winding (under the bottom): bypassed.
    b, k = roller_route(dynamic=True, z=0.5)
    model, sv = make(b, device, solver)
    assert sv.tendon_guide_active.numpy()[1] == 0
    np.testing.assert_array_equal(sv.tendon_segment_active.numpy(), [1, 0])
    np.testing.assert_allclose(sv.tendon_segment_active_damping.numpy(), [2.0, 0.0], rtol=1e-6)
    # Centred on that line (reset there, measured as if built there) it engages.
    q = model.body_q.numpy()
    q[k, 2] = 0.3
    sv.reset(model.state(), body_q=wp.array(q, dtype=wp.transform, device=model.device), remeasure=True)
    assert sv.tendon_guide_active.numpy()[1] == 1
    np.testing.assert_allclose(sv.tendon_segment_active_damping.numpy(), [3.0, 6.0], rtol=1e-7)


def test_cone_sweep_count(device, solver):
    """``tendon_cone_sweep_count`` counts the capstan sweeps of the step's last relaxation: 0 for a
    frictionless route (its runs are solved in one pass), all ``tendon_max_sweeps`` at
    ``tendon_settle_tol=0`` (newton's meaning: no early stop), on the frictionless route too (newton's
    test_slack_tendon_settles_without_chasing_vanishing_tension), and, with the default tolerance on a
    slipping frictional roller, at least one sweep but far fewer than the 12 of the budget: measured 1
    on both solvers; bound 1..3, so a tolerance that stopped cutting the sweeps short (12) fails."""
    counts = {}
    rests = {}
    for mu, tol in ((0.0, 1e-3), (0.0, 0.0), (0.2, 0.0), (0.2, 1e-3)):
        b, k = roller_route(mu=mu)
        model, sv = make(b, device, solver, tendon_max_sweeps=12, tendon_settle_tol=tol)
        assert sv.tendon_cone_sweep_count.numpy()[0] == 0  # nothing has run at construction
        s0 = model.state()
        qd = s0.body_qd.numpy()
        qd[k] = (0.0, 0.0, 0.0, 0.0, 2.0, 0.0)
        s0.body_qd.assign(qd)
        run(model, sv, 3, state=s0)
        counts[(mu, tol)] = int(sv.tendon_cone_sweep_count.numpy()[0])
        rests[(mu, tol)] = sv.tendon_segment_rest_length.numpy()
    assert counts[(0.0, 1e-3)] == 0
    assert counts[(0.0, 0.0)] == 12
    # Without friction the extra sweeps find nothing to move: the material is bitwise the same.
    np.testing.assert_array_equal(rests[(0.0, 0.0)], rests[(0.0, 1e-3)])
    assert counts[(0.2, 0.0)] == 12
    assert counts[(0.2, 1e-3)] >= 1, counts  # it swept
    assert counts[(0.2, 1e-3)] <= 3, counts  # and stopped early (the budget is 12)


def test_masked_reset_refreshes_only_the_selected_worlds(device, solver):
    """``reset(state, world_mask=...)`` refreshes the diagnostics of the selected worlds' tendons to
    their construction values (bitwise, as above) and leaves the other worlds' as the last step left
    them, per segment, guide and tendon."""
    scene = nt.ModelBuilder()
    scene.replicate(hanging(damping=5.0), 3)
    model, sv = make(scene, device, solver)
    initial = {name: getattr(sv, name).numpy().copy() for name in DIAGNOSTICS}
    state = run(model, sv, 30)
    stepped = {name: getattr(sv, name).numpy().copy() for name in DIAGNOSTICS}
    assert not np.array_equal(stepped["tendon_segment_material_tension"], initial["tendon_segment_material_tension"])
    sv.reset(state, world_mask=model.world_mask([1]))
    for name in DIAGNOSTICS:
        now = getattr(sv, name).numpy()
        # One tendon per world, one segment and two guides per tendon.
        per_world = now.shape[0] // 3
        for w in range(3):
            part = slice(per_world * w, per_world * (w + 1))
            expected = initial[name] if w == 1 else stepped[name]
            np.testing.assert_array_equal(now[part], expected[part], err_msg=f"{name}, world {w}")
