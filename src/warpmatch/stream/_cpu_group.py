"""numba kernels that count a delta plan's counting group from candidate-set sizes.

Map: :func:`_partition_tables` (set partitions and Möbius coefficients, built at
import) < :func:`_mobius` (one collision set, from :func:`_member`'s lists) <
:func:`group_count` (the whole group of one partial match); :func:`path_count`
(a path plan's last core depth and group vertex together, with :func:`_tally`
and :func:`path_done`). Used by :mod:`warpmatch.stream._cpu_delta`.

The counting group (:mod:`warpmatch.stream.delta`) is a set of query vertices,
pairwise non-adjacent, whose backward neighbours are all matched: given the
core match ``M``, each has a candidate set ``C_u`` and the group's count is the
number of injective assignments. Sets whose labels cannot collide multiply;
twins (identical candidates) give a falling factorial; any other collision
set of ``g <= GROUP_MAX`` vertices is counted by Möbius inversion over the set
partitions of its members (inclusion–exclusion of the intersections).
DESIGN.md: count mode never enumerates what it can count.

A *path plan* (:func:`~warpmatch.stream._cpu_rows.path_plans`) goes one step
further: its last core depth ``d`` is not enumerated either. Its candidates
depend on one earlier vertex only, so ``Σ_{c ∈ C_d} |C_g(c)|`` is summed the
other way round, over the group vertex's candidates, from a tally of how many
candidates of ``d`` each vertex is adjacent to, built once per value of that
earlier vertex instead of one intersection per partial match. Neither GCSM nor
RapidFlow does this; RapidFlow enumerates ``d`` and counts only the last level.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engine._borrow import borrow
from ._cpu_local import ABASE, AGEN, CDR, CHI, COV, CST, CUR, FLG, GKEY, GVAL, MIDX, STAMP
from ._cpu_rows import (BIG, S_BNDIR, S_BNEL, S_BNPOS, S_BNPTR, S_GCF, S_GCOMP, S_GCS, S_GDEP,
                        S_GNC, S_GSUB, S_GTWIN, S_LEAF, S_ORDER, SUB_ADJ, SUB_NEVER, _lower,
                        accept, accept_call, alive_at, bounds, gallop, gen_list, has_edge,
                        mask_bit, next_entry, pjk, pjk1, pjkk, pv, row_of, row_ptrs)
from .delta import GROUP_MAX

INT64_MAX = np.int64(2**63 - 1)
#: an upper bound above every vertex id (ids are int32)
BIG_ID = np.int64(1) << np.int64(40)


def _partition_tables(gmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Set partitions of ``{0..g-1}`` for ``g = 0..gmax`` with their Möbius coefficients.

    The number of injective maps of ``g`` vertices with candidate sets ``C_i`` is
    ``Σ_π Π_{B ∈ π} (-1)^{|B|-1} (|B|-1)! |∩_{i ∈ B} C_i|`` over the set partitions
    ``π`` (Möbius inversion on the partition lattice; for two sets
    ``|C_1||C_2| - |C_1 ∩ C_2|``). Returns ``start[g]`` (first partition of size
    ``g``, ``start[gmax + 1]`` the end), ``nblocks``, ``blocks`` (bit masks, one row
    per partition) and ``coef``.
    """
    start, nb, blocks, coef = [], [], [], []

    def parts(items: list[int]) -> list[list[list[int]]]:
        if not items:
            return [[]]
        head, rest = items[0], items[1:]
        out = []
        for p in parts(rest):
            out.append([[head]] + p)
            for i in range(len(p)):
                out.append(p[:i] + [[head] + p[i]] + p[i + 1:])
        return out

    for g in range(gmax + 1):
        start.append(len(coef))
        for p in parts(list(range(g))):
            c = 1
            row = [0] * max(gmax, 1)
            for i, blk in enumerate(p):
                c *= (-1) ** (len(blk) - 1) * math.factorial(len(blk) - 1)
                row[i] = sum(1 << x for x in blk)
            nb.append(len(p))
            blocks.append(row)
            coef.append(c)
    start.append(len(coef))
    return (np.array(start, np.int64), np.array(nb, np.int64),
            np.array(blocks, np.int64).reshape(len(coef), max(gmax, 1)),
            np.array(coef, np.int64))


