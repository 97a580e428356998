"""Random routed-cable scenes for the fuzz tests (``test_fuzz_cables.py``, ``test_fuzz_winches.py``): the
scene and winch-plan strategies, the tolerances of the cable properties with their reasons, the capstan and
winch checks, and ``run_cable_scene``, which steps one scene and applies every check.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import strategies as st

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType
from newton_tendon.kernels.cable import REST_LENGTH_FLOOR, STIFF_REPORT_COMPLIANCE, WRAP_TOLERANCE

from ..helpers import SOLVERS, quat_to_matrix
from .strategies import (
    DT,
    STEPS,
    Sim,
    add_bodies,
    assert_all_finite,
    bodies,
    compliances,
    dampings,
    finite_floats,
    offsets,
    set_kinematic_twists,
    unit_vectors,
)


# ----------------------------------------------------------------------------------------------
# 1. Routed cables


@st.composite
def cable_scenes(draw):
    """Bodies plus one legal route of 2-6 guides.

    Ends are ANCHORs or PINHOLEs (``add_tendon`` rejects an end ROLLER); internal guides are
    PINHOLEs, ROLLERs or ANCHORs
    (internal anchors are legal: they block material transfer). ``dynamic`` only on internal
    rollers and never on two guides in a row; the first guide keeps the span defaults."""
    specs = draw(bodies())
    nb = len(specs)
    n = draw(st.integers(2, 6))
    route = []
    prev_dynamic = False
    for i in range(n):
        internal = 0 < i < n - 1
        if internal:
            gtype = draw(st.sampled_from([TendonGuideType.PINHOLE, TendonGuideType.ROLLER, TendonGuideType.ANCHOR]))
        else:
            gtype = draw(st.sampled_from([TendonGuideType.ANCHOR, TendonGuideType.ANCHOR, TendonGuideType.PINHOLE]))
        kw = dict(body=draw(st.integers(-1, nb - 1)), guide_type=gtype, offset=draw(offsets()))
        if gtype == TendonGuideType.ROLLER:
            kw.update(
                radius=draw(finite_floats(0.02, 0.3)),
                axis=draw(unit_vectors()),
                orientation=draw(st.sampled_from([1, -1])),
            )
        if gtype != TendonGuideType.ANCHOR:
            kw["mu"] = draw(st.one_of(st.just(0.0), finite_floats(0.0, 1.0)))
        dynamic = bool(internal and gtype == TendonGuideType.ROLLER and not prev_dynamic and draw(st.booleans()))
        kw["dynamic"] = dynamic
        prev_dynamic = dynamic
        if i > 0:
            kw.update(compliance=draw(compliances), damping=draw(dampings))
        route.append(TendonGuide(**kw))
    return specs, route


# Tolerances of the cable properties.
# Cables do not push: an inextensible span's tension is its multiplier, clamped at >= 0 by the row;
# what remains is float32 rounding of lambda/dt^2 (lambda ~ 1e-4 N s^2 rounds at ~1e-11, /dt^2
# -> 1e-6 N). 1e-4 N leaves headroom and is far below any physical tension here (weights ~ 2-50 N).
PUSH_TOL = 1.0e-4
# Total cable: a sum of <= 5 spans + arcs of length <= ~5 m in float32 (ulp ~ 5e-7 m per term per
# step). Folds and transfers re-round every step: a random walk over STEPS steps and ~10 terms stays
# well under 1e-5 relative; the acceptance bound for conservation is 1e-5 relative.
CABLE_RTOL = 1.0e-5
CABLE_ATOL = 1.0e-6
# Capstan: the bound holds on the predicted multipliers inside an iteration; the reported tensions
# are re-evaluated at the final pose (Jacobi residual of 8 iterations) and the sweeps stop at
# tendon_settle_tol = 1e-3 relative. test_cables measures <= 1 % on closed-form scenes; random
# scenes get 5 % relative plus an absolute floor of 1e-2 N for spans that are (nearly) slack.
CAPSTAN_RTOL = 0.05
CAPSTAN_ATOL = 1.0e-2
# ... plus this fraction of the scene's total weight: the rows converge to a relative residual of the
# forces that load them (VBD's augmented-Lagrangian rows after 8 iterations leave ~1e-4..1e-3 of
# m g on a span that is almost slack; a fuzz case measured 0.0137 N next to 0 N with 100 N of weight).
CAPSTAN_WEIGHT_FRACTION = 1.0e-3
# ... plus this fraction of the change of the spans' applied tensions over the step: a step that absorbs
# a load change (a cable snapping taut, a roller engaging) ends with a residual of that change, not of
# the final tension. Long profile (VBD): a body that had hung by 44 N of snap one step earlier held
# 1.733 N against 1.606 N through a frictionless pinhole (0.127 N = 3e-3 of the 42.7 N change; equal
# to 4e-4 N at 16 iterations).
CAPSTAN_LOAD_CHANGE_FRACTION = 1.0e-2
# A cable whose applied tension exceeds this multiple of the weight of the scene's moving bodies (at
# least 1 N) is held by a row that cannot be met: a kinematic body pulling an inextensible cable
# beyond its length (docs/limitations.md, "Rows that cannot be met"). Its tensions then grow without
# bound (a fuzz scene: 9x its weight after one step, 700x after 10, 3e4x after 60); XPBD threw the
# body caught in the cable 1e9 m away after 100 steps, and the material moves the relaxation makes
# at such tensions round to 1e-5 of the cable per second (VBD). From then on only finiteness is
# checked. Snaps of feasible scenes stay far below: a 5 kg body stopped from 4.4 m/s in one step is
# 100x its weight.
OVERLOAD_FACTOR = 1.0e3
# A far point within this fraction of a roller's radius of its rim (projected on the roller plane)
# counts as inside it (the tangent construction's D <= r case; see far_point_inside_roller).
ROLLER_INSIDE = 1.0e-3
# Spans shorter than this are skipped by the capstan check (no direction, so no bend angle).
MIN_SPAN = 1.0e-3
# A guide whose slack span holds only the rest-length floor's material is an end stop, not a capstan:
# reaching T_tight <= e T_slack needs (T_tight - e T_slack)/(k_tight + e k_slack) > 0 m of material out of
# the slack span, which has L - REST_LENGTH_FLOOR = 0 to give (spec: rest lengths stay >= 1e-6 m during
# material transfer; docs/cables.md: cable is never created to meet the floor). The guide then holds
# T_tight - T_slack like a knot, e.g. a bead pinhole sitting on the cable's end anchor carries its own
# weight: T = (m_end + m_bead) g above it, m_end g below. "At the floor" allows the float32 rounding of
# the transfer that emptied the span (an ulp of an <= 8 m rest length, 9.5e-7 m).
FLOOR_ATOL = 1.0e-6
# A compliant span reports (l - L)/c: in float32 l and L resolve to an ulp of the coordinates
# (eps32 * scale), so its tension resolves to eps32 * scale / c (0.026 N at 0.5 m and c = 2.3e-6 m/N).
# l sums a few rounded coordinate differences: allow CAPSTAN_ULPS of them per span. Spans with
# c <= STIFF_REPORT_COMPLIANCE report the row's tension and carry no such term.
CAPSTAN_ULPS = 4.0


def applied_tension(solver) -> np.ndarray:
    """Tension [N] each span's row applied to the bodies in the step: XPBD's multiplier lambda/dt^2,
    SolverVBD's tension of the last sweep (its private ``_tendon_work.lam``, T dt^2). XPBD's is read
    from its private ``_tendon_lambda`` (T dt^2), the array the passes accumulate. The capstan
    bound is enforced on these (the material relaxation runs on the predicted multipliers). The
    reported material tension of a compliant span is its constitutive (l - L)/c instead, which also
    holds the row's residual after ITERATIONS iterations divided by c: a fuzz case at c = 1.8e-6 m/N
    reported 63.6 N (XPBD) and 36.6 N (VBD) at rest where 19.6 N was applied (9 % at 32 iterations,
    0.1 % at 128), so it is not a capstan quantity until the rows converge."""
    lam = solver._tendon_lambda if isinstance(solver, SOLVERS["xpbd"]) else solver._tendon_work.lam
    return lam.numpy().astype(np.float64) / (DT * DT)


def far_point_inside_roller(sim, route) -> bool:
    """Whether a span's far end, projected on the plane of an active roller it touches, lies within
    ROLLER_INSIDE of the roller's radius: the tangent construction then takes a rim point whose
    direction rounding decides (docs/cables.md: "a far point inside the roller gives a = 0"), so the
    wrap between material points, and the cable the diagnostic counts on the roller, can jump by up
    to 2 pi r. docs/cables.md lists it among the degenerate routes that do not conserve cable."""
    sv = sim.solver
    q = sim.s0.body_q.numpy().astype(np.float64)
    active = sv.tendon_segment_active.numpy()
    gl = sv.tendon_segment_active_guide_l.numpy()
    gr = sv.tendon_segment_active_guide_r.numpy()
    xl = sv.tendon_segment_attachment_l.numpy().astype(np.float64)
    xr = sv.tendon_segment_attachment_r.numpy().astype(np.float64)
    for s in np.flatnonzero(active):
        for g, far in ((gl[s], xr[s]), (gr[s], xl[s])):
            guide = route[g]
            if guide.guide_type != TendonGuideType.ROLLER:
                continue
            pose = q[guide.body] if guide.body >= 0 else np.array([0, 0, 0, 0, 0, 0, 1.0])
            rot = quat_to_matrix(pose[3:])
            c = pose[:3] + rot @ np.asarray(guide.offset, dtype=np.float64)
            n = rot @ np.asarray(guide.axis, dtype=np.float64)
            n /= np.linalg.norm(n)
            d = far - c
            if np.linalg.norm(d - np.dot(d, n) * n) <= guide.radius * (1.0 + ROLLER_INSIDE):
                return True
    return False


def fixed_wrap_out_of_range(sim, route) -> bool:
    """Whether an active fixed roller's wrap at the step's final pose (``tendon_guide_wrap``) left
    [0, pi] by more than WRAP_TOLERANCE. ``tendon_guide_wrap_error`` flags the same pose, but only at
    the next step's start (it is measured from the accepted pose), so without this the checks would
    still run on the step whose final pose is outside the supported model (docs/cables.md)."""
    sv = sim.solver
    wrap = sv.tendon_guide_wrap.numpy().astype(np.float64)
    gactive = sv.tendon_guide_active.numpy()
    for g in range(1, len(route) - 1):
        guide = route[g]
        if guide.guide_type == TendonGuideType.ROLLER and not guide.dynamic and gactive[g]:
            if wrap[g] < -WRAP_TOLERANCE or wrap[g] > math.pi + WRAP_TOLERANCE:
                return True
    return False


def immovable(route, specs, s_guides) -> bool:
    """Whether a span's two end guides sit on one body or both on bodies nothing can push (world,
    kinematic). docs/cables.md: such a span "keeps its material and reports zero tension unless a
    frictional neighbour sets an admissible one", so its reported tension is not a cable tension."""
    a, b = (route[g].body for g in s_guides)
    fixed = {-1} | {i for i, spec in enumerate(specs) if spec["kind"] == "kinematic"}
    return a == b or (a in fixed and b in fixed)


