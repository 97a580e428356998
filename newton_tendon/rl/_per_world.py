"""Per-world randomization: rewriting model parameters world by world between episodes.

:func:`set_per_world` writes per-world values of a model parameter (masses, inertias, tendon
compliance, damping and friction, transmission stiffness, limits, gravity, ...) into the selected
worlds in place. It validates everything before anything changes, refreshes the derived arrays
(inverse masses, the tendon reset baseline) and notifies the solvers. ``PER_WORLD_PARAMETERS``
lists what it can write, with each parameter's domain, shape, rule and solver flag.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from newton_tendon.kernels import observe as K
from newton_tendon.kernels.types import BODY_KINEMATIC

from .._transmission_model import TRANSMISSION_PROPERTY_ARRAYS
from ..finalize import update_tendon_baseline
from ..inertia import checked_inverse_mass_arrays
from ..model import Model, ModelFlags
from ._torch import _is_torch_tensor, _to_numpy
from ._worlds import _DOMAIN_COUNT, _resolve_local, world_entities


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

    ``body_inertia`` replaces the inertia including any world hinge's armature folded into it at
    finalize.
    """
    where = f"set_per_world({name!r})"
    if not isinstance(model, Model):
        raise TypeError(f"{where}: model must be a newton_tendon Model, got {type(model).__name__}")
    if name == "joint_armature":
        raise ValueError(
            f"{where}: joint armature is split at finalize (a world hinge's into the child body's inertia, the rest "
            "into joint_row_armature); it is not a per-world parameter"
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
