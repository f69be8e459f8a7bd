"""Batches that close on size or on time (``max_latency``): a slow producer's updates are
handed on without waiting for a full batch, and the results never depend on the cut.

No test measures time: each producer stops, gated on an event, until the consumer has
received the batch that ``max_latency`` must close; a batcher that waited for a full batch
would never get there (each wait is bounded, so such a failure is a failure, not a hang).
"""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import warpmatch as wm
from warpmatch.stream.batching import parse_duration, stream_batches
from warpmatch.stream.updates import iter_update_batches

WAIT = 30.0          # seconds a gated producer waits before giving up (never reached)


def gated(first, then, go: threading.Event):
    """Yield ``first``, wait until ``go`` is set, then yield ``then``."""
    yield from first
    if not go.wait(WAIT):
        raise AssertionError("the first updates were never handed on")
    yield from then


def test_parse_duration():
    assert parse_duration("1ms") == pytest.approx(1e-3)
    assert parse_duration("250us") == pytest.approx(2.5e-4)
    assert parse_duration("2s") == 2.0 and parse_duration(0.5) == 0.5
    for bad in ("fast", "-1ms", "1 hour"):
        with pytest.raises(ValueError, match="duration"):
            parse_duration(bad)


def test_a_slow_producer_is_not_kept_waiting():
    go = threading.Event()
    first = [(0, 1, "+"), (1, 2, "+"), (2, 0, "+")]
    then = [(2, 3, "+"), (3, 0, "+")]
    sizes = []
    for b in stream_batches(gated(first, then, go), 100, max_latency="5ms"):
        sizes.append(len(b))
        go.set()
    assert sizes == [3, 2]


def test_full_batches_still_close_on_size():
    items = [(i, i + 1, "+") for i in range(10)]
    assert [len(b) for b in stream_batches(iter(items), 4, max_latency=10.0)] == [4, 4, 2]
    assert [len(b) for b in stream_batches(iter(items), 4)] == [4, 4, 2]


def test_declarations_ride_along():
    g = wm.Graph.from_edges([0, 1], [1, 2], vertex_labels=[0, 0, 0])
    go = threading.Event()
    first = [("v", 9, 7), (9, 0, "+")]
    then = [(9, 1, "+")]
    cm = wm.ContinuousMatcher(g, "a:7-b, b-c, c-a", mode="subgraphs", backend="cpu")
    out = []
    for d in cm.apply_stream(gated(first, then, go), 100, max_latency=0.005):
        out.append(d.plus_counts.tolist())
        go.set()
    assert out == [[0], [1]] and cm.count == 1


def test_results_do_not_depend_on_where_batches_close():
    rng = np.random.default_rng(3)
    g = wm.Graph.from_edges(rng.integers(0, 30, 120), rng.integers(0, 30, 120), n=30,
                            warn=False)
    g0, ups = wm.make_stream(g, 0.3, 0.1, seed=2)
    items = list(zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist()))
    half = len(items) // 2
    go = threading.Event()
    want = wm.ContinuousMatcher(g0, "square", backend="cpu").apply(ups, counts_only=True)
    cm = wm.ContinuousMatcher(g0, "square", backend="cpu")
    got = []
    for d in cm.apply_stream(gated(items[:half], items[half:], go), 1000, max_latency=0.005,
                             counts_only=True):
        got.append(d.plus_counts - d.minus_counts)
        go.set()
    assert len(got) == 2
    assert np.array_equal(np.concatenate(got), want.plus_counts - want.minus_counts)


def test_stdin_text_closes_batches_on_time():
    """A real pipe, as ``producer | warpmatch stream ... --max-latency``."""
    r, w = os.pipe()
    go = threading.Event()

    def producer():
        with os.fdopen(w, "wb", buffering=0) as fh:
            fh.write(b"# a comment\n1 2 +\n2 3 +\n3 1 +\n")
            if go.wait(WAIT):
                fh.write(b"3 4 +\n4 1 +\n")
    th = threading.Thread(target=producer, daemon=True)
    th.start()
    batches = []
    with os.fdopen(r, "rb") as fh:
        for b in iter_update_batches("-", 100, stream=fh, max_latency=0.005):
            batches.append(b)
            go.set()
    th.join(WAIT)
    assert [len(b) for b in batches] == [3, 2]
    assert batches[1].line.tolist() == [5, 6]        # line numbers stay global
    assert batches[0].src.tolist() == [1, 2, 3]


def test_cli_max_latency(tmp_path):
    import json

    from click.testing import CliRunner

    from warpmatch.cli import cli
    g = tmp_path / "g.txt"
    g.write_text("0 1\n1 2\n2 3\n")
    ups = "0 2 +\n1 3 +\n0 3 +\n"
    (tmp_path / "ups.txt").write_text(ups)
    run = CliRunner().invoke
    res = run(cli, ["stream", str(g), "triangle", "-", "--max-latency", "1ms", "--json",
                    "--backend", "cpu"], input=ups)
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout.strip().splitlines()[-1])
    assert d["final_count"] == 24 and d["max_latency_seconds"] == pytest.approx(1e-3)
    res = run(cli, ["stream", str(g), "triangle", str(tmp_path / "ups.txt"),
                    "--max-latency", "1ms"])
    assert res.exit_code == 2 and "stdin" in res.output
    res = run(cli, ["stream", str(g), "triangle", "-", "--max-latency", "soon"], input=ups)
    assert res.exit_code == 2 and "not a duration" in res.output


