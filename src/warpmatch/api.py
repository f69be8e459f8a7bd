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
names, directedness), so engines can trust what they receive.

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
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from .errors import QueryError, WarpmatchError
from .graph import Graph, read_graph
from .plan import Plan, build_plan
from .query import Query, resolve_query

__all__ = ["count", "match", "explain", "count_result", "CountResult", "describe_count",
           "as_graph", "as_query", "MODES"]

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


def describe_count(value: int, mode: str, induced: bool, name: str | None = None) -> str:
    """The sentence every printed count uses, so its semantics are never ambiguous.

    Parameters
    ----------
    value : int
        The count.
    mode : {"embeddings", "subgraphs"}
    induced : bool
    name : str, optional
        The query's name, printed first.

    Returns
    -------
    str

    Examples
    --------
    >>> describe_count(1234, "embeddings", False, "triangle")
    'triangle: 1,234 embeddings (non-induced)'
    >>> describe_count(1, "subgraphs", True)
    '1 subgraph (induced)'
    """
    noun = mode if value != 1 else mode[:-1]
    text = f"{value:,} {noun} ({'induced' if induced else 'non-induced'})"
    return f"{name}: {text}" if name else text


# ---------------------------------------------------------------------- count
@dataclass(frozen=True)
class CountResult:
    """A count with everything needed to report it.

    Attributes
    ----------
    count : int
        The answer (already multiplied by ``plan.multiplier``).
    mode : str
    induced : bool
    backend : str
        The engine that ran (``"cpu"``, ``"gpu"``, ``"reference"``), or
        ``"planner"`` when planning alone proved the answer is 0.
    seconds : float
        Time in the engine (excluding planning).
    plan_seconds : float
        Time to build the plan.
    plan : Plan
    query : Query
    graph : Graph
    """

    count: int
    mode: str
    induced: bool
    backend: str
    seconds: float
    plan_seconds: float
    plan: Plan
    query: Query
    graph: Graph

    def describe(self) -> str:
        """``"triangle: 1,234 embeddings (non-induced)"``."""
        return describe_count(self.count, self.mode, self.induced, self.query.name)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready facts (what ``warpmatch count --json`` prints)."""
        return {
            "count": int(self.count),
            "mode": self.mode,
            "induced": bool(self.induced),
            "backend": self.backend,
            "seconds": round(self.seconds, 6),
            "plan_seconds": round(self.plan_seconds, 6),
            "multiplier": int(self.plan.multiplier),
            "query": self.query.name,
            "query_dsl": self.query.to_dsl(),
            "query_vertices": int(self.query.k),
            "query_edges": int(self.query.m),
            "directed": bool(self.graph.directed),
            "graph": self.graph.name,
            "vertices": int(self.graph.n),
            "edges": int(self.graph.num_edges),
            "anchors": {self.query.names[int(u)]: int(n) for u, n in self.plan.anchors.items()}
            if self.plan.anchors else {},
            "empty_reason": self.plan.empty_reason,
            "semantics": self.describe(),
        }


def _make_progress(progress: ProgressArg, desc: str) -> tuple[Callable[[int, int], None] | None,
                                                             Callable[[], None]]:
    """(callback for the engine, function that closes it)."""
    if progress is None or progress is False:
        return None, lambda: None
    if progress is True:
        from ._progress import ProgressBar
        bar = ProgressBar(desc, enabled=True)
        return bar, bar.close
    if callable(progress):
        return progress, lambda: None
    raise TypeError("progress must be True, False or a callable(done, total)")


def count_result(graph: Any, query: Any, mode: str = "embeddings", induced: bool = False,
                 backend: str = "auto", anchors: Mapping[Any, Any] | None = None,
                 order: str = "ri", progress: ProgressArg = False) -> CountResult:
    """Like :func:`count`, but return a :class:`CountResult` with the plan, backend and timings.

    Parameters are those of :func:`count`.

    Examples
    --------
    >>> import warpmatch as wm
    >>> g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0])
    >>> r = count_result(g, "triangle", backend="reference")
    >>> r.describe(), r.backend
    ('triangle: 6 embeddings (non-induced)', 'reference')
    """
    from .engine import resolve_backend

    g = as_graph(graph)
    q = as_query(query, g)
    engine = resolve_backend(backend)   # before planning: a missing GPU fails fast
    t0 = time.perf_counter()
    plan = _plan(g, q, mode, induced, anchors, order, purpose="count")
    t1 = time.perf_counter()
    if plan.empty_reason is not None:
        return CountResult(0, mode, bool(induced), engine.name, 0.0, t1 - t0, plan, q, g)
    callback, close = _make_progress(progress, q.name)
    try:
        raw = int(engine.count(g, plan, progress=callback))
    finally:
        close()
    t2 = time.perf_counter()
    return CountResult(raw * int(plan.multiplier), mode, bool(induced), engine.name,
                       t2 - t1, t1 - t0, plan, q, g)


def count(graph: Any, query: Any, mode: str = "embeddings", induced: bool = False,
          backend: str = "auto", anchors: Mapping[Any, Any] | None = None,
          order: str = "ri", progress: ProgressArg = False) -> int:
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
        Matching-order strategy. The default is ``"ri"`` (Bonnici et al. 2013).
    progress : bool or callable, optional
        ``True`` shows a progress bar on stderr; a callable receives
        ``(roots done, roots total)``. The default is ``False``.

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
                        anchors=anchors, order=order, progress=progress).count


# ---------------------------------------------------------------------- match
def match(graph: Any, query: Any, mode: str = "embeddings", induced: bool = False,
          backend: str = "auto", anchors: Mapping[Any, Any] | None = None,
          limit: int | None = None, batch_size: int = 65536, order: str = "ri",
          progress: Callable[[int, int], None] | None = None) -> Iterator[np.ndarray]:
    """List the embeddings (or distinct subgraphs) of a query, in batches.

    Parameters
    ----------
    graph, query, mode, induced, backend, anchors, order
        As in :func:`count`.
    limit : int or None, optional
        Stop after this many matches. The default, ``None``, lists all.
    batch_size : int, optional
        Most rows per yielded array. The default is 65536; memory stays
        bounded by it whatever the number of matches.
    progress : callable, optional
        Receives ``(roots done, roots total)`` from the engine.

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
    g = as_graph(graph)
    q = as_query(query, g)
    engine = resolve_backend(backend)
    plan = _plan(g, q, mode, induced, anchors, order, purpose="list")
    if plan.multiplier != 1:   # a listing plan enumerates every match itself
        raise WarpmatchError(f"internal error: a listing plan has multiplier {plan.multiplier}")
    return _match_batches(engine, g, plan, limit, int(batch_size), progress)


