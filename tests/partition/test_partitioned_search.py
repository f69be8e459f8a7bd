"""Partitioned counting and listing (PBE) equal the in-memory engine in every mode.

- Random graphs (hypothesis): directed or not, vertex and edge labels, induced,
  both modes, anchors, P in {1, 2, 4, 8}, METIS and BFS parts: counts and the
  sorted listed rows equal the in-memory engine's (and the reference engine runs
  rule 8 the same way as the CPU engine).
- Every connected 3-5-vertex query of networkx's atlas on a random graph.
- Real data: yeast (labeled) and wiki-Vote (directed), when ../shared/data is here.
- An independent check of the inter-partition part: the matches that use a cut
  edge are what a ContinuousMatcher reports when the cut edges are inserted one
  by one into the graph without them.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.engine.cpu import CpuEngine
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.graph.csr import Graph
from warpmatch.partition import Partitioned, count_partitioned, match_partitioned
from warpmatch.partition.split import PartitionWarning
from warpmatch.query.model import Query
from warpmatch.query.sample import random_walk_query

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_helpers import LEAFY, graphs, leafy_inter_case, queries  # noqa: E402
from engine_helpers import sorted_rows as _rows  # noqa: E402

CPU = CpuEngine()
REF = ReferenceEngine()
pytestmark = [pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning"),
              pytest.mark.filterwarnings("ignore::warpmatch.partition.PartitionWarning")]
SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(g: Graph, q: Query, pg: Partitioned, mode: str, induced: bool,
           anchors: dict | None = None, listing: bool = True) -> None:
    want = wm.count(g, q, mode=mode, induced=induced, anchors=anchors, backend="cpu")
    got, stats, complete = count_partitioned(pg, q, mode, induced, anchors, engine=CPU)
    assert complete and got == want, (got, want, stats)
    assert stats.intra + stats.inter == got
    if not listing:
        return
    ref, _, _ = count_partitioned(pg, q, mode, induced, anchors, engine=REF)
    assert ref == want
    mem = _rows(wm.match(g, q, mode=mode, induced=induced, anchors=anchors, backend="cpu"),
                q.k)
    par = _rows(match_partitioned(pg, q, mode, induced, anchors, engine=CPU, batch_size=7),
                q.k)
    assert len(par) == len(set(par)), "a match is listed twice"
    assert par == mem


@SETTINGS
@given(data=st.data())
def test_partitioned_equals_in_memory(data) -> None:
    g = data.draw(graphs(nmax=20))
    q = data.draw(queries(g, 2, 5))
    parts = min(g.n, data.draw(st.sampled_from([1, 2, 4, 8])))
    method = data.draw(st.sampled_from(["metis", "bfs"]))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    pg = Partitioned.build(g, parts=parts, method=method)
    _check(g, q, pg, mode, induced)


@SETTINGS
@given(data=st.data())
def test_partitioned_with_anchors(data) -> None:
    g = data.draw(graphs(nmax=16, labels=False, edge_labels=False))
    q = data.draw(queries(g, 3, 5))
    u = data.draw(st.integers(0, q.k - 1))
    ids = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=5, unique=True))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    pg = Partitioned.build(g, parts=min(g.n, data.draw(st.sampled_from([2, 4, 8]))))
    _check(g, q, pg, mode, False, anchors={u: ids})


def _atlas_queries() -> list[Query]:
    out = []
    for G in nx.graph_atlas_g():
        if 3 <= G.number_of_nodes() <= 5 and nx.is_connected(G):
            out.append(Query.from_edges(list(G.edges()), k=G.number_of_nodes()))
    return out


@pytest.mark.parametrize("parts", [1, 2, 4, 8])
def test_every_small_connected_query(parts: int) -> None:
    g = Graph.from_networkx(nx.gnm_random_graph(40, 130, seed=parts))
    pg = Partitioned.build(g, parts=parts)
    qs = _atlas_queries()
    assert len(qs) == 29
    for q in qs:
        for mode in ("embeddings", "subgraphs"):
            _check(g, q, pg, mode, False, listing=False)
        _check(g, q, pg, "subgraphs", True, listing=False)


def test_embeddings_listing_expands_a_shared_search_by_every_automorphism() -> None:
    g = Graph.from_networkx(nx.gnm_random_graph(30, 120, seed=3))
    pg = Partitioned.build(g, parts=4)
    for name in ("4-clique", "square", "house"):
        q = wm.api.as_query(name, g)
        _check(g, q, pg, "embeddings", False)


# ------------------------------------------------------------------ real data
def _data(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    return path


def test_yeast_labeled_queries(data_dir: Path) -> None:
    root = _data(data_dir / "labeled" / "yeast")
    g = wm.read_graph(str(root / "yeast.graph"))
    pg = Partitioned.build(g, parts=4)
    qs = [random_walk_query(g, k, density, seed=s)
          for s, (k, density) in enumerate([(4, "dense"), (6, "sparse"), (8, "dense")])]
    qs.append(wm.api.as_query(str(root / "query_graph" / "query_dense_16_1.graph"), g))
    for q in qs:
        _check(g, q, pg, "embeddings", False, listing=False)
    _check(g, qs[1], pg, "subgraphs", True)


def test_wiki_vote_directed(data_dir: Path) -> None:
    path = _data(data_dir / "snap" / "wiki-Vote.txt")
    g = wm.read_graph(str(path), directed=True)
    pg = Partitioned.build(g, parts=8)
    for dsl in ("a->b, b->c, a->c", "a->b, b->a, b->c"):
        q = wm.api.as_query(dsl, g)
        _check(g, q, pg, "embeddings", False, listing=False)


# ---------------------------------------------------- independent inter check
@pytest.mark.parametrize("directed", [False, True])
def test_inter_matches_are_what_inserting_the_cut_edges_reports(directed: bool) -> None:
    """The inter-partition count is the sum of a continuous matcher's positive deltas
    when the cut edges go into the graph without them, one by one (in any order)."""
    rng = np.random.default_rng(7)
    n, m = 40, 160
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    g = Graph.from_edges(src, dst, n=n, directed=directed, warn=False)
    pg = Partitioned.build(g, parts=4)
    a, b = g.edges()
    cut = pg.part[a] != pg.part[b]
    if not directed:
        keep = a < b
        a, b, cut = a[keep], b[keep], cut[keep]
    g0 = Graph.from_edges(a[~cut], b[~cut], n=n, directed=directed, warn=False)
    for dsl in (["a->b, b->c, c->a", "a->b, b->c, a->c, c->d"] if directed
                else ["triangle", "square", "diamond", "tailed-triangle"]):
        q = wm.api.as_query(dsl, g)
        cm = wm.ContinuousMatcher(g0, q, backend="cpu")
        ups = (a[cut].astype(np.int64), b[cut].astype(np.int64),
               np.ones(int(cut.sum()), np.int8))
        plus = sum(int(d.added) for d in cm.apply_batches(ups, batch_size=17,
                                                                counts_only=True))
        _, stats, _ = count_partitioned(pg, q, engine=CPU)
        assert stats.inter == plus, (dsl, stats.inter, plus)
        assert stats.intra == wm.count(g0, q, backend="cpu")


# ------------------------------------------------------------------ fallback
def test_bfs_fallback_warns_without_pymetis(monkeypatch) -> None:
    import builtins
    real = builtins.__import__

    def no_metis(name, *args, **kwargs):
        if name == "pymetis":
            raise ImportError("no pymetis here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_metis)
    g = Graph.from_networkx(nx.gnm_random_graph(30, 90, seed=1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        pg = Partitioned.build(g, parts=3)
    assert pg.method == "bfs"
    assert any(issubclass(x.category, PartitionWarning) and "pymetis" in str(x.message)
               for x in w)
    _check(g, wm.api.as_query("diamond", g), pg, "embeddings", False)


def test_unshared_inter_searches_give_the_same_count() -> None:
    g = Graph.from_networkx(nx.gnm_random_graph(40, 160, seed=9))
    pg = Partitioned.build(g, parts=4)
    for name in ("triangle", "square", "diamond", "house", "4-clique"):
        q = wm.api.as_query(name, g)
        for mode in ("embeddings", "subgraphs"):
            a, sa, _ = count_partitioned(pg, q, mode, engine=CPU)
            b, sb, _ = count_partitioned(pg, q, mode, engine=CPU, share=False)
            assert a == b and sa.inter == sb.inter
            assert sb.inter_searches == q.m >= sa.inter_searches


@SETTINGS
@given(data=st.data())
def test_local_plans_split_every_candidate_set_by_part(data) -> None:
    """local_plans (one threaded pass per distinct set) gives each part its ids filtered
    and renamed one part at a time (the implementation it replaced), and the inter roots
    are the boundary vertices of the prime vertex's candidates."""
    from warpmatch.partition.plans import _roots, local_plans
    from warpmatch.plan import build_plan

    def local_plan(plan, part, local, p):
        k = plan.k
        slices = []
        for d in range(k):
            ids = plan.cand_ids[plan.cand_ptr[d]:plan.cand_ptr[d + 1]]
            if plan.cand_restricted[d] and ids.size:
                ids = local[ids[part[ids] == p]]
            slices.append(np.asarray(ids, dtype=plan.cand_ids.dtype))
        ptr = np.zeros(k + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([x.size for x in slices])
        return ptr, np.concatenate(slices)

    g = data.draw(graphs(nmax=24))
    q = data.draw(queries(g, 2, 5))
    pg = Partitioned.build(g, parts=min(g.n, data.draw(st.sampled_from([1, 2, 4, 8]))))
    anchors = None
    if data.draw(st.booleans()):
        ids = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=6, unique=True))
        anchors = {data.draw(st.integers(0, q.k - 1)): ids}
    plan = build_plan(g, q, anchors=anchors)
    # threads' chunks: fewer and more than a set's ids, and the default
    every = local_plans(plan, pg.part, pg.local, pg.parts,
                        data.draw(st.sampled_from([None, 1, 3, 64])))
    assert len(every) == pg.parts
    for p, lp in enumerate(every):
        ptr, ids = local_plan(plan, pg.part, pg.local, p)
        assert np.array_equal(lp.cand_ptr, ptr)
        assert np.array_equal(lp.cand_ids, ids)
        assert lp.cand_ids.dtype == ids.dtype
    for u in range(q.k):
        d = int(plan.inverse_order[u])
        if plan.cand_restricted[d]:
            ids = plan.cand_ids[plan.cand_ptr[d]:plan.cand_ptr[d + 1]]
            assert np.array_equal(_roots(g, plan, u, pg.on_boundary),
                                  np.intersect1d(ids, pg.boundary))


