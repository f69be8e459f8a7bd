"""Tests of warpmatch.stream.updates: readers, stdin streaming, writers, stream generators."""
from __future__ import annotations

import dataclasses
import doctest
import gzip
import io
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpmatch.stream.updates as wu
from warpmatch.errors import InputCleanupWarning, InputFormatError
from warpmatch.graph import barabasi_albert, erdos_renyi, with_labels
from warpmatch.graph.csr import Graph
from warpmatch.stream.types import Updates
from warpmatch.stream.updates import (FRACTION_SLACK, as_updates, iter_update_batches,
                                      make_stream, read_updates, replay_temporal,
                                      split_batches, write_updates)


def same(a: Updates, b: Updates, line: bool = True) -> None:
    """Field-by-field equality of two update streams."""
    for f in ("src", "dst", "op", "label", "time", "new_vertex_ids", "new_vertex_labels") + (
            ("line",) if line else ()):
        x, y = getattr(a, f), getattr(b, f)
        assert (x is None) == (y is None), f
        if x is not None:
            assert x.dtype.kind == y.dtype.kind, f
            np.testing.assert_array_equal(x, y, err_msg=f)


class Chunks(io.RawIOBase):
    """A binary stream that hands out at most ``size`` bytes per read (like a slow pipe)."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size, self.pos = data, size, 0

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        k = self.size if n < 0 else min(n, self.size)
        out = self.data[self.pos:self.pos + k]
        self.pos += len(out)
        return out

    read = read1


# ---------------------------------------------------------------- text reader
def test_text_whitespace_comments_ops_and_declarations(write) -> None:
    p = write("u.txt", "\ufeff# a stream\n\n  v 100 3\n1 2 +\n2\t3   delete   # inline\r\n"
                       "% also a comment\n3 4 1\n4 5 -1\n5 6 +1\n6 7 INSERT\n7 8 -")
    u = read_updates(p)
    assert u.src.tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert u.dst.tolist() == [2, 3, 4, 5, 6, 7, 8]
    assert u.op.tolist() == [1, -1, 1, -1, 1, 1, -1]
    assert u.op.dtype == np.int8 and u.src.dtype == np.int64
    assert u.line.tolist() == [4, 5, 7, 8, 9, 10, 11]
    assert u.label is None and u.time is None
    assert u.new_vertex_ids.tolist() == [100] and u.new_vertex_labels.tolist() == [3]
    assert u.source == str(p) and len(u) == 7


def test_text_labels_and_timestamps(write) -> None:
    u = read_updates(write("u.txt", "1 2 + 4 10\n2 3 - 0 10\n3 4 + 5 11\n"))
    assert u.label.tolist() == [4, 0, 5] and u.label.dtype == np.int32
    assert u.time.tolist() == [10, 10, 11] and u.time.dtype == np.int64
    u = read_updates(write("f.txt", "1 2 + 4 1.5\n2 3 - 0 2\n3 4 + 5 2.5e1\n"))
    assert u.time.dtype == np.float64 and u.time.tolist() == [1.5, 2.0, 25.0]
    # labels=False: a 4th field is the timestamp
    u = read_updates(write("t.txt", "1 2 + 1082040961\n2 3 - 1082040962\n"), labels=False)
    assert u.label is None and u.time.tolist() == [1082040961, 1082040962]
    # labels=True: the label is required
    with pytest.raises(InputFormatError, match=r"t2\.txt:1: expected at least 4 fields"):
        read_updates(write("t2.txt", "1 2 +\n"), labels=True)


def test_columns_header_fixes_layout(write) -> None:
    u = read_updates(write("h.txt", "# columns: u v op time\n1 2 + 5\n2 3 - 6\n"))
    assert u.label is None and u.time.tolist() == [5, 6]
    u = read_updates(write("h2.txt", "# columns: src dst op label time\n1 2 + 3 5\n"))
    assert u.label.tolist() == [3] and u.time.tolist() == [5]
    with pytest.raises(InputFormatError, match=r"h3\.txt:3: expected at least 4 fields"):
        read_updates(write("h3.txt", "# columns: u v op time\n1 2 + 5\n2 3 -\n"))
    with pytest.raises(InputFormatError, match="columns:' header must read"):
        read_updates(write("h4.txt", "# columns: op u v\n+ 1 2\n"))
    with pytest.raises(InputFormatError, match="labels=True but"):
        read_updates(write("h5.txt", "# columns: u v op time\n1 2 + 5\n"), labels=True)


@pytest.mark.parametrize("text, line, fragment", [
    ("1 2 x\n", 1, "op: expected +, -, 1, -1, insert or delete"),
    ("1 2 +\n1 2 ++\n", 2, "op: expected"),
    ("1 2 0\n", 1, "op: expected"),
    ("1 2\n", 1, "expected at least 3 fields"),
    ("1 2 + 3 4 5\n", 1, "expected at most 5 fields"),
    ("a 2 +\n", 1, "source id: expected a non-negative integer"),
    ("1 2.5 +\n", 1, "target id: expected a non-negative integer"),
    ("# c\n-1 2 +\n", 2, "source id is negative"),
    ("1 99999999999999999999 +\n", 1, "too large"),
    ("1 2 + -3\n", 1, "edge label is negative"),
    ("1 2 + x\n", 1, "edge label: expected a non-negative integer"),
    ("1 2 + 2147483648\n", 1, "label is too large (labels are int32)"),
    ("1 2 + 1 5\n2 3 + 1 4\n", 2, "timestamp 4 is earlier than the previous update's (5)"),
    ("1 2 + 1 abc\n", 1, "timestamp: expected a number"),
    ("1 2 + 1 1e\n", 1, "timestamp: expected a number"),
    ("1 2 +\n1 2 + 3\n", 2, "some updates have an edge label and some do not"),
    ("1 2 + 1 5\n1 2 + 3\n", 2, "some updates have a timestamp and some do not"),
    ("v 1\n", 1, "a vertex line reads 'v ID LABEL'"),
    ("v 1 2 3\n", 1, "a vertex line reads"),
    ("v 1 -2\n", 1, "a vertex line reads"),
    ("v 1 2\n\nv 1 3\n", 3, "vertex 1 is declared twice"),
    ("v 5 1\nv 9 1\nv 9 2\nv 5 1\n", 3, "vertex 9 is declared twice"),
    ("v 1 9999999999\n", 1, "label is too large"),
    ("1 2 +\n3", 2, "the last line has no newline: is the input truncated?"),
])
def test_text_malformed_names_file_and_line(write, text: str, line: int,
                                            fragment: str) -> None:
    p = write("bad.txt", text)
    with pytest.raises(InputFormatError) as ei:
        read_updates(p)
    assert ei.value.line == line and ei.value.path == str(p)
    assert f"bad.txt:{line}:" in str(ei.value)
    assert fragment in str(ei.value), str(ei.value)
    assert ei.value.text  # the offending line is quoted


def test_empty_truncated_and_gzip(write, tmp_path: Path) -> None:
    for text in ("", "# only a comment\n\n", "\n\n"):
        u = read_updates(write("e.txt", text))
        assert len(u) == 0 and u.src.dtype == np.int64 and u.op.dtype == np.int8
    # a complete last line without a newline is fine
    assert read_updates(write("t.txt", "1 2 +\n3 4 -")).op.tolist() == [1, -1]
    p = tmp_path / "u.txt.gz"
    p.write_bytes(gzip.compress(b"1 2 +\n2 3 -\n"))
    assert read_updates(p).src.tolist() == [1, 2]


def test_missing_file_and_bad_format(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_updates(tmp_path / "nope.txt")
    with pytest.raises(IsADirectoryError):
        read_updates(tmp_path)
    with pytest.raises(InputFormatError, match="unknown update format"):
        read_updates("-", fmt="xml")


def test_large_file_is_tokenized_fast(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 300_000
    a = rng.integers(0, 10**9, (n, 2))
    ops = rng.choice(np.array(["+", "-", "insert", "delete"]), n)
    p = tmp_path / "big.txt"
    ref = Updates(a[:, 0].astype(np.int64), a[:, 1].astype(np.int64),
                  np.where((ops == "+") | (ops == "insert"), 1, -1).astype(np.int8))
    write_updates(p, ref)
    u = read_updates(p)
    same(u, ref, line=False)
    assert u.line[0] == 3 and u.line[-1] == n + 2          # after the two header lines


# -------------------------------------------------------------- stdin / chunks
def test_stream_chunks_equal_whole_file(write) -> None:
    rng = np.random.default_rng(3)
    lines = ["# header", "v 1000 1", "v 1001 2"]
    t = 0
    for i in range(500):
        t += int(rng.integers(0, 3))
        lines.append(f"{rng.integers(0, 50)} {rng.integers(0, 50)} "
                     f"{'+-'[i % 2]} {rng.integers(0, 4)} {t}")
        if i % 97 == 0:
            lines.append("# a comment in between")
        if i == 250:
            lines.append("v 1002 3")
    data = ("\n".join(lines) + "\n").encode()
    whole = read_updates(write("w.txt", data))
    for chunk, bs in ((7, 64), (64, 1), (1 << 20, 1000), (3, 499)):
        batches = list(iter_update_batches("-", bs, stream=Chunks(data, chunk), chunk_bytes=chunk))
        assert [len(b) for b in batches[:-1]] == [bs] * (len(batches) - 1)
        joined = Updates(*(np.concatenate([getattr(b, f) for b in batches])
                           for f in ("src", "dst", "op", "label", "time", "line")),
                         source="<stdin>")
        same(joined, dataclasses.replace(whole, new_vertex_ids=np.empty(0, np.int64),
                                         new_vertex_labels=np.empty(0, np.int32),
                                         source="<stdin>"))
        # declarations read so far travel with every batch
        assert batches[-1].new_vertex_ids.tolist() == [1000, 1001, 1002]
        assert batches[0].new_vertex_ids.tolist()[:2] == [1000, 1001]
        assert all(b.source == "<stdin>" for b in batches)


def test_stream_yields_before_reading_everything() -> None:
    data = b"".join(f"{i} {i + 1} +\n".encode() for i in range(2000))
    src = Chunks(data, 100)
    it = iter_update_batches("-", 10, stream=src, chunk_bytes=100)
    first = next(it)
    assert first.src.tolist() == list(range(10))
    assert src.pos < len(data) // 10            # only the first chunks were read
    assert sum(len(b) for b in it) == 1990


def test_stream_errors_name_global_line() -> None:
    data = b"# c\n" + b"1 2 +\n" * 300 + b"1 2 bad\n"
    got = []
    with pytest.raises(InputFormatError, match=r"<stdin>:302: op: expected"):
        for b in iter_update_batches("-", 100, stream=Chunks(data, 50), chunk_bytes=50):
            got.append(len(b))
    assert got[:2] == [100, 100]             # earlier batches were handed on first
    # decreasing time across a chunk boundary, and a decimal after integers
    data = b"1 2 + 0 5\n" * 20 + b"1 2 + 0 4\n"
    with pytest.raises(InputFormatError, match=r"<stdin>:21: timestamp 4 is earlier"):
        list(iter_update_batches("-", 5, stream=Chunks(data, 16), chunk_bytes=16))
    data = b"1 2 + 0 5\n" * 20 + b"1 2 + 0 5.5\n"
    with pytest.raises(InputFormatError, match=r"<stdin>:21: a decimal timestamp"):
        list(iter_update_batches("-", 5, stream=Chunks(data, 16), chunk_bytes=16))
    with pytest.raises(InputFormatError, match=r"<stdin>:2: expected at least 3 fields.*"
                                               r"truncated"):
        list(iter_update_batches("-", 5, stream=Chunks(b"1 2 +\n3 4", 4), chunk_bytes=4))


def test_stream_header_in_its_own_chunk_and_empty() -> None:
    data = b"# columns: u v op time\n1 2 + 7\n2 3 - 8\n"
    got = list(iter_update_batches("-", 10, stream=Chunks(data, 5), chunk_bytes=5))
    assert len(got) == 1 and got[0].time.tolist() == [7, 8] and got[0].label is None
    assert list(iter_update_batches("-", 10, stream=io.BytesIO(b""))) == []
    assert list(iter_update_batches("-", 10, stream=io.BytesIO(b"# nothing\n"))) == []
    decl_only = list(iter_update_batches("-", 10, stream=io.BytesIO(b"v 5 1\n")))
    assert len(decl_only) == 1 and len(decl_only[0]) == 0
    assert decl_only[0].new_vertex_ids.tolist() == [5]
    with pytest.raises(ValueError):
        next(iter_update_batches("-", 0, stream=io.BytesIO(b"")))


def test_read_updates_stdin(monkeypatch) -> None:
    fake = io.TextIOWrapper(io.BytesIO(b"1 2 +\n2 3 -\n"))
    monkeypatch.setattr("sys.stdin", fake)
    u = read_updates("-")
    assert u.source == "<stdin>" and u.src.tolist() == [1, 2] and u.line.tolist() == [1, 2]


def test_temporal_log_as_updates_gets_a_hint(write) -> None:
    # the natural mistake: SNAP's CollegeMsg ('src dst unix_time') given as UPDATES
    p = write("msg.txt", "# SRC DST UNIXTS\n1 2 1082040961\n")
    with pytest.raises(InputFormatError, match=r"msg.txt:2: op: .*stream-gen LOG --temporal"):
        read_updates(p)
    with pytest.raises(InputFormatError) as exc:       # a bad word gets no such hint
        read_updates(write("w.txt", "1 2 add\n"))
    assert "stream-gen" not in str(exc.value)


def test_stdin_parquet_is_recognised(monkeypatch, tmp_path: Path) -> None:
    # `cat ups.parquet | warpmatch stream g q -`: stdin has no extension to go by
    ups = as_updates([(1, 2, "+"), (2, 3, "+"), (1, 2, "-")])
    write_updates(tmp_path / "u.parquet", ups)
    data = (tmp_path / "u.parquet").read_bytes()
    for size in (1, 3, 1 << 20):
        got = list(iter_update_batches("-", 2, stream=Chunks(data, size), chunk_bytes=size))
        assert [len(b) for b in got] == [2, 1]
        assert np.concatenate([b.src for b in got]).tolist() == [1, 2, 1]
        assert got[0].op.tolist() == [1, 1] and got[1].op.tolist() == [-1]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    u = read_updates("-")
    assert u.src.tolist() == [1, 2, 1] and u.line.tolist() == [1, 2, 3]
    # an explicit format wins; short text inputs still work
    with pytest.raises(InputFormatError, match="<stdin>:1"):
        list(iter_update_batches("-", 2, stream=io.BytesIO(data), fmt="text"))
    assert [len(b) for b in iter_update_batches("-", 2, stream=io.BytesIO(b"1 2 +"))] == [1]


def test_split_batches_and_file_batches(write) -> None:
    p = write("u.txt", "v 9 1\n" + "".join(f"{i} {i + 1} +\n" for i in range(10)))
    whole = read_updates(p)
    parts = list(iter_update_batches(p, 4))
    assert [len(b) for b in parts] == [4, 4, 2]
    assert np.concatenate([b.line for b in parts]).tolist() == whole.line.tolist()
    assert all(b.new_vertex_ids is parts[0].new_vertex_ids for b in parts)
    assert list(split_batches(Updates(whole.src[:0], whole.dst[:0], whole.op[:0]), 3)) == []
    only_decl = list(split_batches(whole.slice(0, 0), 3))
    assert len(only_decl) == 1 and only_decl[0].new_vertex_ids.tolist() == [9]
    with pytest.raises(ValueError):
        list(split_batches(whole, 0))


# ------------------------------------------------------------------- tables
def test_round_trip_all_formats(tmp_path: Path) -> None:
    ref = Updates(np.array([1, 2, 77], np.int64), np.array([2, 3, 1], np.int64),
                  np.array([1, -1, 1], np.int8), label=np.array([4, 0, 2], np.int32),
                  time=np.array([1.5, 2.0, 2.0]), source="x",
                  new_vertex_ids=np.array([77], np.int64),
                  new_vertex_labels=np.array([5], np.int32))
    for name in ("u.parquet", "u.pq", "u.csv", "u.txt", "u.txt.gz", "u.updates"):
        write_updates(tmp_path / name, ref)
        same(read_updates(tmp_path / name), ref, line=False)
    plain = Updates(ref.src, ref.dst, ref.op)
    decl = dataclasses.replace(plain, new_vertex_ids=ref.new_vertex_ids,
                               new_vertex_labels=ref.new_vertex_labels)
    for name in ("p.parquet", "p.csv", "p.txt"):
        for ups in (plain, decl):              # unlabeled updates stay unlabeled
            write_updates(tmp_path / name, ups)
            same(read_updates(tmp_path / name), ups, line=False)
    # integer timestamps stay integers
    ti = dataclasses.replace(plain, time=np.array([5, 6, 6], np.int64))
    for name in ("i.parquet", "i.txt"):
        write_updates(tmp_path / name, ti)
        assert read_updates(tmp_path / name).time.dtype == np.int64
    # format by content for an unknown extension
    write_updates(tmp_path / "x.bin", ref, fmt="parquet")
    same(read_updates(tmp_path / "x.bin"), ref, line=False)


def test_writer_picks_the_format_the_reader_will(tmp_path: Path) -> None:
    # the writer used to ignore a .gz'd table extension and write text, which the reader
    # (looking through the .gz) then failed to read as CSV
    ups = as_updates([(1, 2, "+"), (2, 3, "-")])
    write_updates(tmp_path / "u.csv.gz", ups)
    with gzip.open(tmp_path / "u.csv.gz", "rt") as fh:
        assert fh.readline().startswith("src,dst,op")
    same(read_updates(tmp_path / "u.csv.gz"), ups, line=False)
    assert wu.output_update_format("u.csv.gz") == "csv"
    assert wu.output_update_format("u.log") == "text"
    with pytest.raises(InputFormatError, match=r"u.parquet.gz: Parquet .* drop the .gz"):
        write_updates(tmp_path / "u.parquet.gz", ups)
    assert not list(tmp_path.glob("u.parquet*"))

def test_write_is_atomic(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(FileNotFoundError):
        write_updates(tmp_path / "missing" / "u.txt", as_updates([(1, 2, "+")]))
    target = tmp_path / "u.parquet"
    target.write_text("old")

    def boom(table, where, **kw):
        Path(where).write_text("half a file")
        raise OSError("disk full")
    monkeypatch.setattr(pq, "write_table", boom)
    with pytest.raises(OSError, match="disk full"):
        write_updates(target, as_updates([(1, 2, "+")]))
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["u.parquet"]


def _parquet(path: Path, **cols) -> Path:
    pq.write_table(pa.table(cols), path)
    return path


@pytest.mark.parametrize("cols, row, fragment", [
    ({"src": [1], "dst": [2]}, None, "missing op"),
    ({"src": [1, 2], "dst": [2, 3], "op": ["+", "x"]}, 2, "op 'x'"),
    ({"src": [1, 2], "dst": [2, 3], "op": [1, 0]}, 2, "op 0: expected 1 (insert)"),
    ({"src": [1, -2], "dst": [2, 3], "op": [1, 1]}, 2, "source id -2 is negative"),
    ({"src": [1, 2], "dst": [2, 3], "op": [1, 1], "time": [5, 4]}, 2, "timestamp 4 is"),
    ({"src": [1, 2], "dst": [2, 3], "op": [1, None]}, 2, "column 'op' is empty"),
    ({"src": [1.5], "dst": [2], "op": [1]}, None, "column 'src' has type double"),
    ({"src": [1], "dst": [2], "op": [1], "label": [2**31]}, 1, "edge label 2147483648"),
    ({"src": [3], "dst": pa.array([None], pa.int64()), "op": [None]}, 1, "a vertex row"),
    ({"src": [3, 3], "dst": pa.array([None, None], pa.int64()), "op": [None, None],
      "vertex_label": [1, 1]}, 2, "vertex 3 is declared twice"),
    ({"src": [3, 1], "dst": pa.array([None, 2], pa.int64()), "op": [None, 1],
      "vertex_label": [4, 5]}, 2, "an update row (non-empty dst) has a vertex_label"),
])
def test_parquet_malformed(tmp_path: Path, cols: dict, row: int | None, fragment: str) -> None:
    """Parquet has no lines: errors give the row number counted from 1 as the 'line'."""
    p = _parquet(tmp_path / "bad.parquet", **cols)
    with pytest.raises(InputFormatError) as ei:
        read_updates(p)
    assert ei.value.line == row and fragment in str(ei.value), str(ei.value)
    assert str(ei.value).startswith(f"{p}:{row}:" if row else f"{p}:")


def test_table_lines_for_later_errors(write, tmp_path: Path) -> None:
    """Updates.line of tables: CSV file lines (blank lines skipped), Parquet rows from 1."""
    u = read_updates(write("u.csv", "src,dst,op\n1,2,+\n\n2,3,-\n"))
    assert u.line.tolist() == [2, 4]
    _parquet(tmp_path / "v.parquet", src=[5, 1, 2], dst=pa.array([None, 2, 3], pa.int64()),
             op=[None, 1, -1], label=[4, 0, 0])
    v = read_updates(tmp_path / "v.parquet")
    assert v.line.tolist() == [2, 3] and v.new_vertex_ids.tolist() == [5]
    assert v.where(1) == f"{tmp_path / 'v.parquet'}:3"


def test_parquet_not_parquet_and_empty(tmp_path: Path) -> None:
    p = tmp_path / "x.parquet"
    p.write_bytes(b"PAR1 truncated")
    with pytest.raises(InputFormatError, match="not a valid Parquet file"):
        read_updates(p)
    p.write_bytes(b"")
    assert len(read_updates(p)) == 0


def test_csv_errors_name_line(write) -> None:
    p = write("u.csv", "src,dst,op\n1,2,+\n2,3,delete\n3,x,+\n")
    with pytest.raises(InputFormatError, match=r"u\.csv:4: .*'x' is not an integer"):
        read_updates(p)
    p = write("v.csv", "src,dst,op\n1,2,+\n2,3,bogus\n")
    with pytest.raises(InputFormatError, match=r"v\.csv:3: op 'bogus'"):
        read_updates(p)
    assert read_updates(write("w.csv", "src,dst,op\n1,2,+\n2,3,-1\n")).op.tolist() == [1, -1]


# --------------------------------------------------------------- as_updates
def test_as_updates_forms() -> None:
    ref = as_updates([(1, 2, "+"), (2, 3, "-"), (3, 4, 1), (4, 5, -1), (5, 6, "insert"),
                      (6, 7, "delete")])
    assert ref.op.tolist() == [1, -1, 1, -1, 1, -1] and ref.source == "<array>"
    assert as_updates(ref) is ref
    s, d, o = ref.src, ref.dst, ref.op
    same(as_updates((s, d, o)), ref)
    same(as_updates({"src": s.tolist(), "dst": d.tolist(), "op": o.tolist()}), ref)
    same(as_updates(np.stack([s, d, o.astype(np.int64)], axis=1)), ref)
    same(as_updates(pa.table({"src": s, "dst": d, "op": o})), ref)
    lab = as_updates((s, d, o, np.arange(6)))
    assert lab.label.tolist() == list(range(6)) and lab.label.dtype == np.int32
    assert as_updates([(1, 2, "+", 7)]).label.tolist() == [7]
    assert len(as_updates([])) == 0
    t = as_updates({"src": [1, 2], "dst": [2, 3], "op": ["+", "-"], "time": [1.5, 2.5]})
    assert t.time.tolist() == [1.5, 2.5]


@pytest.mark.parametrize("obj, fragment", [
    ([(1, 2, "?")], "update 0: op '?'"),
    ([(1, 2, "+"), (1, 2)], "update 1: expected 3 fields"),
    ([(1, 2)], "update 0: expected a tuple (u, v, op[, label]) or a vertex declaration "
               "('v', id, label), found 2"),
    ([(1, -2, "+")], "update 0: target id -2 is negative"),
    ([(1.5, 2, "+")], "update 0: source id 1.5 is not an integer"),
    ([(1, 2, "+", 2**31)], "update 0: edge label 2147483648 is too large"),
    ((np.array([1, 2]), np.array([2]), np.array([1, 1])), "differ in length"),
    ((np.array([1.0]), np.array([2]), np.array([1])), "source id must be integers"),
    ({"src": [1], "dst": [2]}, "needs keys src, dst, op"),
    (np.zeros((2, 5), np.int64), "3 or 4 columns"),
    ({"src": [1, 2], "dst": [2, 3], "op": [1, 1], "time": [3, 2]}, "must not decrease"),
    ([(1, 2, True)], "update 0: op True"),
])
def test_as_updates_errors(obj, fragment: str) -> None:
    with pytest.raises(InputFormatError) as ei:
        as_updates(obj)
    assert fragment in str(ei.value), str(ei.value)
    with pytest.raises(TypeError):
        as_updates("updates.txt")


def test_as_updates_declarations_equal_the_text_file(write, tmp_path: Path) -> None:
    # ("v", id, label) tuples stand where a text file has its 'v ID LABEL' lines: anywhere,
    # before, between and after the updates; both give the same Updates (lines aside)
    items = [("v", 100, 3), (1, 100, "+", 2), (100, 2, "-", 0), ("V", 7, 0),
             (7, 1, "insert", 5), ("v", 2**40, 2**31 - 1)]
    text = "v 100 3\n1 100 + 2\n100 2 - 0\nV 7 0\n7 1 insert 5\nv 1099511627776 2147483647\n"
    ref = read_updates(write("u.txt", text))
    got = as_updates(items)
    same(got, ref, line=False)
    assert got.new_vertex_ids.tolist() == [100, 7, 2**40]          # in the order given
    assert got.new_vertex_ids.dtype == np.int64 and got.new_vertex_labels.dtype == np.int32
    assert got.label.tolist() == [2, 0, 5] and got.line is None and got.source == "<array>"
    # numpy scalars, lists instead of tuples, and a generator work too
    same(as_updates(iter([["v", np.int64(100), np.int32(3)]] + items[1:])), ref, line=False)
    # the mapping form: vertex_id/vertex_label arrays beside the update columns ...
    cols = {"src": ref.src, "dst": ref.dst, "op": ref.op, "label": ref.label,
            "vertex_id": np.array([100, 7, 2**40]), "vertex_label": [3, 0, 2**31 - 1]}
    same(as_updates(cols), ref, line=False)
    # ... or the rows of an update table (a None dst declares vertex src), as to_pydict gives
    rows = {"src": [100, 1, 100, 7, 7, 2**40], "dst": [None, 100, 2, None, 1, None],
            "op": [None, "+", "-", None, 1, None], "label": [None, 2, 0, None, 5, None],
            "vertex_label": [3, None, None, 0, None, 2**31 - 1]}
    same(as_updates(rows), ref, line=False)
    same(as_updates(pa.table(dict(rows, op=[None, "+", "-", None, "+", None]))), ref,
         line=False)
    # a Parquet/CSV file written from it reads back the same
    for name in ("w.parquet", "w.csv", "w.txt"):
        write_updates(tmp_path / name, got)
        same(read_updates(tmp_path / name), ref, line=False)
    # declarations only: zero updates, as a file of 'v' lines
    only = as_updates([("v", 5, 1), ("v", 6, 2)])
    same(only, read_updates(write("v.txt", "v 5 1\nv 6 2\n")), line=False)
    assert len(only) == 0 and list(split_batches(only, 4))[0] is only
    same(as_updates({"src": [5, 6], "dst": [None, None], "op": [None, None],
                     "vertex_label": [1, 2]}), only, line=False)
    # declarations are kept whole by every slice (as a file's are by split_batches)
    for b in split_batches(got, 2):
        assert b.new_vertex_ids is got.new_vertex_ids


def test_as_updates_declarations_hold_for_the_whole_batch() -> None:
    # a declaration after the update that creates the vertex still labels it, exactly as
    # a 'v' line after that update does in a text file read whole (DynamicGraph.prepare)
    from warpmatch.stream.dynamic import DynamicGraph
    g = Graph.from_edges([0], [1], vertex_labels=[4, 4])
    for items in ([("v", 9, 6), (0, 9, "+")], [(0, 9, "+"), ("v", 9, 6)]):
        dg = DynamicGraph(g)
        dg.apply(dg.prepare(as_updates(items)))
        assert dg.vertex_labels.tolist() == [4, 4, 6]
    dg = DynamicGraph(g)                         # a declaration no update uses creates nothing
    dg.apply(dg.prepare(as_updates([("v", 9, 6), (0, 1, "-")])))
    assert dg.n == 2


@pytest.mark.parametrize("obj, fragment", [
    ([(1, 2, "+"), ("v", 9)], "update 1: a vertex declaration reads ('v', id, label), "
                              "found 2 fields"),
    ([("v", 9, 1, 2)], "update 0: a vertex declaration reads ('v', id, label), found 4"),
    ([("v", 9, 1), (1, 2, "+"), ("v", -3, 1)], "update 2: vertex id -3 is negative"),
    ([("v", 9, -1)], "update 0: vertex label -1 is negative"),
    ([(1, 2, "+"), ("v", 9.0, 1)], "update 1: vertex id 9.0 is not an integer"),
    ([("v", 9, "7")], "update 0: vertex label '7' is not an integer"),
    ([("v", 9, True)], "update 0: vertex label True is not an integer"),
    ([("v", 9, None)], "update 0: vertex label None is not an integer"),
    ([("v", 9, 2**31)], "update 0: vertex label 2147483648 is too large (labels are int32)"),
    ([("v", 2**63, 1)], "update 0: vertex id 9223372036854775808 is too large for int64"),
    ([("v", 9, 1), (9, 2, "+"), ("v", 9, 1)], "update 2: vertex 9 is declared twice"),
    # the message quotes the declaration as the caller wrote it
    ([("V", 9, 1), ("V", -3, 1)], "update 1: vertex id -3 is negative (ids and labels must "
                                  "be >= 0): \"('V', -3, 1)\""),
    ([("x", 9, 1)], "update 0: source id 'x' is not an integer (a vertex declaration reads"),
    ([("v", 9, 1), "v 10 2"], "update 1: expected a tuple (u, v, op[, label]) or a vertex "
                              "declaration ('v', id, label), not a string"),
    ([("v", 9, 1), 5], "update 1: expected a tuple"),
    # update errors name the position in the list, declarations counted
    ([("v", 9, 1), (1, 2, "+"), (9, -2, "+")], "update 2: target id -2 is negative"),
    ([("v", 9, 1), (9, 2, "?")], "update 1: op '?'"),
    ([("v", 9, 1), (9, 2, "+"), (9, 3)], "update 2: expected 3 fields (u, v, op) like the first"),
    ([("v", 9, 1), (9, 2)], "update 1: expected a tuple (u, v, op[, label]) or a vertex "
                            "declaration ('v', id, label), found 2 fields"),
    ({"src": [1], "dst": [2], "op": [1], "vertex_id": [9, 10], "vertex_label": [1]},
     "vertex_id and vertex_label differ in length (2, 1)"),
    ({"src": [1], "dst": [2], "op": [1], "vertex_id": [9]}, "vertex_label is missing"),
    ({"src": [1], "dst": [2], "op": [1], "vertex_id": 9, "vertex_label": 1},
     "vertex_id must be a 1-D sequence"),
    ({"src": [1], "dst": [2], "op": [1], "vertex_id": [9, -10], "vertex_label": [1, 1]},
     "vertex declaration 1: vertex id -10 is negative"),
    ({"src": [1], "dst": [2], "op": [1], "vertex_id": np.array([9, 10]),
      "vertex_label": np.array([1, 2**31])}, "vertex declaration 1: vertex label 2147483648 "
                                             "is too large"),
    ({"src": [1], "dst": [2], "op": [1], "vertex_id": [9, 9], "vertex_label": [1, 1]},
     "vertex declaration 1: vertex 9 is declared twice"),
    ({"src": [1], "dst": [2], "op": [1], "vertex_id": [9.5], "vertex_label": [1]},
     "vertex declaration 0: vertex id 9.5 is not an integer"),
    ({"src": [3, 1], "dst": [None, 2], "op": [None, 1], "vertex_label": [-4, None]},
     "update 0: vertex label -4 is negative"),
    ({"src": [3, 1], "dst": [None, 2], "op": [None, 1], "vertex_label": [4]},
     "columns need one length; got src 2, dst 2, op 2, vertex_label 1"),
    # vertex_id forgotten: the labels would otherwise vanish
    ({"src": [1, 2], "dst": [2, 3], "op": [1, 1], "vertex_label": [5, 6]},
     "update 0: an update row (non-empty dst) has a vertex_label"),
    ({"src": [3, 3], "dst": [None, None], "op": [None, None], "vertex_label": [1, 2]},
     "update 1: vertex 3 is declared twice"),
    ({"src": [3, 1], "dst": [None, 2], "op": [None, 1]},
     "update 0: target id is None; a row with an empty dst declares vertex src only with a "
     "'vertex_label'"),
])
def test_as_updates_declaration_errors(obj, fragment: str) -> None:
    with pytest.raises(InputFormatError) as ei:
        as_updates(obj)
    assert fragment in str(ei.value), str(ei.value)


# --------------------------------------------------------------- make_stream
def _edge_set(g: Graph) -> set[tuple[int, int]]:
    s, d = g.edges()
    s, d = g.to_external(s).tolist(), g.to_external(d).tolist()
    return {(a, b) if g.directed else (min(a, b), max(a, b)) for a, b in zip(s, d)}


def _replay(g0: Graph, ups: Updates) -> set[tuple[int, int]]:
    """Apply ``ups`` to ``g0``'s edge set, asserting each update is valid when it comes."""
    live = _edge_set(g0)
    for u, v, o in zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist()):
        e = (u, v) if g0.directed else (min(u, v), max(u, v))
        if o > 0:
            assert e not in live and u != v
            live.add(e)
        else:
            assert e in live
            live.remove(e)
    return live


