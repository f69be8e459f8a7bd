"""METIS on a contracted graph (partition/coarsen.py) and chunked edge passes.

- Label propagation keeps every cluster within its weight bound, and the cluster
  graph's weights are the fine graph's: summed vertex weights, edge weights counting
  the edges between two clusters (against a numpy reference, hypothesis).
- On a planted-partition graph the contracted path's cut is no worse than 1.2x
  METIS on the whole graph, balanced within 10%; parts are valid ids.
- Partitioned counts through the contracted path equal the in-memory engine's.
- edge_chunks bounds a chunk's entries as well as its rows.
"""
from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warpmatch as wm
from warpmatch.engine.cpu import CpuEngine
from warpmatch.graph.csr import Graph, edge_chunks
from warpmatch.partition import Partitioned, count_partitioned
from warpmatch.partition import coarsen as C
from warpmatch.partition.split import _weights

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_helpers import graphs  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
pymetis = pytest.importorskip("pymetis", reason="the contracted METIS path needs pymetis")


def _sym(g: Graph) -> tuple[np.ndarray, np.ndarray]:
    from warpmatch.partition.split import _symmetric
    ptr, nbr = _symmetric(g)
    return np.asarray(ptr, dtype=np.int64), np.asarray(nbr)


def _cut(g: Graph, part: np.ndarray) -> int:
    ptr, nbr = _sym(g)
    src = np.repeat(np.arange(g.n), np.diff(ptr))
    return int(np.count_nonzero(part[src] != part[nbr])) // 2


@SETTINGS
@given(g=graphs(nmax=30), seed=st.integers(0, 5), cap=st.integers(1, 12))
def test_clusters_and_their_graph(g: Graph, seed: int, cap: int) -> None:
    ptr, nbr = _sym(g)
    vw = _weights(g)
    bound = max(int(vw.max(initial=1)), cap)
    cid, c = C._clusters(ptr, nbr, np.empty(0, np.int64), vw, bound, 4, seed)
    assert cid.shape == (g.n,) and (g.n == 0 or (cid.min() == 0 and cid.max() == c - 1))
    weight = np.bincount(cid, weights=vw, minlength=c)
    assert weight.max(initial=0) <= bound
    cptr, cnbr, cew, cvw = C._contract(ptr, nbr, np.empty(0, np.int64), vw, cid, c)
    assert np.array_equal(cvw, weight.astype(np.int64))
    want: dict[tuple[int, int], int] = {}
    src = np.repeat(np.arange(g.n), np.diff(ptr))
    for a, b in zip(cid[src].tolist(), cid[nbr].tolist()):
        if a != b:
            want[(a, b)] = want.get((a, b), 0) + 1
    got = {(a, int(cnbr[i])): int(cew[i]) for a in range(c)
           for i in range(cptr[a], cptr[a + 1])}
    assert got == want
    for a in range(c):          # sorted rows, symmetric weights
        row = cnbr[cptr[a]:cptr[a + 1]]
        assert np.all(row[1:] > row[:-1])


def _planted(seed: int) -> Graph:
    G = nx.random_partition_graph([400] * 8, 0.05, 0.002, seed=seed)
    return Graph.from_networkx(G)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_contracted_cut_is_close_to_metis_on_the_whole_graph(seed: int) -> None:
    g = _planted(seed)
    ptr, nbr = _sym(g)
    vw = _weights(g)
    whole, c0 = C.metis_parts(pymetis, ptr, nbr, vw, 8, seed)
    small, c1 = C.metis_parts(pymetis, ptr, nbr, vw, 8, seed, direct=0)
    assert c0 == 0 and 8 < c1 < g.n
    for part in (whole, small):
        assert part.dtype == np.int32 and part.min() >= 0 and part.max() < 8
    assert _cut(g, small) <= 1.2 * _cut(g, whole)
    load = np.bincount(small, weights=vw, minlength=8)
    assert load.max() <= 1.1 * load.mean()


