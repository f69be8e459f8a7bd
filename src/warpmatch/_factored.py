"""A whole count factored at a cut vertex (:mod:`warpmatch.plan.factor` says when and why
it is exact): the sum over the cut vertex's candidates of the product of its groups'
counts, each group searched alone with the cut vertex anchored.

Map: :func:`direct_then_factored` (what :func:`warpmatch.api.count_result` calls for a full
count that :func:`~warpmatch.plan.factor.factoring` can factor: the direct search for
:data:`~warpmatch.plan.factor.FACTOR_AFTER` seconds, then the data's cliques, the quotients
or the factored count, whichever projects to end first) < :class:`FactoredCount` (the
count, stopped and resumed; candidates of the cut vertex in a pseudo-random order so that
its pace projects its end) and :func:`count_factored` (the same in one call, or ``None``
where a group's plan cannot root at the cut vertex) < :func:`_group_plans` (one anchored
plan per group, built once; each candidate of the cut vertex then cuts its root to one
vertex, :func:`warpmatch.plan.factor.rooted`).
``WARPMATCH_FACTOR=0`` turns it off; ``WARPMATCH_FACTOR_AFTER`` sets the seconds.

How it differs from the papers: none of them counts this way (issue 21, item 3, asks for
it); the candidates of the cut vertex are iterated on the host, one engine call per group
and candidate, so it pays where the groups' searches are much cheaper than their product
(human's queries: 10^11 to 10^14 embeddings in seconds), not on small counts, which the
direct search finishes first.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from .graph.csr import Graph
from .plan import build_plan
from .plan.factor import FACTOR_AFTER, Factoring, rooted
from .plan.plan import Plan
from .plan.spasm import HOM_BESIDE_FACTOR_S
from .query.model import Query

__all__ = ["FactoredCount", "count_factored", "direct_then_factored", "FACTOR_AFTER",
           "FACTOR_MAX_CALLS", "FACTOR_PROBE_S", "HOM_QUICK_S"]

#: the most engine calls (candidates of the cut vertex x groups) a factored count makes:
#: past that the calls' fixed cost (a few ms each on the GPU) outweighs the search saved
FACTOR_MAX_CALLS = 200_000
#: seconds a factored count runs before a count from homomorphisms is weighed against it
#: (:func:`direct_then_factored`): what share of the cut vertex's candidates it added in
#: that time projects its end
FACTOR_PROBE_S = 1.0
#: the budget of a first try of the quotients beside a factoring, before the probe
#: (:func:`direct_then_factored`): the quotients' stop ends it after twice this
HOM_QUICK_S = 0.5


def factor_after() -> float:
    """:data:`~warpmatch.plan.factor.FACTOR_AFTER`, or ``WARPMATCH_FACTOR_AFTER`` (seconds)
    where set (0: factor at once, without the direct search; the tests do)."""
    import os
    text = os.environ.get("WARPMATCH_FACTOR_AFTER")
    return FACTOR_AFTER if text is None else float(text)


def _roots(g: Graph, q: Query, fac: Factoring, whole: Plan) -> np.ndarray:
    """Internal ids the cut vertex may take: its candidates in the whole query's plan where
    that plan keeps them, else every vertex of its label."""
    ids = whole.candidates(int(whole.inverse_order[fac.cut]))
    if ids is not None:
        return np.asarray(ids)
    return np.flatnonzero(np.asarray(g.vertex_labels) == int(q.vertex_labels[fac.cut]))


def _group_plans(g: Graph, q: Query, fac: Factoring, roots: np.ndarray
                 ) -> list[Plan] | None:
    """Each group's count plan, its root the cut vertex anchored at ``roots``; ``None`` if
    a plan does not start at the cut vertex (a twin of it moved last)."""
    ext = roots if g.ids is None else np.asarray(g.ids)[roots]
    plans = []
    for i in range(len(fac.groups)):
        sq = fac.subquery(q, i)
        # by name: a vertex's name may be another vertex's index ("0" in a query file)
        cut = sq.names[0] if sq.names else 0
        p = build_plan(g, sq, mode="embeddings", anchors={cut: ext}, purpose="count")
        if int(p.order[0]) != 0:
            return None
        plans.append(p)
    return plans


class FactoredCount:
    """A factored count that can stop and go on where it stopped.

    The cut vertex's candidates are visited in a fixed pseudo-random order, so that the
    share done after a short while projects the whole (:meth:`projected_left`): in
    ascending id order the costliest candidates bunch together. Build it with
    :meth:`make`; each :meth:`run` goes on from the first candidate not yet added.
    """

    def __init__(self, g: Graph, q: Query, fac: Factoring, plans: list[Plan],
                 keep: np.ndarray, engine: Any,
                 progress: Callable[[int, int], None] | None) -> None:
        self.g, self.q, self.fac, self.plans, self.engine = g, q, fac, plans, engine
        self.keep = keep.tolist()
        self.progress = progress
        self.done = 0              # candidates added to total
        self.total = 0
        self.calls = 0
        self.build_s = 0.0         # make(): the groups' plans
        self.seconds = 0.0         # time spent in run(), apart from anything between

    @classmethod
    def make(cls, g: Graph, q: Query, fac: Factoring, whole: Plan, engine: Any,
             progress: Callable[[int, int], None] | None = None) -> "FactoredCount | None":
        """The count ready to run, or ``None`` where it cannot be factored this way (a
        group's plan does not start at the cut vertex, or more than
        :data:`FACTOR_MAX_CALLS` calls)."""
        t0 = time.perf_counter()
        roots = _roots(g, q, fac, whole)
        if roots.size * len(fac.groups) > FACTOR_MAX_CALLS:
            return None
        plans = _group_plans(g, q, fac, roots)
        if plans is None:
            return None
        # a root must be a candidate of every group (each plan filtered it for its group)
        keep = None
        for p in plans:
            r = np.asarray(p.roots)
            keep = r if keep is None else np.intersect1d(keep, r, assume_unique=True)
        if any(p.empty_reason is not None for p in plans):
            keep = keep[:0]
        keep = keep[np.random.default_rng(0).permutation(keep.size)]
        # the smallest group first: a root where it has no match costs one small search
        plans.sort(key=lambda p: p.k)
        fc = cls(g, q, fac, plans, keep, engine, progress)
        fc.build_s = time.perf_counter() - t0
        return fc

    @property
    def finished(self) -> bool:
        return self.done == len(self.keep)

    def run(self, stop: Callable[[], bool] | None = None) -> bool:
        """Go on until every candidate is added or ``stop()`` (asked between engine calls
        and given to each) says True; a candidate whose count it cut is not added, and the
        next run starts it again. Returns :attr:`finished`."""
        t0 = time.perf_counter()
        inner = None if stop is None else (lambda raw: bool(stop()))
        try:
            while self.done < len(self.keep):
                if stop is not None and stop():
                    return False
                v = self.keep[self.done]
                prod = 1
                for p in self.plans:
                    self.calls += 1
                    raw = int(self.engine.count(self.g, rooted(p, v)) if inner is None
                              else self.engine.count(self.g, rooted(p, v), stop=inner))
                    if stop is not None and stop():
                        return False      # this group's count may be cut: not added
                    prod *= raw * int(p.multiplier)
                    if prod == 0:
                        break
                self.total += prod
                self.done += 1
                if self.progress is not None:
                    self.progress(self.done, len(self.keep))
            return True
        finally:
            self.seconds += time.perf_counter() - t0

    def projected_left(self) -> float:
        """Seconds the candidates not yet added would take at the pace so far (infinite
        before the first is added)."""
        if self.finished:
            return 0.0
        if self.done == 0:
            return math.inf
        return self.seconds * (len(self.keep) - self.done) / self.done

    def info(self) -> dict[str, Any]:
        """What ``CountResult.factored`` reports."""
        q = self.q
        return {"cut": q.names[self.fac.cut] if q.names else str(self.fac.cut),
                "groups": [[q.names[u] if q.names else str(u) for u in grp]
                           for grp in self.fac.groups],
                "roots": len(self.keep), "calls": self.calls,
                "seconds": self.build_s + self.seconds}


def count_factored(g: Graph, q: Query, fac: Factoring, whole: Plan, engine: Any,
                   stop: Callable[[], bool] | None = None,
                   progress: Callable[[int, int], None] | None = None
                   ) -> tuple[int, bool, dict[str, Any]] | None:
    """Embeddings of ``q`` in ``g`` counted at ``fac``'s cut vertex.

    Parameters
    ----------
    g : Graph
        The graph the count runs on (internal ids).
    q : Query
        The whole query (vertex-labeled: :func:`~warpmatch.plan.factor.factoring`).
    fac : Factoring
    whole : Plan
        The whole query's count plan (its candidates of the cut vertex are the roots).
    engine : Engine
        Counts each group's rooted plan.
    stop : callable, optional
        ``stop()``, asked between engine calls and given to each: True ends the count, the
        embeddings so far a lower bound (a group's count it cut is not added).
    progress : callable, optional
        ``progress(roots done, roots)`` after each root.

    Returns
    -------
    (int, bool, dict) or None
        Embeddings, whether the count finished, and what ``CountResult.factored`` reports
        (the cut vertex and groups by name, the roots tried, the engine calls); ``None``
        where the count cannot be factored this way (a group's plan does not start at the
        cut vertex, or more than :data:`FACTOR_MAX_CALLS` calls).
    """
    fc = FactoredCount.make(g, q, fac, whole, engine, progress)
    if fc is None:
        return None
    finished = fc.run(stop)
    return fc.total, finished, fc.info()


def direct_then_factored(engine: Any, g: Graph, q: Query, plan: Plan, fac: Factoring | None,
                         progress: Callable[[int, int], None] | None = None,
                         stop: Callable[[int], bool] | None = None, hom: bool = False,
                         deadline: float | None = None, cliques: bool = False
                         ) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None,
                                    dict[str, Any] | None]:
    """A full count of ``plan`` (the whole query's, mode embeddings or subgraphs): the
    direct search for :data:`FACTOR_AFTER` seconds, then, if it has not finished, the
    count of a complete query's data cliques (``cliques``:
    :func:`warpmatch._cliques.count_cliques`), then the sum over the query's quotients
    (``hom``: :func:`warpmatch._hombasis.count_hombasis`) or the factored count
    (``fac``: :class:`FactoredCount`), then the direct search again, to its end, where
    those decline.

    Where both the quotients and a factoring apply, the quotients first get
    :data:`HOM_QUICK_S`; then the factored count runs :data:`FACTOR_PROBE_S` seconds, the
    quotients take the count only where they project to end before the factored count's
    projected end, and the factored count otherwise goes on from where it stopped. The
    quotients' budget is otherwise :data:`~warpmatch._hombasis.HOM_BUDGET_S`
    (:data:`HOM_BESIDE_FACTOR_S` beside a factoring whose pace the probe did not show), or
    the time left where the caller has a longer time limit.

    Parameters
    ----------
    engine : Engine
        One whose ``count`` takes ``stop``.
    g, q, plan, fac
        The graph, the query, its count plan and its factoring (or ``None``).
    progress : callable, optional
    stop : callable, optional
        The caller's ``stop(raw)`` (a time limit): True ends either count, the result then
        a lower bound.
    deadline : float, optional
        Where the caller's time limit ends (``time.perf_counter()``): the count from
        homomorphisms may then project up to the time left, where that is more than its
        own budget.

    Returns
    -------
    (int, dict or None, dict or None, dict or None)
        The count in ``plan.mode``, and what ``CountResult.factored``,
        ``CountResult.hombasis`` and ``CountResult.cliques`` report (``None`` where another
        way answered).
    """
    t0 = time.perf_counter()
    ours: list[bool] = []
    after = factor_after()

    def first(raw: int) -> bool:
        if stop is not None and stop(raw):
            return True
        if time.perf_counter() - t0 >= after:
            ours.append(True)
            return True
        return False
    direct = 0                        # the direct search's count, a lower bound if cut
    if after > 0:
        raw = int(engine.count(g, plan, progress=progress, stop=first))
        if not ours or (stop is not None and stop(raw)):
            return raw * int(plan.multiplier), None, None, None   # finished, or a stop
        direct = raw * int(plan.multiplier)
    if cliques:
        from ._cliques import count_cliques
        got = count_cliques(g, q, stop=None if stop is None else (lambda: bool(stop(0))))
        if got is not None:
            emb, cinfo = got
            cinfo["direct_s"] = time.perf_counter() - t0 - cinfo["seconds"]
            return (emb if plan.mode == "embeddings" else emb // int(plan.aut_size)), None, \
                None, cinfo
    cstop = None if stop is None else (lambda: bool(stop(0)))
    fc = None if fac is None else FactoredCount.make(g, q, fac, plan, engine, progress)

    def from_quotients(budget: float) -> tuple | None:
        from ._hombasis import count_hombasis
        got = count_hombasis(g, q, stop=cstop, progress=progress, budget_s=budget,
                             device=getattr(engine, "name", None) == "gpu")
        if got is None:
            return None
        emb, hinfo = got
        hinfo["direct_s"] = time.perf_counter() - t0 - hinfo["seconds"]
        return ((emb if plan.mode == "embeddings" else emb // int(plan.aut_size)), None,
                hinfo, None)
    if fc is not None and hom:
        # the quotients at once where they end within HOM_QUICK_S (8 of the 19 yeast and
        # human queries they answered beside a factoring in session 39's 60 s sample took
        # 0.3-0.65 s end to end, which a probe first would have doubled), then the factored
        # count for a moment: its pace projects its end, and the quotients below take the
        # count only where they project to end sooner (human's query_sparse_16_8: 43 s
        # from its quotients on 2 cores, where the factored count had counted under a
        # millionth of the count in 60 s)
        got = from_quotients(HOM_QUICK_S)
        if got is not None:
            return got
        probe_end = time.perf_counter() + FACTOR_PROBE_S
        fc.run(lambda: (cstop is not None and cstop()) or time.perf_counter() > probe_end)
    if hom and not (fc is not None and fc.finished) and not (cstop is not None and cstop()):
        from ._hombasis import HOM_BUDGET_S
        left = None if deadline is None else deadline - time.perf_counter()
        if fc is None:
            # a time limit: the quotients may take the time left (the direct search is
            # unlikely to finish soon what it has not finished in its head start)
            budget = HOM_BUDGET_S if left is None else max(HOM_BUDGET_S, left)
        elif math.isfinite(fc.projected_left()):
            budget = fc.projected_left() if left is None else min(fc.projected_left(), left)
        else:
            # no candidate of the cut vertex done in the probe: its pace is unknown. Beside
            # a factoring, the quotients get 10 s (the factored count was 1.7 s for human's
            # query_sparse_16_3 where the quotients took 9.3 s, 0.6 s for
            # query_dense_16_7 where they took 465 s); with a time limit, the time left
            # (human's query_sparse_16_8 has one candidate of its cut vertex, not done in
            # 60 s; its quotients take 43 s on 2 cores)
            budget = HOM_BESIDE_FACTOR_S if left is None else max(HOM_BESIDE_FACTOR_S, left)
        got = from_quotients(budget)
        if got is not None:
            return got
    if fc is None:
        kw = {} if stop is None else {"stop": stop}
        return (int(engine.count(g, plan, progress=progress, **kw)) * int(plan.multiplier),
                None, None, None)
    finished = fc.finished or fc.run(cstop)
    emb, info = fc.total, fc.info()
    info["direct_s"] = time.perf_counter() - t0 - info["seconds"]
    count = emb if plan.mode == "embeddings" else emb // int(plan.aut_size)
    # cut by the caller's stop: both are lower bounds, the factored one may be 0 (a group's
    # count cut before the first root was added)
    return (count if finished else max(count, direct)), info, None, None
