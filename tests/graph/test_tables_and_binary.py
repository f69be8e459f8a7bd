"""CSV/Parquet/Matrix Market readers, the .wmg cache, writers and round trips."""
from __future__ import annotations

import dataclasses
import json
import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.io
import scipy.sparse as sp

from graph_helpers import assert_same_graph, edge_set, vertex_map
from warpmatch.errors import GraphError, InputCleanupWarning, InputFormatError
from warpmatch.graph import (
    Graph,
    load_binary,
    read_graph,
    save_binary,
    write_graph,
)


def sample_graphs() -> list[Graph]:
    """Directed/undirected, labeled/unlabeled, sparse ids, an isolated vertex, edge labels."""
    return [
        Graph.from_edges([0, 1, 2, 3], [1, 2, 0, 0], n=5, name="plain"),
        Graph.from_edges([0, 1, 2, 0], [1, 2, 0, 2], n=4, directed=True,
                         ids=[7, 1000000000000, 3, 12], name="sparse-ids"),
        Graph.from_edges([0, 1, 2], [1, 2, 0], n=5, vertex_labels=[1, 2, 3, 4, 5],
                         edge_labels=[7, 8, 9], ids=[10, 20, 30, 40, 50], directed=True,
                         name="labeled-directed"),
        Graph.from_edges([0, 1, 2, 2], [1, 2, 3, 0], vertex_labels=[0, 0, 1, 2],
                         edge_labels=[1, 1, 0, 3], name="labeled-undirected"),
    ]


# ----------------------------------------------------------------- round trips
@pytest.mark.parametrize("ext", ["wmg", "parquet", "csv", "graph", "pq", "csv.gz", "tve"])
@pytest.mark.parametrize("idx", range(4))
def test_round_trip_full_fidelity(tmp_path: Path, ext: str, idx: int) -> None:
    g = sample_graphs()[idx]
    p = tmp_path / f"g.{ext}"
    write_graph(g, p)
    h = read_graph(p, directed=g.directed)
    if ext in ("graph", "tve") and g.vertex_labels is None:
        # t/v/e has no unlabeled vertices: they are written with label 0
        assert h.vertex_labels is not None and not h.vertex_labels.any()
        h = dataclasses.replace(h, vertex_labels=None)
    assert_same_graph(g, h)


@pytest.mark.parametrize("ext", ["txt", "el", "txt.gz"])
def test_round_trip_edge_list(tmp_path: Path, ext: str) -> None:
    for g in sample_graphs()[:2]:
        p = tmp_path / f"g.{ext}"
        write_graph(g, p)
        h = read_graph(p, directed=g.directed)
        assert edge_set(h) == edge_set(g) and h.directed == g.directed
    g = sample_graphs()[3]
    with pytest.warns(UserWarning, match="cannot hold the vertex labels"):
        write_graph(g, tmp_path / "x.txt")
    h = read_graph(tmp_path / "x.txt", edge_labels=True)
    assert edge_set(h) == edge_set(g) and h.vertex_labels is None
    # edge labels survive through the third column
    g2 = Graph.from_edges([0, 1], [1, 2], edge_labels=[4, 5])
    write_graph(g2, tmp_path / "l.txt")
    assert edge_set(read_graph(tmp_path / "l.txt", edge_labels=True)) == {(0, 1, 4), (1, 2, 5)}
    # and are read back without asking: the first line says the file has them
    back = read_graph(tmp_path / "l.txt")
    assert back.edge_labels is not None and edge_set(back) == {(0, 1, 4), (1, 2, 5)}
    assert read_graph(tmp_path / "l.txt", edge_labels=False).edge_labels is None
    # a third column without that line is not a label (timestamps, weights)
    (tmp_path / "t.txt").write_text("# SNAP temporal graph\n0 1 1082040961\n1 2 1082155839\n")
    assert read_graph(tmp_path / "t.txt").edge_labels is None


