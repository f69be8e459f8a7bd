"""One GPU search of one plan (:class:`Run`): its module, buffers, BFS and DFS launches.

Map: setup (budget, candidate sets, the module and its constants: ``_module``,
``_bind``, the leaf table: ``_fill_table``) < the BFS phase (``initial_pool``,
``expand``) < DFS launches (``_dfs``) < counting (``count_leaves``, ``count_dfs``,
``_count_children``) and listing (``list_dfs``, ``_list_pool``) by slices of the pool.
:class:`.engine.GpuEngine` makes one per ``count``/``match`` call.

Execution of one plan:

1. **BFS phase** (gMatch 4.3): the plan's roots are filtered on the GPU, then
   expanded depth by depth (one thread per (partial match, candidate) task)
   while the pool holds fewer than ``pool_threshold`` partial matches and the
   next expansion has at most ``16 * pool_threshold`` tasks; the pool is then
   shuffled (fixed seed) so that hubs' subtrees do not sit side by side.
2. **DFS phase**: a persistent grid of warps takes chunks of the pool through
   an atomic counter and explores them depth-first with the warp-level batch
   exploration of gMatch 4.2; with ``steal=True`` idle warps receive half of a
   busy warp's remaining tasks (4.3, "Dynamic Balancing Phase").

Counting accumulates per-lane counters reduced once per warp, over consecutive
slices of the pool sized to take about ``LAUNCH_S`` seconds per launch (with
``launches="pool"``, launches that each take the rest of the pool and stop
taking rows after ``LAUNCH_S``: kernels/common.cuh ``WM_C_SOFT``), so the
host handles Ctrl-C/SIGTERM, progress and early stops between launches. An early
stop is also asked while a count's launch runs (``_wait_or_halt``): where it
fires, the host sets the launch's abort flag from a stream of its own and every
warp stops at its next check, the launch's count void. Listing uses a
device buffer with an atomic cursor; the resumable point is a *slice of the
pool*: the host launches the DFS on consecutive slices sized so that their
matches fit the buffer (adapting the size from the rows the previous slice
produced). A slice that overflows stops every warp at its next step and is
re-run in quarters; a single partial match whose subtree alone overflows is
expanded one depth on the GPU and its children are processed the same way, so
memory stays bounded by the buffer whatever the number of matches.

Differences from the paper: work stealing goes through one global queue of
donated records (prefix, level, offset range) rather than per-block queues
plus a global one; the pool is fetched in chunks of up to 32 partial matches,
so a warp batches task groups from the first level on; a backward edge is
looked up by binary search in the matched vertex's list, never the
candidate's (``kernels/common.cuh``, ``wm_bedge``).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from ..._progress import compiling
from ...errors import BackendUnavailableError, BudgetError
from ...graph.csr import Graph
from ...plan.plan import Plan
from ..base import Progress, Stop
from .device import device_properties, resident_blocks
from .memory import _array, device_copy, resident_bytes
from .modules import mark_compiled, use_generic
from .render import (leaf_first, part_dtype, part_nbytes, plan_signature, plan_trims,
                     table_leaves, uses_cut_graph, uses_table, warp_group)
from .render_generic import generic_eligible, generic_signature, generic_table
from .source import NVRTC_OPTIONS, module_source, stack_bytes, warps_per_block

if TYPE_CHECKING:                       # (engine.py imports this module)
    from .engine import GpuEngine

_MODULES: dict[tuple, Any] = {}
#: id of the search whose graph and plan a module's constants hold now: searches that
#: share a module (the generic one serves every plan of a size) rebind before a launch
_BOUND: dict[int, int] = {}

#: counters of the kernels (kernels/common.cuh)
_C_POOL, _C_COUNT, _C_STEPS, _C_TASKS, _C_CURSOR, _C_OVERFLOW, _C_STEALS, _C_ABORT, _C_SOFT = \
    range(9)
_C_N = 9
#: seconds a DFS launch aims at: the host gets control back (Ctrl-C, SIGTERM,
#: progress, early stops) several times a second, while a launch's fixed cost
#: (its start, the persistent grid's tail) stays a small fraction of it
LAUNCH_S = 0.25
#: pool rows in a count's first DFS launch with ``launches="sliced"`` (then sized by
#: time, see count_dfs)
FIRST_SLICE = 4096
#: seconds after which a count's launch stops (its partial count is dropped) and its
#: slice is counted again in quarters, down to one partial match, which is then
#: expanded one depth: the pool's rows differ by orders of magnitude in work (hubs),
#: so a slice sized from the last one's rate can run for minutes, and Ctrl-C with it
SLICE_MAX_S = 1.0
#: seconds between two askings of a count's early stop while its launch runs (after
#: the first :data:`HALT_FAST_S`, which ask every 0.1 ms: short launches must not
#: wait for a poll)
HALT_POLL_S = 0.002
HALT_FAST_S = 0.02
#: how a count's DFS launches divide the pool (GpuEngine's ``launches=``)
LAUNCH_MODES = ("sliced", "pool")
#: the fewest rows of list mode's device buffer when a small budget shrinks it
LIST_ROWS_MIN = 1024


def _fmt(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if nbytes < 1024 or unit == "TiB":
            return f"{nbytes:.1f} {unit}" if unit != "B" else f"{int(nbytes)} B"
        nbytes /= 1024
    return f"{nbytes} B"


class Run:
    """One execution of a plan: device arrays, compiled modules, budget, stats."""

    def __init__(self, eng: GpuEngine, graph: Graph, plan: Plan, list_mode: bool,
                 batch_size: int = 1 << 16) -> None:
        ok, why = eng.available()
        if not ok:
            raise BackendUnavailableError(f"backend 'gpu' is unavailable: {why}")
        import cupy as cp
        self.cp = cp
        self.eng = eng
        self.graph = graph
        self.plan = plan
        self.k = int(plan.k)
        self.list_mode = list_mode
        self.batch_size = batch_size
        self.t0 = time.perf_counter()
        self.stats: dict[str, Any] = {"model": eng.model, "batch": eng.batch,
                                      "steal": eng.steal, "k": self.k, "compile_s": 0.0,
                                      "steals": 0, "steps": 0, "tasks": 0, "launches": 0}
        eng.last_stats = self.stats
        # labels the plan asks for but the graph does not carry: nothing matches
        need_v = bool(np.any(plan.vlabel != -1))
        need_e = bool(np.any(plan.bn_elabel != -1))
        self.trivially_empty = (plan.empty_reason is not None or self.k == 0
                                or (need_v and graph.vertex_labels is None)
                                or (need_e and graph.edge_labels is None))
        if self.trivially_empty:
            return
        cp.cuda.Device(eng.device).use()
        self.props = device_properties(cp, eng.device)
        self.sms = int(self.props["multiProcessorCount"])
        total_mem = int(self.props["totalGlobalMem"])
        self.budget = (int(eng.memory_budget_bytes) if eng.memory_budget_bytes is not None
                       else int(total_mem * 0.9))
        # a graph in host memory (pinned, managed) takes none of the device's budget, a
        # hybrid one its offsets
        gbytes = resident_bytes(graph, eng.graph_memory)
        # candidate sets and rule 8's part ids
        cbytes = int(plan.cand_ids.size) * 4 + (self.k + 1) * 8 + part_nbytes(plan)
        # Rule 8 plans may read the cut neighbours' lists (render.uses_cut_graph), kept
        # beside the graph where it is in device memory, else in pinned host memory (the
        # hybrid layout's offsets did not leave room for another 8 bytes a vertex)
        self.cut_memory = None
        if uses_cut_graph(plan, list_mode):
            self.cut_memory = "device" if eng.graph_memory == "device" else "pinned"
            gbytes += resident_bytes(plan.cut_graph, self.cut_memory)
        if gbytes + cbytes > self.budget:
            raise BudgetError(f"the graph needs {_fmt(gbytes)} of GPU memory "
                              f"({graph.n} vertices, {graph.indices.size} adjacency entries) "
                              f"plus {_fmt(cbytes)} of candidate sets, but the budget is "
                              f"{_fmt(self.budget)}")
        self.used = gbytes + cbytes
        self.dg = device_copy(graph, eng.graph_memory)
        self.part = (None if plan.cut_part is None
                     else _array(plan.cut_part, part_dtype(plan), "device"))
        self.cut_dg = (None if self.cut_memory is None
                       else device_copy(plan.cut_graph, self.cut_memory))
        self.cand_ptr = cp.asarray(plan.cand_ptr, dtype=cp.int64)
        self.cand_ids = (cp.asarray(plan.cand_ids, dtype=cp.int32) if plan.cand_ids.size
                         else cp.zeros(1, cp.int32))
        self.dummy = cp.zeros(1, cp.int32)
        self.kernel = eng.model
        self._sources: dict[bool, str] = {}
        self.generic = self._choose_generic()
        self.stats["module"] = "generic" if self.generic else "specialised"
        # count mode counts depths leaf_d..k-1 from list sizes instead of enumerating
        # them: a plain last leaf (render.leaf_countable) or a group of bare leaves
        # (render.leaf_first); k: none
        self.leaf_d = self.k if list_mode else leaf_first(plan, eng.leaf_groups)
        # twins and independent vertices are counted a warp per partial match
        # (render.warp_group)
        self.twins = not list_mode and warp_group(plan, eng.leaf_groups) is not None
        self.leaf = self.leaf_d < self.k
        self.stats["leaf_count"] = self.leaf
        self.stats["leaf_group"] = self.k - self.leaf_d if self.leaf_d < self.k - 1 else 0
        self.warps_per_block = warps_per_block(plan, eng.model, self.generic)
        self.stats["stack_bytes_per_warp"] = (stack_bytes(self.k, self.generic
                                                          or plan_trims(plan))
                                              if eng.model == "fine" else 20 * self.k)
        self.stats["warps_per_block"] = self.warps_per_block
        # labeled last leaves counted from a per-vertex table (render.table_leaves): the
        # table is bound with the module and filled before the search
        tab = None if list_mode else table_leaves(plan, eng.leaf_groups)
        self.table = tab if tab is not None and uses_table(plan, eng.leaf_groups) else None
        self.leaf_tab = None
        if self.table is not None:
            self._reserve("the leaf table", 4 * int(graph.n))
            self.leaf_tab = cp.zeros(max(1, int(graph.n)), dtype=cp.int32)
            self.used += 4 * int(graph.n)
        self.stats["leaf_table"] = self.table is not None
        self.mod = self._module()
        if self.table is not None:
            self._fill_table()
        # the device clock against the host's, read at the first DFS launch (a search
        # that ends in its BFS phase needs neither it nor the round trip)
        self.clock0: int | None = None
        self.host0 = 0.0
        self.aborted = False
        self.halted = False
        # count_dfs's in-launch early stop (_wait_or_halt): made at its first use
        self._halt_stream: Any = None
        self._halt_one: Any = None

    # ------------------------------------------------------------- modules
    def _key(self, generic: bool) -> tuple:
        eng = self.eng
        sig = (generic_signature(self.plan, eng.leaf_groups) if generic
               else plan_signature(self.plan, eng.leaf_groups))
        return (sig, self.kernel, warps_per_block(self.plan, eng.model, generic), eng.batch,
                self.list_mode, eng.steal, eng.profile, eng.device)

    def _text(self, generic: bool) -> str:
        """The module's text (source.module_source), rendered once per search: ``auto``
        needs the specialised one to look up its marker, the compile then reuses it."""
        if generic not in self._sources:
            self._sources[generic] = module_source(self.eng, self.plan, self.list_mode,
                                                   generic)
        return self._sources[generic]

    def _arch(self) -> str:
        return f"{self.props['major']}{self.props['minor']}"

    def _choose_generic(self) -> bool:
        """The generic module or the plan's own (:func:`.modules.use_generic`)."""
        mode = self.eng.compile
        eligible = generic_eligible(self.plan)
        if not eligible or mode == "specialised":
            return False
        loaded = self._key(False) in _MODULES
        src = "" if mode == "generic" or loaded else self._text(False)
        return use_generic(mode, eligible, loaded, src, self._arch())

    def _module(self) -> Any:
        cp = self.cp
        key = self._key(self.generic)
        mod = _MODULES.get(key)
        if mod is None:
            t = time.perf_counter()
            src = self._text(self.generic)
            mod = cp.RawModule(code=src, options=NVRTC_OPTIONS)
            with compiling():         # NVRTC: seconds on a first use (CuPy caches on disk)
                mod.compile()
            self.stats["compile_s"] = time.perf_counter() - t
            if not self.generic:
                mark_compiled(src, self._arch())    # for compile="auto" (modules.py)
            _MODULES[key] = mod
        self._bind(mod)
        return mod

    def _bind(self, mod: Any) -> None:
        """Point the module's constant ``g`` at this graph and plan."""
        cp = self.cp
        dg = self.dg

        def ptr(a: Any) -> int:
            return int((self.dummy if a is None else a).data.ptr)

        cut = self.cut_dg
        cuts = ([None] * 4 if cut is None
                else [cut.indptr, cut.indices, cut.in_indptr, cut.in_indices])
        vals = np.array([ptr(dg.indptr), ptr(dg.indices), ptr(dg.elab), ptr(dg.in_indptr),
                         ptr(dg.in_indices), ptr(dg.in_elab), ptr(dg.vlab),
                         ptr(self.cand_ptr), ptr(self.cand_ids), ptr(self.part)]
                        + [ptr(a) for a in cuts] + [ptr(self.leaf_tab)], dtype=np.uint64)
        mem = mod.get_global("g")
        cp.ndarray((vals.size,), dtype=cp.uint64, memptr=mem).set(vals)
        _BOUND[id(mod)] = id(self)
        if self.generic:                # the plan's facts (render_generic.generic_table)
            tab = generic_table(self.plan, self.eng.leaf_groups)
            mem = mod.get_global("wm_gp")
            cp.ndarray((tab.size,), dtype=cp.int32, memptr=mem).set(tab)

    def _fill_table(self) -> None:
        """Count, for each candidate of the table leaves' parent (its depth's candidate set,
        else every vertex), the entries of its list the leaves may take (``wm_leaf_table``,
        a warp a vertex; render_leaves.render_table)."""
        p, plan = int(self.table.parent), self.plan
        if p == 0 or bool(plan.cand_restricted[p]):
            verts = self.cand_ids[int(plan.cand_ptr[p]):int(plan.cand_ptr[p + 1])]
            n, every = int(verts.size), 0
        else:
            verts, n, every = self.dummy, int(self.graph.n), 1
        if n:
            grid, block = self._grid1d(32 * n)
            self._fn("wm_leaf_table")((grid,), (block,),
                                      (verts, np.int64(n), np.int32(every), self.leaf_tab))

    def _fn(self, name: str) -> Any:
        if _BOUND.get(id(self.mod)) != id(self):
            # another search bound its graph and plan since (interleaved match()
            # generators; any plan of this size on the generic module)
            self._bind(self.mod)
        return self.mod.get_function(name)

    def _reserve(self, what: str, nbytes: int) -> None:
        if self.used + nbytes > self.budget:
            raise BudgetError(f"{what} needs {_fmt(nbytes)} of GPU memory, but the graph and "
                              f"earlier buffers take {_fmt(self.used)} of the "
                              f"{_fmt(self.budget)} budget")

    def _grid1d(self, n: int) -> tuple[int, int]:
        return max(1, min((n + 255) // 256, self.sms * 32)), 256

    # ----------------------------------------------------------- BFS phase
    def initial_pool(self) -> tuple[Any, int]:
        """Filter the roots and expand breadth-first up to the pool threshold."""
        cp = self.cp
        t = time.perf_counter()
        # the roots are depth 0's candidate set, already on the device
        roots = self.cand_ids[int(self.plan.cand_ptr[0]):int(self.plan.cand_ptr[1])]
        pool = roots.reshape(-1, 1)
        if roots.size:
            flag = cp.empty(roots.size, dtype=cp.uint8)
            grid, block = self._grid1d(roots.size)
            self._fn("wm_bfs_roots")((grid,), (block,), (roots, np.int64(roots.size), flag))
            pool = roots[flag.view(cp.bool_)].reshape(-1, 1)
        d = 1
        threshold = self.eng.pool_threshold
        # with leaf counting the counted depths are never materialised
        last = self.leaf_d
        while d < last and 0 < pool.shape[0] < threshold:
            # a small budget (a partition's) caps the expansion too: the BFS phase
            # stops where its buffers would not fit (expand's 13 bytes a task, 24 a row,
            # and the next pool) instead of failing
            room = (self.budget - self.used) // 2 - int(pool.shape[0]) * 24
            nxt = self.expand(pool, d, max_tasks=max(0, min(16 * threshold, room // 17)))
            if nxt is None:
                break
            pool, d = nxt, d + 1
        # the pool stays on the device while the warps work through it
        self.used += int(pool.nbytes)
        P = int(pool.shape[0])
        if d < self.k and P > 1 and self.used + 48 * P <= self.budget:
            # the pool is in vertex order, so the heavy partial matches of hubs are
            # adjacent; a fixed-seed shuffle spreads them over the warps' fetches (its
            # keys, indices and sort buffers take about 48 bytes a row: skipped where a
            # small budget has no room for them, e.g. a partition's)
            pool = pool[cp.random.RandomState(12345).permutation(P)]
        cp.cuda.get_current_stream().synchronize()
        self.stats["bfs_s"] = time.perf_counter() - t
        self.stats["pool_depth"] = d
        self.stats["pool_size"] = int(pool.shape[0])
        return pool, d

    def expand(self, pool: Any, d: int, max_tasks: int | None = None) -> Any:
        """Extend every row of ``pool`` (depth ``d``) by one vertex; None if over ``max_tasks``."""
        cp = self.cp
        P = int(pool.shape[0])
        if P == 0:
            return cp.empty((0, d + 1), dtype=cp.int32)
        start = cp.empty(P, dtype=cp.int64)
        length = cp.empty(P, dtype=cp.int64)
        gen = cp.empty(P, dtype=cp.uint8)
        grid, block = self._grid1d(P)
        self._fn("wm_bfs_gen")((grid,), (block,),
                               (pool, np.int64(P), np.int32(d), start, length, gen))
        offs = cp.zeros(P + 1, dtype=cp.int64)
        cp.cumsum(length, out=offs[1:])
        T = int(offs[-1])
        if max_tasks is not None and T > max_tasks:
            return None
        self._reserve(f"expanding {P} partial matches of depth {d} into {T} tasks",
                      T * (4 + 1 + 8) + P * 24)
        cand = cp.empty(max(T, 1), dtype=cp.int32)
        flag = cp.zeros(max(T, 1), dtype=cp.uint8)
        if T:
            grid, block = self._grid1d(T)
            self._fn("wm_bfs_expand")((grid,), (block,),
                                      (pool, np.int64(P), np.int32(d), start, offs, gen,
                                       np.int64(T), cand, flag))
        sel = cp.flatnonzero(flag[:T])
        items = cp.searchsorted(offs, sel, side="right") - 1
        new = cp.empty((int(sel.size), d + 1), dtype=cp.int32)
        new[:, :d] = pool[items]
        new[:, d] = cand[sel]
        return new

    # ----------------------------------------------------------- DFS phase
    def _launch_config(self, fn: Any) -> int:
        """Blocks for a persistent grid: as many as fit on the device at once."""
        return resident_blocks(self.cp, fn, self.warps_per_block * 32, self.sms)

    def _device_now(self) -> int:
        """The device clock now (ns), from the host's (one device round trip per run, at
        its first call)."""
        if self.clock0 is None:
            clock = self.cp.zeros(1, dtype=self.cp.uint64)
            self._fn("wm_clock")((1,), (1,), (clock,))
            self.clock0, self.host0 = int(clock.get()[0]), time.perf_counter()
        return self.clock0 + int((time.perf_counter() - self.host0) * 1e9)

    @property
    def deadline(self) -> int:
        """The run's time limit on the device clock (ns; 0: none), counted from the run's
        start."""
        if self.eng.time_limit_s is None:
            return 0
        left = self.eng.time_limit_s - (time.perf_counter() - self.t0)
        return max(1, self._device_now() + int(left * 1e9))

    def _dfs(self, pool: Any, d: int, out: Any = None, out_cap: int = 0,
             max_s: float | None = None, fetch_s: float | None = None,
             halt: Any = None) -> tuple[int, int, bool]:
        """One DFS launch over ``pool``; returns (count, rows written, overflowed).

        With ``max_s``, the launch stops after about that many seconds and
        :attr:`aborted` says so (its count is then void); past the run's time
        limit it raises ``TimeoutError`` as always. With ``fetch_s``, no warp
        takes more of the pool after about that many seconds: the launch ends
        when the rows taken are done, and its count is theirs. Either way
        :attr:`fetched` is the number of rows taken, from the first. With
        ``halt`` (a callable of no argument), it is asked while the launch runs;
        once it returns True the launch is stopped and :attr:`halted` says so (its
        count is then void too).
        """
        cp = self.cp
        deadline = self.deadline
        soft = 0
        if max_s is not None:
            soft = self._device_now() + int(max_s * 1e9)
            if not deadline or soft < deadline:
                deadline = soft
        self.aborted = False
        self.halted = False
        P = int(pool.shape[0])
        fn = self._fn("wm_fine" if self.kernel == "fine" else "wm_coarse")
        blocks = self._launch_config(fn)
        ctl = np.zeros(_C_N, dtype=np.uint64)
        if fetch_s is not None:
            ctl[_C_SOFT] = self._device_now() + int(fetch_s * 1e9)
        counters = cp.asarray(ctl)
        out_arg = self.dummy if out is None else out
        if self.kernel == "fine":
            warps = blocks * self.warps_per_block
            # Without stealing, heavy partial matches (hub roots) must not travel
            # together: small chunks. With it, whole chunks of 32 fill the first
            # stack level, and the lanes idle only at the end of a level's pool: on an
            # H100 the idle-lane rate of triangle/4-clique/5-clique on a 10^7-edge
            # graph went from 18/13/12% at 4 items to 2.5/3.2/3.1% at 32, at equal or
            # better times (also at 10^8 edges)
            if self.eng.fetch:
                fetch = max(1, min(32, int(self.eng.fetch)))
            elif self.eng.steal:
                fetch = max(1, min(32, P // (warps * 8)))
            else:
                fetch = max(1, min(4, P // (warps * 256)))
            self.stats["fetch"] = fetch
            rec_cap = 8 * warps if self.eng.steal else 1
            steal_state = cp.zeros(4, dtype=cp.int32)
            rec = cp.empty(rec_cap * (self.k + 3), dtype=cp.int32)
            recflag = cp.zeros(rec_cap, dtype=cp.int32)
            args = (pool, np.int64(P), np.int32(d), np.int32(fetch), counters, out_arg,
                    np.int64(out_cap), steal_state, rec, recflag, np.int32(rec_cap),
                    np.uint64(deadline))
        else:
            levels = self.k - 1 - d
            sizes = np.diff(self.plan.cand_ptr)[1:][self.plan.cand_restricted[1:]]
            buf_cap = max(self.dg.max_list, int(sizes.max(initial=0)), 1)
            per_warp = levels * buf_cap * 4
            room = self.budget - self.used - (0 if out is None else out.nbytes)
            warps = blocks * self.warps_per_block
            if per_warp > 0 and room // per_warp < warps:
                fit = int(room // per_warp) // self.warps_per_block
                if fit < 1:
                    raise BudgetError(
                        f"the coarse model needs {_fmt(per_warp)} of candidate buffers per warp "
                        f"({levels} levels x {buf_cap} entries, the longest adjacency list); "
                        f"{_fmt(max(room, 0))} of the {_fmt(self.budget)} budget is left, "
                        f"not enough for one block of {self.warps_per_block} warps")
                blocks = fit
                warps = blocks * self.warps_per_block
            try:
                buf = cp.empty(max(1, warps * levels * buf_cap), dtype=cp.int32)
            except cp.cuda.memory.OutOfMemoryError as exc:
                raise BudgetError(f"the coarse model's candidate buffers ({_fmt(warps * per_warp)}"
                                  f" for {warps} warps) do not fit in GPU memory: {exc}") from exc
            self.stats["coarse_buffer_bytes"] = int(warps * per_warp)
            args = (pool, np.int64(P), np.int32(d), counters, out_arg, np.int64(out_cap),
                    buf, np.int64(buf_cap), np.uint64(deadline))
        self.stats["blocks"] = blocks
        self.stats["warps"] = blocks * self.warps_per_block
        fn((blocks,), (self.warps_per_block * 32,), args)
        if halt is not None:
            self._wait_or_halt(counters, halt)
        c = counters.get()
        self.fetched = int(min(int(c[_C_POOL]), P))
        if self.kernel == "coarse":
            # the buffers are sized by d_max (gigabytes on hub graphs): return them
            # to the driver, or CuPy's pool keeps them and the next run cannot fit
            del args, buf
            cp.get_default_memory_pool().free_all_blocks()
        self.stats["launches"] += 1
        self.stats["steps"] += int(c[_C_STEPS])
        self.stats["tasks"] += int(c[_C_TASKS])
        self.stats["steals"] += int(c[_C_STEALS])
        if c[_C_ABORT] and self.halted:             # asked by the host: void, not retried
            self.stats["halts"] = self.stats.get("halts", 0) + 1
            return 0, 0, False
        self.halted = False                         # (the launch ended before the flag)
        if c[_C_ABORT]:
            if deadline == soft and soft:           # the launch's own limit: void, retried
                self.aborted = True
                self.stats["slice_aborts"] = self.stats.get("slice_aborts", 0) + 1
                return 0, 0, False
            self.stats["timed_out"] = True
            raise TimeoutError(f"the GPU search stopped at its time limit of "
                               f"{self.eng.time_limit_s} s")
        return int(c[_C_COUNT]), int(c[_C_CURSOR]), bool(c[_C_OVERFLOW])

    def _wait_or_halt(self, counters: Any, halt: Any) -> None:
        """Wait for the launch just made, asking ``halt()`` meanwhile; once it is True,
        set the launch's abort flag (``WM_C_ABORT``, which every warp reads at its next
        check) and leave :attr:`halted` set. The flag is copied on a non-blocking stream,
        which does not wait for the launch on the default one."""
        cp = self.cp
        ev = cp.cuda.Event(disable_timing=True)
        ev.record()
        t0 = time.perf_counter()
        while not ev.done:
            waited = time.perf_counter() - t0
            time.sleep(0.0001 if waited < HALT_FAST_S else HALT_POLL_S)
            if not ev.done and halt():
                if self._halt_stream is None:
                    self._halt_stream = cp.cuda.Stream(non_blocking=True)
                    # (the array's base keeps the pinned buffer alive)
                    self._halt_one = np.frombuffer(cp.cuda.alloc_pinned_memory(8),
                                                   np.uint64, 1)
                    self._halt_one[0] = 1
                cp.cuda.runtime.memcpyAsync(
                    counters.data.ptr + _C_ABORT * 8, self._halt_one.ctypes.data, 8,
                    cp.cuda.runtime.memcpyHostToDevice, self._halt_stream.ptr)
                self._halt_stream.synchronize()
                self.halted = True
                return

    def count_leaves(self, pool: Any) -> int:
        """Count mode, pool of depth ``leaf_d`` (a plan that counts its last depths): one
        thread per row."""
        cp = self.cp
        t = time.perf_counter()
        P = int(pool.shape[0])
        total = cp.zeros(1, dtype=cp.uint64)
        # twins, independent vertices: a warp per row (bfs.cu)
        grid, block = self._grid1d(32 * P if self.twins else P)
        self._fn("wm_bfs_leaf")((grid,), (block,), (pool, np.int64(P), total))
        n = int(total.get()[0])
        self.stats["launches"] += 1
        self.stats["search_s"] = time.perf_counter() - t
        return n

    def count_dfs(self, pool: Any, d: int, progress: Progress | None,
                  stop: Stop | None = None, max_s: float | None = None) -> int:
        """Count the pool's subtrees in launches of about ``LAUNCH_S`` seconds each.

        A launch cannot be interrupted, so one launch over the whole pool kept
        Ctrl-C and progress waiting until the end. With ``launches="sliced"``
        (the default) the launches take consecutive slices: the pool is
        shuffled, so a slice's time is about proportional to its length; the
        first slice is small (:data:`FIRST_SLICE`) and each next one is sized
        from the last one's rate (growing at most 8x). With ``launches="pool"``
        (fine model) each launch is given the rest of the pool and the kernel
        stops taking rows after ``LAUNCH_S`` (``fetch_s``), so a search shorter
        than that is one launch instead of a ramp of three or four, each ending
        with most of the GPU idle (after an abort, slices sized by rate as above,
        the fetch limit still on). Rows differ
        in work by orders of magnitude (a hub's subtree), so a launch also stops
        after :data:`SLICE_MAX_S`: it is counted again with a quarter of the rows
        it had taken, and a single partial match that alone takes longer is
        expanded one depth and its children counted the same way (the listing's
        overflow rule, for time), each launch below it allowed four times
        ``max_s`` (default :data:`SLICE_MAX_S`; at most 8 times that): a launch
        of one row can also be slow because the device is shared (8 test
        processes on one H200 made every 2 ms launch abort, and a square's hub
        subtree took over 120 s in one-row launches), so the limit grows for the
        recursion to end in a few levels.
        """
        max_s = SLICE_MAX_S if max_s is None else max_s
        t = time.perf_counter()
        P = int(pool.shape[0])
        total = 0
        # launches="pool": the kernel stops taking rows by itself
        by_fetch = self.kernel == "fine" and self.eng.launches == "pool"
        pos, s = 0, (P if by_fetch else max(1, min(P, FIRST_SLICE)))
        aborts = 0
        while pos < P:
            s = max(1, min(s, P - pos))
            t0 = time.perf_counter()
            n, _, _ = self._dfs(pool[pos:pos + s], d, max_s=max_s,
                                fetch_s=LAUNCH_S if by_fetch else None,
                                halt=None if stop is None else (lambda base=total: stop(base)))
            dt = time.perf_counter() - t0
            if self.halted:             # the stop fired during the launch: its count is void
                break
            if by_fetch and not self.aborted and self.fetched == 0:
                # started after its fetch limit (a busy device): a plain slice next,
                # which always advances
                by_fetch = False
                s = max(1, min(s, FIRST_SLICE))
                continue
            if self.aborted:
                aborts += 1
                # an early stop is asked here too: a hub's slices can abort and split for
                # many seconds, and a count with a limit (or its rival order beside it,
                # engine.race.count_beside) must not wait for them
                if s > 1:
                    # a quarter of the slice, or (launches="pool", where the slice is the
                    # rest of the pool) of the rows it had taken, which hold the slow one
                    s = max(1, (min(s, max(self.fetched, 1)) if by_fetch else s) // 4)
                    if stop is not None and stop(total):
                        break
                    continue
                below = None if stop is None else (lambda c, base=total: stop(base + c))
                total += self._count_children(pool[pos:pos + 1], d,
                                              min(4 * max_s, 8 * SLICE_MAX_S), below)
                pos += 1
                if progress is not None:
                    progress(pos, P)
                if pos < P and stop is not None and stop(total):
                    break
                continue
            total += n
            pos += self.fetched if by_fetch else s
            if progress is not None:
                progress(pos, P)
            if pos < P and stop is not None and stop(total):
                break
            if by_fetch and not aborts:
                s = P - pos
            else:   # sized by the last launch's rate (after an abort: a hub is near)
                s = int(max(s, 1) * min(8.0, LAUNCH_S / max(dt, 1e-6)))
        self.stats["search_s"] = time.perf_counter() - t
        return total

    def _count_children(self, row: Any, d: int, max_s: float,
                        stop: Stop | None = None) -> int:
        """The count below one partial match of depth ``d``, one depth further down
        (launches of at most ``max_s`` seconds, see :meth:`count_dfs`); ``stop`` is asked
        with that count between launches (True: the count so far, a lower bound)."""
        children = self.expand(row, d)
        if d + 1 == self.k:
            return int(children.shape[0])
        if d + 1 == self.leaf_d < self.k:
            return self.count_leaves(children)
        return self.count_dfs(children, d + 1, None, stop, max_s=max_s)

    def list_dfs(self, pool: Any, d: int, progress: Progress | None) -> Iterator[np.ndarray]:
        """Yield host arrays of matches, slice by slice (see the module docstring)."""
        cp = self.cp
        t = time.perf_counter()
        cap = (int(self.eng.list_rows) if self.eng.list_rows
               else int(min(max(4 * self.batch_size, 1 << 16), 1 << 22)))
        if not self.eng.list_rows:
            # a small budget (a part's, or a graph read from host memory) drains a smaller
            # buffer more often instead of failing: at most half the room left
            cap = max(min(cap, (self.budget - self.used) // (2 * 4 * self.k)),
                      min(cap, LIST_ROWS_MIN))
        self._reserve(f"the list buffer ({cap} rows of {self.k} vertices)", cap * self.k * 4)
        out = cp.empty((cap, self.k), dtype=cp.int32)
        self.used += out.nbytes
        yield from self._list_pool(pool, d, out, cap, progress)
        self.stats["search_s"] = time.perf_counter() - t

    def _list_pool(self, pool: Any, d: int, out: Any, cap: int,
                   progress: Progress | None) -> Iterator[np.ndarray]:
        P = int(pool.shape[0])
        pos, s = 0, min(P, 256)
        while pos < P:
            s = max(1, min(s, P - pos))
            t0 = time.perf_counter()
            _, rows, overflow = self._dfs(pool[pos:pos + s], d, out, cap)
            dt = time.perf_counter() - t0     # the launch's, not the consumer's time
            if overflow:
                if s > 1:
                    s = max(1, s // 4)
                    continue
                # one partial match alone overflows the buffer: split it one depth down
                children = self.expand(pool[pos:pos + 1], d)
                if d + 1 == self.k:
                    for i in range(0, int(children.shape[0]), cap):
                        yield children[i:i + cap].get()
                else:
                    yield from self._list_pool(children, d + 1, out, cap, None)
                pos += 1
                continue
            if rows:
                yield out[:rows].get()
            pos += s
            if progress is not None:
                progress(pos, P)
            # aim the next slice at half the buffer, and at most LAUNCH_S seconds (a
            # launch that finds few matches must still return often: Ctrl-C, progress)
            s = int(min(8 * s, max(1, s * (cap // 2) / max(rows, 1)),
                        max(1, s * LAUNCH_S / max(dt, 1e-6))))

    def finish(self) -> None:
        self.stats["total_s"] = time.perf_counter() - self.t0
        if self.stats.get("tasks") and self.stats.get("steps"):
            self.stats["idle_rate"] = 1.0 - self.stats["tasks"] / (32.0 * self.stats["steps"])
