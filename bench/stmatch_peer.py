#!/usr/bin/env python3
"""warpmatch's GPU engine vs STMatch on unlabeled patterns (issue 21): the same graphs and
patterns, counted by both, side by side, with per-graph sums over the patterns.

What is where: this docstring (what STMatch counts and times, how it is built, with
file:line references); the runs (:func:`run_stmatch`, :func:`stmatch_runs`; warpmatch's
side is ``gmatch_peer.py``'s ``run_warpmatch``, imported, as are its graph loader and table
cells); :func:`pattern_file_text`; :func:`compare`, :func:`print_table`, :func:`graph_sums`,
:func:`print_sums`; :func:`self_check`; :func:`main`. ``bench/_stmatch_io.py`` holds
STMatch's file formats, limits, output parser and build (``prepare_sources``,
``build_stmatch``).

STMatch (Wei & Jiang, SC'22, https://github.com/HPC-Research-Lab/STMatch) is a stack-based
GPU subgraph matcher. Its benchmark binary is ``cu_test.cu`` linked with ``src/gpu_match.cu``
under one of the configurations of ``src/config_for_ae/``; the unlabeled, edge-induced
(non-induced) one is ``table_edge_ulb`` (``test_table3a.sh:8``, the paper's Table III (a)).
It takes the graph and the pattern as arguments, ``table_edge_ulb.exe GRAPH PATTERN``
(``cu_test.cu:12-13``): no recompilation per pattern. No STMatch code is part of this
repository: it is built from ``--stmatch`` (a ``git archive`` of it), copied to
``--build-dir``. References are to commit f98462a.

What is counted
---------------
STMatch prints the number of **embeddings, non-induced** (injective maps sending every
pattern edge onto a graph edge): each subgraph is found once under symmetry-breaking
restrictions, and the total is multiplied by |Aut(pattern)|:

- ``cu_test.cu:79-82``: the per-warp counts are summed and, unlabeled,
  ``tot_count = tot_count * p.PatternMultiplicity``; ``pattern.h:229-267``:
  ``PatternMultiplicity`` is the number of vertex permutations that preserve the pattern's
  adjacency, |Aut|;
- ``pattern.h:269-292``: restrictions from the automorphisms' stabiliser chain (for each
  vertex in order, those fixing the earlier ones), applied as upper bounds on candidate
  sets (``gpu_match.cu:377-403``, cut by ``upper_bound`` at ``gpu_match.cu:264-265``) and as
  ``r > c`` on the first edge (``job_queue.h:29``);
- ``gpu_match.cu:655-664``: at the last level it adds the last vertex's candidates;
- non-induced: ``table_edge_ulb.h:3`` sets ``EDGE_INDUCED = true``. A vertex's candidates
  intersect its earlier neighbours' lists (``gpu_match.cu:494-521``); an earlier
  non-neighbour is removed as a vertex only (the operand is the single matched vertex,
  ``gpu_match.cu:434-468, 527-530``), where the vertex-induced build subtracts its
  neighbour list (``gpu_match.cu:418-422, 470-487, 531-535``).

So STMatch's count is compared with ``count_result(..., mode="embeddings", induced=False)``:
the same work (warpmatch also finds each subgraph once and multiplies by ``plan.multiplier``).
A count that is not a multiple of warpmatch's |Aut| is noted. Issue 21's numbers for
pattern 12 on wiki-Vote are embeddings too: STMatch prints 850,925,682,064 where the exact
count is 840,036,045,156. Pattern 12 (``data/pattern/12.g``, or a pattern isomorphic to it)
is therefore compared knowingly: a difference is flagged ``known STMatch miscount`` and
reported, not counted as a MISMATCH.

Formats (``_stmatch_io.py``)
----------------------------
- graph: ``graph.h:50-54`` reads binary CSR only (``read_bin_file``, ``graph.h:131-158``):
  ``G.meta.txt`` (|V|, 2|E|, 4, largest degree), ``G.vertex.bin`` (|V| + 1 int64 offsets),
  ``G.edge.bin`` (2|E| int32 neighbours, rows sorted), ``G`` being the argument (STMatch's
  converter writes ``snap.txt.*``, ``graph_converter/compactify.cpp:26-48``); the unlabeled
  build reads no label file (``graph.h:151``). Its labels are then ``1 << 0x01010101``
  (``graph.h:148-156``: ``memset`` of bytes 1, then a shift past 31 bits, which x86 masks
  to ``1 << 1``), equal to the pattern's ``1 << 1`` (``pattern.h:85``), as the job queue
  requires (``job_queue.h:30``); ``--self-check``'s probe confirms it with this compiler.
- pattern: ``pattern.h:67-100``: leading ``#`` lines, ``v ID LABEL`` lines (the label is not
  used unlabeled, ``pattern.h:81-86``), ``e U V 1`` lines (the label must be 1,
  ``pattern.h:253``). The file order is the matching order (``pattern.h:103-153``: "input
  from dryadic is already reordered"): vertices 0-1 adjacent (the jobs are graph edges,
  ``job_queue.h:24-60``), 2 adjacent to 1 (``job_queue.h:32-38`` filters on it), each later
  vertex with an earlier neighbour. STMatch's own patterns are used as they are
  (``data/pattern/N.g`` for ``stmatchN``, checked isomorphic to warpmatch's copy); any
  other is written in a greedy dense-first order (``--order``).
- output: one line, ``PATTERN<TAB>MS<TAB>COUNT`` (``cu_test.cu:84``).

Compile-time limits (``src/config.h``): ``PAT_SIZE = 7`` pattern vertices (line 11),
``MAX_SLOT_NUM = 15`` candidate sets per pattern (line 13, asserted at ``pattern.h:385``),
``GRAPH_DEGREE = 4096`` entries per candidate set (line 12: a candidate set is part of one
neighbour list, so the graph's largest degree must fit; the copy is built with a larger one
when a graph needs it), ``int`` vertex ids and edge indices (line 5; ``job_queue.h:27``).
A pattern or graph past one is refused with the limit named.

What is timed
-------------
- **STMatch**: one process per graph and pattern (``--stmatch-repeats``, default 1; median).
  ``STMatch s`` is what it prints: CUDA events recorded around its one kernel launch
  (``cu_test.cu:58-75``, launch at line 66). Reading the graph, building the pattern's plan
  and the job queue on the host (``job_queue.h:24-60``), uploading and allocating the call
  stacks (``cu_test.cu:12-56``) are outside it; ``STMatch wall s`` is the whole process.
  It runs with ``CUDA_MODULE_LOADING=EAGER``: under CUDA's default lazy loading its
  kernel's module would be loaded between the two events. Killed ``--time-limit`` seconds
  after it started (``> limit``).
- **warpmatch**: ``count_result(graph, pattern, mode="embeddings", induced=False,
  backend="gpu", time_limit=--time-limit)`` on the graph already in memory: one untimed
  call (NVRTC compilation, graph upload), then the median of ``--repeats`` calls.
  ``warpmatch s`` is the call's wall time (planning + engine), ``wm engine s`` the
  engine's ``seconds``.
- **ratio** = STMatch s / warpmatch s: above 1 means warpmatch is faster. The sums table
  adds, per graph, both times over the patterns both finished, their ratio, and whether
  warpmatch's sum is at most a third of STMatch's (issue 21's target); patterns that timed
  out are counted apart.

Build
-----
``Makefile``, ``cu_test.cu`` and ``src/`` are copied to
``--build-dir``/``table_edge_ulb-ARCH-gGRID-dDEGREE``/src and built there with STMatch's own
rule, ``make bin/table_edge_ulb.exe`` (serial, as its README asks: the rule edits
``src/config.h``). That rule runs ``sed`` to include ``config_for_ae/table_edge_ulb.h``
(``Makefile:14-16, 23-24``), ``nvcc -std=c++17 -Xptxas -v -arch=ARCH -dc -I.
src/gpu_match.cu -o bin/table_edge_ulb.o`` and ``nvcc -std=c++17 -Xptxas -v -arch=ARCH
bin/table_edge_ulb.o cu_test.cu -o bin/table_edge_ulb.exe`` (``Makefile:6-12, 21-25``). A
build whose stamp (sources, recipe, options) matches is reused. Changes made in the copy:

1. ``Makefile:7,11``: ``-arch=compute_86`` (PTX for the RTX 3090 only, JIT-compiled at
   load on anything else) becomes ``-arch=native`` or ``-arch=sm_90`` (``--cuda-arch``).
2. ``src/config.h:15``: the include of ``table_edge_ulb.h``, as make's ``sed`` writes it
   (done first so that ``--self-check``'s probe, which does not run make, reads it too).
3. ``src/config.h:17``: ``GRID_DIM = 82`` is the RTX 3090's number of SMs (one block of
   1024 threads per SM: on sm_90 the kernel uses 64 registers a thread); ``--grid-dim
   auto`` (the default) sets the GPU's SM count (132 on an H100 SXM), ``--grid-dim
   stmatch`` keeps 82. Not needed to build it: a port to the GPU it runs on.
4. ``src/config.h:12``: ``GRAPH_DEGREE`` raised to the graph's largest degree rounded up
   to 1024 when that exceeds 4096 (``--graph-degree``); otherwise unchanged. The call
   stacks take 4 x 32 GRID_DIM x 15 x 8 x GRAPH_DEGREE bytes (8.3 GB at 132 x 4096).
5. ``cu_test.cu:71``: after the stop event, a check of CUDA's status that prints
   ``STMatch CUDA error: ...`` and exits 3. STMatch checks no CUDA call, so a failed
   allocation or launch would otherwise print a count of 0 as a result; the check runs
   after the timed region.

CUDA 13.0 compiles it with no other change (checked without a GPU, ``-arch=sm_90``: ptxas
reports 64 registers and 18,348 bytes of shared memory for ``_parallel_match``).

A count that differs is printed as ``MISMATCH`` and makes the script exit with status 1,
as does an STMatch run that crashed or printed no count; timeouts are reported, not
failures; pattern 12 is the known exception above.

Graphs: ``chung-lu`` (``--edges``, ``--seed``: ``bench/gpu.py``'s ``power_law_gpu``, cached
as a ``.wmg`` in ``--work-dir``; ``chung-lu:1e8`` sets the size inline) and ``snap:PATH``
(``warpmatch.read_graph``, undirected; ``snap:email-Eu-core`` looks in
``$WARPMATCH_DATA/snap``), loaded by ``gmatch_peer.py``'s ``load_graph``. Patterns:
``stmatch24`` / ``stmatch:A-B`` (STMatch's own) and warpmatch names.

Examples
--------
    mkdir -p .peers/stmatch && git -C /work/.mirror/HPC-Research-Lab+STMatch/repo archive \\
        HEAD -- . ':(exclude)ComparedSystems' ':(exclude)data/local_txt_graph' \\
        ':(exclude)image' | tar -x -C .peers/stmatch           # 0.3 MB
    python bench/stmatch_peer.py --self-check --stmatch .peers/stmatch   # no GPU needed
    python bench/stmatch_peer.py --stmatch .peers/stmatch --build-only --cuda-arch 90 \\
        --grid-dim 132                                        # compiles without a GPU
    python bench/stmatch_peer.py --stmatch .peers/stmatch --cuda-arch 90 \\
        --graph snap:email-Eu-core,chung-lu --edges 1e7 --patterns stmatch24 \\
        --time-limit 60 --json stmatch_peer.json
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import statistics
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
from _gmatch_build import _log  # noqa: E402
from _gmatch_io import load_patterns  # noqa: E402
from _sibling import load  # noqa: E402
import _stmatch_io as sio  # noqa: E402

ROOT = HERE.parent
DATA = Path(os.environ.get("WARPMATCH_DATA", ROOT / ".." / "shared" / "data"))
GM = load("gmatch_peer")    # run_warpmatch, load_graph and the table's cell formats
# ====================================================================== device
def _sm_count() -> int | None:
    """The number of SMs of GPU 0 (CuPy), or None without a GPU."""
    try:
        import cupy as cp
        return int(cp.cuda.Device(0).attributes["MultiProcessorCount"])
    except Exception:       # noqa: BLE001 - no CuPy or no GPU
        return None


# ====================================================================== STMatch runs
def run_stmatch(binary: Path, graph_prefix: Path, pattern_file: Path, limit: float,
                log_path: Path) -> dict[str, Any]:
    """Run STMatch once: ``BINARY GRAPH PATTERN``, killed after ``limit`` s.

    Returns
    -------
    dict
        :func:`_stmatch_io.parse_stmatch_output`'s fields and ``status`` ("ok", "timeout",
        "crash", "error"), ``detail``, ``rc``, ``wall_s`` (the whole process), ``cmd``,
        ``log``.
    """
    cmd = [str(binary), str(graph_prefix), str(pattern_file)]
    env = {**os.environ, "CUDA_MODULE_LOADING": "EAGER"}    # see "What is timed"
    t0 = time.perf_counter()
    killed = False
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                cwd=log_path.parent, env=env)
        try:
            rc = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            killed = True
        finally:            # interrupted (Ctrl-C): leave no process on the GPU
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    wall = time.perf_counter() - t0
    res = sio.parse_stmatch_output(log_path.read_text(errors="replace"))
    res.update(status="ok", detail=None, rc=rc, wall_s=wall, cmd=shlex.join(cmd),
               log=str(log_path))
    if killed:
        res.update(status="timeout", detail=f"killed after {limit:g} s")
    elif res["cuda_error"]:
        res.update(status="error", detail=f"CUDA error: {res['cuda_error']}")
    elif rc != 0:
        why = f"exit {rc}"
        if rc < 0:
            try:
                why = signal.Signals(-rc).name
            except ValueError:
                why = f"signal {-rc}"
        res.update(status="crash", detail=why + (f": {res['assertion']}" if res["assertion"]
                                                 else ""))
    elif res["count"] is None:
        res.update(status="error", detail="no 'PATTERN<TAB>MS<TAB>COUNT' line in its output")
    return res


def stmatch_runs(binary: Path, graph_prefix: Path, pattern_file: Path, limit: float,
                 log_stem: Path, repeats: int) -> dict[str, Any]:
    """``repeats`` runs of :func:`run_stmatch` (stopping at the first that is not ok); the
    last run's fields, with ``seconds`` and ``wall_s`` the medians and ``runs`` them all."""
    runs = []
    for i in range(max(1, repeats)):
        r = run_stmatch(binary, graph_prefix, pattern_file, limit,
                        log_stem.with_name(f"{log_stem.name}.{i}.log"))
        runs.append(r)
        if r["status"] != "ok":
            break
    res = dict(runs[-1])
    res["runs"] = [{k: r[k] for k in ("status", "count", "seconds", "wall_s", "log")}
                   for r in runs]
    if res["status"] == "ok":
        if len({r["count"] for r in runs}) != 1:
            res.update(status="error", detail="its count differs between repeats")
        res["seconds"] = statistics.median(r["seconds"] for r in runs)
        res["wall_s"] = statistics.median(r["wall_s"] for r in runs)
    return res


