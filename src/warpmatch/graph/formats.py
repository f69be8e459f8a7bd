"""Graph file formats: one reader per format, one dispatcher, and the writers.

Every reader ends in :func:`Graph.from_edges <warpmatch.graph.csr.Graph.from_edges>`
(the one builder that validates, drops self-loops and duplicate edges and
reports them), except the binary cache, which stores a graph that was built
that way already. Malformed input raises
:class:`~warpmatch.errors.InputFormatError` naming the file, the line (or the
row of a Parquet table) and the offending text.

Formats
-------
``edgelist`` (``.txt .el .edges .tsv .snap``)
    SNAP-style: one edge ``u v`` per line, any whitespace, ``#``/``%``
    comment lines. Ids are arbitrary non-negative integers (up to int64),
    mapped to ``0..n-1`` in increasing id order and kept in ``Graph.ids``.
    Tokens after the second are **ignored** by default (SNAP's temporal files
    such as CollegeMsg carry a unix timestamp there, weighted files a
    weight); ``edge_labels=True`` reads the third column as the edge label
    instead. Parsed by a compiled numba scanner (:mod:`._tokenize`), not a
    Python loop.
``tve`` (``.graph .tve``)
    The labeled format of the subgraph-matching literature: a ``t N M``
    header (informational, not trusted), ``v id label [degree]`` lines and
    ``e u v [label]`` lines. The vertices are exactly the ``v`` lines; an
    edge naming another id is an error.
``mtx`` (``.mtx``)
    Matrix Market through :func:`scipy.io.mmread`; nonzeros are edges
    (values ignored). Vertex ids are the file's 1-based row/column numbers.
``csv`` / ``parquet`` (``.csv``; ``.parquet .pq``)
    Edge tables read with pyarrow: columns ``src``/``dst`` (else the first
    two columns, or ``src_col``/``dst_col``), optional ``label`` (edge label,
    or ``label_col``). A table written by :func:`write_graph` may also hold
    *vertex rows*: rows whose ``dst`` is null declare vertex ``src``
    (isolated vertices) with its label in column ``vertex_label``; this is how
    vertex labels and isolated vertices survive a round trip. Only a table
    with a ``dst`` (or vertex-label) column has vertex rows: elsewhere an
    empty target, such as the CSV line ``3,``, is an error. A CSV file
    whose first line is all integers has no header.
``binary`` (``.wmg``)
    The memory-mapped cache of :mod:`warpmatch.graph.binary`.

Compressed input: a trailing ``.gz`` is decompressed (the format is chosen by
the extension before it). An unknown extension is sniffed from the first
bytes and the first non-comment line.

Direction: ``directed=False`` means undirected unless the file itself records
that it is directed (a ``.wmg`` cache, or a Parquet table written by
:func:`write_graph`); ``directed=True`` asks for a directed graph, an error
for a ``.wmg`` file that holds an undirected one.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import GraphError, InputFormatError
from . import _tokenize as tk
from .csr import INT32_MAX, INT64_MAX, Graph

__all__ = [
    "TveData", "parse_tve", "read_tve", "read_edgelist", "read_vertex_labels", "read_mtx",
    "read_csv", "read_parquet", "read_graph", "write_graph", "graph_format",
    "output_graph_format", "FORMATS",
]

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


# ============================================================== low-level helpers
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


# ===================================================================== edge lists
def read_vertex_labels(path: PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read a vertex-label file: one ``id label`` pair per line, ``#`` comments.

    Parameters
    ----------
    path : str or os.PathLike
        The file (``.gz`` allowed), e.g. SNAP's
        ``email-Eu-core-department-labels.txt``.

    Returns
    -------
    ids : numpy.ndarray of int64
        Vertex ids, in file order.
    labels : numpy.ndarray of int32
        Their labels.

    Raises
    ------
    InputFormatError
        For a malformed line, an id listed twice, a label over int32, or an
        empty file (naming ``file:line`` and the text).
    """
    source = os.fspath(path)
    t = _Table(_read_bytes(path), source, ("vertex id", "label"), 2, extra_error=True)
    if t.rows == 0:
        raise InputFormatError(source, None, "no 'id label' lines (only comments)")
    ids = t.column(0)
    labels = _check_label_range(t.column(1), "label", t.fail)
    row = _first_repeat(ids)
    if row is not None:
        t.fail(row, f"vertex {int(ids[row])} has more than one label line")
    return ids.copy(), labels


def read_edgelist(path: PathLike, directed: bool = False, *, edge_labels: bool = False,
                  vertex_labels: PathLike | None = None, name: str | None = None) -> Graph:
    """Read a SNAP-style edge list.

    Parameters
    ----------
    path : str or os.PathLike
        One edge ``u v`` per line; ``#``/``%`` comments; any whitespace;
        ``.gz`` allowed.
    directed : bool, optional
        Keep edge direction. The default is ``False``.
    edge_labels : bool, optional
        Read a third column as the edge label (required on every line). The
        default is ``False``, meaning tokens after the second are ignored
        (timestamps, weights).
    vertex_labels : str or os.PathLike, optional
        An ``id label`` file (:func:`read_vertex_labels`). Its vertices that
        have no edge become isolated vertices; an edge endpoint without a
        label is an error. The default is ``None``: unlabeled.
    name : str, optional
        The graph's name. The default is the file name without extension.

    Returns
    -------
    Graph
        Vertices numbered by increasing file id; ``graph.ids`` holds the file
        ids (``None`` if they were exactly ``0..n-1``).

    Raises
    ------
    InputFormatError
        For a malformed line (non-integer, negative or over-int64 id, too few
        columns), an empty file or a file with no edges.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "g.txt"
    >>> _ = p.write_text("# a comment\\n10 20\\n20 30\\n")
    >>> g = read_edgelist(p)
    >>> g.n, g.num_edges, g.ids.tolist()
    (3, 2, [10, 20, 30])
    """
    source = os.fspath(path)
    names = ("source id", "target id") + (("edge label",) if edge_labels else ())
    t = _Table(_read_bytes(path), source, names, len(names), extra_error=False)
    vids = vlabels = None
    if vertex_labels is not None:
        vids, vlabels = read_vertex_labels(vertex_labels)
    if t.rows == 0 and vids is None:
        raise InputFormatError(source, None, "no edge lines (only comments or blank lines)")
    el = _check_label_range(t.column(2), "edge label", t.fail) if edge_labels else None

    def edge_where(row: int) -> str:
        return f"line {t.where(row)[0]}"

    return _assemble(t.column(0), t.column(1), el, directed=directed,
                     name=name or _stem(path), source=source, vids=vids, vlabels=vlabels,
                     label_source=None if vertex_labels is None else os.fspath(vertex_labels),
                     edge_where=edge_where)


