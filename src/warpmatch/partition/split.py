"""Cutting a data graph into parts that fit a memory budget (PBE §3.1).

Map: :func:`parse_bytes` (``"4GB"`` -> bytes) < :func:`parts_for_budget` (how
many parts, from the graph's bytes and the budget) < :func:`partition_vertices`
(a part id per vertex: METIS k-way through ``pymetis``, on a contracted graph
above a size (:mod:`.coarsen`), or BFS ranges) <
:func:`part_bytes` (what each part's induced subgraph costs on the device).

PBE (Guo et al., "Exploiting reuse for GPU subgraph enumeration", §3.1)
partitions with METIS so that few edges cross parts, into ``ceil(|G| / (g -
θ))`` parts, where ``g`` is the GPU's memory and ``θ`` the room kept for
intermediate results. Differences:

- ``θ`` is a share of the budget (:data:`ROOM`), and the part count grows
  (by half, up to :data:`MAX_TRIES` times) until every part's induced
  subgraph fits, because METIS balances vertex weights, not bytes exactly.
- Vertex weights are degrees plus one, so parts are balanced by edges (a
  hub weighs what it costs), as the issue asks.
- A graph of more than :data:`~.coarsen.METIS_DIRECT_ENTRIES` adjacency entries
  is contracted by label propagation before METIS sees it, and the parts are
  refined on the graph itself (:mod:`.coarsen`): METIS on the whole graph took
  23x the graph's bytes.
- Without ``pymetis`` (the ``[partition]`` extra) the vertices are cut into
  ranges of a BFS order, balanced by the same weights, with a warning: a BFS
  keeps neighbourhoods together far better than id ranges, at no
  dependency.
"""
from __future__ import annotations

import math
import re
import warnings
from typing import Any
from collections import deque

import numpy as np

from ..errors import BudgetError, GraphError
from ..graph.csr import Graph, edge_chunks

#: share of the budget kept for intermediate results and the engine's buffers (θ)
ROOM = 0.25
#: times the part count may grow when a part does not fit
MAX_TRIES = 6
METHODS = ("auto", "metis", "bfs")

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20,
          "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
          "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}


class PartitionWarning(UserWarning):
    """Partitioning fell back to a weaker method (``pymetis`` is not installed)."""


def parse_bytes(value: int | float | str) -> int:
    """Bytes from an int or a string such as ``"4GB"``, ``"512 MiB"``, ``"1.5g"``.

    Units are binary (``GB`` = ``GiB`` = 2**30), as GPU memory is.

    Examples
    --------
    >>> parse_bytes("4GB"), parse_bytes("512 MiB"), parse_bytes(1000)
    (4294967296, 536870912, 1000)
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        n = int(value)
    elif isinstance(value, float):
        n = int(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(value))
        unit = m.group(2).lower() if m else None
        if m is None or unit not in _UNITS:
            raise ValueError(f"memory budget {value!r}: expected bytes or a size such as "
                             "'4GB' or '512MiB'")
        n = int(float(m.group(1)) * _UNITS[unit])
    if n <= 0:
        raise ValueError(f"memory budget {value!r} must be positive")
    return n


def part_bytes(graph: Graph, part: np.ndarray, parts: int) -> np.ndarray:
    """Bytes of each part's induced subgraph in the device layout (int64[parts]).

    The same accounting as the GPU engine's: 8-byte row offsets per vertex
    (twice for directed graphs), 4-byte ids per kept adjacency entry, 4 more
    per entry with edge labels, 4 per vertex with vertex labels.
    """
    entries = np.zeros(parts, dtype=np.int64)
    for src, dst in edge_chunks(graph):   # memory bounded on huge graphs
        ps = part[src]
        entries += np.bincount(ps[ps == part[dst]], minlength=parts)
    verts = np.bincount(part, minlength=parts).astype(np.int64)
    per_entry = 4 + (4 if graph.edge_labels is not None else 0)
    per_vertex = 8 + (4 if graph.vertex_labels is not None else 0)
    if graph.directed:
        return verts * (per_vertex + 8) + 2 * entries * per_entry + 16
    return verts * per_vertex + entries * per_entry + 8


def parts_for_budget(graph_bytes: int, budget: int) -> int:
    """PBE's ``ceil(|G| / (g - θ))`` with ``θ = ROOM * g``."""
    usable = int(budget * (1 - ROOM))
    if usable <= 0:
        raise BudgetError(f"memory budget {budget} bytes leaves no room for a partition")
    return max(1, math.ceil(graph_bytes / usable))


def _weights(graph: Graph) -> np.ndarray:
    """METIS vertex weights: degree + 1, so parts balance by edges."""
    return graph.degree.astype(np.int64) + 1


