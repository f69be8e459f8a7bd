"""The sequential CPU path of continuous matching: updates applied and matched one by one.

Map: :class:`SequentialPath` (:meth:`~SequentialPath.run`: the kernel calls of
:mod:`warpmatch.stream._seq_kernels` on a batch :func:`~._seq_batch.map_updates`
mapped, room for moved rows, undo and dry runs, bookkeeping of the stores and the
filter; the path choice with several threads and the first batch's probe) <
:class:`~._seq_batch.SeqResult`.

The batch path (:mod:`warpmatch.stream.cpu`) matches all updates of a batch at
once over a timestamped overlay, which pays off when a batch's searches are
heavy enough to share between threads. Most updates of a labeled stream need
no search at all, and most batches of a light query need little: there the
batch path's fixed work per batch (sorting the batch, building the overlay and
the union masks, the task list, merging the rows back, twice when a relevant
subgraph is kept) is most of the time. RapidFlow (Sun et al., VLDB 2022)
processes one update at a time in place; so does this path, in one numba call
for a run of updates (:mod:`warpmatch.stream._seq_kernels`), on the same
stores, so that either path can take the next batch. It gives the same
per-update deltas as the batch path (state ``S_i`` / ``S_{i+1}`` of every
update is simply the store at that moment).

Used by :class:`~warpmatch.stream.matcher.ContinuousMatcher` for count-only
batches on the CPU engine whose updates all name known vertices with
well-formed ops and labels (anything else goes to the batch path, which also
raises the errors). With several threads, a batch whose sequential work is
estimated above :data:`PARALLEL_S` goes to the batch path when that is
measured faster: its searches run in parallel. Until it was measured, the
batch path gets a bounded trial slice within a batch
(:meth:`SequentialPath.trial_size`), never a whole untimed batch, so that
several threads cost at most that slice more than one.

What differs from RapidFlow (beyond :mod:`warpmatch.stream._seq_kernels`):

- Every update is validated against the whole graph (``on_invalid``), and an
  invalid one under ``"error"`` leaves nothing applied: the run is taken back
  (:meth:`SequentialPath.undo`), as it is after Ctrl-C between two calls.
- Split mode keeps the edges no query edge can use in a hash set
  (:mod:`warpmatch.stream._edgeset`) instead of dropping them, and rebuilds
  the graph's adjacency from it when the graph is read.
- Listing, new vertices and heavy batches with several threads use the batch
  path; both paths keep the same stores, so either can take the next batch.

Fixed cost per batch: the kernel's ~60 arguments are packed once and reused
while no other path has edited the graphs (:meth:`SequentialPath._key`), the
batch arrays are kept, and the kernel sums the counts. What is left is about
75 µs of Python a batch from ``apply_batches`` to the kernel, about 45 of them
in :meth:`SequentialPath.run` (hprd, batches of 4,096, a 2-core box, measured
2026-11-28), where RapidFlow has none.
"""
from __future__ import annotations

import threading
import time
import warnings
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import _seq_kernels as S
from ._cpu_rows import has_path, view_table
from ._edgeset import MAX_LOAD, EdgeSet
from ._seq_batch import SeqResult, map_updates, part_net
from ._seq_compile import SpecialPlans, compile_plans
from .cpu import CALL_S, PARALLEL_S, SPECIALISE_AFTER_S
from .types import Updates

__all__ = ["SequentialPath", "SeqResult", "map_updates", "PARALLEL_S", "CALL_S"]

# PARALLEL_S: estimated sequential seconds above which several threads take the batch
# path; CALL_S: seconds one kernel call aims at (Ctrl-C and SIGTERM are served between
# calls): the CPU engine's own rules (stream/cpu.py)
#: updates of the first call, before any rate was measured (a fused run's first two
#: batches of 4,096 in one call: on a fresh matcher a call of no update at all took
#: 33-37 µs, a 2-core box, hprd's query); with several threads the kernel looks at the time
#: after PROBE_CALL of them and pauses (a second call) only if the rest looks heavy
#: enough for the batch path: a pause on every first batch cost ~40 us (yeast 4-vertex
#: queries, one 1,878-update batch, H200 host: 0.44-0.52 ms with 16 threads against
#: 0.41-0.47 with one)
FIRST_CALL = 8192
PROBE_CALL = 256
#: batches left to the batch path before this path is tried again
REPROBE = 16
#: before the batch path was ever timed, it is tried only for sequential work estimated
#: above this many times PARALLEL_S: a rate from a first, short call on cold caches can be
#: twice or more too high (hprd's first 4,096 updates: 208 µs against 93 µs warm), and a
#: wrong switch makes several threads slower than one
UNTIMED_FACTOR = 4
#: queries of more vertices than this keep local candidate spaces over compiled plans,
#: where the engine builds them (yeast, one thread, a 2-core box, same process: the
#: 16-vertex query files 2.4-4.6x slower compiled without them than interpreted with
#: them; the sparse 8-vertex random-walk query 1.35x faster compiled without them)
LOCAL_ONLY_ABOVE_K = 8
#: largest edge set split mode builds (a graph whose irrelevant edges need more keeps
#: editing its adjacency rows in place instead: no second copy of a huge graph)
SPLIT_MAX_BYTES = 1 << 30


