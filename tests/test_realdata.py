"""warpmatch's CPU engine on real graphs, against answers computed without warpmatch.

Every expected value here is computed at test time by code that shares
nothing with warpmatch (not its readers, planner or engines):

- The SNAP graphs are parsed with ``numpy.loadtxt`` and turned into
  ``scipy.sparse`` adjacency matrices. Undirected counts use the classical
  closed forms (A = symmetrised adjacency without self-loops, d = degrees,
  t_v = triangles at v, c_ij = (A^2)_ij common neighbours):

  * triangles = trace(A^3) / 6, cross-checked with ``networkx.triangles``;
  * squares (4-cycles) = sum_{i<j} C(c_ij, 2) / 2 (each 4-cycle has two diagonals);
  * diamonds = sum over edges ij of C(c_ij, 2) (two triangles on a shared edge);
  * tailed triangles = sum_v t_v (d_v - 2) (a triangle plus one more edge at one corner);
  * 4-cliques = ``igraph.Graph.cliques(4, 4)``.

  These are *subgraph* counts (non-induced); embeddings are subgraphs x |Aut(Q)|
  (6, 8, 4, 2, 24). On email-Eu-core the four 4-vertex formulas were also
  checked once against igraph's induced motif census (``motifs_randesu(size=4)``,
  23 s, too slow to repeat here) through the induced -> non-induced relations
  square = C4 + diamond + 3 K4, diamond = diamond + 6 K4, tailed = tailed +
  4 diamond + 12 K4: all four agree (4,647,873 / 5,012,720 / 29,963,822 / 423,750).
- Directed patterns on wiki-Vote (A = arc matrix, no self-loops), non-induced
  embeddings (each of these patterns has only the trivial automorphism except
  the 3-cycle, |Aut| = 3):

  * 2-path a->b->c with a != c: sum_b in(b) out(b) - sum(A o A^T)
    (the subtracted term removes a = c, i.e. reciprocal arcs);
  * feed-forward loop a->b, b->c, a->c: sum(A o A^2);
  * directed 3-cycle a->b->c->a: trace(A^3) embeddings (3 per cycle).
- Induced directed patterns on email-Eu-core come from ``networkx.triadic_census``:
  with "induced" meaning no extra arc on any ordered pair, an induced 2-path is
  exactly a triad of type 021C, an induced feed-forward loop a 030T triad and
  an induced 3-cycle a 030C triad (3 embeddings each).
- Labeled queries (yeast, hprd, human; 16 vertices) are counted at test time
  with ``networkx`` ``GraphMatcher.subgraph_monomorphisms_iter`` (VF2) or, for
  larger counts, ``igraph`` ``count_subisomorphisms_vf2`` with vertex colours;
  both count non-induced embeddings (checked in ``bench/cpu_peers.py``'s probe).
  The queries were chosen once, by scanning all 400 16-vertex queries of each
  graph, among those networkx (or igraph) answers in under 0.5 s (yeast: 6 by
  networkx, ~40 by igraph; hprd: ~150 by networkx; human: 1 by igraph); on
  the overlap networkx and igraph agreed on every count. For the networkx
  queries the listed rows must equal networkx's set of maps exactly.
- email-Eu-core with its department labels: labeled triangles against
  networkx ``GraphMatcher`` on the labeled graph, for labels picked from the
  data (the largest departments).

Directed SNAP files are read as undirected where a test says so (the file's
reciprocal pairs collapse into one edge).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import warpmatch as wm

pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.InputCleanupWarning")

BACKEND = "cpu"


# ============================================================ independent I/O
@lru_cache(maxsize=None)
def _snap_arcs(path: str) -> tuple[np.ndarray, np.ndarray]:
    """(sorted external ids, arcs as (m, 2) positions into ids), self-loops and repeats dropped."""
    raw = np.loadtxt(path, comments="#", dtype=np.int64, ndmin=2)[:, :2]
    ids = np.unique(raw)
    arcs = np.searchsorted(ids, raw)
    arcs = arcs[arcs[:, 0] != arcs[:, 1]]
    arcs = np.unique(arcs, axis=0)
    return ids, arcs


def _directed_matrix(path: str) -> sp.csr_array:
    ids, arcs = _snap_arcs(path)
    n = ids.size
    return sp.csr_array((np.ones(len(arcs), np.int64), (arcs[:, 0], arcs[:, 1])), shape=(n, n))


def _undirected_matrix(path: str) -> sp.csr_array:
    A = _directed_matrix(path)
    U = ((A + A.T) > 0).astype(np.int64)
    return sp.csr_array(U)


def _read_tve(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(vertex ids, vertex labels, undirected edges (m, 2)) of a ``t/v/e`` file, plain Python."""
    vid, vlab, edges = [], [], []
    with open(path) as fh:
        for line in fh:
            p = line.split()
            if not p:
                continue
            if p[0] == "v":
                vid.append(int(p[1]))
                vlab.append(int(p[2]))
            elif p[0] == "e":
                edges.append((int(p[1]), int(p[2])))
    order = np.argsort(vid)
    return (np.asarray(vid, np.int64)[order], np.asarray(vlab, np.int64)[order],
            np.asarray(edges, np.int64).reshape(-1, 2))


