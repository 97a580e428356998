"""SolverXPBD's articulation joint pass: all joint rows of an articulation solved as one system.

The joint rows of one articulation (anchors, orientation locks, drives, limits and armature of all its
joints) are linearized at the current poses and solved together, exactly, in every iteration, by a
sparse factorization whose cost is linear in the number of joints (Baraff 1996, "Linear-time dynamics
using Lagrange multipliers", SIGGRAPH). The unknowns are each body's pose change d_b = (dx, dth)
(COM translation [m], rotation vector [rad]) and each joint's six row multipliers p_j [kg m or
kg m^2], and the system is

    [ M    -J^T ] [d]   [ w dt^2 ]        M = blockdiag(m_b 1, I_b) per body (world inertia)
    [ -J   -A   ] [p] = [ -b     ]        J d + A p = b: every row's linearized XPBD update

with A = diag(alpha~) (0 for a hard row: anchor, lock or violated limit; 1 / ((ke + kd/dt + I_a/dt^2)
dt^2) for a drive with armature) and b = -relax (C + alpha~ lambda). ``w dt^2`` is the generalized
joint forces' (``Control.joint_f``) impulse on each body, applied here, inside the solve, in the
first iteration only, instead of as a body wrench in the inertial prediction: a torque on a light link
(a 1 % virtual link between two hinges of an MJCF body) turned it by radians about its own COM in the
prediction, which the joint projection then had to undo nonlinearly; in joint space it moves the
articulation as its coordinate's effective mass says. A free axis is a row with J = 0, A = 1 and b = 0,
so its multiplier is 0.

The matrix's block sparsity is the tree of bodies and joints (``solvers._articulations``), so
eliminating nodes leaves first keeps it: for a node n with tree parent t,

    Z_n = D_n^-1 E_n,  z_n = D_n^-1 y_n,  D_t -= E_n^T Z_n,  y_t -= E_n^T z_n

(E_n the 6x6 block between n and t, D_n its diagonal block after its children's updates: positive
definite for a body, negative definite for a joint), then x_root = D_root^-1 y_root and, root to
leaves, x_n = z_n - Z_n x_t. Float64 throughout: a light link on a long lever puts 1e6 between
inertias in one tree.

SolverVBD (the ``newton`` variants) takes the same system as one Newton step of a tree's incremental
potential E(x) = sum_b |x_b - y_b|^2_M / (2 dt^2) + E_rows(x) with the tree's joint rows as
constraints: minimize d^T H d / 2 - f^T d subject to the linearized rows, where H and f = -dE/dx are
each body's 6x6 Hessian and force from its inertia and every row but its tree's joints (contacts,
cable spans, transmission tendons, loop joints; ``vbd_sweep.assemble_tree_bodies``, evaluated for all
tree bodies at the current poses). Scaled by dt^2 the blocks are ``H dt^2`` in place of M (which it
contains: M + dt^2 K_rows) and ``f dt^2`` in place of the impulses, plus the joint forces' ``w dt^2``
in every iteration (the force of an energy -w^T x, whose gradient is the same at every iterate).
A drive's row carries its whole force (lambda 0: the potential is re-evaluated every iteration, so
nothing accumulates), and a limit's multiplier is the last step's force, not a sum. H changes with
the contacts every iteration, so every iteration factors.
"""

import warp as wp

from newton_tendon.kernels.joints.coordinates import d6_universal_axes
from newton_tendon.kernels.joints.model import JointModel, parent_pose
from newton_tendon.kernels.joints.xpbd_rows import angle_near_range, coordinate_row
from newton_tendon.kernels.math import quat_to_rotation_vector, twist_angle
from newton_tendon.kernels.rigid import BodyModel, is_moving_body, move_body
from newton_tendon.kernels.types import JOINT_D6, JOINT_PRISMATIC, JOINT_REVOLUTE

wp.set_module_options({"enable_backward": False})

mat66d = wp.types.matrix(shape=(6, 6), dtype=wp.float64)
vec6d = wp.types.vector(length=6, dtype=wp.float64)
vec6i = wp.types.vector(length=6, dtype=wp.int32)

NODE_BODY = wp.constant(0)
NODE_JOINT = wp.constant(1)

TRUST_ROTATION = wp.constant(0.25)
"""Largest rotation [rad] of any body of a tree in one iteration's articulation solve; a larger
solution is scaled down as a whole (it stays a solution of the linearized rows, shortened). The
solve is exact for the rows linearized at the current poses, and a push near a hinge on a chain of
light links (dm_control's dog landing on the tip of its 20-vertebra tail, 1 g links with 1e-4 kg m^2
armature) asked for 0.8 rad of a tip link in one iteration, where the linearization no longer holds:
the tail spun at 840 rad/s. Smooth motion corrects by far less per iteration (a 20 N m thumb motor
of humanoid_CMU: 8e-3 rad), so the region only acts where the linearization would fail."""

