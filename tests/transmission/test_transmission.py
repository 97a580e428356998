"""Transmission tendons (spatial and fixed) on SolverXPBD: every worked number of the spec is a test.

Spec references are to ``shared/spec/raisim-tendon-physics.txt`` ("physics") and
``raisim-tendons-overview.txt`` ("overview"); the discrete equations are stated in
``newton_tendon/kernels/transmission.py``. Scenes use zero gravity unless the number needs it, so each check
isolates one force element.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.solvers import SolverVBD, SolverXPBD
from newton_tendon.transmission import TendonPulley, TendonSite

G = 9.81


class TxSim:
    """Model, two states, control and a solver ("xpbd" or "vbd") without contacts, stepped in place."""

    def __init__(self, builder: nt.ModelBuilder, device, iterations: int = 8, solver: str = "xpbd"):
        if solver == "vbd":
            builder.color()
        self.model = builder.finalize(device)
        self.solver = (SolverVBD if solver == "vbd" else SolverXPBD)(self.model, iterations=iterations)
        self.s0 = self.model.state()
        self.s1 = self.model.state()
        self.control = self.model.control()

    def step(self, n: int = 1, dt: float = 1.0e-3):
        for _ in range(n):
            self.solver.step(self.s0, self.s1, self.control, None, dt)
            self.s0, self.s1 = self.s1, self.s0

    def get(self, name: str) -> np.ndarray:
        return getattr(self.solver, "transmission_" + name).numpy().astype(np.float64)

    def q(self):
        return self.s0.body_q.numpy().astype(np.float64)

    def qd(self):
        return self.s0.body_qd.numpy().astype(np.float64)


def point_mass(b: nt.ModelBuilder, pos, mass=1.0):
    return b.add_body(xform=(*pos, 0.0, 0.0, 0.0, 1.0), mass=mass, inertia=np.eye(3) * 1.0e-3)


# ----------------------------------------------------------------------------------------------
# Spec: "A short working example" (overview) and "Spring, slack interval, and damping" (physics)


def test_suspended_load_with_slack_spring(device, solver):
    """1 kg load, spring [0, 1] m, k = 500 N/m, d = 8 N s/m, upper limit 1.5 m, 2 N tension command,
    dt = 1e-3, 2000 steps: length 1.01562 m (k (l - 1) + 2 = 9.81), total tension 9.81 N,
    actuator force -2 N, limit inactive. Spec tolerance 0.001 m on the length; the tension is the
    weight to 0.2 % (the damped spring still rings by ~1 mm/s after 2 s)."""
    b = nt.ModelBuilder()
    load = point_mass(b, (0.0, 0.0, 0.8))
    b.add_spatial_tendon(
        [TendonSite(body=-1, offset=(0.0, 0.0, 2.0)), TendonSite(body=load)],
        spring_lower=0.0,
        spring_upper=1.0,
        stiffness=500.0,
        damping=8.0,
        upper_limit=1.5,
        drive_force=-2.0,  # "set tension 2"
    )
    sim = TxSim(b, device, solver=solver)
    sim.step(2000)
    sim.solver.update_geometry(sim.s0)
    assert sim.get("length")[0] == pytest.approx(1.01562, abs=1e-3)
    assert sim.get("tension")[0] == pytest.approx(G, rel=2e-3)
    assert sim.get("actuation_force")[0] == pytest.approx(-2.0, abs=1e-6)
    assert sim.get("limit_force")[0] == 0.0
    # Energy getter: spring potential at the cached length, 0.5 k e^2.
    e = sim.get("length")[0] - 1.0
    assert sim.get("potential_energy")[0] == pytest.approx(0.5 * 500.0 * e * e, rel=1e-5)


def test_implicit_spring_is_stable_at_high_stiffness(device, solver):
    """k = 1e6 N/m on 1 kg at dt = 1e-3 (k h^2/m = 1: explicit Euler would diverge). The implicit
    passive row p = -h k e_n - h (d + h k) ldot_+ stays bounded and settles at the rest length."""
    b = nt.ModelBuilder(gravity=0.0)
    body = point_mass(b, (1.1, 0.0, 0.0))
    b.add_spatial_tendon(
        [TendonSite(body=-1, offset=(0.0, 0.0, 0.0)), TendonSite(body=body)],
        stiffness=1.0e6,
        spring_lower=1.0,
        spring_upper=1.0,
    )
    sim = TxSim(b, device, solver=solver)
    peak = 0.0
    for _ in range(200):
        sim.step(5)
        peak = max(peak, abs(sim.q()[0, 0] - 1.0))
        assert np.all(np.isfinite(sim.q()))
    # Never beyond the initial 0.1 m stretch (no energy gain) and settled near the rest length.
    assert peak <= 0.1 + 1e-6
    assert abs(sim.q()[0, 0] - 1.0) < 1e-3


# ----------------------------------------------------------------------------------------------
# Actuator and activation dynamics


@pytest.mark.parametrize("tau", [0.0, 0.05])
def test_activation_follows_exact_first_order_update(device, solver, tau):
    """a_{n+1} = u + (a_n - u) exp(-h/tau) to float precision; tau = 0 gives u at once. The
    activation is State history and the reported actuator force is that activation when no servo
    acts and no bound is hit."""
    b = nt.ModelBuilder(gravity=0.0)
    body = point_mass(b, (1.0, 0.0, 0.0), mass=1.0e6)  # heavy: the geometry barely moves
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=body)], activation_time=tau, drive_force=0.0)
    sim = TxSim(b, device, solver=solver)
    h, u = 1.0e-3, -3.0
    sim.control.transmission_drive_force.fill_(u)
    a = 0.0
    for _ in range(50):
        sim.step(1, dt=h)
        a = u + (a - u) * math.exp(-h / tau) if tau > 0.0 else u
        got = sim.s0.transmission_activation.numpy()[0]
        assert got == pytest.approx(a, rel=2e-6, abs=1e-6)
        assert sim.get("actuation_force")[0] == pytest.approx(a, rel=2e-6, abs=1e-6)


def test_actuator_bounds_clamp_the_combined_force(device, solver):
    """F_drive = clamp(r - (kv + h kp) ldot_+, F_min, F_max): a 50 N command on a tendon bounded to
    [-20, 5] N delivers 5 N; bounds that exclude zero turn a zero command into the nearest bound."""
    for cmd, lo, hi, expect in ((50.0, -20.0, 5.0, 5.0), (0.0, 2.0, 9.0, 2.0)):
        b = nt.ModelBuilder(gravity=0.0)
        body = point_mass(b, (1.0, 0.0, 0.0), mass=1.0e6)
        b.add_spatial_tendon(
            [TendonSite(body=-1), TendonSite(body=body)], drive_force=cmd, actuation_lower=lo, actuation_upper=hi
        )
        sim = TxSim(b, device, solver=solver)
        sim.step(3)
        assert sim.get("actuation_force")[0] == pytest.approx(expect, rel=1e-5)


def test_length_servo_reaches_target(device, solver):
    """Position/velocity servo F = kp (l_d - l) + kv (ldot_d - ldot), implicit: the load settles at
    the target length (the servo's static error under gravity is m g / kp)."""
    b = nt.ModelBuilder()
    load = point_mass(b, (0.0, 0.0, 1.0))
    b.add_spatial_tendon(
        [TendonSite(body=-1, offset=(0.0, 0.0, 2.0)), TendonSite(body=load)],
        position_gain=2000.0,
        velocity_gain=100.0,
        target_length=1.2,
    )
    sim = TxSim(b, device, solver=solver)
    sim.step(3000)
    sim.solver.update_geometry(sim.s0)
    # Gravity pulls the load down: the servo holds l = l_d + m g / kp.
    assert sim.get("length")[0] == pytest.approx(1.2 + G / 2000.0, abs=1e-4)
    assert sim.get("tension")[0] == pytest.approx(G, rel=1e-3)


# ----------------------------------------------------------------------------------------------
# Pulley branches


def pulley_scene(lock: bool):
    b = nt.ModelBuilder(gravity=0.0)
    a = point_mass(b, (0.0, 0.0, -1.0))
    c = point_mass(b, (1.0, 0.0, -1.0))
    kw = {"lower_limit": 1.5, "upper_limit": 1.5, "position_correction": 0.0} if lock else {}
    t = b.add_spatial_tendon(
        [
            TendonSite(body=-1, offset=(0.0, 0.0, 0.0)),
            TendonSite(body=a),
            TendonPulley(divisor=2.0),
            TendonSite(body=-1, offset=(1.0, 0.0, 0.0)),
            TendonSite(body=c),
        ],
        **kw,
    )
    return b, a, c, t


def test_pulley_divisors_scale_length_and_force(device, solver):
    """Divisors 1 and 2: l = s_A + s_B/2 (1 + 1/2 = 1.5 m here), and at T = 10 N the second
    branch's segment carries 5 N: with a 10 N tension command on two free 1 kg bodies (no gravity)
    body A accelerates at 10 m/s^2 and body B at 5 m/s^2 toward their anchors."""
    b, a, c, _ = pulley_scene(lock=False)
    b.transmission_properties[0]["drive_force"] = -10.0
    sim = TxSim(b, device, solver=solver)
    assert sim.model.transmission_reference_length.numpy()[0] == pytest.approx(1.5, rel=1e-6)
    n, h = 10, 1.0e-3
    sim.step(n, dt=h)
    qd = sim.qd()
    assert qd[a, 2] / (n * h) == pytest.approx(10.0, rel=1e-3)
    assert qd[c, 2] / (n * h) == pytest.approx(5.0, rel=1e-3)
    # The gradients say the same: |dl/dp| is 1 on branch A, 1/2 on branch B.
    jac = sim.solver.transmission_jacobian.numpy()
    body = sim.solver.transmission_jacobian_body.numpy()
    assert np.linalg.norm(jac[body == a][0, :3]) == pytest.approx(1.0, rel=1e-6)
    assert np.linalg.norm(jac[body == c][0, :3]) == pytest.approx(0.5, rel=1e-6)


def test_locked_pulley_length_moves_branch_b_twice_as_fast(device, solver):
    """With l = s_A + s_B/2 locked (equal bounds), ds_B/dt = -2 ds_A/dt: pull body A down with
    1 N and body B rises twice as fast. 1 % covers the lock's Jacobi residual."""
    b, a, c, _ = pulley_scene(lock=True)
    sim = TxSim(b, device, solver=solver, iterations=16)
    f = np.zeros((2, 6), dtype=np.float32)
    f[a, 2] = -1.0
    sim.s0.body_f.assign(f)
    sim.s1.body_f.assign(f)
    sim.step(20)
    qd = sim.qd()
    # s_A = -z_A grows by -vz_A; s_B = -z_B.
    assert -qd[c, 2] == pytest.approx(-2.0 * -qd[a, 2], rel=1e-2)
    assert abs(qd[a, 2]) > 1e-3


# ----------------------------------------------------------------------------------------------
# Armature and route curvature


def armature_scene(velocity):
    b = nt.ModelBuilder(gravity=0.0)
    body = b.add_body(
        xform=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 1.0e-3, velocity=(*velocity, 0, 0, 0)
    )
    b.add_spatial_tendon([TendonSite(body=-1, offset=(0.0, 0.0, 0.0)), TendonSite(body=body)], armature=3.0)
    return b, body


def test_armature_adds_inertia_along_the_route(device, solver):
    """Armature 3 kg on a 1 kg body on a straight radial route: an 8 N radial force gives
    8 / (1 + 3) = 2 m/s^2 (the armature row p = a_t (ldot_n - ldot_+) is exact for a straight
    route, so only float32 limits the match: 1e-4)."""
    b, body = armature_scene((0.0, 0.0, 0.0))
    sim = TxSim(b, device, solver=solver)
    f = np.zeros((1, 6), dtype=np.float32)
    f[0, 0] = 8.0
    sim.s0.body_f.assign(f)
    sim.step(1)
    assert sim.qd()[0, 0] / 1.0e-3 == pytest.approx(2.0, rel=1e-4)


def test_armature_curvature_bias(device, solver):
    """Transverse speed 2 m/s at radius 1 m and no force: the length curvature v^2/l = 4 m/s^2 and
    the armature give a radial acceleration -a_t v^2/l / (m + a_t) = -3 m/s^2 (0 without the
    bias). One step of 1 ms; the centred second difference of the route is exact to O(tau^2)
    (tau = 10 ms) and the radial direction turns by 2 mrad within the step: 1 %."""
    b, body = armature_scene((0.0, 2.0, 0.0))
    sim = TxSim(b, device, solver=solver)
    h = 1.0e-3
    sim.step(1, dt=h)
    accel = (sim.qd()[0, :3] - np.array([0.0, 2.0, 0.0])) / h
    assert accel[0] == pytest.approx(-3.0, rel=1e-2)
    # Kinetic energy getter: 0.5 a_t ldot^2 with the solved length rate.
    rate = sim.get("velocity")[0]
    assert sim.get("kinetic_energy")[0] == pytest.approx(0.5 * 3.0 * rate * rate, rel=1e-5)


# ----------------------------------------------------------------------------------------------
# Length bounds, margin and compliance


def lock_scene(beta=0.2, compliance=0.0, target=1.0, start=1.1, gravity=0.0, margin=0.0, **kw):
    b = nt.ModelBuilder(gravity=gravity)
    body = b.add_body(xform=(start, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 1e-3)
    b.add_spatial_tendon(
        [TendonSite(body=-1), TendonSite(body=body)],
        lower_limit=target,
        upper_limit=target,
        position_correction=beta,
        limit_compliance=compliance,
        limit_margin=margin,
        **kw,
    )
    return b


def test_hard_lock_removes_beta_of_the_error_per_step(device, solver):
    """Isolated hard equality with beta = 0.2: each step removes 20 % of the remaining error
    (b = beta (l_target - l)/h, the body starts at rest 0.1 m long). Checked over 5 steps to 1e-4
    relative (the row is linear along a straight route; 16 iterations converge it)."""
    sim = TxSim(lock_scene(beta=0.2), device, solver=solver, iterations=16)
    err = 0.1
    for _ in range(5):
        sim.step(1)
        err *= 0.8
        assert sim.q()[0, 0] - 1.0 == pytest.approx(err, rel=1e-4)
        # Stop the body each step so the next step is again an isolated correction from rest.
        sim.s0.body_qd.zero_()


def test_compliant_lock_static_force(device, solver):
    """Compliant lock at rest: h Cdot_+ + beta C + c F = 0 gives F = -beta C / c. A 1 kg load
    hangs under gravity on a lock with c = 1e-3 m/N, beta = 0.2: the equilibrium error C satisfies
    -beta C / c = m g (F balances the weight), C = -m g c / beta = -0.049 m."""
    b = nt.ModelBuilder()
    load = point_mass(b, (0.0, 0.0, -1.0))
    b.add_spatial_tendon(
        [TendonSite(body=-1), TendonSite(body=load)],
        lower_limit=1.0,
        upper_limit=1.0,
        position_correction=0.2,
        limit_compliance=1e-3,
        damping=5.0,
    )
    sim = TxSim(b, device, solver=solver)
    sim.step(4000)
    sim.solver.update_geometry(sim.s0)
    c_err = sim.get("length")[0] - 1.0
    assert c_err == pytest.approx(G * 1e-3 / 0.2, rel=1e-2)
    assert sim.get("limit_force")[0] == pytest.approx(-0.2 * c_err / 1e-3, rel=1e-2)


def test_upper_limit_with_margin_holds_inside(device, solver):
    """Upper limit 1.5 m with margin 0.1 m: the effective bound is 1.4 m. A 10 N pull outward
    (zero gravity) stops the body at l = 1.4 (beta = 1 corrects fully); without margin at 1.5."""
    for margin, stop in ((0.1, 1.4), (0.0, 1.5)):
        b = nt.ModelBuilder(gravity=0.0)
        body = point_mass(b, (1.0, 0.0, 0.0))
        b.add_spatial_tendon(
            [TendonSite(body=-1), TendonSite(body=body)],
            upper_limit=1.5,
            limit_margin=margin,
            position_correction=1.0,
            damping=2.0,
        )
        sim = TxSim(b, device, solver=solver)
        f = np.zeros((1, 6), dtype=np.float32)
        f[0, 0] = 10.0
        sim.s0.body_f.assign(f)
        sim.s1.body_f.assign(f)
        sim.step(3000)
        assert sim.q()[0, 0] == pytest.approx(stop, abs=1e-4)
        sim.solver.update_geometry(sim.s0)
        # The upper row pushes toward shorter length: negative force, balancing the 10 N pull.
        assert sim.get("limit_force")[0] == pytest.approx(-10.0, rel=1e-2)


# ----------------------------------------------------------------------------------------------
# Dry friction


@pytest.mark.parametrize(("load", "moves"), [(3.0, False), (8.0, True)])
def test_dry_friction_holds_below_threshold_and_saturates_above(device, solver, load, moves):
    """Friction loss 5 N: a 3 N pull along the route stays at rest (interior impulse); an 8 N
    pull slides with the friction force saturated at 5 N opposing the motion, so the body
    accelerates at (8 - 5)/1 = 3 m/s^2."""
    b = nt.ModelBuilder(gravity=0.0)
    body = point_mass(b, (1.0, 0.0, 0.0))
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=body)], friction_loss=5.0)
    sim = TxSim(b, device, solver=solver)
    f = np.zeros((1, 6), dtype=np.float32)
    f[0, 0] = load
    sim.s0.body_f.assign(f)
    sim.s1.body_f.assign(f)
    n, h = 200, 1.0e-3
    sim.step(n, dt=h)
    v = sim.qd()[0, 0]
    if moves:
        assert v / (n * h) == pytest.approx(3.0, rel=1e-3)
        assert sim.get("friction_force")[0] == pytest.approx(-5.0, rel=1e-4)
    else:
        assert abs(v) < 1e-6
        assert sim.get("friction_force")[0] == pytest.approx(-load, rel=1e-4)


