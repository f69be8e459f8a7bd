"""ContinuousMatcher end to end: per-update deltas against static recounts of every state.

The oracle is a Python dict of edges in the graph file's id space, replayed
update by update; every state is rebuilt as a static :class:`warpmatch.Graph`
and counted/listed with the static engines (``cpu``, and ``reference`` for
some). Checked: ``plus_i - minus_i == count(S_{i+1}) - count(S_i)`` and the
listed rows are exactly the set differences of consecutive match sets; the
invariant ``count(G_0) + Σ+ − Σ− == count(G_final)`` over a long stream;
identical per-update results for batch sizes 1, 64 and 4096.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.errors import BackendUnavailableError, InputFormatError, QueryError
from warpmatch.query.model import Query
from warpmatch.query.patterns import get_pattern
from warpmatch.stream.dynamic import DynamicGraph
from warpmatch.stream.matcher import ContinuousMatcher, StreamDelta, resolve_delta_engine
from warpmatch.stream.types import Updates

SETTINGS = dict(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


class Oracle:
    """Edges ``{(a, b): label}`` over external ids (undirected: a < b) and vertex labels."""

    def __init__(self, directed: bool, vlabels: dict | None, elabeled: bool, edges: dict):
        self.directed = directed
        self.vlabels = vlabels            # external id -> label, or None (unlabeled)
        self.elabeled = elabeled
        self.edges = dict(edges)
        self.vertices = set(vlabels) if vlabels is not None else set()
        for a, b in edges:
            self.vertices |= {a, b}

    def key(self, u: int, v: int) -> tuple[int, int]:
        return (u, v) if self.directed or u < v else (v, u)

    def graph(self) -> wm.Graph:
        ids = sorted(self.vertices)
        idx = {x: i for i, x in enumerate(ids)}
        e = sorted(self.edges)
        return wm.Graph.from_edges(
            np.asarray([idx[a] for a, _ in e], np.int64), np.asarray([idx[b] for _, b in e],
                                                                     np.int64),
            n=len(ids), directed=self.directed, ids=np.asarray(ids, np.int64),
            vertex_labels=None if self.vlabels is None else [self.vlabels[x] for x in ids],
            edge_labels=[self.edges[x] for x in e] if self.elabeled else None)

    def step(self, u: int, v: int, op: int, lab: int) -> bool:
        """Apply one update if valid; return whether it was."""
        k = self.key(u, v)
        if u == v or (op > 0) == (k in self.edges):
            return False
        if op > 0:
            self.edges[k] = lab if self.elabeled else 0
            self.vertices |= {u, v}
        else:
            del self.edges[k]
        return True


def random_stream(seed: int, directed: bool, vlab: int, elab: int, n: int = 10, m: int = 18,
                  B: int = 40, invalid: bool = True, new_vertices: bool = True):
    """(oracle of G_0, Updates in external ids) with deletes, re-inserts, undos, new vertices.

    ``invalid=False``: no self-loops, deletes of missing edges or inserts of existing
    ones. ``new_vertices=False``: every update names a vertex of ``G_0`` (which then
    holds all ``n``, isolated ones included)."""
    rng = random.Random(seed)
    ext = [3 * i + 100 for i in range(n)]                 # ids unlike internal ones
    edges: dict = {}
    while len(edges) < m:
        a, b = rng.sample(ext, 2)
        key = (a, b) if directed or a < b else (b, a)
        edges[key] = rng.randrange(elab) if elab else 0
    vl = {x: rng.randrange(vlab) for x in ext} if vlab else None
    oracle = Oracle(directed, vl, bool(elab), edges)
    if not new_vertices:
        oracle.vertices |= set(ext)
    cur = set(edges)
    pool = list(ext)
    new_ids, new_labels = [], []
    ups = []
    for _ in range(B):
        r = rng.random()
        lab = rng.randrange(elab) if elab else 0
        if r < 0.12 and ups:
            u, v, op, lab = ups[-1]
            op = -op                                       # undo within the batch
        elif r < 0.42 and cur:
            u, v = rng.choice(sorted(cur))
            if not directed and rng.random() < 0.5:
                u, v = v, u
            op = -1
        elif r < 0.5 and invalid:
            u = rng.choice(pool)
            v, op = (u, 1) if rng.random() < 0.5 else (rng.choice(pool), rng.choice([1, -1]))
        elif r < 0.56 and new_vertices:
            u = 5000 + len(new_ids)                        # a new vertex
            new_ids.append(u)
            new_labels.append(rng.randrange(vlab) if vlab else 0)
            pool.append(u)
            v, op = rng.choice(pool[:-1]), 1
        else:
            u, v = rng.sample(pool, 2)
            op = 1
            if not invalid:                                # an edge that is absent now
                pairs = len(pool) * (len(pool) - 1) // (1 if directed else 2)
                if len(cur) >= pairs:                      # complete: delete one instead
                    (u, v), op = rng.choice(sorted(cur)), -1
                while op > 0 and ((u, v) if directed or u < v else (v, u)) in cur:
                    u, v = rng.sample(pool, 2)
        ups.append((u, v, op, lab))
        key = (u, v) if directed or u < v else (v, u)
        if u != v and (op > 0) != (key in cur):
            (cur.add if op > 0 else cur.discard)(key)
    if vl is not None:
        oracle.vlabels.update(zip(new_ids, new_labels))    # declared; used when created
    arr = np.asarray(ups, np.int64).reshape(-1, 4)
    updates = Updates(arr[:, 0], arr[:, 1], arr[:, 2].astype(np.int8),
                      arr[:, 3].astype(np.int32) if elab else None,
                      new_vertex_ids=np.asarray(new_ids if vlab else [], np.int64),
                      new_vertex_labels=np.asarray(new_labels if vlab else [], np.int32))
    return oracle, updates


def match_set(g: wm.Graph, q: Query, mode: str, induced: bool, backend: str = "cpu") -> set:
    rows = list(wm.match(g, q, mode=mode, induced=induced, backend=backend))
    return set() if not rows else set(map(tuple, np.concatenate(rows).tolist()))


def with_labels(q: Query, seed: int, vlab: int, elab: int, vertex: int = 1, edge: int = 0,
                directed: bool = False) -> Query:
    """``q`` with one vertex label and one edge label drawn from ``seed`` (0 or 1 each),
    where the graph has vertex (``vlab``) or edge (``elab``) labels."""
    vl, el = q.vertex_labels.copy(), q.edge_labels.copy()
    if vlab:
        vl[vertex] = seed % 2
    if elab:
        el[edge] = (seed // 2) % 2
    return Query(q.k, q.edges, el, vl, directed=directed, names=q.names)


def replay(oracle: Oracle, updates: Updates, q: Query, mode: str, induced: bool,
           backend: str = "cpu") -> tuple[list[set], list[bool]]:
    """Match sets of S_0..S_B and the validity of each update."""
    lab = updates.label
    sets = [match_set(oracle.graph(), q, mode, induced, backend)]
    valid = []
    for i in range(len(updates)):
        ok = oracle.step(int(updates.src[i]), int(updates.dst[i]), int(updates.op[i]),
                         0 if lab is None else int(lab[i]))
        valid.append(ok)
        sets.append(match_set(oracle.graph(), q, mode, induced, backend) if ok else sets[-1])
    return sets, valid


def delta_rows(d: StreamDelta, counts_only: bool = False) -> list:
    """Per-update (plus count, minus count, plus rows, minus rows) of one delta, with its
    sanity checks (totals, no row twice)."""
    assert isinstance(d, StreamDelta) and len(d) == len(d.updates)
    assert d.added == int(d.plus_counts.sum()) and d.removed == int(d.minus_counts.sum())
    out = []
    for i in range(len(d)):
        if counts_only:
            assert d.plus is None and d.minus is None
            rows = (None, None)
        else:
            p = [tuple(r) for r in d.plus[d.plus_update == i].tolist()]
            m = [tuple(r) for r in d.minus[d.minus_update == i].tolist()]
            assert len(p) == len(set(p)) and len(m) == len(set(m))
            rows = (set(p), set(m))
        out.append((int(d.plus_counts[i]), int(d.minus_counts[i])) + rows)
    return out


def deltas(cm: ContinuousMatcher, updates: Updates, batch: int, counts_only: bool = False):
    """Per-update (plus count, minus count, plus rows, minus rows) over the whole stream."""
    return [row for d in cm.apply_batches(updates, batch, counts_only=counts_only)
            for row in delta_rows(d, counts_only)]


def check_stream(oracle: Oracle, updates: Updates, q: Query, mode: str, induced: bool,
                 batch: int = 16, backend: str = "cpu"):
    g0 = oracle.graph()
    cm_l = ContinuousMatcher(g0, q, mode=mode, induced=induced, backend="cpu",
                             on_invalid="skip")
    cm_c = ContinuousMatcher(g0, q, mode=mode, induced=induced, backend="cpu",
                             on_invalid="skip")
    got_l = deltas(cm_l, updates, batch)
    got_c = deltas(cm_c, updates, batch, counts_only=True)
    sets, valid = replay(oracle, updates, q, mode, induced, backend)
    assert cm_l.initial_count == len(sets[0])
    for i in range(len(updates)):
        plus, minus = sets[i + 1] - sets[i], sets[i] - sets[i + 1]
        assert got_l[i] == (len(plus), len(minus), plus, minus), (i, updates.src[i],
                                                                  updates.dst[i], updates.op[i])
        assert got_c[i][:2] == (len(plus), len(minus))
    assert cm_l.count == cm_c.count == len(sets[-1])
    return cm_l, valid


# ------------------------------------------------------------------ per update
@pytest.mark.parametrize("name", ["triangle", "square", "diamond", "tailed-triangle",
                                  "4-clique", "3-path", "4-path"])
@pytest.mark.parametrize("induced", [False, True])
def test_named_patterns(name, induced):
    oracle, ups = random_stream(11, False, 0, 0, n=9, m=20, B=30)
    for mode in ("embeddings", "subgraphs"):
        check_stream(Oracle(False, None, False, oracle.edges), ups, get_pattern(name), mode,
                     induced)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), vlab=st.sampled_from([0, 2]), elab=st.sampled_from([0, 2]),
       induced=st.booleans(), mode=st.sampled_from(["embeddings", "subgraphs"]),
       qi=st.integers(0, 2))
def test_random_undirected(seed, vlab, elab, induced, mode, qi):
    oracle, ups = random_stream(seed, False, vlab, elab)
    q = Query.parse(["a-b, b-c, c-a", "a-b, b-c, c-d, d-a, a-c", "a-b, b-c, c-d"][qi])
    q = with_labels(q, seed, vlab, elab)
    check_stream(oracle, ups, q, mode, induced, batch=1 + seed % 17)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), vlab=st.sampled_from([0, 2]), elab=st.sampled_from([0, 2]),
       induced=st.booleans(), mode=st.sampled_from(["embeddings", "subgraphs"]),
       qi=st.integers(0, 2))
def test_random_directed(seed, vlab, elab, induced, mode, qi):
    oracle, ups = random_stream(seed, True, vlab, elab, m=22)
    q = Query.parse(["a->b, b->c, c->a", "a->b, b->c, a->c", "a->b, b->a, b->c"][qi])
    q = with_labels(q, seed, vlab, elab, vertex=0, edge=1, directed=True)
    check_stream(oracle, ups, q, mode, induced, batch=1 + seed % 13)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), elab=st.sampled_from([0, 2]), induced=st.booleans(),
       mode=st.sampled_from(["embeddings", "subgraphs"]), qi=st.integers(0, 3),
       directed=st.booleans())
def test_random_fully_labeled(seed, elab, induced, mode, qi, directed):
    """Every query vertex labelled: the engine reads the query's relevant subgraph
    (stream/relevant.py), which must give the same deltas as the whole graph."""
    oracle, ups = random_stream(seed, directed, 3, elab, m=22 if directed else 30)
    texts = (["a->b, b->c, c->a", "a->b, b->c, a->c", "a->b, b->a, b->c", "a->b, c->b, c->d"]
             if directed else
             ["a-b, b-c, c-a", "a-b, b-c, c-d, d-a, a-c", "a-b, b-c, c-d", "a-b, a-c, a-d"])
    q = Query.parse(texts[qi])
    vl = np.array([(seed >> i) % 3 for i in range(q.k)], dtype=np.int32)
    el = q.edge_labels.copy()
    if elab:
        el[0] = (seed // 7) % 2
    q = Query(q.k, q.edges, el, vl, directed=directed, names=q.names)
    cm = ContinuousMatcher(oracle.graph(), q, backend="cpu")
    assert cm._relevant is not None
    check_stream(oracle, ups, q, mode, induced, batch=1 + seed % 11)


def test_reference_oracle_directed_induced():
    oracle, ups = random_stream(5, True, 2, 2, n=8, m=16, B=25)
    q = Query.parse("a->b, b->c, c->a")
    check_stream(oracle, ups, q, "embeddings", True, batch=7, backend="reference")


# ------------------------------------------------------ invariant, batch sizes
def test_long_stream_invariant():
    rng = np.random.default_rng(3)
    n, m = 60, 300
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    g0 = wm.Graph.from_edges(src, dst, n=n, warn=False)
    gs, gd = g0.edges()
    cur = set(zip(gs.tolist(), gd.tolist()))
    ups = []
    for _ in range(1500):
        if cur and rng.random() < 0.45:
            a, b = sorted(cur)[int(rng.integers(len(cur)))]
            cur.discard((a, b))
            ups.append((b, a, -1))
        else:
            a, b = int(rng.integers(0, n + 5)), int(rng.integers(0, n + 5))
            if a == b or (min(a, b), max(a, b)) in cur:
                continue
            cur.add((min(a, b), max(a, b)))
            ups.append((a, b, 1))
    for name, induced in [("diamond", False), ("tailed-triangle", True), ("4-clique", False)]:
        cm = ContinuousMatcher(g0, name, induced=induced, backend="cpu")
        for d in cm.apply_batches(ups, 256, counts_only=True):
            assert d.valid.all()
        final = wm.count(cm.graph.snapshot(), name, induced=induced, backend="cpu")
        assert cm.initial_count + cm.added - cm.removed == cm.count == final
        assert cm.added > 0 and cm.removed > 0
        # the independent model agrees with the store's snapshot
        a, b = zip(*sorted(cur))
        ref = wm.Graph.from_edges(np.asarray(a), np.asarray(b), n=n + 5)
        assert wm.count(ref, name, induced=induced, backend="cpu") == final


@pytest.mark.parametrize("directed", [False, True])
def test_batch_size_independence(directed):
    oracle, ups = random_stream(21, directed, 2, 2, n=30, m=90, B=300)
    q = Query.parse("a->b, b->c, c->a" if directed else "a-b, b-c, c-a, c-d")
    results = []
    for bs in (1, 64, 4096):
        for induced in (False, True):
            cm = ContinuousMatcher(oracle.graph(), q, induced=induced, backend="cpu",
                                   on_invalid="skip")
            results.append((bs, induced, deltas(cm, ups, bs), cm.count))
    for induced in (False, True):
        same = [r for r in results if r[1] == induced]
        assert same[0][2] == same[1][2] == same[2][2]
        assert same[0][3] == same[1][3] == same[2][3]
        assert sum(x[0] + x[1] for x in same[0][2]) > 0


# ------------------------------------------------------------ input and errors
def test_input_forms_and_external_ids():
    g = wm.Graph.from_edges([0, 1, 2], [1, 2, 3], ids=[10, 20, 30, 40])
    cm = ContinuousMatcher(g, "triangle", mode="subgraphs", backend="cpu")
    d = cm.apply([(10, 30, "+")])
    assert d.plus.tolist() == [[10, 20, 30]] and d.columns == ["0", "1", "2"]
    d = cm.apply((np.array([20]), np.array([40]), np.array([1])))
    assert d.plus_counts.tolist() == [1] and sorted(d.plus[0].tolist()) == [20, 30, 40]
    d = cm.apply(np.array([[20, 40, -1], [50, 10, 1], [50, 20, 1]]))   # 50 is new
    assert d.minus_counts.tolist() == [1, 0, 0] and d.plus_counts.tolist() == [0, 0, 1]
    assert sorted(d.plus[0].tolist()) == [10, 20, 50]
    assert cm.count == 2 and "2 matches" in repr(cm) and "+1" in repr(d)


def test_invalid_updates_error_and_skip():
    g = wm.Graph.from_edges([0, 1], [1, 2])
    cm = ContinuousMatcher(g, "3-path", backend="cpu")
    before = cm.count
    with pytest.raises(InputFormatError):
        cm.apply([(0, 2, "+"), (0, 1, "+")])          # the second inserts an existing edge
    assert cm.count == before and not cm.graph.has_edge(0, 2)
    cm = ContinuousMatcher(g, "3-path", backend="cpu", on_invalid="skip")
    d = cm.apply([(0, 2, "+"), (0, 1, "+"), (5, 5, "+"), (1, 2, "-")])
    assert d.valid.tolist() == [True, False, False, True]
    assert d.reasons[0] == "" and d.reasons[1] and d.reasons[2]
    assert d.plus_counts[1] == d.minus_counts[1] == 0
    assert cm.count == wm.count(cm.graph.snapshot(), "3-path")


def test_unknown_label_may_appear_later():
    g = wm.Graph.from_edges([0, 1], [1, 2], vertex_labels=[0, 0, 0])
    q = Query.parse("a:7-b, b-c, c-a")                  # label 7 is not in G_0
    cm = ContinuousMatcher(g, q, backend="cpu")
    assert cm.count == 0
    ups = Updates(np.array([9, 9]), np.array([0, 1]), np.array([1, 1], np.int8),
                  new_vertex_ids=np.array([9]), new_vertex_labels=np.array([7], np.int32))
    d = cm.apply(ups)
    assert d.plus_counts.tolist() == [0, 2]
    assert cm.count == wm.count(cm.graph.snapshot(), q) == 2


# ------------------------------------------- new labeled vertices from Python objects
# G_0: a 4-cycle 0-1-2-3 with chord 0-2 (label 0) and vertex 4 (label 7) on 0 and 1
LABELED_G0 = dict(src=[0, 1, 2, 3, 0, 4, 4], dst=[1, 2, 3, 0, 2, 0, 1],
                  vertex_labels=[0, 0, 0, 0, 7])
LABELED_Q = "a:7-b:0, b-c:0, c-a"         # a triangle through a label-7 vertex
# declarations before, between and after the updates that use them (60 is declared after
# its first update; 70 is never used); 61 has label 3, so its triangles do not match
STREAM_ITEMS = [("v", 50, 7), (50, 0, "+"), (50, 1, "+"), (50, 60, "+"), (60, 0, "+"),
                ("v", 60, 0), ("v", 61, 3), (61, 0, "+"), (61, 1, "+"), (50, 61, "+"),
                (4, 50, "+"), (50, 1, "-"), ("v", 70, 7)]
STREAM_TEXT = ("# the same stream as a text file\nv 50 7\n50 0 +\n50 1 +\n50 60 +\n60 0 +\n"
               "v 60 0\nv 61 3\n61 0 +\n61 1 +\n50 61 +\n4 50 +\n50 1 -\nv 70 7\n")


@pytest.mark.parametrize("mode", ["embeddings", "subgraphs"])
def test_declared_vertices_from_a_list_equal_the_text_file(write, mode):
    from warpmatch.stream.updates import as_updates, read_updates
    g0 = wm.Graph.from_edges(**LABELED_G0)
    from_file = read_updates(write("ups.txt", STREAM_TEXT))
    from_list = as_updates(STREAM_ITEMS)
    for f in ("src", "dst", "op", "new_vertex_ids", "new_vertex_labels"):
        np.testing.assert_array_equal(getattr(from_list, f), getattr(from_file, f), err_msg=f)
    assert from_list.label is None and from_file.label is None
    mapping = {"src": from_file.src.tolist(), "dst": from_file.dst.tolist(),
               "op": ["+" if o > 0 else "-" for o in from_file.op],
               "vertex_id": [50, 60, 61, 70], "vertex_label": [7, 0, 3, 7]}
    got = {}
    for name, ups in (("file", from_file), ("list", STREAM_ITEMS), ("mapping", mapping)):
        cm = ContinuousMatcher(g0, LABELED_Q, mode=mode, backend="cpu")
        got[name] = delta_rows(cm.apply(ups))
        assert cm.graph.to_internal([50, 60, 61]).tolist() == [5, 6, 7]
        assert cm.graph.vertex_labels.tolist() == [0, 0, 0, 0, 7, 7, 0, 3]   # 70: never used
        assert cm.count == wm.count(cm.graph.snapshot(), LABELED_Q, mode=mode)
    assert got["list"] == got["file"] == got["mapping"]
    # each delta is the difference of static recounts (one update per batch: the
    # declarations travel with every slice of the list, as with a file)
    cm = ContinuousMatcher(g0, LABELED_Q, mode=mode, backend="cpu")
    prev = cm.count
    assert prev == wm.count(g0, LABELED_Q, mode=mode) > 0
    steps = []
    for d in cm.apply_batches(STREAM_ITEMS, 1):
        now = wm.count(cm.graph.snapshot(), LABELED_Q, mode=mode)
        assert d.net == now - prev and cm.count == now
        steps += delta_rows(d)
        prev = now
    assert steps == got["list"]
    # the label-7 vertex 50 is the a of every new match (50-0-1, 50-0-60); the triangles
    # through the label-3 vertex 61 (61-0-1, 61-0-50, 61-1-50) and 4-50-0 (two label-7
    # vertices) make none; deleting 50-1 removes 50-0-1
    plus = [p for p, _, _, _ in steps]
    assert plus[0] == 0 and plus[1] > 0 and plus[2] == 0 and plus[3] > 0
    assert plus[4:] == [0] * 5 and steps[8][1] == plus[1]
    assert all(row[0] == 50 for _, _, rows, _ in steps for row in rows)


def test_new_vertex_label_decides_the_matches():
    g0 = wm.Graph.from_edges(**LABELED_G0)
    out = {}
    for lab in (3, 0, 7):
        items = [("v", 50, 7), (50, 0, "+"), (50, 1, "+"), (50, 61, "+"), (61, 0, "+"),
                 ("v", 61, lab)]
        cm = ContinuousMatcher(g0, LABELED_Q, backend="cpu")
        d = cm.apply(items)
        assert cm.count == wm.count(cm.graph.snapshot(), LABELED_Q)
        out[lab] = d.plus_counts.tolist()
    # update 3 closes the triangle 50-61-0: with a = 50 (label 7) it matches only when
    # 61 has label 0, as b or c (2 embeddings); labels 3 and 7 fit no query vertex there
    assert out[3] == [0, 2, 0, 0] and out[7] == [0, 2, 0, 0]
    assert out[0] == [0, 2, 0, 2]


def test_undeclared_new_vertex_error_names_every_way_to_declare_it():
    g0 = wm.Graph.from_edges(**LABELED_G0)
    cm = ContinuousMatcher(g0, LABELED_Q, backend="cpu")
    before = cm.count
    with pytest.raises(InputFormatError) as ei:
        cm.apply([("v", 50, 7), (50, 0, "+"), (50, 9, "+")])
    msg = str(ei.value)
    assert "update 1: vertex 9 is new and the graph is vertex-labeled" in msg
    for way in ("'v 9 LABEL' line", "('v', 9, LABEL) tuple", "vertex_id=[9]",
                "vertex_label=[LABEL]", "empty dst"):
        assert way in msg, (way, msg)
    assert cm.count == before and cm.graph.n == 5           # nothing changed
    d = cm.apply([("v", 50, 7), (50, 0, "+"), (50, 9, "+"), ("v", 9, 0), (9, 0, "+")])
    assert d.plus_counts.tolist() == [0, 0, 2] and cm.graph.vertex_labels[-1] == 0
    with pytest.raises(InputFormatError, match="update 1: vertex label -1 is negative"):
        cm.apply([(50, 1, "+"), ("v", 11, -1)])
    # an unlabeled graph creates vertices implicitly and ignores declarations
    cm = ContinuousMatcher(wm.Graph.from_edges([0], [1]), "triangle", backend="cpu")
    assert cm.apply([("v", 9, 4), (9, 0, "+"), (9, 1, "+")]).plus_counts.tolist() == [0, 6]


def test_matcher_doctests():
    import doctest

    import warpmatch.stream.matcher as mod
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def test_dynamic_graph_in_place_and_no_initial_count():
    dg = DynamicGraph(wm.Graph.from_edges([0, 1, 2], [1, 2, 0]))
    cm = ContinuousMatcher(dg, "triangle", backend="cpu", count_initial=False)
    assert cm.graph is dg and cm.initial_count is None and cm.count is None
    d = cm.apply([(0, 1, "-")], counts_only=True)
    assert d.minus_counts.tolist() == [6] and d.plus is None and cm.removed == 6
    assert not dg.has_edge(0, 1)


def test_errors():
    g = wm.Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(QueryError, match="directed"):
        ContinuousMatcher(g, Query.parse("a->b"), backend="cpu")
    dg = wm.Graph.from_edges([0, 1], [1, 2], directed=True)
    with pytest.raises(QueryError, match="undirected"):
        ContinuousMatcher(dg, get_pattern("triangle"), backend="cpu")
    with pytest.raises(QueryError, match="no vertex labels"):
        ContinuousMatcher(g, "a:1-b", backend="cpu")
    with pytest.raises(QueryError, match="no edge labels"):
        ContinuousMatcher(g, "a-[1]-b", backend="cpu")
    with pytest.raises(QueryError, match="mode"):
        ContinuousMatcher(g, "triangle", mode="maps", backend="cpu")
    with pytest.raises(BackendUnavailableError, match="unknown backend"):
        ContinuousMatcher(g, "triangle", backend="tpu")
    with pytest.raises(ValueError, match="on_invalid"):
        ContinuousMatcher(g, "triangle", backend="cpu", on_invalid="ignore")
    with pytest.raises(ValueError, match="batch_size"):
        next(ContinuousMatcher(g, "triangle", backend="cpu").apply_batches([], 0))


def test_backend_resolution():
    assert resolve_delta_engine("cpu", threads=1).name == "cpu"
    auto = resolve_delta_engine("auto", threads=1)
    assert auto.name in ("cpu", "gpu")
    try:
        gpu = resolve_delta_engine("gpu")
    except BackendUnavailableError as exc:
        assert "gpu" in str(exc)
    else:
        assert gpu.name == "gpu"


def test_auto_counts_a_label_confined_query_on_the_cpu(monkeypatch):
    """backend="auto": a query whose labels confine it to part of a vertex-labeled graph
    runs on the CPU engine without asking for the GPU; wildcards, unlabeled graphs and
    "gpu" still go to the resolver (which prefers the GPU)."""
    import warpmatch.stream.matcher as M
    asked = []

    class Asked(Exception):
        pass

    def resolver(backend, **kw):
        asked.append(backend)
        raise Asked
    monkeypatch.setattr(M, "resolve_delta_engine", resolver)
    g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0], vertex_labels=[1, 2, 3])
    cm = ContinuousMatcher(g, "a:1-b:2, b-c:3", cache="device")   # a GPU-only option
    assert cm.backend == "cpu" and asked == []
    assert cm.apply([(0, 2, "-")], counts_only=True).minus_counts.tolist() == [0]
    for graph, query, backend in ((g, "a:1-b:2, b-c", "auto"),             # a wildcard
                                  (wm.Graph.from_edges([0, 1], [1, 2]), "triangle", "auto"),
                                  (g, "a:1-b:2, b-c:3", "gpu")):
        with pytest.raises(Asked):
            ContinuousMatcher(graph, query, backend=backend)
    assert asked == ["auto", "auto", "gpu"]


def test_package_exports_continuous_matching():
    # the interface is warpmatch.ContinuousMatcher(graph, query, backend=...)
    from warpmatch.stream import updates as wu
    # (warpmatch's adds client=, the distributed layer's, above this layer)
    assert issubclass(wm.ContinuousMatcher, ContinuousMatcher) and wm.StreamDelta is StreamDelta
    for name in ("read_updates", "write_updates", "make_stream", "replay_temporal"):
        assert getattr(wm, name) is getattr(wu, name) and name in wm.__all__
    g = wm.Graph.from_edges([0, 1], [1, 2])
    cm = wm.ContinuousMatcher(g, "triangle", backend="cpu")
    assert isinstance(cm, ContinuousMatcher)
    assert cm.apply([(0, 2, "+")]).plus_counts.tolist() == [6] and cm.count == 6


def test_listing_embeddings_searches_one_row_per_orbit():
    # listing every embedding would search |Aut(Q)| times the restricted space (8x for a
    # 4-cycle); the matcher lists one row per orbit and expands it by Aut(Q): same rows
    oracle, ups = random_stream(4, False, 0, 0, n=12, m=34, B=80)
    g0 = oracle.graph()
    cm = ContinuousMatcher(g0, "square", backend="cpu", on_invalid="skip")
    seen = []
    run = cm.engine.run

    def spy(view, plans, want):
        seen.append((plans.purpose, plans.listable, plans.num_plans, want))
        return run(view, plans, want)
    cm.engine.run = spy
    got = deltas(cm, ups, 16)
    # one plan for the one orbit of the square's 8 ordered edge pairs
    assert seen and all(p == "orbits" and ok and P == 1 and w for p, ok, P, w in seen)
    ref = ContinuousMatcher(g0, "square", backend="cpu", on_invalid="skip")
    ref._listing_plans = lambda: (ref.plans(listing=True), None)       # every embedding
    assert deltas(ref, ups, 16) == got and ref.count == cm.count
    assert sum(p for p, *_ in got) > 0
    # nothing to expand: no symmetry, or a group too large to list (8! automorphisms)
    labeled = ContinuousMatcher(wm.Graph.from_edges([0], [1], vertex_labels=[1, 2]),
                                "a:1-b:2", backend="cpu")
    assert labeled._listing_plans()[1] is None
    big = ContinuousMatcher(g0, get_pattern("4-clique"), backend="cpu")
    assert big._listing_plans()[1].shape == (24, 4)
    k8 = Query.from_edges([(a, b) for a in range(8) for b in range(a + 1, 8)], k=8)
    huge = ContinuousMatcher(g0, k8, backend="cpu")
    plans, auts = huge._listing_plans()
    assert auts is None and plans.res_pos.size == 0 and plans.listable
