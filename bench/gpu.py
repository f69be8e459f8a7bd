"""GPU engine benchmark (issue 3): gMatch's fine-grained model vs the cpu engine and vs
the coarse-grained model, on power-law graphs generated on the device and on the
standard labeled datasets.

Sections (each optional):

``--edges 1e7,1e8``
    Chung-Lu power-law graphs (weights ``(i + 100) ** -2/3``, i.e. degree
    exponent 2.5, average degree 16) generated and deduplicated on the GPU;
    the unlabeled benchmark set (triangle, square, diamond, 4-clique,
    tailed-triangle, 5-cycle, house, 5-clique; plus STMatch's 24 patterns on
    the graphs listed by ``--stmatch-on``) counted as embeddings. Per
    pattern: GPU fine+batch time, fine (no batch), coarse, cpu engine (all
    cores, a separate process killed at ``--cpu-time``), ratios, and the
    idle-lane rate (gMatch 2.3) of fine+batch and coarse (``--profile-on``).
``--hub DEGREE``
    A power-law graph plus one vertex of that degree; the small patterns with
    the fine model, reporting the execution stack's memory.
``--labeled-per-set N``
    N queries (sampled with a fixed seed) of each of yeast/human/hprd ×
    16/24/32 vertices × dense/sparse, each stopped at its first
    ``--label-limit`` embeddings or at ``--label-time`` seconds.

Times exclude NVRTC compilation (reported apart) and the graph's upload.
Prints a table last and writes every number to ``--out/gpu_bench.json``.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SMALL = ["triangle", "square", "diamond", "4-clique", "tailed-triangle", "5-cycle", "house",
         "5-clique"]
DATA = Path(os.environ.get("WARPMATCH_DATA", Path(__file__).resolve().parents[1] / ".." /
                           "shared" / "data"))


# ----------------------------------------------------------------- graphs
def power_law_gpu(edges: int, seed: int, hub: int = 0, name: str = "powerlaw",
                  communities: int = 0, p_in: float = 0.95):
    """A deduplicated undirected Chung-Lu graph built on the GPU, as a warpmatch Graph.

    With ``communities=C`` it has planted partitions: the vertices form ``C``
    blocks of consecutive ids (each a Chung-Lu graph of its own weights), and an
    edge joins two vertices of one block with probability ``p_in``, two vertices
    drawn from the whole graph otherwise.
    """
    import cupy as cp
    from warpmatch.graph.csr import Graph
    n = max(16, edges // 8)
    rs = cp.random.RandomState(seed)
    draw = int(edges * 1.08)
    if communities:
        block = -(-n // communities)
        n = block * communities
        # weights repeat per block: a block is a small power-law graph
        w = (np.arange(block, dtype=np.float64) + 100.0) ** (-2.0 / 3.0)
        cdf_h = np.cumsum(w)
        cdf = cp.asarray(cdf_h / cdf_h[-1])
        base = rs.randint(0, communities, draw).astype(cp.int64) * block
        u = base + cp.searchsorted(cdf, rs.random_sample(draw)).astype(cp.int64)
        inner = rs.random_sample(draw) < p_in
        other = rs.randint(0, communities, draw).astype(cp.int64) * block
        v = cp.where(inner, base, other) + cp.searchsorted(cdf, rs.random_sample(draw))
        del base, inner, other
    else:
        # the CDF on the host: a float scan on the device (CUB's decoupled look-back) may
        # associate differently from run to run, and the graph then differs by a few edges
        w = (np.arange(n, dtype=np.float64) + 100.0) ** (-2.0 / 3.0)
        cdf_h = np.cumsum(w)
        cdf = cp.asarray(cdf_h / cdf_h[-1])
        u = cp.searchsorted(cdf, rs.random_sample(draw)).astype(cp.int64)
        v = cp.searchsorted(cdf, rs.random_sample(draw)).astype(cp.int64)
    keep = u != v
    a, b = cp.minimum(u[keep], v[keep]), cp.maximum(u[keep], v[keep])
    del u, v, keep
    N = n + (1 if hub else 0)
    key = cp.unique(a * N + b)[:edges]
    del a, b
    if hub:   # vertex n joined to `hub` distinct random vertices
        nb = rs.permutation(n)[:hub].astype(cp.int64)
        key = cp.concatenate([key, nb * N + n])
    a, b = key // N, key % N
    del key
    both = cp.concatenate([a * N + b, b * N + a])
    del a, b
    both.sort()
    src = both // N
    dst = (both % N).astype(cp.int32)
    del both
    indptr = cp.searchsorted(src, cp.arange(N + 1, dtype=cp.int64)).astype(cp.int64)
    del src
    g = Graph(n=int(N), indptr=indptr.get(), indices=dst.get(), directed=False, name=name)
    del dst, indptr
    cp.get_default_memory_pool().free_all_blocks()
    return g


def labeled_graph(path: Path):
    """Read a t/v/e labeled graph (warpmatch's reader when present)."""
    from warpmatch.graph.csr import Graph
    try:
        from warpmatch.graph import read_graph
        return read_graph(str(path))
    except ImportError:
        src, dst, labels = [], [], {}
        for line in path.read_text().split("\n"):
            f = line.split()
            if f and f[0] == "v":
                labels[int(f[1])] = int(f[2])
            elif f and f[0] == "e":
                src.append(int(f[1]))
                dst.append(int(f[2]))
        n = max(labels) + 1
        return Graph.from_edges(src, dst, n=n, vertex_labels=[labels[i] for i in range(n)],
                                warn=False, name=path.stem)


def labeled_query(path: Path):
    from warpmatch.query.model import Query
    g = labeled_graph(path)
    s, d = g.edges()
    return Query.from_edges(list(zip(s.tolist(), d.tolist())), k=g.n,
                            vertex_labels=g.vertex_labels.tolist(), name=path.stem)


# ------------------------------------------------------- cpu worker process
def _worker(conn, graph_dir: str) -> None:
    from warpmatch.engine import get_engine
    from warpmatch.graph.csr import Graph
    z = np.load(os.path.join(graph_dir, "g.npz"))
    g = Graph(n=int(z["n"]), indptr=z["indptr"], indices=z["indices"], directed=False,
              vertex_labels=z["vl"] if z["vl"].size else None, name="bench")
    cpu = get_engine("cpu")
    # numba compiles on first use: do it on a tiny graph of the same dtypes (and both
    # the count and the list kernels), so that no pattern's time includes the JIT
    from warpmatch.graph.generators import barabasi_albert
    from warpmatch.plan import build_plan
    from warpmatch.query import get_pattern
    tiny = barabasi_albert(64, 3, seed=1)
    if g.vertex_labels is not None:
        tiny = Graph(n=tiny.n, indptr=tiny.indptr, indices=tiny.indices, directed=False,
                     vertex_labels=np.zeros(tiny.n, np.int32), name="tiny")
    for purpose in ("count", "list"):
        tplan = build_plan(tiny, get_pattern("triangle"), purpose=purpose)
        cpu.count(tiny, tplan) if purpose == "count" else sum(1 for _ in cpu.match(tiny, tplan))
    conn.send("ready")
    while True:
        msg = conn.recv()
        if msg is None:
            return
        kind, plan, limit = msg
        t = time.perf_counter()
        if kind == "count":
            r = cpu.count(g, plan)
        else:
            r = sum(b.shape[0] for b in cpu.match(g, plan, limit=limit))
        conn.send((r, time.perf_counter() - t))


class CpuRunner:
    """The cpu engine in a child process, so a run can be stopped at a time limit."""

    def __init__(self, g) -> None:
        self.dir = tempfile.mkdtemp(prefix="wm_bench_")
        np.savez(os.path.join(self.dir, "g.npz"), n=g.n, indptr=g.indptr, indices=g.indices,
                 vl=g.vertex_labels if g.vertex_labels is not None else np.empty(0, np.int32))
        self.proc = None

    def _start(self) -> None:
        t = time.perf_counter()
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, self.dir), daemon=True)
        self.proc.start()
        if not self.conn.poll(600):
            raise RuntimeError("cpu worker did not start")
        self.conn.recv()
        print(f"# cpu worker ready (graph loaded, JIT warm) in {time.perf_counter() - t:.1f} s",
              flush=True)

    def run(self, kind: str, plan, limit, timeout: float):
        if self.proc is None:
            self._start()
        self.conn.send((kind, plan, limit))
        if self.conn.poll(timeout):
            return self.conn.recv()
        self.proc.kill()
        self.proc.join()
        self.proc = None
        return None

    def close(self) -> None:
        if self.proc is not None:
            self.conn.send(None)
            self.proc.join(10)


