"""Which attributes each MJCF element kind accepts; anything not listed raises. Visual and MuJoCo
solver-tuning attributes are dropped with a debug log."""

from __future__ import annotations

_IDENTITY_Q = (0.0, 0.0, 0.0, 1.0)

_VISUAL = {"rgba", "material", "group", "user", "texture", "castshadow"}
"""Attributes that only affect drawing or bookkeeping: ignored with a debug log."""
_SOLVER_TUNING = {
    "solref",
    "solimp",
    "solmix",
    "priority",
    "gap",
    "solreflimit",
    "solimplimit",
    "solreffriction",
    "solimpfriction",
}
"""MuJoCo soft-constraint parameters: our solvers use their own constraint formulation (see docs)."""
_ORIENTATION = ("quat", "axisangle", "euler", "xyaxes", "zaxis")

_ACTUATOR_SHARED = {
    "ctrllimited",
    "forcelimited",
    "actlimited",
    "ctrlrange",
    "forcerange",
    "actrange",
    "lengthrange",
    "gear",
}
"""Actuator attributes whose default is shared by every actuator kind of a class (MuJoCo keeps one
actuator default per class; a shortcut's kp and kv stay with their tag)."""

_ATTRS = {
    "body": {"name", "childclass", "pos", *_ORIENTATION, "mocap", "gravcomp", "sleep"},
    "frame": {"name", "childclass", "pos", *_ORIENTATION},
    "inertial": {"pos", *_ORIENTATION, "mass", "diaginertia", "fullinertia"},
    "joint": {
        "name",
        "class",
        "type",
        "pos",
        "axis",
        "range",
        "limited",
        "damping",
        "stiffness",
        "springref",
        "armature",
        "ref",
        "margin",
        "frictionloss",
        "actuatorfrclimited",
        "actuatorfrcrange",
        "actuatorgravcomp",
        "springdamper",
    },
    "freejoint": {"name", "align"},
    "geom": {
        "name",
        "class",
        "type",
        "size",
        "pos",
        *_ORIENTATION,
        "fromto",
        "contype",
        "conaffinity",
        "condim",
        "margin",
        "friction",
        "mass",
        "density",
        "shellinertia",
        "mesh",
        "hfield",
        "fluidshape",
        "fluidcoef",
        "fitscale",
    },
    "site": {"name", "class", "type", "size", "pos", *_ORIENTATION, "fromto"},
    "pair": {"name", "class", "geom1", "geom2", "condim", "friction", "margin"},
    "mesh": {
        "name",
        "class",
        "content_type",
        "file",
        "vertex",
        "normal",
        "texcoord",
        "face",
        "refpos",
        "refquat",
        "scale",
        "smoothnormal",
        "maxhullvert",
        "inertia",
    },
    "tendon": {
        "name",
        "class",
        "limited",
        "range",
        "margin",
        "frictionloss",
        "width",
        "springlength",
        "stiffness",
        "damping",
        "armature",
        "actuatorfrclimited",
        "actuatorfrcrange",
    },
    "actuator": {
        "name",
        "class",
        *_ACTUATOR_SHARED,
        "joint",
        "tendon",
        "site",
        "body",
        "jointinparent",
        "cranksite",
        "slidersite",
        "cranklength",
        "refsite",
        "actdim",
        "actearly",
        "kp",
        "kv",
        "dampratio",
        "timeconst",
        "inheritrange",
        "dyntype",
        "gaintype",
        "biastype",
        "dynprm",
        "gainprm",
        "biasprm",
    },
    "equality": {"name", "class", "tendon1", "tendon2", "polycoef", "active"},
}
_ACTUATOR_TAGS = ("motor", "position", "velocity", "general")


def _attr_kind(tag: str) -> str:
    if tag in ("spatial", "fixed"):
        return "tendon"
    if tag in _ACTUATOR_TAGS:
        return "actuator"
    return tag