# ----------------------------------------------------------------------------------------------
# Fixed tendons


def two_hinges():
    b = nt.ModelBuilder(gravity=0.0)
    links = []
    joints = []
    for x in (0.0, 2.0):
        link = b.add_link(xform=(x, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.diag([0.1, 0.1, 0.2]))
        joints.append(b.add_joint_revolute(-1, link, parent_xform=(x, 0, 0, 0, 0, 0, 1), axis=(0.0, 0.0, 1.0)))
        links.append(link)
    return b, links, joints


def test_fixed_tendon_drives_two_joints(device, solver):
    """l = c1 q1 + c2 q2 with c = (0.5, -0.25) m/rad; a tendon force F gives joint torques
    tau_i = c_i F: with I_z = 0.2 kg m^2, F = 2 N gives angular accelerations 5 and -2.5 rad/s^2."""
    b, links, joints = two_hinges()
    b.add_fixed_tendon(joints, [0.5, -0.25], drive_force=2.0)
    sim = TxSim(b, device, solver=solver)
    n, h = 20, 1.0e-3
    sim.step(n, dt=h)
    qd = sim.qd()
    assert qd[links[0], 5] / (n * h) == pytest.approx(0.5 * 2.0 / 0.2, rel=1e-3)
    assert qd[links[1], 5] / (n * h) == pytest.approx(-0.25 * 2.0 / 0.2, rel=1e-3)
    q, _ = nt.eval_joint_coordinates(sim.model, sim.s0)
    q = q.numpy()
    sim.solver.update_geometry(sim.s0)
    assert sim.get("length")[0] == pytest.approx(0.5 * q[0] - 0.25 * q[1], abs=1e-6)


def test_fixed_tendon_rejects_ball_free_and_fixed_joints():
    b = nt.ModelBuilder()
    link = b.add_link(mass=1.0)
    j = b.add_joint_ball(-1, link)
    with pytest.raises(ValueError, match="ball joint"):
        b.add_fixed_tendon([j], [1.0])


# ----------------------------------------------------------------------------------------------
# Couplings


def test_polynomial_coupling_ratio_and_force_distribution(device, solver):
    """Coupling {0, 2, 0.1, 0, 0}: l1 - l1_ref = f(x) = 2 x + 0.1 x^2 with x = l2 - l2_ref; the
    instantaneous ratio dl1/dl2 = f'(x) = 2 + 0.2 x; the forces are F1 = lambda, F2 = -f'(x) lambda.
    Two sliders on prismatic fixed tendons; tendon 2 is moved by a force and tendon 1 follows."""
    b = nt.ModelBuilder(gravity=0.0)
    sliders, joints = [], []
    for y in (0.0, 1.0):
        s = b.add_link(xform=(0.0, y, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 1e-2)
        joints.append(b.add_joint_prismatic(-1, s, parent_xform=(0, y, 0, 0, 0, 0, 1), axis=(1.0, 0.0, 0.0)))
        sliders.append(s)
    t1 = b.add_fixed_tendon([joints[0]], [1.0])
    t2 = b.add_fixed_tendon([joints[1]], [1.0])
    b.add_tendon_coupling(t1, t2, [0.0, 2.0, 0.1, 0.0, 0.0], position_correction=0.2)
    sim = TxSim(b, device, solver=solver, iterations=16)
    f = np.zeros((2, 6), dtype=np.float32)
    f[sliders[1], 0] = 10.0  # effective inertia m2 + f'^2 m1 ~ 5 kg: x ~ 0.36 m after 0.6 s
    sim.s0.body_f.assign(f)
    sim.s1.body_f.assign(f)
    sim.step(600)
    q, qd = nt.eval_joint_coordinates(sim.model, sim.s0)
    q, qd = q.numpy().astype(np.float64), qd.numpy().astype(np.float64)
    x = q[1]
    assert x > 0.05  # the second tendon really moved
    assert q[0] == pytest.approx(2.0 * x + 0.1 * x * x, rel=2e-3)
    assert qd[0] / qd[1] == pytest.approx(2.0 + 0.2 * x, rel=2e-3)
    lam = sim.solver.coupling_force.numpy()[0]
    coupling = sim.get("coupling_force")
    assert coupling[0] == pytest.approx(lam, rel=1e-6)
    assert coupling[1] == pytest.approx(-(2.0 + 0.2 * x) * lam, rel=1e-2)


# ----------------------------------------------------------------------------------------------
# Runtime contract


def test_disabled_tendon_reports_zero_and_keeps_activation(device, solver):
    """Disabling a tendon removes its rows from the next step (zero forces) and freezes its
    activation; re-enabling resumes from the held activation."""
    b = nt.ModelBuilder(gravity=0.0)
    body = point_mass(b, (1.0, 0.0, 0.0), mass=1.0e6)
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=body)], activation_time=0.1, drive_force=-4.0)
    sim = TxSim(b, device, solver=solver)
    sim.step(10)
    held = sim.s0.transmission_activation.numpy()[0]
    assert held < 0.0
    sim.control.transmission_enabled.fill_(0)
    sim.step(5)
    assert sim.get("force")[0] == 0.0 and sim.get("actuation_force")[0] == 0.0
    assert sim.s0.transmission_activation.numpy()[0] == held
    sim.control.transmission_enabled.fill_(1)
    sim.step(1)
    expect = -4.0 + (held + 4.0) * math.exp(-1.0e-3 / 0.1)
    assert sim.s0.transmission_activation.numpy()[0] == pytest.approx(expect, rel=1e-6)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_non_finite_drive_command_holds_activation(device, solver, tau, bad):
    """A non-finite ``Control.transmission_drive_force`` is ignored for its step (docs/robustness.md,
    "Run-time input"): the activation holds a_n, so the drive acts with a_n that step, and the next
    finite command continues the exact update a_{n+1} = u + (a_n - u) exp(-h/tau) from it. Before the
    guard a NaN entered the filter state and stayed NaN for good (tau > 0)."""
    b = nt.ModelBuilder(gravity=0.0)
    body = point_mass(b, (1.0, 0.0, 0.0), mass=1.0e6)  # heavy: the geometry barely moves
    b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=body)], activation_time=tau, drive_force=0.0)
    sim = TxSim(b, device, solver=solver)
    h, u = 1.0e-3, -3.0
    sim.control.transmission_drive_force.fill_(u)
    sim.step(5, dt=h)
    held = sim.s0.transmission_activation.numpy()[0]
    assert held < 0.0
    sim.control.transmission_drive_force.fill_(bad)
    sim.step(1, dt=h)
    # Held bitwise: the kernel copies a_n when the command is not finite.
    assert sim.s0.transmission_activation.numpy()[0] == held
    assert sim.get("actuation_force")[0] == pytest.approx(held, rel=2e-6)
    for arr in (sim.s0.body_q, sim.s0.body_qd, sim.s0.transmission_activation, sim.s0.transmission_row_impulse):
        assert np.all(np.isfinite(arr.numpy()))
    sim.control.transmission_drive_force.fill_(u)
    sim.step(1, dt=h)
    expect = u + (held - u) * math.exp(-h / tau) if tau > 0.0 else u
    # float32 update of one step: the same tolerance as test_activation_follows_exact_first_order_update.
    assert sim.s0.transmission_activation.numpy()[0] == pytest.approx(expect, rel=2e-6, abs=1e-6)
    assert np.all(np.isfinite(sim.q())) and np.all(np.isfinite(sim.qd()))


