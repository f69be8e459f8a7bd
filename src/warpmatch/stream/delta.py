"""Incremental join plans: one delta plan per query edge orientation (GCSM §II-B).

Continuous subgraph matching as *incremental view maintenance* (GCSM §II-B,
formula (1), after Ammar et al., "Distributed evaluation of subgraph queries
using worst-case optimal low-memory dataflows", VLDB 2018): the embeddings
that an edge update adds or removes are exactly those in which the update
edge is the image of one query edge. So the delta of an update is the union,
over the query edges ``a -> b`` (both orientations for undirected queries),
of the matches that *start* with ``f(a) = src, f(b) = dst`` and extend the
remaining query vertices by a worst-case-optimal join (set intersections of
neighbour lists). One :class:`~warpmatch.stream.types.DeltaPlans` row per
such ``(a, b)`` is compiled here; the engines run them.

What differs from GCSM: formula (1) orders the delta relations of a batch and
reads old lists ``N`` for relations after the delta edge and new lists ``N'``
for those before it, so that a match made of several updated edges of one
batch is reported once per batch. We report per *update* instead
(:mod:`warpmatch.stream.types`, "Semantics"): every task reads the single
state ``S_i`` or ``S_{i+1}`` of its update through timestamped adjacency, so
a match is reported once per update that creates or destroys it, and the
result does not depend on how the stream is batched.

Induced matching adds one plan per *non-adjacent* ordered pair ``(a, b)``
(``pair_kind 0``): inserting ``src -> dst`` destroys the induced embeddings
of ``S_i`` in which ``f(a) = src, f(b) = dst`` and ``a -> b`` is not a query
edge; deleting it creates such embeddings in ``S_{i+1}``.

Symmetry breaking (Grochow & Kellis, RECOMB 2007, via
:mod:`warpmatch.query.symmetry`) applies per plan: the embeddings through one
data pair ``(src, dst)`` in a fixed role (image of a query edge, or of a
non-adjacent pair) are closed under ``f -> f ∘ σ`` for ``σ ∈ Aut(Q)``, since
an automorphism maps query edges to query edges and non-edges to non-edges.
That set is therefore a union of orbits, and the restrictions pick exactly one
embedding per orbit, whichever plan it is found by; counting embeddings is the
restricted count times ``|Aut(Q)|``.

Examples
--------
>>> from warpmatch.query.patterns import get_pattern
>>> dp = compile_delta_plans(get_pattern("triangle"))
>>> dp.num_plans, dp.multiplier          # 3 edges x 2 orientations, |Aut| = 6
(6, 6)
>>> compile_delta_plans(get_pattern("triangle"), purpose="list").multiplier
1
"""
from __future__ import annotations

import numpy as np

from ..errors import QueryError
from ..query.io import check_direction
from ..query.model import ANY, Query
from ..query.symmetry import symmetry_breaking
from .types import DeltaPlans

__all__ = ["compile_delta_plans", "MODES", "PURPOSES"]

MODES = ("embeddings", "subgraphs")
PURPOSES = ("count", "list")


def _pairs(query: Query, induced: bool) -> list[tuple[int, int, int, int]]:
    """``(a, b, pair_kind, pair_elabel)`` for every plan, query edges first."""
    A = query.adjacency()
    L = query.edge_label_matrix()
    out = []
    if query.directed:
        for a, b in query.edges.tolist():
            out.append((a, b, 1, int(L[a, b])))
    else:
        for a, b in query.edges.tolist():
            out.append((a, b, 1, int(L[a, b])))
            out.append((b, a, 1, int(L[a, b])))
    if induced:
        for a in range(query.k):
            for b in range(query.k):
                if a != b and not A[a, b]:
                    out.append((a, b, 0, ANY))
    return out


