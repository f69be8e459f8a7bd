"""Interval-PCSR: one CSR per edge label, rows found through intervals of renamed ids
(GENEVA §4, Fig. 4d; GenMap is its Alg. 2).

Map, bottom up:

- :func:`_masks`: which edge label partitions (ELPs) each vertex is in, as a bit mask;
  vertices with equal masks form one *share-set group* (:func:`_groups`).
- :func:`_genmap_order` (Alg. 2): groups in the order they get new ids. The ELP with the
  most vertices not yet renamed goes first; its groups are chained, the one shared by most
  ELPs first, then each time the one sharing most ELPs with the last (lines 7-17); repeat.
  :func:`genmap` turns that order into ``new_id``/``old_id``.
- :func:`_members`, :func:`_intervals`: each partition's vertices and interval index (the
  first new id of each run of consecutive members, and the position of that run's first
  row); :func:`_slots`: where each vertex's row goes in each of its partitions;
  :func:`_count_rows`, :func:`_fill_rows` (threaded over vertices): every partition's rows
  in one flat array (partition after partition, rows in new-id order, neighbours as new
  ids, sorted).
- :class:`IntervalPCSR`: :meth:`~IntervalPCSR.locate` (an id's row in a partition, by a
  binary search over the partition's intervals, GENEVA's replacement for GSI's hash slots),
  :meth:`~IntervalPCSR.row`, :meth:`~IntervalPCSR.sizes`; :func:`interval_pcsr` builds one
  per graph and keeps it.

How it differs from GENEVA:

- GENEVA numbers vertices from 1; here from 0. Vertices in no partition (no edge) take the
  last ids.
- Ties are broken so that the renaming is deterministic: ELPs of equal size by the lower
  label; groups of equal share by the one in more ELPs, then the larger, then the lower
  group index (groups are numbered in `np.unique`'s order of their masks).
- Building takes working memory besides the result: a mask and a few int64 arrays per
  vertex, and two int64 per (vertex, partition) membership.
- A partition with more than :data:`CHAIN_MAX` groups (only with many labels: 12 labels give
  at most 4,096) is not chained greedily, which costs the square of its groups: they go in
  order of how many ELPs share them, larger first.
- Directed graphs: a vertex is in a label's partition when it has an out- or in-entry of that
  label; the partition keeps out-rows and in-rows over the same intervals.
- The interval index stores each run's first id and its first row's position (one more
  entry at the end closes the last run); GENEVA stores the first id and the run's length.
  Lengths are the differences of positions, and the position saves a prefix sum per lookup.
- Nothing matches on it yet: the engines read :func:`~warpmatch.graph.labelparts.
  restrict_to_labels`'s graph (one CSR over the query's labels, original ids). This module
  is the storage and its sizes (``warpmatch info``); loading one partition per extension
  phase into the kernels is the next step.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .csr import Graph, index_dtype
from .labelparts import hash_pcsr_bytes, present_labels

__all__ = ["IntervalPCSR", "PartitionSize", "genmap", "interval_pcsr", "CHAIN_MAX"]

#: partitions with more share-set groups than this are ordered without the greedy chain
CHAIN_MAX = 8192

_CACHE: "weakref.WeakKeyDictionary[Graph, IntervalPCSR]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


# ------------------------------------------------------------------------- GenMap
def _label_index(elab: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each entry's partition ``j`` (``labels[j] == elab[e]``), as the smallest int type."""
    dt = np.int16 if labels.size <= np.iinfo(np.int16).max else np.int32
    if labels.size and int(labels[-1]) < (1 << 20):     # a table beats a search per entry
        table = np.zeros(int(labels[-1]) + 1, dt)
        table[labels] = np.arange(labels.size, dtype=dt)
        return table[elab]
    return np.searchsorted(labels, elab).astype(dt)


