"""The numba ``cpu`` engine against the reference engine and networkx.

The reference engine is the oracle (DESIGN.md): on random labeled/unlabeled,
directed/undirected graphs and random connected queries of 3-7 vertices, the
cpu engine must give the same raw count and the same set of matches, in both
modes, induced or not, with anchors and edge labels. networkx's VF2 checks the
cpu engine directly too, with the reference out of the loop: on the same random
graphs and queries of 3-7 vertices (monomorphisms, or subgraph isomorphisms
when induced; subgraphs mode through networkx's automorphisms), and on a few
named patterns. Listing is checked with tiny
batch sizes and limits (the resumable lanes), and on a hub whose subtree holds
many more matches than a batch.
"""
from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from networkx.algorithms import isomorphism as iso

import warpmatch as wm
from warpmatch.engine.cpu import CpuEngine
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.graph.csr import Graph
from warpmatch.plan import build_plan
from warpmatch.query.model import Query
from warpmatch.query.patterns import get_pattern

from engine_helpers import graphs, queries  # noqa: E402  (tests/engine is on sys.path)

CPU = CpuEngine()
REF = ReferenceEngine()
pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _rows(batches, k: int) -> list[tuple[int, ...]]:
    arrs = [np.asarray(b) for b in batches]
    if not arrs:
        return []
    allrows = np.concatenate(arrs).reshape(-1, k)
    return [tuple(r) for r in allrows.tolist()]


def _check_same(graph: Graph, plan, batch_size: int = 1 << 16) -> int:
    """cpu == reference: count, and the listed match multiset. Returns the count."""
    want = REF.count(graph, plan)
    assert CPU.count(graph, plan) == want
    got = _rows(CPU.match(graph, plan, batch_size=batch_size), plan.k)
    ref = _rows(REF.match(graph, plan), plan.k)
    assert len(got) == len(set(got)) == want
    assert set(got) == set(ref)
    return want


# ------------------------------------------------------- property tests
@SETTINGS
@given(data=st.data())
def test_cpu_equals_reference(data) -> None:
    g = data.draw(graphs())
    q = data.draw(queries(g))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    purpose = data.draw(st.sampled_from(["count", "list"]))
    plan = build_plan(g, q, mode=mode, induced=induced, purpose=purpose)
    _check_same(g, plan, batch_size=data.draw(st.integers(1, 5)))


@SETTINGS
@given(data=st.data())
def test_cpu_equals_reference_with_anchors(data) -> None:
    g = data.draw(graphs(labels=False, edge_labels=False))
    q = data.draw(queries(g, 3, 5))
    u = data.draw(st.integers(0, q.k - 1))
    ids = data.draw(st.lists(st.integers(0, g.n - 1), min_size=1, max_size=4, unique=True))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    plan = build_plan(g, q, mode=mode, anchors={u: ids}, purpose="list")
    _check_same(g, plan, batch_size=3)


@SETTINGS
@given(data=st.data())
def test_cpu_dense_unlabeled_counts(data) -> None:
    """Denser graphs exercise the last-depth intersection counts (1, 2, 3+ lists)."""
    n = data.draw(st.integers(5, 12))
    p = data.draw(st.floats(0.3, 0.8))
    seed = data.draw(st.integers(0, 10_000))
    directed = data.draw(st.booleans())
    G = nx.gnp_random_graph(n, p, seed=seed, directed=directed)
    e = np.array(list(G.edges()), dtype=np.int64).reshape(-1, 2)
    g = Graph.from_edges(e[:, 0], e[:, 1], n=n, directed=directed)
    q = data.draw(queries(g, 3, 5))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    plan = build_plan(g, q, mode=mode, purpose="count")
    assert CPU.count(g, plan) == REF.count(g, plan)


# ------------------------------------------------- networkx, independently
def _nx_count(G: nx.Graph, Q: nx.Graph, induced: bool) -> int:
    gm = iso.GraphMatcher(G, Q)
    it = gm.subgraph_isomorphisms_iter() if induced else gm.subgraph_monomorphisms_iter()
    return sum(1 for _ in it)


@pytest.mark.parametrize("name", ["triangle", "square", "diamond", "tailed-triangle",
                                  "4-clique", "house"])
