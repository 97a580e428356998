"""Old path of the transmission-tendon builder part; it lives in ``newton_tendon.builder.transmission_tendons``."""

from .builder.transmission_tendons import (
    INF,
    JOINT_TYPE_NAMES,
    TRANSMISSION_FIXED,
    TRANSMISSION_PROPERTIES,
    TRANSMISSION_SPATIAL,
    TransmissionBuilder,
    _number,
    check_transmission_properties,
)

__all__ = [
    "INF",
    "JOINT_TYPE_NAMES",
    "TRANSMISSION_FIXED",
    "TRANSMISSION_PROPERTIES",
    "TRANSMISSION_SPATIAL",
    "TransmissionBuilder",
    "_number",
    "check_transmission_properties",
]
