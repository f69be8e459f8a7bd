"""GPU delta engine (GCSM) == CPU delta engine, for every cache policy.

Needs CuPy and a CUDA device (``tests/conftest.py`` skips otherwise). Views
are built from static graphs (``stream.gpu._testing``, storage in pinned or
pageable memory) and by :class:`~warpmatch.stream.dynamic.DynamicGraph` over
several batches, so that host-memory registration, the device mirror's
refresh and the cache's slot maps are exercised across batches.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cupy", reason="the GPU delta engine needs CuPy")
pytestmark = pytest.mark.gpu

from warpmatch.graph.csr import Graph  # noqa: E402
from warpmatch.graph.generators import barabasi_albert  # noqa: E402
from warpmatch.query.model import Query  # noqa: E402
from warpmatch.stream.cpu import CpuDeltaEngine  # noqa: E402
from warpmatch.stream.delta import compile_delta_plans  # noqa: E402
from warpmatch.stream.gpu import POLICIES, GpuDeltaEngine, pinned_allocator  # noqa: E402
from warpmatch.stream.gpu._testing import view_from_graph  # noqa: E402
from warpmatch.stream.gpu.cache import row_bytes, row_capacity  # noqa: E402
from warpmatch.stream.gpu.walk import exact_access  # noqa: E402


def _engine(**kw) -> GpuDeltaEngine:
    eng = GpuDeltaEngine(**kw)
    ok, why = eng.available()
    if not ok:
        pytest.skip(why)
    return eng


def _edges(g: Graph) -> np.ndarray:
    s = np.repeat(np.arange(g.n), np.diff(g.indptr))
    e = np.stack([s, g.indices]).T
    return e if g.directed else e[e[:, 0] < e[:, 1]]


def _batch(g: Graph, rng: np.random.Generator, size: int, labels: int = 0):
    E = _edges(g)
    s, d, o = [], [], []
    for _ in range(size):
        if rng.random() < 0.5 or len(E) == 0:
            a, b = rng.integers(g.n, size=2)
            o.append(1)
        else:
            a, b = E[rng.integers(len(E))]
            if not g.directed and rng.random() < 0.5:
                a, b = b, a
            o.append(-1)
        s.append(int(a))
        d.append(int(b))
    # some repeats of earlier updates: insert-then-delete inside the batch, invalid ones
    for i in rng.integers(len(s), size=size // 8):
        s.append(s[i]); d.append(d[i]); o.append(-o[i])
    lab = rng.integers(labels, size=len(s)) if labels else None
    return np.array(s), np.array(d), np.array(o), lab


def _rows(raw, k):
    if raw.matches is None:
        return []
    return sorted(zip(raw.match_update.tolist(), raw.match_sign.tolist(),
                      map(tuple, raw.matches.reshape(-1, k).tolist())))


def _same(gpu, cpu, k, lists):
    assert np.array_equal(gpu.plus_counts, cpu.plus_counts)
    assert np.array_equal(gpu.minus_counts, cpu.minus_counts)
    if lists:
        assert np.all(np.diff(gpu.match_update) >= 0)      # grouped by update
        assert _rows(gpu, k) == _rows(cpu, k)


#: every policy, plus the host-side (GCSM walk) estimator, a full-rate device sample and
#: sub-tasks cut to single depth-2 candidates where the batch is small (``split``)
VARIANTS = [(p, {}) for p in POLICIES] + [
    ("random-walk", {"estimator": "cpu"}),
    ("random-walk", {"sample_rate": 1.0, "continue_rate": 1.0}),
    ("device", {"split": True}),
    ("random-walk", {"split": True}),
]


GRAPHS = {
    "ba": lambda: barabasi_albert(300, 5, seed=2),
    "labeled": lambda: Graph.from_edges(*np.random.default_rng(5).integers(120, size=(2, 900)),
                                        n=120,
                                        vertex_labels=np.random.default_rng(6).integers(3, size=120),
                                        edge_labels=np.random.default_rng(7).integers(2, size=900),
                                        warn=False),
    "directed": lambda: Graph.from_edges(*np.random.default_rng(8).integers(100, size=(2, 900)),
                                         n=100, directed=True,
                                         vertex_labels=np.random.default_rng(9).integers(2, size=100),
                                         warn=False),
}
QUERIES = {
    "ba": ["a-b", "a-b, b-c, c-a", "a-b, b-c, c-d, d-a", "a-b, b-c, c-d, d-a, a-c, b-d",
           "a-b, b-c, c-d, d-e, e-a"],
    "labeled": ["a-b, b-c, c-a", "a:1-b:2, b-c, c-a", "a-b, b-c, c-d"],
    "directed": ["a->b", "a->b, b->c, c->a", "a->b, b->c, a->c, c->d", "a->b, b->a, b->c"],
}
CASES = [(g, q, ind) for g, qs in QUERIES.items() for q in qs for ind in (False, True)]


@pytest.fixture(scope="module")
def graphs():
    return {name: f() for name, f in GRAPHS.items()}


@pytest.mark.parametrize("gname,text,induced", CASES)
def test_gpu_equals_cpu_every_policy(graphs, gname, text, induced):
    g = graphs[gname]
    rng = np.random.default_rng(hash((gname, text, induced)) % 2**32)
    q = Query.parse(text)
    labeled = g.edge_labels is not None
    s, d, o, lab = _batch(g, rng, 48, labels=2 if labeled else 0)
    view = view_from_graph(g, s, d, o, lab, allocator=pinned_allocator())
    cpu = CpuDeltaEngine(threads=2)
    for mode in ("embeddings", "subgraphs"):
        for purpose in ("count", "list"):
            plans = compile_delta_plans(q, mode=mode, induced=induced, purpose=purpose,
                                        directed=g.directed, has_edge_labels=labeled)
            want = purpose == "list"
            ref = cpu.run(view, plans, want)
            for policy, kw in VARIANTS:
                eng = _engine(cache=policy, cache_fraction=0.3, seed=1, **kw)
                eng.attach(None)
                got = eng.run(view, plans, want)
                _same(got, ref, q.k, want)


def test_pageable_storage_is_registered(graphs):
    g = graphs["ba"]
    rng = np.random.default_rng(1)
    s, d, o, _ = _batch(g, rng, 64)
    view = view_from_graph(g, s, d, o)          # numpy memory: the engine registers it
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-d, d-a"))
    ref = CpuDeltaEngine().run(view, plans, False)
    eng = _engine(cache="none")
    got = eng.run(view, plans, False)
    _same(got, ref, 4, False)
    assert eng.stats["host_bytes"] > 0 and eng.stats["rows_cache"] == 0


def _square_batch(g: Graph, seed: int):
    """64 random updates on ``g`` (pinned storage), the 4-cycle's delta plans, and the
    exact traversal of that batch (row reads per vertex, raw matches per update)."""
    s, d, o, _ = _batch(g, np.random.default_rng(seed), 64)
    view = view_from_graph(g, s, d, o, allocator=pinned_allocator())
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-d, d-a"))
    true, per = exact_access(view, plans)
    return view, plans, true, per


def test_counters_and_profile_match_the_exact_traversal(graphs):
    view, plans, true, per = _square_batch(graphs["ba"], 3)
    stats = {}
    for policy in POLICIES:
        # a full sample: this checks the cache machinery, not the default sampling rates
        eng = _engine(cache=policy, cache_fraction=1.0, profile=True, sample_rate=1.0,
                      continue_rate=1.0)
        got = eng.run(view, plans, False)
        assert np.array_equal(got.plus_counts, per[:, 0])
        # the device's row reads are exactly the traversal's for the rows this policy
        # cached (same choices of row: wm_edge's rule depends on where rows are), of
        # the plans the kernel runs on the updates the engine's filter kept
        want = exact_access(view, eng.effective_plans(plans),
                            cached=None if policy == "none" else eng.last_cached,
                            host_storage=policy != "device", updates=eng.last_updates,
                            masks=eng.last_masks)[0]
        assert np.array_equal(eng.last_access, want.astype(np.int64))
        stats[policy] = dict(eng.stats)
    assert stats["none"]["rows_cache"] == 0 and stats["none"]["host_bytes"] > 0
    assert stats["device"]["host_bytes"] == 0 and stats["device"]["rows_host"] == 0
    # a cache as large as the graph: every untouched row the walks saw comes from it
    assert stats["degree"]["host_bytes"] == 0 or stats["degree"]["cache_hit_rate"] > 0.99
    assert stats["random-walk"]["cache_hit_rate"] > 0.5
    assert stats["random-walk"]["host_bytes"] < stats["none"]["host_bytes"]
    total = {p: stats[p]["rows_host"] + stats[p]["rows_cache"] + stats[p]["rows_overlay"]
             + stats[p]["rows_device_storage"] for p in POLICIES}
    assert len(set(total.values())) == 1


def test_gpu_sample_estimates_row_reads(graphs):
    """The sampling kernel at rate 1 credits exactly what the traversal's model of it
    does (``exact_access(for_cache=True)``: storage rows only, a search to both of its
    storage rows, the last level by look-ahead); at lower rates its Horvitz-Thompson
    estimate is unbiased (mean over seeds near the truth)."""
    view, plans, _, _ = _square_batch(graphs["ba"], 4)
    eng = _engine(cache="random-walk", sample_rate=1.0, continue_rate=1.0, estimate_decay=0.0)
    eng.run(view, plans, False)
    true, _ = exact_access(view, eng.effective_plans(plans), for_cache=True,
                           updates=eng.last_updates, masks=eng.last_masks)
    est = eng._dev.est.get()[: true.size]
    assert np.array_equal(est, true.astype(np.float32))
    runs = []
    # seeds 0..47: independent samples only if the engine hashes its seed (_mix64);
    # with seed * golden as the coins' offset they were shifted copies of each other
    for seed in range(48):
        eng = _engine(cache="random-walk", sample_rate=0.5, continue_rate=0.5,
                      estimate_decay=0.0, seed=seed)
        eng.run(view, plans, False)
        runs.append(eng._dev.est.get()[: true.size].astype(np.float64))
    mean = np.mean(runs, axis=0)
    assert abs(mean.sum() / true.sum() - 1) < 0.1
    top = np.argsort(-true)[:10]              # the most-read rows, estimated closely
    assert np.all(np.abs(mean[top] / true[top] - 1) < 0.35)
    assert not np.array_equal(runs[0], runs[1])   # the seed matters


def _stream_case(directed: bool):
    rng = np.random.default_rng(21)
    if directed:
        g = Graph.from_edges(*rng.integers(150, size=(2, 1500)), n=150, directed=True,
                             warn=False)
        q = "a->b, b->c, c->a"
    else:
        g = barabasi_albert(400, 6, seed=4)
        q = "a-b, b-c, c-d, d-a"
    return g, Query.parse(q), rng


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("policy,kw", VARIANTS)
def test_dynamic_graph_stream(directed, policy, kw):
    dyn = pytest.importorskip("warpmatch.stream.dynamic")
    from warpmatch.stream.types import Updates
    g, q, rng = _stream_case(directed)
    eng = _engine(cache=policy, cache_fraction=0.2, **kw)
    dg_gpu = dyn.DynamicGraph(g, slack=0.0, allocator=eng.allocator)   # rows move and grow
    dg_cpu = dyn.DynamicGraph(g, slack=0.0)
    eng.attach(dg_gpu)
    cpu = CpuDeltaEngine()
    plans = compile_delta_plans(q, purpose="list")
    cur = g
    for step in range(6):
        s, d, o, _ = _batch(cur, rng, 40)
        ups = Updates(s.astype(np.int64), d.astype(np.int64), o.astype(np.int8))
        b1 = dg_gpu.prepare(ups, on_invalid="skip")
        b2 = dg_cpu.prepare(ups, on_invalid="skip")
        got = eng.run(dg_gpu.view(b1), plans, True)
        ref = cpu.run(dg_cpu.view(b2), plans, True)
        _same(got, ref, q.k, True)
        dg_gpu.apply(b1)
        dg_cpu.apply(b2)
        cur = dg_cpu.snapshot()
    assert eng.totals["batches"] == 6


@pytest.mark.parametrize("policy", ["degree", "random-walk", "device"])
def test_device_copies_follow_the_storage_across_batches(policy):
    """The cache copies the rows it keeps from its previous self on the device and reads
    from host memory only rows new to it or rewritten by the last batch (the mirror of
    policy "device" re-reads just those); a random-walk cache whose estimate costs more
    than ``estimate_share`` of the kernel keeps its rows between samples while the
    batches read much the same rows (here: every batch updates edges among the same
    40 vertices); counts stay the CPU engine's throughout."""
    dyn = pytest.importorskip("warpmatch.stream.dynamic")
    from warpmatch.stream.types import Updates
    g = barabasi_albert(2000, 6, seed=5)
    q = Query.parse("a-b, b-c, c-d, d-a")
    rng = np.random.default_rng(8)
    kw = {"estimate_share": 1e-9} if policy == "random-walk" else {}
    eng = _engine(cache=policy, cache_fraction=0.3, **kw)
    dg_gpu = dyn.DynamicGraph(g, allocator=eng.allocator)     # default slack: rows stay
    dg_cpu = dyn.DynamicGraph(g)
    eng.attach(dg_gpu)
    cpu = CpuDeltaEngine()
    plans = compile_delta_plans(q)
    reused, sampled = [], []
    hot = rng.choice(g.n, size=40, replace=False)
    for step in range(6):
        s, d = rng.choice(hot, size=(2, 40))
        o = np.where(rng.random(40) < 0.5, 1, -1)
        ups = Updates(s.astype(np.int64), d.astype(np.int64), o.astype(np.int8))
        b1 = dg_gpu.prepare(ups, on_invalid="skip")
        b2 = dg_cpu.prepare(ups, on_invalid="skip")
        _same(eng.run(dg_gpu.view(b1), plans, False), cpu.run(dg_cpu.view(b2), plans, False),
              q.k, False)
        if step and policy != "device":
            reused.append(eng.stats["gather_bytes"] < eng.stats["cache_device_bytes"] / 2)
        sampled.append(eng.stats.get("sampled", False))
        dg_gpu.apply(b1)
        dg_cpu.apply(b2)
    if policy != "device":
        assert any(reused)
    if policy == "random-walk":
        assert sampled[0] and not all(sampled[1:])


