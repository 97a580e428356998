"""Solvers: launch sequences over the shared kernels in ``newton_tendon.kernels``."""

from .base import SolverBase
from .vbd import SolverVBD
from .xpbd import SolverXPBD

__all__ = ["SolverBase", "SolverVBD", "SolverXPBD"]
