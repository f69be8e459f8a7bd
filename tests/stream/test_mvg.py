"""The multi-version graph (``warpmatch.stream.mvg``, DCSM §1.4-1.6) against a plain model,
and its array form (``warpmatch.stream.mvg_device``, numpy here; CuPy in tests/gpu).

Random graphs, random valid update streams, random batch cuts and random completion orders:
every update sees, at any moment before it is finished, exactly the snapshot before it
(however many later batches were applied since), and once every update has finished each
vertex holds one version.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpmatch.errors import InputFormatError
from warpmatch.stream.mvg import MultiVersionGraph
from warpmatch.stream.mvg_device import ArrayMultiVersionGraph

# the host reference, and the array store on numpy (the GPU tests run it on CuPy)
def _eager(*a, **k):
    g = ArrayMultiVersionGraph(*a, xp=np, **k)
    g.compact_fraction = -1.0            # compacted at every finish, readers pending
    return g


STORES = {"reference": MultiVersionGraph,
          "arrays": lambda *a, **k: ArrayMultiVersionGraph(*a, xp=np, **k),
          "arrays-eager": _eager}


def _drained_entries(g):
    """Entries held once drained: the array store compacts its pool first."""
    if hasattr(g, "compact"):
        g.compact()
    return g.entries()


def _key(a, b, directed):
    return (a, b) if directed or a < b else (b, a)


def _snapshot(edges, n, directed):
    """Out- and in-neighbour lists of an edge set."""
    out = {v: [] for v in range(n)}
    inn = {v: [] for v in range(n)}
    for a, b in edges:
        out[a].append(b)
        inn[b].append(a)
        if not directed:
            out[b].append(a)
            inn[a].append(b)
    return ({v: sorted(x) for v, x in out.items()}, {v: sorted(x) for v, x in inn.items()})


@st.composite
def scenario(draw):
    n = draw(st.integers(2, 7))
    directed = draw(st.booleans())
    pairs = [(a, b) for a in range(n) for b in range(n)
             if a != b and (directed or a < b)]
    g0 = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)))
    live = set(g0)
    ups = []
    for _ in range(draw(st.integers(0, 30))):
        a, b = draw(st.sampled_from(pairs))
        if draw(st.booleans()):            # now and then the reverse direction
            a, b = b, a
        k = _key(a, b, directed)
        op = -1 if k in live else 1
        (live.discard if op < 0 else live.add)(k)
        ups.append((a, b, op))
    cuts = sorted(draw(st.lists(st.integers(0, len(ups)), max_size=6)))
    seed = draw(st.integers(0, 2**31))
    return n, directed, g0, ups, cuts, seed


@pytest.mark.parametrize("store", sorted(STORES))
@settings(max_examples=200, deadline=None)
@given(case=scenario())
def test_every_update_sees_its_own_snapshot(store, case):
    run_scenario(STORES[store], case)


def run_scenario(make, case):
    """Apply ``case``'s batches to ``make(n, src, dst, directed=...)``, finishing random
    parts as it goes, and check every readable time against the model (also run on the
    GPU by tests/gpu/test_gpu_mvg.py)."""
    n, directed, g0, ups, cuts, seed = case
    rng = np.random.default_rng(seed)
    g = make(n, [a for a, _ in g0], [b for _, b in g0], directed=directed)
    # the model: the edge set before each update (before[t - 1] is what update t sees)
    edges = {_key(a, b, directed) for a, b in g0}
    before = []
    for a, b, op in ups:
        before.append(set(edges))
        (edges.add if op > 0 else edges.discard)(_key(a, b, directed))
    final = edges
    pending: list[int] = []
    bounds = [0, *cuts, len(ups)]
    for lo, hi in zip(bounds, bounds[1:]):
        if hi <= lo:
            continue
        part = ups[lo:hi]
        g.apply([u[0] for u in part], [u[1] for u in part], [u[2] for u in part])
        pending.extend(range(lo + 1, hi + 1))
        # what the next update would see: everything applied so far
        nxt = before[hi] if hi < len(ups) else final
        _check(g, hi + 1, nxt, n, directed)
        # finish a random part of the unfinished updates, each checked before it goes
        rng.shuffle(pending)
        k = int(rng.integers(0, len(pending) + 1))
        for t in pending[:k]:
            _check(g, t, before[t - 1], n, directed)
        g.finish(pending[:k])
        pending = pending[k:]
    for t in pending:
        _check(g, t, before[t - 1], n, directed)
    g.finish(pending)
    assert g.finished == len(ups)
    rows = n if not directed else 2 * n
    assert g.versions() == rows                 # drained: one version a vertex
    assert _drained_entries(g) == 2 * len(final)    # and the live edges only
    _check(g, len(ups) + 1, final, n, directed)


def _check(g, t, edges, n, directed):
    out, inn = _snapshot(edges, n, directed)
    for v in range(n):
        assert g.neighbors(v, t).tolist() == out[v], (v, t)
        if directed:
            assert g.neighbors(v, t, "in").tolist() == inn[v], (v, t)
    if hasattr(g, "snapshot"):
        # the array store's CSR of the same time: every row, and some rows in another order
        for direction, want in (("out", out), ("in", inn))[:2 if directed else 1]:
            ptr, idx = (_host(x) for x in g.snapshot(t, direction=direction))
            assert [idx[ptr[v]:ptr[v + 1]].tolist() for v in range(n)] == \
                [want[v] for v in range(n)], (t, direction)
            some = list(range(n))[::-2]
            ptr, idx = (_host(x) for x in g.snapshot(t, some, direction=direction))
            assert [idx[ptr[i]:ptr[i + 1]].tolist() for i in range(len(some))] == \
                [want[v] for v in some], (t, direction)


def _host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


@pytest.mark.parametrize("store", sorted(STORES))
def test_memory_stays_bounded_on_a_long_stream(store):
    # an endless insert/delete churn on a small graph, every update finished as it goes:
    # the versions held do not grow with the stream
    g = STORES[store](50, np.arange(49), np.arange(1, 50))
    rng = np.random.default_rng(0)
    live = {(i, i + 1) for i in range(49)}
    held, held_bytes = [], []
    for step in range(300):
        a, b = sorted(rng.choice(50, 2, replace=False).tolist())
        op = -1 if (a, b) in live else 1
        (live.discard if op < 0 else live.add)((a, b))
        g.apply([a], [b], [op])
        g.finish([g.time])
        held.append(g.versions())
        if store != "reference":
            # the pool is compacted as it goes: its allocation follows the live edges
            held_bytes.append(g.pool_bytes() / (2 * len(live) + 49))
    assert max(held) <= 50 and _drained_entries(g) == 2 * len(live)
    if store != "reference":
        assert max(held_bytes) <= 2 * held_bytes[0], (held_bytes[0], max(held_bytes))


@pytest.mark.parametrize("store", sorted(STORES))
def test_bad_updates_change_nothing(store):
    g = STORES[store](3, [0], [1])
    for src, dst, op, what in (([0], [1], [1], "inserts a live"),
                               ([1], [2], [-1], "deletes a missing"),
                               ([1], [1], [1], "self-loop"),
                               ([1], [5], [1], "unknown vertex"),
                               ([1, 1], [2, 2], [1, 1], "inserts a live")):
        with pytest.raises(InputFormatError, match=what):
            g.apply(src, dst, op)
    assert g.time == 0 and g.neighbors(0, 1).tolist() == [1] and g.versions() == 3
    g.apply([1, 1], [2, 2], [1, -1])            # insert then delete in one batch: valid
    assert g.neighbors(1, 2).tolist() == [0, 2] and g.neighbors(1, 3).tolist() == [0]
    with pytest.raises(ValueError, match="not readable"):
        g.neighbors(1, 4)
    g.finish([1, 2])
    with pytest.raises(ValueError, match="not readable"):
        g.neighbors(1, 2)                        # finished: its versions may be gone
    if hasattr(g, "snapshot"):
        with pytest.raises(ValueError, match="not readable"):
            g.snapshot(2)
