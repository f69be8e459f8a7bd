"""The data graph: compressed sparse row (CSR) arrays in numpy.

A :class:`Graph` is a frozen bundle of flat arrays that every engine reads
directly (numba and CUDA kernels take the arrays, never the object):

- ``indptr`` (int64, n+1) and ``indices`` (int32 while ids fit, else int64):
  the out-adjacency, each row sorted ascending, no duplicates, no self-loops.
  For an undirected graph every edge appears in both rows.
- ``edge_labels`` (int32, aligned with ``indices``) or ``None``.
- ``in_indptr`` / ``in_indices`` / ``in_edge_labels``: the in-adjacency of a
  directed graph. For an undirected graph they are the *same objects* as the
  out-arrays, so engines can treat both cases alike.
- ``vertex_labels`` (int32, n) or ``None``.
- ``ids`` (int64, n) or ``None``: the id each vertex had in its source file
  (``None`` means the ids are 0..n-1 already). Anchors given by users are in
  this id space and matches are mapped back to it on output.

Building goes through :func:`Graph.from_edges`, the one place that validates
edge arrays, drops self-loops and duplicate edges, and reports what it dropped
(``graph.report`` and an :class:`~warpmatch.errors.InputCleanupWarning`).
Arrays that arrive already built (the ``.wmg`` cache) are checked instead by
:func:`check_csr` and :func:`check_labels`: the invariants above that the
kernels index by, in linear time and bounded memory.
"""
from __future__ import annotations

import warnings
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import GraphError, InputCleanupWarning
from ._build import build_csr, transpose_csr

INT32_MAX = np.iinfo(np.int32).max
INT64_MAX = int(np.iinfo(np.int64).max)


@dataclass(frozen=True)
class BuildReport:
    """What :func:`Graph.from_edges` dropped while building.

    Attributes
    ----------
    self_loops : int
        Input edges (u, u) that were dropped.
    duplicates : int
        Input edges that repeated an edge already seen (for undirected graphs
        u-v and v-u are the same edge) and were dropped; the first occurrence,
        and its label, is kept.
    input_edges : int
        Edges given, before cleaning.
    """

    self_loops: int = 0
    duplicates: int = 0
    input_edges: int = 0

    def __str__(self) -> str:
        return (f"{self.input_edges} input edges, {self.self_loops} self-loops and "
                f"{self.duplicates} duplicate edges dropped")


#: per graph, the degree arrays already computed, keyed by the offsets array they came from
#: (a weak map, not a field: a graph pickled to a worker does not carry them)
_DEGREES: "weakref.WeakKeyDictionary[Graph, dict[int, tuple[np.ndarray, np.ndarray]]]" = \
    weakref.WeakKeyDictionary()


def _diff_once(graph: "Graph", ptr: np.ndarray) -> np.ndarray:
    """``np.diff(ptr)`` for one of ``graph``'s offset arrays, kept while the graph lives."""
    memo = _DEGREES.setdefault(graph, {})
    hit = memo.get(id(ptr))
    if hit is not None and hit[0] is ptr:
        return hit[1]
    d = np.diff(ptr)
    d.flags.writeable = False
    memo[id(ptr)] = (ptr, d)
    return d


def index_dtype(n: int) -> np.dtype:
    """The smallest vertex-id dtype for ``n`` vertices: int32 when it fits, else int64."""
    return np.dtype(np.int32) if n <= INT32_MAX else np.dtype(np.int64)


