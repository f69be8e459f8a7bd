"""Delta plans and the CPU delta engine against recounts of every state.

The batch views here are built by a small pure-Python model (a dict of edges
replayed update by update), independent of :mod:`warpmatch.stream.dynamic`,
so the engine is checked against the semantics of
:mod:`warpmatch.stream.types` themselves; the oracle is the static engine run
on each state ``S_0..S_B`` (``plus_i`` must be ``|M(S_{i+1}) \\ M(S_i)|`` and
``minus_i`` ``|M(S_i) \\ M(S_{i+1})|``, the listed rows exactly those sets).
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.errors import QueryError
from warpmatch.query.model import Query
from warpmatch.query.patterns import get_pattern
from warpmatch.query.symmetry import automorphism_count
from warpmatch.stream.cpu import CpuDeltaEngine
from warpmatch.stream.delta import compile_delta_plans
from warpmatch.stream.types import NEVER, BatchView, InternalBatch

SETTINGS = dict(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------- the model
class Model:
    """A graph as a dict ``{(u, v): label}`` (undirected: u < v) plus vertex labels."""

    def __init__(self, n: int, edges: dict, directed: bool, vlabels: list | None,
                 elabeled: bool):
        self.n = n
        self.edges = dict(edges)
        self.directed = directed
        self.vlabels = None if vlabels is None else list(vlabels)
        self.elabeled = elabeled

    def key(self, u: int, v: int) -> tuple[int, int]:
        return (u, v) if self.directed or u < v else (v, u)

    def graph(self) -> wm.Graph:
        e = sorted(self.edges)
        src = [a for a, _ in e]
        dst = [b for _, b in e]
        lab = [self.edges[x] for x in e] if self.elabeled else None
        return wm.Graph.from_edges(np.asarray(src, np.int64), np.asarray(dst, np.int64),
                                   n=self.n, vertex_labels=self.vlabels, edge_labels=lab,
                                   directed=self.directed)

    def rows(self, x: int, inward: bool) -> list[tuple[int, int]]:
        """Sorted (neighbour, label) of x: out-row, or the in-row if ``inward``."""
        out = []
        for (a, b), lab in self.edges.items():
            if self.directed:
                if not inward and a == x:
                    out.append((b, lab))
                if inward and b == x:
                    out.append((a, lab))
            else:
                if a == x:
                    out.append((b, lab))
                elif b == x:
                    out.append((a, lab))
        return sorted(out)


def build_view(model: Model, updates: list[tuple], n_new: int, rng: random.Random,
               new_labels: list[int] | None = None):
    """Replay ``updates`` on a copy of ``model``; return (view, states, valid).

    ``updates`` are ``(u, v, op, label)`` in internal ids; vertices ``n..n+n_new-1``
    are new (with ``new_labels`` if the model is vertex-labeled). Invalid updates
    (self-loop, insert existing, delete missing) are
    skipped. The storage is gapped at random, to catch code that assumes
    packed rows.
    """
    n0 = model.n
    n1 = n0 + n_new
    new_labels = [] if model.vlabels is None else list(new_labels)
    # storage rows of S_0 with random slack between them
    def storage(inward: bool):
        start = np.zeros(n0, np.int64)
        deg = np.zeros(n0, np.int32)
        nbr: list[int] = []
        lab: list[int] = []
        for x in range(n0):
            gap = rng.randint(0, 2)
            nbr += [-7] * gap
            lab += [-7] * gap
            start[x] = len(nbr)
            r = model.rows(x, inward)
            deg[x] = len(r)
            nbr += [a for a, _ in r]
            lab += [b for _, b in r]
        nbr += [-7] * rng.randint(0, 2)
        lab += [-7] * (len(nbr) - len(lab))
        elab = np.asarray(lab, np.int32) if model.elabeled else np.zeros(0, np.int32)
        return start, deg, np.asarray(nbr, np.int32), elab

    cur = Model(n1, model.edges, model.directed,
                None if model.vlabels is None else model.vlabels + list(new_labels),
                model.elabeled)
    states = [cur.graph()]
    touched = sorted({x for u, v, _, _ in updates for x in (u, v)})
    # per (x, direction): list of [nbr, label, ins, dl] versions
    vers: dict[tuple[int, bool], list[list[int]]] = {}
    for x in touched:
        for inward in ([False, True] if model.directed else [False]):
            vers[(x, inward)] = [[a, b, -1, int(NEVER)] for a, b in
                                 (model.rows(x, inward) if x < n0 else [])]
    valid = []
    reasons = []
    for i, (u, v, op, lab) in enumerate(updates):
        key = cur.key(u, v)
        ok = u != v and ((op > 0) != (key in cur.edges))
        valid.append(ok)
        reasons.append("" if ok else "invalid")
        if not ok:
            states.append(cur.graph())
            continue
        ends = [((u, False), v), ((v, True), u)] if model.directed else \
            [((u, False), v), ((v, False), u)]
        if op > 0:
            cur.edges[key] = lab if model.elabeled else 0
            for rk, other in ends:
                vers[rk].append([other, lab if model.elabeled else 0, i, int(NEVER)])
        else:
            del cur.edges[key]
            for rk, other in ends:
                for e in vers[rk]:
                    if e[0] == other and e[3] == int(NEVER):
                        e[3] = i
        states.append(cur.graph())

    def overlay(inward: bool):
        idx = np.full(n1, -1, np.int32)
        off = [0]
        cols: list[list[int]] = [[], [], [], []]
        for r, x in enumerate(touched):
            idx[x] = r
            for e in sorted(vers[(x, inward)], key=lambda e: (e[0], e[2])):
                for c in range(4):
                    cols[c].append(e[c])
            off.append(len(cols[0]))
        return (idx, np.asarray(off, np.int64), np.asarray(cols[0], np.int32),
                np.asarray(cols[1], np.int32) if model.elabeled else np.zeros(0, np.int32),
                np.asarray(cols[2], np.int32), np.asarray(cols[3], np.int32))

    out_s = storage(False)
    out_o = overlay(False)
    in_s = storage(True) if model.directed else out_s
    in_o = overlay(True) if model.directed else out_o
    batch = InternalBatch(
        src=np.asarray([u for u, _, _, _ in updates], np.int32),
        dst=np.asarray([v for _, v, _, _ in updates], np.int32),
        op=np.asarray([o for _, _, o, _ in updates], np.int8),
        elabel=np.asarray([(lab if model.elabeled else 0) for *_, lab in updates], np.int32),
        valid=np.asarray(valid, bool), reason=reasons, n_before=n0, n_after=n1,
        new_vertex_labels=np.asarray(new_labels, np.int32))
    vl = (np.asarray(cur.vlabels, np.int32) if cur.vlabels is not None
          else np.zeros(0, np.int32))
    rows = np.asarray(touched, np.int64)
    view = BatchView(n1, model.directed, vl, *out_s, *in_s, *out_o, *in_o, batch, rows, rows)
    return view, states, valid


def random_case(seed: int, directed: bool, vlab: int, elab: int, n: int = 9,
                m: int = 14, B: int = 20, new: int = 2):
    """A random graph model and a random update list that reuses its own edges."""
    rng = random.Random(seed)
    model_edges: dict = {}
    while len(model_edges) < m:
        u, v = rng.randrange(n), rng.randrange(n)
        if u == v:
            continue
        key = (u, v) if directed or u < v else (v, u)
        model_edges[key] = rng.randrange(elab) if elab else 0
    vlabels = [rng.randrange(vlab) for _ in range(n)] if vlab else None
    model = Model(n, model_edges, directed, vlabels, bool(elab))
    new_labels = [rng.randrange(vlab) for _ in range(new)] if vlab else [0] * new
    n1 = n + new
    cur = set(model_edges)
    ups = []
    for _ in range(B):
        r = rng.random()
        lab = rng.randrange(elab) if elab else 0
        if r < 0.15 and ups:                       # undo the previous update (same batch)
            u, v, op, lab = ups[-1]
            ups.append((u, v, -op, lab))
        elif r < 0.45 and cur:                     # delete an existing edge
            key = rng.choice(sorted(cur))
            u, v = key if rng.random() < 0.5 or directed else key[::-1]
            ups.append((u, v, -1, lab))
        elif r < 0.5:                              # an invalid update
            u = rng.randrange(n1)
            ups.append((u, u, 1, lab))
        else:
            u, v = rng.randrange(n1), rng.randrange(n1)
            ups.append((u, v, 1, lab))
        u, v, op, _ = ups[-1]
        key = (u, v) if directed or u < v else (v, u)
        if u != v and op > 0 and key not in cur:
            cur.add(key)
        elif u != v and op < 0 and key in cur:
            cur.discard(key)
    return model, ups, new, (new_labels if vlab else None)


def match_set(g: wm.Graph, q: Query, mode: str, induced: bool) -> set:
    rows = list(wm.match(g, q, mode=mode, induced=induced, backend="cpu"))
    if not rows:
        return set()
    return set(map(tuple, np.concatenate(rows).tolist()))


def check_case(model, ups, n_new, new_labels, q, mode, induced, seed=0):
    """Engine deltas (counts and rows) == differences of consecutive states' match sets."""
    view, states, valid = build_view(model, ups, n_new, random.Random(seed), new_labels)
    eng = CpuDeltaEngine()
    cplans = compile_delta_plans(q, mode=mode, induced=induced, purpose="count",
                                 directed=model.directed, has_edge_labels=model.elabeled)
    lplans = compile_delta_plans(q, mode=mode, induced=induced, purpose="list",
                                 directed=model.directed, has_edge_labels=model.elabeled)
    rc = eng.run(view, cplans, False)
    rl = eng.run(view, lplans, True)
    # local candidate sets (default only for labeled queries) change no count or row
    for local in (True, False):
        other = CpuDeltaEngine(local=local)
        oc = other.run(view, cplans, False)
        assert np.array_equal(oc.plus_counts, rc.plus_counts), local
        assert np.array_equal(oc.minus_counts, rc.minus_counts), local
        ol = other.run(view, lplans, True)
        assert np.array_equal(ol.matches, rl.matches), local
    sets = [match_set(g, q, mode, induced) for g in states]
    for i in range(len(ups)):
        plus = sets[i + 1] - sets[i]
        minus = sets[i] - sets[i + 1]
        assert rc.plus_counts[i] == len(plus), (i, ups[i])
        assert rc.minus_counts[i] == len(minus), (i, ups[i])
        assert rl.plus_counts[i] == len(plus)
        assert rl.minus_counts[i] == len(minus)
        sel = rl.match_update == i
        got_p = [tuple(r) for r in rl.matches[sel & (rl.match_sign > 0)].tolist()]
        got_m = [tuple(r) for r in rl.matches[sel & (rl.match_sign < 0)].tolist()]
        assert len(got_p) == len(set(got_p)) and set(got_p) == plus, (i, ups[i])
        assert len(got_m) == len(set(got_m)) and set(got_m) == minus, (i, ups[i])
        if not valid[i]:
            assert rc.plus_counts[i] == rc.minus_counts[i] == 0
    assert np.all(np.diff(rl.match_update) >= 0)
    return rc


