#!/usr/bin/env python3
"""warpmatch's GPU engine vs EGSM on the shipped labeled query sets (issue 23): the same
data graphs and queries of up to 16 vertices, counted by both, side by side.

EGSM (Sun & Luo, SIGMOD'23, https://github.com/RapidsAtHKUST/EGSM) is a GPU subgraph matcher
for vertex-labeled graphs: Cuckoo-trie candidate filtering, adaptive ordering, a hybrid
BFS-DFS join. This script builds its binary from ``--egsm`` (a ``git archive`` of it, read
only: the build adapts a copy in ``--build-dir``), converts each data graph and query to its
input format, runs ``EGSM -q QUERY -d DATA`` once per query (killed at ``--time-limit``),
parses its count and times, and runs ``warpmatch.count_result(g, q, backend="gpu")`` (and,
with ``--cpu``, the CPU engine) on the same files. No EGSM code is in this repository.
References are to EGSM commit de854d5; ``bench/_egsm_io.py`` holds the formats, the output
parser and the build, ``bench/_egsm_check.py`` the ``--self-check``.

What is counted
---------------
EGSM's ``# Matches: N`` (``main.cpp:98``) is the number of **embeddings, non-induced,
vertex-labeled**: injective maps of the query into the data graph that keep vertex labels
and send every query edge onto a data edge; every automorphic copy is counted:

- injective: a candidate equal to a vertex already in the partial match is dropped
  (``processing/join_bfs_dfs.cu:355-364, 994-1003``); every complete match adds 1 with
  ``atomicAdd`` (``join_bfs_dfs.cu:375-377, 1014-1016``), an ``unsigned long long``;
- no symmetry breaking: the query's automorphisms are never computed (nothing in the
  sources restricts candidates by vertex order);
- non-induced: a candidate is tested only along query edges (``gpuIntersection``,
  ``processing/common.h:84-119``: the vertex's edge slots); query non-edges are not tested;
- labels: the query's labels are numbered first and data vertices with other labels are
  never candidates (``graph/graph.cpp:58-77``); edge labels are not read (the shipped ones
  are all 0: checked);
- no result limit and no time limit of its own: the last join pass counts without storing
  (``execution/execution.cu:157-180`` passes ``only_one_group = false``; stores happen only
  when it is true, ``join_bfs_dfs.cu:1017``); the 6e9-byte result pool
  (``utils/config.h:17``) bounds only the stored partial results of earlier groups, and a
  group that overflows it is redone within that counting pass ("Combine remaining groups.",
  ``execution.cu:136-141``). ``-m BFS``/``DFS`` only regroup the plan
  (``processing/plan.cu:492-604``); ``main.cpp:96`` always runs ``matchDFSGroup``.

So it is compared with warpmatch's default ``count_result`` (``mode="embeddings",
induced=False``). Counts must be equal where both finished; a difference, or a warpmatch
lower bound (cut by the limit) above EGSM's count, is printed as ``MISMATCH``, counted per
set and makes the script exit with status 1.

Limits and failures: a query may have at most 16 vertices and 32 edges
(``utils/config.h:10-11``; ``graph/graph.cpp:37-41`` prints "The query graph should have at
most 16 vertices and 32 edges." and exits). Such a query is not given to EGSM (``EGSM
unsupported``). The shipped sets of up to 16 vertices are ``dense_16``, ``sparse_16``
(yeast, hprd, human) and ``dense_12``, ``sparse_12`` (human); the sparse ones all fit (16 or
22 edges), many dense ones do not (human ``dense_16``: 32-120 edges). By default each set
gives its first ``--per-set`` queries that EGSM can take (by number: ``_1``, ``_2``, ...), the
ones skipped on the way counted in the table; ``--all-queries`` takes the first ``--per-set``
whatever their size (warpmatch alone runs the others). EGSM's join launches child kernels
from the device (dynamic parallelism); a failed device-side launch prints ``FILE (LINE):
ERROR`` (``join_bfs_dfs.cu:727-729, 932-934``) and, its ``assert`` compiled out in the
Release build, the kernel goes on without that work: such a run is an ``error``, its count
not compared. One more thing to know when
a count differs on 13-16 vertices: ``unmap_u`` resets the edge slots of query vertices
``lane_id < 12`` only (``processing/join_bfs_dfs.h:227``), where ``map_new_v`` sets them for
``lane_id < MAX_VCOUNT`` (line 184); ``--fix-unmap12`` builds a separate diagnostic copy
with 16 there (never the default).

Formats
-------
The shipped files are ``t 0 N``, ``v id label``, ``e u v label``; EGSM reads ``t N M``
(the array sizes), ``v id label degree`` (in id order: ``offsets[id + 1] = offsets[id] +
degree``) and ``e u v`` after both endpoints (``graph.cpp:36-121``; read as is, the shipped
header and edge labels would be misread). Each file is converted once per run into
``--work-dir``: degrees computed, each edge once as ``u < v`` in sorted order (so every
neighbour list is ascending, as ``processing/plan.cu:30-42`` needs for the query), checked
by a model of EGSM's reader (``_egsm_io.egsm_reader``). warpmatch reads the original files;
the data graph EGSM reads is checked equal to warpmatch's (CSR and labels), as is each query.

What is timed
-------------
- **EGSM**: one process per query. ``EGSM s`` is the sum of the three times it prints,
  CUDA-event ("kernel") milliseconds, truncated: ``Build Cuckoo Tries`` + ``Filtering``
  (filtering, ``main.cpp:58-69``) + ``Total join`` (enumeration, the sum of its groups,
  ``execution.cu:57-182``); the host ``std::chrono`` sums are in the JSON. EGSM prints no
  ordering time: its static plan (``main.cpp:78``, host, the query only) is untimed and its
  adaptive ordering runs inside the join. ``EGSM wall s`` is the whole process (CUDA context,
  reading the text graph, uploading it, the 6 GB pool). It runs with
  ``CUDA_MODULE_LOADING=EAGER`` (CUDA 11.7's default, EGSM's toolkit), so module loading
  stays out of its first timed region. Killed ``--time-limit`` s after it started.
- **warpmatch**: the graph is read and the process warmed once per graph (a count of
  ``a-b``: device, CuPy, upload; reported apart), then each query once, as a new query
  (no untimed call per query): ``wm s`` is ``count_result``'s wall time including the
  query's compilation (NVRTC; ``r.compile_seconds``), ``wm -compile s`` the same without
  it. CuPy's kernel cache starts empty (a fresh ``CUPY_CACHE_DIR``, unless
  ``--keep-kernel-cache``); ``WARPMATCH_GPU_BACKGROUND_COMPILE=0`` unless
  ``--background-compile``; ``--compile`` sets ``WARPMATCH_GPU_COMPILE``. ``--cpu``: the
  CPU engine the same way.
- **solved** = the full count within the limit: EGSM exited with a count before it was
  killed; warpmatch was not cut (``r.partial``) and its wall time with compilation is
  within the limit (one that finished later is ``slow``: its count is still compared).
  Medians and p99 are over each system's solved queries; the ratio EGSM s / wm s is the
  geometric mean over the queries both solved (above 1: warpmatch faster), against wm s
  with and without compilation.

Build
-----
The tree is copied to ``--build-dir``/src (``cub/`` left out, see below) and built with
``cmake -S src -B build -DCMAKE_BUILD_TYPE=Release`` and ``cmake --build build --target
EGSM -j N`` (reused while sources and options are unchanged; commands printed; on failure
the log's last lines). Changes in the copy, all needed for CUDA 13 (checked: CUDA 13.0,
CMake 3.25, no GPU; ptxas: ``joinDFSGroupKernel`` 70 registers, 49,008 B shared memory):

1. ``CMakeLists.txt:54,73``: ``CUDA_ARCHITECTURES "70"`` -> ``--cuda-arch`` (90 for H100
   and H200; CUDA 13 dropped sm_70);
2. ``CMakeLists.txt:13``: ``include_directories(/usr/local/cuda-11.7/include)`` -> the
   toolkit's include directory (g++ compiles ``main.cpp``, which includes
   ``cuda_runtime.h``);
3. the bundled ``cub/`` (CUB 1.17) is not copied (nvcc >= 12): it includes thrust headers
   that CCCL no longer has (``thrust/detail/integer_traits.h``), so ``<cub/cub.cuh>`` is
   the toolkit's.

Examples
--------
    mkdir -p .peers/egsm && git -C /work/.mirror/RapidsAtHKUST+EGSM/repo archive HEAD \\
        | tar -x -C .peers/egsm
    python bench/egsm_peer.py --self-check              # formats and parser; no GPU needed
    python bench/egsm_peer.py --egsm .peers/egsm --cuda-arch 90 --build-only   # ~3 min
    # on the GPU machine (device tool: carry [".peers/egsm", ".devdata"], plus "build/egsm"
    # to reuse the build above), from the repo root, after
    # python3 -m pip install -q --no-deps --no-build-isolation -e .
    WARPMATCH_DATA=$PWD/.devdata python3 bench/egsm_peer.py --egsm .peers/egsm \\
        --cuda-arch 90 --graphs yeast --per-set 5 --time-limit 10 --cpu --json $OUT/egsm.json
    WARPMATCH_DATA=$PWD/.devdata python3 bench/egsm_peer.py --egsm .peers/egsm \\
        --cuda-arch 90 --graphs human --sets sparse_12,dense_12 --per-set 5 --time-limit 10
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:       # bench/ is not a package; appended, so that
    sys.path.append(str(HERE))      # bench/distributed.py never hides Dask's package
from _egsm_io import (MAX_VCOUNT, TARGET, build_egsm, convert_file,  # noqa: E402
                      parse_egsm_output, same_graph, same_query)
from _gmatch_build import _log  # noqa: E402
from _sibling import load  # noqa: E402

ROOT = HERE.parent
DATA = Path(os.environ.get("WARPMATCH_DATA", ROOT / ".." / "shared" / "data"))
GM = load("gmatch_peer")        # _free_device_pools, _device_name, _gpu_visible, cells
_QNAME = re.compile(r"^query_(dense|sparse)_(\d+)_(\d+)\.graph$")


# ====================================================================== query sets
def list_sets(graph: str) -> dict[str, list[Path]]:
    """``{"dense_16": [query_dense_16_1.graph, _2, ...], ...}`` for ``graph``, by number."""
    qdir = DATA / "labeled" / graph / "query_graph"
    sets: dict[str, list[tuple[int, Path]]] = {}
    for p in qdir.glob("query_*.graph"):
        m = _QNAME.match(p.name)
        if m:
            sets.setdefault(f"{m.group(1)}_{m.group(2)}", []).append((int(m.group(3)), p))
    return {s: [p for _, p in sorted(v)] for s, v in sorted(sets.items())}


def set_size(name: str) -> int:
    """The query size of a set name (``dense_16`` -> 16)."""
    return int(name.rsplit("_", 1)[1])


def select(graph: str, sets: list[str] | None, per_set: int, all_queries: bool,
           work: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The queries to run on ``graph``, converted, and per set what was taken or skipped.

    ``sets`` None: every shipped set of at most 16 vertices. ``per_set`` 0: all.

    Returns
    -------
    (list of dict, list of dict)
        Query records (``graph``, ``set``, ``query``, ``file``, ``egsm_file``, ``k``, ``m``,
        ``unsupported``, ``notes``) and per set ``{set, taken, skipped_unsupported,
        available}``.
    """
    have = list_sets(graph)
    names = sets if sets is not None else [s for s in have if set_size(s) <= MAX_VCOUNT]
    out, info = [], []
    for s in names:
        if s not in have:
            _log(f"{graph}: no query set {s} (has {', '.join(have) or 'none'}); skipped")
            continue
        taken = skipped = 0
        for p in have[s]:
            if per_set and taken >= per_set:
                break
            conv = convert_file(p, work / "queries" / graph / p.name)
            if conv["unsupported"] and not all_queries:
                skipped += 1
                continue
            out.append({"graph": graph, "set": s, "query": p.stem, "file": str(p),
                        "egsm_file": conv["file"], "k": conv["n"], "m": conv["m"],
                        "unsupported": conv["unsupported"], "notes": conv["notes"]})
            taken += 1
        info.append({"graph": graph, "set": s, "taken": taken, "available": len(have[s]),
                     "skipped_unsupported": skipped})
        if per_set and taken < per_set:
            _log(f"{graph} {s}: only {taken} of --per-set {per_set} queries "
                 f"({skipped} skipped: more than EGSM's 16 vertices / 32 edges)")
    return out, info


