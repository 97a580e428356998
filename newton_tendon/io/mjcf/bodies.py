"""The kinematic tree: ``<body>`` and ``<frame>`` elements collected in document order, then
emitted as builder bodies (with ``<inertial>``) and their ``<joint>``/``<freejoint>``, one
articulation per tree under ``<worldbody>``."""

from __future__ import annotations

import math

import numpy as np

from newton_tendon import _hostmath as hm
from newton_tendon.builder.joints import JointDofConfig
from newton_tendon.inertia import check_body_inertia, quat_to_matrix

from .actuators import implicit_tendon
from .attributes import _IDENTITY_Q
from .document import MJ_MINVAL, MJ_TRIANGLE_RTOL, _q, logger
from .geoms import geom, site

# -- kinematic tree: collect -----------------------------------------------------------------


def collect(imp, el, parent_entry, rel_frame, world_frame, cls, out, root_level=False):
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
            a = imp.attrs(c, cls)
            imp.zero(c, a, "gravcomp", why="(gravity compensation) is not supported")
            mocap = imp.choice(c, a, "mocap", ("true", "false"), "false") == "true"
            local = hm.transform_mul(rel_frame, imp.pose(c, a))
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
                imp.fail(c, "mocap bodies must be children of <worldbody>")
            child_cls = a.get("childclass", cls)
            if child_cls is not None and child_cls not in imp.defaults:
                imp.fail(c, f"unknown childclass {_q(child_cls)}")
            out.append(entry)
            # Items directly in the body are relative to the body frame.
            stack.append((iter(c.children), entry, hm.IDENTITY, hm.IDENTITY, child_cls, entry["children"], False))
        elif c.tag == "frame":
            a = imp.attrs(c, cls)
            fcls = a.get("childclass", cls)
            if fcls is not None and fcls not in imp.defaults:
                imp.fail(c, f"unknown childclass {_q(fcls)}")
            fpose = imp.pose(c, a)
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
            item(imp, c, cls, None, rel_frame, world_frame)
        elif parent_entry != -1 and c.tag in ("geom", "site", "joint", "freejoint", "inertial"):
            item(imp, c, cls, parent_entry, rel_frame, None)
        elif c.tag in ("camera", "light"):
            logger.debug("%s: ignored (visual)", imp.doc.where(c))
        else:
            imp.fail(c, "unsupported element here")


def item(imp, el, cls, entry, rel_frame, world_frame):
    """A ``<geom>``, ``<site>``, ``<joint>``/``<freejoint>`` or ``<inertial>`` met by ``collect``: its
    attributes (over the default class) and frame wait on its body entry (geoms and sites of
    ``<worldbody>`` on the importer) until the body is emitted."""
    a = imp.attrs(el, cls)
    if el.tag == "joint" or el.tag == "freejoint":
        if rel_frame != hm.IDENTITY:
            # Joints inside a <frame>: fold the frame into the joint position and axis.
            a = dict(a)
            a["_frame"] = rel_frame
        entry["joints"].append((el, a))
    elif el.tag == "inertial":
        if entry["inertial"] is not None:
            imp.fail(el, "a body has at most one <inertial>")
        entry["inertial"] = (el, a, rel_frame)
    elif el.tag == "geom":
        target = entry["geoms"] if entry is not None else imp.world_geoms
        target.append((el, a, rel_frame if entry is not None else world_frame))
    else:
        target = entry["sites"] if entry is not None else imp.world_sites
        target.append((el, a, rel_frame if entry is not None else world_frame))


# -- kinematic tree: emit --------------------------------------------------------------------


def emit_bodies(imp, roots):
    """The world's geoms and sites, then each tree under ``<worldbody>`` depth first in document order;
    the joints of one tree form one articulation."""
    b = imp.scratch
    for el, a, frame in imp.world_geoms:
        geom(imp, el, a, -1, frame)
    for el, a, frame in imp.world_sites:
        site(imp, el, a, -1, frame)
    for entry in roots:
        j_first = b.joint_count
        # Depth first in document order, with an explicit stack (no recursion limit on depth).
        todo = [(entry, -1, hm.IDENTITY)]
        while todo:
            node, parent_index, parent_world = todo.pop()
            body, world = emit_body(imp, node, parent_index, parent_world)
            todo.extend((child, body, world) for child in reversed(node["children"]))
        if b.joint_count > j_first:
            b.add_articulation(list(range(j_first, b.joint_count)), label=entry["name"])


