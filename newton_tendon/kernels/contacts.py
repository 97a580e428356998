"""Contact generation into fixed slots, and the XPBD contact rows (normal, static and dynamic friction).

Each shape pair that may touch owns a fixed range of contact slots (its capacity, fixed at
``finalize``), so generation needs no atomics and the buffers never grow: graph-capturable and
deterministic. Contact points are stored in the body frames of the two shapes, so the gap can be
re-evaluated at the predicted poses during the solve.

References: Mueller, Macklin, Chentanez, Jeschke, Kim, "Detailed Rigid Body Simulation with
Extended Position Based Dynamics", SCA 2020, sections 3.5-3.6.
"""

import warp as wp

from newton_tendon.kernels.collide import collide_slot
from newton_tendon.kernels.math import point_inv_mass, world_inv_inertia
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.types import SHAPE_CAPSULE, SHAPE_SPHERE

wp.set_module_options({"enable_backward": False})


@wp.struct
class ContactData:
    """The contact buffer as kernels see it (one entry per slot)."""

    valid: wp.array(dtype=wp.int32)
    body_a: wp.array(dtype=wp.int32)
    body_b: wp.array(dtype=wp.int32)
    point_a: wp.array(dtype=wp.vec3)
    point_b: wp.array(dtype=wp.vec3)
    normal: wp.array(dtype=wp.vec3)
    mu: wp.array(dtype=float)
    restitution: wp.array(dtype=float)
    # Round shapes (sphere, capsule): the stored point minus its centre (a sphere's, or the capsule
    # axis point behind it), body frame [m]; zero for every other shape (``round_shifts``).
    offset_a: wp.array(dtype=wp.vec3)
    offset_b: wp.array(dtype=wp.vec3)


@wp.func
def pose_or_identity(body_q: wp.array(dtype=wp.transform), b: int):
    if b < 0:
        return wp.transform_identity()
    return body_q[b]


@wp.kernel
def collide_contact_slots(
    # Model:
    shape_type: wp.array(dtype=wp.int32),
    shape_body: wp.array(dtype=wp.int32),
    shape_transform: wp.array(dtype=wp.transform),
    shape_scale: wp.array(dtype=wp.vec3),
    shape_mu: wp.array(dtype=float),
    shape_restitution: wp.array(dtype=float),
    shape_margin: wp.array(dtype=float),
    shape_gap: wp.array(dtype=float),
    shape_contact_pairs: wp.array(dtype=wp.vec2i),
    shape_contact_pair_mu: wp.array(dtype=float),
    contact_pair: wp.array(dtype=wp.int32),
    contact_sub: wp.array(dtype=wp.int32),
    shape_mesh: wp.array(dtype=wp.vec2i),
    mesh_points: wp.array(dtype=wp.vec3),
    margin: float,
    # State:
    body_q: wp.array(dtype=wp.transform),
    # Output: the contact buffer
    contacts: ContactData,
):
    """Narrow phase: evaluate slot ``contact_sub[c]`` of pair ``contact_pair[c]`` at the current poses.

    Each shape's ``shape_margin`` moves its contact surface outward along the normal, so the pair rests
    ``margin_a + margin_b`` apart; a slot is a candidate when the offset surfaces are closer than
    ``max(margin, gap_a + gap_b)``.
    """
    c = wp.tid()
    pair_index = contact_pair[c]
    pair = shape_contact_pairs[pair_index]
    sa = pair[0]
    sb = pair[1]
    ba = shape_body[sa]
    bb = shape_body[sb]
    qa = pose_or_identity(body_q, ba)
    qb = pose_or_identity(body_q, bb)
    xa = qa * shape_transform[sa]
    xb = qb * shape_transform[sb]
    offset_a = shape_margin[sa]
    offset_b = shape_margin[sb]
    detect = wp.max(margin, shape_gap[sa] + shape_gap[sb])
    cp = collide_slot(
        shape_type[sa], xa, shape_scale[sa], shape_type[sb], xb, shape_scale[sb], contact_sub[c],
        detect + offset_a + offset_b, mesh_points, shape_mesh[sa], shape_mesh[sb],
    )  # fmt: skip
    contacts.valid[c] = cp.valid
    contacts.body_a[c] = ba
    contacts.body_b[c] = bb
    contacts.point_a[c] = wp.transform_point(wp.transform_inverse(qa), cp.point_a + offset_a * cp.normal)
    contacts.point_b[c] = wp.transform_point(wp.transform_inverse(qb), cp.point_b - offset_b * cp.normal)
    # A round shape's stored point lies its radius (plus its margin) along the normal from its
    # centre; keep that offset in the body frame (``round_shifts``).
    off_a = wp.vec3(0.0)
    off_b = wp.vec3(0.0)
    ta = shape_type[sa]
    tb = shape_type[sb]
    if ta == SHAPE_SPHERE or ta == SHAPE_CAPSULE:
        off_a = wp.quat_rotate_inv(wp.transform_get_rotation(qa), (shape_scale[sa][0] + offset_a) * cp.normal)
    if tb == SHAPE_SPHERE or tb == SHAPE_CAPSULE:
        off_b = wp.quat_rotate_inv(wp.transform_get_rotation(qb), -(shape_scale[sb][0] + offset_b) * cp.normal)
    contacts.offset_a[c] = off_a
    contacts.offset_b[c] = off_b
    contacts.normal[c] = cp.normal
    mu = shape_contact_pair_mu[pair_index]
    if mu < 0.0:
        mu = 0.5 * (shape_mu[sa] + shape_mu[sb])
    contacts.mu[c] = mu
    contacts.restitution[c] = 0.5 * (shape_restitution[sa] + shape_restitution[sb])