@njit(cache=True, nogil=True)
def _masks(indptr, lidx, out):  # pragma: no cover - compiled
    """Set bit ``j`` of ``out[v]`` (words of 64 bits) when row ``v`` has an entry of
    partition ``j`` (``lidx``: each entry's partition)."""
    for v in range(indptr.size - 1):
        for e in range(indptr[v], indptr[v + 1]):
            j = lidx[e]
            out[v, j >> 6] |= np.uint64(1) << np.uint64(j & 63)


@njit(cache=True, inline="always")
def _bit(m, j):  # pragma: no cover - compiled
    return (m[j >> 6] >> np.uint64(j & 63)) & np.uint64(1)


@njit(cache=True, inline="always")
def _popcount(x):  # pragma: no cover - compiled
    """Set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, inline="always")
def _ones(m, buf):  # pragma: no cover - compiled
    """The set bits of mask ``m`` into ``buf`` (ascending); returns how many."""
    k = 0
    for w in range(m.size):
        x = m[w]
        while x:
            low = x & (~x + np.uint64(1))
            buf[k] = w * 64 + _popcount(low - np.uint64(1))
            k += 1
            x ^= low
    return k


@njit(cache=True, nogil=True)
def _genmap_order(gm, sizes, L, chain_max):  # pragma: no cover - compiled
    """Alg. 2 over share-set groups (masks ``gm``, ``sizes`` vertices each): the groups in
    the order they get new ids; groups in no partition come last."""
    S, W = gm.shape
    pop = np.zeros(S, np.int64)
    left = np.zeros(L, np.int64)                  # vertices not renamed, per partition
    buf = np.empty(L, np.int64)
    for g in range(S):
        pop[g] = _ones(gm[g], buf)
        for t in range(pop[g]):
            left[buf[t]] += sizes[g]
    taken = np.zeros(S, np.bool_)
    order = np.empty(S, np.int64)
    k = 0
    cand = np.empty(S, np.int64)
    while True:
        elp = -1
        best = 0
        for j in range(L):                        # line 3: the most vertices
            if left[j] > best:
                best = left[j]
                elp = j
        if elp < 0:
            break
        c = 0
        for g in range(S):                        # line 4: its sub-partitions
            if not taken[g] and _bit(gm[g], elp):
                cand[c] = g
                c += 1
        if c > chain_max:                         # too many to chain: most shared first
            key = np.empty(c, np.int64)
            for i in range(c):
                key[i] = -pop[cand[i]]
            for i in np.argsort(key, kind="mergesort"):
                order[k] = cand[i]
                k += 1
                taken[cand[i]] = True
        else:
            prev = -1
            for _ in range(c):                    # lines 8 and 13
                pick = -1
                for i in range(c):
                    g = cand[i]
                    if taken[g]:
                        continue
                    if prev < 0:
                        share = pop[g]
                    else:
                        share = 0
                        for w in range(W):
                            share += _popcount(gm[g, w] & gm[prev, w])
                    if pick < 0 or share > best or (share == best and (
                            pop[g] > pop[pick] or (pop[g] == pop[pick]
                                                   and sizes[g] > sizes[pick]))):
                        pick = g
                        best = share
                taken[pick] = True
                order[k] = pick
                k += 1
                prev = pick
        for i in range(c):                        # line 6: out of every partition
            g = cand[i]
            for t in range(_ones(gm[g], buf)):
                left[buf[t]] -= sizes[g]
    for g in range(S):                            # in no partition: last
        if not taken[g]:
            order[k] = g
            k += 1
    return order


def _groups(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(group masks, group of each vertex, vertices per group)`` of equal mask rows."""
    if masks.shape[1] == 1:
        keys, inv = np.unique(masks[:, 0], return_inverse=True)
        gm = keys.reshape(-1, 1)
    else:
        rows = np.ascontiguousarray(masks).view(
            np.dtype((np.void, masks.dtype.itemsize * masks.shape[1]))).ravel()
        _, first, inv = np.unique(rows, return_index=True, return_inverse=True)
        gm = masks[first]
    inv = inv.ravel().astype(np.int64)
    return np.ascontiguousarray(gm), inv, np.bincount(inv, minlength=gm.shape[0])


