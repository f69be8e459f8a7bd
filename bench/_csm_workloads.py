"""The workloads of ``bench/csm_peers.py`` and the files both sides read.

Part of ``csm_peers.py``'s benchmark, kept apart for length (and read by
``_latency_rf.py`` and ``batch_cost.py``, which need no more of it). Map: the graphs,
groups and patterns, the stream's fractions < :class:`Workload`, :func:`data_root`,
:func:`powerlaw_graph` < :func:`build_workloads` (``--workloads``: graphs and their
queries) < :func:`stream_passes`, :func:`prepare_graph` (``G_0``, the stream, their
files in warpmatch's and RapidFlow's formats) < :func:`reconnections` (the updates that
meet RapidFlow's crash condition, for the report).
"""
from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rapidflow_peer import write_rf_graph, write_rf_stream  # bench/ is on sys.path

#: the named patterns of the unlabeled workloads (``warpmatch patterns``)
PATTERNS = ("triangle", "4-clique", "diamond", "square", "tailed-triangle", "4-path", "house")
LABELED_GRAPHS = ("yeast", "human", "hprd")
UNLABELED_GRAPHS = ("email-Eu-core", "powerlaw")
GROUPS = {"labeled": LABELED_GRAPHS, "unlabeled": UNLABELED_GRAPHS}
#: the stream: make_stream's insert and delete fractions (those of ``warpmatch stream-gen``)
INSERT_FRACTION, DELETE_FRACTION = 0.1, 0.05


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
                  ) -> tuple[Any, dict[str, Path], int, dict[str, Any]]:
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
    isolated, reconnect = reconnections(np.asarray(g0.degree), usrc, udst, ups.op)
    info = {"graph": g.name, "vertices": g.n, "edges": g.num_edges, "g0_edges": g0.num_edges,
            "dropped_self_loops": int(g.report.self_loops),
            "dropped_duplicates": int(g.report.duplicates),
            "updates": len(ups), "passes": passes, "inserts": int((ups.op > 0).sum()),
            "deletes": int((ups.op < 0).sum()), "prepare_s": time.perf_counter() - t0,
            "labeled": g.vertex_labels is not None, "edge_labeled": g.edge_labels is not None,
            "connect_isolated_in_g0": isolated, "reconnect_emptied": reconnect}
    return g, files, len(ups), info


def reconnections(deg0: np.ndarray, src: np.ndarray, dst: np.ndarray,
                   op: np.ndarray) -> tuple[int, int]:
    """Insertions that touch a vertex isolated in ``G_0``, and those that touch a vertex
    whose degree dropped to 0 during the stream (RapidFlow's crash condition).

    Import this module by name (``import _csm_workloads``, ``bench/`` on ``sys.path``), not
    with ``_sibling.load``: numba's cache of the kernel records its module's name, and a
    cache written under another name fails to load (``ModuleNotFoundError``).
    """
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