def _greedy_order(query: Query, a: int, b: int) -> list[int]:
    """``[a, b]`` then, repeatedly, the unplaced vertex with most edges to placed vertices.

    Ties go to the higher query degree, then to the smaller id (deterministic).
    Edges are counted in both directions for directed queries, like RI orders
    directed queries on their underlying graph while keeping more constraints
    (each backward edge is one more intersection or membership test that
    prunes the candidates).
    """
    A = query.adjacency().astype(np.int64)
    both = A + A.T                       # edges between u and w, either direction
    und = both > 0
    deg = und.sum(axis=1)
    order = [a, b]
    placed = np.zeros(query.k, dtype=bool)
    placed[[a, b]] = True
    while len(order) < query.k:
        back = both[:, placed].sum(axis=1)
        conn = und[:, placed].any(axis=1) & ~placed
        cand = np.flatnonzero(conn)
        # a connected query always has an unplaced vertex next to the placed set
        best = max(cand.tolist(), key=lambda u: (int(back[u]), int(deg[u]), -u))
        order.append(best)
        placed[best] = True
    return order


def _validate(query: Query, mode: str, purpose: str, directed: bool,
              has_edge_labels: bool) -> None:
    if mode not in MODES:
        raise QueryError(f"unknown mode {mode!r}: use 'embeddings' (every injective map) or "
                         f"'subgraphs' (each distinct subgraph once)")
    if purpose not in PURPOSES:
        raise QueryError(f"unknown plan purpose {purpose!r}: use 'count' or 'list'")
    check_direction(query, directed)
    if query.m == 0:
        raise QueryError(f"the query {query.name!r} has no edges: edge updates never change "
                         "its matches, so continuous matching needs a query with at least "
                         "one edge")
    if query.edge_labeled and not has_edge_labels:
        e = int(np.flatnonzero(query.edge_labels != ANY)[0])
        a, b = (query.names[x] for x in query.edges[e])
        raise QueryError(f"query edge {a}-{b} has label {int(query.edge_labels[e])} but the "
                         f"graph has no edge labels: drop the query's edge labels or read a "
                         f"graph with edge labels")


