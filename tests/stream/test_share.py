"""ContinuousMatcher.apply_share: replicas that each search a share of every batch give,
summed, the deltas of one matcher (what the distributed matcher relies on)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.stream.matcher import ContinuousMatcher

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_matcher import SETTINGS, random_stream  # noqa: E402

QUERIES = {"triangle": "a-b, b-c, c-a", "square": "a-b, b-c, c-d, d-a",
           "labeled path": "a:0-b:1, b-c:0", "tailed": "a-b, b-c, c-a, c-d"}


def rows_by_update(d) -> dict:
    out: dict = {}
    if d.plus is None:
        return out
    for sign, rows, upd in (("+", d.plus, d.plus_update), ("-", d.minus, d.minus_update)):
        for r, u in zip(rows.tolist(), upd.tolist()):
            out.setdefault((u, sign), []).append(tuple(r))
    return {k: sorted(v) for k, v in out.items()}


@settings(**SETTINGS)
@given(seed=st.integers(0, 10_000), directed=st.booleans(), vlab=st.sampled_from([0, 2]),
       query=st.sampled_from(sorted(QUERIES)), induced=st.booleans(),
       replicas=st.integers(2, 3), counts_only=st.booleans())
def test_shares_sum_to_one_matcher(seed, directed, vlab, query, induced, replicas,
                                   counts_only):
    if "0" in QUERIES[query] and not vlab:
        vlab = 2
    oracle, ups = random_stream(seed, directed, vlab, 0, B=60)
    g0 = oracle.graph()
    q = QUERIES[query].replace("-", "->") if directed else QUERIES[query]
    kw = dict(induced=induced, backend="cpu", on_invalid="skip", count_initial=False)
    one = ContinuousMatcher(g0, q, **kw)
    reps = [ContinuousMatcher(g0, q, **kw) for _ in range(replicas)]
    for lo in range(0, len(ups), 25):
        batch = ups.slice(lo, min(len(ups), lo + 25))
        want = one.apply(batch, counts_only=counts_only)
        idx = np.arange(len(batch))
        parts = [r.apply_share(batch, idx % replicas == i, counts_only=counts_only)
                 for i, r in enumerate(reps)]
        assert np.array_equal(sum(p.plus_counts for p in parts), want.plus_counts)
        assert np.array_equal(sum(p.minus_counts for p in parts), want.minus_counts)
        for i, p in enumerate(parts):      # nothing outside a replica's share
            off = idx % replicas != i
            assert not p.plus_counts[off].any() and not p.minus_counts[off].any()
            assert np.array_equal(p.valid, want.valid) and p.reasons == want.reasons
        got: dict = {}
        for p in parts:
            got.update(rows_by_update(p))
        assert got == rows_by_update(want)
    for r in reps:                          # every replica holds the same final graph
        assert r.graph.snapshot().num_edges == one.graph.snapshot().num_edges
        assert wm.count(r.graph.snapshot(), q, induced=induced) == \
            wm.count(one.graph.snapshot(), q, induced=induced)


def test_a_share_mask_of_the_wrong_length_is_refused():
    cm = ContinuousMatcher(wm.Graph.from_edges([0, 1], [1, 2]), "triangle", backend="cpu")
    with pytest.raises(ValueError, match="each of the batch's 2 updates"):
        cm.apply_share([(0, 2, "+"), (2, 3, "+")], np.ones(3, bool))


@pytest.mark.parametrize("query", ["triangle", "labeled path", "tailed"])
def test_counting_shares_take_the_sequential_path(query):
    """Counting with known vertices and valid updates runs the sequential path (one
    update at a time, in place), which searches only the share too."""
    oracle, ups = random_stream(7, False, 2, 0, n=20, m=60, B=200, invalid=False,
                                new_vertices=False)
    g0, q = oracle.graph(), QUERIES[query]
    one = ContinuousMatcher(g0, q, backend="cpu", count_initial=False)
    reps = [ContinuousMatcher(g0, q, backend="cpu", count_initial=False) for _ in range(3)]
    for lo in range(0, len(ups), 50):
        batch = ups.slice(lo, lo + 50)
        want = one.apply(batch, counts_only=True)
        idx = np.arange(len(batch))
        parts = [r.apply_share(batch, idx % 3 == i, counts_only=True)
                 for i, r in enumerate(reps)]
        assert np.array_equal(sum(p.plus_counts for p in parts), want.plus_counts)
        assert np.array_equal(sum(p.minus_counts for p in parts), want.minus_counts)
    assert all(r._seq.stats["updates"] == len(ups) for r in reps)
