"""The result of one batch of continuous matching: per-update deltas (:class:`StreamDelta`).

Map: :class:`StreamDelta` (the frozen result; :meth:`StreamDelta._counts`, the fast
constructor of a counts-only delta). Made by
:class:`~warpmatch.stream.matcher.ContinuousMatcher` (which re-exports it) and its
counting paths (:mod:`._paths`); not in any paper (GCSM and DCSM report counts).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .types import Updates

__all__ = ["StreamDelta"]


@dataclass(frozen=True, eq=False)
class StreamDelta:
    """Per-update results of one
    :meth:`~warpmatch.stream.matcher.ContinuousMatcher.apply` call (external ids).

    Attributes
    ----------
    plus_counts, minus_counts : numpy.ndarray
        int64[B]: embeddings (or subgraphs, in that mode) that update ``i``
        created / destroyed. Invalid (skipped) updates have 0 and 0.
    added, removed : int
        Their sums over the batch.
    plus, minus : numpy.ndarray or None
        int64[R, k]: the created / destroyed matches, one row each, column
        ``j`` the data vertex of query vertex ``j`` (:attr:`columns`), sorted
        by update; ``None`` with ``counts_only=True``.
    plus_update, minus_update : numpy.ndarray or None
        int64[R]: the index (within this batch) of the update each row belongs to.
    valid : numpy.ndarray
        bool[B]: ``False`` for updates skipped under ``on_invalid="skip"``.
    reasons : list of str
        Why each update was skipped ("" for valid ones).
    updates : Updates
        The batch as given.
    columns : list of str
        The query vertex names, one per column of ``plus``/``minus``.
    """

    plus_counts: np.ndarray
    minus_counts: np.ndarray
    added: int
    removed: int
    plus: np.ndarray | None
    minus: np.ndarray | None
    plus_update: np.ndarray | None
    minus_update: np.ndarray | None
    valid: np.ndarray
    reasons: list[str]
    updates: Updates
    columns: list[str]

    def __len__(self) -> int:
        return int(self.plus_counts.shape[0])

    @property
    def net(self) -> int:
        """``added - removed``: the change of the live count over the batch."""
        return self.added - self.removed

    @classmethod
    def _counts(cls, plus_counts: np.ndarray, minus_counts: np.ndarray, added: int,
               removed: int, valid: np.ndarray, reasons: list[str] | None, updates: Updates,
               columns: list[str]) -> "StreamDelta":
        """A ``counts_only`` delta (no rows), without the frozen dataclass's
        ``__init__`` (one ``object.__setattr__`` a field: about twice the time of this,
        paid by every batch of a fused run). ``reasons=None``: every update is valid, and
        the list of empty strings is made when it is first read (a list of 4,096 made
        and freed: 3.4 µs, more than the rest of the delta)."""
        new = object.__new__(cls)
        d = new.__dict__
        d.update(plus_counts=plus_counts, minus_counts=minus_counts, added=added,
                 removed=removed, plus=None, minus=None, plus_update=None,
                 minus_update=None, valid=valid, updates=updates, columns=columns)
        if reasons is not None:
            d["reasons"] = reasons
        return new

    def __getattr__(self, name: str) -> Any:
        # only for an attribute not set: a _counts() delta's reasons, all "", made now
        if name == "reasons" and "plus_counts" in self.__dict__:
            out = [""] * len(self)
            self.__dict__["reasons"] = out
            return out
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        skipped = int(np.count_nonzero(~self.valid))
        return (f"<StreamDelta: {len(self)} updates ({skipped} skipped), +{self.added:,} "
                f"-{self.removed:,}{'' if self.plus is not None else ', counts only'}>")
