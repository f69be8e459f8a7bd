"""numba kernels of the CPU delta engine: per-task backtracking over timestamped adjacency.

A *task* is one (valid update ``i``, delta plan ``j``) pair
(:mod:`warpmatch.stream.types`, :mod:`warpmatch.stream.delta`). It reads the
single state ``S_p`` of its update (``p = i + 1`` for an insertion matched as
a query edge or a deletion matched as a non-edge, ``p = i`` otherwise), fixes
``M[0] = src`` and ``M[1] = dst`` and extends depths ``2..k-1`` by the
backtracking of RI (Bonnici et al. 2013, Alg. 1) with candidates generated
from the shortest backward-neighbour list and the other backward edges tested
by binary search — the worst-case-optimal join of GCSM §II-B, formula (1),
with GCSM's old/new lists ``N``/``N'`` generalised to one state per update.

Adjacency of ``x`` in state ``p``: the storage row (the batch's ``S_0``, every
entry alive) when ``x`` is untouched, else its overlay row, whose entries are
alive iff ``ins < p <= dl``; both are sorted by neighbour, so binary search
works on either (an overlay row may hold several versions of a neighbour,
adjacent and with disjoint lifetimes, so at most one is alive at ``p``).

Tasks are independent (all read-only but their own output slots), so they run
in a ``prange`` over chunks of tasks with no synchronisation: counting writes
one count per task; listing runs twice (count, prefix sum, fill), so each task
writes its rows into its own slice and the rows come out sorted by task, i.e.
by update. The small adjacency helpers are ``inline="always"`` (inlined in
numba's IR, so no per-call reference counting of their array arguments in the
innermost loop: about 1.5x on 4-vertex queries).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..engine._cpu_kernels import _lower_bound   # the static CPU engine's binary search

#: "no upper bound" for candidates (ids are int32)
BIG = np.int64(1) << np.int64(62)


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
def _edge(x, c, p, lab, start, deg, nbr, elab, idx, off, onbr, oelab, ins, dl):
    """Is ``c`` in ``x``'s row alive at state ``p`` (with label ``lab``, -1 any)?"""
    ov, lo, hi = _row(x, start, deg, idx, off)
    return _search(ov, lo, hi, c, p, lab, nbr, elab, onbr, oelab, ins, dl)


@njit(cache=True, nogil=True, inline="always")
def _has(x, dr, c, p, lab,
         b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
         o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
         oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl):
    """``dr == 0``: edge ``x -> c`` at ``p``; ``dr == 1``: edge ``c -> x`` (in-row of ``x``)."""
    if dr == 0:
        return _edge(x, c, p, lab, b_start, b_deg, b_nbr, b_elab, o_idx, o_off, o_nbr,
                     o_elab, o_ins, o_dl)
    return _edge(x, c, p, lab, bi_start, bi_deg, bi_nbr, bi_elab, oi_idx, oi_off, oi_nbr,
                 oi_elab, oi_ins, oi_dl)


