"""The sections that set how the rest of the file is read: ``<compiler>`` (angle unit, Euler
sequence, autolimits, inertia from geoms), ``<option>`` (timestep, gravity; physics-changing flags
raise) and ``<default>`` (the default classes)."""

from __future__ import annotations

import math

from .attributes import _ACTUATOR_TAGS
from .document import _q, logger


def compiler(imp, el):
    """``<compiler>``: the angle unit, Euler sequence, autolimits and inertiafromgeom used by the rest of
    the file; options that rescale masses raise, asset and bookkeeping options are ignored."""
    a = el.attrib
    for k in a:
        if k == "angle":
            imp.angle_scale = {"degree": math.pi / 180.0, "radian": 1.0}.get(a[k])
            if imp.angle_scale is None:
                imp.fail(el, f"angle={_q(a[k])} must be 'degree' or 'radian'")
        elif k == "eulerseq":
            s = a[k]
            if len(s) != 3 or any(c not in "xyzXYZ" for c in s):
                imp.fail(el, f"eulerseq={_q(s)} must be three of x, y, z, X, Y, Z")
            imp.eulerseq = s
        elif k == "autolimits":
            imp.autolimits = imp.choice(el, a, k, ("true", "false"), "true") == "true"
        elif k == "inertiafromgeom":
            imp.inertiafromgeom = imp.choice(el, a, k, ("true", "false", "auto"), "auto")
        elif k == "coordinate":
            imp.choice(el, a, k, ("local",), "local")
        elif k == "settotalmass":
            # MuJoCo scales every body's mass and inertia so that the total is this (when > 0).
            imp.settotalmass = imp.real(el, a, k)
        elif k in ("boundmass", "boundinertia"):
            v = imp.real(el, a, k)
            if v > 0.0:
                imp.fail(el, f"{k} rescales masses and is not supported; author the masses instead")
        elif k == "balanceinertia":
            if a[k] == "true":
                imp.fail(el, "balanceinertia='true' is not supported; author valid inertias instead")
        elif k == "inertiagrouprange":
            lo, hi = imp.floats(el, a, k, 2)
            if lo != int(lo) or hi != int(hi):
                imp.fail(el, f"inertiagrouprange={_q(a[k])} must be two integers")
            imp.inertiagrouprange = (int(lo), int(hi))
        elif k == "alignfree":
            if imp.choice(el, a, k, ("true", "false"), "false") == "true":
                imp.fail(el, "alignfree='true' (free bodies aligned to their inertial frame) is not supported")
        elif k in ("meshdir", "assetdir"):
            setattr(imp, k, a[k])
        elif k == "strippath":
            imp.strippath = imp.choice(el, a, k, ("true", "false"), "false") == "true"
        elif k in (
            "texturedir",
            "discardvisual",
            "fusestatic",
            "usethread",
            "exactmeshinertia",
            "saveinertial",
            "fitaabb",
            "model",
        ):
            logger.debug("%s: ignoring compiler option %r", imp.doc.where(el), k)
        else:
            imp.fail(el, f"unsupported compiler attribute {_q(k)}")
    for c in el.children:
        imp.fail(c, "unsupported element inside <compiler>")


