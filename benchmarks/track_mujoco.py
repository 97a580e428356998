"""Tracking C MuJoCo on dm_control's suite under smooth controls (issue 43's tracking test, as a table).

Every suite model with actuators, gravity and contacts off in both engines, one world, from qpos0
with every limited hinge and slide at least 10 % of its range inside it (``start_qpos``):
controls ``clip(base + a (1 - cos 4 pi t) / 2)`` with base the middle of each control range ([-1, 1]
where unlimited) and amplitudes a of 15-30 % of the range with random signs, halved until no limited
joint reaches its limit in MuJoCo's run. Prints the largest hinge/slide coordinate difference [rad
or m] at 0.1, 0.25 and 0.5 s for SolverXPBD and SolverVBD at their defaults (issue 43's bound:
0.03 rad). Free and ball joints are not compared (their coordinates are quaternions).

    python benchmarks/track_mujoco.py [--models cheetah walker ...] [--iterations 8]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
import warp as wp

import newton_tendon as nt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from random_actions import actuated_models, suite_dir  # noqa: E402
from vs_mjwarp import write_controls  # noqa: E402

TIMES = (0.1, 0.25, 0.5)


def controls(mj, t: float, base: np.ndarray, amp: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.clip(base + amp * 0.5 * (1.0 - np.cos(4.0 * np.pi * t)), lo, hi)


def start_qpos(mj) -> np.ndarray:
    """qpos0 with every limited hinge and slide moved at least 10 % of its range inside the range:
    hopper, walker, humanoid, humanoid_CMU and dog have joints whose qpos0 sits on a limit, where
    MuJoCo's soft limit and our hard one part ways from the first step, and no amplitude kept them
    off it."""
    import mujoco

    q = mj.qpos0.copy()
    for j in np.flatnonzero(mj.jnt_limited):
        if mj.jnt_type[j] in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            lo_j, hi_j = mj.jnt_range[j]
            margin = 0.1 * (hi_j - lo_j)
            adr = mj.jnt_qposadr[j]
            q[adr] = np.clip(q[adr], lo_j + margin, hi_j - margin)
    return q


def mujoco_track(mj, base, amp, lo, hi):
    """MuJoCo's qpos at TIMES and whether a limited joint reached its limit."""
    import mujoco

    data = mujoco.MjData(mj)
    data.qpos[:] = start_qpos(mj)
    mujoco.mj_forward(mj, data)
    out, hit = {}, False
    steps = round(max(TIMES) / mj.opt.timestep)
    limited = np.flatnonzero(mj.jnt_limited)
    for k in range(steps):
        data.ctrl[:] = controls(mj, k * mj.opt.timestep, base, amp, lo, hi)
        mujoco.mj_step(mj, data)
        for j in limited:
            q = data.qpos[mj.jnt_qposadr[j]]
            lo_j, hi_j = mj.jnt_range[j]
            hit |= bool(q <= lo_j + 1e-3 or q >= hi_j - 1e-3)
        for t in TIMES:
            if k + 1 == round(t / mj.opt.timestep):
                out[t] = data.qpos.copy()
    return out, hit


def our_track(path: str, mj, solver: str, iterations: int, base, amp, lo, hi):
    import mujoco

    one = nt.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info = one.add_mjcf(path)
    if solver == "vbd":
        one.color()
    model = one.finalize("cpu")
    model.gravity.assign(np.zeros((model.gravity.shape[0], 3), dtype=np.float32))
    sim = (nt.solvers.SolverXPBD if solver == "xpbd" else nt.solvers.SolverVBD)(model, iterations=iterations)
    s0, s1 = model.state(), model.state()
    q0 = start_qpos(mj)
    joint_q = model.joint_q.numpy().copy()
    for j in range(mj.njnt):
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)
        hinge_or_slide = mj.jnt_type[j] in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
        if hinge_or_slide and name in info.joint_coords:
            joint_q[info.joint_coords[name][0]] = q0[mj.jnt_qposadr[j]]
    nt.eval_fk(model, wp.array(joint_q, dtype=float, device=model.device), model.joint_qd, s0)
    control = model.control()
    out = {}
    steps = round(max(TIMES) / mj.opt.timestep)
    for k in range(steps):
        u = controls(mj, k * mj.opt.timestep, base, amp, lo, hi)
        write_controls(mj, info, u[None, :], control)
        sim.step(s0, s1, control, None, mj.opt.timestep)
        s0, s1 = s1, s0
        for t in TIMES:
            if k + 1 == round(t / mj.opt.timestep):
                q = nt.eval_joint_coordinates(model, s0)[0].numpy()
                vals = {}
                for j in range(mj.njnt):
                    if mj.jnt_type[j] not in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
                        continue
                    name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)
                    if name in info.joint_coords:
                        vals[j] = float(q[info.joint_coords[name][0]])
                out[t] = vals
    return out


def main(argv=None):
    import mujoco

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--iterations", type=int, default=8)
    args = parser.parse_args(argv)
    print(
        f"{'model':<14} {'amp':>5}  "
        + "  ".join(f"{s} @ {', '.join(str(t) for t in TIMES)} s" for s in ("xpbd", "vbd"))
    )
    for name in args.models or actuated_models():
        path = str(suite_dir() / f"{name}.xml")
        mj = mujoco.MjModel.from_xml_path(path)
        mj.opt.gravity[:] = 0.0
        mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], -1.0)
        hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 1.0)
        rng = np.random.default_rng(43)
        base = 0.5 * (lo + hi)
        share = rng.uniform(0.15, 0.3, mj.nu) * rng.choice([-1.0, 1.0], mj.nu)
        for _ in range(6):
            amp = share * (hi - lo)
            ref, hit = mujoco_track(mj, base, amp, lo, hi)
            if not hit:
                break
            share *= 0.5
        cells = []
        for solver in ("xpbd", "vbd"):
            try:
                ours = our_track(path, mj, solver, args.iterations, base, amp, lo, hi)
            except Exception as exc:  # noqa: BLE001 (a model we cannot import or step is a row, not a crash)
                cells.append(f"error {type(exc).__name__}"[:28])
                continue
            errs = []
            for t in TIMES:
                d = [abs(ours[t][j] - ref[t][mj.jnt_qposadr[j]]) for j in ours[t]]
                d = [min(x, abs(x - 2 * np.pi)) for x in d]
                errs.append(max(d) if d else 0.0)
            cells.append(" / ".join(f"{e:.3g}" for e in errs) + ("" if max(errs) <= 0.03 else " !"))
        scale = float(np.abs(share).max())
        print(
            f"{name:<14} {scale:5.2f}  " + "  ".join(f"{c:<28}" for c in cells) + ("  (limit reached)" if hit else "")
        )


if __name__ == "__main__":
    main()
