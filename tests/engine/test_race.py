"""The order race (issue 23, item 2): a count searched in RI's and GraphQL's orders, taking
turns, the first to finish answering (``plan.rival``, ``engine.race``).

- ``rival_plans`` keep the first plan's candidate sets, restrictions and multiplier, and are
  made only where they apply (labeled, five or more vertices, not anchored, not cut by
  parts, a different order).
- Counts equal the reference engine's on random labeled graphs and queries, in both modes
  and induced, both through the rival plan alone and through ``count_race`` racing from the
  first call (``after=0``).
- A limit stops the race with a lower bound; the engine's stats say which order answered.
- A listing with a limit (``match_race``) lists distinct, real matches, all of them where
  the limit is above the count, in the order of whichever search found a match first.
- Through the API and the CLI (the default order, ``"auto"``): the count equals
  ``order="ri"``'s, only a count with a limit races, and ``--json`` names the order; on
  human, ``query_sparse_20_6``, where RI's order finds no match in 30 s, the race answers
  the first 10^5 embeddings in GraphQL's order or the core order.
- Where the plan moved a class of twins to its end, the first rival is RI's order with the
  twins where RI put them (``ri-unmoved``); on yeast, ``query_sparse_32_144``, which finds
  no match with its twins last in any order, it answers the first 10^5 embeddings.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.engine.cpu import CpuEngine
from warpmatch.engine.race import can_race, count_beside, count_race, match_race
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.graph.generators import erdos_renyi, random_labels, with_labels
from warpmatch.plan import build_plan
from warpmatch.plan.order import ri_order
from warpmatch.plan.rival import (race_applies, random_order, random_plan, rival_orders,
                                  rival_plans)
from warpmatch.query.model import Query

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_helpers import graphs, queries  # noqa: E402

CPU, REF = CpuEngine(), ReferenceEngine()
pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _labeled(n: int = 60, p: float = 0.12, labels: int = 3, seed: int = 1):
    # skewed labels (label 2 the rarest), so that candidate counts differ
    return with_labels(erdos_renyi(n, p=p, seed=seed),
                       vertex_labels=random_labels(n, labels, "zipf", seed=seed))


# a labeled 6-vertex query whose GraphQL order (from e, the rarest label) differs from
# RI's (from c, the most edges): a triangle of label 0 with a path of labels 1, 2, 1
PATHY = "a:0-b:0, b:0-c:0, c:0-a:0, c:0-d:1, d:1-e:2, e:2-f:1"


def test_rival_keeps_the_search_and_changes_only_the_order():
    g = _labeled()
    plan = build_plan(g, Query.parse(PATHY), purpose="count", order="auto")
    assert race_applies(plan)
    rivals = rival_plans(plan)
    assert rivals and rivals[0].order_name == "gql"
    orders = [list(plan.order)] + [list(r.order) for r in rivals]
    assert len({tuple(o) for o in orders}) == len(orders)      # each a different order
    rival = rivals[0]
    assert list(rival.order) != list(plan.order)
    assert sorted(rival.order.tolist()) == list(range(plan.k))
    assert rival.multiplier == plan.multiplier and rival.mode == plan.mode
    for u in range(plan.k):
        d0, d1 = int(plan.inverse_order[u]), int(rival.inverse_order[u])
        if rival.cand_restricted[d1] and d1 > 0:
            np.testing.assert_array_equal(
                rival.cand_ids[rival.cand_ptr[d1]:rival.cand_ptr[d1 + 1]],
                plan.cand_ids[plan.cand_ptr[d0]:plan.cand_ptr[d0 + 1]])
    assert CPU.count(g, rival) == CPU.count(g, plan) == REF.count(g, plan)


# twins s, t (label 1, both adjacent to a and b) that RI orders before d, and that the
# count's plan moves to its end (plan.order.twins_last)
TWINS = "a:0-b:0, a:0-c:0, b:0-c:0, a:0-s:1, b:0-s:1, a:0-t:1, b:0-t:1, c:0-d:2"


def test_first_rival_keeps_the_twins_where_ri_put_them():
    g = _labeled(400, 0.05, labels=3, seed=7)
    q = Query.parse(TWINS)
    plan = build_plan(g, q, purpose="count", order="auto")
    names = q.names
    assert [names[u] for u in plan.order[-2:]] == ["s", "t"]        # moved last
    counts = [plan.filter_counts[u]["refined"] for u in range(plan.k)]
    name, order = rival_orders(plan)[0]
    assert name == "ri-unmoved" and order == ri_order(q, counts)
    assert order.index(names.index("d")) > order.index(names.index("t"))
    rival = rival_plans(plan)[0]
    want = REF.count(g, plan)
    assert want > 0 and CPU.count(g, rival) == CPU.count(g, plan) == want
    # induced plans keep RI's order (no twins moved), so no such rival
    induced = build_plan(g, q, purpose="count", order="auto", induced=True)
    assert all(n != "ri-unmoved" for n, _ in rival_orders(induced))


def test_no_rival_where_the_race_does_not_apply():
    g = _labeled()
    unl = erdos_renyi(40, p=0.2, seed=2)
    assert rival_plans(build_plan(unl, Query.parse("a-b, b-c, c-d, d-e, e-a, a-c"))) == []
    assert rival_plans(build_plan(g, Query.parse("a:0-b:0, b:0-c:1, c:1-a:0"))) == []   # k=3
    anchored = build_plan(g, Query.parse(PATHY), anchors={"a": [0, 1, 2, 3]})
    assert rival_plans(anchored) == []


@given(data=st.data())
@SETTINGS
def test_race_counts_equal_the_reference(data):
    g = data.draw(graphs(labels=True, nmax=12))
    q = data.draw(queries(g, kmin=5, kmax=7))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    plan = build_plan(g, q, mode=mode, induced=induced, purpose="count", order="auto")
    want = REF.count(g, plan)
    rivals = rival_plans(plan)
    for rival in rivals:
        assert CPU.count(g, rival) == want, rival.order_name
    rng = np.random.default_rng(0)
    for i in range(2 if rivals else 0):         # the restarts' random orders, the same count
        assert CPU.count(g, random_plan(plan, rng, i)) == want
    raw, used = count_race(CPU, g, plan, after=0.0)
    assert raw == want
    assert used.multiplier == plan.multiplier
    assert CPU.last_stats["raced"] == bool(rivals)
    assert CPU.last_stats["order"] == used.order_name
    assert ("random_orders" in CPU.last_stats) == bool(rivals)


def test_random_orders_are_connected_and_start_at_the_roots():
    g = _labeled(200, 0.08, labels=3, seed=2)
    q = Query.parse("a:0-b:0, b:0-c:1, c:1-d:2, d:2-a:0, d:2-e:1, e:1-f:0, f:0-g:2")
    plan = build_plan(g, q, purpose="count", order="auto")
    A = q.adjacency()
    A = A | A.T
    starts = set()
    for seed in range(20):
        order = random_order(plan, np.random.default_rng(seed))
        assert sorted(order) == list(range(q.k))
        assert all(A[u, order[:i]].any() for i, u in enumerate(order) if i)
        assert plan.cand_restricted[int(plan.inverse_order[order[0]])]
        assert order == random_order(plan, np.random.default_rng(seed))   # seeded
        starts.add(order[0])
    assert len(starts) > 1


def test_restarts_draw_new_orders_and_the_count_stays_exact(monkeypatch):
    """With no time before a restart, the random search draws a new order at every turn
    (it never finds a match): the race still ends with the first plan's exact count."""
    import warpmatch.engine.race as race
    g = _labeled(300, 0.06, labels=3, seed=3)
    plan = build_plan(g, Query.parse(PATHY), purpose="count", order="auto")
    want = REF.count(g, plan)
    monkeypatch.setattr(race, "RESTART_S", 0.0)
    raw, used = count_race(CPU, g, plan, after=0.0)
    assert raw == want and CPU.last_stats["random_orders"] > 1
    assert not used.order_name.startswith("random-")


