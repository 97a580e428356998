"""Property-based (hypothesis) tests: random routed cables with length and force winches, stepped on both
solvers, with the checks of ``test_fuzz_cables.py`` plus the winches' own (``cable_scenes.WinchSchedule``).

Profiles (registered in ``tests/conftest.py``): the default ``ci`` profile runs a few
derandomized examples per test (deterministic, no deadline); ``--hypothesis-profile=long`` runs
many random ones.
"""

from __future__ import annotations

import math

from hypothesis import example, given

from newton_tendon import TendonGuide, TendonGuideType

from .cable_scenes import _ONE_FREE_BODY, run_cable_scene, winch_cable_scenes
from .strategies import STEPS


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
