"""GCSM's random-walk access-frequency estimator (Wei & Jiang, §IV), on the CPU.

Before a batch is matched on the GPU, GCSM guesses which vertices' neighbour
lists the exact incremental matching will read most, so that those lists can
be cached in device memory (§V-B, :mod:`.cache`). The exact matching of one
batch is a forest of *execution trees*: the roots are the tasks (update ``i``,
delta plan ``j``; the update's endpoints are the partial match of depth 2),
the children of a node of depth ``d`` are the candidates that extend it to
depth ``d + 1``, and computing a node's children reads the adjacency rows of
some vertices (the generating list and one row per backward-edge test, as the
GPU kernel does). A random walk samples one root-to-node path: a root with
probability ``1/T``, then at every node a child uniformly among the ``|V|``
candidates and "continue" with probability ``|V|/D`` (``D`` = the longest
row), i.e. each child with probability ``1/D``. Eq. (3) of the paper,

    C~_v = sum_i T * D^(i-1) * c_{v,i},

weights a row read at tree level ``i`` by the inverse of the probability of
reaching that node, so the mean of ``C~_v`` over ``M`` walks is an unbiased
estimate of the true number of reads of ``v``'s rows (Theorem 1).

§IV-B runs all ``M`` walks in *one* execution of the nested loops: the number
of walks that reach a node is binomial — ``Binomial(M, 1/T)`` at a root and
``Binomial(B_parent, 1/D)`` at a child — and a node reached by no walk is
skipped with its whole subtree. We draw the walks that continue from a node
as ``K ~ Binomial(B, |V|/D)`` and spread them uniformly over the ``|V|``
children (the multinomial split of the same process), which costs ``O(K)``
instead of one binomial draw per child.

One deviation, taken when there are at least as many walks as roots
(``stratified=None``, the default, or ``True``): the batch's roots are known
and cheap, so instead of sampling roots we give every root exactly
``R = ceil(M / T)`` walks (stratified sampling; the estimator stays unbiased,
with weight ``D^(i-1) / R``, and no updated edge is left unexplored). With
fewer walks than roots, or ``stratified=False``, the roots are drawn as in
the paper. The walks of different roots are independent, so the roots are
split among threads (numba ``prange``); every root draws from its own random
stream, seeded by ``(seed, root)``, and an estimate depends only on the seed.

Ranking rows for the cache (``for_cache``, what the GPU sampler of
kernels/delta.cu estimates) deviates in three more ways. Only storage rows
are credited: the cache holds no overlay row. A binary search between two
storage rows counts for both, since either one, cached, serves it. And the
plan's last level is not run (:func:`_look`): each partial match one level
above credits its generating list once, every other test's storage row once
per entry of that list (the searches the last level would make), and, when
the list is an overlay row (device memory), each candidate's storage row
once per test whose two rows are storage rows. The last level is most of a batch's
work and most of its host reads are its searches, of rows next to the
batch's endpoints, each read in few batches: a sampled last level misses
most of them, while the look-ahead sees every one at the cost of the level
above (on a 10^7-edge power-law graph, square query, batches of 4096, the
GPU cache chosen this way cut host reads from 139 MB a batch with the degree
cache to 42 MB; ``bench/stream.py`` on an H100).

The same traversal with every node visited once and weight 1 (``exact``)
counts the true row reads and the matches; the tests and ``bench/stream.py``
use it as ground truth for the estimator (GCSM §VI-D coverage).
"""
from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np
from numba import njit, prange

from .._cpu_rows import _pick_gen, _row, _search   # the CPU delta engine's row access
from ..types import BatchView, DeltaPlans

__all__ = ["estimate_access", "estimate_access_sparse", "exact_access", "default_walks",
           "max_row", "max_row_overlay", "Workspace"]


@njit(cache=True, nogil=True, inline="always")
def _add(acc, x, w):
    """Record a read of ``x``'s row with weight ``w`` in the chunk's record buffer.

    ``acc = (vertex, weight, count)``: past the buffer's end only the count
    grows, so the caller sees the overflow and re-runs the task with more room.
    """
    rv, rw, rn = acc
    q = rn[0]
    if q < rv.shape[0]:
        rv[q] = x
        rw[q] = w
    rn[0] = q + 1


#: a probe of host memory (zero-copy) against one of device memory: the one value of
#: the GPU kernel's WM_HOST_COST too (kernels/delta.cu ``wm_search_cost``; engine.py)
HOST_COST = 8


@njit(cache=True, nogil=True, inline="always")
def _probes(n):
    """Probes of a binary search in ``n`` entries: the bit length of ``n + 1``, as the
    kernel's ``32 - __clz(n + 1)``."""
    probes = 0
    m = n + 1
    while m > 0:
        probes += 1
        m >>= 1
    return probes


@njit(cache=True, nogil=True, inline="always")
def _search_cost(n, host):
    """Probes of a binary search in ``n`` entries, ``HOST_COST`` times dearer on the host."""
    return _probes(n) * HOST_COST if host else _probes(n)