def test_selection_kernels_size_rows_like_the_cache_module():
    """The selection's C twins of ``row_capacity`` / ``row_bytes`` agree with them."""
    import cupy as cp
    from warpmatch.stream.gpu._modules import _kernels
    rng = np.random.default_rng(0)
    d0 = rng.integers(0, 5000, size=1000).astype(np.int32)
    d1 = rng.integers(0, 5000, size=1000).astype(np.int32)
    ids = rng.permutation(1000)[:300].astype(np.int32)
    k = _kernels(cp)
    assert np.array_equal(k["cap"](cp.asarray(ids), cp.asarray(d0)).get(), row_capacity(d0[ids]))
    for labeled in (False, True):
        for dirs in (1, 2):
            got = k["cost"](cp.asarray(ids), cp.asarray(d0), cp.asarray(d1),
                            np.int32(8 if labeled else 4), np.int32(dirs)).get()
            want = row_bytes(d0[ids], labeled) + (row_bytes(d1[ids], labeled) if dirs == 2
                                                  else 0)
            assert np.array_equal(got, want)


@pytest.mark.parametrize("fill", [True, False])
def test_random_walk_cache_fills_unused_budget_by_degree(fill):
    """A thin sample credits few rows; with ``estimate_fill`` the budget they leave
    goes to the longest rows (never to the batch's touched vertices), so the cache
    holds every credited row and is full up to one row; without it, it holds the
    credited rows alone. Counts are the exact traversal's either way."""
    g = barabasi_albert(3000, 5, seed=7)
    view, plans, _, per = _square_batch(g, 5)
    eng = _engine(cache="random-walk", cache_fraction=0.5, sample_rate=0.2,
                  continue_rate=0.1, seed=3, estimate_fill=fill)
    got = eng.run(view, plans, False)
    assert np.array_equal(got.plus_counts, per[:, 0])
    assert np.array_equal(got.minus_counts, per[:, 1])
    n = view.n
    est = eng._dev.est.get()[:n]
    touched = np.asarray(view.o_idx)[:n] >= 0
    credited = np.flatnonzero((est > 0) & ~touched)
    cached = np.sort(eng.last_cached)
    deg = np.asarray(view.b_deg)[:n]
    cost = row_bytes(deg, False)
    budget = int(0.5 * cost.sum())
    assert 0 < cost[credited].sum() < 0.8 * budget      # a thin sample: room is left
    assert np.isin(credited, cached).all()
    assert not touched[cached].any()
    used = int(cost[cached].sum())
    assert used <= budget
    if fill:
        assert budget - used < cost.max()
        longest = np.argsort(-deg, kind="stable")[:10]
        assert np.isin(longest[~touched[longest]], cached).all()
    else:
        assert np.array_equal(cached, credited)


