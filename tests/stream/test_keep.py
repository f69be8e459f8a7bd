"""``ContinuousMatcher(keep="relevant")`` (stream/keep.py): the deltas of ``keep="all"``.

Checked: per-update counts (and listed rows) against ``keep="all"`` and the static
oracle on valid random streams, with new vertices, on the sequential path (one and
two threads) and the batch path; invalid updates of relevant edges reported as
before, those of other edges taken as valid; ``on_invalid="error"`` names the
update by its place in the batch and changes nothing; the graph holds the
relevant edges only; a query with a wildcard keeps everything.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.errors import InputFormatError
from warpmatch.query.model import Query
from warpmatch.stream.keep import KeepRelevant, kept_updates
from warpmatch.stream.matcher import ContinuousMatcher
from warpmatch.stream.relevant import relevant_edges, relevant_pairs
from warpmatch.stream.types import Updates

from test_matcher import random_stream, replay
from test_sequential import DIRECTED, UNDIRECTED, labeled_query

SETTINGS = dict(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def run(cm: ContinuousMatcher, ups: Updates, batch: int, counts_only: bool) -> dict:
    out = list(cm.apply_batches(ups, batch, counts_only=counts_only))
    res = {"plus": np.concatenate([d.plus_counts for d in out]),
           "minus": np.concatenate([d.minus_counts for d in out]),
           "valid": np.concatenate([d.valid for d in out]),
           "reasons": [r for d in out for r in d.reasons]}
    if not counts_only:               # rows with their update's index in the stream
        rows = set()
        start = 0
        for d in out:
            for sign, m, u in ((1, d.plus, d.plus_update), (-1, d.minus, d.minus_update)):
                rows |= {(sign, start + int(j), tuple(r)) for j, r in zip(u, m.tolist())}
            start += len(d)
        res["rows"] = rows
    return res


def relevant_mask(q: Query, induced: bool, ups: Updates, oracle) -> np.ndarray:
    """Which updates join two labels the query can read (by the oracle's labels)."""
    labels, table = relevant_pairs(q, induced)
    lab = oracle.vlabels
    vl = np.array([lab[x] for x in ups.src.tolist()] + [lab[x] for x in ups.dst.tolist()])
    n = len(ups)
    idx = np.arange(n)
    return relevant_edges(labels, table, vl, idx, idx + n)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), directed=st.booleans(), elab=st.sampled_from([0, 2]),
       induced=st.booleans(), mode=st.sampled_from(["embeddings", "subgraphs"]),
       qi=st.integers(0, 4), batch=st.sampled_from([1, 7, 64]),
       path=st.sampled_from(["seq1", "seq2", "batch", "list"]))
def test_keep_relevant_equals_keep_all_and_the_oracle(seed, directed, elab, induced, mode, qi,
                                                      batch, path):
    """Valid streams with new (declared) vertices: every path gives keep="all"'s deltas."""
    oracle, ups = random_stream(seed, directed, 3, elab, n=12, m=26, B=70, invalid=False)
    texts = DIRECTED if directed else UNDIRECTED
    q = labeled_query(seed, directed, 3, texts, qi, elab)
    g0 = oracle.graph()
    kw = dict(mode=mode, induced=induced, backend="cpu", threads=2 if path == "seq2" else 1)
    if path == "batch":
        kw["sequential"] = False
    counts_only = path != "list"
    cm = ContinuousMatcher(g0, q, keep="relevant", **kw)
    ref = ContinuousMatcher(g0, q, **kw)
    assert cm._keep is not None and cm._relevant is None
    got, want = run(cm, ups, batch, counts_only), run(ref, ups, batch, counts_only)
    for key in want:
        assert got[key] == want[key] if key in ("reasons", "rows") \
            else np.array_equal(got[key], want[key]), key
    sets, _ = replay(oracle, ups, q, mode, induced)
    assert got["plus"].tolist() == [len(sets[i + 1] - sets[i]) for i in range(len(ups))]
    assert got["minus"].tolist() == [len(sets[i] - sets[i + 1]) for i in range(len(ups))]
    assert cm.count == ref.count == len(sets[-1])
    assert cm.updates_applied == ref.updates_applied == len(ups)
    # the graph: the relevant edges of keep="all"'s graph, nothing else
    full = ref.graph.snapshot()
    s, d = full.edges()
    keep = relevant_edges(*relevant_pairs(q, induced), full.vertex_labels, s, d)
    assert ext_edges(cm.graph.snapshot()) == ext_edges(full, keep)


def ext_edges(g: wm.Graph, keep: np.ndarray | None = None) -> list:
    """The edges of ``g`` (those ``keep`` marks) in external ids, sorted."""
    s, d = g.edges()
    if keep is not None:
        s, d = s[keep], d[keep]
    ids = np.arange(g.n) if g.ids is None else np.asarray(g.ids)
    pairs = zip(ids[s].tolist(), ids[d].tolist())
    return sorted(pairs if g.directed else (tuple(sorted(p)) for p in pairs))


