"""World-steps per second of routed-cable scenes with SolverXPBD and SolverVBD, optionally side by side with newton.

Scenes (one world each, replicated with ``replicate``):

* pulley: an Atwood machine over a frictionless roller fixed in the world (two weights);
* pinhole: two weights on one cable through two world pinholes (the U route);
* routing_3d: a cable from a world anchor over three rollers with X, Y and Z axes down to a
  swinging weight.

Each scene and world count gets one table row per solver (``--solver xpbd|vbd|both``, default
both); for VBD the builder is graph-coloured (``builder.color()``) before ``finalize``.

The scene builders take the API module as a parameter, so the same code builds the scene with
``newton_tendon`` and with ``newton`` (the original engine, ``pip install newton==1.8.0``, the
optional ``bench`` extra). When ``import newton`` works (and ``--no-newton`` is not given), each
row also times ``newton``'s solver of the same kind (SolverXPBD or SolverVBD, same iterations and
dt) on the same scene and prints the ratio ours / newton; where newton cannot run a scene the
newton column says ``n/a`` and the row ends with the reason.

Usage:
    python benchmarks/bench_cables.py --device cpu --worlds 1,64,1024
    python benchmarks/bench_cables.py --device cpu --solver vbd --scenes pulley
    python benchmarks/bench_cables.py --device cuda:0 --worlds 1,1024,16384 --steps 1000

On CUDA two steps are captured once in a graph and replayed. The Atwood scenes use nearly equal
weights and 10 m spans, so they keep moving without reaching a guide for several thousand steps at
the default dt.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import warp as wp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find _common
from _common import add_solver_argument, make_solver, selected_solvers, time_two_steps  # noqa: E402

SCENES = ("pulley", "pinhole", "routing_3d")


def _xform(x: float, y: float, z: float):
    return wp.transform(wp.vec3(x, y, z), wp.quat_identity())


def _inertia():
    """A small inertia [kg m^2] for point-like weights."""
    return wp.mat33(np.eye(3) * 1.0e-3)


def _atwood(api, x_heavy: float, x_light: float, middle: list):
    """Weights of 1.1 kg (at ``x_heavy``) and 1.0 kg (at ``x_light``) on one cable through ``middle`` guides."""
    b = api.ModelBuilder()
    heavy = b.add_body(xform=_xform(x_heavy, 0.0, 0.0), mass=1.1, inertia=_inertia())
    light = b.add_body(xform=_xform(x_light, 0.0, 0.0), mass=1.0, inertia=_inertia())
    b.add_tendon([api.TendonGuide(body=heavy), *middle, api.TendonGuide(body=light)])
    return b


def pulley(api):
    """Atwood machine: 1.1 kg and 1.0 kg over a fixed frictionless roller (axis +Y, radius 0.1 m)."""
    roller = api.TendonGuide(
        body=-1,
        guide_type=api.TendonGuideType.ROLLER,
        offset=(0.0, 0.0, 10.0),
        axis=(0.0, 1.0, 0.0),
        radius=0.1,
        orientation=1,
    )
    return _atwood(api, -0.1, 0.1, [roller])


def pinhole(api):
    """Two weights (1.1 kg, 1.0 kg) on one cable through two frictionless world pinholes."""
    pinholes = [
        api.TendonGuide(body=-1, guide_type=api.TendonGuideType.PINHOLE, offset=(x, 0.0, 10.0)) for x in (-0.5, 0.5)
    ]
    return _atwood(api, -0.5, 0.5, pinholes)


def routing_3d(api):
    """World anchor -> rollers with axes Y, Z, X -> a 1 kg weight swinging below the last roller."""
    b = api.ModelBuilder()
    weight = b.add_body(xform=_xform(1.1, 1.45, 1.25), mass=1.0, inertia=_inertia())
    rollers = (
        ((0.1, 0.0, 2.0), (0.0, 1.0, 0.0), 1),
        ((1.0, 0.1, 2.1), (0.0, 0.0, 1.0), 1),
        ((1.1, 1.0, 2.0), (1.0, 0.0, 0.0), -1),
    )
    route = [api.TendonGuide(body=-1, offset=(0.0, 0.0, 1.0))]
    for centre, axis, orientation in rollers:
        route.append(
            api.TendonGuide(
                body=-1,
                guide_type=api.TendonGuideType.ROLLER,
                offset=centre,
                axis=axis,
                radius=0.1,
                orientation=orientation,
            )
        )
    route.append(api.TendonGuide(body=weight))
    b.add_tendon(route)
    return b


SCENE_BUILDERS = {"pulley": pulley, "pinhole": pinhole, "routing_3d": routing_3d}


def bench(api, scene: str, worlds: int, device: str, steps: int, iterations: int, dt: float, solver: str) -> dict:
    """Build ``worlds`` copies of ``scene`` with ``api``, then time ``steps`` steps of ``solver`` ("xpbd" or "vbd")."""
    builder = api.ModelBuilder()
    builder.replicate(SCENE_BUILDERS[scene](api), worlds)
    model, sim, t_finalize = make_solver(api, builder, solver, device, iterations)
    s0, s1 = model.state(), model.state()
    control = model.control()

    def two_steps():
        sim.step(s0, s1, control, None, dt)
        sim.step(s1, s0, control, None, dt)

    timing = time_two_steps(two_steps, device, steps, worlds)
    return {
        "finalize_s": t_finalize,
        **timing,
        "finite": bool(np.all(np.isfinite(s0.body_q.numpy()))),
    }


def _newton_cell(newton, scene: str, worlds: int, args, solver: str, ours: float) -> tuple[str, str, float | None]:
    """Time newton's solver of the same kind; returns (columns, trailing note, newton world-steps/s or None)."""
    na = f" {'n/a':>13} {'':>6}"
    try:
        ref = bench(newton, scene, worlds, args.device, args.steps, args.iterations, args.dt, solver)
    except Exception as e:  # a peer that cannot run a scene must not hide our own numbers
        reason = " ".join(str(e).split())
        if len(reason) > 160:
            reason = reason[:157] + "..."
        return na, f"  newton n/a: {type(e).__name__}: {reason}", None
    if not ref["finite"]:
        return na, "  newton n/a: non-finite state", None
    rate = ref["world_steps_per_s"]
    return f" {rate:>13,.0f} {ours / rate:>6.2f}", "", rate


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", help="Warp device, e.g. cpu or cuda:0 (default: %(default)s)")
    p.add_argument("--worlds", default="1,64,256", help="comma-separated world counts (default: %(default)s)")
    p.add_argument(
        "--scenes",
        default=",".join(SCENES),
        help=f"comma-separated subset of {', '.join(SCENES)} (default: all)",
    )
    add_solver_argument(p)
    p.add_argument("--steps", type=int, default=200, help="timed steps per row (default: %(default)s)")
    p.add_argument("--iterations", type=int, default=8, help="solver iterations per step (default: %(default)s)")
    p.add_argument("--dt", type=float, default=1.0 / 240.0, help="step [s] (default: 1/240)")
    p.add_argument("--no-newton", action="store_true", help="skip the newton side-by-side even if newton is installed")
    args = p.parse_args(argv)
    counts = [int(w) for w in args.worlds.split(",") if w]
    scenes = [s for s in args.scenes.split(",") if s]
    for s in scenes:
        if s not in SCENES:
            p.error(f"unknown scene {s!r}; choose from {', '.join(SCENES)}")
    solvers = selected_solvers(args.solver)
    wp.config.quiet = True  # Warp < 1.19
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # Warp >= 1.19
    wp.init()
    import newton_tendon

    newton = None
    if not args.no_newton:
        try:
            import newton
        except ImportError:
            pass
    print(
        f"bench_cables: {', '.join(s.upper() for s in solvers)}, {args.iterations} iterations, dt {args.dt:.5f} s, "
        f"{args.steps} steps, device {args.device}"
    )
    if newton is None:
        reason = (
            "--no-newton"
            if args.no_newton
            else "newton is not installed (pip install newton==1.8.0, the 'bench' extra)"
        )
        print(f"{reason}: no side-by-side column")
    else:
        print(f"newton {getattr(newton, '__version__', '?')}: its solver of the same kind on the same scene")
    header = (
        f"{'scene':<11} {'worlds':>7} {'solver':>6} {'finalize s':>10} {'cold s':>7} {'world-steps/s':>14} {'graph':>6}"
    )
    if newton is not None:
        header += f" {'newton w-s/s':>13} {'ratio':>6}"
    print(header)
    rows = []
    for scene in scenes:
        for w in counts:
            for solver in solvers:
                r = bench(newton_tendon, scene, w, args.device, args.steps, args.iterations, args.dt, solver)
                r.update(scene=scene, worlds=w, solver=solver)
                line = (
                    f"{scene:<11} {w:>7} {solver:>6} {r['finalize_s']:>10.2f} {r['cold_s']:>7.2f} "
                    f"{r['world_steps_per_s']:>14,.0f} {str(r['graph']):>6}"
                )
                note = "" if r["finite"] else "  (non-finite state!)"
                if newton is not None:
                    cells, newton_note, rate = _newton_cell(newton, scene, w, args, solver, r["world_steps_per_s"])
                    r["newton_world_steps_per_s"] = rate
                    line += cells
                    note += newton_note
                rows.append(r)
                print(line + note, flush=True)
    return rows


if __name__ == "__main__":
    main()