def test_sampling_pauses_when_nothing_is_worth_caching():
    """Triangles read no storage row (the overlay serves every read): once a sample
    after the first batch selects no row, the next 16 batches are not sampled."""
    mt = pytest.importorskip("warpmatch.stream.matcher")
    from warpmatch.stream.types import Updates
    g, _, rng = _stream_case(False)
    cm = mt.ContinuousMatcher(g, Query.parse("a-b, b-c, c-a"), backend="gpu",
                              on_invalid="skip", cache="random-walk", sequential=False)
    cm_cpu = mt.ContinuousMatcher(g, Query.parse("a-b, b-c, c-a"), backend="cpu",
                                  on_invalid="skip")
    sampled = []
    for _ in range(6):
        s, d, o, _ = _batch(cm_cpu.graph.snapshot(), rng, 50)
        ups = Updates(s.astype(np.int64), d.astype(np.int64), o.astype(np.int8))
        da, db = cm.apply(ups, counts_only=True), cm_cpu.apply(ups, counts_only=True)
        assert np.array_equal(da.plus_counts, db.plus_counts)
        assert np.array_equal(da.minus_counts, db.minus_counts)
        eng = cm.engine
        sampled.append(eng.stats["sampled"])
        assert eng.stats["cached_rows"] == 0
    assert sampled == [True, True, False, False, False, False]


