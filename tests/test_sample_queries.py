"""``warpmatch sample-queries`` and :func:`warpmatch.query.io.write_query_file`.

Checked: the files read back as the queries that were sampled (t/v/e for labeled
undirected queries, DSL text otherwise, edge labels kept); a set is deterministic
per seed and query ``i`` does not depend on ``--count``; every query is connected
and matches its graph at least once (an embedding found by the reference
engine); clear one-line errors for what cannot be done.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_clean_error, last_json
from click.testing import CliRunner, Result

import warpmatch as wm
from warpmatch.cli import cli
from warpmatch.errors import QueryError
from warpmatch.graph.generators import random_labels
from warpmatch.query.io import resolve_query, write_query_file
from warpmatch.query.model import Query


def run(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A vertex- and edge-labeled circulant with chords (dense queries exist), as t/v/e,
    and the same edges unlabeled, as an edge list."""
    d = tmp_path_factory.mktemp("sq")
    n = 120
    rng = np.random.default_rng(0)
    src = np.concatenate([np.arange(n)] * 3 + [rng.integers(0, n, 60)])
    dst = np.concatenate([(np.arange(n) + o) % n for o in (1, 2, 3)] + [rng.integers(0, n, 60)])
    keep = src != dst
    src, dst = src[keep], dst[keep]
    el = (np.minimum(src, dst) + np.maximum(src, dst)) % 3
    lab = wm.Graph.from_edges(src, dst, n=n, vertex_labels=random_labels(n, 4, seed=1),
                              edge_labels=el, name="lab", warn=False)
    plain = wm.Graph.from_edges(src, dst, n=n, name="plain", warn=False)
    out = {"lab": d / "lab.graph", "plain": d / "plain.txt"}
    wm.write_graph(lab, out["lab"])
    wm.write_graph(plain, out["plain"])
    return out


def _same(a: Query, b: Query) -> bool:
    return (a.k == b.k and a.directed == b.directed
            and np.array_equal(a.vertex_labels, b.vertex_labels)
            and sorted(zip(map(tuple, a.edges.tolist()), a.edge_labels.tolist()))
            == sorted(zip(map(tuple, b.edges.tolist()), b.edge_labels.tolist())))


@pytest.mark.parametrize("text", ["a:1-b:2, b-[3]-c:1, c-[0]-a",    # t/v/e, edge labels
                                  "a:1-b:2, b-c:1, c-a",              # t/v/e, no edge labels
                                  "a-b, b-c:4",                       # wildcard: DSL only
                                  "a->b, b->c, c->a"])                # directed: DSL only
def test_write_query_file_reads_back(tmp_path: Path, text: str) -> None:
    q = Query.parse(text)
    t = tmp_path / "q.txt"
    write_query_file(q, t)
    assert _same(resolve_query(t, directed=q.directed), q)
    g = tmp_path / "q.graph"
    tve_ok = not q.directed and bool((q.vertex_labels >= 0).all()) and (
        bool((q.edge_labels >= 0).all()) or bool((q.edge_labels < 0).all()))
    if tve_ok:
        write_query_file(q, g)
        assert g.read_text().startswith(f"t {q.k} {q.m}\n")
        assert _same(resolve_query(g), q)
    else:
        with pytest.raises(QueryError, match="t/v/e format cannot hold"):
            write_query_file(q, g)
        assert not g.exists() and not list(tmp_path.glob(".q.graph*"))


@pytest.mark.parametrize("density", ["dense", "sparse"])
def test_sampled_sets_are_deterministic_connected_and_match(graphs: dict[str, Path],
                                                            tmp_path: Path, density: str
                                                            ) -> None:
    g = wm.read_graph(graphs["lab"])
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    res = run("sample-queries", graphs["lab"], "-k", 6, "-n", 4, "--seed", 7, f"--{density}",
              "-o", a, "--json")
    assert res.exit_code == 0, res.output
    info = last_json(res)
    files = [Path(r["file"]) for r in info["queries"]]
    assert [f.name for f in files] == [f"query_{density}_6_{i}.graph" for i in range(1, 5)]
    assert run("sample-queries", graphs["lab"], "-k", 6, "-n", 4, "--seed", 7,
               f"--{density}", "-o", b).exit_code == 0
    assert run("sample-queries", graphs["lab"], "-k", 6, "-n", 2, "--seed", 7,
               f"--{density}", "-o", c).exit_code == 0
    for f in files:
        assert f.read_bytes() == (b / f.name).read_bytes()
    assert sorted(p.name for p in c.iterdir()) == [f.name for f in files[:2]]
    assert all(f.read_bytes() == (c / f.name).read_bytes() for f in files[:2])
    other = tmp_path / "d"
    run("sample-queries", graphs["lab"], "-k", 6, "-n", 4, "--seed", 8, f"--{density}",
        "-o", other)
    assert any(f.read_bytes() != (other / f.name).read_bytes() for f in files)
    for f, r in zip(files, info["queries"]):
        q = resolve_query(f)                 # (Query itself rejects a disconnected one)
        assert q.k == 6 and q.m == r["edges"]
        avg = 2 * q.m / q.k
        assert (avg >= 3) if density == "dense" else (avg < 3)
        assert (q.edge_labels >= 0).all()    # the graph's edge labels came along
        found = next(iter(wm.match(g, q, limit=1, backend="reference")))
        assert len(found) == 1


def test_unlabeled_graph_gives_dsl_files(graphs: dict[str, Path], tmp_path: Path) -> None:
    res = run("sample-queries", graphs["plain"], "-k", 5, "-n", 2, "--sparse", "-o", tmp_path)
    assert res.exit_code == 0, res.output
    g = wm.read_graph(graphs["plain"])
    for i in (1, 2):
        f = tmp_path / f"query_sparse_5_{i}.txt"
        q = resolve_query(f)
        assert (q.vertex_labels < 0).all() and wm.count(g, q, backend="cpu") >= 1
    assert_clean_error(run("sample-queries", graphs["plain"], "-k", 5, "-o", tmp_path,
                           "--query-format", "graph"), "t/v/e", "unlabeled vertices")


def test_sample_queries_errors(graphs: dict[str, Path], tmp_path: Path) -> None:
    assert_clean_error(run("sample-queries", graphs["lab"], "-k", 3, "-o", tmp_path),
                       "query 1 of 1", "at least 4 vertices")
    assert_clean_error(run("sample-queries", graphs["lab"], "-k", 500, "-o", tmp_path),
                       "query 1 of 1")
    assert_clean_error(run("sample-queries", graphs["lab"], "-k", 5, "-n", 0, "-o", tmp_path),
                       "--count")
    assert_clean_error(run("sample-queries", tmp_path / "missing.graph", "-k", 5),
                       "missing.graph")
    assert not any(tmp_path.iterdir())
