"""Edge lists, vertex-label files and the t/v/e format: parsing and malformed input."""
from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest

from graph_helpers import edge_set, vertex_map
from warpmatch.errors import InputCleanupWarning, InputFormatError
from warpmatch.graph import (
    parse_tve,
    read_edgelist,
    read_graph,
    read_tve,
    read_vertex_labels,
)
from warpmatch.graph.formats import graph_format


# ------------------------------------------------------------------ edge lists
def test_edgelist_comments_whitespace_and_sparse_ids(write) -> None:
    p = write("g.txt", "# SNAP header\n% other comment\n\n  10\t20\n20   30 \r\n"
                       "30 10 # inline\n   # indented comment\n1000000000000 10\n")
    g = read_edgelist(p)
    assert (g.n, g.num_edges, g.directed) == (4, 4, False)
    assert g.ids.tolist() == [10, 20, 30, 1000000000000]
    assert edge_set(g) == {(10, 20), (20, 30), (10, 30), (10, 1000000000000)}
    assert g.name == "g"
    # external ids map to internal ones and back
    internal = g.to_internal([30, 10])
    assert g.to_external(internal).tolist() == [30, 10]


def test_edgelist_dense_ids_store_none_and_round_trip(write) -> None:
    g = read_edgelist(write("d.txt", "0 1\n1 2\n2 3\n"))
    assert g.ids is None
    assert g.to_external(np.array([3, 0])).tolist() == [3, 0]


def test_edgelist_directed_and_cleanup_report(write) -> None:
    p = write("d.el", "1 2\n2 1\n1 2\n3 3\n")
    with pytest.warns(InputCleanupWarning, match="1 self-loops and 1 duplicate"):
        g = read_graph(p, directed=True)
    assert edge_set(g) == {(1, 2), (2, 1)}
    assert (g.report.self_loops, g.report.duplicates, g.report.input_edges) == (1, 1, 4)
    with pytest.warns(InputCleanupWarning, match="2 duplicate"):
        u = read_graph(p)
    assert edge_set(u) == {(1, 2)} and u.n == 3   # vertex 3 kept (its only edge was a loop)


def test_edgelist_third_column_ignored_or_label(write) -> None:
    p = write("t.txt", "1 2 1082040961\n2 3 1082155839 extra 0.5\n")
    g = read_edgelist(p, directed=True)
    assert edge_set(g) == {(1, 2), (2, 3)} and g.edge_labels is None
    q = write("l.txt", "1 2 7\n2 3 9\n")
    g = read_graph(q, edge_labels=True)
    assert edge_set(g) == {(1, 2, 7), (2, 3, 9)}


def test_edgelist_gzip_and_bom(tmp_path: Path) -> None:
    p = tmp_path / "g.txt.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("5 6\n6 7\n")
    g = read_graph(p)
    assert edge_set(g) == {(5, 6), (6, 7)} and g.name == "g"
    b = tmp_path / "bom.txt"
    b.write_bytes(b"\xef\xbb\xbf1 2\n")
    assert edge_set(read_graph(b)) == {(1, 2)}


def test_truncated_gzip(tmp_path: Path) -> None:
    p = tmp_path / "g.txt.gz"
    data = gzip.compress(b"1 2\n" * 1000)
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputFormatError, match="truncated gzip"):
        read_graph(p)


@pytest.mark.parametrize("text,line,fragment,shown", [
    ("1 2\n3 x\n", 2, "target id: expected a non-negative integer", "3 x"),
    ("1 2\n3 4.5\n", 2, "expected a non-negative integer", "3 4.5"),
    ("1 2\n\n# c\n7\n", 4, "expected 2 values (source id target id), found 1", "7"),
    ("1 2\n-3 4\n", 2, "source id is negative", "-3 4"),
    ("1 2\n3 99999999999999999999\n", 2, "too large", "3 99999999999999999999"),
    ("1 2\n3 9223372036854775808\n", 2, "too large", "3 9223372036854775808"),
    ("1,2\n", 1, "expected a non-negative integer", "1,2"),
    ("1 2\n3 4\n5", 3, "found 1", "5"),          # truncated last line
])
def test_edgelist_malformed_names_file_and_line(write, text: str, line: int, fragment: str,
                                                shown: str) -> None:
    p = write("bad.txt", text)
    with pytest.raises(InputFormatError) as ei:
        read_graph(p)
    err = ei.value
    assert err.path == str(p) and err.line == line
    assert str(err).startswith(f"{p}:{line}: ")
    assert fragment in str(err)
    assert err.text == shown


