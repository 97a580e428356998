"""``<geom>`` (collision shapes with their mass), ``<site>`` (named poses for tendon paths) and
``<contact>`` (excluded body pairs), and the collision filter pairs that MuJoCo's contype /
conaffinity bits and the exclusions imply."""

from __future__ import annotations

import os

import numpy as np

from newton_tendon import _hostmath as hm
from newton_tendon.io.mesh_files import load_mesh

from .attributes import _ORIENTATION
from .document import _q


def geom(imp, el, a, body, frame):
    """A ``<geom>`` on ``body`` (-1: the world) placed in ``frame``: a sphere, box, capsule, cylinder, ellipsoid or
    (on the world only) plane shape with its friction, collision bits and density or mass; kept by
    name for tendon wrapping."""
    b = imp.scratch
    gtype = imp.choice(
        el,
        a,
        "type",
        ("plane", "sphere", "capsule", "cylinder", "box", "ellipsoid", "mesh", "hfield", "sdf"),
        "sphere",
    )
    if gtype == "sdf":
        imp.fail(el, "geom type 'sdf' is not supported (use a mesh or a primitive)")
    if "mesh" in a and gtype != "mesh":
        imp.fail(el, f"fitting a {gtype} to a mesh (attribute mesh on a {gtype} geom) is not supported")
    if "hfield" in a and gtype != "hfield":
        imp.fail(el, "attribute hfield is only used by hfield geoms")
    if any(v != 0.0 for v in imp.floats(el, a, "margin", 1, default=(0.0,))):
        imp.unsupported(el, "geom margin")
    if a.get("shellinertia", "false") != "false":
        imp.fail(el, "shellinertia is not supported")
    if imp.choice(el, a, "fluidshape", ("none", "ellipsoid"), "none") != "none":
        imp.unsupported(el, "fluid forces")
    size = imp.floats(el, a, "size", (1, 2, 3), default=())
    pose = imp.pose(el, a)
    half = None
    if "fromto" in a:
        if gtype not in ("capsule", "cylinder"):
            imp.fail(el, f"fromto is only supported on capsules and cylinders, not {gtype}")
        if any(k in a for k in _ORIENTATION) or "pos" in a:
            imp.fail(el, "fromto cannot be combined with pos or an orientation")
        f = np.array(imp.floats(el, a, "fromto", 6))
        d = f[3:] - f[:3]
        half = 0.5 * float(np.linalg.norm(d))
        if half < 1e-12:
            imp.fail(el, "fromto end points coincide")
        pose = (*(0.5 * (f[:3] + f[3:])), *imp.zaxis(el, d))
    pose = hm.transform_mul(frame, pose)

    def need(n):
        if len(size) < n:
            imp.fail(el, f"a {gtype} needs {n} size value(s), got {len(size)}")
        if any(s <= 0.0 for s in size[:n]):
            imp.fail(el, f"size values must be > 0, got {size[:n]}")

    friction = imp.floats(el, a, "friction", (1, 2, 3), default=(1.0,))
    condim = imp.integer(el, a, "condim", 3)
    if condim not in (1, 3, 4, 6):
        imp.fail(el, f"condim={condim} is not one of MuJoCo's 1, 3, 4, 6")
    if condim in (4, 6):
        imp.unsupported(el, "condim 4/6")
    mu = 0.0 if condim == 1 else friction[0]
    # 32-bit masks; a negative value (MuJoCo accepts it) sets the high bits, as in two's complement.
    contype = imp.integer(el, a, "contype", 1)
    conaff = imp.integer(el, a, "conaffinity", 1)
    has_collision = contype != 0 or conaff != 0
    kw = dict(mu=mu, has_collision=has_collision, label=a.get("name"))
    if gtype != "plane":
        kw["density"] = imp.real(el, a, "density", 1000.0, lo=0.0)
        if "mass" in a:
            kw["mass"] = imp.real(el, a, "mass", lo=0.0)
        lo, hi = imp.inertiagrouprange
        if imp.inertiafromgeom == "false" or not lo <= imp.geom_group(el, a) <= hi:
            # MuJoCo takes no mass from this geom: inertia comes from <inertial> only, or its group
            # is outside <compiler inertiagrouprange>.
            kw["density"] = 0.0
            kw.pop("mass", None)
    if gtype == "plane":
        if body >= 0:
            imp.fail(el, "planes are only supported on the world body")
        s = imp._add(el, b.add_shape_plane, -1, pose, **kw)
    elif gtype == "hfield":
        s = flat_height_field(imp, el, a, body, pose, kw)
    elif gtype == "sphere":
        need(1)
        s = imp._add(el, b.add_shape_sphere, body, pose, size[0], **kw)
    elif gtype == "box":
        need(3)
        s = imp._add(el, b.add_shape_box, body, pose, *size[:3], **kw)
    elif gtype == "ellipsoid":
        need(3)
        s = imp._add(el, b.add_shape_ellipsoid, body, pose, *size[:3], **kw)
    elif gtype == "mesh":
        verts, faces, mode = mesh_data(imp, el, a)
        s = imp._add(el, b.add_shape_mesh, body, pose, verts, faces, inertia=mode, **kw)
    else:
        if half is None:
            need(2)
            half = size[1]
        else:
            need(1)
        add = b.add_shape_capsule if gtype == "capsule" else b.add_shape_cylinder
        s = imp._add(el, add, body, pose, size[0], half, **kw)
    imp.shape_bits.append((contype, conaff))
    b.shape_friction_max[s] = True  # MuJoCo gives a pair the larger of its geoms' frictions
    name = a.get("name")
    if name is not None:
        if name in imp.geom_index:
            imp.fail(el, "duplicate geom name")
        imp.geom_index[name] = s
        imp.geom_el[name] = (el, gtype, body, pose, size)


