"""Import UsdPhysics scenes from USD stages into a :class:`~newton_tendon.ModelBuilder`.

``add_usd(builder, source, ...)`` (also reachable as ``builder.add_usd(source, ...)``) reads rigid
bodies, collision shapes, joints, articulation roots, collision filters and physics materials,
converts stage units to SI and a Y-up stage to Z-up, then hands the stage to the tendon importer
(:mod:`newton_tendon.usd_tendons`). The code lives in :mod:`newton_tendon.io.usd`; this module keeps
its import path. Warnings are logged to ``newton_tendon.usd``. See ``docs/usd.md``.
"""

from newton_tendon.io.usd import MAX_ECHO, UsdCompositionWarning, add_usd, check_composition, write_tendons

__all__ = ["MAX_ECHO", "UsdCompositionWarning", "add_usd", "check_composition", "write_tendons"]
