"""Tests of ``warpmatch stream`` and ``stream-gen``: end to end, checked by static recounts."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from cli_helpers import assert_clean_error, last_json
from click.testing import CliRunner, Result

import warpmatch as wm
from warpmatch.cli import cli
from warpmatch.graph.csr import Graph
from warpmatch.stream.updates import read_updates, write_updates

JSON_KEYS = {"initial_count", "final_count", "added", "removed", "updates", "seconds", "mode",
             "induced", "backend", "invalid"}


def run(*args: str, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def replay_graph(g0: Graph, ups_path: Path) -> Graph:
    """The graph after the stream: G_0's edges plus insertions minus deletions (ids kept)."""
    ups = read_updates(ups_path)

    def key(a: int, b: int) -> tuple[int, int]:
        return (a, b) if g0.directed else (min(a, b), max(a, b))
    s, d = g0.edges()
    live = {key(a, b) for a, b in zip(g0.to_external(s).tolist(), g0.to_external(d).tolist())}
    for a, b, o in zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist()):
        if o > 0:
            live.add(key(a, b))
        else:
            live.remove(key(a, b))
    ext = np.array(sorted(live), dtype=np.int64).reshape(-1, 2)
    inner = g0.to_internal(ext.ravel()).reshape(-1, 2)
    return Graph.from_edges(inner[:, 0], inner[:, 1], n=g0.n, ids=g0.ids,
                            directed=g0.directed)


@pytest.fixture(scope="module")
def stream_files(tmp_path_factory) -> dict[str, Path]:
    """A BA graph with non-trivial ids, and G_0 + stream made by `stream-gen`."""
    d = tmp_path_factory.mktemp("stream")
    g = wm.graph.barabasi_albert(150, 4, seed=5)
    src, dst = g.edges()
    graph = d / "graph.txt"
    graph.write_text("# test graph\n" + "".join(f"{1000 + 3 * a} {1000 + 3 * b}\n"
                                                for a, b in zip(src.tolist(), dst.tolist())))
    res = run("stream-gen", graph, "--out", d / "ups.txt", "--initial", d / "g0.wmg",
              "--insert-fraction", 0.15, "--delete-fraction", 0.1, "--seed", 7, "--json")
    info = last_json(res)
    assert info["insertions"] > 0 and info["deletions"] > 0
    assert "wrote" in res.stdout
    return {"dir": d, "graph": graph, "g0": d / "g0.wmg", "ups": d / "ups.txt"}


