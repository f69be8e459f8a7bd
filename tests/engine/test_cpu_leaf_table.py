"""The CPU engine's last leaf counted from a table (``engine.cpu.leaf_table_wanted``,
``engine._cpu_leaves._leaf_count``): per data vertex, the entries of its list a last leaf
may take, counted the first time the search needs them and kept for the rest of the
search; the search subtracts the matched vertices among them.

- On random graphs (vertex and edge labels, directed, candidate sets from anchors, both
  modes, induced) the count equals the reference engine's and the count with the table off,
  and the table is really used on a good share of the draws.
- On human's labeled queries (refined candidate sets) it equals the plain search.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.engine import cpu
from warpmatch.engine.cpu import CpuEngine
from warpmatch.engine.reference import ReferenceEngine
from warpmatch.plan import build_plan
from warpmatch.query.model import Query

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_helpers import graphs, queries  # noqa: E402

CPU, REF = CpuEngine(), ReferenceEngine()
pytestmark = pytest.mark.filterwarnings("ignore::warpmatch.errors.UnknownLabelWarning")
USED = {"yes": 0, "all": 0}


def _wanted(g: wm.Graph, plan) -> bool:
    return cpu.leaf_table_wanted(plan, CPU._prepare(g, plan)[0][8])


@st.composite
def tailed(draw, graph) -> Query:
    """A random query whose last vertex (in most orders) is a leaf: a random connected
    query plus one pendant vertex with its own label and edge label."""
    q = draw(queries(graph, 2, 5))
    k = q.k + 1
    hub = draw(st.integers(0, q.k - 1))
    edge = (hub, q.k) if (not graph.directed or draw(st.booleans())) else (q.k, hub)
    el = list(q.edge_labels.tolist()) + [
        draw(st.sampled_from([-1, 0, 1])) if graph.edge_labels is not None else -1]
    vl = list(q.vertex_labels.tolist()) + [
        draw(st.sampled_from([-1, 0, 1])) if graph.labeled else -1]
    return Query.from_edges(list(map(tuple, q.edges.tolist())) + [edge], k=k,
                            vertex_labels=vl, edge_labels=el, directed=graph.directed)


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_counts_with_the_table_equal_the_reference(data) -> None:
    # mostly labeled graphs, tails, embeddings and not induced: what the table is for
    g = data.draw(graphs(nmax=14, labels=data.draw(st.sampled_from([True, True, None]))))
    q = data.draw(tailed(g) if data.draw(st.integers(0, 3)) else queries(g, 3, 6))
    anchors = None
    if data.draw(st.booleans()):
        ids = st.lists(st.integers(0, g.n - 1), min_size=1, max_size=g.n, unique=True)
        anchors = {data.draw(st.integers(0, q.k - 1)): data.draw(ids)}
    plan = build_plan(g, q, mode=data.draw(st.sampled_from(["embeddings", "embeddings",
                                                            "subgraphs"])),
                      induced=data.draw(st.sampled_from([False, False, True])),
                      anchors=anchors, purpose="count")
    if plan.empty_reason is None and plan.roots.size:
        USED["all"] += 1
        USED["yes"] += _wanted(g, plan)
    want = REF.count(g, plan)
    assert CPU.count(g, plan) == want
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WARPMATCH_LEAF_TABLE", "0")
        assert CpuEngine().count(g, plan) == want


def test_the_table_was_used_by_the_random_draws() -> None:
    """The hypothesis test above ran the table path on a fair share of its draws (else it
    would test nothing new): run after it, in file order."""
    if USED["all"] == 0:
        pytest.skip("the random test did not run first")
    assert USED["yes"] >= 0.15 * USED["all"], USED


def test_what_the_table_leaves_to_the_search() -> None:
    """Not for a last depth with two backward edges, a restriction or two depths; not with
    the table switched off; yes for a labeled tail."""
    g = wm.Graph.from_edges([0, 1, 2, 2, 3], [1, 2, 0, 3, 4], vertex_labels=[0, 0, 0, 1, 1])
    from warpmatch.api import as_query
    tail = build_plan(g, as_query("a:0-b:0, b-c:0, c-a, c-d:1", g), purpose="count")
    assert _wanted(g, tail)
    tri = build_plan(g, as_query("triangle", g), purpose="count")
    edge = build_plan(g, as_query("a:0-b:1", g), purpose="count")
    star = build_plan(g, as_query("3-star", g), purpose="count")   # leaves restricted
    assert not _wanted(g, tri) and not _wanted(g, edge) and not _wanted(g, star)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WARPMATCH_LEAF_TABLE", "0")
        assert not _wanted(g, tail)


@pytest.mark.parametrize("name", ["query_dense_12_1", "query_dense_12_2",
                                  "query_sparse_12_2"])
def test_human_queries_equal_the_plain_search(data_dir: Path, name: str) -> None:
    """human's labeled queries whose last vertex is a refined leaf: the same count with the
    table (2-core box: 3-7x faster on these) and without."""
    from warpmatch.query.io import read_query_file
    gpath = data_dir / "labeled" / "human" / "human.graph"
    if not gpath.exists():
        pytest.skip(f"shared data not found at {gpath}")
    g = wm.read_graph(gpath)
    plan = build_plan(g, read_query_file(gpath.parent / "query_graph" / f"{name}.graph"),
                      purpose="count")
    assert _wanted(g, plan)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WARPMATCH_LEAF_TABLE", "0")
        plain = CpuEngine().count(g, plan)
    assert CPU.count(g, plan) == plain


def test_a_labeled_leaf_without_a_candidate_set() -> None:
    """Where the filters leave a labeled leaf every vertex of its label (no candidate set),
    the table itself checks the label: vertex 2's list holds 0, 1 (label 0, matched), 3
    (label 1) and 4 (label 0), so the triangle on 2 has one tail, not two."""
    from warpmatch.api import as_query
    g = wm.Graph.from_edges([0, 1, 2, 2, 2], [1, 2, 0, 3, 4], vertex_labels=[0, 0, 0, 1, 0])
    plan = build_plan(g, as_query("a:0-b:0, b-c:0, c-a, c-d:1", g), purpose="count")
    assert _wanted(g, plan) and not plan.cand_restricted[-1]
    assert CPU.count(g, plan) == REF.count(g, plan) == 1      # raw: one per automorphism class


def test_explain_says_where_the_table_counts() -> None:
    g = wm.Graph.from_edges([0, 1, 2, 2, 2], [1, 2, 0, 3, 4], vertex_labels=[0, 0, 0, 1, 0])
    text = wm.explain(g, "a:0-b:0, b-c:0, c-a, c-d:1", backend="cpu")
    assert "d, a leaf of c, from a table" in text and "(label)" in text
    assert "from a table" not in wm.explain(g, "tailed-triangle", backend="cpu")


def test_alike_leaf_groups_read_the_table() -> None:
    """A group of alike labeled leaves (a chain under restrictions, or not) takes its set's
    size from the table where it is counted, so the table is wanted even where the last
    depth is restricted (which then does not read it when the group is enumerated); the
    counts equal the reference's with the table on and off, with groups always counted
    and never counted."""
    import numpy as np

    from warpmatch.api import as_query
    rng = np.random.default_rng(0)
    n = 30
    g = wm.Graph.from_edges(rng.integers(0, n, 120), rng.integers(0, n, 120), n=n,
                            vertex_labels=rng.integers(0, 2, n), warn=False)
    for text in ("a:0-b:1, a-c:1, a-d:1", "a:0-b:0, b-c:0, c-a, c-d:1, c-e:1"):
        for mode in ("embeddings", "subgraphs"):
            plan = build_plan(g, as_query(text, g), mode=mode, purpose="count")
            assert _wanted(g, plan)
            want = REF.count(g, plan)
            for worth in (0.0, 1e9):          # groups always / never counted
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(cpu, "LEAF_WORTH", worth)
                    assert CpuEngine().count(g, plan) == want
                    mp.setenv("WARPMATCH_LEAF_TABLE", "0")
                    assert CpuEngine().count(g, plan) == want
