"""The GPU engine's CPU-side parts: GCSM's random-walk estimator (§IV) and DCSR packing (§V-B).

Ground truth is the complete execution forest of a batch (``exact_access``),
whose match counts are checked against the CPU delta engine, so the access
counts it reports are those of a correct traversal.
"""
from __future__ import annotations

import numpy as np
import pytest

from warpmatch.graph.csr import Graph
from warpmatch.graph.generators import barabasi_albert
from warpmatch.query.model import Query
from warpmatch.stream.delta import compile_delta_plans
from warpmatch.stream.gpu._testing import apply_to_graph, view_from_graph
from warpmatch.stream.gpu.cache import row_bytes, row_capacity, select_rows
from warpmatch.stream.gpu.walk import default_walks, estimate_access, exact_access


def _batch(graph: Graph, rng: np.random.Generator, size: int, ins_frac: float = 0.5):
    """Random updates: deletions of present edges, insertions of random pairs."""
    src, dst = [], []
    for a in range(graph.n):
        for b in graph.indices[graph.indptr[a]:graph.indptr[a + 1]]:
            if graph.directed or a < b:
                src.append(a)
                dst.append(int(b))
    E = np.array([src, dst]).T
    ops, s, d = [], [], []
    for _ in range(size):
        if rng.random() < ins_frac:
            a, b = rng.integers(graph.n, size=2)
            s.append(int(a)); d.append(int(b)); ops.append(1)
        else:
            e = E[rng.integers(len(E))]
            s.append(int(e[0])); d.append(int(e[1])); ops.append(-1)
    return np.array(s), np.array(d), np.array(ops)


@pytest.fixture(scope="module")
def ba():
    return barabasi_albert(400, 4, seed=3)


QUERIES = ["a-b, b-c, c-a", "a-b, b-c, c-d, d-a", "a-b, b-c, c-d, d-a, a-c"]


@pytest.mark.parametrize("text", QUERIES)
@pytest.mark.parametrize("induced", [False, True])
def test_exact_traversal_counts_equal_cpu_engine(ba, text, induced):
    cpu = pytest.importorskip("warpmatch.stream.cpu")
    rng = np.random.default_rng(7)
    s, d, o = _batch(ba, rng, 60)
    view = view_from_graph(ba, s, d, o)
    plans = compile_delta_plans(Query.parse(text), induced=induced)
    _, per = exact_access(view, plans)
    raw = cpu.CpuDeltaEngine(threads=1).run(view, plans, want_matches=False)
    assert np.array_equal(per[:, 0], raw.plus_counts)
    assert np.array_equal(per[:, 1], raw.minus_counts)


@pytest.mark.parametrize("text", QUERIES)
def test_exact_traversal_with_filter_masks_keeps_counts_and_reads_less(text):
    """The GPU kernel tests the candidate filter's masks at every depth; the traversal
    that models it does too: the same matches (the filter is sound), fewer reads."""
    from warpmatch.stream.filter import NlfFilter
    rng = np.random.default_rng(5)
    n = 300
    g = barabasi_albert(n, 3, seed=5)
    g = Graph.from_edges(*g.edges(), n=n, vertex_labels=rng.integers(3, size=n), warn=False)
    q = Query.parse(text)
    q = Query.from_edges(q.edges.tolist(), k=q.k, vertex_labels=[0, 1, 2, 0][:q.k])
    s, d, o = _batch(g, rng, 80)
    view = view_from_graph(g, s, d, o)
    plans = compile_delta_plans(q)
    masks = NlfFilter(q, False).masks(view)
    acc0, per0 = exact_access(view, plans)
    acc1, per1 = exact_access(view, plans, masks=masks)
    assert np.array_equal(per0, per1)
    assert acc1.sum() < acc0.sum() and np.all(acc1 <= acc0)


