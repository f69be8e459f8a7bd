"""warpmatch: find every occurrence of a small query graph in a large data graph.

Counting and listing subgraph embeddings (subgraph isomorphism, non-induced
by default) with a numba CPU engine and a CUDA GPU engine; see DESIGN.md for
the semantics and the layers (graph < query < plan < engine < api/cli).

Examples
--------
>>> import warpmatch as wm
>>> g = wm.Graph.from_edges([0, 1, 2, 0], [1, 2, 0, 3])
>>> q = wm.Query.parse("a-b, b-c, c-a")
>>> wm.count(g, q), wm.count(g, q, mode="subgraphs")
(6, 1)

Continuous matching (matches that appear and disappear as edges change):

>>> cm = wm.ContinuousMatcher(g, q, backend="cpu")
>>> d = cm.apply([(1, 3, "+"), (0, 1, "-")])
>>> d.plus_counts.tolist(), d.minus_counts.tolist(), cm.count
([6, 0], [0, 12], 0)
"""
from __future__ import annotations

from ._version import __version__
from .api import ContinuousMatcher, count, count_result, explain, match
from .errors import (
    BackendUnavailableError,
    BudgetError,
    DistributedError,
    GraphError,
    InputCleanupWarning,
    InputFormatError,
    QueryError,
    UnknownLabelWarning,
    WarpmatchError,
)
from .graph import Graph, read_graph, write_graph
from .query import Query, get_pattern, list_patterns
from .stream.matcher import StreamDelta
from .stream.updates import make_stream, read_updates, replay_temporal, write_updates

__all__ = [
    "__version__",
    "count", "count_result", "match", "explain",
    "Graph", "read_graph", "write_graph",
    "Query", "get_pattern", "list_patterns",
    "ContinuousMatcher", "StreamDelta", "read_updates", "write_updates", "make_stream",
    "replay_temporal",
    "WarpmatchError", "InputFormatError", "QueryError", "GraphError",
    "BackendUnavailableError", "BudgetError", "DistributedError", "UnknownLabelWarning",
    "InputCleanupWarning",
]
