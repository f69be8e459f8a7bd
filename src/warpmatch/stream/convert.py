"""Update streams from tables and Python objects: :func:`as_updates`, and the Parquet/CSV readers.

What is where
-------------
- the tables: ``op`` values (``+``/``-``, ``1``/``-1``, ``insert``/``delete``),
  a pyarrow table to :class:`~warpmatch.stream.types.Updates` with vertex
  declarations as rows with an empty ``dst`` (:func:`_table_to_updates`), and
  the Parquet and CSV readers that :func:`~warpmatch.stream.updates.read_updates`
  uses, errors naming the row or line;
- :func:`as_updates` — what Python callers naturally have (arrays, tuples,
  mappings, pyarrow tables, declarations as ``("v", id, label)``) as
  :class:`~warpmatch.stream.types.Updates`, with the same checks as the files;
- the 1-based line numbers of a scanned table's data rows (one compiled pass).

:mod:`warpmatch.stream.updates` re-exports :func:`as_updates`; the text format
and its scanner live there.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
from numba import njit

from ..errors import InputFormatError
from ..graph import _tokenize as tk
from ..graph.csr import INT64_MAX
from ..graph._base import _check_label_range, _first_repeat, _read_bytes
from ..graph._tables import _csv_row_line
from .types import Updates

__all__ = ["as_updates"]

# ------------------------------------------------------------------- tables
_OP_WORDS = {"+": 1, "-": -1, "1": 1, "+1": 1, "-1": -1, "insert": 1, "delete": -1}


def _ops_from_values(values: np.ndarray, fail: Any) -> np.ndarray:
    """int8 +1/-1 from an array of ops (ints or strings); ``fail(i, msg)`` raises."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        bad = np.flatnonzero((arr != 1) & (arr != -1))
        if bad.size:
            fail(int(bad[0]), f"op {arr[bad[0]].item()!r}: expected 1 (insert) or -1 (delete)")
        return arr.astype(np.int8)
    if arr.dtype.kind == "b":
        fail(0, "op must be +1/-1 or '+'/'-', not a boolean")
    if arr.dtype.kind == "f":
        bad = np.flatnonzero((arr != 1.0) & (arr != -1.0))
        if bad.size:
            fail(int(bad[0]), f"op {arr[bad[0]].item()!r}: expected 1 (insert) or -1 (delete)")
        return arr.astype(np.int8)
    if arr.size == 0:
        return np.empty(0, np.int8)
    # strings or mixed objects: map each distinct value once (no loop per update)
    as_str = arr.astype(str)
    uniq, inv = np.unique(as_str, return_inverse=True)
    mapped = np.zeros(uniq.size, np.int8)
    for j, tok in enumerate(uniq.tolist()):
        mapped[j] = _OP_WORDS.get(tok.strip().lower(), 0)
    out = mapped[inv.reshape(-1)]
    bad = np.flatnonzero(out == 0)
    if bad.size:
        x = arr[bad[0]]
        fail(int(bad[0]), f"op {x.item() if isinstance(x, np.generic) else x!r}: "
                          "expected +, -, 1, -1, insert or delete")
    return out


