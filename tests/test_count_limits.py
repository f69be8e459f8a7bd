"""``count`` with several queries, ``--limit``, ``--time-limit`` and ``--threads``;
partial counts in the API; the engines' early ``stop``.

A partial count is a lower bound and must say so, in words ("at least",
"partial: ...") and in JSON (``"partial": true``); a count that finishes
before its limits is exact and says nothing of them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, last_json
from click.testing import CliRunner, Result

import warpmatch as wm
from warpmatch.api import describe_count
from warpmatch.cli import cli
from warpmatch.engine import cpu
from warpmatch.graph import barabasi_albert, save_binary
from warpmatch.plan import build_plan
from warpmatch.query.patterns import get_pattern


def run(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def graph() -> wm.Graph:
    """Large enough that a count takes many kernel calls (the first has a small budget)."""
    return barabasi_albert(3000, 8, seed=5)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory, graph) -> Path:
    path = tmp_path_factory.mktemp("limits") / "ba.wmg"
    save_binary(graph, path)
    return path


@pytest.fixture(scope="module")
def small() -> wm.Graph:
    """Small enough for the reference engine."""
    return barabasi_albert(300, 4, seed=5)


@pytest.fixture(scope="module")
def exact(graph) -> dict[str, int]:
    return {q: wm.count(graph, q) for q in ("triangle", "square", "house")}


# ------------------------------------------------------------------ the CLI
def test_several_queries_one_line_each(graph_file, exact) -> None:
    res = run("count", graph_file, "triangle", "square", "house")
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if not ln.startswith(" ")]
    assert lines == [describe_count(exact[q], "embeddings", False, q)
                     for q in ("triangle", "square", "house")]
    res = run("count", graph_file, "triangle", "house", "--json")
    objs = [json.loads(ln) for ln in res.stdout.splitlines() if ln.startswith("{")]
    assert [(d["query"], d["count"], d["partial"]) for d in objs] == \
        [("triangle", exact["triangle"], False), ("house", exact["house"], False)]
    assert last_json(res) == objs[-1]      # each object follows its query's lines


def test_a_bad_query_fails_before_any_count(graph_file) -> None:
    res = run("count", graph_file, "triangle", "a-b, c-d")
    assert_clean_error(res, "disconnected")
    assert res.stdout == ""
    res = run("count", graph_file)
    assert res.exit_code == 2 and "QUERY" in res.stderr


def test_limit_gives_a_lower_bound_that_says_so(graph_file, exact) -> None:
    res = run("count", graph_file, "square", "--limit", 1, "--json")
    d = last_json(res)
    assert d["partial"] is True and d["partial_reason"] == "limit 1 reached"
    assert 1 <= d["count"] < exact["square"]
    assert res.stdout.splitlines()[0] == \
        f"square: at least {d['count']:,} embeddings (non-induced; partial: limit 1 reached)"
    # a limit above the answer changes nothing
    d = last_json(run("count", graph_file, "triangle", "--limit", exact["triangle"] + 1,
                      "--json"))
    assert d["count"] == exact["triangle"] and d["partial"] is False
    assert d["semantics"] == describe_count(exact["triangle"], "embeddings", False,
                                               "triangle")


def test_time_limit_gives_a_lower_bound_that_says_so(graph_file, exact) -> None:
    res = run("count", graph_file, "square", "--time-limit", "0.001", "--json")
    d = last_json(res)
    assert d["partial"] is True and d["partial_reason"] == "time limit 0.001 s reached"
    assert 0 <= d["count"] < exact["square"]
    assert "at least" in res.stdout.splitlines()[0]
    d = last_json(run("count", graph_file, "triangle", "--time-limit", 600, "--json"))
    assert d["count"] == exact["triangle"] and d["partial"] is False


@pytest.mark.parametrize("args, needle", [(["--limit", 0], "--limit"),
                                          (["--time-limit", 0], "--time-limit"),
                                          (["--threads", 0], "--threads"),
                                          (["--threads", 100_000], "--threads")])
def test_option_errors(graph_file, args, needle) -> None:
    res = run("count", graph_file, "triangle", *args)
    assert_clean_error(res, needle, code=2)


def test_threads(graph_file, exact, tmp_path) -> None:
    import numba
    before = numba.get_num_threads()
    d = last_json(run("count", graph_file, "house", "--threads", 1, "--json"))
    assert d["count"] == exact["house"]
    assert numba.get_num_threads() == before      # restored after the command
    out = tmp_path / "m.csv"
    res = run("match", graph_file, "triangle", "-o", out, "--threads", 1, "--mode", "subgraphs")
    assert res.exit_code == 0, res.output
    assert len(out.read_text().splitlines()) == 1 + exact["triangle"] // 6


# ------------------------------------------------------------------ the API
def test_count_result_limits(graph, small, exact) -> None:
    r = wm.count_result(graph, "square", limit=1)
    assert r.partial == "limit 1 reached" and 1 <= r.count < exact["square"]
    assert r.describe().startswith("square: at least ")
    assert r.as_dict()["partial"] is True
    r = wm.count_result(small, "square", backend="reference", time_limit=1e-9)
    assert r.partial == "time limit 1e-09 s reached" and r.count < wm.count(small, "square")
    assert r.backend == "reference"
    r = wm.count_result(graph, "triangle", limit=10**15, time_limit=600)
    assert (r.count, r.partial) == (exact["triangle"], None)
    with pytest.raises(wm.errors.QueryError, match="limit"):
        wm.count_result(graph, "triangle", limit=0)
    with pytest.raises(wm.errors.QueryError, match="time_limit"):
        wm.count_result(graph, "triangle", time_limit=0)


def test_an_engine_without_stop_refuses_limits(small, monkeypatch) -> None:
    from warpmatch.engine.reference import ReferenceEngine
    count = ReferenceEngine.count
    monkeypatch.setattr(ReferenceEngine, "count",
                        lambda self, g, plan, progress=None: count(self, g, plan, progress))
    assert wm.count_result(small, "triangle", backend="reference").partial is None
    with pytest.raises(wm.errors.BackendUnavailableError, match="cannot stop"):
        wm.count_result(small, "triangle", backend="reference", limit=5)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_engines_stop_when_asked_and_report_progress(graph, small, exact, backend) -> None:
    engine = wm.engine.get_engine(backend)
    if backend == "reference":
        graph = small
    plan = build_plan(graph, get_pattern("square"))
    full = wm.count(graph, "square") // plan.multiplier
    seen: list[int] = []
    calls: list[tuple[int, int]] = []
    got = engine.count(graph, plan, progress=lambda d, t: calls.append((d, t)),
                       stop=lambda n: seen.append(n) or len(seen) == 3)
    assert len(seen) == 3 and got == seen[-1] < full
    assert all(0 <= d <= t for d, t in calls) and calls[-1][0] < calls[-1][1]
    assert engine.count(graph, plan, stop=lambda n: False) == full


def test_cpu_calls_are_short_and_progress_moves(graph, exact, monkeypatch) -> None:
    # a budget that never grows: many calls, and progress reported after each
    monkeypatch.setattr(cpu, "CALL_S", 0.0)
    plan = build_plan(graph, get_pattern("triangle"))
    calls: list[tuple[int, int]] = []
    n = cpu.CpuEngine().count(graph, plan, progress=lambda d, t: calls.append((d, t)))
    assert n * plan.multiplier == exact["triangle"]
    done = [d for d, _ in calls]
    assert len(calls) > 20 and done == sorted(done) and calls[-1][0] == calls[-1][1]
    assert len(set(done)) > 10          # it moves, not only at the end


def test_compile_time_is_reported_apart(monkeypatch) -> None:
    """An engine that compiles per plan (the GPU engine's NVRTC modules) reports it in
    ``last_stats["compile_s"]``; ``count_result`` and ``--json`` give it apart."""
    import warpmatch as wm
    import warpmatch.engine as E

    class Compiling:
        name = "stub"
        last_stats: dict = {}

        def available(self):
            return True, ""

        def count(self, graph, plan, progress=None, stop=None):
            self.last_stats = {"compile_s": 1.25}
            return E.get_engine("reference").count(graph, plan)

    monkeypatch.setattr(E, "resolve_backend", lambda name="auto": Compiling())
    g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0])
    r = wm.count_result(g, "triangle")
    assert r.count == 6 and r.compile_seconds == 1.25
    assert r.as_dict()["compile_seconds"] == 1.25
    monkeypatch.undo()
    assert wm.count_result(g, "triangle", backend="reference").compile_seconds == 0.0
