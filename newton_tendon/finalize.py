"""Turn a validated ModelBuilder into a Model of Warp arrays (one helper per domain)."""

from __future__ import annotations

import hashlib

import numpy as np
import warp as wp

from newton_tendon.kernels import types as T
from newton_tendon.kernels.cable import measure_baseline
from newton_tendon.kernels.collide import pair_contact_capacity
from newton_tendon.kernels.joints import eval_joint_coordinates

from ._float32 import overflows, range_message
from ._transmission_model import finalize_transmissions
from .axis import Axis
from .inertia import checked_inverse_mass_arrays, quat_to_matrix
from .layout import ModelLayout
from .model import Model, body_model_struct, joint_model_struct, tendon_model_struct
from .tendon import AttributeAssignment, AttributeFrequency


def _resolve_worlds(b) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """World index per body, shape and joint. A builder without worlds becomes world 0."""
    body_world = np.asarray(b.body_world, dtype=np.int32)
    shape_world = np.asarray(b.shape_world, dtype=np.int32)
    joint_world = np.asarray(b.joint_world, dtype=np.int32)
    if b.world_count == 0:
        body_world = np.zeros_like(body_world)
        joint_world = np.zeros_like(joint_world)
        shape_body = np.asarray(b.shape_body, dtype=np.int32)
        # Shapes on bodies follow their body; static world shapes keep their world (-1 = shared).
        shape_world = np.where(shape_body >= 0, 0, shape_world).astype(np.int32)
        return 1, body_world, shape_world, joint_world
    # A static body (mass 0, not kinematic) in world -1 is shared static geometry, as newton allows (its
    # kernels clamp world -1 to 0 where a world is read); a moving one must belong to a world.
    moving = (np.asarray(b.body_mass, dtype=np.float64) > 0.0) | (
        (np.asarray(b.body_flags, dtype=np.int64) & T.BODY_KINEMATIC) != 0
    )
    loose = np.nonzero((body_world < 0) & moving.reshape(body_world.shape))[0]
    if loose.size:
        i = int(loose[0])
        raise ValueError(
            f"finalize: body '{b.body_label[i]}' (index {i}) moves but belongs to no world (-1) while the builder "
            f"has {b.world_count} worlds; add bodies through add_world/replicate or begin_world, or attach static "
            "geometry to body -1"
        )
    return b.world_count, body_world, shape_world, joint_world


def _mass_properties(b):
    """Body mass, inertia and their inverses; immovable bodies get zero inverses; and the armature the
    joints' coordinate rows carry (``row_armature`` per dof).

    Armature is a coordinate's own inertia, in joint space as MuJoCo has it. On a hinge whose parent is
    the world (a revolute joint, or a D6 joint's single angular axis) the joint's rate is the child's
    absolute rate about the axis, so the rotor inertia is exactly the child's inertia about that axis:
    it is added there, where it costs no solver iteration. Every other armature (a hinge between two
    bodies, a slide, a universal joint's angles) stays on its coordinate's row (``coordinate_row``)."""
    n = b.body_count
    mass = np.asarray(b.body_mass, dtype=np.float64).reshape(n)
    inertia = np.array(b.body_inertia, dtype=np.float64).reshape(n, 3, 3)
    flags = np.asarray(b.body_flags, dtype=np.int32).reshape(n)
    row_armature = np.asarray(b.joint_armature, dtype=np.float64).copy()
    qd_start = 0
    for j in range(b.joint_count):
        ndof = b._joint_dof_count(j)
        hinge = None
        if b.joint_type[j] == T.JOINT_REVOLUTE:
            hinge = qd_start
        elif b.joint_type[j] == T.JOINT_D6 and b.joint_dof_dim[j][1] == 1:
            hinge = qd_start + b.joint_dof_dim[j][0]
        if hinge is not None and b.joint_parent[j] < 0 and b.joint_armature[hinge] > 0.0:
            # Rotor inertia about the joint axis, expressed in the child body frame.
            r = quat_to_matrix(b.joint_X_c[j][3:])
            a = r @ np.asarray(b.joint_axis[hinge])
            inertia[b.joint_child[j]] += b.joint_armature[hinge] * np.outer(a, a)
            row_armature[hinge] = 0.0
        qd_start += ndof
    moving = (mass > 0.0) & ((flags & T.BODY_KINEMATIC) == 0)
    # The builder checked each body as it was added; armature and direct list edits are checked here,
    # by the same rule.
    inv_mass, inv_inertia = checked_inverse_mass_arrays("finalize", b.body_label, mass, inertia, moving)
    return mass, inertia, inv_mass, inv_inertia, moving, row_armature


