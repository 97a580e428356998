"""Checked reading of JSON values: each reader takes a value and its field path (``bodies[3].mass``)
and returns it or raises ``TypeError`` (wrong JSON type) / ``ValueError`` (bad value) naming the
path and the rule. Also the strict JSON parser (no NaN/Infinity constants, no duplicate keys)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable

from .schema import _INF_STRINGS


def _check_path_arg(where: str, path) -> str:
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{where}: path must be a str or os.PathLike, got {type(path).__name__}")
    return os.fspath(path)


def _jtype(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Fields:
    """The fields of one JSON object; each is read once, and unknown or missing ones raise."""

    def __init__(self, value, path: str, what: str = "an object"):
        if not isinstance(value, dict):
            raise TypeError(f"{path or 'document'}: must be {what}, got {_jtype(value)}")
        self.value = value
        self.path = path
        self.seen: set[str] = set()

    def __call__(self, key: str, read: Callable, *args, **kwargs):
        p = _join(self.path, key)
        if key not in self.value:
            raise ValueError(f"{p}: missing field")
        self.seen.add(key)
        return read(self.value[key], p, *args, **kwargs)

    def has(self, key: str) -> bool:
        return key in self.value

    def done(self):
        extra = [k for k in self.value if k not in self.seen]
        if extra:
            raise ValueError(f"{_join(self.path, extra[0])}: unknown field")


def _str(v, p: str) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{p}: must be a string, got {_jtype(v)}")
    return v


def _bool(v, p: str) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"{p}: must be true or false, got {_jtype(v)}")
    return v


_INT32 = (-(2**31), 2**31 - 1)


def _int(v, p: str, lo: int | None = None, hi: int | None = None, what: str = "") -> int:
    """An integer; every integer of the format is an int32 on the device, so that range always applies."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{p}: must be an integer, got {_jtype(v)}")
    if not _INT32[0] <= v <= _INT32[1]:
        raise ValueError(f"{p}: {v} does not fit in a 32-bit signed integer")
    if lo is not None and hi is not None and hi < lo:
        raise ValueError(f"{p}: {v} is out of range: there is no {what or 'entry'} to refer to")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"{p}: {v} is out of range; expected {what + ' ' if what else ''}{rng}")
    return v


def _float(v, p: str, lo: float | None = None, hi: float | None = None, *, lo_open=False, allow_inf=False) -> float:
    if isinstance(v, str) and v in ("nan", "NaN"):
        raise ValueError(f"{p}: NaN is not allowed")
    if isinstance(v, str) and v in _INF_STRINGS:
        if not allow_inf:
            raise ValueError(f"{p}: must be finite, got {v!r}")
        x = _INF_STRINGS[v]
    elif isinstance(v, bool) or not isinstance(v, (int, float)):
        extra = ' (infinities are written "inf" / "-inf")' if allow_inf else ""
        raise TypeError(f"{p}: must be a number{extra}, got {_jtype(v)}")
    else:
        x = float(v)
        if math.isnan(x):
            raise ValueError(f"{p}: NaN is not allowed")
        if math.isinf(x) and not allow_inf:
            raise ValueError(f"{p}: must be finite, got {x}")
    if lo is not None and (x < lo or (lo_open and x == lo)):
        raise ValueError(f"{p}: must be {'>' if lo_open else '>='} {lo}, got {x!r}")
    if hi is not None and x > hi:
        raise ValueError(f"{p}: must be <= {hi}, got {x!r}")
    return x


def _array(v, p: str, n: int | None = None) -> list:
    if not isinstance(v, list):
        raise TypeError(f"{p}: must be an array, got {_jtype(v)}")
    if n is not None and len(v) != n:
        raise ValueError(f"{p}: must have {n} entries, got {len(v)}")
    return v


def _floats(v, p: str, n: int, **kw) -> tuple:
    return tuple(_float(x, f"{p}[{i}]", **kw) for i, x in enumerate(_array(v, p, n)))


def _xform(v, p: str) -> tuple:
    xf = _floats(v, p, 7)
    if math.sqrt(sum(c * c for c in xf[3:])) < 1.0e-6:
        raise ValueError(f"{p}: the quaternion (entries 3..6) must be nonzero")
    return xf


def _nonzero3(v, p: str) -> tuple:
    a = _floats(v, p, 3)
    if math.sqrt(sum(c * c for c in a)) < 1.0e-12:
        raise ValueError(f"{p}: must be a nonzero vector")
    return a


def _enum(v, p: str, names: dict[int, str]) -> int:
    s = _str(v, p)
    for code, name in names.items():
        if name == s:
            return code
    raise ValueError(f"{p}: unknown value {s!r}; expected one of {', '.join(repr(n) for n in names.values())}")


def _flags(v, p: str, names: dict[int, str]) -> int:
    out = 0
    for i, x in enumerate(_array(v, p)):
        bit = _enum(x, f"{p}[{i}]", names)
        if out & bit:
            raise ValueError(f"{p}[{i}]: flag {x!r} is listed twice")
        out |= bit
    return out


def _world(v, p: str, world_count: int) -> int:
    """-1 or an existing world (a builder without worlds finalizes as world 0, so 0 is allowed there)."""
    return _int(v, p, -1, max(world_count, 1) - 1, "world (-1 or a world index)")


def _check_entity_world(path: str, world: int, expected: int, owner: str, rule: str):
    """The builder derives an entity's world from the bodies it is attached to; a stored ``world``
    must equal what the builder would have assigned (``owner`` names those bodies, ``rule`` the reason)."""
    if world != expected:
        raise ValueError(f"{path}.world: {world}, but {owner} in world {expected}; {rule}")


def _parse_json(text: str):
    def no_constants(name):
        raise ValueError(
            f'{name} is not valid JSON (write infinities as the strings "inf" / "-inf"; NaN is never allowed)'
        )

    def no_duplicates(pairs):
        obj = {}
        for k, v in pairs:
            if k in obj:
                raise ValueError(f"duplicate key {k!r} in one object")
            obj[k] = v
        return obj

    try:
        return json.loads(text, parse_constant=no_constants, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as e:
        raise ValueError(f"document: broken JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except ValueError as e:
        raise ValueError(f"document: {e}") from None
    except RecursionError:
        raise ValueError("document: broken JSON: nested too deeply") from None


def _str_choice(f: _Fields, key: str, choices: tuple) -> str:
    s = f(key, _str)
    if s not in choices:
        raise ValueError(f"{_join(f.path, key)}: unknown value {s!r}; expected one of {', '.join(choices)}")
    return s