@wp.func
def round_shifts(contacts: ContactData, c: int, qa: wp.transform, qb: wp.transform, n: wp.vec3):
    """Shifts (on a, on b) [m, world] from the stored body-fixed contact points to the points the
    non-penetration row measures its gap between; also the shifts of their lever arms.

    Zero on a box, cylinder, plane, ellipsoid or mesh: the stored point. On a sphere or capsule the
    row's point is the one its radius r away from its centre (the body-fixed centre, or the capsule
    axis point behind the contact) along the current normal, c_a + r n on a and c_b - r n on b; with
    the stored offset o = p - c in the body frame R that is a shift of r n - R o on a and
    -r n - R o on b. A body-fixed surface point would turn with a rolling ball and push it on, a
    first-order energy gain (docs/limitations.md); a point that stays under the centre does not.
    Friction still follows the body-fixed points, whose drift is the sliding."""
    off_a = contacts.offset_a[c]
    off_b = contacts.offset_b[c]
    d_a = wp.length(off_a) * n - wp.quat_rotate(wp.transform_get_rotation(qa), off_a)
    d_b = -wp.length(off_b) * n - wp.quat_rotate(wp.transform_get_rotation(qb), off_b)
    return d_a, d_b


@wp.func
def is_round_contact(contacts: ContactData, c: int) -> bool:
    """Whether either side of contact c is a sphere or capsule (``round_shifts`` nonzero)."""
    off_a = contacts.offset_a[c]
    off_b = contacts.offset_b[c]
    return wp.length_sq(off_a) > 0.0 or wp.length_sq(off_b) > 0.0


@wp.struct
class ContactBodies:
    """Inverse masses, lever arms and world contact points of the two bodies of one contact."""

    inv_m_a: float
    inv_m_b: float
    inv_i_a: wp.mat33
    inv_i_b: wp.mat33
    r_a: wp.vec3
    r_b: wp.vec3
    p_a: wp.vec3
    p_b: wp.vec3


@wp.func
def contact_bodies(bodies: BodyModel, contacts: ContactData, body_q: wp.array(dtype=wp.transform), c: int):
    cb = ContactBodies()
    a = contacts.body_a[c]
    b = contacts.body_b[c]
    qa = pose_or_identity(body_q, a)
    qb = pose_or_identity(body_q, b)
    cb.p_a = wp.transform_point(qa, contacts.point_a[c])
    cb.p_b = wp.transform_point(qb, contacts.point_b[c])
    cb.inv_m_a = 0.0
    cb.inv_m_b = 0.0
    cb.inv_i_a = wp.mat33(0.0)
    cb.inv_i_b = wp.mat33(0.0)
    cb.r_a = wp.vec3(0.0)
    cb.r_b = wp.vec3(0.0)
    if a >= 0:
        cb.r_a = cb.p_a - wp.transform_point(qa, bodies.com[a])
        if is_moving_body(bodies, a):
            cb.inv_m_a = bodies.inv_mass[a]
            cb.inv_i_a = world_inv_inertia(qa, bodies.inv_inertia[a])
    if b >= 0:
        cb.r_b = cb.p_b - wp.transform_point(qb, bodies.com[b])
        if is_moving_body(bodies, b):
            cb.inv_m_b = bodies.inv_mass[b]
            cb.inv_i_b = world_inv_inertia(qb, bodies.inv_inertia[b])
    return cb


