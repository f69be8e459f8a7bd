"""gMatch's file formats and output, for ``bench/gmatch_peer.py`` (see its docstring).

The binary CSR and ``t/v/e`` text graph files (writers, and readers that check them), query
numbering and query text both ways, gMatch's own patterns (``patterns/p1..p9``),
:func:`load_patterns` for ``--patterns``, and :func:`parse_gmatch_output` with the regexes
of the lines it reads from gMatch's output.
"""
from __future__ import annotations

import os
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np

from _sibling import load  # bench/_sibling.py: sibling benchmarks by path

HERE = Path(__file__).resolve().parent
INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1



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
            out += load("distributed").queries(tok)
    return out


# ====================================================================== gMatch output
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