def _table_to_updates(table: Any, source: str, locate: Any,
                      row_lines: np.ndarray | None = None) -> Updates:
    """Updates from a pyarrow table with columns src, dst, op[, label][, time].

    ``locate(row, message)`` returns the InputFormatError for data row ``row``;
    ``row_lines[row]`` is the row's line (or row number) kept in ``Updates.line``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = list(table.column_names)
    missing = [c for c in ("src", "dst", "op") if c not in cols]
    if missing:
        raise InputFormatError(source, None, f"an update table needs columns src, dst, op "
                                             f"[, label][, time]; missing {', '.join(missing)} "
                                             f"(columns: {', '.join(cols) or 'none'})")

    def fail(row: int, msg: str) -> None:
        raise locate(row, msg)

    def column(name: str) -> Any:
        col = table.column(name)
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        return col

    def ints(name: str, rows: np.ndarray | None, what: str) -> np.ndarray:
        col = column(name)
        typ = col.type
        if not (pa.types.is_integer(typ) or pa.types.is_null(typ)):
            raise InputFormatError(source, None, f"column {name!r} has type {typ}; "
                                                 "expected integers")
        valid = np.asarray(pc.is_valid(col)) if col.null_count else None
        if pa.types.is_null(typ):       # every entry null (e.g. only vertex rows): no fill
            arr = np.zeros(len(col), np.int64)
        elif col.null_count:
            arr = np.asarray(col.fill_null(0).to_numpy(zero_copy_only=False))
        else:
            arr = np.asarray(col.to_numpy(zero_copy_only=False))
        sel = np.arange(arr.size) if rows is None else rows
        if valid is not None and not valid[sel].all():
            fail(int(sel[np.flatnonzero(~valid[sel])[0]]), f"column {name!r} is empty (null)")
        vals = arr[sel]
        if vals.dtype == np.uint64:
            big = np.flatnonzero(vals > np.uint64(INT64_MAX))
            if big.size:
                fail(int(sel[big[0]]), f"{what} {int(vals[big[0]])} is too large for int64")
        vals = vals.astype(np.int64)
        neg = np.flatnonzero(vals < 0)
        if neg.size:
            fail(int(sel[neg[0]]), f"{what} {int(vals[neg[0]])} is negative "
                                   "(ids and labels must be >= 0)")
        return vals

    n = table.num_rows
    dcol = table.column("dst")
    if dcol.null_count:
        is_v = ~np.asarray(pc.is_valid(dcol))
    else:
        is_v = np.zeros(n, bool)
    urows = np.flatnonzero(~is_v)
    vrows = np.flatnonzero(is_v)
    src = ints("src", urows, "source id")
    dst = ints("dst", urows, "target id")
    opcol = column("op")
    if opcol.null_count:
        ov = np.asarray(pc.is_valid(opcol))[urows]
        if not ov.all():
            fail(int(urows[np.flatnonzero(~ov)[0]]), "column 'op' is empty (null)")
    opv = np.asarray(opcol.to_numpy(zero_copy_only=False))[urows]
    op = _ops_from_values(opv, lambda i, m: fail(int(urows[i]), m))
    label = None
    has_label = "label" in cols
    if has_label:
        label = _check_label_range(ints("label", urows, "edge label"), "edge label",
                                   lambda i, m: fail(int(urows[i]), m))
    if "vertex_label" in cols and urows.size:
        # a vertex label on an update row would be dropped without a word (a mapping
        # or table that forgot the vertex rows' empty dst, or vertex_id)
        given = np.asarray(pc.is_valid(column("vertex_label")))[urows]
        if given.any():
            fail(int(urows[np.flatnonzero(given)[0]]),
                 "an update row (non-empty dst) has a vertex_label; a vertex is declared "
                 "by a row with an empty dst (or, in a mapping, by vertex_id with "
                 "vertex_label)")
    vids = np.empty(0, np.int64)
    vlab = np.empty(0, np.int32)
    if vrows.size:
        vids = ints("src", vrows, "vertex id")
        vcol = "vertex_label" if "vertex_label" in cols else "label"
        if vcol not in cols:
            fail(int(vrows[0]), "a vertex row (empty dst) needs its label in column "
                                "'vertex_label'")
        vlab = _check_label_range(ints(vcol, vrows, "vertex label"), "vertex label",
                                  lambda i, m: fail(int(vrows[i]), m))
        r = _first_repeat(vids)
        if r is not None:
            fail(int(vrows[r]), f"vertex {int(vids[r])} is declared twice")
    time = None
    if "time" in cols:
        tcol = column("time")
        typ = tcol.type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)):
            raise InputFormatError(source, None, f"column 'time' has type {typ}; expected "
                                                 "numbers")
        if tcol.null_count:
            tv = np.asarray(pc.is_valid(tcol))[urows]
            if not tv.all():
                fail(int(urows[np.flatnonzero(~tv)[0]]), "column 'time' is empty (null)")
        t = np.asarray(tcol.fill_null(0).to_numpy(zero_copy_only=False))[urows]
        t = t.astype(np.float64 if t.dtype.kind == "f" else np.int64)
        if t.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(t))
            if bad.size:
                fail(int(urows[bad[0]]), f"timestamp {t[bad[0]]} is not a finite number")
        back = np.flatnonzero(t[1:] < t[:-1])
        if back.size:
            b = int(back[0]) + 1
            fail(int(urows[b]), f"timestamp {t[b]} is earlier than the previous update's "
                                f"({t[b - 1]}); timestamps must not decrease")
        time = t
    line = None if row_lines is None else np.asarray(row_lines, np.int64)[urows]
    return Updates(src=src, dst=dst, op=op, label=label, time=time, line=line, source=source,
                   new_vertex_ids=vids, new_vertex_labels=vlab)


def _read_parquet(source: str) -> Updates:
    import pyarrow as pa
    import pyarrow.parquet as pq
    if os.path.getsize(source) == 0:
        return _empty(source)
    try:
        table = pq.read_table(source)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:
        raise InputFormatError(source, None, f"not a valid Parquet file, or truncated "
                                             f"({exc})") from None
    return _table_to_updates(table, source, _parquet_locate(table, source),
                             np.arange(1, table.num_rows + 1))


def _parquet_locate(table: Any, source: str) -> Any:
    # Parquet has no lines: the "line" of an error (and Updates.line) is the row
    # number counted from 1, so messages read "file.parquet:5001: ..."
    def locate(row: int, message: str) -> InputFormatError:
        vals = {c: table.column(c)[row].as_py() for c in table.column_names[:5]}
        return InputFormatError(source, row + 1, message, repr(vals))
    return locate


def _read_table_bytes(data: bytes, source: str, f: str) -> Updates:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq
    if not data:
        return _empty(source)
    try:
        if f == "parquet":
            table = pq.read_table(pa.BufferReader(data))
        else:
            table = pcsv.read_csv(pa.BufferReader(data), convert_options=_csv_convert())
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:
        raise InputFormatError(source, None, f"cannot read the {f} input ({exc})") from None
    return _table_to_updates(table, source, _parquet_locate(table, source),
                             np.arange(1, table.num_rows + 1))


def _csv_convert() -> Any:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    return pcsv.ConvertOptions(column_types={"src": pa.int64(), "dst": pa.int64(),
                                             "op": pa.string(), "label": pa.int64()})


def _read_csv(source: str) -> Updates:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    if os.path.getsize(source) == 0:
        return _empty(source)
    try:
        table = pcsv.read_csv(source, convert_options=_csv_convert())
    except (pa.ArrowInvalid, pa.ArrowKeyError) as exc:
        from ..graph._tables import _csv_locate_problem
        raise _csv_locate_problem(source, ",", True, str(exc)) from None

    def locate(row: int, message: str) -> InputFormatError:
        line, text = _csv_row_line(source, True, row)
        return InputFormatError(source, line, message, text)
    # lines of the data rows: pyarrow skips blank lines, and so does the scan
    lines = np.empty(table.num_rows + 1, np.int64)
    _row_lines(_read_bytes(source), lines)
    return _table_to_updates(table, source, locate, lines[1:])


def _empty(source: str) -> Updates:
    return Updates(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int8),
                   source=source)


# ----------------------------------------------------------------- as_updates
def as_updates(obj: Any, *, source: str = "<array>") -> Updates:
    """Turn what a Python caller has into :class:`Updates`.

    Every form except bare arrays can also declare new vertices and their
    labels, which a vertex-labeled graph needs for each vertex an update
    introduces (an unlabeled graph creates vertices implicitly and ignores
    declarations). The forms mirror the file formats: ``("v", id, label)`` is
    the text format's ``v ID LABEL`` line, and ``vertex_label`` is the update
    tables' column.

    Parameters
    ----------
    obj : Updates, iterable, mapping, pyarrow.Table, tuple of arrays or 2-D array
        - an :class:`Updates` (returned as is);
        - an iterable of update tuples ``(u, v, op[, label])`` (every update
          with an edge label, or none) and vertex declarations
          ``("v", id, label)``;
        - a mapping with keys ``src``, ``dst``, ``op`` and optionally
          ``label``, ``time`` (one entry per update), and for new vertices
          ``vertex_id`` and ``vertex_label`` (one entry per declared vertex;
          their length need not be the number of updates). A mapping with
          ``vertex_label`` but no ``vertex_id`` is read in the layout of an
          update table instead (as ``pyarrow.Table.to_pydict()`` gives it):
          a row whose ``dst`` is ``None`` declares vertex ``src`` with the
          label in ``vertex_label``, which is ``None`` on the update rows;
        - a pyarrow table with those columns (declarations as rows with a
          null ``dst``, as :func:`read_updates` reads Parquet and CSV);
        - a tuple ``(src, dst, op[, label])`` of 1-D numpy arrays, or a 2-D
          integer array with rows ``(u, v, op[, label])``; these cannot
          declare vertices (use a mapping).

        ``op`` is ``+1``/``-1``, ``"+"``/``"-"`` or ``"insert"``/``"delete"``.
        Ids and labels are non-negative integers (labels fit int32).

        Declarations may stand anywhere among the updates: exactly as the
        ``v`` lines of a text file read by :func:`read_updates`, they are
        collected (in the order given) into ``new_vertex_ids`` /
        ``new_vertex_labels`` and hold for every update of the result, those
        before them included. A declared vertex is created, with its label,
        by the first valid update that names it; a declaration that no valid
        update uses creates nothing. A vertex is declared at most once.
    source : str, optional
        The name used in error messages. The default is ``"<array>"``.

    Returns
    -------
    Updates

    Raises
    ------
    InputFormatError
        Naming the position in ``obj`` (``<array>: update i``; in an
        iterable or table, declarations count as positions too) or, for the
        ``vertex_id``/``vertex_label`` arrays, ``vertex declaration i``:
        for a bad op, a negative, non-integer or too large id or label, a
        tuple of the wrong length, or a vertex declared twice.
    TypeError
        For a path or a string (files are read by :func:`read_updates`).

    Examples
    --------
    >>> u = as_updates([(1, 2, "+"), (2, 3, -1)])
    >>> u.op.tolist()
    [1, -1]

    Vertex 9 is new: declare it with its label (here 7), anywhere in the batch.

    >>> u = as_updates([(1, 9, "+"), ("v", 9, 7), (9, 2, "insert")])
    >>> u.src.tolist(), u.dst.tolist(), u.new_vertex_ids.tolist(), u.new_vertex_labels.tolist()
    ([1, 9], [9, 2], [9], [7])
    >>> m = as_updates({"src": [1, 9], "dst": [9, 2], "op": ["+", "+"],
    ...                 "vertex_id": [9], "vertex_label": [7]})
    >>> m.new_vertex_ids.tolist(), m.new_vertex_labels.tolist()
    ([9], [7])

    Errors name the position in the input:

    >>> as_updates([(1, 2, "+"), ("v", 9, -7)])
    Traceback (most recent call last):
    ...
    warpmatch.errors.InputFormatError: <array>: update 1: vertex label -7 is negative ...
    >>> as_updates([(1, 2, "+"), (2, 3, -1), (3, 4, "insert", 7)])
    Traceback (most recent call last):
    ...
    warpmatch.errors.InputFormatError: <array>: update 2: expected 3 fields ... found 4: ...
    """
    if isinstance(obj, Updates):
        return obj
    try:
        import pyarrow as pa
        if isinstance(obj, (pa.Table, pa.RecordBatch)):
            table = obj if isinstance(obj, pa.Table) else pa.Table.from_batches([obj])
            return _table_to_updates(table, source, _row_locate(source))
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pass

    def fail(i: int, msg: str, text: str | None = None) -> None:
        raise InputFormatError(source, None, f"update {i}: {msg}", text)

    if isinstance(obj, dict) or (hasattr(obj, "keys") and hasattr(obj, "__getitem__")
                                 and not isinstance(obj, np.ndarray)):
        return _from_mapping(obj, source, fail)
    if isinstance(obj, tuple) and 3 <= len(obj) <= 4 and all(
            isinstance(a, np.ndarray) and a.ndim == 1 for a in obj):
        return _from_columns(obj[0], obj[1], obj[2], obj[3] if len(obj) == 4 else None, None,
                             source, fail)
    if isinstance(obj, np.ndarray) and obj.ndim == 2:
        if obj.shape[1] not in (3, 4):
            raise InputFormatError(source, None, f"an update array has 3 or 4 columns "
                                                 f"(u, v, op[, label]), not {obj.shape[1]}")
        return _from_columns(obj[:, 0], obj[:, 1], obj[:, 2],
                             obj[:, 3] if obj.shape[1] == 4 else None, None, source, fail)
    if isinstance(obj, (str, bytes, os.PathLike)):
        raise TypeError("as_updates takes updates, not a path; use read_updates(path)")
    return _from_tuples(obj, source, fail)


def _row_locate(source: str) -> Any:
    """``locate`` for :func:`_table_to_updates` on a caller's table: ``update ROW``."""
    def locate(row: int, message: str) -> InputFormatError:
        return InputFormatError(source, None, f"update {row}: {message}")
    return locate


