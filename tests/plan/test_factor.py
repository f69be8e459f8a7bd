"""Counting by factoring at a cut vertex (plan/factor.py, _factored.py): exact against the
reference engine's direct search on random labeled graphs and queries, and on shipped
queries; where it applies and where it does not."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch._factored import count_factored
from warpmatch.engine.cpu import CpuEngine
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.graph.generators import erdos_renyi, random_labels, with_labels
from warpmatch.plan import build_plan
from warpmatch.plan.factor import factoring, rooted
from warpmatch.query.model import Query

CPU, REF = CpuEngine(), ReferenceEngine()


def test_factoring_finds_the_cut_vertex_and_label_disjoint_groups():
    q = Query.parse("a:0-b:1, b:1-c:2, c:2-a:0, a:0-d:3, d:3-e:4")
    fac = factoring(q)
    assert fac.cut == q.index_of("a") and fac.describe(q) == "a: {b, c} | {d, e}"
    # components that share a label are one group: none is left to factor
    assert factoring(Query.parse("a:0-b:1, b:1-c:0, a:0-d:1, d:1-e:0")) is None
    # a cycle has no cut vertex; unlabeled, ANY-labeled and small queries: none
    assert factoring(Query.parse("a:0-b:1, b:1-c:2, c:2-d:3, d:3-e:4, e:4-a:0")) is None
    assert factoring(Query.parse("a-b, b-c, a-d, d-e")) is None
    assert factoring(Query.parse("a:0-b:1, a:0-c:2, a:0-d:3")) is None
    assert factoring(Query.parse("a:0-b:1, b:1-c:2, a:0-d:3, d:3-e")) is None
    # a directed query factors at a cut vertex of its underlying graph, arcs kept
    directed = Query.from_edges([(1, 0), (1, 2), (0, 3), (3, 4)], vertex_labels=[0, 1, 2, 3, 4],
                                directed=True)
    fac = factoring(directed)
    assert fac is not None and fac.cut == 0 and fac.groups == ((1, 2), (3, 4))
    sub = fac.subquery(directed, 0)
    assert sub.directed and sorted(map(tuple, sub.edges.tolist())) == [(1, 0), (1, 2)]


def test_factoring_makes_the_largest_group_smallest():
    # a path of five labels: cutting at its middle vertex leaves groups of two
    q = Query.parse("a:0-b:1, b:1-c:2, c:2-d:3, d:3-e:4")
    fac = factoring(q)
    assert fac.cut == q.index_of("c") and sorted(map(len, fac.groups)) == [2, 2]


def test_subquery_roots_at_the_cut_vertex_with_its_labels_and_names():
    q = Query.parse("a:0-[5]-b:1, b:1-c:2, c:2-a:0, a:0-[7]-d:3, d:3-e:4")
    fac = factoring(q)
    sub = fac.subquery(q, [i for i, g in enumerate(fac.groups) if len(g) == 2
                           and q.index_of("d") in g][0])
    assert sub.names == ("a", "d", "e") and list(sub.vertex_labels) == [0, 3, 4]
    assert sorted(map(tuple, np.sort(sub.edges, axis=1).tolist())) == [(0, 1), (1, 2)]
    assert sorted(sub.edge_labels.tolist()) == [-1, 7]


def test_rooted_plans_add_up_to_the_anchored_count():
    g = with_labels(erdos_renyi(40, p=0.2, seed=4), vertex_labels=random_labels(40, 3, seed=4))
    q = Query.parse("a:0-b:1, b:1-c:2, c:2-a:0, c:2-d:1")
    roots = np.flatnonzero(np.asarray(g.vertex_labels) == 0)
    plan = build_plan(g, q, anchors={"a": roots}, purpose="count")
    assert int(plan.order[0]) == q.index_of("a")
    rs = plan.cand_ids[plan.cand_ptr[0]:plan.cand_ptr[1]]
    assert rs.size > 1
    per_root = sum(REF.count(g, rooted(plan, int(v))) for v in rs)
    assert per_root == REF.count(g, plan)


@st.composite
def _cases(draw):
    n = draw(st.integers(25, 60))
    labels = draw(st.integers(4, 7))
    directed = draw(st.booleans())
    g = with_labels(erdos_renyi(n, p=draw(st.floats(0.08, 0.3)), seed=draw(st.integers(0, 999)),
                                directed=directed),
                    vertex_labels=random_labels(n, labels, seed=draw(st.integers(0, 999))))
    # a cut vertex s (label 0) and two or three groups of 1-3 vertices on disjoint labels
    pool = list(range(1, labels))
    draw(st.randoms()).shuffle(pool)
    ngroups = draw(st.integers(2, 3))
    vlabels, edges = [0], []
    for _ in range(ngroups):
        size = draw(st.integers(1, 3))
        mine = pool[:max(1, min(2, len(pool) - 1))] if len(pool) > 1 else pool[:1]
        pool = pool[len(mine):] or [labels - 1]
        first = len(vlabels)
        for j in range(size):
            vlabels.append(draw(st.sampled_from(mine)))
            u = first + j
            # a tree inside the group, plus maybe a chord, and one or two edges to s
            if j > 0:
                edges.append((first + draw(st.integers(0, j - 1)), u))
        edges.append((0, first))
        if size > 1 and draw(st.booleans()):
            edges.append((0, first + size - 1))
        if size > 2 and draw(st.booleans()):
            edges.append((first, first + 2))
    if directed:             # each edge one way or the other (both ways: an arc pair)
        edges = [e for a, b in sorted(set(edges))
                 for e in draw(st.sampled_from([[(a, b)], [(b, a)], [(a, b), (b, a)]]))]
    q = Query.from_edges(sorted(set(edges)), vertex_labels=vlabels, directed=directed)
    return g, q


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.sampled_from(["embeddings", "subgraphs"]))
def test_factored_counts_equal_the_direct_search(case, mode):
    g, q = case
    fac = factoring(q)
    if fac is None:          # labels that happened to repeat across groups merged them
        return
    plan = build_plan(g, q, mode=mode, purpose="count")
    want = REF.count(g, plan) * plan.multiplier
    res = count_factored(g, q, fac, plan, CPU)
    if res is None:          # a group's plan did not root at the cut vertex
        return
    emb, finished, info = res
    assert finished and info["calls"] <= 3 * max(1, info["roots"])
    got = emb if mode == "embeddings" else emb // plan.aut_size
    assert got == want


def test_api_factors_a_full_count_the_direct_search_has_not_finished(monkeypatch):
    """count_result factors a full count after the direct search's head start (0 here),
    reports it, and counts the same; a limit, an induced count or WARPMATCH_FACTOR=0 do
    not factor."""
    monkeypatch.setenv("WARPMATCH_FACTOR_AFTER", "0")
    monkeypatch.setenv("WARPMATCH_HOMBASIS", "0")    # else the quotients' sum answers first
    g = with_labels(erdos_renyi(300, p=0.05, seed=2), vertex_labels=random_labels(300, 5, seed=2))
    q = Query.parse("s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:3, c:3-d:4, d:4-e:3, e:3-s:0")
    want = wm.count_result(g, q, backend="reference").count
    r = wm.count_result(g, q, backend="cpu")
    assert r.count == want and r.factored is not None and r.factored["cut"] == "s"
    assert r.as_dict()["factored"]["groups"] == [["a", "b"], ["c", "d", "e"]]
    assert wm.count_result(g, q, backend="cpu", mode="subgraphs").count == \
        wm.count_result(g, q, backend="reference", mode="subgraphs").count
    assert wm.count_result(g, q, backend="cpu", limit=10).factored is None
    monkeypatch.setenv("WARPMATCH_FACTOR", "0")
    assert wm.count_result(g, q, backend="cpu").factored is None


def test_api_factors_a_directed_count(monkeypatch):
    """A directed query factors at a cut vertex of its underlying graph (each group keeps
    its arcs): the same count as the reference engine's direct search."""
    monkeypatch.setenv("WARPMATCH_FACTOR_AFTER", "0")
    monkeypatch.setenv("WARPMATCH_HOMBASIS", "0")    # else the quotients' sum answers first
    g = with_labels(erdos_renyi(200, p=0.06, seed=3, directed=True),
                    vertex_labels=random_labels(200, 5, seed=3))
    q = Query.parse("s:0->a:1, a:1->b:2, b:2->s:0, c:3->s:0, c:3->d:4, d:4->e:3")
    want = wm.count_result(g, q, backend="reference").count
    r = wm.count_result(g, q, backend="cpu")
    assert want > 0 and r.count == want and r.factored is not None and r.factored["cut"] == "s"


