"""Two unequal weights on one cable through two frictionless world pinholes (a U-shaped route).

What it shows: a route ANCHOR (on weight 1) -> PINHOLE -> PINHOLE -> ANCHOR (on weight 2) with
an inextensible cable. Material slides freely through the pinholes (``mu = 0``), so the heavy
weight pulls the light one up: an Atwood machine without a pulley wheel.

Physics checked (``test_final``): the heavy weight accelerates at ``a = (m1 - m2)/(m1 + m2) g``
(measured from its velocity change over the run) and all three spans carry the same tension,
``T = 2 m1 m2 g / (m1 + m2)``.

Run:
    python -m newton_tendon.examples.cable_pinhole --frames 45
    python -m newton_tendon.examples.cable_pinhole --frames 45 --solver vbd
    python -m newton_tendon.examples.cable_pinhole --frames 45 --worlds 64 --device cuda:0

The light weight reaches its pinhole after about 0.9 s; from then on the cable end is stuck at
the pinhole (a span never shrinks below 1e-6 m) and the machine stops. ``test_final`` only looks
at frames before that.
"""

from __future__ import annotations

import numpy as np

from ._common import CableExample, parse_example_args

GRAVITY = 9.81
"""Gravitational acceleration [m/s^2] (the builder's default, along -Z)."""
M1 = 3.0
"""Heavy weight [kg]."""
M2 = 1.0
"""Light weight [kg]."""
PINHOLE_1 = (-0.5, 0.0, 3.0)
"""Pinhole above the heavy weight [m] (world)."""
PINHOLE_2 = (0.5, 0.0, 3.0)
"""Pinhole above the light weight [m] (world)."""
START_Z = 0.5
"""Initial height of both weights [m]."""
CLEARANCE = 0.3
"""test_final ignores frames where the light weight is closer than this to its pinhole [m]."""


