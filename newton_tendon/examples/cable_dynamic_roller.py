"""A kinematic roller pushed up through a taut cable and back down: dynamic routing.

What it shows: a compliant cable between two world anchors, with a ``dynamic=True`` ROLLER
between them on a kinematic body. The body starts below the cable, rises through it (its velocity
is set in ``state.body_qd`` every frame; kinematic bodies follow it), then goes back down. The
solver engages the roller when it touches the straight bypass span from the winding side
(``orientation``), wraps the cable over it while it is pushed up, and releases it once it clears
the cable again.

Physics checked (``test_final``):

* the roller is part of the route while it is pushed into the cable and bypassed once it has
  moved away again (``solver.tendon_guide_active``);
* the cable material ``solver.tendon_total_cable`` is conserved through engage and release
  (1e-5 relative);
* the frictionless roller leaves one tension on both spans, equal to the stretch of the whole
  cable over its series compliance, ``(tendon_length - tendon_total_cable) / (c1 + c2)``.

Run:
    python -m newton_tendon.examples.cable_dynamic_roller --frames 150
    python -m newton_tendon.examples.cable_dynamic_roller --frames 150 --solver vbd
    python -m newton_tendon.examples.cable_dynamic_roller --frames 150 --worlds 64 --device cuda:0
"""

from __future__ import annotations

import numpy as np

from ._common import CableExample, parse_example_args

ANCHOR_L = (-1.0, 0.0, 1.0)
"""Left world anchor [m]."""
ANCHOR_R = (1.0, 0.0, 1.0)
"""Right world anchor [m]; the cable starts straight (and unstretched) between the two."""
COMPLIANCE = 1.0e-3
"""Compliance of each of the two spans [m/N]."""
RADIUS = 0.1
"""Roller radius [m]."""
START_Z = 0.7
"""Initial roller centre height [m], 0.3 m below the cable."""
SPEED = 0.5
"""Roller speed [m/s]: up for RISE_TIME, then down for RISE_TIME, then at rest."""
RISE_TIME = 1.0
"""Duration [s] of the upward and of the downward motion (the centre peaks at 1.2 m)."""


def roller_velocity(t: float) -> float:
    """Prescribed vertical velocity [m/s] of the roller body at time t [s]."""
    if t < RISE_TIME:
        return SPEED
    if t < 2.0 * RISE_TIME:
        return -SPEED
    return 0.0


