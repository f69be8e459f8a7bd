"""Hypothesis strategies shared by the engine tests and the partitioned-search tests.

Imported as ``engine_helpers`` (pytest puts ``tests/engine`` on ``sys.path`` for
its own modules; other folders insert it).
"""
from __future__ import annotations

import numpy as np
import pytest
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


#: queries with leaves: a tail, a path's ends, a star's leaves, leaves on a cycle
LEAFY = ["tailed-triangle", "3-path", "4-path", "3-star", "a-b, b-c, c-a, c-d, d-e",
         "a-b, b-c, c-d, d-a, a-e", "a-b, a-c, a-d, b-c, d-e"]


@st.composite
def leafy_cases(draw, nmax: int = 24) -> tuple[Graph, Query, dict | None]:
    """``(graph, query, anchors)``: a random graph; a random query of 3-6 vertices or (on an
    undirected graph, half of the time) one of :data:`LEAFY`; anchors on one query vertex
    half of the time (else ``None``)."""
    from warpmatch.api import as_query
    g = draw(graphs(nmax=nmax))
    if g.directed or draw(st.booleans()):
        q = draw(queries(g, 3, 6))
    else:
        q = as_query(draw(st.sampled_from(LEAFY)), g)
    anchors = None
    if draw(st.booleans()):
        ids = draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=6, unique=True))
        anchors = {draw(st.integers(0, q.k - 1)): ids}
    return g, q, anchors


def leafy_inter_case(data) -> tuple | None:
    """``(graph, query, anchors, partitioned, plan, searches)`` from hypothesis's ``data``:
    a :func:`leafy_cases` case cut into 2-4 parts, its counting plan (either mode) and its
    inter searches with the cut lists, every prime edge with a countable leaf end searched
    leaf last whatever the spread of the cut (small random graphs rarely reach
    ``plans.LEAF_LAST_SPREAD``); ``None`` where there is no inter search to run."""
    from warpmatch.partition import Partitioned, plans
    from warpmatch.plan import build_plan
    from warpmatch.plan.build import anchor_colors
    g, q, anchors = data.draw(leafy_cases())
    pg = Partitioned.build(g, parts=min(g.n, data.draw(st.sampled_from([2, 3, 4]))))
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      anchors=anchors, purpose="count")
    if plan.empty_reason is not None or plan.k < 2 or pg.parts < 2:
        return None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plans, "LEAF_LAST_SPREAD", 0.0)
        searches = plans.inter_searches(g, plan, pg.part, pg.boundary,
                                        anchor_colors(g, q, anchors), "count",
                                        cut_graph=pg.cut_graph)
    return g, q, anchors, pg, plan, searches


def sorted_rows(batches, k: int) -> list[tuple[int, ...]]:
    """Every row of an engine's or ``match``'s batches, as sorted tuples (a multiset to compare)."""
    arrs = [np.asarray(b) for b in batches]
    return [] if not arrs else sorted(map(tuple, np.concatenate(arrs).reshape(-1, k).tolist()))


def query_rows(batches, plan) -> list[tuple[int, ...]]:
    """Like :func:`sorted_rows`, each row first put in query-vertex order (engines yield
    rows in ``plan``'s depth order, so plans of one query in different orders compare
    only this way)."""
    arrs = [np.asarray(b) for b in batches]
    if not arrs:
        return []
    rows = plan.to_query_order(np.concatenate(arrs).reshape(-1, plan.k))
    return sorted(map(tuple, rows.tolist()))
