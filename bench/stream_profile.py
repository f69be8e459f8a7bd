#!/usr/bin/env python3
"""Where a continuous-matching batch spends its time: one workload of bench/csm_peers.py,
run by ``ContinuousMatcher`` under cProfile after a warm-up.

Prints the wall time per batch, the functions with the most cumulative and own time, and
the engine's own counters of the last batch (``engine.stats``; the GPU engine times its
copies, kernels and cache there). Used to find per-batch fixed costs; it times nothing
that bench/csm_peers.py reports.

Examples
--------
    python bench/stream_profile.py --workload yeast --query dense16-1 --backend gpu
    python bench/stream_profile.py --workload email-Eu-core --query triangle --backend cpu \
        --threads 1 --batch 512
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _csm_workloads as csm_peers  # noqa: E402  (csm_peers.py's workloads; bench/ is not a package)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True,
                    help="a graph of bench/csm_peers.py: yeast, human, hprd, email-Eu-core, "
                         "powerlaw")
    ap.add_argument("--query", required=True,
                    help="a query of that workload (dense16-1, rw-sparse-4-s0, triangle, ...)")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (default: all)")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--data", default=None, help="data directory (as bench/csm_peers.py)")
    ap.add_argument("--powerlaw-edges", type=float, default=1e6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--top", type=int, default=25, help="functions listed per table")
    args = ap.parse_args(argv)

    import warpmatch as wm
    from warpmatch.stream.updates import make_stream
    ns = SimpleNamespace(workloads=args.workload, rw_sizes="4,6,8", rw_per_size=1,
                         labeled_queries=2, patterns=args.query,
                         powerlaw_edges=args.powerlaw_edges, seed=args.seed)
    wls = csm_peers.build_workloads(ns, csm_peers.data_root(args.data))
    if not wls or wls[0].skip:
        raise SystemExit(wls[0].skip if wls else f"no workload {args.workload!r}")
    wl = wls[0]
    make_q = dict(wl.queries).get(args.query)
    if make_q is None:
        raise SystemExit(f"--query: {args.query!r} is not one of "
                         f"{', '.join(n for n, _ in wl.queries)}")
    g = wl.load()
    query = make_q(g)
    g0, ups = make_stream(g, csm_peers.INSERT_FRACTION, csm_peers.DELETE_FRACTION, args.seed)
    opts = {"threads": args.threads} if args.backend == "cpu" else {}

    def matcher() -> wm.ContinuousMatcher:
        return wm.ContinuousMatcher(g0, query, backend=args.backend, count_initial=False,
                                    **opts)

    warm = matcher()          # the whole stream once: every kernel compiled or loaded
    for _ in warm.apply_batches(ups, args.batch, counts_only=True):
        pass
    del warm
    cm = matcher()
    prof = cProfile.Profile()
    times = []
    total = 0
    prof.enable()
    t0 = time.perf_counter()
    for d in cm.apply_batches(ups, args.batch, counts_only=True):
        times.append(time.perf_counter() - t0)
        total += d.added + d.removed
    prof.disable()
    wall = times[-1] if times else 0.0
    per = np.diff([0.0] + times)
    print(f"{args.workload} / {args.query}: backend {cm.backend}, {len(ups):,} updates in "
          f"{len(per)} batch(es) of {args.batch}: {wall * 1e3:.2f} ms "
          f"({len(ups) / max(wall, 1e-12):,.0f} upd/s), Σ|Δ| = {total:,}")
    print("ms per batch: " + ", ".join(f"{x * 1e3:.2f}" for x in per))
    for key in ("cumulative", "tottime"):
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats(key).print_stats(args.top)
        print(f"\n--- by {key} (profiled; cProfile adds overhead per Python call)")
        print("\n".join(s.getvalue().splitlines()[6:]))
    stats = getattr(cm.engine, "stats", None)
    if stats:
        print("\nengine.stats of the last batch:")
        for k, v in stats.items():
            print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
