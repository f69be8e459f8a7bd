"""Random-walk query generation, as in the subgraph-matching literature.

The query sets of the labeled benchmarks (yeast, human, hprd) were made by
Sun & Luo ("In-Memory Subgraph Matching: An In-depth Study", SIGMOD 2020,
§7.1) and are reused by the continuous-matching study of RapidFlow (Sun et al.,
"RapidFlow: An Efficient Approach to Continuous Subgraph Matching", VLDB 2022):
a query of ``k`` vertices is a connected subgraph of the data graph found by a
random walk, and a query set of size ``k`` is split by density into *dense*
queries (average degree ``d(q) >= 3``) and *sparse* ones (``d(q) < 3``).

:func:`random_walk_query` follows that recipe:

1. start a random walk at a uniformly random vertex of non-zero degree and
   step to uniformly random neighbours until ``k`` distinct vertices are seen
   (a walk that cannot find them within its step budget, e.g. in a component
   of fewer than ``k`` vertices, is abandoned);
2. the query is the subgraph of the data graph *induced* by those vertices,
   with their vertex labels (and the edges' labels, if the graph has any);
3. *dense* keeps it if ``d(q) >= 3`` and otherwise tries a new walk; *sparse*
   removes random non-bridge edges (edges whose removal keeps the query
   connected) until ``d(q) < 3``, which always succeeds because a spanning
   tree has ``d(q) = 2(k - 1)/k < 2``.

Each try is a new walk from the same seeded generator, so the result depends
only on the graph, ``k``, ``density`` and ``seed``. Every query found this way
has at least one embedding in the data graph (the walk's vertices).
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from ..graph.csr import Graph
from .model import ANY, MAX_QUERY_VERTICES, Query

__all__ = ["random_walk_query", "average_degree", "DENSE_MIN_DEGREE"]

#: a query is dense when its average degree is at least this (Sun & Luo, SIGMOD 2020)
DENSE_MIN_DEGREE = 3.0


def average_degree(query: Query) -> float:
    """``2 |E(q)| / |V(q)|``: the density measure that splits dense from sparse queries.

    Parameters
    ----------
    query : Query
        Any query; a directed query's arcs count one each.

    Returns
    -------
    float
    """
    return 2.0 * query.m / query.k


def _walk(indptr: np.ndarray, indices: np.ndarray, in_indptr: np.ndarray | None,
          in_indices: np.ndarray | None, start: int, k: int, max_steps: int,
          rng: np.random.Generator) -> list[int] | None:
    """Distinct vertices of one random walk from ``start`` in visiting order, or None if stuck.

    Directed graphs are walked along arcs in either direction (the query
    needs only weak connectivity).
    """
    seen = [start]
    in_seen = {start}
    v = start
    for _ in range(max_steps):
        lo, hi = int(indptr[v]), int(indptr[v + 1])
        out_deg = hi - lo
        in_deg = 0 if in_indptr is None else int(in_indptr[v + 1]) - int(in_indptr[v])
        deg = out_deg + in_deg
        if deg == 0:
            return None
        j = int(rng.integers(deg))
        if j < out_deg:
            v = int(indices[lo + j])
        else:
            assert in_indptr is not None and in_indices is not None
            v = int(in_indices[int(in_indptr[v]) + j - out_deg])
        if v not in in_seen:
            in_seen.add(v)
            seen.append(v)
            if len(seen) == k:
                return seen
    return None


def _induced(graph: Graph, verts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Edges (query ids, shape (m, 2)) and edge labels of the subgraph induced by ``verts``.

    Undirected edges appear once (u < w in data order is irrelevant: each pair
    once); directed graphs give one row per arc.
    """
    pos = {v: i for i, v in enumerate(verts)}
    vs = np.asarray(sorted(verts), dtype=np.int64)
    edges: list[tuple[int, int]] = []
    labels: list[int] = []
    for v in verts:
        lo, hi = int(graph.indptr[v]), int(graph.indptr[v + 1])
        row = np.asarray(graph.indices[lo:hi], dtype=np.int64)
        hit = np.flatnonzero(np.isin(row, vs))
        for h in hit.tolist():
            w = int(row[h])
            if w == v or (not graph.directed and pos[w] < pos[v]):
                continue        # undirected: keep each pair once
            edges.append((pos[v], pos[w]))
            labels.append(ANY if graph.edge_labels is None else int(graph.edge_labels[lo + h]))
    return (np.asarray(edges, dtype=np.int64).reshape(-1, 2),
            np.asarray(labels, dtype=np.int64))


def _connected(k: int, edges: np.ndarray, keep: np.ndarray) -> bool:
    """Weak connectivity of the query on ``k`` vertices using the edges where ``keep``."""
    adj: list[list[int]] = [[] for _ in range(k)]
    for (u, w) in edges[keep].tolist():
        adj[u].append(w)
        adj[w].append(u)
    seen = [False] * k
    seen[0] = True
    stack = [0]
    count = 1
    while stack:
        u = stack.pop()
        for w in adj[u]:
            if not seen[w]:
                seen[w] = True
                count += 1
                stack.append(w)
    return count == k


