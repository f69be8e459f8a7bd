"""Candidate filtering: label-and-degree (LDF) and neighbour-label frequency (NLF).

Both filters come from the subgraph-matching literature as surveyed by Sun and
Luo, "In-Memory Subgraph Matching: An In-depth Study" (SIGMOD 2020, section
3.1): LDF keeps a data vertex ``v`` for query vertex ``u`` if their labels agree
and ``d(v) >= d(u)``; NLF (introduced by CFL-Match, Bi et al. SIGMOD 2016)
additionally requires, for every label ``L``, that ``v`` has at least as many
neighbours of label ``L`` as ``u`` has. Both are *sound*: a data vertex they
remove takes part in no embedding, so removing it never changes a count.

What changes relative to the survey:

- directed graphs are filtered per direction (out-degree and in-degree
  separately; NLF over out-neighbours and over in-neighbours separately);
- query labels ``-1`` ("any") constrain nothing: they are skipped by both
  filters, so an unlabeled query gets the plain degree filter;
- everything is vectorised numpy: the NLF counts are one ``np.bincount`` over
  the (candidate, neighbour-label) pairs of the LDF survivors, restricted to the
  labels that occur among the query vertex's neighbours, so the cost is the
  sum of the survivors' degrees and never a Python loop over data vertices.

Examples
--------
>>> from warpmatch.graph.csr import Graph
>>> from warpmatch.query.model import Query
>>> g = Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3])
>>> q = Query.from_edges([(0, 1), (1, 2), (2, 0)])
>>> candidates(g, q, 0).tolist()
[0, 1, 2]
"""
from __future__ import annotations

import weakref
from collections import OrderedDict

import numpy as np

from ..graph.csr import Graph
from ..query.model import ANY, Query


def ldf_mask(graph: Graph, query: Query, u: int) -> np.ndarray:
    """Boolean mask of the data vertices that pass the label-and-degree filter for ``u``.

    Parameters
    ----------
    graph : Graph
        The data graph.
    query : Query
        The query graph (same directedness as ``graph``; checked by the planner).
    u : int
        Query vertex index.

    Returns
    -------
    numpy.ndarray
        ``bool[graph.n]``. A query label ``-1`` accepts every label; a labeled
        query vertex on an unlabeled graph accepts nothing.
    """
    n = graph.n
    # each condition is one pass over the n vertices, and the first one makes the mask
    # (on 10^7 vertices a pass costs milliseconds, and every count plans)
    conds: list[tuple[str, int]] = []          # (degree attribute, at least)
    lab = int(query.vertex_labels[u])
    if lab != ANY:
        if graph.vertex_labels is None:
            return np.zeros(n, dtype=bool)
    if query.directed:
        A = query.adjacency()
        conds += [("out_degree", int(A[u].sum())), ("in_degree", int(A[:, u].sum()))]
    else:
        conds.append(("out_degree", int(query.degree()[u])))
    mask = None if lab == ANY else graph.vertex_labels == lab
    for attr, need in conds:
        if need:            # (read only where needed: in-degrees may not be built)
            if mask is None:
                mask = getattr(graph, attr) >= need
            else:
                mask &= getattr(graph, attr) >= need
    return np.ones(n, dtype=bool) if mask is None else mask


#: per graph, the sorted ids of the last few label-and-degree filters asked for
_LDF_IDS: "weakref.WeakKeyDictionary[Graph, OrderedDict]" = weakref.WeakKeyDictionary()
#: per graph, the sizes of the filters asked for (a few integers per query shape)
_LDF_SIZES: "weakref.WeakKeyDictionary[Graph, dict]" = weakref.WeakKeyDictionary()
#: filters whose ids are kept per graph (least recently used dropped first)
LDF_IDS_KEEP = 4
#: filters whose sizes are kept per graph
_LDF_SIZES_KEEP = 256


