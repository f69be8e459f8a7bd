"""Partitions as shards: a partitioned count or listing on a Dask cluster (issue 19 with
issue 18).

Map: :func:`prepare_partitioned` (one :class:`~.static.Job` per part's search and per
inter-partition search sequence, each cut into root-range shards by :mod:`.static`) <
:func:`count_partitioned` (every search's shards in flight at once, the counts summed
as :func:`warpmatch.partition.count_partitioned` sums them) and
:func:`match_partitioned` / :func:`write_partitioned` (the rows, or a Parquet
dataset: a part's rows mapped from its local ids to the graph's, a shared inter
search's rows expanded by the query's automorphisms on the worker).

How far it goes: a worker maps only the files of the searches it runs. An
intra-partition shard reads one part's ``.wmg`` (from a partition directory the
workers can read: ``warpmatch partition ... -o DIR``; an in-memory partition is
shipped part by part), so workers that each hold some parts match the parts of a
graph no one of them holds whole. The inter-partition shards read the whole
graph's file, memory-mapped: each worker touches only the rows its roots reach,
but the file must be readable by every worker. A GPU worker keeps the graph of an
inter search in device memory when it fits its budget, else reads it from pinned
host memory (:func:`warpmatch.partition.search._inter_engine`).

Differences from the one-process path (:mod:`warpmatch.partition.search`): the
searches are not run one after another but all submitted at once, in the same
order (parts, then inter searches), so that a worker done with one search's
shards goes on to the next search's instead of waiting for the slowest shard;
listing returns each shard's rows whole (not ``batch_size`` at a time), in the
order shards finish.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from ..partition.plans import all_automorphisms, inter_searches, local_plans
from ..partition.store import Partitioned
from ..plan.build import anchor_colors
from ..plan.plan import Plan
from .static import Job, Output, count_jobs, match_jobs, prepare, write_dataset

__all__ = ["Search", "prepare_partitioned", "count_partitioned", "match_partitioned",
           "write_partitioned"]


class Search:
    """One search of a partitioned run: ``kind`` ``"intra"`` (``what`` = its part) or
    ``"inter"`` (``what`` = the query edges it covers), its count ``weight``, its job."""
    __slots__ = ("kind", "what", "weight", "job")

    def __init__(self, kind: str, what: Any, weight: int, job: Job) -> None:
        self.kind, self.what, self.weight, self.job = kind, what, weight, job


def prepare_partitioned(client: Any, pg: Partitioned, plan: Plan,
                        anchors: Mapping[Any, Any] | None = None, backend: str = "auto",
                        shards: int | None = None, purpose: str = "count") -> list[Search]:
    """Every search of ``plan`` over ``pg`` as a job on ``client``: parts, then inter
    sequences. ``purpose`` is the plan's (``build_plan``'s): for ``"list"`` each job's
    :class:`~.static.Output` maps its rows to the graph's external ids."""
    listing = purpose == "list"
    g = pg.graph
    out: list[Search] = []
    try:
        for p, lp in enumerate(local_plans(plan, pg.part, pg.local, pg.parts)):
            if not lp.roots.size:
                continue
            o = None
            if listing:
                o = Output(ids=g.to_external(pg.members(p).astype(np.int64))
                           .astype(np.int64, copy=False), prefix=f"{len(out):03d}-")
            out.append(Search("intra", p, int(plan.multiplier),
                              prepare(client, pg.subgraph(p), lp, backend, shards, out=o)))
        if plan.k >= 2 and pg.parts > 1:
            colors = anchor_colors(g, plan.query, anchors)
            perms = (all_automorphisms(plan.query, colors)
                     if listing and plan.mode == "embeddings" else None)
            for s in inter_searches(g, plan, pg.part, pg.boundary, colors, purpose,
                                    on_boundary=pg.on_boundary):
                o = Output(perms=perms, prefix=f"{len(out):03d}-") if listing else None
                out.append(Search("inter", [list(e) for e in s.edges], s.weight,
                                  prepare(client, g, s.plan, backend, shards, out=o)))
    except BaseException:
        for s in out:
            s.job.close()
        raise
    return out


