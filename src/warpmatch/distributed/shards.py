"""Cutting one search into shards: disjoint parts of its search tree, sized by estimated cost.

What is where
-------------
- :func:`root_costs` — a cost estimate per root (depth-0 candidate) from degrees;
- :class:`Shard` — one part: a range of the plan's roots (less the hubs in it), a
  group of hubs, or one heavy root with a slice of its depth-1 candidates;
- :func:`make_shards` — the cut: the costliest roots dealt into a few groups of
  hubs, the rest in contiguous ranges of about equal estimated cost, a root heavier
  than one share split at depth 1 into slices of about equal neighbour degree (as
  the GPU engine splits heavy roots inside a device);
  :func:`default_shards` — how many when the caller does not say;
- :func:`shard_plan` — the :class:`~warpmatch.plan.Plan` a worker runs for a shard.

Exactness: the roots of the shards partition the plan's roots, and the depth-1
slices of a split root partition every vertex that depth 1 may take under it
(its neighbours, in either direction, within depth 1's candidate set), so every
match of the plan is a match of exactly one shard.

How it differs from the literature: PBE (§3) and STMatch split work by data
partitions or by warps inside one GPU; here the unit is a set of roots handed
to Dask, which balances shards between workers by work stealing; the estimate
only has to make shards of the same order, not equal.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from ..graph import Graph
from ..plan import Plan

__all__ = ["Shard", "root_costs", "cost_exponent", "make_shards", "shard_plan",
           "default_shards", "SHARDS_PER_WORKER", "MIN_SHARDS", "DEAL_ROUNDS"]

#: shards per worker when the caller does not say: enough for work stealing to even out
#: estimates that are off by a few times, few enough that per-task overhead stays small.
#: Measured on 4 H200s (10^8-edge power-law graph, one run): 33 shards beat 66 on 7 of 8
#: patterns of 2.7-8.7 s and tied on the 8th (square 1.65 s against 1.78, STMatch's
#: pattern 4 1.84 against 2.17, pattern 22 1.78 against 1.78). The shards' GPU seconds
#: summed grow with their number (square 5.65 s in 33, 5.85 in 66; pattern 4 6.47 and
#: 6.94; which per-search cost grows was not measured), so past the point where shards
#: balance, more of them only add cost.
SHARDS_PER_WORKER = 8

#: the fewest shards a search is cut into by default, whatever the cluster's size. The
#: cut, not only the balance, sets the cost: on a 10^8-edge power-law graph (4 H200s)
#: the GPU seconds summed over shards were lower with 33 shards than with 9 or 17 for
#: most of STMatch's patterns (pattern 22: 4.99 s against 6.42 and 7.44; pattern 4:
#: 6.51 against 7.34 and 8.42; presumably a shard of a few hubs leaves most of a GPU
#: idle, not measured), and with 17 shards on 2 GPUs one shard took 41-62% of patterns
#: 17, 20 and 22.
MIN_SHARDS = 32

#: hubs per hub group (:func:`make_shards`' ``deal``): the ``8 * (shards // 4)``
#: costliest roots go to ``shards // 4`` shards of their own. Measured on a 10^8-edge
#: power-law graph, 4 H200s (``bench/README.md``, session 15): against 4 per group,
#: STMatch's pattern 20 went from 4.50 s to 3.31 s on 4 GPUs (its next 30 hubs, cut in
#: two ranges, had held a third of the search and finished last), 14 from 0.86 to 0.66 s,
#: 22 from 1.43 to 1.31 s, every light pattern faster and the rest within 2%; the shards'
#: GPU seconds summed fell too (pattern 20 on 4 GPUs: 12.5 s against 15.3). With 4
#: per group (session 13) pattern 22 had gone from 2.99x to 3.59x against one GPU.
DEAL_ROUNDS = 8


def default_shards(workers: int) -> int:
    """Shards a search is cut into on ``workers`` workers when the caller does not say:
    :data:`SHARDS_PER_WORKER` each, at least :data:`MIN_SHARDS`."""
    return max(MIN_SHARDS, SHARDS_PER_WORKER * max(1, int(workers)))


@dataclass(frozen=True)
class Shard:
    """One part of a search: roots ``lo..hi-1`` of the plan (indices into
    ``plan.roots``) less those in ``skip`` (hubs, in other shards), plus those in
    ``add`` (a group of hubs, with ``lo == hi``); for a split heavy root
    (``hi == lo + 1``), the depth-1 candidates ``depth1`` it is limited to (sorted
    ids), else ``None``."""
    index: int
    lo: int
    hi: int
    cost: float
    depth1: np.ndarray | None = None
    add: tuple[int, ...] = ()
    skip: tuple[int, ...] = ()

    @property
    def roots(self) -> int:
        return self.hi - self.lo - len(self.skip) + len(self.add)

    def root_ids(self, plan: Plan) -> np.ndarray:
        """The shard's roots: vertex ids from ``plan.roots``, sorted as they are."""
        r = plan.roots[self.lo:self.hi]
        if self.skip:
            keep = np.ones(r.size, bool)
            keep[np.asarray(self.skip, np.int64) - self.lo] = False
            r = r[keep]
        if self.add:
            r = np.sort(np.concatenate([r, plan.roots[np.asarray(self.add, np.int64)]]))
        return r


