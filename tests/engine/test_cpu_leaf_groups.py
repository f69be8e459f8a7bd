"""Counting the last leaves of one vertex from its list size (issue 21, item 3, first case),
and the last two or three leaves of different vertices by inclusion-exclusion (second case).

- ``plan.leaves.leaf_group`` picks a group only where nothing but injectivity ties the
  leaves; the CPU engine's counts equal the reference engine's on random graphs (labels,
  edge labels, directed, induced, both modes) with queries made of a random core and a
  fan of leaves on one core vertex.
- k-stars on a real graph equal the closed form sum over v of deg(v) (deg(v)-1) ...
- Leaves of different parents (own labels, edge labels, directions): the CPU engine's
  counts equal the reference engine's on random graphs, and the plain search's on
  email-Eu-core.
- ``explain`` says where the group applies.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.engine.cpu import CpuEngine, _leaf_group_header
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.plan import build_plan
from warpmatch.plan.leaves import bare_group, leaf_group
from warpmatch.query.model import Query

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_helpers import graphs  # noqa: E402

CPU, REF = CpuEngine(), ReferenceEngine()


@pytest.fixture(autouse=True)
def always_count(monkeypatch):
    """Every leaf group is counted, however small its sets (``engine.cpu.LEAF_WORTH``
    would leave tiny ones to enumeration): these tests check the counting."""
    from warpmatch.engine import cpu
    monkeypatch.setattr(cpu, "LEAF_WORTH", 0.0)
pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _core(draw, graph, smallest: int) -> tuple[int, set]:
    """A random connected core of ``smallest``..4 vertices: its size and edges."""
    c = draw(st.integers(smallest, 4))
    edges = set()
    for v in range(1, c):
        u = draw(st.integers(0, v - 1))
        edges.add((v, u) if graph.directed and draw(st.booleans()) else (u, v))
    for _ in range(draw(st.integers(0, c))):
        a, b = draw(st.integers(0, c - 1)), draw(st.integers(0, c - 1))
        if a != b:
            edges.add((a, b) if graph.directed else (min(a, b), max(a, b)))
    return c, edges


@st.composite
def fan_queries(draw, graph) -> Query:
    """A connected core of 1-4 vertices plus 2-4 leaves on one core vertex."""
    c, edges = _core(draw, graph, 1)
    hub = draw(st.integers(0, c - 1))
    j = draw(st.integers(2, 4))
    out = draw(st.booleans())
    for leaf in range(c, c + j):
        edges.add((hub, leaf) if (out or not graph.directed) else (leaf, hub))
    k = c + j
    if not graph.directed:
        edges = {(min(a, b), max(a, b)) for a, b in edges}
    edges = sorted(edges)
    same = draw(st.booleans())               # leaves alike (a group) or not
    lab = [-1] * k
    if graph.labeled:
        lab = [draw(st.sampled_from([-1, 0, 1])) for _ in range(c)]
        leaf_lab = draw(st.sampled_from([-1, 0, 1]))
        lab += [leaf_lab if same else draw(st.sampled_from([-1, 0, 1])) for _ in range(j)]
    elab = [-1] * len(edges)
    if graph.edge_labels is not None:
        e_leaf = draw(st.sampled_from([-1, 0, 1]))
        elab = [e_leaf if (b >= c or a >= c) else draw(st.sampled_from([-1, 0, 1]))
                for a, b in edges]
    return Query.from_edges(edges, k=k, vertex_labels=lab, edge_labels=elab,
                            directed=graph.directed)


@st.composite
def mixed_queries(draw, graph, most: int = 4) -> Query:
    """A connected core of 2-4 vertices plus 2..``most`` leaves, each on a random core
    vertex, with their own labels, edge labels and directions (leaves of different
    parents). (Four at most by default: the reference engine enumerates every match.)"""
    c, edges = _core(draw, graph, 2)
    j = draw(st.integers(2, most))
    for leaf in range(c, c + j):
        p = draw(st.integers(0, c - 1))
        edges.add((leaf, p) if graph.directed and draw(st.booleans()) else (p, leaf))
    return labeled_query(draw, graph, edges, c + j)


def labeled_query(draw, graph, edges: set, k: int) -> Query:
    """The query of ``k`` vertices and ``edges`` (undirected: each pair once), every vertex
    and edge label drawn independently where the graph has such labels."""
    if not graph.directed:
        edges = {(min(a, b), max(a, b)) for a, b in edges}
    edges = sorted(edges)
    lab = [-1] * k
    if graph.labeled:
        lab = [draw(st.sampled_from([-1, 0, 1])) for _ in range(k)]
    elab = [-1] * len(edges)
    if graph.edge_labels is not None:
        elab = [draw(st.sampled_from([-1, 0, 1])) for _ in edges]
    return Query.from_edges(edges, k=k, vertex_labels=lab, edge_labels=elab,
                            directed=graph.directed)


SETTINGS = settings(SETTINGS, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("shape", [fan_queries, mixed_queries], ids=["fan", "mixed"])
@SETTINGS
@given(data=st.data())
def test_counts_with_leaf_groups_equal_the_reference(shape, data) -> None:
    g = data.draw(graphs(nmax=14))
    q = data.draw(shape(g))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    plan = build_plan(g, q, mode=mode, induced=induced, purpose="count")
    assert CPU.count(g, plan) == REF.count(g, plan)


@SETTINGS
@given(data=st.data())
def test_many_mixed_leaves_equal_the_plain_search(data) -> None:
    """Five to seven leaves of different vertices (``plan.leaves.MIXED_MAX``): the group's
    count equals the CPU engine's own search with groups switched off (the reference
    engine would take minutes to enumerate them)."""
    import dataclasses

    from warpmatch.plan import leaves
    g = data.draw(graphs(nmax=14))
    q = data.draw(mixed_queries(g, most=7))
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      purpose="count")
    with_group = CPU.count(g, plan)
    with pytest.MonkeyPatch.context() as m:      # the engine finds no group: plain search
        m.setattr(leaves, "leaf_group", lambda *a: None)
        assert _leaf_group_header(plan, g)[0] == plan.k
        plain = CpuEngine().count(g, dataclasses.replace(plan))
    assert with_group == plain


@pytest.mark.parametrize("leaves", [4, 5, 6, 7])
def test_labeled_mixed_groups_of_four_to_seven(leaves: int) -> None:
    """A labeled triangle with 4-7 leaves of labels that make no two alike (no symmetry,
    so no restriction): one mixed group of all of them, the reference's count for four,
    the plain search's beyond."""
    import dataclasses

    from warpmatch.plan import leaves as L
    rng = np.random.default_rng(3)
    n = 50
    src, dst = rng.integers(0, n, 500), rng.integers(0, n, 500)
    keep = src != dst
    g = wm.Graph.from_edges(src[keep], dst[keep], n=n, vertex_labels=rng.integers(0, 3, n),
                            warn=False)
    tails = ["a-x:1", "b-y:2", "c-z:0", "a-w:2", "b-v:0", "c-u:1", "a-t:0"][:leaves]
    q = wm.api.as_query("a:0-b:1, b-c:2, c-a, " + ", ".join(tails), g)
    plan = build_plan(g, q, purpose="count")
    grp = leaf_group(plan, True, False)
    assert grp is not None and grp.mixed and plan.k - grp.first == leaves
    got = CPU.count(g, plan)
    assert got > 0
    if leaves == 4:
        assert got == REF.count(g, plan)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(L, "leaf_group", lambda *a: None)
        assert CpuEngine().count(g, dataclasses.replace(plan)) == got


