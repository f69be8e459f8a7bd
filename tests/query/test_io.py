"""Query files (t/v/e) and resolve_query's order of interpretation."""
from __future__ import annotations

import random
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from warpmatch.errors import InputCleanupWarning, InputFormatError, QueryError
from warpmatch.query import Query, check_direction, get_pattern, read_query_file, resolve_query


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_read_tve_basic(tmp_path: Path) -> None:
    p = write(tmp_path, "q1.graph", "t 3 3\nv 0 5\nv 1 6 2\nv 2 5\ne 0 1 0\ne 1 2 0\ne 2 0 0\n")
    q = read_query_file(p)
    assert (q.k, q.m, q.directed, q.name) == (3, 3, False, "q1")
    assert q.vertex_labels.tolist() == [5, 6, 5]
    assert q.edge_labels.tolist() == [0, 0, 0]
    assert q.names == ("0", "1", "2")


def test_read_tve_without_edge_labels_and_arbitrary_ids(tmp_path: Path) -> None:
    p = write(tmp_path, "q.graph", "t 3 2\nv 10 1 1\nv 7 2 2\nv 42 3 1\ne 10 7\ne 42 7\n")
    q = read_query_file(p)
    assert q.names == ("10", "7", "42")
    assert q.vertex_labels.tolist() == [1, 2, 3]
    assert sorted(map(tuple, q.edges.tolist())) == [(0, 1), (1, 2)]
    assert q.edge_labels.tolist() == [-1, -1]
    assert q.index_of("42") == 2


def test_read_tve_duplicates_are_dropped_with_a_warning(tmp_path: Path) -> None:
    p = write(tmp_path, "q.graph", "v 0 1\nv 1 1\ne 0 1 0\ne 1 0 0\n")
    with pytest.warns(InputCleanupWarning, match="1 duplicate"):
        q = read_query_file(p)
    assert q.m == 1


@pytest.mark.parametrize("text,fragment", [
    ("v 0 1\nv 1 1\ne 0 2 0\n", "names vertex 2, which has no 'v' line"),
    ("v 0 1\nv 1 1\nv 1 2\ne 0 1\n", "vertex 1 has more than one 'v' line"),
    ("v 0 1\nv 1 1\ne 0 0 0\ne 0 1 0\n", "self-loop"),
    ("v 0 1\nv 1 1\ne 0 1 0\ne 1 0 3\n", "lists an edge twice"),
    ("v 0 1\nv 1 1\nv 2 1\ne 0 1\n", "disconnected"),
    ("t 0 0\n", "no 'v' lines"),
])
def test_read_tve_errors_name_the_file(tmp_path: Path, text: str, fragment: str) -> None:
    p = write(tmp_path, "bad.graph", text)
    with pytest.raises(InputFormatError) as ei:
        read_query_file(p)
    assert str(ei.value).startswith(str(p))
    assert fragment in str(ei.value)


def test_read_tve_malformed_line_has_file_and_line(tmp_path: Path) -> None:
    p = write(tmp_path, "bad.graph", "t 2 1\nv 0 1\nv one 1\ne 0 1\n")
    with pytest.raises(InputFormatError) as ei:
        read_query_file(p)
    assert ei.value.line == 3


def test_labeled_benchmark_queries(data_dir: Path) -> None:
    root = data_dir / "labeled"
    if not root.is_dir():
        pytest.skip(f"{root} absent")
    rng = random.Random(7)
    checked = 0
    for ds in ("yeast", "human", "hprd"):
        files = sorted((root / ds / "query_graph").glob("*.graph"))
        if not files:
            continue
        for f in rng.sample(files, 6):
            q = read_query_file(f)
            lines = f.read_text().split("\n")
            vs = [ln.split() for ln in lines if ln.startswith("v ")]
            es = [ln.split() for ln in lines if ln.startswith("e ")]
            size = int(f.stem.split("_")[2])            # query_{dense,sparse}_{16,24,32}_{i}
            assert q.k == len(vs) == size
            assert q.m == len(es)
            assert q.vertex_labels.tolist() == [int(v[2]) for v in vs]
            assert set(q.edge_labels.tolist()) == {0}   # kept as read: 'e u v 0'
            assert q.name == f.stem and not q.directed
            checked += 1
    if not checked:
        pytest.skip("no labeled query files found")


# ------------------------------------------------------------------ resolve_query
def test_resolve_passes_queries_and_networkx() -> None:
    q = get_pattern("triangle")
    assert resolve_query(q) is q
    g = nx.DiGraph([("x", "y"), ("y", "z")])
    r = resolve_query(g)
    assert r.directed and r.names == ("x", "y", "z") and r.m == 2
    assert resolve_query(nx.path_graph(4)).m == 3