@pytest.mark.parametrize("ext", ["wmg", "parquet", "csv", "csv.gz", "graph", "tve"])
@pytest.mark.parametrize("directed", [False, True])
def test_edge_labeled_graph_without_edges_round_trips(tmp_path: Path, ext: str,
                                                      directed: bool) -> None:
    # an empty edge-label array is "edge-labeled, no edges yet" (a stream's G0): every
    # format that holds edge labels keeps it, so a labeled stream can still be applied
    g = Graph.from_edges([], [], n=3, vertex_labels=[1, 2, 1], edge_labels=[],
                         ids=[4, 8, 15], directed=directed, name="g0")
    assert g.edge_labels is not None and g.edge_labels.size == 0 and g.num_edges == 0
    p = tmp_path / f"g0.{ext}"
    write_graph(g, p)
    h = read_graph(p, directed=directed)
    assert_same_graph(g, h)
    assert h.edge_labels.dtype == np.int32 and h.edge_labels.size == 0
    assert h.in_edge_labels is not None and h.in_edge_labels.size == 0
    if ext == "wmg":
        m = load_binary(p, mmap=False, validate=True)
        assert m.edge_labels is not None and m.edge_labels.size == 0
    # without edge labels it stays unlabeled, except in t/v/e, which cannot say so
    u = Graph.from_edges([], [], n=3, vertex_labels=[1, 2, 1], directed=directed)
    write_graph(u, tmp_path / f"u.{ext}")
    hu = read_graph(tmp_path / f"u.{ext}", directed=directed)
    assert (hu.edge_labels is None) == (ext not in ("graph", "tve"))


def test_round_trip_chain_all_formats(tmp_path: Path) -> None:
    """edge list -> binary -> parquet -> csv -> networkx -> scipy and back to the start."""
    src = tmp_path / "start.txt"
    src.write_text("# sparse ids\n5 9\n9 12\n12 5\n12 40\n40 41\n")
    g0 = read_graph(src, directed=True)
    write_graph(g0, tmp_path / "a.wmg")
    g1 = read_graph(tmp_path / "a.wmg")
    write_graph(g1, tmp_path / "b.parquet")
    g2 = read_graph(tmp_path / "b.parquet")          # direction recorded in the file
    write_graph(g2, tmp_path / "c.csv")
    g3 = read_graph(tmp_path / "c.csv", directed=True)
    g4 = Graph.from_networkx(g3.to_networkx())
    for g in (g1, g2, g3, g4):
        assert_same_graph(g0, g)
    g5 = Graph.from_scipy(g4.to_scipy())             # scipy knows no external ids
    assert g5.directed and edge_set(g5) == {
        tuple(int(x) for x in g4.to_internal(list(e))) for e in edge_set(g4)}


def test_binary_is_memory_mapped_and_read_only(tmp_path: Path) -> None:
    g = sample_graphs()[2]
    p = tmp_path / "g.wmg"
    save_binary(g, p)
    h = load_binary(p)
    assert isinstance(h.indices.base, np.memmap) or isinstance(h.indices.base.base, np.memmap)
    assert not h.indices.flags.writeable
    assert h.name == "labeled-directed" and h.report == g.report
    assert h.indices.dtype == g.indices.dtype and h.indptr.dtype == np.int64
    for name in ("indptr", "indices", "in_indptr", "in_indices", "edge_labels",
                 "in_edge_labels", "vertex_labels", "ids"):
        np.testing.assert_array_equal(getattr(h, name), getattr(g, name))
    m = load_binary(p, mmap=False, validate=True)
    assert m.indices.flags.writeable
    assert_same_graph(g, m)
    # the header lists every array at a 64-byte-aligned offset, and the file ends there
    raw = p.read_bytes()
    assert raw[:8] == b"WMGRAPH\x00"
    hlen = struct.unpack("<I", raw[12:16])[0]
    meta = json.loads(raw[24:24 + hlen])
    assert set(meta["arrays"]) == {"indptr", "indices", "in_indptr", "in_indices",
                                   "edge_labels", "in_edge_labels", "vertex_labels", "ids"}
    assert all(a["offset"] % 64 == 0 for a in meta["arrays"].values())
    assert meta["file_size"] == len(raw)


def test_binary_undirected_shares_in_arrays_and_empty_graph(tmp_path: Path) -> None:
    g = Graph.from_edges([], [], n=3)
    save_binary(g, tmp_path / "e.wmg")
    h = load_binary(tmp_path / "e.wmg", validate=True)
    assert h.n == 3 and h.num_edges == 0 and h.in_indices is h.indices


