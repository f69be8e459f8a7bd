"""Plans of the partitioned search: one per part (intra) and one per query-edge orbit (inter).

Map: :func:`local_plans` (a plan's candidate sets moved to every part's local
ids) < :func:`edge_order` (a matching order that starts at a query edge, or ends
at its leaf) < :func:`leaf_of` < :func:`edge_orbits` (the query's edges grouped
by automorphism) < :func:`cut_spread` < :class:`InterSearch` /
:func:`inter_searches` (PBE Alg. 2: the inter-partition search sequences, with
their sharing; :func:`_leaf_last`).

PBE (§3.2, §4, Alg. 2-3): every match that uses a cut edge is found from its
smallest cut edge (the *prime* edge, DupRemove) by the search sequence whose
first two vertices are the query edge that edge is matched to; sequences whose
prime query edges lie in one automorphism edge orbit are strictly equivalent
(Lemma 3), so one search serves the whole orbit. Here:

- An inter search is an ordinary :class:`~warpmatch.plan.Plan` run by an
  ordinary engine, with rule 8 of the Plan contract (``cut_part``) doing
  DupRemove inside the candidate checks; its roots are the boundary vertices.
- Sharing goes further than PBE's row remapping: the search of orbit ``O``
  with representative edge ``e`` breaks the symmetry of ``e``'s setwise
  stabilizer ``H`` (Grochow-Kellis restrictions with ``e``'s endpoints
  coloured), so it finds ``N / |H|`` rows where PBE finds ``N``; the count is
  ``|O| * |H| * rows`` (``|O| * |H| = |Aut|``), and listing expands each row
  by every automorphism (each embedding once, see :func:`expand_rows`).
- Subgraph listing must return the rows the in-memory engine returns (the
  representative the global restrictions choose), so there it runs one search
  per query edge with the global restrictions, as PBE's unshared plan does.
- The in-memory plan's root set is not carried to a later depth of an inter
  search where it is exactly the label-and-degree set (:func:`_loosen_roots`):
  every depth checks labels and degrees anyway.
- The order after the prime edge is greedy (most matched neighbours, then the
  smaller candidate set, then the higher degree), not PBE's search over all
  permutations with a cost model.
- The plans carry each vertex's cut neighbours (``Plan.cut_graph``): the GPU
  engine draws the prime edge's candidates from them (not from the whole list,
  most of which lies in ``M[0]``'s own part on a graph with communities), and
  both engines count a last plain leaf under rule 8 from them (two binary
  searches) instead of checking its every candidate.
- Counting, a prime edge with a leaf end (a tailed triangle's tail) is searched
  leaf last (:func:`_leaf_last`, rule 8's ``cut_depth``) where boundary vertices
  have many cut edges (:func:`cut_spread`): the rest of the query once per
  boundary vertex, and the leaf counted among the cut neighbours before the
  smallest cut edge matched, where PBE's sequence (prime edge first) searches
  the rest once per cut edge.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..graph.csr import Graph
from ..plan.build import reorder_plan, restriction_pairs
from ..plan.filter import ldf_ids, ldf_size
from ..plan.leaves import bare_last_leaf
from ..plan.plan import Plan
from ..query.model import Query
from ..query.symmetry import automorphism_generators, automorphisms, symmetry_breaking


@njit(cache=True, parallel=True, nogil=True)
def _split_sets(cand_ids, cand_ptr, split, same, part, local, parts,
                chunks):  # pragma: no cover - compiled
    """Every part's candidate sets, one after another in one array: ``(out, base, ptr)``,
    part ``p``'s sets being ``out[base[p]:base[p + 1]]`` with depth ``d`` at
    ``ptr[p, d]:ptr[p, d + 1]`` of that.

    A depth with ``split[d]`` keeps part ``p``'s ids of its set (ascending), renamed to
    local ids; its ids are counted and scattered by ``chunks`` threads, each into its
    own runs. A depth with ``same[d] < d`` has the set of that earlier depth (copied
    within each part); any other depth keeps its set whole in every part.
    """
    k = cand_ptr.shape[0] - 1
    counts = np.zeros((k, chunks, parts), np.int64)
    for d in range(k):
        if not split[d] or same[d] != d:
            continue
        lo, n = cand_ptr[d], cand_ptr[d + 1] - cand_ptr[d]
        for c in prange(chunks):
            for i in range(lo + n * c // chunks, lo + n * (c + 1) // chunks):
                counts[d, c, part[cand_ids[i]]] += 1
    ptr = np.zeros((parts, k + 1), np.int64)
    base = np.zeros(parts + 1, np.int64)
    for p in range(parts):
        for d in range(k):
            size = cand_ptr[d + 1] - cand_ptr[d]
            if split[d]:
                size = counts[same[d], :, p].sum()
            ptr[p, d + 1] = ptr[p, d] + size
        base[p + 1] = base[p] + ptr[p, k]
    out = np.empty(base[parts], cand_ids.dtype)
    start = np.empty((chunks, parts), np.int64)
    for d in range(k):
        s = same[d]
        if not split[d] or s != d:
            for p in prange(parts):
                a, b = base[p] + ptr[p, d], base[p] + ptr[p, d + 1]
                if split[d]:
                    out[a:b] = out[base[p] + ptr[p, s]:base[p] + ptr[p, s + 1]]
                else:
                    out[a:b] = cand_ids[cand_ptr[d]:cand_ptr[d + 1]]
            continue
        for p in range(parts):
            run = base[p] + ptr[p, d]
            for c in range(chunks):
                start[c, p] = run
                run += counts[d, c, p]
        lo, n = cand_ptr[d], cand_ptr[d + 1] - cand_ptr[d]
        for c in prange(chunks):
            pos = start[c].copy()
            for i in range(lo + n * c // chunks, lo + n * (c + 1) // chunks):
                v = cand_ids[i]
                q = part[v]
                out[pos[q]] = local[v]
                pos[q] += 1
    return out, base, ptr


def local_plans(plan: Plan, part: np.ndarray, local: np.ndarray, parts: int,
                chunks: int | None = None) -> list[Plan]:
    """``plan`` for every part's induced subgraph: each explicit candidate set keeps,
    for part ``p``, the ids in part ``p``, renamed to local ids (an order-preserving
    renaming).

    Every part's sets are made in one compiled pass (:func:`_split_sets`), split into
    ``chunks`` (default: four per numba thread) that threads count and scatter, into
    one array that the parts' plans view. It is the one pass over the graph's vertices
    that a partitioned count makes per query: one thread took 83-107 ms of a 0.13-0.24 s
    intra phase at 10^8 edges (12.5M vertices, 6 parts, H100 host), where the six
    parts' copies and searches took 40-58 ms. (Before that: one filtering pass per
    part, 78 ms at 2x10^7 edges on an H200 host.)
    """
    import dataclasses

    import numba
    k = plan.k
    ids = np.ascontiguousarray(plan.cand_ids)
    cptr = np.ascontiguousarray(plan.cand_ptr, dtype=np.int64)
    split = np.zeros(k, dtype=np.bool_)
    same = np.arange(k, dtype=np.int64)
    for d in range(k):
        split[d] = bool(plan.cand_restricted[d]) and cptr[d + 1] > cptr[d]
        # often equal to the depth before (degree filters alike): copied, not split again
        if d and split[d] and split[d - 1] and np.array_equal(
                ids[cptr[d]:cptr[d + 1]], ids[cptr[d - 1]:cptr[d]]):
            same[d] = same[d - 1]
    if chunks is None:
        chunks = 4 * numba.get_num_threads()
    out, base, ptr = _split_sets(ids, cptr, split, same, np.ascontiguousarray(part),
                                 np.ascontiguousarray(local, dtype=ids.dtype), int(parts),
                                 max(1, int(chunks)))
    return [dataclasses.replace(plan, cand_ptr=ptr[p].copy(),
                                cand_ids=out[base[p]:base[p + 1]]) for p in range(parts)]


def edge_order(query: Query, a: int, b: int, sizes: np.ndarray,
               leaf_last: bool = False) -> list[int]:
    """A connected order starting ``a, b``: then the vertex with the most matched
    neighbours, ties to the smaller candidate count ``sizes[u]``, then the higher degree.
    With ``leaf_last`` (``a`` a leaf of the query, ``b`` its neighbour) the order starts
    at ``b`` alone and ends with ``a``."""
    A = query.adjacency()
    adj = (A | A.T) if query.directed else A
    deg = adj.sum(axis=1)
    order = [b] if leaf_last else [a, b]
    left = set(range(query.k)) - {a, b}
    while left:
        u = max(sorted(left), key=lambda x: (int(adj[x, order].sum()), -int(sizes[x]),
                                             int(deg[x])))
        order.append(u)
        left.remove(u)
    return order + [a] if leaf_last else order


def leaf_of(query: Query, a: int, b: int) -> int | None:
    """The endpoint of query edge ``(a, b)`` that is a leaf of the query (one neighbour,
    joined by one arc), or ``None``; never both (queries of 3 vertices or more)."""
    if query.k < 3:
        return None
    A = query.adjacency()
    adj = (A | A.T) if query.directed else A
    for x, y in ((b, a), (a, b)):
        if int(adj[x].sum()) == 1 and (not query.directed or int(A[x, y]) + int(A[y, x]) == 1):
            return x
    return None


def query_edges(query: Query) -> list[tuple[int, int]]:
    """The query's edges: arcs ``(a, b)`` when directed, pairs ``a < b`` otherwise."""
    A = query.adjacency()
    k = query.k
    if query.directed:
        return [(a, b) for a in range(k) for b in range(k) if A[a, b]]
    return [(a, b) for a in range(k) for b in range(a + 1, k) if A[a, b]]


