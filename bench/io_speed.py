"""How fast graphs load: a 10-million-edge SNAP edge list vs the .wmg binary cache.

Writes a power-law-ish edge list (R-MAT draws, ids scrambled, a '#' header,
a timestamp third column like SNAP's temporal files) to /tmp, then times

- ``read_graph`` on the text file (numba tokenizer + id mapping + CSR build),
  after a warm-up on a tiny file so numba's compile/cache-load is reported apart,
- the tokenizer alone (the part that replaces a Python loop),
- ``save_binary`` and ``load_binary`` (memory-mapped) of the same graph,
- for comparison, ``numpy.loadtxt`` on the first 1/10 of the lines (scaled up).

Usage::

    python bench/io_speed.py [--edges 10000000] [--keep]

Not a test: it prints a table and exits 0.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from warpmatch.errors import InputCleanupWarning
from warpmatch.graph import load_binary, read_graph, save_binary
from warpmatch.graph import _tokenize as tk


def make_edge_list(path: Path, m: int, seed: int = 1) -> None:
    """Write m R-MAT-distributed edges with scrambled ids and a timestamp column."""
    rng = np.random.default_rng(seed)
    scale = max(4, int(np.ceil(np.log2(m / 10))))
    # vectorised R-MAT, one quadrant bit per level (Graph500 a,b,c = .57,.19,.19)
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for _ in range(scale):
        r = rng.random(m)
        src = (src << 1) | (r >= 0.76)
        dst = (dst << 1) | (((r >= 0.57) & (r < 0.76)) | (r >= 0.95))
    perm = rng.permutation(1 << scale) * 3 + 1            # sparse, non-dense ids
    ts = rng.integers(1_000_000_000, 1_500_000_000, m)
    table = pa.table({"s": perm[src], "d": perm[dst], "t": ts})
    with open(path, "wb") as fh:
        fh.write(b"# synthetic SNAP-style edge list: SRC DST UNIXTS\n")
        pcsv.write_csv(table, fh, pcsv.WriteOptions(include_header=False, delimiter="\t"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--keep", action="store_true", help="keep the files in /tmp")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wm-io-"))
    txt, wmg = tmp / "edges.txt", tmp / "edges.wmg"
    t0 = time.perf_counter()
    make_edge_list(txt, args.edges)
    gen_s = time.perf_counter() - t0
    size_mb = txt.stat().st_size / 1e6
    rows: list[tuple[str, float, str]] = [("write the text file (setup)", gen_s,
                                           f"{size_mb:.0f} MB")]
    warnings.simplefilter("ignore", InputCleanupWarning)

    tiny = tmp / "tiny.txt"
    tiny.write_text("1 2\n2 3\n")
    t0 = time.perf_counter()
    read_graph(tiny)
    rows.append(("first call (numba compile or cache load)", time.perf_counter() - t0, ""))

    buf = np.fromfile(txt, dtype=np.uint8)
    t0 = time.perf_counter()
    cap = int(tk.count_lines(buf))
    out = np.empty((2, cap), np.int64)
    nc = np.empty(cap, np.uint8)
    tg = np.empty(cap, np.uint8)
    nrows, status, *_ = tk.scan_table(buf, 2, 2, False, False, -1, out, nc, tg, -1)
    tok_s = time.perf_counter() - t0
    assert status == 0 and nrows == args.edges
    rows.append(("tokenizer alone (numba)", tok_s, f"{size_mb / tok_s:.0f} MB/s"))
    del buf, out

    t0 = time.perf_counter()
    g = read_graph(txt, directed=False)
    read_s = time.perf_counter() - t0
    rows.append(("read_graph(edge list), undirected", read_s,
                 f"{g.n:,} vertices, {g.num_edges:,} edges"))

    t0 = time.perf_counter()
    save_binary(g, wmg)
    rows.append(("save_binary (.wmg)", time.perf_counter() - t0,
                 f"{wmg.stat().st_size / 1e6:.0f} MB"))
    t0 = time.perf_counter()
    h = load_binary(wmg)
    load_s = time.perf_counter() - t0
    rows.append(("load_binary (memory-mapped)", load_s, f"{read_s / load_s:,.0f}x faster"))
    t0 = time.perf_counter()
    checksum = int(h.indices.sum())                       # touches every page
    rows.append(("  + first full pass over the mapped indices", time.perf_counter() - t0,
                 f"sum {checksum}"))
    t0 = time.perf_counter()
    load_binary(wmg, validate=True)
    rows.append(("load_binary(validate=True)", time.perf_counter() - t0, ""))
    assert np.array_equal(h.indices, g.indices)

    k = args.edges // 10
    with open(txt, "rb") as fh:
        head = b"".join(fh.readline() for _ in range(k + 1))
    t0 = time.perf_counter()
    np.loadtxt(head.splitlines(), dtype=np.int64, usecols=(0, 1), comments="#")
    lt = (time.perf_counter() - t0) * 10
    rows.append(("numpy.loadtxt, same file (extrapolated from 1/10)", lt,
                 f"tokenizer is {lt / tok_s:.0f}x faster"))

    w = max(len(r[0]) for r in rows)
    print(f"{'step':<{w}}  {'seconds':>8}  note")
    print(f"{'-' * w}  {'-' * 8}  ----")
    for name, s, note in rows:
        print(f"{name:<{w}}  {s:8.3f}  {note}")
    print(f"\n{os.cpu_count()} CPUs; files in {tmp}" + ("" if args.keep else " (removed)"))
    if not args.keep:
        for p in (txt, wmg, tiny):
            p.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
