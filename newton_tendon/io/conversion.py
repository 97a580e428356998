"""Conversion: read a scene in any supported format (MJCF, URDF, USD or native, by extension) and
write it in the native format."""

from __future__ import annotations

import os

from newton_tendon.builder import ModelBuilder

from .native import load, save
from .native.validate import _check_path_arg

_MJCF_SUFFIXES = (".xml", ".mjcf")
_URDF_SUFFIXES = (".urdf",)
_USD_SUFFIXES = (".usd", ".usda", ".usdc", ".usdz")
_NATIVE_SUFFIXES = (".json",)


def _import_scene(path: str) -> ModelBuilder:
    """A fresh builder holding the scene in ``path`` (MJCF, URDF, USD or native, by extension)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _NATIVE_SUFFIXES:
        return load(path)
    if suffix in _URDF_SUFFIXES:
        if not os.path.exists(path):
            raise FileNotFoundError(f"convert: input file {path!r} does not exist")
        builder = ModelBuilder()
        builder.add_urdf(path)
        return builder
    if suffix not in _MJCF_SUFFIXES + _USD_SUFFIXES:
        known = ", ".join(_MJCF_SUFFIXES + _URDF_SUFFIXES + _USD_SUFFIXES + _NATIVE_SUFFIXES)
        raise ValueError(f"convert: cannot tell the format of input {path!r} from its extension; expected {known}")
    if not os.path.exists(path):
        raise FileNotFoundError(f"convert: input file {path!r} does not exist")
    builder = ModelBuilder()
    module = "mjcf" if suffix in _MJCF_SUFFIXES else "usd"
    try:
        if module == "mjcf":
            builder.add_mjcf(path)
        else:
            builder.add_usd(path)
    except ModuleNotFoundError as e:
        if e.name in (f"newton_tendon.{module}", f"newton_tendon.io.{module}", "pxr"):
            raise RuntimeError(
                f"convert: reading {path!r} needs the {module.upper()} importer (newton_tendon.{module} / "
                f"{'usd-core' if module == 'usd' else 'the standard library XML parser'}), which is not available: {e}"
            ) from None
        raise
    return builder


def convert(in_path, out_path) -> ModelBuilder:
    """Read a scene (MJCF ``.xml``/``.mjcf``, URDF ``.urdf``, USD ``.usd``/``.usda``/``.usdc``/``.usdz``
    or native ``.json``) and write it to ``out_path`` in the native format (``.json``; the only
    output format). Returns the builder.

    The output is written only once the input was read and validated completely; on any error no
    output file is created or changed."""
    in_path = _check_path_arg("convert", in_path)
    out_path = _check_path_arg("convert", out_path)
    out_suffix = os.path.splitext(out_path)[1].lower()
    if out_suffix not in _NATIVE_SUFFIXES:
        raise ValueError(
            f"convert: output {out_path!r} must be a native .json file; other output formats are not supported"
        )
    builder = _import_scene(in_path)
    save(builder, out_path)
    return builder
