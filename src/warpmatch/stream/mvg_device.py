"""Multi-version graph in flat arrays, updated by array passes on the GPU (DCSM §1.4.2-§1.4.3,
§1.6): the device counterpart of the host reference :mod:`warpmatch.stream.mvg`.

Map: :class:`ArrayMultiVersionGraph` (``apply`` a batch, ``neighbors`` as an update sees
them, ``snapshot``: many rows at one time as a CSR on the device, ``finish`` updates,
``compact``) < :class:`_Rows` (one adjacency direction: an entry pool and a version table)
< the array passes (:func:`_upper_bound`: a binary search per query over each one's own
range; :func:`_gather_ranges`: the positions of many short ranges, the copy that DCSM
gives one warp per list).

The semantics are the reference's, to the entry (see :mod:`warpmatch.stream.mvg`): time is
the stream's sequence number, an entry lives over ``(ct, dt]``, a version over
``(ct_min, dt_max]``, and update ``T`` reads the version of the vertex whose lifetime holds
``T`` and its entries with ``ct < T <= dt``. Per vertex, a batch's deletions before its
first insertion set ``dt`` in place; from the first insertion on, a new version holds the
newest one's live entries, the batch's later insertions, and its later deletions as ``dt``.

Layout, per direction:

- an entry pool ``nbr``/``ct``/``dt`` (int64), each version a contiguous range sorted by
  (neighbour, ``ct``), grown by doubling;
- a version table ``start``/``length``/``ct_min``/``dt_max``/``prev`` (the vertex's older
  version, -1) and ``head[v]``, the vertex's newest version.

A batch is applied in a fixed number of array passes, whatever its size: sort the batch's
items by (vertex, time); segmented counts find each vertex's first insertion; the in-place
deletions find their entries by a binary search in the newest version; the new versions'
entries are gathered (the live entries of the newest version, then the batch's insertions),
sorted by (vertex, neighbour, ``ct``), and the batch's later deletions find their entries by
rank (the ``j``-th deletion of an edge in a batch ends its ``j``-th entry in ``ct`` order:
insertions and deletions of one edge alternate). With ``xp`` CuPy these are device kernels;
with numpy (CPU machines, tests) the same passes run on the host.

How it differs from DCSM and from the reference:

- One flat pool per direction instead of DCSM's 32-entry slabs and slab allocator: a new
  version is a new range at the pool's end, and garbage collection compacts the pool (one
  gather) once released and deleted entries pass :data:`COMPACT_FRACTION` of it
  (:data:`DRAINED_FRACTION` when nothing is pending), instead of returning slabs to a free
  list. The version table is renumbered at that compaction too.
- Array passes (CuPy's sorts, scans, gathers and scatters) instead of DCSM's
  warp-per-vertex kernels; the number of passes per batch is fixed, not one per update.
- A batch is checked before anything changes, as the reference does (an insertion of a live
  edge, a deletion of a missing one, a self-loop, an unknown vertex raise
  :class:`~warpmatch.errors.InputFormatError`), by the same alternation of an edge's
  events: one pass, with one copy to the host to say whether (and where) it failed.
- Reads: :meth:`ArrayMultiVersionGraph.snapshot` builds many rows at one time as a CSR on
  the device; :meth:`ArrayMultiVersionGraph.neighbors` is one such row, copied to the
  host. The engines do not read this store yet (issue 17's pipelined
  executor is not built).
"""
from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from ..errors import GraphError, InputFormatError
from .mvg import FinishPointer

__all__ = ["ArrayMultiVersionGraph", "COMPACT_FRACTION", "DRAINED_FRACTION"]

#: "never deleted"
INF = np.iinfo(np.int64).max
#: the share of the pool held by released versions and deleted entries past which
#: :meth:`ArrayMultiVersionGraph.finish` compacts it while updates are still pending (a
#: batch that touches a hub copies its whole list into a new version: on a 10^5-edge R-MAT
#: graph a batch of 128 updates made 12% of the pool garbage, and compacting at 10% meant
#: a compaction per batch)
COMPACT_FRACTION = 0.5
#: the same once every applied update has finished (issue 17: at most 1.1x the
#: single-version graph after draining)
DRAINED_FRACTION = 0.1
#: a compacted pool keeps room for 1/HEADROOM more entries (growth is then by half)
HEADROOM = 16


def _lexsort(xp: Any, minor: Any, major: Any) -> Any:
    """Indices sorting by ``(major, minor)``."""
    return xp.lexsort(xp.stack([minor, major]))


