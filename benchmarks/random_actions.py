"""Random actions on dm_control's suite (issue 43): what a policy does on its first day.

Every suite model with actuators, imported from the ``dm-control`` package's XML files: controls
uniform over each actuator's full control range (unlimited: [-1, 1]), resampled every 0.1 s and
different per world, 16 worlds, 2 s at the file's timestep, contacts on. Prints, per model, the
largest linear [m/s] and angular [rad/s] body speed over all worlds and steps in C MuJoCo and in
SolverXPBD and SolverVBD at their defaults, whether our state stayed finite, and how far the lowest
colliding body went below the floor (z = 0 plane where the model has one) [m]. The issue's bound:
ours <= 2 x MuJoCo + 0.5 m/s (linear) and 2 x + 5 rad/s (angular), finite, <= 2 cm under the floor.

    python benchmarks/random_actions.py [--models humanoid dog ...] [--worlds 16] [--seconds 2]
        [--iterations 8] [--substeps 1] [--solvers xpbd vbd] [--joint-solver articulation]
        [--vbd-joint-solver articulation]

``--substeps n`` steps our solvers n times per file timestep (dt / n), the cheapest of the issue's
candidates, for comparison at equal cost per step.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import newton_tendon as nt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_mjwarp import set_our_inputs, write_controls  # noqa: E402

RESAMPLE = 0.1
"""Seconds between control resamples."""


def suite_dir() -> Path:
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("random_actions: dm-control is not installed (pip install dm-control)")
    return Path(next(iter(spec.submodule_search_locations))) / "suite"


def actuated_models() -> list[str]:
    """Suite models whose file has an actuator and that C MuJoCo compiles on its own."""
    import mujoco

    names = []
    for path in sorted(suite_dir().glob("*.xml")):
        try:
            mj = mujoco.MjModel.from_xml_path(str(path))
        except Exception:  # noqa: BLE001 (assets that are not models, e.g. common/*.xml includes)
            continue
        if mj.nu > 0:
            names.append(path.stem)
    return names


def control_schedule(mj, worlds: int, steps: int, seed: int) -> np.ndarray:
    """Controls [steps, worlds, nu]: uniform in ctrlrange ([-1, 1] where unlimited), held for 0.1 s."""
    rng = np.random.default_rng(seed)
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 1.0)
    hold = max(1, round(RESAMPLE / mj.opt.timestep))
    blocks = rng.uniform(lo, hi, ((steps + hold - 1) // hold, worlds, mj.nu))
    return np.repeat(blocks, hold, axis=0)[:steps]


def mujoco_run(mj, ctrl: np.ndarray) -> dict:
    import mujoco

    lin = ang = 0.0
    floor = 0.0
    for w in range(ctrl.shape[1]):
        data = mujoco.MjData(mj)
        for k in range(ctrl.shape[0]):
            data.ctrl[:] = ctrl[k, w]
            mujoco.mj_step(mj, data)
            vel = np.zeros(6)
            for b in range(1, mj.nbody):
                mujoco.mj_objectVelocity(mj, data, mujoco.mjtObj.mjOBJ_BODY, b, vel, 0)
                ang = max(ang, float(np.linalg.norm(vel[:3])))
                lin = max(lin, float(np.linalg.norm(vel[3:])))
            floor = min(floor, float(data.xpos[1:, 2].min()))
    return {"lin": lin, "ang": ang, "finite": True, "floor": floor}


def our_run(
    path: str,
    mj,
    ctrl: np.ndarray,
    solver: str,
    iterations: int,
    substeps: int,
    joint_solver: str | None = None,
    vbd_joint_solver: str | None = None,
) -> dict:
    worlds = ctrl.shape[1]
    one = nt.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = one.add_mjcf(path)
    b = nt.ModelBuilder()
    b.replicate(one, worlds)
    if solver == "vbd":
        b.color()
    model = b.finalize("cpu")
    if solver == "xpbd":
        kw = {"joint_solver": joint_solver} if joint_solver else {}
        sim = nt.solvers.SolverXPBD(model, iterations=iterations, **kw)
    else:
        kw = {"joint_solver": vbd_joint_solver} if vbd_joint_solver else {}
        sim = nt.solvers.SolverVBD(model, iterations=iterations, **kw)
    pipeline = nt.CollisionPipeline(model)
    contacts = pipeline.contacts()
    s0, s1 = model.state(), model.state()
    qvel = np.zeros((worlds, mj.nv))
    control = set_our_inputs(mj, model, info, qvel, ctrl[0], s0)
    shape_body = model.shape_body.numpy()
    colliding = np.unique(shape_body[shape_body >= 0])
    lin = ang = 0.0
    floor = 0.0
    finite = True
    dt = mj.opt.timestep / substeps
    hold = max(1, round(RESAMPLE / mj.opt.timestep))
    for k in range(ctrl.shape[0]):
        if k > 0 and k % hold == 0:
            write_controls(mj, info, ctrl[k], control)
        for _ in range(substeps):
            pipeline.collide(s0, contacts)
            sim.step(s0, s1, control, contacts, dt)
            s0, s1 = s1, s0
        qd = s0.body_qd.numpy()
        q = s0.body_q.numpy()
        if not (np.all(np.isfinite(qd)) and np.all(np.isfinite(q))):
            finite = False
            break
        lin = max(lin, float(np.linalg.norm(qd[:, :3], axis=1).max()))
        ang = max(ang, float(np.linalg.norm(qd[:, 3:], axis=1).max()))
        if colliding.size:
            floor = min(floor, float(q[colliding, 2].min()))
    return {"lin": lin, "ang": ang, "finite": finite, "floor": floor}


def main(argv=None):
    import mujoco

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--worlds", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--substeps", type=int, default=1)
    parser.add_argument("--solvers", nargs="*", default=["xpbd", "vbd"])
    parser.add_argument("--joint-solver", default=None, help="SolverXPBD's joint_solver (default: its default)")
    parser.add_argument("--vbd-joint-solver", default=None, help="SolverVBD's joint_solver (default: its default)")
    args = parser.parse_args(argv)
    names = args.models or actuated_models()
    print(
        f"{'model':<16} {'MuJoCo lin/ang':>16} "
        + " ".join(f"{s + ' lin/ang':>22}" for s in args.solvers)
        + "   finite, lowest z [m], s"
    )
    for name in names:
        path = str(suite_dir() / f"{name}.xml")
        mj = mujoco.MjModel.from_xml_path(path)
        steps = round(args.seconds / mj.opt.timestep)
        ctrl = control_schedule(mj, args.worlds, steps, seed=43)
        ref = mujoco_run(mj, ctrl)
        cells, notes = [], []
        for solver in args.solvers:
            t0 = time.perf_counter()
            try:
                res = our_run(
                    path, mj, ctrl, solver, args.iterations, args.substeps, args.joint_solver, args.vbd_joint_solver
                )
            except Exception as exc:  # noqa: BLE001 (a model we cannot import or step is a row, not a crash)
                cells.append(f"{'error':>22}")
                notes.append(f"{solver}: {type(exc).__name__}: {exc}"[:80])
                continue
            ok = res["lin"] <= 2 * ref["lin"] + 0.5 and res["ang"] <= 2 * ref["ang"] + 5.0
            ok = ok and res["finite"] and res["floor"] >= ref["floor"] - 0.02
            cells.append(f"{res['lin']:9.3g} /{res['ang']:9.3g}{' ' if ok else '!'}")
            notes.append(f"{solver}: {res['finite']}, {res['floor']:.3f}, {time.perf_counter() - t0:.0f}")
        print(f"{name:<16} {ref['lin']:7.3g} /{ref['ang']:7.3g} " + " ".join(cells) + "   " + "; ".join(notes))


if __name__ == "__main__":
    main()