# -------------------------------------------------------------- gpu runs
def gpu_run(eng, g, plan, kind: str = "count", limit: int | None = None):
    """(result, seconds without compilation, stats) or (None, limit, stats) on timeout."""
    t = time.perf_counter()
    try:
        if kind == "count":
            r = eng.count(g, plan)
        else:
            r = sum(b.shape[0] for b in eng.match(g, plan, limit=limit))
    except TimeoutError:
        return None, eng.time_limit_s, dict(eng.last_stats)
    except Exception as exc:   # BudgetError for the coarse model on hubs
        return f"{type(exc).__name__}", None, {"error": str(exc)}
    dt = time.perf_counter() - t - eng.last_stats.get("compile_s", 0.0)
    return r, dt, dict(eng.last_stats)


def precompile(runs, what: str) -> None:
    """Compile the modules of ``runs`` ((engine, plan, list_mode) triples) in parallel
    processes before anything is timed (:func:`warpmatch.engine.gpu.precompile.precompile`):
    the modules land in CuPy's on-disk kernel cache, which the engine's own compile
    then reads. Times never include compilation either way (the engine reports it
    apart); this only saves device time."""
    from warpmatch.engine.gpu.engine import module_source
    from warpmatch.engine.gpu.precompile import precompile as compile_all
    srcs = {module_source(eng, plan, lm) for eng, plan, lm in runs}
    if len(srcs) < 2:
        return
    t = time.perf_counter()
    n = compile_all(srcs)
    print(f"# {what}: {n} modules compiled ahead in {time.perf_counter() - t:.1f} s",
          flush=True)


