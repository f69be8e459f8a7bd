"""Full counts from homomorphisms: where the quotients' eliminations run (issue 23).

Counts shipped labeled queries with ``warpmatch._hombasis.count_hombasis`` in each of
``--modes``, one after the other in one process, and prints a table of seconds and the
ratios to the first mode; the counts must agree (a mismatch makes the exit status 1):

- ``numpy``: every quotient by numpy's eliminations on the host, one by one;
- ``kernel``: the compiled sum on every core (``_homkernel``), numpy on the host for the
  quotients whose tables do not fit its scratch;
- ``kernel-device``: the same, with those quotients' eliminations on the GPU (CuPy);
- ``device``: every quotient by the eliminations on the GPU.

A mode that does not end within ``--time-limit`` seconds (or declines) is shown as ``>``
the limit. Run as ``python bench/hombasis_ab.py --graph human --queries
sparse_12_10,dense_16_1``; the kernel is loaded (or compiled) before the first timing.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

DATA = Path(os.environ.get("WARPMATCH_DATA", Path(__file__).resolve().parents[2]
                           / "shared" / "data"))
MODES = {"numpy": (False, False), "kernel": (True, False),
         "kernel-device": (True, True), "device": (False, True)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="human")
    ap.add_argument("--queries", required=True,
                    help="comma-separated, e.g. sparse_12_10 (query_<name>.graph)")
    ap.add_argument("--modes", default="numpy,kernel,kernel-device,device")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per count")
    ap.add_argument("--out", help="write the rows as JSON to this file")
    args = ap.parse_args(argv)
    import warpmatch as wm
    from warpmatch._hombasis import count_hombasis, warm_kernel
    from warpmatch.query.io import read_query_file

    modes = args.modes.split(",")
    bad = [m for m in modes if m not in MODES]
    if bad:
        ap.error(f"unknown modes {bad}; known: {', '.join(MODES)}")
    base = DATA / "labeled" / args.graph
    if not base.is_dir():
        print(f"no data at {base} (set WARPMATCH_DATA)", file=sys.stderr)
        return 2
    g = wm.read_graph(base / f"{args.graph}.graph")
    warm_kernel()
    rows, rc = [], 0
    for name in args.queries.split(","):
        q = read_query_file(base / "query_graph" / f"query_{name}.graph")
        row: dict = {"query": name}
        for mode in modes:
            kernel, device = MODES[mode]
            t = time.perf_counter()
            got = count_hombasis(g, q, budget_s=float("inf"), kernel=kernel, device=device,
                                 stop=lambda: time.perf_counter() - t > args.time_limit)
            dt = time.perf_counter() - t
            row[mode] = ({"seconds": dt, "count": str(got[0]), **got[1]} if got is not None
                         else {"seconds": None})
            print(json.dumps({"query": name, "mode": mode, **row[mode]}), flush=True)
        counts = {row[m]["count"] for m in modes if row[m]["seconds"] is not None}
        row["equal"] = len(counts) <= 1
        if not row["equal"]:
            rc = 1
        rows.append(row)
    print()
    print(f"| {args.graph} query | quotients | " + " | ".join(f"{m} s" for m in modes)
          + " | " + " | ".join(f"{modes[0]} / {m}" for m in modes[1:]) + " | equal |")
    print("|:--|--:|" + "--:|" * (2 * len(modes) - 1) + ":--|")
    for row in rows:
        done = [row[m] for m in modes if row[m]["seconds"] is not None]
        quot = f"{done[0]['quotients']:,}" if done else "-"
        secs = [f"{row[m]['seconds']:.3f}" if row[m]["seconds"] is not None
                else f"> {args.time_limit:g}" for m in modes]
        first = row[modes[0]]["seconds"]
        ratios = [f"{first / row[m]['seconds']:.2f}x"
                  if first is not None and row[m]["seconds"] else "-" for m in modes[1:]]
        print(f"| {row['query']} | {quot} | " + " | ".join(secs) + " | " + " | ".join(ratios)
              + f" | {'yes' if row['equal'] else 'NO'} |")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return rc


if __name__ == "__main__":
    sys.exit(main())
