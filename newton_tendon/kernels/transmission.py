"""Transmission tendons: one scalar length coordinate per tendon and the force elements acting on it.

A tendon's length ``l`` is routed (spatial tendons, ``newton_tendon.kernels.spatial``) or a weighted sum of
joint coordinates ``l = sum_i c_i q_i`` (fixed tendons). Its Jacobian is stored per *transmission
slot* as a 6-vector gradient ``J_s = dl/d(x, theta)`` of one body (COM translation, rotation):
a spatial tendon owns one slot per path element, a fixed tendon two per joint term (parent, child).
Tendon t's slots are ``path.start[t] + 2 term_start[t]`` up to the same expression at t + 1, so a
spatial element i sits in slot ``i + 2 term_start[t]``. Then

    dl/dt = J v = sum_s J_s . (v_b, w_b),        W = J M^-1 J^T = sum_b J_b^T M_b^-1 J_b,

with ``J_b`` the sum of the slots on body b (contributions on one body add before the response).

Force elements are rows of the shared impulse solver (spec "Tendon physics"): each row has an
accumulated impulse ``p`` [N s] over the step, a target velocity ``b``, a softness ``gamma`` and
bounds; one projected update is

    p_new = clamp(p - (J v_+ - b + gamma p) / (W + gamma), p_min, p_max).

The Jacobian and W are evaluated at the start of the step (spec: "the active region and the
geometry Jacobian are evaluated at the start of the step"). SolverXPBD evaluates ``J v_+`` with
the velocity its current iterate implies, ``v_pred + (accumulated pose change)/h``, and an impulse
``dp`` moves body b by ``h M_b^-1 J_b dp``, so the rows share the position iterations with joints,
contacts and cables; where tendons or couplings share a body, their rows use the split W_s of
"Mass splitting (SolverXPBD)" below. Rows (``l_n``, ``ldot_n`` at the step start):

* passive spring + damping: ``gamma = 1/(h (d + h k_a))``, ``b = -k_a e_n/(d + h k_a)``, free, with
  ``e_n = l_n - clamp(l_n, ls-, ls+)`` and ``k_a = k`` outside the interval or for equal ends, else 0
  (so ``p = -h k_a e_n - h (d + h k_a) ldot_+``);
* drive: ``r = a_{n+1} + kp (l_d - l_n) + kv ldot_d``, ``gamma = 1/(h (kv + h kp))``,
  ``b = r/(kv + h kp)``, ``p in h [F_min, F_max]``; without gains the impulse is ``h clamp(r)``;
  activation ``a_{n+1} = u + (a_n - u) exp(-h/tau)`` (``u`` for tau = 0);
* limits: ``g_low = l_n - l_min - m``, ``b = -eta g_low / h``, ``p >= 0``; ``g_high = l_max - l_n - m``,
  ``b = eta g_high / h``, ``p <= 0``; ``eta = beta`` for ``g < 0`` else 1; equal bounds: one free
  row ``b = beta (l_target - l_n)/h``; ``gamma = c/h^2``;
* dry friction: ``b = 0``, ``p in [-h F_f, h F_f]``, ``gamma = c_f/h^2``;
* armature: ``gamma = 1/a_t``, ``b = ldot_n - h b_l``, free, with ``b_l`` the length acceleration at
  zero generalized acceleration, a centred second difference of the routed length along the body
  velocities (0 for fixed tendons).

Signs: F > 0 lengthens, tension T = -F.
"""

import warp as wp

from newton_tendon.kernels.math import twist_angle, world_inv_inertia
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.spatial import SpatialPathModel, spatial_route
from newton_tendon.kernels.types import JOINT_REVOLUTE

wp.set_module_options({"enable_backward": False})

TRANSMISSION_SPATIAL = wp.constant(0)
TRANSMISSION_FIXED = wp.constant(1)
CURVATURE_STEP = wp.constant(1.0e-2)
"""Time offset [s] of the centred second difference that estimates the armature curvature bias."""
BIG = wp.constant(1.0e30)
TINY = wp.constant(1.0e-30)
"""Gains, damping and armature below this are absent: the row softness is their reciprocal, which
overflows float32 for denormal values (an armature of 7e-43 kg gave an infinite length)."""
TWO_PI = wp.constant(6.283185307179586)
JACOBIAN_CANCEL = wp.constant(1.0e-10)
"""A body's term ``J_b^T M_b^-1 J_b`` of W at or below this fraction of ``sum_s J_s^T M_b^-1 J_s`` over
its slots counts as 0: the slots cancel, as they do exactly for path pieces with both ends on one body
(internal, no gradient), and what is left is float32 round-off (measured <= 3e-15 of the slot sum).
Kept, that round-off (W ~ 1e-13 1/kg) turned a rigid row into impulses of ~1e14 N s (long fuzz profile,
NaN at step 39); counted as 0, a rigid row on a length no body motion can change has no effective mass
and exerts nothing. 1e-10 is |J_b| <= 1e-5 |J_s|, ~80 float32 ulps of cancellation."""


@wp.struct
class TransmissionModel:
    """Per-tendon geometry constants: spatial paths, fixed-tendon joint terms, and the joint and
    body data a joint coordinate needs."""

    type: wp.array(dtype=wp.int32)
    path: SpatialPathModel
    term_start: wp.array(dtype=wp.int32)
    term_joint: wp.array(dtype=wp.int32)
    term_coefficient: wp.array(dtype=float)
    joint_type: wp.array(dtype=wp.int32)
    joint_parent: wp.array(dtype=wp.int32)
    joint_child: wp.array(dtype=wp.int32)
    joint_X_p: wp.array(dtype=wp.transform)
    joint_X_c: wp.array(dtype=wp.transform)
    joint_axis: wp.array(dtype=wp.vec3)
    joint_qd_start: wp.array(dtype=wp.int32)
    body_com: wp.array(dtype=wp.vec3)


