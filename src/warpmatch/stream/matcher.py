"""Continuous subgraph matching: keep a query's matches up to date as the graph changes.

:class:`ContinuousMatcher` is the user's entry point to :mod:`warpmatch.stream`.
It holds a :class:`~warpmatch.stream.dynamic.DynamicGraph`, the query compiled
into incremental join plans (:func:`~warpmatch.stream.delta.compile_delta_plans`,
GCSM §II-B formula (1)) and a delta engine (CPU, or the GPU engine with its
host-resident graph and GCSM cache), and turns each batch of updates into
per-update deltas (DESIGN.md, "Continuous matching"): for every update, the
embeddings that appear (+) and disappear (−), in arrival order, so results do
not depend on how a stream is cut into batches, and::

    initial_count + Σ added − Σ removed == count(current graph)

One :meth:`~ContinuousMatcher.apply` call is one batch: prepare (map ids,
validate in order) → view (all states of the batch) → engine → apply to the
store → map rows back to the graph file's ids.

Examples
--------
>>> import warpmatch as wm
>>> g = wm.Graph.from_edges([0, 1, 2], [1, 2, 3])             # a path 0-1-2-3
>>> cm = ContinuousMatcher(g, "triangle", backend="cpu")
>>> cm.count
0
>>> d = cm.apply([(0, 2, "+"), (1, 3, "+"), (0, 2, "-")])
>>> d.plus_counts.tolist(), d.minus_counts.tolist()         # embeddings: 6 per triangle
([6, 6, 0], [0, 0, 6])
>>> cm.count, cm.count == wm.count(cm.graph.snapshot(), "triangle")
(6, True)
>>> sorted(d.plus[d.plus_update == 1][0].tolist())           # the triangle 1-2-3, external ids
[1, 2, 3]
"""
from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np

from ..errors import BackendUnavailableError, QueryError, UnknownLabelWarning
from ..graph.csr import Graph
from ..query.io import check_direction, resolve_query
from ..query.model import ANY, Query
from ._paths import CountingPaths
from ._result import StreamDelta
from .batching import BatchedApply
from .delta import compile_delta_plans
from .dynamic import DynamicGraph
from .relevant import RelevantSubgraph, relevant_graph, relevant_pairs
from .types import DeltaPlans, Updates

__all__ = ["ContinuousMatcher", "StreamDelta", "BACKENDS", "resolve_delta_engine"]

#: the backends a continuous matcher accepts
BACKENDS = ("auto", "cpu", "gpu")


def _gpu_engine_class() -> Any:
    """The GPU delta engine class, or raise BackendUnavailableError saying why not."""
    try:
        from .gpu import GpuDeltaEngine     # type: ignore[attr-defined]
    except ImportError as exc:
        raise BackendUnavailableError(
            f"backend 'gpu' for continuous matching needs CuPy and a CUDA device: "
            f"warpmatch.stream.gpu cannot be loaded ({exc})") from None
    return GpuDeltaEngine


