"""Interop with networkx and scipy.sparse (behind ``Graph.from_networkx`` & co.).

Everything goes through :func:`Graph.from_edges`, so graphs built from other
libraries are validated and cleaned like files: self-loops and duplicate
edges (multigraph edges, or u-v and v-u of a non-symmetric matrix read as
undirected) are dropped and reported.

Node ids: when every networkx node is an integer (in the int64 range), the
nodes keep their value as external id (``graph.ids``; ``None`` when they are
exactly ``0..n-1``) and vertices are numbered in increasing id order, as the
file readers do; other node objects are numbered in iteration order.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..errors import GraphError
from .csr import INT32_MAX, INT64_MAX, Graph

__all__ = ["from_networkx", "to_networkx", "from_scipy"]

_INT64_MIN = int(np.iinfo(np.int64).min)


def _int_labels(values: list[Any], what: str) -> np.ndarray:
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise GraphError(f"{what} {v!r} is not an integer (labels must be integers "
                             "0..2**31-1)")
        if not 0 <= int(v) <= INT32_MAX:
            raise GraphError(f"{what} {int(v)} is outside 0..2**31-1")
    return np.asarray([int(v) for v in values], dtype=np.int32)


def from_networkx(cls: type[Graph], G: Any, label: str = "label", edge_label: str = "label",
                  name: str | None = None) -> Graph:
    """Build a :class:`Graph` from a networkx ``Graph``/``DiGraph`` (or multigraph).

    Parameters
    ----------
    cls : type
        ``Graph`` (or a subclass); called as ``cls.from_edges``.
    G : networkx.Graph
        The graph. Directed if ``G.is_directed()``.
    label : str, optional
        Node attribute holding the vertex label; used only if every node has
        it. The default is ``"label"``.
    edge_label : str, optional
        Edge attribute holding the edge label; used only if every edge has it.
        The default is ``"label"``.
    name : str, optional
        The graph's name. The default is ``G.name`` or ``"networkx"``.

    Returns
    -------
    Graph

    Raises
    ------
    GraphError
        If a label is not a non-negative int32 integer.

    Examples
    --------
    >>> import networkx as nx
    >>> g = Graph.from_networkx(nx.cycle_graph([10, 20, 30]))
    >>> g.n, g.num_edges, g.ids.tolist()
    (3, 3, [10, 20, 30])
    """
    nodes = list(G.nodes())
    n = len(nodes)
    int_ids = all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                  and _INT64_MIN <= int(v) <= INT64_MAX for v in nodes)
    if int_ids and n:
        ext = np.asarray([int(v) for v in nodes], dtype=np.int64)
        order = np.argsort(ext, kind="stable")
        nodes = [nodes[i] for i in order]
        ids: np.ndarray | None = ext[order]
        if np.array_equal(ids, np.arange(n)):
            ids = None
    else:
        ids = None
    index = {v: i for i, v in enumerate(nodes)}
    edges = list(G.edges(data=True))
    src = np.fromiter((index[u] for u, _, _ in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((index[v] for _, v, _ in edges), dtype=np.int64, count=len(edges))
    vl = None
    if n and label is not None and all(label in G.nodes[v] for v in nodes):
        vl = _int_labels([G.nodes[v][label] for v in nodes], "vertex label")
    el = None
    if edges and edge_label is not None and all(edge_label in d for _, _, d in edges):
        el = _int_labels([d[edge_label] for _, _, d in edges], "edge label")
    gname = name or (G.name if getattr(G, "name", "") else "networkx")
    return cls.from_edges(src, dst, n=n, vertex_labels=vl, edge_labels=el,
                          directed=bool(G.is_directed()), ids=ids, name=gname)


def to_networkx(graph: Graph, label: str = "label") -> Any:
    """Return a networkx ``Graph`` (``DiGraph`` if directed) of ``graph``.

    Parameters
    ----------
    graph : Graph
    label : str, optional
        Attribute name for vertex labels and edge labels. The default is ``"label"``.

    Returns
    -------
    networkx.Graph or networkx.DiGraph
        Nodes are the external ids (isolated vertices included), in internal order.
    """
    import networkx as nx
    G = nx.DiGraph() if graph.directed else nx.Graph()
    G.graph["name"] = graph.name
    ext = graph.to_external(np.arange(graph.n)).tolist()
    if graph.vertex_labels is not None:
        G.add_nodes_from((v, {label: int(lab)})
                         for v, lab in zip(ext, graph.vertex_labels.tolist()))
    else:
        G.add_nodes_from(ext)
    src, dst = graph.edges()
    s = graph.to_external(src).tolist()
    d = graph.to_external(dst).tolist()
    el = graph.edge_label_array()
    if el is None:
        G.add_edges_from(zip(s, d))
    else:
        G.add_edges_from((u, v, {label: int(x)}) for u, v, x in zip(s, d, el.tolist()))
    return G


def from_scipy(cls: type[Graph], A: Any, directed: bool | None = None,
               name: str = "graph") -> Graph:
    """Build a :class:`Graph` from a square scipy sparse (or dense numpy) adjacency matrix.

    Parameters
    ----------
    cls : type
        ``Graph`` (or a subclass).
    A : scipy.sparse matrix/array or numpy.ndarray
        Nonzero A[i, j] is the edge i->j; values are ignored, explicit zeros
        are not edges.
    directed : bool, optional
        The default is ``None``, meaning directed unless the nonzero pattern
        is symmetric. ``False`` on a non-symmetric matrix keeps every edge
        once (the union of both triangles).
    name : str, optional
        The graph's name. The default is ``"graph"``.

    Returns
    -------
    Graph
        ``n = A.shape[0]`` vertices, ids ``0..n-1``.

    Raises
    ------
    GraphError
        If ``A`` is not a square 2-D matrix.
    """
    import scipy.sparse as sp
    if not sp.issparse(A):
        A = np.asarray(A)
        if A.ndim != 2:
            raise GraphError(f"an adjacency matrix must be 2-D, got shape {A.shape}")
    C = sp.coo_array(A)
    if C.shape[0] != C.shape[1]:
        raise GraphError(f"an adjacency matrix must be square, got {C.shape[0]} x {C.shape[1]}")
    keep = C.data != 0
    row, col = C.row[keep].astype(np.int64), C.col[keep].astype(np.int64)
    n = int(C.shape[0])
    if directed is None:
        P = sp.coo_array((np.ones(row.size, np.int8), (row, col)), shape=(n, n)).tocsr()
        P.sum_duplicates()
        P.data[:] = 1
        directed = (P != P.T).nnz > 0
    if not directed:
        row, col = matrix_edges_undirected(row, col, n)
    return cls.from_edges(row, col, n=n, directed=bool(directed), name=name)


def matrix_edges_undirected(row: np.ndarray, col: np.ndarray, n: int
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Each undirected edge of an adjacency matrix once (as ``(min, max)``).

    A matrix holds an undirected edge twice, A[i, j] and A[j, i]: that is its
    representation, not a duplicate in the input, so it is merged here rather
    than reported by :meth:`Graph.from_edges` (self-loops still are).
    """
    lo, hi = np.minimum(row, col), np.maximum(row, col)
    key = np.unique(lo * np.int64(max(n, 1)) + hi)
    return key // max(n, 1), key % max(n, 1)