def test_resolve_pattern_then_file_then_dsl(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "triangle", "a-b")                     # a file named like a pattern
    assert resolve_query("triangle").m == 3                # the pattern wins
    assert resolve_query("./triangle").m == 1              # an explicit path reads the file
    assert resolve_query(Path("triangle")).m == 1          # os.PathLike is always a path
    write(tmp_path, "q.dsl", "# a DSL file\na-b-c-a\n")
    q = resolve_query("q.dsl")
    assert (q.m, q.name) == (3, "q")
    write(tmp_path, "q.graph", "t 1 1\nv 0 1\nv 1 2\ne 0 1 0\n")
    assert resolve_query("q.graph").vertex_labels.tolist() == [1, 2]
    write(tmp_path, "one.txt", "tri\t3\t0-1, 1-2, 0-2\n")
    assert resolve_query("one.txt").name == "tri"
    write(tmp_path, "two.txt", "tri\t3\t0-1, 1-2, 0-2\np3\t3\t0-1, 1-2\n")
    with pytest.raises(QueryError, match="holds 2 patterns"):
        resolve_query("two.txt")
    assert resolve_query("a-b, b-c").m == 2


def test_resolve_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such query file"):
        resolve_query(str(tmp_path / "missing.graph"))
    with pytest.raises(FileNotFoundError):
        resolve_query("missing.graph")
    with pytest.raises(FileNotFoundError):
        resolve_query(tmp_path / "missing.graph")
    with pytest.raises(QueryError, match="did you mean 'diamond'"):
        resolve_query("diamnod")
    with pytest.raises(QueryError, match=r"unknown pattern 'a' \(and no query file of that "
                                         r"name exists\).*one-vertex query carries a label"):
        resolve_query("a")
    assert resolve_query("a:3").k == 1
    with pytest.raises(QueryError, match="at column"):
        resolve_query("a-b-")
    with pytest.raises(TypeError):
        resolve_query(3.5)


def test_resolve_direction() -> None:
    with pytest.raises(QueryError,
                       match=r"directed but the query 'triangle' is undirected.*'a->b'"):
        resolve_query("triangle", directed=True)
    assert resolve_query("a->b->c", directed=True).directed
    assert resolve_query("a->b->c", directed=None).directed
    assert not resolve_query("a-b", directed=False).directed
    with pytest.raises(QueryError, match="directed but the graph 'g' is undirected"):
        check_direction(resolve_query("a->b"), False, "g")
    check_direction(resolve_query("a-b"), False)


def test_query_from_tve_matches_query_from_dsl(tmp_path: Path) -> None:
    p = write(tmp_path, "d.graph", "v 0 0\nv 1 0\nv 2 0\nv 3 0\n"
                                   "e 0 1\ne 0 2\ne 1 2\ne 1 3\ne 2 3\n")
    a, b = read_query_file(p), get_pattern("diamond")
    assert np.array_equal(a.adjacency(), b.adjacency())
    assert isinstance(a, Query)


def test_index_of_prefers_names_over_ids() -> None:
    q = resolve_query("7-3, 3-0")
    assert [q.index_of(x) for x in ("7", "3", "0", 0, 7)] == [0, 1, 2, 2, 0]
    with pytest.raises(QueryError, match="unknown query vertex '1'"):
        q.index_of("1")        # not a name, and integer names rule out ids
    t = resolve_query("a-b-c")
    assert [t.index_of(x) for x in ("a", "c", 1, "2")] == [0, 2, 1, 2]
    with pytest.raises(QueryError, match="the query's vertices are a, b, c"):
        t.index_of("d")


def test_from_edges_with_array_labels_and_no_edges() -> None:
    q = Query.from_edges([], vertex_labels=np.array([3]))
    assert (q.k, q.vertex_labels.tolist()) == (1, [3])


@pytest.mark.parametrize("kw,fragment", [
    ({"edges": [(0, 2**32 + 1)], "k": 2}, "edge endpoint out of range 0..1"),
    ({"edges": [(0, 1)], "vertex_labels": np.array([2**32 + 5, 5])}, "label is too large"),
    ({"edges": [(0, 1)], "edge_labels": [2**31]}, "label is too large"),
    ({"edges": [(0, 1)], "edge_labels": [2**64]}, "int64 range"),
])
def test_query_values_beyond_int32_do_not_wrap(kw: dict, fragment: str) -> None:
    # casting straight to int32 used to turn 0-(2**32+1) into 0-1 and 2**32+5 into 5
    with pytest.raises(QueryError, match=re.escape(fragment)):
        Query.from_edges(**kw)
