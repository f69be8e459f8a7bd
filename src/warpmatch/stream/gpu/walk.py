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

One deviation, on by default (``stratified=True``): the batch's roots are
known and cheap, so instead of sampling roots we give every root exactly
``R = ceil(M / T)`` walks (stratified sampling; the estimator stays unbiased,
with weight ``D^(i-1) / R``, and no updated edge is left unexplored). With
``stratified=False`` the roots are drawn exactly as in the paper.

The same traversal with every node visited once and weight 1 (``exact``)
counts the true row reads and the matches; the tests and ``bench/stream.py``
use it as ground truth for the estimator (GCSM §VI-D coverage).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..types import BatchView, DeltaPlans

__all__ = ["estimate_access", "estimate_access_sparse", "exact_access", "degree_scores",
           "default_walks", "max_row", "max_row_overlay", "Workspace"]


@njit(cache=True, nogil=True, inline="always")
def _lower_bound(arr, lo, hi, x):
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True, inline="always")
def _row(x, start, deg, idx, off):
    """``(overlay?, lo, hi)`` of ``x``'s row in one direction (as the engines read it)."""
    r = idx[x]
    if r < 0:
        if x >= start.shape[0] or x >= deg.shape[0]:
            return 0, np.int64(0), np.int64(0)
        lo = np.int64(start[x])
        return 0, lo, lo + deg[x]
    return 1, np.int64(off[r]), np.int64(off[r + 1])


@njit(cache=True, nogil=True, inline="always")
def _add(acc, x, w):
    """``acc[0][x] += w``, recording ``x`` in ``acc[1]`` (count in ``acc[2][0]``) on first touch."""
    a, ids, nids = acc
    if a[x] == 0.0:
        ids[nids[0]] = x
        nids[0] += 1
    a[x] += w


@njit(cache=True, nogil=True)
def _search(ov, lo, hi, c, p, lab, nbr, elab, onbr, oelab, ins, dl):
    """Is ``c`` alive at state ``p`` in the row ``[lo, hi)`` (label ``lab``, -1 any)?"""
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


@njit(cache=True, nogil=True)
def _edge(a, b, p, lab, w, acc, V):
    """Data edge ``a -> b`` alive at ``p``; reads the shorter of out(a) and in(b), as the
    GPU kernel does, and adds ``w`` to the read row's vertex in ``acc``."""
    (b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
     o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
     oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl) = V
    ova, loa, hia = _row(a, b_start, b_deg, o_idx, o_off)
    ovb, lob, hib = _row(b, bi_start, bi_deg, oi_idx, oi_off)
    if hia - loa <= hib - lob:
        _add(acc, a, w)
        return _search(ova, loa, hia, b, p, lab, b_nbr, b_elab, o_nbr, o_elab, o_ins, o_dl)
    _add(acc, b, w)
    return _search(ovb, lob, hib, a, p, lab, bi_nbr, bi_elab, oi_nbr, oi_elab, oi_ins, oi_dl)


@njit(cache=True, nogil=True)
def _accept(d, c, skip, j, p, M, vl, P, w, acc, V):
    """Plan rules 1, 4-7 for candidate ``c`` at depth ``d`` (cheap tests first)."""
    (order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel, na_ptr, na_pos, na_dir,
     res_ptr, res_pos, res_sign, pair_kind, pair_elabel) = P
    want = pvl[j, d]
    if want != -1 and vl.shape[0] > 0 and vl[c] != want:
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
def _expand(d, j, p, M, vl, P, w, acc, V, out):
    """Valid candidates of depth ``d`` for the partial match ``M[0..d-1]`` into ``out``.

    The generating list is the shortest backward neighbour's row (one read of
    that row); every other test reads the row it searches. Returns the count.
    """
    (order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel, na_ptr, na_pos, na_dir,
     res_ptr, res_pos, res_sign, pair_kind, pair_elabel) = P
    (b_start, b_deg, b_nbr, b_elab, bi_start, bi_deg, bi_nbr, bi_elab,
     o_idx, o_off, o_nbr, o_elab, o_ins, o_dl,
     oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl) = V
    best = -1
    best_len = np.int64(1) << 62
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
            out[n] = c
            n += 1
    return n