def _fmt_t(x) -> str:
    return "-" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))


def _ratio(a, b) -> str:
    if not isinstance(a, float) or not isinstance(b, float) or a <= 0:
        return "-"
    return f"{b / a:.1f}"


def bench_unlabeled(args, edges: int, rows: list, results: dict) -> None:
    from warpmatch.engine.gpu import GpuEngine
    from warpmatch.plan import build_plan
    from warpmatch.query import get_pattern
    from warpmatch.query.patterns import read_pattern_collection
    t = time.perf_counter()
    g = power_law_gpu(edges, seed=1, name=f"pl{edges:.0e}")
    gen_s = time.perf_counter() - t
    info = {"vertices": g.n, "edges": g.num_edges, "max_degree": g.max_degree, "gen_s": gen_s}
    print(f"# power-law graph {edges:.0e}: {info}", flush=True)
    results[f"graph_{edges:.0e}"] = info
    pats = [(p, get_pattern(p)) for p in (args.patterns.split(",") if args.patterns else SMALL)]
    if edges in args.stmatch_on:
        pats += [(q.name, q) for q in read_pattern_collection(DATA / "patterns" / "stmatch24.txt")]
    T = args.pattern_time
    fine = GpuEngine(time_limit_s=T)
    naive = GpuEngine(batch=False, steal=False, time_limit_s=T)
    coarse = GpuEngine(model="coarse", time_limit_s=T)
    prof_f = GpuEngine(profile=True, time_limit_s=T)
    prof_c = GpuEngine(model="coarse", profile=True, time_limit_s=T)
    cpu = CpuRunner(g) if edges in args.cpu_on else None
    gpu_run(fine, g, build_plan(g, get_pattern("triangle")))   # upload the graph once
    def step(what: str, out: tuple) -> tuple:
        # one line per run as it ends, so that a run cut short still says where it was
        print(f"#   {name} {what}: {_fmt_t(out[1])} s ({_fmt_t(out[0])})", flush=True)
        return out

    plans = {}
    for name, q in pats:
        t = time.perf_counter()
        plans[name] = build_plan(g, q, mode="embeddings", purpose="count")
        print(f"# {name}: plan {time.perf_counter() - t:.2f} s", flush=True)
    engines = [fine] + [naive] * args.naive + [coarse] * args.coarse
    profiled = [prof_f, prof_c] if edges in args.profile_on else []
    precompile([(e, plans[n], False) for n, _ in pats
                for e in engines + (profiled if n in SMALL else [])], f"graph {edges:.0e}")
    for name, q in pats:
        plan = plans[name]
        def best(eng) -> tuple:
            # --repeat N: the fastest of N runs (the first run of a plan can pay for
            # memory-pool growth and module loading; a run that times out ends it)
            out = gpu_run(eng, g, plan)
            for _ in range(args.repeat - 1):
                if not isinstance(out[0], int):
                    break
                nxt = gpu_run(eng, g, plan)
                if isinstance(nxt[1], float) and nxt[1] < out[1]:
                    out = nxt
            return out

        r_f, t_f, s_f = step("fine", best(fine))
        r_n, t_n, _ = step("naive", best(naive)) if args.naive else (None, None, {})
        r_c, t_c, s_c = step("coarse", best(coarse)) if args.coarse else (None, None, {})
        idle_f = idle_c = None
        if edges in args.profile_on and name in SMALL:
            idle_f = step("fine profiled", gpu_run(prof_f, g, plan))[2].get("idle_rate")
            idle_c = step("coarse profiled", gpu_run(prof_c, g, plan))[2].get("idle_rate")
        r_cpu = t_cpu = None
        if cpu is not None and name in SMALL and (not args.cpu_patterns
                                                  or name in args.cpu_patterns.split(",")):
            out = cpu.run("count", plan, None, args.cpu_time)
            r_cpu, t_cpu = out if out is not None else (None, None)
            step("cpu", (r_cpu, t_cpu))
        mult = plan.multiplier
        for r in (r_n, r_c, r_cpu):
            if isinstance(r, int) and isinstance(r_f, int) and r != r_f:
                print(f"!! MISMATCH {name}: fine {r_f} vs {r}", flush=True)
                results.setdefault("mismatches", []).append([name, r_f, r])
        row = {"graph": f"pl{edges:.0e}", "pattern": name,
               "embeddings": r_f * mult if isinstance(r_f, int) else r_f,
               "gpu_s": t_f, "naive_s": t_n, "coarse_s": t_c if isinstance(r_c, int) else r_c,
               "cpu_s": t_cpu if r_cpu is not None else (
                   f">{args.cpu_time:g}" if cpu and name in SMALL and (
                       not args.cpu_patterns or name in args.cpu_patterns.split(",")) else None),
               "idle_fine": idle_f, "idle_coarse": idle_c, "compile_s": s_f.get("compile_s"),
               "pool_depth": s_f.get("pool_depth"), "pool_size": s_f.get("pool_size"),
               "steals": s_f.get("steals"), "warps": s_f.get("warps"),
               # where the fine time went: the BFS phase (roots, expansion, shuffle) vs DFS
               "bfs_s": s_f.get("bfs_s"), "search_s": s_f.get("search_s")}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if cpu is not None:
        cpu.close()


