"""MJCF import time against body count: ``add_mjcf`` (ours) and MuJoCo's compile side by side.

Usage:
    python benchmarks/bench_import.py                 # 1k, 8k and 20k bodies
    python benchmarks/bench_import.py --bodies 1000,8000 --repeats 3

The scene is generated: chains of 8 hinged capsule links hanging from the world, 100 chains per
row, on a ground plane (one geom per body, default contype/conaffinity, no excludes). Prints a
table: bodies, our ``add_mjcf`` wall and CPU time (best of ``--repeats``), MuJoCo's
``MjModel.from_xml_string`` wall and CPU time (when ``mujoco`` is importable) and the wall-time
ratio. Host only; no device is used.
"""

from __future__ import annotations

import argparse
import time

import newton_tendon as nt

CHAIN = 8
"""Links per chain."""


def chains_xml(bodies: int, chain: int = CHAIN) -> str:
    """MJCF text of ``bodies`` bodies in hinged chains of ``chain`` capsule links."""
    parts = ['<mujoco model="chains">', "<worldbody>", '<geom type="plane" size="0 0 1"/>']
    done = 0
    c = 0
    while done < bodies:
        n = min(chain, bodies - done)
        x, y = (c % 100) * 0.5, (c // 100) * 0.5
        links = ""
        for i in range(n):
            p = f"{x} {y} 2" if i == 0 else "0 0 -0.2"
            links += (
                f'<body pos="{p}"><joint type="hinge" axis="0 1 0"/>'
                '<geom type="capsule" size="0.02" fromto="0 0 0 0 0 -0.2"/>'
            )
        parts.append(links + "</body>" * n)
        done += n
        c += 1
    parts += ["</worldbody>", "</mujoco>"]
    return "\n".join(parts)


def best_of(fn, repeats: int) -> tuple[float, float]:
    """Best wall-clock and best process CPU time [s] of ``repeats`` calls (CPU time is the steadier
    number on a shared machine)."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bodies", default="1000,8000,20000", help="comma-separated body counts")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per size (the best is shown)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.bodies.split(",") if s]
    try:
        import mujoco
    except ImportError:  # the comparison column is optional
        mujoco = None
    print(f"{'bodies':>8} {'add_mjcf [s]':>13} {'cpu [s]':>8} {'MuJoCo [s]':>11} {'cpu [s]':>8} {'ratio':>7}")
    for n in sizes:
        xml = chains_xml(n)

        def ours():
            b = nt.ModelBuilder()
            b.add_mjcf(xml)
            assert b.body_count == n

        t_ours, c_ours = best_of(ours, args.repeats)
        if mujoco is not None:
            t_mj, c_mj = best_of(lambda: mujoco.MjModel.from_xml_string(xml), args.repeats)
            print(f"{n:>8} {t_ours:>13.3f} {c_ours:>8.3f} {t_mj:>11.3f} {c_mj:>8.3f} {t_ours / t_mj:>7.2f}")
        else:
            print(f"{n:>8} {t_ours:>13.3f} {c_ours:>8.3f} {'-':>11} {'-':>8} {'-':>7}")


if __name__ == "__main__":
    main()
