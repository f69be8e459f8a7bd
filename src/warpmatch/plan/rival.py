"""The rival of a count's plan: the same search in GraphQL's order, for an order race.

Map: :data:`RACE_AFTER` (how long the first order runs alone) < :func:`race_applies`
(which plans have a rival) < :func:`rival_plan` (the plan in GraphQL's order, from the
first plan's candidate sets, no second pass over the graph). The race itself, two searches'
kernel calls interleaved until one finishes, is :mod:`warpmatch.engine.race`.

Why race: no static order finds the first matches fast for every query, and the bad one
can be very bad. On the shipped labeled sets (2-core box, CPU engine, the first 10^5
embeddings of the first ten queries of each set, 3 s limit), RI's order and GraphQL's
agreed within noise on yeast and hprd, but on human each one stalled where the other
answered at once: ``query_dense_16_2`` 0.07 s with RI, none in 3 s with GraphQL;
``query_sparse_20_6`` not one match in 30 s with RI (all 20 vertices have label 12; RI's
first six form a tree that no later edge closes soon), 0.04 s with GraphQL. Running the
second order beside the first bounds such a query's time by a few times the better
order's, once the first has run :data:`RACE_AFTER` seconds; a query that reaches its limit
before then pays nothing. Full counts are not raced: there RI's order finished every query
GraphQL's did (the same sets, 3 s: 107 of 180 against 104), so a race only cost time
(up to 1.7x on yeast's 32-vertex queries of 0.4-1 s).

How it differs from the literature (portfolios of orders, e.g. Sun and Luo, SIGMOD 2020,
who find no order best on every query; DP-iso's adaptive order):

- Two fixed orders, interleaved call by call on the same threads, not an adaptive order
  chosen per partial match, and not restarts with random orders.
- The rival keeps the first plan's candidate sets, restrictions and multiplier
  (:func:`warpmatch.plan.build.reorder_plan`): the counts are equal by construction,
  not by comparison.
"""
from __future__ import annotations

import numpy as np

from .build import reorder_plan
from .order import gql_order, twins_last
from .plan import Plan

__all__ = ["RACE_AFTER", "race_applies", "rival_plan"]

#: seconds the first order searches alone before its rival joins (a count that ends
#: sooner never builds the rival)
RACE_AFTER = 0.2
#: smallest query raced: below it the orders seldom differ, and every search is short
RACE_MIN_K = 5


def race_applies(plan: Plan) -> bool:
    """Whether ``plan`` may race a rival (:func:`rival_plan`; the API races only counts with
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


def rival_plan(plan: Plan) -> Plan | None:
    """``plan``'s search in GraphQL's order (:func:`~warpmatch.plan.order.gql_order` over
    the plan's candidate counts, twins last where a count counts them), or ``None`` where
    :func:`race_applies` says no, the order is the same, or its first vertex has no
    explicit candidate set to take as roots.

    Parameters
    ----------
    plan : Plan
        A plan made by :func:`~warpmatch.plan.build_plan` for a whole count.

    Returns
    -------
    Plan or None
        With ``order_name="gql"``, the same candidate sets, restrictions, multiplier,
        mode and induced flag.
    """
    if not race_applies(plan):
        return None
    q = plan.query
    counts = []
    for u in range(plan.k):
        c = plan.filter_counts.get(u, {})
        counts.append(int(c.get("refined", c.get("nlf", c.get("ldf", 0)))))
    order = list(gql_order(q, counts, None))
    if not plan.induced:
        order = twins_last(q, order)
    if order == [int(u) for u in plan.order]:
        return None
    d = int(plan.inverse_order[order[0]])
    if not plan.cand_restricted[d]:
        return None
    roots = plan.cand_ids[int(plan.cand_ptr[d]):int(plan.cand_ptr[d + 1])]
    return reorder_plan(plan, np.asarray(order, dtype=np.int32), roots, order_name="gql")