# ====================================================================== patterns
def pattern_file_text(name: str, query: Any, stmatch_dir: Path | None,
                      order: str) -> tuple[str, str]:
    """The STMatch pattern file for one pattern, and where it came from.

    ``stmatchN`` with ``--order auto`` is STMatch's own ``data/pattern/N.g`` (after checking
    it is isomorphic to warpmatch's copy); any other is written by
    :func:`_stmatch_io.stmatch_pattern_text` (greedy order, or the given one with
    ``--order given`` where STMatch can use it). Exits naming the limit a pattern breaks.
    """
    m = re.fullmatch(r"stmatch(\d+)", name)
    if m and order == "auto" and stmatch_dir is not None:
        own = sio.stmatch_own_pattern(stmatch_dir, int(m.group(1)))
        if own.is_file():
            text = own.read_text()
            p = sio.read_stmatch_pattern(text)
            ours = [tuple(e) for e in np.asarray(query.edges).tolist()]
            if p["k"] != query.k or not sio._isomorphic(p["k"], p["edges"], ours):
                raise SystemExit(f"{name}: {own} is not isomorphic to warpmatch's copy "
                                 f"({DATA / 'patterns' / 'stmatch24.txt'})")
            return text, f"STMatch's {own.relative_to(stmatch_dir)}"
    try:
        keep = order == "given" or (order == "auto" and m is not None)
        text, perm = sio.stmatch_pattern_text(query, keep_order=keep)
    except ValueError as exc:
        raise SystemExit(f"pattern {name}: {exc}") from None
    return text, f"written, order {perm}"