def test_edgelist_max_int64_is_accepted(write) -> None:
    g = read_graph(write("big.txt", "0 9223372036854775807\n"))
    assert g.ids.tolist() == [0, 9223372036854775807]


@pytest.mark.parametrize("text,fragment", [
    ("", "the file is empty"),
    ("# only a comment\n\n", "no edge lines"),
])
def test_edgelist_empty(write, text: str, fragment: str) -> None:
    p = write("e.txt", text)
    with pytest.raises(InputFormatError, match=fragment) as ei:
        read_graph(p)
    assert str(ei.value).startswith(str(p))


def test_edgelist_label_column_required_when_asked(write) -> None:
    p = write("l.txt", "1 2 3\n2 3\n")
    with pytest.raises(InputFormatError) as ei:
        read_graph(p, edge_labels=True)
    assert ei.value.line == 2 and "edge label" in str(ei.value)
    q = write("l2.txt", "1 2 3000000000\n")
    with pytest.raises(InputFormatError, match="too large .labels are int32") as ei:
        read_graph(q, edge_labels=True)
    assert ei.value.line == 1


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such graph file"):
        read_graph(tmp_path / "nope.txt")
    with pytest.raises(IsADirectoryError):
        read_graph(tmp_path)


# ------------------------------------------------------------- vertex labels
def test_vertex_label_file_adds_isolated_vertices(write) -> None:
    g_path = write("g.txt", "1 2\n2 3\n")
    l_path = write("labels.txt", "# id label\n1 5\n2 6\n3 5\n9 7\n")
    g = read_graph(g_path, vertex_labels=l_path)
    assert vertex_map(g) == {1: 5, 2: 6, 3: 5, 9: 7}
    assert g.degree[g.to_internal([9])[0]] == 0


def test_vertex_label_file_missing_label_names_vertex(write) -> None:
    g_path = write("g.txt", "1 2\n2 3\n")
    l_path = write("labels.txt", "1 5\n2 6\n")
    with pytest.raises(InputFormatError) as ei:
        read_graph(g_path, vertex_labels=l_path)
    assert "vertex 3 of" in str(ei.value) and "line 2" in str(ei.value)
    assert str(ei.value).startswith(str(l_path))


@pytest.mark.parametrize("text,line,fragment", [
    ("1 5\n2\n", 2, "expected 2 values"),
    ("1 5\n2 6 7\n", 2, "expected at most 2 values"),
    ("1 5\n2 -6\n", 2, "label is negative"),
    ("1 5\n1 6\n", 2, "vertex 1 has more than one label line"),
    # the first repeat in file order, as every reader of declarations reports it
    ("5 1\n9 1\n9 2\n5 1\n", 3, "vertex 9 has more than one label line"),
    ("1 5\n2 a\n", 2, "label: expected a non-negative integer"),
])
def test_vertex_label_file_malformed(write, text: str, line: int, fragment: str) -> None:
    p = write("labels.txt", text)
    with pytest.raises(InputFormatError) as ei:
        read_vertex_labels(p)
    assert ei.value.line == line and fragment in str(ei.value)
    assert str(ei.value).startswith(f"{p}:{line}:")


def test_vertex_labels_attach_to_other_formats(write) -> None:
    g_path = write("g.csv", "src,dst\n1,2\n")
    l_path = write("labels.txt", "1 3\n2 4\n8 1\n")
    g = read_graph(g_path, vertex_labels=l_path)
    assert vertex_map(g) == {1: 3, 2: 4, 8: 1}
    with pytest.raises(InputFormatError, match="vertex 2 of"):
        read_graph(g_path, vertex_labels=write("l2.txt", "1 3\n"))


# ---------------------------------------------------------------------- t/v/e
TVE = "t 1 4\nv 10 1 2\nv 20 2 2\nv 30 1 1\nv 40 3 0\ne 10 20 5\ne 20 30 6\ne 30 10 5\n"


def test_parse_tve_from_path_text_and_bytes(write) -> None:
    p = write("g.graph", TVE)
    for arg in (p, str(p), TVE, TVE.encode()):
        d = parse_tve(arg)
        assert d.vertex_ids.tolist() == [10, 20, 30, 40]
        assert d.vertex_labels.dtype == np.int32 and d.vertex_labels.tolist() == [1, 2, 1, 3]
        assert d.src.dtype == np.int64 and d.src.tolist() == [10, 20, 30]
        assert d.dst.tolist() == [20, 30, 10]
        assert d.edge_labels.dtype == np.int32 and d.edge_labels.tolist() == [5, 6, 5]


