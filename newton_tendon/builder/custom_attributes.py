"""Custom attributes: declaring them, authoring per-entity values, and checking and merging those values.

An attribute has a frequency (one value per body, shape, joint, tendon, guide, span, ...) and an
assignment (its finalized array lives on the Model, or a copy on each State or Control; see
``newton_tendon.finalize`` and ``Model.state``). newton's declaration, ``ModelBuilder.CustomAttribute``
with ``Model.AttributeFrequency`` and ``Model.AttributeAssignment``, is the same class.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import warp as wp

from ..exceptions import UndeclaredAttributeError
from ..tendon import AttributeAssignment, AttributeFrequency, CustomAttribute
from ._checks import _index, _real, _vec3

if TYPE_CHECKING:
    from .model_builder import ModelBuilder

_DTYPES = {float: float, wp.float32: float, int: int, wp.int32: int, "vec3": "vec3", wp.vec3: "vec3"}
"""Accepted ``CustomAttribute.dtype`` values -> the stored dtype (newton passes Warp dtypes)."""

_ZERO = {float: 0.0, int: 0, "vec3": (0.0, 0.0, 0.0)}


class CustomAttributeBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: attribute declarations and authored values."""

    def _init_custom_attributes(self):
        # Custom attributes: declarations by name and authored values {entity index: value}.
        self.custom_attributes: dict[str, CustomAttribute] = {}
        self.custom_attribute_values: dict[str, dict[int, object]] = {}

    _REFERENCE_DOMAINS = tuple(f.domain for f in AttributeFrequency)

    def _domain_count(self, domain: str) -> int:
        """Number of entities in a custom-attribute domain ("body" -> body_count, ...)."""
        return getattr(self, f"{domain}_count")

    def add_custom_attribute(self, attribute: CustomAttribute) -> None:
        """Declare a custom attribute; values are authored later (for tendons through ``add_tendon``,
        for any entity through ``set_custom_attribute``) or given in ``attribute.values``.

        The finalized model holds one array per attribute in ``model.custom_attributes[key]`` (``key``
        is ``"<namespace>:<name>"`` or ``name``), with one value per entity of the attribute's
        frequency (``default`` where none was authored); it is also reached as ``model.<name>`` or
        ``model.<namespace>.<name>``, or on each State/Control for those assignments.
        """
        owner = "add_custom_attribute"
        if not isinstance(attribute, CustomAttribute):
            raise TypeError(f"{owner}: expected a CustomAttribute, got {type(attribute).__name__}")
        name = attribute.name
        if not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a str, got {type(name).__name__}")
        if not name.isidentifier():
            raise ValueError(f"{owner}: name must be a Python identifier, got {name!r}")
        ns = attribute.namespace
        if ns is not None:
            if not isinstance(ns, str):
                raise TypeError(f"{owner}: '{name}' namespace must be a str or None, got {type(ns).__name__}")
            if not ns.isidentifier():
                raise ValueError(f"{owner}: '{name}' namespace must be a Python identifier, got {ns!r}")
        key = attribute.key
        if key in self.custom_attributes:
            raise ValueError(f"{owner}: attribute '{key}' is already declared")
        freq = attribute.frequency
        if isinstance(freq, (bool, np.bool_)) or not isinstance(freq, (int, np.integer)):
            raise TypeError(f"{owner}: '{key}' frequency must be an AttributeFrequency, got {type(freq).__name__}")
        try:
            freq = AttributeFrequency(freq)
        except ValueError:
            raise ValueError(
                f"{owner}: '{key}' has unknown frequency {freq!r}; supported: "
                f"{', '.join(f.name for f in AttributeFrequency)}"
            ) from None
        assignment = attribute.assignment
        if isinstance(assignment, (bool, np.bool_)) or not isinstance(assignment, (int, np.integer)):
            raise TypeError(
                f"{owner}: '{key}' assignment must be an AttributeAssignment, got {type(assignment).__name__}"
            )
        try:
            assignment = AttributeAssignment(assignment)
        except ValueError:
            raise ValueError(
                f"{owner}: '{key}' has unsupported assignment {assignment!r}; supported: "
                f"{', '.join(a.name for a in AttributeAssignment)}"
            ) from None
        try:
            dtype = _DTYPES.get(attribute.dtype)
        except TypeError:  # an unhashable dtype
            dtype = None
        if dtype is None:
            raise TypeError(
                f"{owner}: '{key}' dtype must be float, int or 'vec3' (or wp.float32, wp.int32, wp.vec3), "
                f"got {attribute.dtype!r}"
            )
        references = attribute.references
        if references is not None:
            if isinstance(references, AttributeFrequency):
                references = references.domain
            if dtype is not int:
                raise TypeError(f"{owner}: '{key}' references {references!r} but its dtype is not int")
            if references not in self._REFERENCE_DOMAINS:
                raise ValueError(
                    f"{owner}: '{key}' references unknown domain {references!r}; "
                    f"expected one of {self._REFERENCE_DOMAINS}"
                )
        default = _ZERO[dtype] if attribute.default is None else attribute.default
        decl = dataclasses.replace(
            attribute,
            frequency=freq,
            assignment=assignment,
            dtype=dtype,
            default=None,
            references=references,
            values={},
        )
        decl = dataclasses.replace(decl, default=self._custom_value(f"{owner}('{key}')", decl, default))
        given = attribute.values
        if given is not None and not isinstance(given, dict):
            raise TypeError(
                f"{owner}: '{key}' values must be a dict of entity index -> value, got {type(given).__name__}"
            )
        count = self._domain_count(freq.domain)
        for i, v in (given or {}).items():
            i = _index(f"{owner}('{key}') values", "index", i, count, allow_world=False)
            decl.values[i] = self._custom_value(f"{owner}('{key}') values[{i}]", decl, v)
        self.custom_attributes[key] = decl
        # One dict, two names: builder.custom_attribute_values[key] is builder.custom_attributes[key].values.
        self.custom_attribute_values[key] = decl.values

    @staticmethod
    def _custom_value(owner: str, attribute: CustomAttribute, value):
        if attribute.dtype is float:
            return _real(owner, attribute.name, value)
        if attribute.dtype is int:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{owner}: {attribute.name} must be an int, got {type(value).__name__}")
            return int(value)
        return _vec3(owner, attribute.name, value)

    def _check_custom_values(self, owner: str, values, frequency: AttributeFrequency) -> dict:
        """Validate authored custom-attribute values of one entity; returns {name: normalized value}."""
        if values is None:
            return {}
        if not isinstance(values, dict):
            raise TypeError(f"{owner}: custom attributes must be a dict of name -> value, got {type(values).__name__}")
        out = {}
        for name, value in values.items():
            attr = self.custom_attributes.get(name)
            if attr is None:
                raise UndeclaredAttributeError(
                    f"{owner}: custom attribute '{name}' is not declared (not defined in this builder); "
                    "call add_custom_attribute first"
                )
            if attr.frequency != frequency:
                raise ValueError(
                    f"{owner}: custom attribute '{name}' has frequency {AttributeFrequency(attr.frequency).name}, "
                    f"expected {frequency.name} here"
                )
            out[name] = self._custom_value(f"{owner}: custom attribute", attr, value)
        return out

    def set_custom_attribute(self, name: str, index: int, value) -> None:
        """Author the value of a declared custom attribute for one entity (body, shape, joint, tendon, ...)."""
        owner = f"set_custom_attribute({name!r})"
        if not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a str, got {type(name).__name__}")
        attr = self.custom_attributes.get(name)
        if attr is None:
            raise UndeclaredAttributeError(
                f"{owner}: custom attribute '{name}' is not declared (not defined in this builder); "
                "call add_custom_attribute first"
            )
        count = self._domain_count(AttributeFrequency(attr.frequency).domain)
        i = _index(owner, "index", index, count, allow_world=False)
        self.custom_attribute_values[name][i] = self._custom_value(owner, attr, value)

    def _merge_custom_attributes(self, other: ModelBuilder, offsets: dict[str, int]):
        """Append ``other``'s custom-attribute values, shifting entity indices and integer references."""
        for name, attr in other.custom_attributes.items():
            if name not in self.custom_attributes:
                mine = dataclasses.replace(attr, values={})
                self.custom_attributes[name] = mine
                self.custom_attribute_values[name] = mine.values
            base = offsets[AttributeFrequency(attr.frequency).domain]
            ref = offsets[attr.references] if attr.references else 0
            dst = self.custom_attribute_values[name]
            for idx, v in other.custom_attribute_values[name].items():
                dst[idx + base] = v + ref if (attr.references and v >= 0) else v
