"""Whole counts from homomorphism counts (issue 23: human's queries have 10^11 to 10^23
embeddings, which no search enumerates in a minute): ``inj(Q) = sum over the quotients
Q/σ of μ(σ) hom(Q/σ)`` (:mod:`warpmatch.plan.spasm` says why it is exact), each
``hom`` counted by variable elimination over the quotient, modulo a few primes.

Map: :class:`HomCounter` (one data graph: its label classes and the dense 0/1 blocks of
its arcs between two classes, built on first use; :meth:`~HomCounter.consistent`, the
query's arc-consistent domains) < :meth:`HomCounter.plan` (an elimination order) <
:meth:`HomCounter.hom` (one quotient's homomorphisms by variable elimination, modulo each
prime, or in floating point for a bound) < :meth:`HomCounter.hom_split` (a quotient whose
tables would be too large, or whose elimination costs more than fixing a vertex projects,
split by fixing a vertex to each of its data vertices; :meth:`HomCounter.narrow` cuts
its neighbours' domains to the data vertex's neighbours) < :meth:`HomCounter.table` (the
quotients numbered for the compiled sum, :mod:`warpmatch._homkernel`) <
:func:`count_hombasis` (the whole sum: the partitions whose blocks' members share no
data vertex left out, the number of primes from a bound, every quotient by the compiled
kernel or numpy, the Chinese remainder of the sums) < :func:`hombasis_applies`,
:func:`plan_hombasis`, :func:`warm_kernel`. One vertex's elimination over numpy or CuPy
tables is :mod:`warpmatch._homelim`'s.

Variable elimination (a sum of products over a tree decomposition, as in counting
homomorphisms of bounded treewidth, Díaz, Serna and Thilikos 2002): a query vertex ``x``
is summed out by multiplying the tables that hold it and summing over its data vertices,
which leaves one table over its neighbours; the order is greedy, least work first among
the vertices whose tables fit :data:`MAX_TABLE`.
Arc blocks are 0/1 matrices over two label classes; the tables hold counts modulo primes
below 2^26, in float64: a product of two residues is below 2^52, and a sum over a class
of residues times 0/1 entries is exact for classes below 2^27 vertices; contractions
with a block are BLAS matrix products.

How it differs from the papers: none of the subgraph-matching papers (GENEVA, gMatch,
EGSM, RapidFlow) counts this way. It pays where labels keep the classes and the number of
quotients small and the embeddings are many: there its cost is the quotients' eliminations,
not the embeddings'. From :data:`KERNEL_MIN` quotients on, compiled code sums them on
every core (9x numpy's speed and more on yeast's 24-vertex queries, whose eliminations
are about 10^4 multiply-adds: numpy's calls were the cost); numpy takes the quotients whose
tables do not fit its scratch, on the GPU (CuPy) for those of at least
:data:`DEVICE_MIN_FLOPS` where the caller asks. Partitions that differ by swapping twins
are summed once, times their number (:func:`~warpmatch.plan.spasm.twin_orbits`). Not
here: quotients merged up to isomorphism otherwise, arc consistency per quotient (the
domains are the whole query's, intersected over a block; tried per pair of vertices on
yeast's queries, it emptied no domain the intersection had not), messages shared between
quotients.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np
from numba import get_num_threads

from ._homelim import eliminate, last_block
from ._homkernel import POOL_ENTRIES, SPLIT_WORK, QuotientTable, sum_range
from .graph.csr import Graph
from .plan.spasm import (HOM_BUDGET_S, MAX_TERMS, Quotient, block_coef, class_partitions,
                         quotient_of, spasm_applies, spasm_plan_applies, term_count,
                         twin_orbits)
from .query.model import ANY, Query

__all__ = ["HomCounter", "count_hombasis", "hombasis_applies", "warm_kernel", "MAX_TERMS",
           "MAX_TABLE", "MAX_BLOCK", "HOM_BUDGET_S", "plan_hombasis"]

#: the most entries (times the primes) of one table of an elimination
MAX_TABLE = 1 << 24
#: the most multiply-adds (times the primes) of one quotient's elimination
MAX_FLOPS = 4e9
#: the most entries of one 0/1 block of arcs between two label classes
MAX_BLOCK = 1 << 24
#: the most eliminations of one count (a quotient whose tables are too large is split by
#: fixing a vertex to each of its data vertices in turn, :meth:`HomCounter.hom_split`)
SPLIT_BUDGET = 50_000
#: the most eliminations one quotient is split into
SPLIT_MAX = 2_000
#: the multiply-adds (times the primes) of a quotient's elimination above which fixing a
#: vertex is weighed against it (:meth:`HomCounter._split_pays`, from ``SPLIT_PROBES`` of
#: the vertex's data vertices; tests: negative, always split)
SPLIT_ABOVE = 1e7
SPLIT_PROBES = 4
#: the primes' size: residues below 2^26, so that a product of two is exact in float64
PRIME_BITS = 26
#: the fewest quotients summed by the compiled kernel (:mod:`warpmatch._homkernel`); fewer
#: go through numpy one by one
KERNEL_MIN = 16
#: int64 entries of each thread's scratch for the kernel's tables (a quotient whose tables
#: do not fit goes to numpy)
KERNEL_POOL = POOL_ENTRIES
#: the kernel's work per quotient above which it weighs a split (tests: negative, always)
KERNEL_SPLIT_WORK = SPLIT_WORK
#: the fewest multiply-adds (times the primes) of a quotient's elimination on the GPU where
#: the count may use it: below, its kernel launches (a few per vertex, ~10 µs each) cost
#: more than numpy's work on the host
DEVICE_MIN_FLOPS = 4e6
#: seconds of the sum after which its projection is taken as it is: before, a projection
#: declines the count only past twice the budget (its first quotients are few)
PROJECT_SURE_S = 1.0


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in (2, 7, 61):            # deterministic below 4,759,123,141
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _primes(count: int) -> list[int]:
    """The ``count`` largest primes below ``2**PRIME_BITS``."""
    out: list[int] = []
    n = (1 << PRIME_BITS) - 1
    while len(out) < count:
        if _is_prime(n):
            out.append(n)
        n -= 2
    return out


class HomCounter:
    """Homomorphism counts of labeled quotients in one data graph.

    Parameters
    ----------
    g : Graph
        A graph with vertex labels and no self-loop.
    device : module, optional
        CuPy, for the eliminations of at least :data:`DEVICE_MIN_FLOPS` multiply-adds (the
        tables on the GPU; the blocks built on the host and copied once); ``None``: all
        with numpy on the host.
    """

    def __init__(self, g: Graph, device: Any = None) -> None:
        if g.vertex_labels is None:
            raise ValueError("counting from homomorphisms needs vertex labels")
        self.g = g
        vl = np.asarray(g.vertex_labels, dtype=np.int64)
        self._vl = vl
        order = np.argsort(vl, kind="stable")
        labs, starts, sizes = np.unique(vl[order], return_index=True, return_counts=True)
        self.members = {int(lab): order[s:s + n] for lab, s, n in zip(labs, starts, sizes)}
        # each vertex's position in its label class
        self._pos = np.empty(g.n, dtype=np.int64)
        for ids in self.members.values():
            self._pos[ids] = np.arange(ids.size)
        self._blocks: dict[tuple[int, int, int], np.ndarray] = {}
        self._subs: dict[tuple[Any, ...], np.ndarray] = {}
        self._doms_of: list[np.ndarray] | None = None
        self._doms: dict[tuple[int, ...], np.ndarray] = {}
        self.device = device
        self._dev: dict[Any, Any] = {}
        self._flops = 0.0               # the last plan's multiply-adds
        self.on_device = 0              # eliminations run on the device

    def size(self, label: int) -> int:
        """How many data vertices carry ``label``."""
        ids = self.members.get(int(label))
        return 0 if ids is None else int(ids.size)

    def block(self, la: int, lb: int, el: int) -> np.ndarray:
        """The 0/1 float64 matrix of arcs from class ``la`` to class ``lb`` whose label is
        ``el`` (``ANY``: any), rows and columns in the classes' order."""
        key = (la, lb, el)
        got = self._blocks.get(key)
        if got is not None:
            return got
        g = self.g
        rows_ids = self.members.get(la, np.zeros(0, dtype=np.int64))
        out = np.zeros((rows_ids.size, self.size(lb)), dtype=np.float64)
        indptr = np.asarray(g.indptr, dtype=np.int64)
        starts = indptr[rows_ids]
        lens = indptr[rows_ids + 1] - starts
        total = int(lens.sum())
        if total:
            rows = np.repeat(np.arange(rows_ids.size), lens)
            first = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            at = first + np.arange(total)
            nbr = np.asarray(g.indices, dtype=np.int64)[at]
            keep = self._vl[nbr] == lb
            if el != ANY:
                keep &= np.asarray(g.edge_labels)[at] == el
            out[rows[keep], self._pos[nbr[keep]]] = 1.0
        out.flags.writeable = False
        self._blocks[key] = out
        return out

    def consistent(self, q: Query) -> list[np.ndarray]:
        """Each query vertex's data vertices that some homomorphism may take, as a 0/1
        mask over its label class: arc consistency (a vertex stays while it has an arc
        of each of the query vertex's arcs into the other end's mask) to its fixed
        point. Sound for the quotients too: a homomorphism of ``q/σ`` is one of ``q``
        constant on the blocks, so a block's vertex lies in all its members' masks."""
        labels = np.asarray(q.vertex_labels).tolist()
        masks = [np.ones(self.size(lab)) for lab in labels]
        arcs = [(int(a), int(b), int(el)) for (a, b), el in
                zip(np.asarray(q.edges).tolist(), np.asarray(q.edge_labels).tolist())]
        changed = True
        while changed:
            changed = False
            for a, b, el in arcs:
                blk = self.block(labels[a], labels[b], el)
                for u, keep in ((a, blk @ masks[b]), (b, blk.T @ masks[a])):
                    new = masks[u] * (keep > 0)
                    if new.sum() < masks[u].sum():
                        masks[u] = new
                        changed = True
        return masks

    def plan(self, quo: Quotient, width: int, doms: list[np.ndarray]) -> list[int] | None:
        """A greedy elimination order for ``quo`` (the vertex whose table is smallest
        next), or ``None`` where some table would pass :data:`MAX_TABLE` entries (times
        ``width``, the number of primes) or a block :data:`MAX_BLOCK`. ``doms``: each
        quotient vertex's positions in its label class (:meth:`domains`)."""
        k = len(quo.labels)
        dom = [int(d.size) for d in doms]
        # the factors by id (scope, is a 0/1 block), and the ids of those holding each vertex
        scopes: dict[int, tuple[frozenset[int], bool]] = {}
        holds: list[set[int]] = [set() for _ in range(k)]
        for i, (a, b, _) in enumerate(quo.arcs):
            if dom[a] * dom[b] > MAX_BLOCK:
                return None
            scopes[i] = (frozenset((a, b)), True)
            holds[a].add(i)
            holds[b].add(i)
        nxt_id = len(scopes)
        alive = set(range(k))
        order = []
        flops = 0.0
        while alive:
            # each vertex's work (the product of its tables' domains), least first; the
            # first whose largest table fits is taken
            ranked = []
            for v in alive:
                union = frozenset((v,)).union(*(scopes[i][0] for i in holds[v]))
                ranked.append((math.prod(float(dom[u]) for u in union), v))
            ranked.sort()
            best, best_cost = -1, math.inf
            for work, v in ranked:
                _, acc = last_block(v, [(sorted(scopes[i][0]), scopes[i][1])
                                         for i in holds[v]], dom)
                if max(acc, work / max(dom[v], 1)) * width <= MAX_TABLE:
                    best, best_cost = v, work
                    break
            if best < 0:
                return None
            flops += best_cost * width
            if flops > MAX_FLOPS:
                return None
            self._flops = flops
            order.append(best)
            alive.discard(best)
            mine = holds[best]
            if mine:
                union = frozenset().union(*(scopes[i][0] for i in mine)) - {best}
                for i in list(mine):
                    for u in scopes.pop(i)[0]:
                        if u != best:
                            holds[u].discard(i)
                holds[best] = set()
                if union:
                    scopes[nxt_id] = (union, False)
                    for u in union:
                        holds[u].add(nxt_id)
                    nxt_id += 1
        return order

    def domains(self, quo: Quotient, masks: list[np.ndarray]) -> list[np.ndarray]:
        """Each quotient vertex's positions in its label class: those in every member's
        mask (:meth:`consistent`; kept per block while the masks stay the same)."""
        if self._doms_of is not masks:
            self._doms_of, self._doms = masks, {}
        out = []
        for blk in quo.blocks:
            got = self._doms.get(blk)
            if got is None:
                got = self._doms[blk] = np.flatnonzero(_block_mask(masks, blk))
            out.append(got)
        return out

    def fits(self, masks: list[np.ndarray]) -> Callable[[tuple[int, ...]], bool]:
        """The test of a block for :func:`~warpmatch.plan.spasm.quotients`: whether its
        members' masks share a data vertex (monotone: a block that holds one that does
        not fit does not either)."""
        seen: dict[tuple[int, ...], bool] = {}

        def fits(blk: tuple[int, ...]) -> bool:
            got = seen.get(blk)
            if got is None:
                got = seen[blk] = bool(_block_mask(masks, blk).any())
            return got
        return fits

    def table(self, q: Query, per_class: list, masks: list[np.ndarray], primes: list[int],
              sizes: list[list[int]] | None = None) -> QuotientTable:
        """The quotients of ``q`` numbered for :func:`~warpmatch._homkernel.sum_range`:
        ``per_class`` from :func:`~warpmatch.plan.spasm.class_partitions` (or one per orbit
        from :func:`~warpmatch.plan.spasm.twin_orbits`, ``sizes`` their orbits' sizes, which
        multiply their coefficients), ``masks`` from :meth:`consistent`."""
        k = q.k
        widest = max(sum(len(b) for b in parts[0]) for parts in per_class)
        cls_of = np.empty(k, np.int64)
        pos_of = np.empty(k, np.int64)
        radix, base, rows = [], [], 0
        for c, parts in enumerate(per_class):
            for i, v in enumerate(sorted(v for blk in parts[0] for v in blk)):
                cls_of[v], pos_of[v] = c, i
            radix.append(len(parts))
            base.append(rows)
            rows += len(parts)
        cp_block = np.zeros((rows, widest), np.int64)
        cp_bid = np.zeros((rows, widest), np.int64)
        cp_nblk = np.zeros(rows, np.int64)
        cp_coef = np.zeros((rows, len(primes)), np.int64)
        bid: dict[tuple[int, ...], int] = {}
        doms: list[np.ndarray] = []
        row = 0
        for c, parts in enumerate(per_class):
            for i, part in enumerate(parts):
                coef = 1 if sizes is None else sizes[c][i]
                for j, blk in enumerate(part):
                    for v in blk:
                        cp_block[row, pos_of[v]] = j
                    got = bid.get(blk)
                    if got is None:
                        got = bid[blk] = len(doms)
                        doms.append(np.flatnonzero(_block_mask(masks, blk)).astype(np.int64))
                    cp_bid[row, j] = got
                    coef *= block_coef(blk)
                cp_nblk[row] = len(part)
                cp_coef[row] = [coef % p for p in primes]
                row += 1
        dom_len = np.array([d.size for d in doms], np.int64)
        dom_off = np.concatenate(([0], np.cumsum(dom_len)[:-1])).astype(np.int64)
        labels = np.asarray(q.vertex_labels).tolist()
        keys: dict[tuple[int, int, int], int] = {}
        pieces: list[np.ndarray] = []
        ncol: list[int] = []
        arc_blk = []
        for (a, b), el in zip(np.asarray(q.edges).tolist(),
                              np.asarray(q.edge_labels).tolist()):
            key = (labels[a], labels[b], int(el))
            got = keys.get(key)
            if got is None:
                blk = self.block(*key)
                got = keys[key] = len(pieces)
                pieces.append((blk > 0).astype(np.uint8).ravel())
                ncol.append(blk.shape[1])
            arc_blk.append(got)
        blk_len = np.array([x.size for x in pieces], np.int64)
        edges = np.asarray(q.edges, dtype=np.int64).reshape(-1, 2)
        return QuotientTable(
            radix=np.array(radix, np.int64), part_base=np.array(base, np.int64),
            cls_of=cls_of, pos_of=pos_of, cp_block=cp_block, cp_nblk=cp_nblk, cp_bid=cp_bid,
            cp_coef=cp_coef, dom_off=dom_off, dom_len=dom_len,
            dom_pool=np.concatenate(doms) if doms else np.zeros(0, np.int64),
            arc_a=np.ascontiguousarray(edges[:, 0]), arc_b=np.ascontiguousarray(edges[:, 1]),
            arc_blk=np.array(arc_blk, np.int64),
            blk_off=np.concatenate(([0], np.cumsum(blk_len)[:-1])).astype(np.int64),
            blk_ncol=np.array(ncol, np.int64),
            blk_pool=np.concatenate(pieces) if pieces else np.zeros(0, np.uint8),
            mods=np.array(primes, np.int64))

    def sub_block(self, quo: Quotient, a: int, b: int, el: int, doms: list[np.ndarray],
                  xp: Any = np) -> Any:
        """:meth:`block` of the arc ``a -> b`` of ``quo`` cut to the two domains (kept per
        pair of blocks: the quotients share most of them), an array of ``xp``."""
        # a domain is its blocks' masks' (the same for every quotient), or what
        # hom_split left of it after fixing vertices (narrow)
        key = (quo.blocks[a], quo.blocks[b], el, _dom_key(doms[a]), _dom_key(doms[b]),
               xp is not np)
        got = self._subs.get(key)
        if got is None:
            full = self.block(quo.labels[a], quo.labels[b], el)
            if xp is np:
                got = np.ascontiguousarray(full[np.ix_(doms[a], doms[b])])
            else:
                bkey = (quo.labels[a], quo.labels[b], el)
                dev = self._dev.get(bkey)
                if dev is None:
                    dev = self._dev[bkey] = xp.asarray(full)
                got = xp.ascontiguousarray(dev[xp.asarray(doms[a])[:, None],
                                               xp.asarray(doms[b])[None, :]])
            if len(self._subs) > 4096:
                self._subs.clear()
            self._subs[key] = got
        return got

    def hom_split(self, quo: Quotient, doms: list[np.ndarray], mods: np.ndarray | None,
                  budget: list[int], room: int = SPLIT_MAX,
                  stop: Callable[[], bool] | None = None, top: bool = True
                  ) -> np.ndarray | None:
        """:meth:`hom` where an elimination order fits (:meth:`plan`), else the sum over
        the data vertices of the quotient vertex with the most arcs (fixed to each one
        in turn, which cuts its tables), and so on; ``None`` where that would make more
        than ``room`` eliminations of this quotient, or more than ``budget[0]`` in all
        (the budget is spent in place), or once ``stop()`` says so. ``top``: the
        quotient itself, not a part of its split."""
        width = 1 if mods is None else int(mods.size)
        if any(d.size == 0 for d in doms):
            return np.zeros(width)
        order = self.plan(quo, width, doms)
        budget[0] -= 1
        if budget[0] < 0:
            return None
        flops = self._flops
        deg = [0] * len(doms)
        for a, b, _ in quo.arcs:
            deg[a] += 1
            deg[b] += 1
        free = [v for v in range(len(doms)) if doms[v].size > 1]
        v = max(free, key=lambda u: (deg[u], -doms[u].size)) if free else -1
        can = v >= 0 and doms[v].size <= room
        if order is not None and not (can and ((top and SPLIT_ABOVE < 0) or (
                0 <= SPLIT_ABOVE <= flops and self._split_pays(quo, doms, v, width, flops)))):
            heavy = self.device is not None and flops >= DEVICE_MIN_FLOPS
            self.on_device += heavy
            return self.hom(quo, order, mods, doms, self.device if heavy else np)
        if v < 0 or doms[v].size > room:
            return None
        total = np.zeros(width)
        for x in doms[v].tolist():
            if stop is not None and stop():
                return None
            fixed = self.narrow(quo, doms, v, x)
            if fixed is None:
                continue                 # a neighbour with no data vertex left: hom 0
            part = self.hom_split(quo, fixed, mods, budget, room // doms[v].size, stop,
                                  top=False)
            if part is None:
                return None
            total = total + part
            if mods is not None:
                total = np.fmod(total, mods)
        return total

    def _split_pays(self, quo: Quotient, doms: list[np.ndarray], v: int, width: int,
                    flops: float) -> bool:
        """Whether fixing ``v`` to each of its data vertices in turn projects under half
        the ``flops`` of eliminating the quotient as it is: the plans of a few of them
        (:meth:`narrow` cuts the neighbours' domains), scaled to all."""
        xs = doms[v].tolist()
        picks = xs[::max(1, len(xs) // SPLIT_PROBES)][:SPLIT_PROBES]
        est = 0.0
        for x in picks:
            fixed = self.narrow(quo, doms, v, x)
            if fixed is None:
                continue
            if self.plan(quo, width, fixed) is None:
                return False
            est += self._flops + 64.0 * len(quo.arcs)   # the calls' own cost, roughly
        self._flops = flops
        return est * len(xs) / max(1, len(picks)) < flops / 2

    def narrow(self, quo: Quotient, doms: list[np.ndarray], v: int, x: int
               ) -> list[np.ndarray] | None:
        """``doms`` with quotient vertex ``v`` fixed to position ``x`` of its class, and
        each neighbour of ``v`` cut to the data vertices ``x`` has the arc to (a
        homomorphism maps it there), then arc consistency among the vertices whose
        domains changed, to its fixed point; ``None`` where a domain empties (no
        homomorphism maps ``v`` to ``x``). On human's dense queries a label class of 562
        vertices shrinks to a data vertex's few neighbours of that label, and the tables
        with it."""
        out = list(doms)
        out[v] = np.array([x], dtype=np.int64)
        arcs = quo.arcs
        queue = [v]
        seen = 0
        while queue:
            u = queue.pop()
            seen += 1
            if seen > 4 * len(doms):
                break                    # enough: the rest is the elimination's work
            for a, b, el in arcs:
                if u not in (a, b) or a == b:
                    continue
                w = b if a == u else a
                blk = self.block(quo.labels[a], quo.labels[b], el)
                if a == u:
                    reach = blk[np.ix_(out[u], out[w])].any(axis=0)
                else:
                    reach = blk[np.ix_(out[w], out[u])].any(axis=1)
                if not reach.all():
                    out[w] = out[w][reach]
                    if out[w].size == 0:
                        return None
                    queue.append(w)
        return out

    def hom(self, quo: Quotient, order: list[int], mods: np.ndarray | None,
            doms: list[np.ndarray], xp: Any = np) -> np.ndarray:
        """``hom(quo)`` modulo each of ``mods`` (float64 residues), or in floating point
        (``mods`` ``None``: one approximate value, for a bound); ``doms`` as in
        :meth:`plan`; the tables arrays of ``xp`` (numpy, or CuPy: the result comes back
        to the host)."""
        width = 1 if mods is None else int(mods.size)
        if any(d.size == 0 for d in doms):
            return np.zeros(width)
        if mods is not None and xp is not np:
            dm = self._dev.get(mods.tobytes())
            if dm is None:
                dm = self._dev[mods.tobytes()] = xp.asarray(mods)
            mods = dm
        # factors: (scope, array, has the primes' axis)
        factors: list[tuple[list[int], Any, bool]] = []
        for a, b, el in quo.arcs:
            factors.append(([a, b], self.sub_block(quo, a, b, el, doms, xp), False))
        for x in order:
            mine = [f for f in factors if x in f[0]]
            factors = [f for f in factors if x not in f[0]]
            factors.append(eliminate(x, mine, mods, width, xp))
        total = xp.ones(width)
        for _, arr, _ in factors:
            total = total * arr
            if mods is not None:
                total = xp.fmod(total, mods)
        return total if xp is np else xp.asnumpy(total)


def _dom_key(dom: np.ndarray) -> Any:
    """A domain's part of a cached block's key: its contents (fixed vertices and the
    domains :meth:`HomCounter.narrow` cut differ from the masks' per quotient)."""
    return dom.tobytes()


def _block_mask(masks: list[np.ndarray], blk: tuple[int, ...]) -> np.ndarray:
    """The data vertices (a 0/1 mask over their label class) in every member's mask."""
    m = masks[blk[0]]
    for v in blk[1:]:
        m = m * masks[v]
    return m


def hombasis_applies(g: Graph, q: Query, induced: bool, loops: bool = True) -> str | None:
    """``None`` where :func:`count_hombasis` may count ``q`` in ``g``, else why not
    (``loops``: also look for self-loops, which reads every arc; :func:`count_hombasis`
    does, :func:`plan_hombasis` does not, as it runs before every full count)."""
    why = spasm_applies(q, induced)
    if why is not None:
        return why
    if g.vertex_labels is None:
        return "the data graph has no vertex labels"
    if bool(q.directed) != bool(g.directed):
        return "the query and the graph differ in direction"
    if q.edge_labeled and g.edge_labels is None:
        return "the query has edge labels and the graph none"
    if not loops:
        return None
    indptr = np.asarray(g.indptr)
    rows = np.repeat(np.arange(g.n), np.diff(indptr))
    if bool((np.asarray(g.indices) == rows).any()):
        return "the data graph has self-loops"
    return None


def plan_hombasis(plan: Any, g: Graph) -> bool:
    """Whether a full count of ``plan`` may be summed over its query's quotients:
    :func:`~warpmatch.plan.spasm.spasm_plan_applies`, and the graph's conditions of
    :func:`hombasis_applies` but the self-loops (read after the head start)."""
    return (spasm_plan_applies(plan)
            and hombasis_applies(g, plan.query, plan.induced, loops=False) is None)


def count_hombasis(g: Graph, q: Query, stop: Callable[[], bool] | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   max_terms: int = MAX_TERMS, budget_s: float | None = None,
                   kernel: bool | None = None, device: bool = False
                   ) -> tuple[int, dict[str, Any]] | None:
    """The embeddings of ``q`` in ``g`` (non-induced), summed over ``q``'s quotients.

    Parameters
    ----------
    g : Graph
    q : Query
        Declined (``None``) where :func:`hombasis_applies` does not accept the pair.
    stop : callable, optional
        Asked before each quotient; True gives up (``None`` is returned).
    progress : callable, optional
        ``progress(done, total)`` in quotients.
    max_terms : int
        Declines (``None``) above this many quotients.
    budget_s : float, optional
        Declines once the quotients counted so far (from a quarter second on) project
        more than this many seconds for all (:data:`HOM_BUDGET_S` by default).
    kernel : bool, optional
        Sum with the compiled kernel (:mod:`warpmatch._homkernel`; the quotients it cannot
        take with numpy) or with numpy alone; by default the kernel from
        :data:`KERNEL_MIN` quotients on.
    device : bool
        numpy's eliminations on the GPU, with CuPy (human's quotients have tables of 10^7
        entries and more, whose elementwise products and residues are the cost on the host).

    Returns
    -------
    (int, dict) or None
        The count and what ``CountResult.hombasis`` reports (quotients, primes, seconds),
        or ``None`` where it declined: the pair not accepted, too many quotients, a table
        or block too large, a bound past floating point, or ``stop``.
    """
    t0 = time.perf_counter()
    if budget_s is None:
        budget_s = HOM_BUDGET_S
    if hombasis_applies(g, q, False) is not None:
        return None
    asked = stop

    def stop() -> bool:
        # the caller's stop, or twice the budget spent (a quotient can be slow alone)
        return ((asked is not None and asked())
                or time.perf_counter() - t0 > 2 * budget_s)

    hc = HomCounter(g, device=_cupy() if device else None)
    labels = np.asarray(q.vertex_labels).tolist()
    for a, b in np.asarray(q.edges).tolist():
        # every block is dense: a graph whose label classes are large declines here,
        # before any is built (every quotient's blocks are among these pairs' classes)
        if hc.size(labels[a]) * hc.size(labels[b]) > MAX_BLOCK:
            return None
    masks = hc.consistent(q)
    # a partition with a block whose members' domains share no data vertex has no
    # homomorphism: left out as its block is formed (on yeast's 24-vertex sparse
    # queries, 40-99% of the partitions)
    fits = hc.fits(masks)
    n_terms = term_count(q, max_terms, fits)
    if n_terms > max_terms:
        return None
    # one partition per orbit of swaps of twins, times the orbit's size (human's
    # query_dense_16_4: 90,433 partitions in 5,012 orbits)
    per_class, sizes = twin_orbits(q, class_partitions(q, fits), masks)
    n_parts, n_terms = n_terms, math.prod(len(parts) for parts in per_class)
    # the identity partition: hom(q), which bounds inj(q)
    first = quotient_of(q, [parts[0] for parts in per_class])
    budget = [SPLIT_BUDGET]
    got = hc.hom_split(first, hc.domains(first, masks), None, budget, stop=stop)
    if got is None:
        return None
    bound = float(got[0])
    if not math.isfinite(bound):
        return None
    if bound < 0.5:
        return 0, {"quotients": 0, "partitions": n_parts, "primes": 0,
                   "seconds": time.perf_counter() - t0}
    bits = math.log2(bound * 1.01 + 2.0) + 1.0
    primes = _primes(int(math.ceil(bits / (PRIME_BITS - 1))) + 1)
    mods = np.array(primes, dtype=np.float64)
    sums = [0] * len(primes)
    slow = [0]

    def add_numpy(quo: Quotient, orbit: int) -> bool:
        h = hc.hom_split(quo, hc.domains(quo, masks), mods, budget, stop=stop)
        if h is None:
            return False
        for i, v in enumerate(h):
            sums[i] += quo.coef * orbit * int(v)
        slow[0] += 1
        return True
    if kernel is None:
        kernel = n_terms >= KERNEL_MIN
    tab = hc.table(q, per_class, masks, primes, sizes) if kernel else None

    def add_range(lo: int, hi: int) -> bool:
        """Quotients ``lo`` to ``hi - 1``: by the kernel, numpy taking those it hands
        back (tables past its scratch), or all by numpy."""
        rest: Any = range(lo, hi)
        if tab is not None:
            part, failed = sum_range(tab, lo, hi, KERNEL_POOL, KERNEL_SPLIT_WORK)
            for i, v in enumerate(part.tolist()):
                sums[i] += v
            rest = failed.tolist()
        for t in rest:
            combo, orbit = [], 1
            for parts, sz in zip(per_class, sizes):  # quotient t's partition of each class
                combo.append(parts[t % len(parts)])
                orbit *= sz[t % len(parts)]
                t //= len(parts)
            if stop() or not add_numpy(quotient_of(q, combo), orbit):
                return False
        return True
    # the first quotient alone: the kernel's first call loads it (or compiles it, once per
    # machine), which is not part of the projection
    if not add_range(0, 1):
        return None
    # calls grow from one quotient a thread (a call cannot be stopped; human's quotients
    # take up to seconds each): doubled while they take under a tenth of a second
    done, step = 1, get_num_threads()
    t1 = time.perf_counter()
    worst = (0, 0.0)                     # the costliest call so far: quotients, seconds
    while done < n_terms:
        if stop():
            return None
        spent = time.perf_counter() - t1
        if spent > 0.25 and _projected(spent, done - 1, worst, n_terms - 1) > budget_s * (
                1 if spent > PROJECT_SURE_S else 2):
            return None                  # would take too long: the search goes on
        hi = min(n_terms, done + step)
        c0 = time.perf_counter()
        if not add_range(done, hi):
            return None
        took = time.perf_counter() - c0
        if took > worst[1]:
            worst = (hi - done, took)
        if took < 0.1:
            step *= 2                    # calls of about a tenth of a second at most
        done = hi
        if progress is not None:
            progress(done, n_terms)
    count = _crt([int(s) % p for s, p in zip(sums, primes)], primes)
    return count, {"quotients": done, "partitions": n_parts, "primes": len(primes),
                   "numpy": slow[0], "device": hc.on_device,
                   "seconds": time.perf_counter() - t0}


def _projected(spent: float, done: int, worst: tuple[int, float], total: int) -> float:
    """Seconds the sum of ``total`` quotients is projected to take, ``done`` of them in
    ``spent`` seconds: the rest at the pace of every call but the costliest (``worst``:
    its quotients and seconds), or 0 (no projection yet) while that call is the only one.

    One quotient can cost more than all the others: human's ``query_sparse_12_10`` has 40,
    one of them 20 s, the other 39 about 4 s in all. Visited second (the spread order), it
    made a pace of 10 s a quotient, 408 s for all, where the sum takes 24 s. The first
    calls' few quotients also project high on their own (``query_sparse_16_8``: 66 s after
    0.12 s, 39 s from 1 s on, 43 s in all), hence :data:`PROJECT_SURE_S` in the caller.
    """
    rest_n, rest_s = done - worst[0], spent - worst[1]
    if rest_n <= 0:
        return 0.0
    return spent + (total - done) * rest_s / rest_n


def _cupy() -> Any:
    """CuPy where it imports, else ``None`` (numpy)."""
    try:
        import cupy
    except Exception:               # pragma: no cover - depends on the machine
        return None
    return cupy


def warm_kernel() -> float:
    """Load (or compile, once per machine) the compiled sum of
    :mod:`warpmatch._homkernel` on a small count; the seconds it took."""
    t = time.perf_counter()
    g = Graph.from_edges([0, 1], [1, 2], n=3)
    from .graph.generators import with_labels
    g = with_labels(g, vertex_labels=np.array([0, 1, 0]))
    count_hombasis(g, Query.parse("a:0-b:1, b:1-c:0"), kernel=True)
    return time.perf_counter() - t


def _crt(residues: list[int], primes: list[int]) -> int:
    """The integer in ``[0, prod(primes))`` with these residues."""
    m = math.prod(primes)
    x = 0
    for r, p in zip(residues, primes):
        mi = m // p
        x += r * mi * pow(mi, -1, p)
    return x % m
