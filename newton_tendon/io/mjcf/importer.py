"""The importer: its state (compiler settings, default classes, name tables), the attribute and
orientation readers every element uses, the order in which the sections are read, and the entry
point ``add_mjcf``. The element kinds are read by the functions of ``settings``, ``bodies``,
``geoms``, ``tendons`` and ``actuators``, each taking the importer as its first argument."""

from __future__ import annotations

import math

import numpy as np

from newton_tendon import _hostmath as hm

from .._import_report import coordinate_starts, warn_left_out
from .actuators import actuator, finish_actuators, make_implicit_tendons
from .attributes import (
    _ACTUATOR_SHARED,
    _ACTUATOR_TAGS,
    _ATTRS,
    _IDENTITY_Q,
    _ORIENTATION,
    _SOLVER_TUNING,
    _VISUAL,
    _attr_kind,
)
from .bodies import collect, emit_bodies, scale_total_mass, spring_dampers
from .document import _INT, _REAL, _Doc, _Element, _q, _real_token, _tokens, logger
from .geoms import collision_filters, contact, height_fields, meshes
from .results import MjcfActuator, MjcfImport
from .settings import compiler, default, option
from .tendons import equality, tendon

# ----------------------------------------------------------------------------------------------
# The importer

UNSUPPORTED = {
    "soft-constraint parameters": (
        "MuJoCo's solref, solimp, solmix, priority and gap are ignored: our limits, contacts and "
        "tendon rows use their own formulation (compliances, position_correction)"
    ),
    "fluid forces": "<option> density, viscosity and wind and geom fluidshape are ignored: no fluid forces here",
    "geom margin": ("a geom's contact margin is ignored: contacts act when the shapes touch, not within the margin"),
    "joint margin": "a joint's limit margin is ignored: the limit acts at the range, not within the margin",
    "free joint dynamics": (
        "damping, stiffness, armature, frictionloss and springdamper on a free joint are ignored (MuJoCo "
        "applies them to its six coordinates)"
    ),
    "Euler actuator filter": (
        "an actuator's dyntype 'filter' (MuJoCo's Euler-integrated filter) is integrated exactly, as "
        "'filterexact': the same time constant, a difference of order dt / tau"
    ),
    "condim 4/6": (
        "torsional and rolling friction are ignored: condim 4 and 6 contacts are imported as condim 3 "
        "(sliding friction only)"
    ),
}
"""What the import leaves out or approximates, with why: each raises ValueError with ``strict=True``,
and is otherwise imported without it, with one ``MjcfImportWarning`` per feature naming the elements."""


class MjcfImportWarning(UserWarning):
    """An MJCF feature ``add_mjcf`` leaves out or approximates (``UNSUPPORTED``); ``strict=True`` makes
    it an error."""


