"""``keep="relevant"``: a continuous matcher that keeps only the edges its query can read.

Map: :func:`kept_updates` (numba: which updates of a batch can matter) <
:class:`KeepRelevant` (the label table, the per-vertex label index, and
:meth:`~KeepRelevant.apply_batch`: the batch's kept updates through the batch
path, the deltas spread back over the whole batch). The sequential CPU path
(:mod:`warpmatch.stream.sequential`) drops them in its own kernel instead
(``trust``), with no second pass over the batch.

RapidFlow (Sun et al., VLDB 2022, §4.1) keeps, per label triple of the query,
only the data edges the query can map an edge onto, and never looks at the
other updates of the stream: it neither stores nor validates them. A
:class:`~warpmatch.stream.matcher.ContinuousMatcher` keeps the whole graph by
default (``keep="all"``), so that :attr:`graph` is the user's graph and every
update is validated against it (``on_invalid``). With ``keep="relevant"`` it
keeps the query's relevant subgraph (:mod:`warpmatch.stream.relevant`: the edges
whose endpoint labels some query edge has, or, for an induced query, any two
query labels) as its graph, and an update of any other edge is taken as valid
without a look at the graph and dropped before it reaches an engine: it costs
one label lookup per endpoint (about 10 ns an update), on the CPU and the GPU engine. The
deltas are those of ``keep="all"`` on a valid stream, since no search reads
such an edge.

What differs from RapidFlow and from ``keep="all"``:

- Updates of relevant edges are still validated (and applied, and searched)
  as with ``keep="all"``; self-loops, malformed updates (an op other than
  +1/-1, a bad label) and updates naming an unknown vertex without a
  declaration go that way too, so they are reported as before.
- An irrelevant update is never judged: inserting an edge twice or deleting a
  missing one is not reported (``valid`` is True, the counts 0 and 0).
- :attr:`~warpmatch.stream.matcher.ContinuousMatcher.graph` holds the relevant
  edges only, and a declared new vertex exists there once a kept update names it.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numba import njit

from ._seq_batch import _lookup
from .relevant import label_rows
from .sequential import _c
from .types import Updates

__all__ = ["KeepRelevant", "kept_updates", "KEEP_MODES"]

#: the values of ``ContinuousMatcher(keep=...)``
KEEP_MODES = ("all", "relevant")


@njit(cache=True, nogil=True, inline="always")
def _row_of(e, identity, n, base_ext, base_int, extra_ext, extra_int, decl_ext, decl_idx,
            lab_idx):
    """``table`` row of external vertex ``e``'s label; -2 for a label no query vertex has,
    -1 for a vertex neither known nor declared."""
    if identity:
        v = e if 0 <= e < n else np.int64(-1)
    else:
        v = _lookup(base_ext, base_int, e)
        if v < 0:
            v = _lookup(extra_ext, extra_int, e)
    if v >= 0:
        return lab_idx[v]
    return _lookup(decl_ext, decl_idx, e)


@njit(cache=True, nogil=True, inline="always")
def _kept(o, a, b, x, labels_ok, la, lb, pair):
    """Whether an update goes on: unusual (op ``o`` not +1/-1, a self-loop ``a == b``,
    a bad edge label ``x``, an endpoint not found: row -1) or of an edge a search can
    read (``pair``: the table's entry for rows ``la``, ``lb``). Scalars only: array
    arguments would cost reference counting at every update."""
    odd = (o != 1) & (o != -1) | (a == b)
    odd |= (x < 0) | (x > 2147483647) | ((x != 0) & (not labels_ok))
    return odd | (la == -1) | (lb == -1) | ((la >= 0) & (lb >= 0) & pair)


@njit(cache=True, nogil=True)
def kept_updates(src, dst, op, lab, has_lab, labels_ok, identity, n, base_ext, base_int,
                 extra_ext, extra_int, decl_ext, decl_idx, lab_idx, table, out):
    """Positions of the updates that go to the engine, in order, in ``out``; their number.

    ``lab_idx[v]`` is the row of internal vertex ``v``'s label in ``table`` (-2:
    a label no query vertex has), ``decl_idx`` the same for the declared new
    vertices ``decl_ext`` (sorted external ids). An update is dropped when both
    endpoints are known (or declared), distinct, and ``table`` says no search can
    read an edge between their labels; anything unusual is kept, for the
    matcher to validate and report. Branch-free per update but for the id
    lookups: most updates of a labeled stream are dropped, in no pattern.
    """
    m = 0
    L = table.shape[1]
    flat = table.ravel()
    fast = identity and decl_ext.shape[0] == 0
    for i in range(src.shape[0]):
        a = np.int64(src[i])
        b = np.int64(dst[i])
        if fast:        # (the lookups' code in this loop would make it several times slower)
            la = lab_idx[a] if 0 <= a < n else np.int64(-1)
            lb = lab_idx[b] if 0 <= b < n else np.int64(-1)
        else:
            la = np.int64(-1)
            lb = np.int64(-1)
        x = lab[i] if has_lab else np.int64(0)
        out[m] = i
        m += np.int64(_kept(op[i], a, b, x, labels_ok, la, lb,
                            flat[max(la, 0) * L + max(lb, 0)]))
    if fast:
        return m
    # ids to look up, or declared vertices: the kept ones again, with the lookups
    k = 0
    for t in range(m):
        i = out[t]
        a = np.int64(src[i])
        b = np.int64(dst[i])
        la = _row_of(a, identity, n, base_ext, base_int, extra_ext, extra_int, decl_ext,
                     decl_idx, lab_idx)
        lb = _row_of(b, identity, n, base_ext, base_int, extra_ext, extra_int, decl_ext,
                     decl_idx, lab_idx)
        x = lab[i] if has_lab else np.int64(0)
        out[k] = i
        k += np.int64(_kept(op[i], a, b, x, labels_ok, la, lb,
                            flat[max(la, 0) * L + max(lb, 0)]))
    return k


class KeepRelevant:
    """What a ``keep="relevant"`` matcher drops, and how its deltas are spread back.

    Parameters
    ----------
    labels, table : numpy.ndarray
        From :func:`~warpmatch.stream.relevant.relevant_pairs`.
    """

    def __init__(self, labels: np.ndarray, table: np.ndarray) -> None:
        self.labels = np.asarray(labels, dtype=np.int64)
        self.table = np.ascontiguousarray(table, dtype=np.bool_)
        self._lab_idx = np.zeros(0, np.int64)     # per internal vertex, cached by size
        self._decl: tuple[Any, Any, np.ndarray, np.ndarray] | None = None

    def attach(self, dg: Any) -> None:
        """Index the vertices of the matcher's graph ``dg`` now, not in its first batch."""
        self._vertex_index(dg)

    def _index_of(self, vl: np.ndarray) -> np.ndarray:
        """Row of each label in :attr:`table`, -2 for a label no query vertex has (-1
        means "no such vertex" to :func:`kept_updates`)."""
        return label_rows(self.labels, vl, missing=-2)

    def _vertex_index(self, dg: Any) -> np.ndarray:
        """:meth:`_index_of` every vertex of ``dg`` (vertices are only ever added)."""
        n = int(dg.n)
        have = self._lab_idx.shape[0]
        if have != n:
            vl = np.asarray(dg.vertex_labels)
            self._lab_idx = (np.concatenate([self._lab_idx, self._index_of(vl[have:n])])
                             if have < n else self._index_of(vl[:n]))
        return self._lab_idx

    def _declared(self, dg: Any, ups: Updates) -> tuple[np.ndarray, np.ndarray]:
        """Sorted declared ids and their label rows (checked by the graph; cached)."""
        if not len(ups.new_vertex_ids):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        hit = self._decl
        if hit is not None and hit[0] is ups.new_vertex_ids and hit[1] is ups.new_vertex_labels:
            return hit[2], hit[3]
        ids, labs = dg.declarations.check(ups)
        out = (_c(ids, np.int64), self._index_of(labs))
        self._decl = (ups.new_vertex_ids, ups.new_vertex_labels, *out)
        return out

    def kept(self, dg: Any, ups: Updates) -> np.ndarray | None:
        """Positions of ``ups`` that go to the engine, or ``None`` for all of them."""
        B = len(ups)
        lab_idx = self._vertex_index(dg)
        decl_ext, decl_idx = self._declared(dg, ups)
        ids = dg._ids
        has_lab = ups.label is not None
        out = np.empty(B, np.int64)
        op = ups.op if ups.op.dtype == np.int8 else _c(ups.op, np.int64)
        m = kept_updates(_c(ups.src, np.int64), _c(ups.dst, np.int64), _c(op, op.dtype),
                         _c(ups.label, np.int64) if has_lab else np.zeros(0, np.int64),
                         has_lab, dg.has_edge_labels, ids.identity, dg.n, ids.base_ext,
                         ids.base_int, ids.extra_ext, ids.extra_int, decl_ext, decl_idx,
                         lab_idx, self.table, out)
        return None if m == B else out[:m]

    @staticmethod
    def _count(cm: Any, dropped: int, account: bool) -> None:
        if account:
            cm.updates_applied += dropped

    def apply_batch(self, cm: Any, ups: Updates, counts_only: bool, account: bool,
                    search: np.ndarray | None) -> Any:
        """The batch path (``cm._apply_batch``) on the kept updates of ``ups``; the deltas
        of the whole batch.

        The dropped updates get 0 and 0, no rows, ``valid`` True, and count in
        ``cm.updates_applied`` (with ``account``, as the kept ones do). The
        sequential path drops them itself, in its kernel (``trust``).
        """
        index = self.kept(cm._dg, ups)
        if index is None:
            return cm._apply_batch(ups, counts_only, account, search)
        B = len(ups)
        m = int(index.size)
        plus_c = np.zeros(B, np.int64)
        minus_c = np.zeros(B, np.int64)
        valid = np.ones(B, bool)
        reasons = [""] * B
        if m == 0:                  # nothing for the engine (no call at all)
            self._count(cm, B, account)
            from .matcher import StreamDelta
            names = list(cm.query.names)
            rows = upd = None
            if not counts_only:
                rows, upd = np.zeros((0, len(names)), np.int64), np.zeros(0, np.int64)
            return StreamDelta(plus_c, minus_c, 0, 0, rows, rows, upd, upd, valid, reasons,
                               ups, names)
        d = cm._apply_batch(ups.take(index), counts_only, account,
                            None if search is None else search[index])
        self._count(cm, B - m, account)     # (after: an invalid kept update raises)
        plus_c[index] = d.plus_counts
        minus_c[index] = d.minus_counts
        sub_valid = np.asarray(d.valid, dtype=bool)
        valid[index] = sub_valid
        if not sub_valid.all():
            for j in np.flatnonzero(~sub_valid).tolist():
                reasons[int(index[j])] = d.reasons[j]
        spread = {}
        if d.plus_update is not None:
            spread = {"plus_update": index[d.plus_update], "minus_update": index[d.minus_update]}
        return dataclasses.replace(d, plus_counts=plus_c, minus_counts=minus_c, valid=valid,
                                   reasons=reasons, updates=ups, **spread)