def edge_orbits(query: Query, colors: list[int] | None) -> list[list[tuple[int, int]]]:
    """The query edges grouped into orbits of the (colour-preserving) automorphism group."""
    edges = query_edges(query)
    index = {e: i for i, e in enumerate(edges)}
    root = list(range(len(edges)))

    def find(x: int) -> int:
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    for g in automorphism_generators(query, colors):
        for i, (a, b) in enumerate(edges):
            x, y = g[a], g[b]
            j = index[(x, y) if query.directed else (min(x, y), max(x, y))]
            root[find(i)] = find(j)
    groups: dict[int, list[tuple[int, int]]] = {}
    for i, e in enumerate(edges):
        groups.setdefault(find(i), []).append(e)
    return sorted(groups.values())


def _edge_colors(k: int, colors: list[int] | None, a: int, b: int,
                 directed: bool) -> list[int]:
    """``colors`` refined so that automorphisms map the edge ``(a, b)`` to itself
    (setwise if undirected, pointwise if directed)."""
    base = colors if colors is not None else [0] * k
    out = [3 * int(c) for c in base]
    out[a] += 1
    out[b] += 1 if not directed else 2
    return out


@dataclass(frozen=True)
class InterSearch:
    """One inter-partition search sequence.

    Attributes
    ----------
    plan : Plan
        Rooted at the prime query edge ``edges[0]``, with ``cut_part`` set.
    edges : list of (int, int)
        The query edges it stands for (its orbit when shared, else one edge).
    weight : int
        Embeddings per raw match in counting (``|O| * |H|``; 1 when listing).
    """

    plan: Plan
    edges: list
    weight: int


