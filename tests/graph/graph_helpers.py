"""Comparison helpers for the graph-layer tests (imported as ``graph_helpers``)."""
from __future__ import annotations


import numpy as np
from warpmatch.graph import Graph


def edge_set(g: Graph) -> set[tuple[int, ...]]:
    """Edges in external ids (undirected: as sorted pairs), with labels when present."""
    src, dst = g.edges()
    s = g.to_external(src).tolist()
    d = g.to_external(dst).tolist()
    el = g.edge_label_array()
    out = set()
    for i, (u, v) in enumerate(zip(s, d)):
        if not g.directed and u > v:
            u, v = v, u
        out.add((u, v) if el is None else (u, v, int(el[i])))
    return out


def vertex_map(g: Graph) -> dict[int, int | None]:
    """External id -> vertex label (None if unlabeled)."""
    ext = g.to_external(np.arange(g.n)).tolist()
    if g.vertex_labels is None:
        return {v: None for v in ext}
    return dict(zip(ext, g.vertex_labels.tolist()))


def assert_same_graph(a: Graph, b: Graph) -> None:
    """Same vertices (external ids), labels, edges, edge labels and direction."""
    assert a.directed == b.directed
    assert a.n == b.n
    assert vertex_map(a) == vertex_map(b)
    assert edge_set(a) == edge_set(b)
    assert (a.edge_labels is None) == (b.edge_labels is None)
