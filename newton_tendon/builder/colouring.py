"""Graph colouring of bodies for SolverVBD: two bodies that share a constraint row get different colours."""

from __future__ import annotations

import numpy as np

from ..finalize import contact_body_pairs, transmission_body_groups


class ColouringBuilder:
    """Part of :class:`~newton_tendon.ModelBuilder`: ``color`` and the body graph it colours."""

    def _body_edges(self) -> list[tuple[int, int]]:
        """Pairs of bodies coupled by a row: joints, contact-capable shape pairs, transmission
        tendons and their couplings, and every two bodies on one routed cable (SolverVBD's run rows
        join the spans between guides that pass material freely, so a body's Newton step reads the
        motion of every body of its run; which guides those are depends on friction and wrap, so
        the whole route counts)."""
        edges = [(p, c) for p, c in zip(self.joint_parent, self.joint_child, strict=True) if p >= 0]
        edges.extend(contact_body_pairs(self))
        # Transmission tendons and couplings: every pair of distinct bodies of one row.
        for group in transmission_body_groups(self):
            members = sorted(set(group))
            edges.extend((a, b) for i, a in enumerate(members) for b in members[i + 1 :])
        starts = [*self.tendon_start, self.tendon_guide_count]
        for t in range(self.tendon_count):
            members = sorted({b for b in self.tendon_guide_body[starts[t] : starts[t + 1]] if b >= 0})
            edges.extend((a, b) for i, a in enumerate(members) for b in members[i + 1 :])
        return edges

    def color(self) -> int:
        """Greedy graph colouring of bodies: two bodies that share a constraint get different colours.

        VBD solves bodies of one colour in parallel. Returns the number of colours.
        """
        n = self.body_count
        adj: list[list[int]] = [[] for _ in range(n)]
        for a, b in self._body_edges():
            adj[a].append(b)
            adj[b].append(a)
        degree = np.array([len(a) for a in adj])
        colors = np.full(n, -1, dtype=np.int64)
        # Largest degree first gives fewer colours on chains and trees.
        for b in np.argsort(-degree, kind="stable"):
            used = {colors[o] for o in adj[b] if colors[o] >= 0}
            c = 0
            while c in used:
                c += 1
            colors[b] = c
        self.body_color = [int(c) for c in colors]
        return int(colors.max() + 1) if n else 0