_P_START, _P_NB, _P_BLOCKS, _P_COEF = _partition_tables(GROUP_MAX)


@njit(cache=True, nogil=True, inline="always")
def _mul(a, b, err):
    """``a * b`` for counts (non-negative); sets ``err[0]`` on int64 overflow."""
    if a == 0 or b == 0:
        return np.int64(0)
    if a > INT64_MAX // b:
        err[0] = 1
        return np.int64(0)
    return a * b


@njit(cache=True, nogil=True)
def _in_sorted(arr, row, n, x):
    """Is ``x`` in the sorted ``arr[row, :n]``?"""
    lo = np.int64(0)
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[row, mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo < n and arr[row, lo] == x


@njit(cache=True, nogil=True)
def _both(arr, a, na, b, nb):
    """``|arr[a, :na] ∩ arr[b, :nb]|`` of two sorted rows: a merge where the lengths are
    close, else a binary search of the shorter row's entries in the longer."""
    if na > nb:
        a, na, b, nb = b, nb, a, na
    both = np.int64(0)
    if na * 8 < nb:
        for q in range(na):
            if _in_sorted(arr, b, nb, arr[a, q]):
                both += 1
        return both
    x = np.int64(0)
    y = np.int64(0)
    while x < na and y < nb:
        va = arr[a, x]
        vb = arr[b, y]
        if va < vb:
            x += 1
        elif vb < va:
            y += 1
        else:
            both += 1
            x += 1
            y += 1
    return both


@njit(cache=True, nogil=True)
def _mobius(pg, j, gs, g, sel, gbuf, glen, M, err):
    """Injective assignments of ``g`` group vertices, member ``i`` at depth ``gs + sel[i]``
    with the raw candidate list ``gbuf[sel[i], :glen[sel[i]]]`` (sorted, not yet
    injective against the matched ``M[:gs]``).

    The intersections of the raw lists are counted first; a matched vertex that lies
    in every list of a subset is then taken off that subset's size (so the counts
    are those of the lists less ``M``), and Möbius inversion gives the total.
    """
    # borrowed (engine/_borrow.py): no reference counts in the loops below
    pg, sel, gbuf, glen = borrow(pg), borrow(sel), borrow(gbuf), borrow(glen)
    M, err = borrow(M), borrow(err)
    if g == 2:                          # |C_0| |C_1| - |C_0 ∩ C_1|, no scratch array
        a, b = sel[0], sel[1]
        both = _both(gbuf, a, glen[a], b, glen[b])
        na, nb = glen[a], glen[b]
        for i in range(gs):
            ia = (pjkk(pg, S_GSUB, j, gs + a, i) != SUB_NEVER
                  and _in_sorted(gbuf, a, glen[a], M[i]))
            ib = (pjkk(pg, S_GSUB, j, gs + b, i) != SUB_NEVER
                  and _in_sorted(gbuf, b, glen[b], M[i]))
            if ia:
                na -= 1
            if ib:
                nb -= 1
            if ia and ib:
                both -= 1
        return _mul(na, nb, err) - both
    # memb[i]: the members whose raw list holds M[i] (SUB_NEVER: it cannot)
    memb = np.zeros(gs, np.int64)
    for i in range(gs):
        for r in range(g):
            row = sel[r]
            if (pjkk(pg, S_GSUB, j, gs + row, i) != SUB_NEVER
                    and _in_sorted(gbuf, row, glen[row], M[i])):
                memb[i] |= np.int64(1) << np.int64(r)
    inter = np.zeros(1 << g, np.int64)
    for msk in range(1, 1 << g):
        # the smallest member list drives the intersection; the others are searched
        base = -1
        for r in range(g):
            if (msk >> r) & 1 and (base < 0 or glen[sel[r]] < glen[sel[base]]):
                base = r
        if msk == (1 << base):
            cnt = glen[sel[base]]
        else:
            cnt = np.int64(0)
            rb = sel[base]
            for q in range(glen[rb]):
                x = gbuf[rb, q]
                ok = True
                for r in range(g):
                    if (r != base and (msk >> r) & 1
                            and not _in_sorted(gbuf, sel[r], glen[sel[r]], x)):
                        ok = False
                        break
                if ok:
                    cnt += 1
        for i in range(gs):
            if memb[i] & msk == msk:
                cnt -= 1
        inter[msk] = cnt
    total = np.int64(0)
    for pi in range(_P_START[g], _P_START[g + 1]):
        term = _P_COEF[pi]
        neg = term < 0
        term = -term if neg else term
        for bi in range(_P_NB[pi]):
            term = _mul(term, inter[_P_BLOCKS[pi, bi]], err)
        total = total - term if neg else total + term
    if total < 0:            # pragma: no cover - an exact count is never negative
        err[0] = 2
        return np.int64(0)
    return total


@njit(cache=True, nogil=True, inline="always")
def _scan(T, pg, d, nm, j, p, M, mark, flag, ls, cbuf, aoff, aent):
    """How many candidates group depth ``d`` has (injective against ``M[:nm]`` only).

    An unlabelled leaf is counted from its row's length (:func:`_leaf`); several
    backward rows are intersected (:func:`_intersect`); otherwise one list is
    scanned (:func:`_list`). Each is its own compiled function: one inlined
    copy of all three took seconds to compile.
    """
    lo_val, hiv = bounds(pg, j, d, M)
    b_lo = pjk1(pg, S_BNPTR, j, d)
    nbk = pjk1(pg, S_BNPTR, j, d + 1) - b_lo
    if mark.shape[0] == 0:
        if nbk == 1 and lo_val < 0 and hiv == BIG and pjk(pg, S_LEAF, j, d):
            return _leaf(T, pg, d, nm, j, p, M)
        if nbk > 1:
            return _intersect(T, pg, d, nm, j, p, M, flag, ls, lo_val, hiv, ls, -1)
    return _list(T, pg, d, nm, j, p, M, mark, ls, cbuf, aoff, aent, ls, -1)


@njit(cache=True, nogil=True)
def _leaf(T, pg, d, nm, j, p, M):
    """An unlabelled leaf's candidates: every entry of its one row alive at ``p`` (with
    the edge's label), less the matched vertices in it (RapidFlow counts its last
    level the same way)."""
    pg, M = borrow(pg), borrow(M)
    b_lo = pjk1(pg, S_BNPTR, j, d)
    dr = pv(pg, S_BNDIR, b_lo)
    lab = pv(pg, S_BNEL, b_lo)
    ov, lo, hi = row_of(T, M[pv(pg, S_BNPOS, b_lo)], dr)
    nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ov, dr)
    if ov == 0 and (lab == -1 or lab_p == 0):
        cnt = hi - lo
    else:
        cnt = np.int64(0)
        z = lo
        while z < hi:
            c, z = next_entry(z, hi, ov, lab, BIG_ID, p, nbr_p, lab_p, ins_p, dl_p)
            if c < 0:
                break
            cnt += 1
    for jj in range(nm):
        q = _lower(nbr_p, lo, hi, M[jj])
        if alive_at(q, hi, M[jj], ov, p, lab, nbr_p, lab_p, ins_p, dl_p):
            cnt -= 1
    return cnt


