"""The Plan: everything an engine needs to enumerate a query, as flat arrays.

Planning is pure Python and engine-independent (DESIGN.md, "The Plan is the
seam"). An engine receives a :class:`Plan` and a :class:`~warpmatch.graph.Graph`
and returns a raw count or batches of matches; it never looks at the Query.

Conventions every engine follows
--------------------------------
Matching proceeds depth by depth: at depth ``i`` the engine picks a data vertex
``M[i]`` for query vertex ``order[i]``. A candidate ``c`` for depth ``i`` must
satisfy, in any order:

1. label: ``vlabel[i] == -1`` or ``vertex_labels[c] == vlabel[i]``;
2. degree (LDF): ``out_deg(c) >= min_out_deg[i]`` and ``in_deg(c) >= min_in_deg[i]``
   (for undirected graphs in = out);
3. candidate set: if ``cand_restricted[i]``, ``c`` is in the sorted array
   ``cand_ids[cand_ptr[i]:cand_ptr[i+1]]`` (anchors, NLF filtering). Depth 0
   is always restricted: its candidates are the roots of the search;
4. injectivity: ``c`` differs from ``M[0..i-1]``;
5. backward edges: for each ``t`` in ``bn_ptr[i]:bn_ptr[i+1]`` with
   ``j = bn_pos[t]``: if ``bn_dir[t] == 0`` then ``c`` is an out-neighbour of
   ``M[j]`` (data edge ``M[j] -> c``; for undirected graphs just adjacency),
   if ``bn_dir[t] == 1`` then ``c`` is an in-neighbour of ``M[j]`` (edge
   ``c -> M[j]``); and if ``bn_elabel[t] != -1`` that edge's label equals it.
   Every depth ``i > 0`` has at least one backward edge (the order is
   connected), so candidates are generated from a backward neighbour's list;
6. induced non-edges: for each ``t`` in ``na_ptr[i]:na_ptr[i+1]`` with
   ``j = na_pos[t]``: if ``na_dir[t] == 0`` there is no data edge ``M[j] -> c``,
   if ``na_dir[t] == 1`` there is no data edge ``c -> M[j]`` (undirected: no edge);
7. symmetry breaking: for each ``t`` in ``res_ptr[i]:res_ptr[i+1]`` with
   ``j = res_pos[t]``: ``c > M[j]`` if ``res_sign[t] == 1``, ``c < M[j]`` if ``-1``;
8. cut (only when ``cut_part`` is set: the inter-partition search of
   :mod:`warpmatch.partition`, PBE's DupRemove): with ``j = cut_depth``, the
   *prime* data edge is ``M[0] -> M[j]`` (``cut_prime == 0``; ``{M[0], M[j]}``
   if undirected) or ``M[j] -> M[0]`` (``cut_prime == 1``), and depth ``j`` has
   that backward edge to depth 0; at depth ``j`` ``cut_part[c] !=
   cut_part[M[0]]``; every other matched data edge (a backward edge of rule 5)
   whose endpoints lie in different parts must come *after* the prime edge in
   the order of ordered pairs ``(x, y)`` (``(min, max)`` if undirected). So a
   match is found exactly once, from its smallest cut edge, and a match inside
   one part not at all. The edges matched before depth ``j`` are checked at
   depth ``j`` (the prime is known there); depths ``1..j-1`` have no rule 8.
   ``cut_depth`` is 1 except where the prime's second vertex is a leaf of the
   query matched last (:mod:`warpmatch.partition.plans`), so that the rest of
   the query is not searched once per cut edge of ``M[0]``. ``cut_graph``, when
   set, holds each vertex's cut neighbours (the graph's edges whose endpoints lie
   in different parts, as a :class:`~warpmatch.graph.Graph` with the same ids):
   an engine may then count a last plain leaf under rule 8 from its lists
   (two binary searches) instead of checking each candidate.

A full assignment ``M[0..k-1]`` is a raw match. ``count = raw matches ×
multiplier``. Matches are produced in *depth* order; :meth:`Plan.to_query_order`
permutes columns to query-vertex order.

All index arrays are int32 (``cand_ptr`` int64); they are C-contiguous so
numba and CUDA take them as they are.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class Plan:
    """A compiled matching plan; see the module docstring for the contract."""

    k: int
    order: np.ndarray            # int32[k]: query vertex matched at depth i
    vlabel: np.ndarray           # int32[k]: required vertex label per depth, -1 any
    min_out_deg: np.ndarray      # int32[k]
    min_in_deg: np.ndarray       # int32[k]
    bn_ptr: np.ndarray           # int32[k+1]
    bn_pos: np.ndarray           # int32[*]: earlier depth j
    bn_dir: np.ndarray           # int8[*]: 0 = c in N_out(M[j]); 1 = c in N_in(M[j])
    bn_elabel: np.ndarray        # int32[*]: required edge label, -1 any
    na_ptr: np.ndarray           # int32[k+1]
    na_pos: np.ndarray           # int32[*]
    na_dir: np.ndarray           # int8[*]: 0 = no edge M[j]->c; 1 = no edge c->M[j]
    res_ptr: np.ndarray          # int32[k+1]
    res_pos: np.ndarray          # int32[*]
    res_sign: np.ndarray         # int8[*]: +1 c > M[j]; -1 c < M[j]
    cand_ptr: np.ndarray         # int64[k+1]
    cand_ids: np.ndarray         # graph index dtype [*], each depth's slice sorted
    cand_restricted: np.ndarray  # bool[k]; always True at depth 0
    multiplier: int = 1
    mode: str = "embeddings"     # "embeddings" | "subgraphs"
    induced: bool = False
    directed: bool = False
    aut_size: int = 1            # |Aut| used for symmetry breaking (anchor-preserving)
    order_name: str = "ri"
    query: Any = None            # the Query (for explain and output); engines ignore it
    anchors: dict = field(default_factory=dict)   # query vertex -> #anchor ids (for explain)
    empty_reason: str | None = None   # set when planning proved the answer is 0
    filter_counts: dict = field(default_factory=dict)  # u -> {"ldf", "nlf"[, "refined"]}
    refine_passes: int = 0              # candidate refinement passes (0: not refined)
    cut_part: np.ndarray | None = None   # int32[n]: part per data vertex (rule 8), or None
    cut_prime: int = 0                  # rule 8: 0 prime edge M[0] -> M[j], 1 M[j] -> M[0]
    cut_depth: int = 1                  # rule 8: j, the depth of the prime's second vertex
    cut_graph: Any = None               # rule 8: each vertex's cut neighbours (a Graph), or None

    @property
    def roots(self) -> np.ndarray:
        """Candidates of depth 0: the roots of the search tree."""
        return self.cand_ids[self.cand_ptr[0]:self.cand_ptr[1]]

    def candidates(self, depth: int) -> np.ndarray | None:
        """Explicit sorted candidate set of ``depth``, or ``None`` if unrestricted."""
        if not self.cand_restricted[depth]:
            return None
        return self.cand_ids[self.cand_ptr[depth]:self.cand_ptr[depth + 1]]

    def with_candidates(self, sets: dict[int, np.ndarray]) -> "Plan":
        """A copy whose depths in ``sets`` have these candidate sets instead.

        For splitting one search into disjoint parts (the distributed layer's
        shards): the matches of the copies whose depth-``d`` sets partition the
        original set are the original matches, each in exactly one copy.

        Parameters
        ----------
        sets : dict
            ``{depth: ids}``; ``ids`` sorted, unique, of ``cand_ids``' dtype,
            each a subset of what depth ``d`` may take (the caller's contract:
            they replace the original set, they are not intersected with it).

        Returns
        -------
        Plan
        """
        import dataclasses
        k = self.k
        parts, restricted = [], self.cand_restricted.copy()
        for d in range(k):
            if d in sets:
                parts.append(np.asarray(sets[d], dtype=self.cand_ids.dtype))
                restricted[d] = True
            else:
                parts.append(self.cand_ids[self.cand_ptr[d]:self.cand_ptr[d + 1]])
        ptr = np.zeros(k + 1, dtype=np.int64)
        np.cumsum([p.size for p in parts], out=ptr[1:])
        ids = np.ascontiguousarray(np.concatenate(parts)) if parts else self.cand_ids[:0]
        return dataclasses.replace(self, cand_ptr=ptr, cand_ids=ids,
                                   cand_restricted=restricted)

    @property
    def inverse_order(self) -> np.ndarray:
        """``inverse_order[u]`` is the depth at which query vertex ``u`` is matched."""
        inv = np.empty(self.k, dtype=np.int32)
        inv[self.order] = np.arange(self.k, dtype=np.int32)
        return inv

    def to_query_order(self, matches: np.ndarray) -> np.ndarray:
        """Permute columns of (rows × k) depth-ordered matches into query-vertex order."""
        return matches[:, self.inverse_order]

    def arrays(self) -> dict[str, np.ndarray]:
        """The plan's arrays by name (for engines that pass them to kernels)."""
        names = ("order", "vlabel", "min_out_deg", "min_in_deg", "bn_ptr", "bn_pos",
                 "bn_dir", "bn_elabel", "na_ptr", "na_pos", "na_dir", "res_ptr",
                 "res_pos", "res_sign", "cand_ptr", "cand_ids", "cand_restricted")
        return {n: getattr(self, n) for n in names}

    def explain(self) -> str:
        """A readable description of the plan (also ``warpmatch explain``)."""
        from .explain import explain_plan
        return explain_plan(self)