def test_state_assign_restores_activation_and_replays(device, solver):
    """Checkpoint: the activation and references live in the State, so a restored state replays
    the same trajectory bitwise."""
    b = nt.ModelBuilder()
    load = point_mass(b, (0.0, 0.0, -1.0))
    b.add_spatial_tendon(
        [TendonSite(body=-1), TendonSite(body=load)], stiffness=200.0, damping=3.0, activation_time=0.02
    )
    sim = TxSim(b, device, solver=solver)
    sim.control.transmission_drive_force.fill_(-3.0)
    sim.step(7)
    saved = sim.model.state()
    saved.assign(sim.s0)
    sim.step(9)
    first = sim.q().copy()
    sim.s0.assign(saved)
    sim.step(9)
    np.testing.assert_array_equal(sim.q(), first)


def test_worlds_match_single_runs_with_per_world_parameters(device, solver):
    """Per-world stiffness (edited in place after finalize) gives each world the single-world
    result, bitwise."""

    def world():
        b = nt.ModelBuilder()
        load = point_mass(b, (0.0, 0.0, -1.0))
        b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=load)], stiffness=100.0, damping=2.0)
        return b

    scene = nt.ModelBuilder()
    scene.replicate(world(), 4)
    sim = TxSim(scene, device, solver=solver)
    k = np.array([100.0, 150.0, 200.0, 250.0], dtype=np.float32)
    sim.model.transmission_stiffness.assign(k)
    sim.solver.notify_model_changed(nt.ModelFlags.TRANSMISSION_PROPERTIES)
    sim.step(50)
    for i in (0, 3):
        single = TxSim(world(), device, solver=solver)
        single.model.transmission_stiffness.assign(k[i : i + 1])
        single.step(50)
        np.testing.assert_array_equal(sim.q()[i : i + 1], single.q())


