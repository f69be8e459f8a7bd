"""Automorphisms and Grochow–Kellis symmetry breaking, against brute force.

The contract: for every data graph, the embeddings that satisfy the
restrictions are exactly one per orbit {f ∘ σ : σ ∈ Aut} (hence one per
distinct subgraph when labels do not mix wildcards and values), and their
number times |Aut| is the number of embeddings — non-induced and induced.
Everything here is checked with an independent brute force written in this
file (all permutations of query vertices, all injective maps into the data).
"""
from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpmatch.errors import QueryError
from warpmatch.query import (
    Query,
    automorphism_count,
    get_pattern,
    parse_query,
    symmetry_breaking,
)
from warpmatch.query import symmetry as sym
from warpmatch.query.symmetry import automorphisms, orbits

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------ brute force
def edge_dict(k_edges, labels, directed: bool) -> dict[tuple[int, int], int]:
    d = {}
    for (u, w), lab in zip(k_edges, labels):
        d[(u, w)] = lab
        if not directed:
            d[(w, u)] = lab
    return d


def brute_automorphisms(q: Query, colors=None) -> list[tuple[int, ...]]:
    E = edge_dict(q.edges.tolist(), q.edge_labels.tolist(), q.directed)
    vl = q.vertex_labels.tolist()
    col = [0] * q.k if colors is None else list(colors)
    out = []
    for p in permutations(range(q.k)):
        if any(vl[p[u]] != vl[u] or col[p[u]] != col[u] for u in range(q.k)):
            continue
        if all(E.get((p[u], p[w])) == lab for (u, w), lab in E.items()):
            out.append(p)
    return out


class Data:
    """A tiny data graph: n vertices, labels, labeled edges."""

    def __init__(self, n: int, labels: list[int], edges: dict[tuple[int, int], int],
                 directed: bool):
        self.n, self.labels, self.directed = n, labels, directed
        self.E = edge_dict(list(edges), list(edges.values()), directed)


def brute_embeddings(q: Query, g: Data, induced: bool) -> list[tuple[int, ...]]:
    QE = edge_dict(q.edges.tolist(), q.edge_labels.tolist(), q.directed)
    vl = q.vertex_labels.tolist()
    non_edges = [(u, w) for u in range(q.k) for w in range(q.k) if u != w and (u, w) not in QE]
    out = []
    for f in permutations(range(g.n), q.k):
        if any(vl[u] != -1 and g.labels[f[u]] != vl[u] for u in range(q.k)):
            continue
        ok = True
        for (u, w), lab in QE.items():
            dl = g.E.get((f[u], f[w]))
            if dl is None or (lab != -1 and dl != lab):
                ok = False
                break
        if ok and induced:
            ok = all((f[u], f[w]) not in g.E for u, w in non_edges)
        if ok:
            out.append(f)
    return out


def check_contract(q: Query, g: Data, induced: bool, colors=None) -> int:
    restrictions, aut = symmetry_breaking(q, colors)
    group = brute_automorphisms(q, colors)
    assert aut == len(group)
    assert all(0 <= a < q.k and 0 <= b < q.k and a != b for a, b in restrictions)
    emb = brute_embeddings(q, g, induced)
    kept = [f for f in emb if all(f[a] < f[b] for a, b in restrictions)]
    assert len(kept) * aut == len(emb)
    # exactly one kept embedding per orbit {f∘σ}
    covered: set[tuple[int, ...]] = set()
    for f in kept:
        orbit = {tuple(f[s[u]] for u in range(q.k)) for s in group}
        assert len(orbit) == aut              # the action on embeddings is free
        assert not (orbit & covered)          # no two kept embeddings share an orbit
        covered |= orbit
    assert covered == set(emb)
    # one per distinct subgraph, when no label mixes a wildcard with a value
    vls, els = set(q.vertex_labels.tolist()), set(q.edge_labels.tolist())
    uniform = (vls == {-1} or -1 not in vls) and (els <= {-1} or -1 not in els) \
        and colors is None
    if uniform:
        if induced:
            images = {frozenset(f) for f in emb}
        else:
            def image(f):
                es = [(f[u], f[w]) for u, w in q.edges.tolist()]
                return frozenset(es if q.directed else map(frozenset, es))
            images = {image(f) for f in emb}
        assert len(kept) == len(images)
    return len(emb)


# ------------------------------------------------------------ strategies
SHAPES = ["triangle", "square", "diamond", "tailed-triangle", "house", "bowtie", "bull",
          "4-clique", "5-cycle", "4-star", "5-star", "4-path", "6-cycle", "5-clique"]


