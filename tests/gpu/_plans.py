"""Hand-built plans and a brute-force plan executor for the GPU engine's tests.

The planner (:func:`warpmatch.plan.build_plan`) chooses orders, filters and
symmetry restrictions; these helpers build *arbitrary valid* plans instead
(random connected orders, random candidate restrictions, random symmetry
restrictions), so the tests check that the GPU engine executes every rule of
the Plan contract, not only the plans the planner happens to produce. The
oracle below executes a plan literally, rule by rule, in pure Python.
"""
from __future__ import annotations

import numpy as np

from warpmatch.graph.csr import Graph
from warpmatch.plan.plan import Plan
from warpmatch.query.model import Query


def _i32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int32)


def make_plan(graph: Graph, query: Query, rng: np.random.Generator, induced: bool = False,
              restrict_sets: bool = False, n_res: int = 0) -> Plan:
    """A valid plan for ``query`` on ``graph`` with a random connected order."""
    k = query.k
    A = query.adjacency()
    und = A | A.T
    L = query.edge_label_matrix()
    order = [int(rng.integers(k))]
    while len(order) < k:
        front = [u for u in range(k) if u not in order and und[u, order].any()]
        order.append(int(rng.choice(front)))
    outd, ind = query.out_degree(), query.in_degree()
    bn_ptr, bn_pos, bn_dir, bn_el = [0], [], [], []
    na_ptr, na_pos, na_dir = [0], [], []
    res_ptr, res_pos, res_sign = [0], [], []
    cand_ptr, cand_ids, restricted = [0], [], []
    labels = graph.vertex_labels
    for i, u in enumerate(order):
        for j in range(i):
            w = order[j]
            if query.directed:
                if A[w, u]:
                    bn_pos.append(j); bn_dir.append(0); bn_el.append(int(L[w, u]))
                if A[u, w]:
                    bn_pos.append(j); bn_dir.append(1); bn_el.append(int(L[u, w]))
                if induced and not A[w, u]:
                    na_pos.append(j); na_dir.append(0)
                if induced and not A[u, w]:
                    na_pos.append(j); na_dir.append(1)
            else:
                if A[w, u]:
                    bn_pos.append(j); bn_dir.append(0); bn_el.append(int(L[w, u]))
                elif induced:
                    na_pos.append(j); na_dir.append(0)
        bn_ptr.append(len(bn_pos)); na_ptr.append(len(na_pos))
        for _ in range(n_res if i > 0 else 0):
            if rng.random() < 0.5:
                res_pos.append(int(rng.integers(i))); res_sign.append(int(rng.choice([-1, 1])))
        res_ptr.append(len(res_pos))
        if i == 0 or (restrict_sets and rng.random() < 0.5):
            ids = np.arange(graph.n)
            lab = int(query.vertex_labels[u])
            if lab != -1 and labels is not None:
                ids = ids[labels == lab]
            if i > 0:   # a random superset-free subset: rule 3 must be honoured
                ids = ids[rng.random(ids.size) < 0.7]
            cand_ids.extend(ids.tolist())
            restricted.append(True)
        else:
            restricted.append(False)
        cand_ptr.append(len(cand_ids))
    return Plan(
        k=k, order=_i32(order), vlabel=_i32(query.vertex_labels[order]),
        min_out_deg=_i32(outd[order]), min_in_deg=_i32(ind[order]),
        bn_ptr=_i32(bn_ptr), bn_pos=_i32(bn_pos), bn_dir=np.asarray(bn_dir, np.int8),
        bn_elabel=_i32(bn_el), na_ptr=_i32(na_ptr), na_pos=_i32(na_pos),
        na_dir=np.asarray(na_dir, np.int8), res_ptr=_i32(res_ptr), res_pos=_i32(res_pos),
        res_sign=np.asarray(res_sign, np.int8), cand_ptr=np.asarray(cand_ptr, np.int64),
        cand_ids=np.asarray(cand_ids, graph.indices.dtype),
        cand_restricted=np.asarray(restricted, bool), induced=induced,
        directed=query.directed, query=query)


def _edge(graph: Graph, u: int, v: int, el: int) -> bool:
    row = graph.neighbors(u)
    i = int(np.searchsorted(row, v))
    if i >= row.size or int(row[i]) != v:
        return False
    return el == -1 or int(graph.edge_labels[int(graph.indptr[u]) + i]) == el


def oracle_matches(graph: Graph, plan: Plan) -> list[tuple[int, ...]]:
    """All raw matches of ``plan`` (depth order), executing rules 1-7 literally."""
    k = plan.k
    out_deg, in_deg = graph.out_degree, graph.in_degree
    res: list[tuple[int, ...]] = []
    cands = [None if not plan.cand_restricted[d] else
             set(plan.cand_ids[plan.cand_ptr[d]:plan.cand_ptr[d + 1]].tolist()) for d in range(k)]

    def ok(d: int, M: list[int], c: int) -> bool:
        if plan.vlabel[d] != -1 and int(graph.vertex_labels[c]) != plan.vlabel[d]:
            return False
        if out_deg[c] < plan.min_out_deg[d] or in_deg[c] < plan.min_in_deg[d]:
            return False
        if cands[d] is not None and c not in cands[d]:
            return False
        if c in M:
            return False
        for t in range(plan.bn_ptr[d], plan.bn_ptr[d + 1]):
            j, dr, el = int(plan.bn_pos[t]), int(plan.bn_dir[t]), int(plan.bn_elabel[t])
            if not (_edge(graph, M[j], c, el) if dr == 0 else _edge(graph, c, M[j], el)):
                return False
        for t in range(plan.na_ptr[d], plan.na_ptr[d + 1]):
            j, dr = int(plan.na_pos[t]), int(plan.na_dir[t])
            if (_edge(graph, M[j], c, -1) if dr == 0 else _edge(graph, c, M[j], -1)):
                return False
        for t in range(plan.res_ptr[d], plan.res_ptr[d + 1]):
            j, s = int(plan.res_pos[t]), int(plan.res_sign[t])
            if not (c > M[j] if s == 1 else c < M[j]):
                return False
        return True

    def rec(M: list[int]) -> None:
        d = len(M)
        if d == k:
            res.append(tuple(M))
            return
        pool = range(graph.n) if cands[d] is None else sorted(cands[d])
        for c in pool:
            if ok(d, M, c):
                rec(M + [c])

    rec([])
    return res
