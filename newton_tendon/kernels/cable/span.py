"""Routed cables: one span of a route, from the pose alone (no cached geometry).

Index helpers (``span_slot``: the span a guide owns, ``seg_index``: an authored span,
``left_guide``/``out_segment`` across a bypassed dynamic roller), the span's compliance and damping,
the arc terms between a roller's material point and its tangent point, the rest-length floor and the
end stop (``at_rest_floor``, ``span_at_stop``, ``stop_points``), and the effective length
``span_length`` of the model (package docstring). The cached variants that reuse a pass's guide
frames are in ``cached``; both must stay the same arithmetic.
"""

import warp as wp

from newton_tendon.kernels.cable.constants import FLOOR_ROUNDING, REST_LENGTH_FLOOR, STOP_LENGTH
from newton_tendon.kernels.routing import (
    ROLLER_PAIR_WARM_ITERATIONS,
    TendonModel,
    guide_axis,
    guide_point,
    is_roller,
    roller_frame,
    span_points_from,
    to_world,
    winding_angle,
    wrap_from_angle,
)

wp.set_module_options({"enable_backward": False})


@wp.func
def seg_index(t: int, g: int):
    """Slot of the authored span g - 1 -> g of tendon t (the route as built)."""
    return g - t - 1


@wp.func
def left_guide(g: int, guide_active: wp.array(dtype=wp.int32)):
    """Left end guide of the active span arriving at guide g (skips a bypassed dynamic roller)."""
    if guide_active[g - 1] != 0:
        return g - 1
    return g - 2


@wp.func
def span_slot(t: int, g: int, guide_active: wp.array(dtype=wp.int32)):
    """Slot of the span guide g (not the first of tendon t) owns: for an active g, the active span
    arriving at g, which sits in the slot of the span leaving its left guide (newton's convention: a
    span merged over a bypassed dynamic roller keeps the slot before the roller); for a bypassed
    roller, the slot of its authored outgoing span, which is then empty. Over g in (g0, g1) the map
    is one to one onto the tendon's slots, so a loop over guides visits every slot once."""
    if guide_active[g] == 0:
        return g - t
    return left_guide(g, guide_active) - t


@wp.func
def out_segment(t: int, g: int):
    """Slot of the active span leaving active guide g (not the last of tendon t): always g's own
    authored outgoing slot, whether or not the next guide is bypassed."""
    return g - t


@wp.func
def span_compliance(tm: TendonModel, s: int, bypass: bool, held: bool):
    """Compliance [m/N] of span s; a bypass span is the two authored spans in series. A span
    ``held`` elastically (``held_elastically``) takes each authored part at least
    ``tm.compliance_floor`` (SolverVBD's 1e-8 m/N for c = 0: the spec's "VBD approximates zero
    segment compliance with 1.0e-8 m/N")."""
    floor = float(0.0)
    if held:
        floor = tm.compliance_floor
    c = wp.max(tm.seg_compliance[s], floor)
    if bypass:
        c = c + wp.max(tm.seg_compliance[s + 1], floor)
    return c


@wp.func
def span_damping(tm: TendonModel, s: int, bypass: bool):
    """Damping [N s/m] of span s; a bypass span combines the two dampers in series."""
    d = tm.seg_damping[s]
    if bypass:
        d2 = tm.seg_damping[s + 1]
        if d > 0.0 and d2 > 0.0:
            d = d * d2 / (d + d2)
        else:
            d = 0.0
    return d


@wp.func
def arc_leaving(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform), m_local: wp.vec3, x: wp.vec3):
    """Cable [m] wound off roller g between its material point m (body-local) and the leaving
    tangent point x: r phi(m -> x); 0 for point guides."""
    if not is_roller(tm, g):
        return 0.0
    c, n, r, o = roller_frame(tm, g, body_q)
    return r * winding_angle(c, n, o, to_world(tm, g, body_q, m_local), x)


@wp.func
def arc_arriving(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform), x: wp.vec3, m_local: wp.vec3):
    """Cable [m] wound off roller g between the arriving tangent point x and its material point m:
    r phi(x -> m); 0 for point guides."""
    if not is_roller(tm, g):
        return 0.0
    c, n, r, o = roller_frame(tm, g, body_q)
    return r * winding_angle(c, n, o, x, to_world(tm, g, body_q, m_local))