@pytest.mark.parametrize("sequential", [True, False])
def test_invalid_updates_of_relevant_edges_are_reported_the_others_trusted(sequential):
    oracle, ups = random_stream(11, False, 3, 0, n=12, m=26, B=120, invalid=True,
                                new_vertices=False)
    q = labeled_query(11, False, 3, UNDIRECTED, 1, 0)
    g0 = oracle.graph()
    kw = dict(backend="cpu", threads=1, on_invalid="skip", sequential=sequential)
    got = run(ContinuousMatcher(g0, q, keep="relevant", **kw), ups, 16, True)
    want = run(ContinuousMatcher(g0, q, **kw), ups, 16, True)
    rel = relevant_mask(q, False, ups, oracle) | (ups.src == ups.dst)
    assert np.array_equal(got["plus"], want["plus"])
    assert np.array_equal(got["minus"], want["minus"])
    assert np.array_equal(got["valid"][rel], want["valid"][rel])
    assert got["valid"][~rel].all() and not want["valid"][~rel].all()   # (the test bites)
    assert [r for r, k in zip(got["reasons"], rel) if k] == \
        [r for r, k in zip(want["reasons"], rel) if k]


@pytest.mark.parametrize("sequential", [True, False])
def test_error_names_the_update_in_the_batch_and_changes_nothing(sequential):
    oracle, _ = random_stream(3, False, 3, 0, n=12, m=26, invalid=False, new_vertices=False)
    q = Query.parse("a:0-b:1, b-c:2")
    g0 = oracle.graph()
    cm = ContinuousMatcher(g0, q, keep="relevant", backend="cpu", threads=1,
                           sequential=sequential)
    lab = oracle.vlabels
    by = {k: sorted(x for x in lab if lab[x] == k) for k in range(3)}
    a0, b1 = by[0][0], by[1][0]
    irr = (by[0][0], by[0][1])                      # 0-0: no query edge reads it
    present = oracle.key(a0, b1) in oracle.edges
    # irrelevant updates (one an insert of itself twice: trusted), then the relevant
    # insert of an edge that is there (or a delete of one that is not): update 4
    bad = Updates(np.array([irr[0], irr[0], irr[0], a0, a0]),
                  np.array([irr[1], irr[1], irr[1], b1, b1]),
                  np.array([1, 1, -1, -1 if present else 1, -1 if present else 1], np.int8))
    before = sorted(zip(*cm.graph.snapshot().edges()))
    with pytest.raises(InputFormatError) as err:
        cm.apply(bad, counts_only=True)
    assert "update 4" in str(err.value)
    assert sorted(zip(*cm.graph.snapshot().edges())) == before
    assert cm.added == cm.removed == cm.updates_applied == 0


def test_wildcard_queries_and_unlabeled_graphs_keep_everything():
    g = wm.Graph.from_edges([0, 1], [1, 2], vertex_labels=[0, 1, 2])
    cm = ContinuousMatcher(g, "a:0-b, b-c", keep="relevant", backend="cpu")
    assert cm._keep is None and cm.graph.num_edges == 2
    cm = ContinuousMatcher(wm.Graph.from_edges([0, 1], [1, 2]), "triangle", keep="relevant",
                           backend="cpu")
    assert cm._keep is None
    with pytest.raises(ValueError, match="keep must be"):
        ContinuousMatcher(g, "triangle", keep="some")


def test_kept_updates_keeps_what_it_cannot_judge():
    """Unknown vertices, self-loops, bad ops and labels go on to be reported."""
    labels, table = np.array([0, 1]), np.array([[False, True], [True, False]])
    kr = KeepRelevant(labels, table)
    lab_idx = kr._index_of(np.array([0, 1, 5, 0]))         # vertex 2: a label not in the query
    assert lab_idx.tolist() == [0, 1, -2, 0]
    src = np.array([0, 0, 2, 3, 7, 3, 0, 0, 8], np.int64)
    dst = np.array([1, 3, 3, 3, 0, 0, 1, 3, 3], np.int64)
    op = np.array([1, 1, -1, 1, 1, 1, 2, -1, 1], np.int8)
    elab = np.array([0, 0, 0, 0, 0, -1, 0, 5, 0], np.int64)
    e = np.zeros(0, np.int64)
    decl_ext, decl_idx = np.array([8]), np.array([1])      # vertex 8 declared, label 1
    out = np.empty(src.size, np.int64)
    m = kept_updates(src, dst, op, elab, True, False, True, 4, e, e, e, e, decl_ext,
                     decl_idx, lab_idx, table, out)
    # 0: 0-1 relevant; 1: 0-0 dropped; 2: dropped (label 5); 3: self-loop; 4: 7 unknown;
    # 5: label -1; 6: op 2; 7: label 5 on a graph without edge labels; 8: 8 (declared 1)-0
    assert out[:m].tolist() == [0, 3, 4, 5, 6, 7, 8]