@njit(cache=True, nogil=True, inline="always")
def _source(T, pg, j, d, M, local, ls, aoff, hiv):
    """Where depth ``d``'s candidates come from: ``(g, gov, lo, hi, hiv, glab, base,
    dbit)``, the generating backward edge ``g`` and the range of its list, either the
    local adjacency list of a local candidate space (``local``: entries at ``base``,
    flag bit ``dbit``) or the shortest backward row (edge label ``glab``; ``hiv`` as
    :func:`gen_list` clips it)."""
    if local:
        g = ls[AGEN, d]
        b0 = pv(pg, S_BNPOS, g)
        a = ls[ABASE, d] + (0 if b0 < 2 else ls[MIDX, b0])
        return (g, 0, aoff[a], aoff[a + 1], hiv, np.int64(-1), ls[CST, d],
                np.uint64(1) << np.uint64(d))
    g, gov, lo, hi, hiv = gen_list(T, pg, j, d, M)
    return g, gov, lo, hi, hiv, pv(pg, S_BNEL, g), np.int64(0), np.uint64(0)


@njit(cache=True, nogil=True)
def _list(T, pg, d, nm, j, p, M, mark, ls, cbuf, aoff, aent, out, orow):
    """Candidates of depth ``d`` from one list: its local adjacency list in a local
    candidate space (``mark`` not empty), else its shortest backward row; every
    other rule by :func:`accept`. They are written, in order, to ``out[orow]`` when
    ``orow >= 0`` (``out`` must hold as many as that list)."""
    pg, M, mark = borrow(pg), borrow(M), borrow(mark)
    ls, cbuf, aoff = borrow(ls), borrow(cbuf), borrow(aoff)
    aent, out = borrow(aent), borrow(out)
    lo_val, hiv = bounds(pg, j, d, M)
    local = mark.shape[0] > 0
    g, gov, lo, hi, hiv, glab, base, dbit = _source(T, pg, j, d, M, local, ls, aoff, hiv)
    nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, gov, pv(pg, S_BNDIR, g))
    cnt = np.int64(0)
    z = lo
    while z < hi:
        if local:
            c = np.int64(cbuf[base + aent[z]])
            z += 1
            if c >= hiv:
                break
            if c <= lo_val or mark[c] & dbit == 0:
                continue
        else:
            c, z = next_entry(z, hi, gov, glab, hiv, p, nbr_p, lab_p, ins_p, dl_p)
            if c < 0:
                break
        if accept(T, pg, d, nm, c, g, j, p, M):
            if orow >= 0:
                out[orow, cnt] = c
            cnt += 1
    return cnt


