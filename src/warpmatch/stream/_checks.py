"""The input side of :class:`~warpmatch.stream.dynamic.DynamicGraph`: messages and declarations.

What is where
-------------
- :data:`REASONS`, :func:`skip_reason` — why an update is invalid (self-loop, insert of
  an existing edge, delete of a missing one), the text both CPU paths report;
- :func:`update_text`, :func:`fail` — an update as the user wrote it, and the
  :class:`~warpmatch.errors.InputFormatError` naming its source and line;
- :class:`Declarations` — a batch's new-vertex declarations, checked once per
  declaration array (every batch of a stream carries the same arrays) against each
  other and the graph's labels, and looked up for the vertices a batch creates.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import InputFormatError
from ..graph.csr import INT32_MAX
from . import _dyn_kernels as K
from .types import Updates

__all__ = ["REASONS", "skip_reason", "update_text", "fail", "Declarations"]

REASONS = {
    K.SELF_LOOP: "self-loop",
    K.EXISTS: "insert of an existing edge",
    K.MISSING: "delete of a missing edge",
}


def update_text(updates: Updates, i: int) -> str:
    """Update ``i`` as ``"u v +[ label]"`` (external ids)."""
    text = f"{int(updates.src[i])} {int(updates.dst[i])} {'+' if updates.op[i] > 0 else '-'}"
    if updates.label is not None:
        text += f" {updates.label[i]}"
    return text


def skip_reason(code: int, updates: Updates, i: int) -> str:
    """What ``on_invalid="skip"`` reports for update ``i`` with validation ``code``."""
    return f"{REASONS[int(code)]}: {update_text(updates, i)!r}"


def fail(updates: Updates, i: int, reason: str) -> None:
    """Raise the :class:`InputFormatError` of update ``i`` (its line when known)."""
    line = None if updates.line is None else int(updates.line[i])
    msg = reason if line is not None else f"update {updates.position(i)}: {reason}"
    raise InputFormatError(updates.source, line, msg, update_text(updates, i))


class Declarations:
    """A graph's view of new-vertex declarations, with a one-entry cache by identity.

    Parameters
    ----------
    lookup : callable
        External ids -> internal ids (``-1`` for unknown ones).
    labels : callable
        Returns the graph's current vertex labels (internal ids).
    """

    def __init__(self, lookup: Callable[[np.ndarray], np.ndarray],
                 labels: Callable[[], np.ndarray]) -> None:
        self._lookup = lookup
        self._labels = labels
        self._cache: tuple[Any, Any, np.ndarray, np.ndarray] | None = None

    def check(self, updates: Updates) -> tuple[np.ndarray, np.ndarray]:
        """Sorted declared ids and their labels, checked once per declaration array.

        ``Updates.slice`` keeps declarations whole, so every batch of a stream
        carries the same arrays: the result is cached by identity.

        Raises
        ------
        InputFormatError
            Ids and labels differ in number, a label is negative or too large,
            an id is declared twice with two labels, or a known vertex is
            declared with another label than it has.
        """
        ids_obj, lab_obj = updates.new_vertex_ids, updates.new_vertex_labels
        c = self._cache
        if c is not None and c[0] is ids_obj and c[1] is lab_obj:
            return c[2], c[3]
        ids = np.asarray(ids_obj, dtype=np.int64).ravel()
        labs = np.asarray(lab_obj).astype(np.int64).ravel()
        if ids.size != labs.size:
            raise InputFormatError(updates.source, None,
                                   f"{ids.size} new vertex ids but {labs.size} labels")
        if labs.size and (labs.min() < 0 or labs.max() > INT32_MAX):
            raise InputFormatError(updates.source, None,
                                   "a declared vertex label is negative or too large")
        order = np.argsort(ids, kind="stable")
        ids, labs = ids[order], labs[order].astype(np.int32)
        same = np.flatnonzero(ids[1:] == ids[:-1])
        if same.size:
            conflict = same[labs[same] != labs[same + 1]]
            if conflict.size:
                j = int(conflict[0])
                raise InputFormatError(updates.source, None,
                                       f"vertex {ids[j]} declared twice with labels "
                                       f"{labs[j]} and {labs[j + 1]}")
            keep = np.ones(ids.size, bool)
            keep[same + 1] = False
            ids, labs = ids[keep], labs[keep]
        # a declaration of an existing vertex must agree with its label
        known = self._lookup(ids)
        hit = known >= 0
        if np.any(hit):
            have = self._labels()[known[hit]]
            wrong = np.flatnonzero(have != labs[hit])
            if wrong.size:
                j = int(wrong[0])
                raise InputFormatError(updates.source, None,
                                       f"vertex {ids[hit][j]} is declared with label "
                                       f"{labs[hit][j]} but has label {have[j]}")
        self._cache = (ids_obj, lab_obj, ids, labs)
        return ids, labs

    def labels_of(self, updates: Updates,
                  new_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Labels of the new vertices ``new_ids`` from the batch's declarations.

        Returns ``(labels, declared)``: ``declared[i]`` is False (and
        ``labels[i]`` meaningless) for a vertex without a declaration.
        """
        decl_ids, decl_labels = self.check(updates)
        if not decl_ids.size:
            return np.zeros(new_ids.size, np.int32), np.zeros(new_ids.size, bool)
        pos = np.minimum(np.searchsorted(decl_ids, new_ids), decl_ids.size - 1)
        return decl_labels[pos], decl_ids[pos] == new_ids