@njit(cache=True, nogil=True)
def _edge(a, b, p, lab, w, acc, V):
    """Data edge ``a -> b`` alive at ``p``; reads out(a) or in(b) as the GPU kernel does
    (the shorter row when both are in the same memory, else the cheaper search by
    :func:`_search_cost`), and adds ``w`` to the read row's vertex in ``acc``. With
    ``credit`` set (ranking rows for the cache, as the GPU sampler does), ``w`` goes
    to each of the two rows that is a storage row, and to no overlay row: either
    storage row, cached, would usually serve the search (unless it is so long that
    its probes cost more, :func:`_search_cost`).

    ``dev[x] != 0``: ``x``'s storage rows are cached on the device; ``host`` 0: every
    storage row is on the device (policy "device")."""
    (b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
     o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
     oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, dev, cfg, _qm) = V
    host, credit = cfg[_HOST], cfg[_CREDIT]
    ova, loa, hia = _row(a, b_start, b_deg, o_idx, o_off)
    ovb, lob, hib = _row(b, bi_start, bi_deg, oi_idx, oi_off)
    sa = ova == 0 and not (a < dev.shape[0] and dev[a] != 0)   # read from storage
    sb = ovb == 0 and not (b < dev.shape[0] and dev[b] != 0)
    ha = sa and host != 0
    hb = sb and host != 0
    if ha == hb:
        in_a = hia - loa <= hib - lob
    else:
        in_a = _search_cost(hia - loa, ha) <= _search_cost(hib - lob, hb)
    if credit != 0 and sa and sb:
        _add(acc, b if in_a else a, w)
    if in_a:
        if credit == 0 or sa:        # ranking for the cache: storage rows only
            _add(acc, a, w)
        return _search(ova, loa, hia, b, p, lab, b_nbr, b_elab, o_nbr, o_elab, o_ins, o_dl)
    if credit == 0 or sb:
        _add(acc, b, w)
    return _search(ovb, lob, hib, a, p, lab, bi_nbr, bi_elab, oi_nbr, oi_elab, oi_ins, oi_dl)


@njit(cache=True, nogil=True, inline="always")
def _cheap(d, c, j, M, vl, P, qm):
    """Plan rules 1, 4, 5 for candidate ``c`` at depth ``d``: label, candidate
    filter mask ``qm`` (empty: none), symmetry restrictions, distinctness (the
    tests that read no row)."""
    pvl, res_ptr, res_pos, res_sign = P.vlabel, P.res_ptr, P.res_pos, P.res_sign
    want = pvl[j, d]
    if want != -1 and vl.shape[0] > 0 and vl[c] != want:
        return False
    if qm.shape[0] > 0 and (qm[c] >> np.uint64(P.order[j, d])) & np.uint64(1) == 0:
        return False
    for t in range(res_ptr[j, d], res_ptr[j, d + 1]):
        mj = M[res_pos[t]]
        if res_sign[t] > 0:
            if c <= mj:
                return False
        elif c >= mj:
            return False
    for jj in range(d):
        if M[jj] == c:
            return False
    return True


@njit(cache=True, nogil=True)
def _accept(d, c, skip, j, p, M, vl, P, w, acc, V):
    """Plan rules 1, 4-7 for candidate ``c`` at depth ``d`` (cheap tests first)."""
    (order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel, na_ptr, na_pos, na_dir,
     res_ptr, res_pos, res_sign, pair_kind, pair_elabel) = P
    if not _cheap(d, c, j, M, vl, P, V.qm):
        return False
    for t in range(bn_ptr[j, d], bn_ptr[j, d + 1]):
        if t == skip:
            continue
        x = M[bn_pos[t]]
        if bn_dir[t] == 0:
            ok = _edge(x, c, p, bn_elabel[t], w, acc, V)
        else:
            ok = _edge(c, x, p, bn_elabel[t], w, acc, V)
        if not ok:
            return False
    for t in range(na_ptr[j, d], na_ptr[j, d + 1]):
        x = M[na_pos[t]]
        if na_dir[t] == 0:
            hit = _edge(x, c, p, -1, w, acc, V)
        else:
            hit = _edge(c, x, p, -1, w, acc, V)
        if hit:
            return False
    return True


@njit(cache=True, nogil=True)
def _pick(d, j, M, P, V):
    """The generating list of depth ``d``, as the CPU delta engine picks it
    (:func:`.._cpu_delta._pick_gen`): ``(t, overlay?, lo, hi)``."""
    return _pick_gen(d, j, M, P.bn_ptr, P.bn_pos, P.bn_dir, V.b_start, V.b_deg,
                     V.bi_start, V.bi_deg, V.o_idx, V.o_off, V.oi_idx, V.oi_off)