# =========================================================================== t/v/e
@dataclass(frozen=True)
class TveData:
    """The content of a ``t/v/e`` file, in the file's id space.

    Attributes
    ----------
    vertex_ids : numpy.ndarray of int64
        The ``v`` lines' ids, in file order (unique).
    vertex_labels : numpy.ndarray of int32
        Their labels.
    src, dst : numpy.ndarray of int64
        The ``e`` lines' endpoints, in file order (every id is a ``v`` id).
    edge_labels : numpy.ndarray of int32 or None
        The ``e`` lines' labels, or ``None`` when the lines have none. A file
        without ``e`` lines gives an empty array (edge-labeled, no edges): it
        shows no sign of being unlabeled.
    """

    vertex_ids: np.ndarray
    vertex_labels: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    edge_labels: np.ndarray | None


def parse_tve(path_or_text: PathLike | str | bytes, *, source: str | None = None) -> TveData:
    """Parse the labeled ``t/v/e`` format (data graphs and query files alike).

    Lines: ``t N M`` (a header; its numbers are informational and ignored),
    ``v id label [degree]`` (the degree is ignored), ``e u v [label]``
    (either every ``e`` line has a label or none has); ``#``/``%`` comments.
    ``e`` lines with labels make the graph edge-labeled, ``e`` lines without
    labels unlabeled; a file with no ``e`` line at all is edge-labeled (with
    an empty label array), so that an edge-labeled stream can fill it.

    Parameters
    ----------
    path_or_text : str, os.PathLike or bytes
        A path (``pathlib.Path``, or a ``str`` without a newline), or the
        content itself (``bytes``, or a ``str`` containing a newline).
    source : str, optional
        The name used in error messages. The default is the path, or
        ``"<string>"`` for content.

    Returns
    -------
    TveData

    Raises
    ------
    InputFormatError
        With ``file:line`` and the text, for an unknown line type, a
        non-integer, negative or too large value, a missing or extra column,
        ``e`` lines with and without labels mixed, a vertex with two ``v``
        lines, an edge naming an id without a ``v`` line, or an empty file.

    Examples
    --------
    >>> d = parse_tve("t 1 3 2\\nv 0 5\\nv 1 6\\nv 2 5\\ne 0 1\\ne 1 2\\n")
    >>> d.vertex_labels.tolist(), d.src.tolist(), d.edge_labels is None
    ([5, 6, 5], [0, 1], True)
    """
    if isinstance(path_or_text, bytes):
        buf = np.frombuffer(path_or_text, dtype=np.uint8)
        source = source or "<string>"
    elif isinstance(path_or_text, str) and "\n" in path_or_text:
        buf = np.frombuffer(path_or_text.encode("utf-8"), dtype=np.uint8)
        source = source or "<string>"
    else:
        source = source or os.fspath(path_or_text)
        buf = _read_bytes(path_or_text)
    t = _Table(buf, source, ("first value", "second value", "third value"), 2,
               extra_error=True, tagged=True, skip_tag=ord("t"))
    if t.rows == 0 and not _has_content(buf):
        raise InputFormatError(source, None, "the file is empty (no 'v' or 'e' lines)")
    tags = t.tags
    is_v = tags == ord("v")
    is_e = tags == ord("e")
    bad = np.flatnonzero(~(is_v | is_e))
    if bad.size:
        t.fail(int(bad[0]), f"unknown line type {chr(int(tags[bad[0]]))!r} "
                            "(expected 't', 'v' or 'e')")
    vrows = np.flatnonzero(is_v)
    erows = np.flatnonzero(is_e)
    vids = t.column(0)[vrows]
    vlab = _check_label_range(t.column(1)[vrows], "vertex label", lambda r, m: t.fail(
        int(vrows[r]), m))
    r = _first_repeat(vids)
    if r is not None:
        t.fail(int(vrows[r]), f"vertex {int(vids[r])} has more than one 'v' line")
    src = t.column(0)[erows]
    dst = t.column(1)[erows]
    # Edge labels: 'e u v l' lines make the file edge-labeled and 'e u v' lines
    # unlabeled. A file without 'e' lines shows neither, so it is read as
    # edge-labeled (an empty label array): an edge-labeled query or update stream
    # can then use it (e.g. the edgeless G0 that stream-gen writes), and an
    # unlabeled one works on it as on any graph (its inserted edges get label 0).
    elab: np.ndarray | None = np.zeros(0, np.int32)
    if erows.size:
        elab = None
        has_label = t.ncol[erows] == 3
        if has_label.any():
            mixed = np.flatnonzero(has_label != has_label[0])
            if mixed.size:
                t.fail(int(erows[mixed[0]]), "some 'e' lines have an edge label and some do "
                       "not (give every edge a label, or none)")
            elab = _check_label_range(t.column(2)[erows], "edge label",
                                      lambda r, m: t.fail(int(erows[r]), m))
    # every edge endpoint must be declared by a v line
    sorted_ids = np.sort(vids)
    for ends in (src, dst):
        if not ends.size:
            continue
        if not sorted_ids.size:
            r = 0
        else:
            pos = np.minimum(np.searchsorted(sorted_ids, ends), sorted_ids.size - 1)
            missing = np.flatnonzero(sorted_ids[pos] != ends)
            if not missing.size:
                continue
            r = int(missing[0])
        t.fail(int(erows[r]), f"edge {int(src[r])}-{int(dst[r])} names vertex "
                              f"{int(ends[r])}, which has no 'v' line")
    return TveData(vertex_ids=vids.copy(), vertex_labels=vlab, src=src.copy(), dst=dst.copy(),
                   edge_labels=elab)