@SETTINGS
@given(data=st.data())
def test_inter_plans_drop_a_root_set_only_where_it_is_the_ldf_set(data) -> None:
    """An inter search does not carry the in-memory plan's root set to a later depth when
    that set is exactly the label-and-degree set (checked at every depth anyway): the
    same raw counts as with the set kept; any other set (anchors, NLF) is kept."""
    import pytest as _pytest

    from warpmatch.partition import plans as P
    from warpmatch.plan import build_plan
    from warpmatch.plan.filter import ldf_mask
    g = data.draw(graphs(nmax=20))
    q = data.draw(queries(g, 2, 5))
    pg = Partitioned.build(g, parts=min(g.n, data.draw(st.sampled_from([2, 4]))))
    anchors = None
    if data.draw(st.booleans()):
        ids = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=4, unique=True))
        anchors = {data.draw(st.integers(0, q.k - 1)): ids}
    plan = build_plan(g, q, anchors=anchors, purpose="count")
    if plan.empty_reason is not None or plan.k < 2:
        return
    colors = wm.plan.build.anchor_colors(g, q, anchors)
    loose = P.inter_searches(g, plan, pg.part, pg.boundary, colors, "count")
    with _pytest.MonkeyPatch.context() as mp:
        mp.setattr(P, "_loosen_roots", lambda graph, p: p)
        kept = P.inter_searches(g, plan, pg.part, pg.boundary, colors, "count")
    assert [CPU.count(g, s.plan) for s in loose] == [CPU.count(g, s.plan) for s in kept]
    d0 = set(plan.cand_ids[plan.cand_ptr[0]:plan.cand_ptr[1]].tolist())
    ldf = set(np.flatnonzero(ldf_mask(g, q, int(plan.order[0]))).tolist())
    assert (P._loosen_roots(g, plan) is plan) == (d0 != ldf)