@njit(cache=True, nogil=True)
def _intersect(T, pg, d, nm, j, p, M, flag, ls, lo_val, hiv, out, orow):
    """Candidates of depth ``d`` by intersecting its backward rows (written, in order, to
    ``out[orow]`` when ``orow >= 0``; ``out`` must hold as many as the shortest row).

    The row of the shallowest backward vertex (usually an endpoint of the
    update, the same for many partial matches) is *flagged* once in the
    worker's tag array ``flag`` and reused while that vertex stays (``ls[FLG]``
    remembers which row the tags hold), intersected with the rows of vertices
    matched with it (the update's other endpoint) when a row is left to drive;
    the shortest other row drives, one tag load per entry; any further row keeps
    a cursor that only moves forward (galloping, the static engine's
    intersection). So ``|N(x) ∩ N(y)|`` for a fixed ``x`` costs ``|N(y)|``
    loads, not a binary search per entry, and a 4-clique's last vertex
    ``|N(a) ∩ N(b) ∩ N(c)|`` for the update ``(a, b)`` costs one tag load per entry
    of the shorter of ``N(b)``, ``N(c)`` and no gallop when ``N(c)`` drives. Counts
    the candidates the mask allows, within the restriction bounds, injective
    against ``M[:nm]``.
    """
    pg, M, flag, ls, out = borrow(pg), borrow(M), borrow(flag), borrow(ls), borrow(out)
    b_lo = pjk1(pg, S_BNPTR, j, d)
    nbk = pjk1(pg, S_BNPTR, j, d + 1) - b_lo
    fe = -1                          # the flagged edge
    shallow = BIG_ID
    for e in range(nbk):
        t = b_lo + e
        dr = pv(pg, S_BNDIR, t)
        ov, lo, hi = row_of(T, M[pv(pg, S_BNPOS, t)], dr)
        ls[CUR, e] = lo
        ls[CHI, e] = hi
        ls[COV, e] = ov
        ls[CDR, e] = dr
        if flag.shape[0] > 1 and pv(pg, S_BNPOS, t) < shallow:
            shallow = pv(pg, S_BNPOS, t)
            fe = e
    tag = np.int64(0)
    inf = np.int64(0)                # bit e: row e is intersected into the flagged row's tags
    if fe >= 0:
        key = ls[STAMP, shallow]
        # rows of vertices matched together with the flagged one (the update edge's two
        # endpoints share a stamp: fixed for the whole task) are intersected into the
        # tags too, once, when a row is left to drive: a 4-clique's last vertex then
        # reads one row per partial match (one tag load an entry) instead of driving
        # with one endpoint's row and galloping in the other's
        if nbk <= 62:                # (a bit per row)
            for e in range(nbk):
                if e != fe and ls[STAMP, pv(pg, S_BNPOS, b_lo + e)] == key:
                    inf |= np.int64(1) << np.int64(e)
            if inf == (np.int64(1) << np.int64(nbk)) - 1 - (np.int64(1) << np.int64(fe)):
                inf = np.int64(0)    # no row left to drive: the flagged row alone
        if ls[FLG, 0] != d or ls[FLG, 1] != key:
            # tag the flagged row's entries alive at p with the edge's label; the tag
            # counter lives in the array's last slot (a fresh tag never matches)
            top = flag.shape[0] - 1
            tag = np.int64(flag[top]) + 1
            if tag >= 2147483000:    # (int32 tags; the intersection adds up to nbk - 1)
                flag[:] = 0
                tag = 1
            flag[top] = tag
            nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ls[COV, fe], ls[CDR, fe])
            flab = pv(pg, S_BNEL, b_lo + fe)
            z = ls[CUR, fe]
            while z < ls[CHI, fe]:
                c, z = next_entry(z, ls[CHI, fe], ls[COV, fe], flab, BIG_ID, p, nbr_p, lab_p,
                                  ins_p, dl_p)
                if c < 0:
                    break
                flag[c] = tag
            for e in range(nbk):
                if inf == 0 or (inf >> np.int64(e)) & 1 == 0:
                    continue
                # entries of row e tagged so far move to the next tag; the others keep
                # an older one, which no longer matches
                nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ls[COV, e], ls[CDR, e])
                elab = pv(pg, S_BNEL, b_lo + e)
                z = ls[CUR, e]
                while z < ls[CHI, e]:
                    c, z = next_entry(z, ls[CHI, e], ls[COV, e], elab, BIG_ID, p, nbr_p,
                                      lab_p, ins_p, dl_p)
                    if c < 0:
                        break
                    if flag[c] == tag:
                        flag[c] = tag + 1
                tag += 1
                flag[top] = tag
            ls[FLG, 0] = d
            ls[FLG, 1] = key
            ls[FLG, 2] = tag
        tag = ls[FLG, 2]
    drv = -1
    for e in range(nbk):
        if e != fe and (drv < 0 or ls[CHI, e] - ls[CUR, e] < ls[CHI, drv] - ls[CUR, drv]):
            drv = e
    u = pjk(pg, S_ORDER, j, d)
    dov = ls[COV, drv]
    dnbr, dlab, dins, ddl = row_ptrs(T, dov, ls[CDR, drv])
    z = ls[CUR, drv]
    end = ls[CHI, drv]
    if lo_val >= 0:
        z = _lower(dnbr, z, end, lo_val + 1)
    glab = pv(pg, S_BNEL, b_lo + drv)
    cnt = np.int64(0)
    while z < end:
        c, z = next_entry(z, end, dov, glab, hiv, p, dnbr, dlab, dins, ddl)
        if c < 0:
            break
        if fe >= 0 and flag[c] != tag:
            continue
        if not mask_bit(T, c, u):
            continue
        ok = True
        for e in range(nbk):
            if e == drv or e == fe or (inf != 0 and (inf >> np.int64(e)) & 1):
                continue
            nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ls[COV, e], ls[CDR, e])
            q = gallop(nbr_p, ls[CUR, e], ls[CHI, e], c)
            ls[CUR, e] = q
            if q >= ls[CHI, e]:
                return cnt           # a row is exhausted: no later candidate is in it
            if not alive_at(q, ls[CHI, e], c, ls[COV, e], p, pv(pg, S_BNEL, b_lo + e), nbr_p,
                            lab_p, ins_p, dl_p):
                ok = False
                break
        if not ok:
            continue
        for jj in range(nm):
            if M[jj] == c:
                ok = False
                break
        if ok:
            if orow >= 0:
                out[orow, cnt] = c
            cnt += 1
    return cnt