def read_tve(path: PathLike, directed: bool = False, *, name: str | None = None) -> Graph:
    """Read a labeled ``t/v/e`` graph file (yeast, human, hprd and their queries).

    Parameters
    ----------
    path : str or os.PathLike
        The file (``.gz`` allowed); see :func:`parse_tve` for the lines.
    directed : bool, optional
        Read ``e u v`` as the arc u->v. The default is ``False``.
    name : str, optional
        The graph's name. The default is the file name without extension.

    Returns
    -------
    Graph
        Vertex labels from the ``v`` lines, edge labels from the ``e`` lines
        (if they have them; a file without ``e`` lines is edge-labeled, with
        no edges), file ids in ``graph.ids`` unless they are ``0..n-1``.

    Raises
    ------
    InputFormatError
        As :func:`parse_tve`, and for a file without ``v`` lines.
    """
    source = os.fspath(path)
    d = parse_tve(Path(path), source=source)
    if d.vertex_ids.size == 0:
        raise InputFormatError(source, None, "no 'v' lines (the graph has no vertices)")
    # the v lines define the vertex set: declare them all, with their labels
    return _assemble(d.src, d.dst, d.edge_labels, directed=directed, name=name or _stem(path),
                     source=source, vids=d.vertex_ids, vlabels=d.vertex_labels)


# ================================================================= Matrix Market
def read_mtx(path: PathLike, directed: bool = False, *, name: str | None = None) -> Graph:
    """Read a Matrix Market file: the nonzeros of a square matrix are the edges.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.mtx`` file (``.mtx.gz`` allowed), coordinate or array format.
    directed : bool, optional
        Keep A[i, j] as the arc i->j. The default is ``False``. A
        ``symmetric`` file is expanded to both directions by scipy.
    name : str, optional
        The graph's name. The default is the file name without extension.

    Returns
    -------
    Graph
        One vertex per row (isolated rows included); external ids are the
        file's 1-based indices.

    Raises
    ------
    InputFormatError
        For an empty, malformed, truncated or non-square file (scipy's
        message, which names no line).
    """
    import scipy.io
    import scipy.sparse as sp

    source = os.fspath(path)
    raw = _read_bytes(path)
    if raw.size == 0:
        raise InputFormatError(source, None, "the file is empty")
    try:
        A = scipy.io.mmread(io.BytesIO(raw.tobytes()))
    except Exception as exc:  # scipy/fast_matrix_market raise ValueError, OverflowError, ...
        # fast_matrix_market says "Line 4: Invalid integer value."; turn that into
        # file:line and the offending text like every other reader
        m = re.match(r"\s*line (\d+):\s*(.*)", str(exc), re.IGNORECASE | re.DOTALL)
        if m is None:
            raise InputFormatError(source, None,
                                   f"not a valid Matrix Market file ({exc})") from None
        line = int(m.group(1))
        text = _nth_line(raw, line)
        raise InputFormatError(source, line, f"not a valid Matrix Market file "
                                             f"({m.group(2).strip().rstrip('.')})",
                               text) from None
    A = sp.coo_array(A)
    if A.shape[0] != A.shape[1]:
        raise InputFormatError(source, None, f"the matrix is {A.shape[0]} x {A.shape[1]}; "
                                             "an adjacency matrix must be square")
    keep = A.data != 0
    n = int(A.shape[0])
    row, col = A.row[keep].astype(np.int64), A.col[keep].astype(np.int64)
    if not directed:
        from .convert import matrix_edges_undirected
        row, col = matrix_edges_undirected(row, col, n)
    return Graph.from_edges(row, col, n=n, directed=directed,
                            ids=np.arange(1, n + 1, dtype=np.int64), name=name or _stem(path))


# ===================================================================== edge tables
_PQ_META_KEY = b"warpmatch"


