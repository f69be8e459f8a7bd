"""Partitions as shards: a partitioned count on a Dask cluster (issue 19 with issue 18).

Map: :func:`_jobs` (one search per part, one per inter-partition search sequence) <
:func:`count_partitioned` (each search cut into root-range shards by
:mod:`.static`, the shards run by the workers, the counts summed as
:func:`warpmatch.partition.count_partitioned` sums them).

How far it goes: a worker maps only the files of the searches it runs. An
intra-partition shard reads one part's ``.wmg`` (from a partition directory the
workers can read: ``warpmatch partition ... -o DIR``; an in-memory partition is
shipped part by part), so workers that each hold some parts match the parts of a
graph no one of them holds whole. The inter-partition shards read the whole
graph's file, memory-mapped: each worker touches only the rows its roots reach,
but the file must be readable by every worker. A GPU worker keeps the graph of an
inter search in device memory when it fits its budget, else reads it from pinned
host memory (:func:`warpmatch.partition.search._inter_engine`).

Differences from the one-process path: the searches run one after another, each
spread over the workers (not all searches' shards at once); listing by partitions
on a cluster is not built.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping

from ..partition.plans import inter_searches, local_plan
from ..partition.store import Partitioned
from ..plan.build import anchor_colors
from ..plan.plan import Plan
from .static import count_plan, prepare


def _jobs(pg: Partitioned, plan: Plan, anchors: Mapping[Any, Any] | None) -> list[tuple]:
    """``(kind, what, graph, plan, weight)`` per search: parts, then inter sequences."""
    out = []
    for p in range(pg.parts):
        lp = local_plan(plan, pg.part, pg.local, p)
        if lp.roots.size:
            out.append(("intra", p, pg.subgraph(p), lp, int(plan.multiplier)))
    if plan.k >= 2 and pg.parts > 1:
        colors = anchor_colors(pg.graph, plan.query, anchors)
        for s in inter_searches(pg.graph, plan, pg.part, pg.boundary, colors, "count"):
            out.append(("inter", [list(e) for e in s.edges], pg.graph, s.plan, s.weight))
    return out


def count_partitioned(client: Any, pg: Partitioned, plan: Plan,
                      anchors: Mapping[Any, Any] | None = None, backend: str = "auto",
                      shards: int | None = None,
                      progress: Callable[[int, int], None] | None = None,
                      stop: Callable[[int], bool] | None = None,
                      deadline: float | None = None) -> tuple[int, dict, bool]:
    """Count ``plan``'s query in a partitioned graph on a Dask cluster.

    Parameters
    ----------
    client : distributed.Client
    pg : Partitioned
    plan : Plan
        The in-memory counting plan of the whole graph.
    anchors : mapping, optional
        The anchors ``plan`` was built with (their colours restrict the sharing).
    backend : str, optional
        The engine each worker runs. The default is ``"auto"``.
    shards : int, optional
        Shards per search. The default is :mod:`.static`'s (8 per worker).
    progress : callable, optional
        ``progress(searches done, searches)``.
    stop : callable, optional
        ``stop(count so far)`` after each search; ``True`` ends the count.
    deadline : float, optional
        A ``time.perf_counter()`` value after which unfinished shards are cancelled.

    Returns
    -------
    count : int
    stats : dict
        Workers, shards, per search its kind, shards, count and seconds, the
        intra and inter shares.
    complete : bool
        False when ``stop`` or ``deadline`` ended it (a lower bound).
    """
    jobs = _jobs(pg, plan, anchors)
    aut = int(plan.aut_size)
    embeddings = plan.mode == "embeddings"
    intra = inter_emb = 0
    per: list[dict] = []
    stats: dict[str, Any] = {"searches": len(jobs), "shards": 0}
    complete = True
    if progress is not None:
        progress(0, len(jobs))
    for i, (kind, what, graph, p, weight) in enumerate(jobs):
        t0 = time.perf_counter()
        job = prepare(client, graph, p, backend=backend, shards=shards)
        try:
            raw, done = count_plan(job, deadline=deadline)
        finally:
            job.close()
        stats["workers"] = job.stats.get("workers")
        stats["shards"] += int(job.stats.get("shards", 0))
        stats.setdefault("engines", set()).update(job.stats.get("engines") or [])
        per.append({"kind": kind, ("part" if kind == "intra" else "edges"): what,
                    "shards": job.stats.get("shards"), "raw": raw, "graph_sent":
                    job.stats.get("graph_sent"), "seconds": round(time.perf_counter() - t0, 6)})
        if kind == "intra":
            intra += raw * weight
        else:
            inter_emb += raw * weight
        total = intra + (inter_emb if embeddings else inter_emb // aut)
        if progress is not None:
            progress(i + 1, len(jobs))
        if not done or (stop is not None and i + 1 < len(jobs) and stop(total)):
            complete = False
            break
    inter = inter_emb if embeddings else inter_emb // aut
    stats["engines"] = sorted(stats.get("engines", ()))
    stats.update(intra=int(intra), inter=int(inter), per_search=per)
    return intra + inter, stats, complete