def test_explain_says_where_a_count_is_factored():
    g = with_labels(erdos_renyi(60, p=0.1, seed=2), vertex_labels=random_labels(60, 5, seed=2))
    text = wm.explain(g, "s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:3, c:3-d:4")
    assert "factored" in text and "s: {a, b} | {c, d}" in text
    assert "factored" not in wm.explain(g, "s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:3, c:3-d:4",
                                        induced=True)


@pytest.mark.parametrize("name, want", [("query_sparse_16_3", 88_768),
                                        ("query_sparse_16_1", 2_041_268)])
def test_shipped_yeast_queries_factored_equal_the_direct_count(name, want, monkeypatch,
                                                               data_path):
    """Two shipped yeast queries with a cut vertex, factored at once: the counts the direct
    search, the reference engine and EGSM's corrected build (bench/README) agree on."""
    from warpmatch.query.io import read_query_file
    path = data_path("labeled", "yeast")
    monkeypatch.setenv("WARPMATCH_FACTOR_AFTER", "0")
    monkeypatch.setenv("WARPMATCH_HOMBASIS", "0")    # else the quotients' sum answers first
    g = wm.read_graph(path / "yeast.graph")
    q = read_query_file(path / "query_graph" / f"{name}.graph")
    r = wm.count_result(g, q, backend="cpu")
    assert r.count == want and r.factored is not None


