"""The query-relevant subgraph: the only edges a labeled query's searches can read.

Map: :func:`relevant_pairs` (which label pairs a query can use) <
:func:`label_rows`, :func:`relevant_edges`, :func:`relevant_graph` (a graph's edges
between them) <
:class:`RelevantSubgraph` (a :class:`~warpmatch.stream.dynamic.DynamicGraph` of
those edges, fed the relevant part of each batch).

When every query vertex has a label, every vertex of a match carries a query
label, and every query edge is mapped onto a data edge whose endpoint labels
are those of the query edge's endpoints. So the searches of a non-induced
query never read an edge whose label pair is not the label pair of some
query edge (RapidFlow's "global views", Sun et al., VLDB 2022, §4.1, keep
exactly these edges, per label triple), and the searches of an induced query
never read an edge with an endpoint outside the query's labels (a
non-adjacency test is between two matched vertices). The matcher keeps the
whole graph (the user's graph, validation, ids) and hands the delta engine a
second, smaller dynamic graph of the relevant edges only: an update that
cannot take part in a match touches neither the overlay nor the engine, and
every row the search scans holds only candidates of the right labels.

What differs from RapidFlow: one subgraph for all query edges (RapidFlow keeps
one relation per label triple and an NLF-filtered copy); edge labels do not
decide relevance (a deletion names its edge by its endpoints, so its label may
not be the stored one), only the endpoints' vertex labels.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..graph.csr import Graph
from ..query.model import ANY, Query
from .dynamic import DynamicGraph
from .types import InternalBatch, Updates

__all__ = ["RelevantSubgraph", "label_rows", "relevant_edges", "relevant_graph",
           "relevant_pairs"]


def relevant_pairs(query: Query, induced: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """The query's labels and which ordered pairs of them an edge may join, or ``None``.

    Returns ``(labels, table)``: ``labels`` sorted, ``table[i, j]`` True when an
    edge from a vertex labelled ``labels[i]`` to one labelled ``labels[j]`` can
    be read by a search. ``None`` when a query vertex is a wildcard (every edge
    may be read).

    Examples
    --------
    >>> labels, table = relevant_pairs(Query.parse("a:1-b:2, b-c:3"), induced=False)
    >>> labels.tolist(), table.astype(int).tolist()
    ([1, 2, 3], [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    """
    vl = np.asarray(query.vertex_labels, dtype=np.int64)
    if np.any(vl == ANY):
        return None
    labels = np.unique(vl)
    idx = np.searchsorted(labels, vl)
    table = np.zeros((labels.size, labels.size), dtype=bool)
    if induced:
        table[:] = True
    else:
        for a, b in query.edges.tolist():
            table[idx[a], idx[b]] = True
            if not query.directed:
                table[idx[b], idx[a]] = True
    return labels, table


def label_rows(labels: np.ndarray, vl: np.ndarray, missing: int = -1) -> np.ndarray:
    """int64: the row of each label of ``vl`` in ``labels`` (sorted, from
    :func:`relevant_pairs`), ``missing`` for a label no query vertex has."""
    L = np.asarray(labels, dtype=np.int64)
    v = np.asarray(vl, dtype=np.int64)
    if L.size == 0:
        return np.full(v.shape[0], missing, np.int64)
    i = np.minimum(np.searchsorted(L, v), L.size - 1)
    return np.where(L[i] == v, i, missing).astype(np.int64)


def relevant_edges(labels: np.ndarray, table: np.ndarray, vl: np.ndarray, src: np.ndarray,
                   dst: np.ndarray) -> np.ndarray:
    """Which edges ``src -> dst`` join a relevant label pair (bool per edge).

    ``labels``, ``table``: from :func:`relevant_pairs`; ``vl``: the vertex labels.
    """
    if np.asarray(labels).size == 0 or src.size == 0:
        return np.zeros(src.size, dtype=bool)
    rows = label_rows(labels, vl)
    i, j = rows[src], rows[dst]
    ok = (i >= 0) & (j >= 0)
    ok[ok] = np.asarray(table, dtype=bool)[i[ok], j[ok]]
    return ok


def relevant_graph(graph: Graph, labels: np.ndarray, table: np.ndarray,
                   keep_ids: bool = True) -> Graph:
    """``graph`` with only its relevant edges: same vertices and labels.

    Parameters
    ----------
    graph : Graph
    labels, table : numpy.ndarray
        From :func:`relevant_pairs`.
    keep_ids : bool, optional
        Keep the graph's external ids (the default); ``False``: the internal
        ids ``0..n-1`` are the new graph's ids.

    Returns
    -------
    Graph
        Named ``"<name> (relevant)"``.
    """
    src, dst = graph.edges()
    keep = relevant_edges(labels, table, graph.vertex_labels, src, dst)
    elab = graph.edge_label_array() if graph.edge_labels is not None else None
    return Graph.from_edges(src[keep], dst[keep], n=graph.n, vertex_labels=graph.vertex_labels,
                            edge_labels=None if elab is None else elab[keep],
                            directed=graph.directed,
                            ids=graph.ids if keep_ids else None,
                            name=f"{graph.name} (relevant)", warn=False)


class RelevantSubgraph:
    """A dynamic graph of the edges a labeled query can read (module docstring).

    Parameters
    ----------
    graph : Graph
        The initial graph (internal ids ``0..n-1`` are the subgraph's ids).
    labels, table : numpy.ndarray
        From :func:`relevant_pairs`.
    allocator : callable, optional
        As for :class:`DynamicGraph` (the GPU engine's pinned memory). The
        default is :func:`numpy.empty`.

    Attributes
    ----------
    graph : DynamicGraph
        The subgraph, same vertices (and labels) as the whole graph.
    """

    def __init__(self, graph: Graph, labels: np.ndarray, table: np.ndarray,
                 allocator: Any = np.empty) -> None:
        self.labels = np.asarray(labels, dtype=np.int64)
        self.table = np.asarray(table, dtype=bool)
        self.graph = DynamicGraph(relevant_graph(graph, self.labels, self.table,
                                                 keep_ids=False), allocator=allocator)
        self.has_edge_labels = self.graph.has_edge_labels

    def _keep(self, vl: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        return relevant_edges(self.labels, self.table, vl, src, dst)

    def select(self, batch: InternalBatch, labels: np.ndarray) -> tuple[InternalBatch,
                                                                        np.ndarray]:
        """The relevant part of a prepared batch of the whole graph, prepared on the subgraph.

        Adds the batch's new vertices to the subgraph first.

        Parameters
        ----------
        batch : InternalBatch
            Prepared on the whole graph (internal ids).
        labels : numpy.ndarray
            Vertex labels of the whole graph before the batch (``n_before``
            long); the new vertices' come with the batch.

        Returns
        -------
        sub_batch : InternalBatch
            Prepared on :attr:`graph`; view, run, then :meth:`DynamicGraph.apply` it.
        index : numpy.ndarray
            int64: the update of ``batch`` that each update of ``sub_batch`` is.
        """
        g = self.graph
        new = np.asarray(batch.new_vertex_labels, dtype=np.int32)
        if batch.n_after > g.n:
            g.add_vertices(new[g.n - batch.n_before:])
        valid = np.flatnonzero(np.asarray(batch.valid, dtype=bool))
        src = np.asarray(batch.src)[valid].astype(np.int64)
        dst = np.asarray(batch.dst)[valid].astype(np.int64)
        n0 = batch.n_before
        labels = np.asarray(labels)
        if batch.n_after > n0:
            labels = np.concatenate([labels[:n0], new])
        index = valid[self._keep(labels, src, dst)]
        ups = Updates(np.asarray(batch.src)[index].astype(np.int64),
                      np.asarray(batch.dst)[index].astype(np.int64),
                      np.asarray(batch.op)[index].astype(np.int8),
                      label=(np.asarray(batch.elabel)[index] if self.has_edge_labels
                             else None),
                      source="<relevant subgraph>")
        return g.prepare(ups, "error"), index.astype(np.int64)
