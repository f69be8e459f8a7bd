"""The sequential CPU path (stream/sequential.py): same deltas as the batch path and the oracle.

Checked: per-update counts against static recounts of every state (the oracle
of test_matcher.py) and against the batch path (``sequential=False``), with
the path really taken (its counters); skip reasons equal to the batch path's;
``on_invalid="error"`` leaves the graph, the relevant subgraph and the filter
exactly as they were; rows that must move to a grown edge array; a switch to
the batch path in the middle of a batch; an exception between kernel calls;
batches that alternate the two paths.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.errors import InputFormatError
from warpmatch.query.model import Query
from warpmatch.stream import sequential as SQ
from warpmatch.stream.filter import NlfFilter
from warpmatch.stream.matcher import ContinuousMatcher
from warpmatch.stream.types import Updates

from test_matcher import Oracle, random_stream, replay, with_labels

SETTINGS = dict(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def known_stream(seed: int, directed: bool, vlab: int, elab: int, n: int = 12, m: int = 26,
                 B: int = 60, invalid: bool = True) -> tuple[Oracle, Updates]:
    """test_matcher's random stream over the vertices of G_0 only (the sequential path
    takes every batch); ``invalid`` adds self-loops, duplicate inserts, missing deletes."""
    return random_stream(seed, directed, vlab, elab, n=n, m=m, B=B, invalid=invalid,
                         new_vertices=False)


def counts(cm: ContinuousMatcher, ups: Updates, batch: int) -> tuple[np.ndarray, ...]:
    out = list(cm.apply_batches(ups, batch, counts_only=True))
    return (np.concatenate([d.plus_counts for d in out]),
            np.concatenate([d.minus_counts for d in out]),
            np.concatenate([d.valid for d in out]),
            [r for d in out for r in d.reasons])


def state(cm: ContinuousMatcher) -> tuple:
    """Everything the two paths keep: the edges of the graph (in split mode the relevant
    subgraph's plus the edge set's, read without leaving split mode) and of the relevant
    subgraph, the filter's counts and masks (equal to a fresh build)."""
    def edges(dg):
        s, d = dg.snapshot().edges()
        lab = dg.snapshot().edge_label_array()
        return sorted(zip(s.tolist(), d.tolist(), [0] * len(s) if lab is None
                          else lab.tolist()))
    seq = cm._sequential_path()
    eg = cm._dg if cm._relevant is None else cm._relevant.graph
    if seq is not None and seq.split:
        s, d, lab = seq.edgeset.edges()
        whole = sorted(edges(eg) + list(zip(s.tolist(), d.tolist(),
                                            lab.tolist() if cm._dg.has_edge_labels
                                            else [0] * len(s))))
        n_whole = cm._dg.num_edges
        assert n_whole == len(whole)
    else:
        whole, n_whole = edges(cm._dg), cm._dg.num_edges
    out = [whole, n_whole, edges(eg), eg.num_edges]
    if seq is not None:
        filt = cm.engine.filter_for(seq.plans, eg)
        fresh = NlfFilter(cm.query, eg.directed)
        fresh.bind(eg)
        n = eg.n
        assert np.array_equal(filt.cnt[:n], fresh.cnt[:n])
        assert np.array_equal(filt.mask[:n], fresh.mask[:n])
    return tuple(map(str, out))


def test_split_mode_keeps_the_graph_and_syncs_it_on_access():
    """A fully labelled query on a graph the matcher owns: the edges it cannot read live
    in an edge set, the whole graph is rebuilt (same object) when it is read, and from
    then on it is kept up to date in place."""
    oracle, ups = known_stream(41, False, 3, 2, invalid=False, B=120)
    q = labeled_query(13, False, 3, UNDIRECTED, 1, 0)
    g0 = oracle.graph()
    cm = ContinuousMatcher(g0, q, backend="cpu", threads=1)
    ref = ContinuousMatcher(g0, q, backend="cpu", threads=1, sequential=False)
    seq = cm._sequential_path()
    assert seq.split and len(seq.edgeset) > 0
    dg = cm._dg
    p1 = counts(cm, ups.slice(0, 60), 25)
    r1 = counts(ref, ups.slice(0, 60), 25)
    assert all(np.array_equal(x, y) for x, y in zip(p1[:3], r1[:3]))
    assert seq.split and seq.dirty
    empty = cm.apply(ups.slice(0, 0), counts_only=True)   # nothing to do: stays split
    assert len(empty) == 0 and empty.added == empty.removed == 0 and seq.split
    before = state(cm)                    # read without syncing
    g = cm.graph                          # syncs
    assert g is dg and not seq.split and state(cm) == before == state(ref)
    p2 = counts(cm, ups.slice(60, 120), 25)
    r2 = counts(ref, ups.slice(60, 120), 25)
    assert all(np.array_equal(x, y) for x, y in zip(p2[:3], r2[:3]))
    assert state(cm) == state(ref) and cm.count == ref.count
    assert cm.count == wm.count(cm.graph.snapshot(), q)


