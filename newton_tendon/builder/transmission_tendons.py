"""Transmission tendons (spatial and fixed) and their polynomial couplings.

A transmission tendon has one scalar length coordinate ``l`` with a Jacobian; every force element
(spring, damping, drive, limits, dry friction, armature, couplings) acts through it. Spatial
tendons take ``l`` from a routed path (``newton_tendon.transmission``), fixed tendons from a
weighted sum of revolute/prismatic joint coordinates ``l = sum c_i q_i``.

Properties are keyword arguments of ``add_spatial_tendon``/``add_fixed_tendon`` (see
``TRANSMISSION_PROPERTIES``); everything is validated before anything is appended.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

import numpy as np

from newton_tendon.kernels import types as T

from .. import _hostmath as hm
from ..transmission import flatten_spatial_path

INF = math.inf

TRANSMISSION_PROPERTIES: dict[str, float | bool | None] = {
    # Spring with rest interval [spring_lower, spring_upper] (None: the reference length) and damping.
    "stiffness": 0.0,
    "damping": 0.0,
    "spring_lower": None,
    "spring_upper": None,
    # Drive: feedforward force command (filtered by activation_time), servo on target length/velocity,
    # bounds on the combined actuator force.
    "drive_force": 0.0,
    "activation_time": 0.0,
    "position_gain": 0.0,
    "velocity_gain": 0.0,
    "target_length": None,
    "target_velocity": 0.0,
    "actuation_lower": -INF,
    "actuation_upper": INF,
    # Length bounds (equal bounds: a bilateral lock), margin, position correction, compliance.
    "lower_limit": -INF,
    "upper_limit": INF,
    "limit_margin": 0.0,
    "position_correction": 0.2,
    "limit_compliance": 0.0,
    # Dry friction and armature.
    "friction_loss": 0.0,
    "friction_compliance": 0.0,
    "armature": 0.0,
    # Runtime switch and drawing radius.
    "enabled": True,
    "width": 0.005,
}
"""Transmission tendon properties and their defaults (units in ``add_spatial_tendon``)."""

JOINT_TYPE_NAMES = {
    int(T.JOINT_PRISMATIC): "prismatic",
    int(T.JOINT_REVOLUTE): "revolute",
    int(T.JOINT_BALL): "ball",
    int(T.JOINT_FIXED): "fixed",
    int(T.JOINT_FREE): "free",
}

TRANSMISSION_SPATIAL = 0
TRANSMISSION_FIXED = 1


def _number(where: str, name: str, value, *, lo=None, hi=None, allow_inf=False, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{where}: {name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{where}: {name} must be finite, got {value!r}")
    if lo is not None and v < lo:
        raise ValueError(f"{where}: {name} must be >= {lo}, got {value!r}")
    if hi is not None and v > hi:
        raise ValueError(f"{where}: {name} must be <= {hi}, got {value!r}")
    return v


def check_transmission_properties(where: str, props: dict) -> dict:
    """Validated, complete property dict (defaults filled in); raises naming the property and rule."""
    unknown = sorted(set(props) - set(TRANSMISSION_PROPERTIES))
    if unknown:
        raise TypeError(
            f"{where}: unknown propert{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; "
            f"known: {', '.join(TRANSMISSION_PROPERTIES)}"
        )
    p = {**TRANSMISSION_PROPERTIES, **props}
    out: dict = {}
    for name in ("stiffness", "damping", "activation_time", "position_gain", "velocity_gain"):
        out[name] = _number(where, name, p[name], lo=0.0)
    for name in ("limit_margin", "limit_compliance", "friction_loss", "friction_compliance", "armature", "width"):
        out[name] = _number(where, name, p[name], lo=0.0)
    out["position_correction"] = _number(where, "position_correction", p["position_correction"], lo=0.0, hi=1.0)
    out["drive_force"] = _number(where, "drive_force", p["drive_force"])
    out["target_velocity"] = _number(where, "target_velocity", p["target_velocity"])
    for name in ("spring_lower", "spring_upper", "target_length"):
        out[name] = _number(where, name, p[name], allow_none=True)
    if (
        out["spring_lower"] is not None
        and out["spring_upper"] is not None
        and out["spring_lower"] > out["spring_upper"]
    ):
        raise ValueError(
            f"{where}: spring_lower ({out['spring_lower']}) must be <= spring_upper ({out['spring_upper']})"
        )
    for name in ("lower_limit", "upper_limit", "actuation_lower", "actuation_upper"):
        out[name] = _number(where, name, p[name], allow_inf=True)
    if out["lower_limit"] > out["upper_limit"]:
        raise ValueError(f"{where}: lower_limit ({out['lower_limit']}) must be <= upper_limit ({out['upper_limit']})")
    if out["lower_limit"] == INF or out["upper_limit"] == -INF:
        raise ValueError(f"{where}: lower_limit cannot be +inf and upper_limit cannot be -inf")
    if (
        math.isfinite(out["lower_limit"])
        and math.isfinite(out["upper_limit"])
        and out["lower_limit"] < out["upper_limit"] < out["lower_limit"] + 2.0 * out["limit_margin"]
    ):
        raise ValueError(
            f"{where}: limit_margin ({out['limit_margin']}) makes the effective bounds "
            f"[{out['lower_limit']} + margin, {out['upper_limit']} - margin] overlap"
        )
    if out["actuation_lower"] > out["actuation_upper"]:
        raise ValueError(
            f"{where}: actuation_lower ({out['actuation_lower']}) must be <= actuation_upper ({out['actuation_upper']})"
        )
    if not isinstance(p["enabled"], bool):
        raise TypeError(f"{where}: enabled must be a bool, got {type(p['enabled']).__name__}")
    out["enabled"] = p["enabled"]
    return out


class TransmissionBuilder:
    """Mixin of ``ModelBuilder``: storage, ``add_spatial_tendon``, ``add_fixed_tendon``,
    ``add_tendon_coupling`` and merging of transmission tendons."""

    def _init_transmissions(self):
        # Per transmission tendon.
        self.transmission_type: list[int] = []
        self.transmission_world: list[int] = []
        self.transmission_label: list[str] = []
        self.transmission_properties: list[dict] = []
        # Spatial paths: one flattened dict per tendon ({} for fixed tendons).
        self.transmission_path: list[dict] = []
        # Fixed tendons: (joint, coefficient) terms per tendon ([] for spatial tendons).
        self.transmission_terms: list[list[tuple[int, float]]] = []
        # Fixed tendons: the coordinate of each term within its joint (0 but for a D6 joint's later
        # axes), parallel to ``transmission_terms``.
        self.transmission_term_axes: list[list[int]] = []
        # Couplings.
        self.coupling_first: list[int] = []
        self.coupling_second: list[int] = []
        self.coupling_coefficients: list[tuple] = []
        self.coupling_compliance: list[float] = []
        self.coupling_position_correction: list[float] = []
        self.coupling_enabled: list[bool] = []
        self.coupling_world: list[int] = []
        self.coupling_label: list[str] = []

    @property
    def transmission_count(self) -> int:
        """Number of transmission tendons (spatial and fixed) added so far."""
        return len(self.transmission_type)

    @property
    def coupling_count(self) -> int:
        """Number of tendon couplings added so far."""
        return len(self.coupling_first)

    # ------------------------------------------------------------------------------------------

    def _transmission_world(self, where: str, bodies: Sequence[int]) -> int:
        """The one world all referenced (non-world) bodies share; the current world if none."""
        worlds = {self.body_world[b] for b in bodies if b >= 0}
        if len(worlds) > 1:
            raise ValueError(
                f"{where}: its bodies belong to different worlds {sorted(worlds)}; a tendon lies in one world"
            )
        if worlds:
            w = worlds.pop()
            if w != self.current_world and self.current_world >= 0 and w >= 0:
                raise ValueError(f"{where}: its bodies belong to world {w}, not the current world {self.current_world}")
            return w if w >= 0 else self.current_world
        return self.current_world

    def _transmission_label(self, where: str, label, default: str) -> str:
        if label is None:
            return default
        if not isinstance(label, str):
            raise TypeError(f"{where}: label must be a str or None, got {type(label).__name__}")
        if not label:
            raise ValueError(f"{where}: label must be nonempty")
        if label in self.transmission_label:
            raise ValueError(f"{where}: label {label!r} is already used by another transmission tendon")
        return label

    def add_spatial_tendon(self, path: Sequence, *, label: str | None = None, **properties) -> int:
        """Add a spatial transmission tendon whose length is routed along ``path``.

        Args:
            path: ``TendonSite`` / ``TendonWrap`` / ``TendonPulley`` elements (see
                ``newton_tendon.transmission``): starts and ends with sites, a wrap sits between two
                sites, no two pulleys in a row, divisors > 0.
            label: Unique name (default ``spatial_tendon_<index>``).
            **properties: Force elements, defaults in ``TRANSMISSION_PROPERTIES``.
                ``stiffness`` [N/m], ``damping`` [N s/m] and the rest interval ``spring_lower``,
                ``spring_upper`` [m] (None: the reference length captured at finalize, from the
                builder's initial poses). Drive: ``drive_force`` [N] (the feedforward command u;
                ``set tension 5`` is ``drive_force=-5``), ``activation_time`` [s],
                ``position_gain`` [N/m], ``velocity_gain`` [N s/m], ``target_length`` [m] (None:
                the reference), ``target_velocity`` [m/s], ``actuation_lower``/``actuation_upper``
                [N] bounds on the combined actuator force. Limits: ``lower_limit``,
                ``upper_limit`` [m] (equal: a bilateral lock), ``limit_margin`` [m],
                ``position_correction`` [-] (0..1, default 0.2), ``limit_compliance`` [m/N].
                ``friction_loss`` [N], ``friction_compliance`` [m/N], ``armature`` [kg],
                ``enabled``, ``width`` (drawing radius) [m].

        Returns:
            The transmission tendon index.
        """
        where = f"add_spatial_tendon(tendon {self.transmission_count})"
        flat = flatten_spatial_path(path, self.body_count, name=where)
        props = check_transmission_properties(where, properties)
        bodies = [b for b in flat["body"]] + [b for b, s in zip(flat["side_body"], flat["has_side"], strict=True) if s]
        world = self._transmission_world(where, bodies)
        label = self._transmission_label(where, label, f"spatial_tendon_{self.transmission_count}")
        self.transmission_type.append(TRANSMISSION_SPATIAL)
        self.transmission_world.append(world)
        self.transmission_label.append(label)
        self.transmission_properties.append(props)
        self.transmission_path.append(flat)
        self.transmission_terms.append([])
        self.transmission_term_axes.append([])
        return self.transmission_count - 1

    def add_fixed_tendon(
        self,
        joints: Sequence[int],
        coefficients: Sequence[float],
        *,
        axes: Sequence[int] | None = None,
        label: str | None = None,
        **properties,
    ) -> int:
        """Add a fixed transmission tendon ``l = sum_i c_i q_i`` over joint coordinates.

        ``q_i`` is the coordinate of revolute or prismatic joint ``joints[i]``, or of axis
        ``axes[i]`` of a D6 joint (its coordinates in order, linear then angular: a single angular
        axis's twist, or one of a universal joint's two angles; the angles of three angular axes
        are rejected). ``axes`` defaults to 0
        for every term and must be 0 for revolute and prismatic joints. Coefficients may be
        negative, zero or repeated (a coefficient on an angle is a moment arm [m/rad], on a length a
        ratio); joints may belong to different articulations of one world. Ball, free and fixed
        joints are rejected. Properties as ``add_spatial_tendon``.
        """
        where = f"add_fixed_tendon(tendon {self.transmission_count})"
        if isinstance(joints, (str, bytes)) or not isinstance(joints, Sequence):
            raise TypeError(f"{where}: joints must be a sequence of joint indices, got {type(joints).__name__}")
        if isinstance(coefficients, (str, bytes)) or not isinstance(coefficients, Sequence):
            raise TypeError(f"{where}: coefficients must be a sequence of numbers, got {type(coefficients).__name__}")
        if len(joints) == 0:
            raise ValueError(f"{where}: needs at least one joint")
        if len(joints) != len(coefficients):
            raise ValueError(f"{where}: {len(joints)} joints but {len(coefficients)} coefficients")
        if axes is None:
            axes = [0] * len(joints)
        if isinstance(axes, (str, bytes)) or not isinstance(axes, Sequence):
            raise TypeError(f"{where}: axes must be a sequence of ints, got {type(axes).__name__}")
        if len(axes) != len(joints):
            raise ValueError(f"{where}: {len(joints)} joints but {len(axes)} axes")
        terms = []
        term_axes = []
        for i, (j, c, k) in enumerate(zip(joints, coefficients, axes, strict=True)):
            if isinstance(j, bool) or not isinstance(j, int):
                raise TypeError(f"{where}: joints[{i}] must be an int, got {type(j).__name__}")
            if not 0 <= j < self.joint_count:
                raise ValueError(f"{where}: joints[{i}] = {j} is not a joint index (0..{self.joint_count - 1})")
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise TypeError(f"{where}: axes[{i}] must be an int, got {type(k).__name__}")
            k = int(k)
            jt = self.joint_type[j]
            if jt == T.JOINT_D6:
                n_lin, n_ang = self.joint_dof_dim[j]
                if not 0 <= k < n_lin + n_ang:
                    raise ValueError(
                        f"{where}: axes[{i}] = {k} is not an axis of D6 joint {j} ('{self.joint_label[j]}', "
                        f"{n_lin + n_ang} axes)"
                    )
                if k >= n_lin and n_ang == 3:
                    raise ValueError(
                        f"{where}: axes[{i}] = {k} is an angular axis of D6 joint {j} ('{self.joint_label[j]}') "
                        "with 3 angular axes; fixed tendons need a linear axis, a single angular axis or a "
                        "universal joint's angle"
                    )
            elif jt in (T.JOINT_REVOLUTE, T.JOINT_PRISMATIC):
                if k != 0:
                    raise ValueError(
                        f"{where}: axes[{i}] = {k}, but joint {j} ('{self.joint_label[j]}') has one coordinate (axis 0)"
                    )
            else:
                raise ValueError(
                    f"{where}: joints[{i}] = {j} ('{self.joint_label[j]}') is a {JOINT_TYPE_NAMES[jt]} joint; "
                    "fixed tendons need revolute or prismatic joints, or a D6 joint's axis (one scalar coordinate)"
                )
            terms.append((int(j), _number(where, f"coefficients[{i}]", c)))
            term_axes.append(k)
        props = check_transmission_properties(where, properties)
        bodies = [b for j, _ in terms for b in (self.joint_parent[j], self.joint_child[j])]
        world = self._transmission_world(where, bodies)
        label = self._transmission_label(where, label, f"fixed_tendon_{self.transmission_count}")
        self.transmission_type.append(TRANSMISSION_FIXED)
        self.transmission_world.append(world)
        self.transmission_label.append(label)
        self.transmission_properties.append(props)
        self.transmission_path.append({})
        self.transmission_terms.append(terms)
        self.transmission_term_axes.append(term_axes)
        return self.transmission_count - 1

    def add_tendon_coupling(
        self,
        first: int,
        second: int | None,
        coefficients: Sequence[float],
        compliance: float = 0.0,
        *,
        position_correction: float = 0.2,
        enabled: bool = True,
        label: str | None = None,
    ) -> int:
        """Couple two transmission tendons: ``l1 - l1_ref = f(l2 - l2_ref)``, ``f`` a polynomial.

        ``coefficients`` are ``c0 .. c4`` (up to five; missing ones are 0) of
        ``f(x) = c0 + c1 x + c2 x^2 + c3 x^3 + c4 x^4``; ``c_i`` has units of the first length over
        the second to the power i. ``second=None`` constrains the first tendon to ``l1_ref + c0``.
        ``compliance`` [m/N], ``position_correction`` in [0, 1]. The two tendons must differ and
        lie in the same world. Returns the coupling index.
        """
        where = f"add_tendon_coupling(coupling {self.coupling_count})"
        for name, t in (("first", first), ("second", second)):
            if t is None and name == "second":
                continue
            if isinstance(t, bool) or not isinstance(t, int):
                raise TypeError(f"{where}: {name} must be a transmission tendon index, got {type(t).__name__}")
            if not 0 <= t < self.transmission_count:
                raise ValueError(
                    f"{where}: {name} = {t} is not a transmission tendon (0..{self.transmission_count - 1})"
                )
        if second is not None and second == first:
            raise ValueError(f"{where}: first and second must be distinct tendons, both are {first}")
        if second is not None and self.transmission_world[first] != self.transmission_world[second]:
            raise ValueError(
                f"{where}: tendons {first} and {second} lie in different worlds "
                f"({self.transmission_world[first]} and {self.transmission_world[second]})"
            )
        if isinstance(coefficients, (str, bytes)) or not isinstance(coefficients, Sequence):
            raise TypeError(f"{where}: coefficients must be a sequence of up to 5 numbers")
        if not 1 <= len(coefficients) <= 5:
            raise ValueError(f"{where}: coefficients needs 1 to 5 entries (c0..c4), got {len(coefficients)}")
        coeffs = [_number(where, f"coefficients[{i}]", c) for i, c in enumerate(coefficients)]
        coeffs += [0.0] * (5 - len(coeffs))
        compliance = _number(where, "compliance", compliance, lo=0.0)
        beta = _number(where, "position_correction", position_correction, lo=0.0, hi=1.0)
        if not isinstance(enabled, bool):
            raise TypeError(f"{where}: enabled must be a bool, got {type(enabled).__name__}")
        if label is None:
            label = f"tendon_coupling_{self.coupling_count}"
        elif not isinstance(label, str):
            raise TypeError(f"{where}: label must be a str or None, got {type(label).__name__}")
        elif not label:
            raise ValueError(f"{where}: label must be nonempty")
        elif label in self.coupling_label:
            raise ValueError(f"{where}: label {label!r} is already used by another coupling")
        self.coupling_first.append(first)
        self.coupling_second.append(-1 if second is None else second)
        self.coupling_coefficients.append(tuple(coeffs))
        self.coupling_compliance.append(compliance)
        self.coupling_position_correction.append(beta)
        self.coupling_enabled.append(enabled)
        self.coupling_world.append(self.transmission_world[first])
        self.coupling_label.append(label)
        return self.coupling_count - 1

    # ------------------------------------------------------------------------------------------

    def _merge_transmissions(self, other, xf, identity: bool, remap_world, label_prefix: str, b0: int, j0: int):
        """Append ``other``'s transmission tendons and couplings with remapped indices; world-attached
        path geometry follows the placement ``xf``."""
        t0 = self.transmission_count
        for i in range(other.transmission_count):
            path = other.transmission_path[i]
            if path:
                path = {k: list(v) for k, v in path.items()}
                for e in range(len(path["type"])):
                    body = path["body"][e]
                    if body >= 0:
                        path["body"][e] = body + b0
                    elif not identity:
                        path["offset"][e] = tuple(hm.transform_point(xf, path["offset"][e]))
                        path["axis"][e] = tuple(hm.quat_rotate(xf[3:], path["axis"][e]))
                    if path["has_side"][e]:
                        sb = path["side_body"][e]
                        if sb >= 0:
                            path["side_body"][e] = sb + b0
                        elif not identity:
                            path["side_offset"][e] = tuple(hm.transform_point(xf, path["side_offset"][e]))
            self.transmission_path.append(path)
            self.transmission_terms.append([(j + j0, c) for j, c in other.transmission_terms[i]])
            self.transmission_term_axes.append(list(other.transmission_term_axes[i]))
            self.transmission_properties.append(dict(other.transmission_properties[i]))
        self.transmission_type.extend(other.transmission_type)
        self.transmission_world.extend(remap_world(w) for w in other.transmission_world)
        self.transmission_label.extend(label_prefix + s for s in other.transmission_label)
        self.coupling_first.extend(t + t0 for t in other.coupling_first)
        self.coupling_second.extend(t + t0 if t >= 0 else -1 for t in other.coupling_second)
        self.coupling_coefficients.extend(other.coupling_coefficients)
        self.coupling_compliance.extend(other.coupling_compliance)
        self.coupling_position_correction.extend(other.coupling_position_correction)
        self.coupling_enabled.extend(other.coupling_enabled)
        self.coupling_world.extend(remap_world(w) for w in other.coupling_world)
        self.coupling_label.extend(label_prefix + s for s in other.coupling_label)
