"""The GPU engine: gMatch's fine-grained execution model on CuPy + NVRTC.

Implements Sun et al., "gMatch: Fine-Grained and Hardware-Efficient Subgraph
Matching on GPUs", sections 4-5 (see ``kernels/fine.cu``), plus the
coarse-grained model of its section 2.2 (``kernels/coarse.cu``) for the
ablation of its Table 5. Kernels are CUDA C++ sources shipped in the package,
specialised per plan by :mod:`.render` and compiled at run time with NVRTC
through :class:`cupy.RawModule` (the text: :mod:`.source`), cached per plan
structure; a structure not
compiled before runs on the generic module of its size instead
(:mod:`.render_generic`, the plan in constant memory; :mod:`.modules` chooses).

Map: :class:`GpuEngine` (the options, ``count`` and ``match``) here; one search of one
plan, its module, buffers, BFS and DFS launches, in :class:`.run.Run`.
"""
from __future__ import annotations

import atexit
import math
import os
import threading
from typing import Any, Iterator

import numpy as np

from ...graph.csr import Graph
from ...plan.plan import Plan
from ..base import Progress, Stop
from .device import cuda_available
from .memory import MEMORY_KINDS
from .modules import COMPILE_MODES, default_mode
from .render import leaf_groups_mode
from .run import LAUNCH_MODES, Run
# the module sources (source.py); module_source and NVRTC_OPTIONS are also imported from
# here by the benchmarks and tests
from .source import NVRTC_OPTIONS, module_source  # noqa: F401

#: one count on the device at a time in this process: a count left running by an answered
#: race (engine.race.count_beside: still compiling its module when the CPU engine
#: answered) shares modules and their bound constants with the next search, which waits
#: for it; a listing waits for it before it starts
SEARCH_LOCK = threading.RLock()
#: seconds the interpreter's exit waits for such a count (a module's compile: 1-2 s)
EXIT_WAIT_S = 120.0


def _wait_at_exit() -> None:
    # a daemon thread in NVRTC or a launch at interpreter teardown can crash the process
    if SEARCH_LOCK.acquire(timeout=EXIT_WAIT_S):
        SEARCH_LOCK.release()


atexit.register(_wait_at_exit)


