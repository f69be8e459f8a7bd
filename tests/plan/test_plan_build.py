"""build_plan: validation, anchors, the Plan arrays, symmetry breaking, and explain."""
from __future__ import annotations

import itertools
import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpmatch.engine.reference import ReferenceEngine
from warpmatch.errors import GraphError, QueryError, UnknownLabelWarning
from warpmatch.graph.csr import Graph
from warpmatch.plan import Plan, build_plan, explain_plan
from warpmatch.plan.filter import candidates
from warpmatch.query.model import Query

REF = ReferenceEngine()


def nx_graph(G: nx.Graph, **kw) -> Graph:
    src, dst = zip(*G.edges())
    return Graph.from_edges(src, dst, n=G.number_of_nodes(), **kw)


def brute_embeddings(g: Graph, q: Query, induced: bool = False) -> int:
    """Count injective maps by trying every tuple (tiny graphs only)."""
    A = q.adjacency()
    n = 0
    for f in itertools.permutations(range(g.n), q.k):
        ok = all(g.has_edge(f[u], f[w]) == bool(A[u, w]) if induced else
                 (not A[u, w] or g.has_edge(f[u], f[w]))
                 for u in range(q.k) for w in range(q.k) if u != w)
        n += ok
    return n


TRIANGLE = Query.from_edges([(0, 1), (1, 2), (2, 0)], names=["a", "b", "c"], name="triangle")


# ------------------------------------------------------------- validation
def test_directedness_mismatch_is_a_query_error_with_advice():
    dg = Graph.from_edges([0, 1], [1, 2], directed=True)
    with pytest.raises(QueryError, match="the graph is directed.*a->b.*undirected"):
        build_plan(dg, TRIANGLE)
    ug = Graph.from_edges([0, 1], [1, 2])
    dq = Query.from_edges([(0, 1)], directed=True)
    with pytest.raises(QueryError, match="undirected but the query is directed.*a-b"):
        build_plan(ug, dq)


def test_labels_the_graph_cannot_have_are_query_errors():
    g = Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(QueryError, match="vertex b has label 4 but the graph.*no vertex labels"):
        build_plan(g, Query.from_edges([(0, 1)], vertex_labels=[-1, 4], names=["a", "b"]))
    with pytest.raises(QueryError, match="query edge a-b has label 2.*no edge labels"):
        build_plan(g, Query.from_edges([(0, 1)], edge_labels=[2], names=["a", "b"]))


def test_bad_mode_purpose_order_are_query_errors():
    g = Graph.from_edges([0, 1], [1, 2])
    with pytest.raises(QueryError, match="unknown mode 'motifs'"):
        build_plan(g, TRIANGLE, mode="motifs")
    with pytest.raises(QueryError, match="unknown plan purpose"):
        build_plan(g, TRIANGLE, purpose="print")
    with pytest.raises(QueryError, match="unknown matching order 'fastest'"):
        build_plan(g, TRIANGLE, order="fastest")


def test_unknown_label_warns_and_plans_zero():
    g = Graph.from_edges([0, 1, 2], [1, 2, 0], vertex_labels=[0, 1, 1], edge_labels=[5, 5, 6])
    q = Query.from_edges([(0, 1), (1, 2), (2, 0)], vertex_labels=[0, 7, -1],
                         names=["a", "b", "c"])
    with pytest.warns(UnknownLabelWarning, match="query vertex b has label 7"):
        plan = build_plan(g, q)
    assert plan.roots.size == 0 and "label 7" in plan.empty_reason
    assert REF.count(g, plan) == 0
    qe = Query.from_edges([(0, 1)], edge_labels=[9], names=["a", "b"])
    with pytest.warns(UnknownLabelWarning, match="query edge a-b has label 9"):
        assert build_plan(g, qe).empty_reason


def test_query_larger_than_graph_plans_zero():
    g = Graph.from_edges([0, 1], [1, 2])
    plan = build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 3)]))
    assert plan.roots.size == 0 and "4 vertices" in plan.empty_reason
    assert REF.count(g, plan) == 0


def test_vertex_without_candidates_plans_zero():
    g = Graph.from_edges([0, 1, 2], [1, 2, 3])          # a path: max degree 2
    plan = build_plan(g, Query.from_edges([(0, 1), (0, 2), (0, 3)]))
    assert plan.roots.size == 0
    assert "degree >= 3" in plan.empty_reason


