#!/usr/bin/env python3
"""Counting on a Dask cluster: the direct call vs 1 worker vs N workers, same graph and queries.

Builds an R-MAT power-law graph of about ``--edges`` edges (``warpmatch.graph.generators.rmat``),
writes it as a ``.wmg`` file (the workers memory-map it), counts each pattern with
``wm.count_result(g, q, backend=B)`` in this process, then with ``client=`` on a local cluster
of 1 worker and of ``--workers`` workers (each worker: the cores divided among the workers of
the host, ``warpmatch.distributed``). Every count is checked equal to the direct one. Each
cluster warms up (its workers load the kernels and map the graph) on a small count before the
timed ones; times are wall-clock seconds of the whole ``count_result`` call (planning included,
and for a cluster checking its workers and shipping the plan), the median of ``--repeats``
runs; compilation and cluster start-up are excluded.

Prints a markdown table: seconds of each, ``N/1`` = 1-worker time / N-worker time (the
speed-up of more workers; issue target >= 1.6x for 2 workers where the work takes seconds) and
``1w/direct`` = 1-worker time / direct time (the overhead of going through Dask; target <= 1.10).

Examples
--------
    python bench/distributed.py                                  # 10^7 edges, CPU, 2 workers
    python bench/distributed.py --edges 1e6 --patterns diamond,square --repeats 3
    python bench/distributed.py --backend gpu --workers 1        # a GPU machine (dask-cuda)
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

PATTERNS = "diamond,4-clique,square,house"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=float, default=1e7, help="about this many edges (1e7)")
    ap.add_argument("--patterns", default=PATTERNS, help=f"comma-separated ({PATTERNS})")
    ap.add_argument("--workers", type=int, default=2, help="workers of the larger cluster")
    ap.add_argument("--backend", default="cpu", help="engine, here and on the workers (cpu)")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs per cell (median)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work-dir", default=None, help="where the .wmg goes (a temporary dir)")
    args = ap.parse_args(argv)

    import logging

    import warpmatch as wm
    from warpmatch.distributed import local_cluster
    from warpmatch.graph.generators import rmat
    logging.getLogger("distributed").setLevel(logging.ERROR)

    scale = max(4, int(round(math.log2(max(16.0, args.edges / 16)))))
    t0 = time.perf_counter()
    g0 = rmat(scale, 16, seed=args.seed, name=f"rmat{scale}")
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="wm-dist-bench-"))
    path = work / f"rmat{scale}.wmg"
    wm.write_graph(g0, path)
    g = wm.read_graph(path)                          # memory-mapped: workers map the file
    print(f"# graph rmat scale {scale}: {g.n:,} vertices, {g.num_edges:,} edges "
          f"({time.perf_counter() - t0:.1f} s to build); backend {args.backend}; "
          f"{os.cpu_count()} cores here", file=sys.stderr)
    pats = [p.strip() for p in args.patterns.split(",") if p.strip()]

    def timed(fn):
        # the whole call: planning, and for a cluster checking the workers and shipping
        # the plan, are part of what a user waits for
        out, secs = None, []
        for _ in range(max(1, args.repeats)):
            t = time.perf_counter()
            out = fn().count
            secs.append(time.perf_counter() - t)
        return out, statistics.median(secs)

    direct = {}
    wm.count(g, "triangle", backend=args.backend)   # compile / load kernels here
    for p in pats:
        direct[p] = timed(lambda: wm.count_result(g, p, backend=args.backend))
        print(f"# direct {p}: {direct[p][1]:.3f} s", file=sys.stderr)
    clusters = {}
    for n in sorted({1, args.workers}):
        with local_cluster(workers=n, silence_logs=logging.ERROR) as client:
            wm.count(g, "triangle", backend=args.backend, client=client)   # warm-up
            clusters[n] = {}
            for p in pats:
                clusters[n][p] = timed(lambda: wm.count_result(g, p, backend=args.backend,
                                                               client=client))
                print(f"# {n} worker(s) {p}: {clusters[n][p][1]:.3f} s", file=sys.stderr)
            client.cluster.close()
    N = args.workers
    print(f"\n| pattern | count | direct s | 1 worker s | {N} workers s | {N}/1 | 1w/direct |"
          f" check |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    bad = 0
    for p in pats:
        c, td = direct[p]
        c1, t1 = clusters[1][p]
        cn, tn = clusters[N][p]
        ok = c == c1 == cn
        bad += not ok
        print(f"| {p} | {c:,} | {td:.3f} | {t1:.3f} | {tn:.3f} | {t1 / max(tn, 1e-9):.2f}x | "
              f"{t1 / max(td, 1e-9):.2f} | {'ok' if ok else 'MISMATCH'} |")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