def _label_masks(graph: Graph, labels: np.ndarray, lidx: np.ndarray,
                 in_lidx: np.ndarray) -> np.ndarray:
    words = max(1, -(-labels.size // 64))
    masks = np.zeros((graph.n, words), np.uint64)
    _masks(graph.indptr, lidx, masks)
    if graph.directed:
        _masks(graph.in_indptr, in_lidx, masks)
    return masks


def genmap(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """GENEVA's renaming (Alg. 2): ``(new_id, old_id)``, each the other's inverse.

    Vertices of equal share sets (the partitions they are in) get consecutive new ids, and
    the partition with the most vertices gets ``0 .. size-1``: one interval.

    Raises
    ------
    ValueError
        If ``graph`` has no edge labels.

    Examples
    --------
    >>> g = Graph.from_edges([0, 2, 1], [2, 4, 3], edge_labels=[7, 7, 5])
    >>> new, old = genmap(g)
    >>> sorted(new[[0, 2, 4]].tolist())      # the larger partition (label 7): one run
    [0, 1, 2]
    """
    labels = _present(graph)
    return _genmap(graph, labels, *_sides(graph, labels))[:2]


def _present(graph: Graph) -> np.ndarray:
    if graph.edge_labels is None:
        raise ValueError(f"graph {graph.name!r} has no edge labels to partition by")
    return np.array(sorted(present_labels(graph)), dtype=np.int64)


def _sides(graph: Graph, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each out-entry's and in-entry's partition (the same array when undirected)."""
    lidx = _label_index(graph.edge_labels, labels)
    return lidx, (_label_index(graph.in_edge_labels, labels) if graph.directed else lidx)


def _genmap(graph: Graph, labels: np.ndarray, lidx: np.ndarray, in_lidx: np.ndarray):
    masks = _label_masks(graph, labels, lidx, in_lidx)
    gm, inv, sizes = _groups(masks)
    order = _genmap_order(gm, sizes, labels.size, CHAIN_MAX)
    start = np.zeros(gm.shape[0], np.int64)            # first new id of each group
    start[order] = np.concatenate(([0], np.cumsum(sizes[order])[:-1]))
    by_group = np.argsort(inv, kind="stable")          # old ids ascending within a group
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    new_id = np.empty(graph.n, dtype=index_dtype(graph.n))
    new_id[by_group] = start[inv[by_group]] + np.arange(graph.n) - first[inv[by_group]]
    old_id = np.empty_like(new_id)
    old_id[new_id] = np.arange(graph.n, dtype=new_id.dtype)
    return new_id, old_id, gm, inv


# ------------------------------------------------------------------------- layout
@njit(cache=True, nogil=True)
def _members(gm, inv, old_id, L):  # pragma: no cover - compiled
    """Per partition: its vertices and its intervals (runs of consecutive new ids)."""
    verts = np.zeros(L, np.int64)
    runs = np.zeros(L, np.int64)
    last = np.full(L, -2, np.int64)
    buf = np.empty(L, np.int64)
    for u in range(old_id.size):
        for t in range(_ones(gm[inv[old_id[u]]], buf)):
            j = buf[t]
            verts[j] += 1
            if last[j] != u - 1:
                runs[j] += 1
            last[j] = u
    return verts, runs


@njit(cache=True, nogil=True)
def _intervals(gm, inv, old_id, L, ioff, starts, base):  # pragma: no cover - compiled
    """Fill each partition's interval index at ``ioff[j]``: run starts and their first
    row's position, plus one closing entry (the end id, the partition's vertex count)."""
    at = ioff[:-1].copy()
    pos = np.zeros(L, np.int64)
    last = np.full(L, -2, np.int64)
    buf = np.empty(L, np.int64)
    for u in range(old_id.size):
        for t in range(_ones(gm[inv[old_id[u]]], buf)):
            j = buf[t]
            if last[j] != u - 1:
                starts[at[j]] = u
                base[at[j]] = pos[j]
                at[j] += 1
            last[j] = u
            pos[j] += 1
    for j in range(L):
        starts[at[j]] = last[j] + 1
        base[at[j]] = pos[j]


@njit(cache=True, nogil=True)
def _slots(gm, inv, old_id, voff, mstart, mslot):  # pragma: no cover - compiled
    """Vertex ``v``'s ``t``-th partition (by label) has its row at ``mslot[mstart[v] + t]``
    of the partitions' flat row arrays (``voff[j]`` + its place in new-id order)."""
    pos = voff[:-1].copy()
    buf = np.empty(voff.size - 1, np.int64)
    for u in range(old_id.size):
        v = old_id[u]
        for t in range(_ones(gm[inv[v]], buf)):
            mslot[mstart[v] + t] = pos[buf[t]]
            pos[buf[t]] += 1


@njit(cache=True, inline="always")
def _rank(m, j):  # pragma: no cover - compiled
    """How many of mask ``m``'s set bits are below bit ``j``."""
    c = 0
    for w in range(j >> 6):
        c += _popcount(m[w])
    return c + _popcount(m[j >> 6] & ((np.uint64(1) << np.uint64(j & 63)) - np.uint64(1)))


@njit(cache=True, nogil=True, parallel=True)
def _count_rows(indptr, lidx, gm, inv, mstart, mslot, deg):  # pragma: no cover
    """``deg[slot]``: the entries of each vertex's row in each of its partitions."""
    for v in prange(indptr.size - 1):
        m = gm[inv[v]]
        for e in range(indptr[v], indptr[v + 1]):
            deg[mslot[mstart[v] + _rank(m, lidx[e])]] += 1


@njit(cache=True, nogil=True, parallel=True)
def _fill_rows(indptr, indices, lidx, new_id, gm, inv, mstart, mslot, eoff, ptr,
               cols):  # pragma: no cover - compiled
    """Write each partition's rows (neighbours as new ids, each row sorted) at
    ``cols[eoff[j]:]`` after the partition's local offsets (partition ``j``'s are
    ``ptr[voff[j] + j:]``, so a row's slot ``s`` has its offset at ``ptr[s + j]``).

    A row is sorted once by new id and then dealt out, which keeps every partition's part
    of it sorted: one sort a vertex instead of one per vertex and label."""
    for v in prange(indptr.size - 1):
        a, b = indptr[v], indptr[v + 1]
        if a == b:
            continue
        m = gm[inv[v]]
        keys = np.empty(b - a, new_id.dtype)
        for e in range(a, b):
            keys[e - a] = new_id[indices[e]]
        fill = np.zeros(mstart[v + 1] - mstart[v], np.int64)
        for i in np.argsort(keys):
            j = lidx[a + i]
            t = _rank(m, j)
            cols[eoff[j] + ptr[mslot[mstart[v] + t] + j] + fill[t]] = keys[i]
            fill[t] += 1


@njit(cache=True, nogil=True)
def _locate(starts, base, u):  # pragma: no cover - compiled
    """Row position of new id ``u`` in a partition with these ``k + 1`` index entries, or
    -1 when ``u`` is not in it."""
    i = np.searchsorted(starts[:-1], u, side="right") - 1
    if i < 0:
        return -1
    p = base[i] + (u - starts[i])
    return p if p < base[i + 1] else -1


def _memberships(gm: np.ndarray) -> np.ndarray:
    """How many partitions each share-set group is in."""
    bits = np.unpackbits(gm.view(np.uint8), axis=1)
    return bits.sum(axis=1).astype(np.int64)


def _offsets(deg: np.ndarray, voff: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Each partition's local row offsets, partition after partition (``vertices + 1``
    entries each)."""
    out = []
    for j in range(voff.size - 1):
        d = deg[voff[j]:voff[j + 1]]
        out.append(np.concatenate(([0], np.cumsum(d))).astype(dtype))
    return np.concatenate(out) if out else np.zeros(0, dtype)


# ------------------------------------------------------------------------- storage
@dataclass(frozen=True)
class PartitionSize:
    """One label's partition in interval-PCSR.

    ``bytes``: its interval index, row offsets and neighbour ids (both sides for a directed
    graph); ``hash_bytes``: the same rows with :data:`~warpmatch.graph.labelparts.HASH_SLOTS`
    hash slots a vertex (GSI's hash-PCSR, as :mod:`~warpmatch.graph.labelparts` counts it).
    """
    label: int
    vertices: int
    intervals: int
    entries: int
    bytes: int
    hash_bytes: int


class IntervalPCSR:
    """A graph's edges as one CSR per edge label over GenMap's new ids (GENEVA §4).

    Attributes
    ----------
    labels : np.ndarray
        The edge labels, ascending; partition ``j`` holds ``labels[j]``'s entries.
    new_id, old_id : np.ndarray
        GenMap's renaming and its inverse.
    starts, base, ioff : np.ndarray
        Partition ``j``'s interval index is ``starts[ioff[j]:ioff[j+1]]`` (each run's first
        new id, then the end of the last run) and ``base[...]`` (each run's first row).
    indptr, indices, voff, eoff : np.ndarray
        Partition ``j``'s rows: offsets ``indptr[voff[j] + j : voff[j+1] + j + 1]`` (local,
        int32 while a partition's entries fit) into ``indices[eoff[j]:eoff[j+1]]`` (new ids).
    in_indptr, in_indices : np.ndarray
        The in-rows over the same intervals (the out-arrays themselves when undirected).
    """

    def __init__(self, graph: Graph):
        labels = _present(graph)
        L = labels.size
        lidx, in_lidx = _sides(graph, labels)
        new_id, old_id, gm, inv = _genmap(graph, labels, lidx, in_lidx)
        verts, runs = _members(gm, inv, old_id, L)
        self.graph_name = graph.name
        self.directed = graph.directed
        self.n = graph.n
        self.labels, self.new_id, self.old_id = labels, new_id, old_id
        self.voff = np.concatenate(([0], np.cumsum(verts))).astype(np.int64)
        self.ioff = np.concatenate(([0], np.cumsum(runs + 1))).astype(np.int64)
        idt = new_id.dtype
        self.starts = np.empty(int(self.ioff[-1]), idt)
        self.base = np.empty(int(self.ioff[-1]), idt)
        _intervals(gm, inv, old_id, L, self.ioff, self.starts, self.base)
        # where each vertex's row of each of its partitions goes
        mstart = np.concatenate(([0], np.cumsum(_memberships(gm)[inv]))).astype(np.int64)
        mslot = np.empty(int(mstart[-1]), np.int64)
        _slots(gm, inv, old_id, self.voff, mstart, mslot)
        self.indptr, self.indices, self.eoff = self._side(
            graph.indptr, graph.indices, lidx, gm, inv, mstart, mslot)
        if graph.directed:
            self.in_indptr, self.in_indices, self.in_eoff = self._side(
                graph.in_indptr, graph.in_indices, in_lidx, gm, inv, mstart, mslot)
        else:
            self.in_indptr, self.in_indices, self.in_eoff = self.indptr, self.indices, self.eoff
        self.csr_bytes = int(graph.indptr.nbytes + graph.indices.nbytes) * (
            2 if graph.directed else 1)

    def _side(self, indptr, indices, lidx, gm, inv, mstart, mslot):
        deg = np.zeros(int(self.voff[-1]), np.int64)
        _count_rows(indptr, lidx, gm, inv, mstart, mslot, deg)
        cs = np.concatenate(([0], np.cumsum(deg)))
        per = cs[self.voff[1:]] - cs[self.voff[:-1]]
        eoff = np.concatenate(([0], np.cumsum(per))).astype(np.int64)
        dt = np.int32 if per.size == 0 or per.max() <= np.iinfo(np.int32).max else np.int64
        ptr = _offsets(deg, self.voff, np.dtype(dt))
        cols = np.empty(int(eoff[-1]), dtype=self.new_id.dtype)
        _fill_rows(indptr, indices, lidx, self.new_id, gm, inv, mstart, mslot, eoff, ptr, cols)
        return ptr, cols, eoff

    # -- one partition
    def _j(self, label: int) -> int:
        j = int(np.searchsorted(self.labels, label))
        if j == self.labels.size or self.labels[j] != label:
            raise KeyError(f"graph {self.graph_name!r} has no edge label {label}")
        return j

    def intervals(self, label: int) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, base)`` of ``label``'s interval index (``k + 1`` entries each)."""
        j = self._j(label)
        a, b = self.ioff[j], self.ioff[j + 1]
        return self.starts[a:b], self.base[a:b]

    def locate(self, label: int, u: int) -> int:
        """Row position of new id ``u`` in ``label``'s partition, -1 if it is not there."""
        starts, base = self.intervals(label)
        return int(_locate(starts, base, u))

    def row(self, label: int, v: int, side: str = "out") -> np.ndarray:
        """Vertex ``v``'s neighbours through ``label``'s edges, both in original ids,
        ascending; empty where ``v`` has none."""
        j = self._j(label)
        p = self.locate(label, int(self.new_id[v]))
        if p < 0:
            return np.zeros(0, self.old_id.dtype)
        ptr, cols, eoff = ((self.indptr, self.indices, self.eoff) if side == "out"
                           else (self.in_indptr, self.in_indices, self.in_eoff))
        at = int(self.voff[j]) + j + p
        seg = cols[int(eoff[j]) + int(ptr[at]): int(eoff[j]) + int(ptr[at + 1])]
        return np.sort(self.old_id[seg])

    # -- sizes
    def sizes(self) -> list[PartitionSize]:
        """Each partition's vertices, intervals, entries and bytes (module docstring)."""
        out = []
        idw = self.indices.dtype.itemsize
        sides = 2 if self.directed else 1
        for j, label in enumerate(self.labels.tolist()):
            nv = int(self.voff[j + 1] - self.voff[j])
            k = int(self.ioff[j + 1] - self.ioff[j])
            m = int(self.eoff[j + 1] - self.eoff[j])
            if self.directed:
                m += int(self.in_eoff[j + 1] - self.in_eoff[j])
            b = (k * (self.starts.itemsize + self.base.itemsize)
                 + sides * (nv + 1) * self.indptr.itemsize + m * idw)
            out.append(PartitionSize(int(label), nv, k - 1, m, b,
                                     hash_pcsr_bytes(sides * nv, m, idw)))
        return out

    @property
    def nbytes(self) -> int:
        """Bytes of every partition (without the renaming's two arrays, :attr:`map_bytes`)."""
        return sum(s.bytes for s in self.sizes())

    @property
    def map_bytes(self) -> int:
        """Bytes of ``new_id`` and ``old_id`` (needed to report matches in original ids)."""
        return int(self.new_id.nbytes + self.old_id.nbytes)


def interval_pcsr(graph: Graph) -> IntervalPCSR:
    """``graph``'s :class:`IntervalPCSR`, built once and kept while the graph lives.

    Raises
    ------
    ValueError
        If ``graph`` has no edge labels.

    Examples
    --------
    >>> g = Graph.from_edges([0, 1, 2], [1, 2, 0], edge_labels=[5, 5, 7])
    >>> s = interval_pcsr(g)
    >>> s.row(5, 1).tolist(), s.row(7, 1).tolist()
    ([0, 2], [])
    >>> [(p.label, p.vertices, p.intervals) for p in s.sizes()]
    [(5, 3, 1), (7, 2, 1)]
    """
    with _LOCK:
        hit = _CACHE.get(graph)
    if hit is None:
        hit = IntervalPCSR(graph)
        with _LOCK:
            _CACHE[graph] = hit
    return hit