#: ``seq_run``'s ``srch`` when every update is searched
_NO_MASK = np.zeros(0, np.bool_)
#: ``map_updates``' labels when the batch has none
_NO_LABELS = np.zeros(0, np.int64)


def _clock() -> tuple[int, int]:
    """``clock_gettime``'s address and ``CLOCK_MONOTONIC`` for the kernel's probe
    (``(0, 0)`` where the C library has none: the probe then always pauses)."""
    try:
        import ctypes
        fn = ctypes.CDLL(None).clock_gettime
        return int(ctypes.cast(fn, ctypes.c_void_p).value or 0), int(time.CLOCK_MONOTONIC)
    except (OSError, AttributeError, TypeError):
        return 0, 0


_CLOCK = _clock()


def _now_ns() -> int:
    """The kernel probe's clock, read here (0 without one)."""
    return time.clock_gettime_ns(_CLOCK[1]) if _CLOCK[0] else 0


def _c(a: Any, dt: Any) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dt)


def _labels_in(lab: np.ndarray) -> np.ndarray:
    """A batch's edge labels for :func:`map_updates`: int32 (what the readers give) as
    they are, since widening them cost a pass over the batch; anything else as int64,
    which cannot wrap before the kernel checks the range."""
    return _c(lab, np.int32 if lab.dtype == np.int32 else np.int64)


def _rows_of(a: np.ndarray, b: np.ndarray, upto: int, dg: Any, eg: Any
             ) -> np.ndarray | None:
    """The endpoints of updates ``0..upto-1`` (internal ids), the rows a run may have
    rewritten or moved, when an edit log wants them (:mod:`._editlog`; else ``None``)."""
    if upto <= 0 or not (dg.edits.on or eg.edits.on):
        return None
    return np.concatenate((a[:upto], b[:upto]))


