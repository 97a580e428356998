"""VBD for rigid bodies: the body sweep, one colour at a time, and the walk over a body's slots.

A body's slots are sorted by kind (joints, cable guides, transmissions, contacts); the sweep adds
each kind's rows from its own run of the list (``joints.vbd_rows``, ``vbd_span_rows``,
``vbd_transmission_rows``, ``vbd_contact_rows``) to the body's block (``vbd_block``) and takes its
Newton step. Three variants of the kernel, one per Warp module, leave out the rows a model lacks.
"""

import warp as wp

from newton_tendon.kernels.cable import TendonLinearization
from newton_tendon.kernels.contacts import ContactData
from newton_tendon.kernels.joints import JointModel
from newton_tendon.kernels.joints.vbd_rows import JointDuals, add_joint, add_joint_universal
from newton_tendon.kernels.math import bounded_pose_delta, world_inertia
from newton_tendon.kernels.rigid import BodyModel, is_moving_body
from newton_tendon.kernels.vbd_block import VBD_KERNELS, move_body, solve_block
from newton_tendon.kernels.vbd_contact_rows import ContactDuals, add_contact
from newton_tendon.kernels.vbd_span_rows import add_tendon_slot
from newton_tendon.kernels.vbd_transmission_rows import (
    TRANSMISSION_MODULE,
    VBDTransmissions,
    add_transmission,
    transmission_owner,
)

wp.set_module_options({"enable_backward": False})

TENDON_MODULE = "newton_tendon.kernels.vbd_tendons"
"""Warp module of the body sweep for models whose only rows are routed-cable spans (no joints,
contacts, transmission tendons or couplings), so that such a model compiles neither the other
sweeps nor the joint and contact kernels."""
wp.set_module_options({"enable_backward": False}, module=TENDON_MODULE)


@wp.func
def paired_slot(s: int, base: int):
    """(row, second) of slot s of a kind that gives each row two slots, ``base + 2 row`` and
    ``base + 2 row + 1`` (joints: parent, child; guides: incoming, outgoing span; contacts: a, b).

    The side is the parity of the slot *within its kind*: the kinds before it in the slot array
    (transmission and coupling slots, one per path element or joint term) can number oddly, so the
    parity of the absolute slot s says nothing about the side. Reading it there applied every contact
    with its two bodies swapped when the model's transmission and coupling slots summed to an odd
    count (a resting sphere fell through the ground)."""
    x = s - base
    return x // 2, x % 2 == 1


@wp.func
def slot_run_end(bodies: BodyModel, begin: int, end: int, bound: int):
    """First index in [begin, end) of a body's sorted slot list whose slot is >= bound (end if none)."""
    i = begin
    while i < end:
        if bodies.slot[i] >= bound:
            break
        i += 1
    return i