def _per_search(searches: Sequence[Search], raws: Sequence[int] | None = None) -> list[dict]:
    rows = []
    for i, s in enumerate(searches):
        st = s.job.stats.get("shard_stats") or []
        d = {"kind": s.kind, ("part" if s.kind == "intra" else "edges"): s.what,
             "shards": s.job.stats.get("shards"), "graph_sent": s.job.stats.get("graph_sent"),
             "prepare_seconds": s.job.stats.get("prepare_seconds"),
             # the workers' seconds: searching (summed over shards), the slowest shard,
             # and loading graph and plan (a worker's first shard of a search maps them)
             "worker_seconds": round(sum(x.get("count_s", 0.0) for x in st), 6),
             "max_shard_seconds": round(max((x.get("count_s", 0.0) for x in st),
                                            default=0.0), 6),
             "setup_seconds": round(sum(x.get("setup_s", 0.0) for x in st), 6)}
        if raws is not None:
            d["raw"] = int(raws[i])
        rows.append(d)
    return rows


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
        Shards per search. The default is :mod:`.static`'s (8 per worker, at least 32).
    progress : callable, optional
        ``progress(shards done, shards)``, over all searches.
    stop : callable, optional
        ``stop(count so far)`` after each shard; ``True`` ends the count.
    deadline : float, optional
        A ``time.perf_counter()`` value after which unfinished shards are cancelled.

    Returns
    -------
    count : int
    stats : dict
        Workers, shards, per search its kind, shards, count and worker seconds,
        the intra and inter shares.
    complete : bool
        False when ``stop`` or ``deadline`` ended it (a lower bound).
    """
    t0 = time.perf_counter()
    searches = prepare_partitioned(client, pg, plan, anchors, backend, shards)
    t1 = time.perf_counter()
    aut = int(plan.aut_size)
    embeddings = plan.mode == "embeddings"

    def parts(raws: Sequence[int]) -> tuple[int, int]:
        intra = sum(r * s.weight for r, s in zip(raws, searches) if s.kind == "intra")
        inter = sum(r * s.weight for r, s in zip(raws, searches) if s.kind == "inter")
        return intra, (inter if embeddings else inter // aut)

    try:
        raws, complete = count_jobs([s.job for s in searches], progress,
                                    None if stop is None else (lambda r: stop(sum(parts(r)))),
                                    deadline)
    finally:
        for s in searches:
            s.job.close()
    intra, inter = parts(raws)
    jobs = [s.job for s in searches]
    engines = sorted({e for j in jobs for e in (j.stats.get("engines") or [])})
    per_worker: dict[str, float] = {}
    for j in jobs:
        for w, secs in (j.stats.get("worker_seconds") or {}).items():
            per_worker[w] = round(per_worker.get(w, 0.0) + secs, 6)
    stats: dict[str, Any] = {
        "searches": len(searches), "shards": sum(int(j.stats.get("shards", 0)) for j in jobs),
        "workers": jobs[0].stats.get("workers") if jobs else None, "engines": engines,
        "intra": int(intra), "inter": int(inter), "worker_seconds": per_worker,
        "prepare_seconds": round(t1 - t0, 6),       # the searches' plans, shards, shipping
        "run_seconds": round(time.perf_counter() - t1, 6),
        "per_search": _per_search(searches, raws)}
    return intra + inter, stats, complete


def match_partitioned(client: Any, pg: Partitioned, plan: Plan,
                      anchors: Mapping[Any, Any] | None = None, backend: str = "auto",
                      limit: int | None = None,
                      progress: Callable[[int, int], None] | None = None
                      ) -> Iterator[np.ndarray]:
    """List a listing ``plan``'s matches (``purpose="list"``) in a partitioned graph on a
    Dask cluster: int64 arrays in query-vertex order, external ids, one per shard as
    shards finish; each match once (the rows of one process, in another order)."""
    searches = prepare_partitioned(client, pg, plan, anchors, backend, purpose="list")
    return match_jobs([s.job for s in searches], limit, progress)


def write_partitioned(client: Any, pg: Partitioned, plan: Plan, directory: Any,
                      names: Sequence[str], anchors: Mapping[Any, Any] | None = None,
                      backend: str = "auto", batch_size: int = 1 << 16,
                      progress: Callable[[int, int], None] | None = None
                      ) -> tuple[int, dict]:
    """:func:`match_partitioned` into a Parquet dataset written by the workers
    (:func:`.static.write_dataset`: ``part-SSS-NNNNN.parquet``, search ``SSS``'s shard
    ``NNNNN``). Returns the rows and the stats (searches, shards, per search)."""
    searches = prepare_partitioned(client, pg, plan, anchors, backend, purpose="list")
    jobs = [s.job for s in searches]
    try:
        rows = write_dataset(jobs, directory, names, batch_size, progress)
    finally:
        for j in jobs:
            j.close()
    return rows, {"searches": len(searches), "shards": sum(len(j.shards) for j in jobs),
                  "workers": jobs[0].stats.get("workers") if jobs else None,
                  "per_search": _per_search(searches)}
