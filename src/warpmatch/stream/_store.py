"""Storage of :class:`~warpmatch.stream.dynamic.DynamicGraph`: one direction of a gapped
sorted CSR, and a batch's events grouped by row.

Map: the allocation helpers (:func:`_alloc`, :func:`_edge_headroom`, the parallel
rule :func:`_parallel`) < :class:`_Store` (rows with slack: build, compaction,
growth, the overlay's reused buffers) < :class:`_Events` (a batch's updates per
touched row, sorted by ``(row, neighbour, update)``). The numba kernels are in
:mod:`warpmatch.stream._dyn_kernels`; the storage scheme (GCSM §V-A, and how it
differs) is described in :mod:`warpmatch.stream.dynamic`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import _dyn_kernels as K

Allocator = Callable[[int, np.dtype], np.ndarray]

#: entries a per-batch kernel (overlay, apply) must touch to run in parallel
PARALLEL_WORK = 1 << 18
#: smallest capacity a relocated row gets (a row of capacity 0 that receives an edge)
MIN_ROW_CAP = 2
_I64 = np.dtype(np.int64)
_I32 = np.dtype(np.int32)


def _alloc(allocator: Allocator, count: int, dtype: Any) -> np.ndarray:
    arr = allocator(int(count), np.dtype(dtype))
    if arr.shape != (int(count),) or arr.dtype != np.dtype(dtype):
        raise ValueError(f"allocator returned {arr.dtype}{arr.shape} "
                         f"for {count} x {np.dtype(dtype)}")
    return arr


def _threads() -> int:
    import numba
    return int(numba.get_num_threads())


def _parallel(work: int) -> bool:
    """Whether a per-batch kernel over ``work`` entries runs in a parallel region: a
    region costs tens of µs to start and waits for every worker, which stalls while
    another process holds a core, so small batches run on one thread."""
    return work >= PARALLEL_WORK and _threads() > 1


def _edge_headroom(used: int) -> int:
    """Free tail kept after a (re)build, so the first relocations do not regrow the array."""
    return max(1024, used // 8)


# ======================================================================= store
class _Store:
    """One direction of the gapped sorted CSR.

    Row ``v`` is ``nbr[start[v] : start[v] + deg[v]]`` (sorted, labels in
    ``elab`` when ``has_elab``) inside a region of ``cap[v]`` slots. ``used`` is
    the end of the allocated regions; ``live`` the sum of ``cap`` (so
    ``used - live`` slots are holes left by relocated rows). Rows ``>= n`` have
    ``deg = cap = 0``. ``entries`` is the sum of ``deg``.
    """

    def __init__(self, allocator: Allocator, has_elab: bool) -> None:
        self.allocator = allocator
        self.has_elab = has_elab
        self.start = np.zeros(0, np.int64)
        self.deg = np.zeros(0, np.int32)
        self.cap = np.zeros(0, np.int64)
        self.nbr = np.zeros(0, np.int32)
        self.elab = np.zeros(0, np.int32)
        self.used = 0
        self.live = 0
        self.entries = 0
        self._oidx: np.ndarray | None = None
        self._touched = np.zeros(0, np.int64)
        self._ovl: dict[str, np.ndarray] = {}

    # ---------------------------------------------------------------- build
    def build(self, deg: np.ndarray, n_cap: int, slack: float,
              fill: Callable[[np.ndarray, np.ndarray, np.ndarray], None]) -> None:
        """(Re)build compactly: row ``v`` gets ``deg + ceil(deg * slack)`` slots.

        ``fill(start, nbr, elab)`` copies the rows into the new arrays.
        """
        n = deg.shape[0]
        cap = deg.astype(np.int64) + np.ceil(deg * slack).astype(np.int64)
        start = np.zeros(n, np.int64)
        if n > 1:
            np.cumsum(cap[:-1], out=start[1:])
        used = int(cap.sum())
        e_cap = used + _edge_headroom(used)
        a = self.allocator
        new_start = _alloc(a, n_cap, _I64)
        new_deg = _alloc(a, n_cap, _I32)
        new_cap = _alloc(a, n_cap, _I64)
        new_start[:n] = start
        new_start[n:] = 0
        new_deg[:n] = deg
        new_deg[n:] = 0
        new_cap[:n] = cap
        new_cap[n:] = 0
        new_nbr = _alloc(a, e_cap, _I32)
        new_elab = _alloc(a, e_cap if self.has_elab else 0, _I32)
        fill(new_start[:n], new_nbr, new_elab)
        self.start, self.deg, self.cap = new_start, new_deg, new_cap
        self.nbr, self.elab = new_nbr, new_elab
        self.used = self.live = used
        self.entries = int(deg.sum(dtype=np.int64))
        self._oidx = None
        self._touched = np.zeros(0, np.int64)

    def build_from_csr(self, indptr: np.ndarray, indices: np.ndarray,
                       labels: np.ndarray | None, n_cap: int, slack: float) -> None:
        n = indptr.shape[0] - 1
        deg = np.diff(indptr).astype(np.int32)
        src_nbr = np.ascontiguousarray(indices, dtype=np.int32)
        src_lab = (np.ascontiguousarray(labels, dtype=np.int32) if self.has_elab
                   else np.zeros(0, np.int32))
        src_start = np.ascontiguousarray(indptr[:-1], dtype=np.int64)

        def fill(start: np.ndarray, nbr: np.ndarray, elab: np.ndarray) -> None:
            K.copy_rows(src_start, src_nbr, src_lab, deg, start, nbr, elab, self.has_elab)
        self.build(deg[:n], n_cap, slack, fill)

    def compact(self, n: int, slack: float) -> None:
        """Rebuild with fresh slack, dropping the holes (new arrays)."""
        old_start, old_nbr, old_elab = self.start, self.nbr, self.elab
        deg = self.deg[:n].copy()

        def fill(start: np.ndarray, nbr: np.ndarray, elab: np.ndarray) -> None:
            K.copy_rows(old_start[:n], old_nbr, old_elab, deg, start, nbr, elab, self.has_elab)
        self.build(deg, self.start.shape[0], slack, fill)

    # ---------------------------------------------------------------- growth
    def grow_vertices(self, n_cap: int) -> None:
        """Vertex arrays of capacity ``n_cap`` (new rows empty); new objects."""
        old = self.start.shape[0]
        a = self.allocator
        for name, dt in (("start", _I64), ("deg", _I32), ("cap", _I64)):
            new = _alloc(a, n_cap, dt)
            new[:old] = getattr(self, name)
            new[old:] = 0
            setattr(self, name, new)
        self._oidx = None
        self._touched = np.zeros(0, np.int64)

    def ensure_edges(self, extra: int) -> bool:
        """Room for ``extra`` more slots after ``used``; True if the arrays were replaced."""
        need = self.used + extra
        if need <= self.nbr.shape[0]:
            return False
        e_cap = max(need, int(self.nbr.shape[0] * 1.5) + 1024)
        a = self.allocator
        new_nbr = _alloc(a, e_cap, _I32)
        new_nbr[:self.used] = self.nbr[:self.used]
        self.nbr = new_nbr
        if self.has_elab:
            new_elab = _alloc(a, e_cap, _I32)
            new_elab[:self.used] = self.elab[:self.used]
            self.elab = new_elab
        return True

    # ------------------------------------------------------------------ rows
    def row(self, v: int) -> slice:
        s = int(self.start[v])
        return slice(s, s + int(self.deg[v]))

    def find(self, u: int, v: int) -> int:
        return int(K.row_find(self.start, self.deg, self.nbr, np.int64(u), np.int64(v)))

    def overlay_buffer(self, name: str, count: int) -> np.ndarray:
        """A reused int32 buffer of ``count`` entries for the overlay array ``name``.

        From the store's allocator (pinned memory for the GPU engine, which then
        copies the overlay to the device without staging it), grown
        geometrically; the previous view's overlay is overwritten, as views are
        valid only until the next one.
        """
        buf = self._ovl.get(name)
        if buf is None or buf.shape[0] < count:
            size = max(count, int(1.5 * (0 if buf is None else buf.shape[0])), 1024)
            buf = self._ovl[name] = _alloc(self.allocator, size, _I32)
        return buf[:count]

    def oidx(self, n: int, rows: np.ndarray) -> np.ndarray:
        """``o_idx`` of length ``n``: ``-1`` except ``rows[r] -> r``.

        A persistent buffer: only the previous view's rows are reset, so a view
        costs O(touched rows), not O(n).
        """
        size = self.start.shape[0]
        if self._oidx is None or self._oidx.shape[0] < size:
            self._oidx = np.full(size, -1, np.int32)
        else:
            self._oidx[self._touched] = -1
        self._oidx[rows] = np.arange(rows.shape[0], dtype=np.int32)
        self._touched = rows
        return self._oidx[:n]


@dataclass
class _Events:
    """One store's events of a batch, sorted by ``(row, nbr, update)``."""

    rows: np.ndarray    # int64[R] touched rows, ascending
    ptr: np.ndarray     # int64[R+1]
    nbr: np.ndarray     # int32[E]
    upd: np.ndarray     # int32[E]
    op: np.ndarray      # int8[E]
    lab: np.ndarray     # int32[E]

    @classmethod
    def build(cls, row: np.ndarray, nbr: np.ndarray, upd: np.ndarray, op: np.ndarray,
              lab: np.ndarray, n: int) -> "_Events":
        # inputs are in update order, so a stable sort by (row, nbr) keeps it inside a pair
        key = row.astype(np.int64) * np.int64(max(n, 1)) + nbr.astype(np.int64)
        order = np.argsort(key, kind="stable")
        row_s = row[order].astype(np.int64)
        if row_s.size:
            cut = np.flatnonzero(np.diff(row_s)) + 1
            rows = row_s[np.concatenate(([0], cut))]
            ptr = np.concatenate(([0], cut, [row_s.size])).astype(np.int64)
        else:
            rows = np.zeros(0, np.int64)
            ptr = np.zeros(1, np.int64)
        return cls(rows, ptr, nbr[order].astype(np.int32), upd[order].astype(np.int32),
                   op[order].astype(np.int8), lab[order].astype(np.int32))

    def per_row_sum(self, values: np.ndarray) -> np.ndarray:
        if self.rows.size == 0:
            return np.zeros(0, np.int64)
        return np.add.reduceat(values.astype(np.int64), self.ptr[:-1])
