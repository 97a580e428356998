"""Shared pieces of the eval_fk / eval_ik tests: a float64 numpy forward kinematics written from the
pose formula alone (the oracle), random joint frames and coordinates, and scene builders.

Pose formula (newton's, docs/migration.md): ``body_q[child] = body_q[parent] * joint_X_p * X_j(q) *
inverse(joint_X_c)`` with ``X_j`` per joint type as in ``newton_tendon.kernels.kinematics``.
"""

from __future__ import annotations

import numpy as np
import warp as wp

import newton_tendon as nt
from newton_tendon.kernels import types as T

# float32 round trips: coordinates of order 1 go through a few quaternion products and one
# atan2/acos, each a few ulps (6e-8); 2e-5 leaves room for a chain of four joints, and a sign or
# axis error is of order 1.
POSE_TOL = 2.0e-5
# Velocities are sums of products of order-1 rates and lever arms, the same few ulps each.
VEL_TOL = 5.0e-5


# ---------------------------------------------------------------------------------------------------------------
# float64 quaternion and transform algebra (x, y, z, w), independent of Warp
# ---------------------------------------------------------------------------------------------------------------


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def qconj(a):
    return np.array([-a[0], -a[1], -a[2], a[3]])


def qrot(q, v):
    return qmul(qmul(q, np.array([v[0], v[1], v[2], 0.0])), qconj(q))[:3]


def qaxis(axis, angle):
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    return np.concatenate([a * np.sin(0.5 * angle), [np.cos(0.5 * angle)]])


def tmul(a, b):
    """Compose transforms (p, q) as 7-arrays: a * b."""
    return np.concatenate([a[:3] + qrot(a[3:], b[:3]), qmul(a[3:], b[3:])])


def tinv(a):
    qi = qconj(a[3:])
    return np.concatenate([-qrot(qi, a[:3]), qi])


def rotvec(q):
    """Rotation vector of the unit quaternion q [rad]."""
    q = q if q[3] >= 0.0 else -q
    s = np.linalg.norm(q[:3])
    if s < 1.0e-12:
        return 2.0 * q[:3]
    return q[:3] / s * (2.0 * np.arctan2(s, q[3]))


def same_rotation(a, b) -> float:
    """Distance between two unit quaternions up to sign (0 for the same rotation)."""
    return float(min(np.abs(a - b).max(), np.abs(a + b).max()))


# ---------------------------------------------------------------------------------------------------------------
# Random frames and coordinates
# ---------------------------------------------------------------------------------------------------------------


def random_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def random_xform(rng, rotate: bool = True):
    rot = random_quat(rng) if rotate else np.array([0.0, 0.0, 0.0, 1.0])
    return np.concatenate([rng.uniform(-0.5, 0.5, size=3), rot])


def random_unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def orthonormal_axes(rng, n: int):
    """``n`` orthonormal random directions (rows)."""
    m, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return [m[:, i] for i in range(n)]


# ---------------------------------------------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------------------------------------------


def joint_transform(jtype: int, q, axes, dof_dim):
    """X_j(q) as a float64 7-array."""
    ident = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    if jtype == T.JOINT_PRISMATIC:
        return np.concatenate([np.asarray(axes[0]) * q[0], ident[3:]])
    if jtype == T.JOINT_REVOLUTE:
        return np.concatenate([np.zeros(3), qaxis(axes[0], q[0])])
    if jtype == T.JOINT_BALL:
        return np.concatenate([np.zeros(3), np.asarray(q[:4]) / np.linalg.norm(q[:4])])
    if jtype == T.JOINT_FIXED:
        return ident
    if jtype == T.JOINT_FREE:
        return np.concatenate([q[:3], np.asarray(q[3:7]) / np.linalg.norm(q[3:7])])
    if jtype == T.JOINT_D6:
        n_lin, n_ang = dof_dim
        p = sum((np.asarray(axes[i]) * q[i] for i in range(n_lin)), np.zeros(3))
        r = np.array([0.0, 0.0, 0.0, 1.0])
        for k in range(n_ang):
            r = qmul(r, qaxis(axes[n_lin + k], q[n_lin + k]))
        return np.concatenate([p, r])
    raise ValueError(jtype)


