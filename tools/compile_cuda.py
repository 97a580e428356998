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
    import warp_kernels

    names = [f"warp_kernels.{m.name}" for m in pkgutil.iter_modules(warp_kernels.__path__)]
    # Host modules that define their own kernels.
    names += ["newton_tendon.solvers.base", "examples.env_finger", "examples.env_payload"]
    return names


def main(arch: int = 90) -> int:
    wp.config.quiet = True
    wp.init()
    failed = []
    with tempfile.TemporaryDirectory() as out:
        for name in kernel_modules():
            mod = importlib.import_module(name)
            if not any(isinstance(v, wp.Kernel) and v.module.name == name for v in vars(mod).values()):
                continue
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
