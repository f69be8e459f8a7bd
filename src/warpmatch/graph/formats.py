"""Graph file formats: one reader per format, one dispatcher, and the writers.

Map: the text readers (:func:`read_edgelist`, :func:`parse_tve`/:func:`read_tve`,
:func:`read_mtx`) and the dispatcher (:func:`graph_format`, :func:`read_graph`)
are here; what every reader shares is in :mod:`._base`, the CSV and Parquet
readers in :mod:`._tables` and the writers in :mod:`._writers` (all re-exported
here and from :mod:`warpmatch.graph`).

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
    instead, and so does a file whose first line is the comment warpmatch
    writes above a labeled edge list (``_base.LABEL_COLUMNS``). Parsed by a
    compiled numba scanner (:mod:`._tokenize`), not a Python loop.
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

import gzip
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphError, InputFormatError
# the shared helpers, the edge-table readers and the writers live in modules of their
# own (_base, _tables, _writers); the public readers and writers are re-exported
from ._base import (_ALIASES, _EXT, FORMATS, LABEL_COLUMNS, PathLike, _assemble,
                    _check_label_range, _first_repeat, _has_content, _inner_suffix, _is_gz,
                    _nth_line, _read_bytes, _stem, _Table)
from ._tables import read_csv, read_parquet
from ._writers import output_graph_format, write_graph
from .csr import Graph

__all__ = [
    "TveData", "parse_tve", "read_tve", "read_edgelist", "read_vertex_labels", "read_mtx",
    "read_csv", "read_parquet", "read_graph", "write_graph", "graph_format",
    "output_graph_format", "FORMATS",
]


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


def read_edgelist(path: PathLike, directed: bool = False, *, edge_labels: bool | None = None,
                  vertex_labels: PathLike | None = None, name: str | None = None) -> Graph:
    """Read a SNAP-style edge list.

    Parameters
    ----------
    path : str or os.PathLike
        One edge ``u v`` per line; ``#``/``%`` comments; any whitespace;
        ``.gz`` allowed.
    directed : bool, optional
        Keep edge direction. The default is ``False``.
    edge_labels : bool or None, optional
        Read a third column as the edge label (required on every line), or
        not (``False``: tokens after the second are ignored, timestamps,
        weights). The default, ``None``, reads it where the file's first line
        is the comment warpmatch writes above a labeled edge list (it holds
        ``; columns: u v label``), else not.
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
    data = _read_bytes(path)
    if edge_labels is None:
        first = data[:4096].tobytes().split(b"\n", 1)[0]
        edge_labels = first.startswith(b"#") and LABEL_COLUMNS.encode() in first
    names = ("source id", "target id") + (("edge label",) if edge_labels else ())
    t = _Table(data, source, names, len(names), extra_error=False)
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