@njit(cache=True, nogil=True, inline="always")
def _pick_gen(d, j, M, bn_ptr, bn_pos, bn_dir, b_start, b_deg, bi_start, bi_deg,
              o_idx, o_off, oi_idx, oi_off):
    """The generating list of depth ``d`` of plan ``j``: the backward neighbour with the
    shortest row (overlay rows count every version, a fair estimate of the scan's cost).

    Returns ``(t, overlay?, lo, hi)``: the backward edge ``t`` and its row. Shared
    with the walk estimator (:mod:`.gpu.walk`), which must read the same rows.
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


@njit(cache=True, nogil=True)
def _accept(d, c, skip, j, p, M, vl, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel,
            na_ptr, na_pos, na_dir, res_ptr, res_pos, res_sign,
            b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
            o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
            oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl):
    """Rules 1, 4-7 of the Plan contract for candidate ``c`` at depth ``d`` of plan ``j``.

    ``skip`` is the backward edge whose list generated ``c`` (already known to
    hold, label included), or -1.
    """
    want = pvl[j, d]
    if want != -1 and vl.shape[0] > 0 and vl[c] != want:
        return False
    for jj in range(d):
        if M[jj] == c:
            return False
    for t in range(res_ptr[j, d], res_ptr[j, d + 1]):
        mj = M[res_pos[t]]
        if res_sign[t] > 0:
            if c <= mj:
                return False
        elif c >= mj:
            return False
    for t in range(bn_ptr[j, d], bn_ptr[j, d + 1]):
        if t == skip:
            continue
        if not _has(M[bn_pos[t]], bn_dir[t], c, p, bn_elabel[t],
                    b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
                    o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
                    oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl):
            return False
    for t in range(na_ptr[j, d], na_ptr[j, d + 1]):
        if _has(M[na_pos[t]], na_dir[t], c, p, -1,
                b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
                o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
                oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl):
            return False
    return True


@njit(cache=True, nogil=True)
def _task(u, j, fill, base, rows, M, pos, end, gen, gov, hiv,
          u_src, u_dst, u_op, u_elab, vl,
          b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
          o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
          oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl,
          order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel, na_ptr, na_pos, na_dir,
          res_ptr, res_pos, res_sign, pair_kind, pair_elabel):
    """Raw matches of update ``u`` under plan ``j`` (written to ``rows[base:]`` if ``fill``)."""
    k = order.shape[1]
    kind = pair_kind[j]
    op = u_op[u]
    # the state the task reads: after an insertion (or deletion) when the update edge
    # must be present (absent) in its matches, before it otherwise
    if (op > 0) == (kind == 1):
        p = u + 1
    else:
        p = u
    s0 = np.int64(u_src[u])
    s1 = np.int64(u_dst[u])
    if s0 == s1:
        return np.int64(0)
    if vl.shape[0] > 0:
        if pvl[j, 0] != -1 and vl[s0] != pvl[j, 0]:
            return np.int64(0)
    if kind == 1 and pair_elabel[j] != -1:
        # the update edge's label as stored in state p (a deletion need not repeat it)
        if not _has(s0, 0, s1, p, pair_elabel[j],
                    b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
                    o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
                    oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl):
            return np.int64(0)
    M[0] = s0
    if not _accept(1, s1, -1, j, p, M, vl, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel,
                   na_ptr, na_pos, na_dir, res_ptr, res_pos, res_sign,
                   b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
                   o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
                   oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl):
        return np.int64(0)
    M[1] = s1
    n = np.int64(0)
    if k == 2:
        if fill:
            rows[base, order[j, 0]] = s0
            rows[base, order[j, 1]] = s1
        return np.int64(1)
    d = 2
    init = True
    while True:
        if init:
            init = False
            # restriction bounds clip the scan of the sorted generator list
            lo_val = np.int64(-1)
            hi_val = BIG
            for t in range(res_ptr[j, d], res_ptr[j, d + 1]):
                mj = M[res_pos[t]]
                if res_sign[t] > 0:
                    if mj > lo_val:
                        lo_val = mj
                elif mj < hi_val:
                    hi_val = mj
            best, bov, blo, bhi = _pick_gen(d, j, M, bn_ptr, bn_pos, bn_dir, b_start, b_deg,
                                            bi_start, bi_deg, o_idx, o_off, oi_idx, oi_off)
            if lo_val >= 0 and blo < bhi:
                dr = bn_dir[best]
                if bov == 0:
                    blo = _lower_bound(b_nbr if dr == 0 else bi_nbr, blo, bhi, lo_val + 1)
                else:
                    blo = _lower_bound(o_nbr if dr == 0 else oi_nbr, blo, bhi, lo_val + 1)
            if hi_val <= lo_val + 1:
                blo = bhi
            gen[d] = best
            gov[d] = bov
            pos[d] = blo
            end[d] = bhi
            hiv[d] = hi_val
        # advance depth d to its next valid candidate
        descended = False
        g = gen[d]
        dr = bn_dir[g]
        glab = bn_elabel[g]
        ov = gov[d]
        while pos[d] < end[d]:
            z = pos[d]
            pos[d] = z + 1
            if ov == 0:
                if dr == 0:
                    c = np.int64(b_nbr[z])
                    el = b_elab[z] if b_elab.shape[0] > 0 else 0
                else:
                    c = np.int64(bi_nbr[z])
                    el = bi_elab[z] if bi_elab.shape[0] > 0 else 0
            else:
                if dr == 0:
                    c = np.int64(o_nbr[z])
                    if not (o_ins[z] < p and p <= o_dl[z]):
                        if c >= hiv[d]:
                            pos[d] = end[d]
                        continue
                    el = o_elab[z] if o_elab.shape[0] > 0 else 0
                else:
                    c = np.int64(oi_nbr[z])
                    if not (oi_ins[z] < p and p <= oi_dl[z]):
                        if c >= hiv[d]:
                            pos[d] = end[d]
                        continue
                    el = oi_elab[z] if oi_elab.shape[0] > 0 else 0
            if c >= hiv[d]:
                pos[d] = end[d]
                break
            if glab != -1 and el != glab:
                continue
            if not _accept(d, c, g, j, p, M, vl, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel,
                           na_ptr, na_pos, na_dir, res_ptr, res_pos, res_sign,
                           b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
                           o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
                           oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl):
                continue
            M[d] = c
            if d == k - 1:
                if fill:
                    for dd in range(k):
                        rows[base + n, order[j, dd]] = M[dd]
                n += 1
                continue
            d += 1
            init = True
            descended = True
            break
        if descended:
            continue
        d -= 1
        if d < 2:
            break
    return n


@njit(parallel=True, cache=True)
def run_tasks(task_upd, task_plan, fill, out_off, rows, counts, nchunks,
              u_src, u_dst, u_op, u_elab, vl,
              b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
              o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
              oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl,
              order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel, na_ptr, na_pos, na_dir,
              res_ptr, res_pos, res_sign, pair_kind, pair_elabel):
    """Run every task; ``counts[t]`` = raw matches of task ``t``.

    With ``fill``, task ``t`` also writes its rows (query-vertex order) to
    ``rows[out_off[t]:out_off[t] + counts[t]]`` (``counts`` from a first,
    counting call). Chunk ``ch`` takes tasks ``ch, ch + nchunks, ...``: the
    tasks of one update are neighbours, so striding spreads a heavy update's
    plans over the workers.
    """
    T = task_upd.shape[0]
    k = order.shape[1]
    for ch in prange(nchunks):
        M = np.empty(k, dtype=np.int64)
        pos = np.empty(k, dtype=np.int64)
        end = np.empty(k, dtype=np.int64)
        gen = np.empty(k, dtype=np.int64)
        gov = np.empty(k, dtype=np.int64)
        hiv = np.empty(k, dtype=np.int64)
        for tk in range(ch, T, nchunks):
            base = out_off[tk] if fill else 0
            counts[tk] = _task(task_upd[tk], task_plan[tk], fill, base, rows,
                              M, pos, end, gen, gov, hiv,
                              u_src, u_dst, u_op, u_elab, vl,
                              b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
                              o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
                              oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl,
                              order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel,
                              na_ptr, na_pos, na_dir, res_ptr, res_pos, res_sign,
                              pair_kind, pair_elabel)
