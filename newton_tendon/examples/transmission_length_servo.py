"""A length servo: position and velocity gains drive a hanging load to a target length that changes mid-run.

What it shows: a 1 kg load 1.0 m below a world anchor on a spatial tendon whose drive has only
feedback, ``F = kp (l_d - l) + kv (ldot_d - ldot)`` with kp = 2000 N/m, kv = 120 N s/m (the
solver treats both gains implicitly). The target length is 1.2 m for the first second and 0.8 m
after that: the new target is written into ``Control.transmission_target_length`` between two
frames, as a controller would.

Physics checked (``test_final``, spec "Actuator and activation dynamics"): a pure position servo
under gravity settles with the static error ``m g / kp`` (the weight needs ``kp (l - l_d) = m g``),
so at the end of each phase

* ``l = l_d + m g / kp`` (1.204905 m, then 0.804905 m), at rest,
* the actuator force is ``-m g`` (it holds the whole weight) and the total tension ``m g``.

The gains give a damping ratio ``kv / (2 sqrt(kp m)) = 1.34`` (no overshoot); the slow pole
decays at ~9 /s, so 1 s per phase leaves well under 0.1 mm of the 0.4 m step.

Run:
    python -m newton_tendon.examples.transmission_length_servo
    python -m newton_tendon.examples.transmission_length_servo --worlds 16 --device cuda:0
"""

from __future__ import annotations

import numpy as np

from ._transmission_common import GRAVITY, TransmissionExample, run_main

MASS = 1.0
"""Load mass [kg]."""
ANCHOR = (0.0, 0.0, 2.0)
"""World anchor [m]."""
START_LENGTH = 1.0
"""Initial length [m]."""
KP = 2000.0
"""Position gain [N/m]."""
KV = 120.0
"""Velocity gain [N s/m]."""
TARGETS = ((0.0, 1.2), (1.0, 0.8))
"""(start time [s], target length [m]) of each phase."""
PHASE_TIME = 1.0
"""Duration of each phase [s]."""
STATIC_ERROR = MASS * GRAVITY / KP
"""Servo error under the weight [m]: l - l_d = m g / kp."""


class Example(TransmissionExample):
    """A length-servoed hanging load in ``world_count`` worlds."""

    name = "transmission_length_servo"
    fps = 50
    substeps = 20  # dt = 1e-3 s
    min_time = PHASE_TIME * len(TARGETS)

    def build_world(self, nt):
        from newton_tendon.transmission import TendonSite

        world = nt.ModelBuilder()
        self.load = world.add_body(
            xform=(ANCHOR[0], ANCHOR[1], ANCHOR[2] - START_LENGTH, 0.0, 0.0, 0.0, 1.0),
            mass=MASS,
            inertia=np.eye(3) * 1.0e-3,
            label="load",
        )
        world.add_spatial_tendon(
            [TendonSite(body=-1, offset=ANCHOR), TendonSite(body=self.load)],
            label="servo",
            position_gain=KP,
            velocity_gain=KV,
            target_length=TARGETS[0][1],
        )
        return world

    def target_at(self, t: float) -> float:
        """Target length [m] commanded at time t."""
        return [target for start, target in TARGETS if t >= start - 1e-9][-1]

    def before_frame(self):
        for start, target in TARGETS[1:]:
            if abs(self.sim_time - start) < 0.5 * self.frame_dt:
                self.set_control("target_length", target)

    def after_frame(self):
        self.record(
            target=self.control.transmission_target_length.numpy().astype(np.float64),
            length=self.report("length")[:, 0],
            velocity=self.report("velocity")[:, 0],
            actuation_force=self.report("actuation_force")[:, 0],
            tension=self.report("tension")[:, 0],
        )

    def phase_ends(self) -> list[tuple[int, float]]:
        """(history row, target) at the last frame of each completed phase."""
        t = self.history_arrays()["t"]
        rows = []
        for start, target in TARGETS:
            end = start + PHASE_TIME
            if t[-1] >= end - 1e-9:
                rows.append((int(np.argmin(np.abs(t - end))), target))
        return rows

    def table(self):
        h = self.history_arrays()
        rows = []
        for k, target in self.phase_ends():
            tk = h["t"][k]
            rows.append((f"t={tk:.2f} target", target, None, "m"))
            rows.append((f"t={tk:.2f} length", h["length"][k, 0], target + STATIC_ERROR, "m"))
            rows.append((f"t={tk:.2f} error l - l_d", h["length"][k, 0] - target, STATIC_ERROR, "m"))
            rows.append((f"t={tk:.2f} actuator force", h["actuation_force"][k, 0], -MASS * GRAVITY, "N"))
            rows.append((f"t={tk:.2f} tension", h["tension"][k, 0], MASS * GRAVITY, "N"))
        if not rows:
            rows.append(("length", h["length"][-1, 0], None, "m"))
            rows.append(("target", h["target"][-1, 0], None, "m"))
        return rows

    def test_final(self):
        """At the end of each phase: l = l_d + m g/kp (0.05 mm), at rest, actuator -m g, tension m g."""
        assert self.sim_time >= self.min_time - 1e-9, f"run at least {self.min_time} s (both phases)"
        h = self.history_arrays()
        ends = self.phase_ends()
        assert len(ends) == len(TARGETS)
        for k, target in ends:
            np.testing.assert_allclose(h["target"][k], target)
            # The static error is 4.9 mm; float32 lengths near 1 m resolve 0.1 um.
            np.testing.assert_allclose(h["length"][k], target + STATIC_ERROR, atol=5e-5)
            np.testing.assert_allclose(h["velocity"][k], 0.0, atol=1e-3)
            np.testing.assert_allclose(h["actuation_force"][k], -MASS * GRAVITY, rtol=2e-3)
            np.testing.assert_allclose(h["tension"][k], MASS * GRAVITY, rtol=2e-3)
        # Overdamped: the length never overshoots the new target's equilibrium by more than 0.5 mm.
        second = h["t"] > TARGETS[1][0] + 1e-9
        assert np.all(h["length"][second] >= TARGETS[1][1] + STATIC_ERROR - 5e-4)


def main(argv=None):
    frames = int(round(Example.min_time * Example.fps))
    return run_main(Example, argv, "A length servo lifts a load to a changing target length.", frames)


if __name__ == "__main__":
    main()
