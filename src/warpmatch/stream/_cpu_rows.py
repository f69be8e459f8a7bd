"""numba row access and candidate tests of the CPU delta engine, in a task's state ``S_p``.

Map: the kernels' two packed arguments — the *address table* ``T``
(:func:`view_table`, slots ``T_*``) and the *plan program* ``pg``
(:func:`pack_plans`, segments ``S_*``) — < :func:`row_of` (which row: storage or
overlay) and :func:`row_ptrs` / :func:`next_entry` (scanning it) <
:func:`search_at` / :func:`has_edge` (is an edge alive at ``p``) <
:func:`gen_list` (the shortest backward row, clipped by the restrictions) and
:func:`accept` (the plan's rules for a candidate). Shared by the search
(:mod:`._cpu_delta`), the local candidate space (:mod:`._cpu_local`) and the
group count (:mod:`._cpu_group`). The array-based :func:`_row`,
:func:`_search` and :func:`_pick_gen` serve the GPU engine's host-side
estimator (:mod:`warpmatch.stream.gpu.walk`), which must read the same rows.

Adjacency of ``x`` in state ``p``: the storage row (the batch's ``S_0``, every
entry alive) when ``x`` is untouched, else its overlay row, whose entries are
alive iff ``ins < p <= dl``; both are sorted by neighbour, so binary search
works on either (an overlay row may hold several versions of a neighbour,
adjacent and with disjoint lifetimes, so at most one is alive at ``p``).

Why an address table: a numba call passes every array as a seven-field struct
and reference-counts it, and numba cannot inline a function of 30 or more
arguments; with the batch view's twenty arrays as arguments, a helper call cost
0.1-0.5 µs and the inlined copies minutes of compilation. The kernels take the
data addresses of the view's arrays in one int64 array and read them with raw
loads (:mod:`warpmatch.engine._raw`), so every helper takes a handful of
scalars and is inlined. The plan travels as one int32 program (the static
engine's idea, :mod:`warpmatch.engine._cpu_kernels`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..engine._cpu_kernels import _lower_bound   # the static CPU engine's binary search
from ..engine._raw import ld32, ld64, ldu64

#: "no upper bound" for candidates (ids are int32)
BIG = np.int64(1) << np.int64(62)

# The address table: per direction (out, then in) the storage row starts (int64),
# degrees, neighbours and edge labels (int32; address 0 = no labels), then the overlay
# index (int32, -1 = untouched), offsets (int64) and its int32[4, E] entries
# (neighbour, label, insertion, deletion: four rows of E), then the masks (uint64),
# and the number of storage rows.
(T_BS, T_BD, T_BN, T_BL, T_IS, T_ID, T_IN, T_IL,
 T_OX, T_OO, T_O4, T_OE, T_PX, T_PO, T_P4, T_PE, T_MASK, T_NS) = range(18)
T_SIZE = 18
#: slot offset of the in-direction's storage (T_IS - T_BS) and overlay (T_PX - T_OX)
T_DIR_S = 4
T_DIR_O = 4


def _addr(a: np.ndarray) -> int:
    return int(a.ctypes.data) if a.size else 0


def view_table(view, mask: np.ndarray, keep: list) -> np.ndarray:
    """The address table of a :class:`~warpmatch.stream.types.BatchView` and its masks.

    ``keep`` receives every array the table points into (the overlay entries
    are packed here): the caller holds it until the kernels return.
    """
    def c(a, dt):
        out = np.ascontiguousarray(a, dtype=dt)
        keep.append(out)
        return out

    def over4(nbr, elab, ins, dl):
        E = int(nbr.shape[0])
        out = np.empty((4, max(E, 1)), np.int32)
        out[0, :E] = nbr
        out[1, :E] = elab if elab.shape[0] else 0
        out[2, :E] = ins
        out[3, :E] = dl
        keep.append(out)
        return out

    i32, i64 = np.int32, np.int64
    T = np.zeros(T_SIZE, np.int64)
    o4 = over4(view.o_nbr, view.o_elab, view.o_ins, view.o_dl)
    p4 = o4 if view.oi_nbr is view.o_nbr else over4(view.oi_nbr, view.oi_elab,
                                                      view.oi_ins, view.oi_dl)
    has_lab = view.b_elab.shape[0] > 0
    for base, start, deg, nbr, elab in ((T_BS, view.b_start, view.b_deg, view.b_nbr,
                                         view.b_elab),
                                        (T_IS, view.bi_start, view.bi_deg, view.bi_nbr,
                                         view.bi_elab)):
        T[base] = _addr(c(start, i64))
        T[base + 1] = _addr(c(deg, i32))
        T[base + 2] = _addr(c(nbr, i32))
        T[base + 3] = _addr(c(elab, i32)) if has_lab else 0
    for base, idx, off, four in ((T_OX, view.o_idx, view.o_off, o4),
                                 (T_PX, view.oi_idx, view.oi_off, p4)):
        T[base] = _addr(c(idx, i32))
        T[base + 1] = _addr(c(off, i64))
        T[base + 2] = _addr(four)
        T[base + 3] = four.shape[1]
    T[T_MASK] = _addr(c(mask, np.uint64))
    T[T_NS] = int(view.b_start.shape[0])
    T.flags.writeable = False
    return T


# The plan program: pg[0] = k, pg[1] = number of plans, pg[HEAD + s] = start of segment
# s; per-plan rows of k (or k + 1) values, the flat bn/na/res arrays as they are.
HEAD = 2
(S_ORDER, S_PVL, S_BNPTR, S_BNPOS, S_BNDIR, S_BNEL, S_NAPTR, S_NAPOS, S_NADIR, S_RESPTR,
 S_RESPOS, S_RESSIGN, S_KIND, S_PEL, S_GS, S_GCOMP, S_GTWIN, S_LEAF, S_GDEP, S_GNC, S_GCF,
 S_GCS, S_GSUB, S_PATH) = range(24)
NSEG = 24
#: :data:`S_GSUB` values: matched position ``i`` cannot be a candidate of group depth ``d``
#: (a backward neighbour, or labels that differ); is one whenever it passes the mask and
#: the bounds (the query joins it to every backward neighbour of ``d`` the same way);
#: needs the full test
SUB_NEVER, SUB_ADJ, SUB_TEST = 0, 1, 2


def _leaves(plans) -> np.ndarray:
    """``[P, k]``: 1 where the query vertex is an unlabelled leaf (one query edge): every
    neighbour of its one backward vertex passes its filter mask (degree >= 1), so a
    counting group may count it from the length of that row."""
    q = plans.query
    leaf = np.zeros((plans.num_plans, plans.k), dtype=np.int64)
    if q is None:
        return leaf
    A = q.adjacency()
    deg = (A | A.T).sum(axis=1)
    ok = (deg == 1) & (np.asarray(q.vertex_labels) == -1)
    return ok[np.asarray(plans.order)].astype(np.int64)


def _query_edges(plans) -> dict:
    """``{(x, y): label}`` of the query's edges (query vertex ids; both ways round when
    undirected), ``{}`` without a query."""
    q = plans.query
    if q is None:
        return {}
    out = {}
    for (a, b), lab in zip(np.asarray(q.edges).tolist(), np.asarray(q.edge_labels).tolist()):
        out[(a, b)] = lab
        if not plans.directed:
            out[(b, a)] = lab
    return out


def _group_tables(plans) -> tuple[np.ndarray, ...]:
    """What the group count would otherwise work out per call (:mod:`._cpu_group`):
    ``dep[j, d]``, the deepest matched position a group depth's candidates depend on
    (backward neighbours and restrictions, at least 1); ``nc[j]``, the number of
    collision sets; ``first[j, c]`` and ``size[j, c]`` of each; ``sub[j, d, i]``, how
    a matched position ``i`` may be one of group depth ``d``'s candidates (``SUB_*``).

    ``SUB_ADJ``: for every backward edge ``M[b] -> c`` (or ``c -> M[b]``) of ``d``
    with label ``lab``, the query has that edge between ``b`` and ``i`` the same way
    round with label ``lab`` (or ``lab`` is any), so the matched ``M[i]`` is joined to
    ``M[b]`` as ``d`` must be; only the mask and the bounds are left to test
    (never for induced plans, whose non-adjacency rules involve the data)."""
    P, k = plans.num_plans, int(plans.k)
    dep = np.ones((P, k), np.int64)
    nc = np.zeros(P, np.int64)
    first = np.full((P, k), -1, np.int64)
    size = np.zeros((P, k), np.int64)
    sub = np.full((P, k, k), SUB_TEST, np.int64)
    bn_ptr, bn_pos = np.asarray(plans.bn_ptr), np.asarray(plans.bn_pos)
    bn_dir, bn_el = np.asarray(plans.bn_dir), np.asarray(plans.bn_elabel)
    res_ptr, res_pos = np.asarray(plans.res_ptr), np.asarray(plans.res_pos)
    gcomp = np.asarray(plans.gcomp)
    order, pvl = np.asarray(plans.order), np.asarray(plans.vlabel)
    qedges = _query_edges(plans)
    for j in range(P):
        gs = int(plans.group_start[j])
        for d in range(gs, k):
            bts = range(int(bn_ptr[j, d]), int(bn_ptr[j, d + 1]))
            back = {int(bn_pos[t]) for t in bts}
            res = [int(x) for x in res_pos[res_ptr[j, d]:res_ptr[j, d + 1]]]
            dep[j, d] = max([1, *back, *res])
            for i in range(gs):
                if i in back or (
                        pvl[j, d] != -1 and pvl[j, i] != -1 and pvl[j, d] != pvl[j, i]):
                    sub[j, d, i] = SUB_NEVER
                    continue
                if plans.induced or not qedges:
                    continue
                adj = True
                for t in bts:
                    b, lab = int(bn_pos[t]), int(bn_el[t])
                    qi, qb = int(order[j, i]), int(order[j, b])
                    key = (qb, qi) if bn_dir[t] == 0 else (qi, qb)
                    if key not in qedges or (lab != -1 and qedges[key] != lab):
                        adj = False
                        break
                if adj:
                    sub[j, d, i] = SUB_ADJ
            c = int(gcomp[j, d])
            if c < 0:
                continue
            nc[j] = max(nc[j], c + 1)
            if first[j, c] < 0:
                first[j, c] = d
            size[j, c] += 1
    return dep, nc, first, size, sub


def path_plans(plans) -> np.ndarray:
    """``[P]``: 1 where plan ``j`` ends in a *path* that :func:`._cpu_group.path_count`
    counts without enumerating its last core depth.

    The shape: one group vertex ``g`` (depth ``k - 1``) whose two backward edges go
    to the last core depth ``d = k - 2`` and to an earlier depth ``x1``; ``d`` has a
    single backward edge, to a depth ``x0 < d - 1``, so that its candidates (all of
    ``M[x0]``'s row) stay the same while the depths between ``x0`` and ``d`` change;
    no restriction and no non-adjacency on ``d`` or ``g``. The house's plans for its
    roof edges have it: ``Σ_{c ∈ N(M[0])} |N(c) ∩ N(M[2])|`` for every ``M[2]``
    becomes one count per ``M[0]`` of how many of its neighbours each vertex is
    adjacent to, and one sum over ``N(M[2])`` per ``M[2]``.
    """
    P, k = plans.num_plans, int(plans.k)
    out = np.zeros(P, np.int64)
    if plans.induced or k < 5:
        return out
    bn_ptr, bn_pos = np.asarray(plans.bn_ptr), np.asarray(plans.bn_pos)
    res_ptr, na_ptr = np.asarray(plans.res_ptr), np.asarray(plans.na_ptr)
    for j in range(P):
        if int(plans.group_start[j]) != k - 1:
            continue
        d, g = k - 2, k - 1
        if any(int(a[j, x + 1]) != int(a[j, x]) for a in (res_ptr, na_ptr) for x in (d, g)):
            continue
        bd = [int(x) for x in bn_pos[bn_ptr[j, d]:bn_ptr[j, d + 1]]]
        bg = [int(x) for x in bn_pos[bn_ptr[j, g]:bn_ptr[j, g + 1]]]
        if len(bd) == 1 and bd[0] < d - 1 and len(bg) == 2 and d in bg and bg[0] != bg[1]:
            out[j] = 1
    return out


def pack_plans(plans) -> np.ndarray:
    """The delta plans as one read-only int32 program (segments ``S_*``)."""
    k = int(plans.k)
    parts = [plans.order, plans.vlabel, plans.bn_ptr, plans.bn_pos, plans.bn_dir,
             plans.bn_elabel, plans.na_ptr, plans.na_pos, plans.na_dir, plans.res_ptr,
             plans.res_pos, plans.res_sign, plans.pair_kind, plans.pair_elabel,
             plans.group_start, plans.gcomp, plans.gtwin, _leaves(plans),
             *_group_tables(plans), path_plans(plans)]
    flat = [np.ascontiguousarray(a, dtype=np.int64).reshape(-1) for a in parts]
    out = np.empty(HEAD + NSEG + sum(f.size for f in flat), dtype=np.int64)
    out[0], out[1] = k, plans.num_plans
    pos = HEAD + NSEG
    for s, f in enumerate(flat):
        out[HEAD + s] = pos
        out[pos:pos + f.size] = f
        pos += f.size
    pg = out.astype(np.int32)
    pg.flags.writeable = False
    return pg


def has_path(pg: np.ndarray) -> bool:
    """Does a packed program hold a path plan (:func:`path_plans`)? Its kernels then need
    the per-worker tally array (``cnt``) even without local candidate sets."""
    start = int(pg[HEAD + S_PATH])
    return bool(pg[start:start + int(pg[1])].any())


@njit(cache=True, nogil=True, inline="always")
def pv(pg, seg, i):
    """Element ``i`` of segment ``seg`` of the plan program."""
    return np.int64(pg[pg[HEAD + seg] + i])


@njit(cache=True, nogil=True, inline="always")
def pjk(pg, seg, j, d):
    """``seg[j, d]`` of a ``[P, k]`` segment."""
    return np.int64(pg[pg[HEAD + seg] + j * pg[0] + d])


@njit(cache=True, nogil=True, inline="always")
def pjkk(pg, seg, j, d, i):
    """``seg[j, d, i]`` of a ``[P, k, k]`` segment."""
    k = np.int64(pg[0])
    return np.int64(pg[pg[HEAD + seg] + (j * k + d) * k + i])


@njit(cache=True, nogil=True, inline="always")
def pjk1(pg, seg, j, d):
    """``seg[j, d]`` of a ``[P, k + 1]`` segment (the ``*_ptr`` arrays)."""
    return np.int64(pg[pg[HEAD + seg] + j * (pg[0] + 1) + d])


# ------------------------------------------------------------- the estimator's helpers
@njit(cache=True, nogil=True, inline="always")
def _row(x, start, deg, idx, off):
    """``(overlay?, lo, hi)`` of vertex ``x``'s row in one direction."""
    r = idx[x]
    if r < 0:
        if x >= start.shape[0]:       # a vertex without storage row and untouched: no edges
            return 0, np.int64(0), np.int64(0)
        lo = np.int64(start[x])
        return 0, lo, lo + deg[x]
    return 1, np.int64(off[r]), np.int64(off[r + 1])


@njit(cache=True, nogil=True, inline="always")
def _search(ov, lo, hi, c, p, lab, nbr, elab, onbr, oelab, ins, dl):
    """Is ``c`` alive at state ``p`` in the row ``[lo, hi)`` (label ``lab``, -1 any)?

    ``ov == 0``: a storage row of ``nbr``/``elab``; else an overlay row of
    ``onbr``/``oelab`` whose entries live while ``ins < p <= dl``.
    """
    if ov == 0:
        q = _lower_bound(nbr, lo, hi, c)
        if q < hi and nbr[q] == c:
            if lab == -1:
                return True
            el = elab[q] if elab.shape[0] > 0 else 0
            return el == lab
        return False
    q = _lower_bound(onbr, lo, hi, c)
    while q < hi and onbr[q] == c:
        if ins[q] < p and p <= dl[q]:
            if lab == -1:
                return True
            el = oelab[q] if oelab.shape[0] > 0 else 0
            return el == lab
        q += 1
    return False


@njit(cache=True, nogil=True, inline="always")
def _pick_gen(d, j, M, bn_ptr, bn_pos, bn_dir, b_start, b_deg, bi_start, bi_deg,
              o_idx, o_off, oi_idx, oi_off):
    """The generating list of depth ``d`` of plan ``j``: the backward neighbour with the
    shortest row (overlay rows count every version, a fair estimate of the scan's cost).

    Returns ``(t, overlay?, lo, hi)``: the backward edge ``t`` and its row. The
    search's :func:`pick_gen` chooses the same row.
    """
    best = -1
    best_len = BIG
    bov = 0
    blo = np.int64(0)
    bhi = np.int64(0)
    for t in range(bn_ptr[j, d], bn_ptr[j, d + 1]):
        x = M[bn_pos[t]]
        if bn_dir[t] == 0:
            ov, lo, hi = _row(x, b_start, b_deg, o_idx, o_off)
        else:
            ov, lo, hi = _row(x, bi_start, bi_deg, oi_idx, oi_off)
        if hi - lo < best_len:
            best_len = hi - lo
            best = t
            bov = ov
            blo = lo
            bhi = hi
    return best, bov, blo, bhi


# ------------------------------------------------------------------ the search's rows
@njit(cache=True, nogil=True, inline="always")
def mask_bit(T, c, u):
    """Does the filter's mask let data vertex ``c`` be query vertex ``u``?"""
    return (ldu64(T[T_MASK], c) >> np.uint64(u)) & np.uint64(1) != 0


@njit(cache=True, nogil=True, inline="always")
def row_of(T, x, dr):
    """``(overlay?, lo, hi)`` of ``x``'s out-row (``dr == 0``) or in-row."""
    o = T_OX + T_DIR_O * dr
    r = ld32(T[o], x)
    if r < 0:
        if x >= T[T_NS]:            # a vertex without storage row and untouched: no edges
            return 0, np.int64(0), np.int64(0)
        s = T_BS + T_DIR_S * dr
        lo = ld64(T[s], x)
        return 0, lo, lo + ld32(T[s + 1], x)
    return 1, ld64(T[o + 1], r), ld64(T[o + 1], r + 1)


@njit(cache=True, nogil=True, inline="always")
def row_ptrs(T, ov, dr):
    """Addresses of a row kind's neighbours, labels (0: none), insertions, deletions."""
    if ov == 0:
        s = T_BS + T_DIR_S * dr
        return T[s + 2], T[s + 3], np.int64(0), np.int64(0)
    o = T_OX + T_DIR_O * dr
    four = T[o + 2]
    E = T[o + 3]
    return four, four + 4 * E, four + 8 * E, four + 12 * E


@njit(cache=True, nogil=True, inline="always")
def _entry_ok(z, ov, p, lab, lab_p, ins_p, dl_p):
    """Is entry ``z`` alive at ``p`` with label ``lab`` (-1 any; no label array: 0)?"""
    if ov != 0 and not (ld32(ins_p, z) < p and p <= ld32(dl_p, z)):
        return False
    if lab != -1:
        el = ld32(lab_p, z) if lab_p != 0 else 0
        return el == lab
    return True


@njit(cache=True, nogil=True, inline="always")
def _lower(nbr_p, lo, hi, x):
    """First position in ``[lo, hi)`` with a neighbour ``>= x``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if ld32(nbr_p, mid) < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True, inline="always")
def gallop(nbr_p, lo, hi, x):
    """Like :func:`_lower`, probing 1, 2, 4, ... steps from ``lo`` (a cursor moving forward)."""
    if lo >= hi or ld32(nbr_p, lo) >= x:
        return lo
    prev = lo
    step = np.int64(1)
    while True:
        nxt = prev + step
        if nxt >= hi:
            return _lower(nbr_p, prev + 1, hi, x)
        if ld32(nbr_p, nxt) >= x:
            return _lower(nbr_p, prev + 1, nxt, x)
        prev = nxt
        step <<= 1


@njit(cache=True, nogil=True, inline="always")
def alive_at(q, hi, c, ov, p, lab, nbr_p, lab_p, ins_p, dl_p):
    """Does a version of ``c`` from position ``q`` on (the first ``>= c``) live at ``p``
    with label ``lab``?"""
    while q < hi and ld32(nbr_p, q) == c:
        if _entry_ok(q, ov, p, lab, lab_p, ins_p, dl_p):
            return True
        q += 1
    return False


@njit(cache=True, nogil=True, inline="always")
def has_edge(T, x, dr, c, p, lab):
    """``dr == 0``: edge ``x -> c`` alive at ``p`` (label ``lab``, -1 any);
    ``dr == 1``: edge ``c -> x`` (the in-row of ``x``)."""
    ov, lo, hi = row_of(T, x, dr)
    nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ov, dr)
    q = _lower(nbr_p, lo, hi, c)
    return alive_at(q, hi, c, ov, p, lab, nbr_p, lab_p, ins_p, dl_p)


@njit(cache=True, nogil=True, inline="always")
def next_entry(z, end, ov, glab, hiv, p, nbr_p, lab_p, ins_p, dl_p):
    """The next entry of a scan at position ``z``, alive at ``p`` with label ``glab``.

    Returns ``(candidate or -1, next position)``; a position ``end`` when the
    scan is over (the row is exhausted or the bound ``hiv`` is reached).
    """
    while z < end:
        c = ld32(nbr_p, z)
        if c >= hiv:
            return np.int64(-1), end
        z += 1
        if _entry_ok(z - 1, ov, p, glab, lab_p, ins_p, dl_p):
            return c, z
    return np.int64(-1), end


@njit(cache=True, nogil=True, inline="always")
def bounds(pg, j, d, M):
    """``(lo, hi)``: depth ``d``'s candidates must satisfy ``lo < c < hi``
    (symmetry-breaking restrictions; ``-1`` and ``BIG`` when there are none)."""
    lo_val = np.int64(-1)
    hi_val = BIG
    for t in range(pjk1(pg, S_RESPTR, j, d), pjk1(pg, S_RESPTR, j, d + 1)):
        mj = M[pv(pg, S_RESPOS, t)]
        if pv(pg, S_RESSIGN, t) > 0:
            if mj > lo_val:
                lo_val = mj
        elif mj < hi_val:
            hi_val = mj
    return lo_val, hi_val


@njit(cache=True, nogil=True, inline="always")
def gen_list(T, pg, j, d, M):
    """The scan of depth ``d``: ``(gen edge, overlay?, lo, hi, hi_val)``.

    The generating list is the backward neighbour's shortest row (as
    :func:`_pick_gen`); the restrictions clip it: ``c > M[x]`` moves ``lo`` by
    binary search, ``c < M[y]`` becomes ``hi_val``, where the scan stops.
    """
    lo_val, hi_val = bounds(pg, j, d, M)
    best = -1
    best_len = BIG
    bov = 0
    blo = np.int64(0)
    bhi = np.int64(0)
    for t in range(pjk1(pg, S_BNPTR, j, d), pjk1(pg, S_BNPTR, j, d + 1)):
        ov, lo, hi = row_of(T, M[pv(pg, S_BNPOS, t)], pv(pg, S_BNDIR, t))
        if hi - lo < best_len:
            best_len = hi - lo
            best = t
            bov = ov
            blo = lo
            bhi = hi
    if lo_val >= 0 and blo < bhi:
        nbr_p, _l, _i, _d = row_ptrs(T, bov, pv(pg, S_BNDIR, best))
        blo = _lower(nbr_p, blo, bhi, lo_val + 1)
    if hi_val <= lo_val + 1:
        blo = bhi
    return best, bov, blo, bhi, hi_val


@njit(cache=True, nogil=True, inline="always")
def accept(T, pg, d, nm, c, skip, j, p, M):
    """Rules 1, 4-7 of the Plan contract for candidate ``c`` at depth ``d`` of plan ``j``.

    ``M[0..nm-1]`` are matched (``nm == d`` in the search; 0 skips the
    injectivity test). ``skip`` is the backward edge whose list generated ``c``
    (already known to hold, label included), or -1. The label test is the bit
    of the query vertex in the filter's mask (:mod:`warpmatch.stream.filter`):
    label, degree and neighbour labels at once. The backward edges (which must
    exist) and, for induced plans, the non-adjacent pairs (which must not) go
    through one edge test, so that each inlined copy holds one search.
    """
    if not mask_bit(T, c, pjk(pg, S_ORDER, j, d)):
        return False
    for jj in range(nm):
        if M[jj] == c:
            return False
    for t in range(pjk1(pg, S_RESPTR, j, d), pjk1(pg, S_RESPTR, j, d + 1)):
        mj = M[pv(pg, S_RESPOS, t)]
        if pv(pg, S_RESSIGN, t) > 0:
            if c <= mj:
                return False
        elif c >= mj:
            return False
    b_lo = pjk1(pg, S_BNPTR, j, d)
    nb = pjk1(pg, S_BNPTR, j, d + 1) - b_lo
    n_lo = pjk1(pg, S_NAPTR, j, d)
    na = pjk1(pg, S_NAPTR, j, d + 1) - n_lo
    for e in range(nb + na):
        if e < nb:
            t = b_lo + e
            if t == skip:
                continue
            x = M[pv(pg, S_BNPOS, t)]
            dr = pv(pg, S_BNDIR, t)
            lab = pv(pg, S_BNEL, t)
        else:
            t = n_lo + e - nb
            x = M[pv(pg, S_NAPOS, t)]
            dr = pv(pg, S_NADIR, t)
            lab = np.int64(-1)
        if has_edge(T, x, dr, c, p, lab) != (e < nb):
            return False
    return True


@njit(cache=True, nogil=True)
def accept_call(T, pg, d, nm, c, skip, j, p, M):
    """:func:`accept` as a call, for the places that test few candidates (each inlined
    copy costs about a second of compilation)."""
    return accept(T, pg, d, nm, c, skip, j, p, M)
