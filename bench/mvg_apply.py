#!/usr/bin/env python3
"""Applying a stream to the multi-version graph: the host reference vs the array store on
numpy and on the GPU (issue 17 item 2; DCSM §1.4.2-§1.4.3, §1.6).

A power-law graph (R-MAT, ``--edges``, as ``latency.py``) becomes ``G_0`` and a stream
(:func:`warpmatch.stream.generate.make_stream`: 10% of the edges inserted, 5% deleted). Each
store applies the stream in batches of ``--batch`` and finishes each batch ``--lag``
batches later, as a pipeline whose matcher trails the updater would (every update of a
batch finished at once, in a random order). Stores:

- ``reference``: :class:`warpmatch.stream.mvg.MultiVersionGraph` (a host loop per vertex);
- ``numpy``: :class:`warpmatch.stream.mvg_device.ArrayMultiVersionGraph` on numpy;
- ``cupy``: the same on the GPU (the device synchronized before the clock is read).

Per store and batch size: build seconds, apply seconds and updates per second (finishing
and compaction included), the most entries held during the run over ``G_0``'s entries,
and the entries and allocated bytes after draining (every update finished, what
``finish`` compacted) over the final single-version graph's (issue 17's targets: at most
2x during the run, 1.1x after draining); for the array stores, the seconds of one
``snapshot`` of every row once drained (the CSR a matcher reading the store would take).
The stores' neighbour lists are compared at the end on ``--check`` random vertices (all
stores must agree; a mismatch makes the exit status 1). The reference takes the first
``--reference-max-updates`` updates only (it is a loop over vertices), and the others are
compared with it on that prefix in a separate run.

Usage::

    python bench/mvg_apply.py --edges 1e6 --batch 128,4096 --stores reference,numpy
    python bench/mvg_apply.py --edges 1e7 --batch 128,4096,65536 --stores numpy,cupy
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from _sibling import load  # bench/_sibling.py: sibling benchmarks by path

STORES = ("reference", "numpy", "cupy")


def _store(kind: str, n: int, src: np.ndarray, dst: np.ndarray):
    from warpmatch.stream.mvg import MultiVersionGraph
    from warpmatch.stream.mvg_device import ArrayMultiVersionGraph
    if kind == "reference":
        return MultiVersionGraph(n, src, dst), (lambda: None)
    if kind == "numpy":
        return ArrayMultiVersionGraph(n, src, dst, xp=np), (lambda: None)
    import cupy
    g = ArrayMultiVersionGraph(n, src, dst, xp=cupy)
    return g, cupy.cuda.get_current_stream().synchronize


def run_store(kind: str, n: int, src: np.ndarray, dst: np.ndarray, ups, batch: int,
              lag: int, seed: int) -> tuple[dict, object]:
    """Apply ``ups`` (src, dst, op arrays) in batches to a fresh ``kind`` store."""
    rng = np.random.default_rng(seed)
    t = time.perf_counter()
    g, sync = _store(kind, n, src, dst)
    sync()
    build_s = time.perf_counter() - t
    base = g.entries()
    us, vs, ops = ups
    total = int(us.size)
    pending: list[np.ndarray] = []
    peak = base
    t = time.perf_counter()
    for lo in range(0, total, batch):
        hi = min(total, lo + batch)
        g.apply(us[lo:hi], vs[lo:hi], ops[lo:hi])
        pending.append(np.arange(lo + 1, hi + 1))
        if len(pending) > lag:
            done = pending.pop(0)
            g.finish(rng.permutation(done))
        peak = max(peak, g.entries())
    for done in pending:
        g.finish(rng.permutation(done))
    sync()
    apply_s = time.perf_counter() - t
    live = 2 * (int(src.size) + int((ops > 0).sum()) - int((ops < 0).sum()))
    snap_s = None
    if hasattr(g, "snapshot"):
        # what a matcher reading the store would take: every row at the next time, as a CSR
        t = time.perf_counter()
        ptr, _ = g.snapshot(g.time + 1)
        sync()
        snap_s = time.perf_counter() - t
        if int(ptr[-1]) != live:
            raise SystemExit(f"{kind}: the snapshot holds {int(ptr[-1])} entries, not {live}")
    row = {"store": kind, "batch": batch, "updates": total, "build_s": round(build_s, 4),
           "apply_s": round(apply_s, 4),
           "updates_per_s": round(total / apply_s) if apply_s > 0 else None,
           "peak_entries_x": round(peak / max(base, 1), 3),
           # drained: every update finished (no explicit compaction), over the final
           # single-version graph's entries
           "drained_entries_x": round(g.entries() / max(live, 1), 3),
           "versions": g.versions(), "vertices": n,
           "snapshot_s": None if snap_s is None else round(snap_s, 4)}
    if hasattr(g, "pool_bytes"):
        # the single-version graph: its entries as int64 neighbours, ct and dt, and per
        # vertex one version record (start, length, ct_min, dt_max, prev) and a head
        single = 3 * 8 * g.entries() + (5 * 8 + 1 + 8) * n
        row["drained_bytes_x"] = round(g.pool_bytes() / single, 3)
    return row, g


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=float, default=1e6)
    ap.add_argument("--batch", default="128,4096", help="batch sizes")
    ap.add_argument("--stores", default="reference,numpy", help=",".join(STORES))
    ap.add_argument("--lag", type=int, default=1, help="batches applied before one finishes")
    ap.add_argument("--max-updates", type=int, default=None, help="cut the stream")
    ap.add_argument("--reference-max-updates", type=int, default=20_000)
    ap.add_argument("--check", type=int, default=200, help="vertices compared at the end")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    bad = [s for s in stores if s not in STORES]
    if bad:
        raise SystemExit(f"--stores: unknown {bad}; choose from {', '.join(STORES)}")
    from warpmatch.stream.generate import make_stream
    wl = load("_csm_workloads")
    graph, desc = wl.powerlaw_graph(args.edges, args.seed)
    g0, upd = make_stream(graph, seed=args.seed)
    src, dst = g0.edges()
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    if g0.ids is not None:           # external ids back to internal ones
        lookup = {int(x): i for i, x in enumerate(np.asarray(g0.ids).tolist())}
        us = np.array([lookup[int(x)] for x in upd.src.tolist()], np.int64)
        vs = np.array([lookup[int(x)] for x in upd.dst.tolist()], np.int64)
    else:
        us, vs = upd.src.astype(np.int64), upd.dst.astype(np.int64)
    ops = upd.op.astype(np.int64)
    if args.max_updates is not None:
        us, vs, ops = us[:args.max_updates], vs[:args.max_updates], ops[:args.max_updates]
    print(f"# {desc}: {g0.n:,} vertices, {src.size:,} edges in G_0, {ops.size:,} updates",
          file=sys.stderr, flush=True)
    rows, status = [], 0
    rng = np.random.default_rng(args.seed)
    probe = rng.choice(g0.n, size=min(args.check, g0.n), replace=False)
    for b in [int(x) for x in args.batch.split(",") if x]:
        finals = {}
        for kind in stores:
            cut = args.reference_max_updates if kind == "reference" else ops.size
            prefix = (us[:cut], vs[:cut], ops[:cut])
            row, g = run_store(kind, g0.n, src, dst, prefix, b, args.lag, args.seed)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
            t = g.time + 1
            finals[kind] = (cut, [g.neighbors(int(v), t).tolist() for v in probe])
            if kind == "reference" and cut < ops.size:
                # the others on the reference's prefix, for the comparison
                for other in stores:
                    if other != "reference":
                        _, go = run_store(other, g0.n, src, dst, prefix, b, args.lag,
                                          args.seed)
                        mine = [go.neighbors(int(v), go.time + 1).tolist() for v in probe]
                        if mine != finals["reference"][1]:
                            print(f"MISMATCH: {other} vs reference, batch {b}",
                                  file=sys.stderr)
                            status = 1
        full = [k for k in stores if k != "reference" or finals[k][0] >= ops.size]
        for k in full[1:]:
            if finals[k][1] != finals[full[0]][1]:
                print(f"MISMATCH: {k} vs {full[0]}, batch {b}", file=sys.stderr)
                status = 1
    print("\n| store | batch | updates | apply s | updates/s | peak entries x G_0 | "
          "drained entries x | drained bytes x | snapshot s |")
    print("|:--|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        print(f"| {r['store']} | {r['batch']:,} | {r['updates']:,} | {r['apply_s']:.3f} | "
              f"{r['updates_per_s'] or 0:,} | {r['peak_entries_x']:.3f} | "
              f"{r['drained_entries_x']:.3f} | {r.get('drained_bytes_x', '-')} | "
              f"{'-' if r['snapshot_s'] is None else r['snapshot_s']} |")
    print("stores agree" if status == 0 else "MISMATCH (see above)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"graph": desc, "rows": rows}, fh, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
