"""``Axis``: the three coordinate axes as an int enum, as newton's API names them.

``Axis.X``, ``Axis.Y`` and ``Axis.Z`` are the ints 0, 1 and 2, so they index a 3-vector directly.
They compare equal to their int value and, ignoring case, to their letter (``Axis.Z == "z"``), print
as their letter and convert to a unit vector with :meth:`Axis.to_vector`. ``ModelBuilder(up_axis=)``
and the joint ``axis=`` arguments take an ``Axis``, its letter or its int.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import warp as wp

_INT_TYPES = (int, np.integer)


class Axis(IntEnum):
    """A coordinate axis: ``X`` = 0, ``Y`` = 1, ``Z`` = 2."""

    X = 0
    """The x axis, unit vector (1, 0, 0)."""
    Y = 1
    """The y axis, unit vector (0, 1, 0)."""
    Z = 2
    """The z axis, unit vector (0, 0, 1)."""

    @classmethod
    def from_string(cls, text: str, owner: str = "Axis: axis") -> Axis:
        """The axis named by ``text``: "X", "Y" or "Z", either case.

        ``owner`` starts the error messages (the call and argument, e.g. "ModelBuilder: up_axis").

        Raises:
            TypeError: ``text`` is not a str.
            ValueError: ``text`` names no axis.
        """
        if not isinstance(text, str):
            raise TypeError(f"{owner} must be an axis name (a str), got {type(text).__name__}")
        member = cls.__members__.get(text.upper())
        if member is None:
            raise ValueError(f"{owner} must be 'X', 'Y' or 'Z' (either case), got {text!r}")
        return member

    @classmethod
    def from_any(cls, value, owner: str = "Axis: axis") -> Axis:
        """``value`` as an axis: an ``Axis``, its letter ("x" or "X", ...) or its int 0, 1 or 2.

        Raises:
            TypeError: ``value`` is of another type (bools are not ints here).
            ValueError: a str or int that names no axis.
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls.from_string(value, owner)
        if isinstance(value, _INT_TYPES) and not isinstance(value, (bool, np.bool_)):
            if int(value) not in (0, 1, 2):
                raise ValueError(f"{owner} must be 0 (X), 1 (Y) or 2 (Z), got {int(value)}")
            return cls(int(value))
        raise TypeError(f"{owner} must be an Axis, 'X'/'Y'/'Z' or 0/1/2, got {type(value).__name__}")

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Axis.{self.name}"

    def __eq__(self, other) -> bool:
        if isinstance(other, Axis):
            return self is other
        if isinstance(other, str):
            return other.upper() == self.name
        if isinstance(other, _INT_TYPES) and not isinstance(other, (bool, np.bool_)):
            return int(other) == int(self)
        return NotImplemented

    def __ne__(self, other) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    # Equal to both its letter and its int, an axis cannot hash like both; it hashes like its letter
    # (so ``{"Z": ...}[Axis.Z]`` works), which is what code written for newton relies on.
    def __hash__(self) -> int:
        return hash(self.name)

    def to_vector(self) -> tuple[float, float, float]:
        """The axis as a unit 3-tuple of floats."""
        v = [0.0, 0.0, 0.0]
        v[int(self)] = 1.0
        return (v[0], v[1], v[2])

    def to_vec3(self) -> wp.vec3:
        """The axis as a unit ``wp.vec3``."""
        return wp.vec3(*self.to_vector())

    def quat_between_axes(self, other) -> wp.quat:
        """The shortest-arc rotation (``wp.quat``, xyzw) that turns this axis onto ``other``."""
        return wp.quat_between_vectors(self.to_vec3(), Axis.from_any(other).to_vec3())


__all__ = ["Axis"]
