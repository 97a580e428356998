"""Register the native routed-cable USD schema (``newton_tendon/usd_schemas``) without importing pxr.

USD reads ``PXR_PLUGINPATH_NAME`` once, when pxr first loads, so ``newton_tendon`` imports this module
first. Stages opened afterwards know the ``NewtonTendon`` and ``NewtonTendonGuide`` prim types; the
importer reads the properties by name either way.
"""

import os

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "usd_schemas")

_paths = [p for p in os.environ.get("PXR_PLUGINPATH_NAME", "").split(os.pathsep) if p]
if SCHEMA_DIR not in _paths:
    os.environ["PXR_PLUGINPATH_NAME"] = os.pathsep.join([SCHEMA_DIR, *_paths])
