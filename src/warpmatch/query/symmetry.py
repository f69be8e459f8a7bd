"""Automorphisms of a query and symmetry-breaking restrictions.

Symmetry breaking follows Grochow & Kellis, "Network Motif Discovery Using
Subgraph Enumeration and Symmetry-Breaking" (RECOMB 2007), Section 3.2: walk
down a *stabilizer chain* of Aut(Q). With ``G_0 = Aut(Q)``, repeatedly take a
vertex ``v`` whose orbit ``O`` under the current group ``G_i`` is nontrivial,
add the restriction ``f(v) < f(w)`` for every ``w`` in ``O \\ {v}``, and
continue with the pointwise stabilizer ``G_{i+1} = Stab_{G_i}(v)``. Every
orbit of embeddings ``{f ∘ σ : σ ∈ Aut(Q)}`` then holds exactly one embedding
that satisfies all restrictions, and ``|Aut(Q)| = Π |O_i|`` by the
orbit–stabilizer theorem.

What differs from the paper: Grochow & Kellis enumerate the whole group (they
use nauty's generators and then list the group); a 32-vertex star has 31!
automorphisms, so we never list it. An orbit of ``G_i`` is computed by asking,
for each candidate ``w``, whether *some* automorphism fixes the vertices
already fixed and maps ``v`` to ``w``. That question is answered by an
individualisation–refinement search in the style of nauty (McKay & Piperno,
2014): colour refinement (1-dimensional Weisfeiler–Leman, with edge labels and
directions) of two colourings at once, one with ``v`` and one with ``w``
individualised; refinement either proves no such automorphism exists (the
colour-class sizes differ), or a candidate map that is the identity wherever
it can be is checked, or the search branches on the smallest ambiguous colour
class. Every automorphism found is kept as a generator, and candidates already
in the same orbit of the generated group are not searched again.

An automorphism here preserves vertex labels (``-1`` is a label of its own:
a wildcard vertex is only exchanged with wildcard vertices), edge labels,
edge directions, and optional extra per-vertex ``colors`` (the planner gives
anchored vertices with different anchor sets different colors).

Examples
--------
>>> from warpmatch.query.patterns import get_pattern
>>> symmetry_breaking(get_pattern("triangle"))
([(0, 1), (0, 2), (1, 2)], 6)
>>> automorphism_count(get_pattern("32-star"))   # 31!, found without listing the group
8222838654177922817725562880000000
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from ..errors import QueryError
from .model import Query

__all__ = ["automorphism_count", "symmetry_breaking", "automorphisms", "orbits",
           "automorphism_generators"]


class _Ctx:
    """The query as matrices for refinement and automorphism checks."""

    def __init__(self, k: int, directed: bool, edges: np.ndarray, edge_labels: np.ndarray,
                 vertex_labels: np.ndarray, colors: np.ndarray):
        self.k = k
        L = np.full((k, k), -2, dtype=np.int64)          # -2 = no edge
        if edges.size:
            L[edges[:, 0], edges[:, 1]] = edge_labels
            if not directed:
                L[edges[:, 1], edges[:, 0]] = edge_labels
        self.L = L
        # One 0/1 matrix per (edge label, direction): refinement counts, per vertex, its
        # neighbours of each colour along each kind of edge.
        mats = []
        for lab in np.unique(edge_labels).tolist():
            T = (L == lab).astype(np.int64)
            mats.append(T)
            if directed:
                mats.append(T.T.copy())
        self.T = np.stack(mats) if mats else np.zeros((0, k, k), dtype=np.int64)
        pairs = np.stack([vertex_labels.astype(np.int64), colors.astype(np.int64)], axis=1)
        self.base = np.unique(pairs, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)

    def is_automorphism(self, sigma: np.ndarray) -> bool:
        """``sigma`` (u -> sigma[u]) preserves edges, edge labels, direction and base colours."""
        return bool(np.array_equal(self.base[sigma], self.base)
                    and np.array_equal(self.L[np.ix_(sigma, sigma)], self.L))

    def refine(self, cA: np.ndarray, cB: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Refine two colourings jointly to their coarsest equitable refinements.

        Colours are renamed by sorting signatures of both colourings together,
        so equal colour ids mean equal signatures on both sides. Returns None
        as soon as the colour-class sizes differ (no colour-preserving
        isomorphism between the two colourings exists).
        """
        k = self.k
        while True:
            C = int(max(cA.max(), cB.max())) + 1
            n_before = np.unique(cA).size
            rows = []
            for c in (cA, cB):
                onehot = np.zeros((k, C), dtype=np.int64)
                onehot[np.arange(k), c] = 1
                H = (self.T @ onehot).transpose(1, 0, 2).reshape(k, -1)
                rows.append(np.concatenate([c[:, None], H], axis=1))
            R = np.ascontiguousarray(np.concatenate(rows))
            # Rank rows through a byte view: any fixed order of signatures is a valid
            # (isomorphism-invariant) renaming, and 1-D unique is much faster than axis=0.
            _, inv = np.unique(R.view(np.dtype((np.void, R.dtype.itemsize * R.shape[1]))),
                               return_inverse=True)
            inv = inv.reshape(-1)
            nA, nB = inv[:k], inv[k:]
            m = int(inv.max()) + 1
            if not np.array_equal(np.bincount(nA, minlength=m), np.bincount(nB, minlength=m)):
                return None
            cA, cB = nA, nB
            if np.unique(cA).size == n_before:
                return cA, cB

    @staticmethod
    def identity_preferring_map(cA: np.ndarray, cB: np.ndarray) -> np.ndarray:
        """Map each A-class onto the B-class of the same colour, fixing common vertices.

        For highly symmetric queries (cliques, stars) this is already the
        automorphism sought (a transposition), so no branching is needed.
        """
        sigma = np.arange(cA.size, dtype=np.int64)
        # u is in the A-class and the B-class of the same colour iff cA[u] == cB[u]: keep it.
        # The others pair up colour by colour (class sizes are equal after refine), in
        # ascending vertex order within a colour.
        moved = np.flatnonzero(cA != cB)
        if moved.size:
            xs = moved[np.argsort(cA[moved], kind="stable")]
            ys = moved[np.argsort(cB[moved], kind="stable")]
            sigma[xs] = ys
        return sigma

    @staticmethod
    def branch_cell(cA: np.ndarray) -> int | None:
        """The smallest colour class of size > 1 (ties: smallest colour), or None if discrete."""
        counts = np.bincount(cA)
        big = np.flatnonzero(counts > 1)
        if big.size == 0:
            return None
        return int(big[np.argmin(counts[big])])

    def find(self, cA: np.ndarray, cB: np.ndarray) -> np.ndarray | None:
        """One automorphism mapping colouring ``cA`` onto ``cB``, or None."""
        r = self.refine(cA, cB)
        if r is None:
            return None
        cA, cB = r
        sigma = self.identity_preferring_map(cA, cB)
        if self.is_automorphism(sigma):
            return sigma
        cell = self.branch_cell(cA)
        if cell is None:       # discrete: the map above was the only candidate
            return None
        x = int(np.flatnonzero(cA == cell)[0])
        ys = np.flatnonzero(cB == cell).tolist()
        if x in ys:            # try x -> x first: automorphisms are usually sparse
            ys.remove(x)
            ys.insert(0, x)
        new = int(max(cA.max(), cB.max())) + 1
        for y in ys:
            a, b = cA.copy(), cB.copy()
            a[x], b[y] = new, new
            sigma = self.find(a, b)
            if sigma is not None:
                return sigma
        return None

    def enumerate(self, cA: np.ndarray, cB: np.ndarray, out: list[np.ndarray]) -> None:
        """Append every automorphism mapping ``cA`` onto ``cB`` (each exactly once)."""
        r = self.refine(cA, cB)
        if r is None:
            return
        cA, cB = r
        cell = self.branch_cell(cA)
        if cell is None:
            sigma = np.empty(self.k, dtype=np.int64)
            sigma[np.argsort(cA)] = np.argsort(cB)
            if self.is_automorphism(sigma):
                out.append(sigma)
            return
        x = int(np.flatnonzero(cA == cell)[0])
        new = int(max(cA.max(), cB.max())) + 1
        for y in np.flatnonzero(cB == cell).tolist():
            a, b = cA.copy(), cB.copy()
            a[x], b[y] = new, new
            self.enumerate(a, b, out)


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _key(query: Query, colors: Sequence[int] | np.ndarray | None) -> tuple:
    """A hashable key of everything the automorphism group depends on."""
    if colors is None:
        col = np.zeros(query.k, dtype=np.int64)
    else:
        col = np.asarray(colors)
        if col.shape != (query.k,) or not np.issubdtype(col.dtype, np.integer):
            raise QueryError(f"colors must be {query.k} integers, one per query vertex, "
                             f"not an array of shape {col.shape} and dtype {col.dtype}")
        col = col.astype(np.int64)
    return (query.k, bool(query.directed), query.edges.astype(np.int64).tobytes(),
            query.edge_labels.astype(np.int64).tobytes(),
            query.vertex_labels.astype(np.int64).tobytes(), col.tobytes())