UNDIRECTED = ["triangle", "square", "diamond", "tailed-triangle", "4-clique", "3-path",
              "4-path"]
#: queries whose counting groups hold 2-4 vertices that are not twins (counted by
#: inclusion–exclusion over their candidate lists), with and without labels
GROUPED = ["a-b, b-c, c-a, a-d, b-e, c-f", "a-b, a-c, a-d, b-e, b-f",
           "a-b, b-c, c-a, a-d:0, b-e:1, c-f:0", "a:0-b, a-c:1, a-d:1, b-e:1, b-f:0",
           "a-b, b-c, c-d, d-a, a-e, c-f",
           # a group of five (rows past GROUP_MAX) with a three-member collision set
           "a-b, a-c:0, b-d:0, a-e:1, b-f:1, b-g:1"]


# ------------------------------------------------------------------ plans
def test_plan_shapes_and_weights():
    tri = get_pattern("triangle")
    dp = compile_delta_plans(tri)
    # one orbit of the 6 ordered pairs; the third vertex is counted, not enumerated
    assert dp.num_plans == 1 and dp.weight.tolist() == [6] and dp.divisor == 1
    assert dp.group_start.tolist() == [2] and not dp.listable
    lp = compile_delta_plans(tri, purpose="list")
    assert lp.num_plans == 6 and lp.listable and lp.res_pos.size == 0
    assert set(map(tuple, lp.order[:, :2].tolist())) == {(0, 1), (1, 0), (0, 2), (2, 0),
                                                         (1, 2), (2, 1)}
    sp = compile_delta_plans(tri, mode="subgraphs", purpose="list")
    assert sp.num_plans == 6 and sp.listable and sp.res_pos.size > 0   # Aut's restrictions
    op = compile_delta_plans(get_pattern("4-clique"), purpose="orbits")
    assert op.num_plans == 1 and op.res_pos.size == 1               # Stab(0, 1) swaps 2, 3
    op = compile_delta_plans(tri, purpose="orbits")
    assert op.num_plans == 1 and op.listable and op.aut_size == 6
    # induced path: 2 edges x 2 orientations in 2 orbits, the non-adjacent pair in 1
    ip = compile_delta_plans(get_pattern("3-path"), induced=True)
    assert ip.num_plans == 3 and ip.pair_kind.tolist().count(0) == 1
    assert np.all(ip.group_start == ip.k)           # induced plans have no group
    # every depth >= 2 has a backward edge; depth 0 has nothing
    for j in range(ip.num_plans):
        assert ip.bn_ptr[j, 0] == ip.bn_ptr[j, 1]
        for i in range(2, ip.k):
            assert ip.bn_ptr[j, i + 1] > ip.bn_ptr[j, i]


