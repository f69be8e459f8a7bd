"""Matching orders, with a pluggable registry.

A matching order is a permutation of the query vertices in which every vertex
after the first has an earlier neighbour (a *connected* order), so an engine
can generate the candidates of each depth from a backward neighbour's
adjacency list (rule 5 of :mod:`warpmatch.plan.plan`).

Orders registered here:

``"auto"`` (the API's and the CLI's default)
    RI's order, below. For a count with a limit (the first ``N`` matches), an engine
    that can interleave searches (the CPU engine) also races RI's order with its twins in
    place, GraphQL's order and the core order against it (where they differ; beside the
    GPU engine, on the CPU engine) once RI's search has run
    :data:`warpmatch.plan.rival.RACE_AFTER` seconds, and the first to reach the limit
    answers (:mod:`warpmatch.plan.rival`, :mod:`warpmatch.engine.race`).
``"ri"`` (:func:`~warpmatch.plan.build_plan`'s default)
    RI's *GreatestConstraintFirst* (Bonnici, Giugno, Pulvirenti, Shasha and
    Ferro, "A subgraph isomorphism algorithm and its application to
    biochemical data", BMC Bioinformatics 14(S7):S13, 2013, section
    "Search strategy"). The first vertex has maximum degree; then each step
    picks the unordered vertex ``u`` maximising, lexicographically,

    - ``|V_vis|``: ordered vertices adjacent to ``u``;
    - ``|V_neig|``: ordered vertices adjacent to some unordered neighbour of ``u``;
    - ``|V_unv|``: unordered neighbours of ``u`` adjacent to no ordered vertex.

    RI uses only the query's structure. We break the ties it leaves by fewest
    candidates (the data graph's only say), then by the most symmetry-breaking
    restrictions (:func:`~warpmatch.query.symmetry.symmetry_breaking`) between
    the vertex and ordered ones, so that a restriction cuts a list as early as
    it can, then smallest id, so the order is deterministic. Directed queries
    are ordered on their underlying undirected graph.

    The restriction tie-break is ours: on the square (restrictions ``f(0) <
    f(1), f(2), f(3)`` and ``f(1) < f(3)``) it orders ``0, 1, 3, 2`` instead of
    ``0, 1, 2, 3``, so ``f(1) < f(3)`` halves depth 2 instead of the last depth:
    3.1x faster on the CPU engine (a 10^6-edge power-law graph); gMatch fixes
    the same order for 4-cycles. Of the other standard, STMatch and gMatch
    patterns it moves 8, each within 2% on that graph (the 5-cycle not timed:
    over 20 s either way). (Also preferring the most restricted first vertex
    made STMatch's pattern 19 0.87x: not done.)
``"gql"``
    GraphQL-style (He and Singh, SIGMOD 2008, as in Sun and Luo, SIGMOD 2020,
    section 3.2): start from the vertex with the fewest candidates, then grow by
    the neighbour of the ordered set with the fewest candidates.
``"core"``
    Core first, then the forest (GENEVA, Algorithm 8, after CFL's core-forest-leaf
    decomposition; Bi et al., SIGMOD 2016): the query's 2-core (what is left after
    removing degree-one vertices again and again) is matched before the trees hanging
    off it, starting with its smallest cycle, so that the cycles' closing edges prune
    partial matches before any tree vertex multiplies them. Within the cycle, the core
    and the trees, each step takes RI's choice (the same key as ``"ri"``). A query
    without a cycle (a tree) is ordered as ``"ri"`` orders it. How it differs from
    Algorithm 8: it is a vertex order, not GENEVA's phases (several vertices per step);
    the first cycle vertex is the one RI would start with (most edges, then fewest
    candidates), and RI's step orders the rest of the cycle (so symmetry restrictions
    still cut lists early: the 5-cycle is ordered as ``"ri"`` orders it); with a forced
    first vertex (an anchor) no cycle is forced, only the core preferred.
``"input"``
    Breadth-first from vertex 0, neighbours in ascending id order: predictable,
    for tests and debugging.

An order function has the signature ``fn(query, candidate_counts, first) ->
sequence of int``; ``first`` (an ``int`` or ``None``) forces the first vertex,
which the planner uses for anchored queries. Add an order with
:func:`register_order`; :func:`get_order` checks that what it returns is a
connected permutation.

Examples
--------
>>> from warpmatch.query.model import Query
>>> q = Query.from_edges([(0, 1), (1, 2), (2, 0), (2, 3)])  # tailed triangle
>>> get_order("ri")(q, [5, 5, 5, 5], None)
[2, 0, 1, 3]
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import QueryError
from ..query.model import Query
from ..query.symmetry import symmetry_breaking

#: ``fn(query, candidate_counts, first) -> order``
OrderFn = Callable[[Query, Sequence[int], "int | None"], Sequence[int]]

_ORDERS: dict[str, OrderFn] = {}

#: The registered order names (a live view: orders registered later appear too).
ORDER_NAMES = _ORDERS.keys()


def register_order(name: str) -> Callable[[OrderFn], OrderFn]:
    """Decorator that registers a matching-order function under ``name``.

    Parameters
    ----------
    name : str
        The name used by ``build_plan(order=name)`` and ``--order``.

    Returns
    -------
    callable
        The decorator; it returns the function unchanged.

    Examples
    --------
    >>> @register_order("bfs-from-last")
    ... def bfs_from_last(query, counts, first):
    ...     return input_order(query, counts, query.k - 1 if first is None else first)
    >>> "bfs-from-last" in ORDER_NAMES
    True
    """
    def deco(fn: OrderFn) -> OrderFn:
        _ORDERS[name] = fn
        return fn
    return deco


def get_order(name: str) -> OrderFn:
    """The order function registered as ``name``, wrapped to validate its result.

    Parameters
    ----------
    name : str
        A registered name (see :data:`ORDER_NAMES`).

    Returns
    -------
    callable
        ``fn(query, candidate_counts, first) -> list[int]``, raising
        :class:`~warpmatch.errors.QueryError` if the registered function
        returns something that is not a connected permutation starting at
        ``first``.

    Raises
    ------
    QueryError
        If ``name`` is not registered.
    """
    try:
        fn = _ORDERS[name]
    except KeyError:
        raise QueryError(f"unknown matching order {name!r}; known orders: "
                         f"{', '.join(sorted(_ORDERS))}") from None

    def checked(query: Query, counts: Sequence[int], first: int | None = None) -> list[int]:
        order = [int(u) for u in fn(query, counts, first)]
        check_order(query, order, first, name)
        return order

    checked.__name__ = getattr(fn, "__name__", name)
    checked.__doc__ = fn.__doc__
    return checked


def check_order(query: Query, order: Sequence[int], first: int | None = None,
                name: str = "order") -> None:
    """Raise QueryError unless ``order`` is a connected permutation of the query's vertices."""
    if sorted(order) != list(range(query.k)):
        raise QueryError(f"matching order {name!r} returned {list(order)}, "
                         f"not a permutation of 0..{query.k - 1}")
    if first is not None and order[0] != first:
        raise QueryError(f"matching order {name!r} did not start at vertex {first}")
    und = _undirected(query)
    for i in range(1, len(order)):
        if not und[order[i], order[:i]].any():
            raise QueryError(f"matching order {name!r} is not connected: "
                             f"{query.names[order[i]]} has no earlier neighbour")


