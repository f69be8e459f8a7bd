"""The rivals of a count's plan: the same search with its twins where RI's order put them,
in GraphQL's order and in the core order, for an order race.

Map: :data:`RACE_AFTER` (how long the first order runs alone) < :func:`race_applies`
(which plans have rivals) < :func:`rival_orders` (RI's order with its twins in place,
GraphQL's order and the core order, where they differ from the plan's and from each
other) < :func:`rival_plans` (the plan in those orders, from the first plan's candidate
sets: no second pass over the graph). The race itself, the searches' kernel calls
interleaved until one finishes, is :mod:`warpmatch.engine.race`.

Why race: no static order finds the first matches fast for every query, and the bad one
can be very bad. On the shipped labeled sets (2-core box, CPU engine, the first 10^5
embeddings of the first ten queries of each set, 3 s limit), RI's order and GraphQL's
agreed within noise on yeast and hprd, but on human each one stalled where the other
answered at once: ``query_dense_16_2`` 0.07 s with RI, none in 3 s with GraphQL;
``query_sparse_20_6`` not one match in 30 s with RI (all 20 vertices have label 12; RI's
first six form a tree that no later edge closes soon), 0.04 s with GraphQL. Running the
second order beside the first bounds such a query's time by a few times the better
order's, once the first has run :data:`RACE_AFTER` seconds; a query that reaches its limit
before then pays nothing. The core order (:func:`~warpmatch.plan.order.core_order`) is the
third: it differs from RI's on 90 of those 180 queries (GraphQL's on 173), and yeast's
``query_sparse_32_193`` found no match in 10 s in RI's or GraphQL's order and 10^5 in
0.009 s in the core order. Full counts are not raced: there RI's order finished every
query GraphQL's did (the same sets, 3 s: 107 of 180 against 104), so a race only
cost time (up to 1.7x on yeast's 32-vertex queries of 0.4-1 s).

The first rival, ``ri-unmoved``, is RI's order as RI chose it. A count's plan moves a
class of twins to the end of its order (:func:`~warpmatch.plan.order.twins_last`), where
count mode counts them from one intersection instead of enumerating them. Where the twins
rarely fit, that move defers the check that would have cut a branch at once to the end of
every branch: yeast's ``query_sparse_32_144`` (twins adjacent to the first two vertices,
each of the three orders with them moved last) and human's ``query_dense_16_155`` found
no match in 10 s in any order with the twins last, and 10^5 in 0.03-0.08 s in each of the
three orders with the twins where the order put them.

How it differs from the literature (portfolios of orders, e.g. Sun and Luo, SIGMOD 2020,
who find no order best on every query; DP-iso's adaptive order):

- Up to four fixed orders, interleaved call by call on the same threads, not an adaptive
  order chosen per partial match; and a fifth search that restarts with random orders
  (:func:`random_plan`), each given a little more time than the last while it finds no
  match (restarts against a heavy-tailed search time, as in SAT and CSP solvers). On
  human's ``query_sparse_20_22`` (2-core box) none of RI's, GraphQL's and the core order
  found a match in 15 s; 8 of 12 random connected orders found one in 0.02-0.05 s, the
  other 4 none in 3 s (those started at the same label as the three fixed orders).
- A rival keeps the first plan's candidate sets, restrictions and multiplier
  (:func:`warpmatch.plan.build.reorder_plan`): the counts are equal by construction,
  not by comparison.
"""
from __future__ import annotations

import numpy as np

from .build import reorder_plan
from .order import core_order, gql_order, ri_order, twins_last
from .plan import Plan

__all__ = ["RACE_AFTER", "RESTART_S", "RESTART_GROWTH", "race_applies", "rival_orders",
           "rival_plans", "random_order", "random_plan"]

#: the rival orders, in the order they join (each where it differs from those before):
#: name, order function, and whether twins go last (:func:`~warpmatch.plan.order.twins_last`)
RIVALS = (("ri-unmoved", ri_order, False), ("gql", gql_order, True),
          ("core", core_order, True))

#: seconds the first order searches alone before its rival joins (a count that ends
#: sooner never builds the rival)
RACE_AFTER = 0.2
#: smallest query raced: below it the orders seldom differ, and every search is short
RACE_MIN_K = 5
#: seconds of its own search the first random order gets without finding a match before
#: the next random order replaces it (:mod:`warpmatch.engine.race`) ...
RESTART_S = 0.02
#: ... and each next one this many times its predecessor's (so that an order that needs
#: longer eventually gets it)
RESTART_GROWTH = 1.5