def test_human_query_no_fixed_order_starts_is_answered_by_random_orders(data_path):
    """human's ``query_sparse_20_22``: RI's, GraphQL's and the core order found no match in
    15 s each on the 2-core box (and on the H100 host, beside the device, none in 1 s);
    random connected orders most often find one in 0.02-0.05 s."""
    from warpmatch.query.io import read_query_file
    human = data_path("labeled", "human")
    g = wm.read_graph(human / "human.graph")
    q = read_query_file(human / "query_graph" / "query_sparse_20_22.graph")
    r = wm.count_result(g, q, backend="cpu", limit=100_000, time_limit=60)
    assert r.partial is not None and r.partial.startswith("limit") and r.count >= 100_000
    assert r.raced


def test_race_from_the_start_on_a_larger_graph_and_a_limit():
    g = _labeled(400, 0.05, labels=3, seed=7)
    q = Query.parse(PATHY)
    plan = build_plan(g, q, purpose="count", order="auto")
    want = CPU.count(g, plan)
    assert want > 1000
    raw, used = count_race(CPU, g, plan, after=0.0)
    assert raw == want and CPU.last_stats["raced"]
    seen = []
    raw, used = count_race(CPU, g, plan, after=0.0, stop=lambda c: seen.append(c) or c >= 1)
    assert 1 <= raw <= want and seen
    assert can_race(CPU) and not can_race(REF)


