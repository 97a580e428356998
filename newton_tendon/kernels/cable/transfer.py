"""Routed cables: the rules by which material crosses a guide in the material relaxation
(``relax``): the capstan transfer between two runs (``capstan_transfer``, ``tight_transfer``), what a
rigid run takes or gives (``rigid_run_stretch``, ``rigid_transfer``, ``share_rigid_run``), the
tension a run holds beside a stopped span (``stopped_member_tension``), and the stall of a length
winch that reeled in more than its cable can give (``stall_length_winch``).

Each rule reads one guide or one run; the phases that apply them are in ``relax``. VBD's chain rows
(``vbd_rows.chain_tension``) apply ``capstan_transfer`` within a body sweep, so a change to a rule
changes both solvers.
"""

import warp as wp

from newton_tendon.kernels.cable.cached import TendonGeometry
from newton_tendon.kernels.cable.constants import (
    CAPSTAN_RATIO_MAX,
    REST_LENGTH_FLOOR,
    RIGID_FLEX,
    RIGID_STRETCH_ROUNDING,
    TENSION_MULTIPLIER_MAX,
)
from newton_tendon.kernels.cable.history import add_material
from newton_tendon.kernels.cable.span import (
    at_rest_floor,
    span_slot,
)
from newton_tendon.kernels.cable.types import TendonHistory, TendonWork
from newton_tendon.kernels.routing import TendonModel, is_force_winch, is_winch, transmits_material

wp.set_module_options({"enable_backward": False})


@wp.func
def frictional_guide(tm: TendonModel, g: int, active: wp.array(dtype=wp.int32), ratio: wp.array(dtype=float)):
    """An active pinhole or roller whose capstan ratio exceeds 1 (it separates two runs)."""
    if active[g] == 0 or not transmits_material(tm, g):
        return False
    return ratio[g] > 1.0


@wp.func
def capstan_product(e: float, r: float):
    """The capstan ratio [1] of two guides in a row, e r, saturated at ``CAPSTAN_RATIO_MAX`` (both
    factors >= 1 and at most that bound). Computed as min(e, max / r) r so that no intermediate
    overflows float32: 200 pinholes at mu theta = 1.1 (a product of exp(221)) gave inf ratios, then
    inf * 0 = NaN tensions. A saturated product is exactly ``CAPSTAN_RATIO_MAX``, which callers test for."""
    if e >= CAPSTAN_RATIO_MAX / r:
        return CAPSTAN_RATIO_MAX
    return e * r


@wp.func
def capstan_balance(la: float, lb: float, ka: float, kb: float, e: float):
    """The transfer d [m] with la - ka d = e (lb + kb d): (la - e lb) / (ka + e kb). Where e lb or
    e kb passes float32 (a saturated ratio times a saturated tension or a rigid span's stiffness,
    which gave inf / inf = NaN) the same quotient is formed divided through by e >= 1, which cannot
    overflow; elsewhere the direct form keeps the results it always gave."""
    num = la - e * lb
    den = ka + e * kb
    if wp.isinf(num) or wp.isinf(den):
        return (la / e - lb) / (ka / e + kb)
    return num / den


@wp.func
def saturated_tension(tension: float, e: float):
    """``tension`` e [N s^2] (tension >= 0, e >= 1) saturated at ``TENSION_MULTIPLIER_MAX``."""
    return wp.min(tension, TENSION_MULTIPLIER_MAX / e) * e


@wp.func
def tight_transfer(la: float, lb: float, ka: float, kb: float, e: float):
    """Material [m] to move into the tight span a (la > e lb) from span b so that the clamped
    tensions satisfy max(la - ka d, 0) = e max(lb + kb d, 0), the smallest such d >= 0."""
    if lb >= 0.0:
        return capstan_balance(la, lb, ka, kb, e)
    da = la / ka
    db = -lb / kb
    if da <= db:
        return da
    return capstan_balance(la, lb, ka, kb, e)


@wp.func
def capstan_transfer(la: float, lb: float, ka: float, kb: float, e: float):
    """Material [m] moved from span b into span a (negative: a into b) to enforce
    T_tight <= e T_slack with e = exp(mu theta) on the predicted multipliers la, lb."""
    ta = wp.max(la, 0.0)
    tb = wp.max(lb, 0.0)
    if ta > e * tb:
        return tight_transfer(la, lb, ka, kb, e)
    if tb > e * ta:
        return -tight_transfer(lb, la, kb, ka, e)
    return 0.0


