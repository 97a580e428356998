"""Tendons in USD: MuJoCo tendon prims (``MjcTendon``, ``MjcActuator``) and the native routed-cable schema.

* :func:`import_usd_tendons` reads both kinds from a stage into a builder whose bodies (and joints) the
  UsdPhysics importer has already created: ``MjcTendon`` prims become transmission tendons
  (``add_spatial_tendon`` / ``add_fixed_tendon``), ``MjcActuator`` prims that target them become
  tendon drives, and ``NewtonTendon`` prims become routed cables (one ``add_tendon`` call each).
* :func:`write_tendons` authors the routed cables and transmission tendons of a builder or a
  finalized model into a stage, with minimal UsdPhysics rigid bodies for bodies the stage lacks.

The code lives in :mod:`newton_tendon.io.usd`; this module keeps its import path. The native schema
is in ``newton_tendon/io/usd/schemas/`` (``SCHEMA_DIR``) and is registered with ``Plug.Registry``
when this module is imported. USD builds its schema registry once, so registration only takes
effect if no stage was opened before; the importer never depends on it (it reads properties by
name, with the schema's fallbacks written out). Warnings are logged to ``newton_tendon.usd_tendons``.
Units and the up axis: see ``docs/usd_tendons.md``.
"""

from newton_tendon.io.usd._schema import (  # noqa: F401  (the public names of the old module)
    GUIDE_PREFIX,
    GUIDE_TOKENS,
    GUIDE_TYPE,
    GUIDES_REL,
    MJC_ACTUATOR_TYPE,
    MJC_TENDON_TYPE,
    SCHEMA_DIR,
    SCHEMA_REGISTERED,
    TENDON_TYPE,
)
from newton_tendon.io.usd._tendon_export import write_tendons
from newton_tendon.io.usd._tendon_import import import_usd_tendons
from newton_tendon.io.usd._tendon_values import Y_UP_ROTATION, stage_up_rotation  # noqa: F401

__all__ = ["SCHEMA_DIR", "SCHEMA_REGISTERED", "import_usd_tendons", "stage_up_rotation", "write_tendons"]