def emit_body(imp, entry, parent_index, parent_world):
    """Add one body (its geoms, sites and joint); returns its scratch index and world pose."""
    b = imp.scratch
    el = entry["el"]
    world = hm.transform_mul(parent_world, entry["local"])
    mass, inertia, com, lock = 0.0, None, None, False
    use_inertial = entry["inertial"] is not None and imp.inertiafromgeom != "true"
    if imp.inertiafromgeom == "false" and entry["inertial"] is None and entry["joints"]:
        imp.fail(el, "inertiafromgeom='false' but the body has no <inertial>")
    if use_inertial:
        mass, inertia, com, lock = inertial(imp, *entry["inertial"])
    owner = imp.doc.where(el)
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
        if entry["name"] in imp.body_index:
            imp.fail(el, "duplicate body name")
        imp.body_index[entry["name"]] = body
    # Geoms first (they may add mass), then the joint.
    for gel, ga, frame in entry["geoms"]:
        geom(imp, gel, ga, body, frame)
    for sel, sa, frame in entry["sites"]:
        site(imp, sel, sa, body, frame)
    parent_xform_base = entry["local"] if parent_index >= 0 else world
    joint(imp, entry, body, parent_index, parent_xform_base)
    return body, world


def scale_total_mass(imp):
    """``<compiler settotalmass="M">`` (M > 0): every body's mass and inertia times M / (total mass of
    the imported bodies), as MuJoCo's compiler scales them (centres of mass unchanged)."""
    if imp.settotalmass <= 0.0:
        return
    b = imp.scratch
    total = float(sum(b.body_mass))
    if total <= 0.0:
        imp.fail(imp.doc.root, "settotalmass needs bodies with mass to scale")
    scale = imp.settotalmass / total
    for i in range(b.body_count):
        b.body_mass[i] = b.body_mass[i] * scale
        b.body_inertia[i] = np.asarray(b.body_inertia[i], dtype=np.float64) * scale


def inertial(imp, iel, ia, frame):
    """An ``<inertial>`` (element, attributes, frame relative to the body): mass [kg], inertia about
    the centre of mass in body axes [kg m^2], centre of mass in the body frame [m] and whether the
    inertia is locked (it is: geoms add no mass to a body with an ``<inertial>``)."""
    mass = imp.real(iel, ia, "mass", None, lo=0.0)
    if mass is None:
        imp.fail(iel, "attribute mass is required")
    ipose = hm.transform_mul(frame, imp.pose(iel, ia))
    if "diaginertia" in ia and "fullinertia" in ia:
        imp.fail(iel, "give diaginertia or fullinertia, not both")
    if "fullinertia" in ia:
        xx, yy, zz, xy, xz, yz = imp.floats(iel, ia, "fullinertia", 6)
        local_i = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    elif "diaginertia" in ia:
        local_i = np.diag(imp.floats(iel, ia, "diaginertia", 3))
    else:
        imp.fail(iel, "diaginertia or fullinertia is required")
    key = "fullinertia" if "fullinertia" in ia else "diaginertia"
    # MuJoCo checks the triangle inequality in float64 without slack; only eigenvalue round-off
    # (a rotated thin disk sits exactly on the bound) is forgiven here.
    imp._add(iel, check_body_inertia, f"attribute {key}={_q(ia[key])}", local_i, MJ_TRIANGLE_RTOL)
    r = quat_to_matrix(ipose[3:])
    inertia = r @ local_i @ r.T
    com = ipose[:3]
    return mass, inertia, com, True


