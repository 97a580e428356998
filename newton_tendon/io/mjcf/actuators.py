"""``<actuator>``: motor, position, velocity and general actuators on a tendon or a joint. They are
read before the tree so their gains fold into the joint drives and tendon properties; their control
mappings are resolved once the tendons exist."""

from __future__ import annotations

import math

from .attributes import _ACTUATOR_TAGS
from .document import _q, logger
from .results import MjcfActuator


def actuator(imp, el):
    """An ``<actuator>`` child (motor, position, velocity or general) on a joint or a tendon, as the gain
    and bias of f = gain * ctrl + b0 + b1 * L + b2 * Ldot. Read before the tree, so its gains fold
    into the joint drive or the tendon's properties; ``finish_actuators`` makes its control mapping."""
    if el.tag not in _ACTUATOR_TAGS:
        imp.fail(el, "unsupported actuator type (motor, position, velocity and general are supported)")
    a = imp.attrs(el)
    name = a.get("name")
    targets = [k for k in ("joint", "tendon", "site", "body", "jointinparent", "cranksite") if k in a]
    if len(targets) != 1 or targets[0] not in ("joint", "tendon"):
        imp.fail(el, "an actuator needs exactly one joint= or tendon= target (site, body and crank are not supported)")
    target = targets[0]
    gear = imp.floats(el, a, "gear", (1, 2, 3, 4, 5, 6), default=(1.0,))
    if any(g != 0.0 for g in gear[1:]):
        imp.fail(el, "only the first gear component is supported for joint and tendon targets")
    gear = gear[0]
    if gear == 0.0:
        imp.fail(el, "gear must be nonzero")
    # Their no-op values (MuJoCo's defaults) import; anything else changes the actuator.
    no_op = {"actlimited": ("false",), "actearly": ("false",), "dampratio": ("0",), "inheritrange": ("0",)}
    for k in ("actlimited", "actrange", "actdim", "actearly", "dampratio", "inheritrange"):
        if k in a and a[k].strip() not in no_op.get(k, ()):
            imp.fail(el, f"attribute {k} is not supported")
    if "lengthrange" in a:
        logger.debug("%s: ignoring lengthrange", imp.doc.where(el))
    ctrl = imp.limited_range(el, a, "ctrllimited", "ctrlrange")
    force = imp.limited_range(el, a, "forcelimited", "forcerange")
    # Gain, bias and activation of f = gain * ctrl + b0 + b1 * L + b2 * Ldot, L = gear * length.
    tau = 0.0
    if el.tag == "motor":
        g0, b0, b1, b2 = 1.0, 0.0, 0.0, 0.0
    elif el.tag == "position":
        kp = imp.real(el, a, "kp", 1.0, lo=0.0)
        kv = imp.real(el, a, "kv", 0.0, lo=0.0)
        if imp.real(el, a, "timeconst", 0.0, lo=0.0) > 0.0:
            imp.fail(el, "timeconst (an activation filter on the position target) is not supported")
        g0, b0, b1, b2 = kp, 0.0, -kp, -kv
    elif el.tag == "velocity":
        kv = imp.real(el, a, "kv", 1.0, lo=0.0)
        g0, b0, b1, b2 = kv, 0.0, 0.0, -kv
    else:
        dyn = imp.choice(el, a, "dyntype", ("none", "filterexact", "filter", "integrator", "muscle", "user"), "none")
        gtype = imp.choice(el, a, "gaintype", ("fixed", "affine", "muscle", "user"), "fixed")
        btype = imp.choice(el, a, "biastype", ("none", "affine", "muscle", "user"), "none")
        if dyn not in ("none", "filterexact", "filter") or gtype != "fixed" or btype not in ("none", "affine"):
            imp.fail(
                el,
                "only gaintype='fixed', biastype='none'/'affine' and dyntype='none'/'filter'/'filterexact' are "
                "supported",
            )
        gain = imp.floats(el, a, "gainprm", None, default=(1.0,))
        bias = (imp.floats(el, a, "biasprm", None, default=()) + (0.0,) * 3)[:3] if btype == "affine" else (0.0,) * 3
        if any(v != 0.0 for v in gain[1:]):
            imp.fail(el, "only gainprm[0] is supported")
        g0, (b0, b1, b2) = gain[0], bias
        if dyn == "filter":
            # MuJoCo integrates this filter with the step's Euler update; the tendon's activation is
            # the exact first-order filter ('filterexact'): the same time constant, O(dt/tau) apart.
            imp.unsupported(el, "Euler actuator filter")
        if dyn in ("filter", "filterexact"):
            dynprm = imp.floats(el, a, "dynprm", None, default=(1.0,))
            tau = dynprm[0]
            if tau < 0.0:
                imp.fail(el, "dynprm[0] (the filter time constant) must be >= 0")
            if b0 != 0.0:
                imp.fail(el, "a filtered actuator with a constant bias biasprm[0] is not supported")
        if b1 > 0.0 or b2 > 0.0:
            imp.fail(el, "biasprm[1] and biasprm[2] must be <= 0 (a stabilizing servo)")
    imp.pending_actuators.append(
        (
            el,
            name,
            target,
            a[target],
            dict(kind=el.tag, gear=gear, g0=g0, b0=b0, b1=b1, b2=b2, tau=tau, ctrl=ctrl, force=force),
        )
    )
    servo = (b1 == 0.0 and b2 == 0.0) or b1 == -g0 or (b1 == 0.0 and b2 == -g0)
    if target == "joint" and (force is not None or tau != 0.0 or b0 != 0.0 or not servo):
        # A force bound, an activation filter, a constant bias or an affine bias that is not a
        # motor, position or velocity servo: drive the joint through a one-joint fixed tendon
        # (length = the coordinate, coefficient 1), whose actuator has all of them. MuJoCo's joint
        # transmission is that tendon's: the actuator length is gear * q either way, and the force
        # gear * F reaches the joint through the coefficient 1.
        key = implicit_tendon(imp, el, a["joint"])["key"]
        imp.pending_actuators[-1] = (el, name, "tendon", key, imp.pending_actuators[-1][4])
        tendon_actuator(imp, el, name, key, gear, g0, b0, b1, b2, tau, ctrl, force)
    elif target == "tendon":
        tendon_actuator(imp, el, name, a["tendon"], gear, g0, b0, b1, b2, tau, ctrl, force)
    else:
        joint_actuator(imp, el, name, a["joint"], gear, g0, b0, b1, b2, tau, force)


