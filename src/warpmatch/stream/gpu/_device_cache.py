"""The GPU delta engine's cache steps: which rows to cache and how they reach the device.

Map: :meth:`_CacheSteps._budget` (bytes) < the policies' scores
(:meth:`~_CacheSteps._estimate_gpu`, GCSM's walks on the host by
:mod:`.walk`, :meth:`~_CacheSteps._by_degree`) < :meth:`~_CacheSteps._select_device`
(the best rows per byte) < :meth:`~_CacheSteps._gather` (DCSR packed on the
device from mapped host storage) < :meth:`~_CacheSteps._cache` (one batch's
whole cache step); and :meth:`~_CacheSteps._subtasks` with :func:`split_chunk`
(the tasks cut into sub-tasks, which the sampling and counting passes share). A
mixin of :class:`._device._DeviceState`, whose state it reads; GCSM §IV (frequency
estimation) and §V-B (the DCSR cache).

What differs from GCSM: see :mod:`.engine`'s docstring (estimate on the GPU by
default, rows chosen per byte, a kept selection copies only the rows the last
batch rewrote, unused budget filled by degree).
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..types import BatchView, DeltaPlans
from ._modules import _C_B_STORE, _C_N, _kernels, _mix64, _set_const
from .walk import default_walks, estimate_access_sparse

#: the "gpu" estimator samples every batch whose cache goes stale within a batch while the
#: estimate costs on average at most this share of the counting kernel (_next_sample). On
#: 10^7 edges (bench/stream.py, H100) the 4-cycle's estimate cost 13-35% of its kernel and
#: paid for itself; the diamond's 48-130%, and sampling it every batch ran 0.75-0.81x no
#: cache.
FRESH_COST = 0.4


#: the most depth-2 candidates of one sub-task (kernels/delta.cu, "Work"): a warp's
#: first step tests them at once, one a lane
CHUNK_MAX = 32
#: sub-tasks per multiprocessor that :func:`split_chunk` aims at (an H100 holds 132 x 64
#: warps): a one-update 4-cycle batch on a 10^7-edge power-law graph is a few tasks whose
#: depth-2 lists hold thousands of candidates, and chunks of 32 kept a few hundred warps
#: busy for milliseconds
SPLIT_PER_SM = 256


def split_chunk(xp: Any, lens: Any, target: int) -> Any:
    """The depth-2 candidates per sub-task for tasks of ``lens`` candidates: about
    ``target`` sub-tasks in all, between 1 and :data:`CHUNK_MAX` candidates each.

    A 0-d array of ``xp`` (left on the device: no wait for the lengths).

    Examples
    --------
    >>> int(split_chunk(np, np.array([10, 6]), 1000)), int(split_chunk(np, np.array([64000]), 1000))
    (1, 32)
    >>> int(split_chunk(np, np.array([8000, 0]), 1000))
    8
    """
    return xp.clip(lens.sum() // max(1, int(target)), 1, CHUNK_MAX)


class _CacheSteps:
    """The cache steps of :class:`._device._DeviceState` (module docstring)."""

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
        slot's slack (kernels/storage.cu ``wm_refresh_rows``); the whole cache is
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
        sub_ptr = self._subtasks(mod, T, k)
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

    def _subtasks(self, mod: Any, T: int, k: int) -> Any:
        """Every task's depth-2 list cut into sub-tasks (kernels/delta.cu, "Work"):
        ``T + 2`` entries, the exclusive prefix sums over tasks, their total, then the
        sub-tasks' size (:func:`split_chunk`). Left on the device: the counting kernel
        reads the total and the size itself (``s_end`` < 0), so the host launches it
        without waiting."""
        cp = self.cp
        lens = cp.empty(T, dtype=cp.int64)
        mod.get_function("wm_delta_len")((max(1, min((T + 255) // 256, 32 * self.sms)),),
                                         (256,), (np.int64(0), np.int64(T), lens))
        sub_ptr = cp.zeros(T + 2, dtype=cp.int64)
        chunk: Any = CHUNK_MAX
        if k >= 4 and self.eng.split:
            chunk = split_chunk(cp, lens, self.eng.split_target or SPLIT_PER_SM * self.sms)
        cp.cumsum((lens + (chunk - 1)) // chunk, out=sub_ptr[1:T + 1])
        sub_ptr[T + 1:] = chunk
        self.last_sub_ptr, self.last_lens = sub_ptr, lens     # (read by the tests)
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
