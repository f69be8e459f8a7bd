"""Tests of :mod:`warpmatch.viz` and the ``show`` / ``plot-stream`` commands.

Matches are found with the reference engine on graphs of a few vertices, so the
drawings are known exactly; images are only checked to be written (matplotlib
tests skip with the reason when it is absent). The stream plot reads what the
real ``warpmatch stream -o`` writes.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_clean_error, last_json
from click.testing import CliRunner, Result

import warpmatch as wm
from warpmatch import viz
from warpmatch.cli import cli

needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None,
    reason="matplotlib not installed: pip install -e '.[viz]' (the dev extras include it)")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def graph() -> wm.Graph:
    """A triangle 10-20-30 with a tail 30-40-50 and a leaf 60 on 20 (file ids)."""
    return wm.Graph.from_edges([0, 1, 2, 2, 3, 1], [1, 2, 0, 3, 4, 5],
                               ids=[10, 20, 30, 40, 50, 60], name="tri")


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    p = tmp_path / "tri.txt"
    p.write_text("# triangle with a tail\n10 20\n20 30\n30 10\n30 40\n40 50\n20 60\n")
    return p


def dot_edges(text: str) -> dict[tuple[str, str], str]:
    """``{(tail, head): attributes}`` of the edge lines of DOT text."""
    out = {}
    for line in text.splitlines():
        line = line.strip().rstrip(";")
        for arrow in (" -- ", " -> "):
            if arrow in line and not line.startswith(("graph", "node", "edge")):
                a, rest = line.split(arrow, 1)
                b, _, attrs = rest.partition(" [")
                out[(a.strip('"'), b.strip('"'))] = attrs
    return out


# ------------------------------------------------------------------- drawing
def test_drawing_of_a_known_match(graph: wm.Graph) -> None:
    d = viz.match_drawing(graph, "a-b, b-c, c-a", limit=1, hops=1, backend="reference")
    assert d.matches.shape == (1, 3) and sorted(d.matches[0].tolist()) == [10, 20, 30]
    assert d.ids[:3].tolist() == d.matches[0].tolist()       # match vertices first
    assert set(d.ids.tolist()) == {10, 20, 30, 40, 60}        # 50 is two hops away
    assert d.match_of.tolist() == [0, 0, 0, -1, -1]
    roles = dict(zip(d.ids.tolist(), d.roles))
    assert [roles[int(v)] for v in d.matches[0]] == ["a", "b", "c"]
    assert roles[40] == roles[60] == ""
    assert not d.capped and d.note.startswith("query in tri: 1 match (subgraphs")

    text = viz.to_dot(d)
    assert text.startswith('graph "warpmatch" {') and text.rstrip().endswith("}")
    edges = {tuple(sorted(k, key=int)): v for k, v in dot_edges(text).items()}
    assert set(edges) == {("10", "20"), ("20", "30"), ("10", "30"), ("30", "40"), ("20", "60")}
    for e in (("10", "20"), ("20", "30"), ("10", "30")):     # the match's edges, emphasised
        assert f'color="{viz.PALETTE[0]}"' in edges[e] and "penwidth=3" in edges[e]
    assert edges[("30", "40")] == edges[("20", "60")] == ""
    a = int(d.matches[0][0])
    assert f'"{a}" [label="{a}\\na", fillcolor="{viz.PALETTE[0]}"' in text
    assert '"40" [label="40"];' in text and '"50"' not in text


def test_hops_and_the_vertex_cap(graph: wm.Graph) -> None:
    only = viz.match_drawing(graph, "triangle", hops=0, backend="reference")
    assert sorted(only.ids.tolist()) == [10, 20, 30] and len(only.edges) == 3
    assert (only.match_edge == 0).all()
    two = viz.match_drawing(graph, "triangle", hops=2, backend="reference")
    assert sorted(two.ids.tolist()) == [10, 20, 30, 40, 50, 60] and not two.capped
    cut = viz.match_drawing(graph, "triangle", hops=2, max_vertices=4, backend="reference")
    assert cut.ids.size == 4 and cut.capped and "cut at 4 vertices" in cut.note
    # a cut layer is shared round-robin: the hub's leaves do not crowd out 2's leaf 30
    hub = wm.Graph.from_edges([0, 1, 2, 2] + [0] * 20, [1, 2, 0, 30] + list(range(10, 30)))
    rr = viz.match_drawing(hub, "triangle", max_vertices=6, backend="reference")
    assert rr.capped and rr.ids.size == 6 and 30 in rr.ids.tolist()
    # match vertices are drawn even past the cap
    many = viz.match_drawing(graph, "a-b", limit=5, max_vertices=2, backend="reference")
    assert len(many.matches) == 5 and set(many.matches.ravel().tolist()) <= set(many.ids.tolist())


def test_several_matches_labels_and_no_match() -> None:
    g = wm.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], vertex_labels=[1, 2, 1, 2])
    d = viz.match_drawing(g, "x:1-y:2", limit=10, hops=0, mode="embeddings",
                          backend="reference")
    assert len(d.matches) == 3                                 # 0-1, 2-1, 2-3
    assert d.vertex_text(int(np.flatnonzero(d.ids == 2)[0])) == "2:1\nx"
    assert (d.match_of >= 0).all()                             # hops=0: match vertices only
    assert (d.match_edge >= 0).sum() == 3
    none = viz.match_drawing(g, "4-clique", backend="reference")
    assert none.ids.size == 0 and len(none.edges) == 0
    assert viz.to_dot(none).count("\n") == 5                   # header lines and the brace


def test_directed_drawing() -> None:
    g = wm.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], directed=True)
    d = viz.match_drawing(g, "a->b, b->c, c->a", limit=1, backend="reference")
    text = viz.to_dot(d)
    assert text.startswith('digraph "warpmatch"')
    edges = dot_edges(text)
    assert set(edges) == {("0", "1"), ("1", "2"), ("2", "0"), ("2", "3")}
    assert "penwidth=3" in edges[("2", "0")] and edges[("2", "3")] == ""


def test_bad_arguments(graph: wm.Graph, tmp_path: Path) -> None:
    with pytest.raises(wm.QueryError):
        viz.match_drawing(graph, "triangle", hops=-1, backend="reference")
    with pytest.raises(wm.WarpmatchError, match="picture format"):
        viz.save_matches(graph, "triangle", tmp_path / "x.txt", backend="reference")
    assert not (tmp_path / "x.txt").exists()


def test_missing_matplotlib_names_the_extra(graph: wm.Graph, tmp_path: Path,
                                            graph_file: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)      # import matplotlib fails
    with pytest.raises(wm.BackendUnavailableError, match=r"warpmatch\[viz\]"):
        viz.save_matches(graph, "triangle", tmp_path / "t.png", backend="reference")
    # DOT needs nothing
    viz.save_matches(graph, "triangle", tmp_path / "t.dot", backend="reference")
    assert (tmp_path / "t.dot").read_text().startswith("graph")
    res = run("show", graph_file, "triangle", "-o", tmp_path / "t.svg", "--backend", "reference")
    assert_clean_error(res, "warpmatch[viz]", "matplotlib")
    assert not (tmp_path / "t.svg").exists()


@needs_matplotlib
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_images_written(graph: wm.Graph, tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"m{suffix}"
    d = viz.save_matches(graph, "triangle", out, hops=2, backend="reference")
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) if suffix == ".png" else b"<svg" in data[:2000]
    assert len(d.matches) == 1
    g = wm.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], directed=True, edge_labels=[1, 1, 2, 3])
    ax = viz.draw(viz.match_drawing(g, "a->b, b->c, c->a", backend="reference"))
    assert ax.figure is not None and ax.get_title()


# ----------------------------------------------------------------------- CLI
def test_show_prints_dot_without_output(graph_file: Path) -> None:
    res = run("show", graph_file, "a-b, b-c, c-a", "--backend", "reference", "--hops", "0")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith('graph "warpmatch"')
    assert len(dot_edges(res.stdout)) == 3
    assert "1 match (subgraphs, non-induced)" in res.stderr   # the summary stays off stdout


def test_show_writes_dot_file_and_json(graph_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.gv"
    res = run("show", graph_file, "a-b", "-o", out, "--limit", 2, "--mode", "embeddings",
              "--backend", "reference", "--json")
    info = last_json(res)
    assert info["matches"] == 2 and info["mode"] == "embeddings" and info["output"] == str(out)
    assert f"wrote {out}" in res.stdout
    assert info["vertices"] == len([ln for ln in out.read_text().splitlines()
                                    if ln.strip().startswith('"') and " -- " not in ln])
    assert_clean_error(run("show", graph_file, "triangle", "-o", tmp_path / "m.txt"),
                       "picture format")


@needs_matplotlib
def test_show_writes_png(graph_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.png"
    res = run("show", graph_file, "triangle", "-o", out, "--backend", "reference")
    assert res.exit_code == 0, res.stderr
    assert out.read_bytes().startswith(PNG_MAGIC)


# -------------------------------------------------------------------- stream
@pytest.fixture(scope="module")
def stream_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A real ``warpmatch stream``: triangles appear and disappear in a 5-vertex graph."""
    d = tmp_path_factory.mktemp("vizstream")
    (d / "g0.txt").write_text("1 2\n2 3\n3 4\n4 5\n")
    (d / "ups.txt").write_text("# columns: u v op time\n"
                               "1 3 + 100\n2 4 + 110\n3 5 + 130\n1 3 - 170\n4 1 + 200\n")
    out = {"dir": d}
    for name, extra in (("counts", ["--counts-only", "-o", d / "c.parquet"]),
                        ("rows", ["-o", d / "m.jsonl"])):
        res = run("stream", d / "g0.txt", "triangle", d / "ups.txt", "--backend", "cpu",
                  "--json", *extra)
        out[name] = last_json(res)
    return out


