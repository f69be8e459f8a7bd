"""apply_batches(counts_only=True) in runs of several batches (stream/_fused.py).

Checked against the batch-by-batch loop (``cm.apply`` per batch, which the fused lane
must be indistinguishable from): per-update counts, validity and skip reasons; the
graph, relevant subgraph and filter after stopping early, after a call between two
yielded batches and after an invalid update under ``on_invalid="error"`` in the middle
of a run; a run the path leaves early (several threads); runs really taken (the
path's counters).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpmatch.errors import InputFormatError
from warpmatch.query.model import Query
from warpmatch.stream import _fused as F
from warpmatch.stream import sequential as SQ
from warpmatch.stream.matcher import ContinuousMatcher
from warpmatch.stream.types import Updates
from warpmatch.stream.updates import split_batches

from test_sequential import (DIRECTED, SETTINGS, UNDIRECTED, counts, known_stream,
                             labeled_query, state)
from test_matcher import with_labels


def per_batch(cm, ups, batch):
    """The reference: one ``apply`` per batch."""
    out = [cm.apply(b, True) for b in split_batches(ups, batch)]
    return (np.concatenate([d.plus_counts for d in out]),
            np.concatenate([d.minus_counts for d in out]),
            np.concatenate([d.valid for d in out]),
            [r for d in out for r in d.reasons])


def pair(seed, directed, vlab, elab, keep="all", on_invalid="skip", invalid=True, qi=0,
         threads=1):
    oracle, ups = known_stream(seed, directed, vlab, elab, invalid=invalid, B=90)
    texts = DIRECTED if directed else UNDIRECTED
    if vlab == 3:
        q = labeled_query(seed, directed, 3, texts, qi, elab)
    else:
        q = with_labels(Query.parse(texts[qi]), seed, vlab, elab, directed=directed)
    kw = dict(backend="cpu", threads=threads, keep=keep, on_invalid=on_invalid)
    g0 = oracle.graph()
    return ContinuousMatcher(g0, q, **kw), ContinuousMatcher(g0, q, **kw), ups


@pytest.fixture
def fuse_all(monkeypatch):
    """Every run after the first takes the whole rest of the stream."""
    monkeypatch.setattr(F, "FUSE_S", 1e3)


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), directed=st.booleans(), vlab=st.sampled_from([0, 2, 3]),
       elab=st.sampled_from([0, 2]), keep=st.sampled_from(["all", "relevant"]),
       batch=st.sampled_from([1, 4, 16]), fuse_s=st.sampled_from([1e-9, 1e3]))
def test_fused_equals_batch_by_batch(seed, directed, vlab, elab, keep, batch, fuse_s):
    old = F.FUSE_S
    F.FUSE_S = fuse_s
    try:
        cm, ref, ups = pair(seed, directed, vlab, elab, keep=keep)
        got, want = counts(cm, ups, batch), per_batch(ref, ups, batch)
    finally:
        F.FUSE_S = old
    for a, b in zip(got[:3], want[:3]):
        assert np.array_equal(a, b)
    assert got[3] == want[3]            # the skip reasons, word for word
    assert cm.count == ref.count and cm.updates_applied == ref.updates_applied == len(ups)
    assert (cm.added, cm.removed) == (ref.added, ref.removed)
    assert state(cm) == state(ref)
    runs = cm._sequential_path().stats["runs"]
    if fuse_s > 1 and len(ups) > 3 * batch:     # the first batch, then one run for the rest
        assert runs <= 3
    assert cm._sequential_path().stats["updates"] == len(ups)


@pytest.mark.parametrize("keep", ["all", "relevant"])
@pytest.mark.parametrize("how", ["break", "exception", "close"])
def test_stopping_early_takes_back_what_was_not_yielded(fuse_all, keep, how):
    cm, ref, ups = pair(4, False, 3, 2, keep=keep)
    batch, stop = 5, 4                  # four batches yielded, the run holds them all
    it = cm.apply_batches(ups, batch, counts_only=True)
    got = []
    try:
        for d in it:
            got.append(d.plus_counts - d.minus_counts)
            if len(got) == stop:
                assert cm._pending is not None      # the run holds unyielded batches
                if how == "exception":
                    raise KeyError("consumer")
                break
    except KeyError:
        pass
    if how == "close":
        it.close()
    del it                              # (a generator left alone is closed when collected)
    for b in list(split_batches(ups, batch))[:stop]:
        ref.apply(b, True)
    assert cm.count == ref.count and cm.updates_applied == stop * batch
    assert state(cm) == state(ref)
    assert cm._sequential_path().stats["updates"] == stop * batch
    # and the matcher goes on exactly from there
    rest = ups.slice(stop * batch, len(ups))
    got2, want2 = counts(cm, rest, batch), per_batch(ref, rest, batch)
    assert all(np.array_equal(a, b) for a, b in zip(got2[:3], want2[:3]))
    assert state(cm) == state(ref)


@pytest.mark.parametrize("call", ["apply", "graph", "apply_share", "another stream"])
def test_a_call_between_two_batches_sees_only_the_yielded_ones(fuse_all, call):
    cm, ref, ups = pair(6, False, 0, 0)
    batch = 5
    batches = list(split_batches(ups, batch))
    for i, d in enumerate(cm.apply_batches(ups, batch, counts_only=True)):
        ref_d = ref.apply(batches[i], True)
        assert np.array_equal(d.plus_counts, ref_d.plus_counts)
        assert np.array_equal(d.minus_counts, ref_d.minus_counts)
        if i != 3:
            continue
        assert cm._pending is not None  # the run holds unyielded batches
        # an edge absent now (after the yielded batches), inserted and deleted again
        snap = ref.graph.snapshot()
        s, t = snap.edges()
        have = set(zip(s.tolist(), t.tolist())) | set(zip(t.tolist(), s.tolist()))
        x, y = next((x, y) for x in range(12) for y in range(x + 1, 12)
                    if (x, y) not in have)
        extra = Updates(np.array([x, x]), np.array([y, y]), np.array([1, -1], np.int8))
        want = ref.apply(extra, True)
        if call == "apply":
            got = cm.apply(extra, True)
        elif call == "graph":
            assert cm.graph.num_edges == ref.graph.num_edges
            got = cm.apply(extra, True)
        elif call == "apply_share":
            got = cm.apply_share(extra, np.ones(2, bool), counts_only=True)
        else:                           # a second generator, interleaved
            got = next(cm.apply_batches(extra, batch, counts_only=True))
        assert got.plus_counts.tolist() == want.plus_counts.tolist()
        assert got.minus_counts.tolist() == want.minus_counts.tolist()
        assert state(cm) == state(ref)
    assert cm.count == ref.count and state(cm) == state(ref)


@pytest.mark.parametrize("keep", ["all", "relevant"])
def test_invalid_update_under_error_mid_run(fuse_all, monkeypatch, keep):
    """The run is done again batch by batch: the batches before the bad one are yielded
    and applied, the bad one raises the same error as without fusing and leaves
    nothing of itself applied."""
    cm, ref, ups = pair(8, False, 3, 0, keep=keep, on_invalid="error", invalid=False)
    batch = 6
    # a self-loop in the fourth batch (keep="relevant" trusts only what no search reads)
    v = int(ups.src[20])
    src, dst = ups.src.copy(), ups.dst.copy()
    src[20], dst[20] = v, v
    bad = type(ups)(src, dst, ups.op, ups.label)
    sizes = []
    real = SQ.SequentialPath.run

    def spy(self, ups, *args, **kw):
        sizes.append(len(ups))
        return real(self, ups, *args, **kw)
    monkeypatch.setattr(SQ.SequentialPath, "run", spy)
    got = []
    with pytest.raises(InputFormatError) as e_fused:
        for d in cm.apply_batches(bad, batch, counts_only=True):
            got.append(d)
    want = []
    with pytest.raises(InputFormatError) as e_ref:
        for b in split_batches(bad, batch):
            want.append(ref.apply(b, True))
    assert sizes[:2] == [2 * batch, len(ups) - 2 * batch]   # a run of the rest, refused
    assert str(e_fused.value) == str(e_ref.value) and "update 2" in str(e_fused.value)
    assert len(got) == len(want) == 3
    assert all(np.array_equal(a.plus_counts, b.plus_counts) for a, b in zip(got, want))
    assert cm.updates_applied == ref.updates_applied == 18
    assert state(cm) == state(ref)


def test_a_run_left_early_keeps_its_whole_batches(fuse_all, monkeypatch):
    """With several threads the path may stop inside a run (a heavy rest): the whole
    batches before the stop stay, the part of a batch after them is taken back and the
    rest goes batch by batch."""
    cm, ref, ups = pair(9, False, 0, 0, threads=2)
    real = SQ.SequentialPath._worth_batch
    batch = 8
    calls, left = [], []

    def worth(self, rate, rest):
        # a run's first look is after its first update (one kernel call each, below);
        # leave that run inside its second batch
        calls.append(rest)
        leave = len(calls) > 1 and rest == calls[0] - (batch + 2)
        left.append(leave)
        return leave
    monkeypatch.setattr(SQ.SequentialPath, "_worth_batch", worth)
    monkeypatch.setattr(SQ, "CALL_S", 0.0)      # one update per kernel call
    got, want = counts(cm, ups, batch), per_batch(ref, ups, batch)
    monkeypatch.setattr(SQ.SequentialPath, "_worth_batch", real)
    for a, b in zip(got[:3], want[:3]):
        assert np.array_equal(a, b)
    assert any(left) and cm.count == ref.count and state(cm) == state(ref)


def test_all_valid_batches_make_their_reasons_when_read():
    # StreamDelta._counts(reasons=None): the list of "" is made on first read; copies and
    # pickles of such a delta behave like any other
    import copy
    import pickle
    cm, ref, ups = pair(3, False, 0, 0, invalid=False)
    deltas = list(cm.apply_batches(ups, 16, counts_only=True))
    assert all("reasons" not in d.__dict__ for d in deltas)      # (not made yet)
    for d in deltas:
        for x in (d, copy.copy(d), pickle.loads(pickle.dumps(d))):
            assert x.reasons == [""] * len(d) and x.valid.all()
            np.testing.assert_array_equal(x.plus_counts, d.plus_counts)
        assert d.reasons is d.reasons                           # made once, then kept
    with pytest.raises(AttributeError, match="no attribute 'rows'"):
        deltas[0].rows