def test_a_factored_count_cut_by_its_stop_is_a_lower_bound():
    g = with_labels(erdos_renyi(300, p=0.05, seed=2), vertex_labels=random_labels(300, 5, seed=2))
    q = Query.parse("s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:3, c:3-d:4, d:4-e:3, e:3-s:0")
    plan = build_plan(g, q, purpose="count")
    want = REF.count(g, plan) * plan.multiplier
    fac = factoring(q)
    full = count_factored(g, q, fac, plan, CPU)
    assert full[0] == want and full[1] and full[2]["roots"] > 2
    asked = [0]

    def stop():
        asked[0] += 1
        return asked[0] > 4          # a few roots in
    emb, finished, info = count_factored(g, q, fac, plan, CPU, stop=stop)
    assert not finished and 0 <= emb <= want and info["calls"] < full[2]["calls"]


def test_a_factored_count_goes_on_where_it_stopped():
    """FactoredCount.run, stopped a few roots in and run again (as direct_then_factored does
    after its probe), adds every root once; the pace projects the rest."""
    from warpmatch._factored import FactoredCount
    g = with_labels(erdos_renyi(300, p=0.05, seed=2), vertex_labels=random_labels(300, 5, seed=2))
    q = Query.parse("s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:3, c:3-d:4, d:4-e:3, e:3-s:0")
    plan = build_plan(g, q, purpose="count")
    want = REF.count(g, plan) * plan.multiplier
    fc = FactoredCount.make(g, q, factoring(q), plan, CPU)
    assert fc.projected_left() == float("inf")       # nothing done: pace unknown
    for cut in (3, 9, 1):
        asked = [0]

        def stop():
            asked[0] += 1
            return asked[0] > cut
        assert not fc.run(stop) and 0 < fc.done < len(fc.keep)
        assert 0 < fc.projected_left() < float("inf")
    assert fc.run() and fc.finished and fc.projected_left() == 0.0
    assert fc.total == want and fc.info()["roots"] == len(fc.keep)
    # the roots are visited in a pseudo-random order, each once
    assert sorted(fc.keep) == sorted(set(fc.keep)) and fc.keep != sorted(fc.keep)