def test_mixed_groups_on_a_real_graph_equal_enumeration(data_dir: Path, monkeypatch) -> None:
    """Leaves of different parents on email-Eu-core's first 120 vertices (the whole graph
    takes minutes to enumerate): the group's count equals the plain search's (the group
    switched off) for two and three leaves."""
    import dataclasses

    from warpmatch.plan import leaves
    path = data_dir / "snap" / "email-Eu-core.txt"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    with pytest.warns(Warning):
        full = wm.read_graph(str(path))
    src, dst = full.edges()
    keep = (src < 120) & (dst < 120)
    g = wm.Graph.from_edges(src[keep], dst[keep], warn=False)
    for dsl in ("a-b, b-c, c-a, a-x, b-y", "a-b, b-c, c-a, a-x, b-y, c-z",
                "a-b, b-c, c-d, d-a, a-x, c-y"):
        plan = build_plan(g, wm.api.as_query(dsl, g))
        grp = leaf_group(plan, False, False)
        assert grp is not None and grp.mixed, dsl
        with_group = CPU.count(g, plan)
        with monkeypatch.context() as m:        # the engine finds no group: plain search
            m.setattr(leaves, "leaf_group", lambda *a: None)
            assert _leaf_group_header(plan, g)[0] == plan.k          # really switched off
            plain = CpuEngine().count(g, dataclasses.replace(plan))
        assert with_group == plain, dsl


def test_groups_are_found_where_exact() -> None:
    g = wm.Graph.from_edges([0, 0, 0, 0, 1], [1, 2, 3, 4, 2])
    star = build_plan(g, wm.api.as_query("a-b, a-c, a-d, a-e", g))
    grp = leaf_group(star, False, False)
    assert grp is not None and grp.chain and star.k - grp.first == 4 and grp.parent == 0
    # one leaf only: the older fast path, no group
    assert leaf_group(build_plan(g, wm.api.as_query("tailed-triangle", g)), False, False) is None
    # listing plans carry no restrictions: a group counted by falling factorial
    lst = build_plan(g, wm.api.as_query("a-b, a-c, a-d", g), purpose="list")
    assert leaf_group(lst, False, False).chain is False
    # induced leaves are non-adjacent to each other: non-edges, no group
    ind = build_plan(g, wm.api.as_query("a-b, a-c, a-d", g), induced=True)
    assert leaf_group(ind, False, False) is None
    # leaves of two different vertices: a mixed group of two; of three: of three
    two = leaf_group(build_plan(g, wm.api.as_query("a-b, b-c, c-a, a-x, b-y", g)),
                     False, False)
    assert two is not None and two.mixed and two.first == 3
    three = build_plan(g, wm.api.as_query("a-b, b-c, c-a, a-x, b-y, c-z", g))
    assert leaf_group(three, False, False).first == 3
    # four leaves of four vertices (a square with a tail on each corner, one tail two
    # long): one group of four (the GPU engine's kernels take the last three: bare_group)
    four = build_plan(g, wm.api.as_query("a-b, b-c, c-d, d-a, a-e, e-x, b-y, c-z, d-w", g))
    grp = leaf_group(four, False, False)
    assert grp.mixed and four.k - grp.first == 4
    assert four.k - leaf_group(four, False, False, mixed_max=3).first == 3
    assert four.k - bare_group(four).first == 3
    # a leaf of a leaf (a path's end) is not a leaf of the matched part
    assert leaf_group(build_plan(g, wm.api.as_query("a-b, b-c, c-a, a-x, x-y", g)),
                      False, False) is None


