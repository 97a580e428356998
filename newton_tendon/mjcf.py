"""MJCF import (``add_mjcf``) and MuJoCo lowering of routed cables (``lower_tendons``).

``add_mjcf`` reads a MuJoCo model file or string with the standard library's expat parser (so every
error can name the element and its line) and appends its bodies, joints, geoms, transmission
tendons, tendon actuators and tendon equalities to a ``ModelBuilder``. Everything is first built
into a scratch builder; the caller's builder only changes once the whole file has been accepted.
``docs/mjcf.md`` lists what is supported, how each MuJoCo quantity maps onto ours, and what is
rejected.

``lower_tendons`` writes the MuJoCo-compatible subset of a finalized model's routed cables
(anchors and frictionless pinholes as sites, frictionless fixed rollers as cylinder wrap geoms with
a side site) as MJCF text, and rejects what has no faithful MuJoCo equivalent.
"""

from __future__ import annotations

import logging
import math
import os
import re
from dataclasses import dataclass, field
from xml.parsers import expat

import numpy as np

from . import _hostmath as hm
from ._mjcf_lower import lower_tendons
from .inertia import check_inertia_triangle, quat_to_matrix
from .transmission import TendonPulley, TendonSite, TendonWrap

logger = logging.getLogger(__name__)

_IDENTITY_Q = (0.0, 0.0, 0.0, 1.0)


# ----------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class MjcfActuator:
    """How one MJCF actuator's control value drives the imported model.

    ``control`` names the ``Control`` array (``transmission_drive_force``,
    ``transmission_target_length``, ``transmission_target_velocity``, ``joint_target_pos``,
    ``joint_target_vel`` or ``joint_f``); write ``scale * ctrl + offset`` into entry ``index`` of it.
    ``ctrlrange`` is the MJCF control range (None: unlimited); it is not enforced by the solvers,
    clamp ``ctrl`` before writing it (for tendon motors it is folded into the drive bounds).
    """

    name: str
    kind: str
    """MJCF element: "motor", "position", "velocity" or "general"."""
    target: str
    """"tendon" or "joint"."""
    index: int
    """Transmission tendon index (target "tendon") or joint dof index (target "joint")."""
    control: str
    scale: float
    offset: float = 0.0
    ctrlrange: tuple[float, float] | None = None


@dataclass
class MjcfImport:
    """What ``add_mjcf`` added, by MJCF name (indices into the caller's builder).

    Unnamed elements are listed under their builder label.
    """

    bodies: dict[str, int] = field(default_factory=dict)
    joints: dict[str, int] = field(default_factory=dict)
    shapes: dict[str, int] = field(default_factory=dict)
    sites: dict[str, tuple[int, tuple]] = field(default_factory=dict)
    """Site name -> (body index or -1, pose in that body's frame (px, py, pz, qx, qy, qz, qw) [m])."""
    tendons: dict[str, int] = field(default_factory=dict)
    """Tendon name -> transmission tendon index."""
    couplings: dict[str, int] = field(default_factory=dict)
    actuators: dict[str, MjcfActuator] = field(default_factory=dict)
    timestep: float | None = None
    """``<option timestep>`` [s] if authored (a step parameter: pass it to ``solver.step``)."""
    gravity: tuple | None = None
    """``<option gravity>`` [m/s^2] if authored (applied to the builder)."""


# ----------------------------------------------------------------------------------------------
# XML with line numbers


class _Element:
    """A parsed XML element: tag, attributes, children and the line it starts on."""

    __slots__ = ("tag", "attrib", "children", "line")

    def __init__(self, tag: str, attrib: dict, line: int):
        self.tag = tag
        self.attrib = attrib
        self.children: list[_Element] = []
        self.line = line


MJ_MINVAL = 1.0e-15
"""MuJoCo's mjMINVAL: the least mass and principal inertia it accepts for a moving body."""

MJ_TRIANGLE_RTOL = 1.0e-12
"""Slack (relative to the trace) on MuJoCo's inertia triangle inequality: float64 eigenvalue
round-off only, so ``diaginertia="1 1 2.0000001"`` fails as it does in MuJoCo."""

MAX_ECHO = 80
"""Longest attribute value, name or path (characters) an error message repeats; longer ones are cut."""

MAX_ELEMENT_DEPTH = 499
"""Deepest element nesting accepted (the root ``<mujoco>`` is depth 1), as MuJoCo 4.0's XML parser
(tinyxml2) allows: an element at depth 500, or one at depth 499 written with a separate end tag
(``<geom></geom>``, which tinyxml2 descends into), makes MuJoCo reject the file; so do we."""


def _q(value) -> str:
    """``repr(value)``, cut to about ``MAX_ECHO`` characters so a huge value cannot flood a message."""
    text = repr(value)
    if len(text) <= MAX_ECHO:
        return text
    return f"{text[: MAX_ECHO - 3]}... ({len(str(value))} characters)"


_BOM = "\ufeff"


def _looks_like_xml(source: str) -> bool:
    return source.lstrip().lstrip(_BOM).lstrip().startswith("<")


_SEPARATORS = re.compile(r"[ \t\n\r\f\v]+")
_REAL = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
    r"(?:[pP][+-]?\d+)?|(?i:inf(?:inity)?|nan))",
    re.ASCII,
)
"""A number as C's strtod (which MuJoCo uses) reads it: ASCII decimal or hex, no ``_`` digit
separators and no non-ASCII digits (both of which Python's ``float`` would accept)."""
_INT = re.compile(r"[+-]?\d+", re.ASCII)


def _tokens(text: str) -> list[str]:
    return [t for t in _SEPARATORS.split(text) if t]


def _real_token(tok: str) -> float:
    if not _REAL.fullmatch(tok):
        raise ValueError(tok)
    return float.fromhex(tok) if "x" in tok or "X" in tok else float(tok)


class _Doc:
    def __init__(self, source):
        if isinstance(source, os.PathLike) or (isinstance(source, str) and not _looks_like_xml(source)):
            path = os.fspath(source)
            try:
                with open(path, "rb") as f:
                    text = f.read()
            except (OSError, ValueError) as e:
                why = getattr(e, "strerror", None) or str(e)
                raise ValueError(f"add_mjcf: cannot read MJCF file {_q(path)}: {why}") from None
            self.name = path if len(path) <= MAX_ECHO else _q(path)
        elif isinstance(source, (str, bytes)):
            # A leading byte-order mark is legal XML (MuJoCo accepts it); expat wants it off a str.
            text = source.lstrip(_BOM) if isinstance(source, str) else source
            self.name = "<string>"
        else:
            raise TypeError(f"add_mjcf: source must be a path or an XML string, got {type(source).__name__}")
        # Byte view of the document for the depth check (expat parses a str as UTF-8, so its byte
        # indices are into this encoding).
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        parser = expat.ParserCreate()
        stack: list[_Element] = []
        roots: list[_Element] = []

        def too_deep(tag, line):
            raise ValueError(
                f"{self.name}:{line}: <{tag[:MAX_ECHO]}>: element nesting is too deep (more than "
                f"{MAX_ELEMENT_DEPTH} levels; MuJoCo's XML parser rejects it too)"
            )

        def start(tag, attrs):
            el = _Element(tag, dict(attrs), parser.CurrentLineNumber)
            if len(stack) >= MAX_ELEMENT_DEPTH:
                too_deep(tag, el.line)
            (stack[-1].children if stack else roots).append(el)
            stack.append(el)

        def end(tag):
            # At the last allowed depth only an empty-element tag (<x/>) passes: its end event comes
            # right after the "/>" (an element this deep has no children, the depth check saw to that).
            if len(stack) == MAX_ELEMENT_DEPTH:
                i = parser.CurrentByteIndex
                if data[i - 2 : i] != b"/>":
                    too_deep(tag, stack[-1].line)
            stack.pop()

        parser.StartElementHandler = start
        parser.EndElementHandler = end
        try:
            parser.Parse(text, True)
        except expat.ExpatError as e:
            raise ValueError(f"{self.name}:{e.lineno}: malformed XML: {expat.ErrorString(e.code)}") from None
        self.root = roots[0]
        if self.root.tag != "mujoco":
            raise ValueError(f"{self.where(self.root)}: the root element must be <mujoco>")

    def where(self, el: _Element) -> str:
        name = el.attrib.get("name")
        tag = el.tag[:MAX_ECHO]
        label = f"<{tag} name={_q(name)}>" if name is not None else f"<{tag}>"
        return f"{self.name}:{el.line}: {label}"