@pytest.mark.parametrize("induced", [False, True])
def test_cpu_against_networkx(name: str, induced: bool) -> None:
    G = nx.barabasi_albert_graph(60, 4, seed=3)
    e = np.array(list(G.edges()), dtype=np.int64)
    g = Graph.from_edges(e[:, 0], e[:, 1], n=60)
    q = get_pattern(name)
    want = _nx_count(G, q.to_networkx(), induced)
    for mode, purpose in (("embeddings", "count"), ("embeddings", "list")):
        plan = build_plan(g, q, mode=mode, induced=induced, purpose=purpose)
        assert CPU.count(g, plan) * plan.multiplier == want
    plan = build_plan(g, q, mode="subgraphs", induced=induced)
    assert CPU.count(g, plan) * plan.aut_size == want


@st.composite
def nx_instances(draw) -> tuple[Graph, nx.Graph, Query]:
    """A random graph built twice, by warpmatch and by networkx from the same raw edges,
    and a random connected query of 3-7 vertices (labels and direction as the graph's)."""
    n = draw(st.integers(7, 10))
    directed = draw(st.booleans())
    rnd = random.Random(draw(st.integers(0, 2**32)))   # a seed spreads sizes better
    k = rnd.randint(3, 7)          # every size equally (hypothesis would favour k = 3)
    # dense enough that 6- and 7-vertex queries have matches, sparse enough that
    # networkx enumerates them quickly; a few self-loops and repeated (undirected:
    # reversed) edges exercise the cleaning
    p = rnd.choice([0.35, 0.55, 0.75] if k <= 4 else [0.45, 0.6])
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b and (directed or a < b)]
    edges = [e for e in pairs if rnd.random() < p]
    edges += [(v, v) for v in rnd.sample(range(n), 2)]
    repeats = rnd.sample(edges, min(3, len(edges)))
    edges += [(a, b) if directed else (b, a) for a, b in repeats]
    rnd.shuffle(edges)
    src, dst = [a for a, _ in edges], [b for _, b in edges]
    m = len(edges)
    vl = [rnd.randrange(2) for _ in range(n)] if draw(st.booleans()) else None
    el = [rnd.randrange(2) for _ in range(m)] if draw(st.booleans()) else None
    g = Graph.from_edges(src, dst, n=n, vertex_labels=vl, edge_labels=el, directed=directed,
                         warn=False)
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from((v, {} if vl is None else {"label": vl[v]}) for v in range(n))
    for i, (a, b) in enumerate(zip(src, dst)):
        # the semantics: self-loops dropped, the first copy of a repeated edge kept
        if a != b and not G.has_edge(a, b):
            G.add_edge(a, b, **({} if el is None else {"label": el[i]}))
    return g, G, draw(queries(g, k, k))


def _label_match(data_attr: dict, query_attr: dict) -> bool:
    want = query_attr.get("label", -1)
    return want == -1 or data_attr.get("label") == want


def _same_label(a: dict, b: dict) -> bool:
    return a.get("label", -1) == b.get("label", -1)


@SETTINGS
@given(inst=nx_instances(), induced=st.booleans(),
       mode=st.sampled_from(["embeddings", "subgraphs"]))
def test_cpu_equals_networkx(inst, induced: bool, mode: str) -> None:
    """cpu == networkx directly (monomorphisms; induced <-> subgraph isomorphisms) for
    queries of 3-7 vertices; the reference oracle is not in the loop."""
    g, G, q = inst
    Q = q.to_networkx()
    cls = iso.DiGraphMatcher if q.directed else iso.GraphMatcher
    gm = cls(G, Q, node_match=_label_match, edge_match=_label_match)
    it = gm.subgraph_isomorphisms_iter() if induced else gm.subgraph_monomorphisms_iter()
    want = set()
    for mp in it:                                      # mp: data vertex -> query vertex
        inv = {qv: gv for gv, qv in mp.items()}
        want.add(tuple(inv[u] for u in range(q.k)))
    auts = list(cls(Q, Q, node_match=_same_label, edge_match=_same_label).isomorphisms_iter())
    got = wm.count(g, q, mode=mode, induced=induced, backend="cpu")
    rows = {tuple(r) for b in wm.match(g, q, mode=mode, induced=induced, backend="cpu",
                                       batch_size=7) for r in b.tolist()}
    if mode == "embeddings":
        assert got == len(want) and rows == want
    else:
        assert got * len(auts) == len(want) and len(rows) == got
        # every embedding is exactly one listed subgraph composed with an automorphism
        expanded = [tuple(r[a[u]] for u in range(q.k)) for r in rows for a in auts]
        assert len(expanded) == len(set(expanded)) and set(expanded) == want