def reference_fk(model, joint_q: np.ndarray, body_q: np.ndarray) -> np.ndarray:
    """Body poses (float64 [body_count, 7]) from ``joint_q``: the pose formula, joints in articulation
    order with parents placed first (a joint whose parent is not yet placed waits)."""
    jt = model.joint_type.numpy()
    par = model.joint_parent.numpy()
    chi = model.joint_child.numpy()
    xp = model.joint_X_p.numpy().astype(np.float64)
    xc = model.joint_X_c.numpy().astype(np.float64)
    qs = model.joint_q_start.numpy()
    ds = model.joint_qd_start.numpy()
    axis = model.joint_axis.numpy().astype(np.float64)
    dim = model.joint_dof_dim.numpy()
    art = model.joint_articulation.numpy()
    out = body_q.astype(np.float64).copy()
    pending = [j for j in range(model.joint_count) if art[j] >= 0]
    placed_children = {int(chi[j]) for j in pending}
    done: set[int] = set()
    while pending:
        rest = []
        for j in pending:
            p = int(par[j])
            if p in placed_children and p not in done:
                rest.append(j)
                continue
            X_wp = out[p] if p >= 0 else np.array([0.0, 0, 0, 0, 0, 0, 1])
            X_j = joint_transform(int(jt[j]), joint_q[qs[j] : qs[j + 1]], axis[ds[j] : ds[j + 1]], dim[j])
            out[chi[j]] = tmul(tmul(tmul(X_wp, xp[j]), X_j), tinv(xc[j]))
            done.add(int(chi[j]))
        assert len(rest) < len(pending), "reference_fk: a loop of joints"
        pending = rest
    return out


# ---------------------------------------------------------------------------------------------------------------
# Scenes
# ---------------------------------------------------------------------------------------------------------------


def random_body(b, rng):
    """A body at a random pose with a random COM offset (its pose is overwritten by eval_fk)."""
    return b.add_body(
        xform=wp.transform(*np.split(random_xform(rng), [3])),
        mass=1.0,
        inertia=np.eye(3) * 0.1,
        com=tuple(rng.uniform(-0.2, 0.2, size=3)),
    )


def xf(a):
    return wp.transform(wp.vec3(*a[:3]), wp.quat(*a[3:]))


def add_joint(b, kind: str, parent: int, child: int, rng, *, rotate_parent_frame: bool = True):
    """A joint of ``kind`` with random frames (and axis) between ``parent`` and ``child``."""
    xp = xf(random_xform(rng, rotate=rotate_parent_frame))
    xc = xf(random_xform(rng))
    if kind == "revolute":
        return b.add_joint_revolute(parent, child, xp, xc, axis=tuple(random_unit(rng)))
    if kind == "prismatic":
        return b.add_joint_prismatic(parent, child, xp, xc, axis=tuple(random_unit(rng)))
    if kind == "ball":
        return b.add_joint_ball(parent, child, xp, xc)
    if kind == "fixed":
        return b.add_joint_fixed(parent, child, xp, xc)
    if kind == "free":
        return b.add_joint_free(child, parent, xp, xc)
    raise ValueError(kind)


def random_coordinates(model, rng) -> tuple[np.ndarray, np.ndarray]:
    """Valid random joint_q (angles within (-2.5, 2.5) rad, unit quaternions with w > 0, so the
    coordinates read back are the same numbers) and joint_qd for every joint of ``model``."""
    jt = model.joint_type.numpy()
    qs = model.joint_q_start.numpy()
    q = np.zeros(model.joint_coord_count)
    for j in range(model.joint_count):
        s, e = qs[j], qs[j + 1]
        if jt[j] == T.JOINT_BALL:
            r = random_quat(rng)
            q[s:e] = r if r[3] > 0 else -r
        elif jt[j] == T.JOINT_FREE:
            r = random_quat(rng)
            q[s : s + 3] = rng.uniform(-1.0, 1.0, size=3)
            q[s + 3 : e] = r if r[3] > 0 else -r
        else:
            q[s:e] = rng.uniform(-2.5, 2.5, size=e - s)
    qd = rng.uniform(-2.0, 2.0, size=model.joint_dof_count)
    return q, qd


