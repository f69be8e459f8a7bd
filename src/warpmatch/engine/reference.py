"""The reference engine: plain recursive backtracking, the oracle for every other engine.

This is Ullmann-style backtracking (J. R. Ullmann, "An algorithm for subgraph
isomorphism", JACM 1976) in its simplest form, driven entirely by a
:class:`~warpmatch.plan.plan.Plan`: at depth ``i`` it takes the adjacency list
of the first backward neighbour's image as the candidate list and keeps a
candidate only if it passes every rule 1–7 of the Plan contract, each checked
on its own, literally, in pure Python. It is meant to be read and trusted, not
to be fast: use it on graphs of up to a few thousand edges.

Examples
--------
>>> from warpmatch.graph.csr import Graph
>>> from warpmatch.query.model import Query
>>> from warpmatch.plan.build import build_plan
>>> g = Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3])
>>> plan = build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 0)]))
>>> ReferenceEngine().count(g, plan) * plan.multiplier
6
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ..graph.csr import Graph
from ..plan.plan import Plan
from .base import Progress, Stop


class _Adjacency:
    """Per-vertex {neighbour: edge label} dicts, built lazily from the CSR arrays."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, labels: np.ndarray | None):
        self.indptr, self.indices, self.labels = indptr, indices, labels
        self._rows: dict[int, dict[int, int]] = {}

    def row(self, v: int) -> dict[int, int]:
        r = self._rows.get(v)
        if r is None:
            lo, hi = int(self.indptr[v]), int(self.indptr[v + 1])
            nbrs = self.indices[lo:hi].tolist()
            labs = [-1] * len(nbrs) if self.labels is None else self.labels[lo:hi].tolist()
            r = dict(zip(nbrs, labs))
            self._rows[v] = r
        return r


class _Search:
    """One run of the backtracking search over ``plan`` on ``graph``."""

    def __init__(self, graph: Graph, plan: Plan):
        self.g = graph
        self.p = plan
        self.k = plan.k
        self.out = _Adjacency(graph.indptr, graph.indices, graph.edge_labels)
        self.inn = _Adjacency(graph.in_indptr, graph.in_indices, graph.in_edge_labels)
        self.out_deg = graph.out_degree
        self.in_deg = graph.in_degree
        self.vlabels = graph.vertex_labels
        self.cand_sets = [set(plan.candidates(i).tolist()) if plan.cand_restricted[i] else None
                          for i in range(plan.k)]
        self.M: list[int] = [-1] * plan.k

    # a data edge a -> b (a - b if undirected) and its label, or None if absent
    def edge(self, a: int, b: int) -> int | None:
        return self.out.row(a).get(b)

    def ok(self, i: int, c: int) -> bool:
        """True iff data vertex ``c`` passes rules 1–7 at depth ``i``."""
        p, M = self.p, self.M
        # 1. label
        if p.vlabel[i] != -1 and (self.vlabels is None or self.vlabels[c] != p.vlabel[i]):
            return False
        # 2. degree
        if self.out_deg[c] < p.min_out_deg[i] or self.in_deg[c] < p.min_in_deg[i]:
            return False
        # 3. explicit candidate set
        if self.cand_sets[i] is not None and c not in self.cand_sets[i]:
            return False
        # 4. injectivity
        if c in M[:i]:
            return False
        # 5. backward edges (direction and label)
        for t in range(p.bn_ptr[i], p.bn_ptr[i + 1]):
            mj = M[p.bn_pos[t]]
            lab = self.edge(mj, c) if p.bn_dir[t] == 0 else self.edge(c, mj)
            if lab is None or (p.bn_elabel[t] != -1 and lab != p.bn_elabel[t]):
                return False
        # 6. induced non-edges
        for t in range(p.na_ptr[i], p.na_ptr[i + 1]):
            mj = M[p.na_pos[t]]
            if (self.edge(mj, c) if p.na_dir[t] == 0 else self.edge(c, mj)) is not None:
                return False
        # 7. symmetry-breaking restrictions
        for t in range(p.res_ptr[i], p.res_ptr[i + 1]):
            mj = M[p.res_pos[t]]
            if (p.res_sign[t] == 1 and not c > mj) or (p.res_sign[t] == -1 and not c < mj):
                return False
        # 8. cut: the prime edge crosses parts, every other crossing edge comes after it
        if p.cut_part is not None and i > 0:
            return self.cut_ok(i, c)
        return True

    def cut_ok(self, i: int, c: int) -> bool:
        """Rule 8 of the Plan contract, written from its text."""
        p, M, part = self.p, self.M, self.p.cut_part
        directed = self.g.directed
        j = int(p.cut_depth)
        if i < j:
            return True

        def key(x: int, y: int) -> tuple[int, int]:
            return (x, y) if directed else (min(x, y), max(x, y))

        mj = c if i == j else M[j]
        if i == j and part[c] == part[M[0]]:
            return False
        prime = key(M[0], mj) if p.cut_prime == 0 else key(mj, M[0])
        row = M[:i] + [c]
        # at depth j every edge matched so far, later only depth i's own
        for d in (range(1, j + 1) if i == j else (i,)):
            for t in range(p.bn_ptr[d], p.bn_ptr[d + 1]):
                a, b = row[p.bn_pos[t]], row[d]
                e = key(a, b) if p.bn_dir[t] == 0 else key(b, a)
                if part[a] != part[b] and e != prime and not e > prime:
                    return False
        return True

    def generate(self, i: int) -> list[int]:
        """Depth ``i``'s candidate list: the roots, or the first backward neighbour's list."""
        if i == 0:
            return self.p.roots.tolist()
        t = int(self.p.bn_ptr[i])
        mj = self.M[int(self.p.bn_pos[t])]
        adj = self.out if self.p.bn_dir[t] == 0 else self.inn
        return list(adj.row(mj))

    def extend(self, i: int) -> Iterator[tuple[int, ...]]:
        """Yield every full assignment extending ``M[0..i-1]``."""
        for c in self.generate(i):
            if not self.ok(i, c):
                continue
            self.M[i] = c
            if i + 1 == self.k:
                yield tuple(self.M)
            else:
                yield from self.extend(i + 1)
        self.M[i] = -1

    def run(self, progress: Progress | None) -> Iterator[tuple[int, ...]]:
        """All raw matches, depth order, root by root."""
        roots = self.generate(0)
        total = len(roots)
        for done, r in enumerate(roots, 1):
            if self.ok(0, r):
                self.M[0] = r
                if self.k == 1:
                    yield (r,)
                else:
                    yield from self.extend(1)
                self.M[0] = -1
            if progress is not None:
                progress(done, total)


