"""The GPU cache of hot adjacency rows, packed in DCSR (GCSM §V-B).

Per batch, the engine scores vertices by a *policy* — GCSM's random-walk
frequency estimate (:mod:`.walk`), the degree-based "Naive" baseline of its
§VI-A, nothing (zero-copy only) or everything (the whole storage on the
device) — and copies the storage rows of the best-scoring vertices, within a
byte budget, to device memory in *doubly compressed sparse row* form: the
sorted row ids (``rowidx``), one offset per row (``rowptr``) and the
concatenated neighbours (``colidx``) and edge labels, allocated as one block
and sent with one DMA copy (§V-B).

What differs from the paper: GCSM's ``rowptr`` holds two offsets per row
(original list, appended new neighbours) because its cached rows include the
batch's unsorted appends and negative deletion marks. Our storage rows are
always sorted and hold state ``S_0`` only; a batch's changes live in the
overlay, which is copied to the device whole, so the cache never holds a
touched row and needs one offset per row. The kernel finds a row through a
device-side slot map (``slot[v]`` = position in ``rowidx`` or -1) instead of a
binary search on ``rowidx``: one load instead of ``log2(rows)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

__all__ = ["POLICIES", "Dcsr", "select_rows", "pack_rows", "row_bytes", "parallel_copy"]

#: cache policies of :class:`~warpmatch.stream.gpu.GpuDeltaEngine`
POLICIES = ("none", "degree", "random-walk", "device")


@dataclass(frozen=True, eq=False)
class Dcsr:
    """Adjacency rows of selected vertices in DCSR form (one direction).

    Attributes
    ----------
    rowidx : numpy.ndarray
        int32[s], sorted vertex ids.
    rowptr : numpy.ndarray
        int64[s+1], ``colidx[rowptr[i]:rowptr[i+1]]`` is row ``rowidx[i]``.
    colidx : numpy.ndarray
        int32[*] neighbours (each row sorted, as in storage).
    labels : numpy.ndarray
        int32[*] edge labels parallel to ``colidx``, or length 0.
    """

    rowidx: np.ndarray
    rowptr: np.ndarray
    colidx: np.ndarray
    labels: np.ndarray

    @property
    def nbytes(self) -> int:
        """Bytes of the four arrays (what one DMA copy moves)."""
        return int(self.rowidx.nbytes + self.rowptr.nbytes + self.colidx.nbytes
                   + self.labels.nbytes)

    @property
    def rows(self) -> int:
        return int(self.rowidx.shape[0])


@njit(cache=True, parallel=True)
def _gather(rows, start, deg, nbr, elab, ptr, col, lab):
    for i in prange(rows.shape[0]):
        v = rows[i]
        s = start[v]
        o = ptr[i]
        for q in range(ptr[i + 1] - o):
            col[o + q] = nbr[s + q]
        if lab.shape[0] > 0:
            for q in range(ptr[i + 1] - o):
                lab[o + q] = elab[s + q]


@njit(cache=True, parallel=True)
def _pcopy(dst, src, parts):
    n = src.shape[0]
    for c in prange(parts):
        lo = n * c // parts
        hi = n * (c + 1) // parts
        dst[lo:hi] = src[lo:hi]


def parallel_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[:] = src`` for byte arrays, on all cores when it is large.

    The per-batch overlay (the full rows of every touched vertex: tens of MB at
    a batch of 4096 on a power-law graph) goes through a pinned staging
    buffer; one core copies it at a few GB/s, slower than the DMA after it.
    """
    if src.nbytes < (1 << 20):
        dst[:] = src
    else:
        _pcopy(dst, src, 64)


def pack_rows(rows: np.ndarray, start: np.ndarray, deg: np.ndarray, nbr: np.ndarray,
              elab: np.ndarray) -> Dcsr:
    """Copy the storage rows of ``rows`` into a :class:`Dcsr`.

    Parameters
    ----------
    rows : numpy.ndarray
        Vertex ids (any order, no duplicates); sorted in the result.
    start, deg, nbr, elab : numpy.ndarray
        The storage arrays of one direction (``b_start``, ``b_deg``, ``b_nbr``,
        ``b_elab``; ``elab`` of length 0 when the graph has no edge labels).

    Returns
    -------
    Dcsr
    """
    rows = np.sort(np.asarray(rows, dtype=np.int32))
    d = np.asarray(deg)[rows].astype(np.int64) if rows.size else np.zeros(0, np.int64)
    ptr = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(d, out=ptr[1:])
    m = int(ptr[-1])
    col = np.empty(m, dtype=np.int32)
    lab = np.empty(m if elab.shape[0] else 0, dtype=np.int32)
    if rows.size:
        _gather(rows, np.ascontiguousarray(start, np.int64), np.ascontiguousarray(deg, np.int32),
                np.ascontiguousarray(nbr, np.int32), np.ascontiguousarray(elab, np.int32),
                ptr, col, lab)
    return Dcsr(rows, ptr, col, lab)


def row_bytes(deg: np.ndarray, labeled: bool) -> np.ndarray:
    """Device bytes of caching each row: entries (and labels), ``rowidx`` and ``rowptr``."""
    per = 8 if labeled else 4
    return np.asarray(deg, dtype=np.int64) * per + 12


def select_rows(scores: np.ndarray, cost: np.ndarray, budget: int,
                exclude: np.ndarray | None = None) -> np.ndarray:
    """The highest-scoring vertices whose rows fit in ``budget`` bytes.

    Parameters
    ----------
    scores : numpy.ndarray
        float[n]; vertices with score ``<= 0`` are never chosen.
    cost : numpy.ndarray
        int64[n] bytes of caching each vertex (:func:`row_bytes`, summed over
        directions).
    budget : int
        Bytes available.
    exclude : numpy.ndarray or None, optional
        bool[n] vertices not to cache (the batch's touched vertices, whose rows
        the overlay serves). The default is ``None``.

    Returns
    -------
    numpy.ndarray
        int32 vertex ids in decreasing score order (ties: smaller id first); a
        prefix of that order, cut where the next row no longer fits.

    Examples
    --------
    >>> select_rows(np.array([0., 5., 3.]), np.array([12, 12, 12]), 24).tolist()
    [1, 2]
    """
    s = np.asarray(scores, dtype=np.float64)
    cand = s > 0
    if exclude is not None:
        cand &= ~np.asarray(exclude, dtype=bool)[: s.shape[0]]
    ids = np.flatnonzero(cand)
    if ids.size == 0 or budget <= 0:
        return np.zeros(0, dtype=np.int32)
    # stable sort on -score keeps ties in id order: deterministic
    ids = ids[np.argsort(-s[ids], kind="stable")]
    c = np.cumsum(np.asarray(cost, dtype=np.int64)[ids])
    cut = int(np.searchsorted(c, int(budget), side="right"))
    return ids[:cut].astype(np.int32)
