"""Counting twins from one intersection (issue 21, item 3; ``plan.leaves.twin_group``).

Twins are last depths with the same two or more backward neighbours and nothing else to
check (the diamond's two common neighbours of an edge, K5 less an edge's two). The CPU
engine counts their set once, at the first twin's depth, and turns its size ``s`` into
``C(s, j)`` or ``s (s-1) ... (s-j+1)``.

- ``twin_group`` finds them only where that is exact: induced non-edges, restrictions that
  do not chain them or that involve another depth leave them to the search; twins with
  labels, edge labels or candidate sets (the same for all of them) are counted from the
  scan of the first one's candidates (``checks=True``), not from the fast path.
- Counts equal the reference engine's on random graphs (directed, vertex- and
  edge-labeled) with queries made of a random core and 2-3 vertices on one random set of
  core vertices (twins where the plan orders them last), labeled or not.
- On email-Eu-core the counted patterns (the diamond, gMatch's P8, STMatch's 15) equal
  the plain search's (``$WARPMATCH_TWINS=0``).
- ``explain`` says where twins are counted.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.engine.cpu import CpuEngine, _program
from warpmatch.engine._cpu_prog import H_TWIN0, H_TWIN_CHAIN, HEAD, S_FAST_LAST
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.graph.generators import erdos_renyi, random_labels, with_labels
from warpmatch.plan import build_plan
from warpmatch.plan.leaves import twin_group
from warpmatch.query.model import Query

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_helpers import graphs  # noqa: E402
from test_cpu_leaf_groups import _core  # noqa: E402

CPU, REF = CpuEngine(), ReferenceEngine()
pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def twin_queries(draw, graph) -> Query:
    """A connected core of 2-4 vertices (half of them cliques) plus 2-3 vertices adjacent to
    one random set of 2 or more core vertices (the same directions for all of them, or
    random), labeled alike or not; sometimes an edge between two of them (no longer
    twins)."""
    c, edges = _core(draw, graph, 2)
    if draw(st.booleans()):                 # a clique: RI orders it before the twins
        edges |= {(a, b) for a in range(c) for b in range(a + 1, c)}
    nbrs = draw(st.lists(st.integers(0, c - 1), min_size=2, max_size=c, unique=True))
    j = draw(st.integers(2, 3))
    same_dirs = draw(st.booleans())
    dirs = {p: draw(st.booleans()) for p in nbrs}
    for t in range(c, c + j):
        for p in nbrs:
            out = dirs[p] if same_dirs else draw(st.booleans())
            edges.add((p, t) if out or not graph.directed else (t, p))
    if draw(st.integers(0, 4)) == 0:
        edges.add((c, c + 1))
    k = c + j
    if not graph.directed:
        edges = {(min(a, b), max(a, b)) for a, b in edges}
    edges = sorted(edges)
    lab = [-1] * k
    if graph.labeled:
        lab = [draw(st.sampled_from([-1, 0, 1])) for _ in range(c)]
        twin = draw(st.sampled_from([-1, -1, 0, 1]))
        lab += [twin] * j
    elab = [-1] * len(edges)
    if graph.edge_labels is not None:
        elab = [draw(st.sampled_from([-1, -1, 0, 1])) for _ in edges]
    return Query.from_edges(edges, k=k, vertex_labels=lab, edge_labels=elab,
                            directed=graph.directed)


@st.composite
def dense_graphs(draw, directed: bool | None = None, labeled: bool | None = None) -> wm.Graph:
    """A random graph of 4-11 vertices with 30-90% of the vertex pairs as edges (the
    twins' queries are dense: sparse random graphs rarely have a match), some with
    vertex and edge labels, directed or not."""
    n = draw(st.integers(4, 11))
    directed = draw(st.booleans()) if directed is None else directed
    p = draw(st.sampled_from([0.3, 0.6, 0.9]))
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b and (directed or a < b)]
    keep = draw(st.lists(st.floats(0, 1), min_size=len(pairs), max_size=len(pairs)))
    edges = [e for e, x in zip(pairs, keep) if x < p]
    labeled = draw(st.booleans()) if labeled is None else labeled
    vl = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)) if labeled else None
    el = (draw(st.lists(st.integers(0, 1), min_size=len(edges), max_size=len(edges)))
          if labeled and draw(st.booleans()) else None)
    return wm.Graph.from_edges([a for a, _ in edges], [b for _, b in edges], n=n,
                               vertex_labels=vl, edge_labels=el, directed=directed, warn=False)


@SETTINGS
@given(data=st.data())
def test_counts_with_twins_equal_the_reference(data) -> None:
    g = data.draw(st.one_of(graphs(nmax=14), dense_graphs()))
    q = data.draw(twin_queries(g))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    plan = build_plan(g, q, mode=mode, induced=induced, purpose="count")
    assert CPU.count(g, plan) == REF.count(g, plan)


@SETTINGS
@given(data=st.data())
def test_twins_on_unlabeled_graphs_are_counted_and_equal_the_reference(data) -> None:
    """Undirected, no labels, subgraphs (the twins' restrictions chain them): where the
    plan orders the twins last the engine counts them, and the count is right."""
    g = data.draw(dense_graphs(directed=False, labeled=False))
    q = data.draw(twin_queries(g))
    plan = build_plan(g, q, mode="subgraphs", purpose="count")
    grp = twin_group(plan, False, False, checks=True)
    prog = _program(plan, g)
    assert int(prog[H_TWIN0]) == (plan.k if grp is None else grp.first)
    assert CPU.count(g, plan) == REF.count(g, plan)


@SETTINGS
@given(data=st.data())
def test_labeled_twins_equal_the_reference(data) -> None:
    """Dense labeled graphs (failing sets on): twins with a label, edge labels or candidate
    sets are counted from the scan of the first one's candidates (``ST_TWINS``)."""
    g = data.draw(dense_graphs(labeled=True))
    q = data.draw(twin_queries(g))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    plan = build_plan(g, q, mode=mode, purpose="count")
    assert CPU.count(g, plan) == REF.count(g, plan)


def _q(text: str, g) -> Query:
    return wm.api.as_query(text, g)


def test_twins_are_found_where_exact() -> None:
    g = erdos_renyi(200, 1500, seed=1)
    # the diamond: two common neighbours of an edge, ordered by symmetry breaking
    plan = build_plan(g, _q("diamond", g), mode="embeddings")
    grp = twin_group(plan, False, False)
    assert grp is not None and grp.first == 2 and grp.chain
    prog = _program(plan, g)
    assert int(prog[H_TWIN0]) == 2 and int(prog[H_TWIN_CHAIN]) == 1
    # K5 less an edge: the edge's ends are the twins of the triangle of the other three
    k5e = "a-b, a-c, b-c, a-d, b-d, c-d, a-e, b-e, c-e"
    plan = build_plan(g, _q(k5e, g), mode="subgraphs")
    grp = twin_group(plan, False, False)
    assert grp is not None and grp.first == 3 and grp.chain
    # induced: the twins' non-edge is a check, so they are enumerated
    assert twin_group(build_plan(g, _q(k5e, g), induced=True), False, False) is None
    # a triangle's last vertex alone is not a group
    assert twin_group(build_plan(g, _q("a-b, b-c, a-c", g)), False, False) is None
    # a partition's inter plan (rule 8 checks every candidate) has none
    import dataclasses
    cut = dataclasses.replace(plan, cut_part=np.zeros(g.n, dtype=np.int32))
    assert twin_group(cut, False, False) is None


def test_labeled_twins_are_counted_from_the_scan() -> None:
    """Twins with a label: not bare (the GPU enumerates them), but the CPU engine's scan of
    the first one's candidates counts its survivors; twins of different labels are no
    twins."""
    g = with_labels(erdos_renyi(200, 1500, seed=1), vertex_labels=random_labels(200, 2))
    # a triangle 0, 1, 2 of label 0 and two vertices of label 1 on its edge 0-1
    edges = [(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (0, 4), (1, 4)]
    q = Query.from_edges(edges, k=5, vertex_labels=[0, 0, 0, 1, 1])
    plan = build_plan(g, q, mode="subgraphs")
    assert plan.order.tolist()[-2:] == [3, 4]
    assert twin_group(plan, True, False) is None
    grp = twin_group(plan, True, False, checks=True)
    assert grp is not None and grp.first == 3 and grp.chain
    prog = _program(plan, g)
    assert int(prog[H_TWIN0]) == 3
    assert int(prog[int(prog[HEAD + S_FAST_LAST]) + 3]) == 0      # the scan counts
    assert CPU.count(g, plan) == REF.count(g, plan) > 0
    assert "checks made once per candidate" in wm.explain(g, q, backend="cpu")
    # (2 is a twin of 3 and 4 where its label is theirs)
    other = Query.from_edges(edges, k=5, vertex_labels=[0, 0, 2, 0, 1])
    assert twin_group(build_plan(g, other), True, False, checks=True) is None


def test_explain_says_where_twins_are_counted() -> None:
    g = erdos_renyi(200, 1500, seed=1)
    text = wm.explain(g, "diamond", backend="cpu")
    assert "twins" in text and "C(s, j)" in text
    assert "twins" not in wm.explain(g, "a-b, b-c, a-c", backend="cpu")


@pytest.mark.parametrize("pattern", [
    "diamond",
    "a-b, a-c, b-c, a-d, b-d, c-d, a-e, b-e, c-e",               # gMatch's P8
    "a-b, a-c, a-d, b-c, b-d, c-d, a-e, b-e, c-e, d-e, a-f, b-f, c-f, d-f",  # K6 less e-f
])
def test_twins_on_a_real_graph_equal_enumeration(data_dir: Path, monkeypatch,
                                                 pattern: str) -> None:
    path = data_dir / "snap" / "email-Eu-core.txt"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    with pytest.warns(Warning):
        g = wm.read_graph(str(path), directed=False)
    counted = wm.count(g, pattern, backend="cpu")
    monkeypatch.setenv("WARPMATCH_TWINS", "0")
    assert wm.count(g, pattern, backend="cpu") == counted > 0


@pytest.mark.parametrize("graph,name", [("yeast", "query_dense_16_5"),
                                        ("yeast", "query_dense_24_7")])
def test_labeled_twins_on_shipped_queries_equal_the_plain_search(data_dir: Path, graph: str,
                                                                 name: str) -> None:
    """Shipped labeled queries whose last two depths are twins with a label and candidate
    sets: the same count counted and enumerated (994 and 972,216 embeddings)."""
    from warpmatch.query.io import read_query_file
    gpath = data_dir / "labeled" / graph / f"{graph}.graph"
    if not gpath.exists():
        pytest.skip(f"shared data not found at {gpath}")
    g = wm.read_graph(gpath)
    q = read_query_file(gpath.parent / "query_graph" / f"{name}.graph")
    plan = build_plan(g, q, purpose="count")
    assert twin_group(plan, True, True, checks=True) is not None
    assert twin_group(plan, True, True) is None           # not bare: the scan counts them
    counted = CPU.count(g, plan)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WARPMATCH_TWINS", "0")
        assert CpuEngine().count(g, plan) == counted
    assert counted * plan.multiplier == {"query_dense_16_5": 994, "query_dense_24_7": 972_216}[name]
