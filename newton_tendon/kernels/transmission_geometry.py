"""Transmission tendons: length, slot Jacobians and effective inverse mass W at a pose.

``transmission_geometry`` evaluates a tendon's length and writes the 6-vector gradient of every slot
(layout in ``transmission_data``); the rate ``J v``, a body's ``J_b`` and the effective inverse mass
``W = sum_b J_b^T M_b^-1 J_b`` follow from those slots. ``shift_poses`` gives the poses a small time
away along the body velocities, from which ``transmission_rows`` takes the armature's curvature bias.
"""

import warp as wp

from newton_tendon.kernels.joints import universal_axes
from newton_tendon.kernels.math import twist_angle, world_inv_inertia
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.spatial import spatial_route
from newton_tendon.kernels.transmission_data import (
    TRANSMISSION_FIXED,
    TRANSMISSION_KERNELS,
    TransmissionModel,
    TransmissionParams,
    TransmissionReport,
    TransmissionScratch,
)

wp.set_module_options({"enable_backward": False})

TWO_PI = wp.constant(6.283185307179586)
JACOBIAN_CANCEL = wp.constant(1.0e-10)
"""A body's term ``J_b^T M_b^-1 J_b`` of W at or below this fraction of ``sum_s J_s^T M_b^-1 J_s`` over
its slots counts as 0: the slots cancel, as they do exactly for path pieces with both ends on one body
(internal, no gradient), and what is left is float32 round-off (measured <= 3e-15 of the slot sum).
Kept, that round-off (W ~ 1e-13 1/kg) turned a rigid row into impulses of ~1e14 N s (long fuzz profile,
NaN at step 39); counted as 0, a rigid row on a length no body motion can change has no effective mass
and exerts nothing. 1e-10 is |J_b| <= 1e-5 |J_s|, ~80 float32 ulps of cancellation."""


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
def joint_term(tm: TransmissionModel, k: int, body_q: wp.array(dtype=wp.transform), q_ref: float):
    """(q, J_parent, J_child) of fixed-tendon term k: the coordinate [rad or m] of its joint along
    its dof (a revolute or prismatic joint, or one axis of a D6 joint) and the 6-vector gradients
    dq/d(x, theta) of the joint's parent and child bodies.

    angle (revolute, a D6's single angular axis; ``term_angular`` 1): q = twist of the child frame
    about the axis, unwrapped to the branch nearest ``q_ref`` (the previous coordinate), so a joint
    turning past +-pi keeps a continuous coordinate; J_c = (0, a), J_p = (0, -a). (The D6's other
    rotations are locked, so its relative rotation is about that axis.)
    universal angle i (a D6 with two angular axes; ``term_angular`` 2 + i): q = its coordinate i
    (``joints.universal_axes``), unwrapped likewise; J_c = (0, g_i), J_p = (0, -g_i) with g_i the
    coordinate's gradient (dq_i = g_i . dtheta for a relative turn dtheta), finite at every pose.
    length (prismatic, a D6's linear axis): q = (x_c - x_p) . a with a fixed to the parent,
    J_c = (a, r_c x a), J_p = (-a, -(r_p x a) + a x (x_c - x_p)) (the axis turns with the parent);
    the D6's linear axes are orthonormal, so this is that axis's coordinate.
    """
    j = tm.term_joint[k]
    X_wp, X_wc = joint_frames(tm, j, body_q)
    rot_p = wp.transform_get_rotation(X_wp)
    axis = tm.joint_axis[tm.term_dof[k]]
    a = wp.quat_rotate(rot_p, axis)
    p = tm.joint_parent[j]
    c = tm.joint_child[j]
    kind = tm.term_angular[k]
    if kind >= 2:
        i = kind - 2
        a0 = tm.joint_axis[tm.term_dof[k] - i]
        a1 = tm.joint_axis[tm.term_dof[k] - i + 1]
        rel = wp.quat_inverse(rot_p) * wp.transform_get_rotation(X_wc)
        ang, u, n = universal_axes(rot_p, rel, a0, a1)
        q = ang[i]
        q = q + TWO_PI * wp.round((q_ref - q) / TWO_PI)
        g = wp.vec3(u[0, i], u[1, i], u[2, i])  # U is orthonormal: dq_i = u_i . w
        return q, wp.spatial_vector(wp.vec3(0.0), -g), wp.spatial_vector(wp.vec3(0.0), g)
    if kind != 0:
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
            q, jp, jc = joint_term(tm, k, body_q, scratch.term_ref[k])
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


@wp.kernel(module=TRANSMISSION_KERNELS)
def transmission_lengths(
    # Model:
    tm: TransmissionModel,
    # State:
    body_q: wp.array(dtype=wp.transform),
    # Scratch:
    scratch: TransmissionScratch,
    # Output:
    length: wp.array(dtype=float),
):
    """Length of every transmission tendon at the poses body_q."""
    t = wp.tid()
    length[t] = transmission_geometry(tm, t, body_q, scratch)


@wp.kernel(module=TRANSMISSION_KERNELS)
def shift_poses(
    # Model:
    com: wp.array(dtype=wp.vec3),
    tau: float,
    # State:
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Scratch: the poses a step tau ahead and behind
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


@wp.kernel(module=TRANSMISSION_KERNELS)
def update_transmission_geometry(
    # Model:
    tm: TransmissionModel,
    par: TransmissionParams,
    # State:
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Scratch:
    scratch: TransmissionScratch,
    # Output:
    rep: TransmissionReport,
):
    """Length, rate, energies and slot gradients at the given state, without touching last-step forces."""
    t = wp.tid()
    report_geometry(tm, par, t, body_q, body_qd, scratch, rep)