class SequentialPath:
    """Counts-only batches on the CPU, one update at a time (module docstring).

    Parameters
    ----------
    graph : DynamicGraph
        The whole graph (validation, ids, the user's view).
    relevant : RelevantSubgraph or None
        The subgraph the engine searches, or ``None`` (it searches ``graph``).
    engine : CpuDeltaEngine
        Owns the candidate filter, the packed plans and the scratch arrays.
    plans : DeltaPlans
        Counting plans.
    split_from : Graph, optional
        With a relevant subgraph: ``graph``'s current edges (``G_0``). Given, the
        edges the query cannot read go to an :class:`~._edgeset.EdgeSet` and
        this path edits neither ``graph``'s stores nor reads them ("split"
        mode): :meth:`sync` rebuilds them when someone needs them, and this
        path then keeps them up to date itself. The default is ``None``.
    trust : numpy.ndarray, optional
        Without a relevant subgraph: the label-pair table of
        :func:`~warpmatch.stream.relevant.relevant_pairs`; ``graph`` then is a
        ``keep="relevant"`` matcher's graph, and an update of an edge the table
        rules out is taken as valid and dropped (:mod:`warpmatch.stream.keep`).

    Attributes
    ----------
    edgeset : EdgeSet or None
        The edges of ``graph`` outside the relevant subgraph, in split mode.
    dirty : bool
        ``graph``'s stores lag behind the updates (split mode).
    rate, batch_rate : float or None
        Measured seconds per update of this path's last runs and of the batch
        path's (running averages), or ``None``.
    stats : dict
        Totals over the runs that were kept: ``runs``, ``updates`` (handled
        here), ``relevant`` (updates that reached the searches), ``tasks``
        (delta searches).
    """

    def __init__(self, graph: Any, relevant: Any, engine: Any, plans: Any,
                 split_from: Any = None, trust: np.ndarray | None = None) -> None:
        self.graph = graph
        #: keep="relevant" (stream/keep.py): ``graph`` is the relevant subgraph, and an
        #: update of an edge no query edge's labels allow is taken as valid and dropped
        self.trust = trust is not None and relevant is None
        self.relevant = relevant
        self.engine = engine
        self.plans = plans
        self.rate: float | None = None
        self.batch_rate: float | None = None
        self._skipped = 0
        self.stats = {"runs": 0, "updates": 0, "relevant": 0, "tasks": 0}
        self._order = _c(plans.order, np.int32)
        self._pair_kind = _c(plans.pair_kind, np.int8)
        self._pair_elabel = _c(plans.pair_elabel, np.int32)
        self._weight = _c(plans.weight, np.int64)
        if relevant is not None:
            self._table = _c(relevant.table, np.bool_)
        elif self.trust:
            self._table = _c(trust, np.bool_)
        else:
            self._table = np.zeros((1, 1), np.bool_)
        self._oidx = np.zeros(0, np.int32)
        self._tcache: tuple | None = None
        self._scache: tuple | None = None
        self.edgeset: EdgeSet | None = None
        self.dirty = False
        # the kernel's arguments that outlive a batch, valid while _pack_key (the stores'
        # and the edge set's versions) is what the last run left: see _args
        self._pack: tuple | None = None
        self._pack_key: tuple | None = None
        self._bufs: tuple | None = None
        if split_from is not None and relevant is not None:
            g = split_from
            src, dst = g.edges()
            keep = ~relevant._keep(np.asarray(g.vertex_labels), src, dst)
            lab = g.edge_label_array()
            if EdgeSet.bytes_for(int(np.count_nonzero(keep)), lab is not None) \
                    <= SPLIT_MAX_BYTES:
                self.edgeset = EdgeSet(src[keep], dst[keep],
                                       None if lab is None else lab[keep], g.directed)
        self._no_set = (np.zeros(16, np.int64) - 1, np.zeros(16, np.int32),
                        np.array([0, 4], np.int64))
        # compiled searches (_seq_special): the kernel reads this array, which keeps
        # its identity (the pack holds it) and gets the addresses once they exist
        self._sp_addr = np.zeros(plans.num_plans, np.int64)
        # their tag block (address, row stride; _tag_block) and the block itself
        self._sp_tag = np.zeros(2, np.int64)
        self._tags = np.zeros(0, np.int32)
        self._filt: Any = None
        self.special: SpecialPlans | None = None
        self.special_error: str | None = None
        self._search_s = 0.0
        self._compiling: threading.Thread | None = None
        self._compiled: list = []
        self._sp_mode = getattr(engine, "specialise", "never")
        # compiled plans search without local candidate spaces; with them the interpreter
        # still wins on large queries only (their pruning), so below that size a plan is
        # compiled even where the engine builds them, and the interpreter keeps them for
        # the plans left to it (each task builds and clears its own)
        self._sp_local = (bool(engine._use_local(plans)) and int(plans.k) > LOCAL_ONLY_ABOVE_K
                          if self._sp_mode != "never" else True)
        if self._sp_mode != "never":        # auto: only a module compiled before
            sp = compile_plans(plans, self._sp_local, cached_only=self._sp_mode == "auto")
            if sp is not None:
                self._use_special(sp)
        # what the first batch would otherwise pay: the packed plans, the scratch rows,
        # the search's address table, the kernel's arguments, the batch arrays
        eg = graph if relevant is None else relevant.graph
        self._filt = engine.filter_for(plans, eg)
        self._args(graph, eg, self._filt)
        self._warm_up(graph)

    # ------------------------------------------------------ compiled searches
    def _use_special(self, sp: SpecialPlans) -> None:
        """Search with ``sp``'s compiled plans from the next kernel call on."""
        self.special = sp
        if self._filt is not None:
            self._tag_block(int(self._filt.mask.shape[0]))
        self._sp_addr[:] = sp.addr

    def _tag_block(self, n_cap: int) -> None:
        """The compiled plans' tag block for ids below ``n_cap``: ``tag_rows`` rows of
        ``n_cap + 1`` int32s (the last a row's tag counter), allocated again only
        when it is too small; its address and stride go to ``_sp_tag``, which the
        packed arguments hold. Never cleared: a retag takes a fresh tag."""
        sp = self.special
        rows = 0 if sp is None else sp.tag_rows
        if rows == 0:
            return
        stride = n_cap + 1
        if self._tags.shape[0] < rows * stride or int(self._sp_tag[1]) != stride:
            self._tags = np.zeros(rows * stride, np.int32)
            self._sp_tag[0] = self._tags.ctypes.data
            self._sp_tag[1] = stride

    def _maybe_special(self) -> None:
        """``specialise="auto"``: take the background compile's result when it is ready;
        start it once this path has searched for :data:`SPECIALISE_AFTER_S`."""
        if self._compiling is not None:
            if self._compiling.is_alive():
                return
            self._compiling = None
            res = self._compiled.pop() if self._compiled else None
            if isinstance(res, SpecialPlans):
                self._use_special(res)
            else:                       # compiling failed: keep the interpreter, say why
                self.special_error = str(res)
                warnings.warn(f"compiling the delta plans failed ({res}); the sequential "
                              "path keeps the plan-interpreting kernel",
                              RuntimeWarning, stacklevel=4)
            return
        if self.special is not None or self.special_error or \
                self._search_s < SPECIALISE_AFTER_S:
            return
        plans, local, out = self.plans, self._sp_local, self._compiled

        def work() -> None:
            try:
                out.append(compile_plans(plans, local))
            except Exception as exc:    # pragma: no cover - a compiler failure
                out.append(f"{type(exc).__name__}: {exc}")
        self._compiling = threading.Thread(target=work, name="warpmatch-compile-plans",
                                           daemon=True)
        self._compiling.start()

    def _warm_up(self, dg: Any) -> None:
        """Call both kernels once on no update, so that numba loads them from its cache
        (or compiles them: tens of seconds on a fresh install) while the matcher is
        built, not in the first batch: that batch's latency and a stream's measured rate
        are then the work's own (the thread pool likewise). Nothing is read or changed."""
        a, b, op, lab, code, old_lab = self._buffers(FIRST_CALL)
        ids = dg._ids
        empty = np.zeros(0, np.int64)
        for labels in (empty, np.zeros(0, np.int32)):    # both label types of _labels_in
            map_updates(empty, empty, np.zeros(0, np.int8), labels, False, dg.has_edge_labels,
                        ids.identity, dg.n, ids.base_ext, ids.base_int, ids.extra_ext,
                        ids.extra_int, a, b, op, lab)
        ctl = np.zeros(S.CTL_SIZE, np.int64)
        S.seq_run(ctl, 0, False, a, b, op, lab, code, old_lab, empty, empty, *self._pack,
                  _NO_MASK)
        # with several threads, the first batch asks for them: numba starts its thread
        # pool on that first question, here rather than inside the batch
        self.engine.threads_used()

    # ------------------------------------------------------------- split mode
    @property
    def split(self) -> bool:
        """Whether the whole graph is kept as relevant subgraph + edge set (split mode)."""
        return self.edgeset is not None

    def _set_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        es = self.edgeset
        return self._no_set if es is None else (es.keys, es.vals, es.meta)

    def sync(self) -> None:
        """Bring the whole graph's stores up to date and leave split mode for good.

        The graph is rebuilt (``O(edges)``, in place: the same object) from the
        relevant subgraph and the edge set; from then on this path edits it
        along with the relevant subgraph, as without split mode.
        """
        es = self.edgeset
        if es is None:
            return
        dg = self.graph
        if self.dirty:
            from ..graph.csr import Graph
            rel = self.relevant.graph.snapshot()
            rs, rd = rel.edges()
            es_src, es_dst, es_lab = es.edges()
            src = np.concatenate([rs.astype(np.int64), es_src])
            dst = np.concatenate([rd.astype(np.int64), es_dst])
            lab = None
            if dg.has_edge_labels:
                lab = np.concatenate([np.asarray(rel.edge_label_array(), np.int32), es_lab])
            vl = dg.vertex_labels
            g = Graph.from_edges(src, dst, n=dg.n, directed=dg.directed, edge_labels=lab,
                                 vertex_labels=None if vl is None else vl.copy(),
                                 name=dg.name, warn=False)
            dg.reload(g)
        self.edgeset = None
        self.dirty = False

    # ------------------------------------------------------------- stores
    @staticmethod
    def _store_args(dg: Any) -> list[np.ndarray]:
        """The twelve store arrays of :func:`._seq_kernels.seq_run` (out, then in)."""
        out = []
        for st in dg._stores:
            meta = np.array([st.used, st.live, st.entries], dtype=np.int64)
            st._seq_meta = meta
            out += [st.start, st.deg, st.cap, st.nbr, st.elab, meta]
        if not dg.directed:                 # one store: its rows are the in-rows too
            out += out
        return out

    @staticmethod
    def _store_back(dg: Any, eg: Any, same: bool) -> None:
        """Copy the kernels' used/live/entries back into the stores of both graphs."""
        for g in (dg,) if same else (dg, eg):
            for st in g._stores:
                # (one tolist, not three int() reads: this runs after every kernel call)
                st.used, st.live, st.entries = st._seq_meta.tolist()

    def _table_of(self, eg: Any, mask: np.ndarray) -> np.ndarray:
        """The search's address table: ``eg``'s storage rows, no overlay row at all.

        Cached while the arrays it points into are the same objects (the table
        holds them, so their addresses stay valid): building it costs tens of µs.
        """
        n_cap = int(eg._out.start.shape[0])
        if self._oidx.shape[0] < n_cap:
            self._oidx = np.full(n_cap, -1, np.int32)
        out, inn = eg._out, eg._in
        arrays = (out.start, out.deg, out.nbr, out.elab, inn.start, inn.deg, inn.nbr, inn.elab,
                  mask, self._oidx)
        hit = self._tcache
        if hit is not None and all(x is y for x, y in zip(hit[0], arrays)):
            return hit[1]
        e32 = np.zeros(0, np.int32)
        off = np.zeros(1, np.int64)
        storage = SimpleNamespace(        # BatchView's names over the live storage
            b_start=out.start, b_deg=out.deg, b_nbr=out.nbr, b_elab=out.elab,
            bi_start=inn.start, bi_deg=inn.deg, bi_nbr=inn.nbr, bi_elab=inn.elab,
            o_idx=self._oidx, oi_idx=self._oidx, o_off=off, oi_off=off,
            o_nbr=e32, oi_nbr=e32, o_elab=e32, oi_elab=e32, o_ins=e32, oi_ins=e32, o_dl=e32,
            oi_dl=e32)
        keep: list = []
        T = view_table(storage, mask, keep)
        self._tcache = (arrays, T, keep)
        return T

    def _scratch(self, n_cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The engine's one-worker scratch rows for ``n_cap`` vertices (cached)."""
        hit = self._scache
        if hit is not None and hit[0] == n_cap:
            return hit[1]
        eng = self.engine
        local = eng._use_local(self.plans)
        path = has_path(eng._program(self.plans))
        marks, cnts = eng._scratch(1, n_cap if local or path else 0, local)
        flags = eng._flag_rows(1, n_cap + 1)
        self._scache = (n_cap, (marks[0], cnts[0], flags[0]))
        return self._scache[1]

    def _key(self, dg: Any, eg: Any) -> tuple:
        """What the packed arguments depend on: the graphs' states (another path edited
        them; the filter is then stale too) and storage versions (arrays replaced), the
        edge set's arrays."""
        es = self.edgeset
        return (dg._state, eg._state, dg.storage_version, eg.storage_version,
                -1 if es is None else es.generation)

    def _args(self, dg: Any, eg: Any, filt: Any) -> tuple:
        """The kernel's arguments after the batch's own: stores, filter, plans, scratch.

        Built again only when :meth:`_key` changed; in between, the stores'
        ``used``/``live``/``entries`` live in the packed ``meta`` arrays, which
        :meth:`_store_back` copies to the stores after each call.
        """
        same = self.relevant is None
        fs = self._store_args(dg)
        rs = fs if same else self._store_args(eg)
        mark, lcnt, flag = self._scratch(int(filt.mask.shape[0]))
        self._tag_block(int(filt.mask.shape[0]))
        self._pack = (*fs, *rs, same, self._table, dg.directed, dg.has_edge_labels, dg.slack,
                      self.split, self.trust, *self._set_args(), filt.nq1, filt.lab_idx,
                      filt.qlab, filt.req, filt.cnt, filt.mask, self._table_of(eg, filt.mask),
                      self.engine._program(self.plans), self._order, self._pair_kind,
                      self._pair_elabel, self._weight, int(self.plans.divisor),
                      bool(self.plans.induced), mark, lcnt, flag, self._sp_addr,
                      self._sp_tag)
        self._pack_key = self._key(dg, eg)
        return self._pack

    def _buffers(self, B: int) -> tuple[np.ndarray, ...]:
        """``a, b, op, lab, code, old_lab`` for a batch of ``B`` (views of kept arrays:
        a batch's are read only until the next :meth:`run`)."""
        bufs = self._bufs
        if bufs is not None:
            hit = bufs[2].get(B)
            if hit is not None:
                return hit
        if bufs is None or bufs[1][0].shape[0] < B:
            n = max(B, 1024)
            whole = (np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int8),
                     np.empty(n, np.int32), np.empty(n, np.int8), np.empty(n, np.int32))
            views: dict = {}
        else:
            whole, views = bufs[1], bufs[2]
        if len(views) >= 4:             # a stream's batches come in a few sizes
            views.clear()
        views[B] = tuple(x[:B] for x in whole)
        self._bufs = (B, whole, views)
        return views[B]

    # --------------------------------------------------------------- run
    def run(self, ups: Updates, on_invalid: str, threads: int,
            search: np.ndarray | None = None, stop_after: float | None = None,
            min_done: int = 0) -> SeqResult | None:
        """Apply and match ``ups`` in place, or return ``None`` (the batch path takes it).

        Parameters
        ----------
        ups : Updates
            The batch (external ids).
        on_invalid : {"error", "skip"}
            As :class:`~warpmatch.stream.matcher.ContinuousMatcher` says. An
            invalid update under ``"error"`` makes this method take back what it
            applied and return ``None``, so that the batch path reports it.
        threads : int
            The engine's threads: with more than one, the rest of a batch
            estimated above :data:`PARALLEL_S` is left to the batch path, unless
            that was measured slower per update (the whole batch is
            :meth:`prefers_batch`'s decision, taken by the caller).
        search : numpy.ndarray, optional
            bool per update: search only the marked updates' deltas (the others
            are applied with 0 and 0). The default, ``None``, searches all.
        stop_after : float, optional
            Seconds of kernel time after which the run stops between two kernel
            calls, once ``min_done`` updates are done (a fused run of
            :mod:`warpmatch.stream._fused` whose work was not estimated yet).
            The default, ``None``: no such stop.
        min_done : int, optional
            See ``stop_after``. The default is 0.

        Returns
        -------
        SeqResult or None

        Raises
        ------
        OverflowError
            A count does not fit int64 (nothing is changed).
        """
        dg = self.graph
        B = len(ups)
        if B == 0:
            if len(ups.new_vertex_ids):     # declarations alone: the batch path checks them
                return None
            # nothing to do: an empty batch must not send a split graph to the batch path,
            # which would rebuild its stores and leave split mode for good
            z = np.zeros(0, np.int64)
            return SeqResult(0, z, z.copy(), np.zeros(0, np.int8), 0, (), 0)
        if dg.labeled and len(ups.new_vertex_ids):
            dg.declarations.check(ups)     # checked (and cached) as the batch path does
        a, b, op, lab, code, old_lab = self._buffers(B)
        ids = dg._ids
        has_lab = ups.label is not None
        # ops as given when int8 (the readers' dtype), else widened: a cast could wrap
        op_in = ups.op if ups.op.dtype == np.int8 else _c(ups.op, np.int64)
        if not map_updates(_c(ups.src, np.int64), _c(ups.dst, np.int64), _c(op_in, op_in.dtype),
                           _labels_in(ups.label) if has_lab else _NO_LABELS,
                           has_lab, dg.has_edge_labels, ids.identity, dg.n, ids.base_ext,
                           ids.base_int, ids.extra_ext, ids.extra_int, a, b, op, lab):
            return None
        eg = dg if self.relevant is None else self.relevant.graph
        same = self.relevant is None
        eng = self.engine
        if self._pack_key is not None and self._pack_key == self._key(dg, eg):
            # nothing but this path touched the graphs since its last run: the filter is
            # exact (this path kept it so) and the packed arguments are current
            filt, pack = self._filt, self._pack
        else:
            filt = self._filt = eng.filter_for(self.plans, eg)
            pack = self._args(dg, eg, filt)
        code.fill(S.NOT_DONE)
        plus = np.zeros(B, np.int64)
        minus = np.zeros(B, np.int64)
        ctl = np.zeros(S.CTL_SIZE, np.int64)
        error_mode = on_invalid == "error"
        srch = _NO_MASK if search is None else _c(search, np.bool_)
        rate = self.rate
        spent = 0.0
        probe = 0
        ctl[S.C_CLOCK], ctl[S.C_CLOCK_ID] = _CLOCK
        if rate is None:
            size = min(B, FIRST_CALL)
            if threads > 1 and B > PROBE_CALL:
                # a heavy first batch can still switch: the kernel looks at the time after
                # PROBE_CALL updates and pauses if the rest looks worth the threads
                probe = PROBE_CALL
        else:
            size = max(1, int(CALL_S / max(rate, 1e-9)))
            if threads > 1 and self.batch_rate is None:
                size = min(size, max(PROBE_CALL, int(PARALLEL_S / max(rate, 1e-9))))
        kept = False                    # False: whatever was applied is taken back
        status = S.DONE
        try:
            while ctl[S.C_NEXT] < B:
                nxt = int(ctl[S.C_NEXT])
                if nxt > 0 and nxt >= ctl[S.C_IRR] and (
                        (threads > 1 and self._worth_batch(spent / nxt, B - nxt))
                        or (stop_after is not None and nxt >= min_done
                            and spent > stop_after)):
                    # the rest is worth the batch path's threads, or the caller's time is
                    # up (and split mode's first pass applied none of the rest: a row or
                    # the edge set needed room)
                    break
                if probe:               # the deadline counts from the batch's first call
                    ctl[S.C_PROBE] = nxt + probe + 1
                    ctl[S.C_BUDGET] = _now_ns() + self._probe_budget(probe, B - nxt - probe)
                    probe = 0
                elif ctl[S.C_PROBE] and ctl[S.C_NEXT] >= ctl[S.C_PROBE] - 1:
                    ctl[S.C_PROBE] = 0  # passed (or paused there): no more
                t0 = time.perf_counter()
                status = S.seq_run(ctl, min(B, nxt + size), error_mode, a, b, op, lab, code,
                                   old_lab, plus, minus, *pack, srch)
                dt = time.perf_counter() - t0
                self._store_back(dg, eg, same)
                spent += dt
                done = int(ctl[S.C_NEXT]) - nxt
                if done > 0:
                    size = max(1, min(8 * size, int(CALL_S * done / max(dt, 1e-9))))
                if status in (S.INVALID, S.OVERFLOW):
                    break
                if status == S.ROOM_SET:
                    self.edgeset.grow()
                    pack = self._args(dg, eg, filt)     # the table's arrays are new
                elif status not in (S.DONE, S.PAUSED):     # a row must move: make room
                    g = dg if status in (S.ROOM_FULL_OUT, S.ROOM_FULL_IN) else eg
                    st = g._out if status in (S.ROOM_FULL_OUT, S.ROOM_REL_OUT) else g._in
                    if st.ensure_edges(int(ctl[S.C_ROOM])):
                        g.storage_version += 1
                        pack = self._args(dg, eg, filt)     # new edge arrays
            kept = status not in (S.INVALID, S.OVERFLOW)
        finally:
            # an invalid update under "error", an overflow, or an exception between calls
            # (Ctrl-C): the batch is not applied at all
            reached = max(int(ctl[S.C_NEXT]), int(ctl[S.C_IRR]))
            rows = _rows_of(a, b, reached, dg, eg)
            if not kept and reached > 0:
                self._undo(a, b, op, lab, code, old_lab, reached, filt, dg, eg, same)
                ctl[:] = 0
                if rows is not None:    # taken back, but rows may have moved meanwhile
                    for g in ((dg,) if same else (dg, eg)):
                        g.edits.record(rows)
            self._finish(dg, eg, filt, ctl, same, rows)
        if status == S.INVALID:
            return None
        if status == S.OVERFLOW:
            raise OverflowError("a delta count times its weight does not fit in int64")
        c = ctl.tolist()                # (Python ints, read once)
        done = c[S.C_NEXT]
        st = self.stats
        st["runs"] += 1
        st["updates"] += done
        st["relevant"] += c[S.C_REL]
        st["tasks"] += c[S.C_TASKS]
        if done > 0:
            r = spent / done
            self.rate = r if self.rate is None else 0.5 * (self.rate + r)
        self._search_s += spent
        if self._sp_mode == "auto":
            self._maybe_special()
        return SeqResult(done, plus, minus, code, c[S.C_TASKS],
                         (a, b, op, lab, code, old_lab, c[S.C_NET], c[S.C_RNET]),
                         c[S.C_VALID], c[S.C_PLUS], c[S.C_MINUS])

    def undo(self, res: SeqResult, start: int = 0) -> None:
        """Take back a batch :meth:`run` applied (its caller found an error after it), or
        its updates from ``start`` on (a fused run's batches not yielded,
        :mod:`warpmatch.stream._fused`)."""
        if res.done <= start:
            return
        if res.counted:
            self.stats["updates"] -= res.done - start
        a, b, op, lab, code, old_lab, net, rnet = res.undo_state
        dg = self.graph
        same = self.relevant is None
        eg = dg if same else self.relevant.graph
        filt = self.engine.filter_for(self.plans, eg)
        if start:
            a, b, op, lab, code, old_lab = (x[start:res.done]
                                            for x in (a, b, op, lab, code, old_lab))
            net, rnet = part_net(a, b, op, code, filt.lab_idx, self._table, self.trust, same)
        upto = res.done - start
        self._undo(a, b, op, lab, code, old_lab, upto, filt, dg, eg, same)
        rows = _rows_of(a, b, upto, dg, eg)
        dg.edited_in_place(-net, rows)
        if not same:
            eg.edited_in_place(-rnet, rows)
        filt.synced(eg)

    def detach(self, res: SeqResult, counted: bool = True) -> SeqResult:
        """``res`` with copies of its arrays, so that :meth:`undo` can still take it back
        after later :meth:`run` calls (which reuse the kept batch arrays)."""
        if res.done == 0:
            return replace(res, counted=counted)
        a, b, op, lab, code, old_lab, net, rnet = res.undo_state
        kept = tuple(x[:res.done].copy() for x in (a, b, op, lab, code, old_lab))
        return replace(res, code=kept[4], undo_state=(*kept, net, rnet), counted=counted)

    def dry_run(self, ups: Updates, on_invalid: str) -> SeqResult | None:
        """What applying ``ups`` would edit, as an :meth:`undo` record, leaving nothing
        applied: the batch path can then apply ``ups`` and still be taken back.

        The updates are applied without a search and taken back at once; the
        path's rate, counters and search time stay as they were. ``None``: as
        :meth:`run` (an update this path leaves to the batch path).
        """
        saved = (self.rate, dict(self.stats), self._search_s)
        try:
            res = self.run(ups, on_invalid, 1, np.zeros(len(ups), np.bool_))
            if res is None:
                return None
            rec = self.detach(res, counted=False)
            self.undo(rec)
            return rec
        finally:
            self.rate, self.stats, self._search_s = saved

    # ------------------------------------------------------ path choice
    def trial_size(self, rest: int) -> int | None:
        """Updates of a first, bounded trial of the batch path within a batch (about
        :data:`PARALLEL_S` of this path's estimated work, at least :data:`PROBE_CALL`),
        or ``None`` once the batch path was timed: a batch path slower than this one
        then costs at most that slice, where a whole untimed rest could cost more
        than the thread it was meant to beat."""
        if self.batch_rate is not None:
            return None
        rate = max(self.rate or 0.0, 1e-9)
        return min(rest, max(PROBE_CALL, int(PARALLEL_S / rate)))

    def batch_faster(self) -> bool:
        """Whether the batch path was measured faster per update than this one."""
        return (self.batch_rate is not None and self.rate is not None
                and self.batch_rate < self.rate)

    def prefers_batch(self, size: int, threads: int) -> bool:
        """Whether a batch of ``size`` updates should go to the batch path instead.

        Only with several threads, sequential work estimated above
        :data:`PARALLEL_S` and the batch path timed: the path with the smaller
        measured time per update is taken, the other one again every
        :data:`REPROBE` batches (a stream's work changes). Before the batch path
        was timed, a batch begins here and the caller tries the batch path on a
        bounded slice (:meth:`trial_size`) where the rest is estimated above
        :data:`UNTIMED_FACTOR` times :data:`PARALLEL_S`.
        """
        if (threads <= 1 or self.rate is None or self.batch_rate is None
                or self.rate * size <= PARALLEL_S):
            # never timed: :meth:`run` begins the batch and the matcher tries the batch
            # path on a bounded slice of the rest (:meth:`trial_size`)
            return False
        self._skipped += 1
        if self._skipped >= REPROBE:
            self._skipped = 0
            return self.batch_rate >= self.rate
        return self.batch_rate < self.rate

    def _leave_rate(self, rest: int) -> float:
        """Seconds per update above which ``rest`` updates should leave this path for the
        batch path's threads: the rest's work above :data:`PARALLEL_S` and the batch
        path measured faster, or, never timed, the work above :data:`UNTIMED_FACTOR`
        times :data:`PARALLEL_S`. The one rule of :meth:`_worth_batch` and the probe."""
        if self.batch_rate is None:
            return UNTIMED_FACTOR * PARALLEL_S / max(rest, 1)
        return max(PARALLEL_S / max(rest, 1), self.batch_rate)

    def _probe_budget(self, probe: int, rest: int) -> int:
        """Nanoseconds within which ``probe`` updates leave ``rest`` on this path."""
        return int(min(probe * self._leave_rate(rest) * 1e9, 2**62))

    def _worth_batch(self, rate: float, rest: int) -> bool:
        """Whether ``rest`` updates at ``rate`` s each should leave this path."""
        return rate > self._leave_rate(rest)

    def batch_timed(self, size: int, seconds: float) -> None:
        """Record the batch path's time for ``size`` updates (an average per update)."""
        if size <= 0:
            return
        r = seconds / size
        self.batch_rate = r if self.batch_rate is None else 0.5 * (self.batch_rate + r)

    def _undo(self, a: np.ndarray, b: np.ndarray, op: np.ndarray, lab: np.ndarray,
              code: np.ndarray, old_lab: np.ndarray, upto: int, filt: Any, dg: Any, eg: Any,
              same: bool) -> None:
        """Take back the valid updates ``0..upto-1`` (:func:`._seq_kernels.seq_undo`)."""
        fs = self._store_args(dg)
        rs = fs if same else self._store_args(eg)
        es = self.edgeset
        if es is not None:                # room to re-insert every deleted edge
            dels = int(np.count_nonzero((op[:upto] < 0) & (code[:upto] == 0)))
            while len(es) + dels > MAX_LOAD * es.keys.shape[0]:
                es.grow_for(len(es) + dels)
        S.seq_undo(upto, a, b, op, lab, code, old_lab, *fs, *rs, same, self._table,
                   dg.directed, dg.has_edge_labels, dg.slack, self.split, self.trust,
                   *self._set_args(),
                   filt.nq1, filt.lab_idx, filt.qlab, filt.req, filt.cnt, filt.mask)
        self._store_back(dg, eg, same)
        self._pack_key = None             # the stores' meta arrays are _undo's own now

    def _finish(self, dg: Any, eg: Any, filt: Any, ctl: np.ndarray, same: bool,
                rows: np.ndarray | None) -> None:
        """Bookkeeping after a run: edge counts, states, compaction, the filter's state;
        ``rows``: the run's endpoints, for the graphs' edit logs (:func:`_rows_of`)."""
        if max(ctl[S.C_NEXT], ctl[S.C_IRR]) == 0:
            return
        if self.split:
            self.dirty = True           # its stores are rebuilt by sync()
        versions = (dg.storage_version, eg.storage_version)
        dg.edited_in_place(int(ctl[S.C_NET]), rows)
        if not same:
            eg.edited_in_place(int(ctl[S.C_RNET]), rows)
        filt.synced(eg)
        if self._pack_key is not None:
            # this path's own edit leaves the pack current, unless a store was compacted
            # (new arrays) on the way
            self._pack_key = (self._key(dg, eg)
                              if versions == (dg.storage_version, eg.storage_version) else None)