def test_a_consumer_that_stops_early_releases_the_reader():
    """The reader thread ends once the consumer is gone, even with its queue full."""
    import gc

    def endless():
        i = 0
        while True:
            yield (i, i + 1, "+")
            i += 1
    before = {t for t in threading.enumerate() if t.name == "warpmatch-batches"}
    it = stream_batches(endless(), 10, max_latency=1.0)
    assert len(next(it)) == 10
    it.close()
    del it
    gc.collect()
    left = [t for t in threading.enumerate() if t.name == "warpmatch-batches"
            and t not in before]
    for t in left:
        t.join(WAIT)
    assert not any(t.is_alive() for t in left)


def test_zero_max_latency_hands_on_what_has_arrived():
    # max_latency=0: a batch is whatever the reader has (how much depends on the threads'
    # timing); it never waits for more, so the gated producer gets past its gate
    go = threading.Event()
    first = [(0, 1, "+"), (1, 2, "+"), (2, 0, "+")]
    then = [(2, 3, "+"), (3, 0, "+")]
    sizes = []
    for b in stream_batches(gated(first, then, go), 100, max_latency=0):
        sizes.append(len(b))
        if sum(sizes) >= 3:
            go.set()
    assert sum(sizes) == 5 and min(sizes) >= 1
    # and the deltas are those of one batch of all five
    g = wm.Graph.from_edges([0, 1, 2, 3], [4, 4, 4, 4])
    want = wm.ContinuousMatcher(g, "triangle", backend="cpu").apply(first + then)
    cm = wm.ContinuousMatcher(g, "triangle", backend="cpu")
    go = threading.Event()
    got = []
    for d in cm.apply_stream(gated(first, then, go), 100, max_latency=0):
        got.append(d.plus_counts - d.minus_counts)
        if sum(map(len, got)) >= 3:
            go.set()
    assert np.array_equal(np.concatenate(got), want.plus_counts - want.minus_counts)
    assert cm.latency.summary()["updates"] == 5


@pytest.mark.parametrize("routed", [False, True])
def test_college_msg_deltas_do_not_depend_on_how_batches_close(data_path, routed):
    """CollegeMsg's first 2,000 updates from a producer that pauses now and then, cut by
    ``max_latency`` and ``batch_size`` into irregular batches: every update's deltas are
    those of one batch of everything, on the CPU engine and on a routed engine (the
    stand-in of tests/stream/test_route.py, each batch to the host path or the batch
    path at random)."""
    import time

    from test_emptied_vertices import college_msg_prefix
    from test_route import StandIn

    from warpmatch.stream import _route as R
    from warpmatch.stream import matcher as M

    g0, ups = college_msg_prefix(data_path, 2000)
    items = list(zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist()))
    want = wm.ContinuousMatcher(g0, "triangle", backend="cpu", sequential=False).apply(
        ups, counts_only=True)
    rng = np.random.default_rng(7)

    def producer():
        for item in items:
            if rng.random() < 0.01:
                time.sleep(0.002)
            yield item

    for max_latency, batch in ((0.0, 4096), (0.0005, 64), (0.002, 7)):
        with pytest.MonkeyPatch.context() as mp:
            if routed:
                mp.setattr(R.DeviceRoute, "device_first",
                           lambda self, size: bool(rng.random() < 0.5))
                mp.setattr(M, "resolve_delta_engine", lambda backend, **kw: StandIn())
            cm = wm.ContinuousMatcher(g0, "triangle", backend="cpu")
            got = list(cm.apply_stream(producer(), batch, max_latency=max_latency,
                                       counts_only=True))
        assert sum(len(d) for d in got) == len(items) and len(got) > 1
        assert np.array_equal(np.concatenate([d.plus_counts for d in got]), want.plus_counts)
        assert np.array_equal(np.concatenate([d.minus_counts for d in got]),
                              want.minus_counts)
        assert cm.count == want.added - want.removed + cm.initial_count
        if routed:
            assert min(cm.paths.values()) > 0


@pytest.mark.parametrize("max_latency", [0, "1ms"])
def test_batches_grow_to_full_size_when_matching_falls_behind(max_latency):
    """Back-pressure: a producer of single updates faster than the matcher. The reader holds
    at most max(2 * batch_size, PENDING_MIN) updates ahead of the batches (then the producer
    waits), and each batch after the matcher was busy takes all that waited: full batches,
    not one batch per handful of pieces (a queue of 64 pieces gave batches of 64 here)."""
    from warpmatch.stream.batching import PENDING_MIN

    B, N = 1000, 7_500
    cap = max(2 * B, PENDING_MIN)
    made = [0]                 # updates the reader has taken in (asked for the next one)
    taken = [0]                # updates handed on in batches
    ahead = []                 # made - taken, seen by the producer before each update

    def producer():
        for i in range(N):
            ahead.append(made[0] - taken[0])
            yield (i % 97, (i * 7 + 1) % 97 + 97, "+")
            made[0] += 1       # runs when the reader asks for the next: this one is held

    def caught_up() -> bool:  # the reader is full (or the producer done): a slow matcher
        return made[0] >= N or made[0] - taken[0] >= cap

    sizes = []
    it = stream_batches(producer(), B, max_latency=max_latency)
    for b in it:
        sizes.append(len(b))
        taken[0] += len(b)
        for _ in range(int(WAIT / 0.001)):   # the matcher is busy until the reader is full
            if caught_up():
                break
            threading.Event().wait(0.001)
        else:
            raise AssertionError("the reader never filled up")
    assert sum(sizes) == N
    # after the first batch (whatever had arrived when it closed), every batch is full
    # but the last
    assert all(s == B for s in sizes[1:-1]), sizes
    assert len(sizes) <= N // B + 2
    # and the producer was never further ahead than the reader's room (cap) plus what a
    # batch took from it and has not handed on yet (at most cap, plus a remainder < B)
    assert max(ahead) <= 2 * cap + B + 1
