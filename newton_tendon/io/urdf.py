"""URDF import (``ModelBuilder.add_urdf``): a robot description into bodies, joints and shapes, so
cables and tendons can be routed over a robot the user already has.

The file is read by ``yourdfpy`` (the optional ``urdf`` extra); this module maps what it read.
Links joined by ``fixed`` joints are one rigid body: their masses, centres of mass and inertias are
combined (parallel-axis theorem, float64) and their shapes and frames move onto the body, as
MuJoCo's URDF compiler fuses static bodies. This also gives massless frames (tool flanges,
sensors) a home: in maximal coordinates a massless body on a joint could not move. Every link frame
stays addressable through ``UrdfImport.links`` (body and pose in its frame), the way MJCF sites are.

Joints: revolute (limits), continuous, prismatic (limits), floating (a free joint, root only) and
planar (a D6 joint, two linear axes across the URDF axis and a hinge about it); ``dynamics damping``
is the joint drive's damping (target velocity 0), ``limit effort/velocity`` are stored as newton's
``effort_limit``/``velocity_limit``; ``dynamics friction`` (dry friction) is the friction loss of a
one-joint fixed tendon on the coordinate (labelled ``<joint>/friction``). Geometry: boxes, spheres,
cylinders and meshes (STL or OBJ files, with ``scale``; ``package://name/...`` is looked up in
``package_dirs``, else in the folders above the URDF; collision shapes collide as their convex
hull, visual ones draw without colliding); masses come from ``<inertial>`` only (shapes add none).
Left out, with one ``UrdfImportWarning`` per feature naming the elements (``strict=True`` raises
instead): mesh files that are missing or of another type (Collada ``.dae``), mimic joints, safety
controllers and calibration.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from newton_tendon import _hostmath as hm
from newton_tendon.builder.joints import JointDofConfig
from newton_tendon.inertia import check_body_inertia
from newton_tendon.kernels import types as T

from ._import_report import coordinate_starts, warn_left_out
from .mesh_files import MESH_SUFFIXES, load_mesh

UNSUPPORTED = {
    "mesh geometry": (
        "a mesh file that cannot be found or is not STL or OBJ (Collada .dae, for one) is left out: the link "
        "keeps its inertial and its other shapes"
    ),
    "mimic joints": "a mimic joint moves on its own: the coupling to its leader is left out",
    "safety controllers": "safety_controller limits are ignored (the joint keeps its <limit>)",
    "calibration": "calibration references are ignored",
}
"""What ``add_urdf`` leaves out, with why (``strict=True`` raises ValueError for each)."""


class UrdfImportWarning(UserWarning):
    """A URDF feature ``add_urdf`` leaves out (``UNSUPPORTED``); ``strict=True`` makes it an error."""


@dataclass
class UrdfImport:
    """What ``add_urdf`` added, by URDF name (indices into the caller's builder)."""

    bodies: dict[str, int] = field(default_factory=dict)
    """Link name -> body index: links joined by fixed joints share their group's body."""
    links: dict[str, tuple[int, tuple]] = field(default_factory=dict)
    """Link name -> (body index, the link frame in that body's frame (px, py, pz, qx, qy, qz, qw) [m])."""
    joints: dict[str, int] = field(default_factory=dict)
    """Moving joint name -> joint index (fixed joints fuse their links and leave no joint)."""
    joint_coords: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Revolute, continuous and prismatic joint name -> (index into ``joint_q``, into ``joint_qd``)."""
    shapes: dict[str, list[int]] = field(default_factory=dict)
    """Link name -> its shape indices (collision shapes first, then visual ones)."""
    unsupported: dict[str, list[str]] = field(default_factory=dict)
    """Feature -> the elements that use it, for what the import left out (``UNSUPPORTED``)."""


def _yourdfpy():
    try:
        import yourdfpy
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ImportError("add_urdf needs the optional 'yourdfpy' package: pip install 'newton-tendon[urdf]'") from None
    return yourdfpy


def _pose(matrix) -> tuple:
    """(px, py, pz, qx, qy, qz, qw) of a 4x4 homogeneous transform (None: identity)."""
    if matrix is None:
        return hm.IDENTITY
    m = np.asarray(matrix, dtype=np.float64)
    q = np.asarray(hm.quat_from_matrix(m[:3, :3]), dtype=np.float64)
    q /= np.linalg.norm(q)
    return (*m[:3, 3].tolist(), *q.tolist())


def _rotation(pose) -> np.ndarray:
    from newton_tendon.inertia import quat_to_matrix

    return np.asarray(quat_to_matrix(pose[3:]), dtype=np.float64)


def _mesh_path(filename: str, folder: str, package_dirs: dict) -> str | None:
    """The file a URDF mesh ``filename`` names, or None when it cannot be found: ``file://`` and plain
    paths (relative to the URDF's ``folder``), and ``package://name/rest``, looked up in
    ``package_dirs[name]`` or else as ``name/rest`` and ``rest`` in the URDF's folder and the folders
    above it (where a ROS package's own URDF usually sits)."""
    if filename.startswith("file://"):
        filename = filename[len("file://") :]
    if not filename.startswith("package://"):
        path = filename if os.path.isabs(filename) else os.path.join(folder, filename)
        return path if os.path.isfile(path) else None
    rest = filename[len("package://") :]
    package, _, inner = rest.partition("/")
    if package in package_dirs:
        path = os.path.join(os.fspath(package_dirs[package]), inner)
        return path if os.path.isfile(path) else None
    here = os.path.abspath(folder)
    while True:
        for candidate in (os.path.join(here, package, inner), os.path.join(here, inner)):
            if os.path.isfile(candidate):
                return candidate
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


class _Import:
    def __init__(
        self, robot, name: str, builder_cls, up_axis, floating: bool, strict: bool, package_dirs: dict | None = None
    ):
        self.robot = robot
        self.name = name
        self.folder = os.path.dirname(os.path.abspath(name))
        self.package_dirs = dict(package_dirs or {})
        self.meshes: dict[str, tuple] = {}
        self.floating = floating
        self.strict = strict
        self.scratch = builder_cls(up_axis=up_axis)
        self.info = UrdfImport()
        self.seen: dict[str, list[str]] = {}

    def fail(self, what: str, msg: str, exc=ValueError):
        raise exc(f"add_urdf({self.name}): {what}: {msg}")

    def unsupported(self, what: str, feature: str):
        if self.strict:
            self.fail(what, f"{feature}: {UNSUPPORTED[feature]} (strict=True)")
        self.seen.setdefault(feature, []).append(what)

    def run(self):
        r = self.robot
        links = {link.name: link for link in r.links}
        joints = list(r.joints)
        parent_joint = {}
        for j in joints:
            if j.parent not in links or j.child not in links:
                self.fail(f"<joint name={j.name!r}>", f"names an unknown link ({j.parent!r} -> {j.child!r})")
            if j.child in parent_joint:
                self.fail(f"<link name={j.child!r}>", "is the child of two joints (a URDF is a tree)")
            parent_joint[j.child] = j
        roots = [name for name in links if name not in parent_joint]
        if len(roots) != 1:
            self.fail("<robot>", f"needs exactly one root link (a link that is no joint's child), got {roots}")
        children: dict[str, list] = {}
        for j in joints:
            children.setdefault(j.parent, []).append(j)
        # Depth-first order from the root; each link's group (the body it fuses into), its frame in
        # that body's frame, and its world pose at zero joint coordinates.
        order, group, rel, world = [], {}, {}, {}
        todo = [roots[0]]
        group[roots[0]], rel[roots[0]], world[roots[0]] = roots[0], hm.IDENTITY, hm.IDENTITY
        while todo:
            name = todo.pop()
            order.append(name)
            for j in reversed(children.get(name, [])):
                origin = _pose(j.origin)
                world[j.child] = hm.transform_mul(world[name], origin)
                if j.type == "fixed":
                    group[j.child] = group[name]
                    rel[j.child] = hm.transform_mul(rel[name], origin)
                else:
                    group[j.child] = j.child
                    rel[j.child] = hm.IDENTITY
                todo.append(j.child)
        self.check_features(links, joints)
        b = self.scratch
        body_of = {}
        for name in order:
            if group[name] != name:
                continue
            members = [m for m in order if group[m] == name]
            mass, com, inertia = self.fused_inertial(members, links, rel)
            body = b.add_link(xform=world[name], mass=mass, inertia=inertia, com=com, lock_inertia=True, label=name)
            body_of[name] = body
            moving = name != roots[0] or self.floating
            if moving and (mass <= 0.0 or np.linalg.eigvalsh(inertia).min() <= 0.0):
                self.fail(
                    f"<link name={name!r}>",
                    "a link that moves needs mass and inertia (an <inertial>, on it or on a link fixed to it)",
                )
        for name in order:
            body = body_of[group[name]]
            self.info.bodies[name] = body
            self.info.links[name] = (body, rel[name])
            self.info.shapes[name] = self.shapes(links[name], body, rel[name])
        first_joint = b.joint_count
        root_body = body_of[roots[0]]
        if self.floating:
            b.add_joint_free(root_body, label=roots[0])
        else:
            b.add_joint_fixed(-1, root_body, hm.IDENTITY, hm.IDENTITY, label=roots[0])
        for name in order:
            for j in children.get(name, []):
                if j.type != "fixed":
                    self.joint(j, body_of[group[j.parent]], body_of[j.child], rel[j.parent])
        b.add_articulation(list(range(first_joint, b.joint_count)), label=self.robot.name or roots[0])
        # Dry friction: the friction loss of a fixed tendon whose length is the joint's coordinate
        # (the same bound on the generalized friction force).
        for j in joints:
            f = float(j.dynamics.friction) if j.dynamics is not None and j.dynamics.friction is not None else 0.0
            if f > 0.0 and j.type in ("revolute", "continuous", "prismatic"):
                b.add_fixed_tendon([self.info.joints[j.name]], [1.0], friction_loss=f, label=f"{j.name}/friction")

    def check_features(self, links, joints):
        for link in links.values():
            for kind, items in (("collision", link.collisions), ("visual", link.visuals)):
                for g in items:
                    if g.geometry is not None and g.geometry.mesh is not None and self.mesh(g.geometry.mesh) is None:
                        self.unsupported(
                            f"<link name={link.name!r}> {kind} {g.geometry.mesh.filename!r}", "mesh geometry"
                        )
        for j in joints:
            where = f"<joint name={j.name!r}>"
            if j.dynamics is not None and j.dynamics.friction is not None:
                f = float(j.dynamics.friction)
                if not (math.isfinite(f) and f >= 0.0):
                    self.fail(where, f"dynamics friction must be finite and >= 0, got {f}")
            if j.mimic is not None:
                self.unsupported(where, "mimic joints")
            if j.safety_controller is not None:
                self.unsupported(where, "safety controllers")
            if j.calibration is not None:
                self.unsupported(where, "calibration")
            if j.type not in ("revolute", "continuous", "prismatic", "fixed", "floating", "planar"):
                self.fail(where, f"unknown joint type {j.type!r}")

    def fused_inertial(self, members, links, rel):
        """Mass [kg], centre of mass and inertia about it [kg m^2] (both in the group's body frame) of
        the links ``members`` fused into one body (parallel-axis theorem, float64)."""
        parts = []
        for name in members:
            inertial = links[name].inertial
            if inertial is None or inertial.mass is None or float(inertial.mass) == 0.0:
                continue
            m = float(inertial.mass)
            if m < 0.0 or not math.isfinite(m):
                self.fail(f"<link name={name!r}>", f"mass must be finite and >= 0, got {m}")
            pose = hm.transform_mul(rel[name], _pose(inertial.origin))
            r = _rotation(pose)
            local = np.zeros((3, 3))
            if inertial.inertia is not None:
                try:
                    local = check_body_inertia(f"<link name={name!r}> <inertial>", inertial.inertia)
                except (TypeError, ValueError) as err:
                    self.fail(f"<link name={name!r}>", str(err).split(": ", 1)[-1])
            parts.append((m, np.asarray(pose[:3], dtype=np.float64), r @ local @ r.T))
        if not parts:
            return 0.0, (0.0, 0.0, 0.0), np.zeros((3, 3))
        mass = sum(p[0] for p in parts)
        com = sum(p[0] * p[1] for p in parts) / mass
        inertia = np.zeros((3, 3))
        for m, c, i in parts:
            d = c - com
            inertia += i + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
        return mass, tuple(com.tolist()), inertia

    def mesh(self, mesh):
        """(vertices [m], faces) of a URDF ``<mesh>`` with its ``scale``, or None when its file is missing
        or not a type ``load_mesh`` reads."""
        path = _mesh_path(mesh.filename, self.folder, self.package_dirs)
        if path is None or os.path.splitext(path)[1].lower() not in MESH_SUFFIXES:
            return None
        if path not in self.meshes:
            try:
                self.meshes[path] = load_mesh(path)
            except ValueError as e:
                self.fail(f"<mesh filename={mesh.filename!r}>", str(e))
        verts, faces = self.meshes[path]
        scale = np.ones(3) if mesh.scale is None else np.broadcast_to(np.asarray(mesh.scale, dtype=np.float64), (3,))
        if np.any(scale == 0.0):
            self.fail(f"<mesh filename={mesh.filename!r}>", f"scale must be nonzero, got {tuple(scale)}")
        # An odd number of mirrored axes turns the faces inside out: flip them back.
        return verts * scale, (faces[:, ::-1] if np.prod(np.sign(scale)) < 0.0 else faces)

    def shapes(self, link, body, rel) -> list[int]:
        b = self.scratch
        out = []
        for kind, items in (("collision", link.collisions), ("visual", link.visuals)):
            for g in items:
                geo = g.geometry
                if geo is None:
                    continue
                pose = hm.transform_mul(rel, _pose(g.origin))
                kw = dict(density=0.0, has_collision=kind == "collision", label=g.name)
                if geo.mesh is not None:
                    data = self.mesh(geo.mesh)
                    if data is not None:
                        try:
                            out.append(b.add_shape_mesh(body, pose, data[0], data[1], **kw))
                        except (TypeError, ValueError) as e:
                            self.fail(f"<link name={link.name!r}> {kind} {geo.mesh.filename!r}", str(e))
                elif geo.box is not None:
                    hx, hy, hz = (0.5 * float(v) for v in geo.box.size)
                    out.append(b.add_shape_box(body, xform=pose, hx=hx, hy=hy, hz=hz, **kw))
                elif geo.sphere is not None:
                    out.append(b.add_shape_sphere(body, xform=pose, radius=float(geo.sphere.radius), **kw))
                elif geo.cylinder is not None:
                    c = geo.cylinder
                    out.append(
                        b.add_shape_cylinder(
                            body, xform=pose, radius=float(c.radius), half_height=0.5 * float(c.length), **kw
                        )
                    )
        return out

    def joint(self, j, parent_body, child_body, parent_rel):
        """A moving URDF joint: its frame is the child link's frame at zero coordinates, placed by
        ``origin`` in the parent link's frame (the parent link sits at ``parent_rel`` in its body)."""
        b = self.scratch
        where = f"<joint name={j.name!r}>"
        parent_xform = hm.transform_mul(parent_rel, _pose(j.origin))
        axis = np.asarray(j.axis if j.axis is not None else (1.0, 0.0, 0.0), dtype=np.float64)
        if np.linalg.norm(axis) < 1e-12:
            self.fail(where, "axis must be nonzero")
        axis = tuple((axis / np.linalg.norm(axis)).tolist())
        kd = float(j.dynamics.damping) if j.dynamics is not None and j.dynamics.damping is not None else 0.0
        if kd < 0.0:
            self.fail(where, f"dynamics damping must be >= 0, got {kd}")
        extra = {}
        lo, hi = None, None
        if j.limit is not None:
            if j.limit.effort is not None:
                extra["effort_limit"] = float(j.limit.effort)
            if j.limit.velocity is not None:
                extra["velocity_limit"] = float(j.limit.velocity)
            if j.type in ("revolute", "prismatic"):
                lo = float(j.limit.lower) if j.limit.lower is not None else 0.0
                hi = float(j.limit.upper) if j.limit.upper is not None else 0.0
        elif j.type in ("revolute", "prismatic"):
            self.fail(where, f"a {j.type} joint needs a <limit> (URDF requires one)")
        if lo is not None and lo >= hi:
            lo, hi = None, None  # URDF convention: lower == upper (both 0 when absent) means no limit
        try:
            if j.type == "floating":
                self.fail(where, "a floating joint is only supported as the base (add_urdf(floating=True))")
            if j.type in ("revolute", "continuous", "prismatic"):
                add = b.add_joint_prismatic if j.type == "prismatic" else b.add_joint_revolute
                k = add(
                    parent_body,
                    child_body,
                    parent_xform,
                    hm.IDENTITY,
                    axis,
                    limit_lower=lo,
                    limit_upper=hi,
                    target_kd=kd,
                    label=j.name,
                    **extra,
                )
            else:  # planar: free in the plane across the axis, turning about it
                a = np.asarray(axis)
                u = np.cross(a, (1.0, 0.0, 0.0) if abs(a[0]) < 0.9 else (0.0, 1.0, 0.0))
                u /= np.linalg.norm(u)
                v = np.cross(a, u)
                k = b.add_joint_d6(
                    parent_body,
                    child_body,
                    linear_axes=[JointDofConfig(axis=tuple(u)), JointDofConfig(axis=tuple(v))],
                    angular_axes=[JointDofConfig(axis=axis, target_kd=kd)],
                    parent_xform=parent_xform,
                    child_xform=hm.IDENTITY,
                    label=j.name,
                )
        except (TypeError, ValueError) as e:
            raise type(e)(f"add_urdf({self.name}): {where}: {e}") from None
        self.info.joints[j.name] = k


def add_urdf(
    builder,
    source,
    *,
    xform=None,
    floating: bool = False,
    label_prefix: str = "",
    world: int | None = None,
    strict: bool = False,
    package_dirs: dict | None = None,
) -> UrdfImport:
    """Append a URDF robot to ``builder`` (module docstring: what is mapped and what is left out).

    Args:
        builder: The ``ModelBuilder`` to append to; it is left unchanged if anything fails.
        source: Path of the ``.urdf`` file.
        xform: Placement of the robot's root link (px, py, pz, qx, qy, qz, qw) [m]; default identity.
        floating: False welds the root link to the world (URDF has no base joint); True gives it a
            free joint.
        label_prefix: Prepended to every label.
        world: World to add the robot to (default ``builder.current_world``).
        strict: Raise ValueError for the first feature the import leaves out (``UNSUPPORTED``)
            instead of one ``UrdfImportWarning`` per feature.
        package_dirs: ROS package name -> its folder, for ``package://`` mesh file names (without
            it they are looked up in the URDF's folder and the folders above it).

    Returns:
        An ``UrdfImport`` with the name tables (indices in ``builder``).

    Raises:
        ImportError: ``yourdfpy`` (the ``urdf`` extra) is not installed.
        ValueError: a file that cannot be read or is not a tree with one root, a moving link without
            mass or inertia, an unknown joint type, a joint the builder rejects (message names it).
    """
    if not isinstance(floating, bool):
        raise TypeError(f"add_urdf: floating must be True or False, got {type(floating).__name__}")
    if not isinstance(strict, bool):
        raise TypeError(f"add_urdf: strict must be True or False, got {type(strict).__name__}")
    if not isinstance(label_prefix, str):
        raise TypeError(f"add_urdf: label_prefix must be a str, got {type(label_prefix).__name__}")
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"add_urdf: source must be a path, got {type(source).__name__}")
    path = os.fspath(source)
    yourdfpy = _yourdfpy()
    try:
        urdf = yourdfpy.URDF.load(path, build_scene_graph=False, load_meshes=False, load_collision_meshes=False)
    except Exception as e:  # yourdfpy raises its own errors, lxml's and OSError
        raise ValueError(f"add_urdf({path}): cannot read the URDF: {e}") from None
    if package_dirs is not None and not isinstance(package_dirs, dict):
        raise TypeError(
            f"add_urdf: package_dirs must be a dict of package name -> folder, got {type(package_dirs).__name__}"
        )
    imp = _Import(urdf.robot, path, type(builder), builder.up_axis, floating, strict, package_dirs)
    imp.run()
    scratch = imp.scratch
    b0, s0, j0 = builder.body_count, builder.shape_count, builder.joint_count
    try:
        builder.add_builder(scratch, xform=xform, world=world, label_prefix=label_prefix)
    except (TypeError, ValueError) as e:
        raise type(e)(f"add_urdf({path}): {e}") from None
    info = imp.info
    info.bodies = {k: v + b0 for k, v in info.bodies.items()}
    info.links = {k: (v + b0, pose) for k, (v, pose) in info.links.items()}
    info.shapes = {k: [s + s0 for s in v] for k, v in info.shapes.items()}
    q_start, d_start = coordinate_starts(builder)
    info.joints = {k: v + j0 for k, v in info.joints.items()}
    info.joint_coords = {
        k: (int(q_start[v]), int(d_start[v]))
        for k, v in info.joints.items()
        if scratch.joint_type[v - j0] in (T.JOINT_PRISMATIC, T.JOINT_REVOLUTE)
    }
    info.unsupported = warn_left_out(f"add_urdf({path})", imp.seen, UNSUPPORTED, UrdfImportWarning)
    return info
