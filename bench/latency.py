"""Latency of continuous matching at given arrival rates (issue 17 item 4; DCSM §1.1, Fig. 2).

A power-law graph (R-MAT, ``--edges``) becomes ``G_0`` and a stream
(:func:`warpmatch.stream.generate.make_stream`: 10% of the edges inserted, 5% deleted).
The stream is replayed into :meth:`~warpmatch.ContinuousMatcher.apply_stream` by a
producer that hands each update over at its Poisson arrival time (``--rates``; ``max``: the
whole stream at once), once per mode, each on a fresh matcher of the same query:

- ``latency``: batches of ``--batch`` that also close when their oldest update has waited
  ``--max-latency`` (the mode of issue 17 item 1);
- ``greedy``: the same with ``max_latency=0``: a batch is whatever arrived while the
  previous one was matched (at most ``--batch``), so an idle matcher takes an update at
  once and a busy one gets larger batches;
- ``fixed-128`` and ``fixed-4096``: batches that close on size only (and at the end), as
  ``apply_batches`` cuts a stream.

With ``--backend gpu`` the first two modes let the GPU engine send each batch to the host's
sequential path or the device, whichever is measured faster for its size
(:mod:`warpmatch.stream._route`); ``greedy-gpu`` is ``greedy`` with every batch on the
device, and the fixed modes are also device-only: the engine as it was before the route.
Each row says how many batches each path took.

Per mode: mean, p50, p99 and max latency (from each update's scheduled arrival to the end
of its batch's ``apply``: when its deltas are ready) and the throughput (updates over the
time from the first arrival to the last result), plus the library's own response time
(:attr:`~warpmatch.ContinuousMatcher.latency`, from when the update reached warpmatch).
Every mode's per-update counts are compared with the first mode's: a mismatch is printed
and makes the exit status 1.

With ``--rapidflow PATH`` (RapidFlow's source directory, or a built ``RapidFlow.out``;
resolved and built as ``csm_peers.py`` does, into the same cache) each query also runs
RapidFlow, a single-thread CPU continuous matcher, once on the same ``G_0``, query and the
``max`` row's updates (the whole stream unless ``--max-updates`` cuts it), written by
``rapidflow_peer.py``'s converters. RapidFlow reads its stream from a file, so it is a
full-speed replay only: the ``max`` row gains its throughput (updates over its own
``Query time``) and the greedy mode's and fixed-4096's throughput over it (issue 17's
target: at least 10x; DCSM reports 10.5x); other rates show "—". Its counts (embeddings,
non-induced, ``|Δ+| + |Δ−|`` per update, as ``csm_peers.py``'s docstring says) are checked
against the first mode's per-update counts of that row, update by update where the check
variant was built, else the total: a mismatch is printed and makes the exit status 1. A
query RapidFlow cannot run with the same meaning (``rf_query_problem``), its crash (it has
read out of bounds when a vertex that lost all its edges gets new ones: the RapidFlow line
counts such insertions) or its timeout (``--time-limit``) is reported, not fatal.
RapidFlow's side of the script is ``bench/_latency_rf.py``.

Usage::

    python bench/latency.py --edges 1e6 --backend cpu                  # any machine
    python bench/latency.py --edges 1e7 --backend gpu --json $OUT/latency.json
    python bench/latency.py --edges 1e5 --queries triangle,square --rates 1e3,max \
        --rapidflow ~/src/RapidFlow                                  # + RapidFlow at max

How it differs from DCSM's measurement (§1.1, Figure 2: GCSM's average response time
with batches of 128 and 4096 across update rates): no pipelining or multi-version store
(the ``latency`` and ``greedy`` modes close batches on time, and each batch is matched
after the previous one, on the host or the device), so at high rates the modes differ
only by their batch sizes and paths;
DCSM's own batcher (§1.3) uses batches of 64 closed after about 0.125 ms, here
``--batch`` and ``--max-latency``; the R-MAT graph stands in for DCSM's real graphs.
DCSM's 10.5x over RapidFlow compares its GPU system with RapidFlow's one thread; here the
modes run on the engine's own threads (``--backend cpu``: every core; ``csm_peers.py``
has the one-thread comparison), and the two times leave out the same things differently:
RapidFlow's ``Query time`` is its stream loop after loading the files and building its
index, warpmatch's runs from the first arrival to the last result on a matcher built (and
warmed up) before.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sibling import load  # noqa: E402 - bench/_sibling.py: sibling benchmarks by path
import _csm_child  # noqa: E402 - csm_peers.py's warm-up (imported by name: numba's cache)
import _csm_workloads  # noqa: E402 - csm_peers.py's graphs

QUERIES = ("triangle", "square", "diamond", "house")
RATES = ("1e3", "1e4", "1e5", "1e6", "max")


def schedule(n: int, rate: float, seed: int) -> np.ndarray:
    """Arrival offsets (seconds from the start) of ``n`` updates of a Poisson stream of
    ``rate`` updates/s; all 0.0 for ``rate = inf`` (the whole stream at once)."""
    if not math.isfinite(rate):
        return np.zeros(n)
    gaps = np.random.default_rng(seed).exponential(1.0 / rate, n)
    return np.cumsum(gaps)


def producer(ups: Any, offsets: np.ndarray, t0: list[float]) -> Iterator[Any]:
    """``ups`` in pieces, each handed over once its updates' arrival times have come
    (``t0[0]``: the start, set when the first piece is asked for). Sleeps between pieces,
    so the reader thread leaves the GIL to the matcher."""
    n = len(ups)
    t0.append(time.perf_counter())
    start = t0[0]
    i = 0
    while i < n:
        now = time.perf_counter() - start
        j = int(np.searchsorted(offsets, now, side="right"))
        if j > i:
            yield ups.slice(i, j)
            i = j
            continue
        time.sleep(min(max(offsets[i] - now, 0.0), 0.002))


def run_mode(g0: Any, query: str, ups: Any, offsets: np.ndarray, backend: str, batch: int,
             max_latency: float | None, limit: float, **engine: Any) -> dict[str, Any]:
    """Replay ``ups`` at ``offsets`` into a fresh matcher (``engine``: its engine's
    options); latencies and counts. Stops after the batch that ends ``limit`` seconds
    after the start (``cut``: the updates matched by then are measured)."""
    import warpmatch as wm
    cm = wm.ContinuousMatcher(g0, query, backend=backend, count_initial=False, **engine)
    t0: list[float] = []
    done_at, sizes, plus, minus = [], [], [], []
    cut = False
    for d in cm.apply_stream(producer(ups, offsets, t0), batch, max_latency=max_latency,
                             counts_only=True):
        done_at.append(time.perf_counter())
        sizes.append(len(d))
        plus.append(np.asarray(d.plus_counts))
        minus.append(np.asarray(d.minus_counts))
        if done_at[-1] - t0[0] > limit and sum(sizes) < len(ups):
            cut = True
            break
    n = int(sum(sizes))
    done = np.repeat(np.array(done_at), sizes)
    lat = done - (t0[0] + offsets[:n])
    span = done_at[-1] - t0[0]
    lib = cm.latency.summary()
    return {
        "batches": len(sizes), "updates": n, "cut": cut,
        "latency_mean": float(lat.mean()), "latency_p50": float(np.percentile(lat, 50)),
        "latency_p99": float(np.percentile(lat, 99)), "latency_max": float(lat.max()),
        "throughput": float(sum(sizes) / span) if span > 0 else float("inf"),
        "response_p50": lib["response"]["p50"], "response_p99": lib["response"]["p99"],
        "busy_fraction": lib["busy_fraction"], "busy_s": cm.latency.busy,
        # batches per path where the GPU engine lends its host's sequential path
        "routed": cm.paths,
        # the GPU engine's own step times summed over its batches (engine.totals: total_s
        # the engine's run, engine_s its device part, kernel_s the counting kernel, ...)
        "engine_totals": {k: v for k, v in getattr(cm.engine, "totals", {}).items()
                          if k.endswith("_s") or k == "batches"},
        "_plus": np.concatenate(plus), "_minus": np.concatenate(minus),
    }


def _ms(x: float) -> str:
    return f"{x * 1e3:.3g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=float, default=1e6,
                    help="about this many undirected edges in the R-MAT graph (default 1e6)")
    ap.add_argument("--queries", default=",".join(QUERIES))
    ap.add_argument("--rates", default=",".join(RATES),
                    help="arrival rates, updates/s, comma-separated; 'max': all at once")
    ap.add_argument("--seconds", type=float, default=1.0,
                    help="replay length per rate (updates = rate x seconds, at most the "
                         "stream; default 1)")
    ap.add_argument("--max-updates", type=int, default=200_000,
                    help="updates per run at most (default 200000)")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "gpu", "auto"))
    ap.add_argument("--batch", type=int, default=4096,
                    help="the latency mode's batch size (default 4096)")
    ap.add_argument("--max-latency", default="1ms", help="the latency mode's (default 1ms)")
    ap.add_argument("--time-limit", type=float, default=20.0,
                    help="seconds per run, after which it stops at the next batch and "
                         "reports the updates matched so far (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="write every measurement here")
    ap.add_argument("--rapidflow", default=None, metavar="PATH",
                    help="also run RapidFlow (its source directory, built as by "
                         "csm_peers.py into its cache, or a built RapidFlow.out: totals "
                         "only unless --rapidflow-src) once per query on the 'max' row's "
                         "stream; its -time_limit is --rapidflow-time-limit")
    ap.add_argument("--rapidflow-time-limit", type=float, default=None,
                    help="RapidFlow's -time_limit (default: --time-limit plus 120 s). Its "
                         "limit also covers building its views of G_0, before its own "
                         "'Query time' starts (3 s did not cover that on 10^7 edges: it "
                         "stopped after one update); its rate is still the updates over "
                         "its Query time")
    ap.add_argument("--rapidflow-src", default=None,
                    help="with a binary --rapidflow: the sources of its per-update check "
                         "variant")
    ap.add_argument("--peer-build-dir", default=None,
                    help="where to build RapidFlow (default "
                         "~/.cache/warpmatch-bench/rapidflow-<hash>)")
    args = ap.parse_args(argv)
    rf_limit = (args.rapidflow_time_limit if args.rapidflow_time_limit is not None
                else args.time_limit + 120.0)

    import warpmatch as wm
    from warpmatch.stream.batching import parse_duration
    from warpmatch.stream.generate import make_stream

    t = time.perf_counter()
    graph, desc = _csm_workloads.powerlaw_graph(args.edges, args.seed)
    g0, stream = make_stream(graph, 0.1, 0.05, seed=args.seed)
    print(f"graph {desc}: {graph.n:,} vertices, {graph.num_edges:,} edges; stream "
          f"{len(stream):,} updates; {time.perf_counter() - t:.1f} s", flush=True)
    max_lat = parse_duration(args.max_latency)
    # the GPU engine: the new modes route each batch to the host's sequential path or
    # the device (stream/_route.py); "greedy-gpu" and the fixed modes are the engine as it
    # was before (every batch on the device)
    gpu = args.backend == "gpu"
    dev_only = {"sequential": False} if gpu else {}
    modes = [("latency", args.batch, max_lat, {}), ("greedy", args.batch, 0.0, {})]
    if gpu:
        modes.append(("greedy-gpu", args.batch, 0.0, dev_only))
    modes += [("fixed-128", 128, None, dev_only), ("fixed-4096", 4096, None, dev_only)]
    rates = [float("inf") if r.strip() == "max" else float(r) for r in args.rates.split(",")]
    rf_side: dict[str, Any] | None = None
    if args.rapidflow:
        if all(math.isfinite(r) for r in rates):
            # RapidFlow replays its file at full speed: only the max row compares with it
            ap.error("--rapidflow needs 'max' in --rates (RapidFlow has no arrival rate)")
        import tempfile
        rfl = load("_latency_rf")
        rf_tmp = tempfile.TemporaryDirectory(prefix="wm_latency_rf_")
        n_max = max(1, min(len(stream), args.max_updates))
        rf_side = rfl.rapidflow_setup(args.rapidflow, args.rapidflow_src, args.peer_build_dir,
                                      g0, stream.slice(0, n_max), Path(rf_tmp.name))
        print(f"RapidFlow: {rf_side['peer'].plain} ({rf_side['peer'].note}); one thread, "
              f"the max row's {n_max:,} updates from a file, limit {rf_limit:g} s (its views of G0 included); "
              f"{rf_side['connect_isolated_in_g0']:,} insertions touch a vertex isolated in "
              f"G0, {rf_side['reconnect_emptied']:,} one that lost all its edges", flush=True)
    rf_runs: dict[str, dict[str, Any]] = {}
    rf_notes: list[str] = []
    results: list[dict[str, Any]] = []
    bad = 0
    for query in [q.strip() for q in args.queries.split(",") if q.strip()]:
        # warm-up on a separate matcher, in batches of the sizes the modes make (1 to
        # 4096): each kernel compiles here (on the H200 host, the first mode's first
        # one-update batches paid 2.5 s when the warm-up had only batches of 512)
        for opts in ([{}, dev_only] if gpu else [{}]):
            warm = wm.ContinuousMatcher(g0, query, backend=args.backend, count_initial=False,
                                        **opts)
            at = 0
            for size in (1, 1, 2, 7, 128, 512, 4096):
                for _ in warm.apply_stream(stream.slice(at, at + size), size,
                                           counts_only=True):
                    pass
                at += size
            del warm
        if args.backend == "cpu":
            # (a 2-core box: a 4096-batch of triangles compiled it in a timed run, 6.8 s)
            _csm_child.warm_parallel_region(g0, query, stream.slice(0, 4096))
        for rate in rates:
            n = len(stream) if not math.isfinite(rate) else int(rate * args.seconds)
            n = max(1, min(n, len(stream), args.max_updates))
            ups = stream.slice(0, n)
            offsets = schedule(n, rate, args.seed)
            # (JSON has no infinity: the whole stream at once is "max")
            row: dict[str, Any] = {"query": query, "rate": rate if math.isfinite(rate)
                                   else "max", "updates": n, "modes": {}}
            first = None
            for name, batch, ml, opts in modes:
                r = run_mode(g0, query, ups, offsets, args.backend, batch, ml,
                             args.time_limit, **opts)
                counts = (r.pop("_plus"), r.pop("_minus"))
                k = len(counts[0]) if first is None else min(len(first[0]), len(counts[0]))
                if first is None:
                    first = counts
                elif not (np.array_equal(first[0][:k], counts[0][:k])
                          and np.array_equal(first[1][:k], counts[1][:k])):
                    print(f"MISMATCH {query} rate {rate:g}: {name} per-update counts differ "
                          f"from {modes[0][0]}", flush=True)
                    bad += 1
                row["modes"][name] = r
            if rf_side is not None and not math.isfinite(rate) and query not in rf_runs:
                rf = rfl.rapidflow_query(rf_side, query, g0.directed, rf_limit)
                check, problem = rfl.rapidflow_check(rf, *first,
                                                     row["modes"][modes[0][0]]["cut"])
                if problem:
                    print(f"MISMATCH {query} rate max: {modes[0][0]} {problem}", flush=True)
                    bad += 1
                for note in (rf.get("check_note"), rf.get("detail")):
                    if note:
                        rf_notes.append(f"{query}: RapidFlow {rf['status']}: {note}")
                # (the per-update counts are checked above, not kept in the JSON)
                rf_runs[query] = row["rapidflow"] = {
                    **{k: v for k, v in rf.items() if k != "per_update"},
                    "check": check, "problem": problem, "ratios": {
                        k: row["modes"][k]["throughput"] / rf["throughput"]
                        for k in ("greedy", "fixed-4096") if rf["throughput"]}}
            results.append(row)
            m = row["modes"]
            print(f"[{query} @ {'max' if not math.isfinite(rate) else f'{rate:g}'}/s, {n:,} "
                  f"updates] " + "; ".join(
                      f"{k}: mean {_ms(v['latency_mean'])} ms, p99 {_ms(v['latency_p99'])} ms,"
                      f" {v['throughput']:,.0f} upd/s"
                      + ("" if not v["routed"] else
                         f" (batches host {v['routed']['sequential']:,} / device "
                         f"{v['routed']['device']:,})")
                      + (f" (cut at {v['updates']:,})" if v["cut"] else "")
                      for k, v in m.items())
                  + ("" if "rapidflow" not in row else
                     f"; RapidFlow: {row['rapidflow']['status']}"
                     + (f" {row['rapidflow']['seconds']:.3g} s, "
                        f"{row['rapidflow']['throughput']:,.0f} upd/s"
                        if row["rapidflow"]["throughput"] else "")
                     + f", count {row['rapidflow']['check']}"), flush=True)
            if args.json:
                doc: dict[str, Any] = {"args": vars(args), "graph": desc, "results": results}
                if rf_side is not None:
                    doc["rapidflow"] = {
                        "plain": str(rf_side["peer"].plain), "note": rf_side["peer"].note,
                        "check": str(rf_side["peer"].check) if rf_side["peer"].check else None,
                        **{k: rf_side[k] for k in ("updates", "connect_isolated_in_g0",
                                                   "reconnect_emptied")}}
                Path(args.json).write_text(json.dumps(doc, indent=1))
    if rf_side is not None:
        rf_tmp.cleanup()
    print()
    names = [m[0] for m in modes]
    print(f"latency mean / p99 (ms) per mode; 4096/x: fixed-4096's mean latency over mode x's; "
          f"throughput in upd/s ({args.max_latency} for 'latency')\n")
    rf_head = "" if rf_side is None else " RapidFlow upd/s | best mode / RapidFlow |"
    print("| query | rate /s | updates | " + " | ".join(names)
          + " | 4096/latency | 4096/greedy | throughput " + " / ".join(names) + " |"
          + rf_head)
    print("|---|---:|---:|" + "---:|" * (len(names) + 3 + (0 if rf_side is None else 2)))
    for row in results:
        m = row["modes"]
        f4 = m["fixed-4096"]["latency_mean"]
        rate = row["rate"] if row["rate"] == "max" else f"{row['rate']:g}"
        cells = [f"{_ms(m[k]['latency_mean'])} / {_ms(m[k]['latency_p99'])}" for k in names]
        ratios = [f"{f4 / m[k]['latency_mean']:.3g}x" if m[k]["latency_mean"] > 0 else "-"
                  for k in ("latency", "greedy")]
        tput = " / ".join(f"{m[k]['throughput']:,.0f}" + ("*" if m[k]["cut"] else "")
                          for k in names)
        rf_cells = ("" if rf_side is None else
                    " " + " | ".join(rfl.rapidflow_cells(row)) + " |")
        print(f"| {row['query']} | {rate} | {row['updates']:,} | " + " | ".join(cells)
              + " | " + " | ".join(ratios) + f" | {tput} |" + rf_cells)
    print("\nlatency: an update's scheduled arrival -> its batch's deltas ready; "
          "throughput: updates / (last result - first arrival); *: cut by --time-limit "
          "(measured over the updates matched by then)")
    short = [r for r in results if r["updates"] < 2 * 4096]
    if short:
        print(f"fixed-4096 on runs of fewer than 8,192 updates ({len(short)} rows) closes "
              "its last batch at the end of the replay: its latency there is bounded by "
              "the replay's length (--seconds), not by the batch filling")
    if rf_side is not None:
        print("RapidFlow upd/s: the max row's updates / RapidFlow's own Query time (one thread, "
              "its stream read from a file: no arrival rate, so '—' at other rates; <: its "
              "limit cut it); best mode / RapidFlow: greedy's / fixed-4096's throughput over "
              "RapidFlow's (issue 17: at least 10x; DCSM reports 10.5x)")
        for note in rf_notes:
            print(f"note: {note}")
        print("RapidFlow count check: " + "; ".join(
            f"{q} {r['check']}" for q, r in rf_runs.items()))
    print("count check: " + ("every mode agrees" if not bad else f"{bad} MISMATCH(ES)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
