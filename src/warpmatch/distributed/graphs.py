"""How the data graph reaches the workers: once per worker, never with each task.

What is where
-------------
- :class:`GraphFile` — a ``.wmg`` binary cache every worker can read: a worker
  memory-maps it on first use and keeps it (:func:`worker_graph`'s cache, keyed by
  path, size and modification time, so a rewritten file is read again);
- :func:`ship_graph` — the client side: a graph loaded from a ``.wmg`` file
  (memory-mapped arrays know their file) travels as its path; any other graph is
  scattered to every worker once (``Client.scatter(broadcast=True)``) and tasks
  name the resulting future;
- :func:`worker_graph` — the worker side: the graph object for a handle, or a
  :class:`~warpmatch.errors.DistributedError` naming the worker and the file;
- :func:`ship_object`/:func:`worker_object` — the same for the plan.

A graph without a file is written once (per graph object) as a temporary
``.wmg`` file, used when every worker sees it (a local cluster, a
shared file system): Dask can then rerun any task anywhere after a worker dies,
where a scattered copy whose holders all died would be lost. Without a shared
file system the graph is scattered (``broadcast=True``).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from ..errors import DistributedError
from ..graph import Graph
from ..graph.binary import mapped_path

__all__ = ["GraphFile", "PickleFile", "ship_graph", "sent_as", "ship_object", "worker_graph",
           "worker_object", "graph_file_of"]


@dataclass(frozen=True)
class GraphFile:
    """A ``.wmg`` file as workers will find it: its absolute path, size and mtime (ns)."""
    path: str
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: str | os.PathLike) -> "GraphFile":
        p = os.path.abspath(os.fspath(path))
        st = os.stat(p)
        return cls(p, int(st.st_size), int(st.st_mtime_ns))


def graph_file_of(graph: Graph) -> GraphFile | None:
    """The ``.wmg`` file all of ``graph``'s arrays are memory-mapped from, if any
    (:func:`warpmatch.graph.binary.mapped_path`)."""
    name = mapped_path(graph)
    if name is None:
        return None
    try:
        return GraphFile.of(name)
    except OSError:
        return None


def _visible(client: Any, path: str) -> bool:
    """Whether every worker sees ``path`` with this size (a shared file system)."""
    size = os.path.getsize(path)
    try:
        seen = client.run(os.path.getsize, path)
    except OSError:
        return False
    return bool(seen) and all(v == size for v in seen.values())


#: graphs written to a temporary ``.wmg`` for the workers, one file per graph object for
#: its lifetime (a CLI counting several queries writes it once); removed with the graph
_SPILLED: "weakref.WeakKeyDictionary[Graph, GraphFile]" = weakref.WeakKeyDictionary()


def _spilled(graph: Graph) -> GraphFile:
    gf = _SPILLED.get(graph)
    if gf is not None:
        try:
            if GraphFile.of(gf.path) == gf:
                return gf
        except OSError:
            pass
    from ..graph import save_binary
    d = tempfile.mkdtemp(prefix="warpmatch-graph-")
    p = os.path.join(d, "graph.wmg")
    save_binary(graph, p)
    gf = _SPILLED[graph] = GraphFile.of(p)
    weakref.finalize(graph, shutil.rmtree, d, True)
    return gf


def ship_graph(client: Any, graph: Graph, path: str | os.PathLike | None = None,
               spill: bool = True) -> Any:
    """A handle that tasks take as their graph argument.

    Parameters
    ----------
    client : distributed.Client
    graph : Graph
        The graph (already read on the client: the plan is built from it).
    path : str or os.PathLike, optional
        The ``.wmg`` file ``graph`` was read from, if the caller knows it; else
        it is found from the arrays' memory map, if any.
    spill : bool, optional
        A graph without a file is written to a temporary ``.wmg`` (once per
        graph object) and used where every worker sees it (a local cluster, a
        shared file system): a file survives a worker's death where a
        scattered copy may not. The default is ``True``.

    Returns
    -------
    GraphFile or distributed.Future
        A file handle (each worker maps the file itself), or the future of the
        graph scattered to every worker once (no shared file system).
    """
    gf = None
    if path is not None and os.fspath(path).endswith(".wmg"):
        gf = GraphFile.of(path)
    if gf is None:
        gf = graph_file_of(graph)
    if gf is not None:
        return gf
    if spill:
        gf = _spilled(graph)
        if _visible(client, gf.path):
            return gf
    return client.scatter(graph, broadcast=True, hash=False)


def sent_as(graph: Graph, handle: Any) -> str:
    """How :func:`ship_graph` sent ``graph``: ``"file"``, ``"spilled file"`` or ``"scatter"``."""
    if not isinstance(handle, GraphFile):
        return "scatter"
    return "spilled file" if _SPILLED.get(graph) == handle else "file"


def ship_object(client: Any, obj: Any, spill_dir: str | os.PathLike | None, name: str) -> Any:
    """Like :func:`ship_graph` for a small picklable object (a plan): a pickle file in
    ``spill_dir`` every worker sees, else scattered once."""
    if spill_dir is not None:
        import pickle
        p = os.path.join(os.fspath(spill_dir), name + ".pickle")
        with open(p, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        if _visible(client, p):
            return PickleFile.of(p)
        os.remove(p)
    return client.scatter(obj, broadcast=True, hash=False)


@dataclass(frozen=True)
class PickleFile(GraphFile):
    """A pickled object (the plan) in a file every worker reads."""


def worker_object(handle: Any) -> Any:
    """The object of a :func:`ship_object` handle, on a worker (cached like graphs)."""
    if not isinstance(handle, PickleFile):
        return handle
    with _LOCK:
        obj = _OBJECTS.hit(handle)
        if obj is None:
            import pickle
            try:
                with open(handle.path, "rb") as fh:
                    obj = pickle.load(fh)
            except OSError as exc:
                raise DistributedError(f"{_here()} cannot read {handle.path!r}: "
                                       f"{exc.strerror or exc}") from None
            _remember(_OBJECTS, OBJECT_CACHE_SIZE, handle, obj)
        return obj


class _Lru(dict):
    """Insertion order is use order: :meth:`hit` moves an entry to the end."""

    def hit(self, key: Any) -> Any:
        v = self.pop(key, None)
        if v is not None:
            self[key] = v
        return v


def _remember(cache: _Lru, size: int, handle: Any, obj: Any) -> None:
    while len(cache) >= size:
        cache.pop(next(iter(cache)))
    cache[handle] = obj


# Graphs and plans are cached apart: every query ships a new plan, and a plan must never
# push out the graph (a graph loaded again is a new object, which the GPU engine uploads
# again: seconds at 10^8 edges).
_GRAPHS = _Lru()
_OBJECTS = _Lru()
_LOCK = threading.Lock()
#: graphs a worker keeps mapped (the least recently used is dropped first): enough for a
#: partitioned run's parts and whole graph, so that no query maps (and checks) them again;
#: their GPU copies are dropped apart, when the device lacks room (engine.gpu.make_room)
CACHE_SIZE = 16
#: plans a worker keeps (each query's plan is a new file; old ones are never used again)
OBJECT_CACHE_SIZE = 16


def _here() -> str:
    try:
        from distributed import get_worker
        return f"worker {get_worker().address}"
    except (ImportError, ValueError):
        return "this process"


def worker_graph(handle: Any) -> Graph:
    """The graph of a handle, on a worker (a scattered graph arrives as itself).

    Raises
    ------
    DistributedError
        The file cannot be read here, or it changed since the client saw it.
    """
    if isinstance(handle, Graph):
        return handle
    if not isinstance(handle, GraphFile) or isinstance(handle, PickleFile):
        raise DistributedError(f"{_here()}: not a graph handle: {type(handle).__name__}")
    with _LOCK:
        g = _GRAPHS.hit(handle)
        if g is not None:
            return g
        try:
            now = GraphFile.of(handle.path)
        except OSError as exc:
            raise DistributedError(f"{_here()} cannot read the graph file {handle.path!r}: "
                                   f"{exc.strerror or exc} (workers must see the same file "
                                   f"system as the client, or be given the graph in "
                                   f"memory)") from None
        if now != handle:
            raise DistributedError(f"{_here()}: the graph file {handle.path!r} changed since "
                                   f"the client read it (size {handle.size:,} -> "
                                   f"{now.size:,} bytes)")
        from ..graph import load_binary
        try:
            g = load_binary(handle.path, mmap=True)
        except Exception as exc:  # noqa: BLE001 - any reader error, named with the worker
            raise DistributedError(f"{_here()} cannot read the graph file "
                                   f"{handle.path!r}: {exc}") from exc
        _remember(_GRAPHS, CACHE_SIZE, handle, g)
        return g