@wp.func
def write_contact_impulse(
    cb: ContactBodies,
    impulse_b: wp.vec3,
    slot_a: int,
    weight: float,
    slot_delta: wp.array(dtype=wp.spatial_vector),
    slot_weight: wp.array(dtype=float),
):
    """Store the change of body b for +impulse_b at its contact point and of body a for -impulse_b."""
    slot_delta[slot_a] = wp.spatial_vector(-impulse_b * cb.inv_m_a, -(cb.inv_i_a * wp.cross(cb.r_a, impulse_b)))
    slot_delta[slot_a + 1] = wp.spatial_vector(impulse_b * cb.inv_m_b, cb.inv_i_b * wp.cross(cb.r_b, impulse_b))
    slot_weight[slot_a] = weight
    slot_weight[slot_a + 1] = weight


@wp.func
def contact_point_velocity(body_qd: wp.array(dtype=wp.spatial_vector), b: int, r: wp.vec3):
    """Velocity [m/s] of the material point at arm r from the COM of body b (zero for the world)."""
    if b < 0:
        return wp.vec3(0.0)
    qd = body_qd[b]
    return wp.spatial_top(qd) + wp.cross(wp.spatial_bottom(qd), r)


@wp.func
def side_inv_mass(
    inv_m: float,
    inv_i: wp.mat33,
    r: wp.vec3,
    n: wp.vec3,
    body: int,
    other: int,
    use_response: int,
    response_tree: wp.array(dtype=wp.int32),
    body_response: wp.array(dtype=wp.spatial_matrix),
):
    """Inverse mass [1/kg] of one side of a contact for a unit impulse along ``n`` at arm ``r``: the
    body's own (``point_inv_mass``), or, where ``use_response`` is set and the body belongs to an
    articulation, ``j^T S j`` with j = (n, r x n) and S the body's articulated response (its pose
    change per unit wrench with its tree's joint rows held; ``joints.articulation``). The contact
    moves the body alone by M^-1 j dlambda, and the articulation pass that follows projects that onto
    the joints in the mass metric, which is the articulated response S j dlambda; so the multiplier
    step must be weighed against j^T S j, not against the body's own mass (a 0.1 kg toe of a 60 kg
    humanoid: the toe's own mass gave 2 % of the step the stance needed, every iteration, and the
    multiplier grew without bound).

    A contact between two bodies of one articulation (``response_tree``: the body's tree, -1 for none)
    keeps the bodies' own masses: its true inverse mass has the cross term -2 j_a^T S_ab j_b, which
    the diagonal blocks do not hold, and without it the fingers and thumb of dm_control's
    humanoid_CMU, touching on one hand, were weighed too heavy and thrown apart (3,400 rad/s). The
    bodies' own masses never weigh a contact heavier than the articulation does."""
    if use_response != 0 and body >= 0:
        tree = response_tree[body]
        if tree >= 0:
            if other < 0 or response_tree[other] != tree:
                j = wp.spatial_vector(n, wp.cross(r, n))
                return wp.dot(j, body_response[body] * j)
    return point_inv_mass(inv_m, inv_i, r, n)