def test_no_transmissions_allocate_nothing(device):
    b = nt.ModelBuilder()
    point_mass(b, (0.0, 0.0, 0.0))
    model = b.finalize(device)
    assert model.transmission_count == 0 and model.transmission_slot_count == 0
    solver = SolverXPBD(model)
    assert solver.transmission_length.shape == (0,)
    assert model.state().transmission_activation.shape == (0,)


def test_graph_capture_replays_like_direct_steps(device, solver):
    """The transmission rows are graph-capturable (no host sync, no allocation in step)."""

    def build():
        b = nt.ModelBuilder()
        load = point_mass(b, (0.0, 0.0, -1.0))
        b.add_spatial_tendon(
            [TendonSite(body=-1), TendonSite(body=load)], stiffness=300.0, damping=4.0, friction_loss=0.5
        )
        return b

    direct = TxSim(build(), device, solver=solver)
    captured = TxSim(build(), device, solver=solver)
    direct.step(4)
    with wp.ScopedCapture(device=captured.model.device) as cap:
        captured.step(2)
    for _ in range(2):
        wp.capture_launch(cap.graph)
    np.testing.assert_array_equal(direct.q(), captured.q())


# ----------------------------------------------------------------------------------------------
# Fixed-tendon geometry: coordinate, Jacobian (finite differences) and MuJoCo's ten_length


