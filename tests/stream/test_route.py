"""A GPU engine's batches split between the host's sequential path and the device.

Checked without a GPU (tests/gpu/test_stream_route_gpu.py runs the real engine):

- the edit log (stream/_editlog.py): what it keeps, when it gives up;
- that it names every storage row the batch path's apply and the sequential path's
  in-place runs (kept, taken back, rows moved to a grown array) changed: a consumer that
  copies the rows at a mark finds every row it is not told about unchanged;
- the matcher's per-batch choice (stream/_route.py) with a stand-in device engine (the CPU
  batch engine with a host engine, as GpuDeltaEngine has one, and that consumer
  inside): random choices give the oracle's per-update counts and the batch path's,
  and both paths' times reach the route;
- DeviceRoute's rules: the first batches, the predicted faster path, the re-probe.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpmatch.errors import InputFormatError
from warpmatch.query.model import Query
from warpmatch.stream import _editlog as EL
from warpmatch.stream import _route as R
from warpmatch.stream import matcher as M
from warpmatch.stream.cpu import CpuDeltaEngine
from warpmatch.stream.dynamic import DynamicGraph
from warpmatch.stream.matcher import ContinuousMatcher
from warpmatch.stream.types import Updates

from test_matcher import replay, with_labels
from test_sequential import UNDIRECTED, DIRECTED, counts, known_stream

SETTINGS = dict(max_examples=15, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------ the log itself
def test_the_log_keeps_nothing_before_a_mark_and_unites_what_follows():
    log = EL.EditLog()
    log.record(np.array([1]))
    assert not log.on and log.since(0) is None
    m = log.mark()
    assert log.since(m).tolist() == []
    log.record(np.array([7, 3]))
    log.record(np.array([3, 9]))
    assert log.since(m).tolist() == [3, 7, 9]
    assert log.since(m - 1) is None and log.since(None) is None     # not this mark
    m2 = log.mark()
    assert log.since(m2).tolist() == [] and log.since(m) is None


def test_the_log_gives_up_on_unknown_rows_and_on_too_many(monkeypatch):
    log = EL.EditLog()
    m = log.mark()
    log.record(None)
    log.record(np.array([1]))
    assert log.since(m) is None
    m = log.mark()
    assert log.since(m).tolist() == []
    monkeypatch.setattr(EL, "MAX_ROWS", 5)
    monkeypatch.setattr(EL, "JOIN_AT", 2)
    for i in range(3):
        log.record(np.array([i]))
    assert log.since(m).tolist() == [0, 1, 2]
    log.record(np.arange(10, 13))
    assert log.since(m) is None


def test_a_kept_record_is_a_copy():
    log = EL.EditLog()
    m = log.mark()
    rows = np.array([4, 5])
    log.record(rows)
    rows[:] = 0
    assert log.since(m).tolist() == [4, 5]


# ------------------------------------------------- a consumer of the log, and the route
class RowCopy:
    """What the GPU engine keeps of the storage (row index and rows), refreshed from the
    graph's edit log at every batch; checks that a row the log does not name is as
    copied."""

    def __init__(self) -> None:
        self.mark: int | None = None
        self.rows: dict = {}
        self.checked = 0                # rows found unchanged on the log's word

    @staticmethod
    def _row(st, v: int) -> tuple:
        s, d = int(st.start[v]), int(st.deg[v])
        lab = st.elab[s:s + d].tolist() if st.elab.size else []
        return s, d, st.nbr[s:s + d].tolist(), lab

    def sync(self, dg) -> None:
        edited = dg.edits.since(self.mark)
        if edited is not None:
            named = set(edited.tolist())
            for (i, v), row in self.rows.items():
                if v not in named:
                    assert self._row(dg._stores[i], v) == row, (i, v)
                    self.checked += 1
        self.mark = dg.edits.mark()
        self.rows = {(i, v): self._row(st, v) for i, st in enumerate(dg._stores)
                     for v in range(dg.n)}


class StandIn(CpuDeltaEngine):
    """The CPU batch engine in the GPU engine's place: a one-thread host engine for the
    sequential path (filters shared), and a copy of the rows kept as the device keeps
    its own."""

    def __init__(self, **_: object) -> None:
        super().__init__(threads=1)
        self.host = CpuDeltaEngine(threads=1)
        self._filters = self.host._filters
        self.copy = RowCopy()
        self.runs = 0

    def attach(self, graph) -> None:
        super().attach(graph)
        self.host.attach(graph)

    def run(self, view, plans, want_matches):
        self.copy.sync(self.graph)
        self.runs += 1
        return super().run(view, plans, want_matches)


#: rows the edit log vouched for (not named, checked unchanged), per example of the test below
_VOUCHED: list[int] = []


def test_random_routes_give_the_oracles_counts_and_the_log_names_every_changed_row():
    _VOUCHED.clear()
    _random_routes()
    # not per example: on a small graph a batch may touch every vertex, and then the log
    # names every row and vouches for none (seed 0, 12 vertices, batches of 16)
    assert sum(_VOUCHED) > 0, "no example let the edit log vouch for a row"


@settings(**SETTINGS)
@given(seed=st.integers(0, 10**6), directed=st.booleans(), vlab=st.sampled_from([0, 2]),
       elab=st.sampled_from([0, 2]), qi=st.integers(0, 4), batch=st.sampled_from([1, 3, 16]),
       on_invalid=st.sampled_from(["skip", "error"]))
def _random_routes(seed, directed, vlab, elab, qi, batch, on_invalid):
    oracle, ups = known_stream(seed, directed, vlab, elab, invalid=on_invalid == "skip")
    texts = DIRECTED if directed else UNDIRECTED
    q = with_labels(Query.parse(texts[qi]), seed, vlab, elab, directed=directed)
    g0 = oracle.graph()
    rng = np.random.default_rng(seed)
    kw = dict(backend="cpu", on_invalid=on_invalid)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(R.DeviceRoute, "device_first", lambda self, size: bool(rng.random() < 0.5))
        mp.setattr(M, "resolve_delta_engine", lambda backend, **kw: StandIn())
        # no slack: rows outgrow their room and move (the log must name them)
        cm = ContinuousMatcher(DynamicGraph(g0, slack=0.0), q, **kw)
        assert cm._route is not None and cm._sequential_path().engine is cm.engine.host
        got = counts(cm, ups, batch)
    ref = counts(ContinuousMatcher(g0, q, sequential=False, **kw), ups, batch)
    for a, b in zip(got[:3], ref[:3]):
        assert np.array_equal(a, b)
    assert got[3] == ref[3]
    sets, _valid = replay(oracle, ups, q, "embeddings", False)
    for i in range(len(ups)):
        plus, minus = sets[i + 1] - sets[i], sets[i] - sets[i + 1]
        assert (got[0][i], got[1][i]) == (len(plus), len(minus)), i
    route = cm._route
    n_batches = -(-len(ups) // batch)
    assert route.batches["sequential"] + route.batches["device"] == n_batches
    assert cm.engine.runs >= route.batches["device"]
    _VOUCHED.append(cm.engine.copy.checked)   # the log vouched for rows, and they held


def test_an_update_taken_back_leaves_its_moved_rows_named(monkeypatch):
    """Under "error", an invalid update makes the sequential path take its run back;
    rows it moved meanwhile stay moved, and the log names them."""
    oracle, ups = known_stream(5, False, 0, 0, invalid=False)
    g0 = oracle.graph()
    monkeypatch.setattr(R.DeviceRoute, "device_first", lambda self, size: False)
    monkeypatch.setattr(M, "resolve_delta_engine", lambda backend, **kw: StandIn())
    dg = DynamicGraph(g0, slack=0.0)
    cm = ContinuousMatcher(dg, "triangle", backend="cpu", on_invalid="error")
    copy = RowCopy()
    copy.sync(dg)
    bad = ups.slice(0, 20)
    src, dst = bad.src.copy(), bad.dst.copy()
    dst[-1] = src[-1]                   # a self-loop at the end
    with pytest.raises(InputFormatError):
        cm.apply(Updates(src, dst, bad.op, bad.label), counts_only=True)
    copy.sync(dg)                       # asserts every unnamed row is as copied
    cm.apply(ups.slice(0, 20), counts_only=True)
    copy.sync(dg)


# ------------------------------------------------------------------ the route's rules
def test_first_batches_go_by_size_then_by_the_sequential_estimate():
    r = R.DeviceRoute()
    assert not r.device_first(R.FIRST_DEVICE_SIZE - 1)
    assert r.device_first(R.FIRST_DEVICE_SIZE)
    r.timed("sequential", 10, 10 * 20e-6)       # 20 µs an update: 1 ms at 50 updates
    assert not r.device_first(40)
    assert r.device_first(60)


def test_the_faster_predicted_path_and_a_reprobe_of_the_other():
    r = R.DeviceRoute()
    for size in (1, 4, 16, 64, 1024):
        r.timed("sequential", size, 30e-6 + size * 50e-6)
        r.timed("device", size, 2e-3 + size * 5e-6)
    # sequential: 30 µs + 50 µs/update; device: 2 ms + 5 µs/update -> even at ~44
    assert not r.device_first(1)
    assert r.device_first(400)
    assert r.predict("device", 1024) == pytest.approx(2e-3 + 1024 * 5e-6)
    assert r.predict("device", 300) == pytest.approx(2e-3 + 300 * 5e-6)    # between buckets
    # within RETRY of each other: the slower one once every REPROBE such batches
    picks = [r.device_first(30) for _ in range(R.REPROBE)]
    assert picks.count(True) == 1
    # far apart: never
    assert not any(r.device_first(1) for _ in range(3 * R.REPROBE))


def test_a_path_timed_at_one_size():
    """Above every timed size the sequential path is proportional and the device at its
    largest batch's time (so that it gets tried there); below, both proportional."""
    seq, dev = R._Cost(), R._Cost(fixed=True)
    for c in (seq, dev):
        c.add(8, 4e-3)
        c.add(8, 4e-3)
    assert seq.predict(16) == pytest.approx(8e-3) and seq.predict(1) == pytest.approx(0.5e-3)
    assert dev.predict(4096) == pytest.approx(4e-3) and dev.predict(2) == pytest.approx(1e-3)
    assert dev.predict(12) == pytest.approx(6e-3)      # its own bucket: in proportion


