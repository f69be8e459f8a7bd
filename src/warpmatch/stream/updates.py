"""Update streams: the file formats, readers and writer (and where the rest lives).

An update is ``(u, v, +|-[, label])`` in the graph file's id space; a stream
is an :class:`~warpmatch.stream.types.Updates` (flat numpy arrays). This
module turns files, stdin, Python objects and graphs into streams:

- :func:`read_updates` / :func:`iter_update_batches` read text or Parquet/CSV
  update files (and stdin, in chunks, so ``producer | warpmatch stream ...``
  works while the producer runs);
- :func:`write_updates` writes a stream back (text or Parquet, atomically);
- re-exported from the modules they live in: :func:`as_updates`
  (:mod:`.convert`, with the Parquet/CSV readers: what Python callers
  naturally have, arrays, tuples, mappings, pyarrow tables, with vertex
  declarations as the files have them), :func:`make_stream` and
  :func:`replay_temporal` (:mod:`.generate`: a stream derived from a static
  graph by the method of the continuous-matching papers, and a timestamped
  message log such as SNAP's CollegeMsg replayed as a stream); the text
  scanner is :mod:`._update_text`.

Text format
-----------
One update per line, fields separated by any whitespace::

    # comments and blank lines are ignored
    # columns: u v op label time      (optional header: fixes the layout)
    v 1001 7                          (declares new vertex 1001 with label 7)
    12 57 +                           (insert edge 12-57)
    12 57 - 3 1082040961.5            (delete it; edge label 3, a timestamp)

``op`` is ``+``/``-``, ``1``/``-1``/``+1`` or ``insert``/``delete``. Without a
``# columns:`` header a 4th field is the edge label and a 5th the timestamp
(``labels=False`` makes the 4th the timestamp). Timestamps are integers or
decimals and must not decrease. Text is tokenised by a compiled numba scanner
over the raw bytes, built from the line, token and integer steps of
:mod:`warpmatch.graph._tokenize` (so blank lines, comments and ids read as in
an edge list), because an update file, like an edge list, can hold 10^8
lines; there is no Python loop per line.

Tables (``.parquet``/``.pq``/``.csv``): columns ``src``, ``dst``, ``op``
(integers ``1``/``-1`` or the strings above), optional ``label`` and ``time``.
A row with an empty (null) ``dst`` declares vertex ``src`` with the label in
column ``vertex_label`` (or ``label``), as in the edge tables of
:func:`warpmatch.write_graph`.

Errors name the source and the line (text, CSV) or row (Parquet):
:class:`~warpmatch.errors.InputFormatError`.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator

import numpy as np

from ..errors import InputFormatError
from ..graph._base import _read_bytes
from ._update_text import _Layout, _make_updates, _TextParser
# the other modules of update streams; as_updates, make_stream and replay_temporal are
# re-exported here, where users have always found them
from .convert import _read_csv, _read_parquet, _read_table_bytes, as_updates
from .generate import FRACTION_SLACK, make_stream, replay_temporal
from .types import Updates

__all__ = ["read_updates", "iter_update_batches", "split_batches", "as_updates", "write_updates",
           "output_update_format", "make_stream", "replay_temporal", "UPDATE_FORMATS",
           "FRACTION_SLACK"]

PathLike = str | os.PathLike

#: update file formats and the extensions that select them
UPDATE_FORMATS = {"text": (".txt", ".updates", ".upd", ".tsv", ".el", ".edges"),
                  "parquet": (".parquet", ".pq"), "csv": (".csv",)}
_STDIN = "<stdin>"
_PARQUET_MAGIC = b"PAR1"

# ------------------------------------------------------------------- formats
def _named_update_format(path: PathLike, fmt: str | None) -> str | None:
    """``fmt`` checked, else the format ``path``'s extension names (``.gz`` looked through)."""
    if fmt:
        f = fmt.lower().lstrip(".")
        f = {"pq": "parquet", "txt": "text"}.get(f, f)
        if f not in UPDATE_FORMATS:
            raise InputFormatError(os.fspath(path), None, f"unknown update format {fmt!r}; "
                                   f"use one of {', '.join(UPDATE_FORMATS)}")
        return f
    p = Path(os.fspath(path))
    if p.suffix.lower() == ".gz":
        p = p.with_suffix("")
    ext = p.suffix.lower()
    for f, exts in UPDATE_FORMATS.items():
        if ext in exts:
            return f
    return None


