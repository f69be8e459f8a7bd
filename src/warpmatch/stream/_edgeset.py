"""An exact set of labelled edges in one open-addressing hash table (numba).

Map: key packing (:func:`edge_key`) < slot search (:func:`es_slot`) < insert and
delete (:func:`es_put`, :func:`es_remove`; counted in ``meta``: :func:`es_insert`,
:func:`es_delete`) < bulk build and rehash
(:func:`es_fill`, :func:`es_rehash`) < :class:`EdgeSet` (the arrays and their
growth) and :meth:`EdgeSet.edges` (back to edge arrays).

The sequential path (:mod:`warpmatch.stream.sequential`) keeps the edges that a
labeled query can never read — those whose endpoint labels no query edge has
(:mod:`warpmatch.stream.relevant`) — here instead of in the sorted adjacency
rows of the whole graph: an update of such an edge is then validated and
applied by one probe of this table, not by binary searches and shifts in two
adjacency rows (two to four cache misses). RapidFlow (Sun et al., VLDB 2022)
does not store these edges at all (nor validate their updates); we must, since
``on_invalid`` judges every update against the whole graph.

Keys are ``(a << 32) | b`` for an edge ``a -> b`` (an undirected edge with ``a <
b``); values are edge labels. Linear probing; a deletion shifts the entries
after it back (Knuth's Algorithm R), so no tombstones pile up under a stream of
deletions and re-insertions; the table doubles when its entries pass
:data:`MAX_LOAD`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["EdgeSet", "edge_key", "MAX_LOAD"]

EMPTY = np.int64(-1)
#: entries above this fraction of the slots: the table doubles
MAX_LOAD = 0.7
#: the slots of a table per entry at least, right after a (re)build
SLOTS_PER_ENTRY = 2
_GOLD = np.uint64(0x9E3779B97F4A7C15)
#: ``meta`` slots: entries, log2 of the table size
E_LIVE, E_BITS = range(2)


@njit(cache=True, nogil=True, inline="always")
def edge_key(a, b, directed):
    """The key of edge ``a -> b`` (undirected: of ``{a, b}``)."""
    if not directed and a > b:
        a, b = b, a
    return (np.int64(a) << np.int64(32)) | np.int64(b)


@njit(cache=True, nogil=True, inline="always")
def _home(key, bits):
    return np.int64((np.uint64(key) * _GOLD) >> np.uint64(64 - bits))


@njit(cache=True, nogil=True, inline="always")
def es_slot(keys, bits, key):
    """``(slot, found)``: the slot holding ``key``, or the empty slot to insert it at."""
    mask = (np.int64(1) << bits) - 1
    h = _home(key, bits)
    while True:
        k = keys[h]
        if k == key:
            return h, True
        if k == EMPTY:
            return h, False
        h = (h + 1) & mask


@njit(cache=True, nogil=True, inline="always")
def es_full(meta, keys):
    """Would one more insertion pass the load limit?"""
    return meta[E_LIVE] + 1 > MAX_LOAD * keys.shape[0]


@njit(cache=True, nogil=True, inline="always")
def es_put(keys, vals, slot, key, val):
    """Write ``key`` (absent, ``slot`` from :func:`es_slot`) with label ``val`` (kept only
    where ``vals`` is not empty: a table without edge labels has none); the caller
    counts the entry (:func:`es_insert` does, in ``meta``)."""
    keys[slot] = key
    if vals.shape[0] > 0:
        vals[slot] = val


@njit(cache=True, nogil=True, inline="always")
def es_insert(keys, vals, meta, slot, key, val):
    """:func:`es_put`, counted in ``meta``."""
    es_put(keys, vals, slot, key, val)
    meta[E_LIVE] += 1


@njit(cache=True, nogil=True, inline="always")
def es_remove(keys, vals, bits, slot):
    """Remove the entry at ``slot`` of a table of ``2^bits`` slots; returns its label.
    The caller counts the entry out (:func:`es_delete` does, in ``meta``).

    The entries after it on the probe run move back into the hole when their
    home slot does not lie cyclically in ``(hole, position]``.
    """
    labeled = vals.shape[0] > 0
    lab = vals[slot] if labeled else np.int32(0)
    mask = (np.int64(1) << bits) - 1
    hole = slot
    j = slot
    while True:
        j = (j + 1) & mask
        k = keys[j]
        if k == EMPTY:
            break
        h = _home(k, bits)
        # stays if its home is in (hole, j] cyclically
        if (hole < j and hole < h <= j) or (hole > j and (h > hole or h <= j)):
            continue
        keys[hole] = k
        if labeled:
            vals[hole] = vals[j]
        hole = j
    keys[hole] = EMPTY
    return lab


@njit(cache=True, nogil=True, inline="always")
def es_delete(keys, vals, meta, slot):
    """:func:`es_remove`, counted out in ``meta``; returns the entry's label."""
    lab = es_remove(keys, vals, meta[E_BITS], slot)
    meta[E_LIVE] -= 1
    return lab


