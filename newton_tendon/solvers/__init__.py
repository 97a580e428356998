"""Solvers: launch sequences over the shared kernels in ``warp_kernels``."""

from .base import SolverBase
from .xpbd import SolverXPBD

__all__ = ["SolverBase", "SolverXPBD"]
