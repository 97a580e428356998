"""Property-based (hypothesis) tests: random legal scenes of routed cables and transmission tendons,
stepped on both solvers, checked against invariants that hold for every legal input.

Strategies only build inputs the builders accept (the rules of ``ModelBuilder.add_tendon`` and of
``flatten_spatial_path`` / ``check_transmission_properties``), so an exception at build time is a
failure too. Scenes are tiny (1-4 bodies) and short (STEPS steps at DT): Warp kernels compile once
per session, so the cost of an example is stepping.

Profiles (registered in ``tests/conftest.py``): the default ``ci`` profile runs a few
derandomized examples per test (deterministic, no deadline); ``--hypothesis-profile=long`` runs
many random ones.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import warp as wp
from hypothesis import example, given
from hypothesis import strategies as st

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap
from newton_tendon.kernels.cable import REST_LENGTH_FLOOR, STIFF_REPORT_COMPLIANCE, WRAP_TOLERANCE

from ..helpers import SOLVERS, quat_to_matrix

DT = 1.0 / 240.0
STEPS = 120
ITERATIONS = 8

# ----------------------------------------------------------------------------------------------
# Shared strategies and checks


def finite_floats(lo: float, hi: float):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def unit_vectors(draw):
    """A unit vector: half the time a coordinate axis (the common authored case), else random."""
    if draw(st.booleans()):
        v = [0.0, 0.0, 0.0]
        v[draw(st.integers(0, 2))] = draw(st.sampled_from([1.0, -1.0]))
        return tuple(v)
    v = np.array([draw(finite_floats(-1.0, 1.0)) for _ in range(3)], dtype=np.float64)
    n = np.linalg.norm(v)
    if n < 0.2:
        return (0.0, 0.0, 1.0)
    return tuple(float(x) for x in v / n)


@st.composite
def poses(draw, extent: float = 1.0):
    """(x, y, z, qx, qy, qz, qw): position in a cube of half-size ``extent``, rotation axis-angle."""
    p = [draw(finite_floats(-extent, extent)) for _ in range(3)]
    axis = draw(unit_vectors())
    angle = draw(finite_floats(-math.pi, math.pi))
    s = math.sin(0.5 * angle)
    return (*p, axis[0] * s, axis[1] * s, axis[2] * s, math.cos(0.5 * angle))


def offsets(extent: float = 0.3):
    return st.tuples(*(finite_floats(-extent, extent) for _ in range(3)))


compliances = st.one_of(st.just(0.0), finite_floats(-6.0, -3.0).map(lambda e: float(10.0**e)))
"""0 (inextensible) or log-uniform in [1e-6, 1e-3] m/N."""
dampings = st.one_of(st.just(0.0), finite_floats(0.0, 10.0))


@st.composite
def bodies(draw, max_bodies: int = 4):
    """Body specs: kind ("free", "kinematic" with a random twist, or "hinged" to the world on a
    revolute joint), pose, mass and a diagonal inertia."""
    n = draw(st.integers(1, max_bodies))
    out = []
    for _ in range(n):
        kind = draw(st.sampled_from(["free", "free", "kinematic", "hinged"]))
        mass = draw(finite_floats(0.2, 5.0))
        inertia = [mass * draw(finite_floats(0.005, 0.05)) for _ in range(3)]
        twist = None
        if kind == "kinematic":
            twist = (
                *(draw(finite_floats(-0.5, 0.5)) for _ in range(3)),
                *(draw(finite_floats(-1.0, 1.0)) for _ in range(3)),
            )
        out.append(
            dict(kind=kind, pose=draw(poses()), mass=mass, inertia=inertia, twist=twist, axis=draw(unit_vectors()))
        )
    return out


def add_bodies(b: nt.ModelBuilder, specs) -> list[int]:
    ids = []
    for spec in specs:
        kw = dict(xform=spec["pose"], mass=spec["mass"], inertia=np.diag(spec["inertia"]))
        if spec["kind"] == "kinematic":
            ids.append(b.add_body(is_kinematic=True, **kw))
        elif spec["kind"] == "hinged":
            link = b.add_link(**kw)
            b.add_joint_revolute(-1, link, parent_xform=spec["pose"], axis=spec["axis"])
            ids.append(link)
        else:
            ids.append(b.add_body(**kw))
    return ids


def set_kinematic_twists(state, specs):
    qd = state.body_qd.numpy()
    for i, spec in enumerate(specs):
        if spec["twist"] is not None:
            qd[i] = spec["twist"]
    state.body_qd.assign(qd)


def float_arrays(obj, prefixes):
    """Every float-valued Warp array attribute of ``obj`` whose name starts with one of ``prefixes``."""
    out = {}
    for name in dir(obj):
        if not name.startswith(prefixes):
            continue
        a = getattr(obj, name, None)
        if isinstance(a, wp.array) and a.size and np.issubdtype(np.asarray(a.numpy()).dtype, np.floating):
            out[name] = a.numpy()
    return out


def assert_all_finite(sim, step: int, prefixes):
    bad = {
        name: a
        for src in (sim.s0, sim.solver)
        for name, a in float_arrays(src, ("body_", *prefixes)).items()
        if not np.all(np.isfinite(a))
    }
    assert not bad, f"non-finite values after step {step}: {sorted(bad)}"


class Sim:
    """Model, two states, control and solver without contacts, stepped in place."""

    def __init__(self, builder: nt.ModelBuilder, solver: str, device):
        if solver == "vbd":
            builder.color()
        self.model = builder.finalize(device)
        self.solver = SOLVERS[solver](self.model, iterations=ITERATIONS)
        self.s0 = self.model.state()
        self.s1 = self.model.state()
        self.control = self.model.control()

    def step(self):
        self.solver.step(self.s0, self.s1, self.control, None, DT)
        self.s0, self.s1 = self.s1, self.s0


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
    SolverVBD's tension of the last sweep (its private ``_tendon_work.lam``, T dt^2). The capstan
    bound is enforced on these (the material relaxation runs on the predicted multipliers). The
    reported material tension of a compliant span is its constitutive (l - L)/c instead, which also
    holds the row's residual after ITERATIONS iterations divided by c: a fuzz case at c = 1.8e-6 m/N
    reported 63.6 N (XPBD) and 36.6 N (VBD) at rest where 19.6 N was applied (9 % at 32 iterations,
    0.1 % at 128), so it is not a capstan quantity until the rows converge."""
    lam = solver.tendon_segment_lambda if isinstance(solver, SOLVERS["xpbd"]) else solver._tendon_work.lam
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