@wp.kernel
def solve_contact_positions(
    # Model:
    bodies: BodyModel,
    summed_slot_count: int,
    relaxation: float,
    use_response: int,  # 1: weigh rows on articulation bodies by their articulated response
    # Contacts:
    contacts: ContactData,
    # State in:
    body_q_in: wp.array(dtype=wp.transform),
    # State: the current prediction
    body_q: wp.array(dtype=wp.transform),
    # Scratch: multipliers, slots; each body's tree and articulated response (``side_inv_mass``)
    contact_lambda_n: wp.array(dtype=float),
    contact_lambda_t: wp.array(dtype=float),
    slot_delta: wp.array(dtype=wp.spatial_vector),
    slot_weight: wp.array(dtype=float),
    response_tree: wp.array(dtype=wp.int32),
    body_response: wp.array(dtype=wp.spatial_matrix),
):
    """Non-penetration and Coulomb friction rows of one contact (hard, zero compliance).

    Normal row: C = (p_b - p_a) . n >= 0 [m], gradient +n at p_b, -n at p_a;
    dlambda_n = -C / (w_a + w_b) [kg m] when C < 0.
    Friction row: C_t = |dp_t|, the tangential drift of the contact points since the start of the
    step, with the multiplier projected onto the cone 0 <= lambda_t <= mu lambda_n. Solving friction
    at the position level (inside the iterations) lets the normal rows of the next iteration absorb
    the moment friction exerts about the centre of mass, which a parallel velocity pass cannot.
    Multipliers are accumulated after relaxation, i.e. as the impulses actually applied.
    """
    c = wp.tid()
    slot = summed_slot_count + 2 * c
    zero = wp.spatial_vector()
    if contacts.valid[c] == 0:
        slot_delta[slot] = zero
        slot_delta[slot + 1] = zero
        slot_weight[slot] = 0.0
        slot_weight[slot + 1] = 0.0
        return
    cb = contact_bodies(bodies, contacts, body_q, c)
    n = contacts.normal[c]
    round_contact = is_round_contact(contacts, c)
    rn_a = cb.r_a
    rn_b = cb.r_b
    sep = float(0.0)
    if round_contact:
        d_a, d_b = round_shifts(
            contacts, c, pose_or_identity(body_q, contacts.body_a[c]), pose_or_identity(body_q, contacts.body_b[c]), n
        )
        rn_a = cb.r_a + d_a
        rn_b = cb.r_b + d_b
        sep = wp.dot((cb.p_b + d_b) - (cb.p_a + d_a), n)
    else:
        sep = wp.dot(cb.p_b - cb.p_a, n)
    a = contacts.body_a[c]
    b = contacts.body_b[c]
    w_n = side_inv_mass(cb.inv_m_a, cb.inv_i_a, rn_a, n, a, b, use_response, response_tree, body_response)
    w_n = w_n + side_inv_mass(cb.inv_m_b, cb.inv_i_b, rn_b, n, b, a, use_response, response_tree, body_response)
    if sep >= 0.0 or w_n <= 0.0:
        slot_delta[slot] = zero
        slot_delta[slot + 1] = zero
        slot_weight[slot] = 0.0
        slot_weight[slot + 1] = 0.0
        return
    dlambda_n = -sep / w_n * relaxation
    lambda_n = contact_lambda_n[c] + dlambda_n
    contact_lambda_n[c] = lambda_n
    impulse = n * dlambda_n
    impulse_n = impulse

    # Coulomb friction at the position level, from the relative tangential motion of the two
    # contact points this step: undo it fully while the multiplier stays inside the cone
    # (sticking), otherwise apply the largest correction the cone allows (sliding, dynamic friction).
    pa0 = wp.transform_point(pose_or_identity(body_q_in, a), contacts.point_a[c])
    pb0 = wp.transform_point(pose_or_identity(body_q_in, b), contacts.point_b[c])
    dp = (cb.p_b - pb0) - (cb.p_a - pa0)
    dp_t = dp - n * wp.dot(dp, n)
    lt = wp.length(dp_t)
    if lt > 1.0e-9:
        t = dp_t / lt
        w_t = side_inv_mass(cb.inv_m_a, cb.inv_i_a, cb.r_a, t, a, b, use_response, response_tree, body_response)
        w_t = w_t + side_inv_mass(cb.inv_m_b, cb.inv_i_b, cb.r_b, t, b, a, use_response, response_tree, body_response)
        if w_t > 0.0:
            lambda_t = contact_lambda_t[c]
            dlambda_t = wp.min(lt / w_t * relaxation, wp.max(contacts.mu[c] * lambda_n - lambda_t, 0.0))
            contact_lambda_t[c] = lambda_t + dlambda_t
            impulse = impulse - t * dlambda_t
    if round_contact:
        # The normal impulse acts at the point under the centre, friction at the body-fixed point.
        impulse_t = impulse - impulse_n
        slot_delta[slot] = wp.spatial_vector(
            -impulse * cb.inv_m_a, -(cb.inv_i_a * (wp.cross(rn_a, impulse_n) + wp.cross(cb.r_a, impulse_t)))
        )
        slot_delta[slot + 1] = wp.spatial_vector(
            impulse * cb.inv_m_b, cb.inv_i_b * (wp.cross(rn_b, impulse_n) + wp.cross(cb.r_b, impulse_t))
        )
        slot_weight[slot] = 1.0
        slot_weight[slot + 1] = 1.0
        return
    write_contact_impulse(cb, impulse, slot, 1.0, slot_delta, slot_weight)


