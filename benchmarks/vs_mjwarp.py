"""Side by side with MuJoCo Warp on an articulated tendon scene (issue 29): agreement first, then
world-steps per second.

The model is an MJCF file both engines read (default: the benchmark arm shared with peers,
``benchmarks/models/tendon_arm.xml``: three joints, a spatial tendon over a cylinder drum with a side site,
two pulley branches, a fixed coupling tendon, dead-band springs, limits, friction and two tendon
actuators, contacts off, 2 ms step).

1. **Agreement.** From the same state (joint velocities ~ N(0, 0.5) rad/s per seed, controls uniform
   in their ctrlrange, held), 0.5 s of C MuJoCo (``mujoco``) against ours (SolverXPBD, SolverVBD, at
   each ``--iterations`` count): the largest and the RMS joint-coordinate difference, the largest
   tendon-length difference relative to max(|L|, 0.1) (MuJoCo's lengths refreshed at the end pose of
   each step, ``mj_fwdPosition``), and each solver's convergence error, the largest joint difference
   from the same solver at ``REFERENCE_ITERATIONS``. The engines integrate differently (MuJoCo:
   semi-implicit Euler with a soft constraint solver; ours: position-level XPBD/VBD with hard rows),
   so the differences are first order in the step; the table says how large they are and how much
   of them more iterations would remove, it is not a pass/fail.
2. **Throughput.** World-steps per second at each world count, every world with its own random
   joint velocities and controls: ours (both solvers, each iteration count) and MuJoCo Warp
   (``mujoco_warp``, the optional ``bench`` extra; skipped with a note when it is missing). Both
   engines' steps are captured once (``wp.ScopedCapture``, also on the CPU, where Warp records the
   launches) and replayed; the fastest of three chunks counts (``_common.time_two_steps``).

Usage:
    python benchmarks/vs_mjwarp.py --device cpu --worlds 1,64,1024,4096 --iterations 8,4
    python benchmarks/vs_mjwarp.py --device cuda:0 --worlds 1024,16384,65536
    python benchmarks/vs_mjwarp.py --model .../dm_control/suite/point_mass.xml
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
    return write_controls(mj, info, ctrl, model.control())


def write_controls(mj, info, ctrl, control):
    """Write MuJoCo controls ``ctrl`` [worlds, nu] into ``control`` world by world, through each
    actuator's ``scale * ctrl + offset`` (``MjcfActuator``); returns ``control``."""
    import mujoco

    worlds = ctrl.shape[0]
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


def _trajectories(path: str, solver: str, device: str, iterations: int, mj, qvel, ctrl, steps: int):
    """Our joint coordinates and tendon lengths after each of ``steps`` steps from MuJoCo's inputs
    (one world), each as a dict keyed by MuJoCo's joint and tendon names."""
    model, sim, info = our_model(path, 1, solver, device, iterations)
    s0, s1 = model.state(), model.state()
    control = set_our_inputs(mj, model, info, qvel, ctrl, s0)
    qs, ls = [], []
    for _ in range(steps):
        sim.step(s0, s1, control, None, mj.opt.timestep)
        s0, s1 = s1, s0
        ours = nt.eval_joint_coordinates(model, s0)[0].numpy()
        qs.append({name: float(ours[qi]) for name, (qi, _di) in info.joint_coords.items()})
        sim.update_geometry(s0)
        length = sim.transmission_length.numpy()
        ls.append({name: float(length[t]) for name, t in info.tendons.items()})
    return qs, ls


REFERENCE_ITERATIONS = 128
"""Iterations of the converged run the ``converged`` column measures against."""