def test_parse_tve_without_edge_labels() -> None:
    d = parse_tve("v 0 1\nv 1 1\ne 0 1\n")
    assert d.edge_labels is None


def test_tve_without_e_lines_is_edge_labeled(write) -> None:
    # issue 16: 'e u v l' lines make a graph edge-labeled, 'e u v' lines unlabeled; a file
    # without 'e' lines shows neither and is read as edge-labeled with no edges, so that an
    # edge-labeled query or update stream can use it (the G0 of a stream, for example)
    text = "t 3 0\nv 10 1\nv 20 2\nv 30 1\n"
    d = parse_tve(text)
    assert d.edge_labels is not None and d.edge_labels.dtype == np.int32
    assert d.edge_labels.size == 0 and d.src.size == 0
    g = read_tve(write("g0.graph", text))
    assert (g.n, g.num_edges) == (3, 0) and vertex_map(g) == {10: 1, 20: 2, 30: 1}
    assert g.edge_labels is not None and g.edge_labels.dtype == np.int32
    assert g.edge_labels.size == 0 and g.edge_label_array().size == 0
    dg = read_graph(write("g0d.graph", text), directed=True)
    assert dg.directed and dg.edge_labels.size == 0 and dg.in_edge_labels.size == 0
    # 'e' lines decide as before: without labels unlabeled, with labels labeled
    assert read_tve(write("u.graph", text + "e 10 20\n")).edge_labels is None
    lab = read_tve(write("l.graph", text + "e 10 20 4\n"))
    assert edge_set(lab) == {(10, 20, 4)}
    # a header and comments only around the v lines change nothing
    assert read_tve(write("c.graph", "# c\nt 3 9\n" + text[6:] + "% end\n")).edge_labels.size == 0


def test_edge_labeled_query_on_edgeless_tve_graph_counts_zero(write) -> None:
    import warpmatch as wm
    from warpmatch.errors import UnknownLabelWarning
    text = "t 3 0\nv 0 0\nv 1 0\nv 2 0\n"
    g = read_graph(write("g0.graph", text))
    gd = read_graph(write("g0d.graph", text), directed=True)
    for backend in ("cpu", "reference"):
        with pytest.warns(UnknownLabelWarning, match="label 3"):
            assert wm.count(g, "a-[3]-b, b-c", backend=backend) == 0
        assert wm.count(g, "a-b, b-c", backend=backend) == 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnknownLabelWarning)
            assert wm.count(g, "a-[3]-b, b-c", mode="subgraphs", induced=True,
                            backend=backend) == 0
            assert sum(len(b) for b in wm.match(g, "a-[3]-b, b-c", backend=backend)) == 0
            assert wm.count(gd, "a-[3]->b, b->c", backend=backend) == 0
            assert wm.explain(g, "a-[3]-b, b-c")


def test_read_tve_graph(write) -> None:
    g = read_tve(write("g.graph", TVE))
    assert vertex_map(g) == {10: 1, 20: 2, 30: 1, 40: 3}
    assert edge_set(g) == {(10, 20, 5), (20, 30, 6), (10, 30, 5)}
    d = read_graph(write("d.tve", TVE), directed=True)
    assert edge_set(d) == {(10, 20, 5), (20, 30, 6), (30, 10, 5)}


