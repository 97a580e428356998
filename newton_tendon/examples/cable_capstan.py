"""Capstan friction: three Atwood machines over a fixed roller, with friction mu = 0, 0.2 and 0.5.

What it shows: a route ANCHOR (on a 3 kg weight) -> ROLLER (fixed in the world, wrap pi) ->
ANCHOR (on a 1 kg weight), replicated into worlds with ``replicate``; each world then gets its own
roller friction by editing ``model.tendon_guide_mu`` in place and calling
``solver.notify_model_changed(ModelFlags.TENDON_PROPERTIES)``.

Physics checked (``test_final``), with the capstan law ``T_tight <= exp(mu theta) T_slack``:

* mu = 0.5: exp(0.5 pi) = 4.81 > m1/m2 = 3, so the cable sticks: nothing moves, T = m g per side.
* mu = 0.2: exp(0.2 pi) = 1.87 < 3, so the cable slips with T1/T2 = exp(mu theta) (theta from
  ``solver.tendon_guide_wrap``) and ``a = g (m1 - E m2)/(m1 + E m2)``, E = exp(mu theta).
* mu = 0: both spans carry the same tension and ``a = (m1 - m2)/(m1 + m2) g``.

Run:
    python -m newton_tendon.examples.cable_capstan --frames 40
    python -m newton_tendon.examples.cable_capstan --frames 40 --solver vbd
    python -m newton_tendon.examples.cable_capstan --frames 40 --worlds 100 --device cuda:0

``--worlds`` counts copies of the three machines (3 x worlds Warp worlds in all).
"""

from __future__ import annotations

import numpy as np

from ._common import CableExample, parse_example_args

GRAVITY = 9.81
"""Gravitational acceleration [m/s^2] (the builder's default, along -Z)."""
M1 = 3.0
"""Heavy weight [kg], hanging from the left of the roller."""
M2 = 1.0
"""Light weight [kg], hanging from the right of the roller."""
MUS = (0.0, 0.2, 0.5)
"""Roller friction coefficient of the three machines."""
ROLLER_CENTER = (0.0, 0.0, 2.5)
"""Roller centre [m] (world); its axis is +Y."""
RADIUS = 0.1
"""Roller radius [m]."""
START_Z = 1.0
"""Initial height of both weights [m]."""
CLEARANCE = 0.3
"""test_final ignores frames where a weight is closer than this to the roller centre height [m]."""


