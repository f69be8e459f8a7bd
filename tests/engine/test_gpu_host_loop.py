"""The GPU engine's host loops (engine/gpu/run.py), checked without a GPU.

A DFS launch cannot be interrupted, so a count launches the DFS on slices of
the pool sized to take about ``LAUNCH_S`` seconds each (with
``launches="pool"``, on the rest of the pool, the kernel taking no row after
``LAUNCH_S``), and a listing caps its slices by time as well: between launches the host handles Ctrl-C and SIGTERM,
reports progress and asks ``stop``. Here ``_dfs`` is replaced by a fake whose
"launch" takes a time proportional to its slice, and the loops are checked for
covering the pool exactly once, for the slice sizes they choose, and for
stopping when asked. The kernels themselves run in tests/gpu.
"""
from __future__ import annotations

import types

import numpy as np
import pytest

from warpmatch.engine.gpu import run as G


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
              heavy: dict | None = None, launches_mode: str = "sliced",
              late_first: bool = False):
    """An object with what ``count_dfs``/``_list_pool`` use: ``_dfs``, ``stats``,
    ``aborted``, ``fetched``, ``kernel``, ``eng.launches``, and for a row that alone
    outlasts a launch's limit ``expand`` (into three cheap children), ``k``, ``leaf``,
    ``leaf_d``.
    ``heavy`` maps rows to their seconds. A launch takes its rows in order; with
    ``fetch_s`` it takes no row after that many seconds but finishes the ones taken
    (``late_first``: the first such launch starts after its limit and takes none)."""
    launches: list[tuple[int, int]] = []
    heavy = heavy or {}
    late = [late_first]

    def _dfs(pool, d, out=None, out_cap=0, max_s=None, fetch_s=None, halt=None):
        lo, hi = int(pool[0]), int(pool[-1]) + 1     # the pool holds its own row numbers
        launches.append((lo, hi))
        t = np.full(hi - lo, seconds_per_row)
        for r, extra in heavy.items():
            if lo <= r < hi:
                t[r - lo] += extra
        start = np.cumsum(t) - t                      # when each row is taken
        taken = hi - lo
        if fetch_s is not None:
            taken = 0 if late[0] else int(np.searchsorted(start, fetch_s, side="right"))
            late[0] = False
        took = float(t[:taken].sum())
        # the host asks halt while a launch runs (once here, halfway through one of over
        # a millisecond): True voids the launch there
        run.halted = halt is not None and min(took, max_s or took) > 1e-3 and bool(halt())
        if run.halted:
            run.aborted, run.fetched = False, taken
            clock.t += min(took, max_s or took) / 2
            return 0, 0, False
        run.aborted = max_s is not None and took > max_s
        if run.aborted:                               # stopped at its limit: void
            run.fetched = int(np.searchsorted(start, max_s, side="right"))
            clock.t += max_s
            return 0, 0, False
        run.fetched = taken
        clock.t += took
        rows = min(out_cap, rows_per_row * taken) if out is not None else 0
        return taken, rows, False                    # one match per pool row

    def expand(row, d):
        r = int(row[0])
        return np.arange(10**9 + 3 * r, 10**9 + 3 * r + 3)

    run = types.SimpleNamespace(_dfs=_dfs, stats={}, aborted=False, halted=False, fetched=0,
                                expand=expand,
                                k=6, leaf=False, leaf_d=6, kernel="fine",
                                eng=types.SimpleNamespace(launches=launches_mode))
    run.count_dfs = lambda *a, **kw: G.Run.count_dfs(run, *a, **kw)
    run._count_children = lambda *a: G.Run._count_children(run, *a)
    return run, launches


def test_count_slices_cover_the_pool_once_and_aim_at_launch_s(clock) -> None:
    P = 2_000_000
    run, launches = _fake_run(clock, seconds_per_row=2e-6)     # 4 s in all
    calls: list[tuple[int, int]] = []
    n = G.Run.count_dfs(run, np.arange(P), 1, lambda d, t: calls.append((d, t)))
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
    # asked during each launch (with the count before it) and after it: the fourth asking
    # is after the second launch
    n = G.Run.count_dfs(run, np.arange(1_000_000), 1, None,
                         lambda c: seen.append(c) or len(seen) == 4)
    assert len(launches) == 2 and n == launches[1][1] == seen[-1] < 1_000_000
    assert seen[:3] == [0, launches[0][1], launches[0][1]]