@njit(cache=True, nogil=True)
def _traverse(task_upd, task_plan, u_src, u_dst, u_op, u_elab, vl, V, P, acc, counts,
              mode, walks, D, seed):
    """Run the execution forest of one batch.

    ``mode`` 0: exact (every node, weight 1; ``counts[t]`` = raw matches of task ``t``).
    ``mode`` 1: merged random walks with stratified roots; ``mode`` 2: paper roots
    (``Binomial(walks, 1/T)``). ``acc`` receives the (estimated) row reads.
    """
    (order, pvl, bn_ptr, bn_pos, bn_dir, bn_elabel, na_ptr, na_pos, na_dir,
     res_ptr, res_pos, res_sign, pair_kind, pair_elabel) = P
    np.random.seed(seed)
    T = task_upd.shape[0]
    k = order.shape[1]
    M = np.empty(k, dtype=np.int64)
    cand = np.empty((k, D + 1), dtype=np.int64)
    cwalk = np.zeros((k, D + 1), dtype=np.int64)
    ncand = np.zeros(k, dtype=np.int64)
    it = np.zeros(k, dtype=np.int64)
    bnode = np.zeros(k, dtype=np.int64)
    R = max(1, (walks + T - 1) // T)
    # weight of one walk at tree level 1 (a root); level i multiplies by D^(i-1)
    if mode == 0:
        w1 = 1.0
    elif mode == 1:
        w1 = 1.0 / R
    else:
        w1 = T / float(walks)
    for t in range(T):
        u = task_upd[t]
        j = task_plan[t]
        if mode == 0:
            B = 1
        elif mode == 1:
            B = R
        else:
            B = np.random.binomial(walks, 1.0 / T)
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
        if kind == 1 and pair_elabel[j] != -1 and u_elab[u] != pair_elabel[j]:
            continue
        M[0] = s0
        w = w1 * B
        if not _accept(1, s1, -1, j, p, M, vl, P, w, acc, V):
            continue
        M[1] = s1
        if k == 2:
            counts[t] += 1
            continue
        # depth-first over the nodes reached by at least one walk
        d = 2
        bnode[2] = B
        fresh = True
        while d >= 2:
            if fresh:
                fresh = False
                lvl_w = w1 * (float(D) ** (d - 2)) if mode != 0 else 1.0
                n = _expand(d, j, p, M, vl, P, lvl_w * bnode[d], acc, V, cand[d])
                ncand[d] = n
                it[d] = 0
                if d == k - 1:
                    if mode == 0:
                        counts[t] += n
                    d -= 1
                    continue
                if mode == 0:
                    for q in range(n):
                        cwalk[d, q] = 1
                else:
                    for q in range(n):
                        cwalk[d, q] = 0
                    if n > 0:
                        K = np.random.binomial(bnode[d], min(1.0, n / float(D)))
                        for _ in range(K):
                            cwalk[d, np.random.randint(0, n)] += 1
            # next child of depth d reached by a walk
            moved = False
            while it[d] < ncand[d]:
                q = it[d]
                it[d] = q + 1
                if cwalk[d, q] > 0:
                    M[d] = cand[d, q]
                    bnode[d + 1] = cwalk[d, q]
                    d += 1
                    fresh = True
                    moved = True
                    break
            if not moved:
                d -= 1
    return 0


def _view_tuple(view: BatchView) -> tuple:
    i32, i64 = np.int32, np.int64

    def a(x, dt):
        return np.ascontiguousarray(x, dtype=dt)
    return (a(view.b_start, i64), a(view.b_deg, i32), a(view.b_nbr, i32), a(view.b_elab, i32),
            a(view.bi_start, i64), a(view.bi_deg, i32), a(view.bi_nbr, i32),
            a(view.bi_elab, i32),
            a(view.o_idx, i32), a(view.o_off, i64), a(view.o_nbr, i32), a(view.o_elab, i32),
            a(view.o_ins, i32), a(view.o_dl, i32),
            a(view.oi_idx, i32), a(view.oi_off, i64), a(view.oi_nbr, i32),
            a(view.oi_elab, i32), a(view.oi_ins, i32), a(view.oi_dl, i32))


def _plan_tuple(plans: DeltaPlans) -> tuple:
    i32, i8 = np.int32, np.int8

    def a(x, dt):
        return np.ascontiguousarray(x, dtype=dt)
    return (a(plans.order, i32), a(plans.vlabel, i32), a(plans.bn_ptr, i32),
            a(plans.bn_pos, i32), a(plans.bn_dir, i8), a(plans.bn_elabel, i32),
            a(plans.na_ptr, i32), a(plans.na_pos, i32), a(plans.na_dir, i8),
            a(plans.res_ptr, i32), a(plans.res_pos, i32), a(plans.res_sign, i8),
            a(plans.pair_kind, i8), a(plans.pair_elabel, i32))


def _tasks(view: BatchView, plans: DeltaPlans) -> tuple[np.ndarray, np.ndarray]:
    valid = np.flatnonzero(np.asarray(view.batch.valid, dtype=bool)).astype(np.int64)
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


def default_walks(num_tasks: int, D: int, k: int, lo: int = 8, hi: int = 1 << 20) -> int:
    """GCSM §VI-A's number of walks ``M = |ΔE| D^(n-2) / 32^n``, clipped.

    Parameters
    ----------
    num_tasks : int
        Roots of the execution forest (``|ΔE|`` times the plans).
    D : int
        The longest row.
    k : int
        Query vertices (``n`` in the paper).
    lo, hi : int, optional
        At least ``lo`` walks per root and at most ``hi`` walks in all (the
        paper's formula grows as ``D^(k-2)``). The defaults are 8 and 2**20.

    Returns
    -------
    int
    """
    m = num_tasks * math.exp((k - 2) * math.log(max(D, 1)) - k * math.log(32.0))
    return int(min(max(m, lo * num_tasks, 1), max(hi, num_tasks)))


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
         D: int | None = None, ws: Workspace | None = None
         ) -> tuple[Workspace, np.ndarray, np.ndarray, np.ndarray]:
    b = view.batch
    task_upd, task_plan = _tasks(view, plans)
    if ws is None:
        ws = Workspace(view.n)
    ws.reset()
    ws.ensure(view.n)
    counts = np.zeros(task_upd.size, dtype=np.int64)
    if task_upd.size:
        _traverse(task_upd, task_plan, np.ascontiguousarray(b.src, np.int64),
                  np.ascontiguousarray(b.dst, np.int64), np.ascontiguousarray(b.op, np.int8),
                  np.ascontiguousarray(b.elabel, np.int32),
                  np.ascontiguousarray(view.vlabel, np.int32), _view_tuple(view),
                  _plan_tuple(plans), (ws.acc, ws.ids, ws.nids), counts, mode,
                  max(int(walks), 1), max_row(view) if D is None else int(D), int(seed))
    return ws, counts, task_upd, task_plan