# ====================================================================== table
def compare(row: dict[str, Any]) -> None:
    """Fill ``row['equal']`` (True, False or None when a side has no count),
    ``row['known_miscount']`` and the row's notes."""
    st, w = row["stmatch"], row["warpmatch"]
    notes = row.setdefault("notes", [])
    row["equal"], row["known_miscount"] = None, False
    if st["status"] == "ok" and w["status"] == "ok":
        row.update(count=w["count"], stmatch_count=st["count"],
                   equal=st["count"] == w["count"])
        if not row["equal"] and row["stmatch12"]:
            row["known_miscount"] = True
            notes.append("STMatch's pattern 12: known miscount (issue 21), reported, not "
                         "counted as a mismatch")
    elif w["status"] == "ok":
        row["count"] = w["count"]
    elif st["status"] == "ok":
        row["count"] = st["count"]
    else:
        row["count"] = None
    aut = w.get("aut")
    if st["status"] == "ok" and aut and st["count"] % aut:
        notes.append(f"STMatch's count is not a multiple of |Aut| = {aut}")


def _equal_cell(r: dict[str, Any]) -> str:
    if r["equal"] is True:
        return "yes"
    if r["equal"] is None:
        return "-"
    what = "known STMatch miscount" if r["known_miscount"] else "MISMATCH"
    return f"{what} (STMatch {GM._num(r['stmatch_count'])}, warpmatch {GM._num(r['count'])})"