def option(imp, el):
    """``<option>``: timestep and gravity go to the result (gravity is also applied to the builder);
    fluid forces and physics-changing ``<flag>`` settings raise, solver tuning is ignored."""
    a = el.attrib
    for k in a:
        if k == "timestep":
            imp.info.timestep = imp.real(el, a, k, lo=0.0)
        elif k == "gravity":
            imp.info.gravity = imp.floats(el, a, k, 3)
        elif k in ("wind", "density", "viscosity"):
            if any(v != 0.0 for v in imp.floats(el, a, k, 3 if k == "wind" else 1)):
                imp.unsupported(el, "fluid forces")
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
            "sleep_tolerance",
        ):
            logger.debug("%s: ignoring solver option %r", imp.doc.where(el), k)
        elif k == "actuatorgroupdisable":
            # MuJoCo switches the actuators of these groups off; nothing here does that.
            if imp.floats(el, a, k):
                imp.fail(el, "actuatorgroupdisable (actuator groups switched off) is not supported")
        else:
            imp.fail(el, f"unsupported option attribute {_q(k)}")
    harmless = {"override", "energy", "fwdinv", "invdiscrete", "multiccd", "island", "warmstart", "nativeccd"}
    # Off by default in MuJoCo (disabling them changes nothing), or what our solvers do anyway: no
    # sensors, no midphase or autoreset to switch off, and no control clamping (docs/mjcf.md).
    harmless |= {"sleep", "diagexact", "ipc", "speculative", "sensor", "midphase", "autoreset", "clampctrl"}
    # Enabled, these change the physics: the o_* contact overrides, and resting bodies put to sleep.
    changes_when_enabled = {"override", "sleep"}
    for c in el.children:
        if c.tag != "flag":
            imp.fail(c, "unsupported element inside <option>")
        for k, v in c.attrib.items():
            if v not in ("enable", "disable"):
                imp.fail(c, f"flag {k}={_q(v)} must be enable or disable")
            if v == "enable" and k in changes_when_enabled:
                imp.fail(c, f"flag {k}='enable' changes the physics and is not supported")
            if k in harmless or v == "enable":
                continue
            if k == "gravity":
                # No gravity in MuJoCo: none here either (applied to the builder, as <option gravity>).
                imp.gravity_disabled = True
                continue
            if k == "contact":
                # No contact at all: every imported geom keeps drawing and loses its collision
                # (``geoms.collision_filters``).
                imp.contact_disabled = True
                continue
            if k in ("constraint", "limit", "equality", "frictionloss"):
                # MuJoCo leaves these constraint kinds out of its solver; "constraint" is all of them
                # and contacts. Joint and tendon ranges then import as no limit, tendon couplings as
                # disabled, friction losses as zero.
                imp.disabled.add(k)
                if k == "constraint":
                    imp.disabled.update(("limit", "equality", "frictionloss"))
                    imp.contact_disabled = True
                continue
            imp.fail(c, f"flag {k}={_q(v)} changes the physics and is not supported")


def default(imp, top_el):
    """One top-level ``<default>`` section. As in MuJoCo, every section adds to the one top-level
    class "main" (a later section overrides what an earlier one set, and a class nested in a
    section starts from "main" as it stands then); nested classes are defined once. Iterative, so
    nesting depth is bounded only by ``MAX_ELEMENT_DEPTH``."""
    allowed = {"joint", "geom", "site", "tendon", "equality", "mesh", "material", "camera", "light", "pair"}
    allowed.update(_ACTUATOR_TAGS)
    top_class = top_el.attrib.get("class", "main")
    if top_class != "main":
        imp.fail(top_el, f"a top-level <default> is the class 'main' and cannot be renamed (class={_q(top_class)})")
    todo = [(top_el, None)]
    while todo:
        el, parent = todo.pop()
        if parent is None:
            name = "main"
        else:
            name = el.attrib.get("class")
            if name is None:
                imp.fail(el, "a nested <default> needs a class name")
            if name in imp.defaults:
                imp.fail(el, f"default class {_q(name)} is defined twice")
        for k in el.attrib:
            if k != "class":
                imp.fail(el, f"unsupported attribute {_q(k)}")
        base = imp.defaults["main"] if parent is None else parent
        own = {tag: dict(v) for tag, v in base.items()}
        nested = []
        for c in el.children:
            if c.tag == "default":
                nested.append(c)
            elif c.tag in allowed:
                own.setdefault(c.tag, {}).update(c.attrib)
            else:
                imp.fail(c, "unsupported element in <default>")
        imp.defaults[name] = own
        todo.extend((c, own) for c in reversed(nested))