def _dense(ws: Workspace, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.float64)
    ids, vals = ws.result()
    out[ids] = vals
    return out


def estimate_access(view: BatchView, plans: DeltaPlans, walks: int | None = None,
                    seed: int = 0, stratified: bool = True, D: int | None = None) -> np.ndarray:
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
    stratified : bool, optional
        Give every root ``ceil(M / T)`` walks instead of drawing the roots
        (module docstring). The default is ``True``.
    D : int or None, optional
        The walks' ``D`` (at least the longest candidate list). The default
        is ``None``, meaning :func:`max_row` of the view.

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
    ws = estimate_access_sparse(view, plans, walks, seed, stratified, D)
    return _dense(ws, view.n)


def estimate_access_sparse(view: BatchView, plans: DeltaPlans, walks: int | None = None,
                           seed: int = 0, stratified: bool = True, D: int | None = None,
                           ws: Workspace | None = None) -> Workspace:
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
    ws, _, _, _ = _run(view, plans, 1 if stratified else 2, walks, seed, D, ws)
    return ws


def exact_access(view: BatchView, plans: DeltaPlans) -> tuple[np.ndarray, np.ndarray]:
    """True row reads per vertex, and raw matches per task, of one batch.

    The execution forest walked completely, every node once (the ground truth
    the estimator is measured against; also a slow single-threaded delta
    counter).

    Parameters
    ----------
    view : BatchView
    plans : DeltaPlans

    Returns
    -------
    access : numpy.ndarray
        float64[n] row reads per vertex.
    per_update : numpy.ndarray
        int64[B, 2]: raw (unmultiplied) ``plus``, ``minus`` matches per update.
    """
    ws, counts, task_upd, task_plan = _run(view, plans, 0, 1, 0)
    acc = _dense(ws, view.n)
    B = view.num_updates
    out = np.zeros((B, 2), dtype=np.int64)
    if counts.size:
        op = np.asarray(view.batch.op)[task_upd]
        kind = np.asarray(plans.pair_kind)[task_plan]
        plus = (op > 0) == (kind == 1)
        np.add.at(out[:, 0], task_upd[plus], counts[plus])
        np.add.at(out[:, 1], task_upd[~plus], counts[~plus])
    return acc, out


def degree_scores(view: BatchView) -> np.ndarray:
    """The degree-based policy's scores (GCSM §VI-A "Naive"): out + in degree per vertex.

    Parameters
    ----------
    view : BatchView

    Returns
    -------
    numpy.ndarray
        float64[n].
    """
    n = view.n
    s = np.zeros(n, dtype=np.float64)
    m = min(n, view.b_deg.shape[0])
    s[:m] += view.b_deg[:m]
    if view.directed:
        m = min(n, view.bi_deg.shape[0])
        s[:m] += view.bi_deg[:m]
    return s
