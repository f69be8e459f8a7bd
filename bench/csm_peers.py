"""warpmatch's continuous matching against RapidFlow, side by side, on the same update streams.

RapidFlow (Sun, Sun, Chen, Luo & Zhou, "RapidFlow: An Efficient Approach to
Continuous Subgraph Matching", VLDB 2022) is a single-threaded C++ continuous
subgraph matching (CSM) system. For every edge update it reports how many
embeddings appear (insertion) or disappear (deletion); its ``Result count`` is
``Σ_updates (|Δ+| + |Δ−|)`` counted as **embeddings, non-induced** (every
injective, label- and edge-preserving map: warpmatch's ``mode="embeddings",
induced=False``), which is what this script compares.

For each workload (a data graph and a query) the script

1. derives one update stream with :func:`warpmatch.stream.updates.make_stream`
   (``insert_fraction=0.1, delete_fraction=0.05``, ``--seed``; the same as
   ``warpmatch stream-gen``: 10% of the edges are held out of ``G_0`` and
   inserted, 5% of the rest deleted, shuffled) and writes ``G_0``, the query
   and the stream in RapidFlow's formats (``t N M`` / ``v id label`` /
   ``e u v elabel``; stream lines ``e u v elabel`` and ``-e u v elabel``;
   internal vertex ids ``0..n-1``, label 0 where the graph has none) in a
   temporary directory;
2. runs RapidFlow (``-num MAX -time_limit T``) and reads ``Query time
   (seconds)`` — its time to process the whole stream after loading and
   preprocessing — and ``Result count``; ``Time out...`` marks a run cut by
   its limit (its count is then partial and never compared);
3. runs warpmatch's :class:`~warpmatch.ContinuousMatcher` with
   ``count_initial=False`` over the same stream with
   ``apply_batches(updates, batch, counts_only=True)``: the CPU engine with
   one thread (``threads=1``, RapidFlow's setting), the CPU engine with all
   cores (``threads=None``) and, where CuPy and a CUDA device are present,
   the GPU engine; each also, as ``cpu1-rel``, ``cpuN-rel``, ``gpu-rel``, with
   ``keep="relevant"`` (:mod:`warpmatch.stream.keep`): only the edges the query
   can read are kept, and the other updates are taken as valid without a look,
   which is what RapidFlow does; the default keeps the whole graph and
   validates every update;
4. checks the counts **per update**: a second RapidFlow binary (the *check*
   variant, never timed) prints each update's result count, and every
   warpmatch engine's ``plus_counts + minus_counts`` must equal it, update by
   update. When the check variant cannot be built, the totals are compared
   instead and the table says so.

How RapidFlow is built
----------------------
``--rapidflow`` names RapidFlow's source directory (or an already built
``RapidFlow.out``). From a source directory the script builds two binaries
with ``cmake`` and ``make`` in a cache directory outside the repository
(``~/.cache/warpmatch-bench/rapidflow-<hash of the sources>``, or
``--peer-build-dir``), each from a temporary copy of the sources: the plain
one, exactly as published (the timed one), and the check variant, for which
one line of the temporary copy is changed at build time: in
``StreamingEngine::evaluate_search`` the per-update call
``execute(query_graph, update, true, true)`` also prints its returned count
(``WMCHECK <count>``). No RapidFlow code is part of this repository. If that
call is not found (the sources changed), the script says so and compares
totals only (``totals ok (no patch)`` in the table).

What is timed
-------------
- **RapidFlow**: its own ``Query time (seconds)`` (the stream loop, after the
  graph, query and stream are loaded and the global views and orders are
  built). ``--time-limit`` (default 120 s) is passed as ``-time_limit``; the
  process is also killed if it has not finished ``--time-limit`` plus a grace
  period after it started.
- **warpmatch**: the ``apply_batches`` loop only. Each engine runs in its own
  child process (so that a batch that overruns the limit can be cut: a numba
  or CUDA call cannot be interrupted from Python): it loads ``G_0`` (a
  memory-mapped ``.wmg``) and the stream, warms up on a *separate* matcher
  with the first ``--warmup`` updates in eight batches, stopping after a
  quarter of the time limit (numba compilation, or
  loading compiled kernels from numba's cache, and NVRTC compilation happen
  there; with ``--specialise always``, the default, the CPU engines also compile the
  query's delta plans there, :mod:`warpmatch.stream._seq_special`, once per machine,
  and the JSON gives ``compile_s``; the CPU engine with several threads also runs the
  batch path's parallel region once, which a batch runs only when its searches are heavy:
  compiled cold, it took ~50 s in a 16-vertex query's first heavy batch), builds a fresh
  matcher, and times the loop.
  Construction, warm-up and the initial
  count (not computed: ``count_initial=False``) are excluded. Between batches
  the loop checks the elapsed time and stops with ``timeout`` once it exceeds
  ``--wm-time-limit`` (default: ``--time-limit``); the parent kills a child
  whose batch overruns the limit by the grace period, or whose loading and
  warm-up take longer than ``--setup-limit`` (at least :data:`COLD_SETUP_S` until
  the engine's first child finished: it may compile from a cold numba cache). The
  child also checks that no numba function was compiled during the timed loop (counting the
  signatures of every live numba dispatcher); if one was (a kernel that the
  warm-up did not reach), the loop is timed once more on a fresh matcher, and
  a compilation in that run too is flagged (``*`` on the rate, and a note).
- ``updates/s`` = stream length / seconds; ``ratio`` = warpmatch updates/s /
  RapidFlow updates/s (> 1: warpmatch is faster). With ``--repeats R`` both
  sides run ``R`` times and the median is reported.

Output: a progress line on stderr per run, then a markdown table on stdout
with a geometric mean of every ratio column over the workloads where both
sides finished; ``--json FILE`` writes the raw results (after every
workload, so a cut run keeps what it measured). The exit status is 1 if any
count differs, 2 if a warpmatch run failed (and no count differs), else 0.

Run ``python bench/csm_peers.py --help``; see ``bench/README.md``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rapidflow_peer import (  # noqa: E402  (bench/ is not a package)
    Peer, on_cpus, rapidflow_runs, resolve_peer, rf_query_problem, write_rf_graph,
    write_rf_query, write_rf_stream)

#: the named patterns of the unlabeled workloads (``warpmatch patterns``)
PATTERNS = ("triangle", "4-clique", "diamond", "square", "tailed-triangle", "4-path", "house")
LABELED_GRAPHS = ("yeast", "human", "hprd")
UNLABELED_GRAPHS = ("email-Eu-core", "powerlaw")
GROUPS = {"labeled": LABELED_GRAPHS, "unlabeled": UNLABELED_GRAPHS}
#: the engines run by default; each also as ``<engine>-rel``: ``keep="relevant"``, the
#: matcher keeps only the edges the query can read and takes the other updates as valid
#: without a look, as RapidFlow does (stream/keep.py)
DEFAULT_ENGINES = ("cpu1", "cpuN", "gpu")
ENGINES = DEFAULT_ENGINES + tuple(f"{e}-rel" for e in DEFAULT_ENGINES)
ENGINE_TITLE = {"cpu1": "CPU-1", "cpuN": "CPU-N", "gpu": "GPU"}
ENGINE_TITLE.update({f"{e}-rel": f"{t} rel" for e, t in list(ENGINE_TITLE.items())})


def _is_gpu(engine: str) -> bool:
    return engine.startswith("gpu")
INSERT_FRACTION, DELETE_FRACTION = 0.1, 0.05
#: the warm-up's updates are applied in this many batches ...
WARMUP_BATCHES = 8
#: ... and it stops after this share of the warpmatch time limit
WARMUP_SHARE = 0.25



def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ====================================================================== warpmatch runs
def _jit_signatures() -> int:
    """Compiled signatures of every live numba dispatcher (grows when anything compiles).

    Walks the garbage collector's objects, so dispatchers that plan-specific
    factories create are counted too; called outside the timed loop only.
    """
    import gc
    try:
        from numba.core.dispatcher import Dispatcher
    except ImportError:
        return 0
    # type(), not isinstance(): some live objects (lazy proxies) raise on __class__
    return sum(len(o.signatures) for o in gc.get_objects() if issubclass(type(o), Dispatcher))


#: setup seconds (load, warm-up) allowed to an engine's children until one finished: the
#: first may compile numba's kernels from a cold cache
COLD_SETUP_S = 300.0
#: seconds between two writes of the per-update counts a timed child has finished
PROGRESS_S = 0.25


def warm_parallel_region(g0: Any, query: Any, ups: Any, **options: Any) -> None:
    """Run the CPU engine's batch path, parallel region included, once on ``ups``.

    That region (stream/cpu.py run_tasks) runs only for a batch whose searches look
    heavy, which a warm-up's batches may not be: its first use would then compile inside
    a timed run. Here on a batch-path matcher (``sequential=False``, ``options`` as for
    :class:`~warpmatch.ContinuousMatcher`) whose threshold for going parallel is 0, in
    this process's copy of the module only.
    """
    import warpmatch as wm
    import warpmatch.stream.cpu as wm_cpu
    keep_threshold, wm_cpu.PARALLEL_S = wm_cpu.PARALLEL_S, 0.0
    try:
        par = wm.ContinuousMatcher(g0, query, backend="cpu", count_initial=False,
                                   sequential=False, **options)
        for _ in par.apply_batches(ups, len(ups), counts_only=True):
            pass
    finally:
        wm_cpu.PARALLEL_S = keep_threshold


def _wm_child(spec_path: str) -> None:
    """Child process: load, warm up on a separate matcher, time ``apply_batches``, report."""
    spec = json.loads(Path(spec_path).read_text())
    import warpmatch as wm
    from warpmatch.stream.types import Updates
    g0 = wm.read_graph(spec["graph"])
    with open(spec["query"], "rb") as f:
        query = pickle.load(f)
    z = np.load(spec["updates"])
    ups = Updates(src=z["src"], dst=z["dst"], op=z["op"],
                  label=z["label"] if "label" in z.files else None, source="bench stream")
    backend, batch, limit = spec["backend"], int(spec["batch"]), float(spec["limit"])
    opts: dict[str, Any] = ({"threads": spec["threads"], "specialise": spec["specialise"]}
                            if backend == "cpu" else {})

    def matcher() -> Any:
        return wm.ContinuousMatcher(g0, query, backend=backend, count_initial=False,
                                    keep=spec.get("keep", "all"), **opts)

    # warm-up: a separate matcher, the stream's first updates in WARMUP_BATCHES batches
    # (some kernels first run on a later batch); compilation happens here. It stops early
    # (between batches) after WARMUP_SHARE of the time limit: on a heavy query a few
    # updates already compile everything, and the timed loop is retimed if not
    w = min(len(ups), max(1, int(spec["warmup"])))
    warm = matcher()
    t_warm = time.perf_counter()
    for _ in warm.apply_batches(ups.slice(0, w), max(1, -(-w // WARMUP_BATCHES)),
                                counts_only=True):
        if time.perf_counter() - t_warm > WARMUP_SHARE * limit:
            break
    threads = None
    compiled = {}
    if backend == "cpu" and spec["threads"] != 1 and \
            time.perf_counter() - t_warm < WARMUP_SHARE * limit:
        # (on a cold numba cache its first call compiled for ~50 s in the timed loop of
        # a 16-vertex query)
        warm_parallel_region(g0, query, ups.slice(0, w), keep=spec.get("keep", "all"),
                             threads=spec["threads"])
    if backend == "cpu":
        threads = warm.engine._threads() if hasattr(warm.engine, "_threads") else spec["threads"]
        sp = getattr(getattr(warm, "_seq", None), "special", None)
        if sp is not None:      # the plans compiled for the query (once per machine)
            compiled = {"compiled_plans": len(sp.plans), "compile_s": round(sp.seconds, 3),
                        "compile_cached": sp.cached}
    del warm
    n = len(ups)
    reps: list[dict[str, Any]] = []
    first: np.ndarray | None = None
    jit_retimed = 0
    jit_kept = 0
    rep = 0
    while rep < int(spec["repeats"]):
        # before the matcher: the count walks every Python object (gc.get_objects), which
        # would leave the caches cold for the timed loop
        jit0 = _jit_signatures()
        cm = matcher()
        counts = np.zeros(n, dtype=np.int64)
        done = 0
        timed_out = False
        progress = open(spec["progress"], "wb") if rep == 0 else None
        Path(spec["marker"]).write_text(f"{rep} {time.time()}\n")   # the parent's deadline
        written = 0
        t0 = t_written = time.perf_counter()
        for d in cm.apply_batches(ups, batch, counts_only=True):
            b = len(d)
            counts[done:done + b] = d.plus_counts + d.minus_counts
            done += b
            now = time.perf_counter()
            if progress is not None and now - t_written > PROGRESS_S:
                # what the parent can still check if it kills us; written now and then,
                # not per batch (a write and a flush cost tens of µs a batch)
                progress.write(counts[written:done].tobytes())
                progress.flush()
                written, t_written = done, time.perf_counter()
            if now - t0 > limit and done < n:
                timed_out = True
                break
        seconds = time.perf_counter() - t0
        if progress is not None:
            progress.write(counts[written:done].tobytes())
            progress.close()
        jit = _jit_signatures() - jit0
        if jit and not timed_out and jit_retimed == 0:
            # numba compiled (or loaded from its cache) during the loop: time it again
            jit_retimed = jit
            continue
        jit_kept += jit
        rep_info = {"seconds": seconds, "updates": done, "timed_out": timed_out}
        seq = getattr(cm, "_seq", None)
        if seq is not None:     # which CPU path took the updates (the rest: the batch path)
            rep_info["sequential_updates"] = seq.stats["updates"]
        reps.append(rep_info)
        if rep == 0:
            first = counts[:done].copy()
        elif not np.array_equal(counts[:done], first[:done]):
            raise RuntimeError(f"repeat {rep} gave different per-update counts")
        if timed_out:
            break
        rep += 1
    np.save(spec["counts"], first)
    print(json.dumps({"repeats": reps, "threads": threads, "backend": backend,
                      "jit_in_timing": jit_kept, "jit_retimed": jit_retimed, **compiled}),
          flush=True)


def run_warpmatch(files: dict[str, Path], engine: str, batch: int, limit: float, grace: float,
                  setup_limit: float, warmup: int, repeats: int, workdir: Path,
                  n_updates: int, specialise: str = "always",
                  cpus: set[int] | None = None) -> dict[str, Any]:
    """Time one warpmatch engine on a workload in a child process (on ``cpus`` only, if
    given: ``--pin-cpu``).

    Returns
    -------
    dict
        ``status`` ("ok", "timeout" or "error"), ``seconds`` (median over the
        repeats), ``updates`` (processed), ``per_update`` (numpy array of the
        processed prefix), ``threads``, ``detail``.
    """
    backend = "gpu" if _is_gpu(engine) else "cpu"
    threads = 1 if engine.startswith("cpu1") else None
    tag = f"wm_{engine}"
    spec = {"graph": str(files["wmg"]), "query": str(files["pickle"]),
            "updates": str(files["npz"]), "backend": backend, "threads": threads,
            "batch": batch, "limit": limit, "warmup": warmup, "repeats": repeats,
            "specialise": specialise,
            "keep": "relevant" if engine.endswith("-rel") else "all",
            "marker": str(workdir / f"{tag}.marker"), "progress": str(workdir / f"{tag}.prog"),
            "counts": str(workdir / f"{tag}.npy")}
    for k in ("marker", "progress", "counts"):
        Path(spec[k]).unlink(missing_ok=True)
    spec_p = workdir / f"{tag}.json"
    spec_p.write_text(json.dumps(spec))
    out_p, err_p = workdir / f"{tag}.out", workdir / f"{tag}.err"
    start = time.time()
    killed = None
    with open(out_p, "wb") as out, open(err_p, "wb") as err:
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--_wm-child",
                                 str(spec_p)], stdout=out, stderr=err,
                                preexec_fn=on_cpus(cpus))
        marker = Path(spec["marker"])
        try:
            while proc.poll() is None:
                now = time.time()
                if marker.is_file():
                    try:
                        began = float(marker.read_text().split()[1])
                    except (IndexError, ValueError):
                        began = now
                    if now > began + limit + grace:
                        killed = f"a batch ran past the {limit:g} s limit by {grace:g} s: killed"
                elif now > start + setup_limit:
                    killed = f"setup (load, warm-up) took more than {setup_limit:g} s: killed"
                if killed:
                    break
                time.sleep(0.05)
        finally:            # killed by us, or interrupted: leave no process behind
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    res: dict[str, Any] = {"engine": engine, "backend": backend}
    if killed:
        prog = Path(spec["progress"])
        done = (np.frombuffer(prog.read_bytes(), dtype=np.int64).copy() if prog.is_file()
                else np.zeros(0, np.int64))
        res.update(status="timeout", detail=killed, updates=int(done.size), per_update=done,
                   seconds=None)
        return res
    text = out_p.read_text(errors="replace").strip()
    info: dict[str, Any] = {}
    if text:
        try:
            info = json.loads(text.splitlines()[-1])
        except ValueError:
            info = {}
    if proc.returncode != 0 or "repeats" not in info:
        tail = info.get("error") or (err_p.read_text(errors="replace").strip().splitlines()
                                     or [f"exit {proc.returncode}"])[-1][:160]
        res.update(status="error", detail=tail, updates=0, per_update=None, seconds=None)
        return res
    reps = info["repeats"]
    res["threads"] = info["threads"]
    res["jit_in_timing"] = info["jit_in_timing"]
    res["jit_retimed"] = info.get("jit_retimed", 0)
    for key in ("compiled_plans", "compile_s", "compile_cached"):
        if key in info:
            res[key] = info[key]
    res["per_update"] = np.load(spec["counts"])
    res["runs"] = reps
    if reps[-1]["timed_out"]:
        r = reps[-1]
        res.update(status="timeout", updates=r["updates"], seconds=None,
                   detail=f"stopped after {r['updates']:,}/{n_updates:,} updates in "
                          f"{r['seconds']:.1f} s (limit {limit:g} s)",
                   partial_rate=r["updates"] / max(r["seconds"], 1e-12))
    else:
        res.update(status="ok", updates=n_updates,
                   seconds=float(np.median([r["seconds"] for r in reps])))
    return res


# ====================================================================== workloads
@dataclass
class Workload:
    """One data graph with its stream and the queries to run on it."""

    group: str
    graph: str
    load: Callable[[], Any]
    queries: list[tuple[str, Callable[[Any], Any]]] = field(default_factory=list)
    skip: str | None = None
    note: str = ""


def data_root(arg: str | None) -> Path:
    """``--data``, else ``$WARPMATCH_DATA``, else ``../shared/data`` beside the repository."""
    if arg:
        return Path(arg).expanduser().resolve()
    env = os.environ.get("WARPMATCH_DATA")
    if env:
        return Path(env).expanduser().resolve()
    return (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()


def powerlaw_graph(edges: float, seed: int) -> tuple[Any, str]:
    """An R-MAT graph (Graph500 parameters, with noise) of about ``edges`` undirected edges.

    The scale is ``round(log2(edges / 16))`` and the edge factor is chosen so
    that the expected number of distinct edges (about 85% of the draws at
    these sizes) is near ``edges``.
    """
    from warpmatch.graph.generators import rmat
    target = max(64.0, float(edges))
    scale = max(4, int(round(math.log2(target / 16))))
    factor = max(1, int(round(target / (2 ** scale) / 0.85)))
    g = rmat(scale, factor, seed=seed, name="powerlaw")
    return g, (f"warpmatch.graph.generators.rmat(scale={scale}, edge_factor={factor}, "
               f"seed={seed}) (Graph500 a,b,c = 0.57,0.19,0.19 with noise)")


def build_workloads(args: argparse.Namespace, root: Path) -> list[Workload]:
    """The workloads selected by ``--workloads``, with a reason where data is missing."""
    import warpmatch as wm
    from warpmatch.query import get_pattern, read_query_file
    from warpmatch.query.sample import random_walk_query
    sel = set()
    for item in (s.strip() for s in args.workloads.split(",") if s.strip()):
        if item in GROUPS:
            sel.update(GROUPS[item])
        elif item in LABELED_GRAPHS + UNLABELED_GRAPHS:
            sel.add(item)
        else:
            raise SystemExit(f"--workloads: unknown {item!r}; use groups "
                             f"{', '.join(GROUPS)} or graphs "
                             f"{', '.join(LABELED_GRAPHS + UNLABELED_GRAPHS)}")
    out: list[Workload] = []
    rw_sizes = [int(x) for x in args.rw_sizes.split(",") if x.strip()]
    for gname in LABELED_GRAPHS:
        if gname not in sel:
            continue
        gdir = root / "labeled" / gname
        gpath = gdir / f"{gname}.graph"
        wl = Workload("labeled", gname, (lambda p=gpath: wm.read_graph(p)))
        if not gpath.is_file():
            wl.skip = f"{gpath} not found (set --data or WARPMATCH_DATA)"
            out.append(wl)
            continue
        for dens in ("dense", "sparse"):
            for i in range(1, args.labeled_queries + 1):
                qp = gdir / "query_graph" / f"query_{dens}_16_{i}.graph"
                name = f"{dens}16-{i}"
                wl.queries.append((name, (lambda g, p=qp: read_query_file(p))))
        for k in rw_sizes:
            for dens in ("dense", "sparse"):
                for s in range(args.rw_per_size):
                    wl.queries.append((f"rw-{dens}-{k}-s{s}", (
                        lambda g, k=k, d=dens, s=s: random_walk_query(g, k, d, seed=s,
                                                                      max_tries=20000))))
        out.append(wl)
    pats = [p.strip() for p in args.patterns.split(",") if p.strip()]
    if "email-Eu-core" in sel:
        p = root / "snap" / "email-Eu-core.txt"
        wl = Workload("unlabeled", "email-Eu-core", (lambda p=p: wm.read_graph(p, directed=False)),
                      note="SNAP email-Eu-core read as undirected")
        if not p.is_file():
            wl.skip = f"{p} not found (set --data or WARPMATCH_DATA)"
        wl.queries = [(pt, (lambda g, pt=pt: get_pattern(pt))) for pt in pats]
        out.append(wl)
    if "powerlaw" in sel:
        size = f"{args.powerlaw_edges:.0e}".replace("e+0", "e").replace("e+", "e")
        wl = Workload("unlabeled", f"powerlaw-{size}", lambda: None)

        def load(wl: Workload = wl) -> Any:
            g, desc = powerlaw_graph(args.powerlaw_edges, args.seed)
            wl.note = desc
            return g
        wl.load = load
        wl.queries = [(pt, (lambda g, pt=pt: get_pattern(pt))) for pt in pats]
        out.append(wl)
    return out


def stream_passes(ups: Any, passes: int) -> Any:
    """``passes`` passes of ``ups`` in one stream: the stream, its inverse (the last update
    first, each insert a delete and each delete an insert of the same edge and label),
    the stream again, ... Every pass is valid where the stream is (the inverse takes the
    graph back to ``G_0``), so per-update counts stay comparable on both sides."""
    from warpmatch.stream.types import Updates
    if passes <= 1:
        return ups
    fwd = (ups.src, ups.dst, ups.op, ups.label)
    inv = (ups.src[::-1], ups.dst[::-1], -ups.op[::-1],
           None if ups.label is None else ups.label[::-1])
    parts = [fwd if k % 2 == 0 else inv for k in range(passes)]

    def cat(i: int) -> np.ndarray:
        return np.concatenate([p[i] for p in parts])
    return Updates(cat(0), cat(1), cat(2).astype(np.int8),
                   None if ups.label is None else cat(3).astype(np.int32), source=ups.source)


def prepare_graph(wl: Workload, seed: int, workdir: Path, passes: int = 1
                  ) -> tuple[Any, dict[str, Path], int,
                                                                   dict[str, Any]]:
    """Load the graph, derive the stream, write the files both sides read."""
    import warnings

    from warpmatch.errors import InputCleanupWarning
    from warpmatch.graph.binary import save_binary
    from warpmatch.stream.updates import make_stream
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputCleanupWarning)    # reported in the graph line
        g = wl.load()
    g0, ups = make_stream(g, INSERT_FRACTION, DELETE_FRACTION, seed)
    ups = stream_passes(ups, passes)
    files = {"wmg": workdir / "g0.wmg", "graph": workdir / "g0.rf.graph",
             "stream": workdir / "stream.rf.txt", "npz": workdir / "updates.npz"}
    save_binary(g0, files["wmg"])
    src, dst = g0.edges()
    write_rf_graph(files["graph"], g0.n, src, dst, g0.vertex_labels, g0.edge_label_array())
    usrc, udst = g0.to_internal(ups.src), g0.to_internal(ups.dst)
    write_rf_stream(files["stream"], usrc, udst, ups.op, ups.label)
    arrays = {"src": ups.src, "dst": ups.dst, "op": ups.op}
    if ups.label is not None:
        arrays["label"] = ups.label
    np.savez(files["npz"], **arrays)
    # RapidFlow reads out of bounds when a vertex that lost all its edges gets new ones:
    # count such updates (and those that connect a vertex isolated in G0) for the report
    isolated, reconnect = _reconnections(np.asarray(g0.degree), usrc, udst, ups.op)
    info = {"graph": g.name, "vertices": g.n, "edges": g.num_edges, "g0_edges": g0.num_edges,
            "dropped_self_loops": int(g.report.self_loops),
            "dropped_duplicates": int(g.report.duplicates),
            "updates": len(ups), "passes": passes, "inserts": int((ups.op > 0).sum()),
            "deletes": int((ups.op < 0).sum()), "prepare_s": time.perf_counter() - t0,
            "labeled": g.vertex_labels is not None, "edge_labeled": g.edge_labels is not None,
            "connect_isolated_in_g0": isolated, "reconnect_emptied": reconnect}
    return g, files, len(ups), info


def _reconnections(deg0: np.ndarray, src: np.ndarray, dst: np.ndarray,
                   op: np.ndarray) -> tuple[int, int]:
    """Insertions that touch a vertex isolated in ``G_0``, and those that touch a vertex
    whose degree dropped to 0 during the stream (RapidFlow's crash condition)."""
    from numba import njit

    global _RECONNECT_KERNEL
    if _RECONNECT_KERNEL is None:
        @njit(cache=True)
        def scan(deg: np.ndarray, src: np.ndarray, dst: np.ndarray,
                 op: np.ndarray) -> tuple[int, int]:   # pragma: no cover - compiled
            emptied = np.zeros(deg.size, np.bool_)
            iso = deg == 0
            n_iso = 0
            n_emptied = 0
            for i in range(src.size):
                u, v = src[i], dst[i]
                if op[i] > 0:
                    if iso[u] or iso[v]:
                        n_iso += 1
                    if emptied[u] or emptied[v]:
                        n_emptied += 1
                    deg[u] += 1
                    deg[v] += 1
                    iso[u] = False
                    iso[v] = False
                else:
                    deg[u] -= 1
                    deg[v] -= 1
                    if deg[u] == 0:
                        emptied[u] = True
                    if deg[v] == 0:
                        emptied[v] = True
            return n_iso, n_emptied
        _RECONNECT_KERNEL = scan
    a, b = _RECONNECT_KERNEL(deg0.astype(np.int64), src.astype(np.int64),
                             dst.astype(np.int64), np.asarray(op, np.int64))
    return int(a), int(b)


_RECONNECT_KERNEL: Any = None


# ====================================================================== checks and table
def compare(rf: dict[str, Any], wms: dict[str, dict[str, Any]],
            patched: bool = True) -> tuple[str, list[str]]:
    """The check column and the mismatch messages of one workload.

    Parameters
    ----------
    rf : dict
        :func:`rapidflow_runs`'s result (``per_update`` None: totals only).
    wms : dict
        :func:`run_warpmatch`'s result per engine.
    patched : bool, optional
        False when the check variant's patch failed: "totals ok (no patch)".

    Returns
    -------
    check : str
        The table's check column.
    problems : list of str
        Every count difference found (empty if none).
    """
    problems: list[str] = []
    finished = {e: r for e, r in wms.items() if r["status"] == "ok"}
    partial = {e: r for e, r in wms.items() if r["status"] == "timeout"
               and r.get("per_update") is not None and r["per_update"].size}
    # the warpmatch engines among themselves, update by update, on what they share
    have = {e: r["per_update"] for e, r in {**finished, **partial}.items()}
    names = sorted(have)
    for a, b in zip(names, names[1:]):
        n = min(have[a].size, have[b].size)
        diff = np.flatnonzero(have[a][:n] != have[b][:n])
        if diff.size:
            i = int(diff[0])
            problems.append(f"warpmatch {ENGINE_TITLE[a]} and {ENGINE_TITLE[b]} differ at "
                            f"{diff.size} updates (first: update {i}: {have[a][i]} vs "
                            f"{have[b][i]})")
    if rf["status"] == "crash":
        return ("MISMATCH" if problems else "peer crash"), problems
    if rf["status"] == "timeout":
        return ("MISMATCH" if problems else "peer timeout"), problems
    if rf["status"] != "ok":
        return ("MISMATCH" if problems else "peer error"), problems
    pu = rf.get("per_update")
    for e, r in {**finished, **partial}.items():
        mine = r["per_update"]
        if pu is not None:
            diff = np.flatnonzero(mine != pu[:mine.size])
            if diff.size:
                i = int(diff[0])
                problems.append(f"{ENGINE_TITLE[e]} differs from RapidFlow at {diff.size} of "
                                f"{mine.size} updates (first: update {i}: warpmatch "
                                f"{int(mine[i])}, RapidFlow {int(pu[i])})")
        elif e in finished and int(mine.sum()) != rf["count"]:
            problems.append(f"{ENGINE_TITLE[e]} total {int(mine.sum()):,} != RapidFlow's "
                            f"Result count {rf['count']:,}")
    if problems:
        return "MISMATCH", problems
    if not finished:
        if pu is not None and partial:
            done = max(r["per_update"].size for r in partial.values())
            return f"wm timeout, prefix ok ({done:,} upd)", problems
        if any(r["status"] == "error" for r in wms.values()):
            return "wm error", problems
        return "wm timeout", problems
    if pu is not None:
        return "per-update ok", problems
    return ("totals ok" if patched else "totals ok (no patch)"), problems


def _rate(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _secs(x: float) -> str:
    return f"{x:.2f}" if x >= 1 else f"{x:.3g}"


def _ratio(x: float) -> str:
    return f"{x:.3g}x"


def make_row(wl_name: str, qname: str, n: int, rf: dict[str, Any], wms: dict[str, dict[str, Any]],
             engines: list[str], limit: float, wm_limit: float) -> dict[str, Any]:
    """The table cells and the numbers behind them for one workload."""
    row: dict[str, Any] = {"workload": f"{wl_name} / {qname}", "updates": n}
    delta = rf["count"] if rf["status"] == "ok" else next(
        (int(r["per_update"].sum()) for r in wms.values() if r["status"] == "ok"), None)
    row["changed"] = delta
    rf_rate = n / rf["seconds"] if rf["status"] == "ok" and rf["seconds"] else None
    row["rf_rate"] = rf_rate
    cells = [row["workload"], f"{n:,}", "—" if delta is None else f"{delta:,}"]
    if rf["status"] == "ok":
        cells += [_secs(rf["seconds"]), _rate(rf_rate)]
    else:
        word = {"timeout": f">{limit:g}", "crash": "crash"}.get(rf["status"], "error")
        cells += [word, "t/o" if rf["status"] == "timeout" else word]
    ratios: dict[str, float | None] = {}
    ratio_cells = []
    for e in engines:
        r = wms.get(e)
        if r is None:
            cells.append("skip")
            ratio_cells.append("—")
            ratios[e] = None
            continue
        rate = n / r["seconds"] if r["status"] == "ok" and r["seconds"] else None
        r["rate"] = rate
        if r["status"] == "ok":
            cells.append(_rate(rate) + ("*" if r.get("jit_in_timing") else ""))
        elif r["status"] == "timeout":
            # the rate over the batches it finished, shown for information only
            pr = r.get("partial_rate")
            cells.append("t/o" + (f" (~{_rate(pr)})" if pr else ""))
        else:
            cells.append("error")
        ratios[e] = None
        if rate is not None and rf_rate is not None:
            ratios[e] = rate / rf_rate
            ratio_cells.append(_ratio(ratios[e]))
        elif rate is not None and rf["status"] == "timeout":
            # RapidFlow needed more than `limit` s for the stream: its rate < n / limit
            ratio_cells.append(">" + _ratio(rate / (n / limit)))
        elif r["status"] == "timeout" and rf_rate is not None:
            ratio_cells.append("<" + _ratio((n / wm_limit) / rf_rate))
        else:
            ratio_cells.append("—")
    row["ratios"] = ratios
    row["cells"] = cells + ratio_cells
    return row


def print_table(rows: list[dict[str, Any]], engines: list[str]) -> None:
    """The markdown table and the geometric means of the ratio columns."""
    head = (["workload", "updates", "Σ|Δ| embeddings", "RapidFlow s", "RapidFlow upd/s"]
            + [f"wm {ENGINE_TITLE[e]} upd/s" for e in engines]
            + [f"{ENGINE_TITLE[e]}/RF" for e in engines] + ["check"])
    lines = [r["cells"] + [r["check"]] for r in rows]
    widths = [max(len(h), *(len(x[i]) for x in lines)) if lines else len(h)
              for i, h in enumerate(head)]
    right = [False] + [True] * (len(head) - 2) + [False]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) if r else c.ljust(w)
                                 for c, w, r in zip(cells, widths, right)) + " |"
    print(fmt(head))
    print("|" + "|".join(("-" * (w + 1) + ":") if r else (":" + "-" * (w + 1))
                         for w, r in zip(widths, right)) + "|")
    for x in lines:
        print(fmt(x))
    print()
    for e in engines:
        vals = [r["ratios"][e] for r in rows if r["ratios"].get(e)]
        if vals:
            gm = math.exp(sum(math.log(v) for v in vals) / len(vals))
            print(f"geometric mean {ENGINE_TITLE[e]}/RF: {gm:.3g}x over {len(vals)} workload(s) "
                  "where both finished")
        else:
            print(f"geometric mean {ENGINE_TITLE[e]}/RF: n/a (no workload where both finished)")