HUGE_INERTIA = 1.0e20
"""Inertia [kg m^2] that stands in for an infinite one (a moving body whose inverse inertia is 0: it
translates but does not turn)."""


@wp.func
def definite_factor6(d: mat66d, sign: wp.float64):
    """The lower Cholesky factor of ``sign D`` for a definite 6x6 block D (``sign`` +1: positive
    definite, -1: negative). A pivot that rounding made non-positive counts as a tiny positive one
    (the row it belongs to moves nothing), so a degenerate tree never yields NaN. Loops have constant
    bounds (Warp unrolls them; with bounds that depend on the row they ran as loops)."""
    s = d * sign
    el = mat66d()
    for i in range(6):
        for k in range(6):
            if k <= i:
                acc = s[i, k]
                for m in range(6):
                    if m < k:
                        acc = acc - el[i, m] * el[k, m]
                if i == k:
                    floor = wp.float64(1.0e-30) + wp.float64(1.0e-14) * wp.abs(s[i, i])
                    if acc < floor:
                        acc = floor
                    el[i, i] = wp.sqrt(acc)
                else:
                    el[i, k] = acc / el[k, k]
    return el


@wp.func
def factor_solve6(el: mat66d, sign: wp.float64, y: vec6d):
    """``D^-1 y`` from ``definite_factor6``'s factor of ``sign D``."""
    v = y * sign
    for i in range(6):
        acc = v[i]
        for m in range(6):
            if m < i:
                acc = acc - el[i, m] * v[m]
        v[i] = acc / el[i, i]
    for ii in range(6):
        i = 5 - ii
        acc = v[i]
        for m in range(6):
            if m > i:
                acc = acc - el[m, i] * v[m]
        v[i] = acc / el[i, i]
    return v


ROW_DRIVE = wp.constant(1)
ROW_LOWER = wp.constant(2)
ROW_UPPER = wp.constant(3)


@wp.func
def tree_coordinate_row(
    q: float,
    lo: float,
    hi: float,
    ke: float,
    kd: float,
    armature: float,
    dt: float,
    q_prev: float,
    qd_prev: float,
    target_pos: float,
    target_vel: float,
    lam: float,
    limit_lam: float,
    angular: bool,
):
    """``xpbd_rows.coordinate_row`` with limits that hold for the rest of the step once they act.

    A limit is unilateral: its row exists while q is past the bound or while the multiplier it has
    accumulated this step (``limit_lam``: > 0 pushing q up from the lower bound, < 0 down from the
    upper) still pushes; then C = q - bound, so q rests on the bound (complementarity: a pushing
    limit holds q there). Read only while violated, a limit met exactly by one iteration's solve was
    gone in the next, where the armature row (the coordinate's inertia, still aiming past the bound)
    took q through it again: the tendon arm's elbow, landing on its -2 rad limit, bounced 0.07 rad at
    8 iterations and not at 128. Returns (mode, rhs, alpha~, kind): kind 0 free, ``ROW_DRIVE``,
    ``ROW_LOWER`` or ``ROW_UPPER``."""
    if angular:
        q = angle_near_range(q, lo, hi)
    if q < lo or (limit_lam > 0.0 and q <= hi):
        return 2, q - lo, 0.0, ROW_LOWER
    if q > hi or (limit_lam < 0.0 and q >= lo):
        return 2, q - hi, 0.0, ROW_UPPER
    mode, rhs, alpha, is_drive = coordinate_row(
        q, lo, hi, ke, kd, armature, dt, q_prev, qd_prev, target_pos, target_vel, lam, angular
    )
    kind = int(0)
    if is_drive:
        kind = ROW_DRIVE
    return mode, rhs, alpha, kind


@wp.func
def parent_com(bodies: BodyModel, p: int):
    """The parent body's COM in its frame (the origin for the world)."""
    if p < 0:
        return wp.vec3(0.0)
    return bodies.com[p]


@wp.func
def row_bits(kind: int, row: int):
    """A row's bits in a joint node's row word: bit ``row`` a drive's, ``6 + row`` a limit's and
    ``12 + row`` an upper limit's."""
    if kind == ROW_DRIVE:
        return 1 << row
    if kind == ROW_LOWER:
        return 1 << (6 + row)
    if kind == ROW_UPPER:
        return (1 << (6 + row)) | (1 << (12 + row))
    return 0