@wp.func
def material_wrap(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform), m_in: wp.vec3, m_out: wp.vec3):
    """Wrap [rad] of roller g between the material points of its arriving and leaving spans
    (body-local), mapped to [-pi/2, 3pi/2)."""
    c, n, r, o = roller_frame(tm, g, body_q)
    return wrap_from_angle(winding_angle(c, n, o, to_world(tm, g, body_q, m_in), to_world(tm, g, body_q, m_out)))


@wp.func
def held_elastically(w: float, rest: float):
    """Whether a span with generalized inverse mass ``w`` [1/kg] and material ``rest`` [m] stretches
    as a spring on a solver with a compliance floor (``span_compliance``): a moving body holds it
    (w > 0) and it is not at its end stop (``at_end_stop``: more than ``STOP_LENGTH`` of cable). A
    span no moving body holds exerts nothing and keeps its authored c, so a run of inextensible
    world spans stays rigid and passes material exactly (floored, such runs stopped passing it: 19
    tests). A span at its end stop is a contact of the guide with the body and stays exact: floored
    to 1e-8 m/N, a load pulled into a world pinhole by a winch still stops there (3.6e-6 m), but its
    span stretches by T c and the stop takes a hair of cable back (1.5e-11 m above the floor, more
    than ``at_rest_floor``'s rounding), which puts the span back into its run."""
    return w > 0.0 and not at_end_stop(rest)


@wp.func
def at_rest_floor(rest: float):
    """Whether a span with material ``rest`` [m] has no cable to give: at the rest-length floor, or
    within ``FLOOR_ROUNDING`` above it. A span a few ulps above the floor (1.0000003e-6 m, left by a
    transfer scaled to stop at the floor) counted as having cable: it stayed in its run, its zero
    room scaled the run's sharing to nothing, a rigid member then kept its prediction (a float32
    stretch over the 1e-10 denominator floor, 99.9 against the run's 6e-4) and the capstan sweep
    read it as the run's tension and moved 0.13 m of cable in one pass (a fuzz scene)."""
    return rest <= REST_LENGTH_FLOOR + FLOOR_ROUNDING


@wp.func
def at_end_stop(rest: float):
    """Whether a span with material ``rest`` [m] is at (or within ``STOP_LENGTH`` of) its end stop: it
    has (almost) no free cable, so its roller ends stay where the cable last left the roller
    (``stop_points``)."""
    return rest <= STOP_LENGTH


@wp.func
def passed_material_point(c: wp.vec3, n: wp.vec3, o: float, m: wp.vec3, x: wp.vec3, leaving: bool):
    """Whether the far point ``x`` of a span has reached or passed the span's material point ``m`` on
    the rim of the roller (c, n, o), along the cable: the cable runs along the rim in the winding
    direction ``t = o n x (m - c)``, so a span leaving the roller at m has its far point ahead,
    ``(x - m).t > 0``, and a span arriving there has it behind, ``(m - x).t > 0``.

    A far point on or beyond the tangent line at m has been pulled into the roller: the tangent
    construction would let it wind its (absent) cable on and slide round the rim. It is an end stop
    whatever material the span still holds (``span_at_stop``)."""
    t = o * wp.cross(n, m - c)
    if leaving:
        return wp.dot(x - m, t) <= 0.0
    return wp.dot(m - x, t) <= 0.0


