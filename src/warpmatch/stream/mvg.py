"""Multi-version graph, the host reference of DCSM's store (§1.4 MVG, §1.5.1 reads, §1.6 GC).

Map: :class:`MultiVersionGraph` (the graph: :meth:`~MultiVersionGraph.apply` a batch,
:meth:`~MultiVersionGraph.neighbors` as an update sees them, :meth:`~MultiVersionGraph.finish`
updates so their versions can go) < :class:`_Rows` (one adjacency direction: per vertex a list
of neighbour-array versions, oldest first) < :class:`_Version` (one neighbour array); and
:class:`FinishPointer` (the GC pointer, shared with :mod:`warpmatch.stream.mvg_device`).

Time is the stream's sequence number: ``G_0`` is time 0, the ``k``-th update of the stream
(from 1) is time ``k``. An entry (edge) lives over ``(ct, dt]``; a version over
``(ct_min, dt_max]``. The matching of update ``T`` sees an entry iff ``ct < T <= dt`` (DCSM
Property 1-3), in the one version of the vertex whose lifetime holds ``T``: the state
before update ``T``, however many later batches were applied since. This is the
sequential semantics of every engine here (DESIGN.md: update ``T`` is matched against
``S_{T-1}``), so a matcher can read batch ``k`` while batch ``k + 1`` is applied.

Applying a batch (§1.4.2): per vertex, the batch's entries in time order are cut at the
first insertion. The deletions before it set ``dt`` in place in the vertex's newest version
(readers of earlier times still see the entry); from the first insertion on, a new version
is made: a copy of the newest version's live entries, then the rest of the batch's
insertions (``ct`` = their time) and deletions (``dt`` = their time) in order. The old
version's ``dt_max`` becomes that first insertion's time, and it becomes deletable.

Garbage collection (§1.6): a deletable version can go once every update of its lifetime
has finished matching. :meth:`MultiVersionGraph.finish` marks updates in any order; the
GC pointer ``P`` is the largest time such that all updates up to it are finished, and the
versions with ``dt_max <= P`` are released. They become deletable in the order of their
``dt_max`` (batches are applied in order), so a FIFO queue replaces DCSM's GC graph. The
entries deleted at or before ``P`` are also dropped from the newest versions, so that a
drained store holds the live edges only.

How it differs from DCSM:

- Host memory, one numpy array triple (``nbr``, ``ct``, ``dt``) per version, not GPU slabs
  of 32 entries; the batch is applied by a loop over its vertices (the reference for a GPU
  updater and for tests, not a fast path).
- Every update is checked before anything changes (an insertion of a live edge, a deletion
  of a missing one, a self-loop, an unknown vertex raise
  :class:`~warpmatch.errors.InputFormatError`).
- Dead entries of a newest version are dropped once ``P`` passes them (DCSM keeps them
  until the vertex's next version): a vertex that only loses edges does not keep them.
- The engines do not read this store yet: matching still runs batch after batch on
  :class:`~warpmatch.stream.dynamic.DynamicGraph` (issue 17's pipelined executor is not built).
  :mod:`warpmatch.stream.mvg_device` holds the same store in flat arrays, updated on the
  GPU; this one is the reference it is tested against.
"""
from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from ..errors import GraphError, InputFormatError

__all__ = ["MultiVersionGraph", "FinishPointer"]

#: "never deleted" (``m`` in DCSM's figures)
INF = np.iinfo(np.int64).max


class _Version:
    """One neighbour array of a vertex: entries sorted by (neighbour, ct), lifetime
    ``(ct_min, dt_max]``."""

    __slots__ = ("ct_min", "dt_max", "nbr", "ct", "dt")

    def __init__(self, ct_min: int, nbr: np.ndarray, ct: np.ndarray, dt: np.ndarray) -> None:
        order = np.lexsort((ct, nbr))
        self.ct_min, self.dt_max = ct_min, INF
        self.nbr, self.ct, self.dt = nbr[order], ct[order], dt[order]

    def live(self, v: int) -> int:
        """Index of the entry of neighbour ``v`` never deleted so far (-1: none)."""
        lo, hi = np.searchsorted(self.nbr, [v, v + 1])
        for i in range(lo, hi):
            if self.dt[i] == INF:
                return int(i)
        return -1