class GpuEngine:
    """Execute plans on an NVIDIA GPU with gMatch's fine-grained model.

    Parameters
    ----------
    model : {"fine", "coarse"}, optional
        ``"fine"`` (the default): one lane per (partial match, candidate) task,
        stack O(k * 32) in shared memory (gMatch 4). ``"coarse"``: one warp per
        partial match, candidate sets materialised in global memory (gMatch
        2.2; STMatch/T-DFS style), for the ablation of gMatch Table 5.
    batch : bool, optional
        Warp-level batch exploration (gMatch 4.2) for the fine model. The
        default is ``True``; ``False`` gives gMatch's "Fine (naive)".
    steal : bool, optional
        Work stealing after the initial pool runs dry (fine model). The
        default is ``True``.
    pool_threshold : int, optional
        The BFS phase stops once the pool holds this many partial matches.
        The default is ``2_000_000``: gMatch uses 100,000, but on our power-law
        benchmarks a 100k pool of roots left hubs as stragglers (the pool is
        in vertex order, so heavy roots are adjacent) and 2M was 10-20x faster
        at a few tens of MB of pool.
    memory_budget_bytes : int or None, optional
        Device memory the engine may use (graph, plan arrays, pools, buffers).
        The default is ``None``, meaning 90% of the device's memory.
    graph_memory : {"device", "pinned", "hybrid", "managed"}, optional
        Where the graph's arrays live (:mod:`~warpmatch.engine.gpu.memory`):
        device memory (the default), page-locked host memory read over PCIe
        (zero-copy), the row offsets on the device and the lists pinned
        (hybrid), or unified memory. The last three hold graphs larger than
        the budget, at a cost per access.
    profile : bool, optional
        Compile kernels that count warp steps and tasks, so that
        :attr:`last_stats` reports the idle-lane rate (gMatch 2.3). The
        default is ``False``.
    device : int, optional
        CUDA device ordinal. The default is ``0``.
    time_limit_s : float or None, optional
        Stop the search after this many seconds (the kernels read the device
        clock) and raise :class:`TimeoutError`. The default is ``None``: no limit.
    list_rows : int or None, optional
        Rows of the device buffer that list mode drains to the host. The
        default is ``None``, meaning ``4 * batch_size`` within [2**16, 2**22],
        and within half the budget's room left (at least 1024 rows).
    fetch : int or None, optional
        Pool items a warp takes per atomic fetch (1..32). The default is
        ``None``: with stealing ``pool / (8 * warps)`` clipped to 1..32 (a full
        first stack level, so few lanes idle at its end; stealing spreads heavy
        items that arrive together), without stealing ``pool / (256 * warps)``
        clipped to 1..4 (heavy items must not travel together).
    compile : {"auto", "specialised", "generic"} or None, optional
        Which module a search runs (:mod:`.modules`): ``"auto"`` the plan's
        specialised module where it was compiled before, else the generic one
        (compiled once per query size, :mod:`.render_generic`; with
        ``$WARPMATCH_GPU_BACKGROUND_COMPILE=1`` the specialised one then compiles
        in a background process for the next search of the same structure);
        ``"specialised"`` always the plan's own (NVRTC seconds for a new
        structure, the fastest search); ``"generic"`` never compiles per plan.
        The default is ``None``: ``$WARPMATCH_GPU_COMPILE``, else ``"auto"``.
    launches : {"sliced", "pool"}, optional
        How a count's DFS launches divide the pool (:meth:`.run.Run.count_dfs`):
        ``"sliced"`` (the default), slices growing from 4,096 rows; ``"pool"``
        (fine model), each launch takes the rest of the pool and stops taking
        rows after :data:`.run.LAUNCH_S`, so a short search is one launch. ``"pool"``
        is for many short searches (a cluster's shards, where it cut the GPU
        seconds by 11-18% on an H200); one long search was slower with it.
    leaf_groups : {"twins", "alike", "all", "none"}, bool or None, optional
        Which groups of bare leaves at the end of the plan count mode counts instead of
        enumerating them (:func:`.render.leaf_first`): ``"alike"`` the leaves of one
        vertex (a star's), from its list size; ``"twins"`` (the default, or ``True``) also
        twins (:func:`warpmatch.plan.leaves.twin_group`, with a label, edge labels or a
        candidate set too), from one intersection of their lists, the whole warp on it,
        and two or three independent last vertices (:func:`.render.indep_leaves`, the
        whole warp scanning their sets; not where ``$WARPMATCH_INDEPENDENT`` is ``0``);
        ``"all"`` also two or three bare leaves of different vertices, from their
        lists' sizes and intersections (slower than enumerating them on an H100:
        :data:`.render.LEAF_GROUPS`); ``"none"`` (or ``False``) none, for A/B runs.
        ``None`` (the default): ``$WARPMATCH_GPU_LEAF_GROUPS`` if set, else ``"twins"``.

    Attributes
    ----------
    last_stats : dict
        Facts about the last ``count``/``match`` call: pool depth and size,
        warps, stack bytes per warp, compile and search seconds, steals, and
        (``profile=True``) steps, tasks and ``idle_rate``.

    Examples
    --------
    >>> eng = GpuEngine()
    >>> ok, why = eng.available()     # (False, "CuPy is not installed ...") on a CPU box
    """

    name = "gpu"

    def __init__(self, model: str = "fine", batch: bool = True, steal: bool = True,
                 pool_threshold: int = 2_000_000, memory_budget_bytes: int | None = None,
                 profile: bool = False, device: int = 0, time_limit_s: float | None = None,
                 list_rows: int | None = None, fetch: int | None = None,
                 graph_memory: str = "device", compile: str | None = None,
                 launches: str = "sliced", leaf_groups: bool | str | None = None) -> None:
        if model not in ("fine", "coarse"):
            raise ValueError(f"model must be 'fine' or 'coarse', got {model!r}")
        mode = default_mode() if compile is None else str(compile)
        if mode not in COMPILE_MODES:
            raise ValueError(f"compile must be one of {COMPILE_MODES}, got {compile!r}")
        self.compile = mode
        if leaf_groups is None:
            # the environment's choice reaches engines the API makes (A/B benchmarks)
            leaf_groups = os.environ.get("WARPMATCH_GPU_LEAF_GROUPS", "").strip() or True
        self.leaf_groups = leaf_groups_mode(leaf_groups)
        if graph_memory not in MEMORY_KINDS:
            raise ValueError(f"graph_memory must be one of {MEMORY_KINDS}, got {graph_memory!r}")
        self.graph_memory = graph_memory
        if pool_threshold < 1:
            raise ValueError(f"pool_threshold must be positive, got {pool_threshold}")
        if launches not in LAUNCH_MODES:
            raise ValueError(f"launches must be one of {LAUNCH_MODES}, got {launches!r}")
        self.launches = launches
        self.model = model
        self.batch = bool(batch)
        self.steal = bool(steal) and model == "fine"
        self.pool_threshold = int(pool_threshold)
        self.memory_budget_bytes = memory_budget_bytes
        self.profile = bool(profile)
        self.device = int(device)
        self.time_limit_s = time_limit_s
        self.list_rows = list_rows
        self.fetch = fetch
        self.last_stats: dict[str, Any] = {}

    # ------------------------------------------------------------ protocol
    def available(self) -> tuple[bool, str]:
        """``(True, "")`` if CuPy and a CUDA device are present, else ``(False, reason)``."""
        return cuda_available(self.device)

    def count(self, graph: Graph, plan: Plan, progress: Progress | None = None,
              stop: Stop | None = None) -> int:
        """Number of raw matches of ``plan`` in ``graph`` (not multiplied).

        Parameters
        ----------
        graph : Graph
            The data graph (int32 vertex ids).
        plan : Plan
            The plan, built for ``graph``.
        progress : callable, optional
            Called with (pool items done, pool items) between launches.
        stop : callable, optional
            Called with the raw count so far between launches, and while a launch
            runs (every 0.1-2 ms, with the count before it); True ends the count there
            (a lower bound; a launch stopped midway counts nothing). The default is
            ``None``.

        Returns
        -------
        int
        """
        with SEARCH_LOCK:
            return self._count(graph, plan, progress, stop)

    def _count(self, graph: Graph, plan: Plan, progress: Progress | None,
               stop: Stop | None) -> int:
        # the stop is asked before the search and after its module is ready too: a count
        # raced beside the CPU engine (engine.race.count_beside) may have been answered
        # while it waited for the device or compiled, and must not take the device then
        if stop is not None and stop(0):
            self.last_stats = {"stopped_before_start": True}
            return 0
        run = Run(self, graph, plan, list_mode=False)
        if run.trivially_empty:
            return 0
        if stop is not None and stop(0):
            run.finish()
            return 0
        pool, d = run.initial_pool()
        if d == plan.k or pool.shape[0] == 0:
            run.finish()
            return int(pool.shape[0])
        if d == run.leaf_d < plan.k:
            total = run.count_leaves(pool)
            run.finish()
            return total
        total = run.count_dfs(pool, d, progress, stop)
        run.finish()
        return total

    def busy(self) -> bool:
        """Whether another thread's search holds the device (:data:`SEARCH_LOCK`): a count
        left running by an answered race, still compiling its module."""
        if SEARCH_LOCK.acquire(blocking=False):
            SEARCH_LOCK.release()
            return False
        return True

    def match(self, graph: Graph, plan: Plan, batch_size: int = 1 << 16,
              limit: int | None = None,
              progress: Progress | None = None) -> Iterator[np.ndarray]:
        """Yield raw matches as (rows × k) int32 arrays in depth order.

        Parameters
        ----------
        graph : Graph
            The data graph.
        plan : Plan
            The plan, built for ``graph``.
        batch_size : int, optional
            Most rows per yielded array. The default is ``65536``.
        limit : int or None, optional
            Stop after this many rows. The default is ``None``: all.
        progress : callable, optional
            Called with (pool items done, pool items) between slices.

        Yields
        ------
        numpy.ndarray
            int32 arrays of shape (rows, k); device memory stays bounded by
            the list buffer, whatever the number of matches.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        # a count left running by a race ends first (the lock is not held while the
        # caller consumes the rows)
        with SEARCH_LOCK:
            run = Run(self, graph, plan, list_mode=True, batch_size=batch_size)
        if run.trivially_empty or (limit is not None and limit <= 0):
            return
        left = math.inf if limit is None else int(limit)
        pool, d = run.initial_pool()
        if d == plan.k:   # the BFS phase already reached full matches
            source: Iterator[np.ndarray] = (pool[i:i + batch_size].get()
                                            for i in range(0, int(pool.shape[0]), batch_size))
        else:
            source = run.list_dfs(pool, d, progress)
        for rows in source:
            for i in range(0, int(rows.shape[0]), batch_size):
                chunk = rows[i:i + batch_size]
                if chunk.shape[0] > left:
                    chunk = chunk[:int(left)]
                left -= chunk.shape[0]
                if chunk.shape[0]:
                    yield np.ascontiguousarray(chunk, dtype=np.int32)
                if left <= 0:
                    run.finish()
                    return
        run.finish()