def hinge_and_slider(angle: float, slide: float):
    """A revolute link (axis z, anchor off its COM) and a prismatic slider (axis x) posed at the
    given joint coordinates, plus their builder joints."""
    b = nt.ModelBuilder(gravity=0.0)
    c, s = math.cos(angle), math.sin(angle)
    # The hinge anchor sits at (0.3, 0, 0) on the link; rotating by `angle` about z around the
    # world point (1, 0, 0) puts the link origin at (1, 0, 0) - R (0.3, 0, 0).
    origin = (1.0 - 0.3 * c, -0.3 * s, 0.0)
    link = b.add_link(
        xform=(*origin, 0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)),
        mass=1.0,
        inertia=np.diag([0.01, 0.02, 0.03]),
    )
    j0 = b.add_joint_revolute(
        -1, link, parent_xform=(1, 0, 0, 0, 0, 0, 1), child_xform=(0.3, 0, 0, 0, 0, 0, 1), axis=(0.0, 0.0, 1.0)
    )
    slider = b.add_link(xform=(slide, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=2.0, inertia=np.eye(3) * 0.01)
    j1 = b.add_joint_prismatic(-1, slider, parent_xform=(0, 2, 0, 0, 0, 0, 1), axis=(1.0, 0.0, 0.0))
    return b, (j0, j1), (link, slider)


def test_fixed_tendon_length_and_jacobian_match_finite_differences(device):
    """l = c1 q1 + c2 q2 at the posed coordinates, and J v = dl/dt for random body twists against a
    central difference of l along the same twists (float32: 1e-4 with 1e-3 steps)."""
    coeffs = (0.7, -1.3)
    b, joints, bodies = hinge_and_slider(0.4, 0.25)
    b.add_fixed_tendon(list(joints), list(coeffs))
    model = b.finalize(device)
    solver = SolverXPBD(model)
    state = model.state()
    solver.update_geometry(state)
    assert solver.transmission_length.numpy()[0] == pytest.approx(0.7 * 0.4 - 1.3 * 0.25, abs=2e-6)
    jac = solver.transmission_jacobian.numpy().astype(np.float64)
    slot_body = solver.transmission_jacobian_body.numpy()
    rng = np.random.default_rng(0)
    q0 = state.body_q.numpy().astype(np.float64)
    com = model.body_com.numpy().astype(np.float64)
    eps = 1.0e-3
    for _ in range(5):
        twist = rng.normal(size=(2, 6))
        jv = sum(jac[s] @ twist[slot_body[s]] for s in range(len(slot_body)) if slot_body[s] >= 0)

        def length_at(sign, twist=twist):
            q = q0.copy()
            for i in range(2):
                rot = quat_from_rotvec(sign * eps * twist[i, 3:])
                r_old = q[i, 3:]
                r_new = quat_mul(rot, r_old)
                c_world = q[i, :3] + rotate(r_old, com[i])
                c_new = c_world + sign * eps * twist[i, :3]
                q[i, :3] = c_new - rotate(r_new, com[i])
                q[i, 3:] = r_new
            st = model.state()
            st.body_q.assign(q.astype(np.float32))
            solver.update_geometry(st)
            return float(solver.transmission_length.numpy()[0])

        fd = (length_at(1.0) - length_at(-1.0)) / (2.0 * eps)
        assert jv == pytest.approx(fd, abs=1e-4)


def quat_from_rotvec(v):
    a = np.linalg.norm(v)
    if a < 1e-15:
        return np.array([0.0, 0.0, 0.0, 1.0])
    axis = v / a
    return np.array([*(axis * math.sin(a / 2)), math.cos(a / 2)])


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def rotate(q, v):
    u = np.asarray(q[:3])
    w = q[3]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def test_fixed_tendon_length_matches_mujoco(device):
    """MuJoCo's fixed tendon ten_length = sum coef * qpos for the same joints and coordinates
    (1e-5 relative, float32)."""
    mujoco = pytest.importorskip("mujoco")
    xml = """
    <mujoco><worldbody>
      <body pos="1 0 0"><joint name="h" type="hinge" axis="0 0 1"/>
        <geom type="sphere" size="0.05" pos="-0.3 0 0" mass="1"/></body>
      <body pos="0 2 0"><joint name="s" type="slide" axis="1 0 0"/><geom type="sphere" size="0.05" mass="2"/></body>
    </worldbody>
    <tendon><fixed name="t"><joint joint="h" coef="0.7"/><joint joint="s" coef="-1.3"/></fixed></tendon>
    </mujoco>"""
    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    for angle, slide in ((0.4, 0.25), (-1.1, -0.6), (2.5, 1.7)):
        data.qpos[:] = (angle, slide)
        mujoco.mj_forward(mj, data)
        b, joints, _ = hinge_and_slider(angle, slide)
        b.add_fixed_tendon(list(joints), [0.7, -1.3])
        model = b.finalize(device)
        solver = SolverXPBD(model)
        solver.update_geometry(model.state())
        assert solver.transmission_length.numpy()[0] == pytest.approx(data.ten_length[0], rel=1e-5, abs=1e-6)


def test_reset_clears_activation_and_update_geometry_refreshes_energy(device, solver):
    """reset(state) returns the activation to 0 (a new tendon's start) and the references to the
    model's; update_geometry at a hand-set pose refreshes length and spring energy 0.5 k e^2."""
    b = nt.ModelBuilder(gravity=0.0)
    body = point_mass(b, (1.0, 0.0, 0.0), mass=1.0e6)
    b.add_spatial_tendon(
        [TendonSite(body=-1), TendonSite(body=body)], stiffness=100.0, activation_time=0.1, drive_force=-4.0
    )
    sim = TxSim(b, device, solver=solver)
    sim.step(20)
    assert sim.s0.transmission_activation.numpy()[0] < 0.0
    sim.solver.reset(sim.s0)
    assert sim.s0.transmission_activation.numpy()[0] == 0.0
    q = sim.s0.body_q.numpy()
    q[0, 0] = 1.5
    sim.s0.body_q.assign(q)
    sim.solver.update_geometry(sim.s0)
    assert sim.get("length")[0] == pytest.approx(1.5, rel=1e-6)
    assert sim.get("potential_energy")[0] == pytest.approx(0.5 * 100.0 * 0.5**2, rel=1e-5)


def test_fixed_tendon_on_a_spinning_revolute_joint_stays_continuous(device, solver):
    """A revolute joint spinning at 10 rad/s passes +-pi; its fixed-tendon coordinate l = q keeps
    growing (the term's coordinate is unwrapped against the previous step, as a joint coordinate in
    MuJoCo or RaiSim does): after 1 s, l = 10 rad to 1e-3 (float32 rotation over 1000 steps)."""
    b = nt.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=1.0, inertia=np.diag([0.1, 0.1, 0.2]), velocity=(0, 0, 0, 0, 0, 10.0))
    j = b.add_joint_revolute(-1, link, axis=(0.0, 0.0, 1.0))
    b.add_fixed_tendon([j], [1.0])
    sim = TxSim(b, device, solver=solver)
    lengths = []
    for _ in range(100):
        sim.step(10)
        lengths.append(sim.get("length")[0])
    assert np.all(np.diff(lengths) > 0.0)
    assert lengths[-1] == pytest.approx(10.0, rel=1e-3)
    sim.solver.reset(sim.s0)
    sim.solver.update_geometry(sim.s0)
    assert sim.get("length")[0] == pytest.approx(0.0, abs=1e-6)