@njit(cache=True, nogil=True)
def _expand(d, j, p, M, vl, P, w, acc, V, out, base, best, bov, blo, bhi):
    """Valid candidates of depth ``d`` for the partial match ``M[0..d-1]`` into
    ``out[base:]`` (room for ``bhi - blo`` entries), from the list :func:`_pick` chose.

    The generating list is read once; every other test reads the row it
    searches (as the GPU kernel does). Returns the count.
    """
    (order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel, na_ptr, na_pos, na_dir,
     res_ptr, res_pos, res_sign, pair_kind, pair_elabel) = P
    (b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
     o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
     oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, _, cfg, _qm) = V
    if cfg[_CREDIT] == 0 or bov == 0:      # ranking for the cache: storage rows only
        _add(acc, M[bn_pos[best]], w)
    dr = bn_dir[best]
    glab = bn_elabel[best]
    n = 0
    for z in range(blo, bhi):
        if bov == 0:
            if dr == 0:
                c = b_nbr[z]
                el = b_elab[z] if b_elab.shape[0] > 0 else 0
            else:
                c = bi_nbr[z]
                el = bi_elab[z] if bi_elab.shape[0] > 0 else 0
        else:
            if dr == 0:
                c = o_nbr[z]
                if not (o_ins[z] < p and p <= o_dl[z]):
                    continue
                el = o_elab[z] if o_elab.shape[0] > 0 else 0
            else:
                c = oi_nbr[z]
                if not (oi_ins[z] < p and p <= oi_dl[z]):
                    continue
                el = oi_elab[z] if oi_elab.shape[0] > 0 else 0
        if glab != -1 and el != glab:
            continue
        if _accept(d, c, best, j, p, M, vl, P, w, acc, V):
            out[base + n] = c
            n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _other(t, j, d, M, P):
    """The ``t``-th test of depth ``d`` counting backward edges, then negative ones:
    ``(vertex, dir)``, where ``dir`` 0 means the edge leaves that vertex."""
    bn_ptr, bn_pos, bn_dir = P.bn_ptr, P.bn_pos, P.bn_dir
    na_ptr, na_pos, na_dir = P.na_ptr, P.na_pos, P.na_dir
    if t < bn_ptr[j, d + 1]:
        return M[bn_pos[t]], bn_dir[t]
    q = na_ptr[j, d] + t - bn_ptr[j, d + 1]
    return M[na_pos[q]], na_dir[q]


@njit(cache=True, nogil=True, inline="always")
def _stored(x, dr, V):
    """Is ``x``'s row in direction ``dr`` (0 out, 1 in) a storage row (not an overlay row)?"""
    if dr == 0:
        return V.o_idx[x] < 0
    return V.oi_idx[x] < 0


@njit(cache=True, nogil=True)
def _look(d, j, p, M, vl, P, w, acc, V, best, bov, blo, bhi):
    """The last level's reads, credited without running its searches, as the GPU
    sampler does (kernels/delta.cu ``wm_look``, ``wm_credit``; for the cache only).

    The generating list is read once. Every other test of the level searches a
    row of its vertex ``y`` or of the candidate, once per candidate; caching
    either storage row serves that search (``wm_edge``'s rule), so ``y`` is
    credited once per entry of the list. When the list is an overlay row (on
    the device: reading it costs no host traffic), each candidate that passes
    the cheap tests is also credited once per test whose two rows are storage
    rows; a host list is not read for that (it would cost the reads the cache
    is meant to save).
    """
    bn_ptr, bn_pos, bn_dir, bn_elabel = P.bn_ptr, P.bn_pos, P.bn_dir, P.bn_elabel
    na_ptr = P.na_ptr
    (b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
     o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
     oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl, _, _, _qm) = V
    if bov == 0:                     # storage rows only: the cache holds no other
        _add(acc, M[bn_pos[best]], w)
    n = bhi - blo
    end = bn_ptr[j, d + 1] + na_ptr[j, d + 1] - na_ptr[j, d]
    others = 0
    for t in range(bn_ptr[j, d], end):
        if t == best:
            continue
        y, dr = _other(t, j, d, M, P)
        if _stored(y, dr, V):
            others += 1
            if n > 0:
                _add(acc, y, w * n)
    if bov == 0 or others == 0:
        return
    dr = bn_dir[best]
    glab = bn_elabel[best]
    for z in range(blo, bhi):
        if dr == 0:
            c, ins, dl = o_nbr[z], o_ins[z], o_dl[z]
            el = o_elab[z] if o_elab.shape[0] > 0 else 0
        else:
            c, ins, dl = oi_nbr[z], oi_ins[z], oi_dl[z]
            el = oi_elab[z] if oi_elab.shape[0] > 0 else 0
        if not (ins < p and p <= dl) or (glab != -1 and el != glab):
            continue
        if not _cheap(d, c, j, M, vl, P, V.qm):
            continue
        pairs = 0
        for t in range(bn_ptr[j, d], end):
            if t == best:
                continue
            y, dy = _other(t, j, d, M, P)
            if _stored(y, dy, V) and _stored(c, 1 - dy, V):
                pairs += 1
        if pairs > 0:
            _add(acc, c, w * pairs)


