"""The numba traversal of GCSM's estimator (§IV): one batch's execution forest, walked or
exact (:mod:`.walk` says what it estimates and how it differs from the paper).

Map: recording a row read (:func:`_add`) < the memory model of a binary search
(:data:`HOST_COST`, :func:`_probes`, :func:`_search_cost`, :func:`_edge`) < one node's
candidates (:func:`_cheap`, :func:`_accept`, :func:`_pick`, :func:`_expand`) < the last
level's look-ahead (:func:`_other`, :func:`_stored`, :func:`_look`) < the random streams
(:func:`_next`, :func:`_uniform`, :func:`_below`, :func:`_binomial`) < one chunk of tasks
(:func:`_walk_tasks`) < the parallel chunks (:func:`_walk_chunks`) and their merge
(:func:`_merge`). Python callers go through :mod:`.walk`.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._cpu_rows import _pick_gen, _row, _search   # the CPU delta engine's row access

#: indices of the memory model in the view's ``cfg`` (:func:`.walk._view_tuple`)
_HOST, _CREDIT = 0, 1


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
