"""numba kernels of the CPU delta engine: per-task search over timestamped adjacency.

Map: :func:`make_tasks` (which (update, plan) pairs can match at all) <
:func:`run_tasks` (one parallel region over the tasks) < :func:`_task` (one
task: its endpoints, its local candidate space) < :func:`_dfs` (the core's
backtracking) and :func:`accumulate` (weighted per-update sums). Row access is
in :mod:`._cpu_rows`, local candidate spaces in :mod:`._cpu_local`, the
counting group in :mod:`._cpu_group`.

A *task* is one (valid update ``i``, delta plan ``j``) pair
(:mod:`warpmatch.stream.types`, :mod:`warpmatch.stream.delta`). It reads the
single state ``S_p`` of its update (``p = i + 1`` for an insertion matched as
a query edge or a deletion matched as a non-edge, ``p = i`` otherwise), fixes
``M[0] = src`` and ``M[1] = dst`` and extends the core depths by the
backtracking of RI (Bonnici et al. 2013, Alg. 1) with candidates generated
from one backward-neighbour list and the other backward edges tested by
binary search — the worst-case-optimal join of GCSM §II-B, formula (1), with
GCSM's old/new lists ``N``/``N'`` generalised to one state per update. The
counting group is counted, not enumerated.

What differs from GCSM and RapidFlow:

- Candidates pass the candidate filter's mask
  (:mod:`warpmatch.stream.filter`) before any adjacency test, and an update
  whose endpoints no plan can take creates no task.
- With a local candidate space (labeled queries, RapidFlow §4.2) the list a
  depth scans is the local adjacency of the generating vertex, not its row.
- A path plan's last core depth is counted with its group vertex
  (:func:`._cpu_group.path_count`), not enumerated; its tally lives in the
  worker's ``cnt`` array (the local candidate space's, unused by such plans)
  and is taken back at the end of the task.
- Tasks are independent (all read-only but their own output slots), so they
  run in one ``prange`` over chunks of tasks, handed out dynamically; listing
  runs twice (count, prefix sum, fill), so each task writes its rows into its
  own slice and the rows come out sorted by task, i.e. by update.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..engine._borrow import borrow
from ._cpu_group import INT64_MAX, _cached, group_count, path_count, path_done
from ._cpu_local import ABASE, AGEN, CST, FLG, GKEY, LOV, LS_ROWS, MIDX, STAMP, build, unmark
from ._cpu_rows import (S_BNDIR, S_BNEL, S_BNPOS, S_GS, S_KIND, S_ORDER, S_PATH, S_PEL, accept,
                        accept_call,
                        bounds, gen_list, has_edge, mask_bit, next_entry, pjk, pv, row_ptrs)


@njit(cache=True, nogil=True, inline="always")
def _task(T, pg, u, j, fill, base, rows, M, pos, end, gen, gov, hiv, gbuf, glen, err, mark,
          cnt, flag, ls, cbuf, aoff, aent, pbuf, u_src, u_dst, u_op):
    """Raw count of update ``u`` under plan ``j`` (rows written to ``rows[base:]`` if ``fill``).

    With ``mark`` (not empty), the task first builds its local candidate space
    (:func:`._cpu_local.build`) and searches only inside it. Returns
    ``(count, gbuf, cbuf, aoff, aent, pbuf)``: the scratch buffers may have grown.
    Inlined into its callers: a call passing its twenty-odd arrays cost about
    160 ns (inlining saved that per task; ``_seq_kernels._searches`` says why),
    more than a light task's search. :func:`_dfs` stays a call: inlining it
    too saved another 50 ns per task but added a minute of compilation.
    """
    k = pg[0]
    kind = pv(pg, S_KIND, j)
    # the state the task reads: after an insertion (or deletion) when the update edge
    # must be present (absent) in its matches, before it otherwise
    if (u_op[u] > 0) == (kind == 1):
        p = u + 1
    else:
        p = u
    s0 = np.int64(u_src[u])
    s1 = np.int64(u_dst[u])
    if s0 == s1 or not mask_bit(T, s0, pjk(pg, S_ORDER, j, 0)):
        return np.int64(0), gbuf, cbuf, aoff, aent, pbuf
    pel = pv(pg, S_PEL, j)
    if kind == 1 and pel != -1:
        # the update edge's label as stored in state p (a deletion need not repeat it)
        if not has_edge(T, s0, 0, s1, p, pel):
            return np.int64(0), gbuf, cbuf, aoff, aent, pbuf
    M[0] = s0
    if not accept_call(T, pg, 1, 1, s1, -1, j, p, M):
        return np.int64(0), gbuf, cbuf, aoff, aent, pbuf
    M[1] = s1
    # a new task: new stamps for its endpoints, no cached group count
    ls[STAMP, k] += 1
    ls[STAMP, 0] = ls[STAMP, k]
    ls[STAMP, 1] = ls[STAMP, k]
    for d in range(k):
        ls[GKEY, d] = -1
    path = pv(pg, S_PATH, j) == 1 and mark.shape[0] == 0 and cnt.shape[0] > 0
    if path:
        ls[FLG, 3] = -1             # no path tally yet (path_count)
    if mark.shape[0] > 0:
        ok, cbuf, aoff, aent, pbuf = build(T, pg, j, p, k, M, mark, cnt, ls, cbuf, aoff, aent,
                                           pbuf)
        if not ok:
            unmark(k, mark, cbuf, ls)
            return np.int64(0), gbuf, cbuf, aoff, aent, pbuf
    n, gbuf = _dfs(T, pg, j, p, k, fill, base, rows, M, pos, end, gen, gov, hiv, gbuf, glen,
                   err, mark, flag, ls, cbuf, aoff, aent, cnt if path else cnt[:0])
    if path:
        path_done(T, pg, j, p, cnt, ls)
    if mark.shape[0] > 0:
        unmark(k, mark, cbuf, ls)
    return n, gbuf, cbuf, aoff, aent, pbuf


@njit(cache=True, nogil=True)
def _dfs(T, pg, j, p, k, fill, base, rows, M, pos, end, gen, gov, hiv, gbuf, glen, err, mark,
         flag, ls, cbuf, aoff, aent, cnt):
    """Depths ``2 .. group_start - 1`` by backtracking from ``M[0], M[1]``; the counting
    group by :func:`._cpu_group.group_count` (one group vertex: by its count alone).
    With ``cnt`` (not empty: a path plan, :func:`._cpu_rows.path_plans`), the last core
    depth and the group vertex are counted together by :func:`._cpu_group.path_count`.
    Returns ``(raw count, gbuf)``.

    A depth scans either a row (``gov`` 0 storage, 1 overlay) or, in a local
    candidate space, the local adjacency list of its generating vertex
    (``gov`` 2: entries are indices into ``C_d``).
    """
    # borrowed (engine/_borrow.py): no reference counts in the loops below
    pg, rows, M = borrow(pg), borrow(rows), borrow(M)
    pos, end, gen = borrow(pos), borrow(end), borrow(gen)
    gov, hiv, glen = borrow(gov), borrow(hiv), borrow(glen)
    err, mark, flag = borrow(err), borrow(mark), borrow(flag)
    ls, T = borrow(ls), borrow(T)
    # the local candidate space's buffers only grow in build(), never below this call
    cbuf, aoff, aent = borrow(cbuf), borrow(aoff), borrow(aent)
    gs = pv(pg, S_GS, j)
    local = mark.shape[0] > 0
    if gs == 2:
        if k == 2:
            if fill:
                rows[base, pjk(pg, S_ORDER, j, 0)] = M[0]
                rows[base, pjk(pg, S_ORDER, j, 1)] = M[1]
            return np.int64(1), gbuf
        return group_count(T, pg, j, p, gs, k, M, mark, flag, ls, cbuf, aoff, aent, gbuf, glen,
                           err)
    n = np.int64(0)
    d = 2
    init = True
    while True:
        if init:
            init = False
            if local:
                g = ls[AGEN, d]
                b0 = pv(pg, S_BNPOS, g)
                a = ls[ABASE, d] + (0 if b0 < 2 else ls[MIDX, b0])
                gen[d] = g
                gov[d] = 2
                pos[d] = aoff[a]
                end[d] = aoff[a + 1]
                ls[LOV, d], hiv[d] = bounds(pg, j, d, M)
            else:
                best, bov, blo, bhi, hi_val = gen_list(T, pg, j, d, M)
                gen[d] = best
                gov[d] = bov
                pos[d] = blo
                end[d] = bhi
                hiv[d] = hi_val
                ls[LOV, d] = -1
        # advance depth d to its next valid candidate
        descended = False
        g = gen[d]
        ov = gov[d]
        glab = pv(pg, S_BNEL, g)
        dbit = np.uint64(1) << np.uint64(d)
        cbase = ls[CST, d]
        nbr_p, lab_p, ins_p, dl_p = row_ptrs(T, ov if ov < 2 else 0, pv(pg, S_BNDIR, g))
        while pos[d] < end[d]:
            if ov == 2:
                z = pos[d]
                pos[d] = z + 1
                e = np.int64(aent[z])
                c = np.int64(cbuf[cbase + e])
                if c >= hiv[d]:
                    pos[d] = end[d]
                    break
                if c <= ls[LOV, d] or mark[c] & dbit == 0:
                    continue
            else:
                c, nz = next_entry(pos[d], end[d], ov, glab, hiv[d], p, nbr_p, lab_p, ins_p,
                                   dl_p)
                pos[d] = nz
                if c < 0:
                    break
                if local and mark[c] & dbit == 0:
                    continue
                e = np.int64(0)
            if not accept(T, pg, d, d, c, g, j, p, M):
                continue
            M[d] = c
            ls[MIDX, d] = e
            ls[STAMP, k] += 1
            ls[STAMP, d] = ls[STAMP, k]
            if d == gs - 1:
                if gs == k:
                    if fill:
                        for dd in range(k):
                            rows[base + n, pjk(pg, S_ORDER, j, dd)] = M[dd]
                    n += 1
                    continue
                if gs == k - 1:      # one group vertex: no group_count loop
                    gc = _cached(T, pg, gs, j, p, gs, M, mark, flag, ls, cbuf, aoff, aent)
                else:
                    gc, gbuf = group_count(T, pg, j, p, gs, k, M, mark, flag, ls, cbuf, aoff,
                                           aent, gbuf, glen, err)
                if n > INT64_MAX - gc:
                    err[0] = 1
                n += gc
                continue
            if cnt.shape[0] > 0 and d == gs - 2:
                pc = path_count(T, pg, j, p, d + 1, M, cnt, ls)
                if n > INT64_MAX - pc:
                    err[0] = 1
                n += pc
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
    return n, gbuf


@njit(cache=True, nogil=True, inline="always")
def task_scratch(k):
    """A worker's fixed-size search scratch for ``k`` query vertices: ``M``, ``pos``,
    ``end``, ``gen``, ``gov``, ``hiv`` (``[k]``), ``glen`` (``[k]``, one per group
    depth), ``err`` (``[1]``), ``ls`` (``[LS_ROWS, k + 1]``), and the growable buffers
    ``gbuf`` (``k`` rows), ``cbuf``, ``aoff``, ``aent``, ``pbuf`` (a helper may replace
    them)."""
    return (np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64),
            np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64),
            np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64),
            np.zeros(k, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.zeros((LS_ROWS, k + 1), dtype=np.int64),
            np.empty((k, 256), dtype=np.int64), np.empty(1024, dtype=np.int32),
            np.empty(1024, dtype=np.int64), np.empty(1024, dtype=np.int32),
            np.empty(1024, dtype=np.int64))


@njit(cache=True, nogil=True)
def _run_chunk(T, pg, task_upd, task_plan, fill, out_off, rows, counts, ch, nchunks, mark,
               cnt, flag, u_src, u_dst, u_op):
    """Tasks ``ch, ch + nchunks, ...``; returns the overflow flag."""
    # borrowed (engine/_borrow.py): no reference counts in the loops below
    pg, task_upd, task_plan = borrow(pg), borrow(task_upd), borrow(task_plan)
    out_off, rows, counts = borrow(out_off), borrow(rows), borrow(counts)
    mark, cnt, flag = borrow(mark), borrow(cnt), borrow(flag)
    u_src, u_dst, u_op = borrow(u_src), borrow(u_dst), borrow(u_op)
    T_ = borrow(T)
    N = task_upd.shape[0]
    k = pg[0]
    # fixed-size scratch, owned here and passed on borrowed: the owners are used again
    # at the end, so they outlive every borrowed view; growable scratch stays owned
    (M_, pos_, end_, gen_, gov_, hiv_, glen_, e_, ls_,
     gbuf, cbuf, aoff, aent, pbuf) = task_scratch(k)
    M, pos, end, gen, gov, hiv = (borrow(M_), borrow(pos_), borrow(end_), borrow(gen_),
                                  borrow(gov_), borrow(hiv_))
    glen, e, ls = borrow(glen_), borrow(e_), borrow(ls_)
    for tk in range(ch, N, nchunks):
        base = out_off[tk] if fill else 0
        c, gbuf, cbuf, aoff, aent, pbuf = _task(
            T_, pg, task_upd[tk], task_plan[tk], fill, base, rows, M, pos, end, gen, gov, hiv,
            gbuf, glen, e, mark, cnt, flag, ls, cbuf, aoff, aent, pbuf, u_src, u_dst, u_op)
        counts[tk] = c
    alive = (M_.size + pos_.size + end_.size + gen_.size + gov_.size + hiv_.size
             + glen_.size + ls_.size)
    return e_[0] + 0 * alive


@njit(parallel=True, cache=True)
def run_tasks(T, pg, task_upd, task_plan, fill, out_off, rows, counts, nchunks, err, marks,
              cnts, flags, u_src, u_dst, u_op):
    """Run every task; ``counts[t]`` = raw count of task ``t`` (one parallel region).

    ``T`` is the batch view's address table (:func:`._cpu_rows.view_table`),
    ``pg`` the plan program. With ``fill``, task ``t`` also writes its rows
    (query-vertex order) to ``rows[out_off[t]:out_off[t] + counts[t]]``
    (``counts`` from a first, counting call). Chunk ``ch`` takes tasks ``ch, ch
    + nchunks, ...``: the tasks of one update are neighbours, so striding
    spreads a heavy update's plans over the workers; the engine sets a parallel
    chunk size so that the chunks are handed out as workers free up. ``err[ch]``
    is set on an int64 overflow. ``marks``/``cnts`` (``[threads, n]``, zero) are
    each worker's local-candidate scratch (``marks`` with 0 columns: no local
    candidate spaces; ``cnts`` then holds a path plan's tally, or has 0 columns
    too); ``flags`` (``[threads, n + 1]``) each worker's tag array
    of the group count (:func:`._cpu_group._intersect`; any content).
    """
    for ch in prange(nchunks):
        tid = numba.get_thread_id()
        err[ch] = _run_chunk(T, pg, task_upd, task_plan, fill, out_off, rows, counts, ch,
                             nchunks, marks[tid], cnts[tid], flags[tid], u_src, u_dst, u_op)


@njit(cache=True, nogil=True)
def run_tasks_serial(T, pg, task_upd, task_plan, fill, out_off, rows, counts, err, mark, cnt,
                     flag, u_src, u_dst, u_op):
    """:func:`run_tasks` on the calling thread (no parallel region)."""
    err[0] = _run_chunk(T, pg, task_upd, task_plan, fill, out_off, rows, counts, 0, 1, mark,
                        cnt, flag, u_src, u_dst, u_op)


@njit(cache=True, nogil=True, inline="always")
def plan_takes(j, ms, mt, order, pair_kind, pair_elabel, ins, lab):
    """Can plan ``j`` use an update whose endpoints carry the filter masks ``ms``, ``mt``?
    They must allow its first two query vertices, and an insertion must carry the
    pair's edge label (a deletion names its edge by the endpoints: the search checks
    the stored label). The rule of :func:`make_tasks` and of the sequential path."""
    if (ms >> np.uint64(order[j, 0])) & np.uint64(1) == 0:
        return False
    if (mt >> np.uint64(order[j, 1])) & np.uint64(1) == 0:
        return False
    return not (ins and pair_kind[j] == 1 and pair_elabel[j] != -1 and lab != pair_elabel[j])


@njit(cache=True, nogil=True, inline="always")
def add_weighted(plus, minus, u, c, w, positive):
    """``plus[u]`` (or ``minus[u]``) ``+= c * w``; True on an int64 overflow."""
    if c > INT64_MAX // w:
        return True
    c *= w
    if positive:
        if plus[u] > INT64_MAX - c:
            return True
        plus[u] += c
    else:
        if minus[u] > INT64_MAX - c:
            return True
        minus[u] += c
    return False


@njit(cache=True, nogil=True)
def make_tasks(valid, u_src, u_dst, u_op, u_elab, mask, vl, pvl, order, pair_kind, pair_elabel,
               out_upd, out_plan, out_sign):
    """The tasks of a batch, update-major: ``(update, plan, sign)`` for every valid
    update and every plan its endpoints can match; returns their number.

    A plan is skipped when :func:`plan_takes` says so (the filter's masks, or
    without masks every bit set and the vertex labels decide). An update that no
    plan can use costs two mask loads. ``out_*`` hold ``len(valid) * P``.
    """
    P = order.shape[0]
    T = 0
    have_mask = mask.shape[0] > 0
    every = ~np.uint64(0)
    for i in range(valid.shape[0]):
        u = valid[i]
        s = u_src[u]
        t = u_dst[u]
        ms = mask[s] if have_mask else every
        mt = mask[t] if have_mask else every
        if ms == 0 or mt == 0:
            continue
        ins = u_op[u] > 0
        for j in range(P):
            if not plan_takes(j, ms, mt, order, pair_kind, pair_elabel, ins, u_elab[u]):
                continue
            if not have_mask and vl.shape[0] > 0:
                if pvl[j, 0] != -1 and vl[s] != pvl[j, 0]:
                    continue
                if pvl[j, 1] != -1 and vl[t] != pvl[j, 1]:
                    continue
            out_upd[T] = u
            out_plan[T] = j
            out_sign[T] = 1 if ins == (pair_kind[j] == 1) else -1
            T += 1
    return T


@njit(cache=True, nogil=True)
def accumulate(task_upd, task_plan, sign, counts, weight, divisor, plus, minus):
    """``plus``/``minus`` per update: Σ count × weight over its tasks, then / divisor.

    Returns 0, or 1 on an int64 overflow (the caller raises).
    """
    for t in range(task_upd.shape[0]):
        c = counts[t]
        if c == 0:
            continue
        if add_weighted(plus, minus, task_upd[t], c, weight[task_plan[t]], sign[t] > 0):
            return 1
    if divisor != 1:
        for u in range(plus.shape[0]):
            plus[u] //= divisor
            minus[u] //= divisor
    return 0