# ====================================================================== runs
def run_egsm(binary: Path, data: Path, query: Path, limit: float, log_path: Path,
             extra: list[str]) -> dict[str, Any]:
    """``EGSM -q QUERY -d DATA [extra]``, killed after ``limit`` s.

    Returns
    -------
    dict
        :func:`parse_egsm_output`'s fields and ``status`` ("ok", "timeout", "crash",
        "error"), ``detail``, ``rc``, ``wall_s``, ``cmd``, ``log``.
    """
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise SystemExit(f"EGSM binary {binary}: missing or not executable")
    cmd = [str(binary), "-q", str(query), "-d", str(data), *extra]
    # EAGER: module loading outside its timed regions; the library path: its libnd.so
    # (RUNPATH is the build folder's absolute path, wrong for a build carried elsewhere)
    env = {**os.environ, "CUDA_MODULE_LOADING": "EAGER", "LD_LIBRARY_PATH": os.pathsep.join(
        [str(binary.parent)] + [x for x in [os.environ.get("LD_LIBRARY_PATH")] if x])}
    killed = False
    t0 = time.perf_counter()
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            rc = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc, killed = proc.wait(), True
        finally:            # interrupted: leave no process on the GPU
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    res = parse_egsm_output(log_path.read_text(errors="replace"))
    res.update(status="ok", detail=None, rc=rc, wall_s=time.perf_counter() - t0,
               cmd=shlex.join(cmd), log=str(log_path))
    why = ([f"GPUassert: {res['gpu_assert']}"] if res["gpu_assert"] else []) + (
        ["query too large for EGSM"] if res["too_large"] else []) + (
        ["EGSM: File not exist!"] if res["missing_file"] else [])
    if killed:
        res.update(status="timeout", detail=f"killed after {limit:g} s")
    elif rc != 0:
        import signal
        sig = {s.value: s.name for s in signal.Signals}.get(-rc) if rc < 0 else None
        res.update(status="crash", detail="; ".join([sig or f"exit {rc}"] + why))
    elif res["kernel_errors"]:
        res.update(status="error", detail="device-side CUDA error(s), work skipped, count "
                   f"not trusted ({res['matches']}): " + "; ".join(res["kernel_errors"][:3]))
    elif res["matches"] is None or not res["end"] or res["seconds"] is None:
        res.update(status="error", detail="unparsable output: no '# Matches', 'End.' or "
                   "times; " + "; ".join(why))
    return res