class Example(CableExample):
    """A dynamic roller rising through a cable and retreating, replicated into ``world_count`` worlds.

    Constructed as ``Example(device=None, world_count=1, solver="xpbd")``, see :class:`CableExample`.
    """

    name = "cable_dynamic_roller"
    spacing = (3.0, 1.0, 0.0)

    def build_world(self, nt):
        world = nt.ModelBuilder()
        pusher = world.add_body(
            xform=(0.0, 0.0, START_Z, 0, 0, 0, 1),
            mass=1.0,
            inertia=np.eye(3) * 1.0e-3,
            is_kinematic=True,
            label="pusher",
        )
        world.add_tendon(
            [
                nt.TendonGuide(body=-1, offset=ANCHOR_L),
                # Axis +Y; pushed up from below, the cable goes over the top from -X to +X:
                # counter-clockwise about +Y, orientation +1.
                nt.TendonGuide(
                    body=pusher,
                    guide_type=nt.TendonGuideType.ROLLER,
                    axis=(0.0, 1.0, 0.0),
                    radius=RADIUS,
                    orientation=1,
                    dynamic=True,
                    compliance=COMPLIANCE,
                ),
                nt.TendonGuide(body=-1, offset=ANCHOR_R, compliance=COMPLIANCE),
            ],
            label="cable",
        )
        self.pusher = self.per_world(world, pusher)
        return world

    def setup(self, nt):
        self.roller = self.model.tendon_start.numpy()[:-1] + 1
        """Dynamic roller guide index per world."""
        self.body_qd = self.state_0.body_qd.numpy()
        self.history: list[dict] = []
        """Per frame: roller height [m], roller active, cable material and length [m], tensions [N]."""

    def before_frame(self):
        """Set the roller's velocity for this frame."""
        # The velocity is sampled at the middle of the frame, so up and down legs cancel exactly.
        self.body_qd[self.pusher, 2] = roller_velocity(self.sim_time + 0.5 * self.frame_dt)
        self.state_0.body_qd.assign(self.body_qd)

    def after_frame(self):
        """Record the route after each frame."""
        s = self.solver
        self.history.append(
            {
                "t": self.sim_time,
                "z": self.state_0.body_q.numpy().astype(np.float64)[self.pusher, 2],
                "active": s.tendon_guide_active.numpy()[self.roller],
                "cable": s.tendon_total_cable.numpy().astype(np.float64),
                "length": s.tendon_length.numpy().astype(np.float64),
                "tension": s.tendon_segment_material_tension.numpy().astype(np.float64).reshape(self.world_count, 2),
                "seg_active": s.tendon_segment_active.numpy().reshape(self.world_count, 2).copy(),
            }
        )

    def test_final(self):
        """Roller engaged while pushed in, released afterwards; material conserved; one tension."""
        assert self.sim_time > 2.0 * RISE_TIME, "run until the roller has gone back down (> 2 s, 121 frames)"
        z = np.stack([h["z"] for h in self.history])
        active = np.stack([h["active"] for h in self.history])
        cable = np.stack([h["cable"] for h in self.history])
        length = np.stack([h["length"] for h in self.history])
        tension = np.stack([h["tension"] for h in self.history])
        seg_active = np.stack([h["seg_active"] for h in self.history])
        # Contact height: the roller touches the straight cable when its centre is RADIUS below it.
        # The activation gap (tendon_activation_tol = 2e-3 of the radius, 0.2 mm) and one frame of
        # travel (8 mm) fit in the 2 cm margins on both sides.
        touch = ANCHOR_L[2] - RADIUS
        pushed = z > touch + 0.02
        clear = z < touch - 0.02
        assert pushed.any() and clear.any()
        assert np.all(active[pushed] == 1), "the roller was bypassed while pushed into the cable"
        assert np.all(active[clear] == 0), "the roller was part of the route while clear of the cable"
        assert np.all(active[-1] == 0), "the roller did not release"
        np.testing.assert_allclose(z[-1], START_Z, atol=1.0e-4)
        # Engage and release move material between spans and arc by construction (exact up to
        # float32 rounding of ~2 m, 1e-7 relative); 1e-5 fails for any real loss or gain.
        np.testing.assert_allclose(cable, cable[:1].repeat(len(cable), 0), rtol=1.0e-5)
        # Frictionless roller: both spans share one tension, equal to the total stretch (geometric
        # length minus material) over the series compliance. The tension is up to ~45 N from a
        # ~9 cm stretch; float32 lengths resolve ~2e-7 m = 2e-4 N, so 1 % (and 0.05 N absolute
        # near zero tension) is generous.
        expected = (length - cable) / (2.0 * COMPLIANCE)
        both = seg_active.all(axis=2)
        assert both.any() and both[pushed].all()
        np.testing.assert_allclose(tension[both][:, 0], tension[both][:, 1], rtol=0.01, atol=0.05)
        np.testing.assert_allclose(tension[both][:, 0], expected[both], rtol=0.01, atol=0.05)
        # At the top of the stroke, compare with the geometry of a cable over a circle: each free span
        # is tangent from its anchor (distance D to the centre) at elevation alpha + beta, so the
        # length is 2 sqrt(D^2 - r^2) + 2 r (alpha + beta) and the tension its stretch beyond the
        # initial 2 m over 2c (~44 N; float32 geometry and the 1e-3 sweep tolerance: 1 %).
        peak = np.argmax(z[:, 0])
        dx, dz = ANCHOR_R[0] - ANCHOR_L[0], z[peak] - ANCHOR_L[2]
        dist = np.hypot(0.5 * dx, dz)
        wrapped = 2.0 * np.sqrt(dist**2 - RADIUS**2) + 2.0 * RADIUS * (
            np.arctan2(dz, 0.5 * dx) + np.arcsin(RADIUS / dist)
        )
        np.testing.assert_allclose(tension[peak, :, 0], (wrapped - dx) / (2.0 * COMPLIANCE), rtol=0.01)
        bypass = ~both
        np.testing.assert_allclose(tension[bypass].sum(axis=1), expected[bypass], rtol=0.01, atol=0.05)


def main(argv=None):
    args = parse_example_args(argv, "A dynamic roller pushed up through a cable and back down.", frames=150)
    example = Example(device=args.device, world_count=args.worlds, solver=args.solver)
    print(
        f"cable_dynamic_roller: {args.frames} frames, {args.worlds} world(s) "
        f"on {example.device}, solver {example.solver_name}"
    )
    print(f"  {'t [s]':>6} {'roller z [m]':>12} {'active':>6} {'T left [N]':>10} {'T right [N]':>11} {'cable [m]':>10}")
    for f in range(args.frames):
        example.step()
        if f % 15 == 14 or f == args.frames - 1:
            h = example.history[-1]
            print(
                f"  {h['t']:>6.3f} {h['z'][0]:>12.4f} {h['active'][0]:>6d} {h['tension'][0, 0]:>10.4f} "
                f"{h['tension'][0, 1]:>11.4f} {h['cable'][0]:>10.6f}"
            )
    if example.sim_time > 2.0 * RISE_TIME:
        example.test_final()
        print("  test_final passed")


if __name__ == "__main__":
    main()
