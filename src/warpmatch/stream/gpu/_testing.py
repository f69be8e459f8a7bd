"""Build a :class:`~warpmatch.stream.types.BatchView` straight from a static graph.

Test and benchmark support, independent of
:class:`~warpmatch.stream.dynamic.DynamicGraph`: the storage is the graph's
CSR (copied through ``allocator``, e.g. pinned memory), the batch is validated
in order with a Python set, and the overlay rows are built literally from the
definition in :mod:`warpmatch.stream.types` (one entry per lifetime, sorted
by ``(nbr, ins)``). Slow (pure Python per update), exact, and small.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...graph.csr import Graph
from ..types import NEVER, BatchView, InternalBatch

__all__ = ["view_from_graph", "apply_to_graph"]


def _copy(a: np.ndarray | None, dtype: Any, allocator: Callable) -> np.ndarray:
    if a is None:
        return np.zeros(0, dtype=dtype)
    a = np.asarray(a, dtype=dtype)
    out = allocator(a.size, dtype)
    out[:] = a
    return out


def view_from_graph(graph: Graph, src: Any, dst: Any, op: Any, elabel: Any = None,
                    allocator: Callable[[int, Any], np.ndarray] = np.empty) -> BatchView:
    """The view of one batch of updates on ``graph`` (internal ids, no new vertices).

    Parameters
    ----------
    graph : Graph
        State ``S_0``.
    src, dst, op : array-like
        Updates (``op`` +1 insert, -1 delete).
    elabel : array-like or None, optional
        Edge labels of the updates (0 when ``None``).
    allocator : callable, optional
        ``allocator(count, dtype)`` for the storage arrays. The default is
        :func:`numpy.empty`.

    Returns
    -------
    BatchView
        Invalid updates (self-loop, insert of a present edge, delete of a
        missing one) are marked in ``batch.valid``.
    """
    src = np.asarray(src, dtype=np.int32)
    dst = np.asarray(dst, dtype=np.int32)
    op = np.asarray(op, dtype=np.int8)
    B = src.size
    lab = (np.zeros(B, np.int32) if elabel is None else np.asarray(elabel, dtype=np.int32))
    n = graph.n
    directed = graph.directed
    labeled = graph.edge_labels is not None
    indptr, indices = graph.indptr, graph.indices
    elab = graph.edge_labels if labeled else None
    # current edge set: (a, b) -> label; undirected edges stored both ways
    edges: dict[tuple[int, int], int] = {}
    for a in range(n):
        for q in range(indptr[a], indptr[a + 1]):
            edges[(a, int(indices[q]))] = int(elab[q]) if labeled else 0
    valid = np.zeros(B, dtype=bool)
    reason = [""] * B
    # events per (direction, row vertex): list of (nbr, update, op, label)
    events: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
    for i in range(B):
        a, b, o = int(src[i]), int(dst[i]), int(op[i])
        if a == b:
            reason[i] = "self-loop"
            continue
        present = (a, b) in edges
        if o > 0 and present:
            reason[i] = "edge exists"
            continue
        if o < 0 and not present:
            reason[i] = "edge missing"
            continue
        valid[i] = True
        L = int(lab[i]) if o > 0 else edges[(a, b)]
        pairs = [(0, a, b), (1, b, a)] if directed else [(0, a, b), (0, b, a)]
        for d, x, y in pairs:
            events.setdefault((d, x), []).append((y, i, o, L))
        if o > 0:
            edges[(a, b)] = L
            if not directed:
                edges[(b, a)] = L
        else:
            del edges[(a, b)]
            if not directed:
                del edges[(b, a)]
    if directed:
        in_indptr, in_indices = graph.in_indptr, graph.in_indices
        in_elab = graph.in_edge_labels if labeled else None
    else:
        in_indptr, in_indices, in_elab = indptr, indices, elab
    store = [(indptr, indices, elab), (in_indptr, in_indices, in_elab)]
    ovl = []
    touched = []
    for d in range(2 if directed else 1):
        idx = np.full(n, -1, dtype=np.int32)
        off = [0]
        nbr: list[int] = []
        el: list[int] = []
        ins: list[int] = []
        dl: list[int] = []
        rows = sorted(x for (dd, x) in events if dd == d)
        touched.append(np.array(rows, np.int64))
        ip, ix, ie = store[d]
        for r, x in enumerate(rows):
            idx[x] = r
            ent = [[int(ix[q]), -1, int(NEVER), int(ie[q]) if ie is not None else 0]
                   for q in range(ip[x], ip[x + 1])]
            for y, i, o, L in events[(d, x)]:
                if o > 0:
                    ent.append([y, i, int(NEVER), L])
                else:
                    for e in ent:
                        if e[0] == y and e[2] == int(NEVER):
                            e[2] = i
                            break
            ent.sort(key=lambda e: (e[0], e[1]))
            for e in ent:
                nbr.append(e[0])
                ins.append(e[1])
                dl.append(e[2])
                el.append(e[3])
            off.append(len(nbr))
        ovl.append((idx, np.array(off, np.int64), np.array(nbr, np.int32),
                     np.array(el if labeled else [], np.int32), np.array(ins, np.int32),
                     np.array(dl, np.int32)))
    if not directed:
        ovl.append(ovl[0])
    b_start = _copy(indptr[:-1], np.int64, allocator)
    b_deg = _copy(np.diff(indptr), np.int32, allocator)
    b_nbr = _copy(indices, np.int32, allocator)
    b_elab = _copy(elab, np.int32, allocator)
    if directed:
        bi_start = _copy(in_indptr[:-1], np.int64, allocator)
        bi_deg = _copy(np.diff(in_indptr), np.int32, allocator)
        bi_nbr = _copy(in_indices, np.int32, allocator)
        bi_elab = _copy(in_elab, np.int32, allocator)
    else:
        bi_start, bi_deg, bi_nbr, bi_elab = b_start, b_deg, b_nbr, b_elab
    vl = (np.zeros(0, np.int32) if graph.vertex_labels is None
          else np.asarray(graph.vertex_labels, np.int32))
    batch = InternalBatch(src, dst, op, lab, valid, reason, n, n, np.zeros(0, np.int32))
    return BatchView(n, directed, vl, b_start, b_deg, b_nbr, b_elab,
                     bi_start, bi_deg, bi_nbr, bi_elab, *ovl[0], *ovl[1], batch,
                     touched[0], touched[-1])


def apply_to_graph(graph: Graph, view: BatchView) -> Graph:
    """State ``S_B``: ``graph`` with the view's valid updates applied (a new Graph)."""
    b = view.batch
    edges: dict[tuple[int, int], int] = {}
    labeled = graph.edge_labels is not None
    for a in range(graph.n):
        for q in range(graph.indptr[a], graph.indptr[a + 1]):
            c = int(graph.indices[q])
            key = (a, c) if graph.directed else (min(a, c), max(a, c))
            edges[key] = int(graph.edge_labels[q]) if labeled else 0
    for i in np.flatnonzero(b.valid):
        a, c = int(b.src[i]), int(b.dst[i])
        key = (a, c) if graph.directed else (min(a, c), max(a, c))
        if b.op[i] > 0:
            edges[key] = int(b.elabel[i])
        else:
            del edges[key]
    ks = sorted(edges)
    s = np.array([k[0] for k in ks], np.int64)
    d = np.array([k[1] for k in ks], np.int64)
    el = np.array([edges[k] for k in ks], np.int32) if labeled else None
    return Graph.from_edges(s, d, n=graph.n, vertex_labels=graph.vertex_labels,
                            edge_labels=el, directed=graph.directed, warn=False)
