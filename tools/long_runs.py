"""Long runs (issue 9): 10 simulated minutes of the capstan and the suspended-load examples, both solvers.

Checks, per world, over the whole run:

* cable material: ``tendon_total_cable`` of the capstan cable stays within 1e-4 relative of its start
  (the cable is inextensible and material only moves across the roller);
* energy of the passive scenes (no drive, no command, no external work): kinetic + gravitational +
  spring energy never exceeds its start by more than ``ENERGY_TOL`` of the scene's energy scale.
  The capstan worlds are passive; the suspended load's constant 2 N tension command is a conservative
  force with potential ``-u l``, which the total includes.

Usage: ``python tools/long_runs.py [--minutes 10] [--solver xpbd|vbd|both] [--device cpu]``; prints a
table and exits non-zero if a check fails (about 13 minutes on 2 cores; ``.ci/run`` runs it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import warp as wp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CABLE_RTOL = 1.0e-4
"""Largest relative change of a routed cable's material over the run (issue 9)."""
ENERGY_TOL = 1.0e-3
"""Largest energy growth, as a fraction of the energy scale m g h (float32 stepping: positions carry
~1e-7 relative rounding per step; XPBD and VBD dissipate, so any growth is rounding)."""


def _rotate_inv(q, v):
    """Rotate world vectors v [n, 3] into the body frames of unit quaternions q [n, 4] (x, y, z, w)."""
    u, w = -q[:, :3], q[:, 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _rotate(q, v):
    """Rotate body vectors v [n, 3] by unit quaternions q [n, 4] (x, y, z, w)."""
    u, w = q[:, :3], q[:, 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def _energy(model, state, g=9.81):
    """Per-body kinetic (COM translation + rotation with the body-frame inertia) + gravitational
    (COM height) energy [J]; body_qd holds the COM velocity and the world angular velocity."""
    mass = model.body_mass.numpy().astype(np.float64)
    inertia = model.body_inertia.numpy().astype(np.float64)
    com = model.body_com.numpy().astype(np.float64)
    body_q = state.body_q.numpy().astype(np.float64)
    qd = state.body_qd.numpy().astype(np.float64)
    rot = body_q[:, 3:]
    z_com = (body_q[:, :3] + _rotate(rot, com))[:, 2]
    w_body = _rotate_inv(rot, qd[:, 3:])
    rot_ke = 0.5 * np.einsum("ni,nij,nj->n", w_body, inertia, w_body)
    return 0.5 * mass * np.sum(qd[:, :3] ** 2, axis=1) + rot_ke + mass * g * z_com


SWING = 0.3
"""Initial sideways speed [m/s] of the second weight: it swings under the roller, so the wrap angle and
the material on either side of the roller change all run long."""


def run_capstan(solver: str, minutes: float, device):
    """The capstan example's three worlds (roller mu = 0, 0.2, 0.5) with equal 1 kg weights, so no
    weight runs into the roller (with the example's 3:1 masses one reaches it within 3 s, after which
    the route is degenerate: an end anchor on the roller), and the second weight swinging in the
    roller's plane."""
    import newton_tendon.examples.cable_capstan as capstan

    masses = capstan.M1, capstan.M2
    capstan.M1 = capstan.M2 = 1.0
    try:
        ex = capstan.Example(device=device, solver=solver)
    finally:
        capstan.M1, capstan.M2 = masses
    ex.after_frame = lambda: None
    qd = ex.state_0.body_qd.numpy()
    qd[ex.light, 0] = SWING
    ex.state_0.body_qd.assign(qd)
    m = ex.model
    mass = m.body_mass.numpy().astype(np.float64)
    frames = int(round(minutes * 60.0 * ex.fps))
    ex.step()
    cable0 = ex.solver.tendon_total_cable.numpy().astype(np.float64)
    e0 = _energy(m, ex.state_0).reshape(ex.world_count, -1).sum(axis=1)
    scale = (mass * 9.81 * 2.0).reshape(ex.world_count, -1).sum(axis=1)  # m g h with h ~ 2 m
    drift = np.zeros(ex.world_count)
    growth = np.zeros(ex.world_count)
    e = e0
    for _ in range(frames - 1):
        ex.step()
        cable = ex.solver.tendon_total_cable.numpy().astype(np.float64)
        drift = np.maximum(drift, np.abs(cable - cable0) / cable0)
        e = _energy(m, ex.state_0).reshape(ex.world_count, -1).sum(axis=1)
        growth = np.maximum(growth, (e - e0) / scale)
    finite = bool(np.all(np.isfinite(ex.state_0.body_q.numpy())))
    rows = []
    for w in range(ex.world_count):
        ok = finite and drift[w] <= CABLE_RTOL and growth[w] <= ENERGY_TOL
        rows.append((f"capstan mu={ex.mu[w]:.1f}", solver, drift[w], growth[w], (e[w] - e0[w]) / scale[w], ok))
    return rows


def run_suspended(solver: str, minutes: float, device):
    """The suspended-load example: a damped pull-only spring and a constant 2 N tension command. The
    command is a constant force u along the length, so it has the potential -u l and the total
    (bodies + spring + command potential) can only fall while the spring rings down."""
    from newton_tendon.examples.transmission_suspended_load import Example

    ex = Example(device=device, solver=solver)
    ex.after_frame = lambda: None
    m = ex.model
    frames = int(round(minutes * 60.0 * ex.fps))
    scale = float(m.body_mass.numpy().astype(np.float64).sum() * 9.81 * 2.0)
    u = ex.control.transmission_drive_force.numpy().astype(np.float64)

    def total():
        e = _energy(m, ex.state_0).sum()
        e += ex.solver.transmission_potential_energy.numpy().astype(np.float64).sum()
        return e - float((u * ex.solver.transmission_length.numpy().astype(np.float64)).sum())

    ex.step()
    e0 = e = total()
    growth = 0.0
    for _ in range(frames - 1):
        ex.step()
        e = total()
        growth = max(growth, (e - e0) / scale)
    finite = bool(np.all(np.isfinite(ex.state_0.body_q.numpy())))
    ok = finite and growth <= ENERGY_TOL
    return [("suspended load", solver, float("nan"), growth, (e - e0) / scale, ok)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="simulated minutes (default 10)")
    parser.add_argument("--solver", choices=("xpbd", "vbd", "both"), default="both")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    wp.config.quiet = True
    wp.init()
    solvers = ("xpbd", "vbd") if args.solver == "both" else (args.solver,)
    rows = []
    for solver in solvers:
        for fn in (run_capstan, run_suspended):
            t = time.perf_counter()
            out = fn(solver, args.minutes, args.device)
            for r in out:
                rows.append((*r, time.perf_counter() - t))
    print("energy is relative to m g (2 m); growth = largest rise above the first frame, change = last - first")
    header = f"{'scene':20s} {'solver':6s} {'cable drift':>12s} {'energy growth':>14s} {'energy change':>14s}"
    print(f"{header} {'ok':>4s} {'wall s':>7s}")
    for name, solver, drift, growth, change, ok, wall in rows:
        drift_text = "n/a" if np.isnan(drift) else f"{drift:.2e}"  # no routed cable in the scene
        line = f"{name:20s} {solver:6s} {drift_text:>12s} {growth:14.2e} {change:14.2e}"
        print(f"{line} {'yes' if ok else 'NO':>4s} {wall:7.1f}")
    return 0 if all(r[5] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