def test_matcher_backend_gpu():
    mt = pytest.importorskip("warpmatch.stream.matcher")
    from warpmatch.stream.types import Updates
    g, q, rng = _stream_case(False)
    cm_gpu = mt.ContinuousMatcher(g, q, backend="gpu", on_invalid="skip", cache="random-walk",
                                  sequential=False)
    cm_cpu = mt.ContinuousMatcher(g, q, backend="cpu", on_invalid="skip")
    assert cm_gpu.backend == "gpu" and cm_gpu.initial_count == cm_cpu.initial_count
    for _ in range(3):
        s, d, o, _ = _batch(cm_cpu.graph.snapshot(), rng, 50)
        ups = Updates(s.astype(np.int64), d.astype(np.int64), o.astype(np.int8))
        da = cm_gpu.apply(ups, counts_only=True)
        db = cm_cpu.apply(ups, counts_only=True)
        assert np.array_equal(da.plus_counts, db.plus_counts)
        assert np.array_equal(da.minus_counts, db.minus_counts)
    assert cm_gpu.count == cm_cpu.count


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("induced", [False, True])
@pytest.mark.parametrize("policy", ["device", "none", "random-walk"])
def test_matcher_gpu_fully_labeled_reads_the_relevant_subgraph(directed, induced, policy):
    """Every query vertex labelled: the GPU engine reads the query's relevant subgraph
    and runs only the updates the candidate filter lets through (stream/relevant.py,
    GpuDeltaEngine._updates); counts and listed rows equal the CPU engine's."""
    mt = pytest.importorskip("warpmatch.stream.matcher")
    from warpmatch.stream.types import Updates
    rng = np.random.default_rng(17)
    n = 90
    src, dst = rng.integers(n, size=(2, 700))
    g = Graph.from_edges(src, dst, n=n, directed=directed, vertex_labels=rng.integers(3, size=n),
                         warn=False)
    text = "a:0->b:1, b->c:2, c->a" if directed else "a:0-b:1, b-c:2, c-a, c-d:1"
    q = Query.parse(text)
    cm_gpu = mt.ContinuousMatcher(g, q, backend="gpu", induced=induced, on_invalid="skip",
                                  cache=policy, sequential=False)
    cm_cpu = mt.ContinuousMatcher(g, q, backend="cpu", induced=induced, on_invalid="skip")
    assert cm_gpu._relevant is not None
    for i in range(3):
        s, d, o, _ = _batch(cm_cpu.graph.snapshot(), rng, 60)
        ups = Updates(s.astype(np.int64), d.astype(np.int64), o.astype(np.int8))
        da = cm_gpu.apply(ups, counts_only=i == 0)
        db = cm_cpu.apply(ups, counts_only=i == 0)
        assert np.array_equal(da.plus_counts, db.plus_counts)
        assert np.array_equal(da.minus_counts, db.minus_counts)
        if i:
            for a, b in ((da.plus, db.plus), (da.minus, db.minus)):
                assert sorted(map(tuple, a.tolist())) == sorted(map(tuple, b.tolist()))
        # the kernel's copy of the filter masks, refreshed by changed vertices only,
        # equals the host's masks of the batch
        eng = cm_gpu.engine
        assert np.array_equal(eng._dev.qm[: eng.last_masks.size].get(), eng.last_masks)
    assert cm_gpu.count == cm_cpu.count


