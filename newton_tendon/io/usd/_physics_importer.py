"""The UsdPhysics importer: one pass over the stage into records, then a scratch builder.

``_Importer`` holds the stage metadata (units, up axis), classifies prims (rigid bodies, colliders,
joints, articulation roots, filters, collision groups, scenes), and builds collision filters and the
scene's gravity. Bodies and shapes come from :class:`._physics_bodies._BodyParsing`, joints from
:class:`._physics_joints._JointParsing`. Warnings go to the logger ``newton_tendon.usd``.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from newton_tendon import _hostmath as hm

from ._physics_attrs import _INF, _UP_ROTATION, _get_bool, _get_real, _get_vec3, _where
from ._physics_bodies import _Body, _BodyParsing, _Shape
from ._physics_joints import _JointParsing
from ._physics_xforms import _decompose, _inverse, _matrix

# The logger keeps the name of the module this code came from (documented in docs/usd.md).
_log = logging.getLogger("newton_tendon.usd")


class _Importer(_BodyParsing, _JointParsing):
    """One import: parses the stage into records, then fills a scratch builder."""

    def __init__(self, stage, *, default_density: float, mesh_approximation, strict: bool):
        from pxr import UsdGeom, UsdPhysics

        self.stage = stage
        self.default_density = default_density
        self.mesh_approximation = mesh_approximation
        self.strict = strict
        self.mpu = float(UsdGeom.GetStageMetersPerUnit(stage))
        self.kpu = float(UsdPhysics.GetStageKilogramsPerUnit(stage))
        where = f"USD stage {stage.GetRootLayer().identifier}"
        for name, v in (("metersPerUnit", self.mpu), ("kilogramsPerUnit", self.kpu)):
            if not (math.isfinite(v) and v > 0.0):
                raise ValueError(f"{where}: {name} must be finite and > 0, got {v}")
        self.up_axis = str(UsdGeom.GetStageUpAxis(stage))
        if self.up_axis not in _UP_ROTATION:
            raise ValueError(f"{where}: upAxis must be 'Y' or 'Z', got {self.up_axis!r}")
        self.up = _UP_ROTATION[self.up_axis]
        self.xform_cache = UsdGeom.XformCache()
        self.bodies: dict[str, _Body] = {}
        self.disabled_bodies: set[str] = set()
        self.shapes: list[_Shape] = []
        self.joint_prims: list = []
        self.articulation_prims: list = []
        self.filter_prims: list = []
        self.group_prims: list = []
        self.scene_prims: list = []

    # -- helpers ---------------------------------------------------------------------------------

    def unsupported(self, prim, what: str):
        """A feature we cannot represent: an error when strict, else a logged warning and it is ignored."""
        msg = f"{_where(prim)}: {what} is not supported"
        if self.strict:
            raise ValueError(msg + " (pass strict=False to ignore it)")
        _log.warning("%s; ignored", msg)

    def world_affine(self, prim) -> np.ndarray:
        return _matrix(self.xform_cache.GetLocalToWorldTransform(prim))

    def to_world_si(self, xf) -> tuple:
        """A world pose in stage units and stage axes -> SI, Z-up."""
        p = hm.quat_rotate(self.up, [c * self.mpu for c in xf[:3]])
        return (*(float(c) for c in p), *(float(c) for c in hm.quat_mul(self.up, xf[3:])))

    def to_local_si(self, xf) -> tuple:
        return (*(c * self.mpu for c in xf[:3]), *xf[3:])

    def owner_body(self, prim) -> _Body | None:
        """The nearest enabled rigid body at or above ``prim``; None when the prim is static."""
        p = prim
        while p and p.IsValid() and not p.IsPseudoRoot():
            path = str(p.GetPath())
            if path in self.bodies:
                return self.bodies[path]
            if path in self.disabled_bodies:
                return None
            p = p.GetParent()
        return None

    # -- pass 1: classify prims -------------------------------------------------------------------

    def collect(self):
        from pxr import Usd, UsdPhysics

        rng = Usd.PrimRange.Stage(self.stage, Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate))
        collider_prims = []
        for prim in rng:
            if prim.HasAPI(UsdPhysics.RigidBodyAPI):
                self.add_body_record(prim)
            if prim.HasAPI(UsdPhysics.CollisionAPI):
                collider_prims.append(prim)
            if prim.HasAPI(UsdPhysics.ArticulationRootAPI):
                self.articulation_prims.append(prim)
            if prim.HasAPI(UsdPhysics.FilteredPairsAPI):
                self.filter_prims.append(prim)
            type_name = str(prim.GetTypeName())
            # Any "...Joint" type counts, so joint types we do not know raise instead of being skipped.
            if prim.IsA(UsdPhysics.Joint) or type_name.endswith("Joint"):
                self.joint_prims.append(prim)
            elif prim.IsA(UsdPhysics.CollisionGroup):
                self.group_prims.append(prim)
            elif prim.IsA(UsdPhysics.Scene):
                self.scene_prims.append(prim)
        for prim in collider_prims:
            self.add_shape_record(prim)

    def add_body_record(self, prim):
        path = str(prim.GetPath())
        if not _get_bool(prim, "physics:rigidBodyEnabled", True):
            self.disabled_bodies.add(path)
            return
        kinematic = _get_bool(prim, "physics:kinematicEnabled", False)
        xf, scale = _decompose(prim, self.world_affine(prim))
        self.bodies[path] = _Body(prim, path, xf, scale, kinematic)

    # -- collision filters ------------------------------------------------------------------------

    def shapes_of(self, prim) -> list[int]:
        """Shape indices owned by ``prim``: colliders at or below it, and colliders of bodies at or below it."""
        root = str(prim.GetPath())
        prefix = root.rstrip("/") + "/"

        def under(p):
            return p == root or p.startswith(prefix)

        return [s.index for s in self.shapes if under(s.path) or (s.body is not None and under(s.body.path))]

    def build_filters(self, builder):
        from pxr import Usd, UsdPhysics

        pairs: set[tuple[int, int]] = set()
        for prim in self.filter_prims:
            mine = self.shapes_of(prim)
            for target_path in prim.GetRelationship("physics:filteredPairs").GetTargets():
                target = self.stage.GetPrimAtPath(target_path)
                if not target or not target.IsValid():
                    raise ValueError(
                        f"{_where(prim)}: relationship 'physics:filteredPairs' targets <{target_path}>, "
                        "which does not exist"
                    )
                pairs.update((a, b) for a in mine for b in self.shapes_of(target))
        for prim in self.group_prims:
            if _get_bool(prim, "physics:invertFilteredGroups", False):
                self.unsupported(prim, "'physics:invertFilteredGroups'")
                continue
            query = Usd.CollectionAPI(prim, "colliders").ComputeMembershipQuery()
            members = [s.index for s in self.shapes if query.IsPathIncluded(s.prim.GetPath())]
            for target_path in UsdPhysics.CollisionGroup(prim).GetFilteredGroupsRel().GetTargets():
                target = self.stage.GetPrimAtPath(target_path)
                if not target or not target.IsA(UsdPhysics.CollisionGroup):
                    raise ValueError(
                        f"{_where(prim)}: relationship 'physics:filteredGroups' targets <{target_path}>, "
                        "which is not a PhysicsCollisionGroup"
                    )
                q2 = Usd.CollectionAPI(target, "colliders").ComputeMembershipQuery()
                others = [s.index for s in self.shapes if q2.IsPathIncluded(s.prim.GetPath())]
                pairs.update((a, b) for a in members for b in others)
        for a, b in sorted(pairs):
            if a != b:
                builder.add_shape_collision_filter_pair(a, b)

    # -- scene ------------------------------------------------------------------------------------

    def gravity(self) -> tuple:
        """Gravity of the first PhysicsScene in SI, Z-up (USD default: -up axis, 9.81 m/s^2)."""
        g_dir = np.array(hm.quat_rotate(_inverse((0, 0, 0, *self.up))[3:], (0.0, 0.0, -1.0)))
        g_mag = 9.81
        if self.scene_prims:
            prim = self.scene_prims[0]
            d = _get_vec3(prim, "physics:gravityDirection", (0.0, 0.0, 0.0))
            if np.linalg.norm(d) > 0.0:
                g_dir = d / np.linalg.norm(d)
            m = _get_real(prim, "physics:gravityMagnitude", -_INF, allow_inf=True)
            if m == _INF:
                # -inf is UsdPhysics' "use the default" sentinel; +inf is no gravity anything can follow.
                raise ValueError(
                    f"{_where(prim)}: attribute 'physics:gravityMagnitude' must be finite (or -inf, UsdPhysics' "
                    "'use the default gravity' value), got inf"
                )
            if math.isfinite(m):
                g_mag = m * self.mpu
        return tuple(float(c) for c in hm.quat_rotate(self.up, g_dir * g_mag))
