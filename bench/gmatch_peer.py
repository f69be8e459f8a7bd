#!/usr/bin/env python3
"""warpmatch's GPU engine vs gMatch on unlabeled patterns (issue 21): the same graphs and
patterns, counted by both, side by side.

gMatch (Chen et al., https://github.com/w20chen/gMatch) is a GPU subgraph matcher. Its binary
for small queries over large unlabeled graphs is ``neighbor/build/SubgraphMatching_unlabeled``
(its README, "Run with Neighborhood Intersection": local candidates are intersections of the
backward neighbours' adjacency lists, no candidate graph; the ``bitmap`` and ``hash_table``
binaries build candidate graphs, for large queries on medium graphs, and read the text
format only). This script builds that one target from the sources in ``--gmatch`` (never
edited: cmake runs on a copy in ``--build-dir``), converts each graph to gMatch's binary CSR
file and each pattern to its ``t/v/e`` query file, runs it, parses its count and time, and
times ``warpmatch.count_result(..., backend="gpu")`` on the same graph and pattern. No gMatch
code is part of this repository.

What is counted
---------------
gMatch's ``Result`` is the number of **embeddings, non-induced** (injective maps sending
every pattern edge onto a graph edge), found as distinct subgraphs under symmetry-breaking
restrictions and multiplied by |Aut(pattern)|; it also prints ``unique count`` (distinct
subgraphs = embeddings / |Aut|). In its sources (commit 8acf4e5; paths under ``neighbor/``):

- ``main.cu:104-109``: ``alpha = Q.restriction_generation(partial_order)``, printed as
  ``Symmetry = alpha``; ``graph.cu:722-727``: alpha is the number of automorphisms
  (``find_automorphisms``, ``graph.cu:630-718``, matches the query onto itself);
- ``main.cu:152-187``: ``ret = alpha * join_*_sym(..., partial_order)`` (or the plain
  ``join_bfs_dfs`` when alpha is 1; on a clique, the data graph oriented by degree counts
  each clique once, ``main.cu:97-99``);
- ``main.cu:193-200``: ``Result: ret`` (``ret * alpha`` on the oriented graph) and
  ``unique count: ret / alpha`` (``ret`` on the oriented graph);
- non-induced: a vertex's candidates are the intersection of its backward neighbours'
  lists only (``graph.h:146-160``, ``d_bknbrs_`` in the join kernels); ``join_induced``
  runs for cliques only (``main.cu:143``), where induced and non-induced agree;
- its README's table (P1 = triangle: LiveJournal 1,714,381,584, Orkut 3,765,505,086) is
  6 x the SNAP triangle counts of soc-LiveJournal1 (285,730,264) and com-Orkut
  (627,584,181): ``Result`` is the embedding count.

So warpmatch counts ``mode="embeddings", induced=False`` and its count is compared with
gMatch's ``Result``. Both do the same work: warpmatch's embedding count is also each
subgraph found once under symmetry breaking, times |Aut| (``plan.multiplier``,
``src/warpmatch/plan/build.py``). ``--mode subgraphs`` compares warpmatch's subgraph count
with gMatch's ``unique count`` instead. Both |Aut| are recorded (``Symmetry =`` and
``plan.aut_size``) and must agree.

What is timed
-------------
- **gMatch**: one process per graph and pattern (``--gmatch-repeats``, default 1; median).
  ``gMatch s`` is what it reports as ``# Processing, time (ms): H(host), K(kernel)``: K, the
  CUDA-event time of its BFS levels and DFS kernel (``join_bfs_dfs.cu:1077-1173``; the
  "GPU Time" of its README's table, we assume), at its resolution of 1 ms. It excludes
  reading the graph, removing low-degree vertices, orienting it (cliques), uploading it and
  matching the first query edge ("Data preparation", ``join_bfs_dfs.cu:1049-1075``); those,
  and every other phase it prints, are in the JSON. ``gMatch wall s`` is the whole process
  (start to exit).
  The process is killed ``--time-limit`` seconds after it started (``> limit``).
- **warpmatch**: ``count_result(graph, pattern, mode=..., induced=False, backend="gpu",
  time_limit=--time-limit)`` on the graph already in memory: one untimed call (NVRTC
  compilation, graph upload), then the median of ``--repeats`` calls. ``warpmatch s`` is
  the call's wall time (planning + engine), ``wm engine s`` the engine's ``seconds``.
- **ratio** = gMatch s / warpmatch s: above 1 means warpmatch is faster. warpmatch's time
  includes what gMatch reports apart as data preparation (its candidates for the first two
  query vertices and the first query edge's matches, 10-21 ms on a 10^7-edge graph; our
  planning and initial pool), so a second ratio, **(gMatch + prep) / wm**, adds it.

Build
-----
gMatch's ``neighbor/`` is copied to ``--build-dir``/src and built in ``--build-dir``/build:
``cmake -S src -B build -DCMAKE_BUILD_TYPE=Release``, then ``cmake --build build --target
SubgraphMatching_unlabeled -j N`` (reused while sources and options are unchanged; the
commands and the log's last lines are printed, the log kept in ``--build-dir``/build.log).
Its CMakeLists.txt hard-codes the CUDA architecture ``"native"`` (``set(...)`` and target
properties: ``-DCMAKE_CUDA_ARCHITECTURES`` cannot override it), so ``--cuda-arch 90``
(H100, H200) writes 90 over it in the copy; it asks for CMake 3.26, lowered in the copy
for an older CMake (>= 3.18). With CUDA 13 its ``ceil_div`` macro breaks CCCL's headers: the
build is then retried once with ``-DCMAKE_CUDA_FLAGS=--pre-include cub/cub.cuh --pre-include
thrust/scan.h`` (checked with CUDA 13.0 and CMake 3.25, without a GPU). ``--gmatch-binary``
runs a given binary instead.

A count that differs is printed as ``MISMATCH`` and makes the script exit with status 1, as
does a gMatch run that crashed or printed no ``Result``; timeouts are reported, not failures.

Graphs: ``chung-lu`` (``--edges``, ``--seed``: ``bench/gpu.py``'s ``power_law_gpu``, generated
on the GPU and cached as a ``.wmg`` in ``--work-dir`` as ``bench/distributed.py`` does;
``chung-lu:1e8`` sets the size inline) and ``snap:PATH`` (an edge list read with
``warpmatch.read_graph``, undirected; ``snap:email-Eu-core`` looks in
``$WARPMATCH_DATA/snap``). Patterns: warpmatch names, ``stmatch24`` / ``stmatch:A-B``
(``bench/distributed.py``'s ``queries``) and ``gmatch:P1-P9`` (``patterns/p1..p9`` of the
``--gmatch`` tree, its README's Table 4).

Examples
--------
    mkdir -p .peers/gmatch && git -C /work/.mirror/w20chen+gMatch/repo archive HEAD \\
        | tar -x -C .peers/gmatch --exclude=compared_system --exclude=test
    python bench/gmatch_peer.py --self-check                     # formats; no GPU needed
    python bench/gmatch_peer.py --gmatch .peers/gmatch --graph chung-lu --edges 1e7 \\
        --patterns triangle,square,diamond,4-clique,tailed-triangle,house,5-clique,gmatch:P5-P9 \\
        --json gmatch_peer.json
    python bench/gmatch_peer.py --gmatch .peers/gmatch \\
        --graph snap:$WARPMATCH_DATA/snap/email-Eu-core.txt,chung-lu:1e8 \\
        --patterns gmatch:P1-P9,stmatch:1-6 --time-limit 120
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import struct
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
from _gmatch_build import TARGET, _log, build_gmatch  # noqa: E402
from _sibling import load  # noqa: E402
from _gmatch_io import (gmatch_patterns, gmatch_query_text, load_patterns,  # noqa: E402
                        parse_gmatch_output, query_from_gmatch_text, read_gmatch_bin,
                        read_gmatch_text, write_gmatch_bin, write_gmatch_text_graph)

ROOT = HERE.parent
DATA = Path(os.environ.get("WARPMATCH_DATA", ROOT / ".." / "shared" / "data"))
DEFAULT_PATTERNS = ("triangle,square,diamond,4-clique,tailed-triangle,house,5-clique,"
                    "gmatch:P5-P9")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", name).strip("_") or "x"


# ====================================================================== gMatch runs
def run_gmatch(binary: Path, data_bin: Path, query_file: Path, limit: float, log_path: Path,
               extra: list[str] | None = None,
               env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run gMatch once: ``BINARY -b DATA.bin -q QUERY [extra]``, killed after ``limit`` s.

    Returns
    -------
    dict
        :func:`parse_gmatch_output`'s fields and ``status`` ("ok", "timeout", "crash",
        "error"), ``detail``, ``rc``, ``wall_s`` (the whole process), ``cmd``, ``log``.
    """
    cmd = [str(binary), "-b", str(data_bin), "-q", str(query_file), *(extra or [])]
    t0 = time.perf_counter()
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=log_path.parent,
                                env=env)
        killed = False
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
    res = parse_gmatch_output(log_path.read_text(errors="replace"))
    res.update(status="ok", detail=None, rc=rc, wall_s=wall, cmd=shlex.join(cmd),
               log=str(log_path))
    if killed:
        res.update(status="timeout", detail=f"killed after {limit:g} s")
    elif rc != 0:
        import signal
        why = f"exit {rc}"
        if rc < 0:
            try:
                why = signal.Signals(-rc).name
            except ValueError:
                why = f"signal {-rc}"
        res.update(status="crash", detail=why + (f": {res['cuda_error']}" if res["cuda_error"]
                                                 else ""))
    elif res["result"] is None:
        res.update(status="error", detail="no 'Result:' line in its output")
    return res


