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
import os
import pickle
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
# this script's parts, imported by name (bench/ is not a package): _csm_workloads.py (graphs,
# queries, streams and their files), _csm_child.py (warpmatch's engines, each timed in a child
# process), _csm_report.py (count checks, table, JSON); rapidflow_peer.py: RapidFlow's side
from _csm_child import (  # noqa: E402
    COLD_SETUP_S, DEFAULT_ENGINES, ENGINE_TITLE, ENGINES, child_main, is_gpu, run_warpmatch)
from _csm_report import compare, make_row, print_table, strip_arrays, write_json  # noqa: E402
from _csm_workloads import (  # noqa: E402
    DELETE_FRACTION, INSERT_FRACTION, PATTERNS, Workload, build_workloads, data_root,
    prepare_graph)
from rapidflow_peer import (  # noqa: E402
    Peer, rapidflow_runs, resolve_peer, rf_query_problem, write_rf_query)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


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


@dataclass
class Session:
    """One run of the script: its settings, and what its workloads leave for the summary."""

    args: argparse.Namespace
    engines: list[str]
    pin: set[int] | None
    peer: Peer
    limit: float
    wm_limit: float
    grace_rf: float
    grace_wm: float
    setup_limit: float
    #: engines whose child finished once (kernels compiled)
    set_up: set[str] = field(default_factory=set)
    rows: list[dict[str, Any]] = field(default_factory=list)
    raw: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    all_problems: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    jit_runs: list[str] = field(default_factory=list)
    notes: set[str] = field(default_factory=set)


# ====================================================================== main
def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str], set[int] | None]:
    """The command line, checked: the arguments, the engines and ``--pin-cpu``'s CPU set."""
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
    return args, engines, pin


def start(args: argparse.Namespace, engines: list[str],
          pin: set[int] | None) -> tuple[Session, list[Workload]]:
    """Set the limits, resolve (build) RapidFlow, drop the GPU engines where no device is
    present, select the workloads and print the header (machine, both sides, stream)."""
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
    want_gpu = any(is_gpu(e) for e in engines)
    gpu_ok, gpu_why = _gpu_available() if want_gpu else (False, "not selected")
    if want_gpu and not gpu_ok:
        engines = [e for e in engines if not is_gpu(e)]
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
        f"{ENGINE_TITLE[e]} ({how[e]}, batch {args.gpu_batch if is_gpu(e) else args.cpu_batch})"
        for e in engines) + f"; limit {wm_limit:g} s per run, checked between batches")
    if want_gpu and not gpu_ok:
        print(f"GPU: skipped ({gpu_why})")
    print(f"stream: make_stream(G, insert_fraction={INSERT_FRACTION}, "
          f"delete_fraction={DELETE_FRACTION}, seed={args.seed})"
          + (f", {args.passes} passes (stream, inverse, ...)" if args.passes > 1 else "")
          + f"; data: {root}")
    print()
    session = Session(args, engines, pin, peer, limit, wm_limit, grace_rf, grace_wm,
                      setup_limit)
    return session, workloads


def run_workloads(s: Session, workloads: list[Workload]) -> None:
    """Every workload in its own directory under ``--work-dir`` (kept) or a temporary one."""
    keep = Path(s.args.work_dir).expanduser().resolve() if s.args.work_dir else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    tmp_root = Path(tempfile.mkdtemp(prefix="wm_csm_peers_", dir=keep)) if keep else None
    ctx = tempfile.TemporaryDirectory(prefix="wm_csm_peers_") if tmp_root is None else None
    base = tmp_root if tmp_root is not None else Path(ctx.name)    # type: ignore[union-attr]
    try:
        for wl in workloads:
            if wl.skip:
                s.skipped.append(f"{wl.graph}: {wl.skip}")
                _log(f"[{wl.graph}] skipped: {wl.skip}")
                continue
            run_workload(s, wl, base / wl.graph, keep is not None)
    finally:
        if ctx is not None:
            ctx.cleanup()


def run_workload(s: Session, wl: Workload, gdir: Path, keep: bool) -> None:
    """One data graph: its stream and files in ``gdir`` (removed after unless ``keep``),
    then each of its queries."""
    gdir.mkdir(parents=True, exist_ok=True)
    g, files, n, ginfo = prepare_graph(wl, s.args.seed, gdir, s.args.passes)
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
        run_query(s, wl.graph, qname, make_q, g, files, n, ginfo, gdir)
    del g
    if not keep:        # the converted files of a 10^7-edge graph take 100s of MB
        shutil.rmtree(gdir, ignore_errors=True)