def _update_format(path: PathLike, fmt: str | None) -> str:
    f = _named_update_format(path, fmt)
    if f is not None:
        return f
    if os.fspath(path) != "-" and os.path.isfile(path):
        with open(path, "rb") as fh:
            if fh.read(4) == b"PAR1":
                return "parquet"
    return "text"


def _stdin_binary() -> BinaryIO:
    return getattr(sys.stdin, "buffer", sys.stdin)


def _check_path(path: PathLike) -> str:
    source = os.fspath(path)
    if source == "-":
        return _STDIN
    if not os.path.exists(source):
        raise FileNotFoundError(f"no such update file: {source!r}")
    if os.path.isdir(source):
        raise IsADirectoryError(f"{source!r} is a directory, not an update file")
    return source


def _read_text(buf: np.ndarray, source: str, labels: bool | None) -> Updates:
    layout = _Layout.choose(bytes(buf[:1 << 16]), labels, source)
    cols, decl = _TextParser(source, layout).parse(buf)
    return _make_updates(cols, source, decl)


def read_updates(path: PathLike, *, labels: bool | None = None,
                 fmt: str | None = None) -> Updates:
    """Read a whole update stream from a file or stdin.

    Parameters
    ----------
    path : str or os.PathLike
        A text file (see the module docstring; ``.gz`` allowed), a Parquet
        (``.parquet``/``.pq``) or CSV (``.csv``) table, or ``"-"`` for stdin.
    labels : bool or None, optional
        Text files: ``True`` — the 4th field is an edge label, required on
        every line; ``False`` — no label field (a 4th field is the
        timestamp). The default is ``None``: a ``# columns:`` header decides,
        else a 4th field, if any, is the label and a 5th the timestamp.
    fmt : str, optional
        ``"text"``, ``"parquet"`` or ``"csv"``. The default is ``None``: by
        extension (content sniffed for unknown extensions; stdin: Parquet if it
        starts with Parquet's magic bytes, else text).

    Returns
    -------
    Updates
        External ids as in the file; ``line`` holds each update's line (text,
        CSV) or its row number counted from 1 (Parquet).

    Raises
    ------
    InputFormatError
        Naming ``file:line`` (Parquet: the row) and the text, for a bad op,
        a wrong number of fields, a non-integer, negative or too large id or
        label, a bad or decreasing timestamp, labels or timestamps on some
        lines only, or a vertex declared twice. An empty file is zero updates.
    FileNotFoundError
        If ``path`` does not exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "u.txt"
    >>> _ = p.write_text("# two updates\\n1 2 +\\n2 3 delete\\n")
    >>> u = read_updates(p)
    >>> u.src.tolist(), u.dst.tolist(), u.op.tolist(), u.line.tolist()
    ([1, 2], [2, 3], [1, -1], [2, 3])
    """
    source = _check_path(path)
    f = _update_format(path, fmt)
    if source == _STDIN:
        data = _stdin_binary().read()
        if isinstance(data, str):
            data = data.encode("utf-8")
        if fmt is None and data[:4] == _PARQUET_MAGIC:
            f = "parquet"               # `cat ups.parquet | ...`: stdin has no extension
        if f == "text":
            return _read_text(np.frombuffer(data, np.uint8), source, labels)
        return _read_table_bytes(data, source, f)
    if f == "text":
        return _read_text(_read_bytes(source), source, labels)
    if f == "parquet":
        return _read_parquet(source)
    return _read_csv(source)


