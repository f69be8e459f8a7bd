"""Edge-label partitions: a graph's edges grouped by label, and the graph of the labels a
query uses (GSI's PCSR and GENEVA §4, "load only the edge label partitions the query needs").

Map: :func:`label_partitions` (per label: edges, vertices with such an edge, bytes as a CSR
of its own) < :func:`restrict_to_labels` (the graph of some labels' edges, same vertices and
ids, cached per graph) < :func:`restricted_bytes` (what that graph weighs before building it).

A non-induced query whose every edge names a label can only map its edges onto data edges of
those labels, so it has exactly the same matches in the graph of those labels' edges: the
API matches it there (:func:`warpmatch.api.count` and the rest), on every engine. Its
adjacency lists hold only the labels it can use, so the engines scan less, filters (degree,
neighbourhood labels) are tighter, and the GPU engine copies only those edges to the device
and weighs only them against its memory budget (not yet run on a GPU).

How it differs from GENEVA and GSI:

- The labels a query uses are merged into one CSR over all vertex ids (offsets for every
  vertex), built once per label set and kept (:data:`KEEP` sets per graph), not one
  partition loaded per extension phase; so the engines run unchanged, and rows need no id
  translation.
- No GenMap renaming and no interval index (GENEVA), no hash slots per vertex (GSI): a
  vertex's row is found by its id, as in the whole graph. :func:`label_partitions` reports
  what one partition per label would weigh as a CSR of its own vertices, next to a hash
  layout of 32 slots per vertex.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from numba import njit

from .csr import Graph

__all__ = ["LabelPartition", "label_partitions", "present_labels", "restrict_to_labels",
           "restricted_bytes", "hash_pcsr_bytes", "KEEP"]

#: label sets whose graphs are kept per graph (least recently used go first)
KEEP = 4
#: slots per vertex of GSI's hash-PCSR, the layout GENEVA compares with
HASH_SLOTS = 32

_CACHE: "weakref.WeakKeyDictionary[Graph, OrderedDict]" = weakref.WeakKeyDictionary()
_PRESENT: "weakref.WeakKeyDictionary[Graph, frozenset]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


@dataclass(frozen=True)
class LabelPartition:
    """One edge label's share of a graph.

    ``edges``: stored entries with this label (an undirected edge counts twice, once per
    direction, as in the CSR; a directed graph's out-entries); ``vertices``: vertices with
    at least one such entry; ``csr_bytes``: the partition as a CSR of its own vertices
    (offsets and ids of those vertices, neighbour ids, and labels only if a graph needs
    them); ``hash_bytes``: the same rows in a hash layout of :data:`HASH_SLOTS` slots per
    vertex (GSI's PCSR).
    """
    label: int
    edges: int
    vertices: int
    csr_bytes: int
    hash_bytes: int


def label_partitions(graph: Graph) -> list[LabelPartition]:
    """Each edge label's partition of ``graph`` (empty for a graph without edge labels).

    Examples
    --------
    >>> g = Graph.from_edges([0, 1, 2], [1, 2, 0], edge_labels=[5, 5, 7])
    >>> [(p.label, p.edges, p.vertices) for p in label_partitions(g)]
    [(5, 4, 3), (7, 2, 2)]
    """
    lab = graph.edge_labels
    if lab is None or lab.size == 0:
        return []
    labels = np.array(sorted(present_labels(graph)), dtype=lab.dtype)
    edges, verts = _partition_sizes(graph.indptr, lab, labels)
    out = []
    idw = graph.indices.dtype.itemsize
    for value, m, nv in zip(labels.tolist(), edges.tolist(), verts.tolist()):
        csr = (nv + 1) * 8 + nv * idw + m * idw
        out.append(LabelPartition(int(value), int(m), int(nv), csr,
                                  hash_pcsr_bytes(nv, m, idw)))
    return out


def hash_pcsr_bytes(vertices: int, entries: int, id_bytes: int) -> int:
    """Bytes of one partition in GSI's hash-PCSR: :data:`HASH_SLOTS` slots of 8 bytes per
    vertex (``vertices``: once per side kept), plus ``entries`` neighbour ids."""
    return vertices * HASH_SLOTS * 8 + entries * id_bytes


@njit(cache=True, nogil=True)
def _partition_sizes(indptr, elab, labels):  # pragma: no cover - compiled
    """Entries and vertices per label (``labels`` sorted): one pass over the rows."""
    L = labels.size
    edges = np.zeros(L, np.int64)
    verts = np.zeros(L, np.int64)
    seen = np.full(L, -1, np.int64)
    for v in range(indptr.size - 1):
        for e in range(indptr[v], indptr[v + 1]):
            j = np.searchsorted(labels, elab[e])
            edges[j] += 1
            if seen[j] != v:
                seen[j] = v
                verts[j] += 1
    return edges, verts


def present_labels(graph: Graph) -> frozenset[int]:
    """The edge labels ``graph`` has (computed once per graph; empty without edge labels)."""
    hit = _PRESENT.get(graph)
    if hit is None:
        lab = graph.edge_labels
        hit = frozenset() if lab is None else frozenset(np.unique(lab).tolist())
        _PRESENT[graph] = hit
    return hit


def _wanted(labels: frozenset[int]) -> np.ndarray:
    return np.array(sorted(labels), dtype=np.int64)


@njit(cache=True, nogil=True)
def _is_wanted(want, x):  # pragma: no cover - compiled
    j = np.searchsorted(want, x)
    return j < want.size and want[j] == x


@njit(cache=True, nogil=True)
def _count_kept(elab, want):  # pragma: no cover - compiled
    c = 0
    for e in range(elab.size):
        if _is_wanted(want, elab[e]):
            c += 1
    return c


@njit(cache=True, nogil=True)
def _restrict_rows(indptr, indices, elab, want, ptr, idx, lab):  # pragma: no cover
    """Copy the wanted entries row by row into ``idx``/``lab``; ``ptr`` gets the offsets."""
    c = 0
    for v in range(indptr.size - 1):
        ptr[v] = c
        for e in range(indptr[v], indptr[v + 1]):
            if _is_wanted(want, elab[e]):
                idx[c] = indices[e]
                lab[c] = elab[e]
                c += 1
    ptr[indptr.size - 1] = c


def restricted_bytes(graph: Graph, labels: frozenset[int]) -> tuple[int, int]:
    """``(entries, bytes)`` of :func:`restrict_to_labels`'s graph, without building it."""
    keep = int(_count_kept(graph.edge_labels, _wanted(labels)))
    per = graph.indices.dtype.itemsize + graph.edge_labels.dtype.itemsize
    ptr = graph.indptr.dtype.itemsize * (graph.n + 1)
    sides = 1 if not graph.directed else 2
    return keep, sides * (ptr + keep * per)


def _restrict_side(indptr: np.ndarray, indices: np.ndarray, elab: np.ndarray,
                   labels: frozenset[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    want = _wanted(labels)
    m = int(_count_kept(elab, want))
    ptr = np.empty(indptr.size, dtype=indptr.dtype)
    idx = np.empty(m, dtype=indices.dtype)
    lab = np.empty(m, dtype=elab.dtype)
    _restrict_rows(indptr, indices, elab, want, ptr, idx, lab)
    return ptr, idx, lab


def restrict_to_labels(graph: Graph, labels: frozenset[int] | set[int]) -> Graph:
    """The graph of ``graph``'s edges whose label is in ``labels``: the same vertices, ids and
    vertex labels, rows in the same order. Kept for the :data:`KEEP` label sets used last.

    Raises
    ------
    ValueError
        If ``graph`` has no edge labels.

    Examples
    --------
    >>> g = Graph.from_edges([0, 1, 2], [1, 2, 0], edge_labels=[5, 5, 7])
    >>> h = restrict_to_labels(g, {5})
    >>> h.num_edges, h.has_edge(0, 2), h.name
    (2, False, 'graph[edge labels 5]')
    """
    if graph.edge_labels is None:
        raise ValueError(f"graph {graph.name!r} has no edge labels to restrict to")
    key = frozenset(int(x) for x in labels)
    with _LOCK:
        kept = _CACHE.setdefault(graph, OrderedDict())
        hit = kept.get(key)
        if hit is not None:
            kept.move_to_end(key)
            return hit
    ptr, idx, lab = _restrict_side(graph.indptr, graph.indices, graph.edge_labels, key)
    extra = {}
    if graph.directed:
        iptr, iidx, ilab = _restrict_side(graph.in_indptr, graph.in_indices,
                                          graph.in_edge_labels, key)
        extra = {"in_indptr": iptr, "in_indices": iidx, "in_edge_labels": ilab}
    names = ",".join(str(x) for x in sorted(key))
    out = Graph(n=graph.n, indptr=ptr, indices=idx, directed=graph.directed,
                vertex_labels=graph.vertex_labels, edge_labels=lab, ids=graph.ids,
                name=f"{graph.name}[edge labels {names}]", **extra)
    with _LOCK:
        kept[key] = out
        while len(kept) > KEEP:
            kept.popitem(last=False)
    return out