def _gpu_available() -> tuple[bool, str]:
    try:
        import cupy
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:   # no CuPy, no driver, no device
        return False, f"{type(exc).__name__}: {exc}"
    if n < 1:
        return False, "no CUDA device"
    try:
        from warpmatch.stream.matcher import _gpu_engine_class
        _gpu_engine_class()
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return True, f"{n} CUDA device(s)"


def _strip(res: dict[str, Any]) -> dict[str, Any]:
    """A result dict without numpy arrays (for JSON)."""
    return {k: v for k, v in res.items() if not isinstance(v, np.ndarray)}


# ====================================================================== main
def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--_wm-child"]:
        try:
            _wm_child(argv[1])
        except Exception as exc:   # one line for the parent's table: type and first lines
            lines = list(dict.fromkeys(x.strip() for x in str(exc).splitlines() if x.strip()))
            print(json.dumps({"error": f"{type(exc).__name__}: {' / '.join(lines[:3])}"[:300]}),
                  flush=True)
            raise
        return 0
    ap = argparse.ArgumentParser(
        description="Continuous subgraph matching: warpmatch (CPU 1 thread, CPU all cores, "
                    "GPU) against RapidFlow on the same update streams, counting embeddings "
                    "(non-induced); per-update counts are cross-checked. See the module "
                    "docstring and bench/README.md for what is timed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  python bench/csm_peers.py --rapidflow ~/src/RapidFlow\n"
               "  python bench/csm_peers.py --rapidflow ~/src/RapidFlow --workloads yeast,hprd \\\n"
               "      --labeled-queries 1 --time-limit 60 --json out.json\n"
               "  python bench/csm_peers.py --rapidflow build/RapidFlow.out --rapidflow-src "
               "~/src/RapidFlow \\\n"
               "      --workloads email-Eu-core --patterns triangle,4-clique\n"
               "  python bench/csm_peers.py --rapidflow ~/src/RapidFlow --workloads powerlaw "
               "--powerlaw-edges 1e5")
    ap.add_argument("--rapidflow", default=os.environ.get("WARPMATCH_RAPIDFLOW"),
                    help="RapidFlow's source directory (plain and check binaries are built "
                         "with cmake+make) or a built RapidFlow.out (totals only, unless "
                         "--rapidflow-src is given); default $WARPMATCH_RAPIDFLOW. Sources: "
                         "https://github.com/shixuansun/RapidFlow")
    ap.add_argument("--rapidflow-src", help="with a binary --rapidflow: the sources to build "
                                            "the per-update check variant from")
    ap.add_argument("--peer-build-dir", help="where to build RapidFlow (default "
                                             "~/.cache/warpmatch-bench/rapidflow-<hash>)")
    ap.add_argument("--workloads", default="labeled,unlabeled",
                    help="groups (labeled, unlabeled) or graphs (yeast, human, hprd, "
                         "email-Eu-core, powerlaw), comma-separated (default: both groups; "
                         "graphs whose data is missing are skipped with the reason)")
    ap.add_argument("--data", help="data directory (default $WARPMATCH_DATA or ../shared/data)")
    ap.add_argument("--labeled-queries", type=int, default=2,
                    help="query_{dense,sparse}_16_{1..N}.graph files per labeled graph "
                         "(default 2)")
    ap.add_argument("--rw-sizes", default="4,6,8",
                    help="sizes of the random-walk queries on labeled graphs, dense and "
                         "sparse ('' for none; default 4,6,8)")
    ap.add_argument("--rw-per-size", type=int, default=1,
                    help="random-walk queries per size and density, seeds 0..N-1 "
                         "(default 1)")
    ap.add_argument("--patterns", default=",".join(PATTERNS),
                    help=f"named patterns of the unlabeled workloads (default: "
                         f"{','.join(PATTERNS)})")
    ap.add_argument("--powerlaw-edges", type=float, default=1e7,
                    help="about this many undirected edges in the generated R-MAT graph "
                         "(default 1e7)")
    ap.add_argument("--passes", type=int, default=1,
                    help="the stream, its inverse (last update first, inserts and deletes "
                         "swapped), the stream again, ...: this many passes in one stream, "
                         "for both sides (default 1; more measure past a matcher's first "
                         "milliseconds on short streams such as hprd's)")
    ap.add_argument("--seed", type=int, default=1,
                    help="seed of the streams (make_stream) and of the power-law graph "
                         "(default 1)")
    ap.add_argument("--engines", default=",".join(DEFAULT_ENGINES),
                    help="warpmatch engines: cpu1 (1 thread), cpuN (all cores), gpu "
                         "(only where CuPy and a device are present), each also with "
                         "-rel (keep='relevant': only the edges the query can read are "
                         "kept, other updates are not validated, as in RapidFlow); "
                         "default cpu1,cpuN,gpu")
    ap.add_argument("--cpu-batch", type=int, default=4096,
                    help="CPU engines' batch size (default 4096)")
    ap.add_argument("--gpu-batch", type=int, default=4096,
                    help="GPU engine's batch size (default 4096)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="timed runs per side and workload, median reported (default 1)")
    ap.add_argument("--time-limit", type=float, default=120.0,
                    help="seconds per RapidFlow run, its -time_limit (default 120)")
    ap.add_argument("--wm-time-limit", type=float, default=None,
                    help="seconds per warpmatch engine run, checked between batches "
                         "(default: --time-limit)")
    ap.add_argument("--grace", type=float, default=None,
                    help="a run still going this long after its limit is killed (default: "
                         "max(30, limit/2))")
    ap.add_argument("--setup-limit", type=float, default=None,
                    help="seconds for a warpmatch child's loading and warm-up (default: "
                         "the warpmatch limit plus the grace period)")
    ap.add_argument("--warmup", type=int, default=512,
                    help="updates of the warm-up run: a separate matcher, 8 batches, "
                         "stopped after a quarter of the time limit, not timed (default 512)")
    ap.add_argument("--work-dir", help="keep the converted files here (default: a temporary "
                                       "directory, removed at the end)")
    ap.add_argument("--specialise", choices=("always", "auto", "never"), default="always",
                    help="the CPU engines' compiled delta plans (CpuDeltaEngine's specialise): "
                         "'always' (default) compiles them in the untimed warm-up, as a "
                         "long-running process has them; 'never' times the plan-interpreting "
                         "kernel")
    ap.add_argument("--pin-cpu", type=int, default=None, metavar="CPU",
                    help="run RapidFlow and every one-thread warpmatch engine on this CPU "
                         "only (the CPU-N engines on all): the same core and memory node "
                         "for both sides of a ratio (default: no pinning)")
    ap.add_argument("--json", metavar="FILE", help="write the raw results as JSON")
    args = ap.parse_args(argv)
    t_all = time.perf_counter()
    if not args.rapidflow:
        ap.error("--rapidflow is required (or set WARPMATCH_RAPIDFLOW): RapidFlow's source "
                 "directory or RapidFlow.out; get it with "
                 "git clone https://github.com/shixuansun/RapidFlow")
    for name in ("labeled_queries", "rw_per_size"):
        if getattr(args, name) < 0:
            ap.error(f"--{name.replace('_', '-')} must be >= 0")
    for name in ("cpu_batch", "gpu_batch", "repeats"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in ENGINES:
            ap.error(f"--engines: unknown {e!r}; known: {', '.join(ENGINES)}")
    pin = None
    if args.pin_cpu is not None:
        allowed = sorted(os.sched_getaffinity(0))
        if args.pin_cpu not in allowed:
            ap.error(f"--pin-cpu {args.pin_cpu}: not a CPU this process may run on "
                     f"({', '.join(map(str, allowed))})")
        pin = {args.pin_cpu}
        print(f"pinned: RapidFlow and the one-thread engines run on CPU {args.pin_cpu} only")
    limit = float(args.time_limit)
    wm_limit = float(args.wm_time_limit) if args.wm_time_limit is not None else limit
    grace_rf = args.grace if args.grace is not None else max(30.0, limit / 2)
    grace_wm = args.grace if args.grace is not None else max(30.0, wm_limit / 2)
    setup_limit = args.setup_limit if args.setup_limit is not None else wm_limit + grace_wm

    import signal

    def _terminate(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)      # runs the clean-up (children, temporary files)
    signal.signal(signal.SIGTERM, _terminate)

    import numba
    import warpmatch as wm

    peer = resolve_peer(args.rapidflow, args.rapidflow_src, args.peer_build_dir)
    set_up: set[str] = set()        # engines whose child finished once (kernels compiled)
    want_gpu = any(_is_gpu(e) for e in engines)
    gpu_ok, gpu_why = _gpu_available() if want_gpu else (False, "not selected")
    if want_gpu and not gpu_ok:
        engines = [e for e in engines if not _is_gpu(e)]
    root = data_root(args.data)
    workloads = build_workloads(args, root)

    print(f"# warpmatch {wm.__version__} vs RapidFlow — continuous matching, embeddings "
          "(non-induced)")
    print(f"machine: {os.cpu_count()} logical CPUs; numba {numba.__version__}, "
          f"{numba.config.NUMBA_NUM_THREADS} threads by default; python "
          f"{sys.version.split()[0]}")
    print(f"RapidFlow: {peer.plain} ({peer.note}); one thread; limit {limit:g} s per run")
    how = {"cpu1": "backend=cpu, threads=1", "cpuN": "backend=cpu, threads=None",
           "gpu": "backend=gpu"}
    how.update({f"{e}-rel": f"{h}, keep='relevant'" for e, h in list(how.items())})
    print("warpmatch engines: " + ", ".join(
        f"{ENGINE_TITLE[e]} ({how[e]}, batch {args.gpu_batch if _is_gpu(e) else args.cpu_batch})"
        for e in engines) + f"; limit {wm_limit:g} s per run, checked between batches")
    if want_gpu and not gpu_ok:
        print(f"GPU: skipped ({gpu_why})")
    print(f"stream: make_stream(G, insert_fraction={INSERT_FRACTION}, "
          f"delete_fraction={DELETE_FRACTION}, seed={args.seed})"
          + (f", {args.passes} passes (stream, inverse, ...)" if args.passes > 1 else "")
          + f"; data: {root}")
    print()

    rows: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []
    skipped: list[str] = []
    all_problems: list[str] = []
    errors: list[tuple[str, str]] = []
    jit_runs: list[str] = []
    notes: set[str] = set()
    keep = Path(args.work_dir).expanduser().resolve() if args.work_dir else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    tmp_root = Path(tempfile.mkdtemp(prefix="wm_csm_peers_", dir=keep)) if keep else None
    ctx = tempfile.TemporaryDirectory(prefix="wm_csm_peers_") if tmp_root is None else None
    base = tmp_root if tmp_root is not None else Path(ctx.name)    # type: ignore[union-attr]
    try:
        for wl in workloads:
            if wl.skip:
                skipped.append(f"{wl.graph}: {wl.skip}")
                _log(f"[{wl.graph}] skipped: {wl.skip}")
                continue
            gdir = base / wl.graph
            gdir.mkdir(parents=True, exist_ok=True)
            g, files, n, ginfo = prepare_graph(wl, args.seed, gdir, args.passes)
            desc = wl.note
            ginfo["description"] = desc
            dropped = ginfo["dropped_self_loops"] + ginfo["dropped_duplicates"]
            print(f"graph {wl.graph}: {ginfo['vertices']:,} vertices, {ginfo['edges']:,} edges"
                  f"{' (' + desc + ')' if desc else ''}"
                  f"{f'; {dropped:,} self-loops/duplicates dropped' if dropped else ''}; "
                  f"G0 {ginfo['g0_edges']:,} edges; "
                  f"stream {n:,} updates ({ginfo['inserts']:,} +, {ginfo['deletes']:,} -); "
                  f"{ginfo['connect_isolated_in_g0']:,} insertions touch a vertex isolated "
                  f"in G0, {ginfo['reconnect_emptied']:,} one that lost all its edges")
            _log(f"[{wl.graph}] prepared in {ginfo['prepare_s']:.1f} s: {n:,} updates")
            for qname, make_q in wl.queries:
                label = f"{wl.graph} / {qname}"
                try:
                    q = make_q(g)
                except (ValueError, OSError) as exc:    # a missing file, no such walk
                    skipped.append(f"{label}: {type(exc).__name__}: {exc}")
                    _log(f"[{label}] skipped: {exc}")
                    continue
                why = rf_query_problem(q, ginfo["labeled"], ginfo["edge_labeled"])
                if why:
                    skipped.append(f"{label}: {why}")
                    continue
                qdir = gdir / re.sub(r"[^\w.-]", "_", qname)
                qdir.mkdir(exist_ok=True)
                qfiles = dict(files, query=qdir / "query.rf.graph", pickle=qdir / "query.pkl")
                write_rf_query(qfiles["query"], q)
                with open(qfiles["pickle"], "wb") as f:
                    pickle.dump(q, f)
                rf = rapidflow_runs(peer, qfiles, args.repeats, limit, grace_rf, qdir, n,
                                    cpus=pin)
                _log(f"[{label}] RapidFlow: {rf['status']}"
                     + (f" {rf['seconds']:.3f} s, count {rf['count']:,}" if rf["status"] == "ok"
                        else f" ({rf.get('detail')})")
                     + (f"; {rf['check_note']}" if rf.get("check_note") else ""))
                if rf.get("check_note"):
                    notes.add(rf["check_note"])
                wms: dict[str, dict[str, Any]] = {}
                for e in engines:
                    batch = args.gpu_batch if _is_gpu(e) else args.cpu_batch
                    # an engine's first child may compile numba's kernels from a cold
                    # cache (over 50 s on the H200 host): setup time, never timed
                    setup = setup_limit if e in set_up else max(setup_limit,
                                                                  COLD_SETUP_S)
                    r = run_warpmatch(qfiles, e, batch, wm_limit, grace_wm, setup,
                                      args.warmup, args.repeats, qdir, n, args.specialise,
                                      cpus=None if e.startswith("cpuN") else pin)
                    if r["status"] == "ok":
                        set_up.add(e)
                    wms[e] = r
                    if r["status"] == "error":
                        errors.append((f"{label} {ENGINE_TITLE[e]}", str(r.get("detail"))))
                    msg = (f"{r['seconds']:.3f} s ({n / r['seconds']:,.0f} upd/s)"
                           if r["status"] == "ok" and r["seconds"] else
                           f"{r['status']} ({r.get('detail')})")
                    if r.get("threads"):
                        msg += f", {r['threads']} thread(s)"
                    if r.get("jit_retimed"):
                        msg += (f", retimed: numba compiled {r['jit_retimed']} signature(s) "
                                "during the first timed run")
                    if r.get("jit_in_timing"):
                        msg += f", JIT IN TIMING ({r['jit_in_timing']} signatures)"
                        jit_runs.append(f"{label} {ENGINE_TITLE[e]}")
                    _log(f"[{label}] warpmatch {ENGINE_TITLE[e]}: {msg}")
                check, problems = compare(rf, wms, not peer.patch_failed)
                all_problems += [f"{label}: {p}" for p in problems]
                row = make_row(wl.graph, qname, n, rf, wms, engines, limit, wm_limit)
                row["check"] = check
                rows.append(row)
                _log(f"[{label}] done: check {check}")
                raw.append({"graph": ginfo, "query": qname, "query_edges": q.edges.tolist(),
                            "query_vertex_labels": q.vertex_labels.tolist(),
                            "rapidflow": _strip(rf),
                            "warpmatch": {e: _strip(r) for e, r in wms.items()},
                            "check": check, "problems": problems,
                            "ratios": row["ratios"], "rf_rate": row["rf_rate"]})
                if args.json:       # write as we go: a cut run keeps what it measured
                    _write_json(args, raw, skipped, peer, engines, limit, wm_limit)
            del g
            if keep is None:        # the converted files of a 10^7-edge graph take 100s of MB
                shutil.rmtree(gdir, ignore_errors=True)
    finally:
        if ctx is not None:
            ctx.cleanup()

    print()
    if rows:
        print_table(rows, engines)
    else:
        print("(no workload ran)")
    print()
    print("upd/s = stream updates / seconds; X/RF = warpmatch upd/s / RapidFlow upd/s (>1: "
          "warpmatch faster); t/o = cut by the time limit (>x / <x: bound from the limit; "
          "(~r): warpmatch's rate over the batches it finished, not compared); counts of a run "
          "cut by its limit are never compared except the prefix it finished")
    for nt in sorted(notes):
        print(f"note: {nt}")
    if jit_runs:
        print(f"note: numba compiled during the timed loop in {len(jit_runs)} run(s) (the rate "
              f"of a finished one is marked *): {', '.join(jit_runs)}")
    for s in skipped:
        print(f"skipped: {s}")
    print("count check: " + ("every finished run agrees" if not all_problems
                             else "MISMATCH: " + "; ".join(all_problems)))
    print(f"total wall time {time.perf_counter() - t_all:.0f} s")
    if errors:
        by_msg: dict[str, list[str]] = {}
        for run, msg in errors:
            by_msg.setdefault(msg, []).append(run)
        for msg, runs in by_msg.items():
            print(f"warpmatch error in {len(runs)} run(s) ({', '.join(runs[:3])}"
                  f"{', ...' if len(runs) > 3 else ''}): {msg}")
    if args.json:
        _write_json(args, raw, skipped, peer, engines, limit, wm_limit)
    return 1 if all_problems else 2 if errors else 0


def _write_json(args: argparse.Namespace, raw: list[dict[str, Any]], skipped: list[str],
                peer: Peer, engines: list[str], limit: float, wm_limit: float) -> None:
    doc = {"args": vars(args), "rapidflow": {"plain": str(peer.plain),
                                             "check": str(peer.check) if peer.check else None,
                                             "note": peer.note},
           "engines": engines, "time_limit": limit, "wm_time_limit": wm_limit,
           "cpu_count": os.cpu_count(), "results": raw, "skipped": skipped}
    tmp = Path(args.json + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=_json_default))
    os.replace(tmp, args.json)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, Path):
        return str(o)
    raise TypeError(type(o).__name__)


if __name__ == "__main__":
    sys.exit(main())
