"""The GPU engine's host loops (engine/gpu/engine.py), checked without a GPU.

A DFS launch cannot be interrupted, so a count launches the DFS on slices of
the pool sized to take about ``LAUNCH_S`` seconds each, and a listing caps its
slices by time as well: between launches the host handles Ctrl-C and SIGTERM,
reports progress and asks ``stop``. Here ``_dfs`` is replaced by a fake whose
"launch" takes a time proportional to its slice, and the loops are checked for
covering the pool exactly once, for the slice sizes they choose, and for
stopping when asked. The kernels themselves run in tests/gpu.
"""
from __future__ import annotations

import types

import numpy as np
import pytest

from warpmatch.engine.gpu import engine as G


class _Clock:
    """A fake ``time.perf_counter`` that each fake launch moves on."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock(monkeypatch) -> _Clock:
    c = _Clock()
    monkeypatch.setattr(G.time, "perf_counter", c)
    return c


def _fake_run(clock: _Clock, seconds_per_row: float, rows_per_row: int = 0,
              heavy: dict | None = None):
    """An object with what ``count_dfs``/``_list_pool`` use: ``_dfs``, ``stats``,
    ``aborted``, and for a row that alone outlasts a launch's limit ``expand`` (into
    three cheap children), ``k``, ``leaf``. ``heavy`` maps rows to their seconds."""
    launches: list[tuple[int, int]] = []
    heavy = heavy or {}

    def _dfs(pool, d, out=None, out_cap=0, max_s=None):
        lo, hi = int(pool[0]), int(pool[-1]) + 1     # the pool holds its own row numbers
        launches.append((lo, hi))
        took = seconds_per_row * (hi - lo) + sum(t for r, t in heavy.items() if lo <= r < hi)
        run.aborted = max_s is not None and took > max_s
        if run.aborted:                               # stopped at its limit: void
            clock.t += max_s
            return 0, 0, False
        clock.t += took
        rows = min(out_cap, rows_per_row * (hi - lo)) if out is not None else 0
        return hi - lo, rows, False                  # one match per pool row

    def expand(row, d):
        r = int(row[0])
        return np.arange(10**9 + 3 * r, 10**9 + 3 * r + 3)

    run = types.SimpleNamespace(_dfs=_dfs, stats={}, aborted=False, expand=expand, k=6,
                                leaf=False)
    run.count_dfs = lambda *a, **kw: G._Run.count_dfs(run, *a, **kw)
    run._count_children = lambda *a: G._Run._count_children(run, *a)
    return run, launches


def test_count_slices_cover_the_pool_once_and_aim_at_launch_s(clock) -> None:
    P = 2_000_000
    run, launches = _fake_run(clock, seconds_per_row=2e-6)     # 4 s in all
    calls: list[tuple[int, int]] = []
    n = G._Run.count_dfs(run, np.arange(P), 1, lambda d, t: calls.append((d, t)))
    assert n == P
    assert [a for a, _ in launches] == [0] + [b for _, b in launches[:-1]]   # contiguous
    assert launches[-1][1] == P and calls[-1] == (P, P)
    assert launches[0] == (0, G.FIRST_SLICE)
    times = [(b - a) * 2e-6 for a, b in launches]
    # after growing from the first slice, every launch but the last takes ~LAUNCH_S
    assert all(t <= G.LAUNCH_S * 1.01 for t in times)
    assert sum(t > G.LAUNCH_S * 0.9 for t in times) >= len(times) - 5


def test_count_stops_when_asked(clock) -> None:
    run, launches = _fake_run(clock, seconds_per_row=1e-5)
    seen: list[int] = []
    n = G._Run.count_dfs(run, np.arange(1_000_000), 1, None,
                         lambda c: seen.append(c) or len(seen) == 2)
    assert len(launches) == 2 and n == launches[1][1] == seen[-1] < 1_000_000


def test_listing_slices_are_capped_by_time(clock) -> None:
    # few matches: the buffer alone would let the slices grow 8x every launch
    run, launches = _fake_run(clock, seconds_per_row=1e-5, rows_per_row=0)
    out = types.SimpleNamespace()
    got = list(G._Run._list_pool(run, np.arange(500_000), 1, out, 1 << 20, None))
    assert got == [] and launches[-1][1] == 500_000
    assert max((b - a) * 1e-5 for a, b in launches) <= G.LAUNCH_S * 8
    assert sorted((b - a) for a, b in launches)[-2] * 1e-5 <= G.LAUNCH_S * 1.01


def test_a_launch_past_its_limit_is_counted_again_smaller(clock) -> None:
    """A hub's row that alone takes minutes: its slices stop at SLICE_MAX_S and are
    counted again in quarters, and the row itself one depth down, so no launch runs
    longer than the limit (Ctrl-C is served between launches) and the count is exact."""
    P, hub = 100_000, 77_777
    run, launches = _fake_run(clock, seconds_per_row=1e-6, heavy={hub: 300.0})
    seen: list[tuple[int, int]] = []
    n = G._Run.count_dfs(run, np.arange(P), 1, lambda d, t: seen.append((d, t)))
    assert n == P - 1 + 3                  # the hub's subtree: its three children
    took = []
    for lo, hi in launches:
        t = 1e-6 * (hi - lo) + (300.0 if lo <= hub < hi else 0.0)
        took.append(min(t, G.SLICE_MAX_S))
    assert max(took) <= G.SLICE_MAX_S
    assert (hub, hub + 1) in launches and seen[-1] == (P, P)
    assert sum(hi - lo for lo, hi in launches if lo >= 10**9) == 3   # the children, once