@pytest.mark.parametrize("name", ["triangle", "diamond", "4-clique", "square", "house",
                                  "4-star", "5-star", "tailed-triangle", "4-path"])
def test_weights_are_orbit_times_broken_stabilizer(name):
    """Σ_j weight_j / |Aut| over the representatives of one kind counts every ordered pair
    once: the orbits partition the pairs, and weight = |O| · |K| / |H|."""
    from warpmatch.query.symmetry import automorphism_count
    q = get_pattern(name)
    dp = compile_delta_plans(q)
    every = compile_delta_plans(q, purpose="list")
    aut = automorphism_count(q)
    # a counting group never holds a vertex adjacent to another one of it
    A = q.adjacency() | q.adjacency().T
    for j in range(dp.num_plans):
        grp = dp.order[j, dp.group_start[j]:].tolist()
        assert not any(A[u, w] for u in grp for w in grp)
        colors = np.zeros(q.k, np.int64)
        colors[dp.order[j, 0]], colors[dp.order[j, 1]] = 1, 2
        k_size = automorphism_count(q, colors)
        orbit = aut // k_size
        assert dp.weight[j] % orbit == 0 and (dp.weight[j] // orbit) <= k_size
    assert sum(aut // automorphism_count(q, _pair_colors(q, dp, j))
               for j in range(dp.num_plans)) == every.num_plans


def _pair_colors(q, dp, j):
    colors = np.zeros(q.k, np.int64)
    colors[dp.order[j, 0]], colors[dp.order[j, 1]] = 1, 2
    return colors


def test_directed_plans():
    q = Query.parse("a->b, b->c, c->a")
    dp = compile_delta_plans(q, induced=True)
    # the directed 3-cycle's rotations make one orbit of its 3 edges, one of the reversals
    assert dp.pair_kind.tolist() == [1, 0]
    assert automorphism_count(q) == 3 and dp.weight.tolist() == [3, 3]
    every = compile_delta_plans(q, induced=True, purpose="list")
    assert every.pair_kind.tolist().count(1) == 3 and every.pair_kind.tolist().count(0) == 3


def test_greedy_order_prefers_more_backward_edges():
    # tailed triangle 0-1-2-0, 2-3; from the tail edge (3, 2): next must be 0 or 1
    # (1 backward edge each, degree 2), never... then the other closes the triangle
    q = get_pattern("tailed-triangle")
    dp = compile_delta_plans(q, purpose="list")
    for j in range(dp.num_plans):
        o = dp.order[j].tolist()
        assert sorted(o) == [0, 1, 2, 3]
        placed = set(o[:2])
        for u in o[2:]:
            assert any(w in placed for w in q.neighbors(u))
            placed.add(u)


def test_plan_errors():
    with pytest.raises(QueryError, match="directed"):
        compile_delta_plans(get_pattern("triangle"), directed=True)
    with pytest.raises(QueryError, match="undirected"):
        compile_delta_plans(Query.parse("a->b"), directed=False)
    with pytest.raises(QueryError, match="no edge labels"):
        compile_delta_plans(Query.parse("a-[3]-b"), has_edge_labels=False)
    with pytest.raises(QueryError, match="mode"):
        compile_delta_plans(get_pattern("triangle"), mode="bogus")
    with pytest.raises(QueryError, match="purpose"):
        compile_delta_plans(get_pattern("triangle"), purpose="bogus")
    with pytest.raises(QueryError, match="no edges"):
        compile_delta_plans(Query.from_edges([], k=1))


def test_listing_needs_listable_plans():
    model, ups, n_new, _ = random_case(1, False, 0, 0)
    view, _, _ = build_view(model, ups, n_new, random.Random(0))
    with pytest.raises(ValueError, match="purpose='list'"):
        CpuDeltaEngine().run(view, compile_delta_plans(get_pattern("triangle")), True)


# ----------------------------------------------------------- the engine
@pytest.mark.parametrize("name", UNDIRECTED)
@pytest.mark.parametrize("induced", [False, True])
def test_named_patterns_undirected(name, induced):
    model, ups, n_new, _ = random_case(7, False, 0, 0, n=10, m=22, B=30, new=1)
    q = get_pattern(name)
    for mode in ("embeddings", "subgraphs"):
        check_case(model, ups, n_new, None, q, mode, induced)


@pytest.mark.parametrize("text", GROUPED)
def test_counting_groups(text):
    q = Query.parse(text)
    dp = compile_delta_plans(q)
    sizes = [int(np.bincount(dp.gcomp[j][dp.gcomp[j] >= 0]).max(initial=0))
             for j in range(dp.num_plans)]
    assert max(sizes) >= 2                  # some plan counts a set of several vertices
    for seed in (5, 6):
        model, ups, n_new, new = random_case(seed, False, 2 if q.labeled else 0, 0,
                                             n=9, m=20, B=25, new=1)
        for mode in ("embeddings", "subgraphs"):
            check_case(model, ups, n_new, new, q, mode, False, seed)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), vlab=st.sampled_from([0, 2]), elab=st.sampled_from([0, 2]),
       induced=st.booleans(), mode=st.sampled_from(["embeddings", "subgraphs"]),
       qi=st.integers(0, 3))