def implicit_tendon(imp, el, jname: str | None, ref: tuple | None = None) -> dict:
    """The entry of the one-joint fixed tendon that carries a joint's actuator or dry friction
    (created by ``make_implicit_tendons`` once the joints exist; labelled ``<joint>/transmission``).
    A joint is named by ``jname``, or, unnamed, by ``ref`` = (joint index, dof, MJCF type)."""
    key = f"{jname if jname is not None else f'joint_{ref[0]}_{ref[1]}'}/transmission"
    entry = imp.implicit_tendons.setdefault(key, {"key": key, "joint": jname, "el": el, "friction_loss": 0.0})
    if ref is not None:
        entry["ref"] = ref
    return entry


def make_implicit_tendons(imp):
    """Add the one-joint fixed tendons of ``implicit_tendon`` (coefficient 1 on the joint's
    coordinate): the friction loss of a joint's ``frictionloss`` and the drive of a joint actuator
    with a force range or a filter. Nothing else: no limit, spring or damper (the joint keeps
    those)."""
    b = imp.scratch
    for key, entry in imp.implicit_tendons.items():
        el, jname = entry["el"], entry["joint"]
        if key in imp.tendon_index:
            imp.fail(el, f"a tendon is already named {_q(key)}")
        if "ref" in entry:
            j, dof, jtype = entry["ref"]
        elif jname in imp.joint_index:
            j, dof, jtype = imp.joint_index[jname], imp.joint_dof.get(jname, 0), imp.joint_type[jname]
        else:
            imp.fail(el, f"unknown joint {_q(jname)}")
        if jtype not in ("hinge", "slide"):
            what = "an actuator" if key in imp.tendon_drive else "frictionloss"
            joint = f"joint {_q(jname)}" if jname is not None else "the joint"
            imp.fail(el, f"{joint} is a {jtype} joint; {what} needs a hinge or slide here")
        props = {"friction_loss": entry["friction_loss"]}
        drive = imp.tendon_drive.get(key)
        if drive is not None:
            props.update(drive["props"])
        t = imp._add(
            el,
            b.add_fixed_tendon,
            [j],
            [1.0],
            axes=[dof],
            label=key,
            **props,
        )
        imp.tendon_index[key] = t


