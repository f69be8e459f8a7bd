"""EGSM's file format, output and build, for ``bench/egsm_peer.py`` (see its docstring).

- :func:`read_tve` / :func:`egsm_text` / :func:`convert_file`: the shipped ``t/v/e`` files
  (``v id label``, ``e u v label``) into EGSM's variant (``t N M``, ``v id label degree``,
  ``e u v``), checked on the way;
- :func:`egsm_reader`: a line-by-line model of EGSM's reader (``graph/graph.cpp:9-138``)
  and :func:`egsm_file_problems`, what in a file would make that reader go wrong;
  :func:`same_graph` / :func:`same_query`: what EGSM reads equals what warpmatch reads;
- :func:`parse_egsm_output`: the lines EGSM prints (``main.cpp``, ``execution.cu``,
  ``utils/cuda_helpers.h``);
- :func:`prepare_sources` / :func:`build_egsm`: the adapted copy and its CMake build.

Line references are to RapidsAtHKUST/EGSM commit de854d5.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from _gmatch_build import _log, _version, reuse_build, source_hash

#: ``utils/config.h:10-11``; ``graph/graph.cpp:37-41`` exits on a larger query
MAX_VCOUNT = 16
MAX_ECOUNT = 32
#: the CMake target (``CMakeLists.txt:65``)
TARGET = "EGSM"
#: bump when the build recipe changes (part of the build's stamp)
BUILD_RECIPE = "1"
TOO_LARGE_MSG = "The query graph should have at most 16 vertices and 32 edges."


# ====================================================================== files
def read_tve(text: str, what: str) -> dict[str, Any]:
    """Parse a ``t/v/e`` graph in either variant (the header is informational).

    Accepts ``v id label [degree]`` and ``e u v [label]`` lines, ``#`` comments and blank
    lines. Vertex ids must be exactly ``0..n-1`` (in any order).

    Returns
    -------
    dict
        ``n``, ``labels`` (int64, n), ``edges`` (int64, (m, 2), as listed), ``edge_labels``
        (int64, m, 0 where absent), ``degrees`` (int64, n, or None when no ``v`` line has a
        degree field).

    Raises
    ------
    ValueError
        On an unknown line, a repeated or missing vertex id, an edge to an unknown vertex.
    """
    vid, lab, deg, eu, ev, el = [], [], [], [], [], []
    for no, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f or f[0].startswith("#") or f[0] == "t":
            continue
        try:
            if f[0] == "v" and len(f) in (3, 4):
                vid.append(int(f[1]))
                lab.append(int(f[2]))
                deg.append(int(f[3]) if len(f) == 4 else -1)
            elif f[0] == "e" and len(f) in (3, 4):
                eu.append(int(f[1]))
                ev.append(int(f[2]))
                el.append(int(f[3]) if len(f) == 4 else 0)
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"{what}:{no}: not a t/v/e line: {line[:80]!r}") from None
    n = len(vid)
    ids = np.asarray(vid, np.int64)
    if n == 0 or not np.array_equal(np.sort(ids), np.arange(n)):
        raise ValueError(f"{what}: vertex ids are not 0..{n - 1} each once")
    order = np.argsort(ids)
    labels = np.asarray(lab, np.int64)[order]
    d = np.asarray(deg, np.int64)[order]
    edges = np.stack([np.asarray(eu, np.int64), np.asarray(ev, np.int64)], 1).reshape(-1, 2)
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(f"{what}: an edge names a vertex outside 0..{n - 1}")
    return {"n": n, "labels": labels, "edges": edges, "edge_labels": np.asarray(el, np.int64),
            "degrees": None if (d < 0).all() else d}


def normalise(g: dict[str, Any], what: str) -> tuple[np.ndarray, list[str]]:
    """The undirected edges of :func:`read_tve`'s graph, each once as ``u < v``, sorted.

    Returns
    -------
    (ndarray, list of str)
        The edges, and notes on what was changed (duplicate pairs merged).

    Raises
    ------
    ValueError
        On a self-loop, a non-zero edge label (EGSM reads none: the counts would differ),
        or a listed degree that is not the vertex's number of distinct neighbours.
    """
    e = g["edges"]
    if (e[:, 0] == e[:, 1]).any():
        raise ValueError(f"{what}: {int((e[:, 0] == e[:, 1]).sum())} self-loop(s): EGSM's "
                         "reader and warpmatch's would not agree on them")
    if g["edge_labels"].any():
        raise ValueError(f"{what}: edge labels other than 0; EGSM matches vertex labels only")
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    pairs = np.unique(np.stack([lo, hi], 1), axis=0).reshape(-1, 2)
    notes = []
    if len(pairs) != len(e):
        notes.append(f"{len(e) - len(pairs)} repeated edge(s) merged (EGSM: at most one edge "
                     "per pair)")
    if g["degrees"] is not None:
        got = np.bincount(pairs.ravel(), minlength=g["n"])
        if not np.array_equal(got, g["degrees"]):
            bad = int(np.flatnonzero(got != g["degrees"])[0])
            raise ValueError(f"{what}: vertex {bad} lists degree {g['degrees'][bad]}, has "
                             f"{got[bad]} neighbours")
    return pairs, notes


def egsm_text(labels: np.ndarray, pairs: np.ndarray) -> str:
    """EGSM's input (its README, "Input File Format"): ``t N M``, ``v id label degree`` in id
    order, then ``e u v`` with ``u < v`` sorted, so every neighbour list EGSM builds
    (``graph.cpp:98-108``, in file order) is ascending."""
    n = len(labels)
    deg = np.bincount(pairs.ravel(), minlength=n)
    out = [f"t {n} {len(pairs)}"]
    out += [f"v {i} {int(labels[i])} {int(deg[i])}" for i in range(n)]
    out += [f"e {int(u)} {int(v)}" for u, v in pairs]
    return "\n".join(out) + "\n"


def query_support(n: int, m: int) -> str | None:
    """Why EGSM cannot take a query of ``n`` vertices and ``m`` edges, or None."""
    if n > MAX_VCOUNT or m > MAX_ECOUNT:
        return (f"{n} vertices, {m} edges: EGSM takes at most {MAX_VCOUNT} and {MAX_ECOUNT} "
                "(utils/config.h:10-11, graph/graph.cpp:37-41)")
    return None


def convert_file(src: Path, dst: Path) -> dict[str, Any]:
    """Write ``src`` (either ``t/v/e`` variant) in EGSM's format to ``dst`` and check it.

    Returns
    -------
    dict
        ``n``, ``m`` (distinct undirected edges), ``notes``, ``unsupported`` (the reason
        EGSM refuses it as a query, or None), ``file``.

    Raises
    ------
    ValueError
        As :func:`read_tve` and :func:`normalise`, or if the written file would not be read
        back as the same graph by EGSM's reader (:func:`egsm_file_problems`).
    """
    g = read_tve(src.read_text(), str(src))
    pairs, notes = normalise(g, str(src))
    text = egsm_text(g["labels"], pairs)
    problems = egsm_file_problems(text, g["labels"], pairs)
    if problems:
        raise ValueError(f"{src} -> {dst}: " + "; ".join(problems))
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".part")
    tmp.write_text(text)
    tmp.replace(dst)
    return {"n": g["n"], "m": int(len(pairs)), "notes": notes, "file": str(dst),
            "unsupported": query_support(g["n"], int(len(pairs)))}


def egsm_reader(text: str) -> dict[str, Any]:
    """What EGSM's ``Graph::Graph`` (``graph/graph.cpp:25-121``) builds from ``text``.

    The header gives the array sizes (``vcount_``, ``ecount_``: ``neighbors_`` holds
    ``2 * ecount_ + 1``); each ``v`` line sets ``offsets[id + 1] = offsets[id] + degree``
    (so ``v`` lines must come in id order and carry the true degree); each ``e`` line
    appends to both endpoints' rows at ``offsets[x] + filled[x]``. Every unsigned overflow
    or out-of-bounds write of the C++ is reported instead of performed.

    Returns
    -------
    dict
        ``n``, ``m`` (the header), ``labels``, ``offsets``, ``neighbors``, ``filled`` (per
        vertex), ``problems`` (list of str).
    """
    toks = text.split()
    problems: list[str] = []
    if len(toks) < 3 or toks[0] != "t":
        return {"problems": ["no 't N M' header"], "n": 0, "m": 0}
    n, m = int(toks[1]), int(toks[2])
    labels = np.full(n, -1, np.int64)
    offsets = np.zeros(n + 1, np.int64)
    neighbors = np.full(2 * m + 1, -1, np.int64)
    filled = np.zeros(n, np.int64)
    seen = np.zeros(n, bool)
    i = 3
    while i < len(toks):
        kind = toks[i]
        width = 4 if kind == "v" else 3
        try:                    # ``ifs >> type`` takes one char, then numbers
            nums = [int(x) for x in toks[i + 1:i + width]]
            if len(kind) != 1 or len(nums) != width - 1:
                raise ValueError
        except ValueError:
            problems.append(f"{' '.join(toks[i:i + width])!r}: not a line EGSM's reader "
                            "takes as a vertex or an edge (a stream error ends its reading)")
            break
        i += width
        if kind == "v":
            v, lab, deg = nums
            if v >= n:
                problems.append(f"v {v} >= vcount {n}")
                continue
            if v > 0 and not seen[v - 1]:
                problems.append(f"v {v} before v {v - 1}: offsets[{v}] not yet set")
            labels[v], seen[v] = lab, True
            offsets[v + 1] = offsets[v] + deg
        else:                   # graph.cpp:96: anything but 'v' is an edge
            a, b = nums
            early = [x for x in (a, b) if x >= n or not seen[x]]
            if early:
                problems.append(f"edge ({a}, {b}) before vertex {early[0]}")
                continue
            for x, y in ((a, b), (b, a)):
                pos = offsets[x] + filled[x]
                if filled[x] >= offsets[x + 1] - offsets[x] or pos >= len(neighbors):
                    problems.append(f"vertex {x}: more edges than its degree")
                else:
                    neighbors[pos] = y
                filled[x] += 1
    if not seen.all():
        problems.append(f"{int((~seen).sum())} vertex line(s) missing")
    if offsets[-1] != 2 * m:
        problems.append(f"degrees sum to {offsets[-1]}, header says 2 * {m}")
    return {"n": n, "m": m, "labels": labels, "offsets": offsets, "neighbors": neighbors,
            "filled": filled, "problems": problems}


def egsm_file_problems(text: str, labels: np.ndarray, pairs: np.ndarray) -> list[str]:
    """What keeps EGSM (:func:`egsm_reader`) from reading ``text`` as the graph with these
    ``labels`` and ``pairs``: reader problems, unfilled rows, rows not ascending (the query's
    plan looks neighbours up with ``std::lower_bound``, ``processing/plan.cu:30-42``), or a
    CSR other than the graph's."""
    r = egsm_reader(text)
    probs = list(r["problems"])
    if probs:
        return probs
    n, off, nb = r["n"], r["offsets"], r["neighbors"]
    if n != len(labels) or r["m"] != len(pairs):
        probs.append(f"header {n} {r['m']}, graph {len(labels)} {len(pairs)}")
        return probs
    if not np.array_equal(r["filled"], np.diff(off)):
        probs.append("a row is not filled to its degree")
    if not np.array_equal(r["labels"], labels):
        probs.append("labels differ")
    src = np.repeat(np.arange(n), np.diff(off))
    row = nb[:len(src)]
    if len(src) and np.any((np.diff(row) <= 0) & (src[1:] == src[:-1])):
        probs.append("a neighbour list is not strictly ascending")
    want = np.concatenate([pairs, pairs[:, ::-1]]).reshape(-1, 2)
    got = np.stack([src, row], 1)
    if not np.array_equal(np.unique(got, axis=0), np.unique(want, axis=0)):
        probs.append("the CSR EGSM builds is not the graph's")
    return probs