def _table_to_graph(table: Any, source: str, *, directed: bool, name: str,
                    src_col: str | None, dst_col: str | None, label_col: str | None,
                    vertex_label_col: str | None,
                    locate: Callable[[int, str], InputFormatError]) -> Graph:
    """Build a graph from a pyarrow edge table (shared by CSV and Parquet).

    ``locate(row, message)`` makes the error for data row ``row`` (0-based; the
    message names a CSV line number, or a Parquet row counted from 1).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = list(table.column_names)

    def pick(given: str | None, default: str, pos: int | None, what: str) -> str | None:
        if given is not None:
            if given not in cols:
                raise InputFormatError(source, None, f"no {what} column {given!r} "
                                                     f"(columns: {', '.join(cols)})")
            return given
        if default in cols:
            return default
        if pos is not None:
            if len(cols) <= pos:
                raise InputFormatError(source, None, f"an edge table needs at least 2 columns "
                                                     f"(src, dst); found: {', '.join(cols)}")
            return cols[pos]
        return None

    s_name = pick(src_col, "src", 0, "source")
    d_name = pick(dst_col, "dst", 1, "target")
    l_name = pick(label_col, "label", None, "edge label")
    v_name = pick(vertex_label_col, "vertex_label", None, "vertex label")
    assert s_name is not None and d_name is not None
    if s_name == d_name:
        raise InputFormatError(source, None, f"source and target are the same column {s_name!r}")

    def ints(name_: str, allow_null: bool,
             null_hint: str = "") -> tuple[np.ndarray, np.ndarray | None]:
        col = table.column(name_)
        typ = col.type
        if pa.types.is_dictionary(typ):
            col = col.cast(typ.value_type)
            typ = col.type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)
                or pa.types.is_null(typ)):
            raise InputFormatError(source, None, f"column {name_!r} has type {typ}; "
                                                 "expected integers")
        valid = None
        if col.null_count:
            valid = np.asarray(pc.is_valid(col))
            if not allow_null:
                r = int(np.flatnonzero(~valid)[0])
                raise locate(r, f"column {name_!r} is empty (null){null_hint}")
            col = col.fill_null(0)
        if pa.types.is_floating(typ):
            arr = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.floor(arr)))
            if bad.size:
                raise locate(int(bad[0]), f"column {name_!r}: {float(arr[bad[0]])!r} is not "
                                          "an integer")
            big = np.flatnonzero(np.abs(arr) >= 2.0 ** 63)
            if big.size:
                raise locate(int(big[0]), f"column {name_!r}: value is too large for int64")
            arr = arr.astype(np.int64)
        elif pa.types.is_null(typ):
            arr = np.zeros(len(col), dtype=np.int64)
        else:
            arr = np.asarray(col.to_numpy(zero_copy_only=False))
            if arr.dtype == np.uint64:
                big = np.flatnonzero(arr > np.uint64(INT64_MAX))
                if big.size:
                    raise locate(int(big[0]), f"column {name_!r}: {int(arr[big[0]])} is too "
                                              "large for int64")
            arr = arr.astype(np.int64, copy=False)
        neg = np.flatnonzero(arr < 0) if valid is None else np.flatnonzero((arr < 0) & valid)
        if neg.size:
            raise locate(int(neg[0]), f"column {name_!r}: {int(arr[neg[0]])} is negative "
                                      "(ids and labels must be >= 0)")
        return arr, valid

    src, _ = ints(s_name, allow_null=False)
    # Vertex rows (an empty target) are documented for write_graph's layout only: a column
    # named "dst" (unlabeled isolated vertices are written as "4,") or a vertex-label column.
    # Elsewhere, e.g. a headerless "3," line, an empty target is a broken edge, not a vertex.
    vertex_rows = d_name == "dst" or v_name is not None
    dst, dvalid = ints(d_name, allow_null=vertex_rows,
                       null_hint="; an edge needs both endpoints (only a table with a "
                                 "'dst' column declares vertices by empty targets)")
    if table.num_rows == 0:
        raise InputFormatError(source, None, "the table has no rows")

    def label_range(arr: np.ndarray, rows: np.ndarray, what: str) -> np.ndarray:
        big = np.flatnonzero(arr > INT32_MAX)
        if big.size:
            raise locate(int(rows[big[0]]), f"{what} {int(arr[big[0]])} is too large "
                                            "(labels are int32)")
        return arr.astype(np.int32)

    # rows with a null dst are vertex rows (isolated vertices, vertex labels)
    erows = np.arange(src.size) if dvalid is None else np.flatnonzero(dvalid)
    vrows = None if dvalid is None else np.flatnonzero(~dvalid)
    el = None
    if l_name is not None:
        lab, lvalid = ints(l_name, allow_null=True)
        if lvalid is not None and not lvalid[erows].all():
            r = int(erows[np.flatnonzero(~lvalid[erows])[0]])
            raise locate(r, f"edge row without a value in column {l_name!r}")
        el = label_range(lab[erows], erows, "edge label")
    vids = vlabels = None
    if vrows is not None:
        vids = src[vrows]
    if v_name is not None:
        vlab, vvalid = ints(v_name, allow_null=True)
        if vrows is None or vrows.size == 0:
            raise InputFormatError(source, None, f"column {v_name!r} is given but no row "
                                                 f"declares a vertex (a row with empty {d_name!r})")
        if vvalid is not None and not vvalid[vrows].all():
            r = int(vrows[np.flatnonzero(~vvalid[vrows])[0]])
            raise locate(r, f"vertex row without a value in column {v_name!r}")
        vlabels = label_range(vlab[vrows], vrows, "vertex label")
        r = _first_repeat(vids)
        if r is not None:
            raise locate(int(vrows[r]), f"vertex {int(vids[r])} has more than one vertex row")
    def edge_where(r: int) -> str:
        # "line 7" of a CSV file; "row 3" (counted from 1) of a Parquet table, which has no lines
        line = locate(int(erows[r]), "").line
        return f"line {line}" if line is not None else f"row {int(erows[r]) + 1}"

    return _assemble(src[erows], dst[erows], el, directed=directed, name=name, source=source,
                     vids=vids, vlabels=vlabels, edge_where=edge_where)


def _csv_first_line(path: str) -> str:
    opener = gzip.open if _is_gz(path) else open
    with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as fh:
        for line in fh:
            if line.strip():
                return line
    return ""


def _is_int(tok: str) -> bool:
    return re.fullmatch(r"\s*[+-]?\d+\s*", tok) is not None


def read_csv(path: PathLike, directed: bool = False, *, src_col: str | None = None,
             dst_col: str | None = None, label_col: str | None = None,
             vertex_label_col: str | None = None, delimiter: str = ",",
             name: str | None = None) -> Graph:
    """Read a CSV edge table with pyarrow.

    Parameters
    ----------
    path : str or os.PathLike
        The file (``.gz`` allowed). A first line of integers only means there
        is no header (columns are then taken by position).
    directed : bool, optional
        Keep edge direction. The default is ``False``.
    src_col, dst_col : str, optional
        Endpoint columns. The default is ``src``/``dst`` if present, else the
        first two columns.
    label_col : str, optional
        Edge-label column. The default is ``label`` if present, else none.
    vertex_label_col : str, optional
        Vertex-label column of vertex rows (rows with an empty ``dst``). The
        default is ``vertex_label`` if present. Without a vertex-label column
        only a column named ``dst`` may be empty (:func:`write_graph` writes
        an isolated unlabeled vertex as ``4,``); in a headerless file, or one
        whose target column has another name, an empty target is an error.
    delimiter : str, optional
        The field separator. The default is ``","``.
    name : str, optional
        The graph's name. The default is the file name without extension.

    Returns
    -------
    Graph

    Raises
    ------
    InputFormatError
        With ``file:line`` and the text for a non-integer, negative or
        over-int64 value, a wrong number of fields or an empty field that may
        not be empty; for an empty file or a missing column.
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    source = os.fspath(path)
    if os.path.getsize(source) == 0:
        raise InputFormatError(source, None, "the file is empty")
    first = _csv_first_line(source)
    if not first.strip():
        raise InputFormatError(source, None, "the file is empty (only blank lines)")
    header = not all(_is_int(tok) for tok in first.rstrip("\r\n").split(delimiter))
    read_opts = pcsv.ReadOptions(autogenerate_column_names=not header, block_size=1 << 24)
    parse_opts = pcsv.ParseOptions(delimiter=delimiter)
    # the columns used are parsed as int64, so a stray token is a conversion error
    # (then located by line); headerless columns are f0, f1, ... until renamed below
    if header:
        names = [c.strip() for c in next(csv.reader([first], delimiter=delimiter))]
    else:
        names = [f"column{i + 1}" for i in range(len(first.split(delimiter)))]
    used = [src_col or ("src" if "src" in names else names[0]),
            dst_col or ("dst" if "dst" in names else (names[1] if len(names) > 1 else "")),
            label_col or "label", vertex_label_col or "vertex_label"]
    typed = [c for c in used if c in names]
    if not header:
        typed = [f"f{names.index(c)}" for c in typed]
    types = {c: pa.int64() for c in typed}
    conv = pcsv.ConvertOptions(column_types=types)
    try:
        table = pcsv.read_csv(source, read_options=read_opts, parse_options=parse_opts,
                              convert_options=conv)
    except (pa.ArrowInvalid, pa.ArrowKeyError) as exc:
        raise _csv_locate_problem(source, delimiter, header, str(exc)) from None

    if not header:
        table = table.rename_columns([f"column{i + 1}" for i in range(table.num_columns)])

    def locate(row: int, message: str) -> InputFormatError:
        line, text = _csv_row_line(source, header, row, delimiter)
        return InputFormatError(source, line, message, text)

    return _table_to_graph(table, source, directed=directed, name=name or _stem(path),
                           src_col=src_col, dst_col=dst_col, label_col=label_col,
                           vertex_label_col=vertex_label_col, locate=locate)