@pytest.mark.parametrize("text,line,fragment", [
    ("t 1 2\nv 0 1\n1 1 1\n", 3, "expected a line starting with 't', 'v' or 'e'"),
    ("t 1 2\nv 0 1\nx 1 1\n", 3, "unknown line type 'x'"),
    ("t 1 2\nv 0 1\nvv 1 1\n", 3, "expected a line starting with"),
    ("t 1 2\nv 0 1\nq 1 1\n", 3, "unknown line type 'q'"),
    ("v 0 1\nv 1\n", 2, "expected at least 2 values"),
    ("v 0 1\nv 1 1 2 3\n", 2, "expected at most 3 values"),
    ("v 0 1\nv 1 a\n", 2, "second value: expected a non-negative integer"),
    ("v 0 1\nv -1 1\n", 2, "negative"),
    ("v 0 1\nv 1 1\ne 0 1 2\ne 1 0\n", 4, "some 'e' lines have an edge label"),
    ("v 0 1\nv 1 1\ne 0 2 0\n", 3, "names vertex 2, which has no 'v' line"),
    ("v 0 1\nv 1 1\nv 1 2\n", 3, "vertex 1 has more than one 'v' line"),
    ("v 5 1\nv 9 1\nv 9 2\nv 5 1\n", 3, "vertex 9 has more than one 'v' line"),
    ("v 0 1\nv 1 4294967296\n", 2, "vertex label 4294967296 is too large"),
    ("v 0 1\nv 1 1\ne 0 1 99999999999999999999\n", 3, "too large"),
])
def test_tve_malformed_names_file_and_line(write, text: str, line: int, fragment: str) -> None:
    p = write("bad.graph", text)
    for fn in (parse_tve, read_tve, read_graph):
        with pytest.raises(InputFormatError) as ei:
            fn(p)
        assert ei.value.line == line, str(ei.value)
        assert str(ei.value).startswith(f"{p}:{line}: ")
        assert fragment in str(ei.value)


def test_tve_empty_and_no_vertices(write) -> None:
    with pytest.raises(InputFormatError, match="the file is empty"):
        read_tve(write("e.graph", ""))
    with pytest.raises(InputFormatError, match="the file is empty"):
        parse_tve(write("c.graph", "# nothing\n\n"))
    d = parse_tve(write("t.graph", "t 0 0\n"))    # query readers decide what this means
    assert d.vertex_ids.size == 0
    with pytest.raises(InputFormatError, match="no 'v' lines"):
        read_tve(write("t2.graph", "t 0 0\n"))


def test_parse_tve_text_source_name() -> None:
    with pytest.raises(InputFormatError, match=r"^<string>:2: "):
        parse_tve("v 0 1\nv x 1\n")
    with pytest.raises(InputFormatError, match=r"^q\.graph:2: "):
        parse_tve("v 0 1\nv x 1\n", source="q.graph")


# -------------------------------------------------------------------- dispatch
@pytest.mark.parametrize("name,content,fmt", [
    ("a.dat", "# c\n1 2\n", "edgelist"),
    ("a.dat", "t 1 2\nv 0 1\n", "tve"),
    ("a.dat", "src,dst\n1,2\n", "csv"),
    ("a.dat", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n", "mtx"),
])
def test_sniffing_unknown_extensions(write, name: str, content: str, fmt: str) -> None:
    p = write(name, content)
    assert graph_format(p) == fmt
    g = read_graph(p)
    assert g.num_edges == (0 if fmt == "tve" else 1)


def test_format_override(write) -> None:
    p = write("g.csv", "1 2\n2 3\n")            # misnamed: really an edge list
    assert read_graph(p, format="edgelist").num_edges == 2
    with pytest.raises(Exception, match="unknown graph format"):
        read_graph(p, format="nope")


# -------------------------------------------------------------------- real data
def test_wiki_vote(data_path) -> None:
    g = read_graph(data_path("snap", "wiki-Vote.txt"), directed=True)
    assert (g.n, g.num_edges, g.directed) == (7115, 103689, True)
    assert g.report.self_loops == 0 and g.report.duplicates == 0


def test_college_msg_timestamps_are_ignored(data_path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputCleanupWarning)
        g = read_graph(data_path("snap", "CollegeMsg.txt"), directed=True)
    assert g.n == 1899 and g.report.input_edges == 59835
    assert g.num_edges == 59835 - g.report.duplicates - g.report.self_loops


def test_email_eu_core_with_departments(data_path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputCleanupWarning)
        g = read_graph(data_path("snap", "email-Eu-core.txt"), directed=True,
                       vertex_labels=data_path("snap", "email-Eu-core-department-labels.txt"))
    assert g.n == 1005 and g.labeled
    assert np.unique(g.vertex_labels).size == 42
    assert g.report.input_edges == 25571


@pytest.mark.parametrize("ds,n,m,labels", [
    ("yeast", 3112, 12519, 71), ("human", 4674, 86282, 44), ("hprd", 9460, 34998, 307)])
def test_labeled_datasets(data_path, ds: str, n: int, m: int, labels: int) -> None:
    g = read_graph(data_path("labeled", ds, f"{ds}.graph"))
    assert (g.n, g.num_edges) == (n, m)
    assert np.unique(g.vertex_labels).size == labels
    assert g.edge_labels is not None and set(np.unique(g.edge_labels).tolist()) == {0}