@dataclass(frozen=True, eq=False)
class Graph:
    """An immutable data graph in CSR form. Build it with :func:`Graph.from_edges`
    or a reader (:func:`warpmatch.read_graph`); see the module docstring for the arrays."""

    n: int
    indptr: np.ndarray
    indices: np.ndarray
    directed: bool = False
    vertex_labels: np.ndarray | None = None
    edge_labels: np.ndarray | None = None
    in_indptr: np.ndarray | None = None
    in_indices: np.ndarray | None = None
    in_edge_labels: np.ndarray | None = None
    ids: np.ndarray | None = None
    name: str = "graph"
    report: BuildReport = field(default_factory=BuildReport)

    def __post_init__(self) -> None:
        if not self.directed:
            # one set of arrays serves as both out- and in-adjacency
            object.__setattr__(self, "in_indptr", self.indptr)
            object.__setattr__(self, "in_indices", self.indices)
            object.__setattr__(self, "in_edge_labels", self.edge_labels)

    # ------------------------------------------------------------------ build
    @classmethod
    def from_edges(
        cls,
        src: Any,
        dst: Any,
        n: int | None = None,
        vertex_labels: Any = None,
        edge_labels: Any = None,
        directed: bool = False,
        ids: Any = None,
        name: str = "graph",
        warn: bool = True,
    ) -> "Graph":
        """Build a graph from parallel arrays of edge endpoints.

        Parameters
        ----------
        src, dst : array-like of int
            Edge endpoints, vertex ids in ``0..n-1``.
        n : int, optional
            Number of vertices. The default is ``None``, meaning
            ``max(src, dst) + 1`` (or the length of ``vertex_labels``/``ids``).
        vertex_labels : array-like of int, optional
            One non-negative label per vertex. The default is ``None``: unlabeled.
        edge_labels : array-like of int, optional
            One non-negative label per input edge. The default is ``None``.
        directed : bool, optional
            Keep edge direction (out- and in-adjacency). The default is ``False``.
        ids : array-like of int, optional
            The external id of each vertex (as in the source file). The default
            is ``None``, meaning the ids are ``0..n-1``.
        name : str, optional
            A name shown by ``info`` and ``explain``.
        warn : bool, optional
            Emit an :class:`InputCleanupWarning` when self-loops or duplicates
            are dropped. The default is ``True``.

        Returns
        -------
        Graph

        Examples
        --------
        >>> g = Graph.from_edges([0, 1, 2], [1, 2, 0])
        >>> g.n, g.num_edges
        (3, 3)
        """
        src = _as_int_array(src, "src")
        dst = _as_int_array(dst, "dst")
        if src.shape != dst.shape:
            raise GraphError(f"src and dst differ in length ({src.size} vs {dst.size})")
        vl = None if vertex_labels is None else _as_int_array(vertex_labels, "vertex_labels")
        el = None if edge_labels is None else _as_int_array(edge_labels, "edge_labels")
        # labels are stored as int32: a larger one would wrap silently and match wrongly
        for what, lab in (("vertex_labels", vl), ("edge_labels", el)):
            if lab is not None and lab.size and int(lab.max()) > INT32_MAX:
                raise GraphError(f"{what} holds {int(lab.max())}, too large for a label "
                                 f"(labels are int32, at most {INT32_MAX})")
        id_arr = None if ids is None else _as_int_array(ids, "ids", allow_negative=True)
        if el is not None and el.size != src.size:
            raise GraphError(f"edge_labels has {el.size} entries for {src.size} edges")
        if n is None:
            n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
            if vl is not None:
                n = max(n, vl.size)
            if id_arr is not None:
                n = max(n, id_arr.size)
        n = int(n)
        if n < 0:
            raise GraphError(f"n must be non-negative, got {n}")
        if src.size and max(int(src.max()), int(dst.max())) >= n:
            bad = int(max(src.max(), dst.max()))
            raise GraphError(f"edge endpoint {bad} is out of range for n={n} vertices")
        if vl is not None and vl.size != n:
            raise GraphError(f"vertex_labels has {vl.size} entries for n={n} vertices")
        if id_arr is not None and id_arr.size != n:
            raise GraphError(f"ids has {id_arr.size} entries for n={n} vertices")

        m_in = int(src.size)
        loops = src == dst
        n_loops = int(loops.sum())
        if n_loops:
            keep = ~loops
            src, dst = src[keep], dst[keep]
            if el is not None:
                el = el[keep]
        if n >= INT32_MAX:
            # build_csr packs (neighbour, input index) into one int64 key
            raise GraphError(f"graphs of {n} vertices (2**31 or more) are not supported")
        itype = index_dtype(n)
        if directed:
            indptr, indices, origin = build_csr(n, src, dst, False, itype)
            in_indptr, in_indices, pos = transpose_csr(n, indptr, indices)
            elab = None if el is None else el[origin].astype(np.int32)
            in_elab = None if elab is None else elab[pos]
            n_kept = int(indices.size)
        else:
            indptr, indices, origin = build_csr(n, src, dst, True, itype)
            elab = None if el is None else el[origin].astype(np.int32)
            in_indptr = in_indices = in_elab = None
            n_kept = int(indices.size) // 2
        n_dup = int(src.size) - n_kept
        report = BuildReport(self_loops=n_loops, duplicates=n_dup, input_edges=m_in)
        if warn and (n_loops or n_dup):
            warnings.warn(f"{name}: {report}", InputCleanupWarning, stacklevel=2)
        return cls(
            n=n, indptr=indptr, indices=indices, directed=bool(directed),
            vertex_labels=None if vl is None else vl.astype(np.int32),
            edge_labels=elab, in_indptr=in_indptr, in_indices=in_indices,
            in_edge_labels=in_elab,
            ids=None if id_arr is None else id_arr.astype(np.int64),
            name=name, report=report,
        )

    # ------------------------------------------------------------ properties
    @property
    def num_edges(self) -> int:
        """Number of edges (undirected: each edge once; directed: each arc once)."""
        m = int(self.indices.size)
        return m if self.directed else m // 2

    @property
    def out_degree(self) -> np.ndarray:
        """Out-degree of every vertex (the degree, for undirected graphs); read-only,
        computed once per graph (planning asks for it per query vertex)."""
        return _diff_once(self, self.indptr)

    @property
    def in_degree(self) -> np.ndarray:
        """In-degree of every vertex (the degree, for undirected graphs); read-only."""
        return _diff_once(self, self.in_indptr)

    @property
    def degree(self) -> np.ndarray:
        """Total degree (out + in for directed graphs)."""
        if self.directed:
            return self.out_degree + self.in_degree
        return self.out_degree

    @property
    def max_degree(self) -> int:
        """Largest total degree (0 for an empty graph)."""
        return int(self.degree.max(initial=0))

    @property
    def labeled(self) -> bool:
        """True if the graph has vertex labels."""
        return self.vertex_labels is not None

    def nbytes(self) -> int:
        """Bytes held by the graph's arrays (shared arrays counted once)."""
        seen: dict[int, int] = {}
        for arr in (self.indptr, self.indices, self.edge_labels, self.vertex_labels,
                    self.in_indptr, self.in_indices, self.in_edge_labels, self.ids):
            if arr is not None:
                seen[id(arr)] = arr.nbytes
        return sum(seen.values())

    def neighbors(self, v: int) -> np.ndarray:
        """Sorted out-neighbours of internal vertex ``v``."""
        return self.indices[self.indptr[v]:self.indptr[v + 1]]

    def in_neighbors(self, v: int) -> np.ndarray:
        """Sorted in-neighbours of internal vertex ``v``."""
        return self.in_indices[self.in_indptr[v]:self.in_indptr[v + 1]]

    def has_edge(self, u: int, v: int) -> bool:
        """True if the edge u->v (u-v if undirected) exists; internal ids."""
        row = self.neighbors(u)
        i = int(np.searchsorted(row, v))
        return i < row.size and int(row[i]) == v

    def edge_label(self, u: int, v: int) -> int | None:
        """Label of edge u->v, ``None`` if the graph has no edge labels; KeyError if absent."""
        lo = int(self.indptr[u])
        row = self.indices[lo:int(self.indptr[u + 1])]
        i = int(np.searchsorted(row, v))
        if i >= row.size or int(row[i]) != v:
            raise KeyError((u, v))
        return None if self.edge_labels is None else int(self.edge_labels[lo + i])

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """All edges as (src, dst) internal-id arrays; undirected edges once with src < dst."""
        src = np.repeat(np.arange(self.n, dtype=self.indices.dtype), self.out_degree)
        dst = self.indices
        if self.directed:
            return src, dst.copy()
        keep = src < dst
        return src[keep], dst[keep]

    def edge_label_array(self) -> np.ndarray | None:
        """Labels aligned with :meth:`edges`, or ``None``."""
        if self.edge_labels is None:
            return None
        if self.directed:
            return self.edge_labels.copy()
        src = np.repeat(np.arange(self.n, dtype=self.indices.dtype), self.out_degree)
        return self.edge_labels[src < self.indices]

    # ----------------------------------------------------------------- ids
    def to_internal(self, external_ids: Any, what: str = "vertex id") -> np.ndarray:
        """Map ids of the source file's id space to internal 0..n-1 ids.

        Raises
        ------
        GraphError
            If an id is not a vertex of the graph (the message names it).
        """
        try:
            ext = np.asarray(external_ids, dtype=np.int64).ravel()
        except OverflowError:
            # a Python int beyond int64 cannot be an id of any graph (ids are int64)
            big = next(int(x) for x in np.asarray(external_ids, dtype=object).ravel()
                       if not -2**63 <= int(x) < 2**63)
            raise GraphError(f"{what} {big} is not a vertex of {self.name} (it is outside "
                             "the int64 range of vertex ids)") from None
        if self.ids is None:
            bad = ext[(ext < 0) | (ext >= self.n)]
            if bad.size:
                raise GraphError(f"{what} {int(bad[0])} is not a vertex of {self.name} "
                                 f"(ids are 0..{self.n - 1})")
            return ext.astype(self.indices.dtype)
        order = np.argsort(self.ids, kind="stable")
        sorted_ids = self.ids[order]
        pos = np.searchsorted(sorted_ids, ext)
        pos_c = np.minimum(pos, max(self.n - 1, 0))
        ok = (pos < self.n) & (sorted_ids[pos_c] == ext) if self.n else np.zeros(ext.size, bool)
        if not np.all(ok):
            raise GraphError(f"{what} {int(ext[~ok][0])} is not a vertex of {self.name}")
        return order[pos_c].astype(self.indices.dtype)

    def to_external(self, internal: np.ndarray) -> np.ndarray:
        """Map internal ids (any shape) back to the source file's ids."""
        internal = np.asarray(internal)
        if self.ids is None:
            return internal.astype(np.int64, copy=False)
        return self.ids[internal]

    # ------------------------------------------------------------- interop
    @classmethod
    def from_networkx(cls, G: Any, label: str = "label", edge_label: str = "label",
                      name: str | None = None) -> "Graph":
        """Build from a networkx (Di)Graph; node/edge attribute ``label`` become labels.

        Nodes that are integers keep their value as external id; other node
        objects are numbered in iteration order. Labels are read only if every
        node (edge) has the attribute.
        """
        from .convert import from_networkx
        return from_networkx(cls, G, label=label, edge_label=edge_label, name=name)

    def to_networkx(self, label: str = "label") -> Any:
        """Return a networkx Graph/DiGraph with external ids as nodes and labels as attributes."""
        from .convert import to_networkx
        return to_networkx(self, label=label)

    @classmethod
    def from_scipy(cls, A: Any, directed: bool | None = None, name: str = "graph") -> "Graph":
        """Build from a scipy sparse adjacency matrix (nonzeros are edges; values ignored).

        ``directed=None`` means: directed unless the matrix is symmetric.
        """
        from .convert import from_scipy
        return from_scipy(cls, A, directed=directed, name=name)

    def to_scipy(self) -> Any:
        """The (out-)adjacency as a ``scipy.sparse.csr_array`` of ones (int8)."""
        import scipy.sparse as sp
        data = np.ones(self.indices.size, dtype=np.int8)
        return sp.csr_array((data, self.indices, self.indptr), shape=(self.n, self.n))

    def summary(self) -> dict[str, Any]:
        """A dict of facts for ``warpmatch info``."""
        deg = self.degree
        out: dict[str, Any] = {
            "name": self.name,
            "vertices": self.n,
            "edges": self.num_edges,
            "directed": self.directed,
            "max_degree": int(deg.max(initial=0)),
            "mean_degree": float(deg.mean()) if self.n else 0.0,
            "vertex_labels": 0 if self.vertex_labels is None
            else int(np.unique(self.vertex_labels).size),
            "edge_labels": 0 if self.edge_labels is None
            else int(np.unique(self.edge_labels).size),
            "id_dtype": str(self.indices.dtype),
            "bytes": self.nbytes(),
        }
        return out

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        lab = ", labeled" if self.labeled else ""
        return f"<Graph {self.name!r}: {self.n} vertices, {self.num_edges} edges, {kind}{lab}>"


