"""The reference engine against networkx's VF2 (an independent implementation).

networkx's ``GraphMatcher(G, Q)`` yields dicts *data vertex -> query vertex*;
we invert them into query-vertex-ordered tuples. Non-induced embeddings are
``subgraph_monomorphisms_iter``, induced ones ``subgraph_isomorphisms_iter``.
Subgraphs mode is checked two ways: the count equals embeddings / |Aut|, and
the listed representatives composed with every automorphism give back every
embedding exactly once.
"""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from networkx.algorithms import isomorphism as iso

from warpmatch.engine import available_backends, get_engine, resolve_backend
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.errors import BackendUnavailableError
from warpmatch.graph.csr import Graph
from warpmatch.plan import build_plan
from warpmatch.query.model import Query

ENGINE = ReferenceEngine()
# random queries may ask for a label the random graph lacks: that warning is expected here
pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
SETTINGS = settings(max_examples=70, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ----------------------------------------------------------------- oracle
def _node_match(g_attr: dict, q_attr: dict) -> bool:
    lab = q_attr.get("label", -1)
    return lab == -1 or g_attr.get("label") == lab


def _nx_data(n, edges, directed, vlabels, elabels) -> nx.Graph:
    G = nx.DiGraph() if directed else nx.Graph()
    for v in range(n):
        G.add_node(v, **({} if vlabels is None else {"label": vlabels[v]}))
    for i, (a, b) in enumerate(edges):
        G.add_edge(a, b, **({} if elabels is None else {"label": elabels[i]}))
    return G


def nx_embeddings(G: nx.Graph, q: Query, induced: bool) -> set[tuple[int, ...]]:
    """Every embedding of q in G as a tuple f(0..k-1), from networkx VF2."""
    Q = q.to_networkx()
    cls = iso.DiGraphMatcher if q.directed else iso.GraphMatcher
    gm = cls(G, Q, node_match=_node_match, edge_match=_node_match)
    it = gm.subgraph_isomorphisms_iter() if induced else gm.subgraph_monomorphisms_iter()
    out = set()
    for m in it:
        inv = {qv: gv for gv, qv in m.items()}
        out.add(tuple(inv[u] for u in range(q.k)))
    return out


def automorphisms(q: Query, colors: list[int] | None = None) -> list[tuple[int, ...]]:
    """Label-, edge-label-, direction- and colour-preserving automorphisms, brute force."""
    L = q.edge_label_matrix()
    vl = q.vertex_labels.tolist()
    col = colors or [0] * q.k
    out = []
    for p in itertools.permutations(range(q.k)):
        if all(vl[u] == vl[p[u]] and col[u] == col[p[u]] for u in range(q.k)) and \
                all(L[u, w] == L[p[u], p[w]] for u in range(q.k) for w in range(q.k)):
            out.append(p)
    return out


# ------------------------------------------------------------- strategies
@st.composite
def instances(draw):
    directed = draw(st.booleans())
    n = draw(st.integers(4, 12))
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b and (directed or a < b)]
    p = draw(st.sampled_from([0.25, 0.4, 0.6]))
    rnd = draw(st.randoms(use_true_random=False))
    edges = [e for e in pairs if rnd.random() < p]
    vlab = draw(st.booleans())
    elab = draw(st.booleans())
    vlabels = [rnd.randrange(2) for _ in range(n)] if vlab else None
    elabels = [rnd.randrange(2) for _ in edges] if elab else None
    # query: random spanning tree on k vertices plus random extra edges
    k = draw(st.integers(3, 5))
    qedges = set()
    for v in range(1, k):
        u = rnd.randrange(v)
        qedges.add((u, v) if rnd.random() < 0.5 else (v, u))
    for _ in range(rnd.randrange(k)):
        a, b = rnd.sample(range(k), 2)
        if directed or ((a, b) not in qedges and (b, a) not in qedges):
            qedges.add((a, b))
    qedges = sorted(qedges)
    qv = [rnd.choice([-1, -1, 0, 1]) for _ in range(k)] if vlab else None
    qe = [rnd.choice([-1, -1, 0, 1]) for _ in qedges] if elab else None
    q = Query.from_edges(qedges, k=k, vertex_labels=qv, edge_labels=qe, directed=directed,
                         names=[chr(ord("a") + i) for i in range(k)])
    src = [a for a, _ in edges]
    dst = [b for _, b in edges]
    g = Graph.from_edges(src, dst, n=n, vertex_labels=vlabels, edge_labels=elabels,
                         directed=directed)
    G = _nx_data(n, edges, directed, vlabels, elabels)
    return g, G, q, rnd


