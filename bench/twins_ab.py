#!/usr/bin/env python3
"""Counting twins from one intersection, on and off, side by side (issue 21, item 3).

Twins are last query vertices with the same two or more neighbours and nothing else to
check (``warpmatch.plan.leaves.twin_group``: the diamond's two common neighbours of an
edge, K5 less an edge's two). For each pattern and graph this counts the embeddings with
the CPU engine (``backend="cpu"``) twice in the same process: with twins counted (the
default) and with them enumerated (``$WARPMATCH_TWINS=0``, read when the engine packs
the plan), and, with ``--gpu``, with the GPU engine's ``leaf_groups="twins"`` (its
default) against ``"alike"`` (no twins), on the plan's own module (the first call of each
compiles it). Every count must agree; the table prints the medians of ``--repeats``
calls after an untimed one, and the ratio off / on (above 1: counting twins is faster).

Examples::

    python bench/twins_ab.py --graph snap:email-Eu-core \\
        --patterns diamond,stmatch:7,stmatch:9,stmatch:15,stmatch:23
    python bench/twins_ab.py --graph chung-lu:1e6 --patterns stmatch24 --time-limit 30

Patterns without twins in their plan are listed as such and not timed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gmatch_io import load_patterns  # noqa: E402
from _sibling import load  # noqa: E402


def _timed(fn, repeats: int) -> tuple[int, float]:
    """``fn()``'s count and the median seconds of ``repeats`` calls after an untimed one."""
    n = fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        m = fn()
        times.append(time.perf_counter() - t)
        if m != n:
            raise SystemExit(f"counts differ between calls: {n} and {m}")
    return n, statistics.median(times)


def _cpu(graph: Any, query: Any, twins: bool, limit: float) -> int:
    import warpmatch as wm
    old = os.environ.get("WARPMATCH_TWINS")
    os.environ["WARPMATCH_TWINS"] = "1" if twins else "0"
    try:
        r = wm.count_result(graph, query, backend="cpu", time_limit=limit)
    finally:
        if old is None:
            os.environ.pop("WARPMATCH_TWINS", None)
        else:
            os.environ["WARPMATCH_TWINS"] = old
    if getattr(r, "partial", False):
        raise TimeoutError
    return int(r.count)


def _gpu(graph: Any, plan: Any, groups: str, limit: float) -> int:
    from warpmatch.engine.gpu import GpuEngine
    eng = GpuEngine(compile="specialised", leaf_groups=groups, time_limit_s=limit)
    return int(eng.count(graph, plan)) * int(plan.multiplier)


def ab_arguments(doc: str, patterns: str) -> argparse.ArgumentParser:
    """The arguments an on/off benchmark of this kind takes (this script's and
    ``independent_ab.py``'s): the graph, the patterns (default ``patterns``), gMatch's
    tree for its patterns, repeats, a time limit, the Chung-Lu seed and ``--json``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--graph", default="snap:email-Eu-core",
                    help="chung-lu:EDGES or snap:PATH (gmatch_peer.py's forms)")
    ap.add_argument("--patterns", default=patterns,
                    help="warpmatch names, stmatch24, stmatch:A-B, gmatch:P1-P9 (--gmatch)")
    ap.add_argument("--gmatch", type=Path, default=None,
                    help="gMatch's source tree, for its patterns (gmatch:P1-P9)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="seconds per count (a count past it is reported as such)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None, help="write every number here")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = ab_arguments(__doc__, "diamond,stmatch:7,stmatch:9,stmatch:15,stmatch:23")
    ap.add_argument("--gpu", action="store_true",
                    help="also the GPU engine, leaf_groups='twins' (its default) vs 'alike'")
    args = ap.parse_args(argv)

    gp = load("gmatch_peer")
    spec = args.graph
    args.edges = 1e6
    with tempfile.TemporaryDirectory() as work:     # a Chung-Lu graph's file, mapped
        return _run(args, *gp.load_graph(spec, args, Path(work)))


def _run(args: argparse.Namespace, label: str, graph: Any, load_s: float) -> int:
    """The table for one graph (:func:`main`)."""
    from warpmatch.plan import build_plan
    from warpmatch.plan.leaves import twin_group
    print(f"# graph {label}: {graph.n:,} vertices, {graph.num_edges:,} edges (loaded in "
          f"{load_s:.1f} s); {os.cpu_count()} cores", flush=True)
    rows = []
    head = (f"{'pattern':<12} {'twins':>5} {'embeddings':>20} {'cpu on s':>9} "
            f"{'cpu off s':>9} {'x':>6}")
    if args.gpu:
        head += f" {'gpu on s':>9} {'gpu off s':>9} {'x':>6}"
    print(head)
    for name, q in load_patterns(args.patterns, args.gmatch):
        plan = build_plan(graph, q)
        # with labels too: the CPU engine counts those from its scan (the GPU's "twins"
        # only bare ones, plan.leaves.twin_group)
        tg = twin_group(plan, graph.vertex_labels is not None, graph.edge_labels is not None,
                        checks=True)
        row: dict[str, Any] = {"pattern": name, "twins": 0 if tg is None else plan.k - tg.first}
        rows.append(row)
        if tg is None:
            print(f"{name:<12} {'-':>5}  (no twins in its plan: not timed)", flush=True)
            continue
        try:
            n_on, t_on = _timed(lambda: _cpu(graph, q, True, args.time_limit), args.repeats)
            n_off, t_off = _timed(lambda: _cpu(graph, q, False, args.time_limit), args.repeats)
        except TimeoutError:
            print(f"{name:<12} {row['twins']:>5}  (past the {args.time_limit:g} s limit)")
            row["timed_out"] = True
            continue
        if n_on != n_off:
            raise SystemExit(f"{name}: {n_on} with twins counted, {n_off} without")
        row.update(embeddings=n_on, cpu_on_s=t_on, cpu_off_s=t_off)
        line = (f"{name:<12} {row['twins']:>5} {n_on:>20,} {t_on:>9.3f} {t_off:>9.3f} "
                f"{t_off / max(t_on, 1e-9):>6.2f}")
        if args.gpu:
            try:
                g_on, s_on = _timed(lambda: _gpu(graph, plan, "twins", args.time_limit),
                                    args.repeats)
                g_off, s_off = _timed(lambda: _gpu(graph, plan, "alike", args.time_limit),
                                      args.repeats)
            except TimeoutError:
                print(line + f"  (gpu: past the {args.time_limit:g} s limit)", flush=True)
                continue
            if not g_on == g_off == n_on:
                raise SystemExit(f"{name}: gpu {g_on} / {g_off}, cpu {n_on}")
            row.update(gpu_on_s=s_on, gpu_off_s=s_off)
            line += f" {s_on:>9.3f} {s_off:>9.3f} {s_off / max(s_on, 1e-9):>6.2f}"
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps({"graph": label, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
