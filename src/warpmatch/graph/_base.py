"""What the graph readers and writers share: the format table, byte-level helpers,
the numba-backed table scanner and the one assembly step.

Map: :data:`FORMATS` (name -> extensions) < file helpers (:func:`_is_gz`,
:func:`_read_bytes`, :func:`_line_text`, ...) < :class:`_Table` (whitespace
columns parsed by :mod:`._tokenize`, errors with ``file:line``) < id compaction
and label checks < :func:`_assemble` (external ids and labels ->
:meth:`Graph.from_edges`). The readers are in :mod:`.formats` (text formats and
the dispatcher) and :mod:`._tables` (CSV, Parquet); the writers in
:mod:`._writers`.
"""
from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import InputFormatError
from . import _tokenize as tk
from .csr import INT32_MAX, INT64_MAX, Graph

PathLike = str | os.PathLike

#: format name -> extensions that select it (lower case, without ``.gz``)
FORMATS: dict[str, tuple[str, ...]] = {
    "edgelist": (".txt", ".el", ".edges", ".tsv", ".snap"),
    "tve": (".graph", ".tve"),
    "mtx": (".mtx",),
    "csv": (".csv",),
    "parquet": (".parquet", ".pq"),
    "binary": (".wmg",),
}
_EXT = {ext: fmt for fmt, exts in FORMATS.items() for ext in exts}
_ALIASES = {"txt": "edgelist", "snap": "edgelist", "el": "edgelist", "edges": "edgelist",
            "graph": "tve", "pq": "parquet", "wmg": "binary", "matrixmarket": "mtx"}


def _is_gz(path: PathLike) -> bool:
    return Path(path).suffix.lower() == ".gz"


def _inner_suffix(path: PathLike) -> str:
    p = Path(path)
    if p.suffix.lower() == ".gz":
        p = p.with_suffix("")
    return p.suffix.lower()


def _stem(path: PathLike) -> str:
    p = Path(path)
    if p.suffix.lower() == ".gz":
        p = p.with_suffix("")
    return p.stem if p.suffix else p.name


#: how the first line warpmatch writes above an edge list with edge labels ends its
#: description (``_writers``); the edge-list reader takes the third column as the label
#: where it finds it (``formats.read_edgelist``)
LABEL_COLUMNS = "; columns: u v label"


def _read_bytes(path: PathLike) -> np.ndarray:
    """The file's bytes as a uint8 array (decompressed if ``.gz``)."""
    path = os.fspath(path)
    if _is_gz(path):
        try:
            with gzip.open(path, "rb") as fh:
                data = fh.read()
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InputFormatError(path, None, f"corrupt or truncated gzip file ({exc})") from None
        return np.frombuffer(data, dtype=np.uint8)
    return np.fromfile(path, dtype=np.uint8)


def _line_text(buf: np.ndarray, start: int) -> str:
    if start < 0 or start >= buf.size:
        return ""
    end = start + min(int(buf.size) - start, 200)
    chunk = bytes(buf[start:end])
    chunk = chunk.split(b"\n", 1)[0]
    return chunk.decode("utf-8", errors="replace").strip()


def _nth_line(buf: np.ndarray, line: int) -> str | None:
    """The text of 1-based line ``line`` of ``buf`` (error path only), or ``None``."""
    lines = bytes(buf).split(b"\n", line)
    if not 1 <= line <= len(lines):
        return None
    return lines[line - 1].decode("utf-8", errors="replace").strip()


def _has_content(buf: np.ndarray) -> bool:
    """True if ``buf`` holds a line that is neither blank nor a comment."""
    text = bytes(buf).decode("utf-8", errors="replace")
    for line in text.splitlines():
        s = line.strip().lstrip("\ufeff")
        if s and s[0] not in "#%":
            return True
    return False


