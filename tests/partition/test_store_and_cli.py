"""Partition directories, budgets, bad input, and the API / CLI surface of partitioned runs."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner

import warpmatch as wm
from warpmatch.cli import cli
from warpmatch.errors import BudgetError, GraphError, InputFormatError, QueryError
from warpmatch.graph.csr import Graph
from warpmatch.partition import Partitioned, parse_bytes
from warpmatch.partition.split import ROOM, fit_parts

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cli_helpers import assert_clean_error, last_json  # noqa: E402


@pytest.fixture(scope="module")
def g() -> Graph:
    G = nx.powerlaw_cluster_graph(300, 4, 0.3, seed=5)
    return Graph.from_edges(*zip(*G.edges()), ids=np.arange(300) * 10 + 7, name="plc")


def test_directory_round_trip_reuses_the_parts(g: Graph, tmp_path: Path) -> None:
    pg = Partitioned.build(g, parts=5)
    out = pg.write(tmp_path / "parts")
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["manifest.json", "graph.wmg", "part.npy", "boundary.npy", "cut.wmg"]
        + [f"part-{p:04d}.wmg" for p in range(pg.parts)])
    back = Partitioned.open(out)
    assert back.parts == pg.parts and back.cut_edges == pg.cut_edges
    assert np.array_equal(back.part, pg.part)
    for a, b in ((back.cut_graph.indptr, pg.cut_graph.indptr),
                 (back.cut_graph.indices, pg.cut_graph.indices)):
        assert np.array_equal(a, b)
    for p in range(pg.parts):
        a, b = back.subgraph(p), pg.subgraph(p)
        assert a.n == b.n and np.array_equal(a.indptr, b.indptr)
        assert np.array_equal(a.indices, b.indices)
    for name in ("triangle", "diamond", "house"):
        assert wm.count(out, name) == wm.count(g, name)
        assert wm.count(g, name, partitions=str(out)) == wm.count(g, name)
    rows = np.concatenate(list(wm.match(out, "triangle", mode="subgraphs")))
    mem = np.concatenate(list(wm.match(g, "triangle", mode="subgraphs")))
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, mem.tolist()))
    assert rows.min() >= 7         # the file's ids, as in memory
    # the cut, the boundary and the parts' bytes come from the directory, not from a pass
    # over the edges
    again = Partitioned.open(out)
    assert again._cut == pg.cut_edges and np.array_equal(again._boundary, pg.boundary)
    assert again._bytes is not None and np.array_equal(again.part_bytes(), pg.part_bytes())
    man = json.loads((out / "manifest.json").read_text())
    man["part_info"] = man["part_info"][:-1]
    (out / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(InputFormatError, match="lists 4 parts' sizes for 5 parts"):
        Partitioned.open(out)


@pytest.mark.parametrize("parts", [1, 3, 17])
def test_parts_list_their_vertices_in_id_order(g: Graph, parts: int) -> None:
    """Part p's vertices are order[start[p]:start[p+1]] in increasing id, and local[v] is
    v's place there (the counting sort that replaced a stable argsort)."""
    rng = np.random.default_rng(parts)
    part = np.concatenate([np.arange(parts), rng.integers(0, parts, g.n - parts)])
    rng.shuffle(part)
    pg = Partitioned(g, part)
    for p in range(parts):
        mine = np.flatnonzero(part == p)
        got = pg._order[pg._start[p]:pg._start[p + 1]]
        assert np.array_equal(got, mine)
        assert np.array_equal(pg.local[mine], np.arange(mine.size))
    assert pg._order.dtype == pg.local.dtype == g.indices.dtype


