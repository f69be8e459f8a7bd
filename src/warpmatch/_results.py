"""What a count returns: :class:`CountResult` and :func:`describe_count`, the sentence
every printed count uses.

Split from :mod:`warpmatch.api` (which re-exports both): the result type and its
wording, apart from the functions that compute it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .graph import Graph
from .plan import Plan
from .query import Query

__all__ = ["CountResult", "describe_count"]


def describe_count(value: int, mode: str, induced: bool, name: str | None = None,
                   partial: str | None = None) -> str:
    """The sentence every printed count uses, so its semantics are never ambiguous.

    Parameters
    ----------
    value : int
        The count.
    mode : {"embeddings", "subgraphs"}
    induced : bool
    name : str, optional
        The query's name, printed first.
    partial : str, optional
        Why the count stopped early (``"time limit 5 s reached"``): the value
        is then a lower bound, and the sentence says so. The default is
        ``None``: a complete count.

    Returns
    -------
    str

    Examples
    --------
    >>> describe_count(1234, "embeddings", False, "triangle")
    'triangle: 1,234 embeddings (non-induced)'
    >>> describe_count(1, "subgraphs", True)
    '1 subgraph (induced)'
    >>> describe_count(1234, "embeddings", False, "triangle", partial="time limit 5 s reached")
    'triangle: at least 1,234 embeddings (non-induced; partial: time limit 5 s reached)'
    """
    noun = mode if value != 1 else mode[:-1]
    kind = "induced" if induced else "non-induced"
    if partial:
        text = f"at least {value:,} {noun} ({kind}; partial: {partial})"
    else:
        text = f"{value:,} {noun} ({kind})"
    return f"{name}: {text}" if name else text



@dataclass(frozen=True)
class CountResult:
    """A count with everything needed to report it.

    Attributes
    ----------
    count : int
        The answer (already multiplied by ``plan.multiplier``).
    mode : str
    induced : bool
    backend : str
        The engine that ran (``"cpu"``, ``"gpu"``, ``"reference"``; on a Dask
        cluster ``"dask:"`` and the workers' engines, e.g. ``"dask:cpu"``), or
        ``"planner"`` when planning alone proved the answer is 0.
    seconds : float
        Time in the engine (excluding planning and warm-up).
    plan_seconds : float
        Time to build the plan.
    plan : Plan
    query : Query
    graph : Graph
    warmup_seconds : float
        One-time set-up of the engine that this call paid before counting
        (see :func:`warm_up`), 0.0 once the process has paid it. The default
        is 0.0.
    partial : str or None
        Why the count stopped before the end (``"limit 1,000 reached"``,
        ``"time limit 5 s reached"``): ``count`` is then a lower bound.
        ``None`` (the default) for a complete count.
    distributed : dict or None
        For a count run by a Dask cluster (``client=``): its workers, shards,
        how the graph reached them, the seconds spent before counting
        (checking workers, shipping graph and plan: not in ``seconds``) and
        each worker's seconds of counting. ``None`` (the default) in one process.
    compile_seconds : float
        Of ``seconds``, the time the engine spent compiling kernels for this
        plan (the GPU engine's NVRTC modules on a plan's first use; 0.0 when
        they were cached or the engine compiles nothing per plan). The default
        is 0.0.
    gpu_module : str or None
        ``"specialised"`` or ``"generic"``: which module the GPU engine ran
        (``GpuEngine(compile=...)``, :mod:`warpmatch.engine.gpu.modules`); ``None``
        (the default) for the other engines.
    partition : dict or None
        For a count run by partitions (:mod:`warpmatch.partition`): the parts,
        the cut, the intra-partition share, the seconds of each stage and the
        bytes moved to the device. ``None`` (the default) in memory.
    edge_labels : dict or None
        For a count run on the graph of the query's edge labels only
        (:func:`warpmatch._strategies.label_graph`): those labels, its edges and the
        whole graph's.
        ``None`` (the default) when it ran on the whole graph.
    vertex_order : str
        ``"degree"`` when the search ran on the copy of the graph with ids ascending
        by degree (:func:`warpmatch._strategies.degree_graph`; building it, once per
        graph, is in ``plan_seconds``), ``"given"`` (the default) otherwise.
    raced : bool
        Whether a second matching order raced the first
        (:mod:`warpmatch.engine.race`); ``plan.order_name`` names the one that
        answered. The default is ``False``.
    raced_on : str or None
        ``"cpu"`` where the CPU engine's race beside the GPU engine's search
        (RI's order or a rival, :func:`warpmatch.engine.race.count_beside`) answered;
        ``None`` (the default) where the count's own engine did.
    factored : dict or None
        For a full count factored at a cut vertex (:mod:`warpmatch.plan.factor`,
        :func:`warpmatch._factored.count_factored`): the cut vertex, the groups' vertex
        names, the roots tried, the engine calls and the seconds of the factored count
        (``seconds``) and of the direct search before it (``direct_s``). ``None`` (the
        default) where the direct search answered.
    hombasis : dict or None
        For a full count summed over the query's quotients
        (:func:`warpmatch._hombasis.count_hombasis`): the quotients, the primes and the
        seconds of that sum (``seconds``) and of the direct search before it
        (``direct_s``). ``None`` (the default) where another way answered.
    cliques : dict or None
        For a full count of a complete labeled query from the data's cliques
        (:func:`warpmatch._cliques.count_cliques`): the cliques, the pivoting tree's
        leaves, the data vertices kept, the seconds of that count (``seconds``) and of the
        direct search before it (``direct_s``). ``None`` (the default) where another way
        answered.
    """

    count: int
    mode: str
    induced: bool
    backend: str
    seconds: float
    plan_seconds: float
    plan: Plan
    query: Query
    graph: Graph
    warmup_seconds: float = 0.0
    partial: str | None = None
    distributed: dict | None = None
    partition: dict | None = None
    compile_seconds: float = 0.0
    gpu_module: str | None = None
    edge_labels: dict | None = None
    vertex_order: str = "given"
    raced: bool = False
    raced_on: str | None = None
    factored: dict | None = None
    hombasis: dict | None = None
    cliques: dict | None = None

    def describe(self) -> str:
        """``"triangle: 1,234 embeddings (non-induced)"`` (``"at least ..."`` when partial)."""
        return describe_count(self.count, self.mode, self.induced, self.query.name,
                              partial=self.partial)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready facts (what ``warpmatch count --json`` prints)."""
        return {
            "count": int(self.count),
            "mode": self.mode,
            "induced": bool(self.induced),
            "backend": self.backend,
            "seconds": round(self.seconds, 6),
            "plan_seconds": round(self.plan_seconds, 6),
            "warmup_seconds": round(self.warmup_seconds, 6),
            "compile_seconds": round(self.compile_seconds, 6),
            "gpu_module": self.gpu_module,
            "multiplier": int(self.plan.multiplier),
            "query": self.query.name,
            "query_dsl": self.query.to_dsl(),
            "query_vertices": int(self.query.k),
            "query_edges": int(self.query.m),
            "directed": bool(self.graph.directed),
            "graph": self.graph.name,
            "vertices": int(self.graph.n),
            "edges": int(self.graph.num_edges),
            "anchors": {self.query.names[int(u)]: int(n) for u, n in self.plan.anchors.items()}
            if self.plan.anchors else {},
            "empty_reason": self.plan.empty_reason,
            "partial": self.partial is not None,
            "partial_reason": self.partial,
            "semantics": self.describe(),
            **({"distributed": self.distributed} if self.distributed is not None else {}),
            "strategy": (self.partition.get("strategy", "partitioned")
                         if self.partition is not None else "in-memory"),
            "vertex_order": self.vertex_order,
            "order": self.plan.order_name,
            "order_raced": bool(self.raced),
            "order_raced_on": self.raced_on,
            **({"factored": self.factored} if self.factored is not None else {}),
            **({"hombasis": self.hombasis} if self.hombasis is not None else {}),
            **({"cliques": self.cliques} if self.cliques is not None else {}),
            **({"partition": self.partition} if self.partition is not None else {}),
            **({"edge_label_partitions": self.edge_labels}
               if self.edge_labels is not None else {}),
        }