def listed(plan, g) -> list[tuple[int, ...]]:
    rows = [plan.to_query_order(b) for b in ENGINE.match(g, plan, batch_size=5)]
    if not rows:
        return []
    return [tuple(r) for r in np.concatenate(rows).tolist()]


# ------------------------------------------------------------------ tests
@SETTINGS
@given(instances(), st.booleans())
def test_embeddings_match_networkx(inst, induced):
    g, G, q, _ = inst
    expected = nx_embeddings(G, q, induced)
    # counting: symmetry breaking × |Aut|
    pc = build_plan(g, q, mode="embeddings", induced=induced, purpose="count")
    assert ENGINE.count(g, pc) * pc.multiplier == len(expected)
    # listing: every embedding once, and list == count on the same plan
    pl = build_plan(g, q, mode="embeddings", induced=induced, purpose="list")
    got = listed(pl, g)
    assert len(got) == len(set(got)) == ENGINE.count(g, pl)
    assert set(got) == expected


@SETTINGS
@given(instances(), st.booleans())
def test_subgraphs_match_networkx(inst, induced):
    g, G, q, _ = inst
    expected = nx_embeddings(G, q, induced)
    auts = automorphisms(q)
    plan = build_plan(g, q, mode="subgraphs", induced=induced)
    assert plan.multiplier == 1 and plan.aut_size == len(auts)
    assert ENGINE.count(g, plan) * len(auts) == len(expected)
    reps = listed(plan, g)
    assert len(reps) == ENGINE.count(g, plan)
    # each orbit is represented exactly once
    expanded = [tuple(r[p[u]] for u in range(q.k)) for r in reps for p in auts]
    assert len(expanded) == len(set(expanded))
    assert set(expanded) == expected


@SETTINGS
@given(instances(), st.booleans(), st.sampled_from(["embeddings", "subgraphs"]))
def test_anchored_queries_match_filtered_networkx(inst, induced, mode):
    g, G, q, rnd = inst
    u = rnd.randrange(q.k)
    anchor = sorted(rnd.sample(range(g.n), rnd.randrange(1, 4)))
    expected = {m for m in nx_embeddings(G, q, induced) if m[u] in anchor}
    plan = build_plan(g, q, mode=mode, induced=induced, anchors={q.names[u]: anchor})
    assert plan.order[0] == u
    assert set(plan.roots.tolist()) <= set(anchor)
    colors = [1 if v == u else 0 for v in range(q.k)]
    auts = automorphisms(q, colors)
    assert plan.aut_size == len(auts)
    raw = ENGINE.count(g, plan)
    if mode == "embeddings":
        assert raw * plan.multiplier == len(expected)
        pl = build_plan(g, q, mode=mode, induced=induced, anchors={u: anchor}, purpose="list")
        assert set(listed(pl, g)) == expected
    else:
        assert raw * len(auts) == len(expected)


@pytest.mark.parametrize("order", ["ri", "gql", "core", "input"])
def test_every_order_gives_the_same_matches(order):
    G = nx.gnp_random_graph(11, 0.45, seed=7)
    g = Graph.from_edges(*zip(*G.edges()), n=11)
    q = Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])
    plan = build_plan(g, q, order=order, purpose="list")
    assert set(listed(plan, g)) == nx_embeddings(G, q, induced=False)


def test_exhaustive_small_queries_from_the_atlas():
    """Every connected graph on 3–5 vertices (networkx's atlas), both modes, induced or not."""
    G = nx.gnp_random_graph(10, 0.5, seed=3)
    g = Graph.from_edges(*zip(*G.edges()), n=10)
    checked = 0
    for A in nx.graph_atlas_g():
        if not 3 <= A.number_of_nodes() <= 5 or not nx.is_connected(A):
            continue
        q = Query.from_edges(list(A.edges()), k=A.number_of_nodes())
        auts = len(automorphisms(q))
        for induced in (False, True):
            emb = len(nx_embeddings(G, q, induced))
            pe = build_plan(g, q, induced=induced)
            ps = build_plan(g, q, mode="subgraphs", induced=induced)
            assert ENGINE.count(g, pe) * pe.multiplier == emb
            assert ENGINE.count(g, ps) * auts == emb
        checked += 1
    assert checked == 2 + 6 + 21