def ldf_size(graph: Graph, query: Query, u: int) -> int:
    """How many data vertices pass the label-and-degree filter for ``u``
    (``count_nonzero(ldf_mask(graph, query, u))``), kept per graph and filter."""
    key = ldf_key(query, u)
    sizes = _LDF_SIZES.get(graph)
    if sizes is not None and key in sizes:
        return sizes[key]
    n = int(np.count_nonzero(ldf_mask(graph, query, u)))
    _remember_size(graph, key, n)
    return n


def _remember_size(graph: Graph, key: tuple, n: int) -> None:
    sizes = _LDF_SIZES.get(graph)
    if sizes is None:
        sizes = _LDF_SIZES[graph] = {}
    if len(sizes) < _LDF_SIZES_KEEP:
        sizes[key] = n


def ldf_ids(graph: Graph, query: Query, u: int) -> np.ndarray:
    """The sorted ids (the graph's index dtype) of the data vertices that pass the
    label-and-degree filter for ``u``: ``flatnonzero(ldf_mask(graph, query, u))``.

    Kept per graph for the last :data:`LDF_IDS_KEEP` filters (label and degrees,
    :func:`ldf_key`): every count plans, and on a graph of 10^7 vertices the mask, its
    ids and their conversion cost milliseconds, as much as a light query's search. A set
    larger than a quarter of the graph's adjacency bytes is not kept. The array is
    read-only.
    """
    key = ldf_key(query, u)
    per = _LDF_IDS.get(graph)
    if per is not None and key in per:
        per.move_to_end(key)
        return per[key]
    ids = np.flatnonzero(ldf_mask(graph, query, u)).astype(graph.indices.dtype, copy=False)
    ids.setflags(write=False)
    _remember_size(graph, key, int(ids.size))
    if ids.nbytes <= graph.indices.nbytes // 4:
        if per is None:
            per = _LDF_IDS[graph] = OrderedDict()
        per[key] = ids
        if len(per) > LDF_IDS_KEEP:
            per.popitem(last=False)
    return ids


def ldf_key(query: Query, u: int) -> tuple[int, ...]:
    """What :func:`ldf_mask` depends on for ``u``: its label and the degrees it needs
    (query vertices with equal keys have equal masks)."""
    if query.directed:
        A = query.adjacency()
        return (int(query.vertex_labels[u]), int(A[u].sum()), int(A[:, u].sum()))
    return (int(query.vertex_labels[u]), int(query.degree()[u]))


def _required_label_counts(labels: np.ndarray) -> dict[int, int]:
    """{label: how many} over query neighbour labels, ignoring the wildcard -1."""
    labels = labels[labels != ANY]
    if labels.size == 0:
        return {}
    vals, cnt = np.unique(labels, return_counts=True)
    return dict(zip(vals.tolist(), cnt.tolist()))


def _nlf_direction(indptr: np.ndarray, indices: np.ndarray, vlabels: np.ndarray,
                   ids: np.ndarray, need: dict[int, int]) -> np.ndarray:
    """Keep-mask over ``ids``: each has >= need[L] neighbours of label L in this adjacency.

    Gathers the rows of ``ids`` only (vectorised ragged gather), maps neighbour
    labels to slots 0..len(need)-1 (other labels dropped), then counts every
    (row, slot) pair with one bincount.
    """
    if not need or ids.size == 0:
        return np.ones(ids.size, dtype=bool)
    labels = np.fromiter(need.keys(), dtype=np.int64, count=len(need))
    required = np.fromiter(need.values(), dtype=np.int64, count=len(need))
    starts = indptr[ids].astype(np.int64)
    lens = (indptr[ids + 1] - indptr[ids]).astype(np.int64)
    total = int(lens.sum())
    if total == 0:
        return np.zeros(ids.size, dtype=bool)
    row = np.repeat(np.arange(ids.size, dtype=np.int64), lens)
    # position of each gathered entry inside its row, added to the row's start
    offs = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    nbr_lab = vlabels[indices[np.repeat(starts, lens) + offs]].astype(np.int64)
    order = np.argsort(labels)
    slab = labels[order]
    pos = np.searchsorted(slab, nbr_lab)
    pos_c = np.minimum(pos, slab.size - 1)
    hit = slab[pos_c] == nbr_lab
    slot = order[pos_c[hit]]
    counts = np.bincount(row[hit] * labels.size + slot,
                         minlength=ids.size * labels.size).reshape(ids.size, labels.size)
    return np.all(counts >= required[None, :], axis=1)