def test_binary_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "g.wmg"
    save_binary(sample_graphs()[0], p)
    before = p.read_bytes()

    def boom(*a, **k):
        raise RuntimeError("disk full")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        save_binary(sample_graphs()[1], p)
    assert p.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["g.wmg"]   # temp removed


def _corrupt(p: Path, how: str) -> None:
    data = bytearray(p.read_bytes())
    if how == "truncate":
        p.write_bytes(bytes(data[:-10]))
    elif how == "truncate-header":
        p.write_bytes(bytes(data[:30]))
    elif how == "truncate-prefix":
        p.write_bytes(bytes(data[:20]))       # the magic is intact, the fixed prefix is not
    elif how == "extra":
        p.write_bytes(bytes(data) + b"\0" * 64)
    elif how == "magic":
        data[0:8] = b"NOTAWMG!"
        p.write_bytes(bytes(data))
    elif how == "header":
        data[30] ^= 0xFF
        p.write_bytes(bytes(data))
    elif how == "version":
        data[8:12] = struct.pack("<I", 99)
        p.write_bytes(bytes(data))
    elif how == "empty":
        p.write_bytes(b"")


@pytest.mark.parametrize("how,fragment", [
    ("truncate", "truncated"),
    ("truncate-header", "truncated"),
    ("truncate-prefix", "truncated: 20 bytes"),
    ("extra", "corrupted"),
    ("magic", "bad magic"),
    ("header", "checksum"),
    ("version", "unsupported .wmg version 99"),
    ("empty", "the file is empty"),
])
def test_binary_corruption_is_detected(tmp_path: Path, how: str, fragment: str) -> None:
    p = tmp_path / "g.wmg"
    save_binary(sample_graphs()[2], p)
    _corrupt(p, how)
    with pytest.raises(InputFormatError, match=fragment) as ei:
        read_graph(p)
    assert str(ei.value).startswith(str(p))


def test_binary_validate_catches_bad_payload(tmp_path: Path) -> None:
    g = Graph.from_edges([0, 1], [1, 2])
    p = tmp_path / "g.wmg"
    save_binary(g, p)
    h = load_binary(p, mmap=False)
    # overwrite the indices payload with an out-of-range id
    data = bytearray(p.read_bytes())
    raw = np.asarray(h.indices).tobytes()
    pos = data.rfind(raw)
    bad = np.asarray(h.indices).copy()
    bad[0] = 99
    data[pos:pos + len(raw)] = bad.tobytes()
    p.write_bytes(bytes(data))
    with pytest.raises(InputFormatError, match="checksum of array 'indices'"):
        load_binary(p)                   # the checksum sees it ...
    with pytest.raises(InputFormatError, match="outside"):
        load_binary(p, verify=False)     # ... and so do the structural checks, always


def test_binary_direction_request(tmp_path: Path) -> None:
    p = tmp_path / "u.wmg"
    save_binary(sample_graphs()[0], p)
    with pytest.raises(GraphError, match="undirected"):
        read_graph(p, directed=True)
    assert read_graph(p, name="renamed").name == "renamed"


# ------------------------------------------------------------------------- CSV
def test_csv_column_selection_and_headerless(write) -> None:
    p = write("e.csv", "weight,from,to,kind\n0.5,1,2,4\n0.1,2,3,5\n")
    g = read_graph(p, src_col="from", dst_col="to", label_col="kind", directed=True)
    assert edge_set(g) == {(1, 2, 4), (2, 3, 5)}
    h = read_graph(write("n.csv", "1,2,99\n2,3,98\n"))     # no header: first two columns
    assert edge_set(h) == {(1, 2), (2, 3)}
    # write_graph's layout: an empty dst declares a vertex (an isolated one here)
    v = read_graph(write("v.csv", "src,dst\n1,2\n4,\n"))
    assert edge_set(v) == {(1, 2)} and v.ids.tolist() == [1, 2, 4]
    d = read_graph(write("s.csv", "src,dst,label\n1,2,3\n"))
    assert edge_set(d) == {(1, 2, 3)}