_TUPLE_FORMS = "a tuple (u, v, op[, label]) or a vertex declaration ('v', id, label)"


def _from_tuples(obj: Any, source: str, fail: Any) -> Updates:
    """An iterable of update tuples and ``("v", id, label)`` declarations (a Python loop,
    for small inputs). Errors name the position in the iterable, declarations counted,
    as a text file's line numbers count its ``v`` lines."""
    rows: list[tuple] = []
    at: list[int] = []                 # position of each update in the iterable
    decl: list[Any] = []               # each declaration, as given ...
    decl_at: list[int] = []            # ... and its position
    width = None
    for i, t in enumerate(obj):
        if isinstance(t, (str, bytes)):
            fail(i, f"expected {_TUPLE_FORMS}, not a string (update files are read by "
                    "read_updates)", repr(t))
        try:
            t = tuple(t)
        except TypeError:
            fail(i, f"expected {_TUPLE_FORMS}", repr(t))
        if t and isinstance(t[0], str):
            if t[0] not in ("v", "V"):
                fail(i, f"source id {t[0]!r} is not an integer (a vertex declaration reads "
                        "('v', id, label))", repr(t))
            if len(t) != 3:
                fail(i, f"a vertex declaration reads ('v', id, label), found {len(t)} fields",
                     repr(t))
            decl.append(t)
            decl_at.append(i)
            continue
        if width is None:
            width = len(t)
            if width not in (3, 4):
                fail(i, f"expected {_TUPLE_FORMS}, found {width} fields", repr(t))
        elif len(t) != width:
            names = "u, v, op" + (", label" if width == 4 else "")
            fail(i, f"expected {width} fields ({names}) like the first update, found {len(t)}",
                 repr(t))
        rows.append(t)
        at.append(i)

    def fail_decl(j: int, msg: str) -> None:
        fail(decl_at[j], msg, repr(decl[j]))

    vids, vlab = _declarations([d[1] for d in decl], [d[2] for d in decl], fail_decl)
    if not rows:
        return dataclasses.replace(_empty(source), new_vertex_ids=vids, new_vertex_labels=vlab)

    def fail_row(j: int, msg: str, text: str | None = None) -> None:
        fail(at[j], msg, repr(rows[j]) if text is None else text)

    cols = list(zip(*rows))
    ups = _from_columns(_int_column(cols[0], "source id", fail_row),
                        _int_column(cols[1], "target id", fail_row),
                        np.array(cols[2], dtype=object),
                        _int_column(cols[3], "label", fail_row) if width == 4 else None,
                        None, source, fail_row)
    return dataclasses.replace(ups, new_vertex_ids=vids, new_vertex_labels=vlab)


