"""The GPU engine's batches split between the host's sequential path and the device
(stream/_route.py): the device's copies (row index, mirror, cache, masks) follow the rows
the sequential runs rewrote (stream/_editlog.py), so either path can take any batch.

Random routes (``DeviceRoute.device_first`` replaced by a coin) over streams that move
rows (no slack), empty hubs and add vertices, for each cache policy, directed and
labeled; the real route on CollegeMsg cut at random batch sizes. Every per-update count
equals the CPU engine's. Needs CuPy and a CUDA device (``tests/conftest.py`` skips
otherwise).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy", reason="the GPU delta engine needs CuPy")
pytestmark = pytest.mark.gpu

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stream"))
from test_emptied_vertices import college_msg_prefix  # noqa: E402

from warpmatch.graph.csr import Graph  # noqa: E402
from warpmatch.stream import _route as R  # noqa: E402
from warpmatch.stream.dynamic import DynamicGraph  # noqa: E402
from warpmatch.stream.gpu import pinned_allocator  # noqa: E402
from warpmatch.stream.matcher import ContinuousMatcher  # noqa: E402
from warpmatch.stream.types import Updates  # noqa: E402


def _stream(rng: np.random.Generator, n: int, directed: bool, size: int) -> Updates:
    """Inserts and deletes around hub 0 and at random (invalid ones included: skipped)."""
    s = np.concatenate([np.zeros(size // 4, np.int64), rng.integers(0, n, size - size // 4)])
    d = rng.integers(1, n, size)
    if not directed:
        flip = rng.random(size) < 0.5
        s, d = np.where(flip, d, s), np.where(flip, s, d)
    o = np.where(rng.random(size) < 0.6, 1, -1).astype(np.int8)
    return Updates(s, d, o)


def _cuts(rng: np.random.Generator, total: int) -> list[int]:
    out, at = [], 0
    while at < total:
        k = int(rng.choice([1, 2, 5, 40, 300]))
        out.append(min(k, total - at))
        at += out[-1]
    return out


def _counts(cm: ContinuousMatcher, ups: Updates, cuts: list[int]) -> tuple:
    plus, minus, at = [], [], 0
    for k in cuts:
        d = cm.apply(ups.slice(at, at + k), counts_only=True)
        plus.append(d.plus_counts)
        minus.append(d.minus_counts)
        at += k
    return np.concatenate(plus), np.concatenate(minus)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("policy", ["device", "none", "degree", "random-walk"])
@pytest.mark.parametrize("text", ["triangle", "a-b, b-c, c-d, d-a"])
def test_random_routes_equal_the_cpu_engine(monkeypatch, directed, policy, text):
    rng = np.random.default_rng(7 + directed)
    n = 400
    src = np.concatenate([np.zeros(300, np.int64), rng.integers(1, n, 2500)])
    dst = np.concatenate([rng.choice(np.arange(1, n), 300, replace=False),
                          rng.integers(1, n, 2500)])
    g = Graph.from_edges(src, dst, n=n, directed=directed, warn=False)
    if directed and text == "triangle":
        text = "a->b, b->c, c->a"
    elif directed:
        text = "a->b, b->c, c->d, a->d"
    ups = _stream(rng, n + 20, directed, 3000)          # 20 new vertices
    cuts = _cuts(rng, len(ups))
    coin = np.random.default_rng(3)
    monkeypatch.setattr(R.DeviceRoute, "device_first",
                        lambda self, size: bool(coin.random() < 0.5))
    dg = DynamicGraph(g, slack=0.0, allocator=pinned_allocator())    # rows move
    cm = ContinuousMatcher(dg, text, backend="gpu", on_invalid="skip", cache=policy,
                           cache_fraction=0.3)
    got = _counts(cm, ups, cuts)
    ref = _counts(ContinuousMatcher(g, text, backend="cpu", on_invalid="skip"), ups, cuts)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    assert cm._route.batches["sequential"] > 10 and cm._route.batches["device"] > 10
    assert cm.engine.totals["batches"] >= cm._route.batches["device"]


@pytest.mark.parametrize("policy", ["device", "none"])
def test_random_routes_on_a_labeled_query_with_its_relevant_subgraph(monkeypatch, policy):
    """Every query vertex labelled: the sequential path starts in split mode (the edges
    the query cannot use in a hash set) and the first device batch ends it."""
    rng = np.random.default_rng(11)
    n = 120
    src, dst = rng.integers(n, size=(2, 900))
    g = Graph.from_edges(src, dst, n=n, vertex_labels=rng.integers(3, size=n), warn=False)
    q = "a:0-b:1, b-c:2, c-a, c-d:1"
    ups = _stream(rng, n, False, 1500)
    cuts = _cuts(rng, len(ups))
    coin = np.random.default_rng(5)
    monkeypatch.setattr(R.DeviceRoute, "device_first",
                        lambda self, size: bool(coin.random() < 0.5))
    cm = ContinuousMatcher(g, q, backend="gpu", on_invalid="skip", cache=policy)
    assert cm._relevant is not None
    got = _counts(cm, ups, cuts)
    ref = _counts(ContinuousMatcher(g, q, backend="cpu", on_invalid="skip"), ups, cuts)
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    assert cm.count == ContinuousMatcher(cm.graph.snapshot(), q, backend="cpu").initial_count


def test_the_real_route_on_college_msg(data_path):
    """Batches of 1 to 300 as a stream that closes on time cuts them: the route picks by
    measured time; the counts are the CPU engine's, and the total is the final graph's."""
    g0, ups = college_msg_prefix(data_path, 6000)
    rng = np.random.default_rng(1)
    cuts = _cuts(rng, len(ups))
    for q in ("triangle", "square"):
        cm = ContinuousMatcher(g0, q, backend="gpu")
        got = _counts(cm, ups, cuts)
        cpu = ContinuousMatcher(g0, q, backend="cpu")
        ref = _counts(cpu, ups, cuts)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])
        assert cm.count == cpu.count
        assert sum(cm._route.batches.values()) == len(cuts)