def iter_update_batches(path: PathLike, batch_size: int, *, labels: bool | None = None,
                        fmt: str | None = None, chunk_bytes: int = 1 << 20,
                        stream: BinaryIO | None = None,
                        max_latency: float | None = None,
                        arrivals: Callable[[np.ndarray], None] | None = None
                        ) -> Iterator[Updates]:
    """Read an update stream in batches of ``batch_size`` updates.

    Text from stdin (``path="-"``) or from ``stream`` is read chunk by chunk,
    as data arrives, so a batch is handed on as soon as ``batch_size``
    updates (or the end of the input) have been read: ``producer |
    warpmatch stream ...`` works while the producer runs. Files are read
    whole (the tokenizer is fast) and cut into batches.

    Parameters
    ----------
    path : str or os.PathLike
        As :func:`read_updates`; ``"-"`` is stdin.
    batch_size : int
        Updates per batch (>= 1); the last batch may be shorter.
    labels, fmt
        As :func:`read_updates`.
    chunk_bytes : int, optional
        Largest read from a stream. The default is 1 MiB.
    stream : binary file object, optional
        Read this instead of stdin when ``path`` is ``"-"``.
    max_latency : float, optional
        Seconds: a batch of a text stream also closes when its oldest update
        has waited this long (a slow producer's updates are handed on without
        waiting for ``batch_size`` of them; :mod:`warpmatch.stream.batching`).
        The default, ``None``, closes batches on size only. Files are read
        whole, so their batches are full anyway.
    arrivals : callable, optional
        Called with each batch's arrival times (``time.perf_counter()``, one
        per update: when its chunk of a text stream was read; for a file or
        a Parquet stream, when it had been read whole) just before the batch
        is yielded (:class:`~warpmatch.stream.latency.LatencyStats`).

    Yields
    ------
    Updates
        Consecutive batches; ``line`` numbers are global. Every batch carries
        the vertex declarations (``v ID LABEL``) read so far (a file's: all
        of them), so a declaration must come before, or in the same batch as,
        the first update that uses the vertex.

    Raises
    ------
    InputFormatError
        As :func:`read_updates`, when the bad line is reached (earlier
        batches have been yielded by then).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    source = _check_path(path)
    f = _update_format(path, fmt)
    if source != _STDIN or f != "text":
        if source == _STDIN and stream is not None:
            ups = _read_table_bytes(stream.read(), source, f)
        else:
            ups = read_updates(path, labels=labels, fmt=f)
        yield from arrived_whole(split_batches(ups, batch_size), arrivals)
        return
    fh = stream if stream is not None else _stdin_binary()
    head = b""
    if fmt is None:
        # stdin has no extension: Parquet is told by its magic bytes (a text line
        # is longer than 4 bytes, so reading them does not wait for a second line)
        while len(head) < len(_PARQUET_MAGIC):
            got = fh.read(len(_PARQUET_MAGIC) - len(head))
            if not got:
                break
            head += got.encode("utf-8") if isinstance(got, str) else got
        if head == _PARQUET_MAGIC:
            parts = [head]
            while True:                 # a raw stream's read() may return only a part
                got = fh.read(chunk_bytes)
                if not got:
                    break
                parts.append(got.encode("utf-8") if isinstance(got, str) else got)
            data = b"".join(parts)
            yield from arrived_whole(
                split_batches(_read_table_bytes(data, source, "parquet"), batch_size), arrivals)
            return
    if max_latency is None and arrivals is None:
        yield from _stream_text(fh, source, labels, batch_size, chunk_bytes, head)
        return
    # (arrival times are taken as the reader thread gets each chunk: timed_batches, which
    # closes on size only without max_latency)
    from .batching import concat_updates, timed_batches
    yield from timed_batches(_stream_text(fh, source, labels, None, chunk_bytes, head),
                             batch_size, None if max_latency is None else float(max_latency),
                             len, concat_updates, lambda u, lo, hi: u.slice(lo, hi), arrivals)


def arrived_whole(batches: Iterator[Updates], arrivals: Callable[[np.ndarray], None] | None,
                  t0: float | None = None) -> Iterator[Updates]:
    """``batches`` of a stream known whole: every update arrived at ``t0`` (by default,
    when the first batch was ready), told to ``arrivals`` before each batch."""
    for batch in batches:
        if arrivals is not None:
            t0 = time.perf_counter() if t0 is None else t0
            arrivals(np.full(len(batch), t0))
        yield batch


def split_batches(updates: Updates, batch_size: int) -> Iterator[Updates]:
    """Cut ``updates`` into consecutive batches of ``batch_size`` (the last may be shorter).

    Every batch carries the stream's vertex declarations whole (the same array
    objects, as :meth:`Updates.slice` does): a declared vertex is created by
    the first *valid* update that names it, which may come in any batch.

    Parameters
    ----------
    updates : Updates
    batch_size : int
        >= 1.

    Yields
    ------
    Updates
        Nothing for an empty stream without declarations; one empty batch
        for declarations without updates.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    n = len(updates)
    if n == 0:
        if updates.new_vertex_ids.size:
            yield updates
        return
    for start in range(0, n, batch_size):
        yield updates.slice(start, min(start + batch_size, n))


