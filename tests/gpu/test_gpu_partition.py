"""Partitioned matching on the GPU (PBE): parts on the device, inter searches with rule 8.

- The GPU engine runs rule 8 (DupRemove) exactly as the CPU engine: the same raw
  count for every inter-partition search plan.
- Counts and listed rows by partitions on the GPU equal the in-memory CPU engine's,
  for undirected, directed, labeled and edge-labeled graphs, both modes, induced.
- The graph in pinned host memory (zero-copy), with its offsets on the device and
  its lists pinned (hybrid), or in managed memory gives the same counts as in
  device memory; parts are copied from pinned host memory.
- The inter searches read the whole graph from device, pinned, hybrid or managed memory,
  with the same counts; the API runs the parts on the GPU.
- A last plain leaf under rule 8 is counted from the cut neighbours' lists (in device
  memory with the graph, else pinned), a prime edge at a leaf matched last included:
  the same raw counts as the CPU engine, for every graph memory.
"""
from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import pytest

pytest.importorskip("cupy", reason="the GPU engine needs CuPy")
pytestmark = [pytest.mark.gpu,
              pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")]

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import warpmatch as wm  # noqa: E402
from warpmatch.engine.cpu import CpuEngine  # noqa: E402
from warpmatch.engine.gpu import GpuEngine  # noqa: E402
from warpmatch.graph.csr import Graph  # noqa: E402
from warpmatch.partition import Partitioned, count_partitioned, match_partitioned  # noqa: E402
from warpmatch.partition.plans import inter_searches  # noqa: E402
from warpmatch.plan import build_plan  # noqa: E402
from warpmatch.plan.build import anchor_colors  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_helpers import LEAFY, graphs, leafy_inter_case, queries  # noqa: E402
from engine_helpers import sorted_rows as _rows  # noqa: E402

CPU = CpuEngine()
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _gpu(**kw) -> GpuEngine:
    kw.setdefault("time_limit_s", 120.0)
    eng = GpuEngine(**kw)
    ok, why = eng.available()
    if not ok:
        pytest.skip(why)
    return eng


@SETTINGS
@given(data=st.data())
def test_rule_8_on_the_gpu_equals_the_cpu(data) -> None:
    g = data.draw(graphs(nmax=20))
    q = data.draw(queries(g, 2, 5))
    if g.n < 2:
        return
    pg = Partitioned.build(g, parts=min(g.n, 4))
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      induced=data.draw(st.booleans()), purpose="count")
    if plan.empty_reason is not None or plan.k < 2:
        return
    eng = _gpu()
    for s in inter_searches(g, plan, pg.part, pg.boundary, anchor_colors(g, q, None), "count"):
        assert eng.count(g, s.plan) == CPU.count(g, s.plan)
        assert _rows(eng.match(g, s.plan), plan.k) == _rows(CPU.match(g, s.plan), plan.k)


@SETTINGS
@given(data=st.data())
def test_partitioned_on_the_gpu_equals_in_memory(data) -> None:
    g = data.draw(graphs(nmax=20))
    q = data.draw(queries(g, 2, 5))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    pg = Partitioned.build(g, parts=min(g.n, data.draw(st.sampled_from([1, 2, 4, 8]))))
    want = wm.count(g, q, mode=mode, induced=induced, backend="cpu")
    got, stats, _ = count_partitioned(pg, q, mode, induced, engine=_gpu())
    assert got == want, stats
    mem = _rows(wm.match(g, q, mode=mode, induced=induced, backend="cpu"), q.k)
    par = _rows(match_partitioned(pg, q, mode, induced, engine=_gpu()), q.k)
    assert par == mem


@pytest.mark.parametrize("memory", ["pinned", "hybrid", "managed"])
def test_the_graph_in_host_memory_gives_the_same_counts(memory: str) -> None:
    g = Graph.from_networkx(nx.powerlaw_cluster_graph(3000, 5, 0.4, seed=2))
    dev, host = _gpu(), _gpu(graph_memory=memory)
    for name in ("triangle", "square", "diamond", "4-clique", "house"):
        plan = build_plan(g, wm.api.as_query(name, g))
        assert host.count(g, plan) == dev.count(g, plan)


