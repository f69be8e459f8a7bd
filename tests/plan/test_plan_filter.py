"""LDF and NLF candidate filtering against a plain per-vertex definition."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from warpmatch.graph.csr import Graph
from warpmatch.plan.filter import candidate_counts, candidates, ldf_mask, nlf_applies
from warpmatch.query.model import Query


def plain_candidates(g: Graph, q: Query, u: int, use_nlf: bool) -> list[int]:
    """The filters' definition, one data vertex at a time."""
    A = q.adjacency()
    if not q.directed:
        A = A | A.T
    out = []
    for v in range(g.n):
        lab = int(q.vertex_labels[u])
        if lab != -1 and (g.vertex_labels is None or g.vertex_labels[v] != lab):
            continue
        if g.out_degree[v] < A[u].sum() or g.in_degree[v] < A[:, u].sum():
            continue
        if use_nlf and g.vertex_labels is not None:
            ok = True
            for qn, dn in ((np.flatnonzero(A[u]), g.neighbors(v)),
                           (np.flatnonzero(A[:, u]), g.in_neighbors(v))):
                for L in set(q.vertex_labels[qn].tolist()) - {-1}:
                    need = int(np.sum(q.vertex_labels[qn] == L))
                    if int(np.sum(g.vertex_labels[dn] == L)) < need:
                        ok = False
            if not ok:
                continue
        out.append(v)
    return out


@st.composite
def labeled_instances(draw):
    directed = draw(st.booleans())
    n = draw(st.integers(1, 14))
    rnd = draw(st.randoms(use_true_random=False))
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b and (directed or a < b)]
    edges = [e for e in pairs if rnd.random() < 0.35]
    labeled = draw(st.booleans())
    vl = [rnd.randrange(3) for _ in range(n)] if labeled else None
    g = Graph.from_edges([a for a, _ in edges], [b for _, b in edges], n=n, vertex_labels=vl,
                         directed=directed)
    k = draw(st.integers(2, 5))
    qe = []
    for v in range(1, k):
        u = rnd.randrange(v)
        qe.append((u, v) if rnd.random() < 0.5 else (v, u))
    qv = [rnd.choice([-1, 0, 1, 2]) for _ in range(k)] if labeled else None
    q = Query.from_edges(qe, k=k, vertex_labels=qv, directed=directed)
    return g, q


@settings(max_examples=80, deadline=None, derandomize=True)
@given(labeled_instances(), st.booleans())
def test_filters_equal_their_definition(inst, use_nlf):
    g, q = inst
    for u in range(q.k):
        got = candidates(g, q, u, use_nlf=use_nlf)
        assert got.dtype == g.indices.dtype
        assert np.all(np.diff(got) > 0)
        assert got.tolist() == plain_candidates(g, q, u, use_nlf)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(labeled_instances())
def test_candidate_counts_are_the_candidate_set_sizes(inst):
    g, q = inst
    counts = candidate_counts(g, q)
    for u in range(q.k):
        if nlf_applies(g, q, u):
            assert counts[u] == candidates(g, q, u).size
        else:
            assert counts[u] == np.count_nonzero(ldf_mask(g, q, u))


def test_nlf_removes_what_ldf_keeps():
    # centre 0 (label 0) has two label-1 neighbours; vertex 3 (label 0, degree 2) has
    # only label-0 neighbours, so LDF keeps it and NLF must not
    g = Graph.from_edges([0, 0, 3, 3], [1, 2, 4, 5], vertex_labels=[0, 1, 1, 0, 0, 0])
    q = Query.from_edges([(0, 1), (0, 2)], vertex_labels=[0, 1, 1])
    assert candidates(g, q, 0, use_nlf=False).tolist() == [0, 3]
    assert candidates(g, q, 0).tolist() == [0]


def test_directed_filters_are_per_direction():
    # query a->b, c->b: b needs in-degree 2 and two in-neighbours of label 1
    g = Graph.from_edges([0, 1, 3, 4, 2], [2, 2, 5, 5, 0], directed=True,
                         vertex_labels=[1, 1, 0, 1, 0, 0])
    q = Query.from_edges([(0, 1), (2, 1)], vertex_labels=[1, 0, 1], directed=True)
    assert candidates(g, q, 1, use_nlf=False).tolist() == [2, 5]
    assert candidates(g, q, 1).tolist() == [2]          # 5's in-neighbours are labels 0, 1
    assert candidates(g, q, 0, use_nlf=False).tolist() == [0, 1, 3]   # label 1, out-degree >= 1


def test_labeled_query_vertex_on_unlabeled_graph_has_no_candidates():
    g = Graph.from_edges([0, 1], [1, 2])
    q = Query.from_edges([(0, 1)], vertex_labels=[3, -1])
    assert candidates(g, q, 0).size == 0
    assert candidates(g, q, 1).tolist() == [0, 1, 2]


def test_ldf_ids_are_kept_per_graph_and_read_only():
    """The planner's filter ids are computed once per graph and filter, equal the mask's
    ids, cannot be written, and a plan built from them counts as one built afresh."""
    import pytest

    from warpmatch.engine import get_engine
    from warpmatch.plan import build_plan
    from warpmatch.plan import filter as F
    from warpmatch.query import get_pattern
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 60, 400), rng.integers(0, 60, 400)
    g = Graph.from_edges(src, dst, n=60, warn=False)
    h = Graph.from_edges(src[:100], dst[:100], n=60, warn=False)
    q = get_pattern("tailed-triangle")
    first = F.ldf_ids(g, q, 0)
    assert F.ldf_ids(g, q, 0) is first                        # kept
    assert np.array_equal(first, np.flatnonzero(ldf_mask(g, q, 0)))
    assert first.dtype == g.indices.dtype and not first.flags.writeable
    with pytest.raises(ValueError):
        first[0] = 1
    assert np.array_equal(F.ldf_ids(h, q, 0), np.flatnonzero(ldf_mask(h, q, 0)))  # per graph
    for u in range(q.k):                                      # other degrees, other sets
        assert np.array_equal(F.ldf_ids(g, q, u), np.flatnonzero(ldf_mask(g, q, u)))
        assert F.ldf_size(g, q, u) == F.ldf_size(g, q, u) == np.count_nonzero(ldf_mask(g, q, u))
        assert F.ldf_size(h, q, u) == np.count_nonzero(ldf_mask(h, q, u))
    assert len(F._LDF_IDS[g]) <= F.LDF_IDS_KEEP
    plan = build_plan(g, q)
    assert plan.cand_ids.flags.writeable and not np.shares_memory(plan.cand_ids, first)
    eng = get_engine("cpu")
    again = eng.count(g, plan)
    F._LDF_IDS.pop(g, None)
    assert eng.count(g, build_plan(g, q)) == again
