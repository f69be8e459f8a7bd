"""Incremental join plans: one delta plan per orbit of query pairs (GCSM §II-B, RapidFlow §5).

Map: :func:`compile_delta_plans` (the entry point) < :func:`_pair_orbits` (which
query pairs one search stands for) < :func:`_choose_group` and :func:`_order`
(the counting group and the matching order of one plan) < :func:`_restrictions`
(symmetry breaking of the pair's stabilizer).

Continuous subgraph matching as *incremental view maintenance* (GCSM §II-B,
formula (1), after Ammar et al., VLDB 2018): the embeddings that an edge
update adds or removes are exactly those in which the update edge is the image
of one query edge. So the delta of update ``(s, t)`` is the disjoint union, over
the ordered query pairs ``(a, b)`` that are edges, of the matches with
``f(a) = s, f(b) = t``, each extended over the remaining query vertices by a
worst-case-optimal join (set intersections of neighbour lists).

One search per *orbit* (RapidFlow's "dual matching", Sun et al., VLDB 2022, §5):
an automorphism σ maps the matches of pair ``(a, b)`` one-to-one onto those of
``(σa, σb)`` (``f -> f ∘ σ⁻¹``), so only one representative pair per orbit of
ordered pairs under Aut(Q) is searched. Within it, the stabilizer
``K = Stab(a, b)`` is broken by Grochow–Kellis restrictions
(:func:`~warpmatch.query.symmetry.symmetry_breaking` with ``a, b`` coloured),
walking only the *core* vertices; the *counting group* (the plan's last
vertices, pairwise non-adjacent, each adjacent only to core vertices) is not
walked, so the subgroup ``H ⊆ K`` that moves only group vertices stays
unbroken and the group is counted from candidate-set sizes (inclusion–exclusion
over the few vertices whose labels can collide; a falling factorial for
interchangeable "twins") instead of enumerated. Counting embeddings, the
representative's raw count ``N`` then stands for ``|O| · |K| / |H| · N``
embeddings, i.e. ``weight = |Aut| / |H|`` (orbit–stabilizer); counting
subgraphs it stands for ``N / |H|`` (``weight / divisor`` with one common
``divisor``, the lcm of the ``|H|``, so that sums stay integers).

Induced matching adds the orbits of *non-adjacent* ordered pairs ``(a, b)``
(``pair_kind 0``): inserting ``s -> t`` destroys the induced embeddings of
``S_i`` with ``f(a) = s, f(b) = t``; deleting it creates such embeddings in
``S_{i+1}``. Induced plans have no counting group (every non-adjacent pair is a
constraint between group members).

How this differs from the papers:

- GCSM (formula (1)) compiles one plan per query edge and orders the delta
  relations of a batch (old lists ``N`` / new lists ``N'``); we report per
  *update* (:mod:`warpmatch.stream.types`, "Semantics"): every task reads the
  single state ``S_i`` or ``S_{i+1}`` of its update.
- RapidFlow multiplies the count of one edge per automorphism class by the
  class size and enumerates everything else; we also break the pair's
  stabilizer on the core and count the group from set sizes (DESIGN.md, "Count
  mode never enumerates what it can count").
- The matching order is greedy (most backward edges, then the rarer label in
  the data graph, then the higher query degree), with the counting group last;
  RapidFlow derives it from its candidate index.
- Listing has no group: every raw match is one row. ``purpose="orbits"`` breaks
  the whole stabilizer (one row per orbit of embeddings, expanded by the
  matcher); ``"list"`` keeps one plan per ordered pair (as GCSM).

Examples
--------
>>> from warpmatch.query.patterns import get_pattern
>>> dp = compile_delta_plans(get_pattern("triangle"))
>>> dp.num_plans, dp.weight.tolist(), dp.group_start.tolist()   # one orbit of 6 pairs
(1, [6], [2])
>>> lp = compile_delta_plans(get_pattern("triangle"), purpose="list")
>>> lp.num_plans, lp.listable                                  # every ordered pair
(6, True)
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ..errors import QueryError
from ..query.io import check_direction
from ..query.model import ANY, Query
from ..query.symmetry import automorphism_count, automorphism_generators, symmetry_breaking
from .types import DeltaPlans

__all__ = ["compile_delta_plans", "MODES", "PURPOSES", "GROUP_MAX"]

MODES = ("embeddings", "subgraphs")
#: "count": counting plans (orbits, groups, weights); "list": every embedding is a raw
#: match (embeddings: every ordered pair, no restrictions; subgraphs: one per subgraph);
#: "orbits": one raw match per orbit {f ∘ σ} (the matcher expands the rows by Aut(Q))
PURPOSES = ("count", "list", "orbits")
#: the largest set of group vertices whose candidates may collide (same or wildcard
#: label) that is counted by inclusion–exclusion: Bell(4) = 15 set partitions, 11
#: intersections of sorted lists. Larger collision sets are counted only when they
#: are twins (a falling factorial).
GROUP_MAX = 4


def _pairs(query: Query, induced: bool) -> list[tuple[int, int, int, int]]:
    """``(a, b, pair_kind, pair_elabel)`` for every ordered pair, query edges first."""
    A = query.adjacency()
    L = query.edge_label_matrix()
    out = []
    for a, b in query.edges.tolist():
        out.append((a, b, 1, int(L[a, b])))
        if not query.directed:
            out.append((b, a, 1, int(L[a, b])))
    if induced:
        for a in range(query.k):
            for b in range(query.k):
                if a != b and not A[a, b]:
                    out.append((a, b, 0, ANY))
    return out


def _pair_orbits(query: Query, pairs: list[tuple[int, int, int, int]]) -> list[list[int]]:
    """The orbits of the ordered pairs under Aut(Q), as lists of indices into ``pairs``.

    Union–find over the generators' action on pairs; an automorphism keeps
    adjacency, direction and labels, so an orbit never mixes kinds or labels.
    Orbits come in the order of their first pair.
    """
    index = {(a, b): i for i, (a, b, _, _) in enumerate(pairs)}
    parent = list(range(len(pairs)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for g in automorphism_generators(query):
        for i, (a, b, _, _) in enumerate(pairs):
            j = index[(g[a], g[b])]
            ri, rj = find(i), find(j)
            if ri != rj:
                parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _connected(und: np.ndarray, keep: np.ndarray) -> bool:
    """Is the query restricted to the vertices ``keep`` (bool mask) connected?"""
    idx = np.flatnonzero(keep)
    if idx.size <= 1:
        return True
    seen = np.zeros(und.shape[0], bool)
    stack = [int(idx[0])]
    seen[idx[0]] = True
    while stack:
        u = stack.pop()
        for w in np.flatnonzero(und[u] & keep & ~seen).tolist():
            seen[w] = True
            stack.append(w)
    return bool(seen[idx].all())


def _twins(query: Query, u: int, w: int) -> bool:
    """Same label and the same neighbours through equally labelled, directed edges.

    Twins in a counting group have the same candidates (their backward edges
    and, by the automorphism swapping them, their restrictions are the same).
    """
    if query.vertex_labels[u] != query.vertex_labels[w]:
        return False
    L = query.edge_label_matrix()
    A = query.adjacency()
    keep = np.ones(query.k, bool)
    keep[[u, w]] = False
    return bool(np.array_equal(A[u, keep], A[w, keep]) and np.array_equal(A[keep, u], A[keep, w])
                and np.array_equal(L[u, keep], L[w, keep])
                and np.array_equal(L[keep, u], L[keep, w]))


def _collide(query: Query, u: int, w: int) -> bool:
    """May two group vertices take the same data vertex (same or wildcard label)?"""
    lu, lw = int(query.vertex_labels[u]), int(query.vertex_labels[w])
    return lu == ANY or lw == ANY or lu == lw


def _components(query: Query, group: list[int]) -> list[list[int]]:
    """The group split into sets whose candidates may collide (connected components)."""
    comps: list[list[int]] = []
    for u in group:
        hit = [c for c in comps if any(_collide(query, u, w) for w in c)]
        merged = [u] + [w for c in hit for w in c]
        comps = [c for c in comps if c not in hit] + [sorted(merged)]
    return comps


def _countable(query: Query, comp: list[int]) -> bool:
    return len(comp) <= GROUP_MAX or all(_twins(query, comp[0], w) for w in comp[1:])


def _label_cost(query: Query, u: int, label_freq: Mapping[int, int] | None) -> float:
    """How many data vertices may match ``u`` by label (wildcards: all of them)."""
    if label_freq is None:
        return 0.0
    lab = int(query.vertex_labels[u])
    if lab == ANY:
        return float(sum(label_freq.values()))
    return float(label_freq.get(lab, 0))


def _choose_group(query: Query, a: int, b: int, label_freq: Mapping[int, int] | None
                  ) -> list[int]:
    """The counting group of pair ``(a, b)``: pairwise non-adjacent vertices whose removal
    leaves the rest (with ``a``, ``b``) connected, each collision set countable.

    Greedy from the lowest query degree (leaves first), ties to the commonest label
    (a rare label prunes more when matched early, in the core).
    """
    und = (query.adjacency() | query.adjacency().T).astype(bool)
    deg = und.sum(axis=1)
    cand = [u for u in range(query.k) if u not in (a, b)]
    cand.sort(key=lambda u: (int(deg[u]), -_label_cost(query, u, label_freq), u))
    group: list[int] = []
    keep = np.ones(query.k, bool)
    for u in cand:
        if any(und[u, w] for w in group):
            continue
        keep[u] = False
        if _connected(und, keep) and all(_countable(query, c)
                                         for c in _components(query, group + [u])):
            group.append(u)
        else:
            keep[u] = True
    return group


def _order(query: Query, a: int, b: int, group: list[int],
           label_freq: Mapping[int, int] | None) -> list[int]:
    """``[a, b]``, the core by most backward edges (then rarer label, higher degree,
    smaller id), then the group.

    Edges are counted in both directions for directed queries (each backward
    edge is one more intersection or membership test that prunes).
    """
    A = query.adjacency().astype(np.int64)
    both = A + A.T
    und = both > 0
    deg = und.sum(axis=1)
    order = [a, b]
    placed = np.zeros(query.k, dtype=bool)
    placed[[a, b]] = True
    core = np.ones(query.k, dtype=bool)
    core[group] = False
    while len(order) < query.k - len(group):
        back = both[:, placed].sum(axis=1)
        cand = np.flatnonzero(und[:, placed].any(axis=1) & ~placed & core)
        # the core is connected (_choose_group), so a candidate always exists
        best = max(cand.tolist(), key=lambda u: (int(back[u]),
                                                 -_label_cost(query, u, label_freq),
                                                 int(deg[u]), -u))
        order.append(best)
        placed[best] = True
    return order + sorted(group)


def _restrictions(query: Query, a: int, b: int, walk: list[int]
                  ) -> tuple[list[tuple[int, int]], int, int]:
    """Restrictions breaking ``K = Stab(a, b)`` on the walked vertices.

    Returns ``(restrictions, |K|, |H|)`` with ``H`` the automorphisms of ``K``
    fixing every walked vertex (left unbroken).
    """
    colors = np.zeros(query.k, dtype=np.int64)
    colors[a], colors[b] = 1, 2
    res, broken = symmetry_breaking(query, colors, walk=walk)
    k_size = automorphism_count(query, colors)
    return res, k_size, k_size // broken


def compile_delta_plans(query: Query, mode: str = "embeddings", induced: bool = False,
                        purpose: str = "count", directed: bool | None = None,
                        has_edge_labels: bool = True,
                        label_freq: Mapping[int, int] | None = None,
                        group: bool = True) -> DeltaPlans:
    """Compile a query into incremental join plans (one per orbit of query pairs).

    Parameters
    ----------
    query : Query
        The query graph (at least one edge).
    mode : {"embeddings", "subgraphs"}, optional
        What the counts mean. The default is ``"embeddings"``.
    induced : bool, optional
        Induced matching: adds the ``pair_kind 0`` plans of the non-adjacent
        ordered pairs. The default is ``False``.
    purpose : {"count", "list", "orbits"}, optional
        ``"count"``: one plan per orbit of pairs, a counting group, and
        ``weight``/``divisor`` that turn raw counts into the mode's counts.
        ``"list"``: one plan per ordered pair and every raw match is one
        result (embeddings: no restrictions; subgraphs: the restrictions of
        the whole group, so that each subgraph comes as the row the static
        engine lists). ``"orbits"``: one raw match per orbit ``{f ∘ σ : σ ∈
        Aut(Q)}`` of embeddings (listing expands each by the automorphisms).
        The default is ``"count"``.
    directed : bool or None, optional
        Whether the data graph is directed; must agree with the query. The
        default, ``None``, takes the query's directedness.
    has_edge_labels : bool, optional
        Whether the data graph has edge labels; an edge-labeled query on a
        graph without them is an error, as for static matching. The default
        is ``True``.
    label_freq : mapping of int to int, optional
        Data vertices per vertex label, to order rarer labels first. The
        default is ``None`` (structure only).
    group : bool, optional
        With ``purpose="count"``, give the plans counting groups. Without,
        every plan breaks its whole stabilizer and every weight is the same
        (``|Aut|`` counting embeddings, 1 counting subgraphs), for engines that
        enumerate. The default is ``True``.

    Returns
    -------
    DeltaPlans
        The layout of :class:`~warpmatch.stream.types.DeltaPlans`. Query
        labels absent from the graph are *not* rejected: they may appear later
        in the stream.

    Raises
    ------
    QueryError
        Unknown mode or purpose, directedness mismatch, a query without edges,
        or edge labels the graph cannot have.

    Examples
    --------
    >>> from warpmatch.query.model import Query
    >>> dp = compile_delta_plans(Query.parse("a->b, b->c"), induced=True)
    >>> dp.pair_kind.tolist()                  # 2 edges, then the 4 non-adjacent ordered pairs
    [1, 1, 0, 0, 0, 0]
    >>> from warpmatch.query.patterns import get_pattern
    >>> dp = compile_delta_plans(get_pattern("diamond"))     # the diagonal, two rim orbits
    >>> dp.num_plans, dp.weight.tolist(), dp.group_start.tolist()
    (3, [4, 4, 2], [3, 3, 2])
    """
    directed = bool(query.directed) if directed is None else bool(directed)
    _validate(query, mode, purpose, directed, has_edge_labels)
    k = query.k
    A = query.adjacency()
    L = query.edge_label_matrix()
    aut = automorphism_count(query)
    pairs = _pairs(query, induced)
    every = purpose == "list"
    reps = [[i] for i in range(len(pairs))] if every else _pair_orbits(query, pairs)
    # listing subgraphs: one plan per ordered pair with the restrictions of the whole
    # group, so that each subgraph's row is the one the static engine lists
    global_res = symmetry_breaking(query)[0] if every and mode == "subgraphs" else []

    P = len(reps)
    order = np.zeros((P, k), dtype=np.int32)
    vlabel = np.zeros((P, k), dtype=np.int32)
    bn_ptr = np.zeros((P, k + 1), dtype=np.int32)
    na_ptr = np.zeros((P, k + 1), dtype=np.int32)
    res_ptr = np.zeros((P, k + 1), dtype=np.int32)
    group_start = np.full(P, k, dtype=np.int32)
    gcomp = np.full((P, k), -1, dtype=np.int32)
    gtwin = np.zeros((P, k), dtype=np.int8)
    h_size = np.ones(P, dtype=object)
    orbit_size = np.ones(P, dtype=object)
    bn: list[tuple[int, int, int]] = []
    na: list[tuple[int, int]] = []
    res: list[tuple[int, int]] = []
    for j, members in enumerate(reps):
        a, b, _kind, _lab = pairs[members[0]]
        orbit_size[j] = len(members)
        grp = (_choose_group(query, a, b, label_freq)
               if purpose == "count" and group and not induced else [])
        vorder = _order(query, a, b, grp, label_freq)
        gs = k - len(grp)
        depth_of = np.empty(k, dtype=np.int64)
        depth_of[vorder] = np.arange(k)
        order[j] = vorder
        vlabel[j] = query.vertex_labels[vorder]
        group_start[j] = gs
        for c, comp in enumerate(_components(query, grp)):
            twin = len(comp) > 1 and all(_twins(query, comp[0], w) for w in comp[1:])
            for u in comp:
                gcomp[j, depth_of[u]] = c
                gtwin[j, depth_of[u]] = 1 if twin else 0
        per_res: list[list[tuple[int, int]]] = [[] for _ in range(k)]
        restr = global_res
        if not every:
            restr, _k_size, h = _restrictions(query, a, b, vorder[:gs])
            h_size[j] = h
        if restr:
            for x, y in restr:                     # f(x) < f(y), checked at the later depth
                dx, dy = int(depth_of[x]), int(depth_of[y])
                if dy > dx:
                    per_res[dy].append((dx, 1))    # c > M[dx]
                else:
                    per_res[dx].append((dy, -1))   # c < M[dy]
        for i in range(1, k):
            u = vorder[i]
            bn_ptr[j, i] = len(bn)
            na_ptr[j, i] = len(na)
            res_ptr[j, i] = len(res)
            for jj in range(i):
                w = vorder[jj]
                # the pair relation itself (M[0] -> M[1]) is the update edge: present in
                # the task's state for pair_kind 1, absent for pair_kind 0; never re-checked
                skip_out = i == 1 and jj == 0
                if directed:
                    if not skip_out:
                        if A[w, u]:
                            bn.append((jj, 0, int(L[w, u])))     # data edge M[jj] -> c
                        elif induced:
                            na.append((jj, 0))
                    if A[u, w]:
                        bn.append((jj, 1, int(L[u, w])))         # data edge c -> M[jj]
                    elif induced:
                        na.append((jj, 1))
                elif not skip_out:
                    if A[w, u]:
                        bn.append((jj, 0, int(L[w, u])))
                    elif induced:
                        na.append((jj, 0))
            res.extend(per_res[i])
        bn_ptr[j, k] = len(bn)
        na_ptr[j, k] = len(na)
        res_ptr[j, k] = len(res)
        # depth 0 has nothing: its row of pointers is [x, x) = the start of depth 1
        bn_ptr[j, 0] = bn_ptr[j, 1] if k > 1 else bn_ptr[j, k]
        na_ptr[j, 0] = na_ptr[j, 1] if k > 1 else na_ptr[j, k]
        res_ptr[j, 0] = res_ptr[j, 1] if k > 1 else res_ptr[j, k]
        for i in range(2, k):
            if bn_ptr[j, i + 1] == bn_ptr[j, i]:   # pragma: no cover - connected order
                raise QueryError(f"internal error: depth {i} of delta plan {j} has no "
                                 "backward edge")
            if i >= gs and any(p >= gs for p in (bn[t][0] for t in
                                                 range(bn_ptr[j, i], bn_ptr[j, i + 1]))):
                raise QueryError(f"internal error: group depth {i} of delta plan {j} "
                                 "has a group neighbour")   # pragma: no cover

    weight, divisor = _weights(mode, purpose, every, aut, orbit_size, h_size)

    def col(rows: list[tuple], f: int, dt: type) -> np.ndarray:
        return np.ascontiguousarray(np.array([r[f] for r in rows], dtype=dt).reshape(-1))

    return DeltaPlans(
        k=k, order=order, vlabel=vlabel,
        bn_ptr=bn_ptr, bn_pos=col(bn, 0, np.int32), bn_dir=col(bn, 1, np.int8),
        bn_elabel=col(bn, 2, np.int32),
        na_ptr=na_ptr, na_pos=col(na, 0, np.int32), na_dir=col(na, 1, np.int8),
        res_ptr=res_ptr, res_pos=col(res, 0, np.int32), res_sign=col(res, 1, np.int8),
        pair_kind=np.array([pairs[m[0]][2] for m in reps], dtype=np.int8).reshape(-1),
        pair_elabel=np.array([pairs[m[0]][3] for m in reps], dtype=np.int32).reshape(-1),
        weight=weight, divisor=divisor, group_start=group_start, gcomp=gcomp, gtwin=gtwin,
        mode=mode, induced=bool(induced), directed=directed, purpose=purpose,
        aut_size=int(aut), query=query,
    )


def _weights(mode: str, purpose: str, every: bool, aut: int, orbit_size: np.ndarray,
             h_size: np.ndarray) -> tuple[np.ndarray, int]:
    """Per-plan weights and the common divisor (module docstring)."""
    P = orbit_size.shape[0]
    if purpose != "count":
        # list: one result per raw match; orbits: one raw match per orbit of Aut(Q)
        return np.ones(P, dtype=np.int64), 1
    if mode == "embeddings":
        w = [aut // int(h) for h in h_size]
        return np.array(w, dtype=np.int64).reshape(-1), 1
    lcm = 1
    for h in h_size:
        lcm = lcm * int(h) // math.gcd(lcm, int(h))
    return np.array([lcm // int(h) for h in h_size], dtype=np.int64).reshape(-1), int(lcm)


def _validate(query: Query, mode: str, purpose: str, directed: bool,
              has_edge_labels: bool) -> None:
    if mode not in MODES:
        raise QueryError(f"unknown mode {mode!r}: use 'embeddings' (every injective map) or "
                         f"'subgraphs' (each distinct subgraph once)")
    if purpose not in PURPOSES:
        raise QueryError(f"unknown plan purpose {purpose!r}: use 'count', 'list' or 'orbits'")
    check_direction(query, directed)
    if query.m == 0:
        raise QueryError(f"the query {query.name!r} has no edges: edge updates never change "
                         "its matches, so continuous matching needs a query with at least "
                         "one edge")
    if query.edge_labeled and not has_edge_labels:
        e = int(np.flatnonzero(query.edge_labels != ANY)[0])
        a, b = (query.names[x] for x in query.edges[e])
        raise QueryError(f"query edge {a}-{b} has label {int(query.edge_labels[e])} but the "
                         f"graph has no edge labels: drop the query's edge labels or read a "
                         f"graph with edge labels")
