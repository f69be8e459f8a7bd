"""A matcher's first stream with one CPU thread against all cores (issue 16: "more threads
never slower than one").

``bench/csm_peers.py`` times each engine's stream on a fresh matcher in a child process of
its own, a few times; on short streams (yeast's 1,878 updates in about 0.5 ms) the two
columns move more between runs than they differ. This script builds many matchers in one
process, alternating ``threads=1`` and ``threads=None`` (all cores), times the first pass
of the same stream over each (``apply_batches(..., counts_only=True)``, batches of
``--batch``), and prints the median and minimum per side and their ratio. The stream and
the queries are ``csm_peers.py``'s (``make_stream`` with 10% inserted, 5% deleted, seed 1;
the labeled graphs' query files and random-walk queries).

Usage::

    python bench/threads_ab.py --workload yeast --query rw-sparse-4-s0 [--data DIR]
        [--matchers 30] [--batch 4096] [--pause 0.3] [--probe N]

``--pause S`` sleeps S seconds between building a matcher and its stream (a cold start);
``--probe N`` sets the sequential path's first-batch probe (``PROBE_CALL``) for an A/B.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _csm_workloads as csm_peers  # noqa: E402  (this directory: csm_peers.py's workloads)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="yeast", help="yeast, human or hprd")
    ap.add_argument("--query", default="rw-sparse-4-s0",
                    help="dense16-1, sparse16-1, rw-{dense,sparse}-{4,6,8}-s0")
    ap.add_argument("--data", default=None, help="data directory (default as csm_peers.py)")
    ap.add_argument("--matchers", type=int, default=30, help="matchers per side")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--pause", type=float, default=0.0,
                    help="seconds between building a matcher and its stream")
    ap.add_argument("--probe", type=int, default=None, help="PROBE_CALL for this run")
    args = ap.parse_args(argv)

    from warpmatch.stream import sequential as SQ
    from warpmatch.stream.generate import make_stream
    from warpmatch.stream.matcher import ContinuousMatcher
    if args.probe is not None:
        SQ.PROBE_CALL = args.probe
    size = args.query.split("-")[2] if args.query.startswith("rw-") else "4"
    spec = SimpleNamespace(workloads=args.workload, rw_sizes=size, rw_per_size=1,
                           labeled_queries=1, patterns="triangle", powerlaw_edges=1e6, seed=1)
    wl = csm_peers.build_workloads(spec, csm_peers.data_root(args.data))[0]
    if wl.skip:
        raise SystemExit(wl.skip)
    queries = dict(wl.queries)
    if args.query not in queries:
        raise SystemExit(f"--query: {args.query!r} is not one of {', '.join(queries)}")
    g = wl.load()
    g0, ups = make_stream(g, csm_peers.INSERT_FRACTION, csm_peers.DELETE_FRACTION, 1)
    q = queries[args.query](g)

    def matcher(threads: int | None) -> ContinuousMatcher:
        return ContinuousMatcher(g0, q, backend="cpu", threads=threads, count_initial=False,
                                 specialise="always")

    sides = (1, None)
    for th in sides:                    # compile (or load) everything outside the timing
        for _ in matcher(th).apply_batches(ups.slice(0, 512), 128, counts_only=True):
            pass
    times: dict = {th: [] for th in sides}
    seq_updates: dict = {th: 0 for th in sides}
    for _ in range(args.matchers):
        for th in sides:
            cm = matcher(th)
            if args.pause:
                time.sleep(args.pause)
            t0 = time.perf_counter()
            for _d in cm.apply_batches(ups, args.batch, counts_only=True):
                pass
            times[th].append(time.perf_counter() - t0)
            seq_updates[th] += cm._seq.stats["updates"] if cm._seq is not None else 0
    med = {th: statistics.median(v) for th, v in times.items()}
    print(f"{args.workload} / {args.query}: {len(ups):,} updates, batches of {args.batch}, "
          f"{args.matchers} matchers per side, pause {args.pause:g} s, probe "
          f"{SQ.PROBE_CALL}")
    for th in sides:
        name = "1 thread" if th == 1 else "all cores"
        share = seq_updates[th] / (len(ups) * args.matchers)
        print(f"  {name:9}: median {med[th] * 1e3:.3f} ms, min {min(times[th]) * 1e3:.3f} ms, "
              f"sequential path {share:.0%} of the updates")
    print(f"  all cores / 1 thread (time, median): {med[None] / med[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
