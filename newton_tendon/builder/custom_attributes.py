"""Custom attributes: declaring them, authoring per-entity values, and checking and merging those values.

An attribute has a frequency (one value per body, shape, joint, tendon, guide, span, ...); the
finalized model holds one array per attribute (``newton_tendon.finalize``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..tendon import AttributeFrequency, CustomAttribute
from ._checks import _index, _real, _vec3

if TYPE_CHECKING:
    from .model_builder import ModelBuilder


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
        """Declare a custom attribute; values are authored later (for tendons through ``add_tendon``).

        The finalized model holds one array per attribute in ``model.custom_attributes[name]``, with
        one value per entity of the attribute's frequency (``default`` where none was authored).
        """
        owner = "add_custom_attribute"
        if not isinstance(attribute, CustomAttribute):
            raise TypeError(f"{owner}: expected a CustomAttribute, got {type(attribute).__name__}")
        name = attribute.name
        if not isinstance(name, str):
            raise TypeError(f"{owner}: name must be a str, got {type(name).__name__}")
        if not name.isidentifier():
            raise ValueError(f"{owner}: name must be a Python identifier, got {name!r}")
        if name in self.custom_attributes:
            raise ValueError(f"{owner}: attribute '{name}' is already declared")
        freq = attribute.frequency
        if isinstance(freq, (bool, np.bool_)) or not isinstance(freq, (int, np.integer)):
            raise TypeError(f"{owner}: '{name}' frequency must be an AttributeFrequency, got {type(freq).__name__}")
        try:
            AttributeFrequency(freq)
        except ValueError:
            raise ValueError(f"{owner}: '{name}' has unknown frequency {freq!r}") from None
        if attribute.dtype not in (float, int, "vec3"):
            raise TypeError(f"{owner}: '{name}' dtype must be float, int or 'vec3', got {attribute.dtype!r}")
        if attribute.references is not None:
            if attribute.dtype is not int:
                raise TypeError(f"{owner}: '{name}' references {attribute.references!r} but its dtype is not int")
            if attribute.references not in self._REFERENCE_DOMAINS:
                raise ValueError(
                    f"{owner}: '{name}' references unknown domain {attribute.references!r}; "
                    f"expected one of {self._REFERENCE_DOMAINS}"
                )
        self._custom_value(f"{owner}('{name}')", attribute, attribute.default)
        self.custom_attributes[name] = attribute
        self.custom_attribute_values[name] = {}

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
                raise ValueError(f"{owner}: custom attribute '{name}' is not declared; call add_custom_attribute first")
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
            raise ValueError(f"{owner}: custom attribute '{name}' is not declared")
        count = self._domain_count(AttributeFrequency(attr.frequency).domain)
        i = _index(owner, "index", index, count, allow_world=False)
        self.custom_attribute_values[name][i] = self._custom_value(owner, attr, value)

    def _merge_custom_attributes(self, other: ModelBuilder, offsets: dict[str, int]):
        """Append ``other``'s custom-attribute values, shifting entity indices and integer references."""
        for name, attr in other.custom_attributes.items():
            if name not in self.custom_attributes:
                self.custom_attributes[name] = attr
                self.custom_attribute_values[name] = {}
            base = offsets[AttributeFrequency(attr.frequency).domain]
            ref = offsets[attr.references] if attr.references else 0
            dst = self.custom_attribute_values[name]
            for idx, v in other.custom_attribute_values[name].items():
                dst[idx + base] = v + ref if (attr.references and v >= 0) else v