def _accepted(cls: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The options ``cls(...)`` accepts (for ``auto``, which may fall back to another engine)."""
    params = inspect.signature(cls).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return dict(options)
    return {k: v for k, v in options.items() if k in params}


def check_backend(backend: str) -> None:
    """Raise :class:`~warpmatch.errors.BackendUnavailableError` for a name not in
    :data:`BACKENDS` (whether the backend can run is another question)."""
    if backend not in BACKENDS:
        raise BackendUnavailableError(f"unknown backend {backend!r} for continuous matching; "
                                      f"choose from {', '.join(BACKENDS)}")


def resolve_delta_engine(backend: str = "auto", **engine_options: Any) -> Any:
    """A delta engine for ``backend`` that can run here.

    Parameters
    ----------
    backend : {"auto", "cpu", "gpu"}, optional
        ``"auto"`` (the default) takes the GPU engine when CuPy and a device
        are present, else the CPU engine; the fallback gets only the options
        its constructor accepts.
    **engine_options
        Passed to the engine's constructor (``threads`` for the CPU engine;
        ``cache``, ``cache_bytes``, ... for the GPU engine).

    Returns
    -------
    DeltaEngine

    Raises
    ------
    BackendUnavailableError
        An unknown backend, or ``"gpu"`` where it cannot run (the reason is given).
    """
    from .cpu import CpuDeltaEngine
    check_backend(backend)
    if backend == "cpu":
        return CpuDeltaEngine(**engine_options)
    if backend == "gpu":
        engine = _gpu_engine_class()(**engine_options)
        ok, why = engine.available()
        if not ok:
            raise BackendUnavailableError(f"backend 'gpu' for continuous matching cannot run "
                                          f"here: {why}")
        return engine
    try:
        cls = _gpu_engine_class()
        engine = cls(**_accepted(cls, engine_options))
        if engine.available()[0]:
            return engine
    except BackendUnavailableError:
        pass
    return CpuDeltaEngine(**_accepted(CpuDeltaEngine, engine_options))


def _spread(values: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
    """``values[i]`` placed at ``index[i]`` of ``size`` zeros."""
    out = np.zeros(size, dtype=np.int64)
    out[index] = values
    return out


def _searching(view: Any, search: np.ndarray | None) -> Any:
    """``view`` whose engine searches only the updates ``search`` marks.

    Engines make tasks for the valid updates of ``view.batch`` only (an invalid
    one changes nothing and has no deltas); the overlay, built from the real
    batch, still holds every update's edits, so the states the searched
    updates see are unchanged.
    """
    if search is None:
        return view
    import dataclasses
    b = view.batch
    return dataclasses.replace(view, batch=dataclasses.replace(
        b, valid=np.asarray(b.valid, dtype=bool) & search, applied=b.edits))


def _check_labels(query: Query, graph: DynamicGraph) -> None:
    """The static planner's label checks (same wording), against the dynamic graph."""
    if query.labeled and graph.vertex_labels is None:
        u = int(np.flatnonzero(query.vertex_labels != ANY)[0])
        raise QueryError(f"query vertex {query.names[u]} has label "
                         f"{int(query.vertex_labels[u])} but the graph {graph.name!r} has no "
                         f"vertex labels: drop the query's labels or read a labeled graph")
    if query.edge_labeled and not graph.has_edge_labels:
        e = int(np.flatnonzero(query.edge_labels != ANY)[0])
        a, b = (query.names[x] for x in query.edges[e])
        raise QueryError(f"query edge {a}-{b} has label {int(query.edge_labels[e])} but the "
                         f"graph {graph.name!r} has no edge labels: drop the query's edge "
                         f"labels or read a graph with edge labels")


