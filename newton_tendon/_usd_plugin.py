"""Old import path of :mod:`newton_tendon.io.usd._plugin`, which puts the native USD schema folder on
``PXR_PLUGINPATH_NAME`` before ``pxr`` loads (``newton_tendon`` imports this module first)."""

from newton_tendon.io.usd._plugin import SCHEMA_DIR  # noqa: F401