def test_anchor_errors():
    g0 = Graph.from_edges([0, 1, 2], [1, 2, 0])
    with pytest.raises(QueryError, match="must be integers"):
        build_plan(g0, TRIANGLE, anchors={"a": "1,2"})
    empty = build_plan(g0, TRIANGLE, anchors={"a": []})
    assert empty.roots.size == 0 and "anchored to no ids" in empty.empty_reason
    g = Graph.from_edges([0, 1, 2], [1, 2, 0], ids=[10, 20, 30])
    with pytest.raises(QueryError, match="unknown query vertex 'z'"):
        build_plan(g, TRIANGLE, anchors={"z": [10]})
    with pytest.raises(GraphError, match="anchor a=11: no vertex with this id in graph 'graph'"):
        build_plan(g, TRIANGLE, anchors={"a": [10, 11]})
    with pytest.raises(QueryError, match="anchored twice"):
        build_plan(g, TRIANGLE, anchors={"a": [10], 0: [20]})


# ---------------------------------------------------------------- anchors
def test_anchors_prune_the_roots():
    G = nx.barabasi_albert_graph(60, 3, seed=2)
    ext = np.arange(60) * 7 + 1000                      # a non-trivial external id space
    g = nx_graph(G, ids=ext)
    anchor_ext = [1000 + 7 * 5, 1000 + 7 * 11, 1000 + 7 * 5, 1000 + 7 * 40]
    plan = build_plan(g, TRIANGLE, anchors={"b": anchor_ext})
    assert plan.order[0] == 1                            # starts at the anchored vertex
    assert plan.roots.tolist() == [5, 11, 40]            # sorted, unique, internal ids
    assert plan.anchors == {1: 3}
    # an explicit anchor set at a later depth is restricted too
    two = {"a": [1000 + 7 * i for i in range(30)], "c": [1000 + 7 * 3]}
    plan2 = build_plan(g, TRIANGLE, anchors=two, refine=False)
    assert plan2.order[0] == 2 and plan2.roots.tolist() == [3]
    d = int(plan2.inverse_order[0])
    assert plan2.cand_restricted[d] and plan2.candidates(d).tolist() == list(range(30))
    # refined (the default with anchors): only the anchor ids adjacent to vertex 3 stay
    plan3 = build_plan(g, TRIANGLE, anchors=two)
    d = int(plan3.inverse_order[0])
    assert plan3.cand_restricted[d]
    assert set(plan3.candidates(d).tolist()) <= set(g.neighbors(3).tolist()) & set(range(30))
    # anchors intersect with the filters: degree-1 vertices cannot be a triangle's corner
    leaf = int(np.flatnonzero(g.degree == g.degree.min())[0])
    p3 = build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)]),
                    anchors={2: [int(ext[leaf])]})
    assert p3.roots.size == 0 and p3.empty_reason


def test_anchored_count_equals_filtered_full_count():
    G = nx.gnp_random_graph(12, 0.5, seed=5)
    g = nx_graph(G)
    q = Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 0)])
    anchors = [0, 4, 7]
    full = build_plan(g, q, purpose="list")
    rows = np.concatenate([full.to_query_order(b) for b in REF.match(g, full)])
    expected = int(np.isin(rows[:, 2], anchors).sum())
    plan = build_plan(g, q, anchors={2: anchors})
    assert REF.count(g, plan) * plan.multiplier == expected
    # the anchored vertex has a smaller (colour-preserving) automorphism group
    assert plan.aut_size == 2 and full.aut_size == 8


# ------------------------------------------------------------ plan arrays
def check_arrays(plan: Plan) -> None:
    int32 = ("order", "vlabel", "min_out_deg", "min_in_deg", "bn_ptr", "bn_pos", "bn_elabel",
             "na_ptr", "na_pos", "res_ptr", "res_pos")
    for name, arr in plan.arrays().items():
        assert arr.flags.c_contiguous, name
        if name in int32:
            assert arr.dtype == np.int32, name
    for name in ("bn_dir", "na_dir", "res_sign"):
        assert getattr(plan, name).dtype == np.int8
    assert plan.cand_ptr.dtype == np.int64 and plan.cand_restricted[0]
    k = plan.k
    for ptr in (plan.bn_ptr, plan.na_ptr, plan.res_ptr):
        assert ptr.size == k + 1 and ptr[0] == 0 and np.all(np.diff(ptr) >= 0)
    for i in range(1, k):
        assert plan.bn_ptr[i + 1] > plan.bn_ptr[i], "every later depth has a backward edge"
    for ptr, pos in ((plan.bn_ptr, plan.bn_pos), (plan.na_ptr, plan.na_pos),
                     (plan.res_ptr, plan.res_pos)):
        for i in range(k):
            assert np.all(pos[ptr[i]:ptr[i + 1]] < i)
    for i in range(k):
        c = plan.candidates(i)
        if c is not None:
            assert np.all(np.diff(c) > 0)