# Shrunk failures kept as explicit examples (run by every profile).
_ONE_FREE_BODY = [
    dict(kind="free", pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=[0.03125] * 3, twist=None)
]
_PINHOLE_LOOP = [
    TendonGuide(body=0, offset=(0.0, 0.0, 0.125)),
    TendonGuide(body=-1, guide_type=TendonGuideType.PINHOLE),
    TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE),
    TendonGuide(body=0),
]

# Long profile: a pinhole with mu = 1 on a hinged body, wrapped by 2.55 rad (exp(mu theta) = 12.9),
# between a cable run over two more pinholes and an end anchor in the world. SolverVBD kept the runs
# on its two sides as separate rows that exchanged material only through the relaxation between
# iterations, so the last sweep's body motion pulled the anchor side past the bound while the guide
# slipped: 0.0876 N against 0 N at 8 iterations, 0.885 N against 0.062 N at 16. Chain rows
# (cable.TendonLinearization) project the tensions onto the bound within the sweep.
_SLIPPING_PINHOLE_ON_HINGE = (
    [
        dict(
            kind="hinged",
            pose=(0.6385127271295636, -0.4339472659602389, -0.4371919884252321, 0.0, 0.0, 0.0, 1.0),
            mass=2.024687195387928,
            inertia=[0.10027549214459418, 0.03638994400901835, 0.057792601308498906],
            twist=None,
            axis=(0.0, 0.8935612265730821, 0.44894134846905015),
        ),
        dict(
            kind="hinged",
            pose=(
                -0.35822077724858115,
                -0.39339090874808125,
                0.37161563872259706,
                -0.9733308886166979,
                0.0,
                0.0,
                0.2294057132344988,
            ),
            mass=0.5,
            inertia=[0.011272612049347002, 0.004662809066619472, 0.01222733209738643],
            twist=None,
            axis=(0.0, 0.0, 1.0),
        ),
    ],
    [
        TendonGuide(body=1, offset=(0.23829949484658303, 0.0716699367051899, 0.0)),
        TendonGuide(
            body=1,
            offset=(-0.174027738838759, -0.14683649796117657, -0.044942507578809854),
            compliance=1.2785897775224539e-05,
            damping=2.462566909018307,
        ),
        TendonGuide(
            body=1,
            guide_type=TendonGuideType.PINHOLE,
            mu=0.09523737797950418,
            offset=(-0.0512853774890161, 0.0, 0.0),
            damping=4.520795159022582,
        ),
        TendonGuide(
            body=1,
            guide_type=TendonGuideType.PINHOLE,
            mu=2.225073858507203e-309,
            offset=(-0.24646523263508643, -0.14725012132784157, 0.3),
            compliance=2.182947006715917e-06,
        ),
        TendonGuide(
            body=0,
            guide_type=TendonGuideType.PINHOLE,
            mu=0.99999,
            offset=(0.15479555373863424, 0.0, -0.14000780784077538),
        ),
        TendonGuide(
            body=-1, offset=(0.2567081519835665, 0.19615858691530114, 0.1887128593084451), damping=3.6805032231137362
        ),
    ],
)

# Long profile (shrunk): a pinhole on body 1 beads the cable between an end anchor on body 0 and a
# hinged body's anchor 0.25 m below both. The bodies fall past the anchor; the frictionless pinhole
# lets the bead slide to the cable's end (the span 0 -> 1 empties to the floor), and when the cable
# snaps taut at step 76 the span above the bead carries 833 N against 482 N below it (static later:
# (m0 + m1) g = 29.4 N against m0 g = 19.6 N). Not a capstan violation: an end stop (FLOOR_ATOL).
_BEAD_ON_CABLE_END = (
    [
        dict(kind="free", pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=2.0, inertia=[0.0625] * 3, twist=None),
        dict(
            kind="free",
            pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            mass=1.0,
            inertia=[0.03125, 0.03125, 0.028506059550125265],
            twist=None,
        ),
        dict(
            kind="free",
            pose=(0.0, 0.0, 0.0, -0.448842865061856, 0.0, 0.0, 0.8936106996243188),
            mass=1.0,
            inertia=[0.02077347712231172, 0.008345552398383058, 0.009258069890406073],
            twist=None,
        ),
        dict(
            kind="hinged",
            pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            mass=1.0,
            inertia=[0.012651387473630557, 0.00514575796150708, 0.03125],
            twist=None,
            axis=(1.0, 0.0, 0.0),
        ),
    ],
    [
        TendonGuide(body=0),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=1, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=3, offset=(0.0, 0.0, -0.25)),
    ],
)

