"""How much work one 4-cycle update is, on the stream ``latency.py`` replays (issue 17).

Builds ``latency.py``'s graph and stream (R-MAT of ``--edges``, ``make_stream``: 10%
inserted, 5% deleted) and, for the first ``--updates`` updates, measured on ``G_0`` (the
stream's own earlier updates are not applied: an estimate), prints:

- ``tests``: the depth-3 candidates the GPU delta kernel tests for the update ``(u, v)``:
  for a square ``u - w - x - v`` it takes ``w`` from ``u``'s row and tests each ``x`` of
  the shorter of ``w``'s and ``v``'s rows, so ``sum over w in N(u) of min(d(w), d(v))``,
  plus the same from ``v``'s side;
- ``squares``: the 4-cycles through the edge, ``sum over w in N(u) - {v} of
  |N(w) & N(v) - {u}|``;

as mean, p50, p99 and max, and the updates with the most work. Where the kernel's time
per batch is known (``batch_cost.py``), tests over seconds says how much of the device a
batch used. Pure numpy on the host; no GPU needed.

Usage::

    python bench/square_work.py --edges 1e7 --updates 500
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _sibling import load  # bench/_sibling.py: sibling benchmarks by path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", type=float, default=1e6)
    ap.add_argument("--updates", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1, help="latency.py's default seed")
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args(argv)

    from warpmatch.stream.generate import make_stream
    t = time.perf_counter()
    graph, desc = load("_csm_workloads").powerlaw_graph(args.edges, args.seed)
    g0, stream = make_stream(graph, 0.1, 0.05, seed=args.seed)
    ip, ix = np.asarray(g0.indptr), np.asarray(g0.indices)
    deg = np.diff(ip)
    print(f"graph {desc}: G_0 {g0.n:,} vertices, {g0.num_edges:,} edges, max degree "
          f"{int(deg.max()):,}; {time.perf_counter() - t:.1f} s", flush=True)
    src, dst = np.asarray(stream.src), np.asarray(stream.dst)
    n = min(args.updates, src.size)
    tests = np.zeros(n)
    squares = np.zeros(n)
    ends = np.zeros((n, 2), np.int64)
    for i in range(n):
        u, v = int(src[i]), int(dst[i])
        if max(u, v) >= deg.size:          # a vertex new to G_0: no row yet
            continue
        nu, nv = ix[ip[u]:ip[u + 1]], ix[ip[v]:ip[v + 1]]
        tests[i] = np.minimum(deg[nu], deg[v]).sum() + np.minimum(deg[nv], deg[u]).sum()
        ends[i] = deg[u], deg[v]
        c = 0
        for w in nu.tolist():
            if w != v:
                nw = ix[ip[w]:ip[w + 1]]
                c += int(np.isin(nw, nv, assume_unique=True).sum()) - int(u in nv and u in nw)
        squares[i] = c
    for name, x in (("tests", tests), ("squares", squares)):
        print(f"{name:>8}: mean {x.mean():.3g}, p50 {np.median(x):.3g}, p99 "
              f"{np.quantile(x, 0.99):.3g}, max {x.max():.3g} per update ({n} updates)")
    print(f"first 32 updates: {tests[:32].sum():.3g} tests")
    print("most work: update (d(u), d(v)): tests, squares")
    for i in np.argsort(-tests)[:args.top]:
        print(f"  {int(i)} ({int(ends[i, 0]):,}, {int(ends[i, 1]):,}): {tests[i]:.3g}, "
              f"{squares[i]:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
