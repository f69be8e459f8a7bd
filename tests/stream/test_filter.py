"""The candidate filter's per-batch masks (stream/filter.py) against a reference.

The reference reads what the masks stand for straight off the batch's overlay: a touched
vertex counts every entry of its overlay rows (each version of its neighbourhood,
deleted entries included), an untouched one its stored row. After the batch is applied
the kept counts equal a fresh build on the new graph. Random graphs (directed or not,
vertex labels), random batches with repeats and invalid updates, several batches in a
row so that the incremental path is the one checked.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpmatch.graph.csr import Graph
from warpmatch.query.model import Query
from warpmatch.stream.dynamic import DynamicGraph
from warpmatch.stream.filter import NlfFilter, _mask_of
from warpmatch.stream.types import Updates

QUERIES = {False: ["a:0-b:1, b-c, c-a", "a-b, b-c:1, c-d:0, d-a", "a:1-b, a-c, a-d:1"],
           True: ["a:0->b:1, b->c, c->a", "a->b:1, c:0->b, c->d", "a:1->b, b->a, b->c:0"]}


def reference_masks(filt: NlfFilter, view, n: int) -> np.ndarray:
    """Per vertex: the mask of its counts over every entry of its overlay rows if it has
    any, else over its stored rows (S_0)."""
    out = np.zeros(n, np.uint64)
    dirs = [("o", "b")] + ([("oi", "bi")] if filt.directed else [])
    for v in range(n):
        cnt = np.zeros((1, filt.K), np.int64)
        for d, (o, b) in enumerate(dirs):
            r = int(getattr(view, f"{o}_idx")[v]) if v < getattr(view, f"{o}_idx").shape[0] \
                else -1
            if r >= 0:
                off = getattr(view, f"{o}_off")
                nbrs = getattr(view, f"{o}_nbr")[off[r]:off[r + 1]]
            else:
                s, g = int(getattr(view, f"{b}_start")[v]), int(getattr(view, f"{b}_deg")[v])
                nbrs = getattr(view, f"{b}_nbr")[s:s + g]
            base = d * filt.nq1
            cnt[0, base] = nbrs.size
            for w in nbrs.tolist():
                li = int(filt.lab_idx[w])
                if li >= 0:
                    cnt[0, base + 1 + li] += 1
        out[v] = _mask_of(cnt, 0, filt.lab_idx[v], filt.qlab, filt.req)
    return out


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), directed=st.booleans(), qi=st.integers(0, 2),
       n=st.integers(3, 14), batch=st.integers(1, 30))
def test_masks_are_the_unions_of_the_overlay_rows_and_counts_stay_exact(seed, directed, qi,
                                                                           n, batch):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(0, 3 * n))
    src, dst = rng.integers(n, size=(2, m))
    g = Graph.from_edges(src, dst, n=n, directed=directed,
                         vertex_labels=rng.integers(2, size=n), warn=False)
    dg = DynamicGraph(g, slack=float(rng.choice([0.0, 0.5])))
    q = Query.parse(QUERIES[directed][qi])
    filt = NlfFilter(q, directed)
    filt.bind(dg)
    for _ in range(4):
        s, d = rng.integers(n, size=(2, batch))
        op = np.where(rng.random(batch) < 0.6, 1, -1).astype(np.int8)
        b = dg.prepare(Updates(s.astype(np.int64), d.astype(np.int64), op), "skip")
        view = dg.view(b)
        got = filt.masks(view, dg)[:n].copy()
        assert np.array_equal(got, reference_masks(filt, view, n))
        dg.apply(b)
        fresh = NlfFilter(q, directed)
        fresh.bind(dg)
        touched = np.union1d(view.o_rows, view.oi_rows)
        assert np.array_equal(filt.cnt[touched], fresh.cnt[touched])