def test_count_stops_during_a_launch_when_asked(clock) -> None:
    """A stop that fires while a launch runs voids that launch (the device's abort flag,
    set by the host): the count is the launches' before it, and none follows."""
    run, launches = _fake_run(clock, seconds_per_row=1e-5)
    seen: list[int] = []
    n = G.Run.count_dfs(run, np.arange(1_000_000), 1, None,
                         lambda c: seen.append(c) or len(seen) == 3)
    assert len(launches) == 2 and n == launches[0][1] == seen[-1]
    assert run.halted and seen == [0, n, n]


def test_listing_slices_are_capped_by_time(clock) -> None:
    # few matches: the buffer alone would let the slices grow 8x every launch
    run, launches = _fake_run(clock, seconds_per_row=1e-5, rows_per_row=0)
    out = types.SimpleNamespace()
    got = list(G.Run._list_pool(run, np.arange(500_000), 1, out, 1 << 20, None))
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
    n = G.Run.count_dfs(run, np.arange(P), 1, lambda d, t: seen.append((d, t)))
    assert n == P - 1 + 3                  # the hub's subtree: its three children
    took = []
    for lo, hi in launches:
        t = 1e-6 * (hi - lo) + (300.0 if lo <= hub < hi else 0.0)
        took.append(min(t, G.SLICE_MAX_S))
    assert max(took) <= G.SLICE_MAX_S
    assert (hub, hub + 1) in launches and seen[-1] == (P, P)
    assert sum(hi - lo for lo, hi in launches if lo >= 10**9) == 3   # the children, once


def test_pool_launches_a_short_search_is_one_launch(clock) -> None:
    """launches="pool": a search shorter than LAUNCH_S is one launch over the pool."""
    run, launches = _fake_run(clock, seconds_per_row=1e-7, launches_mode="pool")
    P = 1_000_000                                   # 0.1 s in all
    assert G.Run.count_dfs(run, np.arange(P), 1, None) == P
    assert launches == [(0, P)]


def test_pool_launches_take_the_rest_and_stop_taking_after_launch_s(clock) -> None:
    run, launches = _fake_run(clock, seconds_per_row=2e-6, launches_mode="pool")
    P = 2_000_000                                   # 4 s in all
    calls: list[tuple[int, int]] = []
    n = G.Run.count_dfs(run, np.arange(P), 1, lambda d, t: calls.append((d, t)))
    assert n == P and calls[-1] == (P, P)
    # each launch is handed the rest of the pool and starts where the last one stopped
    assert all(hi == P for _, hi in launches)
    starts = [lo for lo, _ in launches]
    assert starts == sorted(starts) and starts[0] == 0
    # each took LAUNCH_S worth of rows (one more: the row taken at the limit), the last
    # one the rest
    per = G.LAUNCH_S / 2e-6
    assert all(abs((b - a) - per) <= 1 for a, b in zip(starts, starts[1:]))
    assert len(launches) == int(np.ceil(P / (per + 1)))


def test_pool_launch_that_started_late_falls_back_to_slices(clock) -> None:
    """A launch that took no row (it started after its fetch limit) must not loop: the
    rest goes in plain slices, the first of FIRST_SLICE rows."""
    run, launches = _fake_run(clock, seconds_per_row=1e-6, launches_mode="pool",
                              late_first=True)
    P = 300_000
    assert G.Run.count_dfs(run, np.arange(P), 1, None) == P
    assert launches[0] == (0, P) and launches[1] == (0, G.FIRST_SLICE)
    assert launches[-1][1] == P


def test_pool_launches_with_a_hub_row_stay_exact_and_within_the_limit(clock) -> None:
    P, hub = 200_000, 123_456
    run, launches = _fake_run(clock, seconds_per_row=1e-6, heavy={hub: 300.0},
                              launches_mode="pool")
    n = G.Run.count_dfs(run, np.arange(P), 1, None)
    assert n == P - 1 + 3                  # the hub's subtree: its three children
    assert (hub, hub + 1) in launches
    assert sum(hi - lo for lo, hi in launches if lo >= 10**9) == 3
