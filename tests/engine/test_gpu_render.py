"""The GPU engine's plan rendering (engine/gpu/render.py), checked without a GPU.

The kernels themselves run in tests/gpu; here the decisions the renderer takes
from a plan: which depths cut their lists to the restriction range, which plans
count their last leaf from its list, and which already-matched vertices that
count must look up.
"""
from __future__ import annotations

import re

import pytest

from warpmatch.engine.gpu.render import (depth_specs, leaf_countable, leaf_first,
                                         render_functions, render_plan, trims)
from warpmatch.graph.csr import Graph
from warpmatch.plan import build_plan
from warpmatch.query import get_pattern
from warpmatch.query.model import Query


def _graph(directed: bool = False, labels: bool = False) -> Graph:
    src = [0, 0, 0, 1, 1, 2, 2, 3, 4, 5]
    dst = [1, 2, 3, 2, 3, 3, 4, 4, 5, 0]
    return Graph.from_edges(src, dst, n=6, directed=directed,
                            vertex_labels=[0, 1, 0, 1, 0, 1] if labels else None, warn=False)


def _leaf_body(plan, groups: str = "alike") -> str:
    src = render_functions(plan, groups)
    m = re.search(r"long long wm_leaf_count\(.*?\n}", src, re.S)
    assert m, "no wm_leaf_count rendered"
    return m.group(0)


@pytest.mark.parametrize("pattern,countable", [
    ("2-clique", True), ("3-path", True), ("tailed-triangle", True), ("4-star", True),
    ("triangle", False), ("square", False), ("4-clique", False), ("diamond", False),
])
def test_leaf_countable_unlabeled(pattern, countable):
    plan = build_plan(_graph(), get_pattern(pattern))
    assert leaf_countable(plan) is countable
    # (the diamond's last two vertices are twins, counted by default: render._twins)
    assert f"#define WM_LEAF_OK {int(countable)}" in render_plan(plan, "alike")
    assert ("wm_leaf_count" in render_functions(plan, "alike")) is countable


def test_leaf_not_countable_when_checks_remain():
    g = _graph(labels=True)
    tail = Query.from_edges([(0, 1), (1, 2), (0, 2), (2, 3)], k=4,
                            vertex_labels=[-1, -1, -1, 0])
    plan = build_plan(g, tail)
    assert int(plan.order[-1]) == 3 and depth_specs(plan)[-1].vlabel == 0
    assert not leaf_countable(plan)          # its label is checked lane by lane
    # induced: the leaf must not be adjacent to the others
    plan = build_plan(_graph(), get_pattern("tailed-triangle"), induced=True)
    assert depth_specs(plan)[-1].na
    assert not leaf_countable(plan)


def test_leaf_count_looks_up_only_unknown_members():
    # tailed triangle: the tail hangs off a triangle vertex whose two triangle
    # neighbours are known to be in its list, so no binary search is needed
    plan = build_plan(_graph(), get_pattern("tailed-triangle"))
    body = _leaf_body(plan)
    assert "wm_in_sorted" not in body
    assert body.count("--n") == 2
    # a square with a tail: one of the three matched vertices is not adjacent to the
    # leaf's anchor
    plan = build_plan(_graph(), Query.parse("a-b, b-c, c-d, d-a, a-e"))
    assert leaf_countable(plan) and leaf_first(plan) == 4
    assert _leaf_body(plan).count("wm_in_sorted") == 1
    # 4-star: the other leaves are below the restriction range, nothing to subtract
    plan = build_plan(_graph(), get_pattern("4-star"))
    assert "--n" not in _leaf_body(plan)


@pytest.mark.parametrize("edges,direction", [
    ([(0, 1), (1, 2), (2, 0), (0, 3)], 0),     # leaf is an out-neighbour of its anchor
    ([(0, 1), (1, 2), (2, 0), (3, 0)], 1),     # leaf is an in-neighbour
])
def test_directed_leaf_direction(edges, direction):
    plan = build_plan(_graph(directed=True), Query.from_edges(edges, k=4, directed=True))
    s = depth_specs(plan)[-1]
    assert int(plan.order[-1]) == 3 and s.bn[0][1] == direction
    assert leaf_countable(plan)
    # with a second edge to a matched vertex, the last vertex is no plain leaf
    strict = build_plan(_graph(directed=True),
                        Query.from_edges(edges + [(3, 1), (1, 3)], k=4, directed=True))
    assert not leaf_countable(strict)


