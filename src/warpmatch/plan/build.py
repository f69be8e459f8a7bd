"""Building a :class:`~warpmatch.plan.plan.Plan` from a query and a data graph.

The planner is where a request meets the data graph: it validates that the
query can be asked of this graph, filters candidates (LDF/NLF, see
:mod:`warpmatch.plan.filter`; then, for labeled or anchored queries, refinement
to a fixed point, :mod:`warpmatch.plan.refine`), restricts anchored query vertices to their
anchor ids, chooses a connected matching order (:mod:`warpmatch.plan.order`,
RI by default), and compiles everything the engines check into flat arrays
(the contract in :mod:`warpmatch.plan.plan`).

Symmetry breaking follows Grochow and Kellis ("Network motif discovery using
subgraph enumeration and symmetry-breaking", RECOMB 2007): the restrictions
``f(a) < f(b)`` computed by :mod:`warpmatch.query.symmetry` select exactly one
embedding from every orbit of the (anchor-preserving) automorphism group.
They serve two purposes here:

- ``mode="subgraphs"``: each distinct subgraph once; ``multiplier = 1``;
- ``mode="embeddings"``, ``purpose="count"``: the same restricted search,
  times ``multiplier = |Aut|``. The automorphism group acts freely on the
  embeddings, so this count is exact and the search is up to |Aut| times
  smaller (6× for triangles, 24× for 4-cliques);
- ``mode="embeddings"``, ``purpose="list"``: every embedding must be listed,
  so no restrictions and ``multiplier = 1``.

Explicit candidate sets (rule 3 of the Plan contract): depth 0 always has one
(the roots). A later depth gets one when it is anchored (it must, the anchor
is a constraint that the other rules do not express), or when NLF or refinement
removed candidates that label and degree (rules 1–2, checked by every engine anyway)
would have kept; the latter only while the optional sets total at most
``2**24`` ids (64 MiB of int32), since for huge unlabeled-ish graphs a set that
removes little is not worth shipping to a device.
"""
from __future__ import annotations

import warnings
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import GraphError, QueryError, UnknownLabelWarning
from ..graph.csr import Graph
from ..query.model import ANY, Query
from ..query.symmetry import symmetry_breaking
from .filter import ldf_ids, ldf_key, ldf_mask, ldf_size, nlf_applies, nlf_keep
from .order import get_order, twins_last
from .plan import Plan
from .refine import refine_applies, refine_candidates

MODES = ("embeddings", "subgraphs")
PURPOSES = ("count", "list")
#: most ids the optional (non-root, non-anchored) explicit candidate sets may hold in all
OPTIONAL_CANDIDATE_BUDGET = 1 << 24
#: most bytes of per-query-vertex masks candidate refinement may hold (k x n)
REFINE_MASK_BYTES = 1 << 30


