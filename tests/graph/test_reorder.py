"""Vertices renumbered by degree (graph/reorder.py) and counting on that copy
(_strategies.degree_graph, ``vertex_order=``): the copy is the same graph under its ids,
and every count equals the given order's and the reference engine's."""
from __future__ import annotations

import subprocess
import sys
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.errors import QueryError
from warpmatch.graph.reorder import degree_order, degree_ordered
from warpmatch.query.symmetry import automorphism_count


def _graph(seed: int, n: int, m: int, directed: bool, vlabels: int = 0, elabels: int = 0,
           ids: bool = False):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    # a hub, so that some rows are longer than the kernel's insertion-sort cut (32)
    src[: m // 8] = 0
    return wm.Graph.from_edges(
        src, dst, n=n, directed=directed,
        vertex_labels=rng.integers(0, vlabels, n) if vlabels else None,
        edge_labels=rng.integers(0, elabels, m) if elabels else None,
        ids=rng.permutation(10 * n)[:n] + 5 if ids else None, warn=False)


def _external_edges(g: wm.Graph, inn: bool = False) -> list[tuple[int, int, int]]:
    """Every stored entry as (external row vertex, external neighbour, label), sorted."""
    ptr, idx, lab = ((g.in_indptr, g.in_indices, g.in_edge_labels) if inn
                     else (g.indptr, g.indices, g.edge_labels))
    ext = np.arange(g.n) if g.ids is None else np.asarray(g.ids)
    row = np.repeat(np.arange(g.n), np.diff(ptr))
    lab = np.zeros(idx.size, np.int64) if lab is None else np.asarray(lab)
    return sorted(zip(ext[row].tolist(), ext[idx].tolist(), lab.tolist()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n=st.integers(2, 60), m=st.integers(0, 400),
       directed=st.booleans(), vl=st.sampled_from([0, 3]), el=st.sampled_from([0, 4]),
       ids=st.booleans())
def test_the_copy_is_the_same_graph_under_its_ids(seed, n, m, directed, vl, el, ids):
    g = _graph(seed, n, m, directed, vl, el, ids)
    h = degree_ordered(g)
    order = degree_order(g)
    if order is None:
        assert h is g
        return
    assert h.n == g.n and h.directed == g.directed and h.num_edges == g.num_edges
    deg = np.diff(h.indptr) + (np.diff(h.in_indptr) if directed else 0)
    assert np.all(deg[1:] >= deg[:-1])
    assert _external_edges(h) == _external_edges(g)
    if directed:
        assert _external_edges(h, inn=True) == _external_edges(g, inn=True)
    for v in range(h.n):                 # rows sorted, as every engine needs
        row = h.indices[h.indptr[v]:h.indptr[v + 1]]
        assert np.all(row[1:] > row[:-1])
    gl = np.arange(g.n) if g.ids is None else np.asarray(g.ids)
    assert h.ids.tolist() == gl[order].tolist()
    if vl:
        assert h.vertex_labels.tolist() == np.asarray(g.vertex_labels)[order].tolist()
    assert degree_ordered(g) is h        # built once per graph


@pytest.mark.parametrize("query", ["triangle", "square", "4-clique", "diamond", "house",
                                   "tailed-triangle", "5-cycle"])
@pytest.mark.parametrize("mode,induced", [("embeddings", False), ("subgraphs", False),
                                          ("embeddings", True)])
def test_counts_equal_in_every_vertex_order(query, mode, induced):
    g = _graph(7, 120, 900, False)
    want = wm.count(g, query, mode=mode, induced=induced, backend="reference")
    many = automorphism_count(wm.Query.parse(query)) >= 3
    for vo, used in (("given", "given"), ("degree", "degree"),
                     ("auto", "degree" if many else "given")):
        r = wm.count_result(g, query, mode=mode, induced=induced, backend="cpu",
                            vertex_order=vo)
        assert (r.count, r.vertex_order) == (want, used), vo


@pytest.mark.parametrize("query", ["a:0-b:1, b-c:1, c-a", "a-[1]-b, b-[1]-c, c-[1]-a",
                                   "a->b, b->c, c->a", "a-b, b-c, c-d, d-a"])
def test_labeled_and_directed_counts_equal(query):
    directed = "->" in query
    g = _graph(11, 80, 700, directed, vlabels=2, elabels=2, ids=True)
    want = wm.count(g, query, backend="reference")
    assert wm.count(g, query, backend="cpu", vertex_order="degree") == want
    assert wm.count(g, query, backend="cpu", vertex_order="given") == want


def test_auto_takes_the_degree_order_only_where_restrictions_are_many():
    g = _graph(3, 100, 600, False)
    assert wm.count_result(g, "triangle", backend="cpu").vertex_order == "degree"
    # |Aut| = 2: measured no better on average (the house 0.60x)
    assert wm.count_result(g, "tailed-triangle", backend="cpu").vertex_order == "given"
    # anchors and the reference oracle keep the graph's own ids
    r = wm.count_result(g, "triangle", backend="cpu", anchors={0: [0, 1, 2]})
    assert r.vertex_order == "given"
    assert r.count == wm.count(g, "triangle", backend="reference", anchors={0: [0, 1, 2]})
    assert wm.count_result(g, "triangle", backend="reference").vertex_order == "given"
    assert wm.count_result(g, "tailed-triangle", backend="cpu",
                           vertex_order="degree").vertex_order == "degree"
    assert wm.count_result(g, "triangle", backend="cpu").as_dict()["vertex_order"] == "degree"


def test_environment_overrides_auto_and_bad_values_are_named(monkeypatch):
    g = _graph(3, 100, 600, False)
    monkeypatch.setenv("WARPMATCH_VERTEX_ORDER", "given")
    assert wm.count_result(g, "triangle", backend="cpu").vertex_order == "given"
    # an explicit argument wins over the environment
    assert wm.count_result(g, "triangle", backend="cpu",
                           vertex_order="degree").vertex_order == "degree"
    monkeypatch.setenv("WARPMATCH_VERTEX_ORDER", "sideways")
    with pytest.raises(QueryError, match="vertex_order must be one of.*'sideways'"):
        wm.count(g, "triangle", backend="cpu")
    monkeypatch.delenv("WARPMATCH_VERTEX_ORDER")
    with pytest.raises(QueryError, match="vertex_order"):
        wm.count(g, "triangle", backend="cpu", vertex_order="by-degree")


def test_explain_says_so_and_the_cli_takes_the_option(tmp_path):
    g = _graph(5, 200, 1500, False)
    assert "vertex order: by degree" in wm.explain(g, "square", backend="cpu")
    assert "vertex order" not in wm.explain(g, "square", backend="cpu", vertex_order="given")
    assert "vertex order" not in wm.explain(g, "house", backend="cpu")
    path = tmp_path / "g.txt"
    wm.write_graph(g, path)
    out = {}
    for vo in ("given", "degree"):
        p = subprocess.run([sys.executable, "-m", "warpmatch", "count", str(path), "square",
                            "--backend", "cpu", "--vertex-order", vo, "--json"],
                           capture_output=True, text=True, check=True)
        out[vo] = json.loads(p.stdout.strip().splitlines()[-1])
        assert ("ids by degree" in p.stdout) == (vo == "degree")
    assert out["given"]["count"] == out["degree"]["count"]
    assert [out[v]["vertex_order"] for v in ("given", "degree")] == ["given", "degree"]



def test_a_graph_stored_in_degree_order_is_counted_as_it_is(tmp_path):
    """A .wmg written in degree order (``convert --degree-order``) needs no copy: the
    count says "degree", explain says the ids ascend already, the count is unchanged."""
    g = _graph(5, 200, 1500, False)
    path = tmp_path / "d.wmg"
    wm.write_graph(degree_ordered(g), path)
    h = wm.read_graph(path)
    assert degree_order(h) is None
    r = wm.count_result(h, "square", backend="cpu")
    assert (r.count, r.vertex_order) == (wm.count(g, "square", backend="reference"),
                                         "degree")
    assert degree_ordered(h) is h
    text = wm.explain(h, "square", backend="cpu")
    assert "ids ascend by degree already" in text and "copy" not in text
    assert wm.count_result(h, "square", backend="cpu",
                           vertex_order="given").vertex_order == "given"


def test_listing_keeps_the_given_ids():
    """In subgraphs mode the id order picks each subgraph's row: listing never reorders,
    so every engine (and a cluster) lists the same rows."""
    g = _graph(13, 90, 700, False, ids=True)
    q = "a->b, b->c, c->a"
    gd = _graph(13, 90, 700, True, ids=True)
    for graph, query in ((g, "square"), (gd, q)):
        got = sorted(map(tuple, np.concatenate(list(wm.match(graph, query, mode="subgraphs",
                                                             backend="cpu"))).tolist()))
        want = sorted(map(tuple, np.concatenate(list(wm.match(
            graph, query, mode="subgraphs", backend="reference"))).tolist()))
        assert got == want


def test_a_matchers_initial_count_keeps_no_copy():
    from warpmatch.graph import reorder
    g = _graph(17, 60, 300, False)
    cm = wm.ContinuousMatcher(g, "triangle", backend="cpu")
    assert cm.initial_count == wm.count(g, "triangle", backend="reference")
    assert not reorder.kept(g)
    h = degree_ordered(g)                # a copy the user made stays
    wm.ContinuousMatcher(g, "triangle", backend="cpu")
    assert reorder.kept(g) and degree_ordered(g) is h