# -------------------------------------------------------------- listing
def _hub_graph() -> Graph:
    """A hub joined to 300 vertices that form a path: many triangles through one root."""
    n = 301
    src = [0] * 300 + list(range(1, 300))
    dst = list(range(1, 301)) + list(range(2, 301))
    return Graph.from_edges(src, dst, n=n)


def test_hub_counts_and_bounded_batches() -> None:
    g = _hub_graph()
    q = Query.from_edges([(0, 1), (1, 2), (0, 2), (2, 3)])   # tailed triangle
    plan = build_plan(g, q, mode="embeddings", purpose="list")
    total = _check_same(g, plan, batch_size=7)
    sizes = [b.shape[0] for b in CPU.match(g, plan, batch_size=7)]
    assert max(sizes) <= 7 and sum(sizes) == total
    assert total > 20 * 7        # the hub's subtree spans many rounds


def test_limit_and_tiny_batches() -> None:
    g = _hub_graph()
    plan = build_plan(g, get_pattern("triangle"), purpose="list")
    allrows = set(_rows(CPU.match(g, plan), 3))
    for limit, bs in ((1, 1), (5, 2), (17, 4), (len(allrows) + 10, 1000)):
        got = _rows(CPU.match(g, plan, batch_size=bs, limit=limit), 3)
        assert len(got) == min(limit, len(allrows))
        assert len(set(got)) == len(got) and set(got) <= allrows
    assert list(CPU.match(g, plan, limit=0)) == []
    with pytest.raises(ValueError):
        list(CPU.match(g, plan, batch_size=0))


def test_progress_reaches_total() -> None:
    g = _hub_graph()
    plan = build_plan(g, get_pattern("diamond"))
    calls: list[tuple[int, int]] = []
    c = CPU.count(g, plan, progress=lambda d, t: calls.append((d, t)))
    assert c == REF.count(g, plan)
    total = calls[-1][1]          # units of estimated work, the same in every call
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert all(a[0] <= b[0] and a[1] == b[1] for a, b in zip(calls, calls[1:]))
    calls.clear()
    rows = _rows(CPU.match(g, plan, batch_size=5, progress=lambda d, t: calls.append((d, t))), 4)
    assert len(rows) == c and calls[-1][0] == calls[-1][1] > 0


# ------------------------------------------------- bounded kernel calls
@pytest.fixture
def one_step_calls(monkeypatch):
    """Every kernel call ends after one step per lane: the lanes stop and resume at
    every point a search can stop at (scan steps, counted last depths, item ends)."""
    from warpmatch.engine import cpu
    monkeypatch.setattr(cpu, "FIRST_BUDGET", 1)
    monkeypatch.setattr(cpu, "CALL_S", 0.0)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cpu_resumes_exactly_after_any_step(one_step_calls, data) -> None:
    g = data.draw(graphs())
    q = data.draw(queries(g, 3, 5))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    purpose = data.draw(st.sampled_from(["count", "list"]))
    plan = build_plan(g, q, mode=mode, induced=data.draw(st.booleans()), purpose=purpose)
    _check_same(g, plan, batch_size=data.draw(st.integers(1, 5)))


def test_hub_subtree_is_cut_into_many_calls(one_step_calls) -> None:
    g = _hub_graph()
    for name in ("triangle", "diamond", "tailed-triangle"):
        plan = build_plan(g, get_pattern(name))
        calls: list[tuple[int, int]] = []
        assert CPU.count(g, plan, progress=lambda d, t, c=calls: c.append((d, t))) == \
            REF.count(g, plan)
        assert len(calls) > 100        # one hub, yet many calls, each moving the search on


class _FiredAtOnce:
    """A watchdog whose deadline has passed before the kernel starts (``_Lanes.call``
    arms it after clearing the flag)."""

    def arm(self, flag: np.ndarray, seconds: float) -> int:
        from warpmatch.engine._watchdog import STOP_NOW
        flag[0] = STOP_NOW
        return 0

    def disarm(self, token: int) -> None:
        pass


def test_deadline_stops_a_call_whatever_its_budget(monkeypatch) -> None:
    # a budget that would finish the whole search in one call: the deadline (fired before
    # the call starts) still ends every call after one step per lane, and the count
    # resumes exactly
    from warpmatch.engine import cpu
    monkeypatch.setattr(cpu, "FIRST_BUDGET", 1 << 40)
    monkeypatch.setattr(cpu, "watchdog", lambda: _FiredAtOnce())
    g = _hub_graph()
    for name in ("triangle", "diamond"):
        for purpose in ("count", "list"):
            plan = build_plan(g, get_pattern(name), purpose=purpose)
            calls: list[tuple[int, int]] = []
            if purpose == "count":
                got = CPU.count(g, plan, progress=lambda d, t, c=calls: c.append((d, t)))
            else:
                got = sum(b.shape[0] for b in CPU.match(
                    g, plan, progress=lambda d, t, c=calls: c.append((d, t))))
            assert got == REF.count(g, plan)
            assert len(calls) > 100