def agreement(
    path: str, device: str, iterations, seconds: float = 0.5, seeds: int = 3, reference: bool = True
) -> list[dict]:
    """Per solver and iteration count, over ``seconds`` from ``seeds`` random states: the largest and
    the RMS joint-coordinate difference from C MuJoCo [rad or m], the largest tendon-length difference
    relative to max(|L|, 0.1), and (``reference``) the largest joint-coordinate difference from the
    same solver at ``REFERENCE_ITERATIONS`` iterations: the part of the difference that more
    iterations would remove (the convergence error), as opposed to the models' own differences."""
    import mujoco

    iterations = [iterations] if isinstance(iterations, int) else list(iterations)
    mj = mujoco.MjModel.from_xml_path(path)
    steps = round(seconds / mj.opt.timestep)
    runs = []
    for seed in range(seeds):
        qvel, ctrl = random_inputs(mj, 1, seed)
        data = mujoco.MjData(mj)
        data.qvel[:] = qvel[0]
        data.ctrl[:] = ctrl[0]
        mq, ml = [], []
        for _ in range(steps):
            mujoco.mj_step(mj, data)
            # mj_step leaves ten_length at the step's start pose; the end pose's, as ours report.
            mujoco.mj_fwdPosition(mj, data)
            mq.append({n: data.qpos[mj.jnt_qposadr[j]] for j, n in _names(mj, mujoco.mjtObj.mjOBJ_JOINT)})
            ml.append({n: data.ten_length[i] for i, n in _names(mj, mujoco.mjtObj.mjOBJ_TENDON)})
        runs.append((qvel, ctrl, mq, ml))
    rows = []
    for solver in ("xpbd", "vbd"):
        refs = []
        if reference:
            refs = [
                _trajectories(path, solver, device, REFERENCE_ITERATIONS, mj, qvel, ctrl, steps)[0]
                for qvel, ctrl, _mq, _ml in runs
            ]
        for it in iterations:
            dq, dl, dc = [], [0.0], [0.0]
            for k, (qvel, ctrl, mq, ml) in enumerate(runs):
                qs, ls = _trajectories(path, solver, device, it, mj, qvel, ctrl, steps)
                for n in range(steps):
                    dq += [qs[n][name] - mq[n][name] for name in qs[n] if name in mq[n]]
                    dl += [abs(ls[n][name] - ml[n][name]) / max(abs(ml[n][name]), 0.1) for name in ls[n]]
                    if refs:
                        dc += [abs(qs[n][name] - refs[k][n][name]) for name in qs[n]]
            dq = np.abs(np.array(dq or [0.0]))
            rows.append(
                {
                    "solver": solver,
                    "iterations": it,
                    "joint": float(dq.max()),
                    "joint_rms": float(np.sqrt(np.mean(dq**2))),
                    "tendon": float(max(dl)),
                    "converged": float(max(dc)) if refs else None,
                    "seconds": seconds,
                    "seeds": seeds,
                }
            )
    return rows


def _names(mj, kind):
    import mujoco

    count = {mujoco.mjtObj.mjOBJ_JOINT: mj.njnt, mujoco.mjtObj.mjOBJ_TENDON: mj.ntendon}[kind]
    return [(i, mujoco.mj_id2name(mj, kind, i)) for i in range(count)]


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
    p.add_argument("--iterations", default="8,4", help="comma-separated iteration counts of our solvers (default: 8,4)")
    p.add_argument("--skip-agreement", action="store_true")
    a = p.parse_args(argv)
    wp.config.quiet = True
    if not os.path.isfile(a.model):
        p.error(f"--model {a.model!r} does not exist")
    iterations = [int(i) for i in str(a.iterations).split(",")]
    if not a.skip_agreement:
        print(f"agreement with C MuJoCo over 0.5 s, 3 random states ({a.model}):")
        print(
            f"{'solver':>7} {'iters':>6} {'joint max |dq|':>15} {'joint rms':>10} {'tendon max rel':>15} "
            f"{f'|dq| to {REFERENCE_ITERATIONS} it':>14}"
        )
        for row in agreement(a.model, a.device, iterations):
            print(
                f"{row['solver']:>7} {row['iterations']:>6} {row['joint']:15.3e} {row['joint_rms']:10.3e} "
                f"{row['tendon']:15.3e} {row['converged']:14.3e}"
            )
    print(f"\nworld-steps/s on {a.device} (steps captured and replayed, best of 3 chunks):")
    head = "".join(f"{f'{s} {i}it':>11}" for i in iterations for s in ("XPBD", "VBD"))
    ratio = "".join(f"{f'{s} {i}/MJW':>11}" for i in iterations for s in ("XPBD", "VBD"))
    print(f"{'worlds':>7}{head} {'MJWarp':>10}{ratio}")
    missing = False
    rows = []
    for worlds in (int(w) for w in a.worlds.split(",")):
        m = mjwarp_rate(a.model, worlds, a.device, a.steps)
        missing |= m is None
        row = {"worlds": worlds, "mjwarp": m}
        for i in iterations:
            for solver in ("xpbd", "vbd"):
                row[f"{solver}_{i}"] = ours_rate(a.model, worlds, solver, a.device, i, a.steps)
        # The first iteration count's figures under the plain names, as before.
        row["xpbd"], row["vbd"] = row[f"xpbd_{iterations[0]}"], row[f"vbd_{iterations[0]}"]
        rates = "".join(f"{row[f'{s}_{i}']:11,.0f}" for i in iterations for s in ("xpbd", "vbd"))
        ms = f"{m:10,.0f}" if m else f"{'n/a':>10}"
        ratios = "".join(
            (f"{row[f'{s}_{i}'] / m:11.2f}" if m else f"{'':>11}") for i in iterations for s in ("xpbd", "vbd")
        )
        print(f"{worlds:>7}{rates} {ms}{ratios}")
        rows.append(row)
    if missing:
        print("MuJoCo Warp is not installed: pip install 'newton-tendon[bench]'")
    return rows


if __name__ == "__main__":
    main()
