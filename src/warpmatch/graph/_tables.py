"""Edge tables: the CSV and Parquet readers (pyarrow), vertex rows included.

Map: :func:`_table_to_graph` (columns -> :class:`Graph`: vertex rows, labels,
errors naming the row) < :func:`read_csv` (pyarrow's reader; on the error path
the csv module finds the bad line: :func:`_csv_locate_problem`,
:func:`_csv_row_line`) and :func:`read_parquet`. The formats are described in
:mod:`.formats`, which re-exports both readers.
"""
from __future__ import annotations

import csv
import gzip
import json
import os
import re
from typing import Any, Callable

import numpy as np

from ..errors import InputFormatError
from ._base import PathLike, _assemble, _first_repeat, _is_gz, _stem
from .csr import INT32_MAX, INT64_MAX, Graph

__all__ = ["read_csv", "read_parquet"]

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
