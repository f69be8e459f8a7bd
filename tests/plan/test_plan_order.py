"""Matching orders: connected permutations, RI on hand-checked queries, the registry."""
from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpmatch.errors import QueryError
from warpmatch.plan import order as order_mod
from warpmatch.plan.order import ORDER_NAMES, get_order, register_order
from warpmatch.query.model import Query


@st.composite
def connected_queries(draw):
    k = draw(st.integers(1, 8))
    rnd = draw(st.randoms(use_true_random=False))
    directed = draw(st.booleans())
    edges = set()
    for v in range(1, k):
        u = rnd.randrange(v)
        edges.add((u, v) if rnd.random() < 0.5 else (v, u))
    for _ in range(rnd.randrange(2 * k)):
        a, b = rnd.sample(range(k), 2) if k > 1 else (0, 0)
        if a != b and (directed or ((a, b) not in edges and (b, a) not in edges)):
            edges.add((a, b))
    # relabel vertices randomly so that id order says nothing about structure
    perm = list(range(k))
    rnd.shuffle(perm)
    q = Query.from_edges([(perm[a], perm[b]) for a, b in sorted(edges)], k=k, directed=directed)
    counts = [rnd.randrange(1, 50) for _ in range(k)]
    first = draw(st.one_of(st.none(), st.integers(0, k - 1)))
    return q, counts, first


def is_connected_order(q: Query, order: list[int]) -> bool:
    A = q.adjacency()
    A = A | A.T
    return sorted(order) == list(range(q.k)) and all(
        A[order[i], order[:i]].any() for i in range(1, q.k))


@settings(max_examples=100, deadline=None, derandomize=True)
@given(connected_queries(), st.sampled_from(["ri", "gql", "core", "input"]))
def test_orders_are_connected_permutations(inst, name):
    q, counts, first = inst
    order = get_order(name)(q, counts, first)
    assert is_connected_order(q, order)
    if first is not None:
        assert order[0] == first


def test_ri_on_known_queries():
    ri = get_order("ri")
    # tailed triangle a-b, b-c, c-a, c-d: c has max degree; a and b tie on
    # (|V_vis|, |V_neig|, |V_unv|) = (1, 1, 0), d is (1, 0, 0); id breaks the tie
    tailed = Query.from_edges([(0, 1), (1, 2), (2, 0), (2, 3)])
    assert ri(tailed, [5, 5, 5, 5]) == [2, 0, 1, 3]
    # path 0-1-2-3: 1 and 2 have max degree (fewest candidates, then smallest id);
    # after 1, vertex 2 wins on |V_unv| (3 is untouched), then 0 (id) and 3
    path = Query.from_edges([(0, 1), (1, 2), (2, 3)])
    assert ri(path, [1, 1, 1, 1]) == [1, 2, 0, 3]
    assert ri(path, [5, 5, 1, 5]) == [2, 1, 0, 3]
    # diamond 0-1, 0-2, 1-2, 1-3, 2-3: start at 1, then 2 (tie with 0 and 3 on the
    # triple and the counts; the restriction f(1) < f(2) links it to 1), then 0, 3
    diamond = Query.from_edges([(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)])
    assert ri(diamond, [3, 3, 3, 3]) == [1, 2, 0, 3]
    # square 0-1-2-3-0: restrictions f(0) < f(1), f(2), f(3) and f(1) < f(3) (the
    # stabilizer chain); after 0, 1 the tie between 2 and 3 goes to 3, restricted
    # against both, so f(1) < f(3) cuts depth 2, not the last one (3.1x faster on the
    # CPU engine, a 10^6-edge power-law graph; gMatch's fixed 4-cycle order is 0, 1, 3, 2)
    square = Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0)])
    assert ri(square, [3, 3, 3, 3]) == [0, 1, 3, 2]
    # star: the centre first, whatever its id
    star = Query.from_edges([(3, 0), (3, 1), (3, 2)])
    assert ri(star, [1, 1, 1, 9])[0] == 3
    # anchored start
    assert ri(star, [1, 1, 1, 1], 1) == [1, 3, 0, 2]