def test_trim_follows_restrictions():
    plan = build_plan(_graph(), get_pattern("4-clique"))
    specs = depth_specs(plan)
    # every later depth of a clique is ordered against the earlier ones
    assert [trims(s) for s in specs[1:]] == [True, True, True]
    assert "#define WM_TRIM 1" in render_plan(plan)
    src = render_functions(plan)
    # the restricted depths cut their list with a binary search and the stack keeps the cut
    assert "lo_ = wm_lower_bound(a_, lo_, hi_, b_ + 1);" in src
    assert "S.sk[" in src
    # a query without automorphisms has no restrictions: nothing is cut
    q = Query.from_edges([(0, 1), (1, 2)], k=3, vertex_labels=[0, 1, 1])
    plan = build_plan(_graph(labels=True), q)
    assert not any(s.res for s in depth_specs(plan))
    assert "#define WM_TRIM 0" in render_plan(plan)
    assert "S.sk[" not in render_functions(plan)


def _check_body(plan, d: int) -> str:
    src = render_functions(plan)
    m = re.search(rf"bool wm_check_d{d}\(.*?\n}}", src, re.S)
    assert m
    return m.group(0)


def test_degree_bound_skipped_only_when_implied():
    plan = build_plan(_graph(), get_pattern("4-clique"))
    specs = depth_specs(plan)
    # depth 2: two backward edges cannot vouch for degree 3; depth 3: three can
    assert len(specs[2].bn) == 2 and specs[2].min_out == 3
    assert "g.indptr[c + 1] - g.indptr[c] < 3" in _check_body(plan, 2)
    assert "g.indptr[c + 1]" not in _check_body(plan, 3)
    # directed: an in-edge does not vouch for out-degree. Order 2, 0, 1, 3: vertex 0
    # (out 1, in 1) arrives by the edge 2 -> 0, which gives it its in-edge only
    q = Query.from_edges([(0, 1), (1, 2), (2, 0), (2, 3), (3, 2)], k=4, directed=True)
    plan = build_plan(_graph(directed=True), q)
    assert plan.order.tolist() == [2, 0, 1, 3]
    checks = [(("g.indptr[c + 1]" in _check_body(plan, d)),
               ("g.in_indptr[c + 1]" in _check_body(plan, d))) for d in range(4)]
    # depth 0 checks both bounds; depth 1 its out-degree; depths 2 and 3 (an edge
    # each way to matched vertices) neither
    assert checks == [(True, True), (True, False), (False, False), (False, False)]


# ----------------------------------------------------------- the generic module
_FUNC = re.compile(r"__device__ __forceinline__ [\w*]+ (wm_\w+)\(([^)]*)\)")


#: the device functions the kernels (bfs.cu, fine.cu, coarse.cu) call from a module
_CALLED = {"wm_check_d0", "wm_stack_task", "wm_row_gen", "wm_row_task"}


@pytest.mark.parametrize("pattern,directed,labels", [
    ("triangle", False, False), ("tailed-triangle", False, True), ("house", False, False),
    ("4-clique", False, True), ("square", True, False), ("3-path", True, True)])
def test_generic_defines_what_the_kernels_call(pattern, directed, labels):
    """The kernels call the same functions, with the same parameters, whichever module
    they are compiled with (and the leaf count where the plan has one); the generic
    text depends only on the plan's size, direction and leaf counting."""
    from warpmatch.engine.gpu.render_generic import (generic_eligible,
                                                     render_functions_generic)
    g = _graph(directed, labels)
    q = get_pattern(pattern)
    if directed:
        q = Query.from_edges(q.edges.tolist(), k=q.k, directed=True)
    if labels:
        q = Query.from_edges(q.edges.tolist(), k=q.k, directed=q.directed,
                             vertex_labels=[i % 2 for i in range(q.k)])
    plan = build_plan(g, q, purpose="count")
    assert generic_eligible(plan)
    called = _CALLED | ({"wm_row_leaf"} if leaf_countable(plan) else set())
    spec = {n: " ".join(a.split()) for n, a in _FUNC.findall(render_functions(plan))
            if n in called}
    gen = {n: " ".join(a.split()) for n, a in _FUNC.findall(render_functions_generic(plan))
           if n in called}
    assert set(spec) == called and gen == spec
    other = build_plan(g, Query.from_edges(q.edges.tolist(), k=q.k, directed=q.directed),
                       purpose="count")
    if leaf_countable(other) == leaf_countable(plan):
        assert render_functions_generic(other) == render_functions_generic(plan)