def test_random_undirected(seed, vlab, elab, induced, mode, qi):
    model, ups, n_new, new = random_case(seed, False, vlab, elab)
    qs = ["a-b, b-c, c-a", "a-b, b-c, c-d, d-a", "a-b, b-c, c-a, c-d", "a-b, b-c, c-d"]
    q = Query.parse(qs[qi])
    if vlab:
        # label two query vertices (labels may be absent from S_0 but appear later)
        vl = q.vertex_labels.copy()
        vl[0], vl[2] = seed % 2, (seed // 2) % 3
        q = Query(q.k, q.edges, q.edge_labels, vl, names=q.names)
    if elab:
        el = q.edge_labels.copy()
        el[0] = seed % 2
        q = Query(q.k, q.edges, el, q.vertex_labels, names=q.names)
    check_case(model, ups, n_new, new, q, mode, induced, seed)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), vlab=st.sampled_from([0, 2]), elab=st.sampled_from([0, 2]),
       induced=st.booleans(), mode=st.sampled_from(["embeddings", "subgraphs"]),
       qi=st.integers(0, 3))
def test_random_directed(seed, vlab, elab, induced, mode, qi):
    model, ups, n_new, new = random_case(seed, True, vlab, elab, m=18)
    qs = ["a->b, b->c, c->a", "a->b, b->c, a->c", "a->b, b->a, b->c", "a->b, c->b, c->d"]
    q = Query.parse(qs[qi])
    if elab:
        el = q.edge_labels.copy()
        el[-1] = seed % 2
        q = Query(q.k, q.edges, el, q.vertex_labels, directed=True, names=q.names)
    if vlab:
        vl = q.vertex_labels.copy()
        vl[1] = seed % 2
        q = Query(q.k, q.edges, q.edge_labels, vl, directed=True, names=q.names)
    check_case(model, ups, n_new, new, q, mode, induced, seed)


