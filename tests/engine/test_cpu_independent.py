"""Counting the last independent vertices of a plan (issue 21 item 3, "independent
branches": ``plan.leaves`` fifth case), on the CPU engine.

- Random graphs (labels, edge labels, directed, induced, both modes) and queries made of
  a core and 2-4 extra vertices, each adjacent to one to three core vertices: the
  engine's count equals the reference engine's, and five to seven such vertices equal
  the plain search's (the group switched off by ``$WARPMATCH_INDEPENDENT=0``).
- ``leaf_group`` finds the group only where it is exact (no edge among its members,
  no restriction or induced non-edge on them) and only when asked (``multi``; the GPU
  engine's plain leaves are unchanged).
- Shipped labeled queries whose plans end in such vertices count the same with and
  without the group.
"""
from __future__ import annotations

import dataclasses
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
from warpmatch.plan.leaves import MIXED_MAX, bare_group, leaf_group
from warpmatch.query.model import Query

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_helpers import graphs  # noqa: E402
from test_cpu_leaf_groups import _core, labeled_query  # noqa: E402

CPU, REF = CpuEngine(), ReferenceEngine()
pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def always_count(monkeypatch):
    """Every group is counted, however small its sets (``engine.cpu.LEAF_WORTH`` would
    leave tiny ones to enumeration): these tests check the counting."""
    from warpmatch.engine import cpu
    monkeypatch.setattr(cpu, "LEAF_WORTH", 0.0)
    monkeypatch.setattr(cpu, "MULTI_MIN", 0)


@st.composite
def independent_queries(draw, graph, most: int = 4) -> Query:
    """A connected core of 2-4 vertices plus 2..``most`` vertices, each adjacent to one to
    three core vertices (directions, labels and edge labels drawn), none to each other."""
    c, edges = _core(draw, graph, 2)
    j = draw(st.integers(2, most))
    for x in range(c, c + j):
        for p in draw(st.sets(st.integers(0, c - 1), min_size=1, max_size=min(3, c))):
            edges.add((x, p) if graph.directed and draw(st.booleans()) else (p, x))
    return labeled_query(draw, graph, edges, c + j)


def _plain(graph, plan, monkeypatch) -> int:
    """The count with the group switched off (and checked off)."""
    with monkeypatch.context() as m:
        m.setenv("WARPMATCH_INDEPENDENT", "0")
        grp = leaf_group(plan, graph.vertex_labels is not None, graph.edge_labels is not None)
        assert _leaf_group_header(plan, graph)[0] == (plan.k if grp is None else grp.first)
        return CpuEngine().count(graph, dataclasses.replace(plan))


@SETTINGS
@given(data=st.data())
def test_counts_with_independent_vertices_equal_the_reference(data, monkeypatch) -> None:
    """Counted, or enumerated where the first member's set is smaller than
    ``MULTI_MIN`` (drawn, so that one search mixes both)."""
    from warpmatch.engine import cpu
    g = data.draw(graphs(nmax=12))
    q = data.draw(independent_queries(g))
    mode = data.draw(st.sampled_from(["embeddings", "subgraphs"]))
    induced = data.draw(st.booleans())
    monkeypatch.setattr(cpu, "MULTI_MIN", data.draw(st.sampled_from([0, 1, 2, 3])))
    plan = build_plan(g, q, mode=mode, induced=induced, purpose="count")
    assert CpuEngine().count(g, plan) == REF.count(g, plan)


@settings(SETTINGS, max_examples=60)
@given(data=st.data())
def test_many_independent_vertices_equal_the_plain_search(data, monkeypatch) -> None:
    """Five to seven of them (``MIXED_MAX``): the reference would enumerate for minutes."""
    g = data.draw(graphs(nmax=14))
    q = data.draw(independent_queries(g, most=MIXED_MAX))
    plan = build_plan(g, q, purpose="count")
    assert CPU.count(g, plan) == _plain(g, plan, monkeypatch)


def _labeled_graph() -> wm.Graph:
    rng = np.random.default_rng(5)
    n = 40
    src, dst = rng.integers(0, n, 300), rng.integers(0, n, 300)
    keep = src != dst
    return wm.Graph.from_edges(src[keep], dst[keep], n=n, vertex_labels=rng.integers(0, 2, n),
                               warn=False)