# ----------------------------------------------------------------------------------------------
# Attribute classification (anything not listed raises)

_VISUAL = {"rgba", "material", "group", "user", "texture"}
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

_ATTRS = {
    "body": {"name", "childclass", "pos", *_ORIENTATION, "mocap", "gravcomp"},
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
        "ctrllimited",
        "forcelimited",
        "actlimited",
        "ctrlrange",
        "forcerange",
        "actrange",
        "lengthrange",
        "gear",
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


# ----------------------------------------------------------------------------------------------
# The importer


class _Importer:
    def __init__(self, doc: _Doc, builder_cls, up_axis: str, floating: bool | None):
        self.doc = doc
        self.floating = floating
        self.scratch = builder_cls(up_axis=up_axis)
        self.angle_scale = math.pi / 180.0
        self.eulerseq = "xyz"
        self.autolimits = True
        self.inertiafromgeom = "auto"
        self.defaults: dict[str, dict[str, dict]] = {"main": {}}
        self.info = MjcfImport()
        # Name tables (scratch indices).
        self.body_index: dict[str, int] = {}
        self.joint_index: dict[str, int] = {}
        self.joint_el: dict[str, tuple[_Element, dict, int]] = {}
        self.geom_index: dict[str, int] = {}
        self.geom_el: dict[str, tuple[_Element, dict, int, tuple]] = {}
        self.site_pose: dict[str, tuple[int, tuple]] = {}
        self.tendon_index: dict[str, int] = {}
        self.shape_bits: list[tuple[int, int]] = []
        self.excludes: list[tuple[int, int]] = []
        # Drives collected from actuators before joints and tendons are created.
        self.joint_drive: dict[str, dict] = {}
        self.tendon_drive: dict[str, dict] = {}
        self.pending_actuators: list[tuple] = []
        self.world_geoms: list[tuple] = []
        self.world_sites: list[tuple] = []
        self.joint_type: dict[str, str] = {}

    # -- errors and attribute helpers ----------------------------------------------------------

    def fail(self, el: _Element, msg: str, exc=ValueError):
        raise exc(f"{self.doc.where(el)}: {msg}")

    def attrs(self, el: _Element, cls: str | None = None, kind: str | None = None) -> dict:
        """Element attributes over its default class; unknown attributes raise, visual ones are logged."""
        kind = kind or _attr_kind(el.tag)
        name = el.attrib.get("class", cls or "main")
        if name not in self.defaults:
            self.fail(el, f"unknown default class {_q(name)}")
        dkey = el.tag if kind not in ("tendon", "equality") else kind
        merged = {**self.defaults[name].get(dkey, {}), **el.attrib}
        allowed = _ATTRS.get(kind, set())
        for a in list(merged):
            if a in allowed:
                continue
            if a in _VISUAL or a in _SOLVER_TUNING:
                logger.debug("%s: ignoring attribute %r (no effect on our physics)", self.doc.where(el), a)
                del merged[a]
                continue
            self.fail(el, f"unsupported attribute {_q(a)}")
        return merged

    def floats(self, el, attrs, key, n=None, *, default=None, lo=None, hi=None):
        if key not in attrs:
            return default
        text = attrs[key]
        try:
            vals = tuple(_real_token(t) for t in _tokens(text))
        except ValueError:
            self.fail(el, f"attribute {key}={_q(text)} must be numbers", TypeError)
        if n is not None and len(vals) not in (n if isinstance(n, tuple) else (n,)):
            self.fail(el, f"attribute {key}={_q(text)} needs {n} numbers, got {len(vals)}")
        if not all(math.isfinite(v) for v in vals):
            self.fail(el, f"attribute {key}={_q(text)} must be finite")
        return vals

    def integer(self, el, attrs, key, default: int) -> int:
        """One int attribute by MuJoCo's rule: a decimal integer (optional sign) within int32;
        ``1.5``, ``3.0``, ``1e3`` or ``1_0`` are rejected, not truncated."""
        if key not in attrs:
            return default
        text = attrs[key]
        toks = _tokens(text)
        if len(toks) != 1 or not _INT.fullmatch(toks[0]):
            numeric = len(toks) == 1 and _REAL.fullmatch(toks[0]) is not None
            self.fail(
                el,
                f"attribute {key}={_q(text)} must be one integer (MuJoCo rejects it as a bad format, it is "
                "not rounded)",
                ValueError if numeric else TypeError,
            )
        v = int(toks[0])
        if not -(2**31) <= v < 2**31:
            self.fail(el, f"attribute {key}={_q(text)} is out of the int32 range (MuJoCo: number is too large)")
        return v

    def real(self, el, attrs, key, default=0.0, *, lo=None):
        v = self.floats(el, attrs, key, 1)
        if v is None:
            return default
        if lo is not None and v[0] < lo:
            self.fail(el, f"attribute {key} must be >= {lo}, got {v[0]}")
        return v[0]

    def choice(self, el, attrs, key, options, default):
        v = attrs.get(key, default)
        if v not in options:
            self.fail(el, f"attribute {key}={_q(v)} must be one of {', '.join(options)}")
        return v

    def flag(self, el, attrs, key, default):
        v = attrs.get(key, default)
        if v in ("true", "false", "auto"):
            return v
        self.fail(el, f"attribute {key}={_q(v)} must be true, false or auto")

    def limited(self, el, attrs, key, range_key) -> bool:
        v = self.flag(el, attrs, key, "auto")
        if v == "auto":
            if not self.autolimits and range_key in attrs:
                self.fail(el, f"{range_key} is given without {key}='true' and <compiler autolimits='false'>")
            return range_key in attrs
        return v == "true"

    def limited_range(self, el, attrs, key, range_key):
        """The (lower, upper) range MuJoCo enforces for ``key``/``range_key``, or None when it enforces none.

        MuJoCo 4.0's rules: an explicit ``key='true'`` needs lower < upper, else the model is rejected
        (lower == upper is not a lock); ``key='auto'`` (with autolimits) limits only a range with
        lower < upper, and treats any other range as unlimited.
        """
        explicit = self.flag(el, attrs, key, "auto") == "true"
        if not self.limited(el, attrs, key, range_key):
            return None
        rng = self.floats(el, attrs, range_key, 2)
        if rng is None:
            self.fail(el, f"{key}='true' needs a {range_key}")
        if rng[0] < rng[1]:
            return rng
        if explicit:
            self.fail(
                el,
                f"invalid limits {range_key}={_q(attrs[range_key])}: with {key}='true' the lower bound must be smaller "
                "than the upper bound (MuJoCo rejects lower >= upper)",
            )
        logger.warning(
            "%s: %s=%r has lower >= upper; as in MuJoCo, %s='auto' leaves it unlimited",
            self.doc.where(el),
            range_key,
            attrs[range_key],
            key,
        )
        return None

    def zero(self, el, attrs, key, *, default=0.0, why="has no equivalent here"):
        v = self.floats(el, attrs, key)
        if v is not None and any(x != default for x in v):
            self.fail(el, f"attribute {key}={_q(attrs[key])} {why}")

    def named(self, el, attrs, table: dict, key: str, what: str):
        name = attrs.get(key)
        if name is None:
            self.fail(el, f"attribute {key} (a {what} name) is required")
        if name not in table:
            self.fail(el, f"unknown {what} {_q(name)}")
        return table[name]

    # -- orientation ---------------------------------------------------------------------------

    def quat(self, el, attrs) -> tuple:
        given = [k for k in _ORIENTATION if k in attrs]
        if len(given) > 1:
            self.fail(el, f"orientation given twice ({', '.join(given)})")
        if not given:
            return _IDENTITY_Q
        k = given[0]
        if k == "quat":
            w, x, y, z = self.floats(el, attrs, k, 4)
            q = (x, y, z, w)
        elif k == "axisangle":
            ax, ay, az, a = self.floats(el, attrs, k, 4)
            if math.hypot(ax, ay, az) < 1e-12:
                self.fail(el, "axisangle has a zero axis")
            q = hm.quat_from_axis_angle((ax, ay, az), a * self.angle_scale)
        elif k == "euler":
            angles = self.floats(el, attrs, k, 3)
            q = _IDENTITY_Q
            for ch, a in zip(self.eulerseq, angles, strict=True):
                axis = [0.0, 0.0, 0.0]
                axis["xyz".index(ch.lower())] = 1.0
                r = hm.quat_from_axis_angle(axis, a * self.angle_scale)
                q = hm.quat_mul(q, r) if ch.islower() else hm.quat_mul(r, q)
        elif k == "xyaxes":
            v = np.array(self.floats(el, attrs, k, 6))
            x, y = v[:3], v[3:]
            if np.linalg.norm(x) < 1e-12:
                self.fail(el, "xyaxes has a zero x axis")
            x = x / np.linalg.norm(x)
            y = y - x * (x @ y)
            if np.linalg.norm(y) < 1e-12:
                self.fail(el, "xyaxes has parallel axes")
            y = y / np.linalg.norm(y)
            q = _matrix_to_quat(np.column_stack([x, y, np.cross(x, y)]))
        else:
            q = self.zaxis(el, self.floats(el, attrs, k, 3))
        n = math.sqrt(sum(c * c for c in q))
        if n < 1e-12:
            self.fail(el, f"{k} gives a zero quaternion")
        return tuple(float(c) / n for c in q)

    def zaxis(self, el, v) -> tuple:
        v = np.asarray(v, dtype=np.float64)
        n = np.linalg.norm(v)
        if n < 1e-12:
            self.fail(el, "zaxis/fromto direction is zero")
        return _quat_z_to(v / n)

    def pose(self, el, attrs) -> tuple:
        pos = self.floats(el, attrs, "pos", 3, default=(0.0, 0.0, 0.0))
        return (*pos, *self.quat(el, attrs))

    # -- top-level sections --------------------------------------------------------------------

    def run(self):
        root = self.doc.root
        sections: dict[str, list[_Element]] = {}
        for el in root.children:
            sections.setdefault(el.tag, []).append(el)
        known = {
            "compiler",
            "option",
            "size",
            "visual",
            "statistic",
            "asset",
            "default",
            "worldbody",
            "tendon",
            "actuator",
            "equality",
            "contact",
            "sensor",
            "keyframe",
            "custom",
        }
        for el in root.children:
            if el.tag not in known:
                self.fail(el, "unsupported element (it would change the model; see docs/mjcf.md)")
        for tag in ("visual", "statistic", "asset", "sensor", "keyframe", "custom", "size"):
            for el in sections.get(tag, []):
                logger.debug("%s: ignored (no effect on our physics)", self.doc.where(el))
        for el in sections.get("compiler", []):
            self.compiler(el)
        for el in sections.get("option", []):
            self.option(el)
        for el in sections.get("default", []):
            self.default(el)
        bodies = []
        for el in sections.get("worldbody", []):
            self.collect(el, -1, hm.IDENTITY, hm.IDENTITY, None, bodies, root_level=True)
        for el in sections.get("actuator", []):
            for a in el.children:
                self.actuator(a)
        self.emit_bodies(bodies)
        for el in sections.get("contact", []):
            self.contact(el)
        self.collision_filters()
        for el in sections.get("tendon", []):
            for t in el.children:
                self.tendon(t)
        self.finish_actuators()
        for el in sections.get("equality", []):
            for e in el.children:
                self.equality(e)

    def compiler(self, el):
        a = el.attrib
        for k in a:
            if k == "angle":
                self.angle_scale = {"degree": math.pi / 180.0, "radian": 1.0}.get(a[k])
                if self.angle_scale is None:
                    self.fail(el, f"angle={_q(a[k])} must be 'degree' or 'radian'")
            elif k == "eulerseq":
                s = a[k]
                if len(s) != 3 or any(c not in "xyzXYZ" for c in s):
                    self.fail(el, f"eulerseq={_q(s)} must be three of x, y, z, X, Y, Z")
                self.eulerseq = s
            elif k == "autolimits":
                self.autolimits = self.choice(el, a, k, ("true", "false"), "true") == "true"
            elif k == "inertiafromgeom":
                self.inertiafromgeom = self.choice(el, a, k, ("true", "false", "auto"), "auto")
            elif k == "coordinate":
                self.choice(el, a, k, ("local",), "local")
            elif k in ("boundmass", "boundinertia", "settotalmass"):
                v = self.real(el, a, k)
                if v > 0.0:
                    self.fail(el, f"{k} rescales masses and is not supported; author the masses instead")
            elif k == "balanceinertia":
                if a[k] == "true":
                    self.fail(el, "balanceinertia='true' is not supported; author valid inertias instead")
            elif k in (
                "meshdir",
                "texturedir",
                "assetdir",
                "strippath",
                "discardvisual",
                "fusestatic",
                "usethread",
                "exactmeshinertia",
                "saveinertial",
                "alignfree",
                "inertiagrouprange",
                "fitaabb",
                "model",
            ):
                logger.debug("%s: ignoring compiler option %r", self.doc.where(el), k)
            else:
                self.fail(el, f"unsupported compiler attribute {_q(k)}")
        for c in el.children:
            self.fail(c, "unsupported element inside <compiler>")

    def option(self, el):
        a = el.attrib
        for k in a:
            if k == "timestep":
                self.info.timestep = self.real(el, a, k, lo=0.0)
            elif k == "gravity":
                self.info.gravity = self.floats(el, a, k, 3)
            elif k in ("wind", "density", "viscosity"):
                self.zero(el, a, k, why="(fluid forces) is not supported")
            elif k in (
                "integrator",
                "iterations",
                "tolerance",
                "ls_iterations",
                "ls_tolerance",
                "solver",
                "cone",
                "jacobian",
                "impratio",
                "noslip_iterations",
                "noslip_tolerance",
                "ccd_iterations",
                "ccd_tolerance",
                "sdf_iterations",
                "sdf_initpoints",
                "magnetic",
                "apirate",
                "o_margin",
                "o_solref",
                "o_solimp",
                "o_friction",
                "actuatorgroupdisable",
                "sleep_tolerance",
            ):
                logger.debug("%s: ignoring solver option %r", self.doc.where(el), k)
            else:
                self.fail(el, f"unsupported option attribute {_q(k)}")
        harmless = {"override", "energy", "fwdinv", "invdiscrete", "multiccd", "island", "warmstart", "nativeccd"}
        for c in el.children:
            if c.tag != "flag":
                self.fail(c, "unsupported element inside <option>")
            for k, v in c.attrib.items():
                if k in harmless or v == "enable":
                    continue
                self.fail(c, f"flag {k}={_q(v)} changes the physics and is not supported")

    def default(self, top_el):
        """One top-level ``<default>`` section. As in MuJoCo, every section adds to the one top-level
        class "main" (a later section overrides what an earlier one set, and a class nested in a
        section starts from "main" as it stands then); nested classes are defined once. Iterative, so
        nesting depth is bounded only by ``MAX_ELEMENT_DEPTH``."""
        allowed = {"joint", "geom", "site", "tendon", "equality", "mesh", "material", "camera", "light", "pair"}
        allowed.update(_ACTUATOR_TAGS)
        top_class = top_el.attrib.get("class", "main")
        if top_class != "main":
            self.fail(
                top_el, f"a top-level <default> is the class 'main' and cannot be renamed (class={_q(top_class)})"
            )
        todo = [(top_el, None)]
        while todo:
            el, parent = todo.pop()
            if parent is None:
                name = "main"
            else:
                name = el.attrib.get("class")
                if name is None:
                    self.fail(el, "a nested <default> needs a class name")
                if name in self.defaults:
                    self.fail(el, f"default class {_q(name)} is defined twice")
            for k in el.attrib:
                if k != "class":
                    self.fail(el, f"unsupported attribute {_q(k)}")
            base = self.defaults["main"] if parent is None else parent
            own = {tag: dict(v) for tag, v in base.items()}
            nested = []
            for c in el.children:
                if c.tag == "default":
                    nested.append(c)
                elif c.tag in allowed:
                    own.setdefault(c.tag, {}).update(c.attrib)
                else:
                    self.fail(c, "unsupported element in <default>")
            self.defaults[name] = own
            todo.extend((c, own) for c in reversed(nested))

    # -- kinematic tree: collect -----------------------------------------------------------------

    def collect(self, el, parent_entry, rel_frame, world_frame, cls, out, root_level=False):
        """Walk a <worldbody>'s tree in document order. Each level is (its children, the enclosing
        body entry or -1, ``rel_frame``: the level's frame relative to the enclosing body's frame,
        ``world_frame``: that frame in world, default class, the list bodies are appended to, whether
        bodies here are children of <worldbody>). An explicit stack instead of recursion keeps deep
        (but legal) nesting from overflowing Python's stack."""
        stack = [(iter(el.children), parent_entry, rel_frame, world_frame, cls, out, root_level)]
        while stack:
            it, parent_entry, rel_frame, world_frame, cls, out, root_level = stack[-1]
            c = next(it, None)
            if c is None:
                stack.pop()
                continue
            if c.tag == "body":
                a = self.attrs(c, cls)
                self.zero(c, a, "gravcomp", why="(gravity compensation) is not supported")
                mocap = self.choice(c, a, "mocap", ("true", "false"), "false") == "true"
                local = hm.transform_mul(rel_frame, self.pose(c, a))
                entry = {
                    "el": c,
                    "name": a.get("name"),
                    "parent": parent_entry,
                    "local": local,
                    "mocap": mocap,
                    "joints": [],
                    "geoms": [],
                    "sites": [],
                    "inertial": None,
                    "children": [],
                    "root": root_level,
                }
                if mocap and not root_level:
                    self.fail(c, "mocap bodies must be children of <worldbody>")
                child_cls = a.get("childclass", cls)
                if child_cls is not None and child_cls not in self.defaults:
                    self.fail(c, f"unknown childclass {_q(child_cls)}")
                out.append(entry)
                # Items directly in the body are relative to the body frame.
                stack.append((iter(c.children), entry, hm.IDENTITY, hm.IDENTITY, child_cls, entry["children"], False))
            elif c.tag == "frame":
                a = self.attrs(c, cls)
                fcls = a.get("childclass", cls)
                if fcls is not None and fcls not in self.defaults:
                    self.fail(c, f"unknown childclass {_q(fcls)}")
                fpose = self.pose(c, a)
                stack.append(
                    (
                        iter(c.children),
                        parent_entry,
                        hm.transform_mul(rel_frame, fpose),
                        hm.transform_mul(world_frame, fpose),
                        fcls,
                        out,
                        root_level,
                    )
                )
            elif parent_entry == -1 and c.tag in ("geom", "site"):
                self.item(c, cls, None, rel_frame, world_frame)
            elif parent_entry != -1 and c.tag in ("geom", "site", "joint", "freejoint", "inertial"):
                self.item(c, cls, parent_entry, rel_frame, None)
            elif c.tag in ("camera", "light"):
                logger.debug("%s: ignored (visual)", self.doc.where(c))
            else:
                self.fail(c, "unsupported element here")

    def item(self, el, cls, entry, rel_frame, world_frame):
        a = self.attrs(el, cls)
        if el.tag == "joint" or el.tag == "freejoint":
            if rel_frame != hm.IDENTITY:
                # Joints inside a <frame>: fold the frame into the joint position and axis.
                a = dict(a)
                a["_frame"] = rel_frame
            entry["joints"].append((el, a))
        elif el.tag == "inertial":
            if entry["inertial"] is not None:
                self.fail(el, "a body has at most one <inertial>")
            entry["inertial"] = (el, a, rel_frame)
        elif el.tag == "geom":
            target = entry["geoms"] if entry is not None else self.world_geoms
            target.append((el, a, rel_frame if entry is not None else world_frame))
        else:
            target = entry["sites"] if entry is not None else self.world_sites
            target.append((el, a, rel_frame if entry is not None else world_frame))

    # -- kinematic tree: emit --------------------------------------------------------------------

    def emit_bodies(self, roots):
        b = self.scratch
        for el, a, frame in self.world_geoms:
            self.geom(el, a, -1, frame)
        for el, a, frame in self.world_sites:
            self.site(el, a, -1, frame)
        for entry in roots:
            j_first = b.joint_count
            # Depth first in document order, with an explicit stack (no recursion limit on depth).
            todo = [(entry, -1, hm.IDENTITY)]
            while todo:
                node, parent_index, parent_world = todo.pop()
                body, world = self.emit_body(node, parent_index, parent_world)
                todo.extend((child, body, world) for child in reversed(node["children"]))
            if b.joint_count > j_first:
                b.add_articulation(list(range(j_first, b.joint_count)), label=entry["name"])

    def emit_body(self, entry, parent_index, parent_world):
        """Add one body (its geoms, sites and joint); returns its scratch index and world pose."""
        b = self.scratch
        el = entry["el"]
        world = hm.transform_mul(parent_world, entry["local"])
        mass, inertia, com, lock = 0.0, None, None, False
        use_inertial = entry["inertial"] is not None and self.inertiafromgeom != "true"
        if self.inertiafromgeom == "false" and entry["inertial"] is None and entry["joints"]:
            self.fail(el, "inertiafromgeom='false' but the body has no <inertial>")
        if use_inertial:
            iel, ia, frame = entry["inertial"]
            mass = self.real(iel, ia, "mass", None, lo=0.0)
            if mass is None:
                self.fail(iel, "attribute mass is required")
            ipose = hm.transform_mul(frame, self.pose(iel, ia))
            if "diaginertia" in ia and "fullinertia" in ia:
                self.fail(iel, "give diaginertia or fullinertia, not both")
            if "fullinertia" in ia:
                xx, yy, zz, xy, xz, yz = self.floats(iel, ia, "fullinertia", 6)
                local_i = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            elif "diaginertia" in ia:
                local_i = np.diag(self.floats(iel, ia, "diaginertia", 3))
            else:
                self.fail(iel, "diaginertia or fullinertia is required")
            key = "fullinertia" if "fullinertia" in ia else "diaginertia"
            # MuJoCo checks the triangle inequality in float64 without slack; only eigenvalue round-off
            # (a rotated thin disk sits exactly on the bound) is forgiven here.
            self._add(iel, check_inertia_triangle, f"attribute {key}={_q(ia[key])}", local_i, MJ_TRIANGLE_RTOL)
            r = quat_to_matrix(ipose[3:])
            inertia = r @ local_i @ r.T
            com = ipose[:3]
            lock = True
        owner = self.doc.where(el)
        try:
            body = b.add_link(
                xform=world,
                mass=mass,
                inertia=inertia,
                com=com,
                is_kinematic=entry["mocap"],
                lock_inertia=lock,
                label=entry["name"],
            )
        except (TypeError, ValueError) as e:
            raise type(e)(f"{owner}: {e}") from None
        if entry["name"] is not None:
            if entry["name"] in self.body_index:
                self.fail(el, "duplicate body name")
            self.body_index[entry["name"]] = body
        # Geoms first (they may add mass), then the joint.
        for gel, ga, frame in entry["geoms"]:
            self.geom(gel, ga, body, frame)
        for sel, sa, frame in entry["sites"]:
            self.site(sel, sa, body, frame)
        parent_xform_base = entry["local"] if parent_index >= 0 else world
        self.joint(entry, body, parent_index, parent_xform_base)
        return body, world

    def joint(self, entry, body, parent, parent_base):
        b = self.scratch
        el = entry["el"]
        joints = entry["joints"]
        if len(joints) > 1:
            self.fail(
                el,
                f"has {len(joints)} joints; only one joint per body is supported (split the body into "
                "a chain of bodies with one joint each)",
            )
        if entry["mocap"] and joints:
            self.fail(el, "a mocap body cannot have joints")
        if not joints:
            if entry["mocap"]:
                return
            if entry["root"] and self.floating:
                self.check_moving_body(el, body)
                self._add(el, b.add_joint_free, body, label=entry["name"])
                return
            if parent >= 0 and b.body_mass[body] == 0.0 and b.body_mass[parent] > 0.0:
                self.fail(
                    el,
                    "has no joint and no mass: welding a massless body to a moving parent would make it "
                    "immovable here; give it mass or move its geoms and sites into the parent",
                )
            self._add(el, b.add_joint_fixed, parent, body, parent_base, label=entry["name"])
            return
        jel, ja = joints[0]
        self.check_moving_body(el, body)
        frame = ja.pop("_frame", hm.IDENTITY)
        jtype = (
            "free"
            if jel.tag == "freejoint"
            else self.choice(jel, ja, "type", ("hinge", "slide", "ball", "free"), "hinge")
        )
        name = ja.get("name")
        label = name if name is not None else None
        if jtype == "free":
            if not entry["root"]:
                self.fail(jel, "a free joint is only allowed on a child of <worldbody>")
            if jel.tag == "freejoint" and ja.get("align", "false") not in ("false", "auto"):
                self.fail(jel, "align='true' is not supported")
            if self.floating is False:
                j = self._add(jel, b.add_joint_fixed, -1, body, parent_base, label=label)
            else:
                j = self._add(jel, b.add_joint_free, body, label=label)
            self._register_joint(jel, name, j, jtype)
            return
        for k in ("ref", "margin", "frictionloss"):
            self.zero(jel, ja, k, why="is not supported on joints")
        if self.flag(jel, ja, "actuatorfrclimited", "auto") == "true" or (
            "actuatorfrcrange" in ja and self.flag(jel, ja, "actuatorfrclimited", "auto") == "auto" and self.autolimits
        ):
            self.fail(jel, "actuatorfrcrange (a bound on actuator forces) is not supported")
        if ja.get("springdamper") is not None:
            self.zero(jel, ja, "springdamper", why="is not supported")
        if ja.get("actuatorgravcomp", "false") != "false":
            self.fail(jel, "actuatorgravcomp is not supported")
        jpos = self.floats(jel, ja, "pos", 3, default=(0.0, 0.0, 0.0))
        jpos = hm.transform_point(frame, jpos)
        child_xform = (*jpos, *_IDENTITY_Q)
        parent_xform = hm.transform_mul(parent_base, child_xform)
        if jtype == "ball":
            if self.limited_range(jel, ja, "limited", "range") is not None:
                self.fail(jel, "ball joint limits (a cone) are not supported")
            for k in ("damping", "stiffness", "armature"):
                self.zero(jel, ja, k, why="is not supported on ball joints")
            if name in self.joint_drive:
                self.fail(jel, "actuators on ball joints are not supported")
            j = self._add(jel, b.add_joint_ball, parent, body, parent_xform, child_xform, label=label)
            self._register_joint(jel, name, j, jtype)
            return
        axis = self.floats(jel, ja, "axis", 3, default=(0.0, 0.0, 1.0))
        if math.hypot(*axis) < 1e-12:
            self.fail(jel, "axis must be nonzero")
        axis = hm.quat_rotate(frame[3:], axis)
        scale = self.angle_scale if jtype == "hinge" else 1.0
        lo = hi = None
        rng = self.limited_range(jel, ja, "limited", "range")
        if rng is not None:
            lo, hi = rng[0] * scale, rng[1] * scale
        stiffness = self.real(jel, ja, "stiffness", lo=0.0)
        damping = self.real(jel, ja, "damping", lo=0.0)
        armature = self.real(jel, ja, "armature", lo=0.0)
        springref = self.real(jel, ja, "springref") * scale
        if jtype == "slide" and armature != 0.0:
            self.fail(jel, "armature on a slide joint is not supported (maximal coordinates); add the mass to the body")
        ke, kd = stiffness, damping
        target_pos, target_vel = springref if stiffness > 0.0 else 0.0, 0.0
        drive = self.joint_drive.get(name) if name is not None else None
        if drive is not None:
            if drive.get("ke", 0.0) > 0.0 and stiffness > 0.0:
                self.fail(jel, f"joint stiffness and the position actuator {_q(drive['name'])} both set its stiffness")
            if drive.get("velocity_servo") and damping > 0.0:
                self.fail(jel, f"joint damping and the velocity actuator {_q(drive['name'])} both set its damping")
            ke += drive.get("ke", 0.0)
            kd += drive.get("kd", 0.0)
        add = b.add_joint_revolute if jtype == "hinge" else b.add_joint_prismatic
        j = self._add(
            jel,
            add,
            parent,
            body,
            parent_xform,
            child_xform,
            axis,
            limit_lower=lo,
            limit_upper=hi,
            target_pos=target_pos,
            target_vel=target_vel,
            target_ke=ke,
            target_kd=kd,
            armature=armature,
            label=label,
        )
        self._register_joint(jel, name, j, jtype)

    def check_moving_body(self, el, body):
        """MuJoCo 4.0 rejects a moving body whose mass or any principal inertia is below mjMINVAL
        (``MJ_MINVAL``); a zero inertia would freeze its rotation here (a zero inverse inertia).
        MuJoCo waives the rule when a jointless child with mass and inertia is welded to the body
        (it merges the two); here every body keeps its own inertia, so that waiver does not apply."""
        b = self.scratch
        mass = b.body_mass[body]
        if mass <= 0.0:
            self.fail(el, "a body with a joint needs mass (an <inertial> or geoms with density or mass)")
        principal = np.linalg.eigvalsh(np.asarray(b.body_inertia[body], dtype=np.float64))
        if mass < MJ_MINVAL or principal.min() < MJ_MINVAL:
            self.fail(
                el,
                f"a body with a joint needs mass and principal inertias of at least {MJ_MINVAL:g} (MuJoCo's "
                f"mjMINVAL), got mass {mass:.6g} and inertias {', '.join(f'{v:.6g}' for v in principal)}; "
                "a zero inertia would make it unable to rotate",
            )

    def _register_joint(self, el, name, j, jtype):
        if name is not None:
            if name in self.joint_index:
                self.fail(el, "duplicate joint name")
            self.joint_index[name] = j
            self.joint_type[name] = jtype

    def _add(self, el, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{self.doc.where(el)}: {e}") from None

    def geom(self, el, a, body, frame):
        b = self.scratch
        gtype = self.choice(
            el,
            a,
            "type",
            ("plane", "sphere", "capsule", "cylinder", "box", "ellipsoid", "mesh", "hfield", "sdf"),
            "sphere",
        )
        if gtype in ("mesh", "hfield", "sdf", "ellipsoid"):
            self.fail(el, f"geom type {_q(gtype)} is not supported (use sphere, box, capsule, cylinder or plane)")
        for k in ("mesh", "hfield"):
            if k in a:
                self.fail(el, f"attribute {k} is not supported")
        self.zero(el, a, "margin", why="(a per-geom contact margin) is not supported")
        if a.get("shellinertia", "false") != "false":
            self.fail(el, "shellinertia is not supported")
        if a.get("fluidshape", "none") != "none":
            self.fail(el, "fluid forces (fluidshape) are not supported")
        size = self.floats(el, a, "size", (1, 2, 3), default=())
        pose = self.pose(el, a)
        half = None
        if "fromto" in a:
            if gtype not in ("capsule", "cylinder"):
                self.fail(el, f"fromto is only supported on capsules and cylinders, not {gtype}")
            if any(k in a for k in _ORIENTATION) or "pos" in a:
                self.fail(el, "fromto cannot be combined with pos or an orientation")
            f = np.array(self.floats(el, a, "fromto", 6))
            d = f[3:] - f[:3]
            half = 0.5 * float(np.linalg.norm(d))
            if half < 1e-12:
                self.fail(el, "fromto end points coincide")
            pose = (*(0.5 * (f[:3] + f[3:])), *self.zaxis(el, d))
        pose = hm.transform_mul(frame, pose)

        def need(n):
            if len(size) < n:
                self.fail(el, f"a {gtype} needs {n} size value(s), got {len(size)}")
            if any(s <= 0.0 for s in size[:n]):
                self.fail(el, f"size values must be > 0, got {size[:n]}")

        friction = self.floats(el, a, "friction", (1, 2, 3), default=(1.0,))
        condim = self.integer(el, a, "condim", 3)
        if condim not in (1, 3):
            self.fail(el, f"condim={condim} is not supported (1: frictionless, 3: sliding friction)")
        mu = 0.0 if condim == 1 else friction[0]
        # 32-bit masks; a negative value (MuJoCo accepts it) sets the high bits, as in two's complement.
        contype = self.integer(el, a, "contype", 1)
        conaff = self.integer(el, a, "conaffinity", 1)
        has_collision = contype != 0 or conaff != 0
        kw = dict(mu=mu, has_collision=has_collision, label=a.get("name"))
        if gtype != "plane":
            kw["density"] = self.real(el, a, "density", 1000.0, lo=0.0)
            if "mass" in a:
                kw["mass"] = self.real(el, a, "mass", lo=0.0)
        if gtype == "plane":
            if body >= 0:
                self.fail(el, "planes are only supported on the world body")
            s = self._add(el, b.add_shape_plane, -1, pose, **kw)
        elif gtype == "sphere":
            need(1)
            s = self._add(el, b.add_shape_sphere, body, pose, size[0], **kw)
        elif gtype == "box":
            need(3)
            s = self._add(el, b.add_shape_box, body, pose, *size[:3], **kw)
        else:
            if half is None:
                need(2)
                half = size[1]
            else:
                need(1)
            add = b.add_shape_capsule if gtype == "capsule" else b.add_shape_cylinder
            s = self._add(el, add, body, pose, size[0], half, **kw)
        self.shape_bits.append((contype, conaff))
        name = a.get("name")
        if name is not None:
            if name in self.geom_index:
                self.fail(el, "duplicate geom name")
            self.geom_index[name] = s
            self.geom_el[name] = (el, gtype, body, pose, size)

    def site(self, el, a, body, frame):
        pose = self.pose(el, a)
        if "fromto" in a:
            if any(k in a for k in _ORIENTATION) or "pos" in a:
                self.fail(el, "fromto cannot be combined with pos or an orientation")
            f = np.array(self.floats(el, a, "fromto", 6))
            pose = (*(0.5 * (f[:3] + f[3:])), *self.zaxis(el, f[3:] - f[:3]))
        self.floats(el, a, "size", (1, 2, 3))
        name = a.get("name")
        pose = tuple(float(c) for c in hm.transform_mul(frame, pose))
        if name is not None:
            if name in self.site_pose:
                self.fail(el, "duplicate site name")
            self.site_pose[name] = (body, pose)

    def contact(self, el):
        for c in el.children:
            if c.tag != "exclude":
                self.fail(c, "unsupported contact element (only <exclude> is supported)")
            for k in c.attrib:
                if k not in ("name", "body1", "body2"):
                    self.fail(c, f"unsupported attribute {_q(k)}")
            b1 = self.named(c, c.attrib, self.body_index, "body1", "body")
            b2 = self.named(c, c.attrib, self.body_index, "body2", "body")
            self.excludes.append((b1, b2))

    def collision_filters(self):
        """MuJoCo collides two geoms if (contype1 & conaffinity2) | (contype2 & conaffinity1); pairs of
        imported shapes that fail the test, and pairs on excluded bodies, get a filter pair.

        Linear in the shape count plus the pairs it emits: shapes are grouped by their
        (contype, conaffinity) bits, only groups that fail the test against each other are paired
        shape by shape, and excluded body pairs are visited through each body's own shapes."""
        b = self.scratch
        groups: dict[tuple[int, int], list[int]] = {}
        by_body: dict[int, list[int]] = {}
        for i in range(b.shape_count):
            if b.shape_has_collision[i]:
                groups.setdefault(self.shape_bits[i], []).append(i)
                by_body.setdefault(b.shape_body[i], []).append(i)
        pairs = set()
        keys = list(groups)
        for gi, (ti, ai) in enumerate(keys):
            for tj, aj in keys[gi:]:
                if (ti & aj) or (tj & ai):
                    continue
                first, second = groups[(ti, ai)], groups[(tj, aj)]
                for i in first:
                    for j in second:
                        if i != j and b.shape_body[i] != b.shape_body[j]:
                            pairs.add((min(i, j), max(i, j)))
        for p, q in {(min(p, q), max(p, q)) for p, q in self.excludes}:
            if p == q:
                continue
            for i in by_body.get(p, ()):
                for j in by_body.get(q, ()):
                    pairs.add((min(i, j), max(i, j)))
        for i, j in sorted(pairs):
            b.add_shape_collision_filter_pair(i, j)

    # -- tendons -------------------------------------------------------------------------------

    def tendon(self, el):
        if el.tag not in ("spatial", "fixed"):
            self.fail(el, "unsupported element in <tendon> (expected <spatial> or <fixed>)")
        a = self.attrs(el)
        name = a.get("name")
        if name is not None and name in self.tendon_index:
            self.fail(el, "duplicate tendon name")
        props = self.tendon_properties(el, a)
        drive = self.tendon_drive.get(name) if name is not None else None
        if drive is not None:
            props.update(drive["props"])
        b = self.scratch
        if el.tag == "fixed":
            joints, coefs = [], []
            for c in el.children:
                if c.tag != "joint":
                    self.fail(c, "a fixed tendon holds only <joint> elements")
                for k in c.attrib:
                    if k not in ("joint", "coef"):
                        self.fail(c, f"unsupported attribute {_q(k)}")
                jn = c.attrib.get("joint")
                joints.append(self.named(c, c.attrib, self.joint_index, "joint", "joint"))
                if self.joint_type[jn] not in ("hinge", "slide"):
                    self.fail(c, f"joint {_q(jn)} is a {self.joint_type[jn]} joint; fixed tendons need hinge or slide")
                coefs.append(self.real(c, c.attrib, "coef", 0.0))
            if not joints:
                self.fail(el, "a fixed tendon needs at least one <joint>")
            t = self._add(el, b.add_fixed_tendon, joints, coefs, label=name, **props)
        else:
            path = []
            for c in el.children:
                if c.tag == "site":
                    for k in c.attrib:
                        if k != "site":
                            self.fail(c, f"unsupported attribute {_q(k)}")
                    body, pose = self.named(c, c.attrib, self.site_pose, "site", "site")
                    path.append(TendonSite(body=body, offset=tuple(pose[:3])))
                elif c.tag == "geom":
                    for k in c.attrib:
                        if k not in ("geom", "sidesite"):
                            self.fail(c, f"unsupported attribute {_q(k)}")
                    self.named(c, c.attrib, self.geom_index, "geom", "geom")
                    gel, gtype, body, pose, size = self.geom_el[c.attrib["geom"]]
                    if gtype not in ("sphere", "cylinder"):
                        self.fail(
                            c, f"geom {_q(c.attrib['geom'])} is a {gtype}; tendons wrap spheres and cylinders only"
                        )
                    side = None
                    if "sidesite" in c.attrib:
                        sb, sp = self.named(c, c.attrib, self.site_pose, "sidesite", "site")
                        side = TendonSite(body=sb, offset=tuple(sp[:3]))
                    axis = hm.quat_rotate(pose[3:], (0.0, 0.0, 1.0)) if gtype == "cylinder" else (0.0, 0.0, 1.0)
                    path.append(
                        TendonWrap(
                            kind=gtype,
                            body=body,
                            offset=tuple(pose[:3]),
                            axis=tuple(float(x) for x in axis),
                            radius=size[0],
                            side=side,
                        )
                    )
                elif c.tag == "pulley":
                    for k in c.attrib:
                        if k != "divisor":
                            self.fail(c, f"unsupported attribute {_q(k)}")
                    div = self.floats(c, c.attrib, "divisor", 1)
                    if div is None:
                        self.fail(c, "attribute divisor is required")
                    path.append(TendonPulley(divisor=div[0]))
                else:
                    self.fail(c, "a spatial tendon holds only <site>, <geom> and <pulley> elements")
            t = self._add(el, b.add_spatial_tendon, path, label=name, **props)
        if name is not None:
            self.tendon_index[name] = t

    def tendon_properties(self, el, a) -> dict:
        p: dict = {}
        if self.flag(el, a, "actuatorfrclimited", "auto") == "true" or (
            "actuatorfrcrange" in a and self.flag(el, a, "actuatorfrclimited", "auto") == "auto" and self.autolimits
        ):
            self.fail(el, "actuatorfrcrange is not supported; put forcerange on the actuator instead")
        rng = self.limited_range(el, a, "limited", "range")
        if rng is not None:
            p["lower_limit"], p["upper_limit"] = rng
        p["limit_margin"] = self.real(el, a, "margin", lo=0.0)
        sl = self.floats(el, a, "springlength", (1, 2))
        if sl is not None and not (len(sl) == 1 and sl[0] == -1.0) and sl != (-1.0, -1.0):
            p["spring_lower"], p["spring_upper"] = (sl[0], sl[0]) if len(sl) == 1 else sl
        p["stiffness"] = self.real(el, a, "stiffness", lo=0.0)
        p["damping"] = self.real(el, a, "damping", lo=0.0)
        p["friction_loss"] = self.real(el, a, "frictionloss", lo=0.0)
        p["armature"] = self.real(el, a, "armature", lo=0.0)
        if "width" in a:
            p["width"] = self.real(el, a, "width", lo=0.0)
        return p

    # -- actuators -----------------------------------------------------------------------------

    def actuator(self, el):
        if el.tag not in _ACTUATOR_TAGS:
            self.fail(el, "unsupported actuator type (motor, position, velocity and general are supported)")
        a = self.attrs(el)
        name = a.get("name")
        targets = [k for k in ("joint", "tendon", "site", "body", "jointinparent", "cranksite") if k in a]
        if len(targets) != 1 or targets[0] not in ("joint", "tendon"):
            self.fail(
                el, "an actuator needs exactly one joint= or tendon= target (site, body and crank are not supported)"
            )
        target = targets[0]
        gear = self.floats(el, a, "gear", (1, 2, 3, 4, 5, 6), default=(1.0,))
        if any(g != 0.0 for g in gear[1:]):
            self.fail(el, "only the first gear component is supported for joint and tendon targets")
        gear = gear[0]
        if gear == 0.0:
            self.fail(el, "gear must be nonzero")
        for k in ("actlimited", "actrange", "actdim", "actearly", "dampratio", "inheritrange"):
            if k in a and not (k in ("actlimited",) and a[k] == "false"):
                self.fail(el, f"attribute {k} is not supported")
        if "lengthrange" in a:
            logger.debug("%s: ignoring lengthrange", self.doc.where(el))
        ctrl = self.limited_range(el, a, "ctrllimited", "ctrlrange")
        force = self.limited_range(el, a, "forcelimited", "forcerange")
        # Gain, bias and activation of f = gain * ctrl + b0 + b1 * L + b2 * Ldot, L = gear * length.
        tau = 0.0
        if el.tag == "motor":
            g0, b0, b1, b2 = 1.0, 0.0, 0.0, 0.0
        elif el.tag == "position":
            kp = self.real(el, a, "kp", 1.0, lo=0.0)
            kv = self.real(el, a, "kv", 0.0, lo=0.0)
            if self.real(el, a, "timeconst", 0.0, lo=0.0) > 0.0:
                self.fail(el, "timeconst (an activation filter on the position target) is not supported")
            g0, b0, b1, b2 = kp, 0.0, -kp, -kv
        elif el.tag == "velocity":
            kv = self.real(el, a, "kv", 1.0, lo=0.0)
            g0, b0, b1, b2 = kv, 0.0, 0.0, -kv
        else:
            dyn = self.choice(
                el, a, "dyntype", ("none", "filterexact", "filter", "integrator", "muscle", "user"), "none"
            )
            gtype = self.choice(el, a, "gaintype", ("fixed", "affine", "muscle", "user"), "fixed")
            btype = self.choice(el, a, "biastype", ("none", "affine", "muscle", "user"), "none")
            if dyn not in ("none", "filterexact") or gtype != "fixed" or btype not in ("none", "affine"):
                self.fail(
                    el,
                    "only gaintype='fixed', biastype='none'/'affine' and dyntype='none'/'filterexact' are supported",
                )
            gain = self.floats(el, a, "gainprm", None, default=(1.0,))
            bias = (
                (self.floats(el, a, "biasprm", None, default=()) + (0.0,) * 3)[:3] if btype == "affine" else (0.0,) * 3
            )
            if any(v != 0.0 for v in gain[1:]):
                self.fail(el, "only gainprm[0] is supported")
            g0, (b0, b1, b2) = gain[0], bias
            if dyn == "filterexact":
                dynprm = self.floats(el, a, "dynprm", None, default=(1.0,))
                tau = dynprm[0]
                if tau < 0.0:
                    self.fail(el, "dynprm[0] (the filter time constant) must be >= 0")
                if b0 != 0.0:
                    self.fail(el, "a filtered actuator with a constant bias biasprm[0] is not supported")
            if b1 > 0.0 or b2 > 0.0:
                self.fail(el, "biasprm[1] and biasprm[2] must be <= 0 (a stabilizing servo)")
        self.pending_actuators.append(
            (
                el,
                name,
                target,
                a[target],
                dict(kind=el.tag, gear=gear, g0=g0, b0=b0, b1=b1, b2=b2, tau=tau, ctrl=ctrl, force=force),
            )
        )
        if target == "tendon":
            self.tendon_actuator(el, name, a["tendon"], gear, g0, b0, b1, b2, tau, ctrl, force)
        else:
            self.joint_actuator(el, name, a["joint"], gear, g0, b0, b1, b2, tau, force)

    def tendon_actuator(self, el, name, tname, gear, g0, b0, b1, b2, tau, ctrl, force):
        if tname in self.tendon_drive:
            self.fail(el, f"tendon {_q(tname)} already has the actuator {_q(self.tendon_drive[tname]['name'])}")
        g2 = gear * gear
        props = {"position_gain": 0.0 - g2 * b1, "velocity_gain": 0.0 - g2 * b2, "activation_time": tau}
        lo, hi = -math.inf, math.inf
        if force is not None:
            lo, hi = sorted((gear * force[0], gear * force[1]))
        if el.tag == "motor" and ctrl is not None:
            clo, chi = sorted((gear * ctrl[0], gear * ctrl[1]))
            lo, hi = max(lo, clo), min(hi, chi)
            if lo > hi:
                self.fail(el, "ctrlrange and forcerange do not overlap")
        props["actuation_lower"], props["actuation_upper"] = lo, hi
        if props["position_gain"] > 0.0:
            props["target_length"] = 0.0  # MuJoCo's bias acts on the length itself (ctrl starts at 0)
        if el.tag == "general":
            props["drive_force"] = gear * b0
        self.tendon_drive[tname] = {"name": name, "props": props, "el": el}

    def joint_actuator(self, el, name, jname, gear, g0, b0, b1, b2, tau, force):
        if jname in self.joint_drive:
            self.fail(el, f"joint {_q(jname)} already has the actuator {_q(self.joint_drive[jname]['name'])}")
        if force is not None:
            self.fail(el, "forcerange on a joint actuator is not supported (joint drives have no force bound)")
        if tau != 0.0 or b0 != 0.0:
            self.fail(el, "filtered or biased joint actuators are not supported")
        g2 = gear * gear
        if b1 == 0.0 and b2 == 0.0:
            mode = "motor"
        elif b1 == -g0:
            mode = "position"
        elif b1 == 0.0 and b2 == -g0:
            mode = "velocity"
        else:
            self.fail(el, "a joint actuator must be a motor, a position servo or a velocity servo")
        drive = {"name": name, "mode": mode}
        if mode == "position":
            drive.update(ke=g2 * g0, kd=0.0 - g2 * b2)
        elif mode == "velocity":
            drive.update(kd=g2 * g0, velocity_servo=True)
        self.joint_drive[jname] = drive

    def finish_actuators(self):
        for k, (el, name, target, tname, p) in enumerate(self.pending_actuators):
            label = name if name is not None else f"actuator_{k}"
            if label in self.info.actuators:
                self.fail(el, "duplicate actuator name")
            gear, ctrl = p["gear"], p["ctrl"]
            if target == "tendon":
                t = self.named(el, {"tendon": tname}, self.tendon_index, "tendon", "tendon")
                if p["kind"] == "position":
                    spec = ("transmission_target_length", 1.0 / gear, 0.0)
                elif p["kind"] == "velocity":
                    spec = ("transmission_target_velocity", 1.0 / gear, 0.0)
                else:
                    spec = ("transmission_drive_force", gear * p["g0"], gear * p["b0"])
                index = t
            else:
                j = self.named(el, {"joint": tname}, self.joint_index, "joint", "joint")
                if self.joint_type[tname] not in ("hinge", "slide"):
                    self.fail(
                        el, f"joint {_q(tname)} is a {self.joint_type[tname]} joint; actuators need hinge or slide"
                    )
                mode = self.joint_drive[tname]["mode"]
                spec = {
                    "motor": ("joint_f", gear * p["g0"], 0.0),
                    "position": ("joint_target_pos", 1.0 / gear, 0.0),
                    "velocity": ("joint_target_vel", 1.0 / gear, 0.0),
                }[mode]
                index = j  # joint index; converted to a dof index after the merge
            self.info.actuators[label] = MjcfActuator(
                name=label,
                kind=p["kind"],
                target=target,
                index=index,
                control=spec[0],
                scale=spec[1],
                offset=spec[2],
                ctrlrange=ctrl,
            )

    # -- equality ------------------------------------------------------------------------------

    def equality(self, el):
        if el.tag != "tendon":
            self.fail(el, "unsupported equality constraint (only <tendon> is supported)")
        a = self.attrs(el, kind="equality")
        t1 = self.named(el, a, self.tendon_index, "tendon1", "tendon")
        t2 = self.named(el, a, self.tendon_index, "tendon2", "tendon") if "tendon2" in a else None
        poly = self.floats(el, a, "polycoef", (1, 2, 3, 4, 5), default=(0.0, 1.0, 0.0, 0.0, 0.0))
        active = self.choice(el, a, "active", ("true", "false"), "true") == "true"
        name = a.get("name")
        c = self._add(el, self.scratch.add_tendon_coupling, t1, t2, list(poly), enabled=active, label=name)
        self.info.couplings[name if name is not None else self.scratch.coupling_label[c]] = c


def _matrix_to_quat(r) -> tuple:
    """Quaternion (x, y, z, w) of a rotation matrix."""
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        return ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s)
    i = int(np.argmax([r[0, 0], r[1, 1], r[2, 2]]))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = math.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k]) * 2.0
    q = [0.0, 0.0, 0.0, 0.0]
    q[i] = 0.25 * s
    q[j] = (r[j, i] + r[i, j]) / s
    q[k] = (r[k, i] + r[i, k]) / s
    q[3] = (r[k, j] - r[j, k]) / s
    return tuple(q)


