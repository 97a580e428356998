"""Rigid-body integration and the deterministic gather of constraint corrections.

Every constraint (a joint, a contact slot, later a tendon row) writes its correction for each body
it touches into its own *slot* of a delta array; it never adds into shared body storage. A second
pass, one thread per body, walks that body's slot list (a CSR table fixed at ``finalize``) in a
fixed order and applies the sum. No atomics, so results are bitwise reproducible on every device.

Slot layout (J joints, G tendon guides): joint ``j`` owns slots ``2 j`` (parent side) and
``2 j + 1`` (child side); tendon guide ``g`` owns ``2 J + 2 g`` (its incoming span) and
``2 J + 2 g + 1`` (its outgoing span); contact slot ``c`` owns ``S + 2 c`` (shape a side) and
``S + 2 c + 1`` (shape b side), where ``S = 2 J + 2 G`` is the *summed slot count*: corrections in
slots below ``S`` add up, contact corrections are averaged per body.
"""

import warp as wp

from newton_tendon.kernels.math import apply_pose_delta, bounded_pose_delta
from newton_tendon.kernels.types import BODY_KINEMATIC

wp.set_module_options({"enable_backward": False})


@wp.struct
class BodyModel:
    """Per-body constants the kernels need, grouped to keep signatures short."""

    com: wp.array(dtype=wp.vec3)
    inv_mass: wp.array(dtype=float)
    inertia: wp.array(dtype=wp.mat33)
    inv_inertia: wp.array(dtype=wp.mat33)
    flags: wp.array(dtype=wp.int32)
    world: wp.array(dtype=wp.int32)
    slot_start: wp.array(dtype=wp.int32)
    slot: wp.array(dtype=wp.int32)


@wp.func
def is_moving_body(bodies: BodyModel, b: int):
    """True for a dynamic body with finite mass (kinematic and static bodies are not moved by constraints)."""
    if b < 0:
        return False
    if (bodies.flags[b] & BODY_KINEMATIC) != 0:
        return False
    return bodies.inv_mass[b] > 0.0


@wp.func
def integrate_rotation(rot: wp.quat, omega: wp.vec3, dt: float):
    """Advance an orientation by the exact exponential of a constant world angular velocity [rad/s]."""
    w = wp.length(omega)
    if w < 1.0e-12:
        return rot
    return wp.normalize(wp.quat_from_axis_angle(omega / w, w * dt) * rot)


@wp.func
def gyroscopic_step(inertia_b: wp.mat33, omega_b: wp.vec3, dt: float):
    """One Newton step of the implicit gyroscopic update I (w - w0) + dt w x (I w) = 0, body frame.

    Implicit in w so that fast asymmetric spin stays bounded (explicit Euler gains energy).
    """
    iw = inertia_b * omega_b
    f = dt * wp.cross(omega_b, iw)
    jac = inertia_b + dt * (wp.skew(omega_b) * inertia_b - wp.skew(iw))
    return omega_b - wp.inverse(jac) * f


@wp.kernel
def integrate_bodies(
    # Model:
    bodies: BodyModel,
    gravity: wp.array(dtype=wp.vec3),
    summed_slot_count: int,
    dt: float,
    # State in:
    body_q_in: wp.array(dtype=wp.transform),
    body_qd_in: wp.array(dtype=wp.spatial_vector),
    body_f_in: wp.array(dtype=wp.spatial_vector),
    # State out:
    body_q_out: wp.array(dtype=wp.transform),
    body_qd_out: wp.array(dtype=wp.spatial_vector),
    # Scratch: joint wrenches per slot (compute_joint_wrenches)
    slot_wrench: wp.array(dtype=wp.spatial_vector),
):
    """Semi-implicit Euler prediction: v += dt (g + f/m), x += dt v; implicit gyroscopic spin.
    An external wrench ``body_f_in[b]`` that is not finite counts as zero for the step."""
    b = wp.tid()
    q = body_q_in[b]
    qd = body_qd_in[b]
    com = bodies.com[b]
    v = wp.spatial_top(qd)
    w = wp.spatial_bottom(qd)
    rot = wp.transform_get_rotation(q)

    if is_moving_body(bodies, b):
        ext = body_f_in[b]
        if not wp.isfinite(ext):
            ext = wp.spatial_vector()  # a wrench with a NaN or inf component is ignored this step
        f = wp.spatial_top(ext)
        tau = wp.spatial_bottom(ext)
        # Generalized joint forces reach the body through its joint slots.
        for i in range(bodies.slot_start[b], bodies.slot_start[b + 1]):
            s = bodies.slot[i]
            if s < summed_slot_count:
                f = f + wp.spatial_top(slot_wrench[s])
                tau = tau + wp.spatial_bottom(slot_wrench[s])
        world = wp.max(bodies.world[b], 0)
        v = v + (gravity[world] + f * bodies.inv_mass[b]) * dt
        inv_i = bodies.inv_inertia[b]
        if wp.trace(inv_i) > 0.0:
            rmat = wp.quat_to_matrix(rot)
            w_b = wp.transpose(rmat) * w
            w_b = w_b + inv_i * (wp.transpose(rmat) * tau) * dt
            w_b = gyroscopic_step(bodies.inertia[b], w_b, dt)
            w = rmat * w_b
        else:
            w = wp.vec3(0.0)
    elif (bodies.flags[b] & BODY_KINEMATIC) == 0:
        # Static body: it keeps its pose; its velocity is reported as zero.
        body_q_out[b] = q
        body_qd_out[b] = wp.spatial_vector(wp.vec3(0.0), wp.vec3(0.0))
        return

    c = wp.transform_point(q, com) + v * dt
    rot_new = integrate_rotation(rot, w, dt)
    body_q_out[b] = wp.transform(c - wp.quat_rotate(rot_new, com), rot_new)
    body_qd_out[b] = wp.spatial_vector(v, w)


