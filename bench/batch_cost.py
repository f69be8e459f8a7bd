"""Where a small batch's time goes on the GPU engine (issue 17: the fixed cost per batch).

A fresh :class:`~warpmatch.ContinuousMatcher` with ``sequential=False`` (every batch on
the device) on an R-MAT graph of ``--edges`` is fed consecutive batches of each
``--sizes`` of a generated stream, and each batch's steps are timed: the dynamic graph's
``prepare`` (validation), ``view`` (the overlay), the engine's ``run`` split into its
host part before the device (candidate masks and task list: ``engine_host``) and the
device state's run (``device_run``, itself split by the engine's own stats into the
overlay copy, the storage/cache step, the counting kernel on the device, and the rest),
then ``apply``: the steps of ``ContinuousMatcher._apply_batch`` for a graph without a
relevant subgraph, called one by one (the delta object the matcher returns is not built;
``kernel`` is device time from CUDA events, the other steps host wall time). Means per
batch in µs, after ``--warm`` untimed batches of each size.
``--profile FILE`` also writes a cProfile of the timed loop (``pstats`` format), for the
functions behind the rest.

Usage::

    python bench/batch_cost.py --edges 1e7 --query triangle --sizes 1,4,32 --profile p.out

Not a peer comparison: it says which part of the engine a per-batch optimisation must cut.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _csm_workloads  # noqa: E402 - csm_peers.py's workloads (bench/ is not a package)

STEPS = ("prepare", "view", "engine_host", "overlay_copy", "storage", "kernel", "device_rest",
         "apply", "total")


def measure(cm: Any, stream: Any, at: int, size: int, count: int) -> tuple[dict, int]:
    """Time ``count`` batches of ``size`` from ``stream[at:]``; per-step sums and the
    next position."""
    dg, eng = cm._dg, cm.engine
    plans = cm.plans(False)
    t: dict[str, float] = defaultdict(float)
    for _ in range(count):
        ups = stream.slice(at, at + size)
        at += size
        t0 = time.perf_counter()
        batch = dg.prepare(ups, cm.on_invalid)
        t1 = time.perf_counter()
        view = dg.view(batch)
        t2 = time.perf_counter()
        eng.run(view, plans, False)
        t3 = time.perf_counter()
        dg.apply(batch)
        t4 = time.perf_counter()
        st = eng.stats
        dev = float(st.get("engine_s", 0.0))
        parts = {k: float(st.get(f"{k}_s", 0.0)) for k in ("overlay_copy", "storage", "kernel")}
        t["prepare"] += t1 - t0
        t["view"] += t2 - t1
        t["engine_host"] += (t3 - t2) - dev
        for k, v in parts.items():
            t[k] += v
        t["device_rest"] += dev - sum(parts.values())
        t["apply"] += t4 - t3
        t["total"] += t4 - t0
    return t, at


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=float, default=1e6)
    ap.add_argument("--query", default="triangle")
    ap.add_argument("--sizes", default="1,4,32")
    ap.add_argument("--batches", type=int, default=200, help="timed batches per size")
    ap.add_argument("--warm", type=int, default=20, help="untimed batches per size first")
    ap.add_argument("--cache", default="auto", help="the GPU engine's cache policy")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default=None, help="write a cProfile of the timed loop here")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    import warpmatch as wm
    from warpmatch.stream.generate import make_stream
    graph, desc = _csm_workloads.powerlaw_graph(args.edges, args.seed)
    g0, stream = make_stream(graph, 0.1, 0.05, seed=args.seed)
    print(f"graph {desc}: {graph.n:,} vertices, {graph.num_edges:,} edges", flush=True)
    cm = wm.ContinuousMatcher(g0, args.query, backend="gpu", count_initial=False,
                              sequential=False, cache=args.cache)
    sizes = [int(x) for x in args.sizes.split(",")]
    need = sum((args.warm + args.batches) * s for s in sizes)
    if need > len(stream):
        raise SystemExit(f"the stream has {len(stream):,} updates; the run needs {need:,}")
    prof = cProfile.Profile() if args.profile else None
    rows: dict[int, dict[str, float]] = {}
    at = 0
    for size in sizes:
        _, at = measure(cm, stream, at, size, args.warm)
        if prof is not None:
            prof.enable()
        t, at = measure(cm, stream, at, size, args.batches)
        if prof is not None:
            prof.disable()
        rows[size] = {k: 1e6 * t[k] / args.batches for k in STEPS}
        print(f"[{args.query}, batches of {size}] " + ", ".join(
            f"{k} {v:,.0f}" for k, v in rows[size].items()) + " µs", flush=True)
    if prof is not None:
        prof.dump_stats(args.profile)
    print(f"\nµs per batch, {args.query} on {graph.num_edges:,} edges, backend gpu "
          f"(cache {args.cache}), sequential=False; mean of {args.batches} batches\n")
    print("| size | " + " | ".join(STEPS) + " |")
    print("|---:|" + "---:|" * len(STEPS))
    for size, r in rows.items():
        print(f"| {size} | " + " | ".join(f"{r[k]:,.0f}" for k in STEPS) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "graph": desc,
                                               "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