def test_partitioned_counts_through_the_contracted_path(monkeypatch) -> None:
    monkeypatch.setattr(C, "METIS_DIRECT_ENTRIES", 0)
    monkeypatch.setattr(C, "CLUSTERS_PER_PART", 4)
    contracted: list[int] = []
    contract = C._contract
    monkeypatch.setattr(C, "_contract", lambda *a: contracted.append(1) or contract(*a))
    g = Graph.from_networkx(nx.powerlaw_cluster_graph(600, 4, 0.3, seed=5))
    pg = Partitioned.build(g, parts=4, method="metis")
    assert pg.parts == 4 and pg.method == "metis" and contracted
    for name in ("triangle", "square", "diamond", "tailed-triangle"):
        got, stats, done = count_partitioned(pg, wm.api.as_query(name, g), engine=CpuEngine())
        assert done and got == wm.count(g, name, backend="cpu") and stats.inter > 0


@given(g=graphs(nmax=30), rows=st.integers(1, 8), entries=st.integers(1, 20))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_edge_chunks_bound_rows_and_entries(g: Graph, rows: int, entries: int) -> None:
    chunks = list(edge_chunks(g, rows=rows, entries=entries))
    src = np.concatenate([s for s, _ in chunks]) if chunks else np.zeros(0, np.int64)
    dst = np.concatenate([d for _, d in chunks]) if chunks else np.zeros(0, np.int32)
    want = np.repeat(np.arange(g.n), np.diff(g.indptr))
    assert np.array_equal(src, want) and np.array_equal(dst, g.indices)
    for s, _ in chunks:
        one_row = s.size == 0 or s[0] == s[-1]
        assert (s.size <= entries or one_row) and np.unique(s).size <= rows


def test_few_clusters_and_no_shrinking_fall_back_correctly(monkeypatch) -> None:
    """Two cliques joined by one edge contract to as many clusters as parts: each
    cluster is then a part. A perfect matching whose bound forbids every merge (each
    vertex weighs the bound) is not shrunk: METIS cuts it whole."""
    monkeypatch.setattr(C, "CLUSTERS_PER_PART", 1)
    G = nx.disjoint_union(nx.complete_graph(30), nx.complete_graph(30))
    G.add_edge(0, 30)
    g = Graph.from_networkx(G)
    ptr, nbr = _sym(g)
    part, c = C.metis_parts(pymetis, ptr, nbr, _weights(g), 2, 0, direct=0)
    assert c == 2 and sorted(np.bincount(part).tolist()) == [30, 30] and _cut(g, part) == 1
    monkeypatch.setattr(C, "CLUSTERS_PER_PART", 30)       # bound = one vertex's weight
    m = Graph.from_networkx(nx.Graph([(2 * i, 2 * i + 1) for i in range(40)]))
    ptr, nbr = _sym(m)
    part, c = C.metis_parts(pymetis, ptr, nbr, _weights(m), 2, 0, direct=0)
    assert c == 0 and part.shape == (80,) and set(part.tolist()) == {0, 1}
    assert _cut(m, part) == 0


def test_progress_runs_through_every_stage(monkeypatch) -> None:
    """Partitioned.build reports METIS's stages, in order, up to done == total, on the
    contracted path and on the direct one."""
    g = Graph.from_networkx(nx.powerlaw_cluster_graph(800, 4, 0.3, seed=7))
    for direct in (0, 1 << 30):
        monkeypatch.setattr(C, "METIS_DIRECT_ENTRIES", direct)
        seen: list[tuple[int, int]] = []
        Partitioned.build(g, parts=3, method="metis", progress=lambda d, t: seen.append((d, t)))
        assert seen and seen[-1][0] == seen[-1][1] == C.LP_ROUNDS + 2 + C.REFINE_ROUNDS
        assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
        assert (len(seen) > 2) == (direct == 0)
