"""How a count runs when it is not one engine's search of the whole graph in memory: on the
graph of the query's edge labels, by partitions, or on a cluster.

Map: :func:`label_graph` (the graph of the query's edge labels' edges, and
:func:`labels_line`, explain's line about it) < :func:`degree_graph` and
:func:`count_graph` (the copy with ids ascending by degree that a count with symmetry
restrictions runs on) < :func:`source` (a
partition directory may stand where a graph is) <
:func:`partition` (in memory or by parts: :func:`warpmatch.partition.choose.choose`) <
:func:`count_partitioned` (PBE, :mod:`warpmatch.partition`) and
:func:`count_on_cluster` (Dask, :mod:`warpmatch.distributed`), each returning the
:class:`~warpmatch.api.CountResult` that :func:`warpmatch.api.count_result` returns
(both together: :func:`_count_parts_on_cluster`).

Split from :mod:`warpmatch.api`, which keeps the user's surface (signatures and
docstrings); these helpers import from it at call time.
"""
from __future__ import annotations

import os
import time
from typing import Any, Mapping

import numpy as np

from .errors import QueryError, WarpmatchError
from .graph.binary import mapped_path
from .graph.csr import Graph
from .plan.plan import Plan
from .query.model import ANY, Query


def label_graph(graph: Graph, query: Query, induced: bool) -> tuple[Graph, dict | None]:
    """The graph a one-process search of ``query`` runs on, and what was left out.

    A non-induced query whose every edge names a label maps its edges onto data edges
    of those labels only, so it has the same matches in the graph of those labels'
    edges (:func:`warpmatch.graph.labelparts.restrict_to_labels`: the same vertices and
    ids, built once per label set and kept): shorter lists for the engines to scan,
    tighter degree filters, fewer bytes on the GPU. That graph is returned where it has
    fewer edges than ``graph``, with ``{"labels", "edges", "graph_edges"}``; otherwise
    ``graph`` and ``None`` (no edge labels, an induced query, or an edge of any label),
    and also where ``$WARPMATCH_LABEL_PARTITIONS`` is ``0`` (to compare, as
    ``bench/edge_labels.py`` does).

    Examples
    --------
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], edge_labels=[1, 1, 1, 2])
    >>> q = wm.Query.parse("a-[1]-b-[1]-c-[1]-a")
    >>> h, facts = label_graph(g, q, induced=False)
    >>> h.num_edges, facts
    (3, {'labels': [1], 'edges': 3, 'graph_edges': 4})
    >>> label_graph(g, q, induced=True)[1] is None
    True
    """
    from .graph.labelparts import present_labels, restrict_to_labels

    labs = np.asarray(query.edge_labels)
    if graph.edge_labels is None or induced or labs.size == 0 or bool((labs == ANY).any()):
        return graph, None
    if os.environ.get("WARPMATCH_LABEL_PARTITIONS", "1").strip() == "0":
        return graph, None
    want = frozenset(int(x) for x in np.unique(labs))
    if present_labels(graph) <= want:
        return graph, None
    sub = restrict_to_labels(graph, want)
    return sub, {"labels": sorted(want), "edges": int(sub.num_edges),
                 "graph_edges": int(graph.num_edges)}


#: ``vertex_order`` values of :func:`warpmatch.count` (see :func:`degree_graph`)
VERTEX_ORDERS = ("auto", "degree", "given")
#: fewest automorphisms for which ``vertex_order="auto"`` counts on the degree order
AUTO_MIN_AUT = 3