def test_stars_on_a_real_graph_equal_the_closed_form(data_dir: Path) -> None:
    path = data_dir / "snap" / "email-Eu-core.txt"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    with pytest.warns(Warning):
        g = wm.read_graph(str(path))
    deg = g.degree.astype(object)
    for j in (2, 3, 4, 5):
        q = Query.from_edges([(0, i) for i in range(1, j + 1)], k=j + 1)
        want = sum(int(np.prod([d - i for i in range(j)])) for d in deg if d >= j)
        plan = build_plan(g, q)
        assert leaf_group(plan, False, False) is not None
        assert wm.count(g, q, backend="cpu") == want
        assert wm.count(g, q, mode="subgraphs", backend="cpu") == want // int(np.prod(range(1, j + 1)))


def test_explain_says_where_leaves_are_counted() -> None:
    g = wm.Graph.from_edges([0, 0, 0, 0], [1, 2, 3, 4])
    text = wm.explain(g, "a-b, a-c, a-d", backend="cpu")
    assert "counted, not enumerated" in text and "C(s, j)" in text
    g = wm.Graph.from_edges([0, 1, 2, 0, 1], [1, 2, 0, 3, 4])
    text = wm.explain(g, "a-b, b-c, c-a, a-x, b-y", backend="cpu")
    assert "inclusion-exclusion" in text


@pytest.mark.parametrize("shape", [fan_queries, mixed_queries], ids=["fan", "mixed"])
@SETTINGS
@given(data=st.data())
def test_leaves_with_candidate_sets_equal_the_reference(shape, data) -> None:
    """Leaves restricted to candidate sets (anchors here; refinement gives labeled
    queries their own) are still counted from set sizes: each list entry must also be in
    its leaf's set, and alike leaves must share one set."""
    g = data.draw(graphs(nmax=14))
    if g.n == 0:
        return
    q = data.draw(shape(g))
    leaves = data.draw(st.lists(st.integers(q.k - 3, q.k - 1), min_size=1, max_size=3,
                                unique=True))
    ids = st.lists(st.integers(0, g.n - 1), min_size=1, max_size=g.n, unique=True)
    same = data.draw(ids)
    anchors = {u: (same if data.draw(st.booleans()) else data.draw(ids)) for u in leaves}
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      anchors=anchors, purpose="count")
    assert CPU.count(g, plan) == REF.count(g, plan)


def test_refined_leaves_are_counted_on_a_labeled_graph(data_dir: Path, monkeypatch) -> None:
    """human's query_sparse_12_1 (a labeled query whose last depths are leaves with
    refined candidate sets): counted as a group, with the plain search's count (the group
    switched off)."""
    import dataclasses

    from warpmatch.plan import leaves
    from warpmatch.query.io import read_query_file
    gpath = data_dir / "labeled" / "human" / "human.graph"
    if not gpath.exists():
        pytest.skip(f"shared data not found at {gpath}")
    g = wm.read_graph(gpath)
    q = read_query_file(gpath.parent / "query_graph" / "query_sparse_12_1.graph")
    plan = build_plan(g, q)
    grp = leaf_group(plan, True, g.edge_labels is not None)
    assert grp is not None and any(plan.cand_restricted[grp.first:])
    with_group = CPU.count(g, plan)
    with monkeypatch.context() as m:
        m.setattr(leaves, "leaf_group", lambda *a: None)
        plain = CpuEngine().count(g, dataclasses.replace(plan))
    assert with_group == plain == 299_452_260


@pytest.mark.parametrize("worth", [1.0, 4.0, 50.0])
@pytest.mark.parametrize("shape", [fan_queries, mixed_queries], ids=["fan", "mixed"])
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_counting_or_enumerating_leaves_gives_the_same_count(monkeypatch, worth, shape,
                                                             data) -> None:
    """Whether a group is counted or enumerated is decided per partial match by its sets'
    lengths (``LEAF_WORTH``): any mix of both gives the reference's count."""
    from warpmatch.engine import cpu
    monkeypatch.setattr(cpu, "LEAF_WORTH", worth)
    g = data.draw(graphs(nmax=14))
    q = data.draw(shape(g))
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "subgraphs"])),
                      purpose="count")
    assert CPU.count(g, plan) == REF.count(g, plan)
