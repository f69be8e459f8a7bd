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

import os
import time
from typing import Any

import numpy as np

from ..engine.cpu import numba_available
from ._cpu_rows import has_path, pack_plans, view_table
from .filter import NlfFilter
from .types import BatchView, DeltaPlans, RawDelta

__all__ = ["CpuDeltaEngine"]

#: task chunks per worker: enough that uneven tasks even out, few enough that
#: the per-chunk scratch arrays cost nothing
CHUNKS_PER_THREAD = 16
#: tasks the calling thread runs before the rest of a batch is estimated
PROBE_TASKS = 64
#: estimated serial time of a batch's remaining tasks above which they run in parallel
PARALLEL_S = 0.005
#: seconds one parallel region aims at: a region cannot be interrupted, so a heavy
#: batch (seconds when listing 4-cliques) runs as several, and Ctrl-C and SIGTERM
#: are served between them; a region costs tens of µs to start
CALL_S = 0.1
#: ``specialise`` choices (:class:`CpuDeltaEngine`)
SPECIALISE = ("auto", "always", "never")
#: with ``specialise="auto"``: seconds of sequential searching after which a matcher
#: compiles its plans (in a background thread) when no compiled copy exists yet
SPECIALISE_AFTER_S = 1.0


def _ro(a: np.ndarray, dtype: type) -> np.ndarray:
    """A read-only C-contiguous view with ``dtype`` (copies only on a dtype/layout mismatch).

    One writeable flag and one dtype per argument keep the kernel at one
    compiled signature whichever arrays a view holds.
    """
    out = np.ascontiguousarray(a, dtype=dtype).view()
    out.flags.writeable = False
    return out