@wp.struct
class TransmissionScratch:
    """Per-element route points/gradients and per-slot Jacobians, written by the geometry."""

    point_a: wp.array(dtype=wp.vec3)
    grad_a: wp.array(dtype=wp.vec3)
    point_b: wp.array(dtype=wp.vec3)
    grad_b: wp.array(dtype=wp.vec3)
    jac: wp.array(dtype=wp.spatial_vector)
    body: wp.array(dtype=wp.int32)
    term_ref: wp.array(dtype=float)
    """Previous continuous coordinate of each fixed-tendon term (the unwrapping reference)."""
    term_q: wp.array(dtype=float)
    """Continuous coordinate of each fixed-tendon term at the last geometry evaluation."""


@wp.struct
class TransmissionParams:
    """Force-element parameters per tendon (model arrays, editable in place)."""

    stiffness: wp.array(dtype=float)
    damping: wp.array(dtype=float)
    spring_lower: wp.array(dtype=float)
    spring_upper: wp.array(dtype=float)
    activation_time: wp.array(dtype=float)
    actuation_lower: wp.array(dtype=float)
    actuation_upper: wp.array(dtype=float)
    lower_limit: wp.array(dtype=float)
    upper_limit: wp.array(dtype=float)
    limit_margin: wp.array(dtype=float)
    position_correction: wp.array(dtype=float)
    limit_compliance: wp.array(dtype=float)
    friction_loss: wp.array(dtype=float)
    friction_compliance: wp.array(dtype=float)
    armature: wp.array(dtype=float)


@wp.struct
class TransmissionControl:
    """Per-tendon commands (``Control`` arrays)."""

    drive_force: wp.array(dtype=float)
    target_length: wp.array(dtype=float)
    target_velocity: wp.array(dtype=float)
    position_gain: wp.array(dtype=float)
    velocity_gain: wp.array(dtype=float)
    enabled: wp.array(dtype=wp.int32)


ROWS = 6
"""Rows per tendon: 0 passive (spring + damping), 1 drive, 2 lower limit (or lock), 3 upper limit,
4 dry friction, 5 armature."""
vec6 = wp.types.vector(ROWS, float)


@wp.struct
class TransmissionWork:
    """Solver-owned per-tendon step data: start-of-step length, rate, W and curvature bias, the rows
    ``(b, gamma, lo, hi)`` set up at the step start, and their accumulated impulses ``mu`` [N s]."""

    l_n: wp.array(dtype=float)
    ldot_n: wp.array(dtype=float)
    bias: wp.array(dtype=float)
    w: wp.array(dtype=float)
    rate: wp.array(dtype=float)
    activation: wp.array(dtype=float)
    enabled: wp.array(dtype=wp.int32)
    row_b: wp.array(dtype=vec6)
    row_gamma: wp.array(dtype=vec6)
    row_lo: wp.array(dtype=vec6)
    row_hi: wp.array(dtype=vec6)
    mu: wp.array(dtype=vec6)
    body_split: wp.array(dtype=float)
    """Row owners per body (SolverXPBD mass splitting, ``count_row_owners``), shape [body_count], or
    shape [0] where no body can have two owners (then nothing is split)."""
    w_split: wp.array(dtype=float)
    """Split effective inverse mass W_s [1/kg] per tendon (``split_transmission_masses``), or shape [0]."""
    slot_w: wp.array(dtype=float)
    """Each transmission slot's term of its tendon's W [1/kg] (a body's J_b^T M_b^-1 J_b at its first
    slot, else 0), kept for the split W; shape [transmission_slot_count], or [0] without splitting."""


@wp.struct
class TransmissionReport:
    """Per-tendon results after a step (solver arrays)."""

    length: wp.array(dtype=float)
    velocity: wp.array(dtype=float)
    force: wp.array(dtype=float)
    tension: wp.array(dtype=float)
    actuation_force: wp.array(dtype=float)
    limit_force: wp.array(dtype=float)
    friction_force: wp.array(dtype=float)
    coupling_force: wp.array(dtype=float)
    potential_energy: wp.array(dtype=float)
    kinetic_energy: wp.array(dtype=float)


# ----------------------------------------------------------------------------------------------
# Geometry


@wp.func
def slot_begin(tm: TransmissionModel, t: int):
    return tm.path.start[t] + 2 * tm.term_start[t]


@wp.func
def point_jacobian(body_q: wp.array(dtype=wp.transform), com: wp.vec3, b: int, p: wp.vec3, g: wp.vec3):
    """6-vector gradient (g, (p - c) x g) of a length whose gradient at point p of body b is g."""
    if b < 0:
        return wp.spatial_vector()
    c = wp.transform_point(body_q[b], com)
    return wp.spatial_vector(g, wp.cross(p - c, g))


@wp.func
def joint_frames(tm: TransmissionModel, j: int, body_q: wp.array(dtype=wp.transform)):
    p = tm.joint_parent[j]
    X_wp = tm.joint_X_p[j]
    if p >= 0:
        X_wp = body_q[p] * tm.joint_X_p[j]
    X_wc = body_q[tm.joint_child[j]] * tm.joint_X_c[j]
    return X_wp, X_wc


@wp.func
def body_com(tm: TransmissionModel, b: int, body_q: wp.array(dtype=wp.transform)):
    if b < 0:
        return wp.vec3(0.0)
    return wp.transform_point(body_q[b], tm.body_com[b])