@pytest.mark.parametrize("on_invalid", ["skip", "error"])
def test_split_mode_edge_set_grows_mid_batch(on_invalid):
    """A batch of hundreds of edges the query cannot read, on a G_0 with three: the edge
    set fills and grows several times inside one batch (the first pass stops, the caller
    grows the table, the pass goes on), among relevant updates and invalid ones; counts,
    validity and the graph equal the batch path's, and under ``"error"`` an invalid
    update after the growth leaves nothing applied."""
    n = 60
    labels = np.array([0] * 30 + [1] * 30)
    g0 = wm.Graph.from_edges([0, 30, 31], [1, 31, 32], n=n, vertex_labels=labels)
    q = Query.parse("a:0-b:0, b-c:0")
    rng = np.random.default_rng(5)
    # distinct edges absent from G_0: 300 the query cannot read (labels 1-1), 40 it can
    # (0-0) and 40 it cannot (0-1), shuffled; then two invalid updates (an insert of an
    # existing edge, a delete of a missing one) and 50 deletions
    heavy = [(30 + i, 30 + j) for i in range(30) for j in range(i + 2, 30)]
    light = [(i, j) for i in range(2, 30) for j in range(i + 1, 30)]
    mixed = [(i, 30 + j) for i in range(30) for j in range(30)]
    picks = [heavy[k] for k in rng.permutation(len(heavy))[:300]]
    rows = [(u, v, 1) for u, v in picks]
    rows += [(*light[k], 1) for k in rng.permutation(len(light))[:40]]
    rows += [(*mixed[k], 1) for k in rng.permutation(len(mixed))[:40]]
    rows = [rows[k] for k in rng.permutation(len(rows))]
    rows += [(30, 31, 1), (40, 41, -1)]                         # 380, 381: invalid
    rows += [(u, v, -1) for u, v in picks[:50]]
    src, dst, op = (np.array(c, np.int64) for c in zip(*rows))
    ups = Updates(src, dst, op.astype(np.int8))
    cm = ContinuousMatcher(g0, q, backend="cpu", threads=1, on_invalid="skip")
    ref = ContinuousMatcher(g0, q, backend="cpu", threads=1, sequential=False,
                            on_invalid="skip")
    seq = cm._sequential_path()
    assert seq.split and len(seq.edgeset) == 2
    gen = seq.edgeset.generation
    if on_invalid == "skip":
        got, want = counts(cm, ups, len(ups)), counts(ref, ups, len(ups))
        assert all(np.array_equal(x, y) for x, y in zip(got[:3], want[:3]))
        assert seq.edgeset.generation > gen + 1          # grew more than once
        assert state(cm) == state(ref)
    else:
        em = ContinuousMatcher(g0, q, backend="cpu", threads=1, on_invalid="error")
        before = state(em)
        with pytest.raises(InputFormatError, match="update 380"):
            em.apply(ups)
        assert state(em) == before
        assert em.added == em.removed == em.updates_applied == 0


def labeled_query(seed: int, directed: bool, k_labels: int, texts: list[str], qi: int,
                  elab: int) -> Query:
    q = Query.parse(texts[qi])
    vl = np.array([(seed >> i) % k_labels for i in range(q.k)], dtype=np.int32)
    el = q.edge_labels.copy()
    if elab:
        el[0] = (seed // 7) % 2
    return Query(q.k, q.edges, el, vl, directed=directed, names=q.names)


# the last two: a depth with three backward rows, two of them the update's endpoints
# (their rows intersected into the tags once per update, _cpu_group._intersect)
UNDIRECTED = ["a-b, b-c, c-a", "a-b, b-c, c-d, d-a, a-c", "a-b, b-c, c-d", "a-b, a-c, a-d",
              "a-b, b-c, c-a, a-d, b-d, c-d"]
DIRECTED = ["a->b, b->c, c->a", "a->b, b->c, a->c", "a->b, b->a, b->c", "a->b, c->b, c->d",
            "a->b, b->c, a->c, a->d, b->d, c->d"]


# ------------------------------------------------------------------ against the oracle
@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), directed=st.booleans(), vlab=st.sampled_from([0, 2, 3]),
       elab=st.sampled_from([0, 2]), induced=st.booleans(),
       mode=st.sampled_from(["embeddings", "subgraphs"]), qi=st.integers(0, 4),
       batch=st.sampled_from([1, 5, 64]))