@wp.func
def span_at_stop(
    tm: TendonModel,
    gl: int,
    gr: int,
    body_q: wp.array(dtype=wp.transform),
    pl: wp.vec3,
    pr: wp.vec3,
    al: wp.vec3,
    ar: wp.vec3,
    ml: wp.vec3,
    mr: wp.vec3,
    rest: float,
):
    """(stopped, x_l, x_r) of the span gl -> gr: whether it is at its end stop, and its end points
    there (``stop_points``) [m]. ``pl``/``pr`` are the guide points (a roller's centre) and ``al``/``ar``
    the world unit axes (read only at rollers), both world; ``ml``/``mr`` the material points,
    body-local. A span is at its end stop when its material is at the stop length (``at_end_stop``)
    or when the body at its far end has reached a roller end's material point
    (``passed_material_point``).

    The second case is the stop of a body that arrives fast: a force winch pulling a load into its
    roller at 1.6 m/s on SolverVBD (whose rows let a span stretch within the step) brought the load
    past the tangent point with 1.6 mm of cable left, above the 1e-4 m stop length, and the tangent
    construction then dragged it round the rim until the material wrap passed a full turn (2 pi r of
    cable created at step 37). The end points come back with the answer, so a caller that takes the
    stop does not compute them again."""
    xl, xr = stop_points(tm, gl, gr, body_q, pl, pr, ml, mr)
    stopped = at_end_stop(rest)
    if not stopped and is_roller(tm, gl):
        stopped = passed_material_point(pl, al, float(tm.guide_orientation[gl]), xl, xr, True)
    if not stopped and is_roller(tm, gr):
        stopped = passed_material_point(pr, ar, float(tm.guide_orientation[gr]), xr, xl, False)
    return stopped, xl, xr


@wp.func
def roller_axis(tm: TendonModel, g: int, body_q: wp.array(dtype=wp.transform)):
    """World unit axis of guide g if it is a roller, else zero (``span_at_stop`` reads it only then)."""
    if is_roller(tm, g):
        return guide_axis(tm, g, body_q)
    return wp.vec3(0.0)


@wp.func
def stop_points(
    tm: TendonModel,
    gl: int,
    gr: int,
    body_q: wp.array(dtype=wp.transform),
    pl: wp.vec3,
    pr: wp.vec3,
    ml: wp.vec3,
    mr: wp.vec3,
):
    """End points [m] of the span gl -> gr at its end stop: a roller end is the span's material point
    there (``ml``/``mr``, body-local: the tangent point the step started from), a point guide its
    guide point (``pl``/``pr``, world).

    A span at the rest-length floor (or within ``STOP_LENGTH`` of it) holds no cable that could wind
    on or off a roller, so its end at a roller cannot slide round the rim with the far point: the
    span is a straight link from the
    point where the cable leaves the roller, like the span of a body pulled into a pinhole. With the
    tangent construction instead, a far point that passes the tangent point shortens the span by
    winding its (absent) cable on, so the stretch row never stops the body: it was dragged round the
    roller until the material wrap left [-pi/2, 3pi/2) and the count jumped by 2 pi r (a weight pulled
    into its roller gained 0.63 m of cable, and tensions reached 1.4e3 N)."""
    xl = pl
    xr = pr
    if is_roller(tm, gl):
        xl = to_world(tm, gl, body_q, ml)
    if is_roller(tm, gr):
        xr = to_world(tm, gr, body_q, mr)
    return xl, xr


@wp.func
def span_length(
    tm: TendonModel,
    gl: int,
    gr: int,
    body_q: wp.array(dtype=wp.transform),
    ml: wp.vec3,
    mr: wp.vec3,
    rest: float,
):
    """(x_l, x_r, l): attachment points [m] and effective length [m] of the span gl -> gr with
    material ``rest`` [m].

    ``l = |x_r - x_l| + r_l phi(m_l -> x_l) + r_r phi(x_r -> m_r)`` with body-local material points
    ``ml`` (on gl's body) and ``mr`` (on gr's body); see the package docstring. A span at its end stop
    (``at_end_stop``) is straight between its material points instead (``stop_points``).
    """
    pl = guide_point(tm, gl, body_q)
    pr = guide_point(tm, gr, body_q)
    al = roller_axis(tm, gl, body_q)
    ar = roller_axis(tm, gr, body_q)
    stopped, sl, sr = span_at_stop(tm, gl, gr, body_q, pl, pr, al, ar, ml, mr, rest)
    if stopped:
        return sl, sr, wp.length(sr - sl)
    # The material point on a right-hand roller is last step's tangent point: a close start.
    xl, xr = span_points_from(tm, gl, gr, body_q, to_world(tm, gr, body_q, mr), ROLLER_PAIR_WARM_ITERATIONS)
    length = wp.length(xr - xl) + arc_leaving(tm, gl, body_q, ml, xl) + arc_arriving(tm, gr, body_q, xr, mr)
    return xl, xr, length