@pytest.mark.parametrize("induced", [False, True])
def test_matcher_gpu_keep_relevant(induced):
    """keep="relevant" on the GPU engine (stream/keep.py: the batch's irrelevant updates
    never reach it): counts and rows equal the CPU engine's keep="all", whose stream
    also has invalid updates (their counts are 0 either way)."""
    mt = pytest.importorskip("warpmatch.stream.matcher")
    from warpmatch.stream.types import Updates
    rng = np.random.default_rng(23)
    n = 90
    src, dst = rng.integers(n, size=(2, 700))
    g = Graph.from_edges(src, dst, n=n, vertex_labels=rng.integers(4, size=n), warn=False)
    q = Query.parse("a:0-b:1, b-c:2, c-a, c-d:1")
    cm_gpu = mt.ContinuousMatcher(g, q, backend="gpu", induced=induced, on_invalid="skip",
                                  keep="relevant", sequential=False)
    cm_cpu = mt.ContinuousMatcher(g, q, backend="cpu", induced=induced, on_invalid="skip")
    assert cm_gpu._keep is not None and cm_gpu.backend == "gpu"
    for i in range(4):
        s, d, o, _ = _batch(cm_cpu.graph.snapshot(), rng, 80)
        ups = Updates(s.astype(np.int64), d.astype(np.int64), o.astype(np.int8))
        da = cm_gpu.apply(ups, counts_only=i % 2 == 0)
        db = cm_cpu.apply(ups, counts_only=i % 2 == 0)
        assert np.array_equal(da.plus_counts, db.plus_counts)
        assert np.array_equal(da.minus_counts, db.minus_counts)
        if i % 2:
            for a, b, ua, ub in ((da.plus, db.plus, da.plus_update, db.plus_update),
                                 (da.minus, db.minus, da.minus_update, db.minus_update)):
                assert sorted(zip(ua.tolist(), map(tuple, a.tolist()))) == \
                    sorted(zip(ub.tolist(), map(tuple, b.tolist())))
    assert cm_gpu.count == cm_cpu.count


