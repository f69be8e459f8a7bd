#!/usr/bin/env python3
"""How well a cost estimate cuts a search into shards: every shard's engine seconds, one
after another in this process, for several exponents of the ``(1 + degree)^e`` estimate of
``warpmatch.distributed.shards`` (issue 20); with ``--hubs``, also for several ``hub`` factors of ``make_shards`` (roots above
``1/hub`` of a shard's estimate cut apart and split at depth 1), with ``--deals``, for several
sizes of the groups the costliest roots are dealt into, shards of their own
(``make_shards(deal=)``: hubs per group; 0: every root in a range, cut in root order).

For each pattern: the direct count (timed once warm), then for each ``--cuts`` exponent the
shards of ``make_shards(graph, plan, --shards)`` with that estimate, each counted and timed
(the GPU engine as a Dask worker runs it: ``launches="pool"``), their counts summed and
checked equal to the direct count. Printed per cut (exponent, hub factor, deal): the shards, their seconds summed, the
costliest shard and its share, and the makespan of list scheduling on 1, 2 and 4 workers in
the order Dask would run them (costliest estimate first, as ``distributed.static._submit``
submits them) with no per-task or client cost: what the cut alone allows.

The graph: with ``--engine gpu``, the Chung-Lu graph of ``bench/distributed.py --graph
chung-lu`` (generated on the GPU, cached in ``--work-dir``); with ``--engine cpu``, a numpy
Chung-Lu graph of the same law (``--edges``; not the same graph).

Examples
--------
    python bench/shard_cuts.py --patterns square,stmatch:22 --cuts 2,2.5,3      # a GPU, 10^8
    python bench/shard_cuts.py --engine cpu --edges 1e7 --patterns stmatch:17 --cuts 2,2.5
    python bench/shard_cuts.py --patterns stmatch:22 --cuts 2 --hubs 1,8,16    # hubs cut finer
    python bench/shard_cuts.py --patterns stmatch:22 --cuts 2 --deals 0,1,4    # hubs dealt
"""
from __future__ import annotations

import argparse
import heapq
import json
import time
from pathlib import Path

import numpy as np

from _sibling import load  # bench/_sibling.py: sibling benchmarks by path



def chung_lu_cpu(edges: int, seed: int = 1):
    """A deduplicated undirected Chung-Lu graph with weights ``(i + 100)^(-2/3)`` over
    ``edges / 8`` vertices (the law of ``bench/gpu.py``'s generator), built with numpy."""
    from warpmatch.graph.csr import Graph
    n = max(16, edges // 8)
    rs = np.random.RandomState(seed)
    draw = int(edges * 1.08)               # a few percent are loops and duplicates
    w = (np.arange(n, dtype=np.float64) + 100.0) ** (-2.0 / 3.0)
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    u = np.searchsorted(cdf, rs.random_sample(draw))
    v = np.searchsorted(cdf, rs.random_sample(draw))
    keep = u != v
    a, b = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
    key = np.unique(a * n + b)[:edges]
    return Graph.from_edges(key // n, key % n, n=n, name=f"cl-cpu{edges:.0e}")


def makespan(items: list, workers: int) -> float:
    """List scheduling of ``(shard, seconds)`` on ``workers``: each next shard, in Dask's
    submission order, to the worker free first."""
    from warpmatch.distributed.static import _heavy_first
    free = [0.0] * workers
    for shard, secs in sorted(items, key=lambda it: _heavy_first(it[0])):
        heapq.heappush(free, heapq.heappop(free) + secs)
    return max(free)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--patterns", default="square,stmatch:22")
    ap.add_argument("--cuts", default="2,2.5", help="exponents e of (1 + degree)^e (2,2.5)")
    ap.add_argument("--hubs", default="1",
                    help="hub factors of make_shards, comma-separated (1: the default cut)")
    ap.add_argument("--deals", default=None,
                    help="hubs per hub group (make_shards' deal; 0: none), comma-separated "
                         "(default: the shipped DEAL_ROUNDS only)")
    ap.add_argument("--shards", type=int, default=32, help="shards asked for (32)")
    ap.add_argument("--edges", type=float, default=1e8)
    ap.add_argument("--engine", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--work-dir", default="build/dist", help="where the GPU graph is cached")
    ap.add_argument("--json", default=None, help="every shard's seconds, per pattern and cut")
    args = ap.parse_args(argv)

    from warpmatch.distributed import shards as S
    from warpmatch.distributed.static import _shard_engine
    from warpmatch.engine import get_engine
    from warpmatch.plan import build_plan
    B = load("distributed")
    if args.engine == "gpu":
        g, _ = B.build_graph(argparse.Namespace(work_dir=args.work_dir, graph="chung-lu",
                                                edges=args.edges, seed=1))
    else:
        g = chung_lu_cpu(int(args.edges))
    print(f"graph {g.name}: {g.n:,} vertices, {g.num_edges:,} edges, max degree "
          f"{g.max_degree:,}; engine {args.engine}", flush=True)
    eng = get_engine(args.engine)
    seng = _shard_engine(eng)
    out: dict = {}
    for name, q in B.queries(args.patterns):
        plan = build_plan(g, q, mode="embeddings", purpose="count")
        eng.count(g, plan)                                   # compile, load
        t = time.perf_counter()
        total = eng.count(g, plan)
        direct = time.perf_counter() - t
        print(f"{name} ({plan.k} vertices): direct {direct:.2f} s", flush=True)
        deals = (args.deals or str(S.DEAL_ROUNDS)).split(",")
        for cut, hub, deal in [(c, h, d) for c in args.cuts.split(",")
                               for h in args.hubs.split(",") for d in deals]:
            # edge queries keep the shipped estimate
            exp = None if plan.k < 3 else float(cut)
            parts = S.make_shards(g, plan, args.shards, hub=float(hub), deal=int(deal),
                                  exponent=exp)
            warm = {}
            for s in parts:                 # a module per kind of cut: compile untimed
                warm.setdefault(s.depth1 is not None, s)
            for s in warm.values():
                seng.count(g, S.shard_plan(plan, s))
            items, got = [], 0
            for s in parts:
                sp = S.shard_plan(plan, s)
                t = time.perf_counter()
                got += seng.count(g, sp)
                items.append((s, time.perf_counter() - t))
            if got != total:
                raise SystemExit(f"{name}, e={cut}, hub={hub}, deal={deal}: shards counted {got}, "
                                 f"direct {total}")
            secs = np.array([t for _, t in items])
            m = {n: makespan(items, n) for n in (1, 2, 4)}
            top = sorted(items, key=lambda it: -it[1])[:3]
            print(f"  e={cut} hub={hub} deal={deal}: {len(parts)} shards ({sum(s.depth1 is not None for s in parts)}"
                  f" depth-1 slices), {secs.sum():.2f} s summed, costliest {secs.max():.3f} s"
                  f" ({secs.max() / secs.sum():.1%}); makespan on 1/2/4 workers "
                  f"{m[1]:.2f}/{m[2]:.2f}/{m[4]:.2f} s (4/1 {m[1] / m[4]:.2f}x); costliest "
                  f"(roots, seconds): {[(s.roots, round(t, 3)) for s, t in top]}", flush=True)
            out[f"{name}/{cut}/{hub}/{deal}"] = {"direct_s": direct, "count": int(total),
                                    "shard_s": secs.tolist(), "makespan": m}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