# Long profile: a route wholly on one spinning kinematic body (anchor, roller, anchor) lost 8.7e-6 m of
# its 0.76 m cable in 79 steps; the step-start fold moved rounding noise of one sign out of the spans
# (cable.FOLD_ROUNDING).
_SPINNING_ROUTE = (
    [
        dict(
            kind="kinematic",
            pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            mass=1.0,
            inertia=[0.03125] * 3,
            twist=(0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        )
    ],
    [
        TendonGuide(body=0),
        TendonGuide(body=0, guide_type=TendonGuideType.ROLLER, radius=0.0625, offset=(0.25, 0.0, 0.0)),
        TendonGuide(body=0, offset=(0.0, 0.25, 0.0)),
    ],
)

# Long profile: the last anchor sits on a dynamic roller's axis (far point inside the roller), on a
# spinning body; the counted cable jumped by 2 pi r at step 76. Kept for the no-NaN and capstan checks.
_END_ON_ROLLER_AXIS = (
    [dict(_SPINNING_ROUTE[0][0], twist=(0.0, 0.0, 0.0, 0.0, 1.0, 0.0))],
    [
        TendonGuide(body=0),
        TendonGuide(body=0, guide_type=TendonGuideType.ROLLER, radius=0.0625, dynamic=True, offset=(0.25, 0.25, 0.0)),
        TendonGuide(body=0, offset=(0.25, 0.25, 0.25)),
    ],
)


# Long profile (shrunk, rounded): the bypass span from a fixed roller (axis y) to an anchor cuts 2 mm into a
# dynamic roller (axis -z, on a hinged body), but engaging re-aims the fixed roller's tangent at the dynamic one,
# out of plane, and the engaged route wraps it by -0.52 rad. The engage counted the arc's material at theta = 0
# (clamped) while its material points held -0.52 rad: r theta = 0.09 m of cable lost at step 106 (both solvers).
# A roller that the engaged route would not wrap (theta <= 0) now stays bypassed (cable.begin_step).
_ENGAGE_WITHOUT_WRAP = (
    [
        dict(kind="free", pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=[0.05] * 3, twist=None),
        dict(kind="free", pose=(0.42, -0.8, 0.95, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=[0.05] * 3, twist=None),
        dict(
            kind="hinged",
            pose=(-0.05, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            mass=1.0,
            inertia=[0.05] * 3,
            twist=None,
            axis=(0.0, 0.0, 1.0),
        ),
    ],
    [
        TendonGuide(body=1),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE, offset=(0.2, 0.0, -0.2)),
        TendonGuide(
            body=-1, guide_type=TendonGuideType.ROLLER, radius=0.3, offset=(-0.25, 0.0, 0.0), axis=(0.0, 1.0, 0.0)
        ),
        TendonGuide(
            body=2,
            guide_type=TendonGuideType.ROLLER,
            radius=0.17,
            orientation=-1,
            mu=0.6,
            dynamic=True,
            offset=(0.17, 0.0, 0.3),
            axis=(0.0, 0.0, -1.0),
        ),
        TendonGuide(body=1),
    ],
)

# Long profile (shrunk, partly rounded): engaging a dynamic roller whose rim overlaps a fixed roller's (axes
# perpendicular) leaves the fixed roller's wrap at 3.20 rad > pi at the step's final pose, and both spans' far
# points inside the rollers. tendon_guide_wrap_error flags that pose only at the next step's start, so the capstan
# check ran on it: XPBD applied 1419/1033 N at the dynamic roller, exp(mu theta) = 1.30 (a 1000 N snap; at 16
# iterations the tensions converge inside the bound). The checks now stop at the step whose final wrap is out of
# range (fixed_wrap_out_of_range).
_ENGAGE_WRAP_BEYOND_PI = (
    [
        dict(kind="free", pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.5, inertia=[0.07, 0.07, 0.03], twist=None),
        dict(
            kind="free", pose=(0.42, -0.81, 0.95, 0.0, 0.0, 0.0, 1.0), mass=2.7, inertia=[0.11, 0.1, 0.015], twist=None
        ),
        dict(
            kind="hinged",
            pose=(0.0, 0.0, 0.0, -0.02369185486448862, 0.0, 0.0, 0.9997193086127125),
            mass=2.25,
            inertia=[0.02, 0.1, 0.08],
            twist=None,
            axis=(0.0, 0.0, 1.0),
        ),
    ],
    [
        TendonGuide(body=1),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE, offset=(0.0, 0.1943285102201185, -0.2078483631829391)),
        TendonGuide(
            body=-1,
            guide_type=TendonGuideType.ROLLER,
            radius=0.296875,
            offset=(-0.24530186571573764, 0.0, 0.23801296608730865),
            axis=(0.0, 1.0, 0.0),
        ),
        TendonGuide(
            body=2,
            guide_type=TendonGuideType.ROLLER,
            radius=0.17197997630808726,
            orientation=-1,
            mu=0.6200781027936596,
            dynamic=True,
            offset=(0.16756531633388838, -2.0896410381121695e-19, 0.296875),
            axis=(0.0, 0.0, -1.0),
        ),
        TendonGuide(body=1),
        TendonGuide(body=0),
    ],
)

# Long profile (shrunk, rounded; VBD): a body falls from the world anchor's height onto three strands
# (anchor -> its pinhole -> a pinhole at the hinge pivot of a second body -> back to it); the cable snaps
# taut (125 N, then 44 N) and one step later the frictionless pinhole held 1.717 N against 1.576 N after 8
# iterations (equal to 4e-4 N at 16): the residual of the load change (CAPSTAN_LOAD_CHANGE_FRACTION).
_SNAP_THROUGH_PINHOLE = (
    [
        dict(
            kind="free", pose=(0.0, 0.0, 0.45, 0.0, 0.0, 0.0, 1.0), mass=0.5, inertia=[0.02, 0.015, 0.0025], twist=None
        ),
        dict(
            kind="hinged",
            pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            mass=1.0,
            inertia=[0.03125] * 3,
            twist=None,
            axis=(1.0, 0.0, 0.0),
        ),
    ],
    [
        TendonGuide(body=-1),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=1, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0),
    ],
)