def _from_mapping(obj: Any, source: str, fail: Any) -> Updates:
    """A mapping of columns (``vertex_id``/``vertex_label`` declare vertices), or of the
    rows of an update table (``vertex_label`` without ``vertex_id``: null-dst rows)."""
    keys = set(obj.keys())
    if not {"src", "dst", "op"} <= keys:
        raise InputFormatError(source, None, "a mapping of updates needs keys src, dst, op "
                                             "(optional: label, time, and vertex_id with "
                                             "vertex_label to declare new vertices; got "
                                             f"{', '.join(map(str, keys)) or 'none'})")
    if "vertex_label" in keys and "vertex_id" not in keys:
        return _mapping_as_table(obj, keys, source)
    if "vertex_id" in keys and "vertex_label" not in keys:
        raise InputFormatError(source, None, "a mapping declares new vertices with both "
                                             "vertex_id and vertex_label (one entry per "
                                             "vertex); vertex_label is missing")
    dst = obj["dst"]
    # only a sequence that is not all integers can hold a None (the scan is in Python)
    if np.ndim(dst) == 1 and np.asarray(dst).dtype.kind == "O":
        none = next((i for i, x in enumerate(dst) if x is None), None)
        if none is not None:
            fail(none, "target id is None; a row with an empty dst declares vertex src only "
                       "with a 'vertex_label' entry (the update-table layout), or declare "
                       "new vertices with vertex_id and vertex_label")
    ups = _from_columns(obj["src"], obj["dst"], obj["op"], obj.get("label"), obj.get("time"),
                        source, fail)
    if "vertex_id" not in keys:
        return ups
    ids, labels = obj["vertex_id"], obj["vertex_label"]
    for name, val in (("vertex_id", ids), ("vertex_label", labels)):
        if isinstance(val, (str, bytes)) or np.ndim(val) != 1:
            raise InputFormatError(source, None, f"{name} must be a 1-D sequence of integers "
                                                 "(one entry per declared vertex)")
    if len(ids) != len(labels):
        raise InputFormatError(source, None, f"vertex_id and vertex_label differ in length "
                                             f"({len(ids)}, {len(labels)})")

    def fail_decl(j: int, msg: str) -> None:
        raise InputFormatError(source, None, f"vertex declaration {j}: {msg}")

    vids, vlab = _declarations(ids, labels, fail_decl)
    return dataclasses.replace(ups, new_vertex_ids=vids, new_vertex_labels=vlab)