def _csv_rows(path: str, delimiter: str) -> Any:
    opener = gzip.open if _is_gz(path) else open
    fh = opener(path, "rt", encoding="utf-8", errors="replace", newline="")
    return fh, csv.reader(fh, delimiter=delimiter)


def _csv_row_line(path: str, header: bool, row: int,
                  delimiter: str = ",") -> tuple[int | None, str | None]:
    """The 1-based line of data row ``row`` (blank lines skipped, as pyarrow does)."""
    fh, reader = _csv_rows(path, delimiter)
    try:
        k = -1 if header else 0
        for fields in reader:
            if not fields or all(not f.strip() for f in fields):
                continue
            if k == row:
                return reader.line_num, delimiter.join(fields)
            k += 1
    finally:
        fh.close()
    return None, None


def _csv_locate_problem(path: str, delimiter: str, header: bool,
                        arrow_message: str) -> InputFormatError:
    """Find the first bad line after pyarrow rejected the file (error path only).

    pyarrow's messages name the column but not the line, so re-read with the
    csv module and apply the same rules: the header's field count, integers
    in the int64 range in the typed columns.
    """
    fh, reader = _csv_rows(path, delimiter)
    m = re.search(r"column #(\d+)", arrow_message)
    col = int(m.group(1)) if m else None
    try:
        width = None
        for fields in reader:
            if not fields or all(not f.strip() for f in fields):
                continue
            if width is None:
                width = len(fields)
                if header:
                    continue
            text = delimiter.join(fields)
            if len(fields) != width:
                return InputFormatError(path, reader.line_num,
                                        f"expected {width} fields, found {len(fields)}", text)
            for j in ([col] if col is not None else range(len(fields))):
                if j >= len(fields):
                    continue
                tok = fields[j].strip()
                if not _is_int(tok):
                    return InputFormatError(path, reader.line_num,
                                            f"field {j + 1}: {tok!r} is not an integer", text)
                if abs(int(tok)) > INT64_MAX:
                    return InputFormatError(path, reader.line_num,
                                            f"field {j + 1}: {tok} is too large for int64", text)
    finally:
        fh.close()
    return InputFormatError(path, None, f"cannot read the CSV file ({arrow_message})")


