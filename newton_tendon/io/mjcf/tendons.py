"""``<tendon>``: ``<fixed>`` (joint terms) and ``<spatial>`` (sites, wrap geoms and pulleys) as
transmission tendons, their properties, and ``<equality><tendon>`` couplings."""

from __future__ import annotations

from newton_tendon import _hostmath as hm
from newton_tendon.transmission import TendonPulley, TendonSite, TendonWrap

from .document import _q


def tendon(imp, el):
    """A child of ``<tendon>``: its properties (the gains of a tendon actuator folded in), then the
    ``<fixed>`` or ``<spatial>`` tendon itself."""
    if el.tag not in ("spatial", "fixed"):
        imp.fail(el, "unsupported element in <tendon> (expected <spatial> or <fixed>)")
    a = imp.attrs(el)
    name = a.get("name")
    if name is not None and name in imp.tendon_index:
        imp.fail(el, "duplicate tendon name")
    props = tendon_properties(imp, el, a)
    drive = imp.tendon_drive.get(name) if name is not None else None
    if drive is not None:
        props.update(drive["props"])
    if el.tag == "fixed":
        t = fixed_tendon(imp, el, name, props)
    else:
        t = spatial_tendon(imp, el, name, props)
    if name is not None:
        imp.tendon_index[name] = t


def fixed_tendon(imp, el, name, props) -> int:
    """A ``<fixed>`` tendon: a weighted sum of hinge and slide joint coordinates."""
    b = imp.scratch
    joints, coefs, axes = [], [], []
    for c in el.children:
        if c.tag != "joint":
            imp.fail(c, "a fixed tendon holds only <joint> elements")
        for k in c.attrib:
            if k not in ("joint", "coef"):
                imp.fail(c, f"unsupported attribute {_q(k)}")
        jn = c.attrib.get("joint")
        joints.append(imp.named(c, c.attrib, imp.joint_index, "joint", "joint"))
        if imp.joint_type[jn] not in ("hinge", "slide"):
            imp.fail(c, f"joint {_q(jn)} is a {imp.joint_type[jn]} joint; fixed tendons need hinge or slide")
        coefs.append(imp.real(c, c.attrib, "coef", 0.0))
        axes.append(imp.joint_dof.get(jn, 0))
    if not joints:
        imp.fail(el, "a fixed tendon needs at least one <joint>")
    return imp._add(el, b.add_fixed_tendon, joints, coefs, axes=axes, label=name, **props)


def spatial_tendon(imp, el, name, props) -> int:
    """A ``<spatial>`` tendon: a path of sites, wrap geoms (spheres and cylinders, with an optional
    side site) and pulleys (branch divisors)."""
    b = imp.scratch
    path = []
    for c in el.children:
        if c.tag == "site":
            for k in c.attrib:
                if k != "site":
                    imp.fail(c, f"unsupported attribute {_q(k)}")
            body, pose = imp.named(c, c.attrib, imp.site_pose, "site", "site")
            path.append(TendonSite(body=body, offset=tuple(pose[:3])))
        elif c.tag == "geom":
            for k in c.attrib:
                if k not in ("geom", "sidesite"):
                    imp.fail(c, f"unsupported attribute {_q(k)}")
            imp.named(c, c.attrib, imp.geom_index, "geom", "geom")
            gel, gtype, body, pose, size = imp.geom_el[c.attrib["geom"]]
            if gtype not in ("sphere", "cylinder"):
                imp.fail(c, f"geom {_q(c.attrib['geom'])} is a {gtype}; tendons wrap spheres and cylinders only")
            side = None
            if "sidesite" in c.attrib:
                sb, sp = imp.named(c, c.attrib, imp.site_pose, "sidesite", "site")
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
                    imp.fail(c, f"unsupported attribute {_q(k)}")
            div = imp.floats(c, c.attrib, "divisor", 1)
            if div is None:
                imp.fail(c, "attribute divisor is required")
            path.append(TendonPulley(divisor=div[0]))
        else:
            imp.fail(c, "a spatial tendon holds only <site>, <geom> and <pulley> elements")
    return imp._add(el, b.add_spatial_tendon, path, label=name, **props)


def tendon_properties(imp, el, a) -> dict:
    """The transmission properties a tendon's attributes set: limits, limit margin, spring length
    range, stiffness, damping, friction loss, armature and width."""
    p: dict = {}
    if imp.flag(el, a, "actuatorfrclimited", "auto") == "true" or (
        "actuatorfrcrange" in a and imp.flag(el, a, "actuatorfrclimited", "auto") == "auto" and imp.autolimits
    ):
        imp.fail(el, "actuatorfrcrange is not supported; put forcerange on the actuator instead")
    rng = imp.limited_range(el, a, "limited", "range")
    if rng is not None and "limit" not in imp.disabled:
        p["lower_limit"], p["upper_limit"] = rng
    p["limit_margin"] = imp.real(el, a, "margin", lo=0.0)
    sl = imp.floats(el, a, "springlength", (1, 2))
    if sl is not None and not (len(sl) == 1 and sl[0] == -1.0) and sl != (-1.0, -1.0):
        p["spring_lower"], p["spring_upper"] = (sl[0], sl[0]) if len(sl) == 1 else sl
    p["stiffness"] = imp.real(el, a, "stiffness", lo=0.0)
    p["damping"] = imp.real(el, a, "damping", lo=0.0)
    p["friction_loss"] = imp.real(el, a, "frictionloss", lo=0.0)
    if "frictionloss" in imp.disabled:
        p["friction_loss"] = 0.0
    p["armature"] = imp.real(el, a, "armature", lo=0.0)
    if "width" in a:
        p["width"] = imp.real(el, a, "width", lo=0.0)
    return p


def equality(imp, el):
    """``<equality><tendon>``: a polynomial coupling (``polycoef``) of one tendon or of two."""
    if el.tag != "tendon":
        imp.fail(el, "unsupported equality constraint (only <tendon> is supported)")
    a = imp.attrs(el, kind="equality")
    t1 = imp.named(el, a, imp.tendon_index, "tendon1", "tendon")
    t2 = imp.named(el, a, imp.tendon_index, "tendon2", "tendon") if "tendon2" in a else None
    poly = imp.floats(el, a, "polycoef", (1, 2, 3, 4, 5), default=(0.0, 1.0, 0.0, 0.0, 0.0))
    active = imp.choice(el, a, "active", ("true", "false"), "true") == "true"
    if "equality" in imp.disabled:
        active = False  # <flag equality="disable"/> (or constraint): MuJoCo does not enforce it
    name = a.get("name")
    c = imp._add(el, imp.scratch.add_tendon_coupling, t1, t2, list(poly), enabled=active, label=name)
    imp.info.couplings[name if name is not None else imp.scratch.coupling_label[c]] = c