# -------------------------------------------------------------- randomness
# A splitmix64 stream per task (seeded by (seed, task)), so that an estimate
# depends only on the seed, never on how tasks are split among threads.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True, inline="always")
def _next(rs):
    """The next 64 random bits of the stream in ``rs[0]`` (splitmix64)."""
    rs[0] = rs[0] + _GOLDEN
    z = rs[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _uniform(rs):
    """A double in (0, 1]."""
    return (float(_next(rs) >> np.uint64(11)) + 1.0) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True, inline="always")
def _below(rs, n):
    """An integer in [0, n)."""
    return np.int64(_next(rs) % np.uint64(n))


@njit(cache=True, nogil=True)
def _binomial(rs, trials, prob):
    """Exact ``Binomial(trials, prob)`` by geometric skips: ``O(1 + trials * prob)``."""
    if trials <= 0 or prob <= 0.0:
        return 0
    if prob >= 1.0:
        return trials
    lq = np.log1p(-prob)
    k = 0
    pos = 0
    while True:
        # trials up to and including the next success: Geometric(prob)
        pos += np.int64(np.floor(np.log(_uniform(rs)) / lq)) + 1
        if pos > trials:
            return k
        k += 1


@njit(cache=True, nogil=True)
def _walk_tasks(t0, t1, task_upd, task_plan, u_src, u_dst, u_op, u_elab, vl, V, P, acc,
                counts, mode, walks, D, seed, R, w1, T):
    """Run the execution-forest nodes of tasks ``t0..t1-1`` that at least one walk reaches.

    ``mode`` 0: exact (every node, weight 1; ``counts[t]`` = raw matches of task ``t``).
    ``mode`` 1: merged random walks, ``R`` walks per root (stratified roots); ``mode``
    2: paper roots (``Binomial(walks, 1/T)`` walks each). Reads go to the record
    buffer ``acc`` (see :func:`_add`). Returns the first task not done: ``t1``, or
    the task whose records overflowed the buffer (its records are withdrawn).
    """
    (order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel, na_ptr, na_pos, na_dir,
     res_ptr, res_pos, res_sign, pair_kind, pair_elabel) = P
    k = order.shape[1]
    cap = acc[0].shape[0]
    rn = acc[2]
    rs = np.zeros(1, dtype=np.uint64)
    M = np.empty(k, dtype=np.int64)
    # candidate stack: the children of the node at depth d are cand[base[d]:base[d]+ncand[d]]
    # with walk counts cwalk[...]; grown when a generating list needs more room
    cand = np.empty(1024, dtype=np.int32)
    cwalk = np.empty(1024, dtype=np.int64)
    base = np.zeros(k + 1, dtype=np.int64)
    ncand = np.zeros(k + 1, dtype=np.int64)
    it = np.zeros(k + 1, dtype=np.int64)
    bnode = np.zeros(k + 1, dtype=np.int64)
    for t in range(t0, t1):
        mark = rn[0]
        counts[t] = 0
        rs[0] = (np.uint64(seed) * _MIX1) ^ (np.uint64(t) * _GOLDEN)
        _next(rs)
        u = task_upd[t]
        j = task_plan[t]
        if mode == 0:
            B = 1
        elif mode == 1:
            B = R
        else:
            B = _binomial(rs, walks, 1.0 / T)
        if B == 0:
            continue
        kind = pair_kind[j]
        p = u + 1 if (u_op[u] > 0) == (kind == 1) else u
        s0 = u_src[u]
        s1 = u_dst[u]
        if s0 == s1:
            continue
        if vl.shape[0] > 0 and pvl[j, 0] != -1 and vl[s0] != pvl[j, 0]:
            continue
        if V.qm.shape[0] > 0 and (V.qm[s0] >> np.uint64(order[j, 0])) & np.uint64(1) == 0:
            continue
        if kind == 1 and pair_elabel[j] != -1 and u_elab[u] != pair_elabel[j]:
            continue
        M[0] = s0
        w = w1 * B
        if not _accept(1, s1, -1, j, p, M, vl, P, w, acc, V):
            if rn[0] > cap:
                rn[0] = mark
                return t
            continue
        M[1] = s1
        if k == 2:
            counts[t] += 1
            continue
        # depth-first over the nodes reached by at least one walk
        d = 2
        bnode[2] = B
        base[2] = 0
        fresh = True
        while d >= 2:
            if fresh:
                fresh = False
                lvl_w = w1 * (float(D) ** (d - 2)) if mode != 0 else 1.0
                best, bov, blo, bhi = _pick(d, j, M, P, V)
                if d == k - 1 and V.cfg[_CREDIT] != 0:
                    # ranking rows for the cache: the last level by look-ahead
                    _look(d, j, p, M, vl, P, lvl_w * bnode[d], acc, V, best, bov, blo, bhi)
                    d -= 1
                    continue
                need = base[d] + (bhi - blo)
                if need > cand.shape[0]:
                    size = max(need, 2 * cand.shape[0])
                    c2 = np.empty(size, dtype=np.int32)
                    w2 = np.empty(size, dtype=np.int64)
                    c2[:base[d]] = cand[:base[d]]
                    w2[:base[d]] = cwalk[:base[d]]
                    cand = c2
                    cwalk = w2
                n = _expand(d, j, p, M, vl, P, lvl_w * bnode[d], acc, V, cand, base[d],
                            best, bov, blo, bhi)
                if rn[0] > cap:
                    break
                ncand[d] = n
                it[d] = 0
                if d == k - 1:
                    if mode == 0:
                        counts[t] += n
                    d -= 1
                    continue
                b0 = base[d]
                if mode == 0:
                    for q in range(n):
                        cwalk[b0 + q] = 1
                else:
                    for q in range(n):
                        cwalk[b0 + q] = 0
                    if n > 0:
                        # walks that continue (probability |V|/D each), spread uniformly
                        # over the |V| children: the multinomial split of §IV-B
                        K = _binomial(rs, bnode[d], min(1.0, n / float(D)))
                        for _ in range(K):
                            cwalk[b0 + _below(rs, n)] += 1
                base[d + 1] = b0 + n
            # next child of depth d reached by a walk
            moved = False
            while it[d] < ncand[d]:
                q = it[d]
                it[d] = q + 1
                if cwalk[base[d] + q] > 0:
                    M[d] = cand[base[d] + q]
                    bnode[d + 1] = cwalk[base[d] + q]
                    d += 1
                    fresh = True
                    moved = True
                    break
            if not moved:
                d -= 1
        if rn[0] > cap:
            rn[0] = mark
            counts[t] = 0
            return t
    return t1