@njit(cache=True, nogil=True)
def _cached(T, pg, d, j, p, gs, M, mark, flag, ls, cbuf, aoff, aent):
    """Candidates of group depth ``d`` injective against ``M[:gs]`` (see :func:`group_count`).

    One compiled copy, called by :func:`group_count` and by the search for a
    group of one vertex (inlined copies compiled for seconds each).
    """
    pg, M, mark = borrow(pg), borrow(M), borrow(mark)
    flag, ls, cbuf = borrow(flag), borrow(ls), borrow(cbuf)
    aoff, aent = borrow(aoff), borrow(aent)
    # the deepest matched vertex the candidate set depends on (pack_plans)
    key = ls[STAMP, pjk(pg, S_GDEP, j, d)]
    if ls[GKEY, d] == key:
        raw = ls[GVAL, d]
    else:
        raw = _scan(T, pg, d, 0, j, p, M, mark, flag, ls, cbuf, aoff, aent)
        ls[GKEY, d] = key
        ls[GVAL, d] = raw
    if raw == 0:
        return np.int64(0)
    # the matched vertices that are candidates themselves: never a backward neighbour
    # or another label; without a test of edges where the query already joins them to
    # the backward neighbours (pack_plans' SUB_* table)
    lo_val, hiv = bounds(pg, j, d, M)
    dbit = np.uint64(1) << np.uint64(d)
    u = pjk(pg, S_ORDER, j, d)
    for i in range(gs):
        how = pjkk(pg, S_GSUB, j, d, i)
        if how == SUB_NEVER:
            continue
        c = M[i]
        if c <= lo_val or c >= hiv:
            continue
        if mark.shape[0] > 0 and mark[c] & dbit == 0:
            continue
        if how == SUB_ADJ:
            if mask_bit(T, c, u):
                raw -= 1
        elif accept_call(T, pg, d, 0, c, -1, j, p, M):
            raw -= 1
    return raw


