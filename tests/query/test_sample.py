"""Random-walk query generation (warpmatch.query.sample)."""
from __future__ import annotations

import numpy as np
import pytest

import warpmatch as wm
from warpmatch.graph.generators import barabasi_albert, random_labels
from warpmatch.query.sample import DENSE_MIN_DEGREE, average_degree, random_walk_query


@pytest.fixture(scope="module")
def labeled() -> wm.Graph:
    """A vertex- and edge-labeled clustered graph, dense enough for dense queries.

    A circulant (vertex ``i`` adjacent to ``i±1..i±4``: every 4 consecutive
    vertices form a clique) plus random chords.
    """
    n = 200
    rng = np.random.default_rng(0)
    src = np.concatenate([np.arange(n)] * 4 + [rng.integers(0, n, 100)])
    dst = np.concatenate([(np.arange(n) + o) % n for o in (1, 2, 3, 4)]
                         + [rng.integers(0, n, 100)])
    keep = src != dst
    src, dst = src[keep], dst[keep]
    el = (np.minimum(src, dst) + np.maximum(src, dst)) % 3
    return wm.Graph.from_edges(src, dst, n=n, vertex_labels=random_labels(n, 4, seed=1),
                               edge_labels=el, name="circulant-labeled", warn=False)


def _data_vertices(graph: wm.Graph, q: wm.Query) -> list[int] | None:
    """An embedding of ``q`` in ``graph`` found by the reference engine (or None)."""
    for batch in wm.match(graph, q, limit=1, backend="reference"):
        if len(batch):
            return [int(x) for x in batch[0]]
    return None


@pytest.mark.parametrize("density", ["dense", "sparse"])
@pytest.mark.parametrize("k", [4, 6, 8])
def test_connected_k_vertices_density_rule(labeled: wm.Graph, k: int, density: str) -> None:
    q = random_walk_query(labeled, k, density, seed=k)
    assert q.k == k
    assert q.is_connected()
    assert not q.directed
    if density == "dense":
        assert average_degree(q) >= DENSE_MIN_DEGREE
    else:
        assert average_degree(q) < DENSE_MIN_DEGREE
    assert q.name == f"rw-{density}-{k}-s{k}"


def test_labels_copied_from_the_data_graph(labeled: wm.Graph) -> None:
    q = random_walk_query(labeled, 6, "dense", seed=11)
    assert q.labeled and q.edge_labeled
    # the walk's vertices are an embedding; the reference engine finds one, and every
    # embedding carries the same vertex and edge labels as the data graph
    f = _data_vertices(labeled, q)
    assert f is not None
    for u in range(q.k):
        assert int(q.vertex_labels[u]) == int(labeled.vertex_labels[f[u]])
    for (u, w), lab in zip(q.edges.tolist(), q.edge_labels.tolist()):
        assert labeled.edge_label(f[u], f[w]) == lab


def test_dense_query_is_induced(labeled: wm.Graph) -> None:
    """A dense query keeps every edge among its vertices (the walk's embedding is induced)."""
    q = random_walk_query(labeled, 5, "dense", seed=2)
    assert wm.count(labeled, q, induced=True) >= 1


def test_unlabeled_graph_gives_unlabeled_query() -> None:
    g = barabasi_albert(200, 4, seed=1)
    q = random_walk_query(g, 6, "sparse", seed=0)
    assert not q.labeled and not q.edge_labeled
    assert wm.count(g, q) >= 1


def test_deterministic_by_seed(labeled: wm.Graph) -> None:
    a = random_walk_query(labeled, 8, "sparse", seed=5)
    b = random_walk_query(labeled, 8, "sparse", seed=5)
    assert np.array_equal(a.edges, b.edges)
    assert np.array_equal(a.vertex_labels, b.vertex_labels)
    assert np.array_equal(a.edge_labels, b.edge_labels)
    others = [random_walk_query(labeled, 8, "sparse", seed=s) for s in range(6, 10)]
    assert any(not np.array_equal(a.vertex_labels, o.vertex_labels)
               or not np.array_equal(a.edges, o.edges) for o in others)


def test_directed_graph_gives_directed_query() -> None:
    g = barabasi_albert(200, 5, seed=2)
    s, d = g.edges()
    dg = wm.Graph.from_edges(s, d, n=g.n, directed=True)
    q = random_walk_query(dg, 5, "sparse", seed=1)
    assert q.directed and q.is_connected() and average_degree(q) < DENSE_MIN_DEGREE
    assert wm.count(dg, q) >= 1


def test_error_when_the_graph_is_too_sparse_for_a_dense_query() -> None:
    path = wm.Graph.from_edges(np.arange(19), np.arange(1, 20))      # a path of 20 vertices
    with pytest.raises(ValueError, match="no dense 6-vertex query.*average degree < 3"):
        random_walk_query(path, 6, "dense", max_tries=20)
    # sparse works on the path
    assert random_walk_query(path, 6, "sparse").m == 5


def test_error_when_components_are_too_small() -> None:
    # ten disjoint triangles: no walk reaches 4 distinct vertices
    src = np.array([3 * i + j for i in range(10) for j in (0, 1, 0)])
    dst = np.array([3 * i + j for i in range(10) for j in (1, 2, 2)])
    g = wm.Graph.from_edges(src, dst)
    with pytest.raises(ValueError, match="fewer than 4 distinct vertices"):
        random_walk_query(g, 4, "sparse", max_tries=5, max_steps=50)


@pytest.mark.parametrize("kwargs, match", [
    ({"k": 1}, "k must be"),
    ({"k": 65}, "k must be"),
    ({"k": 3, "density": "dense"}, "at least 4 vertices"),
    ({"k": 5, "density": "medium"}, "density must be"),
    ({"k": 5, "max_tries": 0}, "max_tries"),
])
def test_bad_arguments(labeled: wm.Graph, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        random_walk_query(labeled, **kwargs)


def test_more_vertices_than_the_graph() -> None:
    g = wm.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(ValueError, match="fewer than k=4"):
        random_walk_query(g, 4, "sparse")