def _upper_bound(xp: Any, keys: Any, lo: Any, hi: Any, x: Any) -> Any:
    """Per query ``i``, the first position in ``keys[lo[i]:hi[i]]`` (sorted) holding a value
    above ``x[i]`` (``hi[i]`` where none): a binary search per query, every query's step
    in one pass."""
    lo, hi = lo.copy(), hi.copy()
    if lo.size == 0 or keys.size == 0:
        return lo
    span = int((hi - lo).max())
    last = keys.size - 1
    for _ in range(max(1, span).bit_length()):
        open_ = lo < hi
        mid = (lo + hi) // 2
        go = keys[xp.minimum(mid, last)] <= x
        lo = xp.where(open_ & go, mid + 1, lo)
        hi = xp.where(open_ & ~go, mid, hi)
    return lo


def _gather_ranges(xp: Any, start: Any, length: Any) -> tuple[Any, Any]:
    """The positions of ranges ``[start[i], start[i] + length[i])`` one after another, and
    which range each came from (DCSM's warp-cooperative copy of many short lists)."""
    offs = xp.cumsum(length)
    total = int(offs[-1]) if offs.size else 0
    idx = xp.arange(total, dtype=xp.int64)
    seg = xp.searchsorted(offs, idx, side="right")
    first = offs - length
    return start[seg] + (idx - first[seg]), seg


def _rank_in_runs(xp: Any, keys: Any) -> Any:
    """For sorted ``keys``: each element's position within its run of equal keys."""
    return xp.arange(keys.size, dtype=xp.int64) - xp.searchsorted(keys, keys, side="left")