def build_plan(
    graph: Graph,
    query: Query,
    mode: str = "embeddings",
    induced: bool = False,
    anchors: Mapping[str | int, Iterable[int]] | None = None,
    order: str = "ri",
    purpose: str = "count",
    use_nlf: bool = True,
    refine: bool | None = None,
) -> Plan:
    """Compile ``query`` against ``graph`` into a :class:`Plan`.

    Parameters
    ----------
    graph : Graph
        The data graph.
    query : Query
        The query graph; its directedness must match the graph's.
    mode : {"embeddings", "subgraphs"}, optional
        Count every injective map, or every distinct subgraph once. The
        default is ``"embeddings"``.
    induced : bool, optional
        Also forbid data edges between images of non-adjacent query vertices
        (per ordered pair if directed). The default is ``False``.
    anchors : mapping, optional
        ``{query vertex name or index: iterable of data vertex ids}``, ids in
        the graph file's id space. The vertex is restricted to those ids (the
        search starts there). The default is ``None``: no anchors.
    order : str, optional
        A registered matching order (:data:`~warpmatch.plan.order.ORDER_NAMES`).
        The default is ``"ri"``.
    purpose : {"count", "list"}, optional
        What the plan is for; with ``"count"``, embeddings are counted with
        symmetry breaking and a multiplier. The default is ``"count"``.
    use_nlf : bool, optional
        Apply the neighbour-label frequency filter. The default is ``True``.
    refine : bool or None, optional
        Refine the candidate sets by neighbourhood consistency to a fixed point
        (:mod:`warpmatch.plan.refine`). The default, ``None``, refines where it
        pays: a vertex-labeled graph with a labeled query vertex, or anchors.

    Returns
    -------
    Plan
        If planning proves the answer is 0 (a query label absent from the
        graph, more query than data vertices, a vertex without candidates), the
        plan has no roots and ``empty_reason`` says why.

    Raises
    ------
    QueryError
        Mode or purpose unknown, directedness mismatch, labels the graph cannot
        have, unknown anchor vertex names, unknown order.
    GraphError
        An anchor id is not a vertex of the graph ("anchor a=99: no vertex
        with this id in graph 'web'").

    Examples
    --------
    >>> from warpmatch.graph.csr import Graph
    >>> from warpmatch.query.model import Query
    >>> g = Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3])
    >>> p = build_plan(g, Query.from_edges([(0, 1), (1, 2), (2, 0)]))
    >>> p.k, p.multiplier
    (3, 6)
    """
    _validate(graph, query, mode, purpose)
    order_fn = get_order(order)
    k = query.k
    itype = graph.indices.dtype
    anchor_sets = _resolve_anchors(graph, query, anchors)

    empty_reason: str | None = None
    if k > graph.n:
        empty_reason = (f"the query has {k} vertices but the graph {graph.name!r} has only "
                        f"{graph.n}: no injective map exists")
    if empty_reason is None:
        empty_reason = _unknown_labels(graph, query)

    # per query vertex: explicit candidate ids, or None for "LDF only" (not
    # materialised, so an unlabeled query on a huge graph holds no k×n arrays)
    cand: list[np.ndarray | None] = [None] * k
    ldf_count = np.zeros(k, dtype=np.int64)
    counts = np.zeros(k, dtype=np.int64)
    nlf_removed = np.zeros(k, dtype=bool)
    if refine is None:
        refine = refine_applies(graph, query, bool(anchor_sets))
    # refinement holds one mask per query vertex: not for a graph where k masks are huge
    refine = bool(refine) and k * graph.n <= REFINE_MASK_BYTES
    masks: list[np.ndarray] = []
    ldf_memo: dict[tuple, np.ndarray] = {}

    def ldf(u: int) -> np.ndarray:
        # query vertices with the same label and degree needs share one mask (read-only
        # here): on a graph of 10^7 vertices each mask is a pass over every degree
        key = ldf_key(query, u)
        if key not in ldf_memo:
            ldf_memo[key] = ldf_mask(graph, query, u)
        return ldf_memo[key]

    if empty_reason is None:
        for u in range(k):
            ids: np.ndarray | None = None
            if refine or u in anchor_sets:
                mask = ldf(u)
                if refine:
                    masks.append(mask)
                ldf_count[u] = np.count_nonzero(mask)
                if u in anchor_sets:
                    # anchored: filter only the anchor ids (cheap however large the graph)
                    ids = anchor_sets[u][mask[anchor_sets[u]]]
            else:
                # the filter's size (and the roots' ids below), kept per graph
                # (filter.ldf_size, ldf_ids): no pass over the vertices when the graph
                # was planned on before
                ldf_count[u] = ldf_size(graph, query, u)
            if use_nlf and nlf_applies(graph, query, u):
                base = ldf_ids(graph, query, u) if ids is None else ids
                ids = base[nlf_keep(graph, query, u, base)]
                nlf_removed[u] = u not in anchor_sets and ids.size < ldf_count[u]
            cand[u] = ids
            counts[u] = ldf_count[u] if ids is None else ids.size
            if counts[u] == 0 and empty_reason is None:
                if u in anchor_sets and anchor_sets[u].size == 0:
                    empty_reason = (f"query vertex {query.names[u]} is anchored to no ids: "
                                    f"the answer is 0")
                else:
                    empty_reason = _no_candidate_reason(graph, query, u, u in anchor_sets)
    filter_counts = {u: {"ldf": int(ldf_count[u]), "nlf": int(counts[u])} for u in range(k)}
    passes = 0
    if refine and empty_reason is None:
        refined, passes = refine_candidates(graph, query, cand, masks)
        for u in range(k):
            if refined[u] is not cand[u]:
                cand[u] = refined[u]
                counts[u] = refined[u].size
                nlf_removed[u] = u not in anchor_sets     # an explicit set pays now
            filter_counts[u]["refined"] = int(counts[u])
            if counts[u] == 0 and empty_reason is None:
                empty_reason = (f"no data vertex can match query vertex {query.names[u]}: "
                                "candidate refinement (every query edge needs a candidate "
                                "neighbour) removed them all; the answer is 0")
    del masks

    first = None
    if anchor_sets:
        first = min(anchor_sets, key=lambda u: (int(counts[u]), anchor_sets[u].size, u))
    vorder = order_fn(query, counts.tolist(), first)
    if purpose == "count" and not induced and order != "input":
        # twins last, where count mode counts them from one intersection (plan.leaves)
        vorder = twins_last(query, vorder)
    vorder = np.asarray(vorder, dtype=np.int32)

    # ------------------------------------------------------ symmetry breaking
    colors = _anchor_colors(k, anchor_sets)
    pairs, aut_size = symmetry_breaking(query, colors=colors)
    aut_size = int(aut_size)
    use_restrictions = mode == "subgraphs" or purpose == "count"
    multiplier = aut_size if (mode == "embeddings" and purpose == "count") else 1
    bn, na, res = _depth_rows(query, vorder, pairs if use_restrictions else [], induced)

    # --------------------------------------------------- candidate sets
    restricted = np.zeros(k, dtype=bool)
    restricted[0] = True
    slices: list[np.ndarray] = []
    empty_ids = np.empty(0, dtype=itype)
    if empty_reason is not None:
        slices = [empty_ids] * k
    else:
        budget = OPTIONAL_CANDIDATE_BUDGET
        for i in range(k):
            u = int(vorder[i])
            ids = cand[u]
            if i == 0:
                if ids is None:     # (read-only and shared: copied below)
                    ids = ldf_ids(graph, query, u)
                slices.append(ids)
            elif u in anchor_sets:
                restricted[i] = True
                slices.append(ids)
            elif nlf_removed[u] and ids is not None and ids.size <= budget:
                restricted[i] = True
                budget -= ids.size
                slices.append(ids)
            else:
                slices.append(empty_ids)
    cand_ptr = np.zeros(k + 1, dtype=np.int64)
    cand_ptr[1:] = np.cumsum([s.size for s in slices])
    # one copy of the (possibly 10^7) roots: the plan owns its arrays (the roots may be
    # filter.ldf_ids' shared read-only set; a memcpy, not a pass over the vertices)
    if all(s.size == 0 for s in slices[1:]) and slices[0].dtype == itype:
        cand_ids = np.array(slices[0], order="C")
    else:
        cand_ids = np.concatenate(slices, dtype=itype, casting="same_kind")

    return Plan(
        k=k,
        order=vorder,
        **_vertex_arrays(query, vorder), **_edge_arrays(bn, na, res),
        cand_ptr=cand_ptr, cand_ids=cand_ids, cand_restricted=restricted,
        multiplier=multiplier, mode=mode, induced=bool(induced),
        directed=bool(graph.directed), aut_size=aut_size, order_name=order,
        query=query, anchors={u: int(s.size) for u, s in anchor_sets.items()},
        empty_reason=empty_reason, filter_counts=filter_counts, refine_passes=passes,
    )


