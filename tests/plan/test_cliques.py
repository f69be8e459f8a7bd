"""Whole counts of complete labeled queries from the data's cliques (_cliques.py, Pivoter's
tree): exact against the reference engine on random labeled graphs (labels repeating, so
that one data clique is taken by several bijections; edge labels), against the CPU engine
on human's graph, through count_result, and where it does not apply."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch._cliques import clique_applies, count_cliques
from warpmatch.engine import get_engine
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.graph.csr import Graph
from warpmatch.graph.generators import erdos_renyi, random_labels, with_labels
from warpmatch.plan import build_plan
from warpmatch.query.io import read_query_file
from warpmatch.query.model import ANY, Query

REF = ReferenceEngine()


def _clique(k: int, labels: list[int], el: int = ANY) -> Query:
    edges = [(a, b) for a in range(k) for b in range(a + 1, k)]
    return Query.from_edges(edges, k=k, vertex_labels=labels, edge_labels=[el] * len(edges))


@st.composite
def _cases(draw):
    n = draw(st.integers(5, 16))
    nlab = draw(st.integers(1, 3))
    g = erdos_renyi(n, p=draw(st.floats(0.3, 0.9)), seed=draw(st.integers(0, 999)))
    el = ANY
    if draw(st.booleans()):
        src, dst = g.edges()
        labels = [draw(st.integers(0, 1)) for _ in range(src.size)]
        g = Graph.from_edges(src, dst, n=n, edge_labels=labels, warn=False)
        el = draw(st.sampled_from([ANY, 0, 1]))
    g = with_labels(g, vertex_labels=random_labels(n, nlab, seed=draw(st.integers(0, 999))))
    k = draw(st.integers(3, 6))
    q = _clique(k, [draw(st.integers(0, nlab - 1)) for _ in range(k)], el)
    return g, q


@pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_cases())
def test_counts_equal_the_reference(case):
    g, q = case
    assert clique_applies(g, q, False) is None
    plan = build_plan(g, q, purpose="count")
    want = REF.count(g, plan) * plan.multiplier
    got, info = count_cliques(g, q)
    assert got == want
    assert info["cliques"] * plan.aut_size == want


def test_where_it_does_not_apply():
    g = with_labels(erdos_renyi(8, p=0.5, seed=1), vertex_labels=random_labels(8, 2, seed=1))
    assert clique_applies(g, _clique(2, [0, 1]), False) is not None
    assert "label" in clique_applies(g, _clique(4, [0, 1, ANY, 0]), False)
    assert "complete" in clique_applies(
        g, Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0)], k=4, vertex_labels=[0, 1, 0, 1]),
        False)
    assert "vertex labels" in clique_applies(erdos_renyi(8, p=0.5, seed=1),
                                             _clique(3, [0, 0, 0]), False)
    several = Query.from_edges([(0, 1), (0, 2), (1, 2)], k=3, vertex_labels=[0, 0, 1],
                               edge_labels=[0, 1, 0])
    assert "several" in clique_applies(g, several, False)


def test_count_result_counts_a_complete_query_from_the_cliques(monkeypatch):
    """After the direct search's head start (0 here): reported, the same count in both
    modes, not with a limit, anchors or WARPMATCH_CLIQUES=0."""
    monkeypatch.setenv("WARPMATCH_FACTOR_AFTER", "0")
    g = with_labels(erdos_renyi(40, p=0.5, seed=3), vertex_labels=random_labels(40, 2, seed=3))
    q = "a:0-b:0, a:0-c:1, a:0-d:1, b:0-c:1, b:0-d:1, c:1-d:1"
    for mode in ("embeddings", "subgraphs"):
        want = wm.count_result(g, q, backend="reference", mode=mode).count
        res = wm.count_result(g, q, backend="cpu", mode=mode)
        assert res.count == want and res.cliques is not None
        assert res.as_dict()["cliques"]["cliques"] == (want if mode == "subgraphs"
                                                       else want // 4)
    assert wm.count_result(g, q, backend="cpu", limit=10 ** 9).cliques is None
    assert wm.count_result(g, q, backend="cpu", anchors={"a": [0, 1, 2]}).cliques is None
    monkeypatch.setenv("WARPMATCH_CLIQUES", "0")
    assert wm.count_result(g, q, backend="cpu").cliques is None


@pytest.fixture(scope="module")
def human(data_path):
    base = data_path("labeled", "human")          # skips where the data is absent
    return {"graph": wm.read_graph(base / "human.graph"), "queries": base / "query_graph"}


@pytest.mark.parametrize("k", [4, 5, 6])
def test_human_cliques_equal_the_cpu_engine(human, k):
    # the labels of the first k vertices of a shipped complete query (K12), edges of label 0
    big = read_query_file(human["queries"] / "query_dense_12_5.graph")
    labels = np.asarray(big.vertex_labels).tolist()[:k]
    q = _clique(k, labels, el=int(np.asarray(big.edge_labels)[0]))
    g = human["graph"]
    plan = build_plan(g, q, purpose="count")
    want = get_engine("cpu").count(g, plan) * plan.multiplier
    got, _ = count_cliques(g, q)
    assert got == want > 0


def test_human_complete_queries_are_counted(human):
    # K12 and K20 of the shipped sets: 4.8x10^18 and 1.1x10^30 embeddings, each data clique
    # taken by the bijections that keep the labels (unit tests do not time: 0.3-0.7 s each
    # through count_result on 2 cores, CHANGELOG)
    for name in ("query_dense_12_5", "query_dense_20_6"):
        q = read_query_file(human["queries"] / f"{name}.graph")
        got, info = count_cliques(human["graph"], q)
        _, mult = np.unique(np.asarray(q.vertex_labels), return_counts=True)
        assert info["cliques"] > 0
        assert got == info["cliques"] * math.prod(math.factorial(int(m)) for m in mult)