def nlf_keep(graph: Graph, query: Query, u: int, ids: np.ndarray) -> np.ndarray:
    """Keep-mask over data vertices ``ids`` by the neighbour-label frequency filter for ``u``.

    Parameters
    ----------
    graph : Graph
        The data graph.
    query : Query
        The query graph.
    u : int
        Query vertex index.
    ids : numpy.ndarray
        Internal data vertex ids to test (typically the LDF survivors).

    Returns
    -------
    numpy.ndarray
        ``bool[ids.size]``; all True when neither the graph nor ``u``'s
        neighbours carry labels.
    """
    ids = np.asarray(ids)
    keep = np.ones(ids.size, dtype=bool)
    if graph.vertex_labels is None or ids.size == 0:
        return keep
    A = query.adjacency()
    vl = query.vertex_labels
    if query.directed:
        need_out = _required_label_counts(vl[A[u]])
        need_in = _required_label_counts(vl[A[:, u]])
        keep &= _nlf_direction(graph.indptr, graph.indices, graph.vertex_labels, ids, need_out)
        sub = ids[keep]
        keep[keep] = _nlf_direction(graph.in_indptr, graph.in_indices, graph.vertex_labels,
                                    sub, need_in)
    else:
        need = _required_label_counts(vl[A[u]])
        keep &= _nlf_direction(graph.indptr, graph.indices, graph.vertex_labels, ids, need)
    return keep


def nlf_applies(graph: Graph, query: Query, u: int) -> bool:
    """True if NLF can remove anything for ``u`` (labeled graph and a labeled neighbour)."""
    if graph.vertex_labels is None:
        return False
    A = query.adjacency()
    nb = A[u] | A[:, u]
    return bool(np.any(query.vertex_labels[nb] != ANY))


def candidates(graph: Graph, query: Query, u: int, use_nlf: bool = True) -> np.ndarray:
    """Sorted internal ids of the data vertices that may match query vertex ``u``.

    Parameters
    ----------
    graph : Graph
        The data graph.
    query : Query
        The query graph.
    u : int
        Query vertex index.
    use_nlf : bool, optional
        Apply the neighbour-label frequency filter after LDF. The default is
        ``True``.

    Returns
    -------
    numpy.ndarray
        Ascending ids, dtype ``graph.indices.dtype``.
    """
    ids = np.flatnonzero(ldf_mask(graph, query, u)).astype(graph.indices.dtype)
    if use_nlf and nlf_applies(graph, query, u):
        ids = ids[nlf_keep(graph, query, u, ids)]
    return ids


def candidate_counts(graph: Graph, query: Query, use_nlf: bool = True) -> np.ndarray:
    """Number of candidates of every query vertex (the matching orders' cost input).

    For a vertex whose neighbourhood is unlabeled this is the LDF count (a
    mask count, no id array is built); otherwise the NLF-filtered count.

    Parameters
    ----------
    graph : Graph
        The data graph.
    query : Query
        The query graph.
    use_nlf : bool, optional
        Apply NLF where it can remove something. The default is ``True``.

    Returns
    -------
    numpy.ndarray
        ``int64[query.k]``.
    """
    out = np.empty(query.k, dtype=np.int64)
    for u in range(query.k):
        if use_nlf and nlf_applies(graph, query, u):
            out[u] = candidates(graph, query, u, use_nlf=True).size
        else:
            out[u] = int(np.count_nonzero(ldf_mask(graph, query, u)))
    return out
