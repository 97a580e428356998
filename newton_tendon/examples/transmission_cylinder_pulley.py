"""A route over a world cylinder plus a pulley branch of divisor 2: a 1 kg counterweight lifts 1.5 kg.

What it shows: one spatial tendon with two branches (``TendonPulley`` starts the second).

* Branch A (divisor 1): a world site, a ``TendonWrap(kind="cylinder")`` fixed in the world
  (axis +Y, radius 0.1 m, a side site above it selects the over-the-top route), and the 1.5 kg
  load hanging straight below the cylinder's right edge.
* Branch B (divisor 2): a world site and a 1 kg counterweight hanging straight below it.

The tendon length ``l = s_A + s_B / 2`` is locked at its initial value (``lower_limit ==
upper_limit``, a bilateral row). Locking ``l`` makes ``ds_B/dt = -2 ds_A/dt``: the counterweight
moves twice as far as the load and carries half the tension, a 2:1 mechanical advantage, so 1 kg
descending lifts 1.5 kg.

Physics checked (``test_final``, spec "Sphere and cylinder wrapping", "Pulley branches and
mechanical advantage"):

* the solver's length equals an independent NumPy evaluation of ``s_A + s_B/2`` (tangent, arc on
  the selected side, tangent, ``sqrt(s_perp^2 + dz^2)`` for the cylinder) at every frame, and the
  reference length captured at finalize equals it at the initial pose;
* ``l`` stays locked and the accelerations are ``a_A = g (2 m_B - m_A)/(m_A + 4 m_B) = 0.892 m/s^2``
  up and ``a_B = -2 a_A``;
* force halving: the tension from the load's motion is ``T = m_A (g + a_A) = 16.05 N`` (equal to
  the reported tension) and the counterweight's branch carries ``m_B (g + a_B) = T/2``; the
  length gradient on the counterweight has norm 1/2, on the load 1.

Run:
    python -m newton_tendon.examples.transmission_cylinder_pulley
    python -m newton_tendon.examples.transmission_cylinder_pulley --worlds 16 --device cuda:0
"""

from __future__ import annotations

import math

import numpy as np

from ._transmission_common import GRAVITY, TransmissionExample, run_main

CYLINDER_CENTER = np.array([0.0, 0.0, 2.0])
"""Point on the cylinder axis [m] (world)."""
CYLINDER_AXIS = np.array([0.0, 1.0, 0.0])
"""Cylinder axis (world)."""
RADIUS = 0.1
"""Wrapping radius [m]."""
SIDE_SITE = np.array([0.0, 0.0, 2.5])
"""Side site [m]: above the cylinder, so the route goes over the top."""
START_SITE = np.array([-0.6, 0.0, 1.4])
"""First site of branch A [m] (world)."""
LOAD_START = np.array([RADIUS, 0.0, 1.0])
"""Initial load position [m]: straight below the cylinder's right edge."""
B_ANCHOR = np.array([1.0, 0.0, 2.5])
"""World site of branch B [m]."""
COUNTER_START = np.array([1.0, 0.0, 1.5])
"""Initial counterweight position [m]: straight below its anchor."""
DIVISOR = 2.0
"""Divisor of branch B."""
M_LOAD = 1.5
"""Load mass [kg] (branch A)."""
M_COUNTER = 1.0
"""Counterweight mass [kg] (branch B)."""
A_LOAD = GRAVITY * (DIVISOR * M_COUNTER - M_LOAD) / (M_LOAD + DIVISOR**2 * M_COUNTER)
"""Load acceleration [m/s^2] (up) with the length locked."""
A_COUNTER = -DIVISOR * A_LOAD
"""Counterweight acceleration [m/s^2] (down)."""
TENSION = M_LOAD * (GRAVITY + A_LOAD)
"""Tendon tension T [N]; branch B carries T / DIVISOR."""


# NumPy reference -------------------------------------------------------------------------------