def flat_height_field(imp, el, a, body, pose, kw) -> int:
    """An ``hfield`` geom whose height field has no elevation data (no ``file``, no ``elevation``):
    MuJoCo's surface is then the rectangle |x| <= size[0], |y| <= size[1] at z = 0 of the geom frame,
    solid down to z = -size[3] (the base), which is exactly a static box with half extents
    (size[0], size[1], size[3] / 2) centred at z = -size[3] / 2. dm_control's quadruped terrain is
    one (its tasks fill the data at run time). Elevation data is rejected."""
    _hel, size, flat = imp.named(el, a, imp.hfields, "hfield", "hfield")
    name = a["hfield"]
    if not flat:
        imp.fail(el, f"hfield {_q(name)} has elevation data (file or elevation), which is not supported; "
                     "only a flat height field (no data) imports, as a box")  # fmt: skip
    if body >= 0:
        imp.fail(el, "height fields are only supported on the world body")
    base = (0.0, 0.0, -0.5 * size[3], 0.0, 0.0, 0.0, 1.0)
    kw = {k: v for k, v in kw.items() if k not in ("density", "mass")}
    return imp._add(el, imp.scratch.add_shape_box, -1, hm.transform_mul(pose, base),
                    size[0], size[1], 0.5 * size[3], **kw)  # fmt: skip


def meshes(imp, asset_el):
    """``<asset><mesh>``: name -> (element, attributes over its default class); the file is read when a
    geom first uses the mesh (``mesh_data``). The name defaults to the file name without extension."""
    for c in asset_el.children:
        if c.tag != "mesh":
            continue
        a = imp.attrs(c, None, "mesh")
        name = a.get("name")
        if name is None and "file" in a:
            name = os.path.splitext(os.path.basename(a["file"]))[0]
        if name is None:
            imp.fail(c, "a mesh needs a name or a file")
        if name in imp.meshes:
            imp.fail(c, "duplicate mesh name")
        imp.meshes[name] = (c, a)


