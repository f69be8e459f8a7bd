"""The data that flows through continuous matching, as flat arrays.

This module is the seam of :mod:`warpmatch.stream` the way
:class:`~warpmatch.plan.plan.Plan` is the seam of static matching: readers
produce :class:`Updates`; :class:`~warpmatch.stream.dynamic.DynamicGraph`
turns them into an :class:`InternalBatch` and a :class:`BatchView`;
:mod:`warpmatch.stream.delta` compiles a query into :class:`DeltaPlans`; a
delta engine (CPU or GPU) takes a view and the plans and returns a
:class:`RawDelta`.

Semantics (DESIGN.md, "Continuous matching")
--------------------------------------------
A batch of ``B`` updates is applied in arrival order. State ``S_0`` is the
graph before the batch, and update ``i`` (0-based) turns ``S_i`` into
``S_{i+1}``. The delta of update ``i`` on edge ``e = (u, v)``:

- insertion: ``+`` every embedding of ``S_{i+1}`` that uses ``e``; with
  ``induced=True`` also ``-`` every embedding of ``S_i`` in which ``u`` and ``v``
  are the images of a *non-adjacent* query pair (the new edge breaks it);
- deletion: ``-`` every embedding of ``S_i`` that uses ``e``; with
  ``induced=True`` also ``+`` every embedding of ``S_{i+1}`` in which ``u``, ``v``
  are the images of a non-adjacent query pair.

So ``plus_i - minus_i = count(S_{i+1}) - count(S_i)`` exactly, and results do
not depend on how a stream is cut into batches. GCSM (§II-B, formula (1))
avoids reporting a match twice within a batch by matching query edges before
the delta edge in the new graph ``N'`` and after it in the old graph ``N``;
we generalise ``N``/``N'`` to one timestamp per adjacency entry, so that every
update of a batch sees exactly its own state ``S_i``/``S_{i+1}`` while all
updates of the batch are still matched in parallel.

Multi-version adjacency
-----------------------
Every adjacency entry in a :class:`BatchView` overlay row carries ``ins`` and
``dl`` (deletion) times: the entry exists in state ``S_p`` iff
``ins < p <= dl``. Entries present before the batch have ``ins = -1``; entries
not deleted in the batch have ``dl = NEVER``. An edge inserted by update ``a``
has ``ins = a`` (it exists from ``S_{a+1}``); deleted by update ``b`` it has
``dl = b`` (it exists up to ``S_b``). An edge inserted and deleted several
times within one batch has one entry per lifetime.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

#: ``dl`` of an adjacency entry that survives the batch
NEVER = np.int32(2**31 - 1)
#: ``ins`` of an adjacency entry present before the batch
BEFORE = np.int32(-1)

INSERT = np.int8(1)
DELETE = np.int8(-1)


#: the per-update fields of :class:`Updates` that may be ``None``
_OPTIONAL = ("label", "time", "line", "index")


@dataclass(frozen=True, eq=False)
class Updates:
    """A sequence of edge updates in the graph file's id space (external ids).

    Attributes
    ----------
    src, dst : numpy.ndarray
        int64 endpoint ids as in the graph's source file (for directed graphs,
        the edge is ``src -> dst``).
    op : numpy.ndarray
        int8, ``+1`` insert, ``-1`` delete.
    label : numpy.ndarray or None
        int32 edge label per update, or ``None`` (label 0, i.e. unlabeled).
    time : numpy.ndarray or None
        Timestamps as read (int64 or float64), carried to the output only.
    line : numpy.ndarray or None
        int64 1-based source line of each update, for error messages.
    source : str
        Where the updates came from (file name, ``"<stdin>"``, ``"<array>"``).
    new_vertex_ids, new_vertex_labels : numpy.ndarray
        External ids declared as new vertices and their labels (int64,
        int32), however they were given (see
        :func:`~warpmatch.stream.updates.as_updates`). They hold for every
        update of the stream (a declared vertex is created, with its label,
        by the first valid update that names it). A labeled graph needs a
        label for every vertex an update introduces; unlabeled graphs create
        vertices implicitly.
    """

    src: np.ndarray
    dst: np.ndarray
    op: np.ndarray
    label: np.ndarray | None = None
    time: np.ndarray | None = None
    line: np.ndarray | None = None
    source: str = "<array>"
    new_vertex_ids: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    new_vertex_labels: np.ndarray = field(default_factory=lambda: np.empty(0, np.int32))
    index: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.src.shape[0])

    def slice(self, start: int, stop: int) -> "Updates":
        """Updates ``start:stop`` (a batch); vertex declarations are kept whole."""
        # the fields copied and the arrays cut, not the dataclass's __init__ (one
        # object.__setattr__ a field): a stream's batches are cut by the thousand, and
        # the sequential path's whole batch costs tens of µs (2.1 µs against 4.6, 2-core box)
        new = object.__new__(Updates)
        d = new.__dict__
        d.update(self.__dict__)
        s = slice(start, stop)
        d["src"] = self.src[s]
        d["dst"] = self.dst[s]
        d["op"] = self.op[s]
        for name in _OPTIONAL:
            a = d[name]
            if a is not None:
                d[name] = a[s]
        return new

    def take(self, index: np.ndarray) -> "Updates":
        """The updates at positions ``index`` (ascending), in order; declarations kept whole.

        Messages about them still name their positions here (:attr:`index`).
        """
        index = np.asarray(index, dtype=np.int64)

        def cut(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[index]
        return Updates(self.src[index], self.dst[index], self.op[index], cut(self.label),
                       cut(self.time), cut(self.line), self.source, self.new_vertex_ids,
                       self.new_vertex_labels, index if self.index is None else self.index[index])

    def position(self, i: int) -> int:
        """Where update ``i`` stands in the batch it was taken from (:attr:`index`)."""
        return i if self.index is None else int(self.index[i])

    def where(self, i: int) -> str:
        """``source:line`` (or ``source, update i``) of update ``i``, for messages."""
        if self.line is not None:
            return f"{self.source}:{int(self.line[i])}"
        return f"{self.source}, update {self.position(i)}"


@dataclass(frozen=True, eq=False)
class InternalBatch:
    """A batch of updates mapped to internal vertex ids and validated in order.

    Attributes
    ----------
    src, dst : numpy.ndarray
        int32 internal ids (``< n_after``).
    op : numpy.ndarray
        int8 ``+1`` / ``-1``.
    elabel : numpy.ndarray
        int32 edge label (0 where the stream has none).
    valid : numpy.ndarray
        bool; ``False`` for updates that were skipped (insert of an existing
        edge, delete of a missing one, self-loop) under ``on_invalid="skip"``.
        Invalid updates change nothing and have empty deltas.
    reason : list of str
        One message per invalid update (empty string for valid ones).
    n_before, n_after : int
        Vertex count before the batch and after its new vertices are added.
    new_vertex_labels : numpy.ndarray
        int32 labels of vertices ``n_before..n_after-1`` (empty for unlabeled graphs).
    applied : numpy.ndarray or None
        bool: the updates the batch applies, where ``valid`` was narrowed to the
        updates an engine searches (``ContinuousMatcher.apply_share``); ``None``:
        ``valid`` (see :attr:`edits`).
    """

    src: np.ndarray
    dst: np.ndarray
    op: np.ndarray
    elabel: np.ndarray
    valid: np.ndarray
    reason: list[str]
    n_before: int
    n_after: int
    new_vertex_labels: np.ndarray
    applied: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.src.shape[0])

    @property
    def edits(self) -> np.ndarray:
        """bool: the updates whose edits the batch applies (its overlay holds them)."""
        return self.valid if self.applied is None else self.applied


@dataclass(frozen=True, eq=False)
class BatchView:
    """All states ``S_0..S_B`` of one batch at once (see the module docstring).

    Adjacency of vertex ``x`` in state ``S_p``: if ``o_idx[x] < 0`` (``x`` is not
    touched by the batch) it is the storage row ``b_nbr[b_start[x] :
    b_start[x] + b_deg[x]]`` (sorted, labels in ``b_elab``), the same in every
    state. Otherwise it is overlay row ``r = o_idx[x]``: the entries
    ``o_off[r] : o_off[r+1]`` of ``o_nbr``/``o_elab``/``o_ins``/``o_dl`` that
    satisfy ``o_ins < p <= o_dl``; the row is sorted by ``(nbr, ins)`` and holds
    every version (present before, inserted, deleted) of the vertex's entries.

    For directed graphs the ``bi_*``/``oi_*`` arrays are the in-adjacency
    (entry ``w`` in the in-row of ``x`` means edge ``w -> x``); for undirected
    graphs they are the same objects as the out-arrays.

    ``b_elab``/``o_elab`` have length 0 when the graph has no edge labels
    (every edge label is then 0). ``vlabel`` has length 0 when the graph has
    no vertex labels, else one label per vertex (``n`` = vertices after the batch).

    The storage arrays are the live arrays of the
    :class:`~warpmatch.stream.dynamic.DynamicGraph` (state ``S_0``; no copy):
    a view is valid only until the batch is applied.
    """

    n: int
    directed: bool
    vlabel: np.ndarray
    b_start: np.ndarray   # int64[n]
    b_deg: np.ndarray     # int32[n]
    b_nbr: np.ndarray     # int32[*]
    b_elab: np.ndarray    # int32[*] or length 0
    bi_start: np.ndarray
    bi_deg: np.ndarray
    bi_nbr: np.ndarray
    bi_elab: np.ndarray
    o_idx: np.ndarray     # int32[n], -1 = untouched
    o_off: np.ndarray     # int64[rows+1]
    o_nbr: np.ndarray     # int32[*]
    o_elab: np.ndarray    # int32[*] or length 0
    o_ins: np.ndarray     # int32[*]
    o_dl: np.ndarray      # int32[*]
    oi_idx: np.ndarray
    oi_off: np.ndarray
    oi_nbr: np.ndarray
    oi_elab: np.ndarray
    oi_ins: np.ndarray
    oi_dl: np.ndarray
    batch: InternalBatch
    #: the vertices with an overlay row, ascending (``o_idx[o_rows[r]] == r``), per
    #: direction (the same array as ``o_rows`` for an undirected graph)
    o_rows: np.ndarray
    oi_rows: np.ndarray

    @property
    def num_updates(self) -> int:
        return len(self.batch)


@dataclass(frozen=True, eq=False)
class DeltaPlans:
    """A query compiled into incremental join plans (:mod:`warpmatch.stream.delta`).

    Plan ``j`` enumerates the embeddings in which the update's endpoints are
    the images of query vertices ``order[j, 0]`` (the update's ``src``) and
    ``order[j, 1]`` (its ``dst``), then extends depth by depth exactly as the
    static :class:`~warpmatch.plan.plan.Plan` contract says (rules 1, 4, 5, 6, 7;
    no degree or candidate-set rules, since the graph changes), with every
    adjacency test and every neighbour list taken in the task's state
    ``S_p`` (module docstring).

    ``pair_kind[j] == 1``: ``order[j,0] -> order[j,1]`` is a query edge; the
    update edge is its image and must carry label ``pair_elabel[j]`` (-1 any).
    ``pair_kind[j] == 0`` (only when ``induced``): the pair is not adjacent in
    that direction; these plans find the embeddings an insertion breaks or a
    deletion creates. Depths 0 and 1 are given (checked: vertex labels,
    restrictions between them); depth ``i >= 2`` has at least one backward edge.

    The per-depth arrays are ``[P, k]``/``[P, k+1]``; the ``*_ptr`` values are
    global positions into the flat ``bn_*``/``na_*``/``res_*`` arrays.

    Counting group: depths ``group_start[j] .. k-1`` are pairwise non-adjacent
    and have backward edges only into depths ``< group_start[j]``. A counting
    engine may count their injective assignments from candidate-set sizes
    instead of enumerating them: ``gcomp[j, d]`` numbers the sets of group
    depths whose candidates may coincide (same or wildcard label; ``-1`` outside
    the group) and ``gtwin[j, d] == 1`` marks a set whose members have identical
    candidates (a falling factorial). An engine may also enumerate the group:
    the raw count is the same.

    Counts: plan ``j``'s raw count times ``weight[j]``, summed over the plans of
    an update, divided by ``divisor`` (exact), is the update's count in the
    plans' mode. :attr:`listable` plans (``purpose`` "list" or "orbits") have
    weight 1, divisor 1 and no group: each raw match is one row (for
    "orbits", one per orbit of embeddings under Aut(Q), ``aut_size`` of them).
    """

    k: int
    order: np.ndarray       # int32[P, k]
    vlabel: np.ndarray      # int32[P, k]
    bn_ptr: np.ndarray      # int32[P, k+1]
    bn_pos: np.ndarray      # int32[*]
    bn_dir: np.ndarray      # int8[*]  0: c in N_out(M[j]); 1: c in N_in(M[j])
    bn_elabel: np.ndarray   # int32[*]
    na_ptr: np.ndarray      # int32[P, k+1]
    na_pos: np.ndarray      # int32[*]
    na_dir: np.ndarray      # int8[*]
    res_ptr: np.ndarray     # int32[P, k+1]
    res_pos: np.ndarray     # int32[*]
    res_sign: np.ndarray    # int8[*]
    pair_kind: np.ndarray   # int8[P]
    pair_elabel: np.ndarray  # int32[P]
    weight: np.ndarray      # int64[P]
    divisor: int
    group_start: np.ndarray  # int32[P]
    gcomp: np.ndarray       # int32[P, k]
    gtwin: np.ndarray       # int8[P, k]
    mode: str
    induced: bool
    directed: bool
    purpose: str = "count"
    aut_size: int = 1
    query: object = None

    @property
    def num_plans(self) -> int:
        return int(self.order.shape[0])

    @property
    def uniform_weight(self) -> int | None:
        """The one weight of every plan when there is no divisor and no counting
        group (so raw counts may be summed before weighting), else ``None``."""
        if self.divisor != 1 or not bool(np.all(self.group_start == self.k)):
            return None
        w = np.unique(self.weight)
        return int(w[0]) if w.size == 1 else None

    @property
    def listable(self) -> bool:
        """Each raw match is one result row (weight 1, divisor 1, no counting group)."""
        return (self.divisor == 1 and bool(np.all(self.weight == 1))
                and bool(np.all(self.group_start == self.k)))


@dataclass(frozen=True, eq=False)
class RawDelta:
    """What a delta engine returns for one batch (internal ids).

    ``plus_counts[i]``/``minus_counts[i]`` are update ``i``'s delta sizes in the
    plans' mode (weights and divisor applied). When matches were requested,
    ``matches`` holds one row per match in *query-vertex order*,
    ``match_update`` the update it belongs to and ``match_sign`` ``+1``/``-1``;
    rows are sorted by update (stable). Otherwise the three are ``None``.
    """

    plus_counts: np.ndarray    # int64[B]
    minus_counts: np.ndarray   # int64[B]
    matches: np.ndarray | None = None       # int32[R, k]
    match_update: np.ndarray | None = None  # int64[R]
    match_sign: np.ndarray | None = None    # int8[R]


class DeltaEngine(Protocol):
    """What the CPU and GPU incremental engines implement.

    The :class:`~warpmatch.stream.matcher.ContinuousMatcher` calls
    :meth:`attach` once, then per batch :meth:`run` on the view of the batch
    (state ``S_0`` storage plus overlay) before it applies the batch to the
    dynamic graph.
    """

    name: str

    def available(self) -> tuple[bool, str]:
        """``(True, "")`` or ``(False, why not)``."""
        ...

    def attach(self, graph: Any) -> None:
        """Bind to a :class:`~warpmatch.stream.dynamic.DynamicGraph` (its storage
        arrays may be replaced later; check ``graph.storage_version``)."""
        ...

    def run(self, view: BatchView, plans: DeltaPlans, want_matches: bool) -> RawDelta:
        """Per-update deltas of one batch."""
        ...