def test_boundary_mask_and_pinned_parts_past_the_host_share(g: Graph, monkeypatch) -> None:
    """on_boundary is the boundary as a mask; a part is pinned on its second copy to a
    device, never where the parts would take more than PIN_SHARE of the host's memory
    (the GPU tests check the pinned copies themselves)."""
    from warpmatch.engine.gpu import memory
    from warpmatch.partition import store
    pg = Partitioned.build(g, parts=3)
    assert np.array_equal(np.flatnonzero(pg.on_boundary), pg.boundary)
    # a stand-in for the page-locked copy (CuPy may be absent here)
    monkeypatch.setattr(memory, "pinned_copy", lambda sub: ("pinned", sub))
    sub = pg.subgraph(1)
    assert pg.subgraph(1, pinned=True) is sub            # a first copy: pageable
    assert pg.subgraph(1, pinned=True) == ("pinned", sub)  # the second: pinned, kept
    assert pg.subgraph(1, pinned=True) is pg._pinned[1] and sorted(pg._pinned) == [1]
    monkeypatch.setattr(store, "PIN_SHARE", 0.0)
    for _ in range(3):
        assert pg.subgraph(2, pinned=True) is pg.subgraph(2)
    assert sorted(pg._pinned) == [1]


def test_a_damaged_boundary_file_is_refused(g: Graph, tmp_path: Path) -> None:
    out = Partitioned.build(g, parts=3).write(tmp_path / "p")
    b = np.load(out / "boundary.npy")
    np.save(out / "boundary.npy", b[::-1])                  # not ascending
    with pytest.raises(InputFormatError, match="boundary.npy does not hold"):
        Partitioned.open(out)
    np.save(out / "boundary.npy", b[:-1])                   # not the manifest's count
    with pytest.raises(InputFormatError, match="boundary.npy does not hold"):
        Partitioned.open(out)
    (out / "boundary.npy").unlink()
    with pytest.raises(InputFormatError, match="damaged partition directory: boundary"):
        Partitioned.open(out)


