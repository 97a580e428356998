"""``add_usd``: the entry point that imports a whole UsdPhysics stage (with its tendons) into a builder.

The stage is opened and checked for composition errors, parsed by ``_Importer``, built into a
scratch builder with the tendon importer, and merged with ``add_builder`` only when everything
parsed. ``write_tendons`` here forwards to the tendon writer, so this module needs no ``pxr`` until
it is called.
"""

from __future__ import annotations

import numpy as np

from newton_tendon import _hostmath as hm
from newton_tendon.builder import ModelBuilder, _flag, _real, _xform

from ._composition import _open_stage, check_composition
from ._physics_attrs import _MESH_APPROXIMATIONS
from ._physics_importer import _Importer


def add_usd(
    builder,
    source,
    *,
    xform=None,
    world: int | None = None,
    default_density: float = 1000.0,
    mesh_approximation: str | None = None,
    strict: bool = True,
    label_prefix: str = "",
    apply_gravity: bool = True,
) -> dict:
    """Append the UsdPhysics scene of a USD stage to ``builder``.

    Builds rigid bodies (``PhysicsRigidBodyAPI``), collision shapes (``PhysicsCollisionAPI`` on Sphere,
    Cube, Capsule, Cylinder, Plane; Mesh only as a bounding box on request), joints (revolute,
    prismatic, fixed, spherical, with limits and drives), articulations (``PhysicsArticulationRootAPI``),
    collision filters (``PhysicsFilteredPairsAPI``, ``PhysicsCollisionGroup``), physics materials and the
    tendons of :mod:`newton_tendon.usd_tendons`. Stage units (``metersPerUnit``, ``kilogramsPerUnit``)
    become SI and a Y-up stage is rotated to Z-up. Labels of bodies, shapes, joints, tendons and
    transmissions are ``label_prefix`` + their prim path; articulation labels are ``label_prefix`` +
    the root prim's path. The gravity of the stage's first ``PhysicsScene`` becomes ``builder.gravity``
    (see ``apply_gravity``).

    Args:
        builder: the :class:`~newton_tendon.ModelBuilder` to append to. It is changed only when the
            whole stage imported without error.
        source: a path to a ``.usd``/``.usda``/``.usdc`` file or an open ``pxr.Usd.Stage``.
        xform: where to place the stage in ``builder`` (px, py, pz, qx, qy, qz, qw) [m], applied after
            the unit and up-axis conversion; default identity.
        world: world index for the imported entities (default ``builder.current_world``).
        default_density: density [kg/m^3] of collision shapes with no density from MassAPI or material.
        mesh_approximation: ``None`` (a Mesh collider raises ``ValueError``) or ``"box"`` (the bounding
            box of the mesh points in its local frame, as a solid box).
        strict: when True (default), well-formed physics we cannot represent (finite drive
            ``maxForce``, acceleration drives, spherical cone limits, breakable joints, inverted
            collision groups, ``MjcActuator`` prims on joints or sites) raises ``ValueError``; when False
            it is ignored with a logged warning. A stage that did not compose (a missing referenced
            file or prim, sublayer or payload, a reference cycle, an inherit of a prim defined
            nowhere) raises ``ValueError`` naming the prim and layer; with ``strict=False`` it warns
            (``UsdCompositionWarning``) and what did compose is imported.
        label_prefix: prepended to every label the import adds (bodies, shapes, joints, articulations,
            free joints, routed cables, transmission tendons, couplings), so one stage can be imported
            twice. An import whose transmission or coupling labels would repeat ones already in
            ``builder`` raises ``ValueError``.
        apply_gravity: when True (default) and the stage has a ``PhysicsScene``, set ``builder.gravity``
            to its gravity [m/s^2] (SI, Z-up, rotated by ``xform``; the ``"gravity"`` entry of the
            result). A stage without a scene leaves the builder's gravity as it is. False never
            changes it.

    Returns:
        A dict: ``"bodies"``, ``"shapes"``, ``"joints"`` map prim paths to indices in ``builder``
        (a disabled rigid body maps to -1); ``"free_joints"`` maps the body path of each floating
        articulation root to the free joint added for it; ``"articulations"`` maps root prim paths to
        articulation indices; ``"tendons"``, ``"transmissions"``, ``"couplings"`` map the prim paths of
        what the tendon importer added to their indices (keys never carry ``label_prefix``);
        ``"gravity"`` is the stage's PhysicsScene gravity [m/s^2] in the Z-up frame rotated by
        ``xform`` (USD's default, 9.81 m/s^2 along -up, when the stage has no scene);
        ``"gravity_applied"`` tells whether it was written to ``builder.gravity``;
        ``"meters_per_unit"``, ``"kilograms_per_unit"``, ``"up_axis"`` echo the stage metadata.

    Raises:
        TypeError: a wrong argument type, or an attribute of the wrong type (naming the prim path).
        ValueError: malformed or unsupported content, naming the prim path and the rule.
        FileNotFoundError: ``source`` is a path that does not exist.
    """
    # Imported before any stage is opened: it registers the native tendon schema with USD.
    from ._tendon_import import import_usd_tendons

    if not isinstance(builder, ModelBuilder):
        raise TypeError(f"add_usd: builder must be a ModelBuilder, got {type(builder).__name__}")
    xf = _xform("add_usd", "xform", xform)
    default_density = _real("add_usd", "default_density", default_density, lo=0.0)
    strict = _flag("add_usd", "strict", strict)
    apply_gravity = _flag("add_usd", "apply_gravity", apply_gravity)
    if not isinstance(label_prefix, str):
        raise TypeError(f"add_usd: label_prefix must be a str, got {type(label_prefix).__name__}")
    if mesh_approximation not in _MESH_APPROXIMATIONS:
        raise ValueError(f"add_usd: mesh_approximation must be None or 'box', got {mesh_approximation!r}")
    if world is not None and (isinstance(world, bool) or not isinstance(world, (int, np.integer))):
        raise TypeError(f"add_usd: world must be an int, got {type(world).__name__}")
    stage = _open_stage(source)
    check_composition(stage, strict=strict, owner=f"add_usd({stage.GetRootLayer().identifier})")

    imp = _Importer(stage, default_density=default_density, mesh_approximation=mesh_approximation, strict=strict)
    imp.collect()
    scratch = ModelBuilder(up_axis="Z", gravity=builder.gravity)
    local = {k: {} for k in ("bodies", "shapes", "joints", "free_joints", "articulations")}
    imp.build_bodies(scratch)
    imp.build_joints(scratch, local)
    imp.build_filters(scratch)
    body_map = {path: b.index for path, b in imp.bodies.items()}
    body_map.update((path, -1) for path in imp.disabled_bodies)
    import_usd_tendons(scratch, stage, body_map, imp.mpu, imp.up, strict=strict)
    where = f"add_usd({stage.GetRootLayer().identifier})"
    for kind, labels, existing in (
        ("transmission tendon", scratch.transmission_label, set(builder.transmission_label)),
        ("coupling", scratch.coupling_label, set(builder.coupling_label)),
    ):
        for label in labels:
            if label_prefix + label in existing:
                raise ValueError(
                    f"{where}: the builder already has a {kind} labelled {label_prefix + label!r} (from prim "
                    f"<{label}>); pass a label_prefix"
                )
    rot = xf[3:]
    gravity = tuple(float(c) for c in hm.quat_rotate(rot, imp.gravity()))

    counts = (
        builder.body_count,
        builder.shape_count,
        builder.joint_count,
        builder.articulation_count,
        builder.tendon_count,
        builder.transmission_count,
        builder.coupling_count,
    )
    builder.add_builder(scratch, xf, world, label_prefix=label_prefix)
    gravity_applied = apply_gravity and bool(imp.scene_prims)
    if gravity_applied:
        builder.gravity = gravity
    b0, s0, j0, a0, t0, tr0, c0 = counts
    return {
        "bodies": {p: (i + b0 if i >= 0 else -1) for p, i in body_map.items()},
        "shapes": {s.path: s.index + s0 for s in imp.shapes},
        "joints": {p: i + j0 for p, i in local["joints"].items()},
        "free_joints": {p: i + j0 for p, i in local["free_joints"].items()},
        "articulations": {p: i + a0 for p, i in local["articulations"].items()},
        "tendons": {lbl: i + t0 for i, lbl in enumerate(scratch.tendon_label)},
        "transmissions": {lbl: i + tr0 for i, lbl in enumerate(scratch.transmission_label)},
        "couplings": {lbl: i + c0 for i, lbl in enumerate(scratch.coupling_label)},
        "gravity": gravity,
        "gravity_applied": gravity_applied,
        "meters_per_unit": imp.mpu,
        "kilograms_per_unit": imp.kpu,
        "up_axis": imp.up_axis,
    }


def write_tendons(stage, builder_or_model, **kwargs):
    """Author the routed cables and transmission tendons of a builder or Model on ``stage``.
    See :func:`newton_tendon.usd_tendons.write_tendons`."""
    from ._tendon_export import write_tendons as _write

    return _write(stage, builder_or_model, **kwargs)