@wp.func
def rigid_run_stretch(
    t: int,
    first: int,
    tm: TendonModel,
    active: wp.array(dtype=wp.int32),
    rest: wp.array(dtype=float),
    work: TendonWork,
    geo: TendonGeometry,
):
    """(stretch, moved, tol) of the rigid run whose first span is ``first`` (no end of it can move,
    so its members' lengths ``geo.length`` are fixed within the step): its stretch ``sum (l - L)``
    [m], the material [m] that entered it since the step start (after the winches,
    ``work.rest0``), and the stretch below which it is taut (``RIGID_STRETCH_ROUNDING`` of its
    length) [m]."""
    stretch = float(0.0)
    moved = float(0.0)
    length = float(0.0)
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        s = span_slot(t, h, active)
        if active[h] != 0 and work.run_skip[s] == 0 and work.run_first[s] == first:
            stretch = stretch + (geo.length[s] - rest[s])
            moved = moved + (rest[s] - work.rest0[s])
            length = length + wp.max(geo.length[s], rest[s])
    return stretch, moved, RIGID_STRETCH_ROUNDING * length


@wp.func
def rigid_transfer(stretch: float, lf: float, kf: float, tol: float):
    """Material [m] a rigid run of stretch ``stretch`` [m] takes across a frictional guide from the
    run on the other side (predicted multiplier ``lf`` [N s^2], ``kf`` its change per metre taken
    from it; 0 for a force winch's drum, which pays out whatever is taken).

    The rigid run cannot stretch and nothing can shorten it, so what crosses the guide is set by
    its length, not by a balance of tensions: a stretched run (the winch next to it reeled in)
    takes its whole stretch, whatever the tension (the guide slips towards it, whose tension is
    then the tight one); a slack run (the winch paid out) gives its slack, but no more than the
    other side can take before it goes slack itself (lf / kf). Within ``tol`` of taut it holds:
    the guide sticks, and the tension of the rigid run is any value within the capstan bound."""
    if stretch > tol:
        return stretch
    if stretch < -tol and lf > 0.0:
        if kf > 0.0:
            return -wp.min(-stretch, lf / kf)
        return stretch
    return 0.0


