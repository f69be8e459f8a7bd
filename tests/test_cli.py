"""Tests of the ``warpmatch`` command line: every command, --json, error paths, output files."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from cli_helpers import assert_clean_error, last_json
from click.testing import CliRunner, Result

import warpmatch as wm
from warpmatch import __version__
from warpmatch.cli import cli, parse_anchors, read_id_file
from warpmatch.errors import InputFormatError

TRI = "a-b, b-c, c-a"
JSON_KEYS = {"count", "mode", "induced", "backend", "seconds"}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def nxgraph() -> nx.Graph:
    return nx.barabasi_albert_graph(80, 4, seed=21)


@pytest.fixture(scope="module")
def edge_file(tmp_path_factory, nxgraph) -> Path:
    """A SNAP-style edge list whose ids are 1000 + 7*v (not 0..n-1)."""
    p = tmp_path_factory.mktemp("g") / "graph.txt"
    lines = ["# Undirected test graph", "# FromNodeId\tToNodeId"]
    lines += [f"{1000 + 7 * u}\t{1000 + 7 * v}" for u, v in nxgraph.edges()]
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.fixture(scope="module")
def graph(edge_file) -> wm.Graph:
    return wm.read_graph(edge_file)


def ref_rows(graph: wm.Graph, query: str, **kw) -> set[tuple[int, ...]]:
    return {tuple(r) for b in wm.match(graph, query, backend="reference", **kw) for r in b.tolist()}


# ------------------------------------------------------------ top level
def test_version_and_help() -> None:
    res = run("--version")
    assert res.exit_code == 0 and __version__ in res.stdout
    res = run("--help")
    assert res.exit_code == 0
    for word in ("Examples", "count", "match", "explain", "convert", "generate", "demo",
                 "embeddings", "subgraphs", "--anchor"):
        assert word in res.stdout, word
    for cmd in ("count", "match", "explain", "info", "convert", "patterns", "demo"):
        sub = run(cmd, "--help")
        assert sub.exit_code == 0 and "Usage" in sub.stdout, cmd
    assert "Example" in run("count", "--help").stdout


@pytest.mark.parametrize("cmd", [("count",), ("match",), ("explain",), ("info",), ("convert",),
                                 ("generate",), ("generate", "rmat"), ("generate", "ba"),
                                 ("patterns",), ("demo",)])
def test_every_command_help_shows_examples(cmd: tuple[str, ...]) -> None:
    # README: "warpmatch --help and warpmatch COMMAND --help show examples"
    res = run(*cmd, "--help")
    assert res.exit_code == 0 and "Example" in res.stdout, cmd
    assert f"warpmatch {' '.join(cmd)}" in res.stdout.split("Example", 1)[1], cmd


# ------------------------------------------------------------------ count
def test_count_human_and_json(edge_file, graph) -> None:
    want = wm.count(graph, "triangle", backend="reference")
    res = run("count", edge_file, "triangle", "--json")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == f"triangle: {want:,} embeddings (non-induced)"
    d = last_json(res)
    assert JSON_KEYS <= d.keys()
    assert d["count"] == want and d["mode"] == "embeddings" and d["induced"] is False
    assert d["backend"] in ("cpu", "gpu") and d["seconds"] >= 0 and d["graph"] == str(edge_file)


@pytest.mark.parametrize("query", ["diamond", "a-b, b-c, c-d, d-a", "tailed-triangle"])
def test_count_modes_equal_reference(edge_file, graph, query) -> None:
    for extra in ([], ["--induced"]):
        for mode in ("embeddings", "subgraphs"):
            want = wm.count(graph, query, mode=mode, induced=bool(extra), backend="reference")
            d = last_json(run("count", edge_file, query, "--mode", mode, *extra, "--json"))
            assert d["count"] == want and d["mode"] == mode and d["induced"] is bool(extra)
    out = run("count", edge_file, query, "--mode", "subgraphs", "--induced").stdout
    assert "subgraph" in out and "(induced)" in out


def test_count_reference_backend(edge_file, graph) -> None:
    d = last_json(run("count", edge_file, "square", "--backend", "reference", "--json"))
    assert d["backend"] == "reference" and d["count"] == wm.count(graph, "square")


def test_count_query_file_and_labels(tmp_path) -> None:
    g = tmp_path / "lab.graph"
    # a labeled t/v/e graph: a 4-cycle 0-1-2-3 with a chord 0-2, labels 5,6,5,7
    g.write_text("t 4 5\nv 0 5\nv 1 6\nv 2 5\nv 3 7\ne 0 1 0\ne 1 2 0\ne 2 3 0\ne 3 0 0\ne 0 2 0\n")
    q = tmp_path / "q.graph"
    q.write_text("t 3 3\nv 0 5\nv 1 6\nv 2 5\ne 0 1\ne 1 2\ne 2 0\n")
    d = last_json(run("count", g, q, "--json"))
    assert d["count"] == 2                       # (0,1,2) and (2,1,0)
    d = last_json(run("count", g, "a:5-b:7, b-c:5, c-a", "--mode", "subgraphs", "--json"))
    assert d["count"] == 1


def test_count_directed(tmp_path) -> None:
    D = nx.gnp_random_graph(30, 0.2, seed=3, directed=True)
    p = tmp_path / "d.txt"
    p.write_text("".join(f"{u} {v}\n" for u, v in D.edges()))
    gd = wm.read_graph(p, directed=True)
    want = wm.count(gd, "a->b, b->c, c->a", backend="reference")
    d = last_json(run("count", p, "a->b, b->c, c->a", "--directed", "--json"))
    assert d["count"] == want
    # a directed query on a graph read as undirected is an error that says what to do
    assert_clean_error(run("count", p, "a->b, b->c, c->a"), "directed")


# ---------------------------------------------------------------- anchors
def test_anchor_list_and_file(tmp_path, edge_file, graph) -> None:
    q = "a-b, b-c, c-a, c-d"
    rows = np.array(sorted(ref_rows(graph, q)))
    ids = [1000 + 7 * v for v in (0, 1, 2, 5)]
    want = int(np.isin(rows[:, 0], ids).sum())
    d = last_json(run("count", edge_file, q, "--anchor", "a=" + ",".join(map(str, ids)), "--json"))
    assert d["count"] == want and want > 0
    idfile = tmp_path / "ids.txt"
    idfile.write_text("# accounts\n" + "\n".join(map(str, ids[:2])) + "\n" + f"{ids[2]}, {ids[3]}\n")
    d = last_json(run("count", edge_file, q, "--anchor", f"a=@{idfile}", "--json"))
    assert d["count"] == want
    # two anchors
    want2 = int((np.isin(rows[:, 0], ids) & np.isin(rows[:, 3], ids)).sum())
    d = last_json(run("count", edge_file, q, "--anchor", f"a=@{idfile}",
                      "--anchor", "d=" + ",".join(map(str, ids)), "--json"))
    assert d["count"] == want2


def test_anchor_errors(tmp_path, edge_file) -> None:
    assert_clean_error(run("count", edge_file, TRI, "--anchor", "a=1001"), "1001")
    assert_clean_error(run("count", edge_file, TRI, "--anchor", "a=x,y"), "'x'", code=2)
    assert_clean_error(run("count", edge_file, TRI, "--anchor", "a"), "--anchor", code=2)
    assert_clean_error(run("count", edge_file, TRI, "--anchor", "q=1000"), "'q'")
    assert_clean_error(run("count", edge_file, "triangle", "--anchor", "a=1000"), "'a'")
    assert_clean_error(run("count", edge_file, TRI, "--anchor", "a=1000", "--anchor", "a=1007"),
                       "twice")
    bad = tmp_path / "bad_ids.txt"
    bad.write_text("1000\n1007\nfoo\n")
    assert_clean_error(run("count", edge_file, TRI, "--anchor", f"a=@{bad}"), f"{bad}:3")
    assert_clean_error(run("count", edge_file, TRI, "--anchor", "a=@/no/such/ids.txt"),
                       "/no/such/ids.txt")


def test_parse_anchor_helpers(tmp_path) -> None:
    assert parse_anchors(["a=1,2", "b= 3"]) == {"a": [1, 2], "b": [3]}
    f = tmp_path / "ids.txt"
    f.write_text("1 2,3 # comment\n\n4\n")
    assert read_id_file(str(f)) == [1, 2, 3, 4]
    f.write_text("# nothing\n")
    with pytest.raises(InputFormatError):
        read_id_file(str(f))


# ------------------------------------------------------------------ match
@pytest.mark.parametrize("ext", ["parquet", "csv", "npy"])
def test_match_round_trip(tmp_path, edge_file, graph, ext) -> None:
    out = tmp_path / f"m.{ext}"
    q = "a-b, b-c, c-a, c-d"
    res = run("match", edge_file, q, "-o", out, "--mode", "subgraphs", "--batch-size", "50",
              "--json")
    assert res.exit_code == 0, res.stderr
    want = ref_rows(graph, q, mode="subgraphs")
    got = _read_rows(out, ext, ["a", "b", "c", "d"])
    assert set(got) == want and len(got) == len(want)
    d = last_json(res)
    assert JSON_KEYS <= d.keys() and d["count"] == len(want) and d["mode"] == "subgraphs"
    assert "written to" in res.stdout and "subgraphs (non-induced)" in res.stdout
    # with a limit: exactly that many rows, each a real match
    res = run("match", edge_file, q, "-o", out, "--limit", "17", "--json")
    got = _read_rows(out, ext, ["a", "b", "c", "d"])
    assert len(got) == 17 and set(got) <= ref_rows(graph, q)
    assert last_json(res)["limit_reached"] is True
    assert [p.name for p in tmp_path.iterdir()] == [out.name]    # no temporary files left


def _read_rows(path: Path, ext: str, names: list[str]) -> list[tuple[int, ...]]:
    if ext == "npy":
        a = np.load(path)
        assert a.dtype == np.int64 and a.shape[1] == len(names)
        return [tuple(r) for r in a.tolist()]
    t = pq.read_table(path) if ext == "parquet" else pcsv.read_csv(path)
    assert t.column_names == names
    return list(zip(*(t.column(n).to_pylist() for n in names)))


def test_match_empty_result_and_anchors(tmp_path, edge_file, graph) -> None:
    g = tmp_path / "lab.graph"
    g.write_text("t 3 3\nv 0 1\nv 1 1\nv 2 1\ne 0 1\ne 1 2\ne 2 0\n")
    out = tmp_path / "none.csv"
    res = run("match", g, "a:3-b, b-c, c-a", "-o", out)  # label 3 absent: 0 rows, a warning
    assert res.exit_code == 0, res.stderr
    assert out.read_text().strip() == "a,b,c"
    assert "warning" in res.stderr
    out = tmp_path / "anch.npy"
    res = run("match", edge_file, "triangle", "-o", out, "--anchor", "0=1000,1007")
    assert res.exit_code == 0, res.stderr
    a = np.load(out)
    want = {r for r in ref_rows(graph, TRI) if r[0] in (1000, 1007)}
    assert {tuple(r) for r in a.tolist()} == want


def test_match_is_atomic(tmp_path, edge_file, monkeypatch) -> None:
    out = tmp_path / "m.parquet"
    out.write_bytes(b"previous content")

    def broken(*args, **kwargs):
        def gen():
            yield np.zeros((3, 3), dtype=np.int64)
            raise wm.WarpmatchError("engine failed half-way")
        return gen()
    monkeypatch.setattr("warpmatch.api.match", broken)
    res = run("match", edge_file, "triangle", "-o", out)
    assert_clean_error(res, "half-way")
    assert out.read_bytes() == b"previous content"
    assert [p.name for p in tmp_path.iterdir()] == ["m.parquet"]


def test_match_output_errors(tmp_path, edge_file) -> None:
    assert_clean_error(run("match", edge_file, "triangle", "-o", tmp_path / "m.xlsx"), ".xlsx")
    assert_clean_error(run("match", edge_file, "triangle", "-o", tmp_path / "no" / "m.csv"),
                       "does not exist")
    assert_clean_error(run("match", edge_file, "triangle"), "--output", code=2)


# ------------------------------------------------------ explain / info
def test_explain(edge_file) -> None:
    res = run("explain", edge_file, "house", "--mode", "subgraphs", "--anchor", "0=1000")
    assert res.exit_code == 0, res.stderr
    assert "house" in res.stdout and "subgraphs" in res.stdout


def test_info(edge_file, nxgraph) -> None:
    res = run("info", edge_file, "--json")
    assert res.exit_code == 0, res.stderr
    d = last_json(res)
    assert d["vertices"] == nxgraph.number_of_nodes() and d["edges"] == nxgraph.number_of_edges()
    assert "vertices" in res.stdout


def test_info_and_count_with_edge_label_partitions(tmp_path) -> None:
    """info lists each edge label's partition; a query whose edges all name labels runs on
    theirs (count --json says so, explain too), with the whole graph's count."""
    p = tmp_path / "el.graph"
    p.write_text("t 4 5\nv 0 0\nv 1 0\nv 2 0\nv 3 0\n"
                 "e 0 1 1\ne 1 2 1\ne 2 0 1\ne 2 3 2\ne 3 0 2\n")
    res = run("info", p, "--json")
    assert res.exit_code == 0, res.stderr
    d = last_json(res)
    parts = d["edge_label_partitions"]
    assert [(d["label"], d["entries"], d["vertices"]) for d in parts] == [(1, 6, 3), (2, 4, 3)]
    # GenMap (Alg. 2) renames label 1's vertices first, the ones in both partitions (0, 2)
    # before 1, then 3: label 1 is new ids 0-2, one interval; label 2 is 0, 1 and 3, two
    # (the greedy order makes only the partition it starts from one interval for sure)
    assert [d["intervals"] for d in parts] == [1, 2]
    assert d["interval_pcsr"]["bytes"] == sum(p["bytes"] for p in parts)
    assert "edge label partitions : 2 in interval-PCSR" in res.stdout
    assert "3 vertices in 1 interval," in res.stdout
    res = run("count", p, "a-[1]-b-[1]-c-[1]-a", "--json")
    assert res.exit_code == 0, res.stderr
    d = last_json(res)
    assert d["count"] == 6 and d["edge_label_partitions"] == {
        "labels": [1], "edges": 3, "graph_edges": 5}
    res = run("explain", p, "a-[1]-b-[1]-c-[1]-a")
    assert res.exit_code == 0 and "edge label partitions" in res.stdout, res.stderr


