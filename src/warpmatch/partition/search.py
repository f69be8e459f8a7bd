"""Partitioned counting and listing: intra-partition, then inter-partition (PBE Alg. 1-3).

Map: :class:`PartitionStats` (what ran: parts, shares, seconds, bytes) <
:func:`_inter_engine` / :func:`whole_graph_memory` / :func:`pool_launches` (the
engines of the two stages; whether the whole graph is read instead) <
:func:`count_partitioned` / :func:`match_partitioned` (the two stages, for a
:class:`~warpmatch.partition.store.Partitioned` graph) < :func:`describe`
(``explain``'s lines).

PBE (Guo et al.) matches each part's induced subgraph on the GPU with no host
traffic (intra), then every match with at least one cut edge from its
smallest cut edge (inter; :mod:`.plans`), and the answer is the sum. What
differs here:

- Intra runs whatever engine the caller gives (GPU, CPU, reference) on each
  part's subgraph, with the in-memory plan's candidate sets moved to local ids
  (all parts' in one pass); a part's device copy is dropped before the next
  part is loaded. On the GPU each part is copied from a pinned host copy made
  once, on its second copy (:meth:`Partitioned.subgraph`), and every search
  launches by pool (:func:`pool_launches`).
- Inter runs the same engine over the whole graph, rule 8 in its candidate
  checks. On the GPU the graph is in device memory when it fits the budget,
  else its row offsets are there and its lists in pinned host memory
  (``"hybrid"``) when the offsets fit, else all of it is pinned and read over
  PCIe (zero-copy), instead of PBE's per-level gathering of the rows a level
  needs (Alg. 3 lines 15-17), which our DFS engine (gMatch's warp stacks, not
  level-wise BFS) has no level for.
- Not in PBE: with ``strategy="auto"`` (what the API runs when no part count is
  forced) a GPU engine reads the whole graph from host memory instead of
  matching by parts where the partition cuts :data:`WHOLE_GRAPH_CUT` or more of
  the edges (:func:`whole_graph_memory`): there most matches need the inter
  searches, which read host memory too.
- Counts are exact in every mode (embeddings and subgraphs, induced, labels,
  edge labels, directed, anchors); listing yields each match once, the rows
  the in-memory engine lists, in another order.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from ..graph.csr import Graph
from ..plan.build import anchor_colors, build_plan
from ..plan.plan import Plan
from ..query.model import Query
from .plans import all_automorphisms, expand_rows, inter_searches, local_plans
from .store import Partitioned

Progress = Callable[[int, int], None]
#: progress units per stage (a part or an inter search)
_UNIT = 1000


@dataclass
class PartitionStats:
    """What a partitioned run did (``explain``, ``--json``'s ``"partition"``)."""

    parts: int
    method: str
    cut_edges: int
    boundary_vertices: int
    edges: int
    intra_engine: str
    inter_engine: str
    intra: int = 0                  # matches inside one part (in the answer's unit)
    inter: int = 0                  # matches with a cut edge
    intra_seconds: float = 0.0
    inter_seconds: float = 0.0
    inter_searches: int = 0         # search sequences run
    query_edges: int = 0            # search sequences without sharing (one per edge)
    bytes_to_device: int = 0        # part subgraphs the intra engine was given (device engines)
    part_bytes_max: int = 0
    per_search: list = field(default_factory=list)
    #: "partitioned", or "whole graph" (:func:`whole_graph_memory`: no part was searched)
    strategy: str = "partitioned"
    whole_seconds: float = 0.0      # the whole graph's search ("whole graph" only)

    @property
    def intra_share(self) -> float:
        """Share of the matches found inside one part (1.0 for an empty answer)."""
        total = self.intra + self.inter
        return 1.0 if total == 0 else self.intra / total

    @property
    def cut_share(self) -> float:
        """Share of the graph's edges that the partition cuts."""
        return self.cut_edges / max(1, self.edges)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready facts."""
        if self.strategy != "partitioned":
            return {"strategy": self.strategy, "parts": self.parts, "method": self.method,
                    "cut_edges": self.cut_edges, "cut_share": round(self.cut_share, 6),
                    "engine": self.inter_engine, "seconds": round(self.whole_seconds, 6),
                    "bytes_to_device": int(self.bytes_to_device)}
        return {"strategy": "partitioned", "parts": self.parts, "method": self.method,
                "cut_edges": self.cut_edges, "boundary_vertices": self.boundary_vertices,
                "intra_engine": self.intra_engine, "inter_engine": self.inter_engine,
                "intra": int(self.intra), "inter": int(self.inter),
                "intra_share": round(self.intra_share, 6),
                "intra_seconds": round(self.intra_seconds, 6),
                "inter_seconds": round(self.inter_seconds, 6),
                "inter_searches": self.inter_searches, "query_edges": self.query_edges,
                "bytes_to_device": int(self.bytes_to_device),
                "part_bytes_max": int(self.part_bytes_max),
                "per_search": self.per_search}


def _inter_engine(engine: Any, graph: Graph | None = None, memory: str | None = None,
                  plans: list[Plan] | None = None) -> Any:
    """The engine of the inter-partition searches (rule 8 over the whole graph).

    A host engine is used as it is. A GPU engine is copied with the whole graph
    in device memory when it fits the budget (less the room of
    :data:`~.split.ROOM`) beside the largest of ``plans``' part ids and candidate
    sets (and the pool the roots become); else, when its row offsets fit that
    way, ``"hybrid"``: offsets on the device, lists in pinned host memory; else
    all of it pinned, read over PCIe (zero-copy). The lists are then never
    copied to the device. ``memory`` (``"device"``, ``"pinned"``, ``"hybrid"``,
    ``"managed"``) overrides that choice.
    """
    if getattr(engine, "name", "") != "gpu" or graph is None:
        return engine
    import copy

    from .choose import device_budget
    from .split import ROOM
    inter = copy.copy(engine)
    if memory is None:
        memory = _nearest_memory(graph, device_budget(engine) * (1 - ROOM), lambda m: max(
            (_plan_bytes(p, m) for p in plans or []), default=4 * graph.n))
    inter.graph_memory = memory
    return inter


def _nearest_memory(graph: Graph, usable: float, beside: Callable[[str], int]) -> str:
    """Where the GPU reads ``graph``: in device memory if it fits ``usable`` bytes beside
    ``beside(kind)``, else ``"hybrid"`` (its offsets on the device) if that fits, else
    ``"pinned"``."""
    from ..engine.gpu.memory import resident_bytes
    return next((m for m in ("device", "hybrid")
                 if resident_bytes(graph, m) + beside(m) <= usable), "pinned")


def _plan_bytes(plan: Plan, memory: str = "device") -> int:
    """Device bytes of an inter search beside the graph: its part ids, its candidate
    sets twice (the pool its roots become is a filtered copy of them; counting every
    depth's set twice errs on the safe side) and, with the graph in device memory, the
    cut neighbours' lists (elsewhere the engine keeps them pinned)."""
    from ..engine.gpu.memory import resident_bytes
    from ..engine.gpu.render import part_nbytes
    cut = (resident_bytes(plan.cut_graph, "device")
           if plan.cut_graph is not None and memory == "device" else 0)
    return part_nbytes(plan) + 8 * int(plan.cand_ids.size) + cut


#: an automatic run on the GPU (``strategy="auto"``: no part count forced) whose partition
#: cuts at least this share of the graph's edges reads the whole graph from host memory
#: (:func:`whole_graph_memory`) instead of matching by parts. Between two measured points
#: (H100/H200, bench/partition.py): at 4-6% cut (community graphs, 5x10^7 and 10^8 edges)
#: the parts were 2.5-13x faster than the whole graph in hybrid memory; at 64% (a
#: 2x10^7-edge Chung-Lu graph) the whole graph was: triangle 0.41 s against 0.61 s, tailed
#: triangle 1.1 s against more than 4 s. The triangle's inter search there cost about 2.3x
#: the whole graph's per cut share, which puts the triangle's break-even near 43%; queries
#: of more edge orbits run more inter searches, hence a lower bound.
WHOLE_GRAPH_CUT = 0.35


def whole_graph_memory(pg: Partitioned, engine: Any, plan: Plan | None = None) -> str | None:
    """Where a GPU engine reads the whole graph instead of matching ``pg`` by parts
    (``"hybrid"``: offsets on the device and lists in pinned host memory; ``"pinned"``;
    ``"device"`` where it fits after all), or ``None`` to match by parts.

    By parts when the engine is not a GPU engine (host engines read host memory either
    way), when there is one part, or when the partition cuts less than
    :data:`WHOLE_GRAPH_CUT` of the edges: then most matches lie inside one part, and
    each part is searched in device memory with no host traffic. Where most edges are
    cut (METIS on a power-law graph), most matches need the inter searches, which read
    the graph from host memory as the whole-graph search does, once per edge orbit of
    the query, with rule 8 on top.
    """
    g = pg.graph
    if not _on_device(engine) or pg.parts < 2 or not g.num_edges:
        return None
    if pg.cut_edges < WHOLE_GRAPH_CUT * g.num_edges:
        return None
    from .choose import device_budget
    # the engine's own accounting (its candidate sets, and the pool its roots become,
    # counted as a second copy of them), without the inter searches' room (ROOM): the
    # engine bounds its BFS and list buffers by what is left. With that room, a
    # 2x10^7-edge Chung-Lu graph at a 25% budget went pinned where hybrid ran within the
    # budget and faster (H100: 4-clique 1.15 s against 4.23 s)
    beside = 8 * (g.n if plan is None else int(plan.cand_ids.size))
    return _nearest_memory(g, device_budget(engine), lambda _: beside)


def _whole_stats(pg: Partitioned, engine: Any, plan: Plan, memory: str) -> tuple[Any,
                                                                                PartitionStats]:
    """The engine and the stats of a whole-graph run (:func:`whole_graph_memory`)."""
    eng = _inter_engine(engine, pg.graph, memory)
    st = _stats(pg, eng, eng, plan)
    st.strategy = "whole graph"
    if plan.empty_reason is None:
        from ..engine.gpu.memory import resident_bytes
        st.bytes_to_device = resident_bytes(pg.graph, memory)
    return eng, st


def pool_launches(engine: Any) -> Any:
    """``engine`` for many short searches: a GPU engine whose DFS launches each take the
    rest of the pool (``launches="pool"``), so that a short search is one launch instead
    of a ramp of slices, each ending with most of the GPU idle and a host round trip; any
    other engine as it is. The engine given is not changed.

    A partitioned count runs one search per part and per inter sequence (a 2x10^7-edge
    triangle count by 6 parts: 28 launches for 7 searches with slices); the distributed
    layer's shards are short searches too.
    """
    if getattr(engine, "name", "") != "gpu" or getattr(engine, "launches", "pool") == "pool":
        return engine
    import copy
    out = copy.copy(engine)
    out.launches = "pool"
    return out


def _inter_bytes(engine: Any, graph: Graph, searches: list, list_mode: bool) -> int:
    """Bytes the inter searches copy to the device: the part ids and what of the graph
    and its cut neighbours' lists lives in device memory (zero-copy reads are not
    counted: PCIe traffic)."""
    if not searches or not _on_device(engine):
        return 0
    from ..engine.gpu.memory import resident_bytes
    from ..engine.gpu.render import part_nbytes, uses_cut_graph
    cut = searches[0].plan.cut_graph
    used = any(uses_cut_graph(s.plan, list_mode) for s in searches)
    return (resident_bytes(graph, engine.graph_memory) + part_nbytes(searches[0].plan)
            + (resident_bytes(cut, "device") if used and engine.graph_memory == "device"
               else 0))


def _engine_name(engine: Any) -> str:
    memory = getattr(engine, "graph_memory", "device")
    return engine.name + ("" if memory == "device" else f" ({memory} graph)")


def _stats(pg: Partitioned, engine: Any, inter: Any, plan: Plan) -> PartitionStats:
    from .plans import query_edges
    return PartitionStats(parts=pg.parts, method=pg.method, cut_edges=pg.cut_edges,
                          boundary_vertices=int(pg.boundary.size),
                          edges=int(pg.graph.num_edges),
                          intra_engine=_engine_name(engine),
                          inter_engine=_engine_name(inter),
                          query_edges=len(query_edges(plan.query)),
                          part_bytes_max=int(pg.part_bytes().max(initial=0)))


def _on_device(engine: Any) -> bool:
    return getattr(engine, "name", "") == "gpu"


def _load_part(pg: Partitioned, p: int, engine: Any, st: PartitionStats) -> Graph:
    """Part ``p``'s subgraph for the intra search (pinned for a GPU engine). On the GPU,
    other graphs' cached device copies go first, oldest first, where the device lacks
    room for it: the whole graph's copy that an earlier query's inter searches left (its
    offsets alone were 100 MB of a 215 MiB budget at 10^8 edges, and the part's search ran
    out of memory beside them)."""
    sub = pg.subgraph(p, pinned=_on_device(engine))
    if _on_device(engine):
        from ..engine.gpu.memory import make_room
        make_room(sub)
        st.bytes_to_device += int(pg.part_bytes()[p])
    return sub


def _drop_device_copy(engine: Any, sub: Graph) -> None:
    """Free the GPU engine's cached copy of a part before the next part is loaded."""
    if _on_device(engine):
        from ..engine.gpu.memory import release_graph
        release_graph(sub)


def loaded_parts(pg: Partitioned, lps: list[Plan], engine: Any,
                 st: PartitionStats) -> Iterator[tuple[int, Plan, Graph | None]]:
    """The intra phase's parts in order: ``(p, local plan, subgraph)``, the subgraph loaded
    for ``engine`` (:func:`_load_part`; ``None`` for a part without roots, not loaded)
    and its device copy dropped once the caller moves on, or stops early."""
    for p, lp in enumerate(lps):
        if lp.roots.size == 0:
            yield p, lp, None
            continue
        sub = _load_part(pg, p, engine, st)
        try:
            yield p, lp, sub
        finally:
            _drop_device_copy(engine, sub)


class _Phases:
    """Progress over stages: each part and each inter search is ``_UNIT`` units."""

    def __init__(self, progress: Progress | None, stages: int) -> None:
        self.progress, self.total, self.i = progress, stages * _UNIT, 0

    def stage(self) -> Progress | None:
        if self.progress is None:
            return None
        base = self.i * _UNIT
        self.i += 1

        def cb(done: int, total: int) -> None:
            frac = 1.0 if total <= 0 else min(1.0, done / total)
            self.progress(base + int(frac * _UNIT), self.total)
        return cb

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)


def count_partitioned(pg: Partitioned, query: Query, mode: str = "embeddings",
                      induced: bool = False, anchors: Mapping[Any, Any] | None = None,
                      order: str = "ri", engine: Any = None,
                      progress: Progress | None = None,
                      stop: Callable[[int], bool] | None = None,
                      plan: Plan | None = None, inter_memory: str | None = None,
                      share: bool = True, cut_lists: bool = True,
                      strategy: str = "parts") -> tuple[int, PartitionStats, bool]:
    """Count ``query`` in a partitioned graph: intra-partition plus inter-partition matches.

    Parameters
    ----------
    pg : Partitioned
    query : Query
    mode, induced, anchors, order
        As in :func:`warpmatch.count`.
    engine : Engine, optional
        Runs the intra-partition searches. The default is the CPU engine.
    progress : callable, optional
        ``progress(done, total)`` over all stages.
    stop : callable, optional
        ``stop(count_so_far)`` (in the answer's unit); True ends the count early.
    plan : Plan, optional
        The in-memory counting plan, if the caller built it already.
    inter_memory : {"device", "pinned", "hybrid", "managed"}, optional
        With a GPU engine: where the inter searches keep the whole graph. The
        default, ``None``, is device memory when it fits the engine's budget,
        else the offsets on the device and the lists in pinned host memory when
        the offsets fit, else pinned host memory (zero-copy).
    share : bool, optional
        ``False`` runs one inter search per query edge instead of one per orbit
        of query edges (to measure what sharing saves). The default is ``True``.
    cut_lists : bool, optional
        ``False`` runs the inter searches without the cut edges' lists
        (:attr:`Partitioned.cut_graph`: leaves counted from them, leaf-last
        searches, on the GPU the prime edge's candidates drawn from them), to
        measure what they save. The default is ``True``.
    strategy : {"parts", "auto"}, optional
        ``"parts"`` (the default) matches by parts. ``"auto"`` reads the whole
        graph from host memory instead where :func:`whole_graph_memory` says so
        (a GPU engine and a partition that cuts most edges); ``stats.strategy``
        is then ``"whole graph"``.

    Returns
    -------
    count : int
    stats : PartitionStats
    complete : bool
        False when ``stop`` ended it (``count`` is then a lower bound).
    """
    from ..engine.cpu import CpuEngine
    _check_strategy(strategy)
    engine = engine if engine is not None else CpuEngine()
    g = pg.graph
    if plan is None:
        plan = build_plan(g, query, mode=mode, induced=induced, anchors=anchors, order=order,
                          purpose="count")
    whole = whole_graph_memory(pg, engine, plan) if strategy == "auto" else None
    if whole is not None:
        # one long search: the engine's own launches (sliced: progress and Ctrl-C between)
        eng, st = _whole_stats(pg, engine, plan, whole)
        if plan.empty_reason is not None:
            return 0, st, True
        mult = int(plan.multiplier)
        t0 = time.perf_counter()
        total = int(eng.count(g, plan, progress=progress, **(
            {} if stop is None else {"stop": lambda raw: stop(raw * mult)}))) * mult
        st.whole_seconds = time.perf_counter() - t0
        return total, st, not (stop is not None and stop(total))
    engine = pool_launches(engine)      # many short searches
    colors = anchor_colors(g, query, anchors)
    searches = (inter_searches(g, plan, pg.part, pg.boundary, colors, "count", share,
                               pg.on_boundary, pg.cut_graph if cut_lists else None)
                if plan.empty_reason is None and plan.k >= 2 and pg.parts > 1 else [])
    inter_engine = _inter_engine(engine, g if pg.parts > 1 else None, inter_memory,
                                 [s.plan for s in searches])
    st = _stats(pg, engine, inter_engine, plan)
    if plan.empty_reason is not None:
        return 0, st, True
    st.inter_searches = len(searches)
    phases = _Phases(progress, pg.parts + len(searches))
    total = 0

    # the answer so far from raw matches: embeddings are raw x weight; subgraphs are
    # embeddings / |Aut| (whole: every inter embedding's orbit is counted in full)
    aut = int(plan.aut_size)

    def answer(intra: int, inter_emb: int) -> int:
        return intra + (inter_emb if mode == "embeddings" else inter_emb // aut)

    def stopper(to_answer: Callable[[int], int]) -> Callable[[int], bool] | None:
        return None if stop is None else (lambda raw: stop(to_answer(raw)))

    extra = (lambda s: {"stop": s} if s is not None else {})
    t0 = time.perf_counter()
    lps = local_plans(plan, pg.part, pg.local, pg.parts)
    for p, lp, sub in loaded_parts(pg, lps, engine, st):
        cb = phases.stage()
        if sub is None:
            if cb:
                cb(1, 1)
            continue
        base, mult = total, int(plan.multiplier)
        raw = int(engine.count(sub, lp, progress=cb,
                               **extra(stopper(lambda r: base + r * mult))))
        total += raw * int(plan.multiplier)
        if stop is not None and stop(total):
            st.intra = total
            st.intra_seconds = time.perf_counter() - t0
            return total, st, False
    st.intra = total
    t1 = time.perf_counter()
    st.intra_seconds = t1 - t0
    st.bytes_to_device += _inter_bytes(inter_engine, g, searches, False)
    inter_emb = 0
    for s in searches:
        cb = phases.stage()
        ts = time.perf_counter()
        done_emb, weight = inter_emb, s.weight
        raw = int(inter_engine.count(g, s.plan, progress=cb, **extra(stopper(
            lambda r: answer(st.intra, done_emb + r * weight)))))
        st.per_search.append({"edges": [list(e) for e in s.edges], "roots": int(s.plan.roots.size),
                              "raw": raw, "seconds": round(time.perf_counter() - ts, 6)})
        inter_emb += raw * s.weight
        total = answer(st.intra, inter_emb)
        if stop is not None and stop(total):
            st.inter = total - st.intra
            st.inter_seconds = time.perf_counter() - t1
            return total, st, False
    st.inter = answer(0, inter_emb)
    st.inter_seconds = time.perf_counter() - t1
    phases.finish()
    return st.intra + st.inter, st, True


def match_partitioned(pg: Partitioned, query: Query, mode: str = "embeddings",
                      induced: bool = False, anchors: Mapping[Any, Any] | None = None,
                      order: str = "ri", engine: Any = None, batch_size: int = 1 << 16,
                      limit: int | None = None, progress: Progress | None = None,
                      plan: Plan | None = None, stats: list | None = None,
                      inter_memory: str | None = None,
                      strategy: str = "parts") -> Iterator[np.ndarray]:
    """List ``query``'s matches in a partitioned graph, each once.

    Yields int64 arrays (rows x k) in query-vertex order with the graph's
    *internal* ids (the caller maps them to file ids). ``plan`` is the
    in-memory listing plan when the caller built it; ``stats``, when given,
    receives the :class:`PartitionStats` once the listing is done;
    ``inter_memory`` and ``strategy`` are as in :func:`count_partitioned`.
    """
    from ..engine.cpu import CpuEngine
    _check_strategy(strategy)
    engine = engine if engine is not None else CpuEngine()
    g = pg.graph
    if plan is None:
        plan = build_plan(g, query, mode=mode, induced=induced, anchors=anchors, order=order,
                          purpose="list")
    whole = whole_graph_memory(pg, engine, plan) if strategy == "auto" else None
    if whole is not None:
        eng, st = _whole_stats(pg, engine, plan, whole)
        t0 = time.perf_counter()
        if plan.empty_reason is None and (limit is None or int(limit) > 0):
            for batch in eng.match(g, plan, batch_size=batch_size, limit=limit,
                                   progress=progress):
                yield plan.to_query_order(np.asarray(batch, dtype=np.int64))
        st.whole_seconds = time.perf_counter() - t0
        if stats is not None:
            stats.append(st)
        return
    remaining = -1 if limit is None else int(limit)
    colors = anchor_colors(g, query, anchors)
    searches = (inter_searches(g, plan, pg.part, pg.boundary, colors, "list",
                               on_boundary=pg.on_boundary, cut_graph=pg.cut_graph)
                if plan.empty_reason is None and remaining != 0 and plan.k >= 2
                and pg.parts > 1 else [])
    inter_engine = _inter_engine(engine, g if pg.parts > 1 else None, inter_memory,
                                 [s.plan for s in searches])
    st = _stats(pg, engine, inter_engine, plan)
    if plan.empty_reason is not None or remaining == 0:
        if stats is not None:
            stats.append(st)
        return
    st.inter_searches = len(searches)
    perms = all_automorphisms(query, colors) if mode == "embeddings" and searches else None
    phases = _Phases(progress, pg.parts + len(searches))

    def emit(rows: np.ndarray) -> Iterator[np.ndarray]:
        nonlocal remaining
        for s in range(0, rows.shape[0], batch_size):
            chunk = rows[s:s + batch_size]
            if remaining >= 0:
                chunk = chunk[:remaining]
                remaining -= chunk.shape[0]
            if chunk.shape[0]:
                yield chunk
            if remaining == 0:
                return

    t0 = time.perf_counter()
    lps = local_plans(plan, pg.part, pg.local, pg.parts)
    for p, lp, sub in loaded_parts(pg, lps, engine, st):
        cb = phases.stage()
        if sub is None:
            continue
        members = pg.members(p).astype(np.int64)
        for batch in engine.match(sub, lp, batch_size=batch_size,
                                  limit=None if remaining < 0 else remaining, progress=cb):
            rows = members[lp.to_query_order(np.asarray(batch, dtype=np.int64))]
            st.intra += rows.shape[0]
            yield from emit(rows)
            if remaining == 0:
                break
        if remaining == 0:
            st.intra_seconds = time.perf_counter() - t0
            if stats is not None:
                stats.append(st)
            return
    t1 = time.perf_counter()
    st.intra_seconds = t1 - t0
    st.bytes_to_device += _inter_bytes(inter_engine, g, searches, True)
    for s in searches:
        cb = phases.stage()
        # a shared search lists one row per |Aut| embeddings: ask for enough rows
        fan = 1 if perms is None else len(perms)
        want = None if remaining < 0 else -(-remaining // fan)
        # a raw row becomes |Aut| rows: ask for batches that stay within batch_size
        for batch in inter_engine.match(g, s.plan, batch_size=max(1, batch_size // fan),
                                        limit=want, progress=cb):
            rows = s.plan.to_query_order(np.asarray(batch, dtype=np.int64))
            if perms is not None:
                rows = expand_rows(rows, perms)
            st.inter += rows.shape[0]
            yield from emit(rows)
            if remaining == 0:
                break
        if remaining == 0:
            break
    st.inter_seconds = time.perf_counter() - t1
    phases.finish()
    if stats is not None:
        stats.append(st)


def _check_strategy(strategy: str) -> None:
    if strategy not in ("parts", "auto"):
        raise ValueError(f"strategy must be 'parts' or 'auto', not {strategy!r}")


def describe(pg: Partitioned, plan: Plan, anchors: Mapping[Any, Any] | None,
             engine_name: str, purpose: str = "count", engine: Any = None,
             strategy: str = "parts") -> str:
    """``explain``'s lines for a partitioned run: parts, sizes, and the inter searches
    (``engine`` and ``strategy`` as in :func:`count_partitioned`: the whole graph's
    search, where that is what runs)."""
    g = pg.graph
    whole = whole_graph_memory(pg, engine, plan) if strategy == "auto" else None
    if whole is not None:
        where = {"device": "in device memory", "hybrid": "its row offsets in device "
                 "memory and its lists read from pinned host memory",
                 "pinned": "all of it read from pinned host memory"}.get(whole, whole)
        return (f"strategy: whole graph ({pg.parts} parts by {pg.method} would cut "
                f"{pg.cut_edges:,} edges, {pg.cut_edges / max(1, g.num_edges):.1%} of them, "
                f"at least {WHOLE_GRAPH_CUT:.0%}: most matches would need the "
                "inter-partition searches, which read the graph from host memory too)\n"
                f"  the in-memory plan on {engine_name} over the whole graph, {where}")
    byts = pg.part_bytes()
    lines = [f"strategy: partitioned ({pg.parts} parts by {pg.method}; {pg.cut_edges:,} cut "
             f"edges, {pg.boundary.size:,} boundary vertices)",
             f"  part bytes on the device: max {int(byts.max(initial=0)):,}, "
             f"total {int(byts.sum()):,} (whole graph {g.nbytes():,} in host memory)",
             f"  intra-partition: each part's induced subgraph on {engine_name}"]
    if plan.empty_reason is None and plan.k >= 2 and pg.parts > 1:
        colors = anchor_colors(g, plan.query, anchors)
        searches = inter_searches(g, plan, pg.part, pg.boundary, colors, purpose,
                                  on_boundary=pg.on_boundary, cut_graph=pg.cut_graph)
        names = plan.query.names
        where = ("the whole graph (on the GPU: in device memory if it fits the budget, "
                 "else its offsets there if they fit and its lists read from pinned host "
                 "memory, else all of it read from pinned host memory)" if engine_name == "gpu"
                 else "the whole graph in host memory")
        lines.append(f"  inter-partition: {len(searches)} search(es) on {engine_name} over "
                     f"{where}, from boundary vertices; a match is found from its smallest "
                     "cut edge (DupRemove)")
        for s in searches:
            edges = ", ".join(f"{names[a]}-{names[b]}" for a, b in s.edges)
            order = " ".join(names[int(u)] for u in s.plan.order)
            late = (f"; the leaf {names[int(s.plan.order[-1])]} last, counted from the cut "
                    "edges of its neighbour before the smallest cut edge matched"
                    if s.plan.cut_depth > 1 else "")
            lines.append(f"    prime edge(s) {edges}: order {order}, {s.plan.roots.size:,} roots, "
                         f"{int(s.plan.res_pos.size)} restriction(s){late}")
    return "\n".join(lines)
