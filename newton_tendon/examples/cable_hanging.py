"""A mass hanging from a world anchor on one compliant, damped cable span.

What it shows: the smallest routed tendon, two ANCHOR guides (one fixed in the world, one on a
body), with a span compliance ``c`` [m/N] and damping ``d`` [N s/m]. The mass is released at the
span's rest length, drops, oscillates and settles.

Physics checked (``test_final``): at rest the span is a linear spring holding the weight, so the
stretch is ``m g c`` and the reported material tension ``(l - L)/c`` is ``m g``.

Run:
    python -m newton_tendon.examples.cable_hanging --frames 300
    python -m newton_tendon.examples.cable_hanging --frames 300 --solver vbd
    python -m newton_tendon.examples.cable_hanging --frames 300 --worlds 16 --device cuda:0
"""

from __future__ import annotations

import numpy as np

from ._common import CableExample, parse_example_args

ANCHOR = (0.0, 0.0, 2.0)
"""World anchor point [m]."""
REST_LENGTH = 1.0
"""Unstretched span length [m]: the mass starts this far below the anchor."""
MASS = 2.0
"""Hanging mass [kg]."""
COMPLIANCE = 1.0e-3
"""Span compliance [m/N] (stiffness 1000 N/m)."""
DAMPING = 25.0
"""Span damping [N s/m]: damping ratio d / (2 sqrt(m/c)) ~ 0.28, so it settles in well under 1 s."""


class Example(CableExample):
    """A mass on a compliant cable below a world anchor, replicated into ``world_count`` worlds.

    Constructed as ``Example(device=None, world_count=1, solver="xpbd")``, see :class:`CableExample`.
    """

    name = "cable_hanging"

    def build_world(self, nt):
        world = nt.ModelBuilder()
        body = world.add_body(
            xform=(ANCHOR[0], ANCHOR[1], ANCHOR[2] - REST_LENGTH, 0.0, 0.0, 0.0, 1.0),
            mass=MASS,
            inertia=np.eye(3) * 1.0e-3,
            label="weight",
        )
        world.add_tendon(
            [
                nt.TendonGuide(body=-1, offset=ANCHOR),
                nt.TendonGuide(body=body, compliance=COMPLIANCE, damping=DAMPING, rest_length=REST_LENGTH),
            ],
            label="cable",
        )
        return world

    def setup(self, nt):
        # World-fixed guides follow each world's placement on the grid.
        starts = self.model.tendon_start.numpy()[:-1]
        self.anchors = self.model.tendon_guide_offset.numpy()[starts].astype(np.float64)

    def weight_positions(self) -> np.ndarray:
        """World position [m] of each world's weight, shape [world_count, 3]."""
        return self.state_0.body_q.numpy()[:, :3].astype(np.float64)

    def tensions(self) -> np.ndarray:
        """Material tension [N] of each world's span, shape [world_count]."""
        return self.solver.tendon_segment_material_tension.numpy().astype(np.float64)

    def test_final(self):
        """After settling, stretch = m g c and tension = m g (within 1 %)."""
        g = 9.81
        stretch = np.linalg.norm(self.weight_positions() - self.anchors, axis=1) - REST_LENGTH
        tension = self.tensions()
        expected_stretch = MASS * g * COMPLIANCE
        # The release oscillation (amplitude m g c = 19.6 mm) decays at least like exp(-d t / (2 m)),
        # exp(-6.25 t): after 1 s it is below 0.04 mm, 0.2 % of the stretch, and float32 positions
        # near z = 1 m resolve 1e-7 m. 1 % leaves margin yet fails for a wrong compliance or weight.
        assert self.sim_time >= 1.0 - 1.0e-6, "run at least 1 s so the oscillation has decayed"
        np.testing.assert_allclose(stretch, expected_stretch, rtol=0.01)
        np.testing.assert_allclose(tension, MASS * g, rtol=0.01)


def main(argv=None):
    args = parse_example_args(argv, "A mass hanging on a compliant routed cable.", frames=300)
    example = Example(device=args.device, world_count=args.worlds, solver=args.solver)
    for _ in range(args.frames):
        example.step()
    z = example.weight_positions()[0, 2]
    stretch = ANCHOR[2] - z - REST_LENGTH
    print(
        f"cable_hanging: {args.frames} frames, {example.sim_time:.2f} s, {args.worlds} world(s) "
        f"on {example.device}, solver {example.solver_name}"
    )
    print(f"  weight z          {z:.5f} m")
    print(f"  stretch           {stretch * 1e3:.4f} mm (m g c = {MASS * 9.81 * COMPLIANCE * 1e3:.4f} mm)")
    print(f"  material tension  {example.tensions()[0]:.4f} N (m g = {MASS * 9.81:.4f} N)")
    if example.sim_time >= 1.0 - 1.0e-6:
        example.test_final()
        print("  test_final passed")


if __name__ == "__main__":
    main()