def test_sequential_against_oracle_and_batch_path(seed, directed, vlab, elab, induced, mode,
                                                  qi, batch):
    oracle, ups = known_stream(seed, directed, vlab, elab)
    texts = DIRECTED if directed else UNDIRECTED
    if vlab == 3:                         # every vertex labelled: the relevant subgraph
        q = labeled_query(seed, directed, 3, texts, qi, elab)
    else:
        q = with_labels(Query.parse(texts[qi]), seed, vlab, elab, directed=directed)
    g0 = oracle.graph()
    kw = dict(mode=mode, induced=induced, backend="cpu", on_invalid="skip", threads=1)
    cm_s = ContinuousMatcher(g0, q, **kw)
    cm_b = ContinuousMatcher(g0, q, sequential=False, **kw)
    assert (cm_s._relevant is not None) == (vlab == 3)
    got_s = counts(cm_s, ups, batch)
    got_b = counts(cm_b, ups, batch)
    seq = cm_s._sequential_path()
    assert seq.stats["updates"] == len(ups) and cm_b._sequential_path() is None
    for a, b in zip(got_s[:3], got_b[:3]):
        assert np.array_equal(a, b)
    assert got_s[3] == got_b[3]          # the skip reasons, word for word
    sets, valid = replay(oracle, ups, q, mode, induced)
    assert got_s[2].tolist() == valid
    for i in range(len(ups)):
        plus, minus = sets[i + 1] - sets[i], sets[i] - sets[i + 1]
        assert (got_s[0][i], got_s[1][i]) == (len(plus), len(minus)), i
    assert cm_s.count == cm_b.count == len(sets[-1])
    assert state(cm_s) == state(cm_b)


# ------------------------------------------------------------------ errors and undo
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("labelled", [False, True])
def test_invalid_update_under_error_changes_nothing(directed, labelled):
    oracle, _ = known_stream(3, directed, 3 if labelled else 0, 2, invalid=False)
    texts = DIRECTED if directed else UNDIRECTED
    q = labeled_query(5, directed, 3, texts, 0, 0) if labelled else Query.parse(texts[0])
    g0 = oracle.graph()
    (a, b), _lab = next(iter(oracle.edges.items()))
    absent = next((x, y) for x in sorted(oracle.vertices) for y in sorted(oracle.vertices)
                  if x != y and oracle.key(x, y) not in oracle.edges)
    # three valid updates (applied, then taken back), then the delete of a missing edge
    bad = Updates(np.array([absent[0], a, absent[0], a]), np.array([absent[1], b, absent[1], b]),
                  np.array([1, -1, -1, -1], np.int8), np.array([1, 0, 0, 0], np.int32))
    kw = dict(backend="cpu", threads=1)
    cm_s = ContinuousMatcher(g0, q, **kw)
    cm_b = ContinuousMatcher(g0, q, sequential=False, **kw)
    before = state(cm_s)
    with pytest.raises(InputFormatError) as err_s:
        cm_s.apply(bad, counts_only=True)
    with pytest.raises(InputFormatError) as err_b:
        cm_b.apply(bad, counts_only=True)
    assert str(err_s.value) == str(err_b.value)
    assert "update 3" in str(err_s.value) and "delete of a missing edge" in str(err_s.value)
    assert state(cm_s) == before
    assert cm_s.added == cm_s.removed == cm_s.updates_applied == 0
    # and the matcher goes on exactly
    _, ups = known_stream(3, directed, 3 if labelled else 0, 2, invalid=False)
    cm_s.on_invalid = "skip"
    fresh = ContinuousMatcher(g0, q, on_invalid="skip", **kw)
    got, want = counts(cm_s, ups, 7), counts(fresh, ups, 7)
    assert all(np.array_equal(x, y) for x, y in zip(got[:3], want[:3]))
    assert cm_s.count == fresh.count


def test_overflow_changes_nothing(monkeypatch):
    g = wm.Graph.from_edges([0, 1, 2], [1, 2, 3])
    cm = ContinuousMatcher(g, "triangle", backend="cpu", threads=1, count_initial=False)
    seq = cm._sequential_path()
    before = state(cm)
    real = SQ.S.seq_run

    def overflowing(ctl, *args):
        status = real(ctl, *args)
        return SQ.S.OVERFLOW if ctl[SQ.S.C_NEXT] > 0 else status
    monkeypatch.setattr(SQ.S, "seq_run", overflowing)
    with pytest.raises(OverflowError):
        cm.apply([(0, 2, "+"), (1, 3, "+")], counts_only=True)
    monkeypatch.undo()
    assert state(cm) == before and seq.stats["updates"] == 0