@SETTINGS
@given(data=st.data())
def test_hybrid_graph_memory_equals_device_memory(data) -> None:
    """Offsets on the device, lists pinned: directed, labeled and edge-labeled graphs
    count and list as with the whole graph on the device."""
    from warpmatch.engine.gpu.memory import _GRAPHS, resident_bytes
    g = data.draw(graphs(nmax=20))
    q = data.draw(queries(g, 2, 5))
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      induced=data.draw(st.booleans()))
    dev, hyb = _gpu(), _gpu(graph_memory="hybrid")
    want, rows = dev.count(g, plan), _rows(dev.match(g, plan), plan.k)
    assert _rows(hyb.match(g, plan), plan.k) == rows
    assert hyb.count(g, plan) == want
    if plan.empty_reason is None and plan.k and g in _GRAPHS:      # the last copy made
        dg = _GRAPHS[g]
        assert dg.memory == "hybrid" and dg.device_bytes == resident_bytes(g, "hybrid")


def test_parts_are_copied_from_pinned_host_memory() -> None:
    """A GPU engine's partitioned count pins each part on its second query and reuses it."""
    g = Graph.from_networkx(nx.powerlaw_cluster_graph(5000, 5, 0.3, seed=3))
    pg = Partitioned.build(g, parts=3)
    for name in ("triangle", "square"):
        got, _, _ = count_partitioned(pg, wm.api.as_query(name, g), engine=_gpu())
        assert got == wm.count(g, name, backend="cpu")
    assert sorted(pg._pinned) == [0, 1, 2]
    sub, pinned = pg.subgraph(1), pg.subgraph(1, pinned=True)
    assert pinned is pg._pinned[1] and pinned is not sub
    assert (pinned.indptr == sub.indptr).all() and (pinned.indices == sub.indices).all()


@pytest.mark.parametrize("memory", ["device", "pinned", "hybrid", "managed"])
def test_inter_searches_read_the_graph_where_asked(memory: str) -> None:
    g = Graph.from_networkx(nx.powerlaw_cluster_graph(20000, 6, 0.3, seed=4))
    pg = Partitioned.build(g, parts=4)
    for name in ("triangle", "diamond", "tailed-triangle", "house"):
        q = wm.api.as_query(name, g)
        got, stats, _ = count_partitioned(pg, q, engine=_gpu(), inter_memory=memory)
        assert got == wm.count(g, q, backend="cpu")
        assert stats.inter > 0 and stats.intra > 0
        assert stats.inter_engine == ("gpu" if memory == "device"
                                      else f"gpu ({memory} graph)")


def test_the_api_runs_parts_on_the_gpu() -> None:
    g = Graph.from_networkx(nx.powerlaw_cluster_graph(20000, 6, 0.3, seed=4))
    r = wm.api.count_result(g, "diamond", backend="gpu", partitions=4)
    p = r.as_dict()["partition"]
    assert r.count == wm.count(g, "diamond", backend="cpu")
    assert p["parts"] == 4 and p["intra_engine"] == "gpu" and p["bytes_to_device"] > 0
    rows = _rows(wm.match(g, "square", backend="gpu", partitions=3, mode="subgraphs"), 4)
    assert rows == _rows(wm.match(g, "square", backend="cpu", mode="subgraphs"), 4)


