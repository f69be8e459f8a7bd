"""numba row access and candidate tests of the CPU delta engine, in a task's state ``S_p``.

Map: the packed arguments (:data:`View`, :func:`pack_plans` and the ``S_*``
segments of the plan program) < :func:`_row` (which row: storage or overlay) <
:func:`has` (is an edge alive at ``p``) < :func:`pick_gen` / :func:`gen_list`
(the shortest backward row, clipped by the restrictions), :func:`arrays` and
:func:`next_entry` (scanning a row) and :func:`accept` (the plan's rules for a
candidate). Shared by the search (:mod:`._cpu_delta`), the local candidate
space (:mod:`._cpu_local`) and the group count (:mod:`._cpu_group`);
:func:`_row`, :func:`_search` and :func:`_pick_gen` also by the GPU engine's
host-side estimator (:mod:`warpmatch.stream.gpu.walk`), which must read the
same rows.

Adjacency of ``x`` in state ``p``: the storage row (the batch's ``S_0``, every
entry alive) when ``x`` is untouched, else its overlay row, whose entries are
alive iff ``ins < p <= dl``; both are sorted by neighbour, so binary search
works on either (an overlay row may hold several versions of a neighbour,
adjacent and with disjoint lifetimes, so at most one is alive at ``p``).

Calls and arguments: a numba call reference-counts every array it passes
(about 0.5 µs for the 22 arrays of a batch view — more than the test it
runs), so the kernels *borrow* their arrays once per call
(:mod:`warpmatch.engine._borrow`), after which a call costs a few ns. The view
arrays are passed one by one, never as a tuple (a named tuple of arrays is
copied into every call and every inlined helper: 150 ns a candidate); the plan
travels as one int32 *program* (the static engine's idea,
:mod:`warpmatch.engine._cpu_kernels`). :data:`View` only orders the arrays on
the Python side.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..engine._borrow import borrow

from ..engine._cpu_kernels import _lower_bound   # the static CPU engine's binary search

#: "no upper bound" for candidates (ids are int32)
BIG = np.int64(1) << np.int64(62)

#: the batch view and the filter's arrays, in the kernels' argument order
View = namedtuple("View", [
    "b_start", "b_deg", "b_nbr", "b_elab", "bi_start", "bi_deg", "bi_nbr", "bi_elab",
    "o_idx", "o_off", "o_nbr", "o_elab", "o_ins", "o_dl",
    "oi_idx", "oi_off", "oi_nbr", "oi_elab", "oi_ins", "oi_dl", "mask"])

# The plan program: pg[0] = k, pg[1] = number of plans, pg[HEAD + s] = start of segment
# s; per-plan rows of k (or k + 1) values, the flat bn/na/res arrays as they are.
HEAD = 2
(S_ORDER, S_PVL, S_BNPTR, S_BNPOS, S_BNDIR, S_BNEL, S_NAPTR, S_NAPOS, S_NADIR, S_RESPTR,
 S_RESPOS, S_RESSIGN, S_KIND, S_PEL, S_GS, S_GCOMP, S_GTWIN, S_LEAF) = range(18)
NSEG = 18


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


def pack_plans(plans) -> np.ndarray:
    """The delta plans as one read-only int32 program (segments ``S_*``)."""
    k = int(plans.k)
    parts = [plans.order, plans.vlabel, plans.bn_ptr, plans.bn_pos, plans.bn_dir,
             plans.bn_elabel, plans.na_ptr, plans.na_pos, plans.na_dir, plans.res_ptr,
             plans.res_pos, plans.res_sign, plans.pair_kind, plans.pair_elabel,
             plans.group_start, plans.gcomp, plans.gtwin, _leaves(plans)]
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


@njit(cache=True, nogil=True, inline="always")
def pv(pg, seg, i):
    """Element ``i`` of segment ``seg`` of the plan program."""
    return np.int64(pg[pg[HEAD + seg] + i])


@njit(cache=True, nogil=True, inline="always")
def pjk(pg, seg, j, d):
    """``seg[j, d]`` of a ``[P, k]`` segment."""
    return np.int64(pg[pg[HEAD + seg] + j * pg[0] + d])


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
def row_dir(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab, o_idx, o_off, o_nbr,
            o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, mask, x, dr):
    """``(overlay?, lo, hi)`` of ``x``'s out-row (``dr == 0``) or in-row."""
    if dr == 0:
        return _row(x, b_start, b_deg, o_idx, o_off)
    return _row(x, bi_start, bi_deg, oi_idx, oi_off)


@njit(cache=True, nogil=True, inline="always")
def arrays(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab, o_idx, o_off, o_nbr,
           o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, mask, ov, dr):
    """The neighbour, label, insertion and deletion arrays of a row kind (chosen once
    per row, not per entry)."""
    if ov == 0:
        if dr == 0:
            return b_nbr, b_elab, o_ins, o_dl
        return bi_nbr, bi_elab, o_ins, o_dl
    if dr == 0:
        return o_nbr, o_elab, o_ins, o_dl
    return oi_nbr, oi_elab, oi_ins, oi_dl