# Long profile (shrunk, rounded; VBD): a compliant damped span (1e-6 m/N, 9.8 N s/m) to a kinematic anchor
# goes taut from a fall while its neighbours across a frictionless roller are still slack. VBD's spring
# multiplier was clamped at 0, so a span slack by 0.6 mm but lengthening pulled with the penalty-softened
# k C (k = 1.1e4 instead of 1/c = 1e6 N/m) plus damping: 9.08 N against 0 N (4.47/11.18 N a step later, at
# any iteration count; XPBD 0 and 7.43/7.43 N). The multiplier may now go down to -damping (cable.py,
# update_tendon_span_duals).
_DAMPED_SLACK_SPAN = (
    [
        dict(
            kind="free", pose=(0.97, 0.0, 0.68, 0.0, 0.0, 0.0, 1.0), mass=0.58, inertia=[0.03, 0.017, 0.023], twist=None
        ),
        dict(
            kind="kinematic",
            pose=(0.0, 0.0, 0.67, 0.0, 0.0, 0.0, 1.0),
            mass=4.3,
            inertia=[0.065, 0.021, 0.15],
            twist=(0.0,) * 6,
        ),
        dict(
            kind="free", pose=(0.0, -0.97, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.9, inertia=[0.09, 0.058, 0.022], twist=None
        ),
    ],
    [
        TendonGuide(body=0),
        TendonGuide(body=2, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(
            body=0,
            guide_type=TendonGuideType.ROLLER,
            radius=0.275,
            orientation=-1,
            offset=(0.0, 0.0, -0.28),
            axis=(-1.0, 0.0, 0.0),
        ),
        TendonGuide(body=1, compliance=1.0e-6, damping=9.8),
    ],
)

# Long profile (shrunk), VBD: a light body hangs from a world pinhole at its own centre by a cable
# from its end roller; after a 60 N snap the cable left the roller's end stop and the spans across
# the frictionless pinhole applied 14.6 N and 16.3 N (per-span rows joined only by the material
# relaxation between iterations; SolverVBD's run rows since). An end roller is rejected since: the
# route now starts at an anchor on the roller's body, at its centre.
_SNAP_AT_WORLD_PINHOLE = (
    [dict(kind="free", pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=0.2, inertia=[0.001] * 3, twist=None)],
    [
        TendonGuide(body=0),
        TendonGuide(body=0, guide_type=TendonGuideType.ROLLER, radius=0.12483608747062934, axis=(1.0, 0.0, 0.0)),
        TendonGuide(body=-1, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0),
    ],
)

# VBD: a bead (a frictionless pinhole on a free body) on a cable with no slack between two anchors
# of one moving kinematic body. The bead's span to the end anchor is millimetres long under ~100 N:
# the Newton steps overshot sideways into a two-cycle that kept it stretched by 2 mm and pulling 63 N
# against 113 N (span rows' geometric stiffness since; 77 of 80 random variants failed before it).
_BEAD_ON_TAUT_CABLE = (
    [
        dict(
            kind="kinematic",
            pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            mass=1.0,
            inertia=[0.03125] * 3,
            twist=(0.45, -0.356, 0.449, -0.376, -0.153, 0.655),
        ),
        dict(kind="free", pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=2.16, inertia=[0.03125] * 3, twist=None),
    ],
    [
        # Was an end roller on body 0 (rejected since); its span exerted nothing (both ends on body 0).
        TendonGuide(body=0),
        TendonGuide(body=0),
        TendonGuide(body=1, guide_type=TendonGuideType.PINHOLE, offset=(-0.25, 0.0, 0.0)),
        TendonGuide(body=0, offset=(-0.25, 0.0, 0.0)),
    ],
)

# Long profile, VBD: every guide at the origin; the cable leaves a roller on a hinged body for a
# frictional pinhole at the roller's centre (a far end inside the roller: a degenerate route). It
# stays finite; the capstan check skips the steps with the far end inside (see the test). The route
# started at that roller (an end roller, rejected since); it now starts at an anchor at its centre.
_PINHOLE_AT_ROLLER_CENTRE = (
    [
        dict(kind="free", pose=(0.0,) * 6 + (1.0,), mass=1.72, inertia=[0.035, 0.052, 0.037], twist=None),
        dict(
            kind="hinged",
            pose=(0.0,) * 6 + (1.0,),
            mass=3.27,
            inertia=[0.0163, 0.0327, 0.0778],
            twist=None,
            axis=(0.0, 0.0, 1.0),
        ),
        dict(kind="free", pose=(0.0,) * 6 + (1.0,), mass=0.2, inertia=[0.001] * 3, twist=None),
    ],
    [
        TendonGuide(body=1),
        TendonGuide(body=1, guide_type=TendonGuideType.ROLLER, radius=0.24, axis=(0.0, 0.0, 1.0)),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE, mu=0.1245),
        TendonGuide(body=-1, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0),
    ],
)


# Long profile of the winch test (no winch in it), VBD: a dynamic roller releases a span between a
# world pinhole and a pinhole on a resting kinematic body, which keeps 6.5 mm of slack cable. Both
# ends immovable, so the span has no row; the first iteration of each step gave it one anyway (k at
# the 1e8 N/m cap, zero gradients), which made it a chain member: its slack held the neighbours to
# its own tension, the span to the hanging body stretched 6.4 mm carrying 0.006 N while the far side
# carried 27.3 N across guides whose ratios allow 58.7 (XPBD: 84 N and 14 N, within the bound).
_SLACK_BYPASS_BETWEEN_IMMOVABLE_PINHOLES = (
    [
        dict(
            kind="kinematic",
            pose=(-0.5646343026504778, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            mass=2.61,
            inertia=[0.01305, 0.04033, 0.1305],
            twist=(0.0,) * 6,
        ),
        dict(kind="free", pose=(0.0,) * 6 + (1.0,), mass=4.8676, inertia=[0.04628, 0.09901, 0.14603], twist=None),
        dict(kind="free", pose=(0.0,) * 6 + (1.0,), mass=3.3517, inertia=[0.1141, 0.16758, 0.01694], twist=None),
    ],
    [
        TendonGuide(body=1),
        TendonGuide(body=-1, guide_type=TendonGuideType.PINHOLE, mu=0.795, offset=(0.0, 0.18781495841473617, 0.0)),
        TendonGuide(body=2, guide_type=TendonGuideType.ROLLER, radius=0.19503601299865758, dynamic=True),
        TendonGuide(body=0, guide_type=TendonGuideType.PINHOLE, mu=0.9156),
        TendonGuide(body=1, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0),
    ],
)


# Long profile of the winch test (no winch in it): the same route with the kinematic body moving
# away, so the inextensible cable cannot follow it: 700x the scene's weight after 10 steps, and the
# total cable drifted by 1.3e-5 of itself (both solvers) from the rounding of the relaxation's huge
# material moves. Checked for finiteness only once overloaded (OVERLOAD_FACTOR).
_KINEMATIC_PULL_BEYOND_LENGTH = (
    [
        dict(
            kind="kinematic",
            pose=(0.0,) * 6 + (1.0,),
            mass=2.61,
            inertia=[0.01305, 0.04033, 0.1305],
            twist=(-0.3715, -0.151, -0.5, -0.2972, -0.7, 0.03656),
        ),
        *_SLACK_BYPASS_BETWEEN_IMMOVABLE_PINHOLES[0][1:],
    ],
    _SLACK_BYPASS_BETWEEN_IMMOVABLE_PINHOLES[1],
)


# Long profile (XPBD, then VBD): a free body hangs through a frictional pinhole on it, a frictionless
# pinhole on it, a world pinhole, a pinhole at its origin and the end anchor at the same point. The run
# beyond the frictional pinhole starts with a span between two guides on the body: a rigid member,
# whose prediction is a float32 stretch over the 1e-10 denominator floor. Its tension after the
# frictionless sharing kept that rounding (up to the run's own tension), and the capstan sweeps read
# it as the run's: XPBD slipped to 3.37 against e = 3.16 (5.73/19.32 N at step 22). SolverVBD, whose
# exerted-tension shift also moved spans without a row, slid 0.165 m of cable in one step.
def _rigid_span_ahead_of_run(inertia, anchor, inner, world, tail_compliance):
    """The scene below: one free 2.37 kg body at the origin; a world anchor at ``anchor``, a pinhole on
    the body (mu 0.38) 0.199 m along x, a pinhole on the body ``inner`` m along x, a world pinhole at
    ``world``, a pinhole at the body's origin and the end anchor there (``tail_compliance``)."""
    pinhole = TendonGuideType.PINHOLE
    body = dict(
        kind="free", pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=2.37210455561558, inertia=inertia, twist=None
    )
    route = [
        TendonGuide(body=-1, offset=anchor),
        TendonGuide(body=0, guide_type=pinhole, mu=0.38120275515389734, offset=(0.1992260235380941, 0.0, 0.0)),
        TendonGuide(body=0, guide_type=pinhole, offset=(inner, 0.0, 0.0)),
        TendonGuide(body=-1, guide_type=pinhole, offset=world),
        TendonGuide(body=0, guide_type=pinhole),
        TendonGuide(body=0, compliance=tail_compliance),
    ]
    return [body], route


_RIGID_SPAN_AHEAD_OF_RUN = _rigid_span_ahead_of_run(
    [0.06886867330913274, 0.09070851338569813, 0.035545741169626895], (0.0, 0.0, 0.0), 0.046875, (0.0, 0.0, 0.0), 0.0
)
_RIGID_SPAN_AHEAD_OF_COMPLIANT_RUN = _rigid_span_ahead_of_run(
    [0.09070851338569813, 0.06886867330913274, 0.035545741169626895],
    (0.09858427578975415, 0.0, 0.12975662590057419),
    0.05270666704110466,
    (0.1875, 0.0, 0.0),
    4.552009135705047e-06,
)


@given(scene=cable_scenes())
@example(scene=(_ONE_FREE_BODY, _PINHOLE_LOOP))
@example(scene=_RIGID_SPAN_AHEAD_OF_RUN)
@example(scene=_RIGID_SPAN_AHEAD_OF_COMPLIANT_RUN)
@example(scene=_KINEMATIC_PULL_BEYOND_LENGTH)
@example(scene=_SLACK_BYPASS_BETWEEN_IMMOVABLE_PINHOLES)
@example(scene=_SNAP_AT_WORLD_PINHOLE)
@example(scene=_SLIPPING_PINHOLE_ON_HINGE)
@example(scene=_BEAD_ON_TAUT_CABLE)
@example(scene=_PINHOLE_AT_ROLLER_CENTRE)
@example(scene=_BEAD_ON_CABLE_END)
@example(scene=_SPINNING_ROUTE)
@example(scene=_END_ON_ROLLER_AXIS)
@example(scene=_ENGAGE_WITHOUT_WRAP)
@example(scene=_ENGAGE_WRAP_BEYOND_PI)
@example(scene=_SNAP_THROUGH_PINHOLE)
@example(scene=_DAMPED_SLACK_SPAN)
def test_random_routed_cables(device, solver, scene):
    """Random legal routes on random free/kinematic/hinged bodies, both solvers, STEPS steps:

    * no NaN/inf in body_q, body_qd, the tendon state history and every solver ``tendon_*``
      diagnostic, after every step;
    * inextensible spans never push (material tension = lambda/dt^2 >= -PUSH_TOL). Compliant
      spans report (l - L)/c, which is negative by definition when slack, so the sign is checked
      only where the diagnostic is a multiplier;
    * the total material ``tendon_total_cable`` of a route whose spans are all inextensible is
      conserved to CABLE_RTOL (docs/cables.md: conserved by construction, engage/release included),
      for routes that stay out of the documented degenerate cases (a far point inside a roller, a
      fixed roller's wrap outside [0, pi]);
    * the capstan inequality holds on the applied tensions (``applied_tension``) at every active
      frictional (and frictionless: mu = 0 means equal tensions) internal guide after every step,
      until a fixed roller's wrap leaves the supported range (``fixed_wrap_out_of_range``, then
      ``tendon_guide_wrap_error``), at no step whose pose has a span's far end inside a roller
      (``far_point_inside_roller``), and not after a degenerate route (one of those two) has made
      or lost cable, nor (with the conservation check) once a row that cannot be
      met has loaded the cable beyond OVERLOAD_FACTOR times the scene's weight. docs/cables.md:
      such routes stay finite but are outside the cable model, so their tensions are not capstan
      quantities. (Routes may no longer end on a roller: in the long profile on VBD, a pinhole at
      the centre of an end roller on a hinged body held 10.8 kN against 9.0 kN while the end roller
      paid out 3.7 m of new cable.)
    """
    specs, route = scene
    run_cable_scene(device, solver, specs, route)


def _steady_winch(guide: int, kind: str, rate: float = 0.0, force: float = 0.0) -> dict:
    """A ``winch_plans`` entry whose command never jumps or holds: a length winch ramps at ``rate``
    [m/s], a force winch pulls ``force`` [N]."""
    return dict(
        guide=guide,
        kind=kind,
        rate=rate,
        jump=0.0,
        force=force,
        force_after=force,
        jump_step=STEPS,
        hold_step=-1,
        hold_value=math.nan,
    )


# Long profile: a free 1 kg body whose anchor, a 0 N force winch, sits on a world anchor that reels
# in at 0.5 m/s. The span starts at the floor, so the length winch has nothing to reel in at the
# start of step 0, while the drum pays out the 1.7e-4 m the body falls during the step. The check
# read the span's material at the end of the step and called the winch's stop short; it now reads
# it at the start, where the winch acts (``WinchSchedule.check``).
_REEL_AGAINST_FREE_DRUM = (
    _ONE_FREE_BODY,
    [TendonGuide(body=0, winch=True, winch_force=True), TendonGuide(body=-1, winch=True)],
    [_steady_winch(0, "force"), _steady_winch(1, "length", rate=-0.5)],
)


# Long profile (XPBD): a 20 N drum on a hinged body pulls through a nearly frictionless pinhole on a free
# body (mu 1e-5) and a second pinhole on it, back to an anchor on the hinged body. The span between the
# free body's two pinholes is rigid, and its rounding-level tension after the frictionless sharing
# stood for its run's at the first pinhole: the drum's span applied 19.60 N and the run 20.80 N at
# step 76, 6 % apart across a guide with e = 1.00001.
_DRUM_AHEAD_OF_RIGID_SPAN = (
    [
        dict(
            kind="hinged",
            pose=(0.5095537749424222, 0.19408044313657968, 0.9517498607971921, 0.0, 0.0, 0.0, 1.0),
            mass=1.7350258104248302,
            inertia=[0.08185038362573524, 0.04008618558747547, 0.06638425061370047],
            twist=None,
            axis=(0.0, -0.44035641071903303, 0.8978230513517962),
        ),
        dict(
            kind="free",
            pose=(0.0, 0.0, 0.04567914543094109, 0.0, 0.0, 0.0, 1.0),
            mass=2.0421217371805396,
            inertia=[0.049926968819643036, 0.07477564567886623, 0.08902807727515749],
            twist=None,
        ),
    ],
    [
        TendonGuide(body=0, winch=True, winch_force=True),
        TendonGuide(body=1, guide_type=TendonGuideType.PINHOLE, mu=1e-5, offset=(0.0, -0.15373460206238426, 0.0)),
        TendonGuide(body=1, guide_type=TendonGuideType.PINHOLE),
        TendonGuide(body=0),
    ],
    [_steady_winch(0, "force", force=20.067567529933104)],
)


# Long profile (both solvers): a free 2.78 kg body falls in a cable loop over a 2 cm roller on a
# static kinematic body, the cable paid out by a 0 N drum at one end and held by a length winch at
# the other. The cable slides over the roller and its tangent points creep, so the step start folds
# a few micrometres of arc every step; moving the material points to the tangent points left one
# ulp of arc in the spans each time, counted twice, and the total cable drifted by 2.4e-7 m per step
# (1.53e-5 m at step 72, against 1.5e-5 m allowed).
_CABLE_SLIDING_OVER_SMALL_ROLLER = (
    [
        dict(
            kind="free",
            pose=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            mass=2.782734361490957,
            inertia=[0.13858703967948646, 0.013913671807454786, 0.0506894374389143],
            twist=None,
            axis=(1.0, 0.0, 0.0),
        ),
        dict(
            kind="kinematic",
            pose=(0.0, 0.9299374534724687, 0.0, 0.0, 0.941513311311026, 0.0, 0.33697579234144864),
            mass=3.383407684739599,
            inertia=[0.10150223054218796, 0.16723355195912756, 0.03383407684739599],
            twist=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
            axis=(0.0, 0.0, 1.0),
        ),
    ],
    [
        TendonGuide(body=0, winch=True, winch_force=True, offset=(0.24714838924403065, 0.0, 0.0)),
        TendonGuide(
            body=1,
            guide_type=TendonGuideType.ROLLER,
            radius=0.02,
            orientation=-1,
            offset=(0.0, -0.2762840440318119, 0.0),
            axis=(1.0, 0.0, 0.0),
        ),
        TendonGuide(body=0, winch=True),
    ],
    [_steady_winch(0, "force"), _steady_winch(2, "length")],
)


@example(scene=_REEL_AGAINST_FREE_DRUM)
@example(scene=_DRUM_AHEAD_OF_RIGID_SPAN)
@example(scene=_CABLE_SLIDING_OVER_SMALL_ROLLER)
@given(scene=winch_cable_scenes())
def test_random_routed_cables_with_winches(device, solver, scene):
    """The checks of ``test_random_routed_cables`` on routes whose end anchors are length or force
    winches with ramped, jumping and held commands (``winch_plans``), with the cable a winch paid
    out counted in the conserved material, plus: a length winch pays out exactly its command and
    reels in to it unless the span at the winch reached the rest-length floor when the winch acted
    (the step's start); a non-finite command holds either kind of winch (``WinchSchedule.check``)."""
    specs, route, plan = scene
    run_cable_scene(device, solver, specs, route, plan)


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


# ----------------------------------------------------------------------------------------------
# 2. Transmission tendons


@st.composite
def sites(draw, nb):
    return TendonSite(body=draw(st.integers(-1, nb - 1)), offset=draw(offsets(0.5)))


@st.composite
def branches(draw, nb):
    """site (wrap site | site)* with 2-4 sites; each wrap is a sphere or cylinder, with or without a
    side site, between two sites."""
    elems = [draw(sites(nb))]
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            side = draw(st.one_of(st.none(), sites(nb)))
            elems.append(
                TendonWrap(
                    kind=draw(st.sampled_from(["sphere", "cylinder"])),
                    body=draw(st.integers(-1, nb - 1)),
                    offset=draw(offsets(0.5)),
                    axis=draw(unit_vectors()),
                    radius=draw(finite_floats(0.02, 0.3)),
                    side=side,
                )
            )
        elems.append(draw(sites(nb)))
    return elems


@st.composite
def spatial_paths(draw, nb):
    """1-3 branches separated by pulleys (optionally a leading pulley), divisors in [0.5, 4]."""
    path = []
    if draw(st.booleans()):
        path.append(TendonPulley(divisor=draw(finite_floats(0.5, 4.0))))
    for k in range(draw(st.integers(1, 3))):
        if k:
            path.append(TendonPulley(divisor=draw(finite_floats(0.5, 4.0))))
        path.extend(draw(branches(nb)))
    return path


@st.composite
def transmission_properties(draw):
    """A random subset of force elements, each with legal values (limits ordered, margins that
    keep the bounds apart, actuation bounds ordered)."""
    p = {}
    if draw(st.booleans()):
        p["stiffness"] = draw(finite_floats(0.0, 1000.0))
        if draw(st.booleans()):
            lo = draw(finite_floats(0.0, 3.0))
            p["spring_lower"] = lo
            p["spring_upper"] = lo + draw(finite_floats(0.0, 1.0))
    if draw(st.booleans()):
        p["damping"] = draw(finite_floats(0.0, 20.0))
    if draw(st.booleans()):
        p["drive_force"] = draw(finite_floats(-20.0, 20.0))
        p["activation_time"] = draw(st.one_of(st.just(0.0), finite_floats(0.0, 0.2)))
    if draw(st.booleans()):
        p["position_gain"] = draw(finite_floats(0.0, 500.0))
        p["velocity_gain"] = draw(finite_floats(0.0, 20.0))
        p["target_length"] = draw(st.one_of(st.none(), finite_floats(0.0, 3.0)))
        p["target_velocity"] = draw(finite_floats(-1.0, 1.0))
    if draw(st.booleans()):
        lo = draw(finite_floats(-30.0, 0.0))
        p["actuation_lower"] = lo
        p["actuation_upper"] = lo + draw(finite_floats(0.0, 40.0))
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["lower", "upper", "both", "lock"]))
        a = draw(finite_floats(-1.0, 3.0))
        if kind == "lower":
            p["lower_limit"] = a
        elif kind == "upper":
            p["upper_limit"] = a
        elif kind == "lock":
            p["lower_limit"] = p["upper_limit"] = a
        else:
            width = draw(finite_floats(0.0, 2.0))
            p["lower_limit"], p["upper_limit"] = a, a + width
            p["limit_margin"] = draw(finite_floats(0.0, 0.5)) * width * 0.99
        p["position_correction"] = draw(finite_floats(0.0, 1.0))
        p["limit_compliance"] = draw(st.one_of(st.just(0.0), finite_floats(-6.0, -2.0).map(lambda e: float(10.0**e))))
    if draw(st.booleans()):
        p["friction_loss"] = draw(finite_floats(0.0, 10.0))
        p["friction_compliance"] = draw(
            st.one_of(st.just(0.0), finite_floats(-6.0, -2.0).map(lambda e: float(10.0**e)))
        )
    if draw(st.booleans()):
        p["armature"] = draw(finite_floats(0.0, 2.0))
    return p


