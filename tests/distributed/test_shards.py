"""Shards partition a plan's search: the shards' counts and rows add up to the plan's,
for root ranges and for heavy roots split at depth 1. No cluster needed."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.distributed.shards import make_shards, shard_plan
from warpmatch.engine import get_engine
from warpmatch.plan import build_plan


def rows_of(engine, g, plan) -> list[tuple]:
    out = [np.asarray(b) for b in engine.match(g, plan)]
    return sorted(map(tuple, np.concatenate(out).tolist())) if out else []


UNDIRECTED = ["triangle", "square", "diamond", "tailed-triangle", "4-path", "a-b",
              "a:1-b, b-c:0, c-a"]
DIRECTED = ["a->b", "a->b, b->c, c->a", "a->b, a->c, b->c", "a:1->b, b->c, c->d"]


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), directed=st.booleans(), parts=st.integers(1, 40),
       which=st.integers(0, 100), mode=st.sampled_from(["embeddings", "subgraphs"]),
       induced=st.booleans(), hub=st.sampled_from([1.0, 4.0, 16.0]),
       deal=st.sampled_from([0, 1, 4]))
def test_shards_partition_the_search(seed, directed, parts, which, mode, induced, hub, deal):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    m = int(rng.integers(n, 4 * n))
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    # a hub, so that some roots are heavy enough to be split at depth 1
    src = np.concatenate([src, np.zeros(n, np.int64)])
    dst = np.concatenate([dst, np.arange(n)])
    g = wm.Graph.from_edges(src, dst, n=n, directed=directed, warn=False,
                            vertex_labels=rng.integers(0, 2, n))
    names = DIRECTED if directed else UNDIRECTED
    text = names[which % len(names)]
    q = wm.Query.parse(text) if "-" in text and text not in UNDIRECTED[:5] \
        else wm.get_pattern(text)
    eng = get_engine("cpu")
    for purpose in ("count", "list"):
        plan = build_plan(g, q, mode=mode, induced=induced, purpose=purpose)
        if plan.empty_reason is not None:
            continue
        shards = make_shards(g, plan, parts, hub=hub, deal=deal)
        whole = np.concatenate([plan.roots[:0]] + [s.root_ids(plan) for s in shards
                                                   if s.depth1 is None])
        split = {int(plan.roots[s.lo]) for s in shards if s.depth1 is not None}
        # every root in exactly one shard, or in the slices of its split shards only
        assert whole.size == np.unique(whole).size and not split & set(whole.tolist())
        assert set(whole.tolist()) | split == set(plan.roots.tolist())
        for s in shards:
            ids = s.root_ids(plan)
            assert ids.size == s.roots and np.all(np.diff(ids) > 0)
        if purpose == "count":
            assert sum(eng.count(g, shard_plan(plan, s)) for s in shards) == eng.count(g, plan)
        else:
            got = sorted(r for s in shards for r in rows_of(eng, g, shard_plan(plan, s)))
            assert got == rows_of(eng, g, plan)


def test_a_hub_is_split_at_depth_one_and_counts_stay_exact():
    g = wm.Graph.from_networkx(nx.star_graph(200))
    g2 = wm.Graph.from_edges(*zip(*[(0, i) for i in range(1, 201)]
                                  + [(i, i + 1) for i in range(1, 200)]))
    eng = get_engine("cpu")
    for graph in (g, g2):
        plan = build_plan(graph, wm.get_pattern("tailed-triangle"), purpose="count")
        shards = make_shards(graph, plan, 16)
        split = [s for s in shards if s.depth1 is not None]
        if plan.roots.size and int(np.diff(graph.indptr)[plan.roots].max()) > 50:
            assert len(split) >= 2            # the hub's subtree is cut into pieces
            finer = make_shards(graph, plan, 16, hub=8)
            assert sum(s.depth1 is not None for s in finer) > len(split)
            assert sum(eng.count(graph, shard_plan(plan, s)) for s in finer) == \
                eng.count(graph, plan)
        assert sum(eng.count(graph, shard_plan(plan, s)) for s in shards) == \
            eng.count(graph, plan)


def test_depth_one_slices_are_even_by_degree_and_cover_the_neighbours():
    # vertex 0 joined to 1..100; 1 and 2 are hubs (each joined to 101..400); the rest
    # are leaves. Equal counts would put both hubs in the first slice.
    from warpmatch.distributed.shards import _slices
    edges = [(0, i) for i in range(1, 101)] + [(h, j) for h in (1, 2) for j in range(101, 401)]
    g = wm.Graph.from_edges(*zip(*edges))
    uni = np.arange(1, 101)
    pieces = _slices(g, uni, 4)
    assert np.array_equal(np.concatenate([p for p, _ in pieces]), uni)
    assert all(p.size for p, _ in pieces) and len(pieces) <= 4
    assert abs(sum(f for _, f in pieces) - 1.0) < 1e-9
    assert pieces[0][0].tolist() == [1]                 # a hub's slice holds it alone
    assert 2 in pieces[1][0].tolist() and 1 not in pieces[1][0].tolist()
    assert len(_slices(g, uni[:3], 10)) <= 3            # never an empty slice


def test_the_costliest_roots_are_dealt_into_groups_of_their_own():
    # a power-law graph renumbered so that its hubs are its lowest ids: cut in root
    # order, a few shards hold all of them; dealt, they form groups of their own
    from warpmatch.distributed.shards import root_costs
    g = wm.Graph.from_networkx(nx.barabasi_albert_graph(3000, 3, seed=2))
    rank = np.argsort(np.argsort(-np.diff(g.indptr), kind="stable"))
    src, dst = np.repeat(np.arange(g.n), np.diff(g.indptr)), g.indices
    g = wm.Graph.from_edges(rank[src[src < dst]], rank[dst[src < dst]], n=g.n)
    plan = build_plan(g, wm.get_pattern("square"), purpose="count")
    cost = root_costs(g, plan)
    light = np.flatnonzero(cost <= cost.sum() / 32)   # the heaviest are split apart
    ranked = light[np.argsort(-cost[light], kind="stable")[:32]]
    top = set(ranked.tolist())                                     # root indices
    plain = make_shards(g, plan, 32, deal=0)
    assert max(len(top & set(range(s.lo, s.hi))) for s in plain) >= 5
    dealt = make_shards(g, plan, 32, deal=4)            # 8 groups of 4 hubs
    groups = [s for s in dealt if s.add]
    assert [len(s.add) for s in groups] == [4] * 8 and all(s.lo == s.hi for s in groups)
    assert set().union(*(s.add for s in groups)) == top
    # forth, then back: the costliest hub and the 16th, 17th and 32nd share a group
    rank = {r: i for i, r in enumerate(ranked.tolist())}
    assert sorted(rank[r] for r in groups[0].add) == [0, 15, 16, 31]
    assert not any(set(s.add) & set(range(s.lo, s.hi)) - set(s.skip) for s in dealt)
    eng = get_engine("cpu")
    assert sum(eng.count(g, shard_plan(plan, s)) for s in dealt) == eng.count(g, plan)


@pytest.mark.parametrize("block", [1, 3, 16])
def test_the_cut_does_not_depend_on_the_block_size(monkeypatch, block):
    """``make_shards`` skips whole blocks of roots by their sums and maxima; the cut
    must be the one a root-by-root pass makes (integer estimates: the sums are exact)."""
    from warpmatch.distributed import shards as S
    g = wm.Graph.from_networkx(nx.barabasi_albert_graph(2000, 2, seed=4))
    for pattern, parts, hub, deal in [("square", 32, 1.0, 4), ("triangle", 7, 4.0, 2),
                                      ("tailed-triangle", 100, 1.0, 0), ("4-path", 3, 16.0, 8)]:
        plan = build_plan(g, wm.get_pattern(pattern), purpose="count")
        monkeypatch.setattr(S, "_BLOCK", 1 << 30)
        whole = make_shards(g, plan, parts, hub=hub, deal=deal)
        monkeypatch.setattr(S, "_BLOCK", block)
        blocked = make_shards(g, plan, parts, hub=hub, deal=deal)
        key = [(x.lo, x.hi, x.add, x.skip, x.cost,
                None if x.depth1 is None else x.depth1.tolist()) for x in whole]
        assert key == [(x.lo, x.hi, x.add, x.skip, x.cost,
                        None if x.depth1 is None else x.depth1.tolist()) for x in blocked]
        ids = np.concatenate([x.root_ids(plan) for x in whole if x.depth1 is None])
        assert ids.size == np.unique(ids).size


def test_default_shards():
    from warpmatch.distributed.shards import MIN_SHARDS, SHARDS_PER_WORKER, default_shards
    assert default_shards(1) == MIN_SHARDS
    assert default_shards(64) == 64 * SHARDS_PER_WORKER


def test_no_roots_no_shards():
    g = wm.Graph.from_edges([0], [1], vertex_labels=[0, 0])
    plan = build_plan(g, wm.Query.parse("a:0-b:0, b-c:0, c-a"), purpose="count")
    assert make_shards(g, plan, 4) == []                   # the planner proved 0
    no_roots = plan.with_candidates({0: plan.roots[:0]})
    assert make_shards(g, no_roots, 4) == []


@pytest.mark.parametrize("parts", [1, 3, 1000])
def test_shard_count_follows_the_request(parts):
    g = wm.Graph.from_networkx(nx.gnm_random_graph(200, 800, seed=1))
    plan = build_plan(g, wm.get_pattern("triangle"), purpose="count")
    shards = make_shards(g, plan, parts)
    assert [s.index for s in shards] == list(range(len(shards)))
    assert 1 <= len(shards) <= max(parts, 1) * 2 + 5
    if parts == 1:
        assert len(shards) <= 3


def test_a_worker_keeps_its_graph_while_plans_come_and_go(tmp_path):
    """Each query ships a new plan file; the worker's cache must not drop the graph for
    them (a reloaded graph is a new object, which the GPU engine would upload again)."""
    import pickle

    from warpmatch.distributed import graphs as G
    path = tmp_path / "g.wmg"
    wm.write_graph(wm.Graph.from_edges([0, 1, 2], [1, 2, 0], n=3), path)
    handle = G.GraphFile.of(path)
    first = G.worker_graph(handle)
    for i in range(3 * G.OBJECT_CACHE_SIZE):
        p = tmp_path / f"plan{i}.pickle"
        p.write_bytes(pickle.dumps({"plan": i}))
        assert G.worker_object(G.PickleFile.of(p)) == {"plan": i}
    assert G.worker_graph(handle) is first
    assert len(G._OBJECTS) <= G.OBJECT_CACHE_SIZE


def test_a_shard_runs_a_gpu_engine_set_for_short_searches():
    """A shard's GPU engine gives each DFS launch the rest of the pool
    (``launches="pool"``), on a copy: the worker's engine is not changed. Other engines
    are used as they are. (The engine's object needs no GPU; the launches themselves are
    tested in tests/gpu/test_gpu_engine.py.)"""
    from warpmatch.distributed.static import _shard_engine
    from warpmatch.engine.gpu import GpuEngine
    gpu = GpuEngine(pool_threshold=1234)
    shard = _shard_engine(gpu)
    assert shard is not gpu and shard.launches == "pool" and gpu.launches == "sliced"
    assert shard.pool_threshold == 1234
    assert _shard_engine(shard) is shard
    cpu = get_engine("cpu")
    assert _shard_engine(cpu) is cpu
    with pytest.raises(ValueError, match="launches must be one of"):
        GpuEngine(launches="whole")