def joint(imp, entry, body, parent, parent_base):
    """The ``<joint>``/``<freejoint>`` elements of a body. One hinge or slide joint becomes a revolute
    or prismatic joint with its limits and spring, the gains of a joint actuator folded in; ball and
    free joints map directly (a free joint is welded with ``floating=False``); several hinge and slide
    joints in one body become one D6 joint (``multi_joint``). A body without a joint is welded to its
    parent (a root gets a free joint with ``floating=True``; a mocap body gets no joint)."""
    b = imp.scratch
    el = entry["el"]
    joints = entry["joints"]
    if entry["mocap"] and joints:
        imp.fail(el, "a mocap body cannot have joints")
    if not joints:
        if entry["mocap"]:
            return
        if entry["root"] and imp.floating:
            check_moving_body(imp, el, body)
            imp._add(el, b.add_joint_free, body, label=entry["name"])
            return
        if parent >= 0 and b.body_mass[body] == 0.0 and b.body_mass[parent] > 0.0:
            imp.fail(
                el,
                "has no joint and no mass: welding a massless body to a moving parent would make it "
                "immovable here; give it mass or move its geoms and sites into the parent",
            )
        imp._add(el, b.add_joint_fixed, parent, body, parent_base, label=entry["name"])
        return
    check_moving_body(imp, el, body)
    if len(joints) > 1:
        multi_joint(imp, entry, body, parent, parent_base)
        return
    jel, ja = joints[0]
    jtype = joint_kind(imp, jel, ja)
    name = ja.get("name")
    label = name if name is not None else None
    if jtype == "free":
        ja.pop("_frame", None)
        sprung = ja.get("springdamper") is not None and any(v > 0.0 for v in imp.floats(jel, ja, "springdamper", 2))
        if sprung or any(imp.real(jel, ja, k) != 0.0 for k in ("damping", "stiffness", "armature", "frictionloss")):
            imp.unsupported(jel, "free joint dynamics")
        if not entry["root"]:
            imp.fail(jel, "a free joint is only allowed on a child of <worldbody>")
        if jel.tag == "freejoint" and ja.get("align", "false") not in ("false", "auto"):
            imp.fail(jel, "align='true' is not supported")
        if imp.floating is False:
            j = imp._add(jel, b.add_joint_fixed, -1, body, parent_base, label=label)
        else:
            j = imp._add(jel, b.add_joint_free, body, label=label)
        _register_joint(imp, jel, name, j, jtype)
        return
    j = single_joint(imp, jel, ja, jtype, parent, body, parent_base, label)
    _register_joint(imp, jel, name, j, jtype)


def single_joint(imp, jel, ja, jtype, parent, child, parent_base, label, dof=None) -> int:
    """One hinge, slide or ball ``<joint>`` between ``parent`` and ``child`` (whose frame sits at
    ``parent_base`` in the parent's frame when the joint is at its reference): a revolute, prismatic
    or ball joint at the joint's ``pos``, with its limits, spring, damper and armature (``dof``: its
    ``joint_dof`` attributes when already read)."""
    b = imp.scratch
    if dof is None:
        dof = joint_dof(imp, jel, ja, jtype)
    parent_xform, child_xform = joint_frames(parent_base, dof["pos"], [(dof, jtype)] if jtype != "ball" else [])
    if jtype == "ball":
        return imp._add(jel, b.add_joint_ball, parent, child, parent_xform, child_xform, label=label)
    add = b.add_joint_revolute if jtype == "hinge" else b.add_joint_prismatic
    return imp._add(
        jel,
        add,
        parent,
        child,
        parent_xform,
        child_xform,
        dof["axis"],
        limit_lower=dof["lo"],
        limit_upper=dof["hi"],
        target_pos=dof["target_pos"],
        target_vel=0.0,
        target_ke=dof["ke"],
        target_kd=dof["kd"],
        armature=dof["armature"],
        label=label,
    )


CHAIN_LINK_SHARE = 0.01
"""Share of a body's mass and inertia that each virtual link of a joint chain (``joint_chain``) takes."""