def root_costs(graph: Graph, plan: Plan) -> np.ndarray:
    """Estimated search cost of each root of ``plan``: ``(1 + degree)^min(k - 1, 2)``.

    A rough, cheap (``O(roots)``) stand-in for the size of a root's search tree:
    one level for an edge query, two for larger ones (the depth where a
    power-law graph's hubs dominate). Shards only need to be of the same order;
    Dask's work stealing evens out the rest. (:func:`make_shards` computes it on the
    fly, per block of roots, instead of keeping this array.)
    """
    return _costs_at(graph.degree, plan.roots, np.arange(plan.roots.size),
                     float(cost_exponent(plan)))


def cost_exponent(plan: Plan) -> int:
    """The exponent of :func:`root_costs`: ``min(k - 1, 2)``.

    Tried and not taken: 2.5 for GPU workers on queries of 5 or more vertices. On a
    10^8-edge power-law graph (H200s, 33 shards), STMatch's patterns 4, 14, 17 and 22,
    it cut the GPU's costliest shard (a few hubs) from 10.8-34% of the search to
    5.8-14.2%, but 4 GPUs took 8-15% longer on patterns 4, 6, 11, 12 and 14 (two runs
    on two 4-H200 hosts; the square, cut the same in both, 5% longer in the second)
    and pattern 22 gained 2.6%; on the CPU engine (10^7 edges) it made the run of
    ~10^6 low-degree roots the costliest shard (12.8-18% against 8.7-9.3%).
    ``bench/shard_cuts.py`` measures a cut shard by shard.
    """
    return min(max(plan.k - 1, 0), 2)


def _depth1_universe(graph: Graph, plan: Plan, root: int) -> np.ndarray | None:
    """Every vertex depth 1 may take under ``root``, sorted, or ``None`` if depth 1
    is not joined to depth 0 (then the root cannot be split at depth 1)."""
    if plan.k < 2:
        return None
    lo, hi = int(plan.bn_ptr[1]), int(plan.bn_ptr[2])
    if 0 not in plan.bn_pos[lo:hi].tolist():
        return None
    nb = graph.indices[graph.indptr[root]:graph.indptr[root + 1]]
    if graph.directed and graph.in_indptr is not None:
        nb = np.concatenate([nb, graph.in_indices[graph.in_indptr[root]:
                                                  graph.in_indptr[root + 1]]])
    u = np.unique(nb)
    c1 = plan.candidates(1)
    if c1 is not None:
        u = np.intersect1d(u, c1, assume_unique=True)
    return u.astype(plan.cand_ids.dtype, copy=False)


