"""Seeded random graphs and labels, fast enough for 10^7–10^8 edges.

- :func:`rmat` — the recursive-matrix (R-MAT) / stochastic Kronecker generator
  of Chakrabarti, Zhan & Faloutsos (SDM 2004) with the Graph500 parameters
  (a, b, c) = (0.57, 0.19, 0.19), edge factor 16 and a random relabelling of
  the vertices (as the Graph500 reference generator does, so that vertex id
  says nothing about degree). ``noise`` adds the per-level perturbation of
  Seshadhri, Pinar & Kolda ("An in-depth study of stochastic Kronecker
  graphs", ICDM 2011), which removes the oscillating degree distribution of
  plain R-MAT. Every edge is drawn independently from a counter-based
  random stream (splitmix64 of seed, edge, level), so the numba kernel runs
  in parallel and the result depends only on the seed, not on the threads.
- :func:`barabasi_albert` — preferential attachment (Barabási & Albert,
  Science 1999) exactly as networkx builds it (a star on m+1 vertices, then
  each new vertex attaches to m distinct vertices drawn proportionally to
  degree), with the "repeated nodes" list making each draw O(1); sequential
  by nature, compiled with numba.
- :func:`erdos_renyi` — G(n, m) by sampling m distinct vertex pairs, and
  G(n, p) as G(n, m) with m ~ Binomial(#pairs, p) (the same distribution).
- :func:`random_labels` (uniform or Zipf-skewed) and :func:`with_labels`.

Duplicate edges of R-MAT are part of the model (many draws land on the same
cell); they are dropped by :func:`Graph.from_edges` and counted in
``graph.report`` without a warning.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numba import njit, prange

from ..errors import GraphError
from .csr import INT32_MAX, Graph

__all__ = ["rmat", "barabasi_albert", "erdos_renyi", "random_labels", "with_labels"]


# ---------------------------------------------------------------------------- RMAT
@njit(cache=True, inline="always")
def _splitmix64(z):  # pragma: no cover - compiled
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, parallel=True)
def _rmat_fill(scale, key, pa, pab, pabc, src, dst):  # pragma: no cover - compiled
    m = src.size
    for e in prange(m):
        u = np.int64(0)
        v = np.int64(0)
        base = np.uint64(e) * np.uint64(scale)
        for lev in range(scale):
            z = _splitmix64(key ^ _splitmix64(base + np.uint64(lev)))
            r = np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
            u <<= 1
            v <<= 1
            if r < pa[lev]:
                pass
            elif r < pab[lev]:
                v |= 1
            elif r < pabc[lev]:
                u |= 1
            else:
                u |= 1
                v |= 1
        src[e] = u
        dst[e] = v


def rmat(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19, c: float = 0.19,
         seed: int = 0, directed: bool = False, noise: bool | float = True,
         name: str | None = None) -> Graph:
    """A power-law R-MAT (Kronecker) graph with ``2**scale`` vertices.

    Parameters
    ----------
    scale : int
        log2 of the number of vertices (1..40).
    edge_factor : int, optional
        Edges drawn per vertex, before duplicates and self-loops are dropped.
        The default is 16 (Graph500).
    a, b, c : float, optional
        Quadrant probabilities (d = 1 - a - b - c). The defaults are Graph500's
        0.57, 0.19, 0.19.
    seed : int, optional
        The random seed; the graph depends only on it. The default is 0.
    directed : bool, optional
        Keep the drawn arcs directed. The default is ``False``.
    noise : bool or float, optional
        Per-level noise amplitude of Seshadhri et al. (``True`` means 0.1,
        ``False`` or 0 plain R-MAT). The default is ``True``.
    name : str, optional
        The default is ``"rmat-<scale>"``.

    Returns
    -------
    Graph
        ``2**scale`` vertices (some isolated), ``graph.report`` counting the
        dropped duplicates and self-loops.

    Examples
    --------
    >>> g = rmat(10, seed=1)
    >>> g.n, g.report.input_edges
    (1024, 16384)
    """
    if not 1 <= scale <= 40:
        raise GraphError(f"scale must be in 1..40, got {scale}")
    if edge_factor < 1:
        raise GraphError(f"edge_factor must be >= 1, got {edge_factor}")
    d = 1.0 - a - b - c
    if min(a, b, c, d) < 0:
        raise GraphError(f"a, b, c must be non-negative with a + b + c <= 1 (got {a}, {b}, {c})")
    n = 1 << scale
    m = edge_factor * n
    rng = np.random.default_rng(seed)
    amp = 0.1 if noise is True else float(noise or 0.0)
    mu = rng.uniform(-amp, amp, size=scale) if amp else np.zeros(scale)
    # noisy SKG (Seshadhri et al. 2011, Sec. 6): a and d move against b and c, sum kept at 1
    s = a + d
    la = a - 2 * mu * a / s if s else np.full(scale, a)
    lb = b + mu
    lc = c + mu
    ld = 1.0 - la - lb - lc
    if min(la.min(), lb.min(), lc.min(), ld.min()) < 0:
        raise GraphError(f"noise {amp} is too large for a={a}, b={b}, c={c}")
    pa = np.ascontiguousarray(la)
    pab = la + lb
    pabc = la + lb + lc
    key = np.uint64(int(rng.integers(0, 2**63)))
    src = np.empty(m, dtype=np.int64)
    dst = np.empty(m, dtype=np.int64)
    _rmat_fill(scale, key, pa, pab, pabc, src, dst)
    # Graph500 scrambles vertex ids so that id order carries no degree information
    perm = rng.permutation(n).astype(np.int64)
    src = perm[src]
    dst = perm[dst]
    return Graph.from_edges(src, dst, n=n, directed=directed, name=name or f"rmat-{scale}",
                            warn=False)


# ------------------------------------------------------------------ Barabási–Albert
@njit(cache=True)
def _ba_fill(n, m, seed, src, dst, rep):  # pragma: no cover - compiled
    np.random.seed(seed)
    k = 0
    r = 0
    # networkx's default initial graph: the star with centre 0 and leaves 1..m
    for i in range(1, m + 1):
        src[k] = 0
        dst[k] = i
        k += 1
        rep[r] = 0
        rep[r + 1] = i
        r += 2
    targets = np.empty(m, dtype=src.dtype)
    for v in range(m + 1, n):
        # m distinct targets, each drawn with probability proportional to degree:
        # rep holds every vertex once per incident edge end
        t = 0
        while t < m:
            x = rep[np.random.randint(0, r)]
            fresh = True
            for j in range(t):
                if targets[j] == x:
                    fresh = False
                    break
            if fresh:
                targets[t] = x
                t += 1
        for j in range(m):
            src[k] = v
            dst[k] = targets[j]
            k += 1
            rep[r] = targets[j]
            rep[r + 1] = v
            r += 2


def barabasi_albert(n: int, m: int, seed: int = 0, name: str | None = None) -> Graph:
    """A Barabási–Albert preferential-attachment graph (undirected).

    Parameters
    ----------
    n : int
        Number of vertices (> m).
    m : int
        Edges each new vertex attaches to existing ones (>= 1).
    seed : int, optional
        The random seed. The default is 0.
    name : str, optional
        The default is ``"ba-<n>-<m>"``.

    Returns
    -------
    Graph
        ``n`` vertices and exactly ``m * (n - m)`` edges (the initial star has
        m, each of the other n - m - 1 vertices adds m).

    Examples
    --------
    >>> g = barabasi_albert(1000, 3, seed=1)
    >>> g.n, g.num_edges
    (1000, 2991)
    """
    if m < 1 or n <= m:
        raise GraphError(f"Barabási–Albert needs 1 <= m < n, got n={n}, m={m}")
    total = m * (n - m)
    dt = np.int32 if n <= INT32_MAX else np.int64
    src = np.empty(total, dtype=dt)
    dst = np.empty(total, dtype=dt)
    rep = np.empty(2 * total, dtype=dt)
    _ba_fill(n, m, np.int64(seed) & 0xFFFFFFFF, src, dst, rep)
    del rep
    return Graph.from_edges(src, dst, n=n, name=name or f"ba-{n}-{m}")


# ------------------------------------------------------------------- Erdős–Rényi
def erdos_renyi(n: int, m: int | None = None, p: float | None = None, seed: int = 0,
                directed: bool = False, name: str | None = None) -> Graph:
    """A uniform random graph: G(n, m) (exactly m edges) or G(n, p).

    Parameters
    ----------
    n : int
        Number of vertices.
    m : int, optional
        Number of edges (distinct, no self-loops). Give ``m`` or ``p``.
    p : float, optional
        Probability of each possible edge.
    seed : int, optional
        The random seed. The default is 0.
    directed : bool, optional
        Draw arcs (n(n-1) possible) instead of edges (n(n-1)/2). The default
        is ``False``.
    name : str, optional
        The default is ``"er-<n>-<m>"``.

    Returns
    -------
    Graph

    Examples
    --------
    >>> erdos_renyi(100, m=250, seed=3).num_edges
    250
    """
    if (m is None) == (p is None):
        raise GraphError("give exactly one of m (edge count) or p (edge probability)")
    if n < 0:
        raise GraphError(f"n must be >= 0, got {n}")
    pairs = n * (n - 1) if directed else n * (n - 1) // 2
    rng = np.random.default_rng(seed)
    if p is not None:
        if not 0.0 <= p <= 1.0:
            raise GraphError(f"p must be in [0, 1], got {p}")
        m = int(rng.binomial(pairs, p)) if pairs else 0
    assert m is not None
    if not 0 <= m <= pairs:
        raise GraphError(f"m={m} is not in 0..{pairs} (the possible edges of n={n})")
    keys = np.sort(rng.choice(pairs, size=m, replace=False)) if m else np.zeros(0, np.int64)
    keys = keys.astype(np.int64)
    if directed:
        src = keys // (n - 1) if n > 1 else keys
        dst = keys % (n - 1) if n > 1 else keys
        dst = dst + (dst >= src)          # skip the diagonal
    else:
        # key k -> the k-th pair (i, j), i < j, in the order of the strict upper triangle
        # by columns: pair index k = j(j-1)/2 + i, so j = floor((1 + sqrt(1 + 8k)) / 2)
        j = np.floor((1.0 + np.sqrt(1.0 + 8.0 * keys.astype(np.float64))) / 2.0).astype(np.int64)
        j -= (j * (j - 1) // 2 > keys)    # float rounding guards
        j += ((j + 1) * j // 2 <= keys)
        src = keys - j * (j - 1) // 2
        dst = j
    return Graph.from_edges(src, dst, n=n, directed=directed, name=name or f"er-{n}-{m}")


# ------------------------------------------------------------------------- labels
def random_labels(n: int, num_labels: int, distribution: str = "uniform", seed: int = 0, *,
                  zipf_s: float = 1.5) -> np.ndarray:
    """Random vertex (or edge) labels ``0..num_labels-1``.

    Parameters
    ----------
    n : int
        How many labels to draw.
    num_labels : int
        Size of the label alphabet (>= 1).
    distribution : {"uniform", "zipf"}, optional
        ``"zipf"`` gives label k probability proportional to ``1/(k+1)**zipf_s``
        (label 0 the most frequent), like the skewed labels of real graphs. The
        default is ``"uniform"``.
    seed : int, optional
        The random seed. The default is 0.
    zipf_s : float, optional
        The Zipf exponent (> 0). The default is 1.5.

    Returns
    -------
    numpy.ndarray of int32, shape (n,)

    Examples
    --------
    >>> random_labels(5, 3, seed=1).dtype
    dtype('int32')
    """
    if num_labels < 1:
        raise GraphError(f"num_labels must be >= 1, got {num_labels}")
    rng = np.random.default_rng(seed)
    if distribution == "uniform":
        return rng.integers(0, num_labels, size=n, dtype=np.int32)
    if distribution == "zipf":
        if zipf_s <= 0:
            raise GraphError(f"zipf_s must be > 0, got {zipf_s}")
        w = 1.0 / np.arange(1, num_labels + 1, dtype=np.float64) ** zipf_s
        cdf = np.cumsum(w)
        cdf /= cdf[-1]
        # inverse-CDF sampling: one uniform and one binary search per label
        out = np.searchsorted(cdf, rng.random(n), side="right")
        return np.minimum(out, num_labels - 1).astype(np.int32)
    raise GraphError(f"unknown label distribution {distribution!r}; use 'uniform' or 'zipf'")


def with_labels(graph: Graph, vertex_labels: Any = None, edge_labels: Any = None) -> Graph:
    """A copy of ``graph`` with vertex and/or edge labels attached.

    Parameters
    ----------
    graph : Graph
    vertex_labels : array-like of int, optional
        One non-negative label per vertex (internal order). The default is
        ``None``: keep the graph's.
    edge_labels : array-like of int, optional
        One label per edge, aligned with :meth:`Graph.edges` (undirected:
        each edge once). The default is ``None``: keep the graph's.

    Returns
    -------
    Graph
        Shares the adjacency arrays when only vertex labels change.

    Examples
    --------
    >>> g = with_labels(barabasi_albert(10, 2), vertex_labels=random_labels(10, 3))
    >>> g.labeled
    True
    """
    vl = graph.vertex_labels
    if vertex_labels is not None:
        vl = np.asarray(vertex_labels)
        if vl.shape != (graph.n,):
            raise GraphError(f"vertex_labels has shape {vl.shape}; expected ({graph.n},)")
        if vl.dtype.kind not in "iu":
            raise GraphError("vertex_labels must hold integers")
        if vl.size and (int(vl.min()) < 0 or int(vl.max()) > INT32_MAX):
            raise GraphError("vertex labels must be in 0..2**31-1")
        vl = vl.astype(np.int32)
    if edge_labels is None:
        return dataclasses.replace(graph, vertex_labels=vl)
    el = np.asarray(edge_labels)
    if el.shape != (graph.num_edges,):
        raise GraphError(f"edge_labels has shape {el.shape}; expected ({graph.num_edges},), "
                         "one per edge of graph.edges()")
    if el.dtype.kind not in "iu" or (el.size and (int(el.min()) < 0
                                                  or int(el.max()) > INT32_MAX)):
        raise GraphError("edge labels must be integers in 0..2**31-1")
    src, dst = graph.edges()
    return Graph.from_edges(src, dst, n=graph.n, vertex_labels=vl, edge_labels=el,
                            directed=graph.directed, ids=graph.ids, name=graph.name,
                            warn=False)