def check_capstan(sim, route, specs, step, applied, applied_before):
    """T_tight <= exp(mu theta) T_slack at each active internal PINHOLE/ROLLER (pairing its arriving
    and leaving active spans through tendon_segment_active_guide_l/_r), skipping pairs with a span
    shorter than MIN_SPAN or a slack span with no material left to give (see FLOOR_ATOL).
    Immovable spans (see ``immovable``) report no cable tension. An inextensible one passes material
    straight through (docs/cables.md), so across a chain of them the two movable spans on either
    side are checked against the product of the guides' ratios; a compliant one ends the check.
    ``applied``/``applied_before``: ``applied_tension`` after this step and the previous one (zeros
    before the first)."""
    sv = sim.solver
    rest = sim.s0.tendon_segment_rest_length.numpy().astype(np.float64)
    active = sv.tendon_segment_active.numpy()
    gl = sv.tendon_segment_active_guide_l.numpy()
    gr = sv.tendon_segment_active_guide_r.numpy()
    wrap = sv.tendon_guide_wrap.numpy().astype(np.float64)
    gactive = sv.tendon_guide_active.numpy()
    xl = sv.tendon_segment_attachment_l.numpy().astype(np.float64)
    xr = sv.tendon_segment_attachment_r.numpy().astype(np.float64)
    comp = sv.tendon_segment_active_compliance.numpy().astype(np.float64)

    def span_in(g):
        found = [s for s in range(len(active)) if active[s] and gr[s] == g]
        assert len(found) == 1, (g, found)
        return found[0]

    def span_out(g):
        found = [s for s in range(len(active)) if active[s] and gl[s] == g]
        assert len(found) == 1, (g, found)
        return found[0]

    def transmits(g):
        return 0 < g < len(route) - 1 and route[g].guide_type != TendonGuideType.ANCHOR and gactive[g]

    def ratio(g):
        return math.exp(min(route[g].mu * max(wrap[g], 0.0), 60.0))

    def is_immovable(s):
        return immovable(route, specs, (gl[s], gr[s]))

    for g in range(1, len(route) - 1):
        if not transmits(g):
            continue
        a = span_in(g)
        if is_immovable(a):
            continue
        # Walk right over inextensible immovable spans, multiplying the ratios.
        e = ratio(g)
        b = span_out(g)
        spans = [a, b]
        while b is not None and is_immovable(b) and comp[b] == 0.0:
            h = gr[b]
            if not transmits(h):
                b = None
                break
            e *= ratio(h)
            b = span_out(h)
            spans.append(b)
        if b is None or is_immovable(b):
            continue
        # A (nearly) zero-length span has no direction: the bend angle and the equilibrium of the
        # guide are undefined there (e.g. a body anchor pulled into a world pinhole).
        if min(np.linalg.norm(xr[s] - xl[s]) for s in spans) < MIN_SPAN:
            continue
        ta = max(applied[a], 0.0)
        tb = max(applied[b], 0.0)
        tight, slack = max(ta, tb), min(ta, tb)
        if rest[a if ta < tb else b] <= REST_LENGTH_FLOOR + FLOOR_ATOL:
            continue  # an end stop: the slack side has no material to give
        resolution = 0.0
        for s in (a, b):
            if comp[s] > STIFF_REPORT_COMPLIANCE:
                scale = max(np.abs(xl[s]).max(), np.abs(xr[s]).max(), np.linalg.norm(xr[s] - xl[s]), 1.0)
                resolution += CAPSTAN_ULPS * np.finfo(np.float32).eps * scale / comp[s]
        atol = CAPSTAN_ATOL + CAPSTAN_WEIGHT_FRACTION * 9.81 * sum(spec["mass"] for spec in specs)
        atol += CAPSTAN_LOAD_CHANGE_FRACTION * max(abs(applied[s] - applied_before[s]) for s in (a, b))
        assert tight <= e * (slack + resolution) * (1.0 + CAPSTAN_RTOL) + atol, (
            f"step {step}: capstan violated from guide {g} over spans {spans}: tensions {ta:.6g}/{tb:.6g}, "
            f"mu={route[g].mu:.3g}, theta={wrap[g]:.4g}, exp(mu theta) over the guides={e:.6g}"
        )