def test_the_api_reads_the_whole_graph_where_the_parts_cut_most_edges(tmp_path) -> None:
    """A partition directory that cuts most edges (a power-law graph by BFS ranges) is
    counted and listed on the GPU over the whole graph in host memory when no part count
    is forced (the budget leaves room for the row offsets: hybrid; listing shrinks its
    buffer to the budget), and by parts when one is."""
    from warpmatch.engine.gpu.memory import device_graph_bytes
    from warpmatch.partition import Partitioned
    from warpmatch.partition.search import WHOLE_GRAPH_CUT
    g = Graph.from_networkx(nx.powerlaw_cluster_graph(20000, 6, 0.3, seed=4))
    pg = Partitioned.build(g, parts=4, method="bfs")
    assert pg.cut_edges >= WHOLE_GRAPH_CUT * g.num_edges
    out = pg.write(tmp_path / "parts")
    budget = device_graph_bytes(g) // 2
    r = wm.api.count_result(out, "diamond", backend="gpu", memory_budget=budget)
    p = r.as_dict()
    assert r.count == wm.count(g, "diamond", backend="cpu")
    assert p["strategy"] == "whole graph" and "hybrid" in p["partition"]["engine"]
    assert "strategy: whole graph" in wm.explain(out, "diamond", backend="gpu",
                                                 memory_budget=budget)
    forced = wm.api.count_result(g, "diamond", backend="gpu", partitions=str(out),
                                 memory_budget=budget)
    assert forced.count == r.count and forced.as_dict()["strategy"] == "partitioned"
    rows = _rows(wm.match(out, "square", backend="gpu", memory_budget=budget,
                          mode="subgraphs"), 4)
    assert rows == _rows(wm.match(g, "square", backend="cpu", mode="subgraphs"), 4)
    # each call's budget was its own: the process's GPU engine keeps none (it had kept the
    # last one, and a later test's vertex_order="auto" found the graph too big for it)
    from warpmatch.engine import resolve_backend
    assert resolve_backend("gpu").memory_budget_bytes is None


def test_make_room_drops_old_device_copies_only_when_short(monkeypatch) -> None:
    """A Dask worker keeps a partitioned run's graphs mapped; their device copies go,
    oldest first, only when the next graph's copy would not fit."""
    import cupy as cp

    from warpmatch.engine.gpu import memory as E
    gs = [Graph.from_networkx(nx.gnm_random_graph(60, 200, seed=s)) for s in range(3)]
    eng = GpuEngine()
    for g in gs[:2]:
        assert eng.count(g, build_plan(g, wm.get_pattern("triangle"))) == \
            CPU.count(g, build_plan(g, wm.get_pattern("triangle")))
    assert gs[0] in E._GRAPHS and gs[1] in E._GRAPHS
    assert E.make_room(gs[0]) == 0 and E.make_room(gs[2]) == 0   # cached; room enough
    assert E.make_room(gs[2], memory="pinned") == 0                # not device memory

    class NoRoom:
        mem_info = (0, 1 << 30)
    monkeypatch.setattr(cp.cuda, "Device", lambda *a: NoRoom())
    assert E.make_room(gs[2]) >= 2          # (with any other test's copies still cached)
    assert gs[0] not in E._GRAPHS and gs[1] not in E._GRAPHS
    monkeypatch.undo()
    assert eng.count(gs[0], build_plan(gs[0], wm.get_pattern("triangle"))) == \
        CPU.count(gs[0], build_plan(gs[0], wm.get_pattern("triangle")))   # copied again


@SETTINGS
@given(data=st.data())
def test_cut_leaves_on_the_gpu_equal_the_cpu(data) -> None:
    """Inter searches with the cut neighbours' lists (a last leaf counted under rule 8; a
    leaf end of the prime edge matched last) count on the GPU as on the CPU engine, which
    tests/partition checks against the reference; directed, labeled, anchors."""
    from warpmatch.engine.gpu.render import leaf_countable
    case = leafy_inter_case(data)
    if case is None:
        return
    g, searches = case[0], case[-1]
    eng = _gpu(graph_memory=data.draw(st.sampled_from(["device", "hybrid", "pinned"])))
    for s in searches:
        assert eng.count(g, s.plan) == CPU.count(g, s.plan), (s.edges, s.plan.cut_depth)
        assert eng.last_stats["leaf_count"] == leaf_countable(s.plan)


def test_cut_leaves_at_hubs_on_the_gpu() -> None:
    """A power-law graph in 4 parts: partitioned counts of leafy queries on the GPU equal
    the in-memory ones, with the searches whose prime edge ends at a leaf matching it
    last and counting it from the cut lists."""
    g = Graph.from_networkx(nx.barabasi_albert_graph(20000, 4, seed=6))
    pg = Partitioned.build(g, parts=4)
    for dsl in LEAFY:
        q = wm.api.as_query(dsl, g)
        for memory in ("device", "hybrid"):
            got, stats, _ = count_partitioned(pg, q, engine=_gpu(), inter_memory=memory)
            assert got == wm.count(g, q, backend="cpu"), (dsl, memory, stats)
