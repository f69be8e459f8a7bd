"""A labeled query's quotients for counting embeddings from homomorphisms (issue 23, the
full counts of human's queries: 10^11 to 10^23 embeddings, too many to enumerate).

Map: :func:`spasm_applies` (which queries) < :func:`term_count` (how many quotients, before
any is built) < :func:`quotients` (each quotient: its Möbius coefficient, its vertices'
labels and its arcs) < :func:`twin_orbits` (partitions that differ by swapping twins,
:func:`swap_classes`, summed as one term times their number). The counting itself is
:mod:`warpmatch._hombasis`.

Why it is exact (Lovász 1967; Curticapean, Dell and Marx, "Homomorphisms are a good basis
for counting small subgraphs", STOC 2017, §2). Every homomorphism of ``Q`` into ``G``
(a map that keeps labels and edges, not necessarily injective) has a kernel: the
partition ``σ`` of ``Q``'s vertices into the sets it maps to one data vertex, and it is an
embedding (injective) of the quotient ``Q/σ``. So ``hom(Q/π) = sum over σ >= π of
inj(Q/σ)``, and Möbius inversion on the partition lattice gives::

    inj(Q) = sum over partitions σ of  μ(σ) hom(Q/σ),
    μ(σ) = prod over blocks B of (-1)^(|B|-1) (|B|-1)!

A block whose vertices carry two labels, or holds both ends of a query edge, makes
``hom(Q/σ)`` zero (no data vertex has two labels; the data graph has no self-loop):
only partitions into *same-label independent* sets remain, which is what keeps this
practical on labeled queries (human's 1,200 shipped queries: a median of 679 such
partitions, 52% at most 1,000, 81% at most 10^5).

How it differs from the paper:

- The paper uses it for the complexity of counting (the quotients up to isomorphism);
  here each partition is one term, for the labeled queries of issue 23, where labels keep
  the number of partitions small, except that partitions which differ by swapping twins
  (an automorphism) are one term times their number (:func:`twin_orbits`: human's
  12- and 16-vertex queries, the first 10 of each set, 1.49M partitions in 1.24M such
  orbits; ``query_dense_16_4`` 90,433 in 5,012). Isomorphic quotients are not merged
  otherwise.
- Only queries whose every vertex has a label, not induced (an induced count needs the
  non-edges too), and only data graphs without self-loops (:mod:`warpmatch._hombasis`
  checks).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from ..query.model import ANY, Query
from .plan import Plan

__all__ = ["Quotient", "spasm_applies", "spasm_plan_applies", "plan_spasm", "term_count",
           "quotients",
           "class_partitions", "quotient_of", "block_coef", "swap_classes", "twin_orbits",
           "CLASS_MAX",
           "MAX_TERMS", "PARTITIONS_MAX", "HOM_BUDGET_S", "HOM_BESIDE_FACTOR_S"]

#: the most quotients a count sums (each costs an elimination, ~0.2-10 ms on human's
#: queries, :mod:`warpmatch._hombasis`), after those with a block that cannot map to one
#: data vertex are left out; the projection of the time they take bounds it in practice
#: (yeast's query_dense_32_4: 219,870 in 34 s on 2 cores)
MAX_TERMS = 500_000
#: the most partitions (none left out) of a query that a count from homomorphisms tries:
#: the graph leaves out most of them (:func:`quotients`' ``fits``), which only the count
#: itself finds
PARTITIONS_MAX = 10**12
#: the most seconds a count from homomorphisms is expected to take: past that (projected
#: from its first quotients) it gives the count back to the search (:mod:`warpmatch._hombasis`)
HOM_BUDGET_S = 30.0
#: the same beside a factoring whose first second added no candidate of its cut vertex
#: (no pace to weigh the quotients against; :func:`warpmatch._factored.direct_then_factored`)
HOM_BESIDE_FACTOR_S = 10.0
#: the most query vertices of one label counted (:func:`term_count`): 12 independent
#: vertices alike have 4,213,597 partitions (the Bell number), and counting them all takes
#: 0.2 s (a count stops at its cap sooner)
CLASS_MAX = 12


@dataclass(frozen=True)
class Quotient:
    """One term of the sum: ``coef * hom(labels, arcs)``.

    Attributes
    ----------
    coef : int
        The Möbius coefficient ``prod (-1)^(|B|-1) (|B|-1)!`` over the blocks.
    labels : tuple of int
        The vertex label of each block (the quotient's vertices).
    arcs : tuple of (int, int, int)
        ``(a, b, edge_label)`` per query edge (``a -> b`` where the query is directed),
        between blocks; repeated arcs kept once.
    blocks : tuple of tuple of int
        The query vertices of each block.
    """

    coef: int
    labels: tuple[int, ...]
    arcs: tuple[tuple[int, int, int], ...]
    blocks: tuple[tuple[int, ...], ...]


def spasm_applies(q: Query, induced: bool) -> str | None:
    """``None`` where ``q`` may be counted from its quotients' homomorphisms, else why not.

    Parameters
    ----------
    q : Query
    induced : bool
        Induced counts are not (they need the non-edges).
    """
    if induced:
        return "induced counts need the non-edges, which homomorphisms do not keep"
    if q.k < 2:
        return "a query of one vertex"
    if bool((np.asarray(q.vertex_labels) == ANY).any()):
        return "a query vertex without a label"
    return None


def spasm_plan_applies(plan: Plan) -> bool:
    """Whether a full count of ``plan`` may be summed from its query's quotients: a whole
    count's plan (not anchored, not cut by parts, not proved empty), a query that
    :func:`spasm_applies` accepts, no label on more than :data:`CLASS_MAX` of its vertices.
    Cheap (the partitions are counted by the count itself, the graph leaving most out):
    it runs before every full count."""
    q = plan.query
    if (q is None or plan.anchors or plan.empty_reason is not None
            or plan.cut_part is not None or spasm_applies(q, plan.induced) is not None):
        return False
    return max(len(vs) for vs in _classes(q)) <= CLASS_MAX


def plan_spasm(plan: Plan) -> int | None:
    """The number of partitions (none left out) where :func:`spasm_plan_applies` holds and
    there are at most :data:`PARTITIONS_MAX`, else ``None``: what ``explain`` shows
    (:func:`warpmatch._hombasis.plan_hombasis` adds the graph's conditions)."""
    if not spasm_plan_applies(plan):
        return None
    n = term_count(plan.query, PARTITIONS_MAX)
    return n if n <= PARTITIONS_MAX else None


def _neighbours(q: Query) -> list[set[int]]:
    nb: list[set[int]] = [set() for _ in range(q.k)]
    for a, b in np.asarray(q.edges).tolist():
        nb[a].add(b)
        nb[b].add(a)
    return nb


def _classes(q: Query) -> list[list[int]]:
    by: dict[int, list[int]] = {}
    for v, lab in enumerate(np.asarray(q.vertex_labels).tolist()):
        by.setdefault(int(lab), []).append(v)
    return list(by.values())


#: a monotone test of one block (a tuple of same-label query vertices): False where no
#: homomorphism maps them all to one data vertex, and then for every block that holds them
Fits = Callable[[tuple[int, ...]], bool]


def _blocks_of(first: int, free: list[int], nb: list[set[int]], fits: Fits | None
               ) -> Iterator[tuple[int, ...]]:
    """The vertices joining ``first``'s block: independent subsets of ``free`` (in order,
    the empty one first) whose block ``fits``; a prefix that does not fit is not
    extended (``fits`` is monotone)."""
    def grow(i: int, cur: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        yield cur
        for j in range(i, len(free)):
            x = free[j]
            if any(x in nb[y] for y in cur):
                continue
            nxt = cur + (x,)
            if fits is not None and not fits((first,) + nxt):
                continue
            yield from grow(j + 1, nxt)
    yield from grow(0, ())


def _class_partitions(vs: list[int], nb: list[set[int]], fits: Fits | None = None
                      ) -> Iterator[list[tuple[int, ...]]]:
    """The partitions of ``vs`` into independent blocks that ``fits`` (the first vertex's
    block first; the identity partition first)."""
    if not vs:
        yield []
        return
    first, rest = vs[0], vs[1:]
    free = [x for x in rest if x not in nb[first]]
    for extra in _blocks_of(first, free, nb, fits):
        left = [x for x in rest if x not in extra]
        for part in _class_partitions(left, nb, fits):
            yield [(first,) + extra] + part


def _class_count(vs: tuple[int, ...], nb: list[set[int]], memo: dict, cap: int,
                 fits: Fits | None = None) -> int:
    """How many partitions :func:`_class_partitions` yields, without listing them, or
    ``cap + 1`` as soon as there are more than ``cap``."""
    if not vs:
        return 1
    if vs in memo:
        return memo[vs]
    first, rest = vs[0], vs[1:]
    free = [x for x in rest if x not in nb[first]]
    n = 0
    for extra in _blocks_of(first, free, nb, fits):
        n += _class_count(tuple(x for x in rest if x not in extra), nb, memo, cap, fits)
        if n > cap:
            return cap + 1               # not kept in memo: a bound, not the count
    memo[vs] = n
    return n


def term_count(q: Query, cap: int = 1 << 62, fits: Fits | None = None) -> int:
    """The number of terms of the sum (same-label independent partitions whose blocks all
    ``fits``), or more than ``cap`` (counting stops there: a class of many alike vertices
    has Bell-many)."""
    nb = _neighbours(q)
    total = 1
    for vs in _classes(q):
        if len(vs) > CLASS_MAX:
            return cap + 1
        if len(vs) > 1:
            total *= _class_count(tuple(vs), nb, {}, cap // max(total, 1), fits)
            if total > cap:
                return cap + 1
        if total == 0:
            return 0
    return total


def quotients(q: Query, fits: Fits | None = None) -> Iterator[Quotient]:
    """Every term of the sum, the identity partition (``hom(q)`` itself, coefficient 1)
    first.

    Parameters
    ----------
    q : Query
        A query that :func:`spasm_applies` accepts.
    fits : callable, optional
        Leaves out the partitions with a block that does not fit (their ``hom`` is zero):
        ``fits(block)`` is False where no homomorphism maps the block's query vertices
        to one data vertex, and so for every block that holds them.

    Yields
    ------
    Quotient
    """
    for combo in itertools.product(*class_partitions(q, fits)):
        yield quotient_of(q, combo)


def class_partitions(q: Query, fits: Fits | None = None
                     ) -> list[list[list[tuple[int, ...]]]]:
    """Each label class's partitions into independent blocks that ``fits`` (classes in
    the order of their first vertex; each class's identity partition first): the sum's
    terms are one partition of each class (:func:`quotient_of`)."""
    nb = _neighbours(q)
    return [list(_class_partitions(vs, nb, fits)) for vs in _classes(q)]


def swap_classes(q: Query, masks: list[np.ndarray] | None = None) -> list[int]:
    """A class id per query vertex (its smallest member): ``u`` and ``v`` share one where
    swapping them is an automorphism of the labeled query (same label; edges, their
    labels and directions kept) and, with ``masks``, their domains are equal.

    The relation is an equivalence (``(u w) = (u v)(v w)(u v)``), and the group these
    swaps generate is the product of the symmetric groups on its classes. Wider than
    :func:`warpmatch.plan.order.twin_classes` (the classes count mode moves last: not
    adjacent, two or more neighbours), which leaves out a star's leaves and adjacent
    twins, both of which orbits need; ``warpmatch.stream.delta._twins`` tests one pair,
    from a layer that ``plan`` does not import.

    Examples
    --------
    >>> swap_classes(Query.parse("a:0-c:1, b:0-c:1, c:1-d:0, d:0-e:2"))   # a, c, b, d, e
    [0, 1, 0, 3, 4]
    """
    labels = np.asarray(q.vertex_labels).tolist()
    arcs = [(int(a), int(b), int(el)) for (a, b), el in
            zip(np.asarray(q.edges).tolist(), np.asarray(q.edge_labels).tolist())]

    def norm(a: int, b: int, el: int) -> tuple[int, int, int]:
        return (a, b, el) if q.directed or a < b else (b, a, el)
    edges = {norm(*e) for e in arcs}
    ids = list(range(q.k))
    for v in range(q.k):
        for u in range(v):
            if ids[u] != u or labels[u] != labels[v]:
                continue
            if masks is not None and not np.array_equal(masks[u], masks[v]):
                continue
            swap = {u: v, v: u}
            if {norm(swap.get(a, a), swap.get(b, b), el) for a, b, el in arcs} == edges:
                ids[v] = u
                break
    return ids


def twin_orbits(q: Query, per_class: list[list[list[tuple[int, ...]]]],
                masks: list[np.ndarray] | None = None
                ) -> tuple[list[list[list[tuple[int, ...]]]], list[list[int]]]:
    """Each class's partitions (:func:`class_partitions`) merged up to swaps of twins
    (:func:`swap_classes`): one partition per orbit, and the orbit's size.

    Swapping twins is an automorphism, so a partition and its image give isomorphic
    quotients with equal coefficients (equal block sizes), hence equal terms: the sum
    takes one term per orbit times its size. Two partitions are in one orbit exactly when
    their blocks, each written as the multiset of its members' twin classes, are the same
    multiset (match the blocks, then each class's members between matched blocks). The
    partitions given must be closed under the swaps, as they are when the blocks were
    left out by domains that twins share (``masks``: twins with other domains are not
    merged). Each class's first partition (the identity) stays first, alone in its orbit.

    Examples
    --------
    >>> q = Query.parse("a:0-c:1, b:0-c:1, c:1-d:0")     # a, c, b, d: a, b, d twins
    >>> reps, sizes = twin_orbits(q, class_partitions(q))
    >>> reps[0], sizes[0]                  # label 0's 5 partitions: 3 of one pair
    ([[(0,), (2,), (3,)], [(0,), (2, 3)], [(0, 2, 3)]], [1, 3, 1])
    """
    tid = swap_classes(q, masks)
    reps: list[list[list[tuple[int, ...]]]] = []
    sizes: list[list[int]] = []
    for parts in per_class:
        at: dict[tuple, int] = {}
        rc: list[list[tuple[int, ...]]] = []
        sc: list[int] = []
        for part in parts:
            key = tuple(sorted(tuple(sorted(tid[v] for v in blk)) for blk in part))
            i = at.get(key)
            if i is None:
                at[key] = len(rc)
                rc.append(part)
                sc.append(1)
            else:
                sc[i] += 1
        reps.append(rc)
        sizes.append(sc)
    return reps, sizes


def block_coef(blk: tuple[int, ...]) -> int:
    """A block's factor of the Möbius coefficient: ``(-1)^(n-1) (n-1)!``."""
    coef = 1
    for t in range(1, len(blk)):
        coef *= -t
    return coef


def quotient_of(q: Query, combo: tuple[list[tuple[int, ...]], ...] | list) -> Quotient:
    """The term of one partition of each class (:func:`class_partitions`)."""
    labels = np.asarray(q.vertex_labels).tolist()
    blocks = tuple(b for part in combo for b in part)
    rep = [0] * q.k
    coef = 1
    for i, blk in enumerate(blocks):
        for v in blk:
            rep[v] = i
        coef *= block_coef(blk)
    seen: dict[tuple[int, int, int], None] = {}
    for (a, b), el in zip(np.asarray(q.edges).tolist(), np.asarray(q.edge_labels).tolist()):
        x, y = rep[a], rep[b]
        if not q.directed and x > y:
            x, y = y, x
        seen[(x, y, int(el))] = None
    return Quotient(coef, tuple(int(labels[blk[0]]) for blk in blocks), tuple(seen), blocks)