@njit(cache=True, parallel=True)
def _walk_chunks(lo, hi, done, task_upd, task_plan, u_src, u_dst, u_op, u_elab, vl, V, P,
                 rec_v, rec_w, rec_n, counts, mode, walks, D, seed, R, w1, T):
    """Chunk ``c`` runs tasks ``lo[c]..hi[c]-1`` into its slice of the record buffers;
    ``done[c]`` is the first task it did not finish (see :func:`_walk_tasks`)."""
    C = lo.shape[0]
    cap = rec_v.shape[0] // C
    for c in prange(C):
        rec_n[c] = 0
        acc = (rec_v[c * cap:(c + 1) * cap], rec_w[c * cap:(c + 1) * cap], rec_n[c:c + 1])
        done[c] = _walk_tasks(lo[c], hi[c], task_upd, task_plan, u_src, u_dst, u_op, u_elab,
                              vl, V, P, acc, counts, mode, walks, D, seed, R, w1, T)


@njit(cache=True, nogil=True)
def _merge(rec_v, rec_w, rec_n, cap, a, ids, nids):
    """Add every chunk's records into the dense accumulator ``a`` (sparse reset list ``ids``)."""
    for c in range(rec_n.shape[0]):
        m = min(rec_n[c], cap)
        for q in range(c * cap, c * cap + m):
            x = rec_v[q]
            if a[x] == 0.0:
                ids[nids[0]] = x
                nids[0] += 1
            a[x] += rec_w[q]


#: the view's arrays as the numba traversal takes them (:func:`_view_tuple`); ``dev``
#: marks cached vertices, ``cfg`` holds the memory model (indices ``_HOST``, ``_CREDIT``)
_View = namedtuple("_View", [
    "b_start", "b_deg", "b_nbr", "b_elab", "bi_start", "bi_deg", "bi_nbr", "bi_elab",
    "o_idx", "o_off", "o_nbr", "o_elab", "o_ins", "o_dl",
    "oi_idx", "oi_off", "oi_nbr", "oi_elab", "oi_ins", "oi_dl", "dev", "cfg", "qm"])
_HOST, _CREDIT = 0, 1
#: the delta plans' arrays (:func:`_plan_tuple`)
_Plan = namedtuple("_Plan", [
    "order", "vlabel", "bn_ptr", "bn_pos", "bn_dir", "bn_elabel", "na_ptr", "na_pos",
    "na_dir", "res_ptr", "res_pos", "res_sign", "pair_kind", "pair_elabel"])


