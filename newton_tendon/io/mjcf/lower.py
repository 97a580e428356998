"""MuJoCo lowering of routed cables (``lower_tendons``, exported by ``newton_tendon.io.mjcf``).

``lower_tendons`` writes the MuJoCo-compatible subset of a finalized model's routed cables
(anchors and frictionless pinholes as sites, frictionless fixed rollers as cylinder wrap geoms with
a side site) as MJCF text, and rejects what has no faithful MuJoCo equivalent.
"""

from __future__ import annotations

import math

import numpy as np

from newton_tendon.inertia import quat_to_matrix

_PLANE_TOL = 1.0e-6
"""Relative distance [-] a roller's neighbour may lie off the roller plane (float32 poses)."""


def _fmt(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def _unique_names(labels: list[str], prefix: str) -> list[str]:
    if len(set(labels)) == len(labels) and all(labels):
        return [str(x) for x in labels]
    return [f"{prefix}{i}" for i in range(len(labels))]


def lower_tendons(model) -> str:
    """MJCF text of a MuJoCo model holding ``model``'s bodies and its routed cables.

    Bodies become top-level MuJoCo bodies at their initial pose: dynamic ones with a free joint
    (three slide joints if their inertia is zero, since such bodies never rotate here), kinematic
    ones as mocap bodies, static ones welded to the world. Joints, shapes and transmission tendons
    are not lowered. Each routed cable becomes one spatial tendon:

    * end anchors and frictionless pinholes -> sites on the guide's body;
    * a frictionless, non-dynamic roller whose neighbouring guides lie in its plane at the initial
      pose -> a cylinder wrap geom (``contype=0``, no mass) with a side site at twice the radius on
      the winding side, so MuJoCo wraps the side the roller's ``orientation`` selects;
    * the spans' material: with frictionless guides the tension is the same along the cable, so
      the spans act as springs in series: total compliance ``C = sum c_i`` and total material
      ``L`` (span rest lengths plus the initial wrapped arcs). ``C > 0`` gives ``stiffness = 1/C``
      with ``springlength = "0 L"`` (a pull-only spring); ``C = 0`` gives the hard bound
      ``range = "0 L"``.

    Raises:
        ValueError: naming the tendon and guide, for what has no faithful MuJoCo equivalent:
            capstan friction (``mu > 0``), dynamic rollers, winches, internal anchors (the route
            would have to be split), rollers at a route end or next to another roller (MuJoCo
            needs a site on both sides of a wrap), rollers with out-of-plane neighbours (MuJoCo
            wraps a helix, a roller projects), and nonzero span damping.
    """
    from newton_tendon.kernels import types as T

    def get(name):
        return getattr(model, name).numpy().astype(np.float64) if getattr(model, name) is not None else None

    nb = model.body_count
    body_q = get("body_q").reshape(nb, 7) if nb else np.zeros((0, 7))
    mass = get("body_mass") if nb else np.zeros(0)
    com = get("body_com").reshape(nb, 3) if nb else np.zeros((0, 3))
    inertia = get("body_inertia").reshape(nb, 3, 3) if nb else np.zeros((0, 3, 3))
    flags = model.body_flags.numpy() if nb else np.zeros(0, dtype=int)
    body_names = _unique_names(list(model.body_label), "body_")
    nt = model.tendon_count
    tendon_names = _unique_names(list(model.tendon_label), "tendon_")
    items: dict[int, list[str]] = {b: [] for b in range(-1, nb)}
    tendons_xml = []
    if nt:
        start = np.append(model.tendon_start.numpy(), model.tendon_guide_count)
        gtype = model.tendon_guide_type.numpy()
        gflags = model.tendon_guide_flags.numpy()
        gbody = model.tendon_guide_body.numpy()
        goffset = get("tendon_guide_offset").reshape(-1, 3)
        gaxis = get("tendon_guide_axis").reshape(-1, 3)
        gradius = get("tendon_guide_radius")
        gorient = model.tendon_guide_orientation.numpy()
        gmu = get("tendon_guide_mu")
        scomp = get("tendon_segment_compliance")
        sdamp = get("tendon_segment_damping")
        srest = get("tendon_segment_initial_rest_length")

    def world_point(b, p):
        if b < 0:
            return np.asarray(p)
        return body_q[b, :3] + quat_to_matrix(body_q[b, 3:]) @ np.asarray(p)

    def world_dir(b, v):
        return np.asarray(v) if b < 0 else quat_to_matrix(body_q[b, 3:]) @ np.asarray(v)

    def local_point(b, p):
        if b < 0:
            return np.asarray(p)
        return quat_to_matrix(body_q[b, 3:]).T @ (np.asarray(p) - body_q[b, :3])

    for t in range(nt):
        g0, g1 = int(start[t]), int(start[t + 1])
        n = g1 - g0
        s0 = g0 - t
        where = f"lower_tendons: tendon {t} ({model.tendon_label[t]!r})"
        for k in range(n):
            g = g0 + k
            gw = f"{where} guide {k}"
            kind = int(gtype[g])
            if gflags[g] & int(T.GUIDE_FLAG_DYNAMIC):
                raise ValueError(f"{gw}: dynamic rollers have no MuJoCo equivalent (different switching rules)")
            if gflags[g] & int(T.GUIDE_FLAG_WINCH):
                raise ValueError(f"{gw}: a winch pays out material; MuJoCo tendons have no material transport")
            if kind != int(T.GUIDE_ANCHOR) and gmu[g] > 0.0:
                raise ValueError(f"{gw}: capstan friction (mu={gmu[g]}) has no equivalent in MuJoCo tendons")
            if kind == int(T.GUIDE_ANCHOR) and 0 < k < n - 1:
                raise ValueError(
                    f"{gw}: an internal anchor stops material transfer; MuJoCo would need the route split into "
                    "separate tendons"
                )
            if kind == int(T.GUIDE_ROLLER):
                if k == 0 or k == n - 1:
                    raise ValueError(f"{gw}: a roller at a route end has no site on one side (MuJoCo needs both)")
                if gtype[g - 1] == int(T.GUIDE_ROLLER) or gtype[g + 1] == int(T.GUIDE_ROLLER):
                    raise ValueError(f"{gw}: successive rollers need an intervening site in MuJoCo")
        for k in range(n - 1):
            if sdamp[s0 + k] != 0.0:
                raise ValueError(
                    f"{where} guide {k + 1}: span damping ({sdamp[s0 + k]} N s/m) has no faithful MuJoCo "
                    "equivalent (MuJoCo damps the whole tendon, also while slack)"
                )
        elements = []
        material = float(np.sum(srest[s0 : s0 + n - 1]))
        for k in range(n):
            g = g0 + k
            b = int(gbody[g])
            if gtype[g] != int(T.GUIDE_ROLLER):
                sname = f"{tendon_names[t]}_site{k}"
                items[b].append(f'<site name="{sname}" pos="{_fmt(goffset[g])}"/>')
                elements.append(f'<site site="{sname}"/>')
                continue
            c = world_point(b, goffset[g])
            axis = world_dir(b, gaxis[g])
            axis = axis / np.linalg.norm(axis)
            r = float(gradius[g])
            o = int(gorient[g])
            p_in = world_point(int(gbody[g - 1]), goffset[g - 1])
            p_out = world_point(int(gbody[g + 1]), goffset[g + 1])
            for p in (p_in, p_out):
                off = abs(float((p - c) @ axis))
                if off > _PLANE_TOL * max(1.0, float(np.linalg.norm(p - c))):
                    raise ValueError(
                        f"{where} guide {k}: a neighbouring guide lies {off:.3g} m off the roller plane; MuJoCo "
                        "wraps a helix there while the roller projects the span, so the lengths differ"
                    )
            t_in = _tangent_point(c, axis, r, p_in, o)
            t_out = _tangent_point(c, axis, r, p_out, -o)
            a_in, a_out = t_in - c, t_out - c
            wrap = math.atan2(float(o * axis @ np.cross(a_in, a_out)), float(a_in @ a_out))
            if wrap < 0.0:
                wrap += 2.0 * math.pi
            material += r * wrap
            chord = p_out - p_in
            side = -o * np.cross(axis, chord)
            if np.linalg.norm(side) < 1e-12:
                raise ValueError(f"{where} guide {k}: the roller's neighbours coincide; the winding side is undefined")
            side = c + 2.0 * r * side / np.linalg.norm(side)
            gname = f"{tendon_names[t]}_roller{k}"
            sname = f"{tendon_names[t]}_side{k}"
            local_axis = gaxis[g] / np.linalg.norm(gaxis[g])
            items[b].append(
                f'<geom name="{gname}" type="cylinder" size="{r!r} {r!r}" pos="{_fmt(goffset[g])}" '
                f'zaxis="{_fmt(local_axis)}" contype="0" conaffinity="0" mass="0" group="3"/>'
            )
            items[b].append(f'<site name="{sname}" pos="{_fmt(local_point(b, side))}"/>')
            elements.append(f'<geom geom="{gname}" sidesite="{sname}"/>')
        compliance = float(np.sum(scomp[s0 : s0 + n - 1]))
        if compliance > 0.0:
            law = f'stiffness="{1.0 / compliance!r}" springlength="0 {material!r}"'
        else:
            law = f'limited="true" range="0 {material!r}"'
        tendons_xml.append(f'    <spatial name="{tendon_names[t]}" {law}>{"".join(elements)}</spatial>')

    g = model.gravity.numpy()[0] if model.gravity is not None and len(model.gravity) else (0.0, 0.0, -9.81)
    lines = [
        '<mujoco model="newton_tendon">',
        '  <compiler angle="radian" autolimits="true"/>',
        f'  <option gravity="{_fmt(g)}"/>',
        "  <worldbody>",
    ]
    lines += [f"    {x}" for x in items[-1]]
    for b in range(nb):
        q = body_q[b]
        kinematic = bool(flags[b] & int(T.BODY_KINEMATIC))
        mocap = ' mocap="true"' if kinematic else ""
        lines.append(
            f'    <body name="{body_names[b]}" pos="{_fmt(q[:3])}" quat="{_fmt((q[6], q[3], q[4], q[5]))}"{mocap}>'
        )
        if not kinematic and mass[b] > 0.0:
            i = inertia[b]
            if np.max(np.abs(i)) > 0.0:
                lines.append("      <freejoint/>")
            else:
                lines += [f'      <joint type="slide" axis="{ax}"/>' for ax in ("1 0 0", "0 1 0", "0 0 1")]
                i = np.eye(3) * 1e-9 * mass[b]
            full = (i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2])
            lines.append(f'      <inertial pos="{_fmt(com[b])}" mass="{float(mass[b])!r}" fullinertia="{_fmt(full)}"/>')
        lines += [f"      {x}" for x in items[b]]
        lines.append("    </body>")
    lines.append("  </worldbody>")
    if tendons_xml:
        lines += ["  <tendon>", *tendons_xml, "  </tendon>"]
    lines.append("</mujoco>")
    return "\n".join(lines) + "\n"


def _tangent_point(c, n, r, x, s) -> np.ndarray:
    """Tangent point on the roller circle (centre ``c``, unit axis ``n``, radius ``r``) of the span to
    the far point ``x``, on side ``s`` (+orientation for the arriving span, -orientation leaving)."""
    d = x - c
    d = d - n * (d @ n)
    dist = float(np.linalg.norm(d))
    if dist <= r:
        raise ValueError("a neighbouring guide lies inside the roller")
    e1 = d / dist
    e2 = np.cross(n, e1)
    ca = r / dist
    sa = math.sqrt(max(0.0, 1.0 - ca * ca))
    return c + r * (ca * e1 + s * sa * e2)


__all__ = ["lower_tendons"]