def _quat_z_to(v) -> tuple:
    """The minimal rotation taking +Z to the unit vector ``v`` (as MuJoCo's zaxis does)."""
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ v)
    if c < -1.0 + 1e-12:
        return (1.0, 0.0, 0.0, 0.0)
    axis = np.cross(z, v)
    s = np.linalg.norm(axis)
    if s < 1e-12:
        return _IDENTITY_Q
    return hm.quat_from_axis_angle(axis / s, math.atan2(s, c))


# ----------------------------------------------------------------------------------------------
# Public entry points


def add_mjcf(
    builder,
    source,
    *,
    xform=None,
    floating: bool | None = None,
    label_prefix: str = "",
    world: int | None = None,
) -> MjcfImport:
    """Append an MJCF model to ``builder``, tendons, tendon actuators and tendon equalities included.

    Args:
        builder: The ``ModelBuilder`` to append to. It is left unchanged if anything fails.
        source: A file path or an XML string starting with ``<`` (after whitespace and an optional
            byte-order mark), or XML bytes.
        xform: Placement of the whole model (px, py, pz, qx, qy, qz, qw) [m]; default identity.
        floating: None follows the file (``<freejoint>`` gives a free base, a jointless child of
            ``<worldbody>`` is welded to the world); True gives every jointless root body a free
            joint; False welds bodies with a free joint to the world instead.
        label_prefix: Prepended to every label (bodies, shapes, joints, tendons, couplings).
        world: World to add the model to (default ``builder.current_world``).

    Returns:
        An ``MjcfImport`` with name -> index tables (indices in ``builder``), the sites (body and
        local pose), each actuator's control mapping, and ``<option>`` timestep and gravity.

    Raises:
        ValueError: broken XML, unknown names, bad values, or elements/attributes that would change
            the physics but are not supported, and whatever MuJoCo 4.0's parser rejects (non-integer
            ``condim``/``contype``/``conaffinity``, moving bodies with mass or inertia below mjMINVAL,
            inertias breaking the triangle inequality, nesting deeper than ``MAX_ELEMENT_DEPTH``);
            the message names the file, line and element and quotes at most ``MAX_ECHO`` characters
            of a value.
        TypeError: non-numeric attribute values (including Python-only forms such as ``1_0``).
    """
    if not isinstance(label_prefix, str):
        raise TypeError(f"add_mjcf: label_prefix must be a str, got {type(label_prefix).__name__}")
    if floating is not None and not isinstance(floating, bool):
        raise TypeError(f"add_mjcf: floating must be None, True or False, got {type(floating).__name__}")
    doc = _Doc(source)
    imp = _Importer(doc, type(builder), builder.up_axis, floating)
    imp.run()
    scratch = imp.scratch
    for label in scratch.transmission_label:
        if label_prefix + label in builder.transmission_label:
            raise ValueError(
                f"add_mjcf({doc.name}): the builder already has a transmission tendon labelled "
                f"{_q(label_prefix + label)}; pass a label_prefix"
            )
    for label in scratch.coupling_label:
        if label_prefix + label in builder.coupling_label:
            raise ValueError(
                f"add_mjcf({doc.name}): the builder already has a coupling labelled {_q(label_prefix + label)}; "
                "pass a label_prefix"
            )
    b0, s0, j0 = builder.body_count, builder.shape_count, builder.joint_count
    t0, c0, dof0 = builder.transmission_count, builder.coupling_count, builder.joint_dof_count
    try:
        builder.add_builder(scratch, xform=xform, world=world, label_prefix=label_prefix)
    except (TypeError, ValueError) as e:
        raise type(e)(f"add_mjcf({doc.name}): {e}") from None
    info = imp.info
    if info.gravity is not None:
        builder.gravity = tuple(float(g) for g in info.gravity)
    place = hm.IDENTITY if xform is None else tuple(float(c) for c in xform)
    info.bodies = {k: v + b0 for k, v in imp.body_index.items()}
    info.joints = {k: v + j0 for k, v in imp.joint_index.items()}
    info.shapes = {k: v + s0 for k, v in imp.geom_index.items()}
    info.tendons = {k: v + t0 for k, v in imp.tendon_index.items()}
    info.couplings = {k: v + c0 for k, v in info.couplings.items()}
    info.sites = {
        k: (body + b0, pose) if body >= 0 else (-1, hm.transform_mul(place, pose))
        for k, (body, pose) in imp.site_pose.items()
    }
    dof_start = np.concatenate([[0], np.cumsum([_dof_count(t) for t in scratch.joint_type])]).astype(int)
    actuators = {}
    for k, act in info.actuators.items():
        index = act.index + t0 if act.target == "tendon" else int(dof_start[act.index]) + dof0
        actuators[k] = MjcfActuator(
            name=act.name,
            kind=act.kind,
            target=act.target,
            index=index,
            control=act.control,
            scale=act.scale,
            offset=act.offset,
            ctrlrange=act.ctrlrange,
        )
    info.actuators = actuators
    return info


def _dof_count(jtype: int) -> int:
    from newton_tendon.kernels import types as T

    return T.JOINT_DOF_COUNT[int(jtype)]


__all__ = ["MjcfActuator", "MjcfImport", "add_mjcf", "lower_tendons"]