def print_table(rows: list[dict[str, Any]], limit: float) -> None:
    """The markdown table: one line per graph and pattern, then the notes."""
    print("| graph | pattern | count | STMatch s | STMatch wall s | warpmatch s | wm engine s "
          "| STMatch/wm | equal? |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        st, w = r["stmatch"], r["warpmatch"]
        ratio = "-"
        if st["status"] == "ok" and w["status"] == "ok" and w["wall_s"]:
            ratio = f"{st['seconds'] / w['wall_s']:.2f}x"
        swall = (f"> {limit:g}" if st["status"] == "timeout" else
                 GM._fmt_s(st.get("wall_s")) if st["status"] == "ok" else st["status"])
        print(f"| {r['graph']} | {r['pattern']} | {GM._num(r.get('count'))} "
              f"| {GM._cell(st, 'seconds', limit)} | {swall} | {GM._cell(w, 'wall_s', limit)} "
              f"| {GM._cell(w, 'engine_s', limit)} | {ratio} | {_equal_cell(r)} |")
    notes = [(r, n) for r in rows for n in r.get("notes", [])]
    notes += [(r, f"STMatch {r['stmatch']['status']}: {r['stmatch']['detail']}") for r in rows
              if r["stmatch"]["status"] != "ok"]
    notes += [(r, f"warpmatch {r['warpmatch']['status']}: {r['warpmatch']['detail']}")
              for r in rows if r["warpmatch"]["status"] != "ok"]
    for r, n in notes:
        print(f"- {r['graph']} / {r['pattern']}: {n}")


def graph_sums(rows: list[dict[str, Any]], limit: float) -> list[dict[str, Any]]:
    """Per graph: the times summed over the patterns both finished, and the timeouts
    (``stmatch_at_least_s``: STMatch's sum with each of its timeouts that warpmatch
    finished counted at ``limit``, over those patterns too: a lower bound)."""
    out = []
    for label in dict.fromkeys(r["graph"] for r in rows):
        rs = [r for r in rows if r["graph"] == label]
        both = [r for r in rs if r["stmatch"]["status"] == "ok"
                and r["warpmatch"]["status"] == "ok"]
        st = sum(r["stmatch"]["seconds"] for r in both)
        wm = sum(r["warpmatch"]["wall_s"] for r in both)
        eng = sum(r["warpmatch"]["engine_s"] for r in both)
        won = [r for r in rs if r["stmatch"]["status"] == "timeout"
               and r["warpmatch"]["status"] == "ok"]
        st_low = st + limit * len(won)
        wm_low = wm + sum(r["warpmatch"]["wall_s"] for r in won)
        out.append({"graph": label, "patterns": len(rs), "both_ok": len(both),
                    "stmatch_at_least_s": st_low,
                    "ratio_at_least": st_low / wm_low if won and wm_low else None,
                    "stmatch_s": st, "warpmatch_s": wm, "wm_engine_s": eng,
                    "ratio": st / wm if wm else None,
                    "at_most_third": (wm <= st / 3) if both else None,
                    "stmatch_timeouts": [r["pattern"] for r in rs
                                         if r["stmatch"]["status"] == "timeout"],
                    "warpmatch_timeouts": [r["pattern"] for r in rs
                                           if r["warpmatch"]["status"] == "timeout"]})
    return out


def print_sums(sums: list[dict[str, Any]]) -> None:
    """The per-graph sums as a markdown table (issue 21: warpmatch <= STMatch / 3)."""
    print("\n| graph | patterns (both finished) | STMatch s (sum) | warpmatch s (sum) "
          "| wm engine s (sum) | STMatch/wm (sums) | wm <= STMatch/3? |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for s in sums:
        ratio = f"{s['ratio']:.2f}x" if s["ratio"] else "-"
        third = {True: "yes", False: "no", None: "-"}[s["at_most_third"]]
        print(f"| {s['graph']} | {s['patterns']} ({s['both_ok']}) | {s['stmatch_s']:.3f} "
              f"| {s['warpmatch_s']:.3f} | {s['wm_engine_s']:.3f} | {ratio} | {third} |")
        for who in ("STMatch", "warpmatch"):
            if s[f"{who.lower()}_timeouts"]:
                print(f"- {s['graph']}: {who} timed out on "
                      f"{', '.join(s[who.lower() + '_timeouts'])} (not in the sums)")
        if s["ratio_at_least"]:
            print(f"- {s['graph']}: with STMatch's timeouts that warpmatch finished counted at "
                  f"the limit, STMatch >= {s['stmatch_at_least_s']:.3f} s, STMatch/wm >= "
                  f"{s['ratio_at_least']:.2f}x")


# ====================================================================== self-check
def self_check(stmatch_dir: Path | None, build_dir: Path) -> int:
    """Round-trip the conversions on small graphs and patterns (no GPU, no STMatch build).

    Checks: graph files read back by :func:`_stmatch_io.read_stmatch_graph` equal the CSR
    (meta numbers, sizes, sorted symmetric rows); each pattern file reads back as an
    isomorphic pattern with the same |Aut| and the same count on the small graphs
    (reference engine), in an order STMatch can use; STMatch's 24 own files (with the
    tree) equal warpmatch's copy; patterns past a limit are refused naming it;
    :func:`_stmatch_io.parse_stmatch_output` on its formats. With the tree and nvcc, a
    probe built on STMatch's own loaders (host only) reads each graph and pattern file:
    sizes, |Aut| (its multiplicity), slots, labels and job-queue length must agree with
    ours. A built binary found in ``build_dir`` is run too: its count is compared with
    the reference engine's with a GPU, its CUDA error reported without one.
    """
    import warpmatch as wm
    from warpmatch.graph.csr import Graph
    from warpmatch.query.model import Query
    from warpmatch.query.symmetry import automorphism_count
    failures: list[str] = []
    passed = 0

    def check(ok: bool, what: str) -> None:
        nonlocal passed
        if ok:
            passed += 1
        else:
            failures.append(what)
            print(f"FAIL: {what}")

    edges = [(3, 4), (0, 1), (2, 0), (1, 2), (1, 3), (2, 3), (4, 0), (2, 4)]
    six = Graph.from_edges([a for a, _ in edges], [b for _, b in edges], n=6, name="six")
    rng = np.random.default_rng(7)
    iu = np.triu_indices(24, 1)
    pick = rng.random(iu[0].size) < 0.35
    rnd = Graph.from_edges(iu[0][pick], iu[1][pick], n=25, name="gnp24")   # 24 is isolated
    graphs = [six, rnd]
    qs = load_patterns("triangle,square,diamond,4-clique,tailed-triangle,house,5-clique,"
                       "5-cycle", None)
    if (DATA / "patterns" / "stmatch24.txt").is_file():
        qs += load_patterns("stmatch24", None)
    else:
        print(f"note: {DATA / 'patterns' / 'stmatch24.txt'} not found; STMatch's patterns "
              "not checked (set WARPMATCH_DATA)")
    qs.append(("scrambled path", Query.from_edges([(0, 2), (2, 3), (3, 1)], name="p4")))
    qs.append(("tail first", Query.from_edges([(0, 1), (1, 2), (2, 3), (3, 1)], name="tt")))
    with tempfile.TemporaryDirectory(prefix="wm_stmatch_check_") as tmp:
        tmp_p = Path(tmp)
        prefixes = {}
        for g in graphs:
            pre = tmp_p / f"{g.name}.stmatch"
            info = sio.write_stmatch_graph(pre, g)
            b = sio.read_stmatch_graph(pre)
            check((b["n"], b["nedges"], b["vid_size"], b["max_degree"])
                  == (g.n, 2 * g.num_edges, 4, g.max_degree), f"{g.name}: meta numbers")
            check(np.array_equal(b["rowptr"], np.asarray(g.indptr))
                  and np.array_equal(b["colidx"], np.asarray(g.indices)),
                  f"{g.name}: CSR read back")
            check(info["bytes"] == sum(Path(f"{pre}.{s}").stat().st_size
                                       for s in ("meta.txt", "vertex.bin", "edge.bin")),
                  f"{g.name}: file sizes")
            prefixes[g.name] = pre
        bad = tmp_p / "bad.stmatch"
        sio.write_stmatch_graph(bad, six)
        Path(f"{bad}.meta.txt").write_text("6\n16\n4\n3\n")
        try:
            sio.read_stmatch_graph(bad)
            check(False, "a wrong largest degree is caught")
        except ValueError:
            check(True, "")
        # patterns: files, order, limits
        files: dict[str, Path] = {}
        for name, q in qs:
            text, order = sio.stmatch_pattern_text(q, keep_order=name.startswith("stmatch"))
            p = sio.read_stmatch_pattern(text)
            back = sio.query_from_stmatch_text(text, name)
            check(p["k"] == q.k and len(p["edges"]) == q.m, f"{name}: k, m")
            check(sio._isomorphic(q.k, p["edges"], [tuple(e) for e in q.edges.tolist()]),
                  f"{name}: isomorphic")
            check(automorphism_count(back) == automorphism_count(q), f"{name}: |Aut|")
            check(not sio.order_problems(p["k"], p["edges"]), f"{name}: an order STMatch "
                  f"can use ({sio.order_problems(p['k'], p['edges'])})")
            for g in graphs:
                check(wm.count(g, back, backend="reference")
                      == wm.count(g, q, backend="reference"), f"{name}: count on {g.name}")
            m = re.fullmatch(r"stmatch(\d+)", name)
            if m:
                check(order == list(range(q.k)), f"{name}: STMatch's own order kept")
                own = (sio.stmatch_own_pattern(stmatch_dir, int(m.group(1)))
                       if stmatch_dir else None)
                if own is not None and own.is_file():
                    po = sio.read_stmatch_pattern(own.read_text())
                    check(po["edges"] == p["edges"] and po["k"] == p["k"],
                          f"{name}: same as STMatch's {own.name}")
                    text2, src = pattern_file_text(name, q, stmatch_dir, "auto")
                    check(src.startswith("STMatch's"), f"{name}: its own file is used")
            files[name] = tmp_p / f"{GM._safe(name)}.g"
            files[name].write_text(text)
        for why, q in (("8 vertices", Query.from_edges([(i, (i + 1) % 8) for i in range(8)])),
                       ("2 vertices", Query.from_edges([(0, 1)]))):
            try:
                sio.stmatch_pattern_text(q, keep_order=False)
                check(False, f"{why}: refused")
            except ValueError as exc:
                check(why != "8 vertices" or "PAT_SIZE = 7" in str(exc), f"{why}: {exc}")
        late = [(0, 1), (1, 2), (3, 4), (2, 4)]         # vertex 3 has no earlier neighbour
        check(any("no earlier neighbour" in x for x in sio.order_problems(5, late)),
              "an order with a late vertex is refused")
        fixed = sio.stmatch_order(5, late, keep=True)
        check(fixed != list(range(5)) and not sio.order_problems(5, sio.renumber(late, fixed)),
              "... and reordered")
        try:
            sio.write_stmatch_graph(tmp_p / "huge", type(
                "G", (), {"directed": False, "name": "huge", "n": 2**31,
                          "indptr": np.zeros(2, np.int64), "indices": np.zeros(0, np.int32)}))
            check(False, "a graph past int ids is refused")
        except ValueError as exc:
            check("graph_node_t" in str(exc), "a graph past int ids is refused")
        # STMatch's output (cu_test.cu:84), the added error check, an assertion
        o = sio.parse_stmatch_output("data/p.g\t12.345600\t36\n")
        check((o["count"], o["ms"], o["pattern_path"]) == (36, 12.3456, "data/p.g"),
              "parse the result line")
        o = sio.parse_stmatch_output("STMatch CUDA error: out of memory\n")
        check(o["count"] is None and o["cuda_error"] == "out of memory", "parse a CUDA error")
        o = sio.parse_stmatch_output("x.exe: src/pattern.h:385: void f(): Assertion `count <= "
                                     "MAX_SLOT_NUM' failed.\n")
        check(o["assertion"] is not None, "parse an assertion")
        check(sio.is_stmatch12(Query.from_edges([(5 - a, 5 - b) for a, b in
                                                 sio.STMATCH12_EDGES])), "is_stmatch12")
        check(not sio.is_stmatch12(qs[0][1]), "is_stmatch12 (triangle)")
        # STMatch's own loaders, host only
        if stmatch_dir is not None and shutil.which("nvcc"):
            sio.check_tree(stmatch_dir)
            probe_dir = tmp_p / "probe"
            sio.prepare_sources(stmatch_dir, probe_dir, "native", sio.GRID_DIM, sio.GRAPH_DEGREE)
            (probe_dir / "probe.cu").write_text(sio.PROBE_SOURCE)
            cmd = ["nvcc", "-std=c++17", "-I.", "probe.cu", "-o", "probe"]
            out = subprocess.run(cmd, cwd=probe_dir, capture_output=True, text=True)
            check(out.returncode == 0, f"probe build: {out.stderr[-500:]}")
            n_probe = 0
            for g in graphs if out.returncode == 0 else []:
                indptr, indices = np.asarray(g.indptr), np.asarray(g.indices)
                for name, q in qs:
                    pf = files[name]
                    r = subprocess.run([str(probe_dir / "probe"), str(prefixes[g.name]),
                                        str(pf)], capture_output=True, text=True)
                    pr = sio.parse_probe_output(r.stdout)
                    p = sio.read_stmatch_pattern(pf.read_text())
                    pdeg = np.bincount(np.asarray(p["edges"]).ravel(), minlength=p["k"])
                    swaps01 = any(x[0] == 1 and {tuple(sorted((x[a], x[b])))
                                                 for a, b in p["edges"]} == set(p["edges"])
                                  for x in itertools.permutations(range(p["k"])))
                    want = {"nnodes": g.n, "nedges": 2 * g.num_edges,
                            "max_degree": g.max_degree, "pattern_nodes": q.k,
                            "multiplicity": automorphism_count(q),
                            "slots": sio.stmatch_slots(p["k"], p["edges"])[0],
                            "partial00": int(swaps01), "degrees": pdeg.tolist(),
                            "label_mask": pr.get("vertex_label0"),
                            "jobs": sio.stmatch_jobs(indptr, indices, pdeg, swaps01)}
                    got = {k: pr.get(k) for k in want}
                    check(r.returncode == 0 and got == want,
                          f"probe {g.name} / {name}: {got} != {want} (rc {r.returncode})")
                    n_probe += 1
            print(f"probe on STMatch's loaders: {n_probe} graph/pattern pairs")
        else:
            print("note: no --stmatch tree or no nvcc: STMatch's loaders not probed")
        # a built binary, where there is one
        for exe in sorted(build_dir.glob(f"{sio.TARGET}-*/src/bin/{sio.TARGET}.exe")):
            gpu = GM._gpu_visible()
            for name in ("triangle", "house", "stmatch1"):
                if name not in files:
                    continue
                q = dict(qs)[name]
                r = run_stmatch(exe, prefixes["gnp24"], files[name], 120.0,
                                tmp_p / f"{GM._safe(name)}.log")
                if gpu:
                    ref = wm.count(rnd, q, backend="reference")
                    check(r["status"] == "ok" and r["count"] == ref,
                          f"{exe.parent.parent.parent.name} / {name}: STMatch {r['count']} "
                          f"({r['status']}: {r['detail']}) vs {ref}")
                else:
                    check(r["status"] == "error" and r["count"] is None,
                          f"{name}: without a GPU, STMatch's run reports its CUDA error "
                          f"({r['status']}: {r['detail']})")
                    print(f"{exe.parent.parent.parent.name} / {name}: no GPU: {r['status']}, "
                          f"{r['detail']}")
    print(f"self-check: {passed} checks passed, {len(failures)} failed")
    return 1 if failures else 0


# ====================================================================== main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stmatch", default=None,
                    help="STMatch's source tree (git archive of HPC-Research-Lab/STMatch)")
    ap.add_argument("--build-dir", default="build/stmatch",
                    help="where STMatch is copied and built (build/stmatch)")
    ap.add_argument("--cuda-arch", default="native",
                    help="nvcc -arch of the STMatch build: native (the GPU seen at build "
                         "time) or e.g. 90 for H100/H200")
    ap.add_argument("--grid-dim", default="auto",
                    help="STMatch's GRID_DIM: auto (the GPU's SMs; 82 without a GPU), "
                         "stmatch (its 82) or a number")
    ap.add_argument("--graph-degree", default="auto",
                    help="STMatch's GRAPH_DEGREE: auto (4096, or the graph's largest degree "
                         "rounded up to 1024) or a number")
    ap.add_argument("--build-only", action="store_true",
                    help="build STMatch (GRAPH_DEGREE from --graph-degree, 4096 for auto) "
                         "and exit")
    ap.add_argument("--graph", default="chung-lu",
                    help="comma-separated: chung-lu (--edges), chung-lu:EDGES, snap:PATH")
    ap.add_argument("--edges", type=float, default=1e7, help="Chung-Lu edges (1e7)")
    ap.add_argument("--seed", type=int, default=1, help="Chung-Lu seed (1)")
    ap.add_argument("--patterns", default="stmatch24",
                    help="comma-separated: stmatch24, stmatch:A-B, warpmatch names")
    ap.add_argument("--order", choices=("auto", "greedy", "given"), default="auto",
                    help="STMatch's matching order: auto (its own files for stmatchN, "
                         "greedy for others), greedy, given (the numbering, where usable)")
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="seconds per STMatch process and per warpmatch call (60)")
    ap.add_argument("--repeats", type=int, default=3, help="timed warpmatch calls (3)")
    ap.add_argument("--stmatch-repeats", type=int, default=1, help="STMatch runs (1)")
    ap.add_argument("--work-dir", default="build/stmatch-work",
                    help="graphs (.wmg, STMatch's files), pattern files and STMatch's logs")
    ap.add_argument("--json", default=None, help="write every number here")
    ap.add_argument("--self-check", action="store_true",
                    help="check the file conversions on tiny graphs and exit (no GPU)")
    args = ap.parse_args(argv)

    st_dir = Path(args.stmatch).expanduser().resolve() if args.stmatch else None
    build_dir = Path(args.build_dir).resolve()
    if args.self_check:
        if st_dir is None and (ROOT / ".peers" / "stmatch").is_dir():
            st_dir = ROOT / ".peers" / "stmatch"
        return self_check(st_dir, build_dir)
    if st_dir is None:
        ap.error("--stmatch (STMatch's source tree) is required")
    if not st_dir.is_dir():
        raise SystemExit(f"--stmatch {st_dir}: no such directory (see the docstring's "
                         "Examples for the git archive command)")
    sio.check_tree(st_dir)
    sms = _sm_count()
    if args.grid_dim == "auto":
        grid = sms or sio.GRID_DIM
        if sms is None:
            _log(f"no GPU seen: GRID_DIM stays {sio.GRID_DIM} (pass --grid-dim)")
    else:
        grid = sio.GRID_DIM if args.grid_dim == "stmatch" else int(args.grid_dim)
    if args.build_only:
        deg = sio.GRAPH_DEGREE if args.graph_degree == "auto" else int(args.graph_degree)
        exe, info = sio.build_stmatch(st_dir, build_dir, args.cuda_arch, grid, deg)
        print(json.dumps(info, indent=1))
        return 0

    patterns = load_patterns(args.patterns, None)
    ptexts = {name: pattern_file_text(name, q, st_dir, args.order) for name, q in patterns}
    work = Path(args.work_dir).resolve()
    for sub in ("patterns", "logs"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    device = GM._device_name()
    _log(f"device {device} ({sms} SMs); STMatch GRID_DIM {grid}")

    rows: list[dict[str, Any]] = []
    graphs: dict[str, Any] = {}
    builds: dict[str, Any] = {}

    def tally() -> dict[str, Any]:
        return {"mismatches": sum(r["equal"] is False and not r["known_miscount"] for r in rows),
                "known_miscounts": sum(r["known_miscount"] for r in rows),
                "failures": sum(r["stmatch"]["status"] in ("crash", "error")
                                or r["warpmatch"]["status"] == "error" for r in rows),
                "sums": graph_sums(rows, args.time_limit)}

    def write_json(done: bool) -> None:
        # rewritten after every row, so that a run cut short still leaves its numbers
        if args.json:
            Path(args.json).write_text(json.dumps({
                "args": vars(args), "device": device, "sms": sms, "grid_dim": grid,
                "mode": "embeddings", "induced": False, "complete": done,
                "stmatch_builds": builds, "graphs": graphs, "rows": rows, **tally()},
                indent=1, default=str))
    for spec in (s.strip() for s in args.graph.split(",") if s.strip()):
        label, g, load_s = GM.load_graph(spec, args, work)
        if g.directed:
            raise SystemExit(f"{label}: directed; STMatch counts undirected graphs")
        prefix = work / f"{GM._safe(g.name)}.stmatch"
        t0 = time.perf_counter()
        try:
            ginfo = sio.write_stmatch_graph(prefix, g)
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
        deg = sio.graph_degree_for(ginfo["max_degree"], args.graph_degree)
        exe, binfo = sio.build_stmatch(st_dir, build_dir, args.cuda_arch, grid, deg)
        builds[Path(binfo["binary"]).parent.parent.parent.name] = binfo
        graphs[label] = {"n": int(g.n), "m": int(g.num_edges), "max_degree": int(g.max_degree),
                         "load_s": load_s, "prefix": str(prefix), **ginfo,
                         "write_s": time.perf_counter() - t0, "graph_degree": deg,
                         "binary": str(exe)}
        _log(f"graph {label}: {g.n:,} vertices, {g.num_edges:,} edges, max degree "
             f"{g.max_degree:,}; STMatch files {prefix}.* ({ginfo['bytes'] / 2**20:.0f} MiB), "
             f"GRAPH_DEGREE {deg}")
        for name, q in patterns:
            text, source = ptexts[name]
            pf = work / "patterns" / f"{GM._safe(name)}.g"
            pf.write_text(text)
            GM._free_device_pools()
            st = stmatch_runs(exe, prefix, pf, args.time_limit,
                              work / "logs" / f"{GM._safe(g.name)}__{GM._safe(name)}",
                              args.stmatch_repeats)
            w = GM.run_warpmatch(g, q, "embeddings", args.repeats, args.time_limit)
            row = {"graph": label, "pattern": name, "k": int(q.k), "edges": q.edges.tolist(),
                   "n": int(g.n), "m": int(g.num_edges), "pattern_file": str(pf),
                   "pattern_source": source, "stmatch12": sio.is_stmatch12(q),
                   "stmatch": st, "warpmatch": w}
            compare(row)
            rows.append(row)
            write_json(False)
            _log(f"{label} / {name}: STMatch {st['status']} {st['count']} "
                 f"{GM._fmt_s(st['seconds'])} s (wall {st['wall_s']:.2f} s); warpmatch "
                 f"{w['status']} {w['count']} {GM._fmt_s(w.get('wall_s'))} s; equal "
                 f"{row['equal']}")
        del g

    t = tally()
    mismatches, known, failures, sums = (t["mismatches"], t["known_miscounts"],
                                         t["failures"], t["sums"])
    write_json(True)
    print(f"\nwarpmatch GPU engine vs STMatch ({sio.TARGET}, GRID_DIM {grid}); embeddings, "
          f"non-induced; device {device}; time limit {args.time_limit:g} s\n")
    print_table(rows, args.time_limit)
    print_sums(sums)
    if known:
        print(f"\n{known} known STMatch miscount(s) (its pattern 12), reported, not failures")
    if mismatches or failures:
        print(f"\n{mismatches} MISMATCH(ES), {failures} failed run(s)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