def bench_ablation(args, results: dict) -> None:
    """gMatch Table 5 on our code: coarse vs fine (naive) vs fine+batch, +/- stealing."""
    from warpmatch.engine.gpu import GpuEngine
    from warpmatch.plan import build_plan
    from warpmatch.query import get_pattern
    from warpmatch.query.patterns import read_pattern_collection
    variants = {   # all share the BFS phase (default pool threshold) unless named
        "coarse": dict(model="coarse"),
        "fine-naive": dict(batch=False, steal=False),
        "fine-batch": dict(steal=False),
        "fine-batch-steal": dict(steal=True),
        "fine-batch-f1": dict(steal=False, fetch=1),
        # pool items a warp fetches at once (default with stealing: up to 32; up to 4
        # before): more items, fuller last steps for short lists (idle lanes), at the
        # risk of heavy items together
        "fine-batch-steal-f4": dict(steal=True, fetch=4),
        "fine-batch-steal-f8": dict(steal=True, fetch=8),
        "fine-batch-steal-f32": dict(steal=True, fetch=32),
        # the same, profiled: their idle-lane rates (gMatch 2.3)
        "prof-steal": dict(steal=True, profile=True),
        "prof-steal-f4": dict(steal=True, fetch=4, profile=True),
        "prof-steal-f8": dict(steal=True, fetch=8, profile=True),
        "prof-steal-f32": dict(steal=True, fetch=32, profile=True),
        "fine-batch-steal-pool100k": dict(steal=True, pool_threshold=100_000),
        # a pool of roots (what the 10^8 graph gets: more roots than the threshold):
        # stealing's worth there, and batching more light roots per fetch
        "fine-batch-pool100k": dict(steal=False, pool_threshold=100_000),
        "fine-batch-steal-pool100k-f8": dict(steal=True, pool_threshold=100_000, fetch=8),
        "fine-batch-steal-pool100k-f32": dict(steal=True, pool_threshold=100_000, fetch=32),
        "coarse-pool100k": dict(model="coarse", pool_threshold=100_000),
        # counting groups of bare leaves (issue 21, render.leaf_first): alike leaves of
        # one vertex and twins (the default), none, alike leaves only (no twins), or also
        # leaves of different vertices
        "default": dict(),
        "no-leaf-groups": dict(leaf_groups="none"),
        "no-twins": dict(leaf_groups="alike"),
        "all-leaf-groups": dict(leaf_groups="all"),
    }
    if args.ablation_variants:
        # e.g. "fine-batch,fine-batch-steal" at 10^8, where the slow variants would
        # take the whole device budget
        keep = [v.strip() for v in args.ablation_variants.split(",") if v.strip()]
        unknown = [v for v in keep if v not in variants]
        if unknown:
            raise SystemExit(f"--ablation-variants: unknown {unknown}; known: {list(variants)}")
        variants = {k: variants[k] for k in keep}
    g = power_law_gpu(int(args.ablation_edges), seed=1, name="ablation")
    # the plan's own modules, compiled ahead (the default compile="auto" would search new
    # structures on the generic module, which has none of the variants' differences)
    engines = {k: GpuEngine(time_limit_s=args.pattern_time, **{"compile": "specialised", **v})
               for k, v in variants.items()}
    table = {}
    gpu_run(next(iter(engines.values())), g, build_plan(g, get_pattern("triangle")))
    plans = {}
    for name in args.ablation_patterns.split(","):
        st = name.startswith("stmatch:")
        q = (read_pattern_collection(DATA / "patterns" / "stmatch24.txt")[int(name[8:]) - 1]
             if st else get_pattern(name))
        plans[name] = build_plan(g, q, mode="embeddings", purpose="count")
    precompile([(e, p, False) for p in plans.values() for e in engines.values()], "ablation")
    for name, plan in plans.items():
        line = {}
        for key, eng in engines.items():
            gpu_run(eng, g, plan)                 # warm (compile)
            r, t, s = gpu_run(eng, g, plan)
            line[key] = (r, t, s.get("warps"), s.get("pool_depth"), s.get("steals"),
                         s.get("idle_rate"), s.get("leaf_group"))
        table[name] = line
        print(f"# ablation {name}: " + ", ".join(
            f"{k}={_fmt_t(v[1])}s({v[0]})" + ("" if v[5] is None else f"[idle {100 * v[5]:.1f}%]")
            + (f"[{v[6]} leaves counted]" if v[6] else "")
            for k, v in line.items()), flush=True)
    results["ablation"] = {"graph": {"vertices": g.n, "edges": g.num_edges,
                                     "max_degree": g.max_degree}, "table": table}