def test_generic_table_holds_the_plan():
    """Each depth's record: label, backward edges (pos, dir, label), restrictions, in the
    offsets the generated code reads."""
    import numpy as np

    from warpmatch.engine.gpu import render_generic as R
    g = _graph(False, True)
    q = Query.from_edges([(0, 1), (1, 2), (2, 0), (2, 3)], k=4, vertex_labels=[0, 1, -1, 0])
    plan = build_plan(g, q, purpose="count")
    tab = R.generic_table(plan)
    k, st = plan.k, R._stride(plan.k)
    assert tab.dtype == np.int32 and tab.size == k * st + R._group_n(k)
    assert tab[k * st + R.G_FIRST] == leaf_first(plan) and tab[k * st + R.G_KIND] == 0
    for d, s in enumerate(depth_specs(plan)):
        row = tab[d * st:(d + 1) * st]
        assert row[R.H_VLAB] == s.vlabel
        assert row[R.H_NBN] == len(s.bn) and row[R.H_NRES] == len(s.res)
        for t, bn in enumerate(s.bn):
            assert tuple(row[R._bn(k, t):R._bn(k, t) + 3]) == bn
        for t, res in enumerate(s.res):
            assert tuple(row[R._res(k, t):R._res(k, t) + 2]) == res


@pytest.mark.parametrize("pattern", ["diamond", "tailed-triangle", "house"])
def test_memo_keys_on_the_structure_not_the_candidates(pattern):
    """A shard's plan (other roots, same structure) reuses what was derived from the whole
    plan; a plan whose structure differs (a restricted depth 1, an edge label) does not,
    and what the memo returns is what a fresh render gives."""
    import numpy as np

    from warpmatch.engine.gpu import render as R
    from warpmatch.engine.gpu import render_generic as RG
    from warpmatch.engine.gpu.engine import GpuEngine
    from warpmatch.engine.gpu.source import build_source, module_source, warps_per_block
    g = _graph()
    plan = build_plan(g, get_pattern(pattern), purpose="count")
    shard = plan.with_candidates({0: plan.roots[:2]})
    assert R.plan_structure(shard) == R.plan_structure(plan)
    assert R.depth_specs(shard) is R.depth_specs(plan)
    assert R.plan_signature(shard) == R.plan_signature(plan)
    sliced = plan.with_candidates({1: np.array([1, 2], dtype=plan.cand_ids.dtype)})
    assert R.plan_structure(sliced) != R.plan_structure(plan)
    assert R.plan_signature(sliced) != R.plan_signature(plan)
    assert R.depth_specs(sliced)[1].restricted and not R.depth_specs(plan)[1].restricted
    eng = GpuEngine()
    for p in (plan, shard, sliced):
        for generic in (False, True):
            fresh = build_source(p, eng.model, warps=warps_per_block(p, eng.model, generic),
                                 batch=eng.batch, steal=eng.steal, profile=eng.profile,
                                 generic=generic)
            assert module_source(eng, p, False, generic) == fresh
        tab = RG.generic_table(p)
        assert not tab.flags.writeable
        assert np.array_equal(tab, RG._generic_table(p, R.DEFAULT_GROUPS))