@wp.func
def joint_term(tm: TransmissionModel, j: int, body_q: wp.array(dtype=wp.transform), q_ref: float):
    """(q, J_parent, J_child) of revolute/prismatic joint j: its coordinate [rad or m] and the
    6-vector gradients dq/d(x, theta) of its parent and child bodies.

    revolute: q = twist of the child frame about the axis, unwrapped to the branch nearest
    ``q_ref`` (the previous coordinate), so a joint turning past +-pi keeps a continuous
    coordinate; J_c = (0, a), J_p = (0, -a).
    prismatic: q = (x_c - x_p) . a with a fixed to the parent, J_c = (a, r_c x a),
    J_p = (-a, -(r_p x a) + a x (x_c - x_p)) (the axis turns with the parent).
    """
    X_wp, X_wc = joint_frames(tm, j, body_q)
    rot_p = wp.transform_get_rotation(X_wp)
    axis = tm.joint_axis[tm.joint_qd_start[j]]
    a = wp.quat_rotate(rot_p, axis)
    p = tm.joint_parent[j]
    c = tm.joint_child[j]
    if tm.joint_type[j] == JOINT_REVOLUTE:
        q = twist_angle(wp.quat_inverse(rot_p) * wp.transform_get_rotation(X_wc), axis)
        q = q + TWO_PI * wp.round((q_ref - q) / TWO_PI)
        return q, wp.spatial_vector(wp.vec3(0.0), -a), wp.spatial_vector(wp.vec3(0.0), a)
    x_p = wp.transform_get_translation(X_wp)
    x_c = wp.transform_get_translation(X_wc)
    d = x_c - x_p
    r_c = x_c - body_com(tm, c, body_q)
    r_p = x_p - body_com(tm, p, body_q)
    jp = wp.spatial_vector(-a, -wp.cross(r_p, a) + wp.cross(a, d))
    return wp.dot(d, a), jp, wp.spatial_vector(a, wp.cross(r_c, a))


@wp.func
def transmission_geometry(
    tm: TransmissionModel, t: int, body_q: wp.array(dtype=wp.transform), scratch: TransmissionScratch
):
    """Length [m] (or the joint-weighted coordinate) of tendon t; writes its slots' body and 6-vector
    gradient into ``scratch`` (world bodies get zero gradients)."""
    s0 = slot_begin(tm, t)
    length = float(0.0)
    if tm.type[t] == TRANSMISSION_FIXED:
        k0 = tm.term_start[t]
        for k in range(k0, tm.term_start[t + 1]):
            j = tm.term_joint[k]
            c = tm.term_coefficient[k]
            q, jp, jc = joint_term(tm, j, body_q, scratch.term_ref[k])
            scratch.term_q[k] = q
            length = length + c * q
            s = s0 + 2 * (k - k0)
            scratch.body[s] = tm.joint_parent[j]
            scratch.jac[s] = jp * c
            scratch.body[s + 1] = tm.joint_child[j]
            scratch.jac[s + 1] = jc * c
        return length
    length = spatial_route(tm.path, t, body_q, scratch.point_a, scratch.grad_a, scratch.point_b, scratch.grad_b)
    e0 = tm.path.start[t]
    for i in range(e0, tm.path.start[t + 1]):
        b = tm.path.body[i]
        s = s0 + (i - e0)
        scratch.body[s] = b
        com = wp.vec3(0.0)
        if b >= 0:
            com = tm.body_com[b]
        scratch.jac[s] = point_jacobian(body_q, com, b, scratch.point_a[i], scratch.grad_a[i]) + point_jacobian(
            body_q, com, b, scratch.point_b[i], scratch.grad_b[i]
        )
    return length


@wp.func
def slot_end(tm: TransmissionModel, t: int):
    return slot_begin(tm, t + 1)


@wp.func
def transmission_rate(
    tm: TransmissionModel, t: int, body_qd: wp.array(dtype=wp.spatial_vector), scratch: TransmissionScratch
):
    """J v [m/s]: the length rate for body velocities ``body_qd`` (world bodies do not move)."""
    rate = float(0.0)
    for s in range(slot_begin(tm, t), slot_end(tm, t)):
        b = scratch.body[s]
        if b >= 0:
            rate = rate + wp.dot(scratch.jac[s], body_qd[b])
    return rate


@wp.func
def iterate_rate(
    tm: TransmissionModel,
    t: int,
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_delta: wp.array(dtype=wp.spatial_vector),
    inv_h: float,
    scratch: TransmissionScratch,
):
    """J v_+ at the current iterate, with v_+ = v_pred + (accumulated pose change)/h: the velocity
    the iterate implies, without differencing two rounded float32 lengths (a 1 m route moving 2 mm/s
    changes by 17 ulps per 1 ms step)."""
    rate = float(0.0)
    for s in range(slot_begin(tm, t), slot_end(tm, t)):
        b = scratch.body[s]
        if b >= 0:
            rate = rate + wp.dot(scratch.jac[s], body_qd[b] + body_delta[b] * inv_h)
    return rate


@wp.func
def body_jacobian(tm: TransmissionModel, t: int, scratch: TransmissionScratch, b: int):
    """J_b: the sum of tendon t's slot gradients on body b."""
    jb = wp.spatial_vector()
    for s in range(slot_begin(tm, t), slot_end(tm, t)):
        if scratch.body[s] == b:
            jb = jb + scratch.jac[s]
    return jb


@wp.func
def response(bodies: BodyModel, b: int, q: wp.transform, jb: wp.spatial_vector):
    """M_b^-1 J_b (dx per unit impulse, dtheta per unit impulse) of a moving body."""
    inv_i = world_inv_inertia(q, bodies.inv_inertia[b])
    return wp.spatial_vector(wp.spatial_top(jb) * bodies.inv_mass[b], inv_i * wp.spatial_bottom(jb))


@wp.func
def slot_inverse_mass(
    tm: TransmissionModel,
    bodies: BodyModel,
    t: int,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    b: int,
):
    """sum over tendon t's slots s on body b of J_s^T M_b^-1 J_s [1/kg]: the size of b's term of W
    without cancellation between its slots."""
    w = float(0.0)
    for s in range(slot_begin(tm, t), slot_end(tm, t)):
        if scratch.body[s] == b:
            js = scratch.jac[s]
            w = w + wp.dot(js, response(bodies, b, body_q[b], js))
    return w


@wp.func
def uncancelled(w_b: float, w_slots: float):
    """A body's term of W, or 0 where it is cancellation round-off of its slots (JACOBIAN_CANCEL)."""
    if w_b > JACOBIAN_CANCEL * w_slots:
        return w_b
    return 0.0