class _Importer:
    """One import: the scratch builder everything is added to, the compiler settings and default
    classes in force, and the name tables that later elements refer to."""

    def __init__(self, doc: _Doc, builder_cls, up_axis: str, floating: bool | None, strict: bool = False):
        self.doc = doc
        self.floating = floating
        self.strict = strict
        self.unsupported_seen: dict[str, list[str]] = {}
        """Feature -> the elements (file:line: <tag name>) that use it, in document order."""
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
        self.joint_dof: dict[str, int] = {}
        self.contact_disabled = False
        # Constraint kinds an <option><flag> disables: "limit", "equality", "frictionloss".
        self.disabled: set[str] = set()
        # <asset><hfield> by name: (element, size, flat) (geoms.height_fields).
        self.hfields: dict[str, tuple] = {}
        # <asset><mesh> by name: (element, attributes) (geoms.meshes); loaded when a geom uses it.
        self.meshes: dict[str, tuple] = {}
        self.mesh_cache: dict[str, tuple] = {}
        self.meshdir: str | None = None
        self.assetdir: str | None = None
        self.strippath = False
        self.inertiagrouprange = (0, 5)
        self.gravity_disabled = False
        self.settotalmass = -1.0
        self.actuator_dof: dict[str, int] = {}
        # springdamper joints: id(element) -> (timeconst, dampratio), and once added (element, joint,
        # dof within it, timeconst, dampratio) (bodies.spring_dampers).
        self.springdamper_of: dict[int, tuple] = {}
        self.springdampers: list[tuple] = []
        # Virtual links of joint chains -> the body they carry (bodies.joint_chain).
        self.virtual_links: dict[int, int] = {}
        # One-joint fixed tendons for joint friction loss and bounded or filtered joint actuators:
        # key -> {"joint": name, "el": element, "friction_loss": N or N m} (actuators.implicit_tendon).
        self.implicit_tendons: dict[str, dict] = {}
        # frictionloss joints: id(element) -> value, until the joint has a name (bodies.joint_dof).
        self.frictionloss_of: dict[int, float] = {}

    # -- errors and attribute helpers ----------------------------------------------------------

    def fail(self, el: _Element, msg: str, exc=ValueError):
        raise exc(f"{self.doc.where(el)}: {msg}")

    def unsupported(self, el: _Element, feature: str):
        """``el`` uses ``feature``, which the import leaves out or approximates (``UNSUPPORTED``): with
        ``strict`` a ValueError here; otherwise it is recorded, and ``add_mjcf`` warns once per
        feature after a successful import and lists the elements in ``MjcfImport.unsupported``."""
        if self.strict:
            self.fail(el, f"{feature}: {UNSUPPORTED[feature]} (strict=True)")
        self.unsupported_seen.setdefault(feature, []).append(self.doc.where(el))

    def attrs(self, el: _Element, cls: str | None = None, kind: str | None = None) -> dict:
        """Element attributes over its default class; unknown attributes raise, visual ones are logged."""
        kind = kind or _attr_kind(el.tag)
        name = el.attrib.get("class", cls or "main")
        if name not in self.defaults:
            self.fail(el, f"unknown default class {_q(name)}")
        dkey = el.tag if kind not in ("tendon", "equality") else kind
        base = {}
        if kind == "actuator":
            # MuJoCo keeps one actuator default per class: its common attributes (gear, ranges,
            # limited flags) set under any actuator tag reach every kind; a shortcut's own
            # parameters (kp, kv) stay with their tag.
            for tag in _ACTUATOR_TAGS:
                own = self.defaults[name].get(tag, {})
                base.update({k: v for k, v in own.items() if k in _ACTUATOR_SHARED})
        merged = {**base, **self.defaults[name].get(dkey, {}), **el.attrib}
        allowed = _ATTRS.get(kind, set())
        tuned = False
        for a in list(merged):
            if a in allowed:
                continue
            if a == "group" and kind == "geom":
                merged["_group"] = merged[a]  # decides whether the geom adds mass (inertiagrouprange)
            if a in _VISUAL:
                logger.debug("%s: ignoring attribute %r (no effect on our physics)", self.doc.where(el), a)
                del merged[a]
                continue
            if a in _SOLVER_TUNING:
                tuned = True
                del merged[a]
                continue
            self.fail(el, f"unsupported attribute {_q(a)}")
        if tuned:
            self.unsupported(el, "soft-constraint parameters")
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

    def geom_group(self, el, attrs) -> int:
        """A geom's ``group`` (0 by default), kept by ``attrs`` as ``_group``."""
        return self.integer(el, {"group": attrs["_group"]} if "_group" in attrs else {}, "group", 0)

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
            q = hm.quat_from_matrix(np.column_stack([x, y, np.cross(x, y)]))
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
            compiler(self, el)
        for el in sections.get("option", []):
            option(self, el)
        for el in sections.get("default", []):
            default(self, el)
        for el in sections.get("asset", []):
            height_fields(self, el)
            meshes(self, el)
        bodies = []
        for el in sections.get("worldbody", []):
            collect(self, el, -1, hm.IDENTITY, hm.IDENTITY, None, bodies, root_level=True)
        for el in sections.get("actuator", []):
            for a in el.children:
                actuator(self, a)
        emit_bodies(self, bodies)
        scale_total_mass(self)
        spring_dampers(self)
        for el in sections.get("contact", []):
            contact(self, el)
        collision_filters(self)
        for el in sections.get("tendon", []):
            for t in el.children:
                tendon(self, t)
        make_implicit_tendons(self)
        finish_actuators(self)
        for el in sections.get("equality", []):
            for e in el.children:
                equality(self, e)
        if self.gravity_disabled:
            self.info.gravity = (0.0, 0.0, 0.0)

    def _add(self, el, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{self.doc.where(el)}: {e}") from None


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
# Public entry point


def add_mjcf(
    builder,
    source,
    *,
    xform=None,
    floating: bool | None = None,
    label_prefix: str = "",
    world: int | None = None,
    strict: bool = False,
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
        strict: Raise ValueError on the first element that uses a feature the import leaves out or
            approximates (``UNSUPPORTED``: soft-constraint parameters, fluid forces, geom and joint
            margins, condim 4/6). By default those import without it, with one
            ``MjcfImportWarning`` per feature naming the elements (``MjcfImport.unsupported``).

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
    if not isinstance(strict, bool):
        raise TypeError(f"add_mjcf: strict must be True or False, got {type(strict).__name__}")
    doc = _Doc(source)
    imp = _Importer(doc, type(builder), builder.up_axis, floating, strict)
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
    t0, c0 = builder.transmission_count, builder.coupling_count
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
    info.tendons = {k: v + t0 for k, v in imp.tendon_index.items() if k not in imp.implicit_tendons}
    info.joint_tendons = {k: v + t0 for k, v in imp.tendon_index.items() if k in imp.implicit_tendons}
    info.couplings = {k: v + c0 for k, v in info.couplings.items()}
    info.sites = {
        k: (body + b0, pose) if body >= 0 else (-1, hm.transform_mul(place, pose))
        for k, (body, pose) in imp.site_pose.items()
    }
    q_start, d_start = coordinate_starts(builder)
    info.joint_coords = {
        k: (int(q_start[v + j0]) + imp.joint_dof[k], int(d_start[v + j0]) + imp.joint_dof[k])
        for k, v in imp.joint_index.items()
        if imp.joint_type[k] in ("hinge", "slide")
    }
    actuators = {}
    for k, act in info.actuators.items():
        if act.target == "tendon":
            index = act.index + t0
        else:
            index = int(d_start[act.index + j0]) + imp.actuator_dof.get(k, 0)
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
    info.unsupported = warn_left_out(f"add_mjcf({doc.name})", imp.unsupported_seen, UNSUPPORTED, MjcfImportWarning)
    return info
