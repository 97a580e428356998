"""Property-based (hypothesis) tests: random legal scenes of routed cables, stepped on both solvers,
checked against invariants that hold for every legal input (strategies and checks in
``cable_scenes.py`` and ``strategies.py``). Shrunk failures of earlier runs are kept as explicit
examples, each with what it found.

Profiles (registered in ``tests/conftest.py``): the default ``ci`` profile runs a few
derandomized examples per test (deterministic, no deadline); ``--hypothesis-profile=long`` runs
many random ones.
"""

from __future__ import annotations

from hypothesis import example, given

from newton_tendon import TendonGuide, TendonGuideType

from .cable_scenes import _ONE_FREE_BODY, cable_scenes, run_cable_scene


# Shrunk failures kept as explicit examples (run by every profile).
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
