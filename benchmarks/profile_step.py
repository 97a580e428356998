"""Launches per step, time per kernel and bytes touched per world-step of one benchmark scene.

Wraps ``wp.launch``, ``wp.copy`` and the array fill/zero methods while a few steps run uncaptured,
and prints, per kernel (or memory operation): launches per step, wall time per step [us] and the
bytes of the arrays it was handed per world-step. On the CPU every launch is synchronous, so the
wall time of a call is the kernel's time plus Warp's launch overhead; on CUDA the device is
synchronized around each call (so the profile is slower than graph replay, but attributes time).

"Bytes touched" counts each array argument once per launch (fields of struct arguments included,
the same array seen twice in one launch once): an estimate of the memory traffic a launch can
cause, exact for kernels that read every element once and an overestimate for those that skip.

Usage:
    python benchmarks/profile_step.py --scene pulley --solver vbd --worlds 1024
    python benchmarks/profile_step.py --scene chain --solver xpbd --worlds 1024 --engine newton
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

import warp as wp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as a script: find the scenes

from scenes import ALL_SCENES, build_case  # noqa: E402


def _array_bytes(value, seen: set) -> int:
    """Bytes of the Warp arrays in ``value`` (an array or a struct instance) not yet in ``seen``."""
    if isinstance(value, wp.array):
        key = (value.ptr, value.size)
        if value.ptr is None or key in seen:
            return 0
        seen.add(key)
        return value.size * wp.types.type_size_in_bytes(value.dtype)
    cls = getattr(value, "_cls", None)
    if cls is not None and hasattr(cls, "vars"):
        return sum(_array_bytes(getattr(value, name), seen) for name in cls.vars)
    return 0


class LaunchProfiler:
    """Context manager that records every ``wp.launch``/``wp.copy``/fill/zero while active.

    ``records[name] = [calls, seconds, bytes]``; ``steps`` is set by the caller to normalize.
    """

    def __init__(self, device: str):
        self.device = wp.get_device(device)
        self.records: dict[str, list] = defaultdict(lambda: [0, 0.0, 0])
        self._saved = {}

    def _timed(self, name: str, nbytes: int, fn, *args, **kwargs):
        if self.device.is_cuda:
            wp.synchronize_device(self.device)
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        if self.device.is_cuda:
            wp.synchronize_device(self.device)
        rec = self.records[name]
        rec[0] += 1
        rec[1] += time.perf_counter() - t0
        rec[2] += nbytes
        return out

    def __enter__(self):
        launch, copy = wp.launch, wp.copy
        zero, fill = wp.array.zero_, wp.array.fill_
        self._saved = {"launch": launch, "copy": copy, "zero": zero, "fill": fill}
        prof = self

        def launch_wrapper(kernel, dim=0, inputs=(), outputs=(), *args, **kwargs):
            seen: set = set()
            nbytes = sum(_array_bytes(v, seen) for v in (*inputs, *outputs))
            name = getattr(kernel, "key", str(kernel))
            name = name.split("__locals__")[-1]  # kernels made by a factory function
            return prof._timed(name, nbytes, launch, kernel, dim, inputs, outputs, *args, **kwargs)

        def copy_wrapper(dest, src, *args, **kwargs):
            n = kwargs.get("count") or src.size
            nbytes = 2 * n * wp.types.type_size_in_bytes(src.dtype)
            return prof._timed("<copy>", nbytes, copy, dest, src, *args, **kwargs)

        def zero_wrapper(arr):
            return prof._timed("<zero>", _array_bytes(arr, set()), zero, arr)

        def fill_wrapper(arr, value):
            return prof._timed("<fill>", _array_bytes(arr, set()), fill, arr, value)

        wp.launch, wp.copy = launch_wrapper, copy_wrapper
        wp.array.zero_, wp.array.fill_ = zero_wrapper, fill_wrapper
        return self

    def __exit__(self, *exc):
        wp.launch, wp.copy = self._saved["launch"], self._saved["copy"]
        wp.array.zero_, wp.array.fill_ = self._saved["zero"], self._saved["fill"]
        return False

    def table(self, steps: int, worlds: int) -> list[dict]:
        """Per-name rows normalized per step (calls, us) and per world-step (bytes), slowest first."""
        rows = [
            {
                "name": name,
                "launches_per_step": calls / steps,
                "us_per_step": 1.0e6 * seconds / steps,
                "bytes_per_world_step": nbytes / steps / max(worlds, 1),
            }
            for name, (calls, seconds, nbytes) in self.records.items()
        ]
        rows.sort(key=lambda r: -r["us_per_step"])
        return rows


def profile(engine: str, scene: str, solver: str, worlds: int, device: str, steps: int, iterations: int) -> dict:
    """Build ``scene`` with ``engine`` ("ours" or "newton"), warm it up, then profile ``steps`` steps."""
    case = build_case(engine, scene, solver, worlds, device, iterations)
    for _ in range(4):  # compile and touch memory outside the profile
        case.step_pair()
    wp.synchronize_device(device)
    pairs = max(1, steps // 2)
    prof = LaunchProfiler(device)
    t0 = time.perf_counter()
    with prof:
        for _ in range(pairs):
            case.step_pair()
    wp.synchronize_device(device)
    wall = time.perf_counter() - t0
    rows = prof.table(2 * pairs, worlds)
    return {
        "engine": engine,
        "scene": scene,
        "solver": solver,
        "worlds": worlds,
        "launches_per_step": sum(r["launches_per_step"] for r in rows),
        "bytes_per_world_step": sum(r["bytes_per_world_step"] for r in rows),
        "us_per_step": 1.0e6 * wall / (2 * pairs),
        "kernels": rows,
    }


def print_profile(p: dict, top: int = 15) -> None:
    print(
        f"{p['engine']} {p['scene']} {p['solver']} {p['worlds']} worlds: {p['launches_per_step']:.1f} launches/step, "
        f"{p['bytes_per_world_step']:,.0f} B/world-step, {p['us_per_step']:,.0f} us/step (profiled)"
    )
    print(f"  {'kernel':<40} {'launch/step':>11} {'us/step':>9} {'share':>6} {'B/world-step':>13}")
    total = sum(r["us_per_step"] for r in p["kernels"]) or 1.0
    for r in p["kernels"][:top]:
        print(
            f"  {r['name'][:40]:<40} {r['launches_per_step']:>11.1f} {r['us_per_step']:>9.1f} "
            f"{100.0 * r['us_per_step'] / total:>5.1f}% {r['bytes_per_world_step']:>13,.0f}"
        )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", default="pulley", choices=ALL_SCENES)
    p.add_argument("--solver", default="vbd", choices=("xpbd", "vbd"))
    p.add_argument("--engine", default="ours", choices=("ours", "newton"))
    p.add_argument("--worlds", type=int, default=1024)
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--top", type=int, default=15, help="kernels to list (default: %(default)s)")
    args = p.parse_args(argv)
    wp.config.quiet = True
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)
    wp.init()
    result = profile(args.engine, args.scene, args.solver, args.worlds, args.device, args.steps, args.iterations)
    print_profile(result, args.top)
    return result


if __name__ == "__main__":
    main()
