"""Side by side with MuJoCo Warp on an articulated tendon scene (issue 29): agreement first, then
world-steps per second.

The model is an MJCF file both engines read (default: the benchmark arm shared with peers,
``benchmarks/models/tendon_arm.xml``: three joints, a spatial tendon over a cylinder drum with a side site,
two pulley branches, a fixed coupling tendon, dead-band springs, limits, friction and two tendon
actuators, contacts off, 2 ms step).

1. **Agreement.** From the same state (joint velocities ~ N(0, 0.5) rad/s per seed, controls uniform
   in their ctrlrange, held), 0.5 s of C MuJoCo (``mujoco``) against ours (SolverXPBD, SolverVBD):
   the largest joint-coordinate difference and the largest tendon-length difference relative to
   max(|L|, 0.1). The engines integrate differently (MuJoCo: semi-implicit Euler with a soft
   constraint solver; ours: position-level XPBD/VBD with hard rows), so the differences are first
   order in the step; the table says how large they are, it is not a pass/fail.
2. **Throughput.** World-steps per second at each world count, every world with its own random
   joint velocities and controls: ours (both solvers) and MuJoCo Warp (``mujoco_warp``, the optional
   ``bench`` extra; skipped with a note when it is missing). Both engines' steps are captured once
   (``wp.ScopedCapture``, also on the CPU, where Warp records the launches) and replayed; the
   fastest of three chunks counts (``_common.time_two_steps``).

Usage:
    python benchmarks/vs_mjwarp.py --device cpu --worlds 1,64,1024
    python benchmarks/vs_mjwarp.py --device cuda:0 --worlds 1024,16384,65536
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import warp as wp

import newton_tendon as nt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find _common
from _common import make_solver, time_two_steps  # noqa: E402

DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "tendon_arm.xml"
"""A copy of the arm shared with peers (``shared/bench/tendon_arm.xml``)."""
QVEL_SCALE = 0.5
"""Standard deviation of the random joint velocities [rad/s or m/s] (the issue's setting)."""


def random_inputs(mj, worlds: int, seed: int):
    """Per world: joint velocities ~ N(0, QVEL_SCALE) and controls uniform in ctrlrange (0 where
    unlimited)."""
    rng = np.random.default_rng(seed)
    qvel = rng.normal(0.0, QVEL_SCALE, (worlds, mj.nv))
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], 0.0)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 0.0)
    ctrl = rng.uniform(lo, hi, (worlds, mj.nu))
    return qvel, ctrl


def our_model(path: str, worlds: int, solver: str, device: str, iterations: int):
    """Our model of ``worlds`` copies of the file, its solver and import info (of one copy)."""
    one = nt.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = one.add_mjcf(path)
    b = nt.ModelBuilder()
    b.replicate(one, worlds)
    model, sim, _ = make_solver(nt, b, solver, device, iterations)
    return model, sim, info


def set_our_inputs(mj, model, info, qvel, ctrl, state):
    """Our joint velocities and controls from MuJoCo's, world by world (qpos stays qpos0)."""
    import mujoco

    worlds = qvel.shape[0]
    dofs_per_world = model.joint_dof_count // worlds
    q = model.joint_q.numpy().copy()
    qd = np.zeros(model.joint_dof_count, dtype=np.float32)
    for j in range(mj.njnt):
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)
        if name not in info.joint_coords:
            continue
        _qi, di = info.joint_coords[name]
        for w in range(worlds):
            qd[w * dofs_per_world + di] = qvel[w, mj.jnt_dofadr[j]]
    nt.eval_fk(
        model, wp.array(q, dtype=float, device=model.device), wp.array(qd, dtype=float, device=model.device), state
    )
    control = model.control()
    arrays = {}
    for name, act in info.actuators.items():
        i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
        values = arrays.setdefault(act.control, getattr(control, act.control).numpy())
        per_world = len(values) // worlds
        for w in range(worlds):
            values[w * per_world + act.index] = act.scale * ctrl[w, i] + act.offset
    for key, values in arrays.items():
        getattr(control, key).assign(values)
    return control