@njit(cache=True, nogil=True, inline="always")
def has(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab, o_idx, o_off, o_nbr,
        o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, mask, x, dr, c, p,
        lab):
    """``dr == 0``: edge ``x -> c`` alive at ``p`` (label ``lab``, -1 any);
    ``dr == 1``: edge ``c -> x`` (the in-row of ``x``)."""
    ov, lo, hi = row_dir(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab, o_idx,
                         o_off, o_nbr, o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr, oi_elab,
                         oi_ins, oi_dl, mask, x, dr)
    if dr == 0:
        return _search(ov, lo, hi, c, p, lab, b_nbr, b_elab, o_nbr, o_elab,
                       o_ins, o_dl)
    return _search(ov, lo, hi, c, p, lab, bi_nbr, bi_elab, oi_nbr, oi_elab,
                   oi_ins, oi_dl)


@njit(cache=True, nogil=True, inline="always")
def next_entry(z, end, ov, glab, hiv, p, nbr_a, lab_a, ins_a, dl_a):
    """The next entry of a scan at position ``z``, alive at ``p`` with label ``glab``.

    ``nbr_a``.. are the row kind's arrays (:func:`arrays`). Returns
    ``(candidate or -1, next position)``; a position ``end`` when the scan is
    over (the list is exhausted or the bound ``hiv`` is reached).
    """
    check_lab = glab != -1 and lab_a.shape[0] > 0
    while z < end:
        c = np.int64(nbr_a[z])
        if c >= hiv:
            return np.int64(-1), end
        if ov != 0 and not (ins_a[z] < p and p <= dl_a[z]):
            z += 1
            continue
        z += 1
        if check_lab and lab_a[z - 1] != glab:
            continue
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


@njit(cache=True, nogil=True)
def gen_list(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab, o_idx, o_off, o_nbr,
             o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, mask, pg, j, d,
             M):
    """The scan of depth ``d``: ``(gen edge, overlay?, lo, hi, hi_val)``.

    The generating list is the backward neighbour's shortest row (as
    :func:`_pick_gen`); the restrictions clip it: ``c > M[x]`` moves ``lo`` by
    binary search, ``c < M[y]`` becomes ``hi_val``, where the scan stops.
    """
    # borrowed (engine/_borrow.py): no reference counts in the loops below
    b_start, b_deg, b_nbr, b_elab = borrow(b_start), borrow(b_deg), borrow(b_nbr), borrow(b_elab)
    bi_start, bi_deg, bi_nbr = borrow(bi_start), borrow(bi_deg), borrow(bi_nbr)
    bi_elab = borrow(bi_elab)
    o_idx, o_off, o_nbr, o_elab = borrow(o_idx), borrow(o_off), borrow(o_nbr), borrow(o_elab)
    o_ins, o_dl, oi_idx, oi_off = borrow(o_ins), borrow(o_dl), borrow(oi_idx), borrow(oi_off)
    oi_nbr, oi_elab, oi_ins, oi_dl = borrow(oi_nbr), borrow(oi_elab), borrow(oi_ins), borrow(oi_dl)
    mask, pg, M = borrow(mask), borrow(pg), borrow(M)
    lo_val, hi_val = bounds(pg, j, d, M)
    best = -1
    best_len = BIG
    bov = 0
    blo = np.int64(0)
    bhi = np.int64(0)
    for t in range(pjk1(pg, S_BNPTR, j, d), pjk1(pg, S_BNPTR, j, d + 1)):
        ov, lo, hi = row_dir(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
                             o_idx, o_off, o_nbr, o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr,
                             oi_elab, oi_ins, oi_dl, mask, M[pv(pg, S_BNPOS, t)], pv(pg, S_BNDIR,
                             t))
        if hi - lo < best_len:
            best_len = hi - lo
            best = t
            bov = ov
            blo = lo
            bhi = hi
    if lo_val >= 0 and blo < bhi:
        nbr_a, _l, _i, _d = arrays(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr,
                                   bi_elab, o_idx, o_off, o_nbr, o_elab, o_ins, o_dl, oi_idx,
                                   oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, mask, bov, pv(pg,
                                   S_BNDIR, best))
        blo = _lower_bound(nbr_a, blo, bhi, lo_val + 1)
    if hi_val <= lo_val + 1:
        blo = bhi
    return best, bov, blo, bhi, hi_val


@njit(cache=True, nogil=True, inline="always")
def accept(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab, o_idx, o_off, o_nbr,
           o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, mask, pg, d, nm, c,
           skip, j, p, M):
    """Rules 1, 4-7 of the Plan contract for candidate ``c`` at depth ``d`` of plan ``j``.

    ``M[0..nm-1]`` are matched (``nm == d`` in the search; 0 skips the
    injectivity test). ``skip`` is the backward edge whose list generated ``c``
    (already known to hold, label included), or -1. The label test is the bit
    of the query vertex in the filter's mask (:mod:`warpmatch.stream.filter`):
    label, degree and neighbour labels at once.
    """
    if (mask[c] >> np.uint64(pjk(pg, S_ORDER, j, d))) & np.uint64(1) == 0:
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
    for t in range(pjk1(pg, S_BNPTR, j, d), pjk1(pg, S_BNPTR, j, d + 1)):
        if t == skip:
            continue
        if not has(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab, o_idx, o_off,
                   o_nbr, o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl,
                   mask, M[pv(pg, S_BNPOS, t)], pv(pg, S_BNDIR, t), c, p, pv(pg, S_BNEL, t)):
            return False
    for t in range(pjk1(pg, S_NAPTR, j, d), pjk1(pg, S_NAPTR, j, d + 1)):
        if has(b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab, o_idx, o_off,
               o_nbr, o_elab, o_ins, o_dl, oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, mask,
               M[pv(pg, S_NAPOS, t)], pv(pg, S_NADIR, t), c, p, -1):
            return False
    return True