def _sparsify(k: int, edges: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Mask of the edges kept after removing random non-bridges until ``2m/k < 3``."""
    keep = np.ones(edges.shape[0], dtype=bool)
    while 2.0 * int(keep.sum()) / k >= DENSE_MIN_DEGREE:
        removed = False
        for e in rng.permutation(np.flatnonzero(keep)).tolist():
            keep[e] = False
            if _connected(k, edges, keep):
                removed = True
                break
            keep[e] = True          # a bridge: it stays
        if not removed:             # only bridges left: a tree, which is sparse already
            break
    return keep


def random_walk_query(graph: Graph, k: int, density: Literal["dense", "sparse"] = "dense",
                      seed: int = 0, max_tries: int = 1000, max_steps: int | None = None,
                      name: str | None = None) -> Query:
    """A connected ``k``-vertex query extracted from ``graph`` by a random walk.

    The query is the subgraph induced by the first ``k`` distinct vertices of
    a random walk, with the data graph's labels; ``density`` then selects
    queries of average degree ``>= 3`` (``"dense"``: walks whose induced
    subgraph is sparser are discarded) or ``< 3`` (``"sparse"``: random
    non-bridge edges are removed until it is). See the module docstring for
    the sources.

    Parameters
    ----------
    graph : Graph
        The data graph (internal ids; labeled or not, directed or not).
    k : int
        Query vertices, ``2..64``; a dense query needs ``k >= 4``.
    density : {"dense", "sparse"}, optional
        The query class. The default is ``"dense"``.
    seed : int, optional
        Seed of the walk generator; the query depends only on the graph and
        the arguments. The default is 0.
    max_tries : int, optional
        Walks to try before giving up. The default is 1000.
    max_steps : int, optional
        Steps one walk may take to find ``k`` distinct vertices. The default
        is ``None``, meaning ``20 * k + 100``.
    name : str, optional
        The query's name. The default is ``"rw-<density>-<k>-s<seed>"``.

    Returns
    -------
    Query
        Vertex ``i`` is the ``i``-th distinct vertex of the walk. Vertex
        labels are the data vertices' labels (``-1``, any, for an unlabeled
        graph); edge labels are the data edges' labels (``-1`` without them).
        Directed graphs give a directed query with the induced arcs.

    Raises
    ------
    ValueError
        For a bad ``k``, ``density`` or ``max_tries``, or when no walk of
        ``max_tries`` gives such a query (too few connected vertices, or a
        graph too sparse for a dense query); the message says which.

    Examples
    --------
    A dense 8-vertex query from a labeled graph, then its embeddings counted in
    the graph it came from (at least one: the walk's own vertices)::

        import warpmatch as wm
        from warpmatch.query.sample import random_walk_query, average_degree

        g = wm.read_graph("yeast.graph")
        q = random_walk_query(g, 8, "dense", seed=3)
        assert q.k == 8 and average_degree(q) >= 3
        wm.count(g, q)
    """
    k = int(k)
    if density not in ("dense", "sparse"):
        raise ValueError(f"density must be 'dense' or 'sparse', not {density!r}")
    if not 2 <= k <= MAX_QUERY_VERTICES:
        raise ValueError(f"k must be in 2..{MAX_QUERY_VERTICES}, got {k}")
    if density == "dense" and k < 4:
        raise ValueError(f"a dense query (average degree >= {DENSE_MIN_DEGREE:g}) needs at "
                         f"least 4 vertices, got k={k}")
    if int(max_tries) < 1:
        raise ValueError(f"max_tries must be at least 1, got {max_tries}")
    if k > graph.n:
        raise ValueError(f"the graph {graph.name!r} has {graph.n} vertices, fewer than k={k}")
    steps = 20 * k + 100 if max_steps is None else int(max_steps)
    deg = np.asarray(graph.degree)
    starts = np.flatnonzero(deg > 0)
    if starts.size == 0:
        raise ValueError(f"the graph {graph.name!r} has no edges: no query can be sampled")
    in_indptr = graph.in_indptr if graph.directed else None
    in_indices = graph.in_indices if graph.directed else None
    rng = np.random.default_rng(seed)
    stuck = too_sparse = 0
    for _ in range(int(max_tries)):
        start = int(starts[int(rng.integers(starts.size))])
        verts = _walk(graph.indptr, graph.indices, in_indptr, in_indices, start, k, steps, rng)
        if verts is None:
            stuck += 1
            continue
        edges, elab = _induced(graph, verts)
        if density == "dense":
            if 2.0 * edges.shape[0] / k < DENSE_MIN_DEGREE:
                too_sparse += 1
                continue
        else:
            keep = _sparsify(k, edges, rng)
            edges, elab = edges[keep], elab[keep]
        vl = (np.full(k, ANY, dtype=np.int64) if graph.vertex_labels is None
              else np.asarray(graph.vertex_labels, dtype=np.int64)[np.asarray(verts)])
        return Query.from_edges([tuple(e) for e in edges.tolist()], k=k, vertex_labels=vl,
                                edge_labels=elab, directed=graph.directed,
                                name=name or f"rw-{density}-{k}-s{seed}")
    why = []
    if stuck:
        why.append(f"{stuck} walks found fewer than {k} distinct vertices in {steps} steps")
    if too_sparse:
        why.append(f"{too_sparse} induced subgraphs had average degree < {DENSE_MIN_DEGREE:g}")
    raise ValueError(f"no {density} {k}-vertex query found in the graph {graph.name!r} after "
                     f"{max_tries} random walks ({'; '.join(why)})")
