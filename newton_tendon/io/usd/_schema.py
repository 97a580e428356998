"""The native routed-cable schema: prim type and property names, and its registration with USD.

Importing this module registers the codeless schema in ``schemas/`` with ``Plug.Registry``
(``SCHEMA_REGISTERED`` says whether USD's schema registry picked it up: it is built once, so a
stage opened earlier keeps it unknown). ``newton_tendon`` also puts the folder on
``PXR_PLUGINPATH_NAME`` before ``pxr`` loads (``_plugin``). The importer reads properties by name
either way.
"""

from __future__ import annotations

from pxr import Plug, Usd

from newton_tendon.tendon import TendonGuideType

from ._plugin import SCHEMA_DIR

TENDON_TYPE = "NewtonTendon"
GUIDE_TYPE = "NewtonTendonGuide"
GUIDES_REL = "newton:tendon:guides"
GUIDE_PREFIX = "newton:guide:"
GUIDE_TOKENS = {"anchor": TendonGuideType.ANCHOR, "pinhole": TendonGuideType.PINHOLE, "roller": TendonGuideType.ROLLER}
MJC_TENDON_TYPE = "MjcTendon"
MJC_ACTUATOR_TYPE = "MjcActuator"


def _register_schemas() -> bool:
    """Register the native schema plugin (idempotent); True if USD's schema registry knows it."""
    Plug.Registry().RegisterPlugins(SCHEMA_DIR)
    return Usd.SchemaRegistry().FindConcretePrimDefinition(TENDON_TYPE) is not None


SCHEMA_REGISTERED = _register_schemas()
"""True when the schema registry picked up the native schema (it had not been built before)."""
