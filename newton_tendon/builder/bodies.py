"""Rigid bodies: their storage, ``add_body``/``add_link`` and how a merged builder's bodies are placed.

Shapes add mass to a body afterwards (``newton_tendon.builder.shapes``); joints connect bodies
(``newton_tendon.builder.joints``).
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from newton_tendon.kernels import types as T

from .. import _hostmath as hm
from .._float32 import check_range as check_float32_range
from ..inertia import check_body_inertia, float32_mass_problem
from ._checks import _flag, _label, _real, _vec3, _xform


class BodyBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: the per-body lists and the methods that add bodies."""

    def _init_bodies(self):
        # Bodies.
        # Poses are wp.transform values, as in newton, so code written for newton can pass them to Warp's
        # builtins (wp.transform_point(builder.body_q[b], p)); they are float32, like the model's.
        self.body_q: list[wp.transform] = []
        self.body_qd: list[tuple] = []
        self.body_mass: list[float] = []
        self.body_com: list[tuple] = []
        self.body_inertia: list[np.ndarray] = []
        self.body_flags: list[int] = []
        self.body_lock_inertia: list[bool] = []
        self.body_world: list[int] = []
        self.body_label: list[str] = []
        self.body_color: list[int] | None = None

    @property
    def body_count(self) -> int:
        """Number of bodies added so far."""
        return len(self.body_q)

    def add_body(
        self,
        xform=None,
        mass: float = 0.0,
        inertia=None,
        com=None,
        is_kinematic: bool = False,
        lock_inertia: bool = False,
        label: str | None = None,
        *,
        velocity=None,
    ) -> int:
        """Add a rigid body free in space; returns its index.

        Args:
            xform: initial pose of the body frame in world (px, py, pz, qx, qy, qz, qw).
            mass: mass [kg]; 0 makes the body immovable unless shapes with density add mass.
            inertia: 3x3 inertia about the COM in body axes [kg m^2] (default zero): symmetric,
                positive semi-definite, principal moments within the triangle inequality
                (``newton_tendon.inertia.check_body_inertia``, the importers' rule too).
            com: centre of mass in the body frame [m].
            is_kinematic: the body follows its velocity in ``State.body_qd`` and is not pushed by
                constraints (infinite mass).
            lock_inertia: shapes added later do not change mass, COM or inertia.
            label: a name; defaults to ``body_<index>``.
            velocity: keyword-only initial (linear, angular) velocity, six numbers, world frame.
        """
        owner = f"add_body(label={label!r})"
        label = _label(owner, label, f"body_{self.body_count}")
        is_kinematic = _flag(owner, "is_kinematic", is_kinematic)
        lock_inertia = _flag(owner, "lock_inertia", lock_inertia)
        xf = _xform(owner, "xform", xform)
        m = _real(owner, "mass", mass, lo=0.0)
        if inertia is None:
            inertia_m = np.zeros((3, 3))
        else:
            inertia_m = check_body_inertia(owner, inertia)
            check_float32_range(owner, "inertia component", inertia_m)
        c = (0.0, 0.0, 0.0) if com is None else _vec3(owner, "com", com)
        if velocity is None:
            qd = (0.0,) * 6
        else:
            try:
                vals = tuple(float(v) for v in velocity)
            except (TypeError, ValueError):
                raise TypeError(f"{owner}: velocity must be six numbers (linear, angular), got {velocity!r}") from None
            if len(vals) != 6 or not all(math.isfinite(v) for v in vals):
                raise ValueError(f"{owner}: velocity must be six finite numbers (linear, angular)")
            check_float32_range(owner, "velocity", vals)
            qd = vals
        problem = float32_mass_problem(m, inertia_m, m > 0.0 and not is_kinematic)
        if problem is not None:
            raise ValueError(f"{owner}: {problem}")
        self.body_q.append(wp.transform(*xf))
        self.body_qd.append(qd)
        self.body_mass.append(m)
        self.body_com.append(c)
        self.body_inertia.append(inertia_m)
        self.body_flags.append(T.BODY_KINEMATIC if is_kinematic else 0)
        self.body_lock_inertia.append(bool(lock_inertia))
        self.body_world.append(self.current_world)
        self.body_label.append(label)
        self.body_color = None
        return self.body_count - 1

    def add_link(
        self,
        xform=None,
        mass: float = 0.0,
        inertia=None,
        com=None,
        is_kinematic: bool = False,
        lock_inertia: bool = False,
        label: str | None = None,
        *,
        velocity=None,
    ) -> int:
        """Add a body meant to be connected by joints (same arguments as :meth:`add_body`)."""
        return self.add_body(xform, mass, inertia, com, is_kinematic, lock_inertia, label, velocity=velocity)

    def _merge_bodies(self, other, xf, identity: bool, remap_world, label_prefix: str):
        """Append ``other``'s bodies; their poses and velocities follow the placement ``xf``."""
        rot = xf[3:]
        for i in range(other.body_count):
            q = other.body_q[i]
            qd = other.body_qd[i]
            if not identity:
                q = hm.transform_mul(xf, q)
                qd = (*hm.quat_rotate(rot, qd[:3]), *hm.quat_rotate(rot, qd[3:]))
            self.body_q.append(wp.transform(*q))  # a new value: the two builders never share a pose
            self.body_qd.append(qd)
        self.body_mass.extend(other.body_mass)
        self.body_com.extend(other.body_com)
        self.body_inertia.extend(i.copy() for i in other.body_inertia)
        self.body_flags.extend(other.body_flags)
        self.body_lock_inertia.extend(other.body_lock_inertia)
        self.body_world.extend(remap_world(w) for w in other.body_world)
        self.body_label.extend(label_prefix + s for s in other.body_label)