# ------------------------------------------------ leaves under rule 8 (cut graph)
def _without_cut_graph(plan):
    import dataclasses
    return dataclasses.replace(plan, cut_graph=None)


@SETTINGS
@given(data=st.data())
def test_inter_searches_count_leaves_from_the_cut_lists(data) -> None:
    """Every inter search counts the same with the cut graph (a last plain leaf counted
    from the cut neighbours' lists; a prime edge at a leaf matched last, rule 8 at that
    depth) as without it (every candidate checked) and as the reference engine; a leaf
    end of a prime edge is matched last exactly where the leaf is counted from a list."""
    from warpmatch.partition import plans as P
    from warpmatch.plan.build import anchor_colors
    from warpmatch.plan.leaves import bare_last_leaf
    case = leafy_inter_case(data)
    if case is None:
        return
    g, q, anchors, pg, plan, searches = case
    plain = P.inter_searches(g, plan, pg.part, pg.boundary, anchor_colors(g, q, anchors),
                             "count")
    labels = (g.vertex_labels is not None, g.edge_labels is not None)
    assert sum(s.weight * CPU.count(g, s.plan) for s in searches) == \
        sum(s.weight * CPU.count(g, s.plan) for s in plain)
    for s in searches:
        raw = CPU.count(g, s.plan)
        assert raw == CPU.count(g, _without_cut_graph(s.plan)) == REF.count(g, s.plan)
        a, b = s.edges[0]
        leaf = P.leaf_of(q, a, b)
        if s.plan.cut_depth > 1:
            assert s.plan.cut_depth == q.k - 1 and leaf is not None
            assert bare_last_leaf(s.plan, *labels)
            assert int(s.plan.order[-1]) == leaf and int(s.plan.order[0]) in (a, b)
        elif leaf is not None and not labels[0] and not labels[1] and anchors is None:
            assert False, f"prime edge {a, b} ends at leaf {leaf}, not matched last"