def read_parquet(path: PathLike, directed: bool = False, *, src_col: str | None = None,
                 dst_col: str | None = None, label_col: str | None = None,
                 vertex_label_col: str | None = None, name: str | None = None) -> Graph:
    """Read a Parquet edge table with pyarrow.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    directed : bool, optional
        Keep edge direction. The default is ``False``, meaning undirected
        unless the file was written by :func:`write_graph` from a directed graph.
    src_col, dst_col, label_col, vertex_label_col : str, optional
        Column names, as in :func:`read_csv`.
    name : str, optional
        The graph's name. The default is the file name without extension.

    Returns
    -------
    Graph

    Raises
    ------
    InputFormatError
        For a file that is not Parquet (or truncated), a missing column, a
        non-integer column, a null, negative or over-int64 value (naming the
        row, counted from 1).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = os.fspath(path)
    if os.path.getsize(source) == 0:
        raise InputFormatError(source, None, "the file is empty")
    try:
        pf = pq.ParquetFile(source)
        schema = pf.schema_arrow
        table = pf.read()
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:
        raise InputFormatError(source, None, f"not a valid Parquet file, or truncated "
                                             f"({exc})") from None
    meta = (schema.metadata or {}).get(_PQ_META_KEY)
    if meta and not directed:
        try:
            directed = bool(json.loads(meta).get("directed", False))
        except ValueError:
            pass

    def locate(row: int, message: str) -> InputFormatError:
        vals = {c: table.column(c)[row].as_py() for c in table.column_names[:4]}
        # rows counted from 1, like lines (and like the update-stream reader's rows)
        return InputFormatError(source, None, f"row {row + 1}: {message}", json.dumps(vals))

    return _table_to_graph(table, source, directed=directed, name=name or _stem(path),
                           src_col=src_col, dst_col=dst_col, label_col=label_col,
                           vertex_label_col=vertex_label_col, locate=locate)


# ====================================================================== dispatcher
def graph_format(path: PathLike, format: str | None = None) -> str:
    """The format of ``path``: ``format`` if given, else by extension, else sniffed.

    Parameters
    ----------
    path : str or os.PathLike
        The file; a trailing ``.gz`` is looked through.
    format : str, optional
        One of ``edgelist tve mtx csv parquet binary`` (or an extension-like
        alias such as ``txt``, ``graph``, ``wmg``). The default is ``None``.

    Returns
    -------
    str
        The format name.

    Examples
    --------
    >>> graph_format("web.txt.gz"), graph_format("q.graph"), graph_format("x", "wmg")
    ('edgelist', 'tve', 'binary')
    """
    if format:
        f = format.lower().lstrip(".")
        f = _ALIASES.get(f, f)
        if f not in FORMATS:
            raise GraphError(f"unknown graph format {format!r}; use one of "
                             f"{', '.join(FORMATS)}")
        return f
    ext = _inner_suffix(path)
    if ext in _EXT:
        return _EXT[ext]
    return _sniff(path)


def _sniff(path: PathLike) -> str:
    """Guess the format from the first bytes and the first non-comment line."""
    from .binary import MAGIC
    source = os.fspath(path)
    opener = gzip.open if _is_gz(source) else open
    with opener(source, "rb") as fh:
        head = fh.read(1 << 16)
    if head.startswith(MAGIC):
        return "binary"
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.lstrip().lower().startswith(b"%%matrixmarket"):
        return "mtx"
    for raw in head.splitlines():
        line = raw.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
        if not line or line[0] in "#%":
            continue
        if line[0] in "tve" and (len(line) == 1 or line[1] in " \t"):
            return "tve"
        if "," in line:
            return "csv"
        return "edgelist"
    return "edgelist"


def read_graph(path: PathLike, format: str | None = None, directed: bool = False,
               vertex_labels: PathLike | None = None, name: str | None = None,
               **opts: Any) -> Graph:
    """Read a data graph from a file of any supported format.

    Parameters
    ----------
    path : str or os.PathLike
        The file. Its format is chosen by extension (``.txt .el .edges .tsv
        .snap`` edge list, ``.graph .tve`` labeled t/v/e, ``.mtx`` Matrix
        Market, ``.csv``, ``.parquet .pq``, ``.wmg`` binary cache; a trailing
        ``.gz`` is decompressed), else sniffed from the content.
    format : str, optional
        Force a format (``edgelist``, ``tve``, ``mtx``, ``csv``, ``parquet``,
        ``binary``). The default is ``None``: by extension.
    directed : bool, optional
        Read a directed graph. The default is ``False``: undirected, unless the
        file records that it is directed (``.wmg``, Parquet written by warpmatch).
    vertex_labels : str or os.PathLike, optional
        An ``id label`` file giving every vertex a label (see
        :func:`read_vertex_labels`); vertices listed there but in no edge become
        isolated vertices. The default is ``None``.
    name : str, optional
        The graph's name. The default is the file name without extension
        (for ``.wmg``: the stored name).
    **opts
        Format-specific options: ``edge_labels=True`` (edge list: third
        column is the label), ``src_col``/``dst_col``/``label_col``/
        ``vertex_label_col`` (CSV, Parquet), ``delimiter`` (CSV), ``mmap``/
        ``validate`` (binary).

    Returns
    -------
    Graph

    Raises
    ------
    InputFormatError
        For malformed input, naming the file, the line and the text.
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tri.txt"
    >>> _ = p.write_text("1 2\\n2 3\\n3 1\\n")
    >>> read_graph(p)
    <Graph 'tri': 3 vertices, 3 edges, undirected>
    """
    source = os.fspath(path)
    if not os.path.exists(source):
        raise FileNotFoundError(f"no such graph file: {source!r}")
    if os.path.isdir(source):
        raise IsADirectoryError(f"{source!r} is a directory, not a graph file")
    fmt = graph_format(source, format)
    if fmt == "edgelist":
        return read_edgelist(source, directed, vertex_labels=vertex_labels, name=name, **opts)
    if fmt == "binary":
        from .binary import load_binary
        g = load_binary(source, **opts)
        if directed and not g.directed:
            raise GraphError(f"{source} holds an undirected graph; convert the source file "
                             "again with --directed to get a directed cache")
        if name:
            import dataclasses
            g = dataclasses.replace(g, name=name)
    elif fmt == "tve":
        g = read_tve(source, directed, name=name, **opts)
    elif fmt == "mtx":
        g = read_mtx(source, directed, name=name, **opts)
    elif fmt == "csv":
        g = read_csv(source, directed, name=name, **opts)
    else:
        g = read_parquet(source, directed, name=name, **opts)
    if vertex_labels is not None:
        g = _attach_label_file(g, vertex_labels, source)
    return g


def _attach_label_file(g: Graph, label_path: PathLike, source: str) -> Graph:
    """Rebuild ``g`` with labels from an ``id label`` file (ids in ``g``'s id space)."""
    vids, vlabels = read_vertex_labels(label_path)
    return _assemble_with_labels(g, vids, vlabels, os.fspath(label_path), source)


def _assemble_with_labels(g: Graph, vids: np.ndarray, vlabels: np.ndarray, label_source: str,
                          source: str) -> Graph:
    src, dst = g.edges()
    ext_all = g.to_external(np.arange(g.n))
    # vertices of g that are isolated must survive: declare them through the label
    # file's vertex set plus g's own vertices; every one of them needs a label
    ids_all = np.concatenate([vids, ext_all])
    ids_u, first = np.unique(ids_all, return_index=True)
    labeled = first < vids.size
    if not labeled.all():
        v = int(ids_u[np.flatnonzero(~labeled)[0]])
        raise InputFormatError(label_source, None, f"vertex {v} of {source} has no label")
    return _assemble(g.to_external(src), g.to_external(dst), g.edge_label_array(),
                     directed=g.directed, name=g.name, source=source, vids=vids,
                     vlabels=vlabels, label_source=label_source)


# ========================================================================= writers
def _vertex_rows_needed(g: Graph) -> np.ndarray | None:
    """Internal ids that need a vertex row in an edge table (all if labeled; else isolated)."""
    if g.vertex_labels is not None:
        return np.arange(g.n)
    iso = np.flatnonzero(g.degree == 0)
    return iso if iso.size else None


def _edge_table(g: Graph) -> Any:
    import pyarrow as pa
    src, dst = g.edges()
    s = g.to_external(src).astype(np.int64)
    d = g.to_external(dst).astype(np.int64)
    el = g.edge_label_array()
    vrows = _vertex_rows_needed(g)
    cols: dict[str, Any] = {}
    if vrows is None:
        cols["src"] = pa.array(s)
        cols["dst"] = pa.array(d)
        if el is not None:
            cols["label"] = pa.array(el.astype(np.int32))
        return pa.table(cols)
    k = vrows.size
    m = s.size
    cols["src"] = pa.array(np.concatenate([s, g.to_external(vrows).astype(np.int64)]))
    mask = np.concatenate([np.zeros(m, bool), np.ones(k, bool)])
    cols["dst"] = pa.array(np.concatenate([d, np.zeros(k, np.int64)]), mask=mask)
    if el is not None:
        cols["label"] = pa.array(np.concatenate([el, np.zeros(k, np.int32)]).astype(np.int32),
                                 mask=mask)
    if g.vertex_labels is not None:
        cols["vertex_label"] = pa.array(
            np.concatenate([np.zeros(m, np.int32), g.vertex_labels[vrows]]).astype(np.int32),
            mask=~mask)
    return pa.table(cols)


def _write_text_blocks(path: str, blocks: list[tuple[str | None, Any]]) -> None:
    """Write space-separated integer tables (each optionally under a comment) to ``path``."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with pa.output_stream(path, compression="detect") as out:
        for comment, table in blocks:
            if comment:
                out.write(comment.encode("utf-8"))
            if table is not None and table.num_rows:
                pcsv.write_csv(table, out, opts)


def _lossy(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=3)


def _write_mtx(graph: Graph, path: str) -> None:
    """Matrix Market pattern matrix (``symmetric`` when undirected), 1-based indices."""
    import scipy.io
    import scipy.sparse as sp
    lost = [what for what, gone in (
        ("vertex labels", graph.vertex_labels is not None),
        ("edge labels", graph.edge_labels is not None),
        ("vertex ids (renumbered 1..n)", graph.ids is not None and not np.array_equal(
            graph.ids, np.arange(1, graph.n + 1)))) if gone]
    if lost:
        _lossy(f"Matrix Market cannot hold the {' and '.join(lost)} of {graph.name!r}; "
               f"they were not written to {path}")
    src, dst = graph.edges()
    if not graph.directed:
        src, dst = np.maximum(src, dst), np.minimum(src, dst)   # lower triangle
    A = sp.coo_array((np.ones(src.size, np.int8), (src, dst)), shape=(graph.n, graph.n))
    with _open_out(path) as fh:
        scipy.io.mmwrite(fh, A, field="pattern",
                         symmetry="general" if graph.directed else "symmetric")


def _open_out(path: str) -> Any:
    return gzip.open(path, "wb") if _is_gz(path) else open(path, "wb")


def output_graph_format(path: PathLike, format: str | None = None) -> str:
    """The format :func:`write_graph` writes to ``path``: ``format``, else by extension.

    Unlike :func:`graph_format` it never sniffs (the file does not exist yet),
    so callers can check a target before doing the work that produces it.

    Parameters
    ----------
    path : str or os.PathLike
        The target file; a trailing ``.gz`` is looked through.
    format : str, optional
        Force a format (as :func:`graph_format`). The default is ``None``.

    Returns
    -------
    str
        The format name.

    Raises
    ------
    GraphError
        If the format cannot be told from the extension, or is unknown.

    Examples
    --------
    >>> output_graph_format("g.wmg"), output_graph_format("g.txt.gz")
    ('binary', 'edgelist')
    >>> output_graph_format("g", "csv")
    'csv'
    """
    path_s = os.fspath(path)
    if not format and _inner_suffix(path_s) not in _EXT:
        raise GraphError(f"cannot tell the output format of {path_s!r} from its extension; "
                         f"use one of {', '.join(sorted(_EXT))} (or format=...)")
    return graph_format(path_s, format)


def write_graph(graph: Graph, path: PathLike, format: str | None = None) -> None:
    """Write ``graph`` to a file, vertex ids mapped back to the external ids.

    Parameters
    ----------
    graph : Graph
    path : str or os.PathLike
        The target. Format by extension: ``.wmg`` binary cache (everything,
        memory-mapped on load), ``.parquet``/``.pq`` and ``.csv`` edge tables
        (``src, dst[, label]``, plus vertex rows with an empty ``dst`` and a
        ``vertex_label`` when the graph has vertex labels or isolated
        vertices), ``.graph``/``.tve`` labeled t/v/e, ``.txt``/``.el``/
        ``.edges``/``.tsv``/``.snap`` edge list (``u v[ label]``), ``.mtx``
        Matrix Market (indices 1..n: the ids are not kept). A ``.gz`` suffix
        compresses the text formats.
    format : str, optional
        Force a format (as :func:`graph_format`). The default is ``None``.

    Raises
    ------
    GraphError
        If the format cannot be told from the extension.

    Warns
    -----
    UserWarning
        When the format cannot hold part of the graph, which is then not
        written: vertex labels in an edge list; vertex labels, edge labels and
        non-``1..n`` ids in Matrix Market (``.mtx``, a pattern matrix,
        ``symmetric`` when undirected).

    Notes
    -----
    Binary output is written atomically (temporary file and rename). Other
    formats write ``path`` directly; ``warpmatch convert`` wraps every format
    in its own atomic rename.
    """
    path_s = os.fspath(path)
    fmt = output_graph_format(path_s, format)
    if fmt == "binary":
        from .binary import save_binary
        save_binary(graph, path_s)
        return
    if fmt == "parquet":
        import pyarrow.parquet as pq
        table = _edge_table(graph)
        meta = json.dumps({"directed": graph.directed, "name": graph.name, "n": graph.n})
        table = table.replace_schema_metadata({_PQ_META_KEY: meta.encode()})
        pq.write_table(table, path_s)
        return
    if fmt == "csv":
        import pyarrow as pa
        import pyarrow.csv as pcsv
        with pa.output_stream(path_s, compression="detect") as out:
            pcsv.write_csv(_edge_table(graph), out,
                           pcsv.WriteOptions(quoting_style="none"))
        return
    if fmt == "mtx":
        _write_mtx(graph, path_s)
        return
    import pyarrow as pa
    src, dst = graph.edges()
    cols = {"u": pa.array(graph.to_external(src).astype(np.int64)),
            "v": pa.array(graph.to_external(dst).astype(np.int64))}
    el = graph.edge_label_array()
    if el is not None:
        cols["l"] = pa.array(el.astype(np.int32))
    kind = "directed" if graph.directed else "undirected"
    if fmt == "tve":
        vl = (graph.vertex_labels if graph.vertex_labels is not None
              else np.zeros(graph.n, np.int32))
        vtab = pa.table({"t": pa.repeat("v", graph.n),
                         "id": pa.array(graph.to_external(np.arange(graph.n)).astype(np.int64)),
                         "label": pa.array(vl.astype(np.int32)),
                         "deg": pa.array(graph.degree.astype(np.int64))})
        etab = pa.table({"t": pa.repeat("e", src.size), **cols})
        header = (f"# {graph.name}: {kind}"
                  f"{'' if graph.vertex_labels is not None else ', unlabeled (label 0)'}\n"
                  f"t {graph.n} {graph.num_edges}\n")
        _write_text_blocks(path_s, [(header, vtab), (None, etab)])
        return
    if graph.vertex_labels is not None:
        _lossy(f"an edge list cannot hold the vertex labels of {graph.name!r}; they were not "
               f"written to {path_s} (write .wmg, .graph, .parquet or .csv to keep them)")
    iso = int(np.count_nonzero(graph.degree == 0))
    header = (f"# {graph.name}: {graph.n} vertices, {graph.num_edges} edges, {kind}"
              f"{'; columns: u v label' if el is not None else ''}"
              f"{f'; {iso} isolated vertices are not listed' if iso else ''}\n")
    _write_text_blocks(path_s, [(header, pa.table(cols))])