class _Rows:
    """One adjacency direction: the entry pool and the version table."""

    def __init__(self, xp: Any, n: int, src: Any, dst: Any) -> None:
        self.xp, self.n = xp, n
        order = _lexsort(xp, dst, src)
        src, dst = src[order], dst[order]
        m = int(dst.size)
        cap = max(16, 2 * m)
        self.nbr = xp.zeros(cap, xp.int64)
        self.ct = xp.zeros(cap, xp.int64)
        self.dt = xp.full(cap, INF, xp.int64)
        self.nbr[:m] = dst
        self.used = m
        counts = xp.bincount(src, minlength=n).astype(xp.int64)
        vcap = max(16, 2 * n)
        self.start = xp.zeros(vcap, xp.int64)
        self.length = xp.zeros(vcap, xp.int64)
        self.ct_min = xp.zeros(vcap, xp.int64)
        self.dt_max = xp.full(vcap, INF, xp.int64)
        self.prev = xp.full(vcap, -1, xp.int64)
        self.start[:n] = xp.cumsum(counts) - counts
        self.length[:n] = counts
        self.nver = n
        self.head = xp.arange(n, dtype=xp.int64)
        self.released = xp.zeros(vcap, bool)
        self.garbage = 0              # entries of released versions
        self.deleted = 0              # entries whose dt was set since the last compaction

    # -------------------------------------------------------------- storage
    def _grow_pool(self, need: int) -> None:
        xp = self.xp
        if need <= self.nbr.size:
            return
        cap = max(need, self.nbr.size + self.nbr.size // 2)
        for name, fill in (("nbr", 0), ("ct", 0), ("dt", INF)):
            old = getattr(self, name)
            new = xp.full(cap, fill, xp.int64)
            new[:self.used] = old[:self.used]
            setattr(self, name, new)

    def _grow_versions(self, need: int) -> None:
        xp = self.xp
        if need <= self.start.size:
            return
        cap = max(need, self.start.size + self.start.size // 2)
        for name, fill, dtype in (("start", 0, xp.int64), ("length", 0, xp.int64),
                                  ("ct_min", 0, xp.int64), ("dt_max", INF, xp.int64),
                                  ("prev", -1, xp.int64), ("released", False, bool)):
            old = getattr(self, name)
            new = xp.full(cap, fill, dtype)
            new[:self.nver] = old[:self.nver]
            setattr(self, name, new)

    # ---------------------------------------------------------------- reads
    def live_entry(self, v: Any, w: Any) -> Any:
        """Per pair, the position of ``v``'s entry of ``w`` with the largest ``ct`` in its
        newest version, or -1; the caller checks ``dt``."""
        xp = self.xp
        h = self.head[v]
        lo = self.start[h]
        hi = lo + self.length[h]
        pos = _upper_bound(xp, self.nbr[:max(self.used, 1)], lo, hi, w) - 1
        ok = (pos >= lo) & (self.nbr[xp.maximum(pos, 0)] == w)
        return xp.where(ok, pos, -1)

    def snapshot(self, t: int, vs: Any) -> tuple[Any, Any]:
        """The rows of vertices ``vs`` (an ``xp`` array) that update ``t`` sees, as a CSR
        (``indptr``, ``indices``; each row sorted): each vertex's version holding ``t``
        found by walking the version chains together, one step a pass (as many passes as
        versions behind the newest), then the ranges gathered and filtered."""
        xp = self.xp
        h = self.head[vs]
        for _ in range(self.nver + 1):
            behind = ~((self.ct_min[h] < t) & (t <= self.dt_max[h]))
            if not bool(behind.any()):
                break
            nxt = self.prev[h]
            if bool((behind & (nxt < 0)).any()):
                raise ValueError(f"time {t} is not held by every version chain (released or "
                                 "not yet made)")
            h = xp.where(behind, nxt, h)
        pos, s = _gather_ranges(xp, self.start[h], self.length[h])
        keep = (self.ct[pos] < t) & (t <= self.dt[pos])
        pos, s = pos[keep], s[keep]
        indptr = xp.zeros(int(vs.size) + 1, xp.int64)
        indptr[1:] = xp.cumsum(xp.bincount(s, minlength=int(vs.size)))
        return indptr, self.nbr[pos]

    # ---------------------------------------------------------------- apply
    def apply(self, vtx: Any, nb: Any, t: Any, op: Any) -> tuple[np.ndarray, np.ndarray]:
        """Apply this direction's items of a checked batch: (vertex, neighbour, time, op).
        Returns the superseded versions and their ``dt_max`` (host arrays, ascending)."""
        xp = self.xp
        if vtx.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        order = _lexsort(xp, t, vtx)
        vtx, nb, t, op = vtx[order], nb[order], t[order], op[order]
        B = int(vtx.size)
        new_seg = xp.ones(B, bool)
        new_seg[1:] = vtx[1:] != vtx[:-1]
        seg_first = xp.flatnonzero(new_seg)
        seg = xp.cumsum(new_seg) - 1
        ins = op > 0
        c = xp.cumsum(ins.astype(xp.int64))
        base = c[seg_first] - ins[seg_first]
        k = c - base[seg]                          # insertions of the vertex up to here
        # deletions before the vertex's first insertion: dt in place, newest version
        early = ~ins & (k == 0)
        if bool(early.any()):
            pos = self.live_entry(vtx[early], nb[early])
            self.dt[pos] = t[early]
            self.deleted += int(pos.size)
        first = ins & (k == 1)                     # the vertex's first insertion
        V, t0 = vtx[first], t[first]
        if V.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        old = self.head[V]
        # the new versions: the newest version's live entries, then the later insertions
        pos, s = _gather_ranges(xp, self.start[old], self.length[old])
        live = self.dt[pos] == INF
        pos, s = pos[live], s[live]
        late = k >= 1
        add = late & ins
        e_v = xp.concatenate([V[s], vtx[add]])
        e_n = xp.concatenate([self.nbr[pos], nb[add]])
        e_ct = xp.concatenate([self.ct[pos], t[add]])
        pk = e_v * self.n + e_n
        o = _lexsort(xp, e_ct, pk)
        e_v, e_n, e_ct, pk = e_v[o], e_n[o], e_ct[o], pk[o]
        e_dt = xp.full(e_v.size, INF, xp.int64)
        # the later deletions: the j-th deletion of an edge ends its j-th entry
        gone = late & ~ins
        if bool(gone.any()):
            d_pk = vtx[gone] * self.n + nb[gone]
            d_t = t[gone]
            o = _lexsort(xp, d_t, d_pk)
            d_pk, d_t = d_pk[o], d_t[o]
            at = xp.searchsorted(pk, d_pk, side="left") + _rank_in_runs(xp, d_pk)
            e_dt[at] = d_t
            self.deleted += int(at.size)
        # append: the new versions' ranges follow V's order (ascending, like e_v)
        counts = (xp.searchsorted(e_v, V, side="right")
                  - xp.searchsorted(e_v, V, side="left"))
        m = int(e_v.size)
        self._grow_pool(self.used + m)
        self.nbr[self.used:self.used + m] = e_n
        self.ct[self.used:self.used + m] = e_ct
        self.dt[self.used:self.used + m] = e_dt
        nv = int(V.size)
        self._grow_versions(self.nver + nv)
        ids = xp.arange(self.nver, self.nver + nv, dtype=xp.int64)
        self.start[ids] = self.used + xp.cumsum(counts) - counts
        self.length[ids] = counts
        self.ct_min[ids] = t0
        self.dt_max[ids] = INF
        self.prev[ids] = old
        self.dt_max[old] = t0                      # update t0 itself still reads the old one
        self.head[V] = ids
        self.used += m
        self.nver += nv
        o = xp.argsort(t0)
        old, t0 = old[o], t0[o]
        return ((old.get(), t0.get()) if xp is not np else (old, t0))

    # ------------------------------------------------------------------- GC
    def release(self, versions: np.ndarray) -> None:
        xp = self.xp
        if versions.size == 0:
            return
        ids = xp.asarray(versions)
        self.released[ids] = True
        self.garbage += int(self.length[ids].sum())

    def compact(self, upto: int, remap: Any) -> Any:
        """Drop released versions and the newest versions' entries deleted at or before
        ``upto``; renumber the versions. ``remap``: called with the old-to-new version
        map (host array; -1 where released) for the caller's queue."""
        xp = self.xp
        nver = self.nver
        keep_v = ~self.released[:nver]
        is_head = xp.zeros(nver, bool)
        is_head[self.head] = True
        kept = xp.flatnonzero(keep_v)
        pos, s = _gather_ranges(xp, self.start[kept], self.length[kept])
        # a non-newest version is read whole by its unfinished readers; a newest one
        # keeps what some update after ``upto`` still sees
        keep_e = ~is_head[kept][s] | (self.dt[pos] > upto)
        pos, s = pos[keep_e], s[keep_e]
        counts = xp.bincount(s, minlength=kept.size).astype(xp.int64)
        m = int(pos.size)
        cap = max(16, m + m // HEADROOM)
        for name, fill in (("nbr", 0), ("ct", 0), ("dt", INF)):
            new = xp.full(cap, fill, xp.int64)
            new[:m] = getattr(self, name)[pos]
            setattr(self, name, new)
        self.used = m
        new_id = xp.full(nver, -1, xp.int64)
        new_id[kept] = xp.arange(kept.size, dtype=xp.int64)
        nk = int(kept.size)
        vcap = max(16, nk + nk // HEADROOM)
        prev = self.prev[kept]
        prev = xp.where(prev >= 0, new_id[xp.maximum(prev, 0)], -1)
        cols = {"start": xp.cumsum(counts) - counts, "length": counts,
                "ct_min": self.ct_min[kept], "dt_max": self.dt_max[kept], "prev": prev}
        for name, vals in cols.items():
            fill = INF if name == "dt_max" else (-1 if name == "prev" else 0)
            new = xp.full(vcap, fill, xp.int64)
            new[:nk] = vals
            setattr(self, name, new)
        self.released = xp.zeros(vcap, bool)
        self.head = new_id[self.head]
        self.nver = nk
        self.garbage = 0
        # entries deleted but still read are kept, and not counted again: the next
        # compaction drops them once the pointer has passed them
        self.deleted = 0
        remap(new_id.get() if xp is not np else new_id)

    def held_versions(self) -> int:
        return int((~self.released[:self.nver]).sum())

    def held_entries(self) -> int:
        keep = ~self.released[:self.nver]
        return int(self.length[:self.nver][keep].sum())


class ArrayMultiVersionGraph:
    """A multi-version graph in flat arrays, updated by array passes (numpy or CuPy).

    Same interface and semantics as :class:`warpmatch.stream.mvg.MultiVersionGraph`, plus
    :meth:`compact`; ``entries()`` counts the pool's held ranges, so it equals the
    reference's after a compaction (:meth:`finish` compacts once garbage passes
    :data:`COMPACT_FRACTION` of the pool, :data:`DRAINED_FRACTION` when drained).

    Parameters
    ----------
    n : int
        Vertices ``0..n-1``.
    src, dst : array_like
        The edges of ``G_0`` (each once).
    directed : bool, optional
        Keep out- and in-neighbours apart.
    xp : module, optional
        ``numpy`` or ``cupy`` (the arrays' home). The default is CuPy where it imports and
        finds a GPU, else numpy.

    Examples
    --------
    >>> g = ArrayMultiVersionGraph(3, [0], [1], xp=np)
    >>> g.apply([1, 0], [2, 1], [1, -1])         # time 1: insert 1-2; time 2: delete 0-1
    >>> g.neighbors(1, 1).tolist(), g.neighbors(1, 2).tolist(), g.neighbors(1, 3).tolist()
    ([0], [0, 2], [2])
    >>> g.finish([1, 2]); g.versions()
    3
    """

    def __init__(self, n: int, src: Any, dst: Any, directed: bool = False,
                 xp: Any = None) -> None:
        if xp is None:
            xp = _default_xp()
        self.xp = xp
        src = np.asarray(src, np.int64).reshape(-1)
        dst = np.asarray(dst, np.int64).reshape(-1)
        if src.shape != dst.shape:
            raise ValueError("src and dst must have the same length")
        if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
            raise GraphError(f"G_0 names a vertex outside 0..{n - 1}")
        a, b = (src, dst) if directed else (np.minimum(src, dst), np.maximum(src, dst))
        if np.any(src == dst) or np.unique(a * n + b).size != src.size:
            raise GraphError("G_0 has a repeated edge or a self-loop")
        self.n, self.directed = int(n), bool(directed)
        self.time = 0
        s, d = xp.asarray(src), xp.asarray(dst)
        if directed:
            self._out, self._in = _Rows(xp, n, s, d), _Rows(xp, n, d, s)
        else:
            self._out = self._in = _Rows(xp, n, xp.concatenate([s, d]),
                                         xp.concatenate([d, s]))
        # per direction, superseded versions by dt_max: (dt_max, version ids) per batch
        self._deletable: list[deque] = [deque() for _ in self._rows()]
        self._gc = FinishPointer()
        #: this store's :data:`COMPACT_FRACTION` (negative: compact at every finish)
        self.compact_fraction = COMPACT_FRACTION

    def _rows(self) -> list[_Rows]:
        return [self._out] if self._in is self._out else [self._out, self._in]

    # ----------------------------------------------------------------- update
    def _check(self, src: Any, dst: Any, op: Any) -> None:
        """Raise for the batch's first bad update (nothing applied yet)."""
        xp, n, B = self.xp, self.n, int(src.size)
        bad = (src < 0) | (src >= n) | (dst < 0) | (dst >= n) | (src == dst) | (op == 0)
        a, b = (src, dst) if self.directed else (xp.minimum(src, dst), xp.maximum(src, dst))
        a_ok, b_ok = xp.clip(a, 0, n - 1), xp.clip(b, 0, n - 1)
        pos = self._out.live_entry(a_ok, b_ok)
        was_live = (pos >= 0) & (self._out.dt[xp.maximum(pos, 0)] == INF)
        # an edge's events alternate from its state before the batch
        pk = a_ok * n + b_ok
        order = _lexsort(xp, xp.arange(B, dtype=xp.int64), pk)
        j = xp.empty(B, xp.int64)
        j[order] = _rank_in_runs(xp, pk[order])
        state = was_live ^ (j % 2 == 1)
        bad |= (op > 0) == state
        if not bool(bad.any()):
            return
        i = int(xp.flatnonzero(bad)[0])
        u, v, o = int(src[i]), int(dst[i]), int(op[i])
        where = f"update {i} of the batch (time {self.time + i + 1})"
        if not (0 <= u < n and 0 <= v < n) or u == v or o == 0:
            raise InputFormatError("<batch>", None, f"{where}: a self-loop, a zero op or an "
                                   "unknown vertex", f"{u} {v} {o:+d}")
        what = "inserts a live edge" if o > 0 else "deletes a missing edge"
        raise InputFormatError("<batch>", None, f"{where}: {what}", f"{u} {v} {o:+d}")

    def apply(self, src: Any, dst: Any, op: Any) -> None:
        """Apply a batch: its updates get times ``time + 1, time + 2, ...`` in order.

        Raises
        ------
        InputFormatError
            An update inserts a live edge, deletes a missing one, is a self-loop or names a
            vertex outside the graph (nothing is applied).
        """
        xp = self.xp
        src, dst, op = (_as_int64(xp, x) for x in (src, dst, op))
        B = int(src.size)
        if B == 0:
            return
        self._check(src, dst, op)
        t = xp.arange(self.time + 1, self.time + B + 1, dtype=xp.int64)
        if self.directed:
            made = [self._out.apply(src, dst, t, op), self._in.apply(dst, src, t, op)]
        else:
            made = [self._out.apply(xp.concatenate([src, dst]), xp.concatenate([dst, src]),
                                    xp.concatenate([t, t]), xp.concatenate([op, op]))]
        for q, (ids, dtm) in zip(self._deletable, made):
            if ids.size:
                q.append((dtm, ids))
        self.time += B

    # ------------------------------------------------------------------- read
    def neighbors(self, v: int, t: int, direction: str = "out") -> np.ndarray:
        """The neighbours of ``v`` that the matching of update ``t`` sees (a host array,
        sorted); as :meth:`warpmatch.stream.mvg.MultiVersionGraph.neighbors`."""
        self._gc.check_readable(t, self.time)
        rows = self._out if direction == "out" else self._in
        _, idx = rows.snapshot(int(t), _as_int64(self.xp, [int(v)]))
        return np.asarray(idx.get() if self.xp is not np else idx)

    def snapshot(self, t: int, vertices: Any = None, direction: str = "out"
                 ) -> tuple[Any, Any]:
        """The graph that the matching of update ``t`` sees, as a CSR of ``xp`` arrays
        (``indptr``, ``indices``; rows sorted), built on the store's device in a few passes:
        what a matcher reading the store would take instead of :meth:`neighbors`.

        Parameters
        ----------
        t : int
            A readable time, as in :meth:`neighbors`.
        vertices : array_like, optional
            The rows wanted, in this order (all vertices by default).
        direction : str
            ``"out"`` or ``"in"`` (directed graphs).
        """
        self._gc.check_readable(t, self.time)
        xp = self.xp
        vs = (xp.arange(self.n, dtype=xp.int64) if vertices is None
              else _as_int64(xp, vertices))
        rows = self._out if direction == "out" else self._in
        return rows.snapshot(int(t), vs)

    # --------------------------------------------------------------------- GC
    def finish(self, times: Any) -> None:
        """Mark updates as matched (any order); versions no unfinished update can read are
        released, and the pool is compacted once its garbage passes
        :data:`COMPACT_FRACTION` (:data:`DRAINED_FRACTION` once every update applied has
        finished)."""
        P = self._gc.finish(times, self.time)
        for rows, q in zip(self._rows(), self._deletable):
            while q and q[0][0][0] <= P:
                dtm, ids = q[0]
                cut = int(np.searchsorted(dtm, P, side="right"))
                rows.release(ids[:cut])
                if cut == ids.size:
                    q.popleft()
                else:
                    q[0] = (dtm[cut:], ids[cut:])
            frac = (self.compact_fraction if P < self.time
                    else min(self.compact_fraction, DRAINED_FRACTION))
            if rows.garbage + rows.deleted > frac * max(rows.used, 1):
                self._compact(rows, q, P)

    def compact(self) -> None:
        """Compact every direction's pool now (what :meth:`finish` does past its garbage
        threshold)."""
        for rows, q in zip(self._rows(), self._deletable):
            self._compact(rows, q, self._gc.value)

    def _compact(self, rows: _Rows, q: deque, upto: int) -> None:
        def remap(new_id: np.ndarray) -> None:
            for i, (dtm, ids) in enumerate(q):
                q[i] = (dtm, new_id[ids])
        rows.compact(upto, remap)

    @property
    def finished(self) -> int:
        """The GC pointer: every update up to this time has finished."""
        return self._gc.value

    def versions(self) -> int:
        """Versions held, over all vertices (and both directions)."""
        return sum(r.held_versions() for r in self._rows())

    def entries(self) -> int:
        """Entries held over all versions (the pool's held ranges)."""
        return sum(r.held_entries() for r in self._rows())

    def pool_bytes(self) -> int:
        """Bytes of the entry pools and version tables as allocated."""
        return sum(int(r.nbr.nbytes + r.ct.nbytes + r.dt.nbytes + r.start.nbytes * 5
                       + r.released.nbytes + r.head.nbytes) for r in self._rows())


def _as_int64(xp: Any, x: Any) -> Any:
    """``x`` as a flat int64 array of ``xp`` (from a list, a numpy or a device array)."""
    if hasattr(x, "__cuda_array_interface__"):
        return xp.asarray(x, dtype=xp.int64).reshape(-1)
    return xp.asarray(np.asarray(x, np.int64).reshape(-1))


def _default_xp() -> Any:
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:               # pragma: no cover - depends on the machine
        pass
    return np