def joint_chain(imp, entry, body, parent, parent_base, why: str, kinds, dofs):
    """Several joints of one body that one D6 joint cannot hold (``why``), as MuJoCo composes them:
    the body turns and slides by each joint in document order, each about its own position and axis
    in the frame the previous joints moved. That is a chain: joint k links a virtual body k - 1 (the
    parent for k = 0) to virtual body k (the body itself for the last), every virtual body sitting at
    the body's pose when the joints are at their reference. Each MJCF joint keeps its own limits,
    spring, damper, armature and actuator, and its coordinate is MuJoCo's qpos.

    Our solvers move bodies, not joint coordinates, so a virtual body needs mass: each takes
    ``CHAIN_LINK_SHARE`` (1 %) of the body's mass and inertia about its centre of mass, and the body
    keeps the rest. The total is unchanged and exact when the joints move together; a joint alone
    sees its link 1 % lighter or heavier than MuJoCo's massless one (docs/mjcf.md). The virtual
    bodies have no shapes and are labelled ``<body>/<joint>``; the parent and the body are excluded
    from colliding, as MuJoCo excludes a parent and its child."""
    b = imp.scratch
    el = entry["el"]
    joints = entry["joints"]
    logger.debug("%s: %s; composed as a chain of %d joints", imp.doc.where(el), why, len(joints))
    share = CHAIN_LINK_SHARE
    mass = b.body_mass[body]
    inertia = np.asarray(b.body_inertia[body], dtype=np.float64)
    com = b.body_com[body]
    pose = tuple(float(x) for x in b.body_q[body])
    links = []
    for (jel, ja), _kind in zip(joints[:-1], kinds[:-1], strict=True):
        jname = ja.get("name") or f"joint_{len(links)}"
        link = imp._add(
            jel,
            b.add_link,
            xform=pose,
            mass=share * mass,
            inertia=share * inertia,
            com=com,
            lock_inertia=True,
            label=f"{entry['name'] or 'body'}/{jname}",
        )
        links.append(link)
        imp.virtual_links[link] = body
    b.body_mass[body] = mass * (1.0 - share * len(links))
    b.body_inertia[body] = inertia * (1.0 - share * len(links))
    chain = [parent, *links, body]
    for k, ((jel, ja), kind) in enumerate(zip(joints, kinds, strict=True)):
        base = parent_base if k == 0 else hm.IDENTITY
        j = single_joint(imp, jel, ja, kind, chain[k], chain[k + 1], base, ja.get("name"), dofs[k])
        _register_joint(imp, jel, ja.get("name"), j, kind)
    if parent >= 0:
        imp.excludes.append((parent, body))


def joint_kind(imp, jel, ja) -> str:
    """The MJCF type of a ``<joint>`` or ``<freejoint>``: hinge, slide, ball or free."""
    if jel.tag == "freejoint":
        return "free"
    return imp.choice(jel, ja, "type", ("hinge", "slide", "ball", "free"), "hinge")