def test_exact_traversal_equals_recount_directed_labeled():
    rng = np.random.default_rng(11)
    n = 60
    s = rng.integers(n, size=400)
    t = rng.integers(n, size=400)
    g = Graph.from_edges(s, t, n=n, directed=True, vertex_labels=rng.integers(2, size=n),
                         edge_labels=rng.integers(2, size=400), warn=False)
    q = Query.parse("a->b, b->c, c->a")
    plans = compile_delta_plans(q, has_edge_labels=True)
    us, ud, uo = _batch(g, rng, 30)
    view = view_from_graph(g, us, ud, uo, elabel=rng.integers(2, size=30))
    _, per = exact_access(view, plans)
    from warpmatch import count
    before = count(g, q, backend="cpu")
    after = count(apply_to_graph(g, view), q, backend="cpu")
    assert int((per[:, 0] - per[:, 1]).sum()) == after - before


def test_exact_traversal_models_where_rows_are(ba):
    """The kernel's row choice for a binary search (kernels/delta.cu ``wm_edge``): the
    shorter row when both are in one memory, else the cheaper search, so the reads
    move with the cache while the matches stay the same."""
    from warpmatch.stream.gpu._walk_kernels import HOST_COST, _search_cost
    assert [_search_cost(n, False) for n in range(8)] == [1, 2, 2, 3, 3, 3, 3, 4]
    assert _search_cost(3, True) == 3 * HOST_COST
    rng = np.random.default_rng(5)
    s, d, o = _batch(ba, rng, 60)
    view = view_from_graph(ba, s, d, o)
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-d, d-a"))
    host, per = exact_access(view, plans)
    mirrored, per_m = exact_access(view, plans, host_storage=False)
    assert np.array_equal(per_m, per)
    # with host storage, searches move to the touched vertices' overlay rows
    touched = np.flatnonzero(np.asarray(view.o_idx) >= 0)
    assert host[touched].sum() > mirrored[touched].sum()
    # a partial cache: the searches between a cached hub and a short host row move to
    # the hub, so its reads rise and the other rows' fall; the matches stay
    deg = np.diff(ba.indptr)
    hubs = np.setdiff1d(np.argsort(-deg)[:10], touched)
    cached, per_c = exact_access(view, plans, cached=hubs)
    assert np.array_equal(per_c, per)
    assert cached[hubs].sum() > host[hubs].sum()
    rest = np.setdiff1d(np.arange(ba.n), hubs)
    assert cached[rest].sum() < host[rest].sum()
    # ranking for the cache runs no last level, so it counts no matches
    both, per_b = exact_access(view, plans, for_cache=True)
    assert per_b is None and both.sum() > 0
    # the sampler reads no cache, so a cache and cache ranking do not go together
    with pytest.raises(ValueError, match="for_cache"):
        exact_access(view, plans, cached=hubs, for_cache=True)


def test_look_ahead_credits_the_last_level_without_running_it():
    """``for_cache`` (the GPU sampler's credit) at the square's last level: the
    generating list is credited once, the other test's storage row once per entry of
    that list, and each candidate of an overlay list once per test whose two rows are
    storage rows; overlay rows get nothing."""
    # 0-1 is inserted, so 0 and 1 get overlay rows; 2 is a storage row of 4 entries
    g = Graph.from_edges([1, 2, 2, 2, 0, 0], [2, 3, 4, 7, 5, 6], n=8, directed=False)
    view = view_from_graph(g, [0], [1], [1])
    assert list(view.o_rows) == [0, 1] and list(np.asarray(view.o_idx)[view.o_rows]) == [0, 1]
    # one plan per ordered pair with the restrictions of Aut, in the order a, b, c, d
    # (the counting plan of the square's one orbit matches d before c, and counts c)
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-d, d-a"), mode="subgraphs",
                                purpose="list")
    assert plans.order[0].tolist() == [0, 1, 2, 3]
    acc, _ = exact_access(view, plans, for_cache=True)
    reads, _ = exact_access(view, plans)
    # With a = 0, b = 1, c = 2, d is generated from N(0) = {1, 5, 6}, an overlay row
    # shorter than N(2), and each candidate is searched against N(2). 2 is credited
    # 3 (the list's entries) per plan that gets there; 5 and 6 (storage rows) once
    # each, and 1 nothing (already matched, and an overlay row). The uncached run
    # searches the shorter rows, N(5) and N(6), and never reads 2: cached, it would
    # serve those searches.
    assert acc[2] > 0 and acc[2] % 3 == 0
    assert acc[5] == acc[6] == acc[2] / 3
    assert reads[2] == 0 and reads[5] > 0
    # the endpoints' overlay rows are read but never credited: the cache cannot hold them
    assert reads[0] > 0 and acc[0] == acc[1] == 0
    # 3, 4 and 7 are candidates only through N(2), a host row the look-ahead never scans
    assert acc[3] == acc[4] == acc[7] == 0


