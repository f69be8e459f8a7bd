"""GCSM's random-walk access-frequency estimator (Wei & Jiang, §IV), on the CPU.

Map: the batch's arrays as the traversal takes them (:func:`_view_tuple`,
:func:`_plan_tuple`, :func:`_tasks`), the walk budget (:func:`max_row`,
:func:`default_walks`), reusable buffers (:class:`Workspace`), one traversal
(:func:`_run`, over the numba kernels of :mod:`._walk_kernels`), and the entry points
:func:`estimate_access`, :func:`estimate_access_sparse`, :func:`exact_access`.

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
plan's last level is not run (:func:`._walk_kernels._look`): each partial match one level
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

from ._walk_kernels import HOST_COST, _merge, _walk_chunks
from ..types import BatchView, DeltaPlans

__all__ = ["estimate_access", "estimate_access_sparse", "exact_access", "default_walks",
           "max_row", "max_row_overlay", "Workspace", "HOST_COST"]


#: the view's arrays as the numba traversal takes them (:func:`_view_tuple`); ``dev``
#: marks cached vertices, ``cfg`` holds the memory model (indices ``_HOST``, ``_CREDIT``)
_View = namedtuple("_View", [
    "b_start", "b_deg", "b_nbr", "b_elab", "bi_start", "bi_deg", "bi_nbr", "bi_elab",
    "o_idx", "o_off", "o_nbr", "o_elab", "o_ins", "o_dl",
    "oi_idx", "oi_off", "oi_nbr", "oi_elab", "oi_ins", "oi_dl", "dev", "cfg", "qm"])
#: the delta plans' arrays (:func:`_plan_tuple`)
_Plan = namedtuple("_Plan", [
    "order", "vlabel", "bn_ptr", "bn_pos", "bn_dir", "bn_elabel", "na_ptr", "na_pos",
    "na_dir", "res_ptr", "res_pos", "res_sign", "pair_kind", "pair_elabel"])


def _view_tuple(view: BatchView, cached: np.ndarray | None = None, host: bool = True,
                credit: bool = False, masks: np.ndarray | None = None) -> _View:
    """The view's arrays for the numba traversal, plus the kernel's memory model:
    the vertices whose rows are cached, whether storage rows are in host memory,
    and whether a search counts for both storage rows (:func:`._walk_kernels._edge`); and the
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
    """Traverse the batch's execution forest (``mode``: see :func:`._walk_kernels._walk_tasks`; the
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
        :func:`._walk_kernels._search_cost`), and the last level of the plan is credited by
        look-ahead instead of being run (:func:`._walk_kernels._look`).
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