class Example(CableExample):
    """Three capstan machines (mu = 0, 0.2, 0.5), each in its own world, ``world_count`` times.

    Args:
        device: Warp device (default: Warp's default device).
        world_count: copies of the three machines (3 * world_count worlds).
        solver: "xpbd" or "vbd", see :class:`CableExample`.
    """

    name = "cable_capstan"
    worlds_per_copy = 3

    def build_world(self, nt):
        cx, _, cz = ROLLER_CENTER
        world = nt.ModelBuilder()
        inertia = np.eye(3) * 1.0e-3
        heavy = world.add_body(xform=(cx - RADIUS, 0.0, START_Z, 0, 0, 0, 1), mass=M1, inertia=inertia, label="heavy")
        light = world.add_body(xform=(cx + RADIUS, 0.0, START_Z, 0, 0, 0, 1), mass=M2, inertia=inertia, label="light")
        world.add_tendon(
            [
                nt.TendonGuide(body=heavy),
                # Axis +Y, cable over the top from -X to +X: counter-clockwise about +Y, orientation +1.
                nt.TendonGuide(
                    body=-1,
                    guide_type=nt.TendonGuideType.ROLLER,
                    offset=ROLLER_CENTER,
                    axis=(0.0, 1.0, 0.0),
                    radius=RADIUS,
                    orientation=1,
                ),
                nt.TendonGuide(body=light),
            ],
            label="cable",
        )
        self.heavy = self.per_world(world, heavy)
        self.light = self.per_world(world, light)
        return world

    def setup(self, nt):
        self.mu = np.array([MUS[w % 3] for w in range(self.world_count)])
        """Roller friction of each world."""
        starts = self.model.tendon_start.numpy()[:-1]
        self.roller = starts + 1
        """Roller guide index of each world."""
        # Per-world friction: edit the model in place and tell the solver.
        guide_mu = self.model.tendon_guide_mu.numpy()
        guide_mu[self.roller] = self.mu
        self.model.tendon_guide_mu.assign(guide_mu)
        self.solver.notify_model_changed(nt.ModelFlags.TENDON_PROPERTIES)
        self.history: list[dict] = []
        """Per frame: time, weight velocities [m/s], span tensions [N], wraps [rad], clear of the roller."""

    def after_frame(self):
        """Record velocities, tensions and wraps after each frame."""
        q = self.state_0.body_q.numpy().astype(np.float64)
        qd = self.state_0.body_qd.numpy().astype(np.float64)
        tension = self.solver.tendon_segment_material_tension.numpy().astype(np.float64)
        top = ROLLER_CENTER[2] - CLEARANCE
        high = np.maximum(q[self.heavy, 2], q[self.light, 2])
        self.history.append(
            {
                "t": self.sim_time,
                "v_heavy": qd[self.heavy, :3],
                "v_light": qd[self.light, :3],
                "tension": tension.reshape(self.world_count, 2),
                "wrap": self.solver.tendon_guide_wrap.numpy().astype(np.float64)[self.roller],
                "clear": bool(np.all(high < top)),
                "high": high,
                "at_roller": high >= top,
                "cable": self.solver.tendon_total_cable.numpy().astype(np.float64),
            }
        )

    def free_history(self) -> list[dict]:
        """Frames recorded before the first weight came near its roller. A weight that reaches the
        roller stops there (an end stop, docs/cables.md), so the later frames follow no Atwood law."""
        free = []
        for h in self.history:
            if not h["clear"]:
                break
            free.append(h)
        return free

    def test_final(self):
        """Sticking at mu = 0.5, capstan ratio exp(mu theta) at mu = 0.2, equal tensions at mu = 0;
        on every frame, each world's cable keeps its material, and a weight that reached its roller
        stays there (an end stop)."""
        # Material: sum L + r theta between material points is conserved by construction
        # (docs/cables.md); float32 rounding of the 3.5 m cable, measured 1e-7 relative, against the
        # 1e-5 acceptance bound. Dragged round the roller, the weights made 2 pi r = 0.63 m of cable.
        cable = np.stack([h["cable"] for h in self.history])
        np.testing.assert_allclose(cable, cable[:1].repeat(len(cable), axis=0), rtol=1.0e-5)
        # A weight that came up to the roller stops at its tangent point (roller centre height) and
        # stays: 5 mm allows VBD's slide along the rim after its stop rebounds (docs/cables.md).
        at_roller = np.stack([h["at_roller"] for h in self.history])  # [frames, worlds]
        high = np.stack([h["high"] for h in self.history])
        reached = np.logical_or.accumulate(at_roller, axis=0)
        assert np.all(at_roller[reached]), "a weight left its roller after reaching it"
        settled = np.roll(reached, 30, axis=0)  # half a second after reaching it
        settled[:30] = False
        assert np.all(np.abs(high[settled] - ROLLER_CENTER[2]) < 5.0e-3), "a stopped weight is off its roller"
        free = self.free_history()
        assert len(free) >= 10, "run at least 10 frames (and stop before a weight reaches the roller)"
        t = np.array([h["t"] for h in free])
        vz = np.stack([h["v_heavy"][:, 2] for h in free])  # [frames, worlds]
        tension = np.stack([h["tension"] for h in free])  # [frames, worlds, 2]
        wrap = np.stack([h["wrap"] for h in free])  # [frames, worlds]
        accel = -np.polyfit(t, vz, 1)[0]  # [worlds]
        last = free[-1]
        # The weights hang straight below the tangent points, so the wrap is pi (to float32).
        np.testing.assert_allclose(wrap, np.pi, atol=1.0e-3)

        stick = self.mu == 0.5
        # Sticking: exp(0.5 pi) = 4.81 exceeds the tension ratio 3 needed to hold the weights, so
        # the cable must not slide at all; 1e-3 m/s is ~200 times what float32 noise produces here
        # and 0.1 % of the 1 m/s a slip would reach within the run.
        speed = np.linalg.norm(np.concatenate([last["v_heavy"][stick], last["v_light"][stick]]), axis=1)
        assert np.all(speed < 1.0e-3), f"mu=0.5 machine slips: speeds {speed}"
        # Each side then holds its own weight statically (float32 lambda/dt^2 noise is ~0.1 %; VBD's
        # multiplier-carried tension measured 0.15 % off).
        np.testing.assert_allclose(tension[:, stick, 0], M1 * GRAVITY, rtol=0.01)
        np.testing.assert_allclose(tension[:, stick, 1], M2 * GRAVITY, rtol=0.01)

        slip = self.mu == 0.2
        # Slipping: the capstan bound is reached, T1 = exp(mu theta) T2 at every frame. The sweeps
        # stop at tendon_settle_tol = 1e-3 of the tension and lambda/dt^2 (XPBD) or the span
        # multiplier (VBD) carries ~0.3 % float32 noise, so 3 % is a comfortable bound that still
        # rejects exp(mu theta) with theta off by 0.15 rad or a wrong ratio (e.g. 3, the static ratio).
        ratio = tension[:, slip, 0] / tension[:, slip, 1]
        np.testing.assert_allclose(ratio, np.exp(0.2 * wrap[:, slip]), rtol=0.03)
        e = np.exp(0.2 * np.pi)
        np.testing.assert_allclose(accel[slip], GRAVITY * (M1 - e * M2) / (M1 + e * M2), rtol=0.03)

        free_slip = self.mu == 0.0
        # Frictionless roller: one tension on the cable (the run is solved exactly; 1 % covers the
        # float32 noise) and the Atwood acceleration, fitted over the run (2 %).
        np.testing.assert_allclose(tension[:, free_slip, 0], tension[:, free_slip, 1], rtol=0.01)
        np.testing.assert_allclose(accel[free_slip], GRAVITY * (M1 - M2) / (M1 + M2), rtol=0.02)