@st.composite
def transmission_scenes(draw):
    """1-4 bodies, a chain of joints for fixed tendons, 1-2 spatial and 0-2 fixed tendons with random
    properties, and sometimes a polynomial coupling between two of them (or a single-tendon one)."""
    specs = draw(bodies())
    nb = len(specs)
    # Each hinged body (revolute) may instead be a slider (prismatic) for the fixed tendons.
    sliders = [spec["kind"] == "hinged" and draw(st.booleans()) for spec in specs]
    spatial = [(draw(spatial_paths(nb)), draw(transmission_properties())) for _ in range(draw(st.integers(1, 2)))]
    njoints = sum(spec["kind"] == "hinged" for spec in specs)
    fixed = []
    if njoints:
        for _ in range(draw(st.integers(0, 2))):
            k = draw(st.integers(1, 3))
            joints = [draw(st.integers(0, njoints - 1)) for _ in range(k)]
            coeffs = [draw(finite_floats(-1.0, 1.0)) for _ in range(k)]
            fixed.append((joints, coeffs, draw(transmission_properties())))
    ntx = len(spatial) + len(fixed)
    coupling = None
    if draw(st.booleans()):
        first = draw(st.integers(0, ntx - 1))
        second = draw(st.one_of(st.none(), st.integers(0, ntx - 1).filter(lambda t: t != first))) if ntx > 1 else None
        coeffs = [draw(finite_floats(-2.0, 2.0)) for _ in range(draw(st.integers(1, 5)))]
        compliance = draw(st.one_of(st.just(0.0), finite_floats(-6.0, -2.0).map(lambda e: float(10.0**e))))
        coupling = (first, second, coeffs, compliance, draw(finite_floats(0.0, 1.0)))
    return specs, sliders, spatial, fixed, coupling