def test_leaf_groups_render_and_fill_the_generic_record(monkeypatch):
    """A group of bare leaves (plan.leaves.bare_group): the plan's own module counts it
    from depth ``leaf_first`` on (a star's leaves: C(s, j); leaves of different vertices:
    inclusion-exclusion over list intersections), the generic module reads the same facts
    from its group record; neither where the leaves carry a label or groups are off, and
    leaves of different vertices only with ``leaf_groups="all"``."""
    from warpmatch.engine.gpu import render_generic as RG
    g = _graph()
    star = build_plan(g, get_pattern("5-star"))
    assert leaf_first(star) == 1 and leaf_first(star, "none") == 4   # its last leaf
    assert "#define WM_LEAF_D 1" in render_plan(star)
    body = _leaf_body(star)
    assert "wm_choose((unsigned long long)s, 4)" in body and "wm_in_sorted" not in body
    assert "wm_choose" not in render_functions(star, "none")
    # a listing plan has no restrictions: the leaves are not chained
    assert "wm_falling" in _leaf_body(build_plan(g, get_pattern("5-star"), purpose="list"))
    k, st = star.k, RG._stride(star.k)
    rec = RG.generic_table(star)[k * st:]
    assert list(rec[:RG.G_LEAVES + 2]) == [1, 1, 1, 4, 0, 0, 0]     # (no table)
    assert not RG.generic_table(star, "none")[k * st + RG.G_KIND]
    # one generic text for both (the group is in the table): no compile for the A/B
    assert RG.generic_signature(star) == RG.generic_signature(star, "none")
    # the bull's horns hang off two triangle vertices: both lists, their intersection,
    # and the matched vertices each list is known to hold (no lookups)
    # (counted only with leaf_groups="all": by default the last horn alone); by default
    # the triangle's third vertex and the horns are independent vertices (render_indep),
    # so this part of the test switches those off
    bull = build_plan(g, get_pattern("bull"))
    assert leaf_first(bull, "all") == 2 and "wm_warp_group" in render_functions(bull, "all")
    assert leaf_first(bull) == 2 and "wm_warp_group" in render_functions(bull)
    monkeypatch.setenv("WARPMATCH_INDEPENDENT", "0")
    assert leaf_first(bull, "all") == 3 and leaf_first(bull) == 4
    body = _leaf_body(bull, "all")
    assert "wm_common2" in body and "wm_in_sorted" not in body
    assert "wm_common2" not in render_functions(bull)
    rec = RG.generic_table(bull, "all")[bull.k * RG._stride(bull.k):]
    assert rec[RG.G_KIND] == 2 and rec[RG.G_J] == 2
    codes = rec[RG.G_CODES:RG.G_CODES + 9].reshape(3, 3)[:, :2]
    assert sorted(codes.ravel().tolist()) == [0, 0, 1, 1, 1, 1]
    # a leaf of one vertex and two of another at the end, no restrictions (a listing
    # plan): a group of three with leaf_groups="all", the last two alike ones by default
    q = Query.from_edges([(0, 1), (1, 2), (2, 0), (0, 3), (1, 4), (1, 5)], k=6)
    plan = build_plan(g, q, purpose="list")
    assert (leaf_first(plan, "all"), leaf_first(plan)) == (3, 4)
    assert "wm_falling((unsigned long long)s, 2)" in _leaf_body(plan)
    rec = RG.generic_table(plan)[plan.k * RG._stride(plan.k):]
    assert (rec[RG.G_FIRST], rec[RG.G_KIND], rec[RG.G_J]) == (4, 1, 2)
    # labeled leaves are no bare leaves: they are counted from a table
    # (test_labeled_leaves_render_a_table), or, without it, at most the last one
    labeled = build_plan(_graph(labels=True),
                         Query.from_edges([(0, 1), (0, 2), (0, 3)], k=4,
                                          vertex_labels=[-1, 0, 0, 0]))
    assert leaf_first(labeled) == 1
    monkeypatch.setenv("WARPMATCH_LEAF_TABLE", "0")
    assert leaf_first(labeled) >= labeled.k - 1


def test_leaf_groups_mode():
    from warpmatch.engine.gpu.render import leaf_groups_mode
    assert leaf_groups_mode(True) == "twins" and leaf_groups_mode(False) == "none"
    assert leaf_groups_mode("all") == "all"
    with pytest.raises(ValueError, match="leaf_groups"):
        leaf_groups_mode("mixed")