def _entity(b, attr: str, i: int, n: int) -> str:
    """Name entity ``i`` of builder list ``attr`` (``n`` entries) for an error message."""
    kinds = (
        ("body_", "body", b.body_label, b.body_count),
        ("shape_", "shape", b.shape_label, b.shape_count),
        ("joint_", "joint", b.joint_label, b.joint_count),
        ("tendon_guide_", "tendon guide", None, b.tendon_guide_count),
        ("tendon_segment_", "tendon span", None, b.tendon_segment_count),
        ("transmission_", "transmission tendon", b.transmission_label, b.transmission_count),
        ("coupling_", "coupling", b.coupling_label, b.coupling_count),
    )
    for prefix, kind, labels, count in kinds:
        if attr.startswith(prefix) and n == count:
            return f"{kind} {labels[i]!r} (index {i})" if labels is not None else f"{kind} {i}"
    if attr.startswith("joint_") and n == b.joint_dof_count:
        return f"joint dof {i}"
    return f"{attr}[{i}]"


def _float32_values(x, field: str = "") -> list[tuple[str, float]]:
    """Every float in a stored builder value (nested tuples, lists, dicts and arrays) as (field, value):
    dict keys extend the field name (``transmission_properties.stiffness``)."""
    if isinstance(x, (float, np.floating)):
        return [(field, float(x))]
    if isinstance(x, np.ndarray):
        return [(field, v) for v in x.ravel().tolist()] if x.dtype.kind == "f" else []
    if isinstance(x, dict):
        return [fv for k, v in x.items() for fv in _float32_values(v, f"{field}.{k}" if field else str(k))]
    if isinstance(x, (list, tuple)):
        return [fv for item in x for fv in _float32_values(item, field)]
    return []


def _first_overflow_field(items: list[tuple[str, float]]):
    bad = overflows([v for _, v in items]) if items else np.zeros(0, dtype=bool)
    if not bad.any():
        return None
    return items[int(np.argmax(bad))]


def check_float32_range(b):
    """Raise ValueError naming the entity and the field if a finite float the builder stores (poses,
    velocities, masses, sizes, gains, tendon and transmission parameters, custom attributes, gravity)
    overflows float32, the precision of every model array. The add_* checks reject such arguments; this
    pass also covers values the builder derives (add_builder / replicate offsets) and direct list edits."""
    for attr, value in vars(b).items():
        if isinstance(value, dict) and attr == "custom_attribute_values":
            for name, by_index in value.items():
                for i, v in by_index.items():
                    bad = _first_overflow_field(_float32_values(v, f"custom attribute {name!r}[{i}]"))
                    if bad is not None:
                        raise ValueError(f"finalize: {range_message(*bad)}")
            continue
        if isinstance(value, (float, np.floating, tuple)):
            bad = _first_overflow_field(_float32_values(value, attr))
            if bad is not None:
                raise ValueError(f"finalize: {range_message(*bad)}")
            continue
        if not isinstance(value, list) or not value or isinstance(value[0], str):
            continue  # not a list, or a list of labels
        try:
            flat = np.asarray(value, dtype=np.float64).reshape(len(value), -1)
        except (TypeError, ValueError):  # labels, dicts, ragged entries: checked item by item below
            pass
        else:
            if not overflows(flat).any():
                continue
        for i, item in enumerate(value):
            bad = _first_overflow_field(_float32_values(item, attr))
            if bad is not None:
                field, v = bad
                raise ValueError(f"finalize: {_entity(b, attr, i, len(value))}: {range_message(field, v)}")


def _capacity_table() -> np.ndarray:
    """``pair_contact_capacity`` as a table indexed [type_a, type_b] (type_a <= type_b)."""
    n = max(T.SHAPE_TYPE_NAMES) + 1
    return np.array([[pair_contact_capacity(a, c) for c in range(n)] for a in range(n)], dtype=np.int64)


_CAPACITY_TABLE = _capacity_table()


def _pair_keys(lo: np.ndarray, hi: np.ndarray, n: int) -> np.ndarray:
    """One int64 key per unordered index pair (lo <= hi < n)."""
    return lo.astype(np.int64) * n + hi.astype(np.int64)