@wp.func
def share_rigid_run(
    t: int,
    first: int,
    tm: TendonModel,
    active: wp.array(dtype=wp.int32),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """3a for a rigid run of several spans (joined by frictionless guides; no end can move): its
    members share its stretch in proportion to their flexibility ``1/work.stiff``, so a winch that
    reels in one member takes cable through the frictionless guides from the others (which a tension
    rule cannot do: ``lam_hat`` of a rigid member is a float32 stretch over the denominator floor).
    The transfer is scaled down so that no member drops below the rest-length floor (the run's
    material is conserved exactly), and skipped while every member is within rounding of its share."""
    stretch, moved, tol = rigid_run_stretch(t, first, tm, active, hist.rest, work, geo)
    flex = work.run_flex[first]
    if flex <= 0.0:
        return
    spread = float(0.0)
    scale = float(1.0)
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        s = span_slot(t, h, active)
        if active[h] == 0 or work.run_skip[s] != 0 or work.run_first[s] != first:
            continue
        dl = (geo.length[s] - hist.rest[s]) - stretch * (1.0 / work.stiff[s]) / flex
        spread = wp.max(spread, wp.abs(dl))
        if dl < 0.0 and hist.rest[s] + dl < REST_LENGTH_FLOOR:
            scale = wp.min(scale, wp.max((REST_LENGTH_FLOOR - hist.rest[s]) / dl, 0.0))
    if spread <= tol:
        return
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        s = span_slot(t, h, active)
        if active[h] == 0 or work.run_skip[s] != 0 or work.run_first[s] != first:
            continue
        dl = (geo.length[s] - hist.rest[s]) - stretch * (1.0 / work.stiff[s]) / flex
        add_material(hist, s, scale * dl)


@wp.func
def rigid_member(work: TendonWork, s: int):
    """Whether span s is a rigid member of its run: its ends cannot move it apart (an inextensible
    span between immovable guides, ``work.stiff`` up to 1/DENOM_FLOOR), the members whose summed
    flexibility makes a run rigid (``RIGID_FLEX``)."""
    return work.stiff[s] * RIGID_FLEX > 1.0


@wp.func
def stall_length_winch(
    t: int,
    g: int,
    s_w: int,
    tm: TendonModel,
    active: wp.array(dtype=wp.int32),
    hist: TendonHistory,
    work: TendonWork,
    geo: TendonGeometry,
):
    """A length winch ``g`` (its span ``s_w``) that reeled in more than its cable can give stalls.

    When the winch's span ends a pass in a rigid run (inextensible spans no body can move, e.g. a
    world winch and a world pinhole) that is still stretched, nothing can give it cable: the load
    behind a frictionless guide sits at its end stop (that span left the run, 3a), the cable beyond
    a frictional guide has no room (3b), or the whole cable is fixed in the world. An inextensible
    cable cannot be stretched, so the drum gives the stretch back: each member is made exactly taut
    (its material set to its length) and the winch's pay-out ``hist.winch`` [m] grows by the total.
    The material minus the pay-out is unchanged, and ``tendon_guide_winch_paid`` reports what the
    cable accepted, so a later pay-out acts at once instead of first working off a hidden debt (the
    winch kept reeling a stopped load in: 0.25 m of stretch that no pay-out short of it could ease).

    The same holds when the winch's span is rigid and every other member of its run that a body
    holds reached the rest-length floor in this pass (``at_rest_floor``): the load's span started
    the pass with a hair of cable, so it stayed in the run and gave that hair (3a scales the run's
    transfer to stop it at the floor), and the run still reads as flexible. It can give no more, so
    the drum gives back its rigid members' stretch (only theirs: a stopped span's stretch is its
    body below the guide, which its row pulls up). A stalled winch reels in its whole debt (command
    minus pay-out) at each step start and relies on this rule to give it back within the pass.
    Missed, the debt stayed in the winch's span, SolverVBD's run row read it as stretch
    (``run_tension``: an inextensible member adds its stretch): a winch 0.14 m behind its command
    pulled a 1 kg load stopped at a world pinhole with 8170 N in the first sweep (7 cm past the
    pinhole), and the step ended with the load 0.67 mm below it at -0.16 m/s. That happened
    whenever float32 rounding of the 1.1 m winch span (1.2e-7 m) left 1e-11 to 1e-7 m of cable in
    the stopped span: 0.7 to 1.3 mm off over 200 steps at every reel-in speed and mass tried."""
    if not is_winch(tm, g) or is_force_winch(tm, g) or active[g] == 0:
        return
    if work.run_skip[s_w] != 0:
        return
    first = work.run_first[s_w]
    stopped = int(0)  # 1: a flexible run whose flexible members are all at the floor
    if work.run_flex[first] > RIGID_FLEX:
        if not rigid_member(work, s_w):
            return
        for h in range(tm.start[t] + 1, tm.start[t + 1]):
            s = span_slot(t, h, active)
            if active[h] == 0 or work.run_skip[s] != 0 or work.run_first[s] != first:
                continue
            if not rigid_member(work, s) and not at_rest_floor(hist.rest[s]):
                return  # a member with cable to give: the winch takes it in the next pass
        stopped = 1
    stretch = float(0.0)
    tol = float(0.0)
    if stopped == 0:
        stretch, moved, tol = rigid_run_stretch(t, first, tm, active, hist.rest, work, geo)
    else:
        length = float(0.0)
        for h in range(tm.start[t] + 1, tm.start[t + 1]):
            s = span_slot(t, h, active)
            if active[h] != 0 and work.run_skip[s] == 0 and work.run_first[s] == first and rigid_member(work, s):
                stretch = stretch + (geo.length[s] - hist.rest[s])
                length = length + wp.max(geo.length[s], hist.rest[s])
        tol = RIGID_STRETCH_ROUNDING * length
    if stretch <= tol:
        return
    given = float(0.0)
    held = float(0.0)  # the stopped members' largest prediction: what the rigid members then carry
    for h in range(tm.start[t] + 1, tm.start[t + 1]):
        s = span_slot(t, h, active)
        if active[h] == 0 or work.run_skip[s] != 0 or work.run_first[s] != first:
            continue
        if stopped != 0 and not rigid_member(work, s):
            held = wp.max(held, work.lam_hat[s])
            continue
        dl = geo.length[s] - hist.rest[s]
        if dl > 0.0:
            add_material(hist, s, dl)
            given = given + dl
    hist.winch[g] = hist.winch[g] + given
    if stopped != 0:
        # 3a gave the rigid members the run's mean, which the debt set (8170 N beside the 9.7 N
        # load above); with the debt given back they carry the stopped span's tension, as a rigid
        # run beside a span that left it at the floor does (``stopped_member_tension``).
        for h in range(tm.start[t] + 1, tm.start[t + 1]):
            s = span_slot(t, h, active)
            if active[h] != 0 and work.run_skip[s] == 0 and work.run_first[s] == first and rigid_member(work, s):
                work.lam_hat[s] = held


@wp.func
def stopped_member_tension(tm: TendonModel, t: int, first: int, active: wp.array(dtype=wp.int32), work: TendonWork):
    """Largest predicted tension [N s^2] (>= 0) of the spans that left run ``first`` at the
    rest-length floor (``work.run_skip``): what the run's other members carry at least while those
    spans' bodies sit at their end stops."""
    tension = float(0.0)
    for g in range(tm.start[t] + 1, tm.start[t + 1]):
        s = span_slot(t, g, active)
        if active[g] != 0 and work.run_skip[s] != 0 and work.run_first[s] == first:
            tension = wp.max(tension, work.lam_hat[s])
    return tension
