"""A data graph's vertices renumbered by degree: a copy whose ids ascend with degree.

Map: :func:`degree_order` (the permutation, counted; ``None`` where the ids already
ascend) < :func:`degree_ordered` (the renumbered copy, built once per graph and kept;
:func:`kept`, :func:`forget`) < :func:`_rows` (numba: every row moved to its new place, its
ids mapped and sorted, in chunks of about equal entries).

Why: symmetry-breaking restrictions compare vertex ids (``f(a) < f(b)``), so the id
order decides which vertex of a query's orbit is matched as the smallest one. With ids
ascending by degree that is the orbit's lowest-degree vertex: a clique's or a cycle's
root is then its lowest-degree vertex, and the lists a restriction trims are those of
higher-degree vertices, cut hardest. gMatch renumbers by degree before matching
(``--reorder``, and its degree-oriented DAG for cliques). Measured on one H200 with the
GPU engine (a 10^7-edge Chung-Lu graph whose ids descend with degree, against the same
graph with ids ascending): 1.5-3.9x faster on the triangle, square, diamond, cliques and
tailed triangle, 1.3-14.8x on 20 of STMatch's 24 patterns (two even), but 0.60x on the
house (STMatch's pattern 2) and 0.69x on STMatch's pattern 10; :func:`warpmatch._strategies.degree_graph` says where the
API uses this copy.

How it differs from gMatch's ``reorder_by_degree``:

- The copy keeps the graph file's ids (:attr:`Graph.ids`), so rows, anchors and every
  id a user sees are unchanged: only the internal numbering moves.
- Ties keep the given order (a stable sort), and a graph whose ids already ascend by
  degree is used as it is (no copy).
- Directed graphs are ordered by total degree (out + in); both adjacencies move.
"""
from __future__ import annotations

import threading
import weakref

import numba
import numpy as np
from numba import njit, prange

from .csr import Graph

__all__ = ["degree_order", "degree_ordered", "forget", "kept"]

_CACHE: "weakref.WeakKeyDictionary[Graph, Graph]" = weakref.WeakKeyDictionary()
#: graphs whose ids already ascend by degree (their own copy; checking again is O(n))
_ORDERED: "weakref.WeakSet[Graph]" = weakref.WeakSet()
_LOCK = threading.Lock()


def degree_order(graph: Graph) -> np.ndarray | None:
    """Old ids in new order (``order[new] = old``), ascending by degree, ties by id.

    Returns ``None`` where the ids already ascend by degree (nothing to renumber).

    Examples
    --------
    >>> g = Graph.from_edges([0, 0, 0, 1], [1, 2, 3, 2])      # degrees 3, 2, 2, 1
    >>> degree_order(g).tolist()
    [3, 1, 2, 0]
    >>> degree_order(Graph.from_edges([0, 1], [2, 2])) is None     # degrees 1, 1, 2
    True
    """
    deg = graph.degree
    if deg.size < 2 or bool(np.all(deg[1:] >= deg[:-1])):
        return None
    return _counting_order(deg)


@njit(cache=True, nogil=True)
def _counting_order(deg):
    """``np.argsort(deg, kind="stable")`` for small non-negative ints, by counting (one
    pass each way; the sort took 57 ms for 1.25M vertices on a 2-core box)."""
    start = np.zeros(deg.max() + 2, np.int64)
    for d in deg:
        start[d + 1] += 1
    for i in range(1, start.shape[0]):
        start[i] += start[i - 1]
    out = np.empty(deg.shape[0], np.int64)
    for v in range(deg.shape[0]):
        out[start[deg[v]]] = v
        start[deg[v]] += 1
    return out


@njit(cache=True, parallel=True, nogil=True)
def _rows(indptr, indices, labels, has_labels, new_of_old, out_ptr, out_idx, out_lab,
          bounds):
    """Row ``o`` of the input as row ``new_of_old[o]`` of the output: ids mapped through
    ``new_of_old`` and sorted (labels follow their entries). Rows are read in input
    order (a sequential read; each row is written in one place), in chunks of rows
    ``bounds[c]..bounds[c+1]-1`` holding about as many entries each: a graph whose ids
    follow its degrees has its hubs' rows together, and equal row counts per thread
    left one thread most of the work (10^8 edges, 16 cores: 6.1 s in row chunks)."""
    for c in prange(bounds.shape[0] - 1):
        for o in range(bounds[c], bounds[c + 1]):
            _row(indptr, indices, labels, has_labels, new_of_old, out_ptr, out_idx,
                 out_lab, o)


