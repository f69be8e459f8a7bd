"""Where the GPU engine's copy of a data graph lives: device, pinned host, or managed memory.

Map: :data:`MEMORY_KINDS` < :func:`device_graph_bytes` (what a graph costs in
device memory) < :func:`_array` (one array in a memory kind) <
:class:`DeviceGraph` (the graph's arrays, as the kernels read them) < the engine's
cache of copies, one per graph (``_GRAPHS``), and its management: :func:`device_copy`,
:func:`release_graph`, :func:`make_room` < :func:`pinned_copy` (a host graph in
page-locked memory, so that its copies to the device run at full bus speed).

- ``"device"`` (the default): ``cudaMalloc``, copied once; the graph counts
  against the engine's memory budget.
- ``"pinned"``: zero-copy. The arrays are copied into page-locked host memory
  (``cudaHostAlloc``); with unified addressing (every 64-bit CUDA platform) a
  kernel reads that memory through the same pointer, over PCIe, so a graph
  larger than the device is searched without copying it there. It does not
  count against the budget. PBE (§6) compares against this ("zero-copy").
- ``"hybrid"``: the row offsets (and vertex labels) in device memory, the
  adjacency lists (and edge labels) pinned as in ``"pinned"``. The kernels read a
  row's bounds and every candidate's degree from the offsets, so zero-copy's
  chains of dependent PCIe reads lose their first links, for ``8 (n + 1)`` bytes
  of the budget (twice that when directed) instead of the whole graph.
- ``"managed"``: unified memory (``cudaMallocManaged``): pages migrate to the
  device on demand and are evicted when it is oversubscribed (PBE's "UMA").
  It does not count against the budget either.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ...errors import GraphError
from ...graph.csr import Graph

MEMORY_KINDS = ("device", "pinned", "hybrid", "managed")


def device_graph_bytes(graph: Graph) -> int:
    """Bytes the graph takes in device memory (as :class:`DeviceGraph` stores it)."""
    m = int(graph.indices.size)
    b = (graph.n + 1) * 8 + m * 4
    if graph.edge_labels is not None:
        b += m * 4
    if graph.directed:
        b += (graph.n + 1) * 8 + m * 4 + (m * 4 if graph.edge_labels is not None else 0)
    if graph.vertex_labels is not None:
        b += graph.n * 4
    return b


def resident_bytes(graph: Graph, memory: str) -> int:
    """Bytes of device memory a :class:`DeviceGraph` of ``graph`` in ``memory`` takes
    (the whole graph for ``"device"``, the offsets and vertex labels for ``"hybrid"``,
    nothing for the host-resident kinds)."""
    if memory == "device":
        return device_graph_bytes(graph)
    if memory != "hybrid":
        return 0
    b = (graph.n + 1) * 8 * (2 if graph.directed else 1)
    return b + (graph.n * 4 if graph.vertex_labels is not None else 0)


def _array(a: np.ndarray, dtype: Any, memory: str) -> Any:
    """``a`` as a CuPy array in ``memory`` (a view kernels can read)."""
    import cupy as cp
    a = np.ascontiguousarray(a, dtype=dtype)
    if memory == "device":
        return cp.asarray(a)
    nbytes = max(int(a.nbytes), 1)
    if memory == "pinned":
        mem = cp.cuda.alloc_pinned_memory(nbytes)
        np.frombuffer(mem, dtype=a.dtype, count=a.size)[:] = a.ravel()
        # unified addressing: the host pointer of cudaHostAlloc'd memory is valid on the
        # device (no cudaHostGetDevicePointer needed); `mem` stays alive as the owner
        ptr = cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(mem.ptr, nbytes, mem,
                                                          cp.cuda.Device().id), 0)
        return cp.ndarray(a.shape, dtype=a.dtype, memptr=ptr)
    if memory == "managed":
        out = cp.ndarray(a.shape, dtype=a.dtype, memptr=cp.cuda.malloc_managed(nbytes))
        out.set(a)
        return out
    raise ValueError(f"graph memory must be one of {MEMORY_KINDS}, not {memory!r}")


class DeviceGraph:
    """A :class:`Graph`'s arrays where the kernels read them (cached per graph and kind).

    Parameters
    ----------
    graph : Graph
    memory : {"device", "pinned", "managed"}, optional
        See the module docstring. The default is ``"device"``.
    """

    def __init__(self, graph: Graph, memory: str = "device") -> None:
        if memory not in MEMORY_KINDS:
            raise ValueError(f"graph memory must be one of {MEMORY_KINDS}, not {memory!r}")
        if graph.indices.dtype != np.int32:
            raise GraphError(f"{graph.name}: the GPU engine needs int32 vertex ids "
                             f"(n = {graph.n} vertices)")
        self.memory = memory
        # hybrid: per-vertex arrays on the device, per-entry arrays pinned
        per_v, per_e = ("device", "pinned") if memory == "hybrid" else (memory, memory)
        self.indptr = _array(graph.indptr, np.int64, per_v)
        self.indices = _array(graph.indices, np.int32, per_e)
        self.elab = (None if graph.edge_labels is None
                     else _array(graph.edge_labels, np.int32, per_e))
        if graph.directed:
            self.in_indptr = _array(graph.in_indptr, np.int64, per_v)
            self.in_indices = _array(graph.in_indices, np.int32, per_e)
            self.in_elab = (None if graph.in_edge_labels is None
                            else _array(graph.in_edge_labels, np.int32, per_e))
        else:
            self.in_indptr, self.in_indices, self.in_elab = self.indptr, self.indices, self.elab
        self.vlab = (None if graph.vertex_labels is None
                     else _array(graph.vertex_labels, np.int32, per_v))
        self.nbytes = device_graph_bytes(graph)
        #: bytes of device memory it takes (0 when it lives in host memory)
        self.device_bytes = resident_bytes(graph, memory)
        # the graph's cached degrees: a partitioned run copies each part on every query
        self.max_list = int(max(graph.out_degree.max(initial=0),
                                graph.in_degree.max(initial=0)))


#: the GPU engine's copy of each graph it searched (kept while the graph lives)
_GRAPHS: "weakref.WeakKeyDictionary[Graph, DeviceGraph]" = weakref.WeakKeyDictionary()


def device_copy(graph: Graph, memory: str) -> DeviceGraph:
    """The engine's cached copy of ``graph`` in ``memory``, made (and cached) if there is
    none of that kind; a copy of another kind is freed first."""
    dg = _GRAPHS.get(graph)
    if dg is None or dg.memory != memory:
        _GRAPHS.pop(graph, None)
        dg = _GRAPHS[graph] = DeviceGraph(graph, memory)
    return dg


def release_graph(graph: Graph) -> None:
    """Drop the engine's cached copy of ``graph`` (device, pinned or managed memory), e.g.
    before the next partition is loaded; the next search of ``graph`` copies it again."""
    _GRAPHS.pop(graph, None)


def make_room(graph: Graph, memory: str = "device", room: float = 0.25) -> int:
    """Before a search of ``graph``: while the device lacks room for its copy (with
    ``room`` to spare for the search), drop other graphs' cached copies, oldest first.

    A Dask worker keeps the graphs of its recent shards (a partitioned run's parts and
    the whole graph): their copies may not all fit the device together. Returns how
    many copies were dropped (none when ``graph`` is cached or not in device memory).
    """
    need = resident_bytes(graph, memory)
    if not need or graph in _GRAPHS or not len(_GRAPHS):
        return 0
    import cupy as cp
    pool = cp.get_default_memory_pool()
    dropped = 0
    while len(_GRAPHS):
        pool.free_all_blocks()
        if need <= cp.cuda.Device().mem_info[0] * (1 - room):
            break
        _GRAPHS.pop(next(iter(list(_GRAPHS.keys()))), None)
        dropped += 1
    return dropped


def pinned_copy(graph: Graph) -> Graph:
    """``graph`` with its arrays in page-locked host memory (``cudaHostAlloc``).

    A :class:`DeviceGraph` of it (``"device"``) is then copied by DMA at the bus's
    speed, without the driver staging pageable memory through its own buffers: a
    partitioned run copies every part to the device on every query (PBE keeps its
    graph in pinned host memory for the same reason). The result is a new
    :class:`Graph` (same ids, same content); the pinned memory lives as long as it.
    """
    import dataclasses

    import cupyx

    def pin(a: np.ndarray | None) -> np.ndarray | None:
        if a is None:
            return None
        out = cupyx.empty_pinned(a.shape, dtype=a.dtype)
        out[...] = a
        return out

    kw = {"indptr": pin(graph.indptr), "indices": pin(graph.indices),
          "vertex_labels": pin(graph.vertex_labels), "edge_labels": pin(graph.edge_labels)}
    if graph.directed:
        kw.update(in_indptr=pin(graph.in_indptr), in_indices=pin(graph.in_indices),
                  in_edge_labels=pin(graph.in_edge_labels))
    return dataclasses.replace(graph, **kw)
