"""Reinforcement-learning helpers: batched observations, per-world parameters, world masks, torch interop.

Everything here works on models built from one *template* world repeated with
``ModelBuilder.replicate`` (or ``add_world`` with the same builder): every world then holds the
same entities in the same order, and an entity is named by its *local* index inside its world (or
by its label in the template). The helpers turn local indices into flat indices per world once, on
the host, and then act on every world with one kernel launch.

- :class:`ObservationSpec` and :class:`Observer` gather per-world observation vectors (body poses
  and velocities, joint coordinates, routed-cable and transmission-tendon lengths and tensions,
  user inputs such as goals) into one preallocated ``[world_count, obs_dim]`` float32 array, in one
  launch (two when joint coordinates are observed), without host synchronization; ``compute`` can
  be captured in a CUDA graph.
- :func:`set_per_world` rewrites per-world model parameters (masses, tendon compliance, damping
  and friction, transmission stiffness, limits, gravity, ...) between episodes, validates them
  before anything changes, refreshes the derived arrays and notifies the solvers.
- :func:`copy_world_mask` turns a boolean mask (torch, NumPy, Warp) into the int32 mask that
  ``solver.reset`` takes, into a preallocated array.
- :func:`to_torch` and :func:`from_torch` share memory between Warp arrays and torch tensors.
- :class:`VecEnv` is the base of batched environments (``newton_tendon/examples/env_finger.py``,
  ``newton_tendon/examples/env_payload.py``): ``reset(mask)`` and ``step(actions) -> obs, reward, done`` on torch
  tensors or NumPy arrays, the whole step in one captured graph.

torch is optional: it is imported only inside the functions that need it.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import warp as wp

from newton_tendon.kernels import observe as K
from newton_tendon.kernels.joints import eval_joint_coordinates as _eval_joint_coordinates_kernel
from newton_tendon.kernels.types import BODY_KINEMATIC

from ._transmission_model import TRANSMISSION_PROPERTY_ARRAYS
from .finalize import update_tendon_baseline
from .inertia import checked_inverse_mass_arrays
from .model import Model, ModelFlags, body_model_struct, joint_model_struct

__all__ = [
    "OBSERVATION_QUANTITIES",
    "VecEnv",
    "PER_WORLD_PARAMETERS",
    "ObservationSpec",
    "Observer",
    "copy_world_mask",
    "from_torch",
    "set_per_world",
    "to_torch",
    "world_entities",
]

# ----------------------------------------------------------------------------------------------
# torch interop


def _import_torch(where: str):
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{where} needs PyTorch, which is an optional dependency of newton_tendon; install it with "
            "`pip install torch` (or the package's `torch` extra)"
        ) from e
    return torch


def to_torch(array: wp.array, *, requires_grad: bool = False):
    """A torch tensor sharing ``array``'s memory (no copy), on the matching torch device.

    Writes through either object are seen by the other. Vector and matrix dtypes become trailing
    dimensions (a ``wp.transform`` array of shape [n] becomes a float32 tensor [n, 7]).
    """
    _import_torch("to_torch")
    if not isinstance(array, wp.array):
        raise TypeError(f"to_torch: expected a wp.array, got {type(array).__name__}")
    return wp.to_torch(array, requires_grad=requires_grad)


def from_torch(tensor, dtype=None) -> wp.array:
    """A Warp array sharing ``tensor``'s memory (no copy). ``dtype`` (e.g. ``wp.vec3``) folds trailing
    dimensions into a vector dtype; by default the tensor's scalar type is kept. The tensor must stay
    alive as long as the array is used."""
    torch = _import_torch("from_torch")
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"from_torch: expected a torch.Tensor, got {type(tensor).__name__}")
    return wp.from_torch(tensor, dtype=dtype)


def _is_torch_tensor(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


def _to_numpy(where: str, values) -> np.ndarray:
    """Host copy of array-like ``values`` (NumPy, lists, scalars, wp.array, torch tensor), float64."""
    if isinstance(values, wp.array):
        values = values.numpy()
    elif _is_torch_tensor(values):
        values = values.detach().cpu().numpy()
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where}: values must be numeric array-like, got {type(values).__name__}") from e
    return out


# ----------------------------------------------------------------------------------------------
# Per-world entity tables

_DOMAIN_LABELS = {
    "body": "body_label",
    "joint": "joint_label",
    "shape": "shape_label",
    "tendon": "tendon_label",
    "transmission": "transmission_label",
    "coupling": "coupling_label",
}
_DOMAIN_COUNT = {
    "body": "body_count",
    "joint": "joint_count",
    "joint_dof": "joint_dof_count",
    "shape": "shape_count",
    "tendon": "tendon_count",
    "tendon_guide": "tendon_guide_count",
    "tendon_segment": "tendon_segment_count",
    "transmission": "transmission_count",
    "coupling": "coupling_count",
}
_WORLD_PREFIX = re.compile(r"^world_\d+/")


def _entity_worlds(model: Model, domain: str) -> np.ndarray:
    """World of each entity of ``domain`` (-1 = shared), flat over the model."""
    m = model
    if domain in ("body", "joint", "shape", "tendon", "transmission", "coupling"):
        return getattr(m, f"{domain}_world").numpy()
    if domain == "joint_dof":
        start = m.joint_qd_start.numpy()
        return np.repeat(m.joint_world.numpy(), np.diff(start))
    if domain in ("tendon_guide", "tendon_segment"):
        if not m.tendon_count:
            return np.zeros(0, np.int32)
        counts = np.diff(m.tendon_start.numpy())
        if domain == "tendon_segment":
            counts = counts - 1
        return np.repeat(m.tendon_world.numpy(), counts)
    raise ValueError(f"unknown entity domain {domain!r}; known: {', '.join(_DOMAIN_COUNT)}")


def world_entities(model: Model, domain: str) -> np.ndarray:
    """Flat indices of each world's entities of ``domain``, shape [world_count, per_world], int64.

    Row ``w`` lists world ``w``'s entities in model order, so column ``k`` is the entity with local
    index ``k`` in every world. Shared entities (world -1, e.g. the ground plane) are left out.
    Domains: body, joint, joint_dof, shape, tendon, tendon_guide, tendon_segment, transmission,
    coupling. Raises ``ValueError`` when the worlds hold different numbers of them (the worlds
    were not built from one template).
    """
    if not isinstance(model, Model):
        raise TypeError(f"world_entities: model must be a newton_tendon Model, got {type(model).__name__}")
    worlds = np.asarray(_entity_worlds(model, domain), dtype=np.int64)
    wc = max(model.world_count, 1)
    own = np.nonzero(worlds >= 0)[0]
    counts = np.bincount(worlds[own], minlength=wc)
    if counts.size and np.any(counts != counts[0]):
        w = int(np.nonzero(counts != counts[0])[0][0])
        raise ValueError(
            f"world_entities: the worlds hold different numbers of {domain} entities (world 0: {counts[0]}, "
            f"world {w}: {counts[w]}); per-world selection needs every world built from one template "
            "(ModelBuilder.replicate)"
        )
    per = int(counts[0]) if counts.size else 0
    order = own[np.argsort(worlds[own], kind="stable")]
    return order.reshape(wc, per)


def _resolve_local(where: str, model: Model, domain: str, table: np.ndarray, entities) -> np.ndarray:
    """Local indices (int64) of ``entities``: None (all), ints (local index) or template labels."""
    per = table.shape[1]
    if entities is None:
        return np.arange(per, dtype=np.int64)
    if isinstance(entities, (str, int, np.integer)):
        entities = [entities]
    if not isinstance(entities, Sequence) and not isinstance(entities, np.ndarray):
        raise TypeError(f"{where}: entities must be None, an int, a label or a sequence of them")
    local = []
    for e in entities:
        if isinstance(e, (bool, np.bool_)):
            raise TypeError(f"{where}: {domain} index must be an int or a label, got bool")
        if isinstance(e, (int, np.integer)):
            if not 0 <= int(e) < per:
                raise ValueError(f"{where}: local {domain} index {int(e)} is out of range; each world has {per}")
            local.append(int(e))
        elif isinstance(e, str):
            attr = _DOMAIN_LABELS.get(domain)
            if attr is None:
                raise TypeError(f"{where}: {domain} entities have no labels; select them by local index")
            labels = getattr(model, attr)
            names = [_WORLD_PREFIX.sub("", labels[int(i)]) for i in table[0]] if table.shape[0] else []
            hits = [k for k, n in enumerate(names) if n == e]
            if len(hits) != 1:
                raise ValueError(
                    f"{where}: {'no' if not hits else 'more than one'} {domain} labelled {e!r} in the template "
                    f"world (world 0 has: {', '.join(names) if names else 'none'})"
                )
            local.append(hits[0])
        else:
            raise TypeError(f"{where}: {domain} entities must be ints or labels, got {type(e).__name__}")
    return np.asarray(local, dtype=np.int64)


# ----------------------------------------------------------------------------------------------
# Observations


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


# ----------------------------------------------------------------------------------------------
# Per-world parameters


@dataclass(frozen=True)
class _Parameter:
    domain: str
    shape: tuple
    flag: ModelFlags | None
    rule: str  # "positive", "nonneg", "finite", "unit", "lower", "upper"
    unit: str


_F = ModelFlags
PER_WORLD_PARAMETERS: dict[str, _Parameter] = {
    "gravity": _Parameter("world", (3,), None, "finite", "m/s^2"),
    "body_mass": _Parameter("body", (), _F.BODY_PROPERTIES, "positive", "kg"),
    "body_inertia": _Parameter("body", (3, 3), _F.BODY_PROPERTIES, "finite", "kg m^2"),
    "body_com": _Parameter("body", (3,), _F.BODY_PROPERTIES, "finite", "m"),
    "joint_limit_lower": _Parameter("joint_dof", (), _F.JOINT_PROPERTIES, "lower", "m or rad"),
    "joint_limit_upper": _Parameter("joint_dof", (), _F.JOINT_PROPERTIES, "upper", "m or rad"),
    "joint_target_ke": _Parameter("joint_dof", (), _F.JOINT_PROPERTIES, "nonneg", "N/m or N m/rad"),
    "joint_target_kd": _Parameter("joint_dof", (), _F.JOINT_PROPERTIES, "nonneg", "N s/m or N m s/rad"),
    "shape_mu": _Parameter("shape", (), _F.SHAPE_PROPERTIES, "nonneg", "-"),
    "shape_restitution": _Parameter("shape", (), _F.SHAPE_PROPERTIES, "unit", "-"),
    "tendon_segment_compliance": _Parameter("tendon_segment", (), _F.TENDON_PROPERTIES, "nonneg", "m/N"),
    "tendon_segment_damping": _Parameter("tendon_segment", (), _F.TENDON_PROPERTIES, "nonneg", "N s/m"),
    "tendon_segment_rest_length": _Parameter("tendon_segment", (), _F.TENDON_PROPERTIES, "finite", "m"),
    "tendon_guide_mu": _Parameter("tendon_guide", (), _F.TENDON_PROPERTIES, "nonneg", "-"),
    "coupling_compliance": _Parameter("coupling", (), _F.TRANSMISSION_PROPERTIES, "nonneg", "m/N"),
    "coupling_position_correction": _Parameter("coupling", (), _F.TRANSMISSION_PROPERTIES, "unit", "-"),
}
_TRANSMISSION_RULES = {
    "transmission_spring_lower": "finite",
    "transmission_spring_upper": "finite",
    "transmission_lower_limit": "lower",
    "transmission_upper_limit": "upper",
    "transmission_actuation_lower": "lower",
    "transmission_actuation_upper": "upper",
    "transmission_position_correction": "unit",
}
for _name in TRANSMISSION_PROPERTY_ARRAYS:
    PER_WORLD_PARAMETERS[_name] = _Parameter(
        "transmission", (), _F.TRANSMISSION_PROPERTIES, _TRANSMISSION_RULES.get(_name, "nonneg"), "see Model"
    )
del _name
"""Model arrays :func:`set_per_world` can rewrite: name -> entity domain, per-entity shape, solver flag, rule."""

_BOUND_PAIRS = {
    "joint_limit_lower": "joint_limit_upper",
    "transmission_spring_lower": "transmission_spring_upper",
    "transmission_lower_limit": "transmission_upper_limit",
    "transmission_actuation_lower": "transmission_actuation_upper",
}
_BOUND_PAIRS.update({v: k for k, v in list(_BOUND_PAIRS.items())})

_RULE_TEXT = {
    "positive": "finite and > 0",
    "nonneg": "finite and >= 0",
    "finite": "finite",
    "unit": "in [0, 1]",
    "lower": "a number or -inf (not NaN or +inf)",
    "upper": "a number or +inf (not NaN or -inf)",
}


def _check_rule(where: str, rule: str, v: np.ndarray):
    if rule == "positive":
        bad = ~np.isfinite(v) | (v <= 0.0)
    elif rule == "nonneg":
        bad = ~np.isfinite(v) | (v < 0.0)
    elif rule == "finite":
        bad = ~np.isfinite(v)
    elif rule == "unit":
        bad = ~np.isfinite(v) | (v < 0.0) | (v > 1.0)
    elif rule == "lower":
        bad = np.isnan(v) | (v == np.inf)
    else:
        bad = np.isnan(v) | (v == -np.inf)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{where}: values{list(idx)} = {v[idx]} must be {_RULE_TEXT[rule]}")


def _flat_float_view(arr: wp.array) -> wp.array:
    """The contiguous ``arr`` seen as a flat float32 array (vector and matrix dtypes unrolled)."""
    if not arr.is_contiguous:
        raise ValueError("set_per_world: the model array is not contiguous")
    n = arr.size * (wp.types.type_size_in_bytes(arr.dtype) // 4)
    return wp.array(ptr=arr.ptr, dtype=float, shape=(n,), device=arr.device)


def set_per_world(
    model: Model,
    name: str,
    values,
    *,
    entities=None,
    worlds=None,
    solver=None,
) -> ModelFlags | None:
    """Write per-world values of the model parameter ``name`` into every selected world, in place.

    Args:
        model: a model whose worlds share one template (``ModelBuilder.replicate``).
        name: a key of ``PER_WORLD_PARAMETERS`` (``body_mass``, ``body_inertia``, ``body_com``,
            ``joint_limit_lower``/``_upper``, ``joint_target_ke``/``_kd``, ``shape_mu``,
            ``shape_restitution``, ``tendon_segment_compliance``/``_damping``/``_rest_length``,
            ``tendon_guide_mu``, every ``transmission_*`` property array, ``coupling_compliance``,
            ``coupling_position_correction``, ``gravity``), in the units of that model array.
        values: array-like (NumPy, list, wp.array, torch tensor) of shape
            ``[len(worlds), len(entities), *per_entity_shape]`` (``[len(worlds), 3]`` for gravity);
            per-entity shapes are () for scalars, (3,) for ``body_com``, (3, 3) for ``body_inertia``.
        entities: local indices or template labels of the entities to write (None: all of the
            parameter's domain in each world, in model order).
        worlds: world indices to write (None: all worlds, in order).
        solver: a solver, or a sequence of solvers, to notify with the parameter's ``ModelFlags``.

    Everything is validated before anything is written (shape, finiteness and sign, lower <= upper
    against the partner bound, only dynamic bodies' mass). The derived model arrays are refreshed
    here: ``body_inv_mass``/``body_inv_inertia`` of the written bodies, and the reset baseline
    (``tendon_segment_initial_rest_length``) after a rest-length change. Then each given solver is
    notified. Returns the flag the solvers need (None for gravity), so callers that pass no solver
    can notify later. This is host code (it reads the values on the host); call it between episodes,
    outside captured graphs. A captured graph keeps working, since arrays are edited in place, except
    that giving a spatial transmission tendon armature where none had any changes the solver's launch
    sequence: capture again after such a change.

    ``body_inertia`` replaces the inertia including any joint armature folded into it at finalize.
    """
    where = f"set_per_world({name!r})"
    if not isinstance(model, Model):
        raise TypeError(f"{where}: model must be a newton_tendon Model, got {type(model).__name__}")
    if name == "joint_armature":
        raise ValueError(
            f"{where}: joint armature is folded into the child body's inertia at finalize; write 'body_inertia' instead"
        )
    if not isinstance(name, str) or name not in PER_WORLD_PARAMETERS:
        raise ValueError(
            f"set_per_world: unknown parameter {name!r}; per-world parameters: {', '.join(PER_WORLD_PARAMETERS)}"
        )
    p = PER_WORLD_PARAMETERS[name]
    wc = max(model.world_count, 1)
    if worlds is None:
        wsel = np.arange(wc, dtype=np.int64)
    else:
        if isinstance(worlds, wp.array) or _is_torch_tensor(worlds):
            worlds = _to_numpy(where, worlds)
        wsel = np.asarray(worlds)
        if wsel.ndim != 1 or (wsel.size and not np.issubdtype(wsel.dtype, np.integer)):
            raise TypeError(f"{where}: worlds must be a 1-D sequence of int world indices")
        wsel = wsel.astype(np.int64)
        if wsel.size and (wsel.min() < 0 or wsel.max() >= wc):
            raise ValueError(f"{where}: world indices must be in [0, {wc}), got {wsel.min()}..{wsel.max()}")
        if np.unique(wsel).size != wsel.size:
            raise ValueError(f"{where}: worlds lists a world twice")
    arr = getattr(model, name)
    if p.domain == "world":
        if entities is not None:
            raise ValueError(f"{where}: gravity has one value per world; entities must be None")
        flat = wsel[:, None]
        expected = (wsel.size, *p.shape)
    else:
        if getattr(model, _DOMAIN_COUNT[p.domain]) == 0:
            raise ValueError(f"{where}: the model has no {p.domain} entities")
        table = world_entities(model, p.domain)
        local = _resolve_local(where, model, p.domain, table, entities)
        flat = table[np.ix_(wsel, local)]
        expected = (wsel.size, local.size, *p.shape)
    v = _to_numpy(where, values)
    if v.shape != expected:
        what = (
            "[worlds, 3]"
            if p.domain == "world"
            else f"[worlds, entities{', ' if p.shape else ''}" + (", ".join(str(s) for s in p.shape) + "]")
        )
        raise ValueError(f"{where}: values must have shape {what} = {expected}, got {v.shape}")
    _check_rule(where, p.rule, v)
    v32 = v.astype(np.float32)
    if p.rule != "lower" and p.rule != "upper":
        # float32 rounding can turn a huge finite value into inf.
        _check_rule(where + " (as float32)", p.rule, v32.astype(np.float64))
    idx = flat.reshape(-1)
    if name in _BOUND_PAIRS:
        other = _BOUND_PAIRS[name]
        partner = getattr(model, other).numpy()[idx].reshape(v.shape)
        lo, hi = (v32, partner) if "lower" in name else (partner, v32)
        if np.any(lo > hi):
            i = tuple(int(k) for k in np.argwhere(lo > hi)[0])
            raise ValueError(
                f"{where}: values{list(i)} = {v32[i]} would put the lower bound ({lo[i]}) above the upper "
                f"bound ({hi[i]}); the other bound is model.{other}"
            )
    if name == "body_mass":
        flags = model.body_flags.numpy()[idx]
        mass0 = model.body_mass.numpy()[idx]
        fixed = ((flags & BODY_KINEMATIC) != 0) | (mass0 <= 0.0)
        if np.any(fixed):
            b = int(idx[np.nonzero(fixed)[0][0]])
            raise ValueError(
                f"{where}: body '{model.body_label[b]}' (index {b}) is static or kinematic; only dynamic bodies' mass "
                "can change (the contact pairs were chosen for the finalized motion types)"
            )

    inverse = None
    if p.flag == ModelFlags.BODY_PROPERTIES and idx.size:
        inverse = _new_inverse_mass(where, model, name, idx, v32)

    # Everything checked: write.
    if idx.size:
        width = int(np.prod(p.shape)) if p.shape else 1
        index = wp.array(idx.astype(np.int32), dtype=wp.int32, device=model.device)
        _scatter(index, width, v32, arr)
        if inverse is not None:
            _write_inverse_mass(model, *inverse)
        if name == "tendon_segment_rest_length":
            update_tendon_baseline(model)
    solvers = [] if solver is None else list(solver) if isinstance(solver, (list, tuple)) else [solver]
    for s in solvers:
        if p.flag is not None:
            s.notify_model_changed(p.flag)
    return p.flag


def _new_inverse_mass(where: str, model: Model, name: str, idx: np.ndarray, v32: np.ndarray):
    """Inverse masses and inertias of the bodies ``idx`` once ``name`` holds ``v32`` there, from the
    float32 values the model will store, by finalize's rules (``checked_inverse_mass_arrays`` raises
    naming the body before anything is written); returns (bodies, inv_mass, inv_inertia)."""
    mass = model.body_mass.numpy().astype(np.float64)
    inertia = model.body_inertia.numpy().astype(np.float64)
    if name == "body_mass":
        mass[idx] = v32.reshape(-1)
    elif name == "body_inertia":
        inertia[idx] = v32.reshape(-1, 3, 3)
    moving = (mass > 0.0) & ((model.body_flags.numpy() & BODY_KINEMATIC) == 0)
    inv_mass, inv_inertia = checked_inverse_mass_arrays(where, model.body_label, mass, inertia, moving)
    bodies = np.unique(idx)
    return bodies, inv_mass[bodies], inv_inertia[bodies]


def _write_inverse_mass(model: Model, bodies: np.ndarray, inv_mass: np.ndarray, inv_inertia: np.ndarray):
    index = wp.array(bodies.astype(np.int32), dtype=wp.int32, device=model.device)
    _scatter(index, 1, inv_mass, model.body_inv_mass)
    _scatter(index, 9, inv_inertia, model.body_inv_inertia)


def _scatter(index: wp.array, width: int, values: np.ndarray, out: wp.array):
    """Write ``width`` floats per entry of ``values`` (host, any float dtype; rounded to float32) into
    the entities ``index`` of the model array ``out`` (seen as ``width`` floats per entity)."""
    dev = out.device
    wp.launch(
        K.scatter_floats,
        dim=index.size * width,
        inputs=[index, width, wp.array(values.astype(np.float32).reshape(-1), dtype=float, device=dev)],
        outputs=[_flat_float_view(out)],
        device=dev,
    )


# ----------------------------------------------------------------------------------------------
# World masks


def copy_world_mask(src, out: wp.array) -> wp.array:
    """Copy a per-world selection into the int32 mask ``out`` [world_count] (1 = selected) that
    ``solver.reset`` takes; returns ``out``.

    ``src`` may be None (every world), a torch tensor or wp.array of bool, int32 or float32 (nonzero
    selects; on ``out``'s device it is read by a kernel without a host round trip, so this is
    graph-capturable when ``src`` is a fixed buffer), or NumPy / a list (copied from the host).
    """
    where = "copy_world_mask"
    if not isinstance(out, wp.array) or out.dtype != wp.int32 or out.ndim != 1:
        raise TypeError(f"{where}: out must be a 1-D wp.array of int32")
    n = out.shape[0]
    if src is None:
        out.fill_(1)
        return out
    if _is_torch_tensor(src):
        torch = _import_torch(where)
        if tuple(src.shape) != (n,):
            raise ValueError(f"{where}: mask must have shape ({n},), got {tuple(src.shape)}")
        if src.device != torch.device(wp.device_to_torch(out.device)):
            src = src.to(wp.device_to_torch(out.device))
        if src.dtype not in (torch.bool, torch.int32, torch.float32):
            src = src.to(torch.int32)
        src = wp.from_torch(src.contiguous())
    if isinstance(src, wp.array):
        if src.shape != (n,):
            raise ValueError(f"{where}: mask must have shape ({n},), got {src.shape}")
        if src.device != out.device:
            src = src.to(out.device)
        kernels = {wp.bool: K.mask_from_bool, wp.int32: K.mask_from_int, wp.float32: K.mask_from_float}
        kernel = kernels.get(src.dtype)
        if kernel is None:
            raise TypeError(f"{where}: mask dtype must be bool, int32 or float32, got {src.dtype}")
        wp.launch(kernel, dim=n, inputs=[src], outputs=[out], device=out.device)
        return out
    m = np.asarray(src)
    if m.shape != (n,):
        raise ValueError(f"{where}: mask must have shape ({n},), got {m.shape}")
    out.assign((m != 0).astype(np.int32))
    return out


# ----------------------------------------------------------------------------------------------
# Vectorized environments


class VecEnv(abc.ABC):
    """Base of a batched environment: ``world_count`` copies of one world, stepped together.

    A subclass builds the template world (:meth:`build_world`), names its observations
    (:meth:`observation_spec`) and launches its own kernels in four hooks: :meth:`apply_actions`
    (actions into ``Control``), :meth:`before_substep`, :meth:`evaluate` (``reward``, ``done``) and
    :meth:`reset_worlds` (goals and commands of the worlds being reset). Hooks must only launch
    kernels on fixed buffers (no host reads, no allocation): one env step (actions, ``substeps``
    solver steps, observation, reward, automatic reset of finished worlds) and one reset are each
    captured as a graph when ``use_graph`` is on (the default, on every device) and replayed afterwards.

    Args:
        world_count: number of worlds (>= 1).
        device: Warp device (default: Warp's default device).
        solver: "xpbd" (``SolverXPBD``) or "vbd" (``SolverVBD``).
        backend: "torch" (tensors sharing the env's buffers), "numpy" (copies) or "auto" (torch if
            it can be imported).
        use_graph: capture the step and the reset in graphs (default: on). A CUDA graph on a GPU; on
            the CPU, Warp's capture records the launches and replays them without Python, which is
            most of an env step's time at a few worlds (the finger env: 157 against 6,419 env-steps/s
            at 1 world, 7,406 against 17,652 at 64; the same bits). Off: every launch from Python,
            e.g. to step through the hooks in a debugger.
        auto_reset: reset the worlds whose episode ended at the end of ``step`` (the returned
            ``done`` still flags them; ``obs`` is then the first observation of the new episode).
        seed: seed of the device random numbers used by ``reset_worlds``.

    With the torch backend, ``step`` returns views of the env's buffers, overwritten by the next
    ``step`` or ``reset``; clone what you keep.
    """

    name = "vec_env"
    """Environment name, used in messages."""
    action_dim = 1
    """Actions per world."""
    frame_dt = 1.0 / 60.0
    """Duration of one env step [s]."""
    substeps = 4
    """Solver steps per env step (even, so the two states end where they started)."""
    iterations = 8
    """Solver iterations per solver step."""
    episode_length = 200
    """Env steps per episode (``done`` when reached)."""

    def __init__(
        self,
        world_count: int,
        device=None,
        *,
        solver: str = "xpbd",
        backend: str = "auto",
        use_graph: bool | None = None,
        auto_reset: bool = True,
        seed: int = 0,
    ):
        import newton_tendon as nt

        where = self.name
        if isinstance(world_count, bool) or not isinstance(world_count, (int, np.integer)) or world_count < 1:
            raise ValueError(f"{where}: world_count must be an int >= 1, got {world_count!r}")
        if solver not in ("xpbd", "vbd"):
            raise ValueError(f"{where}: solver must be one of xpbd, vbd, got {solver!r}")
        if backend not in ("auto", "torch", "numpy"):
            raise ValueError(f"{where}: backend must be 'auto', 'torch' or 'numpy', got {backend!r}")
        if self.substeps < 2 or self.substeps % 2:
            raise ValueError(f"{where}: substeps must be even and >= 2, got {self.substeps}")
        if backend == "auto":
            try:
                import torch  # noqa: F401

                backend = "torch"
            except ImportError:
                backend = "numpy"
        elif backend == "torch":
            _import_torch(f"{where}(backend='torch')")
        self.backend = backend
        """"torch" or "numpy": the type ``step`` and ``reset`` return."""
        self.world_count = int(world_count)
        self.solver_name = solver
        self.sim_dt = self.frame_dt / self.substeps
        """Solver step [s]."""
        self.seed = int(seed)
        self.auto_reset = bool(auto_reset)

        world = self.build_world(nt)
        self.template = world
        """The one-world builder every world copies."""
        scene = nt.ModelBuilder(up_axis=world.up_axis, gravity=tuple(world.gravity))
        scene.replicate(world, self.world_count)
        if solver == "vbd":
            scene.color()
        self.model = scene.finalize(device)
        self.device = self.model.device
        solver_class = nt.solvers.SolverVBD if solver == "vbd" else nt.solvers.SolverXPBD
        self.solver = solver_class(self.model, iterations=self.iterations)
        self.state_0 = self.model.state()
        self.state_1 = self.model.state()
        self.control = self.model.control()
        self.observer = Observer(self.model, self.observation_spec(), self.solver)
        self.obs_dim = self.observer.dim
        """Observation size per world."""

        dev = self.device
        w = self.world_count
        self.actions = wp.zeros((w, self.action_dim), dtype=float, device=dev)
        """Actions of the current step [world_count, action_dim] (copied in by ``step``)."""
        self.reward = wp.zeros(w, dtype=float, device=dev)
        """Reward of the last step per world, float32."""
        self.done = wp.zeros(w, dtype=wp.bool, device=dev)
        """True where the last step ended an episode."""
        self.done_mask = wp.zeros(w, dtype=wp.int32, device=dev)
        """``done`` as the int32 world mask ``solver.reset`` takes."""
        self.episode_step = wp.zeros(w, dtype=wp.int32, device=dev)
        """Env steps taken in the current episode per world."""
        self.episode_count = wp.zeros(w, dtype=wp.int32, device=dev)
        """Episodes started per world (seeds the per-world random numbers of ``reset_worlds``)."""
        self.reset_mask = wp.zeros(w, dtype=wp.int32, device=dev)
        """Worlds the next ``reset`` acts on (filled from its argument)."""
        self.setup(nt)

        self.use_graph = True if use_graph is None else bool(use_graph)
        self._step_graph = None
        self._reset_graph = None
        self.reset_mask.fill_(1)
        self._reset_device()  # compiles every kernel before any capture
        self._step_device()
        self._reset_device()
        if self.use_graph:
            with wp.ScopedCapture(device=dev) as cap:
                self._step_device()
            self._step_graph = cap.graph
            with wp.ScopedCapture(device=dev) as cap:
                self._reset_device()
            self._reset_graph = cap.graph
        self._views = None
        if backend == "torch":
            self._views = (to_torch(self.observer.obs), to_torch(self.reward), to_torch(self.done))
            self._action_view = to_torch(self.actions)

    # Hooks -------------------------------------------------------------------------------------

    @abc.abstractmethod
    def build_world(self, nt):
        """Build and return the template world (an ``nt.ModelBuilder`` without worlds)."""

    @abc.abstractmethod
    def observation_spec(self) -> ObservationSpec:
        """The per-world observation (see :class:`ObservationSpec`)."""

    def setup(self, nt) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Per-env buffers and index tables, after the model, solver and observer exist."""

    def apply_actions(self) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Launch kernels that turn ``self.actions`` into ``self.control`` (once per env step)."""

    def before_substep(self) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Launch kernels before each solver step (e.g. ramp a winch command)."""

    @abc.abstractmethod
    def evaluate(self) -> None:
        """Launch kernels that write ``reward``, ``done`` and ``done_mask`` and advance ``episode_step``."""

    def reset_worlds(self, mask: wp.array) -> None:  # noqa: B027 (optional hook, no-op by default)
        """Launch kernels that start new episodes in the worlds where ``mask`` is 1 (goals, commands);
        bodies and tendons were already restored by ``solver.reset``."""

    # Device sequences ----------------------------------------------------------------------------

    def _reset_masked(self, mask: wp.array):
        self.solver.reset(self.state_0, mask)
        wp.launch(
            K.reset_episodes,
            dim=self.world_count,
            inputs=[mask, self.episode_step, self.episode_count],
            device=self.device,
        )
        self.reset_worlds(mask)

    def _reset_device(self):
        self._reset_masked(self.reset_mask)
        # Transmission lengths and rates at the restored poses (the forces stay the last step's).
        self.solver.update_geometry(self.state_0)
        self.observer.compute(self.state_0)

    def _step_device(self):
        self.apply_actions()
        for _ in range(self.substeps):
            self.before_substep()
            self.solver.step(self.state_0, self.state_1, self.control, None, self.sim_dt)
            self.state_0, self.state_1 = self.state_1, self.state_0
        self.observer.compute(self.state_0)
        self.evaluate()
        if self.auto_reset:
            self._reset_masked(self.done_mask)
            self.solver.update_geometry(self.state_0)
            self.observer.compute(self.state_0)

    # Public ---------------------------------------------------------------------------------------

    def _outputs(self):
        if self._views is not None:
            return self._views
        return self.observer.obs.numpy().copy(), self.reward.numpy().copy(), self.done.numpy().copy()

    def reset(self, mask=None):
        """Start new episodes in the worlds selected by ``mask`` ([world_count] bool/int, torch, NumPy
        or Warp; None = all) and return the observations [world_count, obs_dim] of every world."""
        copy_world_mask(mask, self.reset_mask)
        if self._reset_graph is not None:
            wp.capture_launch(self._reset_graph)
        else:
            self._reset_device()
        return self._outputs()[0]

    def step(self, actions):
        """Apply ``actions`` [world_count, action_dim] for one env step (``frame_dt``); returns
        ``(obs [world_count, obs_dim], reward [world_count], done [world_count] bool)``."""
        where = f"{self.name}.step"
        shape = (self.world_count, self.action_dim)
        if _is_torch_tensor(actions):
            if tuple(actions.shape) != shape:
                raise ValueError(f"{where}: actions must have shape {shape}, got {tuple(actions.shape)}")
            # The env's own action view was written in place: nothing to copy.
            if self._views is None or actions.data_ptr() != self._action_view.data_ptr():
                torch = _import_torch(where)
                a = actions.detach().to(device=self._torch_device(), dtype=torch.float32).contiguous()
                wp.copy(self.actions, wp.from_torch(a))
        elif isinstance(actions, wp.array):
            if actions.shape != shape:
                raise ValueError(f"{where}: actions must have shape {shape}, got {actions.shape}")
            wp.copy(self.actions, actions)
        else:
            a = np.asarray(actions, dtype=np.float32)
            if a.shape != shape:
                raise ValueError(f"{where}: actions must have shape {shape}, got {a.shape}")
            self.actions.assign(a)
        if self._step_graph is not None:
            wp.capture_launch(self._step_graph)
        else:
            self._step_device()
        return self._outputs()

    def _torch_device(self):
        return wp.device_to_torch(self.device)

    def random_actions(self, rng: np.random.Generator):
        """Uniform actions in [-1, 1] as the env's backend type (for random-policy rollouts)."""
        a = rng.uniform(-1.0, 1.0, size=(self.world_count, self.action_dim)).astype(np.float32)
        if self.backend == "torch":
            import torch

            return torch.from_numpy(a).to(self._torch_device())
        return a
