"""A bounded tension command: actuator-force bounds clamp a large command, activation filters it.

What it shows: two 1 kg loads, each hanging 1.0 m below a world anchor on its own spatial tendon
with length bounds [0.6, 1.5] m. Both tendons receive the same large tension command of 50 N
(``drive_force = -50``) for 0.5 s and then 0; a shortening-only actuator with bounds
``actuation_lower = -15 N``, ``actuation_upper = 0`` limits what either can deliver.

* ``instant`` has ``activation_time = 0``: the activation equals the command at once.
* ``filtered`` has ``activation_time = 0.1 s``: the activation follows the exact first-order
  update ``a_{n+1} = u + (a_n - u) exp(-h/tau)``.

The bounds apply after the filter: the reported actuator force is ``clamp(a, -15, 0)``, while the
activation (``State.transmission_activation``) keeps the unclamped filtered command.

Physics checked (``test_final``, spec "Actuator and activation dynamics"):

* the activation of both tendons matches ``u (1 - exp(-t/tau))`` and then ``a_0 exp(-(t - t_0)/tau)``
  at every frame; the actuator force equals ``clamp(a, -15, 0)``, exactly the bound -15 N while the
  command saturates it;
* the instant load rises at ``(15 - m g)/m = 5.19 m/s^2`` until it reaches the lower limit;
* at 0.5 s both loads rest on the lower limit with limit force ``+(15 - m g) = 5.19 N``;
* after the command drops, the instant load falls at once while the filtered one is held until its
  decaying activation falls below the weight, at ``t = 0.5 + tau ln(50 / (m g)) = 0.663 s``;
* at the end both loads rest on the upper limit: total tension ``m g``, limit force ``-m g - F_act``.

Run:
    python -m newton_tendon.examples.transmission_tension_command
    python -m newton_tendon.examples.transmission_tension_command --worlds 16 --device cuda:0
"""

from __future__ import annotations

import math

import numpy as np

from ._transmission_common import GRAVITY, TransmissionExample, run_main

MASS = 1.0
"""Load mass [kg]."""
ANCHOR_Z = 2.0
"""Anchor height [m]; the loads start 1.0 m below their anchors."""
START_LENGTH = 1.0
"""Initial length [m]."""
LIMITS = (0.6, 1.5)
"""Length bounds [m]."""
COMMAND = 50.0
"""Tension command [N] during the first phase (drive_force = -COMMAND)."""
BOUNDS = (-15.0, 0.0)
"""Actuator force bounds [N]: a shortening-only actuator of at most 15 N tension."""
TAUS = (0.0, 0.1)
"""Activation time [s] of the ``instant`` and ``filtered`` tendons."""
LABELS = ("instant", "filtered")
RELEASE_TIME = 0.5
"""Time [s] at which the command drops to 0."""
END_TIME = 1.4
"""Default run length [s]."""


def expected_activation(t: float, tau: float) -> float:
    """Closed-form activation [N] at time t for the command schedule (exact for piecewise-constant u)."""
    u = -COMMAND
    if tau == 0.0:
        return u if t <= RELEASE_TIME + 1e-9 else 0.0
    a_release = u * (1.0 - math.exp(-min(t, RELEASE_TIME) / tau))
    if t <= RELEASE_TIME + 1e-9:
        return a_release
    return a_release * math.exp(-(t - RELEASE_TIME) / tau)


def expected_hold_release() -> float:
    """Time [s] at which the filtered tendon's actuator tension falls below the weight."""
    a0 = -expected_activation(RELEASE_TIME, TAUS[1])
    return RELEASE_TIME + TAUS[1] * math.log(a0 / (MASS * GRAVITY))