def main(argv=None):
    args = parse_example_args(
        argv,
        "Three capstan machines with roller friction 0, 0.2 and 0.5.",
        frames=40,
        worlds_help="copies of the three machines",
    )
    example = Example(device=args.device, world_count=args.worlds, solver=args.solver)
    for _ in range(args.frames):
        example.step()
    h = example.history[-1]
    print(
        f"cable_capstan: {args.frames} frames, {example.sim_time:.2f} s, "
        f"{example.world_count} worlds on {example.device}, solver {example.solver_name}"
    )
    print(
        f"  {'mu':>4} {'T heavy [N]':>12} {'T light [N]':>12} {'ratio':>7} {'exp(mu th)':>10} "
        f"{'v heavy [m/s]':>14}  state"
    )
    for w in range(3):
        t1, t2 = h["tension"][w]
        # A weight at its roller rests at an end stop: each side holds its own weight, outside the capstan law.
        state = "at the roller (end stop)" if h["at_roller"][w] else ""
        print(
            f"  {example.mu[w]:>4.1f} {t1:>12.4f} {t2:>12.4f} {t1 / max(t2, 1e-12):>7.3f} "
            f"{np.exp(example.mu[w] * h['wrap'][w]):>10.3f} {h['v_heavy'][w, 2]:>+14.4f}  {state}"
        )
    if len(example.free_history()) >= 10:
        example.test_final()
        print("  test_final passed")


if __name__ == "__main__":
    main()