def run_wm(g: Any, q: Any, backend: str, limit: float) -> dict[str, Any]:
    """One ``count_result(g, q, backend=backend, time_limit=limit)``, a new query.

    Returns
    -------
    dict
        ``status`` ("ok", "slow": finished after ``limit`` s of wall time, "timeout":
        cut, ``count`` a lower bound, "error"), ``count``, ``wall_s`` (with compilation),
        ``nocompile_s``, ``compile_s``, ``engine_s``, ``plan_s``, ``module``, ``detail``.
    """
    import warpmatch as wm
    t = time.perf_counter()
    try:
        r = wm.count_result(g, q, backend=backend, time_limit=limit)
    except Exception as exc:        # noqa: BLE001 - a row of the table, never dropped
        return {"status": "error", "count": None, "wall_s": time.perf_counter() - t,
                "detail": f"{type(exc).__name__}: {exc}"[:300]}
    wall = time.perf_counter() - t
    res = {"status": "ok", "count": int(r.count), "wall_s": wall,
           "compile_s": float(r.compile_seconds or 0.0),
           "nocompile_s": wall - float(r.compile_seconds or 0.0), "engine_s": r.seconds,
           "plan_s": r.plan_seconds, "module": r.gpu_module, "detail": None}
    if r.partial:
        res.update(status="timeout", detail=str(r.partial))
    elif wall > limit:
        res.update(status="slow", detail=f"finished in {wall:.2f} s > {limit:g} s")
    return res