# Shrunk failure of the long profile: a rigid coupling holding tendon 0 at its reference length
# (1 m) against its rigid upper limit of 0, both ends pinned by hinges at the sites. The coupling
# read the tendon's rate from before the limit row's impulse, so per XPBD pass both corrected the
# same error, and with the joints pulling back the overshoot grew until the bodies flew off (NaN at
# step 26).
_TWO_HINGES = [
    dict(kind="hinged", pose=(0.0, 0.0, z, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=[0.03125] * 3, twist=None, axis=a)
    for z, a in ((0.0, (1.0, 0.0, 0.0)), (1.0, (0.0, 0.0, 1.0)))
]
_LIMIT_AGAINST_COUPLING = (
    _TWO_HINGES,
    [False, False],
    [
        (
            [TendonSite(body=0, offset=(0.0, 0.0, 0.0)), TendonSite(body=1, offset=(0.0, 0.0, 0.0))],
            dict(upper_limit=0.0, position_correction=0.0, limit_compliance=0.0),
        ),
        ([TendonSite(body=0, offset=(0.0, 0.0, 0.0)), TendonSite(body=0, offset=(0.0, 0.0, 0.0))], {}),
    ],
    [],
    (0, None, [0.0], 0.0, 0.0),
)


# Shrunk failure of the long profile: a path whose sites and cylinder wrap all sit on one hinged body
# under a rigid single-tendon coupling. Its length cannot change (J = sum of the slots = 0), but the
# float32 slot sum left W ~ 1e-13 1/kg, so the rigid row took impulses ~1e14 N s whose per-slot
# corrections did not cancel (NaN at step 77; the unshrunk scene, a pulley branch on body 3 of four,
# at step 39). Such a body term of W now counts as 0 (transmission.JACOBIAN_CANCEL).
_ONE_BODY_PATH = (
    [
        dict(
            kind="hinged",
            pose=(0.0, 0.0, 0.0, -0.3867120437435153, 0.0, 0.0, 0.922200517904709),
            mass=0.21875,
            inertia=[0.0068359375] * 3,
            twist=None,
            axis=(1.0, 0.0, 0.0),
        )
    ],
    [False],
    [
        (
            [
                TendonSite(body=0, offset=(0.0, 0.0, 0.0)),
                TendonSite(body=0, offset=(0.0, 0.5, 0.0)),
                TendonWrap(kind="cylinder", body=0, offset=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), radius=0.25),
                TendonSite(body=0, offset=(0.0, -0.5, 0.0)),
            ],
            {},
        )
    ],
    [],
    (0, None, [0.0], 0.0, 0.0),
)