def anchor_colors(graph: Graph, query: Query,
                  anchors: Mapping[str | int, Iterable[int]] | None) -> list[int] | None:
    """The colours :func:`build_plan` gives the automorphism group for ``anchors``:
    automorphisms preserve them (0 unanchored, one colour per distinct anchor set)."""
    return _anchor_colors(query.k, _resolve_anchors(graph, query, anchors))


def restriction_pairs(plan: Plan) -> list[tuple[int, int]]:
    """The plan's symmetry-breaking restrictions as query-vertex pairs ``(a, b)``: ``f(a) < f(b)``.

    The inverse of what :func:`build_plan` does with the pairs of
    :func:`~warpmatch.query.symmetry.symmetry_breaking`: independent of the order.
    """
    out = []
    for i in range(plan.k):
        for t in range(int(plan.res_ptr[i]), int(plan.res_ptr[i + 1])):
            j = int(plan.res_pos[t])
            a, b = int(plan.order[j]), int(plan.order[i])
            out.append((a, b) if int(plan.res_sign[t]) == 1 else (b, a))
    return out


def reorder_plan(plan: Plan, vorder: Sequence[int], roots: np.ndarray,
                 pairs: Sequence[tuple[int, int]] | None = None, **changes: Any) -> Plan:
    """The same search as ``plan`` in another matching order, from other roots.

    Every query vertex keeps the candidate set it had (rule 3), and the
    restrictions are ``pairs`` (``f(a) < f(b)``; the default, ``None``, keeps
    the plan's own, :func:`restriction_pairs`). For searches that must start
    somewhere else than the planner chose, e.g. at a given query edge (the
    inter-partition search of :mod:`warpmatch.partition`).

    Parameters
    ----------
    plan : Plan
        A plan of ``plan.query``.
    vorder : sequence of int
        The new order: a permutation of the query vertices in which every vertex
        after the first has an earlier neighbour.
    roots : numpy.ndarray
        Sorted unique candidates of ``vorder[0]`` (depth 0 is always explicit);
        the caller's contract: a subset of what that vertex may take.
    pairs : sequence of (int, int), optional
        The restrictions. The default, ``None``, keeps the plan's.
    **changes
        Other fields to set (``multiplier``, ``cut_part``, ...).

    Returns
    -------
    Plan
    """
    import dataclasses
    query, k = plan.query, plan.k
    vorder = np.asarray(vorder, dtype=np.int32)
    if sorted(vorder.tolist()) != list(range(k)):
        raise ValueError(f"order {vorder.tolist()} is not a permutation of 0..{k - 1}")
    if pairs is None:
        pairs = restriction_pairs(plan)
    depth_old = plan.inverse_order
    slices, restricted = [], np.zeros(k, dtype=bool)
    for i, u in enumerate(vorder.tolist()):
        if i == 0:
            slices.append(np.asarray(roots, dtype=plan.cand_ids.dtype))
            restricted[0] = True
            continue
        d = int(depth_old[u])
        if plan.cand_restricted[d]:
            restricted[i] = True
            slices.append(plan.cand_ids[plan.cand_ptr[d]:plan.cand_ptr[d + 1]])
        else:
            slices.append(plan.cand_ids[:0])
    cand_ptr = np.zeros(k + 1, dtype=np.int64)
    cand_ptr[1:] = np.cumsum([x.size for x in slices])
    cand_ids = np.ascontiguousarray(np.concatenate(slices).astype(plan.cand_ids.dtype,
                                                                 copy=False))
    bn, na, res = _depth_rows(query, vorder, list(pairs), plan.induced)
    return dataclasses.replace(plan, order=vorder, **_vertex_arrays(query, vorder),
                               **_edge_arrays(bn, na, res), cand_ptr=cand_ptr,
                               cand_ids=cand_ids, cand_restricted=restricted, **changes)