def gmatch_runs(binary: Path, data_bin: Path, query_file: Path, limit: float, log_stem: Path,
                repeats: int, extra: list[str]) -> dict[str, Any]:
    """``repeats`` runs of :func:`run_gmatch` (stopping at the first that is not ok); the
    last run's fields, with ``seconds`` and ``wall_s`` the medians and ``runs`` them all."""
    runs = []
    for i in range(max(1, repeats)):
        r = run_gmatch(binary, data_bin, query_file, limit,
                       log_stem.with_name(f"{log_stem.name}.{i}.log"), extra)
        runs.append(r)
        if r["status"] != "ok":
            break
    res = dict(runs[-1])
    res["runs"] = [{k: r[k] for k in ("status", "result", "seconds", "host_seconds", "wall_s",
                                      "log")} for r in runs]
    if res["status"] == "ok":
        if len({r["result"] for r in runs}) != 1:
            res.update(status="error", detail="its count differs between repeats")
        secs = [r["seconds"] for r in runs if r["seconds"] is not None]
        res["seconds"] = statistics.median(secs) if secs else None
        res["wall_s"] = statistics.median(r["wall_s"] for r in runs)
    return res


# ====================================================================== warpmatch runs
def run_warpmatch(graph: Any, query: Any, mode: str, repeats: int,
                  limit: float) -> dict[str, Any]:
    """``count_result(..., backend="gpu")``: one untimed call, then the median of ``repeats``.

    Returns
    -------
    dict
        ``status`` ("ok", "timeout", "error"), ``count``, ``wall_s`` (planning + engine),
        ``engine_s``, ``plan_s``, ``compile_s`` (of the timed calls: 0 when the warm-up
        compiled everything), ``first_wall_s`` and ``first_compile_s`` (the warm-up),
        ``aut`` (the plan's |Aut|), ``detail``.
    """
    import warpmatch as wm

    def once():
        t = time.perf_counter()
        r = wm.count_result(graph, query, mode=mode, induced=False, backend="gpu",
                            time_limit=limit)
        return r, time.perf_counter() - t

    res: dict[str, Any] = {"status": "ok", "detail": None, "count": None}
    try:
        r0, w0 = once()
        res.update(first_wall_s=w0, first_compile_s=r0.compile_seconds, backend=r0.backend,
                   aut=int(getattr(r0.plan, "aut_size", 0) or 0) or None)
        if r0.partial:
            return {**res, "status": "timeout", "detail": r0.partial, "at_least": r0.count}
        runs = []
        for _ in range(max(1, repeats)):
            r, w = once()
            if r.partial:
                return {**res, "status": "timeout", "detail": r.partial, "at_least": r.count}
            runs.append((r, w))
    except Exception as exc:        # noqa: BLE001 - reported in the table, never dropped
        return {**res, "status": "error", "detail": f"{type(exc).__name__}: {exc}"[:300]}
    counts = {r0.count} | {r.count for r, _ in runs}
    res.update(count=int(r0.count),
               wall_s=statistics.median(w for _, w in runs),
               engine_s=statistics.median(r.seconds for r, _ in runs),
               plan_s=statistics.median(r.plan_seconds for r, _ in runs),
               compile_s=max(r.compile_seconds for r, _ in runs),
               runs=[{"wall_s": w, "engine_s": r.seconds, "plan_s": r.plan_seconds}
                     for r, w in runs])
    if len(counts) != 1:
        res.update(status="error", detail=f"counts differ between calls: {sorted(counts)}")
    return res


