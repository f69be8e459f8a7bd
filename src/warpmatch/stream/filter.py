"""Candidate filter of continuous matching: which query vertices each data vertex may match.

Map: :class:`NlfFilter` (the state and its per-batch update) < the numba kernels
``_count_all`` (a full build), ``_refresh`` (exact masks of the vertices the
last batch touched) and ``_overlay_counts`` (this batch's touched vertices).

Per data vertex ``v`` the filter keeps one bit per query vertex ``u`` (``k <=
64``, so a ``uint64``): bit ``u`` is set iff ``v`` has ``u``'s label (or ``u``
is a wildcard) and, in every direction, at least as many neighbours of each
query label, and at least as many neighbours in all, as ``u`` has in the
query: the label, degree and neighbourhood-label-frequency filters (LDF/NLF)
of the subgraph-matching literature (GraphQL, CFL; RapidFlow keeps the same
NLF counts for its candidate index, §4). A search only enumerates data
vertices whose bit is set, and an update whose endpoints carry no bit of a
plan's first two query vertices creates no task at all (DESIGN.md: "updates
that cannot match cost nothing").

The counts behind the masks are maintained incrementally, per touched vertex:

- The masks a batch's searches read must hold for every state ``S_p`` of the
  batch, so a touched vertex gets the mask of the *union* of its versions (every
  entry of its overlay row, deleted ones included): a superset of each state's
  neighbourhood, so the filter never removes a match (it only prunes less for
  the few touched vertices). Its counts are the kept ones (the state before the
  batch) plus the batch's insertions, found from the batch's updates, not by
  reading the rows.
- The counts kept for the next batch are the state after the batch (the kept
  ones plus insertions less deletions: the overlay entries alive at the end);
  the next batch first restores the exact masks of the vertices this one touched.

What differs from RapidFlow: no per-query-edge candidate relations (its
"global views"); the masks are the whole index, so one bit test replaces the
vertex-label test in the search. Edge labels are not counted (a sound,
coarser filter).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ..query.model import ANY, Query
from .types import BatchView

__all__ = ["NlfFilter"]


@njit(cache=True, nogil=True)
def _mask_of(cnt, v, lab, qlab, req):
    """The bits of the query vertices ``v`` may match, from its count row ``cnt[v]``."""
    k = req.shape[0]
    K = req.shape[1]
    m = np.uint64(0)
    for u in range(k):
        if qlab[u] != -1 and qlab[u] != lab:
            continue
        ok = True
        for key in range(K):
            if cnt[v, key] < req[u, key]:
                ok = False
                break
        if ok:
            m |= np.uint64(1) << np.uint64(u)
    return m


@njit(cache=True, nogil=True)
def _count_all(n, start, deg, nbr, off, nq1, lab_idx, cnt):
    """Count rows ``0..n-1`` of one direction (storage rows) into ``cnt[:, off:off+nq1]``."""
    for v in range(min(n, start.shape[0])):
        s = start[v]
        d = deg[v]
        cnt[v, off] = d
        for z in range(s, s + d):
            li = lab_idx[nbr[z]]
            if li >= 0:
                cnt[v, off + 1 + li] += 1


@njit(cache=True, nogil=True)
def _masks_all(n, lab_idx, qlab, req, cnt, mask):
    for v in range(n):
        mask[v] = _mask_of(cnt, v, lab_idx[v], qlab, req)


@njit(cache=True, nogil=True)
def _refresh(vs, lab_idx, qlab, req, cnt, mask):
    """Exact masks (from the kept counts) of the vertices ``vs``."""
    for i in range(vs.shape[0]):
        v = vs[i]
        mask[v] = _mask_of(cnt, v, lab_idx[v], qlab, req)


@njit(cache=True, nogil=True)
def _event(x, nb, off, add, rows, lab_idx, cnt, ucnt):
    """One insertion (``add``) or deletion of neighbour ``nb`` at touched vertex ``x``,
    counted at key offset ``off``: into the union (insertions only) and the final counts."""
    p = np.searchsorted(rows, x)
    if p >= rows.shape[0] or rows[p] != x:      # (every valid endpoint is touched)
        return
    li = lab_idx[nb]
    d = 1 if add else -1
    cnt[x, off] += d
    if li >= 0:
        cnt[x, off + 1 + li] += d
    if add:
        ucnt[p, off] += 1
        if li >= 0:
            ucnt[p, off + 1 + li] += 1


@njit(cache=True, nogil=True)
def _overlay_counts(rows, src, dst, op, valid, directed, nq1, lab_idx, qlab, req, cnt, mask):
    """Masks of the batch's union for the touched vertices ``rows`` (sorted); counts :=
    final. Both come from the kept counts (the state before the batch) and the batch's
    valid updates: the union of a row's versions is its state before the batch plus
    every entry the batch inserted, the final state that plus the insertions less the
    deletions. So the cost is the batch's, not the touched rows' lengths (a hub's
    neighbours were counted once per batch that touched it: 4 ms of a 512-update
    triangle batch on a 10^7-edge R-MAT graph).

    A directed vertex may be touched in one direction only: the other direction's
    counts are the kept ones (unchanged in the batch).
    """
    K = cnt.shape[1]
    ucnt = np.empty((rows.shape[0], K), np.int64)
    for p in range(rows.shape[0]):
        for key in range(K):
            ucnt[p, key] = cnt[rows[p], key]
    for i in range(src.shape[0]):
        if not valid[i]:
            continue
        a = src[i]
        b = dst[i]
        add = op[i] > 0
        _event(a, b, 0, add, rows, lab_idx, cnt, ucnt)
        if directed:
            _event(b, a, nq1, add, rows, lab_idx, cnt, ucnt)
        else:
            _event(b, a, 0, add, rows, lab_idx, cnt, ucnt)
    for p in range(rows.shape[0]):
        x = rows[p]
        mask[x] = _mask_of(ucnt, p, lab_idx[x], qlab, req)


class NlfFilter:
    """Label, degree and neighbour-label masks of the data vertices (module docstring).

    Parameters
    ----------
    query : Query
        The query whose vertices the bits stand for.
    directed : bool
        Whether the data graph is directed (in- and out-neighbours are counted
        apart).

    Notes
    -----
    :meth:`masks` is called once per batch, before the batch is applied. It is
    incremental when it sees the batches of one
    :class:`~warpmatch.stream.dynamic.DynamicGraph` in order (``graph`` given);
    otherwise it rebuilds from the view's storage, in ``O(edges)``.
    """

    def __init__(self, query: Query, directed: bool) -> None:
        k = query.k
        labs = sorted({int(x) for x in query.vertex_labels.tolist() if x != ANY})
        self.qlabels = np.asarray(labs, dtype=np.int64)
        self.nq1 = len(labs) + 1
        self.directed = bool(directed)
        ndir = 2 if directed else 1
        self.qlab = np.full(k, -1, dtype=np.int64)           # label index of u, -1 = any
        for u in range(k):
            if query.vertex_labels[u] != ANY:
                self.qlab[u] = labs.index(int(query.vertex_labels[u]))
        req = np.zeros((k, ndir * self.nq1), dtype=np.int64)
        for a, b in query.edges.tolist():
            for x, y, dr in ((a, b, 0), (b, a, 1 if directed else 0)):
                off = dr * self.nq1
                req[x, off] += 1
                if self.qlab[y] >= 0:
                    req[x, off + 1 + self.qlab[y]] += 1
        self.req = req
        self.K = ndir * self.nq1
        self.cnt = np.zeros((0, self.K), dtype=np.int64)
        self.mask = np.zeros(0, dtype=np.uint64)
        # the label index per vertex in one byte while the query's labels allow: the
        # sequential kernel reads it for every update (is the edge relevant?), and at
        # 8 bytes a vertex hprd's 9,460 took 20-25 µs of cache misses on a fresh
        # matcher's 5,250-update stream (75 KB against 9.5 KB; a 2-core box)
        self._lab_dt = np.int8 if self.nq1 <= 128 else np.int32
        self.lab_idx = np.zeros(0, dtype=self._lab_dt)
        self.n = 0
        self._graph: Any = None
        self._state: int | None = None
        self._last_batch: Any = None
        self._touched = np.zeros(0, dtype=np.int64)
        self.changed: np.ndarray | None = None
        self.calls = 0                  # masks() calls: a copy kept elsewhere that saw
                                        # call c can apply `changed` of call c + 1 only

    def _grow(self, n: int) -> None:
        cap = self.mask.shape[0]
        if n <= cap:
            return
        new = max(n, int(cap * 1.5) + 16)
        cnt = np.zeros((new, self.K), dtype=np.int64)
        cnt[:cap] = self.cnt
        mask = np.zeros(new, dtype=np.uint64)
        mask[:cap] = self.mask
        lab = np.full(new, -1, dtype=self._lab_dt)
        lab[:cap] = self.lab_idx
        self.cnt, self.mask, self.lab_idx = cnt, mask, lab

    def _labels(self, view: BatchView, lo: int, hi: int) -> None:
        """Label indices of vertices ``lo..hi-1`` (labels never change)."""
        if hi <= lo:
            return
        self.lab_idx[lo:hi] = -1
        vl = np.asarray(view.vlabel)
        if vl.shape[0] == 0 or self.qlabels.size == 0:
            return
        v = vl[lo:hi].astype(np.int64)
        pos = np.minimum(np.searchsorted(self.qlabels, v), self.qlabels.size - 1)
        hit = self.qlabels[pos] == v
        self.lab_idx[lo:hi] = np.where(hit, pos, -1)

    def _rebuild(self, view: Any) -> None:
        """Counts and masks of every vertex from ``view``'s storage rows (a BatchView,
        or a DynamicGraph: the same ``b_*``/``bi_*`` and ``vlabel`` names)."""
        n = int(view.n)
        self._grow(n)
        self.cnt[:] = 0
        self.mask[:] = 0
        self._labels(view, 0, n)
        _count_all(n, view.b_start, view.b_deg, view.b_nbr, 0, self.nq1, self.lab_idx,
                   self.cnt)
        if self.directed:
            _count_all(n, view.bi_start, view.bi_deg, view.bi_nbr, self.nq1, self.nq1,
                       self.lab_idx, self.cnt)
        _masks_all(n, self.lab_idx, self.qlab, self.req, self.cnt, self.mask)
        self.n = n

    def bind(self, graph: Any) -> None:
        """Build the counts from a :class:`~warpmatch.stream.dynamic.DynamicGraph` now
        (``O(edges)``), so that its next batch is incremental.

        Parameters
        ----------
        graph : DynamicGraph
            The graph the next :meth:`masks` calls will see batches of.
        """
        class _Storage:                       # the storage arrays under BatchView's names
            n = graph.n
            b_start, b_deg, b_nbr = graph.b_start, graph.b_deg, graph.b_nbr
            bi_start, bi_deg, bi_nbr = graph.bi_start, graph.bi_deg, graph.bi_nbr
            vlabel = (graph.vertex_labels if graph.vertex_labels is not None
                      else np.zeros(0, np.int32))
        self._rebuild(_Storage)
        self._graph = graph
        self._state = graph._state
        self._last_batch = None
        self._touched = np.zeros(0, dtype=np.int64)

    def masks(self, view: BatchView, graph: Any = None) -> np.ndarray:
        """The masks a batch's searches read (``uint64``, at least ``view.n`` long).

        Parameters
        ----------
        view : BatchView
            The batch (its storage is ``S_0``, its overlay every version).
        graph : DynamicGraph, optional
            The graph the view comes from; without it (or when the view is
            not the batch after the last one seen) the counts are rebuilt
            from the view's storage.

        Returns
        -------
        numpy.ndarray
            Valid until the next call. :attr:`changed` then holds the vertices
            whose masks may differ from the previous call's (``None``: all of
            them, after a rebuild).
        """
        state = getattr(graph, "_state", None)
        pending = getattr(graph, "_pending", ())
        last_applied = self._last_batch is not None and self._last_batch not in pending
        incremental = (graph is not None and graph is self._graph and state is not None
                       and self._state is not None
                       and (state == self._state
                            or (state == self._state + 1 and last_applied)))
        n = int(view.n)
        if not incremental:
            self._rebuild(view)
            changed = None
        else:
            self._grow(n)
            changed = [self._touched]
            if n > self.n:
                self.cnt[self.n:n] = 0
                self._labels(view, self.n, n)
                self._refresh_new(self.n, n)
                changed.append(np.arange(self.n, n, dtype=np.int64))
                self.n = n
            _refresh(self._touched, self.lab_idx, self.qlab, self.req, self.cnt, self.mask)
        o_rows = np.asarray(view.o_rows, dtype=np.int64)
        if self.directed:
            rows = np.union1d(o_rows, np.asarray(view.oi_rows, dtype=np.int64))
        else:
            rows = o_rows
        b = view.batch
        _overlay_counts(rows, np.asarray(b.src), np.asarray(b.dst), np.asarray(b.op),
                        np.asarray(b.edits, dtype=np.bool_), self.directed, self.nq1,
                        self.lab_idx, self.qlab, self.req, self.cnt, self.mask)
        self._touched = rows
        # what a copy of the masks kept elsewhere (the GPU engine's) must refresh
        self.changed = None if changed is None else np.concatenate(changed + [rows])
        self.calls += 1
        self._graph = graph
        self._state = state
        self._last_batch = view.batch
        return self.mask

    def exact(self, graph: Any) -> None:
        """Make the counts and masks those of ``graph``'s current storage, exactly.

        For the sequential path (:mod:`warpmatch.stream.sequential`), which
        reads and edits them in place: incremental after the filter's last
        :meth:`masks` or :meth:`synced` call on this graph (the vertices the
        last batch touched get their exact masks back), else rebuilt
        (``O(edges)``).

        Parameters
        ----------
        graph : DynamicGraph
        """
        state = graph._state
        viewed = self._last_batch is not None
        applied = viewed and self._last_batch not in graph._pending
        ok = (graph is self._graph and self._state is not None and graph.n == self.n
              and ((state == self._state and not viewed)
                   or (state == self._state + 1 and applied)))
        if not ok:
            self.bind(graph)
            self.changed = None
        else:
            _refresh(self._touched, self.lab_idx, self.qlab, self.req, self.cnt, self.mask)
            self.changed = self._touched
            self._touched = np.zeros(0, dtype=np.int64)
            self._state = state
            self._last_batch = None
        self.calls += 1

    def synced(self, graph: Any) -> None:
        """Record that the caller edited the counts and masks along with ``graph``'s
        storage (exact for its current state); the next call is incremental."""
        self._graph = graph
        self._state = graph._state
        self._last_batch = None
        if self._touched.shape[0]:
            self._touched = np.zeros(0, dtype=np.int64)
        self.changed = None             # a copy kept elsewhere must copy them whole
        self.calls += 1

    def _refresh_new(self, lo: int, hi: int) -> None:
        _refresh(np.arange(lo, hi, dtype=np.int64), self.lab_idx, self.qlab, self.req,
                 self.cnt, self.mask)