def compile_delta_plans(query: Query, mode: str = "embeddings", induced: bool = False,
                        purpose: str = "count", directed: bool | None = None,
                        has_edge_labels: bool = True) -> DeltaPlans:
    """Compile a query into incremental join plans (one per query pair and orientation).

    Parameters
    ----------
    query : Query
        The query graph (at least one edge).
    mode : {"embeddings", "subgraphs"}, optional
        What the counts mean. The default is ``"embeddings"``.
    induced : bool, optional
        Induced matching: adds the ``pair_kind 0`` plans of the non-adjacent
        ordered pairs. The default is ``False``.
    purpose : {"count", "list"}, optional
        ``"count"`` with ``mode="embeddings"`` uses symmetry-breaking
        restrictions and ``multiplier = |Aut(Q)|``; ``"list"`` with
        ``mode="embeddings"`` enumerates every embedding (no restrictions,
        multiplier 1). ``mode="subgraphs"`` always uses the restrictions with
        multiplier 1. The default is ``"count"``.
    directed : bool or None, optional
        Whether the data graph is directed; must agree with the query. The
        default, ``None``, takes the query's directedness.
    has_edge_labels : bool, optional
        Whether the data graph has edge labels; an edge-labeled query on a
        graph without them is an error, as for static matching. The default
        is ``True``.

    Returns
    -------
    DeltaPlans
        The layout of :class:`~warpmatch.stream.types.DeltaPlans`. Query
        labels absent from the graph are *not* rejected: they may appear later
        in the stream.

    Raises
    ------
    QueryError
        Unknown mode or purpose, directedness mismatch, a query without edges,
        or edge labels the graph cannot have.

    Examples
    --------
    >>> from warpmatch.query.model import Query
    >>> dp = compile_delta_plans(Query.parse("a->b, b->c"), induced=True)
    >>> dp.pair_kind.tolist()                  # 2 edges, then the 4 non-adjacent ordered pairs
    [1, 1, 0, 0, 0, 0]
    """
    directed = bool(query.directed) if directed is None else bool(directed)
    _validate(query, mode, purpose, directed, has_edge_labels)
    k = query.k
    A = query.adjacency()
    L = query.edge_label_matrix()
    restr, aut = symmetry_breaking(query)
    use_res = mode == "subgraphs" or purpose == "count"
    multiplier = int(aut) if (mode == "embeddings" and purpose == "count") else 1

    pairs = _pairs(query, induced)
    P = len(pairs)
    order = np.zeros((P, k), dtype=np.int32)
    vlabel = np.zeros((P, k), dtype=np.int32)
    bn_ptr = np.zeros((P, k + 1), dtype=np.int32)
    na_ptr = np.zeros((P, k + 1), dtype=np.int32)
    res_ptr = np.zeros((P, k + 1), dtype=np.int32)
    bn: list[tuple[int, int, int]] = []
    na: list[tuple[int, int]] = []
    res: list[tuple[int, int]] = []
    for j, (a, b, _kind, _lab) in enumerate(pairs):
        vorder = _greedy_order(query, a, b)
        depth_of = np.empty(k, dtype=np.int64)
        depth_of[vorder] = np.arange(k)
        order[j] = vorder
        vlabel[j] = query.vertex_labels[vorder]
        per_res: list[list[tuple[int, int]]] = [[] for _ in range(k)]
        if use_res:
            for x, y in restr:                     # f(x) < f(y), checked at the later depth
                dx, dy = int(depth_of[x]), int(depth_of[y])
                if dy > dx:
                    per_res[dy].append((dx, 1))    # c > M[dx]
                else:
                    per_res[dx].append((dy, -1))   # c < M[dy]
        for i in range(1, k):
            u = vorder[i]
            bn_ptr[j, i] = len(bn)
            na_ptr[j, i] = len(na)
            res_ptr[j, i] = len(res)
            for jj in range(i):
                w = vorder[jj]
                # the pair relation itself (M[0] -> M[1]) is the update edge: present in
                # the task's state for pair_kind 1, absent for pair_kind 0; never re-checked
                skip_out = i == 1 and jj == 0
                if directed:
                    if not skip_out:
                        if A[w, u]:
                            bn.append((jj, 0, int(L[w, u])))     # data edge M[jj] -> c
                        elif induced:
                            na.append((jj, 0))
                    if A[u, w]:
                        bn.append((jj, 1, int(L[u, w])))         # data edge c -> M[jj]
                    elif induced:
                        na.append((jj, 1))
                elif not skip_out:
                    if A[w, u]:
                        bn.append((jj, 0, int(L[w, u])))
                    elif induced:
                        na.append((jj, 0))
            res.extend(per_res[i])
        bn_ptr[j, k] = len(bn)
        na_ptr[j, k] = len(na)
        res_ptr[j, k] = len(res)
        # depth 0 has nothing: its row of pointers is [x, x) = the start of depth 1
        bn_ptr[j, 0] = bn_ptr[j, 1] if k > 1 else bn_ptr[j, k]
        na_ptr[j, 0] = na_ptr[j, 1] if k > 1 else na_ptr[j, k]
        res_ptr[j, 0] = res_ptr[j, 1] if k > 1 else res_ptr[j, k]
        for i in range(2, k):
            if bn_ptr[j, i + 1] == bn_ptr[j, i]:   # pragma: no cover - connected order
                raise QueryError(f"internal error: depth {i} of delta plan {j} has no "
                                 "backward edge")

    def col(rows: list[tuple], f: int, dt: type) -> np.ndarray:
        return np.ascontiguousarray(np.array([r[f] for r in rows], dtype=dt).reshape(-1))

    return DeltaPlans(
        k=k, order=order, vlabel=vlabel,
        bn_ptr=bn_ptr, bn_pos=col(bn, 0, np.int32), bn_dir=col(bn, 1, np.int8),
        bn_elabel=col(bn, 2, np.int32),
        na_ptr=na_ptr, na_pos=col(na, 0, np.int32), na_dir=col(na, 1, np.int8),
        res_ptr=res_ptr, res_pos=col(res, 0, np.int32), res_sign=col(res, 1, np.int8),
        pair_kind=np.array([p[2] for p in pairs], dtype=np.int8).reshape(-1),
        pair_elabel=np.array([p[3] for p in pairs], dtype=np.int32).reshape(-1),
        multiplier=multiplier, mode=mode, induced=bool(induced), directed=directed,
        query=query,
    )
