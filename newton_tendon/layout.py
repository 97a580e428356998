"""Layout fingerprints: which model a State, Control or Contacts buffer was made for.

Every array of a State, Control and Contacts buffer is sized by the counts of the model that made it
(``body_count``, ``joint_dof_count``, ``tendon_segment_count``, ``contact_capacity``, ...). A kernel
launched with the arrays of a model of another layout reads and writes past their ends: a
segmentation fault, or silent garbage in another array. ``finalize`` stores the model's counts and
device once as a :class:`ModelLayout`; ``Model.state()``, ``Model.control()`` and
``CollisionPipeline.contacts()`` stamp their object with it, and every public entry point compares
the stamps on the host before it launches anything (``check_state``, ``check_control``,
``collision.check_contacts``). The comparison reads no array data, so ``step()`` stays graph-capturable; a stamp
that is the model's own object is accepted by one identity test.

A State or Control keeps its stamp true: replacing one of its arrays by one of another shape, dtype
or device raises at the assignment (``State.__setattr__``), so the stamp cannot be outlived by the
arrays it describes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import warp as wp

_EXTRA_COUNTS = ("contact_capacity",)
"""Model sizes that are not named ``*_count`` but size a buffer."""
_NOT_LAYOUT = ("body_color_count",)
"""Counts that size no State, Control or Contacts array (the VBD colouring may differ between two
finalizes of one builder)."""


@dataclass(frozen=True)
class ModelLayout:
    """The counts that size a model's State, Control and Contacts arrays, and its device.

    Two models of one layout (two finalizes of one builder, or a model loaded from its saved file)
    share States, Controls and contact buffers; models of different layouts do not."""

    device: str
    """Warp device alias of the model ("cpu", "cuda:0")."""
    counts: tuple[tuple[str, int], ...]
    """(name, value) of each count, sorted by name."""
    attributes: tuple[tuple[str, str], ...] = ()
    """(key, assignment) of each custom attribute: a State or Control carries the STATE or CONTROL ones."""

    @classmethod
    def of(cls, model) -> ModelLayout:
        """The layout of a finalized model (its ``*_count`` integers and ``contact_capacity``)."""
        counts = sorted(
            (name, int(value))
            for name, value in vars(model).items()
            if (name.endswith("_count") or name in _EXTRA_COUNTS)
            and not name.startswith("_")
            and name not in _NOT_LAYOUT
            and isinstance(value, int)
            and not isinstance(value, bool)
        )
        assignment = getattr(model, "custom_attribute_assignment", {}) or {}
        attributes = tuple(sorted((str(k), str(getattr(v, "name", v))) for k, v in assignment.items()))
        return cls(str(wp.get_device(model.device).alias), tuple(counts), attributes)

    def difference(self, other: ModelLayout) -> str:
        """The first fields in which ``other`` differs from this layout, as "name other vs this" text."""
        if other.device != self.device:
            return f"device {other.device}, the model's {self.device}"
        mine = dict(self.counts)
        parts = []
        for name, value in other.counts:
            if mine.get(name, value) != value:
                parts.append(f"{name} {value}, the model's {mine[name]}")
        missing = sorted(set(mine) - {n for n, _ in other.counts})
        parts += [f"no {name}" for name in missing]
        if not parts and other.attributes != self.attributes:
            parts.append("other custom attributes")
        return "; ".join(parts[:4]) + ("; ..." if len(parts) > 4 else "")


def layout_of(model) -> ModelLayout:
    """The model's stored layout (computed once, at finalize or on the first call)."""
    layout = getattr(model, "_layout", None)
    if layout is None:
        layout = ModelLayout.of(model)
        model._layout = layout
    return layout


_MADE_BY = {"State": "model.state()", "Control": "model.control()", "Contacts": "pipeline.contacts()"}


@functools.cache
def _classes():
    from .model import Model  # noqa: PLC0415 (model and state import this module)
    from .state import Control, State  # noqa: PLC0415

    return {"State": State, "Control": Control, "Model": Model}


def check_stamped(owner: str, arg: str, value, kind: str, model, allow_model: bool = False, cls=None) -> None:
    """Raise TypeError unless ``value`` is an instance of ``kind`` ("State", "Control"; or of ``cls``,
    for the classes of layers above this one, as ``Contacts``), and ValueError unless its stamp is
    ``model``'s layout."""
    expected = layout_of(model)
    classes = _classes()
    if allow_model and isinstance(value, classes["Model"]):
        stamp = layout_of(value)
    elif isinstance(value, cls if cls is not None else classes[kind]):
        stamp = value.__dict__.get("_layout")
    else:
        what = f"a {kind}" + (" or a Model" if allow_model else "")
        raise TypeError(f"{owner}: {arg} must be {what} (from {_MADE_BY[kind]}), got {type(value).__name__}")
    if stamp is expected or stamp == expected:
        return
    if stamp is None:
        raise ValueError(f"{owner}: {arg} was not made by a model (create it with {_MADE_BY[kind]})")
    raise ValueError(
        f"{owner}: {arg} belongs to a model of another layout ({expected.difference(stamp)}); "
        f"create it with this model's {_MADE_BY[kind].replace('model.', '')}"
    )


def check_state(owner: str, arg: str, state, model, *, allow_model: bool = False) -> None:
    """Raise TypeError unless ``state`` is a State (or, with ``allow_model``, a Model), and ValueError
    unless it was made for a model of ``model``'s layout. Host only; reads no array data."""
    check_stamped(owner, arg, state, "State", model, allow_model)


def check_control(owner: str, arg: str, control, model) -> None:
    """As :func:`check_state` for a Control."""
    check_stamped(owner, arg, control, "Control", model)


def guard_array_assignment(obj, name: str, value) -> None:
    """Refuse to replace a wp.array attribute of a stamped State/Control by one of another shape, dtype
    or device (the stamp would then describe arrays it no longer holds)."""
    old = obj.__dict__.get(name)
    if not isinstance(old, wp.array) or "_layout" not in obj.__dict__:
        return
    owner = f"{type(obj).__name__}.{name}"
    if not isinstance(value, wp.array):
        raise TypeError(f"{owner}: must be a wp.array (write values with .assign()), got {type(value).__name__}")
    if value.shape != old.shape or value.dtype != old.dtype or value.device != old.device:
        raise ValueError(
            f"{owner}: the replacement has shape {value.shape}, dtype {getattr(value.dtype, '__name__', value.dtype)} "
            f"on {value.device}; this object's model needs shape {old.shape}, dtype "
            f"{getattr(old.dtype, '__name__', old.dtype)} on {old.device}"
        )