class _Table:
    """A text file of integer rows scanned by :func:`_tokenize.scan_table`.

    Keeps the bytes and the scan settings so that a problem found after the
    scan (a duplicate vertex, an undeclared id) can be located by row:
    :meth:`where` re-scans up to that row to get its line and text.
    """

    def __init__(self, buf: np.ndarray, source: str, names: tuple[str, ...], min_cols: int,
                 extra_error: bool, tagged: bool = False, skip_tag: int = -1) -> None:
        self.buf, self.source, self.names = buf, source, names
        self.ncols, self.min_cols = len(names), min_cols
        self.extra_error, self.tagged, self.skip_tag = extra_error, tagged, skip_tag
        if buf.size == 0:
            raise InputFormatError(source, None, "the file is empty")
        cap = int(tk.count_lines(buf))
        self.values = np.empty((self.ncols, cap), dtype=np.int64)
        self.ncol = np.empty(cap, dtype=np.uint8)
        self.tags = np.empty(cap, dtype=np.uint8)
        rows, status, line, start, col = tk.scan_table(
            buf, self.ncols, min_cols, extra_error, tagged, skip_tag,
            self.values, self.ncol, self.tags, -1)
        if status != tk.OK:
            self._raise(status, int(line), int(start), int(col))
        self.rows = int(rows)
        self.values = self.values[:, :self.rows]
        self.ncol = self.ncol[:self.rows]
        self.tags = self.tags[:self.rows]

    def column(self, j: int) -> np.ndarray:
        return self.values[j]

    def _raise(self, status: int, line: int, start: int, col: int) -> None:
        text = _line_text(self.buf, start)
        what = self.names[col] if 0 <= col < self.ncols else f"column {col + 1}"
        if status == tk.NOT_INTEGER:
            msg = f"{what}: expected a non-negative integer"
        elif status == tk.NEGATIVE:
            msg = f"{what} is negative (ids and labels must be >= 0)"
        elif status == tk.OVERFLOW:
            msg = f"{what} is too large (over {INT64_MAX}, the int64 maximum)"
        elif status == tk.TOO_FEW:
            exp = " ".join(self.names[:self.min_cols])
            msg = (f"expected at least {self.min_cols} values ({exp}), found {col}"
                   if self.min_cols < self.ncols else
                   f"expected {self.min_cols} values ({exp}), found {col}")
        elif status == tk.TOO_MANY:
            msg = f"expected at most {self.ncols} values ({' '.join(self.names)}), found more"
        else:
            msg = "expected a line starting with 't', 'v' or 'e'"
        raise InputFormatError(self.source, line, msg, text)

    def where(self, row: int) -> tuple[int, str]:
        """(line number, line text) of data row ``row``."""
        vals = np.empty((self.ncols, row + 1), dtype=np.int64)
        nc = np.empty(row + 1, dtype=np.uint8)
        tg = np.empty(row + 1, dtype=np.uint8)
        _, _, line, start, _ = tk.scan_table(self.buf, self.ncols, self.min_cols,
                                             self.extra_error, self.tagged, self.skip_tag,
                                             vals, nc, tg, row)
        return int(line), _line_text(self.buf, int(start))

    def fail(self, row: int, message: str) -> None:
        line, text = self.where(row)
        raise InputFormatError(self.source, line, message, text)


def _compact(x: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, int]:
    """Map non-negative ids to 0..n-1 in increasing id order.

    Returns ``(ids, inverse, n)`` with ``ids=None`` when the ids are exactly
    ``0..n-1`` already. Ids not much larger than their count go through a
    bitmap (linear time) instead of a sort; that is the common case for SNAP
    files and it keeps a 10-million-edge file at about a second.
    """
    if x.size == 0:
        return None, x.astype(np.int64), 0
    mx = int(x.max())
    if mx < max(1 << 20, 2 * x.size):
        present = np.zeros(mx + 1, dtype=np.bool_)
        present[x] = True
        n = int(np.count_nonzero(present))
        if n == mx + 1:
            return None, x, n
        remap = np.cumsum(present, dtype=np.int32 if n <= INT32_MAX else np.int64) - 1
        return np.flatnonzero(present).astype(np.int64), remap[x], n
    ids, inv = np.unique(x, return_inverse=True)
    if int(ids[-1]) == ids.size - 1:
        return None, inv, int(ids.size)
    return ids.astype(np.int64), inv, int(ids.size)


def _first_repeat(ids: np.ndarray) -> int | None:
    """Position of the first entry (in the order given) whose value occurs earlier,
    or None: where a reader of vertex declarations finds a vertex declared twice."""
    if ids.size < 2:
        return None
    order = np.argsort(ids, kind="stable")
    again = order[1:][ids[order][1:] == ids[order][:-1]]
    return int(again.min()) if again.size else None


def _check_label_range(values: np.ndarray, what: str,
                       fail: Callable[[int, str], None]) -> np.ndarray:
    bad = np.flatnonzero(values > INT32_MAX)
    if bad.size:
        fail(int(bad[0]), f"{what} {int(values[bad[0]])} is too large (labels are int32)")
    return values.astype(np.int32)


def _assemble(src: np.ndarray, dst: np.ndarray, elab: np.ndarray | None, *, directed: bool,
              name: str, source: str, vids: np.ndarray | None = None,
              vlabels: np.ndarray | None = None, label_source: str | None = None,
              edge_where: Callable[[int], str] | None = None) -> Graph:
    """Map external ids to 0..n-1 and build the graph.

    ``vids`` declares vertices (possibly isolated); ``vlabels`` (aligned with
    ``vids``) gives labels, and then every edge endpoint must have one.
    """
    m = int(src.size)
    parts = [src, dst] if vids is None else [src, dst, vids]
    ids, inv, n = _compact(np.concatenate(parts).astype(np.int64, copy=False))
    vl = None
    if vlabels is not None:
        assert vids is not None
        vl = np.full(n, -1, dtype=np.int64)
        vl[inv[2 * m:]] = vlabels
        missing = np.flatnonzero(vl < 0)
        if missing.size:
            v = int(missing[0]) if ids is None else int(ids[missing[0]])
            where = ""
            if edge_where is not None:
                hit = np.flatnonzero((src == v) | (dst == v))
                if hit.size:
                    where = f" ({edge_where(int(hit[0]))})"
            raise InputFormatError(label_source or source, None,
                                   f"vertex {v} of {source}{where} has no label")
        vl = vl.astype(np.int32)
    return Graph.from_edges(inv[:m], inv[m:2 * m], n=n, vertex_labels=vl, edge_labels=elab,
                            directed=directed, ids=ids, name=name)