@st.composite
def queries(draw, kmin: int = 3, kmax: int = 6) -> Query:
    directed = draw(st.booleans())
    if draw(st.booleans()):
        base = get_pattern(draw(st.sampled_from([s for s in SHAPES
                                                 if kmin <= get_pattern(s).k <= kmax])))
        k, pairs = base.k, [tuple(e) for e in base.edges.tolist()]
    else:
        k = draw(st.integers(kmin, kmax))
        pairs = [(draw(st.integers(0, i - 1)), i) for i in range(1, k)]   # a random tree
        extra = draw(st.lists(st.tuples(st.integers(0, k - 1), st.integers(0, k - 1)),
                              max_size=k))
        pairs += [(u, w) for u, w in extra if u != w]
    perm = draw(st.permutations(range(k)))   # hide the pattern's vertex order
    edges: dict[tuple[int, int], None] = {}
    for u, w in pairs:
        u, w = perm[u], perm[w]
        if directed:
            r = draw(st.integers(0, 2))   # one way, the other, or both
            for e in ([(u, w)], [(w, u)], [(u, w), (w, u)])[r]:
                edges[e] = None
        else:
            edges[(min(u, w), max(u, w))] = None
    vmode = draw(st.sampled_from(["none", "none", "values", "mixed"]))
    lab_set = {"none": [-1], "values": [0, 1], "mixed": [-1, 0, 1]}[vmode]
    vl = [draw(st.sampled_from(lab_set)) for _ in range(k)]
    emode = draw(st.sampled_from(["none", "none", "values", "mixed"]))
    el_set = {"none": [-1], "values": [0, 1], "mixed": [-1, 0]}[emode]
    el = [draw(st.sampled_from(el_set)) for _ in edges]
    return Query.from_edges(list(edges), k=k, vertex_labels=vl, edge_labels=el,
                            directed=directed)


@st.composite
def data_for(draw, q: Query) -> Data:
    n = draw(st.integers(q.k, 7))
    p = draw(st.sampled_from([0.5, 0.8, 1.0]))
    labels = [draw(st.integers(0, 1)) if q.labeled else 0 for _ in range(n)]
    edges = {}
    for a in range(n):
        for b in range(n):
            if a == b or (not q.directed and b < a):
                continue
            if draw(st.floats(0, 1)) < p:
                edges[(a, b)] = draw(st.integers(0, 1)) if q.edge_labeled else 0
    return Data(n, labels, edges, q.directed)


# ------------------------------------------------------------ the contract
@SETTINGS
@given(data=st.data(), induced=st.booleans())
def test_contract_random(data, induced: bool) -> None:
    q = data.draw(queries())
    g = data.draw(data_for(q))
    check_contract(q, g, induced)


@SETTINGS
@given(data=st.data(), induced=st.booleans())
def test_contract_with_colors(data, induced: bool) -> None:
    q = data.draw(queries(3, 5))
    colors = data.draw(st.lists(st.integers(0, 1), min_size=q.k, max_size=q.k))
    g = data.draw(data_for(q))
    check_contract(q, g, induced, colors)


@pytest.mark.parametrize("name", SHAPES + ["6-star", "3-path"])
@pytest.mark.parametrize("induced", [False, True])
def test_contract_on_named_patterns_in_a_dense_graph(name: str, induced: bool) -> None:
    rng = np.random.default_rng(5)
    n = 7
    q = get_pattern(name)
    sparse = {(a, b): 0 for a in range(n) for b in range(a + 1, n) if rng.random() < 0.6}
    check_contract(q, Data(n, [0] * n, sparse, False), induced)
    # K7 minus two disjoint edges: holds every shape, non-induced and induced
    dense = {(a, b): 0 for a in range(n) for b in range(a + 1, n) if (a, b) not in {(0, 1), (2, 3)}}
    found = check_contract(q, Data(n, [0] * n, dense, False), induced)
    if not induced or name.endswith("clique") or name in ("diamond", "square", "triangle"):
        assert found > 0     # the test means something


def test_directed_cycle_and_antiparallel_edges() -> None:
    q = parse_query("a->b->c->a")
    assert symmetry_breaking(q)[1] == 3          # rotations only
    q2 = parse_query("a->b, b->a, b->c, c->b, c->a, a->c")
    assert automorphism_count(q2) == 6
    n = 5
    edges = {(a, b): 0 for a in range(n) for b in range(n) if a != b and (a * 3 + b) % 4 != 0}
    for query in (q, q2):
        for induced in (False, True):
            check_contract(query, Data(n, [0] * n, edges, True), induced)


