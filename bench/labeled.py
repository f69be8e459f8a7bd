"""Large labeled queries: time to the first answer, compilation included (issue 23).

Runs the shipped query sets (``DATA/labeled/{yeast,human,hprd}/query_graph``) the way a
user meets them: one process per engine, its graph loaded and its device warm, then each
query as a *new* query, ``warpmatch.count_result(g, q, limit=FIRST, time_limit=T)`` timed
end to end (planning, NVRTC compilation, search). Engines:

``gpu-auto``
    ``compile="auto"`` (the default): a structure not compiled before runs on the generic
    module (compiled once per query size, then cached); with ``--background-compile``
    its specialised module also compiles in a background process.
``gpu-generic`` / ``gpu-specialised``
    One module kind only. ``gpu-specialised`` pays NVRTC for every new query; it is also
    timed a second time per query, from the cache, for the search alone.
``gpu-<kind>-notwins`` / ``gpu-<kind>-notable``
    Each GPU engine also with ``WARPMATCH_GPU_LEAF_GROUPS=alike`` (twins enumerated
    instead of counted by the warp from one intersection; ``--with-twins``) or with
    ``WARPMATCH_LEAF_TABLE=0`` (labeled last leaves tested lane by lane instead of
    counted from a per-vertex table), to measure those counts.
``cpu``
    The numba engine, all cores.
``cpu-notable``
    The same with ``WARPMATCH_LEAF_TABLE=0``: a labeled last leaf is scanned per partial
    match instead of counted from the per-vertex table (to measure that table).
``cpu-notwins``
    The same with ``WARPMATCH_TWINS=0``: twins (last vertices with the same neighbours and
    label, ``plan.leaves.twin_group``) are enumerated instead of counted from the scan of
    the first one's candidates (to measure that count).
``cpu-core``, ``cpu-gql``, ``cpu-ri``
    The numba engine with one matching order alone: core first (``order="core"``,
    GENEVA's Algorithm 8), GraphQL's, or RI's. ``cpu`` (and every GPU engine) has the
    default, ``order="auto"``: RI's, and a count still running after 0.2 s races RI's
    order with its twins in place, GraphQL's and the core order against it (on the GPU
    engines, on the CPU engine beside the device, from 0.05 s on:
    ``warpmatch.engine.race.BESIDE_AFTER``).

Every GPU engine process starts with an empty CuPy kernel cache and empty markers (a
fresh temporary ``CUPY_CACHE_DIR`` and ``XDG_CACHE_HOME``), so compilation is measured,
not hidden. Counts are checked equal across engines where each finished (a count cut by
``--first`` is compared as ``min(count, FIRST)``). Prints one table per set and engine:
queries solved (first ``FIRST`` embeddings or the full count within ``T``), median and
p99 latency, median compile seconds, and the specialised module's search alone.

Each query's row is printed to stderr as it finishes and, with ``--out``, written to
``<engine>-<graph>.jsonl`` there at once, so a run cut short (a device call's limit)
keeps what it measured; the tables and ``labeled.json`` come at the end.

``--sampled N`` adds N queries of ``--sampled-size`` vertices (12 by default, gMatch §6.1)
drawn from each graph by random walks (``random_walk_query``, half dense, half sparse, seeds
0..N-1; each has a match), as a set of their own. ``--first 0`` counts every embedding
(a query is then answered when its full count finishes within ``--time-limit``, e.g. 60 s).
Besides the table per graph and engine, one per query set (size and density, or
``sampled``) gives the answered share, the mean and the p99 latency.

Not done here yet (issue 23, item 5): EGSM / gMatch as peers.

Usage (GPU machine)::

    python bench/labeled.py --graphs yeast,hprd --per-set 5 --sizes 16,24 \\
        --engines gpu-auto,gpu-specialised,cpu --out /tmp/lab
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

DATA = Path(os.environ.get("WARPMATCH_DATA", Path(__file__).resolve().parents[1] / ".." /
                           "shared" / "data"))
ENGINES = tuple(f"gpu-{m}{v}" for m in ("auto", "generic", "specialised")
                for v in ("", "-notwins", "-notable")) + (
    "cpu", "cpu-notable", "cpu-notwins", "cpu-core", "cpu-gql", "cpu-ri")


def query_files(graph: str, sizes: list[int], densities: list[str], per_set: int,
                with_twins: bool = False, with_table: bool = False) -> list[Path]:
    """The first ``per_set`` queries of each (size, density) set of ``graph``, in order;
    ``with_twins``: the first ``per_set`` that have twins (``plan.order.twin_classes``:
    vertices with the same label and the same two or more neighbours); ``with_table``:
    the first whose count plan on ``graph`` ends with leaves counted from a table
    (``engine.gpu.render.table_leaves``: a labeled last leaf, or labeled alike leaves)."""
    from warpmatch.plan.order import twin_classes
    from warpmatch.query.io import read_query_file
    qdir = DATA / "labeled" / graph / "query_graph"
    ends_in_table: Callable[[Path], bool] | None = None
    if with_table:
        import warpmatch as wm
        from warpmatch.engine.gpu.render import uses_table
        from warpmatch.plan import build_plan
        g = wm.read_graph(DATA / "labeled" / graph / f"{graph}.graph")
        ends_in_table = lambda p: uses_table(  # noqa: E731
            build_plan(g, read_query_file(p), purpose="count"))
    out = []
    for k in sizes:
        for dens in densities:
            got, i = 0, 1
            while got < per_set:
                p = qdir / f"query_{dens}_{k}_{i}.graph"
                if not p.is_file():
                    break
                i += 1
                if with_twins and not twin_classes(read_query_file(p)):
                    continue
                if ends_in_table is not None and not ends_in_table(p):
                    continue
                out.append(p)
                got += 1
    return out


def child(spec_path: str) -> None:
    """One engine in its own process: every query as a new query; JSON lines on stdout."""
    spec = json.loads(Path(spec_path).read_text())
    import warnings

    import warpmatch as wm
    from warpmatch.query.io import read_query_file
    warnings.simplefilter("ignore")
    engine = spec["engine"]
    backend = "cpu" if engine.startswith("cpu") else "gpu"
    g = wm.read_graph(spec["graph"])
    # warm the process: the device, CuPy, the graph's upload, numba (not per query)
    t = time.perf_counter()
    wm.count_result(g, "a-b", backend=backend)
    if not spec["first"]:
        # full counts: the compiled sum over quotients too (warpmatch._hombasis)
        from warpmatch._hombasis import warm_kernel
        warm_kernel()
    print(json.dumps({"warmup_s": time.perf_counter() - t}), flush=True)
    first = spec["first"] or None       # 0: the full count
    order = (engine.rsplit("-", 1)[1] if engine.endswith(("-core", "-gql", "-ri"))
             else "auto")
    for qp in spec["queries"]:
        q = read_query_file(qp)
        rec = {"query": Path(qp).name, "k": int(q.k)}
        t = time.perf_counter()
        try:
            r = wm.count_result(g, q, backend=backend, limit=first, order=order,
                                time_limit=spec["time_limit"])
            rec.update(seconds=time.perf_counter() - t, count=int(r.count),
                       partial=r.partial, compile_s=r.compile_seconds,
                       module=r.gpu_module, search_s=r.seconds - r.compile_seconds,
                       raced_on=r.raced_on,
                       # how a full count past the direct search's head start was answered
                       answered_by=("cliques" if r.cliques else "hombasis" if r.hombasis
                                    else "factored" if r.factored else "search"))
            if engine.startswith("gpu-specialised"):
                # the same query again: its module is cached, the search alone
                t = time.perf_counter()
                r2 = wm.count_result(g, q, backend=backend, limit=first,
                                     time_limit=spec["time_limit"])
                rec.update(warm_s=time.perf_counter() - t, warm_compile_s=r2.compile_seconds)
        except Exception as exc:          # a failure is a row of the table, not the end
            rec.update(seconds=time.perf_counter() - t, error=f"{type(exc).__name__}: {exc}")
        print(json.dumps(rec), flush=True)


def sampled_queries(graph: Path, n: int, k: int, work: Path) -> list[Path]:
    """``n`` random-walk queries of ``k`` vertices from ``graph`` (half dense, half sparse,
    seeds 0..n-1), written as t/v/e files in ``work``: ``sampled_<density>_<k>_<i>.graph``."""
    import warpmatch as wm
    from warpmatch.query.io import write_query_file
    from warpmatch.query.sample import random_walk_query
    g = wm.read_graph(graph)
    out = []
    for i in range(n):
        dens = "dense" if i % 2 == 0 else "sparse"
        q = random_walk_query(g, k, dens, seed=i, max_tries=20_000)
        p = work / f"sampled_{dens}_{k}_{i}.graph"
        write_query_file(q, p)
        out.append(p)
    return out


def query_set(name: str) -> str:
    """The set a query file belongs to: ``dense_16`` for ``query_dense_16_3.graph``,
    ``sampled_12`` for ``sampled_sparse_12_7.graph``."""
    parts = Path(name).stem.split("_")
    return f"sampled_{parts[2]}" if parts[0] == "sampled" else f"{parts[1]}_{parts[2]}"


def run_engine(engine: str, graph: Path, queries: list[Path], args: argparse.Namespace,
               work: Path) -> list[dict]:
    spec = {"engine": engine, "graph": str(graph), "queries": [str(q) for q in queries],
            "first": args.first, "time_limit": args.time_limit}
    sp = work / f"{engine}-{graph.stem}.json"
    sp.write_text(json.dumps(spec))
    env = dict(os.environ)
    if engine.endswith("-notable"):                 # both engines read it
        env["WARPMATCH_LEAF_TABLE"] = "0"
    if engine == "cpu-notwins":
        env["WARPMATCH_TWINS"] = "0"
    if engine.startswith("gpu"):
        env["WARPMATCH_GPU_COMPILE"] = engine.split("-")[1]
        if engine.endswith("-notwins"):             # twins enumerated (GpuEngine leaf_groups)
            env["WARPMATCH_GPU_LEAF_GROUPS"] = "alike"
        env["CUPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="cupy-", dir=work)
        env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="xdg-", dir=work)
        env["WARPMATCH_GPU_BACKGROUND_COMPILE"] = "1" if args.background_compile else "0"
    limit = args.time_limit * (2 * len(queries) + 2) + 600
    # each query's row as the child prints it: to stderr (a line per query) and, with
    # --out, to <engine>-<graph>.jsonl, so a run cut short keeps what it did
    live = None
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        live = (Path(args.out) / f"{engine}-{graph.stem}.jsonl").open("w")
    # the child's stderr to a file: a pipe read only at the end could fill and block it
    errf = tempfile.TemporaryFile(mode="w+", dir=work)
    proc = subprocess.Popen([sys.executable, __file__, "--child", str(sp)], env=env,
                            stdout=subprocess.PIPE, stderr=errf, text=True)
    killer = threading.Timer(limit, proc.kill)
    killer.start()
    rows = []
    try:
        for line in proc.stdout:
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            rows.append(row)
            if live is not None:
                live.write(line)
                live.flush()
            if "query" in row:
                print(f"  {engine} {graph.stem} {row['query']}: {row.get('seconds', 0):.3f} s"
                      f" {row.get('count', row.get('error', ''))}"
                      f"{' (partial)' if row.get('partial') else ''}", file=sys.stderr,
                      flush=True)
        proc.wait()
        errf.seek(0)
        err = errf.read()
    finally:
        killer.cancel()
        errf.close()
        if live is not None:
            live.close()
    if proc.returncode != 0:
        rows.append({"error": f"child exited {proc.returncode}: {err[-400:]}"})
    return rows


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def answered(r: dict, first: int) -> bool:
    """A query row answered: its count finished, or (``first`` > 0) reached ``first``."""
    return "error" not in r and "count" in r and (
        r.get("partial") is None or (first > 0 and r["count"] >= first))


def summarize(graph: str, engine: str, rows: list[dict], first: int) -> dict:
    qs = [r for r in rows if "query" in r]
    ok = [r for r in qs if answered(r, first)]
    lat = [r["seconds"] for r in qs if "error" not in r]
    out = {"graph": graph, "engine": engine, "queries": len(qs), "solved": len(ok),
           "median_s": _pct(lat, 50), "p99_s": _pct(lat, 99),
           "mean_s": float(np.mean(lat)) if lat else float("nan"),
           "median_compile_s": _pct([r.get("compile_s") or 0.0 for r in qs], 50),
           "generic": sum(1 for r in qs if r.get("module") == "generic"),
           "errors": [r["error"] for r in rows if "error" in r][:3]}
    warm = [r["warm_s"] for r in qs if "warm_s" in r]
    if warm:
        out["median_warm_s"] = _pct(warm, 50)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--graphs", default="yeast,hprd,human")
    ap.add_argument("--sizes", default="16,24,32")
    ap.add_argument("--densities", default="dense,sparse")
    ap.add_argument("--per-set", type=int, default=3, help="queries per (size, density) set")
    ap.add_argument("--with-twins", action="store_true",
                    help="only queries with twins (to measure cpu-notwins against cpu)")
    ap.add_argument("--with-table", action="store_true",
                    help="only queries whose plans end with leaves counted from a table "
                         "(to measure *-notable against the engine)")
    ap.add_argument("--engines", default="gpu-auto,gpu-specialised,cpu")
    ap.add_argument("--first", type=int, default=100_000,
                    help="a query is answered at its first FIRST embeddings (default 10^5)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per query")
    ap.add_argument("--only", default=None,
                    help="comma-separated query names (e.g. dense_12_5,sparse_16_8): of the "
                         "sets chosen, run these alone (a rerun of a previous run's misses)")
    ap.add_argument("--out", default=None, help="folder for labeled.json")
    ap.add_argument("--background-compile", action="store_true",
                    help="gpu-auto also compiles specialised modules in the background")
    ap.add_argument("--sampled", type=int, default=0,
                    help="also N queries sampled from each graph by random walks (0)")
    ap.add_argument("--sampled-size", type=int, default=12,
                    help="vertices of a sampled query (12, as gMatch's random sets)")
    args = ap.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    bad = [e for e in engines if e not in ENGINES]
    if bad:
        raise SystemExit(f"--engines: unknown {bad}; choose from {', '.join(ENGINES)}")
    sizes = [int(x) for x in args.sizes.split(",")]
    dens = [x.strip() for x in args.densities.split(",")]
    results, table = {}, []
    with tempfile.TemporaryDirectory(prefix="wm-labeled-") as tmp:
        work = Path(tmp)
        for gname in [x.strip() for x in args.graphs.split(",") if x.strip()]:
            gpath = DATA / "labeled" / gname / f"{gname}.graph"
            if not gpath.is_file():
                print(f"{gname}: {gpath} not found (set WARPMATCH_DATA)", file=sys.stderr)
                continue
            queries = query_files(gname, sizes, dens, args.per_set, args.with_twins,
                                  args.with_table)
            if args.only:
                only = {f"query_{x.strip().removeprefix('query_')}.graph"
                        for x in args.only.split(",") if x.strip()}
                queries = [p for p in queries if p.name in only]
            if args.sampled > 0:
                queries += sampled_queries(gpath, args.sampled, args.sampled_size, work)
            per = {}
            for eng in engines:
                t = time.perf_counter()
                rows = run_engine(eng, gpath, queries, args, work)
                per[eng] = rows
                s = summarize(gname, eng, rows, args.first)
                table.append(s)
                print(f"[{gname}] {eng}: {s['solved']}/{s['queries']} answered, median "
                      f"{s['median_s']:.3f} s, p99 {s['p99_s']:.3f} s "
                      f"({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
            # counts agree where both answered (a count cut by --first as min(count, FIRST))
            mism = []
            byq: dict[str, dict[str, int]] = {}
            cap = args.first if args.first > 0 else None
            for eng, rows in per.items():
                for r in rows:
                    if answered(r, args.first):
                        byq.setdefault(r["query"], {})[eng] = (r["count"] if cap is None
                                                               else min(r["count"], cap))
            for qn, c in byq.items():
                if len(set(c.values())) > 1:
                    mism.append((qn, c))
            results[gname] = {"rows": per, "mismatches": mism}
            if mism:
                print(f"[{gname}] COUNT MISMATCH: {mism[:5]}", file=sys.stderr)
            if args.out:                    # after every graph: a run cut short keeps them
                Path(args.out).mkdir(parents=True, exist_ok=True)
                (Path(args.out) / "labeled.json").write_text(json.dumps(
                    {"args": vars(args), "table": table, "results": results}, indent=1))
    what = (f"first {args.first:,} embeddings" if args.first > 0 else "the full count")
    print(f"\n# {what} per query, limit {args.time_limit:g} s; "
          "latency = a new query's count_result, compilation included")
    print("| graph | engine | answered | median s | p99 s | median compile s | "
          "generic module | specialised search alone (median s) |")
    print("|:--|:--|--:|--:|--:|--:|--:|--:|")
    for s in table:
        warm = f"{s['median_warm_s']:.3f}" if "median_warm_s" in s else ""
        print(f"| {s['graph']} | {s['engine']} | {s['solved']}/{s['queries']} | "
              f"{s['median_s']:.3f} | {s['p99_s']:.3f} | {s['median_compile_s']:.3f} | "
              f"{s['generic']} | {warm} |")
    print("\n| graph | set | engine | answered | mean s | p99 s |")
    print("|:--|:--|:--|--:|--:|--:|")
    for gname, res in results.items():
        for eng, rows in res["rows"].items():
            sets: dict[str, list[dict]] = {}
            for r in rows:
                if "query" in r:
                    sets.setdefault(query_set(r["query"]), []).append(r)
            for name, rs in sets.items():
                lat = [r["seconds"] for r in rs if "error" not in r]
                mean = float(np.mean(lat)) if lat else float("nan")
                print(f"| {gname} | {name} | {eng} | "
                      f"{sum(answered(r, args.first) for r in rs)}/{len(rs)} | "
                      f"{mean:.3f} | {_pct(lat, 99):.3f} |")
    bad = sum(len(r["mismatches"]) for r in results.values())
    print(f"count check: {'every answered query agrees' if not bad else f'{bad} MISMATCHES'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