@njit(cache=True, nogil=True)
def _member(T, pg, d, j, p, M, mark, flag, ls, cbuf, aoff, aent, gbuf, r):
    """Group depth ``d``'s candidates, not injective against ``M`` (sorted), into
    ``gbuf[r]``: from its local adjacency list when the task built its local
    candidate space (``mark`` not empty), by :func:`_intersect` when it has several
    backward rows, else from its one row. Returns ``(count, gbuf)``: ``gbuf`` is
    replaced by a wider copy (every row kept) when the list may not fit."""
    pg, M, mark = borrow(pg), borrow(M), borrow(mark)
    flag, ls, cbuf = borrow(flag), borrow(ls), borrow(cbuf)
    aoff, aent = borrow(aoff), borrow(aent)
    local = mark.shape[0] > 0
    lo_val, hiv = bounds(pg, j, d, M)
    g, gov, lo, hi, hiv, glab, base, dbit = _source(T, pg, j, d, M, local, ls, aoff, hiv)
    if hi - lo > gbuf.shape[1]:
        wider = np.empty((gbuf.shape[0], max(hi - lo, 2 * gbuf.shape[1])), np.int64)
        wider[:, :gbuf.shape[1]] = gbuf
        gbuf = wider
    nbk = pjk1(pg, S_BNPTR, j, d + 1) - pjk1(pg, S_BNPTR, j, d)
    if not local and nbk > 1:
        return _intersect(T, pg, d, 0, j, p, M, flag, ls, lo_val, hiv, gbuf, r), gbuf
    return _list(T, pg, d, 0, j, p, M, mark, ls, cbuf, aoff, aent, gbuf, r), gbuf


