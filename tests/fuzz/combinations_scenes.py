"""Features and invariants of the combination matrix (``tests/fuzz/test_combinations.py``).

A *feature* is one row of the matrix's table: a function that adds its part of a scene to a per-world
``ModelBuilder`` in its own region of space (region ``i`` lies around x = ``REGION_SPACING * i``, so
parts of different features never touch; a ground plane is shared by all) and returns a ``Part``:
what the invariants need to know about it (bodies resting on a surface, kinematic bodies, routed
cables and their winches, whether it is passive). Every feature takes a ``WorldParams``, so each
world of a batched model gets slightly different masses, stiffnesses, targets and commands.

``run_scene`` builds the scene of a list of features in one world per parameter set, steps it, and
checks, after every step (``check_world``):

* finite body state and tendon/transmission diagnostics;
* joints hold: joint frame origins together (revolute, ball, fixed; prismatic off its axis) and
  revolute axes aligned, within ``JOINT_TOL``/``JOINT_AXIS_TOL``; limits within ``LIMIT_TOL``;
* resting bodies stay within ``REST_TOL`` of their rest height;
* kinematic bodies follow their twist;
* routed cables: total material minus what the winches paid out is conserved (``CABLE_RTOL``); an
  inextensible cable is not stretched beyond ``STRETCH_TOL``; a length winch applies its command
  (``WINCH_ATOL``); the capstan bound ``T_tight <= exp(mu theta) T_slack`` at every active internal
  pinhole and roller (``check_capstan``);
* passive scenes (no actuator doing work, no kinematic body): the mechanical energy (``energy``)
  never exceeds its initial value by more than ``ENERGY_TOL``.

``compare_worlds`` steps the same worlds batched into one model and checks each world's ``body_q``
and ``body_qd`` bitwise against the world built alone.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

import newton_tendon as nt
from newton_tendon import TendonGuide, TendonGuideType
from newton_tendon.solvers import SolverVBD, SolverXPBD
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap
from newton_tendon.kernels.cable import REST_LENGTH_FLOOR, STIFF_REPORT_COMPLIANCE
from newton_tendon.kernels.types import JOINT_BALL, JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE

SOLVERS = {"xpbd": SolverXPBD, "vbd": SolverVBD}

DT = 1.0 / 240.0
"""Step [s]: the examples' and the fuzz tests' step."""
REGION_SPACING = 3.0
"""Distance [m] along x between the regions of two features; every part fits in +-1 m of its origin."""
GRAVITY = 9.81

ROLLER = TendonGuideType.ROLLER
PINHOLE = TendonGuideType.PINHOLE
Y = (0.0, 1.0, 0.0)

# ------------------------------------------------------------------------------------------------
# Tolerances (each invariant's bound and why)

JOINT_TOL = 1.5e-2
"""Joint frame origins [m] may drift apart by this much. The rows are solved to the residual of 8
iterations per step: a 0.5 kg XPBD pendulum on a 0.3 m arm swinging through the bottom at 2.4 m/s
opens its hinge by up to 3.7 mm (5.2 mm with a fixed tendon on it; measured over 960 steps, bounded),
VBD by < 1e-4 m. A link that leaves its joint is off by decimetres within a few steps."""
JOINT_AXIS_TOL = 1.0e-2
"""Revolute axes [rad] may tilt apart by this much (same residual argument as ``JOINT_TOL``)."""
LIMIT_TOL = 5.0e-2
"""A joint coordinate [rad or m] may pass its limit by this much. VBD's limit rows are augmented
Lagrangian rows whose penalty restarts small every step (docs/vbd.md, Rows): the light bob of
``joints`` hitting its 0.6 rad limit at 3.2 rad/s overshoots by 0.032 rad and is back within 5
steps (measured); XPBD's predictive rows stop it within one step's travel (0.013 rad)."""
REST_TOL = 5.0e-3
"""A resting body's height [m] stays within this of its rest height: contact rows leave a
penetration of ~g dt^2 (1.7e-4 m) per step, removed again; a body that falls through or is thrown
leaves this band within a few steps."""
KINEMATIC_TOL = 1.0e-6
KINEMATIC_ULPS_PER_STEP = 1.0
"""A kinematic body's position [m] may be off its exact path ``x0 + v t`` by ``KINEMATIC_TOL`` plus one
float32 ulp of its coordinates per step: each step rounds ``x + v dt`` to float32, by up to half an
ulp and with one sign while ``v dt`` is constant (measured: 3.9e-4 m after 240 steps at x = 39 m,
1.6e-6 m per step against an ulp of 3.8e-6 m)."""
CABLE_RTOL = 1.0e-5
CABLE_ATOL = 1.0e-6
"""Total material of a routed cable minus the winches' pay-out: conserved by construction
(docs/cables.md), up to float32 rounding of a few metres per step (tests/fuzz/cable_scenes.py's bound)."""
STRETCH_TOL = 2.0e-3
"""An inextensible (compliance 0) cable's geometric length may exceed its material by this much [m],
plus the step's travel ``dt v`` at the largest speed ``v`` of the cable's bodies at the step's start.
The rows leave a residual stretch of their 8 iterations: below 6e-4 m under the steady loads here
(<= 45 N), but a cable that snaps taut is stopped within the step only on XPBD; VBD's rows restart
their penalty small every step (docs/vbd.md), so the impact step keeps up to its whole travel (two
loads at 1.9 m/s stopped by a world pinhole: 8.15 mm at dt = 1/240 s, 1e-5 m a step later). A
winch that reels in without moving the cable leaves its whole command as stretch: 2.1 mm per step
at 0.5 m/s, growing."""
WINCH_ATOL = 1.0e-5
"""A length winch's applied pay-out [m] equals its command to float32 rounding of a metre."""
CAPSTAN_RTOL = 0.05
CAPSTAN_ATOL = 1.0e-2
"""Capstan bound ``T_tight <= e (T_slack + res) (1 + RTOL) + ATOL + f_w W + f_c dT`` on the tensions
the rows applied (tests/fuzz/cable_scenes.py's argument: 8-iteration residual, 1e-3 sweep tolerance, float32
resolution of compliant spans ``res``; ``W`` the weight of the world's moving bodies, ``dT`` the
step's change of the two tensions)."""
CAPSTAN_WEIGHT_FRACTION = 1.0e-3
CAPSTAN_LOAD_CHANGE_FRACTION = 1.0e-2
CAPSTAN_ULPS = 4.0
MIN_SPAN = 1.0e-3
"""Spans shorter than this [m] have no direction: no capstan check across them."""
FLOOR_ATOL = 1.0e-6
"""A slack span within this of the rest-length floor is an end stop (no material to give)."""
OVERSHOOT_TOL = 2.0e-3
"""An overdamped load may pass its static height by this much [m]: 5 % of the 39 mm it sinks in
``cable_damped``, where XPBD and VBD come within 0.2 mm of z* from above and stay there (measured).
With the damping of its upper span lost (VBD at 72040d5, issue 24's defect 4) the load swung 36 mm
below z* within 0.2 s and kept swinging."""
ENERGY_FRACTION = 2.0e-3
ENERGY_ATOL = 1.0e-3
"""Passive energy may exceed its initial value by ``ATOL + FRACTION * sum(m g 1 m)`` [J]: float32
poses of metres resolve potential energy to ~1e-6 of m g z; the implicit drives and springs and the
rigid rows only remove energy. A growth of 0.2 % of lifting every body by a metre is well above
rounding and well below any defect that feeds the scene (a link leaving its joint, a contact that
throws a body)."""


@dataclasses.dataclass
class WorldParams:
    """Per-world parameters: ``scale`` multiplies masses, stiffnesses, targets and command rates.

    World ``w`` of a batched model gets ``WorldParams.of(w)``, and the same world built alone gets the
    same object, so the two must step bitwise alike."""

    world: int
    scale: float

    @staticmethod
    def of(world: int) -> WorldParams:
        return WorldParams(world, 1.0 + 0.07 * world)


@dataclasses.dataclass
class Cable:
    """A routed cable of a part: its tendon (index in the world), first guide, route and winch commands
    (guide index in the route -> command as a function of the step)."""

    tendon: int
    guide0: int
    route: list
    length_winch: dict[int, Callable[[int], float]] = dataclasses.field(default_factory=dict)
    force_winch: dict[int, float] = dataclasses.field(default_factory=dict)

    @property
    def inextensible(self) -> bool:
        return all(g.compliance == 0.0 for g in self.route[1:])


@dataclasses.dataclass
class Part:
    """What one feature's part contributes to the invariants (indices within its world)."""

    resting: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    """(body, rest height of its origin [m]) of bodies resting on the ground or a platform."""
    kinematic: list[tuple[int, tuple]] = dataclasses.field(default_factory=list)
    """(body, twist (linear, angular)) of kinematic bodies."""
    cables: list[Cable] = dataclasses.field(default_factory=list)
    passive: bool = True
    """No actuator does work and no kinematic body moves: the mechanical energy cannot grow."""
    joint_forces: list[tuple[int, Callable[[int], float]]] = dataclasses.field(default_factory=list)
    """(dof within its world, generalized force [N m or N] as a function of the step) of driven joints."""
    overdamped: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    """(body, static height of its origin [m]) of loads released above their static height on a cable
    damped beyond critical: they sink to it without passing it (``OVERSHOOT_TOL``)."""


def ball(b: nt.ModelBuilder, pos, mass: float, radius: float = 0.05, **kw) -> int:
    """A free body at ``pos`` with a sphere shape of ``mass`` (the body's mass and inertia)."""
    body = b.add_body(xform=(*pos, 0.0, 0.0, 0.0, 1.0), **kw)
    b.add_shape_sphere(body, radius=radius, mass=mass)
    return body


def add_cable(b: nt.ModelBuilder, route, **winches) -> Cable:
    cable = Cable(b.tendon_count, b.tendon_guide_count, list(route), **winches)
    b.add_tendon(route)
    return cable


# ------------------------------------------------------------------------------------------------
# Features. Each adds its part around x = ox and returns its Part.


def cable_frictionless(b, ox, p):
    """Unequal loads over a frictionless world pinhole and a frictionless world roller; the span between
    the two (immovable) guides is compliant and damped, the others inextensible. The heavier load sinks,
    the lighter one rises and swings."""
    a = ball(b, (ox - 0.25, 0.0, 1.2), 1.0)
    c = ball(b, (ox + 0.3, 0.0, 1.2), 1.3 * p.scale)
    route = [
        TendonGuide(body=a),
        TendonGuide(body=-1, guide_type=PINHOLE, offset=(ox - 0.3, 0.0, 2.1)),
        # -x to +x over the top: counter-clockwise about +y.
        TendonGuide(
            body=-1, guide_type=ROLLER, offset=(ox + 0.2, 0.0, 2.0), axis=Y, radius=0.1, orientation=1,
            compliance=1e-4, damping=20.0,
        ),
        TendonGuide(body=c),
    ]
    return Part(cables=[add_cable(b, route)])


def cable_frictional(b, ox, p):
    """The same machine with mu 0.2 at the pinhole and 0.3 at the roller and a load ratio of 3 (more than
    the guides' exp(mu theta) product of ~2.2): the cable slips at the capstan bound."""
    a = ball(b, (ox - 0.25, 0.0, 1.2), 1.0)
    c = ball(b, (ox + 0.3, 0.0, 1.2), 3.0 * p.scale)
    route = [
        TendonGuide(body=a),
        TendonGuide(body=-1, guide_type=PINHOLE, offset=(ox - 0.3, 0.0, 2.1), mu=0.2),
        TendonGuide(body=-1, guide_type=ROLLER, offset=(ox + 0.2, 0.0, 2.0), axis=Y, radius=0.1, mu=0.3),
        TendonGuide(body=c),
    ]
    return Part(cables=[add_cable(b, route)])


def cable_dynamic_roller(b, ox, p):
    """A free body carrying a dynamic roller falls onto a straight cable (world anchor -> over a world
    roller -> a hanging load), engages it and sinks on it, lifting the load."""
    roller_body = b.add_body(xform=(ox, 0.0, 1.75, 0.0, 0.0, 0.0, 1.0), mass=0.5 * p.scale, inertia=np.eye(3) * 2e-3)
    load = ball(b, (ox + 0.7, 0.0, 0.9), 1.0)
    route = [
        TendonGuide(body=-1, offset=(ox - 0.6, 0.0, 1.6)),
        # The cable passes under the falling roller towards +x: clockwise about +y.
        TendonGuide(body=roller_body, guide_type=ROLLER, axis=Y, radius=0.08, orientation=-1, dynamic=True),
        TendonGuide(body=-1, guide_type=ROLLER, offset=(ox + 0.6, 0.0, 1.5), axis=Y, radius=0.1, orientation=1),
        TendonGuide(body=load),
    ]
    return Part(cables=[add_cable(b, route)])


DAMPED_COMPLIANCE = 1.0e-3
"""Compliance [m/N] of every span of ``cable_damped``."""
DAMPED_DAMPING = 100.0
"""Damping [N s/m] of every span of ``cable_damped`` (scaled up per world, so it stays overdamped)."""


def cable_damped(b, ox, p):
    """A 2 kg load hanging 1 m below a frictionless world pinhole on a cable from a world anchor 0.5 m
    to the side; every span compliant (``DAMPED_COMPLIANCE``) and damped (``DAMPED_DAMPING``), released
    at its unstretched pose. One tension m g runs through the pinhole and both spans stretch by c m g,
    all of it paid into the lower span (the upper one lies between fixed points and has no row of its
    own on VBD): the load sinks to z* = z0 - 2 c m g without passing it."""
    mass = 2.0
    z0 = 1.2
    span = dict(compliance=DAMPED_COMPLIANCE, damping=DAMPED_DAMPING * p.scale)
    load = ball(b, (ox, 0.0, z0), mass)
    route = [
        TendonGuide(body=-1, offset=(ox + 0.5, 0.0, z0 + 1.0)),
        TendonGuide(body=-1, guide_type=PINHOLE, offset=(ox, 0.0, z0 + 1.0), **span),
        TendonGuide(body=load, **span),
    ]
    return Part(cables=[add_cable(b, route)], overdamped=[(load, z0 - 2.0 * DAMPED_COMPLIANCE * mass * GRAVITY)])


LENGTH_WINCH_RATE = 0.5
"""Reel-in speed [m/s] of the length winch (scaled per world)."""
LENGTH_WINCH_STROKE = 0.1
"""The length winch reels in this much [m] and then holds: the load stops 5 cm below its pinhole."""


def cable_length_winch(b, ox, p):
    """A world length winch reels a load up through a frictional (mu 0.3) world pinhole over an
    inextensible cable at 0.5 m/s for 0.1 m, then holds it."""
    load = ball(b, (ox, 0.0, 1.85), 1.0 * p.scale)
    route = [
        TendonGuide(body=-1, offset=(ox - 0.5, 0.0, 2.0), winch=True),
        TendonGuide(body=-1, guide_type=PINHOLE, offset=(ox, 0.0, 2.0), mu=0.3),
        TendonGuide(body=load),
    ]
    rate = LENGTH_WINCH_RATE * p.scale

    def command(step: int) -> float:
        return -min(rate * (step + 1) * DT, LENGTH_WINCH_STROKE)

    return Part(cables=[add_cable(b, route, length_winch={0: command})], passive=False)


def cable_force_winch(b, ox, p):
    """A world force winch pulls 5 m g over a frictional (mu 0.1) world roller: the load, 3 cm below the
    roller's tangent point, is pulled into the roller by step ~10 and must stop there (its span at the
    rest-length floor is an end stop; dragged round the rim instead, the cable gains 2 pi r once the
    material wrap passes a full turn, at step ~40 on main)."""
    mass = 1.0 * p.scale
    load = ball(b, (ox + 0.1, 0.0, 1.97), mass)
    route = [
        TendonGuide(body=-1, offset=(ox - 0.5, 0.0, 2.1), winch=True, winch_force=True),
        TendonGuide(body=-1, guide_type=ROLLER, offset=(ox, 0.0, 2.0), axis=Y, radius=0.1, orientation=1, mu=0.1),
        TendonGuide(body=load),
    ]
    return Part(cables=[add_cable(b, route, force_winch={0: 5.0 * mass * GRAVITY})], passive=False)


def spatial_sites(b, ox, p):
    """A three-site spatial tendon (world -> ball -> ball) with a spring and damping; the balls sag."""
    a = ball(b, (ox + 0.2, 0.0, 1.6), 0.5)
    c = ball(b, (ox + 0.1, 0.0, 1.1), 1.0 * p.scale)
    b.add_spatial_tendon(
        [TendonSite(body=-1, offset=(ox, 0.0, 2.0)), TendonSite(body=a), TendonSite(body=c)],
        stiffness=300.0 * p.scale,
        damping=2.0,
    )
    return Part()


def spatial_sphere(b, ox, p):
    """A spatial tendon from a world site over a world sphere (the direct segment cuts it) to a
    hanging ball, sprung and damped."""
    c = ball(b, (ox + 0.4, 0.0, 1.5), 1.0 * p.scale)
    b.add_spatial_tendon(
        [
            TendonSite(body=-1, offset=(ox - 0.4, 0.0, 2.0)),
            TendonWrap(kind="sphere", body=-1, offset=(ox, 0.0, 1.85), radius=0.12),
            TendonSite(body=c),
        ],
        stiffness=300.0 * p.scale,
        damping=2.0,
    )
    return Part()


def spatial_cylinder(b, ox, p):
    """A spatial tendon over a cylinder on a hinged wheel, its side chosen by a side site above the
    wheel (the direct segment misses it below), to a hanging ball; sprung and damped."""
    wheel = b.add_link(xform=(ox, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0), mass=0.5, inertia=np.diag([2e-3, 2.5e-3, 2e-3]))
    b.add_joint_revolute(-1, wheel, parent_xform=(ox, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0), axis=Y)
    c = ball(b, (ox + 0.1, 0.0, 1.4), 1.0 * p.scale)
    b.add_spatial_tendon(
        [
            TendonSite(body=-1, offset=(ox - 0.5, 0.0, 2.1)),
            TendonWrap(
                kind="cylinder", body=wheel, axis=Y, radius=0.1, side=TendonSite(body=-1, offset=(ox, 0.0, 2.4))
            ),
            TendonSite(body=c),
        ],
        stiffness=400.0 * p.scale,
        damping=2.0,
    )
    return Part()


def spatial_pulley(b, ox, p):
    """Two hanging balls on the two branches of a spatial tendon, the second through a divisor-2 pulley
    (l = s_A + s_B / 2); nearly balanced (m_A = 2 m_B in world 0), sprung and damped."""
    a = ball(b, (ox - 0.2, 0.0, 1.4), 1.0)
    c = ball(b, (ox + 0.25, 0.0, 1.4), 0.5 * p.scale)
    b.add_spatial_tendon(
        [
            TendonSite(body=-1, offset=(ox - 0.2, 0.0, 2.0)),
            TendonSite(body=a),
            TendonPulley(divisor=2.0),
            TendonSite(body=-1, offset=(ox + 0.2, 0.0, 2.0)),
            TendonSite(body=c),
        ],
        stiffness=300.0 * p.scale,
        damping=2.0,
    )
    return Part()


def _pendulum(b, hinge, arm: float, mass: float, inertia=None) -> tuple[int, int]:
    """A body ``arm`` m along +x from a world hinge about +y, starting horizontal; returns (body, joint)."""
    if inertia is None:
        body = ball(b, (hinge[0] + arm, hinge[1], hinge[2]), mass)
    else:
        body = b.add_link(xform=(hinge[0] + arm, hinge[1], hinge[2], 0.0, 0.0, 0.0, 1.0), mass=mass, inertia=inertia)
    joint = b.add_joint_revolute(
        -1, body, parent_xform=(*hinge, 0.0, 0.0, 0.0, 1.0), child_xform=(-arm, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), axis=Y
    )
    return body, joint


def fixed_tendon(b, ox, p):
    """Two pendulums released horizontal, tied by a fixed tendon l = 0.5 q1 - 0.25 q2 with a spring
    and damping."""
    _, j1 = _pendulum(b, (ox - 0.3, 0.0, 2.0), 0.3, 0.5)
    _, j2 = _pendulum(b, (ox + 0.3, 0.0, 2.0), 0.3, 0.7 * p.scale)
    b.add_fixed_tendon([j1, j2], [0.5, -0.25], stiffness=20.0 * p.scale, damping=0.5)
    return Part()


def coupling(b, ox, p):
    """Two balls hanging from world sites by spatial tendons, tied by the rigid coupling
    l1 - l1_ref = 2 x + 0.1 x^2 (x = l2 - l2_ref); the second tendon has a damped spring."""
    a = ball(b, (ox - 0.2, 0.0, 1.4), 0.3)
    c = ball(b, (ox + 0.2, 0.0, 1.4), 1.0 * p.scale)
    t1 = b.add_spatial_tendon([TendonSite(body=-1, offset=(ox - 0.2, 0.0, 2.0)), TendonSite(body=a)])
    t2 = b.add_spatial_tendon(
        [TendonSite(body=-1, offset=(ox + 0.2, 0.0, 2.0)), TendonSite(body=c)], stiffness=200.0 * p.scale, damping=10.0
    )
    b.add_tendon_coupling(t1, t2, [0.0, 2.0, 0.1])
    return Part()


def joints(b, ox, p):
    """A driven revolute arm (PD drive to 0, released horizontal), a light bob (inertia 1e-6 kg m^2)
    hinged 1 m from its centre of mass to the arm's tip with limits +-0.6 rad, and a slider falling
    0.1 m onto its lower limit."""
    arm = ball(b, (ox + 0.25, 0.0, 2.0), 1.0)
    b.add_joint_revolute(
        -1, arm, parent_xform=(ox, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0), child_xform=(-0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        axis=Y, target_ke=30.0 * p.scale, target_kd=1.0,
    )
    bob = b.add_link(xform=(ox + 1.5, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0), mass=0.1 * p.scale, inertia=np.eye(3) * 1e-6)
    b.add_joint_revolute(
        arm, bob, parent_xform=(0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), child_xform=(-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        axis=Y, limit_lower=-0.6, limit_upper=0.6,
    )
    slider = ball(b, (ox - 0.5, 0.0, 1.5), 0.5)
    b.add_joint_prismatic(
        -1, slider, parent_xform=(ox - 0.5, 0.0, 1.5, 0.0, 0.0, 0.0, 1.0), axis=(0.0, 0.0, 1.0), limit_lower=-0.1,
        limit_upper=0.2,
    )
    return Part()


def light_link_chain(b, ox, p):
    """An articulated chain as the MJCF importer builds a body with two hinges: a 1 kg arm on a world
    hinge about +y, then at its tip a 10 g virtual link (inertia 1e-6 kg m^2) on a hinge about +x and
    a 0.5 kg forearm on a hinge about +y at the same point, released horizontal with the forearm
    turned 0.4 rad about z (issue 43: light links between the joints of one body)."""
    arm = ball(b, (ox - 0.2, 0.0, 2.0), 1.0 * p.scale)
    b.add_joint_revolute(
        -1,
        arm,
        parent_xform=(ox - 0.45, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0),
        child_xform=(-0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        axis=Y,
    )
    virtual = b.add_link(xform=(ox + 0.05, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0), mass=0.01, inertia=np.eye(3) * 1e-6)
    b.add_joint_revolute(
        arm,
        virtual,
        parent_xform=(0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        child_xform=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        axis=(1.0, 0.0, 0.0),
    )
    turn = (0.0, 0.0, np.sin(0.2), np.cos(0.2))
    tip = (ox + 0.05 + 0.3 * np.cos(0.4), 0.3 * np.sin(0.4), 2.0)
    forearm = b.add_link(xform=(*tip, *turn), mass=0.5, inertia=np.eye(3) * 4e-3)
    b.add_joint_revolute(
        virtual, forearm, parent_xform=(0.0, 0.0, 0.0, *turn), child_xform=(-0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        axis=Y,
    )
    return Part()


def random_actions(b, ox, p):
    """What a policy does on its first day: a two-link arm (world hinge about +y, elbow about +y with
    limits +-1.5 rad) whose motors take joint forces uniform in +-4 N m (shoulder) and +-2 N m (elbow),
    drawn anew every 12 steps (0.05 s) from a generator seeded by the world (issue 43)."""
    upper = ball(b, (ox + 0.2, 0.0, 2.0), 0.8 * p.scale)
    shoulder = b.joint_dof_count
    b.add_joint_revolute(
        -1,
        upper,
        parent_xform=(ox, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0),
        child_xform=(-0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        axis=Y,
    )
    lower = b.add_link(xform=(ox + 0.6, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0), mass=0.3, inertia=np.eye(3) * 2e-3)
    elbow = b.joint_dof_count
    b.add_joint_revolute(
        upper,
        lower,
        parent_xform=(0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        child_xform=(-0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        axis=Y,
        limit_lower=-1.5,
        limit_upper=1.5,
    )
    draws = np.random.default_rng(43 + p.world).uniform(-1.0, 1.0, (64, 2))

    def command(column: int, peak: float):
        return lambda step: float(peak * draws[(step // 12) % len(draws), column])

    return Part(joint_forces=[(shoulder, command(0, 4.0)), (elbow, command(1, 2.0))], passive=False)


def resting(b, ox, p):
    """A sphere, a box and a capsule (lying along x) resting on the ground, touching it at rest."""
    s = b.add_body(xform=(ox - 0.5, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_sphere(s, radius=0.1, mass=1.0 * p.scale)
    box = b.add_body(xform=(ox, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, mass=2.0)
    cap = b.add_body(xform=(ox + 0.5, 0.0, 0.08, 0.0, 0.0, 0.0, 1.0))
    # The capsule's segment is along local z; turn it onto x (90 degrees about y).
    b.add_shape_capsule(cap, xform=(0.0, 0.0, 0.0, 0.0, 0.7071068, 0.0, 0.7071068), radius=0.08, half_height=0.15,
                        mass=1.5)
    return Part(resting=[(s, 0.1), (box, 0.1), (cap, 0.08)])


def kinematic(b, ox, p):
    """A kinematic platform sliding along x at 0.2 m/s carrying a free box (friction drags it along), and
    a kinematic ball spinning about z."""
    v = (0.2 * p.scale, 0.0, 0.0, 0.0, 0.0, 0.0)
    plat = b.add_body(xform=(ox, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0), mass=5.0, inertia=np.eye(3), is_kinematic=True,
                      velocity=v)
    b.add_shape_box(plat, hx=0.4, hy=0.3, hz=0.05)
    box = b.add_body(xform=(ox, 0.0, 0.65, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, mass=1.0)
    w = (0.0, 0.0, 0.0, 0.0, 0.0, 1.5 * p.scale)
    spin = b.add_body(xform=(ox, 0.0, 1.5, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 1e-2,
                      is_kinematic=True, velocity=w)
    b.add_shape_sphere(spin, radius=0.1)
    return Part(resting=[(box, 0.65)], kinematic=[(plat, v), (spin, w)], passive=False)


FEATURES: dict[str, Callable] = {
    "cable_frictionless": cable_frictionless,
    "cable_frictional": cable_frictional,
    "cable_dynamic_roller": cable_dynamic_roller,
    "cable_damped": cable_damped,
    "cable_length_winch": cable_length_winch,
    "cable_force_winch": cable_force_winch,
    "spatial_sites": spatial_sites,
    "spatial_sphere": spatial_sphere,
    "spatial_cylinder_side": spatial_cylinder,
    "spatial_pulley": spatial_pulley,
    "fixed_tendon": fixed_tendon,
    "coupling": coupling,
    "joints": joints,
    "light_link_chain": light_link_chain,
    "random_actions": random_actions,
    "resting": resting,
    "kinematic": kinematic,
}
"""The table: feature name -> builder function. The region of a feature is its position in the table."""
REGION = {name: i for i, name in enumerate(FEATURES)}


# ------------------------------------------------------------------------------------------------
# Building and stepping


def build_world(features, params: WorldParams) -> tuple[nt.ModelBuilder, list[Part]]:
    """One world's builder with every feature's part, and the parts."""
    b = nt.ModelBuilder()
    parts = [FEATURES[name](b, REGION_SPACING * REGION[name], params) for name in features]
    return b, parts


class Scene:
    """A model of one world per entry of ``worlds`` (parameter sets ``WorldParams.of(w)``), on a shared
    ground plane, with its solver, contacts, states and the winch commands of every world."""

    def __init__(self, features, worlds, solver: str, device):
        scene = nt.ModelBuilder()
        scene.add_ground_plane()
        self.worlds = list(worlds)
        self.parts = []
        counts = None
        for w in self.worlds:
            b, parts = build_world(features, WorldParams.of(w))
            c = (b.body_count, b.tendon_guide_count, b.tendon_count, b.joint_dof_count)
            assert counts in (None, c), "worlds differ in structure"
            counts = c
            self.parts.append(parts)
            scene.add_world(b)
        self.body_count, self.guide_count, self.tendon_count, dof_count = counts
        if solver == "vbd":
            scene.color()
        self.model = scene.finalize(device)
        self.solver = SOLVERS[solver](self.model)
        self.pipeline = nt.CollisionPipeline(self.model)
        self.contacts = self.pipeline.contacts()
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        self.control = self.model.control()
        self.length_winches = [
            (k * self.guide_count + cable.guide0 + g, cmd)
            for k, parts in enumerate(self.parts)
            for part in parts
            for cable in part.cables
            for g, cmd in cable.length_winch.items()
        ]
        force = self.control.tendon_guide_winch_force.numpy()
        for k, parts in enumerate(self.parts):
            for part in parts:
                for cable in part.cables:
                    for g, f in cable.force_winch.items():
                        force[k * self.guide_count + cable.guide0 + g] = f
        if self.model.tendon_guide_count:
            self.control.tendon_guide_winch_force.assign(force)
        self._winch_cmd = np.zeros(self.model.tendon_guide_count, dtype=np.float32)
        self.joint_forces = [
            (k * dof_count + dof, cmd)
            for k, parts in enumerate(self.parts)
            for part in parts
            for dof, cmd in part.joint_forces
        ]
        self._joint_f = np.zeros(self.model.joint_dof_count, dtype=np.float32)

    def step(self, step: int):
        if self.joint_forces:
            for dof, cmd in self.joint_forces:
                self._joint_f[dof] = cmd(step)
            self.control.joint_f.assign(self._joint_f)
        if self.length_winches:
            for g, cmd in self.length_winches:
                self._winch_cmd[g] = cmd(step)
            self.control.tendon_guide_winch_length.assign(self._winch_cmd)
        self.pipeline.collide(self.state_0, self.contacts)
        self.solver.step(self.state_0, self.state_1, self.control, self.contacts, DT)
        self.state_0, self.state_1 = self.state_1, self.state_0


# ------------------------------------------------------------------------------------------------
# Invariants


class InvariantError(AssertionError):
    pass


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v`` [..., 3] by unit quaternions ``q`` [..., 4] (xyzw)."""
    u, w = q[..., :3], q[..., 3:]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    av, aw = a[..., :3], a[..., 3:]
    bv, bw = b[..., :3], b[..., 3:]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), aw * bw - np.sum(av * bv, -1, keepdims=True)], -1)


def frames(body_q: np.ndarray, body: np.ndarray, xf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World positions and rotations of the frames ``xf`` [n, 7] on ``body`` [n] (-1: the world)."""
    pose = np.where((body >= 0)[:, None], body_q[np.maximum(body, 0)], np.array([0.0] * 6 + [1.0]))
    return pose[:, :3] + quat_rotate(pose[:, 3:], xf[:, :3]), quat_mul(pose[:, 3:], xf[:, 3:])


class Checker:
    """The per-step invariants of every world of a ``Scene`` (worlds share one structure, so the
    entities of world ``k`` are block ``k`` of each array)."""

    def __init__(self, scene: Scene):
        self.scene = scene
        m = scene.model
        W = self.W = len(scene.worlds)
        self.nb, self.ng, self.nt = scene.body_count, scene.guide_count, scene.tendon_count
        self.ns = self.ng - self.nt
        self.ntx = m.transmission_count // W
        self.parts = scene.parts
        self.passive = all(part.passive for part in scene.parts[0])
        self.q0 = m.body_q.numpy().astype(np.float64)
        mass = m.body_mass.numpy().astype(np.float64)
        self.moving = np.flatnonzero((mass > 0.0) & (m.body_flags.numpy() == 0))
        self.mass = mass[self.moving]
        self.inertia = m.body_inertia.numpy().astype(np.float64)[self.moving]
        self.com = m.body_com.numpy().astype(np.float64)[self.moving]
        self.moving_world = self.moving // self.nb
        self.gravity = m.gravity.numpy().astype(np.float64)[self.moving_world]
        self.weight = np.bincount(self.moving_world, GRAVITY * self.mass, minlength=W)
        self.energy_tol = ENERGY_ATOL + ENERGY_FRACTION * self.weight * 1.0
        self.labels = m.body_label
        # Joints
        self.nj = m.joint_count
        if self.nj:
            self.joint_type = m.joint_type.numpy()
            self.joint_parent = m.joint_parent.numpy()
            self.joint_child = m.joint_child.numpy()
            self.joint_X_p = m.joint_X_p.numpy().astype(np.float64)
            self.joint_X_c = m.joint_X_c.numpy().astype(np.float64)
            qd_start = m.joint_qd_start.numpy()[: self.nj]
            q_start = m.joint_q_start.numpy()[: self.nj]
            axis = m.joint_axis.numpy().astype(np.float64) if m.joint_dof_count else np.zeros((1, 3))
            self.hinge = np.isin(self.joint_type, (JOINT_REVOLUTE, JOINT_PRISMATIC))
            self.hinge_dof = qd_start[self.hinge]
            self.hinge_coord = q_start[self.hinge]
            self.joint_axis = np.zeros((self.nj, 3))
            self.joint_axis[self.hinge] = axis[self.hinge_dof]
            self.anchored = np.isin(self.joint_type, (JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_BALL, JOINT_FIXED))
            self.limit_lower = m.joint_limit_lower.numpy().astype(np.float64)[self.hinge_dof]
            self.limit_upper = m.joint_limit_upper.numpy().astype(np.float64)[self.hinge_dof]
            self.ke = m.joint_target_ke.numpy().astype(np.float64)[self.hinge_dof]
            self.target = m.joint_target_pos.numpy().astype(np.float64)[self.hinge_dof]
            self.hinge_world = m.joint_world.numpy()[self.hinge]
        # Cables and resting/kinematic bodies, with indices of the whole model.
        self.cables = []  # (world, Cable, tendon, first guide)
        self.resting = []  # (world, body, rest z)
        self.kinematic = []  # (world, body, twist)
        self.overdamped = []  # (world, body, static z)
        for k, parts in enumerate(scene.parts):
            for part in parts:
                self.cables += [(k, c, k * self.nt + c.tendon, k * self.ng + c.guide0) for c in part.cables]
                self.resting += [(k, k * self.nb + b, z) for b, z in part.resting]
                self.kinematic += [(k, k * self.nb + b, tw) for b, tw in part.kinematic]
                self.overdamped += [(k, k * self.nb + b, z) for b, z in part.overdamped]
        self.fixed_bodies = {-1} | {b for _, b, _ in self.kinematic}
        self.cable0 = {}
        self.applied_before = np.zeros(m.tendon_segment_count)
        self.energy0 = None
        self.capstan_checks = 0
        self.log = {"max_capstan_ratio": 0.0, "max_joint_error": 0.0, "max_rest_error": 0.0, "max_stretch": 0.0,
                    "max_cable_drift": 0.0, "max_energy_growth": -np.inf}

    # -- energy ---------------------------------------------------------------------------------
    def energy(self, with_cables: bool = True) -> np.ndarray:
        """Mechanical energy [J] per world: kinetic + gravitational energy of the moving bodies, the
        spring (and armature) energy of transmission tendons, ke (q - q_target)^2 / 2 of joint drives
        and c T^2 / 2 of taut compliant cable spans."""
        sc, sv, m, W = self.scene, self.scene.solver, self.scene.model, self.W
        q = sc.state_0.body_q.numpy().astype(np.float64)[self.moving]
        qd = sc.state_0.body_qd.numpy().astype(np.float64)[self.moving]
        x = q[:, :3] + quat_rotate(q[:, 3:], self.com)
        wb = quat_rotate(q[:, 3:] * np.array([-1.0, -1.0, -1.0, 1.0]), qd[:, 3:])
        e_body = (
            0.5 * self.mass * np.sum(qd[:, :3] ** 2, 1)
            + 0.5 * np.einsum("ni,nij,nj->n", wb, self.inertia, wb)
            - self.mass * np.sum(self.gravity * x, 1)
        )
        e = np.bincount(self.moving_world, e_body, minlength=W)
        if m.transmission_count:
            pe = sv.transmission_potential_energy.numpy().astype(np.float64)
            ke = sv.transmission_kinetic_energy.numpy().astype(np.float64)
            e += (pe + ke).reshape(W, self.ntx).sum(1)
        if self.nj and np.any(self.ke > 0.0):
            jq = nt.eval_joint_coordinates(m, sc.state_0)[0].numpy().astype(np.float64)
            e += np.bincount(self.hinge_world, 0.5 * self.ke * (jq[self.hinge_coord] - self.target) ** 2, minlength=W)
        if m.tendon_segment_count and with_cables:
            comp = sv.tendon_segment_active_compliance.numpy().astype(np.float64)
            ten = sv.tendon_segment_material_tension.numpy().astype(np.float64)
            soft = (sv.tendon_segment_active.numpy() != 0) & (comp > STIFF_REPORT_COMPLIANCE)
            e += np.where(soft, 0.5 * comp * np.maximum(ten, 0.0) ** 2, 0.0).reshape(W, self.ns).sum(1)
        return e

    def start(self):
        """Record the initial energy (before the first step; cable spans start at their rest length)."""
        if self.scene.model.transmission_count:
            self.scene.solver.update_geometry(self.scene.state_0)
        self.energy0 = self.energy(with_cables=False)

    # -- the per-step checks --------------------------------------------------------------------
    def fail(self, step: int, world: int, what: str, detail: str):
        raise InvariantError(f"world {world} of {self.W} (parameters {self.scene.worlds[world]}), step {step}: "
                             f"{what}: {detail}")

    def check(self, step: int, paid_before: np.ndarray, rest_before: np.ndarray, qd_before: np.ndarray | None = None):
        """Every invariant after step ``step``; ``*_before``: the winches' pay-out, the span rest lengths
        and the body velocities at the step's start."""
        sc, sv = self.scene, self.scene.solver
        q = sc.state_0.body_q.numpy().astype(np.float64)
        qd = sc.state_0.body_qd.numpy().astype(np.float64)
        arrays = {"body_q": q, "body_qd": qd}
        for name in ("tendon_segment_material_tension", "tendon_total_cable", "tendon_length", "transmission_length",
                     "transmission_force", "coupling_force"):
            a = getattr(sv, name, None)
            if a is not None and a.size:
                arrays[name] = a.numpy()
        bad = sorted(name for name, a in arrays.items() if not np.all(np.isfinite(a)))
        if bad:
            world = int(np.flatnonzero(~np.all(np.isfinite(q.reshape(self.W, -1)), 1))[0]) if "body_q" in bad else 0
            self.fail(step, world, "non-finite state", bad)
        if self.nj:
            self._check_joints(step, q)
        for k, body, z in self.resting:
            err = abs(q[body, 2] - z)
            self.log["max_rest_error"] = max(self.log["max_rest_error"], err)
            if err > REST_TOL:
                self.fail(step, k, f"resting body {self.labels[body]} left its rest height",
                          f"z = {q[body, 2]:.6g} m, rest {z:.6g} m (tol {REST_TOL} m)")
        for k, body, z in self.overdamped:
            if q[body, 2] < z - OVERSHOOT_TOL:
                self.fail(step, k, f"overdamped load {self.labels[body]} passed its static height",
                          f"z = {q[body, 2]:.6g} m, static {z:.6g} m (tol {OVERSHOOT_TOL} m)")
        t = (step + 1) * DT
        for k, body, twist in self.kinematic:
            x = self.q0[body, :3] + np.asarray(twist[:3]) * t
            err = np.abs(q[body, :3] - x).max()
            ulp = np.finfo(np.float32).eps * max(1.0, np.abs(x).max())
            if err > KINEMATIC_TOL + KINEMATIC_ULPS_PER_STEP * (step + 1) * ulp:
                self.fail(step, k, f"kinematic body {self.labels[body]} left its path", f"at {q[body, :3]}, not {x}")
        if self.cables:
            self._check_cables(step, paid_before, rest_before, qd_before)
        if self.passive:
            growth = self.energy() - self.energy0
            self.log["max_energy_growth"] = max(self.log["max_energy_growth"], float(growth.max()))
            for k in np.flatnonzero(growth > self.energy_tol):
                self.fail(step, int(k), "passive energy grew",
                          f"{self.energy0[k] + growth[k]:.6g} J from {self.energy0[k]:.6g} J (+{growth[k]:.3g} J, "
                          f"tol {self.energy_tol[k]:.3g} J)")

    def _check_joints(self, step, q):
        pp, pq = frames(q, self.joint_parent, self.joint_X_p)
        cp, cq = frames(q, self.joint_child, self.joint_X_c)
        d = cp - pp
        axis_p = quat_rotate(pq, self.joint_axis)
        slide = self.joint_type == JOINT_PRISMATIC
        d[slide] -= np.sum(d[slide] * axis_p[slide], 1, keepdims=True) * axis_p[slide]
        err = np.where(self.anchored, np.linalg.norm(d, axis=1), 0.0)
        self.log["max_joint_error"] = max(self.log["max_joint_error"], float(err.max()))
        labels = self.scene.model.joint_label
        if err.max() > JOINT_TOL:
            j = int(err.argmax())
            self.fail(step, j // (self.nj // self.W), f"joint {labels[j]} came apart",
                      f"frames {err[j]:.4g} m apart (tol {JOINT_TOL} m)")
        rev = self.joint_type == JOINT_REVOLUTE
        if rev.any():
            axis_c = quat_rotate(cq, self.joint_axis)
            cos = np.abs(np.sum(axis_p * axis_c, 1)) / np.maximum(
                np.linalg.norm(axis_p, axis=1) * np.linalg.norm(axis_c, axis=1), 1e-30)
            tilt = np.where(rev, np.arccos(np.minimum(cos, 1.0)), 0.0)
            if tilt.max() > JOINT_AXIS_TOL:
                j = int(tilt.argmax())
                self.fail(step, j // (self.nj // self.W), f"joint {labels[j]} axis tilted",
                          f"{tilt[j]:.4g} rad (tol {JOINT_AXIS_TOL} rad)")
        if np.any(np.isfinite(self.limit_lower) | np.isfinite(self.limit_upper)):
            x = nt.eval_joint_coordinates(self.scene.model, self.scene.state_0)[0].numpy().astype(np.float64)
            x = x[self.hinge_coord]
            out = (x < self.limit_lower - LIMIT_TOL) | (x > self.limit_upper + LIMIT_TOL)
            if out.any():
                i = int(np.flatnonzero(out)[0])
                j = int(np.flatnonzero(self.hinge)[i])
                self.fail(step, int(self.hinge_world[i]), f"joint {labels[j]} passed its limit",
                          f"q = {x[i]:.4g} outside [{self.limit_lower[i]:.4g}, {self.limit_upper[i]:.4g}] "
                          f"(tol {LIMIT_TOL})")

    def _check_cables(self, step, paid_before, rest_before, qd_before):
        sc, sv, m = self.scene, self.scene.solver, self.scene.model
        total = sv.tendon_total_cable.numpy().astype(np.float64)
        length = sv.tendon_length.numpy().astype(np.float64)
        paid = sc.state_0.tendon_guide_winch_paid.numpy().astype(np.float64)
        applied = applied_tension(sv)
        diag = CableDiagnostics(sc)
        for k, cable, t, g0 in self.cables:
            n = len(cable.route)
            label = m.tendon_label[t]
            net = total[t] - float(paid[g0 : g0 + n].sum())
            ref = self.cable0.setdefault(t, net)
            self.log["max_cable_drift"] = max(self.log["max_cable_drift"], abs(net - ref) / abs(ref))
            if abs(net - ref) > CABLE_RTOL * abs(ref) + CABLE_ATOL:
                self.fail(step, k, f"cable {label} not conserved",
                          f"material - paid out = {net!r} m, was {ref!r} m ({net - ref:+.3g} m)")
            if cable.inextensible:
                stretch = length[t] - total[t]
                self.log["max_stretch"] = max(self.log["max_stretch"], stretch)
                bodies = [k * self.nb + g.body for g in cable.route if g.body >= 0]
                speed = float(np.linalg.norm(qd_before[bodies, :3], axis=1).max()) if bodies else 0.0
                tol = STRETCH_TOL + DT * speed
                if stretch > tol:
                    self.fail(step, k, f"inextensible cable {label} stretched",
                              f"length {length[t]:.6g} m, material {total[t]:.6g} m (+{stretch:.3g} m, "
                              f"tol {tol:.3g} m)")
            for g, cmd in cable.length_winch.items():
                gg = g0 + g
                c = cmd(step)
                if abs(paid[gg] - c) <= WINCH_ATOL * max(1.0, abs(c)):
                    continue
                # Only a reel-in can fall short, and only at the rest-length floor of the winch's span
                # (docs/cables.md, Winches): the first or the last span of the route.
                s = (g0 - t) + (0 if g == 0 else n - 2)
                left = rest_before[s] + (paid[gg] - paid_before[gg])
                if not (c < paid[gg] <= paid_before[gg] + WINCH_ATOL and left <= REST_LENGTH_FLOOR + FLOOR_ATOL):
                    self.fail(step, k, f"length winch of {label} fell behind",
                              f"paid out {paid[gg]:.6g} m, commanded {c:.6g} m, {left:.3g} m left in its span")
            check_capstan(self, step, k, cable, t, g0, applied, diag)
        self.applied_before = applied


class CableDiagnostics:
    """The solver's span and guide diagnostics after a step, read once for all cables."""

    def __init__(self, scene: Scene):
        sv = scene.solver
        self.rest = scene.state_0.tendon_segment_rest_length.numpy().astype(np.float64)
        self.active = sv.tendon_segment_active.numpy()
        self.gl = sv.tendon_segment_active_guide_l.numpy()
        self.gr = sv.tendon_segment_active_guide_r.numpy()
        self.wrap = sv.tendon_guide_wrap.numpy().astype(np.float64)
        self.gactive = sv.tendon_guide_active.numpy()
        self.xl = sv.tendon_segment_attachment_l.numpy().astype(np.float64)
        self.xr = sv.tendon_segment_attachment_r.numpy().astype(np.float64)
        self.comp = sv.tendon_segment_active_compliance.numpy().astype(np.float64)


def applied_tension(solver) -> np.ndarray:
    """Tension [N] each span's row applied in the step (XPBD: lambda / dt^2; VBD: its last sweep's
    tension, ``_tendon_work.lam`` = T dt^2); the capstan bound holds on these (tests/fuzz/cable_scenes.py)."""
    lam = solver._tendon_lambda if isinstance(solver, SolverXPBD) else solver._tendon_work.lam
    return lam.numpy().astype(np.float64) / (DT * DT)


def check_capstan(checker: Checker, step: int, world: int, cable: Cable, t: int, g0: int, applied, d):
    """T_tight <= exp(mu theta) T_slack at each active internal pinhole or roller of ``cable``, on the
    tensions the rows applied (tests/fuzz/cable_scenes.py's ``check_capstan``, for one of several tendons).

    A span whose two guides cannot move (world or kinematic) reports no cable tension; an inextensible
    one passes material straight through (docs/cables.md), so across a chain of them the movable spans
    on either side are compared with the product of the guides' ratios; a compliant one ends the check.
    Skipped: pairs with a span shorter than MIN_SPAN (no direction) and a slack side at the rest-length
    floor (an end stop)."""
    route, n = cable.route, len(cable.route)
    s0 = g0 - t  # the tendon's first segment
    segs = range(s0, s0 + n - 1)
    nb = checker.nb
    fixed = checker.fixed_bodies

    def body(g):
        b = route[g - g0].body
        return b if b < 0 else world * nb + b

    def immovable(s):
        a, b = body(d.gl[s]), body(d.gr[s])
        return a == b or (a in fixed and b in fixed)

    def transmits(gg):
        g = gg - g0
        return 0 < g < n - 1 and route[g].guide_type != TendonGuideType.ANCHOR and d.gactive[gg]

    def ratio(gg):
        return math.exp(min(route[gg - g0].mu * max(d.wrap[gg], 0.0), 60.0))

    def span_in(gg):
        (s,) = [s for s in segs if d.active[s] and d.gr[s] == gg]
        return s

    def span_out(gg):
        (s,) = [s for s in segs if d.active[s] and d.gl[s] == gg]
        return s

    for gg in range(g0 + 1, g0 + n - 1):
        if not transmits(gg):
            continue
        a = span_in(gg)
        if immovable(a):
            continue
        e, b = ratio(gg), span_out(gg)
        spans, guides = [a, b], [gg - g0]
        while b is not None and immovable(b) and d.comp[b] == 0.0:
            h = d.gr[b]
            if not transmits(h):
                b = None
                break
            e *= ratio(h)
            guides.append(h - g0)
            b = span_out(h)
            spans.append(b)
        if b is None or immovable(b):
            continue
        if min(np.linalg.norm(d.xr[s] - d.xl[s]) for s in spans) < MIN_SPAN:
            continue
        ta, tb = max(applied[a], 0.0), max(applied[b], 0.0)
        tight, slack = max(ta, tb), min(ta, tb)
        if d.rest[a if ta < tb else b] <= REST_LENGTH_FLOOR + FLOOR_ATOL:
            continue
        resolution = 0.0
        for s in (a, b):
            if d.comp[s] > STIFF_REPORT_COMPLIANCE:
                scale = max(np.abs(d.xl[s]).max(), np.abs(d.xr[s]).max(), 1.0)
                resolution += CAPSTAN_ULPS * np.finfo(np.float32).eps * scale / d.comp[s]
        atol = CAPSTAN_ATOL + CAPSTAN_WEIGHT_FRACTION * checker.weight[world]
        atol += CAPSTAN_LOAD_CHANGE_FRACTION * max(abs(applied[s] - checker.applied_before[s]) for s in (a, b))
        checker.capstan_checks += 1
        checker.log["max_capstan_ratio"] = max(checker.log["max_capstan_ratio"], tight / max(e * slack, 1e-30))
        if tight > e * (slack + resolution) * (1.0 + CAPSTAN_RTOL) + atol:
            label = checker.scene.model.tendon_label[t]
            checker.fail(step, world, f"capstan bound violated at guides {guides} of {label}",
                         f"tensions {ta:.6g} / {tb:.6g} N, exp(mu theta) over the guides {e:.5g} "
                         f"(wraps {[round(float(d.wrap[g0 + g]), 4) for g in guides]} rad)")


def step_checked(scene: Scene, steps: int) -> dict:
    """Step ``scene`` ``steps`` times, checking every invariant of every world after each step; returns
    the checker's log (largest errors seen)."""
    checker = Checker(scene)
    checker.start()
    has_cables = scene.model.tendon_count > 0
    paid_before = rest_before = qd_before = None
    for step in range(steps):
        if has_cables:
            paid_before = scene.state_0.tendon_guide_winch_paid.numpy().astype(np.float64)
            rest_before = scene.state_0.tendon_segment_rest_length.numpy().astype(np.float64)
            qd_before = scene.state_0.body_qd.numpy().astype(np.float64)
        scene.step(step)
        checker.check(step, paid_before, rest_before, qd_before)
    return checker.log


def step_plain(scene: Scene, steps: int) -> Scene:
    for step in range(steps):
        scene.step(step)
    return scene


def compare_worlds(batched: Scene, alone: dict[int, Scene]) -> list[str]:
    """Each world of ``batched`` against the same world stepped alone: one line per world whose
    ``body_q``/``body_qd`` differ in any bit, with the largest difference."""
    out = []
    nb = batched.body_count
    q = batched.state_0.body_q.numpy()
    qd = batched.state_0.body_qd.numpy()
    for k, w in enumerate(batched.worlds):
        ref = alone[w]
        rq, rqd = ref.state_0.body_q.numpy(), ref.state_0.body_qd.numpy()
        bq, bqd = q[k * nb : (k + 1) * nb], qd[k * nb : (k + 1) * nb]
        if not (np.array_equal(bq, rq) and np.array_equal(bqd, rqd)):
            with np.errstate(invalid="ignore"):
                dq = float(np.nanmax(np.abs(bq.astype(np.float64) - rq), initial=0.0))
                dqd = float(np.nanmax(np.abs(bqd.astype(np.float64) - rqd), initial=0.0))
            out.append(f"world {k} of {len(batched.worlds)} (parameters {w}) differs from it built alone: "
                       f"max |body_q diff| {dq:.3g}, max |body_qd diff| {dqd:.3g}")
    return out