def joint_dof(imp, jel, ja, jtype) -> dict:
    """The checked attributes of one hinge, slide or ball ``<joint>``: its position ``pos`` and unit
    ``axis`` in the body frame (a ``<frame>`` around it folded in), limits ``lo``/``hi`` (None: none;
    radians on a hinge), the spring and damper with a joint actuator's gains folded in (``ke``,
    ``kd``, ``target_pos`` = springref while there is a spring), ``armature`` and ``ref`` (the
    coordinate at the body's pose in the file, ``joint_frames``)."""
    frame = ja.pop("_frame", hm.IDENTITY)
    name = ja.get("name")
    friction = imp.real(jel, ja, "frictionloss", lo=0.0)
    if friction > 0.0 and "frictionloss" not in imp.disabled:  # with the flag off, MuJoCo ignores it too
        imp.frictionloss_of[id(jel)] = friction
    if imp.real(jel, ja, "margin") != 0.0:
        imp.unsupported(jel, "joint margin")
    if imp.flag(jel, ja, "actuatorfrclimited", "auto") == "true" or (
        "actuatorfrcrange" in ja and imp.flag(jel, ja, "actuatorfrclimited", "auto") == "auto" and imp.autolimits
    ):
        imp.fail(jel, "actuatorfrcrange (a bound on actuator forces) is not supported")
    springdamper = None
    if ja.get("springdamper") is not None:
        tc, dr = imp.floats(jel, ja, "springdamper", 2)
        if tc > 0.0 and dr > 0.0:
            springdamper = (tc, dr)
            imp.springdamper_of[id(jel)] = springdamper
    if ja.get("actuatorgravcomp", "false") != "false":
        imp.fail(jel, "actuatorgravcomp is not supported")
    jpos = imp.floats(jel, ja, "pos", 3, default=(0.0, 0.0, 0.0))
    dof = {"pos": tuple(hm.transform_point(frame, jpos))}
    if jtype == "ball":
        if springdamper is not None:
            imp.fail(jel, "springdamper is not supported on ball joints")
        if imp.limited_range(jel, ja, "limited", "range") is not None:
            imp.fail(jel, "ball joint limits (a cone) are not supported")
        for k in ("damping", "stiffness", "armature", "ref"):
            imp.zero(jel, ja, k, why="is not supported on ball joints")
        if name in imp.joint_drive:
            imp.fail(jel, "actuators on ball joints are not supported")
        return dof
    axis = imp.floats(jel, ja, "axis", 3, default=(0.0, 0.0, 1.0))
    if math.hypot(*axis) < 1e-12:
        imp.fail(jel, "axis must be nonzero")
    axis = np.asarray(hm.quat_rotate(frame[3:], axis), dtype=np.float64)
    dof["axis"] = tuple(float(c) for c in axis / np.linalg.norm(axis))
    scale = imp.angle_scale if jtype == "hinge" else 1.0
    lo = hi = None
    rng = imp.limited_range(jel, ja, "limited", "range")
    if rng is not None and "limit" not in imp.disabled:
        lo, hi = rng[0] * scale, rng[1] * scale
    stiffness = imp.real(jel, ja, "stiffness", lo=0.0)
    damping = imp.real(jel, ja, "damping", lo=0.0)
    if springdamper is not None:
        # MuJoCo replaces both by the spring and damper of the given time constant and damping ratio
        # (``spring_dampers`` adds them once every body is in place).
        stiffness = damping = 0.0
    armature = imp.real(jel, ja, "armature", lo=0.0)
    springref = imp.real(jel, ja, "springref") * scale
    dof["ref"] = imp.real(jel, ja, "ref") * scale
    ke, kd = stiffness, damping
    drive = imp.joint_drive.get(name) if name is not None else None
    if drive is not None:
        if drive.get("ke", 0.0) > 0.0 and stiffness > 0.0:
            imp.fail(jel, f"joint stiffness and the position actuator {_q(drive['name'])} both set its stiffness")
        if drive.get("velocity_servo") and damping > 0.0:
            imp.fail(jel, f"joint damping and the velocity actuator {_q(drive['name'])} both set its damping")
        ke += drive.get("ke", 0.0)
        kd += drive.get("kd", 0.0)
    sprung = stiffness > 0.0 or springdamper is not None
    dof.update(lo=lo, hi=hi, ke=ke, kd=kd, target_pos=springref if sprung else 0.0, armature=armature)
    return dof


def multi_joint(imp, entry, body, parent, parent_base):
    """Several ``<joint>`` elements in one body, composed as MuJoCo composes them (each joint's
    transformation applied in document order), as one D6 joint (``add_joint_d6``) with a coordinate
    per MJCF joint, in document order, so the D6's coordinates are MuJoCo's qpos.

    Representable, and so accepted: slide joints with mutually orthogonal axes, followed by up to
    three hinges with mutually orthogonal axes whose axis lines meet in one point (``common_point``,
    the anchor; hinges at one position meet there). Translations along fixed axes
    commute and do not depend on a slide's ``pos``, and the D6 turns about its anchor after
    translating, which is the hinges' ``pos``, by successive rotations about the hinge axes in file
    order: exactly MuJoCo's transformation (two hinges are a universal joint). Each joint keeps its
    own range, spring, damper and actuator gains. Anything else one D6 cannot hold (``d6_obstacle``)
    becomes a chain of joints (``joint_chain``); a free joint with others raises ValueError."""
    b = imp.scratch
    el = entry["el"]
    kinds = [joint_kind(imp, jel, ja) for jel, ja in entry["joints"]]
    if "free" in kinds:
        imp.fail(el, f"has {len(kinds)} joints: a free joint cannot be combined with other joints in one body")
    # Each joint's attributes are read once, whichever composition follows.
    dofs = [joint_dof(imp, jel, ja, k) for (jel, ja), k in zip(entry["joints"], kinds, strict=True)]
    why = d6_obstacle(imp, entry, kinds, dofs)
    if why is not None:
        joint_chain(imp, entry, body, parent, parent_base, why, kinds, dofs)
        return
    hinges = kinds.count("hinge")
    turns = dofs[len(dofs) - hinges :]
    anchor = common_point(turns)
    slides = [d for d, k in zip(dofs, kinds, strict=True) if k == "slide"]
    if not hinges:
        anchor = (0.0, 0.0, 0.0)
    parent_xform, child_xform = joint_frames(parent_base, anchor, list(zip(dofs, kinds, strict=True)))

    def config(d):
        inf = float("inf")
        return JointDofConfig(
            axis=d["axis"],
            limit_lower=-inf if d["lo"] is None else d["lo"],
            limit_upper=inf if d["hi"] is None else d["hi"],
            target_pos=d["target_pos"],
            target_vel=0.0,
            target_ke=d["ke"],
            target_kd=d["kd"],
            armature=d["armature"],
        )

    lin = [config(d) for d in slides]
    ang = [config(d) for d, k in zip(dofs, kinds, strict=True) if k == "hinge"]
    j = imp._add(
        el,
        b.add_joint_d6,
        parent,
        body,
        linear_axes=lin,
        angular_axes=ang,
        parent_xform=parent_xform,
        child_xform=child_xform,
        label=entry["name"],
    )
    for k, ((jel, ja), kind) in enumerate(zip(entry["joints"], kinds, strict=True)):
        _register_joint(imp, jel, ja.get("name"), j, kind, dof=k)


