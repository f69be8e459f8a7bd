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
"""
from __future__ import annotations

import numpy as np
from numba import njit

OK = 0
NOT_INTEGER = 1
NEGATIVE = 2
OVERFLOW = 3
TOO_FEW = 4
TOO_MANY = 5
BAD_TAG = 6

_INT64_MAX = np.iinfo(np.int64).max


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
    i = 0
    if n >= 3 and buf[0] == 0xEF and buf[1] == 0xBB and buf[2] == 0xBF:
        i = 3
    line = 1
    row = 0
    while i < n:
        line_start = i
        while i < n and _is_space(buf[i]):
            i += 1
        if i >= n:
            break
        c = buf[i]
        if c == 10:
            line += 1
            i += 1
            continue
        if c == 35 or c == 37:          # '#' or '%': a comment line
            i = _skip_line(buf, i)
            continue
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
            while i < n and _is_space(buf[i]):
                i += 1
            if i >= n or buf[i] == 10:
                break
            c = buf[i]
            if c == 35:                 # inline comment
                i = _skip_line(buf, i)
                break
            if col >= ncols:
                if extra_error:
                    return row, TOO_MANY, line, line_start, col
                while i < n and buf[i] != 10 and not _is_space(buf[i]):
                    i += 1
                col += 1
                continue
            neg = False
            if c == 45:                 # '-'
                neg = True
                i += 1
            elif c == 43:               # '+'
                i += 1
            first = i
            val = np.int64(0)
            overflow = False
            while i < n and 48 <= buf[i] <= 57:
                d = np.int64(buf[i] - 48)
                if val > (_INT64_MAX - d) // 10:
                    overflow = True
                else:
                    val = val * 10 + d
                i += 1
            if i == first or (i < n and buf[i] != 10 and not _is_space(buf[i])):
                return row, NOT_INTEGER, line, line_start, col
            if neg and (val != 0 or overflow):
                return row, NEGATIVE, line, line_start, col
            if overflow:
                return row, OVERFLOW, line, line_start, col
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