@pytest.mark.parametrize("directed", [False, True])
def test_leafy_queries_on_a_hub_graph(directed: bool) -> None:
    """Leaves at hubs (a power-law graph cut in 4, its boundary vertices' cut edges
    spread past LEAF_LAST_SPREAD): partitioned counts equal the in-memory ones, and every
    search whose prime edge ends at a leaf matches it last; on a graph of two cliques
    joined by one edge (a spread of 1) none does."""
    from warpmatch.partition import plans as P
    G = nx.barabasi_albert_graph(400, 4, seed=4)
    edges = list(G.edges())
    if directed:
        rng = np.random.default_rng(2)
        edges = [(a, b) if rng.random() < 0.5 else (b, a) for a, b in edges]
    g = Graph.from_edges(*zip(*edges), n=400, directed=directed, warn=False)
    pg = Partitioned.build(g, parts=4)
    assert P.cut_spread(g, pg.cut_graph, pg.on_boundary) >= P.LEAF_LAST_SPREAD
    dsls = (["a->b, b->c, c->a, c->d", "a->b, b->c, c->d", "a->b, c->b, d->b",
             "a->b, b->c, c->a, d->a"] if directed else LEAFY)
    for dsl in dsls:
        q = wm.api.as_query(dsl, g)
        _check(g, q, pg, "embeddings", False, listing=False)
        plan = wm.plan.build_plan(g, q, purpose="count")
        for s in P.inter_searches(g, plan, pg.part, pg.boundary, None, "count",
                                  cut_graph=pg.cut_graph):
            leafy = any(P.leaf_of(q, a, b) is not None for a, b in s.edges)
            assert (s.plan.cut_depth == q.k - 1) == leafy, (dsl, s.edges)
    two = nx.disjoint_union(nx.complete_graph(8), nx.complete_graph(8))
    two.add_edge(0, 8)
    g2 = Graph.from_networkx(two)
    pg2 = Partitioned(g2, np.repeat(np.arange(2, dtype=np.int32), 8))
    assert P.cut_spread(g2, pg2.cut_graph, pg2.on_boundary) == 1.0
    q = wm.api.as_query("tailed-triangle", g2)
    plan = wm.plan.build_plan(g2, q, purpose="count")
    searches = P.inter_searches(g2, plan, pg2.part, pg2.boundary, None, "count",
                                cut_graph=pg2.cut_graph)
    assert all(s.plan.cut_depth == 1 for s in searches)
    _check(g2, q, pg2, "embeddings", False, listing=False)


def test_the_bench_intra_breakdown_runs_the_count_s_own_steps() -> None:
    """bench/partition.py --breakdown times the intra phase with count_partitioned's own
    steps: its parts' raw counts add up to the count's intra matches."""
    import importlib.util

    from warpmatch.plan import build_plan
    bench = Path(__file__).resolve().parents[2] / "bench"
    sys.path.insert(0, str(bench))
    try:
        spec = importlib.util.spec_from_file_location("bench_partition",
                                                      bench / "partition.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(bench))
    g = Graph.from_networkx(nx.powerlaw_cluster_graph(400, 4, 0.3, seed=3))
    pg = Partitioned.build(g, parts=4)
    for name in ("triangle", "diamond", "tailed-triangle"):
        q = wm.api.as_query(name, g)
        plan = build_plan(g, q)
        bd = mod.intra_breakdown(pg, plan, CpuEngine())
        _, st, _ = count_partitioned(pg, q, engine=CpuEngine(), plan=plan)
        assert len(bd["parts"]) == pg.parts and bd["split_s"] >= 0
        assert sum(r.get("raw", 0) for r in bd["parts"]) * plan.multiplier == st.intra