def _undirected(query: Query) -> np.ndarray:
    A = query.adjacency()
    return A | A.T


def _restriction_pairs(query: Query) -> np.ndarray:
    """``R[a, b]``: a symmetry-breaking restriction joins ``a`` and ``b`` (the planner's,
    without anchors' colours): matching the second soon after the first cuts its list
    early."""
    k = query.k
    R = np.zeros((k, k), dtype=bool)
    for a, b in symmetry_breaking(query)[0]:
        R[a, b] = R[b, a] = True
    return R


def _ri_extend(A: np.ndarray, cnt: np.ndarray, R: np.ndarray, order: list[int],
               stages: Sequence[np.ndarray] = ()) -> list[int]:
    """Extend ``order`` by RI's GreatestConstraintFirst step until every vertex is ordered.
    With ``stages`` (vertex masks), a step takes a vertex of the first stage that has one
    left adjacent to the ordered ones, if any stage has (the order stays connected)."""
    k = A.shape[0]
    ordered = np.zeros(k, dtype=bool)
    ordered[order] = True
    while len(order) < k:
        # an unordered vertex is "touched" if some ordered vertex is adjacent to it
        touched = A[ordered].any(axis=0)
        pool = ~ordered
        for stage in stages:
            if (stage & pool & touched).any():
                pool = stage & pool & touched
                break
        best, best_key = -1, None
        for u in np.flatnonzero(pool).tolist():
            vis = int(np.count_nonzero(A[u] & ordered))
            un_nb = A[u] & ~ordered
            neig = int(np.count_nonzero(ordered & A[un_nb].any(axis=0)))
            unv = int(np.count_nonzero(un_nb & ~touched))
            res = int(np.count_nonzero(R[u] & ordered))
            key = (-vis, -neig, -unv, int(cnt[u]), -res, u)
            if best_key is None or key < best_key:
                best, best_key = u, key
        order.append(best)
        ordered[best] = True
    return order