@settings(max_examples=25, deadline=None)
@given(n=st.integers(5, 40), p=st.floats(0.05, 0.6), ins=st.floats(0, 1),
       dele=st.floats(0, 1), seed=st.integers(0, 2**31), directed=st.booleans())
def test_make_stream_properties(n: int, p: float, ins: float, dele: float, seed: int,
                                directed: bool) -> None:
    g = erdos_renyi(n, p=p, seed=seed, directed=directed)
    ids = np.arange(n, dtype=np.int64) * 3 + 100               # non-trivial external ids
    g = dataclasses.replace(g, ids=ids)
    if ins + dele > 1 + FRACTION_SLACK:   # make_stream's tolerance for rounding in the sum
        with pytest.raises(ValueError):
            make_stream(g, ins, dele, seed)
        return
    g0, ups = make_stream(g, ins, dele, seed)
    full = _edge_set(g)
    assert g0.n == g.n and g0.directed == g.directed
    np.testing.assert_array_equal(g0.ids, g.ids)
    m = g.num_edges
    n_ins, n_del = int((ups.op > 0).sum()), int((ups.op < 0).sum())
    assert n_ins == round(ins * m) and n_del == min(round(dele * m), m - n_ins)
    assert abs(n_ins - ins * m) <= 0.5 and n_ins + n_del <= m
    assert g0.num_edges == m - n_ins
    final = _replay(g0, ups)                                  # every update valid in order
    deleted = {(u, v) if directed else (min(u, v), max(u, v))
               for u, v, o in zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist()) if o < 0}
    assert deleted <= _edge_set(g0) and len(deleted) == n_del
    assert final == full - deleted
    g0b, upsb = make_stream(g, ins, dele, seed)               # seeded: reproducible
    same(ups, upsb)
    assert _edge_set(g0b) == _edge_set(g0)