def run_query(s: Session, graph: str, qname: str, make_q: Callable[[Any], Any], g: Any,
              files: dict[str, Path], n: int, ginfo: dict[str, Any], gdir: Path) -> None:
    """One query on a prepared graph: RapidFlow, every warpmatch engine, the count check,
    the table row and the raw result (``--json``, written as we go)."""
    label = f"{graph} / {qname}"
    try:
        q = make_q(g)
    except (ValueError, OSError) as exc:    # a missing file, no such walk
        s.skipped.append(f"{label}: {type(exc).__name__}: {exc}")
        _log(f"[{label}] skipped: {exc}")
        return
    why = rf_query_problem(q, ginfo["labeled"], ginfo["edge_labeled"])
    if why:
        s.skipped.append(f"{label}: {why}")
        return
    qdir = gdir / re.sub(r"[^\w.-]", "_", qname)
    qdir.mkdir(exist_ok=True)
    qfiles = dict(files, query=qdir / "query.rf.graph", pickle=qdir / "query.pkl")
    write_rf_query(qfiles["query"], q)
    with open(qfiles["pickle"], "wb") as f:
        pickle.dump(q, f)
    rf = rapidflow_runs(s.peer, qfiles, s.args.repeats, s.limit, s.grace_rf, qdir, n,
                        cpus=s.pin)
    _log(f"[{label}] RapidFlow: {rf['status']}"
         + (f" {rf['seconds']:.3f} s, count {rf['count']:,}" if rf["status"] == "ok"
            else f" ({rf.get('detail')})")
         + (f"; {rf['check_note']}" if rf.get("check_note") else ""))
    if rf.get("check_note"):
        s.notes.add(rf["check_note"])
    wms = run_engines(s, qfiles, qdir, n, label)
    check, problems = compare(rf, wms, not s.peer.patch_failed)
    s.all_problems += [f"{label}: {p}" for p in problems]
    row = make_row(graph, qname, n, rf, wms, s.engines, s.limit, s.wm_limit)
    row["check"] = check
    s.rows.append(row)
    _log(f"[{label}] done: check {check}")
    s.raw.append({"graph": ginfo, "query": qname, "query_edges": q.edges.tolist(),
                  "query_vertex_labels": q.vertex_labels.tolist(),
                  "rapidflow": strip_arrays(rf),
                  "warpmatch": {e: strip_arrays(r) for e, r in wms.items()},
                  "check": check, "problems": problems,
                  "ratios": row["ratios"], "rf_rate": row["rf_rate"]})
    if s.args.json:       # write as we go: a cut run keeps what it measured
        write_json(s.args, s.raw, s.skipped, s.peer, s.engines, s.limit, s.wm_limit)


def run_engines(s: Session, qfiles: dict[str, Path], qdir: Path, n: int,
                label: str) -> dict[str, dict[str, Any]]:
    """Every warpmatch engine on one query (:func:`run_warpmatch`), with a progress line
    each: the results by engine."""
    wms: dict[str, dict[str, Any]] = {}
    for e in s.engines:
        batch = s.args.gpu_batch if is_gpu(e) else s.args.cpu_batch
        # an engine's first child may compile numba's kernels from a cold
        # cache (over 50 s on the H200 host): setup time, never timed
        setup = s.setup_limit if e in s.set_up else max(s.setup_limit, COLD_SETUP_S)
        r = run_warpmatch(qfiles, e, batch, s.wm_limit, s.grace_wm, setup,
                          s.args.warmup, s.args.repeats, qdir, n, s.args.specialise,
                          cpus=None if e.startswith("cpuN") else s.pin)
        if r["status"] == "ok":
            s.set_up.add(e)
        wms[e] = r
        if r["status"] == "error":
            s.errors.append((f"{label} {ENGINE_TITLE[e]}", str(r.get("detail"))))
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
            s.jit_runs.append(f"{label} {ENGINE_TITLE[e]}")
        _log(f"[{label}] warpmatch {ENGINE_TITLE[e]}: {msg}")
    return wms


def print_summary(s: Session, t_all: float) -> int:
    """The table, the notes and the count check after the runs (and the final ``--json``):
    the exit status."""
    print()
    if s.rows:
        print_table(s.rows, s.engines)
    else:
        print("(no workload ran)")
    print()
    print("upd/s = stream updates / seconds; X/RF = warpmatch upd/s / RapidFlow upd/s (>1: "
          "warpmatch faster); t/o = cut by the time limit (>x / <x: bound from the limit; "
          "(~r): warpmatch's rate over the batches it finished, not compared); counts of a run "
          "cut by its limit are never compared except the prefix it finished")
    for nt in sorted(s.notes):
        print(f"note: {nt}")
    if s.jit_runs:
        print(f"note: numba compiled during the timed loop in {len(s.jit_runs)} run(s) (the "
              f"rate of a finished one is marked *): {', '.join(s.jit_runs)}")
    for sk in s.skipped:
        print(f"skipped: {sk}")
    print("count check: " + ("every finished run agrees" if not s.all_problems
                             else "MISMATCH: " + "; ".join(s.all_problems)))
    print(f"total wall time {time.perf_counter() - t_all:.0f} s")
    if s.errors:
        by_msg: dict[str, list[str]] = {}
        for run, msg in s.errors:
            by_msg.setdefault(msg, []).append(run)
        for msg, runs in by_msg.items():
            print(f"warpmatch error in {len(runs)} run(s) ({', '.join(runs[:3])}"
                  f"{', ...' if len(runs) > 3 else ''}): {msg}")
    if s.args.json:
        write_json(s.args, s.raw, s.skipped, s.peer, s.engines, s.limit, s.wm_limit)
    return 1 if s.all_problems else 2 if s.errors else 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    :func:`parse_args` < :func:`start` (peer, engines, workloads, header) <
    :func:`run_workloads` (:func:`run_workload` < :func:`run_query` < :func:`run_engines`)
    < :func:`print_summary`; with ``--_wm-child SPEC``, one engine's timed run instead.
    """
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--_wm-child"]:     # a warpmatch engine's timed run (run_warpmatch)
        return child_main(argv[1])
    args, engines, pin = parse_args(argv)
    t_all = time.perf_counter()
    if pin is not None:
        print(f"pinned: RapidFlow and the one-thread engines run on CPU {args.pin_cpu} only")
    s, workloads = start(args, engines, pin)
    run_workloads(s, workloads)
    return print_summary(s, t_all)


if __name__ == "__main__":
    sys.exit(main())
