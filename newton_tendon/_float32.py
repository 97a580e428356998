"""The float32 range rule: the builder works in float64, but every float the model stores goes to a
float32 device array, so a finite value must stay finite when cast (|v| <= 3.4e38), and a derived
inverse (1/mass, inverse inertia) must too."""

from __future__ import annotations

import math

import numpy as np

FLOAT32_MAX = float(np.finfo(np.float32).max)
"""Largest finite float32 (3.4028235e38)."""


FLOAT32_OVERFLOW = 2.0**128 - 2.0**103
"""Smallest float64 magnitude that rounds to inf in float32: float32 max plus half its last place
(round to nearest even takes the tie up, float32 max having an odd significand)."""


def overflows(values) -> np.ndarray:
    """Mask of the values that are finite in float64 but not in float32 (NaN and +-inf are not
    flagged: where they are allowed, float32 keeps them; where not, the argument checks reject them)."""
    a = np.abs(np.asarray(values, dtype=np.float64))
    return np.isfinite(a) & (a >= FLOAT32_OVERFLOW)


def first_overflow(values) -> float | None:
    """The first value that overflows float32, or None."""
    if isinstance(values, (int, float)):  # the builder's scalar arguments: no array round trip
        v = float(values)
        return v if FLOAT32_OVERFLOW <= abs(v) < math.inf else None
    if isinstance(values, (tuple, list)) and all(isinstance(v, (int, float)) for v in values):
        return next((float(v) for v in values if FLOAT32_OVERFLOW <= abs(float(v)) < math.inf), None)
    mask = overflows(values)
    if not mask.any():
        return None
    return float(np.asarray(values, dtype=np.float64)[mask].flat[0])


def range_message(what: str, value: float) -> str:
    return (
        f"{what} {value:g} overflows float32 (the model's device arrays are float32: a finite value must "
        f"satisfy |v| <= {FLOAT32_MAX:.2g})"
    )


def check_range(owner: str, name: str, values) -> None:
    """Raise ValueError ``owner: name ... overflows float32`` if a finite value does not fit in float32."""
    v = first_overflow(values)
    if v is not None:
        raise ValueError(f"{owner}: {range_message(name, v)}")
