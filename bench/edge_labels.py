"""Edge-labeled graphs: a query matched on the whole graph vs on its labels' partitions
(issue 21, item 1; GENEVA's set-up, graph/labelparts.py).

For each number of edge labels ``L`` (uniform random labels on an R-MAT graph), random-walk
queries of the given sizes are extracted from the graph (so each has a match; their edge
labels are the data edges'), and each is counted twice through ``warpmatch.count_result``
on the same engine, in the same process:

``whole``
    ``$WARPMATCH_LABEL_PARTITIONS=0``: the search runs on the whole graph and filters edge
    labels while it scans the adjacency lists (what warpmatch did before);
``parts``
    the default: the search runs on the graph of the query's labels' edges
    (:func:`warpmatch._strategies.label_graph`); building that graph is timed apart (``build s``,
    once per label set; a later query with the same labels reuses it).

Per ``L`` it also builds GENEVA's interval-PCSR (:mod:`warpmatch.graph.intervals`) and
prints its storage table (GENEVA's Table 2): plain CSR, interval-PCSR, GSI's hash-PCSR with
32 slots a vertex, the largest partition, the intervals per partition and the build time.
``--storage-only`` prints that table and skips the queries.

Counts must be equal (the script stops otherwise). Each row's JSON (stderr and ``--json``)
also has the wall time of drawing the query and of each untimed first count (compiling). The table gives, per ``L``: the query,
its count, both times (median of ``--repeats``), the speed-up, and the bytes of the graph
each search reads (the whole CSR, or the label graph's). A count that reaches
``--time-limit`` is marked ``>``, and its row is not used for the speed-up.

Usage::

    python bench/edge_labels.py --edges 1e6 --labels 3,7,12 --sizes 4,6,8 --per-size 3
    python bench/edge_labels.py --backend gpu --edges 1e8 --labels 3,7,12 --json out.json
    python bench/edge_labels.py --edges 1e7 --storage-only
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time


def _graph(edges: float, labels: int, seed: int):
    from warpmatch.graph.generators import random_labels, rmat, with_labels
    scale = max(4, int(round(math.log2(max(16.0, edges / 16)))))
    g = rmat(scale, 16, seed=seed, name=f"rmat{scale}")
    m = int(g.num_edges)
    return with_labels(g, edge_labels=random_labels(m, labels, seed=seed + labels))


def _count(g, q, backend: str, time_limit: float, parts: bool) -> tuple[int, float, bool]:
    import warpmatch as wm
    os.environ["WARPMATCH_LABEL_PARTITIONS"] = "1" if parts else "0"
    r = wm.count_result(g, q, backend=backend, time_limit=time_limit)
    return int(r.count), float(r.seconds + r.plan_seconds), r.partial is not None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", type=float, default=1e6, help="about this many edges (1e6)")
    ap.add_argument("--labels", default="3,7,12", help="edge label counts (3,7,12)")
    ap.add_argument("--sizes", default="4,6,8", help="query sizes (4,6,8)")
    ap.add_argument("--per-size", type=int, default=3, help="queries per size and density (3)")
    ap.add_argument("--density", default="sparse,dense", help="sparse,dense")
    ap.add_argument("--backend", default="cpu", help="engine (cpu)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per query (3)")
    ap.add_argument("--time-limit", type=float, default=20.0, help="seconds per count (20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--storage-only", action="store_true",
                    help="only the storage table (interval-PCSR vs CSR vs hash-PCSR)")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)

    from warpmatch.graph.labelparts import restrict_to_labels, restricted_bytes
    from warpmatch.query.sample import random_walk_query

    rows, storage = [], []
    for L in [int(x) for x in args.labels.split(",") if x]:
        g = _graph(args.edges, L, args.seed)
        whole_bytes = int(g.nbytes())
        print(f"# L={L}: {g.n:,} vertices, {g.num_edges:,} edges, {whole_bytes / 2**20:,.1f} "
              f"MiB", file=sys.stderr, flush=True)
        storage.append(_storage(g, L))
        print(json.dumps(storage[-1]), file=sys.stderr, flush=True)
        if args.storage_only:
            continue
        for k in [int(x) for x in args.sizes.split(",") if x]:
            for dens in [d for d in args.density.split(",") if d]:
                if dens == "dense" and k < 4:
                    continue
                for i in range(args.per_size):
                    t = time.perf_counter()
                    try:
                        q = random_walk_query(g, k, dens, seed=1000 * k + i, max_tries=2000)
                    except Exception as exc:  # noqa: BLE001 - a graph without such walks
                        print(f"# no {dens} {k}-vertex query ({time.perf_counter() - t:.1f} "
                              f"s): {exc}", file=sys.stderr, flush=True)
                        break
                    draw_s = time.perf_counter() - t
                    labs = frozenset(int(x) for x in q.edge_labels.tolist())
                    t = time.perf_counter()
                    restrict_to_labels(g, labs)
                    build_s = time.perf_counter() - t
                    res, warm = {}, {}
                    for parts in (False, True):
                        t = time.perf_counter()      # the untimed first count (compiling)
                        _count(g, q, args.backend, args.time_limit, parts)
                        warm[parts] = time.perf_counter() - t
                        runs = [_count(g, q, args.backend, args.time_limit, parts)
                                for _ in range(args.repeats)]
                        res[parts] = (runs[0][0], statistics.median(r[1] for r in runs),
                                      any(r[2] for r in runs))
                    (cw, tw, pw), (cp, tp, pp) = res[False], res[True]
                    if not (pw or pp) and cw != cp:
                        raise SystemExit(f"count mismatch on {q.name} (L={L}): whole {cw}, "
                                         f"parts {cp}")
                    rows.append({"labels": L, "query": q.name, "k": k, "density": dens,
                                 "query_labels": sorted(labs), "count": cp,
                                 "whole_s": tw, "parts_s": tp, "build_s": build_s,
                                 "whole_partial": pw, "parts_partial": pp,
                                 "draw_s": draw_s, "warm_whole_s": warm[False],
                                 "warm_parts_s": warm[True],
                                 "whole_bytes": whole_bytes,
                                 "parts_bytes": restricted_bytes(g, labs)[1]})
                    r = rows[-1]
                    print(json.dumps(r), file=sys.stderr, flush=True)
    _print_storage(storage)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"argv": sys.argv, "backend": args.backend, "rows": rows,
                       "storage": storage}, f, indent=1)
    if args.storage_only:
        return 0
    print("| L | query | labels | count | whole s | parts s | speed-up | build s | "
          "MiB whole -> parts |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    ups = {}
    for r in rows:
        sp = (r["whole_s"] / r["parts_s"]) if r["parts_s"] > 0 else float("nan")
        if not (r["whole_partial"] or r["parts_partial"]):
            ups.setdefault(r["labels"], []).append(sp)
        mark = lambda p: ">" if p else ""   # noqa: E731
        print(f"| {r['labels']} | {r['query']} | {','.join(map(str, r['query_labels']))} | "
              f"{r['count']:,} | {mark(r['whole_partial'])}{r['whole_s']:.4f} | "
              f"{mark(r['parts_partial'])}{r['parts_s']:.4f} | {sp:.2f}x | {r['build_s']:.3f} | "
              f"{r['whole_bytes'] / 2**20:,.1f} -> {r['parts_bytes'] / 2**20:,.1f} |")
    for L, v in sorted(ups.items()):
        gm = math.exp(sum(math.log(x) for x in v) / len(v))
        print(f"L={L}: geometric mean speed-up {gm:.2f}x over {len(v)} queries")
    return 0


def _storage(g, L: int) -> dict:
    """The graph's interval-PCSR: bytes against the plain CSR and 32 hash slots a vertex."""
    from warpmatch.graph.intervals import IntervalPCSR
    t = time.perf_counter()
    s = IntervalPCSR(g)
    build = time.perf_counter() - t
    sizes = s.sizes()
    big = max(sizes, key=lambda p: p.vertices)
    return {"labels": L, "edges": int(g.num_edges), "csr_bytes": s.csr_bytes,
            "interval_bytes": s.nbytes, "hash_bytes": sum(p.hash_bytes for p in sizes),
            "map_bytes": s.map_bytes, "max_part_bytes": max(p.bytes for p in sizes),
            "largest_part_intervals": big.intervals,
            "intervals": [p.intervals for p in sizes], "build_s": build}


def _print_storage(storage: list[dict]) -> None:
    mib = lambda b: f"{b / 2**20:,.1f}"   # noqa: E731
    print("| L | edges | CSR MiB | interval-PCSR MiB (x CSR) | hash-PCSR MiB | reduction "
          "over hash | max part MiB | intervals per part (largest part) | build s |")
    print("|---:|---:|---:|---|---:|---:|---:|---|---:|")
    for r in storage:
        iv = r["intervals"]
        print(f"| {r['labels']} | {r['edges']:,} | {mib(r['csr_bytes'])} | "
              f"{mib(r['interval_bytes'])} ({r['interval_bytes'] / r['csr_bytes']:.2f}x) | "
              f"{mib(r['hash_bytes'])} | {1 - r['interval_bytes'] / r['hash_bytes']:.0%} | "
              f"{mib(r['max_part_bytes'])} | {min(iv)}-{max(iv)} "
              f"({r['largest_part_intervals']}) | {r['build_s']:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