def _roots(graph: Graph, plan: Plan, u: int, on_boundary: np.ndarray) -> np.ndarray:
    """The boundary vertices (``on_boundary``: bool[n]) that query vertex ``u`` may take
    under ``plan``.

    The mask makes the intersection with the candidates one gather: ``np.intersect1d``
    sorted both and took 53 ms of a 0.3 s partitioned triangle count (2x10^7 edges,
    H200 host). An implicit set is the label-and-degree one, whose ids
    :func:`~warpmatch.plan.filter.ldf_ids` keeps.
    """
    d = int(plan.inverse_order[u])
    if plan.cand_restricted[d]:
        ids = plan.cand_ids[plan.cand_ptr[d]:plan.cand_ptr[d + 1]]
    else:
        ids = ldf_ids(graph, plan.query, u)
    return _kept(np.ascontiguousarray(ids, dtype=plan.cand_ids.dtype), on_boundary)


@njit(cache=True, nogil=True)
def _kept(ids, mask):  # pragma: no cover - compiled
    """``ids[mask[ids]]`` in one compiled pass (numpy's gather and compress: 7 ms for
    1.2M ids)."""
    out = np.empty(ids.shape[0], ids.dtype)
    n = 0
    for i in range(ids.shape[0]):       # branch-free: about half the ids are kept
        v = ids[i]
        out[n] = v
        n += 1 if mask[v] else 0
    return out[:n].copy()