def test_a_bucket_follows_its_recent_batches():
    c = R._Cost()
    c.add(100, 1.0)
    for _ in range(10):
        c.add(100, 0.1)
    assert c.predict(100) == pytest.approx(0.1, rel=1e-2)


def test_an_untimed_sequential_path_never_gets_a_large_batch():
    """Even once the device was timed: a 4-cycle at a hub can take milliseconds an
    update on the host (an H200 run gave the host a square's first 4,096-update batch:
    16 s mean latency)."""
    r = R.DeviceRoute()
    r.timed("device", 4096, 0.3)
    assert r.device_first(R.FIRST_DEVICE_SIZE) and not r.device_first(1)
    r.timed("sequential", 1, 2e-3)
    assert r.device_first(R.FIRST_DEVICE_SIZE) and r.device_first(16)


def test_large_batches_are_judged_by_large_batches():
    """Small device batches with a steep, noisy slope must not keep batches of 4,096 on
    the host (about 18 µs an update there, from an H200 run's 54k upd/s: 75 ms) once the
    device was timed at that size (about 40 ms, from fixed-4096's 103k upd/s), nor
    before: the device is tried at a size above its timed ones."""
    r = R.DeviceRoute()
    r.timed("sequential", 1, 18e-6)
    r.timed("device", 60, 2e-3)
    r.timed("device", 120, 5e-3)          # 50 µs an update between the two: noise
    assert r.device_first(4096)
    r.timed("device", 4096, 40e-3)
    assert r.device_first(4096) and r.device_first(3000) and not r.device_first(20)


def test_the_gpu_engine_lends_a_one_thread_host_engine_unless_told_not_to():
    pytest.importorskip("numba")
    from warpmatch.stream.gpu import GpuDeltaEngine
    eng = GpuDeltaEngine()
    assert eng.sequential and eng.host.threads == 1 and eng._filters is eng.host._filters
    off = GpuDeltaEngine(sequential=False)
    assert not off.sequential and off.host is None
