"""VBD for rigid bodies: the row of a routed-cable span on the body that holds one of its ends.

The span is linearized once per iteration by the cable kernels (``cable.TendonLinearization``); here
it adds its tension along the end's gradient, its stiffness and its geometric stiffness to the
body's block.
"""

import warp as wp

from newton_tendon.kernels.cable import TendonLinearization, linearized_tension, row_tension, single_row
from newton_tendon.kernels.vbd_block import add_point_row, add_twist_row

wp.set_module_options({"enable_backward": False})


@wp.func
def add_tendon_slot(
    fx: wp.vec3,
    ft: wp.vec3,
    hxx: wp.mat33,
    hxt: wp.mat33,
    htt: wp.mat33,
    idle: int,
    lin: TendonLinearization,
    gi: int,
    body_tree: wp.array(dtype=wp.int32),
    tree: bool,
):
    """Add the span held by guide slot gi (linearized, see ``cable.TendonLinearization``).
    Returns the updated (fx, ft, hxx, hxt, htt, idle).

    ``tree``: the body steps together with the other articulation bodies (``body_tree`` >= 0), all
    from one model. A row's energy is convex in the sum of its n bodies' terms J_b d_b, and
    (sum_b J_b d_b)^2 <= n sum_b (J_b d_b)^2, so each body's model takes the row's stiffness times n
    (the articulation bodies on the span, or on the route for a run or chain row): the simultaneous
    steps then cannot overshoot. Without it a stiff span (1e-6 m/N) between a slider and the pulley
    that drives it, each on a hinge of its own, kept both oscillating."""
    s = lin.slot_span[gi]
    if s < 0:
        return fx, ft, hxx, hxt, htt, idle
    k = lin.k[s]
    if k <= 0.0:
        return fx, ft, hxx, hxt, htt, idle
    tension = float(0.0)
    if single_row(lin, s):
        tension = linearized_tension(lin, s)
        k = k + lin.damp[s]
    else:
        # A span of a run or chain row: its run's tension and stiffness (``cable.TendonLinearization``).
        head = lin.run_head[s]
        tension = row_tension(lin, head)
        k = 1.0 / lin.run_flex[head]
    if tension <= 0.0:
        return fx, ft, hxx, hxt, htt, idle + 1  # slack
    scale = float(1.0)
    if tree:
        if single_row(lin, s):
            ends = float(0.0)
            if lin.bl[s] >= 0:
                if body_tree[lin.bl[s]] >= 0:
                    ends += 1.0
            if lin.br[s] >= 0:
                if body_tree[lin.br[s]] >= 0:
                    ends += 1.0
            scale = wp.max(ends, 1.0)
        else:
            scale = wp.max(lin.route_tree_bodies[s], 1.0)
    k = k * scale
    # The span leaves this guide: this body holds its left end. gi counts from the first guide slot
    # (``paired_slot``), so its parity is the side whatever precedes the guide slots.
    left = gi % 2 == 1
    jac = lin.jr[s]
    if left:
        jac = lin.jl[s]
    fx, ft, hxx, hxt, htt = add_twist_row(fx, ft, hxx, hxt, htt, jac, tension, k)
    kg = lin.kg[s]
    if kg > 0.0:
        # Geometric stiffness (T/l)(I - n n^T) of the end point (``TendonLinearization.kg``).
        r = lin.rr[s]
        if left:
            r = lin.rl[s]
        n = wp.spatial_top(jac)
        proj = wp.identity(n=3, dtype=float) - wp.outer(n, n)
        fx, ft, hxx, hxt, htt = add_point_row(fx, ft, hxx, hxt, htt, r, wp.vec3(), kg * scale, proj)
    return fx, ft, hxx, hxt, htt, idle
