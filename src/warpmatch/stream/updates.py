"""Update streams: readers, writers, and the two stream generators of the literature.

An update is ``(u, v, +|-[, label])`` in the graph file's id space; a stream
is an :class:`~warpmatch.stream.types.Updates` (flat numpy arrays). This
module turns files, stdin, Python objects and graphs into streams:

- :func:`read_updates` / :func:`iter_update_batches` read text or Parquet/CSV
  update files (and stdin, in chunks, so ``producer | warpmatch stream ...``
  works while the producer runs);
- :func:`as_updates` accepts what Python callers naturally have (arrays,
  tuples, mappings, pyarrow tables), with vertex declarations as the files
  have them (``("v", id, label)`` tuples, ``vertex_id``/``vertex_label``);
- :func:`write_updates` writes a stream back (text or Parquet, atomically);
- :func:`make_stream` derives a stream from a static graph by the method of
  the continuous-matching papers (GCSM §VI-A, following RapidFlow and Sun et
  al.'s in-depth study of CSM): remove a random fraction of the edges, which
  become the future insertions, pick random remaining edges as deletions,
  and interleave both by a seeded shuffle;
- :func:`replay_temporal` turns a timestamped message log such as SNAP's
  CollegeMsg (``src dst unix_time``) into a real stream: an edge appears with
  its first message and, with a window ``W``, expires ``W`` after its last one.

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

import dataclasses
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import numpy as np
from numba import njit

from ..errors import InputCleanupWarning, InputFormatError
from ..graph import _tokenize as tk
from ..graph.csr import INT32_MAX, INT64_MAX, Graph
from ..graph.formats import (_check_label_range, _csv_row_line, _first_repeat, _line_text,
                             _read_bytes, _Table)
from .types import DELETE, INSERT, Updates

__all__ = ["read_updates", "iter_update_batches", "split_batches", "as_updates", "write_updates",
           "output_update_format", "make_stream", "replay_temporal", "UPDATE_FORMATS"]

PathLike = str | os.PathLike

#: update file formats and the extensions that select them
UPDATE_FORMATS = {"text": (".txt", ".updates", ".upd", ".tsv", ".el", ".edges"),
                  "parquet": (".parquet", ".pq"), "csv": (".csv",)}
_STDIN = "<stdin>"
_PARQUET_MAGIC = b"PAR1"

# ------------------------------------------------------------------ the scanner
# status codes of _scan_updates: those of _tokenize for the integer fields and the
# field count, then the update-specific ones
_OK, _NOT_INT, _NEG, _OVERFLOW = tk.OK, tk.NOT_INTEGER, tk.NEGATIVE, tk.OVERFLOW
_TOO_FEW, _TOO_MANY = tk.TOO_FEW, tk.TOO_MANY
_BAD_OP, _BAD_TIME, _BIG_LABEL, _BAD_VLINE = 6, 7, 8, 9

# row kinds
_ROW_UPDATE, _ROW_VERTEX = 0, 1


@njit(cache=True, nogil=True)
def _lower(c):  # pragma: no cover - compiled
    return c | 32 if 65 <= c <= 90 else c


@njit(cache=True, nogil=True)
def _word_is(buf, s, e, w):  # pragma: no cover - compiled
    if e - s != w.size:
        return False
    for j in range(w.size):
        if _lower(buf[s + j]) != w[j]:
            return False
    return True


@njit(cache=True, nogil=True)
def _parse_op(buf, s, e, w_ins, w_del):  # pragma: no cover - compiled
    """+1 / -1 for ``+ - 1 +1 -1 insert delete`` (case-insensitive words), 0 otherwise."""
    n = e - s
    c = buf[s]
    if n == 1:
        if c == 43 or c == 49:      # '+', '1'
            return 1
        if c == 45:                 # '-'
            return -1
        return 0
    if n == 2 and buf[s + 1] == 49:
        if c == 43:
            return 1
        if c == 45:
            return -1
        return 0
    if _word_is(buf, s, e, w_ins):
        return 1
    if _word_is(buf, s, e, w_del):
        return -1
    return 0


@njit(cache=True, nogil=True)
def _parse_number(buf, s, e):  # pragma: no cover - compiled
    """(ok, is_decimal, int value, float value) of a timestamp token.

    Integers (optionally signed) are exact int64; decimals (``1.5``, ``2e9``)
    are computed as mantissa * 10^exp in float64, exact for up to 15
    significant digits, which is what timestamps carry.
    """
    i = s
    neg = False
    if buf[i] == 45 or buf[i] == 43:
        neg = buf[i] == 45
        i += 1
    mant = np.int64(0)
    exp10 = 0
    digits = 0
    is_dec = False
    overflow = False
    while i < e and 48 <= buf[i] <= 57:
        d = np.int64(buf[i] - 48)
        if tk.overflows10(mant, d):
            overflow = True
            exp10 += 1
        else:
            mant = mant * 10 + d
        digits += 1
        i += 1
    if i < e and buf[i] == 46:          # '.'
        is_dec = True
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            d = np.int64(buf[i] - 48)
            if not tk.overflows10(mant, d):
                mant = mant * 10 + d
                exp10 -= 1
            digits += 1
            i += 1
    if digits == 0:
        return False, False, np.int64(0), 0.0
    if i < e and (buf[i] == 101 or buf[i] == 69):     # 'e' / 'E'
        is_dec = True
        i += 1
        eneg = False
        if i < e and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        if i == e:
            return False, False, np.int64(0), 0.0
        ev = 0
        while i < e and 48 <= buf[i] <= 57:
            if ev < 10000:
                ev = ev * 10 + (buf[i] - 48)
            i += 1
        exp10 += -ev if eneg else ev
    if i != e:
        return False, False, np.int64(0), 0.0
    if overflow and not is_dec:
        is_dec = True               # too large for int64: keep it as a float
    if exp10 >= 0:
        f = np.float64(mant) * 10.0 ** exp10
    else:
        f = np.float64(mant) / 10.0 ** (-exp10)
    if neg:
        f = -f
        mant = -mant
    if not np.isfinite(f):
        return False, False, np.int64(0), 0.0
    return True, is_dec, mant, f


@njit(cache=True, nogil=True)
def _scan_updates(buf, skip_bom, min_cols, max_cols, label_pos, w_ins, w_del,
                  src, dst, op, lab, t_int, t_flt, t_dec, ncol, kind, line_no, line_at,
                  first_line):  # pragma: no cover - compiled
    """Scan update lines of ``buf`` (uint8) into the row arrays.

    Fields 0 and 1 are vertex ids, field 2 the op, field ``label_pos`` (or -1)
    the edge label and any other field the timestamp (``_Layout.time_pos``: the
    layout's ``max_cols`` leaves room for no other); a line has
    ``min_cols..max_cols`` fields. ``v ID LABEL`` lines are vertex
    declarations (``kind`` 1, id in ``src``, label in ``lab``).

    Returns ``(rows, status, line, line_start, column)`` as
    :func:`warpmatch.graph._tokenize.scan_table` does; line numbers count
    from ``first_line``.
    """
    n = buf.size
    i = tk.bom_length(buf) if skip_bom else 0
    line = first_line
    row = 0
    while True:
        i, line, line_start = tk.next_data_line(buf, i, line)
        if i >= n:
            break
        c = buf[i]
        is_vertex = (c == 118 or c == 86) and (i + 1 >= n or buf[i + 1] == 10
                                               or tk._is_space(buf[i + 1]))
        if is_vertex:                       # 'v ID LABEL'
            i += 1
            col = 0
            while True:
                i, more = tk.next_token(buf, i)
                if not more:
                    break
                if col >= 2:
                    return row, _BAD_VLINE, line, line_start, col
                st, val, i = tk.parse_uint(buf, i)
                if st != _OK:
                    return row, _BAD_VLINE, line, line_start, col
                if col == 0:
                    src[row] = val
                else:
                    if val > INT32_MAX:
                        return row, _BIG_LABEL, line, line_start, -1
                    lab[row] = val
                col += 1
            if col != 2:
                return row, _BAD_VLINE, line, line_start, col
            kind[row] = _ROW_VERTEX
            ncol[row] = 2
            line_no[row] = line
            line_at[row] = line_start
            row += 1
            continue
        col = 0
        while True:
            i, more = tk.next_token(buf, i)
            if not more:
                break
            if col >= max_cols:
                return row, _TOO_MANY, line, line_start, col
            if col < 2:
                st, val, i = tk.parse_uint(buf, i)
                if st != _OK:
                    return row, st, line, line_start, col
                if col == 0:
                    src[row] = val
                else:
                    dst[row] = val
            elif col == 2:
                e = tk.token_end(buf, i)
                o = _parse_op(buf, i, e, w_ins, w_del)
                if o == 0:
                    return row, _BAD_OP, line, line_start, col
                op[row] = o
                i = e
            elif col == label_pos:
                st, val, i = tk.parse_uint(buf, i)
                if st != _OK:
                    return row, st, line, line_start, col
                if val > INT32_MAX:
                    return row, _BIG_LABEL, line, line_start, col
                lab[row] = val
            else:                       # the timestamp (see the docstring)
                e = tk.token_end(buf, i)
                ok, dec, iv, fv = _parse_number(buf, i, e)
                if not ok:
                    return row, _BAD_TIME, line, line_start, col
                t_int[row] = iv
                t_flt[row] = fv
                t_dec[row] = dec
                i = e
            col += 1
        if col < min_cols:
            return row, _TOO_FEW, line, line_start, col
        kind[row] = _ROW_UPDATE
        ncol[row] = col
        line_no[row] = line
        line_at[row] = line_start
        row += 1
    return row, _OK, line, -1, 0


_W_INS = np.frombuffer(b"insert", dtype=np.uint8).copy()
_W_DEL = np.frombuffer(b"delete", dtype=np.uint8).copy()


class _Layout:
    """Which field holds what in a text update file."""

    def __init__(self, label: bool | None, time: bool | None, fixed: bool) -> None:
        # label/time: True = present, False = absent, None = optional (auto mode)
        self.label, self.time, self.fixed = label, time, fixed
        self.label_pos = 3 if label is not False else -1
        self.time_pos = (4 if label is not False else 3) if time is not False else -1
        self.max_cols = 3 + (label is not False) + (time is not False)
        self.min_cols = 3 + bool(label) + (bool(time) and fixed)
        self.names = ["source id", "target id", "op"]
        if label is not False:
            self.names.append("edge label")
        if time is not False:
            self.names.append("timestamp")

    @classmethod
    def choose(cls, head: bytes, labels: bool | None, source: str) -> "_Layout":
        """From a ``# columns:`` header among the leading comment lines, else ``labels``."""
        for raw in head.splitlines():
            line = raw.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
            if not line:
                continue
            if line[0] not in "#%":
                break
            m = re.match(r"[#%]\s*columns\s*:\s*(.*)$", line, re.IGNORECASE)
            if not m:
                continue
            cols = [c.lower() for c in m.group(1).replace(",", " ").split()]
            std = [{"src": "u", "dst": "v", "source": "u", "target": "v"}.get(c, c)
                   for c in cols]
            ok = std[:3] == ["u", "v", "op"] and std[3:] in ([], ["label"], ["time"],
                                                            ["label", "time"])
            if not ok:
                raise InputFormatError(source, None, "the '# columns:' header must read "
                                       "'u v op [label] [time]'", line)
            has_label = "label" in std
            if labels is not None and bool(labels) != has_label:
                raise InputFormatError(source, None, f"labels={labels} but the '# columns:' "
                                       f"header {'has' if has_label else 'has no'} label "
                                       "column", line)
            return cls(has_label, "time" in std, fixed=True)
        if labels is None:
            return cls(None, None, fixed=False)
        return cls(bool(labels), None, fixed=False)


class _TextParser:
    """Scans text update data, possibly in chunks (stdin), and checks it across chunks."""

    def __init__(self, source: str, layout: _Layout) -> None:
        self.source = source
        self.layout = layout
        self.next_line = 1
        self.has_label: bool | None = None     # decided by the first update line
        self.has_time: bool | None = None
        self.time_decimal = False
        self.last_time: Any = None
        self.declared = np.empty(0, np.int64)  # sorted ids of 'v' lines so far
        self.first = True

    def _fail(self, buf: np.ndarray, status: int, line: int, start: int, col: int) -> None:
        text = _line_text(buf, start)
        names = self.layout.names
        what = names[col] if 0 <= col < len(names) else f"field {col + 1}"
        opt = {True: "{}", None: "[{}]", False: ""}
        lay = " ".join(["u", "v", "op"] + [opt[req].format(name) for req, name in (
            (self.layout.label, "label"),
            (True if self.layout.time and self.layout.fixed else
             (False if self.layout.time is False else None), "time")) if opt[req]])
        if status == _NOT_INT:
            msg = f"{what}: expected a non-negative integer"
        elif status == _NEG:
            msg = f"{what} is negative (ids and labels must be >= 0)"
        elif status == _OVERFLOW:
            msg = f"{what} is too large (over {INT64_MAX}, the int64 maximum)"
        elif status == _TOO_FEW:
            msg = (f"expected at least {self.layout.min_cols} fields ({lay}), found {col}")
            if start >= 0 and not bytes(buf[start:]).rstrip(b" \t\r").count(b"\n"):
                msg += " (the last line has no newline: is the input truncated?)"
        elif status == _TOO_MANY:
            msg = f"expected at most {self.layout.max_cols} fields ({lay}), found more"
            if self.layout.label is None:
                msg += " (a 4th field is an edge label, a 5th a timestamp)"
        elif status == _BAD_OP:
            msg = "op: expected +, -, 1, -1, insert or delete"
            fields = text.split()
            if len(fields) > 2 and fields[2].replace(".", "", 1).isdigit():
                # the natural mistake: an edge list with times (SNAP's CollegeMsg) or weights
                msg += (" (a 'src dst time' log, such as SNAP's CollegeMsg, is not an update "
                        "stream: 'warpmatch stream-gen LOG --temporal --out ups.txt "
                        "--initial g0.wmg', or replay_temporal() in Python, turns it into one)")
        elif status == _BAD_TIME:
            msg = "timestamp: expected a number"
        elif status == _BIG_LABEL:
            msg = "label is too large (labels are int32)"
        else:
            msg = "a vertex line reads 'v ID LABEL' (non-negative integers)"
        raise InputFormatError(self.source, line, msg, text)

    def parse(self, buf: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Parse complete lines; returns (update columns, vertex declarations)."""
        cap = int(tk.count_lines(buf)) if buf.size else 0
        lay = self.layout
        src = np.empty(cap, np.int64)
        dst = np.empty(cap, np.int64)
        op = np.empty(cap, np.int8)
        lab = np.zeros(cap, np.int64)
        t_int = np.zeros(cap, np.int64)
        t_flt = np.zeros(cap, np.float64)
        t_dec = np.zeros(cap, np.bool_)
        ncol = np.empty(cap, np.uint8)
        kind = np.empty(cap, np.uint8)
        line_no = np.empty(cap, np.int64)
        line_at = np.empty(cap, np.int64)
        rows, status, line, start, col = _scan_updates(
            buf, self.first, lay.min_cols, lay.max_cols, lay.label_pos, _W_INS, _W_DEL,
            src, dst, op, lab, t_int, t_flt, t_dec, ncol, kind, line_no, line_at,
            self.next_line)
        self.first = False
        if status != _OK:
            self._fail(buf, int(status), int(line), int(start), int(col))
        rows = int(rows)
        self.next_line += int(np.count_nonzero(buf == 10))
        is_upd = kind[:rows] == _ROW_UPDATE
        u = np.flatnonzero(is_upd)
        vr = np.flatnonzero(~is_upd)

        def fail_row(r: int, msg: str) -> None:
            raise InputFormatError(self.source, int(line_no[r]), msg,
                                   _line_text(buf, int(line_at[r])))

        # vertex declarations: no id twice (in this chunk or an earlier one)
        vids = src[vr]
        if vr.size:
            r = _first_repeat(vids)
            if r is not None:
                fail_row(int(vr[r]), f"vertex {int(vids[r])} is declared twice")
            again = np.flatnonzero(np.isin(vids, self.declared))
            if again.size:
                fail_row(int(vr[again[0]]), f"vertex {int(vids[again[0]])} is declared twice")
            self.declared = np.union1d(self.declared, vids)
        decl = {"ids": vids.copy(), "labels": lab[vr].astype(np.int32),
                "lines": line_no[vr].copy()}

        nc = ncol[u]
        cols: dict[str, np.ndarray] = {"src": src[u], "dst": dst[u], "op": op[u],
                                       "line": line_no[u]}
        if u.size:
            # every update line has the same fields (labels and times on all, or none)
            if lay.label is None:
                hl = nc >= 4
                if self.has_label is None:
                    self.has_label = bool(hl[0])
                bad = np.flatnonzero(hl != self.has_label)
                if bad.size:
                    fail_row(int(u[bad[0]]), "some updates have an edge label and some do "
                                             "not (give every update a label, or none)")
            else:
                self.has_label = bool(lay.label)
            if lay.time is not False:
                ht = nc > lay.time_pos
                if self.has_time is None:
                    self.has_time = bool(ht[0])
                bad = np.flatnonzero(ht != self.has_time)
                if bad.size:
                    fail_row(int(u[bad[0]]), "some updates have a timestamp and some do not")
            else:
                self.has_time = False
            if self.has_label:
                cols["label"] = lab[u].astype(np.int32)
            if self.has_time:
                dec = t_dec[u]
                if dec.any() and not self.time_decimal:
                    if self.last_time is not None:
                        r = int(u[np.flatnonzero(dec)[0]])
                        fail_row(r, "a decimal timestamp after integer ones in a streamed "
                                    "input (write every timestamp the same way)")
                    self.time_decimal = True
                t = t_flt[u] if self.time_decimal else t_int[u]
                prev = np.concatenate([[self.last_time], t[:-1]]) if self.last_time is not None \
                    else np.concatenate([t[:1], t[:-1]])
                back = np.flatnonzero(t < prev)
                if back.size:
                    b = int(back[0])
                    fail_row(int(u[b]), f"timestamp {t[b]} is earlier than the previous "
                                        f"update's ({prev[b]}); timestamps must not decrease")
                self.last_time = t[-1]
                cols["time"] = t.copy()
        return cols, decl


def _make_updates(cols: dict[str, np.ndarray], source: str,
                  decl: dict[str, np.ndarray] | None = None) -> Updates:
    n = int(cols["src"].size)
    return Updates(src=np.ascontiguousarray(cols["src"], np.int64),
                   dst=np.ascontiguousarray(cols["dst"], np.int64),
                   op=np.ascontiguousarray(cols["op"], np.int8),
                   label=None if cols.get("label") is None else
                   np.ascontiguousarray(cols["label"], np.int32),
                   time=cols.get("time"),
                   line=cols.get("line") if cols.get("line") is not None and n == cols[
                       "line"].size else None,
                   source=source,
                   new_vertex_ids=np.empty(0, np.int64) if decl is None else
                   np.ascontiguousarray(decl["ids"], np.int64),
                   new_vertex_labels=np.empty(0, np.int32) if decl is None else
                   np.ascontiguousarray(decl["labels"], np.int32))


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
                        max_latency: float | None = None) -> Iterator[Updates]:
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
        yield from split_batches(ups, batch_size)
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
            yield from split_batches(_read_table_bytes(data, source, "parquet"), batch_size)
            return
    if max_latency is None:
        yield from _stream_text(fh, source, labels, batch_size, chunk_bytes, head)
        return
    from .batching import concat_updates, timed_batches
    yield from timed_batches(_stream_text(fh, source, labels, None, chunk_bytes, head),
                             batch_size, float(max_latency), len, concat_updates,
                             lambda u, lo, hi: u.slice(lo, hi))


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
        from ..graph.formats import _csv_locate_problem
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


# ---------------------------------------------------------------- generators
#: make_stream accepts insert_fraction + delete_fraction up to 1 plus this: room for the
#: rounding of fractions computed as 1 - x
FRACTION_SLACK = 1e-12


def make_stream(graph: Graph, insert_fraction: float = 0.1, delete_fraction: float = 0.05,
                seed: int = 0) -> tuple[Graph, Updates]:
    """Derive an update stream from a static graph (the seeds' methodology).

    As in the experiments of GCSM (§VI-A, after RapidFlow [15] and [34]): a
    random ``insert_fraction`` of the edges is removed from the graph and
    becomes the stream's insertions; a random ``delete_fraction`` of the
    edges, drawn from those that remain, becomes its deletions; the two are
    interleaved by a seeded shuffle. GCSM selects 10% of the edges and marks
    each an insertion or a deletion with equal probability:
    ``insert_fraction=delete_fraction=0.05`` is that setting, with exact
    rather than binomial counts. Unlike GCSM, a vertex whose edges are all
    held back stays (isolated), so ``G_0`` keeps the input's vertex set and
    ids. Deletions only remove edges of the initial graph and insertions only
    add removed edges, each once, so every update is valid in any order, and
    replaying the stream on the initial graph gives the input graph minus the
    deleted edges.

    Parameters
    ----------
    graph : Graph
        The source graph (directed or not, labeled or not).
    insert_fraction : float, optional
        Fraction of the edges that become insertions. The default is 0.1.
    delete_fraction : float, optional
        Fraction of the edges (of the input graph, drawn from those left in
        the initial graph) that become deletions. The default is 0.05.
    seed : int, optional
        The random seed. The default is 0.

    Returns
    -------
    initial : Graph
        ``G_0``: same vertices, ids, vertex labels and direction as ``graph``,
        without the edges to be inserted.
    updates : Updates
        In the graph's external id space, with edge labels if the graph has
        them; undirected edges are given in a random orientation.

    Raises
    ------
    ValueError
        If a fraction is outside [0, 1] or the two sum to more than 1.

    Examples
    --------
    >>> from warpmatch.graph import barabasi_albert
    >>> g0, ups = make_stream(barabasi_albert(100, 3, seed=1), 0.1, 0.05, seed=2)
    >>> g0.num_edges, len(ups), int((ups.op == 1).sum())
    (262, 44, 29)
    """
    for name, val in (("insert_fraction", insert_fraction), ("delete_fraction",
                                                            delete_fraction)):
        if not 0.0 <= float(val) <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {val}")
    if insert_fraction + delete_fraction > 1.0 + FRACTION_SLACK:
        raise ValueError(f"insert_fraction + delete_fraction must be <= 1, got "
                         f"{insert_fraction} + {delete_fraction}")
    rng = np.random.default_rng(seed)
    src, dst = graph.edges()
    elab = graph.edge_label_array()
    m = int(src.size)
    n_ins = int(round(insert_fraction * m))
    n_del = min(int(round(delete_fraction * m)), m - n_ins)
    perm = rng.permutation(m)
    ins = perm[:n_ins]
    keep = np.sort(perm[n_ins:])
    dele = rng.choice(keep, size=n_del, replace=False) if n_del else np.empty(0, np.int64)
    g0 = Graph.from_edges(src[keep], dst[keep], n=graph.n, vertex_labels=graph.vertex_labels,
                          edge_labels=None if elab is None else elab[keep],
                          directed=graph.directed, ids=graph.ids,
                          name=f"{graph.name}-G0", warn=False)
    which = np.concatenate([ins, dele]).astype(np.int64)
    ops = np.concatenate([np.full(n_ins, INSERT, np.int8), np.full(n_del, DELETE, np.int8)])
    order = rng.permutation(which.size)
    which, ops = which[order], ops[order]
    u, v = src[which], dst[which]
    if not graph.directed:
        flip = rng.random(which.size) < 0.5
        u, v = np.where(flip, v, u), np.where(flip, u, v)
    ups = Updates(src=graph.to_external(u).astype(np.int64),
                  dst=graph.to_external(v).astype(np.int64), op=ops,
                  label=None if elab is None else elab[which].astype(np.int32),
                  source=f"make_stream({graph.name}, seed={seed})")
    return g0, ups


def replay_temporal(path: PathLike, window: float | None = None, *,
                    directed: bool = False) -> tuple[Graph, Updates]:
    """Turn a timestamped message log (``src dst time`` lines) into an update stream.

    The input is SNAP's temporal format, e.g. CollegeMsg: one message per
    line, ``#`` comments, integer unix times. Messages are taken in time
    order (a stable sort, so the file need not be sorted). An edge is
    inserted by its first message; further messages while it is live insert
    nothing. With a ``window`` ``W`` the edge expires (a deletion at time
    ``t + W``) when ``W`` passes after its last message ``t`` without another
    one; a later message inserts it again. At equal times deletions come
    first. Expiries after the log's last message are not emitted (the stream
    ends with the log), so the final graph holds the edges live at its end.

    Parameters
    ----------
    path : str or os.PathLike
        The log (``.gz`` allowed); fields after the third are ignored.
    window : float, optional
        The time-to-live ``W`` (> 0) in the file's time unit. The default is
        ``None``: edges never expire.
    directed : bool, optional
        ``False`` (the default) treats ``u v`` and ``v u`` as one edge (the
        stream keeps the orientation of the message that inserts it);
        ``True`` keeps them apart.

    Returns
    -------
    initial : Graph
        ``G_0``: every vertex of the log, no edges (ids as in the file).
    updates : Updates
        With ``time`` (int64, or float64 for a non-integer window) and
        ``line`` (the message that caused each insertion; for a deletion,
        the last message before it).

    Raises
    ------
    InputFormatError
        For a malformed line (``file:line``) or a log without messages.

    Warns
    -----
    InputCleanupWarning
        When self-loop messages (``u u``) are dropped.
    """
    if window is not None and not float(window) > 0:
        raise ValueError(f"window must be > 0, got {window}")
    source = _check_path(path)
    t = _Table(_read_bytes(source), source, ("source id", "target id", "timestamp"), 3,
               extra_error=False)
    if t.rows == 0:
        raise InputFormatError(source, None, "no message lines (only comments or blank lines)")
    s, d, tm = t.column(0), t.column(1), t.column(2)
    # CollegeMsg and its kin have integer times; the tokenizer rejects others with file:line
    loops = s == d
    if loops.any():
        warnings.warn(f"{source}: dropped {int(loops.sum())} self-loop messages",
                      InputCleanupWarning, stacklevel=2)
    rows = np.flatnonzero(~loops)
    s, d, tm = s[rows], d[rows], tm[rows]
    order = np.argsort(tm, kind="stable")
    s, d, tm, rows = s[order], d[order], tm[order], rows[order]
    ids = np.unique(np.concatenate([s, d, t.column(0), t.column(1)]))
    nvert = int(ids.size)
    a = np.searchsorted(ids, s)
    b = np.searchsorted(ids, d)
    if not directed:
        a, b = np.minimum(a, b), np.maximum(a, b)
    key = a.astype(np.int64) * np.int64(max(nvert, 1)) + b
    # group messages by edge, in time order within an edge; a session is a maximal
    # run of messages each within W of the previous one
    g = np.lexsort((np.arange(key.size), key))
    ks, ts = key[g], tm[g]
    new_edge = np.concatenate([[True], ks[1:] != ks[:-1]])
    if window is None:
        starts = new_edge
    else:
        gap = np.concatenate([[np.inf], (ts[1:] - ts[:-1]).astype(np.float64)])
        starts = new_edge | (gap >= float(window))
    ends = np.concatenate([starts[1:], [True]])
    ins_msg = g[starts]                      # message index (time order) of each insertion
    ins_t = tm[ins_msg]
    if window is None:
        del_msg = del_first = np.empty(0, np.int64)
        del_t = np.empty(0, tm.dtype)
    else:
        w = float(window)
        integral = w == int(w)
        last = g[ends]
        exp = tm[last] + (int(w) if integral else w)
        ended = exp <= tm[-1]                # expiries after the log's end are not emitted
        del_msg = last[ended]
        del_first = ins_msg[ended]           # a deletion names the edge as its insertion did
        del_t = exp[ended]
        if not integral:
            ins_t = ins_t.astype(np.float64)
    msg = np.concatenate([ins_msg, del_msg])
    ends_of = np.concatenate([ins_msg, del_first])
    ev_t = np.concatenate([ins_t, del_t])
    ev_op = np.concatenate([np.full(ins_msg.size, INSERT, np.int8),
                            np.full(del_msg.size, DELETE, np.int8)])
    # time order; at equal times deletions first; then by the message that caused it
    ev = np.lexsort((msg, ev_op, ev_t))
    msg, ends_of, ev_t, ev_op = msg[ev], ends_of[ev], ev_t[ev], ev_op[ev]
    g0 = Graph.from_edges(np.empty(0, np.int64), np.empty(0, np.int64), n=nvert,
                          directed=directed,
                          ids=None if (nvert == 0 or int(ids[-1]) == nvert - 1) else ids,
                          name=f"{Path(source).name.split('.')[0]}-G0")
    ups = Updates(src=s[ends_of].astype(np.int64), dst=d[ends_of].astype(np.int64), op=ev_op,
                  time=ev_t, line=_lines_of(t, rows[msg]), source=source)
    return g0, ups


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