def _view_tuple(view: BatchView, cached: np.ndarray | None = None, host: bool = True,
                credit: bool = False, masks: np.ndarray | None = None) -> _View:
    """The view's arrays for the numba traversal, plus the kernel's memory model:
    the vertices whose rows are cached, whether storage rows are in host memory,
    and whether a search counts for both storage rows (:func:`_edge`); and the
    candidate filter's masks the kernel tests (``None``: no filter)."""
    i32, i64 = np.int32, np.int64

    def a(x, dt):
        return np.ascontiguousarray(x, dtype=dt)
    dev = np.zeros(0, dtype=np.uint8)
    if cached is not None and np.size(cached):
        dev = np.zeros(max(int(view.n), 1), dtype=np.uint8)
        ids = np.asarray(cached, dtype=np.int64)
        dev[ids[(ids >= 0) & (ids < dev.size)]] = 1
    return _View(
        a(view.b_start, i64), a(view.b_deg, i32), a(view.b_nbr, i32), a(view.b_elab, i32),
        a(view.bi_start, i64), a(view.bi_deg, i32), a(view.bi_nbr, i32), a(view.bi_elab, i32),
        a(view.o_idx, i32), a(view.o_off, i64), a(view.o_nbr, i32), a(view.o_elab, i32),
        a(view.o_ins, i32), a(view.o_dl, i32),
        a(view.oi_idx, i32), a(view.oi_off, i64), a(view.oi_nbr, i32), a(view.oi_elab, i32),
        a(view.oi_ins, i32), a(view.oi_dl, i32),
        dev, np.array([int(bool(host)), int(bool(credit))], dtype=i64),
        np.zeros(0, np.uint64) if masks is None else a(masks, np.uint64))


def _plan_tuple(plans: DeltaPlans) -> _Plan:
    i32, i8 = np.int32, np.int8

    def a(x, dt):
        return np.ascontiguousarray(x, dtype=dt)
    return _Plan(a(plans.order, i32), a(plans.vlabel, i32), a(plans.bn_ptr, i32),
                 a(plans.bn_pos, i32), a(plans.bn_dir, i8), a(plans.bn_elabel, i32),
                 a(plans.na_ptr, i32), a(plans.na_pos, i32), a(plans.na_dir, i8),
                 a(plans.res_ptr, i32), a(plans.res_pos, i32), a(plans.res_sign, i8),
                 a(plans.pair_kind, i8), a(plans.pair_elabel, i32))