def test_single_vertex_query_counts_labeled_vertices():
    g = Graph.from_edges([0, 1], [1, 2], n=4, vertex_labels=[1, 0, 1, 1])
    q = Query.from_edges([], k=1, vertex_labels=[1])
    plan = build_plan(g, q)
    assert ENGINE.count(g, plan) == 3
    assert np.concatenate(list(ENGINE.match(g, plan))).ravel().tolist() == [0, 2, 3]


def test_match_honours_batch_size_and_limit():
    G = nx.complete_graph(6)
    g = Graph.from_edges(*zip(*G.edges()), n=6)
    plan = build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 0)]), purpose="list")
    assert ENGINE.count(g, plan) == 120
    batches = list(ENGINE.match(g, plan, batch_size=7))
    assert [len(b) for b in batches] == [7] * 17 + [1]
    assert all(b.dtype == g.indices.dtype and b.shape[1] == 3 for b in batches)
    limited = list(ENGINE.match(g, plan, batch_size=7, limit=10))
    assert [len(b) for b in limited] == [7, 3]
    assert list(ENGINE.match(g, plan, limit=0)) == []
    with pytest.raises(ValueError):
        next(ENGINE.match(g, plan, batch_size=0))


def test_progress_reports_every_root():
    G = nx.complete_graph(5)
    g = Graph.from_edges(*zip(*G.edges()), n=5)
    plan = build_plan(g, Query.from_edges([(0, 1), (1, 2)]))
    seen = []
    ENGINE.count(g, plan, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 5) for i in range(1, 6)]


def test_empty_plan_counts_zero():
    g = Graph.from_edges([0, 1], [1, 2])
    plan = build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0)]))
    assert plan.empty_reason and plan.roots.size == 0
    assert ENGINE.count(g, plan) == 0 and list(ENGINE.match(g, plan)) == []


# --------------------------------------------------------------- registry
def test_registry_reference_always_available():
    assert get_engine("reference").name == "reference"
    assert available_backends()["reference"] == (True, "")
    assert resolve_backend("reference").name == "reference"
    assert resolve_backend("auto").available()[0]


def test_registry_unknown_and_unavailable_backends():
    with pytest.raises(BackendUnavailableError, match="unknown backend 'tpu'"):
        resolve_backend("tpu")
    with pytest.raises(BackendUnavailableError, match="unknown backend"):
        get_engine("tpu")
    for name, (ok, reason) in available_backends().items():
        if ok:
            assert resolve_backend(name).name == name
        else:
            assert f"backend {name!r}" in reason
            with pytest.raises(BackendUnavailableError, match=f"backend '{name}'"):
                resolve_backend(name)


def test_registry_import_failure_is_reported(monkeypatch):
    import warpmatch.engine as reg
    monkeypatch.setitem(reg._REGISTRY, "ghost", ("warpmatch.engine._no_such_module", "X",
                                                 "a ghost"))
    ok, reason = reg.available_backends()["ghost"]
    assert not ok and "backend 'ghost' needs a ghost" in reason and "_no_such_module" in reason
    with pytest.raises(BackendUnavailableError, match="needs a ghost"):
        reg.resolve_backend("ghost")


def test_auto_prefers_gpu_then_cpu(monkeypatch):
    import warpmatch.engine as reg

    class Fake:
        def __init__(self, name, ok):
            self.name, self._ok = name, ok

        def available(self):
            return (self._ok, "" if self._ok else "no device")

    monkeypatch.setattr(reg, "_INSTANCES", {"gpu": Fake("gpu", False), "cpu": Fake("cpu", True),
                                            "reference": Fake("reference", True)})
    assert reg.resolve_backend("auto").name == "cpu"
    with pytest.raises(BackendUnavailableError, match="backend 'gpu' needs CuPy and a CUDA "
                                                      "device: no device"):
        reg.resolve_backend("gpu")
    reg._INSTANCES["gpu"] = Fake("gpu", True)
    assert reg.resolve_backend("auto").name == "gpu"