def test_twins_render_in_both_modules():
    """Twins (plan.leaves.twin_group: the diamond's two common neighbours of an edge) are
    counted from depth 2 with ``leaf_groups="twins"`` (the default, or ``"all"``): the
    depth before writes its partial match to ``row`` for the warp-wide ``wm_warp_group``,
    which scans the shortest of the two lists and searches each entry in the other, then
    ``C(s, 2)``. The generic module counts them too (``WM_WARP_GROUP 1``, a twin record: kind
    3); ``"alike"`` enumerates them."""
    from warpmatch.engine.gpu import render_generic as RG
    from warpmatch.engine.gpu.render import leaf_groups_mode, twin_leaves
    from warpmatch.graph.generators import erdos_renyi
    g = erdos_renyi(100, 600, seed=3)
    plan = build_plan(g, get_pattern("diamond"))
    assert leaf_groups_mode("twins") == "twins"
    assert twin_leaves(plan).first == 2 and twin_leaves(plan, "alike") is None
    assert leaf_first(plan) == 2 and leaf_first(plan, "all") == 2
    assert leaf_first(plan, "alike") == 4
    head, funcs = render_plan(plan, "twins"), render_functions(plan, "twins")
    assert "#define WM_WARP_GROUP 1" in head and "#define WM_LEAF_D 2" in head
    assert "wm_warp_group" in funcs and "row[0] = m0; row[1] = c;" in funcs
    assert "__ballot_sync" in funcs and "wm_choose((unsigned long long)s, 2)" in funcs
    assert "wm_leaf_count" not in funcs
    assert "#define WM_WARP_GROUP 0" in render_plan(plan, "alike")
    assert "wm_warp_group" not in render_functions(plan, "alike")
    assert "#define WM_WARP_GROUP 1" in RG.render_plan_generic(plan, "twins")
    assert "#define WM_WARP_GROUP 0" in RG.render_plan_generic(plan, "alike")
    assert RG.generic_signature(plan, "twins") != RG.generic_signature(plan, "alike")
    rec = RG.generic_table(plan, "twins")[plan.k * RG._stride(plan.k):]
    assert (rec[RG.G_FIRST], rec[RG.G_KIND], rec[RG.G_J], rec[RG.G_CHAIN]) == (2, 3, 2, 1)
    rec = RG.generic_table(plan, "alike")[plan.k * RG._stride(plan.k):]
    assert rec[RG.G_FIRST] == plan.k
    # the matched vertices: the edge's ends are the lists' owners (never in their own
    # list); nothing else is matched before the twins
    body = re.search(r"wm_warp_group\(.*?\n}", funcs, re.S).group(0)
    assert "--s" not in body


def _labeled_graph(share: float) -> Graph:
    """300 random vertices, 4,000 random edges: ``share`` of the vertices label 1, the rest
    0; edge labels 0 and 1."""
    import numpy as np
    rng = np.random.default_rng(1)
    n = 300
    src, dst = rng.integers(0, n, 4000), rng.integers(0, n, 4000)
    keep = src != dst
    return Graph.from_edges(src[keep], dst[keep], n=n,
                            vertex_labels=(rng.random(n) < share).astype(int),
                            edge_labels=rng.integers(0, 2, int(keep.sum())), warn=False)


def test_labeled_twins_are_tested_by_the_first_twins_check():
    """Twins with a label, an edge label and candidate sets, the same for both
    (``twin_group(checks=True)``): ``wm_warp_group`` scans the shortest of their lists or
    their candidate set and tests each entry with the first twin's ``wm_check_d2``, told
    which list it came from (the candidate set: ``CAND_GEN``); the matched vertices are
    among what that check rejects, so nothing is taken out after the scan. The generic
    module's twin record points to the same depth."""
    from warpmatch.engine.gpu import render_generic as RG
    from warpmatch.engine.gpu.render import CAND_GEN, twin_leaves
    g = _labeled_graph(0.2)
    q = Query.from_edges([(0, 1), (0, 2), (1, 2), (0, 3), (1, 3)], k=4,
                         vertex_labels=[1, 1, 0, 0], edge_labels=[-1, 1, -1, 1, -1])
    plan = build_plan(g, q, purpose="count")
    tw = twin_leaves(plan)
    assert tw is not None and tw.first == 2 and bool(plan.cand_restricted[2])
    body = re.search(r"wm_warp_group\(.*?\n}", render_functions(plan), re.S).group(0)
    assert "wm_check_d2(z_, sh_, t_, m0, m1)" in body
    assert f"sh_ = {CAND_GEN};" in body and "g.cand_ptr[2]" in body
    assert "--s" not in body and "wm_choose((unsigned long long)s, 2)" in body
    rec = RG.generic_table(plan)[plan.k * RG._stride(plan.k):]
    assert (rec[RG.G_FIRST], rec[RG.G_KIND]) == (2, 3)


