"""The former home of the MJCF importer, kept so ``newton_tendon.mjcf`` imports keep working: the
importer lives in ``newton_tendon.io.mjcf``."""

from .io.mjcf import (  # noqa: F401  (the limits are importable here as before)
    MAX_ECHO,
    MAX_ELEMENT_DEPTH,
    MJ_MINVAL,
    MJ_TRIANGLE_RTOL,
    UNSUPPORTED,
    MjcfActuator,
    MjcfImport,
    MjcfImportWarning,
    add_mjcf,
    lower_tendons,
)

__all__ = ["UNSUPPORTED", "MjcfActuator", "MjcfImport", "MjcfImportWarning", "add_mjcf", "lower_tendons"]