def canonical(model, q: np.ndarray) -> np.ndarray:
    """``q`` with every ball/free quaternion flipped to w >= 0 (eval_ik may return either sign)."""
    q = q.copy()
    jt = model.joint_type.numpy()
    qs = model.joint_q_start.numpy()
    for j in range(model.joint_count):
        s = qs[j] + (3 if jt[j] == T.JOINT_FREE else 0)
        if jt[j] in (T.JOINT_BALL, T.JOINT_FREE) and q[s + 3] < 0:
            q[s : s + 4] *= -1.0
    return q


def fk(model, q: np.ndarray, qd: np.ndarray, state=None):
    """eval_fk on a fresh state (or ``state``) from numpy coordinates; returns the state."""
    state = model.state() if state is None else state
    nt.eval_fk(
        model,
        wp.array(q.astype(np.float32), dtype=float, device=model.device),
        wp.array(qd.astype(np.float32), dtype=float, device=model.device),
        state,
    )
    return state


def ik(model, state) -> tuple[np.ndarray, np.ndarray]:
    jq = wp.zeros(model.joint_coord_count, dtype=float, device=model.device)
    jqd = wp.zeros(model.joint_dof_count, dtype=float, device=model.device)
    nt.eval_ik(model, state, jq, jqd)
    return jq.numpy().astype(np.float64), jqd.numpy().astype(np.float64)


def integrate_coordinates(model, q: np.ndarray, qd: np.ndarray, t: float) -> np.ndarray:
    """Coordinates after moving for time ``t`` at the joint velocity ``qd`` (to first order in t, exact
    for the conventions): scalar coordinates q + t qd; a ball's quaternion turned by t qd about the
    parent joint frame's axes; a free joint's rotation likewise and its origin moved so that its child's
    COM moves at qd[0:3] (the COM sits at c in the child joint frame: origin = x_com - R c)."""
    jt = model.joint_type.numpy()
    qs = model.joint_q_start.numpy()
    ds = model.joint_qd_start.numpy()
    chi = model.joint_child.numpy()
    com = model.body_com.numpy().astype(np.float64)
    xc = model.joint_X_c.numpy().astype(np.float64)
    out = q.copy()
    for j in range(model.joint_count):
        s, d = qs[j], ds[j]
        if jt[j] == T.JOINT_BALL:
            w = qd[d : d + 3]
            out[s : s + 4] = qmul(qaxis(w, t * np.linalg.norm(w)), q[s : s + 4])
        elif jt[j] == T.JOINT_FREE:
            w = qd[d + 3 : d + 6]
            r0 = q[s + 3 : s + 7]
            r1 = qmul(qaxis(w, t * np.linalg.norm(w)), r0)
            c = tmul(tinv(xc[j]), np.concatenate([com[chi[j]], [0, 0, 0, 1]]))[:3]
            x_com = q[s : s + 3] + qrot(r0, c) + t * qd[d : d + 3]
            out[s : s + 3] = x_com - qrot(r1, c)
            out[s + 3 : s + 7] = r1
        else:
            n = qs[j + 1] - s
            out[s : s + n] = q[s : s + n] + t * qd[d : d + n]
    return out


def finite_difference_velocities(model, q: np.ndarray, qd: np.ndarray, h: float = 1.0e-3) -> np.ndarray:
    """Body twists (COM linear velocity, angular velocity; world) from central differences of the
    reference poses at q(-h) and q(+h): v = (x_com(+h) - x_com(-h)) / 2h, w = rotvec(R(+h) R(-h)^T) / 2h;
    truncation O(h^2) ~ 1e-6 for rates of order 1."""
    body_q = model.body_q.numpy()
    plus = reference_fk(model, integrate_coordinates(model, q, qd, h), body_q)
    minus = reference_fk(model, integrate_coordinates(model, q, qd, -h), body_q)
    com = model.body_com.numpy().astype(np.float64)
    out = np.zeros((model.body_count, 6))
    for i in range(model.body_count):
        xp = plus[i, :3] + qrot(plus[i, 3:], com[i])
        xm = minus[i, :3] + qrot(minus[i, 3:], com[i])
        out[i, :3] = (xp - xm) / (2.0 * h)
        out[i, 3:] = rotvec(qmul(plus[i, 3:], qconj(minus[i, 3:]))) / (2.0 * h)
    return out