class _Stopped(Exception):
    """Raised by the root callback to end a count early (``stop`` said so)."""


class ReferenceEngine:
    """Pure-Python backtracking over a Plan (see the module docstring)."""

    name = "reference"

    def available(self) -> tuple[bool, str]:
        """Always ``(True, "")``: it needs nothing but numpy."""
        return True, ""

    def count(self, graph: Graph, plan: Plan, progress: Progress | None = None,
              stop: Stop | None = None) -> int:
        """Number of raw matches of ``plan`` (NOT multiplied by ``plan.multiplier``).

        Parameters
        ----------
        graph : Graph
            The data graph the plan was built for.
        plan : Plan
            The plan.
        progress : callable, optional
            Called as ``progress(roots_done, roots_total)`` after each root.
        stop : callable, optional
            Called as ``stop(count_so_far)`` after each root; True ends the
            count there (a lower bound). The default is ``None``.

        Returns
        -------
        int
        """
        n = 0
        if stop is None:
            on_root = progress
        else:
            def on_root(done: int, total: int) -> None:
                if progress is not None:
                    progress(done, total)
                if done < total and stop(n):
                    raise _Stopped
        try:
            for _ in _Search(graph, plan).run(on_root):
                n += 1
        except _Stopped:
            pass
        return n

    def match(self, graph: Graph, plan: Plan, batch_size: int = 1 << 16,
              limit: int | None = None,
              progress: Progress | None = None) -> Iterator[np.ndarray]:
        """Yield raw matches as (rows × k) arrays in depth order, internal ids.

        Parameters
        ----------
        graph : Graph
            The data graph the plan was built for.
        plan : Plan
            The plan.
        batch_size : int, optional
            Most rows per batch. The default is 65536.
        limit : int, optional
            Most rows in all. The default is ``None``: every match.
        progress : callable, optional
            Called as ``progress(roots_done, roots_total)`` after each root.

        Yields
        ------
        numpy.ndarray
            ``(rows, plan.k)`` arrays of dtype ``graph.indices.dtype``.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if limit is not None and limit <= 0:
            return
        dtype = graph.indices.dtype
        buf: list[tuple[int, ...]] = []
        emitted = 0
        for m in _Search(graph, plan).run(progress):
            buf.append(m)
            emitted += 1
            if len(buf) == batch_size:
                yield np.array(buf, dtype=dtype).reshape(-1, plan.k)
                buf = []
            if limit is not None and emitted >= limit:
                break
        if buf:
            yield np.array(buf, dtype=dtype).reshape(-1, plan.k)
