"""Edge-label partitions (graph/labelparts.py) and matching on the graph of a query's labels
(_strategies.label_graph): the restricted lists equal the filtered whole lists, and every count and
listing equals the whole graph's, on the reference engine (the oracle) and the CPU engine."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch._strategies import label_graph
from warpmatch.engine import get_engine
from warpmatch.graph import labelparts as LP
from warpmatch.plan import build_plan
from warpmatch.query.model import ANY, Query


def _graph(seed: int, n: int, m: int, labels: int, directed: bool, vlabels: int = 0):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    lab = rng.integers(0, labels, m)
    vl = rng.integers(0, vlabels, n) if vlabels else None
    return wm.Graph.from_edges(src, dst, n=n, directed=directed, edge_labels=lab,
                               vertex_labels=vl, warn=False)


def _rows(indptr, indices, elab, v, keep=None):
    a, b = int(indptr[v]), int(indptr[v + 1])
    pairs = zip(indices[a:b].tolist(), elab[a:b].tolist())
    return sorted(p for p in pairs if keep is None or p[1] in keep)


@pytest.mark.parametrize("labels", [1, 3, 12])
@pytest.mark.parametrize("directed", [False, True])
def test_restricted_lists_are_the_filtered_whole_lists(labels, directed):
    g = _graph(labels, 300, 3000, labels, directed)
    rng = np.random.default_rng(labels)
    for size in sorted({1, max(1, labels // 2), labels}):
        keep = frozenset(rng.choice(labels, size, replace=False).tolist())
        h = LP.restrict_to_labels(g, keep)
        assert h.n == g.n and h.directed == g.directed and h.ids is g.ids
        assert LP.restricted_bytes(g, keep)[0] == h.indices.size
        for v in range(g.n):
            assert _rows(h.indptr, h.indices, h.edge_labels, v) == \
                _rows(g.indptr, g.indices, g.edge_labels, v, keep)
            if directed:
                assert _rows(h.in_indptr, h.in_indices, h.in_edge_labels, v) == \
                    _rows(g.in_indptr, g.in_indices, g.in_edge_labels, v, keep)
        # kept: the same object for the same labels
        assert LP.restrict_to_labels(g, set(keep)) is h


def test_partitions_sum_to_the_graph_and_are_smaller_than_hash_slots():
    g = _graph(5, 500, 6000, 12, False)
    parts = LP.label_partitions(g)
    assert [p.label for p in parts] == sorted(set(g.edge_labels.tolist()))
    assert sum(p.edges for p in parts) == g.indices.size
    row = np.repeat(np.arange(g.n), np.diff(g.indptr))
    for p in parts:
        assert p.vertices == np.unique(row[g.edge_labels == p.label]).size
        assert p.csr_bytes < p.hash_bytes
    assert LP.present_labels(g) == frozenset(p.label for p in parts)
    assert LP.label_partitions(wm.Graph.from_edges([0], [1])) == []


def test_only_the_last_label_sets_are_kept(monkeypatch):
    monkeypatch.setattr(LP, "KEEP", 2)
    g = _graph(9, 50, 300, 6, False)
    first = LP.restrict_to_labels(g, {0})
    LP.restrict_to_labels(g, {1})
    LP.restrict_to_labels(g, {2})
    assert LP.restrict_to_labels(g, {0}) is not first        # built again
    with pytest.raises(ValueError, match="no edge labels"):
        LP.restrict_to_labels(wm.Graph.from_edges([0], [1]), {0})


def _query(rng, k: int, labels: int, directed: bool, any_edge: bool) -> Query:
    # a random connected query: a random tree plus a few extra edges
    edges = {(int(rng.integers(0, v)), v) for v in range(1, k)}
    for _ in range(int(rng.integers(0, k))):
        a, b = rng.choice(k, 2, replace=False).tolist()
        edges.add((min(a, b), max(a, b)))
    edges = sorted(edges)
    if directed:
        edges = [(b, a) if rng.random() < 0.5 else (a, b) for a, b in edges]
    el = rng.integers(0, labels, len(edges))
    if any_edge:
        el[0] = ANY
    return Query.from_edges(edges, k=k, edge_labels=el.tolist(), directed=directed)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), directed=st.booleans(), labels=st.sampled_from([2, 3, 12]),
       vlabels=st.sampled_from([0, 2]), k=st.integers(2, 5), induced=st.booleans(),
       mode=st.sampled_from(["embeddings", "subgraphs"]), any_edge=st.booleans())
def test_counts_and_rows_equal_the_whole_graphs(seed, directed, labels, vlabels, k, induced,
                                                 mode, any_edge):
    rng = np.random.default_rng(seed)
    g = _graph(seed, int(rng.integers(6, 40)), int(rng.integers(20, 160)), labels, directed,
               vlabels)
    q = _query(rng, k, labels, directed, any_edge)
    sub, facts = label_graph(g, q, induced)
    used = set(q.edge_labels.tolist())
    if induced or any_edge or used >= set(g.edge_labels.tolist()):
        assert facts is None and sub is g
    else:
        assert facts["labels"] == sorted(used) and sub.num_edges == facts["edges"]
    # the oracle on the whole graph, without the API
    plan = build_plan(g, q, mode=mode, induced=induced)
    want = get_engine("reference").count(g, plan) * plan.multiplier
    for backend in ("reference", "cpu"):
        r = wm.count_result(g, q, mode=mode, induced=induced, backend=backend)
        assert r.count == want, backend
        assert r.edge_labels == facts and r.graph is g
    lplan = build_plan(g, q, mode=mode, induced=induced, purpose="list")
    whole = [np.asarray(b) for b in get_engine("reference").match(g, lplan)]
    whole = sorted(map(tuple, g.to_external(lplan.to_query_order(np.concatenate(whole)))
                       .tolist())) if whole else []
    got = [b for b in wm.match(g, q, mode=mode, induced=induced, backend="cpu")]
    got = sorted(map(tuple, np.concatenate(got).tolist())) if got else []
    assert got == whole


def test_explain_and_json_say_which_labels_ran():
    g = _graph(3, 200, 2000, 12, False)
    q = "a-[3]-b-[3]-c-[5]-a"
    text = wm.explain(g, q, backend="cpu")
    assert "edge label partitions" in text and "(3, 5)" in text
    d = wm.count_result(g, q, backend="cpu").as_dict()
    assert d["edge_label_partitions"]["labels"] == [3, 5]
    assert d["edges"] == g.num_edges                      # the whole graph's facts
    assert "edge label partitions" not in wm.explain(g, "a-[3]-b-c-[5]-a", backend="cpu")
