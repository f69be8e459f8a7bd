"""Counting embeddings from the quotients' homomorphisms (plan/spasm.py, _hombasis.py):
exact against the reference engine on random labeled graphs and queries (directed or not,
with edge labels, queries whose labels repeat so that many quotients are summed), and on
shipped human queries with known counts; where it applies and where it does not."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch import _hombasis as H
from warpmatch._hombasis import HomCounter, count_hombasis, hombasis_applies
from warpmatch.api import as_query
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.graph.csr import Graph
from warpmatch.graph.generators import erdos_renyi, random_labels, with_labels
from warpmatch.plan import build_plan
from warpmatch.plan.spasm import quotients, term_count
from warpmatch.query.model import Query

REF = ReferenceEngine()


def _set_partitions(n: int) -> int:
    """The Bell number B(n)."""
    row = [1]
    for _ in range(n):
        nxt = [row[-1]]
        for x in row:
            nxt.append(nxt[-1] + x)
        row = nxt
    return row[0]


def test_quotients_are_the_same_label_independent_partitions():
    # a star: its three leaves (label 1) are independent, the centre alone (label 0)
    star = Query.parse("c:0-x:1, c:0-y:1, c:0-z:1")
    assert term_count(star) == _set_partitions(3) == 5
    terms = list(quotients(star))
    assert len(terms) == 5 and terms[0].blocks == ((0,), (1,), (2,), (3,))
    assert terms[0].coef == 1
    # the block of all three leaves: coefficient (-1)^2 2! = 2, one arc left
    whole = [t for t in terms if any(len(b) == 3 for b in t.blocks)]
    assert len(whole) == 1 and whole[0].coef == 2 and len(whole[0].arcs) == 1
    assert sum(t.coef for t in terms if any(len(b) == 2 for b in t.blocks)) == -3
    # a triangle of one label: no two vertices independent, one partition
    assert term_count(Query.parse("a:0-b:0, b:0-c:0, c:0-a:0")) == 1
    # a path a-b-c-d of one label: the partitions into independent sets (a,c), (b,d), (a,d)
    assert term_count(Query.parse("a:0-b:0, b:0-c:0, c:0-d:0")) == 5


def test_partitions_whose_blocks_cannot_meet_are_left_out():
    # a path x0 - y - z - x1 labeled 0, 1, 2, 0: the query's two ends (label 0) need a
    # neighbour labeled 1 and 2, which no data vertex of label 0 has both of, so the
    # partition that merges them is left out (its hom is zero)
    g = with_labels(Graph.from_edges([0, 1, 2], [1, 2, 3], n=4),
                    vertex_labels=np.array([0, 1, 2, 0]))
    q = Query.parse("a:0-b:1, b:1-w:2, w:2-c:0")
    assert term_count(q) == 2
    got, info = count_hombasis(g, q)
    assert got == 1 and info["quotients"] == 1


def test_the_gate_before_every_full_count_reads_class_sizes_only():
    # a star with 12 leaves alike has 4,213,597 partitions, counted only by the count
    # itself (after the direct search's head start, and stopped at its cap); 13 are
    # declined outright
    from warpmatch._hombasis import plan_hombasis
    g = with_labels(erdos_renyi(40, p=0.8, seed=3), vertex_labels=random_labels(40, 2, seed=3))
    for n, ok in ((12, True), (13, False)):
        q = Query.parse(", ".join(f"c:0-x{i}:1" for i in range(n)))
        assert plan_hombasis(build_plan(g, q, purpose="count"), g) is ok
    q = Query.parse(", ".join(f"c:0-x{i}:1" for i in range(12)))
    assert count_hombasis(g, q, max_terms=1000) is None      # more than 1,000: declined


def test_applies_to_labeled_non_induced_queries_only():
    g = with_labels(erdos_renyi(20, p=0.3, seed=1), vertex_labels=random_labels(20, 2, seed=1))
    q = Query.parse("a:0-b:1, b:1-c:0")
    assert hombasis_applies(g, q, False) is None
    assert "induced" in hombasis_applies(g, q, True)
    assert "label" in hombasis_applies(g, Query.parse("a:0-b, b-c:0"), False)
    assert "vertex labels" in hombasis_applies(erdos_renyi(20, p=0.3, seed=1), q, False)


@st.composite
def _cases(draw):
    n = draw(st.integers(6, 30))
    directed = draw(st.booleans())
    nlab = draw(st.integers(1, 3))
    g = erdos_renyi(n, p=draw(st.floats(0.1, 0.5)), seed=draw(st.integers(0, 999)),
                    directed=directed)
    el = None
    if draw(st.booleans()):
        src, dst = g.edges()
        el = [draw(st.integers(0, 1)) for _ in range(src.size)]
        g = Graph.from_edges(src, dst, n=n, directed=directed, edge_labels=el, warn=False)
    g = with_labels(g, vertex_labels=random_labels(n, nlab, seed=draw(st.integers(0, 999))))
    k = draw(st.integers(2, 7))
    edges = set()
    for v in range(1, k):
        u = draw(st.integers(0, v - 1))
        edges.add((v, u) if directed and draw(st.booleans()) else (u, v))
    for _ in range(draw(st.integers(0, 3))):
        a, b = draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))
        if a != b:
            edges.add((a, b) if directed else (min(a, b), max(a, b)))
    edges = sorted(edges)
    elabels = ([draw(st.sampled_from([-1, 0, 1])) for _ in edges] if el is not None
               else [-1] * len(edges))
    q = Query.from_edges(edges, k=k, vertex_labels=[draw(st.integers(0, nlab - 1))
                                                    for _ in range(k)],
                         edge_labels=elabels, directed=directed)
    return g, q


@pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_cases())
def test_counts_equal_the_reference(case):
    g, q = case
    assert hombasis_applies(g, q, False) is None
    plan = build_plan(g, q, purpose="count")
    want = REF.count(g, plan) * plan.multiplier
    # numpy's eliminations one by one, and the compiled kernel (with a scratch too small
    # for some tables, whose quotients go back to numpy); each also with every quotient
    # split by fixing a vertex (its neighbours' domains cut to the data vertex's)
    for kernel, pool, split in ((False, H.KERNEL_POOL, False), (False, H.KERNEL_POOL, True),
                                (True, H.KERNEL_POOL, False), (True, 24, False),
                                (True, H.KERNEL_POOL, True)):
        saved = H.KERNEL_POOL, H.KERNEL_SPLIT_WORK, H.SPLIT_ABOVE
        H.KERNEL_POOL = pool
        if split:
            H.KERNEL_SPLIT_WORK = H.SPLIT_ABOVE = -1
        try:
            got = count_hombasis(g, q, kernel=kernel)
        finally:
            H.KERNEL_POOL, H.KERNEL_SPLIT_WORK, H.SPLIT_ABOVE = saved
        assert got is not None
        assert got[0] == want, (kernel, pool, split)


def test_tables_split_and_several_primes_stay_exact(monkeypatch):
    # tables too large for one elimination: fixed vertices split them; many primes
    g = with_labels(erdos_renyi(60, p=0.3, seed=7), vertex_labels=random_labels(60, 2, seed=7))
    q = Query.parse("a:0-b:1, b:1-c:0, c:0-d:1, d:1-a:0, a:0-e:1, e:1-f:0")
    plan = build_plan(g, q, purpose="count")
    want = REF.count(g, plan) * plan.multiplier
    monkeypatch.setattr(H, "MAX_TABLE", 2_000)
    got, info = count_hombasis(g, q)
    # b and d are twins: 25 partitions, 20 up to swapping them
    assert got == want and (info["quotients"], info["partitions"]) == (20, term_count(q))
    monkeypatch.setattr(H, "PRIME_BITS", 8)          # residues below 2^8: many primes
    got, info = count_hombasis(g, q)
    assert got == want and info["primes"] >= 4


def test_the_kernel_counts_every_quotient_or_leaves_it_to_numpy(monkeypatch):
    g = with_labels(erdos_renyi(50, p=0.2, seed=5), vertex_labels=random_labels(50, 2, seed=5))
    # leaves alike around a square: 52 quotients, tables of two and three vertices
    q = Query.parse("a:0-b:1, b:1-c:0, c:0-d:1, d:1-a:0, a:0-e:1, c:0-f:1, b:1-g:0")
    plan = build_plan(g, q, purpose="count")
    want = REF.count(g, plan) * plan.multiplier
    got, info = count_hombasis(g, q, kernel=True)
    assert got == want and info["numpy"] == 0
    assert info["quotients"] == info["partitions"] == term_count(q) > 16      # no twins
    # a scratch of 8 entries holds no table of two domains of ~25: all go to numpy
    monkeypatch.setattr(H, "KERNEL_POOL", 8)
    got, info = count_hombasis(g, q, kernel=True)
    assert got == want and info["numpy"] == info["quotients"]


@pytest.mark.parametrize("text,directed", [
    ("a:0-h:1, b:0-h:1, c:0-h:1, d:0-h:1, h:1-i:0", False),            # a star's leaves
    ("a:0-x:1, a:0-y:1, b:0-x:1, b:0-y:1, c:0-x:1, c:0-y:1", False),   # K_{3,2}
    ("a:0-x:1, b:0-x:1, c:0-x:1, a:0-b:0, x:1-y:0, y:0-z:1, z:1-c:0", False),
    ("a:0-[0]-h:1, b:0-[0]-h:1, c:0-[1]-h:1, d:0-[1]-h:1, h:1-[0]-i:0", False),
    ("a:0->h:1, b:0->h:1, h:1->c:0, h:1->d:0, c:0->e:1, d:0->e:1", True),
])
@pytest.mark.parametrize("kernel", [False, True])
def test_twins_are_summed_once_per_orbit(text, directed, kernel):
    """Partitions that differ by a swap of twins are one term times the orbit's size
    (:func:`~warpmatch.plan.spasm.twin_orbits`): the count is the reference's, with fewer
    quotients counted than partitions; edge labels and directions keep apart the
    vertices they tell apart."""
    rng = np.random.default_rng(11)
    n = 40
    src, dst = rng.integers(n, size=(2, 500))
    keep = src != dst
    g = Graph.from_edges(src[keep], dst[keep], n=n, directed=directed,
                         edge_labels=rng.integers(2, size=int(keep.sum())), warn=False)
    g = with_labels(g, vertex_labels=random_labels(n, 2, seed=3))
    q = Query.parse(text)
    assert q.directed == directed
    plan = build_plan(g, q, purpose="count")
    want = REF.count(g, plan) * plan.multiplier
    got, info = count_hombasis(g, q, kernel=kernel)
    assert got == want
    assert info["quotients"] < info["partitions"]        # twins merged


def test_twin_classes_follow_edge_labels_and_directions():
    from warpmatch.plan.spasm import swap_classes
    assert swap_classes(Query.parse("a:0-h:1, b:0-h:1, c:0-h:1")) == [0, 1, 0, 0]
    assert swap_classes(Query.parse("a:0-[0]-h:1, b:0-[1]-h:1, c:0-[0]-h:1")) == [0, 1, 2, 0]
    # a -> h and h -> b: swapping them reverses the edges
    assert swap_classes(Query.parse("a:0->h:1, h:1->b:0")) == [0, 1, 2]
    # adjacent twins: a triangle's same-label corners
    assert swap_classes(Query.parse("a:0-b:0, b:0-c:0, c:0-a:0")) == [0, 0, 0]


def test_declines_past_its_limits(monkeypatch):
    g = with_labels(erdos_renyi(40, p=0.3, seed=3), vertex_labels=random_labels(40, 1, seed=3))
    q = Query.parse("a:0-b:0, a:0-c:0, a:0-d:0, a:0-e:0")    # 4 leaves alike: B(4) + ...
    assert count_hombasis(g, q, max_terms=3) is None
    assert count_hombasis(g, q, stop=lambda: True) is None
    monkeypatch.setattr(H, "MAX_TABLE", 1)
    assert count_hombasis(g, q) is None
    # label classes too large for dense blocks: declined before any block is built
    monkeypatch.setattr(H, "MAX_TABLE", 1 << 24)
    monkeypatch.setattr(H, "MAX_BLOCK", 40 * 40 - 1)
    built: list = []
    monkeypatch.setattr(HomCounter, "block", lambda self, *a: built.append(a))
    assert count_hombasis(g, q) is None and built == []
    with pytest.raises(ValueError, match="vertex labels"):
        HomCounter(erdos_renyi(5, p=0.5, seed=1))


def test_api_sums_a_full_count_over_the_quotients(monkeypatch):
    """count_result counts from the quotients after the direct search's head start (0
    here), reports it, and counts the same; a limit, an induced count or
    WARPMATCH_HOMBASIS=0 do not."""
    monkeypatch.setenv("WARPMATCH_FACTOR_AFTER", "0")
    g = with_labels(erdos_renyi(50, p=0.2, seed=5), vertex_labels=random_labels(50, 3, seed=5))
    q = "a:0-b:1, b:1-c:2, c:2-a:0, c:2-d:1, d:1-e:0"
    want = wm.count_result(g, q, backend="reference").count
    for mode in ("embeddings", "subgraphs"):
        res = wm.count_result(g, q, backend="cpu", mode=mode)
        direct = wm.count_result(g, q, backend="reference", mode=mode).count
        assert res.count == direct and res.hombasis is not None
        assert res.hombasis["quotients"] == term_count(as_query(q, g))
        assert res.as_dict()["hombasis"]["quotients"] >= 1
    assert wm.count_result(g, q, backend="cpu").count == want
    assert wm.count_result(g, q, backend="cpu", limit=10 ** 12).hombasis is None
    assert wm.count_result(g, q, backend="cpu", induced=True).hombasis is None
    monkeypatch.setenv("WARPMATCH_HOMBASIS", "0")
    assert wm.count_result(g, q, backend="cpu").hombasis is None


def test_a_time_limit_lets_the_sum_project_up_to_the_time_left(monkeypatch):
    """With no time budget of its own, the sum declines a plain count (the search or the
    factoring answers), and is used where the caller's time limit leaves it the time;
    beside a factoring, it is used where it projects to end before the factored count."""
    monkeypatch.setenv("WARPMATCH_FACTOR_AFTER", "0")
    monkeypatch.setattr(H, "HOM_BUDGET_S", 0.0)
    g = with_labels(erdos_renyi(50, p=0.2, seed=5), vertex_labels=random_labels(50, 3, seed=5))
    q = "a:0-b:1, b:1-c:2, c:2-a:0, c:2-d:1, d:1-e:0"
    want = wm.count_result(g, q, backend="reference").count
    plain = wm.count_result(g, q, backend="cpu")
    assert plain.count == want and plain.hombasis is None
    timed = wm.count_result(g, q, backend="cpu", time_limit=600)
    assert timed.count == want and timed.hombasis is not None and not timed.partial
    # beside a factoring (a cut vertex s whose sides share no label) whose pace is unknown
    # (no probe here), the time left
    from warpmatch import _factored
    monkeypatch.setattr(_factored, "HOM_QUICK_S", 0.0)
    monkeypatch.setattr(_factored, "FACTOR_PROBE_S", 0.0)
    monkeypatch.setattr(_factored, "HOM_BESIDE_FACTOR_S", 0.0)
    q = "s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:3, c:3-d:4"
    g = with_labels(erdos_renyi(60, p=0.15, seed=2), vertex_labels=random_labels(60, 5, seed=2))
    want = wm.count_result(g, q, backend="reference").count
    plain = wm.count_result(g, q, backend="cpu")
    assert plain.count == want and plain.hombasis is None and plain.factored is not None
    timed = wm.count_result(g, q, backend="cpu", time_limit=600)
    assert timed.count == want and timed.hombasis is not None and timed.factored is None
    # a factored count projected to end first keeps the count, even with time to spare; one
    # projected to end later gives it to the sum, with or without a time limit
    cls = _factored.FactoredCount
    monkeypatch.setattr(cls, "projected_left", lambda self: 0.0 if self.finished else 1e-9)
    for tl in (None, 600):
        res = wm.count_result(g, q, backend="cpu", time_limit=tl)
        assert res.count == want and res.hombasis is None and res.factored is not None
    monkeypatch.setattr(cls, "projected_left", lambda self: 0.0 if self.finished else 1e9)
    for tl in (None, 600):
        res = wm.count_result(g, q, backend="cpu", time_limit=tl)
        assert res.count == want and res.hombasis is not None and res.factored is None
    # a quick first try of the quotients answers before any probe where it can
    monkeypatch.setattr(_factored, "HOM_QUICK_S", 60.0)
    monkeypatch.setattr(cls, "projected_left", lambda self: 0.0 if self.finished else 1e-9)
    res = wm.count_result(g, q, backend="cpu")
    assert res.count == want and res.hombasis is not None and res.factored is None


@pytest.fixture(scope="module")
def human(data_path):
    base = data_path("labeled", "human")          # skips where the data is absent
    return {"graph": wm.read_graph(base / "human.graph"), "queries": base / "query_graph"}


# counts of shipped human queries, found by the factored search (bench/README, session 36)
# (query_dense_16_7, 32,855,870,592, also came out exact, in 465 s: too long for a test)
HUMAN = {"query_sparse_16_7": 33_442_867_872}


@pytest.mark.parametrize("name", sorted(HUMAN))
def test_human_queries_with_known_counts(human, name):
    g = human["graph"]
    q = as_query(str(human["queries"] / f"{name}.graph"), g)
    got = count_hombasis(g, q, budget_s=math.inf)
    assert got is not None and got[0] == HUMAN[name]


def test_a_query_with_more_than_int64_embeddings(human):
    # human's query_sparse_20_5: about 8.5e22 embeddings, past int64; the count from two
    # prime sets (PRIME_BITS 26 and 20) must agree
    g = human["graph"]
    q = as_query(str(human["queries"] / "query_sparse_20_5.graph"), g)
    a = count_hombasis(g, q, budget_s=math.inf)
    assert a is not None and a[0] > np.iinfo(np.int64).max
    old = H.PRIME_BITS
    try:
        H.PRIME_BITS = 20
        b = count_hombasis(g, q, budget_s=math.inf)
    finally:
        H.PRIME_BITS = old
    assert b is not None and b[0] == a[0] and b[1]["primes"] > a[1]["primes"]


def test_explain_says_where_a_count_may_come_from_homomorphisms():
    g = with_labels(erdos_renyi(60, p=0.1, seed=2), vertex_labels=random_labels(60, 5, seed=2))
    q = "s:0-a:1, a:1-b:2, b:2-s:0, s:0-c:3, c:3-d:1"
    text = wm.explain(g, q)
    assert "from homomorphisms" in text and "2 partitions" in text
    assert "twins" not in text
    # a, b, c alike around x: 5 partitions of {a, b, c}, 3 up to swapping them
    twins = wm.explain(g, "a:0-x:1, b:0-x:1, c:0-x:1, x:1-y:2")
    assert "5 partitions" in twins and "(3 up to swaps of twins, each one term)" in twins
    assert "from homomorphisms" not in wm.explain(g, q, induced=True)
    assert "from homomorphisms" not in wm.explain(g, "s:0-a, a-b:2, b:2-s:0")


def test_a_graph_with_self_loops_is_declined():
    # a loop lets two adjacent query vertices share an image, which the quotients leave out
    # (Graph.from_edges drops loops: the arrays are built by hand, vertex 1's list 0, 1, 2)
    g = Graph(n=3, indptr=np.array([0, 2, 5, 7]), indices=np.array([1, 2, 0, 1, 2, 0, 1]),
              vertex_labels=np.zeros(3, dtype=np.int32))
    assert g.has_edge(1, 1)
    q = Query.parse("a:0-b:0")
    assert "self-loops" in hombasis_applies(g, q, False)
    assert hombasis_applies(g, q, False, loops=False) is None
    assert count_hombasis(g, q) is None


def test_the_projection_leaves_out_the_costliest_call():
    """One quotient can cost more than all the others (human's query_sparse_12_10: 20 s of
    24): the sum's projection paces the rest by every call but the costliest, and makes
    none while that call is the only one."""
    from warpmatch._hombasis import _projected
    assert _projected(20.0, 2, (2, 20.0), 39) == 0.0
    # then 4 quotients in 0.4 s: the 33 left at 0.1 s each
    assert _projected(20.4, 6, (2, 20.0), 39) == pytest.approx(20.4 + 33 * 0.1)
    # every call alike: the plain pace
    assert _projected(3.0, 6, (2, 1.0), 12) == pytest.approx(3.0 + 6 * 0.5)


def test_the_summary_says_when_twins_were_merged():
    from warpmatch.cli.search import _hombasis_note
    assert _hombasis_note({"quotients": 20, "partitions": 25}) == \
        "; from the homomorphisms of 20 quotients (25 partitions, twins merged)"
    assert _hombasis_note({"quotients": 25, "partitions": 25}) == \
        "; from the homomorphisms of 25 quotients"