# Shrunk failure of the long profile (seed 12345, XPBD): three row owners on one prismatic body
# (body 1, coordinate q): tendon 1 = -0.93 q with a rigid upper limit 0 (q >= 0), a rigid coupling
# holding tendon 2 = q at its reference - 0.0125 (q = -0.0125), and the violated rigid upper limit
# of spatial tendon 0 whose path ends on bodies 1 and 3. The XPBD pass solved them in parallel and
# summed their corrections: N rows on one coordinate over-correct by 1 - N per pass (Jacobi), and
# the body's speed grew ~1.1x per step to overflow (NaN at step 88). Mass splitting (each owner
# sees n_b M_b^-1, newton_tendon.kernels.transmission) makes the pass a contraction; the body settles at the
# rows' compromise, as on VBD.
_CONFLICTING_RIGID_ROWS = (
    [
        dict(
            kind="free",
            pose=(-0.9842, 0.5676, 0.3674, 0.0, 0.0, 0.9984212269785333, 0.05616986308226159),
            mass=0.8,
            inertia=[0.0323, 0.016, 0.0387],
            twist=None,
            axis=(1.0, 0.0, 0.0),
        ),
        dict(
            kind="hinged",
            pose=(0.0, 0.0, 0.0, 0.0, 0.0, -0.622463582315027, 0.7826487645754918),
            mass=1.5,
            inertia=[0.0266, 0.0316, 0.0237],
            twist=None,
            axis=(-0.7508686997897578, 0.10792470843278103, -0.651573827732313),
        ),
        dict(
            kind="hinged",
            pose=(0.7742, 0.5317, 0.587, -0.790364286490834, 0.0, -0.0029393575930119448, 0.6126301125612217),
            mass=2.55,
            inertia=[0.0976, 0.0808, 0.0799],
            twist=None,
            axis=(0.0, 0.0, -1.0),
        ),
        dict(
            kind="free",
            pose=(0.6485, -0.162, 0.0, 0.13048459771871762, 0.0, 0.10244655485088602, 0.986143231562925),
            mass=3.35,
            inertia=[0.0207, 0.0877, 0.1218],
            twist=None,
            axis=(1.0, 0.0, 0.0),
        ),
    ],
    [False, True, True, False],
    [
        (
            [
                TendonSite(body=2, offset=(0.0, 0.0, -0.33)),
                TendonWrap(
                    kind="cylinder",
                    body=0,
                    offset=(0.434, -0.454, 0.461),
                    axis=(0.5627773911314716, -0.6228844804430818, 0.5434119358777526),
                    radius=0.266,
                ),
                TendonSite(body=0, offset=(0.0, -0.092, 0.41)),
                TendonPulley(divisor=1.5),
                TendonSite(body=1, offset=(0.5, 0.32, 0.0)),
                TendonSite(body=3, offset=(0.0, 0.0, 0.37)),
            ],
            dict(lower_limit=0.0, upper_limit=1.1),
        )
    ],
    [([0], [-0.93], dict(upper_limit=0.0, position_correction=0.97)), ([0], [1.0], {})],
    (2, None, [-0.0125], 0.0, 0.4),
)