def _ri_first(A: np.ndarray, cnt: np.ndarray) -> Callable[[int], tuple]:
    """RI's key for a first vertex (smallest first): most edges, then fewest candidates,
    then smallest id."""
    deg = A.sum(axis=1)
    return lambda u: (-int(deg[u]), int(cnt[u]), u)


@register_order("auto")
def auto_order(query: Query, counts: Sequence[int], first: int | None = None) -> list[int]:
    """RI's order (:func:`ri_order`). What ``"auto"`` adds is at count time: an engine
    that can interleave searches races other orders against it once it has
    searched a while, in counts with a limit (:mod:`warpmatch.plan.rival`,
    :mod:`warpmatch.engine.race`)."""
    return ri_order(query, counts, first)


@register_order("ri")
def ri_order(query: Query, counts: Sequence[int], first: int | None = None) -> list[int]:
    """RI's GreatestConstraintFirst order (Bonnici et al. 2013); see the module docstring."""
    A = _undirected(query)
    cnt = np.asarray(counts, dtype=np.int64)
    if first is None:
        first = min(range(query.k), key=_ri_first(A, cnt))
    return _ri_extend(A, cnt, _restriction_pairs(query), [first])


def two_core(A: np.ndarray) -> np.ndarray:
    """The 2-core of the undirected query ``A`` (bool adjacency): what is left after
    removing vertices of degree at most one again and again (empty for a tree)."""
    alive = np.ones(A.shape[0], dtype=bool)
    while True:
        deg = (A & alive).sum(axis=1)
        drop = alive & (deg <= 1)
        if not drop.any():
            return alive
        alive &= ~drop


def _shortest_cycle(A: np.ndarray, core: np.ndarray, key) -> list[int]:
    """A shortest cycle of the core, as vertices in cycle order: for each core edge
    ``(u, v)``, the shortest ``v``-``u`` path avoiding that edge closes a cycle; the
    shortest one wins, ties by ``key`` of its vertices (sorted) then the edge."""
    k = A.shape[0]
    best: list[int] | None = None
    best_key = None
    for u in np.flatnonzero(core).tolist():
        for v in np.flatnonzero(A[u] & core).tolist():
            if v < u:
                continue
            # BFS from v to u in the core without the edge (u, v)
            parent = {v: -1}
            front = [v]
            while front and u not in parent:
                nxt = []
                for x in front:
                    for y in np.flatnonzero(A[x] & core).tolist():
                        if y in parent or (x == v and y == u):
                            continue
                        parent[y] = x
                        nxt.append(y)
                front = nxt
            if u not in parent:
                continue
            path = [u]
            while parent[path[-1]] != -1:
                path.append(parent[path[-1]])
            ck = (len(path), sorted(key(x) for x in path), u, v)
            if best_key is None or ck < best_key:
                best, best_key = path, ck
    assert best is not None and len(best) <= k
    return best


