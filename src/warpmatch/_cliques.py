"""Whole counts of labeled clique queries by pivoting (issue 23: human's complete queries,
K12 to K20, have 10^15 to 10^26 embeddings, which no search enumerates).

Map: :func:`clique_applies` (which pairs of graph and query this counts) < :func:`count_cliques`
(the count: the data vertices that can take part, a degeneracy order, then per vertex the
pivoting tree of its later neighbours) < :func:`_tree` (one vertex's tree, its leaves
summed by label).

Implements the succinct clique tree of Jain and Seshadhri, "The Power of Pivoting for Exact
Clique Counting" (WSDM 2020, Pivoter, Alg. 1-2): for a candidate set ``P`` (vertices
adjacent to every vertex chosen so far), a pivot ``p`` of ``P`` with the most neighbours in
``P`` is kept as optional, and every vertex of ``P`` outside ``p``'s neighbourhood is tried
as a required ("held") vertex in turn, each excluding those tried before it. Every clique
then lies in exactly one leaf ``(H, V)`` of the tree as ``H`` plus a subset of the pivots
``V``, every such set being a clique, so a leaf holds ``C(|V|, k - |H|)`` cliques of ``k``
vertices.

How it differs from Pivoter:

- Labels: a query clique with ``m_l`` vertices of label ``l`` is the data cliques with
  those label counts, each taken by ``prod m_l!`` label-preserving bijections. A leaf
  holds ``prod_l C(v_l, m_l - h_l)`` such cliques (``h_l`` and ``v_l`` its held vertices
  and pivots of label ``l``), and a branch whose held vertices pass some ``m_l``, or whose
  vertices cannot make up the counts, is cut.
- Python integers as bit sets over one vertex's later neighbours (at most the graph's
  degeneracy of them), not per-level arrays; the graph is first cut to the vertices with a
  query label and at least ``k - 1`` such neighbours, to a fixed point.
- Edge labels: a query whose edges all name one label counts the cliques of that label's
  data edges (a query with edges of several labels is not taken).
- Only labeled queries (every vertex a label): an unlabeled clique of a large sparse graph
  is the engines' fast case, where this tree in Python would be slower.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from .graph.csr import Graph
from .query.model import ANY, Query, labeled_clique_reason

__all__ = ["clique_applies", "count_cliques", "WORK_MAX"]

#: the most pairs of later neighbours (summed over the vertices) a count tests for edges
#: before declining: Python's speed, about 10^6 a second
WORK_MAX = 2e8


def clique_applies(g: Graph, q: Query, induced: bool) -> str | None:
    """Why :func:`count_cliques` does not count ``q`` in ``g`` (``None``: it does): the
    query's conditions (:func:`~warpmatch.query.model.labeled_clique_reason`), an
    undirected graph with vertex labels. A complete query is the same induced or not."""
    why = labeled_clique_reason(q)
    if why is not None:
        return why
    if g.directed:
        return "directed"
    if g.vertex_labels is None:
        return "the graph has no vertex labels"
    return None


def count_cliques(g: Graph, q: Query, stop: Callable[[], bool] | None = None
                  ) -> tuple[int, dict[str, Any]] | None:
    """The embeddings of the complete query ``q`` in ``g`` (``clique_applies`` must accept
    them), or ``None`` where it declines (more than :data:`WORK_MAX` pairs to test) or
    ``stop()`` says so.

    Returns
    -------
    (int, dict)
        The count, and what ``CountResult.cliques`` reports: the data cliques, the tree's
        leaves, the vertices kept and the seconds.
    """
    t0 = time.perf_counter()
    k = int(q.k)
    want: dict[int, int] = {}
    for lab in np.asarray(q.vertex_labels).tolist():
        want[int(lab)] = want.get(int(lab), 0) + 1
    vl = np.asarray(g.vertex_labels, dtype=np.int64)
    indptr = np.asarray(g.indptr, dtype=np.int64)
    indices = np.asarray(g.indices, dtype=np.int64)
    keep = np.isin(vl, np.fromiter(want, dtype=np.int64))
    # cut to the vertices with at least k - 1 kept neighbours, to a fixed point
    src = np.repeat(np.arange(g.n, dtype=np.int64), np.diff(indptr))
    el = int(np.asarray(q.edge_labels)[0]) if q.edge_labels is not None and len(
        q.edge_labels) else ANY
    arc = np.ones(src.size, dtype=bool)
    if el != ANY:
        # the query's edges all name one label: only data edges of that label count
        arc = (np.zeros(src.size, dtype=bool) if g.edge_labels is None
               else np.asarray(g.edge_labels) == el)
    while True:
        live = arc & keep[src] & keep[indices]
        deg = np.bincount(src[live], minlength=g.n)
        nxt = keep & (deg >= k - 1)
        if nxt.sum() == keep.sum():
            break
        keep = nxt
    ids = np.flatnonzero(keep)
    info = {"cliques": 0, "leaves": 0, "vertices": int(ids.size), "seconds": 0.0}
    if ids.size < k:
        info["seconds"] = time.perf_counter() - t0
        return 0, info
    live = arc & keep[src] & keep[indices]
    adj: dict[int, set[int]] = {int(v): set() for v in ids.tolist()}
    for a, b in zip(src[live].tolist(), indices[live].tolist()):
        adj[a].add(b)
    # a degeneracy order: each vertex's later neighbours are at most the degeneracy
    rank = _degeneracy_rank(adj)
    later = {v: [u for u in nb if rank[u] > rank[v]] for v, nb in adj.items()}
    if sum(len(x) ** 2 for x in later.values()) / 2 > WORK_MAX:
        return None
    lab_of = {int(v): int(vl[v]) for v in ids.tolist()}
    labs = sorted(want)
    need = tuple(want[lab] for lab in labs)
    lab_idx = {lab: i for i, lab in enumerate(labs)}
    total = 0
    leaves = [0]
    for v in sorted(adj, key=rank.__getitem__):
        if stop is not None and stop():
            return None
        cand = later[v]
        if len(cand) < k - 1:
            continue
        pos = {u: i for i, u in enumerate(cand)}
        nbits = []
        for u in cand:
            m = 0
            for w in adj[u]:
                i = pos.get(w)
                if i is not None:
                    m |= 1 << i
            nbits.append(m)
        lmask = [0] * len(labs)
        for i, u in enumerate(cand):
            lmask[lab_idx[lab_of[u]]] |= 1 << i
        held = [0] * len(labs)
        held[lab_idx[lab_of[v]]] = 1
        total += _tree((1 << len(cand)) - 1, held, 0, nbits, lmask, need, leaves)
    aut = 1
    for n in need:
        aut *= math.factorial(n)
    info.update(cliques=int(total), leaves=leaves[0], seconds=time.perf_counter() - t0)
    return int(total) * aut, info


def _degeneracy_rank(adj: dict[int, set[int]]) -> dict[int, int]:
    """Each vertex's place in a smallest-last order (the vertex of least remaining degree
    removed first)."""
    deg = {v: len(nb) for v, nb in adj.items()}
    buckets: dict[int, set[int]] = {}
    for v, d in deg.items():
        buckets.setdefault(d, set()).add(v)
    rank: dict[int, int] = {}
    d = 0
    while len(rank) < len(adj):
        while not buckets.get(d):
            d += 1
        v = buckets[d].pop()
        rank[v] = len(rank)
        for u in adj[v]:
            if u not in rank:
                du = deg[u]
                buckets[du].discard(u)
                deg[u] = du - 1
                buckets.setdefault(du - 1, set()).add(u)
        d = max(d - 1, 0)
    return rank


def _tree(P: int, held: list[int], pivots: int, nbits: list[int], lmask: list[int],
          need: tuple[int, ...], leaves: list[int]) -> int:
    """The cliques with ``need`` vertices of each label below this node of the pivoting
    tree: ``P`` the candidates (a bit set over the root's later neighbours), ``held`` the
    required vertices' count per label, ``pivots`` the optional ones (a bit set)."""
    # cut: a label whose held vertices and every candidate and pivot cannot reach its count
    for i, n in enumerate(need):
        if held[i] + ((P | pivots) & lmask[i]).bit_count() < n:
            return 0
    if P == 0:
        leaves[0] += 1
        out = 1
        for i, n in enumerate(need):
            out *= math.comb((pivots & lmask[i]).bit_count(), n - held[i])
        return out
    # the pivot: the candidate with the most neighbours among the candidates
    best, best_n = -1, -1
    rest = P
    while rest:
        low = rest & -rest
        i = low.bit_length() - 1
        c = (nbits[i] & P).bit_count()
        if c > best_n:
            best, best_n = i, c
        rest ^= low
    total = 0
    done = 0
    rest = P & ~nbits[best]          # holds the pivot itself
    while rest:
        low = rest & -rest
        i = low.bit_length() - 1
        rest ^= low
        sub = P & nbits[i] & ~done
        if i == best:
            total += _tree(sub, held, pivots | low, nbits, lmask, need, leaves)
        else:
            j = next(t for t, m in enumerate(lmask) if m & low)
            if held[j] < need[j]:
                held[j] += 1
                total += _tree(sub, held, pivots, nbits, lmask, need, leaves)
                held[j] -= 1
        done |= low
    return total
