"""Whether a request runs partitioned, and on which partition (the strategy of issue 18).

Map: :func:`device_budget` (the default budget: the device's free memory less
working room) < :func:`with_budget` (a copy of an engine with a given budget) <
:func:`choose` (``partitions=``, ``memory_budget=`` and the engine decide: in
memory, or a :class:`~warpmatch.partition.store.Partitioned` graph; :func:`_cut`
reuses a cut made on the fly, :data:`_CUTS`) < :func:`open_source` (a partition
directory given where a graph is).

PBE §3.1 partitions when the graph does not fit the GPU. Here:

- ``partitions=P`` forces ``P`` parts on every backend (the CPU one too);
  a directory path or a :class:`Partitioned` reuses a partition made once.
- Otherwise a device engine (``gpu``) partitions when the graph's device
  bytes exceed the budget, less the room of :data:`~.split.ROOM`; host
  engines read the graph in host memory and never need to.
"""
from __future__ import annotations

import os
import weakref
from typing import Any

import numpy as np

from ..graph.csr import Graph
from .split import ROOM, parse_bytes
from .store import Partitioned, is_partition_dir

#: the part ids last cut on the fly for each graph (kept while the graph lives; 4 bytes a
#: vertex), with what they were cut for: ``(parts asked, method, budget, part, how)``.
#: Cutting is the slow step (METIS on the contracted graph: 178-205 s at 10^8 edges on an
#: H100 host), and each later count, listing or explain of the graph would pay it again.
#: Only the ids are kept: the parts' subgraphs, as large as the graph, are made per call.
_CUTS: "weakref.WeakKeyDictionary[Graph, tuple]" = weakref.WeakKeyDictionary()

#: device memory kept free for the engine's buffers when the budget is the default
WORKING_ROOM = 0.10


def device_budget(engine: Any) -> int | None:
    """The device engine's budget: ``memory_budget_bytes`` if set, else free memory less
    :data:`WORKING_ROOM`; ``None`` for host engines (no device memory to fit)."""
    if getattr(engine, "name", "") != "gpu":
        return None
    if getattr(engine, "memory_budget_bytes", None) is not None:
        return int(engine.memory_budget_bytes)
    import cupy as cp
    free, _ = cp.cuda.Device(getattr(engine, "device", 0)).mem_info
    return int(free * (1 - WORKING_ROOM))


def with_budget(engine: Any, memory_budget: int | str | None) -> Any:
    """``engine`` with ``memory_budget`` (bytes, or a size such as ``"4GB"``) as its device
    budget: a copy, for a device engine given a budget (the API's engines are one
    instance per backend, so a budget set on it would stay for every later call);
    else ``engine`` itself."""
    if memory_budget is None or getattr(engine, "name", "") != "gpu":
        return engine
    import copy
    out = copy.copy(engine)
    out.memory_budget_bytes = parse_bytes(memory_budget)
    return out


def open_source(source: Any) -> Partitioned | None:
    """A :class:`Partitioned` if ``source`` is one or names a partition directory."""
    if isinstance(source, Partitioned):
        return source
    if isinstance(source, (str, os.PathLike)) and is_partition_dir(source):
        return Partitioned.open(source)
    return None


def choose(graph: Graph, engine: Any, partitions: Any = None,
           memory_budget: int | str | None = None, method: str = "auto") -> Partitioned | None:
    """The partition a request runs on, or ``None`` to run in memory.

    Parameters
    ----------
    graph : Graph
    engine : Engine
        The engine that will run the intra-partition searches (give it the budget
        with :func:`with_budget`, so that each part honours it).
    partitions : int, str, os.PathLike or Partitioned, optional
        ``P`` parts (forced, any backend), or a partition to reuse.
    memory_budget : int or str, optional
        Device bytes (``"4GB"``). The default, ``None``, is the device's free
        memory less working room.
    method : str, optional
        Partitioning method for new partitions (:func:`~.split.partition_vertices`).

    Returns
    -------
    Partitioned or None
    """
    budget = None if memory_budget is None else parse_bytes(memory_budget)
    if isinstance(partitions, Partitioned):
        if partitions.graph is not graph:
            return Partitioned(graph, partitions.part, partitions.method)
        return partitions
    if isinstance(partitions, (str, os.PathLike)):
        return Partitioned.open(partitions, graph=graph)
    if partitions is not None:
        if isinstance(partitions, bool) or int(partitions) < 1:
            raise ValueError(f"partitions must be a positive part count or a partition "
                             f"directory, not {partitions!r}")
        return _cut(graph, int(partitions), budget, method)
    dev = _budget(engine, budget)
    if _fits(graph, dev):
        return None
    return _cut(graph, None, dev, method)


def _cut(graph: Graph, parts: int | None, budget: int | None, method: str) -> Partitioned:
    """:meth:`Partitioned.build`, or the part ids cut for an earlier request of ``graph``
    (:data:`_CUTS`) where they serve this one: the same part count asked (or none) and
    method; without a budget, a cut made without one (exactly ``parts`` parts); under a
    budget, parts that fit it, cut without a budget or for one at least half of it (a
    much larger budget needs fewer parts; the default budget, the device's free memory,
    moves a little between calls)."""
    hit = _CUTS.get(graph)
    if hit is not None and hit[0] == parts and hit[1] == method:
        h_budget, part, how = hit[2:]
        if budget is None:
            if h_budget is None:
                return Partitioned(graph, part, how)
        elif h_budget is None or 2 * h_budget >= budget:
            pg = Partitioned(graph, part, how)
            if int(pg.part_bytes().max(initial=0)) <= budget * (1 - ROOM):
                return pg
    pg = Partitioned.build(graph, parts=parts, budget=budget, method=method)
    _CUTS[graph] = (parts, method, budget, np.asarray(pg.part), pg.method)
    return pg


def _budget(engine: Any, budget: int | None) -> int | None:
    return device_budget(engine) if budget is None else (
        budget if getattr(engine, "name", "") == "gpu" else None)


def _fits(graph: Graph, dev: int | None) -> bool:
    if dev is None:
        return True
    from ..engine.gpu.memory import device_graph_bytes
    return device_graph_bytes(graph) <= dev * (1 - ROOM)


def fits(graph: Graph, engine: Any, memory_budget: int | str | None = None) -> bool:
    """Whether :func:`choose` runs ``graph`` in memory when no partitions are asked for:
    an engine without a device budget, or a device copy within the budget less room."""
    return _fits(graph, _budget(engine, None if memory_budget is None
                                else parse_bytes(memory_budget)))
