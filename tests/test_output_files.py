"""Where ``-o`` writes: symlinks, special files, stdout, permissions; and convert's label rule.

Real paths under ``tmp_path`` throughout. Special files are FIFOs made here and a null
device: ``/dev/null`` itself only when the tests cannot replace it (not root), else a private
copy made with ``mknod``, so that a regression can never replace the machine's ``/dev/null``.
"""
from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import assert_clean_error
from click.testing import CliRunner, Result

import warpmatch as wm
from warpmatch._writers import (
    atomic_path,
    check_output,
    is_stdout,
    open_match_writer,
    output_format,
    special_file,
)
from warpmatch.cli import cli
from warpmatch.errors import GraphError, InputFormatError, WarpmatchError

REF = ("--backend", "reference")          # no JIT compile: these tests are about files
LABELED = "t 3 3\nv 0 1\nv 1 2\nv 2 1\ne 0 1\ne 1 2\ne 2 0\n"


def run(*args: object, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """Two triangles sharing an edge, ids not 0..n-1: 12 triangle embeddings."""
    p = tmp_path_factory.mktemp("g") / "tiny.txt"
    p.write_text("10 20\n20 30\n30 10\n20 40\n40 30\n")
    return p


@pytest.fixture(scope="module")
def tiny_rows(tiny) -> set[tuple[int, ...]]:
    g = wm.read_graph(tiny)
    return {tuple(r) for b in wm.match(g, "triangle", backend="reference") for r in b.tolist()}


def csv_rows(text: str) -> tuple[list[str], set[tuple[int, ...]]]:
    lines = text.strip().splitlines()
    return lines[0].split(","), {tuple(int(x) for x in ln.split(",")) for ln in lines[1:]}


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(p: Path) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def no_leftovers(*dirs: Path) -> None:
    for d in dirs:
        left = [p.name for p in d.iterdir() if ".partial" in p.name]
        assert left == [], left


@pytest.fixture
def null_device(tmp_path) -> Path:
    """A character device that discards writes, which these tests can never replace."""
    if os.geteuid() != 0:
        return Path("/dev/null")     # /dev is not writable: a bug cannot replace it
    dev = tmp_path / "null"
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        with open(dev, "wb") as fh:   # a nodev mount refuses to open devices
            fh.write(b"x")
    except OSError as exc:
        pytest.skip(f"cannot make a private null device here: {exc}")
    return dev


class FifoReader:
    """Read a FIFO in a thread; ``result()`` unblocks the reader if nothing ever opened it."""

    def __init__(self, path: Path) -> None:
        self.path, self.data = path, b""
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        with open(self.path, "rb") as fh:
            self.data = fh.read()

    def result(self) -> bytes:
        self._t.join(timeout=0.2)
        if self._t.is_alive():
            # no writer came: open and close the write end so the reader sees end-of-file
            with contextlib.suppress(OSError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            self._t.join(timeout=10)
        assert not self._t.is_alive()
        return self.data


@pytest.fixture
def fifo(tmp_path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    p = tmp_path / "pipe"
    os.mkfifo(p)
    return p


# ================================================================ atomic_path
def test_symlink_is_written_through(tmp_path) -> None:
    elsewhere = tmp_path / "data"
    elsewhere.mkdir()
    target = elsewhere / "real.csv"
    target.write_text("old")
    link = tmp_path / "out.csv"
    link.symlink_to(Path("data") / "real.csv")          # relative, as `ln -s` makes them
    with atomic_path(link) as tmp:
        assert tmp.parent == elsewhere                   # renamed within the target's directory
        tmp.write_text("new")
    assert link.is_symlink() and os.readlink(link) == os.path.join("data", "real.csv")
    assert target.read_text() == "new"
    no_leftovers(tmp_path, elsewhere)


def test_dangling_symlink_creates_its_target(tmp_path) -> None:
    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "made.csv")
    with atomic_path(link) as tmp:
        tmp.write_text("rows")
    assert link.is_symlink() and (tmp_path / "made.csv").read_text() == "rows"
    gone = tmp_path / "gone.csv"
    gone.symlink_to(tmp_path / "nodir" / "x.csv")
    with pytest.raises(FileNotFoundError, match="nodir.*where the symlink"):
        with atomic_path(gone):
            pass
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    with pytest.raises(OSError) as ei:
        with atomic_path(loop):
            pass
    assert ei.value.errno == errno.ELOOP and loop.is_symlink()
    no_leftovers(tmp_path)


@pytest.mark.parametrize("mask,want", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_new_file_follows_the_umask(tmp_path, mask: int, want: int) -> None:
    out = tmp_path / "m.csv"
    with umask(mask):
        with atomic_path(out) as tmp:
            tmp.write_text("x")
    assert mode(out) == want


def test_existing_file_keeps_its_mode_even_if_the_writer_replaces_the_temp(tmp_path) -> None:
    out = tmp_path / "g.bin"
    out.write_text("old")
    os.chmod(out, 0o604)
    with umask(0o077):
        with atomic_path(out) as tmp:
            # like save_binary: a file of its own (mkstemp: 0600) renamed over the temporary
            fd, own = tempfile.mkstemp(dir=tmp_path)
            os.close(fd)
            os.replace(own, tmp)
    assert mode(out) == 0o604
    fresh = tmp_path / "fresh.bin"
    with umask(0o022):
        with atomic_path(fresh) as tmp:
            fd, own = tempfile.mkstemp(dir=tmp_path)
            os.close(fd)
            os.replace(own, tmp)
    assert mode(fresh) == 0o644


def test_special_files_are_refused_or_written_directly(fifo, null_device) -> None:
    for dev in (fifo, null_device):
        assert special_file(dev) is not None
        with pytest.raises(WarpmatchError, match="not a regular file"):
            with atomic_path(dev):
                pass
        with atomic_path(dev, special="direct") as p:
            assert p == dev
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert stat.S_ISCHR(os.stat(null_device).st_mode)


def test_check_output(fifo, null_device) -> None:
    assert is_stdout("-") and not is_stdout("m.csv")
    assert output_format("-") == "csv" and output_format(null_device) == "csv"
    for fmt in ("csv", "jsonl"):
        check_output("-", fmt)
        check_output(fifo, fmt)
    for fmt, name in (("parquet", "Parquet"), ("npy", "NPY")):
        with pytest.raises(WarpmatchError, match=f"{name} cannot be written to standard output"):
            check_output("-", fmt)
        with pytest.raises(WarpmatchError, match="FIFO"):
            check_output(fifo, fmt)          # decided from stat: the FIFO is never opened
        check_output(null_device, fmt)       # it can seek


def test_csv_writer_streams_into_an_open_binary_stream() -> None:
    out = io.BytesIO()
    w = open_match_writer(out, ["a", "b"], "csv")
    w.write(np.array([[1, 2], [3, 4]]))
    assert out.getvalue() == b"a,b\n1,2\n3,4\n"       # flushed per batch, before close
    w.close()
    assert not out.closed
    with pytest.raises(WarpmatchError, match="NPY needs a file that can seek"):
        open_match_writer(io.BytesIO(), ["a"], "npy")


# ===================================================================== match -o
def test_match_to_stdout_with_clirunner(tmp_path, tiny, tiny_rows, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = run("match", tiny, "triangle", *REF, "-o", "-", "--batch-size", 5)
    assert res.exit_code == 0, res.stderr
    header, rows = csv_rows(res.stdout)        # stdout is the CSV and nothing else
    assert header == ["0", "1", "2"] and rows == tiny_rows
    assert "12 embeddings (non-induced) written to stdout" in res.stderr
    assert list(tmp_path.iterdir()) == []      # no file named '-'


@pytest.mark.parametrize("fmt", ["parquet", "npy"])
def test_match_to_stdout_refuses_formats_that_seek(tmp_path, tiny, fmt, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = run("match", tiny, "triangle", *REF, "-o", "-", "--output-format", fmt)
    assert_clean_error(res, "cannot be written to standard output")
    assert res.stdout == "" and list(tmp_path.iterdir()) == []
    res = run("match", tiny, "triangle", *REF, "-o", "-", "--json")
    assert_clean_error(res, "--json", code=2)


def test_match_to_stdout_in_a_real_process(tiny, tiny_rows) -> None:
    cmd = [sys.executable, "-m", "warpmatch", "match", str(tiny), "triangle", *REF, "-o", "-"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert csv_rows(proc.stdout)[1] == tiny_rows
    assert "written to stdout" in proc.stderr
    # a reader that goes away before the rows come: a quiet stop, no "Broken pipe" error
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None
    p.stdout.close()
    _, err = p.communicate(timeout=120)
    assert p.returncode == 141, err
    assert b"Traceback" not in err and b"Exception ignored" not in err and b"error" not in err


def test_match_to_dev_stdout_keeps_the_shells_append(tmp_path, tiny, tiny_rows) -> None:
    # `warpmatch match ... -o /dev/stdout >> log`: appended, not truncated nor replaced
    log = tmp_path / "log.csv"
    log.write_text("earlier\n")
    cmd = [sys.executable, "-m", "warpmatch", "match", str(tiny), "triangle", *REF,
           "-o", "/dev/stdout"]
    with open(log, "ab") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    first, rest = log.read_text().split("\n", 1)
    assert first == "earlier" and csv_rows(rest)[1] == tiny_rows
    assert "written to /dev/stdout" in proc.stderr


def test_match_writes_through_a_symlink(tmp_path, tiny, tiny_rows) -> None:
    target = tmp_path / "real.csv"
    link = tmp_path / "m.csv"
    link.symlink_to(target)                      # dangling until the first write
    for _ in range(2):                           # create, then replace
        res = run("match", tiny, "triangle", *REF, "-o", link)
        assert res.exit_code == 0, res.stderr
        assert link.is_symlink() and csv_rows(target.read_text())[1] == tiny_rows
    no_leftovers(tmp_path)


def test_match_respects_the_umask(tmp_path, tiny) -> None:
    with umask(0o027):
        for name in ("m.csv", "m.parquet", "m.npy"):
            assert run("match", tiny, "triangle", *REF, "-o", tmp_path / name).exit_code == 0
            assert mode(tmp_path / name) == 0o640, name


def test_match_into_a_null_device(tiny, null_device) -> None:
    for fmt in ("csv", "parquet", "npy"):
        res = run("match", tiny, "triangle", *REF, "-o", null_device, "--output-format", fmt)
        assert res.exit_code == 0, res.stderr
        assert f"written to {null_device}" in res.stdout
    assert stat.S_ISCHR(os.stat(null_device).st_mode)


def test_match_into_a_fifo(tmp_path, tiny, tiny_rows, fifo) -> None:
    reader = FifoReader(fifo)
    res = run("match", tiny, "triangle", *REF, "-o", fifo)   # no extension: CSV
    assert res.exit_code == 0, res.stderr
    assert csv_rows(reader.result().decode())[1] == tiny_rows
    reader = FifoReader(fifo)
    res = run("match", tiny, "triangle", *REF, "-o", fifo, "--output-format", "parquet")
    assert_clean_error(res, "Parquet", "FIFO")
    assert reader.result() == b""
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


# ==================================================================== stream -o
@pytest.fixture(scope="module")
def stream_case(tmp_path_factory, tiny) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("s")
    ups = d / "ups.txt"
    ups.write_text("10 40 +\n20 30 -\n20 30 +\n")
    return {"dir": d, "ups": ups}


def test_stream_deltas_to_stdout_and_through_a_symlink(tmp_path, tiny, stream_case) -> None:
    base = ("stream", tiny, "triangle", stream_case["ups"], "--backend", "cpu")
    ref = tmp_path / "ref.jsonl"
    assert run(*base, "-o", ref).exit_code == 0
    want = ref.read_text()
    assert want.count("\n") > 0
    res = run(*base, "-o", "-")
    assert res.exit_code == 0, res.stderr
    assert res.stdout == want                          # JSON lines only, summary on stderr
    assert [json.loads(ln)["sign"] for ln in want.splitlines()]
    assert "written to stdout" in res.stderr
    res = run(*base, "-o", "-", "--output-format", "csv", "--counts-only")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == "update,plus,minus,valid"
    assert len(res.stdout.splitlines()) == 4
    target = tmp_path / "real.parquet"
    link = tmp_path / "d.parquet"
    link.symlink_to(target)
    assert run(*base, "-o", link).exit_code == 0
    assert link.is_symlink() and pq.read_table(target).num_rows == want.count("\n")
    no_leftovers(tmp_path)


def test_stream_to_stdout_refuses_parquet_and_json(tmp_path, tiny, stream_case,
                                                   monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    base = ("stream", tiny, "triangle", stream_case["ups"])
    assert_clean_error(run(*base, "-o", "-", "--output-format", "parquet"),
                       "Parquet cannot be written to standard output")
    assert_clean_error(run(*base, "-o", "-", "--json"), "--json", code=2)
    assert_clean_error(run(*base, "--output-format", "csv"), "--output-format", code=2)
    assert list(tmp_path.iterdir()) == []


# ======================================================================= convert
def test_convert_refuses_to_drop_labels_like_generate(tmp_path) -> None:
    src = tmp_path / "lab.graph"
    src.write_text(LABELED)
    for name in ("out.txt", "out.mtx"):
        res = run("convert", src, tmp_path / name)
        assert_clean_error(res, "cannot hold the vertex labels", "--drop-labels", code=2)
        assert not (tmp_path / name).exists()
        res = run("convert", src, tmp_path / name, "--drop-labels")
        assert res.exit_code == 0, res.stderr
        assert "vertex labels dropped (--drop-labels)" in res.stdout
        assert "warning" not in res.stderr or name.endswith(".mtx")   # .mtx: ids 1..n only
        assert wm.read_graph(tmp_path / name).num_edges == 3
    for name in ("out.wmg", "out.parquet", "out.csv", "out2.graph"):
        assert run("convert", src, tmp_path / name).exit_code == 0
        assert wm.read_graph(tmp_path / name).vertex_labels is not None
    # --vertex-labels makes the graph labeled: refused before SOURCE is even read
    res = run("convert", tmp_path / "missing.txt", tmp_path / "x.txt", "--vertex-labels",
              tmp_path / "missing.labels")
    assert_clean_error(res, "cannot hold the vertex labels", code=2)
    # the same rule and the same wording as generate's refusal
    res = run("generate", "ba", tmp_path / "g.mtx", "--n", "20", "--m", "2", "--labels", "3")
    assert_clean_error(res, "--labels", ".wmg, .graph, .parquet or .csv", code=2)


def test_convert_edge_labels_fit_an_edge_list_but_not_matrix_market(tmp_path) -> None:
    src = tmp_path / "el.wmg"
    wm.write_graph(wm.Graph.from_edges([0, 1, 2], [1, 2, 0], edge_labels=[5, 6, 7]), src)
    res = run("convert", src, tmp_path / "el.txt")          # 'u v label' lines
    assert res.exit_code == 0, res.stderr
    assert "dropped" not in res.stdout
    labels = {ln.split()[2] for ln in (tmp_path / "el.txt").read_text().splitlines()[1:]}
    assert labels == {"5", "6", "7"}
    res = run("convert", src, tmp_path / "el.mtx")
    assert_clean_error(res, "cannot hold the edge labels", code=2)


def test_convert_refuses_special_targets(tmp_path, fifo) -> None:
    src = tmp_path / "g.txt"
    src.write_text("1 2\n2 3\n")
    reader = FifoReader(fifo)
    res = run("convert", src, fifo, "--to", "txt")
    assert_clean_error(res, "FIFO", "not a regular file")
    assert reader.result() == b"" and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_convert_to_wmg_follows_the_umask(tmp_path) -> None:
    # save_binary makes its own 0600 temporary file; atomic_path sets the mode last
    src = tmp_path / "g.txt"
    src.write_text("1 2\n2 3\n")
    with umask(0o022):
        assert run("convert", src, tmp_path / "g.wmg").exit_code == 0
    assert mode(tmp_path / "g.wmg") == 0o644


def test_save_binary_through_a_symlink_with_the_umask_and_never_over_a_device(
        tmp_path, fifo) -> None:
    """The library's own binary writer goes through atomic_path too (not only the CLI)."""
    g = wm.Graph.from_edges(np.array([0, 1]), np.array([1, 2]), n=3)
    real = tmp_path / "real.wmg"
    link = tmp_path / "link.wmg"
    link.symlink_to(real.name)
    with umask(0o027):
        wm.write_graph(g, link, format="binary")
    assert link.is_symlink() and mode(real) == 0o640
    assert wm.read_graph(link).num_edges == 2
    with pytest.raises(WarpmatchError, match="FIFO"):
        wm.write_graph(g, fifo, format="binary")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    no_leftovers(tmp_path)


# ================================================================ wording fixes
def test_order_help_lists_the_orders() -> None:
    from warpmatch.cli._common import ORDERS
    from warpmatch.plan import ORDER_NAMES
    assert set(ORDERS) == set(ORDER_NAMES)
    res = run("count", "--help")
    assert "[auto|ri|gql|core|input]" in res.stdout


def test_unknown_anchor_id_message(tiny) -> None:
    res = run("count", tiny, "triangle", *REF, "--anchor", "0=99999999")
    assert_clean_error(res, "anchor 0=99999999: no vertex with this id in graph 'tiny'")
    g = wm.Graph.from_edges([0, 1, 2], [1, 2, 0], name="tri")
    with pytest.raises(GraphError, match=r"anchor a=7: no vertex .* 'tri' \(its ids are 0..2\)"):
        wm.count(g, "a-b, b-c, c-a", anchors={"a": [1, 7]}, backend="reference")


def test_parquet_rows_are_counted_from_one_in_both_readers(tmp_path) -> None:
    g = tmp_path / "g.parquet"
    pq.write_table(pa.table({"src": [1, -2], "dst": [2, 3]}), g)
    with pytest.raises(InputFormatError, match="row 2: column 'src'"):
        wm.read_graph(g)
    u = tmp_path / "u.parquet"
    pq.write_table(pa.table({"src": [1, 2], "dst": [2, 3],
                             "op": pa.array([1, 7], pa.int8())}), u)
    from warpmatch.stream.updates import read_updates
    with pytest.raises(InputFormatError) as ei:
        read_updates(u)
    assert ei.value.line == 2, str(ei.value)