def _symmetric(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the undirected simple graph underneath (METIS wants symmetric lists)."""
    if not graph.directed:
        return graph.indptr, graph.indices
    src, dst = graph.edges()
    a = np.concatenate([src, dst]).astype(np.int64)
    b = np.concatenate([dst, src]).astype(np.int64)
    key = np.unique(a * graph.n + b)
    a, b = key // graph.n, key % graph.n
    ptr = np.zeros(graph.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=graph.n), out=ptr[1:])
    return ptr, b


def _bfs_ranges(graph: Graph, parts: int) -> np.ndarray:
    """Cut a BFS order (every component, highest degree first) into ``parts``
    ranges of about equal weight."""
    n = graph.n
    ptr, nbr = _symmetric(graph)
    w = _weights(graph)
    seen = np.zeros(n, dtype=bool)
    order = np.empty(n, dtype=np.int64)
    pos = 0
    for s in np.argsort(-w, kind="stable").tolist():
        if seen[s]:
            continue
        seen[s] = True
        queue = deque([s])
        while queue:
            v = queue.popleft()
            order[pos] = v
            pos += 1
            row = nbr[ptr[v]:ptr[v + 1]]
            new = row[~seen[row]]
            seen[new] = True
            queue.extend(new.tolist())
    cum = np.cumsum(w[order])
    total = int(cum[-1]) if n else 0
    # the part of a vertex: which of `parts` equal slices of the weight its end falls in
    slot = np.minimum(parts - 1, (cum - 1) * parts // max(total, 1))
    part = np.empty(n, dtype=np.int32)
    part[order] = slot.astype(np.int32)
    return part


def partition_vertices(graph: Graph, parts: int, method: str = "auto",
                       seed: int = 0, progress: Any = None) -> tuple[np.ndarray, str]:
    """A part id (0..parts-1) per vertex, and the method that made it.

    Parameters
    ----------
    graph : Graph
    parts : int
        Number of parts, 1 <= parts <= graph.n.
    method : {"auto", "metis", "bfs"}, optional
        ``"metis"`` needs ``pymetis`` (``pip install 'warpmatch[partition]'``);
        ``"auto"`` (the default) uses it when installed and otherwise warns
        (:class:`PartitionWarning`) and cuts BFS ranges.
    seed : int, optional
        METIS's random seed. The default is 0.
    progress : callable, optional
        ``progress(done, total)`` through METIS's stages (:func:`.coarsen.metis_parts`).

    Returns
    -------
    part : numpy.ndarray
        int32[n]; ids ``0..P-1`` with no empty part, where ``P <= parts`` (a
        part METIS or a range leaves empty on a tiny graph is dropped).
    method : str
        ``"metis"``, ``"bfs"`` or ``"single"`` (one part).

    Raises
    ------
    GraphError
        ``parts`` is not between 1 and the vertex count.
    ValueError
        Unknown method; ``"metis"`` without ``pymetis``.
    """
    parts = int(parts)
    if method not in METHODS:
        raise ValueError(f"unknown partitioning method {method!r}; choose from {METHODS}")
    if not 1 <= parts <= max(graph.n, 1):
        raise GraphError(f"cannot cut graph {graph.name!r} ({graph.n} vertices) into {parts} "
                         f"parts: choose 1..{graph.n}")
    if parts == 1:
        return np.zeros(graph.n, dtype=np.int32), "single"
    metis = None
    if method in ("auto", "metis"):
        try:
            import pymetis as metis
        except ImportError:
            if method == "metis":
                raise ValueError("partitioning with METIS needs pymetis: "
                                 "pip install 'warpmatch[partition]'") from None
            warnings.warn("pymetis is not installed (pip install 'warpmatch[partition]'): "
                          "cutting BFS ranges instead of METIS parts, which cuts more edges "
                          "(on a 10^8-edge graph with communities, 74% of them where METIS "
                          "cut 4%), and a partitioned search is slower the more it cuts",
                          PartitionWarning, stacklevel=2)
    if metis is None:
        return _dense(_bfs_ranges(graph, parts), parts), "bfs"
    from .coarsen import metis_parts
    ptr, nbr = _symmetric(graph)
    part, _ = metis_parts(metis, ptr, nbr, _weights(graph), parts, seed, progress=progress)
    return _dense(part, parts), "metis"


def _dense(part: np.ndarray, parts: int) -> np.ndarray:
    """Part ids renumbered ``0..used-1``: METIS on a tiny graph, or a BFS range that
    one heavy vertex overfills, can leave a part empty, and every part must be real."""
    used = np.unique(part)
    if used.size == parts:
        return part
    remap = np.full(parts, -1, dtype=np.int32)
    remap[used] = np.arange(used.size, dtype=np.int32)
    return remap[part]


def fit_parts(graph: Graph, budget: int, parts: int | None = None, method: str = "auto",
              seed: int = 0, progress: Any = None) -> tuple[np.ndarray, str]:
    """Partition so that every part's induced subgraph fits ``budget`` bytes less the room.

    Starts from ``parts`` (default: :func:`parts_for_budget`) and grows the
    count by half while a part is too large. ``progress`` is as in
    :func:`partition_vertices` (each try starts it again).

    Raises
    ------
    BudgetError
        Even one vertex's row does not fit, or no count up to the vertex count fits.
    """
    from ..engine.gpu.memory import device_graph_bytes
    usable = int(budget * (1 - ROOM))
    need_one = graph.max_degree * 8 + 64
    if need_one > usable:
        raise BudgetError(f"memory budget {budget} bytes is too small for graph {graph.name!r}: "
                          f"one vertex's neighbourhood needs about {need_one} bytes and "
                          f"{ROOM:.0%} of the budget is kept for intermediate results")
    p = parts if parts is not None else parts_for_budget(device_graph_bytes(graph), budget)
    p = min(max(1, p), max(graph.n, 1))
    for _ in range(MAX_TRIES + 1):
        part, how = partition_vertices(graph, p, method, seed, progress)
        sizes = part_bytes(graph, part, int(part.max(initial=0)) + 1)
        if int(sizes.max(initial=0)) <= usable or p >= graph.n:
            return part, how
        p = min(graph.n, max(p + 1, math.ceil(p * 1.5)))
    raise BudgetError(f"no partition of graph {graph.name!r} into up to {p} parts fits "
                      f"{usable} bytes per part (budget {budget} less {ROOM:.0%} room)")