def make_shards(graph: Graph, plan: Plan, shards: int, hub: float = 1.0,
                deal: int | None = None, exponent: float | None = None) -> list[Shard]:
    """Cut ``plan``'s search into about ``shards`` parts of similar estimated cost.

    Parameters
    ----------
    graph : Graph
        The graph the plan was built for.
    plan : Plan
    shards : int
        The number of parts wanted (at least 1). Fewer come back when there
        are fewer roots, or when the hub groups hold more than their share of
        the estimate (the ranges are cut by the share of the whole: 29 of 40 on
        email-Eu-core, 36 of 32 on a 10^8-edge power-law graph); a few more
        when heavy roots are split.
    hub : float, optional
        A root whose estimate exceeds ``1 / hub`` of a shard's is cut apart: its
        own shards, split at depth 1 into pieces of about that estimate. The
        default, 1, cuts apart only roots heavier than a whole shard; more cuts
        hubs finer where the estimate undercounts them (an experiment's knob:
        ``bench/shard_cuts.py --hubs``; nothing else sets it). Below 1 counts as 1.
        Measured on an H200 (10^8 edges, 32 shards): 16 took STMatch's pattern 22 from
        one shard of 34% of the search to 5%, but its 98 depth-1 slices added 7-30% GPU
        time to the square and patterns 4 and 17 (``bench/README.md``): not the default.
    deal : int, optional
        Hubs per hub group (default :data:`DEAL_ROUNDS`): the ``deal * (shards //
        4)`` costliest roots below that limit are dealt, costliest first, one to
        each of ``shards // 4`` groups a round (forth, then back), and each group is
        a shard of its own; the other roots are cut in ranges. With 0, every root
        is in a range, and the hubs, adjacent in a degree-ordered graph, share a
        shard whose real cost the estimate undercounts: STMatch's pattern 22 put
        34% of its search in one shard of 9 hubs. Dealing hubs into the ranges
        instead (one per shard) made every shard slower: a hub among 10^5 light
        roots took longer than among other hubs (``bench/README.md``).
    exponent : float, optional
        ``e`` of the ``(1 + degree)^e`` estimate; the default is
        :func:`cost_exponent` (an experiment's knob: ``bench/shard_cuts.py --cuts``).

    Returns
    -------
    list of Shard
        Heavy roots' shards, hub groups, then ranges in root order, indexed
        ``0..len-1``; empty when the plan has no roots.
    """
    nroots = int(plan.roots.size)
    if nroots == 0 or plan.empty_reason is not None:
        return []
    # the estimate is computed on the fly: an array of 10^7 costs (and its page faults)
    # took longer than the passes; blocks' sums and maxima let the later passes skip
    # most roots (12.5M roots, a 2-core box: 60 ms for the cut in root order from an
    # array of costs, 124 ms with the hub groups, 20 ms so)
    deg, roots = graph.degree, plan.roots
    e = float(cost_exponent(plan) if exponent is None else exponent)
    bsum, bmax = _blocks(deg, roots, e, _BLOCK)
    total = float(bsum.sum())
    want = max(1, int(shards))
    share = total / want
    limit = share / max(1.0, float(hub))
    rounds = DEAL_ROUNDS if deal is None else max(0, int(deal))
    groups = max(1, want // 4)
    k = rounds * groups if want > 1 else 0
    heavy, hubs = _heavy_and_top(deg, roots, e, limit, k, bmax, _BLOCK)
    if nroots - heavy.size <= 2 * k:         # too few roots for groups of hubs
        hubs = hubs[:0]

    def cost(idx: Any) -> np.ndarray:
        return _costs_at(deg, roots, np.atleast_1d(np.asarray(idx, np.int64)), e)

    out: list[Shard] = []
    for r in heavy.tolist():
        # a heavy root: its own shard, or several if depth 1 can be split
        uni = _depth1_universe(graph, plan, int(plan.roots[r]))
        cr = float(cost(r)[0])
        parts = int(min(np.ceil(cr / limit), 0 if uni is None else uni.size))
        if parts >= 2:
            for piece, frac in _slices(graph, uni, parts):
                out.append(Shard(len(out), r, r + 1, cr * frac, piece))
        else:
            out.append(Shard(len(out), r, r + 1, cr))
    if hubs.size:
        # hub j (costliest first) to group 0, 1, .., groups-1, then back, and so on
        pos = np.arange(hubs.size) % groups
        to = np.where((np.arange(hubs.size) // groups) % 2 == 0, pos, groups - 1 - pos)
        for grp in range(groups):
            mine = np.sort(hubs[to == grp])
            first = int(mine[0])
            out.append(Shard(len(out), first, first, float(cost(mine).sum()), None,
                             tuple(mine.tolist())))
    marked = np.union1d(heavy, hubs)         # heavy roots and hubs: few, sorted
    lo, hi, rc = _ranges(deg, roots, e, marked, share, bsum, _BLOCK)
    for a, b, c in zip(lo.tolist(), hi.tolist(), rc.tolist()):
        skip = marked[np.searchsorted(marked, a):np.searchsorted(marked, b)]
        out.append(Shard(len(out), a, b, c, None, (), tuple(skip.tolist())))
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _power1(c, e):  # pragma: no cover - compiled
    """``c^e``, the estimate's power."""
    if e == 2.0:
        return c * c
    if e == 1.0:
        return c
    if e == 0.0:
        return 1.0
    return c ** e


@numba.njit(cache=True, nogil=True, inline="always")
def _rc(deg, roots, i, e):  # pragma: no cover - compiled
    """Root ``i``'s estimate ``(1 + degree)^e`` (:func:`root_costs`)."""
    return _power1(1.0 + deg[roots[i]], e)


#: roots per block of :func:`_blocks`
_BLOCK = 1024


@numba.njit(cache=True, nogil=True, fastmath=True)
def _blocks(deg, roots, e, B):  # pragma: no cover - compiled
    """The estimates' sum and maximum over each block of ``B`` roots (vectorised:
    ``fastmath`` lets the sums reassociate; the estimate only balances shards)."""
    nb = (roots.size + B - 1) // B
    bsum = np.zeros(nb, np.float64)
    bmax = np.zeros(nb, np.float64)
    for b in range(nb):
        acc = 0.0
        mx = 0
        for i in range(b * B, min(roots.size, (b + 1) * B)):
            d = deg[roots[i]]
            acc += _rc(deg, roots, i, e)
            mx = d if d > mx else mx         # the costliest root has the largest degree
        bsum[b] = acc
        bmax[b] = _power1(1.0 + mx, e)
    return bsum, bmax


@numba.njit(cache=True, nogil=True)
def _costs_at(deg, roots, idx, e):  # pragma: no cover - compiled
    """The estimates of roots ``idx`` (indices into ``roots``)."""
    out = np.empty(idx.size, np.float64)
    for j in range(idx.size):
        out[j] = _rc(deg, roots, idx[j], e)
    return out


def _heavy_and_top(deg: np.ndarray, roots: np.ndarray, e: float, limit: float, k: int,
                   bmax: np.ndarray, B: int) -> tuple[np.ndarray, np.ndarray]:
    """The indices of the estimates above ``limit``, in order, and of the ``k`` largest
    not above it, costliest first (ties: the lower index first).

    Only a few blocks are read: those whose maximum (``bmax``) passes ``limit`` and
    those of the ``k`` largest maxima not above it (with their ties). Any other block's
    roots are below ``k`` roots of those blocks, so none of them is among the ``k``.
    """
    light = np.flatnonzero(bmax <= limit)
    pick = bmax > limit
    if k > 0 and light.size:
        if light.size > k:
            t = np.partition(bmax[light], light.size - k)[light.size - k]
            pick |= (bmax >= t) & (bmax <= limit)
        else:
            pick[light] = True
    blocks = np.flatnonzero(pick)
    if blocks.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    idx = (blocks[:, None] * B + np.arange(B)).ravel()
    idx = idx[idx < roots.size]
    c = _costs_at(deg, roots, idx, e)
    over = c > limit
    heavy = idx[over]
    idx, c = idx[~over], c[~over]
    top = np.lexsort((idx, -c))[:k] if k > 0 else np.zeros(0, np.int64)
    return heavy, idx[top]


@numba.njit(cache=True, nogil=True)
def _ranges(deg, roots, e, marked, share, bsum, B):  # pragma: no cover - compiled
    """Contiguous runs of the roots not in ``marked`` (sorted indices), in order: each
    takes roots while its estimate stays within ``share`` (at least one root). Returns
    each run's first root, one past its last root (marked roots inside are the
    caller's to skip) and its estimate. A whole block (``bsum``) that fits, with no
    marked root, is taken at once."""
    n = roots.size
    los = []
    his = []
    cs = []
    i = 0
    j = 0                                   # the next marked index not behind i
    while True:
        while i < n and j < marked.size and marked[j] <= i:
            if marked[j] == i:
                i += 1
            j += 1
        if i >= n:
            break
        lo = i
        acc = _rc(deg, roots, i, e)
        last = i
        i += 1
        while i < n:
            if i % B == 0 and i + B <= n and (j == marked.size or marked[j] >= i + B) \
                    and acc + bsum[i // B] <= share:
                acc += bsum[i // B]
                last = i + B - 1
                i += B
                continue
            if j < marked.size and marked[j] == i:
                i += 1
                j += 1
                continue
            c = _rc(deg, roots, i, e)
            if acc + c > share:
                break
            acc += c
            last = i
            i += 1
        los.append(lo)
        his.append(last + 1)
        cs.append(acc)
        i = last + 1
        while j > 0 and marked[j - 1] >= i:  # marked roots past the run: not passed yet
            j -= 1
    k = len(los)
    lo_a = np.empty(k, np.int64)
    hi_a = np.empty(k, np.int64)
    c_a = np.empty(k, np.float64)
    for j in range(k):
        lo_a[j] = los[j]
        hi_a[j] = his[j]
        c_a[j] = cs[j]
    return lo_a, hi_a, c_a


def _slices(graph: Graph, uni: np.ndarray, parts: int) -> list[tuple[np.ndarray, float]]:
    """``uni`` (a heavy root's depth-1 vertices, sorted) cut into at most ``parts``
    contiguous, non-empty slices of about equal weight ``1 + degree``, each with its
    share of the weight. A slice holding another hub is heavier than one of leaves:
    equal counts put a root's hub neighbours, with most of its subtree, in one slice."""
    w = 1.0 + graph.degree[uni].astype(np.float64)
    cw = np.cumsum(w)
    cuts = np.searchsorted(cw, cw[-1] * np.arange(1, parts) / parts, side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [uni.size]]))
    return [(uni[a:b], float(cw[b - 1] - (cw[a - 1] if a else 0.0)) / float(cw[-1]))
            for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def shard_plan(plan: Plan, shard: Shard) -> Plan:
    """The plan a worker runs for ``shard``: ``plan`` limited to the shard's roots
    (and depth-1 slice)."""
    sets = {0: shard.root_ids(plan)}
    if shard.depth1 is not None:
        sets[1] = shard.depth1
    return plan.with_candidates(sets)