def bench_hub(args, rows: list, results: dict) -> None:
    from warpmatch.engine.gpu import GpuEngine
    from warpmatch.plan import build_plan
    from warpmatch.query import get_pattern
    if args.hub * 8 > args.hub_edges:
        raise SystemExit(f"--hub {args.hub} needs --hub-edges >= {args.hub * 8:.0e} "
                         f"(the hub's neighbours are distinct vertices of the power-law part)")
    g = power_law_gpu(int(args.hub_edges), seed=2, hub=args.hub, name="hub")
    info = {"vertices": g.n, "edges": g.num_edges, "max_degree": g.max_degree}
    print(f"# hub graph: {info}", flush=True)
    eng = GpuEngine(time_limit_s=args.pattern_time)
    coarse = GpuEngine(model="coarse", time_limit_s=args.pattern_time)
    plans = {n: build_plan(g, get_pattern(n), mode="embeddings", purpose="count") for n in SMALL}
    precompile([(e, p, False) for p in plans.values()
                for e in [eng] + [coarse] * args.hub_coarse], "hub graph")
    for name in SMALL:
        plan = plans[name]
        r, t, s = gpu_run(eng, g, plan)
        rc, tc, sc = gpu_run(coarse, g, plan) if args.hub_coarse else (None, None, {})
        row = {"graph": "hub", "pattern": name,
               "embeddings": r * plan.multiplier if isinstance(r, int) else r, "gpu_s": t,
               "stack_bytes_per_warp": s.get("stack_bytes_per_warp"), "warps": s.get("warps"),
               "stack_bytes_total": (s.get("stack_bytes_per_warp") or 0) * (s.get("warps") or 0),
               "coarse": rc if not isinstance(rc, int) else tc,
               "coarse_buffer_bytes": sc.get("coarse_buffer_bytes"),
               "coarse_error": sc.get("error")}
        rows.append(row)
        print(json.dumps(row), flush=True)
    results["hub_graph"] = info