def test_look_ahead_cache_beats_degree_cache(ba):
    """The cache ranked by the look-ahead credit per byte serves more of a batch's
    host reads than one of the same size ranked by degree (GCSM's baseline): the rows
    next to the batch's endpoints are the ones the last level searches."""
    rng = np.random.default_rng(13)
    s, d, o = _batch(ba, rng, 40)
    view = view_from_graph(ba, s, d, o)
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-d, d-a"))
    deg = np.diff(ba.indptr)
    cost = row_bytes(deg, False)
    budget = int(0.1 * cost.sum())
    touched = np.asarray(view.o_idx) >= 0
    credit, _ = exact_access(view, plans, for_cache=True)
    credit[touched] = 0
    ids = np.flatnonzero(credit > 0)
    look = ids[select_rows(credit[ids] / cost[ids], cost[ids], budget, None)]
    by_deg = select_rows(deg / cost, cost, budget, None)

    def host_reads(cached):
        reads, _ = exact_access(view, plans, cached=cached)
        host = ~touched
        host[cached] = False
        return reads[host].sum()
    assert host_reads(look) < 0.8 * host_reads(by_deg)


def test_estimate_is_deterministic_and_seeded(ba):
    rng = np.random.default_rng(1)
    s, d, o = _batch(ba, rng, 40)
    view = view_from_graph(ba, s, d, o)
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-d, d-a"))
    a = estimate_access(view, plans, walks=2000, seed=5)
    b = estimate_access(view, plans, walks=2000, seed=5)
    c = estimate_access(view, plans, walks=2000, seed=6)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("stratified", [True, False])
def test_estimate_is_unbiased_and_ranks_hot_vertices(ba, stratified):
    rng = np.random.default_rng(2)
    s, d, o = _batch(ba, rng, 40)
    view = view_from_graph(ba, s, d, o)
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-d, d-a"))
    true, _ = exact_access(view, plans)
    reps = 40
    mean = np.zeros_like(true)
    for seed in range(reps):
        mean += estimate_access(view, plans, walks=4000, seed=seed, stratified=stratified)
    mean /= reps
    # unbiased (eq. 6): the total of the mean estimate is close to the true total
    assert abs(mean.sum() - true.sum()) < 0.1 * true.sum()
    # and it ranks vertices like the truth (Theorem 1)
    one = estimate_access(view, plans, walks=20000, seed=99, stratified=stratified)
    hot = true > 0
    r_true = np.argsort(np.argsort(true[hot]))
    r_est = np.argsort(np.argsort(one[hot]))
    assert np.corrcoef(r_true, r_est)[0, 1] > 0.6
    # top-5% coverage of a cache holding the estimator's top 10% (GCSM §VI-D)
    k = max(1, int(0.05 * hot.sum()))
    top_true = set(np.argsort(true)[::-1][:k].tolist())
    top_est = set(np.argsort(one)[::-1][: 2 * k].tolist())
    assert len(top_true & top_est) / k >= 0.7


def test_vertices_near_updates_score_higher(ba):
    rng = np.random.default_rng(4)
    s, d, o = _batch(ba, rng, 20)
    view = view_from_graph(ba, s, d, o)
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-a"))
    est = estimate_access(view, plans, seed=0)
    ok = view.batch.valid
    ends = np.unique(np.concatenate([s[ok], d[ok]]))
    near = np.zeros(ba.n, bool)
    near[ends] = True
    for v in ends:
        near[ba.indices[ba.indptr[v]:ba.indptr[v + 1]]] = True
    far = ~near
    assert est[ends].mean() > est[far].mean()
    # a triangle's walks never leave the 1-hop neighbourhood of the updates
    assert est[far].max(initial=0) == 0


