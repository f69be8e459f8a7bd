"""The sum over a query's quotients in compiled code (issue 23, full counts): every
quotient's ``hom`` by variable elimination, modulo a few primes, on every core
(:mod:`warpmatch._hombasis` is the same sum quotient by quotient in numpy, and the way
for the quotients this one cannot take).

Map: :class:`QuotientTable` (the quotients as a mixed-radix number over the query's label
classes: each class's partitions, their blocks' domains and Möbius coefficients modulo
each prime; the 0/1 blocks of arcs between two label classes, flat) < :func:`sum_range`
(the quotients at positions ``lo`` to ``hi`` of a spread order, :func:`spread`, split over
the cores: the sum of ``coef * hom`` modulo each prime, and which quotients it could not
count) < :func:`_sum_chunks` (one chunk a thread) < :func:`_hom_one` (one quotient: its
blocks and domains; eliminated whole, or split by fixing its vertex with the most arcs
where that projects less work or the whole does not fit) < :func:`_narrow` (a fixed
vertex's neighbours' domains cut to the data vertex's neighbours), :func:`_plan` (the
elimination order and its work, on bit masks) < :func:`_run` (the 0/1 tables per pair of
quotient vertices with arcs, eliminated in order) < :func:`_sum_out` (one vertex summed out
of the tables that hold it).

Why: yeast's 24-vertex quotients cost about 10^4 multiply-adds each (domains of tens of
data vertices after arc consistency) and there are 10^3-10^6 of them, where numpy's calls
cost about a millisecond a quotient: compiled, a quotient costs microseconds to a
millisecond, on every core. Human's quotients have tables of 10^7 entries and more: those
that do not fit a thread's scratch (:data:`POOL_ENTRIES`) go back to numpy (and from there
to the GPU where the count asks).

How it differs from :mod:`warpmatch._hombasis`: the tables are plain loops over every
cell (numpy contracts the last 0/1 block with BLAS); the order is the least work first
among the tables that fit the scratch (numpy's: among those under
:data:`~warpmatch._hombasis.MAX_TABLE`); a quotient is split at one level only, and only
where every part fits (and, where the whole fits too, the parts' plans add up to less work;
where it does not, up to :data:`SPLIT_CAP`), else numpy takes it;
residues are int64 below 2^26 (a product below 2^52; the 0/1 tables of arcs are read
first, one residue for all primes, and most products stop there), not float64.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import get_num_threads, njit, prange

__all__ = ["QuotientTable", "sum_range", "POOL_ENTRIES"]

#: int64 entries of one thread's scratch for a quotient's tables (8 MiB)
POOL_ENTRIES = 1 << 20
#: multiply-adds of a quotient's elimination above which fixing its vertex with the most
#: arcs to each of its data vertices in turn is weighed against it (:func:`_hom_one`)
SPLIT_WORK = 1e6
#: the most multiply-adds of a split the kernel makes where the quotient's tables do not
#: fit unsplit (about a second): a call cannot be stopped, numpy's split can
SPLIT_CAP = 3e8


@dataclass
class QuotientTable:
    """The quotients of one query, numbered: quotient ``t`` takes, for each label class
    ``c`` in turn, partition ``t // prod(radix[:c]) % radix[c]`` of that class.

    Attributes
    ----------
    radix : int64 array (classes,)
        Each class's number of partitions.
    part_base : int64 array (classes,)
        The row of each class's first partition in the ``cp_*`` arrays.
    cls_of, pos_of : int64 arrays (k,)
        Each query vertex's class and its position in the class.
    cp_block : int64 array (partitions, widest class)
        Each partition's block (its index among the partition's blocks) of each of the
        class's vertices.
    cp_nblk : int64 array (partitions,)
    cp_bid : int64 array (partitions, widest class)
        The id of each of a partition's blocks (one per distinct set of query vertices),
        for the domains.
    cp_coef : int64 array (partitions, primes)
        Each partition's Möbius coefficient modulo each prime (the product over classes is
        the quotient's).
    dom_off, dom_len : int64 arrays (blocks,)
        Each block's domain in ``dom_pool``: positions in its label class.
    dom_pool : int64 array
    arc_a, arc_b, arc_blk : int64 arrays (arcs,)
        The query's arcs (``a -> b``) and the 0/1 block of each (rows ``a``'s label class,
        columns ``b``'s).
    blk_off, blk_ncol : int64 arrays (blocks of arcs,)
    blk_pool : uint8 array
        The 0/1 blocks, row-major, one after another.
    mods : int64 array (primes,)
    """

    radix: np.ndarray
    part_base: np.ndarray
    cls_of: np.ndarray
    pos_of: np.ndarray
    cp_block: np.ndarray
    cp_nblk: np.ndarray
    cp_bid: np.ndarray
    cp_coef: np.ndarray
    dom_off: np.ndarray
    dom_len: np.ndarray
    dom_pool: np.ndarray
    arc_a: np.ndarray
    arc_b: np.ndarray
    arc_blk: np.ndarray
    blk_off: np.ndarray
    blk_ncol: np.ndarray
    blk_pool: np.ndarray
    mods: np.ndarray

    @property
    def total(self) -> int:
        """The number of quotients."""
        return int(np.prod([int(r) for r in self.radix], dtype=object)) if self.radix.size else 1


def sum_range(tab: QuotientTable, lo: int, hi: int, pool_entries: int = POOL_ENTRIES,
              split_work: float = SPLIT_WORK) -> tuple[np.ndarray, np.ndarray]:
    """The quotients at positions ``lo`` to ``hi - 1`` of ``tab``'s visiting order
    (:func:`spread`: position ``i`` is quotient ``i * m mod n``), over the cores, each
    thread's tables in ``pool_entries`` int64; a quotient whose elimination passes ``split_work``
    multiply-adds is split where that projects less work (negative: wherever it can be).

    Returns
    -------
    (int64 array (primes,), int64 array)
        The sum of ``coef * hom`` modulo each prime over the quotients counted, and the
        numbers (not positions) of those not counted (a table past the scratch): the
        caller counts them another way.
    """
    n = hi - lo
    if n <= 0:
        return np.zeros(tab.mods.size, np.int64), np.zeros(0, np.int64)
    chunks = max(1, min(n, 4 * get_num_threads()))
    sums = np.zeros((chunks, tab.mods.size), np.int64)
    failed = np.zeros(n, np.uint8)
    total_n = tab.total
    mult = spread(total_n)
    _sum_chunks(lo, hi, total_n, mult, chunks, tab.radix, tab.part_base, tab.cls_of,
                tab.pos_of, tab.cp_block, tab.cp_nblk, tab.cp_bid, tab.cp_coef, tab.dom_off,
                tab.dom_len, tab.dom_pool, tab.arc_a, tab.arc_b, tab.arc_blk, tab.blk_off,
                tab.blk_ncol, tab.blk_pool, tab.mods, pool_entries, float(split_work), sums,
                failed)
    total = np.zeros(tab.mods.size, np.int64)
    for row in sums:
        total = (total + row) % tab.mods
    pos = lo + np.flatnonzero(failed).astype(np.int64)
    return total, (pos * mult) % max(total_n, 1)


def spread(n: int) -> int:
    """The multiplier of the order in which :func:`sum_range` visits ``n`` quotients:
    position ``i`` is quotient ``i * m mod n``, ``m`` near ``0.618 n`` and prime to it, so
    that the first positions sample every part of the numbering (the lowest numbers are
    the least merged quotients, the costliest: a projection from them ran 3x high on
    yeast's ``query_dense_32_4``)."""
    if n <= 2:
        return 1
    m = max(1, int(n * 0.6180339887)) | 1
    while math.gcd(m, n) != 1:
        m += 2
    return m % n or 1


@njit(cache=True, nogil=True, parallel=True)
def _sum_chunks(lo, hi, total_n, mult, chunks, radix, part_base, cls_of, pos_of, cp_block,
                cp_nblk, cp_bid, cp_coef, dom_off, dom_len, dom_pool, arc_a, arc_b, arc_blk,
                blk_off, blk_ncol, blk_pool, mods, pool_entries, split_work, sums,
                failed):  # pragma: no cover - compiled
    n = hi - lo
    k = cls_of.size
    P = mods.size
    nt = arc_a.size + k + 1
    maxdom = 1
    for i in range(dom_len.size):
        maxdom = max(maxdom, dom_len[i])
    # the domains a split's level cuts: a fixed vertex, then a copy per arc of it
    rsz = (arc_a.size + 1) * maxdom + 1
    for ch in prange(chunks):
        a = lo + n * ch // chunks
        b = lo + n * (ch + 1) // chunks
        # the thread's scratch, reused by every quotient of its chunk
        rep = np.empty(k, np.int64)
        qb = np.empty(k, np.int64)
        sel = np.empty(radix.size, np.int64)
        tscope = np.empty((nt, k), np.int64)
        tlen = np.empty(nt, np.int64)
        toff = np.empty(nt, np.int64)
        talive = np.empty(nt, np.bool_)
        tbin = np.empty(nt, np.bool_)
        pool = np.empty(pool_entries, np.int64)
        res = np.empty(P, np.int64)
        coef = np.empty(P, np.int64)
        acc = np.zeros(P, np.int64)
        lpool = np.empty(k * maxdom + rsz, np.int64)
        doff = np.empty(k, np.int64)
        dcnt = np.empty(k, np.int64)
        order = np.empty(k, np.int64)
        rsum = np.empty(P, np.int64)
        for i in range(a, b):
            t = (i * mult) % total_n
            ok = _hom_one(t, radix, part_base, cls_of, pos_of, cp_block, cp_nblk, cp_bid,
                          cp_coef, dom_off, dom_len, dom_pool, arc_a, arc_b, arc_blk,
                          blk_off, blk_ncol, blk_pool, mods, rep, qb, sel, tscope, tlen,
                          toff, talive, tbin, pool, res, coef, lpool, doff, dcnt, order,
                          rsum, split_work)
            if not ok:
                failed[i - lo] = 1
                continue
            for p in range(P):
                acc[p] = (acc[p] + coef[p] * res[p]) % mods[p]
        for p in range(P):
            sums[ch, p] = acc[p]


@njit(cache=True, nogil=True)
def _hom_one(t, radix, part_base, cls_of, pos_of, cp_block, cp_nblk, cp_bid, cp_coef,
             dom_off, dom_len, dom_pool, arc_a, arc_b, arc_blk, blk_off, blk_ncol, blk_pool,
             mods, rep, qb, sel, tscope, tlen, toff, talive, tbin, pool, res,
             coef, lpool, doff, dcnt, order, rsum,
             split_work):  # pragma: no cover - compiled
    """Quotient ``t``'s ``hom`` modulo each prime into ``res`` and its coefficient into
    ``coef``; False where it has to be counted another way."""
    P = mods.size
    k = cls_of.size
    # the quotient: each class's partition, its vertices' blocks and their domains
    rem = t
    K = 0
    for c in range(radix.size):
        sel[c] = part_base[c] + rem % radix[c]
        rem //= radix[c]
    for p in range(P):
        coef[p] = 1
    offs = np.empty(radix.size, np.int64)
    for c in range(radix.size):
        offs[c] = K
        K += cp_nblk[sel[c]]
        for p in range(P):
            coef[p] = coef[p] * cp_coef[sel[c], p] % mods[p]
    if K > 62:
        return False                 # the planner's scopes are bit masks
    for v in range(k):
        c = cls_of[v]
        lb = cp_block[sel[c], pos_of[v]]
        rep[v] = offs[c] + lb
        qb[offs[c] + lb] = cp_bid[sel[c], lb]
    # the domains, copied: a split cuts the neighbours' of the vertex it fixes
    top = 0
    for x in range(K):
        n = dom_len[qb[x]]
        doff[x] = top
        dcnt[x] = n
        for i in range(n):
            lpool[top + i] = dom_pool[dom_off[qb[x]] + i]
        top += n
    free = top
    w0 = _plan(K, dcnt, rep, arc_a, arc_b, P, pool.size, order)
    # fix the vertex with the most arcs to each of its data vertices in turn, where the
    # plans of what that leaves (its neighbours' domains cut to the data vertex's
    # neighbours) add up to less work, or where the whole does not fit
    v = -1
    if w0 < 0 or w0 > split_work:
        deg = np.zeros(K, np.int64)
        for e in range(arc_a.size):
            deg[rep[arc_a[e]]] += 1
            deg[rep[arc_b[e]]] += 1
        for u in range(K):
            if dcnt[u] > 1 and (v < 0 or deg[u] > deg[v]):
                v = u
    base_off = doff[:K].copy()
    base_cnt = dcnt[:K].copy()
    split = v >= 0
    wsplit = 0.0
    for i in range(base_cnt[v] if split else 0):
        if _narrow(K, v, lpool[base_off[v] + i], rep, arc_a, arc_b, arc_blk, blk_off,
                   blk_ncol, blk_pool, lpool, base_off, base_cnt, doff, dcnt, free):
            w = _plan(K, dcnt, rep, arc_a, arc_b, P, pool.size, order)
            if w < 0:
                split = False            # a part does not fit either
                break
            wsplit += w + K * K
        if w0 >= 0 and wsplit >= w0 and split_work >= 0:
            split = False                # no less work than the whole
            break
        if w0 < 0 and wsplit > SPLIT_CAP:
            return False                 # numpy's split asks the caller's stop meanwhile
    if not split:
        if w0 < 0:
            return False
        if v >= 0:                       # the probes cut the domains and took the order
            for u in range(K):
                doff[u] = base_off[u]
                dcnt[u] = base_cnt[u]
            _plan(K, dcnt, rep, arc_a, arc_b, P, pool.size, order)
        return _run(K, dcnt, doff, lpool, rep, arc_a, arc_b, arc_blk, blk_off, blk_ncol,
                    blk_pool, mods, order, tscope, tlen, toff, talive, tbin, pool, res)
    for p in range(P):
        rsum[p] = 0
    for i in range(base_cnt[v]):
        if not _narrow(K, v, lpool[base_off[v] + i], rep, arc_a, arc_b, arc_blk, blk_off,
                       blk_ncol, blk_pool, lpool, base_off, base_cnt, doff, dcnt, free):
            continue                     # a neighbour with no data vertex left: hom 0
        # every part's plan fitted above
        _plan(K, dcnt, rep, arc_a, arc_b, P, pool.size, order)
        if not _run(K, dcnt, doff, lpool, rep, arc_a, arc_b, arc_blk, blk_off, blk_ncol,
                    blk_pool, mods, order, tscope, tlen, toff, talive, tbin, pool, res):
            return False
        for p in range(P):
            rsum[p] = (rsum[p] + res[p]) % mods[p]
    for p in range(P):
        res[p] = rsum[p]
    return True


@njit(cache=True, nogil=True)
def _narrow(K, v, x, rep, arc_a, arc_b, arc_blk, blk_off, blk_ncol, blk_pool, lpool,
            base_off, base_cnt, doff, dcnt, free):  # pragma: no cover - compiled
    """The domains ``base_*`` into ``doff``/``dcnt`` with quotient vertex ``v`` fixed to
    ``x`` (a position in its class) and each neighbour's domain cut to the positions ``x``
    has the arc with (copies from ``free`` on in ``lpool``); False where one empties (no
    homomorphism maps ``v`` to ``x``)."""
    for u in range(K):
        doff[u] = base_off[u]
        dcnt[u] = base_cnt[u]
    top = free
    lpool[top] = x
    doff[v] = top
    dcnt[v] = 1
    top += 1
    for e in range(arc_a.size):
        a = rep[arc_a[e]]
        b = rep[arc_b[e]]
        if a != v and b != v:
            continue
        w = b if a == v else a
        ncol = blk_ncol[arc_blk[e]]
        boff = blk_off[arc_blk[e]]
        n = 0
        for i in range(dcnt[w]):
            y = lpool[doff[w] + i]
            if a == v:
                ok = blk_pool[boff + x * ncol + y] != 0
            else:
                ok = blk_pool[boff + y * ncol + x] != 0
            if ok:
                lpool[top + n] = y
                n += 1
        if n == 0:
            return False
        doff[w] = top
        dcnt[w] = n
        top += n
    return True


@njit(cache=True, nogil=True)
def _plan(K, dom, rep, arc_a, arc_b, P, pool_size, order):  # pragma: no cover - compiled
    """The elimination order into ``order`` (least work first among the tables that fit
    the pool, as :func:`_run` builds them) and its multiply-adds, or -1 where no order
    fits. Scopes are bit masks over the quotient's vertices."""
    nt = 0
    tm = np.empty(arc_a.size + K + 1, np.int64)
    talive = np.empty(arc_a.size + K + 1, np.bool_)
    top = 0
    for e in range(arc_a.size):
        m = (np.int64(1) << rep[arc_a[e]]) | (np.int64(1) << rep[arc_b[e]])
        seen = False
        for i in range(nt):
            if tm[i] == m:
                seen = True
                break
        if not seen:
            tm[nt] = m
            talive[nt] = True
            nt += 1
            top += dom[rep[arc_a[e]]] * dom[rep[arc_b[e]]] * P
    if top > pool_size:
        return -1.0
    alive = np.int64(0)
    for v in range(K):
        alive |= np.int64(1) << v
    total = 0.0
    for step in range(K):
        best, best_work, best_out, best_u = -1, np.inf, 0.0, np.int64(0)
        for v in range(K):
            bit = np.int64(1) << v
            if alive & bit == 0:
                continue
            u = np.int64(0)
            for i in range(nt):
                if talive[i] and tm[i] & bit != 0:
                    u |= tm[i]
            u &= ~bit
            out = 1.0
            for w in range(K):
                if u & (np.int64(1) << w) != 0:
                    out *= dom[w]
            work = out * dom[v]
            if work < best_work and top + out * P <= pool_size:
                best, best_work, best_out, best_u = v, work, out, u
        if best < 0:
            return -1.0
        order[step] = best
        total += best_work
        bit = np.int64(1) << best
        for i in range(nt):
            if talive[i] and tm[i] & bit != 0:
                talive[i] = False
        if best_u != 0:
            tm[nt] = best_u
            talive[nt] = True
            nt += 1
            top += np.int64(best_out) * P
        alive &= ~bit
    return total


@njit(cache=True, nogil=True)
def _run(K, dom, doff, lpool, rep, arc_a, arc_b, arc_blk, blk_off, blk_ncol, blk_pool, mods,
         order, tscope, tlen, toff, talive, tbin, pool, res):  # pragma: no cover - compiled
    """Build the quotient's 0/1 tables over the domains ``lpool[doff[x]:][:dom[x]]`` and
    sum its vertices out in ``order``, the product into ``res``; False where a table does
    not fit the pool."""
    P = mods.size
    for p in range(P):
        res[p] = 1
    # one 0/1 table per pair of quotient vertices with arcs: the product of their blocks
    nt = 0
    top = 0
    for e in range(arc_a.size):
        x = rep[arc_a[e]]
        y = rep[arc_b[e]]
        at = -1
        for i in range(nt):
            if (tscope[i, 0] == x and tscope[i, 1] == y) or (tscope[i, 0] == y
                                                             and tscope[i, 1] == x):
                at = i
                break
        if at < 0:
            size = dom[x] * dom[y] * P
            if top + size > pool.size:
                return False
            at = nt
            nt += 1
            tscope[at, 0] = x
            tscope[at, 1] = y
            tlen[at] = 2
            toff[at] = top
            talive[at] = True
            tbin[at] = True
            for i in range(size):
                pool[top + i] = 1
            top += size
        # rows of the table's first vertex
        r0, c0 = (x, y) if tscope[at, 0] == x else (y, x)
        ncol = blk_ncol[arc_blk[e]]
        boff = blk_off[arc_blk[e]]
        for i in range(dom[x]):
            r = lpool[doff[x] + i]
            for j in range(dom[y]):
                if blk_pool[boff + r * ncol + lpool[doff[y] + j]] == 0:
                    ii, jj = (i, j) if r0 == x else (j, i)
                    base = toff[at] + (ii * dom[c0] + jj) * P
                    for p in range(P):
                        pool[base + p] = 0
    inu = np.zeros(K, np.bool_)
    scope = np.empty(K, np.int64)
    digit = np.empty(K, np.int64)
    mine = np.empty(nt + K, np.int64)
    stride = np.zeros((nt + K, K), np.int64)
    for step in range(K):
        top, nt = _sum_out(order[step], K, nt, dom, tscope, tlen, toff, talive, tbin, pool,
                           top, mods, res, inu, scope, digit, mine, stride)
        if top < 0:
            return False
    return True


@njit(cache=True, nogil=True)
def _sum_out(v, K, nt, dom, tscope, tlen, toff, talive, tbin, pool, top, mods, res, inu,
             scope, digit, mine, stride):  # pragma: no cover - compiled
    """Sum quotient vertex ``v`` out of the product of the tables that hold it: one new
    table over their other vertices (ascending), or a factor of ``res`` where they hold no
    other. The pool's new top and the number of tables, or ``(-1, nt)`` where the new
    table does not fit."""
    P = mods.size
    m = 0
    for i in range(nt):
        if talive[i]:
            for j in range(tlen[i]):
                if tscope[i, j] == v:
                    mine[m] = i
                    m += 1
                    break
    for u in range(K):
        inu[u] = False
    for a in range(m):
        i = mine[a]
        for j in range(tlen[i]):
            inu[tscope[i, j]] = True
    inu[v] = False
    r = 0
    for u in range(K):
        if inu[u]:
            scope[r] = u
            r += 1
    # each table's strides over the quotient's vertices (0 where it does not hold one),
    # the last of its scope fastest, residues innermost
    for a in range(m):
        i = mine[a]
        for u in range(K):
            stride[a, u] = 0
        st = P
        for j in range(tlen[i] - 1, -1, -1):
            stride[a, tscope[i, j]] = st
            st *= dom[tscope[i, j]]
    size = 1
    for j in range(r):
        size *= dom[scope[j]]
    if top + size * P > pool.size:
        return -1, nt
    out = top
    base = np.empty(m, np.int64)
    sacc = np.empty(P, np.int64)
    for j in range(r):
        digit[j] = 0
    dv = dom[v]
    for cell in range(size):
        for a in range(m):
            b = toff[mine[a]]
            for j in range(r):
                b += digit[j] * stride[a, scope[j]]
            base[a] = b
        for p in range(P):
            sacc[p] = 0
        for x in range(dv):
            # the 0/1 tables of arcs first (the same in every residue): most products stop
            # at one of them
            zero = False
            for a in range(m):
                if tbin[mine[a]] and pool[base[a] + x * stride[a, v]] == 0:
                    zero = True
                    break
            if zero:
                continue
            for p in range(P):
                prod = 1
                for a in range(m):
                    if not tbin[mine[a]]:
                        prod = prod * pool[base[a] + p + x * stride[a, v]] % mods[p]
                sacc[p] += prod
        for p in range(P):
            pool[out + cell * P + p] = sacc[p] % mods[p]
        # the next cell: the last vertex of the scope fastest
        j = r - 1
        while j >= 0:
            digit[j] += 1
            if digit[j] < dom[scope[j]]:
                break
            digit[j] = 0
            j -= 1
    for a in range(m):
        talive[mine[a]] = False
    if r == 0:
        for p in range(P):
            res[p] = res[p] * pool[out + p] % mods[p]
        return top, nt
    for j in range(r):
        tscope[nt, j] = scope[j]
    tlen[nt] = r
    toff[nt] = out
    talive[nt] = True
    tbin[nt] = False
    return out + size * P, nt + 1