def _make_solve_body_colour(with_transmissions: bool, module: str, tendons_only: bool = False, universal: bool = False):
    """The body sweep kernel, with or without the transmission rows (``with_transmissions``),
    registered in the Warp module ``module``. ``tendons_only`` compiles only the inertia and the
    cable span rows (the joint and contact loops left out); ``universal`` the joint rows of universal
    joints and of row armature (``joints.vbd_rows.add_joint_universal``), for models that have them.

    A CPU kernel loads every struct field its code uses at the start of each thread (Warp passes the
    arguments by value and the compiler cannot keep them across the threads' stores), and spills
    most of them to the stack: the joint, contact and transmission rows' fields were about a quarter
    of the sweep's time on the cable scenes, which have none of those rows. Their variant adds the
    same span rows in the same order, so it gives the same bits."""
    joint_rows = add_joint_universal if universal else add_joint

    @wp.func(inline=True)
    def assemble(
        bodies: BodyModel,
        joints: JointModel,
        b: int,
        joint_slot_count: int,
        summed_slot_count: int,
        dt: float,
        joint_target_pos: wp.array(dtype=float),
        joint_target_vel: wp.array(dtype=float),
        joint_q_prev: wp.array(dtype=float),
        joint_qd_prev: wp.array(dtype=float),
        body_q_prev: wp.array(dtype=wp.transform),
        contacts: ContactData,
        has_contacts: int,
        lin: TendonLinearization,
        xs: VBDTransmissions,
        joint_duals: JointDuals,
        contact_duals: ContactDuals,
        body_q: wp.array(dtype=wp.transform),
        body_delta: wp.array(dtype=wp.spatial_vector),
        joint_in_tree: wp.array(dtype=wp.int32),
        body_tree: wp.array(dtype=wp.int32),
        contact_forced: wp.array(dtype=wp.int32),
        skip_tree_joints: int,
    ):
        """Assemble body b's 6x6 system at the current poses: (fx, ft, hxx, hxt, htt, idle). With
        ``skip_tree_joints`` the rows of joints in an articulation tree (``joint_in_tree``) are left
        out: SolverVBD's articulation pass solves them exactly, with the whole tree, and a contact with
        another articulation body (``body_tree``), which steps at the same time, doubles its Hessian;
        a contact marked in ``contact_forced`` is in the model even where inactive (``add_contact``)."""
        inv_h2 = 1.0 / (dt * dt)
        q = body_q[b]
        # x - y from the accumulated Newton steps rather than from the rounded pose: m/h^2 times one
        # float32 ulp of position is a large force (0.06 N for 2 kg at 1 ms, near 0.3 m), enough to
        # stall a soft drive short of its target.
        d_inertia = body_delta[b]
        mass = 1.0 / bodies.inv_mass[b]
        inertia_w = world_inertia(q, bodies.inertia[b])
        fx = -wp.spatial_top(d_inertia) * (mass * inv_h2)
        ft = -(inertia_w * wp.spatial_bottom(d_inertia)) * inv_h2
        hxx = wp.identity(n=3, dtype=float) * (mass * inv_h2)
        hxt = wp.mat33(0.0)
        htt = inertia_w * inv_h2
        idle = int(0)
        # A body's slots are sorted (``finalize``): joint slots, then tendon guide slots, then
        # transmission slots, then contacts. One loop per kind over its run of the list adds the rows
        # in the same order as one loop with a branch per kind, without merging the four branches'
        # results (the 6x6 system, three mat33) at every slot, which went through memory.
        slot_begin = bodies.slot_start[b]
        slot_end = bodies.slot_start[b + 1]
        if wp.static(tendons_only):
            # Only for models without joints, contacts and transmissions: every slot holds a span end.
            for i in range(slot_begin, slot_end):
                fx, ft, hxx, hxt, htt, idle = add_tendon_slot(
                    fx,
                    ft,
                    hxx,
                    hxt,
                    htt,
                    idle,
                    lin,
                    bodies.slot[i] - joint_slot_count,
                    body_tree,
                    skip_tree_joints != 0,
                )
            return fx, ft, hxx, hxt, htt, idle
        joint_end = slot_run_end(bodies, slot_begin, slot_end, joint_slot_count)
        for i in range(slot_begin, joint_end):
            j, child = paired_slot(bodies.slot[i], 0)
            if skip_tree_joints != 0:
                if joint_in_tree[j] != 0:
                    continue
            fx, ft, hxx, hxt, htt, idle = wp.static(joint_rows)(
                fx,
                ft,
                hxx,
                hxt,
                htt,
                idle,
                bodies,
                joints,
                joint_duals,
                j,
                child,
                inv_h2,
                dt,
                body_q,
                joint_target_pos,
                joint_target_vel,
                joint_q_prev,
                joint_qd_prev,
            )
        tendon_end = slot_run_end(bodies, joint_end, slot_end, xs.tendon_slot_end)
        for i in range(joint_end, tendon_end):
            fx, ft, hxx, hxt, htt, idle = add_tendon_slot(
                fx, ft, hxx, hxt, htt, idle, lin, bodies.slot[i] - joint_slot_count, body_tree, skip_tree_joints != 0
            )
        summed_end = slot_run_end(bodies, tendon_end, slot_end, summed_slot_count)
        if wp.static(with_transmissions):
            # A transmission tendon or coupling acts once per body, at the first of its slots here
            # (compiled only into the variant for models with transmissions).
            for i in range(tendon_end, summed_end):
                s = bodies.slot[i]
                owner = transmission_owner(xs, s - xs.tendon_slot_end)
                first = bool(True)
                if i > bodies.slot_start[b]:
                    sp = bodies.slot[i - 1]
                    if sp >= xs.tendon_slot_end and transmission_owner(xs, sp - xs.tendon_slot_end) == owner:
                        first = False
                if first:
                    fx, ft, hxx, hxt, htt = add_transmission(
                        fx, ft, hxx, hxt, htt, bodies, xs, owner, b, dt, body_delta
                    )
        if has_contacts != 0:
            for i in range(summed_end, slot_end):
                c, side_b = paired_slot(bodies.slot[i], summed_slot_count)
                hess_scale = float(1.0)
                if skip_tree_joints != 0:
                    other = contacts.body_a[c]
                    if not side_b:
                        other = contacts.body_b[c]
                    if other >= 0:
                        if body_tree[other] >= 0 and is_moving_body(bodies, other):
                            hess_scale = 2.0  # both bodies step at once (``add_contact``)
                fx, ft, hxx, hxt, htt, idle = add_contact(
                    fx,
                    ft,
                    hxx,
                    hxt,
                    htt,
                    idle,
                    bodies,
                    contacts,
                    contact_duals,
                    c,
                    side_b,
                    inv_h2,
                    body_q_prev,
                    body_q,
                    hess_scale,
                    skip_tree_joints != 0 and contact_forced[c] != 0,
                )
        return fx, ft, hxx, hxt, htt, idle

    @wp.kernel(module=module)
    def solve_body_colour(
        # Model:
        bodies: BodyModel,
        joints: JointModel,
        colour_bodies: wp.array(dtype=wp.int32),
        chunk: int,
        joint_slot_count: int,
        summed_slot_count: int,
        dt: float,
        # Control:
        joint_target_pos: wp.array(dtype=float),
        joint_target_vel: wp.array(dtype=float),
        # Contacts:
        contacts: ContactData,
        has_contacts: int,
        # State in:
        body_q_in: wp.array(dtype=wp.transform),
        # State: joint coordinates at the step start; the current iterate, updated in place
        joint_q_prev: wp.array(dtype=float),
        joint_qd_prev: wp.array(dtype=float),
        body_q: wp.array(dtype=wp.transform),
        # Scratch:
        lin: TendonLinearization,
        xs: VBDTransmissions,
        joint_duals: JointDuals,
        contact_duals: ContactDuals,
        body_delta: wp.array(dtype=wp.spatial_vector),
    ):
        """Newton steps on each body of one colour (bodies of a colour share no row).

        Unilateral rows (contacts, cable spans, joint limits) make the energy piecewise quadratic: a
        row inactive where the Newton step starts is left out of its model, so the step can jump past
        the point where the row engages (a resting body falling to its inertial target), and the
        next iteration bounces back. A body whose model left such a row out (``idle``) therefore
        takes a second Newton step from the first one's result, whose model has the right active set;
        a body whose unilateral rows were all active (resting contact) needs only one.

        A thread takes ``chunk`` consecutive entries of ``colour_bodies`` (see ``linearize_tendons``).
        """
        i0 = wp.tid() * chunk
        for i in range(i0, wp.min(i0 + chunk, colour_bodies.shape[0])):
            b = colour_bodies[i]
            if not is_moving_body(bodies, b):
                continue
            com = bodies.com[b]
            # A dynamic loop keeps one call site, so assemble is inlined once rather than twice (an
            # out-of-line call copied every struct argument, about 4 kB, per body and pass).
            passes = int(0)
            while passes < 2:
                passes += 1
                fx, ft, hxx, hxt, htt, idle = assemble(
                    bodies,
                    joints,
                    b,
                    joint_slot_count,
                    summed_slot_count,
                    dt,
                    joint_target_pos,
                    joint_target_vel,
                    joint_q_prev,
                    joint_qd_prev,
                    body_q_in,
                    contacts,
                    has_contacts,
                    lin,
                    xs,
                    joint_duals,
                    contact_duals,
                    body_q,
                    body_delta,
                    colour_bodies,  # stands in for ``joint_in_tree``, ``body_tree`` and ``contact_forced``,
                    colour_bodies,  # never read (skip 0)
                    colour_bodies,
                    0,
                )
                d = solve_block(fx, ft, hxx, hxt, htt, wp.trace(bodies.inv_inertia[b]) > 0.0)
                d = bounded_pose_delta(d)
                body_q[b] = move_body(body_q[b], com, d)
                body_delta[b] = body_delta[b] + d
                if idle == 0:
                    break

    if tendons_only:
        return solve_body_colour

    wp.get_module(module + "_trees").options["enable_backward"] = False

    @wp.kernel(module=module + "_trees")
    def assemble_tree_bodies(
        # Model:
        bodies: BodyModel,
        joints: JointModel,
        tree_bodies: wp.array(dtype=wp.int32),
        chunk: int,
        joint_slot_count: int,
        summed_slot_count: int,
        dt: float,
        joint_in_tree: wp.array(dtype=wp.int32),
        # Control:
        joint_target_pos: wp.array(dtype=float),
        joint_target_vel: wp.array(dtype=float),
        # Contacts:
        contacts: ContactData,
        has_contacts: int,
        # State in:
        body_q_in: wp.array(dtype=wp.transform),
        # State: joint coordinates at the step start; the current iterate
        joint_q_prev: wp.array(dtype=float),
        joint_qd_prev: wp.array(dtype=float),
        body_q: wp.array(dtype=wp.transform),
        # Scratch: the rows' state; out: each tree body's Hessian and force times dt^2
        lin: TendonLinearization,
        xs: VBDTransmissions,
        joint_duals: JointDuals,
        contact_duals: ContactDuals,
        body_delta: wp.array(dtype=wp.spatial_vector),
        body_tree: wp.array(dtype=wp.int32),
        group_idle: wp.array(dtype=wp.int32),
        contact_forced: wp.array(dtype=wp.int32),
        second_pass: int,
        body_hessian: wp.array(dtype=wp.spatial_matrix),
        body_force: wp.array(dtype=wp.spatial_vector),
        body_idle: wp.array(dtype=wp.int32),
    ):
        """Each articulation body's 6x6 system at the current poses, all at once, without its tree's
        joint rows, for SolverVBD's articulation pass (``joints.articulation``, the ``newton``
        variant), which takes the Newton step of the whole tree with those joints held. Written times
        dt^2 (H dt^2 [kg, kg m, kg m^2], f dt^2 [kg m, kg m^2]): the units of XPBD's mass blocks and
        impulses the same factorization solves. A body that translates but does not turn gets a
        rotational block of 1e20 kg m^2 (its rotation stays 0).

        ``body_idle``: how many unilateral rows the body's model left out because they were inactive
        where it was built (as in ``solve_body_colour``). A tree with any such row takes its Newton
        step again, from the same start, with the contacts the first step crossed in the model
        (``second_pass``: only the bodies of trees marked in ``group_idle`` by the first pass's solve
        are assembled again, with ``contact_forced``)."""
        i0 = wp.tid() * chunk
        h2 = dt * dt
        for i in range(i0, wp.min(i0 + chunk, tree_bodies.shape[0])):
            b = tree_bodies[i]
            if not is_moving_body(bodies, b):
                continue
            if second_pass != 0:
                if group_idle[body_tree[b]] == 0:
                    continue
            fx, ft, hxx, hxt, htt, idle = assemble(
                bodies,
                joints,
                b,
                joint_slot_count,
                summed_slot_count,
                dt,
                joint_target_pos,
                joint_target_vel,
                joint_q_prev,
                joint_qd_prev,
                body_q_in,
                contacts,
                has_contacts,
                lin,
                xs,
                joint_duals,
                contact_duals,
                body_q,
                body_delta,
                joint_in_tree,
                body_tree,
                contact_forced,
                1,
            )
            if not (wp.trace(bodies.inv_inertia[b]) > 0.0):
                ft = wp.vec3(0.0)
                hxt = wp.mat33(0.0)
                htt = wp.identity(n=3, dtype=float) * (1.0e20 * h2)
            h = wp.spatial_matrix()
            for r in range(3):
                for k in range(3):
                    h[r, k] = hxx[r, k] * h2
                    h[r, 3 + k] = hxt[r, k] * h2
                    h[3 + r, k] = hxt[k, r] * h2
                    h[3 + r, 3 + k] = htt[r, k] * h2
            body_hessian[b] = h
            body_force[b] = wp.spatial_vector(fx * h2, ft * h2)
            body_idle[b] = idle

    return solve_body_colour, assemble_tree_bodies


