"""numba kernels of a task's local candidate space (RapidFlow's local view, DP-iso refinement).

Map: :func:`build` (forward sets, their adjacency, backward refinement) <
:func:`unmark` (clean-up) and the small buffer helpers. Used by
:mod:`warpmatch.stream._cpu_delta` for labeled queries.

RapidFlow (Sun et al., VLDB 2022, §4.2) answers an update by building, from the
update edge outwards, a candidate set per query vertex and the edges between
consecutive sets (its "local view"), then searching only inside them. Here,
per task (update, plan), in the plan's order:

- **Forward.** ``C_d`` holds the vertices whose filter mask allows the query
  vertex ``order[j, d]`` and that are, through the right kind of edge alive in
  the task's state ``p``, a neighbour of some vertex of ``C_b`` for *every*
  backward neighbour ``b`` of depth ``d`` (``C_0 = {M[0]}``, ``C_1 = {M[1]}``).
  The smallest backward set generates (its rows are scanned once); the others
  bump a level counter (``cnt``). ``C_d`` is kept sorted.
- **Local adjacency.** For the generating backward neighbour ``b`` of depth
  ``d``, the entries of ``C_d`` adjacent to each vertex of ``C_b`` (indices into
  ``C_d``, ascending): the search at depth ``d`` reads the list of ``M[b]``
  instead of ``M[b]``'s whole row.
- **Backward.** From the last depth down, a vertex of ``C_b`` stays only if it
  has a neighbour in ``C_d`` for every later ``d`` that ``b`` is a backward
  neighbour of (DP-iso's refinement, one sweep). Removed vertices only lose
  their mark bit, so the indices stay valid.

Every match of the task lies in these sets; an empty set ends the task before
any search. Per-depth state is one ``int64[5, k]`` array ``ls``: rows ``CST``
(start of ``C_d`` in ``cbuf``), ``CLN`` (its length), ``ABASE`` (first offset
of depth ``d``'s lists in ``aoff``), ``AGEN`` (the generating backward edge),
``MIDX`` (the search's index of ``M[d]`` in ``C_d``), and the search's own rows
``STAMP``, ``GKEY``, ``GVAL``.

What differs from RapidFlow: one local view per task and plan order (RapidFlow
builds it along a separate "indexing order"); sets are marked in a per-worker
bit array (one bit per depth) so that membership is one load.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..engine._borrow import borrow

from ..engine._raw import ld32
from ._cpu_rows import (S_BNDIR, S_BNEL, S_BNPOS, S_BNPTR, S_ORDER, _entry_ok, mask_bit, pjk,
                        pjk1, pv, row_of, row_ptrs)

CST, CLN, ABASE, AGEN, MIDX = 0, 1, 2, 3, 4
#: rows of the per-task state ``ls`` (``int64[LS_ROWS, k + 1]``) used by the search and
#: the group count: the stamp of each depth's current vertex (``ls[STAMP, k]`` is the
#: running counter), and per group depth the stamp its cached count belongs to and
#: the count (:func:`warpmatch.stream._cpu_group.group_count`)
STAMP, GKEY, GVAL = 5, 6, 7
#: rows of ``ls`` that hold an intersection's cursors, one column per backward edge
#: (:func:`warpmatch.stream._cpu_group._scan`): position, end, row kind, direction
CUR, CHI, COV, CDR = 8, 9, 10, 11
#: row of ``ls`` that says which row the worker's flag array holds: the group depth,
#: the stamp of the flagged vertex, the tag (:func:`warpmatch.stream._cpu_group._intersect`)
FLG = 12
#: row of ``ls`` with each depth's lower bound from the restrictions (the search's scratch)
LOV = 13
LS_ROWS = 14


@njit(cache=True, nogil=True)
def grow32(buf, need):
    """``buf`` or a copy at least ``need`` long (geometric growth)."""
    if need <= buf.shape[0]:
        return buf
    out = np.empty(max(need, 2 * buf.shape[0]), buf.dtype)
    for i in range(buf.shape[0]):      # a loop: slice assignment compiles for seconds
        out[i] = buf[i]
    return out


@njit(cache=True, nogil=True)
def build(T, pg, j, p, k, M, mark, cnt, ls, cbuf, aoff, aent, pbuf):
    """The local candidate space of one task (module docstring).

    Returns ``(nonempty, cbuf, aoff, aent, pbuf)`` (buffers may have grown).
    Leaves ``cnt`` zero; the marks are cleared by :func:`unmark`.
    """
    # borrowed (engine/_borrow.py): no reference counts in the loops below
    pg, M, mark = borrow(pg), borrow(M), borrow(mark)
    cnt, ls = borrow(cnt), borrow(ls)
    for d in range(k):
        ls[CST, d] = 0
        ls[CLN, d] = 0
        ls[MIDX, d] = 0
    used = np.int64(0)
    nadj = np.int64(0)        # offsets used in aoff
    nent = np.int64(0)        # entries used in aent
    for d in range(2, k):
        ls[CST, d] = used
        # the generating backward neighbour: the smallest set
        t0 = -1
        best = np.int64(0)
        for t in range(pjk1(pg, S_BNPTR, j, d), pjk1(pg, S_BNPTR, j, d + 1)):
            b = pv(pg, S_BNPOS, t)
            sz = 1 if b < 2 else ls[CLN, b]
            if t0 < 0 or sz < best:
                t0 = t
                best = sz
        ls[AGEN, d] = t0
        qu = pjk(pg, S_ORDER, j, d)
        nb = 0
        npairs = np.int64(0)
        b_lo = pjk1(pg, S_BNPTR, j, d)
        nbk = pjk1(pg, S_BNPTR, j, d + 1) - b_lo
        for pass_ in range(nbk):
            if pass_ == 0:
                t = t0
            else:                       # the other backward edges, in order
                t = b_lo + pass_ - 1
                if t >= t0:
                    t += 1
            b = pv(pg, S_BNPOS, t)
            dr = pv(pg, S_BNDIR, t)
            lab = pv(pg, S_BNEL, t)
            nsrc = 1 if b < 2 else ls[CLN, b]
            for i in range(nsrc):
                x = M[b] if b < 2 else np.int64(cbuf[ls[CST, b] + i])
                ov, lo, hi = row_of(T, x, dr)
                nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ov, dr)
                for z in range(lo, hi):
                    if not _entry_ok(z, ov, p, lab, lab_p, ins_p, dl_p):
                        continue
                    v = ld32(nbr_p, z)
                    if pass_ == 0:
                        if v == M[0] or v == M[1]:
                            continue
                        if not mask_bit(T, v, qu):
                            continue
                        # every (source, neighbour) pair: the local adjacency
                        if npairs >= pbuf.shape[0]:
                            pbuf = grow32(pbuf, npairs + 1)
                        pbuf[npairs] = (np.int64(i) << np.int64(32)) | v
                        npairs += 1
                        if cnt[v] == 0:
                            if used >= cbuf.shape[0]:
                                cbuf = grow32(cbuf, used + 1)
                            cbuf[used] = v
                            used += 1
                            cnt[v] = 1
                    elif cnt[v] == nb:
                        cnt[v] = nb + 1
            nb += 1
        # keep the vertices every backward neighbour reached; reset the counters
        st = ls[CST, d]
        w = st
        for i in range(st, used):
            v = cbuf[i]
            if cnt[v] == nb:
                cbuf[w] = v
                w += 1
            cnt[v] = 0
        used = w
        ls[CLN, d] = w - st
        if w == st:
            return False, cbuf, aoff, aent, pbuf
        cbuf[st:w].sort()               # in place: no array per depth and task
        for i in range(st, w):
            v = cbuf[i]
            mark[v] |= np.uint64(1) << np.uint64(d)
            cnt[v] = i - st + 1           # index + 1, for the adjacency below
        # the local adjacency of the generating set: one list per source vertex, in
        # source order, each ascending (the pairs come row by row, rows are sorted)
        b0 = pv(pg, S_BNPOS, t0)
        nsrc = 1 if b0 < 2 else ls[CLN, b0]
        ls[ABASE, d] = nadj
        aoff = grow32(aoff, nadj + nsrc + 1)
        aent = grow32(aent, nent + npairs)
        q = np.int64(0)
        for i in range(nsrc):
            aoff[nadj + i] = nent
            while q < npairs and (pbuf[q] >> np.int64(32)) == i:
                v = pbuf[q] & np.int64(0xFFFFFFFF)
                if cnt[v] > 0:
                    aent[nent] = cnt[v] - 1
                    nent += 1
                q += 1
        aoff[nadj + nsrc] = nent
        nadj += nsrc + 1
        for i in range(st, w):
            cnt[cbuf[i]] = 0
    # backward refinement: b keeps the vertices with a neighbour in C_d
    for d in range(k - 1, 2, -1):
        dbit = np.uint64(1) << np.uint64(d)
        for t in range(pjk1(pg, S_BNPTR, j, d), pjk1(pg, S_BNPTR, j, d + 1)):
            b = pv(pg, S_BNPOS, t)
            if b < 2:
                continue
            # the edge is M[b] -> c (dir 0) or c -> M[b]: from c, read the other direction
            dr = 1 - pv(pg, S_BNDIR, t)
            lab = pv(pg, S_BNEL, t)
            bbit = np.uint64(1) << np.uint64(b)
            for i in range(ls[CST, d], ls[CST, d] + ls[CLN, d]):
                v = np.int64(cbuf[i])
                if mark[v] & dbit == 0:
                    continue
                ov, lo, hi = row_of(T, v, dr)
                nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ov, dr)
                for z in range(lo, hi):
                    if not _entry_ok(z, ov, p, lab, lab_p, ins_p, dl_p):
                        continue
                    x = ld32(nbr_p, z)
                    if mark[x] & bbit:
                        cnt[x] = 1
            alive = 0
            for i in range(ls[CST, b], ls[CST, b] + ls[CLN, b]):
                x = cbuf[i]
                if cnt[x] == 1:
                    cnt[x] = 0
                    alive += 1
                else:
                    mark[x] &= ~bbit
            if alive == 0:
                return False, cbuf, aoff, aent, pbuf
    return True, cbuf, aoff, aent, pbuf


@njit(cache=True, nogil=True)
def unmark(k, mark, cbuf, ls):
    """Clear the marks :func:`build` set (every vertex of every set)."""
    # borrowed (engine/_borrow.py): no reference counts in the loops below
    mark, cbuf, ls = borrow(mark), borrow(cbuf), borrow(ls)
    for d in range(2, k):
        for i in range(ls[CST, d], ls[CST, d] + ls[CLN, d]):
            mark[cbuf[i]] = 0