def _ctx_from_key(key: tuple) -> _Ctx:
    k, directed, e, el, vl, col = key
    return _Ctx(k, directed, np.frombuffer(e, dtype=np.int64).reshape(-1, 2),
                np.frombuffer(el, dtype=np.int64), np.frombuffer(vl, dtype=np.int64),
                np.frombuffer(col, dtype=np.int64))


@lru_cache(maxsize=512)
def _chain(key: tuple, walk: tuple[int, ...] | None = None
           ) -> tuple[tuple[tuple[int, int], ...], int, tuple[tuple[int, ...], ...]]:
    """Walk the stabilizer chain; returns (restrictions, product of orbit sizes, generators).

    ``walk`` is the sequence of vertices to fix, in order (the default, every
    vertex ``0..k-1``, breaks the whole group and the product is ``|Aut|``).
    """
    ctx = _ctx_from_key(key)
    k = ctx.k
    cur = ctx.base.copy()
    gens: list[np.ndarray] = []        # automorphisms fixing every vertex fixed so far
    all_gens: list[np.ndarray] = []
    restrictions: list[tuple[int, int]] = []
    aut = 1
    for v in (range(k) if walk is None else walk):
        r = ctx.refine(cur, cur)
        assert r is not None
        cur = r[0]
        if np.unique(cur).size == k:
            # Discrete equitable colouring: every automorphism fixing the fixed vertices
            # preserves it, so the remaining stabilizer is trivial.
            break
        cand = np.flatnonzero(cur == cur[v]).tolist()
        if len(cand) > 1:
            uf = _UnionFind(k)
            for g in gens:
                for u in range(k):
                    uf.union(u, int(g[u]))
            new = int(cur.max()) + 1
            for w in cand:
                if uf.find(w) == uf.find(v):
                    continue
                a, b = cur.copy(), cur.copy()
                a[v], b[w] = new, new
                sigma = ctx.find(a, b)
                if sigma is not None:
                    gens.append(sigma)
                    all_gens.append(sigma)
                    for u in range(k):
                        uf.union(u, int(sigma[u]))
            orbit = [w for w in cand if uf.find(w) == uf.find(v)]
            if len(orbit) > 1:
                restrictions += [(v, w) for w in orbit if w != v]
                aut *= len(orbit)
        # Descend to the pointwise stabilizer of v.
        gens = [g for g in gens if g[v] == v]
        cur = cur.copy()
        cur[v] = int(cur.max()) + 1
    return tuple(restrictions), aut, tuple(tuple(int(x) for x in g) for g in all_gens)