# ------------------------------------------------------------ |Aut| itself
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_aut_matches_brute_force_up_to_7(data) -> None:
    q = data.draw(queries(2, 7))
    colors = data.draw(st.none() | st.lists(st.integers(0, 2), min_size=q.k, max_size=q.k))
    group = brute_automorphisms(q, colors)
    assert automorphism_count(q, colors) == len(group)
    assert automorphisms(q, colors) == sorted(group)
    # orbits of the whole group
    want = {frozenset(s[u] for s in group) for u in range(q.k)}
    assert {frozenset(o) for o in orbits(q, colors)} == want


def test_labels_and_colors_break_symmetry() -> None:
    assert automorphism_count(parse_query("a-b-c-a")) == 6
    assert automorphism_count(parse_query("a:1-b-c-a")) == 2
    assert automorphism_count(parse_query("a-[1]-b-c-a")) == 2
    assert automorphism_count(get_pattern("triangle"), colors=[0, 0, 1]) == 2
    assert automorphism_count(get_pattern("triangle"), colors=[0, 1, 2]) == 1
    assert symmetry_breaking(parse_query("a:1-b:2"))[0] == []
    assert symmetry_breaking(parse_query("a:5")) == ([], 1)


def test_bad_colors() -> None:
    with pytest.raises(QueryError, match="colors must be 3 integers"):
        symmetry_breaking(get_pattern("triangle"), colors=[0, 1])
    with pytest.raises(QueryError, match="colors must be 3 integers"):
        symmetry_breaking(get_pattern("triangle"), colors=[0.5, 1, 2])


def test_automorphisms_refuses_huge_groups() -> None:
    with pytest.raises(QueryError, match="more than limit"):
        automorphisms(get_pattern("9-clique"), limit=1000)
    assert len(automorphisms(get_pattern("5-clique"))) == 120


# ------------------------------------------------------------ big groups, no listing
class CountingCtx(sym._Ctx):
    checks = 0

    def is_automorphism(self, sigma):
        CountingCtx.checks += 1
        return super().is_automorphism(sigma)


@pytest.mark.parametrize("name,aut,restrictions", [
    ("32-star", math.factorial(31), 31 * 30 // 2),
    ("12-clique", math.factorial(12), 12 * 11 // 2),
    ("64-clique", math.factorial(64), 64 * 63 // 2),
    ("64-cycle", 128, 64),
])
def test_large_groups_are_never_enumerated(monkeypatch: pytest.MonkeyPatch, name: str, aut: int,
                                           restrictions: int) -> None:
    monkeypatch.setattr(sym, "_Ctx", CountingCtx)
    sym._chain.cache_clear()
    CountingCtx.checks = 0
    q = get_pattern(name)
    res, n = symmetry_breaking(q)
    assert n == aut and len(res) == restrictions
    # at most one candidate check per (vertex, candidate) pair, plus a few for branching
    assert CountingCtx.checks <= q.k * q.k
    sym._chain.cache_clear()


def test_star_restrictions_order_the_leaves() -> None:
    res, _ = symmetry_breaking(get_pattern("32-star"))
    assert all(0 not in pair for pair in res)      # the centre is alone in its orbit
    assert set(res) == {(a, b) for a in range(1, 32) for b in range(a + 1, 32)}


def test_results_are_cached() -> None:
    sym._chain.cache_clear()
    q = get_pattern("house")
    first = symmetry_breaking(q)
    again = symmetry_breaking(get_pattern("house"))
    assert first == again
    info = sym._chain.cache_info()
    assert info.hits >= 1 and info.misses == 1
    res, _ = symmetry_breaking(q)
    res.append((9, 9))                              # callers get their own list
    assert symmetry_breaking(q) == first


@pytest.mark.parametrize("builder", [
    lambda: __import__("networkx").petersen_graph(),
    lambda: __import__("networkx").hypercube_graph(4),
    lambda: __import__("networkx").dodecahedral_graph(),
    lambda: __import__("networkx").heawood_graph(),
    lambda: __import__("networkx").complete_bipartite_graph(4, 5),
])
def test_regular_graphs_where_refinement_alone_fails(builder) -> None:
    """Vertex-transitive graphs need branching; compare with networkx's VF2 count."""
    import networkx as nx
    from networkx.algorithms.isomorphism import GraphMatcher
    G = nx.convert_node_labels_to_integers(builder())
    want = sum(1 for _ in GraphMatcher(G, G).isomorphisms_iter())
    q = Query.from_networkx(G)
    assert automorphism_count(q) == want
    assert len(symmetry_breaking(q)[0]) >= 1
