"""METIS on a contracted graph, so that partitioning needs a small multiple of the graph's bytes.

Map: :data:`METIS_DIRECT_ENTRIES` (up to which METIS sees the graph itself) <
:func:`_sweep` / :func:`_propagate` (size-constrained label propagation, a compiled
sweep at a time) < :func:`_clusters`
(clusters from it) < :func:`_contract` (the cluster graph: summed vertex weights,
edge weights = edges between clusters, compiled) < :func:`metis_parts` (levels of
clusters, METIS k-way on the last, the parts projected back and refined).

METIS's multilevel k-way keeps its whole hierarchy of coarsened graphs with edge
weights and per-vertex refinement state: through ``pymetis`` it peaked at 2.1 GB
for a graph of 1.25M vertices and 2x10^7 adjacency entries (90 MB in warpmatch's
arrays), 23x the graph, so a 2x10^9-edge graph would need hundreds of GB. PBE
(§3.1) partitions once with METIS and says nothing about its memory. Here, above
:data:`METIS_DIRECT_ENTRIES`, the graph is first contracted by size-constrained
label propagation (the coarsening KaHIP uses for social and web graphs: a vertex
joins the neighbouring cluster it has most edges to, while that cluster stays
under a weight bound), level by level, in O(n) memory beside each level's graph.
METIS then cuts the last cluster graph, whose vertex weights are the clusters'
summed weights and whose edge weights count the edges between clusters, so its
cut is the graph's cut. The parts are projected back and refined on the graph
itself by the same label propagation over parts, no part growing heavier than
METIS's heaviest or 3% above the mean. On that graph (a planted-community one,
6 parts; ``Partitioned.build``): peak 418 MB instead of 2,421 MB for the whole
process, 412,221 cut edges instead of 610,728, in about the same time (11.3 s
instead of 10.7 s on this 2-core host); on a
Chung-Lu graph of 10^7 edges without communities, 611 instead of 2,816 MB and
6.43M cut edges instead of 6.54M, balanced within 6.2% (hubs heavier than the
cluster bound stay alone, so METIS balances coarser pieces).
Differences from METIS on the whole graph:

- The first levels of coarsening are label propagation, not heavy-edge
  matching, and the refinement on the graph itself is label propagation, not
  Fiduccia-Mattheyses with boundary buckets.
- The bound keeps every cluster below ``1 / (parts * CLUSTERS_PER_PART)`` of the
  total weight (a vertex heavier than that stays alone), so that METIS can still
  balance the parts, within its tolerance where the hubs allow.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numba import njit

#: adjacency entries up to which METIS partitions the graph itself (a few hundred MB)
METIS_DIRECT_ENTRIES = 1 << 22
#: the cluster weight bound is the total over ``parts * CLUSTERS_PER_PART``
CLUSTERS_PER_PART = 32
#: label propagation sweeps over every vertex (fewer when almost nothing moves)
LP_ROUNDS = 4
#: levels of clustering and contraction at most
MAX_LEVELS = 6
#: label propagation sweeps over the parts on the graph itself, after METIS
REFINE_ROUNDS = 4


@njit(cache=True, nogil=True)
def _sweep(ptr, nbr, ew, vw, label, cw, bound, seed):  # pragma: no cover - compiled
    """One sweep of size-constrained label propagation, in place; returns how many
    vertices moved. Each vertex (seeded random order) moves to the neighbouring label
    it has the most edge weight to (ties at random), when that label's weight ``cw``
    stays within ``bound``; ``ew`` empty: every edge weighs 1."""
    n = ptr.shape[0] - 1
    np.random.seed(seed)
    order = np.random.permutation(n)
    score = np.zeros(cw.shape[0], np.int64)
    most = 1
    for v in range(n):
        most = max(most, ptr[v + 1] - ptr[v] + 1)
    touched = np.empty(most, np.int64)
    moved = 0
    for i in range(n):
        v = order[i]
        own = label[v]
        t = 0
        for e in range(ptr[v], ptr[v + 1]):
            lab = label[nbr[e]]
            if score[lab] == 0:
                touched[t] = lab
                t += 1
            score[lab] += ew[e] if ew.shape[0] else 1
        best, best_w, ties = own, score[own], 1
        for j in range(t):
            lab = touched[j]
            w = score[lab]
            if w < best_w or lab == own or cw[lab] + vw[v] > bound:
                continue
            if w > best_w:
                best, best_w, ties = lab, w, 1
            else:
                # a tie: each of the tied labels equally likely (the lowest id would
                # pull every vertex toward the lowest-numbered neighbour's cluster)
                ties += 1
                if np.random.randint(0, ties) == 0:
                    best = lab
        for j in range(t):
            score[touched[j]] = 0
        if best != own:
            cw[own] -= vw[v]
            cw[best] += vw[v]
            label[v] = best
            moved += 1
    return moved


def _propagate(ptr, nbr, ew, vw, label, cw, bound, rounds, seed, tick=None) -> None:
    """Up to ``rounds`` sweeps of :func:`_sweep` (in place), stopping once a sweep moves
    fewer than 0.1% of the vertices; ``tick()`` after each sweep (progress)."""
    n = ptr.shape[0] - 1
    for r in range(rounds):
        moved = _sweep(ptr, nbr, ew, vw, label, cw, bound, (seed * 1009 + r) % (1 << 32))
        if tick is not None:
            tick()
        if moved * 1000 < n:
            break


@njit(cache=True, nogil=True)
def _dense_ids(label):  # pragma: no cover - compiled
    """``label`` renumbered ``0..C-1`` in order of first appearance (in place), and C."""
    dense = np.full(label.shape[0], -1, np.int64)
    c = 0
    for v in range(label.shape[0]):
        if dense[label[v]] < 0:
            dense[label[v]] = c
            c += 1
        label[v] = dense[label[v]]
    return c


def _clusters(ptr, nbr, ew, vw, bound, rounds, seed, tick=None) -> tuple[np.ndarray, int]:
    """A cluster id per vertex (``0..C-1``) and ``C``: :func:`_propagate` from one
    cluster per vertex."""
    n = ptr.shape[0] - 1
    label = np.arange(n, dtype=np.int64)
    cw = np.asarray(vw, dtype=np.int64).copy()
    _propagate(ptr, nbr, ew, vw, label, cw, bound, rounds, seed, tick)
    return label, int(_dense_ids(label))


@njit(cache=True, nogil=True)
def group_by(part, parts, like):  # pragma: no cover - compiled
    """``(start, order, local)``: group ``p``'s vertices are ``order[start[p]:start[p+1]]``,
    in increasing id; ``local[v]`` is ``v``'s position in its group (ids of ``like``'s
    type). A counting sort: parts of a partition, or clusters."""
    n = part.shape[0]
    start = np.zeros(parts + 1, np.int64)
    for v in range(n):
        start[part[v] + 1] += 1
    for p in range(parts):
        start[p + 1] += start[p]
    pos = start[:parts].copy()
    order = np.empty(n, type(like))
    local = np.empty(n, type(like))
    for v in range(n):
        p = part[v]
        i = pos[p]
        order[i] = v
        local[v] = i - start[p]
        pos[p] = i + 1
    return start, order, local


@njit(cache=True, nogil=True)
def _contract(ptr, nbr, ew, vw, cid, c):  # pragma: no cover - compiled
    """The cluster graph of ``cid``: CSR (``cptr``, ``cnbr``) without self-loops, edge
    weights ``cew`` (the summed weights ``ew`` of the edges between the two clusters;
    an empty ``ew``: each edge weighs 1) and vertex weights ``cvw`` (summed)."""
    n = ptr.shape[0] - 1
    start, members, _ = group_by(cid, c, np.int64(0))
    cvw = np.zeros(c, np.int64)
    for v in range(n):
        cvw[cid[v]] += vw[v]
    score = np.zeros(c, np.int64)
    touched = np.empty(c, np.int64)
    cptr = np.zeros(c + 1, np.int64)
    for sweep in range(2):          # 0: count each row, 1: fill it
        if sweep == 1:
            for i in range(c):
                cptr[i + 1] += cptr[i]
            cnbr = np.empty(cptr[c], np.int64)
            cew = np.empty(cptr[c], np.int64)
        for a in range(c):
            t = 0
            for i in range(start[a], start[a + 1]):
                v = members[i]
                for e in range(ptr[v], ptr[v + 1]):
                    b = cid[nbr[e]]
                    if b == a:
                        continue
                    if score[b] == 0:
                        touched[t] = b
                        t += 1
                    score[b] += ew[e] if ew.shape[0] else 1
            if sweep == 0:
                cptr[a + 1] = t
            else:
                row = np.sort(touched[:t])
                o = cptr[a]
                for j in range(t):
                    cnbr[o + j] = row[j]
                    cew[o + j] = score[row[j]]
            for j in range(t):
                score[touched[j]] = 0
    return cptr, cnbr, cew, cvw


def metis_parts(metis: Any, ptr: np.ndarray, nbr: np.ndarray, vweights: np.ndarray,
                parts: int, seed: int = 0, direct: int | None = None,
                progress: Callable[[int, int], None] | None = None
                ) -> tuple[np.ndarray, int]:
    """METIS k-way part ids (int32[n]) of a symmetric CSR, and the clusters it cut.

    Parameters
    ----------
    metis : module
        ``pymetis``.
    ptr, nbr : numpy.ndarray
        The symmetric CSR (no self-loops).
    vweights : numpy.ndarray
        int64[n] vertex weights (the parts balance them).
    parts : int
    seed : int, optional
        METIS's and the label propagation's seed. The default is 0.
    direct : int, optional
        Up to this many adjacency entries METIS cuts the graph itself; above, the
        cluster graph (module docstring). The default, ``None``, is
        :data:`METIS_DIRECT_ENTRIES` (read at the call).
    progress : callable, optional
        ``progress(done, total)`` after each sweep over the graph, METIS, and each
        refinement sweep (minutes on a 10^9-edge graph); METIS itself is one step.

    Returns
    -------
    part : numpy.ndarray
        int32[n] part per vertex (a part may be empty; the caller renumbers).
    clusters : int
        The cluster graph's vertices (0 when METIS cut the graph itself).
    """
    opts = metis.Options(seed=int(seed))
    direct = METIS_DIRECT_ENTRIES if direct is None else int(direct)
    steps = LP_ROUNDS + 2 + REFINE_ROUNDS       # level 0's sweeps, the rest, METIS, refining
    done = 0

    def tick(to: int | None = None) -> None:
        nonlocal done
        done = min(steps, done + 1 if to is None else max(done, to))
        if progress is not None:
            progress(done, steps)

    ptr = np.asarray(ptr, dtype=np.int64)
    nbr = np.asarray(nbr)
    vweights = np.asarray(vweights, dtype=np.int64)
    n = ptr.size - 1
    if nbr.size <= direct or n <= parts * CLUSTERS_PER_PART:
        whole = _part_graph(metis, parts, ptr, nbr.astype(np.int64, copy=False), vweights,
                            None, opts)
        tick(steps)
        return whole, 0
    bound = max(int(vweights.max(initial=1)),
                int(vweights.sum()) // (parts * CLUSTERS_PER_PART))
    # levels of label propagation and contraction until the cluster graph is small
    fine_ptr, fine_nbr = ptr, nbr
    cid = np.arange(n, dtype=np.int64)
    c, ew, vw = n, np.empty(0, dtype=np.int64), vweights
    total = 0
    for level in range(MAX_LEVELS):
        lab, c2 = _clusters(ptr, nbr, ew, vw, bound, LP_ROUNDS, int(seed) + level,
                            tick if level == 0 else None)
        tick(LP_ROUNDS)
        if c2 >= c * 0.95:              # converged: contraction no longer shrinks it
            break
        ptr, nbr, ew, vw = _contract(ptr, nbr, ew, vw, lab, c2)
        cid, c = lab[cid], c2
        total += 1
        if nbr.size <= direct or c <= parts * CLUSTERS_PER_PART:
            break
    if total == 0:                      # label propagation did not shrink the graph
        whole = _part_graph(metis, parts, fine_ptr, fine_nbr.astype(np.int64, copy=False),
                            vweights, None, opts)
        tick(steps)
        return whole, 0
    if c <= parts:                      # a part per cluster (the caller renumbers)
        tick(steps)
        return cid.astype(np.int32), int(c)
    tick(LP_ROUNDS + 1)
    coarse = _part_graph(metis, parts, ptr, nbr, vw, ew, opts)
    tick(LP_ROUNDS + 2)
    # refinement on the graph itself: label propagation over the parts, no part heavier
    # than METIS's heaviest or 3% above the mean (METIS's default tolerance)
    part = coarse[cid].astype(np.int64)
    pw = np.bincount(part, weights=vweights, minlength=parts).astype(np.int64)
    limit = max(int(pw.max()), int(1.03 * int(vweights.sum()) / parts))
    _propagate(fine_ptr, fine_nbr, np.empty(0, dtype=np.int64), vweights, part, pw, limit,
               REFINE_ROUNDS, int(seed), tick)
    tick(steps)
    return part.astype(np.int32), int(c)


def _part_graph(metis: Any, parts: int, ptr: np.ndarray, nbr: np.ndarray,
                vweights: np.ndarray, eweights: np.ndarray | None, opts: Any) -> np.ndarray:
    kw = {} if eweights is None else {"eweights": eweights}
    if hasattr(metis, "CSRAdjacency"):          # pymetis >= 2025.2
        _, member = metis.part_graph(parts, adjacency=metis.CSRAdjacency(ptr, nbr),
                                     vweights=vweights, options=opts, **kw)
    else:                                        # pragma: no cover - older pymetis
        _, member = metis.part_graph(parts, xadj=ptr, adjncy=nbr, vweights=vweights,
                                     options=opts, **kw)
    return np.asarray(member, dtype=np.int32)