def agreement(path: str, device: str, iterations: int, seconds: float = 0.5, seeds: int = 3) -> list[dict]:
    """Largest joint and tendon-length differences against C MuJoCo over ``seconds``, per solver."""
    import mujoco

    mj = mujoco.MjModel.from_xml_path(path)
    steps = round(seconds / mj.opt.timestep)
    rows = []
    for solver in ("xpbd", "vbd"):
        worst_q = worst_l = 0.0
        for seed in range(seeds):
            qvel, ctrl = random_inputs(mj, 1, seed)
            data = mujoco.MjData(mj)
            data.qvel[:] = qvel[0]
            data.ctrl[:] = ctrl[0]
            model, sim, info = our_model(path, 1, solver, device, iterations)
            s0, s1 = model.state(), model.state()
            control = set_our_inputs(mj, model, info, qvel, ctrl, s0)
            coords = {
                name: info.joint_coords[name][0]
                for name in (mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt))
                if name in info.joint_coords
            }
            for _ in range(steps):
                mujoco.mj_step(mj, data)
                sim.step(s0, s1, control, None, mj.opt.timestep)
                s0, s1 = s1, s0
                ours = nt.eval_joint_coordinates(model, s0)[0].numpy()
                for name, qi in coords.items():
                    j = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, name)
                    worst_q = max(worst_q, abs(float(ours[qi]) - data.qpos[mj.jnt_qposadr[j]]))
                sim.update_geometry(s0)
                length = sim.transmission_length.numpy()
                for name, t in info.tendons.items():
                    i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_TENDON, name)
                    ref = data.ten_length[i]
                    worst_l = max(worst_l, abs(float(length[t]) - ref) / max(abs(ref), 0.1))
        rows.append({"solver": solver, "joint": worst_q, "tendon": worst_l, "seconds": seconds, "seeds": seeds})
    return rows


def ours_rate(path: str, worlds: int, solver: str, device: str, iterations: int, steps: int) -> float:
    import mujoco

    mj = mujoco.MjModel.from_xml_path(path)
    model, sim, info = our_model(path, worlds, solver, device, iterations)
    s0, s1 = model.state(), model.state()
    qvel, ctrl = random_inputs(mj, worlds, 29)
    control = set_our_inputs(mj, model, info, qvel, ctrl, s0)
    dt = mj.opt.timestep

    def two_steps():
        sim.step(s0, s1, control, None, dt)
        sim.step(s1, s0, control, None, dt)

    return time_two_steps(two_steps, device, steps, worlds, graph=True)["world_steps_per_s"]


def mjwarp_rate(path: str, worlds: int, device: str, steps: int) -> float | None:
    try:
        import mujoco
        import mujoco_warp as mjw
    except ImportError:
        return None
    mj = mujoco.MjModel.from_xml_path(path)
    qvel, ctrl = random_inputs(mj, worlds, 29)
    with wp.ScopedDevice(device):
        m = mjw.put_model(mj)
        d = mjw.put_data(mj, mujoco.MjData(mj), nworld=worlds)
        d.qvel.assign(qvel.astype(np.float32))
        d.ctrl.assign(ctrl.astype(np.float32))

        def two_steps():
            mjw.step(m, d)
            mjw.step(m, d)

        return time_two_steps(two_steps, device, steps, worlds, graph=True)["world_steps_per_s"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=str(DEFAULT_MODEL), help="MJCF file both engines read")
    p.add_argument("--device", default="cpu")
    p.add_argument("--worlds", default="1,64,1024", help="comma-separated world counts")
    p.add_argument("--steps", type=int, default=300, help="timed steps per row (three chunks)")
    p.add_argument("--iterations", type=int, default=8, help="our solvers' iterations")
    p.add_argument("--skip-agreement", action="store_true")
    a = p.parse_args(argv)
    wp.config.quiet = True
    if not os.path.isfile(a.model):
        p.error(f"--model {a.model!r} does not exist")
    if not a.skip_agreement:
        print(f"agreement with C MuJoCo over 0.5 s ({a.model}):")
        print(f"{'solver':>7} {'joint max |dq|':>15} {'tendon max rel':>15}")
        for row in agreement(a.model, a.device, a.iterations):
            print(f"{row['solver']:>7} {row['joint']:15.3e} {row['tendon']:15.3e}")
    print(f"\nworld-steps/s on {a.device} (steps captured and replayed, best of 3 chunks):")
    print(f"{'worlds':>7} {'XPBD':>10} {'VBD':>10} {'MJWarp':>10} {'XPBD/MJW':>9} {'VBD/MJW':>9}")
    missing = False
    rows = []
    for worlds in (int(w) for w in a.worlds.split(",")):
        x = ours_rate(a.model, worlds, "xpbd", a.device, a.iterations, a.steps)
        v = ours_rate(a.model, worlds, "vbd", a.device, a.iterations, a.steps)
        m = mjwarp_rate(a.model, worlds, a.device, a.steps)
        missing |= m is None
        ms = f"{m:10,.0f}" if m else f"{'n/a':>10}"
        rx = f"{x / m:9.2f}" if m else f"{'':>9}"
        rv = f"{v / m:9.2f}" if m else f"{'':>9}"
        print(f"{worlds:>7} {x:10,.0f} {v:10,.0f} {ms} {rx} {rv}")
        rows.append({"worlds": worlds, "xpbd": x, "vbd": v, "mjwarp": m})
    if missing:
        print("MuJoCo Warp is not installed: pip install 'newton-tendon[bench]'")
    return rows


if __name__ == "__main__":
    main()