def test_api_default_order_equals_ri_and_races_only_with_a_limit(monkeypatch):
    import warpmatch.engine.race as race
    g = _labeled(300, 0.06, labels=3, seed=3)
    q = Query.parse(PATHY)
    ri = wm.count_result(g, q, backend="cpu", order="ri")
    full = wm.count_result(g, q, backend="cpu")
    assert full.count == ri.count and not full.raced and full.as_dict()["order"] == "auto"
    assert ri.as_dict()["order"] == "ri" and not ri.as_dict()["order_raced"]
    # from the first call (no head start): a limit above the count, so both run to the end
    monkeypatch.setattr(race, "RACE_AFTER", 0.0)
    capped = wm.count_result(g, q, backend="cpu", limit=10 * ri.count)
    assert capped.count == ri.count and capped.partial is None and capped.raced
    assert (capped.as_dict()["order"] in ("auto", "gql")
            or capped.as_dict()["order"].startswith("random-")) and capped.as_dict()["order_raced"]
    assert "also searches in the gql" in wm.explain(g, q, backend="cpu")


def _first_answers(data_path, graph: str, query: str) -> dict:
    """``warpmatch count --limit 100000 --json`` of a shipped query on the CPU engine: its
    JSON, checked to have reached the limit."""
    from click.testing import CliRunner

    from warpmatch.cli import cli
    base = data_path("labeled", graph)
    qf = base / "query_graph" / f"{query}.graph"
    r = CliRunner().invoke(cli, ["count", str(base / f"{graph}.graph"), str(qf), "--backend",
                                  "cpu", "--limit", "100000", "--time-limit", "60", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output.strip().splitlines()[-1])
    assert d["partial_reason"].startswith("limit") and d["count"] >= 100_000
    return d


def test_human_query_that_ri_cannot_start_is_answered_by_the_race(data_path):
    d = _first_answers(data_path, "human", "query_sparse_20_6")
    # GraphQL's order and the core order both start at once; which answers depends on
    # which one's kernel call reaches the limit first (their turns' lengths are timed)
    assert d["order_raced"] and (d["order"] in ("gql", "core") or d["order"].startswith("random-"))


def test_yeast_query_with_twins_last_is_answered_by_ri_unmoved(data_path):
    d = _first_answers(data_path, "yeast", "query_sparse_32_144")
    assert d["order_raced"] and (d["order"] == "ri-unmoved" or d["order"].startswith("random-"))


def _rows(batches) -> list[tuple[int, ...]]:
    return [tuple(int(x) for x in r) for p, b in batches for r in p.to_query_order(b)]


@given(data=st.data())
@SETTINGS
def test_listing_race_lists_the_matches(data):
    g = data.draw(graphs(labels=True, nmax=12))
    q = data.draw(queries(g, kmin=5, kmax=6))
    plan = build_plan(g, q, mode="subgraphs", purpose="list", order="auto")
    want = sorted(_rows((plan, b) for b in REF.match(g, plan)))
    got = sorted(_rows(match_race(CPU, g, plan, 7, len(want) + 3, after=0.0)))
    assert got == want
    if len(want) > 2:
        part = _rows(match_race(CPU, g, plan, 7, 2, after=0.0))
        assert len(part) == 2 and len(set(part)) == 2 and set(part) <= set(want)


def test_listing_race_on_a_larger_graph():
    g = _labeled(400, 0.05, labels=3, seed=7)
    plan = build_plan(g, Query.parse(PATHY), purpose="list", order="auto")
    rows = _rows(match_race(CPU, g, plan, 1000, 5000, after=0.0))
    assert len(rows) == len(set(rows)) == 5000
    _assert_embeddings(g, plan.query, rows[:500])


def _assert_embeddings(g, q, rows) -> None:
    """Each row (internal ids, query-vertex order) is an injective map that keeps the
    query's labels and edges."""
    for r in rows:
        assert len(set(r)) == q.k
        for u in range(q.k):
            lab = int(q.vertex_labels[u])
            assert lab < 0 or int(g.vertex_labels[r[u]]) == lab
        for a, b in q.edges.tolist():
            assert g.has_edge(r[a], r[b])


def _check_human_listing(data_path, query: str, limit: int) -> None:
    """``match --limit`` of a shipped 20-vertex human query on the CPU engine lists
    ``limit`` distinct rows, each an embedding."""
    from warpmatch.query.io import read_query_file
    human = data_path("labeled", "human")
    g = wm.read_graph(human / "human.graph")
    q = read_query_file(human / "query_graph" / f"{query}.graph")
    rows = np.concatenate(list(wm.match(g, q, limit=limit, backend="cpu")))
    assert rows.shape == (limit, 20) and len({tuple(r) for r in rows.tolist()}) == limit
    _assert_embeddings(g, q, g.to_internal(rows.ravel()).reshape(rows.shape).tolist())


def test_human_listing_that_ri_cannot_start_is_answered_by_the_race(data_path):
    _check_human_listing(data_path, "query_sparse_20_6", 1000)


def test_human_listing_no_fixed_order_starts_is_answered_by_random_orders(data_path):
    """``match --limit`` of human's ``query_sparse_20_22`` (no match in 15 s in any of the
    three fixed orders): the listing race's random orders find the rows."""
    _check_human_listing(data_path, "query_sparse_20_22", 100)


def test_yeast_query_that_ri_and_gql_cannot_start(data_path):
    """yeast's ``query_sparse_32_193``: no match in 10 s in RI's or GraphQL's order (twins
    last), 10^5 at once in the core order and in RI's with the twins in place: the race
    answers, in one of those two (whichever takes its turn first)."""
    from warpmatch.query.io import read_query_file
    yeast = data_path("labeled", "yeast")
    g = wm.read_graph(yeast / "yeast.graph")
    q = read_query_file(yeast / "query_graph" / "query_sparse_32_193.graph")
    r = wm.count_result(g, q, backend="cpu", limit=100_000, time_limit=60)
    assert r.partial is not None and r.partial.startswith("limit") and r.count >= 100_000
    assert r.raced and (r.plan.order_name in ("core", "ri-unmoved")
                        or r.plan.order_name.startswith("random-"))


class _Stalled:
    """An engine that cannot interleave and never finishes by itself (a GPU search stuck in
    a bad order): it asks ``stop`` every millisecond, as the GPU engine does between
    launches, and counts nothing."""

    name = "stalled"

    def __init__(self, fail: bool = False):
        self.fail, self.asked = fail, 0
        self.last_stats = {}

    def count(self, graph, plan, progress=None, stop=None):
        import time
        self.last_stats = {"compile_s": 0.5}        # as the GPU engine's search starts
        if self.fail:
            raise RuntimeError("device lost")
        for _ in range(60_000):                       # 60 s at most: a failure, not a hang
            self.asked += 1
            if stop is not None and stop(0):
                return 0
            time.sleep(0.001)
        raise AssertionError("the rivals never answered")


def _rival_threads() -> list:
    """The CPU searches' threads still alive, once each has had time to see that the count
    is over (count_beside waits for them only briefly)."""
    import threading
    left = [t for t in threading.enumerate() if t.name == "warpmatch-rivals"]
    for t in left:
        t.join(30)
    return [t for t in left if t.is_alive()]


def test_rivals_beside_answer_for_a_stalled_engine():
    g = _labeled(300, 0.06, labels=3, seed=3)
    plan = build_plan(g, Query.parse(PATHY), purpose="count", order="auto")
    want = REF.count(g, plan)
    eng = _Stalled()
    raw, used = count_beside(eng, g, plan, after=0.0, cpu=CPU)
    # the CPU engine searches the plan's own order too, taking turns with the rivals
    assert raw == want and (used is plan or used.order_name in {n for n, _ in rival_orders(plan)}
                            or used.order_name.startswith("random-"))
    assert eng.last_stats["raced"] and eng.last_stats["raced_on"] == "cpu"
    assert eng.last_stats["order"] == used.order_name and eng.last_stats["compile_s"] == 0.5
    assert not _rival_threads()
    # a limit: the rivals stop at it, and their count (a lower bound) answers
    seen = []
    raw, used = count_beside(_Stalled(), g, plan, after=0.0, cpu=CPU,
                             stop=lambda c: seen.append(c) or c >= 3)
    assert 3 <= raw <= want and seen


class _Compiling:
    """An engine that cannot be stopped for a while at its start (the GPU engine compiling
    a module for a query of a new size): it asks ``stop`` only once ``go`` is set."""

    name = "compiling"

    def __init__(self):
        import threading
        self.go, self.ended = threading.Event(), threading.Event()
        self.last_stats = {}

    def count(self, graph, plan, progress=None, stop=None):
        self.last_stats = {"compile_s": 0.0}
        try:
            assert self.go.wait(60), "count_beside waited for the compiling engine"
            return 0 if stop is not None and stop(0) else 10 ** 9
        finally:
            self.ended.set()


def test_rivals_beside_answer_while_the_engine_cannot_stop_yet():
    """The CPU engine's answer is returned at once, not when the engine's search can first
    be stopped (it is left to end by itself, in its own thread)."""
    g = _labeled(300, 0.06, labels=3, seed=3)
    plan = build_plan(g, Query.parse(PATHY), purpose="count", order="auto")
    want = REF.count(g, plan)
    eng = _Compiling()
    raw, used = count_beside(eng, g, plan, after=0.0, cpu=CPU)
    # returned while the engine was still blocked (it would have waited 60 s otherwise)
    assert not eng.go.is_set() and not eng.ended.is_set()
    assert raw == want and eng.last_stats["raced_on"] == "cpu"
    assert eng.last_stats["device_pending"] and eng.last_stats["raced"]
    eng.go.set()
    # the search left behind sees that the count is over at its first stop, and ends
    assert eng.ended.wait(30) and not _device_threads()


def test_rivals_beside_start_after_the_default_head_start(monkeypatch):
    """Without ``after``, the CPU engine's searches start after
    :data:`~warpmatch.engine.race.BESIDE_AFTER` (not the CPU-only race's RACE_AFTER): with
    it set to an hour they never start and the engine answers; with it at 0 they answer
    for an engine that cannot stop yet."""
    import warpmatch.engine.race as race
    g = _labeled(300, 0.06, labels=3, seed=3)
    plan = build_plan(g, Query.parse(PATHY), purpose="count", order="auto")
    want = REF.count(g, plan)
    monkeypatch.setattr(race, "BESIDE_AFTER", 3600.0)
    raw, _ = count_beside(REF, g, plan, cpu=CPU)
    assert raw == want and not REF.last_stats.get("raced_on")
    monkeypatch.setattr(race, "BESIDE_AFTER", 0.0)
    monkeypatch.setattr(race, "RACE_AFTER", 3600.0)     # (not the head start used here)
    eng = _Compiling()
    raw, _ = count_beside(eng, g, plan, cpu=CPU)
    assert raw == want and eng.last_stats["raced_on"] == "cpu"
    eng.go.set()
    assert eng.ended.wait(30) and not _device_threads()


def test_rivals_beside_start_at_once_when_the_device_is_held():
    """Where the engine says another search holds the device (``busy()``: one left
    running by an earlier race, compiling), the CPU engine does not wait for its head
    start."""
    g = _labeled(300, 0.06, labels=3, seed=3)
    plan = build_plan(g, Query.parse(PATHY), purpose="count", order="auto")
    eng = _Compiling()
    eng.busy = lambda: True
    raw, used = count_beside(eng, g, plan, after=60.0, cpu=CPU)
    assert raw == REF.count(g, plan) and eng.last_stats["raced_on"] == "cpu"
    eng.go.set()
    assert eng.ended.wait(30) and not _device_threads()


def test_warm_racers_once_per_process_and_dtype(monkeypatch):
    """The CPU searches beside a device search are compiled (or loaded) before the first
    race, once per index dtype, and count_result times it as warm-up."""
    import warpmatch.engine.race as race
    g = _labeled(300, 0.06, labels=3, seed=3)
    monkeypatch.setattr(race, "_RACERS_WARM", set())
    ran = []
    real = race.count_race
    monkeypatch.setattr(race, "count_race", lambda *a, **kw: ran.append(a[2]) or real(*a, **kw))
    assert race.warm_racers(g) > 0.0 and len(ran) == 1
    assert rival_orders(ran[0])          # its race has rivals: the turns' code runs too
    assert race.warm_racers(g) == 0.0 and len(ran) == 1
    # count_result warms them where a count races beside the engine
    monkeypatch.setattr(race, "_RACERS_WARM", set())
    monkeypatch.setattr(race, "races_beside", lambda engine: engine.name == "reference")
    r = wm.count_result(g, Query.parse(PATHY), backend="reference", limit=10)
    assert len(ran) == 2 and r.warmup_seconds > 0.0


def _device_threads() -> list:
    import threading
    left = [t for t in threading.enumerate() if t.name == "warpmatch-device"]
    for t in left:
        t.join(30)
    return [t for t in left if t.is_alive()]


def test_rivals_beside_wait_for_their_turn_and_stop_with_the_count():
    g = _labeled(300, 0.06, labels=3, seed=3)
    plan = build_plan(g, Query.parse(PATHY), purpose="count", order="auto")
    # the first search answers before the rivals' head start is over: no rival ran
    raw, used = count_beside(REF, g, plan, after=60.0, cpu=CPU)
    assert raw == REF.count(g, plan) and used is plan
    assert not REF.last_stats["raced"] and "raced_on" not in REF.last_stats
    assert not _rival_threads()
    # a failing first search fails the count, and the rivals' thread ends with it (their
    # head start not over: with none, the CPU engine may answer first, which then stands)
    with pytest.raises(RuntimeError, match="device lost"):
        count_beside(_Stalled(fail=True), g, plan, after=60.0, cpu=CPU)
    assert not _rival_threads()
    # with the rivals racing at once: the CPU engine's answer, or the failure
    try:
        raw, _ = count_beside(_Stalled(fail=True), g, plan, after=0.0, cpu=CPU)
    except RuntimeError as exc:
        assert "device lost" in str(exc)
    else:
        assert raw == REF.count(g, plan)
    assert not _rival_threads()
    # no rivals (an unlabeled query): the first search alone, to its end
    unl = erdos_renyi(40, p=0.2, seed=2)
    p2 = build_plan(unl, Query.parse("a-b, b-c, c-d, d-e, e-a, a-c"), purpose="count")
    raw, used = count_beside(REF, unl, p2, after=0.0, cpu=CPU)
    assert raw == REF.count(unl, p2) and used is p2 and not REF.last_stats["raced"]


def test_api_races_rivals_beside_an_engine_that_cannot_interleave(monkeypatch):
    """count_result on an engine like the GPU one (here the reference engine, taken for
    one): the CPU engine races the plan's order and its rivals beside it, and --json says
    where the answer came from."""
    import warpmatch.engine.race as race
    monkeypatch.setattr(race, "races_beside", lambda engine: engine.name == "reference")
    monkeypatch.setattr(race, "RACE_AFTER", 0.0)
    g = _labeled(300, 0.06, labels=3, seed=3)
    q = Query.parse(PATHY)
    full = wm.count_result(g, q, backend="cpu", order="ri")
    r = wm.count_result(g, q, backend="reference", limit=10 * full.count)
    assert r.count == full.count and r.partial is None and r.raced
    d = r.as_dict()
    assert d["order_raced"] and d["order_raced_on"] in (None, "cpu")
    # a rival order answers on the CPU engine only; RI's order may answer on either
    assert r.plan.order_name == "auto" or d["order_raced_on"] == "cpu"
    assert wm.count_result(g, q, backend="cpu").as_dict()["order_raced_on"] is None