def test_watchdog_writes_at_the_deadline_unless_disarmed() -> None:
    import time
    from warpmatch.engine._watchdog import STOP_NOW, Watchdog
    dog = Watchdog()
    kept, fired = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    dog.disarm(dog.arm(kept, 0.5))
    dog.arm(fired, 0.05)
    t0 = time.monotonic()
    while fired[0] == 0 and time.monotonic() - t0 < 30:
        time.sleep(0.005)
    assert fired[0] == STOP_NOW and kept[0] == 0


def test_stop_ends_a_count_early() -> None:
    from warpmatch.engine import cpu
    g = _hub_graph()
    plan = build_plan(g, get_pattern("diamond"))
    full = REF.count(g, plan)
    seen: list[int] = []

    def stop(n: int) -> bool:
        seen.append(n)
        return True

    old = cpu.FIRST_BUDGET, cpu.CALL_S
    try:
        cpu.FIRST_BUDGET, cpu.CALL_S = 1, 0.0
        partial = CPU.count(g, plan, stop=stop)
    finally:
        cpu.FIRST_BUDGET, cpu.CALL_S = old
    assert seen == [partial] and 0 <= partial < full     # asked once, stopped at once
    assert CPU.count(g, plan, stop=lambda n: False) == full


# ------------------------------------------------------------ edge cases
def test_single_vertex_query() -> None:
    g = Graph.from_edges([0, 1], [1, 2], n=5, vertex_labels=[0, 1, 0, 1, 0])
    q = Query.from_edges([], k=1, vertex_labels=[0])
    plan = build_plan(g, q, purpose="list")
    assert CPU.count(g, plan) == REF.count(g, plan) == 3
    assert sorted(_rows(CPU.match(g, plan, batch_size=2), 1)) == [(0,), (2,), (4,)]


def test_graph_without_edges_and_empty_roots() -> None:
    g = Graph.from_edges([], [], n=6)
    plan = build_plan(g, get_pattern("triangle"))
    assert CPU.count(g, plan) == 0
    assert list(CPU.match(g, plan)) == []
    g2 = Graph.from_edges([0, 1], [1, 2], vertex_labels=[0, 0, 0])
    q = Query.from_edges([(0, 1)], vertex_labels=[5, -1])   # label absent: no roots
    plan2 = build_plan(g2, q)
    assert CPU.count(g2, plan2) == 0 and list(CPU.match(g2, plan2)) == []


def test_int64_index_graph() -> None:
    G = nx.gnp_random_graph(30, 0.3, seed=5, directed=True)
    e = np.array(list(G.edges()), dtype=np.int64)
    g32 = Graph.from_edges(e[:, 0], e[:, 1], n=30, directed=True)
    g64 = Graph(n=g32.n, indptr=g32.indptr, indices=g32.indices.astype(np.int64),
                directed=True, in_indptr=g32.in_indptr,
                in_indices=g32.in_indices.astype(np.int64))
    q = Query.from_edges([(0, 1), (1, 2), (2, 0), (0, 3)], directed=True)
    p32 = build_plan(g32, q, purpose="list")
    p64 = build_plan(g64, q, purpose="list")
    assert p64.cand_ids.dtype == np.int64
    assert CPU.count(g64, p64) == CPU.count(g32, p32) == REF.count(g32, p32)
    assert set(_rows(CPU.match(g64, p64), 4)) == set(_rows(CPU.match(g32, p32), 4))


def test_threads_do_not_change_results() -> None:
    G = nx.barabasi_albert_graph(200, 3, seed=7)
    e = np.array(list(G.edges()), dtype=np.int64)
    g = Graph.from_edges(e[:, 0], e[:, 1], n=200)
    plan = build_plan(g, get_pattern("diamond"), purpose="list")
    one = CpuEngine(threads=1)
    three = CpuEngine(threads=3)
    assert one.count(g, plan) == three.count(g, plan) == CPU.count(g, plan)
    assert (set(_rows(one.match(g, plan, batch_size=9), 4))
            == set(_rows(three.match(g, plan, batch_size=9), 4)))