def test_undirected_plan_arrays():
    q = Query.from_edges([(0, 1), (1, 2), (2, 0), (2, 3)], names=list("abcd"))
    g = nx_graph(nx.gnp_random_graph(15, 0.4, seed=1))
    plan = build_plan(g, q, induced=True)
    check_arrays(plan)
    assert plan.order.tolist() == [2, 0, 1, 3]
    assert np.all(plan.bn_dir == 0) and np.all(plan.na_dir == 0)
    # depth i has i earlier vertices: each is a backward edge or an induced non-edge
    for i in range(4):
        assert (plan.bn_ptr[i + 1] - plan.bn_ptr[i]) + (plan.na_ptr[i + 1] - plan.na_ptr[i]) == i
    assert plan.min_out_deg.tolist() == [3, 2, 2, 1] == plan.min_in_deg.tolist()
    assert build_plan(g, q).na_ptr[-1] == 0              # non-induced: no non-edges


def test_directed_plan_has_both_directions_of_a_two_cycle():
    q = Query.from_edges([(0, 1), (1, 0), (1, 2)], directed=True, edge_labels=[3, -1, 4])
    g = Graph.from_edges([0, 1, 1], [1, 0, 2], directed=True, edge_labels=[3, 1, 4])
    plan = build_plan(g, q, induced=True, order="input")
    check_arrays(plan)
    assert plan.order.tolist() == [0, 1, 2]
    # depth 1 (vertex 1): edge 0->1 (M[0] -> c, label 3) and edge 1->0 (c -> M[0], any)
    lo, hi = plan.bn_ptr[1], plan.bn_ptr[2]
    assert list(zip(plan.bn_pos[lo:hi], plan.bn_dir[lo:hi], plan.bn_elabel[lo:hi])) == \
        [(0, 0, 3), (0, 1, -1)]
    # depth 2 (vertex 2): edge 1->2 is M[1] -> c; non-edges both ways with 0, and 2->1
    lo, hi = plan.bn_ptr[2], plan.bn_ptr[3]
    assert list(zip(plan.bn_pos[lo:hi], plan.bn_dir[lo:hi])) == [(1, 0)]
    lo, hi = plan.na_ptr[2], plan.na_ptr[3]
    assert sorted(zip(plan.na_pos[lo:hi], plan.na_dir[lo:hi])) == [(0, 0), (0, 1), (1, 1)]
    assert plan.min_out_deg.tolist() == [1, 2, 0] and plan.min_in_deg.tolist() == [1, 1, 1]
    assert REF.count(g, plan) == 1


def test_nlf_filtered_depths_get_explicit_sets():
    # hub 0 (label 0) has three label-1 leaves; 5 (label 0) has three label-0 leaves,
    # so LDF keeps 5 for the query's centre and NLF removes it
    src = [0, 0, 0, 5, 5, 5, 9, 9]
    dst = [1, 2, 3, 6, 7, 8, 10, 11]
    vl = [0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1]
    g = Graph.from_edges(src, dst, n=12, vertex_labels=vl)
    q = Query.from_edges([(0, 1), (1, 2), (1, 3)], vertex_labels=[1, 0, 1, 1])
    plan = build_plan(g, q, order="input", refine=False)  # centre 1 at depth 1
    check_arrays(plan)
    assert plan.order.tolist() == [0, 1, 2, 3]
    assert plan.cand_restricted.tolist() == [True, True, False, False]
    assert plan.candidates(1).tolist() == [0]
    assert plan.roots.tolist() == candidates(g, q, 0).tolist() == [1, 2, 3, 10, 11]
    assert not build_plan(g, q, order="input", use_nlf=False,
                          refine=False).cand_restricted[1:].any()
    assert REF.count(g, plan) * plan.multiplier == 6


# ------------------------------------------------------- symmetry breaking
def test_multiplier_and_restrictions_by_mode_and_purpose():
    g = nx_graph(nx.complete_graph(5))
    pc = build_plan(g, TRIANGLE)
    assert pc.multiplier == 6 == pc.aut_size and pc.res_ptr[-1] > 0
    pl = build_plan(g, TRIANGLE, purpose="list")
    assert pl.multiplier == 1 and pl.res_ptr[-1] == 0
    ps = build_plan(g, TRIANGLE, mode="subgraphs", purpose="list")
    assert ps.multiplier == 1 and ps.res_ptr[-1] > 0
    assert REF.count(g, pc) == REF.count(g, ps) == 10
    assert REF.count(g, pl) == 60


PATTERNS = {
    "triangle": [(0, 1), (1, 2), (2, 0)],
    "square": [(0, 1), (1, 2), (2, 3), (3, 0)],
    "diamond": [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)],
    "4-clique": [(a, b) for a in range(4) for b in range(a + 1, 4)],
    "3-star": [(0, 1), (0, 2), (0, 3)],
    "4-path": [(0, 1), (1, 2), (2, 3)],
    "house": [(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4)],
}


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), st.sampled_from(sorted(PATTERNS)), st.booleans(),
       st.sampled_from(["ri", "gql", "core", "input"]))