def compare(row: dict[str, Any]) -> None:
    """Fill ``row['counts']`` (the exact counts by system), ``row['equal']`` (True, False, or
    None with fewer than two) and ``row['mismatch']`` (also a lower bound above an exact
    count)."""
    exact, lower = {}, {}
    for who in ("egsm", "gpu", "cpu"):
        r = row.get(who)
        if not r:
            continue
        if who == "egsm":
            if r["status"] == "ok":
                exact[who] = r["matches"]
        elif r["status"] in ("ok", "slow"):
            exact[who] = r["count"]
        elif r["status"] == "timeout" and r.get("count") is not None:
            lower[who] = r["count"]
    row["counts"] = exact
    row["equal"] = None if len(exact) < 2 else len(set(exact.values())) == 1
    over = [w for w, c in lower.items() if exact and c > min(exact.values())]
    row["mismatch"] = row["equal"] is False or bool(over)
    if row["mismatch"]:
        _log(f"*** MISMATCH {row['graph']} {row['query']}: exact {exact}, lower bounds "
             f"{lower} ***")


# ====================================================================== tables
def _pct(xs: list[float], q: float) -> float | None:
    return float(np.percentile(xs, q)) if xs else None


def _geo(xs: list[float]) -> float | None:
    xs = [x for x in xs if x > 0]
    return float(np.exp(np.mean(np.log(xs)))) if xs else None