def cylinder_route_length(a, b, center, axis, radius, side) -> float:
    """Length [m] of the route a -> cylinder -> b wrapping on the side selected by the exterior side
    site (tangent, arc, tangent in the plane perpendicular to the axis, then sqrt(s_perp^2 + dz^2))."""
    n = np.asarray(axis, dtype=np.float64)
    n = n / np.linalg.norm(n)
    e1 = np.cross(n, [1.0, 0.0, 0.0])
    if np.linalg.norm(e1) < 1e-6:
        e1 = np.cross(n, [0.0, 0.0, 1.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)

    def planar(p):
        d = np.asarray(p, dtype=np.float64) - center
        return np.array([d @ e1, d @ e2]), d @ n

    pa, za = planar(a)
    pb, zb = planar(b)
    ps, _ = planar(side)
    # Winding of a -> side site -> b: +1 counter-clockwise, -1 clockwise.
    u, v = ps - pa, pb - pa
    sigma = 1.0 if u[0] * v[1] - u[1] * v[0] > 0.0 else -1.0
    da, db = np.linalg.norm(pa), np.linalg.norm(pb)
    assert da > radius and db > radius, "endpoints must lie outside the cylinder"
    # Tangent points: leave a turning with the winding, arrive at b likewise.
    ta = math.atan2(pa[1], pa[0]) + sigma * math.acos(radius / da)
    tb = math.atan2(pb[1], pb[0]) - sigma * math.acos(radius / db)
    arc = (sigma * (tb - ta)) % (2.0 * math.pi)
    s_perp = math.sqrt(da * da - radius * radius) + radius * arc + math.sqrt(db * db - radius * radius)
    return math.sqrt(s_perp * s_perp + (zb - za) ** 2)


def reference_length(load, counter) -> float:
    """l = s_A + s_B / 2 [m] for load and counterweight positions (NumPy, float64)."""
    s_a = cylinder_route_length(START_SITE, load, CYLINDER_CENTER, CYLINDER_AXIS, RADIUS, SIDE_SITE)
    s_b = float(np.linalg.norm(np.asarray(counter) - B_ANCHOR))
    return s_a + s_b / DIVISOR


class Example(TransmissionExample):
    """Cylinder route plus a divisor-2 pulley branch with a locked length, in ``world_count`` worlds."""

    name = "transmission_cylinder_pulley"
    fps = 50
    substeps = 20  # dt = 1e-3 s
    min_time = 1.0

    def build_world(self, nt):
        from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

        world = nt.ModelBuilder()
        inertia = np.eye(3) * 1.0e-3
        self.load = world.add_body(xform=(*LOAD_START, 0, 0, 0, 1), mass=M_LOAD, inertia=inertia, label="load")
        self.counter = world.add_body(
            xform=(*COUNTER_START, 0, 0, 0, 1), mass=M_COUNTER, inertia=inertia, label="counterweight"
        )
        self.l0 = reference_length(LOAD_START, COUNTER_START)
        world.add_spatial_tendon(
            [
                TendonSite(body=-1, offset=tuple(START_SITE)),
                TendonWrap(
                    kind="cylinder",
                    body=-1,
                    offset=tuple(CYLINDER_CENTER),
                    axis=tuple(CYLINDER_AXIS),
                    radius=RADIUS,
                    side=TendonSite(body=-1, offset=tuple(SIDE_SITE)),
                ),
                TendonSite(body=self.load),
                TendonPulley(divisor=DIVISOR),
                TendonSite(body=-1, offset=tuple(B_ANCHOR)),
                TendonSite(body=self.counter),
            ],
            label="hoist",
            lower_limit=self.l0,
            upper_limit=self.l0,  # a bilateral lock at the initial length
        )
        return world

    def setup(self, nt):
        # World-fixed sites follow each world's placement on the grid; element 4 of each world's
        # path is branch B's world site, so its offset gives that world's shift.
        offsets = self.model.transmission_path.offset.numpy().astype(np.float64)
        self.world_shift = offsets[4 :: len(offsets) // self.world_count] - B_ANCHOR

    def local_positions(self):
        """Load and counterweight positions [m] relative to each world's own placement, [world_count, 2, 3]."""
        q = self.body_q()
        pos = q[:, [self.load, self.counter], :3]
        return pos - self.world_shift[:, None, :]

    def after_frame(self):
        pos = self.local_positions()
        jac = self.solver.transmission_jacobian.numpy().astype(np.float64)
        body = self.solver.transmission_jacobian_body.numpy()
        grad_load = [np.linalg.norm(jac[body == b][:, :3].sum(axis=0)) for b in self.per_world(self.load)]
        grad_counter = [np.linalg.norm(jac[body == b][:, :3].sum(axis=0)) for b in self.per_world(self.counter)]
        self.record(
            length=self.report("length")[:, 0],
            numpy_length=[reference_length(p[0], p[1]) for p in pos],
            tension=self.report("tension")[:, 0],
            load_vz=self.body_qd()[:, self.load, 2],
            counter_vz=self.body_qd()[:, self.counter, 2],
            load_z=pos[:, 0, 2],
            counter_z=pos[:, 1, 2],
            grad_load=grad_load,
            grad_counter=grad_counter,
        )

    def table(self):
        h = self.history_arrays()
        t = h["t"][-1]
        a_load = h["load_vz"][-1, 0] / t
        a_counter = h["counter_vz"][-1, 0] / t
        return [
            ("reference length (model)", float(self.model.transmission_reference_length.numpy()[0]), self.l0, "m"),
            ("length (solver)", h["length"][-1, 0], h["numpy_length"][-1, 0], "m"),
            ("load rise", h["load_z"][-1, 0] - LOAD_START[2], 0.5 * A_LOAD * t * t, "m"),
            ("counterweight drop", COUNTER_START[2] - h["counter_z"][-1, 0], -0.5 * A_COUNTER * t * t, "m"),
            ("load acceleration", a_load, A_LOAD, "m/s^2"),
            ("counterweight acceleration", a_counter, A_COUNTER, "m/s^2"),
            ("tension (reported, last step)", h["tension"][-1, 0], TENSION, "N"),
            ("tension (reported, frame mean)", h["tension"][:, 0].mean(), TENSION, "N"),
            ("branch A force m_A (g + a_A)", M_LOAD * (GRAVITY + a_load), TENSION, "N"),
            ("branch B force m_B (g + a_B)", M_COUNTER * (GRAVITY + a_counter), TENSION / DIVISOR, "N"),
            ("|dl/dx| load", h["grad_load"][-1, 0], 1.0, "-"),
            ("|dl/dx| counterweight", h["grad_counter"][-1, 0], 1.0 / DIVISOR, "-"),
        ]

    def test_final(self):
        """NumPy length at every frame, the lock, the 2:1 accelerations and the halved branch force."""
        assert self.sim_time >= self.min_time - 1e-9, f"run at least {self.min_time} s"
        h = self.history_arrays()
        t = h["t"]
        ref = self.model.transmission_reference_length.numpy().astype(np.float64)
        np.testing.assert_allclose(ref, self.l0, rtol=1e-6)
        # float32 geometry of a ~3 m route: a few ulps.
        np.testing.assert_allclose(h["length"], h["numpy_length"], rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(h["length"], self.l0, atol=1e-4)
        # The load really went up and the counterweight down, 2:1. VBD updates the two bodies in
        # sequence, so its hard lock row converges more slowly over the first frames (measured
        # 0.64 % at 20 ms, 0.2 % by 0.1 s): 1 % for VBD's per-frame rates.
        rate_tol = 2e-3 if self.solver_name == "xpbd" else 1e-2
        np.testing.assert_allclose(h["load_z"][-1] - LOAD_START[2], 0.5 * A_LOAD * t[-1] ** 2, rtol=rate_tol)
        np.testing.assert_allclose(h["load_vz"] / t[:, None], A_LOAD, rtol=rate_tol)
        np.testing.assert_allclose(h["counter_vz"] / t[:, None], A_COUNTER, rtol=rate_tol)
        # The lock's position correction beta (l_ref - l_n)/h sees the float32 length, whose ulp
        # (2.4e-7 m at 2.6 m) is worth beta ulp / (h^2 W) = 0.05 N of force: each step's tension
        # carries a few such quanta of noise (more in worlds placed farther out); the frame mean is
        # the physical tension.
        np.testing.assert_allclose(h["tension"], TENSION, rtol=1e-2)
        np.testing.assert_allclose(h["tension"].mean(axis=0), TENSION, rtol=1e-3)
        a_load = h["load_vz"][-1] / t[-1]
        a_counter = h["counter_vz"][-1] / t[-1]
        branch_a = M_LOAD * (GRAVITY + a_load)
        branch_b = M_COUNTER * (GRAVITY + a_counter)
        np.testing.assert_allclose(branch_b, branch_a / DIVISOR, rtol=2e-3)
        np.testing.assert_allclose(h["grad_load"], 1.0, rtol=1e-5)
        np.testing.assert_allclose(h["grad_counter"], 1.0 / DIVISOR, rtol=1e-5)


def main(argv=None):
    return run_main(Example, argv, "A cylinder route plus a divisor-2 pulley branch lifting a load.", 50)


if __name__ == "__main__":
    main()
