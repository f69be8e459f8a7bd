"""The CPU sequential path with and without compiled delta plans, same process, same stream.

Usage::

    python bench/csm_peers.py --rapidflow PEER --data ../shared/data \\
        --workloads email-Eu-core --patterns square --engines cpu1 --work-dir /tmp/csm
    python bench/specialise_ab.py /tmp/csm/wm_csm_peers_*/email-Eu-core \\
        --queries square,diamond,4-clique --repeats 5

The directory is one workload of a ``csm_peers.py --work-dir`` run: its ``g0.wmg`` and
``updates.npz``, and a folder per query holding ``query.pkl`` (a pattern name that has no
folder is taken from the pattern library). For each query, matchers with
``specialise="never"`` (the plan-interpreting kernel) and ``"always"`` (compiled
plans, compiled before timing) alternate on the whole stream in batches of
``--batch``, one thread, ``count_initial=False``; a fresh matcher per run. Prints the
median seconds of each and their ratio, after checking that both give the same sum
of per-update counts. Timings are this machine's: compare the ratio, not the times.
"""
from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np

import warpmatch as wm
from warpmatch.query.patterns import get_pattern
from warpmatch.stream.types import Updates

MODES = ("never", "always")


def load(work: Path) -> tuple[object, Updates]:
    g0 = wm.read_graph(str(work / "g0.wmg"))
    z = np.load(work / "updates.npz")
    ups = Updates(src=z["src"], dst=z["dst"], op=z["op"],
                  label=z["label"] if "label" in z.files else None, source=str(work))
    return g0, ups


def query_of(work: Path, name: str) -> object:
    path = work / name / "query.pkl"
    if path.exists():
        with open(path, "rb") as f:
            return pickle.load(f)
    return get_pattern(name)


def run(g0: object, q: object, ups: Updates, mode: str, batch: int) -> tuple[float, int, list]:
    cm = wm.ContinuousMatcher(g0, q, backend="cpu", threads=1, count_initial=False,
                              specialise=mode)
    total = 0
    t0 = time.perf_counter()
    for d in cm.apply_batches(ups, batch, counts_only=True):
        total += d.added + d.removed
    sp = cm._sequential_path().special
    return time.perf_counter() - t0, total, [] if sp is None else list(sp.plans)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload", type=Path, help="a csm_peers.py work directory's workload")
    ap.add_argument("--queries", required=True, help="comma-separated query folders or patterns")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch", type=int, default=4096)
    args = ap.parse_args(argv)
    g0, ups = load(args.workload)
    print(f"{args.workload}: {len(ups):,} updates, batches of {args.batch}, one thread")
    print("| query | interpreter s | compiled s | compiled/interpreter speed | plans compiled |")
    print("|---|---:|---:|---:|---|")
    for name in args.queries.split(","):
        q = query_of(args.workload, name)
        for mode in MODES:          # warm-up: the kernels loaded, the plans compiled
            run(g0, q, ups.slice(0, min(len(ups), 300)), mode, 100)
        secs: dict[str, list[float]] = {m: [] for m in MODES}
        totals: dict[str, int] = {}
        plans: list = []
        for _ in range(args.repeats):
            for mode in MODES:
                s, total, took = run(g0, q, ups, mode, args.batch)
                secs[mode].append(s)
                totals[mode] = total
                plans = took if mode == "always" else plans
        if totals["never"] != totals["always"]:
            print(f"{name}: counts differ ({totals})", file=sys.stderr)
            return 1
        a, b = float(np.median(secs["never"])), float(np.median(secs["always"]))
        print(f"| {name} | {a:.4f} | {b:.4f} | {a / b:.2f}x | {len(plans)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
