"""VBD for rigid bodies: the 6x6 Newton system of one body and the penalty schedule of its rows.

The 6x6 Newton system of one body is carried as separate values (a struct carried through the
row loop stayed in memory and was copied per row): f = -dE/d(dx, dtheta) as ``fx`` [N] and ``ft``
[N m], H in 3x3 blocks ``hxx``, ``hxt``, ``htt``, and ``idle``, the number of unilateral rows left
out of this model because they were inactive where it was built (a separated contact, a slack
span, a limit about to engage; see ``solve_body_colour``). Each ``add_*`` takes the system and
returns it updated.

``moving_mass`` gives a row's inertial scale, from which a penalty ``k = rho m_eff / h^2`` follows
(``PenaltyParams``, see ``newton_tendon.kernels.vbd``).

The VBD kernels of joints and contacts and the body sweep of models with them compile into one Warp
module, ``VBD_KERNELS`` (the name of the single file they were split from); the kernels of
transmission tendons and the cable-only sweep have their own (``vbd_transmission_rows``,
``vbd_sweep``).
"""

import warp as wp

from newton_tendon.kernels.rigid import BodyModel, is_moving_body

VBD_KERNELS = "newton_tendon.kernels.vbd"
"""Warp module of the joint and contact dual kernels and of the sweep without transmission rows."""
wp.set_module_options({"enable_backward": False}, module=VBD_KERNELS)
wp.set_module_options({"enable_backward": False})


@wp.struct
class PenaltyParams:
    """Augmented-Lagrangian penalty schedule (dimensionless ``rho``, see ``newton_tendon.kernels.vbd``)."""

    rho_min: float
    rho_max: float
    growth: float
    """Penalty growth per iteration per unit error [1/m or 1/rad]: rho += growth |C|."""


@wp.func
def add_point_row(
    fx: wp.vec3,
    ft: wp.vec3,
    hxx: wp.mat33,
    hxt: wp.mat33,
    htt: wp.mat33,
    r: wp.vec3,
    grad: wp.vec3,
    k: float,
    proj: wp.mat33,
):
    """Add a row acting at the point with arm r [m] from the COM.

    ``grad`` = dE/dp [N] at the point; the point moves by ``dx + dtheta x r = dx - [r]x dtheta``,
    so the body gradient is ``(grad, r x grad)`` and the Hessian of ``(k/2)|P dp|^2`` is
    ``J^T k P J`` with ``J = [I, -[r]x]``.
    """
    sr = wp.skew(r)
    kp = proj * k
    return fx - grad, ft - wp.cross(r, grad), hxx + kp, hxt - kp * sr, htt - sr * kp * sr


@wp.func
def add_angle_row(ft: wp.vec3, htt: wp.mat33, grad: wp.vec3, k: float, proj: wp.mat33):
    """Add a row on the orientation: ``grad`` = dE/dtheta [N m], Hessian ``k P`` [N m/rad].
    Returns the updated (ft, htt)."""
    return ft - grad, htt + proj * k


@wp.func
def add_twist_row(
    fx: wp.vec3,
    ft: wp.vec3,
    hxx: wp.mat33,
    hxt: wp.mat33,
    htt: wp.mat33,
    jac: wp.spatial_vector,
    force: float,
    k: float,
):
    """Add a scalar row with 6-vector gradient ``jac``: dE/dx = force jac, Hessian k jac jac^T."""
    jx = wp.spatial_top(jac)
    jt = wp.spatial_bottom(jac)
    return (
        fx - jx * force,
        ft - jt * force,
        hxx + wp.outer(jx, jx) * k,
        hxt + wp.outer(jx, jt) * k,
        htt + wp.outer(jt, jt) * k,
    )


@wp.func
def solve_block(fx: wp.vec3, ft: wp.vec3, hxx: wp.mat33, hxt: wp.mat33, htt: wp.mat33, rotates: bool):
    """Solve H d = f by the Schur complement of the translation block (H is symmetric positive
    definite: the inertial term alone is). Returns d = (dx [m], dtheta [rad])."""
    a_inv = wp.inverse(hxx)
    if not rotates:
        return wp.spatial_vector(a_inv * fx, wp.vec3(0.0))
    bt = wp.transpose(hxt)
    schur = htt - bt * a_inv * hxt
    dth = wp.inverse(schur) * (ft - bt * (a_inv * fx))
    dx = a_inv * (fx - hxt * dth)
    return wp.spatial_vector(dx, dth)


@wp.func
def move_body(q: wp.transform, com: wp.vec3, d: wp.spatial_vector):
    """Translate the COM by dx and rotate about it by the exact exponential of dtheta."""
    rot = wp.transform_get_rotation(q)
    c = wp.transform_point(q, com) + wp.spatial_top(d)
    dth = wp.spatial_bottom(d)
    angle = wp.length(dth)
    if angle > 1.0e-12:
        rot = wp.normalize(wp.quat_from_axis_angle(dth / angle, angle) * rot)
    return wp.transform(c - wp.quat_rotate(rot, com), rot)


@wp.func
def moving_mass(bodies: BodyModel, b: int):
    """(mass [kg], mean principal inertia [kg m^2]) of b if it moves, else zeros."""
    if is_moving_body(bodies, b):
        return 1.0 / bodies.inv_mass[b], wp.trace(bodies.inertia[b]) / 3.0
    return 0.0, 0.0