def _in_pair_set(a: np.ndarray, c: np.ndarray, pairs: set, n: int) -> np.ndarray:
    """Mask of the index pairs (a, c), either order, that ``pairs`` holds as (min, max) tuples."""
    if not pairs or a.size == 0:
        return np.zeros(a.size, dtype=bool)
    listed = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    return np.isin(_pair_keys(np.minimum(a, c), np.maximum(a, c), n), _pair_keys(listed[:, 0], listed[:, 1], n))


def _candidate_pairs(shape_world: np.ndarray, collides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of colliding shapes that share a world or where one is shared (world -1), as two index
    arrays, in a fixed order: the shared shapes' pairs (i < j), then per world in order of its first
    shape, for each of its shapes ``a`` in index order the pairs (shared shape, a), then (a, later shape
    of the world). The count is quadratic in the shapes of one world (every pair gets contact slots);
    the work per pair is a few vectorised operations."""
    shapes = np.nonzero(collides)[0]
    world = shape_world[shapes]
    shared = shapes[world == -1]
    own = shapes[world != -1]
    own_world = world[world != -1]
    k = shared.size
    iu, ju = np.triu_indices(k, 1)
    first_a, first_c = [shared[iu]], [shared[ju]]
    if own.size:
        # Worlds ranked by their first shape; shapes of one world contiguous, in index order.
        ids, first, inverse = np.unique(own_world, return_index=True, return_inverse=True)
        rank = np.empty(ids.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(ids.size)
        order = np.argsort(rank[inverse], kind="stable")
        ordered = own[order]
        group = rank[inverse][order]
        size = np.bincount(group)
        group_start = np.concatenate([[0], np.cumsum(size)])[:-1]
        pos = np.arange(ordered.size, dtype=np.int64)
        later = group_start[group] + size[group] - 1 - pos  # shapes after this one in its world
        length = k + later
        block = np.repeat(pos, length)
        offset = np.arange(block.size, dtype=np.int64) - np.repeat(np.cumsum(length) - length, length)
        with_shared = offset < k
        a = np.where(with_shared, shared[np.minimum(offset, max(k - 1, 0))] if k else 0, ordered[block])
        c = np.where(with_shared, ordered[block], ordered[np.minimum(block + 1 + offset - k, ordered.size - 1)])
        first_a.append(a)
        first_c.append(c)
    return np.concatenate(first_a).astype(np.int64), np.concatenate(first_c).astype(np.int64)


def groups_collide(ga, gc):
    """newton's collision-group rule, elementwise on int arrays: group 0 collides with nothing; a positive
    group collides with the same group and with every negative group; a negative group collides with every
    group except itself and 0."""
    ga, gc = np.asarray(ga, dtype=np.int64), np.asarray(gc, dtype=np.int64)
    return (ga != 0) & (gc != 0) & np.where(ga == gc, ga > 0, (ga < 0) | (gc < 0))


def _contact_pairs(b, shape_world: np.ndarray, moving: np.ndarray, strict: bool = True, with_mu: bool = False):
    """All shape pairs that may touch: same or shared world, at least one moving body, not filtered
    (collision group, shape and body filter pairs), each ordered by shape type (``type_a <= type_b``);
    then the explicit pairs (``add_shape_contact_pair``) that are not among them, whatever their
    groups, filters and ``has_collision`` say.

    ``strict``: raise for a pair whose shape types have no contact routine (finalize); otherwise
    keep it (colouring only needs to know that the bodies may touch). ``with_mu``: also return each
    pair's own friction coefficient (-1: the shapes' mean; only explicit pairs have their own)."""
    ns = b.shape_count
    collides = np.asarray(b.shape_has_collision, dtype=bool).reshape(ns)
    a, c = _candidate_pairs(np.asarray(shape_world, dtype=np.int64).reshape(ns), collides)
    shape_body = np.asarray(b.shape_body, dtype=np.int64).reshape(ns)
    group = np.asarray(b.shape_collision_group, dtype=np.int64).reshape(ns)
    body_moving = np.asarray(moving, dtype=bool).reshape(-1)
    shape_moving = np.zeros(ns, dtype=bool)
    on_body = shape_body >= 0
    shape_moving[on_body] = body_moving[shape_body[on_body]]
    ba, bc = shape_body[a], shape_body[c]
    keep = (ba != bc) & (shape_moving[a] | shape_moving[c])
    keep &= groups_collide(group[a], group[c])
    a, c, ba, bc = a[keep], c[keep], ba[keep], bc[keep]
    keep = ~_in_pair_set(a, c, b.shape_filter_pairs, ns)
    both = (ba >= 0) & (bc >= 0)
    keep[both] &= ~_in_pair_set(ba[both], bc[both], b.body_filter_pairs, max(b.body_count, 1))
    explicit = b.shape_contact_pair_mu
    if explicit:
        keep &= ~_in_pair_set(a, c, set(explicit), ns)
    a, c = a[keep], c[keep]
    pair_mu = np.full(a.size, -1.0)
    mix_max = np.asarray(b.shape_friction_max, dtype=bool).reshape(ns)
    if mix_max.any():
        # MuJoCo's rule for two shapes that both ask for it: the larger friction coefficient.
        mu_s = np.asarray(b.shape_mu, dtype=np.float64).reshape(ns)
        # Equal coefficients keep -1: the mean is then the same number.
        differ = mix_max[a] & mix_max[c] & (mu_s[a] != mu_s[c])
        pair_mu = np.where(differ, np.maximum(mu_s[a], mu_s[c]), -1.0)
    if explicit:
        listed = np.array(sorted(explicit), dtype=np.int64).reshape(-1, 2)
        ea, ec = listed[:, 0], listed[:, 1]
        ok = shape_moving[ea] | shape_moving[ec]
        ea, ec = ea[ok], ec[ok]
        a = np.concatenate([a, ea])
        c = np.concatenate([c, ec])
        pair_mu = np.concatenate([pair_mu, [explicit[(int(x), int(y))] for x, y in zip(ea, ec, strict=True)]])
    kind = np.asarray(b.shape_type, dtype=np.int64).reshape(ns)
    swap = kind[a] > kind[c]
    a, c = np.where(swap, c, a), np.where(swap, a, c)
    ta, tc = kind[a], kind[c]
    unsupported = _CAPACITY_TABLE[ta, tc] == 0
    plane_pair = unsupported & (ta == T.SHAPE_PLANE) & (tc == T.SHAPE_PLANE)
    if strict and (unsupported & ~plane_pair).any():
        i = int(np.argmax(unsupported & ~plane_pair))
        sa, sc, na, nc = int(a[i]), int(c[i]), T.SHAPE_TYPE_NAMES[int(ta[i])], T.SHAPE_TYPE_NAMES[int(tc[i])]
        raise ValueError(
            f"finalize: shapes '{b.shape_label[sa]}' ({na}) and '{b.shape_label[sc]}' ({nc}) may collide, but "
            f"{na}-{nc} contact is not supported; set has_collision=False on one, put them in different positive "
            "collision_groups, or add_shape_collision_filter_pair"
        )
    keep = ~plane_pair
    pairs = np.stack([a[keep], c[keep]], axis=1).astype(np.int32).reshape(-1, 2)
    if with_mu:
        return pairs, pair_mu[keep]
    return pairs


def pair_capacities(b, pairs: np.ndarray) -> np.ndarray:
    """Contact slots of each shape pair (``pair_contact_capacity``), int64 [len(pairs)]."""
    if len(pairs) == 0:
        return np.zeros(0, dtype=np.int64)
    kind = np.asarray(b.shape_type, dtype=np.int64)
    return _CAPACITY_TABLE[kind[pairs[:, 0]], kind[pairs[:, 1]]]


def contact_body_pairs(b) -> list[tuple[int, int]]:
    """Pairs of distinct bodies that own shapes which may touch (for graph colouring)."""
    shape_body = np.asarray(b.shape_body, dtype=np.int64)
    shape_world = np.asarray(b.shape_world, dtype=np.int32)
    if b.world_count == 0:
        shape_world = np.where(shape_body >= 0, 0, shape_world).astype(np.int32)
    mass = np.asarray(b.body_mass, dtype=np.float64)
    flags = np.asarray(b.body_flags, dtype=np.int32)
    moving = (mass > 0.0) & ((flags & T.BODY_KINEMATIC) == 0)
    pairs = _contact_pairs(b, shape_world, moving, strict=False)
    bodies = shape_body[pairs] if len(pairs) else np.zeros((0, 2), dtype=np.int64)
    keep = (bodies[:, 0] >= 0) & (bodies[:, 1] >= 0) & (bodies[:, 0] != bodies[:, 1])
    return [tuple(p) for p in bodies[keep].tolist()]


def transmission_body_groups(b) -> list[list[int]]:
    """Moving-body candidates of each transmission row: one list per tendon (its path or joint
    bodies) and one per coupling (both tendons'), world (-1) excluded."""
    per_tendon = []
    for path, terms in zip(b.transmission_path, b.transmission_terms, strict=True):
        bodies = list(path["body"]) if path else []
        for j, _ in terms:
            bodies.extend((b.joint_parent[j], b.joint_child[j]))
        per_tendon.append([x for x in bodies if x >= 0])
    groups = list(per_tendon)
    for first, second in zip(b.coupling_first, b.coupling_second, strict=True):
        groups.append(per_tendon[first] + (per_tendon[second] if second >= 0 else []))
    return groups


def transmission_slot_bodies(b) -> list[int]:
    """Body of every transmission slot in order: per tendon, its spatial path elements (a pulley: -1)
    or two per fixed-tendon joint term (parent, child); then per coupling, copies of its first and
    second tendon's slots (a coupling's impulse moves both tendons' bodies)."""
    per_tendon: list[list[int]] = []
    for path, terms in zip(b.transmission_path, b.transmission_terms, strict=True):
        bodies = list(path["body"]) if path else []
        for j, _ in terms:
            bodies.extend((b.joint_parent[j], b.joint_child[j]))
        per_tendon.append(bodies)
    out = [body for bodies in per_tendon for body in bodies]
    # Coupling slots: the first tendon's slots, then the second's.
    for first, second in zip(b.coupling_first, b.coupling_second, strict=True):
        out.extend(per_tendon[first])
        if second >= 0:
            out.extend(per_tendon[second])
    return out


def _body_slots(b, pairs: np.ndarray, contact_pair: np.ndarray):
    """CSR table of the constraint slots touching each body, sorted by slot for a fixed gather order.

    Slots: joints (2 per joint), tendon guides (2 per guide: incoming and outgoing span),
    transmission slots (one per spatial path element, two per fixed-tendon joint term), contacts
    (2 per contact slot); see ``newton_tendon.kernels.rigid``.
    """
    jp = np.asarray(b.joint_parent, dtype=np.int64)
    jc = np.asarray(b.joint_child, dtype=np.int64)
    jidx = np.arange(b.joint_count, dtype=np.int64)
    shape_body = np.asarray(b.shape_body, dtype=np.int64)
    gbody = np.asarray(b.tendon_guide_body, dtype=np.int64)
    gidx = np.arange(gbody.size, dtype=np.int64)
    tbase = 2 * b.joint_count
    xbase = tbase + 2 * gbody.size
    xbody = np.asarray(transmission_slot_bodies(b), dtype=np.int64)
    base = xbase + xbody.size
    cs = np.arange(contact_pair.shape[0], dtype=np.int64)
    body_a = shape_body[pairs[contact_pair, 0]] if cs.size else cs
    body_b = shape_body[pairs[contact_pair, 1]] if cs.size else cs
    bodies = np.concatenate([jp, jc, gbody, gbody, xbody, body_a, body_b])
    slots = np.concatenate(
        [
            2 * jidx,
            2 * jidx + 1,
            tbase + 2 * gidx,
            tbase + 2 * gidx + 1,
            xbase + np.arange(xbody.size, dtype=np.int64),
            base + 2 * cs,
            base + 2 * cs + 1,
        ]
    )
    keep = bodies >= 0
    bodies, slots = bodies[keep], slots[keep]
    order = np.lexsort((slots, bodies))
    counts = np.bincount(bodies, minlength=b.body_count) if bodies.size else np.zeros(b.body_count, dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return start, slots[order].astype(np.int32)


def finalize_model(b, device=None, requires_grad: bool = False) -> Model:
    """Build the Model; every check runs before any array is created."""
    world_count, body_world, shape_world, joint_world = _resolve_worlds(b)
    check_float32_range(b)
    mass, inertia, inv_mass, inv_inertia, moving, row_armature = _mass_properties(b)
    pairs, pair_mu = _contact_pairs(b, shape_world, moving, with_mu=True)
    caps = pair_capacities(b, pairs)
    contact_pair = np.repeat(np.arange(len(pairs), dtype=np.int32), caps)
    pair_first = np.concatenate([[0], np.cumsum(caps)])[:-1] if len(caps) else np.zeros(0, dtype=np.int64)
    contact_sub = (np.arange(contact_pair.size) - np.repeat(pair_first, caps)).astype(np.int32)
    slot_start, slot = _body_slots(b, pairs, contact_pair)

    m = Model(device)
    dev = m.device
    # Kept for the solvers, which are not differentiable and say so when built on such a model (as
    # newton's tendon solvers do); eval_fk, eval_ik and the builder's data work without gradients.
    m.requires_grad = bool(requires_grad)

    def arr(x, dtype, shape_n=None):
        a = np.asarray(
            x, dtype=np.float32 if dtype in (float, wp.transform, wp.vec3, wp.mat33, wp.spatial_vector) else np.int32
        )
        if shape_n is not None and a.size == 0:
            return wp.zeros(shape_n, dtype=dtype, device=dev)
        return wp.array(a, dtype=dtype, device=dev)

    m.world_count = world_count
    m._implicit_world = b.world_count == 0
    m.up_axis = Axis.from_any(b.up_axis, "finalize: ModelBuilder.up_axis")
    m.gravity = wp.array(np.tile(np.asarray(b.gravity, dtype=np.float32), (world_count, 1)), dtype=wp.vec3, device=dev)

    nb = b.body_count
    m.body_count = nb
    m.body_q = arr(np.reshape(b.body_q, (nb, 7)), wp.transform, 0)
    m.body_qd = arr(np.reshape(b.body_qd, (nb, 6)), wp.spatial_vector, 0)
    m.body_com = arr(np.reshape(b.body_com, (nb, 3)), wp.vec3, 0)
    m.body_mass = arr(mass, float, 0)
    m.body_inv_mass = arr(inv_mass, float, 0)
    m.body_inertia = arr(inertia, wp.mat33, 0)
    m.body_inv_inertia = arr(inv_inertia, wp.mat33, 0)
    m.body_flags = arr(b.body_flags, wp.int32, 0)
    m.body_world = arr(body_world, wp.int32, 0)
    m.body_label = list(b.body_label)
    colors = b.body_color if b.body_color is not None and len(b.body_color) == nb else [-1] * nb
    m.body_color = arr(colors, wp.int32, 0)
    m.body_color_count = (max(colors) + 1) if nb and min(colors) >= 0 else 0
    m.body_slot_start = arr(slot_start, wp.int32)
    m.body_slot = arr(slot, wp.int32, 0)

    ns = b.shape_count
    m.shape_count = ns
    m.shape_type = arr(b.shape_type, wp.int32, 0)
    m.shape_body = arr(b.shape_body, wp.int32, 0)
    m.shape_transform = arr(np.reshape(b.shape_transform, (ns, 7)), wp.transform, 0)
    m.shape_scale = arr(np.reshape(b.shape_scale, (ns, 3)), wp.vec3, 0)
    m.shape_mu = arr(b.shape_mu, float, 0)
    m.shape_restitution = arr(b.shape_restitution, float, 0)
    m.shape_collision_group = arr(b.shape_collision_group, wp.int32, 0)
    m.shape_margin = arr(b.shape_margin, float, 0)
    m.shape_gap = arr(b.shape_gap, float, 0)
    m.shape_world = arr(shape_world, wp.int32, 0)
    m.shape_label = list(b.shape_label)
    m.shape_mesh = list(b.shape_mesh)
    mesh_range, chunks = np.zeros((ns, 2), dtype=np.int32), []
    digest_of: dict[int, bytes] = {}  # id(vertices) -> their digest (replicated worlds share arrays)
    start_of: dict[bytes, int] = {}  # digest -> first vertex in mesh_points (equal meshes share one copy)
    start = 0
    in_pair = np.zeros(ns, dtype=bool)
    if len(pairs):
        in_pair[np.asarray(pairs, dtype=np.int64).ravel()] = True
    for i, mesh in enumerate(b.shape_mesh):
        if mesh is None or not in_pair[i]:
            continue
        verts = mesh[0]
        if id(verts) not in digest_of:
            digest_of[id(verts)] = hashlib.sha1(np.ascontiguousarray(verts, dtype=np.float32).tobytes()).digest()
        key = digest_of[id(verts)]
        if key not in start_of:
            start_of[key] = start
            chunks.append(verts)
            start += len(verts)
        mesh_range[i] = (start_of[key], len(verts))
    m.shape_mesh_range = arr(mesh_range, wp.vec2i, 0)
    m.mesh_points = arr(np.concatenate(chunks) if chunks else np.zeros((1, 3)), wp.vec3)
    m.rigid_contact_margin = float(b.rigid_contact_margin)
    m.shape_contact_pair_count = len(pairs)
    m.shape_contact_pairs = arr(pairs, wp.vec2i, 0)
    m.shape_contact_pair_mu = arr(pair_mu, float, 0)
    m.contact_capacity = int(contact_pair.size)
    m.contact_pair = arr(contact_pair, wp.int32, 0)
    m.contact_sub = arr(contact_sub, wp.int32, 0)

    nj = b.joint_count
    q_count = np.array([b._joint_coord_count(j) for j in range(b.joint_count)], dtype=np.int64)
    qd_count = np.array([b._joint_dof_count(j) for j in range(b.joint_count)], dtype=np.int64)
    m.joint_count = nj
    m.joint_type = arr(b.joint_type, wp.int32, 0)
    m.joint_parent = arr(b.joint_parent, wp.int32, 0)
    m.joint_child = arr(b.joint_child, wp.int32, 0)
    m.joint_X_p = arr(np.reshape(b.joint_X_p, (nj, 7)), wp.transform, 0)
    m.joint_X_c = arr(np.reshape(b.joint_X_c, (nj, 7)), wp.transform, 0)
    m.joint_enabled = arr([int(e) for e in b.joint_enabled], wp.int32, 0)
    m.joint_world = arr(joint_world, wp.int32, 0)
    m.joint_label = list(b.joint_label)
    m.joint_dof_dim = arr(np.reshape(np.asarray(b.joint_dof_dim, dtype=np.int32), (nj, 2)), wp.vec2i, 0)
    m.joint_q_start = arr(np.concatenate([[0], np.cumsum(q_count)]), wp.int32)
    m.joint_qd_start = arr(np.concatenate([[0], np.cumsum(qd_count)]), wp.int32)
    m.joint_coord_count = int(q_count.sum())
    m.joint_dof_count = int(qd_count.sum())
    nd = m.joint_dof_count
    m.joint_axis = arr(np.reshape(b.joint_axis, (nd, 3)), wp.vec3, 0)
    m.joint_limit_lower = arr(b.joint_limit_lower, float, 0)
    m.joint_limit_upper = arr(b.joint_limit_upper, float, 0)
    m.joint_target_ke = arr(b.joint_target_ke, float, 0)
    m.joint_target_kd = arr(b.joint_target_kd, float, 0)
    m.joint_armature = arr(b.joint_armature, float, 0)
    m.joint_row_armature = arr(row_armature, float, 0)
    m.joint_target_pos = arr(b.joint_target_pos, float, 0)
    m.joint_target_vel = arr(b.joint_target_vel, float, 0)
    m.joint_limit_ke = arr(b.joint_limit_ke, float, 0)
    m.joint_limit_kd = arr(b.joint_limit_kd, float, 0)
    m.joint_effort_limit = arr(b.joint_effort_limit, float, 0)
    m.joint_velocity_limit = arr(b.joint_velocity_limit, float, 0)
    m.joint_target_mode = arr(b.joint_target_mode, wp.int32, 0)
    m.articulation_count = b.articulation_count
    m.articulation_start = arr(list(b.articulation_start) + [b.articulation_joint_end], wp.int32)
    _joint_coordinates(b, m, arr)
    _tendons(b, m, arr, world_count)
    finalize_transmissions(b, m, world_count)
    _custom_attributes(b, m)
    # The fingerprint every State, Control and contact buffer of the model is stamped with.
    m._layout = ModelLayout.of(m)
    return m


def fk_joint_order(b) -> tuple[np.ndarray, np.ndarray]:
    """Each joint's articulation (-1 = none), and each articulation's joints ordered so that a joint comes
    after the joint of the same articulation whose child is its parent (eval_fk's walk; a loop of joints
    that never reaches the world or another body keeps the builder's order)."""
    joint_articulation = np.full(b.joint_count, -1, dtype=np.int32)
    bounds = list(b.articulation_start) + [b.articulation_joint_end]
    order = []
    for a in range(b.articulation_count):
        joints = range(bounds[a], bounds[a + 1])
        joint_articulation[bounds[a] : bounds[a + 1]] = a
        placed_by = {b.joint_child[j]: j for j in joints}
        depth = {}
        for j in joints:
            chain = []
            k = j
            # Climb to the first joint of known depth or whose parent no joint here places.
            while k not in depth and k not in chain:
                chain.append(k)
                k = placed_by.get(b.joint_parent[k], -1)
                if k < 0:
                    break
            d = depth.get(k, -1) if k >= 0 else -1
            for i in reversed(chain):
                d += 1
                depth[i] = d
        order.extend(sorted(joints, key=lambda j: (depth[j], j)))
    return joint_articulation, np.asarray(order, dtype=np.int32)


def _joint_coordinates(b, m: Model, arr):
    """The FK walk order, and newton's initial ``joint_q`` / ``joint_qd``: the coordinates of the initial
    body poses and velocities, so forward kinematics from them keeps every body where it was built."""
    joint_articulation, order = fk_joint_order(b)
    m.joint_articulation = arr(joint_articulation, wp.int32, 0)
    m._fk_joint_order = arr(order, wp.int32, 0)
    m.joint_q = wp.zeros(m.joint_coord_count, dtype=float, device=m.device)
    m.joint_qd = wp.zeros(m.joint_dof_count, dtype=float, device=m.device)
    if m.joint_count:
        wp.launch(
            eval_joint_coordinates,
            dim=m.joint_count,
            inputs=[body_model_struct(m), joint_model_struct(m), m.body_q, m.body_qd],
            outputs=[m.joint_q, m.joint_qd],
            device=m.device,
        )


def _tendons(b, m: Model, arr, world_count: int):
    """Routed-tendon arrays, and the initial material (measured rest lengths, roller activity)."""
    nt, ng, nseg = b.tendon_count, b.tendon_guide_count, b.tendon_segment_count
    m.tendon_count = nt
    m.tendon_guide_count = ng
    m.tendon_segment_count = nseg
    m.tendon_start = arr(list(b.tendon_start) + [ng], wp.int32)
    tw = np.asarray(b.tendon_world, dtype=np.int32)
    if b.world_count == 0:
        tw = np.zeros_like(tw)
    m.tendon_world = arr(tw, wp.int32, 0)
    m.tendon_label = list(b.tendon_label)
    m.tendon_guide_body = arr(b.tendon_guide_body, wp.int32, 0)
    m.tendon_guide_type = arr(b.tendon_guide_type, wp.int32, 0)
    m.tendon_guide_flags = arr(b.tendon_guide_flags, wp.int32, 0)
    m.tendon_guide_offset = arr(np.reshape(b.tendon_guide_offset, (ng, 3)), wp.vec3, 0)
    m.tendon_guide_axis = arr(np.reshape(b.tendon_guide_axis, (ng, 3)), wp.vec3, 0)
    m.tendon_guide_radius = arr(b.tendon_guide_radius, float, 0)
    m.tendon_guide_orientation = arr(b.tendon_guide_orientation, wp.int32, 0)
    m.tendon_guide_mu = arr(b.tendon_guide_mu, float, 0)
    m.tendon_segment_compliance = arr(b.tendon_segment_compliance, float, 0)
    m.tendon_segment_damping = arr(b.tendon_segment_damping, float, 0)
    m.tendon_segment_rest_length = arr(b.tendon_segment_rest_length, float, 0)
    m.tendon_segment_initial_rest_length = wp.zeros(nseg, dtype=float, device=m.device)
    m.tendon_guide_initial_active = wp.zeros(ng, dtype=wp.int32, device=m.device)
    update_tendon_baseline(m)


def update_tendon_baseline(m: Model):
    """Recompute ``tendon_segment_initial_rest_length`` and ``tendon_guide_initial_active`` in place
    from ``tendon_segment_rest_length`` (negative = measure) at the model's initial pose."""
    if m.tendon_count == 0:
        return
    wp.launch(
        measure_baseline,
        dim=m.tendon_count,
        inputs=[tendon_model_struct(m), m.body_q, m.tendon_segment_rest_length],
        outputs=[m.tendon_segment_initial_rest_length, m.tendon_guide_initial_active],
        device=m.device,
    )


def _custom_attributes(b, m: Model):
    """One array per declared custom attribute, ``default`` where no value was authored; MODEL ones are
    also reached as ``model.<name>`` / ``model.<namespace>.<name>`` (State/Control ones on each state
    and control, see ``Model.state``)."""
    m.custom_attributes = {}
    m.custom_attribute_frequency = {}
    m.custom_attribute_assignment = {}
    m.custom_attribute_references = {}
    for key, attr in b.custom_attributes.items():
        n = b._domain_count(AttributeFrequency(attr.frequency).domain)
        if attr.dtype == "vec3":
            values = np.tile(np.asarray(attr.default, dtype=np.float32), (n, 1))
            dtype = wp.vec3
        else:
            values = np.full(n, attr.default, dtype=np.float32 if attr.dtype is float else np.int32)
            dtype = float if attr.dtype is float else wp.int32
        for i, v in b.custom_attribute_values[key].items():
            values[i] = v
        m.custom_attributes[key] = wp.array(values, dtype=dtype, device=m.device)
        m.custom_attribute_frequency[key] = AttributeFrequency(attr.frequency)
        m.custom_attribute_assignment[key] = AttributeAssignment(attr.assignment)
        m.custom_attribute_references[key] = attr.references
    m._attach_custom_attributes(m, AttributeAssignment.MODEL, "finalize")