def test_cleanup_warning_is_one_line(tmp_path) -> None:
    p = tmp_path / "dirty.txt"
    p.write_text("1 2\n2 3\n3 1\n1 1\n2 1\n")     # a self-loop and a duplicate
    res = run("count", p, "triangle", "--mode", "subgraphs")
    assert res.exit_code == 0 and "triangle: 1 subgraph (non-induced)" in res.stdout
    warns = [ln for ln in res.stderr.splitlines() if "warning" in ln]
    assert len(warns) == 1 and warns[0].startswith("warpmatch: warning:"), res.stderr
    assert "self-loop" in warns[0]


def test_unknown_label_warning(tmp_path) -> None:
    g = tmp_path / "lab.graph"
    g.write_text("t 3 3\nv 0 1\nv 1 1\nv 2 1\ne 0 1\ne 1 2\ne 2 0\n")
    res = run("count", g, "a:9-b, b-c, c-a", "--json")
    assert res.exit_code == 0 and last_json(res)["count"] == 0
    assert "warpmatch: warning:" in res.stderr and "9" in res.stderr


# ------------------------------------------------ convert / generate
def test_convert_round_trip(tmp_path, edge_file, graph) -> None:
    want = wm.count(graph, "diamond")
    for name in ("g.wmg", "g.parquet", "g.csv", "g.mtx", "g.txt"):
        out = tmp_path / name
        res = run("convert", edge_file, out)
        assert res.exit_code == 0, (name, res.stderr)
        assert out.exists() and f"wrote {out}" in res.stdout
        d = last_json(run("count", out, "diamond", "--json"))
        assert d["count"] == want, name
    leftovers = [p.name for p in tmp_path.iterdir() if "partial" in p.name]
    assert leftovers == []