# Winches (docs/cables.md, Winches and Force winches). A length winch's paid-out length follows its
# command exactly when paying out; reeling in stops only at the rest-length floor. Both are float32
# sums of a few metres of cable: WINCH_ATOL is some ulps of that.
WINCH_ATOL = 1.0e-5


@st.composite
def winch_plans(draw, route):
    """The route with some end ANCHORs made winches (at most one force winch), and their commands.

    A length winch ramps at ``rate`` [m/s] and may jump by ``jump`` [m] at ``jump_step`` (a hard
    pull or release); a force winch holds ``force`` [N] and switches to ``force_after`` (which may be
    negative: the cable runs free) at ``jump_step``. Either may get one non-finite command at
    ``hold_step`` (the winch holds for that step)."""
    route = list(route)
    plan = []
    force_used = False
    for i in (0, len(route) - 1):
        if route[i].guide_type != TendonGuideType.ANCHOR:
            continue
        kind = draw(st.sampled_from(["force", "length", "none"]))
        if kind == "none":
            continue
        if kind == "force" and force_used:
            kind = "length"
        force_used = force_used or kind == "force"
        route[i] = dataclasses.replace(route[i], winch=True, winch_force=kind == "force")
        plan.append(
            dict(
                guide=i,
                kind=kind,
                rate=draw(finite_floats(-0.5, 0.5)),
                jump=draw(st.one_of(st.just(0.0), finite_floats(-0.2, 0.2))),
                force=draw(finite_floats(0.0, 40.0)),
                force_after=draw(finite_floats(-5.0, 40.0)),
                jump_step=draw(st.integers(0, STEPS - 1)),
                hold_step=draw(st.one_of(st.just(-1), st.integers(0, STEPS - 1))),
                hold_value=draw(st.sampled_from([math.nan, math.inf, -math.inf])),
            )
        )
    return route, plan