@wp.func
def gather_slot_deltas(
    bodies: BodyModel,
    b: int,
    summed_slot_count: int,
    slot_delta: wp.array(dtype=wp.spatial_vector),
    slot_weight: wp.array(dtype=float),
):
    """Combined correction of body b from its slots, in slot order.

    Joint and tendon corrections add (their relaxation is applied when they are computed); contact
    corrections are averaged over the body's active contacts so that n contacts resolving one
    penetration do not move the body n times as far.
    """
    dj = wp.spatial_vector()
    dc = wp.spatial_vector()
    nc = float(0.0)
    for i in range(bodies.slot_start[b], bodies.slot_start[b + 1]):
        s = bodies.slot[i]
        if s < summed_slot_count:
            dj = dj + slot_delta[s]
        else:
            dc = dc + slot_delta[s]
            nc = nc + slot_weight[s]
    return dj + dc / wp.max(nc, 1.0)


@wp.func
def move_body(
    bodies: BodyModel,
    b: int,
    d: wp.spatial_vector,
    body_q: wp.array(dtype=wp.transform),
    body_delta: wp.array(dtype=wp.spatial_vector),
):
    """Move body ``b`` (if constraints move it) by the pose change ``d`` (COM translation [m],
    rotation vector [rad]) capped by ``bounded_pose_delta``, and add it to the step's accumulated
    change ``body_delta`` (the velocity update uses it instead of differencing rounded poses)."""
    if is_moving_body(bodies, b):
        dd = bounded_pose_delta(d)
        body_q[b] = apply_pose_delta(body_q[b], bodies.com[b], wp.spatial_top(dd), wp.spatial_bottom(dd))
        body_delta[b] = body_delta[b] + dd


@wp.kernel
def apply_slot_pose_deltas(
    # Model:
    bodies: BodyModel,
    summed_slot_count: int,
    # State: predicted poses, updated in place
    body_q: wp.array(dtype=wp.transform),
    # Scratch: slots, the step's pose change; each body's tree (-1: none) and impulse (see below)
    slot_delta: wp.array(dtype=wp.spatial_vector),
    slot_weight: wp.array(dtype=float),
    body_delta: wp.array(dtype=wp.spatial_vector),
    body_tree: wp.array(dtype=wp.int32),
    body_impulse: wp.array(dtype=wp.spatial_vector),
):
    """Apply each body's gathered slot corrections to its pose.

    ``body_delta`` accumulates the applied corrections over the iterations of a step, so the
    velocity update can use them directly instead of differencing two rounded float32 poses.

    A body of an articulation (``body_tree[b] >= 0``; an array of one -1 entry when there are none)
    is not moved here: its rows' correction d = M^-1 J^T dlambda is handed to the articulation pass
    as the impulse ``body_impulse[b]`` = M d = J^T dlambda (linear [kg m], angular [kg m^2], world),
    which that pass turns into the whole tree's response. Moving a
    0.1 kg toe by the correction a contact weighed against the humanoid standing on it turned the toe
    by radians about its own centre, which the linearized joint solve could not take back (the toes
    of dm_control's humanoid_CMU spun at 320 rad/s on landing).
    """
    b = wp.tid()
    if not is_moving_body(bodies, b):
        return
    d = gather_slot_deltas(bodies, b, summed_slot_count, slot_delta, slot_weight)
    if body_tree.shape[0] > b:
        if body_tree[b] >= 0:
            r = wp.quat_to_matrix(wp.transform_get_rotation(body_q[b]))
            inertia_w = r * bodies.inertia[b] * wp.transpose(r)
            body_impulse[b] = wp.spatial_vector(
                wp.spatial_top(d) / bodies.inv_mass[b], inertia_w * wp.spatial_bottom(d)
            )
            return
    move_body(bodies, b, d, body_q, body_delta)


@wp.kernel
def apply_slot_velocity_deltas(
    # Model:
    bodies: BodyModel,
    summed_slot_count: int,
    # State: velocities, updated in place
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Scratch:
    slot_delta: wp.array(dtype=wp.spatial_vector),
    slot_weight: wp.array(dtype=float),
):
    """Velocity counterpart of ``apply_slot_pose_deltas`` (contact slots averaged per body)."""
    b = wp.tid()
    if not is_moving_body(bodies, b):
        return
    body_qd[b] = body_qd[b] + gather_slot_deltas(bodies, b, summed_slot_count, slot_delta, slot_weight)


@wp.kernel
def update_body_velocities(
    # Model:
    bodies: BodyModel,
    dt: float,
    # State: velocities, updated in place
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Scratch:
    body_delta: wp.array(dtype=wp.spatial_vector),
):
    """XPBD velocity update v = v_pred + dx/dt, w = w_pred + dtheta/dt from the constraint displacement.

    Equal to differencing the poses in exact arithmetic. In float32 it keeps velocity changes that
    are smaller than one position ulp per step (a soft drive near its target, a slow creep), which
    differencing rounded poses would lose and so stall the motion.
    ``body_qd`` holds the predicted velocity on entry and the corrected one on exit.
    """
    b = wp.tid()
    if not is_moving_body(bodies, b):
        return
    body_qd[b] = body_qd[b] + body_delta[b] / dt