def test_convert_degree_order(tmp_path, edge_file, graph) -> None:
    """--degree-order stores ids ascending by degree and keeps every id a user sees."""
    out = tmp_path / "d.wmg"
    res = run("convert", edge_file, out, "--degree-order")
    assert res.exit_code == 0, res.stderr
    assert "ids ascending by degree" in res.stdout
    h = wm.read_graph(out)
    assert np.all(np.diff(h.degree) >= 0) and h.name == graph.name

    def edges(g):            # undirected edges as sorted pairs of file ids
        ids = np.arange(g.n) if g.ids is None else np.asarray(g.ids)
        src = np.repeat(np.arange(g.n), np.diff(g.indptr))
        a, b = ids[src], ids[np.asarray(g.indices)]
        return sorted(set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist())))
    assert edges(h) == edges(graph)
    for q in ("square", "diamond"):
        d = last_json(run("count", out, q, "--json"))
        assert d["count"] == wm.count(graph, q, vertex_order="given")
    for i, src in enumerate((out, edge_file)):
        assert run("match", src, "square", "-o", tmp_path / f"m{i}.csv").exit_code == 0
    got, want = (_read_rows(tmp_path / f"m{i}.csv", "csv", ["0", "1", "2", "3"])
                 for i in (0, 1))
    assert sorted(got) == sorted(want) and len(got) > 0
    # labels move with their vertices
    lab = wm.Graph.from_edges([0, 0, 0, 1], [1, 2, 3, 2], vertex_labels=[5, 6, 7, 8])
    src = tmp_path / "lab.wmg"
    wm.write_graph(lab, src)
    assert run("convert", src, tmp_path / "lab2.wmg", "--degree-order").exit_code == 0
    lab2 = wm.read_graph(tmp_path / "lab2.wmg")
    assert lab2.ids.tolist() == [3, 1, 2, 0] and lab2.vertex_labels.tolist() == [8, 6, 7, 5]
    # a second pass finds the order there already
    res = run("convert", tmp_path / "lab2.wmg", tmp_path / "lab3.wmg", "--degree-order")
    assert res.exit_code == 0 and "already so" in res.stdout
    # formats read back by file id would lose the order: refused before reading
    res = run("convert", edge_file, tmp_path / "d.txt", "--degree-order")
    assert res.exit_code == 2 and "--degree-order needs a .wmg target" in res.stderr
    assert not (tmp_path / "d.txt").exists()


