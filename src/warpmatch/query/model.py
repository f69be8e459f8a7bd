"""The query graph model.

A :class:`Query` is a small graph (k ≤ 64 vertices) with optional vertex and
edge labels, undirected or directed. ``-1`` as a label means "any label"
(a wildcard): an unlabeled query vertex matches data vertices of any label.

Queries are built by the DSL, by name
(:func:`warpmatch.query.patterns.get_pattern`), from ``t/v/e`` files, or from
networkx (:meth:`Query.from_networkx`); :meth:`Query.parse` takes any of these.
Validation (empty, disconnected, bad vertex ids) happens here, once, in
:meth:`Query.__post_init__`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import QueryError
from ..graph.csr import INT32_MAX

ANY = -1
MAX_QUERY_VERTICES = 64


def _int64(values: Any, what: str) -> np.ndarray:
    """``values`` as an int64 array; QueryError for a value beyond the int64 range."""
    try:
        return np.asarray(values, dtype=np.int64)
    except OverflowError:
        raise QueryError(f"query {what} must be integers in the int64 range") from None


@dataclass(frozen=True, eq=False)
class Query:
    """A query graph.

    Attributes
    ----------
    k : int
        Number of query vertices, ids ``0..k-1``.
    edges : numpy.ndarray
        int32 array of shape (m, 2). For a directed query each row is u -> w.
        For an undirected query each row is one edge, stored with u < w.
    edge_labels : numpy.ndarray
        int32 array of shape (m,), ``-1`` = any label.
    vertex_labels : numpy.ndarray
        int32 array of shape (k,), ``-1`` = any label.
    directed : bool
    names : tuple of str
        A display name per vertex (DSL names, or ``"0".."k-1"``).
    name : str
        The pattern's name, if it has one (for messages and ``explain``).
    """

    k: int
    edges: np.ndarray
    edge_labels: np.ndarray
    vertex_labels: np.ndarray
    directed: bool = False
    names: tuple[str, ...] = ()
    name: str = "query"

    def __post_init__(self) -> None:
        k = int(self.k)
        if k <= 0:
            raise QueryError("the query is empty: it needs at least one vertex")
        if k > MAX_QUERY_VERTICES:
            raise QueryError(f"the query has {k} vertices; at most {MAX_QUERY_VERTICES} are supported")
        # check ranges in int64 first: casting straight to int32 wraps large values
        # silently (an edge 0-(2**32+1) would become 0-1, a label 2**32+5 the label 5)
        e = _int64(self.edges, "edge endpoints").reshape(-1, 2)
        el = _int64(self.edge_labels, "edge labels").reshape(-1)
        vl = _int64(self.vertex_labels, "vertex labels").reshape(-1)
        if max(int(el.max(initial=ANY)), int(vl.max(initial=ANY))) > INT32_MAX:
            raise QueryError(f"a query label is too large (labels are at most {INT32_MAX})")
        if e.size and (e.min() < 0 or e.max() >= k):
            raise QueryError(f"edge endpoint out of range 0..{k - 1}")
        e, el, vl = e.astype(np.int32), el.astype(np.int32), vl.astype(np.int32)
        if el.size != e.shape[0]:
            raise QueryError(f"{el.size} edge labels for {e.shape[0]} edges")
        if vl.size != k:
            raise QueryError(f"{vl.size} vertex labels for {k} vertices")
        if np.any(e[:, 0] == e[:, 1]):
            u = int(e[e[:, 0] == e[:, 1]][0, 0])
            raise QueryError(f"self-loop on query vertex {self._name(u, self.names)}")
        if np.any(vl < ANY) or np.any(el < ANY):
            raise QueryError("labels must be non-negative integers (or -1 for any)")
        if not self.directed:
            e = np.sort(e, axis=1)
        key = e[:, 0].astype(np.int64) * k + e[:, 1]
        uniq, first = np.unique(key, return_index=True)
        if uniq.size != key.size:
            raise QueryError("the query lists an edge twice")
        order = np.sort(first)
        e, el = e[order], el[order]
        names = tuple(self.names) if self.names else tuple(str(i) for i in range(k))
        if len(names) != k:
            raise QueryError(f"{len(names)} names for {k} vertices")
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "edges", np.ascontiguousarray(e, dtype=np.int32))
        object.__setattr__(self, "edge_labels", el)
        object.__setattr__(self, "vertex_labels", vl)
        object.__setattr__(self, "names", names)
        if not self.is_connected():
            comps = self.components()
            shown = "; ".join("{" + ", ".join(names[u] for u in c[:8])
                              + (", ..." if len(c) > 8 else "") + "}" for c in comps[:4])
            shown += "; ..." if len(comps) > 4 else ""
            raise QueryError(
                f"the query is disconnected: it has {len(comps)} components ({shown}); every "
                "vertex must be reachable from every other (match the components separately)")

    @staticmethod
    def _name(u: int, names: Sequence[str]) -> str:
        return names[u] if names and u < len(names) else str(u)

    # ----------------------------------------------------------- builders
    @classmethod
    def from_edges(cls, edges: Sequence[tuple[int, int]], k: int | None = None,
                   vertex_labels: Sequence[int] | None = None,
                   edge_labels: Sequence[int] | None = None, directed: bool = False,
                   names: Sequence[str] | None = None, name: str = "query") -> "Query":
        """Build a query from a list of (u, w) pairs on vertices ``0..k-1``.

        Examples
        --------
        >>> Query.from_edges([(0, 1), (1, 2), (2, 0)]).k
        3
        """
        e = np.asarray(list(edges), dtype=np.int64).reshape(-1, 2)
        if k is None:
            if e.size:
                k = int(e.max()) + 1
            else:
                k = len(vertex_labels) if vertex_labels is not None else 0
        vl = np.full(k, ANY, np.int32) if vertex_labels is None else np.asarray(vertex_labels)
        el = np.full(e.shape[0], ANY, np.int32) if edge_labels is None else np.asarray(edge_labels)
        return cls(k=k, edges=e, edge_labels=el, vertex_labels=vl, directed=directed,
                   names=tuple(names) if names else (), name=name)

    @classmethod
    def parse(cls, spec: Any) -> "Query":
        """A query from DSL text, a pattern name, a query file or a networkx graph.

        The same resolution as the API's and the command line's QUERY argument
        (:func:`warpmatch.query.io.resolve_query`), so that ``Query.parse(x)``
        and ``wm.count(g, x)`` never read ``x`` two ways.

        Parameters
        ----------
        spec : str, os.PathLike or networkx graph
            DSL text (``"a-b, b-c, c-a"``, see :mod:`warpmatch.query.dsl`), a
            named pattern (``"triangle"``, ``"4-clique"``), the path of a query
            file (``t``/``v``/``e`` lines, a one-pattern collection line, or
            DSL text), or a networkx ``Graph``/``DiGraph``
            (:meth:`from_networkx`). A name wins over a file of that name
            (write ``"./triangle"`` for the file).

        Returns
        -------
        Query

        Raises
        ------
        QueryError
            For DSL errors, and for an unknown pattern name or a typo of one
            (``"4-clqiue"`` is not read as a one-edge query), with the closest
            names suggested.
        InputFormatError
            For a malformed or empty query file.
        FileNotFoundError, IsADirectoryError
            For a path (a string holding ``/``, ``\\`` or ``.``) that does not
            exist or is a directory.

        Examples
        --------
        >>> Query.parse("a-b, b-c, c-a").names
        ('a', 'b', 'c')
        >>> Query.parse("triangle").m
        3
        >>> import networkx as nx
        >>> Query.parse(nx.cycle_graph(4)).m
        4
        """
        from .io import resolve_query   # io imports this module
        return resolve_query(spec)

    @classmethod
    def from_networkx(cls, G: Any, label: str = "label", edge_label: str = "label",
                      name: str = "query") -> "Query":
        """Build from a networkx (Di)Graph; node/edge attribute ``label`` become labels.

        Node names become vertex names (in iteration order).
        """
        nodes = list(G.nodes())
        idx = {v: i for i, v in enumerate(nodes)}
        vl = [int(G.nodes[v].get(label, ANY)) for v in nodes]
        edges, el = [], []
        for u, w, data in G.edges(data=True):
            edges.append((idx[u], idx[w]))
            el.append(int(data.get(edge_label, ANY)))
        return cls.from_edges(edges, k=len(nodes), vertex_labels=vl, edge_labels=el,
                              directed=G.is_directed(), names=[str(v) for v in nodes], name=name)

    def to_networkx(self, label: str = "label") -> Any:
        """A networkx (Di)Graph on vertices 0..k-1; labels other than ``-1`` become attributes."""
        import networkx as nx
        G = nx.DiGraph() if self.directed else nx.Graph()
        for u in range(self.k):
            lab = int(self.vertex_labels[u])
            G.add_node(u, **({label: lab} if lab != ANY else {}))
        for (u, w), lab in zip(self.edges.tolist(), self.edge_labels.tolist()):
            G.add_edge(u, w, **({label: lab} if lab != ANY else {}))
        return G

    # ------------------------------------------------------------ queries
    @property
    def m(self) -> int:
        """Number of query edges."""
        return int(self.edges.shape[0])

    @property
    def labeled(self) -> bool:
        """True if any vertex label is set."""
        return bool(np.any(self.vertex_labels != ANY))

    @property
    def edge_labeled(self) -> bool:
        """True if any edge label is set."""
        return bool(np.any(self.edge_labels != ANY))

    def adjacency(self) -> np.ndarray:
        """k×k bool matrix; ``A[u, w]`` is True iff the edge u->w (u-w) exists. Symmetric if undirected."""
        A = np.zeros((self.k, self.k), dtype=bool)
        if self.m:
            A[self.edges[:, 0], self.edges[:, 1]] = True
            if not self.directed:
                A[self.edges[:, 1], self.edges[:, 0]] = True
        return A

    def edge_label_matrix(self) -> np.ndarray:
        """k×k int32 matrix of edge labels (-1 any), -2 where there is no edge."""
        L = np.full((self.k, self.k), -2, dtype=np.int32)
        if self.m:
            L[self.edges[:, 0], self.edges[:, 1]] = self.edge_labels
            if not self.directed:
                L[self.edges[:, 1], self.edges[:, 0]] = self.edge_labels
        return L

    def neighbors(self, u: int) -> list[int]:
        """Vertices adjacent to ``u`` in either direction, ascending."""
        A = self.adjacency()
        return sorted(set(np.flatnonzero(A[u] | A[:, u]).tolist()))

    def degree(self) -> np.ndarray:
        """Number of distinct neighbours (either direction) per vertex."""
        A = self.adjacency()
        return (A | A.T).sum(axis=1).astype(np.int32)

    def out_degree(self) -> np.ndarray:
        """Out-degree per vertex (the degree if undirected)."""
        return self.adjacency().sum(axis=1).astype(np.int32)

    def in_degree(self) -> np.ndarray:
        """In-degree per vertex (the degree if undirected)."""
        return self.adjacency().sum(axis=0).astype(np.int32)

    def components(self, without: int | None = None) -> list[list[int]]:
        """Weakly connected components, each an ascending list, ordered by smallest vertex;
        with ``without``, those of the query less that vertex (a cut vertex leaves two or
        more: :func:`warpmatch.plan.factor.factoring`)."""
        A = self.adjacency()
        A = A | A.T
        seen = np.zeros(self.k, dtype=bool)
        if without is not None:
            seen[without] = True
        comps = []
        for s in range(self.k):
            if seen[s]:
                continue
            seen[s] = True
            stack, comp = [s], [s]
            while stack:
                u = stack.pop()
                for w in np.flatnonzero(A[u] & ~seen).tolist():
                    seen[w] = True
                    stack.append(w)
                    comp.append(w)
            comps.append(sorted(comp))
        return comps

    def is_connected(self) -> bool:
        """Weak connectivity."""
        return self.k == 1 or len(self.components()) == 1

    def vertex_name(self, u: int) -> str:
        """Display name of query vertex ``u``."""
        return self.names[u]

    def index_of(self, name: str | int) -> int:
        """The vertex id of a name (or an int id), QueryError if unknown.

        A name wins over an id: in ``"7-3, 3-0"`` the name ``"0"`` (or the
        int 0) is the third vertex. Ids are accepted only when no vertex has
        an integer name, so an integer is never silently read both ways.
        """
        key = str(int(name)) if isinstance(name, (int, np.integer)) else str(name)
        if key in self.names:
            return self.names.index(key)
        if (key.isdigit() and 0 <= int(key) < self.k
                and not any(n.isdigit() for n in self.names)):
            return int(key)
        raise QueryError(f"unknown query vertex {name!r}; the query's vertices are "
                         f"{', '.join(self.names)}")

    def to_dsl(self) -> str:
        """The query as DSL text (round-trips through :meth:`parse`)."""
        def vname(u: int) -> str:
            lab = int(self.vertex_labels[u])
            return self.names[u] + (f":{lab}" if lab != ANY else "")
        arrow = "->" if self.directed else "-"
        parts = []
        for (u, w), lab in zip(self.edges.tolist(), self.edge_labels.tolist()):
            mid = arrow if lab == ANY else (f"-[{lab}]->" if self.directed else f"-[{lab}]-")
            parts.append(f"{vname(u)}{mid}{vname(w)}")
        if self.k == 1:
            parts.append(vname(0))
        return ", ".join(parts)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"<Query {self.name!r}: {self.k} vertices, {self.m} edges, {kind}: {self.to_dsl()}>"


def labeled_clique_reason(q: Query) -> str | None:
    """Why ``q`` is not a labeled clique query (``None``: it is): undirected, three or more
    vertices, every pair adjacent, every vertex labeled, its edges of one label at most.
    What :func:`warpmatch._cliques.count_cliques` counts, as far as the query says."""
    k = int(q.k)
    if k < 3:
        return "fewer than three query vertices"
    if q.directed:
        return "directed"
    if (np.asarray(q.vertex_labels) == ANY).any():
        return "a query vertex without a label"
    if len(set(np.asarray(q.edge_labels).tolist())) > 1:
        return "edges of several labels"
    pairs = {(min(int(a), int(b)), max(int(a), int(b))) for a, b in np.asarray(q.edges)
             if int(a) != int(b)}
    if len(pairs) != k * (k - 1) // 2:
        return "not a complete graph"
    return None
