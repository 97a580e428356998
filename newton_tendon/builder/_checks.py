"""Argument checks shared by the builder parts.

Each check returns the normalized value or raises ``TypeError``/``ValueError`` with the owner's
name (the ``add_*`` call and its label) and the rule in the message. The checks only read their
arguments, so an ``add_*`` method can run all of them before it appends anything.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _hostmath as hm
from .._float32 import check_range as check_float32_range
from ..axis import Axis
from ..exceptions import IndexTypeError

_AXES = {"X": 0, "Y": 1, "Z": 2}
"""Axis letter -> coordinate index."""


def _real(owner: str, name: str, value, *, lo: float | None = None, lo_open: bool = False, allow_inf=False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{owner}: {name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if math.isnan(v) or (not allow_inf and math.isinf(v)):
        raise ValueError(f"{owner}: {name} must be finite, got {v}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        rule = ">" if lo_open else ">="
        raise ValueError(f"{owner}: {name} must be {rule} {lo}, got {v}")
    check_float32_range(owner, name, v)
    if lo_open and float(np.float32(v)) <= lo:
        raise ValueError(f"{owner}: {name} must be > {lo} in float32 too (the model's precision), got {v}")
    return v


def _vec3(owner: str, name: str, value, *, nonzero: bool = False) -> tuple:
    try:
        vals = [float(c) for c in value]
    except (TypeError, ValueError):
        raise TypeError(f"{owner}: {name} must be a sequence of three numbers, got {value!r}") from None
    if len(vals) != 3:
        raise ValueError(f"{owner}: {name} must have three components, got {len(vals)}")
    if not all(math.isfinite(c) for c in vals):
        raise ValueError(f"{owner}: {name} must be finite, got {tuple(vals)}")
    if nonzero and math.sqrt(sum(c * c for c in vals)) < 1.0e-12:
        raise ValueError(f"{owner}: {name} must be nonzero")
    check_float32_range(owner, name, vals)
    return tuple(vals)


def _axis_vec3(owner: str, name: str, value) -> tuple:
    """A direction given as a 3-vector or as an :class:`Axis` (or its letter, or its int 0/1/2).

    An axis becomes its unit vector, so ``Axis.Y`` and ``(0, 1, 0)`` give the same floats. A bool is
    neither: it raises TypeError like any other non-axis scalar."""
    if isinstance(value, (Axis, str, int, np.integer, bool, np.bool_)):
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(
                f"{owner}: {name} must be an Axis, 'X'/'Y'/'Z', 0/1/2 or three numbers, got {type(value).__name__}"
            )
        return Axis.from_any(value, f"{owner}: {name}").to_vector()
    return _vec3(owner, name, value, nonzero=True)


def _xform(owner: str, name: str, value) -> tuple:
    if value is None:
        return hm.IDENTITY
    try:
        vals = [float(c) for c in value]
    except (TypeError, ValueError):
        raise TypeError(f"{owner}: {name} must be a transform (px, py, pz, qx, qy, qz, qw), got {value!r}") from None
    if len(vals) != 7:
        raise ValueError(f"{owner}: {name} must have 7 components (position, quaternion xyzw), got {len(vals)}")
    if not all(math.isfinite(c) for c in vals):
        raise ValueError(f"{owner}: {name} must be finite, got {tuple(vals)}")
    check_float32_range(owner, f"{name} position", vals[:3])
    n = math.sqrt(sum(c * c for c in vals[3:]))
    if n < 1.0e-6:
        raise ValueError(f"{owner}: {name} has a zero quaternion")
    return (*vals[:3], *(c / n for c in vals[3:]))


def _index(owner: str, name: str, value, count: int, *, allow_world: bool) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise IndexTypeError(f"{owner}: {name} must be an int body index, got {type(value).__name__}")
    v = int(value)
    lo = -1 if allow_world else 0
    if v < lo or v >= count:
        what = "-1 (world) or " if allow_world else ""
        # "body index" is the phrase newton's own errors use; code matching them keeps working.
        raise ValueError(f"{owner}: {name} {v} is out of range; expected a body index, {what}0..{count - 1}")
    return v


def _flag(owner: str, name: str, value) -> bool:
    """A bool argument (NumPy bools accepted); anything else is a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _label(owner: str, label, default: str) -> str:
    if label is None:
        return default
    if not isinstance(label, str):
        raise TypeError(f"{owner}: label must be a str, got {type(label).__name__}")
    return label
