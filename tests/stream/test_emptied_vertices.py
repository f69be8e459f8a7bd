"""Vertices that lose every edge and later get new ones (issue 16).

RapidFlow reads out of bounds on such streams (CollegeMsg with a one-week
window). Here a vertex's storage row goes to degree 0 and is refilled in every
way the store can see it: a hub emptied (its row keeps its capacity), rows of
capacity 0 from the start (isolated vertices of ``G_0``), a vertex emptied and
refilled back to back (inside one batch, or across batches), vertices the
stream creates and then empties and refills, the whole graph emptied (the store
compacts: every row back to capacity 0) and refilled, and, directed, only the
out-row or only the in-row emptied. Per-update counts and listed matches are
checked against static recounts of every state by the reference engine (the
edge-dict oracle of ``test_matcher``), for batch sizes 1, 3 and the whole
stream, listing and ``counts_only``, slack 0 (every refill moves the row) and
the default. The real-data test replays CollegeMsg with a one-week window.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_matcher import Oracle, deltas, replay

import warpmatch as wm
from warpmatch.errors import InputCleanupWarning, UnknownLabelWarning
from warpmatch.query.model import Query
from warpmatch.stream.dynamic import DynamicGraph
from warpmatch.stream.matcher import ContinuousMatcher
from warpmatch.stream.types import Updates

NEW = 5000          # first id of the vertices the streams create


class StreamBuilder:
    """Writes a valid update list against a model of the current edges (external ids)."""

    def __init__(self, rng: random.Random, directed: bool, elab: int, edges: dict):
        self.rng, self.directed, self.elab = rng, directed, elab
        self.cur = dict(edges)
        self.ups: list[tuple[int, int, int, int]] = []

    def key(self, u: int, v: int) -> tuple[int, int]:
        return (u, v) if self.directed or u < v else (v, u)

    def has(self, u: int, v: int) -> bool:
        return self.key(u, v) in self.cur

    def ins(self, u: int, v: int) -> None:
        assert u != v and not self.has(u, v), (u, v)
        lab = self.rng.randrange(self.elab) if self.elab else 0
        self.cur[self.key(u, v)] = lab
        self.ups.append((u, v, 1, lab))

    def rm(self, u: int, v: int) -> None:
        k = self.key(u, v)
        lab = self.cur.pop(k)
        if not self.directed and self.rng.random() < 0.5:
            u, v = v, u                      # either orientation names an undirected edge
        self.ups.append((u, v, -1, lab))

    def incident(self, v: int, out: bool = True, inn: bool = True) -> list:
        return sorted(k for k in self.cur if (out and k[0] == v) or (inn and k[1] == v)
                      or (not self.directed and v in k))

    def empty(self, v: int, out: bool = True, inn: bool = True, keep: int = 0,
              noise: list | None = None) -> None:
        """Delete the edges of ``v`` (all but ``keep``) in random order, with inserts
        among ``noise`` vertices in between."""
        edges = self.incident(v, out, inn)
        self.rng.shuffle(edges)
        for a, b in edges[:len(edges) - keep]:
            self.rm(a, b)
            if noise and self.rng.random() < 0.4:
                x, y = self.rng.sample(noise, 2)
                if not self.has(x, y):
                    self.ins(x, y)

    def fill(self, v: int, targets: list, out: bool = True) -> None:
        """Insert ``v -> t`` (or ``t -> v`` with ``out=False``) for every new target."""
        for t in targets:
            a, b = (v, t) if out else (t, v)
            if t != v and not self.has(a, b):
                self.ins(a, b)

    def degree(self, v: int) -> int:
        return len(self.incident(v))


def emptying_stream(seed: int, directed: bool, vlab: int, elab: int):
    """(oracle of G_0, updates): every way of emptying a row and refilling it, in order."""
    rng = random.Random(seed)
    ext = [100 + 3 * i for i in range(12)]           # ids unlike internal ones
    hub, core, iso0, iso1 = ext[0], ext[1:10], ext[10], ext[11]
    b = StreamBuilder(rng, directed, elab, {})
    for x in core:                                    # the hub: an edge to every core vertex
        b.fill(hub, [x], out=not directed or rng.random() < 0.5)
    while len(b.cur) < 9 + 14:
        x, y = rng.sample(core, 2)
        b.fill(x, [y])
    g0_edges, b.ups = dict(b.cur), []
    vl = {x: rng.randrange(vlab) for x in ext} if vlab else None
    new_ids = [NEW, NEW + 1]
    new_labels = [rng.randrange(vlab) if vlab else 0 for _ in new_ids]
    # 1. the hub loses every edge (its row keeps its capacity), with traffic elsewhere
    b.empty(hub, noise=core)
    # 2. rows of capacity 0 from the start: the isolated vertices get edges (first to
    #    each other), and the emptied hub gets new ones
    b.ins(iso0, iso1)
    b.ins(hub, iso0)
    b.ins(iso1, hub)
    b.fill(hub, rng.sample(core, 3))
    # 3. a vertex the stream creates, empties and refills
    b.ins(NEW, core[0])
    b.ins(core[1], NEW)
    b.ins(NEW, hub)
    b.empty(NEW)
    b.fill(NEW, [core[2], core[3], iso0])
    # 4. emptied and refilled back to back (one batch of 3 or more; across batches of 1)
    v = core[4]
    b.empty(v, keep=1)
    (a0, b0), = b.incident(v)
    w = [x for x in core if x != v and not b.has(v, x)][:2]
    b.rm(a0, b0)
    b.ins(v, w[0])
    b.rm(v, w[0])
    b.ins(w[1], v)
    b.ins(v, w[0])
    # 5. directed: only the out-row, or only the in-row, emptied and refilled
    if directed:
        b.empty(core[5], inn=False)
        b.fill(core[5], [core[6], hub, iso1])
        b.empty(core[6], out=False)
        b.fill(core[6], [core[7], hub, iso0], out=False)
    # 6. a vertex created by an update and emptied by the next one, refilled later
    b.ins(NEW + 1, core[7])
    b.rm(NEW + 1, core[7])
    b.ins(iso0, core[8])
    b.ins(NEW + 1, hub)
    b.ins(core[7], NEW + 1)
    # 7. the hub emptied again, refilled beyond its old capacity (the row moves)
    b.empty(hub, noise=core)
    b.fill(hub, core + [iso0, iso1, NEW, NEW + 1])
    # 8. every edge deleted (the store compacts its rows to capacity 0), then refilled
    edges = sorted(b.cur)
    rng.shuffle(edges)
    for x, y in edges:
        b.rm(x, y)
    assert not b.cur
    everyone = ext + new_ids
    for x in [hub, iso0, NEW] + core[:5]:
        b.fill(x, rng.sample([y for y in everyone if y != x], 3),
               out=not directed or rng.random() < 0.5)
    oracle = Oracle(directed, vl, bool(elab), g0_edges)
    oracle.vertices |= set(ext)                       # isolated vertices of G_0
    if vl is not None:
        oracle.vlabels.update(zip(new_ids, new_labels))   # declared; used when created
    arr = np.asarray(b.ups, np.int64)
    ups = Updates(arr[:, 0], arr[:, 1], arr[:, 2].astype(np.int8),
                  arr[:, 3].astype(np.int32) if elab else None,
                  new_vertex_ids=np.asarray(new_ids if vlab else [], np.int64),
                  new_vertex_labels=np.asarray(new_labels if vlab else [], np.int32))
    return oracle, ups


def emptied_and_refilled(directed: bool, g0: wm.Graph, ups: Updates) -> list[tuple]:
    """Every ``(vertex, row, emptied at, refilled at)``: update indices at which a row
    (``out``/``in``; undirected: ``out``) of a vertex went to degree 0 and got its next
    entry. A G_0 vertex without edges counts as emptied at -1."""
    deg: dict[tuple, int] = {}
    since: dict[tuple, int] = {}
    s, d = g0.edges()
    for a, b in zip(g0.to_external(s).tolist(), g0.to_external(d).tolist()):
        for row in ([(a, "out"), (b, "in")] if directed else [(a, "out"), (b, "out")]):
            deg[row] = deg.get(row, 0) + 1
    for v in g0.to_external(np.arange(g0.n)).tolist():
        for row in ([(v, "out"), (v, "in")] if directed else [(v, "out")]):
            if deg.get(row, 0) == 0:
                since[row] = -1
    out = []
    for i, (a, b, o) in enumerate(zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist())):
        for row in ([(a, "out"), (b, "in")] if directed else [(a, "out"), (b, "out")]):
            deg[row] = deg.get(row, 0) + o
            if o < 0 and deg[row] == 0:
                since[row] = i
            elif o > 0 and deg[row] == 1 and row in since:
                out.append((row[0], row[1], since.pop(row), i))
    return out


def labeled_query(text: str, vlab: int, elab: int, directed: bool) -> Query:
    q = Query.parse(text)
    vl, el = q.vertex_labels.copy(), q.edge_labels.copy()
    if vlab:
        vl[1] = 0
    if elab:
        el[0] = 1
    return Query(q.k, q.edges, el, vl, directed=directed, names=q.names)


QUERIES = {
    False: [("a-b, b-c, c-a", False), ("a-b, b-c, c-d, d-a", False),
            ("a-b, b-c, c-a, c-d", True)],
    True: [("a->b, b->c, c->a", False), ("a->b, b->c, a->c", False),
           ("a->b, c->b, c->d", True)],
}
LABELS = [(0, 0), (2, 0), (0, 2), (2, 2)]


def expected_deltas(oracle: Oracle, ups: Updates, q: Query, induced: bool,
                    mode: str = "embeddings") -> tuple[list, int, int]:
    """Per-update (plus count, minus count, plus rows, minus rows) from static recounts of
    every state by the reference engine; and the counts of G_0 and of the final graph."""
    with warnings.catch_warnings():       # states without a label the query names
        warnings.simplefilter("ignore", UnknownLabelWarning)
        sets, valid = replay(oracle, ups, q, mode, induced, backend="reference")
    assert all(valid)
    rows = [(len(p), len(m), p, m) for p, m in
            ((sets[i + 1] - sets[i], sets[i] - sets[i + 1]) for i in range(len(ups)))]
    return rows, len(sets[0]), len(sets[-1])


def check_against_oracle(make_oracle, ups: Updates, q: Query, induced: bool,
                         backend: str = "cpu", slacks=(0.0, 0.25), mode: str = "embeddings",
                         allocator=np.empty, **engine_options) -> None:
    """Run the matcher over ``ups`` at batch sizes 1, 3 and all (listing; counts only
    at 3 and all), the store's slack alternating between ``slacks`` (0 moves every row
    that grows), and compare every update's delta with the oracle's."""
    want, first, last = expected_deltas(make_oracle(), ups, q, induced, mode)
    assert sum(p + m for p, m, _, _ in want) > 0          # the stream changes the matches
    g0 = make_oracle().graph()
    runs = [(1, False), (3, False), (3, True), (len(ups), False), (len(ups), True)]
    for r, (batch, counts_only) in enumerate(runs):
        slack = slacks[r % len(slacks)]
        dg = DynamicGraph(g0, slack=slack, allocator=allocator)
        cm = ContinuousMatcher(dg, q, mode=mode, induced=induced, backend=backend,
                               **engine_options)
        got = deltas(cm, ups, batch, counts_only)
        assert cm.initial_count == first
        for i, (g, w) in enumerate(zip(got, want)):
            where = (slack, batch, counts_only, i, ups.src[i], ups.dst[i], ups.op[i])
            assert g[:2] == w[:2], where
            if not counts_only:
                assert g[2:] == w[2:], where
        assert cm.initial_count + cm.added - cm.removed == cm.count == last
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnknownLabelWarning)
            final = wm.count(cm.graph.snapshot(), q, mode=mode, induced=induced,
                             backend="reference")
        assert final == last


@pytest.mark.parametrize("directed", [False, True])
def test_stream_empties_rows_in_every_way(directed):
    """The scenario does what the tests below say it does."""
    oracle, ups = emptying_stream(0, directed, 0, 0)
    g0 = oracle.graph()
    events = emptied_and_refilled(directed, g0, ups)
    ext = g0.to_external(np.arange(g0.n)).tolist()
    hub, iso0 = 100, 130
    assert any(v == hub and e >= 0 for v, _, e, _ in events)              # hub emptied
    assert any(v == iso0 and e == -1 for v, _, e, _ in events)            # capacity 0
    assert any(v >= NEW and e >= 0 for v, _, e, _ in events)              # created first
    assert any(r - e == 1 for _, _, e, r in events if e >= 0)             # back to back
    assert any(e // 3 == r // 3 for _, _, e, r in events if e >= 0)       # in a batch of 3
    assert any(e // 3 != r // 3 for _, _, e, r in events if e >= 0)       # across batches
    if directed:   # rows of one direction emptied while the other kept edges
        assert {r for _, r, _, _ in events} == {"out", "in"}
    assert len(ups) > 80 and set(ups.op.tolist()) == {-1, 1}
    # the storage sees it: at batch size 1, rows at degree 0 with capacity left behind,
    # rows of capacity 0 that get an entry, and a compaction (everything deleted)
    dg = DynamicGraph(g0)
    assert dg.b_cap[dg.to_internal([iso0])[0]] == 0
    left_behind = compacted = 0
    for i in range(len(ups)):
        batch = dg.prepare(ups.slice(i, i + 1))
        dg.view(batch)
        dg.apply(batch)
        left_behind += int(np.any((dg.b_deg[:dg.n] == 0) & (dg.b_cap[:dg.n] > 0)))
        compacted += int(dg.num_edges == 0 and not dg.b_cap[:dg.n].any())
    assert left_behind > 0 and compacted and dg.n == len(ext) + 2


@pytest.mark.parametrize("vlab,elab", LABELS)
@pytest.mark.parametrize("directed", [False, True])
def test_emptied_rows_refilled_exactly(directed, vlab, elab):
    make = lambda: emptying_stream(1, directed, vlab, elab)[0]      # noqa: E731
    _, ups = emptying_stream(1, directed, vlab, elab)
    for text, induced in QUERIES[directed]:
        q = labeled_query(text, vlab, elab, directed)
        check_against_oracle(make, ups, q, induced)


def test_emptied_rows_subgraphs_mode():
    make = lambda: emptying_stream(2, False, 2, 2)[0]               # noqa: E731
    _, ups = emptying_stream(2, False, 2, 2)
    check_against_oracle(make, ups, Query.parse("a-b, b-c, c-d, d-a"), False,
                         slacks=(0.25,), mode="subgraphs")


def random_emptying_stream(seed: int, directed: bool, vlab: int, elab: int, n: int = 9,
                           steps: int = 10):
    """Random rounds of: empty a random vertex (maybe only one direction), refill it and
    some other vertex (maybe a new one), at once or later."""
    rng = random.Random(seed)
    ext = [200 + 7 * i for i in range(n)]
    b = StreamBuilder(rng, directed, elab, {})
    while len(b.cur) < 2 * n:                         # the last two vertices: isolated
        x, y = rng.sample(ext[:-2], 2)
        b.fill(x, [y])
    g0_edges, b.ups = dict(b.cur), []
    vl = {x: rng.randrange(vlab) for x in ext} if vlab else None
    pool = list(ext)
    new_ids: list[int] = []
    for _ in range(steps):
        v = rng.choice(pool)
        out, inn = (True, True) if not directed else rng.choice(
            [(True, True), (True, False), (False, True)])
        b.empty(v, out=out, inn=inn, noise=pool if rng.random() < 0.5 else None)
        if rng.random() < 0.3:
            new_ids.append(NEW + len(new_ids))
            pool.append(new_ids[-1])
        targets = rng.sample([x for x in pool if x != v], min(len(pool) - 1, rng.randint(1, 5)))
        b.fill(v, targets, out=out if not (out and inn) else rng.random() < 0.5)
    new_labels = [rng.randrange(vlab) if vlab else 0 for _ in new_ids]
    oracle = Oracle(directed, vl, bool(elab), g0_edges)
    oracle.vertices |= set(ext)
    if vl is not None:
        oracle.vlabels.update(zip(new_ids, new_labels))
    arr = np.asarray(b.ups, np.int64).reshape(-1, 4)
    ups = Updates(arr[:, 0], arr[:, 1], arr[:, 2].astype(np.int8),
                  arr[:, 3].astype(np.int32) if elab else None,
                  new_vertex_ids=np.asarray(new_ids if vlab else [], np.int64),
                  new_vertex_labels=np.asarray(new_labels if vlab else [], np.int32))
    return oracle, ups


@settings(max_examples=10, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), directed=st.booleans(), labels=st.sampled_from(LABELS),
       qi=st.integers(0, 2))
def test_random_emptying_streams(seed, directed, labels, qi):
    vlab, elab = labels
    oracle, ups = random_emptying_stream(seed, directed, vlab, elab)
    if not len(ups):
        return
    text, induced = QUERIES[directed][qi]
    q = labeled_query(text, vlab, elab, directed)
    want, first, last = expected_deltas(oracle, ups, q, induced)
    g0 = random_emptying_stream(seed, directed, vlab, elab)[0].graph()
    for batch in (1, 3, len(ups)):
        cm = ContinuousMatcher(DynamicGraph(g0, slack=seed % 2 * 0.25), q, induced=induced,
                               backend="cpu")
        got = deltas(cm, ups, batch, counts_only=bool(batch == 3))
        assert [g[:2] for g in got] == [w[:2] for w in want]
        if batch != 3:
            assert got == want
        assert cm.initial_count == first and cm.count == last


# --------------------------------------------------------------------- real data
def college_msg_prefix(data_path, size: int):
    from warpmatch.stream.updates import replay_temporal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputCleanupWarning)     # self-loop messages
        g0, ups = replay_temporal(data_path("snap", "CollegeMsg.txt"), window=604800)
    return g0, ups.slice(0, size)


def replay_final(g0: wm.Graph, ups: Updates) -> wm.Graph:
    """The graph after ``ups`` (undirected, G_0's vertices and ids), from a Python set."""
    live = set()
    s, d = g0.edges()
    for a, b in zip(g0.to_external(s).tolist(), g0.to_external(d).tolist()):
        live.add((min(a, b), max(a, b)))
    for a, b, o in zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist()):
        k = (min(a, b), max(a, b))
        if o > 0:
            assert k not in live
            live.add(k)
        else:
            live.remove(k)
    e = np.asarray(sorted(live), np.int64).reshape(-1, 2)
    inner = g0.to_internal(e.ravel()).reshape(-1, 2)
    return wm.Graph.from_edges(inner[:, 0], inner[:, 1], n=g0.n, ids=g0.ids)


