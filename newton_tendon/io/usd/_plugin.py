"""Register the native routed-cable USD schema (``newton_tendon/io/usd/schemas``) without importing pxr.

USD reads ``PXR_PLUGINPATH_NAME`` once, when pxr first loads, so ``newton_tendon`` imports this module
first (through ``newton_tendon._usd_plugin``). Stages opened afterwards know the ``NewtonTendon`` and
``NewtonTendonGuide`` prim types; the importer reads the properties by name either way.
"""

import os

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")
"""Folder holding plugInfo.json, schema.usda and generatedSchema.usda of the native schema."""

_paths = [p for p in os.environ.get("PXR_PLUGINPATH_NAME", "").split(os.pathsep) if p]
if SCHEMA_DIR not in _paths:
    os.environ["PXR_PLUGINPATH_NAME"] = os.pathsep.join([SCHEMA_DIR, *_paths])