@st.composite
def winch_cable_scenes(draw):
    """``cable_scenes`` with winches (``winch_plans``): (specs, route, plan)."""
    specs, route = draw(cable_scenes())
    route, plan = draw(winch_plans(route))
    return specs, route, plan


class WinchSchedule:
    """Writes a ``winch_plans`` plan into the control before each step and checks a length winch's
    paid-out length after it."""

    def __init__(self, plan, route, dt: float, specs=()):
        self.plan = list(plan)
        self.dt = dt
        self.n = len(route)
        self.route = route
        self.specs = specs

    def command(self, w, step: int) -> float:
        if step == w["hold_step"]:
            return w["hold_value"]
        if w["kind"] == "force":
            return w["force_after"] if step >= w["jump_step"] else w["force"]
        return w["rate"] * (step + 1) * self.dt + (w["jump"] if step >= w["jump_step"] else 0.0)

    def apply(self, sim, step: int) -> np.ndarray:
        """Write this step's commands; return the paid-out lengths before the step (and keep the
        rest lengths before it for ``check``)."""
        paid = sim.s0.tendon_guide_winch_paid.numpy().astype(np.float64)
        self.rest_before = sim.s0.tendon_segment_rest_length.numpy().astype(np.float64)
        if not self.plan:
            return paid
        length = sim.control.tendon_guide_winch_length.numpy()
        force = sim.control.tendon_guide_winch_force.numpy()
        for w in self.plan:
            (force if w["kind"] == "force" else length)[w["guide"]] = self.command(w, step)
        sim.control.tendon_guide_winch_length.assign(length)
        sim.control.tendon_guide_winch_force.assign(force)
        return paid

    def paid_total(self, sim) -> float:
        return float(np.sum(sim.s0.tendon_guide_winch_paid.numpy().astype(np.float64)))

    def check(self, sim, step: int, paid_before: np.ndarray):
        """A length winch applies its command, except that reeling in stops at the rest-length floor
        or stalls (an inextensible span at the winch that no body can move, ``immovable``: nothing
        gives it cable unless a frictional guide or a moving span of its run does, docs/cables.md);
        a non-finite command holds either kind of winch.

        The winch acts at the start of the step (docs/cables.md, Winches), so a reel-in that fell
        short took the span from its rest length before the step down to the floor: what it reeled
        in is the material the span held then, less the floor's. The span may hold more at the
        end of the step: a force winch at the other end of a two-guide cable pays out during the
        step (a free 1 kg body hanging from a 0 N drum, reeled at 0.5 m/s from a world anchor at
        the same point: the span starts at the floor and ends the first step holding 1.7e-4 m)."""
        paid = sim.s0.tendon_guide_winch_paid.numpy().astype(np.float64)
        rest = sim.s0.tendon_segment_rest_length.numpy().astype(np.float64)
        gl = sim.solver.tendon_segment_active_guide_l.numpy()
        gr = sim.solver.tendon_segment_active_guide_r.numpy()
        active = sim.solver.tendon_segment_active.numpy()
        for w in self.plan:
            g = w["guide"]
            cmd = self.command(w, step)
            before, after = paid_before[g], paid[g]
            if not math.isfinite(cmd):
                assert after == before, f"step {step}: winch {g} moved on a held command: {before} -> {after}"
                continue
            if w["kind"] == "force":
                continue
            at_winch = [s for s in range(len(active)) if active[s] and (gl[s] == g or gr[s] == g)]
            assert len(at_winch) == 1, (g, at_winch)
            tol = WINCH_ATOL * max(1.0, abs(cmd))
            if abs(after - cmd) <= tol:
                continue
            # Only a reel-in can fall short, by stopping at the floor between the old and the new command.
            assert cmd < after <= before + tol, f"step {step}: winch {g} paid {after}, commanded {cmd}"
            s = at_winch[0]
            comp = sim.solver.tendon_segment_active_compliance.numpy()[s]
            if comp == 0.0 and immovable(self.route, self.specs, (gl[s], gr[s])):
                continue  # a stall: what the winch could not take went back onto the drum
            left = self.rest_before[s] + (after - before)  # the span's material once the winch acted
            assert left <= REST_LENGTH_FLOOR + FLOOR_ATOL, (
                f"step {step}: winch {g} stopped at {after} (commanded {cmd}) with {left} m left in "
                f"its span at the step's start ({rest[s]} m at its end)"
            )


