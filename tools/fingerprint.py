"""Bitwise fingerprints of what the library computes, to compare two commits.

For every benchmark scene (``benchmarks/scenes.py``) on both solvers, every example with an
``Example`` class and the demo's scenes, step a fixed number of steps on the CPU and print one line
per case: a SHA-256 of ``body_q`` and of every tendon and transmission diagnostic the solver
reports. Run it on two commits and ``diff`` the outputs: a restructuring that changes no arithmetic
prints the same lines.

    python tools/fingerprint.py --out before.txt   # on the old commit
    python tools/fingerprint.py --out after.txt    # on the new one
    diff before.txt after.txt

Options: ``--steps N`` (default 120 solver steps per case), ``--only PREFIX`` (cases whose name starts
with PREFIX).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import pkgutil
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

DIAGNOSTICS = (
    "tendon_segment_material_tension",
    "tendon_segment_damping_tension",
    "tendon_segment_lambda",
    "tendon_total_cable",
    "tendon_length",
    "tendon_guide_wrap",
    "transmission_length",
    "transmission_tension",
    "transmission_force",
    "coupling_force",
)
"""Solver result arrays hashed with ``body_q`` (those a solver has; missing ones are skipped)."""
SOURCES = {"tendon_segment_lambda": "_tendon_lambda"}
"""Diagnostics hashed from another array under their old name: the XPBD multiplier T dt^2 the passes
accumulate is private since the public ``tendon_segment_lambda`` reports newton's -T dt (issue 26), so
fingerprints stay comparable across that change."""


def digest(state, solver) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(state.body_q.numpy()).tobytes())
    h.update(np.ascontiguousarray(state.body_qd.numpy()).tobytes())
    for name in DIAGNOSTICS:
        a = getattr(solver, SOURCES.get(name, name), None)
        if a is None:
            a = getattr(solver, name, None)
        if a is not None and getattr(a, "size", 0):
            h.update(name.encode())
            h.update(np.ascontiguousarray(a.numpy()).tobytes())
    return h.hexdigest()[:20]


def bench_cases(steps: int):
    import scenes

    for scene in scenes.ALL_SCENES:
        for solver in ("xpbd", "vbd"):
            case = scenes.build_case("ours", scene, solver, worlds=3, device="cpu")
            for _ in range(steps // 2):
                case.step_pair()
            yield f"bench/{scene}/{solver}", digest(case.state_0, case.solver)


def example_package():
    for name in ("newton_tendon.examples", "examples"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError("no examples package")


def example_cases(steps: int):
    pkg = example_package()
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        cls = getattr(module, "Example", None)
        if cls is None:
            continue
        for solver in ("xpbd", "vbd"):
            try:
                ex = cls(device="cpu", solver=solver)
            except TypeError:
                if solver != "xpbd":
                    continue
                ex = cls(device="cpu")
            substeps = max(int(getattr(ex, "substeps", 1)), 1)
            for _ in range(max(steps // substeps, 1)):
                ex.step()
            yield f"example/{info.name}/{solver}", digest(ex.state_0, ex.solver)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--only", default="")
    p.add_argument("--out", default="", help="write the fingerprint lines to this file (Warp's load messages stay on stdout)")
    args = p.parse_args(argv)
    out = open(args.out, "w") if args.out else sys.stdout
    import warp as wp

    wp.config.quiet = True
    wp.init()
    for gen in (bench_cases, example_cases):
        for name, value in gen(args.steps):
            if name.startswith(args.only):
                print(f"{name:50s} {value}", file=out, flush=True)
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
