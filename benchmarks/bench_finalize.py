"""``ModelBuilder.finalize`` time against body count, and how much of it the contact-pair enumeration takes.

Usage:
    python benchmarks/bench_finalize.py                      # 1k, 4k and 8k bodies, both scenes
    python benchmarks/bench_finalize.py --bodies 1000,8000 --scenes replicated --repeats 3

Scenes, each on a shared ground plane (world -1):

* ``replicated``: worlds of 4 free bodies (2 boxes, 2 spheres), ``ModelBuilder.replicate``d; the
  pairs grow linearly with the world count (10 per world);
* ``one_world``: free spheres in one world; every two of them get a pair (contact slots are fixed
  per shape pair at finalize, without a broadphase), so the pairs grow as bodies^2 / 2 and the
  enumeration costs a few vectorised operations per pair (32 M pairs and about 5 GB at 8k bodies).

Prints a table: scene, bodies, worlds, shapes, pairs, contact slots, ``finalize`` wall and CPU time
(best of ``--repeats``) and the wall time of the pair enumeration alone
(``newton_tendon.finalize._contact_pairs``). Host only; ``finalize`` builds the model on ``--device``
(default cpu).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import newton_tendon as nt
from newton_tendon import finalize as fin

PER_WORLD = 4
"""Bodies per world of the ``replicated`` scene."""


def replicated(bodies: int) -> nt.ModelBuilder:
    """``bodies // PER_WORLD`` worlds of 4 free bodies (box, sphere, box, sphere) on a ground plane."""
    tpl = nt.ModelBuilder()
    for i in range(PER_WORLD):
        body = tpl.add_body(xform=(0.3 * i, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.01)
        if i % 2:
            tpl.add_shape_sphere(body, radius=0.1)
        else:
            tpl.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    b = nt.ModelBuilder()
    b.add_ground_plane()
    b.replicate(tpl, max(bodies // PER_WORLD, 1))
    return b


def one_world(bodies: int) -> nt.ModelBuilder:
    """``bodies`` free spheres on a 100-wide grid in one world, on a ground plane."""
    b = nt.ModelBuilder()
    b.add_ground_plane()
    for i in range(bodies):
        body = b.add_body(
            xform=(0.3 * (i % 100), 0.3 * (i // 100), 0.5, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.01
        )
        b.add_shape_sphere(body, radius=0.1)
    return b


SCENES = {"replicated": replicated, "one_world": one_world}


def time_pairs(b: nt.ModelBuilder) -> float:
    """Wall time [s] of the contact-pair enumeration of ``b`` alone (its inputs prepared untimed)."""
    _, _, shape_world, _ = fin._resolve_worlds(b)
    _, _, _, _, moving, _ = fin._mass_properties(b)
    t0 = time.perf_counter()
    fin._contact_pairs(b, shape_world, moving)
    return time.perf_counter() - t0


def main(argv=None) -> list[dict]:
    """Print the table; returns its rows as dicts (for the smoke test)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bodies", default="1000,4000,8000", help="comma-separated body counts")
    parser.add_argument("--scenes", default=",".join(SCENES), help=f"comma-separated scenes ({', '.join(SCENES)})")
    parser.add_argument("--repeats", type=int, default=1, help="timed finalize calls per row (the best is shown)")
    parser.add_argument("--device", default="cpu", help="Warp device finalize builds the model on")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.bodies.split(",") if s]
    scenes = [s for s in args.scenes.split(",") if s]
    for s in scenes:
        if s not in SCENES:
            parser.error(f"unknown scene {s!r}; scenes: {', '.join(SCENES)}")
    print(
        f"{'scene':>11} {'bodies':>7} {'worlds':>7} {'shapes':>7} {'pairs':>10} {'slots':>10} "
        f"{'finalize [s]':>13} {'cpu [s]':>8} {'pairs [s]':>10}"
    )
    rows = []
    for scene in scenes:
        for n in sizes:
            b = SCENES[scene](n)
            wall = cpu = float("inf")
            model = None
            for _ in range(args.repeats):
                model = None  # free the last model first: the one-world slot arrays are large
                t0, c0 = time.perf_counter(), time.process_time()
                model = b.finalize(args.device)
                wall = min(wall, time.perf_counter() - t0)
                cpu = min(cpu, time.process_time() - c0)
            t_pairs = time_pairs(b)
            print(
                f"{scene:>11} {b.body_count:>7} {max(b.world_count, 1):>7} {b.shape_count:>7} "
                f"{model.shape_contact_pair_count:>10} {model.contact_capacity:>10} {wall:>13.3f} {cpu:>8.3f} "
                f"{t_pairs:>10.3f}",
                flush=True,
            )
            rows.append(
                {
                    "scene": scene,
                    "bodies": b.body_count,
                    "pairs": model.shape_contact_pair_count,
                    "finalize_s": wall,
                    "pairs_s": t_pairs,
                }
            )
    return rows


if __name__ == "__main__":
    main()