def mesh_data(imp, gel, ga) -> tuple:
    """The (vertices [m], faces, inertia mode) of the ``<mesh>`` a mesh geom names, as MuJoCo 4.0 reads
    it: from ``file`` (STL or OBJ; a relative path is under ``meshdir``, else ``assetdir``, relative to
    the main file's folder) or from ``vertex``/``face``, times ``scale`` (an odd number of negative
    factors turns the faces over, keeping them outward). ``inertia`` is "legacy" (MuJoCo's default)
    or "exact"; "convex" and "shell" are rejected."""
    if "mesh" not in ga:
        imp.fail(gel, "a mesh geom needs attribute mesh")
    name = ga["mesh"]
    if name not in imp.meshes:
        imp.fail(gel, f"unknown mesh {_q(name)}")
    if name in imp.mesh_cache:
        return imp.mesh_cache[name]
    el, a = imp.meshes[name]
    for k in ("refpos", "refquat"):
        if k in a:
            imp.fail(el, f"{k} (a reference frame for the mesh's vertices) is not supported")
    mode = imp.choice(el, a, "inertia", ("legacy", "exact", "convex", "shell"), "legacy")
    if mode in ("convex", "shell"):
        imp.fail(el, f"inertia={_q(mode)} is not supported (use legacy or exact)")
    if "file" in a:
        if "vertex" in a or "face" in a:
            imp.fail(el, "give file or vertex/face, not both")
        file = a["file"]
        if imp.strippath:
            file = os.path.basename(file)
        folder = imp.meshdir if imp.meshdir is not None else imp.assetdir
        path = file if os.path.isabs(file) else os.path.join(folder or "", file)
        if not os.path.isabs(path):
            path = os.path.join(imp.doc.folder, path)
        try:
            verts, faces = load_mesh(path)
        except ValueError as e:
            imp.fail(el, str(e))
    else:
        if "vertex" not in a:
            imp.fail(el, "a mesh needs a file or vertex data")
        if "face" not in a:
            imp.fail(el, "a mesh without face data would be its convex hull, which is not supported; give face")
        vv = imp.floats(el, a, "vertex")
        ff = imp.floats(el, a, "face")
        if len(vv) % 3 or len(ff) % 3:
            imp.fail(el, "vertex and face need a multiple of three numbers")
        verts = np.asarray(vv, dtype=np.float64).reshape(-1, 3)
        faces = np.asarray(ff, dtype=np.float64).reshape(-1, 3)
        if np.any(faces != np.round(faces)) or faces.min() < 0 or faces.max() >= len(verts):
            imp.fail(el, "face holds vertex indices: integers from 0 to the vertex count - 1")
        faces = faces.astype(np.int64)
    scale = np.asarray(imp.floats(el, a, "scale", 3, default=(1.0, 1.0, 1.0)), dtype=np.float64)
    if np.any(scale == 0.0):
        imp.fail(el, f"scale values must be nonzero, got {tuple(scale)}")
    verts = verts * scale
    if np.prod(np.sign(scale)) < 0.0:
        faces = faces[:, ::-1]
    imp.mesh_cache[name] = (verts, faces, mode)
    return imp.mesh_cache[name]


def height_fields(imp, asset_el):
    """``<asset><hfield>``: name -> (element, size, flat), flat when it holds no elevation data."""
    for c in asset_el.children:
        if c.tag != "hfield":
            continue
        a = c.attrib
        name = a.get("name")
        if name is None and "file" in a:
            name = a["file"].rsplit("/", 1)[-1].rsplit(".", 1)[0]
        size = imp.floats(c, a, "size", 4)
        if size is None:
            imp.fail(c, "attribute size is required")
        if any(v <= 0.0 for v in size):
            imp.fail(c, f"hfield size values must be > 0, got {size}")
        if name is not None:
            imp.hfields[name] = (c, size, "file" not in a and "elevation" not in a)


def site(imp, el, a, body, frame):
    """A ``<site>``: only its pose is kept, by name, for tendon paths (a site adds nothing to the builder)."""
    pose = imp.pose(el, a)
    if "fromto" in a:
        if any(k in a for k in _ORIENTATION) or "pos" in a:
            imp.fail(el, "fromto cannot be combined with pos or an orientation")
        f = np.array(imp.floats(el, a, "fromto", 6))
        pose = (*(0.5 * (f[:3] + f[3:])), *imp.zaxis(el, f[3:] - f[:3]))
    imp.floats(el, a, "size", (1, 2, 3))
    name = a.get("name")
    pose = tuple(float(c) for c in hm.transform_mul(frame, pose))
    if name is not None:
        if name in imp.site_pose:
            imp.fail(el, "duplicate site name")
        imp.site_pose[name] = (body, pose)


def contact(imp, el):
    """``<contact>``: each ``<exclude>`` body pair (``collision_filters`` turns them into filter pairs)
    and each ``<pair>`` of geoms (``contact_pair``)."""
    for c in el.children:
        if c.tag == "pair":
            contact_pair(imp, c)
            continue
        if c.tag != "exclude":
            imp.fail(c, "unsupported contact element (<exclude> and <pair> are supported)")
        for k in c.attrib:
            if k not in ("name", "body1", "body2"):
                imp.fail(c, f"unsupported attribute {_q(k)}")
        bodies = {"world": -1, **imp.body_index}  # MuJoCo names the world body "world"
        b1 = imp.named(c, c.attrib, bodies, "body1", "body")
        b2 = imp.named(c, c.attrib, bodies, "body2", "body")
        imp.excludes.append((b1, b2))


