"""Compile every Warp module of the package for CUDA (sm_90) ahead of time; no GPU needed.

CI runs this so that CUDA-only compile errors (NVRTC rejects code the CPU backend accepts) fail the
submission. Exits non-zero and names the module on the first failure.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import tempfile
import time

import warp as wp


def kernel_modules() -> list[str]:
    """Names of every Warp module that holds kernels: the files' own modules and the named modules
    that kernels declare with ``@wp.kernel(module=...)`` (e.g. ``newton_tendon.kernels.cable_xpbd``)."""
    import newton_tendon.kernels

    files = [f"newton_tendon.kernels.{m.name}" for m in pkgutil.iter_modules(newton_tendon.kernels.__path__)]
    # Host modules that define their own kernels, and the solvers (they select kernel variants).
    files += [
        "newton_tendon.solvers.base",
        "newton_tendon.solvers.xpbd",
        "newton_tendon.solvers.vbd",
        "newton_tendon.examples.env_finger",
        "newton_tendon.examples.env_payload",
    ]
    for name in files:
        importlib.import_module(name)
    from warp._src import context  # the registry of Warp modules (no public accessor in 1.19)

    prefixes = ("newton_tendon.kernels", "newton_tendon", "examples")
    return sorted(
        name for name, mod in context.user_modules.items() if name.startswith(prefixes) and len(mod.kernels) > 0
    )


def main(arch: int = 90) -> int:
    wp.config.quiet = True
    wp.init()
    failed = []
    with tempfile.TemporaryDirectory() as out:
        for name in kernel_modules():
            t = time.perf_counter()
            try:
                wp.compile_aot_module(name, arch=arch, module_dir=out, use_ptx=True)
            except Exception as e:  # report every failing module, then fail
                failed.append(name)
                print(f"FAILED {name}: {e}")
                continue
            print(f"compiled {name} for sm_{arch} in {time.perf_counter() - t:.1f} s")
    if failed:
        print(f"{len(failed)} module(s) failed to compile for CUDA: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
