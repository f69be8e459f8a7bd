"""Variable elimination over numpy (or CuPy) tables: one query vertex summed out of the
tables that hold it (:mod:`warpmatch._hombasis`'s :meth:`~warpmatch._hombasis.HomCounter.hom`
calls it for each vertex of its order, :meth:`~warpmatch._hombasis.HomCounter.plan` sizes
the matrix product of :func:`last_block`).

Map: :func:`eliminate` (the product of the counted tables, reduced modulo each prime after
each product; the 0/1 blocks multiplied in without reduction; the last block contracted by
a matrix product where no other table holds its other end) < :func:`last_block` (which
block that is) < :func:`aligned` (a table transposed and expanded to broadcast over a
scope).

How it differs from textbook variable elimination (Dechter 1999, bucket elimination): the
tables hold residues modulo a few primes on a last axis (exact below 2^53 in float64), and
0/1 blocks of arcs are kept apart from counted tables, since their products need no
reduction.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["eliminate", "last_block", "aligned"]


def aligned(arr: np.ndarray, scope: list[int], target: list[int], p_axis: bool,
             want_p: bool) -> np.ndarray:
    """``arr`` (axes ``scope``, then the primes' axis if ``p_axis``) transposed and expanded
    to broadcast over ``target`` (then a primes' axis if ``want_p``)."""
    perm = [scope.index(v) for v in target if v in scope]
    if p_axis:
        perm.append(len(scope))
    out = arr.transpose(perm) if perm != list(range(arr.ndim)) else arr
    shape = []
    it = iter(out.shape)
    for v in target:
        shape.append(next(it) if v in scope else 1)
    if want_p:
        shape.append(next(it) if p_axis else 1)
    return out.reshape(shape)


def last_block(x: int, mine: list[tuple[list[int], bool]], dom: Any
                ) -> tuple[int | None, float]:
    """Which of the factors ``mine`` (scope, is a 0/1 block) holding ``x`` is contracted
    last, by a matrix product (:func:`eliminate`): a block whose other end no other
    factor holds, the largest such; and the entries of the product of the others, which
    is built in full (the whole product where no block qualifies)."""
    union: set[int] = set()
    for sc, _ in mine:
        union |= set(sc)
    best, best_dom = None, -1
    for i, (sc, is_block) in enumerate(mine):
        if not is_block:
            continue
        y = sc[1] if sc[0] == x else sc[0]
        if any(y in sc2 for j, (sc2, _) in enumerate(mine) if j != i):
            continue
        if dom[y] > best_dom:
            best, best_dom = i, dom[y]
    size = math.prod(float(dom[v]) for v in union)
    return best, size if best is None else size / max(best_dom, 1)


def eliminate(x: int, mine: list[tuple[list[int], Any, bool]], mods: Any, width: int,
               xp: Any = np) -> tuple[list[int], Any, bool]:
    """Sum ``x`` out of the product of the factors ``mine`` (all hold ``x``), arrays of
    ``xp`` (numpy or CuPy)."""
    tables = [f for f in mine if f[2]]
    blocks = [f for f in mine if not f[2]]
    # the product of the counted tables (residues: reduced after each product)
    scope: list[int] = []
    acc: np.ndarray | None = None
    for s, arr, _ in tables:
        union = scope + [v for v in s if v not in scope]
        nxt = aligned(arr, s, union, True, True)
        acc = nxt if acc is None else aligned(acc, scope, union, True, True) * nxt
        if mods is not None and acc is not nxt:
            acc = xp.fmod(acc, mods)
        scope = union
    # the 0/1 blocks but the last: their products stay 0/1, nothing to reduce
    has_p = bool(tables)
    at, _ = last_block(x, [(f[0], f[2] is False) for f in mine],
                        {v: n for f in mine for v, n in zip(f[0], f[1].shape)})
    last = None
    if at is not None:
        last = mine[at]
        blocks = [f for f in blocks if f is not last]
    for s, arr, _ in blocks:
        union = scope + [v for v in s if v not in scope]
        nxt = aligned(arr, s, union, False, has_p)
        acc = nxt if acc is None else aligned(acc, scope, union, has_p, has_p) * nxt
        scope = union
    if last is None:
        assert acc is not None
        out = acc.sum(axis=scope.index(x))
        scope = [v for v in scope if v != x]
    else:
        s, arr, _ = last
        y = s[1] if s[0] == x else s[0]
        if acc is None:
            # a vertex with one arc and nothing else: its block's sums
            out = arr.sum(axis=s.index(x))
            scope = [y]
        elif y in scope:
            union = scope
            prod = aligned(acc, scope, union, has_p, has_p) * aligned(arr, s, union, False,
                                                                        has_p)
            out = prod.sum(axis=scope.index(x))
            scope = [v for v in scope if v != x]
        else:
            # a matrix product: sum over x of acc[x, ...] * block[x, y]
            blk = arr if s[0] == x else arr.T
            out = xp.tensordot(acc, blk, axes=([scope.index(x)], [0]))
            # axes now: scope less x (and the primes' axis if any), then y
            rest = [v for v in scope if v != x]
            if has_p:
                out = xp.moveaxis(out, -1, len(rest))     # y before the primes' axis
            scope = rest + [y]
    if not has_p:
        out = out[..., None] * xp.ones(width)
    if mods is not None:
        out = xp.fmod(out, mods)
    return scope, out, True
