"""The GPU delta engine: GCSM's incremental matching with a host-resident graph.

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
   delta plan) with one warp per task and gMatch's fine-grained lanes, reading
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

What differs from GCSM: matching follows per-update states instead of GCSM's
N/N' lists (see :mod:`warpmatch.stream.types`); the cache never holds a
touched row, so DCSR needs one offset per row (:mod:`.cache`); the degree
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

import time
from importlib import resources
from typing import Any, Callable

import numpy as np

from ..._progress import compiling
from ...engine.gpu.engine import cuda_available, resident_blocks
from ...errors import BackendUnavailableError, BudgetError
from ..filter import NlfFilter
from ..types import BatchView, DeltaPlans, RawDelta
from .cache import POLICIES, parallel_copy, row_bytes
from .walk import HOST_COST, Workspace, default_walks, estimate_access_sparse

__all__ = ["GpuDeltaEngine", "pinned_allocator"]

_MODULES: dict[tuple, Any] = {}
_SOURCE: list[str] = []
_KERNELS: dict[str, Any] = {}    # the row selection's elementwise kernels (_kernels)
_PLAN_OF: dict[int, np.ndarray] = {}   # id(module) -> the packed plans in its constant memory
#: the "gpu" estimator samples every batch whose cache goes stale within a batch while the
#: estimate costs on average at most this share of the counting kernel (_next_sample). On
#: 10^7 edges (bench/stream.py, H100) the 4-cycle's estimate cost 13-35% of its kernel and
#: paid for itself; the diamond's 48-130%, and sampling it every batch ran 0.75-0.81x no
#: cache.
FRESH_COST = 0.4
#: ints of packed delta plans in constant memory (48 KiB)
PLAN_CAP = 12288
#: counters (kernels/delta.cu)
_C_TASK, _C_B_STORE, _C_B_CACHE, _C_B_OVL, _C_R_STORE, _C_R_CACHE, _C_R_OVL = range(7)
_C_N = 8
#: cudaHostRegisterMapped
_REGISTER_MAPPED = 2
#: cudaMemoryTypeHost (page-locked host memory)
_MEMTYPE_HOST = 1


def _source() -> str:
    if not _SOURCE:
        # the warp helpers shared with the static engine (gMatch's task-pool step)
        warp = resources.files("warpmatch.engine.gpu").joinpath("kernels", "warp.cuh")
        delta = resources.files(__package__).joinpath("kernels", "delta.cu")
        _SOURCE.append(warp.read_text() + "\n" + delta.read_text())
    return _SOURCE[0]


def pinned_allocator(flags: int = 0) -> Callable[[int, Any], np.ndarray]:
    """An allocator of page-locked host arrays for :class:`DynamicGraph` storage.

    Memory from ``cudaHostAlloc`` is directly readable by the device at the
    same address under unified addressing (every 64-bit CUDA platform), so the
    GPU engine reads such storage by zero-copy without registering it.

    Parameters
    ----------
    flags : int, optional
        ``cudaHostAlloc`` flags. The default is ``0``.

    Returns
    -------
    callable
        ``alloc(count, dtype) -> numpy.ndarray`` (uninitialised, like
        :func:`numpy.empty`); the array keeps its pinned block alive.

    Raises
    ------
    BackendUnavailableError
        CuPy or a CUDA device is missing.

    Examples
    --------
    >>> dg = DynamicGraph(graph, allocator=pinned_allocator())   # doctest: +SKIP
    """
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise BackendUnavailableError(f"pinned host memory needs CuPy and a CUDA device: {exc}")

    def alloc(count: int, dtype: Any) -> np.ndarray:
        dt = np.dtype(dtype)
        count = int(count)
        mem = cp.cuda.PinnedMemory(max(count * dt.itemsize, 1), flags)
        ptr = cp.cuda.PinnedMemoryPointer(mem, 0)
        return np.frombuffer(ptr, dtype=dt, count=count)

    return alloc


def _fmt(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:.1f} {unit}" if unit != "B" else f"{int(nbytes)} B"
        nbytes /= 1024
    return f"{nbytes} B"


def _owner(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s buffer (``a`` itself when it owns it)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _page_locked(cp: Any, addr: int) -> bool:
    """Is host address ``addr`` page-locked (pinned or registered) memory?"""
    try:
        return int(cp.cuda.runtime.pointerGetAttributes(addr).type) == _MEMTYPE_HOST
    except Exception:     # not memory CUDA knows (older runtimes raise instead)
        return False


class _HostMap:
    """Device addresses of host arrays: pinned already, or registered here (mapped)."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.reg: dict[tuple[int, int], tuple[np.ndarray, int, bool]] = {}
        self.used: set[tuple[int, int]] = set()
        self.fallback_bytes = 0

    def ptr(self, a: np.ndarray) -> tuple[int, Any]:
        """``(device address, keep-alive)``; a device copy if the array cannot be mapped."""
        if a.size == 0:
            return 0, None
        if not a.flags.c_contiguous:
            dev = self.cp.asarray(np.ascontiguousarray(a))
            self.fallback_bytes += a.nbytes
            return int(dev.data.ptr), dev
        # register the whole owning buffer once: views of it (a prefix of the storage
        # arrays, say) then share one registration
        owner = _owner(a)
        if not owner.flags.c_contiguous:
            owner = a
        delta = int(a.ctypes.data) - int(owner.ctypes.data)
        dptr, alive = self._map(owner)
        return (dptr + delta if dptr else dptr), alive

    def _map(self, a: np.ndarray) -> tuple[int, Any]:
        rt = self.cp.cuda.runtime
        key = (int(a.ctypes.data), int(a.nbytes))
        self.used.add(key)
        hit = self.reg.get(key)
        if hit is not None:
            return hit[1], None
        mine = False
        try:
            if not _page_locked(self.cp, key[0]):
                rt.hostRegister(key[0], key[1], _REGISTER_MAPPED)
                mine = True
            dptr = int(rt.pointerGetAttributes(key[0]).devicePointer)
        except Exception:
            # e.g. a small array sharing a page with a registered one: copy it instead
            self.used.discard(key)
            dev = self.cp.asarray(a)
            self.fallback_bytes += a.nbytes
            return int(dev.data.ptr), dev
        self.reg[key] = (a, dptr, mine)
        return dptr, None

    def release_unused(self) -> None:
        """Unregister the arrays the last batch did not use (replaced storage)."""
        for key in list(self.reg):
            if key not in self.used:
                a, _, mine = self.reg.pop(key)
                if mine:
                    try:
                        self.cp.cuda.runtime.hostUnregister(key[0])
                    except Exception:
                        pass
        self.used = set()

    def close(self) -> None:
        self.used = set()
        self.release_unused()


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
        ``"gpu"`` estimator: probability that a sub-task (a task's 32 depth-2
        candidates) is sampled. The default is ``1``: the levels above the last
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
                 device: int = 0, pinned: bool = True) -> None:
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
        self._filters: dict[int, tuple[Any, NlfFilter]] = {}

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
        self._filters: dict[int, tuple[Any, NlfFilter]] = {}

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


def _addr(a: np.ndarray) -> int:
    """Data address of a host array (0 if empty): the identity of a storage buffer.

    Storage buffers are allocated before the ones they replace are freed
    (growth and compaction copy from the old array), so a new buffer never
    takes the address of the one it replaces; ``id()`` of the per-batch
    slices would change every batch.
    """
    return int(a.ctypes.data) if a.size else 0


