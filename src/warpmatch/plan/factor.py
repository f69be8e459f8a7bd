"""Counting by factoring at a cut vertex: independent branches counted apart (issue 21,
item 3, "independent branches"; issue 23, the huge counts of the human queries).

Map: :func:`factoring` (a query's cut vertex and its label-disjoint groups, or ``None``) <
:class:`Factoring` (:meth:`~Factoring.subquery`: a group with the cut vertex, as a query of
its own whose vertex 0 is the cut vertex) < :func:`rooted` (a plan anchored at the cut
vertex, its root's candidates cut to one vertex). The count itself is
:func:`warpmatch._factored.count_factored`.

Why it is exact. Let ``s`` be a cut vertex of a connected query ``Q``, and let the
components of ``Q - s`` fall into groups ``G_1 .. G_m`` (m >= 2) such that no vertex label
occurs in two groups (components sharing a label are one group). An embedding of ``Q`` is a
data vertex ``v`` for ``s`` and, for each group, an embedding of ``Q_i = G_i + s`` with
``s -> v``: the groups have no query edge between them (``s`` separates them), and two
vertices of different groups carry different labels, so their images differ. Conversely any
such tuple is an embedding of ``Q`` (non-induced: nothing is required between groups). So::

    emb(Q) = sum over v of  prod_i emb(Q_i | s -> v)

and each ``Q_i`` is searched alone, once per candidate ``v`` of ``s``: the work is the sum
over the groups instead of their product, which is what makes counts of 10^12 and more
(human's queries) countable.

How it differs from GENEVA and the other papers (none counts this way):

- One cut vertex, chosen to make the largest group smallest; the groups are not factored
  again inside (a group's own cut vertices are searched as usual).
- Only for non-induced queries in which every vertex has a label (directed or not), and
  only where the components' labels let at least two groups apart; groups that share a
  label would need inclusion-exclusion over the shared candidates (not done).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..query.model import ANY, Query
from .plan import Plan

__all__ = ["Factoring", "factoring", "plan_factoring", "rooted", "FACTOR_AFTER"]

#: the fewest query vertices for which factoring is considered (smaller queries are cheap)
MIN_K = 5
#: seconds the direct search of a full count runs before the count is factored instead
#: (warpmatch._factored.direct_then_factored): small counts finish first
FACTOR_AFTER = 0.25


@dataclass(frozen=True)
class Factoring:
    """A query's cut vertex and the label-disjoint groups of the components around it.

    Attributes
    ----------
    cut : int
        The query vertex ``s`` (an index of the query).
    groups : tuple of tuple of int
        Each group's query vertices (indices, ascending; ``s`` in none), at least two;
        no vertex label occurs in two groups.
    """

    cut: int
    groups: tuple[tuple[int, ...], ...]

    def subquery(self, query: Query, i: int) -> Query:
        """Group ``i`` with the cut vertex, as a query: vertex 0 is the cut vertex, then
        the group's vertices in index order; the query's edges among them, with their
        labels, and the vertices' names and labels."""
        keep = (self.cut,) + self.groups[i]
        idx = {u: j for j, u in enumerate(keep)}
        sel = [e for e in range(query.m)
               if int(query.edges[e, 0]) in idx and int(query.edges[e, 1]) in idx]
        edges = [(idx[int(query.edges[e, 0])], idx[int(query.edges[e, 1])]) for e in sel]
        names = [query.names[u] for u in keep] if query.names else None
        return Query.from_edges(edges, vertex_labels=[int(query.vertex_labels[u]) for u in keep],
                                edge_labels=[int(query.edge_labels[e]) for e in sel],
                                directed=query.directed, names=names,
                                name=f"{query.name}[{i}]")

    def describe(self, query: Query) -> str:
        """``"b: {a, c} | {d, e, f}"``: the cut vertex and each group's vertex names."""
        name = (lambda u: query.names[u]) if query.names else str
        return f"{name(self.cut)}: " + " | ".join(
            "{" + ", ".join(name(u) for u in g) + "}" for g in self.groups)


def factoring(query: Query) -> Factoring | None:
    """The best cut vertex of ``query`` to count at (:mod:`this module <warpmatch.plan.factor>`
    says why the count is exact), or ``None`` where none applies.

    The query must be connected (weakly, if directed), of at least :data:`MIN_K` vertices,
    each with a vertex label (none ``ANY``). Directed queries factor the same way: the cut
    vertex is one of the underlying undirected graph, and each group keeps its arcs'
    directions. Of the cut vertices whose components fall into at least
    two label-disjoint groups, the one whose largest group is smallest is taken (ties: more
    groups, then the lower index).

    Examples
    --------
    >>> q = Query.parse("a:0-b:1, b:1-c:2, c:2-a:0, a:0-d:3, d:3-e:4")
    >>> factoring(q).describe(q)
    'a: {b, c} | {d, e}'
    >>> factoring(Query.parse("a:0-b:1, b:1-c:0, a:0-d:1, d:1-e:0")) is None   # labels shared
    True
    """
    k = int(query.k)
    if (k < MIN_K or not query.labeled
            or bool(np.any(np.asarray(query.vertex_labels) == ANY))
            or not query.is_connected()):
        return None
    labels = [int(x) for x in query.vertex_labels]
    best: tuple[tuple[int, int, int], Factoring] | None = None
    for s in range(k):
        comps = query.components(without=s)
        if len(comps) < 2:
            continue
        groups: list[tuple[set[int], set[int]]] = []
        for comp in comps:
            verts, labs = set(comp), {labels[u] for u in comp}
            for g in [g for g in groups if g[1] & labs]:
                groups.remove(g)
                verts |= g[0]
                labs |= g[1]
            groups.append((verts, labs))
        if len(groups) < 2:
            continue
        key = (max(len(g[0]) for g in groups), -len(groups), s)
        if best is None or key < best[0]:
            fac = Factoring(s, tuple(sorted(tuple(sorted(g[0])) for g in groups)))
            best = (key, fac)
    return None if best is None else best[1]


def plan_factoring(plan: Plan) -> Factoring | None:
    """:func:`factoring` of ``plan``'s query where a full count of ``plan`` may be factored:
    a whole count's plan, not induced (nothing may join the groups), not anchored, not cut
    by parts, not proved empty; else ``None``. What :func:`warpmatch.api.count_result`
    factors (a full count in the default order) and ``explain`` shows."""
    if (plan.query is None or plan.induced or plan.anchors or plan.empty_reason is not None
            or plan.cut_part is not None):
        return None
    return factoring(plan.query)


def rooted(plan: Plan, v: int) -> Plan:
    """``plan`` (depth 0 anchored at a set of data vertices) with its depth-0 candidates
    cut to the one internal id ``v`` (:meth:`~warpmatch.plan.plan.Plan.with_candidates`):
    the count of the embeddings that map the root to ``v``. The other depths' candidates
    were filtered with the whole anchor set, a superset, so they stay sound; restrictions
    never involve an anchored root (anchors colour the automorphism group), so they stay
    as they are."""
    return plan.with_candidates({0: np.array([v], dtype=plan.cand_ids.dtype)})