def degree_graph(graph: Graph, query: Query, vertex_order: str, anchors: Any, engine: Any,
                 memory_budget: int | str | None = None) -> tuple[Graph, bool]:
    """The graph a one-process count of ``query`` runs on: ``graph`` or its copy with ids
    ascending by degree (:func:`warpmatch.graph.reorder.degree_ordered`), and whether
    the ids of the graph returned ascend by degree (the copy, or ``graph`` itself where
    they already did: a ``.wmg`` written by ``warpmatch convert --degree-order``).

    Only symmetry-breaking restrictions (``f(a) < f(b)``) read the id order, so the copy
    changes no count, only which vertex of an orbit the search takes first: the
    lowest-degree one. ``"degree"`` always counts on the copy, ``"given"`` never;
    ``"auto"`` (``$WARPMATCH_VERTEX_ORDER`` overrides it) does where the query has at
    least :data:`AUTO_MIN_AUT` automorphisms, no anchors, the engine is not the
    reference oracle, and, unless the copy exists already, the graph fits the engine
    in memory (a graph matched by partitions is not copied) and the copy takes at
    most a quarter of the host's free memory. Measured on one H200 (GPU engine, a
    10^7-edge Chung-Lu graph, its ids descending by degree against ascending): every
    such pattern of the triangle, square, diamond, cliques and STMatch's 24 ran
    1.5-14.8x faster but STMatch's pattern 10 (0.69x); the queries with two
    automorphisms went 0.60-1.50x (the house 0.60x), so "auto" leaves them. The copy
    is built once per graph (0.26 s for 10^7 edges on two cores) and kept while the
    graph lives.

    Raises
    ------
    QueryError
        An unknown ``vertex_order``.

    Examples
    --------
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 0, 0, 1], [1, 2, 3, 2])
    >>> from warpmatch.engine import resolve_backend
    >>> cpu = resolve_backend("cpu")
    >>> h, by_degree = degree_graph(g, wm.Query.parse("a-b, b-c, c-a"), "auto", None, cpu)
    >>> by_degree, h.ids.tolist()
    (True, [3, 1, 2, 0])
    >>> degree_graph(g, wm.Query.parse("a-b, b-c"), "auto", None, cpu)[1]   # |Aut| = 2
    False
    """
    choice = _vertex_order(vertex_order)
    if choice == "given" or graph.n < 2:
        return graph, False
    from .graph import reorder
    if choice == "auto":
        if anchors or getattr(engine, "name", "") == "reference":
            return graph, False
        from .query.symmetry import automorphism_count
        if automorphism_count(query) < AUTO_MIN_AUT:
            return graph, False
        if not reorder.kept(graph):
            from .partition.choose import fits
            if not fits(graph, engine, memory_budget) or \
                    graph.nbytes() > _free_host_bytes() // 4:
                return graph, False
    return reorder.degree_ordered(graph), True


def count_graph(source: Any, graph: Graph, query: Query, vertex_order: str, anchors: Any,
                engine: Any, memory_budget: int | str | None, client: Any, pg: Any,
                partitions: Any) -> tuple[Graph, bool]:
    """The graph a count searches (:func:`degree_graph`) and whether its ids ascend by
    degree, for :func:`~warpmatch.api.count_result` and
    :func:`~warpmatch.api.explain` alike: never for a count by partitions; on a
    cluster, not for a graph its workers read from a file (a path, or a graph
    memory-mapped from a ``.wmg``: they map that file, no copy is written for them).

    Raises
    ------
    QueryError
        An unknown ``vertex_order`` (always checked).
    """
    _vertex_order(vertex_order)
    if pg is not None or partitions is not None:
        return graph, False
    if client is not None and (isinstance(source, (str, os.PathLike))
                               or mapped_path(graph) is not None):
        return graph, False
    return degree_graph(graph, query, vertex_order, anchors,
                        None if client is not None else engine, memory_budget)


def _vertex_order(vertex_order: str) -> str:
    """``vertex_order`` with ``$WARPMATCH_VERTEX_ORDER`` in place of ``"auto"``, checked."""
    choice = vertex_order
    if choice == "auto":
        choice = os.environ.get("WARPMATCH_VERTEX_ORDER", "").strip().lower() or "auto"
    if choice not in VERTEX_ORDERS:
        raise QueryError(f"vertex_order must be one of {', '.join(VERTEX_ORDERS)}, "
                         f"not {choice!r}")
    return choice


