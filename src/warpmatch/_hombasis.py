"""Whole counts from homomorphism counts (issue 23: human's queries have 10^11 to 10^23
embeddings, which no search enumerates in a minute): ``inj(Q) = sum over the quotients
Q/σ of μ(σ) hom(Q/σ)`` (:mod:`warpmatch.plan.spasm` says why it is exact), each
``hom`` counted by variable elimination over the quotient, modulo a few primes.

Map: :class:`HomCounter` (one data graph: its label classes and the dense 0/1 blocks of
its arcs between two classes, built on first use; :meth:`~HomCounter.consistent`, the
query's arc-consistent domains) < :meth:`HomCounter.plan` (an elimination order) <
:meth:`HomCounter.hom` (one quotient's homomorphisms by variable elimination, modulo each
prime, or in floating point for a bound) < :meth:`HomCounter.hom_split` (a quotient whose
tables would be too large, split by fixing a vertex) < :func:`count_hombasis` (the whole
sum: the number of primes from a bound, every quotient, the Chinese remainder of the
sums) < :func:`hombasis_applies`, :func:`plan_hombasis`.

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
not the embeddings'. Not here: quotients merged up to isomorphism, arc consistency per
quotient (the domains are the whole query's, intersected over a block), the GPU.
"""
from __future__ import annotations

import itertools
import math
import time
from typing import Any, Callable

import numpy as np

from .graph.csr import Graph
from .plan.spasm import (HOM_BUDGET_S, MAX_TERMS, Quotient, plan_spasm, quotients,
                         spasm_applies, term_count)
from .query.model import ANY, Query