def test_generate(tmp_path) -> None:
    out = tmp_path / "r.wmg"
    res = run("generate", "rmat", out, "--scale", "8", "--edge-factor", "4", "--seed", "3")
    assert res.exit_code == 0, res.stderr
    g = wm.read_graph(out)
    assert 0 < g.n <= 256 and g.num_edges > 0
    res2 = run("generate", "rmat", tmp_path / "r2.wmg", "--scale", "8", "--edge-factor", "4",
               "--seed", "3")
    assert res2.exit_code == 0
    g2 = wm.read_graph(tmp_path / "r2.wmg")
    assert np.array_equal(g.indices, g2.indices)          # seeded: reproducible
    out = tmp_path / "ba.graph"
    res = run("generate", "ba", out, "--n", "300", "--m", "3", "--labels", "4", "--zipf",
              "--seed", "1")
    assert res.exit_code == 0, res.stderr
    assert "labels" in res.stdout
    res = run("info", out, "--json")
    assert res.exit_code == 0, res.stderr
    assert last_json(res)["vertex_labels"] > 1


@pytest.mark.parametrize("cmd", [("ba", "--n", "300"), ("rmat", "--scale", "6")])
def test_generate_labels_need_a_format_that_keeps_them(tmp_path, cmd) -> None:
    # an edge list drops vertex labels: that used to print "4 uniform labels" and write none
    out = tmp_path / "g.txt"
    res = run("generate", cmd[0], out, *cmd[1:], "--labels", "4")
    assert_clean_error(res, "--labels", "g.txt", code=2)
    assert not out.exists()