class Example(TransmissionExample):
    """Two bounded tension commands (instant and filtered) in ``world_count`` worlds."""

    name = "transmission_tension_command"
    fps = 50
    substeps = 20  # dt = 1e-3 s
    min_time = END_TIME

    def build_world(self, nt):
        from newton_tendon.transmission import TendonSite

        world = nt.ModelBuilder()
        self.loads = []
        for i, (tau, label) in enumerate(zip(TAUS, LABELS, strict=True)):
            x = 0.5 * i
            load = world.add_body(
                xform=(x, 0.0, ANCHOR_Z - START_LENGTH, 0.0, 0.0, 0.0, 1.0),
                mass=MASS,
                inertia=np.eye(3) * 1.0e-3,
                label=f"{label}_load",
            )
            world.add_spatial_tendon(
                [TendonSite(body=-1, offset=(x, 0.0, ANCHOR_Z)), TendonSite(body=load)],
                label=label,
                drive_force=-COMMAND,
                activation_time=tau,
                actuation_lower=BOUNDS[0],
                actuation_upper=BOUNDS[1],
                lower_limit=LIMITS[0],
                upper_limit=LIMITS[1],
            )
            self.loads.append(load)
        return world

    def before_frame(self):
        # Frame boundaries fall on the release time, so the command switches between two steps.
        if abs(self.sim_time - RELEASE_TIME) < 0.5 * self.frame_dt:
            self.set_control("drive_force", 0.0)

    def after_frame(self):
        qd = self.body_qd()
        self.record(
            activation=self.activation(),
            actuation_force=self.report("actuation_force"),
            limit_force=self.report("limit_force"),
            tension=self.report("tension"),
            length=self.report("length"),
            load_vz=qd[:, self.loads, 2],
        )

    def release_time(self) -> float:
        """First frame time [s] after the command drop at which world 0's filtered load falls (> 1 mm/s)."""
        h = self.history_arrays()
        t = h["t"]
        moving = (t > RELEASE_TIME + 1e-9) & (h["load_vz"][:, 0, 1] < -1e-3)
        return float(t[np.argmax(moving)]) if moving.any() else math.nan

    def table(self):
        h = self.history_arrays()
        t = h["t"]

        def at(time):
            return int(np.argmin(np.abs(t - time)))

        rise = (-BOUNDS[0] - MASS * GRAVITY) / MASS
        rows = [
            ("instant actuator, t<=0.5 s", h["actuation_force"][at(min(RELEASE_TIME, t[-1])), 0, 0], BOUNDS[0], "N"),
        ]
        for time in (0.02, 0.04, RELEASE_TIME, 0.7):
            if time <= t[-1] + 1e-9:
                k = at(time)
                a_exp = expected_activation(t[k], TAUS[1])
                rows.append((f"filtered activation t={t[k]:.2f}", h["activation"][k, 0, 1], a_exp, "N"))
                rows.append(
                    (f"filtered actuator   t={t[k]:.2f}", h["actuation_force"][k, 0, 1], np.clip(a_exp, *BOUNDS), "N")
                )
        k = at(0.2)
        rows.append((f"instant rise accel t={t[k]:.2f}", h["load_vz"][k, 0, 0] / t[k], rise, "m/s^2"))
        if t[-1] >= RELEASE_TIME - 1e-9:
            k = at(RELEASE_TIME)
            rows.append(("lower-limit force t=0.50", h["limit_force"][k, 0, 0], rise * MASS, "N"))
        release = self.release_time()
        if math.isfinite(release):
            # Frames are 20 ms apart: the first frame after the hold ends.
            rows.append(("filtered load falls from (frame)", release, expected_hold_release(), "s"))
        # Both loads rest on the upper limit at the end of the default run.
        done = MASS * GRAVITY if t[-1] >= END_TIME - 1e-9 else None
        rows.append(("final tension (instant)", h["tension"][-1, 0, 0], done, "N"))
        rows.append(("final tension (filtered)", h["tension"][-1, 0, 1], done, "N"))
        return rows

    def test_final(self):
        """Activation law and clamp at every frame, the saturated rise, the limit forces, the held release."""
        assert self.sim_time >= self.min_time - 1e-9, f"run at least {self.min_time} s"
        h = self.history_arrays()
        t = h["t"]
        a, f_act = h["activation"], h["actuation_force"]
        expected = np.array([[expected_activation(ti, tau) for tau in TAUS] for ti in t])
        # float32 activation: the filter multiplies by exp(-h/tau) each step; 1e-5 relative covers
        # the accumulated rounding.
        np.testing.assert_allclose(a, np.broadcast_to(expected[:, None, :], a.shape), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(f_act, np.clip(a, *BOUNDS), rtol=1e-6, atol=1e-6)
        phase1 = t <= RELEASE_TIME + 1e-9
        assert np.all(f_act[phase1, :, 0] == BOUNDS[0]), "the instant actuator must sit exactly on its bound"
        # Instant load: free rise at (15 - m g)/m until the limit (it reaches it after ~0.39 s).
        k = int(np.argmin(np.abs(t - 0.2)))
        np.testing.assert_allclose(h["load_vz"][k, :, 0], (-BOUNDS[0] - MASS * GRAVITY) / MASS * t[k], rtol=1e-3)
        # End of phase 1: both loads rest on the lower limit, which carries 15 N - m g.
        k = int(np.argmin(np.abs(t - RELEASE_TIME)))
        np.testing.assert_allclose(h["length"][k], LIMITS[0], atol=1e-3)
        np.testing.assert_allclose(h["limit_force"][k], -BOUNDS[0] - MASS * GRAVITY, rtol=1e-3)
        # Release: the instant load starts falling in the first frame, the filtered one only once
        # its decaying activation drops below the weight (frames are 20 ms apart).
        after = t > RELEASE_TIME + 1e-9
        assert h["load_vz"][np.argmax(after), :, 0].max() < -0.1, "the instant load must fall at once"
        for w in range(self.world_count):
            moving = after & (h["load_vz"][:, w, 1] < -1e-3)
            release = t[np.argmax(moving)]
            assert abs(release - expected_hold_release()) <= 2.0 * self.frame_dt, (release, expected_hold_release())
        # End: both loads rest on the upper limit; tension m g, limit force -m g - F_act.
        np.testing.assert_allclose(h["length"][-1], LIMITS[1], atol=1e-3)
        np.testing.assert_allclose(h["tension"][-1], MASS * GRAVITY, rtol=1e-3)
        np.testing.assert_allclose(h["limit_force"][-1], -MASS * GRAVITY - f_act[-1], rtol=1e-3)


def main(argv=None):
    frames = int(round(END_TIME * Example.fps))
    return run_main(Example, argv, "Bounded and filtered tension commands on two hanging loads.", frames)


if __name__ == "__main__":
    main()