@pytest.mark.parametrize("text,line,fragment", [
    ("src,dst\n1,2\n3,x\n", 3, "'x' is not an integer"),
    ("src,dst\n1,2\n3\n", 3, "expected 2 fields, found 1"),
    ("src,dst\n1,2\n\n-3,4\n", 4, "-3 is negative"),
    ("src,dst\n1,2\n3,99999999999999999999\n", 3, "too large for int64"),
    ("a,b\n1,2\n2,1.5\n", 3, "not an integer"),
    ("src,dst,label\n1,2,3\n2,3,\n", 3, "edge row without a value in column 'label'"),
    ("src,dst,label\n1,2,3\n2,3,3000000000\n", 3, "too large (labels are int32)"),
    ("1,2\n,3\n", 2, "is empty (null)"),
    # an empty target is a vertex row only in write_graph's src,dst layout; here it
    # used to be read silently as a vertex-only row
    ("1,2\n2,3\n3,\n", 3, "column 'column2' is empty (null); an edge needs both endpoints"),
    ("from,to\n1,2\n4,\n", 3, "column 'to' is empty (null)"),
])
def test_csv_malformed_names_file_and_line(write, text: str, line: int, fragment: str) -> None:
    p = write("bad.csv", text)
    with pytest.raises(InputFormatError) as ei:
        read_graph(p)
    assert ei.value.line == line, str(ei.value)
    assert str(ei.value).startswith(f"{p}:{line}: ")
    assert fragment in str(ei.value)


@pytest.mark.parametrize("text,kw,fragment", [
    ("", {}, "the file is empty"),
    ("\n\n", {}, "only blank lines"),
    ("src,dst\n", {}, "no rows"),
    ("src\n1\n", {}, "at least 2 columns"),
    ("src,dst\n1,2\n", {"label_col": "lab"}, "no edge label column 'lab'"),
    ("src,dst\n1,2\n", {"src_col": "from"}, "no source column 'from'"),
])
def test_csv_structure_errors(write, text: str, kw: dict, fragment: str) -> None:
    p = write("bad.csv", text)
    with pytest.raises(InputFormatError, match=fragment) as ei:
        read_graph(p, **kw)
    assert str(ei.value).startswith(str(p))


# --------------------------------------------------------------------- Parquet
def test_parquet_foreign_table_and_column_options(tmp_path: Path) -> None:
    p = tmp_path / "e.parquet"
    pq.write_table(pa.table({"a": pa.array([1, 2], pa.uint32()), "b": [2, 3],
                             "t": pa.array([1.0, 2.0])}), p)
    g = read_graph(p)
    assert edge_set(g) == {(1, 2), (2, 3)} and not g.directed
    h = read_graph(p, src_col="b", dst_col="a", label_col="t", directed=True)
    assert edge_set(h) == {(2, 1, 1), (3, 2, 2)}


@pytest.mark.parametrize("table,kw,fragment", [
    ({"src": [1, -2], "dst": [2, 3]}, {}, "row 2: column 'src': -2 is negative"),
    ({"src": [1, 2], "dst": [2, None]}, {"vertex_label_col": "x"}, "no vertex label column"),
    ({"a": [1, 2], "b": [2, None]}, {}, "row 2: column 'b' is empty (null); an edge needs"),
    ({"src": [1, None], "dst": [2, 3]}, {}, "row 2: column 'src' is empty"),
    ({"src": pa.array([1, 2**64 - 1], pa.uint64()), "dst": [2, 3]}, {}, "too large for int64"),
    ({"src": [1.0, 2.5], "dst": [2, 3]}, {}, "row 2: column 'src': 2.5 is not an integer"),
    ({"src": ["a", "b"], "dst": [2, 3]}, {}, "has type string; expected integers"),
    ({"src": [1, 2], "dst": [2, 3]}, {"dst_col": "to"}, "no target column 'to'"),
    ({"x": [1, 2]}, {}, "at least 2 columns"),
    ({"src": pa.array([], pa.int64()), "dst": pa.array([], pa.int64())}, {}, "no rows"),
    ({"src": [1, 2], "dst": [2, 3], "label": [1, 2**40]}, {}, "too large (labels are int32)"),
])
def test_parquet_malformed(tmp_path: Path, table: dict, kw: dict, fragment: str) -> None:
    p = tmp_path / "bad.parquet"
    pq.write_table(pa.table(table), p)
    with pytest.raises(InputFormatError) as ei:
        read_graph(p, **kw)
    assert str(ei.value).startswith(f"{p}: ")
    assert fragment in str(ei.value)


