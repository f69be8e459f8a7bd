#!/usr/bin/env python3
"""Counting on a Dask cluster: the direct call vs clusters of 1, 2, ... workers, same graph
and queries (issues 19 and 20).

Builds a power-law graph of about ``--edges`` edges: R-MAT (``--graph rmat``, the default,
``warpmatch.graph.generators.rmat``) or Chung-Lu generated on the GPU (``--graph chung-lu``,
``bench/gpu.py``'s ``power_law_gpu``: the graph of the GPU benchmarks). It is written as a
``.wmg`` file that the workers memory-map. Each pattern is counted with
``wm.count_result(g, q, backend=B)`` in this process (the direct call), then with
``client=`` on a local cluster of each size in ``--workers``: CPU worker processes (each with
the host's cores divided among the workers, ``warpmatch.distributed``), or with ``--gpu`` one
``dask_cuda.LocalCUDACluster`` worker per GPU (GPUs ``0..n-1``). Every count is checked equal
to the direct one.

Times are wall-clock seconds of the whole ``count_result`` call (planning included, and for a
cluster checking its workers, cutting the shards and shipping the plan), the median of
``--repeats`` runs. Excluded: cluster start-up, each worker's first load of the graph (a
warm-up count), and with ``--gpu`` NVRTC compilation (every module the direct call and the
shards will load is compiled ahead, in parallel processes, into CuPy's on-disk cache that
all workers read). A pattern whose direct count passes ``--time-limit`` is reported as such
and not run on the clusters.

Prints a markdown table: seconds of each, ``N/1`` = 1-worker time / N-worker time (the
speed-up of more workers), ``1w/direct`` = 1-worker time / direct time (the overhead of going
through Dask), ``slowest`` = the largest share of the search seconds that one worker of
the largest cluster spent (``1/N`` is perfect balance), and its ``lead / tail``: seconds from
the call's start to its first shard's (planning, cutting, shipping, scheduling), and how long
the first worker out of shards waited for the last shard to end (from the shards' wall-clock
times). Every number also goes to ``--json``.

Examples
--------
    python bench/distributed.py                                  # 10^7 edges, CPU, 1 and 2 workers
    python bench/distributed.py --edges 1e6 --patterns diamond,square --repeats 3
    python bench/distributed.py --gpu --graph chung-lu --edges 1e8 --workers 1,2,4 \\
        --patterns triangle,square,stmatch24 --time-limit 60    # a host with 4 GPUs
    python bench/distributed.py --gpu --graph chung-lu --edges 1e8 --workers 1,4 \\
        --patterns square --variants 4:64,4:32x2   # and 4 GPUs with 64 shards, 2 threads each
    python bench/distributed.py --gpu --graph chung-lu --edges 1e8 --workers 1,4 \\
        --patterns stmatch:20 --variants 1:32d4,4:32d4   # and 4 hubs per group (8 default)
    python bench/distributed.py --edges 1e6 --patterns diamond --partitions 4 \\
        --partition-patterns diamond,square          # also by 4 parts, on 1 and 2 workers

With ``--partitions P`` the ``--partition-patterns`` are counted again by P parts (a partition
directory in ``--work-dir``; the workers map its part files): in this process, then on each
cluster, where every part's search and every inter-partition search is cut into shards, all in
flight at once. Their table checks the counts against the in-memory direct count too.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

# this file is named like Dask's package: with its folder first on sys.path (as a script's
# folder is), ``import distributed`` here and in every worker process would find it instead
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def _sibling_load(name: str):
    """``bench/<name>.py`` through ``bench/_sibling.py``, both read by path: this folder
    is off ``sys.path`` (above), and Dask's worker processes, which re-run this file's
    top level, could not import ``_sibling`` by name either."""
    import importlib.util
    mod = sys.modules.get("_sibling")
    if mod is None:
        spec = importlib.util.spec_from_file_location("_sibling", HERE / "_sibling.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["_sibling"] = mod
    return mod.load(name)


PATTERNS = "diamond,4-clique,square,house"
DATA = Path(os.environ.get("WARPMATCH_DATA", Path(__file__).resolve().parents[1] / ".." /
                           "shared" / "data"))


class _Stopped(Exception):
    pass


def queries(spec: str) -> list:
    """``(name, Query)`` for each comma-separated name; ``stmatch24`` stands for STMatch's
    24 patterns (``$WARPMATCH_DATA/patterns/stmatch24.txt``), ``stmatch:A-B`` for its
    patterns A to B (``stmatch:5`` for one)."""
    from warpmatch.query import get_pattern
    from warpmatch.query.patterns import read_pattern_collection
    out = []
    for name in (p.strip() for p in spec.split(",") if p.strip()):
        if name == "stmatch24" or name.startswith("stmatch:"):
            st = read_pattern_collection(DATA / "patterns" / "stmatch24.txt")
            lo, _, hi = (name.partition(":")[2] or f"1-{len(st)}").partition("-")
            out += [(q.name, q) for q in st[int(lo) - 1:int(hi or lo)]]
        else:
            out.append((name, get_pattern(name)))
    return out


def build_graph(args):
    """The benchmark graph, written to a .wmg file and read back memory-mapped (with
    ``--work-dir``, a file written there by an earlier run with the same size and seed is
    reused)."""
    import warpmatch as wm
    t0 = time.perf_counter()
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="wm-dist-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.graph == "chung-lu":
        name = f"cl{args.edges:.0e}-s{args.seed}"
    else:
        scale = max(4, int(round(math.log2(max(16.0, args.edges / 16)))))
        name = f"rmat{scale}-s{args.seed}"
    path = work / f"{name}.wmg"
    if not path.exists():
        if args.graph == "chung-lu":
            g0 = _sibling_load("gpu").power_law_gpu(int(args.edges), seed=args.seed,
                                                    name=name)
        else:
            from warpmatch.graph.generators import rmat
            g0 = rmat(scale, 16, seed=args.seed, name=name)
        wm.write_graph(g0, path)
        del g0
    g = wm.read_graph(path)                          # memory-mapped: workers map the file
    return g, time.perf_counter() - t0


def partition_dir(args, g) -> tuple[object, dict]:
    """The graph cut into ``--partitions`` parts, as a partition directory in the work dir
    (reused when an earlier run wrote it for this graph), opened once (as the graph is
    read once): the workers map its part files."""
    from warpmatch.partition import Partitioned
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="wm-dist-bench-"))
    d = work / f"{g.name}-p{args.partitions}-{args.partition_method}"
    t0 = time.perf_counter()
    try:
        pg = Partitioned.open(d, graph=g)
    except Exception:               # noqa: BLE001 - absent or stale: cut it again
        import shutil
        shutil.rmtree(d, ignore_errors=True)
        Partitioned.build(g, parts=args.partitions, method=args.partition_method).write(d)
        pg = Partitioned.open(d)
    info = {"parts": pg.parts, "method": pg.method, "cut_edges": int(pg.cut_edges),
            "seconds": round(time.perf_counter() - t0, 1)}
    print(f"# partitions: {info}", file=sys.stderr, flush=True)
    return pg, info


def precompile_gpu(g, pats: list, shard_counts: list[int]) -> None:
    """Compile every module the direct count and the clusters' shards will load."""
    from warpmatch.distributed.shards import make_shards, shard_plan
    from warpmatch.engine.gpu import GpuEngine
    from warpmatch.plan import build_plan
    eng = GpuEngine()
    runs = []
    for _, q in pats:
        plan = build_plan(g, q, mode="embeddings", purpose="count")
        runs.append((eng, plan, False))
        for n in shard_counts:
            seen = set()
            for s in make_shards(g, plan, n):
                kind = s.depth1 is not None       # the module depends on which sets are cut
                if kind not in seen:
                    seen.add(kind)
                    runs.append((eng, shard_plan(plan, s), False))
    from warpmatch.engine.gpu.engine import module_source
    from warpmatch.engine.gpu.precompile import precompile
    t = time.perf_counter()
    n = precompile(module_source(eng, plan, lm) for eng, plan, lm in runs)
    print(f"# {n} modules compiled ahead in {time.perf_counter() - t:.1f} s",
          file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=float, default=1e7, help="about this many edges (1e7)")
    ap.add_argument("--graph", choices=("rmat", "chung-lu"), default="rmat",
                    help="R-MAT on the CPU, or Chung-Lu on the GPU (rmat)")
    ap.add_argument("--patterns", default=PATTERNS,
                    help=f"comma-separated; stmatch24 adds STMatch's 24, stmatch:A-B some ({PATTERNS})")
    ap.add_argument("--workers", default="1,2", help="cluster sizes, comma-separated (1,2)")
    ap.add_argument("--gpu", action="store_true",
                    help="one dask-cuda worker per GPU; the gpu engine here and there")
    ap.add_argument("--backend", default=None, help="engine (cpu; gpu with --gpu)")
    ap.add_argument("--shards-per-worker", type=int, default=None,
                    help="shards per worker (warpmatch's default: 8, at least 32 in all)")
    ap.add_argument("--variants", default="",
                    help="more cluster runs of the same patterns, each N:S[xT][dD] (N workers, "
                         "S shards, T threads per worker; with --gpu and T > 1 CuPy's "
                         "per-thread default stream, so a worker's T shards share its GPU; D "
                         "hubs per hub group, make_shards' deal, 0: none): "
                         "e.g. 4:32,4:64,4:32x2,1:32d8,4:32d8 (none)")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs per cell (median)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds for a direct count; a pattern past it is not run on clusters")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work-dir", default=None, help="where the .wmg goes (a temporary dir)")
    ap.add_argument("--stream-patterns", default="",
                    help="continuous matching of these patterns (none)")
    ap.add_argument("--stream-updates", type=float, default=1e5,
                    help="updates of the stream (make_stream, 2 insertions per deletion)")
    ap.add_argument("--batch-size", type=int, default=4096, help="stream batch size (4096)")
    ap.add_argument("--partitions", type=int, default=0,
                    help="also count --partition-patterns by P parts: one GPU/process vs the "
                         "clusters, each part and inter-partition search a set of shards (0)")
    ap.add_argument("--partition-method", choices=("auto", "metis", "bfs"), default="auto",
                    help="how the parts are cut (auto: METIS where pymetis is installed)")
    ap.add_argument("--partition-patterns", default="square,diamond",
                    help="patterns counted by partitions (square,diamond)")
    ap.add_argument("--json", default=None, help="write every number here")
    args = ap.parse_args(argv)
    # the workers map the .wmg and search its own ids (a memory-mapped graph keeps them on a
    # cluster: _strategies.count_on_cluster), so the direct count must search the same ids
    # for the speedups to compare like with like; the degree order's own gain is measured
    # by bench/gmatch_peer.py
    os.environ["WARPMATCH_VERTEX_ORDER"] = "given"
    backend = args.backend or ("gpu" if args.gpu else "cpu")
    sizes = sorted({int(x) for x in args.workers.split(",") if x.strip()} | {1})
    variants = [_variant(v) for v in args.variants.split(",") if v.strip()]

    import logging

    import warpmatch as wm
    from warpmatch.distributed import local_cluster
    from warpmatch.distributed.shards import default_shards
    logging.getLogger("distributed").setLevel(logging.ERROR)
    def nshards(n: int) -> int:        # the library's default unless --shards-per-worker
        return args.shards_per_worker * n if args.shards_per_worker else default_shards(n)

    g, gen_s = build_graph(args)
    res: dict = {"argv": sys.argv, "cores": os.cpu_count(), "backend": backend,
                 "graph": {"name": g.name, "vertices": g.n, "edges": g.num_edges,
                           "max_degree": g.max_degree, "build_s": round(gen_s, 1)},
                 "direct": {}, "clusters": {}, "part_direct": {}, "part_clusters": {}}
    if args.gpu:
        import cupy as cp
        props = cp.cuda.runtime.getDeviceProperties(0)
        res["device"] = f"{cp.cuda.runtime.getDeviceCount()} x {props['name'].decode()}"
    print(f"# graph {g.name}: {g.n:,} vertices, {g.num_edges:,} edges, max degree "
          f"{g.max_degree:,} ({gen_s:.1f} s to build); backend {backend}; "
          f"{os.cpu_count()} cores; {res.get('device', 'no GPU')}", file=sys.stderr, flush=True)
    pats = queries(args.patterns)

    def save() -> None:
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=1, default=str))

    def stop(signum, frame):        # `timeout` sends SIGTERM: print what was measured
        raise _Stopped(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)

    def timed(fn) -> dict:
        # the whole call: planning, and for a cluster checking the workers and shipping
        # the plan, are part of what a user waits for
        r, secs = None, []
        for _ in range(max(1, args.repeats)):
            t, wall = time.perf_counter(), time.time()
            r = fn()
            secs.append(time.perf_counter() - t)
            if r.partial:
                break
        d = r.distributed or {}
        ws = d.get("worker_seconds") or {}
        ss = d.get("shard_stats") or []
        return {"count": int(r.count), "s": statistics.median(secs), "partial": r.partial,
                # the last call's timeline (the shard stats are that call's)
                **timeline(ss, wall, wall + secs[-1]),
                "shards": d.get("shards"), "engine": r.backend,
                "slowest": (max(ws.values()) / sum(ws.values())) if ws and
                sum(ws.values()) > 0 else None,
                "prepare_s": d.get("prepare_seconds"),
                # where a cluster's time goes: the sums over shards, and each shard
                "setup_s": sum(x.get("setup_s", 0.0) for x in ss),
                "count_s": sum(x.get("count_s", 0.0) for x in ss),
                "max_shard_s": max((x.get("count_s", 0.0) for x in ss), default=None),
                "shard_stats": ss, "plan_s": r.plan_seconds,
                # by partitions: each search's shards and seconds, the parts' numbers
                "run_s": d.get("run_seconds"), "per_search": d.get("per_search"),
                "partition": r.partition}

    def brief(r: dict) -> dict:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()
                if k not in ("shard_stats", "per_search")}

    def count_on(client, graph, plist: list, direct: dict, shards: int, tag: str,
                 into: dict) -> None:
        # each pattern whose direct count finished, timed on the cluster into ``into``
        for name, q in plist:
            if direct[name]["partial"]:
                continue
            into[name] = timed(lambda: wm.count_result(
                graph, q, backend=backend, client=client, shards=shards))
            print(f"# {tag} {name}: {brief(into[name])}", file=sys.stderr, flush=True)
            save()

    spats = queries(args.stream_patterns) if args.stream_patterns else []
    ppats = queries(args.partition_patterns) if args.partitions else []
    parted = None
    try:
        if spats:
            bench_stream(args, g, spats, sizes, backend, res, save)
        if args.gpu and pats:
            precompile_gpu(g, pats, sorted({nshards(n) for n in sizes} | {v[1] for v in variants}))
        wm.count(g, "triangle", backend=backend)    # load the graph and kernels here
        for name, q in pats:
            res["direct"][name] = timed(lambda: wm.count_result(
                g, q, backend=backend, time_limit=args.time_limit))
            print(f"# direct {name}: {brief(res['direct'][name])}", file=sys.stderr, flush=True)
            save()
        if ppats:
            parted, info = partition_dir(args, g)
            res["partition"] = info
            for name, q in ppats:
                # untimed first: its NVRTC modules compile into the cache the workers read
                wm.count_result(parted, q, backend=backend, time_limit=args.time_limit)
                res["part_direct"][name] = timed(lambda: wm.count_result(
                    parted, q, backend=backend, time_limit=args.time_limit))
                print(f"# direct by {args.partitions} parts {name}: "
                      f"{brief(res['part_direct'][name])}", file=sys.stderr, flush=True)
                save()
        if args.gpu:
            import cupy as cp
            cp.get_default_memory_pool().free_all_blocks()   # GPU 0 is a worker's too
        for n in sizes if (pats or ppats) else []:
            t = time.perf_counter()
            kw = {"gpu": True} if args.gpu else {}
            with local_cluster(workers=n, silence_logs=logging.ERROR, **kw) as client:
                wm.count(g, "triangle", backend=backend, client=client)   # warm-up
                print(f"# cluster of {n} started and warm in {time.perf_counter() - t:.1f} s"
                      f" ({client.dashboard_link})", file=sys.stderr, flush=True)
                res["clusters"][n] = {}
                count_on(client, g, pats, res["direct"], nshards(n), f"{n} worker(s)",
                         res["clusters"][n])
                res["part_clusters"][n] = {}
                if ppats:       # each worker maps the part files once, as the graph above
                    wm.count(parted, "triangle", backend=backend, client=client)
                count_on(client, parted, ppats, res["part_direct"], nshards(n),
                         f"{n} worker(s) by parts", res["part_clusters"][n])
                client.cluster.close()
        res["variants"] = {}
        for n, shards, threads, deal in variants if pats else []:
            label = f"{n}:{shards}x{threads}" + ("" if deal is None else f"d{deal}")
            res["variants"][label] = {}
            with _deal(deal):
                run_variant(args, g, n, threads, backend,
                            lambda client: count_on(client, g, pats, res["direct"], shards,
                                                    f"variant {label}",
                                                    res["variants"][label]))
    except (_Stopped, KeyboardInterrupt) as exc:
        print(f"# stopped early ({exc or 'interrupt'}): the table holds what finished",
              file=sys.stderr, flush=True)
        res["stopped_early"] = True
    save()
    bad = print_table(res, [n for n, _ in pats], sizes) if pats else 0
    if res.get("variants"):
        bad |= print_variants(res, [n for n, _ in pats])
    if ppats:
        bad |= print_table(res, [n for n, _ in ppats], sizes, "part_direct", "part_clusters",
                           reference=res["direct"])
    if spats:
        bad |= print_stream_table(res, [n for n, _ in spats], sizes)
    return bad