def _match_batches(engine: Any, g: Graph, plan: Plan, limit: int | None, batch_size: int,
                   progress: Callable[[int, int], None] | None) -> Iterator[np.ndarray]:
    if plan.empty_reason is not None or (limit is not None and int(limit) == 0):
        return
    for batch in engine.match(g, plan, batch_size=batch_size,
                              limit=None if limit is None else int(limit), progress=progress):
        if len(batch):
            yield g.to_external(plan.to_query_order(np.asarray(batch))).astype(np.int64, copy=False)


# -------------------------------------------------------------------- explain
def explain(graph: Any, query: Any, mode: str = "embeddings", induced: bool = False,
            backend: str = "auto", anchors: Mapping[Any, Any] | None = None,
            order: str = "ri", purpose: str = "count") -> str:
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

    g = as_graph(graph)
    q = as_query(query, g)
    try:
        engine_name = resolve_backend(backend).name
    except WarpmatchError as e:
        engine_name = f"{backend} (unavailable: {e})"
    plan = _plan(g, q, mode, induced, anchors, order, purpose=purpose)
    # the plan's own text names the query, mode and induced-ness; add what it cannot know
    head = f"graph {g!r}; backend {engine_name}; plan for {purpose}ing"
    return head + "\n" + plan.explain().rstrip("\n")