def test_nan_spring_endpoints_restore_the_reference_interval(device):
    """Spec (overview, "Three lengths"): setting the spring endpoints to NaN restores the spring
    interval to the original reference length rather than capturing the current configuration;
    other bad edits raise naming the array and index."""
    b = nt.ModelBuilder(gravity=0.0)
    body = point_mass(b, (1.25, 0.0, 0.0))
    b.add_spatial_tendon(
        [TendonSite(body=-1), TendonSite(body=body)], stiffness=10.0, spring_lower=0.5, spring_upper=0.7
    )
    sim = TxSim(b, device)
    sim.step(5)
    m = sim.model
    m.transmission_spring_lower.fill_(float("nan"))
    m.transmission_spring_upper.fill_(float("nan"))
    sim.solver.notify_model_changed(nt.ModelFlags.TRANSMISSION_PROPERTIES)
    assert m.transmission_spring_lower.numpy()[0] == pytest.approx(1.25, rel=1e-6)
    assert m.transmission_spring_upper.numpy()[0] == pytest.approx(1.25, rel=1e-6)
    m.transmission_stiffness.fill_(-1.0)
    with pytest.raises(ValueError, match=r"transmission_stiffness\[0\]"):
        sim.solver.notify_model_changed(nt.ModelFlags.TRANSMISSION_PROPERTIES)