def test_generate_and_convert_check_the_target_first(tmp_path, edge_file) -> None:
    # the error names TARGET, not the hidden temporary file, and comes before any work
    res = run("generate", "ba", tmp_path / "g.foo", "--n", "300")
    assert_clean_error(res, "g.foo")
    assert ".partial" not in res.stderr
    res = run("convert", tmp_path / "missing.txt", tmp_path / "g.foo")
    assert_clean_error(res, "cannot tell the output format", "g.foo")   # not "no such file"
    assert ".partial" not in res.stderr
    assert [p.name for p in tmp_path.iterdir()] == []


def test_convert_lossy_warning_names_the_target(tmp_path) -> None:
    # labels are refused, not warned about (tests/test_output_files.py); ids that Matrix
    # Market renumbers 1..n still warn, naming the target
    src = tmp_path / "ids.txt"
    src.write_text("10 20\n20 30\n30 10\n")
    res = run("convert", src, tmp_path / "out.mtx")
    assert res.exit_code == 0, res.stderr
    warn = [ln for ln in res.stderr.splitlines() if ln.startswith("warpmatch: warning:")]
    assert len(warn) == 1 and str(tmp_path / "out.mtx") in warn[0], res.stderr
    assert ".partial" not in res.stderr


def test_generate_labels_round_trip(tmp_path) -> None:
    out = tmp_path / "ba.wmg"
    assert run("generate", "ba", out, "--n", "200", "--m", "2", "--labels", "3").exit_code == 0
    g = wm.read_graph(out)
    assert g.vertex_labels is not None and set(np.unique(g.vertex_labels)) <= {0, 1, 2}


