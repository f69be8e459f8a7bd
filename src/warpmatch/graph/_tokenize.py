"""A numba tokenizer for whitespace-separated integer tables (edge lists, t/v/e files).

Text graph files are parsed here in one compiled pass over the raw bytes
(``np.fromfile``), never with a Python loop per line, so a 10-million-edge
SNAP file parses in about a second. The scanner understands:

- blank lines and comment lines starting with ``#`` or ``%`` (after optional
  leading whitespace), and a ``#`` token that starts an inline comment;
- any mix of spaces, tabs and ``\\r`` between tokens (Windows line ends);
- an optional UTF-8 byte-order mark;
- optionally a one-letter tag opening each line (``t``/``v``/``e`` of the
  labeled format); lines with a chosen tag (the ``t`` header) are skipped.

It fills up to ``ncols`` int64 columns per data row and stops at the first
problem, returning a status code, the 1-based line number and the byte
offset of that line, so the caller can raise
:class:`~warpmatch.errors.InputFormatError` with ``file:line`` and the text.
Values are range-checked here (negative, int64 overflow) because after the
fact a wrapped-around value can no longer be told from a real one.

The line and token steps (:func:`bom_length`, :func:`next_data_line`,
:func:`next_token`, :func:`token_end`, :func:`parse_uint`) are shared with
the update-stream scanner of :mod:`warpmatch.stream.updates`, so blank
lines, comments, separators and integer fields mean the same in every text
format. Numba compiles them into their callers (``inline="always"``), so each
scanner is still one loop over the bytes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .csr import INT64_MAX

OK = 0
NOT_INTEGER = 1
NEGATIVE = 2
OVERFLOW = 3
TOO_FEW = 4
TOO_MANY = 5
BAD_TAG = 6


@njit(cache=True, nogil=True)
def _is_space(c: int) -> bool:
    # space, \t, \r, \v, \f  (\n is the line separator and handled apart)
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def _skip_line(buf: np.ndarray, i: int) -> int:
    n = buf.size
    while i < n and buf[i] != 10:
        i += 1
    return i


# The steps below are compiled into their callers (inline="always"), and each is
# shaped so that numba's reference-count pruning removes the incref/decref of ``buf``
# that inlining adds around every call: the last use of ``buf`` is never inside a
# branch that joins again before a return (numba would then decref a maybe-null
# pointer at the join, which the pruner cannot pair; hence the early returns and the
# ``stop`` byte of parse_uint). A pair left in costs two atomic operations per line or
# token: the edge-list scan ran 30-45% slower with the natural shapes. parse_uint also
# tests overflow against constants instead of dividing per digit (about 10% of a scan).
# bench/io_speed.py times the scan.
@njit(cache=True, nogil=True, inline="always")
def bom_length(buf):  # pragma: no cover - compiled
    """3 if ``buf`` opens with a UTF-8 byte-order mark, else 0."""
    if buf.size >= 3 and buf[0] == 0xEF and buf[1] == 0xBB and buf[2] == 0xBF:
        return 3
    return 0


@njit(cache=True, nogil=True, inline="always")
def next_data_line(buf, i, line):  # pragma: no cover - compiled
    """Skip blank and comment lines from the start ``i`` of line number ``line``.

    Returns ``(i, line, line_start)``: ``buf[i]`` is the first non-blank byte
    of the next data line, which is line number ``line`` and starts at byte
    ``line_start``; ``i == buf.size`` when no data line is left. A comment
    line has ``#`` or ``%`` as its first non-blank byte.
    """
    n = buf.size
    line_start = i
    while i < n:
        c = buf[i]
        if c == 10:
            line += 1
            i += 1
            line_start = i
        elif _is_space(c):
            i += 1
        elif c == 35 or c == 37:        # '#' or '%': a comment line, on to its '\n'
            i += 1
            while i < n and buf[i] != 10:
                i += 1
        else:
            return i, line, line_start
    return i, line, line_start


@njit(cache=True, nogil=True, inline="always")
def next_token(buf, i):  # pragma: no cover - compiled
    """The next token of the line, from ``i``: ``(position, True)`` past blanks.

    ``(position of the line's end, False)`` when the line has no more tokens:
    only blanks up to its ``\\n`` (or the end of ``buf``), or a ``#`` that
    starts an inline comment.
    """
    n = buf.size
    while i < n and _is_space(buf[i]):
        i += 1
    if i >= n or buf[i] == 10:
        return i, False
    if buf[i] == 35:                    # inline comment
        return _skip_line(buf, i), False
    return i, True


@njit(cache=True, nogil=True, inline="always")
def token_end(buf, i):  # pragma: no cover - compiled
    """Position just past the token that starts at ``i`` (a blank, ``\\n`` or the end)."""
    n = buf.size
    while i < n and buf[i] != 10 and not _is_space(buf[i]):
        i += 1
    return i


_CUT = INT64_MAX // 10
_LIM = INT64_MAX % 10


@njit(cache=True, nogil=True, inline="always")
def overflows10(val, d):  # pragma: no cover - compiled
    """Would ``val * 10 + d`` (``val >= 0``, digit ``d``) overflow int64? Two compares
    per digit instead of a division (which cost about 10% of a scan)."""
    return val > _CUT or (val == _CUT and d > _LIM)


@njit(cache=True, nogil=True, inline="always")
def parse_uint(buf, i):  # pragma: no cover - compiled
    """Parse the token at ``i`` as a non-negative int64 (an optional ``+``; ``-0`` is 0).

    Returns ``(status, value, end)``: ``status`` is :data:`OK`,
    :data:`NOT_INTEGER` (no digits, or a byte other than a digit before the
    token's end), :data:`NEGATIVE` or :data:`OVERFLOW`, tested in this order;
    ``end`` is the position past the token when ``OK``.
    """
    n = buf.size
    neg = False
    c = buf[i]
    if c == 45:                         # '-'
        neg = True
        i += 1
    elif c == 43:                       # '+'
        i += 1
    first = i
    val = np.int64(0)
    overflow = False
    stop = 10                           # the byte after the digits ('\n' at the end)
    while i < n:
        c = buf[i]
        if c < 48 or c > 57:
            stop = c
            break
        d = np.int64(c - 48)
        if overflows10(val, d):
            overflow = True
        else:
            val = val * 10 + d
        i += 1
    status = OK
    if i == first or (stop != 10 and not _is_space(stop)):
        status = NOT_INTEGER
    elif neg and (val != 0 or overflow):
        status = NEGATIVE
    elif overflow:
        status = OVERFLOW
    return status, val, i


@njit(cache=True, nogil=True)
def count_lines(buf):  # pragma: no cover - compiled
    """Number of ``\\n`` bytes plus one: an upper bound on the data rows (sizes the output)."""
    k = 1
    for i in range(buf.size):
        if buf[i] == 10:
            k += 1
    return k


@njit(cache=True, nogil=True)
def scan_table(buf, ncols, min_cols, extra_error, tagged, skip_tag, out, ncol_out, tag_out,
               stop_row):  # pragma: no cover - compiled
    """Scan ``buf`` (uint8) into ``out`` (int64, shape (ncols, capacity)).

    Parameters
    ----------
    buf : uint8 array
        The file's bytes.
    ncols : int
        Integer columns stored per row (tokens after the tag).
    min_cols : int
        Fewer integer tokens than this on a data line is an error.
    extra_error : bool
        More than ``ncols`` tokens is an error (else extra tokens are skipped
        unparsed, e.g. SNAP timestamps or weights).
    tagged : bool
        Each data line starts with a one-letter tag (stored in ``tag_out``).
    skip_tag : int
        Byte of a tag whose lines are skipped entirely (``ord('t')``), or -1.
    out, ncol_out, tag_out : arrays
        Outputs: values, integer tokens stored per row (uint8), tag per row (uint8).
    stop_row : int
        Stop successfully after storing this row (used to find the line of a
        row when a later check fails), or -1 to scan everything.

    Returns
    -------
    (rows, status, line, line_start, column)
        ``rows`` data rows stored; on error ``status`` != 0 and ``line`` (1-based),
        ``line_start`` (byte offset) and ``column`` (0-based token index after the
        tag) locate the problem. With ``stop_row`` reached, ``line`` is its line.
    """
    n = buf.size
    i = bom_length(buf)
    line = 1
    row = 0
    while True:
        i, line, line_start = next_data_line(buf, i, line)
        if i >= n:
            break
        c = buf[i]
        tag = 0
        if tagged:
            is_letter = (65 <= c <= 90) or (97 <= c <= 122)
            if not is_letter:
                return row, BAD_TAG, line, line_start, -1
            tag = c
            i += 1
            if i < n and buf[i] != 10 and not _is_space(buf[i]):
                return row, BAD_TAG, line, line_start, -1
            if tag == skip_tag:
                i = _skip_line(buf, i)
                continue
        col = 0
        while True:
            i, more = next_token(buf, i)
            if not more:
                break
            if col >= ncols:
                if extra_error:
                    return row, TOO_MANY, line, line_start, col
                i = token_end(buf, i)
                col += 1
                continue
            status, val, i = parse_uint(buf, i)
            if status != OK:
                return row, status, line, line_start, col
            out[col, row] = val
            col += 1
        if col < min_cols:
            return row, TOO_FEW, line, line_start, col
        ncol_out[row] = min(col, ncols)
        tag_out[row] = tag
        if row == stop_row:
            return row + 1, OK, line, line_start, 0
        row += 1
    return row, OK, line, -1, 0