@njit(cache=True, nogil=True, inline="always")
def _row(indptr, indices, labels, has_labels, new_of_old, out_ptr, out_idx, out_lab, o):
    """Input row ``o`` mapped, sorted and written at its new place (see _rows)."""
    s = indptr[o]
    t = out_ptr[new_of_old[o]]
    m = indptr[o + 1] - s
    for j in range(m):
        out_idx[t + j] = new_of_old[indices[s + j]]
        if has_labels:
            out_lab[t + j] = labels[s + j]
    if m <= 32:
        # insertion sort in place: most rows of a sparse graph are short
        for j in range(t + 1, t + m):
            x = out_idx[j]
            y = out_lab[j] if has_labels else 0
            i = j - 1
            while i >= t and out_idx[i] > x:
                out_idx[i + 1] = out_idx[i]
                if has_labels:
                    out_lab[i + 1] = out_lab[i]
                i -= 1
            out_idx[i + 1] = x
            if has_labels:
                out_lab[i + 1] = y
    elif has_labels:
        ids = out_idx[t:t + m].copy()
        lab = out_lab[t:t + m].copy()
        perm = np.argsort(ids, kind="mergesort")
        for j in range(m):
            out_idx[t + j] = ids[perm[j]]
            out_lab[t + j] = lab[perm[j]]
    else:
        out_idx[t:t + m].sort()


def _side(indptr: np.ndarray, indices: np.ndarray, labels: np.ndarray | None,
          order: np.ndarray, new_of_old: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                             np.ndarray | None]:
    ptr = np.asarray(indptr)
    deg = np.diff(ptr)[order]
    out_ptr = np.zeros(order.size + 1, dtype=ptr.dtype)
    np.cumsum(deg, out=out_ptr[1:])
    idx = np.asarray(indices)
    out_idx = np.empty(idx.size, dtype=idx.dtype)
    has = labels is not None
    lab = np.asarray(labels) if has else np.zeros(0, np.int32)
    out_lab = np.empty(lab.size if has else 0, dtype=lab.dtype)
    # chunks of about equal entries (a row is never split), several per thread
    chunks = max(1, min(ptr.size - 1, 64 * max(1, numba.get_num_threads())))
    bounds = np.unique(np.searchsorted(ptr, np.linspace(0, idx.size, chunks + 1),
                                       side="left").astype(np.int64))
    bounds[0], bounds[-1] = 0, ptr.size - 1
    _rows(ptr, idx, lab, has, new_of_old, out_ptr, out_idx, out_lab, bounds)
    return out_ptr, out_idx, (out_lab if has else None)


def degree_ordered(graph: Graph) -> Graph:
    """``graph`` with its vertices renumbered by ascending degree (ties by id).

    The same graph file ids (:attr:`Graph.ids`: the old internal id where the graph
    had none), vertex and edge labels and direction; built once per graph and kept
    while ``graph`` lives. A graph whose ids already ascend by degree is returned as
    it is.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    Graph

    Examples
    --------
    >>> g = Graph.from_edges([0, 0, 0, 1], [1, 2, 3, 2], vertex_labels=[5, 6, 7, 8])
    >>> h = degree_ordered(g)
    >>> h.ids.tolist(), h.vertex_labels.tolist(), h.neighbors(3).tolist()
    ([3, 1, 2, 0], [8, 6, 7, 5], [0, 1, 2])
    >>> degree_ordered(g) is h
    True
    """
    with _LOCK:
        hit = _CACHE.get(graph)
        if hit is None and graph in _ORDERED:
            hit = graph
    if hit is not None:
        return hit
    order = degree_order(graph)
    if order is None:
        with _LOCK:
            _ORDERED.add(graph)
        return graph
    # int32 where ids fit (any graph whose ids do): the gather's table is half the bytes
    new_of_old = np.empty(order.size, dtype=np.asarray(graph.indices).dtype)
    new_of_old[order] = np.arange(order.size, dtype=new_of_old.dtype)
    ptr, idx, lab = _side(graph.indptr, graph.indices, graph.edge_labels, order, new_of_old)
    extra = {}
    if graph.directed:
        iptr, iidx, ilab = _side(graph.in_indptr, graph.in_indices, graph.in_edge_labels,
                                 order, new_of_old)
        extra = {"in_indptr": iptr, "in_indices": iidx, "in_edge_labels": ilab}
    ids = order if graph.ids is None else np.asarray(graph.ids)[order]
    vl = None if graph.vertex_labels is None else np.asarray(graph.vertex_labels)[order]
    out = Graph(n=graph.n, indptr=ptr, indices=idx, directed=graph.directed,
                vertex_labels=vl, edge_labels=lab, ids=ids,
                name=f"{graph.name}[by degree]", **extra)
    with _LOCK:
        _CACHE[graph] = out
    return out


def kept(graph: Graph) -> bool:
    """Whether :func:`degree_ordered` would return without work: it holds a copy of
    ``graph``, or knows ``graph`` is in degree order already."""
    with _LOCK:
        return graph in _CACHE or graph in _ORDERED


def forget(graph: Graph) -> None:
    """Drop the copy :func:`degree_ordered` keeps for ``graph`` (a one-off count that should
    not hold a second copy of a large graph afterwards)."""
    with _LOCK:
        _CACHE.pop(graph, None)