def _mapping_as_table(obj: Any, keys: set, source: str) -> Updates:
    """A mapping in the layout of an update table, read by the table reader."""
    import pyarrow as pa
    cols: dict[str, Any] = {}
    for k in ("src", "dst", "op", "label", "time", "vertex_label"):
        if k not in keys:
            continue
        v = obj[k]
        if isinstance(v, (str, bytes)) or np.ndim(v) != 1:
            raise InputFormatError(source, None, f"{k} must be a 1-D sequence (one entry "
                                                 "per row)")
        if k == "op" and not (isinstance(v, np.ndarray) and v.dtype.kind in "iuf"):
            # ops may mix numbers and words; vertex rows have None
            v = [None if x is None else str(x) for x in v]
        cols[k] = v
    lengths = {k: len(v) for k, v in cols.items()}
    if len(set(lengths.values())) > 1:
        raise InputFormatError(
            source, None, "a mapping with vertex_label but no vertex_id is read as the rows of "
            "an update table (a row whose dst is None declares vertex src), so its columns "
            f"need one length; got {', '.join(f'{k} {n}' for k, n in lengths.items())} "
            "(or give the declared ids in vertex_id, one per vertex_label)")
    try:
        table = pa.table(cols)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError) as exc:
        raise InputFormatError(source, None, f"the mapping cannot be read as the rows of an "
                                             f"update table ({exc})") from None
    return _table_to_updates(table, source, _row_locate(source))


