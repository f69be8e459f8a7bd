#!/usr/bin/env python3
"""The fixed cost of one count on an engine (issue 21: at most 2 ms on the GPU), and where
it goes: what a query pays when the search itself is empty or tiny.

Two cases, each counted ``--calls`` times warm (modules compiled, the graph on the device)
and reported as the median:

- **no match**: a Barabási–Albert tree (``m = 1``, ``--tree-vertices``): it has roots and
  edges for every query but no cycle, so every query with a cycle counts 0 after its
  initial pool, its launches and its copies (the issue's "graph with no match");
- **one-root shard**: on a Chung-Lu graph (``--edges``, ``bench/gpu.py``'s generator on a
  GPU, a numpy one of the same law on a CPU), the plan limited to one root of degree 1
  (:func:`warpmatch.distributed.shards.shard_plan`), as a Dask worker runs its cheapest
  shards.

Per pattern and case: the engine's ``count`` (median ms), its parts from the engine's
``last_stats`` where it keeps them (``bfs_s``: initial pool, ``search_s``: the DFS
launches, the rest: setting up the run), and for the no-match case also ``wm.count_result``
(planning included). With ``--profile N`` the N functions with the most own time over all
the engine calls are printed (cProfile), to find what to remove.

With ``--light P1,P2,...``, the whole count of each of these patterns on the Chung-Lu graph
through ``wm.count_result`` (median of ``--light-calls``): total, planning, and the
engine's setup, initial pool and DFS search, where a light query's milliseconds go.

Examples
--------
    python bench/fixed_cost.py                          # GPU if present, else the CPU engine
    python bench/fixed_cost.py --engine gpu --profile 25 --patterns triangle,square
    python bench/fixed_cost.py --engine gpu --patterns triangle --light triangle,house
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import time
from pathlib import Path

import numpy as np

from _sibling import load  # bench/_sibling.py: sibling benchmarks by path

PATTERNS = "triangle,square,diamond,4-clique,house,5-clique"


def _timed(fn, calls: int, prof: cProfile.Profile | None, stats_of=None) -> dict:
    """Median ms of ``calls`` calls of ``fn`` (one untimed call first), and the median of
    each ``*_s`` entry of ``stats_of()`` after each call."""
    fn()
    times, stats = [], []
    for _ in range(calls):
        if prof is not None:
            prof.enable()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if prof is not None:
            prof.disable()
        stats.append(dict((stats_of() if stats_of is not None else None) or {}))
    return {"ms": 1e3 * statistics.median(times), **_engine_parts(stats)}


def _engine_parts(stats: list[dict], prefix: str = "") -> dict:
    """Medians (ms) of the engine's ``bfs_s``, ``search_s`` and ``total_s`` over ``stats``
    (each call's ``last_stats``; absent keys skipped), and the setup: total less both."""
    out = {}
    for key in ("bfs_s", "search_s", "total_s"):
        vals = [st[key] for st in stats if key in st]
        if vals:
            out[prefix + key.replace("_s", "_ms")] = 1e3 * statistics.median(vals)
    if prefix + "total_ms" in out:
        out[prefix + "setup_ms"] = (out[prefix + "total_ms"] - out.get(prefix + "bfs_ms", 0.0)
                                    - out.get(prefix + "search_ms", 0.0))
    return out


def _light(wm, eng, graph, backend: str, patterns: str, calls: int) -> dict:
    """Whole counts of ``patterns`` on ``graph`` through ``wm.count_result``: the median
    of ``calls`` warm calls of the total, planning, and the engine's parts."""
    print(f"\n| pattern ({graph.num_edges:,} edges) | count | total ms | planning | engine "
          "| setup | initial pool | search |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    out = {}
    for pname, q in load("distributed").queries(patterns):
        wm.count_result(graph, q, backend=backend)                   # compile, load
        rows = []
        for _ in range(calls):
            t = time.perf_counter()
            r = wm.count_result(graph, q, backend=backend)
            total = time.perf_counter() - t
            st = dict(getattr(eng, "last_stats", None) or {})
            rows.append((total, r.plan_seconds, r.seconds, st))
        med = {"total_ms": 1e3 * statistics.median(x[0] for x in rows),
               "plan_ms": 1e3 * statistics.median(x[1] for x in rows),
               "engine_ms": 1e3 * statistics.median(x[2] for x in rows)}
        med.update(_engine_parts([x[3] for x in rows], "run_"))   # the engine's own
        med["count"] = int(r.count)
        out[pname] = med
        cells = [f"{med[k]:.2f}" if k in med else "-"
                 for k in ("run_setup_ms", "run_bfs_ms", "run_search_ms")]
        print(f"| {pname} | {r.count:,} | {med['total_ms']:.2f} | {med['plan_ms']:.2f} | "
              f"{med['engine_ms']:.2f} | {' | '.join(cells)} |", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=("auto", "gpu", "cpu"), default="auto")
    ap.add_argument("--patterns", default=PATTERNS)
    ap.add_argument("--calls", type=int, default=50, help="timed calls per case (50)")
    ap.add_argument("--tree-vertices", type=float, default=1e6)
    ap.add_argument("--edges", type=float, default=1e7, help="Chung-Lu edges (10^7)")
    ap.add_argument("--profile", type=int, default=0, help="print the N costliest functions")
    ap.add_argument("--light", default="", help="patterns counted whole on the Chung-Lu graph")
    ap.add_argument("--light-calls", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    import warpmatch as wm
    from warpmatch.distributed.shards import shard_plan, Shard
    from warpmatch.engine import get_engine
    from warpmatch.graph.generators import barabasi_albert
    from warpmatch.plan import build_plan

    name = args.engine
    if name == "auto":
        from warpmatch.engine.gpu.device import cuda_available
        name = "gpu" if cuda_available()[0] else "cpu"
    eng = get_engine(name)
    stats_of = (lambda: getattr(eng, "last_stats", None))
    tree = barabasi_albert(int(args.tree_vertices), 1, seed=1, name="ba-tree")
    if name == "gpu":
        cl = load("gpu").power_law_gpu(int(args.edges), seed=1, name="chung-lu")
    else:
        cl = load("shard_cuts").chung_lu_cpu(int(args.edges))
    print(f"engine {name}; no-match graph: BA tree, {tree.n:,} vertices; shard graph: "
          f"Chung-Lu, {cl.n:,} vertices, {cl.num_edges:,} edges; median of {args.calls} "
          f"warm calls", flush=True)
    prof = cProfile.Profile() if args.profile else None
    rows, out = [], {}
    for pname, q in load("distributed").queries(args.patterns):
        plan = build_plan(tree, q, mode="embeddings", purpose="count")
        r = _timed(lambda: eng.count(tree, plan), args.calls, prof, stats_of)
        if eng.count(tree, plan) != 0:
            raise SystemExit(f"{pname}: the tree has a match of a query with a cycle?")
        api = _timed(lambda: wm.count_result(tree, q, backend=name), max(5, args.calls // 5),
                     None)
        full = build_plan(cl, q, mode="embeddings", purpose="count")
        deg = cl.degree[full.roots]
        i = int(np.flatnonzero(deg == deg.min())[0])
        sp = shard_plan(full, Shard(index=0, lo=i, hi=i + 1, cost=1.0))
        s = _timed(lambda: eng.count(cl, sp), args.calls, prof, stats_of)
        out[pname] = {"no_match": r, "api_no_match": api, "one_root_shard": s}
        rows.append((pname, r, api["ms"], s))
        print(f"{pname}: no match {r['ms']:.2f} ms (api {api['ms']:.2f}); one-root shard "
              f"{s['ms']:.2f} ms", flush=True)
    print("\n| pattern | no match ms | setup | bfs | search | api (with planning) ms "
          "| 1-root shard ms | setup | bfs | search |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def parts(r: dict) -> str:
        return " | ".join(f"{r[k]:.2f}" if k in r else "-"
                          for k in ("setup_ms", "bfs_ms", "search_ms"))
    for pname, r, api_ms, s in rows:
        print(f"| {pname} | {r['ms']:.2f} | {parts(r)} | {api_ms:.2f} | {s['ms']:.2f} | "
              f"{parts(s)} |")
    if args.light:
        out["light"] = _light(wm, eng, cl, name, args.light, args.light_calls)
    if prof is not None:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(args.profile)
        print(buf.getvalue())
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