def run_cable_scene(device, solver, specs, route, plan=()):
    """Step one random cable scene (``test_random_routed_cables`` lists the checks); ``plan``: the
    winch commands (``winch_plans``)."""
    b = nt.ModelBuilder()
    add_bodies(b, specs)
    b.add_tendon(route)
    sim = Sim(b, solver, device)
    set_kinematic_twists(sim.s0, specs)
    winches = WinchSchedule(plan, route, DT, specs)
    inextensible = all(g.compliance == 0.0 for g in route[1:])
    cable0 = None
    degenerate = False
    bad_wrap = False
    created = False
    applied_before = np.zeros(len(route) - 1)
    weight = 9.81 * sum(spec["mass"] for spec in specs if spec["kind"] != "kinematic")
    overloaded = False
    for step in range(STEPS):
        paid_before = winches.apply(sim, step)
        sim.step()
        winches.check(sim, step, paid_before)
        applied = applied_tension(sim.solver)
        assert_all_finite(sim, step, ("tendon_",))
        sv = sim.solver
        mat = sv.tendon_segment_material_tension.numpy()
        active = sv.tendon_segment_active.numpy()
        comp = sv.tendon_segment_active_compliance.numpy()
        lam_rows = (active != 0) & (comp == 0.0)
        assert np.all(mat[lam_rows] >= -PUSH_TOL), f"step {step}: inextensible span pushes: {mat[lam_rows]}"
        overloaded = overloaded or bool(np.max(applied[active != 0], initial=0.0) > OVERLOAD_FACTOR * max(weight, 1.0))
        if overloaded:
            continue
        bad_wrap = bad_wrap or bool(np.any(sv.tendon_guide_wrap_error.numpy())) or fixed_wrap_out_of_range(sim, route)
        inside_roller = far_point_inside_roller(sim, route)
        degenerate = degenerate or bad_wrap or inside_roller
        # What the winches paid out is cable added to the route (docs/cables.md, Winches).
        cable = float(sv.tendon_total_cable.numpy()[0]) - winches.paid_total(sim)
        if cable0 is None:
            cable0 = cable
        conserved = abs(cable - cable0) <= CABLE_RTOL * abs(cable0) + CABLE_ATOL
        if inextensible and not degenerate:
            assert conserved, f"step {step}: total cable {cable!r} drifted from {cable0!r}"
        # A degenerate route that has made or lost cable stays outside the model (docs/cables.md).
        created = created or (degenerate and not conserved)
        if not (bad_wrap or inside_roller or created):
            check_capstan(sim, route, specs, step, applied, applied_before)
        applied_before = applied


# One free body at the origin: the body list of shrunk examples in test_fuzz_cables.py and test_fuzz_winches.py.
_ONE_FREE_BODY = [
    dict(kind="free", pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=[0.03125] * 3, twist=None)
]