def bench_labeled(args, rows: list, results: dict) -> None:
    from warpmatch.engine.gpu import GpuEngine
    from warpmatch.plan import build_plan
    rng = np.random.default_rng(0)
    fine = GpuEngine(time_limit_s=args.label_time)
    coarse = GpuEngine(model="coarse", time_limit_s=args.label_time)
    # the sample first (fixed seed), so that every query's modules compile ahead at once
    work: dict[str, tuple] = {}
    for ds in ("yeast", "human", "hprd"):
        g = labeled_graph(DATA / "labeled" / ds / f"{ds}.graph")
        qdir = DATA / "labeled" / ds / "query_graph"
        queries = []
        # yeast and hprd ship 16/24/32-vertex sets, human 12/16/20
        sizes = sorted({int(f.stem.split("_")[2]) for f in qdir.glob("query_*.graph")})
        for size in sizes:
            for density in args.label_density.split(","):
                have = sorted(int(f.stem.rsplit("_", 1)[1])
                              for f in qdir.glob(f"query_{density}_{size}_*.graph"))
                if not have:
                    continue
                for i in sorted(rng.choice(have, min(args.labeled_per_set, len(have)),
                                           replace=False)):
                    qname = f"query_{density}_{size}_{i}"
                    q = labeled_query(qdir / f"{qname}.graph")
                    queries.append((size, qname, build_plan(g, q, purpose="list")))
        work[ds] = (g, queries)
    precompile([(e, plan, True) for _, qs in work.values() for _, _, plan in qs
                for e in [fine] + [coarse] * args.coarse], "labeled queries")
    summary = {}
    for ds, (g, queries) in work.items():
        cpu = CpuRunner(g) if args.label_cpu else None
        for size, qname, plan in queries:
            r_f, t_f, s_f = gpu_run(fine, g, plan, "match", args.label_limit)
            r_c, t_c, _ = gpu_run(coarse, g, plan, "match", args.label_limit) \
                if args.coarse else (None, None, {})
            r_cpu = t_cpu = None
            if cpu is not None:
                out = cpu.run("match", plan, args.label_limit, args.label_time)
                r_cpu, t_cpu = out if out is not None else (None, None)
            for r in (r_c, r_cpu):
                if isinstance(r, int) and isinstance(r_f, int) and r != r_f:
                    print(f"!! MISMATCH {ds} {qname}: fine {r_f} vs {r}", flush=True)
                    results.setdefault("mismatches", []).append([f"{ds}/{qname}", r_f, r])
            row = {"graph": ds, "pattern": qname, "embeddings": r_f, "gpu_s": t_f,
                   "coarse_s": t_c if r_c is not None else f">{args.label_time:g}",
                   "cpu_s": (t_cpu if r_cpu is not None
                             else (f">{args.label_time:g}" if cpu else None)),
                   "compile_s": s_f.get("compile_s")}
            rows.append(row)
            print(json.dumps(row), flush=True)
            sm = summary.setdefault(f"{ds}-{size}", {"queries": 0, "gpu_done": 0, "gpu_t": [],
                                                     "cpu_done": 0, "cpu_t": [],
                                                     "coarse_t": []})
            sm["queries"] += 1
            if isinstance(r_f, int):   # not None (time limit) nor an error's name
                sm["gpu_done"] += 1
                sm["gpu_t"].append(t_f)
            if r_cpu is not None:
                sm["cpu_done"] += 1
                sm["cpu_t"].append(t_cpu)
            if isinstance(r_c, int) and isinstance(t_c, float):
                sm["coarse_t"].append(t_c)
        if cpu is not None:
            cpu.close()
    results["labeled_summary"] = summary