def test_labeled_leaves_render_a_table(monkeypatch):
    """Leaves of one vertex with tests (render.table_leaves): a labeled tail behind a
    triangle (the last leaf alone) and a labeled 3-star with edge labels (alike leaves,
    chained): ``wm_leaf_count`` starts from ``g.leaf_tab`` of the parent and takes out the
    matched vertices that pass ``wm_tab_has`` (not the parent, nor one of another label);
    ``wm_tab_ok`` tests the edge label at the entry's position, the label and the candidate
    set. The generic module reads the same from its record (``G_TAB``, codes 2 to look
    up); ``$WARPMATCH_LEAF_TABLE=0`` turns it off in both."""
    from warpmatch.engine.gpu import render_generic as RG
    from warpmatch.engine.gpu.render import table_leaves, uses_table
    g = _labeled_graph(0.3)
    # a:1-b, b-c:1, a-c, c-[1]-d:0 (d hangs off c; b, unlabeled, may be one of c's
    # entries of label 0, a may not)
    tail = build_plan(g, Query.from_edges([(0, 1), (1, 2), (0, 2), (2, 3)], k=4,
                                          vertex_labels=[1, -1, 1, 0],
                                          edge_labels=[-1, -1, -1, 1]), purpose="count")
    tab = table_leaves(tail)
    assert tab is not None and tab.first == 3 and uses_table(tail) and leaf_first(tail) == 3
    head, funcs = render_plan(tail), render_functions(tail)
    assert "#define WM_LEAF_TAB 1" in head
    body = _leaf_body(tail)
    parent = f"m{tab.parent}"
    assert f"long long n = g.leaf_tab[{parent}];" in body
    look = [x for x in range(3) if int(tail.vlabel[x]) == -1]
    assert len(look) == 1 and body.count("wm_tab_has(") == 1
    assert f"wm_tab_has({parent}, m{look[0]})" in body
    ok = re.search(r"bool wm_tab_ok\(.*?\n}", funcs, re.S).group(0)
    assert "g.elab[p] == 1" in ok and "g.vlab[z] == 0" in ok and "g.cand_ids" in ok
    rec = RG.generic_table(tail)
    k, st = tail.k, RG._stride(tail.k)
    assert rec[k * st + RG.G_TAB] == 1 and rec[k * st + RG.G_KIND] == 0
    codes = [int(rec[(k - 1) * st + RG._leafc(k, j)]) for j in range(k - 1)]
    assert codes == [2 if j in look else 0 for j in range(k - 1)]
    assert "#define WM_LEAF_TAB 1" in RG.render_plan_generic(tail)
    # a 3-star with edge labels, alike leaves: C(s, 3) from the table
    star = build_plan(g, Query.from_edges([(0, 1), (0, 2), (0, 3)], k=4,
                                          vertex_labels=[1, 0, 0, 0],
                                          edge_labels=[1, 1, 1]), purpose="count")
    assert leaf_first(star) == 1 and uses_table(star)
    body = _leaf_body(star)
    assert "g.leaf_tab[m0]" in body and "wm_choose((unsigned long long)n, 3)" in body
    rec = RG.generic_table(star)[star.k * RG._stride(star.k):]
    assert (rec[RG.G_FIRST], rec[RG.G_KIND], rec[RG.G_J], rec[RG.G_TAB]) == (1, 1, 3, 1)
    monkeypatch.setenv("WARPMATCH_LEAF_TABLE", "0")
    # without the table the leaf and the triangle's third vertex are independent
    # vertices (render.indep_leaves: the leaf's list would be scanned per match)
    assert table_leaves(tail) is None and leaf_first(tail) == 2
    assert leaf_first(tail, "all") == 2 and leaf_first(tail, "alike") == 4
    monkeypatch.setenv("WARPMATCH_INDEPENDENT", "0")
    assert leaf_first(tail, "all") == 4 and leaf_first(tail) == 4
    assert "#define WM_LEAF_TAB 0" in render_plan(tail) and "leaf_tab" not in render_functions(tail)
    assert RG.generic_table(tail)[k * st + RG.G_TAB] == 0


