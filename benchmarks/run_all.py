"""Every benchmark scene, both solvers, several world counts, side by side with newton 1.8.0 when installed.

One command for the throughput table of ``docs/benchmarks.md``:

    python benchmarks/run_all.py --device cuda:0 --out bench_out              # 1, 1k, 16k, 64k worlds
    python benchmarks/run_all.py --device cpu --out bench_out                 # 1, 256, 1024 worlds
    python benchmarks/run_all.py --device cpu --worlds 1024 --scenes pulley,chain --graph on

For each scene (``scenes.ALL_SCENES``: routed cables ``pulley``, ``pinhole``, ``routing_3d``, the
rigid ``chain`` with ground contact, and the transmission scenes ``tx_*``), world count and solver
(``xpbd``, ``vbd``) it

* times our solver: world-steps per second, fastest of ``--repeats`` chunks (``_common.time_two_steps``),
  two steps captured in one graph and replayed (``--graph auto``: on CUDA; ``on`` captures on the
  CPU too, where Warp replays the recorded launches without Python);
* times newton's solver of the same kind on the same scene with the same dt and iterations
  (cable scenes and the chain; ``n/a`` with the reason where newton cannot run it) and prints the
  ratio ours / newton;
* checks the physical answer (``scenes.answer_check``: one world, a fixed horizon, both engines):
  the Atwood scenes' drop and tension against the ideal machine, and positions (drop, the routed
  weight, the chain tip before it lands) against newton's; and, after every timed row, the spread
  of all worlds from world 0 (identical worlds must stay identical).

It also counts launches per step and bytes touched per world-step (``profile_step.py``) for both
engines at one world count, and measures the time to the first step on a cold kernel cache (a
subprocess with a fresh ``wp.config.kernel_cache_dir``: import, build one world, finalize, first
step) for both engines. Results go to ``OUT/results.json`` and ``OUT/results.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import warp as wp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # run as a script: find the sibling modules

from _common import SOLVERS, time_two_steps  # noqa: E402
from scenes import ALL_SCENES, PEER_SCENES, answer_check, build_case  # noqa: E402

CUDA_WORLDS = "1,1024,16384,65536"
CPU_WORLDS = "1,256,1024"
ANSWER_TOL = 0.02
"""Relative difference below which two answers count as the same physics (2 %: the Atwood drop
after 1 s carries the O(dt) error of the integrator, 0.2 % at 1/240 s)."""


def _short(e: Exception, n: int = 140) -> str:
    text = f"{type(e).__name__}: {' '.join(str(e).split())}"
    return text if len(text) <= n else text[: n - 3] + "..."


def _time_case(engine: str, scene: str, solver: str, worlds: int, args) -> dict:
    t0 = time.perf_counter()
    case = build_case(engine, scene, solver, worlds, args.device, args.iterations, args.dt)
    build_s = time.perf_counter() - t0
    timing = time_two_steps(
        case.step_pair, args.device, args.steps, worlds, graph=args.graph_flag, repeats=args.repeats
    )
    case.steps_taken = timing["steps_taken"]
    answer = case.answer()
    return {
        "engine": engine,
        "build_s": build_s,
        **timing,
        "answer": answer,
        "spread": case.spread(),
        "finite": answer["finite"],
    }


def _pct(diffs: dict) -> str:
    return " ".join(f"{k} {100 * v:.1f}%" for k, v in diffs.items())


def run_answers(args, newton_ok: bool) -> dict:
    """The physical-answer check of every scene and solver (one world, fixed horizon, both engines)."""
    print("\nphysical answers (world 0 of 1, fixed horizon; relative differences)")
    out = {}
    for scene in args.scene_list:
        for solver in args.solver_list:
            key = f"{scene}/{solver}"
            try:
                a = answer_check(scene, solver, args.device, args.iterations, newton_ok)
            except Exception as e:
                out[key] = {"error": _short(e)}
                print(f"{scene:<12} {solver:>6}  failed: {out[key]['error']}")
                continue
            checks = dict(a["vs_ideal"]) or dict(a["vs_newton"])
            a["ok"] = bool(a["ours"]["finite"]) and all(v < ANSWER_TOL for v in checks.values()) if checks else None
            parts = []
            if a["vs_ideal"]:
                parts.append("ours vs ideal: " + _pct(a["vs_ideal"]))
            if a["vs_newton"]:
                parts.append("ours vs newton: " + _pct(a["vs_newton"]))
            if a["newton_vs_ideal"]:
                parts.append("newton vs ideal: " + _pct(a["newton_vs_ideal"]))
            verdict = {True: "ok", False: "DIFFERS", None: "-"}[a["ok"]]
            a["note"] = f"{verdict}: " + "; ".join(parts) if parts else verdict
            out[key] = a
            print(f"{scene:<12} {solver:>6} {a['steps']:>4} steps  {a['note']}", flush=True)
    return out


def run_rows(args, newton_ok: bool) -> list[dict]:
    rows = []
    header = (
        f"{'scene':<12} {'worlds':>6} {'solver':>6} {'ours w-s/s':>13} {'newton w-s/s':>13} {'ratio':>6} "
        f"{'spread':>8}  answer check"
    )
    print(header)
    print("-" * len(header))
    for scene in args.scene_list:
        for worlds in args.world_list:
            for solver in args.solver_list:
                row = {"scene": scene, "worlds": worlds, "solver": solver}
                try:
                    ours = _time_case("ours", scene, solver, worlds, args)
                except Exception as e:  # keep going: one broken row must not hide the others
                    row.update(error=_short(e))
                    print(f"{scene:<12} {worlds:>6} {solver:>6}  ours failed: {row['error']}", flush=True)
                    rows.append(row)
                    continue
                row["ours"] = ours
                ref = None
                if not newton_ok:
                    row["newton_na"] = args.newton_reason
                elif scene not in PEER_SCENES:
                    row["newton_na"] = "no equivalent in newton"
                else:
                    try:
                        ref = _time_case("newton", scene, solver, worlds, args)
                        row["newton"] = ref
                    except Exception as e:
                        row["newton_na"] = _short(e)
                check = args.answers.get(f"{scene}/{solver}", {})
                note = check.get("note", "")
                if not ours["finite"]:
                    note = "NON-FINITE " + note
                rate = ours["world_steps_per_s"]
                if ref is not None:
                    row["ratio"] = rate / ref["world_steps_per_s"]
                    cells = f"{ref['world_steps_per_s']:>13,.0f} {row['ratio']:>6.2f}"
                else:
                    cells = f"{'n/a':>13} {'':>6}"
                print(
                    f"{scene:<12} {worlds:>6} {solver:>6} {rate:>13,.0f} {cells} {ours['spread']:>8.1e}  {note}"
                    + (f"  [newton n/a: {row['newton_na']}]" if "newton_na" in row and newton_ok else ""),
                    flush=True,
                )
                rows.append(row)
    return rows


def run_profiles(args, newton_ok: bool) -> list[dict]:
    """Launches per step and bytes per world-step of every scene and solver, both engines."""
    from profile_step import profile

    worlds = args.profile_worlds
    out = []
    print(f"\nlaunches per step and bytes touched per world-step ({worlds} worlds, uncaptured, 8 steps)")
    print(f"{'scene':<12} {'solver':>6} {'engine':>7} {'launches/step':>14} {'B/world-step':>13} {'top kernel':<30}")
    for scene in args.scene_list:
        for solver in args.solver_list:
            for engine in ("ours", "newton"):
                if engine == "newton" and (not newton_ok or scene not in PEER_SCENES):
                    continue
                try:
                    p = profile(engine, scene, solver, worlds, args.device, 8, args.iterations)
                except Exception as e:
                    print(f"{scene:<12} {solver:>6} {engine:>7}  failed: {_short(e)}")
                    continue
                p["kernels"] = p["kernels"][:12]
                top = p["kernels"][0]
                share = top["us_per_step"] / max(sum(k["us_per_step"] for k in p["kernels"]), 1e-9)
                print(
                    f"{scene:<12} {solver:>6} {engine:>7} {p['launches_per_step']:>14.1f} "
                    f"{p['bytes_per_world_step']:>13,.0f} {top['name'][:24]:<24} {100 * share:3.0f}%",
                    flush=True,
                )
                out.append(p)
    return out


# ----------------------------------------------------------------------------------------------
# Cold start: a fresh process with an empty kernel cache


def _cold_child(engine: str, scene: str, solver: str, device: str, cache_dir: str) -> None:
    """Runs in the subprocess: time import, build + finalize, and the first step (kernel compilation)."""
    t0 = time.perf_counter()
    import warp as wp_child

    wp_child.config.kernel_cache_dir = cache_dir
    wp_child.config.log_level = getattr(wp_child, "LOG_WARNING", 30)
    wp_child.config.quiet = True
    wp_child.init()
    from scenes import Case, engine_module

    api = engine_module(engine)
    t1 = time.perf_counter()
    case = Case(api, scene, solver, 1, device, 8, None)
    t2 = time.perf_counter()
    case.step_pair()
    wp_child.synchronize_device(device)
    t3 = time.perf_counter()
    result = {
        "import_s": t1 - t0,
        "build_s": t2 - t1,
        "first_step_s": t3 - t2,
        "total_s": t3 - t0,
        "finite": bool(np.all(np.isfinite(case.state_0.body_q.numpy()))),
    }
    print("COLD " + json.dumps(result))


def cold_start(engine: str, scene: str, solver: str, device: str, timeout: float) -> dict:
    """Time to the first step of ``engine`` in a fresh process on an empty kernel cache [s]."""
    with tempfile.TemporaryDirectory(prefix="wp_cold_") as cache:
        cmd = [sys.executable, os.path.abspath(__file__), "--_cold", engine, scene, solver, device, cache]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s", "wall_s": time.perf_counter() - t0}
        wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith("COLD "):
            return {**json.loads(line[5:]), "wall_s": wall}
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    return {"error": f"rc {proc.returncode}: {tail[0][:200]}", "wall_s": wall}


def run_cold(args, newton_ok: bool) -> list[dict]:
    out = []
    print(f"\ntime to the first step on a cold kernel cache ({args.cold_scene}, 1 world, fresh process)")
    print(
        f"{'solver':>6} {'engine':>7} {'import s':>9} {'build s':>8} {'1st step s':>11} {'total s':>8} "
        f"{'process s':>10}"
    )
    for solver in args.solver_list:
        pair = {}
        for engine in ("ours", "newton") if newton_ok else ("ours",):
            r = cold_start(engine, args.cold_scene, solver, args.device, args.cold_timeout)
            r.update(engine=engine, solver=solver, scene=args.cold_scene)
            pair[engine] = r
            out.append(r)
            if "error" in r:
                print(f"{solver:>6} {engine:>7}  failed: {r['error']}")
            else:
                print(
                    f"{solver:>6} {engine:>7} {r['import_s']:>9.2f} {r['build_s']:>8.2f} {r['first_step_s']:>11.2f} "
                    f"{r['total_s']:>8.2f} {r['wall_s']:>10.2f}",
                    flush=True,
                )
        if "total_s" in pair.get("ours", {}) and "total_s" in pair.get("newton", {}):
            ratio = pair["ours"]["total_s"] / pair["newton"]["total_s"]
            pair["ours"]["ratio_to_newton"] = ratio
            print(f"{solver:>6}  ours / newton = {ratio:.2f} (target <= 0.25)")
    return out


# ----------------------------------------------------------------------------------------------
# Report


def _markdown(meta: dict, rows: list[dict], answers: dict, profiles: list[dict], cold: list[dict]) -> str:
    lines = [
        f"# Benchmark results ({meta['device']})",
        "",
        f"{meta['device_name']}; warp {meta['warp']}; newton {meta['newton'] or 'not installed'}; "
        f"{meta['iterations']} iterations; {meta['steps']} timed steps per row (fastest of {meta['repeats']} chunks); "
        f"graph replay: {meta['graph']}; {meta['date']}.",
        "",
        "| scene | worlds | solver | ours world-steps/s | newton world-steps/s | ratio | world spread | answer check |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        if "ours" not in r:
            lines.append(f"| {r['scene']} | {r['worlds']} | {r['solver']} | failed | | | | {r.get('error', '')} |")
            continue
        ours = r["ours"]["world_steps_per_s"]
        ref = r.get("newton", {}).get("world_steps_per_s")
        ref_cell = f"{ref:,.0f}" if ref else "n/a"
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else ""
        note = ("NON-FINITE " if not r["ours"]["finite"] else "") + answers.get(f"{r['scene']}/{r['solver']}", {}).get(
            "note", ""
        )
        lines.append(
            f"| {r['scene']} | {r['worlds']} | {r['solver']} | {ours:,.0f} | {ref_cell} | {ratio} | "
            f"{r['ours']['spread']:.1e} | {note} |"
        )
    if profiles:
        lines += [
            "",
            "## Launches per step and bytes touched per world-step",
            "",
            "| scene | solver | engine | launches/step | bytes/world-step | slowest kernel |",
            "| --- | --- | --- | ---: | ---: | --- |",
        ]
        for p in profiles:
            top = p["kernels"][0]["name"] if p["kernels"] else ""
            lines.append(
                f"| {p['scene']} | {p['solver']} | {p['engine']} | {p['launches_per_step']:.1f} | "
                f"{p['bytes_per_world_step']:,.0f} | {top} |"
            )
    if cold:
        lines += [
            "",
            "## Time to the first step on a cold kernel cache",
            "",
            "| scene | solver | engine | import s | build s | first step s | total s |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for c in cold:
            if "error" in c:
                lines.append(f"| {c['scene']} | {c['solver']} | {c['engine']} | failed: {c['error']} | | | |")
            else:
                lines.append(
                    f"| {c['scene']} | {c['solver']} | {c['engine']} | {c['import_s']:.2f} | {c['build_s']:.2f} | "
                    f"{c['first_step_s']:.2f} | {c['total_s']:.2f} |"
                )
    return "\n".join(lines) + "\n"


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", help="Warp device, e.g. cpu or cuda:0 (default: %(default)s)")
    p.add_argument(
        "--worlds",
        default=None,
        help=f"comma-separated world counts (default: {CUDA_WORLDS} on CUDA, {CPU_WORLDS} on the CPU)",
    )
    p.add_argument("--scenes", default=",".join(ALL_SCENES), help="comma-separated scenes (default: all)")
    p.add_argument("--solver", choices=(*SOLVERS, "both"), default="both", help="default: %(default)s")
    p.add_argument("--steps", type=int, default=None, help="timed steps per row (default: 300 on CUDA, 60 on CPU)")
    p.add_argument("--repeats", type=int, default=3, help="timed chunks per row; the fastest counts (default: 3)")
    p.add_argument("--iterations", type=int, default=8, help="solver iterations per step (default: %(default)s)")
    p.add_argument("--dt", type=float, default=None, help="step [s] (default: 1/240 s; 1 ms for tx_* scenes)")
    p.add_argument(
        "--graph",
        choices=("auto", "on", "off"),
        default="auto",
        help="capture two steps in a graph and replay it: auto = on CUDA only (default), on = also on the CPU",
    )
    p.add_argument("--no-newton", action="store_true", help="skip newton even if it is installed")
    p.add_argument("--no-answers", action="store_true", help="skip the physical-answer check")
    p.add_argument("--no-profile", action="store_true", help="skip the launch/byte counts")
    p.add_argument("--profile-worlds", type=int, default=1024, help="world count of the profile (default: 1024)")
    p.add_argument("--no-cold", action="store_true", help="skip the cold-cache first-step measurement")
    p.add_argument("--cold-scene", default="pulley", choices=ALL_SCENES, help="scene of the cold start")
    p.add_argument("--cold-timeout", type=float, default=900.0, help="seconds per cold-start process")
    p.add_argument("--out", default="bench_out", help="folder for results.json and results.md")
    p.add_argument("--_cold", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    return p, args


def main(argv=None):
    parser, args = _parse(argv)
    if args._cold:
        _cold_child(*args._cold)
        return None
    wp.config.quiet = True  # Warp < 1.19
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # Warp >= 1.19
    wp.init()
    is_cuda = wp.get_device(args.device).is_cuda
    args.world_list = [int(w) for w in (args.worlds or (CUDA_WORLDS if is_cuda else CPU_WORLDS)).split(",") if w]
    args.scene_list = [s for s in args.scenes.split(",") if s]
    for s in args.scene_list:
        if s not in ALL_SCENES:
            parser.error(f"unknown scene {s!r}; choose from {', '.join(ALL_SCENES)}")
    args.solver_list = list(SOLVERS) if args.solver == "both" else [args.solver]
    args.steps = args.steps or (300 if is_cuda else 60)
    args.graph_flag = {"auto": None, "on": True, "off": False}[args.graph]

    newton_version = None
    args.newton_reason = "--no-newton"
    if not args.no_newton:
        try:
            import newton

            newton_version = getattr(newton, "__version__", "?")
        except ImportError:
            args.newton_reason = "newton is not installed (pip install newton==1.8.0, the 'bench' extra)"
    newton_ok = newton_version is not None
    meta = {
        "device": args.device,
        "device_name": getattr(wp.get_device(args.device), "name", args.device),
        "warp": wp.__version__,
        "newton": newton_version,
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "iterations": args.iterations,
        "steps": args.steps,
        "repeats": args.repeats,
        "graph": "yes" if (args.graph == "on" or (args.graph == "auto" and is_cuda)) else "no",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "argv": sys.argv[1:] if argv is None else list(argv),
    }
    print(
        f"run_all: device {args.device} ({meta['device_name']}), worlds {args.world_list}, "
        f"{args.iterations} iterations, {args.steps} steps x best of {args.repeats}, graph {meta['graph']}, "
        f"newton {newton_version or 'n/a'}"
    )
    args.answers = {} if args.no_answers else run_answers(args, newton_ok)
    print()
    rows = run_rows(args, newton_ok)
    profiles = [] if args.no_profile else run_profiles(args, newton_ok)
    cold = [] if args.no_cold else run_cold(args, newton_ok)
    os.makedirs(args.out, exist_ok=True)
    result = {"meta": meta, "rows": rows, "answers": args.answers, "profiles": profiles, "cold_start": cold}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1, default=float)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(_markdown(meta, rows, args.answers, profiles, cold))
    print(f"\nwrote {os.path.join(args.out, 'results.json')} and results.md")
    return result


if __name__ == "__main__":
    main()
