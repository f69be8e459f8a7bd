"""warpmatch's numba CPU engine against the CPU subgraph-matching libraries people use.

For each pattern, on the same data graph and in one run, this counts the
*embeddings* (every injective, edge-preserving map, non-induced) with

- warpmatch ``backend="cpu"`` (numba DFS over an RI-ordered plan),
- networkx ``GraphMatcher.subgraph_monomorphisms_iter`` (VF2, Cordella et al. 2004),
- igraph ``Graph.count_subisomorphisms_vf2`` (VF2 in C),
- igraph ``Graph.get_subisomorphisms_lad(induced=False)`` (LAD, Solnon 2010),
- rustworkx ``vf2_mapping(subgraph=True, induced=False)`` (VF2++ in Rust),

and prints a table of counts, seconds and the ratio *fastest peer / warpmatch*.
Timings are compared only where a peer's count equals warpmatch's; a mismatch
is printed, never hidden. Before the table a semantics probe runs every peer on
K4 with the 4-cycle as pattern (24 non-induced embeddings, 0 induced) so the
run itself shows which semantics each peer counts.

What is timed: the matching call only. Building each library's graph object
is excluded for everyone (warpmatch's too). warpmatch's *first* call per
pattern (which includes numba JIT compilation the first time, unless numba's
on-disk cache already holds the kernels) is reported apart from the *warm*
time (median of 3 further calls). ``--cold-jit`` points numba at an empty cache
directory so the first call really compiles.

Each peer runs in its own subprocess per pattern, with a wall-clock limit
(``--timeout``, default 60 s, counted from when its graph is built); a peer that
exceeds it is reported as ``>T s``. The ratio for a pattern where every peer
timed out is a lower bound (``>r``).

Run ``python bench/cpu_peers.py --help``; see ``bench/README.md``.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_PATTERNS = ("triangle", "diamond", "tailed-triangle", "4-clique", "square")
PEERS = ("igraph-vf2", "igraph-lad", "rustworkx", "networkx")

#: K4 data graph and 4-cycle pattern for the semantics probe: 24 = 3 four-cycles
#: x 8 automorphisms non-induced; 0 induced (K4 has chords on every 4-cycle).
_PROBE_G = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
_PROBE_Q = [(0, 1), (1, 2), (2, 3), (3, 0)]
_PROBE_NONINDUCED, _PROBE_INDUCED = 24, 0


# ----------------------------------------------------------------- peers
def _peer_prepare(peer: str, n: int, edges: np.ndarray, qk: int,
                  qedges: list[tuple[int, int]]) -> Any:
    """Build the peer's graph objects; returns a zero-argument callable that counts."""
    if peer == "networkx":
        import networkx as nx
        from networkx.algorithms.isomorphism import GraphMatcher
        G = nx.Graph()
        G.add_nodes_from(range(n))
        G.add_edges_from(edges.tolist())
        Q = nx.Graph()
        Q.add_nodes_from(range(qk))
        Q.add_edges_from(qedges)
        return lambda: sum(1 for _ in GraphMatcher(G, Q).subgraph_monomorphisms_iter())
    if peer in ("igraph-vf2", "igraph-lad"):
        import igraph as ig
        G = ig.Graph(n=n, edges=edges.tolist(), directed=False)
        Q = ig.Graph(n=qk, edges=qedges, directed=False)
        if peer == "igraph-vf2":
            return lambda: int(G.count_subisomorphisms_vf2(Q))
        # LAD has no counting call: it returns the list of mappings
        return lambda: len(G.get_subisomorphisms_lad(Q, induced=False))
    if peer == "rustworkx":
        import rustworkx as rx
        G = rx.PyGraph()
        G.add_nodes_from(range(n))
        G.add_edges_from_no_data([tuple(e) for e in edges.tolist()])
        Q = rx.PyGraph()
        Q.add_nodes_from(range(qk))
        Q.add_edges_from_no_data(qedges)
        return lambda: sum(1 for _ in rx.vf2_mapping(G, Q, subgraph=True, induced=False,
                                                      id_order=False))
    raise ValueError(f"unknown peer {peer!r}; known: {', '.join(PEERS)}")


