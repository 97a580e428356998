"""MJCF import (``add_mjcf``) and MuJoCo lowering of routed cables (``lower_tendons``).

``add_mjcf`` reads a MuJoCo model file or string with the standard library's expat parser (so every
error can name the element and its line) and appends its bodies, joints, geoms, transmission
tendons, tendon actuators and tendon equalities to a ``ModelBuilder``. Everything is first built
into a scratch builder; the caller's builder only changes once the whole file has been accepted.
``docs/mjcf.md`` lists what is supported, how each MuJoCo quantity maps onto ours, and what is
rejected.

``lower_tendons`` writes the MuJoCo-compatible subset of a finalized model's routed cables
(anchors and frictionless pinholes as sites, frictionless fixed rollers as cylinder wrap geoms with
a side site) as MJCF text, and rejects what has no faithful MuJoCo equivalent.

Layout: ``document`` (XML with line numbers, MuJoCo's number syntax), ``attributes`` (what each
element accepts), ``importer`` (the importer's state, attribute readers, section order and
``add_mjcf``), one module per group of element kinds (``settings``: compiler, option, default;
``bodies``: body, frame, inertial, joint; ``geoms``: geom, site, contact; ``tendons``: fixed and
spatial tendons, tendon equalities; ``actuators``), ``results`` (what ``add_mjcf`` returns) and
``lower`` (``lower_tendons``).
"""

# The parser's documented limits (docs/mjcf.md), importable here as before; not in __all__.
from .document import MAX_ECHO, MAX_ELEMENT_DEPTH, MJ_MINVAL, MJ_TRIANGLE_RTOL  # noqa: F401
from .importer import UNSUPPORTED, MjcfImportWarning, add_mjcf
from .lower import lower_tendons
from .results import MjcfActuator, MjcfImport

__all__ = ["UNSUPPORTED", "MjcfActuator", "MjcfImport", "MjcfImportWarning", "add_mjcf", "lower_tendons"]
