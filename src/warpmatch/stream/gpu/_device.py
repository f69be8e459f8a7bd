"""Device state of the GPU delta engine across batches, and one batch's run.

Map: :class:`_DeviceState`: buffers kept across batches and refreshed where the
last batch changed them (:meth:`~_DeviceState._index`, :meth:`~_DeviceState._mirror`),
the compiled modules (:meth:`~_DeviceState._module`), the cache step (the
:class:`._device_cache._CacheSteps` mixin), :meth:`~_DeviceState.run` (one
batch: overlay and updates to the device, the counting kernel, listing by
:meth:`~_DeviceState._list`). GCSM §III (the per-batch workflow) and §V-C.

What differs from GCSM: see :mod:`.engine`'s docstring.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._progress import compiling
from ...engine.gpu.device import resident_blocks
from ...errors import BudgetError
from ..filter import NlfFilter
from ..types import BatchView, DeltaPlans, RawDelta
from .cache import parallel_copy, row_bytes
from ._device_cache import _CacheSteps
from ._hostmem import _addr, _HostMap, _Staging
from ._modules import (_C_B_CACHE, _C_B_OVL, _C_B_STORE, _C_N, _C_R_CACHE, _C_R_OVL, _C_R_STORE,
                       _MODULES, PLAN_CAP, _fmt, _pack_plans, _set_const, _source)
from .walk import HOST_COST, Workspace

if TYPE_CHECKING:
    from .engine import GpuDeltaEngine


class _DeviceState(_CacheSteps):
    """Device buffers that live across batches, and one batch's execution.

    Kept on the device across batches, refreshed incrementally where the last
    batch changed them (the rows it touched, the vertices it added): the
    overlay map ``o_idx``, the cache's slot map, vertex labels, the *row index*
    (``start``, ``degree`` of every storage row; O(n), so that finding a row
    costs no host round trip, only reading its entries does) and, for policy
    ``"device"``, a mirror of the storage's entries. "Incrementally" is safe
    only when every row that changed since the last batch is known: the graph's
    edit log (:mod:`warpmatch.stream._editlog`) names the rows its ``apply`` and
    the sequential path's in-place runs rewrote, and the storage buffers'
    addresses are compared; anything else (no log, an edit of unknown rows, new
    buffers) refreshes everything.
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
        self.mark: int | None = None         # the graph's edit-log mark at the last batch
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
    def _changed_rows(self, view: BatchView, dirs: int, edited: np.ndarray | None
                      ) -> list[np.ndarray]:
        """Storage rows per direction that changed since the last batch: those the
        graph's edit log names (``edited``: the last batch's rows that apply() rewrote,
        the sequential path's runs since; either direction's) and the vertices added
        since (``edited`` None: nothing is incremental, every row is copied anyway)."""
        out = []
        for d in range(dirs):
            rows = self.prev_touched[d] if edited is None else edited
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
        # the rows the graph's edits rewrote since the last batch (its own apply, the
        # sequential path's in-place runs: stream/_editlog.py), or None: unknown
        log = getattr(eng.graph, "edits", None)
        edited = None if log is None else log.since(self.mark)
        self.mark = None if log is None else log.mark()
        self.storage_key = self._storage_key(view)
        self.incremental = edited is not None
        self.changed = self._changed_rows(view, dirs, edited)
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
        sub_ptr = pre if pre is not None else self._subtasks(mod, T, k)
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
        T = int(sub_host.size) - 2          # then the total and the chunk size
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
