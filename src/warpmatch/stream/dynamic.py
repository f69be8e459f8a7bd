"""The mutable data graph of continuous matching, and per-batch multi-version views.

Storage follows GCSM (Wei & Jiang, "GPU-accelerated continuous subgraph
matching on large graphs", §V-A "graph update"): one array per direction
holds every neighbour list, each list preallocated with slack so that
insertions rarely move it; a list that outgrows its capacity is moved to the
end of the array with doubled capacity, and new vertices are appended.
What we change, and why:

- **Rows stay sorted at all times.** GCSM appends new neighbours to the end of
  a list and marks deleted ones negative, then re-sorts after the batch has
  been matched. Here the storage is the state ``S_0`` before the batch, never
  modified while the engines run; the per-batch changes live in an *overlay*
  (:meth:`DynamicGraph.view`) whose entries carry insertion and deletion
  timestamps, so every update of the batch reads its exact state ``S_i`` /
  ``S_{i+1}`` (see :mod:`warpmatch.stream.types`). :meth:`DynamicGraph.apply`
  then merges each touched row with its sorted events in one linear pass (in
  place within the slack, or into a relocated region).
- **Compaction.** Relocation leaves holes and deletions leave free slots;
  when the used part of an edge array is more than twice what a fresh build
  would take (``entries * (1 + slack)``, i.e. more than half of it is
  wasted), the store is rebuilt compactly (new arrays, ``storage_version``
  incremented). Measuring waste against the fresh size rather than the
  number of entries keeps a large ``slack`` from compacting on every batch.
  Arrays grow geometrically, always through the caller's ``allocator`` (the
  GPU engine passes pinned, mapped memory so the device reads the
  host-resident graph by zero-copy).
- **Validation in arrival order.** :meth:`DynamicGraph.prepare` checks every
  update against the storage and the earlier updates of its batch (insert of
  an existing edge, delete of a missing edge, self-loop), grouped by edge
  with one sort and a numba pass, so a 4096-update batch costs microseconds
  per update, not a Python loop. The messages and the new-vertex
  declarations' checks live in :mod:`._checks`; the stores in :mod:`._store`,
  the id map in :mod:`._idmap`.

Ids: updates use the graph file's id space (external ids). Known ids map
through the graph's ``ids`` (or the identity when it has none); an unknown id
becomes a new vertex numbered ``n, n+1, ...`` in order of first appearance
among the batch's *valid* updates. Vertex-labeled graphs need a declaration
(``Updates.new_vertex_ids`` / ``new_vertex_labels``) for every new vertex;
unlabeled graphs create vertices implicitly and ignore declarations. A vertex
that only invalid (skipped) updates mention is not created; those updates get
internal id ``-1`` for it.

Edge labels: an update's label (``0`` when the stream has none) is the label
of the inserted edge. A graph without edge labels accepts only label ``0``.
A deletion names an edge by its endpoints only: its label is not compared
with the stored edge's label (labels identify nothing, since there are no
multi-edges), and the overlay's deleted entry keeps the stored label.

Examples
--------
>>> import numpy as np
>>> from warpmatch.graph.csr import Graph
>>> from warpmatch.stream.types import Updates
>>> dg = DynamicGraph(Graph.from_edges([0, 1], [1, 2]))
>>> b = dg.prepare(Updates(np.array([2, 0]), np.array([3, 1]), np.array([1, -1], np.int8)))
>>> dg.apply(b)
>>> dg.n, dg.num_edges, dg.neighbors(2).tolist()
(4, 2, [1, 3])
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import GraphError
from ..graph.csr import INT32_MAX, Graph
from . import _dyn_kernels as K
from ._checks import REASONS, Declarations, fail, skip_reason
from ._editlog import EditLog
from ._idmap import _IdMap
from ._store import (_I32, MIN_ROW_CAP, Allocator, _alloc, _Events, _parallel, _Store,
                     _threads)
from .types import BatchView, InternalBatch, Updates

#: compact when more than this fraction of the used part of an edge array is wasted
_MAX_WASTE = 0.5


@dataclass
class _Pending:
    """What :meth:`DynamicGraph.prepare` remembers about a batch until it is applied."""

    state: int                  # DynamicGraph._state when prepared
    new_ext: np.ndarray         # external ids of vertices n_before..n_after-1
    events: list[_Events] | None = None


# ============================================================== DynamicGraph
class DynamicGraph:
    """A data graph that changes by batches of edge insertions and deletions.

    Parameters
    ----------
    graph : Graph
        The initial graph ``G_0`` (its ids, labels and directedness are kept).
    slack : float, optional
        Free slots per row as a fraction of its degree (rounded up) when the
        store is (re)built. The default is ``0.25``.
    allocator : callable, optional
        ``allocator(count, dtype) -> numpy.ndarray`` for every storage array
        (vertex arrays, neighbour and label arrays, vertex labels). The default
        is :func:`numpy.empty`; the GPU engine passes a pinned-memory allocator.

    Attributes
    ----------
    n : int
        Current number of vertices.
    directed : bool
    has_edge_labels : bool
    storage_version : int
        Incremented whenever a storage array object is replaced (growth or
        compaction); consumers that registered or cached the arrays re-read them.
    edits : EditLog
        The rows edited since a consumer's mark (:mod:`._editlog`): consumers
        that copied rows elsewhere refresh just those.
    num_edges : int
        Current number of edges (undirected edges once).
    labeled : bool
        True if the graph has vertex labels (see :attr:`vertex_labels`).
    slack : float
        The slack fraction used when rows are (re)built.

    Notes
    -----
    The storage arrays (live, full capacity, rows ``>= n`` empty) are exposed
    as ``b_start``, ``b_deg``, ``b_cap``, ``b_nbr``, ``b_elab`` (out-rows) and
    ``bi_*`` (in-rows; the same objects for undirected graphs).

    A batch goes ``prepare -> view -> (engines run) -> apply``. A
    :class:`~warpmatch.stream.types.BatchView` is valid until the next
    :meth:`view` or :meth:`apply` call (its ``o_idx`` is a reused buffer).
    """

    def __init__(self, graph: Graph, slack: float = 0.25,
                 allocator: Allocator = np.empty) -> None:
        if not isinstance(graph, Graph):
            raise TypeError(f"DynamicGraph needs a warpmatch Graph, got {type(graph).__name__}")
        if not (slack >= 0 and math.isfinite(slack)):
            raise ValueError(f"slack must be a non-negative number, got {slack!r}")
        if graph.n > INT32_MAX:
            raise GraphError(f"{graph.name}: {graph.n} vertices do not fit int32 ids")
        self.name = graph.name
        self.directed = bool(graph.directed)
        self.has_edge_labels = graph.edge_labels is not None
        self.labeled = graph.vertex_labels is not None
        self.slack = float(slack)
        self.allocator = allocator
        self.n = int(graph.n)
        self.num_edges = int(graph.num_edges)
        self.storage_version = 0
        self._state = 0
        #: rows edited since a consumer's mark (the GPU engine's device copies)
        self.edits = EditLog()
        self._ids = _IdMap(graph.ids, self.n)
        self._pending: "weakref.WeakKeyDictionary[InternalBatch, _Pending]" = \
            weakref.WeakKeyDictionary()
        #: new-vertex declarations, checked against the current ids and labels
        self.declarations = Declarations(lambda ext: self._ids.lookup(ext),
                                         lambda: self._vlab)
        self._empty_i32 = np.zeros(0, np.int32)

        n_cap = self.n + max(16, self.n // 8)
        self._vlab = _alloc(allocator, n_cap if self.labeled else 0, _I32)
        if self.labeled:
            self._vlab[:self.n] = graph.vertex_labels
            self._vlab[self.n:] = 0
        self._out = _Store(allocator, self.has_edge_labels)
        self._out.build_from_csr(graph.indptr, graph.indices, graph.edge_labels, n_cap, slack)
        if self.directed:
            self._in = _Store(allocator, self.has_edge_labels)
            assert graph.in_indptr is not None and graph.in_indices is not None
            self._in.build_from_csr(graph.in_indptr, graph.in_indices, graph.in_edge_labels,
                                    n_cap, slack)
        else:
            self._in = self._out
        self._stores = [self._out, self._in] if self.directed else [self._out]

    # ------------------------------------------------------------ storage
    b_start = property(lambda self: self._out.start, doc="int64[n_cap] out-row starts")
    b_deg = property(lambda self: self._out.deg, doc="int32[n_cap] out-degrees")
    b_cap = property(lambda self: self._out.cap, doc="int64[n_cap] out-row capacities")
    b_nbr = property(lambda self: self._out.nbr, doc="int32 out-neighbours (gapped)")
    b_elab = property(lambda self: self._out.elab, doc="int32 out-edge labels or length 0")
    bi_start = property(lambda self: self._in.start, doc="int64[n_cap] in-row starts")
    bi_deg = property(lambda self: self._in.deg, doc="int32[n_cap] in-degrees")
    bi_cap = property(lambda self: self._in.cap, doc="int64[n_cap] in-row capacities")
    bi_nbr = property(lambda self: self._in.nbr, doc="int32 in-neighbours (gapped)")
    bi_elab = property(lambda self: self._in.elab, doc="int32 in-edge labels or length 0")

    @property
    def vertex_labels(self) -> np.ndarray | None:
        """int32[n] vertex labels (a view of the live array), or ``None``."""
        return self._vlab[:self.n] if self.labeled else None

    @property
    def ids(self) -> np.ndarray | None:
        """int64[n] external id of every vertex, or ``None`` when they are ``0..n-1``."""
        return self._ids.ids_array()

    def storage_arrays(self) -> dict[str, np.ndarray]:
        """Every live storage array by name (``b_*``, ``bi_*``, ``vlabel``), for pinning."""
        out = {f"b_{k}": getattr(self._out, k) for k in ("start", "deg", "cap", "nbr", "elab")}
        out.update({f"bi_{k}": getattr(self._in, k)
                    for k in ("start", "deg", "cap", "nbr", "elab")})
        out["vlabel"] = self._vlab
        return out

    def wasted_fraction(self) -> float:
        """Largest wasted fraction of a store's used edge slots (0 right after a rebuild).

        Waste is measured against a fresh build, ``1 - entries * (1 + slack) / used``:
        holes left by relocated rows and free slots left by deletions.
        """
        return max(self._waste(st) for st in self._stores)

    def _waste(self, st: _Store) -> float:
        if st.used == 0:
            return 0.0
        return max(0.0, 1.0 - st.entries * (1.0 + self.slack) / st.used)

    def _ensure_vertices(self, n_needed: int) -> None:
        n_cap = self._out.start.shape[0]
        if n_needed <= n_cap:
            return
        new_cap = max(n_needed, int(n_cap * 1.5) + 16)
        for st in self._stores:
            st.grow_vertices(new_cap)
        if self.labeled:
            vl = _alloc(self.allocator, new_cap, _I32)
            vl[:n_cap] = self._vlab
            vl[n_cap:] = 0
            self._vlab = vl
        self.storage_version += 1

    def add_vertices(self, labels: np.ndarray | int) -> None:
        """Append isolated vertices ``n, n+1, ...`` to a graph whose ids are ``0..n-1``.

        The state count does not change (no edge does); a batch prepared before
        must be prepared again.

        Parameters
        ----------
        labels : numpy.ndarray or int
            The new vertices' labels (vertex-labeled graphs), or how many
            vertices to add (unlabeled graphs).

        Raises
        ------
        ValueError
            Labels for an unlabeled graph, a count for a labeled one, or a graph
            with ids of its own.
        """
        if not self._ids.identity:
            raise ValueError("add_vertices needs a graph whose ids are 0..n-1")
        if isinstance(labels, (int, np.integer)):
            if self.labeled:
                raise ValueError("a vertex-labeled graph needs the new vertices' labels")
            count, labs = int(labels), None
        else:
            if not self.labeled:
                raise ValueError("the graph has no vertex labels")
            labs = np.asarray(labels, dtype=np.int32).ravel()
            count = int(labs.size)
        if count <= 0:
            return
        n = self.n
        self._ensure_vertices(n + count)
        if labs is not None:
            self._vlab[n:n + count] = labs
        self._ids.add(np.arange(n, n + count, dtype=np.int64))
        self.n = n + count

    # ----------------------------------------------------------------- ids
    def to_internal(self, ext_ids: Any, what: str = "vertex id") -> np.ndarray:
        """Map external ids (the graph file's id space) to internal ids.

        Parameters
        ----------
        ext_ids : array-like of int
        what : str, optional
            How an id is called in the error message. The default is ``"vertex id"``.

        Returns
        -------
        numpy.ndarray
            int64 internal ids, same length as the (flattened) input.

        Raises
        ------
        GraphError
            If an id is not a vertex (the message names it).
        """
        ext = np.asarray(ext_ids, dtype=np.int64).ravel()
        out = self._ids.lookup(ext)
        if np.any(out < 0):
            bad = int(ext[out < 0][0])
            raise GraphError(f"{what} {bad} is not a vertex of {self.name}")
        return out

    def to_external(self, internal: Any, batch: InternalBatch | None = None) -> np.ndarray:
        """Map internal ids (any shape) back to external ids (int64).

        Parameters
        ----------
        internal : array-like of int
            Internal ids ``< n`` (or ``< batch.n_after`` when ``batch`` is given).
        batch : InternalBatch, optional
            A prepared, not yet applied batch: its new vertices
            ``n..batch.n_after-1`` are mapped too (matches found in a view may
            use them before :meth:`apply`). The default is ``None``.

        Raises
        ------
        GraphError
            If an id is out of range.
        """
        internal = np.asarray(internal)
        hi = self.n
        new_ext = None
        if batch is not None and batch.n_after > self.n:
            new_ext = self._pending_of(batch).new_ext
            hi = batch.n_after
        if internal.size and (int(internal.min()) < 0 or int(internal.max()) >= hi):
            raise GraphError(f"internal id out of range 0..{hi - 1}")
        if new_ext is None:
            return self._ids.to_external(internal)
        out = np.empty(internal.shape, np.int64)
        old = internal < self.n
        out[old] = self._ids.to_external(internal[old])
        out[~old] = new_ext[internal[~old] - self.n]
        return out

    # ---------------------------------------------------------- prepare
    def prepare(self, updates: Updates, on_invalid: str = "error") -> InternalBatch:
        """Map a batch of updates to internal ids and validate it in arrival order.

        Parameters
        ----------
        updates : Updates
            The batch, in external ids.
        on_invalid : {"error", "skip"}, optional
            What to do with an update that inserts an existing edge, deletes a
            missing one, or is a self-loop (judged against the graph *and* the
            earlier updates of the batch, so insert-then-delete of one edge is
            fine). ``"error"`` (the default) raises; ``"skip"`` marks it
            invalid (``valid[i] = False``, ``reason[i]`` says why) and it
            changes nothing.

        Returns
        -------
        InternalBatch

        Raises
        ------
        InputFormatError
            ``(updates.source, line, reason, "u v +")`` for the first invalid
            update under ``"error"``, and always for a malformed update: bad
            op, negative new vertex id, a new vertex without declaration in a
            labeled graph (only one that a valid update creates: an invalid
            update, such as the delete of an edge at an unknown vertex, creates
            none), a nonzero or negative edge label the graph cannot hold.
            Whichever comes first in arrival order is reported. Nothing is changed.
        """
        if on_invalid not in ("error", "skip"):
            raise ValueError(f"on_invalid must be 'error' or 'skip', got {on_invalid!r}")
        B = len(updates)
        src = np.asarray(updates.src).astype(np.int64, copy=False).ravel()
        dst = np.asarray(updates.dst).astype(np.int64, copy=False).ravel()
        op = np.asarray(updates.op).ravel()
        if src.shape[0] != B or dst.shape[0] != B or op.shape[0] != B:
            raise ValueError("updates: src, dst and op differ in length")
        bad = np.flatnonzero((op != 1) & (op != -1))
        if bad.size:
            fail(updates, int(bad[0]), f"op must be +1 or -1, got {op[bad[0]]}")
        op = op.astype(np.int8)
        if updates.label is None:
            lab = np.zeros(B, np.int32)
        else:
            lab64 = np.asarray(updates.label).astype(np.int64).ravel()
            bad = np.flatnonzero(lab64 < 0)
            if bad.size:
                fail(updates, int(bad[0]), "negative edge label")
            if not self.has_edge_labels:
                bad = np.flatnonzero(lab64 != 0)
                if bad.size:
                    # without a header a 4th field is a label: often it is a timestamp
                    hint = "" if updates.time is not None else (
                        " (if the 4th field is a timestamp, say so: a '# columns: u v op "
                        "time' header, labels=False, or --no-update-labels)")
                    fail(updates, int(bad[0]),
                               f"edge label {lab64[bad[0]]} but the graph has no edge "
                               f"labels{hint}")
            bad = np.flatnonzero(lab64 > INT32_MAX)
            if bad.size:
                fail(updates, int(bad[0]), "edge label does not fit int32")
            lab = lab64.astype(np.int32)

        if self.labeled and len(updates.new_vertex_ids):
            self.declarations.check(updates)     # checks them even if no vertex is new
        # ---- ids: interleaved (src0, dst0, src1, dst1, ...) = order of appearance
        ext = np.empty(2 * B, np.int64)
        ext[0::2] = src
        ext[1::2] = dst
        internal = self._ids.lookup(ext)
        unknown = np.flatnonzero(internal < 0)
        n0 = self.n
        new_ids = np.zeros(0, np.int64)
        if unknown.size:
            neg = unknown[ext[unknown] < 0]
            if neg.size:
                fail(updates, int(neg[0]) // 2,
                           f"negative vertex id {ext[neg[0]]} (not a vertex of the graph)")
            uniq, first, inv = np.unique(ext[unknown], return_index=True, return_inverse=True)
            # provisional ids n0.. in order of first appearance
            rank = np.empty(uniq.size, np.int64)
            rank[np.argsort(first, kind="stable")] = np.arange(uniq.size)
            internal[unknown] = n0 + rank[inv]
            new_ids = np.empty(uniq.size, np.int64)
            new_ids[rank] = uniq
            if n0 + uniq.size > INT32_MAX:
                raise GraphError(f"{self.name}: too many vertices for int32 ids")

        a = internal[0::2].copy()
        b = internal[1::2].copy()
        # ---- sequential validation, grouped by edge
        if self.directed:
            ka, kb = a, b
        else:
            ka, kb = np.minimum(a, b), np.maximum(a, b)
        key = ka * np.int64(max(n0 + new_ids.size, 1)) + kb
        order = np.argsort(key, kind="stable")
        code = np.zeros(B, np.int8)
        st = self._out
        K.validate_sequential(ka, kb, op, order, st.start, st.deg, st.nbr, code)
        bad = np.flatnonzero(code)
        valid = code == 0

        # ---- new vertices: only those a valid update mentions, renumbered
        new_ext = np.zeros(0, np.int64)
        new_vlab = np.zeros(0, np.int32)
        created = np.zeros(0, np.int64)
        if new_ids.size:
            prov = internal - n0                      # >= 0 for new vertices
            pos = np.arange(2 * B, dtype=np.int64)
            mask = (prov >= 0) & np.repeat(valid, 2)
            firstpos = np.full(new_ids.size, 2 * B, np.int64)
            np.minimum.at(firstpos, prov[mask], pos[mask])
            created = np.flatnonzero(firstpos < 2 * B)
            created = created[np.argsort(firstpos[created], kind="stable")]
        # a labeled graph needs a declaration for every vertex a valid update creates
        # (only those: an update that is skipped, or that fails as invalid, such as
        # the delete of an edge at an unknown vertex, creates nothing); the first
        # problem in arrival order is the one reported
        undeclared = 2 * B                            # position in ext of the first one
        new_labels = np.zeros(0, np.int32)
        if self.labeled and created.size:
            new_labels, declared = self.declarations.labels_of(updates, new_ids[created])
            if not declared.all():
                undeclared = int(firstpos[created][~declared].min())
        if bad.size and on_invalid == "error" and int(bad[0]) < undeclared // 2:
            i = int(bad[0])
            fail(updates, i, REASONS[int(code[i])])
        if undeclared < 2 * B:
            vid = int(ext[undeclared])
            fail(updates, undeclared // 2,
                       f"vertex {vid} is new and the graph is vertex-labeled, but it has no "
                       f"declaration: give its label by a 'v {vid} LABEL' line in an update "
                       f"file, a ('v', {vid}, LABEL) tuple among a list of updates, "
                       f"vertex_id=[{vid}] and vertex_label=[LABEL] in a mapping, or a row "
                       f"with src {vid}, an empty dst and its vertex_label in a table")
        reason = [""] * B
        for i in bad.tolist():
            reason[i] = skip_reason(int(code[i]), updates, i)
        if new_ids.size:                              # the others get -1
            remap = np.full(new_ids.size, -1, np.int64)
            remap[created] = n0 + np.arange(created.size)
            isnew = prov >= 0
            internal[isnew] = remap[prov[isnew]]
            a = internal[0::2].copy()
            b = internal[1::2].copy()
            new_ext = new_ids[created]
            if self.labeled:
                new_vlab = new_labels.astype(np.int32)
        batch = InternalBatch(
            src=a.astype(np.int32), dst=b.astype(np.int32), op=op, elabel=lab,
            valid=valid, reason=reason, n_before=n0, n_after=n0 + int(new_ext.size),
            new_vertex_labels=new_vlab,
        )
        self._pending[batch] = _Pending(self._state, new_ext)
        return batch

    # ------------------------------------------------------------ events
    def _pending_of(self, batch: InternalBatch) -> _Pending:
        p = self._pending.get(batch)
        if p is None:
            raise ValueError("this batch was not prepared by this DynamicGraph")
        if p.state != self._state or batch.n_before != self.n:
            raise ValueError("the graph changed since this batch was prepared; prepare it again")
        return p

    def _events(self, batch: InternalBatch, p: _Pending) -> list[_Events]:
        if p.events is not None:
            return p.events
        v = np.flatnonzero(batch.valid)
        s = batch.src[v].astype(np.int64)
        d = batch.dst[v].astype(np.int64)
        op = batch.op[v]
        lab = batch.elabel[v]
        upd = v.astype(np.int32)
        n = batch.n_after
        if self.directed:
            ev = [_Events.build(s, d, upd, op, lab, n), _Events.build(d, s, upd, op, lab, n)]
        else:
            # interleave both rows of each update so that update order is kept
            rows = np.stack([s, d], axis=1).ravel()
            nbrs = np.stack([d, s], axis=1).ravel()
            two = np.repeat
            ev = [_Events.build(rows, nbrs, two(upd, 2), two(op, 2), two(lab, 2), n)]
        p.events = ev
        return ev

    # ---------------------------------------------------------------- view
    def view(self, batch: InternalBatch) -> BatchView:
        """All states ``S_0..S_B`` of a prepared batch (see :class:`BatchView`).

        Overlay rows exist for every vertex a valid update touches (directed:
        the out-row of ``src`` and the in-row of ``dst``; undirected: both rows
        of both endpoints); each holds every version of the row's entries with
        ``(ins, dl)`` timestamps, sorted by ``(nbr, ins)``. Cost
        ``O(batch + sum of touched degrees)``; the storage arrays are the live
        ones (no copy).

        Parameters
        ----------
        batch : InternalBatch
            From :meth:`prepare` on the current state.

        Returns
        -------
        BatchView
            Valid until the next :meth:`view` or :meth:`apply` call.
        """
        p = self._pending_of(batch)
        n = batch.n_after
        self._ensure_vertices(n)
        if self.labeled:
            self._vlab[batch.n_before:n] = batch.new_vertex_labels
        evs = self._events(batch, p)
        parts = [self._overlay(st, ev, n) for st, ev in zip(self._stores, evs)]
        if not self.directed:
            parts.append(parts[0])
        (o_idx, o_off, o_nbr, o_elab, o_ins, o_dl), \
            (oi_idx, oi_off, oi_nbr, oi_elab, oi_ins, oi_dl) = parts
        out, inn = self._out, self._in
        vl = self._vlab[:n] if self.labeled else self._empty_i32
        b_start, b_deg = out.start[:n], out.deg[:n]
        if self.directed:
            bi_start, bi_deg = inn.start[:n], inn.deg[:n]
        else:
            bi_start, bi_deg = b_start, b_deg
        return BatchView(
            n=n, directed=self.directed, vlabel=vl,
            b_start=b_start, b_deg=b_deg, b_nbr=out.nbr, b_elab=out.elab,
            bi_start=bi_start, bi_deg=bi_deg, bi_nbr=inn.nbr, bi_elab=inn.elab,
            o_idx=o_idx, o_off=o_off, o_nbr=o_nbr, o_elab=o_elab, o_ins=o_ins, o_dl=o_dl,
            oi_idx=oi_idx, oi_off=oi_off, oi_nbr=oi_nbr, oi_elab=oi_elab, oi_ins=oi_ins,
            oi_dl=oi_dl, batch=batch, o_rows=evs[0].rows, oi_rows=evs[-1].rows,
        )

    def _overlay(self, st: _Store, ev: _Events, n: int) -> tuple[np.ndarray, ...]:
        inserts = ev.per_row_sum(ev.op > 0)
        size = st.deg[ev.rows].astype(np.int64) + inserts
        o_off = np.zeros(ev.rows.size + 1, np.int64)
        np.cumsum(size, out=o_off[1:])
        total = int(o_off[-1])
        o_nbr = st.overlay_buffer("nbr", total)
        o_elab = st.overlay_buffer("elab", total) if self.has_edge_labels else self._empty_i32
        o_ins = st.overlay_buffer("ins", total)
        o_dl = st.overlay_buffer("dl", total)
        if ev.rows.size:
            kernel = K.build_overlay if _parallel(total) else K.build_overlay_serial
            kernel(ev.rows, ev.ptr, ev.nbr, ev.upd, ev.op, ev.lab, st.start, st.deg, st.nbr,
                   st.elab, self.has_edge_labels, o_off, o_nbr, o_elab, o_ins, o_dl)
        o_idx = st.oidx(n, ev.rows)
        return o_idx, o_off, o_nbr, o_elab, o_ins, o_dl

    # --------------------------------------------------------------- apply
    def apply(self, batch: InternalBatch) -> None:
        """Make the storage the state after the batch (its valid updates).

        Each touched row is merged with its sorted events in place when it
        fits its capacity, else moved to the end of the array with doubled
        capacity; the store is compacted when holes exceed half of it.

        Parameters
        ----------
        batch : InternalBatch
            From :meth:`prepare` on the current state; views of earlier
            states become invalid.
        """
        p = self._pending_of(batch)
        n = batch.n_after
        self._ensure_vertices(n)
        evs = self._events(batch, p)
        for st, ev in zip(self._stores, evs):
            self._apply_store(st, ev)
        if self.edits.on:
            self.edits.record(np.concatenate([ev.rows for ev in evs]))
        if self.labeled:
            self._vlab[batch.n_before:n] = batch.new_vertex_labels
        self._ids.add(p.new_ext)
        self.n = n
        self.num_edges += int(batch.op[batch.valid].astype(np.int64).sum())
        self._state += 1
        del self._pending[batch]
        self._compact_wasteful()

    def _compact_wasteful(self) -> None:
        """Rebuild each store whose holes exceed ``_MAX_WASTE`` of its used part."""
        for st in self._stores:
            if self._waste(st) > _MAX_WASTE:
                st.compact(self.n, self.slack)
                self.storage_version += 1
                self.edits.record(None)     # every row moved

    def edited_in_place(self, net_edges: int, rows: np.ndarray | None = None) -> None:
        """Record that a caller edited the stores in place (the sequential path,
        :mod:`warpmatch.stream.sequential`): ``net_edges`` more edges, a new state
        (batches prepared before are stale), compaction as after :meth:`apply`.

        The caller keeps each store's ``used``, ``live`` and ``entries`` current;
        ``rows``: the rows it may have rewritten or moved, for :attr:`edits`
        (``None``: unknown).
        """
        self.num_edges += int(net_edges)
        self._state += 1
        self.edits.record(rows)
        self._compact_wasteful()

    def _apply_store(self, st: _Store, ev: _Events) -> None:
        if ev.rows.size == 0:
            return
        rows = ev.rows
        new_deg = st.deg[rows].astype(np.int64) + ev.per_row_sum(ev.op)
        cap = st.cap[rows]
        move = new_deg > cap
        new_start = st.start[rows].copy()
        if np.any(move):
            mrows = np.flatnonzero(move)
            want = np.ceil(new_deg[mrows] * (1.0 + self.slack)).astype(np.int64)
            new_cap = np.maximum(np.maximum(2 * cap[mrows], want), MIN_ROW_CAP)
            offs = np.zeros(mrows.size, np.int64)
            np.cumsum(new_cap[:-1], out=offs[1:])
            if st.ensure_edges(int(new_cap.sum())):
                self.storage_version += 1
            new_start[mrows] = st.used + offs
        work = int(new_deg.sum()) + int(ev.nbr.size)
        if _parallel(work):
            K.apply_rows(rows, new_start, ev.ptr, ev.nbr, ev.op, ev.lab, st.start, st.deg,
                         st.nbr, st.elab, self.has_edge_labels, 4 * _threads())
        else:
            K.apply_rows_serial(rows, new_start, ev.ptr, ev.nbr, ev.op, ev.lab, st.start,
                                st.deg, st.nbr, st.elab, self.has_edge_labels)
        if np.any(move):
            moved = rows[mrows]
            st.start[moved] = new_start[mrows]
            st.cap[moved] = new_cap
            st.used += int(new_cap.sum())
            st.live += int((new_cap - cap[mrows]).sum())
        st.entries += int((new_deg - st.deg[rows]).sum())
        st.deg[rows] = new_deg

    def reload(self, graph: Graph) -> None:
        """Replace every stored edge by ``graph``'s, in place (same object, new arrays).

        For callers that kept the edges elsewhere for a while (the sequential
        path's split mode, :mod:`warpmatch.stream.sequential`).

        Parameters
        ----------
        graph : Graph
            The current edges: same vertices (internal ids), directedness and
            edge-label presence as this graph.

        Raises
        ------
        ValueError
            A graph of another shape.
        """
        if (graph.n != self.n or bool(graph.directed) != self.directed
                or (graph.edge_labels is not None) != self.has_edge_labels):
            raise ValueError("reload needs a graph with the same vertices, direction and "
                             "edge-label presence")
        n_cap = self._out.start.shape[0]      # (batches prepared before become stale)
        self._out.build_from_csr(graph.indptr, graph.indices, graph.edge_labels, n_cap,
                                 self.slack)
        if self.directed:
            self._in.build_from_csr(graph.in_indptr, graph.in_indices, graph.in_edge_labels,
                                    n_cap, self.slack)
        self.num_edges = int(graph.num_edges)
        self.storage_version += 1
        self._state += 1
        self.edits.record(None)

    # ------------------------------------------------------------- queries
    def neighbors(self, v: int) -> np.ndarray:
        """Sorted out-neighbours of internal vertex ``v`` (a copy)."""
        self._check_vertex(v)
        return self._out.nbr[self._out.row(v)].copy()

    def in_neighbors(self, v: int) -> np.ndarray:
        """Sorted in-neighbours of internal vertex ``v`` (the neighbours, if undirected)."""
        self._check_vertex(v)
        return self._in.nbr[self._in.row(v)].copy()

    def has_edge(self, u: int, v: int) -> bool:
        """True if the edge ``u -> v`` (``u - v`` if undirected) exists; internal ids."""
        if not (0 <= u < self.n and 0 <= v < self.n):
            return False
        return self._out.find(u, v) >= 0

    def edge_label(self, u: int, v: int) -> int | None:
        """Label of edge ``u -> v``; ``None`` without edge labels; KeyError if absent."""
        pos = self._out.find(u, v) if (0 <= u < self.n and 0 <= v < self.n) else -1
        if pos < 0:
            raise KeyError((u, v))
        return int(self._out.elab[pos]) if self.has_edge_labels else None

    def degree(self, v: int) -> int:
        """Out-degree of ``v`` (the degree, if undirected)."""
        self._check_vertex(v)
        return int(self._out.deg[v])

    def _check_vertex(self, v: int) -> None:
        if not 0 <= v < self.n:
            raise GraphError(f"internal vertex {v} out of range 0..{self.n - 1}")

    def snapshot(self) -> Graph:
        """The current state as a static :class:`Graph` (same ids, labels, directedness).

        Returns
        -------
        Graph
            Built with :func:`Graph.from_edges` (so it is validated like any graph).
        """
        st = self._out
        n = self.n
        deg = st.deg[:n]
        offs = np.zeros(n, np.int64)
        if n > 1:
            np.cumsum(deg[:-1], out=offs[1:])
        m = int(deg.sum(dtype=np.int64))
        src = np.empty(m, np.int32)
        dst = np.empty(m, np.int32)
        lab = np.empty(m if self.has_edge_labels else 0, np.int32)
        K.gather_rows(st.start[:n], deg, st.nbr, st.elab, self.has_edge_labels, offs,
                      src, dst, lab)
        if not self.directed:
            keep = src < dst
            src, dst = src[keep], dst[keep]
            if self.has_edge_labels:
                lab = lab[keep]
        vl = None if not self.labeled else self._vlab[:n].copy()
        return Graph.from_edges(src, dst, n=n, vertex_labels=vl,
                                edge_labels=lab if self.has_edge_labels else None,
                                directed=self.directed, ids=self._ids.ids_array(),
                                name=self.name, warn=False)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"<DynamicGraph {self.name!r}: {self.n} vertices, {self.num_edges} edges, "
                f"{kind}, storage v{self.storage_version}>")