def test_writing_refuses_an_existing_directory(g: Graph, tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    with pytest.raises(FileExistsError, match="exists"):
        Partitioned.build(g, parts=2).write(tmp_path / "x")


def test_damaged_or_foreign_directories_are_refused(g: Graph, tmp_path: Path) -> None:
    out = Partitioned.build(g, parts=3).write(tmp_path / "p")
    other = Graph.from_networkx(nx.cycle_graph(300))
    with pytest.raises(GraphError, match="was made from graph 'plc'"):
        Partitioned.open(out, graph=other)
    with pytest.raises(GraphError, match="was made from"):
        wm.count(other, "triangle", partitions=str(out))
    # a part file cut short
    f = out / "part-0001.wmg"
    f.write_bytes(f.read_bytes()[:100])
    pg = Partitioned.open(out)
    with pytest.raises(InputFormatError, match="damaged partition directory"):
        wm.count(pg, "triangle")
    # a manifest that is not one
    (out / "manifest.json").write_text("{not json")
    with pytest.raises(InputFormatError, match="unreadable manifest"):
        Partitioned.open(out)
    (out / "manifest.json").write_text(json.dumps({"format": "warpmatch-partitions",
                                                   "version": 99}))
    with pytest.raises(InputFormatError, match="version 99"):
        Partitioned.open(out)
    with pytest.raises(InputFormatError, match="not a partition directory"):
        Partitioned.open(tmp_path)


def test_more_parts_than_vertices_and_tiny_budgets_are_clear_errors(g: Graph) -> None:
    with pytest.raises(GraphError, match="into 301 parts: choose 1..300"):
        Partitioned.build(g, parts=301)
    with pytest.raises(BudgetError, match="one vertex's neighbourhood"):
        Partitioned.build(g, budget=64)
    with pytest.raises(ValueError, match="expected bytes or a size"):
        parse_bytes("four gigabytes")
    with pytest.raises(QueryError, match="positive part count"):
        wm.count(g, "triangle", partitions=0)
    # a bad budget is the caller's error on every backend and call, not a ValueError from
    # deep inside (the vertex-order check read it first) nor an "unavailable" backend
    for call in (wm.count, wm.explain, lambda *a, **k: list(wm.match(*a, **k))):
        with pytest.raises(QueryError, match="expected bytes or a size"):
            call(g, "triangle", backend="cpu", memory_budget="lots")


def test_a_budget_gives_parts_that_fit_it(g: Graph) -> None:
    from warpmatch.engine.gpu.memory import device_graph_bytes
    budget = device_graph_bytes(g) // 3
    part, _ = fit_parts(g, budget)
    pg = Partitioned(g, part)
    assert pg.parts >= 4
    assert int(pg.part_bytes().max()) <= budget * (1 - ROOM)
    assert parse_bytes("4GB") == 4 << 30 and parse_bytes("1.5 KiB") == 1536


def test_count_result_reports_the_partitioned_run(g: Graph) -> None:
    r = wm.api.count_result(g, "diamond", partitions=4, backend="cpu")
    d = r.as_dict()
    assert d["strategy"] == "partitioned" and d["count"] == wm.count(g, "diamond")
    p = d["partition"]
    assert p["parts"] == 4 and p["intra"] + p["inter"] == d["count"]
    assert 0 < p["intra_share"] < 1 and p["inter_searches"] == 2 and p["query_edges"] == 5
    assert wm.api.count_result(g, "diamond").as_dict()["strategy"] == "in-memory"
    partial = wm.api.count_result(g, "diamond", partitions=4, backend="cpu", limit=10)
    assert partial.partial and partial.count >= 10
    text = wm.explain(g, "house", partitions=3, backend="cpu")
    assert "strategy: partitioned (3 parts" in text and "prime edge(s)" in text


def test_cli_partition_then_count_match_explain(g: Graph, tmp_path: Path) -> None:
    src = tmp_path / "g.wmg"
    wm.graph.binary.save_binary(g, src)
    runner = CliRunner()
    r = runner.invoke(cli, ["partition", str(src), "--parts", "4", "-o",
                            str(tmp_path / "parts"), "--json"])
    assert r.exit_code == 0, r.output
    info = last_json(r)
    assert info["parts"] == 4 and len(info["part_bytes"]) == 4
    r = runner.invoke(cli, ["count", str(tmp_path / "parts"), "square", "--json"])
    assert r.exit_code == 0, r.output
    d = last_json(r)
    assert d["count"] == wm.count(g, "square") and d["partition"]["parts"] == 4
    assert "partitioned: 4 parts" in r.output
    r = runner.invoke(cli, ["count", str(src), "square", "--partitions", "3", "--json"])
    assert r.exit_code == 0 and last_json(r)["partition"]["parts"] == 3
    r = runner.invoke(cli, ["match", str(tmp_path / "parts"), "triangle", "-o",
                            str(tmp_path / "t.csv"), "--mode", "subgraphs"])
    assert r.exit_code == 0, r.output
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert len(lines) - 1 == wm.count(g, "triangle", mode="subgraphs")
    r = runner.invoke(cli, ["explain", str(tmp_path / "parts"), "house"])
    assert r.exit_code == 0 and "inter-partition" in r.output
    r = runner.invoke(cli, ["info", str(tmp_path / "parts"), "--json"])
    d = last_json(r)
    assert d["partitions"]["parts"] == 4 and len(d["partitions"]["per_part"]) == 4
    assert sum(p["vertices"] for p in d["partitions"]["per_part"]) == g.n
    assert "part 3:" in r.output


def test_cli_errors_are_one_line(g: Graph, tmp_path: Path) -> None:
    src = tmp_path / "g.wmg"
    wm.graph.binary.save_binary(g, src)
    runner = CliRunner()
    assert_clean_error(runner.invoke(cli, ["partition", str(src), "-o", str(tmp_path / "o")]),
                       "give --parts P, --memory-budget SIZE, or both")
    assert_clean_error(runner.invoke(cli, ["count", str(src), "triangle", "--partitions",
                                           "nowhere"]), "neither a part count")
    assert_clean_error(runner.invoke(cli, ["count", str(src), "triangle", "--memory-budget",
                                           "lots"]), "expected bytes or a size")
    assert_clean_error(runner.invoke(cli, ["partition", str(src), "--parts", "999", "-o",
                                           str(tmp_path / "o")]), "choose 1..300")


class _FakeGpu:
    """Stands for the GPU engine where only its name and budget matter (CPU machines)."""

    name = "gpu"
    memory_budget_bytes = None
    graph_memory = "device"


def test_a_gpu_budget_too_small_for_the_graph_partitions_it(g: Graph) -> None:
    from warpmatch.engine.gpu.memory import device_graph_bytes
    from warpmatch.partition.choose import choose, with_budget
    from warpmatch.partition.search import _inter_engine
    need = device_graph_bytes(g)
    shared = _FakeGpu()
    eng = with_budget(shared, need)
    # a copy: the API's engine is one instance per backend, and a budget set on it would
    # stay for every later call
    assert eng.memory_budget_bytes == need and shared.memory_budget_bytes is None
    assert with_budget(shared, None) is shared
    pg = choose(g, eng, memory_budget=need)
    assert pg is not None and pg.parts >= 2
    assert int(pg.part_bytes().max()) <= need * (1 - ROOM)
    # the graph does not fit, its row offsets (with the part ids, one byte each, and
    # the candidate sets) do
    import dataclasses

    from warpmatch.engine.gpu.memory import resident_bytes
    from warpmatch.partition.plans import inter_searches
    from warpmatch.plan import build_plan
    plan = build_plan(g, wm.api.as_query("triangle", g))
    plans = [s.plan for s in inter_searches(g, plan, pg.part, pg.boundary, None, "count")]
    assert _inter_engine(eng, g, plans=plans).graph_memory == "hybrid"
    assert resident_bytes(g, "hybrid") + g.n + 8 * plans[0].cand_ids.size < need * (1 - ROOM)
    # nor do the offsets beside larger candidate sets: all of it pinned
    big = dataclasses.replace(plans[0], cand_ids=np.zeros(need // 4, dtype=np.int32))
    assert _inter_engine(eng, g, plans=[big]).graph_memory == "pinned"
    roomy = with_budget(_FakeGpu(), 10 * need)
    assert choose(g, roomy, memory_budget=10 * need) is None
    assert _inter_engine(roomy, g).graph_memory == "device"
    assert _inter_engine(roomy, g, "managed").graph_memory == "managed"
    from warpmatch.engine.cpu import CpuEngine
    assert choose(g, CpuEngine(), memory_budget=1000) is None   # host engines read host memory


def test_the_whole_graph_is_read_where_the_parts_cut_most_edges(g: Graph, monkeypatch) -> None:
    """strategy="auto" on a GPU engine whose partition cuts WHOLE_GRAPH_CUT or more of the
    edges searches the whole graph from host memory (hybrid or pinned, by the budget), with
    the in-memory answer; below that share, or on a host engine, or forced, it runs by
    parts. A CPU engine named "gpu" stands for the GPU engine (its budget and
    graph_memory are what the choice reads)."""
    from warpmatch.cli.partition import partition_line
    from warpmatch.engine.cpu import CpuEngine
    from warpmatch.engine.gpu.memory import device_graph_bytes, resident_bytes
    from warpmatch.partition import search as S
    from warpmatch.plan import build_plan

    class GpuLike(CpuEngine):
        name = "gpu"
        graph_memory = "device"

        def count(self, graph, plan, **kw):
            self.seen.append((graph.n, self.graph_memory))
            return super().count(graph, plan, **kw)

        def match(self, graph, plan, **kw):
            self.seen.append((graph.n, self.graph_memory))
            return super().match(graph, plan, **kw)

    pg = Partitioned.build(g, parts=4, method="bfs")
    share = pg.cut_edges / g.num_edges
    assert share >= S.WHOLE_GRAPH_CUT        # a power-law graph's cut: most edges
    for budget, where in ((device_graph_bytes(g), "hybrid"), (2000, "pinned")):
        eng = GpuLike()
        eng.seen = []
        eng.memory_budget_bytes = budget
        for name in ("triangle", "diamond", "tailed-triangle"):
            q = wm.api.as_query(name, g)
            plan = build_plan(g, q, purpose="count")
            assert S.whole_graph_memory(pg, eng, plan) == where
            # hybrid exactly where its offsets and the candidate sets twice fit the budget
            need = resident_bytes(g, "hybrid") + 8 * plan.cand_ids.size
            for b, m in ((need, "hybrid"), (need - 1, "pinned")):
                tight = GpuLike()
                tight.memory_budget_bytes = b
                assert S.whole_graph_memory(pg, tight, plan) == m
            for mode in ("embeddings", "subgraphs"):
                c, st, done = S.count_partitioned(pg, q, mode, engine=eng, strategy="auto")
                assert done and c == wm.count(g, name, mode=mode)
                assert st.strategy == "whole graph" and eng.seen[-1] == (g.n, where)
            d = st.as_dict()
            assert d["strategy"] == "whole graph" and d["cut_share"] == pytest.approx(share)
            assert "would cut" in partition_line(d) and where in partition_line(d)
            stats: list = []
            rows = list(S.match_partitioned(pg, q, engine=eng, strategy="auto", stats=stats))
            got = sorted(map(tuple, g.to_external(np.concatenate(rows)).tolist()))
            want = sorted(map(tuple, np.concatenate(list(wm.match(g, name))).tolist()))
            assert got == want and stats[0].strategy == "whole graph"
            assert "strategy: whole graph" in S.describe(pg, plan, None, "gpu", "count", eng,
                                                         "auto")
    plan = build_plan(g, wm.api.as_query("triangle", g))
    assert S.whole_graph_memory(pg, CpuEngine(), plan) is None      # host memory anyway
    assert S.whole_graph_memory(Partitioned.build(g, parts=1), eng, plan) is None
    monkeypatch.setattr(S, "WHOLE_GRAPH_CUT", share + 0.01)
    assert S.whole_graph_memory(pg, eng, plan) is None              # most edges inside
    assert "strategy: partitioned" in S.describe(pg, plan, None, "gpu", "count", eng, "auto")
    with pytest.raises(ValueError, match="strategy must be"):
        S.count_partitioned(pg, wm.api.as_query("triangle", g), strategy="whole")


def test_a_cut_made_on_the_fly_is_reused_while_it_serves(monkeypatch) -> None:
    """Later requests of the same graph reuse the part ids cut for an earlier one (METIS
    takes minutes at 10^8 edges) where they serve it: the same part count and method,
    parts that fit the budget; anything else cuts again. Answers do not change."""
    from warpmatch.engine.gpu.memory import device_graph_bytes
    from warpmatch.partition import choose as C
    # a graph no other test has cut
    h = Graph.from_networkx(nx.powerlaw_cluster_graph(300, 4, 0.3, seed=6))
    builds = []
    real = Partitioned.build

    def build(*a, **k):
        builds.append(k.get("parts"))
        return real(*a, **k)
    monkeypatch.setattr(Partitioned, "build", build)
    a = C.choose(h, None, partitions=4)
    b = C.choose(h, None, partitions=4)
    assert builds == [4] and np.array_equal(a.part, b.part) and b is not a
    assert wm.count(h, "diamond", partitions=4) == wm.count(h, "diamond")
    assert len(builds) == 1
    C.choose(h, None, partitions=3)                     # another count: cut again
    C.choose(h, None, partitions=3, method="bfs")       # another method: cut again
    assert builds == [4, 3, 3]
    need = device_graph_bytes(h)
    eng = C.with_budget(_FakeGpu(), need // 2)
    auto = C.choose(h, eng, memory_budget=need // 2)    # too big: cut for the budget
    assert auto is not None and len(builds) == 4
    again = C.choose(h, eng, memory_budget=need // 2)
    assert len(builds) == 4 and np.array_equal(again.part, auto.part)
    C.choose(h, eng, memory_budget=need // 5)           # parts too big for it: cut again
    assert len(builds) == 5
    C.choose(h, eng, memory_budget=int(need * 0.9))     # fits, but cut for under half
    assert len(builds) == 6