solve_body_colour, assemble_tree_bodies = _make_solve_body_colour(False, VBD_KERNELS)
"""Body sweep of a model without transmission tendons or couplings (see the factory's kernel), and
the assembly of its articulation bodies' systems."""
solve_body_colour_transmissions, assemble_tree_bodies_transmissions = _make_solve_body_colour(True, TRANSMISSION_MODULE)
"""Body sweep of a model with transmission tendons or couplings, and its articulation assembly."""
solve_body_colour_tendons = _make_solve_body_colour(False, TENDON_MODULE, tendons_only=True)

UNIVERSAL_MODULE = "newton_tendon.kernels.vbd_universal"
"""Warp module of the body sweeps for models with universal joints (D6 joints with two angular
axes), with and without transmission rows: other models never compile them."""
wp.set_module_options({"enable_backward": False}, module=UNIVERSAL_MODULE)
solve_body_colour_universal, assemble_tree_bodies_universal = _make_solve_body_colour(
    False, UNIVERSAL_MODULE, universal=True
)
solve_body_colour_transmissions_universal, assemble_tree_bodies_transmissions_universal = _make_solve_body_colour(
    True, UNIVERSAL_MODULE, universal=True
)
"""Body sweep of a model without joints, contact capacity, transmission tendons or couplings."""


TREE_STEP_MODULE = "newton_tendon.kernels.vbd_tree_steps"
"""Warp module of the articulation pass's small helper kernels (no rows compiled in)."""
wp.set_module_options({"enable_backward": False}, module=TREE_STEP_MODULE)


@wp.kernel(module=TREE_STEP_MODULE)
def restore_idle_trees(
    # Model:
    tree_bodies: wp.array(dtype=wp.int32),
    body_tree: wp.array(dtype=wp.int32),
    group_idle: wp.array(dtype=wp.int32),
    # State: the current iterate, restored where its tree takes its step again
    body_q: wp.array(dtype=wp.transform),
    # Scratch: the step's pose changes (restored too), and both before the first Newton step
    body_delta: wp.array(dtype=wp.spatial_vector),
    saved_q: wp.array(dtype=wp.transform),
    saved_delta: wp.array(dtype=wp.spatial_vector),
):
    """Put the bodies of each articulation marked in ``group_idle`` back where its first Newton step
    of this iteration started (see ``assemble_tree_bodies``)."""
    b = tree_bodies[wp.tid()]
    if group_idle[body_tree[b]] != 0:
        body_q[b] = saved_q[b]
        body_delta[b] = saved_delta[b]
