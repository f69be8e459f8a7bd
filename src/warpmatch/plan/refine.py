"""Candidate refinement: neighbourhood consistency to a fixed point (GraphQL, CFL, DP-iso).

Map: :func:`refine_applies` (when it pays) < :func:`_supported` (which candidates of
``u`` have a neighbour among ``w``'s, for one query edge) < :func:`refine_candidates`
(passes over every query edge until nothing changes).

After LDF and NLF (:mod:`.filter`) a data vertex ``v`` stays a candidate of query
vertex ``u`` only if, for every query edge ``(u, w)``, ``v`` has a neighbour (in the
edge's direction, with its edge label) that is still a candidate of ``w``. Removing
``v`` can remove its neighbours' support in turn, so the passes repeat until a fixed
point. This is GraphQL's local pruning by neighbourhood (He and Singh, SIGMOD 2008)
and the refinement of CFL-Match's and DP-iso's candidate spaces (Bi et al. SIGMOD
2016; Han et al. SIGMOD 2019), as surveyed by Sun and Luo (SIGMOD 2020, §3.1). It is
sound: the image of an embedding supports itself, so no embedding loses a vertex.

Differences:

- Only candidate *sets* are kept, not CFL's and DP-iso's candidate *edges*: the
  engines intersect adjacency lists anyway, and a set is what the Plan carries
  (rule 3) to both engines.
- It runs only where candidate sets are selective (vertex labels or anchors) and
  within a work budget (:data:`WORK_BUDGET` adjacency entries read in all), so a
  huge unlabeled graph never pays a full pass for nothing.
- Vectorised numpy: one pass over a query edge reads the candidates' rows once
  (a gather and a ``bincount``), never a Python loop over data vertices.
"""
from __future__ import annotations

import numpy as np

from ..graph.csr import Graph, row_entries
from ..query.model import ANY, Query

#: most adjacency entries all passes together may read (about 1-2 s of numpy)
WORK_BUDGET = 1 << 27
#: most passes over the query's edges
MAX_PASSES = 8


def refine_applies(graph: Graph, query: Query, anchored: bool) -> bool:
    """Whether refinement can remove anything cheaply: a vertex-labeled graph with a
    labeled query vertex, or an anchored query."""
    if anchored:
        return True
    return graph.vertex_labels is not None and bool(np.any(query.vertex_labels != ANY))


def _supported(graph: Graph, ids: np.ndarray, other: np.ndarray, out: bool,
               elabel: int) -> tuple[np.ndarray, int]:
    """Which of ``ids`` have a neighbour in ``other`` (a bool mask over the data
    vertices): an out-neighbour if ``out``, else an in-neighbour; with edge label
    ``elabel`` unless it is ``-1``. Returns (keep mask over ``ids``, entries read)."""
    if out or not graph.directed:
        ptr, idx, lab = graph.indptr, graph.indices, graph.edge_labels
    else:
        ptr, idx, lab = graph.in_indptr, graph.in_indices, graph.in_edge_labels
    pos, row_of = row_entries(ptr, ids.astype(np.int64))
    ok = other[idx[pos]]
    if elabel != -1:
        ok &= (np.asarray(lab[pos]) == elabel) if lab is not None else False
    keep = np.bincount(row_of[ok], minlength=ids.size) > 0
    return keep, int(pos.size)


def refine_candidates(graph: Graph, query: Query, cand: list[np.ndarray | None],
                      ldf: list[np.ndarray]) -> tuple[list[np.ndarray | None], int]:
    """Refine candidate sets by neighbourhood consistency until nothing changes.

    Parameters
    ----------
    graph : Graph
    query : Query
    cand : list of numpy.ndarray or None
        Per query vertex: sorted candidate ids, or ``None`` for "every vertex its
        LDF mask keeps".
    ldf : list of numpy.ndarray
        Per query vertex, the LDF mask (bool over the data vertices).

    Returns
    -------
    cand : list of numpy.ndarray or None
        The refined sets (a vertex whose set was ``None`` gets ids where a pass
        removed some of its LDF candidates).
    passes : int
        Passes over the query's edges (the last one removed nothing, unless the
        pass or work budget ended them).
    """
    k, n = query.k, graph.n
    A = query.adjacency()
    L = query.edge_label_matrix()
    mask = []
    for u in range(k):
        if cand[u] is None:
            mask.append(ldf[u].copy())
        else:
            m = np.zeros(n, dtype=bool)
            m[cand[u]] = True
            mask.append(m)
    # (u, w, out, label): u's candidates need a neighbour among w's (out: u -> w)
    checks = []
    for u in range(k):
        for w in range(k):
            if u != w and A[u, w]:
                checks.append((u, w, True, int(L[u, w])))
            if u != w and graph.directed and A[w, u]:
                checks.append((u, w, False, int(L[w, u])))
    work = 0
    passes = 0
    dirty = set(range(k))               # vertices whose sets changed since last checked
    out = list(cand)
    while dirty and passes < MAX_PASSES and work < WORK_BUDGET:
        passes += 1
        changed: set[int] = set()
        for u, w, is_out, el in checks:
            if w not in dirty:          # u's support in w is unchanged since checked
                continue
            ids = np.flatnonzero(mask[u])
            if ids.size == 0:
                continue
            keep, read = _supported(graph, ids, mask[w], is_out, el)
            work += read
            if not keep.all():
                mask[u][ids[~keep]] = False
                changed.add(u)
            if work >= WORK_BUDGET:
                break
        dirty = changed
    itype = graph.indices.dtype
    for u in range(k):
        kept = int(np.count_nonzero(mask[u]))
        before = int(np.count_nonzero(ldf[u])) if cand[u] is None else int(cand[u].size)
        if kept < before:
            out[u] = np.flatnonzero(mask[u]).astype(itype)
    return out, passes
