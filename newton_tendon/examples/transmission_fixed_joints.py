"""A fixed tendon ``l = c1 q1 + c2 q2`` drives two revolute joints in two separate articulations.

What it shows: two wheels (links with I_z = 0.2 kg m^2), each on its own revolute joint to the
world about +Z (two articulations), coupled only through a fixed transmission tendon with
coefficients ``c = (0.5, -0.25)`` m/rad (signed moment arms). Wheel 1 starts spinning at 1 rad/s.

* Phase 1 (0 - 0.5 s): a feedforward tendon force ``F = +2 N`` (``drive_force = 2``, lengthening).
* Phase 2 (0.5 - 1.5 s): the feedforward drops to 0 and a length servo (kp = 400 N/m,
  kv = 32 N s/m, critically damped on the tendon's effective mass) pulls ``l`` back to 0.

Physics checked (``test_final``, spec "Fixed tendons and units"):

* ``l`` reported by the solver equals ``c1 q1 + c2 q2`` from the joint coordinates at every frame;
* torque split ``tau_i = c_i F``: in phase 1 the angular accelerations are ``c_i F / I`` =
  5 and -2.5 rad/s^2;
* a fixed tendon does not lock its joints: its force acts only along ``c`` in joint space, so
  ``c2 I q1' - c1 I q2'`` (the momentum orthogonal to ``c``) is conserved through both phases, and
  once the servo has brought ``l`` to 0 and ``l'`` to 0 the wheels keep turning at
  ``q' = K / (I |c|^2) (c2, -c1)`` = (0.2, 0.4) rad/s with the servo force back to 0.

Limitation shown in ``docs/transmission.md``: a revolute coordinate is measured from the relative
rotation and wraps at +-pi, so this example keeps both angles inside (-pi, pi).

Run:
    python -m newton_tendon.examples.transmission_fixed_joints
    python -m newton_tendon.examples.transmission_fixed_joints --worlds 16 --device cuda:0
"""

from __future__ import annotations

import numpy as np

from ._transmission_common import TransmissionExample, run_main

COEFFICIENTS = (0.5, -0.25)
"""Fixed-tendon coefficients [m/rad]."""
INERTIA = 0.2
"""Wheel moment of inertia about the joint axis [kg m^2] (COM on the axis)."""
SPIN = (1.0, 0.0)
"""Initial joint rates [rad/s]."""
FORCE = 2.0
"""Phase-1 feedforward tendon force [N] (positive lengthens)."""
KP = 400.0
"""Phase-2 position gain [N/m]."""
KV = 32.0
"""Phase-2 velocity gain [N s/m]: 2 sqrt(kp m_eff), m_eff = 1/sum(c_i^2/I) = 0.64 kg."""
SWITCH_TIME = 0.5
"""Start of phase 2 [s]."""
END_TIME = 1.5
"""Default run length [s]."""


def null_space_rates() -> np.ndarray:
    """Joint rates [rad/s] left once l' = 0: the conserved c-orthogonal momentum, spread along (c2, -c1)."""
    c1, c2 = COEFFICIENTS
    k = c2 * SPIN[0] - c1 * SPIN[1]  # (c2 I q1' - c1 I q2') / I, conserved
    return k / (c1 * c1 + c2 * c2) * np.array([c2, -c1])