@njit(cache=True, nogil=True)
def group_count(T, pg, j, p, gs, k, M, mark, flag, ls, cbuf, aoff, aent, gbuf, glen, err):
    """Injective assignments of the counting group (depths ``gs..k-1``) given ``M[:gs]``.

    A member's candidates come from its local adjacency list when the task
    built its local candidate space (``mark`` not empty), else from its rows. A
    member alone in its collision set (or a set of twins) is counted without
    the injectivity test and cached under the stamp of the deepest vertex its
    candidates depend on (``ls[STAMP]``): the next partial matches that share it
    only subtract the matched vertices that fall into the set (those with a
    label it can take). A member of a larger collision set keeps its list, not
    yet injective, in ``gbuf`` row ``d - gs`` under the same kind of stamp
    (:func:`_member`), and :func:`_mobius` takes the matched vertices off.
    Returns ``(count, gbuf)``: ``gbuf`` (one row per group depth) is replaced by a
    wider one when a list is longer than its rows; ``err[0]`` is set on an int64
    overflow.
    """
    # borrowed (engine/_borrow.py): no reference counts in the loops below
    pg, M, mark = borrow(pg), borrow(M), borrow(mark)
    flag, ls, cbuf = borrow(flag), borrow(ls), borrow(cbuf)
    aoff, aent, glen = borrow(aoff), borrow(aent), borrow(glen)
    err = borrow(err)
    total = np.int64(1)
    for cc in range(pv(pg, S_GNC, j)):
        size = pjk(pg, S_GCS, j, cc)
        first = pjk(pg, S_GCF, j, cc)
        if size == 1 or pjk(pg, S_GTWIN, j, first) == 1:
            # one vertex, or twins (the same candidates): X ... (X-size+1)
            x = _cached(T, pg, first, j, p, gs, M, mark, flag, ls, cbuf, aoff, aent)
            if x < size:
                return np.int64(0), gbuf
            for i in range(size):
                total = _mul(total, x - i, err)
            continue
        # each member's raw list (not injective) in gbuf row d - gs, kept while the
        # deepest matched vertex it depends on stays; Möbius takes the matched off
        sel = np.empty(GROUP_MAX, np.int64)     # (only here: most groups need no set)
        g = 0
        for d in range(gs, k):
            if pjk(pg, S_GCOMP, j, d) != cc:
                continue
            r = d - gs
            key = ls[STAMP, pjk(pg, S_GDEP, j, d)]
            if ls[GKEY, d] != key:
                glen[r], gbuf = _member(T, pg, d, j, p, M, mark, flag, ls, cbuf, aoff, aent,
                                        gbuf, r)
                ls[GKEY, d] = key
            if glen[r] == 0:
                return np.int64(0), gbuf
            sel[g] = r
            g += 1
        total = _mul(total, _mobius(pg, j, gs, size, sel, gbuf, glen, M, err), err)
        if total == 0:
            return np.int64(0), gbuf
    return total, gbuf


# ------------------------------------------------------------------ the path count
@njit(cache=True, nogil=True, inline="always")
def _path_edges(pg, j, d):
    """The path plan's edges (:func:`._cpu_rows.path_plans`): ``d``'s backward edge and
    the group vertex's edges from ``x1`` and from ``d``, as backward-edge indices."""
    t0 = pjk1(pg, S_BNPTR, j, d)
    tg = pjk1(pg, S_BNPTR, j, d + 1)
    if pv(pg, S_BNPOS, tg) == d:
        return t0, tg + 1, tg
    return t0, tg, tg + 1


@njit(cache=True, nogil=True)
def _tally(T, pg, j, p, d, v, cnt, sign):
    """``cnt[y] += sign`` once for every candidate ``c`` of depth ``d`` in ``v``'s row (its
    backward edge, the mask; not injective) and every ``y != c`` in ``c``'s row that the
    group vertex's edge from ``d`` allows: ``cnt[y]`` = how many such ``c`` are joined to
    ``y``. ``sign`` -1 takes a tally back (the rows are the same within a task)."""
    pg, cnt = borrow(pg), borrow(cnt)
    t0, t1, t2 = _path_edges(pg, j, d)
    u = pjk(pg, S_ORDER, j, d)
    dr0, lab0 = pv(pg, S_BNDIR, t0), pv(pg, S_BNEL, t0)
    dr2, lab2 = pv(pg, S_BNDIR, t2), pv(pg, S_BNEL, t2)
    ov, lo, hi = row_of(T, v, dr0)
    nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ov, dr0)
    z = lo
    while z < hi:
        c, z = next_entry(z, hi, ov, lab0, BIG_ID, p, nbr_p, lab_p, ins_p, dl_p)
        if c < 0:
            break
        if not mask_bit(T, c, u):
            continue
        ov2, lo2, hi2 = row_of(T, c, dr2)
        n2, l2, i2, d2 = row_ptrs(T, ov2, dr2)
        z2 = lo2
        while z2 < hi2:
            y, z2 = next_entry(z2, hi2, ov2, lab2, BIG_ID, p, n2, l2, i2, d2)
            if y < 0:
                break
            if y != c:
                cnt[y] += sign


