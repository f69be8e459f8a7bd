"""The Python API: count, list and explain the embeddings of a query graph.

This is the user's surface over the layers (DESIGN.md): it turns what users
hold (a path or a :class:`~warpmatch.graph.Graph`; a DSL string, a pattern
name, a query file, a networkx graph or a :class:`~warpmatch.query.Query`;
anchors in the graph file's id space) into a :class:`~warpmatch.plan.Plan`
with :func:`warpmatch.plan.build_plan`, picks an engine with
:func:`warpmatch.engine.resolve_backend`, and maps the engine's answer back:
counts are multiplied by the plan's multiplier, listed matches are permuted
from depth order to query-vertex order and mapped to external ids.

It is also the one place where user input is validated (anchors, backend
names, directedness), so engines can trust what they receive. What a count returns
(:class:`CountResult`, :func:`describe_count`) is in :mod:`warpmatch._results`,
re-exported here; how a count runs other than in one search of the whole graph
(edge-label graph, degree order, partitions, a cluster) is in
:mod:`warpmatch._strategies`.

Examples
--------
>>> import warpmatch as wm
>>> g = wm.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3])   # a triangle with a tail
>>> wm.count(g, "triangle")                               # every injective map
6
>>> wm.count(g, "triangle", mode="subgraphs")             # distinct triangles
1
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from . import _strategies as S
from ._results import CountResult, describe_count
from .errors import BackendUnavailableError, QueryError, WarpmatchError
from .graph import Graph, read_graph
from .plan import Plan, build_plan
from .query import Query, resolve_query

__all__ = ["count", "match", "explain", "count_result", "CountResult", "describe_count",
           "as_graph", "as_query", "warm_up", "MODES"]

#: the two counting modes (DESIGN.md, "Semantics")
MODES = ("embeddings", "subgraphs")

ProgressArg = bool | Callable[[int, int], None] | None


# --------------------------------------------------------------------- inputs
def as_graph(graph: Any, directed: bool | None = None) -> Graph:
    """Turn what the user holds into a :class:`~warpmatch.graph.Graph`.

    Parameters
    ----------
    graph : Graph, str, os.PathLike or networkx graph
        A graph object, a path to any format :func:`warpmatch.read_graph`
        reads (the format is taken from the extension or the content), or a
        networkx (Di)Graph.
    directed : bool or None, optional
        Only used when reading a path: read the edges as directed. The default,
        ``None``, reads undirected edges (SNAP files list each undirected edge
        once; pass ``True`` for directed data).

    Returns
    -------
    Graph

    Examples
    --------
    >>> import networkx as nx
    >>> as_graph(nx.cycle_graph(5)).num_edges
    5
    """
    if isinstance(graph, Graph):
        return graph
    if isinstance(graph, (str, os.PathLike)):
        return read_graph(graph, directed=bool(directed))
    if hasattr(graph, "nodes") and hasattr(graph, "edges") and hasattr(graph, "is_directed"):
        return Graph.from_networkx(graph)
    raise TypeError(f"graph must be a warpmatch.Graph, a path or a networkx graph, "
                    f"not {type(graph).__name__}")


def as_query(query: Any, graph: Graph | None = None) -> Query:
    """Turn a query specification into a :class:`~warpmatch.query.Query`.

    Parameters
    ----------
    query : Query, str, os.PathLike or networkx graph
        A query object; a named pattern (``"triangle"``, ``"4-clique"``, see
        ``warpmatch patterns``); a path to a ``t/v/e`` query file; DSL text
        such as ``"a-b, b-c, c-a"``; or a networkx (Di)Graph.
    graph : Graph, optional
        The data graph; named patterns and DSL text take its directedness
        where they do not fix it themselves.

    Returns
    -------
    Query

    Raises
    ------
    QueryError
        If the query is malformed, disconnected or empty.

    Examples
    --------
    >>> as_query("a-b, b-c, c-a").k
    3
    """
    directed = None if graph is None else graph.directed
    return resolve_query(query, directed=directed)


def _plan(graph: Graph, query: Query, mode: str, induced: bool,
          anchors: Mapping[Any, Any] | None, order: str, purpose: str) -> Plan:
    # the planner validates mode, directedness, labels and anchors (names and ids,
    # which it maps from the file's id space), so the checks live in one place
    return build_plan(graph, query, mode=mode, induced=bool(induced),
                      anchors=dict(anchors) if anchors else None, order=order,
                      purpose=purpose)


# ---------------------------------------------------------------------- count
def _make_progress(progress: ProgressArg, desc: str) -> tuple[Callable[[int, int], None] | None,
                                                             Callable[[], None]]:
    """(callback for the engine, function that closes it)."""
    if progress is None or progress is False:
        return None, lambda: None
    if progress is True:
        from ._progress import ProgressBar
        bar = ProgressBar(desc, enabled=True, percent=True)   # engines' units mean nothing
        return bar, bar.close
    if callable(progress):
        return progress, lambda: None
    raise TypeError("progress must be True, False or a callable(done, total)")


#: (engine name, index dtype) pairs whose one-time set-up this process has done
_WARMED: set[tuple[str, str]] = set()


def warm_up(engine: Any, graph: Graph) -> float:
    """Do an engine's one-time, per-process set-up now, so that counts time only the search.

    The first search of a process pays costs that no later one does: for the
    numba CPU engine, numba's own initialisation (its typing and target
    registries import ``numba.np.arraymath``, which imports ``scipy.linalg``)
    plus loading the compiled kernels from numba's on-disk cache and starting
    its thread pool, 0.2-0.5 s on a 2-core machine; for the GPU engine,
    creating the CUDA context. A text reader pays the numba part while parsing (its tokenizer
    is compiled with numba), a ``.wmg`` load runs no compiled code, so without
    this the first count on a ``.wmg`` looked 0.4 s slower than the same count
    on its text source.

    An engine with a ``warm_up(graph)`` method is asked to do it; any other
    runs one count of a triangle on a triangle whose index dtype is the
    graph's (the CPU kernels' signature depends on nothing else; the GPU
    engine also compiles that tiny plan's kernel, once, as CuPy caches it on
    disk). Per-query costs, such as compiling the GPU kernel of the query's
    own plan, stay in the count.

    Parameters
    ----------
    engine : Engine
        The engine about to count.
    graph : Graph
        The graph it will count in (only its index dtype matters).

    Returns
    -------
    float
        Seconds spent, 0.0 if this process had already warmed ``engine`` up
        for graphs of this index dtype.

    Examples
    --------
    >>> from warpmatch.engine import get_engine
    >>> g = Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> _ = warm_up(get_engine("reference"), g)
    >>> warm_up(get_engine("reference"), g)      # once per process
    0.0
    """
    key = (str(engine.name), graph.indices.dtype.str)
    if key in _WARMED:
        return 0.0
    t0 = time.perf_counter()
    hook = getattr(engine, "warm_up", None)
    if callable(hook):
        hook(graph)
    else:
        itype = graph.indices.dtype
        tiny = Graph(n=3, indptr=np.array([0, 2, 4, 6], dtype=np.int64),
                     indices=np.array([1, 2, 0, 2, 0, 1], dtype=itype), name="warm-up")
        tri = Query.from_edges([(0, 1), (1, 2), (2, 0)], name="warm-up")
        engine.count(tiny, build_plan(tiny, tri, purpose="count"))
    _WARMED.add(key)
    return time.perf_counter() - t0


def _early_stop(limit: int | None, time_limit: float | None, multiplier: int,
                start: float) -> tuple[Callable[[int], bool] | None, list[str]]:
    """An engine ``stop`` callback for ``limit``/``time_limit``, and the list it writes
    the reason into when it fires (``None`` and ``[]`` without limits)."""
    if limit is None and time_limit is None:
        return None, []
    why: list[str] = []

    def stop(raw: int) -> bool:
        if limit is not None and raw * multiplier >= limit:
            why.append(f"limit {limit:,} reached")
        elif time_limit is not None and time.perf_counter() - start >= time_limit:
            why.append(f"time limit {time_limit:g} s reached")
        return bool(why)
    return stop, why


def count_result(graph: Any, query: Any, mode: str = "embeddings", induced: bool = False,
                 backend: str = "auto", anchors: Mapping[Any, Any] | None = None,
                 order: str = "auto", progress: ProgressArg = False, limit: int | None = None,
                 time_limit: float | None = None, client: Any = None,
                 shards: int | None = None, partitions: Any = None,
                 memory_budget: int | str | None = None,
                 vertex_order: str = "auto") -> CountResult:
    """Like :func:`count`, but return a :class:`CountResult` with the plan, backend and timings.

    Parameters are those of :func:`count`, and:

    limit : int or None, optional
        Stop once at least ``limit`` matches are counted. The default,
        ``None``, counts all.
    time_limit : float or None, optional
        Stop after about ``time_limit`` seconds of search (checked several
        times a second). The default, ``None``, has no limit.
    shards : int or None, optional
        With ``client``: the number of parts the search is cut into (the
        default is 8 per worker, at least 32).
    partitions, memory_budget, vertex_order
        As in :func:`count`.

    A count that stopped early is a lower bound: ``partial`` says why, and
    :meth:`CountResult.describe` says "at least". One that finished first is
    exact, whatever the limits.

    Raises
    ------
    QueryError
        As :func:`count`; also for ``limit < 1`` or ``time_limit <= 0``.
    BackendUnavailableError
        As :func:`count`; also if limits are given to a registered engine
        that cannot stop early.

    Examples
    --------
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> r = count_result(g, "triangle", backend="reference")
    >>> r.describe(), r.backend
    ('triangle: 6 embeddings (non-induced)', 'reference')
    >>> k5 = wm.Graph.from_edges(*zip(*[(a, b) for a in range(5) for b in range(a)]))
    >>> count_result(k5, "triangle", backend="reference", limit=6).describe()  # K5 has 60
    'triangle: at least 36 embeddings (non-induced; partial: limit 6 reached)'
    """
    from ._factored import direct_then_factored
    from .engine import resolve_backend
    from .engine.race import can_race, count_beside, count_race, races_beside, warm_racers
    from ._cliques import clique_applies
    from ._hombasis import plan_hombasis
    from .plan.factor import plan_factoring
    from .plan.rival import race_applies

    if limit is not None and int(limit) < 1:
        raise QueryError(f"limit must be at least 1, not {limit}")
    if time_limit is not None and not float(time_limit) > 0:
        raise QueryError(f"time_limit must be positive, not {time_limit}")
    pg, g = S.source(graph)
    q = as_query(query, g)
    if client is not None:
        if partitions is not None:
            pg = S.partition(pg, g, None, partitions, None)
        return S.count_on_cluster(client, graph, g, q, mode, induced, backend, anchors, order,
                                  progress, limit, time_limit, shards, pg, vertex_order)
    engine = resolve_backend(backend)   # before planning: a missing GPU fails fast
    engine = S.budgeted(engine, memory_budget)
    t0 = time.perf_counter()
    whole = g
    by_label = None
    if pg is None and partitions is None:
        g, by_label = S.label_graph(g, q, induced)
    g, by_degree = S.count_graph(graph, g, q, vertex_order, anchors, engine, memory_budget,
                                 None, pg, partitions)
    plan = _plan(g, q, mode, induced, anchors, order, purpose="count")
    t1 = time.perf_counter()
    if plan.empty_reason is not None:
        return CountResult(0, mode, bool(induced), engine.name, 0.0, t1 - t0, plan, q, whole,
                           edge_labels=by_label,
                           vertex_order="degree" if by_degree else "given")
    pg = S.partition(pg, g, engine, partitions, memory_budget)
    if pg is not None:
        # the whole graph may be read instead where no part count was forced
        return S.count_partitioned(pg, q, plan, mode, induced, anchors, order, engine,
                                  progress, limit, time_limit, t1 - t0,
                                  "auto" if partitions is None else "parts")
    warm_s = warm_up(engine, g)     # timed apart: a one-time cost is not the count's
    if (order == "auto" and limit is not None and not can_race(engine)
            and races_beside(engine) and race_applies(plan)):
        # the CPU engine's kernels for the searches beside the device (count_beside below)
        warm_s += warm_racers(g)
    callback, close = _make_progress(progress, q.name)
    t2 = time.perf_counter()
    stop, why = _early_stop(None if limit is None else int(limit),
                            None if time_limit is None else float(time_limit),
                            int(plan.multiplier), t2)
    extra: dict[str, Any] = {}
    if stop is not None:
        if not _can_stop(engine):
            raise BackendUnavailableError(f"backend {engine.name!r} cannot stop a count "
                                          "early (limit, time_limit)")
        extra["stop"] = stop
    # a full count that can be factored at a cut vertex (plan.factor): the direct search
    # first for FACTOR_AFTER seconds (small counts end there), then the factored count
    whole_count = limit is None and order == "auto" and _can_stop(engine)
    fac = (plan_factoring(plan) if whole_count and os.environ.get("WARPMATCH_FACTOR", "1") != "0"
           else None)
    # or from the quotients' homomorphisms (warpmatch._hombasis), where labels allow it
    hom = (whole_count and os.environ.get("WARPMATCH_HOMBASIS", "1") != "0"
           and plan_hombasis(plan, g))
    # or from a complete labeled query's data cliques (warpmatch._cliques)
    cliq = (whole_count and not anchors and os.environ.get("WARPMATCH_CLIQUES", "1") != "0"
            and clique_applies(g, q, bool(induced)) is None)
    raced, count, factored, hombasis, cliques = False, None, None, None, None
    try:
        # only for the first `limit` matches: on full counts RI's order answered every
        # shipped labeled query GraphQL's did, and racing made them up to 1.7x slower
        if order == "auto" and limit is not None and can_race(engine):
            raw, plan = count_race(engine, g, plan, callback, extra.get("stop"))
            raced = bool((getattr(engine, "last_stats", None) or {}).get("raced"))
        elif order == "auto" and limit is not None and races_beside(engine):
            # the GPU engine: the CPU engine races RI's order and the rivals beside it
            raw, plan = count_beside(engine, g, plan, callback, extra.get("stop"))
            raced = bool((getattr(engine, "last_stats", None) or {}).get("raced"))
        elif fac is not None or hom or cliq:
            count, factored, hombasis, cliques = direct_then_factored(
                engine, g, q, plan, fac, callback, stop, hom,
                deadline=None if time_limit is None else t2 + float(time_limit),
                cliques=cliq)
        else:
            raw = int(engine.count(g, plan, progress=callback, **extra))
    finally:
        close()
    t3 = time.perf_counter()
    # an engine that compiles per plan says how long it took (GpuEngine.last_stats)
    stats = getattr(engine, "last_stats", None) or {}
    compile_s = float(stats.get("compile_s", 0.0))
    if count is None:
        count = raw * int(plan.multiplier)
    return CountResult(count, mode, bool(induced), engine.name,
                       t3 - t2, t1 - t0, plan, q, whole, warmup_seconds=warm_s,
                       partial=why[0] if why else None, compile_seconds=compile_s,
                       gpu_module=stats.get("module"), edge_labels=by_label,
                       vertex_order="degree" if by_degree else "given", raced=raced,
                       raced_on=stats.get("raced_on") if raced else None,
                       factored=factored, hombasis=hombasis, cliques=cliques)


def _can_stop(engine: Any) -> bool:
    """Whether ``engine.count`` takes ``stop`` (every engine here does)."""
    import inspect
    params = inspect.signature(engine.count).parameters
    return "stop" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def count(graph: Any, query: Any, mode: str = "embeddings", induced: bool = False,
          backend: str = "auto", anchors: Mapping[Any, Any] | None = None,
          order: str = "auto", progress: ProgressArg = False, client: Any = None,
          partitions: Any = None, memory_budget: int | str | None = None,
          vertex_order: str = "auto") -> int:
    """Count the embeddings (or distinct subgraphs) of a query graph in a data graph.

    Counting never materialises matches.

    Parameters
    ----------
    graph : Graph, str, os.PathLike or networkx graph
        The data graph, or a path that :func:`warpmatch.read_graph` reads with
        its defaults (undirected; call ``read_graph`` yourself for options).
    query : Query, str, os.PathLike or networkx graph
        A :class:`Query`, a pattern name (``"triangle"``), DSL text
        (``"a-b, b-c, c-a"``, ``"a:3-b:5"``, ``"a->b"``), a ``t/v/e`` query file,
        or a networkx graph.
    mode : {"embeddings", "subgraphs"}, optional
        ``"embeddings"`` (the default) counts every injective map from query to
        data vertices; ``"subgraphs"`` counts distinct data subgraphs, i.e.
        embeddings / |Aut(Q)|, found once each through symmetry-breaking
        restrictions.
    induced : bool, optional
        If ``True``, non-adjacent query vertices must map to non-adjacent data
        vertices. The default is ``False`` (the literature's usual count).
    backend : {"auto", "cpu", "gpu", "reference"}, optional
        The engine. The default, ``"auto"``, takes the GPU when CuPy and a
        device are present, else the numba CPU engine.
    anchors : dict, optional
        ``{query vertex: ids}``: restrict query vertices to the given data
        vertices, in the graph file's id space. Vertices are named as in the
        query (``"a"`` in DSL text; ``0..k-1`` in named patterns) or by index. The search is pruned at the
        anchored vertex, not filtered afterwards. The default is ``None``.
    order : str, optional
        Matching-order strategy (:mod:`warpmatch.plan.order`). The default, ``"auto"``,
        is RI's (Bonnici et al. 2013); a count with a ``limit`` (:func:`count_result`)
        of a labeled query of five or more vertices that has not reached it after 0.2 s
        also searches in RI's order with its twins in place, GraphQL's order and the
        core order (where they differ; :mod:`warpmatch.plan.rival`) and in random orders,
        one after another while they find nothing, and the first to
        reach it (or finish) answers (:mod:`warpmatch.engine.race`: no single order
        finds the first matches fast for every query). On the CPU engine they take
        turns; beside the GPU engine's search they run on the CPU engine, from 0.05 s
        on (:data:`warpmatch.engine.race.BESIDE_AFTER`).
    progress : bool or callable, optional
        ``True`` shows a progress bar on stderr; a callable receives
        ``(work done, work total)`` several times a second (the unit is the
        engine's: only the ratio means something). The default is ``False``.
    client : distributed.Client, optional
        Count on this Dask cluster (``pip install 'warpmatch[dist]'``;
        :func:`warpmatch.distributed.local_cluster` starts one): the search is
        cut into shards, each worker runs the best engine it has (``backend``
        names it on the workers), and the answer is the one-process answer.
        Progress then counts shards. The default, ``None``, counts here.
    partitions : int, str, os.PathLike or Partitioned, optional
        Match by parts (PBE, :mod:`warpmatch.partition`): ``P`` cuts the graph
        into ``P`` METIS parts (any backend), a directory written by
        ``warpmatch partition`` reuses its parts. Each part is matched alone,
        then the matches that cross parts; the answer is the in-memory one.
        The default, ``None``, partitions only when the GPU backend's budget
        is too small for the graph. ``graph`` may also be a partition directory.
        Unless ``partitions`` is given, a GPU count whose parts cut 35% of the
        edges or more (most matches would cross parts) reads the whole graph
        from host memory instead (``as_dict()["strategy"] == "whole graph"``).
    memory_budget : int or str, optional
        Device memory the GPU engine may use (bytes, or ``"4GB"``), for this
        call only; a graph that does not fit it is matched by parts. The
        default, ``None``, is the device's free memory less working room.
    vertex_order : {"auto", "degree", "given"}, optional
        Which numbering of the graph's vertices the search compares in its
        symmetry-breaking restrictions: ``"degree"`` counts on a copy whose ids
        ascend by degree (built once per graph and kept; ids the user sees do
        not change), so that each orbit of the query is first matched at its
        lowest-degree vertex; ``"given"`` keeps the graph's own. The default,
        ``"auto"``, takes ``"degree"`` for queries with at least three
        automorphisms (cliques, cycles, most of STMatch's patterns: 1.3-14.8x
        faster on a 10^7-edge power-law graph, one pattern 0.69x) on a graph
        counted in memory without anchors; ``$WARPMATCH_VERTEX_ORDER`` overrides
        it. The count is the same either way.

    Returns
    -------
    int
        The number of embeddings or subgraphs. A query label that does not
        occur in the graph gives 0 with an :class:`~warpmatch.errors.UnknownLabelWarning`.

    Raises
    ------
    QueryError
        The query is empty, disconnected or malformed, or an anchor names an
        unknown query vertex.
    GraphError
        An anchor id is not a vertex of the graph.
    BackendUnavailableError
        The backend cannot run here (``"gpu"`` without CuPy or a device).

    Examples
    --------
    >>> import networkx as nx
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_networkx(nx.complete_graph(4))
    >>> wm.count(g, "triangle")                       # 4 triangles x 6 automorphisms
    24
    >>> wm.count(g, "triangle", mode="subgraphs")
    4
    >>> wm.count(g, "a-b, b-c", induced=True)         # K4 has no induced 2-paths
    0
    >>> wm.count(g, "a-b, b-c, c-a", mode="subgraphs", anchors={"a": [0]})
    3
    """
    return count_result(graph, query, mode=mode, induced=induced, backend=backend,
                        anchors=anchors, order=order, progress=progress,
                        client=client, partitions=partitions,
                        memory_budget=memory_budget, vertex_order=vertex_order).count


# ---------------------------------------------------------------------- match
def match(graph: Any, query: Any, mode: str = "embeddings", induced: bool = False,
          backend: str = "auto", anchors: Mapping[Any, Any] | None = None,
          limit: int | None = None, batch_size: int = 65536, order: str = "auto",
          progress: Callable[[int, int], None] | None = None,
          client: Any = None, partitions: Any = None,
          memory_budget: int | str | None = None) -> Iterator[np.ndarray]:
    """List the embeddings (or distinct subgraphs) of a query, in batches.

    Parameters
    ----------
    graph, query, mode, induced, backend, anchors, order
        As in :func:`count`. With ``order="auto"`` and a ``limit``, a CPU listing that
        has found no match after 0.2 s races the other orders of the count's race, and
        the first to find one is listed (:func:`warpmatch.engine.race.match_race`).
    limit : int or None, optional
        Stop after this many matches. The default, ``None``, lists all.
    batch_size : int, optional
        Most rows per yielded array. The default is 65536; memory stays
        bounded by it whatever the number of matches.
    progress : callable, optional
        Receives ``(roots done, roots total)`` from the engine (with ``client``:
        shards).
    client : distributed.Client, optional
        List on this Dask cluster (as :func:`count`): each shard's rows come
        back as one array when the shard finishes, so the rows' order differs
        from one process's, their set does not (``batch_size`` does not apply;
        :func:`warpmatch.distributed.write_dataset` writes them on the workers
        instead). The default, ``None``, lists here.
    partitions, memory_budget
        As in :func:`count`: by parts, each match once (the in-memory rows, in
        another order); with ``client`` too, every part's and inter-partition
        search's shards run on the cluster.

    Listing always searches the graph's own ids (``vertex_order`` of :func:`count`
    does not apply): in ``mode="subgraphs"`` the id order decides which embedding
    stands for each subgraph, and every engine lists the same rows.

    Yields
    ------
    numpy.ndarray
        int64 arrays of shape (rows, k): column ``j`` holds the data vertex
        matched to query vertex ``j`` (``query.names[j]``), in the graph
        file's id space.

    Raises
    ------
    QueryError, GraphError, BackendUnavailableError
        As :func:`count`, raised by the call itself (the query is planned before
        the iterator is returned); also for a negative ``limit`` or a
        non-positive ``batch_size``.

    Examples
    --------
    >>> import numpy as np
    >>> import warpmatch as wm
    >>> # internal vertices 0, 1, 2 had the ids 10, 20, 30 in their source file
    >>> g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0], ids=[10, 20, 30])
    >>> rows = np.concatenate(list(wm.match(g, "a-b, b-c, c-a", mode="subgraphs")))
    >>> sorted(rows[0].tolist())
    [10, 20, 30]
    >>> sum(len(b) for b in wm.match(g, "triangle", limit=4))
    4
    """
    from .engine import resolve_backend

    if limit is not None and int(limit) < 0:
        raise QueryError(f"limit must be >= 0, not {limit}")
    if int(batch_size) <= 0:
        raise QueryError(f"batch_size must be positive, not {batch_size}")
    pg, g = S.source(graph)
    q = as_query(query, g)
    if client is not None:
        from . import distributed as D
        plan = _plan(g, q, mode, induced, anchors, order, purpose="list")
        if plan.empty_reason is not None or (limit is not None and int(limit) == 0):
            return iter(())
        if partitions is not None:
            pg = S.partition(pg, g, None, partitions, None)
        if pg is not None:
            from .distributed.partitioned import match_partitioned as match_parts
            return match_parts(client, pg, plan, anchors, backend,
                               None if limit is None else int(limit), progress)
        path = graph if isinstance(graph, (str, os.PathLike)) else None
        job = D.prepare(client, g, plan, backend=backend, graph_path=path)
        return D.match_plan(job, None if limit is None else int(limit), progress)
    engine = S.budgeted(resolve_backend(backend), memory_budget)
    if pg is None and partitions is None:
        g, _ = S.label_graph(g, q, induced)
    plan = _plan(g, q, mode, induced, anchors, order, purpose="list")
    if plan.multiplier != 1:   # a listing plan enumerates every match itself
        raise WarpmatchError(f"internal error: a listing plan has multiplier {plan.multiplier}")
    if plan.empty_reason is None:
        pg = S.partition(pg, g, engine, partitions, memory_budget)
    if pg is not None and plan.empty_reason is None:
        from .partition.search import match_partitioned
        rows = match_partitioned(pg, q, mode, bool(induced), anchors, order, engine,
                                 int(batch_size), limit, progress, plan=plan,
                                 strategy="auto" if partitions is None else "parts")
        return (g.to_external(r).astype(np.int64, copy=False) for r in rows)
    return _match_batches(engine, g, plan, limit, int(batch_size), progress, order)


def _match_batches(engine: Any, g: Graph, plan: Plan, limit: int | None, batch_size: int,
                   progress: Callable[[int, int], None] | None,
                   order: str = "ri") -> Iterator[np.ndarray]:
    from .engine.race import can_race, match_race

    if plan.empty_reason is not None or (limit is not None and int(limit) == 0):
        return
    lim = None if limit is None else int(limit)
    if order == "auto" and lim is not None and can_race(engine):
        # the first `limit` matches: a search that finds none soon races another order
        batches = match_race(engine, g, plan, batch_size, lim, progress)
    else:
        batches = ((plan, b) for b in engine.match(g, plan, batch_size=batch_size, limit=lim,
                                                   progress=progress))
    for p, batch in batches:
        if len(batch):
            yield g.to_external(p.to_query_order(np.asarray(batch))).astype(np.int64, copy=False)


# -------------------------------------------------------------------- explain
def explain(graph: Any, query: Any, mode: str = "embeddings", induced: bool = False,
            backend: str = "auto", anchors: Mapping[Any, Any] | None = None,
            order: str = "auto", purpose: str = "count", client: Any = None,
            shards: int | None = None, partitions: Any = None,
            memory_budget: int | str | None = None, vertex_order: str = "auto") -> str:
    """Describe how warpmatch will search: query, filters, order, restrictions.

    Parameters
    ----------
    graph, query, mode, induced, anchors, order
        As in :func:`count`.
    backend : str, optional
        The engine that would run (named in the text; nothing runs). The
        default is ``"auto"``.
    purpose : {"count", "list"}, optional
        Explain the counting plan (the default) or the listing plan.
    client : distributed.Client, optional
        Also say how this Dask cluster would run it: its workers, the shards
        and their estimated costs (:mod:`warpmatch.distributed`; only the
        workers are asked, nothing runs).
    shards : int, optional
        With ``client``: the shards wanted, as in :func:`count_result`.
    partitions, memory_budget
        As in :func:`count`; when the run would be partitioned, also say how
        (parts, their bytes, the inter-partition searches).
    vertex_order : str, optional
        As in :func:`count` (counting plans only).

    Returns
    -------
    str
        Several lines, for people.

    Examples
    --------
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> "order" in wm.explain(g, "triangle").lower()
    True
    """
    from .engine import resolve_backend

    pg, g = S.source(graph)
    q = as_query(query, g)
    engine = None
    try:
        engine = resolve_backend(backend)
        engine_name = engine.name
    except WarpmatchError as e:
        engine_name = f"{backend} (unavailable: {e})"
    if engine is not None:
        engine = S.budgeted(engine, memory_budget)       # a bad size is an error here
    head = f"graph {g!r}; backend {engine_name}; plan for {purpose}ing"
    lines = []
    if pg is None and partitions is None and client is None:
        g, by_label = S.label_graph(g, q, induced)
        if by_label is not None:
            lines.append(S.labels_line(g, by_label))
    if purpose == "count" and (engine is not None or client is not None):
        given = g
        g, by_degree = S.count_graph(graph, g, q, vertex_order, anchors, engine,
                                     memory_budget, client, pg, partitions)
        if by_degree and g is given:
            lines.append("vertex order: by degree (the graph's ids ascend by degree "
                         "already, so each orbit of the query is matched first at its "
                         "lowest-degree vertex)")
        elif by_degree:
            lines.append("vertex order: by degree (the count runs on a copy of the graph "
                         "whose ids ascend by degree, so each orbit of the query is "
                         "matched first at its lowest-degree vertex; ids shown are the "
                         "copy's)")
    plan = _plan(g, q, mode, induced, anchors, order, purpose=purpose)
    # the plan's own text names the query, mode and induced-ness; add what it cannot know
    text = "\n".join([head, *lines, plan.explain().rstrip("\n")])
    if engine is not None or pg is not None or partitions is not None:
        pg = S.partition(pg, g, engine, partitions, memory_budget)
    if pg is not None:
        from .partition.search import describe as describe_parts
        text += "\n" + describe_parts(pg, plan, anchors, engine_name, purpose, engine,
                                     "auto" if partitions is None else "parts")
    if client is not None:
        from .distributed.static import describe
        text += "\n" + describe(client, g, plan, shards)
    return text


# ------------------------------------------------------------------ continuous
from .stream.matcher import ContinuousMatcher as _LocalMatcher  # noqa: E402


class ContinuousMatcher(_LocalMatcher):
    """Per-update deltas of a query's matches over a stream of edge updates, in this
    process or on a Dask cluster.

    Every parameter, attribute and method of
    :class:`warpmatch.stream.matcher.ContinuousMatcher` (the one-process matcher,
    which this class is when ``client`` is not given), and:

    Parameters
    ----------
    client : distributed.Client, optional
        Run on a Dask cluster (:mod:`warpmatch.distributed`): every worker
        keeps a replica of the dynamic graph and applies every batch, and each
        searches its share of the batch's updates; the deltas are this
        class's, merged in arrival order. What is made is then a
        :class:`~warpmatch.distributed.continuous.DistributedMatcher` (the
        same methods and attributes; its ``graph`` is a static snapshot, a
        :class:`~warpmatch.stream.dynamic.DynamicGraph` given as ``graph`` is
        copied, not changed, and ``close()`` releases the replicas).

    Examples
    --------
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 1, 2], [1, 2, 3])             # a path 0-1-2-3
    >>> cm = wm.ContinuousMatcher(g, "triangle", backend="cpu")
    >>> cm.apply([(0, 2, "+")]).plus_counts.tolist(), cm.count
    ([6], 6)
    """

    def __new__(cls, graph: Any = None, query: Any = None, *args: Any, client: Any = None,
                **kwargs: Any) -> Any:
        if client is None:
            return super().__new__(cls)
        from .distributed.continuous import DistributedMatcher
        from .query.io import check_direction
        from .stream.dynamic import DynamicGraph
        g = graph.snapshot() if isinstance(graph, DynamicGraph) else as_graph(graph)
        q = resolve_query(query, directed=g.directed)
        check_direction(q, g.directed, g.name)
        cb, close = _make_progress(kwargs.pop("progress", False), q.name)
        try:
            return DistributedMatcher(g, q, client, *args, progress=cb, **kwargs)
        finally:
            close()

    def __init__(self, graph: Any, query: Any, *args: Any, client: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(graph, query, *args, **kwargs)