def test_make_stream_no_deletions_replays_to_original_with_labels() -> None:
    g = barabasi_albert(200, 3, seed=4)
    rng = np.random.default_rng(1)
    g = with_labels(g, vertex_labels=rng.integers(0, 5, g.n),
                    edge_labels=rng.integers(0, 3, g.num_edges))
    g0, ups = make_stream(g, 0.3, 0.0, seed=9)
    assert (ups.op == 1).all() and ups.label is not None
    assert _replay(g0, ups) == _edge_set(g)
    np.testing.assert_array_equal(g0.vertex_labels, g.vertex_labels)
    # insertions carry the original edge labels
    for u, v, lab in zip(ups.src.tolist(), ups.dst.tolist(), ups.label.tolist()):
        assert g.edge_label(*g.to_internal([u, v]).tolist()) == lab
    # both orientations of undirected edges occur
    assert (ups.src > ups.dst).any() and (ups.src < ups.dst).any()
    # the interleaving differs between seeds
    assert not np.array_equal(ups.src, make_stream(g, 0.3, 0.0, seed=10)[1].src)


def test_make_stream_bad_fractions() -> None:
    g = barabasi_albert(20, 2)
    for a, b in ((-0.1, 0), (0, 1.5), (0.7, 0.7)):
        with pytest.raises(ValueError):
            make_stream(g, a, b)
    g0, ups = make_stream(g, 0, 0)
    assert len(ups) == 0 and g0.num_edges == g.num_edges