def test_raw_times_multiplier_equals_embeddings(seed, pattern, induced, order):
    g = nx_graph(nx.gnp_random_graph(8, 0.55, seed=seed))
    q = Query.from_edges(PATTERNS[pattern])
    expected = brute_embeddings(g, q, induced)
    pc = build_plan(g, q, induced=induced, order=order)
    assert REF.count(g, pc) * pc.multiplier == expected
    ps = build_plan(g, q, mode="subgraphs", induced=induced, order=order)
    assert REF.count(g, ps) * ps.aut_size == expected


def test_restrictions_sit_at_the_later_depth():
    g = nx_graph(nx.complete_graph(6))
    plan = build_plan(g, Query.from_edges(PATTERNS["4-clique"]), mode="subgraphs")
    assert plan.aut_size == 24
    # a 4-clique's restrictions totally order the images: every depth i>0 is bounded
    for i in range(1, 4):
        lo, hi = plan.res_ptr[i], plan.res_ptr[i + 1]
        assert hi > lo and np.all(plan.res_pos[lo:hi] < i)
    assert REF.count(g, plan) == 15


# ----------------------------------------------------------------- explain
def test_explain_mentions_everything():
    q = Query.from_edges([(0, 1), (1, 2), (2, 0), (2, 3)], names=["x", "y", "z", "w"],
                         name="tailed-triangle")
    g = nx_graph(nx.complete_graph(6))
    plan = build_plan(g, q, mode="subgraphs", induced=True, anchors={"w": [1, 2]})
    text = explain_plan(plan)
    assert text == plan.explain()
    assert "tailed-triangle" in text and q.to_dsl() in text
    assert "subgraphs" in text and "induced" in text and "undirected" in text
    assert f"|Aut| = {plan.aut_size}" in text
    assert "order (ri): w, z, x, y" in text
    for i in range(plan.k):
        assert f"depth {i}: {q.names[int(plan.order[i])]}" in text
    assert "anchors: w -> 2 ids" in text and "2 roots (anchored)" in text
    assert "non-edges (induced): no w-x" in text
    assert "f(y) > f(x)" in text or "f(y) < f(x)" in text
    assert "backward edges: w-z" in text


def test_explain_count_plan_and_empty_plan():
    g = nx_graph(nx.complete_graph(4))
    text = build_plan(g, TRIANGLE).explain()
    assert "count = raw matches x 6" in text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownLabelWarning)
        gl = Graph.from_edges([0, 1, 2], [1, 2, 0], vertex_labels=[0, 0, 0])
        text = build_plan(gl, Query.from_edges([(0, 1), (1, 2), (2, 0)],
                                               vertex_labels=[1, 0, 0])).explain()
    assert "empty:" in text and "label 1" in text and "0 roots" in text


def test_explain_directed_edges_and_labels():
    q = Query.from_edges([(0, 1), (1, 2)], directed=True, edge_labels=[5, -1],
                         names=["s", "m", "t"])
    g = Graph.from_edges([0, 1], [1, 2], directed=True, edge_labels=[5, 2])
    text = build_plan(g, q, order="input").explain()
    assert "out-degree >= 1, in-degree >= 0" in text
    assert "backward edges: s->m [label 5]" in text and "backward edges: m->t" in text


@pytest.mark.parametrize("pattern", ["square", "diamond", "3-star", "house"])
def test_restrictions_hold_under_every_vertex_numbering(pattern, monkeypatch):
    """Renumbering the query and ordering it both ways moves restricted pairs to either
    side of the order, so both conversions (at b's depth: c > f(a); at a's depth:
    c < f(b)) are exercised."""
    from warpmatch.plan import order as order_mod
    monkeypatch.setattr(order_mod, "_ORDERS", dict(order_mod._ORDERS))

    @order_mod.register_order("bfs-descending")
    def _desc(query, counts, first):
        A = query.adjacency() | query.adjacency().T
        out = [query.k - 1]
        for u in out:
            out += [w for w in range(query.k - 1, -1, -1) if A[u, w] and w not in out]
        return out

    g = nx_graph(nx.gnp_random_graph(9, 0.6, seed=11))
    base = Query.from_edges(PATTERNS[pattern])
    expected = brute_embeddings(g, base)
    signs = set()
    for perm in itertools.permutations(range(base.k)):
        q = Query.from_edges([(perm[a], perm[b]) for a, b in PATTERNS[pattern]], k=base.k)
        for order in ("ri", "input", "bfs-descending"):
            plan = build_plan(g, q, mode="subgraphs", order=order)
            signs |= set(plan.res_sign.tolist())
            assert REF.count(g, plan) * plan.aut_size == expected
    assert signs == {-1, 1}
