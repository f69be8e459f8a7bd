"""The text update format's compiled scanner: bytes to update columns, no Python loop per line.

What is where
-------------
- the scanner (:func:`_scan_updates`, numba): one pass over the raw bytes with the
  line, token and integer steps of :mod:`warpmatch.graph._tokenize`: ids,
  ``op`` words (``+``/``-``, ``1``/``-1``, ``insert``/``delete``), edge labels,
  timestamps, ``v ID LABEL`` declarations, a status code for the first bad line;
- :class:`_Layout` — which field is what (a ``# columns:`` header, or the
  default: a 4th field is a label, a 5th a timestamp);
- :class:`_TextParser` — chunk by chunk (stdin as it arrives), line numbers
  kept global, errors naming the line;
- :func:`_make_updates` — the columns as :class:`~warpmatch.stream.types.Updates`.

The format itself is described in :mod:`warpmatch.stream.updates`, which reads
files and streams with these.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np
from numba import njit

from ..errors import InputFormatError
from ..graph import _tokenize as tk
from ..graph.csr import INT32_MAX, INT64_MAX
from ..graph._base import _first_repeat, _line_text
from .types import Updates

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