def symmetry_breaking(query: Query, colors: Sequence[int] | np.ndarray | None = None,
                      walk: Sequence[int] | None = None) -> tuple[list[tuple[int, int]], int]:
    """Symmetry-breaking restrictions and the size of the automorphism group.

    Parameters
    ----------
    query : Query
    colors : sequence of int, optional
        An extra colour per query vertex that automorphisms must preserve
        (e.g. anchored vertices: different anchor sets, different colours).
        The default is ``None``, meaning no extra colours.
    walk : sequence of int, optional
        The vertices to fix, in this order. The default is ``None``, meaning
        every vertex: the whole group is broken. With fewer vertices, the
        subgroup ``H`` of the automorphisms that fix every walked vertex stays
        unbroken: every restriction has a walked vertex on its left, the
        embeddings that satisfy them are closed under ``f -> f ∘ h`` for
        ``h ∈ H``, and each orbit ``{f ∘ σ}`` holds exactly ``|H|`` of them;
        ``aut_size`` is then ``|Aut| / |H|`` (continuous matching counts the
        vertices it does not walk from set sizes).

    Returns
    -------
    restrictions : list of (int, int)
        Pairs ``(a, b)`` of query vertices meaning ``f(a) < f(b)`` for the
        data vertices ``f(a), f(b)`` they are matched to (Grochow & Kellis).
        Of the embeddings of any orbit ``{f ∘ σ : σ ∈ Aut}`` exactly one
        satisfies all of them, with or without induced matching.
    aut_size : int
        ``|Aut(Q)|``: the automorphisms preserving vertex labels, edge
        labels, direction and ``colors``. ``#embeddings == aut_size ×
        #embeddings satisfying the restrictions``.

    Notes
    -----
    Cached per query content and colours. Never lists the group: cost grows
    with k² searches of an individualisation–refinement tree, not with |Aut|.

    Examples
    --------
    >>> from warpmatch.query.patterns import get_pattern
    >>> symmetry_breaking(get_pattern("square"))
    ([(0, 1), (0, 2), (0, 3), (1, 3)], 8)
    >>> symmetry_breaking(Query.parse("a:1-b:2"))
    ([], 1)
    >>> symmetry_breaking(get_pattern("4-star"), walk=[0, 1])   # leaves 2, 3 stay free
    ([(1, 2), (1, 3)], 3)
    """
    w = None if walk is None else tuple(int(v) for v in walk)
    if w is not None and any(not 0 <= v < query.k for v in w):
        raise QueryError(f"walk {list(w)} names a vertex outside 0..{query.k - 1}")
    res, aut, _ = _chain(_key(query, colors), w)
    return list(res), aut