def test_college_msg_one_week_window(data_path):
    """The stream of ``stream-gen CollegeMsg.txt --temporal --window 604800`` (RapidFlow
    crashes on it): batch 4096 and batch 1 agree update by update and the counts add up,
    for the triangle and the 4-cycle."""
    g0, ups = college_msg_prefix(data_path, 3000)
    assert g0.num_edges == 0 and len(ups) == 3000
    events = emptied_and_refilled(False, g0, ups)
    # vertices that lose all their edges (the week passes) and get new ones later
    assert sum(1 for _, _, e, _ in events if e >= 0) >= 10
    final = replay_final(g0, ups)
    for q in ("triangle", "square"):
        runs = []
        for batch in (4096, 1):
            cm = ContinuousMatcher(g0, q, backend="cpu")
            runs.append([(d.plus_counts, d.minus_counts)
                         for d in cm.apply_batches(ups, batch, counts_only=True)])
            assert cm.initial_count == 0
            want = wm.count(final, q, backend="cpu")
            assert cm.initial_count + cm.added - cm.removed == cm.count == want > 0
        (big,), small = runs[0], runs[1]
        np.testing.assert_array_equal(big[0], np.concatenate([p for p, _ in small]))
        np.testing.assert_array_equal(big[1], np.concatenate([m for _, m in small]))
        assert big[1].sum() > 0                        # expiring edges destroyed matches
