"""Batched observations: the quantities a policy can observe and the one-launch gather of them.

:class:`ObservationSpec` names, on the template world, what each world's observation vector holds
(body poses and velocities, joint coordinates, routed-cable and transmission-tendon lengths and
tensions, user inputs such as goals); :class:`Observer` turns it into index tables once and then
fills one preallocated ``[world_count, obs_dim]`` float32 array per ``compute`` (one launch, two when
joint coordinates are observed), without host synchronization, so it can be captured in a graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import warp as wp

from newton_tendon.kernels import observe as K
from newton_tendon.kernels.joints import eval_joint_coordinates as _eval_joint_coordinates_kernel

from ..layout import check_state
from ..model import Model, body_model_struct, joint_model_struct
from ._worlds import _resolve_local, world_entities


@dataclass(frozen=True)
class _Quantity:
    domain: str
    source: int
    first: int
    width: int
    suffixes: tuple
    needs_solver: bool
    doc: str


_XYZ = ("x", "y", "z")
_QUAT = ("qx", "qy", "qz", "qw")

OBSERVATION_QUANTITIES: dict[str, _Quantity] = {
    "body_q": _Quantity(
        "body", K.OBS_SOURCE_BODY_Q, 0, 7, _XYZ + _QUAT, False, "body frame pose: position [m], quaternion xyzw"
    ),
    "body_position": _Quantity("body", K.OBS_SOURCE_BODY_Q, 0, 3, _XYZ, False, "body frame origin in world [m]"),
    "body_orientation": _Quantity("body", K.OBS_SOURCE_BODY_Q, 3, 4, _QUAT, False, "body orientation, quaternion xyzw"),
    "body_qd": _Quantity(
        "body",
        K.OBS_SOURCE_BODY_QD,
        0,
        6,
        ("vx", "vy", "vz", "wx", "wy", "wz"),
        False,
        "COM linear velocity [m/s] then angular velocity [rad/s], world frame",
    ),
    "body_linear_velocity": _Quantity(
        "body", K.OBS_SOURCE_BODY_QD, 0, 3, _XYZ, False, "COM linear velocity in world [m/s]"
    ),
    "body_angular_velocity": _Quantity(
        "body", K.OBS_SOURCE_BODY_QD, 3, 3, _XYZ, False, "angular velocity in world [rad/s]"
    ),
    "joint_q": _Quantity(
        "joint", K.OBS_SOURCE_JOINT_Q, 0, 0, (), False, "joint coordinates [rad or m] (eval_joint_coordinates)"
    ),
    "joint_qd": _Quantity(
        "joint", K.OBS_SOURCE_JOINT_QD, 0, 0, (), False, "joint velocities [rad/s or m/s] (eval_joint_coordinates)"
    ),
    "tendon_length": _Quantity(
        "tendon", K.OBS_SOURCE_TENDON_LENGTH, 0, 1, (), True, "routed cable geometric length [m] after the last step"
    ),
    "tendon_total_cable": _Quantity(
        "tendon", K.OBS_SOURCE_TENDON_TOTAL_CABLE, 0, 1, (), True, "routed cable material [m] after the last step"
    ),
    "tendon_segment_material_tension": _Quantity(
        "tendon_segment",
        K.OBS_SOURCE_SEGMENT_MATERIAL_TENSION,
        0,
        1,
        (),
        True,
        "span tension [N] after the last step",
    ),
    "tendon_segment_damping_tension": _Quantity(
        "tendon_segment",
        K.OBS_SOURCE_SEGMENT_DAMPING_TENSION,
        0,
        1,
        (),
        True,
        "span damping tension [N] after the last step",
    ),
    "tendon_segment_rest_length": _Quantity(
        "tendon_segment", K.OBS_SOURCE_SEGMENT_REST_LENGTH, 0, 1, (), False, "span material rest length [m] (state)"
    ),
    "tendon_guide_winch_paid": _Quantity(
        "tendon_guide", K.OBS_SOURCE_GUIDE_WINCH_PAID, 0, 1, (), False, "cable paid out at a winch guide [m] (state)"
    ),
    "transmission_length": _Quantity(
        "transmission", K.OBS_SOURCE_TRANSMISSION_LENGTH, 0, 1, (), True, "transmission tendon length [m]"
    ),
    "transmission_velocity": _Quantity(
        "transmission", K.OBS_SOURCE_TRANSMISSION_VELOCITY, 0, 1, (), True, "transmission length rate [m/s]"
    ),
    "transmission_tension": _Quantity(
        "transmission", K.OBS_SOURCE_TRANSMISSION_TENSION, 0, 1, (), True, "transmission tension [N] (pull > 0)"
    ),
    "transmission_force": _Quantity(
        "transmission", K.OBS_SOURCE_TRANSMISSION_FORCE, 0, 1, (), True, "transmission total force [N]"
    ),
    "transmission_actuation_force": _Quantity(
        "transmission",
        K.OBS_SOURCE_TRANSMISSION_ACTUATION_FORCE,
        0,
        1,
        (),
        True,
        "transmission actuator force [N] (positive lengthens)",
    ),
}
"""Quantities an :class:`ObservationSpec` can select: name -> domain, source, width and meaning."""


@dataclass(frozen=True)
class _Item:
    quantity: str
    entities: object
    offset: float
    scale: float


@dataclass
class ObservationSpec:
    """What each world's observation vector holds, in order, described on the template world.

    Example:
        >>> spec = ObservationSpec()
        >>> spec.add("joint_q").add("joint_qd", scale=0.1)
        >>> spec.add("body_position", ["tip"]).add("transmission_tension", scale=0.01)
        >>> spec.add_input("goal", 3)  # written by the environment, e.g. a target position [m]

    Each entry appends ``(value - offset) * scale`` for every selected entity and component.
    """

    items: list = field(default_factory=list)
    """Entries in order: quantities (``_Item``) and inputs (``(name, width)``)."""

    def add(self, quantity: str, entities=None, *, offset: float = 0.0, scale: float = 1.0) -> ObservationSpec:
        """Append ``quantity`` (a key of ``OBSERVATION_QUANTITIES``) of ``entities`` (None: all of the
        domain in each world; or local indices / template labels). ``offset`` and ``scale`` are in the
        quantity's units and its reciprocal. Returns ``self`` for chaining."""
        if quantity not in OBSERVATION_QUANTITIES:
            raise ValueError(
                f"ObservationSpec.add: unknown quantity {quantity!r}; known: {', '.join(OBSERVATION_QUANTITIES)}"
            )
        for name, v in (("offset", offset), ("scale", scale)):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not np.isfinite(v):
                raise ValueError(f"ObservationSpec.add({quantity!r}): {name} must be a finite number, got {v!r}")
        self.items.append(_Item(quantity, entities, float(offset), float(scale)))
        return self

    def add_input(self, name: str, width: int) -> ObservationSpec:
        """Append ``width`` columns the caller fills per world through ``Observer.input(name)`` (goals,
        commands, previous actions). Returns ``self``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"ObservationSpec.add_input: name must be a nonempty str, got {name!r}")
        if any(isinstance(i, tuple) and i[0] == name for i in self.items):
            raise ValueError(f"ObservationSpec.add_input: input {name!r} is already declared")
        if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
            raise ValueError(f"ObservationSpec.add_input({name!r}): width must be an int >= 1, got {width!r}")
        self.items.append((name, int(width)))
        return self


class Observer:
    """Gathers the observation vectors of every world into ``obs`` [world_count, dim], float32.

    Args:
        model: a model whose worlds share one template (``ModelBuilder.replicate``).
        spec: the :class:`ObservationSpec`.
        solver: the solver whose diagnostics (tendon and transmission lengths, tensions) are read;
            required when the spec selects such quantities. Diagnostics describe the end of the
            solver's last step (or its last ``update_geometry``).

    ``compute(state)`` allocates nothing, never reads device data back, and launches the same
    kernels on every call: capture it in a graph together with the solver step. Column ``c`` of
    ``obs`` is named ``columns[c]``.
    """

    def __init__(self, model: Model, spec: ObservationSpec, solver=None):
        where = "Observer"
        if not isinstance(model, Model):
            raise TypeError(f"{where}: model must be a newton_tendon Model, got {type(model).__name__}")
        if not isinstance(spec, ObservationSpec):
            raise TypeError(f"{where}: spec must be an ObservationSpec, got {type(spec).__name__}")
        if not spec.items:
            raise ValueError(f"{where}: the spec selects nothing")
        self.model = model
        self.solver = solver
        self.device = model.device
        wc = max(model.world_count, 1)
        self.world_count = wc
        """Number of worlds (rows of ``obs``)."""

        sources, comps, offsets, scales, columns, elements = [], [], [], [], [], []
        self._input_slices: dict[str, tuple[int, int]] = {}
        input_width = 0
        tables: dict[str, np.ndarray] = {}
        self._needs_joints = False
        q_start = model.joint_q_start.numpy() if model.joint_count else np.zeros(1, np.int32)
        qd_start = model.joint_qd_start.numpy() if model.joint_count else np.zeros(1, np.int32)
        for item in spec.items:
            if isinstance(item, tuple):
                name, width = item
                self._input_slices[name] = (input_width, width)
                for c in range(width):
                    sources.append(K.OBS_SOURCE_INPUT)
                    comps.append(input_width + c)
                    offsets.append(0.0)
                    scales.append(1.0)
                    columns.append(f"{name}[{c}]")
                    elements.append(np.zeros(wc, np.int64))
                input_width += width
                continue
            q = OBSERVATION_QUANTITIES[item.quantity]
            iw = f"{where}: {item.quantity}"
            if q.needs_solver:
                if solver is None:
                    raise ValueError(f"{iw} is a solver diagnostic; pass solver= to the Observer")
                for attr in ("tendon_length", "transmission_length"):
                    if not hasattr(solver, attr):
                        raise TypeError(f"{where}: solver {type(solver).__name__} has no {attr} diagnostics")
            if q.domain not in tables:
                tables[q.domain] = world_entities(model, q.domain)
            table = tables[q.domain]
            local = _resolve_local(iw, model, q.domain, table, item.entities)
            if local.size == 0:
                raise ValueError(f"{iw}: selects no entities (each world has no {q.domain})")
            for k in local:
                flat = table[:, k]
                label = f"{item.quantity}[{k}]"
                if q.domain == "joint":
                    self._needs_joints = True
                    start = q_start if q.source == K.OBS_SOURCE_JOINT_Q else qd_start
                    widths = start[flat + 1] - start[flat]
                    if np.any(widths != widths[0]):
                        raise ValueError(f"{iw}: local joint {k} has different types across worlds")
                    for c in range(int(widths[0])):
                        sources.append(q.source)
                        comps.append(0)
                        elements.append(start[flat] + c)
                        columns.append(f"{label}.{c}")
                        offsets.append(item.offset)
                        scales.append(item.scale)
                    continue
                for c in range(q.width):
                    sources.append(q.source)
                    comps.append(q.first + c)
                    elements.append(flat)
                    columns.append(f"{label}.{q.suffixes[c]}" if q.suffixes else label)
                    offsets.append(item.offset)
                    scales.append(item.scale)
        if not sources:
            raise ValueError(f"{where}: the spec selects no columns (every selected joint has no coordinates)")
        dev = self.device
        self.dim = len(sources)
        """Observation size per world."""
        self.columns: list[str] = columns
        """Name of each column, e.g. ``body_position[2].z`` or ``joint_q[0].0``."""
        self._source = wp.array(np.asarray(sources, np.int32), dtype=wp.int32, device=dev)
        self._component = wp.array(np.asarray(comps, np.int32), dtype=wp.int32, device=dev)
        self._offset = wp.array(np.asarray(offsets, np.float32), dtype=float, device=dev)
        self._scale = wp.array(np.asarray(scales, np.float32), dtype=float, device=dev)
        self._element = wp.array(np.stack(elements, axis=1).astype(np.int32), dtype=wp.int32, device=dev)
        self.obs = wp.zeros((wc, self.dim), dtype=float, device=dev)
        """The observations [world_count, dim], float32; rewritten in place by ``compute``."""
        self.inputs = wp.zeros((wc, max(input_width, 1)), dtype=float, device=dev)
        """User-written input columns [world_count, total input width] (see ``input``)."""
        self._joint_q = wp.zeros(max(model.joint_coord_count, 1), dtype=float, device=dev)
        self._joint_qd = wp.zeros(max(model.joint_dof_count, 1), dtype=float, device=dev)
        self._bodies = body_model_struct(model)
        self._joints = joint_model_struct(model)
        self._empty = wp.zeros(1, dtype=float, device=dev)
        self._sources_cache: dict[int, tuple] = {}

    def input(self, name: str) -> wp.array:
        """The [world_count, width] view of input ``name`` inside ``inputs`` (write goals here)."""
        if name not in self._input_slices:
            raise KeyError(f"Observer.input: no input {name!r}; declared: {', '.join(self._input_slices) or 'none'}")
        s, w = self._input_slices[name]
        return self.inputs[:, s : s + w]

    def _sources(self, state) -> K.ObservationSources:
        key = id(state)
        hit = self._sources_cache.get(key)
        if hit is not None and hit[0] is state:
            return hit[1]
        src = K.ObservationSources()
        src.body_q = state.body_q
        src.body_qd = state.body_qd
        src.joint_q = self._joint_q
        src.joint_qd = self._joint_qd
        src.segment_rest_length = state.tendon_segment_rest_length
        src.guide_winch_paid = state.tendon_guide_winch_paid
        s = self.solver
        for name, attr in (
            ("tendon_length", "tendon_length"),
            ("tendon_total_cable", "tendon_total_cable"),
            ("segment_material_tension", "tendon_segment_material_tension"),
            ("segment_damping_tension", "tendon_segment_damping_tension"),
            ("transmission_length", "transmission_length"),
            ("transmission_velocity", "transmission_velocity"),
            ("transmission_tension", "transmission_tension"),
            ("transmission_force", "transmission_force"),
            ("transmission_actuation_force", "transmission_actuation_force"),
        ):
            setattr(src, name, getattr(s, attr, self._empty) if s is not None else self._empty)
        src.inputs = self.inputs
        if len(self._sources_cache) > 8:
            self._sources_cache.clear()
        self._sources_cache[key] = (state, src)
        return src

    def compute(self, state) -> wp.array:
        """Fill ``obs`` from ``state`` (and the solver's last diagnostics); returns ``obs``. Graph-capturable."""
        m = self.model
        check_state(f"{type(self).__name__}.compute", "state", state, m)
        if self._needs_joints:
            wp.launch(
                _eval_joint_coordinates_kernel,
                dim=m.joint_count,
                inputs=[self._bodies, self._joints, state.body_q, state.body_qd],
                outputs=[self._joint_q, self._joint_qd],
                device=self.device,
            )
        wp.launch(
            K.gather_observations,
            dim=(self.world_count, self.dim),
            inputs=[self._source, self._component, self._offset, self._scale, self._element, self._sources(state)],
            outputs=[self.obs],
            device=self.device,
        )
        return self.obs