@wp.func
def body_inverse_mass(
    tm: TransmissionModel,
    bodies: BodyModel,
    t: int,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    s: int,
):
    """Moving body b of tendon t's slot s and its term J_b^T M_b^-1 J_b of W [1/kg], where s is b's
    first slot of t (else b = -1, term 0: each body counts once); a term that is only cancellation
    round-off counts as 0 (JACOBIAN_CANCEL)."""
    b = scratch.body[s]
    if not is_moving_body(bodies, b):
        return -1, 0.0
    for r in range(slot_begin(tm, t), s):
        if scratch.body[r] == b:
            return -1, 0.0
    jb = body_jacobian(tm, t, scratch, b)
    w_b = wp.dot(jb, response(bodies, b, body_q[b], jb))
    return b, uncancelled(w_b, slot_inverse_mass(tm, bodies, t, body_q, scratch, b))


@wp.func
def effective_inverse_mass(
    tm: TransmissionModel,
    bodies: BodyModel,
    t: int,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    slot_w: wp.array(dtype=float),
):
    """W = sum over distinct moving bodies of J_b^T M_b^-1 J_b [1/kg] (``body_inverse_mass``); each
    slot's term (0 but at a body's first slot) goes to ``slot_w`` unless it has shape [0]."""
    w = float(0.0)
    for s in range(slot_begin(tm, t), slot_end(tm, t)):
        b, w_b = body_inverse_mass(tm, bodies, t, body_q, scratch, s)
        w = w + w_b
        if slot_w.shape[0] > 0:
            slot_w[s] = w_b
    return w


@wp.kernel
def transmission_lengths(
    tm: TransmissionModel,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    # Out:
    length: wp.array(dtype=float),
):
    """Length of every transmission tendon at the poses body_q."""
    t = wp.tid()
    length[t] = transmission_geometry(tm, t, body_q, scratch)


@wp.kernel
def shift_poses(
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    com: wp.array(dtype=wp.vec3),
    tau: float,
    # Out:
    q_plus: wp.array(dtype=wp.transform),
    q_minus: wp.array(dtype=wp.transform),
):
    """Poses a time +-tau away along the current velocities (constant COM velocity and spin)."""
    b = wp.tid()
    q = body_q[b]
    v = wp.spatial_top(body_qd[b])
    w = wp.spatial_bottom(body_qd[b])
    c = wp.transform_point(q, com[b])
    rot = wp.transform_get_rotation(q)
    angle = wp.length(w) * tau
    rp = rot
    rm = rot
    if angle > 1.0e-12:
        axis = wp.normalize(w)
        rp = wp.normalize(wp.quat_from_axis_angle(axis, angle) * rot)
        rm = wp.normalize(wp.quat_from_axis_angle(axis, -angle) * rot)
    cp = c + v * tau
    cm = c - v * tau
    q_plus[b] = wp.transform(cp - wp.quat_rotate(rp, com[b]), rp)
    q_minus[b] = wp.transform(cm - wp.quat_rotate(rm, com[b]), rm)


# ----------------------------------------------------------------------------------------------
# Step


@wp.kernel
def begin_transmissions(
    tm: TransmissionModel,
    bodies: BodyModel,
    par: TransmissionParams,
    ctrl: TransmissionControl,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    q_plus: wp.array(dtype=wp.transform),
    q_minus: wp.array(dtype=wp.transform),
    activation_in: wp.array(dtype=float),
    impulse_in: wp.array(dtype=vec6),
    warm: int,
    scratch: TransmissionScratch,
    # Out:
    activation_out: wp.array(dtype=float),
    work: TransmissionWork,
):
    """Step start: length, Jacobian (kept in ``scratch`` for the step), W, rate and curvature bias
    at the input pose, the activation update
    ``a_{n+1} = u + (a_n - u) exp(-h/tau)`` (held while disabled or while the command u is not
    finite), and zero row impulses."""
    t = wp.tid()
    enabled = ctrl.enabled[t]
    work.enabled[t] = enabled
    a = activation_in[t]
    u = ctrl.drive_force[t]
    # A NaN or inf command is ignored for the step (docs/robustness.md, "Run-time input"): through the
    # filter it would stay in the activation state for good, so the activation holds a_n instead.
    if enabled != 0 and wp.isfinite(u):
        tau = par.activation_time[t]
        if tau > 0.0:
            a = u + (a - u) * wp.exp(-dt / tau)
        else:
            a = u
    activation_out[t] = a
    work.activation[t] = a
    bias = float(0.0)
    if tm.type[t] == TRANSMISSION_SPATIAL and par.armature[t] > TINY:
        lp = transmission_geometry(tm, t, q_plus, scratch)
        lm = transmission_geometry(tm, t, q_minus, scratch)
        l0 = transmission_geometry(tm, t, body_q, scratch)
        bias = (lp - 2.0 * l0 + lm) / (CURVATURE_STEP * CURVATURE_STEP)
    work.bias[t] = bias
    work.l_n[t] = transmission_geometry(tm, t, body_q, scratch)
    work.ldot_n[t] = transmission_rate(tm, t, body_qd, scratch)
    work.w[t] = effective_inverse_mass(tm, bodies, t, body_q, scratch, work.slot_w)
    setup_rows(par, ctrl, t, dt, work)
    mu = vec6()
    if warm != 0:
        # Warm start (VBD): last step's impulses, projected onto this step's bounds.
        prev = impulse_in[t]
        lo = work.row_lo[t]
        hi = work.row_hi[t]
        for r in range(ROWS):
            mu[r] = wp.clamp(prev[r], lo[r], hi[r])
    work.mu[t] = mu


@wp.func
def total_impulse(work: TransmissionWork, t: int):
    """Sum of a tendon's row impulses this step [N s]."""
    mu = work.mu[t]
    return mu[0] + mu[1] + mu[2] + mu[3] + mu[4] + mu[5]


