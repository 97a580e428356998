"""Launch sizes of the chunked per-step kernels: ``CPU_CHUNK`` elements per thread on the CPU.

``SolverBase`` sets ``self._chunk`` from it (1 on CUDA); the routed-tendon launchers and the VBD
sweeps size their launches with ``chunked``. ``newton_tendon.solvers.base`` re-exports both names.
"""

from __future__ import annotations

CPU_CHUNK = 16
"""Tendons or colour members per thread of the step's tendon kernels and VBD body sweeps on the CPU
(``SolverBase._chunk``; 1 on a GPU, where a thread per element keeps the lanes busy). Warp runs a CPU
launch's threads one after another, and each thread first loads the struct fields its kernel uses;
taking 16 elements per thread pays that once per 16. The per-body rigid kernels (``integrate_bodies``,
``apply_slot_pose_deltas``, ``update_body_velocities``) keep a thread per body: their ``BodyModel``
loads are cheap, and a chunked version measured no faster once its two extra launch arguments were paid."""


def chunked(count: int, chunk: int) -> int:
    """Threads of a launch over ``count`` elements, ``chunk`` per thread."""
    return (count + chunk - 1) // chunk