def _stream_text(fh: Any, source: str, labels: bool | None, batch_size: int | None,
                 chunk_bytes: int, head: bytes = b"") -> Iterator[Updates]:
    """Text updates from a stream, in batches of ``batch_size`` as they arrive
    (``None``: whatever each read brought)."""
    read = getattr(fh, "read1", None) or fh.read
    parser: _TextParser | None = None
    pending = head                             # an incomplete last line (or the bytes sniffed)
    cols: dict[str, np.ndarray] | None = None  # parsed updates; cols[k][cur:] not handed on
    cur = 0
    decl: dict[str, np.ndarray] | None = None  # every declaration so far
    eof = False
    yielded = False

    def take(count: int) -> Updates:
        nonlocal cur
        assert cols is not None
        out = {k: v[cur:cur + count] for k, v in cols.items()}    # views, no copy
        cur += count
        return _make_updates(out, source, decl)

    while not eof:
        chunk = read(chunk_bytes)
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        data = pending + chunk if pending else chunk
        if not chunk:
            eof = True
            part, pending = data, b""
        else:
            cut = data.rfind(b"\n")
            if cut < 0:
                pending = data
                continue
            part, pending = data[:cut + 1], data[cut + 1:]
        if parser is None:
            if not eof and len(part) < (1 << 16) and not _has_data_line(part):
                # only comments so far: wait until the header block (a '# columns:'
                # line decides the layout) is followed by data
                pending = part + pending
                continue
            parser = _TextParser(source, _Layout.choose(part[:1 << 16], labels, source))
        if not part:
            continue
        new, new_decl = parser.parse(np.frombuffer(part, np.uint8))
        if new_decl["ids"].size:
            # one array pair per change, shared by the batches after it (so a
            # consumer can cache its checks by identity, as DynamicGraph does)
            decl = {k: new_decl[k] if decl is None else np.concatenate([decl[k], new_decl[k]])
                    for k in ("ids", "labels")}
        if new["src"].size:
            if cols is None or cur >= cols["src"].size:
                cols = new
            else:   # the rest of the previous chunk (< batch_size) joins the new one
                cols = {k: np.concatenate([cols[k][cur:], new[k]]) for k in new}
            cur = 0
        if batch_size is None:           # every chunk as it is parsed (timed batches)
            if cols is not None and cols["src"].size > cur:
                yielded = True
                yield take(cols["src"].size - cur)
            continue
        while cols is not None and cols["src"].size - cur >= batch_size:
            yielded = True
            yield take(batch_size)
    left = 0 if cols is None else cols["src"].size - cur
    if left or (decl is not None and not yielded):
        if cols is None:
            cols = {"src": np.empty(0, np.int64), "dst": np.empty(0, np.int64),
                    "op": np.empty(0, np.int8), "line": np.empty(0, np.int64)}
        yield take(left)


def _has_data_line(part: bytes) -> bool:
    for raw in part.splitlines():
        line = raw.strip().lstrip(b"\xef\xbb\xbf")
        if line and line[:1] not in (b"#", b"%"):
            return True
    return False


# ------------------------------------------------------------------- writer
def output_update_format(path: PathLike, fmt: str | None = None) -> str:
    """The format :func:`write_updates` writes to ``path``: ``fmt``, else by extension.

    It decides as :func:`read_updates` will when reading the file back
    (``.gz`` looked through), except that it never sniffs: the file does not
    exist yet, so callers can check a target before doing the work that
    produces it. An unknown extension means text.

    Parameters
    ----------
    path : str or os.PathLike
        The target file.
    fmt : str, optional
        ``"text"``, ``"parquet"`` or ``"csv"``. The default is ``None``: by
        extension.

    Returns
    -------
    str
        ``"text"``, ``"parquet"`` or ``"csv"``.

    Raises
    ------
    InputFormatError
        If ``fmt`` is unknown, or ``path`` asks for gzip-compressed Parquet
        (Parquet compresses inside the file; the reader would not look
        through the ``.gz``).

    Examples
    --------
    >>> output_update_format("u.parquet"), output_update_format("u.csv.gz")
    ('parquet', 'csv')
    >>> output_update_format("u.log"), output_update_format("u", "pq")
    ('text', 'parquet')
    """
    f = _named_update_format(path, fmt) or "text"
    if f == "parquet" and Path(os.fspath(path)).suffix.lower() == ".gz":
        raise InputFormatError(os.fspath(path), None, "Parquet is compressed inside the file; "
                               "drop the .gz")
    return f