def test_exception_between_calls_leaves_the_batch_unapplied(monkeypatch):
    """Ctrl-C between two kernel calls: the part already applied is taken back."""
    oracle, ups = known_stream(8, False, 0, 0, invalid=False, B=40)
    cm = ContinuousMatcher(oracle.graph(), "triangle", backend="cpu", threads=1,
                           count_initial=False)
    before = state(cm)
    monkeypatch.setattr(SQ, "FIRST_CALL", 5)        # several calls per batch
    real = SQ.S.seq_run
    calls = []

    def interrupted(ctl, *args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(ctl, *args)
    monkeypatch.setattr(SQ.S, "seq_run", interrupted)
    cm._seq.rate = None
    monkeypatch.setattr(SQ, "CALL_S", 0.0)         # the next calls stay small too
    with pytest.raises(KeyboardInterrupt):
        cm.apply(ups, counts_only=True)
    monkeypatch.undo()
    assert len(calls) == 3 and state(cm) == before
    ref = ContinuousMatcher(oracle.graph(), "triangle", backend="cpu", count_initial=False)
    assert np.array_equal(counts(cm, ups, 16)[0], counts(ref, ups, 16)[0])


# ------------------------------------------------------------------ room, threads, mixing
@pytest.mark.parametrize("threads", [1, 2])
def test_rows_move_when_the_edge_array_is_full(monkeypatch, threads):
    """A hub that gains many edges: its row moves again and again, the edge array grows
    between kernel calls (ROOM_* statuses), on the graph and the relevant subgraph. With
    two threads and the batch path worth it from the second look on, the rest goes to
    it only where split mode's first pass applied none of it: a stop for room mid-call
    leaves the call's irrelevant updates past ``C_NEXT`` applied (handing them on was
    "insert of an existing edge" on this valid stream)."""
    looks = []
    if threads > 1:
        monkeypatch.setattr(SQ, "PROBE_CALL", 10**6)
        monkeypatch.setattr(SQ.SequentialPath, "_worth_batch",
                            lambda self, rate, rest: looks.append(1) or len(looks) > 1)
    n, n2 = 1500, 300
    vl = [0] + [1] * (n - 1) + [2] * n2     # label-2 edges: no query edge reads them
    g = wm.Graph.from_edges([0, 1, n], [1, 2, n + 1], n=n + n2, vertex_labels=vl)
    q = Query.parse("a:0-b:1, b-c:1")
    src = np.concatenate([np.zeros(n - 3), np.arange(3, n - 1), np.arange(n + 1, n + n2 - 1)])
    dst = np.concatenate([np.arange(3, n), np.arange(4, n), np.arange(n + 2, n + n2)])
    mix = np.random.default_rng(3).permutation(src.size)       # hub, ring, irrelevant
    both = Updates(src[mix].astype(np.int64), dst[mix].astype(np.int64),
                   np.ones(src.size, np.int8))
    from warpmatch.stream.dynamic import DynamicGraph
    # a DynamicGraph of the caller's: no split mode; the matcher's own graph: split mode
    for slack in ((0.0, 0.25) if threads == 1 else (None,)):
        cm = ContinuousMatcher(g if slack is None else DynamicGraph(g, slack=slack), q,
                               backend="cpu", threads=threads)
        dg = cm._dg
        assert cm._relevant is not None and cm._seq.split == (slack is None)
        v0 = (dg.storage_version, cm._relevant.graph.storage_version)
        p, m, *_ = counts(cm, both, 1000)
        assert (dg.storage_version, cm._relevant.graph.storage_version) != v0
        if threads == 1:
            assert cm._seq.stats["updates"] == len(both)
        assert cm.count == wm.count(cm.graph.snapshot(), q)
        ref = ContinuousMatcher(g, q, backend="cpu", threads=1, sequential=False)
        assert np.array_equal(p, counts(ref, both, 1000)[0])
        assert state(cm) == state(ref)
        looks.clear()


def test_heavy_batch_goes_to_the_batch_path_with_threads(monkeypatch):
    """With two threads, the rest of a batch estimated above PARALLEL_S runs on the batch
    path; the stitched deltas equal one thread's; an error in that rest takes the
    sequential part back and names the update within the whole batch."""
    oracle, ups = known_stream(21, False, 0, 0, invalid=False, B=80)
    g0 = oracle.graph()
    monkeypatch.setattr(SQ, "PARALLEL_S", 0.0)
    monkeypatch.setattr(SQ, "FIRST_CALL", 10)
    monkeypatch.setattr(SQ, "PROBE_CALL", 10)
    cm2 = ContinuousMatcher(g0, "diamond", backend="cpu", threads=2, on_invalid="skip")
    cm1 = ContinuousMatcher(g0, "diamond", backend="cpu", threads=1, sequential=False,
                            on_invalid="skip")
    got, want = counts(cm2, ups, 80), counts(cm1, ups, 80)
    assert all(np.array_equal(x, y) for x, y in zip(got[:3], want[:3]))
    assert 0 < cm2._seq.stats["updates"] < len(ups)
    assert state(cm2) == state(cm1) and cm2.count == cm1.count
    # an invalid update in the part the batch path takes
    cm = ContinuousMatcher(g0, "diamond", backend="cpu", threads=2)
    before = state(cm)
    a, b = next(iter(oracle.edges))
    bad = Updates(np.concatenate([ups.src[:30], [a, a]]), np.concatenate([ups.dst[:30], [b, b]]),
                  np.concatenate([ups.op[:30], [-1, -1]]).astype(np.int8))
    ok = ContinuousMatcher(g0, "diamond", backend="cpu", threads=1, sequential=False)
    with pytest.raises(InputFormatError) as e_ok:
        ok.apply(bad, counts_only=True)
    cm._seq.rate = None
    with pytest.raises(InputFormatError) as e:
        cm.apply(bad, counts_only=True)
    assert str(e.value) == str(e_ok.value)
    assert state(cm) == before and cm.updates_applied == 0


class _Slowed:
    """Record the batch path ``factor`` times slower than it ran (or faster, below 1)."""

    def __init__(self, seq, factor):
        self.real, self.factor, self.sizes = seq.batch_timed, factor, []
        seq.batch_timed = self

    def __call__(self, size, seconds):
        self.sizes.append(size)
        self.real(size, seconds * self.factor)


P, D = SQ.S.PAUSED, SQ.S.DONE


@pytest.mark.parametrize("budget_s, clock, calls", [
    (10.0, True, [(D, 60)]),                    # light: one call
    (0.0, True, [(P, 10), (D, 10), (D, 40)]),   # heavy: pause, the trial's dry run, the rest
    (10.0, False, [(P, 10), (D, 60)])])         # no clock: pause, then on here
def test_first_batch_probe_pauses_only_when_heavy(monkeypatch, budget_s, clock, calls):
    """With threads, a first batch runs in one kernel call unless its first PROBE_CALL
    updates took longer than the rest could afford (PAUSED, after which the rest may go
    to the batch path); without a clock it always pauses there. (The batch path is made
    slower than this one, so the rest comes back after its trial slice.)"""
    oracle, ups = known_stream(24, False, 0, 0, invalid=False, B=60)
    monkeypatch.setattr(SQ, "PARALLEL_S", budget_s)
    monkeypatch.setattr(SQ, "PROBE_CALL", 10)
    if not clock:
        monkeypatch.setattr(SQ, "_CLOCK", (0, 0))
    cm = ContinuousMatcher(oracle.graph(), "triangle", backend="cpu", threads=2,
                           on_invalid="skip")
    ref = ContinuousMatcher(oracle.graph(), "triangle", backend="cpu", threads=1,
                            sequential=False, on_invalid="skip")
    real, seen = SQ.S.seq_run, []

    def counted(ctl, *args):
        status = real(ctl, *args)
        seen.append((status, int(ctl[SQ.S.C_NEXT])))
        return status
    monkeypatch.setattr(SQ.S, "seq_run", counted)
    _Slowed(cm._seq, 1e6)               # the batch path, if tried, is slower: back here
    got, want = counts(cm, ups, 60), counts(ref, ups, 60)
    assert all(np.array_equal(x, y) for x, y in zip(got[:3], want[:3]))
    assert [x for x in seen if x != (D, 0)] == calls     # (the warm-up's empty calls)
    assert state(cm) == state(ref)


@pytest.mark.parametrize("on_invalid", ["error", "skip"])
@pytest.mark.parametrize("slower", [True, False])
def test_untimed_batch_path_gets_a_bounded_trial(monkeypatch, on_invalid, slower):
    """Before the batch path was timed it takes a trial slice of the rest of a heavy batch
    (PROBE_CALL updates here); the rest goes to the faster path. A batch path slower than
    this one (made so) leaves the rest here: several threads cost one slice more than one.
    Deltas, skip reasons and the stores equal one thread's on the batch path."""
    oracle, ups = known_stream(21, False, 3, 2, invalid=on_invalid == "skip", B=80)
    g0 = oracle.graph()
    q = labeled_query(4, False, 3, UNDIRECTED, 1, 1)
    monkeypatch.setattr(SQ, "PARALLEL_S", 0.0)
    monkeypatch.setattr(SQ, "PROBE_CALL", 15)
    kw = dict(backend="cpu", on_invalid=on_invalid)
    cm2 = ContinuousMatcher(g0, q, threads=2, **kw)
    cm1 = ContinuousMatcher(g0, q, threads=1, sequential=False, **kw)
    spy = _Slowed(cm2._seq, 1e6 if slower else 1e-6)
    got, want = counts(cm2, ups, 80), counts(cm1, ups, 80)
    assert all(np.array_equal(x, y) for x, y in zip(got[:3], want[:3]))
    assert got[3] == want[3]
    seq = cm2._seq
    if slower:      # probe, trial, the rest here
        assert spy.sizes == [15] and seq.stats["updates"] == 80 - 15
        assert seq.stats["runs"] == 2
    else:           # probe, trial, the rest on the batch path
        assert spy.sizes == [15, 80 - 30] and seq.stats["updates"] == 15
    assert state(cm2) == state(cm1) and cm2.count == cm1.count


@pytest.mark.parametrize("where", [20, 40, 79])
@pytest.mark.parametrize("slower", [True, False])
def test_error_after_a_trial_changes_nothing(monkeypatch, where, slower):
    """An invalid update under on_invalid="error" in the trial slice (20) or in the part
    after it (40, 79; on either path): nothing of the batch stays applied, the error
    equals the batch path's, and the matcher goes on exactly."""
    oracle, ups = known_stream(22, False, 3, 2, invalid=False, B=80)
    g0 = oracle.graph()
    q = labeled_query(4, False, 3, UNDIRECTED, 1, 1)
    monkeypatch.setattr(SQ, "PARALLEL_S", 0.0)
    monkeypatch.setattr(SQ, "PROBE_CALL", 15)
    src, dst, op, lab = ups.src.copy(), ups.dst.copy(), ups.op.copy(), ups.label.copy()
    touched = {oracle.key(x, y) for x, y in zip(src[:where - 1].tolist(),
                                                 dst[:where - 1].tolist())}
    (a, b), el = next((e, lb) for e, lb in oracle.edges.items() if e not in touched)
    # an untouched edge of G_0 deleted twice: the second delete is invalid
    src[where - 1:where + 1], dst[where - 1:where + 1] = a, b
    op[where - 1:where + 1], lab[where - 1:where + 1] = -1, el
    bad = Updates(src, dst, op, lab)
    kw = dict(backend="cpu")
    ok = ContinuousMatcher(g0, q, threads=1, sequential=False, **kw)
    with pytest.raises(InputFormatError) as e_ok:
        ok.apply(bad, counts_only=True)
    cm = ContinuousMatcher(g0, q, threads=2, **kw)
    _Slowed(cm._seq, 1e6 if slower else 1e-6)
    dry, real_dry = [], cm._seq.dry_run
    cm._seq.dry_run = lambda u, o: dry.append(real_dry(u, o)) or dry[-1]
    before = state(cm)
    with pytest.raises(InputFormatError) as e:
        cm.apply(bad, counts_only=True)
    assert len(dry) == 1 and (dry[0] is None) == (where == 20)     # the trial slice's
    assert str(e.value) == str(e_ok.value)
    assert state(cm) == before and cm.updates_applied == 0
    assert cm._seq.stats["updates"] == 0
    ref = ContinuousMatcher(g0, q, threads=1, sequential=False, **kw)
    got, want = counts(cm, ups, 80), counts(ref, ups, 80)
    assert all(np.array_equal(x, y) for x, y in zip(got[:3], want[:3]))
    assert state(cm) == state(ref)


def test_overflow_after_a_trial_changes_nothing(monkeypatch):
    """An overflow in the part after the trial slice takes back that part, the slice the
    batch path applied (by the dry run's record) and the probe."""
    oracle, ups = known_stream(23, False, 3, 2, invalid=False, B=80)
    q = labeled_query(4, False, 3, UNDIRECTED, 1, 1)
    monkeypatch.setattr(SQ, "PARALLEL_S", 0.0)
    monkeypatch.setattr(SQ, "PROBE_CALL", 15)
    cm = ContinuousMatcher(oracle.graph(), q, backend="cpu", threads=2)
    _Slowed(cm._seq, 1e6)
    before = state(cm)
    real, calls = SQ.S.seq_run, []

    def overflowing(ctl, *args):        # calls: the probe, the dry run, the rest
        calls.append(1)
        status = real(ctl, *args)
        return SQ.S.OVERFLOW if len(calls) == 3 else status
    monkeypatch.setattr(SQ.S, "seq_run", overflowing)
    with pytest.raises(OverflowError):
        cm.apply(ups, counts_only=True)
    assert len(calls) == 3
    monkeypatch.undo()
    assert state(cm) == before and cm._seq.stats["updates"] == 0 and cm.updates_applied == 0


def test_paths_alternate_listing_counting_and_new_vertices():
    """Listing batches and batches with new vertices take the batch path; the counting
    batches in between take the sequential path; the live count stays exact."""
    oracle, ups = known_stream(31, False, 3, 0, invalid=False, B=90)
    q = labeled_query(9, False, 3, UNDIRECTED, 1, 0)
    g0 = oracle.graph()
    cm = ContinuousMatcher(g0, q, backend="cpu", threads=1)
    ref = ContinuousMatcher(g0, q, backend="cpu", threads=1, sequential=False)
    new = Updates(np.array([9999, 9999]), np.array([100, 103]), np.array([1, 1], np.int8),
                  new_vertex_ids=np.array([9999]), new_vertex_labels=np.array([1], np.int32))
    for i, lo in enumerate(range(0, 90, 15)):
        part = ups.slice(lo, lo + 15)
        listing = i % 3 == 1
        d, r = cm.apply(part, counts_only=not listing), ref.apply(part, counts_only=not listing)
        assert np.array_equal(d.plus_counts, r.plus_counts)
        assert np.array_equal(d.minus_counts, r.minus_counts)
        if i == 2:
            cm.apply(new, counts_only=True), ref.apply(new, counts_only=True)
    assert cm.count == ref.count == wm.count(cm.graph.snapshot(), q)
    assert cm._seq.stats["updates"] == 60
    assert state(cm) == state(ref)


def test_sequential_can_be_turned_off_and_is_cpu_only():
    g = wm.Graph.from_edges([0, 1], [1, 2])
    assert ContinuousMatcher(g, "triangle", backend="cpu", sequential=False) \
        ._sequential_path() is None
    assert ContinuousMatcher(g, "triangle", backend="cpu")._sequential_path() is not None


def test_path_choice_with_threads():
    """One thread: always this path. Several: never a whole batch to an untimed batch path
    (a bounded trial slice first); once timed, the faster per update is taken (above
    PARALLEL_S), the other again every REPROBE."""
    g = wm.Graph.from_edges([0, 1], [1, 2])
    seq = ContinuousMatcher(g, "triangle", backend="cpu")._sequential_path()
    assert not seq.prefers_batch(10**6, 1) and not seq.prefers_batch(10**6, 4)  # no rate yet
    seq.rate = 1e-6
    assert not seq.prefers_batch(int(SQ.PARALLEL_S / 1e-6) - 1, 4)   # light: stay
    # never timed: tried only far above PARALLEL_S (a first rate may be a cold one)
    assert not seq.prefers_batch(int(SQ.UNTIMED_FACTOR * SQ.PARALLEL_S / 1e-6) - 1, 4)
    heavy = int(SQ.PARALLEL_S / 1e-6) * 10
    assert not seq.prefers_batch(heavy, 1)
    # unmeasured: the batch begins here and the matcher tries a bounded slice
    assert not seq.prefers_batch(heavy, 4)
    assert seq.trial_size(10**9) == int(SQ.PARALLEL_S / 1e-6)
    assert seq.trial_size(10) == 10 and seq.trial_size(1) == 1
    seq.batch_timed(100, 100 * 0.5e-6)                                # measured faster
    picks = [seq.prefers_batch(heavy, 4) for _ in range(2 * SQ.REPROBE)]
    assert picks.count(False) == 2 and picks.count(True) == 2 * SQ.REPROBE - 2
    seq.batch_timed(100, 100 * 10e-6)                                 # now slower on average
    assert seq.batch_rate > seq.rate and not seq.prefers_batch(heavy, 4)


def test_split_mode_only_below_its_memory_cap(monkeypatch):
    oracle, _ = known_stream(2, False, 3, 0, invalid=False)
    q = labeled_query(3, False, 3, UNDIRECTED, 1, 0)
    assert ContinuousMatcher(oracle.graph(), q, backend="cpu")._seq.split
    monkeypatch.setattr(SQ, "SPLIT_MAX_BYTES", 0)
    cm = ContinuousMatcher(oracle.graph(), q, backend="cpu")
    assert cm._relevant is not None and not cm._seq.split


def test_packed_arguments_are_reused_until_something_else_edits_the_graph(monkeypatch):
    """The kernel's arguments are packed once and reused batch after batch; a listing
    batch (the batch path edits the stores), the edge set's or a store's growth pack them
    again, and every count stays the batch path's. The kernel's sums are ``added`` and
    ``removed``."""
    oracle, ups = known_stream(41, False, 3, 0, invalid=True, B=120)
    q = labeled_query(9, False, 3, UNDIRECTED, 1, 0)
    g0 = oracle.graph()
    kw = dict(backend="cpu", threads=1, on_invalid="skip")
    cm = ContinuousMatcher(g0, q, **kw)
    ref = ContinuousMatcher(g0, q, sequential=False, **kw)
    seq = cm._seq
    packs = []
    real = SQ.SequentialPath._args

    def counting(self, *a):
        packs.append(1)
        return real(self, *a)
    monkeypatch.setattr(SQ.SequentialPath, "_args", counting)
    for lo in range(0, 40, 10):               # counting batches only: no repacking
        d, r = cm.apply(ups.slice(lo, lo + 10), True), ref.apply(ups.slice(lo, lo + 10), True)
        assert np.array_equal(d.plus_counts, r.plus_counts)
        assert (d.added, d.removed) == (int(d.plus_counts.sum()), int(d.minus_counts.sum()))
    assert packs == [] and seq.stats["runs"] == 4
    cm.apply(ups.slice(40, 50)), ref.apply(ups.slice(40, 50))      # listing: batch path
    d, r = cm.apply(ups.slice(50, 60), True), ref.apply(ups.slice(50, 60), True)
    assert np.array_equal(d.plus_counts, r.plus_counts) and len(packs) == 1
    if seq.split:                             # the edge set grows: its arrays are new
        seq.edgeset.grow()
        d, r = cm.apply(ups.slice(60, 70), True), ref.apply(ups.slice(60, 70), True)
        assert np.array_equal(d.minus_counts, r.minus_counts) and len(packs) == 2
    eg = cm._relevant.graph if cm._relevant is not None else cm._dg
    eg._out.ensure_edges(10 * eg._out.nbr.shape[0])    # new edge arrays
    eg.storage_version += 1
    n = len(packs)
    d, r = cm.apply(ups.slice(70, 120), True), ref.apply(ups.slice(70, 120), True)
    assert np.array_equal(d.plus_counts, r.plus_counts) and len(packs) == n + 1
    assert cm.count == ref.count and state(cm) == state(ref)


def test_kernels_are_called_once_on_no_update_while_the_matcher_is_built(monkeypatch):
    """numba loads (or compiles) the kernels during construction, not in the first batch:
    one call of each on an empty run (map_updates once per label type it is given), which
    leaves every store, count and mask as it was."""
    oracle, ups = known_stream(12, False, 3, 0, invalid=False, B=30)
    q = labeled_query(9, False, 3, UNDIRECTED, 1, 0)
    runs, maps = [], []
    real_run, real_map = SQ.S.seq_run, SQ.map_updates

    def run(ctl, i1, *args):
        runs.append(int(i1))
        return real_run(ctl, i1, *args)

    def mapping(src, *args):
        maps.append(len(src))
        return real_map(src, *args)
    monkeypatch.setattr(SQ.S, "seq_run", run)
    monkeypatch.setattr(SQ, "map_updates", mapping)
    cm = ContinuousMatcher(oracle.graph(), q, backend="cpu", threads=1)
    assert runs == [0] and maps == [0, 0]
    fresh = ContinuousMatcher(oracle.graph(), q, backend="cpu", threads=1, sequential=False)
    assert state(cm) == state(fresh)
    assert np.array_equal(counts(cm, ups, 10)[0], counts(fresh, ups, 10)[0])
    assert runs[1:] and all(r > 0 for r in runs[1:])


# ------------------------------------------------------------------ path plans
@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), directed=st.booleans(), vlab=st.sampled_from([0, 2]),
       elab=st.sampled_from([0, 2]), batch=st.sampled_from([1, 64]))