@njit(cache=True, nogil=True)
def path_count(T, pg, j, p, d, M, cnt, ls):
    """Matches of a path plan's last core depth ``d`` and its group vertex ``g = d + 1``
    given ``M[:d]`` (:func:`._cpu_rows.path_plans`), without enumerating ``d``.

    ``Σ_{c ∈ C_d} |C_g(c)|`` is summed the other way round: the tally ``cnt[y]`` (how
    many candidates ``c`` of ``d``, not injective, are joined to ``y``;
    :func:`_tally`) is built once per vertex ``M[x0]`` (``ls[FLG, 3]`` holds its
    stamp, ``ls[FLG, 4]`` the vertex, so the task can take it back) and summed over
    ``g``'s candidates in ``M[x1]``'s row; then each matched vertex that is a candidate
    of ``d`` has its own share taken off. ``cnt`` is zero outside a task.
    """
    pg, M, cnt, ls = borrow(pg), borrow(M), borrow(cnt), borrow(ls)
    t0, t1, t2 = _path_edges(pg, j, d)
    x0 = pv(pg, S_BNPOS, t0)
    key = ls[STAMP, x0]
    if ls[FLG, 3] != key:
        if ls[FLG, 3] >= 0:
            _tally(T, pg, j, p, d, ls[FLG, 4], cnt, -1)
        _tally(T, pg, j, p, d, M[x0], cnt, 1)
        ls[FLG, 3] = key
        ls[FLG, 4] = M[x0]
    u = pjk(pg, S_ORDER, j, d)
    ug = pjk(pg, S_ORDER, j, d + 1)
    dr0, lab0 = pv(pg, S_BNDIR, t0), pv(pg, S_BNEL, t0)
    dr1, lab1 = pv(pg, S_BNDIR, t1), pv(pg, S_BNEL, t1)
    dr2, lab2 = pv(pg, S_BNDIR, t2), pv(pg, S_BNEL, t2)
    ov, lo, hi = row_of(T, M[pv(pg, S_BNPOS, t1)], dr1)
    nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ov, dr1)
    # the matched vertices that are candidates of d (bit i): their share comes off below
    cm = np.int64(0)
    for i in range(d):
        if mask_bit(T, M[i], u) and has_edge(T, M[x0], dr0, M[i], p, lab0):
            cm |= np.int64(1) << np.int64(i)
    total = np.int64(0)
    z = lo
    while z < hi:
        y, z = next_entry(z, hi, ov, lab1, BIG_ID, p, nbr_p, lab_p, ins_p, dl_p)
        if y < 0:
            break
        if not mask_bit(T, y, ug):
            continue
        ok = True
        for i in range(d):
            if M[i] == y:
                ok = False
                break
        if not ok:
            continue
        total += cnt[y]
        if cm == 0:
            continue
        for i in range(d):
            if (cm >> i) & 1 and M[i] != y and has_edge(T, M[i], dr2, y, p, lab2):
                total -= 1
    return total


@njit(cache=True, nogil=True)
def path_done(T, pg, j, p, cnt, ls):
    """Take back the task's tally (:func:`path_count`), if it built one: ``cnt`` is zero
    outside a task."""
    if ls[FLG, 3] >= 0:
        _tally(T, pg, j, p, pg[0] - 2, ls[FLG, 4], cnt, -1)
        ls[FLG, 3] = -1