@wp.func
def complete_basis(axes: wp.mat33, n: int):
    """Rows: the first ``n`` rows of ``axes`` (orthonormal) completed to a right-handed orthonormal
    basis of R^3 (``n`` = 0: the world axes)."""
    out = wp.mat33(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    if n >= 1:
        a = axes[0]
        out[0] = a
        b = axes[1]
        if n == 1:
            # Any unit vector across a: the world axis least aligned with it, made orthogonal.
            t = wp.vec3(1.0, 0.0, 0.0)
            if wp.abs(a[0]) > 0.6:
                t = wp.vec3(0.0, 1.0, 0.0)
            b = wp.normalize(t - a * wp.dot(a, t))
        out[1] = b
        out[2] = wp.cross(a, b)
        if n == 3:
            out[2] = axes[2]
    return out


@wp.func
def body_block(j_rows: wp.mat33, a_rows: wp.mat33, r: wp.vec3, sign: wp.float64):
    """The 6x6 Jacobian block ``sign R H^T`` of a joint's rows on one of its bodies: the rows
    ``R = blockdiag(j_rows, a_rows)`` act on the anchor separation and relative rotation, which a
    body pose change (dx, dth) with arm ``r`` (COM to anchor) changes by ``H^T d = (dx - [r]x dth,
    dth)``."""
    out = mat66d()
    rd = wp.vec3d(r)
    for i in range(3):
        lr = wp.vec3d(j_rows[i])
        a = wp.vec3d(a_rows[i])
        # The anchor moves by dx + dth x r, and lr . (dth x r) = (r x lr) . dth.
        m = wp.cross(rd, lr)
        for k in range(3):
            out[i, k] = sign * lr[k]
            out[i, 3 + k] = sign * m[k]
            out[3 + i, k] = wp.float64(0.0)
            out[3 + i, 3 + k] = sign * a[k]
    return out


@wp.func
def body_mass_block(bodies: BodyModel, b: int, q: wp.transform):
    """``blockdiag(m 1, I_w)`` of a moving body (world inertia about its COM), the identity for a
    body that cannot move (its rows' blocks on it are 0, so it stays put)."""
    out = mat66d()
    if not is_moving_body(bodies, b):
        for i in range(6):
            out[i, i] = wp.float64(1.0)
        return out
    m = wp.float64(1.0) / wp.float64(bodies.inv_mass[b])
    r = wp.quat_to_matrix(wp.transform_get_rotation(q))
    inv_w = wp.mat33d(r * bodies.inv_inertia[b] * wp.transpose(r))
    inertia = wp.identity(3, dtype=wp.float64) * wp.float64(HUGE_INERTIA)
    if wp.determinant(inv_w) > wp.float64(0.0):
        inertia = wp.inverse(inv_w)
    for i in range(3):
        out[i, i] = m
        for k in range(3):
            out[3 + i, 3 + k] = inertia[i, k]
    return out


@wp.struct
class TreeNodes:
    """The trees of the articulation pass (``solvers._articulations``: node CSR per group) and its
    per-node scratch, one struct so a launch packs one argument for them.

    ``start`` [groups + 1], ``kind``, ``index``, ``parent``, ``pbody``, ``cbody`` [nodes]: the trees;
    ``d``, ``e``, ``y``: each node's diagonal block, block to its tree parent and right-hand side
    (then its solution); ``drive``: a joint node's row bits; ``factor``, ``z``, ``mask``: the factorization
    the iterations of a step reuse (factor of +-D, D^-1 E, row pattern); ``rows_l``, ``rows_a``,
    ``arm_c``, ``arm_p``: a joint node's rows and the arms its blocks on its two bodies are built from."""

    start: wp.array(dtype=wp.int32)
    kind: wp.array(dtype=wp.int32)
    index: wp.array(dtype=wp.int32)
    parent: wp.array(dtype=wp.int32)
    pbody: wp.array(dtype=wp.int32)
    cbody: wp.array(dtype=wp.int32)
    d: wp.array(dtype=mat66d)
    e: wp.array(dtype=mat66d)
    y: wp.array(dtype=vec6d)
    drive: wp.array(dtype=wp.int32)
    factor: wp.array(dtype=mat66d)
    z: wp.array(dtype=mat66d)
    mask: wp.array(dtype=wp.int32)
    rows_l: wp.array(dtype=wp.mat33)
    rows_a: wp.array(dtype=wp.mat33)
    arm_c: wp.array(dtype=wp.vec3)
    arm_p: wp.array(dtype=wp.vec3)


@wp.func
def drive_lambda(joint_lambda: wp.array(dtype=float), dof: int, newton: bool):
    """A drive row's accumulated multiplier: XPBD's (its rows carry the force of the earlier
    iterations as lambda), 0 in a Newton step (the row's right-hand side is its whole force)."""
    if newton:
        return 0.0
    return joint_lambda[dof]


@wp.func
def body_newton_block(bodies: BodyModel, b: int, body_hessian: wp.array(dtype=wp.spatial_matrix)):
    """A tree body's block in SolverVBD's Newton step: its Hessian times dt^2 (``body_hessian``, the
    inertia and every row but its tree's joints), the identity for a body that cannot move."""
    out = mat66d()
    if not is_moving_body(bodies, b):
        for i in range(6):
            out[i, i] = wp.float64(1.0)
        return out
    h = body_hessian[b]
    for i in range(6):
        for k in range(6):
            out[i, k] = wp.float64(h[i, k])
    return out


def _make_articulation_pass(universal: bool, armature: bool, newton: bool = False):
    """The pass for models with (or without) universal joints and row armature. ``newton``: SolverVBD's
    variant, a Newton step of each tree's incremental potential (module docstring, "SolverVBD")."""

    def articulation_pass(
        # Model: the trees (``solvers._articulations``: node CSR per group, ``chunk`` groups per thread)
        bodies: BodyModel,
        joints: JointModel,
        linear_relaxation: float,
        angular_relaxation: float,
        dt: float,
        nodes: TreeNodes,
        group_list: wp.array(dtype=wp.int32),
        group_count: int,
        chunk: int,
        apply_forces: int,  # 1: add the joint forces' impulses (``joint_wrench`` dt^2): the first iteration
        apply_impulses: int,  # 1: add the other rows' impulses (``body_impulse``)
        response: int,  # 1: write each tree body's articulated response (step 4)
        # Control:
        joint_target_pos: wp.array(dtype=float),
        joint_target_vel: wp.array(dtype=float),
        # State: joint coordinates at the step start; predicted poses, corrected in place
        joint_q_prev: wp.array(dtype=float),
        joint_qd_prev: wp.array(dtype=float),
        body_q: wp.array(dtype=wp.transform),
        # Scratch: joint wrenches per slot, the other rows' impulses (``rigid.apply_slot_pose_deltas``)
        joint_wrench: wp.array(dtype=wp.spatial_vector),
        body_impulse: wp.array(dtype=wp.spatial_vector),
        joint_lambda: wp.array(dtype=float),
        body_delta: wp.array(dtype=wp.spatial_vector),
        body_response: wp.array(dtype=wp.spatial_matrix),
        limit_lambda: wp.array(dtype=float),
        body_hessian: wp.array(dtype=wp.spatial_matrix),
        body_idle: wp.array(dtype=wp.int32),
        group_idle: wp.array(dtype=wp.int32),
        second_pass: int,
        joint_force: wp.array(dtype=wp.spatial_vector),
        joint_limit_force: wp.array(dtype=wp.vec2),
    ):
        """One iteration's articulation solve for ``chunk`` groups of ``group_list`` (all groups for
        XPBD; one colour of them for SolverVBD) (see the module docstring).

        SolverVBD's variant (``newton``) marks in ``group_idle`` each group with a body whose model
        left out an inactive unilateral row (``body_idle``); in the ``second_pass`` only those groups
        take another Newton step (``vbd_sweep.assemble_tree_bodies``)."""
        tid = wp.tid()
        g0 = tid * chunk
        g1 = wp.min(g0 + chunk, group_count)
        # One group (the trees of one articulation) after another: the decisions below (refactoring,
        # the trust region) are each group's own, so a world's result never depends on another's.
        for gi in range(g0, g1):
            g = group_list[gi]
            n_first = nodes.start[g]
            n_last = nodes.start[g + 1]
            if wp.static(newton):
                if second_pass != 0:
                    if group_idle[g] == 0:
                        continue
                else:
                    idle = int(0)
                    for n in range(n_first, n_last):
                        if nodes.kind[n] == NODE_BODY:
                            idle = idle + body_idle[nodes.index[n]]
                    group_idle[g] = idle
            dt2 = wp.float64(dt) * wp.float64(dt)
            # 1. Body nodes: the joint forces' impulses and the other rows' (their blocks are built in
            # step 3, when the group is factored).
            for n in range(n_first, n_last):
                if nodes.kind[n] == NODE_BODY:
                    b = nodes.index[n]
                    y = vec6d()
                    if apply_forces != 0:
                        for si in range(bodies.slot_start[b], bodies.slot_start[b + 1]):
                            slot = bodies.slot[si]
                            if slot < 2 * joints.parent.shape[0]:
                                w = joint_wrench[slot]
                                for k in range(6):
                                    y[k] = y[k] + wp.float64(w[k]) * dt2
                    if apply_impulses != 0:
                        imp = body_impulse[b]
                        for k in range(6):
                            y[k] = y[k] + wp.float64(imp[k])
                    nodes.y[n] = y
            # 2. Joint nodes: rows linearized at the current poses.
            changed = int(0)
            for n in range(n_first, n_last):
                if nodes.kind[n] != NODE_JOINT:
                    continue
                j = nodes.index[n]
                jt = joints.type[j]
                p = joints.parent[j]
                c = joints.child[j]
                q_p = parent_pose(body_q, p)
                q_c = body_q[c]
                ds = joints.qd_start[j]
                qs = joints.q_start[j]
                dim = joints.dof_dim[j]
                n_lin = dim[0]
                n_ang = dim[1]
                has_coord = jt == JOINT_REVOLUTE or jt == JOINT_PRISMATIC or jt == JOINT_D6
                X_wp = q_p * joints.X_p[j]
                X_wc = q_c * joints.X_c[j]
                rot_p = wp.transform_get_rotation(X_wp)
                rot_c = wp.transform_get_rotation(X_wc)
                x_p = wp.transform_get_translation(X_wp)
                x_c = wp.transform_get_translation(X_wc)
                d = x_c - x_p
                # Rows: active (1) or not, the right-hand side C + alpha~ lambda, and alpha~.
                active = vec6i()
                rhs = vec6d()
                alpha = vec6d()
                drive = int(0)
                # Linear rows: the joint's axes (coordinates: free, a drive or a violated limit), then
                # the basis completed across them (the anchor lock, hard).
                lin_axes = wp.mat33(0.0)
                along = wp.vec3(0.0)
                for k in range(n_lin):
                    a_w = wp.quat_rotate(rot_p, joints.axis[ds + k])
                    lin_axes[k] = a_w
                    along = along + a_w * wp.dot(d, a_w)
                lin_rows = complete_basis(lin_axes, n_lin)
                for k in range(3):
                    if k >= n_lin:
                        active[k] = 1
                        rhs[k] = wp.float64(wp.dot(d, lin_rows[k]))
                    elif has_coord:
                        arm = float(0.0)
                        qd_n = float(0.0)
                        if wp.static(armature):
                            arm = joints.armature[ds + k]
                            qd_n = joint_qd_prev[ds + k]
                        mode, r, al, kind = tree_coordinate_row(
                            wp.dot(d, lin_axes[k]),
                            joints.limit_lower[ds + k],
                            joints.limit_upper[ds + k],
                            joints.target_ke[ds + k],
                            joints.target_kd[ds + k],
                            arm,
                            dt,
                            joint_q_prev[qs + k],
                            qd_n,
                            joint_target_pos[ds + k],
                            joint_target_vel[ds + k],
                            drive_lambda(joint_lambda, ds + k, wp.static(newton)),
                            limit_lambda[ds + k],
                            False,
                        )
                        if mode == 2:
                            active[k] = 1
                            rhs[k] = wp.float64(r)
                            alpha[k] = wp.float64(al)
                            drive = drive | row_bits(kind, k)
                # Angular rows: none free (fixed, prismatic): the world axes on the rotation vector;
                # a hinge: its axis (the coordinate) and two across it (the swing lock); a universal
                # joint: its two coordinates' gradients and the lock's (``universal_axes``); a ball: none.
                ang_rows = wp.mat33(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
                ang_q = wp.vec3(0.0)
                if n_ang == 0:
                    err = quat_to_rotation_vector(rot_c * wp.quat_inverse(rot_p))
                    for k in range(3):
                        active[3 + k] = 1
                        rhs[3 + k] = wp.float64(err[k])
                elif n_ang == 1:
                    axis = joints.axis[ds + n_lin]
                    a_p = wp.quat_rotate(rot_p, axis)
                    basis = wp.mat33(0.0)
                    basis[0] = a_p
                    ang_rows = complete_basis(basis, 1)
                    a_c = wp.quat_rotate(rot_c, axis)
                    sw = wp.cross(a_p, a_c)
                    sn = wp.length(sw)
                    swing = wp.vec3(0.0)
                    if sn > 1.0e-9:
                        swing = sw * (wp.atan2(sn, wp.dot(a_c, a_p)) / sn)
                    for k in range(1, 3):
                        active[3 + k] = 1
                        rhs[3 + k] = wp.float64(wp.dot(swing, ang_rows[k]))
                    ang_q[0] = twist_angle(wp.quat_inverse(rot_p) * rot_c, axis)
                elif n_ang == 2:
                    if wp.static(universal):
                        ang, u, nrm = d6_universal_axes(rot_p, wp.quat_inverse(rot_p) * rot_c, joints, ds + n_lin)
                        ang_rows = wp.transpose(u)
                        active[5] = 1
                        rhs[5] = wp.float64(ang[2])
                        ang_q[0] = ang[0]
                        ang_q[1] = ang[1]
                if has_coord and (n_ang == 1 or n_ang == 2):
                    for k in range(n_ang):
                        dk = ds + n_lin + k
                        arm = float(0.0)
                        qd_n = float(0.0)
                        if wp.static(armature):
                            arm = joints.armature[dk]
                            qd_n = joint_qd_prev[dk]
                        mode, r, al, kind = tree_coordinate_row(
                            ang_q[k],
                            joints.limit_lower[dk],
                            joints.limit_upper[dk],
                            joints.target_ke[dk],
                            joints.target_kd[dk],
                            arm,
                            dt,
                            joint_q_prev[qs + n_lin + k],
                            qd_n,
                            joint_target_pos[dk],
                            joint_target_vel[dk],
                            drive_lambda(joint_lambda, dk, wp.static(newton)),
                            limit_lambda[dk],
                            True,
                        )
                        if mode == 2:
                            active[3 + k] = 1
                            rhs[3 + k] = wp.float64(r)
                            alpha[3 + k] = wp.float64(al)
                            drive = drive | row_bits(kind, 3 + k)
                moving_p = is_moving_body(bodies, p)
                moving_c = is_moving_body(bodies, c)
                if joints.enabled[j] == 0 or not (moving_p or moving_c):
                    for k in range(6):
                        active[k] = 0
                # Inactive rows: zero in J, 1 on the diagonal, 0 on the right: their multiplier is 0.
                dj = mat66d()
                yj = vec6d()
                for k in range(6):
                    relax = wp.float64(linear_relaxation)
                    if k >= 3:
                        relax = wp.float64(angular_relaxation)
                    if active[k] != 0:
                        dj[k, k] = -alpha[k]
                        yj[k] = relax * rhs[k]  # -b = relax (C + alpha~ lambda)
                    else:
                        dj[k, k] = wp.float64(-1.0)
                        if k < 3:
                            lin_rows[k] = wp.vec3(0.0)
                        else:
                            ang_rows[k - 3] = wp.vec3(0.0)
                nodes.d[n] = dj
                nodes.y[n] = yj
                nodes.drive[n] = drive
                # The rows' pattern: which are active, of which kind, on which moving bodies. Where it
                # changed since the last factorization, the factorization is redone (step 3).
                mask = drive << 6
                for k in range(6):
                    if active[k] != 0:
                        mask = mask | (1 << k)
                if moving_p:
                    mask = mask | (1 << 24)
                if moving_c:
                    mask = mask | (1 << 25)
                if mask != nodes.mask[n]:
                    changed = 1
                    nodes.mask[n] = mask
                # The rows and the arms their blocks on the two bodies are built from (step 3): the
                # parent's arm reaches the point of its axis the child anchor is at (a slider's rows
                # turn with it).
                nodes.rows_l[n] = lin_rows
                nodes.rows_a[n] = ang_rows
                nodes.arm_c[n] = x_c - wp.transform_point(q_c, bodies.com[c])
                nodes.arm_p[n] = x_p + along - wp.transform_point(q_p, parent_com(bodies, p))
            # 3. Eliminate leaves first. The first iteration of a step, and any iteration whose row
            # pattern changed (a limit caught or let go), factors the matrix at the current poses and
            # keeps each node's factor L_n (of +-D_n) and Z_n = D_n^-1 E_n; the other iterations reuse
            # them (the chord method: the rows' right-hand sides are current, the matrix is the one at
            # the factorization, a few milliradians of rotation apart within a step), which costs a
            # triangular solve and two 6x6 products per node instead of a factorization.
            refactor = apply_forces != 0 or changed != 0 or wp.static(newton)
            if refactor:
                # The blocks: bodies' mass blocks, then each joint's blocks on its two bodies
                # (E = -J on the joint's side, -J^T on a body's).
                for n in range(n_first, n_last):
                    nodes.e[n] = mat66d()
                    if nodes.kind[n] == NODE_BODY:
                        b = nodes.index[n]
                        if wp.static(newton):
                            nodes.d[n] = body_newton_block(bodies, b, body_hessian)
                        else:
                            nodes.d[n] = body_mass_block(bodies, b, body_q[b])
                for n in range(n_first, n_last):
                    if nodes.kind[n] != NODE_JOINT:
                        continue
                    mask = nodes.mask[n]
                    t = nodes.parent[n]
                    nc = nodes.cbody[n]
                    np_ = nodes.pbody[n]
                    if nc >= 0 and (mask & (1 << 25)) != 0:
                        jc = body_block(nodes.rows_l[n], nodes.rows_a[n], nodes.arm_c[n], wp.float64(1.0))
                        if t == nc:
                            nodes.e[n] = -jc
                        else:
                            nodes.e[nc] = -wp.transpose(jc)
                    if np_ >= 0 and (mask & (1 << 24)) != 0:
                        jp = body_block(nodes.rows_l[n], nodes.rows_a[n], nodes.arm_p[n], wp.float64(-1.0))
                        if t == np_:
                            nodes.e[n] = -jp
                        else:
                            nodes.e[np_] = -wp.transpose(jp)
            for n in range(n_first, n_last):
                sign = wp.float64(1.0)
                if nodes.kind[n] == NODE_JOINT:
                    sign = wp.float64(-1.0)
                t = nodes.parent[n]
                y_n = nodes.y[n]
                if refactor:
                    e = nodes.e[n]
                    el = definite_factor6(nodes.d[n], sign)
                    z_m = mat66d()
                    for col in range(6):
                        v = factor_solve6(
                            el, sign, vec6d(e[0, col], e[1, col], e[2, col], e[3, col], e[4, col], e[5, col])
                        )
                        for i in range(6):
                            z_m[i, col] = v[i]
                    nodes.factor[n] = el
                    nodes.z[n] = z_m
                    if response != 0:
                        d_inv = mat66d()
                        for col in range(6):
                            unit = vec6d()
                            unit[col] = wp.float64(1.0)
                            v = factor_solve6(el, sign, unit)
                            for i in range(6):
                                d_inv[i, col] = v[i]
                        nodes.d[n] = d_inv
                    if t >= 0:
                        nodes.d[t] = nodes.d[t] - wp.transpose(e) * z_m
                z_y = factor_solve6(nodes.factor[n], sign, y_n)
                if t >= 0:
                    # E_n^T D_n^-1 y_n = Z_n^T y_n (D_n symmetric).
                    nodes.y[t] = nodes.y[t] - wp.transpose(nodes.z[n]) * y_n
                nodes.y[n] = z_y
            # 4. Back substitution, roots first (reverse order): x_n = z_n - Z_n x_t. After a
            # factorization with ``response``, also the diagonal blocks of the inverse,
            # S_n = D_n^-1 + Z_n S_t Z_n^T (S_root = D_root^-1): a body's S is its pose change per unit
            # wrench on it with every joint row of its tree held, the articulated response the contact
            # rows weigh their impulses with.
            inverse = refactor and response != 0
            for i in range(n_last - n_first):
                n = n_last - 1 - i
                t = nodes.parent[n]
                if t >= 0:
                    z_m = nodes.z[n]
                    nodes.y[n] = nodes.y[n] - z_m * nodes.y[t]
                    if inverse:
                        nodes.d[n] = nodes.d[n] + z_m * nodes.d[t] * wp.transpose(z_m)
                if inverse and nodes.kind[n] == NODE_BODY:
                    b = nodes.index[n]
                    s_n = nodes.d[n]
                    out = wp.spatial_matrix()
                    if is_moving_body(bodies, b):
                        for ri in range(6):
                            for ki in range(6):
                                out[ri, ki] = float(s_n[ri, ki])
                    body_response[b] = out
            # 5. Apply, within the trust region: bodies move, drives keep their multipliers.
            largest = wp.float64(0.0)
            for n in range(n_first, n_last):
                if nodes.kind[n] == NODE_BODY:
                    x = nodes.y[n]
                    largest = wp.max(largest, x[3] * x[3] + x[4] * x[4] + x[5] * x[5])
            scale = wp.float64(1.0)
            if largest > wp.float64(TRUST_ROTATION * TRUST_ROTATION):
                scale = wp.float64(TRUST_ROTATION) / wp.sqrt(largest)
            for n in range(n_first, n_last):
                x = nodes.y[n] * scale
                if nodes.kind[n] == NODE_BODY:
                    b = nodes.index[n]
                    move_body(
                        bodies,
                        b,
                        wp.spatial_vector(float(x[0]), float(x[1]), float(x[2]), float(x[3]), float(x[4]), float(x[5])),
                        body_q,
                        body_delta,
                    )
                else:
                    if wp.static(newton):
                        # The locks' force on the child [N, N m] (lambda of VBD's joint rows, whose
                        # force on the child is -lambda): a row's multiplier is an impulse times dt.
                        jn = nodes.index[n]
                        dim_n = joints.dof_dim[jn]
                        rl = nodes.rows_l[n]
                        ra = nodes.rows_a[n]
                        f_lin = wp.vec3(0.0)
                        f_ang = wp.vec3(0.0)
                        for k in range(3):
                            if k >= dim_n[0]:
                                f_lin = f_lin + rl[k] * float(x[k])
                            if k >= dim_n[1]:
                                f_ang = f_ang + ra[k] * float(x[3 + k])
                        inv_dt2 = 1.0 / (dt * dt)
                        joint_force[jn] = wp.spatial_vector(-f_lin * inv_dt2, -f_ang * inv_dt2)
                        # Limits: (lower, upper) force, <= 0 while it pushes (VBD's convention).
                        bits_n = nodes.drive[n]
                        ds_n = joints.qd_start[jn]
                        for ri in range(6):
                            on = ri < dim_n[0] or (ri >= 3 and ri - 3 < dim_n[1])
                            if on:
                                dof = ds_n + ri
                                if ri >= 3:
                                    dof = ds_n + dim_n[0] + ri - 3
                                lim = wp.vec2(0.0)
                                if (bits_n & (1 << (6 + ri))) != 0:
                                    push = float(x[ri]) * inv_dt2
                                    if (bits_n & (1 << (12 + ri))) != 0:
                                        lim = wp.vec2(0.0, wp.min(push, 0.0))
                                    else:
                                        lim = wp.vec2(-wp.max(push, 0.0), 0.0)
                                joint_limit_force[dof] = lim
                    bits = nodes.drive[n]
                    if bits != 0:
                        j = nodes.index[n]
                        ds = joints.qd_start[j]
                        dim = joints.dof_dim[j]
                        for ri in range(6):
                            dof = ds + ri
                            if ri >= 3:
                                dof = ds + dim[0] + ri - 3
                            if (bits & (1 << ri)) != 0 and not wp.static(newton):
                                joint_lambda[dof] = joint_lambda[dof] + float(x[ri])
                            if (bits & (1 << (6 + ri))) != 0:
                                # A limit keeps its multiplier while it pushes, and lets go when it would pull.
                                # (A Newton step's multiplier is the whole force, not an increment.)
                                lam = float(x[ri])
                                if not wp.static(newton):
                                    lam = lam + limit_lambda[dof]
                                if (bits & (1 << (12 + ri))) != 0:
                                    limit_lambda[dof] = wp.min(lam, 0.0)
                                else:
                                    limit_lambda[dof] = wp.max(lam, 0.0)

    return articulation_pass


ARTICULATION_MODULE = "newton_tendon.kernels.joints_articulation"
"""Warp module of the ``solve_articulations`` variants."""
wp.get_module(ARTICULATION_MODULE).options["enable_backward"] = False

NEWTON_MODULE = "newton_tendon.kernels.joints_articulation_vbd"
"""Warp module of SolverVBD's variants (``newton``), so that neither solver compiles the other's."""
for _suffix in ("", "_universal", "_armature", "_universal_armature"):
    wp.get_module(ARTICULATION_MODULE + _suffix).options["enable_backward"] = False
    wp.get_module(NEWTON_MODULE + _suffix).options["enable_backward"] = False

_ARTICULATION_VARIANTS = {
    (u, a, n): wp.kernel(
        _make_articulation_pass(u, a, n),
        name="solve_articulations"
        + ("_newton" if n else "")
        + ("_universal" if u else "")
        + ("_armature" if a else ""),
        # One module per variant: a model compiles only the one it runs (four in one module took 25 s
        # to compile on the CPU).
        module=(NEWTON_MODULE if n else ARTICULATION_MODULE) + ("_universal" if u else "") + ("_armature" if a else ""),
    )
    for u in (False, True)
    for a in (False, True)
    for n in (False, True)
}


def solve_articulation_kernel(universal: bool, armature: bool, newton: bool = False):
    """The ``solve_articulations`` variant for a model with (or without) universal joints and row
    armature; ``newton``: SolverVBD's Newton step of each tree."""
    return _ARTICULATION_VARIANTS[(bool(universal), bool(armature), bool(newton))]
