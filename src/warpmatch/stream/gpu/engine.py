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
   binomial-merged random walks from the batch's updates (:mod:`.walk`,
   eq. 3); ``"degree"``: GCSM's degree-based baseline; ``"none"``: no cache
   (zero-copy only); ``"device"``: the whole storage mirrored in device memory
   — and the best rows within ``cache_bytes`` are packed in DCSR (:mod:`.cache`)
   and copied to the device with one DMA.
3. The batch's overlay (timestamped rows of the touched vertices, small) and
   the updates go to the device; ``kernels/delta.cu`` runs every task (update,
   delta plan) with one warp per task and gMatch's fine-grained lanes, reading
   a row from the overlay if the vertex is touched, else from the cache, else
   from host memory.
4. Counts are added per update; listing runs the kernel a second time into a
   buffer sized by the counts (rows grouped by update, in chunks that fit).

Counters per batch (:attr:`GpuDeltaEngine.stats`): bytes read from host
memory by zero-copy, from the cache and from the overlay, rows read from each,
the cache hit rate, and the time of each step.

What differs from GCSM: matching follows per-update states instead of GCSM's
N/N' lists (see :mod:`warpmatch.stream.types`); the cache never holds a
touched row, so DCSR needs one offset per row (:mod:`.cache`); the degree
policy keeps its rows across batches (degrees drift slowly) and drops the
rows a batch touched until its next rebuild, where GCSM's random-walk cache
is rebuilt for every batch as in the paper.
"""
from __future__ import annotations

import time
from importlib import resources
from typing import Any, Callable

import numpy as np

from ...errors import BackendUnavailableError, BudgetError
from ..types import BatchView, DeltaPlans, RawDelta
from .cache import POLICIES, Dcsr, pack_rows, row_bytes, select_rows
from .walk import Workspace, default_walks, degree_scores, estimate_access_sparse

__all__ = ["GpuDeltaEngine", "pinned_allocator"]

_MODULES: dict[tuple, Any] = {}
_SOURCE: list[str] = []
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
        _SOURCE.append(resources.files(__package__).joinpath("kernels", "delta.cu").read_text())
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
        owner = a
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
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
            attrs = rt.pointerGetAttributes(key[0])
            pinned = int(attrs.type) == _MEMTYPE_HOST
        except Exception:
            pinned = False
        try:
            if not pinned:
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
    cache : {"random-walk", "degree", "none", "device"}, optional
        Which rows are cached on the device per batch (module docstring). The
        default is ``"random-walk"``.
    cache_bytes : int or None, optional
        Device bytes for cached rows. The default is ``None``, meaning
        ``cache_fraction`` of the storage's bytes.
    cache_fraction : float, optional
        Cache size as a fraction of the graph's adjacency bytes when
        ``cache_bytes`` is ``None``. The default is ``0.1``.
    walks : int or None, optional
        Random walks per batch (``M``). The default is ``None``: GCSM's
        ``|ΔE| D^(n-2) / 32^n``, clipped (:func:`.walk.default_walks`).
    seed : int, optional
        Seed of the random walks. The default is ``0``.
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
        ``cache_device_bytes``, ``copy_bytes`` and the seconds of each step.
    totals : dict
        The same counters summed over every batch since :meth:`attach`.
    last_cached : numpy.ndarray
        Vertices whose rows the last batch had in the cache.
    last_access : numpy.ndarray or None
        With ``profile=True``: row reads per vertex in the last batch.

    Examples
    --------
    >>> eng = GpuDeltaEngine(cache="random-walk", cache_fraction=0.05)
    >>> eng.available()[0] in (True, False)
    True
    """

    name = "gpu"

    def __init__(self, cache: str = "random-walk", cache_bytes: int | None = None,
                 cache_fraction: float = 0.1, walks: int | None = None, seed: int = 0,
                 warps_per_block: int = 4, list_rows: int = 1 << 22, profile: bool = False,
                 device: int = 0, pinned: bool = True) -> None:
        if cache not in POLICIES:
            raise ValueError(f"cache must be one of {', '.join(POLICIES)}; got {cache!r}")
        if cache_bytes is not None and int(cache_bytes) < 0:
            raise ValueError(f"cache_bytes must be >= 0, got {cache_bytes}")
        if not 0.0 <= float(cache_fraction) <= 1.0:
            raise ValueError(f"cache_fraction must be in [0, 1], got {cache_fraction}")
        if not 1 <= int(warps_per_block) <= 32:
            raise ValueError(f"warps_per_block must be in 1..32, got {warps_per_block}")
        self.cache = cache
        self.cache_bytes = None if cache_bytes is None else int(cache_bytes)
        self.cache_fraction = float(cache_fraction)
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
        self.last_cached = np.zeros(0, dtype=np.int32)
        self.last_access: np.ndarray | None = None
        self._dev: _DeviceState | None = None
        self._batches = 0

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
        try:
            import cupy as cp
        except Exception as exc:
            return False, (f"CuPy is not installed or cannot load ({exc.__class__.__name__}: "
                           f"{exc}); install warpmatch[cuda13] or warpmatch[cuda12]")
        try:
            n = cp.cuda.runtime.getDeviceCount()
        except Exception as exc:
            return False, f"no CUDA device is usable ({exc})"
        if n <= self.device:
            return False, (f"no CUDA device {self.device}: {n} device(s) found"
                           if n else "no CUDA device found")
        return True, ""

    def attach(self, graph: Any) -> None:
        """Bind to a dynamic graph; device state is (re)built lazily on the next batch."""
        if self._dev is not None:
            self._dev.close()
        self.graph = graph
        self._dev = None
        self._batches = 0
        self.totals = {}

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
            The delta plans; listing needs ``multiplier == 1``.
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
            ``want_matches`` with plans that count through a multiplier.
        """
        ok, why = self.available()
        if not ok:
            raise BackendUnavailableError(f"backend 'gpu' is unavailable: {why}")
        if want_matches and plans.multiplier != 1:
            raise ValueError("listing needs delta plans compiled with purpose='list' "
                             f"(multiplier 1), not multiplier {plans.multiplier}")
        import cupy as cp
        cp.cuda.Device(self.device).use()
        if self._dev is None:
            self._dev = _DeviceState(cp, self)
        t0 = time.perf_counter()
        out = self._dev.run(view, plans, want_matches)
        self.stats["total_s"] = time.perf_counter() - t0
        self._batches += 1
        for key, val in self.stats.items():
            if isinstance(val, (int, float)) and not isinstance(val, bool):
                self.totals[key] = self.totals.get(key, 0) + val
        self.totals["batches"] = self._batches
        return out


class _DeviceState:
    """Device buffers that live across batches, and one batch's execution."""

    def __init__(self, cp: Any, eng: GpuDeltaEngine) -> None:
        self.cp = cp
        self.eng = eng
        self.hostmap = _HostMap(cp)
        props = cp.cuda.runtime.getDeviceProperties(eng.device)
        self.sms = int(props["multiProcessorCount"])
        self.dummy = cp.zeros(2, dtype=cp.int64)
        self.n_dev = 0                       # vertices covered by o_idx/slot/vlab buffers
        self.oidx = [None, None]
        self.slot = [None, None]
        self.vlab = None
        self.vlab_n = 0
        self.prev_touched: list[np.ndarray] = [np.zeros(0, np.int64), np.zeros(0, np.int64)]
        self.prev_slots: list[np.ndarray] = [np.zeros(0, np.int64), np.zeros(0, np.int64)]
        # degree policy: persistent selection and its device rows
        self.deg_sel: np.ndarray | None = None
        self.deg_key: tuple | None = None
        self.deg_stale = np.zeros(0, np.int64)
        self.cache_arrays: list[Any] = []
        self.budget_key: tuple | None = None
        self.budget_val = 0
        self.ws = Workspace()
        self.prev_touched_all = np.zeros(0, np.int64)
        # device policy: mirror of the storage
        self.mirror: dict[str, Any] = {}
        self.mirror_key: tuple | None = None
        self.dmax = 1

    def close(self) -> None:
        self.hostmap.close()

    # --------------------------------------------------------------- helpers
    def _module(self, k: int, list_mode: bool) -> Any:
        eng = self.eng
        key = (k, list_mode, eng.profile, eng.warps_per_block, eng.device)
        mod = _MODULES.get(key)
        if mod is None:
            t = time.perf_counter()
            defines = "\n".join([f"#define WM_K {k}", f"#define WM_WARPS {eng.warps_per_block}",
                                 f"#define WM_LIST {int(list_mode)}",
                                 f"#define WM_PROFILE {int(eng.profile)}",
                                 f"#define WM_PLAN_CAP {PLAN_CAP}"])
            mod = self.cp.RawModule(code=defines + "\n" + _source(), options=("-std=c++17",))
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

    def _vlab(self, view: BatchView) -> int:
        """Device vertex labels (labels never change: only new vertices are copied)."""
        cp = self.cp
        vl = view.vlabel
        if vl.size == 0:
            return 0
        n = int(vl.shape[0])
        if self.vlab is None or self.vlab.size < n:
            new = cp.empty(max(n, int(n * 1.25)), dtype=cp.int32)
            if self.vlab is not None and self.vlab_n:
                new[: self.vlab_n] = self.vlab[: self.vlab_n]
            self.vlab = new
        if n > self.vlab_n:
            self.vlab[self.vlab_n:n] = cp.asarray(np.ascontiguousarray(vl[self.vlab_n:n],
                                                                       dtype=np.int32))
            self.vlab_n = n
        return int(self.vlab.data.ptr)

    @staticmethod
    def _touched(view: BatchView) -> list[np.ndarray]:
        """Vertices with an overlay row, per direction (the batch's endpoints)."""
        b = view.batch
        ends = np.unique(np.concatenate([np.asarray(b.src, np.int64),
                                         np.asarray(b.dst, np.int64)]))
        ends = ends[(ends >= 0) & (ends < view.o_idx.shape[0])]
        out = ends[np.asarray(view.o_idx)[ends] >= 0]
        if view.directed:
            e2 = ends[ends < view.oi_idx.shape[0]]
            inn = e2[np.asarray(view.oi_idx)[e2] >= 0]
        else:
            inn = out
        return [out, inn]

    def _scatter(self, arr: Any, old: np.ndarray, new: np.ndarray, values: np.ndarray) -> None:
        cp = self.cp
        if old.size:
            arr[cp.asarray(old)] = -1
        if new.size:
            arr[cp.asarray(new)] = cp.asarray(values.astype(np.int32))

    def _storage_bytes(self, view: BatchView) -> int:
        n = min(view.n, view.b_deg.shape[0])
        per = 8 if view.b_elab.size else 4
        b = int(np.asarray(view.b_deg[:n], dtype=np.int64).sum()) * per
        if view.directed:
            n2 = min(view.n, view.bi_deg.shape[0])
            b += int(np.asarray(view.bi_deg[:n2], dtype=np.int64).sum()) * per
        return b

    # ----------------------------------------------------------------- cache
    def _budget(self, view: BatchView) -> int:
        """Cache bytes: explicit, or a fraction of the adjacency bytes (per storage layout)."""
        eng = self.eng
        if eng.cache_bytes is not None:
            return eng.cache_bytes
        key = (id(view.b_nbr), id(view.bi_nbr), view.b_nbr.shape[0], view.bi_nbr.shape[0])
        if key != self.budget_key:
            self.budget_key = key
            self.budget_val = int(eng.cache_fraction * self._storage_bytes(view))
        return self.budget_val

    def _cost(self, view: BatchView, ids: np.ndarray) -> np.ndarray:
        labeled = view.b_elab.size > 0
        ok = ids < min(view.b_deg.shape[0], view.bi_deg.shape[0])
        deg = np.zeros(ids.size, dtype=np.int64)
        deg[ok] = view.b_deg[ids[ok]]
        c = row_bytes(deg, labeled)
        if view.directed:
            deg2 = np.zeros(ids.size, dtype=np.int64)
            deg2[ok] = view.bi_deg[ids[ok]]
            c += row_bytes(deg2, labeled)
        return c

    def _upload(self, view: BatchView, sel: np.ndarray, dirs: int, st: dict) -> list[Any]:
        """Pack ``sel``'s rows in DCSR, copy them, point the slot maps at them."""
        cp = self.cp
        sources = [(view.b_start, view.b_deg, view.b_nbr, view.b_elab),
                   (view.bi_start, view.bi_deg, view.bi_nbr, view.bi_elab)]
        arrays = []
        empty = np.zeros(0, np.int64)
        for d in range(dirs):
            dc: Dcsr = pack_rows(sel, *sources[d])
            off_d = cp.asarray(dc.rowptr)
            col_d = cp.asarray(dc.colidx) if dc.colidx.size else self.dummy
            lab_d = cp.asarray(dc.labels) if dc.labels.size else None
            self._scatter(self.slot[d], self.prev_slots[d], empty, empty)
            rows = dc.rowidx.astype(np.int64)
            self._scatter(self.slot[d], empty, rows, np.arange(dc.rows, dtype=np.int32))
            self.prev_slots[d] = rows
            arrays.append((off_d, col_d, lab_d))
            st["copy_bytes"] += dc.nbytes
        return arrays

    def _cache(self, view: BatchView, plans: DeltaPlans, touched: list[np.ndarray],
               st: dict) -> tuple[list[Any], bool]:
        """Fill the slot maps per policy; returns (per-direction cache arrays, storage on host)."""
        eng = self.eng
        policy = eng.cache
        dirs = 2 if view.directed else 1
        empty = np.zeros(0, np.int64)
        st["estimate_s"] = 0.0
        st["pack_s"] = 0.0
        if policy in ("none", "device"):
            for d in range(dirs):
                self._scatter(self.slot[d], self.prev_slots[d], empty, empty)
                self.prev_slots[d] = empty
            eng.last_cached = np.zeros(0, np.int32)
            st["cached_rows"] = 0
            st["cache_device_bytes"] = 0
            return [], policy != "device"
        budget = self._budget(view)
        tt = np.unique(np.concatenate(touched[:dirs]))
        t = time.perf_counter()
        if policy == "random-walk":
            # GCSM §III step 2-3: estimate, select and pack anew for every batch
            T = int(np.count_nonzero(view.batch.valid)) * plans.num_plans
            walks = eng.walks if eng.walks is not None else default_walks(T, self.dmax, plans.k)
            ws = estimate_access_sparse(view, plans, walks=walks, seed=eng.seed + eng._batches,
                                        D=self.dmax, ws=self.ws)
            ids, score = ws.result()
            ids = ids[ids < view.n]
            score = ws.acc[ids]
            keep = ~np.isin(ids, tt)
            ids, score = ids[keep], score[keep]
            order = select_rows(score, self._cost(view, ids), budget, None)
            sel = ids[order].astype(np.int32)
            st["walks"] = int(walks)
            st["estimate_s"] = time.perf_counter() - t
            t = time.perf_counter()
            self.cache_arrays = self._upload(view, sel, dirs, st)
            eng.last_cached = sel
        else:
            # degree policy: one selection per storage layout; rows that a batch touched
            # are stale once it is applied, so they leave the cache until the next rebuild
            key = (id(view.b_nbr), id(view.bi_nbr), budget)
            stale = self.deg_stale
            if (self.deg_sel is None or key != self.deg_key
                    or stale.size > 0.1 * max(self.deg_sel.size, 1)):
                n = view.n
                scores = degree_scores(view)
                ids = np.arange(n, dtype=np.int64)
                sel = select_rows(scores, self._cost(view, ids), budget, None)
                st["estimate_s"] = time.perf_counter() - t
                t = time.perf_counter()
                self.deg_sel = sel
                self.deg_key = key
                self.deg_stale = np.zeros(0, np.int64)
                self.cache_arrays = self._upload(view, sel, dirs, st)
            else:
                drop = self.prev_touched_all
                drop = drop[np.isin(drop, self.deg_sel)] if drop.size else drop
                if drop.size:
                    for d in range(dirs):
                        self.slot[d][self.cp.asarray(drop)] = -1
                    self.deg_stale = np.union1d(self.deg_stale, drop)
            sel = self.deg_sel
            eng.last_cached = (np.setdiff1d(sel, self.deg_stale).astype(np.int32)
                               if self.deg_stale.size else sel)
        st["pack_s"] = time.perf_counter() - t
        st["cached_rows"] = int(eng.last_cached.size)
        st["cache_device_bytes"] = int(sum(int(a[0].nbytes) + int(a[1].nbytes)
                                           + (int(a[2].nbytes) if a[2] is not None else 0)
                                           for a in self.cache_arrays))
        return self.cache_arrays, True

    def _mirror(self, view: BatchView, st: dict) -> dict[str, Any]:
        """Policy "device": the storage mirrored on the device, refreshed where it changed."""
        cp = self.cp
        dirs = 2 if view.directed else 1
        names = [("b_start", "b_deg", "b_nbr", "b_elab"), ("bi_start", "bi_deg", "bi_nbr",
                                                          "bi_elab")]
        key = tuple((id(getattr(view, nm)), getattr(view, nm).shape[0])
                    for d in range(dirs) for nm in names[d])
        copied = 0
        if key != self.mirror_key:
            self.mirror = {}
            for d in range(dirs):
                for nm in names[d]:
                    a = np.ascontiguousarray(getattr(view, nm))
                    self.mirror[nm] = cp.asarray(a) if a.size else None
                    copied += a.nbytes
            self.mirror_key = key
        else:
            # rows the previous batch touched were rewritten by apply(); copy them again
            for d in range(dirs):
                rows = self.prev_touched[d]
                rows = rows[rows < min(getattr(view, names[d][0]).shape[0],
                                       getattr(view, names[d][1]).shape[0])]
                if rows.size == 0:
                    continue
                s_nm, d_nm, n_nm, l_nm = names[d]
                start = np.asarray(getattr(view, s_nm))
                deg = np.asarray(getattr(view, d_nm))
                self.mirror[s_nm][cp.asarray(rows)] = cp.asarray(start[rows].astype(np.int64))
                self.mirror[d_nm][cp.asarray(rows)] = cp.asarray(deg[rows].astype(np.int32))
                for arr_nm in (n_nm, l_nm):
                    src = getattr(view, arr_nm)
                    if src.size == 0:
                        continue
                    dc = pack_rows(rows, start, deg, src, np.zeros(0, np.int32))
                    if dc.colidx.size == 0:
                        continue
                    r = dc.rowidx.astype(np.int64)
                    fn = self._module(2, False).get_function("wm_scatter_rows")
                    fn((min(int(r.size), 4096),), (128,),
                       (cp.asarray(dc.rowptr), cp.asarray(start[r].astype(np.int64)),
                        np.int64(r.size), cp.asarray(dc.colidx), self.mirror[arr_nm]))
                    copied += dc.colidx.nbytes
        st["copy_bytes"] = st.get("copy_bytes", 0) + copied
        return self.mirror

    # ------------------------------------------------------------------- run
    def run(self, view: BatchView, plans: DeltaPlans, want_matches: bool) -> RawDelta:
        cp = self.cp
        eng = self.eng
        st: dict[str, Any] = {"policy": eng.cache, "copy_bytes": 0}
        eng.stats = st
        b = view.batch
        B = view.num_updates
        k = int(plans.k)
        P = plans.num_plans
        plus = np.zeros(B, dtype=np.int64)
        minus = np.zeros(B, dtype=np.int64)
        valid = np.flatnonzero(np.asarray(b.valid, dtype=bool)).astype(np.int32)
        empty = (np.empty((0, k), np.int32), np.empty(0, np.int64), np.empty(0, np.int8))
        touched = self._touched(view)
        n = int(view.n)
        self._grow(n)
        dirs = 2 if view.directed else 1
        t = time.perf_counter()
        # overlay rows: the device o_idx maps are updated only at the touched vertices
        for d in range(dirs):
            idx = view.o_idx if d == 0 else view.oi_idx
            self._scatter(self.oidx[d], self.prev_touched[d], touched[d],
                          np.asarray(idx)[touched[d]])
        if not view.directed:
            self.oidx[1] = self.oidx[0]
            self.slot[1] = self.slot[0]
        # D of the walks: the longest row seen (storage at the first batch, overlay since)
        if self.dmax == 1:
            for deg in (view.b_deg, view.bi_deg):
                if deg.size:
                    self.dmax = max(self.dmax, int(np.asarray(deg[:n]).max(initial=1)))
        for off in (view.o_off, view.oi_off):
            if off.size > 1:
                self.dmax = max(self.dmax, int(np.diff(off).max(initial=1)))
        if valid.size == 0 or P == 0:
            self.prev_touched = touched
            self.prev_touched_all = np.unique(np.concatenate(touched))
            eng.last_cached = np.zeros(0, np.int32)
            return RawDelta(plus, minus, *(empty if want_matches else (None,) * 3))
        keep: list[Any] = []

        def dev(a: np.ndarray, dtype: Any) -> int:
            a = np.ascontiguousarray(a, dtype=dtype)
            if a.size == 0:
                return 0
            x = cp.asarray(a)
            keep.append(x)
            st["copy_bytes"] += a.nbytes
            return int(x.data.ptr)

        ovl = []
        for d in range(dirs):
            pre = "o" if d == 0 else "oi"
            ovl.append({nm: dev(getattr(view, f"{pre}_{nm}"), dt) for nm, dt in
                        (("off", np.int64), ("nbr", np.int32), ("elab", np.int32),
                         ("ins", np.int32), ("dl", np.int32))})
        if not view.directed:
            ovl.append(ovl[0])
        upd = [dev(b.src, np.int32), dev(b.dst, np.int32), dev(b.op, np.int32),
               dev(b.elabel, np.int32), dev(valid, np.int32)]
        vlab = self._vlab(view)
        cache_arrays, store_host = self._cache(view, plans, touched, st)
        cache_arrays = list(cache_arrays)
        while len(cache_arrays) < 2:
            cache_arrays.append(cache_arrays[0] if cache_arrays else (self.dummy, self.dummy,
                                                                      None))
        keep.append(cache_arrays)
        # storage: host-mapped (zero-copy) or the device mirror
        names = [("b_start", "b_deg", "b_nbr", "b_elab"), ("bi_start", "bi_deg", "bi_nbr",
                                                          "bi_elab")]
        store: list[list[int]] = []
        if store_host:
            for d in range(dirs):
                row = []
                for nm in names[d]:
                    p_, alive = self.hostmap.ptr(getattr(view, nm))
                    if alive is not None:
                        keep.append(alive)
                    row.append(p_)
                store.append(row)
            self.hostmap.release_unused()
            st["fallback_copied_bytes"] = self.hostmap.fallback_bytes
        else:
            mir = self._mirror(view, st)
            for d in range(dirs):
                store.append([0 if mir.get(nm) is None else int(mir[nm].data.ptr)
                              for nm in names[d]])
        if not view.directed:
            store.append(store[0])
        n_store = min(n, view.b_start.shape[0], view.b_deg.shape[0])
        if view.directed:
            n_store = min(n_store, view.bi_start.shape[0], view.bi_deg.shape[0])
        acc = None
        if eng.profile:
            acc = cp.zeros(max(n, 1), dtype=cp.uint64)
            keep.append(acc)
        labeled = view.b_elab.size > 0
        ptrs = np.zeros(39, dtype=np.uint64)
        vals = []
        vals += [store[0][0], store[1][0]]                              # b_start
        vals += [store[0][1], store[1][1]]                              # b_deg
        vals += [int(self.oidx[0].data.ptr), int(self.oidx[1].data.ptr)]
        vals += [ovl[0]["off"], ovl[1]["off"]]
        vals += [int(self.slot[0].data.ptr), int(self.slot[1].data.ptr)]
        vals += [int(cache_arrays[0][0].data.ptr), int(cache_arrays[1][0].data.ptr)]
        vals += [store[0][2], store[1][2], int(cache_arrays[0][1].data.ptr),
                 int(cache_arrays[1][1].data.ptr), ovl[0]["nbr"], ovl[1]["nbr"]]   # nbr[6]
        if labeled:
            vals += [store[0][3], store[1][3],
                     int(cache_arrays[0][2].data.ptr) if cache_arrays[0][2] is not None else 0,
                     int(cache_arrays[1][2].data.ptr) if cache_arrays[1][2] is not None else 0,
                     ovl[0]["elab"], ovl[1]["elab"]]
        else:
            vals += [0] * 6
        vals += [ovl[0]["ins"], ovl[1]["ins"], ovl[0]["dl"], ovl[1]["dl"]]
        vals += [vlab] + upd[:4] + [upd[4]]
        row_base_slot = len(vals)
        vals += [0, 0 if acc is None else int(acc.data.ptr)]
        ptrs[: len(vals)] = np.array(vals, dtype=np.uint64)
        ptrs[36] = np.uint64(valid.size)
        tail = ptrs[37:].view(np.int32)
        tail[0] = P
        tail[1] = n
        tail[2] = n_store
        st["overlay_copy_s"] = time.perf_counter() - t
        plan_buf = _pack_plans(plans)
        st["overlay_entries"] = int(view.o_nbr.size + (view.oi_nbr.size if view.directed else 0))
        # --------------------------------------------------------- count pass
        mod = self._module(k, False)
        _set_const(cp, mod, ptrs, plan_buf)
        T = int(valid.size) * P
        counters = cp.zeros(_C_N, dtype=cp.uint64)
        plus_d = cp.zeros(max(B, 1), dtype=cp.uint64)
        minus_d = cp.zeros(max(B, 1), dtype=cp.uint64)
        fn = mod.get_function("wm_delta")
        blocks = self._blocks(fn, T)
        cp.cuda.get_current_stream().synchronize()
        t = time.perf_counter()
        fn((blocks,), (eng.warps_per_block * 32,),
           (np.int64(0), np.int64(T), counters, plus_d, minus_d, self.dummy, self.dummy,
            self.dummy, np.int64(0)))
        c = counters.get()
        st["kernel_s"] = time.perf_counter() - t
        raw_plus = plus_d.get()[:B].astype(np.int64)
        raw_minus = minus_d.get()[:B].astype(np.int64)
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
        mult = int(plans.multiplier)
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
                                plan_buf, keep)
            st["list_s"] = time.perf_counter() - t
        self.prev_touched = touched
        self.prev_touched_all = np.unique(np.concatenate(touched))
        del keep
        return RawDelta(plus, minus, *result)

    def _blocks(self, fn: Any, T: int) -> int:
        threads = self.eng.warps_per_block * 32
        try:
            per_sm = int(self.cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                fn.ptr, threads, 0))
        except Exception:
            per_sm = max(1, 32 // self.eng.warps_per_block)
        warps_needed = max(1, (T + 0) // 1)
        return max(1, min(max(1, per_sm) * self.sms,
                          (warps_needed + self.eng.warps_per_block - 1)
                          // self.eng.warps_per_block))

    def _list(self, k: int, P: int, B: int, valid: np.ndarray, per_upd: np.ndarray,
              ptrs: np.ndarray, row_base_slot: int, plan_buf: np.ndarray,
              keep: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Second pass: the rows of every update, in chunks of updates that fit the buffer."""
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
            blocks = self._blocks(fn, (e - a) * P)
            fn((blocks,), (self.eng.warps_per_block * 32,),
               (np.int64(a * P), np.int64(e * P), counters, self.dummy, self.dummy, out, sign,
                cursor, np.int64(first)))
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


def _set_const(cp: Any, mod: Any, ptrs: np.ndarray, plan_buf: np.ndarray) -> None:
    mem = mod.get_global("g")
    cp.ndarray((ptrs.size,), dtype=cp.uint64, memptr=mem).set(ptrs)
    pm = mod.get_global("wm_plan")
    cp.ndarray((plan_buf.size,), dtype=cp.int32, memptr=pm).set(plan_buf)
