"""Hypothesis strategies shared by the engine tests and the partitioned-search tests.

Imported as ``engine_helpers`` (pytest puts ``tests/engine`` on ``sys.path`` for
its own modules; other folders insert it).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from warpmatch.graph.csr import Graph
from warpmatch.query.model import Query


@st.composite
def graphs(draw, directed: bool | None = None, labels: bool | None = None,
           edge_labels: bool | None = None, nmax: int = 11) -> Graph:
    n = draw(st.integers(1, nmax))
    directed = draw(st.booleans()) if directed is None else directed
    m = draw(st.integers(0, 3 * n))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    use_vl = draw(st.booleans()) if labels is None else labels
    use_el = draw(st.booleans()) if edge_labels is None else edge_labels
    vl = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)) if use_vl else None
    el = draw(st.lists(st.integers(0, 1), min_size=m, max_size=m)) if use_el else None
    return Graph.from_edges(src, dst, n=n, vertex_labels=vl, edge_labels=el,
                            directed=directed, warn=False)


@st.composite
def queries(draw, graph: Graph, kmin: int = 3, kmax: int = 7) -> Query:
    """A random connected query: a random spanning tree plus extra edges."""
    k = draw(st.integers(kmin, kmax))
    edges = set()
    for v in range(1, k):
        u = draw(st.integers(0, v - 1))
        edges.add((v, u) if graph.directed and draw(st.booleans()) else (u, v))
    for _ in range(draw(st.integers(0, k))):
        a = draw(st.integers(0, k - 1))
        b = draw(st.integers(0, k - 1))
        if a != b:
            edges.add((a, b) if graph.directed else (min(a, b), max(a, b)))
    if not graph.directed:
        edges = {(min(a, b), max(a, b)) for a, b in edges}
    # (directed: an extra edge may reverse a tree edge, giving both directions)
    edges = sorted(edges)
    vl = [draw(st.sampled_from([-1, -1, 0, 1])) if graph.labeled else -1 for _ in range(k)]
    el = [draw(st.sampled_from([-1, -1, 0, 1])) if graph.edge_labels is not None else -1
          for _ in edges]
    return Query.from_edges(edges, k=k, vertex_labels=vl, edge_labels=el,
                            directed=graph.directed)


def sorted_rows(batches, k: int) -> list[tuple[int, ...]]:
    """Every row of an engine's or ``match``'s batches, as sorted tuples (a multiset to compare)."""
    arrs = [np.asarray(b) for b in batches]
    return [] if not arrs else sorted(map(tuple, np.concatenate(arrs).reshape(-1, k).tolist()))