def _peer_child(spec_path: str) -> None:
    """Subprocess entry: build, signal readiness, count once, print JSON."""
    spec = json.loads(Path(spec_path).read_text())
    edges = np.load(spec["edges"])
    fn = _peer_prepare(spec["peer"], int(spec["n"]), edges, int(spec["qk"]),
                       [tuple(e) for e in spec["qedges"]])
    # the parent starts the peer's clock when this file appears (build excluded)
    Path(spec["ready"]).write_text("ready")
    t0 = time.perf_counter()
    c = fn()
    print(json.dumps({"count": int(c), "seconds": time.perf_counter() - t0}), flush=True)


def run_peer(peer: str, n: int, edges_file: str, qk: int, qedges: list[tuple[int, int]],
             timeout: float, build_timeout: float = 300.0,
             mem_limit_gb: float | None = 8.0) -> dict[str, Any]:
    """Count embeddings with one peer in a fresh subprocess under a time limit.

    Parameters
    ----------
    peer : str
        One of :data:`PEERS`.
    n : int
        Number of data vertices.
    edges_file : str
        ``.npy`` file of undirected edges, shape (m, 2), each edge once.
    qk : int
        Number of pattern vertices.
    qedges : list of (int, int)
        Pattern edges.
    timeout : float
        Seconds allowed for the matching call (graph building not counted).
    build_timeout : float, optional
        Seconds allowed for importing the library and building its graph.
    mem_limit_gb : float or None, optional
        Address-space limit for the child (LAD materialises every mapping).
        The default is 8 GiB; ``None`` sets none.

    Returns
    -------
    dict
        ``{"count": int, "seconds": float}``, or ``{"timeout": True}``, or
        ``{"error": str}``.
    """
    with tempfile.TemporaryDirectory(prefix="wm_peer_") as tmp:
        ready = Path(tmp) / "ready"
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps({"peer": peer, "n": n, "edges": edges_file, "qk": qk,
                                    "qedges": [list(e) for e in qedges], "ready": str(ready)}))
        out_f = open(Path(tmp) / "out", "w+")
        err_f = open(Path(tmp) / "err", "w+")

        def limit_memory() -> None:
            if mem_limit_gb:
                import resource
                b = int(mem_limit_gb * 2**30)
                resource.setrlimit(resource.RLIMIT_AS, (b, b))

        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--_child", str(spec)],
                                stdout=out_f, stderr=err_f, preexec_fn=limit_memory)
        start = time.perf_counter()
        t_ready: float | None = None
        timed_out = False
        while proc.poll() is None:
            now = time.perf_counter()
            if t_ready is None and ready.exists():
                t_ready = now
            if (t_ready is None and now - start > build_timeout) or \
                    (t_ready is not None and now - t_ready > timeout):
                proc.kill()
                proc.wait()
                timed_out = True
                break
            time.sleep(0.02)
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
        out_f.close()
        err_f.close()
    if timed_out:
        return {"timeout": True}
    if proc.returncode != 0 or not out.strip():
        last = (err.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return {"error": last[:120]}
    res = json.loads(out.strip().splitlines()[-1])
    if res["seconds"] > timeout:   # finished, but after the limit: report as such
        return {"timeout": True}
    return res


def probe_semantics(peers: list[str]) -> dict[str, str]:
    """Run each peer on K4 / 4-cycle in-process and say which semantics it counts.

    Returns
    -------
    dict
        ``{peer: "non-induced embeddings"}`` (24), ``"induced"`` (0) or
        ``"unexpected count N"``.
    """
    out: dict[str, str] = {}
    edges = np.asarray(_PROBE_G, dtype=np.int64)
    for peer in peers:
        try:
            c = _peer_prepare(peer, 4, edges, 4, list(_PROBE_Q))()
        except Exception as exc:   # a missing library is reported, not fatal
            out[peer] = f"unavailable ({type(exc).__name__}: {exc})"
            continue
        if c == _PROBE_NONINDUCED:
            out[peer] = f"non-induced embeddings ({c} on K4/C4)"
        elif c == _PROBE_INDUCED:
            out[peer] = f"induced ({c} on K4/C4)"
        else:
            out[peer] = f"unexpected count {c} on K4/C4"
    return out


# --------------------------------------------------------------- graphs
def load_graph(spec: str) -> tuple[int, np.ndarray, str]:
    """The data graph as (n, undirected edge array (m, 2) with u < v, description).

    Parameters
    ----------
    spec : str
        ``ba:N:M:SEED`` for ``networkx.barabasi_albert_graph(N, M, seed=SEED)``,
        or a path to a graph file that :func:`warpmatch.read_graph` reads
        (read as undirected).
    """
    if spec.startswith("ba:"):
        import networkx as nx
        try:
            _, n_s, m_s, seed_s = spec.split(":")
            n, m, seed = int(n_s), int(m_s), int(seed_s)
        except ValueError:
            raise SystemExit(f"--graph {spec!r}: expected ba:N:M:SEED, e.g. ba:20000:5:1")
        G = nx.barabasi_albert_graph(n, m, seed=seed)
        e = np.asarray(list(G.edges()), dtype=np.int64).reshape(-1, 2)
        e = np.sort(e, axis=1)
        return n, e, f"networkx.barabasi_albert_graph({n}, {m}, seed={seed})"
    import warpmatch as wm
    g = wm.read_graph(spec)
    s, d = g.edges()
    e = np.stack([s, d], axis=1).astype(np.int64)
    return g.n, e, f"{spec} (undirected)"


# ------------------------------------------------------------- warpmatch
def time_warpmatch(graph: Any, pattern: Any, repeats: int = 3) -> dict[str, Any]:
    """First-call and warm (median of ``repeats``) time of ``warpmatch.count(..., backend="cpu")``."""
    import warpmatch as wm
    t0 = time.perf_counter()
    c = wm.count(graph, pattern, mode="embeddings", backend="cpu")
    first = time.perf_counter() - t0
    warm = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        c2 = wm.count(graph, pattern, mode="embeddings", backend="cpu")
        warm.append(time.perf_counter() - t0)
        if c2 != c:
            raise RuntimeError(f"warpmatch gave {c} then {c2} for {pattern}")
    return {"count": int(c), "first": first, "warm": float(np.median(warm))}


# ------------------------------------------------------------------ main
def _fmt_s(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints the semantics probe and the table."""
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--_child"]:
        _peer_child(argv[1])
        return 0
    ap = argparse.ArgumentParser(
        description="Count embeddings with warpmatch (cpu) and CPU peers on one graph; "
                    "print times and the ratio fastest peer / warpmatch.")
    ap.add_argument("--graph", default="ba:20000:5:1",
                    help="graph file (any format warpmatch reads; undirected) or ba:N:M:SEED "
                         "(default: ba:20000:5:1)")
    ap.add_argument("--patterns", default=",".join(DEFAULT_PATTERNS),
                    help="comma-separated warpmatch pattern names or DSL strings separated "
                         f"by ';' (default: {','.join(DEFAULT_PATTERNS)})")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds per peer per pattern, graph building excluded (default 60)")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help=f"comma-separated subset of {','.join(PEERS)} (default: all)")
    ap.add_argument("--retry-timeouts", action="store_true",
                    help="run a peer on every pattern even after it exceeded the limit on an "
                         "earlier one (by default it is skipped from then on, to keep the "
                         "default run to minutes)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="warm warpmatch calls whose median is reported (default 3)")
    ap.add_argument("--cold-jit", action="store_true",
                    help="use an empty numba cache so the first call includes JIT compilation")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)

    if args.cold_jit:
        # must happen before numba is imported (warpmatch imports it)
        cold = tempfile.mkdtemp(prefix="wm_numba_cold_")
        atexit.register(shutil.rmtree, cold, ignore_errors=True)
        os.environ["NUMBA_CACHE_DIR"] = cold
    import warpmatch as wm

    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in peers:
        if p not in PEERS:
            ap.error(f"unknown peer {p!r}; known: {', '.join(PEERS)}")
    sep = ";" if ";" in args.patterns else ","
    patterns = [p.strip() for p in args.patterns.split(sep) if p.strip()]

    n, edges, desc = load_graph(args.graph)
    graph = wm.Graph.from_edges(edges[:, 0], edges[:, 1], n=n, name=args.graph)
    print(f"graph: {desc}: {graph.n:,} vertices, {graph.num_edges:,} edges; "
          f"max degree {graph.max_degree:,}")
    print(f"machine: {os.cpu_count()} logical CPUs; python {sys.version.split()[0]}; "
          f"warpmatch {wm.__version__}; numba threads "
          f"{os.environ.get('NUMBA_NUM_THREADS', 'default')}; "
          f"numba cache {'cold (empty dir)' if args.cold_jit else 'as found on disk'}")
    print(f"counting: embeddings (non-induced, every injective map); peer limit {args.timeout:g} s")
    print("semantics probe (K4 data graph, 4-cycle pattern: 24 non-induced, 0 induced):")
    for peer, what in probe_semantics(peers).items():
        print(f"  {peer:<11} {what}")
    print()

    results: list[dict[str, Any]] = []
    gave_up: dict[str, str] = {}   # peer -> the pattern it first timed out on
    with tempfile.TemporaryDirectory(prefix="wm_bench_") as tmp:
        edges_file = str(Path(tmp) / "edges.npy")
        np.save(edges_file, edges)
        for pat in patterns:
            qobj = wm.api.as_query(pat, graph)   # a pattern name or DSL text
            wmres = time_warpmatch(graph, qobj, args.repeats)
            row: dict[str, Any] = {"pattern": pat, "embeddings": wmres["count"],
                                   "wm_first": wmres["first"], "wm_warm": wmres["warm"],
                                   "peers": {}}
            qedges = [tuple(map(int, e)) for e in qobj.edges.tolist()]
            for peer in peers:
                if peer in gave_up and not args.retry_timeouts:
                    r = {"skipped": gave_up[peer]}
                else:
                    r = run_peer(peer, n, edges_file, qobj.k, qedges, args.timeout)
                    if r.get("timeout"):
                        gave_up[peer] = pat
                row["peers"][peer] = r
                status = ("timeout" if r.get("timeout") else
                          f"skipped (timed out on {r['skipped']})" if "skipped" in r else
                          r.get("error") or f"{r['count']} in {r['seconds']:.3f}s")
                print(f"  [{pat}] {peer}: {status}", file=sys.stderr, flush=True)
            results.append(row)

    # ---- table
    head = ["pattern", "embeddings", "wm first s", "wm warm s"] + [f"{p} s" for p in peers] \
        + ["ratio"]
    lines = []
    mismatches = []
    for row in results:
        cells = [row["pattern"], f"{row['embeddings']:,}", _fmt_s(row["wm_first"]),
                 _fmt_s(row["wm_warm"])]
        agreeing = []
        for p in peers:
            r = row["peers"][p]
            if r.get("timeout"):
                cells.append(f">{args.timeout:g}")
            elif "skipped" in r:
                cells.append("skip")
            elif "error" in r:
                cells.append("error")
                mismatches.append(f"{row['pattern']}: {p} failed: {r['error']}")
            elif r["count"] != row["embeddings"]:
                cells.append(f"{_fmt_s(r['seconds'])}*")
                mismatches.append(f"{row['pattern']}: {p} counted {r['count']:,}, "
                                  f"warpmatch {row['embeddings']:,}")
            else:
                cells.append(_fmt_s(r["seconds"]))
                agreeing.append(r["seconds"])
        warm = max(row["wm_warm"], 1e-9)
        if agreeing:
            cells.append(f"{min(agreeing) / warm:.1f}x")
            row["ratio"] = min(agreeing) / warm
        elif any(row["peers"][p].get("timeout") for p in peers) and all(
                row["peers"][p].get("timeout") or "skipped" in row["peers"][p] for p in peers):
            # every peer that ran exceeded the limit: the ratio is a lower bound
            cells.append(f">{args.timeout / warm:.0f}x")
            row["ratio"] = None
        else:
            cells.append("n/a")
            row["ratio"] = None
        lines.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in lines)) for i, h in enumerate(head)]
    print(" | ".join(h.rjust(w) for h, w in zip(head, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in lines:
        print(" | ".join(c.rjust(w) for c, w in zip(r, widths)))
    print()
    print("ratio = fastest peer whose count agrees / warpmatch warm time; "
          f">T = peer exceeded the {args.timeout:g} s limit; skip = not run after exceeding "
          "it on an earlier pattern (--retry-timeouts runs it); * = count differs (not compared)")
    print("count check: " + ("every finished peer agrees with warpmatch"
                             if not mismatches else "; ".join(mismatches)))
    if args.json:
        Path(args.json).write_text(json.dumps({"graph": desc, "timeout": args.timeout,
                                               "results": results}, indent=2))
    return 1 if any("counted" in m for m in mismatches) else 0


if __name__ == "__main__":
    sys.exit(main())