@register_order("core")
def core_order(query: Query, counts: Sequence[int], first: int | None = None) -> list[int]:
    """Core first (its smallest cycle first), then the trees (GENEVA's Algorithm 8); see
    the module docstring."""
    A = _undirected(query)
    cnt = np.asarray(counts, dtype=np.int64)
    R = _restriction_pairs(query)
    core = two_core(A)
    if not core.any():
        return ri_order(query, counts, first)
    if first is not None:
        return _ri_extend(A, cnt, R, [first], [core])
    rank = _ri_first(A, cnt)
    cyc = _shortest_cycle(A, core, rank)
    on_cycle = np.zeros(query.k, dtype=bool)
    on_cycle[cyc] = True
    return _ri_extend(A, cnt, R, [min(cyc, key=rank)], [on_cycle, core])


@register_order("gql")
def gql_order(query: Query, counts: Sequence[int], first: int | None = None) -> list[int]:
    """GraphQL-style order: fewest candidates first, grown by the cheapest neighbour."""
    A = _undirected(query)
    k = query.k
    deg = A.sum(axis=1)
    cnt = np.asarray(counts, dtype=np.int64)
    if first is None:
        first = min(range(k), key=lambda u: (int(cnt[u]), -int(deg[u]), u))
    order = [first]
    ordered = np.zeros(k, dtype=bool)
    ordered[first] = True
    while len(order) < k:
        frontier = np.flatnonzero(A[ordered].any(axis=0) & ~ordered).tolist()
        best = min(frontier, key=lambda u: (int(cnt[u]),
                                            -int(np.count_nonzero(A[u] & ordered)), u))
        order.append(best)
        ordered[best] = True
    return order


def twin_classes(query: Query) -> list[list[int]]:
    """The query's classes of twins that count mode may count (:func:`twins_last`): two or
    more vertices with the same label, the same two or more neighbours, each joined to
    them by the same kind of edges (directions, edge labels). Such vertices are never
    adjacent to each other (no self-loops)."""
    k = query.k
    sig: dict[tuple, list[int]] = {}
    nb: list[set] = [set() for _ in range(k)]
    for (a, b), lab in zip(query.edges.tolist(), query.edge_labels.tolist()):
        nb[a].add((b, 0, lab))
        nb[b].add((a, 1 if query.directed else 0, lab))
    for u in range(k):
        if len({w for w, _, _ in nb[u]}) >= 2:
            sig.setdefault((int(query.vertex_labels[u]), tuple(sorted(nb[u]))), []).append(u)
    return [c for c in sig.values() if len(c) >= 2]


def twins_last(query: Query, order: Sequence[int]) -> list[int]:
    """``order`` with the largest class of twins (:func:`twin_classes`) moved to its end,
    where every neighbour of theirs comes before the first of them; else ``order``
    unchanged.

    Count mode counts twins that are the last depths from one intersection of lists
    (:func:`warpmatch.plan.leaves.twin_group`) instead of enumerating them. RI orders
    them last on most queries (the diamond, K5 less an edge, STMatch's patterns 7, 9,
    15 and 23). Where it places another vertex after a twin, that vertex is either not
    adjacent to the twins, and moving them past it changes no depth's backward edges
    (only this case is taken), or adjacent, and moving them would take an earlier
    neighbour from it: on email-Eu-core (CPU engine) STMatch's pattern 11 then took more
    than 60 s instead of 3.9 s (a 3-star was left before the twins), so no such move is
    made.
    """
    order = [int(u) for u in order]
    pos = {u: i for i, u in enumerate(order)}
    und = _undirected(query)
    for cls in sorted(twin_classes(query), key=lambda c: (-len(c), c)):
        start = min(pos[u] for u in cls)
        nbrs = np.flatnonzero(und[cls[0]]).tolist()
        if start > 0 and all(pos[w] < start for w in nbrs):
            return ([u for u in order if u not in cls]
                    + sorted(cls, key=lambda u: pos[u]))
    return order


@register_order("input")
def input_order(query: Query, counts: Sequence[int], first: int | None = None) -> list[int]:
    """Breadth-first order from vertex 0 (or ``first``), neighbours ascending."""
    A = _undirected(query)
    start = 0 if first is None else first
    order = [start]
    seen = {start}
    head = 0
    while head < len(order):
        u = order[head]
        head += 1
        for w in np.flatnonzero(A[u]).tolist():
            if w not in seen:
                seen.add(w)
                order.append(w)
    return order