# ---------------------------------------------------------------- helpers
def _depth_rows(query: Query, vorder: np.ndarray, pairs: Sequence[tuple[int, int]],
                induced: bool) -> tuple[list, list, list]:
    """Per depth of ``vorder``: backward edges ``(j, dir, label)``, induced non-edges
    ``(j, dir)`` and restrictions ``(j, sign)`` (the Plan contract's rules 5-7)."""
    k = query.k
    depth_of = np.empty(k, dtype=np.int32)
    depth_of[vorder] = np.arange(k, dtype=np.int32)
    res: list[list[tuple[int, int]]] = [[] for _ in range(k)]
    for a, b in pairs:                           # f(a) < f(b)
        da, db = int(depth_of[a]), int(depth_of[b])
        if db > da:
            res[db].append((da, 1))              # at b's depth: c > M[da]
        else:
            res[da].append((db, -1))             # at a's depth: c < M[db]
    A = query.adjacency()
    L = query.edge_label_matrix()
    bn: list[list[tuple[int, int, int]]] = [[] for _ in range(k)]
    na: list[list[tuple[int, int]]] = [[] for _ in range(k)]
    for i in range(k):
        u = int(vorder[i])
        for j in range(i):
            w = int(vorder[j])
            if query.directed:
                if A[w, u]:
                    bn[i].append((j, 0, int(L[w, u])))     # data edge M[j] -> c
                elif induced:
                    na[i].append((j, 0))
                if A[u, w]:
                    bn[i].append((j, 1, int(L[u, w])))     # data edge c -> M[j]
                elif induced:
                    na[i].append((j, 1))
            elif A[w, u]:
                bn[i].append((j, 0, int(L[w, u])))
            elif induced:
                na[i].append((j, 0))
    return bn, na, res