def transmission_sim(scene, solver: str, device) -> Sim:
    """A ``Sim`` of a ``transmission_scenes`` draw: bodies (hinged ones on revolute or prismatic
    joints to the world), spatial and fixed tendons, the optional coupling, kinematic twists."""
    specs, sliders, spatial, fixed, coupling = scene
    b = nt.ModelBuilder()
    joint_ids = []
    for spec, slider in zip(specs, sliders, strict=True):
        kw = dict(xform=spec["pose"], mass=spec["mass"], inertia=np.diag(spec["inertia"]))
        if spec["kind"] == "kinematic":
            b.add_body(is_kinematic=True, **kw)
        elif spec["kind"] == "hinged":
            link = b.add_link(**kw)
            add = b.add_joint_prismatic if slider else b.add_joint_revolute
            joint_ids.append(add(-1, link, parent_xform=spec["pose"], axis=spec["axis"]))
        else:
            b.add_body(**kw)
    for path, props in spatial:
        b.add_spatial_tendon(path, **props)
    for joints, coeffs, props in fixed:
        b.add_fixed_tendon([joint_ids[j] for j in joints], coeffs, **props)
    if coupling is not None:
        first, second, coeffs, compliance, beta = coupling
        b.add_tendon_coupling(first, second, coeffs, compliance, position_correction=beta)
    sim = Sim(b, solver, device)
    set_kinematic_twists(sim.s0, specs)
    return sim


@given(scene=transmission_scenes())
@example(scene=_LIMIT_AGAINST_COUPLING)
@example(scene=_ONE_BODY_PATH)
@example(scene=_CONFLICTING_RIGID_ROWS)
def test_random_transmission_tendons(device, solver, scene):
    """Random spatial paths (sites, sphere/cylinder wraps with and without side sites, pulley
    branches) and fixed tendons over revolute/prismatic joints, with random force elements and
    sometimes a coupling, on both solvers: body state, transmission state and every
    ``solver.transmission_*`` / ``coupling_force`` array stay finite after every step.

    Only finiteness is universal here: kinematic bodies and drives inject energy and limits or
    couplings may be unsatisfiable together, so no energy or limit bound holds for every input."""
    sim = transmission_sim(scene, solver, device)
    for step in range(STEPS):
        sim.step()
        assert_all_finite(sim, step, ("transmission_", "coupling_"))


CONFLICT_STEPS = 200
CONFLICT_SETTLE_STEPS = 50
CONFLICT_SPEED = 0.5
"""Bound [m/s] on the shared hinged body's COM speed after 50 steps. It stays near the rows'
compromise, nudged by tendon 0 whose free bodies keep swinging (measured <= 0.05 m/s on both solvers);
before mass splitting it grew ~1.1x per step, 1e6 m/s at step 60 and NaN at 89, on XPBD."""
CONFLICT_SPIN = 6.0
"""Bound [rad/s] on its angular speed, which is free about its hinge. The rows' compromise swings it
(measured peaks on XPBD 0.6-4.4 rad/s over 6-16 iterations, 2.06 at the default 8 since joints are
solved as one block, 0.58 before; 0.04 on VBD): a bound that catches the divergent mode, which grew
geometrically, without resting on one setting's peak. An earlier single bound of 2.0 mixed m/s and
rad/s."""


def test_conflicting_rigid_rows_on_one_body_stay_bounded(device, solver):
    """Rigid rows of three owners (a limit, a coupling, another tendon's violated limit) that demand
    incompatible positions of one prismatic body do not over-correct it together: every array stays
    finite for 200 steps and the body stays slow near their compromise, on both solvers."""
    sim = transmission_sim(_CONFLICTING_RIGID_ROWS, solver, device)
    for step in range(CONFLICT_STEPS):
        sim.step()
        assert_all_finite(sim, step, ("transmission_", "coupling_"))
        if step >= CONFLICT_SETTLE_STEPS:
            qd = sim.s0.body_qd.numpy()[1].astype(np.float64)
            speed, spin = float(np.linalg.norm(qd[:3])), float(np.linalg.norm(qd[3:]))
            assert speed < CONFLICT_SPEED, f"step {step}: shared body at {speed} m/s"
            assert spin < CONFLICT_SPIN, f"step {step}: shared body at {spin} rad/s"


# A hinged body whose COM is on its axis stays at rest under gravity; the joint rows leave a residual
# of ~1e-4 m/s on VBD at 8 iterations (9.9e-5 measured), ~3e-6 on XPBD. Before the fix the bodies
# reached 1e9 m/s on XPBD and 2e-2 m/s with ~1e6 N of coupling force on VBD.
ONE_BODY_REST_SPEED = 1.0e-3


def test_one_body_path_has_no_effective_mass(device, solver):
    """A spatial tendon whose every element is on one body has a constant length (J = 0): rigid rows
    on it (a coupling, a violated limit) have nothing to act on, so they report zero force and leave
    the body at rest, on both solvers (the float32 round-off of the slot sum is not an effective mass)."""
    specs, _, spatial, _, _ = _ONE_BODY_PATH
    b = nt.ModelBuilder()
    add_bodies(b, specs)
    path, _ = spatial[0]
    b.add_spatial_tendon(path, lower_limit=2.0, upper_limit=3.0, position_correction=0.5)
    b.add_tendon_coupling(0, None, [0.3], 0.0, position_correction=1.0)
    sim = Sim(b, solver, device)
    for step in range(STEPS):
        sim.step()
        assert_all_finite(sim, step, ("transmission_", "coupling_"))
    assert float(sim.solver.transmission_length.numpy()[0]) < 2.0  # the lower limit is violated
    assert np.abs(sim.s0.body_qd.numpy()).max() <= ONE_BODY_REST_SPEED
    assert np.all(sim.solver.coupling_force.numpy() == 0.0)
    assert np.all(sim.solver.transmission_limit_force.numpy() == 0.0)