def automorphism_generators(query: Query, colors: Sequence[int] | np.ndarray | None = None
                            ) -> list[tuple[int, ...]]:
    """Automorphisms that generate Aut(Q) (as permutations ``u -> sigma[u]``).

    The generators found along the stabilizer chain; empty for a trivial group.
    Cheap even for huge groups (a 32-vertex star has 30 generators).

    Examples
    --------
    >>> from warpmatch.query.patterns import get_pattern
    >>> automorphism_generators(get_pattern("3-path"))
    [(2, 1, 0)]
    """
    return [tuple(g) for g in _chain(_key(query, colors))[2]]


def automorphism_count(query: Query, colors: Sequence[int] | np.ndarray | None = None) -> int:
    """``|Aut(Q)|`` preserving labels, edge labels, direction and ``colors``.

    Parameters
    ----------
    query : Query
    colors : sequence of int, optional
        Extra per-vertex colours to preserve. The default is ``None`` (none).

    Returns
    -------
    int
        An exact Python int (``31!`` for the 32-vertex star).

    Examples
    --------
    >>> from warpmatch.query.patterns import get_pattern
    >>> automorphism_count(get_pattern("diamond"))
    4
    """
    return _chain(_key(query, colors))[1]


def orbits(query: Query, colors: Sequence[int] | np.ndarray | None = None) -> list[list[int]]:
    """The orbits of Aut(Q) on the query vertices, each ascending, ordered by smallest vertex.

    Examples
    --------
    >>> from warpmatch.query.patterns import get_pattern
    >>> orbits(get_pattern("tailed-triangle"))
    [[0, 1], [2], [3]]
    """
    key = _key(query, colors)
    gens = _chain(key)[2]
    uf = _UnionFind(query.k)
    for g in gens:   # the generators found along the chain generate the whole group
        for u, w in enumerate(g):
            uf.union(u, w)
    groups: dict[int, list[int]] = {}
    for u in range(query.k):
        groups.setdefault(uf.find(u), []).append(u)
    return sorted(groups.values())


def automorphisms(query: Query, colors: Sequence[int] | np.ndarray | None = None,
                  limit: int = 100_000) -> list[tuple[int, ...]]:
    """Every automorphism of a query with a small group, as permutations ``u -> sigma[u]``.

    Parameters
    ----------
    query : Query
    colors : sequence of int, optional
        Extra per-vertex colours to preserve. The default is ``None`` (none).
    limit : int, optional
        Refuse groups larger than this. The default is 100,000.

    Returns
    -------
    list of tuple of int
        Sorted; the identity comes first.

    Raises
    ------
    QueryError
        If ``|Aut(Q)| > limit``.

    Examples
    --------
    >>> from warpmatch.query.patterns import get_pattern
    >>> automorphisms(get_pattern("3-path"))
    [(0, 1, 2), (2, 1, 0)]
    """
    key = _key(query, colors)
    n = _chain(key)[1]
    if n > limit:
        raise QueryError(f"the query has {n} automorphisms, more than limit={limit}; "
                         "use automorphism_count or symmetry_breaking instead")
    ctx = _ctx_from_key(key)
    out: list[np.ndarray] = []
    ctx.enumerate(ctx.base.copy(), ctx.base.copy(), out)
    return sorted(tuple(int(x) for x in s) for s in out)