def solved(r: dict[str, Any] | None) -> bool:
    return bool(r) and r["status"] == "ok"


def summarize(rows: list[dict[str, Any]], sel: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per graph and set: solved, median / p99 times, EGSM/wm geometric means, mismatches."""
    out = []
    for info in sel:
        rs = [r for r in rows if r["graph"] == info["graph"] and r["set"] == info["set"]]
        s = dict(info, queries=len(rs), egsm_unsupported=sum(bool(r["unsupported"]) for r in rs),
                 mismatches=sum(r["mismatch"] for r in rs))
        for who, keys in (("egsm", ("seconds", "wall_s")), ("gpu", ("wall_s", "nocompile_s")),
                          ("cpu", ("wall_s",))):
            ok = [r[who] for r in rs if solved(r.get(who))]
            s[f"{who}_solved"] = len(ok) if any(r.get(who) for r in rs) else None
            for k in keys:
                xs = [x[k] for x in ok]
                s[f"{who}_{k}_median"], s[f"{who}_{k}_p99"] = _pct(xs, 50), _pct(xs, 99)
        both = [r for r in rs if solved(r.get("egsm")) and solved(r.get("gpu"))]
        s["both_solved"] = len(both)
        # EGSM's times are whole ms: a 0 ms run counts as 0.5 ms in the ratio
        e = [max(r["egsm"]["seconds"], 5e-4) for r in both]
        s["ratio_geo"] = _geo([a / r["gpu"]["wall_s"] for a, r in zip(e, both)])
        s["ratio_nocompile_geo"] = _geo([a / max(r["gpu"]["nocompile_s"], 1e-6)
                                         for a, r in zip(e, both)])
        out.append(s)
    return out


def _t(s: dict[str, Any], key: str) -> str:
    m, p = s.get(f"{key}_median"), s.get(f"{key}_p99")
    return "-" if m is None else f"{m:.3f} / {p:.3f}"


def print_table(summary: list[dict[str, Any]], rows: list[dict[str, Any]], cpu: bool,
                limit: float) -> None:
    """The per-set markdown table, then a line per failed, slow or mismatched run."""
    cols = ["graph", "set", "queries (skipped: > 16 v / 32 e)", "EGSM solved", "wm GPU solved"]
    cols += ["wm CPU solved"] if cpu else []
    cols += ["EGSM s med / p99", "EGSM wall s med", "wm s med / p99",
             "wm -compile s med / p99"] + (["wm CPU s med / p99"] if cpu else [])
    cols += ["EGSM/wm geo (both)", "EGSM/wm -compile geo", "mismatches"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join(["---"] * 2 + ["---:"] * (len(cols) - 2)) + "|")
    for s in summary:
        q = f"{s['queries']} ({s['skipped_unsupported']})"
        if s["egsm_unsupported"]:
            q += f", {s['egsm_unsupported']} not for EGSM"
        cells = [s["graph"], s["set"], q, str(s["egsm_solved"]), str(s["gpu_solved"])]
        cells += [str(s["cpu_solved"])] if cpu else []
        wall = s["egsm_wall_s_median"]
        cells += [_t(s, "egsm_seconds"), "-" if wall is None else f"{wall:.3f}",
                  _t(s, "gpu_wall_s"), _t(s, "gpu_nocompile_s")]
        cells += [_t(s, "cpu_wall_s")] if cpu else []
        for k in ("ratio_geo", "ratio_nocompile_geo"):
            cells.append("-" if s[k] is None else f"{s[k]:.2f}x ({s['both_solved']})")
        cells.append(f"**{s['mismatches']}**" if s["mismatches"] else "0")
        print("| " + " | ".join(cells) + " |")
    for r in rows:
        for who, name in (("egsm", "EGSM"), ("gpu", "wm GPU"), ("cpu", "wm CPU")):
            x = r.get(who)
            if x and x["status"] not in ("ok", "timeout"):
                print(f"- {r['graph']} {r['query']}: {name} {x['status']}: {x['detail']}")
        if r["mismatch"]:
            print(f"- {r['graph']} {r['query']} ({r['k']} v, {r['m']} e): MISMATCH "
                  f"{r['counts']}")
    print(f"(limit {limit:g} s per query and system; medians/p99 over each system's solved "
          "queries; EGSM s = tries + filtering + join, CUDA events, whole ms: 0 ms is taken "
          "as 0.5 ms in the ratios)")


# ====================================================================== main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--egsm", default=None, help="EGSM's source tree (.peers/egsm)")
    ap.add_argument("--egsm-binary", default=None, help="run this built EGSM instead")
    ap.add_argument("--build-dir", default="build/egsm", help="EGSM's copy and build")
    ap.add_argument("--cuda-arch", default="90", help="CUDA architecture (90: H100/H200)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="build jobs")
    ap.add_argument("--fix-unmap12", action="store_true",
                    help="diagnostic build: unmap_u's lane_id < 12 -> 16 (not EGSM as is)")
    ap.add_argument("--build-only", action="store_true", help="build EGSM and exit")
    ap.add_argument("--graphs", default="yeast,hprd,human")
    ap.add_argument("--sets", default=None,
                    help="e.g. dense_16,sparse_12 (default: every set of <= 16 vertices)")
    ap.add_argument("--per-set", type=int, default=5, help="queries per set (0: all)")
    ap.add_argument("--all-queries", action="store_true",
                    help="take the first --per-set even if EGSM cannot (wm runs them)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="s per query and system")
    ap.add_argument("--cpu", action="store_true", help="also warpmatch's CPU engine")
    ap.add_argument("--compile", choices=("auto", "generic", "specialised"), default=None,
                    help="WARPMATCH_GPU_COMPILE (default: the environment's, else auto)")
    ap.add_argument("--background-compile", action="store_true")
    ap.add_argument("--keep-kernel-cache", action="store_true",
                    help="use CuPy's usual kernel cache (default: a fresh one)")
    ap.add_argument("--egsm-args", default="", help="extra EGSM arguments, e.g. '-m BFS'")
    ap.add_argument("--work-dir", default="build/egsm-work", help="converted files, logs")
    ap.add_argument("--json", default=None, help="every number, rewritten after each query")
    ap.add_argument("--self-check", action="store_true", help="CPU-only checks, then exit")
    args = ap.parse_args(argv)

    build_dir = Path(args.build_dir).resolve()
    if args.self_check:
        from _egsm_check import self_check
        return self_check(Path(args.egsm_binary) if args.egsm_binary
                          else build_dir / "build" / TARGET)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()] if args.sets else None
    for s in sets or []:
        if not re.fullmatch(r"(dense|sparse)_\d+", s):
            raise SystemExit(f"--sets {s}: expected dense_K or sparse_K")
        if set_size(s) > MAX_VCOUNT and not args.all_queries:
            raise SystemExit(f"--sets {s}: EGSM takes at most {MAX_VCOUNT} query vertices "
                             "(utils/config.h:10); --all-queries runs warpmatch alone on it")
    if not args.build_only and not (DATA / "labeled").is_dir():
        raise SystemExit(f"{DATA / 'labeled'} not found: set WARPMATCH_DATA")
    if args.egsm_binary:
        binary = Path(args.egsm_binary).resolve()
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise SystemExit(f"--egsm-binary {binary}: not an executable")
        build: dict[str, Any] = {"binary": str(binary), "given": True}
    elif args.egsm:
        binary, build = build_egsm(Path(args.egsm), build_dir, args.cuda_arch, args.jobs,
                                   args.fix_unmap12)
    else:
        ap.error("--egsm (EGSM's source tree) or --egsm-binary is required")
    if args.build_only:
        print(json.dumps(build, indent=1))
        return 0
    work = Path(args.work_dir).resolve()
    (work / "logs").mkdir(parents=True, exist_ok=True)
    # before warpmatch (and CuPy) are imported
    if not args.keep_kernel_cache:
        for var, prefix in (("CUPY_CACHE_DIR", "cupy-"), ("XDG_CACHE_HOME", "xdg-")):
            os.environ[var] = tempfile.mkdtemp(prefix=prefix, dir=work)
            atexit.register(shutil.rmtree, os.environ[var], True)
    os.environ["WARPMATCH_GPU_BACKGROUND_COMPILE"] = "1" if args.background_compile else "0"
    if args.compile:
        os.environ["WARPMATCH_GPU_COMPILE"] = args.compile
    import warpmatch as wm
    extra = shlex.split(args.egsm_args)
    device = GM._device_name()
    env = {k: os.environ.get(k) for k in ("WARPMATCH_GPU_COMPILE",
                                          "WARPMATCH_GPU_BACKGROUND_COMPILE", "CUPY_CACHE_DIR")}
    rows: list[dict[str, Any]] = []
    sel_all: list[dict[str, Any]] = []
    graphs: dict[str, Any] = {}

    def write_json() -> None:
        if args.json:
            Path(args.json).write_text(json.dumps({
                "args": vars(args), "device": device, "env": env, "egsm_build": build,
                "graphs": graphs, "rows": rows, "summary": summarize(rows, sel_all)},
                indent=1, default=str))

    for gname in (x.strip() for x in args.graphs.split(",") if x.strip()):
        src = DATA / "labeled" / gname / f"{gname}.graph"
        if not src.is_file():
            raise SystemExit(f"{gname}: {src} not found")
        conv = convert_file(src, work / "graphs" / f"{gname}.graph")
        t0 = time.perf_counter()
        g = wm.api.as_graph(src)
        diff = same_graph(g, Path(conv["file"]))
        if diff:
            raise SystemExit(f"{gname}: EGSM's file and warpmatch's graph differ: {diff}")
        ginfo = {**conv, "load_s": time.perf_counter() - t0}
        for backend in ("gpu",) + (("cpu",) if args.cpu else ()):
            t0 = time.perf_counter()
            try:
                wm.count_result(g, "a-b", backend=backend)
            except Exception as exc:    # noqa: BLE001 - no GPU, no comparison
                raise SystemExit(f"warpmatch's {backend} engine failed its warm-up on "
                                 f"{gname}: {type(exc).__name__}: {exc}") from exc
            ginfo[f"warmup_{backend}_s"] = time.perf_counter() - t0
        graphs[gname] = ginfo
        queries, sel = select(gname, sets, args.per_set, args.all_queries, work)
        sel_all += sel
        _log(f"{gname}: {g.n:,} vertices, {g.num_edges:,} edges; {len(queries)} queries")
        for rec in queries:
            q = wm.api.as_query(rec["file"], g)
            if not same_query(q, Path(rec["egsm_file"])):
                raise SystemExit(f"{rec['file']}: EGSM's copy is not warpmatch's query")
            row = dict(rec)
            if rec["unsupported"]:
                row["egsm"] = {"status": "unsupported", "detail": rec["unsupported"]}
            else:
                GM._free_device_pools()
                row["egsm"] = run_egsm(binary, Path(conv["file"]), Path(rec["egsm_file"]),
                                       args.time_limit,
                                       work / "logs" / f"{gname}__{rec['query']}.log", extra)
            row["gpu"] = run_wm(g, q, "gpu", args.time_limit)
            if args.cpu:
                row["cpu"] = run_wm(g, q, "cpu", args.time_limit)
            compare(row)
            rows.append(row)
            e, w = row["egsm"], row["gpu"]
            _log(f"  {gname} {rec['query']} ({rec['k']} v, {rec['m']} e): EGSM "
                 f"{e['status']} {e.get('matches')} {GM._fmt_s(e.get('seconds'))} s; wm "
                 f"{w['status']} {w['count']} {GM._fmt_s(w.get('wall_s'))} s (compile "
                 f"{GM._fmt_s(w.get('compile_s'))})" + (
                     f"; cpu {row['cpu']['status']} {row['cpu']['count']}" if args.cpu
                     else "") + ("  MISMATCH" if row["mismatch"] else ""))
            write_json()
        del g
    write_json()
    print(f"\nwarpmatch vs EGSM ({'given binary' if build.get('given') else 'built'}; "
          f"patches {build.get('patches')}); embeddings, non-induced, vertex-labeled; device "
          f"{device}\n")
    print_table(summarize(rows, sel_all), rows, args.cpu, args.time_limit)
    mism = sum(r["mismatch"] for r in rows)
    failed = sum(r["egsm"]["status"] in ("crash", "error") or r["gpu"]["status"] == "error"
                 or (args.cpu and r["cpu"]["status"] == "error") for r in rows)
    if mism or failed:
        print(f"\n{mism} MISMATCH(ES), {failed} failed run(s)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