@pytest.mark.parametrize("query, mode, induced", [
    ("triangle", "embeddings", False),
    ("a-b, b-c, c-d, d-a", "subgraphs", False),
    ("a-b, b-c", "embeddings", True),
])
def test_stream_counts_equal_static_recount(stream_files, query: str, mode: str,
                                            induced: bool) -> None:
    args = ["stream", stream_files["g0"], query, stream_files["ups"], "--mode", mode,
            "--json", "--batch-size", 37, "--backend", "cpu"] + (["--induced"] if induced else [])
    out = last_json(run(*args))
    assert JSON_KEYS <= set(out)
    g0 = wm.read_graph(stream_files["g0"])
    final = replay_graph(g0, stream_files["ups"])
    assert out["initial_count"] == wm.count(g0, query, mode=mode, induced=induced,
                                            backend="cpu")
    assert out["final_count"] == wm.count(final, query, mode=mode, induced=induced,
                                          backend="cpu")
    assert out["initial_count"] + out["added"] - out["removed"] == out["final_count"]
    n = len(read_updates(stream_files["ups"]))
    assert out["updates"] == n and out["invalid"] == 0
    assert out["insertions"] + out["deletions"] == n
    assert (out["mode"], out["induced"], out["backend"]) == (mode, induced, "cpu")
    assert out["seconds"] >= 0 and out["batches"] == -(-n // 37)


def test_directed_stream(tmp_path: Path) -> None:
    g = wm.graph.erdos_renyi(60, m=500, seed=3, directed=True)
    src, dst = g.edges()
    path = tmp_path / "d.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(src.tolist(), dst.tolist())))
    res = run("stream-gen", path, "--directed", "--out", tmp_path / "u.txt", "--initial",
              tmp_path / "g0.wmg", "--seed", 2)
    assert res.exit_code == 0, res.stderr
    q = "a->b, b->c, c->a"
    j = last_json(run("stream", tmp_path / "g0.wmg", q, tmp_path / "u.txt", "--json",
                      "--batch-size", 10))
    g0 = wm.read_graph(tmp_path / "g0.wmg")
    assert g0.directed
    final = replay_graph(g0, tmp_path / "u.txt")
    assert j["initial_count"] == wm.count(g0, q, backend="cpu")
    assert j["final_count"] == wm.count(final, q, backend="cpu")
    assert j["added"] > 0 or j["removed"] > 0


def _gpu_usable() -> bool:
    try:
        from warpmatch.stream.matcher import resolve_delta_engine
        resolve_delta_engine("gpu")
        return True
    except Exception:
        return False


def test_gpu_backend_without_gpu_is_a_clean_error(stream_files) -> None:
    if _gpu_usable():
        pytest.skip("a GPU is usable here; tests/gpu covers the GPU engine")
    assert_clean_error(run("stream", stream_files["g0"], "triangle", stream_files["ups"],
                           "--backend", "gpu"), "gpu")


def test_stream_human_summary_states_semantics(stream_files) -> None:
    res = run("stream", stream_files["g0"], "triangle", stream_files["ups"])
    assert res.exit_code == 0, res.stderr
    text = res.stdout
    assert "embeddings (non-induced) before the stream" in text
    assert "updates/s" in text and "appeared" in text and "disappeared" in text
    assert "Traceback" not in res.stderr


def test_output_rows_match_per_update_counts(stream_files, tmp_path: Path) -> None:
    deltas = tmp_path / "d.parquet"
    counts = tmp_path / "c.jsonl"
    a = last_json(run("stream", stream_files["g0"], "triangle", stream_files["ups"],
                      "-o", deltas, "--json", "--batch-size", 50))
    b = last_json(run("stream", stream_files["g0"], "triangle", stream_files["ups"],
                      "-o", counts, "--counts-only", "--json", "--batch-size", 1000))
    assert (a["added"], a["removed"], a["final_count"]) == (b["added"], b["removed"],
                                                            b["final_count"])
    t = pq.read_table(deltas)
    assert t.column_names == ["update", "sign", "0", "1", "2"] == a["columns"]
    assert a["rows"] == t.num_rows == a["added"] + a["removed"]
    upd = t.column("update").to_numpy()
    sign = t.column("sign").to_numpy()
    assert (np.diff(upd) >= 0).all()                     # written in update order
    rows = [json.loads(line) for line in counts.read_text().splitlines()]
    assert [r["update"] for r in rows] == list(range(a["updates"]))
    n = a["updates"]
    np.testing.assert_array_equal(np.bincount(upd[sign > 0], minlength=n),
                                  [r["plus"] for r in rows])
    np.testing.assert_array_equal(np.bincount(upd[sign < 0], minlength=n),
                                  [r["minus"] for r in rows])
    assert all(r["valid"] for r in rows)
    # non-induced: every delta match uses the updated edge (external ids)
    ups = read_updates(stream_files["ups"])
    verts = np.stack([t.column(c).to_numpy() for c in ("0", "1", "2")], axis=1)
    for end in (ups.src[upd], ups.dst[upd]):
        assert (verts == end[:, None]).any(axis=1).all()


def test_stdin_equals_file_and_batch_size_does_not_matter(stream_files, tmp_path: Path) -> None:
    data = stream_files["ups"].read_bytes()
    outs = []
    for src, bs, inp in (("-", 1, data), ("-", 4096, data), (stream_files["ups"], 64, None)):
        o = tmp_path / f"d{len(outs)}.csv"
        outs.append((last_json(run("stream", stream_files["g0"], "tailed-triangle", src,
                                   "--batch-size", bs, "-o", o, "--json", input=inp)), o))
    (first, o0), *rest = outs
    t0 = pcsv.read_csv(o0)
    for out, o in rest:
        for k in ("initial_count", "final_count", "added", "removed", "updates"):
            assert out[k] == first[k], k
        t = pcsv.read_csv(o)
        assert t.column_names == t0.column_names
        key = sorted(map(tuple, np.stack([c.to_numpy() for c in t.columns], axis=1).tolist()))
        key0 = sorted(map(tuple, np.stack([c.to_numpy() for c in t0.columns],
                                          axis=1).tolist()))
        assert key == key0
    assert first["updates_source"] == "-"


@pytest.mark.parametrize("src", ["file", "-"])
def test_collector_thread_writes_the_same_file_as_the_loop(stream_files, tmp_path: Path,
                                                             monkeypatch, src: str) -> None:
    """Rows written on the collector thread (the default) are byte for byte those the main
    loop writes (``WARPMATCH_STREAM_COLLECTOR=0``), with many small batches."""
    data = stream_files["ups"].read_bytes()
    files = []
    for flag in ("1", "0"):
        monkeypatch.setenv("WARPMATCH_STREAM_COLLECTOR", flag)
        o = tmp_path / f"d{flag}.csv"
        j = last_json(run("stream", stream_files["g0"], "tailed-triangle",
                          stream_files["ups"] if src == "file" else "-", "--batch-size", 1,
                          "-o", o, "--json", input=None if src == "file" else data))
        assert j["rows"] > 1000 and j["batches"] > 100
        assert (j["output_seconds"] is not None) and j["output_wait_seconds"] >= 0
        files.append(o.read_bytes())
    assert files[0] == files[1]


def test_counts_only_file_fused_equals_stdin_per_batch(stream_files, tmp_path: Path) -> None:
    # a file goes through apply_batches (several batches per run on the CPU engine's
    # sequential path); stdin applies each batch as it is read: same per-update rows
    data = stream_files["ups"].read_bytes()
    rows = []
    for src, bs, inp in ((stream_files["ups"], 7, None), ("-", 1, data)):
        o = tmp_path / f"c{len(rows)}.jsonl"
        j = last_json(run("stream", stream_files["g0"], "tailed-triangle", src, "--batch-size",
                          bs, "--counts-only", "-o", o, "--json", "--backend", "cpu",
                          input=inp))
        rows.append(([json.loads(line) for line in o.read_text().splitlines()], j))
    (a, ja), (b, jb) = rows
    assert len(a) == ja["updates"] > 100 and a == b
    assert ja["batches"] == -(-ja["updates"] // 7)
    for k in ("final_count", "added", "removed"):
        assert ja[k] == jb[k], k


def test_on_invalid_error_and_skip(stream_files, tmp_path: Path) -> None:
    g0 = wm.read_graph(stream_files["g0"])
    s, d = g0.edges()
    u, v = g0.to_external([s[0], d[0]]).tolist()                # an edge of G_0
    bad = tmp_path / "bad.txt"
    bad.write_text(f"# inserting an existing edge\n{u} {v} -\n{u} {v} +\n{u} {v} +\n")
    out = tmp_path / "d.parquet"
    res = run("stream", stream_files["g0"], "triangle", bad, "-o", out)
    assert_clean_error(res, "bad.txt:4")
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]   # nothing half-written
    res = run("stream", stream_files["g0"], "triangle", bad, "--on-invalid", "skip", "--json",
              "-o", out)
    j = last_json(res)
    assert j["invalid"] == 1 and j["updates"] == 3 and (j["insertions"], j["deletions"]) == (1, 1)
    assert j["final_count"] == j["initial_count"] and out.exists()
    assert "1 invalid skipped" in res.stdout
    # which update was skipped, and why, is said on stderr (stdout stays clean)
    assert ("warpmatch: warning: skipped 1 invalid update (they change nothing); the first: "
            f"{bad}:4: insert of an existing edge: '{u} {v} +'") in res.stderr
    assert "warning" not in res.stdout


def test_temporal_stream_has_time_column(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    rng = np.random.default_rng(2)
    lines, t = [], 1_000
    for _ in range(400):
        t += int(rng.integers(0, 5))
        a, b = rng.integers(0, 25, 2)
        if a != b:
            lines.append(f"{a} {b} {t}")
    log.write_text("\n".join(lines) + "\n")
    gen = last_json(run("stream-gen", log, "--temporal", "--window", 60, "--out",
                        tmp_path / "u.parquet", "--initial", tmp_path / "g0.wmg", "--json"))
    assert gen["timestamps"] and gen["deletions"] > 0
    out = tmp_path / "d.jsonl"
    j = last_json(run("stream", tmp_path / "g0.wmg", "triangle", tmp_path / "u.parquet",
                      "-o", out, "--json", "--batch-size", 16))
    assert j["timestamps"] and j["columns"][:3] == ["update", "sign", "time"]
    ups = read_updates(tmp_path / "u.parquet")
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == j["added"] + j["removed"] > 0
    assert all(r["time"] == int(ups.time[r["update"]]) for r in rows)
    final = replay_graph(wm.read_graph(tmp_path / "g0.wmg"), tmp_path / "u.parquet")
    assert j["final_count"] == wm.count(final, "triangle", backend="cpu")


def test_labeled_stream_with_declarations(tmp_path: Path) -> None:
    g = tmp_path / "g.graph"
    g.write_text("t 1 4\nv 0 1\nv 1 1\nv 2 2\ne 0 1\ne 1 2\n")
    ups = tmp_path / "u.txt"
    ups.write_text("v 7 1\n0 2 +\n7 0 +\n7 1 +\n7 2 +\n1 2 -\n")
    j = last_json(run("stream", g, "a:1-b:1, b-c:2, c-a", ups, "--json", "--batch-size", 2))
    assert j["initial_count"] == 0
    # triangles 0-1-2 (by update 1) and 7-0-2 / 7-1-2 ... recount the final graph
    final = Graph.from_edges([0, 0, 3, 3, 3], [1, 2, 0, 1, 2], n=4,
                             vertex_labels=[1, 1, 2, 1], ids=[0, 1, 2, 7])
    assert j["final_count"] == wm.count(final, "a:1-b:1, b-c:2, c-a", backend="cpu") > 0


def test_keep_relevant_equals_keep_all(tmp_path: Path) -> None:
    # a 2-2 edge no query edge can use: its duplicate insert is an error with --keep all,
    # trusted (and dropped) with --keep relevant; the counts are the same
    g = tmp_path / "g.graph"
    g.write_text("t 1 5\nv 0 1\nv 1 1\nv 2 2\nv 3 2\nv 4 1\ne 0 1\ne 1 2\ne 2 3\n")
    ups = tmp_path / "u.txt"
    ups.write_text("v 7 1\n0 2 +\n7 0 +\n7 2 +\n2 3 -\n2 3 +\n4 2 +\n1 2 -\n")
    q = "a:1-b:1, b-c:2, c-a"
    for size in ("1", "3"):
        full = last_json(run("stream", g, q, ups, "--json", "--batch-size", size))
        mine = last_json(run("stream", g, q, ups, "--json", "--batch-size", size,
                             "--keep", "relevant"))
        assert mine["keep"] == "relevant" and full["keep"] == "all"
        for key in ("initial_count", "final_count", "added", "removed", "updates", "invalid"):
            assert mine[key] == full[key], key
        assert full["final_count"] > 0
    bad = tmp_path / "bad.txt"
    bad.write_text("0 2 +\n2 3 +\n")
    r = run("stream", g, q, bad, "--json")
    assert r.exit_code != 0 and "bad.txt:2" in r.output
    j = last_json(run("stream", g, q, bad, "--json", "--keep", "relevant"))
    assert j["invalid"] == 0 and j["updates"] == 2


def test_edge_labeled_stream_on_tve_g0_without_edges(tmp_path: Path) -> None:
    # issue 16: a t/v/e G0 without 'e' lines is edge-labeled (no edges yet), so an
    # edge-labeled query and stream are accepted, directly and after `convert`
    g0 = tmp_path / "g0.graph"
    g0.write_text("t 4 0\nv 0 0\nv 1 0\nv 2 0\nv 3 0\n")
    ups = tmp_path / "ups.txt"
    ups.write_text("# columns: u v op label\n0 1 + 3\n1 2 + 5\n0 2 + 3\n2 3 + 3\n"
                   "0 1 - 3\n0 1 + 5\n3 1 + 3\n")
    q = "a-[3]-b, b-c"
    final = Graph.from_edges([1, 0, 2, 0, 3], [2, 2, 3, 1, 1], n=4,
                             vertex_labels=[0, 0, 0, 0], edge_labels=[5, 3, 3, 5, 3])
    want = wm.count(final, q, backend="cpu")
    assert want > 0
    res = run("convert", g0, tmp_path / "g0.wmg")
    assert res.exit_code == 0, res.stderr
    for graph in (g0, tmp_path / "g0.wmg"):
        j = last_json(run("stream", graph, q, ups, "--json", "--batch-size", 2,
                          "--backend", "cpu"))
        assert (j["initial_count"], j["final_count"], j["updates"]) == (0, want, 7)
        assert j["added"] - j["removed"] == want and j["removed"] > 0
    # stream-gen --initial g0.graph from an edge-labeled source, every edge held back
    src = tmp_path / "src.graph"
    src.write_text("t 4 5\nv 0 0\nv 1 0\nv 2 1\nv 3 0\ne 0 1 3\ne 1 2 5\ne 0 2 3\n"
                   "e 2 3 3\ne 3 0 3\n")
    gen = last_json(run("stream-gen", src, "--out", tmp_path / "s.txt", "--initial",
                        tmp_path / "h0.graph", "--insert-fraction", 1, "--delete-fraction", 0,
                        "--json"))
    assert gen["initial_edges"] == 0
    assert "\ne " not in (tmp_path / "h0.graph").read_text()
    j = last_json(run("stream", tmp_path / "h0.graph", q, tmp_path / "s.txt", "--json"))
    assert j["final_count"] == wm.count(wm.read_graph(src), q, backend="cpu") > 0


def test_error_paths(stream_files, tmp_path: Path) -> None:
    g0, ups = stream_files["g0"], stream_files["ups"]
    malformed = tmp_path / "m.txt"
    malformed.write_text("1000 1003 +\n1000 1003 maybe\n")
    assert_clean_error(run("stream", g0, "triangle", malformed), "m.txt:2", "op")
    assert_clean_error(run("stream", g0, "triangle", tmp_path / "none.txt"), "none.txt")
    assert_clean_error(run("stream", g0, "triangle", ups, "-o", tmp_path / "d.xlsx"),
                       "--output")
    assert_clean_error(run("stream", g0, "triangle", "-", input="1000 1003 + 1 2 3\n"),
                       "<stdin>:1")
    assert_clean_error(run("stream", g0, "a-b, c-d", ups), "disconnected")
    assert_clean_error(run("stream", g0, "triangle", ups, "--batch-size", 0))
    assert_clean_error(run("stream", g0, "triangle", ups, "--on-invalid", "ignore"))
    assert_clean_error(run("stream", g0, "triangle", ups, "-o", tmp_path / "no" / "d.parquet"),
                       "does not exist")
    # an id that is not a vertex of an unlabeled graph is a new vertex, not an error
    newv = tmp_path / "n.txt"
    newv.write_text("99999 1000 +\n")
    assert last_json(run("stream", g0, "triangle", newv, "--json"))["updates"] == 1
    gen = ["stream-gen", stream_files["graph"], "--out", tmp_path / "u.txt", "--initial",
           tmp_path / "g.wmg"]
    assert_clean_error(run(*gen, "--insert-fraction", 0.8, "--delete-fraction", 0.5),
                       "must be <= 1")
    assert_clean_error(run(*gen, "--window", 10), "--temporal")
    assert_clean_error(run(*gen, "--insert-fraction", 2))
    assert not (tmp_path / "u.txt").exists() and not (tmp_path / "g.wmg").exists()


def test_stream_gen_checks_output_names_first(stream_files, tmp_path: Path) -> None:
    # the format used to be told from the temporary file, after the work: the error
    # named '.g0.foo.partial-XXXX.foo' instead of the user's --initial
    gen = ["stream-gen", stream_files["graph"], "--out", tmp_path / "u.txt"]
    res = run(*gen, "--initial", tmp_path / "g0.foo")
    assert_clean_error(res, f"'{tmp_path / 'g0.foo'}'", "output format")
    assert ".partial" not in res.stderr
    # checked before GRAPH is read: a missing GRAPH is not what is reported
    res = run("stream-gen", tmp_path / "none.txt", "--out", tmp_path / "u.txt",
              "--initial", tmp_path / "g0.foo")
    assert_clean_error(res, "g0.foo")
    assert_clean_error(run(*gen[:3], tmp_path / "u.parquet.gz", "--initial",
                           tmp_path / "g0.wmg"), "u.parquet.gz", "drop the .gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == []

def test_stream_gen_outputs_replay_to_source(stream_files, tmp_path: Path) -> None:
    src = wm.read_graph(stream_files["graph"])
    res = run("stream-gen", stream_files["graph"], "--out", tmp_path / "u.parquet",
              "--initial", tmp_path / "g0.wmg", "--insert-fraction", 0.2,
              "--delete-fraction", 0, "--seed", 1)
    assert res.exit_code == 0, res.stderr
    g0 = wm.read_graph(tmp_path / "g0.wmg")
    final = replay_graph(g0, tmp_path / "u.parquet")
    assert final.n == src.n and final.num_edges == src.num_edges
    np.testing.assert_array_equal(final.ids, src.ids)
    a, b = final.edges()
    c, d = src.edges()
    assert sorted(zip(a.tolist(), b.tolist())) == sorted(zip(c.tolist(), d.tolist()))
    # seeded: the same command writes the same stream
    run("stream-gen", stream_files["graph"], "--out", tmp_path / "v.parquet", "--initial",
        tmp_path / "h.wmg", "--insert-fraction", 0.2, "--delete-fraction", 0, "--seed", 1)
    assert (read_updates(tmp_path / "u.parquet").src
            == read_updates(tmp_path / "v.parquet").src).all()


def test_help_teaches() -> None:
    res = run("stream", "--help")
    assert res.exit_code == 0
    for word in ("UPDATES", "--batch-size", "--output", "--counts-only", "--on-invalid",
                 "stdin", "Examples"):
        assert word in res.stdout, word
    res = run("stream-gen", "--help")
    assert res.exit_code == 0 and "--temporal" in res.stdout and "--initial" in res.stdout
    assert "stream" in run("--help").stdout


def test_empty_stream(stream_files, tmp_path: Path) -> None:
    empty = tmp_path / "e.txt"
    empty.write_text("# no updates\n")
    out = tmp_path / "d.parquet"
    j = last_json(run("stream", stream_files["g0"], "triangle", empty, "-o", out, "--json"))
    assert j["updates"] == 0 and j["initial_count"] == j["final_count"]
    assert pq.read_table(out).num_rows == 0
    j = last_json(run("stream", stream_files["g0"], "triangle", "-", "--json", input=""))
    assert j["updates"] == 0
    write_updates(tmp_path / "e.parquet", read_updates(empty))
    assert last_json(run("stream", stream_files["g0"], "triangle", tmp_path / "e.parquet",
                         "--json"))["updates"] == 0