@wp.func
def setup_rows(par: TransmissionParams, ctrl: TransmissionControl, t: int, dt: float, work: TransmissionWork):
    """Each row's target b [m/s], softness gamma [1/kg] and impulse bounds [N s] from the step-start
    length, rate and activation (module docstring). An absent row gets lo = hi = 0; a drive without
    gains is a fixed impulse lo = hi = h clamp(r)."""
    h = dt
    l_n = work.l_n[t]
    b = vec6()
    g = vec6(1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    lo = vec6()
    hi = vec6()

    # 0: passive spring and damping.
    k = par.stiffness[t]
    lo_s = par.spring_lower[t]
    hi_s = par.spring_upper[t]
    e = l_n - wp.clamp(l_n, lo_s, hi_s)
    k_a = k
    if lo_s < hi_s and e == 0.0:
        k_a = 0.0
    soft = par.damping[t] + h * k_a
    if soft > TINY:
        b[0] = -k_a * e / soft
        g[0] = 1.0 / (h * soft)
        lo[0] = -BIG
        hi[0] = BIG

    # 1: drive (feedforward after activation, implicit servo, bounded actuator force).
    kp = ctrl.position_gain[t]
    kv = ctrl.velocity_gain[t]
    r = work.activation[t] + kp * (ctrl.target_length[t] - l_n) + kv * ctrl.target_velocity[t]
    gain = kv + h * kp
    if gain > TINY:
        b[1] = r / gain
        g[1] = 1.0 / (h * gain)
        lo[1] = h * par.actuation_lower[t]
        hi[1] = h * par.actuation_upper[t]
    else:
        f = h * wp.clamp(r, par.actuation_lower[t], par.actuation_upper[t])
        lo[1] = f
        hi[1] = f

    # 2, 3: length bounds, or one bilateral lock in row 2.
    l_min = par.lower_limit[t]
    l_max = par.upper_limit[t]
    beta = par.position_correction[t]
    margin = par.limit_margin[t]
    gamma_l = par.limit_compliance[t] / (h * h)
    if l_min == l_max:
        b[2] = beta * (l_min - l_n) / h
        g[2] = gamma_l
        lo[2] = -BIG
        hi[2] = BIG
    else:
        if l_min > -BIG:
            gap = l_n - l_min - margin
            eta = float(1.0)
            if gap < 0.0:
                eta = beta
            b[2] = -eta * gap / h
            g[2] = gamma_l
            hi[2] = BIG
        if l_max < BIG:
            gap = l_max - l_n - margin
            eta = float(1.0)
            if gap < 0.0:
                eta = beta
            b[3] = eta * gap / h
            g[3] = gamma_l
            lo[3] = -BIG

    # 4: dry friction.
    f_f = par.friction_loss[t]
    if f_f > 0.0:
        g[4] = par.friction_compliance[t] / (h * h)
        lo[4] = -h * f_f
        hi[4] = h * f_f

    # 5: armature with the curvature bias.
    a_t = par.armature[t]
    if a_t > TINY:
        b[5] = work.ldot_n[t] - h * work.bias[t]
        g[5] = 1.0 / a_t
        lo[5] = -BIG
        hi[5] = BIG
    work.row_b[t] = b
    work.row_gamma[t] = g
    work.row_lo[t] = lo
    work.row_hi[t] = hi


@wp.func
def row_update(p: float, rate: float, target: float, gamma: float, w: float, lo: float, hi: float):
    """One projected update of a row; returns the new accumulated impulse."""
    denom = w + gamma
    if denom <= 0.0:
        return wp.clamp(p, lo, hi)
    return wp.clamp(p - (rate - target + gamma * p) / denom, lo, hi)


@wp.kernel
def solve_transmissions(
    tm: TransmissionModel,
    bodies: BodyModel,
    slot_base: int,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_delta: wp.array(dtype=wp.spatial_vector),
    scratch: TransmissionScratch,
    work: TransmissionWork,
    # Out:
    slot_delta: wp.array(dtype=wp.spatial_vector),
):
    """XPBD: one Gauss-Seidel pass over a tendon's rows at the current iterate (see module
    docstring); the pose change of each body ``h M_b^-1 J_s dp`` goes to the tendon's slots
    ``slot_base + s``."""
    t = wp.tid()
    s0 = slot_begin(tm, t)
    s1 = slot_end(tm, t)
    for s in range(s0, s1):
        slot_delta[slot_base + s] = wp.spatial_vector()
    if work.enabled[t] == 0:
        return
    h = dt
    # The Jacobian (scratch) and W are those of the step start, as the spec's rows prescribe; W is the
    # split one where bodies are shared by several row owners (mass splitting, below).
    w = work.w[t]
    if work.w_split.shape[0] > 0:
        w = work.w_split[t]
    rate = iterate_rate(tm, t, body_qd, body_delta, 1.0 / h, scratch)
    b = work.row_b[t]
    g = work.row_gamma[t]
    lo = work.row_lo[t]
    hi = work.row_hi[t]
    mu = work.mu[t]
    dp = float(0.0)
    for r in range(ROWS):
        p_new = row_update(mu[r], rate, b[r], g[r], w, lo[r], hi[r])
        rate = rate + w * (p_new - mu[r])
        dp = dp + p_new - mu[r]
        mu[r] = p_new
    work.mu[t] = mu
    # The couplings run after this pass and read the rate with these rows' impulses included
    # (Gauss-Seidel across the tendon's rows and its couplings). Reading the rate from before them
    # made a coupling and a limit row on the same tendon correct one error twice per pass; with
    # both rigid and a joint pulling the bodies back, that Jacobi overshoot grew ~1.4x per pass.
    work.rate[t] = rate
    if dp == 0.0:
        return
    for s in range(s0, s1):
        b_s = scratch.body[s]
        if is_moving_body(bodies, b_s):
            slot_delta[slot_base + s] = response(bodies, b_s, body_q[b_s], scratch.jac[s]) * (h * dp)


@wp.kernel
def report_transmissions(
    tm: TransmissionModel,
    par: TransmissionParams,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    scratch: TransmissionScratch,
    work: TransmissionWork,
    # Out:
    rep: TransmissionReport,
    impulse_out: wp.array(dtype=vec6),
):
    """Results of the step at its final pose: length, rate, forces (impulse / h), energies.
    A disabled tendon reports zero forces (its geometry stays inspectable)."""
    t = wp.tid()
    report_geometry(tm, par, t, body_q, body_qd, scratch, rep)
    inv_h = 1.0 / dt
    mu = work.mu[t]
    f_limit = (mu[2] + mu[3]) * inv_h
    total = total_impulse(work, t) * inv_h
    if work.enabled[t] == 0:
        total = 0.0
        f_limit = 0.0
    rep.force[t] = total
    rep.tension[t] = -total
    rep.actuation_force[t] = mu[1] * inv_h * float(work.enabled[t])
    rep.limit_force[t] = f_limit
    rep.friction_force[t] = mu[4] * inv_h * float(work.enabled[t])
    rep.coupling_force[t] = 0.0
    impulse_out[t] = mu


@wp.func
def report_geometry(
    tm: TransmissionModel,
    par: TransmissionParams,
    t: int,
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    scratch: TransmissionScratch,
    rep: TransmissionReport,
):
    """Length, rate and the two energies (spring 0.5 k e^2, armature 0.5 a ldot^2) at a state."""
    length = transmission_geometry(tm, t, body_q, scratch)
    rate = transmission_rate(tm, t, body_qd, scratch)
    rep.length[t] = length
    rep.velocity[t] = rate
    e = length - wp.clamp(length, par.spring_lower[t], par.spring_upper[t])
    rep.potential_energy[t] = 0.5 * par.stiffness[t] * e * e
    rep.kinetic_energy[t] = 0.5 * par.armature[t] * rate * rate


@wp.kernel
def update_transmission_geometry(
    tm: TransmissionModel,
    par: TransmissionParams,
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    scratch: TransmissionScratch,
    # Out:
    rep: TransmissionReport,
):
    """Length, rate, energies and slot gradients at the given state, without touching last-step forces."""
    t = wp.tid()
    report_geometry(tm, par, t, body_q, body_qd, scratch, rep)


@wp.kernel
def reset_transmissions(
    world_mask: wp.array(dtype=wp.int32),
    world: wp.array(dtype=wp.int32),
    reference: wp.array(dtype=float),
    term_start: wp.array(dtype=wp.int32),
    term_initial: wp.array(dtype=float),
    # Out:
    activation: wp.array(dtype=float),
    state_reference: wp.array(dtype=float),
    term_coordinate: wp.array(dtype=float),
):
    """Reset the selected worlds' tendons: zero activation, reference lengths and fixed-tendon
    joint coordinates from the model."""
    t = wp.tid()
    w = world[t]
    if w >= 0 and world_mask[w] == 0:
        return
    activation[t] = 0.0
    state_reference[t] = reference[t]
    for k in range(term_start[t], term_start[t + 1]):
        term_coordinate[k] = term_initial[k]


# ----------------------------------------------------------------------------------------------
# Couplings


@wp.struct
class CouplingModel:
    """Polynomial couplings ``C = l1 - l1_ref - f(l2 - l2_ref)``, ``f = c0 + c1 x + ... + c4 x^4``.

    Coupling c owns slots ``slot_start[c] ..``: copies of its first tendon's slots, then of its
    second's (``second = -1``: none)."""

    first: wp.array(dtype=wp.int32)
    second: wp.array(dtype=wp.int32)
    coefficients: wp.array(dtype=wp.types.vector(5, float))
    compliance: wp.array(dtype=float)
    position_correction: wp.array(dtype=float)
    slot_start: wp.array(dtype=wp.int32)


@wp.struct
class CouplingWork:
    """Per-coupling step data: C and f'(x) at the step start, the accumulated impulse [N s]."""

    c_n: wp.array(dtype=float)
    slope: wp.array(dtype=float)
    w: wp.array(dtype=float)
    p: wp.array(dtype=float)
    active: wp.array(dtype=wp.int32)
    w_split: wp.array(dtype=float)
    """Split W_s,C [1/kg] per coupling (``split_coupling_masses``), or shape [0] (no mass splitting)."""
    slot_w: wp.array(dtype=float)
    """Each coupling slot's term of its coupling's W [1/kg] (see ``TransmissionWork.slot_w``), or shape [0]."""


@wp.func
def polynomial(cf: wp.types.vector(5, float), x: float):
    """(f(x), f'(x)) by Horner's rule."""
    f = cf[4]
    df = float(0.0)
    for i in range(3, -1, -1):
        df = df * x + f
        f = f * x + cf[i]
    return f, df


@wp.func
def coupling_jacobian(tm: TransmissionModel, scratch: TransmissionScratch, t1: int, t2: int, slope: float, b: int):
    """J_C on body b: J1_b - f' J2_b."""
    jb = body_jacobian(tm, t1, scratch, b)
    if t2 >= 0:
        jb = jb - body_jacobian(tm, t2, scratch, b) * slope
    return jb


@wp.func
def coupling_slot(tm: TransmissionModel, t1: int, t2: int, n1: int, k: int):
    """Transmission slot of the k-th slot of a coupling (the first tendon's, then the second's)."""
    if k < n1:
        return slot_begin(tm, t1) + k
    return slot_begin(tm, t2) + (k - n1)


@wp.func
def coupling_body_inverse_mass(
    tm: TransmissionModel,
    bodies: BodyModel,
    t1: int,
    t2: int,
    slope: float,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    k: int,
):
    """Moving body b of a coupling's k-th slot and its term J_C,b^T M_b^-1 J_C,b of W_C [1/kg], where
    k is b's first slot of the coupling (else b = -1, term 0); round-off terms count as 0
    (JACOBIAN_CANCEL)."""
    n1 = slot_end(tm, t1) - slot_begin(tm, t1)
    b = scratch.body[coupling_slot(tm, t1, t2, n1, k)]
    if not is_moving_body(bodies, b):
        return -1, 0.0
    for r in range(k):
        if scratch.body[coupling_slot(tm, t1, t2, n1, r)] == b:
            return -1, 0.0
    jb = coupling_jacobian(tm, scratch, t1, t2, slope, b)
    w_slots = slot_inverse_mass(tm, bodies, t1, body_q, scratch, b)
    if t2 >= 0:
        w_slots = w_slots + slope * slope * slot_inverse_mass(tm, bodies, t2, body_q, scratch, b)
    return b, uncancelled(wp.dot(jb, response(bodies, b, body_q[b], jb)), w_slots)


@wp.func
def coupling_slot_count(tm: TransmissionModel, t1: int, t2: int):
    n = slot_end(tm, t1) - slot_begin(tm, t1)
    if t2 >= 0:
        n = n + slot_end(tm, t2) - slot_begin(tm, t2)
    return n


@wp.func
def coupling_inverse_mass(
    tm: TransmissionModel,
    bodies: BodyModel,
    t1: int,
    t2: int,
    slope: float,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    slot_w: wp.array(dtype=float),
    k0: int,
):
    """W_C = sum over the distinct moving bodies of both tendons of J_C,b^T M_b^-1 J_C,b
    (``coupling_body_inverse_mass``); the k-th slot's term goes to ``slot_w[k0 + k]`` unless
    ``slot_w`` has shape [0]."""
    w = float(0.0)
    for k in range(coupling_slot_count(tm, t1, t2)):
        b, w_b = coupling_body_inverse_mass(tm, bodies, t1, t2, slope, body_q, scratch, k)
        w = w + w_b
        if slot_w.shape[0] > 0:
            slot_w[k0 + k] = w_b
    return w


@wp.kernel
def begin_couplings(
    tm: TransmissionModel,
    cm: CouplingModel,
    bodies: BodyModel,
    enabled: wp.array(dtype=wp.int32),
    reference: wp.array(dtype=float),
    body_q: wp.array(dtype=wp.transform),
    impulse_in: wp.array(dtype=float),
    warm: int,
    scratch: TransmissionScratch,
    work: TransmissionWork,
    # Out:
    cw: CouplingWork,
):
    """Step start: C_n and f'(x_n) from the tendons' start-of-step lengths (evaluated once per step,
    as the spec prescribes); a coupling acts only while it and both tendons are enabled."""
    c = wp.tid()
    t1 = cm.first[c]
    t2 = cm.second[c]
    cw.p[c] = 0.0
    if warm != 0:
        cw.p[c] = impulse_in[c]
    active = enabled[c] * work.enabled[t1]
    x = float(0.0)
    if t2 >= 0:
        active = active * work.enabled[t2]
        x = work.l_n[t2] - reference[t2]
    f, df = polynomial(cm.coefficients[c], x)
    if t2 < 0:
        f = cm.coefficients[c][0]
        df = 0.0
    cw.active[c] = active
    cw.c_n[c] = work.l_n[t1] - reference[t1] - f
    cw.slope[c] = df
    cw.w[c] = coupling_inverse_mass(tm, bodies, t1, t2, df, body_q, scratch, cw.slot_w, cm.slot_start[c])


# ----------------------------------------------------------------------------------------------
# Mass splitting (SolverXPBD)
#
# SolverXPBD's transmission pass is block Jacobi across *row owners*: each enabled tendon with a
# responsive row (lo < hi; a fixed impulse lo = hi cannot overshoot) is one block, solved
# Gauss-Seidel over its rows, and each active coupling is another; the owners' pose corrections
# h M_b^-1 J_ib dp_i are summed per body. With A = J M^-1 J^T over the owners' Jacobians J_i and
# D = diag(W_i), W_i = J_i M^-1 J_i^T, one pass maps the impulse error by I - D^-1 A. N rigid rows
# acting on one coordinate give D^-1 A the eigenvalue N: the pass multiplies that error by 1 - N
# (-2 for three rows), so rows that demand incompatible motions of one body over-correct it
# together, and position correction feeds the growth from step to step (a lock, a coupling and a
# limit on one prismatic body: ~1.1x per step to overflow).
#
# Mass splitting (Tonge, Benevolenski, Voroshilov, Mass splitting for jitter-free parallel rigid
# body simulation, SIGGRAPH 2012): each owner sees body b as a sub-body of inverse mass n_b M_b^-1,
# n_b [-] the number of owners acting on b this step, and the sub-bodies' corrections are averaged:
#
#     dx_b = (1/n_b) sum_i h (n_b M_b^-1) J_ib dp_i = h M_b^-1 sum_i J_ib dp_i,
#
# the unchanged sum of each impulse's true response (so the body's momentum change is exactly the
# impulses the rows report), while each owner's effective inverse mass becomes
#
#     W_s,i = sum_b n_b J_ib^T M_b^-1 J_ib   [1/kg, or 1/(kg m^2) for an angle-valued tendon].
#
# By Cauchy-Schwarz in the M_b^-1 norm, |sum_i J_ib x_i|^2 <= n_b sum_i |J_ib x_i|^2 over b's n_b
# owners, so x^T A x <= sum_i W_s,i x_i^2, i.e. 0 <= A <= D_s: the eigenvalues of D_s^-1 A lie in
# [0, 1], and those of the pass's map I - (D_s + G)^-1 (A + G) (G = diag(gamma) >= 0) in [0, 1).
# Rows never over-correct together: conflicting rigid rows settle at their compromise (their
# impulses drift apart within the step, bounded by the step's iterations, as for any unmeetable
# row), and rows that agree converge as before. With n_b = 1 on every body W_s = W bit for bit, so
# scenes whose bodies each carry at most one owner are unchanged. A coupling still reads its
# tendons' rates after their rows (Gauss-Seidel, see ``solve_transmissions``), in the split view
# J v + W_s dp of the tendon's sub-bodies.


@wp.func
def is_row_owner(work: TransmissionWork, t: int):
    """Whether tendon t acts through a row that responds to the motion (lo < hi) this step."""
    if work.enabled[t] == 0:
        return False
    lo = work.row_lo[t]
    hi = work.row_hi[t]
    for r in range(ROWS):
        if lo[r] < hi[r]:
            return True
    return False


@wp.kernel
def count_row_owners(
    bodies: BodyModel,
    slot_base: int,
    slot_tendon: wp.array(dtype=wp.int32),
    slot_coupling: wp.array(dtype=wp.int32),
    work: TransmissionWork,
    cw: CouplingWork,
):
    """n_b = number of row owners (tendons with a responsive row, active couplings) with a slot on
    moving body b, at least 1, into ``work.body_split``. A body's slots are sorted, so the slots of one
    owner on it are adjacent; transmission slots start at ``slot_base``, coupling slots follow them."""
    b = wp.tid()
    n = int(0)
    if is_moving_body(bodies, b):
        tx_count = slot_tendon.shape[0]
        last_t = int(-1)
        last_c = int(-1)
        for i in range(bodies.slot_start[b], bodies.slot_start[b + 1]):
            s = bodies.slot[i] - slot_base
            if s >= 0 and s < tx_count:
                t = slot_tendon[s]
                if t != last_t:
                    last_t = t
                    if is_row_owner(work, t):
                        n = n + 1
            elif s >= tx_count and s < tx_count + slot_coupling.shape[0]:
                c = slot_coupling[s - tx_count]
                if c != last_c:
                    last_c = c
                    if cw.active[c] != 0:
                        n = n + 1
    work.body_split[b] = float(wp.max(n, 1))


@wp.kernel
def split_transmission_masses(
    tm: TransmissionModel,
    bodies: BodyModel,
    scratch: TransmissionScratch,
    work: TransmissionWork,
):
    """W_s = sum_b n_b J_b^T M_b^-1 J_b [1/kg] of each tendon from the step-start terms in
    ``work.slot_w`` (mass splitting, above), into ``work.w_split``; equals ``work.w`` bit for bit
    where every n_b is 1 (same terms, same order)."""
    t = wp.tid()
    w = float(0.0)
    for s in range(slot_begin(tm, t), slot_end(tm, t)):
        b = scratch.body[s]
        if is_moving_body(bodies, b):
            w = w + work.body_split[b] * work.slot_w[s]
    work.w_split[t] = w


@wp.kernel
def split_coupling_masses(
    tm: TransmissionModel,
    cm: CouplingModel,
    bodies: BodyModel,
    scratch: TransmissionScratch,
    work: TransmissionWork,
    # In/out:
    cw: CouplingWork,
):
    """W_s,C = sum_b n_b J_C,b^T M_b^-1 J_C,b [1/kg] of each coupling from the step-start terms in
    ``cw.slot_w`` (mass splitting, above), into ``cw.w_split``; equals ``cw.w`` bit for bit where
    every n_b is 1."""
    c = wp.tid()
    t1 = cm.first[c]
    t2 = cm.second[c]
    n1 = slot_end(tm, t1) - slot_begin(tm, t1)
    k0 = cm.slot_start[c]
    w = float(0.0)
    for k in range(coupling_slot_count(tm, t1, t2)):
        b = scratch.body[coupling_slot(tm, t1, t2, n1, k)]
        if is_moving_body(bodies, b):
            w = w + work.body_split[b] * cw.slot_w[k0 + k]
    cw.w_split[c] = w


@wp.kernel
def solve_couplings(
    tm: TransmissionModel,
    cm: CouplingModel,
    bodies: BodyModel,
    slot_base: int,
    dt: float,
    body_q: wp.array(dtype=wp.transform),
    scratch: TransmissionScratch,
    work: TransmissionWork,
    # In/out:
    cw: CouplingWork,
    # Out:
    slot_delta: wp.array(dtype=wp.spatial_vector),
):
    """One projected update of each coupling row at the current iterate (after
    ``solve_transmissions`` refreshed the tendons' geometry; the rates it left in ``work.rate``
    already include its rows' impulses of this pass): ``gamma = c/h^2``, target
    ``-beta C_n/h``, bilateral; ``J_C = J1 - f' J2``. Slots ``slot_base + slot_start[c] ..``."""
    c = wp.tid()
    t1 = cm.first[c]
    t2 = cm.second[c]
    k0 = cm.slot_start[c]
    n1 = slot_end(tm, t1) - slot_begin(tm, t1)
    n2 = int(0)
    if t2 >= 0:
        n2 = slot_end(tm, t2) - slot_begin(tm, t2)
    for k in range(k0, k0 + n1 + n2):
        slot_delta[slot_base + k] = wp.spatial_vector()
    if cw.active[c] == 0:
        return
    h = dt
    slope = cw.slope[c]
    rate = work.rate[t1]
    if t2 >= 0:
        rate = rate - slope * work.rate[t2]
    w = cw.w[c]
    if cw.w_split.shape[0] > 0:
        w = cw.w_split[c]
    p = cw.p[c]
    gamma = cm.compliance[c] / (h * h)
    p_new = row_update(p, rate, -cm.position_correction[c] * cw.c_n[c] / h, gamma, w, -BIG, BIG)
    cw.p[c] = p_new
    dp = p_new - p
    if dp == 0.0:
        return
    for k in range(n1 + n2):
        s = coupling_slot(tm, t1, t2, n1, k)
        scale = h * dp
        if k >= n1:
            scale = -slope * h * dp
        b = scratch.body[s]
        if is_moving_body(bodies, b):
            slot_delta[slot_base + k0 + k] = response(bodies, b, body_q[b], scratch.jac[s]) * scale


@wp.kernel
def report_coupling_forces(
    cm: CouplingModel,
    coupling_start: wp.array(dtype=wp.int32),
    coupling_of: wp.array(dtype=wp.int32),
    dt: float,
    cw: CouplingWork,
    work: TransmissionWork,
    # Out:
    rep: TransmissionReport,
):
    """Coupling forces: lambda = p/h per coupling; a tendon receives F1 = lambda as the first
    tendon and F2 = -f' lambda as the second, added to its total force (and tension)."""
    t = wp.tid()
    total = float(0.0)
    for i in range(coupling_start[t], coupling_start[t + 1]):
        c = coupling_of[i]
        lam = cw.p[c] / dt
        if cm.first[c] == t:
            total = total + lam
        else:
            total = total - cw.slope[c] * lam
    rep.coupling_force[t] = total
    if work.enabled[t] != 0:
        rep.force[t] = rep.force[t] + total
        rep.tension[t] = -rep.force[t]


@wp.kernel
def coupling_lambda(dt: float, cw: CouplingWork, out: wp.array(dtype=float), impulse_out: wp.array(dtype=float)):
    c = wp.tid()
    out[c] = cw.p[c] / dt
    impulse_out[c] = cw.p[c]