def bench_stream(args, g, spats: list, sizes: list[int], backend: str, res: dict,
                 save) -> None:
    """Continuous matching (counts only) of a make_stream stream of ``g``: the direct
    matcher vs ``ContinuousMatcher(client=)`` on each cluster size; every update's counts
    checked equal to the direct matcher's; time = all batches (building the matchers excluded, reported apart)."""
    import logging

    import numpy as np

    import warpmatch as wm
    from warpmatch.distributed import local_cluster
    t = time.perf_counter()
    f_ins = (2.0 / 3.0) * args.stream_updates / max(1, g.num_edges)
    g0, ups = wm.make_stream(g, insert_fraction=f_ins, delete_fraction=f_ins / 2,
                             seed=args.seed)
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="wm-dist-bench-"))
    path = work / f"{g.name}-g0-{len(ups)}.wmg"
    wm.write_graph(g0, path)
    g0 = wm.read_graph(path)
    res["stream"] = {"updates": len(ups), "batch_size": args.batch_size,
                     "build_s": round(time.perf_counter() - t, 1), "direct": {},
                     "clusters": {}}
    print(f"# stream: {len(ups):,} updates ({time.perf_counter() - t:.1f} s to make)",
          file=sys.stderr, flush=True)

    direct_counts: dict = {}         # per-update (plus, minus) of the direct matcher

    def run(make, name: str) -> dict:
        t0 = time.perf_counter()
        cm = make()
        t1 = time.perf_counter()
        plus, minus = [], []
        for d in cm.apply_batches(ups, args.batch_size, counts_only=True):
            plus.append(d.plus_counts)
            minus.append(d.minus_counts)
        t2 = time.perf_counter()
        if hasattr(cm, "close"):
            cm.close()
        p, m = np.concatenate(plus), np.concatenate(minus)
        want = direct_counts.setdefault(name, (p, m))     # (the first run is the direct one)
        return {"setup_s": t1 - t0, "s": t2 - t1, "ups": len(ups) / max(t2 - t1, 1e-9),
                "added": int(p.sum()), "removed": int(m.sum()),
                "equal": bool(np.array_equal(p, want[0]) and np.array_equal(m, want[1])),
                "backend": cm.backend}

    # the kernels of each query are compiled (or loaded) here, by a throw-away matcher on
    # the same G0 that applies the stream's first batch, so that the direct run does not
    # pay for them (the workers then load them from the on-disk cache). A small stand-in
    # graph does not do: large batches on a large graph take other code paths (parallel
    # task lists, read-only memory maps), whose numba specialisations took 29 s on a
    # 2-core host inside the direct run.
    for _, q in spats:
        wm.ContinuousMatcher(g0, q, backend=backend, count_initial=False).apply(
            ups.slice(0, args.batch_size), counts_only=True)
    for name, q in spats:
        res["stream"]["direct"][name] = run(lambda: wm.ContinuousMatcher(
            g0, q, backend=backend, count_initial=False), name)
        print(f"# stream direct {name}: {res['stream']['direct'][name]}", file=sys.stderr,
              flush=True)
        save()
    if args.gpu:
        import cupy as cp
        cp.get_default_memory_pool().free_all_blocks()
    for n in sizes:
        kw = {"gpu": True} if args.gpu else {}
        with local_cluster(workers=n, silence_logs=logging.ERROR, **kw) as client:
            res["stream"]["clusters"][n] = {}
            for name, q in spats:
                r = run(lambda: wm.ContinuousMatcher(g0, q, backend=backend,
                                                     count_initial=False, client=client), name)
                res["stream"]["clusters"][n][name] = r
                print(f"# stream {n} worker(s) {name}: {r}", file=sys.stderr, flush=True)
                save()
            client.cluster.close()


