"""The kinematic tree: ``<body>`` and ``<frame>`` elements collected in document order, then
emitted as builder bodies (with ``<inertial>``) and their ``<joint>``/``<freejoint>``, one
articulation per tree under ``<worldbody>``."""

from __future__ import annotations

import math

import numpy as np

from newton_tendon import _hostmath as hm
from newton_tendon.builder.joints import JointDofConfig
from newton_tendon.inertia import check_inertia_triangle, quat_to_matrix

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
    imp._add(iel, check_inertia_triangle, f"attribute {key}={_q(ia[key])}", local_i, MJ_TRIANGLE_RTOL)
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
    dof = joint_dof(imp, jel, ja, jtype)
    parent_xform, child_xform = joint_frames(parent_base, dof["pos"], [(dof, jtype)] if jtype != "ball" else [])
    if jtype == "ball":
        j = imp._add(jel, b.add_joint_ball, parent, body, parent_xform, child_xform, label=label)
        _register_joint(imp, jel, name, j, jtype)
        return
    add = b.add_joint_revolute if jtype == "hinge" else b.add_joint_prismatic
    j = imp._add(
        jel,
        add,
        parent,
        body,
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
    _register_joint(imp, jel, name, j, jtype)


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
    if "frictionloss" not in imp.disabled:  # with the flag off, MuJoCo ignores it too
        imp.zero(jel, ja, "frictionloss", why="is not supported on joints")
    if imp.real(jel, ja, "margin") != 0.0:
        imp.unsupported(jel, "joint margin")
    if imp.flag(jel, ja, "actuatorfrclimited", "auto") == "true" or (
        "actuatorfrcrange" in ja and imp.flag(jel, ja, "actuatorfrclimited", "auto") == "auto" and imp.autolimits
    ):
        imp.fail(jel, "actuatorfrcrange (a bound on actuator forces) is not supported")
    if ja.get("springdamper") is not None:
        imp.zero(jel, ja, "springdamper", why="is not supported")
    if ja.get("actuatorgravcomp", "false") != "false":
        imp.fail(jel, "actuatorgravcomp is not supported")
    jpos = imp.floats(jel, ja, "pos", 3, default=(0.0, 0.0, 0.0))
    dof = {"pos": tuple(hm.transform_point(frame, jpos))}
    if jtype == "ball":
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
    dof.update(lo=lo, hi=hi, ke=ke, kd=kd, target_pos=springref if stiffness > 0.0 else 0.0, armature=armature)
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
    own range, spring, damper and actuator gains. Everything else raises ValueError naming the body:
    ball or free joints among several, a hinge before a slide (MuJoCo then translates along turned
    axes), slides or hinges that are not orthogonal, hinge axis lines that do not meet, limits,
    springs or actuators on three hinges (``add_joint_d6``)."""
    b = imp.scratch
    el = entry["el"]
    kinds = [joint_kind(imp, jel, ja) for jel, ja in entry["joints"]]
    where = f"has {len(kinds)} joints ({', '.join(kinds)})"
    if any(k in ("ball", "free") for k in kinds):
        imp.fail(el, f"{where}: a ball or free joint cannot be combined with other joints in one body")
    hinges = kinds.count("hinge")
    if hinges and kinds[-hinges:] != ["hinge"] * hinges:
        imp.fail(el, f"{where}: a hinge before a slide is not supported (MuJoCo then slides along turned axes)")
    dofs = [joint_dof(imp, jel, ja, k) for (jel, ja), k in zip(entry["joints"], kinds, strict=True)]
    turns = dofs[len(dofs) - hinges :]
    anchor = common_point(turns)
    if anchor is None:
        imp.fail(
            el,
            f"{where}: the hinges' axis lines do not meet in one point, so they cannot be one joint here; "
            "split the body into a chain of bodies",
        )
    for i, d in enumerate(turns):
        for prev in turns[:i]:
            if abs(float(np.dot(d["axis"], prev["axis"]))) > 1.0e-6:
                imp.fail(el, f"{where}: hinge axes {prev['axis']} and {d['axis']} are not orthogonal")
        if d["ref"] != 0.0 and i < len(turns) - 1:
            imp.fail(el, f"{where}: ref on a hinge other than the body's last is not supported")
    slides = [d for d, k in zip(dofs, kinds, strict=True) if k == "slide"]
    for i, d in enumerate(slides):
        for prev in slides[:i]:
            if abs(float(np.dot(d["axis"], prev["axis"]))) > 1.0e-6:
                imp.fail(el, f"{where}: slide axes {prev['axis']} and {d['axis']} are not orthogonal")
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
    name joints."""
    if name is not None:
        if name in imp.joint_index:
            imp.fail(el, "duplicate joint name")
        imp.joint_index[name] = j
        imp.joint_type[name] = jtype
        imp.joint_dof[name] = dof