def _nx_labeled(vid: np.ndarray, vlab: np.ndarray, edges: np.ndarray):
    import networkx as nx
    G = nx.Graph()
    G.add_nodes_from((int(v), {"label": int(lab)}) for v, lab in zip(vid, vlab))
    G.add_edges_from(e for e in edges.tolist() if e[0] != e[1])
    return G


def _nx_monomorphisms(G, Q) -> int:
    """Non-induced embeddings of Q in G with equal ``label`` attributes (VF2, networkx)."""
    from networkx.algorithms import isomorphism as iso
    gm = iso.GraphMatcher(G, Q, node_match=iso.categorical_node_match("label", None))
    return sum(1 for _ in gm.subgraph_monomorphisms_iter())


def _nx_embedding_rows(G, Q, k: int) -> np.ndarray:
    """Every non-induced embedding as a row: column j = the G node matched to Q node j."""
    from networkx.algorithms import isomorphism as iso
    gm = iso.GraphMatcher(G, Q, node_match=iso.categorical_node_match("label", None))
    rows = []
    for m in gm.subgraph_monomorphisms_iter():   # m: G node -> Q node
        row = [0] * k
        for gv, qv in m.items():
            row[qv] = gv
        rows.append(row)
    return np.asarray(rows, dtype=np.int64).reshape(-1, k)


def _nx_automorphisms(Q) -> int:
    from networkx.algorithms import isomorphism as iso
    gm = iso.GraphMatcher(Q, Q, node_match=iso.categorical_node_match("label", None))
    return sum(1 for _ in gm.isomorphisms_iter())


# ============================================================== embeddings check
def _assert_valid_embeddings(rows: np.ndarray, q_edges: np.ndarray, q_labels: np.ndarray,
                             g_ids: np.ndarray, g_labels: np.ndarray | None,
                             g_edges: np.ndarray) -> None:
    """Every row maps query vertex j to data vertex rows[:, j] (external ids) injectively,
    with equal labels, every query edge onto a data edge, and no row repeated."""
    assert rows.ndim == 2 and rows.shape[1] == q_labels.size
    pos = np.searchsorted(g_ids, rows)
    assert np.all(pos < g_ids.size) and np.array_equal(g_ids[np.minimum(pos, g_ids.size - 1)], rows), \
        "a listed vertex is not a vertex of the graph"
    srt = np.sort(pos, axis=1)
    assert np.all(np.diff(srt, axis=1) != 0), "a listed match is not injective"
    if g_labels is not None:
        want = q_labels >= 0
        assert np.array_equal(g_labels[pos][:, want], np.broadcast_to(q_labels[want], (len(pos), int(want.sum())))), \
            "a listed match breaks a vertex label"
    n = np.int64(g_ids.size)
    a = np.minimum(g_edges[:, 0], g_edges[:, 1])
    b = np.maximum(g_edges[:, 0], g_edges[:, 1])
    keys = np.unique(np.searchsorted(g_ids, a) * n + np.searchsorted(g_ids, b))
    for u, w in q_edges.tolist():
        x, y = np.minimum(pos[:, u], pos[:, w]), np.maximum(pos[:, u], pos[:, w])
        k = x * n + y
        i = np.minimum(np.searchsorted(keys, k), keys.size - 1)
        assert np.all(keys[i] == k), f"a listed match maps query edge {u}-{w} onto a non-edge"
    assert np.unique(rows, axis=0).shape[0] == rows.shape[0], "a match is listed twice"


def _collect(it) -> np.ndarray:
    batches = list(it)
    if not batches:
        return np.zeros((0, 0), np.int64)
    return np.concatenate(batches, axis=0)