def timeline(ss: list[dict], call_start: float, call_end: float) -> dict:
    """Where a cluster call's wall time went, from its shards' ``start``/``end``: before
    the first shard started (``lead_s``: planning, cutting, shipping, scheduling), the
    workers' idle time at the end (``tail_s``: the first worker to run out of shards
    waited this long for the last), and after the last shard (``drain_s``). Empty
    without shards or times (the direct call)."""
    ss = [x for x in ss if "start" in x and "end" in x]
    if not ss:
        return {}
    last: dict[str, float] = {}
    for x in ss:
        last[x["worker"]] = max(last.get(x["worker"], 0.0), x["end"])
    end = max(last.values())
    return {"lead_s": min(x["start"] for x in ss) - call_start,
            "tail_s": end - min(last.values()), "drain_s": call_end - end}


def _variant(text: str) -> tuple[int, int, int, int | None]:
    """``"N:S[xT][dD]"`` as ``(workers, shards, threads per worker, hubs per group or
    None)``."""
    try:
        n, rest = text.strip().split(":")
        rest, _, deal = rest.partition("d")
        shards, _, threads = rest.partition("x")
        out = (int(n), int(shards), int(threads or 1))
        hubs = int(deal) if deal else None
    except ValueError:
        raise SystemExit(f"--variants: {text!r} is not N:S[xT][dD] (e.g. 4:32x2, 4:32d8)") \
            from None
    if min(out) < 1 or (hubs is not None and hubs < 0):
        raise SystemExit(f"--variants: {text!r}: every number must be at least 1 (D: 0)")
    return (*out, hubs)


