"""Scene input and output: native persistence (save a ModelBuilder to one JSON document and load it
back exactly) and the importers of other formats.

The package holds one subpackage per format: ``native`` (the JSON format; this package re-exports
its public names), ``mjcf`` (MuJoCo MJCF import and the lowering of routed cables to MJCF, behind
``ModelBuilder.add_mjcf``) and ``usd`` (USD import, behind ``ModelBuilder.add_usd``). ``convert``
reads any of them and writes the native format.

The native format (``{"format": "newton_tendon", "version": 1, ...}``) is documented field by field in
``docs/persistence.md``. It stores the builder's state, not a recipe of calls: loading assigns the
stored lists to a fresh :class:`ModelBuilder`, so mass accumulated from shape densities, poses moved
by ``replicate``/``add_world`` and every other derived value come back bit for bit, and the loaded
builder finalizes to a Model whose arrays equal the original's.

Floats are written with Python's shortest round-trip ``repr``, so they are exact. Standard JSON has
no infinities: fields that may be infinite (joint limits, transmission limits and actuation bounds)
hold the strings ``"inf"`` / ``"-inf"``. NaN is never valid.

Reading validates the whole document before a builder is built: a malformed file raises
``ValueError`` (bad value, missing or unknown field, index out of range, broken JSON, wrong
version) or ``TypeError`` (wrong JSON type), with the field path (``bodies[3].mass``) and the rule
in the message. ``save``/``dumps`` run the same validation on what they are about to write, so a
saved file always loads.

Example::

    from newton_tendon import io

    io.save(builder, "scene.json")
    copy = io.load("scene.json")
    io.convert("robot.xml", "robot.json")  # MJCF / USD / native in, native out
"""

from .conversion import convert
from .native import BUILDER_FIELDS, FORMAT_NAME, FORMAT_VERSION, dumps, from_dict, load, loads, save, to_dict

__all__ = [
    "BUILDER_FIELDS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "convert",
    "dumps",
    "from_dict",
    "load",
    "loads",
    "save",
    "to_dict",
]