def _tasks(view: BatchView, plans: DeltaPlans, updates: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    valid = (np.flatnonzero(np.asarray(view.batch.valid, dtype=bool)).astype(np.int64)
             if updates is None else np.asarray(updates, dtype=np.int64))
    P = plans.num_plans
    return np.repeat(valid, P), np.tile(np.arange(P, dtype=np.int64), valid.size)


def max_row(view: BatchView) -> int:
    """``D``: the longest adjacency row any task of the batch can scan (storage or overlay)."""
    n = view.n
    m = 0
    for deg in (view.b_deg, view.bi_deg):
        if deg.size:
            m = max(m, int(np.asarray(deg[:n]).max(initial=0)))
    for off in (view.o_off, view.oi_off):
        if off.size > 1:
            m = max(m, int(np.diff(off).max(initial=0)))
    return max(m, 1)


def max_row_overlay(view: BatchView) -> int:
    """The longest overlay row of the batch (a lower bound for ``D``)."""
    m = 1
    for off in (view.o_off, view.oi_off):
        if off.size > 1:
            m = max(m, int(np.diff(off).max(initial=0)))
    return m


def default_walks(num_tasks: int, D: int, k: int, lo: int = 64,
                  per_root: float = 1.0) -> int:
    """GCSM §VI-A's number of walks ``M = |ΔE| D^(n-2) / 32^n``, clipped.

    The paper's formula grows as ``D^(n-2)``: on a power-law graph with
    ``D`` in the thousands it asks for ten or more walks per root for a
    4-vertex query, and the walks then cost as much as the exact matching they
    are meant to speed up (measured on an H100 host: 1.7 s of estimation for a
    45 ms kernel). So ``M`` is capped at ``per_root`` walks per root on
    average; one walk costs about ``n - 2`` node expansions where the exact
    matching expands the root's whole subtree.

    Parameters
    ----------
    num_tasks : int
        Roots of the execution forest (``|ΔE|`` times the plans).
    D : int
        The longest row.
    k : int
        Query vertices (``n`` in the paper).
    lo : int, optional
        At least this many walks (or one per root, if there are fewer roots).
        The default is 64.
    per_root : float, optional
        At most this many walks per root on average. The default is 1.0.

    Returns
    -------
    int

    Examples
    --------
    >>> default_walks(4096, 3196, 3)      # triangles: 4096 * 3196 / 32**3
    400
    >>> default_walks(4096, 3196, 4)      # 4-cycles: the paper asks for 9.7 per root
    4096
    """
    m = num_tasks * math.exp((k - 2) * math.log(max(D, 1)) - k * math.log(32.0))
    m = min(m, per_root * num_tasks)
    return int(max(round(m), min(lo, num_tasks), 1))


class Workspace:
    """Reusable per-vertex buffers of the estimator (reset sparsely between batches).

    Parameters
    ----------
    n : int
        Vertices to cover (grown on demand).
    """

    def __init__(self, n: int = 0) -> None:
        self.acc = np.zeros(max(n, 1), dtype=np.float64)
        self.ids = np.zeros(max(n, 1), dtype=np.int64)
        self.nids = np.zeros(1, dtype=np.int64)
        #: record slots per chunk of tasks (grows when one task reads more rows)
        self.record_room = 1 << 14
        self._rec_v = np.zeros(0, dtype=np.int32)
        self._rec_w = np.zeros(0, dtype=np.float64)

    def records(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Record buffers (vertex, weight) of at least ``size`` slots, reused."""
        if self._rec_v.size < size:
            self._rec_v = np.empty(size, dtype=np.int32)
            self._rec_w = np.empty(size, dtype=np.float64)
        return self._rec_v[:size], self._rec_w[:size]

    def ensure(self, n: int) -> None:
        if self.acc.size < n:
            self.reset()
            m = max(n, int(self.acc.size * 1.5))
            self.acc = np.zeros(m, dtype=np.float64)
            self.ids = np.zeros(m, dtype=np.int64)

    def reset(self) -> None:
        k = int(self.nids[0])
        self.acc[self.ids[:k]] = 0.0
        self.nids[0] = 0

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """``(vertex ids in first-read order, their values)`` of the last traversal."""
        ids = self.ids[: int(self.nids[0])].copy()
        return ids, self.acc[ids].copy()


def _run(view: BatchView, plans: DeltaPlans, mode: int, walks: int, seed: int,
         D: int | None = None, ws: Workspace | None = None, cached: np.ndarray | None = None,
         host: bool = True, credit: bool = False, updates: np.ndarray | None = None,
         masks: np.ndarray | None = None
         ) -> tuple[Workspace, np.ndarray, np.ndarray, np.ndarray]:
    """Traverse the batch's execution forest (``mode``: see :func:`_walk_tasks`; the
    memory model ``cached``, ``host``, ``credit``: see :func:`_view_tuple`).

    Tasks are split into chunks run in parallel, each writing its reads to its
    own slice of a record buffer; the records are then summed into ``ws``. A
    chunk whose slice fills up stops at the task that did not fit and goes on
    in the next round (with twice the room if that task alone was too big), so
    the result does not depend on the thread count or the buffer size.
    """
    b = view.batch
    task_upd, task_plan = _tasks(view, plans, updates)
    if ws is None:
        ws = Workspace(view.n)
    ws.reset()
    ws.ensure(view.n)
    T = int(task_upd.size)
    counts = np.zeros(T, dtype=np.int64)
    if T == 0:
        return ws, counts, task_upd, task_plan
    D = max_row(view) if D is None else int(D)
    walks = max(int(walks), 1)
    R = max(1, (walks + T - 1) // T)
    w1 = 1.0 if mode == 0 else (1.0 / R if mode == 1 else T / float(walks))
    args = (task_upd, task_plan, np.ascontiguousarray(b.src, np.int64),
            np.ascontiguousarray(b.dst, np.int64), np.ascontiguousarray(b.op, np.int8),
            np.ascontiguousarray(b.elabel, np.int32),
            np.ascontiguousarray(view.vlabel, np.int32),
            _view_tuple(view, cached, host, credit, masks),
            _plan_tuple(plans))
    C = int(min(T, 4 * numba.get_num_threads()))
    bounds = np.linspace(0, T, C + 1).astype(np.int64)
    lo, hi = bounds[:-1].copy(), bounds[1:].copy()
    cap = ws.record_room
    while lo.size:
        C = lo.size
        rec_v, rec_w = ws.records(C * cap)
        rec_n = np.zeros(C, dtype=np.int64)
        done = np.empty(C, dtype=np.int64)
        _walk_chunks(lo, hi, done, *args, rec_v, rec_w, rec_n, counts, mode, walks, D,
                     int(seed), R, w1, T)
        _merge(rec_v, rec_w, rec_n, cap, ws.acc, ws.ids, ws.nids)
        left = done < hi
        if np.any(left & (done == lo)):
            cap *= 2          # a single task's reads did not fit
        lo, hi = done[left], hi[left]
    ws.record_room = cap
    return ws, counts, task_upd, task_plan


def _dense(ws: Workspace, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.float64)
    ids, vals = ws.result()
    out[ids] = vals
    return out


def estimate_access(view: BatchView, plans: DeltaPlans, walks: int | None = None,
                    seed: int = 0, stratified: bool | None = None,
                    D: int | None = None, for_cache: bool = False) -> np.ndarray:
    """Estimated row reads per vertex for matching one batch (GCSM §IV, eq. 3).

    Parameters
    ----------
    view : BatchView
        The batch (its overlay rows are read in each task's state).
    plans : DeltaPlans
        The delta plans the engine will run.
    walks : int or None, optional
        ``M``, the number of random walks. The default is ``None``, meaning
        :func:`default_walks` (GCSM §VI-A's formula, clipped).
    seed : int, optional
        Seed of the walks; equal seeds give equal estimates. The default is 0.
    stratified : bool or None, optional
        Give every root ``ceil(M / T)`` walks instead of drawing the roots
        (module docstring). The default is ``None``, meaning: when ``M`` is at
        least the number of roots ``T``.
    D : int or None, optional
        The walks' ``D`` (at least the longest candidate list). The default
        is ``None``, meaning :func:`max_row` of the view.
    for_cache : bool, optional
        Rank rows for the cache, as the GPU engine does: only storage rows are
        credited, a binary search between two storage rows counts for both
        (either one, cached, would usually serve it: the kernel searches the
        cached row unless its probes cost more than the host row's,
        :func:`_search_cost`), and the last level of the plan is credited by
        look-ahead instead of being run (:func:`_look`).
        ``False`` estimates the reads of an uncached run. The default is
        ``False``.

    Returns
    -------
    numpy.ndarray
        float64[n]: the estimate ``C~_v`` for every vertex (0 for vertices no
        walk read).

    Examples
    --------
    >>> acc = estimate_access(view, plans, seed=1)          # doctest: +SKIP
    >>> hot = np.argsort(acc)[::-1][:100]                    # doctest: +SKIP
    """
    ws = estimate_access_sparse(view, plans, walks, seed, stratified, D,
                                for_cache=for_cache)
    return _dense(ws, view.n)


def estimate_access_sparse(view: BatchView, plans: DeltaPlans, walks: int | None = None,
                           seed: int = 0, stratified: bool | None = None,
                           D: int | None = None, ws: Workspace | None = None,
                           for_cache: bool = False) -> Workspace:
    """:func:`estimate_access` into a reusable :class:`Workspace` (cost independent of n).

    Returns
    -------
    Workspace
        ``ws.result()`` gives the vertices the walks read and their estimates.
    """
    T = int(np.count_nonzero(view.batch.valid)) * plans.num_plans
    D = max_row(view) if D is None else max(int(D), max_row_overlay(view))
    if walks is None:
        walks = default_walks(T, D, plans.k)
    if stratified is None:
        stratified = walks >= T
    ws, _, _, _ = _run(view, plans, 1 if stratified else 2, walks, seed, D, ws,
                       credit=for_cache)
    return ws


def exact_access(view: BatchView, plans: DeltaPlans, cached: np.ndarray | None = None,
                 host_storage: bool = True, for_cache: bool = False,
                 updates: np.ndarray | None = None, masks: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """True row reads per vertex, and raw matches per task, of one batch.

    The execution forest walked completely, every node once (the ground truth
    the estimator is measured against; also a slow delta
    counter). Which row a binary search reads depends on where the rows are
    (kernels/delta.cu ``wm_edge``), so the GPU kernel's reads are reproduced
    for a given cache.

    Parameters
    ----------
    view : BatchView
    plans : DeltaPlans
    cached : numpy.ndarray or None, optional
        Vertices whose storage rows are cached on the device. The default is
        ``None``: no cache.
    host_storage : bool, optional
        Storage rows are read from host memory (``False``: mirrored on the
        device, policy "device"). The default is ``True``.
    for_cache : bool, optional
        What the GPU sampler credits at rate 1 instead of the reads: storage
        rows only, a search between two storage rows for both, and the last
        level by look-ahead, not run (see :func:`estimate_access`). The
        default is ``False``.
    updates : numpy.ndarray or None, optional
        The updates whose tasks run (the GPU engine's ``last_updates``: the valid
        updates its candidate filter lets through). The default is ``None``: every
        valid update.
    masks : numpy.ndarray or None, optional
        The candidate filter's masks the kernel tests (the GPU engine's
        ``last_masks``). The default is ``None``: no filter.

    Returns
    -------
    access : numpy.ndarray
        float64[n] row reads per vertex.
    per_update : numpy.ndarray or None
        int64[B, 2]: ``plus``, ``minus`` matches per update in the plans' mode
        (raw matches times the plan weights, over the divisor); ``None`` with
        ``for_cache`` (the last level, where matches end, is not run).

    Raises
    ------
    ValueError
        ``cached`` with ``for_cache`` (the sampler it models reads no cache).
    """
    if for_cache and cached is not None:
        raise ValueError("for_cache models the GPU sampler, which reads no cache: "
                         "pass cached=None with it")
    ws, counts, task_upd, task_plan = _run(view, plans, 0, 1, 0, cached=cached,
                                           host=host_storage, credit=for_cache,
                                           updates=updates, masks=masks)
    acc = _dense(ws, view.n)
    if for_cache:
        return acc, None
    B = view.num_updates
    out = np.zeros((B, 2), dtype=np.int64)
    if counts.size:
        op = np.asarray(view.batch.op)[task_upd]
        kind = np.asarray(plans.pair_kind)[task_plan]
        plus = (op > 0) == (kind == 1)
        counts = counts * np.asarray(plans.weight, dtype=np.int64)[task_plan]
        np.add.at(out[:, 0], task_upd[plus], counts[plus])
        np.add.at(out[:, 1], task_upd[~plus], counts[~plus])
        out //= int(plans.divisor)
    return acc, out

