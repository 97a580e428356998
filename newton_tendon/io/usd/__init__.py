"""USD import and export: UsdPhysics scenes, MuJoCo tendon prims and the native routed-cable schema.

``add_usd(builder, source, ...)`` (also ``builder.add_usd(source, ...)``) reads rigid bodies,
collision shapes, joints, articulation roots, collision filters and physics materials, converts
stage units to SI and a Y-up stage to Z-up, then hands the stage to the tendon importer. The whole
scene is built into a scratch builder first and merged with ``add_builder`` only when everything
parsed, so an error leaves the caller's builder unchanged. ``write_tendons`` authors the routed
cables and transmission tendons of a builder or a model on a stage.

This package imports no ``pxr`` (``import newton_tendon`` stays light); the tendon modules do,
when first used. The documented import paths are :mod:`newton_tendon.usd` and
:mod:`newton_tendon.usd_tendons` (the tendon functions: ``import_usd_tendons``,
``stage_up_rotation``, ``write_tendons``). See ``docs/usd.md`` and ``docs/usd_tendons.md``.

Layout, one idea per module:

* ``_plugin``: puts ``schemas/`` on ``PXR_PLUGINPATH_NAME`` before ``pxr`` loads (no ``pxr``).
* ``_schema``: names of the native schema's prim types and properties; registers it with USD.
* ``_composition``: opening a stage and checking that it composed (``check_composition``).
* ``_physics_attrs``, ``_physics_xforms``: typed attribute reads and transforms of UsdPhysics prims.
* ``_physics_bodies``, ``_physics_joints``, ``_physics_importer``: the UsdPhysics importer (bodies
  and shapes, joints and articulations, the pass over the stage with filters and gravity).
* ``_stage_import``: ``add_usd``, the entry point.
* ``_tendon_values``: stage frames and typed reads for tendon prims.
* ``_mjc_tendons``: MuJoCo ``MjcTendon`` / ``MjcActuator`` prims.
* ``_tendon_import``: ``import_usd_tendons`` and the native routed cables.
* ``_tendon_export``: ``write_tendons``, authoring tendon prims.
"""

from . import _plugin  # noqa: F401  (first: sets USD's plugin path before pxr loads)
from ._composition import MAX_ECHO, UsdCompositionWarning, check_composition
from ._stage_import import add_usd, write_tendons

__all__ = ["MAX_ECHO", "UsdCompositionWarning", "add_usd", "check_composition", "write_tendons"]
