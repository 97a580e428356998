"""The native JSON format: ``schema`` (what a document holds), ``validate`` (checked reading of
JSON values), ``write`` (builder -> document -> text -> file) and ``read`` (file -> text ->
document -> builder). ``newton_tendon.io`` re-exports the public names."""

from .read import from_dict, load, loads
from .schema import BUILDER_FIELDS, FORMAT_NAME, FORMAT_VERSION
from .write import dumps, save, to_dict

__all__ = [
    "BUILDER_FIELDS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "dumps",
    "from_dict",
    "load",
    "loads",
    "save",
    "to_dict",
]