def _free_host_bytes() -> int:
    """Physical memory free now (a POSIX host), or an unbounded value elsewhere."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):     # not a POSIX host: do not guess
        return 1 << 62


def labels_line(sub: Graph, facts: dict) -> str:
    """explain's line for a search on the graph of the query's edge labels."""
    labs = ", ".join(str(x) for x in facts["labels"])
    # its own arrays (vertex labels and ids are the whole graph's); an undirected graph's
    # in-arrays are its out-arrays
    own = {id(a): a.nbytes for a in (sub.indptr, sub.indices, sub.edge_labels, sub.in_indptr,
                                     sub.in_indices, sub.in_edge_labels)}
    nbytes = sum(own.values())
    share = facts["edges"] / max(1, facts["graph_edges"])
    return (f"edge label partitions: the query's edges all name labels ({labs}), so it is "
            f"matched on their edges only: {facts['edges']:,} of {facts['graph_edges']:,} "
            f"edges ({share:.1%}), {nbytes / 2**20:,.1f} MiB as CSR")


def source(graph: Any) -> tuple[Any, Graph]:
    """``(Partitioned or None, Graph)``: a partition directory may stand where a graph is."""
    from .api import as_graph
    from .partition.choose import open_source
    pg = open_source(graph)
    return (pg, pg.graph) if pg is not None else (None, as_graph(graph))


def budgeted(engine: Any, memory_budget: int | str | None) -> Any:
    """The engine a request runs: with its own ``memory_budget``
    (:func:`warpmatch.partition.choose.with_budget`); a bad size is a QueryError, on
    every backend (a host engine ignores the budget)."""
    from .partition.choose import with_budget
    from .partition.split import parse_bytes
    try:
        if memory_budget is not None:
            parse_bytes(memory_budget)
        return with_budget(engine, memory_budget)
    except ValueError as e:
        if isinstance(e, WarpmatchError):
            raise
        raise QueryError(str(e)) from None


def partition(pg: Any, g: Graph, engine: Any, partitions: Any,
               memory_budget: int | str | None) -> Any:
    """The partition to run on (:func:`warpmatch.partition.choose.choose`), or ``None``."""
    from .partition.choose import choose
    try:
        return choose(g, engine, pg if partitions is None else partitions, memory_budget)
    except ValueError as e:
        if isinstance(e, WarpmatchError):
            raise
        raise QueryError(str(e)) from None      # a bad part count or budget


def count_partitioned(pg: Any, q: Query, plan: Plan, mode: str, induced: bool,
                       anchors: Mapping[Any, Any] | None, order: str, engine: Any,
                       progress: Any, limit: int | None, time_limit: float | None,
                       plan_s: float, strategy: str = "parts") -> Any:
    """:func:`~warpmatch.api.count_result` by partitions (:mod:`warpmatch.partition`;
    ``strategy`` as in :func:`~warpmatch.partition.search.count_partitioned`)."""
    from .api import CountResult, _early_stop, _make_progress, warm_up
    from .partition.search import count_partitioned
    warm_s = warm_up(engine, pg.graph)
    callback, close = _make_progress(progress, q.name)
    t2 = time.perf_counter()
    stop, why = _early_stop(None if limit is None else int(limit),
                            None if time_limit is None else float(time_limit), 1, t2)
    try:
        total, stats, _ = count_partitioned(pg, q, mode, bool(induced), anchors, order,
                                            engine, progress=callback, stop=stop, plan=plan,
                                            strategy=strategy)
    finally:
        close()
    name = engine.name if stats.inter_engine == engine.name else \
        stats.inter_engine if stats.strategy != "partitioned" else \
        f"{engine.name}+{stats.inter_engine}"
    return CountResult(int(total), mode, bool(induced), name, time.perf_counter() - t2,
                       plan_s, plan, q, pg.graph, warmup_seconds=warm_s,
                       partial=why[0] if why else None, partition=stats.as_dict())


def count_on_cluster(client: Any, source: Any, g: Graph, q: Query, mode: str, induced: bool,
                      backend: str, anchors: Mapping[Any, Any] | None, order: str,
                      progress: Any, limit: int | None, time_limit: float | None,
                      shards: int | None, pg: Any = None, vertex_order: str = "auto") -> Any:
    """:func:`~warpmatch.api.count_result` on a Dask cluster (:mod:`warpmatch.distributed`);
    with ``pg`` (a :class:`~warpmatch.partition.Partitioned`), its parts and
    inter-partition searches are the shards' searches
    (:mod:`warpmatch.distributed.partitioned`). A graph in memory is shipped in the
    ``vertex_order`` the one-process count would use (:func:`degree_graph`); one the
    workers read from a file (a path, or a graph memory-mapped from a ``.wmg``) keeps
    its given ids: the workers map that file, and no copy is written for them."""
    from .api import CountResult, _plan
    from . import distributed as D
    from .engine import _unknown, backend_names
    if backend not in ("auto", *backend_names()):
        raise _unknown(backend)     # (whether it runs is each worker's question)
    t0 = time.perf_counter()
    path = source if isinstance(source, (str, os.PathLike)) else None
    whole = g
    g, by_degree = count_graph(source, g, q, vertex_order, anchors, None, None, client, pg,
                               None)
    order_used = "degree" if by_degree else "given"
    plan = _plan(g, q, mode, induced, anchors, order, purpose="count")
    t1 = time.perf_counter()
    if plan.empty_reason is not None:
        return CountResult(0, mode, bool(induced), "planner", 0.0, t1 - t0, plan, q, whole,
                           distributed={"shards": 0}, vertex_order=order_used)
    if pg is not None:
        return _count_parts_on_cluster(client, pg, q, plan, mode, induced, anchors, backend,
                                       progress, limit, time_limit, shards, t1 - t0)
    job = D.prepare(client, g, plan, backend=backend, shards=shards, graph_path=path)
    try:
        raw, partial, secs = _run_on_cluster(
            lambda cb, stop, deadline: D.count_plan(job, cb, stop, deadline), progress, q.name,
            limit, time_limit, int(plan.multiplier))
    finally:
        job.close()
    engines = job.stats.get("engines") or [backend]
    return CountResult(raw * int(plan.multiplier), mode, bool(induced),
                       "dask:" + "+".join(engines), secs, t1 - t0, plan, q, whole,
                       partial=partial, distributed=job.stats, vertex_order=order_used)


def _run_on_cluster(run: Any, progress: Any, name: str, limit: int | None,
                    time_limit: float | None, multiplier: int) -> tuple[Any, str | None, float]:
    """``run(progress callback, stop, deadline) -> (value, complete)`` with the user's
    progress, ``limit`` (on the raw count times ``multiplier``) and ``time_limit`` (a
    deadline for the shards); returns the value, why it is partial (or ``None``) and the
    seconds it took."""
    from .api import _early_stop, _make_progress
    callback, close = _make_progress(progress, name)
    t2 = time.perf_counter()
    stop, why = _early_stop(None if limit is None else int(limit), None, multiplier, t2)
    deadline = None if time_limit is None else t2 + float(time_limit)
    try:
        value, complete = run(callback, stop, deadline)
    finally:
        close()
    partial = None
    if not complete:
        partial = why[0] if why else f"time limit {float(time_limit):g} s reached"
    return value, partial, time.perf_counter() - t2


def _count_parts_on_cluster(client: Any, pg: Any, q: Query, plan: Plan, mode: str,
                            induced: bool, anchors: Mapping[Any, Any] | None, backend: str,
                            progress: Any, limit: int | None, time_limit: float | None,
                            shards: int | None, plan_s: float) -> Any:
    """:func:`count_on_cluster` by partitions: each part and each inter-partition search is
    cut into shards (:func:`warpmatch.distributed.partitioned.count_partitioned`)."""
    from .api import CountResult
    from .distributed.partitioned import count_partitioned as count_parts

    def run(cb: Any, stop: Any, deadline: float | None) -> tuple[tuple[int, dict], bool]:
        total, stats, complete = count_parts(client, pg, plan, anchors, backend, shards,
                                             progress=cb, stop=stop, deadline=deadline)
        return (total, stats), complete

    (total, stats), partial, secs = _run_on_cluster(run, progress, q.name, limit, time_limit,
                                                    1)
    part = {"strategy": "partitioned", "parts": pg.parts, "method": pg.method,
            "cut_edges": pg.cut_edges, "intra": stats["intra"], "inter": stats["inter"],
            "intra_share": round(stats["intra"] / max(1, stats["intra"] + stats["inter"]), 6)}
    return CountResult(int(total), mode, bool(induced),
                       "dask:" + "+".join(stats.get("engines") or [backend]),
                       secs, plan_s, plan, q, pg.graph, partial=partial,
                       distributed=stats, partition=part)