def same_graph(g: Any, egsm_file: Path) -> list[str]:
    """Differences between warpmatch's graph ``g`` and what EGSM reads from ``egsm_file``."""
    r = egsm_reader(egsm_file.read_text())
    if r["problems"]:
        return r["problems"]
    probs = []
    if r["n"] != g.n or not np.array_equal(r["labels"], np.asarray(g.vertex_labels)):
        probs.append("vertex count or labels differ")
    elif not np.array_equal(r["offsets"], np.asarray(g.indptr)) or not np.array_equal(
            r["neighbors"][:-1], np.asarray(g.indices)):
        probs.append("adjacency differs")
    return probs


def same_query(q: Any, egsm_file: Path) -> bool:
    """Whether warpmatch's query ``q`` is the one in ``egsm_file`` (labels and edges)."""
    r = egsm_reader(egsm_file.read_text())
    if r["problems"] or r["n"] != q.k or not np.array_equal(r["labels"], q.vertex_labels):
        return False
    ours = {tuple(sorted(map(int, e))) for e in np.asarray(q.edges)}
    src = np.repeat(np.arange(r["n"]), np.diff(r["offsets"]))
    return ours == {tuple(sorted((int(a), int(b)))) for a, b in zip(src, r["neighbors"])}


# ====================================================================== output
_RE_LOCAL = re.compile(r"^(.+?), time \(ms\): (\d+)\(host\), (\d+)\(kernel\)\s*$", re.M)
_RE_TOTAL = re.compile(r"^Total join time \(ms\): (\d+)\(host\) (\d+)\(kernel\)\s*$", re.M)
_RE_MATCHES = re.compile(r"^# Matches: (\d+)\s*$", re.M)
_RE_PARTIAL = re.compile(r"^Group (\d+) # partial results: (\d+)\s*$", re.M)
_RE_PLAN = re.compile(r"^Group (\d+): ([\d ]*)(\(tree\))?\s*$", re.M)
_RE_LB = re.compile(r"^Triggered Load Balancing: (true|false)\s*$", re.M)
_RE_MEM = re.compile(r"^(Before Allocation|After allocation), Free ([\d.e+-]+)GB", re.M)
_RE_ASSERT = re.compile(r"^GPUassert: (.*)$", re.M)
_RE_KERNEL_ERR = re.compile(r"^(\S+\.cuh?) \((\d+)\): (.+)$", re.M)
_RE_LB_SKIP = re.compile(r"^Skip load balancing due to (.*?) at ", re.M)