class Example(CableExample):
    """Pinhole Atwood machine, replicated into ``world_count`` worlds.

    Constructed as ``Example(device=None, world_count=1, solver="xpbd")``, see :class:`CableExample`.
    """

    name = "cable_pinhole"
    spacing = (2.0, 1.0, 0.0)

    def build_world(self, nt):
        world = nt.ModelBuilder()
        inertia = np.eye(3) * 1.0e-3
        heavy = world.add_body(xform=(PINHOLE_1[0], 0.0, START_Z, 0, 0, 0, 1), mass=M1, inertia=inertia, label="heavy")
        light = world.add_body(xform=(PINHOLE_2[0], 0.0, START_Z, 0, 0, 0, 1), mass=M2, inertia=inertia, label="light")
        world.add_tendon(
            [
                nt.TendonGuide(body=heavy),
                nt.TendonGuide(body=-1, guide_type=nt.TendonGuideType.PINHOLE, offset=PINHOLE_1),
                nt.TendonGuide(body=-1, guide_type=nt.TendonGuideType.PINHOLE, offset=PINHOLE_2),
                nt.TendonGuide(body=light),
            ],
            label="cable",
        )
        self.heavy = self.per_world(world, heavy)
        self.light = self.per_world(world, light)
        return world

    def setup(self, nt):
        starts = self.model.tendon_start.numpy()[:-1]
        # World-fixed guides follow each world's placement; the light weight's pinhole is guide 2.
        self.pinhole_2 = self.model.tendon_guide_offset.numpy()[starts + 2].astype(np.float64)
        self.history: list[tuple[float, np.ndarray, np.ndarray, bool]] = []
        """Per frame: time [s], heavy weights' vertical velocity [m/s] (per world), span tensions [N],
        and whether every light weight is still clear of its pinhole."""

    def after_frame(self):
        """Record velocities and tensions after each frame."""
        q = self.state_0.body_q.numpy().astype(np.float64)
        qd = self.state_0.body_qd.numpy().astype(np.float64)
        clear = bool(np.all(np.linalg.norm(q[self.light, :3] - self.pinhole_2, axis=1) > CLEARANCE))
        tension = self.solver.tendon_segment_material_tension.numpy().astype(np.float64).reshape(self.world_count, 3)
        self.history.append((self.sim_time, qd[self.heavy, 2], tension, clear))

    def free_history(self):
        """Frames recorded before the first light weight came near its pinhole. A weight that reaches
        the pinhole stops there (an end stop, docs/cables.md), so the later frames follow no Atwood law."""
        free = []
        for h in self.history:
            if not h[3]:
                break
            free.append(h)
        return free

    def test_final(self):
        """a = (m1 - m2)/(m1 + m2) g within 2 %; equal span tensions within 1 %, = 2 m1 m2 g/(m1 + m2)."""
        free = self.free_history()
        assert len(free) >= 10, "run at least 10 frames (and stop before the light weight reaches its pinhole)"
        t = np.array([h[0] for h in free])
        vz = np.stack([h[1] for h in free])  # [frames, worlds]
        # Least-squares slope of v(t) over the free frames: the acceleration is constant there, so
        # the fit only carries float32 rounding and the one-step start-up of the rigid constraint.
        accel = -np.polyfit(t, vz, 1)[0]
        expected_accel = (M1 - M2) / (M1 + M2) * GRAVITY
        np.testing.assert_allclose(accel, expected_accel, rtol=0.02)
        # Frictionless pinholes leave one tension on the whole cable, at every recorded frame. XPBD
        # reports lambda/dt^2 for inextensible spans, VBD the span's multiplier; float32 rounding of
        # the ~6 m route (5e-7 m) times the effective mass over dt^2 is ~0.03 N, 0.2 % of T, so 1 %
        # is a safe bound (measured: 0.25 % XPBD, 0.14 % VBD).
        tension = np.stack([h[2] for h in free])  # [frames, worlds, spans]
        np.testing.assert_allclose(tension, tension[:, :, :1].repeat(3, axis=2), rtol=0.01)
        np.testing.assert_allclose(tension, 2.0 * M1 * M2 * GRAVITY / (M1 + M2), rtol=0.01)


def main(argv=None):
    args = parse_example_args(argv, "Two weights on one cable through two frictionless pinholes.", frames=45)
    example = Example(device=args.device, world_count=args.worlds, solver=args.solver)
    for _ in range(args.frames):
        example.step()
    q = example.state_0.body_q.numpy()
    t, vz, tension, _ = example.history[-1]
    print(
        f"cable_pinhole: {args.frames} frames, {example.sim_time:.2f} s, {args.worlds} world(s) "
        f"on {example.device}, solver {example.solver_name}"
    )
    print(f"  heavy z, light z   {q[example.heavy[0], 2]:.4f} m, {q[example.light[0], 2]:.4f} m")
    expected_v = -(M1 - M2) / (M1 + M2) * GRAVITY * t
    if example.history[-1][3]:
        print(f"  heavy velocity     {vz[0]:+.4f} m/s (a t with a = (m1 - m2)/(m1 + m2) g: {expected_v:+.4f})")
    else:
        print(f"  heavy velocity     {vz[0]:+.4f} m/s (the light weight has reached its pinhole: an end stop)")
    print(f"  span tensions      {', '.join(f'{x:.4f}' for x in tension[0])} N")
    if example.history[-1][3]:
        print(f"  expected tension   {2 * M1 * M2 * GRAVITY / (M1 + M2):.4f} N")
    else:  # at rest, each side of the stop holds its own weight
        print(f"  expected tensions  {M1 * GRAVITY:.4f}, {M1 * GRAVITY:.4f}, {M2 * GRAVITY:.4f} N (m1 g, m1 g, m2 g)")
    if len(example.free_history()) >= 10:
        example.test_final()
        print("  test_final passed")


if __name__ == "__main__":
    main()
