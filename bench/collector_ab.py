"""``warpmatch stream --output``: rows written on the collector thread vs in the main loop
(issue 17 item 3; DCSM §1.3's collector stage).

Generates an R-MAT graph (``--scale``, ``--edge-factor``) and a stream of its edges
(``warpmatch stream-gen``: 10% inserted, 5% deleted), then runs ``warpmatch stream`` once
per query, output format and mode, ``--repeats`` times with the modes alternating:

- ``loop``: ``WARPMATCH_STREAM_COLLECTOR=0``, each batch's rows written between two
  batches' matching (the code before the collector);
- ``collector``: the default, batch ``k``'s rows written on a thread while batch ``k + 1``
  is matched.

Prints, per query and format, the rows, the stream loop's seconds of each mode (the
``seconds`` of ``--json``: reading excluded, every write included), their ratio, and the
collector's own ``output_seconds`` and ``output_wait_seconds`` (matching waiting for the
writer). The two modes' files must be equal (Parquet: the same table; CSV and JSON lines:
the same bytes), else ``MISMATCH`` and exit status 1.

Usage::

    python bench/collector_ab.py                                   # 2^16 vertices, CPU
    python bench/collector_ab.py --threads 1                       # a core left for the writer
    python3 bench/collector_ab.py --scale 20 --backend gpu --queries triangle,square

How it differs from DCSM: see :mod:`warpmatch.stream.collector` (one host thread writing
files, no overlap of the updater with the matcher).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def _wm(*args: str, env: dict | None = None) -> str:
    """Run the CLI of the warpmatch this interpreter imports; its stdout."""
    cmd = [sys.executable, "-m", "warpmatch", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return r.stdout


def _same(a: Path, b: Path, fmt: str) -> bool:
    if fmt == "parquet":
        import pyarrow.parquet as pq
        return pq.read_table(a).equals(pq.read_table(b))
    return a.read_bytes() == b.read_bytes()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=16)
    ap.add_argument("--edge-factor", type=int, default=8)
    ap.add_argument("--queries", default="triangle")
    ap.add_argument("--formats", default="parquet,csv,jsonl")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="the numba engines' threads")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--work-dir", default=None, help="default: a temporary directory")
    ap.add_argument("--json", default=None, help="write every run here")
    args = ap.parse_args(argv)

    tmp = None if args.work_dir else tempfile.TemporaryDirectory(prefix="wm_collector_")
    work = Path(args.work_dir or tmp.name)      # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    g, g0, ups = work / "g.wmg", work / "g0.wmg", work / "u.txt"
    if not g0.exists():
        _wm("generate", "rmat", str(g), "--scale", str(args.scale),
            "--edge-factor", str(args.edge_factor))
        _wm("stream-gen", str(g), "--out", str(ups), "--initial", str(g0))
    extra = ["--backend", args.backend, "--batch-size", str(args.batch)]
    if args.threads is not None:
        extra += ["--threads", str(args.threads)]
    modes = {"loop": "0", "collector": "1"}
    runs, bad = [], 0
    print(f"R-MAT scale {args.scale}, edge factor {args.edge_factor}; backend {args.backend}"
          f"{'' if args.threads is None else f', {args.threads} thread(s)'}; batches of "
          f"{args.batch}; {args.repeats} run(s) per mode, alternating", flush=True)
    head = (f"{'query':<10} {'format':<8} {'rows':>12} {'loop s':>8} {'collector s':>12} "
            f"{'loop/coll':>9} {'writer s':>9} {'wait s':>7}")
    print(head)
    for q in args.queries.split(","):
        for fmt in args.formats.split(","):
            secs: dict[str, list[float]] = {m: [] for m in modes}
            last: dict[str, dict] = {}
            files: dict[str, Path] = {}
            for rep in range(args.repeats):
                for mode, flag in modes.items():
                    out = work / f"d_{mode}.{fmt}"
                    env = {**os.environ, "WARPMATCH_STREAM_COLLECTOR": flag}
                    text = _wm("stream", str(g0), q, str(ups), *extra, "-o", str(out),
                               "--json", env=env)
                    rec = json.loads([ln for ln in text.splitlines() if ln.startswith("{")][-1])
                    secs[mode].append(float(rec["seconds"]))
                    last[mode] = rec
                    files[mode] = out
                    runs.append({"query": q, "format": fmt, "mode": mode, "repeat": rep,
                                 **{k: rec.get(k) for k in ("seconds", "rows", "output_seconds",
                                                            "output_wait_seconds")}})
            same = (last["loop"]["rows"] == last["collector"]["rows"]
                    and _same(files["loop"], files["collector"], fmt))
            if not same:
                bad += 1
            lo, co = statistics.median(secs["loop"]), statistics.median(secs["collector"])
            c = last["collector"]
            print(f"{q:<10} {fmt:<8} {c['rows']:>12,} {lo:>8.3f} {co:>12.3f} {lo / co:>8.2f}x "
                  f"{c['output_seconds']:>9.3f} {c['output_wait_seconds']:>7.3f}"
                  + ("" if same else "  MISMATCH"), flush=True)
            for f in files.values():
                f.unlink(missing_ok=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "runs": runs}, indent=1))
    if tmp is not None:
        tmp.cleanup()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