def test_ri_prefers_vertices_closing_cycles():
    # house: square 0-1-2-3 with roof 4 on 2-3. RI starts at a degree-3 vertex (2)
    # and must pick 3 next (neighbour of 2 that closes the roof and the square).
    house = Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4)])
    # after 2: 3 scores (1, 1, 1), 4 (1, 1, 0), 1 (1, 0, 1); then the roof 4 has two
    # visited neighbours; 0 and 1 tie on the triple and the id decides
    assert get_order("ri")(house, [1] * 5) == [2, 3, 4, 0, 1]


def test_gql_follows_fewest_candidates():
    q = Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0)])
    assert get_order("gql")(q, [9, 7, 1, 3]) == [2, 3, 1, 0]


def test_input_order_is_bfs():
    q = Query.from_edges([(0, 3), (3, 1), (0, 2)])
    assert get_order("input")(q, [1] * 4) == [0, 2, 3, 1]


def test_registry(monkeypatch):
    assert {"ri", "gql", "input"} <= set(ORDER_NAMES)
    with pytest.raises(QueryError, match="unknown matching order 'nope'.*ri"):
        get_order("nope")
    monkeypatch.setattr(order_mod, "_ORDERS", dict(order_mod._ORDERS))

    @register_order("reverse-bfs")
    def _rev(query, counts, first):
        return list(reversed(get_order("input")(query, counts, None)))

    q = Query.from_edges([(0, 1), (1, 2)])
    assert get_order("reverse-bfs")(q, [1, 1, 1]) == [2, 1, 0]

    @register_order("broken")
    def _broken(query, counts, first):
        return [0, 2, 1]                 # 2 has no earlier neighbour in the path 0-1-2

    with pytest.raises(QueryError, match="not connected"):
        get_order("broken")(q, [1, 1, 1])

    @register_order("short")
    def _short(query, counts, first):
        return [0, 1]

    with pytest.raises(QueryError, match="not a permutation"):
        get_order("short")(q, [1, 1, 1])


def test_ri_is_connected_on_every_small_atlas_graph():
    ri = get_order("ri")
    for A in nx.graph_atlas_g()[1:]:
        if not nx.is_connected(A):
            continue
        q = Query.from_edges(list(A.edges()), k=A.number_of_nodes())
        assert is_connected_order(q, ri(q, [1] * q.k))


def _core_of(q: Query) -> set[int]:
    g = nx.Graph(list(map(tuple, q.edges.tolist())))
    g.add_nodes_from(range(q.k))
    return set(nx.k_core(g, 2).nodes())


def test_core_order_matches_the_core_first_then_the_trees():
    """GENEVA's Algorithm 8: every 2-core vertex before any tree vertex, the first ones a
    shortest cycle of the core; a tree is ordered as RI orders it. Checked on every
    connected graph of networkx's atlas (up to 7 vertices) with a tail added, so that
    each has a tree part."""
    core_order, ri = get_order("core"), get_order("ri")
    for A in nx.graph_atlas_g()[1:]:
        if not nx.is_connected(A):
            continue
        k = A.number_of_nodes()
        q = Query.from_edges(list(A.edges()) + [(0, k), (k, k + 1)], k=k + 2)
        counts = [1 + (7 * u) % 5 for u in range(q.k)]
        order = core_order(q, counts)
        assert is_connected_order(q, order)
        core = _core_of(q)
        if not core:
            assert order == ri(q, counts)
            continue
        assert set(order[:len(core)]) == core
        girth = min(len(c) for c in nx.minimum_cycle_basis(nx.Graph(list(A.edges()))))
        head = set(order[:girth])
        inner = [e for e in map(tuple, q.edges.tolist()) if set(e) <= head]
        # connected (a prefix of a connected order) with as many edges as vertices: a cycle
        assert len(inner) >= girth


def test_core_order_with_an_anchor_prefers_the_core():
    """A forced first vertex on a tail: the path to the core, then the core, then the
    rest of the trees."""
    # a square 0-1-2-3 with a tail 0-4-5 and a leaf 2-6; start at the tail's end
    q = Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (4, 5), (2, 6)], k=7)
    order = get_order("core")(q, [1] * 7, 5)
    assert order[:2] == [5, 4] and set(order[2:6]) == {0, 1, 2, 3} and order[6] == 6