# ------------------------------------------------------------ replay_temporal
LOG = """# src dst time (unsorted on purpose)
1 2 10
2 1 12
3 4 11
1 2 30
5 5 31
3 4 40
4 3 41
9 1 50
"""


def test_replay_temporal_no_window(write) -> None:
    with pytest.warns(InputCleanupWarning, match="1 self-loop"):
        g0, ups = replay_temporal(write("log.txt", LOG))
    assert g0.num_edges == 0 and g0.n == 6
    assert g0.to_external(np.arange(g0.n)).tolist() == [1, 2, 3, 4, 5, 9]
    assert list(zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist(), ups.time.tolist(),
                    ups.line.tolist())) == [(1, 2, 1, 10, 2), (3, 4, 1, 11, 4), (9, 1, 1, 50, 9)]
    with pytest.warns(InputCleanupWarning):
        g0d, upsd = replay_temporal(write("log.txt", LOG), directed=True)
    assert g0d.directed
    assert list(zip(upsd.src.tolist(), upsd.dst.tolist(), upsd.time.tolist())) == [
        (1, 2, 10), (3, 4, 11), (2, 1, 12), (4, 3, 41), (9, 1, 50)]


def test_replay_temporal_window(write) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputCleanupWarning)
        g0, ups = replay_temporal(write("log.txt", LOG), window=10)
    got = list(zip(ups.src.tolist(), ups.dst.tolist(), ups.op.tolist(), ups.time.tolist()))
    # 1-2: messages at 10, 12 -> expires 22; again at 30 -> expires 40
    # 3-4: 11 -> expires 21; 40, 41 -> expires 51 (after the log's end: not emitted)
    # at time 40 the deletion of 1-2 comes before the insertion of 3-4
    # a deletion names the edge as its insertion did (1 2, not the later 2 1)
    assert got == [(1, 2, 1, 10), (3, 4, 1, 11), (3, 4, -1, 21), (1, 2, -1, 22),
                   (1, 2, 1, 30), (1, 2, -1, 40), (3, 4, 1, 40), (9, 1, 1, 50)]
    assert _replay(g0, ups) == {(3, 4), (1, 9)}
    # a gap of exactly W: the edge expires and comes back at the same time
    p = write("tie.txt", "1 2 0\n1 2 5\n")
    _, ups = replay_temporal(p, window=5)
    assert list(zip(ups.op.tolist(), ups.time.tolist())) == [(1, 0), (-1, 5), (1, 5)]
    _, ups = replay_temporal(p, window=2.5)
    assert ups.time.dtype == np.float64 and ups.time.tolist() == [0.0, 2.5, 5.0]
    with pytest.raises(ValueError):
        replay_temporal(p, window=0)


