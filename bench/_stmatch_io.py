"""STMatch's file formats, limits and output, for ``bench/stmatch_peer.py`` (see its docstring).

What is where:

- the compile-time limits of STMatch's ``src/config.h`` (``PAT_SIZE`` ...) and
  :func:`slot_storage_bytes`;
- graph files: :func:`write_stmatch_graph` (``PREFIX.meta.txt``, ``.vertex.bin``,
  ``.edge.bin``) and :func:`read_stmatch_graph`, which checks them;
- pattern files: the matching order (:func:`order_problems`, :func:`stmatch_order`,
  :func:`stmatch_slots`), :func:`stmatch_pattern_text`, :func:`read_stmatch_pattern`,
  :func:`query_from_stmatch_text`, :func:`stmatch_own_pattern` (``data/pattern/N.g``);
- :func:`stmatch_jobs`, the size of STMatch's job queue for a graph and pattern, and
  ``PROBE_SOURCE``, a host-only program built on STMatch's own loaders (no GPU) that
  prints what they read, for ``--self-check``;
- :func:`parse_stmatch_output`, and :func:`is_stmatch12` (its pattern 12, which it
  miscounts);
- the build: :func:`check_tree`, :func:`prepare_sources` (the adapted copy),
  :func:`build_stmatch`, :func:`graph_degree_for`.

File and line references are to HPC-Research-Lab/STMatch, commit f98462a.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from _gmatch_build import _log, _version, reuse_build, source_hash

INT32_MAX = 2**31 - 1
#: ``src/config.h:11``: most pattern vertices (``Job::nodes``, ``Pattern::rowptr``, the
#: ``PatternPreprocessor`` arrays are sized by it)
PAT_SIZE = 7
#: ``src/config.h:12``: the room of one candidate set (``CallStack::slot_storage``); a
#: candidate set is a subset of one neighbour list, so the graph's largest degree must fit
GRAPH_DEGREE = 4096
#: ``src/config.h:13``: most candidate sets ("slots") of one pattern (``pattern.h:385``)
MAX_SLOT_NUM = 15
#: ``src/config.h:17-18``: blocks (the RTX 3090's 82 SMs) and threads per block
GRID_DIM = 82
BLOCK_DIM = 1024
#: ``src/config_for_ae/table_edge_ulb.h:1``: candidate sets computed at once per level
UNROLL = 8
#: ``src/config.h:23``: first-level jobs (query edges) a warp takes at a time
JOB_CHUNK_SIZE = 8
#: STMatch's pattern 12 (``data/pattern/12.g``), which it miscounts (issue 21)
STMATCH12_EDGES = ((0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (3, 4), (4, 5))


def slot_storage_bytes(grid_dim: int, graph_degree: int) -> int:
    """Bytes of the call stacks STMatch allocates on the GPU (``cu_test.cu:23``):
    ``sizeof(int) * NWARPS_TOTAL * MAX_SLOT_NUM * UNROLL * GRAPH_DEGREE``."""
    return 4 * grid_dim * (BLOCK_DIM // 32) * MAX_SLOT_NUM * UNROLL * graph_degree


# ====================================================================== graph files
def _files(prefix: Path) -> dict[str, Path]:
    return {k: Path(f"{prefix}.{k}") for k in ("meta.txt", "vertex.bin", "edge.bin")}


def write_stmatch_graph(prefix: Path, graph: Any) -> dict[str, Any]:
    """Write ``graph`` as STMatch's binary CSR files ``PREFIX.meta.txt``, ``.vertex.bin``
    and ``.edge.bin`` (STMatch is then run with ``PREFIX`` as its graph argument).

    The layout is what ``graph.h:131-158`` (``read_bin_file``) reads and STMatch's
    converter writes (``graph_converter/compactify.cpp:26-48``): the meta file holds
    ``|V|``, the number of adjacency entries (``2|E|``), 4 (``sizeof(graph_node_t)``,
    asserted at ``graph.h:140``) and the largest degree, one a line; ``.vertex.bin`` holds
    ``|V| + 1`` int64 row offsets (``graph_edge_t`` is ``long``, ``config.h:6``);
    ``.edge.bin`` the ``2|E|`` int32 neighbours, each row sorted (STMatch intersects rows
    by binary search). No label file: the unlabeled build reads none (``graph.h:151``).

    Parameters
    ----------
    prefix : Path
        The files' common prefix; each is written to ``NAME.part`` first, then renamed.
    graph : warpmatch.Graph
        Undirected, without self-loops (warpmatch's graphs have none).

    Returns
    -------
    dict
        ``n``, ``nedges`` (2|E|), ``max_degree``, ``bytes`` (of the three files).

    Raises
    ------
    ValueError
        For a directed graph, or one too large for STMatch's int ids and job queue.
    """
    if graph.directed:
        raise ValueError(f"{graph.name}: STMatch matches undirected graphs only")
    indptr = np.asarray(graph.indptr)
    indices = np.asarray(graph.indices)
    n, nnz = int(graph.n), int(indices.size)
    if n > INT32_MAX or nnz > INT32_MAX:
        # vertex ids are int (graph_node_t, config.h:5), and the job queue walks the
        # adjacency entries with an int index (job_queue.h:27)
        raise ValueError(f"{graph.name}: {n:,} vertices, {nnz:,} adjacency entries: STMatch "
                         "indexes both with int (graph_node_t, config.h:5; job_queue.h:27)")
    max_degree = int(np.diff(indptr).max()) if n else 0
    files = _files(prefix)
    meta = f"{n}\n{nnz}\n4\n{max_degree}\n"
    payload = {"meta.txt": None, "vertex.bin": indptr.astype("<i8", copy=False),
               "edge.bin": indices.astype("<i4", copy=False)}
    for key, arr in payload.items():
        tmp = files[key].with_name(files[key].name + ".part")
        if arr is None:
            tmp.write_text(meta)
        else:
            arr.tofile(tmp)
        os.replace(tmp, files[key])
    size = sum(p.stat().st_size for p in files.values())
    expect = len(meta) + 8 * (n + 1) + 4 * nnz
    if size != expect:
        raise RuntimeError(f"{prefix}: {size} bytes written, {expect} expected")
    return {"n": n, "nedges": nnz, "max_degree": max_degree, "bytes": size}


def read_stmatch_graph(prefix: Path, check_symmetric: bool = True) -> dict[str, Any]:
    """Read STMatch's graph files back, as ``graph.h:131-158`` reads them, and check them.

    Returns
    -------
    dict
        ``n``, ``nedges``, ``vid_size``, ``max_degree`` (the meta file's four numbers),
        ``rowptr`` (int64, n + 1), ``colidx`` (int32, nedges).

    Raises
    ------
    ValueError
        If a size differs from the meta file, the offsets do not run from 0 to ``nedges``,
        an id is out of range, a row is unsorted or has a self-loop or a repeat, the listed
        largest degree is wrong, or (``check_symmetric``) an edge is listed one way only.
    """
    files = _files(prefix)
    meta = files["meta.txt"].read_text().split()
    if len(meta) != 4:
        raise ValueError(f"{files['meta.txt']}: 4 numbers expected, got {meta}")
    n, nedges, vid_size, max_degree = (int(x) for x in meta)
    if vid_size != 4:
        raise ValueError(f"{files['meta.txt']}: id size {vid_size}; STMatch asserts 4 "
                         "(graph.h:140)")
    rowptr = np.fromfile(files["vertex.bin"], "<i8")
    colidx = np.fromfile(files["edge.bin"], "<i4")
    if rowptr.size != n + 1 or colidx.size != nedges:
        raise ValueError(f"{prefix}: {rowptr.size} offsets, {colidx.size} neighbours; the meta "
                         f"file says {n + 1}, {nedges}")
    deg = np.diff(rowptr)
    if rowptr[0] != 0 or rowptr[-1] != nedges or np.any(deg < 0):
        raise ValueError(f"{prefix}: offsets do not run from 0 to {nedges}")
    if colidx.size and (colidx.min() < 0 or colidx.max() >= n):
        raise ValueError(f"{prefix}: a neighbour id is outside 0..{n - 1}")
    src = np.repeat(np.arange(n, dtype=np.int64), deg)
    same_row = src[1:] == src[:-1]
    if np.any(same_row & (np.diff(colidx.astype(np.int64)) <= 0)):
        raise ValueError(f"{prefix}: a row is not sorted strictly ascending")
    if np.any(src == colidx):
        raise ValueError(f"{prefix}: a self-loop")
    if (int(deg.max()) if n else 0) != max_degree:
        raise ValueError(f"{prefix}: largest degree {int(deg.max())}, meta file says "
                         f"{max_degree}")
    if check_symmetric:
        fwd = np.sort(src * n + colidx)
        rev = np.sort(colidx.astype(np.int64) * n + src)
        if not np.array_equal(fwd, rev):
            raise ValueError(f"{prefix}: an edge is listed in one direction only")
    return {"n": n, "nedges": nedges, "vid_size": vid_size, "max_degree": max_degree,
            "rowptr": rowptr, "colidx": colidx}


# ====================================================================== pattern order
def _adj(k: int, edges: Sequence[tuple[int, int]]) -> list[set[int]]:
    adj: list[set[int]] = [set() for _ in range(k)]
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    return adj


def stmatch_slots(k: int, edges: Sequence[tuple[int, int]]) -> tuple[int, list[int]]:
    """How many candidate sets ("slots") STMatch builds for a pattern in file order.

    The same board walk as ``PatternPreprocessor::get_set_ops`` (``pattern.h:174-227``):
    vertex ``i + 1``'s backward neighbours are a bit mask over vertices ``0..i``; the part
    over ``0..i-1`` becomes a slot of level ``i - 1`` (shared when equal), recursively. The
    total, ``1 + sum(length[1..k-2])`` (``convert2oned``, ``pattern.h:360-386``), must not
    exceed ``MAX_SLOT_NUM``.

    Returns
    -------
    (int, list of int)
        The total and each level's number of slots.
    """
    adj = _adj(k, edges)
    board = [[0] * max(k, 1) for _ in range(max(k, 1))]
    board[0][0] = 1
    for i in range(1, k - 1):
        board[i][0] = sum(1 << (i - j) for j in range(i + 1) if j in adj[i + 1])
    length = [1] * k
    for j in range(k - 1):
        for i in range(k - 2 - j, -1, -1):
            if board[i][j] == 0:
                continue
            op2 = board[i][j] >> 1
            if op2 > 0 and op2 not in board[i - 1][1:length[i - 1]]:
                board[i - 1][length[i - 1]] = op2
                length[i - 1] += 1
    return 1 + sum(length[1:k - 1]), length[:k - 1]


def order_problems(k: int, edges: Sequence[tuple[int, int]]) -> list[str]:
    """Why STMatch cannot match this pattern in its file order (empty: it can).

    STMatch matches a pattern's vertices in file order (``get_matching_order``,
    ``pattern.h:103-153``: "input from dryadic is already reordered"), so:

    - 3 to ``PAT_SIZE`` vertices (``config.h:11``; with 2 the kernel's last level would be
      its first, ``gpu_match.cu:614-655``, and ``job_queue.h:35`` reads ``degree[2]``);
    - vertices 0 and 1 adjacent: the jobs are the graph's edges (``job_queue.h:26-39``);
    - vertex 2 adjacent to vertex 1: a job is kept only if vertex 1's image has a
      neighbour of degree ``deg(2)`` at least (``job_queue.h:32-38``);
    - every later vertex adjacent to an earlier one: one that is not gets no slot
      (``pattern.h:179-194``);
    - at most ``MAX_SLOT_NUM`` slots (``config.h:13``, asserted at ``pattern.h:385``; level
      ``i >= 1`` has at most ``min(k - 1 - i, 2**(i + 1))`` slots, so 7 vertices need 15
      at most: the check is a guard).
    """
    out = []
    if k < 3:
        out.append(f"{k} vertices: STMatch matches patterns of 3 to PAT_SIZE = {PAT_SIZE} "
                   "vertices")
    if k > PAT_SIZE:
        out.append(f"{k} vertices: more than STMatch's compile-time PAT_SIZE = {PAT_SIZE} "
                   "(src/config.h:11)")
    if out:
        return out
    adj = _adj(k, edges)
    if 1 not in adj[0]:
        out.append("vertices 0 and 1 are not adjacent (STMatch's jobs are edges)")
    if 2 not in adj[1]:
        out.append("vertex 2 is not adjacent to vertex 1 (job_queue.h:32-38 filters on it)")
    late = [i for i in range(2, k) if not any(j in adj[i] for j in range(i))]
    if late:
        out.append(f"vertices {late} have no earlier neighbour (not connected in file order)")
    if not out:
        slots, _ = stmatch_slots(k, edges)
        if slots > MAX_SLOT_NUM:
            out.append(f"{slots} candidate sets: more than STMatch's compile-time "
                       f"MAX_SLOT_NUM = {MAX_SLOT_NUM} (src/config.h:13)")
    return out


def stmatch_order(k: int, edges: Sequence[tuple[int, int]], keep: bool) -> list[int]:
    """A matching order for STMatch: ``order[i]`` is the pattern vertex written as ``i``.

    With ``keep`` the given numbering is kept when STMatch can use it (its own patterns
    are numbered in Dryadic's order). Otherwise a greedy order: the vertex of highest
    degree first, then repeatedly the vertex with most neighbours among those placed
    (ties: higher degree, then lower id), so dense parts come first and each vertex has
    an earlier neighbour; vertices 0 and 1 are swapped if vertex 2 is adjacent to 0 only.
    Raises ``ValueError`` when no order suits STMatch (see :func:`order_problems`).
    """
    if keep and not order_problems(k, edges):
        return list(range(k))
    if k < 3 or k > PAT_SIZE:
        raise ValueError("; ".join(order_problems(k, edges)))
    adj = _adj(k, edges)
    order = [max(range(k), key=lambda v: (len(adj[v]), -v))]
    while len(order) < k:
        placed = set(order)
        rest = [v for v in range(k) if v not in placed]
        order.append(max(rest, key=lambda v: (len(adj[v] & placed), len(adj[v]), -v)))
    if order[2] not in adj[order[1]]:
        order[0], order[1] = order[1], order[0]
    problems = order_problems(k, renumber(edges, order))
    if problems:
        raise ValueError("; ".join(problems))
    return order


def renumber(edges: Sequence[tuple[int, int]], order: Sequence[int]) -> list[tuple[int, int]]:
    """``edges`` with pattern vertex ``order[i]`` renamed ``i``, each as ``(low, high)``."""
    pos = {v: i for i, v in enumerate(order)}
    return sorted(tuple(sorted((pos[a], pos[b]))) for a, b in edges)


# ====================================================================== pattern files
def stmatch_pattern_text(query: Any, keep_order: bool) -> tuple[str, list[int]]:
    """``query`` as an STMatch pattern file (``pattern.h:67-100``), and the order used.

    ``# ...`` comment lines (skipped only at the top, ``pattern.h:72``), then one
    ``v ID LABEL`` line per vertex in matching order (the label is read but not used
    unlabeled, ``pattern.h:81-86``; 0 here), then ``e U V 1`` once per edge (the reader
    sets both directions, ``pattern.h:97-98``; the label must be 1: automorphisms are
    found by comparing it with 1, ``pattern.h:253``). No blank line: the reader would take
    one for an edge of uninitialised ends.

    Raises
    ------
    ValueError
        For a directed or labeled query, or one STMatch cannot match (size, connectivity,
        ``PAT_SIZE`` or ``MAX_SLOT_NUM``: the message names the limit).
    """
    if query.directed:
        raise ValueError("STMatch matches undirected patterns only")
    if (np.any(np.asarray(query.vertex_labels) >= 0)
            or np.any(np.asarray(query.edge_labels) >= 0)):
        raise ValueError("a labeled pattern: STMatch's unlabeled build would ignore its labels")
    k = int(query.k)
    edges = [tuple(int(x) for x in e) for e in np.asarray(query.edges).tolist()]
    order = stmatch_order(k, edges, keep_order)
    lines = [f"# {getattr(query, 'name', 'pattern')}: {k} vertices, {len(edges)} edges; "
             f"file vertex i is pattern vertex order[i], order = {order}"]
    lines += [f"v {i} 0" for i in range(k)]
    lines += [f"e {a} {b} 1" for a, b in renumber(edges, order)]
    return "\n".join(lines) + "\n", order


def read_stmatch_pattern(text: str) -> dict[str, Any]:
    """Parse an STMatch pattern file as ``pattern.h:67-100`` reads it, stricter.

    Returns
    -------
    dict
        ``k`` (the number of ``v`` lines), ``labels`` (as listed), ``edges`` (sorted
        ``(low, high)`` pairs, each once), ``edge_labels`` (per pair).

    Raises
    ------
    ValueError
        Where STMatch would misread the file: a blank or unknown line, ``v`` lines not
        numbered 0..k-1 in order or after an ``e`` line, an end outside 0..k-1, a
        self-loop, an edge label other than 1, or the two directions of an edge labeled
        differently.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()                 # the final newline: getline stops at the end of file
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    labels: list[int] = []
    elab: dict[tuple[int, int], int] = {}
    for ln in lines[i:]:
        t = ln.split()
        if not t:
            raise ValueError("a blank line: STMatch would read it as an edge")
        if t[0] == "v" and not elab:
            if len(t) < 3 or int(t[1]) != len(labels):
                raise ValueError(f"{ln!r}: vertices must be listed as 'v ID LABEL', ids 0, 1,"
                                 " ... in order")
            labels.append(int(t[2]))
        elif t[0] == "e":
            if len(t) < 4:
                raise ValueError(f"{ln!r}: an edge line is 'e U V LABEL'")
            a, b, lab = int(t[1]), int(t[2]), int(t[3])
            if not (0 <= a < len(labels) and 0 <= b < len(labels)) or a == b:
                raise ValueError(f"{ln!r}: an end outside 0..{len(labels) - 1} or a self-loop")
            if lab != 1:
                raise ValueError(f"{ln!r}: edge label {lab}; STMatch's automorphisms need 1")
            key = (min(a, b), max(a, b))
            if elab.setdefault(key, lab) != lab:
                raise ValueError(f"{ln!r}: labeled differently from the other direction")
        else:
            raise ValueError(f"{ln!r}: STMatch reads 'v' lines, then 'e' lines")
    if not labels:
        raise ValueError("no 'v' line")
    return {"k": len(labels), "labels": labels, "edges": sorted(elab),
            "edge_labels": [elab[e] for e in sorted(elab)]}


def query_from_stmatch_text(text: str, name: str) -> Any:
    """A warpmatch ``Query`` (every label "any") from an STMatch pattern file."""
    from warpmatch.query.model import Query
    p = read_stmatch_pattern(text)
    return Query.from_edges(p["edges"], k=p["k"], name=name)


def stmatch_own_pattern(stmatch_dir: Path, i: int) -> Path:
    """STMatch's pattern ``i`` (1..24): ``data/pattern/<i>.g`` of its source tree."""
    return stmatch_dir / "data" / "pattern" / f"{i}.g"


def _isomorphic(k: int, e1: Sequence[tuple[int, int]], e2: Sequence[tuple[int, int]]) -> bool:
    """Whether two small graphs on ``0..k-1`` are isomorphic (permutations; k <= 8)."""
    s1 = {tuple(sorted(e)) for e in e1}
    s2 = {tuple(sorted(e)) for e in e2}
    if len(s1) != len(s2):
        return False
    d1 = sorted(np.bincount(np.asarray(list(s1)).ravel(), minlength=k).tolist()) if s1 else []
    d2 = sorted(np.bincount(np.asarray(list(s2)).ravel(), minlength=k).tolist()) if s2 else []
    if d1 != d2:
        return False
    return any({tuple(sorted((p[a], p[b]))) for a, b in s1} == s2
               for p in itertools.permutations(range(k)))


def is_stmatch12(query: Any) -> bool:
    """Whether ``query`` is (isomorphic to) STMatch's pattern 12, which it miscounts."""
    if int(query.k) != 6 or int(query.m) != len(STMATCH12_EDGES):
        return False
    return _isomorphic(6, [tuple(e) for e in np.asarray(query.edges).tolist()],
                       STMATCH12_EDGES)


# ====================================================================== job queue
def stmatch_jobs(indptr: np.ndarray, indices: np.ndarray, pattern_degrees: Sequence[int],
                 first_edge_ordered: bool) -> int:
    """The length of STMatch's job queue (``job_queue.h:24-60``), for checking its loader.

    Every adjacency entry ``(r, c)`` with ``r > c`` when an automorphism swaps pattern
    vertices 0 and 1 (``partial[0][0] == 1``), ``deg(r) >= deg_p(0)``, ``deg(c) >=
    deg_p(1)`` and a neighbour of ``c`` of degree ``deg_p(2)`` at least.
    """
    indptr = np.asarray(indptr, np.int64)
    indices = np.asarray(indices, np.int64)
    deg = np.diff(indptr)
    r = np.repeat(np.arange(deg.size, dtype=np.int64), deg)
    c = indices
    nbr_max = np.zeros(deg.size, np.int64)
    np.maximum.at(nbr_max, r, deg[c])
    keep = (deg[r] >= pattern_degrees[0]) & (deg[c] >= pattern_degrees[1])
    keep &= nbr_max[c] >= pattern_degrees[2]
    if first_edge_ordered:
        keep &= r > c
    return int(keep.sum())


#: a host-only program (ours) on STMatch's own loaders: it reads a graph and a pattern as
#: the benchmark binary does (cu_test.cu:12-18, without the GPU) and prints what they hold
PROBE_SOURCE = r"""
#include <cstdio>
#include <cstring>
#include "src/graph.h"
#include "src/pattern.h"
#include "src/job_queue.h"
using namespace STMatch;
int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: probe GRAPH PATTERN\n"); return 2; }
  GraphPreprocessor g(argv[1]);
  PatternPreprocessor p(argv[2]);
  JobQueuePreprocessor q(g.g, p);
  long max_deg = 0;
  for (int v = 0; v < g.g.nnodes; v++) {
    long d = g.g.rowptr[v + 1] - g.g.rowptr[v];
    if (d > max_deg) max_deg = d;
  }
  printf("nnodes %d\nnedges %ld\nmax_degree %ld\n", g.g.nnodes, (long)g.g.nedges, max_deg);
  printf("vertex_label0 %u\nlabel_mask %u\n", g.g.nnodes ? g.g.vertex_label[0] : 0u,
         (unsigned)(1u << p.vertex_labels[0]));
  printf("pattern_nodes %d\nmultiplicity %d\npartial00 %u\nslots %d\njobs %d\n",
         (int)p.pat.nnodes, p.PatternMultiplicity, (unsigned)p.partial[0][0],
         p.pat.rowptr[p.pat.nnodes - 1], (int)q.q.length);
  printf("degrees");
  for (int i = 0; i < p.pat.nnodes; i++) printf(" %d", p.pat.degree[i]);
  printf("\n");
  return 0;
}
"""


def parse_probe_output(text: str) -> dict[str, Any]:
    """The probe's ``key value...`` lines as ints (``degrees`` as a list)."""
    out: dict[str, Any] = {}
    for ln in text.splitlines():
        t = ln.split()
        if len(t) >= 2 and re.fullmatch(r"[a-z_0-9]+", t[0]):
            vals = [int(x) for x in t[1:]]
            out[t[0]] = vals if t[0] == "degrees" else vals[0]
    return out


# ====================================================================== STMatch output
#: ``cu_test.cu:84``: ``printf("%s\t%f\t%llu\n", argv[2], milliseconds, tot_count)``
_RE_RESULT = re.compile(r"^([^\t\n]*)\t(-?(?:\d+(?:\.\d*)?|nan|inf))\t(\d+)[ \r]*$", re.M)
#: the check the benchmark's build adds after the kernel (see stmatch_peer's "Build")
_RE_CUDA_ERR = re.compile(r"^STMatch CUDA error: (.*)$", re.M)
_RE_ASSERT = re.compile(r"^.*Assertion .* failed\.?$", re.M)


def parse_stmatch_output(text: str) -> dict[str, Any]:
    """What STMatch's benchmark binary printed, as numbers.

    Returns
    -------
    dict
        ``count`` (embeddings: its total times |Aut|, ``cu_test.cu:79-82``), ``ms`` and
        ``seconds`` (the kernel's CUDA-event time, ``cu_test.cu:58-75``), ``pattern_path``
        (its first field), ``cuda_error`` (the build's added check), ``assertion`` (a failed
        ``assert``, e.g. ``count <= MAX_SLOT_NUM``); None where it printed nothing.
    """
    found = _RE_RESULT.findall(text)
    err = _RE_CUDA_ERR.search(text)
    ass = _RE_ASSERT.search(text)
    res: dict[str, Any] = {"count": None, "ms": None, "seconds": None, "pattern_path": None,
                           "cuda_error": err.group(1).strip() if err else None,
                           "assertion": ass.group(0).strip() if ass else None}
    if found:
        path, ms, count = found[-1]
        res.update(count=int(count), ms=float(ms), seconds=float(ms) / 1e3, pattern_path=path)
    return res


# ====================================================================== build
# the steps of stmatch_peer.py's docstring, "Build"
#: the STMatch configuration this benchmark builds and runs (config_for_ae/<TARGET>.h)
TARGET = "table_edge_ulb"
#: bump when the build recipe changes (part of the build's stamp)
BUILD_RECIPE = "1"
#: what the build adds after cu_test.cu's timed region (change 5 of the docstring's "Build")
ANCHOR = "cudaEventSynchronize(stop);"
ERROR_CHECK = (ANCHOR + "\n  { cudaError_t wm_err = cudaDeviceSynchronize();"
               " if (wm_err == cudaSuccess) wm_err = cudaGetLastError();"
               " if (wm_err != cudaSuccess) { fprintf(stderr, \"STMatch CUDA error: %s\\n\","
               " cudaGetErrorString(wm_err)); return 3; } }  // added by warpmatch's bench")


def _arch_flag(arch: str) -> str:
    """``--cuda-arch`` as nvcc's ``-arch`` value: ``native``, or ``sm_90`` for 90 / sm_90."""
    a = arch.strip().lower()
    if a == "native":
        return "native"
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(?:\.(\d))?", a)
    if not m:
        raise SystemExit(f"--cuda-arch {arch}: expected native or an architecture such as 90")
    return f"sm_{m.group(1)}{m.group(2) or ''}"


def _sub_once(text: str, pattern: str, repl: str, where: str, count: int = 1) -> str:
    new, n = re.subn(pattern, repl, text)
    if n != count:
        raise SystemExit(f"{where}: {n} matches of {pattern!r}, {count} expected (is this "
                         "STMatch's f98462a tree?)")
    return new


def prepare_sources(src: Path, dst: Path, arch_flag: str, grid_dim: int,
                    graph_degree: int) -> list[str]:
    """Copy STMatch's ``Makefile``, ``cu_test.cu`` and ``src/`` to ``dst`` and adapt the copy.

    Parameters
    ----------
    src, dst : Path
        STMatch's tree (read only) and the copy (replaced).
    arch_flag : str
        nvcc's ``-arch`` (``native``, ``sm_90``).
    grid_dim, graph_degree : int
        ``GRID_DIM`` and ``GRAPH_DEGREE`` of ``src/config.h`` (written when they differ
        from STMatch's 82 and 4096).

    Returns
    -------
    list of str
        The changes made (the docstring's "Build" lists them).
    """
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for name in ("Makefile", "cu_test.cu"):
        shutil.copy2(src / name, dst / name)
    shutil.copytree(src / "src", dst / "src")
    (dst / "bin").mkdir(exist_ok=True)
    patches = []
    mk = dst / "Makefile"
    mk.write_text(_sub_once(mk.read_text(), r"-arch=compute_86\b", f"-arch={arch_flag}",
                            str(src / "Makefile"), count=2))
    patches.append(f"Makefile:7,11: -arch=compute_86 -> -arch={arch_flag}")
    cfg = dst / "src" / "config.h"
    text = _sub_once(cfg.read_text(), r'#include "config_for_ae/[^"\n]*"[^\n]*',
                     f'#include "config_for_ae/{TARGET}.h"', str(src / "src/config.h"))
    patches.append(f"src/config.h:15: includes config_for_ae/{TARGET}.h (make's own sed)")
    if grid_dim != GRID_DIM:
        text = _sub_once(text, r"GRID_DIM = 82;", f"GRID_DIM = {grid_dim};",
                         str(src / "src/config.h"))
        patches.append(f"src/config.h:17: GRID_DIM = 82 -> {grid_dim} (the GPU's SMs)")
    if graph_degree != GRAPH_DEGREE:
        text = _sub_once(text, r"GRAPH_DEGREE = 4096;", f"GRAPH_DEGREE = {graph_degree};",
                         str(src / "src/config.h"))
        patches.append(f"src/config.h:12: GRAPH_DEGREE = 4096 -> {graph_degree} (the "
                       "graph's largest degree)")
    cfg.write_text(text)
    cu = dst / "cu_test.cu"
    cu.write_text(_sub_once(cu.read_text(), re.escape(ANCHOR),
                            ERROR_CHECK.replace("\\", "\\\\"), str(src / "cu_test.cu")))
    patches.append("cu_test.cu:71: CUDA status checked after the timed kernel (exit 3)")
    return patches


def check_tree(stmatch_dir: Path) -> None:
    """Exit with a clear message unless ``stmatch_dir`` holds STMatch's sources."""
    need = ["Makefile", "cu_test.cu", "src/config.h", "src/gpu_match.cu",
            f"src/config_for_ae/{TARGET}.h", "data/pattern/1.g"]
    missing = [p for p in need if not (stmatch_dir / p).is_file()]
    if missing:
        raise SystemExit(f"--stmatch {stmatch_dir}: not STMatch's source tree "
                         f"({', '.join(missing)} missing); get it with git archive: see "
                         "bench/stmatch_peer.py's docstring")


def build_stmatch(stmatch_dir: Path, build_dir: Path, arch: str, grid_dim: int,
                  graph_degree: int) -> tuple[Path, dict[str, Any]]:
    """Build (or reuse) STMatch's ``table_edge_ulb.exe`` for these options.

    Returns
    -------
    (Path, dict)
        The binary, and how it was built (commands, patches, registers, log, versions).

    Raises
    ------
    SystemExit
        If the tree is not STMatch's, nvcc or make is missing, or the build fails (with
        the last lines of the log).
    """
    check_tree(stmatch_dir)
    flag = _arch_flag(arch)
    nvcc = _version(["nvcc", "--version"], r"release (\d+\.\d+)")
    if nvcc is None:
        raise SystemExit("nvcc not found: STMatch is built with its Makefile and nvcc")
    if shutil.which("make") is None:
        raise SystemExit("make not found: STMatch is built with its Makefile")
    var = build_dir / f"{TARGET}-{flag}-g{grid_dim}-d{graph_degree}"
    src_copy = var / "src"
    exe = src_copy / "bin" / f"{TARGET}.exe"
    stamp = var / "build.stamp"
    key = source_hash(stmatch_dir / "src", f"{BUILD_RECIPE}/{flag}/{grid_dim}/{graph_degree}/"
                      + (stmatch_dir / "Makefile").read_text()
                      + (stmatch_dir / "cu_test.cu").read_text())
    info: dict[str, Any] = {"binary": str(exe), "source_hash": key, "arch": flag,
                            "grid_dim": grid_dim, "graph_degree": graph_degree,
                            "nvcc": ".".join(map(str, nvcc)), "log": str(var / "build.log"),
                            "slot_storage_bytes": slot_storage_bytes(grid_dim,
                                                                         graph_degree)}
    old = reuse_build(exe, stamp, key, "STMatch")
    if old is not None:
        return exe, old
    var.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    info["patches"] = prepare_sources(stmatch_dir, src_copy, flag, grid_dim, graph_degree)
    cmd = ["make", "-C", str(src_copy), f"bin/{TARGET}.exe"]
    _log("STMatch build: " + shlex.join(cmd))
    log = var / "build.log"
    t0 = time.perf_counter()
    with open(log, "w") as lf:
        lf.write("$ " + shlex.join(cmd) + "\n")
        lf.flush()
        rc = subprocess.call(cmd, stdout=lf, stderr=subprocess.STDOUT)
    text = log.read_text(errors="replace")
    if rc != 0 or not exe.is_file():
        tail = "\n".join(text.splitlines()[-25:])
        raise SystemExit(f"building STMatch failed (exit {rc}); log {log}, last lines:\n{tail}")
    m = re.search(r"_parallel_match[^\n]*\n(?:[^\n]*\n)*?[^\n]*Used (\d+) registers[^\n]*?"
                  r"(\d+) bytes smem", text)
    info.update(build_seconds=time.perf_counter() - t0, commands=[shlex.join(cmd)] + [
        ln for ln in text.splitlines() if ln.startswith(("nvcc ", "sed "))],
        registers=int(m.group(1)) if m else None, smem_bytes=int(m.group(2)) if m else None)
    if info["registers"] and info["registers"] * BLOCK_DIM > 65536:
        _log(f"STMatch build: {info['registers']} registers a thread: a {BLOCK_DIM}-thread "
             "block will not launch (the run reports the CUDA error)")
    stamp.write_text(json.dumps(info, indent=1))
    _log(f"STMatch built: {exe} ({info['build_seconds']:.0f} s; {info['registers']} registers,"
         f" {info['smem_bytes']} B shared memory)")
    return exe, {**info, "reused": False}


def graph_degree_for(max_degree: int, option: str) -> int:
    """``GRAPH_DEGREE`` for a graph: ``--graph-degree auto`` keeps 4096 when the largest
    degree fits, else rounds it up to 1024; a number is checked against the graph."""
    if option == "auto":
        return max(GRAPH_DEGREE, -(-max_degree // 1024) * 1024)
    d = int(option)
    if d < max_degree:
        raise SystemExit(f"--graph-degree {d}: the graph's largest degree is {max_degree}; "
                         "STMatch keeps a candidate set (part of one neighbour list) in "
                         "GRAPH_DEGREE entries (src/config.h:12): pass auto or a larger one")
    return d