#: elements per slice in :func:`check_csr` / :func:`check_labels`: the checks of
#: a billion-entry memory-mapped array then need a few MB of temporaries, not GBs
CHECK_CHUNK = 1 << 20


def row_entries(ptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the entries of ``rows`` in a CSR with offsets ``ptr``, row by row,
    and the index (into ``rows``) of the row each comes from: a vectorised gather.

    Examples
    --------
    >>> pos, row_of = row_entries(np.array([0, 2, 3, 5]), np.array([2, 0]))
    >>> pos.tolist(), row_of.tolist()
    ([3, 4, 0, 1], [0, 0, 1, 1])
    """
    lo = ptr[rows].astype(np.int64)
    deg = ptr[rows + 1].astype(np.int64) - lo
    total = int(deg.sum())
    row_of = np.repeat(np.arange(rows.size, dtype=np.int64), deg)
    if total == 0:
        return np.zeros(0, dtype=np.int64), row_of
    starts = np.cumsum(deg) - deg
    return np.repeat(lo - starts, deg) + np.arange(total, dtype=np.int64), row_of


def edge_chunks(graph: "Graph", rows: int = 1 << 22,
                entries: int = 1 << 22) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The out-adjacency as ``(src, dst)`` arrays, at most ``rows`` rows and (but for a
    single longer row) ``entries`` entries at a time (every entry: an undirected edge
    twice), so that a pass over a huge graph's edges stays within bounded memory: with
    rows alone, a chunk of 4M rows of a 2x10^7-entry graph was the whole graph, and its
    int64 sources 160 MB (the partition's cut count and part sizes each held one).

    Examples
    --------
    >>> g = Graph.from_edges([0, 1], [1, 2])
    >>> [(s.tolist(), d.tolist()) for s, d in edge_chunks(g, rows=2)]
    [([0, 1, 1], [1, 0, 2]), ([2], [1])]
    """
    ptr = graph.indptr
    v0 = 0
    while v0 < graph.n:
        v1 = min(graph.n, v0 + rows)
        if int(ptr[v1]) - int(ptr[v0]) > entries:
            v1 = max(v0 + 1, int(np.searchsorted(ptr, int(ptr[v0]) + entries, "right")) - 1)
        lo, hi = int(ptr[v0]), int(ptr[v1])
        src = np.repeat(np.arange(v0, v1, dtype=np.int64), np.diff(ptr[v0:v1 + 1]))
        yield src, np.asarray(graph.indices[lo:hi])
        v0 = v1


def _slices(size: int, overlap: int = 0) -> Iterator[tuple[int, int]]:
    """``[a, b)`` slices covering ``0..size``, each reaching ``overlap`` back into the last."""
    for a in range(0, size, CHECK_CHUNK):
        yield max(a - overlap, 0), min(a + CHECK_CHUNK, size)


def check_csr(n: int, indptr: np.ndarray, indices: np.ndarray,
              names: tuple[str, str] = ("indptr", "indices")) -> None:
    """Check that ``(indptr, indices)`` is a CSR adjacency the engines may index by.

    These are the invariants a numba or CUDA kernel relies on without bounds
    checks (an id out of range is a read outside the arrays, i.e. a crash, and
    an unsorted row breaks the galloping intersections): ``indptr`` holds
    ``n + 1`` non-decreasing offsets from 0 to ``indices.size``, every id in
    ``indices`` is in ``0..n-1``, and each row is strictly increasing (sorted,
    no duplicate neighbours). Linear time, vectorised over slices of
    :data:`CHECK_CHUNK` elements, so memory stays bounded for memory-mapped
    arrays of any size.

    Parameters
    ----------
    n : int
        Number of vertices.
    indptr, indices : numpy.ndarray
        One-dimensional integer arrays.
    names : tuple of str, optional
        How the arrays are called in messages. The default is
        ``("indptr", "indices")``.

    Raises
    ------
    GraphError
        Naming the array, the vertex or position, and what is wrong.

    Examples
    --------
    >>> import numpy as np
    >>> check_csr(3, np.array([0, 1, 2, 2]), np.array([1, 0]))
    >>> check_csr(3, np.array([0, 1, 2, 2]), np.array([1, 7]))
    Traceback (most recent call last):
    ...
    warpmatch.errors.GraphError: indices holds the id 7 at position 1, outside 0..2
    """
    p, i = names
    n = int(n)
    m = int(indices.size)
    for name, arr in ((p, indptr), (i, indices)):
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise GraphError(f"{name} must be a one-dimensional integer array "
                             f"(got {arr.dtype}, {arr.ndim} dimensions)")
    if indptr.size != n + 1:
        raise GraphError(f"{p} has {indptr.size} offsets for n={n} vertices (expected {n + 1})")
    if int(indptr[0]) != 0 or int(indptr[-1]) != m:
        raise GraphError(f"{p} runs from {int(indptr[0])} to {int(indptr[-1])}, expected "
                         f"0 to {m} (the length of {i})")
    for a, b in _slices(indptr.size, overlap=1):
        c = indptr[a:b]
        # values in range first: then c[1:] < c[:-1] compares, nothing can overflow
        if int(c.min()) < 0 or int(c.max()) > m:
            bad = a + int(np.flatnonzero((c < 0) | (c > m))[0])
            raise GraphError(f"{p} holds the offset {int(indptr[bad])} at vertex {bad}, "
                             f"outside 0..{m}")
        down = np.flatnonzero(c[1:] < c[:-1])
        if down.size:
            v = a + int(down[0])
            raise GraphError(f"{p} decreases at vertex {v} ({int(indptr[v])} then "
                             f"{int(indptr[v + 1])})")
    if m == 0:
        return
    for a, b in _slices(m, overlap=1):
        c = indices[a:b]
        lo, hi = int(c.min()), int(c.max())
        if lo < 0 or hi >= n:
            bad = a + int(np.flatnonzero((c < 0) | (c >= n))[0])
            raise GraphError(f"{i} holds the id {int(indices[bad])} at position {bad}, "
                             f"outside 0..{n - 1}")
        # a step that does not increase is allowed only where a new row starts
        q = a + 1 + np.flatnonzero(c[1:] <= c[:-1])
        if q.size:
            r = np.searchsorted(indptr, q)          # first row starting at or after q
            inside = indptr[np.minimum(r, n)] != q
            if np.any(inside):
                pos = int(q[np.argmax(inside)])
                v = int(np.searchsorted(indptr, pos, side="right")) - 1
                raise GraphError(f"the row of vertex {v} in {i} is not strictly increasing "
                                 f"(position {pos}: {int(indices[pos - 1])} then "
                                 f"{int(indices[pos])})")


def check_labels(labels: np.ndarray, size: int, name: str) -> None:
    """Check a label array: one-dimensional integers, ``size`` of them, in ``0..INT32_MAX``.

    Parameters
    ----------
    labels : numpy.ndarray
        Vertex or edge labels.
    size : int
        The length it must have (n for vertex labels, the adjacency length for
        edge labels).
    name : str
        How the array is called in messages.

    Raises
    ------
    GraphError
        Naming the array and what is wrong.

    Examples
    --------
    >>> import numpy as np
    >>> check_labels(np.array([0, 3, 1], dtype=np.int32), 3, "vertex_labels")
    """
    if labels.ndim != 1 or labels.dtype.kind not in "iu":
        raise GraphError(f"{name} must be a one-dimensional integer array "
                         f"(got {labels.dtype}, {labels.ndim} dimensions)")
    if labels.size != size:
        raise GraphError(f"{name} has {labels.size} entries, expected {size}")
    for a, b in _slices(labels.size):
        c = labels[a:b]
        lo, hi = int(c.min()), int(c.max())
        if lo < 0 or hi > INT32_MAX:
            raise GraphError(f"{name} holds the label {lo if lo < 0 else hi}, outside "
                             f"0..{INT32_MAX}")


def _as_int_array(x: Any, what: str, allow_negative: bool = False) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        arr = arr.ravel()
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.floor(arr)):
            raise GraphError(f"{what} must hold integers")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iu":
        try:
            arr = arr.astype(np.int64)
        except (TypeError, ValueError) as exc:
            raise GraphError(f"{what} must hold integers ({exc})") from None
    if not allow_negative and arr.dtype.kind == "i" and arr.min() < 0:
        raise GraphError(f"{what} holds a negative value ({int(arr.min())})")
    if arr.dtype == np.uint64 and arr.max() > INT64_MAX:
        raise GraphError(f"{what} holds a value too large for int64")
    return arr.astype(np.int64, copy=False)