def parse_egsm_output(text: str) -> dict[str, Any]:
    """The numbers in one EGSM run's stdout and stderr.

    Formats: ``PRINT_LOCAL_TIME`` ``NAME, time (ms): H(host), K(kernel)`` and
    ``PRINT_TOTAL_TIME`` ``Total join time (ms): H(host) K(kernel)``
    (``utils/cuda_helpers.h:57-69``: whole milliseconds, truncated; "host" is
    ``std::chrono`` taken *before* the end event is synchronised, "kernel" the CUDA-event
    time of the same region); ``Build Cuckoo Tries`` and ``Filtering`` (``main.cpp:58-69``);
    ``Finish group I`` / ``Stop group I`` / ``Finish last group`` and ``Group I # partial
    results: N`` (``execution/execution.cu:99-174``); ``Total join`` (``execution.cu:182``);
    ``# Matches: N`` then ``End.`` (``main.cpp:98``); ``GPUassert: ...`` (host CUDA error,
    then ``exit``; ``cuda_helpers.h:14-21``); ``FILE (LINE): ERROR`` from a device-side
    check (``cuda_helpers.h:23-31``, at ``join_bfs_dfs.cu:18, 727-729, 932-934``: a child
    launch or free that failed; its ``assert`` is compiled out in the Release build, so the
    kernel goes on without that work); ``Skip load balancing due to ...``
    (``join_bfs_dfs.cu:742, 947``: a device-side ``cudaMalloc`` failed, the warp goes on
    itself).

    Returns
    -------
    dict
        ``matches`` (int or None), ``end`` (``End.`` seen), ``seconds`` (tries + filtering +
        join, CUDA-event "kernel" times) and ``host_seconds`` (the same, host), both None
        unless all three were printed, ``tries_ms``, ``filter_ms``, ``join_ms`` ((host,
        kernel) or None), ``groups`` (the join's printed steps), ``partial_results``,
        ``plan_groups``, ``combined`` (a group overflowed the pool: the rest joined in one
        pass), ``lb_triggered``, ``lb_skipped``, ``mem_free_gb``, ``gpu_assert``,
        ``kernel_errors``, ``too_large``, ``missing_file``.
    """
    local = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in _RE_LOCAL.finditer(text)]
    named = {name: (h, k) for name, h, k in local}
    tot = _RE_TOTAL.search(text)
    join = (int(tot.group(1)), int(tot.group(2))) if tot else None
    tries, filt = named.get("Build Cuckoo Tries"), named.get("Filtering")
    m = _RE_MATCHES.search(text)
    lb = _RE_LB.search(text)
    a = _RE_ASSERT.search(text)
    out: dict[str, Any] = {
        "matches": int(m.group(1)) if m else None,
        "end": bool(re.search(r"^End\.\s*$", text, re.M)),
        "tries_ms": tries, "filter_ms": filt, "join_ms": join,
        "seconds": None, "host_seconds": None,
        "groups": [(n, h, k) for n, h, k in local if n not in ("Build Cuckoo Tries",
                                                                "Filtering")],
        "partial_results": [(int(g), int(c)) for g, c in _RE_PARTIAL.findall(text)],
        "plan_groups": len(_RE_PLAN.findall(text)),
        "combined": "Combine remaining groups." in text,
        "lb_triggered": None if lb is None else lb.group(1) == "true",
        "lb_skipped": len(_RE_LB_SKIP.findall(text)),
        "mem_free_gb": {w: float(x) for w, x in _RE_MEM.findall(text)},
        "gpu_assert": a.group(1).strip() if a else None,
        "kernel_errors": sorted({f"{f} ({ln}): {e.strip()}"
                                 for f, ln, e in _RE_KERNEL_ERR.findall(text)}),
        "too_large": TOO_LARGE_MSG in text,
        "missing_file": "File not exist!" in text,
    }
    if tries and filt and join:
        out["seconds"] = (tries[1] + filt[1] + join[1]) / 1000
        out["host_seconds"] = (tries[0] + filt[0] + join[0]) / 1000
    return out