@contextlib.contextmanager
def _deal(hubs: int | None):
    """``make_shards``' default hubs per group set to ``hubs`` meanwhile (the cut runs
    in this process, the client); ``None`` leaves it."""
    from warpmatch.distributed import shards
    old = shards.DEAL_ROUNDS
    if hubs is not None:
        shards.DEAL_ROUNDS = hubs
    try:
        yield
    finally:
        shards.DEAL_ROUNDS = old


def run_variant(args, g, n: int, threads: int, backend: str, run) -> None:
    """``run(client)`` on a warm cluster of ``n`` workers of ``threads`` threads each."""
    import logging

    import warpmatch as wm
    from warpmatch.distributed import local_cluster
    kw: dict = {"gpu": True} if args.gpu else {}
    if threads > 1:
        kw["threads_per_worker"] = threads
    # a worker's threads each run a shard on CuPy's default stream: per thread, or the
    # legacy stream would serialize them (the workers inherit the variable when spawned)
    old = os.environ.get("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM")
    if args.gpu and threads > 1:
        os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"
    try:
        t = time.perf_counter()
        with local_cluster(workers=n, silence_logs=logging.ERROR, **kw) as client:
            wm.count(g, "triangle", backend=backend, client=client)   # warm-up
            print(f"# cluster of {n} x {threads} threads started and warm in "
                  f"{time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
            run(client)
            client.cluster.close()
    finally:
        if old is None:
            os.environ.pop("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", None)
        else:
            os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = old


def print_variants(res: dict, names: list[str]) -> int:
    """Seconds of each ``--variants`` run and its speed-up over the default 1-worker run;
    1 if any count differs from the direct one."""
    labels = list(res["variants"])
    head = ["pattern", "1w s"] + [f"{v} s" for v in labels] + [f"1w/{v}" for v in labels] + \
        ["check"]
    print("\nvariants (N:SxT[dD] = N workers, S shards, T threads per worker, D hubs per "
          "hub group)")
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    bad = 0
    for name in names:
        one = res["clusters"].get(1, {}).get(name)
        cells = [res["variants"][v].get(name) for v in labels]
        if all(c is None for c in cells):
            continue
        ok = all(c is None or c["count"] == res["direct"][name]["count"] for c in cells)
        bad += not ok
        t1 = one["s"] if one else None
        row = [name, f"{t1:.3f}" if t1 else "-"] + [f"{c['s']:.3f}" if c else "-" for c in cells]
        row += [f"{t1 / c['s']:.2f}x" if c and t1 else "-" for c in cells]
        row.append("ok" if ok else "MISMATCH")
        print("| " + " | ".join(row) + " |")
    return 1 if bad else 0


def print_stream_table(res: dict, names: list[str], sizes: list[int]) -> int:
    """The continuous-matching table; 1 if any per-update count differs."""
    st = res.get("stream") or {}
    head = ["pattern", "updates", "+", "-", "direct upd/s"] + \
        [f"{n}w upd/s" for n in sizes] + [f"{n}/1" for n in sizes if n > 1] + \
        ["1w/direct", "replica setup s", "check"]
    print(f"\ncontinuous, counts only, batch {st.get('batch_size')}; backend {res['backend']}")
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    bad = 0
    for name in names:
        d = st.get("direct", {}).get(name)
        if d is None:
            continue
        cells = [st.get("clusters", {}).get(n, {}).get(name) for n in sizes]
        ok = all(c is None or c["equal"] for c in cells)
        bad += not ok
        u1 = cells[0]["ups"] if cells[0] else None
        row = [name, f"{st['updates']:,}", f"{d['added']:,}", f"{d['removed']:,}",
               f"{d['ups']:,.0f}"] + [f"{c['ups']:,.0f}" if c else "-" for c in cells]
        row += [f"{c['ups'] / u1:.2f}x" if c and u1 else "-"
                for n, c in zip(sizes, cells) if n > 1]
        row.append(f"{d['ups'] / u1:.2f}" if u1 else "-")
        row.append(f"{cells[-1]['setup_s']:.1f}" if cells[-1] else "-")
        row.append("ok" if ok else "MISMATCH")
        print("| " + " | ".join(row) + " |")
    return 1 if bad else 0


def print_table(res: dict, names: list[str], sizes: list[int], direct: str = "direct",
                clusters: str = "clusters", reference: dict | None = None) -> int:
    """The markdown table; 1 if any count differs from the direct one (or, by partitions,
    from the in-memory direct count in ``reference`` where it finished)."""
    big = max(sizes)
    head = ["pattern", "count", "direct s"] + [f"{n}w s" for n in sizes] + \
        [f"{n}/1" for n in sizes if n > 1] + ["1w/direct", f"slowest of {big}",
                                              f"lead / tail s of {big}", "check"]
    print(f"\n{res['graph']}; backend {res['backend']}; {res.get('device', '')} "
          f"{res['cores']} cores")
    if direct != "direct":
        print(f"by partitions: {res.get('partition')}")
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    bad = 0
    for name in names:
        d = res[direct].get(name)
        if d is None:
            continue
        cells = [res[clusters].get(n, {}).get(name) for n in sizes]
        if d["partial"]:
            print(f"| {name} | >={d['count']:,} | >{d['s']:.1f} (limit) |" +
                  " - |" * (len(head) - 3))
            continue
        ok = all(c is None or c["count"] == d["count"] for c in cells)
        ref = (reference or {}).get(name)
        if ref is not None and not ref["partial"]:
            ok = ok and ref["count"] == d["count"]
        bad += not ok
        t1 = cells[0]["s"] if cells[0] else None
        row = [name, f"{d['count']:,}", f"{d['s']:.3f}"]
        row += [f"{c['s']:.3f}" if c else "-" for c in cells]
        row += [f"{t1 / c['s']:.2f}x" if c and t1 else "-"
                for n, c in zip(sizes, cells) if n > 1]
        row.append(f"{t1 / d['s']:.2f}" if t1 else "-")
        sl = cells[-1]["slowest"] if cells[-1] else None
        row.append(f"{sl:.2f}" if sl is not None else "-")
        c = cells[-1] or {}
        row.append(f"{c['lead_s']:.2f} / {c['tail_s']:.2f}" if "lead_s" in c else "-")
        row.append("ok" if ok else "MISMATCH")
        print("| " + " | ".join(row) + " |")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