class _Stopped(Exception):
    """The run was told to stop (SIGTERM) before its sections finished."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", default="1e7", help="power-law sizes, comma-separated ('' none)")
    ap.add_argument("--stmatch-on", default="1e7", help="sizes that also run stmatch24")
    ap.add_argument("--patterns", default="",
                    help="small patterns of the power-law section, comma-separated "
                         f"(default: {','.join(SMALL)})")
    ap.add_argument("--cpu-on", default="1e7,1e8", help="sizes that also run the cpu engine")
    ap.add_argument("--profile-on", default="1e7", help="sizes with idle-lane profiling")
    ap.add_argument("--pattern-time", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=1,
                    help="GPU runs per pattern and model; the fastest is reported")
    ap.add_argument("--cpu-time", type=float, default=60.0)
    ap.add_argument("--no-naive", dest="naive", action="store_false")
    ap.add_argument("--no-coarse", dest="coarse", action="store_false")
    ap.add_argument("--hub", type=int, default=0, help="hub degree (0: skip)")
    ap.add_argument("--hub-edges", type=float, default=4e7,
                    help="edges of the hub graph's power-law part (vertices: edges / 8, so "
                         "at least 8x the hub degree)")
    ap.add_argument("--hub-coarse", action="store_true",
                    help="also run the coarse model on the hub graph (buffers sized by the hub)")
    ap.add_argument("--labeled-per-set", type=int, default=0)
    ap.add_argument("--label-limit", type=int, default=100_000)
    ap.add_argument("--label-time", type=float, default=60.0)
    ap.add_argument("--cpu-patterns", default="",
                    help="run the cpu engine only on these small patterns ('' all)")
    ap.add_argument("--label-density", default="dense,sparse")
    ap.add_argument("--no-label-cpu", dest="label_cpu", action="store_false")
    ap.add_argument("--ablation-patterns", default="",
                    help="patterns for the model ablation (gMatch Table 5), comma-separated: "
                         "names or stmatch:N")
    ap.add_argument("--ablation-edges", type=float, default=1e7)
    ap.add_argument("--ablation-variants", default="",
                    help="run only these ablation variants, comma-separated ('' all)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args(argv)

    def sizes(s: str) -> list[int]:
        return [int(float(x)) for x in s.strip("'\"").split(",") if x.strip()]

    args.stmatch_on, args.cpu_on, args.profile_on = (sizes(args.stmatch_on), sizes(args.cpu_on),
                                                     sizes(args.profile_on))
    import cupy as cp
    props = cp.cuda.runtime.getDeviceProperties(0)
    results: dict = {"device": props["name"].decode() if isinstance(props["name"], bytes)
                     else str(props["name"]), "cpus": os.cpu_count(), "argv": sys.argv}
    rows: list = []

    def stop(signum, frame):   # `timeout` sends SIGTERM: keep what was measured
        raise _Stopped(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    try:
        if args.ablation_patterns:
            bench_ablation(args, results)
        for e in sizes(args.edges):
            bench_unlabeled(args, e, rows, results)
        if args.hub:
            bench_hub(args, rows, results)
        if args.labeled_per_set:
            bench_labeled(args, rows, results)
    except (_Stopped, KeyboardInterrupt) as exc:
        print(f"# stopped early ({exc or 'interrupt'}): the table holds what finished",
              flush=True)
        results["stopped_early"] = True
    results["rows"] = rows
    Path(args.out).mkdir(parents=True, exist_ok=True)
    with open(Path(args.out) / "gpu_bench.json", "w") as f:
        json.dump(results, f, indent=1, default=str)
    print_table(rows, results)
    # engines that disagree on a count make the run fail, as bench/stream.py does
    return 1 if results.get("mismatches") else 0


def print_table(rows: list, results: dict) -> None:
    print(f"\n== device: {results['device']}, host cores: {results['cpus']}")
    for key in [k for k in results if k.startswith("graph_") or k == "hub_graph"]:
        print(f"   {key}: {results[key]}")
    hdr = (f"{'graph':<8} {'pattern':<16} {'embeddings':>16} {'gpu s':>8} {'naive s':>8} "
           f"{'coarse s':>9} {'cpu s':>8} {'cpu/gpu':>7} {'crs/fine':>8} {'idle f':>7} {'idle c':>7}")
    print(hdr)
    fc = []
    for r in rows:
        if r["graph"] in ("yeast", "human", "hprd"):
            continue
        idle = lambda x: "-" if x is None else f"{100 * x:.1f}%"  # noqa: E731
        cs = r.get("coarse_s")
        if isinstance(cs, float) and isinstance(r.get("gpu_s"), float) and r["gpu_s"] > 0:
            fc.append(cs / r["gpu_s"])
        print(f"{r['graph']:<8} {r['pattern']:<16} {_fmt_t(r['embeddings']):>16} "
              f"{_fmt_t(r.get('gpu_s')):>8} {_fmt_t(r.get('naive_s')):>8} {_fmt_t(cs):>9} "
              f"{_fmt_t(r.get('cpu_s')):>8} {_ratio(r.get('gpu_s'), r.get('cpu_s')):>7} "
              f"{_ratio(r.get('gpu_s'), cs):>8} {idle(r.get('idle_fine')):>7} "
              f"{idle(r.get('idle_coarse')):>7}")
    if fc:
        print(f"mean coarse/fine time ratio over {len(fc)} patterns: {np.mean(fc):.2f}")
    lab = results.get("labeled_summary")
    if lab:
        print(f"\n{'set':<10} {'queries':>7} {'gpu done':>8} {'gpu mean s':>10} {'cpu done':>8} "
              f"{'cpu mean s':>10} {'coarse mean s':>13}")
        for key, sm in lab.items():
            m = lambda v: f"{np.mean(v):.3f}" if v else "-"  # noqa: E731
            print(f"{key:<10} {sm['queries']:>7} {sm['gpu_done']:>8} {m(sm['gpu_t']):>10} "
                  f"{sm['cpu_done']:>8} {m(sm['cpu_t']):>10} {m(sm['coarse_t']):>13}")
    if results.get("mismatches"):
        print(f"!! {len(results['mismatches'])} count mismatches: {results['mismatches']}")


if __name__ == "__main__":
    sys.exit(main())