# ====================================================================== build
def prepare_sources(src: Path, dst: Path, arch: str, nvcc: tuple[int, ...] | None,
                    fix_unmap: bool) -> list[str]:
    """Copy EGSM's tree to ``dst`` and adapt the copy (never the source) for this toolkit.

    Changes: ``CUDA_ARCHITECTURES "70"`` (``CMakeLists.txt:54, 73``; CUDA 13 has no sm_70)
    becomes ``arch``; ``include_directories(/usr/local/cuda-11.7/include)``
    (``CMakeLists.txt:13``, which ``main.cpp``'s ``#include <cuda_runtime.h>``, compiled by
    g++, needs) becomes the toolkit's own include directory; with nvcc >= 12 the bundled
    ``cub/`` (CUB 1.17, ``cub/version.cuh:46``) is left out of the copy, so ``<cub/cub.cuh>``
    (``utils/types.h:5``, ``structures/hashed_trie_manager.cu:3``) is the toolkit's CCCL
    (the bundled one includes thrust headers CCCL no longer has). ``fix_unmap`` (a
    diagnostic, off by default) also widens ``unmap_u``'s ``lane_id < 12``
    (``processing/join_bfs_dfs.h:227``) to ``MAX_VCOUNT``, as ``map_new_v`` has (line 184).

    Returns
    -------
    list of str
        The changes made, for the record.
    """
    drop_cub = nvcc is None or nvcc >= (12,)
    shutil.rmtree(dst, ignore_errors=True)
    ignore = ["build", ".git"] + (["cub"] if drop_cub else [])
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*ignore))
    cml = dst / "CMakeLists.txt"
    text = cml.read_text()
    patches = []
    n70 = text.count('CUDA_ARCHITECTURES "70"')
    if n70 != 2:
        raise SystemExit(f"{src}/CMakeLists.txt: expected CUDA_ARCHITECTURES \"70\" twice, "
                         f"found {n70}: not the EGSM tree this script knows")
    text = text.replace('CUDA_ARCHITECTURES "70"', f'CUDA_ARCHITECTURES "{arch}"')
    patches.append(f'CMakeLists.txt:54,73: CUDA_ARCHITECTURES "70" -> "{arch}"')
    old_inc = "include_directories(/usr/local/cuda-11.7/include)"
    if old_inc in text:
        text = text.replace(old_inc,
                            "include_directories(${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES})")
        patches.append("CMakeLists.txt:13: /usr/local/cuda-11.7/include -> "
                       "${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES}")
    cml.write_text(text)
    if drop_cub:
        patches.append("bundled cub/ (CUB 1.17) not copied: the toolkit's CCCL cub is used")
    if fix_unmap:
        h = dst / "processing" / "join_bfs_dfs.h"
        ht = h.read_text()
        old = "(lane_id < 12) && "
        if ht.count(old) != 1:
            raise SystemExit(f"{h}: 'lane_id < 12' not found once; --fix-unmap12 cannot apply")
        h.write_text(ht.replace(old, "(lane_id < MAX_VCOUNT) && "))
        patches.append("DIAGNOSTIC processing/join_bfs_dfs.h:227: unmap_u's lane_id < 12 -> "
                       "lane_id < MAX_VCOUNT")
    return patches


