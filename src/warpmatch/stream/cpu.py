"""The CPU delta engine: per-update incremental matching in numba, parallel over tasks.

Implements :class:`~warpmatch.stream.types.DeltaEngine` for GCSM's incremental
join (§II-B, formula (1)) on the CPU: the work of a batch is the list of
tasks (valid update ``i``, delta plan ``j``); each task fixes the update's
endpoints as the images of its plan's first two query vertices and extends the
rest by backtracking over set intersections, reading its update's own state
through the batch view's timestamped adjacency (kernels in
:mod:`warpmatch.stream._cpu_delta`). GCSM parallelises its CPU baseline over
the updated edges (§VI-A); we parallelise over (update, plan) pairs, a finer
grain that keeps the workers busy when a batch holds few updates.

Counting sums each task's count into the update's ``plus`` or ``minus`` by
the task's sign; listing counts first, then fills every task's slice of one
output array, so rows come out sorted by update with no locks.
"""
from __future__ import annotations

import numpy as np

from ..engine.cpu import numba_available
from .types import BatchView, DeltaPlans, RawDelta

__all__ = ["CpuDeltaEngine"]

#: task chunks per worker: enough that uneven tasks even out, few enough that
#: the per-chunk scratch arrays cost nothing
CHUNKS_PER_THREAD = 16


def _ro(a: np.ndarray, dtype: type) -> np.ndarray:
    """A read-only C-contiguous view with ``dtype`` (copies only on a dtype/layout mismatch).

    One writeable flag and one dtype per argument keep the kernel at one
    compiled signature whichever arrays a view holds.
    """
    out = np.ascontiguousarray(a, dtype=dtype).view()
    out.flags.writeable = False
    return out


def _view_args(view: BatchView) -> tuple[np.ndarray, ...]:
    """Batch and view arrays in the kernel's argument order."""
    b = view.batch
    i32, i64 = np.int32, np.int64
    return (
        _ro(b.src, i32), _ro(b.dst, i32), _ro(b.op, np.int8), _ro(b.elabel, i32),
        _ro(view.vlabel, i32),
        _ro(view.b_start, i64), _ro(view.b_deg, i32), _ro(view.b_nbr, i32),
        _ro(view.b_elab, i32),
        _ro(view.bi_start, i64), _ro(view.bi_deg, i32), _ro(view.bi_nbr, i32),
        _ro(view.bi_elab, i32),
        _ro(view.o_idx, i32), _ro(view.o_off, i64), _ro(view.o_nbr, i32),
        _ro(view.o_elab, i32), _ro(view.o_ins, i32), _ro(view.o_dl, i32),
        _ro(view.oi_idx, i32), _ro(view.oi_off, i64), _ro(view.oi_nbr, i32),
        _ro(view.oi_elab, i32), _ro(view.oi_ins, i32), _ro(view.oi_dl, i32),
    )


def _plan_args(plans: DeltaPlans) -> tuple[np.ndarray, ...]:
    """Plan arrays in the kernel's argument order."""
    i32 = np.int32
    return (
        _ro(plans.order, i32), _ro(plans.vlabel, i32), _ro(plans.bn_ptr, i32),
        _ro(plans.bn_pos, i32), _ro(plans.bn_dir, np.int8), _ro(plans.bn_elabel, i32),
        _ro(plans.na_ptr, i32), _ro(plans.na_pos, i32), _ro(plans.na_dir, np.int8),
        _ro(plans.res_ptr, i32), _ro(plans.res_pos, i32), _ro(plans.res_sign, np.int8),
        _ro(plans.pair_kind, np.int8), _ro(plans.pair_elabel, i32),
    )