def write_updates(path: PathLike, updates: Updates, fmt: str | None = None) -> None:
    """Write an update stream, atomically (temporary file, then rename).

    Parameters
    ----------
    path : str or os.PathLike
        The target. ``.parquet``/``.pq``: a table ``src, dst, op (int8 +1/-1)
        [, label][, time][, vertex_label]`` with vertex declarations as rows
        whose ``dst`` is null; ``.csv``: the same table as CSV (ops ``+``/``-``,
        ``.csv.gz`` compresses); anything else:
        text, ``v ID LABEL`` lines first, then ``u v +|- [label] [time]`` under a
        ``# columns:`` header (``.gz`` compresses).
    updates : Updates
    fmt : str, optional
        ``"text"``, ``"parquet"`` or ``"csv"``. The default is ``None``: by
        extension, as :func:`output_update_format` (text when unknown).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "u.txt"
    >>> write_updates(p, as_updates([(1, 2, "+"), (1, 2, "-")]))
    >>> print(p.read_text().splitlines()[-1])
    1 2 -
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from .._writers import atomic_path

    f = output_update_format(path, fmt)
    n = len(updates)
    if f in ("parquet", "csv"):
        nv = int(updates.new_vertex_ids.size)
        valid = np.concatenate([np.zeros(nv, bool), np.ones(n, bool)])
        src = np.concatenate([updates.new_vertex_ids.astype(np.int64), updates.src])
        dst = pa.array(np.concatenate([np.zeros(nv, np.int64), updates.dst]), mask=~valid)
        if f == "parquet":
            op = pa.array(np.concatenate([np.zeros(nv, np.int8), updates.op]), mask=~valid)
        else:
            op = pc.take(pa.array(["-", "", "+"]),
                         pa.array(np.concatenate([np.zeros(nv, np.int8), updates.op]) + 1))
        cols: dict[str, Any] = {"src": pa.array(src), "dst": dst, "op": op}
        if updates.label is not None:
            cols["label"] = pa.array(np.concatenate([np.zeros(nv, np.int32), updates.label])
                                     .astype(np.int32), mask=~valid)
        if updates.time is not None:
            t = updates.time
            cols["time"] = pa.array(np.concatenate([np.zeros(nv, t.dtype), t]), mask=~valid)
        if nv:
            cols["vertex_label"] = pa.array(np.concatenate(
                [updates.new_vertex_labels, np.zeros(n, np.int32)]).astype(np.int32), mask=valid)
        table = pa.table(cols)
        with atomic_path(path) as tmp:
            if f == "parquet":
                import pyarrow.parquet as pq
                pq.write_table(table, os.fspath(tmp))
            else:
                import pyarrow.csv as pcsv
                # "detect": .csv.gz is gzipped, as the reader (pyarrow) expects
                with pa.output_stream(os.fspath(tmp), compression="detect") as out:
                    pcsv.write_csv(table, out, pcsv.WriteOptions(quoting_style="none",
                                                                 quoting_header="none"))
        return
    import pyarrow.csv as pcsv
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    names = ["u", "v", "op"] + (["label"] if updates.label is not None else []) + (
        ["time"] if updates.time is not None else [])
    nv = int(updates.new_vertex_ids.size)
    header = (f"# warpmatch update stream: {n} updates{f', {nv} new vertices' if nv else ''}"
              f"\n# columns: {' '.join(names)}\n")
    with atomic_path(path) as tmp:
        with pa.output_stream(os.fspath(tmp), compression="detect") as out:
            out.write(header.encode())
            if updates.new_vertex_ids.size:
                vt = pa.table({"t": pa.repeat("v", updates.new_vertex_ids.size),
                               "id": pa.array(updates.new_vertex_ids.astype(np.int64)),
                               "label": pa.array(updates.new_vertex_labels.astype(np.int32))})
                pcsv.write_csv(vt, out, opts)
            if n:
                cols = {"u": pa.array(updates.src.astype(np.int64)),
                        "v": pa.array(updates.dst.astype(np.int64)),
                        "op": pc.take(pa.array(["-", "", "+"]),
                                      pa.array(updates.op.astype(np.int8) + 1))}
                if updates.label is not None:
                    cols["label"] = pa.array(updates.label.astype(np.int32))
                if updates.time is not None:
                    cols["time"] = pa.array(updates.time)
                pcsv.write_csv(pa.table(cols), out, opts)