def test_groups_of_independent_vertices_are_found_where_exact(monkeypatch) -> None:
    g = _labeled_graph()
    # x, y, z each adjacent to two triangle vertices: one group of three, counted by the
    # CPU engine only (multi), not a group of plain leaves (the GPU engine's)
    q = wm.api.as_query("a:0-b:0, b-c:1, c-a, x-a, x-b, y-b, y-c, z-a, z-c", g)
    plan = build_plan(g, q, purpose="count")
    grp = leaf_group(plan, True, False, MIXED_MAX, True)
    assert grp is not None and grp.mixed and grp.multi and plan.k - grp.first == 3
    assert leaf_group(plan, True, False) is None and bare_group(plan) is None
    got = CPU.count(g, plan)
    assert got == REF.count(g, plan) == _plain(g, plan, monkeypatch) > 0
    # an edge between two of them ties them: not a group of all three
    tied = build_plan(g, wm.api.as_query("a:0-b:0, b-c:1, c-a, x-a, x-b, y-b, y-c, x-y", g),
                      purpose="count")
    grp = leaf_group(tied, True, False, MIXED_MAX, True)
    assert grp is None or tied.k - grp.first < 2 or not {
        int(u) for u in tied.order[grp.first:]} >= {3, 4}
    # induced: the members' non-edges are checks, no group
    ind = build_plan(g, q, induced=True, purpose="count")
    assert leaf_group(ind, True, False, MIXED_MAX, True) is None
    assert CPU.count(g, ind) == REF.count(g, ind)
    # a group of plain leaves only stays one (multi False: the kernels' fast paths); with
    # a leaf on each triangle vertex no core vertex is independent of them
    leaves = build_plan(g, wm.api.as_query("a:0-b:0, b-c:1, c-a, x-a, y-b, z-c", g),
                        purpose="count")
    grp = leaf_group(leaves, True, False, MIXED_MAX, True)
    assert grp is not None and grp.mixed and not grp.multi and leaves.k - grp.first == 3
    # the triangle's third vertex is independent of leaves on the other two: one group of
    # three, multi
    more = build_plan(g, wm.api.as_query("a:0-b:0, b-c:1, c-a, x-a, y-b", g), purpose="count")
    grp = leaf_group(more, True, False, MIXED_MAX, True)
    assert grp is not None and grp.multi and more.k - grp.first == 3
    assert CPU.count(g, more) == REF.count(g, more)


@pytest.mark.parametrize("need", [0, 3, 6, 1000])
def test_a_small_first_set_enumerates_the_group(monkeypatch, need: int) -> None:
    """``MULTI_MIN``: where the first member's set holds fewer entries the kernel
    enumerates the group (``_leaf_mixed`` gives -1); every threshold gives the
    reference's count (1000: always enumerated; 3 and 6: a mix over the partial
    matches)."""
    from warpmatch.engine import cpu
    monkeypatch.setattr(cpu, "MULTI_MIN", need)
    g = _labeled_graph()
    for dsl in ("a:0-b:0, b-c:1, c-a, x-a, x-b, y-b, y-c, z-a, z-c",
                "a-b, b-c, c-d, d-a, x-a, x-c, y-b, y-d",
                "a:0-b:1, b-c:0, c-a, x:1-a, x-b, y:0-b, y-c, w-a"):
        plan = build_plan(g, wm.api.as_query(dsl, g), purpose="count")
        assert CpuEngine().count(g, plan) == REF.count(g, plan), dsl


def test_explain_names_the_independent_vertices() -> None:
    text = wm.explain(_labeled_graph(), "a:0-b:0, b-c:1, c-a, x-a, x-b, y-b, y-c, z-a, z-c",
                      backend="cpu")
    assert "x, y, z, independent vertices" in text and "cpu engine" in text


@pytest.mark.parametrize("graph, names", [
    ("yeast", ["query_dense_16_10", "query_dense_16_106", "query_dense_16_109"]),
    ("hprd", ["query_dense_16_100", "query_dense_16_101"]),
])
def test_shipped_queries_count_the_same_with_and_without_the_group(
        data_dir: Path, monkeypatch, graph: str, names: list[str]) -> None:
    """Shipped labeled queries whose plans end in independent vertices (each with a
    candidate set from refinement): the group's count equals the plain search's."""
    from warpmatch.engine import cpu
    monkeypatch.setattr(cpu, "LEAF_WORTH", 16.0)        # the engine as it runs
    monkeypatch.setattr(cpu, "MULTI_MIN", 4)
    path = data_dir / "labeled" / graph / f"{graph}.graph"
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    g = wm.api.as_graph(str(path))
    found = 0
    for name in names:
        q = wm.api.as_query(str(path.parent / "query_graph" / f"{name}.graph"), g)
        plan = build_plan(g, q, purpose="count")
        grp = leaf_group(plan, True, False, MIXED_MAX, True)
        found += grp is not None and grp.multi
        assert CPU.count(g, plan) == _plain(g, plan, monkeypatch), name
    assert found == len(names)