@pytest.mark.parametrize("policy,kw", [("auto", {}), ("none", {}), ("random-walk", {}),
                                       ("random-walk", {"estimator": "cpu"}), ("degree", {})])
def test_hub_and_new_vertices_across_batches(policy, kw):
    """A hub endpoint's subtree is cut into sub-tasks; the device row index and overlay
    map are refreshed incrementally as batches add vertices and move rows."""
    mt = pytest.importorskip("warpmatch.stream.matcher")
    from warpmatch.stream.types import Updates
    rng = np.random.default_rng(31)
    n = 3000
    src = np.concatenate([np.zeros(2500, np.int64), rng.integers(1, n, 6000)])
    dst = np.concatenate([rng.choice(np.arange(1, n), 2500, replace=False),
                          rng.integers(1, n, 6000)])
    g = Graph.from_edges(src, dst, n=n, warn=False)
    q = Query.parse("a-b, b-c, c-d, d-a")
    cm_gpu = mt.ContinuousMatcher(g, q, backend="gpu", on_invalid="skip", cache=policy,
                                  cache_fraction=0.2, **kw)
    cm_cpu = mt.ContinuousMatcher(g, q, backend="cpu", on_invalid="skip")
    for step in range(5):
        s = np.concatenate([np.zeros(20, np.int64), rng.integers(1, n, 40),
                            rng.integers(0, n, 10)])
        d = np.concatenate([rng.integers(1, n, 20), rng.integers(1, n, 40),
                            n + 100 * step + rng.integers(0, 20, 10)])     # new vertices
        o = np.where(rng.random(s.size) < 0.7, 1, -1).astype(np.int8)
        ups = Updates(s, d, o)
        da, db = cm_gpu.apply(ups), cm_cpu.apply(ups)
        assert np.array_equal(da.plus_counts, db.plus_counts)
        assert np.array_equal(da.minus_counts, db.minus_counts)

        def rows(x):
            return sorted(zip(x.plus_update.tolist(), map(tuple, x.plus.tolist()))) + \
                sorted(zip(x.minus_update.tolist(), map(tuple, x.minus.tolist())))
        assert rows(da) == rows(db)
    assert cm_gpu.count == cm_cpu.count
    assert cm_gpu.graph.n > n