def test_path_plans_against_oracle(seed, directed, vlab, elab, batch):
    """The house's roof plans count their last two depths as one path
    (stream._cpu_group.path_count); its tally array is zero again after every task."""
    from warpmatch.stream._cpu_rows import path_plans
    oracle, ups = known_stream(seed, directed, vlab, elab, n=10, m=30)
    text = ("a->b, b->c, d->c, a->d, a->e, e->b" if directed
            else "a-b, b-c, c-d, d-a, a-e, b-e")
    q = with_labels(Query.parse(text), seed, vlab, elab, vertex=2, directed=directed)
    kw = dict(backend="cpu", on_invalid="skip", threads=1)
    cm_s = ContinuousMatcher(oracle.graph(), q, **kw)
    assert path_plans(cm_s.plans(False)).any()
    got = counts(cm_s, ups, batch)
    assert cm_s._sequential_path().stats["updates"] == len(ups)
    sets, valid = replay(oracle, ups, q, "embeddings", False)
    for i in range(len(ups)):
        plus, minus = sets[i + 1] - sets[i], sets[i] - sets[i + 1]
        assert (got[0][i], got[1][i]) == (len(plus), len(minus)), i
    assert not cm_s.engine._cnts.any()


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("text,directed", [
    ("a-b, b-c, c-a, a-d, b-d, c-d", False),
    ("a-b, a-c, a-d, a-e, b-c, b-d, b-e, c-d, c-e, d-e", False),
    ("a-b, b-c, c-d, d-a, a-c, b-d, d-e, c-e", False),
    ("a->b, b->c, a->c, a->d, b->d, c->d", True)])
def test_dense_queries_with_three_backward_rows(seed, text, directed):
    """Cliques on a dense stream: the endpoints' rows intersected into the tags once per
    update (_cpu_group._intersect), with edge labels and vertex labels, against the
    oracle and the batch path."""
    for vlab, elab in ((0, 0), (2, 2)):
        oracle, ups = known_stream(seed, directed, vlab, elab, n=11, m=40, B=80)
        q = with_labels(Query.parse(text), seed, vlab, elab, directed=directed)
        kw = dict(mode="embeddings", backend="cpu", on_invalid="skip", threads=1)
        got = counts(ContinuousMatcher(oracle.graph(), q, **kw), ups, 7)
        batch = counts(ContinuousMatcher(oracle.graph(), q, sequential=False, **kw), ups, 7)
        assert all(np.array_equal(a, b) for a, b in zip(got[:3], batch[:3]))
        sets, valid = replay(oracle, ups, q, "embeddings", False)
        want = [(len(sets[i + 1] - sets[i]), len(sets[i] - sets[i + 1]))
                for i in range(len(ups))]
        assert list(zip(got[0].tolist(), got[1].tolist())) == want
        assert sum(p + m for p, m in want) > 0 or vlab       # (the unlabeled runs match)