@pytest.mark.parametrize("cut", [0, 10, -20])
def test_parquet_truncated_or_empty(tmp_path: Path, cut: int) -> None:
    p = tmp_path / "g.parquet"
    write_graph(sample_graphs()[0], p)
    data = p.read_bytes()
    p.write_bytes(data[:cut] if cut else b"")
    with pytest.raises(InputFormatError, match="empty|not a valid Parquet") as ei:
        read_graph(p)
    assert str(ei.value).startswith(str(p))


# --------------------------------------------------------------- Matrix Market
def test_mtx_reader(tmp_path: Path) -> None:
    A = sp.coo_array(([1.0, 2.0, 0.0], ([0, 1, 2], [1, 2, 0])), shape=(4, 4))
    p = tmp_path / "a.mtx"
    scipy.io.mmwrite(p, A)
    g = read_graph(p, directed=True)
    assert g.n == 4 and edge_set(g) == {(1, 2), (2, 3)}       # 1-based ids, zero dropped
    s = tmp_path / "s.mtx"
    s.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n")
    u = read_graph(s)
    assert edge_set(u) == {(1, 2), (2, 3)} and not u.directed


@pytest.mark.parametrize("idx", range(4))
def test_mtx_round_trip(tmp_path: Path, idx: int) -> None:
    g = sample_graphs()[idx]
    p = tmp_path / "g.mtx"
    lossy = g.vertex_labels is not None or g.edge_labels is not None or g.ids is not None
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        write_graph(g, p)
    assert bool([w for w in rec if "Matrix Market cannot hold" in str(w.message)]) == lossy
    h = read_graph(p, directed=g.directed)
    assert h.n == g.n and h.ids.tolist() == list(range(1, g.n + 1))
    src, dst = g.edges()
    want = {(int(u) + 1, int(v) + 1) if g.directed else tuple(sorted((int(u) + 1, int(v) + 1)))
            for u, v in zip(src, dst)}
    assert edge_set(h) == want


@pytest.mark.parametrize("text,fragment", [
    ("", "the file is empty"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n", "not a valid Matrix"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 x\n", "not a valid Matrix"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 2 1\n1 2\n", "must be square"),
    ("hello\n", "not a valid Matrix"),
])
def test_mtx_malformed(write, text: str, fragment: str) -> None:
    p = write("bad.mtx", text)
    with pytest.raises(InputFormatError, match=fragment) as ei:
        read_graph(p)
    assert str(ei.value).startswith(str(p))


@pytest.mark.parametrize("body,line,text", [
    ("3 3 2\n1 2\n2 x\n", 4, "2 x"),
    ("3 3 2\n1 2\n2 7\n", 4, "2 7"),                   # index beyond the declared size
])
def test_mtx_malformed_line_names_file_line_and_text(write, body: str, line: int,
                                                     text: str) -> None:
    p = write("bad.mtx", "%%MatrixMarket matrix coordinate pattern general\n% a comment\n"
              + body)
    with pytest.raises(InputFormatError) as ei:
        read_graph(p)
    assert (ei.value.line, ei.value.text) == (line + 1, text)    # +1: the comment line
    assert str(ei.value).startswith(f"{p}:{line + 1}: not a valid Matrix Market file")


# ------------------------------------------------------------------- real data
def test_wiki_vote_through_every_format(data_path, tmp_path: Path) -> None:
    g = read_graph(data_path("snap", "wiki-Vote.txt"), directed=True)
    for ext in ("wmg", "parquet", "csv", "txt"):
        p = tmp_path / f"w.{ext}"
        write_graph(g, p)
        h = read_graph(p, directed=True)
        assert (h.n, h.num_edges) == (7115, 103689)
        np.testing.assert_array_equal(h.indices, g.indices)
        np.testing.assert_array_equal(h.ids, g.ids)


def test_yeast_binary_round_trip(data_path, tmp_path: Path) -> None:
    g = read_graph(data_path("labeled", "yeast", "yeast.graph"))
    save_binary(g, tmp_path / "y.wmg")
    h = read_graph(tmp_path / "y.wmg")
    assert_same_graph(g, h)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputCleanupWarning)   # nothing is cleaned twice
        write_graph(h, tmp_path / "y.graph")
        assert_same_graph(g, read_graph(tmp_path / "y.graph"))
    assert vertex_map(h) == vertex_map(g)
