"""Per-world entity tables: which flat model entities each world holds, and local selections.

The RL helpers work on models built from one *template* world repeated with
``ModelBuilder.replicate``: every world holds the same entities in the same order, so an entity is
named by its *local* index inside its world (or by its label in the template). ``world_entities``
turns a domain into a [world_count, per_world] table of flat indices once, on the host;
``_resolve_local`` turns a user's selection (None, local indices, template labels) into columns of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..model import Model

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
