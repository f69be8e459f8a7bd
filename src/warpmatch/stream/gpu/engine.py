"""The GPU delta engine: GCSM's incremental matching with a host-resident graph.

Map: :class:`GpuDeltaEngine` (here: options, filters, the entry points) <
:class:`._device._DeviceState` (device buffers across batches, one batch's run)
< its cache steps (:mod:`._device_cache`), the compiled modules and packed plans
(:mod:`._modules`), host memory and staging (:mod:`._hostmem`); the row
selection's data structures in :mod:`.cache`, GCSM's walks in :mod:`.walk`.

Implements Wei & Jiang, "GCSM: GPU-Accelerated Continuous Subgraph Matching
for Large Graphs" (§III workflow, §IV frequency estimation, §V-B DCSR cache,
§V-C matching kernel) on CuPy + NVRTC:

1. The dynamic graph's storage arrays stay in host memory, pinned and mapped
   into the device's address space (zero-copy, §II-C): either allocated pinned
   by :func:`pinned_allocator` (passed to
   :class:`~warpmatch.stream.dynamic.DynamicGraph`), or registered with
   ``cudaHostRegister`` here whenever a storage array object changes.
2. Per batch, a cache policy scores vertices — ``"random-walk"``: GCSM's
   estimate of each row's reads (eq. 3), by default from a random sample of
   the batch's execution forest run by the delta kernel itself on the device
   (``estimator="gpu"``, kernels/delta.cu "Sampling"), or from GCSM's
   binomial-merged random walks on the host cores (``estimator="cpu"``,
   :mod:`.walk`); ``"degree"``: GCSM's degree-based baseline; ``"none"``: no
   cache (zero-copy only); ``"device"``: the whole storage mirrored in device
   memory — and the best rows within ``cache_bytes`` are packed in DCSR
   (:mod:`.cache`): selected and gathered on the device from the mapped host
   storage. ``"auto"`` (the default) mirrors the graph
   when it fits on the device and uses the random-walk cache when it does not.
   Every policy keeps the *row index* (start and length of each
   storage row, 12 bytes a vertex) on the device, so only a row's entries
   are read through PCIe.
3. The batch's overlay (timestamped rows of the touched vertices) and the
   updates go to the device by DMA: the overlay straight from the dynamic
   graph's pinned buffers, the small arrays in one copy from a pinned staging
   buffer; ``kernels/delta.cu`` runs every task (update,
   delta plan), cut into sub-tasks of 32 depth-2 candidates (with ``split``, as
   few as one when the batch's work is small, so that one update fills the device),
   with one warp per sub-task and gMatch's fine-grained lanes, reading
   a row from the overlay if the vertex is touched, else from the cache, else
   from host memory. A binary search for an edge reads the shorter of the two
   rows when both are in the same memory, else the cheaper search (a probe of
   host memory counts 8 device probes), so cached rows also serve the
   searches of their short partners.
4. Counts are added per update; listing runs the kernel a second time into a
   buffer sized by the counts (rows grouped by update, in chunks that fit).

Counters per batch (:attr:`GpuDeltaEngine.stats`): bytes read from host
memory by zero-copy, from the cache and from the overlay, rows read from each,
the cache hit rate, and the time of each step.

What differs from GCSM: a counting batch that the host's sequential path
answers sooner (a few updates: the device's fixed cost per batch is milliseconds)
is counted there, on the same host stores (``sequential=True``, chosen per batch by
measured time: :mod:`warpmatch.stream._route`), and the device refreshes the rows
those runs rewrote (:mod:`warpmatch.stream._editlog`); matching follows per-update
states instead of GCSM's N/N' lists (see :mod:`warpmatch.stream.types`); the cache
never holds a touched row, so DCSR needs one offset per row (:mod:`.cache`); the degree
policy keeps its selection across batches (degrees drift slowly); a cache whose
selection stays is kept, the rows the last batch rewrote copied again into their
slots, which have some slack for it (:func:`.cache.row_capacity`), and a new
cache copies the rows the previous one holds on the device and reads only the
others from host memory; rows are chosen by
estimated reads per cached byte rather than by reads, and a search between
two uncached rows counts for both (either one, cached, would usually serve it); the
plan's last level is not walked but credited by look-ahead from the level above
(:mod:`.walk`, kernels/delta.cu "Sampling"): it holds most of the host reads,
of rows next to the batch's endpoints that a sample misses; the default
estimator samples on the GPU (each deeper partial match continues with a fixed
probability instead of GCSM's ``1/D``) because GCSM's walks on the host cost
more than the kernel they speed up (measured on an H100 with 16 host cores;
``bench/stream.py``), and it is skipped for batches where it would not pay
(``estimate_share``); budget the estimate leaves unused is filled with the
degree policy's rows (``estimate_fill``); the CPU walks are capped at one per root
(:func:`.walk.default_walks`) and run on all cores; the row index lives on the
device.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable

import numpy as np

from ...engine.gpu.device import cuda_available
from ...errors import BackendUnavailableError
from ..filter import NlfFilter
from ..types import BatchView, DeltaPlans, RawDelta
from .cache import POLICIES
from ._device import _DeviceState
from ._hostmem import pinned_allocator

__all__ = ["GpuDeltaEngine", "pinned_allocator"]


class GpuDeltaEngine:
    """Per-update incremental matching on a GPU with a host-resident graph (GCSM).

    Parameters
    ----------
    cache : {"auto", "random-walk", "degree", "none", "device"}, optional
        Which rows are cached on the device per batch (module docstring). The
        default is ``"auto"``: the whole storage on the device (``"device"``)
        when it fits in half of the free device memory, else ``"random-walk"``
        (GCSM's setting: a graph larger than the device).
    cache_bytes : int or None, optional
        Device bytes for cached rows. The default is ``None``, meaning
        ``cache_fraction`` of the storage's bytes.
    cache_fraction : float, optional
        Cache size as a fraction of the graph's adjacency bytes when
        ``cache_bytes`` is ``None``. The default is ``0.1``.
    estimator : {"gpu", "cpu"}, optional
        Where policy ``"random-walk"`` estimates the batch's row reads.
        ``"gpu"`` (the default): the delta kernel's sampling mode runs a random
        part of the batch's execution forest on the device (a sub-task with
        probability ``sample_rate``, every deeper partial match with probability
        ``continue_rate``; Horvitz-Thompson weights as in GCSM's eq. 3), the
        last level credited by look-ahead instead of run (kernels/delta.cu
        "Sampling"), and the rows are selected and gathered on the device.
        ``"cpu"``: GCSM's binomial-merged walks on the host cores
        (:mod:`.walk`), rows then selected and gathered on the device too.
    sample_rate : float, optional
        ``"gpu"`` estimator: probability that a sub-task (up to 32 of a task's
        depth-2 candidates) is sampled. The default is ``1``: the levels above the last
        read only the overlay for 4-vertex queries, and the rows that matter
        are each read in few batches, so a sample of them misses most.
    continue_rate : float, optional
        ``"gpu"`` estimator: probability that a sampled partial match is
        extended further (into the last level: its candidates are credited, not
        searched). The default is ``1/16``.
    estimate_decay : float, optional
        ``"gpu"`` estimator: weight of the previous batches' estimate in this
        batch's (an exponential average; ``0`` uses this batch's sample alone).
        The default is ``0``: most rows a batch reads are next to its own
        endpoints, so past batches' credits mostly crowd them out of the cache.
    estimate_share : float or None, optional
        ``"gpu"`` estimator: when the cache a batch selects is mostly the last
        one's (it would have held at least half of the new sample's credits),
        the estimate (sampling and row selection) may cost at most this share of
        the counting kernel's time, on average: the next batches keep the
        cache's rows, refreshing those the stream rewrote, and sample again after
        as many batches as it takes to amortise it (at most 16). When it is not
        (the rows a batch reads are mostly next to its own endpoints, as for the
        4-cycle on a power-law graph), every batch is sampled while the estimate
        costs at most 40% of the kernel (``FRESH_COST``): one batch of 4096
        with kept rows ran 3x slower than the sampled ones there (10^7 edges,
        bench/stream.py on an H100). A sample that finds no row worth caching
        (triangles, whose reads the overlay serves) is repeated after 16
        batches. ``None`` samples every batch, as GCSM estimates every batch.
        The default is ``0.1``.
    estimate_fill : bool, optional
        Policy ``"random-walk"``: when the estimated rows leave part of the
        cache's budget unused (a sample credits only the rows it reached: on a
        10^7-edge power-law graph the diamond's filled 1-3.5 MiB of a 9.6 MiB
        cache), the rest goes to the rows the degree policy would cache. Not
        when the estimate credits no row at all (triangles: the overlay serves
        every read). The default is ``True``.
    walks : int or None, optional
        ``"cpu"`` estimator: random walks per batch (``M``). The default is
        ``None``: GCSM's ``|ΔE| D^(n-2) / 32^n``, clipped
        (:func:`.walk.default_walks`).
    seed : int, optional
        Seed of the random walks and samples. The default is ``0``.
    warps_per_block : int, optional
        The default is ``4``.
    list_rows : int, optional
        Most match rows held on the device at once when listing. The default
        is ``1 << 22``.
    profile : bool, optional
        Count the row reads of every vertex on the device (slower); the counts
        of the last batch are in :attr:`last_access`. The default is ``False``.
    device : int, optional
        CUDA device ordinal. The default is ``0``.
    pinned : bool, optional
        Offer :func:`pinned_allocator` as :attr:`allocator`, so that the
        matcher builds the dynamic graph in pinned memory (no registration).
        The default is ``True``.
    sequential : bool, optional
        Let :class:`~warpmatch.stream.matcher.ContinuousMatcher` count a batch on
        the host's sequential path (:mod:`warpmatch.stream.sequential`, one
        thread, the same stores) when that is measured faster for a batch of its
        size than the device (:mod:`warpmatch.stream._route`): a few updates
        cost tens of µs there against milliseconds of fixed cost per GPU batch.
        The default is ``True``; ``False`` runs every batch on the device.
    specialise : {"auto", "always", "never"} or None, optional
        The sequential path's compiled delta plans, as for
        :class:`~warpmatch.stream.cpu.CpuDeltaEngine`. The default is ``None``.
    split : bool or None, optional
        For queries of four or more vertices, cut the tasks' depth-2 lists into
        sub-tasks as small as one candidate when the batch's lists are short in all
        (about 256 sub-tasks per multiprocessor; kernels/delta.cu "Work"), so that
        a small batch occupies the whole device; ``False`` keeps sub-tasks of 32
        candidates. The default is ``None``: the environment variable
        ``WARPMATCH_GPU_DELTA_SPLIT`` (``1`` turns it on), else ``False``: it
        has not yet run on a GPU, so it stays off until measured.

    Attributes
    ----------
    stats : dict
        Facts about the last batch: ``host_bytes`` (zero-copy reads),
        ``cache_bytes_read``, ``overlay_bytes``, ``rows_host``, ``rows_cache``,
        ``rows_overlay``, ``cache_hit_rate``, ``cached_rows``,
        ``cache_device_bytes``, ``copy_bytes``, ``sample_host_bytes`` (the
        ``"gpu"`` estimator's zero-copy reads), ``gather_bytes`` (cache rows
        gathered or refreshed from host memory by policies "random-walk" and
        "degree"), ``cache_dropped`` (cached vertices whose rows outgrew their
        slot since the cache was built), and the seconds of each step
        (``estimate_s`` includes the sampling kernel, ``sample_s`` alone;
        ``kernel_s`` is the counting pass's device time, from CUDA events; the
        others are host times).
    totals : dict
        The same counters summed over every batch since :meth:`attach`.
    split_target : int or None
        With ``split``: the sub-tasks a batch is cut into, about (``None``: 256 per
        multiprocessor).
    last_cached : numpy.ndarray
        Vertices whose rows the last batch had in the cache.
    last_access : numpy.ndarray or None
        With ``profile=True``: row reads per vertex in the last batch.
    last_updates : numpy.ndarray or None
        The updates of the last batch that the candidate filter let through to the
        kernel (``None``: every valid update, for plans without a query).
    last_masks : numpy.ndarray or None
        The candidate filter's masks the last batch's kernel tested (``None``: no
        filter); a view of the filter's state, valid until the next batch.
    host : CpuDeltaEngine or None
        With ``sequential=True``: the one-thread CPU engine whose sequential
        path counts the batches routed to the host (it shares the candidate
        filters with this engine).

    Examples
    --------
    >>> eng = GpuDeltaEngine(cache="random-walk", cache_fraction=0.05, sample_rate=0.1)
    >>> eng.available()[0] in (True, False)
    True
    """

    name = "gpu"

    def __init__(self, cache: str = "auto", cache_bytes: int | None = None,
                 cache_fraction: float = 0.1, estimator: str = "gpu",
                 sample_rate: float = 1.0, continue_rate: float = 1 / 16,
                 estimate_decay: float = 0.0, estimate_share: float | None = 0.1,
                 estimate_fill: bool = True, walks: int | None = None, seed: int = 0,
                 warps_per_block: int = 4, list_rows: int = 1 << 22, profile: bool = False,
                 device: int = 0, pinned: bool = True, sequential: bool = True,
                 specialise: str | None = None, split: bool | None = None) -> None:
        if cache != "auto" and cache not in POLICIES:
            raise ValueError(f"cache must be 'auto' or one of {', '.join(POLICIES)}; "
                             f"got {cache!r}")
        if cache_bytes is not None and int(cache_bytes) < 0:
            raise ValueError(f"cache_bytes must be >= 0, got {cache_bytes}")
        if not 0.0 <= float(cache_fraction) <= 1.0:
            raise ValueError(f"cache_fraction must be in [0, 1], got {cache_fraction}")
        if estimator not in ("gpu", "cpu"):
            raise ValueError(f"estimator must be 'gpu' or 'cpu', got {estimator!r}")
        for nm, v in (("sample_rate", sample_rate), ("continue_rate", continue_rate)):
            if not 0.0 < float(v) <= 1.0:
                raise ValueError(f"{nm} must be in (0, 1], got {v}")
        if not 0.0 <= float(estimate_decay) < 1.0:
            raise ValueError(f"estimate_decay must be in [0, 1), got {estimate_decay}")
        if estimate_share is not None and not float(estimate_share) > 0.0:
            raise ValueError(f"estimate_share must be > 0 or None, got {estimate_share}")
        if not 1 <= int(warps_per_block) <= 32:
            raise ValueError(f"warps_per_block must be in 1..32, got {warps_per_block}")
        self.cache = cache
        self.cache_bytes = None if cache_bytes is None else int(cache_bytes)
        self.cache_fraction = float(cache_fraction)
        self.estimator = estimator
        self.sample_rate = float(sample_rate)
        self.continue_rate = float(continue_rate)
        self.estimate_decay = float(estimate_decay)
        self.estimate_share = None if estimate_share is None else float(estimate_share)
        self.estimate_fill = bool(estimate_fill)
        self.walks = walks
        self.seed = int(seed)
        self.warps_per_block = int(warps_per_block)
        self.list_rows = max(1, int(list_rows))
        self.profile = bool(profile)
        self.device = int(device)
        self.pinned = bool(pinned)
        if split is None:
            # the environment's choice reaches engines the matcher makes (A/B benchmarks)
            split = os.environ.get("WARPMATCH_GPU_DELTA_SPLIT", "0").strip() == "1"
        self.split = bool(split)
        self.split_target: int | None = None
        self.graph: Any = None
        self.stats: dict[str, Any] = {}
        self.totals: dict[str, float] = {}
        self._cached: Any = np.zeros(0, dtype=np.int32)   # numpy or device array
        self.last_access: np.ndarray | None = None
        self.last_updates: np.ndarray | None = None
        self.last_masks: np.ndarray | None = None
        self._dev: _DeviceState | None = None
        self._batches = 0
        self._flat: dict[int, tuple[DeltaPlans, DeltaPlans]] = {}
        self.sequential = bool(sequential)
        self.host: Any = None
        self._filters: dict[int, tuple[Any, NlfFilter]] = {}
        if self.sequential:
            from ..cpu import CpuDeltaEngine
            self.host = CpuDeltaEngine(threads=1, specialise=specialise)
            # one candidate filter per query for both: the sequential path keeps it exact
            # as it edits the stores, and the device copies the masks that changed
            self._filters = self.host._filters

    @property
    def last_cached(self) -> np.ndarray:
        """Vertices whose rows the last batch had in the cache (int32, fetched on use)."""
        if callable(self._cached):      # computed on the device on first use
            self._cached = self._cached()
        if not isinstance(self._cached, np.ndarray):
            self._cached = self._cached.get().astype(np.int32)
        return self._cached

    @last_cached.setter
    def last_cached(self, ids: Any) -> None:
        self._cached = ids

    @property
    def allocator(self) -> Callable[[int, Any], np.ndarray] | None:
        """A pinned-memory allocator for the dynamic graph's storage, or ``None``.

        ``None`` when ``pinned=False`` or no device is usable; the engine then
        registers the storage arrays itself (``cudaHostRegister``).
        """
        if not self.pinned or not self.available()[0]:
            return None
        return pinned_allocator()

    # ------------------------------------------------------------ protocol
    def available(self) -> tuple[bool, str]:
        """``(True, "")`` if CuPy and a CUDA device are present, else ``(False, reason)``."""
        return cuda_available(self.device)

    def attach(self, graph: Any) -> None:
        """Bind to a dynamic graph; device state is (re)built lazily on the next batch."""
        if self._dev is not None:
            self._dev.close()
        self.graph = graph
        self._dev = None
        self._batches = 0
        self.totals = {}
        # counting plans recompiled without groups, by the plans given (effective_plans)
        self._flat: dict[int, tuple[DeltaPlans, DeltaPlans]] = {}
        self._filters.clear()           # (the host engine's dict too: it is the same)
        if self.host is not None:
            self.host.attach(graph)

    def close(self) -> None:
        """Unregister host memory and drop device buffers."""
        if self._dev is not None:
            self._dev.close()
            self._dev = None

    def __del__(self) -> None:   # pragma: no cover - interpreter shutdown order varies
        try:
            self.close()
        except Exception:
            pass

    def run(self, view: BatchView, plans: DeltaPlans, want_matches: bool) -> RawDelta:
        """Per-update deltas of one batch (see :class:`~warpmatch.stream.types.RawDelta`).

        Parameters
        ----------
        view : BatchView
            The batch's states; its storage arrays are read from host memory.
        plans : DeltaPlans
            The delta plans; listing needs listable plans. Counting plans with
            counting groups or per-plan weights are recompiled without groups
            (this engine enumerates every depth and sums raw counts per update).
        want_matches : bool
            Also return the matches (query-vertex order, internal ids), grouped
            by update.

        Returns
        -------
        RawDelta

        Raises
        ------
        BackendUnavailableError
            No CuPy or CUDA device.
        BudgetError
            The plans or one update's matches do not fit the device.
        ValueError
            ``want_matches`` with counting plans.
        """
        ok, why = self.available()
        if not ok:
            raise BackendUnavailableError(f"backend 'gpu' is unavailable: {why}")
        if want_matches and not plans.listable:
            raise ValueError("listing needs delta plans compiled with purpose='list' or "
                             "'orbits' (every raw match one row), not counting plans")
        plans = self.effective_plans(plans)
        import cupy as cp
        cp.cuda.Device(self.device).use()
        if self._dev is None:
            self._dev = _DeviceState(cp, self)
        t0 = time.perf_counter()
        self.last_updates, filt = self._updates(view, plans)
        self.last_masks = None if filt is None else filt.mask[: view.n]
        out = self._dev.run(view, plans, want_matches, self.last_updates, filt)
        self.stats["total_s"] = time.perf_counter() - t0
        self._batches += 1
        for key, val in self.stats.items():
            if isinstance(val, (int, float)) and not isinstance(val, bool):
                self.totals[key] = self.totals.get(key, 0) + val
        self.totals["batches"] = self._batches
        return out


    def prepare(self, plans: DeltaPlans) -> None:
        """Do now, when the matcher is made, what the first batch would otherwise pay
        for once: the candidate filter of ``plans``' query on the attached graph, the
        kernel's plans (:meth:`effective_plans`), the CUDA modules, and the device
        state (row index, storage mirror or host mapping) through an empty batch."""
        if plans.query is not None and self.graph is not None:
            self._filter(plans.query).bind(self.graph)
        flat = self.effective_plans(plans)
        graph = self.graph
        if graph is None or not hasattr(graph, "prepare") or not self.available()[0]:
            return
        import cupy as cp

        from ..types import Updates
        cp.cuda.Device(self.device).use()
        if self._dev is None:
            self._dev = _DeviceState(cp, self)
        none = np.zeros(0, dtype=np.int64)
        batch = graph.prepare(Updates(none, none, np.zeros(0, np.int8), None,
                                      source="warm-up"), "skip")
        self._dev.run(graph.view(batch), flat, False, np.zeros(0, np.int32))
        graph.apply(batch)       # the device state now matches the graph's next state
        self._dev._module(int(flat.k), False)     # the counting kernel's module
        self.stats = {}

    def _filter(self, query: Any) -> NlfFilter:
        hit = self._filters.get(id(query))
        if hit is None or hit[0] is not query:
            hit = self._filters[id(query)] = (query, NlfFilter(query, bool(query.directed)))
        return hit[1]

    def _updates(self, view: BatchView, plans: DeltaPlans
                 ) -> tuple[np.ndarray | None, NlfFilter | None]:
        """The valid updates that some plan can take (the candidate filter's masks on
        their endpoints, :func:`warpmatch.stream.cpu.tasks_of`): the kernel runs every
        plan of these only, an update no plan can take costs nothing on the device.
        The filter comes back too: the kernel tests its masks at every depth."""
        if plans.query is None:
            return None, None
        from ..cpu import tasks_of
        filt = self._filter(plans.query)
        mask = filt.masks(view, self.graph)
        upd, _plan, _sign = tasks_of(view, plans, mask)
        return np.unique(upd).astype(np.int32), filt

    def effective_plans(self, plans: DeltaPlans) -> DeltaPlans:
        """The plans the kernel runs for ``plans``: themselves, or the same query's
        counting plans without groups (the kernel knows one weight per plan and no
        group counting)."""
        if plans.uniform_weight is not None:
            return plans
        hit = self._flat.get(id(plans))
        if hit is None or hit[0] is not plans:
            from ..delta import compile_delta_plans
            flat = compile_delta_plans(plans.query, mode=plans.mode, induced=plans.induced,
                                       purpose=plans.purpose, directed=plans.directed,
                                       group=False)
            hit = self._flat[id(plans)] = (plans, flat)
        return hit[1]