class _Staging:
    """The per-batch inputs, packed in one pinned buffer and sent with one copy.

    Each array goes at a 16-byte aligned offset of one device buffer; :meth:`send`
    returns their device addresses (0 for empty arrays, which the kernel reads
    as "absent"). Arrays in page-locked memory (the dynamic graph's overlay,
    built in pinned buffers when the engine supplies the allocator) are copied
    to the device directly; the others are packed into the pinned staging
    buffer first and sent together. The staging buffer is reused: the previous
    batch's copy has completed by then, since every batch ends by reading its
    results back.
    """

    #: arrays at least this large are sent from their own memory when it is pinned
    DIRECT = 1 << 16

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.host: np.ndarray | None = None
        self._mem: Any = None
        self.dev: Any = None
        self._pinned: dict[int, bool] = {}   # owner buffer address -> page-locked?

    def _is_pinned(self, a: np.ndarray) -> bool:
        key = int(_owner(a).ctypes.data)
        hit = self._pinned.get(key)
        if hit is None:
            hit = _page_locked(self.cp, key)
            if len(self._pinned) > 64:
                self._pinned.clear()
            self._pinned[key] = hit
        return hit

    def send(self, parts: list[np.ndarray]) -> list[int]:
        cp = self.cp
        rt = cp.cuda.runtime
        # staged arrays first (one copy of a prefix of the staging buffer), then the
        # pinned ones, each copied from its own memory
        direct = [a.nbytes >= self.DIRECT and a.flags.c_contiguous and self._is_pinned(a)
                  for a in parts]
        offs = [0] * len(parts)
        pos = 0
        for want in (False, True):
            if want:
                staged = pos
            for i, a in enumerate(parts):
                if direct[i] == want:
                    offs[i] = pos
                    pos += (a.nbytes + 15) // 16 * 16
        if self.host is None or self.host.size < max(staged, 16):
            cap = max(staged, 16, int(1.5 * (0 if self.host is None else self.host.size)))
            self._mem = cp.cuda.alloc_pinned_memory(cap)
            self.host = np.frombuffer(self._mem, dtype=np.uint8, count=cap)
        if self.dev is None or self.dev.size < max(pos, 16):
            self.dev = cp.empty(max(pos, 16, int(1.5 * (0 if self.dev is None
                                                       else self.dev.size))), dtype=cp.uint8)
        stream = cp.cuda.get_current_stream()
        dev0 = int(self.dev.data.ptr)
        for a, o, d in zip(parts, offs, direct):
            if a.nbytes and not d:
                parallel_copy(self.host[o:o + a.nbytes],
                              np.ascontiguousarray(a).view(np.uint8).reshape(-1))
        if staged:
            rt.memcpyAsync(dev0, int(self.host.ctypes.data), staged, rt.memcpyHostToDevice,
                           stream.ptr)
        for a, o, d in zip(parts, offs, direct):
            if d:
                rt.memcpyAsync(dev0 + o, int(a.ctypes.data), a.nbytes, rt.memcpyHostToDevice,
                               stream.ptr)
        return [dev0 + o if a.nbytes else 0 for a, o in zip(parts, offs)]

    def array(self, ptr: int, n: int, dtype: Any) -> Any:
        """A device array over ``n`` elements sent at address ``ptr``."""
        cp = self.cp
        if n == 0:
            return cp.empty(0, dtype=dtype)
        off = ptr - int(self.dev.data.ptr)
        return cp.ndarray((n,), dtype=dtype, memptr=self.dev.data + off)