__all__ = ["HomCounter", "count_hombasis", "hombasis_applies", "MAX_TERMS", "MAX_TABLE",
           "MAX_BLOCK", "HOM_BUDGET_S", "plan_hombasis"]

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
#: the primes' size: residues below 2^26, so that a product of two is exact in float64
PRIME_BITS = 26


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
    """

    def __init__(self, g: Graph) -> None:
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
        rows_ids = self.members[la]
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
        factors: list[tuple[frozenset[int], bool]] = []
        for a, b, _ in quo.arcs:
            if dom[a] * dom[b] > MAX_BLOCK:
                return None
            factors.append((frozenset((a, b)), True))
        alive = set(range(k))
        order = []
        flops = 0.0
        while alive:
            best, best_cost = -1, math.inf
            for v in alive:
                mine = [f for f in factors if v in f[0]]
                union = frozenset().union(*(f[0] for f in mine)) if mine else frozenset((v,))
                work = math.prod(float(dom[u]) for u in union)
                if work >= best_cost:
                    continue
                _, acc = _last_block(v, [(sorted(f[0]), f[1]) for f in mine], dom)
                peak = max(acc, work / max(dom[v], 1)) * width
                if peak <= MAX_TABLE:
                    best, best_cost = v, work
            if best < 0:
                return None
            flops += best_cost * width
            if flops > MAX_FLOPS:
                return None
            order.append(best)
            alive.discard(best)
            mine = [f for f in factors if best in f[0]]
            factors = [f for f in factors if best not in f[0]]
            if mine:
                factors.append((frozenset().union(*(f[0] for f in mine)) - {best}, False))
        return order

    def domains(self, quo: Quotient, masks: list[np.ndarray]) -> list[np.ndarray]:
        """Each quotient vertex's positions in its label class: those in every member's
        mask (:meth:`consistent`)."""
        out = []
        for blk in quo.blocks:
            m = masks[blk[0]]
            for v in blk[1:]:
                m = m * masks[v]
            out.append(np.flatnonzero(m))
        return out

    def sub_block(self, quo: Quotient, a: int, b: int, el: int, doms: list[np.ndarray]
                  ) -> np.ndarray:
        """:meth:`block` of the arc ``a -> b`` of ``quo`` cut to the two domains (kept per
        pair of blocks: the quotients share most of them)."""
        # a domain is its blocks' masks' (the same for every quotient), or one vertex
        # where hom_split fixed it
        key = (quo.blocks[a], quo.blocks[b], el,
               int(doms[a][0]) if doms[a].size == 1 else -1,
               int(doms[b][0]) if doms[b].size == 1 else -1)
        got = self._subs.get(key)
        if got is None:
            full = self.block(quo.labels[a], quo.labels[b], el)
            got = np.ascontiguousarray(full[np.ix_(doms[a], doms[b])])
            if len(self._subs) > 4096:
                self._subs.clear()
            self._subs[key] = got
        return got

    def hom_split(self, quo: Quotient, doms: list[np.ndarray], mods: np.ndarray | None,
                  budget: list[int], room: int = SPLIT_MAX,
                  stop: Callable[[], bool] | None = None) -> np.ndarray | None:
        """:meth:`hom` where an elimination order fits (:meth:`plan`), else the sum over
        the data vertices of the quotient vertex with the most arcs (fixed to each one
        in turn, which cuts its tables), and so on; ``None`` where that would make more
        than ``room`` eliminations of this quotient, or more than ``budget[0]`` in all
        (the budget is spent in place), or once ``stop()`` says so."""
        width = 1 if mods is None else int(mods.size)
        order = self.plan(quo, width, doms)
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if order is not None:
            return self.hom(quo, order, mods, doms)
        deg = [0] * len(doms)
        for a, b, _ in quo.arcs:
            deg[a] += 1
            deg[b] += 1
        free = [v for v in range(len(doms)) if doms[v].size > 1]
        if not free:
            return None
        v = max(free, key=lambda u: (deg[u], -doms[u].size))
        if doms[v].size > room:
            return None
        total = np.zeros(width)
        for x in doms[v].tolist():
            if stop is not None and stop():
                return None
            part = self.hom_split(quo, doms[:v] + [np.array([x])] + doms[v + 1:], mods,
                                  budget, room // doms[v].size, stop)
            if part is None:
                return None
            total = total + part
            if mods is not None:
                total = np.fmod(total, mods)
        return total

    def hom(self, quo: Quotient, order: list[int], mods: np.ndarray | None,
            doms: list[np.ndarray]) -> np.ndarray:
        """``hom(quo)`` modulo each of ``mods`` (float64 residues), or in floating point
        (``mods`` ``None``: one approximate value, for a bound); ``doms`` as in
        :meth:`plan`."""
        width = 1 if mods is None else int(mods.size)
        if any(d.size == 0 for d in doms):
            return np.zeros(width)
        # factors: (scope, array, has the primes' axis)
        factors: list[tuple[list[int], np.ndarray, bool]] = []
        for a, b, el in quo.arcs:
            factors.append(([a, b], self.sub_block(quo, a, b, el, doms), False))
        for x in order:
            mine = [f for f in factors if x in f[0]]
            factors = [f for f in factors if x not in f[0]]
            factors.append(_eliminate(x, mine, mods, width))
        total = np.ones(width)
        for _, arr, _ in factors:
            total = total * arr
            if mods is not None:
                total = np.fmod(total, mods)
        return total


def _aligned(arr: np.ndarray, scope: list[int], target: list[int], p_axis: bool,
             want_p: bool) -> np.ndarray:
    """``arr`` (axes ``scope``, then the primes' axis if ``p_axis``) transposed and expanded
    to broadcast over ``target`` (then a primes' axis if ``want_p``)."""
    perm = [scope.index(v) for v in target if v in scope]
    if p_axis:
        perm.append(len(scope))
    out = arr.transpose(perm) if perm != list(range(arr.ndim)) else arr
    shape = []
    it = iter(out.shape)
    for v in target:
        shape.append(next(it) if v in scope else 1)
    if want_p:
        shape.append(next(it) if p_axis else 1)
    return out.reshape(shape)


def _last_block(x: int, mine: list[tuple[list[int], bool]], dom: Any
                ) -> tuple[int | None, float]:
    """Which of the factors ``mine`` (scope, is a 0/1 block) holding ``x`` is contracted
    last, by a matrix product (:func:`_eliminate`): a block whose other end no other
    factor holds, the largest such; and the entries of the product of the others, which
    is built in full (the whole product where no block qualifies)."""
    union: set[int] = set()
    for sc, _ in mine:
        union |= set(sc)
    best, best_dom = None, -1
    for i, (sc, is_block) in enumerate(mine):
        if not is_block:
            continue
        y = sc[1] if sc[0] == x else sc[0]
        if any(y in sc2 for j, (sc2, _) in enumerate(mine) if j != i):
            continue
        if dom[y] > best_dom:
            best, best_dom = i, dom[y]
    size = math.prod(float(dom[v]) for v in union)
    return best, size if best is None else size / max(best_dom, 1)


def _eliminate(x: int, mine: list[tuple[list[int], np.ndarray, bool]],
               mods: np.ndarray | None, width: int) -> tuple[list[int], np.ndarray, bool]:
    """Sum ``x`` out of the product of the factors ``mine`` (all hold ``x``)."""
    tables = [f for f in mine if f[2]]
    blocks = [f for f in mine if not f[2]]
    # the product of the counted tables (residues: reduced after each product)
    scope: list[int] = []
    acc: np.ndarray | None = None
    for s, arr, _ in tables:
        union = scope + [v for v in s if v not in scope]
        nxt = _aligned(arr, s, union, True, True)
        acc = nxt if acc is None else _aligned(acc, scope, union, True, True) * nxt
        if mods is not None and acc is not nxt:
            acc = np.fmod(acc, mods)
        scope = union
    # the 0/1 blocks but the last: their products stay 0/1, nothing to reduce
    has_p = bool(tables)
    at, _ = _last_block(x, [(f[0], f[2] is False) for f in mine],
                        {v: n for f in mine for v, n in zip(f[0], f[1].shape)})
    last = None
    if at is not None:
        last = mine[at]
        blocks = [f for f in blocks if f is not last]
    for s, arr, _ in blocks:
        union = scope + [v for v in s if v not in scope]
        nxt = _aligned(arr, s, union, False, has_p)
        acc = nxt if acc is None else _aligned(acc, scope, union, has_p, has_p) * nxt
        scope = union
    if last is None:
        assert acc is not None
        out = acc.sum(axis=scope.index(x))
        scope = [v for v in scope if v != x]
    else:
        s, arr, _ = last
        y = s[1] if s[0] == x else s[0]
        if acc is None:
            # a vertex with one arc and nothing else: its block's sums
            out = arr.sum(axis=s.index(x))
            scope = [y]
        elif y in scope:
            union = scope
            prod = _aligned(acc, scope, union, has_p, has_p) * _aligned(arr, s, union, False,
                                                                        has_p)
            out = prod.sum(axis=scope.index(x))
            scope = [v for v in scope if v != x]
        else:
            # a matrix product: sum over x of acc[x, ...] * block[x, y]
            blk = arr if s[0] == x else arr.T
            out = np.tensordot(acc, blk, axes=([scope.index(x)], [0]))
            # axes now: scope less x (and the primes' axis if any), then y
            rest = [v for v in scope if v != x]
            if has_p:
                out = np.moveaxis(out, -1, len(rest))     # y before the primes' axis
            scope = rest + [y]
    if not has_p:
        out = out[..., None] * np.ones(width)
    if mods is not None:
        out = np.fmod(out, mods)
    return scope, out, True


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
    :func:`~warpmatch.plan.spasm.plan_spasm`, and the graph's conditions of
    :func:`hombasis_applies` but the self-loops (read after the head start)."""
    return (plan_spasm(plan) is not None
            and hombasis_applies(g, plan.query, plan.induced, loops=False) is None)


def count_hombasis(g: Graph, q: Query, stop: Callable[[], bool] | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   max_terms: int = MAX_TERMS, budget_s: float | None = None
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
    n_terms = term_count(q, max_terms)
    if n_terms > max_terms:
        return None
    asked = stop

    def stop() -> bool:
        # the caller's stop, or twice the budget spent (a quotient can be slow alone)
        return ((asked is not None and asked())
                or time.perf_counter() - t0 > 2 * budget_s)

    hc = HomCounter(g)
    labels = np.asarray(q.vertex_labels).tolist()
    for a, b in np.asarray(q.edges).tolist():
        # every block is dense: a graph whose label classes are large declines here,
        # before any is built (every quotient's blocks are among these pairs' classes)
        if hc.size(labels[a]) * hc.size(labels[b]) > MAX_BLOCK:
            return None
    masks = hc.consistent(q)
    terms = quotients(q)
    first = next(terms)                  # the identity: hom(q), which bounds inj(q)
    budget = [SPLIT_BUDGET]
    got = hc.hom_split(first, hc.domains(first, masks), None, budget, stop=stop)
    if got is None:
        return None
    bound = float(got[0])
    if not math.isfinite(bound):
        return None
    if bound < 0.5:
        return 0, {"quotients": 0, "primes": 0, "seconds": time.perf_counter() - t0}
    bits = math.log2(bound * 1.01 + 2.0) + 1.0
    primes = _primes(int(math.ceil(bits / (PRIME_BITS - 1))) + 1)
    mods = np.array(primes, dtype=np.float64)
    sums = [0] * len(primes)
    done = 0
    t1 = time.perf_counter()
    for quo in itertools.chain([first], terms):
        if stop():
            return None
        spent = time.perf_counter() - t1
        if spent > 0.25 and spent / done * n_terms > budget_s:
            return None                  # would take too long: the search goes on
        h = hc.hom_split(quo, hc.domains(quo, masks), mods, budget, stop=stop)
        if h is None:
            return None
        sums = [acc + quo.coef * int(v) for acc, v in zip(sums, h)]
        done += 1
        if progress is not None and (done % 64 == 0 or done == n_terms):
            progress(done, n_terms)
    count = _crt([int(s) % p for s, p in zip(sums, primes)], primes)
    return count, {"quotients": done, "primes": len(primes),
                   "seconds": time.perf_counter() - t0}


def _crt(residues: list[int], primes: list[int]) -> int:
    """The integer in ``[0, prod(primes))`` with these residues."""
    m = math.prod(primes)
    x = 0
    for r, p in zip(residues, primes):
        mi = m // p
        x += r * mi * pow(mi, -1, p)
    return x % m
