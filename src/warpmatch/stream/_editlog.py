"""Which storage rows of a dynamic graph changed since a consumer last looked.

Map: :class:`EditLog` (:meth:`~EditLog.mark`, :meth:`~EditLog.record`,
:meth:`~EditLog.since`), one per :class:`~warpmatch.stream.dynamic.DynamicGraph`.

A consumer that keeps a copy of the storage elsewhere (the GPU engine's row
index, storage mirror and row cache, :mod:`warpmatch.stream.gpu._device`) refreshes
only the rows that changed since its copy. The batch path's
:meth:`~warpmatch.stream.dynamic.DynamicGraph.apply` records the rows it merged;
the sequential path (:mod:`warpmatch.stream.sequential`), which edits the stores
in place one update at a time, records its updates' endpoints (a superset of the
rows it rewrote or moved). Nothing is recorded until a consumer asks for a mark,
so a graph only the CPU paths read pays one attribute test per edit.

Not in GCSM or DCSM, whose device holds the only copy of the graph.
"""
from __future__ import annotations

import numpy as np

__all__ = ["EditLog"]

#: rows kept at most (all records together, repeats included) before the log gives up
#: and answers "unknown": the consumer then copies everything again, which past this
#: many rows costs about what refreshing them would
MAX_ROWS = 1 << 18
#: records kept as separate arrays before they are joined into one (bounds the list)
JOIN_AT = 256


class EditLog:
    """Rows edited since a mark, for one consumer (a later mark supersedes earlier ones).

    Examples
    --------
    >>> import numpy as np
    >>> log = EditLog()
    >>> log.record(np.array([1, 2]))          # nobody asked yet: not kept
    >>> m = log.mark()
    >>> log.record(np.array([5, 2]))
    >>> log.since(m).tolist(), log.since(None)
    ([2, 5], None)
    """

    def __init__(self) -> None:
        self.on = False
        self._count = 0                 # records since the log was switched on
        self._base = 0                  # the first record self._parts holds
        self._parts: list[np.ndarray] = []
        self._rows = 0
        self._lost = False              # rows of some record after _base are unknown

    def mark(self) -> int:
        """Start (or keep) logging; the mark of "now" for a later :meth:`since`.

        Records before this mark are dropped: one consumer reads the log."""
        self.on = True
        self._base = self._count
        self._parts = []
        self._rows = 0
        self._lost = False
        return self._count

    def record(self, rows: np.ndarray | None) -> None:
        """One edit of the stores: the rows it may have changed (any order, repeats
        allowed; ``None``: unknown, e.g. every row). Copied when kept."""
        if not self.on:
            return
        self._count += 1
        if self._lost:
            return
        if rows is None or self._rows + rows.size > MAX_ROWS:
            self._lost = True
            self._parts = []
            return
        self._parts.append(np.array(rows, dtype=np.int64, copy=True))
        self._rows += int(rows.size)
        if len(self._parts) > JOIN_AT:
            self._parts = [np.concatenate(self._parts)]

    def since(self, mark: int | None) -> np.ndarray | None:
        """Sorted distinct rows recorded after ``mark``, or ``None`` when that is
        unknown: no mark, a mark older than the last :meth:`mark` call, or an edit
        of unknown rows (or too many rows) since."""
        if mark is None or not self.on or mark != self._base or self._lost:
            return None
        if not self._parts:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(self._parts))