class _Rows:
    """One adjacency direction of a multi-version graph: versions per vertex, oldest first."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray) -> None:
        order = np.argsort(src, kind="stable")
        src, dst = src[order], dst[order]
        bounds = np.searchsorted(src, np.arange(n + 1))
        self.versions: list[list[_Version]] = []
        self.dirty: set[int] = set()        # vertices whose newest version has dead entries
        for v in range(n):
            nb = dst[bounds[v]:bounds[v + 1]].astype(np.int64)
            self.versions.append([_Version(0, nb, np.zeros(nb.size, np.int64),
                                           np.full(nb.size, INF, np.int64))])

    def newest(self, v: int) -> _Version:
        return self.versions[v][-1]

    def visible(self, v: int, t: int) -> np.ndarray:
        """Neighbours of ``v`` that update ``t`` sees (sorted)."""
        for ver in self.versions[v]:
            if ver.ct_min < t <= ver.dt_max:
                keep = (ver.ct < t) & (t <= ver.dt)
                return ver.nbr[keep]
        raise ValueError(f"no version of vertex {v} holds time {t} (released or not yet made)")

    def apply(self, v: int, items: list[tuple[int, int, int]], deletable: list) -> None:
        """Apply vertex ``v``'s part of a batch: ``(time, neighbour, op)`` in time order;
        the version it supersedes (if any) goes to ``deletable`` as ``(dt_max, self, v)``."""
        cur = self.newest(v)
        first = next((k for k, (_, _, op) in enumerate(items) if op > 0), len(items))
        for t, w, _ in items[:first]:           # deletions before the first insertion
            i = cur.live(w)
            assert i >= 0, (v, w, t)            # (the batch was checked against the edges)
            cur.dt[i] = t                       # in place: earlier readers still see it
        if first:
            self.dirty.add(v)
        if first == len(items):
            return
        t0 = items[first][0]
        keep = cur.dt == INF
        nbr, ct, dt = list(cur.nbr[keep]), list(cur.ct[keep]), list(cur.dt[keep])
        for t, w, op in items[first:]:
            if op > 0:
                nbr.append(w)
                ct.append(t)
                dt.append(INF)
            else:                               # the entry is live in this new version
                i = next(i for i in range(len(nbr)) if nbr[i] == w and dt[i] == INF)
                dt[i] = t
        cur.dt_max = t0                          # update t0 itself still reads the old one
        deletable.append((t0, self, v))
        self.versions[v].append(_Version(t0, np.array(nbr, np.int64), np.array(ct, np.int64),
                                         np.array(dt, np.int64)))
        if min(dt, default=INF) < INF:
            self.dirty.add(v)
        else:
            self.dirty.discard(v)

    def compact(self, upto: int) -> None:
        """Drop from each newest version the entries deleted at or before ``upto`` (no
        update after ``upto`` sees them); the older versions go whole (GC)."""
        for v in list(self.dirty):
            ver = self.newest(v)
            gone = ver.dt <= upto
            if gone.any():
                keep = ~gone
                ver.nbr, ver.ct, ver.dt = ver.nbr[keep], ver.ct[keep], ver.dt[keep]
            if not (ver.dt < INF).any():
                self.dirty.discard(v)


class FinishPointer:
    """DCSM's GC pointer (§1.6): the largest time ``P`` such that every update up to ``P``
    has finished, from updates finished in any order; and which times are readable."""

    def __init__(self) -> None:
        self.value = 0                       # every update up to this time has finished
        self._done: set[int] = set()         # finished updates beyond the pointer

    def finish(self, times: Any, applied: int) -> int:
        """Mark ``times`` (each in ``1..applied``) finished; the pointer after."""
        for t in np.atleast_1d(np.asarray(times, np.int64)).tolist():
            if not 0 < t <= applied:
                raise ValueError(f"time {t} is not an applied update (1..{applied})")
            if t > self.value:
                self._done.add(t)
        while self.value + 1 in self._done:
            self.value += 1
            self._done.discard(self.value)
        return self.value

    def check_readable(self, t: int, applied: int) -> None:
        """Raise ``ValueError`` unless update ``t`` may still read the store: not finished,
        and at most one past the last applied update."""
        if not self.value < t <= applied + 1:
            raise ValueError(f"time {t} is not readable: updates up to {self.value} are "
                             f"finished and {applied} are applied")


class MultiVersionGraph:
    """A graph whose adjacency keeps the versions that unfinished updates still read.

    Parameters
    ----------
    n : int
        Vertices ``0..n-1``.
    src, dst : array_like
        The edges of ``G_0`` (each once; an undirected edge is stored in both rows).
    directed : bool, optional
        Keep out- and in-neighbours apart. The default is ``False``.

    Examples
    --------
    >>> g = MultiVersionGraph(3, [0], [1])
    >>> g.apply([1, 0], [2, 1], [1, -1])         # time 1: insert 1-2; time 2: delete 0-1
    >>> g.neighbors(1, 1).tolist(), g.neighbors(1, 2).tolist(), g.neighbors(1, 3).tolist()
    ([0], [0, 2], [2])
    >>> g.finish([1, 2]); g.versions()           # all read: one version per vertex
    3
    """

    def __init__(self, n: int, src: Any, dst: Any, directed: bool = False) -> None:
        src = np.asarray(src, np.int64)
        dst = np.asarray(dst, np.int64)
        if src.shape != dst.shape:
            raise ValueError("src and dst must have the same length")
        if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
            raise GraphError(f"G_0 names a vertex outside 0..{n - 1}")
        self.n, self.directed = int(n), bool(directed)
        self.time = 0                        # the last update applied
        self._live = {self._key(int(a), int(b)) for a, b in zip(src, dst)}
        if len(self._live) != src.size or np.any(src == dst):
            raise GraphError("G_0 has a repeated edge or a self-loop")
        if directed:
            self._out, self._in = _Rows(n, src, dst), _Rows(n, dst, src)
        else:
            both = _Rows(n, np.concatenate([src, dst]), np.concatenate([dst, src]))
            self._out = self._in = both
        self._deletable: deque = deque()    # (dt_max, rows, vertex), dt_max ascending
        self._gc = FinishPointer()

    def _key(self, a: int, b: int) -> tuple[int, int]:
        return (a, b) if self.directed or a < b else (b, a)

    # ----------------------------------------------------------------- update
    def apply(self, src: Any, dst: Any, op: Any) -> None:
        """Apply a batch: its updates get times ``time + 1, time + 2, ...`` in order.

        Raises
        ------
        InputFormatError
            An update inserts a live edge, deletes a missing one, is a self-loop or
            names a vertex outside the graph (nothing is applied).
        """
        src, dst, op = (np.asarray(x, np.int64) for x in (src, dst, op))
        state: dict[tuple[int, int], bool] = {}   # the edges the batch changes: live after?
        for i, (a, b, o) in enumerate(zip(src.tolist(), dst.tolist(), op.tolist())):
            where = f"update {i} of the batch (time {self.time + i + 1})"
            if not (0 <= a < self.n and 0 <= b < self.n) or a == b or o == 0:
                raise InputFormatError("<batch>", None, f"{where}: a self-loop, a zero op or "
                                       "an unknown vertex", f"{a} {b} {o:+d}")
            k = self._key(a, b)
            if (o > 0) == state.get(k, k in self._live):
                what = "inserts a live edge" if o > 0 else "deletes a missing edge"
                raise InputFormatError("<batch>", None, f"{where}: {what}", f"{a} {b} {o:+d}")
            state[k] = o > 0
        out: dict[int, list] = {}
        inn: dict[int, list] = {}
        for i, (a, b, o) in enumerate(zip(src.tolist(), dst.tolist(), op.tolist())):
            t = self.time + i + 1
            out.setdefault(a, []).append((t, b, o))
            (inn if self.directed else out).setdefault(b, []).append((t, a, o))
        made: list = []
        for v, items in out.items():
            self._out.apply(v, items, made)
        for v, items in inn.items():
            self._in.apply(v, items, made)
        # by dt_max, so that the queue stays sorted: a later batch's are all later
        self._deletable.extend(sorted(made, key=lambda x: x[0]))
        for k, now in state.items():
            if now:
                self._live.add(k)
            else:
                self._live.discard(k)
        self.time += int(src.size)

    # ------------------------------------------------------------------- read
    def neighbors(self, v: int, t: int, direction: str = "out") -> np.ndarray:
        """The neighbours of ``v`` that the matching of update ``t`` sees: the state after
        updates ``1..t-1`` (``t = time + 1``: everything applied so far). Sorted.

        Raises
        ------
        ValueError
            ``t`` is finished (its versions may be gone) or beyond ``time + 1``.
        """
        self._gc.check_readable(t, self.time)
        rows = self._out if direction == "out" else self._in
        return rows.visible(int(v), int(t))

    # --------------------------------------------------------------------- GC
    def finish(self, times: Any) -> None:
        """Mark updates as matched (any order); versions no unfinished update can read are
        released."""
        pointer = self._gc.finish(times, self.time)
        dq = self._deletable
        while dq and dq[0][0] <= pointer:
            _, rows, v = dq.popleft()
            rows.versions[v].pop(0)          # a vertex's versions go oldest first
        for rows in self._rows():
            rows.compact(pointer)

    def _rows(self) -> list[_Rows]:
        return [self._out] if self._in is self._out else [self._out, self._in]

    @property
    def finished(self) -> int:
        """The GC pointer: every update up to this time has finished."""
        return self._gc.value

    def versions(self) -> int:
        """Neighbour-array versions held, over all vertices (and both directions)."""
        return sum(len(vs) for r in self._rows() for vs in r.versions)

    def entries(self) -> int:
        """Entries held over all versions (the store's size, in edges). Once every
        update has finished: each live edge twice (both rows, or out and in), nothing
        else."""
        return sum(int(x.nbr.size) for r in self._rows() for vs in r.versions for x in vs)