@pytest.mark.parametrize("policy", ["device", "random-walk"])
def test_sub_task_size_leaves_the_deltas(policy):
    """A hub's depth-2 list cut into sub-tasks of 32 candidates, of one (``split``: a small
    batch) and of about 8 (``split_target`` set from the batch's own lists): the same
    counts and rows as the CPU engine, whatever the size (kernels/delta.cu "Work")."""
    from warpmatch.stream.gpu._device_cache import split_chunk
    rng = np.random.default_rng(3)
    extra = rng.integers(1, 1600, size=(2, 4000))
    g = Graph.from_edges(np.concatenate([np.zeros(1500, np.int64), extra[0]]),
                         np.concatenate([np.arange(1, 1501), extra[1]]), n=1600, warn=False)
    # the hub 0 as either endpoint, so that some plan generates depth 2 from its row
    s = np.array([0, 0, 1503, 5, 7]); d = np.array([1501, 1502, 0, 9, 0])
    o = np.array([1, 1, 1, 1, 1 if not g.has_edge(7, 0) else -1])
    view = view_from_graph(g, s, d, o, None, allocator=pinned_allocator())
    cpu = CpuDeltaEngine(threads=1)
    middle, most = set(), 0
    for text in ("a-b, b-c, c-d, d-a", "a-b, b-c, c-d, d-a, a-c", "a-b, b-c, c-d, d-e, e-a"):
        q = Query.parse(text)
        for purpose in ("count", "list"):
            plans = compile_delta_plans(q, purpose=purpose)
            want = purpose == "list"
            ref = cpu.run(view, plans, want)
            whole = _engine(cache=policy, cache_fraction=0.3, split=False)
            _same(whole.run(view, plans, want), ref, q.k, want)
            assert int(whole._dev.last_sub_ptr[-1].get()) == 32
            eng = _engine(cache=policy, cache_fraction=0.3, split=True)
            _same(eng.run(view, plans, want), ref, q.k, want)
            total = int(eng._dev.last_lens.sum().get())
            most = max(most, total)
            assert int(eng._dev.last_sub_ptr[-1].get()) == 1    # a small batch: single ones
            eng.split_target = max(1, total // 8)
            _same(eng.run(view, plans, want), ref, q.k, want)
            chunk = int(eng._dev.last_sub_ptr[-1].get())
            assert chunk == int(split_chunk(np, np.array([total]), max(1, total // 8)))
            if total >= 64:
                middle.add(chunk)
    assert most > 1500 and middle and middle <= {8, 9}    # the hub's row, cut in between


@pytest.mark.parametrize("directed", [False, True])
def test_cache_rows_refreshed_in_place_or_dropped(directed):
    """A cache whose selection stays (policy "degree") is kept across batches: a cached
    row the stream rewrote is copied again into its slot when it fits the slot's slack,
    its slot is dropped when it outgrew it (the row is then read from host memory, as
    the exact traversal with the remaining rows cached says), and the cache is rebuilt
    once more than 1/16 of its slots are dropped. Counts stay the CPU engine's."""
    dyn = pytest.importorskip("warpmatch.stream.dynamic")
    from warpmatch.stream.types import Updates
    rng = np.random.default_rng(21)
    n, m = 1500, 9000
    g = Graph.from_edges(*rng.integers(n, size=(2, m)), n=n, directed=directed,
                         edge_labels=rng.integers(2, size=m), warn=False)
    # edge labels (0 on two edges, any on the others): the cache's labels are read too
    q = Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0)], k=4, directed=directed,
                         edge_labels=[0, -1, 0, -1])
    eng = _engine(cache="degree", cache_fraction=0.2, profile=True)
    # slack enough that no storage row moves: the degree policy keeps its selection
    # while the storage arrays stay
    dg_gpu = dyn.DynamicGraph(g, slack=8.0, allocator=eng.allocator)
    dg_cpu = dyn.DynamicGraph(g)
    eng.attach(dg_gpu)
    cpu = CpuDeltaEngine()
    plans = compile_delta_plans(q)
    deg = np.diff(g.indptr)

    def step(s, d, lab, check_reads=False):
        ups = Updates(np.asarray(s, np.int64), np.asarray(d, np.int64),
                      np.ones(len(s), np.int8), np.asarray(lab, np.int64))
        b1 = dg_gpu.prepare(ups, on_invalid="skip")
        b2 = dg_cpu.prepare(ups, on_invalid="skip")
        view = dg_gpu.view(b1)
        _same(eng.run(view, plans, False), cpu.run(dg_cpu.view(b2), plans, False), q.k, False)
        if check_reads:
            want = exact_access(view, eng.effective_plans(plans), cached=eng.last_cached,
                                updates=eng.last_updates, masks=eng.last_masks)[0]
            assert np.array_equal(eng.last_access, want.astype(np.int64))
        dg_gpu.apply(b1)
        dg_cpu.apply(b2)
        return dict(eng.stats)

    def grow(rows, by):
        """``by`` new out-edges of each row, to vertices outside the cache."""
        far = rng.choice(np.setdiff1d(np.arange(n), sel), size=by, replace=False)
        s = np.repeat(rows, by)
        return s, np.tile(far, len(rows)), rng.integers(2, size=s.size)

    def quiet():
        """A batch that touches none of the cached rows."""
        free = np.setdiff1d(np.arange(n), sel)
        s, d = rng.choice(free, size=(2, 20))
        return s, d, rng.integers(2, size=20)

    sel = np.zeros(0, np.int64)
    step(*quiet())
    sel = np.sort(eng.last_cached)
    assert sel.size >= 64
    # one row grows within its slack, one beyond it: kept and refreshed, dropped
    order = sel[np.argsort(deg[sel], kind="stable")]
    order = order[deg[order] > 0]
    small = order[:2]
    slack = int(row_capacity(deg[small[0]]) - deg[small[0]])
    s0, d0, l0 = grow(small[:1], slack)
    s1, d1, l1 = grow(small[1:], slack + 8)
    step(np.r_[s0, s1], np.r_[d0, d1], np.r_[l0, l1])
    st = step(*quiet(), check_reads=True)
    assert st["cache_dropped"] == 1 and st["gather_bytes"] > 0
    assert small[0] in eng.last_cached and small[1] not in eng.last_cached
    # more than 1/16 of the slots dropped: the cache is rebuilt from the same rows
    many = order[2:2 + sel.size // 16 + 1]
    step(*grow(many, 40))
    st = step(*quiet(), check_reads=True)
    assert st["cache_dropped"] == many.size + 1
    assert np.array_equal(np.sort(eng.last_cached), sel)
    st = step(*quiet(), check_reads=True)
    assert st["cache_dropped"] == 0