def tasks_of(view: BatchView, plans: DeltaPlans, mask: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tasks of a batch: ``(update, plan, sign)`` per task, update-major.

    Parameters
    ----------
    view : BatchView
    plans : DeltaPlans
    mask : numpy.ndarray, optional
        The candidate filter's masks (:class:`~warpmatch.stream.filter.NlfFilter`):
        a plan is left out for an update whose endpoints cannot be the images
        of its first two query vertices. The default is ``None``: vertex labels
        decide.

    Returns
    -------
    task_upd, task_plan : numpy.ndarray
        int64 update index and plan index of every task; invalid updates have none.
    sign : numpy.ndarray
        int8 ``+1`` for (insert, query edge) and (delete, non-edge), else ``-1``.
    """
    from ._cpu_delta import make_tasks
    b = view.batch
    valid = np.flatnonzero(np.asarray(b.valid, dtype=bool)).astype(np.int64)
    cap = valid.size * plans.num_plans
    upd = np.empty(cap, np.int64)
    plan = np.empty(cap, np.int64)
    sign = np.empty(cap, np.int8)
    m = np.zeros(0, np.uint64) if mask is None else mask
    T = make_tasks(valid, _ro(b.src, np.int32), _ro(b.dst, np.int32), _ro(b.op, np.int8),
                   _ro(b.elabel, np.int32), m, _ro(view.vlabel, np.int32),
                   _ro(plans.vlabel, np.int32), _ro(plans.order, np.int32),
                   _ro(plans.pair_kind, np.int8), _ro(plans.pair_elabel, np.int32),
                   upd, plan, sign)
    return upd[:T], plan[:T], sign[:T]


class CpuDeltaEngine:
    """Parallel numba delta engine (``name = "cpu"``); see the module docstring.

    Parameters
    ----------
    threads : int, optional
        Worker threads. The default is ``None``, meaning numba's current
        thread count (``numba.get_num_threads()``).
    local : bool or None, optional
        Build each task's local candidate sets before its search
        (:func:`~warpmatch.stream._cpu_local.build`). The default, ``None``,
        builds them for vertex-labeled queries, where they are small.
    sequential : bool, optional
        Let :class:`~warpmatch.stream.matcher.ContinuousMatcher` count batches
        on the sequential path (:mod:`warpmatch.stream.sequential`: one update
        at a time, in place) where it is cheaper than this engine's batch path.
        The default is ``True``; ``False`` always takes the batch path.
    specialise : {"auto", "always", "never"} or None, optional
        Whether the sequential path searches with delta plans compiled for the
        query (:mod:`warpmatch.stream._seq_special`: one C function per plan,
        compiled once per query structure and machine, 0.3-2.2 s a plan) instead
        of the plan-interpreting kernel. ``"auto"`` uses them at once when they
        were compiled before (numba's disk cache), and otherwise starts compiling
        them in a background thread once a matcher has spent
        :data:`SPECIALISE_AFTER_S` searching, switching when they are ready;
        ``"always"`` compiles them when the sequential path is built; ``"never"``
        does not. The default, ``None``, reads ``$WARPMATCH_CPU_SPECIALISE``
        (``"auto"`` when unset).
    """

    name = "cpu"

    def __init__(self, threads: int | None = None, local: bool | None = None,
                 sequential: bool = True, specialise: str | None = None) -> None:
        if threads is not None and int(threads) < 1:
            raise ValueError(f"threads must be at least 1, not {threads}")
        self.threads = None if threads is None else int(threads)
        self.local = local
        self.sequential = bool(sequential)
        if specialise is None:
            specialise = os.environ.get("WARPMATCH_CPU_SPECIALISE", "") or "auto"
        if specialise not in SPECIALISE:
            raise ValueError(f"specialise must be one of {', '.join(SPECIALISE)}, not "
                             f"{specialise!r} (or $WARPMATCH_CPU_SPECIALISE)")
        self.specialise = specialise
        self._no_scratch = (np.zeros((1, 0), np.uint64), np.zeros((1, 0), np.int32))
        self._marks, self._cnts = self._no_scratch
        self._flags = np.zeros((1, 0), np.int32)
        self.graph = None
        # one candidate filter per query (kept alive beside it: ids are reused)
        self._filters: dict[int, tuple[object, NlfFilter]] = {}
        self._programs: dict[int, tuple[DeltaPlans, np.ndarray]] = {}

    def available(self) -> tuple[bool, str]:
        """``(True, "")`` if numba imports, else ``(False, reason)``."""
        return numba_available()

    def attach(self, graph: object) -> None:
        """Remember the dynamic graph (the CPU engine reads everything from the views)."""
        self.graph = graph

    def prepare(self, plans: DeltaPlans) -> None:
        """Build the candidate filter of ``plans``' query on the attached graph now, so
        that the first batch does not pay for it (``O(edges)``)."""
        q = plans.query
        if q is None or self.graph is None:
            return
        filt = self._filters[id(q)] = (q, NlfFilter(q, self.graph.directed))
        filt[1].bind(self.graph)

    def filter_for(self, plans: DeltaPlans, graph: Any) -> NlfFilter:
        """The candidate filter of ``plans``' query, exact for ``graph``'s current state
        (:meth:`NlfFilter.exact`), for the sequential path that edits it in place."""
        q = plans.query
        filt = self._filters.get(id(q))
        if filt is None or filt[0] is not q:
            filt = self._filters[id(q)] = (q, NlfFilter(q, graph.directed))
        filt[1].exact(graph)
        return filt[1]

    def _program(self, plans: DeltaPlans) -> np.ndarray:
        """The plans packed for the kernels (:func:`._cpu_rows.pack_plans`), once per plan set."""
        hit = self._programs.get(id(plans))
        if hit is None or hit[0] is not plans:
            hit = self._programs[id(plans)] = (plans, pack_plans(plans))
        return hit[1]

    def _use_local(self, plans: DeltaPlans) -> bool:
        """Local candidate sets pay where labels make them small and the query is large
        enough for their pruning to repay building them: more than 8 vertices, or 6 to 8
        with average degree below 3. (Measured on the yeast and hprd streams, the
        sequential path, one thread: without them yeast's 4-vertex and dense 8-vertex
        random-walk queries ran 23-24% faster, its sparse 8-vertex one 1.29x slower and
        its 16-vertex query files 4-5x slower; on hprd every random-walk query was
        within 10% either way except the sparse 8-vertex one, 1.4x faster without.)"""
        if self.local is not None:
            return bool(self.local)
        q = plans.query
        if q is None or not getattr(q, "labeled", False):
            return False
        k = int(q.k)
        return k > 8 or (k >= 6 and 2 * len(q.edges) < 3 * k)

    def _scratch(self, threads: int, n: int, local: bool = True
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Per-worker zeroed scratch (``[threads, n]``): the local candidate sets' marks
        and counts; with ``local`` False the marks have no columns (the kernels then
        build no local candidate space) and the counts serve a path plan's tally
        (:func:`._cpu_group.path_count`). Both are zero between tasks."""
        if n == 0:
            return self._no_scratch
        m = self._marks
        if m.shape[0] < threads or m.shape[1] < n:
            cols = max(n, int(m.shape[1] * 1.25))
            self._marks = np.zeros((max(threads, m.shape[0]), cols), np.uint64)
            self._cnts = np.zeros((max(threads, m.shape[0]), cols), np.int32)
        return (self._marks if local else self._marks[:, :0]), self._cnts

    def _flag_rows(self, threads: int, n: int) -> np.ndarray:
        """Per-worker tag arrays of the group count (``[threads, n]``, any content)."""
        f = self._flags
        if f.shape[0] < threads or f.shape[1] < n:
            self._flags = np.zeros((max(threads, f.shape[0]), max(n, int(f.shape[1] * 1.25))),
                                   np.int32)
        return self._flags

    def _threads(self) -> int:
        import numba
        return max(1, int(self.threads or numba.get_num_threads()))

    def threads_used(self) -> int:
        """The threads a batch's parallel region would use."""
        if self.threads == 1:           # (asked for every batch: no numba call then)
            return 1
        import numba
        return min(self._threads(), int(numba.config.NUMBA_NUM_THREADS))

    def _run(self, table: np.ndarray, pg: np.ndarray, task_upd: np.ndarray, task_plan: np.ndarray,
             fill: bool, out_off: np.ndarray, rows: np.ndarray, counts: np.ndarray,
             local: bool, batch: Any, n_cap: int) -> None:
        """Run the tasks: serially while that is cheaper, in one parallel region after.

        The calling thread runs a first slice of tasks; from its time per task
        the rest is estimated, and only a rest of more than ``PARALLEL_S`` goes to
        a parallel region (which costs tens of µs to start, more while another
        process holds a core), the slice growing geometrically otherwise. So
        more threads never make a light batch slower than one thread. The rest
        runs in consecutive parallel regions of about ``CALL_S`` seconds each,
        sized from the time per task measured so far (growing at most 8x).
        """
        import numba

        from ._cpu_delta import run_tasks, run_tasks_serial
        T = int(task_upd.size)
        threads = self.threads_used()
        marks, cnts = self._scratch(threads, n_cap if local or has_path(pg) else 0, local)
        flags = self._flag_rows(threads, n_cap + 1)
        src, dst, op = _ro(batch.src, np.int32), _ro(batch.dst, np.int32), _ro(batch.op, np.int8)
        err = np.zeros(1, np.int64)
        done = 0
        step = min(T, PROBE_TASKS)
        spent = 0.0
        while done < T:
            if threads > 1 and done > 0 and spent / done * (T - done) > PARALLEL_S:
                break
            hi = min(T, done + step)
            t0 = time.perf_counter()
            run_tasks_serial(table, pg, task_upd[done:hi], task_plan[done:hi], fill,
                             out_off[done:hi], rows, counts[done:hi], err, marks[0], cnts[0],
                             flags[0],
                             src, dst, op)
            spent += time.perf_counter() - t0
            if err[0]:
                raise OverflowError("a delta count does not fit in int64")
            done = hi
            step *= 4
        if done < T:
            old = numba.get_num_threads()
            numba.set_num_threads(threads)
            # hand the chunks out one at a time as workers free up (dynamic scheduling):
            # a worker that shares its core with another process takes fewer of them
            old_chunk = numba.set_parallel_chunksize(1)
            # tasks per region: CALL_S of work at the serial rate, on every thread
            size = max(threads, int(CALL_S * threads * done / max(spent, 1e-9)))
            try:
                while done < T:
                    hi = min(T, done + size)
                    n = hi - done
                    nchunks = max(1, min(n, threads * CHUNKS_PER_THREAD))
                    errs = np.zeros(nchunks, np.int64)
                    t0 = time.perf_counter()
                    run_tasks(table, pg, task_upd[done:hi], task_plan[done:hi], fill,
                              out_off[done:hi], rows, counts[done:hi], nchunks, errs, marks,
                              cnts, flags, src, dst, op)
                    dt = time.perf_counter() - t0
                    if errs.any():
                        raise OverflowError("a delta count does not fit in int64")
                    done = hi
                    size = max(threads, int(n * min(8.0, CALL_S / max(dt, 1e-9))))
            finally:
                numba.set_parallel_chunksize(old_chunk)
                numba.set_num_threads(old)

    def run(self, view: BatchView, plans: DeltaPlans, want_matches: bool) -> RawDelta:
        """Per-update deltas of one batch.

        Parameters
        ----------
        view : BatchView
            The batch's states ``S_0..S_B``.
        plans : DeltaPlans
            Compiled with :func:`~warpmatch.stream.delta.compile_delta_plans`;
            for listing, :attr:`~warpmatch.stream.types.DeltaPlans.listable` plans.
        want_matches : bool
            Also return the matches (rows in query-vertex order, internal ids).

        Returns
        -------
        RawDelta

        Raises
        ------
        ValueError
            ``want_matches`` with plans that count through weights or a group.
        OverflowError
            A count (times its weight) does not fit in int64.
        """
        from ._cpu_delta import accumulate
        B = view.num_updates
        if want_matches and not plans.listable:
            raise ValueError("listing needs delta plans compiled with purpose='list' or "
                             "'orbits' (every raw match one row), not counting plans")
        plus = np.zeros(B, dtype=np.int64)
        minus = np.zeros(B, dtype=np.int64)
        k = plans.k
        q = plans.query
        if q is None:
            raise ValueError("the delta plans carry no query (compile them with "
                             "compile_delta_plans): the candidate filter needs it")
        filt = self._filters.get(id(q))
        if filt is None or filt[0] is not q:
            filt = self._filters[id(q)] = (q, NlfFilter(q, view.directed))
        mask = filt[1].masks(view, self.graph)
        task_upd, task_plan, sign = tasks_of(view, plans, mask)
        T = int(task_upd.size)
        empty_rows = (np.empty((0, k), np.int32), np.empty(0, np.int64), np.empty(0, np.int8))
        if T == 0:
            return RawDelta(plus, minus, *(empty_rows if want_matches else (None,) * 3))
        keep: list = []                 # the arrays the address table points into
        table = view_table(view, mask, keep)
        pg = self._program(plans)
        counts = np.zeros(T, dtype=np.int64)
        dummy = np.zeros((1, k), dtype=np.int32)
        off = np.zeros(T, dtype=np.int64)
        local = self._use_local(plans)
        self._run(table, pg, task_upd, task_plan, False, off, dummy, counts, local, view.batch,
                  int(mask.shape[0]))
        if accumulate(task_upd, task_plan, sign, counts, _ro(plans.weight, np.int64),
                      int(plans.divisor), plus, minus):
            raise OverflowError("a delta count times its weight does not fit in int64")
        if not want_matches:
            keep.clear()                # the kernels are done with the table's arrays
            return RawDelta(plus, minus)
        off[1:] = np.cumsum(counts)[:-1]
        R = int(counts.sum())
        rows = np.empty((max(R, 1), k), dtype=np.int32)
        if R:
            check = np.zeros(T, dtype=np.int64)
            self._run(table, pg, task_upd, task_plan, True, off, rows, check, local, view.batch,
                      int(mask.shape[0]))
            if not np.array_equal(check, counts):     # pragma: no cover - kernel invariant
                raise RuntimeError("internal error: the listing pass found other matches "
                                   "than the counting pass")
        keep.clear()                    # the kernels are done with the table's arrays
        return RawDelta(plus, minus, rows[:R], np.repeat(task_upd, counts),
                        np.repeat(sign, counts))