def _vertex_arrays(query: Query, vorder: np.ndarray) -> dict[str, np.ndarray]:
    """The Plan's per-depth label and degree arrays (rules 1-2) for ``vorder``."""
    deg_out = query.out_degree() if query.directed else query.degree()
    deg_in = query.in_degree() if query.directed else query.degree()
    return {"vlabel": np.ascontiguousarray(query.vertex_labels[vorder], dtype=np.int32),
            "min_out_deg": np.ascontiguousarray(deg_out[vorder], dtype=np.int32),
            "min_in_deg": np.ascontiguousarray(deg_in[vorder], dtype=np.int32)}


def _edge_arrays(bn: list, na: list, res: list) -> dict[str, np.ndarray]:
    """:func:`_depth_rows`' lists as the Plan's flat arrays."""
    bn_ptr, (bn_pos, bn_dir, bn_el) = _flatten(bn, (np.int32, np.int8, np.int32))
    na_ptr, (na_pos, na_dir) = _flatten(na, (np.int32, np.int8))
    res_ptr, (res_pos, res_sign) = _flatten(res, (np.int32, np.int8))
    return {"bn_ptr": bn_ptr, "bn_pos": bn_pos, "bn_dir": bn_dir, "bn_elabel": bn_el,
            "na_ptr": na_ptr, "na_pos": na_pos, "na_dir": na_dir,
            "res_ptr": res_ptr, "res_pos": res_pos, "res_sign": res_sign}


def _validate(graph: Graph, query: Query, mode: str, purpose: str) -> None:
    """The checks that make a query askable of this graph (QueryError otherwise)."""
    if mode not in MODES:
        raise QueryError(f"unknown mode {mode!r}: use 'embeddings' (every injective map) or "
                         f"'subgraphs' (each distinct subgraph once)")
    if purpose not in PURPOSES:
        raise QueryError(f"unknown plan purpose {purpose!r}: use 'count' or 'list'")
    if graph.directed and not query.directed:
        raise QueryError("the graph is directed but the query is undirected: write query edges "
                         "as a->b, or read the graph as undirected")
    if query.directed and not graph.directed:
        raise QueryError("the graph is undirected but the query is directed: write query edges "
                         "as a-b, or read the graph as directed")
    if query.labeled and graph.vertex_labels is None:
        u = int(np.flatnonzero(query.vertex_labels != ANY)[0])
        raise QueryError(f"query vertex {query.names[u]} has label "
                         f"{int(query.vertex_labels[u])} but the graph {graph.name!r} has no "
                         f"vertex labels: drop the query's labels or read a labeled graph")
    if query.edge_labeled and graph.edge_labels is None:
        e = int(np.flatnonzero(query.edge_labels != ANY)[0])
        a, b = (query.names[x] for x in query.edges[e])
        raise QueryError(f"query edge {a}-{b} has label {int(query.edge_labels[e])} but the "
                         f"graph {graph.name!r} has no edge labels: drop the query's edge "
                         f"labels or read a graph with edge labels")


def _unknown_labels(graph: Graph, query: Query) -> str | None:
    """Warn (UnknownLabelWarning) about query labels absent from the graph; the reason, or None."""
    reasons = []
    if graph.vertex_labels is not None and query.labeled:
        present = np.unique(graph.vertex_labels)
        for u in range(query.k):
            lab = int(query.vertex_labels[u])
            if lab != ANY and not np.isin(lab, present):
                reasons.append(f"query vertex {query.names[u]} has label {lab}, which no vertex "
                               f"of {graph.name!r} has")
    if graph.edge_labels is not None and query.edge_labeled:
        present = np.unique(graph.edge_labels)
        for e in range(query.m):
            lab = int(query.edge_labels[e])
            if lab != ANY and not np.isin(lab, present):
                a, b = (query.names[x] for x in query.edges[e])
                reasons.append(f"query edge {a}-{b} has label {lab}, which no edge of "
                               f"{graph.name!r} has")
    if not reasons:
        return None
    reason = "; ".join(reasons) + ": the answer is 0"
    warnings.warn(reason, UnknownLabelWarning, stacklevel=3)
    return reason