class Example(TransmissionExample):
    """Two revolute wheels coupled by a fixed tendon, in ``world_count`` worlds."""

    name = "transmission_fixed_joints"
    fps = 50
    substeps = 20  # dt = 1e-3 s
    min_time = END_TIME

    def build_world(self, nt):
        world = nt.ModelBuilder()
        self.wheels = []
        joints = []
        for i, x in enumerate((0.0, 1.0)):
            wheel = world.add_link(
                xform=(x, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
                mass=1.0,
                inertia=np.diag([0.1, 0.1, INERTIA]),
                label=f"wheel_{i + 1}",
                velocity=(0.0, 0.0, 0.0, 0.0, 0.0, SPIN[i]),
            )
            j = world.add_joint_revolute(-1, wheel, parent_xform=(x, 0.0, 1.0, 0, 0, 0, 1), axis=(0.0, 0.0, 1.0))
            world.add_articulation([j], label=f"wheel_{i + 1}")  # one articulation per wheel
            self.wheels.append(wheel)
            joints.append(j)
        world.add_fixed_tendon(joints, list(COEFFICIENTS), label="differential", drive_force=FORCE, target_length=0.0)
        return world

    def setup(self, nt):
        import warp as wp

        self._nt = nt
        self._q = wp.zeros(self.model.joint_coord_count, dtype=float, device=self.device)
        self._qd = wp.zeros(self.model.joint_dof_count, dtype=float, device=self.device)

    def joint_coordinates(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint angles [rad] and rates [rad/s], shape [world_count, 2] each."""
        self._nt.eval_joint_coordinates(self.model, self.state_0, self._q, self._qd)
        q = self._q.numpy().astype(np.float64).reshape(self.world_count, 2)
        qd = self._qd.numpy().astype(np.float64).reshape(self.world_count, 2)
        return q, qd

    def before_frame(self):
        if abs(self.sim_time - SWITCH_TIME) < 0.5 * self.frame_dt:
            self.set_control("drive_force", 0.0)
            self.set_control("position_gain", KP)
            self.set_control("velocity_gain", KV)

    def after_frame(self):
        q, qd = self.joint_coordinates()
        self.record(
            q=q,
            qd=qd,
            length=self.report("length")[:, 0],
            velocity=self.report("velocity")[:, 0],
            force=self.report("force")[:, 0],
            actuation_force=self.report("actuation_force")[:, 0],
        )

    def table(self):
        h = self.history_arrays()
        t = h["t"]
        c = np.asarray(COEFFICIENTS)
        k = int(np.argmin(np.abs(t - min(SWITCH_TIME, t[-1]))))
        alpha = (h["qd"][k, 0] - np.asarray(SPIN)) / t[k]
        rows = [
            ("length l (solver)", h["length"][-1, 0], float(c @ h["q"][-1, 0]), "m"),
            (f"alpha_1 t<={t[k]:.2f}", alpha[0], c[0] * FORCE / INERTIA, "rad/s^2"),
            (f"alpha_2 t<={t[k]:.2f}", alpha[1], c[1] * FORCE / INERTIA, "rad/s^2"),
            ("torque_1 = I alpha_1", INERTIA * alpha[0], c[0] * FORCE, "N m"),
            ("torque_2 = I alpha_2", INERTIA * alpha[1], c[1] * FORCE, "N m"),
        ]
        if t[-1] >= END_TIME - 1e-9:
            rates = null_space_rates()
            rows += [
                ("final length", h["length"][-1, 0], 0.0, "m"),
                ("final q1'", h["qd"][-1, 0, 0], rates[0], "rad/s"),
                ("final q2'", h["qd"][-1, 0, 1], rates[1], "rad/s"),
                ("final servo force", h["actuation_force"][-1, 0], 0.0, "N"),
            ]
        return rows

    def test_final(self):
        """l = c . q every frame; phase-1 accelerations c_i F / I; null-space momentum conserved and kept."""
        assert self.sim_time >= self.min_time - 1e-9, f"run at least {self.min_time} s"
        h = self.history_arrays()
        t = h["t"]
        c = np.asarray(COEFFICIENTS)
        assert np.all(np.abs(h["q"]) < 3.0), "the example keeps the joint angles inside (-pi, pi)"
        np.testing.assert_allclose(h["length"], h["q"] @ c, atol=2e-6)
        phase1 = t <= SWITCH_TIME + 1e-9
        alpha = (h["qd"][phase1] - np.asarray(SPIN)) / t[phase1, None, None]
        np.testing.assert_allclose(alpha, np.broadcast_to(c * FORCE / INERTIA, alpha.shape), rtol=1e-3)
        np.testing.assert_allclose(h["actuation_force"][phase1], FORCE, rtol=1e-6)
        # Momentum orthogonal to c: the tendon cannot change it.
        ortho = INERTIA * (c[1] * h["qd"][..., 0] - c[0] * h["qd"][..., 1])
        np.testing.assert_allclose(ortho, INERTIA * (c[1] * SPIN[0] - c[0] * SPIN[1]), atol=1e-4)
        # The servo has settled: l = 0, l' = 0, no force, and the wheels still turn.
        np.testing.assert_allclose(h["length"][-1], 0.0, atol=1e-4)
        np.testing.assert_allclose(h["qd"][-1], np.broadcast_to(null_space_rates(), h["qd"][-1].shape), atol=1e-3)
        np.testing.assert_allclose(h["force"][-1], 0.0, atol=1e-2)


def main(argv=None):
    frames = int(round(END_TIME * Example.fps))
    return run_main(Example, argv, "A fixed tendon driving two revolute joints of two articulations.", frames)


if __name__ == "__main__":
    main()