def tendon_actuator(imp, el, name, tname, gear, g0, b0, b1, b2, tau, ctrl, force):
    """Fold a tendon actuator into its tendon's properties: position and velocity gains (times the
    gear squared), the filter time constant, and the force (and, for a motor, control) range as
    actuation bounds."""
    if tname in imp.tendon_drive:
        imp.fail(el, f"tendon {_q(tname)} already has the actuator {_q(imp.tendon_drive[tname]['name'])}")
    g2 = gear * gear
    props = {"position_gain": 0.0 - g2 * b1, "velocity_gain": 0.0 - g2 * b2, "activation_time": tau}
    lo, hi = -math.inf, math.inf
    if force is not None:
        lo, hi = sorted((gear * force[0], gear * force[1]))
    if el.tag == "motor" and ctrl is not None:
        clo, chi = sorted((gear * ctrl[0], gear * ctrl[1]))
        lo, hi = max(lo, clo), min(hi, chi)
        if lo > hi:
            imp.fail(el, "ctrlrange and forcerange do not overlap")
    props["actuation_lower"], props["actuation_upper"] = lo, hi
    if props["position_gain"] > 0.0:
        props["target_length"] = 0.0  # MuJoCo's bias acts on the length itself (ctrl starts at 0)
    if el.tag == "general":
        props["drive_force"] = gear * b0
    imp.tendon_drive[tname] = {"name": name, "props": props, "el": el}


def joint_actuator(imp, el, name, jname, gear, g0, b0, b1, b2, tau, force):
    """Classify a joint actuator as a motor, a position servo or a velocity servo and keep the gains
    it adds to the joint drive."""
    if jname in imp.joint_drive:
        imp.fail(el, f"joint {_q(jname)} already has the actuator {_q(imp.joint_drive[jname]['name'])}")
    g2 = gear * gear
    if b1 == 0.0 and b2 == 0.0:
        mode = "motor"
    elif b1 == -g0:
        mode = "position"
    elif b1 == 0.0 and b2 == -g0:
        mode = "velocity"
    else:
        imp.fail(el, "a joint actuator must be a motor, a position servo or a velocity servo")
    drive = {"name": name, "mode": mode}
    if mode == "position":
        drive.update(ke=g2 * g0, kd=0.0 - g2 * b2)
    elif mode == "velocity":
        drive.update(kd=g2 * g0, velocity_servo=True)
    imp.joint_drive[jname] = drive


def finish_actuators(imp):
    """Once joints and tendons exist: each actuator's ``MjcfActuator`` (the ``Control`` array, scale
    and offset its ctrl maps to)."""
    for k, (el, name, target, tname, p) in enumerate(imp.pending_actuators):
        label = name if name is not None else f"actuator_{k}"
        if label in imp.info.actuators:
            imp.fail(el, "duplicate actuator name")
        gear, ctrl = p["gear"], p["ctrl"]
        if target == "tendon":
            t = imp.named(el, {"tendon": tname}, imp.tendon_index, "tendon", "tendon")
            if p["kind"] == "position":
                spec = ("transmission_target_length", 1.0 / gear, 0.0)
            elif p["kind"] == "velocity":
                spec = ("transmission_target_velocity", 1.0 / gear, 0.0)
            else:
                spec = ("transmission_drive_force", gear * p["g0"], gear * p["b0"])
            index = t
        else:
            j = imp.named(el, {"joint": tname}, imp.joint_index, "joint", "joint")
            if imp.joint_type[tname] not in ("hinge", "slide"):
                imp.fail(el, f"joint {_q(tname)} is a {imp.joint_type[tname]} joint; actuators need hinge or slide")
            mode = imp.joint_drive[tname]["mode"]
            spec = {
                "motor": ("joint_f", gear * p["g0"], 0.0),
                "position": ("joint_target_pos", 1.0 / gear, 0.0),
                "velocity": ("joint_target_vel", 1.0 / gear, 0.0),
            }[mode]
            index = j  # joint index; converted to a dof index after the merge (plus the axis in a D6)
            imp.actuator_dof[label] = imp.joint_dof.get(tname, 0)
        imp.info.actuators[label] = MjcfActuator(
            name=label,
            kind=p["kind"],
            target=target,
            index=index,
            control=spec[0],
            scale=spec[1],
            offset=spec[2],
            ctrlrange=ctrl,
        )
