"""Articulation trees for SolverXPBD's articulation joint pass (``solve_articulations``).

Each joint group (``_joint_groups.joint_groups``: joints linked through moving bodies) becomes one
tree of *nodes*, bodies and joints alternating (Baraff 1996, "Linear-time dynamics using Lagrange
multipliers"): a joint node's neighbours are its moving bodies, a body node's its joints. The joint
rows of the whole tree then form one sparse symmetric system whose block sparsity is that tree, and
eliminating nodes leaves first factors it exactly in time linear in the node count.

The root is a joint to an immovable body or the world when the group has one (the group's first
such joint; its moving body is its only child), else the group's first moving body (a floating
base). Joints that would close a loop (a second joint between two bodies already in the tree, or a
second joint to the world) are *loop joints*: they are left out of the tree and solved after it,
one block each (the Gauss-Seidel pass), in the same iteration. Free joints constrain nothing and
are no nodes.

Host code, run once when the solver is built. Node arrays are CSR over groups, nodes of a group in
elimination order (every node before its tree parent; the root last).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..kernels.types import BODY_KINEMATIC, JOINT_FREE
from ._joint_groups import joint_groups

NODE_BODY = 0
NODE_JOINT = 1


def articulation_trees(
    parent: np.ndarray,
    child: np.ndarray,
    joint_type: np.ndarray,
    body_mass: np.ndarray,
    body_flags: np.ndarray,
) -> dict[str, np.ndarray]:
    """The trees of all joint groups as int32 arrays:

    - ``node_start`` [groups + 1]: CSR offsets into the node arrays;
    - ``node_kind`` [nodes]: ``NODE_BODY`` or ``NODE_JOINT``; ``node_index``: the body or joint index;
    - ``node_parent`` [nodes]: the tree parent's node index (global), -1 at the root;
    - ``node_pbody``, ``node_cbody`` [nodes]: for a joint node, the node of its parent and of its
      child body (-1 where that body is immovable or the world); -1 for body nodes;
    - ``loop_start`` [groups + 1], ``loop_joint``: each group's loop joints (CSR), in index order.
    """
    parent = np.asarray(parent, dtype=np.int64)
    child = np.asarray(child, dtype=np.int64)
    joint_type = np.asarray(joint_type)
    n_bodies = len(body_mass)
    moving = (np.asarray(body_mass) > 0.0) & ((np.asarray(body_flags) & BODY_KINEMATIC) == 0)

    def movable(b: int) -> bool:
        return 0 <= b < n_bodies and bool(moving[b])

    group_start, group_joint = joint_groups(parent, child, body_mass, body_flags)
    kind: list[int] = []
    index: list[int] = []
    tree_parent: list[int] = []
    pbody: list[int] = []
    cbody: list[int] = []
    node_start = [0]
    loop_start = [0]
    loops: list[int] = []
    for g in range(len(group_start) - 1):
        joints = [int(j) for j in group_joint[group_start[g] : group_start[g + 1]] if joint_type[j] != JOINT_FREE]
        joints = [j for j in joints if movable(int(parent[j])) or movable(int(child[j]))]
        group_loops: list[int] = []
        if not joints:
            node_start.append(len(kind))
            loop_start.append(len(loops))
            continue
        by_body: dict[int, list[int]] = {}
        for j in sorted(joints):
            for b in (int(parent[j]), int(child[j])):
                if movable(b):
                    by_body.setdefault(b, []).append(j)
        # Breadth-first from each root: (kind, index, tree parent's position in `order`). A group
        # split by a free joint between two of its bodies is a forest: each part is a tree of its own.
        order: list[tuple[int, int, int]] = []
        body_pos: dict[int, int] = {}
        joint_pos: dict[int, int] = {}
        trees: list[tuple[int, int]] = []
        while True:
            left = [j for j in sorted(joints) if j not in joint_pos and j not in group_loops]
            if not left:
                break
            first = len(order)
            queue: deque[int] = deque()
            grounded = [j for j in left if not (movable(int(parent[j])) and movable(int(child[j])))]
            if grounded:
                j = grounded[0]
                b = int(child[j]) if movable(int(child[j])) else int(parent[j])
                if b in body_pos:
                    group_loops.append(j)  # its body is in an earlier tree: a second way to the world
                    continue
                joint_pos[j] = len(order)
                order.append((NODE_JOINT, j, -1))
                body_pos[b] = len(order)
                order.append((NODE_BODY, b, joint_pos[j]))
                queue.append(b)
            else:
                j = left[0]
                root_body = int(parent[j]) if movable(int(parent[j])) else int(child[j])
                body_pos[root_body] = len(order)
                order.append((NODE_BODY, root_body, -1))
                queue.append(root_body)
            while queue:
                b = queue.popleft()
                for j in by_body[b]:
                    if j in joint_pos or j in group_loops:
                        continue
                    other = int(child[j]) if int(parent[j]) == b else int(parent[j])
                    if not movable(other) or other in body_pos:
                        group_loops.append(j)  # a second way to the world or to a body already in a tree
                        continue
                    joint_pos[j] = len(order)
                    order.append((NODE_JOINT, j, body_pos[b]))
                    body_pos[other] = len(order)
                    order.append((NODE_BODY, other, joint_pos[j]))
                    queue.append(other)
            trees.append((first, len(order)))
        # Elimination order: each tree leaves first (reverse breadth-first), its root last.
        base = len(kind)
        pos_of: dict[int, int] = {}
        for first, end in trees:
            for i in range(first, end):
                pos_of[i] = base + first + (end - 1 - i)
        for first, end in trees:
            for i in reversed(range(first, end)):
                k, idx, par = order[i]
                kind.append(k)
                index.append(idx)
                tree_parent.append(pos_of[par] if par >= 0 else -1)
                if k == NODE_JOINT:
                    pb, cb = int(parent[idx]), int(child[idx])
                    pbody.append(pos_of[body_pos[pb]] if movable(pb) else -1)
                    cbody.append(pos_of[body_pos[cb]] if movable(cb) else -1)
                else:
                    pbody.append(-1)
                    cbody.append(-1)
        node_start.append(len(kind))
        loops.extend(sorted(group_loops))
        loop_start.append(len(loops))

    def i32(x):
        return np.asarray(x, dtype=np.int32)

    return {
        "node_start": i32(node_start),
        "node_kind": i32(kind),
        "node_index": i32(index),
        "node_parent": i32(tree_parent),
        "node_pbody": i32(pbody),
        "node_cbody": i32(cbody),
        "loop_start": i32(loop_start),
        "loop_joint": i32(loops),
    }


class TreeScratch:
    """The trees of a model on the device with the per-node scratch of the articulation pass (both
    solvers; ``nodes``, a ``TreeNodes``), and each body's tree (``body_tree``, -1 for none)."""

    def __init__(self, model, device):
        import warp as wp

        from ..kernels import joints as joint_kernels

        m = model
        trees = articulation_trees(
            m.joint_parent.numpy(),
            m.joint_child.numpy(),
            m.joint_type.numpy(),
            m.body_mass.numpy(),
            m.body_flags.numpy(),
        )
        self.group_count = len(trees["node_start"]) - 1
        nodes = max(len(trees["node_kind"]), 1)

        def per_node(dtype):
            return wp.zeros(nodes, dtype=dtype, device=device)

        t = joint_kernels.TreeNodes()
        for k in ("start", "kind", "index", "parent", "pbody", "cbody"):
            host = trees["node_" + k]
            setattr(t, k, wp.array(host if len(host) else np.zeros(1, np.int32), dtype=wp.int32, device=device))
        for k in ("d", "e", "factor", "z"):
            setattr(t, k, per_node(joint_kernels.mat66d))
        t.y = per_node(joint_kernels.vec6d)
        t.drive = per_node(wp.int32)
        t.mask = per_node(wp.int32)
        t.rows_l = per_node(wp.mat33)
        t.rows_a = per_node(wp.mat33)
        t.arm_c = per_node(wp.vec3)
        t.arm_p = per_node(wp.vec3)
        self.nodes = t
        """The trees and their per-node scratch, as the kernel takes them (``TreeNodes``)."""
        tree = np.full(max(m.body_count, 1), -1, dtype=np.int32)
        starts = trees["node_start"]
        node_group = np.repeat(np.arange(len(starts) - 1, dtype=np.int32), np.diff(starts))
        self.node_group_host = node_group
        self.node_kind_host = trees["node_kind"]
        self.node_index_host = trees["node_index"]
        is_body = trees["node_kind"] == NODE_BODY
        tree[trees["node_index"][is_body]] = node_group[is_body]
        self.body_tree_host = tree[: m.body_count]
        self.body_tree = wp.array(tree, dtype=wp.int32, device=device)
        in_tree = np.zeros(max(m.joint_count, 1), dtype=np.int32)
        in_tree[trees["node_index"][~is_body]] = 1
        self.joint_in_tree = wp.array(in_tree, dtype=wp.int32, device=device)
        self.loop_start = trees["loop_start"]
        self.loop_joint = trees["loop_joint"]
        self.all_groups = wp.array(np.arange(max(self.group_count, 1), dtype=np.int32), dtype=wp.int32, device=device)
        """Every group in order: the ``group_list`` of a pass over all trees at once."""

    def drop_groups(self, drop: np.ndarray):
        """Take the groups where ``drop`` is true out of the pass: their bodies' ``body_tree`` and
        their joints' ``joint_in_tree`` become -1 and 0 (another pass solves them)."""
        import warp as wp

        drop = np.asarray(drop, dtype=bool)
        if not drop.any():
            return
        tree = self.body_tree.numpy()
        in_tree = self.joint_in_tree.numpy()
        gone = drop[self.node_group_host]
        bodies = self.node_index_host[gone & (self.node_kind_host == NODE_BODY)]
        joints = self.node_index_host[gone & (self.node_kind_host == NODE_JOINT)]
        tree[bodies] = -1
        in_tree[joints] = 0
        self.body_tree_host = tree[: len(self.body_tree_host)]
        self.body_tree = wp.array(tree, dtype=wp.int32, device=self.body_tree.device)
        self.joint_in_tree = wp.array(in_tree, dtype=wp.int32, device=self.joint_in_tree.device)


def colour_trees(body_tree: np.ndarray, group_count: int, slot_start: np.ndarray, slot_rows: np.ndarray) -> np.ndarray:
    """A colour per tree group such that no two groups of one colour share a row (``slot_rows``: a
    row id per body slot, -1 for slots that do not couple trees), greedy in group order. SolverVBD
    steps the trees of one colour at once and the colours in turn (Gauss-Seidel between trees, as
    between bodies in its colour sweep)."""
    rows: dict[int, set[int]] = {}
    for b, g in enumerate(body_tree):
        if g < 0:
            continue
        for row in slot_rows[slot_start[b] : slot_start[b + 1]]:
            if row >= 0:
                rows.setdefault(int(row), set()).add(int(g))
    neighbours: dict[int, set[int]] = {}
    for groups in rows.values():
        for g in groups:
            neighbours.setdefault(g, set()).update(groups - {g})
    colour = np.zeros(group_count, dtype=np.int32)
    for g in range(group_count):
        taken = {int(colour[h]) for h in neighbours.get(g, ()) if h < g}
        c = 0
        while c in taken:
            c += 1
        colour[g] = c
    return colour