def _resolve_anchors(graph: Graph, query: Query,
                     anchors: Mapping[str | int, Iterable[int]] | None) -> dict[int, np.ndarray]:
    """{query vertex index: sorted unique internal ids}; names and ids validated."""
    out: dict[int, np.ndarray] = {}
    if not anchors:
        return out
    for key, ids in anchors.items():
        u = query.index_of(key)
        if u in out:
            raise QueryError(f"query vertex {query.names[u]} is anchored twice")
        if isinstance(ids, (str, bytes)):
            raise QueryError(f"anchor ids for {query.names[u]} must be integers, "
                             f"not the string {ids!r}")
        if isinstance(ids, (int, np.integer)):
            ids = [ids]
        ext = ids if isinstance(ids, np.ndarray) else list(ids)
        try:
            internal = graph.to_internal(ext, what="anchor id")
        except GraphError:
            raise GraphError(_missing_anchor(graph, query.names[u], ext)) from None
        out[u] = np.unique(internal).astype(graph.indices.dtype)
    return out


def _missing_anchor(graph: Graph, name: str, ids: Iterable[int]) -> str:
    """The message for the first of ``ids`` that is not a vertex (error path only).

    It reads as the ``--anchor`` option is written ("anchor a=99999999: ...")
    so that neither the query vertex nor the id can be taken for the other.
    """
    for x in np.asarray(ids, dtype=object).ravel().tolist():
        x = int(x)
        if not -2**63 <= x < 2**63:
            why = " (outside the int64 range of vertex ids)"
        elif graph.ids is None:
            if 0 <= x < graph.n:
                continue
            why = f" (its ids are 0..{graph.n - 1})"
        elif np.any(graph.ids == x):
            continue
        else:
            why = ""
        return f"anchor {name}={x}: no vertex with this id in graph {graph.name!r}{why}"
    return f"anchor {name}: an id is not a vertex of graph {graph.name!r}"   # not reached


def _anchor_colors(k: int, anchor_sets: dict[int, np.ndarray]) -> list[int] | None:
    """Colour classes for the automorphism group: 0 unanchored, one colour per anchor set."""
    if not anchor_sets:
        return None
    colors = [0] * k
    seen: dict[bytes, int] = {}
    for u in sorted(anchor_sets):
        key = anchor_sets[u].astype(np.int64).tobytes()
        colors[u] = seen.setdefault(key, len(seen) + 1)
    return colors


def _no_candidate_reason(graph: Graph, query: Query, u: int, anchored: bool) -> str:
    lab = int(query.vertex_labels[u])
    parts = []
    if lab != ANY:
        parts.append(f"label {lab}")
    if query.directed:
        parts.append(f"out-degree >= {int(query.out_degree()[u])}, "
                     f"in-degree >= {int(query.in_degree()[u])}")
    else:
        parts.append(f"degree >= {int(query.degree()[u])}")
    if graph.vertex_labels is not None and nlf_applies(graph, query, u):
        parts.append("enough neighbours of each label")
    if anchored:
        parts.append("among its anchor ids")
    return (f"no data vertex can match query vertex {query.names[u]} "
            f"({', '.join(parts)}): the answer is 0")


def _flatten(rows: list[list[tuple]], dtypes: tuple) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per-depth lists of tuples -> (ptr int32[k+1], one C-contiguous array per field)."""
    ptr = np.zeros(len(rows) + 1, dtype=np.int32)
    ptr[1:] = np.cumsum([len(r) for r in rows])
    flat = [t for r in rows for t in r]
    cols = [np.ascontiguousarray(np.array([t[f] for t in flat], dtype=dt))
            for f, dt in enumerate(dtypes)]
    return ptr, cols