def test_insert_then_delete_same_edge_cancels():
    # K4 minus edge (0, 1): inserting it closes two triangles, deleting it opens them again
    edges = {(0, 2): 0, (0, 3): 0, (1, 2): 0, (1, 3): 0, (2, 3): 0}
    model = Model(4, edges, False, None, False)
    ups = [(0, 1, 1, 0), (1, 0, -1, 0), (0, 1, 1, 0)]
    rc = check_case(model, ups, 0, None, get_pattern("triangle"), "embeddings", False)
    assert rc.plus_counts.tolist() == [12, 0, 12]
    assert rc.minus_counts.tolist() == [0, 12, 0]


def test_new_vertices_and_threads():
    model, ups, n_new, new = random_case(3, False, 2, 0, n=8, m=12, B=25, new=3)
    q = Query.parse("a:0-b, b-c, c-a")
    rc = check_case(model, ups, n_new, new, q, "embeddings", False)
    view, _, _ = build_view(model, ups, n_new, random.Random(0), new)
    one = CpuDeltaEngine(threads=1).run(view, compile_delta_plans(q), False)
    assert np.array_equal(one.plus_counts, rc.plus_counts)
    assert np.array_equal(one.minus_counts, rc.minus_counts)


@pytest.mark.parametrize("name", ["triangle", "4-clique", "tailed-triangle"])
def test_many_short_parallel_regions(monkeypatch, name):
    """A batch cut into parallel regions of a few tasks each (what a heavy batch gets,
    so that Ctrl-C is served between regions) gives the same deltas and rows."""
    from warpmatch.stream import cpu
    model, ups, n_new, _ = random_case(11, False, 0, 0, n=12, m=40, B=40, new=0)
    view, _, _ = build_view(model, ups, n_new, random.Random(0))
    q = get_pattern(name)
    plans = [compile_delta_plans(q, purpose=p) for p in ("count", "list")]
    want = [CpuDeltaEngine(threads=2).run(view, p, i == 1) for i, p in enumerate(plans)]
    monkeypatch.setattr(cpu, "PROBE_TASKS", 1)     # one serial task, then parallel regions
    monkeypatch.setattr(cpu, "PARALLEL_S", 0.0)
    monkeypatch.setattr(cpu, "CALL_S", 0.0)        # of `threads` tasks each
    got = [CpuDeltaEngine(threads=2).run(view, p, i == 1) for i, p in enumerate(plans)]
    for w, g in zip(want, got):
        assert np.array_equal(w.plus_counts, g.plus_counts)
        assert np.array_equal(w.minus_counts, g.minus_counts)
    assert want[1].matches.shape[0] > 0 and np.array_equal(want[1].matches, got[1].matches)


