"""Joint groups for SolverXPBD's Gauss-Seidel joint pass (``solve_joint_groups``).

A group is a connected set of joints: two joints share a group when they share a body that can move
(mass > 0 and not kinematic when the solver is built; a body made immovable later stays in its
group, which only serializes more). Static and kinematic bodies, and the world (-1), link nothing:
constraints do not move them, so worlds built by ``replicate`` on one shared static body still fall
into one group per articulation. One thread solves a group's joints one after another, so no two
threads ever write the same body.

Within a group the joints run root to leaves: by the depth of their deeper body, counted in joints
from an immovable body (or from the group's first body when nothing holds it), then by index. That is
the order in which a correction at the root reaches the leaves within one pass.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..kernels.types import BODY_KINEMATIC


def joint_groups(
    parent: np.ndarray, child: np.ndarray, body_mass: np.ndarray, body_flags: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Groups of the joints ``parent[j] -> child[j]`` (body indices, -1 the world) as CSR arrays
    ``(group_start [groups + 1], group_joint [joints])``, every joint in exactly one group, groups
    ordered by their first joint's index. Host code, run once when the solver is built."""
    parent = np.asarray(parent, dtype=np.int64)
    child = np.asarray(child, dtype=np.int64)
    n_joints = len(parent)
    n_bodies = len(body_mass)
    moving = (np.asarray(body_mass) > 0.0) & ((np.asarray(body_flags) & BODY_KINEMATIC) == 0)

    def movable(b: int) -> bool:
        return 0 <= b < n_bodies and bool(moving[b])

    # Union-find over movable bodies.
    root = np.arange(n_bodies)

    def find(b: int) -> int:
        while root[b] != b:
            root[b] = root[root[b]]
            b = root[b]
        return b

    adjacent: list[list[int]] = [[] for _ in range(n_bodies)]
    for j in range(n_joints):
        p, c = int(parent[j]), int(child[j])
        if movable(p) and movable(c):
            rp, rc = find(p), find(c)
            if rp != rc:
                root[max(rp, rc)] = min(rp, rc)
            adjacent[p].append(c)
            adjacent[c].append(p)

    # Depth of each movable body: joints from an immovable body (breadth first).
    depth = np.full(n_bodies, -1, dtype=np.int64)
    queue: deque[int] = deque()
    for j in range(n_joints):
        p, c = int(parent[j]), int(child[j])
        for a, b in ((p, c), (c, p)):
            if movable(b) and not movable(a) and depth[b] < 0:
                depth[b] = 1
                queue.append(b)

    def flood():
        while queue:
            b = queue.popleft()
            for nb in adjacent[b]:
                if depth[nb] < 0:
                    depth[nb] = depth[b] + 1
                    queue.append(nb)

    flood()
    for j in range(n_joints):  # free-floating groups: start at their first joint's body
        for b in (int(parent[j]), int(child[j])):
            if movable(b) and depth[b] < 0:
                depth[b] = 1
                queue.append(b)
                flood()

    key_group = np.empty(n_joints, dtype=np.int64)
    key_depth = np.zeros(n_joints, dtype=np.int64)
    lone = n_bodies  # joints with no movable body each form their own group
    for j in range(n_joints):
        ends = [b for b in (int(parent[j]), int(child[j])) if movable(b)]
        if ends:
            key_group[j] = find(ends[0])
            key_depth[j] = max(int(depth[b]) for b in ends)
        else:
            key_group[j] = lone
            lone += 1
    # Number the groups by their first joint, then sort joints by (group, depth, index).
    first_joint: dict[int, int] = {}
    for j in range(n_joints):
        first_joint.setdefault(int(key_group[j]), j)
    rank = {g: i for i, g in enumerate(sorted(first_joint, key=first_joint.__getitem__))}
    group_of = np.array([rank[int(g)] for g in key_group], dtype=np.int64)
    order = np.lexsort((np.arange(n_joints), key_depth, group_of)) if n_joints else np.zeros(0, dtype=np.int64)
    counts = np.bincount(group_of, minlength=len(rank)) if n_joints else np.zeros(0, dtype=np.int64)
    group_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return group_start, order.astype(np.int32)
