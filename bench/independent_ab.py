#!/usr/bin/env python3
"""Counting independent last vertices on the GPU, on and off, side by side (issue 21,
item 3).

Independent vertices are the last two or three query vertices of a plan with no edge among
them and no restriction on them (``warpmatch.plan.leaves.indep_group``: STMatch's pattern
13's vertices 4 and 5, each adjacent to two matched vertices). The GPU engine counts them
by inclusion-exclusion, the whole warp scanning each one's set for one partial match after
another (``engine.gpu.render_leaves.render_indep``), where it would enumerate the first
and scan the second's list again for each. For each pattern (or labeled query) and graph
this counts the embeddings with the GPU engine twice in the same process, on the plan's
own module (the first call of each compiles it): with them counted (the default) and
enumerated (``$WARPMATCH_INDEPENDENT=0``, read when the module is rendered). Every count
must agree; the table prints the medians of ``--repeats`` calls after an untimed one and
the ratio off / on (above 1: counting them is faster). Plans without such vertices are
listed as such and not timed.

Examples::

    python bench/independent_ab.py --graph snap:email-Eu-core \\
        --patterns stmatch:3,stmatch:12,stmatch:13,bull
    python bench/independent_ab.py --graph chung-lu:1e7 --patterns stmatch:13
    python bench/independent_ab.py --labeled hprd --limit 20   (shipped labeled queries)
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

#: ``fn()``'s count and the median seconds of ``repeats`` calls after an untimed one
_timed = load("twins_ab")._timed
DATA = Path(os.environ.get("WARPMATCH_DATA", Path(__file__).resolve().parents[2]
                           / "shared" / "data"))


def _gpu(graph: Any, plan: Any, on: bool, limit: float) -> int:
    """The GPU engine's embeddings of ``plan``, independent vertices counted or not."""
    from warpmatch.engine.gpu import GpuEngine
    old = os.environ.get("WARPMATCH_INDEPENDENT")
    os.environ["WARPMATCH_INDEPENDENT"] = "1" if on else "0"
    try:
        eng = GpuEngine(compile="specialised", time_limit_s=limit)
        return int(eng.count(graph, plan)) * int(plan.multiplier)
    finally:
        if old is None:
            os.environ.pop("WARPMATCH_INDEPENDENT", None)
        else:
            os.environ["WARPMATCH_INDEPENDENT"] = old


def _labeled(name: str, limit: int) -> tuple[str, Any, list[tuple[str, Any]]]:
    """The shipped labeled graph ``name`` (yeast, human, hprd) and up to ``limit`` of its
    queries whose plans end in independent vertices the GPU engine counts."""
    import warpmatch as wm
    from warpmatch.plan import build_plan
    from warpmatch.plan.leaves import indep_group
    path = DATA / "labeled" / name / f"{name}.graph"
    if not path.exists():
        raise SystemExit(f"--labeled {name}: {path} not found (set $WARPMATCH_DATA)")
    g = wm.api.as_graph(str(path))
    picked = []
    for qp in sorted((path.parent / "query_graph").glob("*.graph")):
        q = wm.api.as_query(str(qp), g)
        if indep_group(build_plan(g, q, purpose="count")) is not None:
            picked.append((qp.stem, q))
            if len(picked) >= limit:
                break
    return f"labeled:{name}", g, picked


def main(argv: list[str] | None = None) -> int:
    ap = load("twins_ab").ab_arguments(__doc__, "stmatch:3,stmatch:12,stmatch:13,bull")
    ap.add_argument("--labeled", default=None, metavar="GRAPH",
                    help="instead: a shipped labeled graph (yeast, human, hprd) and its "
                         "queries whose plans end in independent vertices")
    ap.add_argument("--limit", type=int, default=20,
                    help="most labeled queries (--labeled)")
    args = ap.parse_args(argv)
    if args.labeled:
        t = time.perf_counter()
        label, graph, queries = _labeled(args.labeled, args.limit)
        return _run(args, label, graph, time.perf_counter() - t, queries)
    gp = load("gmatch_peer")
    args.edges = 1e6
    with tempfile.TemporaryDirectory() as work:     # a Chung-Lu graph's file, mapped
        label, graph, load_s = gp.load_graph(args.graph, args, Path(work))
        return _run(args, label, graph, load_s, load_patterns(args.patterns, args.gmatch))


def _run(args: argparse.Namespace, label: str, graph: Any, load_s: float,
         queries: list[tuple[str, Any]]) -> int:
    """The table for one graph (:func:`main`)."""
    from warpmatch.plan import build_plan
    from warpmatch.plan.leaves import indep_group
    print(f"# graph {label}: {graph.n:,} vertices, {graph.num_edges:,} edges (loaded in "
          f"{load_s:.1f} s); GPU engine, specialised module", flush=True)
    print(f"{'query':<22} {'indep':>5} {'embeddings':>20} {'on s':>9} {'off s':>9} {'x':>6}")
    rows = []
    on_sum = off_sum = 0.0
    for name, q in queries:
        plan = build_plan(graph, q, purpose="count")
        grp = indep_group(plan)
        row: dict[str, Any] = {"query": name, "indep": 0 if grp is None else plan.k - grp.first}
        rows.append(row)
        if grp is None:
            print(f"{name:<22} {'-':>5}  (no independent vertices in its plan: not timed)",
                  flush=True)
            continue
        try:
            n_on, t_on = _timed(lambda: _gpu(graph, plan, True, args.time_limit), args.repeats)
            n_off, t_off = _timed(lambda: _gpu(graph, plan, False, args.time_limit),
                                  args.repeats)
        except TimeoutError:
            print(f"{name:<22} {row['indep']:>5}  (past the {args.time_limit:g} s limit)",
                  flush=True)
            row["timed_out"] = True
            continue
        if n_on != n_off:
            raise SystemExit(f"{name}: {n_on} with independent vertices counted, {n_off} "
                             "without")
        row.update(embeddings=n_on, on_s=t_on, off_s=t_off)
        on_sum += t_on
        off_sum += t_off
        print(f"{name:<22} {row['indep']:>5} {n_on:>20,} {t_on:>9.4f} {t_off:>9.4f} "
              f"{t_off / max(t_on, 1e-9):>6.2f}", flush=True)
    timed = [r for r in rows if "on_s" in r]
    if timed:
        geo = statistics.geometric_mean([r["off_s"] / max(r["on_s"], 1e-9) for r in timed])
        print(f"# {len(timed)} timed: sum on {on_sum:.3f} s, off {off_sum:.3f} s; geometric "
              f"mean of off / on {geo:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"graph": label, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