def test_default_walks_follow_the_paper():
    # M = |ΔE| D^(n-2) / 32^n, at most one walk per root, at least 64 (or one per root)
    assert default_walks(100_000, 1 << 10, 4) == 100_000          # the formula: exactly 1/root
    assert default_walks(100_000, 1 << 9, 4) == 25_000            # the formula: 1/4 per root
    assert default_walks(100, 1 << 20, 4) == 100                  # capped at one per root
    assert default_walks(4096, 8192, 3) == 1024                   # 4096 * 8192 / 32**3
    assert default_walks(4096, 8, 3) == 64                        # at least 64 ...
    assert default_walks(10, 8, 3) == 10                          # ... or one per root


def test_estimate_does_not_depend_on_threads_or_buffer_size(ba):
    """Roots run in parallel chunks with per-root random streams; a chunk whose
    record buffer fills up resumes at the root that did not fit."""
    import numba

    from warpmatch.stream.gpu.walk import Workspace, estimate_access_sparse
    rng = np.random.default_rng(8)
    s, d, o = _batch(ba, rng, 50)
    view = view_from_graph(ba, s, d, o)
    plans = compile_delta_plans(Query.parse("a-b, b-c, c-d, d-a"))
    want = estimate_access(view, plans, walks=3000, seed=3)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = estimate_access(view, plans, walks=3000, seed=3)
    finally:
        numba.set_num_threads(before)
    ws = Workspace(ba.n)
    ws.record_room = 4                   # far too small: every chunk resumes many times
    tiny = np.zeros(ba.n)
    ids, vals = estimate_access_sparse(view, plans, walks=3000, seed=3, ws=ws).result()
    tiny[ids] = vals
    assert ws.record_room > 4
    assert np.allclose(one, want) and np.allclose(tiny, want)
    true, per = exact_access(view, plans)
    ws.record_room = 4
    true2, per2 = exact_access(view, plans)
    assert np.array_equal(true, true2) and np.array_equal(per, per2)


def test_row_capacity_gives_every_row_slack_and_row_bytes_counts_it():
    """A cached row has room to grow in place (kernels/delta.cu wm_refresh_rows), and the
    cache's byte budget pays for that room."""
    deg = np.array([0, 1, 2, 15, 16, 17, 3196, 2 ** 30])
    cap = row_capacity(deg)
    assert cap[0] == 0 and np.all(cap[1:] > deg[1:])
    assert np.all(cap - deg <= deg // 16 + 1)
    assert np.array_equal(row_bytes(deg, False), cap * 4 + 12)
    assert np.array_equal(row_bytes(deg, True), cap * 8 + 12)


def test_select_rows_respects_budget_and_order():
    rng = np.random.default_rng(0)
    scores = rng.random(1000)
    scores[rng.integers(1000, size=100)] = 0
    deg = rng.integers(0, 50, size=1000)
    cost = row_bytes(deg, labeled=False)
    excl = np.zeros(1000, bool)
    excl[:10] = True
    for budget in (0, 100, 5000, 10 ** 9):
        sel = select_rows(scores, cost, budget, excl)
        assert cost[sel].sum() <= budget
        assert not excl[sel].any() and (scores[sel] > 0).all()
        assert np.all(np.diff(scores[sel]) <= 0)
        rest = np.setdiff1d(np.flatnonzero((scores > 0) & ~excl), sel)
        if rest.size and sel.size:
            assert scores[rest].max() <= scores[sel].min()
    assert select_rows(scores, cost, 10 ** 9, excl).size == np.count_nonzero((scores > 0) & ~excl)


def test_parallel_copy_small_and_large():
    from warpmatch.stream.gpu.cache import parallel_copy
    rng = np.random.default_rng(0)
    for size in (0, 17, (1 << 20) + 3, 5_000_001):
        src = rng.integers(0, 256, size=size, dtype=np.uint8)
        dst = np.zeros(size + 8, dtype=np.uint8)
        parallel_copy(dst[3:3 + size], src)
        assert np.array_equal(dst[3:3 + size], src)
        assert not dst[:3].any() and not dst[3 + size:].any()
