"""Joints and articulations of the UsdPhysics import.

:class:`_JointParsing` (mixed into ``_Importer``) resolves both sides of each joint prim, reads
limits and drives in SI, orders the joints of each ``PhysicsArticulationRootAPI`` as a tree from its
root outwards, and adds them to the builder.
"""

from __future__ import annotations

import math

import numpy as np

from newton_tendon import _hostmath as hm

from ._physics_attrs import (
    _AXIS_INDEX,
    _DEG,
    _INF,
    _get_bool,
    _get_quat,
    _get_real,
    _get_token,
    _get_vec3,
    _single_target,
    _where,
)
from ._physics_xforms import _decompose, _inverse


class _JointParsing:
    """Joints: the part of ``_Importer`` that parses joint prims and adds joints and articulations."""

    # -- joints -----------------------------------------------------------------------------------

    def joint_side(self, prim, k: int):
        """(body or None, joint frame in the body frame (or world), stage units) for side ``k`` of a joint."""
        target = _single_target(prim, f"physics:body{k}")
        pos = _get_vec3(prim, f"physics:localPos{k}", (0.0, 0.0, 0.0))
        rot = _get_quat(prim, f"physics:localRot{k}")
        if target is None:
            return None, (*(float(c) for c in pos), *rot)
        a = self.world_affine(target)
        frame_xf, _ = _decompose(target, a)
        p_world = (a @ np.array([*pos, 1.0]))[:3]
        frame = (*(float(c) for c in p_world), *hm.quat_mul(frame_xf[3:], rot))
        body = self.owner_body(target)
        if body is None:
            return None, frame
        return body, hm.transform_mul(_inverse(body.xform), frame)

    def parse_joint(self, prim) -> dict:
        """Everything needed to add one joint; body sides are resolved, swapped when body1 is static."""
        from pxr import UsdPhysics

        path = str(prim.GetPath())
        if prim.IsA(UsdPhysics.RevoluteJoint):
            kind = "revolute"
        elif prim.IsA(UsdPhysics.PrismaticJoint):
            kind = "prismatic"
        elif prim.IsA(UsdPhysics.FixedJoint):
            kind = "fixed"
        elif prim.IsA(UsdPhysics.SphericalJoint):
            kind = "spherical"
        else:
            raise ValueError(
                f"{_where(prim)}: joint type {str(prim.GetTypeName())!r} is not supported "
                "(supported: PhysicsRevoluteJoint, PhysicsPrismaticJoint, PhysicsFixedJoint, PhysicsSphericalJoint)"
            )
        b0, x0 = self.joint_side(prim, 0)
        b1, x1 = self.joint_side(prim, 1)
        if b0 is None and b1 is None:
            raise ValueError(f"{_where(prim)}: a joint must connect at least one enabled rigid body (both ends static)")
        if b0 is b1:
            raise ValueError(f"{_where(prim)}: body0 and body1 resolve to the same rigid body <{b0.path}>")
        sign = 1.0
        if b1 is None:  # our child must be a body: swap sides and flip the axis so the coordinate keeps its sign
            b0, x0, b1, x1, sign = b1, x1, b0, x0, -1.0
        j = dict(prim=prim, path=path, kind=kind, parent=b0, child=b1, X_p=x0, X_c=x1)
        j["enabled"] = _get_bool(prim, "physics:jointEnabled", True)
        j["collision_filter_parent"] = not _get_bool(prim, "physics:collisionEnabled", False)
        j["exclude"] = _get_bool(prim, "physics:excludeFromArticulation", False)
        for name in ("physics:breakForce", "physics:breakTorque"):
            if math.isfinite(_get_real(prim, name, _INF, allow_inf=True, lo=0.0)):
                self.unsupported(prim, f"a finite '{name}' (breakable joints)")
        drive_names = [s.split(":", 1)[1] for s in prim.GetAppliedSchemas() if s.startswith("PhysicsDriveAPI:")]
        if kind in ("revolute", "prismatic"):
            axis = np.zeros(3)
            axis[_AXIS_INDEX[_get_token(prim, "physics:axis", "X", ("X", "Y", "Z"))]] = sign
            j["axis"] = tuple(float(c) for c in axis)
            angular = kind == "revolute"
            unit = _DEG if angular else self.mpu
            lo = _get_real(prim, "physics:lowerLimit", -_INF, allow_inf=True)
            hi = _get_real(prim, "physics:upperLimit", _INF, allow_inf=True)
            j["limit_lower"] = lo * unit if math.isfinite(lo) else None if lo < 0 else lo
            j["limit_upper"] = hi * unit if math.isfinite(hi) else None if hi > 0 else hi
            drive = "angular" if angular else "linear"
            for name in drive_names:
                if name != drive:
                    self.unsupported(prim, f"drive instance '{name}' on a {kind} joint (expected '{drive}')")
            j.update(self.parse_drive(prim, drive, angular))
        else:
            for name in drive_names:
                self.unsupported(prim, f"drive instance '{name}' on a {kind} joint")
            if kind == "spherical":
                for name in ("physics:coneAngle0Limit", "physics:coneAngle1Limit"):
                    if _get_real(prim, name, -1.0, allow_inf=True) >= 0.0:
                        self.unsupported(prim, f"a cone limit '{name}' on a spherical joint")
        return j

    def parse_drive(self, prim, drive: str, angular: bool) -> dict:
        """Drive gains and targets in SI: N m/rad, N m s/rad, rad, rad/s (angular); N/m, N s/m, m, m/s (linear)."""
        ns = f"drive:{drive}:physics:"
        out = dict(target_ke=0.0, target_kd=0.0, target_pos=0.0, target_vel=0.0)
        if not any(prim.GetAttribute(ns + n) for n in ("stiffness", "damping", "targetPosition", "targetVelocity")):
            return out
        if _get_token(prim, ns + "type", "force", ("force", "acceleration")) == "acceleration":
            self.unsupported(prim, f"drive '{drive}' of type 'acceleration'")
        if math.isfinite(_get_real(prim, ns + "maxForce", _INF, allow_inf=True, lo=0.0)):
            self.unsupported(prim, f"a finite '{ns}maxForce'")
        # Stage torque = kg_u m_u^2 / s^2 per unit; angular gains are per degree.
        gain = self.kpu * self.mpu**2 / _DEG if angular else self.kpu
        unit = _DEG if angular else self.mpu
        out["target_ke"] = _get_real(prim, ns + "stiffness", 0.0, lo=0.0) * gain
        out["target_kd"] = _get_real(prim, ns + "damping", 0.0, lo=0.0) * gain
        out["target_pos"] = _get_real(prim, ns + "targetPosition", 0.0) * unit
        out["target_vel"] = _get_real(prim, ns + "targetVelocity", 0.0) * unit
        return out

    def add_joint(self, builder, j: dict) -> int:
        parent = j["parent"].index if j["parent"] is not None else -1
        x_p = self.to_local_si(j["X_p"]) if j["parent"] is not None else self.to_world_si(j["X_p"])
        x_c = self.to_local_si(j["X_c"])
        common = dict(enabled=j["enabled"], collision_filter_parent=j["collision_filter_parent"], label=j["path"])
        if j["kind"] in ("revolute", "prismatic"):
            add = builder.add_joint_revolute if j["kind"] == "revolute" else builder.add_joint_prismatic
            return add(
                parent,
                j["child"].index,
                x_p,
                x_c,
                j["axis"],
                limit_lower=j["limit_lower"],
                limit_upper=j["limit_upper"],
                target_pos=j["target_pos"],
                target_vel=j["target_vel"],
                target_ke=j["target_ke"],
                target_kd=j["target_kd"],
                **common,
            )
        add = builder.add_joint_fixed if j["kind"] == "fixed" else builder.add_joint_ball
        return add(parent, j["child"].index, x_p, x_c, **common)

    def articulation_order(self, root_prim, joints: list[dict], taken: set[int]):
        """(root body, free joint needed, joints of the articulation in tree order) for one root prim."""
        root_path = str(root_prim.GetPath())
        prefix = root_path.rstrip("/") + "/"
        in_tree = [b for p, b in self.bodies.items() if p == root_path or p.startswith(prefix)]
        if not in_tree:
            # Root authored on a joint: the articulation starts at that joint's bodies.
            match = [j for j in joints if j["path"] == root_path]
            if not match:
                raise ValueError(f"{_where(root_prim)}: an articulation root must be or contain a rigid body or joint")
            in_tree = [match[0]["child"]]
        cand = [i for i, j in enumerate(joints) if i not in taken and not j["exclude"]]
        # Bodies reachable from the subtree through candidate joints.
        members = {id(b) for b in in_tree}
        grew = True
        while grew:
            grew = False
            for i in cand:
                j = joints[i]
                ends = [b for b in (j["parent"], j["child"]) if b is not None]
                if any(id(b) in members for b in ends) and not all(id(b) in members for b in ends):
                    members.update(id(b) for b in ends)
                    grew = True
        mine = [i for i in cand if any(id(b) in members for b in (joints[i]["parent"], joints[i]["child"]) if b)]
        # Root: a body jointed to the world, else the first body of the subtree (floating base, free joint).
        world = [i for i in mine if joints[i]["parent"] is None]
        root = joints[world[0]]["child"] if world else in_tree[0]
        order, visited, pending = [], {id(root)}, list(mine)
        if world:
            order.append(world[0])
            pending.remove(world[0])
        frontier = [root]
        while frontier:
            nxt = []
            for b in frontier:
                for i in list(pending):
                    j = joints[i]
                    other = j["child"] if j["parent"] is b else j["parent"] if j["child"] is b else None
                    if other is None or id(other) in visited:
                        continue
                    if j["child"] is b:  # reorient so the tree runs from the root outwards
                        self.swap_joint(j)
                    order.append(i)
                    pending.remove(i)
                    visited.add(id(other))
                    nxt.append(other)
            frontier = nxt
        order.extend(pending)  # loop-closing joints and joints to the world beyond the root
        return root, not world, order

    @staticmethod
    def swap_joint(j: dict):
        if j["parent"] is None:
            return
        j["parent"], j["child"], j["X_p"], j["X_c"] = j["child"], j["parent"], j["X_c"], j["X_p"]
        if "axis" in j:
            j["axis"] = tuple(-c for c in j["axis"])

    def build_joints(self, builder, result: dict):
        joints = [self.parse_joint(p) for p in self.joint_prims]
        taken: set[int] = set()
        for root_prim in self.articulation_prims:
            root, floating, order = self.articulation_order(root_prim, joints, taken)
            if floating and not root.kinematic:
                result["free_joints"][root.path] = builder.add_joint_free(root.index, label=f"{root.path}#free")
            for i in order:
                result["joints"][joints[i]["path"]] = self.add_joint(builder, joints[i])
                taken.add(i)
            if builder.joint_count > builder.articulation_joint_end:
                result["articulations"][str(root_prim.GetPath())] = builder.add_articulation(
                    label=str(root_prim.GetPath())
                )
        for i, j in enumerate(joints):
            if i not in taken:
                result["joints"][j["path"]] = self.add_joint(builder, j)
