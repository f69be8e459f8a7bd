"""Continuous-matching benchmark (issue 4): GCSM's GPU delta engine, its cache policies,
the CPU delta engine, and recomputation from scratch, on one update stream.

A power-law graph of ``--edges`` edges is generated on the device (the Chung-Lu
generator of ``bench/gpu.py``; ``warpmatch.graph.generators.rmat`` on the CPU
when that is unavailable) and turned into a stream by
:func:`warpmatch.stream.updates.make_stream` (GCSM §VI-A methodology: removed
edges become insertions, random remaining edges deletions, shuffled). The
stream is replayed on one :class:`~warpmatch.stream.dynamic.DynamicGraph`
(pinned host memory) in segments of each batch size; **every engine runs on the
same batch views**, so the policies and the CPU engine see identical work:

- GPU engine with each cache policy (``none`` = zero-copy only, ``degree``,
  ``random-walk`` = GCSM's estimator sampled on the GPU, ``random-walk-cpu`` =
  GCSM's random walks on the host cores, ``device`` = whole graph on the GPU): updates/s,
  mean per-batch latency, bytes read from host memory per batch (by the counting kernel,
  the GPU estimator's sampling kernel and the cache's gather: ``HOST_READS``), cache hit
  rate;
- the CPU delta engine (``--cpu-threads``, all cores by default);
- cache coverage (GCSM §VI-D): of the top 1% / 5% most-read vertices (true row
  reads of an *uncached* run, counted on the device with ``profile=True``,
  touched vertices excluded since the overlay serves them), the fraction each
  policy's cache held. A cached row also serves the searches of its short
  partners (the kernel then searches the cached row), which this does not
  count: the hit rate and host bytes of the runs themselves are the measure;
- incremental vs recomputation: per batch of 4096, the static
  ``warpmatch.count(snapshot, query, backend="gpu")`` time against the GPU
  engine's batch time.

All engines' per-update counts are compared on every batch (a mismatch is
printed and makes the exit status 1). Times exclude compilation (a warm-up
batch runs first). Prints a table of ratios per query as it finishes, and
writes everything measured so far to ``--out/stream_bench.json`` after each.

Usage (on the GPU machine)::

    python bench/stream.py --edges 1e7 --out $OUT
    python bench/stream.py --edges 1e6 --sizes 64,1024 --updates-per-size 2048   # smoke
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from _sibling import load  # bench/_sibling.py: sibling benchmarks by path

QUERIES = {"triangle": "a-b, b-c, c-a", "square": "a-b, b-c, c-d, d-a",
           "diamond": "a-b, b-c, c-d, d-a, a-c", "house": "a-b, b-c, c-d, d-e, e-a, b-e"}
#: the engine's per-batch steps (GpuDeltaEngine.stats), reported as a breakdown (the
#: estimate includes the GPU estimator's sampling kernel, also shown alone)
STEPS = ("overlay_copy_s", "storage_s", "estimate_s", "sample_s", "pack_s", "kernel_s", "engine_s")
#: engine stats of bytes read from host memory per batch (all zero-copy)
HOST_READS = ("host_bytes", "sample_host_bytes", "gather_bytes")
#: warm-up batches at the largest size before anything is measured
WARMUP = 2


def power_law(edges: int, seed: int):
    """A power-law graph generated on the device (bench/gpu.py), else R-MAT on the CPU."""
    try:
        return load("gpu").power_law_gpu(edges, seed, name=f"powerlaw-{edges:.0e}"), "chung-lu (gpu)"
    except Exception as exc:   # no CuPy: generate on the CPU
        from warpmatch.graph.generators import rmat
        scale = max(4, int(np.log2(max(edges // 16, 16))))
        print(f"device generator unavailable ({exc}); R-MAT scale {scale} on the CPU",
              file=sys.stderr)
        return rmat(scale, 16, seed=seed), "rmat (cpu)"


def _oracle(true: np.ndarray, exclude: np.ndarray, deg: np.ndarray, fraction: float) -> float:
    """Share of the (non-overlay) row reads that the best cache of the same size could
    serve: rows ranked by true reads per cached byte (what an exact estimator would do)."""
    from warpmatch.stream.gpu.cache import row_bytes, select_rows
    acc = true.astype(np.float64).copy()
    acc[exclude] = 0
    if acc.sum() == 0:
        return float("nan")
    cost = row_bytes(deg[: acc.size], False)
    sel = select_rows(acc / cost, cost, int(fraction * cost.sum()))
    return float(acc[sel].sum() / acc.sum())


def _cover(true: np.ndarray, exclude: np.ndarray, cached: np.ndarray) -> dict[str, float]:
    acc = true.astype(np.float64).copy()
    acc[exclude] = 0
    hot = np.flatnonzero(acc > 0)
    out = {}
    if hot.size == 0:   # the batch read no storage row (e.g. every search hit the overlay)
        return {"top1": float("nan"), "top5": float("nan"), "reads_served": float("nan")}
    order = hot[np.argsort(-acc[hot], kind="stable")]
    inc = np.zeros(true.size, dtype=bool)
    inc[cached[cached < true.size]] = True
    for pct in (1, 5):
        k = max(1, int(round(order.size * pct / 100)))
        out[f"top{pct}"] = float(inc[order[:k]].mean())
    # share of all (non-overlay) row reads that the cache would serve
    out["reads_served"] = float(acc[inc].sum() / acc.sum())
    return out


def run_query(name: str, text: str, g, args, results: dict) -> bool:
    from warpmatch import count as static_count
    from warpmatch.query.model import Query
    from warpmatch.stream.cpu import CpuDeltaEngine
    from warpmatch.stream.delta import compile_delta_plans
    from warpmatch.stream.dynamic import DynamicGraph
    from warpmatch.stream.gpu import GpuDeltaEngine, pinned_allocator
    from warpmatch.stream.updates import make_stream

    q = Query.parse(text)
    sizes = [int(s) for s in args.sizes.split(",")]
    plan_n = {s: max(2, min(args.max_batches, args.updates_per_size // s)) for s in sizes}
    need = WARMUP * max(sizes) + sum(plan_n[s] * s for s in sizes)   # warm-up + measured
    frac = need / max(g.num_edges, 1) * 1.05
    t = time.perf_counter()
    g0, ups = make_stream(g, insert_fraction=frac * 2 / 3, delete_fraction=frac / 3,
                          seed=args.seed)
    t_stream = time.perf_counter() - t
    t = time.perf_counter()
    dg = DynamicGraph(g0, allocator=pinned_allocator())
    t_dyn = time.perf_counter() - t
    plans = compile_delta_plans(q)
    policies = args.policies.split(",")
    def engine(p: str) -> GpuDeltaEngine:
        # "random-walk-cpu": the random-walk policy with GCSM's walks on the host;
        # "POLICY:key=value:...": a variant with engine options (ablations)
        name, *opts = p.split(":")
        cache = name[:-len("-cpu")] if name.endswith("-cpu") else name
        kw: dict = {"cache_fraction": args.cache_fraction, "seed": args.seed}
        if name.endswith("-cpu"):
            kw["estimator"] = "cpu"
        for o in opts:
            key, sep, val = o.partition("=")
            if not sep:
                raise SystemExit(f"--policies: {o!r} in {p!r} is not key=value")
            kw[key] = None if val == "none" else float(val)
        return GpuDeltaEngine(cache=cache, **kw)

    engines = {p: engine(p) for p in policies}
    # --host-profile: where the host time of each batch goes, per policy (cProfile)
    import cProfile
    profilers = {p: cProfile.Profile() for p in args.host_profile.split(",") if p in engines}
    prof = GpuDeltaEngine(cache="none", profile=True)
    for e in list(engines.values()) + [prof]:
        e.attach(dg)
    cpu = CpuDeltaEngine(threads=args.cpu_threads or os.cpu_count())
    R: dict = {"query": text, "stream_updates": len(ups), "initial_edges": int(g0.num_edges),
               "make_stream_s": t_stream, "dynamic_graph_s": t_dyn, "sizes": {}}
    results["queries"][name] = R
    ok = True
    # static recount baseline: warm the GPU engine's compilation on G0
    t = time.perf_counter()
    c0 = static_count(g0, q, backend=args.static_backend)
    R["static_first_s"] = time.perf_counter() - t
    R["initial_count"] = int(c0)
    pos = 0
    cpu_spent = 0.0

    def batch(size: int, record: dict | None, cover: bool, recompute: bool) -> None:
        nonlocal pos, ok, cpu_spent
        b = dg.prepare(ups.slice(pos, pos + size), on_invalid="skip")
        view = dg.view(b)
        ref = None
        for p, eng in engines.items():
            prof_host = profilers.get(p) if record is not None else None
            if prof_host is not None:
                prof_host.enable()
            t0 = time.perf_counter()
            r = eng.run(view, plans, False)
            dt = time.perf_counter() - t0
            if prof_host is not None:
                prof_host.disable()
            if ref is None:
                ref = r
            elif not (np.array_equal(r.plus_counts, ref.plus_counts)
                      and np.array_equal(r.minus_counts, ref.minus_counts)):
                print(f"MISMATCH {name} size {size}: policy {p} differs", file=sys.stderr)
                ok = False
            if record is not None:
                s = record["gpu"].setdefault(p, {"s": [], "host_bytes": [], "hit": [],
                                                 "cache_bytes": []})
                s["s"].append(dt)
                # host memory read by zero-copy: the counting kernel, the sampling
                # kernel (GPU estimator) and the cache's gather from host storage
                s["host_bytes"].append(sum(eng.stats.get(k, 0) for k in HOST_READS))
                s["hit"].append(eng.stats.get("cache_hit_rate", 0.0))
                s["cache_bytes"].append(eng.stats.get("cache_device_bytes", 0))
                s.setdefault("sampled", []).append(bool(eng.stats.get("sampled", False)))
                # where the batch's time went (engine stats, seconds)
                for key in STEPS:
                    s.setdefault(key, []).append(eng.stats.get(key, 0.0))
        if record is not None:
            record["delta_plus"] += int(ref.plus_counts.sum())
            record["delta_minus"] += int(ref.minus_counts.sum())
        if record is None and args.cpu_time > 0:
            cpu.run(view, plans, False)      # warm-up: numba compiles the delta kernels
        elif record is not None and args.cpu_time > 0 and cpu_spent < args.cpu_time:
            t0 = time.perf_counter()
            rc = cpu.run(view, plans, False)
            dt = time.perf_counter() - t0
            cpu_spent += dt
            record["cpu"]["s"].append(dt)
            if not (np.array_equal(rc.plus_counts, ref.plus_counts)
                    and np.array_equal(rc.minus_counts, ref.minus_counts)):
                print(f"MISMATCH {name} size {size}: cpu differs from gpu", file=sys.stderr)
                ok = False
        if cover:
            prof.run(view, plans, False)
            true = prof.last_access
            touched = np.zeros(true.size, dtype=bool)
            ends = np.concatenate([b.src[b.valid], b.dst[b.valid]]).astype(np.int64)
            touched[ends[ends < true.size]] = True
            record["coverage"] = {p: _cover(true, touched, engines[p].last_cached)
                                  for p in policies if p.startswith(("degree", "random-walk"))}
            record["oracle_reads_served"] = _oracle(true, touched, np.asarray(view.b_deg),
                                                    args.cache_fraction)
            record["accessed_vertices"] = int(np.count_nonzero(true[~touched]))
        dg.apply(b)
        pos += size
        if recompute:
            snap = dg.snapshot()
            t0 = time.perf_counter()
            static_count(snap, q, backend=args.static_backend)
            record["recompute_s"].append(time.perf_counter() - t0)

    # warm-up at the largest size: compilation (GPU and numba), host registration, staging
    # buffers and the device mirror reach their steady size outside the measured batches;
    # the second batch runs the incremental refresh paths (row index, mirror: CuPy and
    # numba compile those on first use, 0.2-0.8 s measured on an H100 host)
    for _ in range(WARMUP):
        batch(max(sizes), None, False, False)
    deadline = time.perf_counter() + args.time_limit
    for size in sizes:
        if time.perf_counter() > deadline:
            print(f"time limit: {name} stops before batch size {size}", file=sys.stderr)
            break
        rec = {"batches": 0, "gpu": {}, "cpu": {"s": []}, "recompute_s": [],
               "delta_plus": 0, "delta_minus": 0}
        R["sizes"][size] = rec
        for i in range(plan_n[size]):
            if pos + size > len(ups) or (i >= 2 and time.perf_counter() > deadline):
                break
            batch(size, rec, cover=(i == 0 and size == args.cover_size),
                  recompute=(size == args.recompute_size and i < args.recompute_batches))
            rec["batches"] += 1
        print(f"{name} size {size}: {rec['batches']} batches, "
              + ", ".join(f"{p} {np.mean(v['s']) * 1e3:.2f} ms" for p, v in rec["gpu"].items())
              + (f", cpu {np.mean(rec['cpu']['s']) * 1e3:.2f} ms" if rec["cpu"]["s"] else "")
              + (f", recompute {np.mean(rec['recompute_s']) * 1e3:.1f} ms"
                 if rec["recompute_s"] else ""),
              file=sys.stderr, flush=True)
    R["totals"] = {p: {k: v for k, v in e.totals.items()} for p, e in engines.items()}
    for p, prof_host in profilers.items():
        import io
        import pstats
        buf = io.StringIO()
        pstats.Stats(prof_host, stream=buf).sort_stats("tottime").print_stats(25)
        path = Path(args.out) / f"host_profile_{name}_{p}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(buf.getvalue())
        print(f"{name}: host profile of policy {p} (all measured batches) in {path}",
              file=sys.stderr)
    return ok


def table(results: dict) -> str:
    lines = []
    for name, R in results["queries"].items():
        lines.append(f"\n== {name}: {R['query']}  (initial count {R['initial_count']}, "
                     f"{R['stream_updates']} updates in the stream)")
        pols = None
        for size, rec in R["sizes"].items():
            if not rec["gpu"]:
                continue
            pols = list(rec["gpu"])
            break
        if not pols:
            continue
        head = f"{'batch':>6} " + " ".join(f"{p + ' upd/s':>17}" for p in pols)
        head += (f" {'cpu upd/s':>11} {'rw/none':>8} {'rw/deg':>7} {'rw/rwcpu':>8} {'rw/cpu':>8}"
                 f" {'dev/cpu':>8}")
        head += f" {'host MB/b none':>14} {'deg':>8} {'rw':>8} {'hit rw':>7}"
        lines.append(head)
        for size, rec in R["sizes"].items():
            if not rec["gpu"]:
                continue
            ups = {p: size / np.mean(v["s"]) for p, v in rec["gpu"].items()}
            cpu = size / np.mean(rec["cpu"]["s"]) if rec["cpu"]["s"] else float("nan")
            best = ups.get("random-walk", max(ups.values()))
            row = f"{size:>6} " + " ".join(f"{ups[p]:>17,.0f}" for p in pols)
            row += f" {cpu:>11,.0f}"
            row += f" {best / ups['none'] if 'none' in ups else float('nan'):>8.2f}"
            row += f" {best / ups['degree'] if 'degree' in ups else float('nan'):>7.2f}"
            rwc = ups.get("random-walk-cpu")
            row += f" {best / rwc if rwc else float('nan'):>8.2f}"
            row += f" {best / cpu:>8.1f}"
            row += f" {ups['device'] / cpu if 'device' in ups else float('nan'):>8.1f}"
            hb = {p: np.mean(v["host_bytes"]) / 2**20 for p, v in rec["gpu"].items()}
            row += (f" {hb.get('none', float('nan')):>14.2f} {hb.get('degree', float('nan')):>8.2f}"
                    f" {hb.get('random-walk', float('nan')):>8.2f}")
            hit = rec["gpu"].get("random-walk", {}).get("hit", [float("nan")])
            row += f" {np.mean(hit):>7.2f}"
            lines.append(row)
        # the table's rates are batch-time means; one slow batch (a first-use compilation,
        # a storage reallocation) moves a mean of 4 batches far: medians alongside
        for size, rec in R["sizes"].items():
            if rec["gpu"]:
                lines.append(f"  batch {size:>5} median upd/s: " + ", ".join(
                    f"{p} {size / np.median(v['s']):,.0f}" for p, v in rec["gpu"].items())
                    + (f", cpu {size / np.median(rec['cpu']['s']):,.0f}"
                       if rec["cpu"]["s"] else "")
                    + f" ({rec['batches']} batches)")
        for size, rec in R["sizes"].items():
            for p, v in rec["gpu"].items():
                lines.append(f"  batch {size:>5} {p:<12} ms per batch: " + ", ".join(
                    f"{k[:-2]} {1e3 * np.mean(v[k]):.2f}" for k in STEPS if v.get(k))
                    + f"; cache {np.mean(v['cache_bytes']) / 2**20:.1f} MiB"
                    + (f", sampled {np.mean(v['sampled']):.2f}" if any(v["sampled"]) else ""))
            if "coverage" in rec:
                cov = ", ".join(f"{p}: top1% {c['top1']:.2f} top5% {c['top5']:.2f} "
                                f"reads {c['reads_served']:.2f}"
                                for p, c in rec["coverage"].items())
                lines.append(f"coverage (batch {size}, {rec['accessed_vertices']} vertices read): "
                             + cov + f"; best possible cache of that size serves "
                             f"{rec.get('oracle_reads_served', float('nan')):.2f} of the reads")
            if rec["recompute_s"]:
                rc = np.mean(rec["recompute_s"])
                lines.append(f"incremental vs recompute from scratch (batch {size}, static "
                             f"count {rc * 1e3:.1f} ms): " + ", ".join(
                                 f"{p} {rc / np.mean(v['s']):.0f}x" for p, v in rec["gpu"].items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=float, default=1e7)
    ap.add_argument("--queries", default="triangle;square",
                    help=f"';'-separated names from {sorted(QUERIES)} or 'name=a-b, b-c'")
    ap.add_argument("--sizes", default="64,256,1024,4096,8192")
    ap.add_argument("--updates-per-size", type=int, default=16384)
    ap.add_argument("--max-batches", type=int, default=32)
    ap.add_argument("--policies", default="none,degree,random-walk,random-walk-cpu,device",
                    help="','-separated; POLICY:key=value:... passes engine options, "
                         "e.g. random-walk:sample_rate=0.25:estimate_decay=0.5 (an ablation)")
    ap.add_argument("--cache-fraction", type=float, default=0.1)
    ap.add_argument("--cpu-threads", type=int, default=0, help="0: all cores")
    ap.add_argument("--cpu-time", type=float, default=60.0, help="CPU engine seconds per query")
    ap.add_argument("--cover-size", type=int, default=4096)
    ap.add_argument("--recompute-size", type=int, default=4096)
    ap.add_argument("--recompute-batches", type=int, default=2)
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per query")
    ap.add_argument("--static-backend", default="gpu", help="backend of the recount baseline")
    ap.add_argument("--host-profile", default="",
                    help="policies whose engine runs are profiled with cProfile, comma-"
                         "separated; the top functions go to --out/host_profile_*.txt")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args(argv)
    results: dict = {"args": vars(args), "cpus": os.cpu_count(), "queries": {}}
    try:
        import cupy as cp
        props = cp.cuda.runtime.getDeviceProperties(0)
        nm = props["name"]
        results["device"] = nm.decode() if isinstance(nm, bytes) else str(nm)
    except Exception as exc:
        print(f"no GPU: {exc}", file=sys.stderr)
        return 2
    t = time.perf_counter()
    g, how = power_law(int(args.edges), args.seed)
    results["graph"] = {"generator": how, "n": int(g.n), "edges": int(g.num_edges),
                        "max_degree": int(np.diff(g.indptr).max()),
                        "seconds": time.perf_counter() - t}
    print(f"graph: {how}, {g.n} vertices, {g.num_edges} edges, max degree "
          f"{results['graph']['max_degree']} ({results['graph']['seconds']:.1f} s)",
          file=sys.stderr, flush=True)
    ok = True
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"\n== device: {results['device']}, host cores: {results['cpus']}, graph: "
          f"{results['graph']}", flush=True)
    for item in args.queries.split(";"):
        name, _, text = item.partition("=")
        text = text or QUERIES[name]
        ok &= run_query(name, text, g, args, results)
        # each query's table and the JSON as soon as it is done: a run cut short by a
        # time limit keeps the queries it finished
        print(table({"queries": {name: results["queries"][name]}}), flush=True)
        (out / "stream_bench.json").write_text(json.dumps(results, indent=1, default=float))
    if not ok:
        print("\nsome engines disagreed (see MISMATCH lines)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