def _free_device_pools() -> None:
    """Give CuPy's cached blocks back to the device before a gMatch process needs them."""
    try:
        import cupy as cp
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()
    except Exception:       # noqa: BLE001 - no CuPy: nothing cached
        pass


def _gpu_visible() -> bool:
    """Whether ``nvidia-smi -L`` lists a GPU."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    except OSError:
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def _device_name() -> str | None:
    try:
        import cupy as cp
        from warpmatch.engine.gpu.device import device_properties
        name = device_properties(cp, cp.cuda.Device().id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:       # noqa: BLE001
        return None


# ====================================================================== graphs
def load_graph(spec: str, args: argparse.Namespace, work: Path) -> tuple[str, Any, float]:
    """``(label, Graph, seconds)`` for one ``--graph`` entry (``chung-lu``, ``chung-lu:1e8``,
    ``snap:PATH``)."""
    import warpmatch as wm
    t0 = time.perf_counter()
    if spec == "chung-lu" or spec.startswith("chung-lu:"):
        edges = float(spec.split(":", 1)[1]) if ":" in spec else float(args.edges)
        g, _ = load("distributed").build_graph(argparse.Namespace(
            work_dir=str(work), graph="chung-lu", edges=edges, seed=args.seed))
        return f"chung-lu {edges:.0e}", g, time.perf_counter() - t0
    if spec.startswith("snap:"):
        p = Path(os.path.expandvars(spec[5:])).expanduser()
        if not p.exists():
            for cand in (DATA / "snap" / p.name, DATA / "snap" / f"{p.name}.txt"):
                if cand.is_file():
                    p = cand
                    break
        if not p.exists():
            raise SystemExit(f"--graph {spec}: {p} not found")
        g = wm.read_graph(p)
        return f"snap:{g.name}", g, time.perf_counter() - t0
    raise SystemExit(f"--graph {spec}: expected chung-lu, chung-lu:EDGES or snap:PATH")


# ====================================================================== table
def _fmt_s(x: float | None) -> str:
    if x is None:
        return "-"
    return "<0.001" if x == 0 else f"{x:.3f}"


def _num(x: int | None) -> str:
    return "-" if x is None else f"{x:,}"


def _cell(res: dict[str, Any], key: str, limit: float) -> str:
    if res["status"] == "timeout":
        return f"> {limit:g}"
    if res["status"] != "ok":
        return res["status"]
    return _fmt_s(res.get(key))


def compare(row: dict[str, Any], mode: str) -> None:
    """Fill ``row['equal']`` (True, False or None when a side has no count) and its notes."""
    gm, w = row["gmatch"], row["warpmatch"]
    notes = row.setdefault("notes", [])
    row["equal"] = None
    if gm["status"] == "ok":
        if gm["unique"] is not None and gm["symmetry"]:
            if gm["unique"] * gm["symmetry"] != gm["result"]:
                notes.append(f"gMatch: Result {gm['result']} != unique count {gm['unique']} "
                             f"x Symmetry {gm['symmetry']}")
        if gm["loaded"] is not None and tuple(gm["loaded"]) != (row["n"], row["m"]):
            notes.append(f"gMatch read |V|, |E| = {tuple(gm['loaded'])}, not "
                         f"{(row['n'], row['m'])}")
    if gm["status"] == "ok" and w["status"] == "ok":
        g_count = gm["result"] if mode == "embeddings" else gm["unique"]
        row["count"] = w["count"]
        row["gmatch_count"] = g_count
        row["equal"] = g_count == w["count"]
        if w.get("aut") and gm["symmetry"] and w["aut"] != gm["symmetry"]:
            notes.append(f"|Aut|: gMatch {gm['symmetry']}, warpmatch {w['aut']}")
    elif w["status"] == "ok":
        row["count"] = w["count"]
    elif gm["status"] == "ok":
        row["count"] = gm["result"] if mode == "embeddings" else gm["unique"]
    else:
        row["count"] = None


def print_table(rows: list[dict[str, Any]], limit: float) -> None:
    """The markdown table: one line per graph and pattern."""
    print("| graph | pattern | count | gMatch s | gMatch prep s | gMatch wall s | warpmatch s "
          "| wm engine s | gMatch/wm | (gMatch + prep)/wm | equal? |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        gm, w = r["gmatch"], r["warpmatch"]
        ratio = ratio_prep = "-"
        prep_ms = gm.get("data_preparation_ms")
        prep = "-" if prep_ms is None else f"{prep_ms / 1e3:.3f}"
        if gm["status"] == "ok" and w["status"] == "ok" and gm["seconds"] and w["wall_s"]:
            ratio = f"{gm['seconds'] / w['wall_s']:.2f}x"
        elif gm["status"] == "ok" and w["status"] == "ok" and gm["seconds"] == 0:
            ratio = "n/a (< 1 ms)"
        if gm["status"] == "ok" and w["status"] == "ok" and prep_ms and w["wall_s"]:
            ratio_prep = f"{(gm['seconds'] + prep_ms / 1e3) / w['wall_s']:.2f}x"
        if r["equal"] is True:
            eq = "yes"
        elif r["equal"] is False:
            eq = f"MISMATCH (gMatch {_num(r['gmatch_count'])}, warpmatch {_num(r['count'])})"
        else:
            eq = "-"
        count = _num(r.get("count"))
        gwall = (f"> {limit:g}" if gm["status"] == "timeout" else
                 _fmt_s(gm.get("wall_s")) if gm["status"] == "ok" else gm["status"])
        print(f"| {r['graph']} | {r['pattern']} | {count} | {_cell(gm, 'seconds', limit)} "
              f"| {prep} | {gwall} | {_cell(w, 'wall_s', limit)} "
              f"| {_cell(w, 'engine_s', limit)} | {ratio} | {ratio_prep} | {eq} |")
    notes = [(r, n) for r in rows for n in r.get("notes", [])]
    notes += [(r, f"gMatch {r['gmatch']['status']}: {r['gmatch']['detail']}") for r in rows
              if r["gmatch"]["status"] not in ("ok",)]
    notes += [(r, f"warpmatch {r['warpmatch']['status']}: {r['warpmatch']['detail']}")
              for r in rows if r["warpmatch"]["status"] not in ("ok",)]
    for r, n in notes:
        print(f"- {r['graph']} / {r['pattern']}: {n}")


# ====================================================================== self-check
def self_check(gmatch_dir: Path | None, binary: Path | None) -> int:
    """Round-trip the conversions on a 6-vertex graph and a set of queries (no GPU).

    Checks: the binary CSR file read back by :func:`read_gmatch_bin` (and its header by
    ``struct``) equals the graph; the text file read back by :func:`read_gmatch_text`
    rebuilds the same CSR; each query written as gMatch text reads back as an isomorphic
    query with the same |Aut| and the same count on the small graph (reference engine), and
    a 4-cycle's numbering suits gMatch's fixed order; gMatch's patterns p1..p9 (when the
    tree is there) read as queries; :func:`parse_gmatch_output` on text in gMatch's
    formats. With a built ``binary``, it is also run on the small graph: a count (GPU) is
    compared with the reference engine's, and without a GPU the sizes it read and its
    |Aut| are checked.
    """
    import networkx as nx

    import warpmatch as wm
    from warpmatch.graph.csr import Graph
    from warpmatch.query import get_pattern
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
    g = Graph.from_edges([a for a, _ in edges], [b for _, b in edges], n=6, name="six")
    with tempfile.TemporaryDirectory(prefix="wm_gmatch_check_") as tmp:
        tmp_p = Path(tmp)
        # binary CSR
        bin_p = tmp_p / "six.bin"
        size = write_gmatch_bin(bin_p, g)
        raw = bin_p.read_bytes()
        check(size == 8 + 8 * 7 + 4 * 6 + 4 * 2 * len(edges), f"binary size {size}")
        check(struct.unpack_from("<iI", raw, 0) == (6, len(edges)), "binary header")
        check(struct.unpack_from("<7Q", raw, 8) == tuple(np.asarray(g.indptr).tolist()),
              "binary offsets (uint64, read with struct)")
        b = read_gmatch_bin(bin_p)
        check(b["n"] == 6 and b["m"] == len(edges), "binary n, m")
        check(np.array_equal(b["offsets"], np.asarray(g.indptr)), "binary offsets")
        check(not b["labels"].any(), "binary labels all 0")
        check(np.array_equal(b["neighbors"], np.asarray(g.indices)), "binary neighbours")
        rows_sorted = all(np.all(np.diff(b["neighbors"][b["offsets"][v]:b["offsets"][v + 1]]) > 0)
                          for v in range(6))
        check(rows_sorted, "binary rows sorted ascending")
        # text
        txt_p = tmp_p / "six.graph"
        write_gmatch_text_graph(txt_p, g)
        t = read_gmatch_text(txt_p.read_text())
        g2 = Graph.from_edges(t["edges"][:, 0], t["edges"][:, 1], n=t["n"])
        check(t["n"] == 6 and t["m"] == len(edges), "text n, m")
        check(np.array_equal(np.asarray(g2.indptr), np.asarray(g.indptr))
              and np.array_equal(np.asarray(g2.indices), np.asarray(g.indices)),
              "text graph rebuilds the CSR")
        check(np.array_equal(t["degrees"], np.diff(np.asarray(g.indptr))), "text degrees")
        # queries
        names = "triangle,square,diamond,4-clique,tailed-triangle,house,5-clique,5-cycle"
        qs = load_patterns(names, None)
        if (DATA / "patterns" / "stmatch24.txt").is_file():
            qs += load_patterns("stmatch24", None)
        qs.append(("scrambled 4-cycle",
                   Query.from_edges([(0, 2), (2, 1), (1, 3), (3, 0)], name="c4")))
        if gmatch_dir is not None and (gmatch_dir / "patterns").is_dir():
            qs += gmatch_patterns(gmatch_dir, "P1-P9")
        named = {n: get_pattern(n).to_networkx() for n in names.split(",")}
        for name, q in qs:
            text = gmatch_query_text(q)
            back = query_from_gmatch_text(text, name)
            parsed = read_gmatch_text(text)
            check(back.k == q.k and back.m == q.m, f"{name}: k, m")
            check(nx.is_isomorphic(back.to_networkx(), q.to_networkx()), f"{name}: isomorphic")
            check(automorphism_count(back) == automorphism_count(q), f"{name}: |Aut|")
            ref = wm.count(g, q, backend="reference")
            check(wm.count(g, back, backend="reference") == ref, f"{name}: count on six")
            if q.k == 4 and q.m == 4 and max(np.bincount(q.edges.ravel())) == 2:
                adj = {tuple(sorted(e)) for e in parsed["edges"].tolist()}
                order = [0, 1, 3, 2]           # gMatch's fixed 4-cycle order
                check(all(any(tuple(sorted((order[i], order[j]))) in adj for j in range(i))
                          for i in range(1, 4)), f"{name}: gMatch's order 0,1,3,2 connected")
            if name.startswith("gmatch:"):
                iso = [n for n, h in named.items() if nx.is_isomorphic(h, q.to_networkx())]
                print(f"{name}: {q.k} vertices, edges {q.edges.tolist()}, |Aut| "
                      f"{automorphism_count(q)}" + (f" = {iso[0]}" if iso else ""))
        # output parsing: lines in gMatch's formats (main.cu:108, 194-195; helper.h:396-401;
        # graph.cu:438)
        sample = ("Data graph loaded from CSR format file x.bin\n|V|=6 |E|=8\n"
                  "Symmetry = 6\n# Transfer time of the data graph, time (ms): 12(host), "
                  "11(kernel)\nData preparation: 3 ms\n# join_bfs_dfs_sym\n"
                  "# BFS Finished, time (ms): 1(host), 1(kernel)\n"
                  "# Processing, time (ms): 25(host), 24(kernel)\n"
                  "\x1b[41;37m\nResult: 36\n\x1b[0m\nunique count: 6\n")
        p = parse_gmatch_output(sample)
        check((p["result"], p["unique"], p["symmetry"]) == (36, 6, 6), "parse counts")
        check(p["seconds"] == 0.024 and p["host_seconds"] == 0.025, "parse Processing time")
        check(p["path"] == "join_bfs_dfs_sym" and p["loaded"] == (6, 8)
              and p["data_preparation_ms"] == 3 and len(p["phases"]) == 3, "parse the rest")
        # the binary itself, where built
        if binary is not None and binary.is_file():
            gpu = _gpu_visible()
            for name, q in qs[:7] + [x for x in qs if x[0].startswith("gmatch:")]:
                qf = tmp_p / f"{_safe(name)}.txt"
                qf.write_text(gmatch_query_text(q))
                for pad in range(1 if gpu else 64):
                    # without a GPU, gMatch divides by a field of device properties it failed
                    # to get (main.cu:15-20): garbage from the stack, often 0 (SIGFPE). The
                    # environment's size moves the stack until a run gets past it to read
                    # the files, print what it read and stop at its first CUDA call.
                    env = None if gpu else {**os.environ, "WM_GMATCH_PAD": "x" * 8 * pad}
                    r = run_gmatch(binary, bin_p, qf, 60.0, tmp_p / f"{_safe(name)}.log",
                                   env=env)
                    if r["status"] != "crash" or not r["detail"].startswith("SIGFPE"):
                        break
                if not gpu and r["status"] == "crash" and r["detail"].startswith("SIGFPE"):
                    print(f"{name}: gMatch not checked (no GPU: every try stopped at its "
                          "device query)")
                elif r["status"] == "ok":
                    ref = wm.count(g, q, backend="reference")
                    check(r["result"] == ref, f"{name}: gMatch {r['result']} vs {ref}")
                else:
                    check(r["loaded"] == (6, len(edges)),
                          f"{name}: gMatch read {r['loaded']} ({r['status']}: {r['detail']})")
                    check(r["symmetry"] == automorphism_count(q),
                          f"{name}: gMatch's Symmetry {r['symmetry']}")
                    print(f"{name}: gMatch did not finish ({r['status']}: {r['detail']}); "
                          f"it read |V|, |E| = {r['loaded']}, Symmetry = {r['symmetry']}")
    print(f"self-check: {passed} checks passed, {len(failures)} failed")
    return 1 if failures else 0


# ====================================================================== main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gmatch", default=None,
                    help="gMatch's source tree (git archive of w20chen/gMatch)")
    ap.add_argument("--build-dir", default="build/gmatch",
                    help="where gMatch is copied and built (build/gmatch)")
    ap.add_argument("--gmatch-binary", default=None,
                    help="a built SubgraphMatching_unlabeled to run instead of building one")
    ap.add_argument("--cuda-arch", default="native",
                    help="CUDA architecture of the gMatch build: native (gMatch's own, the "
                         "GPU seen at configure time) or e.g. 90 for H100/H200")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="make -j")
    ap.add_argument("--graph", default="chung-lu",
                    help="comma-separated: chung-lu (--edges), chung-lu:EDGES, snap:PATH")
    ap.add_argument("--edges", type=float, default=1e7, help="Chung-Lu edges (1e7)")
    ap.add_argument("--seed", type=int, default=1, help="Chung-Lu seed (1)")
    ap.add_argument("--patterns", default=DEFAULT_PATTERNS,
                    help="comma-separated: warpmatch names, stmatch24, stmatch:A-B, "
                         "gmatch:P1-P9")
    ap.add_argument("--mode", choices=("embeddings", "subgraphs"), default="embeddings",
                    help="embeddings: vs gMatch's Result (default); subgraphs: vs its "
                         "unique count")
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="seconds per gMatch process and per warpmatch call (60)")
    ap.add_argument("--repeats", type=int, default=3, help="timed warpmatch calls (3)")
    ap.add_argument("--gmatch-repeats", type=int, default=1, help="gMatch runs (1)")
    ap.add_argument("--gmatch-args", default="",
                    help="extra arguments for gMatch, e.g. '--reorder 0' (none)")
    ap.add_argument("--work-dir", default="build/gmatch-work",
                    help="graphs (.wmg, .bin), query files and gMatch's logs")
    ap.add_argument("--json", default=None, help="write every number here")
    ap.add_argument("--self-check", action="store_true",
                    help="check the file conversions on a tiny graph and exit (no GPU)")
    args = ap.parse_args(argv)

    gm_dir = Path(args.gmatch).expanduser().resolve() if args.gmatch else None
    if args.self_check:
        if gm_dir is None and (ROOT / ".peers" / "gmatch").is_dir():
            gm_dir = ROOT / ".peers" / "gmatch"
        binary = (Path(args.gmatch_binary) if args.gmatch_binary
                  else Path(args.build_dir) / "build" / TARGET)
        return self_check(gm_dir, binary)
    if gm_dir is None and args.gmatch_binary is None:
        ap.error("--gmatch (gMatch's source tree) or --gmatch-binary is required")

    patterns = load_patterns(args.patterns, gm_dir)
    qtexts = {}
    for name, q in patterns:
        try:
            qtexts[name] = gmatch_query_text(q)
        except ValueError as exc:
            raise SystemExit(f"pattern {name}: {exc}") from None
    if args.gmatch_binary:
        binary = Path(args.gmatch_binary).expanduser().resolve()
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise SystemExit(f"--gmatch-binary {binary}: not an executable")
        build_info: dict[str, Any] = {"binary": str(binary), "given": True}
    else:
        binary, build_info = build_gmatch(gm_dir, Path(args.build_dir).resolve(),
                                          args.cuda_arch, args.jobs)
    extra = shlex.split(args.gmatch_args)
    work = Path(args.work_dir).resolve()
    (work / "queries").mkdir(parents=True, exist_ok=True)
    (work / "logs").mkdir(parents=True, exist_ok=True)
    device = _device_name()
    _log(f"device {device}; gMatch {binary}")

    rows: list[dict[str, Any]] = []
    graphs: dict[str, Any] = {}
    for spec in (s.strip() for s in args.graph.split(",") if s.strip()):
        label, g, load_s = load_graph(spec, args, work)
        if g.directed:
            raise SystemExit(f"{label}: directed; gMatch counts undirected graphs")
        data_bin = work / f"{_safe(g.name)}.gmatch.bin"
        t0 = time.perf_counter()
        size = write_gmatch_bin(data_bin, g)
        graphs[label] = {"n": int(g.n), "m": int(g.num_edges), "max_degree": int(g.max_degree),
                         "load_s": load_s, "bin": str(data_bin), "bin_bytes": size,
                         "bin_write_s": time.perf_counter() - t0}
        _log(f"graph {label}: {g.n:,} vertices, {g.num_edges:,} edges, max degree "
             f"{g.max_degree:,}; gMatch file {data_bin} ({size / 2**20:.0f} MiB)")
        for name, q in patterns:
            qf = work / "queries" / f"{_safe(name)}.txt"
            qf.write_text(qtexts[name])
            _free_device_pools()
            gm = gmatch_runs(binary, data_bin, qf, args.time_limit,
                             work / "logs" / f"{_safe(g.name)}__{_safe(name)}",
                             args.gmatch_repeats, extra)
            w = run_warpmatch(g, q, args.mode, args.repeats, args.time_limit)
            row = {"graph": label, "pattern": name, "k": int(q.k), "edges": q.edges.tolist(),
                   "n": int(g.n), "m": int(g.num_edges), "query_file": str(qf),
                   "gmatch": gm, "warpmatch": w}
            compare(row, args.mode)
            rows.append(row)
            _log(f"{label} / {name}: gMatch {gm['status']} {gm['result']} "
                 f"{_fmt_s(gm['seconds'])} s (wall {gm['wall_s']:.2f} s); warpmatch "
                 f"{w['status']} {w['count']} {_fmt_s(w.get('wall_s'))} s; equal "
                 f"{row['equal']}")
        del g

    mismatches = sum(r["equal"] is False for r in rows)
    failures = sum(r["gmatch"]["status"] in ("crash", "error") or r["warpmatch"]["status"]
                   == "error" for r in rows)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "args": vars(args), "device": device, "mode": args.mode, "gmatch_build": build_info,
            "graphs": graphs, "rows": rows, "mismatches": mismatches, "failures": failures},
            indent=1, default=str))
    print(f"\nwarpmatch GPU engine vs gMatch ({TARGET}); {args.mode}, non-induced; device "
          f"{device}; time limit {args.time_limit:g} s\n")
    print_table(rows, args.time_limit)
    if mismatches or failures:
        print(f"\n{mismatches} MISMATCH(ES), {failures} failed run(s)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