def _declarations(ids: Any, labels: Any, fail: Any) -> tuple[np.ndarray, np.ndarray]:
    """Checked int64 ids and int32 labels of vertex declarations (one per vertex, in the
    order given); ``fail(j, message)`` raises for declaration ``j``."""
    vids = _id_array(ids, "vertex id", fail)
    vlab = _check_label_range(_id_array(labels, "vertex label", fail), "vertex label", fail)
    j = _first_repeat(vids)
    if j is not None:
        fail(j, f"vertex {int(vids[j])} is declared twice")
    return vids, vlab


def _int_column(values: Any, what: str, fail: Any) -> np.ndarray:
    for i, x in enumerate(values):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            fail(i, f"{what} {x!r} is not an integer")
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        big = next(i for i, x in enumerate(values) if abs(int(x)) > INT64_MAX)
        fail(big, f"{what} {values[big]} is too large for int64")
        raise  # pragma: no cover


def _id_array(a: Any, what: str, fail: Any) -> np.ndarray:
    """``a`` (an array or a sequence) as non-negative int64 ids or labels; ``fail(i,
    message)`` raises for entry ``i``. A sequence that is not all integers names its
    first offending entry; an array of another dtype is refused as a whole."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "iu":
        if arr.size == 0:
            return np.empty(0, np.int64)
        if not isinstance(a, np.ndarray):      # the caller's own values, for the message
            arr = _int_column(list(a), what, fail)
        elif arr.dtype.kind == "O":
            arr = _int_column(list(arr.ravel()), what, fail)
        else:
            fail(0, f"{what} must be integers (got dtype {arr.dtype})")
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.uint64(INT64_MAX):
        i = int(np.argmax(arr > np.uint64(INT64_MAX)))
        fail(i, f"{what} {int(arr[i])} is too large for int64")
    arr = arr.astype(np.int64).ravel()
    neg = np.flatnonzero(arr < 0)
    if neg.size:
        fail(int(neg[0]), f"{what} {int(arr[neg[0]])} is negative (ids and labels "
                          "must be >= 0)")
    return arr


def _from_columns(src: Any, dst: Any, op: Any, label: Any, time: Any, source: str,
                  fail: Any) -> Updates:
    s = _id_array(src, "source id", fail)
    d = _id_array(dst, "target id", fail)
    o = _ops_from_values(np.asarray(op).ravel(), fail)
    if not (s.size == d.size == o.size):
        raise InputFormatError(source, None, f"src, dst and op differ in length "
                                             f"({s.size}, {d.size}, {o.size})")
    lab = None
    if label is not None:
        lab = _id_array(label, "edge label", fail)
        if lab.size != s.size:
            raise InputFormatError(source, None, f"label has {lab.size} entries for "
                                                 f"{s.size} updates")
        lab = _check_label_range(lab, "edge label", fail)
    t = None
    if time is not None:
        t = np.asarray(time)
        if t.dtype.kind not in "iuf" or t.size != s.size:
            raise InputFormatError(source, None, "time must be one number per update")
        t = t.astype(np.float64 if t.dtype.kind == "f" else np.int64)
        back = np.flatnonzero(t[1:] < t[:-1])
        if back.size:
            fail(int(back[0]) + 1, "timestamps must not decrease")
    return Updates(src=s, dst=d, op=o, label=lab, time=t, line=None, source=source)



# ------------------------------------------------------------- line numbers
def _lines_of(t: Any, rows: np.ndarray) -> np.ndarray:
    """1-based line of each given data row of a scanned table (one compiled pass)."""
    line_no = np.empty(t.rows, np.int64)
    _row_lines(t.buf, line_no)
    return line_no[rows]


@njit(cache=True, nogil=True)
def _row_lines(buf, out):  # pragma: no cover - compiled
    """Line number of each data (non-blank, non-comment) line, in order."""
    n = buf.size
    i = 0
    line = 1
    row = 0
    while row < out.size:
        i, line, _ = tk.next_data_line(buf, i, line)
        if i >= n:
            break
        out[row] = line
        row += 1
        i = tk._skip_line(buf, i)
    return row