def test_all_invalid_and_empty_batch():
    model = Model(3, {(0, 1): 0}, False, None, False)
    view, _, _ = build_view(model, [(0, 1, 1, 0), (1, 2, -1, 0)], 0, random.Random(0))
    r = CpuDeltaEngine().run(view, compile_delta_plans(get_pattern("3-path"), purpose="list"),
                             True)
    assert r.plus_counts.tolist() == [0, 0] and r.matches.shape == (0, 3)
    view, _, _ = build_view(model, [], 0, random.Random(0))
    r = CpuDeltaEngine().run(view, compile_delta_plans(get_pattern("3-path")), False)
    assert r.plus_counts.size == 0 and r.matches is None


# ------------------------------------------------------------------ path plans
#: queries with path plans (stream._cpu_rows.path_plans): the house, a directed house, a
#: 5-cycle with a chord (the last core depth hangs off the first vertex)
PATHS = ["a-b, b-c, c-d, d-a, a-e, b-e", "a->b, b->c, d->c, a->d, a->e, e->b",
         "a-b, b-c, c-d, d-e, e-a, a-c"]


@pytest.mark.parametrize("text", PATHS)
@pytest.mark.parametrize("labels", [(0, 0), (2, 0), (0, 2)])
def test_path_plans_count_exactly(text, labels):
    from warpmatch.stream._cpu_rows import path_plans
    vlab, elab = labels
    q = Query.parse(text)
    if vlab:          # one labelled vertex on the path, one off it
        vl = q.vertex_labels.copy()
        vl[2], vl[4] = 0, 1
        q = Query(q.k, q.edges, q.edge_labels, vl, directed=q.directed, names=q.names)
    if elab:
        el = q.edge_labels.copy()
        el[1] = 1
        q = Query(q.k, q.edges, el, q.vertex_labels, directed=q.directed, names=q.names)
    assert path_plans(compile_delta_plans(q)).any()   # the path count really runs
    for seed in (3, 4):
        model, ups, n_new, new = random_case(seed, q.directed, vlab, elab, n=9, m=22, B=30,
                                             new=1)
        check_case(model, ups, n_new, new, q, "embeddings", False, seed)