def _loosen_roots(graph: Graph, plan: Plan) -> Plan:
    """``plan`` with its depth-0 set marked implicit when it is exactly the label-and-degree
    (LDF) set of its vertex, which every engine checks at every depth anyway (rules 1-2).

    In an inter search that vertex may sit at a later depth; an explicit set there is an
    array the size of the graph's vertices on the device and a binary search per
    candidate, for no pruning (a 10^7-edge diamond's first inter search carried 1.16M
    such ids; at 2x10^7 edges they kept it from having its offsets on the device). Only :func:`reorder_plan` and
    :func:`_roots` read the result: it is never run (depth 0 is always explicit in a
    plan that runs).
    """
    import dataclasses
    d0 = plan.cand_ids[plan.cand_ptr[0]:plan.cand_ptr[1]]
    u0 = int(plan.order[0])
    # both sorted and unique: equal sizes, then equal arrays (the kept ids, no mask)
    if d0.size != ldf_size(graph, plan.query, u0) or \
            not np.array_equal(d0, ldf_ids(graph, plan.query, u0)):
        return plan                       # anchors, NLF or refinement: keep the set
    restricted = plan.cand_restricted.copy()
    restricted[0] = False
    return dataclasses.replace(plan, cand_restricted=restricted)


def inter_searches(graph: Graph, plan: Plan, part: np.ndarray, boundary: np.ndarray,
                   colors: list[int] | None, purpose: str,
                   share: bool = True,
                   on_boundary: np.ndarray | None = None,
                   cut_graph: Graph | None = None) -> list[InterSearch]:
    """The inter-partition search sequences for ``plan`` (PBE Alg. 2).

    Parameters
    ----------
    graph : Graph
        The whole graph (the inter search reads it in host memory).
    plan : Plan
        The in-memory plan (its candidate sets, mode and restrictions).
    part : numpy.ndarray
        int32[n] part ids.
    boundary : numpy.ndarray
        Sorted vertices with a cut edge.
    colors : list of int or None
        Anchor colours (:func:`~warpmatch.plan.build.anchor_colors`).
    purpose : {"count", "list"}
        Counting (and embedding listing) shares one search per edge orbit;
        subgraph listing runs one per edge with the plan's restrictions.
    share : bool, optional
        ``False`` runs one search per query edge in counting too (PBE without
        shared execution, for comparison). The default is ``True``.
    on_boundary : numpy.ndarray, optional
        bool[n], ``boundary`` as a mask (:attr:`Partitioned.on_boundary`), when
        the caller keeps one; else it is made here.
    cut_graph : Graph, optional
        The cut neighbours (:attr:`Partitioned.cut_graph`): the plans carry it, so
        that the engines count a last plain leaf under rule 8 from its lists, and
        counting matches a leaf last where it is an end of the prime edge and the
        cut edges spread (:func:`_leaf_last`, :data:`LEAF_LAST_SPREAD`). The
        default, ``None``, checks every leaf candidate.

    Returns
    -------
    list of InterSearch
    """
    query = plan.query
    k = query.k
    sizes = np.array([int(plan.cand_ptr[d + 1] - plan.cand_ptr[d])
                      if plan.cand_restricted[d] else graph.n
                      for d in plan.inverse_order.tolist()], dtype=np.int64)
    cut = {"cut_part": part, "cut_prime": 0, "cut_graph": cut_graph}
    src = _loosen_roots(graph, plan)
    mask = on_boundary
    if mask is None:
        mask = np.zeros(graph.n, dtype=bool)
        mask[boundary] = True
    out = []
    if purpose == "list" and plan.mode == "subgraphs":
        pairs = restriction_pairs(plan)
        for a, b in query_edges(query):
            p = reorder_plan(src, edge_order(query, a, b, sizes),
                             _roots(graph, src, a, mask), pairs, multiplier=1, **cut)
            out.append(InterSearch(p, [(a, b)], 1))
        return out
    aut = symmetry_breaking(query, colors)[1]
    spread = None             # cut_spread, computed where a leaf edge asks for it
    groups = (edge_orbits(query, colors) if share or purpose != "count"
              else [[e] for e in query_edges(query)])
    for orbit in groups:
        a, b = orbit[0]
        pairs, h = symmetry_breaking(query, _edge_colors(k, colors, a, b, query.directed))
        if share and len(orbit) * h != aut:   # orbit-stabilizer: |O| |H| = |Aut|
            raise AssertionError(f"edge orbit {orbit}: {len(orbit)} x {h} != |Aut| = {aut}")
        p = None
        if purpose == "count" and cut_graph is not None and leaf_of(query, a, b) is not None:
            if spread is None:
                spread = cut_spread(graph, cut_graph, mask)
            if spread >= LEAF_LAST_SPREAD:
                p = _leaf_last(graph, src, a, b, sizes, mask, pairs, cut)
        if p is None:
            p = reorder_plan(src, edge_order(query, a, b, sizes),
                             _roots(graph, src, a, mask), pairs, multiplier=1, **cut)
        out.append(InterSearch(p, list(orbit), len(orbit) * h if purpose == "count" else 1))
    return out