class _DeviceState:
    """Device buffers that live across batches, and one batch's execution.

    Kept on the device across batches, refreshed incrementally where the last
    batch changed them (the rows it touched, the vertices it added): the
    overlay map ``o_idx``, the cache's slot map, vertex labels, the *row index*
    (``start``, ``degree`` of every storage row; O(n), so that finding a row
    costs no host round trip, only reading its entries does) and, for policy
    ``"device"``, a mirror of the storage's entries. "Incrementally" is safe
    only when the storage has changed by exactly the last batch: the engine
    checks the dynamic graph's state counter and the storage buffers'
    addresses, and refreshes everything otherwise (or without a graph).
    """

    def __init__(self, cp: Any, eng: GpuDeltaEngine) -> None:
        self.cp = cp
        self.eng = eng
        self.hostmap = _HostMap(cp)
        self.staging = _Staging(cp)
        # compile (or load) the parallel staging copy now, not inside the first large batch
        parallel_copy(np.empty(1 << 21, np.uint8), np.zeros(1 << 21, np.uint8))
        props = cp.cuda.runtime.getDeviceProperties(eng.device)
        self.sms = int(props["multiProcessorCount"])
        self.dummy = cp.zeros(2, dtype=cp.int64)
        self.n_dev = 0                       # vertices covered by o_idx/slot buffers
        self.oidx = [None, None]
        self.slot = [None, None]
        self.vlab = None
        self.vlab_n = 0
        self.prev_touched: list[np.ndarray] = [np.zeros(0, np.int64), np.zeros(0, np.int64)]
        # the cached vertices per direction (device int32 arrays, None: no cache)
        self.prev_slots: list[Any] = [None, None]
        # degree policy: persistent selection (device ids); "gpu" estimator: its estimate
        self.deg_sel: Any = None
        self.deg_order: Any = None           # its degree order (_by_degree)
        self.deg_key: tuple | None = None
        self.est: Any = None                 # float32 estimated row reads per vertex
        self.rw_sel: Any = None              # the "gpu" estimator's last selection
        self.built_sel: Any = None           # the selection the cache was built from
        self.dropped = 0                     # its slots dropped since (outgrown rows)
        self.refresh_counts: Any = None      # this batch's wm_refresh_rows counts
        self.refresh_pending = 0             # host entries refreshed, not yet reported
        self.sample_wait = 0                 # batches to go before the next sample
        self.kept_share = 0.0                # see _kept_share and _next_sample
        self.estimate_cost: float | None = None   # estimate / kernel time, averaged
        self.batch_size = 0                  # updates in the last batch
        self.launched: set[int] = set()      # ids of the count modules run by this state
        self.cache_arrays: list[Any] = []
        self.budget_key: tuple | None = None
        self.budget_val = 0
        self.ws = Workspace()
        # row index (all policies) and storage mirror (policy "device")
        self.ix: list[tuple[Any, Any]] = []
        self.ix_key: tuple | None = None
        self.ix_n = 0
        self.changed_dev: list[Any] = [None, None]   # self.changed on the device (int32)
        self.mirror: dict[str, Any] = {}
        self.mirror_key: tuple | None = None
        self.state: int | None = None        # the dynamic graph's state at the last batch
        self.last_batch: Any = None          # the last batch run (InternalBatch)
        self.policy: str | None = None       # "auto" resolved
        self.policy_key: tuple | None = None
        self.dmax = 1
        self.walk_rate = 0.0                 # random walks per second (last estimate)
        self.kernel_s = 0.0                  # the last batch's kernel time
        self.res: Any = None                 # counters + per-update plus/minus
        self.events = (cp.cuda.Event(), cp.cuda.Event())   # the counting pass's timing
        self.full_blocks: dict[Any, int] = {}   # resident blocks per kernel (_blocks)
        self.plans_of: Any = None            # the plans packed in plan_buf
        self.qm: Any = None                  # candidate filter masks (_qmask)
        self.qm_owner: Any = None
        self.qm_calls = -1
        self.plan_buf = np.zeros(0, np.int32)

    def close(self) -> None:
        self.hostmap.close()

    # --------------------------------------------------------------- helpers
    def _module(self, k: int, list_mode: bool, sample: bool = False) -> Any:
        eng = self.eng
        profile = eng.profile and not sample
        key = (k, list_mode, profile, sample, eng.warps_per_block, eng.device)
        mod = _MODULES.get(key)
        if mod is None:
            t = time.perf_counter()
            defines = "\n".join([f"#define WM_K {k}", f"#define WM_WARPS {eng.warps_per_block}",
                                 f"#define WM_LIST {int(list_mode)}",
                                 f"#define WM_PROFILE {int(profile)}",
                                 f"#define WM_SAMPLE {int(sample)}",
                                 f"#define WM_HOST_COST {HOST_COST}",
                                 f"#define WM_PLAN_CAP {PLAN_CAP}"])
            mod = self.cp.RawModule(code=defines + "\n" + _source(), options=("-std=c++17",))
            with compiling():         # the CLI's first-use notice (NVRTC is not numba)
                mod.compile()
            eng.stats["compile_s"] = eng.stats.get("compile_s", 0.0) + time.perf_counter() - t
            _MODULES[key] = mod
        return mod

    def _grow(self, n: int) -> None:
        """Vertex-indexed device arrays cover ``n`` vertices (-1 = untouched / uncached)."""
        cp = self.cp
        if n <= self.n_dev:
            return
        cap = max(n, int(self.n_dev * 1.5), 1024)
        for arrs in (self.oidx, self.slot):
            for d in range(2):
                new = cp.full(cap, -1, dtype=cp.int32)
                if arrs[d] is not None:
                    new[: self.n_dev] = arrs[d][: self.n_dev]
                arrs[d] = new
        self.n_dev = cap

    def _qmask(self, filt: NlfFilter | None, n: int) -> int:
        """Device copy of the candidate filter's masks (its address; 0: no filter).

        Kept across batches: a batch sends only the vertices whose masks changed
        since the copy (:attr:`NlfFilter.changed`), everything after a rebuild or
        when the copy missed a call."""
        if filt is None:
            return 0
        cp = self.cp
        host = filt.mask
        if (self.qm is None or self.qm_owner is not filt or filt.changed is None
                or self.qm_calls != filt.calls - 1 or self.qm.size < n):
            if self.qm is None or self.qm.size < n:
                self.qm = cp.empty(max(n, int(n * 1.25), 64), dtype=cp.uint64)
            self.qm[:n].set(np.ascontiguousarray(host[:n]))
        elif filt.changed.size:
            ids = filt.changed[filt.changed < n]
            self.qm[cp.asarray(ids)] = cp.asarray(host[ids])
        self.qm_owner, self.qm_calls = filt, filt.calls
        return int(self.qm.data.ptr)

    def _vlab(self, view: BatchView) -> int:
        """Device vertex labels (labels never change: only new vertices are copied)."""
        cp = self.cp
        vl = view.vlabel
        if vl.size == 0:
            return 0
        n = int(vl.shape[0])
        if self.vlab is None or self.vlab.size < n or not self.incremental:
            new = cp.empty(max(n, int(n * 1.25)), dtype=cp.int32)
            if self.vlab is not None and self.vlab_n and self.incremental:
                new[: self.vlab_n] = self.vlab[: self.vlab_n]
            else:
                self.vlab_n = 0
            self.vlab = new
        if n > self.vlab_n:
            self.vlab[self.vlab_n:n] = cp.asarray(np.ascontiguousarray(vl[self.vlab_n:n],
                                                                       dtype=np.int32))
            self.vlab_n = n
        return int(self.vlab.data.ptr)

    @staticmethod
    def _touched(view: BatchView) -> list[np.ndarray]:
        """Vertices with an overlay row, per direction (the batch's endpoints)."""
        out = np.asarray(view.o_rows, dtype=np.int64)
        return [out, np.asarray(view.oi_rows, dtype=np.int64) if view.directed else out]

    @staticmethod
    def _sources(view: BatchView) -> list[tuple[np.ndarray, ...]]:
        return [(view.b_start, view.b_deg, view.b_nbr, view.b_elab),
                (view.bi_start, view.bi_deg, view.bi_nbr, view.bi_elab)]

    def _storage_key(self, view: BatchView) -> tuple:
        dirs = 2 if view.directed else 1
        return tuple((_addr(s), _addr(dg), _addr(nb), int(nb.shape[0]), _addr(lb))
                     for s, dg, nb, lb in self._sources(view)[:dirs])

    def _storage_bytes(self, view: BatchView) -> int:
        """Device bytes of caching every row (so ``cache_fraction=1`` holds the graph)."""
        labeled = view.b_elab.size > 0
        dirs = 2 if view.directed else 1
        b = 0
        for s, dg, _, _ in self._sources(view)[:dirs]:
            m = min(view.n, dg.shape[0])
            b += int(row_bytes(np.asarray(dg[:m]), labeled).sum())
        return b

    def _resolve_policy(self, view: BatchView, key: tuple) -> str:
        """``"auto"``: the whole storage on the device when it fits in half of the free
        device memory, else GCSM's random-walk cache (re-decided when the storage grows)."""
        if self.eng.cache != "auto":
            return self.eng.cache
        if self.policy is None or key != self.policy_key:
            free = int(self.cp.cuda.runtime.memGetInfo()[0])
            dirs = 2 if view.directed else 1
            need = sum(int(nb.nbytes) + int(lb.nbytes) + 12 * int(s.shape[0])
                       for s, _, nb, lb in self._sources(view)[:dirs])
            need += int(sum(m.nbytes for m in self.mirror.values() if m is not None))
            self.policy = "device" if need <= free // 2 else "random-walk"
            self.policy_key = key
        return self.policy

    def _blocks(self, fn: Any, T: int | None) -> int:
        """One warp per task, at most as many blocks as are resident at once
        (``T`` None: tasks not known on the host, as many as are resident)."""
        wpb = self.eng.warps_per_block
        # keyed by the CUfunction handle, which lives as long as its module (all cached)
        key = getattr(getattr(fn, "kernel", None), "ptr", None)
        full = self.full_blocks.get(key) if key is not None else None
        if full is None:
            full = resident_blocks(self.cp, fn, wpb * 32, self.sms)
            if key is not None:
                self.full_blocks[key] = full
        if T is None:
            return full
        return max(1, min(full, (max(1, T) + wpb - 1) // wpb))

    # ------------------------------------------------------------ refreshing
    def _changed_rows(self, view: BatchView, dirs: int) -> list[np.ndarray]:
        """Storage rows per direction that changed since the last batch: the rows it
        touched (apply() rewrote them) and the vertices added since."""
        out = []
        for d in range(dirs):
            rows = self.prev_touched[d]
            if view.n > self.ix_n:
                rows = np.union1d(rows, np.arange(self.ix_n, view.n, dtype=np.int64))
            out.append(rows[rows < view.n])
        return out

    def _index_parts(self, view: BatchView, dirs: int
                     ) -> tuple[int, list[np.ndarray] | None]:
        """The rows of the row index (vertices with a storage row) and its changed
        entries (rows, start, degree per direction), sent with the batch's other inputs
        (:meth:`_index`), or ``None`` when the index is rebuilt whole (the first batch,
        or storage that is not the last batch's)."""
        n = min(view.n, *(a.shape[0] for s, dg, _, _ in self._sources(view)[:dirs]
                          for a in (s, dg)))
        if (not self.incremental or self.ix_key != self.storage_key
                or not self.ix or self.ix[0][0].size < n):
            return n, None
        parts = []
        for d in range(dirs):
            rows = self.changed[d]
            rows = rows[rows < n]
            s, dg = self._sources(view)[d][:2]
            parts += [rows.astype(np.int32), np.asarray(s)[rows].astype(np.int64),
                      np.asarray(dg)[rows].astype(np.int32)]
        return n, parts

    def _index(self, view: BatchView, dirs: int, st: dict, n: int, sent: list | None
               ) -> list[tuple[int, int]]:
        """Device row index (start, degree) of ``n`` rows per direction; returns
        addresses.

        ``sent``: the device arrays of :meth:`_index_parts`' changed entries,
        which ``wm_batch_maps`` writes into the index; ``None``: rebuilt whole here.
        """
        cp = self.cp
        copied = 0
        if sent is None:
            cap = max(n, int(1.25 * n), 1)
            self.ix = []
            # the mirror and the cache still refresh just the changed rows
            self.changed_dev = [cp.asarray(ch[ch < n].astype(np.int32))
                                for ch in self.changed[:dirs]] + [None] * (2 - dirs)
            for d in range(dirs):
                s, dg = self._sources(view)[d][:2]
                s_dev = cp.empty(cap, dtype=cp.int64)
                g_dev = cp.empty(cap, dtype=cp.int32)
                if n:
                    s_dev[:n] = cp.asarray(np.ascontiguousarray(s[:n], dtype=np.int64))
                    g_dev[:n] = cp.asarray(np.ascontiguousarray(dg[:n], dtype=np.int32))
                copied += 12 * n
                self.ix.append((s_dev, g_dev))
            self.ix_key = self.storage_key
        else:
            for d in range(dirs):
                self.changed_dev[d] = sent[3 * d]
                copied += 16 * int(sent[3 * d].size)
        self.ix_n = n
        st["index_copy_bytes"] = copied
        st["copy_bytes"] += copied
        out = [(int(a.data.ptr), int(b.data.ptr)) for a, b in self.ix]
        return out + out if dirs == 1 else out

    def _mirror(self, view: BatchView, dirs: int, st: dict, keep: list) -> list[tuple[int, int]]:
        """Policy "device": the storage's entries mirrored on the device, refreshed where
        the last batch rewrote them; returns (entries, labels) addresses per direction."""
        cp = self.cp
        names = [("b_nbr", "b_elab"), ("bi_nbr", "bi_elab")]
        copied = 0
        if not self.incremental or self.mirror_key != self.storage_key:
            self.mirror = {}
            cp.get_default_memory_pool().free_all_blocks()
            for d in range(dirs):
                for nm in names[d]:
                    a = np.ascontiguousarray(getattr(view, nm))
                    self.mirror[nm] = cp.asarray(a) if a.size else None
                    copied += a.nbytes
            self.mirror_key = self.storage_key
        else:
            # rows the previous batch touched were rewritten (in place or moved) by apply():
            # copy them from the mapped host storage at their new place (row index)
            fn = self._module(2, False).get_function("wm_copy_rows")
            for d in range(dirs):
                rows = self.changed_dev[d]
                if rows is None or rows.size == 0:
                    continue
                nrows = int(rows.size)
                grid = (max(1, min((nrows + 7) // 8, 32 * self.sms)),)
                for arr_nm, src in zip(names[d], self._sources(view)[d][2:]):
                    if src.size == 0 or self.mirror.get(arr_nm) is None:
                        continue
                    p_, alive = self.hostmap.ptr(src)
                    keep.append(alive)
                    fn(grid, (256,), (rows, np.int64(nrows), self.ix[d][0], self.ix[d][1],
                                      np.uint64(p_), self.mirror[arr_nm]))
                ch, dg = self.changed[d], np.asarray(self._sources(view)[d][1])
                copied += 4 * int(dg[ch[ch < dg.shape[0]]].sum()) * sum(
                    1 for nm in names[d] if self.mirror.get(nm) is not None)
        st["copy_bytes"] += copied
        out = []
        for d in range(dirs):
            nb, lb = (self.mirror.get(nm) for nm in names[d])
            out.append((0 if nb is None else int(nb.data.ptr), 0 if lb is None else int(lb.data.ptr)))
        return out + out if dirs == 1 else out

    # ----------------------------------------------------------------- cache
    def _budget(self, view: BatchView) -> int:
        """Cache bytes: explicit, or a fraction of the bytes of caching every row.

        Recomputed (O(n)) only when the storage is reallocated, not for every batch
        that adds vertices: degrees drift slowly, and the fraction is a sizing knob.
        """
        eng = self.eng
        if eng.cache_bytes is not None:
            return eng.cache_bytes
        key = self.storage_key
        if key != self.budget_key:
            self.budget_key = key
            self.budget_val = int(eng.cache_fraction * self._storage_bytes(view))
        return self.budget_val

    def _set_slots(self, d: int, rows: Any) -> None:
        """Point direction ``d``'s slot map at cache rows ``rows`` (device int32, in cache
        order; ``None``: no cache), clearing the previous cache's slots."""
        cp = self.cp
        old = self.prev_slots[d]
        if old is not None and old.size:
            self.slot[d][old] = -1
        if rows is not None and rows.size:
            self.slot[d][rows] = cp.arange(rows.size, dtype=cp.int32)
        self.prev_slots[d] = rows

    def _clear_slots(self, dirs: int) -> None:
        for d in range(dirs):
            self._set_slots(d, None)
        self.cache_arrays = []
        self.built_sel = None

    def _refresh_cache(self, dirs: int, entries: list, k: int) -> None:
        """Keep the cache consistent with the storage as the batch finds it.

        Each cached row the last batch rewrote is copied again from the host
        storage into its slot, or its slot is dropped when the row outgrew the
        slot's slack (kernels/delta.cu ``wm_refresh_rows``); the whole cache is
        dropped when the storage is not the last batch's. The counts (host
        entries read, slots dropped) are read by :meth:`_gather`.
        """
        self.refresh_pending += self._refresh_done()
        if not self.cache_arrays:
            return
        if not self.incremental:
            self._clear_slots(dirs)
            return
        cp = self.cp
        fn = self._module(k, False).get_function("wm_refresh_rows")
        counts = cp.zeros(2, dtype=cp.uint64)
        for d in range(dirs):
            rows = self.changed_dev[d]
            if rows is None or rows.size == 0:
                continue
            off, col, lab = self.cache_arrays[d]
            nrows = int(rows.size)
            grid = (max(1, min((nrows + 7) // 8, 32 * self.sms)),)
            other = self.slot[1 - d] if dirs == 2 else self.slot[d]
            fn(grid, (256,), (rows, np.int64(nrows), self.slot[d], other, off, self.ix[d][0],
                              self.ix[d][1], np.uint64(entries[d][0]), col,
                              np.uint64(entries[d][1] if lab is not None else 0),
                              np.uint64(0 if lab is None else int(lab.data.ptr)), counts))
        self.refresh_counts = counts

    def _refresh_done(self) -> int:
        """Host entries the last :meth:`_refresh_cache` read (its dropped slots are
        added to ``self.dropped``); 0 if it launched nothing or was read already."""
        if self.refresh_counts is None:
            return 0
        read, dropped = (int(x) for x in self.refresh_counts.get())
        self.refresh_counts = None
        self.dropped += dropped
        return read

    def _row_cost(self, ids: Any, dirs: int, labeled: bool) -> Any:
        """Device bytes of caching the rows of ``ids`` (both directions; int64)."""
        deg1 = self.ix[1][1] if dirs == 2 else self.ix[0][1]
        return _kernels(self.cp)["cost"](ids.astype(self.cp.int32, copy=False), self.ix[0][1],
                                         deg1, np.int32(8 if labeled else 4), np.int32(dirs))

    def _select_device(self, score: Any, budget: int, dirs: int, labeled: bool,
                       exclude_touched: bool, fill: bool = False) -> Any:
        """The best rows by ``score`` per cached byte within ``budget`` (device ids, int32).

        The device counterpart of :func:`.cache.select_rows` (greedy knapsack by
        density); rows without a storage row are never chosen, nor with
        ``exclude_touched`` the rows this batch touched (read from the overlay
        map: the overlay serves them). The densities come from one fused kernel
        and the sort is on float32 keys: this runs every batch the estimate is
        sampled. With ``fill``, budget the scored rows leave unused goes to the
        rows of the degree order (:meth:`_by_degree`) not chosen or touched, in
        that order; when no row has a score, nothing is chosen (no row is worth
        caching: triangles).
        """
        cp = self.cp
        n_ix = self.ix_n
        if budget <= 0 or n_ix == 0:
            return cp.zeros(0, dtype=cp.int32)
        kern = _kernels(cp)
        per = np.int32(8 if labeled else 4)
        deg0 = self.ix[0][1]
        deg1 = self.ix[1][1] if dirs == 2 else deg0
        o0, o1 = self.oidx[0], self.oidx[1 if dirs == 2 else 0]
        dens = kern["density"](score[:n_ix].astype(cp.float32, copy=False), deg0, deg1, o0, o1,
                               per, np.int32(dirs), np.bool_(exclude_touched))
        ids = cp.flatnonzero(dens).astype(cp.int32)
        if ids.size == 0:
            return ids
        ids = ids[cp.argsort(-dens[ids])]
        csum = cp.cumsum(self._row_cost(ids, dirs, labeled))
        # spent: the bytes of every scored row, used only when they all fit
        cut, spent = (int(x) for x in cp.stack([
            cp.searchsorted(csum, budget, side="right"), csum[-1]]).get())
        sel = ids[:cut]
        if not fill or cut < ids.size:
            return sel
        order = self._by_degree(budget, dirs, labeled)[1]
        taken = cp.zeros(n_ix, dtype=cp.bool_)
        taken[sel] = True
        cost, ok = kern["fill_cost"](order, deg0, deg1, o0, o1, taken, per, np.int32(dirs))
        end = int(cp.searchsorted(cp.cumsum(cost), budget - spent, side="right"))
        more = order[:end][ok[:end]]
        return cp.concatenate([sel, more]) if more.size else sel

    def _by_degree(self, budget: int, dirs: int, labeled: bool) -> tuple[Any, Any]:
        """The degree policy's selection (GCSM's baseline: the longest rows within
        ``budget``) and the degree order it is a prefix of, twice the budget long
        (the random-walk policy's filler, ``estimate_fill``); kept until the
        storage is reallocated (degrees drift slowly)."""
        key = (self.storage_key, budget)
        if self.deg_sel is None or key != self.deg_key or not self.incremental:
            cp = self.cp
            score = self.ix[0][1][: self.ix_n].astype(cp.float32)
            if dirs == 2:
                score += self.ix[1][1][: self.ix_n]
            # twice the budget: the filler skips the rows the estimate chose (at most
            # the budget) and still finds a budget's worth
            order = self._select_device(score, 2 * budget, dirs, labeled, False)
            cut = int(cp.searchsorted(cp.cumsum(self._row_cost(order, dirs, labeled)),
                                      budget, side="right"))
            self.deg_order, self.deg_sel = order, order[:cut]
            self.deg_key = key
        return self.deg_sel, self.deg_order

    def _gather(self, view: BatchView, sel: Any, dirs: int, entries: list, k: int,
                st: dict) -> list[Any]:
        """The DCSR cache of the rows ``sel`` (device ids) on the device, slot maps
        pointing at it.

        When ``sel`` is the selection the cache was built from and few slots have
        been dropped since (:meth:`_refresh_cache` kept the others current), the
        cache stays as it is. Otherwise a new one is built (``wm_gather_rows``):
        a row the previous cache holds is copied from it, device to device; only
        the others are read from the host storage by zero-copy, so a cache that
        changes little between batches costs little PCIe traffic.
        ``st["gather_bytes"]``: bytes read from host memory, by the refresh too.
        """
        cp = self.cp
        refreshed = self.refresh_pending + self._refresh_done()
        self.refresh_pending = 0
        st["gather_bytes"] = 4 * refreshed
        st["cache_dropped"] = self.dropped
        if sel.size == 0:        # nothing worth caching (triangles read no storage row)
            self._clear_slots(dirs)
            self.built_sel = None
            return []
        if (sel is self.built_sel and self.cache_arrays and self.incremental
                and self.dropped * 16 <= sel.size):
            if self.dropped:
                # the cached vertices: the selection's with slots left (computed when
                # asked for, outside the batch: tests and bench/stream.py's coverage)
                slot = self.slot[0]
                self.eng.last_cached = lambda: sel[slot[sel] >= 0]
            return self.cache_arrays
        labeled = view.b_elab.size > 0
        fn = self._module(k, False).get_function("wm_gather_rows")
        old = self.cache_arrays
        host_read = cp.zeros(1, dtype=cp.uint64)
        arrays = []
        for d in range(dirs):
            deg = self.ix[d][1]
            off = cp.zeros(int(sel.size) + 1, dtype=cp.int64)
            cp.cumsum(_kernels(cp)["cap"](sel, deg), out=off[1:])
            m = int(off[-1])
            col = cp.empty(max(m, 1), dtype=cp.int32)
            lab = cp.empty(max(m, 1), dtype=cp.int32) if labeled else None
            if m:
                grid = (max(1, min((int(sel.size) + 7) // 8, 32 * self.sms)),)
                for q, (src, dst) in enumerate(((entries[d][0], col), (entries[d][1], lab))):
                    if dst is None:
                        continue
                    # the previous cache of this direction, as a second source
                    prev = d < len(old) and old[d][1 + q] is not None
                    o_slot, o_off, o_src = ((self.slot[d], old[d][0], old[d][1 + q]) if prev
                                            else (self.dummy,) * 3)
                    fn(grid, (256,), (sel, np.int64(sel.size), self.ix[d][0], deg, off,
                                      np.uint64(src), dst, o_slot, o_off, o_src,
                                      np.int32(prev), host_read))
            self._set_slots(d, sel)
            arrays.append((off, col, lab))
        st["gather_bytes"] += 4 * int(host_read.get()[0])
        self.built_sel = sel
        self.dropped = 0
        return arrays

    def _estimate_gpu(self, view: BatchView, k: int, T: int, ptrs: np.ndarray,
                      plan_buf: np.ndarray, st: dict) -> tuple[Any, int]:
        """The ``"gpu"`` estimator: the sampling kernel (kernels/delta.cu, "Sampling") adds
        this batch's weighted row reads to the decayed estimate ``self.est``.

        Runs with no cache (the slot maps must be clear). Returns the batch's
        sub-task prefix sums and count, which the counting pass reuses.
        """
        cp = self.cp
        eng = self.eng
        t = time.perf_counter()
        if self.est is None or self.est.size < self.n_dev or not self.incremental:
            new = cp.zeros(self.n_dev, dtype=cp.float32)
            if self.est is not None and self.incremental:
                new[: self.est.size] = self.est
            self.est = new
        if eng.estimate_decay > 0:
            self.est *= np.float32(eng.estimate_decay)
        else:
            self.est.fill(0)
        mod = self._module(k, False, sample=True)
        _set_const(cp, mod, ptrs, plan_buf)
        q0, q = eng.sample_rate, eng.continue_rate
        w = np.array([1.0 / (q0 * q ** max(d - 2, 0)) for d in range(k + 1)], dtype=np.float32)
        thr = np.array([min(1 << 32, int(round(x * 2.0 ** 32))) for x in (q0, q)],
                       dtype=np.uint64)
        for name, val in (("wm_s_acc", np.array([self.est.data.ptr], dtype=np.uint64)),
                          ("wm_s_w", w), ("wm_s_thr", thr),
                          ("wm_s_seed", np.array([_mix64(_mix64(eng.seed) + eng._batches)],
                                                 dtype=np.uint64))):
            cp.ndarray((val.size,), dtype=val.dtype, memptr=mod.get_global(name)).set(val)
        sub_ptr = self._subtasks(mod, T)
        fn = mod.get_function("wm_delta")
        counters = cp.zeros(_C_N, dtype=cp.uint64)
        fn((self._blocks(fn, None),), (eng.warps_per_block * 32,),
           (np.int64(0), np.int64(-1), sub_ptr, np.int64(0), np.int64(T), counters,
            self.dummy, self.dummy, self.dummy, self.dummy, self.dummy, np.int64(0)))
        st["sample_host_bytes"] = int(counters[_C_B_STORE].get())
        st["sample_s"] = time.perf_counter() - t
        return sub_ptr

    def _next_sample(self, sampled: bool, st: dict, first: bool) -> None:
        """When to sample next (``estimate_share``; the ``"gpu"`` estimator).

        A sample that selected no row (triangles: the overlay serves every read)
        is repeated after 16 batches. Otherwise the next batch is sampled too
        when the previous cache would have held less than half of this sample's
        credits (:meth:`_kept_share`: the rows a batch reads are then mostly its
        own, as the 4-cycle's are the rows next to its endpoints, and kept rows
        would serve the next batch little) and the estimate costs on average at
        most :data:`FRESH_COST` of the kernel (a fresh cache saves at most the
        kernel's host reads). Else the estimate is spread over as many batches
        as it takes to bring its cost below ``estimate_share`` of the kernel, at
        most 16. A module's first batch (compilation, lazy loading) sets no
        wait, and a batch of another size than the last is always sampled
        (:meth:`run`).
        """
        share = self.eng.estimate_share
        if share is None or not sampled:
            return
        if first:
            self.sample_wait = 0
            return
        if self.rw_sel is not None and self.rw_sel.size == 0:
            self.sample_wait = 16
            return
        cost = st["estimate_s"] / max(st["kernel_s"], 1e-9)
        # an average: one batch's kernel time varies by 3x at batches of 1024
        self.estimate_cost = cost if self.estimate_cost is None else \
            0.5 * (self.estimate_cost + cost)
        if self.kept_share < 0.5 and self.estimate_cost <= FRESH_COST:
            self.sample_wait = 0
        else:
            self.sample_wait = int(min(16, max(0, np.ceil(cost / share) - 1)))

    def _kept_share(self, prev: Any, new: Any) -> float:
        """The share of this sample's credits (``self.est``) that the rows ``prev`` (the
        last selection) hold, against the rows ``new`` (this one): how much of the
        new cache's worth a kept cache would have had. 0 without a last selection."""
        if prev is None or prev.size == 0 or new.size == 0:
            return 0.0
        cp = self.cp
        got = cp.stack([self.est[prev].sum(), self.est[new].sum()]).get()
        return float(got[0] / got[1]) if got[1] > 0 else 1.0

    def _subtasks(self, mod: Any, T: int) -> Any:
        """Every task's depth-2 list cut into sub-tasks (kernels/delta.cu, "Work"):
        the exclusive prefix sums over tasks, the total last. Left on the device:
        the counting kernel reads the total itself (``s_end`` < 0)."""
        cp = self.cp
        chunks = cp.empty(T, dtype=cp.int64)
        mod.get_function("wm_delta_len")((max(1, min((T + 255) // 256, 32 * self.sms)),),
                                         (256,), (np.int64(0), np.int64(T), chunks))
        sub_ptr = cp.zeros(T + 1, dtype=cp.int64)
        cp.cumsum(chunks, out=sub_ptr[1:])
        return sub_ptr

    def _cache(self, view: BatchView, plans: DeltaPlans, policy: str, touched: list[np.ndarray],
               entries: list, st: dict, sampled: bool = True) -> list[Any]:
        """Fill the slot maps per policy; returns the per-direction cache arrays.

        Rows are chosen by estimated reads per cached byte (greedy knapsack), not by
        reads alone as in GCSM: a hub's row costs as much room as thousands of
        short rows, and the binary searches of the kernel mostly read the shorter
        row of a pair (measured on a 10^7-edge power-law graph, batch 4096, 10%
        cache: the estimate served 64% of a diamond query's row reads ranked by
        density, 19% ranked by reads).

        Policies "random-walk" and "degree" select and gather on the device
        (:meth:`_select_device`, :meth:`_gather`). A new selection gets a new
        cache, as GCSM builds one every batch, filled from the previous cache where
        it holds a row, else from host memory; an unchanged one keeps its cache,
        refreshed where the last batch rewrote rows (:meth:`_refresh_cache`). The
        degree policy keeps its selection until the storage is reallocated
        (degrees drift slowly); the "gpu" estimator re-selects after every sample
        (see ``estimate_share``), the "cpu" estimator after its walks, every batch.
        """
        eng = self.eng
        dirs = 2 if view.directed else 1
        st["estimate_s"] = st.get("sample_s", 0.0)
        st["pack_s"] = 0.0
        labeled = view.b_elab.size > 0
        if policy in ("none", "device"):
            self._clear_slots(dirs)
            self.deg_sel = None
            eng.last_cached = np.zeros(0, np.int32)
            st["cached_rows"] = 0
            st["cache_device_bytes"] = 0
            self.cache_arrays = []
            return []
        budget = self._budget(view)
        t = time.perf_counter()
        if policy == "random-walk" and eng.estimator == "gpu":
            if sampled or self.rw_sel is None:
                prev = self.rw_sel
                self.rw_sel = self._select_device(self.est, budget, dirs, labeled, True,
                                                  fill=eng.estimate_fill)
                if sampled and eng.estimate_share is not None:
                    self.kept_share = self._kept_share(prev, self.rw_sel)
                # the selection waits for its own results (host time); a kept selection
                # costs nothing, and waiting here would stall the queued copies
                st["estimate_s"] += time.perf_counter() - t
            sel = self.rw_sel
            t = time.perf_counter()
            eng.last_cached = sel
            self.cache_arrays = self._gather(view, sel, dirs, entries, plans.k, st)
        elif policy == "random-walk":
            # GCSM §III step 2 on the host (the walks), then selection and gather as above
            T = int(np.count_nonzero(view.batch.valid)) * plans.num_plans
            walks = eng.walks
            if walks is None:
                walks = default_walks(T, self.dmax, plans.k)
                if self.walk_rate and self.kernel_s:
                    # GCSM §IV-A starts small and adds walks while the estimate is too
                    # coarse; here the bound is time: the walks (on the CPU) may take
                    # at most a quarter of the last batch's kernel time
                    walks = int(max(64, min(walks, self.walk_rate * 0.25 * self.kernel_s)))
            ws = estimate_access_sparse(view, plans, walks=walks, seed=eng.seed + eng._batches,
                                        D=self.dmax, ws=self.ws, for_cache=True)
            ids, score = ws.result()
            keep = ids < self.ix_n
            cp = self.cp
            dense = cp.zeros(max(self.ix_n, 1), dtype=cp.float32)
            dense[cp.asarray(ids[keep])] = cp.asarray(score[keep], dtype=cp.float32)
            sel = self._select_device(dense, budget, dirs, labeled, True,
                                      fill=eng.estimate_fill)
            cp.cuda.get_current_stream().synchronize()
            st["walks"] = int(walks)
            st["estimate_s"] = time.perf_counter() - t
            self.walk_rate = walks / max(st["estimate_s"], 1e-6)
            t = time.perf_counter()
            eng.last_cached = sel
            self.cache_arrays = self._gather(view, sel, dirs, entries, plans.k, st)
        else:
            # degree policy (GCSM's baseline): one selection per storage layout
            prev = self.deg_sel
            if self._by_degree(budget, dirs, labeled)[0] is not prev:
                self.cp.cuda.get_current_stream().synchronize()
                st["estimate_s"] = time.perf_counter() - t
                t = time.perf_counter()
            eng.last_cached = self.deg_sel
            self.cache_arrays = self._gather(view, self.deg_sel, dirs, entries, plans.k, st)
        # host time: a new cache's gather waits for its copy (_gather reads its count),
        # a kept one is not waited for (the counting pass is queued behind it)
        st["pack_s"] = time.perf_counter() - t
        st["cached_rows"] = int(self.built_sel.size) - self.dropped if self.cache_arrays else 0
        st["cache_device_bytes"] = int(sum(int(a[0].nbytes) + int(a[1].nbytes)
                                           + (int(a[2].nbytes) if a[2] is not None else 0)
                                           for a in self.cache_arrays))
        return self.cache_arrays

    # ------------------------------------------------------------------- run
    def run(self, view: BatchView, plans: DeltaPlans, want_matches: bool,
            updates: np.ndarray | None = None, filt: NlfFilter | None = None) -> RawDelta:
        cp = self.cp
        eng = self.eng
        st: dict[str, Any] = {"policy": eng.cache, "copy_bytes": 0}
        eng.stats = st
        t_all = time.perf_counter()
        b = view.batch
        B = view.num_updates
        k = int(plans.k)
        P = plans.num_plans
        n = int(view.n)
        dirs = 2 if view.directed else 1
        plus = np.zeros(B, dtype=np.int64)
        minus = np.zeros(B, dtype=np.int64)
        valid = (np.flatnonzero(np.asarray(b.valid, dtype=bool)).astype(np.int32)
                 if updates is None else np.asarray(updates, dtype=np.int32))
        empty = (np.empty((0, k), np.int32), np.empty(0, np.int64), np.empty(0, np.int8))
        # ---- what changed since the last batch (module docstring of _DeviceState)
        graph = eng.graph
        state = getattr(graph, "_state", None) if graph is not None else None
        self.storage_key = self._storage_key(view)
        # the storage is S_0 of the last batch (no apply since), or that batch applied
        last_applied = (self.last_batch is not None
                        and self.last_batch not in getattr(graph, "_pending", ()))
        self.incremental = (state is not None and self.state is not None
                            and (state == self.state
                                 or (state == self.state + 1 and last_applied)))
        self.state = state
        self.last_batch = b
        self.changed = self._changed_rows(view, dirs)
        policy = self._resolve_policy(view, self.storage_key)
        st["policy"] = policy
        touched = self._touched(view)
        self._grow(n)
        # D of the CPU walks: the longest row seen (storage at the first batch, overlay
        # since); O(n) at the first batch, so only for the estimator that uses it
        if policy == "random-walk" and eng.estimator == "cpu":
            if self.dmax == 1 or not self.incremental:
                for deg in (view.b_deg, view.bi_deg):
                    if deg.size:
                        self.dmax = max(self.dmax, int(np.asarray(deg[:n]).max(initial=1)))
            for off in (view.o_off, view.oi_off):
                if off.size > 1:
                    self.dmax = max(self.dmax, int(np.diff(off).max(initial=1)))
        # ---- one copy: overlay, updates, overlay-map changes
        t = time.perf_counter()
        pre = [("o", view.o_idx), ("oi", view.oi_idx)][:dirs]
        parts: list[np.ndarray] = []
        for p_, _ in pre:
            parts += [np.ascontiguousarray(getattr(view, f"{p_}_{nm}"), dtype=dt) for nm, dt in
                      (("off", np.int64), ("nbr", np.int32), ("elab", np.int32),
                       ("ins", np.int32), ("dl", np.int32))]
        parts += [np.ascontiguousarray(a, dtype=np.int32)
                  for a in (b.src, b.dst, b.op, b.elabel)] + [valid]
        old_t = self.prev_touched if self.incremental else [np.zeros(0, np.int64)] * 2
        for d, (_, idx) in enumerate(pre):
            parts += [old_t[d].astype(np.int32), touched[d].astype(np.int32),
                      np.asarray(idx)[touched[d]].astype(np.int32)]
        # the row index's changed entries ride in the same copy
        q_ix = len(parts)
        n_store, ix_parts = self._index_parts(view, dirs)
        parts += ix_parts or []
        ptr = self.staging.send(parts)
        ovl = [dict(zip(("off", "nbr", "elab", "ins", "dl"), ptr[5 * d:5 * d + 5]))
               for d in range(dirs)]
        upd = ptr[5 * dirs:5 * dirs + 5]
        sent = None if ix_parts is None else [
            self.staging.array(ptr[q_ix + i], parts[q_ix + i].size, dt)
            for i, dt in enumerate((cp.int32, cp.int64, cp.int32) * dirs)]
        index = self._index(view, dirs, st, n_store, sent)
        if not self.incremental:
            for d in range(dirs):
                self.oidx[d].fill(-1)
        maps = self._module(k, False).get_function("wm_batch_maps")
        for d in range(dirs):
            q = 5 * dirs + 5 + 3 * d
            sz = [parts[q + i].size for i in range(3)]
            rows = [np.uint64(0)] * 3 if sent is None else sent[3 * d:3 * d + 3]
            nrows = 0 if sent is None else int(sent[3 * d].size)
            total = sz[0] + sz[1] + nrows
            if total:
                maps((max(1, min((total + 255) // 256, 32 * self.sms)),), (256,),
                     (np.uint64(ptr[q]), np.int64(sz[0]), np.uint64(ptr[q + 1]),
                      np.uint64(ptr[q + 2]), np.int64(sz[1]), self.oidx[d],
                      *rows, np.int64(nrows), self.ix[d][0], self.ix[d][1]))
        if not view.directed:
            ovl.append(ovl[0])
            self.oidx[1] = self.oidx[0]
            self.slot[1] = self.slot[0]
        st["overlay_copy_s"] = time.perf_counter() - t
        st["overlay_entries"] = int(view.o_nbr.size + (view.oi_nbr.size if view.directed else 0))
        st["copy_bytes"] += int(sum(a.nbytes for a in parts[:q_ix]))
        # ---- vertex labels, storage entries (host-mapped or mirrored), cache refresh
        t = time.perf_counter()
        vlab = self._vlab(view)
        qmask = self._qmask(filt, n)
        keep: list[Any] = []
        if policy == "device":
            entries = self._mirror(view, dirs, st, keep)
            self.hostmap.release_unused()
        else:
            if self.mirror:
                self.mirror, self.mirror_key = {}, None
            entries = []
            for d in range(dirs):
                row = []
                for a in self._sources(view)[d][2:]:
                    p_, alive = self.hostmap.ptr(a)
                    if alive is not None:
                        keep.append(alive)
                    row.append(p_)
                entries.append(tuple(row))
            if dirs == 1:
                entries.append(entries[0])
            self.hostmap.release_unused()
            st["fallback_copied_bytes"] = self.hostmap.fallback_bytes
        self._refresh_cache(dirs, entries, k)
        st["storage_s"] = time.perf_counter() - t
        if valid.size == 0 or P == 0:
            # the copies read the view's host arrays, which the next view() reuses
            cp.cuda.get_current_stream().synchronize()
            self._finish_batch(touched)
            eng.last_cached = np.zeros(0, np.int32)
            st["engine_s"] = time.perf_counter() - t_all
            return RawDelta(plus, minus, *(empty if want_matches else (None,) * 3))
        acc = None
        if eng.profile:
            acc = cp.zeros(max(n, 1), dtype=cp.uint64)
            keep.append(acc)
        labeled = view.b_elab.size > 0

        def cptr(a: Any) -> int:
            return 0 if a is None else int(a.data.ptr)

        def constants(cache_arrays: list) -> tuple[np.ndarray, int]:
            """The kernel's constant block (struct WmDelta) for these cache arrays."""
            cache_arrays = list(cache_arrays)
            while len(cache_arrays) < 2:
                cache_arrays.append(cache_arrays[0] if cache_arrays
                                    else (self.dummy, self.dummy, None))
            vals = [index[0][0], index[1][0], index[0][1], index[1][1],
                    int(self.oidx[0].data.ptr), int(self.oidx[1].data.ptr),
                    ovl[0]["off"], ovl[1]["off"],
                    int(self.slot[0].data.ptr), int(self.slot[1].data.ptr),
                    cptr(cache_arrays[0][0]), cptr(cache_arrays[1][0]),
                    entries[0][0], entries[1][0], cptr(cache_arrays[0][1]),
                    cptr(cache_arrays[1][1]), ovl[0]["nbr"], ovl[1]["nbr"]]       # nbr[6]
            if labeled:
                vals += [entries[0][1], entries[1][1], cptr(cache_arrays[0][2]),
                         cptr(cache_arrays[1][2]), ovl[0]["elab"], ovl[1]["elab"]]
            else:
                vals += [0] * 6
            vals += [ovl[0]["ins"], ovl[1]["ins"], ovl[0]["dl"], ovl[1]["dl"]]
            vals += [vlab] + upd
            slot = len(vals)
            vals += [0, cptr(acc), qmask]
            ptrs = np.zeros(40, dtype=np.uint64)
            ptrs[: len(vals)] = np.array(vals, dtype=np.uint64)
            ptrs[37] = np.uint64(valid.size)
            tail = ptrs[38:].view(np.int32)
            tail[0] = P
            tail[1] = n
            tail[2] = n_store
            tail[3] = int(policy != "device")   # storage entries are read from host memory
            return ptrs, slot

        if self.plans_of is not plans:     # the matcher passes the same plans every batch
            self.plans_of, self.plan_buf = plans, _pack_plans(plans)
        plan_buf = self.plan_buf
        T = int(valid.size) * P
        pre = None
        sampled = False
        if policy == "random-walk" and eng.estimator == "gpu":
            if B != self.batch_size:        # a wait set by batches of another size
                self.sample_wait = 0
            self.batch_size = B
            if self.rw_sel is None or not self.incremental or self.sample_wait <= 0:
                # the sampling kernel reads no cache (kernels/delta.cu wm_row)
                pre = self._estimate_gpu(view, k, T, constants([])[0], plan_buf, st)
                sampled = True
            else:
                self.sample_wait -= 1
        st["sampled"] = sampled
        cache_arrays = list(self._cache(view, plans, policy, touched, entries, st, sampled))
        ptrs, row_base_slot = constants(cache_arrays)
        # --------------------------------------------------------- count pass
        mod = self._module(k, False)
        _set_const(cp, mod, ptrs, plan_buf)
        need = _C_N + 2 * max(B, 1)
        if self.res is None or self.res.size < need:
            self.res = cp.empty(max(need, 2 * (self.res.size if self.res is not None else 0)),
                                dtype=cp.uint64)
        res = self.res[:need]
        res.fill(0)
        counters = res[:_C_N]
        plus_d = res[_C_N:_C_N + max(B, 1)]
        minus_d = res[_C_N + max(B, 1):]
        fn = mod.get_function("wm_delta")
        # timed on the device (events), not by waiting for the queued copies first: a
        # host wait here stalls the device while the host prepares the launch
        ev0, ev1 = self.events
        ev0.record()
        # every task's depth-2 list, cut into sub-tasks (kernels/delta.cu, "Work")
        sub_ptr = pre if pre is not None else self._subtasks(mod, T)
        blocks = self._blocks(fn, None)
        fn((blocks,), (eng.warps_per_block * 32,),
           (np.int64(0), np.int64(-1), sub_ptr, np.int64(0), np.int64(T), counters,
            plus_d, minus_d, self.dummy, self.dummy, self.dummy, np.int64(0)))
        ev1.record()
        host = res.get()
        st["kernel_s"] = cp.cuda.get_elapsed_time(ev0, ev1) * 1e-3
        self.kernel_s = st["kernel_s"]
        # a module's first launch loads it (CUDA lazy loading): not a time to compare
        first = id(mod) not in self.launched
        self.launched.add(id(mod))
        if policy == "random-walk" and eng.estimator == "gpu":
            self._next_sample(sampled, st, first)
        c = host[:_C_N]
        raw_plus = host[_C_N:_C_N + B].astype(np.int64)
        raw_minus = host[_C_N + max(B, 1):_C_N + max(B, 1) + B].astype(np.int64)
        store_host = policy != "device"
        st["host_bytes"] = int(c[_C_B_STORE]) if store_host else 0
        st["device_storage_bytes"] = 0 if store_host else int(c[_C_B_STORE])
        st["cache_bytes_read"] = int(c[_C_B_CACHE])
        st["overlay_bytes"] = int(c[_C_B_OVL])
        st["rows_host"] = int(c[_C_R_STORE]) if store_host else 0
        st["rows_cache"] = int(c[_C_R_CACHE])
        st["rows_overlay"] = int(c[_C_R_OVL])
        st["rows_device_storage"] = 0 if store_host else int(c[_C_R_STORE])
        untouched = int(c[_C_R_STORE]) + int(c[_C_R_CACHE])
        st["cache_hit_rate"] = (int(c[_C_R_CACHE]) / untouched) if untouched else 0.0
        st["blocks"] = blocks
        st["tasks"] = T
        if acc is not None:
            eng.last_access = acc.get()[:n].astype(np.int64)
        mult = int(plans.uniform_weight)
        if mult != 1:
            top = int(max(raw_plus.max(initial=0), raw_minus.max(initial=0)))
            if top and top * mult >= 2 ** 63:
                raise OverflowError(f"a delta of {top} x |Aut| = {mult} does not fit in int64")
        plus[:] = raw_plus * mult
        minus[:] = raw_minus * mult
        result: tuple = (None, None, None)
        if want_matches:
            t = time.perf_counter()
            result = self._list(k, P, B, valid, raw_plus + raw_minus, ptrs, row_base_slot,
                                plan_buf, keep, sub_ptr)
            st["list_s"] = time.perf_counter() - t
        self._finish_batch(touched)
        del keep
        st["engine_s"] = time.perf_counter() - t_all
        return RawDelta(plus, minus, *result)

    def _finish_batch(self, touched: list[np.ndarray]) -> None:
        self.prev_touched = touched

    def _list(self, k: int, P: int, B: int, valid: np.ndarray, per_upd: np.ndarray,
              ptrs: np.ndarray, row_base_slot: int, plan_buf: np.ndarray,
              keep: list, sub_ptr: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Second pass: the rows of every update, in chunks of updates that fit the buffer
        (``sub_ptr``: the count pass's sub-task prefix sums over tasks)."""
        cp = self.cp
        R = int(per_upd.sum())
        if R == 0:
            return np.empty((0, k), np.int32), np.empty(0, np.int64), np.empty(0, np.int8)
        row_base = np.zeros(B, dtype=np.int64)
        np.cumsum(per_upd[:-1], out=row_base[1:])
        rb = cp.asarray(row_base)
        keep.append(rb)
        ptrs = ptrs.copy()
        ptrs[row_base_slot] = np.uint64(int(rb.data.ptr))
        mod = self._module(k, True)
        _set_const(cp, mod, ptrs, plan_buf)
        fn = mod.get_function("wm_delta")
        cap = min(R, self.eng.list_rows)
        big = int(per_upd[valid].max())
        cap = max(cap, big)
        try:
            out = cp.empty((cap, k), dtype=cp.int32)
            sign = cp.empty(cap, dtype=cp.int8)
        except cp.cuda.memory.OutOfMemoryError as exc:
            raise BudgetError(f"listing needs {_fmt(cap * (4 * k + 1))} of GPU memory for "
                              f"{cap} match rows: {exc}") from exc
        cursor = cp.zeros(max(B, 1), dtype=cp.uint64)
        counters = cp.zeros(_C_N, dtype=cp.uint64)
        sub_host = sub_ptr.get()
        T = int(sub_host.size) - 1
        rows_out, sign_out = [], []
        cnt_valid = per_upd[valid]
        a = 0
        V = int(valid.size)
        while a < V:
            # the longest run of valid updates from a whose rows fit the buffer
            csum = np.cumsum(cnt_valid[a:])
            bnd = int(np.searchsorted(csum, cap, side="right"))
            bnd = max(bnd, 1)
            e = min(V, a + bnd)
            nrows = int(csum[e - a - 1])
            first = int(row_base[valid[a]])
            counters.fill(0)
            s0, s1 = int(sub_host[a * P]), int(sub_host[e * P])
            if s1 > s0:
                blocks = self._blocks(fn, s1 - s0)
                fn((blocks,), (self.eng.warps_per_block * 32,),
                   (np.int64(s0), np.int64(s1), sub_ptr, np.int64(0), np.int64(T), counters,
                    self.dummy, self.dummy, out, sign, cursor, np.int64(first)))
            if nrows:
                rows_out.append(out[:nrows].get())
                sign_out.append(sign[:nrows].get())
            a = e
        rows = np.concatenate(rows_out) if rows_out else np.empty((0, k), np.int32)
        signs = np.concatenate(sign_out) if sign_out else np.empty(0, np.int8)
        got = cursor.get()[:B].astype(np.int64)
        if not np.array_equal(got, per_upd):     # pragma: no cover - kernel invariant
            raise RuntimeError("internal error: the listing pass found other matches than "
                               "the counting pass")
        upd = np.repeat(np.arange(B, dtype=np.int64), per_upd)
        return rows, upd, signs


#: :func:`.cache.row_capacity` and :func:`.cache.row_bytes` in C, for the selection's
#: fused kernels (tests/gpu/test_stream_gpu.py checks them against the Python ones)
_ROW_C = """
__device__ __forceinline__ long long wm_cap(long long d) { return d + (d + 15) / 16; }
__device__ __forceinline__ long long wm_cost(const int* d0, const int* d1, long long v,
                                             int per, int dirs) {
  long long c = wm_cap(d0[v]) * per + 12;
  if (dirs == 2) c += wm_cap(d1[v]) * per + 12;
  return c;
}
"""


def _kernels(cp: Any) -> dict[str, Any]:
    """The row selection's fused elementwise kernels, built on first use.

    ``density``: caching each row's score per byte (0 where the score is not
    positive, or with ``excl`` where the batch touched the row: the overlay
    serves it). ``cost``: bytes of caching rows ``v``. ``fill_cost``: the same,
    0 for rows taken already or touched, and whether the row may be taken.
    ``cap``: a cached row's entries. Each replaces a chain of CuPy operations
    (a launch each, tens of microseconds of host time) on a path that runs every
    sampled batch.
    """
    if not _KERNELS:
        ek = cp.ElementwiseKernel
        _KERNELS["density"] = ek(
            "float32 s, raw int32 d0, raw int32 d1, raw int32 o0, raw int32 o1, int32 per, "
            "int32 dirs, bool excl", "float32 dens",
            "dens = (s > 0.0f && !(excl && (o0[i] >= 0 || o1[i] >= 0)))"
            " ? s / (float)wm_cost(&d0[0], &d1[0], i, per, dirs) : 0.0f",
            "wm_row_density", preamble=_ROW_C)
        _KERNELS["cost"] = ek(
            "int32 v, raw int32 d0, raw int32 d1, int32 per, int32 dirs", "int64 c",
            "c = wm_cost(&d0[0], &d1[0], v, per, dirs)", "wm_row_cost", preamble=_ROW_C)
        _KERNELS["fill_cost"] = ek(
            "int32 v, raw int32 d0, raw int32 d1, raw int32 o0, raw int32 o1, raw bool taken, "
            "int32 per, int32 dirs", "int64 c, bool ok",
            "ok = !taken[v] && o0[v] < 0 && o1[v] < 0;"
            " c = ok ? wm_cost(&d0[0], &d1[0], v, per, dirs) : 0",
            "wm_row_fill_cost", preamble=_ROW_C)
        _KERNELS["cap"] = ek("int32 v, raw int32 deg", "int64 c", "c = wm_cap(deg[v])",
                             "wm_row_cap", preamble=_ROW_C)
    return _KERNELS


def _pack_plans(plans: DeltaPlans) -> np.ndarray:
    """The delta plans as one int32 block: 14 offsets, then the arrays (kernels/delta.cu)."""
    parts = [plans.order, plans.vlabel, plans.bn_ptr, plans.bn_pos, plans.bn_dir,
             plans.bn_elabel, plans.na_ptr, plans.na_pos, plans.na_dir, plans.res_ptr,
             plans.res_pos, plans.res_sign, plans.pair_kind, plans.pair_elabel]
    flat = [np.ascontiguousarray(p, dtype=np.int32).reshape(-1) for p in parts]
    offs = np.zeros(14, dtype=np.int64)
    pos = 14
    for i, f in enumerate(flat):
        offs[i] = pos
        pos += f.size
    if pos > PLAN_CAP:
        raise BudgetError(f"the delta plans take {pos} ints of constant memory; the GPU "
                          f"engine holds {PLAN_CAP} (a query of {plans.k} vertices with "
                          f"{plans.num_plans} plans is too large for it)")
    buf = np.zeros(pos, dtype=np.int32)
    buf[:14] = offs
    buf[14:pos] = np.concatenate(flat)
    return buf


def _mix64(x: int) -> int:
    """splitmix64's finaliser on the host: the sampler's seed per (engine seed, batch).

    The kernel's coins hash ``seed + a * golden + b * c2`` (kernels/delta.cu
    ``wm_coin``), linear in the sub-task id ``a``: a seed that were itself
    ``engine_seed * golden`` would make seed ``s + 1``'s coins those of seed ``s``
    shifted by one sub-task, so runs with nearby seeds would share their samples.
    """
    m = (1 << 64) - 1
    z = (int(x) + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def _set_const(cp: Any, mod: Any, ptrs: np.ndarray, plan_buf: np.ndarray) -> None:
    """Set a module's constant block and, unless it holds them already, its plans."""
    mem = mod.get_global("g")
    cp.ndarray((ptrs.size,), dtype=cp.uint64, memptr=mem).set(ptrs)
    # a module is shared by every engine: remember which packed plans it holds (the
    # buffer itself, kept alive, so that its identity cannot be reused)
    if _PLAN_OF.get(id(mod)) is not plan_buf:
        pm = mod.get_global("wm_plan")
        cp.ndarray((plan_buf.size,), dtype=cp.int32, memptr=pm).set(plan_buf)
        _PLAN_OF[id(mod)] = plan_buf