@njit(cache=True, nogil=True)
def es_fill(keys, vals, meta, src, dst, lab, has_lab, directed):
    """Insert edges ``src[i] -> dst[i]`` (distinct, absent) into an empty table."""
    bits = meta[E_BITS]
    for i in range(src.shape[0]):
        key = edge_key(src[i], dst[i], directed)
        slot, _ = es_slot(keys, bits, key)
        es_insert(keys, vals, meta, slot, key, lab[i] if has_lab else 0)


@njit(cache=True, nogil=True)
def es_rehash(keys, vals, new_keys, new_vals, new_meta):
    """Every live entry of ``keys``/``vals`` into the empty ``new_*`` table."""
    bits = new_meta[E_BITS]
    for s in range(keys.shape[0]):
        key = keys[s]
        if key >= 0:
            slot, _ = es_slot(new_keys, bits, key)
            es_insert(new_keys, new_vals, new_meta, slot, key,
                      vals[s] if vals.shape[0] > 0 else np.int32(0))


@njit(cache=True, nogil=True)
def _gather(keys, vals, src, dst, lab):
    w = 0
    for s in range(keys.shape[0]):
        key = keys[s]
        if key >= 0:
            src[w] = key >> np.int64(32)
            dst[w] = key & np.int64(0xFFFFFFFF)
            lab[w] = vals[s] if vals.shape[0] > 0 else 0
            w += 1
    return w


def _bits_for(entries: int) -> int:
    return max(4, int(np.ceil(np.log2(max(1, entries) * SLOTS_PER_ENTRY))))


class EdgeSet:
    """Labelled edges in a hash table (module docstring).

    Parameters
    ----------
    src, dst : numpy.ndarray
        The initial edges (distinct; undirected edges once, either way round).
    labels : numpy.ndarray or None
        Their labels (``None``: all 0, and none are kept: ``vals`` is empty, which
        keeps the table a third smaller for the probes of a stream).
    directed : bool

    Attributes
    ----------
    keys, vals, meta : numpy.ndarray
        The table (int64 keys, int32 labels, or no labels) and ``[entries, log2
        size]``; the kernels edit them in place.
    generation : int
        Counts the times the arrays were replaced (growth).
    """

    def __init__(self, src: np.ndarray, dst: np.ndarray, labels: np.ndarray | None,
                 directed: bool) -> None:
        self.directed = bool(directed)
        self.generation = -1
        has_lab = self.labeled = labels is not None
        m = int(np.asarray(src).shape[0])
        self._alloc(_bits_for(m))
        lab = (np.ascontiguousarray(labels, dtype=np.int32) if has_lab
               else np.zeros(0, np.int32))
        es_fill(self.keys, self.vals, self.meta, np.ascontiguousarray(src, dtype=np.int64),
                np.ascontiguousarray(dst, dtype=np.int64), lab, has_lab, self.directed)

    def _alloc(self, bits: int) -> None:
        # new arrays: whoever packed the old ones (the sequential path) must pack again
        self.generation += 1
        self.keys = np.full(1 << bits, EMPTY, np.int64)
        self.vals = np.zeros((1 << bits) if self.labeled else 0, np.int32)
        self.meta = np.array([0, bits], np.int64)

    @staticmethod
    def bytes_for(entries: int, labeled: bool = True) -> int:
        """Bytes of a table built for ``entries`` edges (with labels or without)."""
        return (1 << _bits_for(entries)) * (8 + (4 if labeled else 0))

    def __len__(self) -> int:
        return int(self.meta[E_LIVE])

    def grow(self) -> None:
        """Rebuild the table with room to insert (twice the slots)."""
        self.grow_for(len(self) + 1)

    def grow_for(self, entries: int) -> None:
        """Rebuild the table with room for ``entries`` entries (at least twice the slots)."""
        keys, vals = self.keys, self.vals
        self._alloc(max(int(self.meta[E_BITS]) + 1, _bits_for(entries)))
        es_rehash(keys, vals, self.keys, self.vals, self.meta)

    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, labels)`` of every edge (undirected: ``src < dst``), in no order."""
        n = len(self)
        src = np.empty(n, np.int64)
        dst = np.empty(n, np.int64)
        lab = np.empty(n, np.int32)
        _gather(self.keys, self.vals, src, dst, lab)
        return src, dst, lab