def d6_obstacle(imp, entry, kinds, dofs) -> str | None:
    """Why the joints of a body (their kinds and ``joint_dof`` attributes) cannot be one D6 joint
    (``multi_joint``), or None when they can."""
    if "ball" in kinds:
        return "a ball joint among several"
    hinges = kinds.count("hinge")
    if hinges and kinds[-hinges:] != ["hinge"] * hinges:
        return "a hinge before a slide (MuJoCo then slides along turned axes)"
    turns = dofs[len(dofs) - hinges :]
    if common_point(turns) is None:
        return "the hinges' axis lines do not meet in one point"
    for i, d in enumerate(turns):
        for prev in turns[:i]:
            if abs(float(np.dot(d["axis"], prev["axis"]))) > 1.0e-6:
                return f"hinge axes {prev['axis']} and {d['axis']} are not orthogonal"
        if d["ref"] != 0.0 and i < len(turns) - 1:
            return "ref on a hinge other than the body's last"
    if len(turns) == 3:
        names = [ja.get("name") for (_jel, ja), k in zip(entry["joints"], kinds, strict=True) if k == "hinge"]
        hinge_els = [jel for (jel, _ja), k in zip(entry["joints"], kinds, strict=True) if k == "hinge"]
        if (
            any(d["lo"] is not None or d["ke"] > 0.0 or d["kd"] > 0.0 or d["armature"] > 0.0 for d in turns)
            or any(n in imp.joint_drive or f"{n}/transmission" in imp.implicit_tendons for n in names if n is not None)
            or any(id(jel) in imp.frictionloss_of or id(jel) in imp.springdamper_of for jel in hinge_els)
        ):
            return "limits, springs, dampers, armature, friction or actuators on three hinges"
    slides = [d for d, k in zip(dofs, kinds, strict=True) if k == "slide"]
    for i, d in enumerate(slides):
        for prev in slides[:i]:
            if abs(float(np.dot(d["axis"], prev["axis"]))) > 1.0e-6:
                return f"slide axes {prev['axis']} and {d['axis']} are not orthogonal"
    return None


def common_point(hinges) -> tuple | None:
    """A point on every hinge's axis line (the line through its ``pos`` along its ``axis``), or None
    when the lines do not meet (within 1e-9 m). A turn about a line is the same turn about any point
    of it, so hinges whose lines meet at c turn the body about c, and c is their joint's anchor: two
    hinges at different positions along one another's axis (dm_control's fish fins) are one
    universal joint. One hinge: its own ``pos``."""
    if len(hinges) == 1:
        return tuple(hinges[0]["pos"])
    # Least squares over the lines: sum_k (1 - a_k a_k^T) (c - p_k) = 0.
    lhs = np.zeros((3, 3))
    rhs = np.zeros(3)
    for d in hinges:
        a = np.asarray(d["axis"], dtype=np.float64)
        proj = np.eye(3) - np.outer(a, a)
        lhs += proj
        rhs += proj @ np.asarray(d["pos"], dtype=np.float64)
    c = np.linalg.lstsq(lhs, rhs, rcond=None)[0]
    for d in hinges:
        a = np.asarray(d["axis"], dtype=np.float64)
        off = c - np.asarray(d["pos"], dtype=np.float64)
        if np.linalg.norm(off - a * float(off @ a)) > 1.0e-9:
            return None
    return tuple(float(x) for x in c)