def test_replay_temporal_malformed(write) -> None:
    with pytest.raises(InputFormatError, match=r"bad\.txt:2: timestamp: expected"):
        replay_temporal(write("bad.txt", "1 2 3\n1 2 x\n"))
    with pytest.raises(InputFormatError, match=r"short\.txt:1: expected 3 values"):
        replay_temporal(write("short.txt", "1 2\n"))
    with pytest.raises(InputFormatError, match="no message lines"):
        replay_temporal(write("empty.txt", "# nothing\n"))


def test_replay_collegemsg(data_path) -> None:
    path = data_path("snap", "CollegeMsg.txt")       # skipped, with the path, if absent
    g0, ups = replay_temporal(path)
    assert g0.n == 1899 and g0.num_edges == 0
    assert len(ups) == 13838 and (ups.op == 1).all()          # distinct undirected pairs
    assert (np.diff(ups.time) >= 0).all()
    week = 7 * 24 * 3600
    g0, ups = replay_temporal(path, window=week, directed=True)
    assert (np.diff(ups.time) >= 0).all() and (ups.op == -1).any()
    final = _replay(g0, ups)                                   # every update valid
    # the final graph holds exactly the pairs messaged within the last week
    log = np.loadtxt(path, dtype=np.int64)
    recent = log[log[:, 2] > log[-1, 2] - week]
    assert final == {(int(a), int(b)) for a, b, _ in recent if a != b}


def test_module_doctests() -> None:
    res = doctest.testmod(wu, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