def test_stream_counts_read_back(stream_run: dict) -> None:
    d, info = stream_run["dir"], stream_run["counts"]
    c = viz.read_stream_counts(d / "c.parquet")
    assert c.every_update and c.update.tolist() == [0, 1, 2, 3, 4]
    assert c.time is not None and c.time.tolist() == [100, 110, 130, 170, 200]
    assert int(c.plus.sum()) == info["added"] and int(c.minus.sum()) == info["removed"]
    assert c.running(info["initial_count"])[-1] == info["final_count"]
    rows = viz.read_stream_counts(d / "m.jsonl")               # one row per match, summed
    assert not rows.every_update and rows.valid is None
    assert int(rows.plus.sum()) == info["added"] and int(rows.minus.sum()) == info["removed"]
    assert set(rows.update.tolist()) == set(np.flatnonzero(c.plus + c.minus).tolist())


@needs_matplotlib
def test_plot_stream_command(stream_run: dict) -> None:
    d, info = stream_run["dir"], stream_run["counts"]
    out = d / "counts.png"
    res = run("plot-stream", d / "c.parquet", "-o", out, "--initial", info["initial_count"],
              "--json")
    got = last_json(res)
    assert got["final"] == info["final_count"] and got["updates"] == 5
    assert out.read_bytes().startswith(PNG_MAGIC)
    res = run("plot-stream", d / "m.jsonl", "-o", d / "counts.svg", "--x", "update")
    assert res.exit_code == 0, res.stderr
    assert "updates that changed a match" in res.stdout
    assert_clean_error(run("plot-stream", d / "c.parquet", "-o", d / "c.dot"), "image")