@wp.kernel
def solve_contact_velocities(
    # Model:
    bodies: BodyModel,
    summed_slot_count: int,
    gravity: wp.array(dtype=wp.vec3),
    dt: float,
    # Contacts:
    contacts: ContactData,
    # State in:
    body_q_in: wp.array(dtype=wp.transform),
    body_qd_in: wp.array(dtype=wp.spatial_vector),
    # State: the current prediction
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Scratch:
    contact_lambda_n: wp.array(dtype=float),
    slot_delta: wp.array(dtype=wp.spatial_vector),
    slot_weight: wp.array(dtype=float),
):
    """Velocity pass of contacts that pushed this step: restitution along the normal.

    dv = n (-v_n + max(-e v_n_pre, 0)), with e = 0 when |v_n_pre| <= 2 |g| dt so resting contacts
    do not jitter; the impulse is dv / w. Friction is handled at the position level.
    """
    c = wp.tid()
    slot = summed_slot_count + 2 * c
    zero = wp.spatial_vector()
    lambda_n = contact_lambda_n[c]
    if contacts.valid[c] == 0 or lambda_n <= 0.0:
        slot_delta[slot] = zero
        slot_delta[slot + 1] = zero
        slot_weight[slot] = 0.0
        slot_weight[slot + 1] = 0.0
        return
    a = contacts.body_a[c]
    b = contacts.body_b[c]
    n = contacts.normal[c]
    cb = contact_bodies(bodies, contacts, body_q, c)
    cb0 = contact_bodies(bodies, contacts, body_q_in, c)
    if is_round_contact(contacts, c):
        # A sphere or capsule: the normal velocity of the point under its centre (a body-fixed rim
        # point of a rolling ball rises and falls; zeroing its normal velocity brakes the roll).
        d_a, d_b = round_shifts(contacts, c, pose_or_identity(body_q, a), pose_or_identity(body_q, b), n)
        cb.r_a = cb.r_a + d_a
        cb.r_b = cb.r_b + d_b
        d_a, d_b = round_shifts(contacts, c, pose_or_identity(body_q_in, a), pose_or_identity(body_q_in, b), n)
        cb0.r_a = cb0.r_a + d_a
        cb0.r_b = cb0.r_b + d_b
    v_rel = contact_point_velocity(body_qd, b, cb.r_b) - contact_point_velocity(body_qd, a, cb.r_a)
    vn = wp.dot(v_rel, n)
    dv = wp.vec3(0.0)

    # Normal velocity before the step, at the contact points of the previous poses.
    v_rel0 = contact_point_velocity(body_qd_in, b, cb0.r_b) - contact_point_velocity(body_qd_in, a, cb0.r_a)
    vn0 = wp.dot(v_rel0, n)
    e = contacts.restitution[c]
    world = wp.max(wp.max(bodies.world[wp.max(a, 0)], bodies.world[wp.max(b, 0)]), 0)
    if wp.abs(vn0) <= 2.0 * wp.length(gravity[world]) * dt:
        e = 0.0
    dv = dv + n * (-vn + wp.max(-e * vn0, 0.0))
    dv_len = wp.length(dv)
    if dv_len < 1.0e-9:
        write_contact_impulse(cb, wp.vec3(0.0), slot, 1.0, slot_delta, slot_weight)
        return
    d = dv / dv_len
    w = point_inv_mass(cb.inv_m_a, cb.inv_i_a, cb.r_a, d) + point_inv_mass(cb.inv_m_b, cb.inv_i_b, cb.r_b, d)
    if w <= 0.0:
        write_contact_impulse(cb, wp.vec3(0.0), slot, 0.0, slot_delta, slot_weight)
        return
    write_contact_impulse(cb, dv / w, slot, 1.0, slot_delta, slot_weight)
