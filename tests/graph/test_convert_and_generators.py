"""networkx / scipy interop and the seeded generators."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from graph_helpers import assert_same_graph, edge_set, vertex_map
from warpmatch.errors import GraphError, InputCleanupWarning
from warpmatch.graph import (
    Graph,
    barabasi_albert,
    erdos_renyi,
    random_labels,
    rmat,
    with_labels,
)


# ----------------------------------------------------------------- networkx
def test_from_networkx_integer_nodes_keep_ids_and_labels() -> None:
    G = nx.Graph()
    G.add_nodes_from([(30, {"label": 1}), (10, {"label": 2}), (20, {"label": 1}),
                      (99, {"label": 4})])
    G.add_edges_from([(30, 10, {"label": 5}), (10, 20, {"label": 6})])
    g = Graph.from_networkx(G)
    assert g.ids.tolist() == [10, 20, 30, 99]           # increasing id order
    assert vertex_map(g) == {10: 2, 20: 1, 30: 1, 99: 4}
    assert edge_set(g) == {(10, 30, 5), (10, 20, 6)}
    back = g.to_networkx()
    assert set(back.nodes) == {10, 20, 30, 99}
    assert back.nodes[99]["label"] == 4 and back.edges[10, 30]["label"] == 5
    assert_same_graph(g, Graph.from_networkx(back))


def test_from_networkx_other_nodes_directed_multigraph() -> None:
    G = nx.MultiDiGraph()
    G.add_edges_from([("a", "b"), ("a", "b"), ("b", "c"), ("c", "c")])
    with pytest.warns(InputCleanupWarning, match="1 self-loops and 1 duplicate"):
        g = Graph.from_networkx(G, name="m")
    assert g.directed and g.ids is None and g.n == 3 and g.num_edges == 2
    assert g.name == "m" and g.vertex_labels is None and g.edge_labels is None


def test_from_networkx_partial_or_bad_labels() -> None:
    G = nx.path_graph(3)
    G.nodes[0]["label"] = 1                                # not every node: ignored
    assert Graph.from_networkx(G).vertex_labels is None
    for v in G:
        G.nodes[v]["label"] = "x"
    with pytest.raises(GraphError, match="not an integer"):
        Graph.from_networkx(G)
    with pytest.raises(GraphError, match="outside"):
        Graph.from_networkx(nx.Graph([(0, 1, {"label": -1})]))


def test_networkx_round_trip_directed_isolated() -> None:
    g = Graph.from_edges([0, 2], [2, 0], n=4, directed=True, ids=[5, 6, 7, 8],
                         vertex_labels=[1, 1, 2, 3])
    G = g.to_networkx()
    assert isinstance(G, nx.DiGraph) and set(G.edges) == {(5, 7), (7, 5)}
    assert_same_graph(g, Graph.from_networkx(G))


# -------------------------------------------------------------------- scipy
def test_from_scipy_direction_detection() -> None:
    A = sp.csr_array(np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]]))
    g = Graph.from_scipy(A)
    assert not g.directed and edge_set(g) == {(0, 1), (1, 2)}
    B = sp.csr_array(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]]))
    d = Graph.from_scipy(B, name="cyc")
    assert d.directed and edge_set(d) == {(0, 1), (1, 2), (2, 0)} and d.name == "cyc"
    u = Graph.from_scipy(B, directed=False)
    assert edge_set(u) == {(0, 1), (1, 2), (0, 2)}
    np.testing.assert_array_equal(Graph.from_scipy(d.to_scipy()).indices, d.indices)


def test_from_scipy_explicit_zeros_dense_and_errors() -> None:
    A = sp.coo_array(([1, 0], ([0, 1], [1, 2])), shape=(3, 3))
    assert edge_set(Graph.from_scipy(A)) == {(0, 1)}
    assert Graph.from_scipy(np.eye(3, k=1)).num_edges == 2
    with pytest.raises(GraphError, match="square"):
        Graph.from_scipy(sp.csr_array(np.ones((2, 3))))


# --------------------------------------------------------------- generators
def test_rmat_sizes_and_determinism() -> None:
    a = rmat(12, edge_factor=8, seed=3)
    b = rmat(12, edge_factor=8, seed=3)
    c = rmat(12, edge_factor=8, seed=4)
    assert a.n == 4096 and a.report.input_edges == 8 * 4096
    assert a.num_edges == (a.report.input_edges - a.report.self_loops
                           - a.report.duplicates)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert not np.array_equal(a.indptr, c.indptr)
    # skewed degrees: the maximum degree is far above the mean (power law, not uniform)
    assert a.max_degree > 10 * a.degree.mean()
    d = rmat(8, seed=1, directed=True, noise=False)
    assert d.directed and d.n == 256
    with pytest.raises(GraphError):
        rmat(8, a=0.9, b=0.2, c=0.1)


def test_barabasi_albert_sizes_determinism_and_degrees() -> None:
    g = barabasi_albert(2000, 4, seed=5)
    assert (g.n, g.num_edges) == (2000, 4 * (2000 - 4))
    assert g.report.duplicates == 0 and g.report.self_loops == 0
    np.testing.assert_array_equal(g.indices, barabasi_albert(2000, 4, seed=5).indices)
    assert not np.array_equal(g.indices, barabasi_albert(2000, 4, seed=6).indices)
    deg = g.degree
    assert deg.min() >= 4 and deg.max() > 10 * 4          # hubs from preferential attachment
    assert barabasi_albert(2, 1).num_edges == 1
    with pytest.raises(GraphError):
        barabasi_albert(3, 3)


def test_erdos_renyi() -> None:
    g = erdos_renyi(300, m=2000, seed=1)
    assert (g.n, g.num_edges, g.report.duplicates, g.report.self_loops) == (300, 2000, 0, 0)
    np.testing.assert_array_equal(g.indices, erdos_renyi(300, m=2000, seed=1).indices)
    full = erdos_renyi(20, m=190, seed=2)                  # every pair exactly once
    assert full.num_edges == 190 and (full.degree == 19).all()
    d = erdos_renyi(20, m=380, seed=2, directed=True)
    assert d.num_edges == 380 and (d.out_degree == 19).all()
    p = erdos_renyi(1000, p=0.01, seed=3)
    assert abs(p.num_edges - 0.01 * 1000 * 999 / 2) < 5 * np.sqrt(4995)
    with pytest.raises(GraphError):
        erdos_renyi(10, m=46)
    with pytest.raises(GraphError):
        erdos_renyi(10)


def test_random_labels() -> None:
    u = random_labels(10000, 8, seed=1)
    assert u.dtype == np.int32 and u.shape == (10000,) and set(np.unique(u)) == set(range(8))
    np.testing.assert_array_equal(u, random_labels(10000, 8, seed=1))
    z = random_labels(10000, 8, "zipf", seed=1, zipf_s=2.0)
    counts = np.bincount(z, minlength=8)
    assert counts[0] > counts[1] > counts[3] > counts[7]   # skewed towards label 0
    assert z.max() < 8
    with pytest.raises(GraphError):
        random_labels(5, 3, "gauss")
    with pytest.raises(GraphError):
        random_labels(5, 0)


def test_with_labels() -> None:
    g = barabasi_albert(50, 2, seed=1)
    vl = random_labels(g.n, 3, seed=2)
    h = with_labels(g, vertex_labels=vl)
    assert h.indices is g.indices and h.vertex_labels.tolist() == vl.tolist()
    src, dst = g.edges()
    el = (src + dst) % 5
    k = with_labels(h, edge_labels=el)
    assert k.vertex_labels.tolist() == vl.tolist()
    for s_, d_, lab in zip(src[:20], dst[:20], el[:20]):
        assert k.edge_label(int(s_), int(d_)) == lab == k.edge_label(int(d_), int(s_))
    with pytest.raises(GraphError, match="expected"):
        with_labels(g, vertex_labels=[1, 2])
    with pytest.raises(GraphError):
        with_labels(g, edge_labels=-el - 1)