def joint_frames(parent_base, anchor, dofs) -> tuple[tuple, tuple]:
    """(parent_xform, child_xform) of a joint at ``anchor`` (body frame) whose coordinates are MuJoCo's
    qpos: ``dofs`` are the (dof, kind) of its slides, then its hinges (``joint_dof``; only the last
    hinge may have a ``ref``).

    MuJoCo's ``ref`` is the coordinate at which the body sits at its pose in the file. With slides
    translating by ``sum (q_i - ref_i) a_i`` and then the hinge turning by ``q_h - ref_h`` about the
    anchor, the body is at ``base T(anchor) T(-sum ref_i a_i) T(sum q_i a_i) R(a_h, q_h) R(a_h, -ref_h)
    T(-anchor)``: the parent frame is ``base T(anchor) T(-sum ref_i a_i)`` (translations commute) and
    the child frame ``T(anchor) R(a_h, ref_h)`` (the axis is unchanged by a turn about itself). With
    every ``ref`` 0 both are the anchor, as before."""
    shift = np.zeros(3)
    turn = _IDENTITY_Q
    for d, kind in dofs:
        if kind == "slide":
            shift -= d["ref"] * np.asarray(d["axis"])
        elif d["ref"] != 0.0:
            turn = tuple(hm.quat_from_axis_angle(d["axis"], d["ref"]))
    child_xform = (*anchor, *turn)
    parent_xform = hm.transform_mul(parent_base, (*(np.asarray(anchor) + shift).tolist(), *_IDENTITY_Q))
    return parent_xform, child_xform


def spring_dampers(imp):
    """Joints with ``springdamper="timeconst dampratio"`` (both > 0): MuJoCo's compiler sets their
    stiffness k and damping b so that the joint is a mass-spring-damper of that time constant and
    damping ratio with the joint's effective inertia at the reference pose,

        I = 1 / (M^-1)_ii,   k = I / (timeconst^2 dampratio^2),   b = 2 I / timeconst,

    where M is the joint-space mass matrix at qpos0 (armature on its diagonal): the inertia the joint
    feels with every other joint free (measured against MuJoCo 4.0's ``jnt_stiffness`` and
    ``dof_damping`` on dm_control's dog, where it equals ``1 / dof_invweight0``).

    M = sum over bodies of m J_v^T J_v + J_w^T I J_w, with the Jacobian columns of the joints above
    each body: an angular axis a through anchor p gives (w, v) = (a, a x (c - p)) at the body's centre
    of mass c, a linear axis a gives (0, a). A virtual link of a joint chain (``joint_chain``) lends
    its mass back to its body here, so M is MuJoCo's. (M^-1)_ii does not depend on how the other
    joints are parameterised, so free and ball joints use any basis."""
    if not imp.springdampers:
        return
    b = imp.scratch
    nj = b.joint_count
    start = np.zeros(nj + 1, dtype=np.int64)
    for j in range(nj):
        start[j + 1] = start[j] + b._joint_dof_count(j)
    nv = int(start[-1])
    owner = {link: body for link, body in imp.virtual_links.items()}
    mass = np.asarray(b.body_mass, dtype=np.float64).copy()
    inertia = np.asarray(b.body_inertia, dtype=np.float64).reshape(-1, 3, 3).copy()
    for link, body in owner.items():
        mass[body] += mass[link]
        inertia[body] += inertia[link]
        mass[link] = 0.0
        inertia[link] = 0.0
    joint_of = {b.joint_child[j]: j for j in range(nj)}
    # Jacobian columns per joint: (dof, angular?, world axis, anchor).
    columns = {}
    for j in range(nj):
        child = b.joint_child[j]
        frame = hm.transform_mul(tuple(float(x) for x in b.body_q[child]), tuple(float(x) for x in b.joint_X_c[j]))
        n_lin, n_ang = b.joint_dof_dim[j]
        cols = []
        for k in range(n_lin + n_ang):
            d = int(start[j]) + k
            axis = np.asarray(hm.quat_rotate(frame[3:], b.joint_axis[d]), dtype=np.float64)
            cols.append((d, k >= n_lin, axis, np.asarray(frame[:3], dtype=np.float64)))
        columns[j] = cols
    m_mat = np.zeros((nv, nv))
    for body in range(b.body_count):
        if mass[body] <= 0.0:
            continue
        pose = tuple(float(x) for x in b.body_q[body])
        c = np.asarray(hm.transform_point(pose, b.body_com[body]), dtype=np.float64)
        r = quat_to_matrix(pose[3:])
        inertia_w = r @ inertia[body] @ r.T
        jv = np.zeros((3, nv))
        jw = np.zeros((3, nv))
        node = body
        while node in joint_of:
            j = joint_of[node]
            for d, angular, axis, anchor in columns[j]:
                if angular:
                    jw[:, d] = axis
                    jv[:, d] = np.cross(axis, c - anchor)
                else:
                    jv[:, d] = axis
            node = b.joint_parent[j]
            if node < 0:
                break
        m_mat += mass[body] * jv.T @ jv + jw.T @ inertia_w @ jw
    m_mat += np.diag(np.asarray(b.joint_armature, dtype=np.float64)[:nv])
    try:
        m_inv = np.linalg.inv(m_mat)
    except np.linalg.LinAlgError:
        imp.fail(imp.springdampers[0][0], "springdamper: the joint-space mass matrix at the reference pose is singular")
    for el, j, k, tc, dr in imp.springdampers:
        d = int(start[j]) + k
        eff = 1.0 / m_inv[d, d]
        if not (np.isfinite(eff) and eff > 0.0):
            imp.fail(el, "springdamper: the joint's effective inertia at the reference pose is not positive")
        b.joint_target_ke[d] += eff / (tc * tc * dr * dr)
        b.joint_target_kd[d] += 2.0 * eff / tc