@needs_matplotlib
def test_plot_stream_api_and_errors(stream_run: dict, tmp_path: Path) -> None:
    d = stream_run["dir"]
    fig = viz.plot_stream(d / "c.parquet", x="time")
    assert len(fig.axes) == 2 and fig.axes[1].get_xlabel() == "time"
    no_time = viz.StreamCounts(update=np.arange(3), plus=np.array([1, 0, 2]),
                               minus=np.zeros(3, np.int64))
    with pytest.raises(wm.WarpmatchError, match="no timestamps"):
        viz.plot_stream(no_time, x="time")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(wm.InputFormatError, match="neither per-update counts"):
        viz.read_stream_counts(bad)
    empty = viz.plot_stream(viz.StreamCounts(np.zeros(0, np.int64), np.zeros(0, np.int64),
                                             np.zeros(0, np.int64)), tmp_path / "e.svg")
    assert empty is not None and (tmp_path / "e.svg").exists()


def test_viz_doctests() -> None:
    import doctest
    res = doctest.testmod(viz, optionflags=doctest.ELLIPSIS)
    assert res.attempted >= 5 and res.failed == 0


def test_show_json_needs_an_output_file(graph_file: Path) -> None:
    """Without -o stdout is DOT text, which a JSON line would break."""
    assert_clean_error(run("show", graph_file, "triangle", "--json"), "--json needs -o")