def build_egsm(egsm_dir: Path, build_dir: Path, arch: str, jobs: int,
               fix_unmap: bool = False) -> tuple[Path, dict[str, Any]]:
    """Build (or reuse) EGSM's binary in ``build_dir/build`` from a copy in
    ``build_dir/src`` (:func:`prepare_sources`); the log in ``build_dir/build.log``.

    Commands: ``cmake -S src -B build -DCMAKE_BUILD_TYPE=Release`` and ``cmake --build
    build --target EGSM -j JOBS`` (the library ``nd`` and ``link`` are its dependencies).
    A build whose stamp (sources, recipe, architecture, the diagnostic patch) matches is
    reused.

    Raises
    ------
    SystemExit
        If the tree is not EGSM's, cmake or nvcc is missing, or the build fails (with the
        commands and the log's last lines).
    """
    egsm_dir = egsm_dir.resolve()
    for f in ("CMakeLists.txt", "main.cpp", "utils/config.h", "execution/execution.cu"):
        if not (egsm_dir / f).is_file():
            raise SystemExit(f"--egsm {egsm_dir}: not EGSM's source tree ({f} missing)")
    cmake = _version(["cmake", "--version"], r"cmake version (\d+\.\d+(?:\.\d+)?)")
    if cmake is None:
        raise SystemExit("cmake not found: EGSM is built with cmake and make")
    nvcc = _version(["nvcc", "--version"], r"release (\d+\.\d+)")
    if nvcc is None:
        raise SystemExit("nvcc not found (put the CUDA toolkit's bin/ on PATH)")
    build_dir.mkdir(parents=True, exist_ok=True)
    tag = f"{BUILD_RECIPE}/{arch}/nvcc{nvcc[0]}/{'fix' if fix_unmap else 'orig'}"
    key = source_hash(egsm_dir, tag)
    exe = build_dir / "build" / TARGET
    stamp = build_dir / "build.stamp"
    old = reuse_build(exe, stamp, key, f"EGSM (built from {egsm_dir})")
    if old is not None:
        return exe, old
    stamp.unlink(missing_ok=True)
    patches = prepare_sources(egsm_dir, build_dir / "src", arch, nvcc, fix_unmap)
    log = build_dir / "build.log"
    cmds = [["cmake", "-S", str(build_dir / "src"), "-B", str(build_dir / "build"),
             "-DCMAKE_BUILD_TYPE=Release"],
            ["cmake", "--build", str(build_dir / "build"), "--target", TARGET,
             "-j", str(max(1, jobs))]]
    shutil.rmtree(build_dir / "build", ignore_errors=True)
    t0 = time.perf_counter()
    with open(log, "w") as lf:
        for cmd in cmds:
            _log("EGSM build: " + shlex.join(cmd))
            lf.write("$ " + shlex.join(cmd) + "\n")
            lf.flush()
            rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT)
            if rc != 0:
                lf.close()
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
                raise SystemExit(f"building EGSM failed ({shlex.join(cmd)}: exit {rc}); "
                                 f"patches {patches}; log {log}, last lines:\n{tail}")
    if not exe.is_file():
        raise SystemExit(f"the EGSM build finished but {exe} is missing (log {log})")
    ptx = re.findall(r"Compiling entry function '(_Z\d+joinDFSGroupKernel\w*)' for '[^']*'\n"
                     r"(?:.*\n){0,3}?ptxas info\s*: Used (\d+) registers[^\n]*? (\d+) bytes smem",
                     log.read_text(errors="replace"))
    info = {"binary": str(exe), "source_hash": key, "arch": arch, "patches": patches,
            "cmake": ".".join(map(str, cmake)), "nvcc": ".".join(map(str, nvcc)),
            "commands": [shlex.join(c) for c in cmds], "log": str(log),
            "build_seconds": time.perf_counter() - t0, "fix_unmap12": fix_unmap,
            "join_kernels": [{"kernel": k, "registers": int(r), "smem": int(s)}
                             for k, r, s in ptx]}
    stamp.write_text(json.dumps(info, indent=1))
    return exe, {**info, "reused": False}