def check_moving_body(imp, el, body):
    """MuJoCo 4.0 rejects a moving body whose mass or any principal inertia is below mjMINVAL
    (``MJ_MINVAL``); a zero inertia would freeze its rotation here (a zero inverse inertia).
    MuJoCo waives the rule when a jointless child with mass and inertia is welded to the body
    (it merges the two); here every body keeps its own inertia, so that waiver does not apply."""
    b = imp.scratch
    mass = b.body_mass[body]
    if mass <= 0.0:
        imp.fail(el, "a body with a joint needs mass (an <inertial> or geoms with density or mass)")
    principal = np.linalg.eigvalsh(np.asarray(b.body_inertia[body], dtype=np.float64))
    if mass < MJ_MINVAL or principal.min() < MJ_MINVAL:
        imp.fail(
            el,
            f"a body with a joint needs mass and principal inertias of at least {MJ_MINVAL:g} (MuJoCo's "
            f"mjMINVAL), got mass {mass:.6g} and inertias {', '.join(f'{v:.6g}' for v in principal)}; "
            "a zero inertia would make it unable to rotate",
        )


def _register_joint(imp, el, name, j, jtype, dof=0):
    """Record a named joint's index, MJCF type and coordinate within that joint (``dof``: nonzero
    for the later MJCF joints of a body composed into one D6 joint); fixed tendons and actuators
    name joints. A joint with a ``springdamper`` is queued for ``spring_dampers``."""
    if id(el) in imp.springdamper_of:
        imp.springdampers.append((el, j, dof, *imp.springdamper_of[id(el)]))
    if id(el) in imp.frictionloss_of:
        # Dry friction on the coordinate: a one-joint fixed tendon's friction loss (the same
        # generalized force bound as MuJoCo's joint frictionloss).
        implicit_tendon(imp, el, name, (j, dof, jtype))["friction_loss"] = imp.frictionloss_of[id(el)]
    if name is not None:
        if name in imp.joint_index:
            imp.fail(el, "duplicate joint name")
        imp.joint_index[name] = j
        imp.joint_type[name] = jtype
        imp.joint_dof[name] = dof