def race_applies(plan: Plan) -> bool:
    """Whether ``plan`` may race rivals (:func:`rival_plans`; the API races only counts with
    a limit, :func:`warpmatch.count_result`): a whole count's plan of a
    query of at least :data:`RACE_MIN_K` vertices with vertex labels (where candidate
    sets differ in size, which GraphQL's order goes by), not anchored, not cut by parts
    (rule 8), not proved empty.

    Examples
    --------
    >>> from warpmatch.graph.csr import Graph
    >>> from warpmatch.plan import build_plan
    >>> from warpmatch.query.model import Query
    >>> g = Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> race_applies(build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 0)])))
    False
    """
    q = plan.query
    return (q is not None and plan.k >= RACE_MIN_K and bool(q.labeled)
            and not plan.anchors and plan.cut_part is None and plan.empty_reason is None)


def rival_orders(plan: Plan) -> list[tuple[str, list[int]]]:
    """``(name, order)`` of each order of :data:`RIVALS` (over the plan's candidate counts;
    twins last where a count counts them, except in ``ri-unmoved``) that differs from the
    plan's and from the ones before and whose first vertex has an explicit candidate set
    to take as roots; none where :func:`race_applies` says no. What ``explain`` shows;
    :func:`rival_plans` builds the plans."""
    if not race_applies(plan):
        return []
    q = plan.query
    counts = []
    for u in range(plan.k):
        c = plan.filter_counts.get(u, {})
        counts.append(int(c.get("refined", c.get("nlf", c.get("ldf", 0)))))
    seen = [[int(u) for u in plan.order]]
    out = []
    for name, fn, last in RIVALS:
        order = [int(u) for u in fn(q, counts, None)]
        if last and not plan.induced:
            order = twins_last(q, order)
        if order in seen or not plan.cand_restricted[int(plan.inverse_order[order[0]])]:
            continue
        seen.append(order)
        out.append((name, order))
    return out


def rival_plans(plan: Plan) -> list[Plan]:
    """``plan``'s search in each of its :func:`rival_orders`.

    Parameters
    ----------
    plan : Plan
        A plan made by :func:`~warpmatch.plan.build_plan` for a whole count.

    Returns
    -------
    list of Plan
        Each with its order's ``order_name`` and the same candidate sets, restrictions,
        multiplier, mode and induced flag.
    """
    out = []
    for name, order in rival_orders(plan):
        d = int(plan.inverse_order[order[0]])
        roots = plan.cand_ids[int(plan.cand_ptr[d]):int(plan.cand_ptr[d + 1])]
        out.append(reorder_plan(plan, np.asarray(order, dtype=np.int32), roots,
                                order_name=name))
    return out


def random_order(plan: Plan, rng: np.random.Generator) -> list[int]:
    """A random connected matching order of ``plan``'s query: the first vertex at random
    among those with an explicit candidate set (the roots), then each time an unplaced
    vertex with the most placed neighbours, ties broken at random (RI's first rule, not
    its tie-breaks)."""
    q = plan.query
    A = q.adjacency()
    A = A | A.T
    starts = [u for u in range(plan.k) if plan.cand_restricted[int(plan.inverse_order[u])]]
    first = int(rng.choice(starts))
    order, placed = [first], np.zeros(plan.k, dtype=bool)
    placed[first] = True
    while len(order) < plan.k:
        links = A[:, placed].sum(axis=1)
        links[placed] = -1
        best = np.flatnonzero(links == links.max())
        u = int(rng.choice(best))
        order.append(u)
        placed[u] = True
    return order


def random_plan(plan: Plan, rng: np.random.Generator, index: int) -> Plan:
    """``plan``'s search in a :func:`random_order` (with its largest class of twins moved
    last, for count mode to count, on about half the draws), named ``"random-<index>"``: the
    same candidate sets, restrictions and multiplier, so the same count."""
    order = random_order(plan, rng)
    if not plan.induced and rng.random() < 0.5:
        moved = twins_last(plan.query, order)
        if plan.cand_restricted[int(plan.inverse_order[moved[0]])]:
            order = moved
    d = int(plan.inverse_order[order[0]])
    roots = plan.cand_ids[int(plan.cand_ptr[d]):int(plan.cand_ptr[d + 1])]
    return reorder_plan(plan, np.asarray(order, dtype=np.int32), roots,
                        order_name=f"random-{index}")