#: the least :func:`cut_spread` at which a prime edge with a leaf end is searched leaf last
#: (:func:`_leaf_last`). The leaf-first search costs about that many times the rest of the
#: query per boundary vertex, the leaf-last one the rest once plus a count from the cut
#: lists. Measured (CPU engine, this 2-core host, 10^6-edge Chung-Lu graphs in 6 parts):
#: spread 52 (no communities), the tailed triangle's tail-edge search 10.3 -> 0.61 s, the
#: 3-path's 1.44 -> 0.12 s; spread 1.8 (64 planted communities) 0.27 s both ways and the
#: 3-path 0.045 -> 0.084 s. On the GPU (H100, 10^8-edge community graph, 6 parts, the
#: lists read over PCIe) the leaf-last tail-edge search took 4.0 s.
LEAF_LAST_SPREAD = 4.0


#: :func:`cut_spread` of each cut graph (a pass over the boundary, 4.7M vertices at 10^8
#: edges: once per partition, not once per query)
_SPREADS: "weakref.WeakKeyDictionary[Graph, float]" = weakref.WeakKeyDictionary()


def cut_spread(graph: Graph, cut_graph: Graph, on_boundary: np.ndarray) -> float:
    """The boundary vertices' mean number of cut edges, each vertex weighted by its
    degree (the search below a vertex grows with it): how many times a search that
    matches a cut edge of its root first repeats the rest of the query per root.
    Computed once per ``cut_graph`` (which fixes the graph and its boundary)."""
    got = _SPREADS.get(cut_graph)
    if got is None:
        w = graph.degree[on_boundary].astype(np.float64)
        total = float(w.sum())
        got = _SPREADS[cut_graph] = (
            0.0 if total == 0 else float((cut_graph.degree[on_boundary] * w).sum()) / total)
    return got


def _leaf_last(graph: Graph, src: Plan, a: int, b: int, sizes: np.ndarray,
               mask: np.ndarray, pairs: list, cut: dict) -> Plan | None:
    """The count search of prime query edge ``(a, b)`` when one end is a leaf of the query
    that the engines count from a list: the rest of the query first, from the leaf's
    neighbour, and the leaf last, rule 8's prime at that last depth (``cut_depth``); else
    ``None``.

    Matched first, the leaf's edge is the prime of ``M[0]``'s cut edges one by one, and
    the rest of the query is searched again under each: on a 10^6-edge power-law graph
    cut in 6, a tailed triangle's tail-edge search took 10.6 of the count's 12 s (this
    2-core host) for 5.8M matches, most of the searches below a cut edge failing rule 8
    on a smaller cut edge of the triangle. Matched last, the leaf is counted once per
    match of the rest: the cut neighbours of ``M[0]`` before the smallest cut edge
    matched so far, two binary searches in ``Plan.cut_graph``. That pays where boundary
    vertices have many cut edges (:data:`LEAF_LAST_SPREAD`; the caller decides).
    """
    query = src.query
    leaf = leaf_of(query, a, b)
    if leaf is None:
        return None
    u = b if leaf == a else a
    arc_out = (not query.directed) or bool(query.adjacency()[u, leaf])   # u -> leaf
    p = reorder_plan(src, edge_order(query, leaf, u, sizes, leaf_last=True),
                     _roots(graph, src, u, mask), pairs, multiplier=1,
                     **{**cut, "cut_prime": 0 if arc_out else 1, "cut_depth": query.k - 1})
    labels = (graph.vertex_labels is not None, graph.edge_labels is not None)
    return p if bare_last_leaf(p, *labels) else None


def expand_rows(rows: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """Every row ``f`` (query order) as ``f ∘ σ`` for each automorphism ``σ`` in ``perms``.

    For a shared inter search listing embeddings: its rows are one per orbit of
    the edge's stabilizer, and ``{f ∘ σ : σ ∈ Aut}`` are then distinct embeddings,
    each with its smallest cut edge on an edge of the orbit, each listed once.
    """
    if rows.shape[0] == 0 or perms.shape[0] == 1:
        return rows
    return rows[:, perms].reshape(-1, rows.shape[1])


def all_automorphisms(query: Query, colors: list[int] | None) -> np.ndarray:
    """Aut(Q) (colour-preserving) as an int array (|Aut| x k)."""
    return np.asarray(automorphisms(query, colors), dtype=np.int64).reshape(-1, query.k)