def contact_pair(imp, el):
    """``<contact><pair geom1 geom2 friction condim>``: the two geoms collide whatever their contype,
    conaffinity, exclusions and parent-child relation say, with the pair's own friction, and MuJoCo
    then generates no other contact for them (measured against MuJoCo 4.0): an explicit pair
    (``add_shape_contact_pair``) with ``mu = friction[0]`` (the pair's, default 1, not the geoms';
    0 with ``condim="1"``). With contacts disabled by a flag there is none."""
    a = imp.attrs(el, None, "pair")
    g1 = imp.named(el, a, imp.geom_index, "geom1", "geom")
    g2 = imp.named(el, a, imp.geom_index, "geom2", "geom")
    friction = imp.floats(el, a, "friction", (1, 2, 3, 4, 5), default=(1.0,))
    condim = imp.integer(el, a, "condim", 3)
    if condim not in (1, 3, 4, 6):
        imp.fail(el, f"condim={condim} is not one of MuJoCo's 1, 3, 4, 6")
    if condim in (4, 6):
        imp.unsupported(el, "condim 4/6")
    if friction[0] < 0.0:
        imp.fail(el, f"friction must be >= 0, got {friction[0]}")
    if imp.real(el, a, "margin") != 0.0:
        imp.unsupported(el, "geom margin")
    if imp.contact_disabled:
        return
    imp._add(el, imp.scratch.add_shape_contact_pair, g1, g2, 0.0 if condim == 1 else friction[0])


def collision_filters(imp):
    """MuJoCo collides two geoms if (contype1 & conaffinity2) | (contype2 & conaffinity1); pairs of
    imported shapes that fail the test, and pairs on excluded bodies, get a filter pair. With
    ``<flag contact="disable"/>`` no imported shape collides at all.

    Linear in the shape count plus the pairs it emits: shapes are grouped by their
    (contype, conaffinity) bits, only groups that fail the test against each other are paired
    shape by shape, and excluded body pairs are visited through each body's own shapes."""
    b = imp.scratch
    if imp.contact_disabled:
        # <flag contact="disable"/>: MuJoCo detects no contact, so no imported shape collides.
        for i in range(b.shape_count):
            b.shape_has_collision[i] = False
        return
    groups: dict[tuple[int, int], list[int]] = {}
    by_body: dict[int, list[int]] = {}
    for i in range(b.shape_count):
        if b.shape_has_collision[i]:
            groups.setdefault(imp.shape_bits[i], []).append(i)
            by_body.setdefault(b.shape_body[i], []).append(i)
    pairs = set()
    keys = list(groups)
    for gi, (ti, ai) in enumerate(keys):
        for tj, aj in keys[gi:]:
            if (ti & aj) or (tj & ai):
                continue
            first, second = groups[(ti, ai)], groups[(tj, aj)]
            for i in first:
                for j in second:
                    if i != j and b.shape_body[i] != b.shape_body[j]:
                        pairs.add((min(i, j), max(i, j)))
    for p, q in {(min(p, q), max(p, q)) for p, q in [*imp.excludes, *weld_excludes(imp, by_body)]}:
        if p == q:
            continue
        for i in by_body.get(p, ()):
            for j in by_body.get(q, ()):
                pairs.add((min(i, j), max(i, j)))
    for i, j in sorted(pairs):
        b.add_shape_collision_filter_pair(i, j)


def weld_excludes(imp, by_body: dict[int, list[int]]) -> list[tuple[int, int]]:
    """Body pairs MuJoCo's parent filter leaves out, in weld groups: bodies welded together (a body
    without joints is welded to its parent) never collide, nor does a body with one of the group its
    weld root's MJCF parent is welded into, unless that is the world. dm_control's humanoid_CMU
    welds ``lhipjoint`` to ``root``; MuJoCo never collides ``root`` with ``lfemur`` (5 cm into it at
    the reference pose), which a parent-child filter alone made a contact that threw the model
    apart on its first step. Only bodies with shapes (``by_body``) are paired."""
    from newton_tendon.kernels.types import JOINT_FIXED

    b = imp.scratch
    incoming = {int(b.joint_child[j]): (int(b.joint_parent[j]), int(b.joint_type[j])) for j in range(b.joint_count)}

    def weld(body: int) -> int:
        while body >= 0 and incoming.get(body, (-1, -1))[1] == int(JOINT_FIXED):
            body = incoming[body][0]
        return body

    def mjcf_parent(body: int) -> int:
        p = incoming.get(body, (-1, -1))[0]
        while p in imp.virtual_links:  # the light links a multi-joint body's chain adds (``multi_joint``)
            p = incoming.get(p, (-1, -1))[0]
        return p

    group: dict[int, list[int]] = {}
    for body in by_body:
        group.setdefault(weld(body), []).append(body)
    pairs = []
    for root, members in group.items():
        for i, p in enumerate(members):
            pairs.extend((p, q) for q in members[i + 1 :])
        if root < 0:
            continue
        up = weld(mjcf_parent(root))
        if up >= 0:
            pairs.extend((p, q) for p in members for q in group.get(up, ()))
    return pairs