def tasks_of(view: BatchView, plans: DeltaPlans) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tasks of a batch: ``(update, plan, sign)`` per task, update-major.

    Parameters
    ----------
    view : BatchView
    plans : DeltaPlans

    Returns
    -------
    task_upd, task_plan : numpy.ndarray
        int64 update index and plan index of every task; invalid updates have none.
    sign : numpy.ndarray
        int8 ``+1`` for (insert, query edge) and (delete, non-edge), else ``-1``.
    """
    b = view.batch
    valid = np.flatnonzero(np.asarray(b.valid, dtype=bool)).astype(np.int64)
    P = plans.num_plans
    task_upd = np.repeat(valid, P)
    task_plan = np.tile(np.arange(P, dtype=np.int64), valid.size)
    op = np.asarray(b.op)[task_upd]
    kind = np.asarray(plans.pair_kind)[task_plan]
    sign = np.where((op > 0) == (kind == 1), 1, -1).astype(np.int8)
    return task_upd, task_plan, sign


class CpuDeltaEngine:
    """Parallel numba delta engine (``name = "cpu"``); see the module docstring.

    Parameters
    ----------
    threads : int, optional
        Worker threads. The default is ``None``, meaning numba's current
        thread count (``numba.get_num_threads()``).
    """

    name = "cpu"

    def __init__(self, threads: int | None = None) -> None:
        if threads is not None and int(threads) < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        self.threads = None if threads is None else int(threads)
        self.graph = None

    def available(self) -> tuple[bool, str]:
        """``(True, "")`` if numba imports, else ``(False, reason)``."""
        return numba_available()

    def attach(self, graph: object) -> None:
        """Remember the dynamic graph (the CPU engine reads everything from the views)."""
        self.graph = graph

    def _threads(self) -> int:
        import numba
        return max(1, int(self.threads or numba.get_num_threads()))

    def _run(self, task_upd: np.ndarray, task_plan: np.ndarray, fill: bool,
             out_off: np.ndarray, rows: np.ndarray, counts: np.ndarray,
             vargs: tuple, pargs: tuple) -> None:
        import numba

        from ._cpu_delta import run_tasks
        T = int(task_upd.size)
        threads = self._threads()
        nchunks = max(1, min(T, threads * CHUNKS_PER_THREAD))
        old = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            run_tasks(task_upd, task_plan, fill, out_off, rows, counts, nchunks, *vargs, *pargs)
        finally:
            numba.set_num_threads(old)

    def run(self, view: BatchView, plans: DeltaPlans, want_matches: bool) -> RawDelta:
        """Per-update deltas of one batch.

        Parameters
        ----------
        view : BatchView
            The batch's states ``S_0..S_B``.
        plans : DeltaPlans
            Compiled with :func:`~warpmatch.stream.delta.compile_delta_plans`;
            for listing, a plan set with ``multiplier == 1``.
        want_matches : bool
            Also return the matches (rows in query-vertex order, internal ids).

        Returns
        -------
        RawDelta

        Raises
        ------
        ValueError
            ``want_matches`` with plans that count through a multiplier.
        OverflowError
            A count times the multiplier does not fit in int64.
        """
        B = view.num_updates
        if want_matches and plans.multiplier != 1:
            raise ValueError("listing needs delta plans compiled with purpose='list' "
                             f"(multiplier 1), not multiplier {plans.multiplier}")
        plus = np.zeros(B, dtype=np.int64)
        minus = np.zeros(B, dtype=np.int64)
        task_upd, task_plan, sign = tasks_of(view, plans)
        T = int(task_upd.size)
        k = plans.k
        empty_rows = (np.empty((0, k), np.int32), np.empty(0, np.int64), np.empty(0, np.int8))
        if T == 0:
            return RawDelta(plus, minus, *(empty_rows if want_matches else (None,) * 3))
        vargs = _view_args(view)
        pargs = _plan_args(plans)
        counts = np.zeros(T, dtype=np.int64)
        dummy = np.zeros((1, k), dtype=np.int32)
        off = np.zeros(T, dtype=np.int64)
        self._run(task_upd, task_plan, False, off, dummy, counts, vargs, pargs)
        mult = int(plans.multiplier)
        if mult != 1:
            top = int(counts.max())
            if top and top * mult >= 2 ** 63:
                raise OverflowError(f"a delta of {top} x |Aut| = {mult} does not fit in int64")
            scaled = counts * np.int64(mult)
        else:
            scaled = counts
        pos = sign > 0
        np.add.at(plus, task_upd[pos], scaled[pos])
        np.add.at(minus, task_upd[~pos], scaled[~pos])
        if not want_matches:
            return RawDelta(plus, minus)
        off[1:] = np.cumsum(counts)[:-1]
        R = int(counts.sum())
        rows = np.empty((max(R, 1), k), dtype=np.int32)
        if R:
            check = np.zeros(T, dtype=np.int64)
            self._run(task_upd, task_plan, True, off, rows, check, vargs, pargs)
            if not np.array_equal(check, counts):     # pragma: no cover - kernel invariant
                raise RuntimeError("internal error: the listing pass found other matches "
                                   "than the counting pass")
        return RawDelta(plus, minus, rows[:R], np.repeat(task_upd, counts),
                        np.repeat(sign, counts))