class ContinuousMatcher(BatchedApply, CountingPaths):
    """Per-update deltas of a query's matches over a stream of edge updates.

    Parameters
    ----------
    graph : Graph, DynamicGraph, str, os.PathLike or networkx graph
        The initial graph ``G_0``. A :class:`DynamicGraph` is used (and
        changed) in place; anything else is turned into one (a path is read
        with :func:`warpmatch.read_graph`'s defaults).
    query : Query, str, os.PathLike or networkx graph
        As for :func:`warpmatch.count` (pattern name, DSL text, query file, ...).
    mode : {"embeddings", "subgraphs"}, optional
        Count every injective map, or every distinct subgraph once. The
        default is ``"embeddings"``.
    induced : bool, optional
        Induced matching: an inserted edge can also destroy matches and a
        deleted one create them. The default is ``False``.
    backend : {"auto", "cpu", "gpu"}, optional
        The delta engine; ``"auto"`` (the default) prefers the GPU, except for
        a query whose vertex labels confine it to part of a vertex-labeled
        graph (no wildcard vertex): that one runs on the CPU engine, which
        counted every such stream of ``bench/csm_peers.py`` 1.2-12x faster
        than the GPU engine (yeast and hprd, batches of 4096, an H200 host).
    on_invalid : {"error", "skip"}, optional
        An update that inserts an existing edge, deletes a missing one or is a
        self-loop: raise :class:`~warpmatch.errors.InputFormatError` before
        anything changes (the default), or skip it (``valid`` False, a reason).
    keep : {"all", "relevant"}, optional
        ``"all"`` (the default) keeps the whole graph and validates every
        update against it. ``"relevant"`` keeps only the edges a fully
        labelled query can read (:mod:`warpmatch.stream.keep`, as RapidFlow
        does): updates of other edges are taken as valid without a look and
        cost a label lookup, and :attr:`graph` holds the relevant edges only.
        The deltas are the same on a valid stream. With a wildcard query
        vertex or a graph without vertex labels every edge is relevant: the
        same as ``"all"``. A :class:`DynamicGraph` given as ``graph`` is then
        copied, not changed.
    count_initial : bool, optional
        Count the matches of ``G_0`` with the static engine, so that
        :attr:`count` is the live total. The default is ``True``; with
        ``False`` both :attr:`initial_count` and :attr:`count` are ``None``
        (the deltas are still exact).
    progress : bool or callable, optional
        The initial count's progress, as in :func:`warpmatch.count`. The
        default is ``False``.
    **engine_options
        Passed to the delta engine's constructor: for the CPU engine ``threads``,
        ``local`` and ``sequential`` (``False`` turns off the sequential path
        that counts one update at a time, in place: :mod:`warpmatch.stream.sequential`);
        for the GPU engine ``cache``, ``cache_bytes``, ... (:mod:`warpmatch.stream.gpu`).

    Attributes
    ----------
    graph : DynamicGraph
        The current graph (a property: while counting on the CPU with a fully
        labelled query, part of it is kept elsewhere until it is first read).
    query : Query
    backend : str
        The engine that runs (``"cpu"`` or ``"gpu"``).
    engine : DeltaEngine
    mode, induced, on_invalid, keep
        As given.
    initial_count : int or None
        Matches of ``G_0``.
    added, removed : int
        Totals over every update applied so far.
    updates_applied : int
        Updates seen so far (skipped ones included).

    Raises
    ------
    QueryError
        Directedness or labels that do not fit the graph, unknown mode, a
        query without edges.
    BackendUnavailableError
        The backend cannot run here.
    """

    #: a fused run's batches not yet yielded (:meth:`_settle` takes them back)
    _pending: Any = None

    def __init__(self, graph: Graph | DynamicGraph | Any, query: Any, mode: str = "embeddings",
                 induced: bool = False, backend: str = "auto", on_invalid: str = "error",
                 count_initial: bool = True, progress: Any = False, keep: str = "all",
                 **engine_options: Any) -> None:
        if on_invalid not in ("error", "skip"):
            raise ValueError(f"on_invalid must be 'error' or 'skip', not {on_invalid!r}")
        from .keep import KEEP_MODES, KeepRelevant
        if keep not in KEEP_MODES:
            raise ValueError(f"keep must be 'all' or 'relevant', not {keep!r}")
        static: Graph | None = None
        if not isinstance(graph, DynamicGraph):
            from ..api import as_graph
            static = as_graph(graph)
        g_in = graph if static is None else static
        self.query = resolve_query(query, directed=g_in.directed)    # (read once)
        # the labels a fully labelled query can use (stream/relevant.py), or None
        pairs = (relevant_pairs(self.query, bool(induced)) if g_in.vertex_labels is not None
                 else None)
        self._keep: KeepRelevant | None = None
        if keep == "relevant" and pairs is not None:
            # the matcher's graph is the relevant subgraph itself (stream/keep.py)
            static = relevant_graph(g_in if static is not None else graph.snapshot(), *pairs)
            self._keep = KeepRelevant(*pairs)
        self.keep = keep
        # a query whose labels confine it to part of a vertex-labeled graph (a relevant
        # subgraph): "auto" takes the CPU engine (measured faster: see ``backend`` above)
        if backend == "auto" and pairs is not None:
            from .cpu import CpuDeltaEngine
            self.engine = CpuDeltaEngine(**_accepted(CpuDeltaEngine, engine_options))
        else:
            self.engine = resolve_delta_engine(backend, **engine_options)
        self.backend = str(self.engine.name)
        allocator = getattr(self.engine, "allocator", None)
        if static is None:
            dg = graph
        else:
            # the engine reads this graph unless it reads the query's relevant subgraph
            dg = (DynamicGraph(static) if allocator is None or (pairs is not None
                                                                 and self._keep is None)
                  else DynamicGraph(static, allocator=allocator))
        self._dg = dg
        if self._keep is not None:
            self._keep.attach(dg)
        check_direction(self.query, dg.directed, dg.name)
        _check_labels(self.query, dg)
        self._relevant: RelevantSubgraph | None = None
        if pairs is not None and self._keep is None:
            # the engine reads only the edges the query can use (stream/relevant.py)
            g_rel = static if static is not None else dg.snapshot()
            self._relevant = RelevantSubgraph(g_rel, *pairs, **(
                {} if allocator is None else {"allocator": allocator}))
        self.mode = mode
        self.induced = bool(induced)
        self.on_invalid = on_invalid
        self._plans: dict[str, DeltaPlans] = {}
        self._auts: np.ndarray | None = None     # see _listing_plans
        self._plans["count"] = self._compile("count")      # validates mode and the query
        self.engine.attach(dg if self._relevant is None else self._relevant.graph)
        if hasattr(self.engine, "prepare"):      # per-query state built now, not in a batch
            self.engine.prepare(self._plans["count"])
        if getattr(self.engine, "sequential", False):
            # counting on the CPU: the sequential path (stream/sequential.py); with a
            # relevant subgraph of a graph this matcher owns, in split mode. A GPU
            # engine lends its host engine, and each batch goes to whichever of the two
            # is faster for its size (stream/_route.py)
            from .sequential import SequentialPath
            host = getattr(self.engine, "host", None)
            if host is not None:
                from ._route import DeviceRoute
                self._route = DeviceRoute()
            self._seq = SequentialPath(dg, self._relevant, host or self.engine,
                                       self._plans["count"],
                                       split_from=static if self._relevant is not None
                                       else None,
                                       trust=None if self._keep is None else self._keep.table)
        self.added = 0
        self.removed = 0
        self.updates_applied = 0
        self.initial_count: int | None = None
        if count_initial:
            from ..api import count
            from ..graph import reorder
            g0 = static if static is not None else dg.snapshot()
            had_copy = reorder.kept(g0)
            with warnings.catch_warnings():
                # a label absent from G_0 may arrive with the stream: 0 is only the start
                warnings.simplefilter("ignore", UnknownLabelWarning)
                self.initial_count = int(count(g0, self.query, mode=mode, induced=self.induced,
                                               backend="cpu" if self.backend == "cpu"
                                               else "auto", progress=progress))
            if not had_copy:
                # the count's degree-ordered copy of G_0 (api.count, vertex_order) is not
                # needed again: the matcher must not hold a second copy for its lifetime
                reorder.forget(g0)

    # -------------------------------------------------------------- plans
    def _compile(self, purpose: str) -> DeltaPlans:
        return compile_delta_plans(self.query, mode=self.mode, induced=self.induced,
                                   purpose=purpose, directed=self._dg.directed,
                                   has_edge_labels=self._dg.has_edge_labels,
                                   label_freq=self._label_freq())

    def _label_freq(self) -> dict[int, int] | None:
        """Vertices per label of the graph as given (orders rarer labels first in the plans)."""
        vl = self._dg.vertex_labels
        if vl is None or not self.query.labeled:
            return None
        labs, cnt = np.unique(np.asarray(vl), return_counts=True)
        return dict(zip(labs.tolist(), cnt.tolist()))

    def plans(self, listing: bool) -> DeltaPlans:
        """The delta plans for counting (orbits, counting groups, weights) or listing.

        Parameters
        ----------
        listing : bool

        Returns
        -------
        DeltaPlans
        """
        purpose = "list" if listing else "count"
        if purpose not in self._plans:
            self._plans[purpose] = self._compile(purpose)
        return self._plans[purpose]

    def _listing_plans(self) -> tuple[DeltaPlans, np.ndarray | None]:
        """Plans that :meth:`apply` lists with, and the automorphisms to expand their rows by.

        Listing every embedding searches |Aut(Q)| times the space of one
        embedding per orbit (8x for a 4-cycle, 24x for a 4-clique), twice
        (count, then fill). The embeddings an update adds or removes are closed
        under ``f -> f ∘ σ`` (:mod:`~warpmatch.stream.delta`), so the engine lists
        one embedding per orbit (``purpose="orbits"``) and each row ``M``
        becomes the rows ``M[σ]``, ``σ ∈ Aut(Q)`` — the same set of rows.
        Returns ``(plans, None)`` when there is nothing to expand (subgraphs
        mode, |Aut| = 1, or a group too large to list).
        """
        if "orbits" not in self._plans:
            auts = None
            if self.mode == "embeddings":
                from ..query.symmetry import automorphism_count, automorphisms
                if 1 < automorphism_count(self.query) <= 10_000:
                    auts = np.asarray(automorphisms(self.query, limit=10_000), dtype=np.int64)
            if auts is not None:
                self._plans["orbits"] = self._compile("orbits")
                self._auts = auts
            else:
                self._plans["orbits"] = self.plans(listing=True)
                self._auts = None
        return self._plans["orbits"], self._auts

    # -------------------------------------------------------------- state
    @property
    def graph(self) -> DynamicGraph:
        """The current data graph (the state after every batch applied so far).

        The sequential path may keep part of it elsewhere for speed
        (:mod:`warpmatch.stream.sequential`, split mode); reading this
        attribute brings it up to date first (once, ``O(edges)``).
        """
        self._settle()
        seq = getattr(self, "_seq", None)
        if seq is not None and seq.split:
            seq.sync()
        return self._dg

    @property
    def paths(self) -> dict[str, int] | None:
        """With a GPU engine: the counting batches each path took so far,
        ``{"sequential": host batches, "device": GPU batches}`` (stream/_route.py);
        ``None`` otherwise (listing batches always run on the device)."""
        return None if self._route is None else dict(self._route.batches)

    @property
    def count(self) -> int | None:
        """The live total: ``initial_count + added - removed`` (``None`` if not counted)."""
        if self.initial_count is None:
            return None
        return self.initial_count + self.added - self.removed

    # -------------------------------------------------------------- apply
    def apply(self, updates: Any, counts_only: bool = False) -> StreamDelta:
        """Apply one batch of updates and return the per-update deltas.

        Parameters
        ----------
        updates : Updates, iterable, mapping, pyarrow.Table, tuple of arrays or 2-D array
            The batch, in the graph file's id space: any form
            :func:`~warpmatch.stream.updates.as_updates` accepts (its docstring
            lists them, and how a vertex-labeled graph's new vertices are
            declared). All of it is one batch; cut long streams with
            :meth:`Updates.slice` or use :meth:`apply_batches`.
        counts_only : bool, optional
            Return only per-update counts (faster: symmetry breaking applies
            when counting embeddings). The default is ``False``: also the
            matches.

        Returns
        -------
        StreamDelta

        Raises
        ------
        InputFormatError
            A malformed update or declaration, a new vertex of a vertex-labeled
            graph without a declaration, or an invalid update under
            ``on_invalid="error"`` (nothing is changed then).

        Examples
        --------
        Vertex 9 is new, with label 7, which the query's vertex ``a`` asks for:

        >>> import warpmatch as wm
        >>> g = wm.Graph.from_edges([0, 1], [1, 2], vertex_labels=[0, 0, 0])
        >>> cm = ContinuousMatcher(g, "a:7-b, b-c, c-a", mode="subgraphs", backend="cpu")
        >>> d = cm.apply([("v", 9, 7), (9, 0, "+"), (9, 1, "+")])
        >>> d.plus_counts.tolist(), d.plus.tolist(), d.columns
        ([0, 1], [[9, 0, 1]], ['a', 'b', 'c'])
        >>> cm.graph.vertex_labels.tolist(), cm.count
        ([0, 0, 0, 7], 1)
        >>> d = cm.apply({"src": [5], "dst": [2], "op": ["+"],
        ...               "vertex_id": [5], "vertex_label": [0]})
        >>> cm.apply([(9, 6, "+")])
        Traceback (most recent call last):
        ...
        warpmatch.errors.InputFormatError: <array>: update 0: vertex 6 is new ... ('v', 6, ...
        """
        if type(updates) is Updates:    # (a batch of apply_batches: nothing to convert)
            ups = updates
        else:
            from .updates import as_updates
            ups = as_updates(updates)
        if self._pending is not None:
            self._settle()
        return self._apply_routed(ups, counts_only, None)

    def _settle(self) -> None:
        """Take back what a fused run of :meth:`apply_batches` applied beyond the
        batches it yielded (:mod:`warpmatch.stream._fused`), before anything else
        reads or changes the graph."""
        pending = self._pending
        if pending is not None:
            self._pending = None
            pending.settle()

    def _fused_batches(self, ups: Updates, batch_size: int) -> Any:
        seq = self._sequential_path()
        if seq is None or len(ups.new_vertex_ids) or self._route is not None:
            # (declarations, and batches that may go to the device: batch by batch)
            return None
        from ._fused import fused_batches
        return fused_batches(self, seq, ups, batch_size)

    def _apply_routed(self, ups: Updates, counts_only: bool, search: np.ndarray | None
                      ) -> StreamDelta:
        """A batch on the sequential path (counting on the CPU) or the batch path."""
        if counts_only:
            seq = self._sequential_path()
            if seq is not None:
                return self._apply_sequential(seq, ups, search)
        return self._batch(ups, counts_only, search=search)

    def _batch(self, ups: Updates, counts_only: bool, account: bool = True,
               search: np.ndarray | None = None) -> StreamDelta:
        """:meth:`_apply_batch`, of the updates that are kept with ``keep="relevant"``."""
        if self._keep is None:
            return self._apply_batch(ups, counts_only, account, search)
        return self._keep.apply_batch(self, ups, counts_only, account, search)

    def apply_share(self, updates: Any, search: np.ndarray, counts_only: bool = False
                    ) -> StreamDelta:
        """Apply a whole batch but compute the deltas of only the updates ``search`` marks.

        What a replica of a distributed matcher does (:mod:`warpmatch.distributed`):
        every replica applies every update, and each searches its share, so that
        the shares' deltas, summed, are the batch's deltas. An update's deltas
        depend only on the states just before and after it, so leaving the
        others out changes nothing for the marked ones.

        Parameters
        ----------
        updates : any form :meth:`apply` accepts
        search : numpy.ndarray
            bool[B]: the updates to search; the others are applied (and
            validated, and skipped if invalid) with 0 and 0 as their counts and
            no rows.
        counts_only : bool, optional
            As in :meth:`apply`.

        Returns
        -------
        StreamDelta
            :attr:`added`, :attr:`removed` and :attr:`count` follow the share
            only.
        """
        from .updates import as_updates
        ups = as_updates(updates)
        self._settle()
        search = np.asarray(search, dtype=bool)
        if search.shape != (len(ups),):
            raise ValueError(f"search must mark each of the batch's {len(ups)} updates, "
                             f"not have shape {search.shape}")
        return self._apply_routed(ups, counts_only, search)

    def _apply_batch(self, ups: Updates, counts_only: bool, account: bool = True,
                     search: np.ndarray | None = None) -> StreamDelta:
        """One batch through the overlay of all its states (the batch path).

        ``account=False`` leaves :attr:`added`, :attr:`removed` and
        :attr:`updates_applied` to the caller; ``search`` (bool per update)
        limits the searches to the updates it marks (:meth:`apply_share`).
        """
        dg = self.graph                 # (up to date: the batch path reads and edits it)
        batch = dg.prepare(ups, self.on_invalid)
        want = not counts_only
        plans, auts = self._listing_plans() if want else (self.plans(False), None)
        if self._relevant is None:
            view = dg.view(batch)
            raw = self.engine.run(_searching(view, search), plans, want)
            dg.apply(batch)
            index = None
        else:
            sub, index = self._relevant.select(batch, dg.vertex_labels)
            view = self._relevant.graph.view(sub)
            raw = self.engine.run(_searching(view, None if search is None else search[index]),
                                  plans, want)
            self._relevant.graph.apply(sub)
            dg.apply(batch)
        plus_c = np.asarray(raw.plus_counts, dtype=np.int64)
        minus_c = np.asarray(raw.minus_counts, dtype=np.int64)
        if index is not None:                 # updates of the subgraph -> of the batch
            plus_c, minus_c = _spread(plus_c, index, len(ups)), _spread(minus_c, index,
                                                                        len(ups))
        if auts is not None:                # one row per orbit: |Aut| embeddings each
            plus_c, minus_c = plus_c * auts.shape[0], minus_c * auts.shape[0]
        added, removed = int(plus_c.sum()), int(minus_c.sum())
        if account:
            self.added += added
            self.removed += removed
            self.updates_applied += len(ups)
        plus = minus = plus_u = minus_u = None
        if want:
            rows = np.asarray(raw.matches)
            upd = np.asarray(raw.match_update, dtype=np.int64)
            if index is not None:
                upd = index[upd]
            pos = np.asarray(raw.match_sign) > 0
            if auts is not None:
                # row M -> rows M[σ] (the embedding f ∘ σ), still grouped by update
                rows = rows[:, auts].reshape(-1, rows.shape[1])
                upd = np.repeat(upd, auts.shape[0])
                pos = np.repeat(pos, auts.shape[0])
            ext = dg.to_external(rows).astype(np.int64, copy=False).reshape(rows.shape)
            plus, minus = ext[pos], ext[~pos]
            plus_u, minus_u = upd[pos], upd[~pos]
        return StreamDelta(plus_c, minus_c, added, removed, plus, minus, plus_u, minus_u,
                           np.asarray(batch.valid, dtype=bool), list(batch.reason), ups,
                           list(self.query.names))

    def __repr__(self) -> str:
        live = "?" if self.count is None else f"{self.count:,}"
        return (f"<ContinuousMatcher {self.query.name!r} on {self._dg.name!r} "
                f"({self.mode}, {'induced' if self.induced else 'non-induced'}, "
                f"backend {self.backend}): {live} matches after {self.updates_applied} updates>")