def test_generate_edge_labels(tmp_path) -> None:
    out = tmp_path / "el.wmg"
    res = run("generate", "rmat", out, "--scale", "8", "--edge-factor", "4", "--labels", "3",
              "--edge-labels", "5", "--seed", "2")
    assert res.exit_code == 0, res.stderr
    assert "5 uniform edge labels" in res.stdout
    g = wm.read_graph(out)
    assert g.edge_labels is not None and set(np.unique(g.edge_labels)) == set(range(5))
    # the edge labels have a seed of their own: the vertex labels are those without them
    plain = tmp_path / "vl.wmg"
    assert run("generate", "rmat", plain, "--scale", "8", "--edge-factor", "4", "--labels",
               "3", "--seed", "2").exit_code == 0
    h = wm.read_graph(plain)
    assert np.array_equal(g.vertex_labels, h.vertex_labels)
    assert np.array_equal(g.indices, h.indices) and h.edge_labels is None
    # an edge list keeps edge labels (a third column); Matrix Market does not
    txt = tmp_path / "el.txt"
    assert run("generate", "ba", txt, "--n", "50", "--m", "2", "--edge-labels", "3").exit_code == 0
    assert wm.read_graph(txt).edge_labels is not None       # its first line says so
    assert "edge labels        : 3" in run("info", txt).stdout
    res = run("generate", "ba", tmp_path / "el.mtx", "--n", "50", "--edge-labels", "3")
    assert_clean_error(res, "--edge-labels", "el.mtx", code=2)
    assert not (tmp_path / "el.mtx").exists()


# ---------------------------------------------------------- patterns / demo
def test_patterns() -> None:
    res = run("patterns", "--json")
    assert res.exit_code == 0
    d = last_json(res)
    names = {p["name"] for p in d["patterns"]}
    assert {"triangle", "square", "diamond", "tailed-triangle", "house"} <= names
    assert "triangle" in res.stdout


def test_demo_small() -> None:
    res = run("demo", "--n", "2000", "--m", "4", "--json")
    assert res.exit_code == 0, res.stderr
    d = last_json(res)
    assert {"backend", "seconds", "mode", "induced", "patterns"} <= d.keys()
    rows = {p["pattern"]: p for p in d["patterns"]}
    assert {"triangle", "square", "diamond", "tailed-triangle", "4-clique", "house",
            "5-cycle"} <= rows.keys()
    for p in rows.values():
        assert p["check"]
        sample = p["check_sample"]
        assert 0 < sample["vertices"] <= 32 and sample["embeddings"] <= 20_000
        assert sample["subgraphs"] > 0          # the sample is dense: the check is not vacuous
    assert rows["triangle"]["automorphisms"] == 6 and rows["square"]["automorphisms"] == 8
    header = next(ln for ln in res.stdout.splitlines() if ln.startswith("pattern"))
    assert "embeddings" in header and "subgraphs" in header and "backend" in header


def test_demo_counts_match_reference() -> None:
    """The demo's numbers are real counts: re-count its graph with the reference engine."""
    from warpmatch.graph import barabasi_albert
    d = last_json(run("demo", "--n", "300", "--m", "3", "--seed", "5",
                      "--patterns", "triangle,square", "--json"))
    g = barabasi_albert(300, 3, seed=5)
    for p in d["patterns"]:
        assert p["embeddings"] == wm.count(g, p["pattern"], backend="reference")
        assert p["subgraphs"] == wm.count(g, p["pattern"], mode="subgraphs", backend="reference")