def test_disabled_coupling_removes_its_row(device, solver):
    """Spec: disabling a coupling removes its row: with coupling_enabled = 0 the driven slider moves
    alone (the other stays at 0), and the coupling reports no force."""
    b = nt.ModelBuilder(gravity=0.0)
    joints = []
    for y in (0.0, 1.0):
        s = b.add_link(xform=(0.0, y, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 1e-2)
        joints.append(b.add_joint_prismatic(-1, s, parent_xform=(0, y, 0, 0, 0, 0, 1), axis=(1.0, 0.0, 0.0)))
    t1 = b.add_fixed_tendon([joints[0]], [1.0])
    t2 = b.add_fixed_tendon([joints[1]], [1.0], drive_force=1.0)
    b.add_tendon_coupling(t1, t2, [0.0, 2.0])
    sim = TxSim(b, device, solver=solver)
    sim.control.coupling_enabled.fill_(0)
    sim.step(100)
    q, _ = nt.eval_joint_coordinates(sim.model, sim.s0)
    q = q.numpy()
    assert q[0] == 0.0 and q[1] > 1e-3
    assert sim.solver.coupling_force.numpy()[0] == 0.0


def _site_tendon(b, **kw):
    body = point_mass(b, (1.0, 0.0, 0.0))
    return b.add_spatial_tendon([TendonSite(body=-1), TendonSite(body=body)], **kw)


@pytest.mark.parametrize(
    ("kw", "exc", "match"),
    [
        ({"stiffness": -1.0}, ValueError, "stiffness must be >= 0"),
        ({"damping": float("nan")}, ValueError, "damping must be finite"),
        ({"spring_lower": 2.0, "spring_upper": 1.0}, ValueError, "spring_lower .* must be <= spring_upper"),
        ({"lower_limit": 2.0, "upper_limit": 1.0}, ValueError, "lower_limit .* must be <= upper_limit"),
        ({"lower_limit": 1.0, "upper_limit": 1.1, "limit_margin": 0.1}, ValueError, "limit_margin"),
        ({"position_correction": 1.5}, ValueError, "position_correction must be <= 1"),
        ({"actuation_lower": 5.0, "actuation_upper": -5.0}, ValueError, "actuation_lower"),
        ({"armature": "heavy"}, TypeError, "armature must be a real number"),
        ({"enabled": 1}, TypeError, "enabled must be a bool"),
        ({"stifness": 1.0}, TypeError, "unknown property stifness"),
    ],
)
def test_transmission_properties_are_validated(kw, exc, match):
    b = nt.ModelBuilder()
    with pytest.raises(exc, match=match):
        _site_tendon(b, **kw)
    assert b.transmission_count == 0  # nothing appended


def test_fixed_tendon_and_coupling_validation():
    b, links, joints = two_hinges()
    # Negative, zero and repeated coefficients are allowed.
    t = b.add_fixed_tendon([joints[0], joints[0], joints[1]], [-0.5, 0.0, 0.25])
    with pytest.raises(ValueError, match="2 joints but 1 coefficients"):
        b.add_fixed_tendon(joints, [1.0])
    with pytest.raises(ValueError, match="not a joint index"):
        b.add_fixed_tendon([7], [1.0])
    with pytest.raises(ValueError, match="at least one joint"):
        b.add_fixed_tendon([], [])
    with pytest.raises(ValueError, match="distinct"):
        b.add_tendon_coupling(t, t, [0.0, 1.0])
    with pytest.raises(ValueError, match="1 to 5 entries"):
        b.add_tendon_coupling(t, None, [0.0] * 6)
    with pytest.raises(ValueError, match="not a transmission tendon"):
        b.add_tendon_coupling(t, 5, [0.0, 1.0])
    other = b.add_fixed_tendon([joints[1]], [1.0])
    c = b.add_tendon_coupling(t, other, [0.0, 2.0, 0.1])
    assert b.coupling_coefficients[c] == (0.0, 2.0, 0.1, 0.0, 0.0)
    # Tendons in different worlds cannot be coupled.
    scene = nt.ModelBuilder()
    w = nt.ModelBuilder()
    link = w.add_link(mass=1.0)
    j = w.add_joint_revolute(-1, link, axis=(0, 0, 1))
    w.add_fixed_tendon([j], [1.0])
    scene.add_world(w)
    scene.add_world(w)
    with pytest.raises(ValueError, match="different worlds"):
        scene.add_tendon_coupling(0, 1, [0.0, 1.0])
