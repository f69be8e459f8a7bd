"""Failing-set pruning (DP-iso) in the CPU engine's search (issue 23, item 2).

The pruning ends a depth's scan when a child's failing set does not contain that depth:
every other candidate there fails the same way. These tests run it on every plan
(``WARPMATCH_FAILING_SETS=all``, not only labeled graphs) and check the counts and the
listed matches against the reference engine: on random graphs and queries (labels, edge
labels, directed, induced, both modes, anchors), with kernel calls of one step (the
failing sets live in the lanes' resumable state), and on a shipped labeled query set,
where the pruning is checked to happen.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpmatch.engine import cpu
from warpmatch.engine.cpu import CpuEngine, failing_sets_wanted
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.graph.csr import Graph
from warpmatch.plan import build_plan
from warpmatch.query.model import Query
from warpmatch.query.patterns import get_pattern

from engine_helpers import graphs, queries, sorted_rows  # noqa: E402

REF = ReferenceEngine()
pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture
def everywhere(monkeypatch):
    monkeypatch.setenv("WARPMATCH_FAILING_SETS", "all")


def _same(graph: Graph, plan, batch_size: int = 1 << 16) -> None:
    eng = CpuEngine()
    want = REF.count(graph, plan)
    assert eng.count(graph, plan) == want
    assert sorted_rows(eng.match(graph, plan, batch_size=batch_size), plan.k) == \
        sorted_rows(REF.match(graph, plan), plan.k)


@SETTINGS
@given(data=st.data())
def test_pruned_search_equals_reference(everywhere, data) -> None:
    g = data.draw(graphs(nmax=12))
    q = data.draw(queries(g, 3, 8))
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      induced=data.draw(st.booleans()),
                      purpose=data.draw(st.sampled_from(["count", "list"])))
    assert failing_sets_wanted(plan, g)
    _same(g, plan, batch_size=data.draw(st.integers(1, 5)))


@SETTINGS
@given(data=st.data())
def test_pruned_search_with_anchors_equals_reference(everywhere, data) -> None:
    g = data.draw(graphs(nmax=12))
    if g.n == 0:
        return
    q = data.draw(queries(g, 3, 7))
    u = data.draw(st.integers(0, q.k - 1))
    ids = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=4, unique=True))
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      anchors={u: ids})
    _same(g, plan)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_pruned_search_resumes_after_any_step(everywhere, monkeypatch, data) -> None:
    """Kernel calls of one step: the lanes stop between any two steps, failing sets and
    the found counter included, and resume exactly."""
    monkeypatch.setattr(cpu, "FIRST_BUDGET", 1)
    monkeypatch.setattr(cpu, "CALL_S", 0.0)
    g = data.draw(graphs())
    q = data.draw(queries(g, 3, 6))
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      induced=data.draw(st.booleans()),
                      purpose=data.draw(st.sampled_from(["count", "list"])))
    _same(g, plan, batch_size=data.draw(st.integers(1, 4)))


def test_where_pruning_applies(monkeypatch) -> None:
    g_lab = Graph.from_edges([0, 1, 2], [1, 2, 3], vertex_labels=[0, 1, 0, 1])
    g_plain = Graph.from_edges([0, 1, 2], [1, 2, 3])
    path = Query.from_edges([(0, 1), (1, 2), (2, 3)])
    assert failing_sets_wanted(build_plan(g_lab, path), g_lab)          # default: labeled
    assert not failing_sets_wanted(build_plan(g_plain, path), g_plain)
    edge = Query.from_edges([(0, 1)])
    assert not failing_sets_wanted(build_plan(g_lab, edge), g_lab)      # nothing to prune
    monkeypatch.setenv("WARPMATCH_FAILING_SETS", "all")
    assert failing_sets_wanted(build_plan(g_plain, path), g_plain)
    monkeypatch.setenv("WARPMATCH_FAILING_SETS", "off")
    assert not failing_sets_wanted(build_plan(g_lab, path), g_lab)
    monkeypatch.setenv("WARPMATCH_FAILING_SETS", "sometimes")
    with pytest.raises(ValueError, match="WARPMATCH_FAILING_SETS"):
        failing_sets_wanted(build_plan(g_lab, path), g_lab)


def test_ancestor_table_follows_the_plan(everywhere) -> None:
    """anc[i]: bit i, and the bits of the depths depth i intersects with, is bounded by
    or must not touch, closed transitively."""
    from warpmatch.engine import _cpu_kernels as K
    from warpmatch.engine.cpu import _program
    g = Graph.from_edges(list(range(9)), list(range(1, 10)))
    for name, induced in (("4-path", False), ("tailed-triangle", True), ("house", False)):
        plan = build_plan(g, get_pattern(name), induced=induced)
        prog = np.asarray(_program(plan, g))
        anc = prog[prog[K.HEAD + K.S_ANC]:prog[K.HEAD + K.S_ANC + 1]]
        assert anc.size == plan.k
        for i in range(plan.k):
            deps = set()
            for ptr, pos in ((plan.bn_ptr, plan.bn_pos), (plan.res_ptr, plan.res_pos),
                             (plan.na_ptr, plan.na_pos)):
                deps |= set(pos[int(ptr[i]):int(ptr[i + 1])].tolist())
            want = 1 << i
            for j in deps:
                assert j < i
                want |= int(anc[j])
            assert int(anc[i]) == want


def test_seeded_instances_prune_and_stay_exact(everywhere) -> None:
    """Seeded random labeled graphs and queries of 4-8 vertices, where some searches do
    end scans by failing sets (26 of these 240 did when written): every count and every
    listed match equals the reference's."""
    eng = CpuEngine()
    pruned = 0
    for seed in range(120):
        rng = np.random.default_rng(seed)
        n, m, directed, k = 14, 34, bool(seed % 2), 4 + seed % 5
        g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n=n,
                             directed=directed, vertex_labels=rng.integers(0, 2, n), warn=False)
        edges = {(int(rng.integers(0, v)), v) for v in range(1, k)}
        for _ in range(k // 2):
            a, b = sorted(rng.choice(k, 2, replace=False).tolist())
            edges.add((a, b))
        q = Query.from_edges(sorted(edges), k=k, vertex_labels=rng.integers(-1, 2, k).tolist(),
                             directed=directed)
        for induced in (False, True):
            plan = build_plan(g, q, induced=induced, purpose="list")
            assert eng.count(g, plan) == REF.count(g, plan), (seed, induced)
            pruned += eng.last_stats["failing_set_prunes"] > 0
            assert sorted_rows(eng.match(g, plan, batch_size=3), k) == \
                sorted_rows(REF.match(g, plan), k), (seed, induced)
    assert pruned >= 10


def test_shipped_labeled_queries_are_pruned_and_exact(data_path) -> None:
    """yeast's 32-vertex query_dense_32_1 (the default setting, a labeled graph) has
    failing subtrees the pruning ends (92,522 scans when written); counts equal the search
    without pruning, on it and on a 16-vertex query where nothing is pruned."""
    import warpmatch as wm
    from warpmatch.query.io import read_query_file
    g = wm.read_graph(data_path("labeled", "yeast", "yeast.graph"))
    eng = CpuEngine()
    prunes = {}
    for name in ("query_dense_32_1", "query_dense_16_1"):
        q = read_query_file(data_path("labeled", "yeast", "query_graph", f"{name}.graph"))
        plan = build_plan(g, q)
        assert failing_sets_wanted(plan, g)
        with_fs = eng.count(g, plan)
        prunes[name] = eng.last_stats["failing_set_prunes"]
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("WARPMATCH_FAILING_SETS", "off")
            assert eng.count(g, build_plan(g, q)) == with_fs > 0
            assert eng.last_stats["failing_set_prunes"] == 0
    assert prunes["query_dense_32_1"] > 1000