def test_demo_check_says_when_the_sample_holds_no_match() -> None:
    """A tree (m=1) has no triangle: the check compared zero with zero, which is not "ok"."""
    res = run("demo", "--n", "100", "--m", "1", "--patterns", "triangle", "--backend", "cpu")
    assert res.exit_code == 0, res.stderr
    row = next(ln for ln in res.stdout.splitlines() if ln.startswith("triangle"))
    assert "none in sample" in row and " ok" not in row


def _count_plus_one(monkeypatch) -> None:
    from warpmatch.engine.reference import ReferenceEngine
    count = ReferenceEngine.count
    monkeypatch.setattr(ReferenceEngine, "count", lambda self, g, plan, progress=None:
                        count(self, g, plan, progress) + 1)


def _no_symmetry_breaking(monkeypatch) -> None:
    from warpmatch.plan import build
    sb = build.symmetry_breaking
    monkeypatch.setattr(build, "symmetry_breaking",
                        lambda q, colors=None: ([], sb(q, colors=colors)[1]))


@pytest.mark.parametrize("bug", [_count_plus_one, _no_symmetry_breaking])
def test_demo_check_catches_a_wrong_engine(monkeypatch, bug) -> None:
    """The check column is independent of the counts it checks.

    It used to compare embeddings with subgraphs x |Aut|, both from one
    symmetry-broken search, so an engine or restriction bug still read "ok".
    """
    args = ["demo", "--n", "300", "--m", "3", "--patterns", "triangle,square",
            "--backend", "reference"]
    bug(monkeypatch)
    res = run(*args)
    assert_clean_error(res, "reference engine disagree", "triangle", "square")
    assert res.stdout.count("MISMATCH") == 2
    monkeypatch.undo()
    res = run(*args)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.count("ok (") == 2 and "check (sample)" in res.stdout

# ------------------------------------------------------------ error paths
def test_error_missing_graph() -> None:
    assert_clean_error(run("count", "/no/such/graph.txt", "triangle"), "/no/such/graph.txt")
    assert_clean_error(run("info", "/no/such/graph.txt"), "/no/such/graph.txt")


def test_error_malformed_graph(tmp_path) -> None:
    p = tmp_path / "bad.txt"
    p.write_text("# header\n1 2\n2 3\n3 banana\n")
    assert_clean_error(run("count", p, "triangle"), f"{p}:4")


def test_error_bad_queries(edge_file) -> None:
    assert_clean_error(run("count", edge_file, "nosuchpattern"), "nosuchpattern")
    assert_clean_error(run("count", edge_file, "a-b, b-"), "a-b, b-")
    assert_clean_error(run("count", edge_file, "a-b, c-d"), "disconnected")
    assert_clean_error(run("count", edge_file, "triangle", "--mode", "all"), "--mode", code=2)
    assert_clean_error(run("frobnicate"), "frobnicate", code=2)


def _gpu_usable() -> bool:
    try:
        from warpmatch.engine import get_engine
        return bool(get_engine("gpu").available()[0])
    except wm.WarpmatchError:
        return False


@pytest.mark.skipif(_gpu_usable(), reason="a GPU is available here; the no-GPU error cannot occur")
def test_error_gpu_without_gpu(edge_file) -> None:
    assert_clean_error(run("count", edge_file, "triangle", "--backend", "gpu"), "gpu")


def test_debug_shows_traceback(edge_file) -> None:
    res = run("--debug", "count", edge_file, "a-b, c-d")
    assert res.exit_code != 0 and "Traceback" in res.stderr
    res = run("count", edge_file, "a-b, c-d", "--debug")
    assert res.exit_code != 0 and "Traceback" in res.stderr


# ------------------------------------------------- the installed entry point
def _subprocess(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONWARNINGS="ignore::DeprecationWarning")
    return subprocess.run([sys.executable, "-m", "warpmatch", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_subprocess_json_and_errors(tmp_path, edge_file, graph) -> None:
    p = _subprocess("count", edge_file, "triangle", "--mode", "subgraphs", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout.strip().splitlines()[-1])
    assert d["count"] == wm.count(graph, "triangle", mode="subgraphs")
    assert p.stderr == ""              # stderr is not a terminal: no progress bar
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n-\n")
    p = _subprocess("count", bad, "triangle")
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert f"{bad}:2" in p.stderr and len(p.stderr.strip().splitlines()) == 1