# ================================================================== fixtures
@pytest.fixture(scope="module")
def snap(data_dir: Path):
    d = data_dir / "snap"
    if not d.is_dir():
        pytest.skip(f"shared data not found at {d}")
    return d


@pytest.fixture(scope="module")
def email_und(snap: Path):
    path = str(snap / "email-Eu-core.txt")
    return wm.read_graph(path), _Und(_undirected_matrix(path))


@pytest.fixture(scope="module")
def wiki_und(snap: Path):
    path = str(snap / "wiki-Vote.txt")
    return wm.read_graph(path), _Und(_undirected_matrix(path))


# ======================================================== undirected formulas
class _Und:
    """The symmetric 0/1 adjacency U of a graph, with C = U @ U (common neighbours) kept."""

    def __init__(self, U: sp.csr_array) -> None:
        self.U = U
        self._C: sp.csr_array | None = None

    @property
    def C(self) -> sp.csr_array:
        if self._C is None:
            self._C = sp.csr_array(self.U @ self.U)
        return self._C


def _triangles(a: _Und) -> int:
    return int((a.C @ a.U).diagonal().sum()) // 6


def _square_subgraphs(a: _Und) -> int:
    C = a.C.tocoo()
    off = C.row != C.col
    c = C.data[off].astype(np.int64)
    return int((c * (c - 1) // 2).sum()) // 4   # ordered pairs (/2), two diagonals (/2)


def _diamond_subgraphs(a: _Und) -> int:
    c = sp.csr_array(a.C * a.U).tocoo().data.astype(np.int64)   # c_ij on edges, both orders
    return int((c * (c - 1) // 2).sum()) // 2


def _tailed_triangle_subgraphs(a: _Und) -> int:
    d = np.asarray(a.U.sum(axis=1)).ravel().astype(np.int64)
    t = np.asarray((a.C * a.U).sum(axis=1)).ravel().astype(np.int64) // 2
    return int((t * (d - 2)).sum())


def _four_clique_subgraphs(a: _Und) -> int:
    import igraph as ig
    T = sp.triu(a.U, k=1).tocoo()
    g = ig.Graph(n=a.U.shape[0], edges=np.column_stack([T.row, T.col]).tolist())
    return len(g.cliques(4, 4))


UNDIRECTED = {   # pattern -> (independent subgraph count, |Aut|)
    "square": (_square_subgraphs, 8),
    "diamond": (_diamond_subgraphs, 4),
    "tailed-triangle": (_tailed_triangle_subgraphs, 2),
    "4-clique": (_four_clique_subgraphs, 24),
}


@pytest.mark.parametrize("which", ["email_und", "wiki_und"])
def test_triangles_undirected(which: str, request: pytest.FixtureRequest) -> None:
    import networkx as nx
    g, a = request.getfixturevalue(which)
    U = a.U
    expected = _triangles(a)
    C = sp.triu(U, k=1).tocoo()
    G = nx.Graph()
    G.add_edges_from(zip(C.row.tolist(), C.col.tolist()))
    assert sum(nx.triangles(G).values()) // 3 == expected   # two independent oracles agree
    assert g.n == U.shape[0] and g.num_edges == U.nnz // 2
    assert wm.count(g, "triangle", mode="subgraphs", backend=BACKEND) == expected
    assert wm.count(g, "triangle", mode="embeddings", backend=BACKEND) == 6 * expected


@pytest.mark.parametrize("which", ["email_und", "wiki_und"])
@pytest.mark.parametrize("pattern", list(UNDIRECTED))
def test_four_vertex_patterns(pattern: str, which: str, request: pytest.FixtureRequest) -> None:
    g, a = request.getfixturevalue(which)
    formula, aut = UNDIRECTED[pattern]
    expected = formula(a)
    assert expected > 0
    assert wm.count(g, pattern, mode="subgraphs", backend=BACKEND) == expected
    assert wm.count(g, pattern, mode="embeddings", backend=BACKEND) == aut * expected


# ============================================================ directed formulas
@pytest.fixture(scope="module")
def wiki_dir(snap: Path):
    path = str(snap / "wiki-Vote.txt")
    return wm.read_graph(path, directed=True), _directed_matrix(path)


def test_directed_patterns_wiki(wiki_dir) -> None:
    g, A = wiki_dir
    assert g.directed and g.num_edges == A.nnz
    indeg = np.asarray(A.sum(axis=0)).ravel().astype(np.int64)
    outdeg = np.asarray(A.sum(axis=1)).ravel().astype(np.int64)
    reciprocal = int((A * A.T).sum())
    A2 = sp.csr_array(A @ A)
    two_paths = int((indeg * outdeg).sum()) - reciprocal
    ffl = int((A * A2).sum())
    cyc3 = int((A2 @ A).diagonal().sum())
    assert wm.count(g, "a->b, b->c", backend=BACKEND) == two_paths
    assert wm.count(g, "a->b, b->c, a->c", backend=BACKEND) == ffl
    assert wm.count(g, "a->b, b->c, c->a", backend=BACKEND) == cyc3
    assert wm.count(g, "a->b, b->c, c->a", mode="subgraphs", backend=BACKEND) * 3 == cyc3


def test_directed_induced_triads_email(snap: Path) -> None:
    import networkx as nx
    path = str(snap / "email-Eu-core.txt")
    g = wm.read_graph(path, directed=True)
    ids, arcs = _snap_arcs(path)
    D = nx.DiGraph()
    D.add_nodes_from(range(ids.size))
    D.add_edges_from(arcs.tolist())
    census = nx.triadic_census(D)
    assert wm.count(g, "a->b, b->c", induced=True, backend=BACKEND) == census["021C"]
    assert wm.count(g, "a->b, b->c, a->c", induced=True, backend=BACKEND) == census["030T"]
    assert wm.count(g, "a->b, b->c, c->a", induced=True, mode="subgraphs",
                    backend=BACKEND) == census["030C"]
    assert wm.count(g, "a->b, b->c, c->a", induced=True, backend=BACKEND) == 3 * census["030C"]


# ============================================================ labeled: email
def test_labeled_triangles_email_departments(snap: Path) -> None:
    path = snap / "email-Eu-core.txt"
    lab_path = snap / "email-Eu-core-department-labels.txt"
    ids, arcs = _snap_arcs(str(path))
    lab = np.loadtxt(lab_path, comments="#", dtype=np.int64, ndmin=2)
    label_of = dict(zip(lab[:, 0].tolist(), lab[:, 1].tolist()))
    ext_labels = np.array([label_of[int(v)] for v in ids], np.int64)
    G = _nx_labeled(ids, ext_labels, ids[arcs])

    base = wm.read_graph(str(path))
    internal_ext = base.to_external(np.arange(base.n))
    vl = np.array([label_of[int(v)] for v in internal_ext], np.int64)
    s, d = base.edges()
    g = wm.Graph.from_edges(s, d, n=base.n, vertex_labels=vl, ids=base.ids, name="email-dept")

    top = np.bincount(lab[:, 1]).argsort()[::-1][:3].tolist()
    import networkx as nx
    for labs in [(top[0],) * 3, (top[0], top[0], top[1]), tuple(top)]:
        Q = nx.Graph([(0, 1), (1, 2), (2, 0)])
        for i, x in enumerate(labs):
            Q.nodes[i]["label"] = x
        expected = _nx_monomorphisms(G, Q)
        dsl = f"a:{labs[0]}-b:{labs[1]}, b-c:{labs[2]}, c-a"
        assert expected > 0
        assert wm.count(g, dsl, backend=BACKEND) == expected, labs
        assert wm.count(g, dsl, mode="subgraphs", backend=BACKEND) * _nx_automorphisms(Q) \
            == expected, labs


# ========================================================= labeled: yeast etc.
#: 16-vertex queries whose networkx VF2 count runs in < 0.5 s on this data
#: (selected by scanning all 400 per graph once; see the module docstring).
NX_QUERIES = [
    ("yeast", "query_dense_16_130.graph"),
    ("yeast", "query_dense_16_15.graph"),
    ("yeast", "query_dense_16_155.graph"),
    ("yeast", "query_dense_16_190.graph"),
    ("yeast", "query_dense_16_30.graph"),
    ("yeast", "query_dense_16_76.graph"),
    ("hprd", "query_dense_16_120.graph"),
    ("hprd", "query_dense_16_155.graph"),
    ("hprd", "query_sparse_16_198.graph"),
]
#: larger counts, answered by igraph's C VF2 with vertex colours in < 0.5 s
IG_QUERIES = [
    ("yeast", "query_dense_16_140.graph"),
    ("yeast", "query_dense_16_20.graph"),
    ("yeast", "query_dense_16_147.graph"),
    ("yeast", "query_dense_16_115.graph"),
    ("yeast", "query_sparse_16_30.graph"),
    ("yeast", "query_sparse_16_132.graph"),
    ("human", "query_dense_16_160.graph"),
]
#: a query with more than 10**5 embeddings, for the listing limit
BIG_QUERY = ("yeast", "query_dense_16_50.graph")


@lru_cache(maxsize=None)
def _labeled_data(root: str, name: str):
    path = Path(root) / "labeled" / name / f"{name}.graph"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    vid, vlab, edges = _read_tve(path)
    return path, vid, vlab, edges, wm.read_graph(str(path))


def _query(root: str, name: str, qfile: str):
    qpath = Path(root) / "labeled" / name / "query_graph" / qfile
    if not qpath.exists():
        pytest.skip(f"shared data not found at {qpath}")
    return qpath, _read_tve(qpath)


def _check_query(data_dir: Path, name: str, qfile: str, oracle: str) -> None:
    _, vid, vlab, edges, g = _labeled_data(str(data_dir), name)
    qpath, (qid, qlab, qedges) = _query(str(data_dir), name, qfile)
    Q = _nx_labeled(qid, qlab, qedges)
    nx_rows = None
    if oracle == "networkx":
        # query vertex j of the file is warpmatch's query vertex j (ids are 0..k-1 in order)
        assert np.array_equal(qid, np.arange(qid.size))
        nx_rows = _nx_embedding_rows(_nx_labeled(vid, vlab, edges), Q, qid.size)
        expected = nx_rows.shape[0]
    else:
        import igraph as ig
        pos = np.searchsorted(vid, edges)
        G = ig.Graph(n=vid.size, edges=pos.tolist())
        G.simplify()
        expected = G.count_subisomorphisms_vf2(
            ig.Graph(n=qid.size, edges=np.searchsorted(qid, qedges).tolist()),
            color1=vlab.tolist(), color2=qlab.tolist())
    assert expected > 0
    got = wm.count(g, str(qpath), backend=BACKEND)
    assert got == expected
    # subgraphs mode times |Aut(Q)| (labeled automorphisms, networkx) gives embeddings back
    assert wm.count(g, str(qpath), mode="subgraphs", backend=BACKEND) * _nx_automorphisms(Q) \
        == expected
    # every listed embedding is valid and there are exactly `expected` distinct ones;
    # with networkx as oracle they are exactly networkx's maps
    rows = _collect(wm.match(g, str(qpath), backend=BACKEND, limit=10**5))
    assert rows.shape == (expected, qid.size)
    _assert_valid_embeddings(rows, np.searchsorted(qid, qedges), qlab, vid, vlab, edges)
    if nx_rows is not None:
        assert np.array_equal(np.unique(rows, axis=0), np.unique(nx_rows, axis=0))


@pytest.mark.parametrize("name,qfile", NX_QUERIES, ids=[f"{a}-{b[6:-6]}" for a, b in NX_QUERIES])
def test_labeled_queries_vs_networkx(data_dir: Path, name: str, qfile: str) -> None:
    _check_query(data_dir, name, qfile, "networkx")


@pytest.mark.parametrize("name,qfile", IG_QUERIES, ids=[f"{a}-{b[6:-6]}" for a, b in IG_QUERIES])
def test_labeled_queries_vs_igraph(data_dir: Path, name: str, qfile: str) -> None:
    _check_query(data_dir, name, qfile, "igraph")


def test_labeled_listing_limit(data_dir: Path) -> None:
    import igraph as ig
    name, qfile = BIG_QUERY
    _, vid, vlab, edges, g = _labeled_data(str(data_dir), name)
    qpath, (qid, qlab, qedges) = _query(str(data_dir), name, qfile)
    G = ig.Graph(n=vid.size, edges=np.searchsorted(vid, edges).tolist())
    G.simplify()
    total = G.count_subisomorphisms_vf2(
        ig.Graph(n=qid.size, edges=np.searchsorted(qid, qedges).tolist()),
        color1=vlab.tolist(), color2=qlab.tolist())
    assert total > 10**5
    assert wm.count(g, str(qpath), backend=BACKEND) == total
    rows = _collect(wm.match(g, str(qpath), backend=BACKEND, limit=10**5))
    assert rows.shape == (10**5, qid.size)
    _assert_valid_embeddings(rows, np.searchsorted(qid, qedges), qlab, vid, vlab, edges)