def test_independent_vertices_render_in_both_modules(monkeypatch):
    """STMatch's pattern 13 ends in two independent vertices (each adjacent to two matched
    ones, not to each other; ``render.indep_leaves``): counted from depth 4 by the
    warp-wide ``wm_warp_group`` of ``render_leaves.render_indep``: the first member's scan
    tests the second on its survivors (the other member's slot ``-1``), then
    ``s1 s2 - s12``; the generic module's record says kind 4. By default (``"twins"``) and
    with ``leaf_groups="all"``; ``"alike"`` and ``$WARPMATCH_INDEPENDENT=0`` enumerate
    them. Three members: all seven overlaps."""
    from warpmatch.engine.gpu import render_generic as RG
    from warpmatch.engine.gpu.render import indep_leaves, plan_signature, warp_group
    from warpmatch.graph.generators import erdos_renyi
    from warpmatch.query import parse_query
    g = erdos_renyi(100, 600, seed=3)
    plan = build_plan(g, parse_query("0-1, 0-2, 0-3, 0-4, 0-5, 1-2, 1-3, 2-5, 3-4"))
    grp = indep_leaves(plan, "all")
    assert grp is not None and grp.first == 4 and grp.mixed and grp.multi
    assert warp_group(plan, "all") is grp and leaf_first(plan, "all") == 4
    # by default too (run on an H100, session 34)
    assert indep_leaves(plan) == grp and leaf_first(plan) == 4
    assert indep_leaves(plan, "alike") is None and leaf_first(plan, "alike") == 6
    head, funcs = render_plan(plan, "all"), render_functions(plan, "all")
    assert "#define WM_WARP_GROUP 1" in head and "#define WM_LEAF_D 4" in head
    body = re.search(r"wm_warp_group\(.*?\n}", funcs, re.S).group(0)
    assert "wm_check_d4(z_, sh_, t_, m0, m1, m2, m3)" in body
    assert "wm_check_d5(z_, g1_, t_, m0, m1, m2, m3, -1)" in body     # on 4's survivors
    assert "wm_check_d5(z_, sh_, t_, m0, m1, m2, m3, -1)" in body     # its own scan
    assert "return (unsigned long long)(s_[1] * s_[2] - s_[3]);" in body
    # both members have M[0]'s list: the second is told when the first scans it
    assert "const int g1_ = sh_ == 0 ? 0 : 253;" in body
    rec = RG.generic_table(plan, "all")[plan.k * RG._stride(plan.k):]
    assert (rec[RG.G_FIRST], rec[RG.G_KIND], rec[RG.G_J]) == (4, 4, 2)
    assert "#define WM_WARP_GROUP 1" in RG.render_plan_generic(plan, "all")
    assert "wm_indep_warp" in RG.render_functions_generic(plan)
    sig = plan_signature(plan, "all")
    monkeypatch.setenv("WARPMATCH_INDEPENDENT", "0")
    assert indep_leaves(plan, "all") is None and leaf_first(plan, "all") == 6
    assert "#define WM_WARP_GROUP 0" in render_plan(plan, "all")
    assert plan_signature(plan, "all") != sig
    assert RG.generic_table(plan, "all")[plan.k * RG._stride(plan.k) + RG.G_KIND] == 0
    monkeypatch.delenv("WARPMATCH_INDEPENDENT")
    three = build_plan(g, parse_query("a-b, b-c, c-a, x-a, x-b, y-b, y-c, z-a, z-c"))
    grp = indep_leaves(three, "all")
    assert grp is not None and three.k - grp.first == 3
    body = re.search(r"wm_warp_group\(.*?\n}", render_functions(three, "all"), re.S).group(0)
    for mask in range(1, 8):
        assert f"s_[{mask}] +=" in body
    assert "+ 2 * s_[7]" in body and "-1, -1)" in body
