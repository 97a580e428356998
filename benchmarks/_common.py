"""Timing loop shared by the benchmark scripts: cold start, CUDA graph capture, steady replay."""

from __future__ import annotations

import time
from collections.abc import Callable

import warp as wp


def time_two_steps(two_steps: Callable[[], None], device: str, steps: int, worlds: int) -> dict:
    """Time ``two_steps`` (two solver steps that end on the starting state) for about ``steps`` steps.

    The first call is timed on its own (kernel compilation or cache load). On CUDA ``two_steps`` is
    then captured once in a graph and replayed; elsewhere it is called directly.

    Returns:
        ``cold_s`` (first call [s]), ``world_steps_per_s`` (steady rate over ``worlds`` worlds) and
        ``graph`` (whether a CUDA graph was replayed).
    """
    t1 = time.perf_counter()
    two_steps()
    wp.synchronize_device(device)
    t_cold = time.perf_counter() - t1

    graph = None
    if wp.get_device(device).is_cuda:
        with wp.ScopedCapture(device=device) as capture:
            two_steps()
        graph = capture.graph
    pairs = max(1, steps // 2)
    wp.synchronize_device(device)
    t2 = time.perf_counter()
    for _ in range(pairs):
        if graph is not None:
            wp.capture_launch(graph)
        else:
            two_steps()
    wp.synchronize_device(device)
    wall = time.perf_counter() - t2
    return {"cold_s": t_cold, "world_steps_per_s": worlds * 2 * pairs / wall, "graph": graph is not None}
