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
import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
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
ROOT = HERE.parent
DATA = Path(os.environ.get("WARPMATCH_DATA", ROOT / ".." / "shared" / "data"))
#: the gMatch program this benchmark runs (its CMake target) and the folder of its sources
TARGET = "SubgraphMatching_unlabeled"
SOURCE_DIR = "neighbor"
#: bump when the build recipe changes (part of the build's stamp)
BUILD_RECIPE = "1"
#: CUDA 13's CCCL declares ``cuda::ceil_div``, which gMatch's ``helper.h`` macro
#: ``ceil_div(a, b)`` breaks when thrust/cub are included after it (join_bfs.cu,
#: mem_manager.h). Parsing thrust and cub first (nvcc ``--pre-include``) leaves the macro to
#: gMatch's own code. Used only when the plain build fails that way.
CCCL_FIX = "-DCMAKE_CUDA_FLAGS=--pre-include cub/cub.cuh --pre-include thrust/scan.h"
INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
DEFAULT_PATTERNS = ("triangle,square,diamond,4-clique,tailed-triangle,house,5-clique,"
                    "gmatch:P5-P9")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


_MODULES: dict[str, Any] = {}


def _load(name: str):
    """A sibling benchmark as a module, loaded by path (``distributed.py`` is also the name
    of Dask's package)."""
    if name not in _MODULES:
        spec = importlib.util.spec_from_file_location(f"wm_bench_{name}", HERE / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _MODULES[name] = mod
    return _MODULES[name]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", name).strip("_") or "x"


# ====================================================================== file formats
def gmatch_bin_size(n: int, m: int) -> int:
    """Bytes of gMatch's binary CSR file for ``n`` vertices and ``m`` undirected edges."""
    return 8 + 8 * (n + 1) + 4 * n + 8 * m


def write_gmatch_bin(path: Path, graph: Any) -> int:
    """Write ``graph`` in gMatch's binary CSR format (its ``-b`` input), every label 0.

    The layout (gMatch README "Binary Format"; ``neighbor/graph.cu`` ``Graph::parse_csr``):
    int32 ``|V|``, uint32 ``|E|`` (undirected edges), ``|V| + 1`` uint64 offsets (the last
    is ``2|E|``), ``|V|`` int32 labels, ``2|E|`` int32 neighbours, row by row. gMatch
    intersects rows by binary search, so each row must be sorted, as warpmatch's are; it
    reads the file as binary CSR only if its path contains ``.bin``.

    Parameters
    ----------
    path : Path
        The file; written to ``path.part`` first, then renamed.
    graph : warpmatch.Graph
        Undirected; its labels are not written (gMatch's unlabeled binary ignores them).

    Returns
    -------
    int
        The file's size in bytes.
    """
    if graph.directed:
        raise ValueError(f"{graph.name}: gMatch takes undirected graphs only")
    if ".bin" not in path.name:
        raise ValueError(f"{path}: gMatch reads a -b file as binary CSR only if its name "
                         "contains '.bin'")
    n = int(graph.n)
    indices = np.asarray(graph.indices)
    m = int(indices.size) // 2
    if n > INT32_MAX or m > UINT32_MAX:
        raise ValueError(f"{graph.name}: {n} vertices, {m} edges exceed gMatch's 32-bit "
                         "header")
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<iI", n, m))
        np.asarray(graph.indptr).astype("<u8", copy=False).tofile(f)
        np.zeros(n, "<i4").tofile(f)
        indices.astype("<i4", copy=False).tofile(f)
    os.replace(tmp, path)
    size = path.stat().st_size
    if size != gmatch_bin_size(n, m):
        raise RuntimeError(f"{path}: {size} bytes written, {gmatch_bin_size(n, m)} expected")
    return size


def read_gmatch_bin(path: Path) -> dict[str, Any]:
    """Read a gMatch binary CSR file back (written from its README's description alone).

    Returns
    -------
    dict
        ``n``, ``m``, ``offsets`` (uint64, n + 1), ``labels`` (int32, n), ``neighbors``
        (int32, 2m).

    Raises
    ------
    ValueError
        If the file's size, its offsets or its neighbour ids do not fit the layout.
    """
    with open(path, "rb") as f:
        n = int(np.fromfile(f, "<i4", 1)[0])
        m = int(np.fromfile(f, "<u4", 1)[0])
        offsets = np.fromfile(f, "<u8", n + 1)
        labels = np.fromfile(f, "<i4", n)
        neighbors = np.fromfile(f, "<i4", 2 * m)
        rest = f.read()
    if offsets.size != n + 1 or labels.size != n or neighbors.size != 2 * m or rest:
        raise ValueError(f"{path}: size does not match |V|={n}, |E|={m}")
    if offsets[0] != 0 or offsets[-1] != 2 * m or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise ValueError(f"{path}: offsets do not run from 0 to 2|E| = {2 * m}")
    if neighbors.size and (neighbors.min() < 0 or neighbors.max() >= n):
        raise ValueError(f"{path}: a neighbour id is outside 0..{n - 1}")
    return {"n": n, "m": m, "offsets": offsets, "labels": labels, "neighbors": neighbors}


def _undirected_pairs(graph: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each undirected edge of ``graph`` once, as ``(u, v)`` with ``u < v``."""
    indptr = np.asarray(graph.indptr, np.int64)
    src = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(indptr))
    dst = np.asarray(graph.indices, np.int64)
    keep = src < dst
    return src[keep], dst[keep]


def write_gmatch_text_graph(path: Path, graph: Any) -> None:
    """Write ``graph`` in gMatch's text format (``-d``; small graphs: one line per edge).

    ``t |V| |E|``, then ``v id label degree`` for every vertex (label 0; the degree is
    checked against the edges: ``neighbor/graph.cu:264-275`` exits on a difference), then
    ``e u v`` once per undirected edge; ids 0-based.
    """
    u, v = _undirected_pairs(graph)
    deg = np.diff(np.asarray(graph.indptr, np.int64))
    lines = [f"t {graph.n} {u.size}"]
    lines += [f"v {i} 0 {d}" for i, d in enumerate(deg.tolist())]
    lines += [f"e {a} {b}" for a, b in zip(u.tolist(), v.tolist())]
    path.write_text("\n".join(lines) + "\n")


def read_gmatch_text(text: str) -> dict[str, Any]:
    """Parse gMatch's ``t/v/e`` text (data graph or query) as its loaders read it.

    Returns
    -------
    dict
        ``n``, ``m``, ``labels`` and ``degrees`` (int64, n, from the ``v`` lines), ``edges``
        (int64, m x 2, as listed).

    Raises
    ------
    ValueError
        If the header is missing, ids are not 0..n-1, the edge count differs from the
        header or a listed degree differs from the edges' (gMatch exits on both).
    """
    toks = [ln.split() for ln in text.splitlines() if ln.strip()]
    if not toks or toks[0][0] != "t" or len(toks[0]) < 3:
        raise ValueError("no 't |V| |E|' header line")
    n, m = int(toks[0][1]), int(toks[0][2])
    labels = np.full(n, -1, np.int64)
    degrees = np.full(n, -1, np.int64)
    edges = []
    for t in toks[1:]:
        if t[0] == "v":
            vid, lab, deg = int(t[1]), int(t[2]), int(t[3])
            if not 0 <= vid < n or degrees[vid] >= 0:
                raise ValueError(f"vertex id {vid} outside 0..{n - 1} or listed twice")
            labels[vid], degrees[vid] = lab, deg
        elif t[0] == "e":
            edges.append((int(t[1]), int(t[2])))
        else:
            raise ValueError(f"unknown line type {t[0]!r}")
    e = np.asarray(edges, np.int64).reshape(-1, 2)
    if np.any(degrees < 0):
        raise ValueError(f"{int(np.sum(degrees < 0))} vertices have no 'v' line")
    if e.shape[0] != m:
        raise ValueError(f"{e.shape[0]} edges listed, header says {m}")
    if e.size and (e.min() < 0 or e.max() >= n):
        raise ValueError(f"an edge endpoint is outside 0..{n - 1}")
    actual = np.bincount(e.ravel(), minlength=n)
    if np.any(actual != degrees):
        bad = int(np.flatnonzero(actual != degrees)[0])
        raise ValueError(f"vertex {bad}: degree {degrees[bad]} listed, {actual[bad]} edges")
    return {"n": n, "m": m, "labels": labels, "degrees": degrees, "edges": e}


def gmatch_numbering(query: Any) -> np.ndarray:
    """gMatch's id for each query vertex: the identity, except for a 4-cycle.

    gMatch matches a 4-cycle in the fixed order 0, 1, 3, 2 (``neighbor/graph.cu:26-34``),
    which is a connected order only when the cycle is 0-1-2-3-0; a 4-cycle is therefore
    renumbered along the cycle. Any other query gets its order from gMatch's own
    heuristic, which keeps each prefix connected.
    """
    k, edges = int(query.k), np.asarray(query.edges, np.int64)
    perm = np.arange(k, dtype=np.int64)
    deg = np.bincount(edges.ravel(), minlength=k)
    if k == 4 and edges.shape[0] == 4 and deg.max() == 2:
        adj = {u: set() for u in range(k)}
        for a, b in edges.tolist():
            adj[a].add(b)
            adj[b].add(a)
        walk = [0]
        while len(walk) < k:
            walk.append(min(adj[walk[-1]] - set(walk)))
        perm[np.asarray(walk)] = np.arange(k)
    return perm


def gmatch_query_text(query: Any) -> str:
    """``query`` as a gMatch query file: ``t k m``, ``v id 0 degree``, ``e u w`` (0-based).

    Degrees are required and must be exact (``neighbor/graph.cu:264-275``); labels are 0
    (the unlabeled binary reads none: ``Graph::label`` returns 0 under ``UNLABELED``).

    Raises
    ------
    ValueError
        For a directed or labeled query, or one of more than 32 vertices (gMatch keeps a
        query vertex's backward neighbours in a 32-bit mask).
    """
    if query.directed:
        raise ValueError("gMatch matches undirected queries only")
    if np.any(np.asarray(query.vertex_labels) >= 0) or np.any(np.asarray(query.edge_labels) >= 0):
        raise ValueError("a labeled query: gMatch's unlabeled binary would ignore its labels")
    if query.k > 32:
        raise ValueError(f"{query.k} vertices: gMatch takes at most 32")
    perm = gmatch_numbering(query)
    e = perm[np.asarray(query.edges, np.int64)]
    deg = np.bincount(e.ravel(), minlength=query.k)
    lines = [f"t {query.k} {e.shape[0]}"]
    lines += [f"v {u} 0 {int(deg[u])}" for u in range(query.k)]
    lines += [f"e {a} {b}" for a, b in e.tolist()]
    return "\n".join(lines) + "\n"


def query_from_gmatch_text(text: str, name: str) -> Any:
    """A warpmatch ``Query`` (every label "any") from gMatch's query text."""
    from warpmatch.query.model import Query
    q = read_gmatch_text(text)
    return Query.from_edges([tuple(e) for e in q["edges"].tolist()], k=q["n"], name=name)


def gmatch_patterns(gmatch_dir: Path, spec: str) -> list[tuple[str, Any]]:
    """``(name, Query)`` for gMatch's unlabeled patterns ``spec`` (``P1-P9``, ``P5``, ``1-3``)
    from ``gmatch_dir/patterns/p<i>``."""
    lo, _, hi = spec.partition("-")
    lo_i = int(lo.strip().lstrip("Pp"))
    hi_i = int(hi.strip().lstrip("Pp")) if hi.strip() else lo_i
    out = []
    for i in range(lo_i, hi_i + 1):
        f = gmatch_dir / "patterns" / f"p{i}"
        if not f.is_file():
            raise SystemExit(f"gmatch:{spec}: {f} not found (is --gmatch gMatch's source tree?)")
        out.append((f"gmatch:P{i}", query_from_gmatch_text(f.read_text(), f"gmatch:P{i}")))
    return out


def load_patterns(spec: str, gmatch_dir: Path | None) -> list[tuple[str, Any]]:
    """``(name, Query)`` for each comma-separated pattern: a warpmatch name, ``stmatch24`` /
    ``stmatch:A-B`` (``bench/distributed.py``'s ``queries``) or ``gmatch:P1-P9``."""
    out: list[tuple[str, Any]] = []
    for tok in (t.strip() for t in spec.split(",") if t.strip()):
        if tok.lower().startswith("gmatch:"):
            if gmatch_dir is None:
                raise SystemExit(f"{tok}: needs --gmatch (gMatch's source tree)")
            out += gmatch_patterns(gmatch_dir, tok.split(":", 1)[1])
        else:
            out += _load("distributed").queries(tok)
    return out


# ====================================================================== gMatch build
def _version(cmd: list[str], rx: str) -> tuple[int, ...] | None:
    try:
        text = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except OSError:
        return None
    m = re.search(rx, text)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _gpu_arch() -> str | None:
    """The first GPU's compute capability as CMake spells it (``90``), or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False).stdout.split()
    except OSError:
        return None
    return out[0].replace(".", "") if out else None


def source_hash(src: Path, recipe: str) -> str:
    """A short hash of the files under ``src`` (paths and contents) and the build recipe."""
    h = hashlib.sha256(recipe.encode())
    for p in sorted(q for q in src.rglob("*") if q.is_file()):
        h.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def prepare_sources(src: Path, dst: Path, arch: str,
                    cmake: tuple[int, ...]) -> tuple[list[str], str]:
    """Copy gMatch's ``neighbor/`` to ``dst`` and adapt the copy's CMakeLists.txt.

    gMatch's CMakeLists.txt asks for CMake 3.26 and hard-codes ``"native"`` as the CUDA
    architecture (``set(CMAKE_CUDA_ARCHITECTURES "native")`` and each library's
    ``CUDA_ARCHITECTURES`` property), so ``-DCMAKE_CUDA_ARCHITECTURES`` cannot override it.

    Parameters
    ----------
    src, dst : Path
        gMatch's ``neighbor/`` (read only) and the copy.
    arch : str
        ``native`` (gMatch's own: the GPU seen at configure time; CMake >= 3.24) or an
        architecture such as ``90`` (H100, H200), written over ``"native"`` in the copy.
    cmake : tuple of int
        The installed CMake's version: an older one than the copy asks for lowers the
        minimum (to at least 3.18, the first with ``CUDA_ARCHITECTURES``).

    Returns
    -------
    (list of str, str)
        What was changed in the copy (empty: nothing), and the architecture used.
    """
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("build", "build*", ".git"))
    cml = dst / "CMakeLists.txt"
    text = cml.read_text()
    patches = []
    m = re.search(r"cmake_minimum_required\s*\(\s*VERSION\s+([0-9.]+)", text)
    if m:
        need = tuple(int(x) for x in m.group(1).split("."))
        if cmake[:len(need)] < need:
            if cmake < (3, 18):
                raise SystemExit(f"CMake {'.'.join(map(str, cmake))} is too old for gMatch's "
                                 "CUDA build (3.18 at least; it asks for "
                                 f"{m.group(1)})")
            floor = f"{cmake[0]}.{cmake[1]}"
            text = text[:m.start(1)] + floor + text[m.end(1):]
            patches.append(f"cmake_minimum_required lowered from {m.group(1)} to {floor} "
                           f"(CMake {'.'.join(map(str, cmake))} installed)")
    if arch == "native" and cmake < (3, 24):
        arch = _gpu_arch() or ""
        if not arch:
            raise SystemExit("CMake < 3.24 cannot build for 'native' and nvidia-smi gave no "
                             "compute capability: pass --cuda-arch (90 for H100/H200)")
        patches.append(f"CMake < 3.24 has no 'native': the GPU's architecture {arch}")
    if arch != "native":
        if '"native"' not in text:
            raise SystemExit(f"{src / 'CMakeLists.txt'}: no \"native\" architecture to replace")
        text = text.replace('"native"', f'"{arch}"')
        patches.append(f'CUDA architecture "native" replaced by "{arch}"')
    cml.write_text(text)
    return patches, arch


def build_gmatch(gmatch_dir: Path, build_dir: Path, arch: str, jobs: int) -> tuple[Path, dict]:
    """Build (or reuse) gMatch's ``SubgraphMatching_unlabeled`` into ``build_dir``.

    The sources are copied to ``build_dir/src`` (:func:`prepare_sources`) and built in
    ``build_dir/build`` with ``cmake`` (Release) and ``cmake --build --target
    SubgraphMatching_unlabeled``, the log in ``build_dir/build.log``. A build whose stamp
    (sources, recipe, architecture) matches is reused. If the plain build fails on CUDA
    13's ``cuda::ceil_div`` (see ``CCCL_FIX``), it is retried once with that flag.

    Returns
    -------
    (Path, dict)
        The binary, and how it was built (commands, patches, log, versions).

    Raises
    ------
    SystemExit
        If the tree is not gMatch's, cmake is missing or the build fails (with the last
        lines of the log).
    """
    src = gmatch_dir / SOURCE_DIR
    if not (src / "CMakeLists.txt").is_file() or not (src / "main.cu").is_file():
        raise SystemExit(f"--gmatch {gmatch_dir}: not gMatch's source tree ({src}/CMakeLists.txt"
                         " and main.cu missing)")
    cmake = _version(["cmake", "--version"], r"cmake version (\d+\.\d+(?:\.\d+)?)")
    if cmake is None:
        raise SystemExit("cmake not found: gMatch is built with cmake and make")
    nvcc = _version(["nvcc", "--version"], r"release (\d+\.\d+)")
    build_dir.mkdir(parents=True, exist_ok=True)
    key = source_hash(src, f"{BUILD_RECIPE}/{arch}")
    exe = build_dir / "build" / TARGET
    stamp = build_dir / "build.stamp"
    info: dict[str, Any] = {"binary": str(exe), "source_hash": key, "arch": arch,
                            "cmake": ".".join(map(str, cmake)),
                            "nvcc": ".".join(map(str, nvcc)) if nvcc else None,
                            "log": str(build_dir / "build.log")}
    if exe.is_file() and stamp.is_file():
        try:
            old = json.loads(stamp.read_text())
        except ValueError:
            old = {}
        if old.get("source_hash") == key:
            _log(f"gMatch: reusing {exe} (built from {src})")
            return exe, {**old, "reused": True}
    stamp.unlink(missing_ok=True)
    patches, used_arch = prepare_sources(src, build_dir / "src", arch, cmake)
    info.update(patches=patches, arch=used_arch)
    log = build_dir / "build.log"
    jobs_s = str(max(1, jobs))
    with open(log, "w") as lf:
        for attempt, extra in enumerate(([], [CCCL_FIX])):
            shutil.rmtree(build_dir / "build", ignore_errors=True)
            cmds = [["cmake", "-S", str(build_dir / "src"), "-B", str(build_dir / "build"),
                     "-DCMAKE_BUILD_TYPE=Release", *extra],
                    ["cmake", "--build", str(build_dir / "build"), "--target", TARGET,
                     "-j", jobs_s]]
            failed = None
            for cmd in cmds:
                _log("gMatch build: " + shlex.join(cmd))
                lf.write("$ " + shlex.join(cmd) + "\n")
                lf.flush()
                t0 = time.perf_counter()
                rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT)
                lf.flush()
                if rc != 0:
                    failed = (cmd, rc)
                    break
                info.setdefault("build_seconds", 0.0)
                info["build_seconds"] += time.perf_counter() - t0
            if failed is None:
                info["commands"] = [shlex.join(c) for c in cmds]
                if extra:
                    info["patches"] = patches + [f"built with {extra[0]} (CUDA 13 ceil_div)"]
                break
            text = log.read_text(errors="replace")
            if attempt == 0 and "ceil_div" in text:
                _log("gMatch build: failed on cuda::ceil_div (CUDA >= 13 vs gMatch's macro); "
                     "retrying with thrust and cub parsed first")
                lf.write("\n# retry: " + CCCL_FIX + "\n")
                continue
            tail = "\n".join(text.splitlines()[-25:])
            raise SystemExit(f"building gMatch failed ({shlex.join(failed[0])}: exit "
                             f"{failed[1]}); log {log}, last lines:\n{tail}")
    if not exe.is_file():
        raise SystemExit(f"the gMatch build finished but {exe} is missing (log {log})")
    stamp.write_text(json.dumps(info, indent=1))
    return exe, {**info, "reused": False}


# ====================================================================== gMatch runs
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RE_RESULT = re.compile(r"^Result:\s*(\d+)\s*$", re.M)
_RE_UNIQUE = re.compile(r"^unique count:\s*(\d+)", re.M)
_RE_SYM = re.compile(r"^Symmetry = (\d+)", re.M)
_RE_PHASE = re.compile(r"^# (.+?), time \(ms\): (\d+)\(host\), (\d+)\(kernel\)", re.M)
_RE_PREP = re.compile(r"^Data preparation: (\d+) ms", re.M)
_RE_PATH = re.compile(r"^# (join_\w+)", re.M)
_RE_LOADED = re.compile(r"^Data graph loaded from CSR format file [^\n]*\n\|V\|=(\d+) \|E\|=(\d+)",
                        re.M)
_RE_CUDA_ERR = re.compile(r"^\s*Error text:\s*(.*)$", re.M)


def parse_gmatch_output(text: str) -> dict[str, Any]:
    """What gMatch's ``SubgraphMatching_unlabeled`` printed, as numbers.

    Parameters
    ----------
    text : str
        Its stdout and stderr (colour escapes are removed).

    Returns
    -------
    dict
        ``result`` (``Result:``, embeddings), ``unique`` (``unique count:``), ``symmetry``
        (``Symmetry =``, |Aut|), ``seconds`` (the ``# Processing`` line's kernel ms / 1000),
        ``host_seconds`` (its host ms / 1000), ``phases`` (every ``# NAME, time (ms):
        H(host), K(kernel)`` line, in order), ``data_preparation_ms`` (summed),
        ``path`` (the join it ran, e.g. ``join_bfs_dfs_sym``), ``loaded`` ((|V|, |E|) as it
        read the binary file), ``no_filtering`` (its large-graph mode was switched on),
        ``cuda_error``; None where it printed nothing.
    """
    t = _ANSI.sub("", text)

    def last_int(rx: re.Pattern) -> int | None:
        found = rx.findall(t)
        return int(found[-1]) if found else None

    phases = [{"name": n, "host_ms": int(h), "kernel_ms": int(k)}
              for n, h, k in _RE_PHASE.findall(t)]
    proc = [p for p in phases if p["name"] == "Processing"]
    loaded = _RE_LOADED.search(t)
    paths = _RE_PATH.findall(t)
    err = _RE_CUDA_ERR.search(t)
    prep = _RE_PREP.findall(t)
    return {
        "result": last_int(_RE_RESULT), "unique": last_int(_RE_UNIQUE),
        "symmetry": last_int(_RE_SYM),
        "seconds": proc[-1]["kernel_ms"] / 1e3 if proc else None,
        "host_seconds": proc[-1]["host_ms"] / 1e3 if proc else None,
        "phases": phases, "data_preparation_ms": sum(map(int, prep)) if prep else None,
        "path": paths[-1] if paths else None,
        "loaded": (int(loaded.group(1)), int(loaded.group(2))) if loaded else None,
        "no_filtering": "no-flitering mode is activated" in t or "no-filtering mode" in t,
        "cuda_error": err.group(1).strip() if err else None,
    }


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
        name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
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
        g, _ = _load("distributed").build_graph(argparse.Namespace(
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
