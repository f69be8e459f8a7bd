"""The GPU cache of hot adjacency rows, in DCSR (GCSM §V-B): sizes and selection.

Per batch, the engine scores vertices by a *policy* — GCSM's random-walk
frequency estimate (:mod:`.walk`), the degree-based "Naive" baseline of its
§VI-A, nothing (zero-copy only) or everything (the whole storage on the
device) — and gathers the storage rows of the best-scoring vertices, within a
byte budget, into device memory in *doubly compressed sparse row* form: the
row ids, one offset per row and the concatenated neighbours and edge labels
(the engine's ``_gather``; kernels/storage.cu ``wm_gather_rows``).

What differs from the paper: GCSM's ``rowptr`` holds two offsets per row
(original list, appended new neighbours) because its cached rows include the
batch's unsorted appends and negative deletion marks. Our storage rows are
always sorted and hold state ``S_0`` only; a batch's changes live in the
overlay, which is copied to the device whole, so a cached row is read only
while its vertex is untouched and needs one offset per row. Each row is given
some slack (:func:`row_capacity`): a row the stream rewrote is copied again in
place when it still fits, so a cache whose rows stay the same (the degree
policy, or a random-walk cache between samples) is refreshed row by row rather
than rebuilt. The kernel finds a row through a device-side slot map
(``slot[v]`` = position or -1) instead of a binary search on the row ids: one
load instead of ``log2(rows)``; a row's length comes from the device row
index, its capacity from the offsets.

:func:`select_rows` is the host reference of the engine's row selection
(``_select_device``), for tests and ``bench/stream.py``'s best-cache bound.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["POLICIES", "select_rows", "row_capacity", "row_bytes", "parallel_copy"]

#: cache policies of :class:`~warpmatch.stream.gpu.GpuDeltaEngine`
POLICIES = ("none", "degree", "random-walk", "device")


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


def row_capacity(deg: np.ndarray) -> np.ndarray:
    """Entries a cached row of ``deg`` entries is given: ``deg + ceil(deg / 16)``.

    The slack lets a cached row that the stream lengthens be refreshed in place
    (a hub gains about one entry a batch of 4096 on a 10^7-edge graph) instead
    of the whole cache being rebuilt; kernels/storage.cu ``wm_refresh_rows``. Host or
    device (CuPy) arrays alike; the engine's row selection has it in C too
    (``engine._ROW_C``, tested to agree).
    """
    d = deg.astype(np.int64) if hasattr(deg, "astype") else np.asarray(deg, dtype=np.int64)
    return d + (d + 15) // 16


def row_bytes(deg: np.ndarray, labeled: bool) -> np.ndarray:
    """Device bytes of caching each row: its capacity's entries (and labels) and the
    slot's 12 bytes (``rowidx`` and ``rowptr``); host or device arrays alike."""
    per = 8 if labeled else 4
    return row_capacity(deg) * per + 12


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
