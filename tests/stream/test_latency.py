"""Per-update response time and latency (``LatencyStats``, ``apply_stream``'s
``latency``, ``warpmatch stream --json``): the histogram's quantiles against numpy's, and
that every update of a stream is counted once, from its own arrival.

No test measures time: the times are fed in (the histogram), or only their order and
counts are checked (a gated producer, as in test_batching.py).
"""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.stream.batching import stream_batches
from warpmatch.stream.latency import PER_DECADE, LatencyStats

WAIT = 30.0
STEP = 10.0 ** (1.0 / PER_DECADE)       # one bin's width, as a ratio


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1e-6, 100.0), min_size=1, max_size=300),
       st.lists(st.floats(0.0, 1e-3), min_size=1, max_size=300))
def test_quantiles_are_exact_to_one_bin(waits, work):
    # each update arrives ``wait`` before its batch starts; the batch takes ``work``
    s = LatencyStats()
    resp, lat = [], []
    for i, w in enumerate(waits):
        started = 1000.0 + i
        done = started + work[i % len(work)]
        arrival = started - w
        s.record(np.array([arrival]), started, done)
        resp.append(started - arrival)
        lat.append(done - arrival)
    d = s.summary()
    for key, xs in (("response", resp), ("latency", lat)):
        xs = np.sort(np.array(xs))
        for q, name in ((0.5, "p50"), (0.99, "p99")):
            true = xs[max(1, int(np.ceil(q * xs.size))) - 1]     # the rank-th smallest
            got = d[key][name]
            assert true * (1 - 1e-9) <= got <= true * STEP * (1 + 1e-9), (key, q, true, got)
        assert d[key]["max"] == pytest.approx(xs.max())
        assert d[key]["mean"] == pytest.approx(xs.mean())
    assert d["updates"] == d["batches"] == len(waits)


def test_uniform_record_equals_the_array_form():
    a, b = LatencyStats(), LatencyStats()
    a.record(np.full(7, 2.0), 2.5, 3.0)
    b.record_uniform(2.0, 7, 2.5, 3.0)
    assert a.summary() == b.summary()
    assert a.summary()["busy_fraction"] == pytest.approx(0.5)   # 0.5 s of 1 s
    a.clear()
    empty = a.summary()
    assert empty["updates"] == 0 and empty["latency"]["p99"] == 0.0


def test_below_and_above_the_range_are_kept():
    s = LatencyStats()
    s.record(np.array([0.0, 0.0]), 0.0, 1e-9)        # under 100 ns
    s.record(np.array([0.0]), 0.0, 5e4)              # over 10^4 s
    d = s.summary()
    assert d["updates"] == 3 and d["latency"]["max"] == pytest.approx(5e4)
    assert d["latency"]["p50"] <= 1e-7


def test_timed_batches_tell_each_update_its_own_arrival():
    # the first three arrive, are handed on by max_latency, then two more arrive later
    go = threading.Event()

    def gated():
        yield from [(0, 1, "+"), (1, 2, "+"), (2, 0, "+")]
        if not go.wait(WAIT):
            raise AssertionError("the first updates were never handed on")
        yield from [(2, 3, "+"), (3, 0, "+")]
    seen = []
    sizes = []
    for b in stream_batches(gated(), 100, max_latency="5ms", arrivals=seen.append):
        sizes.append(len(b))
        go.set()
    assert sizes == [3, 2] and [len(a) for a in seen] == sizes
    assert seen[0].max() < seen[1].min()             # the later ones arrived later


def test_apply_stream_counts_every_update_once():
    g = wm.Graph.from_edges([0, 1, 2], [1, 2, 3])
    cm = wm.ContinuousMatcher(g, "triangle", backend="cpu")
    items = [(0, 2, "+"), (1, 3, "+"), (0, 3, "+"), (0, 2, "-")]
    ds = list(cm.apply_stream(iter(items), 3, max_latency="1ms"))
    d = cm.latency.summary()
    assert d["updates"] == 4 and d["batches"] == len(ds)
    assert 0 <= d["response"]["p50"] <= d["latency"]["p50"] <= d["latency"]["max"]
    # cumulative over calls until cleared; a whole stream arrives at once, so the
    # second batch's updates waited while the first was matched
    from warpmatch.stream.convert import as_updates
    list(cm.apply_stream(as_updates([(0, 2, "+"), (0, 2, "-"), (1, 3, "-"), (1, 3, "+")]), 2))
    assert cm.latency.summary()["updates"] == 8
    cm.latency.clear()
    list(cm.apply_stream(as_updates([(0, 2, "+"), (0, 2, "-"), (1, 3, "-"), (1, 3, "+")]), 2))
    d = cm.latency.summary()
    assert d["updates"] == 4 and d["batches"] == 2
    assert d["response"]["max"] > 0


def test_cli_stream_json_has_the_latency(tmp_path):
    from click.testing import CliRunner

    from warpmatch.cli import cli
    g = tmp_path / "g.txt"
    g.write_text("0 1\n1 2\n2 3\n")
    ups = "0 2 +\n1 3 +\n0 3 +\n"
    (tmp_path / "ups.txt").write_text(ups)
    for source, arrival in (("-", "read"), (str(tmp_path / "ups.txt"), "start")):
        res = CliRunner().invoke(cli, ["stream", str(g), "triangle", source, "--json",
                                       "--backend", "cpu", "--batch-size", "2"], input=ups)
        assert res.exit_code == 0, res.output
        lat = json.loads(res.stdout.strip().splitlines()[-1])["latency"]
        assert lat["updates"] == 3 and lat["batches"] == 2 and lat["arrival"] == arrival
        assert lat["latency"]["max"] >= lat["latency"]["p50"] > 0
        # the line for a person: from stdin only (a file's updates all "arrive" at once)
        assert ("latency p50" in res.output) == (source == "-"), res.output
