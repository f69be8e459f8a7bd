"""External <-> internal vertex ids of :class:`~warpmatch.stream.dynamic.DynamicGraph`.

Map: :class:`_IdMap` (a sorted copy of the graph's ids for ``searchsorted``, a
small side table for ids added by the stream, merged when it grows).
"""
from __future__ import annotations

import numpy as np

from ..errors import GraphError


# ==================================================================== id map
class _IdMap:
    """External <-> internal vertex ids, vectorised both ways.

    The graph's ids (or the identity ``0..n-1``) are kept as a sorted copy for
    ``searchsorted``; ids added later go to a small sorted side table that is
    merged into the main one when it grows past 1/8 of it (amortised O(1) per
    new vertex). Identity stays identity while new vertices happen to get
    their own external id as internal id (the common case for 0..n-1 files).
    """

    def __init__(self, ids: np.ndarray | None, n: int) -> None:
        self.n = n
        self.identity = ids is None
        self.ext: np.ndarray | None = None          # int64[capacity], internal -> external
        self.base_ext = np.zeros(0, np.int64)       # sorted
        self.base_int = np.zeros(0, np.int64)
        self.extra_ext = np.zeros(0, np.int64)      # sorted
        self.extra_int = np.zeros(0, np.int64)
        if ids is not None:
            ids = np.asarray(ids, dtype=np.int64)
            order = np.argsort(ids, kind="stable")
            sorted_ids = ids[order]
            if sorted_ids.size > 1 and np.any(sorted_ids[1:] == sorted_ids[:-1]):
                dup = int(sorted_ids[1:][sorted_ids[1:] == sorted_ids[:-1]][0])
                raise GraphError(f"vertex id {dup} occurs twice in the graph's ids")
            self.ext = ids.copy()
            self.base_ext, self.base_int = sorted_ids, order.astype(np.int64)

    @staticmethod
    def _find(keys: np.ndarray, vals: np.ndarray, ext: np.ndarray, out: np.ndarray) -> None:
        if keys.size == 0 or ext.size == 0:
            return
        if ext.size > 64 and keys.size > 4096:
            # sorted needles: numpy's binary search reuses the previous bound,
            # which makes lookups into a 10^7-id table about 3x faster
            order = np.argsort(ext)
            pos = np.empty(ext.size, np.int64)
            pos[order] = np.searchsorted(keys, ext[order])
        else:
            pos = np.searchsorted(keys, ext)
        pos_c = np.minimum(pos, keys.size - 1)
        hit = keys[pos_c] == ext
        out[hit] = vals[pos_c[hit]]

    def lookup(self, ext: np.ndarray) -> np.ndarray:
        """Internal id of each external id, ``-1`` where unknown."""
        out = np.full(ext.shape[0], -1, np.int64)
        if self.identity:
            known = (ext >= 0) & (ext < self.n)
            out[known] = ext[known]
            return out
        self._find(self.base_ext, self.base_int, ext, out)
        self._find(self.extra_ext, self.extra_int, ext, out)
        return out

    def add(self, new_ext: np.ndarray) -> None:
        """Give ``new_ext`` (unknown, distinct) the internal ids ``n, n+1, ...``."""
        k = int(new_ext.size)
        if k == 0:
            return
        first = self.n
        if self.identity:
            if np.array_equal(new_ext, np.arange(first, first + k, dtype=np.int64)):
                self.n += k
                return
            # materialise the identity once; from now on ids are explicit
            self.identity = False
            self.ext = np.arange(first, dtype=np.int64)
            self.base_ext = np.arange(first, dtype=np.int64)
            self.base_int = np.arange(first, dtype=np.int64)
        assert self.ext is not None
        if self.ext.shape[0] < first + k:
            grown = np.empty(max(first + k, int(self.ext.shape[0] * 1.5) + 16), np.int64)
            grown[:first] = self.ext[:first]
            self.ext = grown
        self.ext[first:first + k] = new_ext
        ext = np.concatenate([self.extra_ext, new_ext])
        ints = np.concatenate([self.extra_int, np.arange(first, first + k, dtype=np.int64)])
        order = np.argsort(ext, kind="stable")
        self.extra_ext, self.extra_int = ext[order], ints[order]
        self.n += k
        if self.extra_ext.size > max(4096, self.base_ext.size // 8):
            ext = np.concatenate([self.base_ext, self.extra_ext])
            ints = np.concatenate([self.base_int, self.extra_int])
            order = np.argsort(ext, kind="stable")
            self.base_ext, self.base_int = ext[order], ints[order]
            self.extra_ext = np.zeros(0, np.int64)
            self.extra_int = np.zeros(0, np.int64)

    def to_external(self, internal: np.ndarray) -> np.ndarray:
        if self.identity:
            return internal.astype(np.int64, copy=False)
        assert self.ext is not None
        return self.ext[:self.n][internal]

    def ids_array(self) -> np.ndarray | None:
        return None if self.identity else self.ext[:self.n].copy()  # type: ignore[index]
